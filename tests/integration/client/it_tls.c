/* TLS (tb_options.tls) against a server's secureClientPort.  The caller
 * states what the server offers: IT_TLS=1 with IT_TLS_PORT (its TLS port,
 * on 127.0.0.1) and IT_TLS_CERTS (what tests/integration/tls/mkcerts.sh
 * made; the server has server.p12 and trusts ca.pem, clients' certificates
 * required) for the it_client_tls_* runs, and IT_TUMBLER, the tumbler CLI,
 * for its own TLS options.  Without IT_TLS (the plain runs) only a TLS
 * client against the plain port is tried.
 *
 * Every failure must be reported as it happens, through
 * tb_client_last_error, within a bound: a connection attempt is never
 * allowed more than connect_timeout_ms (1 s here). */
#include <netdb.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "it_client.h"

#define X509_ID "x509:CN=client,OU=test,O=Tumbler"

/* "$IT_TLS_CERTS/name", in one of four rotating buffers. */
static const char *cert(const char *name)
{
    static char buf[4][512];
    static int slot;
    char *b = buf[slot++ & 3];
    const char *d = getenv("IT_TLS_CERTS");

    snprintf(b, sizeof buf[0], "%s/%s", d ? d : ".", name);
    return b;
}

static const char *tls_hosts(const char *host, int port)
{
    static char buf[4][300];
    static int slot;
    char *b = buf[slot++ & 3];

    snprintf(b, sizeof buf[0], "%s:%d", host, port);
    return b;
}

static int tls_port(void)
{
    const char *p = getenv("IT_TLS_PORT");
    return p ? atoi(p) : 0;
}

/* A started handle (not waited for).  `ca` NULL: the system's CAs;
 * `certfile` NULL: no client certificate; `key` NULL: in `certfile`. */
static struct tb_client *tls_client(const char *hosts, const char *ca,
                                    const char *certfile, const char *key,
                                    int no_verify_host, struct it_rec *st)
{
    struct tb_options o = {0};
    struct tb_client *c = NULL;
    int rc;

    it_rec_init(st);
    o.hosts = hosts;
    o.session_timeout_ms = 10000;
    /* ZooKeeper's first TLS handshakes, before its JIT has run, took over
     * a second on a loaded machine. */
    o.connect_timeout_ms = 3000;
    o.state_cb = it_rec_state;
    o.data = st;
    o.tls = 1;
    o.tls_ca_file = ca;
    o.tls_cert_file = certfile;
    o.tls_key_file = key;
    o.tls_no_verify_host = no_verify_host;
    if ((rc = tb_client_init(&c, &o)) != 0) {
        it_fail_at(__FILE__, __LINE__, "init %s: %s", hosts, tb_strerror(rc));
        return NULL;
    }
    if (tb_client_start(c) != 0) {
        tb_client_close(c);
        return NULL;
    }
    return c;
}

/* Waits until the handle reports a failed attempt; returns its code (0
 * if none came within timeout_ms) and its text in `why`. */
static int wait_failure(struct tb_client *c, int timeout_ms, char *why,
                        size_t cap)
{
    int64_t end = it_now() + timeout_ms;
    int rc;

    while ((rc = tb_client_last_error(c, why, cap)) == 0 && it_now() < end)
        it_sleep(20);
    if (rc != 0)
        printf("  (%s: %s)\n", tb_errname(rc), why);
    return rc;
}

/* The connection is refused with `err`, whose text has `word`, within
 * 5 s, and no session comes of it. */
static int refused(struct tb_client *c, int err, const char *word)
{
    char why[256] = "";
    int64_t t0 = it_now();
    int rc = wait_failure(c, 5000, why, sizeof why);

    if (rc != err || strstr(why, word) == NULL) {
        it_fail_at(__FILE__, __LINE__, "%s (%s), want %s with '%s'",
                   tb_errname(rc), why, tb_errname(err), word);
        return 0;
    }
    if (it_now() - t0 > 5000 ||
        tb_client_wait_connected(c, 500) != TB_ETIMEDOUT) {
        it_fail_at(__FILE__, __LINE__, "a session, or too late");
        return 0;
    }
    return 1;
}

/* 1. A session over TLS with the client's certificate: operations, a
 * value far larger than a TLS record both ways, and the x509 identity
 * ZooKeeper 3.8 gives the connection. */
