/* An ensemble's raft transport: raft_uv_tcp's listener, connections of our
 * own to the other members.
 *
 * raft_uv only writes to the connections it opens, and would find out
 * that one is dead only from a write that fails:
 *   - the far end's process restarted: the write before the one that fails
 *     is taken by the kernel, answered with a reset, and lost with no
 *     error.  Followers write to each other only in elections, so that was
 *     a vote or its grant, and the election waited for the next round;
 *   - the far end cut off: the writes wait in the kernel, sent again ever
 *     less often (up to two minutes apart), and so does a connect; when the
 *     cut heals, the member is reached only at the next of those.
 * So each connection is made here with a user timeout (TCP_USER_TIMEOUT,
 * twice the election timeout): data or a connect unanswered that long ends
 * it, and raft connects again, anew.  And each is watched, through a
 * duplicate of its socket, for its far end closing it: then its sending
 * half is shut and raft is made to send a result of term 0, which fails at
 * once (and would be ignored if it went anywhere), so that raft connects
 * again before it has something to say.
 *
 * Each is made with TCP_NODELAY (libraft sets no option).  raft writes its
 * messages on the connections it opens and the far end only reads them, so
 * every ACK coming back is a delayed one: with Nagle's algorithm a message
 * written while the one before is unacknowledged waited for it, 40 ms on
 * Linux (the ten-lock handoff's p99 in bench/ensemble.sh was that).  The
 * connections taken are only read, past a TLS handshake.
 *
 * A connection starts with raft_uv_tcp's handshake, which its listener
 * reads (little-endian):
 *
 *   OFFSET  SIZE  FIELD
 *        0     8  protocol: 1
 *        8     8  the server id of the one connecting
 *       16     8  n: the size of the address field, a multiple of 8
 *       24     n  its raft address, NUL-terminated, zero-padded
 *
 * With peer TLS (replog_config.secure) each connection is secured first,
 * both ways: a connect's socket goes to secure.start once connected, and
 * the handshake above is written on the plaintext stream it gives back; a
 * listener of ours (raft_uv_tcp's is then not used) accepts, has each
 * connection secured, reads the handshake from the plaintext and hands
 * raft that stream.  The plaintext is a socketpair's end: raft reads and
 * writes it, and the watch below watches it, as they would the socket.
 *
 * raft_uv owns t->data (its own state); t->impl is ours. */
#include <errno.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server/replog/internal.h"

#define HANDSHAKE_PROTOCOL 1

struct conn;
struct dial;
struct incoming;

struct tcp {
    struct replog *l;
    struct raft_uv_transport *outer; /* raft's view of this */
    struct raft_uv_transport inner;  /* raft_uv_tcp's: it listens */
    raft_id id;                      /* ours, for the handshake */
    char *address;
    char *bind;                      /* the address listened on, an IP's */
    struct replog_secure secure;     /* peer TLS, if start is set */
    uv_tcp_t listener;               /* with peer TLS, instead of inner's */
    uv_timer_t again;                /* ... its accept again, after no memory */
    int listening;                   /* ... open (both) */
    raft_uv_accept_cb accept_cb;     /* raft's, for what it accepts */
    struct conn *conns; /* the connections raft has, watched */
    struct dial *dials; /* the connects on their way */
    struct incoming *incoming; /* accepted, not yet handed to raft */
    unsigned open;      /* conns, dials, incoming and handles not closed */
    int inner_open;     /* raft_uv_tcp not yet closed */
    raft_uv_transport_close_cb closed;
};

/* ---- a connection raft has, watched for its far end closing ---- */

struct conn {
    uv_poll_t poll;
    uv_timer_t wait; /* the kick of one closed as soon as opened */
    int handles;     /* not yet closed */
    int fd;          /* a duplicate of raft's socket: the handles are ours */
    raft_id id;
    char *address;
    uint64_t since; /* uv_now when opened */
    struct tcp *t;
    struct conn *next;
};

static void maybe_closed(struct tcp *t)
{
    if (t->closed != NULL && t->open == 0 && !t->inner_open)
        t->closed(t->outer);
}

static void conn_closed(uv_handle_t *h)
{
    struct conn *c = h->data;
    struct tcp *t = c->t;

    if (--c->handles > 0)
        return;
    close(c->fd);
    free(c->address);
    free(c);
    t->open--;
    maybe_closed(t);
}

