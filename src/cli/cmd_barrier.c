/* tumbler barrier: the barrier and the double barrier of libtumbler's
 * recipes (Curator's layouts, docs/recipes.md).  Waits run through the
 * event queue (rcpwait.c), so a signal ends them at once. */
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <tumbler/recipes.h>

#include "cli/child.h"
#include "cli/rcpwait.h"

/* The double barrier around CMD: enter, run, leave; CMD's status. */
static int run_entered(struct cli *cli, const char *path, int members,
                       int timeout_ms, char **argv)
{
    char *env[3 + CLI_TLS_ENV];
    struct tb_dbarrier *b;
    struct cli_supervise s;
    struct cli_child ch;
    int rc, st, n = 0, tls, i;

    /* Passed on to CMD as lock passes them (the others are caught by
     * every command). */
    (void)cli_ev_pass_on(SIGUSR1);
    (void)cli_ev_pass_on(SIGUSR2);
    if ((rc = tb_dbarrier_new(&b, cli->c, path, members)) != 0)
        return cli_fail(cli, "barrier", path, rc);
    rc = tb_dbarrier_enter(b, timeout_ms, cli_rcp_done, NULL);
    if (rc == 0 && (st = cli_rcp_wait(&rc)) >= 0) {
        tb_dbarrier_free(b); /* gives the enter up, removes our node */
        return st;
    }
    if (rc == TB_ETIMEDOUT) {
        tb_dbarrier_free(b);
        fprintf(stderr, "tumbler: barrier %s: fewer than %d arrived in time\n",
                path, members);
        return CLI_CONFLICT;
    }
    if (rc != 0) {
        tb_dbarrier_free(b);
        return cli_fail(cli, "barrier", path, rc);
    }
    /* Each to its length: PATH has no short limit. */
    env[n++] = cli_env_str("TUMBLER_BARRIER_PATH", path);
    env[n++] = cli_env_str("TUMBLER_SERVERS", cli->hosts);
    tls = cli_tls_env(cli, env + n);
    n += tls > 0 ? tls : 0;
    env[n] = NULL;
    st = env[0] == NULL || env[1] == NULL || tls < 0
             ? cli_err(cli, CLI_OSERR, "out of memory")
             : cli_child_spawn(argv, env, NULL, &ch);
    for (i = 0; i < n; i++)
        free(env[i]);
    if (st != 0) {
        tb_dbarrier_free(b);
        return st;
    }
    memset(&s, 0, sizeof s);
    s.what = argv[0];
    s.grace_ms = 10000;
    st = cli_child_supervise(&s, &ch);
    if (!cli->shell)
        cli->pass_signal = ch.tty_signal;
    /* Leave, waiting for the others, whatever CMD's status. */
    rc = tb_dbarrier_leave(b, -1, cli_rcp_done, NULL);
    if (rc == 0) {
        int sig = cli_rcp_wait(&rc);
        if (sig >= 0) {
            tb_dbarrier_free(b);
            return sig;
        }
    }
    tb_dbarrier_free(b);
    if (rc != 0)
        return cli_fail(cli, "barrier", path, rc);
    return st;
}

static int wait_barrier(struct cli *cli, const char *path, int timeout_ms)
{
    int rc, st;

    rc = tb_barrier_wait(cli->c, path, timeout_ms, cli_rcp_done, NULL);
    if (rc == 0 && (st = cli_rcp_wait(&rc)) >= 0)
        return st;
    if (rc == TB_ETIMEDOUT) {
        fprintf(stderr, "tumbler: barrier %s: still set\n", path);
        return CLI_CONFLICT;
    }
    if (rc != 0)
        return cli_fail(cli, "barrier", path, rc);
    cli_print_done(cli, path, "passed");
    return CLI_OK;
}

static int exec_barrier(struct cli *cli, const struct cli_cmd *cmd,
                        const struct cli_args *a)
{
    const char *verb = a->argc == 2 ? a->argv[0] : "wait";
    const char *path = a->argv[a->argc == 2 ? 1 : 0];
    int timeout_ms, rc, enter = a->val['e'] != NULL;

    if ((rc = cli_rcp_timeout(cli, cmd, a->val['w'], &timeout_ms)) != 0)
        return rc;
    /* The recipe counts members in an int. */
    if (enter && a->num['e'] > INT_MAX)
        return cli_usage(cli, cmd, "bad member count '%s' (1..%d)", a->val['e'],
                         INT_MAX);
    if (enter) {
        path = a->argv[0];
        if (a->argc < 2)
            return cli_usage(cli, cmd, "--enter needs PATH -- CMD");
    } else if (a->argc > 2 ||
               (strcmp(verb, "wait") != 0 && strcmp(verb, "set") != 0 &&
                strcmp(verb, "remove") != 0)) {
        return cli_usage(cli, cmd, "expected [wait|set|remove] PATH");
    }
    if ((rc = cli_check_recipe_path(cli, cmd, path)) != 0 ||
        (rc = cli_connect(cli)) != 0)
        return rc;
    if (enter)
        return run_entered(cli, path, (int)a->num['e'], timeout_ms,
                           a->argv + 1);
    if (strcmp(verb, "wait") == 0)
        return wait_barrier(cli, path, timeout_ms);
    rc = strcmp(verb, "set") == 0 ? tb_barrier_set_sync(cli->c, path)
                                  : tb_barrier_remove_sync(cli->c, path);
    if (rc != 0)
        return cli_fail(cli, "barrier", path, rc);
    cli_print_done(cli, path, strcmp(verb, "set") == 0 ? "set" : "removed");
    return CLI_OK;
}

const struct cli_spec cli_cmd_barrier = {
    .cmd = {.name = "barrier",
            .usage = "barrier [-w S] [wait|set|remove] PATH | barrier -e N "
                     "[-w S] PATH -- CMD [ARG...]",
            .summary = "Wait at, set or remove a barrier; run CMD in a double "
                       "barrier.",
            .flags = CLI_NO_SHELL,
            .notes = "The barrier is up while PATH exists (Curator's "
                     "DistributedBarrier).\n"
                     "With -e, CMD starts once N processes have entered "
                     "PATH, and tumbler\n"
                     "exits with CMD's status once all N have left "
                     "(DistributedDoubleBarrier).\n"
                     "CMD's environment: TUMBLER_BARRIER_PATH, "
                     "TUMBLER_SERVERS.\n"
                     "Exit status 1 if the wait timed out.\n"},
    .exec = exec_barrier,
    .opts =
        (const struct cli_opt[]){
            {.letter = 'w',
             .name = "wait",
             .kind = CLI_STR,
             .arg = "SECONDS",
             .help = "give up after SECONDS (0: look once); exit status 1"},
            {.letter = 'e',
             .name = "enter",
             .kind = CLI_POSITIVE,
             .arg = "N",
             .help = "enter the double barrier of N at PATH, run CMD, "
                     "leave",
             .what = "member count",
             .hint = " (1..2147483647)"},
            {0}},
    .min_args = 1,
    .max_args = 1 << 20,
    .arity = "expected [wait|set|remove] PATH",
};
