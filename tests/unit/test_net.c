/* Unit tests of the client network layer (src/server/net/) on a struct
 * tbd of the test's own, with a virtual clock:
 *   - tls.c, no sockets: a connection of the test's own whose bytes go by
 *     memory between the server's SSL and a client's; what its memory
 *     BIOs keep after a large reply and a large request, and the tickets
 *     a handshake gives;
 *   - conn.c, over loopback TCP: a connection closed after a large answer
 *     (a four-letter word's) to a client that reads it slowly; one that
 *     found no memory when it came (calloc wrapped, --wrap). */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h> /* after setjmp.h, stdarg.h and stddef.h */

#include "server/admin/fourlw.h"
#include "server/config/config.h"
#include "server/net/net.h"
#include "server/net/tls_ctx.h"
#include "server/server.h"

#define T0         1000000u
#define BIG        (1u << 20)   /* a large reply, or request */
#define KEEP       TLS_BIO_KEEP /* what a drained BIO may keep */
#define ANSWER     (4u << 20)   /* a large four-letter word's answer */
#define PER_SECOND (100u << 10) /* what the slow client reads a second */

/* calloc as this program's objects call it (-Wl,--wrap=calloc): the next
 * `conn_callocs_failing` of a connection's size fail. */
static int conn_callocs_failing;
void *__real_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size)
{
    if (conn_callocs_failing > 0 && n == 1 && size == sizeof(struct conn)) {
        conn_callocs_failing--;
        return NULL;
    }
    return __real_calloc(n, size);
}

struct nfx {
    struct tbd s;
    struct tb_config cfg;
    uv_loop_t loop;
    uint64_t now; /* the virtual monotonic clock */
    char dir[64]; /* the server's key store, for the TLS tests */
    char key_store[96];
};

static uint64_t fake_now(void *data)
{
    return ((struct nfx *)data)->now;
}

static int64_t fake_wall(void *data)
{
    (void)data;
    return 1700000000000;
}

static int setup(void **state)
{
    struct nfx *f = calloc(1, sizeof *f);
    struct tbd *s;

    assert_non_null(f);
    assert_int_equal(uv_loop_init(&f->loop), 0);
    tb_config_init(&f->cfg);
    f->now = T0;
    s = &f->s;
    s->loop = &f->loop;
    s->clock = (struct tbd_clock){fake_now, fake_wall, f, NULL};
    s->cfg = &f->cfg;
    tb_queue_init(&s->conns);
    tb_queue_init(&s->dirty);
    tb_queue_init(&s->notified);
    tb_queue_init(&s->fresh);
    tb_map_init(&s->conn_by_id);
    tb_map_init(&s->conn_by_session);
    tb_map_init(&s->sessions);
    tb_map_init(&s->ip_count);
    watch_mgr_init(&s->watches, 1);
    *state = f;
    return 0;
}

/* What a failed test left open (a listener) would keep the loop alive. */
static void close_left(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (!uv_is_closing(h))
        uv_close(h, NULL);
}

static int teardown(void **state)
{
    struct nfx *f = *state;
    struct tbd *s = &f->s;

    uv_walk(&f->loop, close_left, NULL);
    while (uv_run(&f->loop, UV_RUN_NOWAIT) != 0)
        ;
    assert_int_equal(uv_loop_close(&f->loop), 0);
    watch_mgr_close(&s->watches);
    tb_map_free(&s->conn_by_id);
    tb_map_free(&s->conn_by_session);
    tb_map_free(&s->sessions);
    tb_map_free(&s->ip_count);
    tb_config_free(&f->cfg);
    free(f);
    return 0;
}

/* ---- tls.c ---- */

/* The server's SSL of the latest connection, for a look at its BIOs:
 * SSL_get_wbio and SSL_get_rbio give the ones in use now. */
static const SSL *server_ssl;

static void note_ssl(const SSL *ssl, int where, int ret)
{
    (void)ret;
    if (where & SSL_CB_HANDSHAKE_START)
        server_ssl = ssl;
}

/* A throwaway key and self-signed certificate, written as one PEM key
 * store (ssl.keyStore.type=PEM) for tls_server_init to read. */