static void tls_session(void)
{
    const char *root = it_root("tls");
    const size_t big = 600 * 1024;
    struct tb_client *c = NULL;
    struct it_rec st;
    char *v = malloc(big), *got = NULL;
    size_t len = 0, i;

    CHECK(v != NULL);
    for (i = 0; i < big; i++)
        v[i] = (char)('a' + i % 23);
    c = tls_client(tls_hosts("127.0.0.1", tls_port()), cert("ca.pem"),
                   cert("client.pem"), cert("client.key"), 0, &st);
    CHECK(c != NULL);
    CHECK_RC(tb_client_wait_connected(c, 20000), 0);
    CHECK(it_has_id(c, X509_ID));
    CHECK_RC(tb_create_sync(c, root, v, big, NULL, 0, 0, NULL, 0, NULL), 0);
    CHECK_RC(tb_get_data_sync(c, root, NULL, NULL, &got, &len, NULL), 0);
    CHECK(len == big && memcmp(got, v, big) == 0);
    CHECK_RC(tb_set_data_sync(c, root, "x", 1, -1, NULL), 0);
    tb_free(got);
    got = NULL;
    CHECK_RC(tb_get_data_sync(c, root, NULL, NULL, &got, &len, NULL), 0);
    CHECK(len == 1 && got[0] == 'x');
    CHECK_RC(tb_delete_sync(c, root, -1), 0);
    CHECK_RC(tb_exists_sync(c, root, NULL, NULL, NULL), TB_ENONODE);
    CHECK_RC(tb_client_last_error(c, NULL, 0), 0);
done:
    tb_free(got);
    free(v);
    if (c)
        tb_client_close(c);
}

/* 2. Certificates that are not accepted: the server's signed by a CA the
 * client does not trust; no client certificate, or one from an untrusted
 * CA, which the server refuses. */
static void tls_refused(void)
{
    const char *hosts = tls_hosts("127.0.0.1", tls_port());
    struct tb_client *c = NULL;
    struct it_rec st;

    c = tls_client(hosts, cert("rogueca.pem"), cert("client.pem.key"), NULL, 0,
                   &st);
    CHECK(c != NULL);
    CHECK(refused(c, TB_ETLS, "server certificate not accepted"));
    tb_client_close(c);
    c = tls_client(hosts, cert("ca.pem"), NULL, NULL, 0, &st);
    CHECK(c != NULL);
    CHECK(refused(c, TB_ETLS, "TLS"));
    tb_client_close(c);
    c = tls_client(hosts, cert("ca.pem"), cert("rogue.pem.key"), NULL, 0, &st);
    CHECK(c != NULL);
    CHECK(refused(c, TB_ETLS, "TLS"));
done:
    if (c)
        tb_client_close(c);
}

/* Connects by `host` through a proxy listening on `ip`: refused for want
 * of the name in the certificate (`why`), then accepted with the host
 * check off (the chain is still checked). */
static int by_other_name(const char *ip, const char *host, const char *why)
{
    struct it_proxy *px = it_proxy_start_at(ip, tls_port());
    struct tb_client *c = NULL;
    struct it_rec st;
    int ok = 0;

    CHECK(px != NULL);
    c = tls_client(tls_hosts(host, it_proxy_port(px)), cert("ca.pem"),
                   cert("client.pem.key"), NULL, 0, &st);
    CHECK(c != NULL);
    CHECK(refused(c, TB_ETLS, why));
    tb_client_close(c);
    c = tls_client(tls_hosts(host, it_proxy_port(px)), cert("ca.pem"),
                   cert("client.pem.key"), NULL, 1, &st);
    CHECK(c != NULL);
    CHECK_RC(tb_client_wait_connected(c, 20000), 0);
    CHECK(it_has_id(c, X509_ID));
    ok = 1;
done:
    if (c)
        tb_client_close(c);
    if (px)
        it_proxy_stop(px);
    return ok;
}

/* This machine's name, if it resolves to an IPv4 address a proxy can
 * listen on (Debian maps it to 127.0.1.1, containers to their address). */
static int own_name(char *name, size_t cap, char *ip, size_t ipcap)
{
    struct addrinfo hints = {0}, *ai = NULL;
    int ok;

    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    if (gethostname(name, cap) != 0 || strcmp(name, "localhost") == 0 ||
        getaddrinfo(name, NULL, &hints, &ai) != 0)
        return 0;
    ok = getnameinfo(ai->ai_addr, ai->ai_addrlen, ip, (socklen_t)ipcap, NULL, 0,
                     NI_NUMERICHOST) == 0;
    freeaddrinfo(ai);
    return ok;
}

