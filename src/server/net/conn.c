/* Client connections: accept, read and split frames, queue replies, and
 * write each connection's output once per loop turn with one uv_write.
 *
 * Limits live here: connections per client address (maxClientCnxns) and
 * in all (what the open-file limit leaves beside FD_RESERVE), the frame size
 * (jute.maxbuffer, checked on the 4-byte prefix before anything more is
 * buffered), and backpressure: a connection stops being read while it has too
 * many requests queued or too much output its peer has not taken; one whose
 * unsent output passes a hard cap is closed, so a client that stops reading
 * cannot make the server's memory grow without bound. */
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "server/config/config.h"
#include "server/http/httpd.h"
#include "server/logging/log.h"
#include "server/net/net.h"
#include "server/proc/proc.h"
#include "server/server.h"

#define OUT_PAUSE (4u << 20) /* stop reading requests above this */
#define IN_CHUNK 65536
#define OUT_KEEP (16u << 10) /* a drained output buffer larger is freed */

struct write_req {
    uv_write_t req;
    uint8_t *base;
};

static void process_input(struct conn *c);
static void output_drained(struct conn *c);

/* Bytes queued and not yet handed to a write: replies, and on the TLS port
 * also the records the SSL has made of them or of its handshake. */
static size_t unsent(const struct conn *c)
{
    return c->out.len + (c->tls != NULL ? tls_conn_unsent(c) : 0);
}

static void mark_dirty(struct conn *c)
{
    if (tb_queue_empty(&c->dirty_link))
        tb_queue_insert_tail(&c->srv->dirty, &c->dirty_link);
}

/* Past PROC_UNREAD_MAX of replies unread (a client that sends and never
 * reads), the connection ends.  What comes onto less goes, however large:
 * a reply is bounded by jute.maxbuffer (a multiRead's by PROC_UNREAD_MAX
 * more), a four-letter word's answer, written whole before the close, by
 * the server's own data (wchp of millions of watches). */
void conn_write(struct conn *c, const void *frame, size_t len)
{
    /* the write in flight by what it has not given the kernel yet: what
     * the client has read of it is no longer unread */
    size_t unread =
        c->out.len +
        (c->writing != 0
             ? uv_stream_get_write_queue_size((uv_stream_t *)&c->tcp)
             : 0);

    if (c->client.state == CONN_CLOSING && c->tcp.data == NULL)
        return;
    tb_wbuf_put(&c->out, frame, len);
    if (c->out.oom || unread > PROC_UNREAD_MAX) {
        tb_log(TB_LOG_WARN,
               "closing 0x%llx from %s:%d: %zu bytes of replies "
               "unread",
               (unsigned long long)c->client.session_id, c->peer, c->peer_port,
               unread + len);
        conn_close(c);
        return;
    }
    mark_dirty(c);
}

void conn_send(struct conn *c, const void *frame, size_t len)
{
    if (c->client.state != CONN_CLOSING || c->tcp.data != NULL) {
        c->sent++;
        c->srv->packets_sent++;
    }
    conn_write(c, frame, len);
}

void conn_reply(struct conn *c, int32_t xid, int64_t zxid, int32_t err,
                const void *body, size_t len)
{
    uint8_t hdr[PROC_REPLY_HDR];

    if (proc_reply_header(hdr, xid, zxid, err, len) == sizeof hdr) {
        conn_send(c, hdr, sizeof hdr);
        return;
    }
    /* One logical packet: the header and the body. */
    tb_wbuf_put(&c->out, hdr, sizeof hdr);
    conn_send(c, body, len);
}

/* The ops through which proc answers a client of a connection (proc.h). */
static struct conn *of(struct proc_client *pc)
{
    return TB_CONTAINER_OF(pc, struct conn, client);
}

static void op_send(struct proc_client *pc, const void *frame, size_t len)
{
    conn_send(of(pc), frame, len);
}

static void op_reply(struct proc_client *pc, int32_t xid, int64_t zxid,
                     int32_t err, const void *body, size_t len)
{
    conn_reply(of(pc), xid, zxid, err, body, len);
}

static void op_close(struct proc_client *pc)
{
    conn_close(of(pc));
}

static void op_close_after_flush(struct proc_client *pc)
{
    conn_close_after_flush(of(pc));
}

static void op_resume(struct proc_client *pc)
{
    conn_resume(of(pc));
}

