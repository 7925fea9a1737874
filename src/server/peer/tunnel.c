/* TLS between members over a socketpair (tunnel.h says why).  The TLS is
 * OpenSSL over memory BIOs, as on the client port (net/tls.c): what the
 * member sends goes into the SSL and the plaintext it yields is written to
 * the socketpair; what the user writes there is encrypted and written to
 * the member.  Either side's end ends the other: the member's close or a
 * failed record closes the socketpair (the user reads EOF); the user's
 * close resets the connection, so that nothing it wrote is delivered
 * after it gave the connection up.  One side's writes waiting beyond
 * QUEUE_MAX stop reading the other side until they drain. */
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/common.h"
#include "server/config/config.h"
#include "server/logging/log.h"
#include "server/net/tls_ctx.h"
#include "server/peer/tunnel.h"

#define HANDSHAKE_MS 5000       /* a connection not secured by then ends */
#define QUEUE_MAX    (4u << 20) /* bytes waiting to be written, at most */
#define CHUNK        65536
/* The first byte the accepting side sends, once it took the certificate:
 * with TLS 1.3 the dialing side's handshake ends before the other side
 * has checked its certificate, and only this says that it passed.  The
 * host name check comes after the handshake (it may wait for a reverse
 * lookup), so a certificate it refuses gets NAK instead, then the end. */
#define ACK   0x01
#define NAK   0x02
#define RATES 8 /* places whose refusals are each rated on their own */
/* The first byte of a TLS connection, its record's type: a handshake.
 * raft's handshake starts 0x01 (its protocol, little-endian), a peer
 * link's frame 0x00 (its length, big-endian). */
#define TLS_HANDSHAKE_RECORD 0x16

struct tunnel_ctx {
    uv_loop_t *loop;
    SSL_CTX *ssl;
    int verify_host; /* ssl.quorum.hostnameVerification */
    int unify;       /* portUnification: plain connections are taken too */
    /* sslQuorumReloadCertFiles: the stores' files watched, and read again
     * with cfg's keys when one changes (tunnel_ctx_watch). */
    struct tls_watch stores;
    const struct tb_config *cfg;
    /* A line a second at most for the refusals of one place: a port of
     * ours, or a member dialed; the oldest place gives way to a new one. */
    struct {
        char where[64];
        uint64_t used_ms;
        struct tb_log_rate rate;
    } refusals[RATES];
    /* Every tunnel not yet freed: at exit the server closes the handles
     * left (main.c) without callbacks, and tunnel_ctx_free frees those. */
    struct tb_queue live;
};

/* A reverse lookup of the address a connection came from, on libuv's
 * thread pool.  It may outlive its tunnel: a tunnel closed meanwhile sets
 * t to NULL, and the callback, which always comes (with UV_ECANCELED if
 * canceled), frees it. */
struct lookup {
    uv_getnameinfo_t req;
    struct tunnel *t;
};

struct tunnel {
    struct tunnel_ctx *x;
    struct tb_queue link;  /* in x->live */
    struct lookup *lookup; /* accepting: the dialer's host name, if asked */
    struct sockaddr_storage from; /* accepting: the dialer's address */
    char addr[INET6_ADDRSTRLEN];  /* ... as text */
    SSL *ssl;
    BIO *net_in;      /* ciphertext from the member, for the SSL */
    BIO *net_out;     /* ciphertext from the SSL, for the member */
    uv_tcp_t tcp;     /* to the member */
    uv_pipe_t pipe;   /* our end of the socketpair, once secured */
    uv_timer_t timer; /* the handshake's deadline */
    uv_shutdown_t shut;
    int handles; /* not yet closed */
    int dialing;
    int secured;    /* the handshake ended (and ACK came), or the
                       connection is plain: pipe is open */
    int plain;      /* accepting with portUnification, and its first byte
                       began no TLS record: relayed as it is */
    int sniffed;    /* accepting: its first bytes came */
    int handshaken; /* SSL_do_handshake is done */
    int failing;    /* closing once the alert is out */
    int closing;
    int tcp_paused, pipe_paused;   /* reading stopped: the other side full */
    void (*cb)(void *arg, int fd); /* until called or canceled */
    void *arg;
    char peer[320]; /* for messages */
    char where[64]; /* whose refusals it counts in (tunnel_ctx.refusals) */
    char buf[CHUNK];
};

