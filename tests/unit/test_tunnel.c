/* peer/tunnel.c: TLS between two members over a real loopback connection,
 * with certificates made here (an EC key each, self-signed, naming
 * 127.0.0.1, or a host name alone): bytes written on one plaintext end
 * come out of the other, a close on one end is an EOF on the other, a
 * member whose certificate the trust store does not hold is refused on
 * both sides (each callback gets -1), and the accepting side takes a
 * certificate that names the host 127.0.0.1 reverse-resolves to (as
 * localhost in the hosts file) but not one for another name.  With
 * portUnification the accepting side takes a plain connection as it is
 * and a TLS one as ever; without, plain bytes are refused.  A tunnel whose
 * handles the loop's owner closes at exit, a write still out, closes
 * nothing twice.  Every wait is the loop's, bounded by a timer. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include <cmocka.h>

#include "server/net/tls_ctx.h"
#include "server/peer/tunnel.h"

struct end {
    int fd;     /* the plaintext end; -1: refused; -2: no answer yet */
    int called; /* the callback's count */
};

static void got_fd(void *arg, int fd)
{
    struct end *e = arg;

    e->fd = fd;
    e->called++;
}

/* Writes NAME.pem (its key and certificate) and NAME.crt (the certificate
 * alone) in DIR: a self-signed certificate for SAN (as "IP:127.0.0.1"). */
static void make_cert_for(const char *dir, const char *name, const char *san)
{
    EVP_PKEY *key = EVP_EC_gen("P-256");
    X509 *x = X509_new();
    X509_NAME *n = X509_get_subject_name(x);
    X509_EXTENSION *ext;
    X509V3_CTX v3;
    char path[512];
    FILE *f;

    assert_non_null(key);
    ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
    X509_gmtime_adj(X509_getm_notBefore(x), -60);
    X509_gmtime_adj(X509_getm_notAfter(x), 3600);
    X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC,
                               (const unsigned char *)name, -1, -1, 0);
    X509_set_issuer_name(x, n);
    X509_set_pubkey(x, key);
    X509V3_set_ctx(&v3, x, x, NULL, NULL, 0);
    ext = X509V3_EXT_conf_nid(NULL, &v3, NID_subject_alt_name, san);
    X509_add_ext(x, ext, -1);
    X509_EXTENSION_free(ext);
    ext = X509V3_EXT_conf_nid(NULL, &v3, NID_basic_constraints, "CA:TRUE");
    X509_add_ext(x, ext, -1);
    X509_EXTENSION_free(ext);
    assert_true(X509_sign(x, key, EVP_sha256()) > 0);
    snprintf(path, sizeof path, "%s/%s.pem", dir, name);
    assert_non_null(f = fopen(path, "w"));
    PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL);
    PEM_write_X509(f, x);
    fclose(f);
    snprintf(path, sizeof path, "%s/%s.crt", dir, name);
    assert_non_null(f = fopen(path, "w"));
    PEM_write_X509(f, x);
    fclose(f);
    X509_free(x);
    EVP_PKEY_free(key);
}

static void make_cert(const char *dir, const char *name)
{
    make_cert_for(dir, name, "IP:127.0.0.1");
}

struct fx {
    char dir[64];
    uv_loop_t loop;
    uv_timer_t deadline;
    int timed_out;
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);

    snprintf(f->dir, sizeof f->dir, "/tmp/test_tunnel.XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    make_cert(f->dir, "a");
    make_cert(f->dir, "b");
    make_cert(f->dir, "stranger");
    make_cert_for(f->dir, "named", "DNS:localhost");
    make_cert_for(f->dir, "misnamed", "DNS:other.invalid");
    uv_loop_init(&f->loop);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    char cmd[128];

    uv_loop_close(&f->loop);
    snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
}

/* A context for NAME.pem trusting the certificates in TRUST.crt, taking
 * plain connections too if `unify`. */
