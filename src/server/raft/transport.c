/* raft_uv's transports: none for a lone voter, TCP for an ensemble.
 *
 * A lone voter never sends a message, and a listening raft port that
 * nobody needs is one more thing to secure and one more port that can be
 * taken: its transport listens nowhere and connects to no one.
 *
 * An ensemble's is raft_uv_tcp's with one addition.  raft_uv only writes
 * to the connections it opens, so it learns that the far end has gone (its
 * process restarted) from a write that fails; the write before that one,
 * taken by the kernel and answered with a reset, is lost with no error.
 * Followers write to each other only in an election, so the first message
 * to a member restarted since was a vote or its grant, and the election
 * then waited for the next one, an election timeout later.  Here each
 * connection raft opens is also watched, through a duplicate of its socket:
 * when the far end closes it, its sending half is shut and raft is made to
 * send a message that is answered by nobody (a result of term 0) and fails
 * at once, so that raft connects again before it has anything to say.
 *
 * raft_uv owns t->data (it points at its own state); we use only t->impl. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server/raft/internal.h"

static int local_init(struct raft_uv_transport *t, raft_id id,
                      const char *address)
{
    (void)t;
    (void)id;
    (void)address;
    return 0;
}

static int local_listen(struct raft_uv_transport *t, raft_uv_accept_cb cb)
{
    (void)t;
    (void)cb;
    return 0;
}

static int local_connect(struct raft_uv_transport *t,
                         struct raft_uv_connect *req, raft_id id,
                         const char *address, raft_uv_connect_cb cb)
{
    (void)req;
    (void)id;
    (void)cb;
    snprintf(t->errmsg, sizeof t->errmsg,
             "no transport to %s: this log has a single voter", address);
    return RAFT_NOCONNECTION;
}

/* Nothing to wait for: raft_uv copes with the callback firing at once (it
 * only marks the transport closed and waits for its own handles). */
static void local_close(struct raft_uv_transport *t,
                        raft_uv_transport_close_cb cb)
{
    if (cb != NULL)
        cb(t);
}

void replog__local_transport_init(struct raft_uv_transport *t)
{
    memset(t, 0, sizeof *t);
    t->init = local_init;
    t->listen = local_listen;
    t->connect = local_connect;
    t->close = local_close;
}

/* ---- an ensemble's: raft_uv_tcp's, its connections watched ---- */

struct tcp_conn {
    uv_poll_t poll;
    uv_timer_t wait; /* the kick of one closed as soon as opened */
    int open;        /* handles not yet closed */
    int fd;          /* a duplicate of raft's socket: the handles are ours */
    raft_id id;
    char *address;
    uint64_t since; /* uv_now when opened */
    struct replog *l;
    struct tcp_conn *next;
};

static void conn_closed(uv_handle_t *h)
{
    struct tcp_conn *c = h->data;

    if (--c->open > 0)
        return;
    close(c->fd);
    free(c->address);
    free(c);
}

static void conn_drop(struct tcp_conn *c)
{
    struct tcp_conn **p = &c->l->tcp_conns;

    while (*p != c)
        p = &(*p)->next;
    *p = c->next;
    uv_close((uv_handle_t *)&c->poll, conn_closed);
    uv_close((uv_handle_t *)&c->wait, conn_closed);
}

static void kicked(struct raft_io_send *req, int status)
{
    (void)status;
    free(req);
}

static void kick(uv_timer_t *t)
{
    struct tcp_conn *c = t->data;
    struct replog *l = c->l;
    struct raft_message m = {0};
    struct raft_io_send *req;

    if (!l->closing && (req = calloc(1, sizeof *req)) != NULL) {
        m.type = RAFT_IO_APPEND_ENTRIES_RESULT;
        m.server_id = c->id;
        m.server_address = c->address;
        if (l->uv.send(&l->uv, req, &m, kicked) != 0)
            free(req);
    }
    conn_drop(c);
}

static void conn_cb(uv_poll_t *h, int status, int events)
{
    struct tcp_conn *c = h->data;
    uint64_t age = uv_now(c->l->loop) - c->since;
    char b[64];
    ssize_t n;

    (void)events;
    /* Nothing comes the other way but the end of the connection. */
    n = recv(c->fd, b, sizeof b, MSG_DONTWAIT);
    if (status == 0 && (n > 0 || (n < 0 && errno == EAGAIN)))
        return;
    uv_poll_stop(h);
    shutdown(c->fd, SHUT_WR);
    /* One the far end closed as soon as it was opened (a process on its
     * way out took it) is kicked a heartbeat after it was opened: one
     * that is closed every time would otherwise have raft connect again at
     * once, and again. */
    if (age >= c->l->heartbeat_ms ||
        uv_timer_start(&c->wait, kick, c->l->heartbeat_ms - age, 0) != 0)
        kick(&c->wait);
}