static void conn_drop(struct conn *c)
{
    struct conn **p = &c->t->conns;

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

static void kick(uv_timer_t *h)
{
    struct conn *c = h->data;
    struct replog *l = c->t->l;
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
    struct conn *c = h->data;
    struct replog *l = c->t->l;
    uint64_t age = uv_now(l->loop) - c->since;
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
    if (age >= l->heartbeat_ms ||
        uv_timer_start(&c->wait, kick, l->heartbeat_ms - age, 0) != 0)
        kick(&c->wait);
}

static void conn_watch(struct tcp *t, raft_id id, const char *address,
                       uv_stream_t *stream)
{
    struct conn *c = calloc(1, sizeof *c);
    uv_os_fd_t fd;

    if (c == NULL || uv_fileno((uv_handle_t *)stream, &fd) != 0 ||
        (c->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0) {
        free(c);
        return; /* raft's own way, then: it finds out on a write */
    }
    if ((c->address = strdup(address)) == NULL ||
        uv_poll_init(t->l->loop, &c->poll, c->fd) != 0) {
        close(c->fd);
        free(c->address);
        free(c);
        return;
    }
    uv_timer_init(t->l->loop, &c->wait);
    c->handles = 2;
    c->id = id;
    c->since = uv_now(t->l->loop);
    c->t = t;
    c->poll.data = c;
    c->wait.data = c;
    c->next = t->conns;
    t->conns = c;
    t->open++;
    if (uv_poll_start(&c->poll, UV_READABLE | UV_DISCONNECT, conn_cb) != 0)
        conn_drop(c);
}

/* ---- a connect on its way, for raft ---- */

struct dial {
    struct raft_uv_connect *req; /* raft's */
    raft_id id;
    char *address;
    struct tcp *t;
    uv_getaddrinfo_t resolve;
    uv_tcp_t *tcp; /* raft_malloc'd: raft frees it once it closes it */
    uv_stream_t *stream; /* what raft gets: tcp, or TLS's plaintext */
    void *secured;       /* TLS on its way (secure.start's), or NULL */
    uv_connect_t connect;
    uv_write_t write;
    uv_buf_t hello;
    int status; /* RAFT_CANCELED once the transport closes */
    struct dial *next;
};

static void dial_done(struct dial *d, uv_stream_t *stream, int status)
{
    struct tcp *t = d->t;
    struct dial **p = &t->dials;

    while (*p != d)
        p = &(*p)->next;
    *p = d->next;
    d->req->cb(d->req, stream, status);
    free(d->hello.base);
    free(d->address);
    free(d);
    t->open--;
    maybe_closed(t);
}

static void dial_closed(uv_handle_t *h)
{
    struct dial *d = h->data;

    raft_free(h);
    dial_done(d, NULL, d->status);
}

static void dial_fail(struct dial *d, int status)
{
    if (d->status == 0)
        d->status = status;
    if (d->secured != NULL) {
        d->t->secure.cancel(d->secured);
        d->secured = NULL;
        dial_done(d, NULL, d->status);
    } else {
        uv_close((uv_handle_t *)d->stream, dial_closed);
    }
}

/* A handle of ours given up, its socket still open in a copy. */
static void handle_freed(uv_handle_t *h)
{
    struct tcp *t = h->data;

    raft_free(h);
    t->open--;
    maybe_closed(t);
}

/* A socket's copy, for secure.start: the handle closes its own. */
static int dup_fd(uv_handle_t *h)
{
    uv_os_fd_t fd;

    return uv_fileno(h, &fd) != 0 ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, 0);
}

/* A raft_malloc'd stream on `fd`, TLS's plaintext end (closed if not). */
static uv_stream_t *plaintext(struct tcp *t, int fd, void *data)
{
    uv_pipe_t *p = replog__own_calloc(1, sizeof *p);

    if (p == NULL) {
        close(fd);
        return NULL;
    }
    uv_pipe_init(t->l->loop, p, 0);
    p->data = data;
    if (uv_pipe_open(p, fd) != 0) {
        close(fd);
        p->data = t;
        t->open++;
        uv_close((uv_handle_t *)p, handle_freed);
        return NULL;
    }
    return (uv_stream_t *)p;
}

static void wrote(uv_write_t *w, int status)
{
    struct dial *d = w->data;

    if (d->status != 0)
        return; /* closing: dial_closed finishes */
    if (status != 0) {
        dial_fail(d, RAFT_NOCONNECTION);
        return;
    }
    conn_watch(d->t, d->id, d->address, d->stream);
    dial_done(d, d->stream, 0);
}

static void send_hello(struct dial *d)
{
    struct tcp *t = d->t;
    size_t n = (strlen(t->address) + 1 + 7) / 8 * 8;
    uint8_t *p;

    d->hello.len = 24 + n;
    if ((d->hello.base = calloc(1, d->hello.len)) == NULL) {
        dial_fail(d, RAFT_NOMEM);
        return;
    }
    p = (uint8_t *)d->hello.base;
    tb_store_le64(p, HANDSHAKE_PROTOCOL);
    tb_store_le64(p + 8, t->id);
    tb_store_le64(p + 16, n);
    memcpy(p + 24, t->address, strlen(t->address));
    d->write.data = d;
    if (uv_write(&d->write, d->stream, &d->hello, 1, wrote) != 0)
        dial_fail(d, RAFT_NOCONNECTION);
}

static void dial_secured(void *arg, int fd)
{
    struct dial *d = arg;

    d->secured = NULL;
    if (fd < 0 || (d->stream = plaintext(d->t, fd, d)) == NULL) {
        dial_done(d, NULL, RAFT_NOCONNECTION);
        return;
    }
    send_hello(d);
}

static void connected(uv_connect_t *c, int status)
{
    struct dial *d = c->data;
    struct tcp *t = d->t;
    int fd;

    if (d->status != 0)
        return;
    if (status != 0) {
        dial_fail(d, RAFT_NOCONNECTION);
        return;
    }
    if (t->secure.start == NULL || t->secure.dial_plain) {
        send_hello(d);
        return;
    }
    if ((fd = dup_fd((uv_handle_t *)d->tcp)) < 0) {
        dial_fail(d, RAFT_NOCONNECTION);
        return;
    }
    d->tcp->data = t;
    t->open++;
    uv_close((uv_handle_t *)d->tcp, handle_freed);
    d->tcp = NULL;
    d->stream = NULL;
    d->secured = t->secure.start(t->secure.data, fd, 1, d->address,
                                 dial_secured, d);
    if (d->secured == NULL)
        dial_done(d, NULL, RAFT_NOCONNECTION);
}

static void resolved(uv_getaddrinfo_t *r, int status, struct addrinfo *ai)
{
    struct dial *d = r->data;
    struct replog *l = d->t->l;
    unsigned timeout = 2 * l->election_ms;
    uv_os_fd_t fd;

    if (d->status != 0 || status != 0) {
        uv_freeaddrinfo(ai);
        dial_done(d, NULL, d->status != 0 ? d->status : RAFT_NOCONNECTION);
        return;
    }
    if ((d->tcp = replog__own_calloc(1, sizeof *d->tcp)) == NULL) {
        uv_freeaddrinfo(ai);
        dial_done(d, NULL, RAFT_NOMEM);
        return;
    }
    d->tcp->data = d;
    d->stream = (uv_stream_t *)d->tcp;
    d->connect.data = d;
    if (uv_tcp_init_ex(l->loop, d->tcp, (unsigned)ai->ai_family) != 0) {
        raft_free(d->tcp);
        uv_freeaddrinfo(ai);
        dial_done(d, NULL, RAFT_NOCONNECTION);
        return;
    }
    if (uv_fileno((uv_handle_t *)d->tcp, &fd) != 0 ||
        setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &timeout,
                   sizeof timeout) != 0 ||
        uv_tcp_nodelay(d->tcp, 1) != 0 ||
        uv_tcp_connect(&d->connect, d->tcp, ai->ai_addr, connected) != 0)
        dial_fail(d, RAFT_NOCONNECTION);
    uv_freeaddrinfo(ai);
}