static struct tunnel_ctx *ctx_of(struct fx *f, const char *name,
                                 const char *trust, int unify)
{
    char key[512], ca[512];
    struct tls_keys k = {.prefix = "ssl.quorum"};

    snprintf(key, sizeof key, "%s/%s.pem", f->dir, name);
    snprintf(ca, sizeof ca, "%s/%s.crt", f->dir, trust);
    k.key_store = key;
    k.key_type = "PEM";
    k.trust_store = ca;
    k.trust_type = "PEM";
    return tunnel_ctx_new(&f->loop, &k, 1, unify);
}

static struct tunnel_ctx *ctx(struct fx *f, const char *name, const char *trust)
{
    return ctx_of(f, name, trust, 0);
}

/* A connected pair of loopback TCP sockets: *out dials, *in accepted. */
static void tcp_pair(int *out, int *in)
{
    struct sockaddr_in a = {.sin_family = AF_INET};
    socklen_t alen = sizeof a;
    int l = socket(AF_INET, SOCK_STREAM, 0);

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(l, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(l, 1), 0);
    assert_int_equal(getsockname(l, (struct sockaddr *)&a, &alen), 0);
    *out = socket(AF_INET, SOCK_STREAM, 0);
    assert_int_equal(connect(*out, (struct sockaddr *)&a, sizeof a), 0);
    assert_true((*in = accept(l, NULL, NULL)) >= 0);
    close(l);
}

static void on_deadline(uv_timer_t *t)
{
    struct fx *f = t->data;

    f->timed_out = 1;
    uv_stop(&f->loop);
}

/* Runs the loop until both ends have their answer (or 10 s). */
static void wait_both(struct fx *f, struct end *a, struct end *b)
{
    uv_timer_init(&f->loop, &f->deadline);
    f->deadline.data = f;
    uv_timer_start(&f->deadline, on_deadline, 10000, 0);
    while (!f->timed_out && (a->called == 0 || b->called == 0))
        uv_run(&f->loop, UV_RUN_ONCE);
    uv_close((uv_handle_t *)&f->deadline, NULL);
    uv_run(&f->loop, UV_RUN_NOWAIT); /* its close done: it is used again */
    assert_false(f->timed_out);
}

/* Runs the loop until it has nothing left (the tunnels closed). */
static void drain(struct fx *f)
{
    int i;

    for (i = 0; i < 1000 && uv_run(&f->loop, UV_RUN_NOWAIT) != 0; i++)
        usleep(1000);
    assert_int_equal(uv_loop_alive(&f->loop), 0);
}

/* Reads exactly n bytes from fd, driving the loop meanwhile. */
static void read_all(struct fx *f, int fd, char *buf, size_t n)
{
    size_t got = 0;
    ssize_t k;
    int i;

    for (i = 0; got < n && i < 10000; i++) {
        uv_run(&f->loop, UV_RUN_NOWAIT);
        k = recv(fd, buf + got, n - got, MSG_DONTWAIT);
        if (k > 0)
            got += (size_t)k;
        else
            usleep(1000);
    }
    assert_int_equal(got, n);
}

