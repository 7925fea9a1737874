/* watch PATH: print the events of a persistent watch until interrupted;
 * removewatches PATH: take this session's watches off PATH.
 *
 * One line per event, "TYPE PATH" (NodeCreated /a), or one JSON object
 * per line with --json, flushed at once so a pipe sees each event as it
 * happens.  A persistent watch, unlike get -w, misses nothing between two
 * events, but only while connected: a persistent watch is set again on a
 * reconnect without the changes made meanwhile (as ZooKeeper's), so a
 * connection lost and back is said on stderr.  SIGINT, SIGQUIT, SIGTERM
 * and SIGHUP end it with status 0: that is how it is meant to stop; a reader
 * gone (watch PATH | head -n1) ends it at its next line, 71.  "watching PATH"
 * on stderr says the watch is set, so a script knows from when on changes
 * are seen. */
#include <signal.h>
#include <stdlib.h>

#include "cli/cli.h"

/* The watch's own watcher: its messages are told apart from those of a
 * get -w set earlier in the shell. */
static struct cli_watch own_text = {0, 1}, own_json = {1, 1};

/* A session change during the watch: the connection lost and back is
 * said, since what changed meanwhile is not reported. */
static void tell_state(const char *path, int state, int *lost)
{
    if (state == TB_SESSION_SUSPENDED && !*lost) {
        *lost = 1;
        fprintf(stderr,
                "tumbler: connection lost: watch on %s goes on if the "
                "session is back within its timeout\n",
                path);
    } else if ((state == TB_SESSION_CONNECTED ||
                state == TB_SESSION_READONLY) &&
               *lost) {
        *lost = 0;
        fprintf(stderr,
                "tumbler: connection back: watch on %s goes on; changes "
                "made while it was lost were not reported and may have "
                "been missed\n",
                path);
    }
}

/* In the shell every message that is not this watch's takes effect as
 * between two commands (events of other watches printed, an expired
 * session dropped), and only this watch's events count. */
static int print_events(struct cli *cli, const char *path, int64_t max)
{
    struct cli_msg *m;
    int64_t seen = 0;
    int sig, rv, lost = 0;

    while (max <= 0 || seen < max) {
        rv = cli_ev_wait(-1, -1, &sig);
        if (rv == CLI_EV_SIGNAL) {
            if (sig == SIGCHLD)
                continue;
            return CLI_OK;
        }
        while ((m = cli_ev_take()) != NULL) {
            int kind = m->kind, code = m->code;
            if (kind == CLI_MSG_WATCH && (max <= 0 || seen < max)) {
                puts(m->text);
                seen++;
            } else if (kind == CLI_MSG_WATCH_END) {
                fprintf(stderr, "tumbler: %s\n", m->text);
            } else if (kind == CLI_MSG_STATE) {
                tell_state(path, code, &lost);
                if (cli->shell)
                    cli_shell_message(cli, m);
                else if (cli->verbose)
                    fprintf(stderr, "tumbler: session %s\n", m->text);
            } else if (cli->shell && kind != CLI_MSG_WATCH) {
                cli_shell_message(cli, m);
            }
            free(m);
            if (kind == CLI_MSG_WATCH_END)
                return cli_status(code);
            /* Flushed at once, for a pipe to see each event as it comes;
             * and a reader gone (watch | head -n1) ends the watch at its
             * next line, or it would write into the void for ever. */
            if ((rv = cli_out_check("watch")) != 0)
                return rv;
        }
        /* The shell dropped an expired session: the watch ended with it
         * (its final call, queued before the handle closed, was above). */
        if (cli->c == NULL)
            return cli_status(TB_ESESSIONEXPIRED);
    }
    return CLI_OK;
}