/* "host:port" or "[v6]:port" into its parts, in place. */
static int split(char *address, char **host, char **port)
{
    char *colon = strrchr(address, ':');

    if (colon == NULL)
        return -1;
    *colon = '\0';
    *port = colon + 1;
    *host = address;
    if (address[0] == '[' && colon > address && colon[-1] == ']') {
        colon[-1] = '\0';
        *host = address + 1;
    }
    return 0;
}

/* Where raft's configuration has member `id` now, else `address`: raft_uv
 * dials each id at the address it first had for it, so a member removed
 * and added again elsewhere would be sent to where it was, and its old
 * process, still running there, would take the entries meant for it. */
static const char *address_of(const struct tcp *t, raft_id id,
                              const char *address)
{
    const struct raft_configuration *c = &t->l->raft->configuration;
    unsigned i;

    for (i = 0; i < c->n; i++)
        if (c->servers[i].id == id)
            return c->servers[i].address;
    return address;
}

void replog__tcp_follow(struct raft_uv_transport *rt)
{
    struct tcp *t = rt->impl;
    struct conn *c;

    /* Ended both ways: conn_cb sees it, and raft connects again, to where
     * the member is now. */
    for (c = t->conns; c != NULL; c = c->next)
        if (strcmp(address_of(t, c->id, c->address), c->address) != 0)
            shutdown(c->fd, SHUT_RDWR);
}

