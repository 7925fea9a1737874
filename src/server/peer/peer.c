/* The peer links' entry points (peer.h says what the links carry):
 * starting them (the members resolved, the election port listened on, the
 * timer started), the members changing, stopping, and what the rest of the
 * server asks of them: a write forwarded, a session claimed, closed or
 * heard from, whether this server takes clients.  The links themselves
 * are peer_link.c's, the leader's side peer_leader.c's, a follower's
 * peer_follower.c's. */
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "proto/proto.h"
#include "server/fsm/fsm.h"
#include "server/http/election.h"
#include "server/logging/log.h"
#include "server/net/net.h"
#include "server/peer/peer.h"
#include "server/peer/peer_int.h"
#include "server/proc/proc.h"
#include "server/replog/replog.h"
#include "server/server.h"

const struct member *peer__member(const struct peer *p, int id)
{
    unsigned i;

    for (i = 0; i < p->n; i++)
        if (p->members[i].id == id)
            return &p->members[i];
    return NULL;
}

/* ---- the interface ---- */

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

int peer_forward(struct tbd *s, const void *txn, size_t len)
{
    struct peer *p = peer_of(s);

    if (p == NULL || p->out == NULL)
        return TB_ECONNECTIONLOSS;
    peer__link_send(p->out, PEER_FORWARD, txn, len, NULL, 0);
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
    peer__link_send(p->out, PEER_OWN, b, sizeof b, NULL, 0);
    return p->out != NULL ? 0 : TB_ECONNECTIONLOSS;
}

/* A session's creation (it has no id yet), its close (an expiry's has no
 * home; ZooKeeper's leader does not check a close's owner either) and a
 * sync (a barrier, changing nothing) may come from anywhere.  A write for
 * a session already closed here is refused as expired once applied, and
 * gives it no home: nothing would take that entry out again. */
int peer__writer(struct peer *p, const struct tb_txn *t, int from)
{
    uint64_t id = (uint64_t)t->session;
    struct fsm_session_info si;
    intptr_t home;

    if (t->session == 0 || t->type == TB_OP_CREATESESSION ||
        t->type == TB_OP_CLOSESESSION || t->type == TB_OP_SYNC)
        return 0;
    if ((home = (intptr_t)tb_map_get(&p->owner, id)) != 0)
        return home == from ? 0 : TB_ESESSIONMOVED;
    if (!fsm_session_get(p->srv->fsm, t->session, &si))
        return 0;
    return tb_map_put(&p->owner, id, (void *)(intptr_t)from) == 0 ? 0
                                                                  : TB_ENOMEM;
}

