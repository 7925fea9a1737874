/* tumbler config and tumbler reconfig: the ensemble's members as
 * /zookeeper/config holds them, and ZooKeeper's reconfig to change them,
 * as zkCli.sh's commands of the same names. */
#include <ctype.h>
#include <errno.h>
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

/* The members a file names, as zkCli's reconfig -file reads a dynamic
 * configuration file (tumbler config prints one): its server.N lines,
 * joined with commas; blank lines, # comments and version= are skipped.
 * 0 and *list (malloc'd), or the exit status. */
static int file_members(struct cli *cli, const struct cli_cmd *cmd,
                        const char *name, char **list)
{
    char *text, *line, *save, *e, *out;
    size_t len, n = 0;
    int rc;

    /* 255 members of a few dozen bytes each */
    if ((rc = cli_read_file(cli, name, 64 * 1024, &text, &len)) != 0)
        return rc;
    if ((out = malloc(len + 1)) == NULL) {
        free(text);
        return CLI_OSERR;
    }
    for (line = strtok_r(text, "\n", &save); line != NULL && rc == 0;
         line = strtok_r(NULL, "\n", &save)) {
        line += strspn(line, " \t");
        for (e = line + strlen(line);
             e > line && isspace((unsigned char)e[-1]);)
            *--e = '\0';
        if (*line == '\0' || *line == '#' || strncmp(line, "version=", 8) == 0)
            continue;
        if (strncmp(line, "server.", 7) != 0)
            rc = cli_usage(cli, cmd, "%s: '%s' is not a server.N= line", name,
                           line);
        else /* each line no longer than it was, its '\n' a ',' */
            n += (size_t)sprintf(out + n, "%s%s", n > 0 ? "," : "", line);
    }
    free(text);
    if (rc == 0 && n == 0)
        rc = cli_usage(cli, cmd, "%s names no server.N= line", name);
    if (rc != 0) {
        free(out);
        return rc;
    }
    *list = out;
    return 0;
}

/* -v V: hex, with or without 0x, as zkCli takes it, into a zxid: 0, or -1
 * for anything else.  strtoull alone would take a sign or blanks before
 * the digits, and give ULLONG_MAX on overflow: -1, the library's "any
 * version", an unconditional change for a typo. */
static int parse_version(const char *s, int64_t *out)
{
    const char *d = s;
    unsigned long long v;
    char *end;

    if (d[0] == '0' && (d[1] == 'x' || d[1] == 'X'))
        d += 2;
    if (*d == '\0' || strspn(d, "0123456789abcdefABCDEF") != strlen(d))
        return -1;
    errno = 0;
    v = strtoull(d, &end, 16);
    if (errno != 0 || *end != '\0' || v > (unsigned long long)INT64_MAX)
        return -1;
    *out = (int64_t)v;
    return 0;
}

/* Checks the lists and -v, then asks for the change. */
static int send_reconfig(struct cli *cli, const struct cli_cmd *cmd,
                         const struct cli_args *a, const char *members)
{
    const char *add = a->val['a'], *rm = a->val['r'], *ver = a->val['v'];
    const char *list = add != NULL ? add : members; /* not both */
    int64_t from = -1;
    struct tb_stat st;
    char *value;
    size_t len;
    int rc;

    if (list != NULL && !servers_ok(list))
        return cli_usage(cli, cmd,
                         "bad server list '%s' "
                         "(server.N=HOST:PORT:PORT[:ROLE][;[ADDR:]PORT],...)",
                         list);
    if (rm != NULL && !ids_ok(rm))
        return cli_usage(cli, cmd, "bad server ids '%s' (N,...)", rm);
    if (ver != NULL && parse_version(ver, &from) != 0)
        return cli_usage(
            cli, cmd, "bad version '%s' (the hex of config's version=)", ver);
    if ((rc = cli_connect(cli)) != 0)
        return rc;
    rc = tb_reconfig_sync(cli->c, add, rm, members, from, &value, &len, &st);
    if (rc != 0)
        return cli_fail(cli, "reconfig", config_path, rc);
    cli_print_data(cli, config_path, value, len, &st, a->val['s'] != NULL);
    tb_free(value);
    return CLI_OK;
}

static int exec_reconfig(struct cli *cli, const struct cli_cmd *cmd,
                         const struct cli_args *a)
{
    const char *members = a->val['m'], *file = a->val['f'];
    int ways = (members != NULL) + (file != NULL) +
               (a->val['a'] != NULL || a->val['r'] != NULL);
    char *owned = NULL;
    int rc;

    if (ways != 1)
        return cli_usage(cli, cmd,
                         "give --members, --file, or --add and/or --remove");
    if (file != NULL) {
        if ((rc = file_members(cli, cmd, file, &owned)) != 0)
            return rc;
        members = owned;
    }
    rc = send_reconfig(cli, cmd, a, members);
    free(owned);
    return rc;
}

const struct cli_spec cli_cmd_reconfig = {
    .cmd = {.name = "reconfig",
            .usage =
                "reconfig [-s] [-v V] {-m LIST | -f FILE | [-a LIST] [-r IDS]}",
            .summary = "Change the ensemble's members; print the new "
                       "configuration.",
            .notes =
                "LIST: "
                "server.N=HOST:PORT:PORT[:participant|:observer][;[ADDR:]PORT],"
                "... (the\n"
                "quorum port, the election port, the client port).  FILE: "
                "one server.N= line\n"
                "per member, as config prints them (version= and # comments "
                "are skipped).\n"
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
            {.letter = 'f',
             .name = "file",
             .kind = CLI_STR,
             .arg = "FILE",
             .help = "the whole new list of members, from FILE ('-': stdin)"},
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