static void write_key_store(struct nfx *f)
{
    EVP_PKEY *key = EVP_EC_gen("P-256");
    X509 *x = X509_new();
    X509_NAME *n;
    FILE *fp;

    assert_non_null(key);
    assert_non_null(x);
    assert_true(X509_set_version(x, 2));
    assert_true(ASN1_INTEGER_set(X509_get_serialNumber(x), 1));
    assert_non_null(X509_gmtime_adj(X509_getm_notBefore(x), -3600));
    assert_non_null(X509_gmtime_adj(X509_getm_notAfter(x), 86400));
    assert_true(X509_set_pubkey(x, key));
    n = X509_get_subject_name(x);
    assert_true(X509_NAME_add_entry_by_txt(
        n, "CN", MBSTRING_ASC, (const unsigned char *)"tumbler-test", -1, -1,
        0));
    assert_true(X509_set_issuer_name(x, n));
    assert_true(X509_sign(x, key, EVP_sha256()) > 0);
    snprintf(f->dir, sizeof f->dir, "/tmp/tb_net_XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->key_store, sizeof f->key_store, "%s/server.pem", f->dir);
    assert_non_null(fp = fopen(f->key_store, "w"));
    assert_true(PEM_write_PrivateKey(fp, key, NULL, NULL, 0, NULL, NULL));
    assert_true(PEM_write_X509(fp, x));
    assert_int_equal(fclose(fp), 0);
    X509_free(x);
    EVP_PKEY_free(key);
}

/* The TLS port's context as tumblerd makes it (tls_server_init), clients'
 * certificates not asked for. */
static int tls_setup(void **state)
{
    struct nfx *f;

    setup(state);
    f = *state;
    write_key_store(f);
    f->cfg.tls.key_store = strdup(f->key_store);
    f->cfg.tls.key_type = strdup("PEM");
    assert_non_null(f->cfg.tls.key_store);
    assert_non_null(f->cfg.tls.key_type);
    f->cfg.tls.client_auth = TB_TLS_NONE;
    assert_int_equal(tls_server_init(&f->s), 0);
    SSL_CTX_set_info_callback(f->s.tls_ctx, note_ssl);
    return 0;
}

static int tls_teardown(void **state)
{
    struct nfx *f = *state;

    tls_server_free(&f->s);
    unlink(f->key_store);
    rmdir(f->dir);
    return teardown(state);
}

/* A TLS connection of the server's (tls_conn_new), carried by the test:
 * `c` as conn.c would hold it, and a client's SSL over memory BIOs. */
struct pair {
    struct conn *c;
    SSL_CTX *cctx;
    SSL *cli;
    BIO *cin, *cout;    /* the client's: bytes from, and for, the server */
    struct tb_wbuf got; /* plaintext the server's SSL gave c->in */
};

static void pair_open(struct nfx *f, struct pair *p, int version)
{
    memset(p, 0, sizeof *p);
    assert_non_null(p->c = calloc(1, sizeof *p->c));
    p->c->srv = &f->s;
    p->c->client.srv = &f->s;
    strcpy(p->c->peer, "127.0.0.1");
    tb_wbuf_init(&p->c->out);
    tb_wbuf_init(&p->c->client.ids);
    tb_wbuf_init(&p->got);
    server_ssl = NULL;
    assert_int_equal(tls_conn_new(p->c), 0);
    assert_non_null(p->cctx = SSL_CTX_new(TLS_client_method()));
    SSL_CTX_set_verify(p->cctx, SSL_VERIFY_NONE, NULL);
    if (version != 0) {
        assert_true(SSL_CTX_set_min_proto_version(p->cctx, version));
        assert_true(SSL_CTX_set_max_proto_version(p->cctx, version));
    }
    assert_non_null(p->cli = SSL_new(p->cctx));
    assert_non_null(p->cin = BIO_new(BIO_s_mem()));
    assert_non_null(p->cout = BIO_new(BIO_s_mem()));
    BIO_set_mem_eof_return(p->cin, -1);
    SSL_set_bio(p->cli, p->cin, p->cout); /* the SSL owns them */
    SSL_set_connect_state(p->cli);
}

static void pair_close(struct pair *p)
{
    tls_conn_free(p->c);
    tb_wbuf_free(&p->c->out);
    tb_wbuf_free(&p->c->client.ids);
    free(p->c);
    SSL_free(p->cli);
    SSL_CTX_free(p->cctx);
    tb_wbuf_free(&p->got);
}

/* What the client wrote, to the server as reads bring it (on_read): into
 * the shared buffer's worth at a time, the plaintext taken out after each
 * as the connection's frames would be. */
static int to_server(struct nfx *f, struct pair *p)
{
    struct conn *c = p->c;
    uint8_t buf[sizeof f->s.in];
    int n, rv = 0;

    while (rv == 0 && (n = BIO_read(p->cout, buf, sizeof buf)) > 0) {
        c->in = f->s.in;
        c->in_cap = sizeof f->s.in;
        c->in_len = 0;
        rv = tls_conn_input(c, buf, (size_t)n);
        tb_wbuf_put(&p->got, c->in, c->in_len);
        if (c->in != f->s.in)
            free(c->in);
        c->in = NULL;
        c->in_cap = c->in_len = 0;
    }
    return rv;
}

/* What the server's SSL made of c->out (and its handshake), to the client,
 * all of it written at once as flush_one does when the socket takes it. */
static void to_client(struct pair *p)
{
    struct tb_wbuf *b = tls_conn_output(p->c);

    assert_non_null(b);
    assert_int_equal(BIO_write(p->cin, b->base, (int)b->len), (int)b->len);
    b->len = 0;
    if (b->cap > KEEP)
        tb_wbuf_free(b);
}

static void handshake(struct nfx *f, struct pair *p)
{
    int i, rv;

    for (i = 0; i < 20; i++) {
        rv = SSL_do_handshake(p->cli);
        /* before a write to its BIO clears what the SSL was waiting for */
        if (rv != 1)
            assert_int_equal(SSL_get_error(p->cli, rv), SSL_ERROR_WANT_READ);
        assert_int_equal(to_server(f, p), 0);
        to_client(p);
        if (rv == 1)
            break;
    }
    assert_true(SSL_is_init_finished(p->cli));
    assert_non_null(server_ssl);
    assert_true(SSL_is_init_finished(server_ssl));
}

static size_t mem_max(BIO *b)
{
    BUF_MEM *m = NULL;

    assert_true(BIO_get_mem_ptr(b, &m) > 0);
    assert_non_null(m);
    return m->max;
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
    size_t i;

    for (i = 0; i < n; i++)
        p[i] = (uint8_t)(i * 7 + seed + i / 251);
}

/* The whole of a reply of `n` bytes, read by the client, is `want`. */
static void client_reads(struct pair *p, const uint8_t *want, size_t n)
{
    uint8_t *got = malloc(n + 1);
    size_t have = 0;
    int k;

    assert_non_null(got);
    while (have < n &&
           (k = SSL_read(p->cli, got + have, (int)(n + 1 - have))) > 0)
        have += (size_t)k;
    assert_int_equal(have, n);
    assert_memory_equal(got, want, n);
    assert_int_equal(SSL_read(p->cli, got, 1), -1); /* nothing more */
    free(got);
}

/* A reply of 1 MB, then a request of 1 MB: each passes through one of the
 * connection's memory BIOs, whose buffer never shrinks by itself; once
 * they are drained, neither keeps more than a small buffer's worth (each
 * kept about 4/3 of the largest for as long as the connection was open),
 * and the connection goes on through the BIOs that replaced them. */
static void tls_large_flush_leaves_small_bios(void **state)
{
    struct nfx *f = *state;
    struct pair p;
    uint8_t *big = malloc(BIG);
    size_t out0;

    assert_non_null(big);
    pair_open(f, &p, 0);
    handshake(f, &p);
    out0 = mem_max(SSL_get_wbio(server_ssl));
    assert_true(out0 <= KEEP); /* a handshake's records are small */

    fill(big, BIG, 1);
    tb_wbuf_put(&p.c->out, big, BIG);
    to_client(&p);
    assert_int_equal(p.c->out.len, 0);
    client_reads(&p, big, BIG);
    assert_int_equal(BIO_ctrl_pending(SSL_get_wbio(server_ssl)), 0);
    print_message("the server's write BIO after a 1 MB reply: %zu bytes\n",
                  mem_max(SSL_get_wbio(server_ssl)));
    assert_true(mem_max(SSL_get_wbio(server_ssl)) <= KEEP);

    fill(big, BIG, 2);
    assert_int_equal(SSL_write(p.cli, big, BIG), BIG);
    assert_int_equal(to_server(f, &p), 0);
    assert_int_equal(p.got.len, BIG);
    assert_memory_equal(p.got.base, big, BIG);
    print_message("the server's read BIO after a 1 MB request: %zu bytes\n",
                  mem_max(SSL_get_rbio(server_ssl)));
    assert_true(mem_max(SSL_get_rbio(server_ssl)) <= KEEP);

    /* Both ways still work, and an empty read BIO still means "more to
     * come", not the end of the connection. */
    p.got.len = 0;
    assert_int_equal(SSL_write(p.cli, "ping", 4), 4);
    assert_int_equal(to_server(f, &p), 0);
    assert_int_equal(p.got.len, 4);
    assert_memory_equal(p.got.base, "ping", 4);
    tb_wbuf_put(&p.c->out, "pong", 4);
    to_client(&p);
    client_reads(&p, (const uint8_t *)"pong", 4);

    pair_close(&p);
    free(big);
}

/* Neither TLS 1.2 nor TLS 1.3 gets a session ticket: a reconnecting client
 * makes a full handshake (tls_server_init).  TLS 1.3 sends its tickets
 * after the handshake, so a reply is read first. */
static void tls_no_session_tickets(void **state)
{
    struct nfx *f = *state;
    const int versions[] = {TLS1_2_VERSION, TLS1_3_VERSION};
    SSL_SESSION *sess;
    struct pair p;
    size_t i;

    for (i = 0; i < sizeof versions / sizeof versions[0]; i++) {
        pair_open(f, &p, versions[i]);
        handshake(f, &p);
        assert_int_equal(SSL_version(p.cli), versions[i]);
        tb_wbuf_put(&p.c->out, "ok", 2);
        to_client(&p);
        client_reads(&p, (const uint8_t *)"ok", 2);
        assert_non_null(sess = SSL_get1_session(p.cli));
        print_message("%s: a ticket: %d\n", SSL_get_version(p.cli),
                      SSL_SESSION_has_ticket(sess));
        assert_false(SSL_SESSION_has_ticket(sess));
        SSL_SESSION_free(sess);
        pair_close(&p);
    }
}

/* ---- conn.c ---- */

/* Runs the loop's ready work once, without waiting. */
static void pump(struct nfx *f)
{
    uv_run(&f->loop, UV_RUN_NOWAIT);
}

/* A tick, as main.c's ticker makes it, `ms` of virtual time later. */
static void tick(struct nfx *f, uint64_t ms)
{
    f->now += ms;
    conn_touch_readers(&f->s);
    conn_sweep_sessionless(&f->s);
    conn_accept_again(&f->s);
    pump(f);
}

/* The plain port, on loopback, the system picking it: its address. */
static struct sockaddr_in listen_plain(struct nfx *f)
{
    struct sockaddr_in addr;
    int len = sizeof addr;

    f->cfg.client_port = 0;
    free(f->cfg.client_port_address);
    f->cfg.client_port_address = strdup("127.0.0.1");
    assert_non_null(f->cfg.client_port_address);
    f->cfg.tls.port = 0;
    assert_int_equal(conn_listen(&f->s), 0);
    assert_int_equal(
        uv_tcp_getsockname(&f->s.listener, (struct sockaddr *)&addr, &len), 0);
    return addr;
}

static int dial(const struct sockaddr_in *addr)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    assert_true(fd >= 0);
    assert_int_equal(connect(fd, (const struct sockaddr *)addr, sizeof *addr),
                     0);
    return fd;
}