struct wreq {
    uv_write_t req;
    struct tunnel *t;
    char data[];
};

static void handle_closed(uv_handle_t *h)
{
    struct tunnel *t = h->data;

    if (--t->handles > 0)
        return;
    tb_queue_remove(&t->link);
    SSL_free(t->ssl); /* and its BIOs */
    free(t);
}

/* The end, with a reset when the user gave the connection up. */
static void tunnel_close(struct tunnel *t, int reset)
{
    void (*cb)(void *, int) = t->cb;

    if (t->closing)
        return;
    t->closing = 1;
    /* Closed with the loop's other handles at exit (main.c): a write or a
     * shutdown they cancel ends here, and tunnel_ctx_free frees it. */
    if (uv_is_closing((uv_handle_t *)&t->tcp))
        return;
    t->cb = NULL;
    if (t->lookup != NULL) { /* its callback frees it */
        t->lookup->t = NULL;
        uv_cancel((uv_req_t *)&t->lookup->req);
        t->lookup = NULL;
    }
    if (cb != NULL)
        cb(t->arg, -1);
    uv_close((uv_handle_t *)&t->timer, handle_closed);
    uv_close((uv_handle_t *)&t->pipe, handle_closed);
    if (!reset || uv_tcp_close_reset(&t->tcp, handle_closed) != 0)
        uv_close((uv_handle_t *)&t->tcp, handle_closed);
}

static void timed_out(uv_timer_t *h);

static void shut_done(uv_shutdown_t *req, int status)
{
    (void)status;
    tunnel_close(req->data, 0);
}

/* Closes once what is queued for the member (an alert that says why) has
 * gone out; the handshake's timer still bounds the wait. */
static void tunnel_fail(struct tunnel *t)
{
    if (t->closing || t->failing)
        return;
    t->failing = 1;
    uv_read_stop((uv_stream_t *)&t->tcp);
    if (t->secured)
        uv_read_stop((uv_stream_t *)&t->pipe);
    uv_timer_start(&t->timer, timed_out, HANDSHAKE_MS, 0);
    t->shut.data = t;
    if (uv_shutdown(&t->shut, (uv_stream_t *)&t->tcp, shut_done) != 0)
        tunnel_close(t, 0);
}

static struct tb_log_rate *rate_of(struct tunnel_ctx *x, const char *where,
                                   uint64_t now)
{
    unsigned i, old = 0;

    for (i = 0; i < RATES; i++) {
        if (strcmp(x->refusals[i].where, where) == 0)
            break;
        if (x->refusals[i].used_ms < x->refusals[old].used_ms)
            old = i;
    }
    if (i == RATES) {
        i = old;
        memset(&x->refusals[i], 0, sizeof x->refusals[i]);
        snprintf(x->refusals[i].where, sizeof x->refusals[i].where, "%s",
                 where);
    }
    x->refusals[i].used_ms = now;
    return &x->refusals[i].rate;
}

/* Why a connection was refused or failed, on this side: OpenSSL's reason
 * (an alert from the member says what it found wrong) and the
 * verification's. */
static void refused(struct tunnel *t, const char *what)
{
    long v = SSL_get_verify_result(t->ssl);
    char why[256];

    uint64_t now = uv_now(t->x->loop);
    struct tb_log_rate *r = rate_of(t->x, t->where, now);

    tls_why(why, sizeof why);
    if (!tb_log_due(r, now))
        return;
    tb_log_rated(r, TB_LOG_WARN, "peer TLS: %s %s: %s%s%s",
                 t->dialing ? "connecting to" : "a connection from", t->peer,
                 what != NULL ? what : why, v != X509_V_OK ? "; " : "",
                 v != X509_V_OK ? X509_verify_cert_error_string(v) : "");
}

/* ---- writing ---- */

static void resume(struct tunnel *t);

