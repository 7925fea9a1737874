/* The peer links of an ensemble (peer.h says what they carry). */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proto/proto.h"
#include "server/config/config.h"
#include "server/http/election.h"
#include "server/logging/log.h"
#include "server/net/net.h"
#include "server/peer/peer.h"
#include "server/peer/tunnel.h"
#include "server/proc/proc.h"
#include "server/replog/replog.h"
#include "server/server.h"

enum {
    PEER_HELLO = 1,
    PEER_FORWARD = 2,
    PEER_TOUCH = 3,
    PEER_FAILED = 4,
    PEER_OWN = 5,
    PEER_OWNED = 6
};

#define FRAME_HDR 5
/* A txn is at most a client's frame (jute.maxbuffer) and what the server
 * adds; anything larger is not a peer speaking this protocol. */
#define MAX_FRAME ((size_t)64 << 20)
/* How often the leader is looked for: a follower learns of a new one
 * within this (raft has no callback for it). */
#define POLL_MS 20

struct link {
    uv_tcp_t tcp;
    uv_pipe_t pipe;  /* with peer TLS: the plaintext, once secured */
    uv_stream_t *st; /* what frames go on: &tcp, or &pipe */
    void *secured;   /* with peer TLS: the handshake on its way */
    int handles;     /* not yet closed */
    struct peer *p;
    struct tb_queue node; /* in p->accepted, for a follower's link */
    uint64_t id;
    int leader_id;       /* the leader it goes to; 0: a follower's link */
    int from;            /* a follower's link: its server id (HELLO) */
    int connected;       /* to the leader: the connect completed */
    struct tb_wbuf in;   /* what was read and not yet handled */
    struct tb_wbuf held; /* frames sent before the connect completed */
};

struct member {
    int id;
    struct sockaddr_storage addr;
    char host[256]; /* as configured, for peer TLS; empty: addr's */
};

struct peer {
    struct tbd *srv;
    uv_tcp_t listener;
    uv_timer_t timer;
    struct member *members;
    unsigned n;
    struct tb_queue accepted; /* struct link: followers' */
    struct link *out;         /* to the leader, or NULL */
    uint64_t next_id;
    struct tb_map touched; /* session ids heard from since the last report */
    struct tb_map owner;   /* the leader: session id -> the server id it is
                              held on (PEER_OWN), as a pointer */
    uint64_t touch_at_ms;  /* when the next report goes */
    int open_handles;      /* the listener and the timer, closing */
    int unreachable;       /* the leader last found so, once said */
    int lost;              /* the leader whose working link closed last */
    int pushing, push_again; /* push_commit's barrier */
    uint64_t leaderless_since; /* no leader known since then; 0: one is */
    int dropped_clients;       /* ... for so long the clients went */
    int logged_leader;         /* the leader the log last named; 0: none */
    int removed;               /* not a member (peer_set_outside) */
    struct election_timer election; /* election_time's (http/election.h) */
};

/* A forwarded txn proposed on the leader, for its answer: the links may
 * be gone by then (the peer stopped first), so they are looked up again. */
struct forward {
    struct tbd *srv;
    uint64_t link_id;
    int64_t origin;
};

static void link_close(struct link *k);

static struct peer *peer_of(struct tbd *s)
{
    return s->peer;
}

/* ---- writing ---- */

struct write_req {
    uv_write_t req;
    struct link *k;
};

static void written(uv_write_t *req, int status)
{
    struct write_req *w = TB_CONTAINER_OF(req, struct write_req, req);

    if (status != 0 && !uv_is_closing((uv_handle_t *)&w->k->tcp))
        link_close(w->k);
    free(w);
}

static void write_out(struct link *k, const void *p, size_t n)
{
    struct write_req *w = malloc(sizeof *w + n);
    uv_buf_t b;

    if (w == NULL) {
        link_close(k);
        return;
    }
    w->k = k;
    memcpy(w + 1, p, n);
    b = uv_buf_init((char *)(w + 1), (unsigned)n);
    if (uv_write(&w->req, k->st, &b, 1, written) != 0) {
        free(w);
        link_close(k);
    }
}

