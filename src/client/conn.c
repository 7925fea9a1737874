/* The connection: non-blocking TCP connect, TLS if configured (tls.c), the
 * handshake, reading and splitting frames, writing, and the timers (wire
 * doc 11.4).
 *
 * Nothing here blocks or sleeps: the driver (driver.c) asks tb__interest
 * what to wait for and calls tb__process when it happened.  Timers, with T
 * the negotiated session timeout:
 *   - connect_timeout_ms for the TCP connect, and again for the TLS
 *     handshake, the ConnectRequest and the SASL login together;
 *   - ping when nothing was sent for T/3, so a busy application keeps its
 *     session as long as the driver runs;
 *   - drop the connection when nothing was received for 2T/3;
 *   - declare the session expired when no server was heard from for T
 *     while disconnected: the server cannot have kept it longer (its own
 *     expiry runs from our last packet), and a lock holder must stop. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include "client/client.h"

#define READ_CHUNK 65536

/* The option, or by default a third of the session per host: an attempt
 * that is connected but never answered (a server starting or dying) leaves
 * time for two more rounds before the session would expire here.  Of the
 * session the server granted once one did: it may be far less than the
 * one asked for. */
static int connect_timeout(const struct tb_client *c)
{
    int t = c->timeout > 0 ? c->timeout : c->o.session_timeout_ms;

    if (c->o.connect_timeout_ms > 0)
        return c->o.connect_timeout_ms;
    t /= 3 * (int)(c->nhosts ? c->nhosts : 1);
    return t < 1000 ? 1000 : t;
}

static void on_connected(struct tb_client *c)
{
    struct tb_connect_req r;
    size_t start;
    int64_t now = c->now();

    r.protocol_version = 0;
    r.last_zxid = c->last_zxid;
    r.timeout = c->o.session_timeout_ms;
    r.session_id = c->seen_rw ? c->session_id : 0;
    r.passwd = (struct tb_str){(const char *)c->passwd, sizeof c->passwd};
    r.has_readonly = 1;
    r.readonly = c->o.readonly_allowed ? 1 : 0;
    c->out.len = 0;
    c->out_off = 0;
    start = tb_frame_begin(&c->out);
    tb_connect_req_encode(&c->out, &r);
    tb_frame_end(&c->out, start);
    c->phase = PH_HANDSHAKE;
    c->last_send = c->last_recv = now;
    tb__log(c, TB_LOG_DEBUG, "connected to %s:%s, handshake",
            c->hosts[c->host_idx].name, c->hosts[c->host_idx].port);
}

static void do_write(struct tb_client *c);

/* Runs the TLS handshake as far as it goes now; once it is done, the
 * ZooKeeper handshake follows on the same deadline. */
static void tls_step(struct tb_client *c)
{
    char why[sizeof c->last_why];
    int rv = tb__tls_handshake(c);

    if (rv == TB_EAGAIN)
        return;
    if (rv != 0) {
        snprintf(why, sizeof why, "%s", tb__tls_why(c)); /* freed next */
        tb__conn_fail(c, TB_ETLS, why);
        return;
    }
    on_connected(c);
    do_write(c);
}

/* The TCP connection is up: TLS first if configured. */
static void tcp_up(struct tb_client *c)
{
    char why[sizeof c->last_why];
    int rv;

    c->deadline = c->now() + connect_timeout(c);
    if (c->tls_ctx == NULL) {
        on_connected(c);
        return;
    }
    if ((rv = tb__tls_start(c)) != 0) {
        snprintf(why, sizeof why, "%s",
                 rv == TB_ENOMEM ? "out of memory" : tb__tls_why(c));
        tb__conn_fail(c, rv == TB_ENOMEM ? TB_ECONNECTIONLOSS : rv, why);
        return;
    }
    c->phase = PH_TLS;
    tls_step(c);
}

static void resolve_failed(struct tb_client *c, int err)
{
    tb__log(c, TB_LOG_WARN, "cannot resolve %s: %s", c->hosts[c->host_idx].name,
            gai_strerror(err));
    tb__conn_failed(c, "resolve");
}