static void written(uv_write_t *req, int status)
{
    struct wreq *w = TB_CONTAINER_OF(req, struct wreq, req);
    struct tunnel *t = w->t;

    free(w);
    if (t->closing)
        return;
    if (status != 0)
        tunnel_close(t, 0);
    else
        resume(t);
}

static int put(struct tunnel *t, uv_stream_t *s, const void *p, size_t n)
{
    struct wreq *w = malloc(sizeof *w + n);
    uv_buf_t b;

    if (w == NULL)
        return TB_ENOMEM;
    w->t = t;
    memcpy(w->data, p, n);
    b = uv_buf_init(w->data, (unsigned)n);
    if (uv_write(&w->req, s, &b, 1, written) != 0) {
        free(w);
        return TB_EIO;
    }
    return 0;
}

/* What the SSL has for the member, written. */
static int flush(struct tunnel *t)
{
    size_t n = BIO_ctrl_pending(t->net_out);
    struct wreq *w;
    uv_buf_t b;
    BIO *nb;

    if (n == 0)
        return 0;
    if ((w = malloc(sizeof *w + n)) == NULL)
        return TB_ENOMEM;
    w->t = t;
    if (BIO_read(t->net_out, w->data, (int)n) != (int)n) {
        free(w);
        return TB_EIO;
    }
    if ((nb = tls_bio_renewed(t->net_out)) != NULL) { /* a snapshot's */
        SSL_set0_wbio(t->ssl, nb);
        t->net_out = nb;
    }
    b = uv_buf_init(w->data, (unsigned)n);
    if (uv_write(&w->req, (uv_stream_t *)&t->tcp, &b, 1, written) != 0) {
        free(w);
        return TB_EIO;
    }
    return 0;
}

/* ---- reading ---- */

static void alloc_cb(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
    struct tunnel *t = h->data;

    (void)hint;
    *buf = uv_buf_init(t->buf, sizeof t->buf);
}

static void pipe_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf);

static void pause_full(struct tunnel *t)
{
    if (!t->pipe_paused && t->tcp.write_queue_size > QUEUE_MAX) {
        uv_read_stop((uv_stream_t *)&t->pipe);
        t->pipe_paused = 1;
    }
    if (!t->tcp_paused && t->pipe.write_queue_size > QUEUE_MAX) {
        uv_read_stop((uv_stream_t *)&t->tcp);
        t->tcp_paused = 1;
    }
}

static void tcp_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf);

static void resume(struct tunnel *t)
{
    if (t->pipe_paused && t->tcp.write_queue_size <= QUEUE_MAX / 2 &&
        uv_read_start((uv_stream_t *)&t->pipe, alloc_cb, pipe_read) == 0)
        t->pipe_paused = 0;
    if (t->tcp_paused && t->pipe.write_queue_size <= QUEUE_MAX / 2 &&
        uv_read_start((uv_stream_t *)&t->tcp, alloc_cb, tcp_read) == 0)
        t->tcp_paused = 0;
}

static void secured(struct tunnel *t);

/* The plaintext the SSL has, to the user; first, when dialing, the ACK
 * that makes the connection the user's. */
static void deliver(struct tunnel *t)
{
    char chunk[16384];
    int k = 1, e;
    BIO *nb;

    ERR_clear_error(); /* SSL_get_error reads the queue: ours alone */
    if (!t->secured && (k = SSL_read(t->ssl, chunk, 1)) == 1) {
        if (chunk[0] == NAK) {
            refused(t, "the member refused our certificate: it names "
                       "neither our address nor our address's host name");
            tunnel_fail(t);
            return;
        }
        if (chunk[0] != ACK) {
            refused(t, "the member's first byte is not its ACK");
            tunnel_fail(t);
            return;
        }
        secured(t);
        if (t->closing)
            return;
        ERR_clear_error(); /* again: secured() ran the user's callback */
    }
    while (k > 0 && (k = SSL_read(t->ssl, chunk, sizeof chunk)) > 0)
        if (put(t, (uv_stream_t *)&t->pipe, chunk, (size_t)k) != 0) {
            tunnel_close(t, 0);
            return;
        }
    e = SSL_get_error(t->ssl, k);
    if ((nb = tls_bio_renewed(t->net_in)) != NULL) {
        BIO_set_mem_eof_return(nb, -1); /* as tunnel_new's */
        SSL_set0_rbio(t->ssl, nb);
        t->net_in = nb;
    }
    if (flush(t) != 0) {
        tunnel_close(t, 0);
        return;
    }
    if (e == SSL_ERROR_WANT_READ) {
        pause_full(t);
        return;
    }
    if (e != SSL_ERROR_ZERO_RETURN) /* not the member's close_notify */
        refused(t, NULL);
    tunnel_fail(t);
}

