/* The command table and what every command shares: --help, usage errors,
 * the prologue of the table-driven commands (options, operand count, path
 * check, connection), and dispatch.  Kept apart from main() so that the
 * shell and the unit tests use the same table. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const struct cli_spec cli_cmd_help;

static const struct cli_cmd *const commands[] = {
    &cli_cmd_ls.cmd,
    &cli_cmd_get.cmd,
    &cli_cmd_stat.cmd,
    &cli_cmd_get_ephemerals.cmd,
    &cli_cmd_get_all_children_number.cmd,
    &cli_cmd_create.cmd,
    &cli_cmd_set.cmd,
    &cli_cmd_delete.cmd,
    &cli_cmd_deleteall.cmd,
    &cli_cmd_sync.cmd,
    &cli_cmd_getacl.cmd,
    &cli_cmd_setacl.cmd,
    &cli_cmd_addauth.cmd,
    &cli_cmd_whoami.cmd,
    &cli_cmd_watch.cmd,
    &cli_cmd_removewatches.cmd,
    &cli_cmd_setquota.cmd,
    &cli_cmd_listquota.cmd,
    &cli_cmd_delquota.cmd,
    &cli_cmd_config.cmd,
    &cli_cmd_reconfig.cmd,
    &cli_cmd_lock,
    &cli_cmd_elect,
    &cli_cmd_locks,
    &cli_cmd_top.cmd,
    &cli_cmd_status.cmd,
    &cli_cmd_check_token.cmd,
    &cli_cmd_barrier.cmd,
    &cli_cmd_queue.cmd,
    &cli_cmd_counter.cmd,
    &cli_cmd_help.cmd,
    &cli_cmd_connect.cmd,
    &cli_cmd_quit.cmd,
    &cli_cmd_exit.cmd,
};
#define NCOMMANDS ((int)(sizeof commands / sizeof commands[0]))

static const char global_help[] =
    "Global options (before COMMAND):\n"
    "  -s, --server HOSTS        servers, "
    "HOST[:PORT][,HOST[:PORT]...][/CHROOT]\n"
    "                            (default: $TUMBLER_SERVERS, else "
    "127.0.0.1:2181)\n"
    "  -a, --auth SCHEME:CRED    add a credential to the session "
    "(repeatable;\n"
    "                            sasl:USER:PASSWORD logs in with SASL)\n"
    "      --session-timeout S   session timeout to ask for, in seconds "
    "(default 10)\n"
    "      --connect-timeout S   how long to wait for a server, in seconds "
    "(default 10)\n"
    "      --tls                 TLS, to the servers' secureClientPort\n"
    "      --tls-ca FILE         PEM CAs that sign the servers' "
    "certificates\n"
    "                            (default: the system's); implies --tls\n"
    "      --tls-cert FILE       PEM client certificate (chain); "
    "implies --tls\n"
    "      --tls-key FILE        its PEM key, if not in the certificate "
    "file\n"
    "      --tls-no-verify-host  accept a server certificate that does not "
    "name\n"
    "                            the host (the chain is still verified)\n"
    "      --json                machine-readable output (every command)\n"
    "  -e, --errexit             stop a script from a pipe or file at the "
    "first\n"
    "                            command that fails (its status is "
    "tumbler's)\n"
    "  -v, --verbose             print the client library's log on stderr\n"
    "  -h, --help                this help; COMMAND --help for a command's\n"
    "  -V, --version             print the version\n";

const struct cli_cmd *const *cli_commands(int *count)
{
    *count = NCOMMANDS;
    return commands;
}

const struct cli_cmd *cli_find(const char *name)
{
    int i;

    for (i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i]->name, name) == 0)
            return commands[i];
    return NULL;
}

const struct cli_spec *cli_spec_of(const struct cli_cmd *cmd)
{
    /* `cmd` is the first member of its entry: C11 6.7.2.1p15. */
    return cmd->run == NULL ? (const struct cli_spec *)cmd : NULL;
}

int cli_offered(const struct cli *cli, const struct cli_cmd *cmd)
{
    return !(cmd->flags & (cli->shell ? CLI_NO_SHELL : CLI_SHELL_ONLY));
}

/* The commands this process runs, one per line, names aligned. */
static void print_commands(const struct cli *cli, FILE *f)
{
    int i, width = 10;

    for (i = 0; i < NCOMMANDS; i++)
        if (cli_offered(cli, commands[i]) &&
            (int)strlen(commands[i]->name) > width)
            width = (int)strlen(commands[i]->name);
    for (i = 0; i < NCOMMANDS; i++)
        if (cli_offered(cli, commands[i]))
            fprintf(f, "  %-*s %s\n", width, commands[i]->name,
                    commands[i]->summary);
}