/* The current host's addresses in c->ai: at once for an address, else
 * from a lookup on its way (PH_RESOLVING, lookup.c).  0 once they are
 * there, 1 while looked up, -1 if the attempt failed. */
static int resolve(struct tb_client *c)
{
    struct addrinfo hints;
    struct host *h = &c->hosts[c->host_idx];
    int rv;

    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
    rv = getaddrinfo(h->name, h->port, &hints, &c->ai);
    if (rv == 0) {
        c->ai_next = c->ai;
        return 0;
    }
    c->ai = NULL;
    if (rv != EAI_NONAME) {
        resolve_failed(c, rv);
        return -1;
    }
    if (h->lookup == NULL && (rv = tb__lookup_start(h, &h->lookup)) != 0) {
        tb__conn_failed(c, rv == TB_ENOMEM ? "out of memory"
                                           : "cannot start a name lookup");
        return -1;
    }
    c->phase = PH_RESOLVING;
    c->deadline = c->now() + connect_timeout(c);
    return 1;
}

static void attempt(struct tb_client *c);
static void unpolled(struct tb_client *c, int fd);

/* The lookup of PH_RESOLVING, done or not. */
static void lookup_step(struct tb_client *c)
{
    struct host *h = &c->hosts[c->host_idx];
    int err;

    if (!tb__lookup_done(h->lookup))
        return;
    unpolled(c, tb__lookup_fd(h->lookup));
    tb__lookup_take(h->lookup, &c->ai, &err);
    h->lookup = NULL;
    c->phase = PH_BACKOFF; /* placeholder: resolving no more */
    if (c->ai == NULL) {
        resolve_failed(c, err);
        return;
    }
    c->ai_next = c->ai;
    attempt(c);
}

/* One attempt at the current host's next address. */
static void attempt(struct tb_client *c)
{
    struct addrinfo *a;
    int fd, one = 1;

    if (c->connect_hook != NULL) {
        fd = c->connect_hook(c, &c->hosts[c->host_idx]);
        if (fd < 0) {
            tb__conn_failed(c, "connect hook refused");
            return;
        }
        c->fd = fd;
        tcp_up(c);
        return;
    }
    if (c->ai == NULL && resolve(c) != 0)
        return;
    a = c->ai_next;
    c->ai_next = a->ai_next;
    fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                a->ai_protocol);
    if (fd < 0) {
        tb__conn_failed(c, "socket");
        return;
    }
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    c->fd = fd;
    if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
        tcp_up(c);
        return;
    }
    if (errno != EINPROGRESS) {
        tb__conn_failed(c, strerror(errno));
        return;
    }
    c->phase = PH_CONNECTING;
    c->deadline = c->now() + connect_timeout(c);
}

static int backoff_ms(struct tb_client *c)
{
    c->rng = c->rng * 6364136223846793005ull + 1442695040888963407ull;
    return 100 + (int)((c->rng >> 33) % 400);
}

void tb__next_attempt(struct tb_client *c)
{
    if (c->ai_next != NULL) { /* another address of the same host */
        attempt(c);
        return;
    }
    if (c->ai != NULL) {
        freeaddrinfo(c->ai);
        c->ai = NULL;
    }
    c->host_idx = (c->host_idx + 1) % c->nhosts;
    if (++c->failed_in_round >= (int)c->nhosts) {
        /* Every host failed once: pause before the next round. */
        c->failed_in_round = 0;
        c->phase = PH_BACKOFF;
        c->deadline = c->now() + backoff_ms(c);
        return;
    }
    attempt(c);
}

void tb__start(struct tb_client *c)
{
    if (c->phase != PH_IDLE)
        return;
    c->host_idx = 0;
    c->failed_in_round = 0;
    attempt(c);
}

/* The loop must stop polling a descriptor before it goes. */
static void unpolled(struct tb_client *c, int fd)
{
    if (c->ev_set && c->ev_last.fd == fd) {
        c->ev_last = (struct tb_interest){-1, 0, -1};
        c->ev_deadline = -1;
        c->ev.update(c->ev.data, &c->ev_last);
    }
}