static void op_notified(struct proc_client *pc)
{
    conn_notified(of(pc));
}

static const struct proc_client_ops conn_client_ops = {
    op_send, op_reply, op_close, op_close_after_flush, op_resume, op_notified,
};

static void on_closed(uv_handle_t *h)
{
    struct conn *c = TB_CONTAINER_OF(h, struct conn, tcp);

    tb_wbuf_free(&c->out);
    tb_wbuf_free(&c->client.ids);
    tls_conn_free(c);
    free(c->in);
    free(c);
}

/* Open connections per client address, for maxClientCnxns, as ZooKeeper
 * counts them (per address, IPv6 too; an IPv4 client of a dual-stack
 * port is its IPv4 address).  s->ip_count maps a hash of the address to
 * a chain of these, exact whatever the hash's collisions. */
struct ip_conns {
    struct ip_conns *next;
    uint8_t addr[16];
    uint32_t n;
};

static uint64_t ip_key(const uint8_t a[16])
{
    uint64_t h = 14695981039346656037u; /* FNV-1a */
    int i;

    for (i = 0; i < 16; i++)
        h = (h ^ a[i]) * 1099511628211u;
    return h;
}

static void ip_release(struct tbd *s, const uint8_t addr[16])
{
    uint64_t key = ip_key(addr);
    struct ip_conns *head = tb_map_get(&s->ip_count, key), **p = &head, *e;

    while ((e = *p) != NULL && memcmp(e->addr, addr, 16) != 0)
        p = &e->next;
    if (e == NULL || --e->n > 0)
        return;
    *p = e->next;
    free(e);
    if (head == NULL)
        tb_map_del(&s->ip_count, key);
    else
        tb_map_put(&s->ip_count, key, head); /* its head may have gone */
}

void conn_close(struct conn *c)
{
    struct tbd *s = c->srv;

    if (c->client.state == CONN_CLOSING && c->tcp.data == NULL)
        return;
    c->client.state = CONN_CLOSING;
    tb_queue_remove(&c->link);
    tb_queue_remove(&c->dirty_link);
    tb_queue_remove(&c->notified_link);
    tb_queue_remove(&c->fresh_link);
    tb_map_del(&s->conn_by_id, c->client.id);
    if (c->client.session_id != 0 &&
        tb_map_get(&s->conn_by_session, (uint64_t)c->client.session_id) ==
            &c->client)
        tb_map_del(&s->conn_by_session, (uint64_t)c->client.session_id);
    if (c->counted)
        ip_release(s, c->peer_addr);
    proc_client_closed(&c->client);
    c->client.closed = 1;
    c->tcp.data = NULL; /* marks "closed" for late callers */
    uv_close((uv_handle_t *)&c->tcp, on_closed);
}

unsigned conn_close_all(struct tbd *s)
{
    unsigned n = 0;

    for (; !tb_queue_empty(&s->conns); n++)
        conn_close(
            TB_CONTAINER_OF(tb_queue_head(&s->conns), struct conn, link));
    return n;
}

/* A connection being closed is closed anyway 10 s after its client last
 * took some of what is left (conn_sweep_sessionless): a client that reads
 * nothing more would keep it, its descriptor and its place under
 * maxClientCnxns, for good; one that reads slowly goes on. */
static void closing_due(struct conn *c)
{
    tb_queue_remove(&c->fresh_link);
    c->due_ms = tbd_now_ms(c->srv) + CONN_SESSIONLESS_MS;
    tb_queue_insert_tail(&c->srv->fresh, &c->fresh_link);
}

void conn_close_after_flush(struct conn *c)
{
    if (c->client.state == CONN_CLOSING)
        return;
    c->client.state = CONN_CLOSING;
    conn_pause(c);
    if (unsent(c) == 0 && c->writing == 0) {
        conn_close(c);
        return;
    }
    mark_dirty(c);
    closing_due(c);
}

static void on_write(uv_write_t *req, int status)
{
    struct write_req *w = (struct write_req *)req;
    struct conn *c = req->handle->data;

    free(w->base);
    free(w);
    if (c == NULL)
        return; /* closed meanwhile */
    c->taken += c->writing;
    c->writing = 0;
    if (status < 0) {
        conn_close(c);
        return;
    }
    if (c->client.state == CONN_CLOSING)
        closing_due(c); /* it took what was written */
    if (unsent(c) > 0)
        mark_dirty(c);
    else
        output_drained(c);
}

