/* One ZooKeeper session over one non-blocking socket, driven by the
 * benchmark loop: connect, handshake, requests with xid matching, pings,
 * watch notifications, closeSession.
 *
 * Replies on one connection come back in request order, so pending
 * requests sit in a FIFO ring and every reply must match its head; a
 * mismatch means the server broke ordering and the connection is dropped
 * with TB_EAPI so the scenario reports it.  Requests are appended to an
 * output buffer and written once per loop turn, which pipelines naturally.
 * Input is read into one shared scratch buffer; only a partial frame is
 * copied into the connection, so ten thousand idle sessions cost little.
 *
 * With --tls-port every connection makes a TLS handshake (BN_TLS) before
 * its ConnectRequest, with OpenSSL straight on the non-blocking socket. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tbbench.h"

#define SCRATCH_SIZE (256 * 1024)
#define MAX_FRAME    (16 * 1024 * 1024)

static uint8_t scratch[SCRATCH_SIZE];
static SSL_CTX *tls_ctx; /* NULL: plain TCP */

static void conn_io(struct bn_io *io, uint32_t events);
static void ping_fire(struct bn_timer *t);

static struct bn_conn *conn_of_io(struct bn_io *io)
{
    return TB_CONTAINER_OF(io, struct bn_conn, io);
}

static void flush_one(struct tb_queue *link);

void bn_conn_init(struct bn_conn *c, struct bn_loop *l,
                  const struct bn_conn_ops *ops, void *data)
{
    memset(c, 0, sizeof(*c));
    c->io.fd = -1;
    c->io.cb = conn_io;
    c->loop = l;
    c->ops = ops;
    c->data = data;
    c->state = BN_CLOSED;
    c->next_xid = 1;
    tb_wbuf_init(&c->out);
    tb_queue_init(&c->flush_link);
    bn_timer_init(&c->ping, ping_fire, c);
    bn_loop_set_flush(l, flush_one);
}