void tb__conn_close_fd(struct tb_client *c)
{
    /* An attempt given up while the host's lookup is on its way: the
     * lookup goes on, the loop stops polling it until the next attempt. */
    if (c->phase == PH_RESOLVING)
        unpolled(c, tb__lookup_fd(c->hosts[c->host_idx].lookup));
    if (c->fd < 0)
        return;
    unpolled(c, c->fd);
    tb__tls_end(c); /* before the descriptor goes */
    close(c->fd);
    c->fd = -1;
    c->conn_gen++;
    c->in_len = 0;
    if (c->out.oom)
        tb_wbuf_free(&c->out); /* clears the sticky failure */
    c->out.len = 0;
    c->out_off = 0;
    c->ping_inflight = 0;
    c->setwatches_inflight = 0;
    c->auth_unanswered = 0;
    c->auth_next = NULL;
    tb__sasl_end(c);
}

static void io_error(struct tb_client *c, int err, const char *why)
{
    char buf[sizeof c->last_why];

    snprintf(buf, sizeof buf, "%s", why); /* a TLS text goes with the SSL */
    why = buf;
    if (c->phase == PH_OPEN)
        tb__conn_lost(c, TB_ECONNECTIONLOSS, why);
    else
        tb__conn_fail(c, err, why);
}

/* send(2) or TLS: bytes sent, TB_EAGAIN, or an error (io_error's). */
static ssize_t io_send(struct tb_client *c, const void *p, size_t n)
{
    ssize_t r;

    if (c->tls != NULL)
        return tb__tls_send(c, p, n);
    do
        r = send(c->fd, p, n, MSG_NOSIGNAL);
    while (r < 0 && errno == EINTR);
    if (r >= 0)
        return r;
    return errno == EAGAIN || errno == EWOULDBLOCK ? TB_EAGAIN : TB_ESYSTEM;
}

/* recv(2) or TLS: bytes read, 0 at the end, TB_EAGAIN, or an error. */
static ssize_t io_recv(struct tb_client *c, void *p, size_t n)
{
    ssize_t r;

    if (c->tls != NULL)
        return tb__tls_recv(c, p, n);
    do
        r = recv(c->fd, p, n, 0);
    while (r < 0 && errno == EINTR);
    if (r >= 0)
        return r;
    return errno == EAGAIN || errno == EWOULDBLOCK ? TB_EAGAIN : TB_ESYSTEM;
}

/* What a failed io_send / io_recv says. */
static void io_failed(struct tb_client *c, ssize_t r, const char *eof)
{
    if (r == 0)
        io_error(c, TB_ECONNECTIONLOSS, eof);
    else if (r == TB_ESYSTEM)
        io_error(c, TB_ECONNECTIONLOSS, strerror(errno));
    else
        io_error(c, r == TB_ETLS ? TB_ETLS : TB_ECONNECTIONLOSS,
                 tb__tls_why(c));
}

static void do_write(struct tb_client *c)
{
    ssize_t n;

    while (c->out_off < c->out.len) {
        n = io_send(c, c->out.base + c->out_off, c->out.len - c->out_off);
        if (n > 0) {
            c->out_off += (size_t)n;
            c->last_send = c->now();
            continue;
        }
        if (n == TB_EAGAIN)
            break;
        io_failed(c, n, "send");
        return;
    }
    /* What was sent goes once it is half the buffer: a backlog that never
     * drains whole (a server reading slowly, requests coming all the
     * while) then holds what is unsent, not all ever sent. */
    if (c->out_off > 0 && c->out_off >= c->out.len / 2) {
        memmove(c->out.base, c->out.base + c->out_off, c->out.len - c->out_off);
        c->out.len -= c->out_off;
        c->out_off = 0;
    }
}

/* Makes room for at least `need` more bytes (within the frame limit). */
static int in_reserve(struct tb_client *c, size_t need)
{
    size_t cap = c->in_cap ? c->in_cap : READ_CHUNK;
    uint8_t *p;

    if (c->in_cap - c->in_len >= need)
        return 0;
    while (cap - c->in_len < need)
        cap *= 2;
    p = tb__malloc(cap);
    if (p == NULL)
        return TB_ENOMEM;
    if (c->in_len)
        memcpy(p, c->in, c->in_len);
    tb__free(c->in);
    c->in = p;
    c->in_cap = cap;
    return 0;
}