static int tcp_connect(struct raft_uv_transport *rt,
                       struct raft_uv_connect *req, raft_id id,
                       const char *address, raft_uv_connect_cb cb)
{
    struct tcp *t = rt->impl;
    /* IPv4, as every member listens (bind_address): "localhost" is ::1
     * first on many a system, where nobody would answer. */
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM};
    struct dial *d = calloc(1, sizeof *d);
    char *copy, *host, *port;

    address = address_of(t, id, address);
    copy = strdup(address);

    if (d == NULL || copy == NULL || (d->address = strdup(address)) == NULL) {
        free(d);
        free(copy);
        return RAFT_NOMEM;
    }
    req->cb = cb;
    d->req = req;
    d->id = id;
    d->t = t;
    d->resolve.data = d;
    if (split(copy, &host, &port) != 0 ||
        uv_getaddrinfo(t->l->loop, &d->resolve, resolved, host, port,
                       &hints) != 0) {
        snprintf(rt->errmsg, sizeof rt->errmsg, "cannot connect to %s",
                 address);
        free(copy);
        free(d->address);
        free(d);
        return RAFT_NOCONNECTION;
    }
    free(copy);
    d->next = t->dials;
    t->dials = d;
    t->open++;
    return 0;
}

/* ---- with peer TLS: a connection accepted, secured, its handshake read ---- */

#define MAX_ADDRESS 1024 /* a longer raft address is no member's */
#define ACCEPT_AGAIN_MS 100

struct incoming {
    struct tcp *t;
    void *secured;       /* TLS on its way, or NULL */
    uv_stream_t *stream; /* then the plaintext: raft_malloc'd */
    uint8_t preamble[24];
    char *address;       /* the handshake's, once its size is known */
    size_t need, got;    /* of the part being read */
    struct incoming *next;
};

static void incoming_free(struct incoming *in)
{
    struct tcp *t = in->t;
    struct incoming **p = &t->incoming;

    while (*p != in)
        p = &(*p)->next;
    *p = in->next;
    free(in->address);
    free(in);
    t->open--;
    maybe_closed(t);
}

static void incoming_closed(uv_handle_t *h)
{
    struct incoming *in = h->data;

    raft_free(h);
    incoming_free(in);
}

static void incoming_drop(struct incoming *in)
{
    if (in->secured != NULL) {
        in->t->secure.cancel(in->secured);
        incoming_free(in);
    } else if (!uv_is_closing((uv_handle_t *)in->stream)) {
        uv_close((uv_handle_t *)in->stream, incoming_closed);
    }
}

/* Exactly the rest of the part being read: what follows is raft's. */
static void incoming_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
    struct incoming *in = h->data;
    char *base = in->address != NULL ? in->address : (char *)in->preamble;

    (void)hint;
    *buf = uv_buf_init(base + in->got, (unsigned)(in->need - in->got));
}

static void incoming_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    struct incoming *in = s->data;
    struct tcp *t = in->t;
    uint64_t size;

    (void)buf;
    if (n == 0)
        return;
    if (n < 0) {
        incoming_drop(in);
        return;
    }
    if ((in->got += (size_t)n) < in->need)
        return;
    if (in->address == NULL) {
        size = tb_load_le64(in->preamble + 16);
        if (tb_load_le64(in->preamble) != HANDSHAKE_PROTOCOL || size == 0 ||
            size > MAX_ADDRESS || (in->address = calloc(1, size + 1)) == NULL) {
            incoming_drop(in);
            return;
        }
        in->need = (size_t)size;
        in->got = 0;
        return;
    }
    uv_read_stop(s);
    s->data = NULL;
    t->accept_cb(t->outer, (raft_id)tb_load_le64(in->preamble + 8), in->address,
                 s);
    in->stream = NULL;
    incoming_free(in);
}

static void incoming_secured(void *arg, int fd)
{
    struct incoming *in = arg;

    in->secured = NULL;
    if (fd < 0 || (in->stream = plaintext(in->t, fd, in)) == NULL) {
        incoming_free(in);
        return;
    }
    in->need = sizeof in->preamble;
    if (uv_read_start(in->stream, incoming_alloc, incoming_read) != 0)
        incoming_drop(in);
}