/* Runs the loop until the server has `n` connections (10 s real at most). */
static void accepted(struct nfx *f, size_t n)
{
    uint64_t end = uv_hrtime() + 10000000000u;

    while (f->s.conn_by_id.count < n) {
        assert_true(uv_hrtime() < end);
        pump(f);
    }
}

/* A client of the plain port, connected, whose receive buffer is small,
 * and the server's connection of it (*c), whose send buffer is too: what
 * the server writes then reaches the client only as fast as it reads. */
static int slow_client(struct nfx *f, struct conn **c)
{
    struct sockaddr_in addr = listen_plain(f);
    int fd, small = 4096;

    assert_true((fd = socket(AF_INET, SOCK_STREAM, 0)) >= 0);
    assert_int_equal(
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small), 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&addr, sizeof addr), 0);
    assert_int_equal(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK), 0);
    accepted(f, 1);
    *c = TB_CONTAINER_OF(tb_queue_head(&f->s.conns), struct conn, link);
    assert_int_equal(uv_send_buffer_size((uv_handle_t *)&(*c)->tcp, &small), 0);
    return fd;
}

/* Reads up to `want` bytes in all (checking them against `answer`), the
 * loop run whenever nothing is there yet; returns how many it has, short
 * if the server closed the connection first. */
static size_t read_to(struct nfx *f, int fd, const uint8_t *answer, size_t have,
                      size_t want, int *closed)
{
    uint64_t end = uv_hrtime() + 10000000000u;
    uint8_t buf[65536];
    size_t ask;
    ssize_t n;

    while (have < want && !*closed) {
        ask = want - have < sizeof buf ? want - have : sizeof buf;
        n = recv(fd, buf, ask, 0);
        if (n > 0) {
            assert_memory_equal(buf, answer + have, (size_t)n);
            have += (size_t)n;
        } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
            *closed = 1;
        } else {
            assert_true(uv_hrtime() < end);
            pump(f);
        }
    }
    return have;
}