/* After everything queued reached the kernel: a closing connection closes,
 * an open one paused for its output reads again. */
static void output_drained(struct conn *c)
{
    if (c->client.state == CONN_CLOSING)
        conn_close(c);
    else if (c->client.state == CONN_OPEN && !c->reading)
        process_input(c);
}

static void flush_one(struct conn *c)
{
    struct tb_wbuf *b = &c->out;
    struct write_req *w;
    uv_buf_t buf;
    int n;

    if (c->writing)
        return;
    if (c->tls != NULL && (b = tls_conn_output(c)) == NULL) {
        conn_close(c);
        return;
    }
    if (c->out.len == 0 && c->out.cap > OUT_KEEP)
        tb_wbuf_free(&c->out);
    if (b->len == 0)
        return;
    /* Most flushes fit in the socket buffer: write them at once, without
     * a write request and its callback on the next loop turn. */
    buf = uv_buf_init((char *)b->base, (unsigned)b->len);
    n = uv_try_write((uv_stream_t *)&c->tcp, &buf, 1);
    if (n < 0 && n != UV_EAGAIN) {
        conn_close(c);
        return;
    }
    c->taken += n > 0 ? (uint64_t)n : 0;
    if (n > 0 && (size_t)n == b->len) {
        b->len = 0;
        /* One large reply (a getChildren of thousands) must not leave every
         * connection that saw one holding its buffer. */
        if (b->cap > OUT_KEEP)
            tb_wbuf_free(b);
        output_drained(c);
        return;
    }
    if (n > 0) {
        memmove(b->base, b->base + n, b->len - (size_t)n);
        b->len -= (size_t)n;
    }
    w = malloc(sizeof *w);
    if (w == NULL) {
        conn_close(c);
        return;
    }
    c->writing = b->len;
    w->base = tb_wbuf_take(b, &buf.len);
    buf.base = (char *)w->base;
    if (uv_write(&w->req, (uv_stream_t *)&c->tcp, &buf, 1, on_write) != 0) {
        free(w->base);
        free(w);
        c->writing = 0;
        conn_close(c);
    }
}

void conn_notified(struct conn *c)
{
    if (tb_queue_empty(&c->notified_link))
        tb_queue_insert_tail(&c->srv->notified, &c->notified_link);
}

/* A watch's notice is often the next step of a lock's handoff, so it goes
 * out as soon as its txn is applied rather than when the turn ends: the
 * waiter's next request then comes while the loop is still awake, and a
 * wake-up costs tens of microseconds on a virtual machine.  The rest of
 * the turn's output still goes at its end, a write per connection. */
void conn_flush_notified(struct tbd *s)
{
    struct tb_queue *q;
    struct conn *c;

    while (!tb_queue_empty(&s->notified)) {
        q = tb_queue_head(&s->notified);
        tb_queue_remove(q);
        c = TB_CONTAINER_OF(q, struct conn, notified_link);
        if (!tb_queue_empty(&c->dirty_link)) {
            tb_queue_remove(&c->dirty_link);
            flush_one(c);
        }
    }
}

void conn_flush_all(struct tbd *s)
{
    struct tb_queue *q;
    struct conn *c;

    while (!tb_queue_empty(&s->dirty)) {
        q = tb_queue_head(&s->dirty);
        tb_queue_remove(q);
        c = TB_CONTAINER_OF(q, struct conn, dirty_link);
        flush_one(c);
    }
}

/* A connection reads into the server's shared buffer when nothing is left
 * over from its last read, so that an idle one holds no input buffer (one
 * of its own had a page or more of it touched: 4 kB per idle session). */
static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
    struct conn *c = h->data;
    size_t cap;
    uint8_t *p;

    (void)hint;
    /* TLS: ciphertext, which the SSL takes at once, in the shared buffer;
     * the plaintext goes to c->in (on_read). */
    if (c->in == NULL || c->tls != NULL) {
        buf->base = (char *)c->srv->in;
        buf->len = sizeof c->srv->in;
        return;
    }
    if (c->in_cap - c->in_len < IN_CHUNK) {
        cap = c->in_cap ? c->in_cap * 2 : IN_CHUNK;
        while (cap - c->in_len < IN_CHUNK)
            cap *= 2;
        p = realloc(c->in, cap);
        if (p == NULL) {
            buf->base = NULL;
            buf->len = 0;
            return;
        }
        c->in = p;
        c->in_cap = cap;
    }
    buf->base = (char *)c->in + c->in_len;
    buf->len = c->in_cap - c->in_len;
}