void cli_print_overview(const struct cli *cli, FILE *f)
{
    if (cli->shell) {
        fprintf(f, "Commands ('help COMMAND' for one's options):\n");
        print_commands(cli, f);
        return;
    }
    fprintf(f, "Usage: tumbler [GLOBAL OPTIONS] COMMAND [OPTIONS] [ARGS]\n"
               "       tumbler [GLOBAL OPTIONS]           (interactive "
               "shell)\n\n"
               "A shell for the Tumbler (ZooKeeper) tree and a distributed "
               "flock(1).\n\nCommands:\n");
    print_commands(cli, f);
    fprintf(f, "\n%s\nSee docs/cli.md (man tumbler) for exit statuses.\n",
            global_help);
}

/* "  -s, --stat          also print the stat", continued lines aligned. */
static void print_opts(const struct cli_opt *o)
{
    const char *p, *nl;
    char head[40];

    putchar('\n');
    for (; o->letter != 0; o++) {
        snprintf(head, sizeof head, "--%s%s%s", o->name, o->arg ? " " : "",
                 o->arg ? o->arg : "");
        printf("  -%c, %-15s ", o->letter, head);
        for (p = o->help; (nl = strchr(p, '\n')) != NULL; p = nl + 1)
            printf("%.*s\n%22s", (int)(nl - p), p, "");
        printf("%s\n", p);
    }
}

int cli_help(struct cli *cli, const struct cli_cmd *cmd)
{
    const struct cli_spec *spec = cli_spec_of(cmd);

    printf("Usage: %s%s\n%s\n", cli->shell ? "" : "tumbler [GLOBAL OPTIONS] ",
           cmd->usage, cmd->summary);
    if (spec != NULL && spec->opts != NULL)
        print_opts(spec->opts);
    else if (cmd->help != NULL && cmd->help[0] != '\0')
        printf("\n%s", cmd->help);
    if (!(cmd->flags & CLI_NO_JSON))
        printf("      --json          machine-readable output\n");
    printf("  -h, --help          this help\n");
    if (cmd->notes != NULL)
        printf("\n%s", cmd->notes);
    fflush(stdout);
    return CLI_OK;
}

int cli_usage(struct cli *cli, const struct cli_cmd *cmd, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "tumbler %s: ", cmd->name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    if (cli->shell)
        fprintf(stderr, "\nUsage: %s\nTry 'help %s'.\n", cmd->usage, cmd->name);
    else
        fprintf(stderr, "\nUsage: tumbler %s\nTry 'tumbler %s --help'.\n",
                cmd->usage, cmd->name);
    return CLI_USAGE;
}

void cli_opt_reset(void)
{
    optind = 0; /* glibc: 0 also resets its internal state */
    opterr = 0;
}

int cli_getopt(struct cli *cli, int argc, char **argv, const char *opts,
               const struct option *lo)
{
    int ch;

    while ((ch = getopt_long(argc, argv, opts, lo, NULL)) == 'J')
        cli->json = 1;
    return ch;
}

int cli_opt_end(struct cli *cli, const struct cli_cmd *cmd, int ch, char **argv)
{
    const char *arg = argv[optind - 1];

    if (ch == 'h')
        return cli_help(cli, cmd);
    if (ch == ':')
        return cli_usage(cli, cmd, "option '%s' needs a value", arg);
    if (optopt != 0)
        return cli_usage(cli, cmd, "unknown option '-%c'", optopt);
    return cli_usage(cli, cmd, "unknown option '%s'", arg);
}

/* ---- the prologue of table-driven commands ---- */

static const struct cli_opt *find_opt(const struct cli_spec *spec, int ch)
{
    const struct cli_opt *o;

    for (o = spec->opts; o != NULL && o->letter != 0; o++)
        if (o->letter == ch)
            return o;
    return NULL;
}

/* getopt_long's short and long forms of the table, with -h and --json. */
static void build_getopt(const struct cli_spec *spec, char *shorts,
                         struct option *lo)
{
    static const struct option common[] = {CLI_COMMON_LONGOPTS};
    const struct cli_opt *o;
    int n = 0;

    *shorts++ = ':';
    for (o = spec->opts; o != NULL && o->letter != 0 && n < CLI_MAX_OPTS; o++) {
        *shorts++ = o->letter;
        if (o->kind != CLI_FLAG)
            *shorts++ = ':';
        lo[n++] = (struct option){
            o->name, o->kind == CLI_FLAG ? no_argument : required_argument,
            NULL, o->letter};
    }
    memcpy(shorts, "h", 2);
    lo[n++] = common[0];
    if (!(spec->cmd.flags & CLI_NO_JSON)) /* else an unknown option */
        lo[n++] = common[1];
    lo[n] = (struct option){NULL, 0, NULL, 0};
}