static void link_send(struct link *k, int type, const void *a, size_t an,
                      const void *b, size_t bn)
{
    struct tb_wbuf *f = &k->p->srv->scratch2;
    uint8_t hdr[FRAME_HDR];

    tb_store_be32(hdr, (uint32_t)(1 + an + bn));
    hdr[4] = (uint8_t)type;
    if (!k->connected) { /* sent once the connect completes */
        tb_wbuf_put(&k->held, hdr, sizeof hdr);
        tb_wbuf_put(&k->held, a, an);
        tb_wbuf_put(&k->held, b, bn);
        if (k->held.oom)
            link_close(k);
        return;
    }
    f->len = 0;
    tb_wbuf_put(f, hdr, sizeof hdr);
    tb_wbuf_put(f, a, an);
    tb_wbuf_put(f, b, bn);
    if (f->oom)
        link_close(k);
    else
        write_out(k, f->base, f->len);
}

/* ---- closing ---- */

static void handle_closed(uv_handle_t *h)
{
    struct link *k = h->data;

    if (--k->handles > 0)
        return;
    tb_wbuf_free(&k->in);
    tb_wbuf_free(&k->held);
    free(k);
}

/* Every client with a write forwarded on it loses its connection: the
 * write's outcome is unknown; so does one whose handshake waits for the
 * leader (a new session, or one resumed here). */
static void drop_forwarded(struct tbd *s)
{
    struct tb_queue *q, *next;
    struct conn *c;

    for (q = tb_queue_head(&s->conns); q != &s->conns; q = next) {
        next = q->next;
        c = TB_CONTAINER_OF(q, struct conn, link);
        if ((c->client.writes_in_flight > 0 ||
             c->client.state == CONN_SESSION) &&
            c->tcp.data != NULL)
            conn_close(c);
    }
}

static void link_close(struct link *k)
{
    struct peer *p = k->p;

    if (uv_is_closing((uv_handle_t *)&k->tcp))
        return;
    if (k->secured != NULL)
        tunnel_cancel(k->secured);
    k->secured = NULL;
    if (k->handles == 2)
        uv_close((uv_handle_t *)&k->pipe, handle_closed);
    if (k == p->out) {
        p->out = NULL;
        if (k->connected) {
            tb_log(TB_LOG_INFO, "peer: link to the leader (server %d) closed",
                   k->leader_id);
            p->lost = k->leader_id;
            election_lost(&p->election, k->leader_id, tbd_now_ms(p->srv));
        }
        drop_forwarded(p->srv);
        /* Reset, not closed: the kernel would otherwise deliver what is
         * still unsent once the leader is reached again, writes whose
         * clients were told the connection was lost, and which may have
         * written since through another server. */
        if (uv_tcp_close_reset(&k->tcp, handle_closed) == 0)
            return;
    } else {
        tb_queue_remove(&k->node);
    }
    uv_close((uv_handle_t *)&k->tcp, handle_closed);
}

/* ---- frames a follower sends, on the leader ---- */

static struct link *accepted_link(struct peer *p, uint64_t id)
{
    struct tb_queue *q;

    TB_QUEUE_FOREACH (q, &p->accepted)
        if (TB_CONTAINER_OF(q, struct link, node)->id == id)
            return TB_CONTAINER_OF(q, struct link, node);
    return NULL;
}

static void send_failed(struct link *k, int64_t origin, int status)
{
    uint8_t b[12];

    tb_store_be64(b, (uint64_t)origin);
    tb_store_be32(b + 8, (uint32_t)status);
    link_send(k, PEER_FAILED, b, sizeof b, NULL, 0);
}

/* A forwarded write is applied here, and its follower replies once it
 * knows the entry is committed, which raft tells it with the next message
 * it sends: a heartbeat, up to heartbeatInterval later.  A barrier sends it
 * now (one at a time; one more if writes were applied meanwhile). */
static void push_commit(struct peer *p);

static void pushed(void *arg, int status)
{
    struct peer *p = peer_of(arg);

    if (p == NULL)
        return;
    p->pushing = 0;
    /* A barrier fails as raft gives leadership up, from inside that: one
     * started there would go into the log it is tearing down.  A follower
     * then has nothing more to learn from this one. */
    if (status != 0)
        p->push_again = 0;
    if (p->push_again)
        push_commit(p);
}