/* 3. The server's certificate (DNS localhost, IP 127.0.0.1) must name the
 * host of the connection string: by name and by address it does; by
 * 127.0.0.2 (loopback too) and by this machine's name it does not. */
static void tls_hostname(void)
{
    struct tb_client *c = NULL;
    struct it_rec st;
    char name[256], ip[64];

    c = tls_client(tls_hosts("localhost", tls_port()), cert("ca.pem"),
                   cert("client.pem.key"), NULL, 0, &st);
    CHECK(c != NULL);
    CHECK_RC(tb_client_wait_connected(c, 20000), 0);
    CHECK(it_has_id(c, X509_ID));
    CHECK(by_other_name("127.0.0.2", "127.0.0.2", "IP address mismatch"));
    if (own_name(name, sizeof name, ip, sizeof ip))
        CHECK(by_other_name(ip, name, "hostname mismatch"));
    else
        printf("  (no name of this machine to try: skipped)\n");
done:
    if (c)
        tb_client_close(c);
}

/* 4. A proxy cuts the connection: the session resumes over a new TLS
 * connection, with its ephemeral node and its x509 identity. */
static void tls_reconnect(void)
{
    const char *root = it_root("tls-eph");
    struct it_proxy *px = it_proxy_start(tls_port());
    struct tb_client *c = NULL;
    struct it_rec st;
    int64_t sid;

    CHECK(px != NULL);
    c = tls_client(tls_hosts("127.0.0.1", it_proxy_port(px)), cert("ca.pem"),
                   cert("client.pem.key"), NULL, 0, &st);
    CHECK(c != NULL);
    CHECK_RC(tb_client_wait_connected(c, 20000), 0);
    sid = tb_client_session(c, NULL);
    CHECK_RC(
        tb_create_sync(c, root, "e", 1, NULL, TB_EPHEMERAL, 0, NULL, 0, NULL),
        0);
    it_proxy_cut(px);
    CHECK(it_rec_wait_state(&st, TB_SESSION_SUSPENDED, 10000) == 0);
    CHECK_RC(tb_client_wait_connected(c, 20000), 0);
    CHECK(tb_client_session(c, NULL) == sid);
    CHECK_RC(tb_exists_sync(c, root, NULL, NULL, NULL), 0);
    CHECK(it_has_id(c, X509_ID));
    CHECK_RC(tb_delete_sync(c, root, -1), 0);
done:
    if (c)
        tb_client_close(c);
    if (px)
        it_proxy_stop(px);
}

/* A handle's states and its log, one `data` for both callbacks. */
struct renew_rec {
    struct it_rec st; /* first: it_rec_state's */
    pthread_mutex_t mu;
    char log[2048];
};

static void renew_log(void *data, int level, const char *msg)
{
    struct renew_rec *r = data;
    size_t n;

    pthread_mutex_lock(&r->mu);
    n = strlen(r->log);
    if (level <= TB_LOG_WARN)
        snprintf(r->log + n, sizeof r->log - n, "%s\n", msg);
    pthread_mutex_unlock(&r->mu);
}

/* Writes `len` bytes to `to` as a renewal tool does: to a temporary file
 * renamed over it.  1 on success. */
static int put(const char *to, const char *p, size_t len)
{
    char tmp[600];
    FILE *f;

    snprintf(tmp, sizeof tmp, "%s.tmp", to);
    if ((f = fopen(tmp, "wb")) == NULL)
        return 0;
    fwrite(p, 1, len, f);
    return fclose(f) == 0 && rename(tmp, to) == 0;
}

/* Renews `to` with the content of the file `from`. */
static int renew(const char *to, const char *from)
{
    char buf[16384];
    FILE *f = fopen(from, "rb");
    size_t n;

    if (f == NULL)
        return 0;
    n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    return put(to, buf, n);
}

/* Cuts the connection and waits for the `n`th SUSPENDED, then a session. */
static int cut_and_back(struct it_proxy *px, struct tb_client *c,
                        struct it_rec *st, int n)
{
    int64_t end = it_now() + 10000;
    int i, seen = 0;