/* Splits and handles every whole frame buffered; stops if the connection
 * went away while handling one. */
static void parse_frames(struct tb_client *c)
{
    unsigned gen = c->conn_gen;
    size_t off = 0, used;
    struct tb_str payload;
    int rv;

    for (;;) {
        rv = tb_frame_split(c->in + off, c->in_len - off,
                            c->o.max_frame_bytes, &payload, &used);
        if (rv == TB_EAGAIN)
            break;
        if (rv != 0) {
            io_error(c, TB_ECONNECTIONLOSS, "frame too large");
            return;
        }
        off += used;
        tb__on_frame(c, (const uint8_t *)payload.ptr, payload.len);
        if (c->conn_gen != gen)
            return; /* the buffer was reset with the connection */
    }
    if (off > 0) {
        memmove(c->in, c->in + off, c->in_len - off);
        c->in_len -= off;
    }
}

static void do_read(struct tb_client *c)
{
    unsigned gen = c->conn_gen;
    ssize_t n;
    int rounds;

    /* Bounded, except that what TLS decrypted already must all be read:
     * the socket will not wake the driver for it. */
    for (rounds = 0; (rounds < 16 || tb__tls_pending(c)) && c->conn_gen == gen;
         rounds++) {
        if (in_reserve(c, 4096) != 0) {
            io_error(c, TB_ECONNECTIONLOSS, "out of memory");
            return;
        }
        n = io_recv(c, c->in + c->in_len, c->in_cap - c->in_len);
        if (n > 0) {
            c->in_len += (size_t)n;
            c->last_recv = c->now();
            parse_frames(c);
            continue;
        }
        if (n == TB_EAGAIN)
            return;
        io_failed(c, n, "connection closed by server");
        return;
    }
}

static void check_connect(struct tb_client *c)
{
    int err = 0;
    socklen_t len = sizeof err;

    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
        err = errno;
    if (err == 0) {
        tcp_up(c);
        if (c->phase == PH_HANDSHAKE)
            do_write(c);
    } else if (err != EINPROGRESS && err != EALREADY) {
        tb__conn_failed(c, strerror(err));
    }
}

static void send_ping(struct tb_client *c)
{
    struct tb_request_header h = {TB_XID_PING, TB_OP_PING};
    size_t start = tb_frame_begin(&c->out);

    tb_request_header_encode(&c->out, &h);
    tb_frame_end(&c->out, start);
    c->ping_inflight = 1;
    do_write(c);
}

/* Whether the session is over once no server was heard from for its
 * timeout (every server will have expired it).  Not a read-only server's
 * (seen_rw 0): no server resumes it, the next connection takes a new
 * one, as ZooKeeper's clients do. */
static int may_expire(const struct tb_client *c)
{
    return c->session_id != 0 && c->seen_rw && c->timeout > 0 &&
           c->phase != PH_OPEN && c->phase != PH_DEAD;
}

void tb__timers(struct tb_client *c, int64_t now)
{
    /* 64 bits: a server may grant up to INT32_MAX ms, whose 2T/3 would
     * overflow an int on the way (and drop every connection at once). */
    int64_t t = c->timeout;

    if (c->closing && !c->closed && now >= c->close_deadline) {
        tb__log(c, TB_LOG_INFO, "no reply to closeSession in time");
        tb__finish_close(c);
        return;
    }
    switch (c->phase) {
    case PH_BACKOFF:
        if (now >= c->deadline)
            attempt(c);
        break;
    case PH_RESOLVING:
        if (now >= c->deadline)
            tb__conn_fail(c, TB_ETIMEDOUT, "name lookup timed out");
        break;
    case PH_CONNECTING:
    case PH_HANDSHAKE:
        if (now >= c->deadline)
            tb__conn_fail(c, TB_ETIMEDOUT, "timed out");
        break;
    case PH_TLS:
        if (now >= c->deadline)
            tb__conn_fail(c, TB_ETIMEDOUT, "TLS handshake timed out");
        break;
    case PH_OPEN:
        if (now - c->last_recv >= t * 2 / 3)
            tb__conn_lost(c, TB_ECONNECTIONLOSS, "no reply within 2/3 of "
                                                 "the session timeout");
        else if (!c->ping_inflight && now - c->last_send >= t / 3)
            send_ping(c);
        break;
    default:
        break;
    }
    if (may_expire(c) && now - c->last_heard >= c->timeout) {
        tb__log(c, TB_LOG_WARN, "no server heard from for %d ms: expired",
                c->timeout);
        tb__terminate(c, TB_SESSION_EXPIRED, TB_ESESSIONEXPIRED);
    }
}