/* A connection another member made here is only read: a member gone
 * without a word (its machine off, the network cut) sends nothing that
 * would end it, and it stayed open for good, one more at each such loss,
 * with whatever raft had read of a message (a snapshot's, perhaps).
 * Keepalive probes, from twice the election timeout on, end it. */
static void bound(struct tcp *t, int fd)
{
    unsigned timeout = 2 * t->l->election_ms;
    int on = 1, idle = (int)((timeout + 999) / 1000), every = 1, probes = 3;

    (void)setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &timeout,
                     sizeof timeout);
    (void)setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
    (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
    (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &every, sizeof every);
    (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof probes);
}

/* raft_uv_tcp's listener took a connection: bound, then raft's. */
static void accepted(struct raft_uv_transport *inner, raft_id id,
                     const char *address, struct uv_stream_s *stream)
{
    struct tcp *t = (struct tcp *)((char *)inner - offsetof(struct tcp, inner));
    uv_os_fd_t fd;

    if (uv_fileno((uv_handle_t *)stream, &fd) == 0)
        bound(t, fd);
    t->accept_cb(inner, id, address, stream);
}

/* A connection that found no memory waits in the kernel, and libuv polls
 * the listener no more until it is accepted: it is, a little later. */
static void on_accept(uv_stream_t *listener, int status);

static void accept_again(uv_timer_t *h)
{
    struct tcp *t = h->data;

    on_accept((uv_stream_t *)&t->listener, 0);
}

static void on_accept(uv_stream_t *listener, int status)
{
    struct tcp *t = listener->data;
    struct incoming *in;
    uv_tcp_t *c;
    int fd = -1;

    if (status != 0 || t->l->closing)
        return;
    if ((c = replog__own_calloc(1, sizeof *c)) == NULL) {
        uv_timer_start(&t->again, accept_again, ACCEPT_AGAIN_MS, 0);
        return;
    }
    uv_tcp_init(t->l->loop, c);
    c->data = t;
    t->open++;
    if (uv_accept(listener, (uv_stream_t *)c) == 0)
        fd = dup_fd((uv_handle_t *)c);
    uv_close((uv_handle_t *)c, handle_freed);
    if (fd < 0)
        return;
    bound(t, fd);
    if ((in = calloc(1, sizeof *in)) == NULL) {
        close(fd);
        return;
    }
    in->t = t;
    in->next = t->incoming;
    t->incoming = in;
    t->open++;
    in->secured = t->secure.start(t->secure.data, fd, 0, NULL,
                                  incoming_secured, in);
    if (in->secured == NULL)
        incoming_free(in);
}

static void listener_closed(uv_handle_t *h)
{
    struct tcp *t = h->data;

    t->open--;
    maybe_closed(t);
}

static int listen_secured(struct tcp *t, struct raft_uv_transport *rt,
                          raft_uv_accept_cb cb)
{
    char *copy = strdup(t->bind), *host, *port;
    struct sockaddr_in a;
    int rv;

    if (copy == NULL)
        return RAFT_NOMEM;
    rv = split(copy, &host, &port) != 0 ? UV_EINVAL
                                        : uv_ip4_addr(host, atoi(port), &a);
    free(copy);
    t->accept_cb = cb;
    uv_tcp_init(t->l->loop, &t->listener);
    uv_timer_init(t->l->loop, &t->again);
    t->listener.data = t;
    t->again.data = t;
    t->listening = 1;
    t->open += 2;
    if (rv == 0)
        rv = uv_tcp_bind(&t->listener, (const struct sockaddr *)&a, 0);
    if (rv == 0)
        rv = uv_listen((uv_stream_t *)&t->listener, 64, on_accept);
    if (rv != 0) {
        snprintf(rt->errmsg, sizeof rt->errmsg, "listen on %s: %s", t->bind,
                 uv_strerror(rv));
        return RAFT_IOERR;
    }
    return 0;
}

/* ---- the transport ---- */

/* raft_uv_tcp listens on an IPv4 address only: a host name is resolved
 * to one. */