static void pipe_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    struct tunnel *t = s->data;

    if (n == 0)
        return;
    if (n < 0) { /* the user closed its end */
        tunnel_close(t, 1);
        return;
    }
    if (t->plain) {
        if (put(t, (uv_stream_t *)&t->tcp, buf->base, (size_t)n) != 0)
            tunnel_close(t, 1);
        else
            pause_full(t);
        return;
    }
    if (SSL_write(t->ssl, buf->base, (int)n) != (int)n || flush(t) != 0) {
        tunnel_close(t, 1);
        return;
    }
    pause_full(t);
}

/* Handshake done: the socketpair, and its other end to the user. */
static void secured(struct tunnel *t)
{
    void (*cb)(void *, int) = t->cb;
    int sv[2];

    uv_timer_stop(&t->timer);
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        tunnel_close(t, 0);
        return;
    }
    if (uv_pipe_open(&t->pipe, sv[0]) != 0) {
        close(sv[0]);
        close(sv[1]);
        tunnel_close(t, 0);
        return;
    }
    t->secured = 1;
    uv_read_start((uv_stream_t *)&t->pipe, alloc_cb, pipe_read);
    t->cb = NULL;
    cb(t->arg, sv[1]);
}

/* Accepting: the certificate taken, ACK and the plaintext's way open. */
static int admit(struct tunnel *t)
{
    if (SSL_write(t->ssl, (const char[]){ACK}, 1) != 1 || flush(t) != 0)
        return TB_EIO;
    secured(t);
    return 0;
}

/* Accepting, the name check failed (logged): NAK, then the end. */
static void deny(struct tunnel *t)
{
    if (SSL_write(t->ssl, (const char[]){NAK}, 1) != 1 || flush(t) != 0) {
        tunnel_close(t, 0);
        return;
    }
    tunnel_fail(t);
}

static void looked_up(uv_getnameinfo_t *req, int status, const char *host,
                      const char *service)
{
    struct lookup *l = TB_CONTAINER_OF(req, struct lookup, req);
    struct tunnel *t = l->t;
    char why[INET6_ADDRSTRLEN + NI_MAXHOST + 160];

    (void)service;
    if (t != NULL)
        t->lookup = NULL;
    /* Gone, or its handles closed by the server's exit (main.c). */
    if (t == NULL || t->closing || uv_is_closing((uv_handle_t *)&t->tcp)) {
        free(l);
        return;
    }
    if (status == 0 && X509_check_host(SSL_get0_peer_certificate(t->ssl), host,
                                       0, 0, NULL) == 1) {
        free(l);
        if (admit(t) != 0) {
            tunnel_close(t, 0);
            return;
        }
        if (t->closing)
            return;
        if (uv_read_start((uv_stream_t *)&t->tcp, alloc_cb, tcp_read) != 0)
            tunnel_close(t, 0);
        else
            deliver(t); /* what came with the handshake's end */
        return;
    }
    if (status == 0)
        snprintf(why, sizeof why,
                 "its certificate names neither the address %s nor %s, "
                 "the host name it reverse-resolves to",
                 t->addr, host);
    else
        snprintf(why, sizeof why,
                 "its certificate does not name the address %s, and that "
                 "address has no host name to try (reverse lookup: %s)",
                 t->addr, uv_strerror(status));
    free(l);
    refused(t, why);
    deny(t);
}

/* Accepting, the chain verified: with hostnameVerification the
 * certificate must also name the address the connection came from or,
 * failing that, the host name that address reverse-resolves to, as
 * ZooKeeper's quorum does (ZKTrustManager).  The lookup runs on the
 * thread pool, the connection's reading stopped until it answers. */