int peer_write_here(struct tbd *s, const struct tb_txn *t)
{
    struct peer *p = peer_of(s);

    return p != NULL ? peer__writer(p, t, (int)s->server_id) : 0;
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

/* Resolves v[0..n)'s names: n, or the index of the first that did not,
 * its getaddrinfo error in *gai. */
static unsigned resolve(struct member *v, unsigned n, int *gai)
{
    struct addrinfo hints = {0}, *ai;
    char service[8];
    unsigned i;

    hints.ai_socktype = SOCK_STREAM;
    for (i = 0; i < n; i++) {
        snprintf(service, sizeof service, "%d", v[i].port);
        if ((*gai = getaddrinfo(v[i].host, service, &hints, &ai)) != 0)
            return i;
        memcpy(&v[i].addr, ai->ai_addr, ai->ai_addrlen);
        freeaddrinfo(ai);
    }
    return n;
}

static void log_unresolved(int level, const struct member *m, int gai,
                           const char *then)
{
    tb_log(level, "peer: cannot resolve %s (server.%d): %s%s", m->host, m->id,
           gai_strerror(gai), then);
}

/* A look-up of the members' names, off the loop: a name server that does
 * not answer holds getaddrinfo for seconds, which on the loop would stall
 * every heartbeat, session and client this server keeps.  What it finds
 * is dropped if newer members were given meanwhile (`dropped`: the next
 * look-up starts once it ends, so that a name server that does not answer
 * holds one of libuv's threads, not one per reconfig), or the peer
 * stopped (p NULL). */
struct resolving {
    uv_work_t req;
    struct peer *p;
    int dropped;
    struct member *v; /* pending's list, while it is looked up */
    unsigned n;
    unsigned failed; /* the first name that did not resolve; n: none */
    int gai;         /* its getaddrinfo error */
};

static void resolve_work(uv_work_t *req)
{
    struct resolving *r = req->data;

    r->failed = resolve(r->v, r->n, &r->gai);
}

static void resolved(uv_work_t *req, int status)
{
    struct resolving *r = req->data;
    struct peer *p = r->p;

    (void)status; /* cancelled only once dropped */
    if (p == NULL || r->dropped) {
        free(r->v);
        if (p != NULL) {
            p->resolving = NULL;
            peer__resolve_pending(p, tbd_now_ms(p->srv)); /* the newer */
        }
    } else if (r->failed < r->n) {
        if (!p->resolve_failed)
            log_unresolved(TB_LOG_WARN, &r->v[r->failed], r->gai,
                           "; the links follow the members before, and it "
                           "is looked up again each second");
        p->resolve_failed = 1;
        p->resolving = NULL;
        p->pending = r->v;
        p->pending_n = r->n;
        p->resolve_at = tbd_now_ms(p->srv) + RESOLVE_RETRY_MS;
    } else {
        if (p->resolve_failed)
            tb_log(TB_LOG_INFO, "peer: the members' names resolve again");
        p->resolve_failed = 0;
        p->resolving = NULL;
        free(p->members);
        p->members = r->v;
        p->n = r->n;
    }
    free(r);
}

/* What the look-up running finds is dropped; `stop`: the peer goes too. */
static void drop_resolving(struct peer *p, int stop)
{
    if (p->resolving == NULL)
        return;
    p->resolving->dropped = 1;
    if (stop)
        p->resolving->p = NULL;
    (void)uv_cancel((uv_req_t *)&p->resolving->req);
    if (stop)
        p->resolving = NULL;
}

static void peer_closed(uv_handle_t *h)
{
    struct peer *p = h->data;

    if (--p->open_handles > 0)
        return;
    tb_map_free(&p->touched);
    tb_map_free(&p->owner);
    free(p->members);
    free(p->pending);
    free(p);
}

/* The members m[0..n) as the links use them, not yet resolved: each
 * name is kept, for peer TLS's check of the certificate too; NULL when
 * out of memory. */
static struct member *members_of(const struct peer_member *m, unsigned n)
{
    struct member *v = calloc(n ? n : 1, sizeof *v);
    unsigned i;

    for (i = 0; v != NULL && i < n; i++) {
        v[i].id = m[i].id;
        v[i].port = m[i].port;
        snprintf(v[i].host, sizeof v[i].host, "%s", m[i].host);
    }
    return v;
}

static int loopback(const struct sockaddr_storage *a)
{
    const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)a;

    if (a->ss_family == AF_INET)
        return ((const uint8_t *)&((const struct sockaddr_in *)a)
                    ->sin_addr)[0] == 127;
    return a->ss_family == AF_INET6 &&
           (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr) ||
            (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) &&
             in6->sin6_addr.s6_addr[12] == 127));
}

/* This member's own line names a loopback address here while another's
 * does not: it listens where the others cannot reach it.  Debian writes
 * "127.0.1.1 <its name>" in /etc/hosts, so a member named by its host
 * name often resolves so on itself. */
static void warn_loopback(const struct peer *p, const struct member *self)
{
    unsigned i;

    if (!loopback(&self->addr))
        return;
    for (i = 0; i < p->n; i++)
        if (!loopback(&p->members[i].addr)) {
            tb_log(TB_LOG_WARN,
                   "peer: server.%d's host %s is a loopback address here, "
                   "and server.%d's is not: the other members cannot reach "
                   "this one (name it by an address they can reach, or "
                   "make the name resolve to one on this machine too)",
                   self->id, self->host, p->members[i].id);
            return;
        }
}

