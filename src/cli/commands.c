/* The command table and what every command shares: --help, usage errors,
 * option parsing helpers, and dispatch.  Kept apart from main() so that
 * the shell and the unit tests use the same table. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const struct cli_cmd cli_cmd_help;

static const struct cli_cmd *const commands[] = {
    &cli_cmd_ls,     &cli_cmd_get,    &cli_cmd_stat,      &cli_cmd_create,
    &cli_cmd_set,    &cli_cmd_delete, &cli_cmd_deleteall, &cli_cmd_sync,
    &cli_cmd_getacl, &cli_cmd_setacl, &cli_cmd_addauth,   &cli_cmd_whoami,
    &cli_cmd_watch,  &cli_cmd_lock,   &cli_cmd_elect,     &cli_cmd_locks,
    &cli_cmd_help,
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

void cli_print_overview(FILE *f)
{
    int i;

    fprintf(f, "Usage: tumbler [GLOBAL OPTIONS] COMMAND [OPTIONS] [ARGS]\n"
               "       tumbler [GLOBAL OPTIONS]           (interactive "
               "shell)\n\n"
               "A shell for the Tumbler (ZooKeeper) tree and a distributed "
               "flock(1).\n\nCommands:\n");
    for (i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-10s %s\n", commands[i]->name, commands[i]->summary);
    fprintf(f, "\n%s\nSee docs/cli.md (man tumbler) for exit statuses.\n",
            global_help);
}

int cli_help(struct cli *cli, const struct cli_cmd *cmd)
{
    (void)cli;
    printf("Usage: tumbler [GLOBAL OPTIONS] %s\n%s\n", cmd->usage,
           cmd->summary);
    if (cmd->help != NULL && cmd->help[0] != '\0')
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

    (void)cli;
    fprintf(stderr, "tumbler %s: ", cmd->name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nUsage: tumbler %s\nTry 'tumbler %s --help'.\n",
            cmd->usage, cmd->name);
    return CLI_USAGE;
}

void cli_opt_reset(void)
{
    optind = 0; /* glibc: 0 also resets its internal state */
    opterr = 0;
}

const struct option cli_common_opts[] = {CLI_COMMON_LONGOPTS,
                                         {NULL, 0, NULL, 0}};

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
    if (cli->shell && (cmd->flags & CLI_NO_SHELL)) {
        fprintf(stderr, "tumbler: '%s' is not available in the shell\n",
                argv[0]);
        return CLI_USAGE;
    }
    return cmd->run(cli, cmd, argc, argv);
}

/* ---- help as a command ---- */

static int run_help(struct cli *cli, const struct cli_cmd *cmd, int argc,
                    char **argv)
{
    const struct cli_cmd *c;

    if (argc < 2) {
        cli_print_overview(stdout);
        return CLI_OK;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
        return cli_help(cli, cmd);
    if ((c = cli_find(argv[1])) == NULL)
        return cli_usage(cli, cmd, "unknown command '%s'", argv[1]);
    return cli_help(cli, c);
}

static const struct cli_cmd cli_cmd_help = {
    "help",
    run_help,
    "help [COMMAND]",
    "Show the commands, or one's options.",
    "",
    0,
    NULL};
