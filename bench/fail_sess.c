/* tbfail's session: one ZooKeeper session over one blocking socket, on
 * the project's codec (src/proto), with no client library in between, so
 * no library's reconnect delay is measured as the servers'.  Every call is
 * bounded by a deadline; a connection that fails is dropped and the
 * session (id, password, last zxid) kept to be taken up again. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tbfail.h"

#define MAX_FRAME (4 * 1024 * 1024)

void tf_sess_init(struct tf_sess *s, int32_t timeout_ms)
{
    memset(s, 0, sizeof(*s));
    s->fd = -1;
    s->timeout_ms = timeout_ms;
    s->xid = 1;
}

void tf_sess_drop(struct tf_sess *s)
{
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
    s->in_len = s->consumed = 0;
}

int tf_remaining_ms(uint64_t deadline)
{
    uint64_t now = bn_now_ns();

    if (now >= deadline)
        return 0;
    return (int)((deadline - now + 999999) / 1000000);
}

int tf_send_all(int fd, const uint8_t *p, size_t n, uint64_t deadline)
{
    while (n > 0) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k > 0) {
            p += k;
            n -= (size_t)k;
            continue;
        }
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            struct pollfd pf = {fd, POLLOUT, 0};
            if (poll(&pf, 1, tf_remaining_ms(deadline)) <= 0)
                return TB_EOPTIMEOUT;
            continue;
        }
        return TB_ECONNECTIONLOSS;
    }
    return 0;
}

/* The next frame's payload (valid until the next call), or TB_EOPTIMEOUT
 * when none came by `deadline` (0 ms left: only what is already there), or
 * TB_ECONNECTIONLOSS. */
static int read_frame(struct tf_sess *s, uint64_t deadline,
                      struct tb_str *payload)
{
    if (s->consumed > 0) {
        memmove(s->in, s->in + s->consumed, s->in_len - s->consumed);
        s->in_len -= s->consumed;
        s->consumed = 0;
    }
    for (;;) {
        size_t used;
        int rc = tb_frame_split(s->in, s->in_len, MAX_FRAME, payload, &used);
        struct pollfd pf = {s->fd, POLLIN, 0};
        ssize_t k;

        if (rc == 0) {
            s->consumed = used;
            return 0;
        }
        if (rc != TB_EAGAIN)
            return TB_ECONNECTIONLOSS;
        if (s->fd < 0)
            return TB_ECONNECTIONLOSS;
        rc = poll(&pf, 1, tf_remaining_ms(deadline));
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc == 0)
            return TB_EOPTIMEOUT;
        if (s->in_cap - s->in_len < 65536) {
            size_t cap = s->in_cap ? s->in_cap * 2 : 131072;
            uint8_t *b = realloc(s->in, cap);
            if (b == NULL)
                return TB_ENOMEM;
            s->in = b;
            s->in_cap = cap;
        }
        k = recv(s->fd, s->in + s->in_len, s->in_cap - s->in_len, 0);
        if (k < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (k <= 0)
            return TB_ECONNECTIONLOSS;
        s->in_len += (size_t)k;
    }
}

