/* A follower's side of the peer links: the timer that looks for the
 * leader raft names every POLL_MS and keeps one link to it (connected,
 * secured, HELLO first; made again at once or after a delay, as
 * LINK_HELD_MS in peer_int.h says; none while this server is outside the
 * ensemble), the leader's answers on that link (PEER_OWNED,
 * PEER_FAILED), the sessions heard from reported to it, the line logged
 * per change of leader, and a server cut off from any leader closing its
 * clients' connections. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "proto/proto.h"
#include "server/config/config.h"
#include "server/http/election.h"
#include "server/logging/log.h"
#include "server/net/net.h"
#include "server/peer/peer_int.h"
#include "server/proc/proc.h"
#include "server/replog/replog.h"
#include "server/server.h"

/* ---- frames the leader sends ---- */

void peer__on_owned(struct peer *p, const uint8_t *b, size_t n)
{
    struct proc_client *c;

    c = n >= 8 ? tb_map_get(&p->srv->conn_by_id, tb_load_be64(b)) : NULL;
    if (c != NULL && !c->closed && c->state == CONN_SESSION &&
        c->session_id != 0)
        session_claimed(c);
}

void peer__on_failed(struct peer *p, const uint8_t *b, size_t n)
{
    struct proc_client *c;
    int status = n >= 12 ? (int32_t)tb_load_be32(b + 8) : 0;

    c = n >= 12 ? tb_map_get(&p->srv->conn_by_id, tb_load_be64(b)) : NULL;
    /* A write refused for low disk before it was logged is answered so,
     * as the leader answers its own clients; any other failure leaves the
     * outcome unknown to the client, whose connection closes. */
    if (c != NULL && !c->closed && n >= 16 && status == TB_ENOTREADONLY) {
        proc_refused(c, (int32_t)tb_load_be32(b + 12), status);
        return;
    }
    /* A claim of a session whose close the leader decided. */
    if (c != NULL && !c->closed && status == TB_ESESSIONEXPIRED &&
        c->state == CONN_SESSION) {
        session_expired(c);
        return;
    }
    if (c != NULL && !c->closed) {
        tb_log(TB_LOG_WARN,
               "peer: the leader refused a request of session 0x%llx "
               "(%s): its connection is closed",
               (unsigned long long)c->session_id, tb_strerror(status));
        c->ops->close(c);
    }
}

/* ---- a follower's link to the leader ---- */

/* "host:port" of a member's election port, its host as configured. */
static int member_address(const struct member *m, char *buf, size_t n)
{
    const struct sockaddr_in *a4 = (const struct sockaddr_in *)&m->addr;
    const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)&m->addr;
    char ip[INET6_ADDRSTRLEN];
    int v6 = m->addr.ss_family == AF_INET6;

    if (inet_ntop(m->addr.ss_family,
                  v6 ? (const void *)&a6->sin6_addr
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
        /* Tried again while raft still names it (LINK_HELD_MS): said once,
         * until a link to it holds. */
        if (k == p->out && p->unreachable != k->leader_id)
            tb_log(TB_LOG_WARN,
                   "peer: cannot reach the leader (server %d): "
                   "%s",
                   k->leader_id, uv_strerror(status));
        if (k == p->out)
            p->unreachable = k->leader_id;
        peer__link_close(k);
        return;
    }
    if (p->srv->quorum_tls == NULL || !p->srv->cfg->quorum_tls.enabled) {
        following(k);
        return;
    }
    m = peer__member(p, k->leader_id);
    if (m == NULL || member_address(m, peer, sizeof peer) != 0)
        peer__link_close(k);
    else
        (void)peer__secure(k, peer, leader_secured);
}

static void leader_secured(void *arg, int fd)
{
    struct link *k = arg;

    if (peer__secured(k, fd) == 0)
        following(k);
}

/* The link to the leader is up: the follower says who it is, sends what
 * waited, and reads. */
static void following(struct link *k)
{
    struct peer *p = k->p;
    uint8_t id[4];

    /* After a link that did not hold, said once one holds (link_held). */
    if (p->unreachable != k->leader_id && p->refused != k->leader_id)
        tb_log(TB_LOG_INFO, "peer: following server %d", k->leader_id);
    k->connected = 1;
    k->up_ms = tbd_now_ms(p->srv);
    tb_store_be32(id, (uint32_t)p->srv->server_id);
    peer__write_out(k, (uint8_t[]){0, 0, 0, 5, PEER_HELLO}, FRAME_HDR);
    peer__write_out(k, id, sizeof id);
    if (k->held.len > 0)
        peer__write_out(k, k->held.base, k->held.len);
    tb_wbuf_free(&k->held);
    peer__link_read(k);
}