static int accepted(struct tunnel *t)
{
    struct lookup *l;

    if (!t->x->verify_host ||
        X509_check_ip_asc(SSL_get0_peer_certificate(t->ssl), t->addr, 0) == 1)
        return admit(t);
    if ((l = malloc(sizeof *l)) != NULL)
        l->t = t;
    if (l == NULL ||
        uv_getnameinfo(t->x->loop, &l->req, looked_up,
                       (const struct sockaddr *)&t->from, NI_NAMEREQD) != 0) {
        free(l);
        refused(t, "its certificate does not name its address, and the "
                   "address's host name could not be looked up");
        return TB_EIO;
    }
    t->lookup = l;
    uv_read_stop((uv_stream_t *)&t->tcp);
    return 0;
}

/* 0 while it goes on or once done, non-zero when it failed (logged). */
static int handshake(struct tunnel *t)
{
    int r, e;

    ERR_clear_error(); /* SSL_get_error reads the queue: ours alone */
    r = SSL_do_handshake(t->ssl);
    e = SSL_get_error(t->ssl, r);

    if (flush(t) != 0)
        return TB_EIO;
    if (r == 1) {
        t->handshaken = 1;
        return t->dialing ? 0 : accepted(t);
    }
    if (e == SSL_ERROR_WANT_READ)
        return 0;
    refused(t, NULL);
    return TB_EIO;
}

static void tcp_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    struct tunnel *t = s->data;

    if (n == 0)
        return;
    if (n < 0) {
        if (!t->secured && n != UV_EOF)
            refused(t, uv_strerror((int)n));
        else if (!t->secured)
            refused(t, "closed during the handshake");
        tunnel_close(t, 0);
        return;
    }
    if (!t->dialing && !t->sniffed) {
        t->sniffed = 1;
        if (t->x->unify && (uint8_t)buf->base[0] != TLS_HANDSHAKE_RECORD) {
            t->plain = 1;
            secured(t);
        }
    }
    if (t->plain) {
        if (t->closing ||
            put(t, (uv_stream_t *)&t->pipe, buf->base, (size_t)n) != 0)
            tunnel_close(t, 0);
        else
            pause_full(t);
        return;
    }
    if (BIO_write(t->net_in, buf->base, (int)n) != (int)n) {
        tunnel_close(t, 0);
        return;
    }
    if (!t->handshaken) {
        if (handshake(t) != 0) {
            tunnel_fail(t);
            return;
        }
        /* Accepting, and the host name is being looked up: what came
         * with the handshake's end waits in net_in. */
        if (!t->handshaken || t->closing || t->lookup != NULL)
            return;
    }
    deliver(t);
}

static void timed_out(uv_timer_t *h)
{
    struct tunnel *t = h->data;

    if (t->lookup != NULL)
        refused(t, "its address's host name not found within 5 s "
                   "(reverse lookup)");
    else if (!t->secured && !t->failing)
        refused(t, "no TLS handshake within 5 s");
    tunnel_close(t, 0);
}

/* ---- the interface ---- */

/* Dialing: the member's certificate must name its configured host (the
 * accepting side checks once the handshake is done: accepted()). */
static int expect_host(struct tunnel *t, const char *host)
{
    X509_VERIFY_PARAM *p = SSL_get0_param(t->ssl);
    unsigned char a[16];

    if (inet_pton(AF_INET, host, a) == 1 || inet_pton(AF_INET6, host, a) == 1)
        return X509_VERIFY_PARAM_set1_ip_asc(p, host) == 1 ? 0 : TB_EINVAL;
    return SSL_set1_host(t->ssl, host) == 1 ? 0 : TB_EINVAL;
}

/* t->peer and t->where; dialing, the host the member's certificate must
 * name (in host), accepting, the address the connection came from
 * (t->from, t->addr). */