static void test_carries_bytes_both_ways(void **state)
{
    struct fx *f = *state;
    struct tunnel_ctx *ca = ctx(f, "a", "b"), *cb = ctx(f, "b", "a");
    struct end a = {-2, 0}, b = {-2, 0};
    char buf[16];
    int out, in, i;

    assert_non_null(ca);
    assert_non_null(cb);
    tcp_pair(&out, &in);
    assert_non_null(tunnel_start(ca, out, 1, "127.0.0.1:1", got_fd, &a));
    assert_non_null(tunnel_start(cb, in, 0, NULL, got_fd, &b));
    wait_both(f, &a, &b);
    assert_true(a.fd >= 0);
    assert_true(b.fd >= 0);
    assert_int_equal(write(a.fd, "ping", 4), 4);
    read_all(f, b.fd, buf, 4);
    assert_memory_equal(buf, "ping", 4);
    /* An error someone else left on this thread's OpenSSL queue is not
     * taken for the link's (SSL_get_error reads the queue). */
    ERR_raise(ERR_LIB_SSL, ERR_R_INTERNAL_ERROR);
    assert_int_equal(write(b.fd, "pong!", 5), 5);
    read_all(f, a.fd, buf, 5);
    assert_memory_equal(buf, "pong!", 5);
    assert_int_equal(write(a.fd, "again", 5), 5); /* the link still up */
    read_all(f, b.fd, buf, 5);
    assert_memory_equal(buf, "again", 5);
    /* One end closed: the other reads its end. */
    close(a.fd);
    for (i = 0; i < 5000; i++) {
        uv_run(&f->loop, UV_RUN_NOWAIT);
        if (recv(b.fd, buf, sizeof buf, MSG_DONTWAIT) == 0)
            break;
        usleep(1000);
    }
    assert_true(i < 5000);
    close(b.fd);
    drain(f);
    assert_int_equal(a.called, 1);
    assert_int_equal(b.called, 1);
    tunnel_ctx_free(ca);
    tunnel_ctx_free(cb);
}

/* Waits for the accepting end's answer alone (or 10 s). */
static void wait_one(struct fx *f, struct end *e)
{
    struct end done = {-2, 1};

    wait_both(f, e, &done);
}

/* portUnification: a plain dialer's bytes (raft's handshake starts 0x01)
 * come out of the plaintext end as they were sent, and the answer goes
 * back as it is; a TLS dialer is still secured. */
static void test_unified_takes_plain_and_tls(void **state)
{
    struct fx *f = *state;
    struct tunnel_ctx *ca = ctx(f, "a", "b"), *cu = ctx_of(f, "b", "a", 1);
    struct end a = {-2, 0}, b = {-2, 0}, p = {-2, 0};
    char buf[16];
    int out, in, i;

    tcp_pair(&out, &in);
    assert_int_equal(write(out, "\x01hello", 6), 6);
    assert_non_null(tunnel_start(cu, in, 0, NULL, got_fd, &p));
    wait_one(f, &p);
    assert_true(p.fd >= 0);
    read_all(f, p.fd, buf, 6);
    assert_memory_equal(buf, "\x01hello", 6);
    assert_int_equal(write(p.fd, "back", 4), 4);
    read_all(f, out, buf, 4);
    assert_memory_equal(buf, "back", 4);
    close(out);
    for (i = 0; i < 5000; i++) {
        uv_run(&f->loop, UV_RUN_NOWAIT);
        if (recv(p.fd, buf, sizeof buf, MSG_DONTWAIT) == 0)
            break;
        usleep(1000);
    }
    assert_true(i < 5000);
    close(p.fd);

    tcp_pair(&out, &in);
    assert_non_null(tunnel_start(ca, out, 1, "127.0.0.1:1", got_fd, &a));
    assert_non_null(tunnel_start(cu, in, 0, NULL, got_fd, &b));
    wait_both(f, &a, &b);
    assert_true(a.fd >= 0 && b.fd >= 0);
    assert_int_equal(write(a.fd, "ping", 4), 4);
    read_all(f, b.fd, buf, 4);
    assert_memory_equal(buf, "ping", 4);
    close(a.fd);
    close(b.fd);
    drain(f);
    tunnel_ctx_free(ca);
    tunnel_ctx_free(cu);
}

/* Without portUnification, the same plain bytes are refused. */
static void test_plain_refused(void **state)
{
    struct fx *f = *state;
    struct tunnel_ctx *c = ctx(f, "b", "a");
    struct end p = {-2, 0};
    int out, in;

    tcp_pair(&out, &in);
    assert_int_equal(write(out, "\x01hello", 6), 6);
    assert_non_null(tunnel_start(c, in, 0, NULL, got_fd, &p));
    wait_one(f, &p);
    assert_int_equal(p.fd, -1);
    close(out);
    drain(f);
    tunnel_ctx_free(c);
}