static void push_commit(struct peer *p)
{
    if (p->pushing) {
        p->push_again = 1;
        return;
    }
    p->push_again = 0;
    p->pushing = replog_barrier(p->srv->log, pushed, p->srv) == 0;
}

static void forward_done(void *arg, int status, int64_t index)
{
    struct forward *f = arg;
    struct peer *p = peer_of(f->srv);
    struct link *k;

    (void)index;
    if (p != NULL && status == 0)
        push_commit(p);
    if (status != 0 && p != NULL && (k = accepted_link(p, f->link_id)) != NULL)
        send_failed(k, f->origin, status);
    free(f);
}

static void on_forward(struct link *k, const uint8_t *p, size_t n)
{
    struct tbd *s = k->p->srv;
    struct tb_rd r = tb_rd_make(p, n);
    struct forward *f;
    struct tb_txn t;
    intptr_t owner;
    int rv;

    if (tb_txn_decode(&r, &t) != 0) {
        tb_log(TB_LOG_WARN, "peer: server %d forwarded a malformed txn",
               k->from);
        link_close(k);
        return;
    }
    if ((f = malloc(sizeof *f)) == NULL) {
        send_failed(k, t.origin, TB_ENOMEM);
        return;
    }
    *f = (struct forward){s, k->id, t.origin};
    owner = (intptr_t)tb_map_get(&k->p->owner, (uint64_t)t.session);
    if (!replog_is_leader(s->log))
        rv = TB_ECONNECTIONLOSS;
    else if (owner != 0 && owner != k->from)
        rv = TB_ESESSIONMOVED;
    else
        rv = proc_propose_txn(s, &t, forward_done, f);
    if (rv != 0) {
        free(f);
        send_failed(k, t.origin, rv);
    }
}

/* Sessions now held on k's follower: recorded, and the leader's own
 * connection of each, if any, closed (the client has moved). */
static void on_own(struct link *k, const uint8_t *p, size_t n)
{
    struct tbd *s = k->p->srv;
    uint8_t b[8];
    struct proc_client *c;
    uint64_t id;
    size_t i;

    for (i = 0; i + 16 <= n; i += 16) {
        id = tb_load_be64(p + i);
        memcpy(b, p + i + 8, 8);
        if (!replog_is_leader(s->log)) {
            send_failed(k, (int64_t)tb_load_be64(b), TB_ECONNECTIONLOSS);
            continue;
        }
        if (tb_map_put(&k->p->owner, id, (void *)(intptr_t)k->from) != 0) {
            send_failed(k, (int64_t)tb_load_be64(b), TB_ENOMEM);
            continue;
        }
        if ((c = tb_map_get(&s->conn_by_session, id)) != NULL)
            c->ops->close(c);
        link_send(k, PEER_OWNED, b, sizeof b, NULL, 0);
    }
}

static void on_touch(struct link *k, const uint8_t *p, size_t n)
{
    size_t i;

    for (i = 0; i + 8 <= n; i += 8)
        session_touch(k->p->srv, (int64_t)tb_load_be64(p + i));
}

/* ---- reading ---- */

static void on_frame(struct link *k, int type, const uint8_t *p, size_t n)
{
    struct proc_client *c;

    switch (type) {
    case PEER_HELLO:
        if (n >= 4)
            k->from = (int)tb_load_be32(p);
        break;
    case PEER_FORWARD:
        on_forward(k, p, n);
        break;
    case PEER_TOUCH:
        on_touch(k, p, n);
        break;
    case PEER_OWN:
        on_own(k, p, n);
        break;
    case PEER_OWNED:
        c = n >= 8 ? tb_map_get(&k->p->srv->conn_by_id, tb_load_be64(p))
                   : NULL;
        if (c != NULL && !c->closed && c->state == CONN_SESSION &&
            c->session_id != 0)
            session_claimed(c);
        break;
    case PEER_FAILED:
        c = n >= 12 ? tb_map_get(&k->p->srv->conn_by_id, tb_load_be64(p))
                    : NULL;
        if (c != NULL && !c->closed) {
            tb_log(TB_LOG_WARN,
                   "peer: the leader refused a request of session 0x%llx "
                   "(%s): its connection is closed",
                   (unsigned long long)c->session_id,
                   tb_strerror((int32_t)tb_load_be32(p + 8)));
            c->ops->close(c);
        }
        break;
    default:
        tb_log(TB_LOG_WARN, "peer: unknown frame %d: closing the link", type);
        link_close(k);
    }
}