static int exec_watch(struct cli *cli, const struct cli_cmd *cmd,
                      const struct cli_args *a)
{
    const char *path = a->argv[0];
    int rc, recursive = a->val['r'] != NULL;
    int mode =
        recursive ? TB_ADDWATCH_PERSISTENT_RECURSIVE : TB_ADDWATCH_PERSISTENT;
    struct cli_watch *w = cli->json ? &own_json : &own_text;

    (void)cmd;
    rc = tb_add_watch_sync(cli->c, path, mode, cli_watch_cb, w);
    if (rc != 0)
        return cli_fail(cli, "watch", path, rc);
    fprintf(stderr, "tumbler: watching %s%s\n", path,
            recursive ? " and below" : "");
    rc = print_events(cli, path, a->num['c']);
    /* The shell goes on with the session (if it still has one): take the
     * watch off it. */
    if (cli->shell && cli->c != NULL)
        (void)tb_remove_watches_sync(cli->c, path,
                                     recursive ? TB_WATCHER_PERSISTENT_RECURSIVE
                                               : TB_WATCHER_PERSISTENT,
                                     cli_watch_cb, w, 1);
    return rc;
}

const struct cli_spec cli_cmd_watch = {
    .cmd = {.name = "watch",
            .usage = "watch [-r] [-c COUNT] PATH",
            .summary = "Print the events on PATH (which need not exist) until "
                       "interrupted.",
            .flags = CLI_PATH | CLI_CONNECT,
            .notes = "A connection lost and back within the session timeout "
                     "is said on stderr:\nthe watch goes on, but changes made "
                     "meanwhile are not reported.\n"},
    .exec = exec_watch,
    .opts =
        (const struct cli_opt[]){
            {.letter = 'r',
             .name = "recursive",
             .help = "also the events of every node below PATH"},
            {.letter = 'c',
             .name = "count",
             .kind = CLI_POSITIVE,
             .arg = "N",
             .help = "exit after N events",
             .what = "count"},
            {0}},
    CLI_ONE_PATH,
};

/* ---- removewatches ---- */

/* The watcher type of zkCli's letters; -a (any) when none is given. */
static const struct {
    char letter;
    int type;
} watcher_types[] = {{'c', TB_WATCHER_CHILDREN},
                     {'d', TB_WATCHER_DATA},
                     {'a', TB_WATCHER_ANY},
                     {'p', TB_WATCHER_PERSISTENT},
                     {'r', TB_WATCHER_PERSISTENT_RECURSIVE}};

static int exec_removewatches(struct cli *cli, const struct cli_cmd *cmd,
                              const struct cli_args *a)
{
    const char *path = a->argv[0];
    int type = 0, rc;
    size_t i;

    for (i = 0; i < sizeof watcher_types / sizeof watcher_types[0]; i++) {
        if (a->val[(unsigned char)watcher_types[i].letter] == NULL)
            continue;
        if (type != 0)
            return cli_usage(cli, cmd,
                             "-c, -d, -a, -p and -r exclude "
                             "each other");
        type = watcher_types[i].type;
    }
    if ((rc = cli_connect(cli)) != 0)
        return rc;
    rc = tb_remove_watches_sync(cli->c, path, type ? type : TB_WATCHER_ANY,
                                NULL, NULL, a->val['l'] != NULL);
    if (rc != 0)
        return cli_fail(cli, "removewatches", path, rc);
    cli_print_done(cli, path, "removed");
    return CLI_OK;
}

const struct cli_spec cli_cmd_removewatches = {
    .cmd = {.name = "removewatches",
            .usage = "removewatches PATH [-c|-d|-a|-p|-r] [-l]",
            .summary = "Remove this session's watches on PATH (of every type "
                       "unless one is given).",
            .flags = CLI_PATH,
            .notes = "Outside the shell the session is new and has none "
                     "(status 121).\n"},
    .exec = exec_removewatches,
    .opts =
        (const struct cli_opt[]){
            {.letter = 'c', .name = "children", .help = "child watches"},
            {.letter = 'd', .name = "data", .help = "data and exists watches"},
            {.letter = 'a', .name = "any", .help = "watches of any type"},
            {.letter = 'p',
             .name = "persistent",
             .help = "persistent watches (watch PATH)"},
            {.letter = 'r',
             .name = "recursive",
             .help = "persistent recursive watches (watch -r PATH)"},
            {.letter = 'l',
             .name = "local",
             .help = "remove them here even if the server cannot be told"},
            {0}},
    CLI_ONE_PATH,
};