/* Runs the loop until the server has closed the connection, nothing more
 * having come; 0 if it stayed open for 10 s (real time). */
static int closed_by_server(struct nfx *f, int fd)
{
    uint64_t end = uv_hrtime() + 10000000000u;
    char byte;
    ssize_t n;

    while (uv_hrtime() < end) {
        n = recv(fd, &byte, 1, 0);
        if (n > 0)
            fail_msg("a byte past the answer");
        if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
            return 1;
        pump(f);
    }
    return 0;
}

/* A slow client (slow_client) sent `n` bytes made from `seed` (in
 * *answer, malloc'd) as admin_try answers a four-letter word: the
 * connection's reading paused, the answer queued whole.  Its descriptor. */
static int answered(struct nfx *f, size_t n, unsigned seed, uint8_t **answer,
                    struct conn **c)
{
    int fd;

    *answer = malloc(n);
    assert_non_null(*answer);
    fill(*answer, n, seed);
    fd = slow_client(f, c);
    (*c)->client.state = CONN_OPEN;
    conn_pause(*c);
    conn_send(*c, *answer, n);
    return fd;
}

/* A four-letter word's answer of 4 MB, the connection closed after it
 * (admin_try), to a client that reads 100 kB of it a second: it takes
 * some 40 s, more than the 10 s a closing connection is given, and the
 * client is reading all the while, so it gets the whole answer, then the
 * close.  The answer goes out as one write, done only with its last byte:
 * when the 10 s restarted only then, the connection was closed 10 s after
 * the answer began, with most of it unsent. */