static void alloc_cb(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
    struct link *k = h->data;

    (void)hint;
    if (tb_wbuf_reserve(&k->in, 65536) != 0) {
        *buf = uv_buf_init(NULL, 0);
        return;
    }
    *buf = uv_buf_init((char *)k->in.base + k->in.len, 65536);
}

static void read_cb(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
    struct link *k = st->data;
    size_t off = 0, len;

    (void)buf;
    if (nread < 0) {
        link_close(k);
        return;
    }
    k->in.len += (size_t)nread;
    while (k->in.len - off >= FRAME_HDR && !uv_is_closing((uv_handle_t *)st)) {
        len = tb_load_be32(k->in.base + off);
        if (len < 1 || len > MAX_FRAME) {
            tb_log(TB_LOG_WARN, "peer: a frame of %zu bytes: closing", len);
            link_close(k);
            return;
        }
        if (k->in.len - off < 4 + len)
            break;
        on_frame(k, k->in.base[off + 4], k->in.base + off + FRAME_HDR, len - 1);
        off += 4 + len;
    }
    if (uv_is_closing((uv_handle_t *)st))
        return;
    memmove(k->in.base, k->in.base + off, k->in.len - off);
    k->in.len -= off;
}

/* A link on no list yet, closed. */
static void link_discard(struct link *k)
{
    if (k->handles == 2)
        uv_close((uv_handle_t *)&k->pipe, handle_closed);
    uv_close((uv_handle_t *)&k->tcp, handle_closed);
}

static struct link *link_new(struct peer *p)
{
    struct link *k = calloc(1, sizeof *k);

    if (k == NULL)
        return NULL;
    k->p = p;
    k->id = ++p->next_id;
    tb_wbuf_init(&k->in);
    tb_wbuf_init(&k->held);
    uv_tcp_init(p->srv->loop, &k->tcp);
    k->tcp.data = k;
    k->st = (uv_stream_t *)&k->tcp;
    k->handles = 1;
    uv_tcp_nodelay(&k->tcp, 1);
    if (p->srv->quorum_tls != NULL) {
        uv_pipe_init(p->srv->loop, &k->pipe, 0);
        k->pipe.data = k;
        k->handles = 2;
    }
    return k;
}

/* With peer TLS, the link's socket is handed to a tunnel (a copy: k->tcp
 * keeps its own until the link closes), which calls `cb` with the
 * plaintext; `peer` as in tunnel_start.  0, or the link is closed. */
static int secure(struct link *k, const char *peer, void (*cb)(void *, int))
{
    uv_os_fd_t fd;
    int copy;

    if (uv_fileno((uv_handle_t *)&k->tcp, &fd) != 0 ||
        (copy = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0 ||
        (k->secured = tunnel_start(k->p->srv->quorum_tls, copy, peer != NULL,
                                   peer, cb, k)) == NULL) {
        link_close(k);
        return TB_EIO;
    }
    return 0;
}

/* The plaintext `fd` from the tunnel, for frames from now on; 0, or the
 * link is closed. */
static int secured(struct link *k, int fd)
{
    k->secured = NULL;
    if (fd < 0 || uv_pipe_open(&k->pipe, fd) != 0) {
        if (fd >= 0)
            close(fd);
        link_close(k);
        return TB_EIO;
    }
    k->st = (uv_stream_t *)&k->pipe;
    return 0;
}

/* ---- a follower's link to the leader ---- */

static const struct member *member(const struct peer *p, int id)
{
    unsigned i;

    for (i = 0; i < p->n; i++)
        if (p->members[i].id == id)
            return &p->members[i];
    return NULL;
}

/* "host:port" of a member's election port, its host as configured. */
static int member_address(const struct member *m, char *buf, size_t n)
{
    const struct sockaddr_in *a4 = (const struct sockaddr_in *)&m->addr;
    const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)&m->addr;
    char ip[INET6_ADDRSTRLEN];
    int v6 = m->addr.ss_family == AF_INET6;

    if (inet_ntop(m->addr.ss_family, v6 ? (const void *)&a6->sin6_addr
                                        : (const void *)&a4->sin_addr,
                  ip, sizeof ip) == NULL)
        return TB_EINVAL;
    snprintf(buf, n, "%s%s%s:%d", v6 && !m->host[0] ? "[" : "",
             m->host[0] ? m->host : ip, v6 && !m->host[0] ? "]" : "",
             ntohs(v6 ? a6->sin6_port : a4->sin_port));
    return 0;
}