static int name_peer(struct tunnel *t, int fd, const char *peer, char *host,
                     size_t n)
{
    struct sockaddr_storage a;
    socklen_t alen = sizeof a;
    const char *colon;
    int port = 0;

    if (t->dialing) {
        snprintf(t->peer, sizeof t->peer, "%s", peer);
        snprintf(t->where, sizeof t->where, "%s", peer);
        colon = strrchr(peer, ':');
        snprintf(host, n, "%.*s",
                 (int)(colon != NULL ? colon - peer : (long)strlen(peer)),
                 peer);
        if (host[0] == '[') { /* "[v6]" */
            memmove(host, host + 1, strlen(host));
            host[strcspn(host, "]")] = '\0';
        }
        return 0;
    }
    if (getpeername(fd, (struct sockaddr *)&a, &alen) != 0)
        return TB_EIO;
    t->from = a;
    if (a.ss_family == AF_INET) {
        inet_ntop(AF_INET, &((struct sockaddr_in *)&a)->sin_addr, t->addr,
                  sizeof t->addr);
        port = ntohs(((struct sockaddr_in *)&a)->sin_port);
    } else {
        inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&a)->sin6_addr, t->addr,
                  sizeof t->addr);
        port = ntohs(((struct sockaddr_in6 *)&a)->sin6_port);
    }
    snprintf(t->peer, sizeof t->peer, "%s:%d", t->addr, port);
    alen = sizeof a;
    if (getsockname(fd, (struct sockaddr *)&a, &alen) == 0) {
        port = ntohs(a.ss_family == AF_INET
                         ? ((struct sockaddr_in *)&a)->sin_port
                         : ((struct sockaddr_in6 *)&a)->sin6_port);
        snprintf(t->peer + strlen(t->peer), sizeof t->peer - strlen(t->peer),
                 " (to port %d)", port);
        snprintf(t->where, sizeof t->where, ":%d", port);
    }
    return 0;
}

static struct tunnel *tunnel_new(struct tunnel_ctx *x, int fd, int dialing,
                                 const char *peer)
{
    struct tunnel *t = calloc(1, sizeof *t);
    char host[INET6_ADDRSTRLEN + 64];

    if (t == NULL)
        return NULL;
    t->x = x;
    t->dialing = dialing;
    if ((t->ssl = SSL_new(x->ssl)) == NULL ||
        (t->net_in = BIO_new(BIO_s_mem())) == NULL ||
        (t->net_out = BIO_new(BIO_s_mem())) == NULL) {
        BIO_free(t->net_in);
        SSL_free(t->ssl);
        free(t);
        return NULL;
    }
    /* An empty memory BIO asks to be retried rather than reporting EOF. */
    BIO_set_mem_eof_return(t->net_in, -1);
    SSL_set_bio(t->ssl, t->net_in, t->net_out);
    if (dialing)
        SSL_set_connect_state(t->ssl);
    else
        SSL_set_accept_state(t->ssl);
    if (name_peer(t, fd, peer, host, sizeof host) != 0 ||
        (dialing && x->verify_host && expect_host(t, host) != 0)) {
        SSL_free(t->ssl);
        free(t);
        return NULL;
    }
    return t;
}

void *tunnel_start(void *ctx, int fd, int dialing, const char *peer,
                   void (*cb)(void *arg, int fd), void *arg)
{
    struct tunnel_ctx *x = ctx;
    struct tunnel *t = tunnel_new(x, fd, dialing, peer);

    if (t == NULL) {
        close(fd);
        return NULL;
    }
    tb_queue_insert_tail(&x->live, &t->link);
    uv_tcp_init(x->loop, &t->tcp);
    uv_pipe_init(x->loop, &t->pipe, 0);
    uv_timer_init(x->loop, &t->timer);
    t->tcp.data = t->pipe.data = t->timer.data = t;
    t->handles = 3;
    if (uv_tcp_open(&t->tcp, fd) != 0) {
        close(fd);
        tunnel_close(t, 0);
        return NULL;
    }
    uv_timer_start(&t->timer, timed_out, HANDSHAKE_MS, 0);
    /* The client speaks first: its hello goes now. */
    if (uv_read_start((uv_stream_t *)&t->tcp, alloc_cb, tcp_read) != 0 ||
        (dialing && handshake(t) != 0)) {
        tunnel_close(t, 0);
        return NULL;
    }
    t->cb = cb;
    t->arg = arg;
    return t;
}