int peer_start(struct tbd *s, const struct peer_member *m, unsigned n)
{
    struct peer *p = calloc(1, sizeof *p);
    const struct member *self;
    unsigned i;
    int rv, gai;

    if (p == NULL || (p->members = members_of(m, n)) == NULL) {
        free(p);
        return TB_ENOMEM;
    }
    if ((i = resolve(p->members, n, &gai)) < n) {
        log_unresolved(TB_LOG_ERROR, &p->members[i], gai, "");
        free(p->members);
        free(p);
        return TB_EINVAL;
    }
    p->srv = s;
    p->n = n;
    tb_queue_init(&p->accepted);
    tb_map_init(&p->touched);
    tb_map_init(&p->owner);
    self = peer__member(p, (int)s->server_id);
    if (self != NULL)
        warn_loopback(p, self);
    uv_tcp_init(s->loop, &p->listener);
    p->listener.data = p;
    rv = self == NULL ? UV_EINVAL
                      : uv_tcp_bind(&p->listener,
                                    (const struct sockaddr *)&self->addr, 0);
    if (rv == 0)
        rv = uv_listen((uv_stream_t *)&p->listener, 64, peer__on_connection);
    if (rv != 0) {
        tb_log(TB_LOG_ERROR, "peer: cannot listen on the election port: %s",
               uv_strerror(rv));
        p->open_handles = 1;
        uv_close((uv_handle_t *)&p->listener, peer_closed);
        return TB_EIO;
    }
    uv_timer_init(s->loop, &p->timer);
    p->timer.data = p;
    uv_timer_start(&p->timer, peer__on_timer, POLL_MS, POLL_MS);
    election_start(&p->election, tbd_now_ms(s));
    s->peer = p;
    return 0;
}

void peer_set_members(struct tbd *s, const struct peer_member *m, unsigned n)
{
    struct peer *p = peer_of(s);
    struct member *v;

    if (p == NULL || (v = members_of(m, n)) == NULL)
        return;
    drop_resolving(p, 0);
    free(p->pending);
    p->pending = v;
    p->pending_n = n;
    p->resolve_at = 0;
    peer__resolve_pending(p, tbd_now_ms(s));
}

void peer__resolve_pending(struct peer *p, uint64_t now)
{
    struct resolving *r;

    if (p->pending == NULL || p->resolving != NULL || now < p->resolve_at)
        return;
    if ((r = malloc(sizeof *r)) == NULL)
        return; /* the next poll tries again */
    *r = (struct resolving){.p = p, .v = p->pending, .n = p->pending_n};
    r->req.data = r;
    if (uv_queue_work(p->srv->loop, &r->req, resolve_work, resolved) != 0) {
        free(r);
        return;
    }
    p->pending = NULL;
    p->resolving = r;
}

void peer__forget_touched(struct peer *p)
{
    tb_map_free(&p->touched);
    tb_map_init(&p->touched);
}

unsigned peer__close_clients(struct peer *p)
{
    peer__forget_touched(p);
    return conn_close_all(p->srv);
}

void peer_set_outside(struct tbd *s, int outside)
{
    struct peer *p = peer_of(s);

    if (p == NULL || p->removed == outside)
        return;
    p->removed = outside;
    if (outside)
        peer__close_clients(p);
}

void peer_stop(struct tbd *s)
{
    struct peer *p = peer_of(s);

    if (p == NULL)
        return;
    drop_resolving(p, 1);
    if (p->out != NULL)
        peer__link_close(p->out);
    while (!tb_queue_empty(&p->accepted))
        peer__link_close(
            TB_CONTAINER_OF(tb_queue_head(&p->accepted), struct link, node));
    p->open_handles = 2;
    uv_close((uv_handle_t *)&p->listener, peer_closed);
    uv_close((uv_handle_t *)&p->timer, peer_closed);
    s->peer = NULL;
}