/* The link leaves from this member's own address (any port): the leader
 * takes links from members' addresses alone, and the kernel's choice of
 * source may be none of them (every connection to 127/8 leaves from
 * 127.0.0.1; a host with several addresses routes by its table).  The
 * address is this server's, as its listener is bound to it. */
static void bind_own(struct peer *p, struct link *k, const struct member *to)
{
    const struct member *self = peer__member(p, (int)p->srv->server_id);
    struct sockaddr_storage a;
    int rv;

    if (self == NULL || self->addr.ss_family != to->addr.ss_family)
        return;
    a = self->addr;
    if (a.ss_family == AF_INET)
        ((struct sockaddr_in *)&a)->sin_port = 0;
    else
        ((struct sockaddr_in6 *)&a)->sin6_port = 0;
    if ((rv = uv_tcp_bind(&k->tcp, (const struct sockaddr *)&a, 0)) != 0)
        tb_log(TB_LOG_WARN,
               "peer: cannot send from this server's address (%s): the "
               "leader may refuse the link",
               uv_strerror(rv));
}

static void follow(struct peer *p, int leader)
{
    const struct member *m = peer__member(p, leader);
    uv_connect_t *req;
    struct link *k;

    if (p->out != NULL)
        peer__link_close(p->out);
    if (m == NULL || (k = peer__link_new(p)) == NULL)
        return;
    if ((req = malloc(sizeof *req)) == NULL) {
        peer__link_discard(k);
        return;
    }
    k->leader_id = leader;
    req->data = k;
    p->out = k;
    bind_own(p, k, m);
    if (uv_tcp_connect(req, &k->tcp, (const struct sockaddr *)&m->addr,
                       connected_cb) != 0) {
        free(req);
        peer__link_close(k);
        return;
    }
    /* A leader out of reach ends the link: its clients are told, and the
     * rest goes to the next. */
    peer__link_bound(k, 0);
}

/* ---- when a link is made again (LINK_HELD_MS in peer_int.h) ---- */

static unsigned retry_max(const struct peer *p)
{
    int e = p->srv->cfg->election_timeout;

    return e > POLL_MS && e < RETRY_MAX_MS ? (unsigned)e : RETRY_MAX_MS;
}

void peer__out_ended(struct peer *p, struct link *k)
{
    uint64_t now = tbd_now_ms(p->srv);

    if (k->steady) {
        tb_log(TB_LOG_INFO, "peer: link to the leader (server %d) closed",
               k->leader_id);
        p->retry_ms = 0;
        p->retry_at = 0;
        return;
    }
    p->retry_ms = p->retry_ms == 0 ? POLL_MS : 2 * p->retry_ms;
    if (p->retry_ms > retry_max(p))
        p->retry_ms = retry_max(p);
    p->retry_at = now + p->retry_ms;
    p->retry_leader = k->leader_id;
    /* Connected, then closed by the leader before it held: a leader
     * refuses a link from an address its configuration does not list as
     * a member's, at once (and logs it).  Said once, until one holds. */
    if (k->connected && k->broken && p->refused != k->leader_id) {
        p->refused = k->leader_id;
        tb_log(TB_LOG_WARN,
               "peer: the leader (server %d) closed this server's link %llu "
               "ms after it was made: if it goes on doing so, its "
               "configuration does not list this server's address as a "
               "member's (its log then says \"a connection to the election "
               "port from no member\"); linking again less often, up to "
               "every %u ms, until a link holds",
               k->leader_id, (unsigned long long)(now - k->up_ms),
               retry_max(p));
    }
}

/* The link to the leader has been up for LINK_HELD_MS: it holds.  The next
 * one, should it end, goes at once, and what was said once about the
 * leader is said again. */
static void link_held(struct peer *p, uint64_t now)
{
    struct link *k = p->out;

    if (k == NULL || !k->connected || k->steady ||
        now - k->up_ms < LINK_HELD_MS)
        return;
    k->steady = 1;
    p->retry_ms = 0;
    p->retry_at = 0;
    if (p->unreachable == k->leader_id || p->refused == k->leader_id)
        tb_log(TB_LOG_INFO, "peer: following server %d", k->leader_id);
    p->unreachable = 0;
    p->refused = 0;
}

/* ---- sessions heard from, reported to the leader ---- */

/* Kept until a link is up: sent on one that is not, they wait in it, and
 * go with it if it never connects (the leader, reached in time, would
 * then expire clients that kept pinging here). */