void conn_pause(struct conn *c)
{
    if (c->reading && c->tcp.data != NULL) {
        uv_read_stop((uv_stream_t *)&c->tcp);
        c->reading = 0;
    }
}

static int should_pause(const struct conn *c)
{
    unsigned cap = (unsigned)c->srv->cfg->max_outstanding;

    /* The SSL's own records too: a TLS client that never reads can make
     * it answer without end (alerts to renegotiations, key updates). */
    return c->client.nreqs >= cap || unsent(c) + c->writing > OUT_PAUSE;
}

static void on_read(uv_stream_t *stream, ssize_t n, const uv_buf_t *buf);

void conn_resume(struct conn *c)
{
    if (c->client.state == CONN_CLOSING || c->tcp.data == NULL ||
        should_pause(c))
        return;
    process_input(c);
}

/* Runs every complete frame in the input buffer, in order, unless the
 * connection must wait (backpressure, a handshake in the log, or a frame
 * proc holds behind a reconfig of the client's). */
static void process_input(struct conn *c)
{
    size_t off = 0, used;
    struct tb_str frame;
    int rv, held = 0;

    while (c->client.state != CONN_CLOSING &&
           c->client.state != CONN_SESSION && !should_pause(c)) {
        if (c->client.state == CONN_NEW && c->in_len - off >= 4 && off == 0) {
            rv = admin_try(c);
            if (rv == 1)
                return;
            if (rv == 2)
                break; /* a word whose argument has not all arrived */
        }
        rv = tb_frame_split(c->in + off, c->in_len - off,
                            c->srv->cfg->jute_maxbuffer, &frame, &used);
        if (rv == TB_EAGAIN)
            break;
        if (rv != 0) {
            tb_log_fields(TB_LOG_WARN,
                          TB_LOG_FIELDS(TB_LOG_STR("peer", c->peer),
                                        TB_LOG_STR("refused", "frame")),
                          "closing connection from %s:%d: frame length %d "
                          "outside 0..%zu", c->peer, c->peer_port,
                          (int32_t)tb_load_be32(c->in + off),
                          (size_t)c->srv->cfg->jute_maxbuffer);
            conn_close(c);
            return;
        }
        if ((held = proc_frame(&c->client, frame) == PROC_HELD))
            break; /* kept, and run again once resumed */
        c->received++;
        c->srv->packets_received++;
        off += used;
        if (c->tcp.data == NULL)
            return; /* the frame closed the connection */
    }
    if (off > 0) {
        memmove(c->in, c->in + off, c->in_len - off);
        c->in_len -= off;
    }
    if (c->in_len == 0 && c->in != c->srv->in) {
        free(c->in);
        c->in = NULL;
        c->in_cap = 0;
    }
    if (c->client.state == CONN_CLOSING)
        return;
    if (held || should_pause(c) || c->client.state == CONN_SESSION) {
        conn_pause(c);
    } else if (c->ended) {
        proc_close_after_flush(&c->client); /* every whole frame has run */
    } else if (!c->reading) {
        if (uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) == 0)
            c->reading = 1;
    }
}

/* After a read into the shared buffer: what is left there moves into a
 * buffer of the connection's own, before another connection reads. */
static void keep_rest(struct conn *c)
{
    size_t len = c->client.state == CONN_CLOSING ? 0 : c->in_len;

    c->in = NULL;
    c->in_cap = 0;
    c->in_len = 0;
    if (len == 0)
        return;
    if ((c->in = malloc(len)) == NULL) {
        tb_log(TB_LOG_WARN,
               "closing connection from %s:%d: no memory for its input",
               c->peer, c->peer_port);
        conn_close(c);
        return;
    }
    memcpy(c->in, c->srv->in, len);
    c->in_cap = c->in_len = len;
}