/* Keeps an option's value; -1 to go on, else a usage error's status. */
static int take_value(struct cli *cli, const struct cli_cmd *cmd,
                      const struct cli_opt *o, struct cli_args *a)
{
    static const int64_t lowest[] = {
        [CLI_VERSION] = -1, [CLI_POSITIVE] = 1, [CLI_NATURAL] = 0};
    int64_t v;

    a->val[(unsigned char)o->letter] = o->kind == CLI_FLAG ? "" : optarg;
    if (o->kind == CLI_FLAG || o->kind == CLI_STR)
        return -1;
    if (cli_parse_i64(optarg, &v) != 0 || v < lowest[o->kind] ||
        (o->kind == CLI_VERSION && v > INT32_MAX))
        return cli_usage(cli, cmd, "bad %s '%s'%s", o->what, optarg,
                         o->hint != NULL ? o->hint : "");
    a->num[(unsigned char)o->letter] = v;
    return -1;
}

/* Reads the options into `a`; -1 to go on, else the exit status (0 after
 * printing --help). */
static int read_opts(struct cli *cli, const struct cli_spec *spec, int argc,
                     char **argv, struct cli_args *a)
{
    char shorts[2 * CLI_MAX_OPTS + 3];
    struct option lo[CLI_MAX_OPTS + 3];
    const struct cli_opt *o;
    int ch, rc, i;

    memset(a->val, 0, sizeof a->val);
    for (i = 0; i < (int)(sizeof a->num / sizeof a->num[0]); i++)
        a->num[i] = -1;
    build_getopt(spec, shorts, lo);
    cli_opt_reset();
    while ((ch = cli_getopt(cli, argc, argv, shorts, lo)) != -1) {
        if ((o = find_opt(spec, ch)) == NULL)
            return cli_opt_end(cli, &spec->cmd, ch, argv);
        if ((rc = take_value(cli, &spec->cmd, o, a)) >= 0)
            return rc;
    }
    a->argc = argc - optind;
    a->argv = argv + optind;
    return -1;
}

static int prologue(struct cli *cli, const struct cli_spec *spec, int argc,
                    char **argv)
{
    const struct cli_cmd *cmd = &spec->cmd;
    struct cli_args a;
    int rc;

    if ((rc = read_opts(cli, spec, argc, argv, &a)) >= 0)
        return rc;
    /* The global --json too: accepted, it would be ignored. */
    if ((cmd->flags & CLI_NO_JSON) && cli->json)
        return cli_usage(cli, cmd, "no --json output");
    if (a.argc < spec->min_args || a.argc > spec->max_args)
        return cli_usage(cli, cmd, "%s", spec->arity);
    if ((cmd->flags & CLI_PATH) && a.argc > 0 &&
        (rc = cli_check_path(cli, cmd, a.argv[0])) != 0)
        return rc;
    if ((cmd->flags & CLI_CONNECT) && (rc = cli_connect(cli)) != 0)
        return rc;
    return spec->exec(cli, cmd, &a);
}

static int not_offered(const struct cli *cli, const struct cli_cmd *cmd)
{
    fprintf(stderr, "tumbler: '%s' is %s\n", cmd->name,
            cli->shell ? "not available in the shell"
                       : "a command of the shell only");
    return CLI_USAGE;
}

int cli_run(struct cli *cli, int argc, char **argv)
{
    const struct cli_cmd *cmd = cli_find(argv[0]);

    cli->json = cli->json_default;
    if (cmd == NULL) {
        fprintf(stderr,
                "tumbler: unknown command '%s'; try 'tumbler "
                "--help'\n",
                argv[0]);
        return CLI_USAGE;
    }
    if (!cli_offered(cli, cmd))
        return not_offered(cli, cmd);
    if (cmd->run != NULL)
        return cmd->run(cli, cmd, argc, argv);
    return prologue(cli, cli_spec_of(cmd), argc, argv);
}

/* ---- help as a command ---- */

static int exec_help(struct cli *cli, const struct cli_cmd *cmd,
                     const struct cli_args *a)
{
    const struct cli_cmd *c;

    if (a->argc == 0) {
        cli_print_overview(cli, stdout);
        return CLI_OK;
    }
    if ((c = cli_find(a->argv[0])) == NULL)
        return cli_usage(cli, cmd, "unknown command '%s'", a->argv[0]);
    if (!cli_offered(cli, c))
        return not_offered(cli, c);
    return cli_help(cli, c);
}

static const struct cli_spec cli_cmd_help = {
    .cmd = {.name = "help",
            .usage = "help [COMMAND]",
            .summary = "Show the commands, or one's options."},
    .exec = exec_help,
    .max_args = 1,
    .arity = "expected at most one COMMAND",
};