void peer__report_touched(struct peer *p)
{
    struct tb_wbuf *b = &p->srv->scratch;
    uint8_t x[8];
    uint64_t id;
    size_t i = 0;
    void *v;

    if (p->out == NULL || !p->out->connected || p->touched.count == 0)
        return;
    tb_wbuf_reset(b);
    while (tb_map_next(&p->touched, &i, &id, &v)) {
        tb_store_be64(x, id);
        tb_wbuf_put(b, x, sizeof x);
    }
    if (!b->oom)
        peer__link_send(p->out, PEER_TOUCH, b->base, b->len, NULL, 0);
    peer__forget_touched(p);
}

/* ---- the timer ---- */

/* A server that has known no leader for longer than an election takes
 * (twice the election timeout) is cut off from the others: its clients'
 * connections close, so that they move to a server that can serve them,
 * as ZooKeeper's do.  An observer, which never stands for election, knows
 * no leader once the leader has been silent for an election timeout
 * (replog_leader).  So is a follower whose link to the leader has not held
 * for that long after the time one takes to (the leader refuses it, or
 * its election port is out of reach while raft's is not): it could carry
 * neither its clients' writes nor their pings, and the leader would
 * expire their sessions while they are connected.  `leader` is the one
 * raft names, `none` whether it is cut off from it. */
static void leaderless(struct peer *p, int leader, int none, uint64_t now)
{
    struct tbd *s = p->srv;
    unsigned n;

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
    n = peer__close_clients(p);
    p->dropped_clients = 1;
    if (leader == 0)
        tb_log(TB_LOG_WARN,
               "no leader for %llu ms: %u client connection(s) "
               "closed, new ones refused until one is known",
               (unsigned long long)(now - p->leaderless_since), n);
    else
        tb_log(TB_LOG_WARN,
               "no link to the leader (server %d) has held for %llu ms: %u "
               "client connection(s) closed, new ones refused until one "
               "holds",
               leader, (unsigned long long)(now - p->linked_at), n);
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
        tb_log_fields(
            TB_LOG_INFO,
            TB_LOG_FIELDS(TB_LOG_INT("leader", 0), TB_LOG_INT("term", st.term)),
            "leader: none known (term %llu)", (unsigned long long)st.term);
    else
        tb_log_fields(TB_LOG_INFO,
                      TB_LOG_FIELDS(TB_LOG_INT("leader", leader),
                                    TB_LOG_INT("term", st.term)),
                      "leader: server %d (term %llu)%s", leader,
                      (unsigned long long)st.term,
                      leader == (int)s->server_id ? ", this one" : "");
}

void peer__on_timer(uv_timer_t *t)
{
    struct peer *p = t->data;
    struct tbd *s = p->srv;
    int leader = replog_leader(s->log);
    uint64_t now = tbd_now_ms(s);
    struct replog_stats st;

    peer__accept_again(p);
    peer__resolve_pending(p, now);
    replog_get_stats(s->log, &st);
    election_note(&p->election, leader, st.term, now);
    log_leader(s, p, leader);

    /* Where sessions are held is learned anew by the next leader, from
     * the handshakes after it took over. */
    if (leader != (int)s->server_id && p->owner.count > 0) {
        tb_map_free(&p->owner);
        tb_map_init(&p->owner);
    }
    /* A leader's clients' activity is its own to count: what they did
     * while it followed, reported to a later leader, would be stale. */
    if (leader == (int)s->server_id && p->touched.count > 0)
        peer__forget_touched(p);
    /* Another leader, or none: the next link goes at once. */
    if (leader != p->retry_leader) {
        p->retry_leader = leader;
        p->retry_ms = 0;
        p->retry_at = 0;
        p->linked_at = now;
    }
    link_held(p, now);
    if (leader == (int)s->server_id || p->removed ||
        (p->out != NULL && p->out->steady && p->out->leader_id == leader))
        p->linked_at = now;
    /* Outside the ensemble (a joiner not yet added, a member removed), no
     * link: the leader refuses a server its configuration does not list,
     * and this one serves no client whose writes or sessions it would
     * carry.  Its first link once inside goes at once. */
    if (leader == (int)s->server_id || leader == 0 || p->removed) {
        if (p->out != NULL)
            peer__link_close(p->out);
        if (p->removed) {
            p->retry_ms = 0;
            p->retry_at = 0;
        }
    } else if ((p->out == NULL || p->out->leader_id != leader) &&
               now >= p->retry_at) {
        follow(p, leader);
    }
    /* A link that holds takes LINK_HELD_MS, and one more try after one
     * that did not: a follower is cut off past that. */
    leaderless(p, leader,
               leader == 0 || now - p->linked_at > LINK_HELD_MS + RETRY_MAX_MS,
               now);
    if (now >= p->touch_at_ms) {
        peer__report_touched(p);
        p->touch_at_ms = now + s->tick_ms;
    }
}