/* Non-blocking, no delay (tbfail.h). */
int tf_connect(struct tf_sess *s, const struct tf_srv *v, uint64_t deadline)
{
    int one = 1, err = 0;
    socklen_t el = sizeof(err);

    s->fd =
        socket(v->ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s->fd < 0)
        return TB_ESYSTEM;
    (void)setsockopt(s->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (connect(s->fd, (const struct sockaddr *)&v->ss, v->len) != 0) {
        struct pollfd pf = {s->fd, POLLOUT, 0};
        if (errno != EINPROGRESS ||
            poll(&pf, 1, tf_remaining_ms(deadline)) <= 0 ||
            getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0 ||
            err != 0) {
            tf_sess_drop(s);
            return err == ECONNREFUSED ? TB_ECONNECTIONLOSS : TB_EOPTIMEOUT;
        }
    }
    return 0;
}

/* Opens a connection to `v` and makes (or takes up again) the session.
 * 0, TB_ESESSIONEXPIRED (the server says the session is gone; the session
 * is forgotten, so the next open makes a new one), or another error. */
int tf_sess_open(struct tf_sess *s, const struct tf_srv *v, uint64_t deadline)
{
    static const uint8_t zeros[16];
    struct tb_connect_req req = {
        .protocol_version = 0,
        .last_zxid = s->last_zxid,
        .timeout = s->timeout_ms,
        .session_id = s->id,
        .has_readonly = 1,
        .readonly = 0,
    };
    struct tb_connect_resp resp;
    struct tb_wbuf w;
    struct tb_str payload;
    struct tb_rd r;
    size_t start;
    int rc;

    tf_sess_drop(s);
    req.passwd = s->id ? (struct tb_str){(const char *)s->passwd, s->passwd_len}
                       : (struct tb_str){(const char *)zeros, sizeof(zeros)};
    if ((rc = tf_connect(s, v, deadline)) != 0)
        return rc;
    tb_wbuf_init(&w);
    start = tb_frame_begin(&w);
    tb_connect_req_encode(&w, &req);
    tb_frame_end(&w, start);
    rc = tf_send_all(s->fd, w.base, w.len, deadline);
    tb_wbuf_free(&w);
    if (rc == 0)
        rc = read_frame(s, deadline, &payload);
    if (rc != 0) {
        tf_sess_drop(s);
        return rc;
    }
    r = tb_rd_make(payload.ptr, payload.len);
    if (tb_connect_resp_decode(&r, &resp) != 0) {
        tf_sess_drop(s);
        return TB_EMARSHALLING;
    }
    if (resp.timeout <= 0) {
        tf_sess_drop(s);
        s->id = 0;
        s->passwd_len = 0;
        return TB_ESESSIONEXPIRED;
    }
    s->id = resp.session_id;
    s->passwd_len = resp.passwd.len < sizeof(s->passwd) ? resp.passwd.len
                                                        : sizeof(s->passwd);
    memcpy(s->passwd, resp.passwd.ptr, s->passwd_len);
    return 0;
}

/* Sends request `op` with the body in `body` (no frame, no header): 0 once
 * it is sent, and the xid in *xid_out. */
int tf_sess_send(struct tf_sess *s, int32_t op, const struct tb_wbuf *body,
                 uint64_t deadline, int32_t *xid_out)
{
    struct tb_request_header h = {s->xid++, op};
    struct tb_wbuf w;
    size_t start;
    int rc;

    if (s->fd < 0)
        return TB_ECONNECTIONLOSS;
    tb_wbuf_init(&w);
    start = tb_frame_begin(&w);
    tb_request_header_encode(&w, &h);
    if (body->len > 0)
        tb_wbuf_put(&w, body->base, body->len);
    tb_frame_end(&w, start);
    rc = tf_send_all(s->fd, w.base, w.len, deadline);
    tb_wbuf_free(&w);
    *xid_out = h.xid;
    return rc;
}

/* Reads frames until the reply to `xid`: its err, and *rd on its body. */
int tf_sess_reply(struct tf_sess *s, int32_t xid, uint64_t deadline,
                  struct tb_rd *rd)
{
    for (;;) {
        struct tb_str payload;
        struct tb_reply_header h;
        int rc = read_frame(s, deadline, &payload);

        if (rc != 0)
            return rc;
        *rd = tb_rd_make(payload.ptr, payload.len);
        if (tb_reply_header_decode(rd, &h) != 0)
            return TB_EMARSHALLING;
        if (h.zxid > s->last_zxid)
            s->last_zxid = h.zxid;
        if (h.xid == xid)
            return h.err;
    }
}

int tf_sess_call(struct tf_sess *s, int32_t op, const struct tb_wbuf *body,
                 uint64_t deadline, struct tb_rd *rd)
{
    int32_t xid;
    int rc = tf_sess_send(s, op, body, deadline, &xid);

    return rc != 0 ? rc : tf_sess_reply(s, xid, deadline, rd);
}

void tf_sess_close(struct tf_sess *s, uint64_t deadline)
{
    struct tb_wbuf b;
    struct tb_rd rd;

    if (s->fd >= 0) {
        tb_wbuf_init(&b);
        (void)tf_sess_call(s, TB_OP_CLOSESESSION, &b, deadline, &rd);
        tb_wbuf_free(&b);
    }
    tf_sess_drop(s);
    free(s->in);
    s->in = NULL;
    s->in_cap = 0;
}