static void following(struct link *k);
static void leader_secured(void *arg, int fd);

static void connected_cb(uv_connect_t *req, int status)
{
    struct link *k = req->data;
    struct peer *p = k->p;
    const struct member *m;
    char peer[300];

    free(req);
    if (status == UV_ECANCELED)
        return;
    /* Its link closed and nothing listens on its port any more: the
     * leader's process is gone (a connection refused is the kernel's
     * answer at once; a host gone answers nothing, and raft's timeouts
     * apply). */
    if (status == UV_ECONNREFUSED && k == p->out && k->leader_id == p->lost) {
        p->lost = 0;
        replog_leader_gone(p->srv->log, k->leader_id);
    }
    if (status != 0 || k != p->out) {
        /* Tried again every POLL_MS while raft still names it: said once. */
        if (k == p->out && p->unreachable != k->leader_id)
            tb_log(TB_LOG_WARN,
                   "peer: cannot reach the leader (server %d): "
                   "%s",
                   k->leader_id, uv_strerror(status));
        if (k == p->out)
            p->unreachable = k->leader_id;
        link_close(k);
        return;
    }
    p->unreachable = 0;
    if (p->srv->quorum_tls == NULL) {
        following(k);
        return;
    }
    m = member(p, k->leader_id);
    if (m == NULL || member_address(m, peer, sizeof peer) != 0)
        link_close(k);
    else
        (void)secure(k, peer, leader_secured);
}

static void leader_secured(void *arg, int fd)
{
    struct link *k = arg;

    if (secured(k, fd) == 0)
        following(k);
}

/* The link to the leader is up: the follower says who it is, sends what
 * waited, and reads. */
static void following(struct link *k)
{
    struct peer *p = k->p;
    uint8_t id[4];

    tb_log(TB_LOG_INFO, "peer: following server %d", k->leader_id);
    k->connected = 1;
    tb_store_be32(id, (uint32_t)p->srv->server_id);
    write_out(k, (uint8_t[]){0, 0, 0, 5, PEER_HELLO}, FRAME_HDR);
    write_out(k, id, sizeof id);
    if (k->held.len > 0)
        write_out(k, k->held.base, k->held.len);
    tb_wbuf_free(&k->held);
    uv_read_start(k->st, alloc_cb, read_cb);
}

static void follow(struct peer *p, int leader)
{
    const struct member *m = member(p, leader);
    unsigned timeout = 2 * (unsigned)p->srv->cfg->election_timeout;
    uv_connect_t *req;
    struct link *k;
    uv_os_fd_t fd;

    if (p->out != NULL)
        link_close(p->out);
    if (m == NULL || (k = link_new(p)) == NULL)
        return;
    if ((req = malloc(sizeof *req)) == NULL) {
        link_discard(k);
        return;
    }
    k->leader_id = leader;
    req->data = k;
    p->out = k;
    if (uv_tcp_connect(req, &k->tcp, (const struct sockaddr *)&m->addr,
                       connected_cb) != 0) {
        free(req);
        link_close(k);
        return;
    }
    /* Writes (or the connect) unanswered for two elections end the link,
     * instead of waiting in the kernel for as long as the leader is out of
     * reach: their clients are told, and the rest goes to the next. */
    if (uv_fileno((uv_handle_t *)&k->tcp, &fd) == 0)
        (void)setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &timeout,
                         sizeof timeout);
}

