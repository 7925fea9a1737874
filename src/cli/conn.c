/* Opening the session, lazily: a command that fails on its arguments never
 * touches the network, and the shell connects on its first command.
 *
 * When no server answers, the user must learn which addresses were tried
 * and why each failed.  The library reports every failed attempt through
 * its log callback; those lines are kept (once each) until the first
 * session is up and printed if the wait ends without one. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <tumbler/recipes.h>

#include "cli/cli.h"

static const char *level_name(int level)
{
    switch (level) {
    case TB_LOG_ERROR:
        return "error";
    case TB_LOG_WARN:
        return "warning";
    case TB_LOG_INFO:
        return "info";
    default:
        return "debug";
    }
}

/* Runs on the I/O thread. */
static void on_log(void *data, int level, const char *msg)
{
    struct cli *cli = data;
    size_t n = strlen(msg);

    if (cli->verbose)
        cli_notice("[%s] %s", level_name(level), msg);
    if (level > TB_LOG_INFO)
        return;
    pthread_mutex_lock(&cli->mu);
    cli->tried[cli->tried_len] = '\0';
    if (strstr(cli->tried, msg) == NULL &&
        cli->tried_len + n + 4 < sizeof cli->tried) {
        memcpy(cli->tried + cli->tried_len, "  ", 2);
        memcpy(cli->tried + cli->tried_len + 2, msg, n);
        cli->tried[cli->tried_len + 2 + n] = '\n';
        cli->tried_len += n + 3;
    }
    pthread_mutex_unlock(&cli->mu);
}

/* Runs on the I/O thread; the shell prints these between commands.  The
 * recipes must see every change too: that is how a lock holder learns
 * that its connection is gone. */
static void on_state(struct tb_client *c, int state, void *data)
{
    (void)data;
    tb_recipes_state_cb(c, state, NULL);
    cli_ev_post(CLI_MSG_STATE, state, "%s", tb_session_state_name(state));
}

/* "sasl:USER:PASSWORD" is a SASL login, made with every connection; the
 * other credentials are added once the session is open. */
static int is_sasl(const struct cli_auth *a)
{
    return strcmp(a->scheme, "sasl") == 0;
}

static int add_auths(struct cli *cli)
{
    struct cli_auth *a;
    int rc;

    for (a = cli->auth; a != NULL; a = a->next) {
        if (is_sasl(a))
            continue;
        rc = tb_add_auth_sync(cli->c, a->scheme, a->cred, strlen(a->cred));
        if (rc != 0)
            return cli_fail(cli, "addauth", a->scheme, rc);
    }
    return 0;
}

/* A failure to open the session: "tumbler: connect HOSTS: ..." unless
 * the caller said more (`msg`), and with --json the error object naming
 * the servers and, after `msg`, the attempts the library logged.
 * Returns `status`. */
static int fail_connect(struct cli *cli, int status, int rc, const char *msg)
{
    struct cli_error e = {
        .command = "connect", .servers = cli->hosts, .rc = rc, .message = msg};

    if (msg == NULL)
        fprintf(stderr, "tumbler: connect %s: %s (%s)\n", cli->hosts,
                tb_strerror(rc), tb_errname(rc));
    pthread_mutex_lock(&cli->mu);
    if (msg != NULL) {
        e.attempts = cli->tried;
        e.attempts_len = cli->tried_len;
    }
    cli_json_error(cli, &e);
    pthread_mutex_unlock(&cli->mu);
    return status;
}

static int report_unreachable(struct cli *cli)
{
    char msg[512];

    snprintf(msg, sizeof msg, "cannot connect to %s: no session within %.1f s",
             cli->hosts, cli->connect_timeout_ms / 1000.0);
    fprintf(stderr, "tumbler: %s\n", msg);
    pthread_mutex_lock(&cli->mu);
    if (cli->tried_len > 0)
        fprintf(stderr, "tumbler: attempts:\n%.*s", (int)cli->tried_len,
                cli->tried);
    else
        fprintf(stderr, "tumbler: no attempt got an answer (no route, or "
                        "packets dropped)\n");
    pthread_mutex_unlock(&cli->mu);
    return fail_connect(cli, CLI_UNREACHABLE, TB_ECONNECTIONLOSS, msg);
}

/* tb_client_init could not use a TLS file; the log said which and why. */
static int report_tls_files(struct cli *cli)
{
    pthread_mutex_lock(&cli->mu);
    fprintf(stderr, "tumbler: cannot set up TLS:\n%.*s", (int)cli->tried_len,
            cli->tried);
    pthread_mutex_unlock(&cli->mu);
    return fail_connect(cli, CLI_NOINPUT, TB_ETLS, "cannot set up TLS");
}