int bn_tls_init(const char *ca, const char *cert, const char *key)
{
    if ((tls_ctx = SSL_CTX_new(TLS_client_method())) == NULL ||
        (ca != NULL && SSL_CTX_load_verify_locations(tls_ctx, ca, NULL) != 1) ||
        (cert != NULL &&
         (SSL_CTX_use_certificate_chain_file(tls_ctx, cert) != 1 ||
          SSL_CTX_use_PrivateKey_file(tls_ctx, key ? key : cert,
                                      SSL_FILETYPE_PEM) != 1))) {
        fprintf(stderr, "tbbench: TLS: %s\n",
                ERR_error_string(ERR_get_error(), NULL));
        return -1;
    }
    SSL_CTX_set_verify(tls_ctx, SSL_VERIFY_PEER, NULL);
    SSL_CTX_set_read_ahead(tls_ctx, 1); /* a record in one read, not two */
    SSL_CTX_set_mode(tls_ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
                                  SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    signal(SIGPIPE, SIG_IGN); /* OpenSSL's socket BIO write()s */
    return 0;
}

void bn_conn_free(struct bn_conn *c)
{
    if (c->state != BN_CLOSED)
        bn_conn_abort(c, TB_ECLOSING);
    tb_wbuf_free(&c->out);
    free(c->in);
    free(c->pend);
    c->in = NULL;
    c->pend = NULL;
}

static void schedule_flush(struct bn_conn *c)
{
    if (!c->out_queued && c->io.fd >= 0) {
        c->out_queued = 1;
        bn_loop_defer(c->loop, &c->flush_link);
    }
}

/* Completes every pending request with `err`, as a closed session would. */
static void fail_pending(struct bn_conn *c, int32_t err)
{
    while (c->pend_head != c->pend_tail) {
        struct bn_pending p = c->pend[c->pend_head++ & (c->pend_cap - 1)];
        if (p.cb != NULL)
            p.cb(c, err, NULL, p.arg, p.sent_ns);
    }
}

void bn_conn_abort(struct bn_conn *c, int err)
{
    if (c->state == BN_CLOSED)
        return;
    int settling = c->state == BN_CONNECTING || c->state == BN_TLS ||
                   c->state == BN_HANDSHAKE;

    c->state = BN_CLOSED;
    c->err = err;
    bn_timer_stop(c->loop, &c->ping);
    if (c->out_queued) {
        tb_queue_remove(&c->flush_link);
        c->out_queued = 0;
    }
    if (c->io.fd >= 0) {
        bn_io_del(c->loop, &c->io);
        close(c->io.fd);
        c->io.fd = -1;
    }
    SSL_free(c->ssl);
    c->ssl = NULL;
    c->out.len = 0;
    c->out_off = 0;
    c->in_len = 0;
    fail_pending(c, err ? err : TB_ECONNECTIONLOSS);
    if (settling && c->settle != NULL)
        c->settle(c, 0);
    if (c->ops->on_closed != NULL)
        c->ops->on_closed(c);
}

static void send_connect_request(struct bn_conn *c)
{
    static const char zeros[16];
    struct tb_connect_req req = {
        .protocol_version = 0,
        .last_zxid = 0,
        .timeout = c->timeout_ms,
        .session_id = 0,
        .passwd = {zeros, sizeof(zeros)},
        .has_readonly = 1,
        .readonly = 0,
    };
    size_t start = tb_frame_begin(&c->out);

    tb_connect_req_encode(&c->out, &req);
    tb_frame_end(&c->out, start);
    c->state = BN_HANDSHAKE;
    schedule_flush(c);
}

int bn_conn_start(struct bn_conn *c, const struct sockaddr *addr,
                  unsigned addrlen, int32_t timeout_ms)
{
    int fd, one = 1, rc;

    fd = socket(addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    c->io.fd = fd;
    c->timeout_ms = timeout_ms;
    c->connect_ns = bn_now_ns();
    c->err = 0;
    rc = connect(fd, addr, addrlen);
    if (rc != 0 && errno != EINPROGRESS) {
        rc = -errno;
        close(fd);
        c->io.fd = -1;
        return rc;
    }
    c->state = BN_CONNECTING;
    rc = bn_io_add(c->loop, &c->io, EPOLLIN | EPOLLOUT);
    if (rc != 0) {
        close(fd);
        c->io.fd = -1;
        c->state = BN_CLOSED;
        return rc;
    }
    return 0;
}

/* ---- requests ---- */

static void pend_push(struct bn_conn *c, int32_t xid, int32_t op,
                      bn_reply_cb cb, uint64_t arg)
{
    if (c->pend_tail - c->pend_head == c->pend_cap) {
        uint32_t cap = c->pend_cap ? c->pend_cap * 2 : 16, i;
        struct bn_pending *p = malloc(cap * sizeof(*p));
        if (p == NULL)
            abort();
        for (i = 0; i < c->pend_tail - c->pend_head; i++)
            p[i] = c->pend[(c->pend_head + i) & (c->pend_cap - 1)];
        free(c->pend);
        c->pend = p;
        c->pend_tail = i;
        c->pend_head = 0;
        c->pend_cap = cap;
    }
    c->pend[c->pend_tail++ & (c->pend_cap - 1)] =
        (struct bn_pending){xid, op, cb, arg, bn_now_ns()};
}

/* Starts a request frame; returns the frame start for req_end. */
static size_t req_begin(struct bn_conn *c, int32_t xid, int32_t op)
{
    struct tb_request_header h = {xid, op};
    size_t start = tb_frame_begin(&c->out);

    tb_request_header_encode(&c->out, &h);
    return start;
}

static void req_end(struct bn_conn *c, size_t start, int32_t xid, int32_t op,
                    bn_reply_cb cb, uint64_t arg)
{
    tb_frame_end(&c->out, start);
    if (c->out.oom)
        abort();
    pend_push(c, xid, op, cb, arg);
    schedule_flush(c);
}

/* A request on a closed session fails at once, like a real client's. */
static int usable(struct bn_conn *c, bn_reply_cb cb, uint64_t arg)
{
    if (c->state == BN_READY)
        return 1;
    if (cb != NULL)
        cb(c, TB_ECONNECTIONLOSS, NULL, arg, bn_now_ns());
    return 0;
}

static int32_t take_xid(struct bn_conn *c)
{
    c->n_requests++;
    if (c->next_xid == INT32_MAX)
        c->next_xid = 1;
    return c->next_xid++;
}

void bn_create(struct bn_conn *c, struct tb_str path, struct tb_str data,
               int32_t flags, bn_reply_cb cb, uint64_t arg)
{
    struct tb_create_req r = {path, data, tb_acl_open_unsafe, flags};
    int32_t xid;
    size_t s;

    if (!usable(c, cb, arg))
        return;
    xid = take_xid(c);
    s = req_begin(c, xid, TB_OP_CREATE);
    tb_create_req_encode(&c->out, &r);
    req_end(c, s, xid, TB_OP_CREATE, cb, arg);
}

void bn_delete(struct bn_conn *c, struct tb_str path, int32_t version,
               bn_reply_cb cb, uint64_t arg)
{
    struct tb_delete_req r = {path, version};
    int32_t xid;
    size_t s;

    if (!usable(c, cb, arg))
        return;
    xid = take_xid(c);
    s = req_begin(c, xid, TB_OP_DELETE);
    tb_delete_req_encode(&c->out, &r);
    req_end(c, s, xid, TB_OP_DELETE, cb, arg);
}

static void path_watch(struct bn_conn *c, int32_t op, struct tb_str path,
                       int watch, bn_reply_cb cb, uint64_t arg)
{
    struct tb_path_watch_req r = {path, (uint8_t)(watch != 0)};
    int32_t xid;
    size_t s;

    if (!usable(c, cb, arg))
        return;
    xid = take_xid(c);
    s = req_begin(c, xid, op);
    tb_path_watch_req_encode(&c->out, &r);
    req_end(c, s, xid, op, cb, arg);
}

void bn_exists(struct bn_conn *c, struct tb_str path, int watch, bn_reply_cb cb,
               uint64_t arg)
{
    path_watch(c, TB_OP_EXISTS, path, watch, cb, arg);
}

void bn_get_data(struct bn_conn *c, struct tb_str path, int watch,
                 bn_reply_cb cb, uint64_t arg)
{
    path_watch(c, TB_OP_GETDATA, path, watch, cb, arg);
}

void bn_get_children(struct bn_conn *c, struct tb_str path, int watch,
                     bn_reply_cb cb, uint64_t arg)
{
    path_watch(c, TB_OP_GETCHILDREN, path, watch, cb, arg);
}

void bn_set_data(struct bn_conn *c, struct tb_str path, struct tb_str data,
                 int32_t version, bn_reply_cb cb, uint64_t arg)
{
    struct tb_set_data_req r = {path, data, version};
    int32_t xid;
    size_t s;

    if (!usable(c, cb, arg))
        return;
    xid = take_xid(c);
    s = req_begin(c, xid, TB_OP_SETDATA);
    tb_set_data_req_encode(&c->out, &r);
    req_end(c, s, xid, TB_OP_SETDATA, cb, arg);
}

static void close_reply(struct bn_conn *c, int32_t err, struct tb_rd *body,
                        uint64_t arg, uint64_t sent_ns)
{
    (void)err;
    (void)body;
    (void)arg;
    (void)sent_ns;
    bn_conn_abort(c, 0);
}

void bn_conn_close(struct bn_conn *c)
{
    size_t s;

    if (c->state != BN_READY) {
        bn_conn_abort(c, 0);
        return;
    }
    s = req_begin(c, c->next_xid++, TB_OP_CLOSESESSION);
    req_end(c, s, c->next_xid - 1, TB_OP_CLOSESESSION, close_reply, 0);
    c->state = BN_CLOSING;
    bn_timer_stop(c->loop, &c->ping);
}

static void ping_fire(struct bn_timer *t)
{
    struct bn_conn *c = t->data;
    struct tb_request_header h = {TB_XID_PING, TB_OP_PING};
    size_t s;

    if (c->state != BN_READY)
        return;
    s = tb_frame_begin(&c->out);
    tb_request_header_encode(&c->out, &h);
    tb_frame_end(&c->out, s);
    schedule_flush(c);
    bn_timer_start(c->loop, &c->ping, (uint64_t)c->timeout_ms * 1000000u / 3);
}

/* ---- output ---- */

static void try_write(struct bn_conn *c)
{
    while (c->out_off < c->out.len) {
        ssize_t n;

        if (c->ssl != NULL) {
            n = SSL_write(c->ssl, c->out.base + c->out_off,
                          (int)(c->out.len - c->out_off));
            if (n <= 0 && SSL_get_error(c->ssl, (int)n) == SSL_ERROR_WANT_WRITE)
                break;
            if (n <= 0) {
                bn_conn_abort(c, TB_ECONNECTIONLOSS);
                return;
            }
            c->out_off += (size_t)n;
            continue;
        }
        n = send(c->io.fd, c->out.base + c->out_off, c->out.len - c->out_off,
                 MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            bn_conn_abort(c, TB_ECONNECTIONLOSS);
            return;
        }
        c->out_off += (size_t)n;
    }
    if (c->out_off == c->out.len) {
        c->out.len = 0;
        c->out_off = 0;
        (void)bn_io_mod(c->loop, &c->io, EPOLLIN);
    } else {
        (void)bn_io_mod(c->loop, &c->io, EPOLLIN | EPOLLOUT);
    }
}

static void flush_one(struct tb_queue *link)
{
    struct bn_conn *c = TB_CONTAINER_OF(link, struct bn_conn, flush_link);

    c->out_queued = 0;
    if (c->io.fd >= 0 && c->state != BN_CONNECTING && c->state != BN_TLS)
        try_write(c);
}

/* ---- input ---- */

static int on_handshake(struct bn_conn *c, struct tb_str payload)
{
    struct tb_rd r = tb_rd_make(payload.ptr, payload.len);
    struct tb_connect_resp resp;

    if (tb_connect_resp_decode(&r, &resp) != 0)
        return TB_EMARSHALLING;
    if (resp.timeout <= 0)
        return TB_ESESSIONEXPIRED;
    c->session_id = resp.session_id;
    c->timeout_ms = resp.timeout;
    c->state = BN_READY;
    c->ready_ns = bn_now_ns();
    bn_timer_start(c->loop, &c->ping, (uint64_t)c->timeout_ms * 1000000u / 3);
    if (c->settle != NULL)
        c->settle(c, 1);
    if (c->ops->on_ready != NULL)
        c->ops->on_ready(c);
    return 0;
}

static int on_event_frame(struct bn_conn *c, struct tb_rd *r)
{
    struct tb_watcher_event ev;

    if (tb_watcher_event_decode(r, &ev) != 0)
        return TB_EMARSHALLING;
    c->n_events++;
    if (c->ops->on_event != NULL)
        c->ops->on_event(c, ev.type, ev.path);
    return 0;
}

static int on_frame(struct bn_conn *c, struct tb_str payload)
{
    struct tb_rd r = tb_rd_make(payload.ptr, payload.len);
    struct tb_reply_header h;
    struct bn_pending p;

    if (c->state == BN_HANDSHAKE)
        return on_handshake(c, payload);
    if (tb_reply_header_decode(&r, &h) != 0)
        return TB_EMARSHALLING;
    if (h.xid == TB_XID_NOTIFICATION)
        return on_event_frame(c, &r);
    if (h.xid == TB_XID_PING || h.xid == TB_XID_AUTH)
        return 0;
    if (c->pend_head == c->pend_tail)
        return TB_EAPI;
    p = c->pend[c->pend_head & (c->pend_cap - 1)];
    if (p.xid != h.xid)
        return TB_EAPI;
    c->pend_head++;
    if (p.cb != NULL)
        p.cb(c, h.err, &r, p.arg, p.sent_ns);
    return 0;
}

/* Splits and handles every whole frame in [p, p+n); returns the bytes
 * consumed, or a negative error. */
static long parse(struct bn_conn *c, const uint8_t *p, size_t n)
{
    size_t off = 0;

    while (c->state != BN_CLOSED) {
        struct tb_str payload;
        size_t used;
        int rc = tb_frame_split(p + off, n - off, MAX_FRAME, &payload, &used);
        if (rc == TB_EAGAIN)
            break;
        if (rc != 0)
            return rc;
        rc = on_frame(c, payload);
        if (rc != 0)
            return rc;
        off += used;
    }
    return (long)off;
}

static int keep_rest(struct bn_conn *c, const uint8_t *p, size_t n)
{
    if (n > c->in_cap) {
        size_t cap = c->in_cap ? c->in_cap : 4096;
        uint8_t *b;
        while (cap < n)
            cap *= 2;
        b = malloc(cap);
        if (b == NULL)
            return TB_ENOMEM;
        free(c->in);
        c->in = b;
        c->in_cap = cap;
    }
    if (n > 0)
        memmove(c->in, p, n);
    c->in_len = n;
    return 0;
}

/* With nothing buffered, read straight into the scratch buffer; with a
 * partial frame buffered, read after it, growing to fit the frame.
 * Returns whether bytes came in. */
static int on_readable(struct bn_conn *c)
{
    uint8_t *buf;
    size_t have = c->in_len, room;
    ssize_t n;
    long used;
    int rc;

    if (have == 0) {
        buf = scratch;
        room = sizeof(scratch);
    } else {
        size_t want = have + SCRATCH_SIZE;
        if (want > c->in_cap) {
            uint8_t *b = realloc(c->in, want);
            if (b == NULL) {
                bn_conn_abort(c, TB_ENOMEM);
                return 0;
            }
            c->in = b;
            c->in_cap = want;
        }
        buf = c->in;
        room = c->in_cap - have;
    }
    if (c->ssl != NULL) {
        n = SSL_read(c->ssl, buf + have, (int)room);
        if (n <= 0) {
            int e = SSL_get_error(c->ssl, (int)n);
            if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
                return 0;
            n = e == SSL_ERROR_ZERO_RETURN ? 0 : -1;
            errno = EPIPE;
        }
    } else {
        n = recv(c->io.fd, buf + have, room, 0);
    }
    if (n < 0) {
        if (errno != EAGAIN && errno != EINTR && errno != EWOULDBLOCK)
            bn_conn_abort(c, TB_ECONNECTIONLOSS);
        return 0;
    }
    if (n == 0) {
        bn_conn_abort(c, c->state == BN_CLOSING ? 0 : TB_ECONNECTIONLOSS);
        return 0;
    }
    have += (size_t)n;
    used = parse(c, buf, have);
    if (c->state == BN_CLOSED)
        return 1;
    if (used < 0) {
        bn_conn_abort(c, (int)used);
        return 1;
    }
    rc = keep_rest(c, buf + used, have - (size_t)used);
    if (rc != 0)
        bn_conn_abort(c, rc);
    return 1;
}

/* One step of the TLS handshake; its end sends the ConnectRequest. */
static void tls_step(struct bn_conn *c)
{
    int rc = SSL_do_handshake(c->ssl), e;

    if (rc == 1) {
        (void)bn_io_mod(c->loop, &c->io, EPOLLIN);
        send_connect_request(c);
        return;
    }
    e = SSL_get_error(c->ssl, rc);
    if (e == SSL_ERROR_WANT_READ)
        (void)bn_io_mod(c->loop, &c->io, EPOLLIN);
    else if (e == SSL_ERROR_WANT_WRITE)
        (void)bn_io_mod(c->loop, &c->io, EPOLLIN | EPOLLOUT);
    else
        bn_conn_abort(c, TB_ECONNECTIONLOSS);
}

static void on_connected(struct bn_conn *c)
{
    int err = 0;
    socklen_t len = sizeof(err);

    if (getsockopt(c->io.fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 ||
        err != 0) {
        bn_conn_abort(c, TB_ECONNECTIONLOSS);
        return;
    }
    if (tls_ctx == NULL) {
        send_connect_request(c);
        return;
    }
    if ((c->ssl = SSL_new(tls_ctx)) == NULL ||
        SSL_set_fd(c->ssl, c->io.fd) != 1) {
        bn_conn_abort(c, TB_ENOMEM);
        return;
    }
    SSL_set_connect_state(c->ssl);
    c->state = BN_TLS;
    tls_step(c);
}

static void conn_io(struct bn_io *io, uint32_t events)
{
    struct bn_conn *c = conn_of_io(io);

    if (c->state == BN_CLOSED)
        return;
    if (c->state == BN_CONNECTING) {
        if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))
            on_connected(c);
        return;
    }
    if (c->state == BN_TLS) {
        tls_step(c);
        return;
    }
    if (events & (EPOLLIN | EPOLLERR | EPOLLHUP))
        (void)on_readable(c);
    /* With read-ahead one SSL_read can take several records off the
     * socket and return one: the rest wait inside the SSL, where epoll
     * cannot see them, until a read finds no whole record. */
    while (c->ssl != NULL && c->state != BN_CLOSED && SSL_has_pending(c->ssl) &&
           on_readable(c))
        ;
    if (c->state != BN_CLOSED && (events & EPOLLOUT))
        try_write(c);
}