static void on_read(uv_stream_t *stream, ssize_t n, const uv_buf_t *buf)
{
    struct conn *c = stream->data;
    int rv;

    if (n < 0) {
        conn_close(c);
        return;
    }
    c->heard_ms = tbd_now_ms(c->srv);
    tbd_shown_ns_expire(c->srv); /* the requests read now start now */
    if (c->tls != NULL) {
        /* The plaintext goes to the shared buffer too, as a plain read's
         * bytes do: the SSL has copied the ciphertext out of it first. */
        if (c->in == NULL) {
            c->in = c->srv->in;
            c->in_cap = sizeof c->srv->in;
            c->in_len = 0;
        }
        /* Requests that came with the client's close_notify are run, as
         * a plain connection's are before its end: a closeSession among
         * them ends the session (and its ephemeral nodes) now. */
        rv = tls_conn_input(c, (uint8_t *)buf->base, (size_t)n);
        if (rv < 0) {
            proc_close_after_flush(&c->client);
        } else {
            c->ended = rv == 1;
            process_input(c);
        }
        if (c->in == c->srv->in)
            keep_rest(c);
        if (c->tcp.data != NULL && tls_conn_unsent(c) > 0)
            mark_dirty(c); /* the handshake's records */
        return;
    }
    if ((uint8_t *)buf->base != c->srv->in) {
        c->in_len += (size_t)n;
        process_input(c);
        return;
    }
    c->in = c->srv->in;
    c->in_cap = sizeof c->srv->in;
    c->in_len = (size_t)n;
    process_input(c);
    keep_rest(c);
}

static int peer_allowed(struct tbd *s, struct conn *c)
{
    uint64_t key = ip_key(c->peer_addr);
    struct ip_conns *e = tb_map_get(&s->ip_count, key);

    if (s->cfg->max_client_cnxns <= 0)
        return 1;
    while (e != NULL && memcmp(e->addr, c->peer_addr, 16) != 0)
        e = e->next;
    if (e != NULL && e->n >= (uint32_t)s->cfg->max_client_cnxns)
        return 0;
    if (e == NULL) {
        if ((e = calloc(1, sizeof *e)) == NULL)
            return 0;
        memcpy(e->addr, c->peer_addr, 16);
        e->next = tb_map_get(&s->ip_count, key);
        if (tb_map_put(&s->ip_count, key, e) != 0) {
            free(e);
            return 0;
        }
    }
    e->n++;
    c->counted = 1;
    return 1;
}

static void read_peer(struct conn *c)
{
    struct sockaddr_storage ss;
    int len = sizeof ss;

    strcpy(c->peer, "unknown");
    if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&ss, &len) != 0)
        return;
    if (ss.ss_family == AF_INET) {
        struct sockaddr_in *in = (struct sockaddr_in *)&ss;
        uv_ip4_name(in, c->peer, sizeof c->peer);
        c->peer_port = ntohs(in->sin_port);
        c->peer_addr[10] = c->peer_addr[11] = 0xff;
        memcpy(c->peer_addr + 12, &in->sin_addr, 4);
    } else if (ss.ss_family == AF_INET6) {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
        c->peer_port = ntohs(in6->sin6_port);
        memcpy(c->peer_addr, &in6->sin6_addr, 16);
        /* An IPv4 client of a dual-stack port is written as IPv4, as Java
         * does: its ip id is what ip ACLs match ("ip:10.0.0.0/8"). */
        if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr))
            inet_ntop(AF_INET, c->peer_addr + 12, c->peer, sizeof c->peer);
        else
            uv_ip6_name(in6, c->peer, sizeof c->peer);
    }
}

/* Descriptors no client connection may take: the log's segments,
 * snapshots and the like, and those of each HTTP port on (its listener,
 * its epoll set, its connections).  The log cannot go on without its next
 * segment (the server stops), so a flood of connections must not use
 * them up. */
#define FD_RESERVE 64
#define FD_HTTP_PORT (2 + HTTPD_MAX_CONNS)

static uint64_t max_conns_for_fds(const struct tb_config *cfg)
{
    uint64_t keep = FD_RESERVE +
                    (uint64_t)(cfg->metrics.enabled != 0) * FD_HTTP_PORT +
                    (uint64_t)(cfg->admin.enabled != 0) * FD_HTTP_PORT;
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return UINT64_MAX;
    return rl.rlim_cur > 2 * keep ? rl.rlim_cur - keep : rl.rlim_cur / 2;
}

/* Closes a connection refused before its first byte, saying why (fmt; NULL
 * when the server is stopping: nothing to say, nothing to count).  A flood
 * is logged a line a second at most, each line saying how many went
 * unsaid since the one before, and formatted only then; mntr counts all. */
