/* Unit tests of the client's TLS (tls.c) against a scripted server on a
 * socketpair, with a fake clock: the test's end runs an OpenSSL server
 * through memory BIOs, so it decides exactly which of the encrypted bytes
 * reach the client and when.  A record that has only partly arrived is
 * not data to read: the handle waits on the socket for the rest instead
 * of asking to be run again at once (which spun the CPU). */
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h> /* after setjmp.h, stdarg.h and stddef.h */

#include "client_fixture.h"

/* The server's side: a throwaway key and self-signed certificate, written
 * to ca_path for the client to trust; `ssl` speaks through `rbio` (bytes
 * from the client) and `wbio` (bytes for it), moved by srv_in / srv_out. */
static EVP_PKEY *key;
static X509 *cert;
static char ca_path[64];
static SSL_CTX *sctx;
static SSL *ssl;
static BIO *rbio, *wbio;

/* A certificate for 127.0.0.1 (the host the client is given), valid
 * from an hour ago for a day. */
static X509 *make_cert(EVP_PKEY *k)
{
    X509 *x = X509_new();
    X509_NAME *n;
    X509_EXTENSION *san;

    assert_non_null(x);
    assert_true(X509_set_version(x, 2));
    assert_true(ASN1_INTEGER_set(X509_get_serialNumber(x), 1));
    assert_non_null(X509_gmtime_adj(X509_getm_notBefore(x), -3600));
    assert_non_null(X509_gmtime_adj(X509_getm_notAfter(x), 86400));
    assert_true(X509_set_pubkey(x, k));
    n = X509_get_subject_name(x);
    assert_true(X509_NAME_add_entry_by_txt(
        n, "CN", MBSTRING_ASC, (const unsigned char *)"tumbler-test", -1, -1,
        0));
    assert_true(X509_set_issuer_name(x, n));
    san = X509V3_EXT_conf_nid(NULL, NULL, NID_subject_alt_name, "IP:127.0.0.1");
    assert_non_null(san);
    assert_true(X509_add_ext(x, san, -1));
    X509_EXTENSION_free(san);
    assert_true(X509_sign(x, k, EVP_sha256()) > 0);
    return x;
}

static int tls_setup(void **state)
{
    FILE *f;
    int fd;

    setup(state);
    key = EVP_EC_gen("P-256");
    assert_non_null(key);
    cert = make_cert(key);
    snprintf(ca_path, sizeof ca_path, "/tmp/tb_client_tls_XXXXXX");
    assert_true((fd = mkstemp(ca_path)) >= 0);
    assert_non_null(f = fdopen(fd, "w"));
    assert_true(PEM_write_X509(f, cert));
    assert_int_equal(fclose(f), 0);
    assert_non_null(sctx = SSL_CTX_new(TLS_server_method()));
    assert_true(SSL_CTX_use_certificate(sctx, cert));
    assert_true(SSL_CTX_use_PrivateKey(sctx, key));
    assert_non_null(ssl = SSL_new(sctx));
    assert_non_null(rbio = BIO_new(BIO_s_mem()));
    assert_non_null(wbio = BIO_new(BIO_s_mem()));
    SSL_set_bio(ssl, rbio, wbio); /* the SSL owns them */
    SSL_set_accept_state(ssl);
    return 0;
}

static int tls_teardown(void **state)
{
    SSL_free(ssl);
    SSL_CTX_free(sctx);
    X509_free(cert);
    EVP_PKEY_free(key);
    unlink(ca_path);
    return teardown(state);
}

/* Everything the client has written so far, into the server's SSL. */
static void srv_in(void)
{
    struct pollfd p = {server_fd, POLLIN, 0};
    char buf[4096];
    ssize_t n;

    while (poll(&p, 1, 0) == 1) {
        n = read(server_fd, buf, sizeof buf);
        assert_true(n > 0);
        assert_int_equal(BIO_write(rbio, buf, (int)n), (int)n);
    }
}

/* Up to `max` of the bytes the server's SSL produced, to the client;
 * returns how many are still held back. */