void tunnel_cancel(void *handle)
{
    struct tunnel *t = handle;

    t->cb = NULL;
    tunnel_close(t, 1);
}

/* The members' context: both sides present a certificate (no certificate,
 * no connection), and a reconnecting member makes a full handshake:
 * nothing is kept between connections, no tickets follow a handshake. */
static SSL_CTX *quorum_ssl(const struct tls_keys *k)
{
    SSL_CTX *ssl = tls_ctx_new(TLS_method(), k);

    if (ssl == NULL)
        return NULL;
    SSL_CTX_set_verify(ssl, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
                       NULL);
    SSL_CTX_set_session_cache_mode(ssl, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_num_tickets(ssl, 0); /* TLS 1.3's; TLS 1.2's: */
    SSL_CTX_set_options(ssl, SSL_OP_NO_TICKET);
    return ssl;
}

struct tunnel_ctx *tunnel_ctx_new(uv_loop_t *loop, const struct tls_keys *k,
                                  int verify_host, int unify)
{
    struct tunnel_ctx *x = calloc(1, sizeof *x);

    if (x == NULL || (x->ssl = quorum_ssl(k)) == NULL) {
        free(x);
        return NULL;
    }
    x->loop = loop;
    x->verify_host = verify_host;
    x->unify = unify;
    tb_queue_init(&x->live);
    return x;
}

static struct tls_keys keys_of(const struct tb_config *cfg)
{
    return (struct tls_keys){
        "ssl.quorum",
        cfg->quorum_tls.key_store,
        cfg->quorum_tls.key_password,
        cfg->quorum_tls.key_password_path,
        cfg->quorum_tls.key_type,
        cfg->quorum_tls.trust_store,
        cfg->quorum_tls.trust_password,
        cfg->quorum_tls.trust_password_path,
        cfg->quorum_tls.trust_type,
        cfg->quorum_tls.protocol,
        cfg->quorum_tls.protocols,
        cfg->quorum_tls.ciphersuites,
    };
}

struct tunnel_ctx *tunnel_ctx_from(uv_loop_t *loop, const struct tb_config *cfg)
{
    const struct tls_keys k = keys_of(cfg);

    return tunnel_ctx_new(loop, &k, cfg->quorum_tls.hostname_verification,
                          cfg->quorum_tls.port_unification);
}

int tunnel_ctx_reload(struct tunnel_ctx *x, const struct tb_config *cfg)
{
    const struct tls_keys k = keys_of(cfg);
    SSL_CTX *ssl = quorum_ssl(&k);

    if (ssl == NULL) {
        tb_log(TB_LOG_WARN, "peer TLS: the certificates in use stay");
        return TB_EINVAL;
    }
    SSL_CTX_free(x->ssl); /* each tunnel's SSL holds a reference */
    x->ssl = ssl;
    tb_log(TB_LOG_INFO,
           "peer TLS: the quorum's key and trust stores were read again");
    return 0;
}

static void stores_changed(void *x)
{
    struct tunnel_ctx *c = x;

    tunnel_ctx_reload(c, c->cfg);
}

void tunnel_ctx_watch(struct tunnel_ctx *x, const struct tb_config *cfg)
{
    const struct tls_keys k = keys_of(cfg);

    x->cfg = cfg;
    tls_stores_watch(x->loop, &x->stores, &k, stores_changed, x);
}

void tunnel_ctx_unwatch(struct tunnel_ctx *x)
{
    if (x != NULL && x->cfg != NULL)
        tls_stores_unwatch(&x->stores);
}

void tunnel_ctx_free(struct tunnel_ctx *x)
{
    struct tunnel *t;

    if (x == NULL)
        return;
    while (!tb_queue_empty(&x->live)) {
        t = TB_CONTAINER_OF(tb_queue_head(&x->live), struct tunnel, link);
        tb_queue_remove(&t->link);
        if (t->lookup != NULL) /* not answered: left to its callback */
            t->lookup->t = NULL;
        SSL_free(t->ssl);
        free(t);
    }
    SSL_CTX_free(x->ssl);
    free(x);
}