static void closing_slow_reader_gets_everything(void **state)
{
    struct nfx *f = *state;
    uint8_t *answer;
    size_t have = 0;
    int closed = 0, seconds = 0;
    struct conn *c;
    int fd = answered(f, ANSWER, 3, &answer, &c);

    conn_close_after_flush(c);
    pump(f);
    assert_true(c->writing > 0); /* the rest waits in a write */

    while (have < ANSWER && !closed) {
        have = read_to(f, fd, answer, have,
                       have + PER_SECOND < ANSWER ? have + PER_SECOND : ANSWER,
                       &closed);
        tick(f, 1000);
        seconds++;
    }
    print_message("%zu of %u bytes read in %d s (virtual)%s\n", have,
                  (unsigned)ANSWER, seconds,
                  closed ? ", then the server closed the connection" : "");
    assert_false(closed);
    assert_int_equal(have, ANSWER);
    assert_true(seconds > 20);

    /* All of it taken: the connection closes. */
    assert_true(closed_by_server(f, fd));
    assert_true(tb_queue_empty(&f->s.conns));
    close(fd);
    conn_unlisten(&f->s);
    free(answer);
}

/* A four-letter word's answer larger than what a client may leave unread
 * (wchp, dump of millions of watches) is one write onto nothing unread:
 * it goes (it was dropped, the connection closed with nothing sent).
 * What comes while it is unread ends the connection, as for a client that
 * never reads its replies. */