static int bind_address(struct tcp *t, struct raft_uv_transport *rt)
{
    struct addrinfo hints = {.ai_family = AF_INET,
                             .ai_socktype = SOCK_STREAM},
                    *ai;
    struct in_addr a;
    char *copy = strdup(t->address), *host, *port, ip[INET_ADDRSTRLEN],
         bind[INET_ADDRSTRLEN + 8] = "";
    int rv = 0;

    if (copy == NULL)
        return RAFT_NOMEM;
    if (split(copy, &host, &port) == 0 && inet_pton(AF_INET, host, &a) != 1) {
        if ((rv = getaddrinfo(host, port, &hints, &ai)) != 0) {
            snprintf(rt->errmsg, sizeof rt->errmsg, "%s: %s", host,
                     gai_strerror(rv));
            free(copy);
            return RAFT_NOCONNECTION;
        }
        inet_ntop(AF_INET, &((struct sockaddr_in *)ai->ai_addr)->sin_addr, ip,
                  sizeof ip);
        freeaddrinfo(ai);
        snprintf(bind, sizeof bind, "%s:%s", ip, port);
        raft_uv_tcp_set_bind_address(&t->inner, bind);
    }
    free(copy);
    t->bind = strdup(rv == 0 && bind[0] != '\0' ? bind : t->address);
    return t->bind != NULL ? 0 : RAFT_NOMEM;
}

static int tcp_init(struct raft_uv_transport *rt, raft_id id,
                    const char *address)
{
    struct tcp *t = rt->impl;
    int rv;

    t->id = id;
    if ((t->address = strdup(address)) == NULL)
        return RAFT_NOMEM;
    if ((rv = bind_address(t, rt)) != 0)
        return rv;
    if ((rv = t->inner.init(&t->inner, id, address)) != 0)
        memcpy(rt->errmsg, t->inner.errmsg, sizeof rt->errmsg);
    return rv;
}

static int tcp_listen(struct raft_uv_transport *rt, raft_uv_accept_cb cb)
{
    struct tcp *t = rt->impl;
    int rv;

    if (t->secure.start != NULL)
        return listen_secured(t, rt, cb);
    /* raft_uv_tcp hands raft its own transport with a connection taken,
     * and raft finds itself in its data (set after init). */
    t->inner.data = rt->data;
    t->accept_cb = cb;
    if ((rv = t->inner.listen(&t->inner, accepted)) != 0)
        memcpy(rt->errmsg, t->inner.errmsg, sizeof rt->errmsg);
    return rv;
}

static void inner_closed(struct raft_uv_transport *inner)
{
    struct tcp *t = (struct tcp *)((char *)inner - offsetof(struct tcp, inner));

    t->inner_open = 0;
    maybe_closed(t);
}

static void tcp_close(struct raft_uv_transport *rt,
                      raft_uv_transport_close_cb cb)
{
    struct tcp *t = rt->impl;
    struct incoming *in, *next_in;
    struct dial *d, *next;

    t->closed = cb;
    while (t->conns != NULL)
        conn_drop(t->conns);
    for (d = t->dials; d != NULL; d = next) {
        next = d->next;
        if (d->status != 0)
            continue;
        if (d->secured != NULL || d->stream != NULL)
            dial_fail(d, RAFT_CANCELED);
        else {
            d->status = RAFT_CANCELED;
            uv_cancel((uv_req_t *)&d->resolve);
        }
    }
    for (in = t->incoming; in != NULL; in = next_in) {
        next_in = in->next;
        incoming_drop(in);
    }
    if (t->listening) {
        uv_close((uv_handle_t *)&t->listener, listener_closed);
        uv_close((uv_handle_t *)&t->again, listener_closed);
    }
    /* Closed even when it never listened (peer TLS): its init made it a
     * listener handle, which must leave the loop before it is freed. */
    t->inner.close(&t->inner, inner_closed);
}

int replog__tcp_init(struct raft_uv_transport *rt, struct replog *l)
{
    struct tcp *t = calloc(1, sizeof *t);
    int rv;

    if (t == NULL)
        return RAFT_NOMEM;
    if ((rv = raft_uv_tcp_init(&t->inner, l->loop)) != 0) {
        free(t);
        return rv;
    }
    memset(rt, 0, sizeof *rt);
    t->l = l;
    t->outer = rt;
    t->inner_open = 1;
    t->secure = l->secure;
    rt->impl = t;
    rt->init = tcp_init;
    rt->listen = tcp_listen;
    rt->connect = tcp_connect;
    rt->close = tcp_close;
    return 0;
}

void replog__tcp_free(struct raft_uv_transport *rt)
{
    struct tcp *t = rt->impl;

    raft_uv_tcp_close(&t->inner);
    free(t->address);
    free(t->bind);
    free(t);
    rt->impl = NULL;
}