static size_t srv_out(size_t max)
{
    char buf[4096];
    int n;

    while (max > 0 && BIO_ctrl_pending(wbio) > 0) {
        n = BIO_read(wbio, buf, (int)(max < sizeof buf ? max : sizeof buf));
        assert_true(n > 0);
        assert_int_equal(write(server_fd, buf, (size_t)n), n);
        max -= (size_t)n;
    }
    return BIO_ctrl_pending(wbio);
}

/* One frame from the client, decrypted (bounded: the client is run in
 * between, so it must have written it already). */
static size_t srv_tls_read(struct tb_client *c, uint8_t *buf, size_t cap)
{
    size_t got = 0, len = 0;
    int i, n;

    for (i = 0; i < 20; i++) {
        srv_in();
        while ((n = SSL_read(ssl, buf + got, (int)(cap - got))) > 0)
            got += (size_t)n;
        if (got >= 4 && got >= 4 + (len = tb_load_be32(buf)))
            break;
        (void)srv_out(SIZE_MAX); /* anything the server's SSL had to say */
        pump(c);
    }
    assert_true(got >= 4 && got == 4 + len);
    memmove(buf, buf + 4, len);
    return len;
}

/* `w` (a whole frame) encrypted, held back in wbio; returns its length
 * there, which must be one record for the test to cut it. */
static size_t srv_tls_write(struct tb_wbuf *w)
{
    const unsigned char *p;
    long n;

    assert_false(w->oom);
    assert_int_equal(BIO_ctrl_pending(wbio), 0);
    assert_int_equal(SSL_write(ssl, w->base, (int)w->len), (int)w->len);
    tb_wbuf_free(w);
    n = BIO_get_mem_data(wbio, (char **)&p);
    /* one application-data record: its header's length is all the rest */
    assert_true(n >= 5);
    assert_int_equal(p[0], 23);
    assert_int_equal((size_t)n, 5 + ((size_t)p[3] << 8 | p[4]));
    return (size_t)n;
}

static void srv_tls_reply(int32_t xid, int64_t zxid, int32_t err)
{
    struct tb_wbuf w;
    struct tb_reply_header h = {xid, zxid, err};
    size_t start;

    tb_wbuf_init(&w);
    start = tb_frame_begin(&w);
    tb_reply_header_encode(&w, &h);
    tb_frame_end(&w, start);
    (void)srv_tls_write(&w);
    assert_int_equal(srv_out(SIZE_MAX), 0);
}

/* A handle over TLS to the test's server, its session established. */
static struct tb_client *tls_connected(int64_t sid)
{
    struct tb_options o = {0};
    struct tb_connect_resp rs = {0, 6000, sid, {"0123456789abcdef", 16}, 1, 0};
    struct tb_connect_req rq;
    struct tb_client *c;
    struct tb_wbuf w;
    struct tb_rd rd;
    uint8_t buf[128];
    size_t start, n;
    int i, r;

    o.hosts = "127.0.0.1:2281";
    o.session_timeout_ms = 6000;
    o.tls = 1;
    o.tls_ca_file = ca_path;
    assert_int_equal(tb_client_init(&c, &o), 0);
    c->now = clock_fn;
    c->connect_hook = hook;
    for (i = 0;
         i < 20 && (c->phase != PH_HANDSHAKE || !SSL_is_init_finished(ssl));
         i++) {
        tb_client_process(c, TB_EV_READ | TB_EV_WRITE);
        assert_true(c->phase == PH_TLS || c->phase == PH_HANDSHAKE);
        srv_in();
        if (!SSL_is_init_finished(ssl) && (r = SSL_do_handshake(ssl)) != 1)
            assert_int_equal(SSL_get_error(ssl, r), SSL_ERROR_WANT_READ);
        (void)srv_out(SIZE_MAX);
    }
    assert_int_equal(c->phase, PH_HANDSHAKE);
    assert_int_equal(connects, 1);
    n = srv_tls_read(c, buf, sizeof buf);
    rd = tb_rd_make(buf, n);
    assert_int_equal(tb_connect_req_decode(&rd, &rq), 0);
    tb_wbuf_init(&w);
    start = tb_frame_begin(&w);
    tb_connect_resp_encode(&w, &rs);
    tb_frame_end(&w, start);
    (void)srv_tls_write(&w);
    assert_int_equal(srv_out(SIZE_MAX), 0);
    pump(c);
    assert_int_equal(tb_client_state(c), TB_SESSION_CONNECTED);
    assert_int_equal(tb_client_session(c, NULL), sid);
    return c;
}