/* ---- sessions heard from, reported to the leader ---- */

static void report_touched(struct peer *p)
{
    struct tb_wbuf *b = &p->srv->scratch;
    uint8_t x[8];
    uint64_t id;
    size_t i = 0;
    void *v;

    if (p->out == NULL || p->touched.count == 0)
        return;
    b->len = 0;
    while (tb_map_next(&p->touched, &i, &id, &v)) {
        tb_store_be64(x, id);
        tb_wbuf_put(b, x, sizeof x);
    }
    if (!b->oom)
        link_send(p->out, PEER_TOUCH, b->base, b->len, NULL, 0);
    tb_map_free(&p->touched);
    tb_map_init(&p->touched);
}

/* A server that has known no leader for longer than an election takes
 * (twice the election timeout) is cut off from the others: its clients'
 * connections close, so that they move to a server that can serve them,
 * as ZooKeeper's do. */
static void leaderless(struct peer *p, int none, uint64_t now)
{
    struct tbd *s = p->srv;
    struct tb_queue *q, *next;
    unsigned n = 0;

    if (!none) {
        p->leaderless_since = 0;
        p->dropped_clients = 0;
        return;
    }
    if (p->leaderless_since == 0)
        p->leaderless_since = now;
    if (p->dropped_clients ||
        now - p->leaderless_since < 2 * (uint64_t)s->cfg->election_timeout)
        return;
    for (q = tb_queue_head(&s->conns); q != &s->conns; q = next, n++) {
        next = q->next;
        conn_close(TB_CONTAINER_OF(q, struct conn, link));
    }
    p->dropped_clients = 1;
    tb_log(TB_LOG_WARN,
           "no leader for %llu ms: %u client connection(s) "
           "closed, new ones refused until one is known",
           (unsigned long long)(now - p->leaderless_since), n);
}

int peer_serving(struct tbd *s)
{
    struct peer *p = peer_of(s);

    if (p != NULL && p->removed)
        return 0;
    return p == NULL || p->leaderless_since == 0 || !p->dropped_clients;
}

const struct hist *peer_election_time(const struct tbd *s)
{
    return s->peer != NULL ? &s->peer->election.hist : NULL;
}

/* A line per change of leader, on every member, so that an election can
 * be followed across the ensemble's logs. */
static void log_leader(struct tbd *s, struct peer *p, int leader)
{
    struct replog_stats st;

    if (leader == p->logged_leader)
        return;
    p->logged_leader = leader;
    replog_get_stats(s->log, &st);
    if (leader == 0)
        tb_log_fields(TB_LOG_INFO,
                      TB_LOG_FIELDS(TB_LOG_INT("leader", 0),
                                    TB_LOG_INT("term", st.term)),
                      "leader: none known (term %llu)",
                      (unsigned long long)st.term);
    else
        tb_log_fields(TB_LOG_INFO,
                      TB_LOG_FIELDS(TB_LOG_INT("leader", leader),
                                    TB_LOG_INT("term", st.term)),
                      "leader: server %d (term %llu)%s", leader,
                      (unsigned long long)st.term,
                      leader == (int)s->server_id ? ", this one" : "");
}

static void on_timer(uv_timer_t *t)
{
    struct peer *p = t->data;
    struct tbd *s = p->srv;
    int leader = replog_leader(s->log);
    uint64_t now = tbd_now_ms(s);
    struct replog_stats st;

    replog_get_stats(s->log, &st);
    election_note(&p->election, leader, st.term, now);
    log_leader(s, p, leader);

    /* Where sessions are held is learned anew by the next leader, from
     * the handshakes after it took over. */
    if (leader != (int)s->server_id && p->owner.count > 0) {
        tb_map_free(&p->owner);
        tb_map_init(&p->owner);
    }
    if (leader == (int)s->server_id || leader == 0) {
        if (p->out != NULL)
            link_close(p->out);
    } else if (p->out == NULL || p->out->leader_id != leader) {
        follow(p, leader);
    }
    leaderless(p, leader == 0, now);
    if (now >= p->touch_at_ms) {
        report_touched(p);
        p->touch_at_ms = now + s->tick_ms;
    }
}

