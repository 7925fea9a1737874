/* tumbler config and tumbler reconfig: the ensemble's members as
 * /zookeeper/config holds them, and ZooKeeper's reconfig to change them,
 * as zkCli.sh's commands of the same names. */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const char config_path[] = "/zookeeper/config";

static int exec_config(struct cli *cli, const struct cli_cmd *cmd,
                       const struct cli_args *a)
{
    struct tb_stat st;
    char *value;
    size_t len;
    int rc;

    (void)cmd;
    if ((rc = tb_get_config_sync(cli->c, &value, &len, &st)) != 0)
        return cli_fail(cli, "config", config_path, rc);
    cli_print_data(cli, config_path, value, len, &st, a->val['s'] != NULL);
    tb_free(value);
    return CLI_OK;
}

const struct cli_spec cli_cmd_config = {
    .cmd = {.name = "config",
            .usage = "config [-s]",
            .summary = "Print the ensemble's members (/zookeeper/config).",
            .flags = CLI_CONNECT,
            .notes = "One server.N line per member, then version=V: the zxid "
                     "(hex) of the\n"
                     "change that made it, 0 before any; reconfig -v takes "
                     "it.\n"},
    .exec = exec_config,
    .opts =
        (const struct cli_opt[]){
            {.letter = 's', .name = "stat", .help = "also print the stat"},
            {0}},
    .max_args = 0,
    .arity = "no arguments expected",
};

/* A comma-separated list of server.N=... specs, each checked for its '='
 * before it goes to the server (zkCli's -add is --add here: "-add X"
 * reads as -a dd). */
static int servers_ok(const char *list)
{
    const char *p = list;

    for (;;) {
        size_t n = strcspn(p, ",");
        const char *eq = memchr(p, '=', n);
        if (strncmp(p, "server.", 7) != 0 || eq == NULL || eq + 1 == p + n)
            return 0;
        if (p[n] == '\0')
            return 1;
        p += n + 1;
    }
}

static int ids_ok(const char *list)
{
    const char *p = list;

    for (;;) {
        size_t n = strspn(p, "0123456789");
        if (n == 0 || (p[n] != ',' && p[n] != '\0'))
            return 0;
        if (p[n] == '\0')
            return 1;
        p += n + 1;
    }
}

static int exec_reconfig(struct cli *cli, const struct cli_cmd *cmd,
                         const struct cli_args *a)
{
    const char *add = a->val['a'], *rm = a->val['r'], *members = a->val['m'];
    const char *ver = a->val['v'], *list;
    int64_t from = -1;
    struct tb_stat st;
    char *value, *end;
    size_t len;
    int rc;

    if ((members != NULL) == (add != NULL || rm != NULL))
        return cli_usage(cli, cmd, "give --members, or --add and/or --remove");
    list = add != NULL ? add : members; /* not both, as checked */
    if (list != NULL && !servers_ok(list))
        return cli_usage(cli, cmd,
                         "bad server list '%s' "
                         "(server.N=HOST:PORT:PORT[:ROLE][;[ADDR:]PORT],...)",
                         list);
    if (rm != NULL && !ids_ok(rm))
        return cli_usage(cli, cmd, "bad server ids '%s' (N,...)", rm);
    if (ver != NULL) {
        from = (int64_t)strtoull(ver, &end, 16);
        if (*ver == '\0' || *ver == '-' || *end != '\0')
            return cli_usage(cli, cmd,
                             "bad version '%s' (the hex of config's version=)",
                             ver);
    }
    if ((rc = cli_connect(cli)) != 0)
        return rc;
    rc = tb_reconfig_sync(cli->c, add, rm, members, from, &value, &len, &st);
    if (rc != 0)
        return cli_fail(cli, "reconfig", config_path, rc);
    cli_print_data(cli, config_path, value, len, &st, a->val['s'] != NULL);
    tb_free(value);
    return CLI_OK;
}

const struct cli_spec cli_cmd_reconfig = {
    .cmd = {.name = "reconfig",
            .usage = "reconfig [-s] [-v V] {-m LIST | [-a LIST] [-r IDS]}",
            .summary = "Change the ensemble's members; print the new "
                       "configuration.",
            .notes =
                "LIST: "
                "server.N=HOST:PORT:PORT[:participant|:observer][;[ADDR:]PORT],"
                "... (the\n"
                "quorum port, the election port, the client port).\n"
                "The servers need reconfigEnabled=true, and the session the "
                "super user's\n"
                "credential (-a digest:super:PASSWORD before the command).  "
                "Exit 13: the\n"
                "new members could not be brought in step (NewConfigNoQuorum); "
                "14: another\n"
                "change is in progress; 103: -v is no longer the version; "
                "123: reconfig is\n"
                "disabled.\n"},
    .exec = exec_reconfig,
    .opts =
        (const struct cli_opt[]){
            {.letter = 'a',
             .name = "add",
             .kind = CLI_STR,
             .arg = "LIST",
             .help = "members to add, or whose role changes"},
            {.letter = 'r',
             .name = "remove",
             .kind = CLI_STR,
             .arg = "IDS",
             .help = "ids of members to remove, N,..."},
            {.letter = 'm',
             .name = "members",
             .kind = CLI_STR,
             .arg = "LIST",
             .help = "the whole new list of members"},
            {.letter = 'v',
             .name = "version",
             .kind = CLI_STR,
             .arg = "V",
             .help = "only if the configuration is still V (hex, as config's\n"
                     "version=; else exit 103)"},
            {.letter = 's', .name = "stat", .help = "also print the stat"},
            {0}},
    .max_args = 0,
    .arity = "no arguments expected",
};