    it_proxy_cut(px);
    while (seen < n && it_now() < end) {
        it_sleep(10);
        pthread_mutex_lock(&st->mu);
        for (i = seen = 0; i < st->nstates; i++)
            seen += st->states[i] == TB_SESSION_SUSPENDED;
        pthread_mutex_unlock(&st->mu);
    }
    return seen >= n && tb_client_wait_connected(c, 20000) == 0;
}

/* 5. The client's certificate renewed on disk while the handle runs: the
 * next connection presents the new one; a broken file (a half-written
 * renewal) keeps the last good one, and the log says why, once. */
static void tls_renewal(void)
{
    struct it_proxy *px = it_proxy_start(tls_port());
    struct tb_options o = {0};
    struct tb_client *c = NULL;
    struct renew_rec r = {.mu = PTHREAD_MUTEX_INITIALIZER};
    char dir[] = "/tmp/it-tls-XXXXXX", pem[64] = "", key[64] = "", log[2048];
    const char *bad = "-----BEGIN CERTIFICATE-----\nMIIB\n";

    CHECK(px != NULL && mkdtemp(dir) != NULL);
    snprintf(pem, sizeof pem, "%s/c.pem", dir);
    snprintf(key, sizeof key, "%s/c.key", dir);
    CHECK(renew(pem, cert("client.pem")) && renew(key, cert("client.key")));
    it_rec_init(&r.st);
    o.hosts = tls_hosts("127.0.0.1", it_proxy_port(px));
    o.connect_timeout_ms = 1000;
    o.state_cb = it_rec_state;
    o.log_cb = renew_log;
    o.log_level = TB_LOG_WARN;
    o.data = &r;
    o.tls = 1;
    o.tls_ca_file = cert("ca.pem");
    o.tls_cert_file = pem;
    o.tls_key_file = key;
    CHECK_RC(tb_client_init(&c, &o), 0);
    CHECK_RC(tb_client_start(c), 0);
    CHECK_RC(tb_client_wait_connected(c, 20000), 0);
    CHECK(it_has_id(c, X509_ID));
    CHECK(renew(pem, cert("other.pem")) && renew(key, cert("other.key")));
    CHECK(cut_and_back(px, c, &r.st, 1));
    CHECK(it_has_id(c, "x509:CN=other") && !it_has_id(c, X509_ID));
    CHECK(put(pem, bad, strlen(bad))); /* cut short */
    CHECK(cut_and_back(px, c, &r.st, 2));
    CHECK(it_has_id(c, "x509:CN=other"));
    CHECK(cut_and_back(px, c, &r.st, 3)); /* not logged again */
    pthread_mutex_lock(&r.mu);
    memcpy(log, r.log, sizeof log);
    pthread_mutex_unlock(&r.mu);
    printf("  (log: %s)\n", log);
    CHECK(strstr(log, "cannot use certificate file") != NULL &&
          strstr(strstr(log, "cannot use") + 1, "cannot use") == NULL);
done:
    if (c)
        tb_client_close(c);
    if (px)
        it_proxy_stop(px);
    unlink(pem);
    unlink(key);
    rmdir(dir);
}

/* 6. The wrong port either way, and a TLS port that never answers. */
static void tls_wrong_port(void)
{
    struct tb_options o = {0};
    struct tb_client *c = NULL;
    struct it_proxy *px = NULL;
    struct it_rec st;

    c = tls_client(it_hostport, cert("ca.pem"), cert("client.pem.key"), NULL, 0,
                   &st);
    CHECK(c != NULL);
    CHECK(refused(c, TB_ETLS, "TLS handshake"));
    tb_client_close(c);

    it_rec_init(&st);
    o.hosts = tls_hosts("127.0.0.1", tls_port());
    o.connect_timeout_ms = 1000;
    o.state_cb = it_rec_state;
    o.data = &st;
    CHECK_RC(tb_client_init(&c, &o), 0);
    CHECK_RC(tb_client_start(c), 0);
    CHECK(refused(c, TB_ECONNECTIONLOSS, "closed by server"));
    tb_client_close(c);

    px = it_proxy_start(tls_port());
    CHECK(px != NULL);
    it_proxy_deaf(px, 1);
    c = tls_client(tls_hosts("127.0.0.1", it_proxy_port(px)), cert("ca.pem"),
                   cert("client.pem.key"), NULL, 0, &st);
    CHECK(c != NULL);
    CHECK(refused(c, TB_ETIMEDOUT, "TLS handshake timed out"));
done:
    if (c)
        tb_client_close(c);
    if (px)
        it_proxy_stop(px);
}