/* The stranger's certificate is in no trust store: refused both ways,
 * whichever side it is on. */
static void test_refuses_a_stranger(void **state)
{
    struct fx *f = *state;
    struct tunnel_ctx *member = ctx(f, "a", "b"),
                      *stranger = ctx(f, "stranger", "a");
    struct end s = {-2, 0}, m = {-2, 0};
    int out, in;

    tcp_pair(&out, &in);
    assert_non_null(tunnel_start(stranger, out, 1, "127.0.0.1:1", got_fd, &s));
    assert_non_null(tunnel_start(member, in, 0, NULL, got_fd, &m));
    wait_both(f, &s, &m);
    assert_int_equal(s.fd, -1);
    assert_int_equal(m.fd, -1);
    f->timed_out = 0;
    s = (struct end){-2, 0};
    m = (struct end){-2, 0};
    tcp_pair(&out, &in);
    assert_non_null(tunnel_start(member, out, 1, "127.0.0.1:1", got_fd, &m));
    assert_non_null(tunnel_start(stranger, in, 0, NULL, got_fd, &s));
    wait_both(f, &s, &m);
    assert_int_equal(s.fd, -1);
    assert_int_equal(m.fd, -1);
    drain(f);
    tunnel_ctx_free(member);
    tunnel_ctx_free(stranger);
}

/* The member dialed must be the host its certificate names. */
static void test_checks_the_host(void **state)
{
    struct fx *f = *state;
    struct tunnel_ctx *ca = ctx(f, "a", "b"), *cb = ctx(f, "b", "a");
    struct end a = {-2, 0}, b = {-2, 0};
    int out, in;

    tcp_pair(&out, &in);
    assert_non_null(tunnel_start(ca, out, 1, "127.0.0.2:1", got_fd, &a));
    assert_non_null(tunnel_start(cb, in, 0, NULL, got_fd, &b));
    wait_both(f, &a, &b);
    assert_int_equal(a.fd, -1);
    assert_int_equal(b.fd, -1);
    drain(f);
    tunnel_ctx_free(ca);
    tunnel_ctx_free(cb);
}

/* Accepting: a certificate that does not name 127.0.0.1 passes if it
 * names the host name 127.0.0.1 reverse-resolves to (localhost), looked
 * up before the ACK goes; one for another name is refused both sides. */
static void test_accepts_the_reverse_name(void **state)
{
    struct fx *f = *state;
    struct tunnel_ctx *named = ctx(f, "named", "a"),
                      *misnamed = ctx(f, "misnamed", "a"),
                      *ta = ctx(f, "a", "named"), *tm = ctx(f, "a", "misnamed");
    struct end d = {-2, 0}, a = {-2, 0};
    char buf[4];
    int out, in;

    tcp_pair(&out, &in);
    assert_non_null(tunnel_start(named, out, 1, "127.0.0.1:1", got_fd, &d));
    assert_non_null(tunnel_start(ta, in, 0, NULL, got_fd, &a));
    wait_both(f, &d, &a);
    assert_true(d.fd >= 0);
    assert_true(a.fd >= 0);
    assert_int_equal(write(d.fd, "ping", 4), 4);
    read_all(f, a.fd, buf, 4);
    assert_memory_equal(buf, "ping", 4);
    close(d.fd);
    close(a.fd);
    d = (struct end){-2, 0};
    a = (struct end){-2, 0};
    tcp_pair(&out, &in);
    assert_non_null(tunnel_start(misnamed, out, 1, "127.0.0.1:1", got_fd, &d));
    assert_non_null(tunnel_start(tm, in, 0, NULL, got_fd, &a));
    wait_both(f, &d, &a);
    assert_int_equal(d.fd, -1);
    assert_int_equal(a.fd, -1);
    drain(f);
    tunnel_ctx_free(named);
    tunnel_ctx_free(misnamed);
    tunnel_ctx_free(ta);
    tunnel_ctx_free(tm);
}