/* Waits in short slices so that ^C ends the wait at once. */
static int wait_connected(struct cli *cli)
{
    int waited = 0, rc, sig;

    for (;;) {
        int slice = cli->connect_timeout_ms - waited;
        if (slice > 100)
            slice = 100;
        rc = tb_client_wait_connected(cli->c, slice < 0 ? 0 : slice);
        if (rc != TB_ETIMEDOUT)
            return rc == 0 ? 0 : fail_connect(cli, cli_status(rc), rc, NULL);
        waited += slice;
        if ((sig = cli_ev_pending_signal()) != 0 && sig != SIGCHLD)
            return 128 + sig;
        if (waited >= cli->connect_timeout_ms)
            return report_unreachable(cli);
    }
}

int cli_connect(struct cli *cli)
{
    struct tb_options o;
    struct cli_auth *a;
    char user[256];
    const char *colon;
    int rc;

    if (cli->c != NULL)
        return 0;
    memset(&o, 0, sizeof o);
    for (a = cli->auth; a != NULL; a = a->next) {
        if (!is_sasl(a))
            continue;
        colon = strchr(a->cred, ':');
        if (colon == NULL || (size_t)(colon - a->cred) >= sizeof user)
            return cli_err(cli, CLI_USAGE, "sasl wants USER:PASSWORD");
        snprintf(user, sizeof user, "%.*s", (int)(colon - a->cred), a->cred);
        o.sasl_user = user;
        o.sasl_password = colon + 1;
    }
    o.hosts = cli->hosts;
    o.tls = cli->tls;
    o.tls_ca_file = cli->tls_ca;
    o.tls_cert_file = cli->tls_cert;
    o.tls_key_file = cli->tls_key;
    o.tls_no_verify_host = cli->tls_no_verify_host;
    o.session_timeout_ms = cli->session_timeout_ms;
    o.log_cb = on_log;
    o.log_level = cli->verbose ? TB_LOG_DEBUG : TB_LOG_INFO;
    o.state_cb = on_state;
    o.data = cli;
    cli->tried_len = 0;
    rc = tb_client_init(&cli->c, &o);
    if (rc == TB_EINVAL)
        return cli_err(cli, CLI_USAGE,
                       "invalid server list '%s' (expected "
                       "HOST[:PORT][,HOST[:PORT]...][/CHROOT])",
                       cli->hosts);
    if (rc == TB_ETLS)
        return report_tls_files(cli);
    if (rc != 0)
        return fail_connect(cli, cli_status(rc), rc, NULL);
    /* The I/O thread inherits this mask: signals stay with the main
     * thread, whose readline and waits handle them. */
    cli_ev_mask(SIG_BLOCK);
    rc = tb_client_start(cli->c);
    cli_ev_mask(SIG_UNBLOCK);
    if (rc == 0)
        rc = wait_connected(cli);
    else
        rc = fail_connect(cli, cli_status(rc), rc, NULL);
    if (rc == 0)
        rc = add_auths(cli);
    if (rc != 0)
        cli_disconnect(cli);
    return rc;
}

char *cli_env_str(const char *name, const char *value)
{
    size_t nl = strlen(name), vl = strlen(value);
    char *s = malloc(nl + vl + 2);

    if (s == NULL)
        return NULL;
    memcpy(s, name, nl);
    s[nl] = '=';
    memcpy(s + nl + 1, value, vl + 1);
    return s;
}

int cli_tls_env(const struct cli *cli, char **env)
{
    const char *names[] = {"TUMBLER_TLS_CA", "TUMBLER_TLS_CERT",
                           "TUMBLER_TLS_KEY"};
    const char *files[] = {cli->tls_ca, cli->tls_cert, cli->tls_key};
    int n = 0, i;

    if (!cli->tls)
        return 0;
    env[n++] = cli_env_str("TUMBLER_TLS", "1");
    for (i = 0; i < 3; i++)
        if (files[i] != NULL)
            env[n++] = cli_env_str(names[i], files[i]);
    if (cli->tls_no_verify_host)
        env[n++] = cli_env_str("TUMBLER_TLS_NO_VERIFY_HOST", "1");
    for (i = 0; i < n && env[i] != NULL; i++)
        ;
    if (i == n)
        return n;
    for (i = 0; i < n; i++) {
        free(env[i]);
        env[i] = NULL;
    }
    return -1;
}

void cli_disconnect(struct cli *cli)
{
    if (cli->c != NULL) {
        tb_client_close(cli->c);
        cli->c = NULL;
    }
}

int cli_auth_add(struct cli *cli, const char *scheme, const char *cred)
{
    struct cli_auth *a = calloc(1, sizeof *a), **p;

    if (a == NULL || (a->scheme = strdup(scheme)) == NULL ||
        (a->cred = strdup(cred)) == NULL) {
        if (a != NULL)
            free(a->scheme);
        free(a);
        return -1;
    }
    for (p = &cli->auth; *p != NULL; p = &(*p)->next)
        ;
    *p = a;
    return 0;
}

void cli_auth_free(struct cli *cli)
{
    while (cli->auth != NULL) {
        struct cli_auth *a = cli->auth;
        cli->auth = a->next;
        free(a->scheme);
        free(a->cred);
        free(a);
    }
}