/* ---- the leader's side: followers connecting ---- */

/* Whether `a` is the address of a member: a forwarded txn is trusted as
 * its follower made it (its identities, super or not), so only members
 * may connect.  The ports must still be reachable by the members alone,
 * as ZooKeeper's quorum and election ports must. */
static int from_member(const struct peer *p, const struct sockaddr_storage *a)
{
    const struct sockaddr_in *x4 = (const struct sockaddr_in *)a;
    const struct sockaddr_in6 *x6 = (const struct sockaddr_in6 *)a;
    unsigned i;

    for (i = 0; i < p->n; i++) {
        const struct sockaddr_storage *m = &p->members[i].addr;
        if (a->ss_family != m->ss_family)
            continue;
        if (a->ss_family == AF_INET &&
            x4->sin_addr.s_addr ==
                ((const struct sockaddr_in *)m)->sin_addr.s_addr)
            return 1;
        if (a->ss_family == AF_INET6 &&
            memcmp(&x6->sin6_addr, &((const struct sockaddr_in6 *)m)->sin6_addr,
                   sizeof x6->sin6_addr) == 0)
            return 1;
    }
    return 0;
}

/* A follower's link is up: its frames are read. */
static void follower_linked(struct link *k)
{
    k->connected = 1;
    uv_read_start(k->st, alloc_cb, read_cb);
}

static void follower_secured(void *arg, int fd)
{
    struct link *k = arg;

    if (secured(k, fd) == 0)
        follower_linked(k);
}

static void on_connection(uv_stream_t *server, int status)
{
    struct peer *p = server->data;
    struct sockaddr_storage a;
    int alen = sizeof a;
    struct link *k;

    if (status != 0 || (k = link_new(p)) == NULL)
        return;
    if (uv_accept(server, (uv_stream_t *)&k->tcp) != 0 ||
        uv_tcp_getpeername(&k->tcp, (struct sockaddr *)&a, &alen) != 0 ||
        !from_member(p, &a)) {
        tb_log(TB_LOG_WARN, "peer: a connection to the election port from "
               "no member: closed");
        link_discard(k);
        return;
    }
    tb_queue_insert_tail(&p->accepted, &k->node);
    if (p->srv->quorum_tls == NULL)
        follower_linked(k);
    else
        (void)secure(k, NULL, follower_secured);
}

/* ---- the interface ---- */

int peer_forward(struct tbd *s, const void *txn, size_t len)
{
    struct peer *p = peer_of(s);

    if (p == NULL || p->out == NULL)
        return TB_ECONNECTIONLOSS;
    link_send(p->out, PEER_FORWARD, txn, len, NULL, 0);
    return p->out != NULL ? 0 : TB_ECONNECTIONLOSS;
}

int peer_claim(struct tbd *s, uint64_t origin, int64_t id)
{
    struct peer *p = peer_of(s);
    uint8_t b[16];

    if (p == NULL)
        return 1;
    if (replog_is_leader(s->log))
        return tb_map_put(&p->owner, (uint64_t)id,
                          (void *)(intptr_t)s->server_id) == 0
                   ? 1
                   : TB_ENOMEM;
    if (p->out == NULL)
        return TB_ECONNECTIONLOSS;
    tb_store_be64(b, (uint64_t)id);
    tb_store_be64(b + 8, origin);
    link_send(p->out, PEER_OWN, b, sizeof b, NULL, 0);
    return p->out != NULL ? 0 : TB_ECONNECTIONLOSS;
}

void peer_session_closed(struct tbd *s, int64_t id)
{
    struct peer *p = peer_of(s);

    if (p != NULL)
        (void)tb_map_del(&p->owner, (uint64_t)id);
}

void peer_touched(struct tbd *s, int64_t id)
{
    struct peer *p = peer_of(s);

    if (p != NULL)
        (void)tb_map_put(&p->touched, (uint64_t)id, p);
}