static void conn_watch(struct replog *l, raft_id id, const char *address,
                       uv_stream_t *stream)
{
    struct tcp_conn *c = calloc(1, sizeof *c);
    uv_os_fd_t fd;

    if (c == NULL || uv_fileno((uv_handle_t *)stream, &fd) != 0 ||
        (c->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0) {
        free(c);
        return; /* raft's own way, then: it finds out on a write */
    }
    if ((c->address = strdup(address)) == NULL ||
        uv_poll_init(l->loop, &c->poll, c->fd) != 0) {
        close(c->fd);
        free(c->address);
        free(c);
        return;
    }
    uv_timer_init(l->loop, &c->wait);
    c->open = 2;
    c->id = id;
    c->since = uv_now(l->loop);
    c->l = l;
    c->poll.data = c;
    c->wait.data = c;
    c->next = l->tcp_conns;
    l->tcp_conns = c;
    if (uv_poll_start(&c->poll, UV_READABLE | UV_DISCONNECT, conn_cb) != 0)
        conn_drop(c);
}

/* A connect on its way, for raft. */
struct dial {
    struct raft_uv_connect req; /* to raft_uv_tcp */
    struct raft_uv_connect *raft_req;
    raft_uv_connect_cb cb;
    struct replog *l;
    raft_id id;
    char *address;
};

static void dialed(struct raft_uv_connect *req, uv_stream_t *stream,
                   int status)
{
    struct dial *d = req->data;

    if (status == 0)
        conn_watch(d->l, d->id, d->address, stream);
    d->cb(d->raft_req, stream, status);
    free(d->address);
    free(d);
}

static int tcp_init(struct raft_uv_transport *t, raft_id id,
                    const char *address)
{
    struct replog *l = t->impl;
    int rv;

    if ((rv = l->tcp.init(&l->tcp, id, address)) != 0)
        memcpy(t->errmsg, l->tcp.errmsg, sizeof t->errmsg);
    return rv;
}

static int tcp_listen(struct raft_uv_transport *t, raft_uv_accept_cb cb)
{
    struct replog *l = t->impl;
    int rv;

    /* raft_uv_tcp hands raft its own transport with a connection taken,
     * and raft finds itself in its data (set after init). */
    l->tcp.data = t->data;
    rv = l->tcp.listen(&l->tcp, cb);

    if (rv != 0)
        memcpy(t->errmsg, l->tcp.errmsg, sizeof t->errmsg);
    return rv;
}

static int tcp_connect(struct raft_uv_transport *t,
                       struct raft_uv_connect *req, raft_id id,
                       const char *address, raft_uv_connect_cb cb)
{
    struct replog *l = t->impl;
    struct dial *d = calloc(1, sizeof *d);
    int rv;

    if (d == NULL || (d->address = strdup(address)) == NULL) {
        free(d);
        return RAFT_NOMEM;
    }
    d->req.data = d;
    d->raft_req = req;
    d->cb = cb;
    d->l = l;
    d->id = id;
    if ((rv = l->tcp.connect(&l->tcp, &d->req, id, address, dialed)) != 0) {
        memcpy(t->errmsg, l->tcp.errmsg, sizeof t->errmsg);
        free(d->address);
        free(d);
    }
    return rv;
}

static void tcp_closed(struct raft_uv_transport *tcp)
{
    struct replog *l =
        (struct replog *)((char *)tcp - offsetof(struct replog, tcp));

    if (l->transport_closed != NULL)
        l->transport_closed(&l->transport);
}

static void tcp_close(struct raft_uv_transport *t,
                      raft_uv_transport_close_cb cb)
{
    struct replog *l = t->impl;

    while (l->tcp_conns != NULL)
        conn_drop(l->tcp_conns);
    l->transport_closed = cb;
    l->tcp.close(&l->tcp, tcp_closed);
}

int replog__tcp_transport_init(struct replog *l)
{
    struct raft_uv_transport *t = &l->transport;
    int rv = raft_uv_tcp_init(&l->tcp, l->loop);

    if (rv != 0)
        return rv;
    memset(t, 0, sizeof *t);
    t->impl = l;
    t->init = tcp_init;
    t->listen = tcp_listen;
    t->connect = tcp_connect;
    t->close = tcp_close;
    return 0;
}
