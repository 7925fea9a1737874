/* tumbler counter and tumbler check-token: the shared counter (Curator's
 * DistributedAtomicLong layout) and the token check of libtumbler's
 * recipes (docs/recipes.md). */
#include <inttypes.h>
#include <string.h>

#include <tumbler/recipes.h>

#include "cli/cli.h"

static void print_value(struct cli *cli, const char *path, int64_t v)
{
    if (cli->json) {
        struct jw w;
        jw_begin(&w, path);
        jw_key(&w, "value");
        jw_int(&w, v);
        jw_finish(&w);
        return;
    }
    printf("%" PRId64 "\n", v);
    fflush(stdout);
}

static int exec_counter(struct cli *cli, const struct cli_cmd *cmd,
                        const struct cli_args *a)
{
    const char *verb = a->argv[0], *path = a->argv[1];
    int64_t v = 1;
    int rc;

    if (strcmp(verb, "get") != 0 && strcmp(verb, "add") != 0 &&
        strcmp(verb, "set") != 0)
        return cli_usage(cli, cmd, "unknown action '%s'", verb);
    if (strcmp(verb, "set") == 0 && a->argc != 3)
        return cli_usage(cli, cmd, "set needs PATH VALUE");
    if (strcmp(verb, "get") == 0 && a->argc != 2)
        return cli_usage(cli, cmd, "expected one PATH");
    if (a->argc == 3 && cli_parse_i64(a->argv[2], &v) != 0)
        return cli_usage(cli, cmd, "bad number '%s'", a->argv[2]);
    if ((rc = cli_check_recipe_path(cli, cmd, path)) != 0 ||
        (rc = cli_connect(cli)) != 0)
        return rc;
    if (verb[0] == 'g')
        rc = tb_counter_get_sync(cli->c, path, &v, NULL);
    else if (verb[0] == 'a')
        rc = tb_counter_add_sync(cli->c, path, v, &v);
    else
        rc = tb_counter_set_sync(cli->c, path, v);
    if (rc != 0)
        return cli_fail(cli, "counter", path, rc);
    print_value(cli, path, v);
    return CLI_OK;
}

const struct cli_spec cli_cmd_counter = {
    .cmd = {.name = "counter",
            .usage = "counter get PATH | counter add PATH [DELTA] | counter "
                     "set PATH VALUE",
            .summary =
                "Read, add to (default 1) or set a shared counter; print "
                "its value.",
            .notes = "After an add or set it prints the value written.  "
                     "Curator's\n"
                     "DistributedAtomicLong layout: 8 bytes, big-endian; a "
                     "missing node is 0.\n"
                     "No add is lost to a concurrent one (docs/recipes.md).  "
                     "A negative\n"
                     "number goes after --: counter add PATH -- -1.\n"},
    .exec = exec_counter,
    .min_args = 2,
    .max_args = 3,
    .arity = "expected get|add|set PATH [NUMBER]",
};

static int exec_check_token(struct cli *cli, const struct cli_cmd *cmd,
                            const struct cli_args *a)
{
    const char *path = a->argv[0];
    int64_t token;
    int rc;

    (void)cmd;
    if (cli_parse_i64(a->argv[1], &token) != 0 || token <= 0)
        return cli_usage(cli, cmd, "bad token '%s'", a->argv[1]);
    if ((rc = cli_connect(cli)) != 0)
        return rc;
    rc = tb_token_check_sync(cli->c, path, token);
    if (rc != 0 && rc != TB_ELOCKLOST)
        return cli_fail(cli, "check-token", path, rc);
    if (cli->json) {
        struct jw w;
        jw_begin(&w, path);
        jw_key(&w, "token");
        jw_int(&w, token);
        jw_key(&w, "current");
        jw_bool(&w, rc == 0);
        jw_finish(&w);
    } else {
        printf("%s\n", rc == 0 ? "current" : "stale");
        fflush(stdout);
    }
    return rc == 0 ? CLI_OK : CLI_CONFLICT;
}

const struct cli_spec cli_cmd_check_token = {
    .cmd = {.name = "check-token",
            .usage = "check-token PATH TOKEN",
            .summary = "Exit 0 if TOKEN is a current holder's fencing token "
                       "of lock PATH.",
            .flags = CLI_PATH,
            .notes = "Prints \"current\" (status 0) or \"stale\" (status "
                     "1).\n"
                     "For a resource handed TUMBLER_LOCK_TOKEN: the answer "
                     "holds for the moment\n"
                     "the server read the lock's queue (docs/recipes.md, "
                     "Fencing).\n"},
    .exec = exec_check_token,
    .min_args = 2,
    .max_args = 2,
    .arity = "expected PATH TOKEN",
};