static void large_answer_goes(void **state)
{
    struct nfx *f = *state;
    size_t n = PROC_UNREAD_MAX + (size_t)f->s.cfg->jute_maxbuffer + 4096;
    uint8_t *answer;
    int closed = 0;
    struct conn *c;
    int fd = answered(f, n, 5, &answer, &c);

    pump(f);
    assert_int_equal(f->s.conn_by_id.count, 1);
    assert_int_equal(read_to(f, fd, answer, 0, 65536, &closed), 65536);
    assert_false(closed);
    conn_send(c, answer, 16); /* more, onto 64 MiB unread */
    pump(f);
    assert_int_equal(f->s.conn_by_id.count, 0);
    close(fd);
    conn_unlisten(&f->s);
    free(answer);
}

/* A client reading a large answer steadily may be sent more once what it
 * has not taken is under what a client may leave unread (a watch's event
 * while it reads a large reply): the write in flight counted whole, with
 * what the client had read of it, and the connection was closed. */
static void reader_of_a_large_answer_gets_more(void **state)
{
    struct nfx *f = *state;
    size_t n = PROC_UNREAD_MAX + (1u << 20), have;
    uint8_t *answer;
    int closed = 0;
    struct conn *c;
    int fd = answered(f, n, 7, &answer, &c);

    pump(f);
    have = read_to(f, fd, answer, 0, 2u << 20, &closed);
    assert_int_equal(have, 2u << 20);
    conn_send(c, answer, 16); /* more, onto less than 64 MiB unread */
    pump(f);
    assert_int_equal(f->s.conn_by_id.count, 1);
    assert_int_equal(read_to(f, fd, answer, have, have + (1u << 20), &closed),
                     have + (1u << 20));
    assert_false(closed);
    conn_close(c);
    close(fd);
    conn_unlisten(&f->s);
    free(answer);
}

/* A four-letter word counts as a packet received, and its answer as none
 * sent, as ZooKeeper counts them (srvr's Received and Sent, mntr's
 * zk_packets_*): monitors polling mntr would see Sent grow by itself. */
static void fourlw_counted_as_received(void **state)
{
    struct nfx *f = *state;
    struct sockaddr_in addr = listen_plain(f);
    static const char refused[] =
        "ruok is not executed because it is not in the whitelist.\n";
    int fd = dial(&addr), closed = 0;

    assert_int_equal(send(fd, "ruok", 4, 0), 4); /* not in the default list */
    assert_int_equal(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK), 0);
    assert_int_equal(read_to(f, fd, (const uint8_t *)refused, 0,
                             sizeof refused - 1, &closed),
                     sizeof refused - 1);
    assert_true(closed_by_server(f, fd));
    assert_int_equal(f->s.packets_received, 1);
    assert_int_equal(f->s.packets_sent, 0);
    close(fd);
    conn_unlisten(&f->s);
}

/* crst resets a connection's last request too, as ZooKeeper's
 * resetStats: cons then shows lop=NA, no lcxid, lzxid -1, lresp 0. */
static void crst_resets_the_last_request(void **state)
{
    struct nfx *f = *state;
    struct fourlw_source src;
    struct conn *c;
    int fd = slow_client(f, &c);

    c->client.last_op = TB_OP_GETDATA;
    c->client.last_cxid = 7;
    c->client.last_zxid = 0x105;
    c->client.last_resp_ms = 1234;
    c->client.last_latency_ms = 3;
    c->received = c->sent = 2;
    admin_source(&f->s, &src);
    src.reset_conn_stats(src.data);
    /* What cons shows of them (admin/source.c's conn_info). */
    assert_string_equal(fourlw_op_name(c->client.last_op), "NA");
    assert_true(c->client.last_cxid < 0);
    assert_int_equal(c->client.last_zxid, 0);
    assert_int_equal(c->client.last_resp_ms + c->client.last_latency_ms, 0);
    assert_int_equal(c->received + c->sent, 0);
    conn_close_all(&f->s);
    pump(f);
    close(fd);
    conn_unlisten(&f->s);
}

/* dump's connections, as src->conn_buckets lists them. */
static char *conn_dump(struct nfx *f)
{
    struct fourlw_source src;
    struct fourlw_emit e;
    struct tb_wbuf out;

    admin_source(&f->s, &src);
    tb_wbuf_init(&out);
    fourlw_emit_init(&e, FOURLW_LIST_CNXN_EXPIRY, &out);
    src.conn_buckets(src.data, &e);
    fourlw_emit_finish(&e);
    tb_wbuf_put(&out, "", 1);
    return (char *)out.base;
}