static int resolve(const char *host, int port, struct sockaddr_storage *out)
{
    struct addrinfo hints = {0}, *ai;
    char service[8];
    int rv;

    hints.ai_socktype = SOCK_STREAM;
    snprintf(service, sizeof service, "%d", port);
    if ((rv = getaddrinfo(host, service, &hints, &ai)) != 0) {
        tb_log(TB_LOG_ERROR, "peer: cannot resolve %s: %s", host,
               gai_strerror(rv));
        return TB_EINVAL;
    }
    memcpy(out, ai->ai_addr, ai->ai_addrlen);
    freeaddrinfo(ai);
    return 0;
}

static void peer_closed(uv_handle_t *h)
{
    struct peer *p = h->data;

    if (--p->open_handles > 0)
        return;
    tb_map_free(&p->touched);
    tb_map_free(&p->owner);
    free(p->members);
    free(p);
}

int peer_start(struct tbd *s, const struct peer_member *m, unsigned n)
{
    struct peer *p = calloc(1, sizeof *p);
    const struct member *self;
    unsigned i;
    int rv;

    if (p == NULL || (p->members = calloc(n, sizeof *p->members)) == NULL) {
        free(p);
        return TB_ENOMEM;
    }
    p->srv = s;
    p->n = n;
    tb_queue_init(&p->accepted);
    tb_map_init(&p->touched);
    tb_map_init(&p->owner);
    for (i = 0; i < n; i++) {
        p->members[i].id = m[i].id;
        snprintf(p->members[i].host, sizeof p->members[i].host, "%s",
                 m[i].host);
        if ((rv = resolve(m[i].host, m[i].port, &p->members[i].addr)) != 0)
            goto err;
    }
    self = member(p, (int)s->server_id);
    uv_tcp_init(s->loop, &p->listener);
    p->listener.data = p;
    rv = self == NULL ? UV_EINVAL
                      : uv_tcp_bind(&p->listener,
                                    (const struct sockaddr *)&self->addr, 0);
    if (rv == 0)
        rv = uv_listen((uv_stream_t *)&p->listener, 64, on_connection);
    if (rv != 0) {
        tb_log(TB_LOG_ERROR, "peer: cannot listen on the election port: %s",
               uv_strerror(rv));
        p->open_handles = 1;
        uv_close((uv_handle_t *)&p->listener, peer_closed);
        return TB_EIO;
    }
    uv_timer_init(s->loop, &p->timer);
    p->timer.data = p;
    uv_timer_start(&p->timer, on_timer, POLL_MS, POLL_MS);
    election_start(&p->election, tbd_now_ms(s));
    s->peer = p;
    return 0;
err:
    tb_map_free(&p->touched);
    tb_map_free(&p->owner);
    free(p->members);
    free(p);
    return rv;
}

void peer_set_members(struct tbd *s, const struct peer_member *m, unsigned n)
{
    struct peer *p = peer_of(s);
    struct member *grown;
    unsigned i;

    if (p == NULL || (grown = calloc(n ? n : 1, sizeof *grown)) == NULL)
        return;
    for (i = 0; i < n; i++) {
        grown[i].id = m[i].id;
        if (resolve(m[i].host, m[i].port, &grown[i].addr) != 0) {
            free(grown);
            return;
        }
    }
    free(p->members);
    p->members = grown;
    p->n = n;
}

void peer_set_outside(struct tbd *s, int outside)
{
    struct peer *p = peer_of(s);
    struct tb_queue *q, *next;

    if (p == NULL || p->removed == outside)
        return;
    p->removed = outside;
    for (q = tb_queue_head(&s->conns); outside && q != &s->conns; q = next) {
        next = q->next;
        conn_close(TB_CONTAINER_OF(q, struct conn, link));
    }
}

void peer_stop(struct tbd *s)
{
    struct peer *p = peer_of(s);

    if (p == NULL)
        return;
    if (p->out != NULL)
        link_close(p->out);
    while (!tb_queue_empty(&p->accepted))
        link_close(
            TB_CONTAINER_OF(tb_queue_head(&p->accepted), struct link, node));
    p->open_handles = 2;
    uv_close((uv_handle_t *)&p->listener, peer_closed);
    uv_close((uv_handle_t *)&p->timer, peer_closed);
    s->peer = NULL;
}