struct got {
    int calls, rc;
    size_t len;
    int intact;
};

static void got_data(struct tb_client *c, int rc, const void *v, size_t len,
                     const struct tb_stat *st, void *data)
{
    struct got *g = data;
    size_t i;

    (void)c;
    (void)st;
    g->calls++;
    g->rc = rc;
    g->len = len;
    g->intact = 1;
    for (i = 0; i < len; i++)
        g->intact &= ((const uint8_t *)v)[i] == (uint8_t)i;
}

/* A reply of one 10 KB record whose first half is in: the handle reads
 * what came, then waits for the socket (timeout_ms > 0, the heartbeat's),
 * and delivers the reply once the rest is in. */
static void test_partial_record(void **state)
{
    struct tb_client *c = tls_connected(0x77);
    struct tb_get_data_resp rs = {{NULL, 10000}, {0}};
    struct tb_request_header rh;
    struct tb_reply_header h = {0, 8, 0};
    struct tb_interest in;
    struct got g = {0};
    struct tb_wbuf w;
    struct tb_rd body;
    uint8_t buf[256], *value;
    size_t i, n, start, total, held;

    (void)state;
    assert_int_equal(tb_get_data(c, "/n", NULL, NULL, got_data, &g), 0);
    pump(c);
    n = srv_tls_read(c, buf, sizeof buf);
    body = tb_rd_make(buf, n);
    assert_int_equal(tb_request_header_decode(&body, &rh), 0);
    assert_int_equal(rh.type, TB_OP_GETDATA);

    assert_non_null(value = malloc(rs.data.len));
    for (i = 0; i < rs.data.len; i++)
        value[i] = (uint8_t)i;
    rs.data.ptr = (const char *)value;
    h.xid = rh.xid;
    tb_wbuf_init(&w);
    start = tb_frame_begin(&w);
    tb_reply_header_encode(&w, &h);
    tb_get_data_resp_encode(&w, &rs);
    tb_frame_end(&w, start);
    free(value);
    total = srv_tls_write(&w);
    assert_true(total > 10000);

    held = srv_out(total / 2);
    assert_int_equal(held, total - total / 2);
    assert_int_equal(tb_client_process(c, TB_EV_READ), 0);
    assert_int_equal(g.calls, 0);
    assert_int_equal(tb_client_interest(c, &in), 0);
    assert_int_equal(in.fd, c->fd);
    assert_true(in.events & TB_EV_READ);
    assert_true(in.timeout_ms > 0); /* 0: run again at once, a busy loop */
    assert_int_equal(tb__tls_pending(c), 0);
    /* The timeout passing with nothing new changes nothing. */
    assert_int_equal(tb_client_process(c, 0), 0);
    assert_int_equal(g.calls, 0);
    assert_int_equal(tb_client_state(c), TB_SESSION_CONNECTED);

    assert_int_equal(srv_out(SIZE_MAX), 0);
    assert_int_equal(tb_client_process(c, TB_EV_READ), 0);
    assert_int_equal(g.calls, 1);
    assert_int_equal(g.rc, 0);
    assert_int_equal(g.len, 10000);
    assert_true(g.intact);
    assert_int_equal(c->last_zxid, 8);
    assert_int_equal(tb_client_interest(c, &in), 0);
    assert_true(in.timeout_ms > 0);

    srv_tls_reply(c->next_xid, 99, 0); /* closeSession's */
    tb_client_close(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_partial_record, tls_setup,
                                        tls_teardown),
    };
    signal(SIGPIPE, SIG_IGN);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
