/* tumbler: the command-line tool of Tumbler.
 *
 *   tumbler [-s HOSTS] [GLOBAL OPTIONS] COMMAND [OPTIONS] [ARGS]
 *   tumbler [-s HOSTS]                     (interactive shell)
 *
 * This file reads the global options and starts the command or the shell;
 * the command table is in commands.c. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/child.h"
#include "cli/cli.h"

#ifndef TB_VERSION
#define TB_VERSION "unknown"
#endif

/* ---- global options ---- */

enum {
    OPT_SESSION = 256,
    OPT_CONNECT,
    OPT_JSON,
    OPT_TLS,
    OPT_TLS_CA,
    OPT_TLS_CERT,
    OPT_TLS_KEY,
    OPT_TLS_NO_VERIFY_HOST,
};

static const struct option global_opts[] = {
    {"server", required_argument, NULL, 's'},
    {"auth", required_argument, NULL, 'a'},
    {"session-timeout", required_argument, NULL, OPT_SESSION},
    {"connect-timeout", required_argument, NULL, OPT_CONNECT},
    {"json", no_argument, NULL, OPT_JSON},
    {"tls", no_argument, NULL, OPT_TLS},
    {"tls-ca", required_argument, NULL, OPT_TLS_CA},
    {"tls-cert", required_argument, NULL, OPT_TLS_CERT},
    {"tls-key", required_argument, NULL, OPT_TLS_KEY},
    {"tls-no-verify-host", no_argument, NULL, OPT_TLS_NO_VERIFY_HOST},
    {"errexit", no_argument, NULL, 'e'},
    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0}};

static int global_usage(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

static int global_usage(const char *fmt, ...)
{
    va_list ap;

    fputs("tumbler: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\nTry 'tumbler --help'.\n", stderr);
    return CLI_USAGE;
}

static int add_auth_arg(struct cli *cli, const char *arg)
{
    const char *colon = strchr(arg, ':');
    char scheme[64];
    size_t n;

    if (colon == NULL || (n = (size_t)(colon - arg)) == 0 || n >= sizeof scheme)
        return global_usage("--auth wants SCHEME:CREDENTIAL, got '%s'", arg);
    memcpy(scheme, arg, n);
    scheme[n] = '\0';
    if (cli_auth_add(cli, scheme, colon + 1) != 0)
        return CLI_OSERR;
    return 0;
}

static int set_timeout(int *out, const char *arg, const char *name)
{
    int64_t ms;

    if (cli_parse_seconds(arg, &ms) != 0 || ms <= 0 || ms > 3600000)
        return global_usage("bad %s '%s' (seconds)", name, arg);
    *out = (int)ms;
    return 0;
}

/* A TLS file from the command line, else from the environment, as the
 * servers are; naming one asks for TLS. */
static void tls_file(struct cli *cli, const char **out, const char *env)
{
    const char *s = *out != NULL ? *out : getenv(env);

    *out = s != NULL && *s != '\0' ? s : NULL;
    if (*out != NULL)
        cli->tls = 1;
}

static int env_flag(const char *name)
{
    const char *s = getenv(name);

    return s != NULL && *s != '\0' && strcmp(s, "0") != 0;
}

static void tls_from_env(struct cli *cli)
{
    cli->tls |= env_flag("TUMBLER_TLS");
    cli->tls_no_verify_host |= env_flag("TUMBLER_TLS_NO_VERIFY_HOST");
    tls_file(cli, &cli->tls_ca, "TUMBLER_TLS_CA");
    tls_file(cli, &cli->tls_cert, "TUMBLER_TLS_CERT");
    tls_file(cli, &cli->tls_key, "TUMBLER_TLS_KEY");
    if (cli->tls_no_verify_host)
        cli->tls = 1;
}

/* Returns -1 to go on, else the exit status. */
static int parse_global(struct cli *cli, int argc, char **argv)
{
    const char *s;
    int ch, rv;

    cli_opt_reset();
    while ((ch = getopt_long(argc, argv, "+:s:a:evhV", global_opts, NULL)) !=
           -1) {
        switch (ch) {
        case 's':
            free(cli->hosts);
            cli->hosts = strdup(optarg);
            break;
        case 'a':
            if ((rv = add_auth_arg(cli, optarg)) != 0)
                return rv;
            break;
        case OPT_SESSION:
            if ((rv = set_timeout(&cli->session_timeout_ms, optarg,
                                  "--session-timeout")) != 0)
                return rv;
            break;
        case OPT_CONNECT:
            if ((rv = set_timeout(&cli->connect_timeout_ms, optarg,
                                  "--connect-timeout")) != 0)
                return rv;
            break;
        case OPT_JSON:
            cli->json_default = 1;
            break;
        case OPT_TLS:
            cli->tls = 1;
            break;
        case OPT_TLS_CA:
            cli->tls_ca = optarg;
            break;
        case OPT_TLS_CERT:
            cli->tls_cert = optarg;
            break;
        case OPT_TLS_KEY:
            cli->tls_key = optarg;
            break;
        case OPT_TLS_NO_VERIFY_HOST:
            cli->tls_no_verify_host = 1;
            break;
        case 'e':
            cli->errexit = 1;
            break;
        case 'v':
            cli->verbose = 1;
            break;
        case 'h':
            cli_print_overview(cli, stdout);
            return CLI_OK;
        case 'V':
            printf("tumbler %s\n", TB_VERSION);
            return CLI_OK;
        case ':':
            return global_usage("option '%s' needs a value", argv[optind - 1]);
        default:
            return global_usage("unknown option '%s'", argv[optind - 1]);
        }
    }
    tls_from_env(cli);
    if (cli->tls_key != NULL && cli->tls_cert == NULL)
        return global_usage("--tls-key needs --tls-cert");
    if (cli->hosts == NULL) {
        s = getenv("TUMBLER_SERVERS");
        cli->hosts = strdup(s != NULL && *s != '\0' ? s : "127.0.0.1:2181");
    }
    return cli->hosts == NULL ? CLI_OSERR : -1;
}

int main(int argc, char **argv)
{
    struct cli cli;
    const char *name = NULL;
    int rv;

    memset(&cli, 0, sizeof cli);
    pthread_mutex_init(&cli.mu, NULL);
    cli.session_timeout_ms = 10000;
    cli.connect_timeout_ms = 10000;
    if (cli_ev_init() != 0) {
        perror("tumbler: signal set-up");
        return CLI_OSERR;
    }
    rv = parse_global(&cli, argc, argv);
    if (rv < 0) {
        if (optind < argc) {
            name = argv[optind];
            rv = cli_run(&cli, argc - optind, argv + optind);
        } else {
            cli.shell = 1;
            rv = cli_shell(&cli);
        }
    }
    cli_disconnect(&cli);
    cli_auth_free(&cli);
    free(cli.hosts);
    /* Commands flush as they go, and glibc drops what a failed write did
     * not take, so a last fflush alone would succeed: whether stdout ever
     * failed is what counts (a command's own failure is the better
     * status). */
    if (rv == 0)
        rv = cli_out_check(name);
    else
        fflush(stdout);
    if (cli.pass_signal != 0)
        cli_child_pass_signal(cli.pass_signal);
    return rv;
}