static void refuse(struct conn *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void refuse(struct conn *c, const char *fmt, ...)
{
    struct tbd *s = c->srv;
    uint64_t now = tbd_now_ms(s);
    char why[160];
    va_list ap;

    if (fmt == NULL)
        goto close;
    s->conns_rejected++;
    if (!tb_log_due(&s->refused_log, now))
        goto close;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    tb_log_rated_fields(&s->refused_log, TB_LOG_WARN,
                        TB_LOG_FIELDS(TB_LOG_STR("peer", c->peer),
                                      TB_LOG_STR("refused", "limit")),
                        "%s; closing %s", why, c->peer);
close:
    c->tcp.data = NULL;
    uv_close((uv_handle_t *)&c->tcp, on_closed);
}

static void on_connection(uv_stream_t *server, int status)
{
    struct tbd *s = server->data;
    struct conn *c;

    if (status < 0)
        return;
    c = calloc(1, sizeof *c);
    if (c == NULL) { /* the connection waits in the kernel */
        s->accept_again |= server == (uv_stream_t *)&s->tls_listener ? 2 : 1;
        return;
    }
    uv_tcp_init(s->loop, &c->tcp);
    c->tcp.data = c;
    c->srv = s;
    if (uv_accept(server, (uv_stream_t *)&c->tcp) != 0) {
        c->tcp.data = NULL;
        uv_close((uv_handle_t *)&c->tcp, on_closed);
        return;
    }
    read_peer(c);
    if (s->stopping) {
        refuse(c, NULL);
        return;
    }
    if (s->conn_by_id.count >= s->max_conns) {
        refuse(c,
               "too many connections (%llu, what the open-file limit "
               "leaves room for)",
               (unsigned long long)s->max_conns);
        return;
    }
    if (!peer_allowed(s, c)) {
        refuse(c, "too many connections from %s (maxClientCnxns %d)", c->peer,
               s->cfg->max_client_cnxns);
        return;
    }
    uv_tcp_nodelay(&c->tcp, 1);
    c->client.ops = &conn_client_ops;
    c->client.srv = s;
    c->client.id = ++s->next_conn_id;
    c->client.peer = c->peer;
    c->client.peer_port = c->peer_port;
    c->client.state = CONN_NEW;
    c->established_ms = c->heard_ms = tbd_now_ms(s);
    c->due_ms = c->established_ms + CONN_SESSIONLESS_MS;
    tb_wbuf_init(&c->out);
    tb_wbuf_init(&c->client.ids);
    tb_queue_init(&c->client.reqs);
    tb_queue_init(&c->dirty_link);
    tb_queue_init(&c->notified_link);
    tb_queue_insert_tail(&s->conns, &c->link);
    tb_queue_insert_tail(&s->fresh, &c->fresh_link);
    auth_init_conn(&c->client);
    /* Unmapped, no result of the log would find it (its session's
     * creation): it would wait for one for good. */
    if (tb_map_put(&s->conn_by_id, c->client.id, &c->client) != 0 ||
        (server == (uv_stream_t *)&s->tls_listener && tls_conn_new(c) != 0)) {
        tb_log(TB_LOG_WARN, "closing connection from %s: no memory", c->peer);
        conn_close(c);
        return;
    }
    process_input(c);
}

void conn_accept_again(struct tbd *s)
{
    int which = s->accept_again;

    s->accept_again = 0;
    if (s->stopping)
        return;
    if (which & 1)
        on_connection((uv_stream_t *)&s->listener, 0);
    if (which & 2)
        on_connection((uv_stream_t *)&s->tls_listener, 0);
}

/* As ZooKeeper (its sessionless connection timeout, and Netty's TLS
 * handshake timeout), both 10 s; and as long for one being closed to
 * hand its last replies to a client that does not read them.  Connections
 * join `fresh` in the order they came, or began to close, each due 10 s
 * later, so the sweep stops at the first one not due; those with a
 * session leave as the sweep passes them. */
void conn_sweep_sessionless(struct tbd *s)
{
    uint64_t now = tbd_now_ms(s);
    struct tb_queue *q;
    struct conn *c;
    int closing;

    while (!tb_queue_empty(&s->fresh)) {
        q = tb_queue_head(&s->fresh);
        c = TB_CONTAINER_OF(q, struct conn, fresh_link);
        closing = c->client.state == CONN_CLOSING;
        if ((c->client.state == CONN_NEW || closing) && now < c->due_ms)
            break;
        tb_queue_remove(q);
        if (c->client.state != CONN_NEW && !closing)
            continue;
        if (tb_log_due(&s->refused_log, now))
            tb_log_rated_fields(
                &s->refused_log, TB_LOG_INFO,
                TB_LOG_FIELDS(
                    TB_LOG_STR("peer", c->peer),
                    TB_LOG_STR("refused", closing ? "unread" : "no session")),
                "%s after %d ms; closing %s",
                closing ? "replies left unread" : "no session",
                CONN_SESSIONLESS_MS, c->peer);
        conn_close(c);
    }
}

/* A client whose output holds its requests back (should_pause) is read no
 * more, its pings among them: while the kernel takes more of that output
 * at each tick, the client is reading it, and its session is alive; as is
 * one waiting for its reconfig's answer (its pings wait unread).  So is
 * a closing connection's 10 s (closing_due): a large answer (a dump, cons)
 * goes as one write, done only when the last of it is taken, and a slow
 * client reading it steadily must not be cut off meanwhile. */
void conn_touch_readers(struct tbd *s)
{
    struct tb_queue *q;
    struct conn *c;
    uint64_t now;

    TB_QUEUE_FOREACH (q, &s->conns) {
        c = TB_CONTAINER_OF(q, struct conn, link);
        /* what the write in flight has given the kernel so far, too */
        now = c->taken + c->writing -
              (c->writing != 0
                   ? uv_stream_get_write_queue_size((uv_stream_t *)&c->tcp)
                   : 0);
        if (now != c->taken_seen && c->client.state == CONN_CLOSING)
            closing_due(c);
        else if (c->client.state == CONN_OPEN && !c->reading &&
                 (now != c->taken_seen || c->client.reconfiguring))
            session_touch(s, c->client.session_id);
        c->taken_seen = now;
    }
}

static void on_check(uv_check_t *h)
{
    conn_flush_all(h->data);
    tbd_shown_ns_expire(h->data); /* a turn ends */
}

static int listen_on(struct tbd *s, uv_tcp_t *h, const char *what,
                     const char *address, int port)
{
    struct sockaddr_storage addr;
    int rv;

    if (uv_ip4_addr(address, port, (struct sockaddr_in *)&addr) != 0 &&
        uv_ip6_addr(address, port, (struct sockaddr_in6 *)&addr) != 0) {
        tb_log(TB_LOG_ERROR, "bad %sAddress '%s'", what, address);
        return TB_EINVAL;
    }
    uv_tcp_init(s->loop, h);
    h->data = s;
    rv = uv_tcp_bind(h, (struct sockaddr *)&addr, 0);
    if (rv == 0)
        rv = uv_listen((uv_stream_t *)h, 511, on_connection);
    if (rv != 0) {
        tb_log(TB_LOG_ERROR, "cannot listen on %s:%d (%s): %s", address, port,
               what, uv_strerror(rv));
        return TB_EIO;
    }
    return 0;
}

int conn_listen(struct tbd *s)
{
    const struct tb_config *cfg = s->cfg;
    int rv;

    if (cfg->tls.port != 0 && (rv = tls_server_init(s)) != 0)
        return rv;
    if (cfg->client_port >= 0 &&
        (rv = listen_on(s, &s->listener, "clientPort", cfg->client_port_address,
                        cfg->client_port)) != 0)
        return rv;
    if (cfg->tls.port != 0 &&
        (rv = listen_on(s, &s->tls_listener, "secureClientPort",
                        cfg->tls.address, cfg->tls.port)) != 0) {
        if (cfg->client_port >= 0) /* or the loop waits */
            uv_close((uv_handle_t *)&s->listener, NULL);
        return rv;
    }
    if (cfg->tls.port != 0 && cfg->tls.cert_reload)
        tls_server_watch(s);
    s->max_conns = max_conns_for_fds(cfg);
    uv_check_init(s->loop, &s->flusher);
    s->flusher.data = s;
    uv_check_start(&s->flusher, on_check);
    return 0;
}

void conn_unlisten(struct tbd *s)
{
    if (s->cfg->client_port >= 0)
        uv_close((uv_handle_t *)&s->listener, NULL);
    uv_close((uv_handle_t *)&s->flusher, NULL);
    if (s->cfg->tls.port == 0)
        return;
    uv_close((uv_handle_t *)&s->tls_listener, NULL);
    tls_stores_unwatch(&s->tls_stores);
}