void tb__process(struct tb_client *c, int events)
{
    if (c->phase == PH_IDLE)
        tb__start(c);
    if (c->phase == PH_RESOLVING)
        lookup_step(c);
    if (c->phase == PH_CONNECTING && events)
        check_connect(c);
    else if (c->phase == PH_TLS && events)
        tls_step(c);
    /* Silence is judged before what waits in the socket is read, as
     * ZooKeeper's clients do: after a pause (the process stopped, the
     * machine suspended) longer than the read timeout, frames that came
     * meanwhile say nothing of whether the server is there now, and a
     * session silent for its timeout has ended for the holder of a lock. */
    tb__timers(c, c->now());
    if ((c->phase == PH_HANDSHAKE || c->phase == PH_OPEN) &&
        tb__tls_read_on(c, events))
        do_read(c);
    if ((c->phase == PH_HANDSHAKE || c->phase == PH_OPEN) &&
        c->out_off < c->out.len)
        do_write(c);
    tb__timers(c, c->now());
    tb__flush(c);
}

static int64_t min_deadline(int64_t a, int64_t b)
{
    return a < 0 ? b : (b < 0 || a < b ? a : b);
}

void tb__interest(struct tb_client *c, struct tb_interest *in)
{
    int64_t now = c->now(), d = -1;
    int64_t t = c->timeout; /* as in tb__timers */

    in->fd = -1;
    in->events = 0;
    switch (c->phase) {
    case PH_BACKOFF:
        d = c->deadline;
        break;
    case PH_RESOLVING:
        in->fd = tb__lookup_fd(c->hosts[c->host_idx].lookup);
        in->events = TB_EV_READ;
        d = c->deadline;
        break;
    case PH_CONNECTING:
        in->fd = c->fd;
        in->events = TB_EV_WRITE;
        d = c->deadline;
        break;
    case PH_TLS:
        in->fd = c->fd;
        in->events = tb__tls_events(c, 0);
        d = c->deadline;
        break;
    case PH_HANDSHAKE:
    case PH_OPEN:
        in->fd = c->fd;
        in->events = TB_EV_READ;
        if (c->out_off < c->out.len)
            in->events |= TB_EV_WRITE;
        in->events = tb__tls_events(c, in->events);
        if (c->phase == PH_HANDSHAKE) {
            d = c->deadline;
            break;
        }
        d = c->last_recv + t * 2 / 3;
        if (!c->ping_inflight)
            d = min_deadline(d, c->last_send + t / 3);
        break;
    default:
        break;
    }
    if (c->closing && !c->closed)
        d = min_deadline(d, c->close_deadline);
    if (may_expire(c))
        d = min_deadline(d, c->last_heard + c->timeout);
    if (!tb_queue_empty(&c->doneq) || tb__tls_pending(c))
        d = now;
    in->timeout_ms = d < 0 ? -1 : (int)(d > now ? (d - now < INT32_MAX ? d - now : INT32_MAX) : 0);
}

void tb__flush(struct tb_client *c)
{
    struct tb_queue *q;

    if (c->phase != PH_OPEN)
        return;
    while (!tb_queue_empty(&c->outq)) {
        struct req *r;
        q = tb_queue_head(&c->outq);
        r = TB_CONTAINER_OF(q, struct req, it.q);
        tb_queue_remove(q);
        tb_wbuf_put(&c->out, r->fw.base, r->fw.len);
        tb_wbuf_free(&r->fw);
        tb_queue_insert_tail(&c->pendq, q);
    }
    if (c->out.oom) {
        tb__conn_lost(c, TB_ECONNECTIONLOSS, "out of memory");
        return;
    }
    do_write(c);
}