/* Runs `tumbler GLOBAL ARGS` (stderr with stdout): its exit status, its
 * output in `out`. */
static int cli(const char *global, const char *args, char *out, size_t cap)
{
    char cmd[2048];
    size_t n = 0;
    FILE *f;
    int st;

    snprintf(cmd, sizeof cmd, "'%s' -s 127.0.0.1:%d %s %s 2>&1",
             getenv("IT_TUMBLER"), tls_port(), global, args);
    if ((f = popen(cmd, "r")) == NULL)
        return -1;
    n = fread(out, 1, cap - 1, f);
    out[n] = '\0';
    st = pclose(f);
    printf("  $ tumbler ... %s -> %d\n", args,
           WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* 7. The CLI's TLS options: create, get and whoami over TLS; a server
 * certificate it does not accept, and a file it cannot use. */
static void tls_cli(void)
{
    const char *root = it_root("tls-cli");
    char ok[1024], bad[1024], args[600], out[4096];

    if (getenv("IT_TUMBLER") == NULL || *getenv("IT_TUMBLER") == '\0') {
        printf("  (IT_TUMBLER unset: no CLI to try)\n");
        return;
    }
    snprintf(ok, sizeof ok, "--tls-ca '%s' --tls-cert '%s' --tls-key '%s'",
             cert("ca.pem"), cert("client.pem"), cert("client.key"));
    snprintf(bad, sizeof bad,
             "--tls --tls-ca '%s' --tls-cert '%s' --connect-timeout 2",
             cert("rogueca.pem"), cert("client.pem.key"));
    snprintf(args, sizeof args, "create %s hello", root);
    CHECK(cli(ok, args, out, sizeof out) == 0);
    snprintf(args, sizeof args, "get %s", root);
    CHECK(cli(ok, args, out, sizeof out) == 0);
    CHECK(strcmp(out, "hello\n") == 0);
    CHECK(cli(ok, "whoami", out, sizeof out) == 0);
    CHECK(strstr(out, X509_ID "\n") != NULL);
    CHECK(cli(bad, args, out, sizeof out) == 69);
    CHECK(strstr(out, "server certificate not accepted") != NULL);
    snprintf(bad, sizeof bad, "--tls-ca '%s'", cert("missing.pem"));
    CHECK(cli(bad, args, out, sizeof out) == 66);
    snprintf(args, sizeof args, "delete %s", root);
    CHECK(cli(ok, args, out, sizeof out) == 0);
done:
    return;
}

/* Without a TLS port: a TLS client at the plain port fails, in time. */
static void tls_plain_server(void)
{
    struct tb_client *c;
    struct it_rec st;

    c = tls_client(it_hostport, NULL, NULL, NULL, 0, &st);
    CHECK(c != NULL);
    CHECK(refused(c, TB_ETLS, "TLS handshake"));
done:
    if (c)
        tb_client_close(c);
}

static int tls_on(void)
{
    const char *on = getenv("IT_TLS");

    return on != NULL && strcmp(on, "1") == 0 && tls_port() > 0;
}

static void test_tls(void (*fn)(void))
{
    if (tls_on())
        fn();
    else
        printf("  (IT_TLS unset: the server has no TLS port)\n");
}

static void test_tls_session(void)
{
    test_tls(tls_session);
}

static void test_tls_refused(void)
{
    test_tls(tls_refused);
}

static void test_tls_hostname(void)
{
    test_tls(tls_hostname);
}

static void test_tls_reconnect(void)
{
    test_tls(tls_reconnect);
}

static void test_tls_renewal(void)
{
    test_tls(tls_renewal);
}

static void test_tls_wrong_port(void)
{
    if (tls_on())
        tls_wrong_port();
    else
        tls_plain_server();
}

static void test_tls_cli(void)
{
    test_tls(tls_cli);
}

const struct it_test it_tls_tests[] = {
    {"tls_session", test_tls_session},
    {"tls_refused", test_tls_refused},
    {"tls_hostname", test_tls_hostname},
    {"tls_reconnect", test_tls_reconnect},
    {"tls_renewal", test_tls_renewal},
    {"tls_wrong_port", test_tls_wrong_port},
    {"tls_cli", test_tls_cli},
    {NULL, NULL},
};