/* dump lists the connections as ZooKeeper's NIO factory does: each due its
 * session's timeout (one without a session: 10 s) after the last bytes
 * read from it, in 10 s buckets, the earliest first. */
static void dump_lists_connections(void **state)
{
    struct nfx *f = *state;
    struct sockaddr_in addr = listen_plain(f);
    int a = dial(&addr), b = dial(&addr);
    struct conn *bare, *held;
    uint64_t end;
    char *t;

    accepted(f, 2);
    bare = TB_CONTAINER_OF(tb_queue_head(&f->s.conns), struct conn, link);
    held = TB_CONTAINER_OF(bare->link.next, struct conn, link);
    held->client.session_id = 0x1234;
    held->client.timeout_ms = 40000;
    held->client.state = CONN_OPEN;
    t = conn_dump(f);
    assert_non_null(strstr(t, "Connections Sets (2)/(2):\n1 expire at "));
    assert_true(strstr(t, "sessionId: 0x0\n") < strstr(t, "sessionId: 0x1234"));
    free(t);

    /* 60 s later the bare one is heard from (part of a frame): due 10 s
     * after that, past the other. */
    f->now += 60000;
    assert_int_equal(send(a, "\0\0", 2, 0), 2);
    end = uv_hrtime() + 10000000000u;
    while (bare->heard_ms != f->now && uv_hrtime() < end)
        pump(f);
    assert_int_equal(bare->heard_ms, f->now);
    t = conn_dump(f);
    assert_true(strstr(t, "sessionId: 0x0\n") > strstr(t, "sessionId: 0x1234"));
    free(t);
    conn_close_all(&f->s);
    pump(f);
    close(a);
    close(b);
    conn_unlisten(&f->s);
}

/* A connection that finds no memory waits in the kernel, and libuv polls
 * its listener no more until it accepts: the next tick accepts it.  The
 * server then goes on accepting (it accepted nothing more, for good). */
static void accept_again_after_no_memory(void **state)
{
    struct nfx *f = *state;
    struct sockaddr_in addr = listen_plain(f);
    uint64_t end = uv_hrtime() + 10000000000u;
    int fd, fd2;

    conn_callocs_failing = 1;
    fd = dial(&addr);
    while (conn_callocs_failing > 0) {
        assert_true(uv_hrtime() < end);
        pump(f);
    }
    pump(f);
    assert_int_equal(f->s.conn_by_id.count, 0);
    tick(f, 1000);
    accepted(f, 1);
    fd2 = dial(&addr);
    accepted(f, 2);
    conn_close_all(&f->s);
    pump(f);
    close(fd);
    close(fd2);
    conn_unlisten(&f->s);
}

/* The 10 s still hold for a closing connection whose client reads nothing
 * of what is left: it is closed then, not kept for good. */
static void closing_non_reader_is_closed(void **state)
{
    struct nfx *f = *state;
    uint8_t *answer;
    int seconds;
    struct conn *c;
    int fd = answered(f, ANSWER, 4, &answer, &c);

    conn_close_after_flush(c);
    pump(f);
    assert_true(c->writing > 0);
    for (seconds = 0; seconds < 30 && !tb_queue_empty(&f->s.conns); seconds++)
        tick(f, 1000);
    print_message("closed after %d s (virtual)\n", seconds);
    assert_true(tb_queue_empty(&f->s.conns));
    assert_true(seconds >= 10 && seconds < 20);
    close(fd);
    conn_unlisten(&f->s);
    free(answer);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(tls_large_flush_leaves_small_bios,
                                        tls_setup, tls_teardown),
        cmocka_unit_test_setup_teardown(tls_no_session_tickets, tls_setup,
                                        tls_teardown),
        cmocka_unit_test_setup_teardown(closing_slow_reader_gets_everything,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(accept_again_after_no_memory, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(reader_of_a_large_answer_gets_more,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(large_answer_goes, setup, teardown),
        cmocka_unit_test_setup_teardown(fourlw_counted_as_received, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(crst_resets_the_last_request, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(dump_lists_connections, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(closing_non_reader_is_closed, setup,
                                        teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