/* Accepting, canceled after k turns of the loop, for k from 0 on: some
 * fall while the host name is looked up, whose answer then comes to a
 * tunnel that is gone (freed: ASan's builds see any use).  The dialer
 * gets -1 or, when the ACK was out before the cancel, its end. */
static void test_cancel_while_looking_up(void **state)
{
    struct fx *f = *state;
    struct tunnel_ctx *named = ctx(f, "named", "a"), *ta = ctx(f, "a", "named");
    struct end d, a;
    void *t;
    int out, in, k, i;

    for (k = 0; k < 40; k++) {
        d = (struct end){-2, 0};
        a = (struct end){-2, 0};
        tcp_pair(&out, &in);
        assert_non_null(tunnel_start(named, out, 1, "127.0.0.1:1", got_fd, &d));
        assert_non_null(t = tunnel_start(ta, in, 0, NULL, got_fd, &a));
        for (i = 0; i < k && a.called == 0; i++)
            uv_run(&f->loop, UV_RUN_ONCE);
        if (a.called == 0)
            tunnel_cancel(t);
        else
            close(a.fd);
        drain(f);
        assert_true(a.called <= 1);
        assert_int_equal(d.called, 1);
        if (d.fd >= 0)
            close(d.fd);
    }
    tunnel_ctx_free(named);
    tunnel_ctx_free(ta);
}

static void close_walk(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (!uv_is_closing(h))
        uv_close(h, NULL);
}

/* tumblerd's exit closes every handle left on the loop (main.c): a tunnel
 * with a write still out to a member that reads nothing sees it canceled,
 * and closes nothing twice (libuv aborts on that). */
static void test_closed_at_exit_with_writes_out(void **state)
{
    struct fx *f = *state;
    struct tunnel_ctx *ca = ctx(f, "a", "b"), *cb = ctx(f, "b", "a");
    struct end a = {-2, 0}, b = {-2, 0};
    static char chunk[65536];
    int out, in, stuck = 0, i;

    tcp_pair(&out, &in);
    assert_non_null(tunnel_start(ca, out, 1, "127.0.0.1:1", got_fd, &a));
    assert_non_null(tunnel_start(cb, in, 0, NULL, got_fd, &b));
    wait_both(f, &a, &b);
    assert_true(a.fd >= 0 && b.fd >= 0);
    /* b's plaintext end is never read: every buffer on the way fills. */
    for (i = 0; i < 100000 && stuck < 200; i++) {
        uv_run(&f->loop, UV_RUN_NOWAIT);
        if (send(a.fd, chunk, sizeof chunk, MSG_DONTWAIT) > 0) {
            stuck = 0;
        } else {
            stuck++;
            usleep(1000);
        }
    }
    assert_int_equal(stuck, 200);
    uv_walk(&f->loop, close_walk, NULL);
    drain(f);
    close(a.fd);
    close(b.fd);
    tunnel_ctx_free(ca);
    tunnel_ctx_free(cb);
}

/* Canceled before its handshake: no callback, nothing left open. */
static void test_cancel(void **state)
{
    struct fx *f = *state;
    struct tunnel_ctx *ca = ctx(f, "a", "b");
    struct end a = {-2, 0};
    void *t;
    int out, in;

    tcp_pair(&out, &in);
    assert_non_null(t = tunnel_start(ca, out, 1, "127.0.0.1:1", got_fd, &a));
    tunnel_cancel(t);
    drain(f);
    assert_int_equal(a.called, 0);
    close(in);
    tunnel_ctx_free(ca);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_carries_bytes_both_ways, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_refuses_a_stranger, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_checks_the_host, setup, teardown),
        cmocka_unit_test_setup_teardown(test_accepts_the_reverse_name, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_cancel_while_looking_up, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_cancel, setup, teardown),
        cmocka_unit_test_setup_teardown(test_closed_at_exit_with_writes_out,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_unified_takes_plain_and_tls, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_plain_refused, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
