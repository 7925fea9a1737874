/* The leader's side of the peer links: the frames its followers send
 * (a forwarded write proposed, or refused with PEER_FAILED; the sessions
 * held on a follower, answered with PEER_OWNED; the sessions heard from)
 * and the followers connecting to its election port, members only. */
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"
#include "server/logging/log.h"
#include "server/net/net.h"
#include "server/peer/peer_int.h"
#include "server/proc/proc.h"
#include "server/replog/replog.h"
#include "server/server.h"

/* A forwarded txn proposed on the leader, for its answer: the links may
 * be gone by then (the peer stopped first), so they are looked up again. */
struct forward {
    struct tbd *srv;
    uint64_t link_id;
    int64_t origin;
};

/* ---- frames a follower sends ---- */

static struct link *accepted_link(struct peer *p, uint64_t id)
{
    struct tb_queue *q;

    TB_QUEUE_FOREACH (q, &p->accepted)
        if (TB_CONTAINER_OF(q, struct link, node)->id == id)
            return TB_CONTAINER_OF(q, struct link, node);
    return NULL;
}

/* A follower links again only once its link before is gone on its side,
 * reset, every client with a write on it told the connection was lost.
 * Here that link may still have such writes unread: read on, they would
 * be proposed after the writes the new link brings, which their sessions
 * may have made since through this follower.  So it ends now, unread. */
void peer__on_hello(struct link *k, int from)
{
    struct tb_queue *q, *next;
    struct link *old;

    k->from = from;
    for (q = tb_queue_head(&k->p->accepted); q != &k->p->accepted; q = next) {
        next = q->next;
        old = TB_CONTAINER_OF(q, struct link, node);
        if (old != k && old->from == from) {
            tb_log(TB_LOG_INFO,
                   "peer: server %d linked again: its link before closed",
                   from);
            peer__link_close(old);
        }
    }
}

/* PEER_FAILED for `origin`: with the xid of a forwarded write refused
 * before it was logged (so certainly never applied), n 16; else 12. */
static void send_failed_xid(struct link *k, int64_t origin, int status,
                            int32_t xid, size_t n)
{
    uint8_t b[16];

    tb_store_be64(b, (uint64_t)origin);
    tb_store_be32(b + 8, (uint32_t)status);
    tb_store_be32(b + 12, (uint32_t)xid);
    peer__link_send(k, PEER_FAILED, b, n, NULL, 0);
}

static void send_failed(struct link *k, int64_t origin, int status)
{
    send_failed_xid(k, origin, status, 0, 12);
}

/* How many refused origins a link keeps: each is a client connection the
 * follower closed; past this many the link itself is ended, which drops
 * all the follower forwarded (and starts a new list). */
#define REFUSED_MAX 65536

/* A forward of `origin` refused, or its outcome unknown (its proposal
 * failed: leadership lost): the follower closes the client's connection.
 * What the client sent after it may be on its way already: it must not
 * be applied without this one (a session's writes apply in order), though
 * what refused this one may be gone by then (this server leads again,
 * memory is back).  So the origin's later forwards are refused too. */
static void refuse_origin(struct link *k, int64_t origin, int status,
                          int32_t xid, size_t n)
{
    /* Origin 0 is no client's (the server's own txns). */
    if (origin != 0 && (k->refused.count >= REFUSED_MAX ||
                        tb_map_put(&k->refused, (uint64_t)origin, k) != 0)) {
        peer__link_close(k); /* the follower drops all it forwarded */
        return;
    }
    send_failed_xid(k, origin, status, xid, n);
}

static void forward_done(void *arg, int status, int64_t index)
{
    struct forward *f = arg;
    struct peer *p = peer_of(f->srv);
    struct link *k;

    (void)index;
    if (status != 0 && p != NULL && (k = accepted_link(p, f->link_id)) != NULL)
        refuse_origin(k, f->origin, status, 0, 12);
    free(f);
}

void peer__on_forward(struct link *k, const uint8_t *p, size_t n)
{
    struct tbd *s = k->p->srv;
    struct tb_rd r = tb_rd_make(p, n);
    struct forward *f;
    struct tb_txn t;
    int rv;

    if (tb_txn_decode(&r, &t) != 0) {
        tb_log(TB_LOG_WARN, "peer: server %d forwarded a malformed txn",
               k->from);
        peer__link_close(k);
        return;
    }
    /* Its origin is one of the follower's connections, whose ids start
     * with its server id (proc_conn_id_base): its answer goes there. */
    if (k->from == 0 || (uint64_t)t.origin >> 56 != (uint64_t)k->from) {
        tb_log(TB_LOG_WARN,
               "peer: server %d forwarded a txn of origin 0x%llx, not one "
               "of its connections: closing the link",
               k->from, (unsigned long long)t.origin);
        peer__link_close(k);
        return;
    }
    /* A follower forwards its clients' requests alone: the leader's own
     * txns (zxids to a new epoch, a reconfig's outcome) never come from
     * one, and would move every member's zxids or members. */
    if (t.type == TB_OP_NEWEPOCH || t.type == TB_OP_RECONFIG_TXN) {
        tb_log(TB_LOG_WARN,
               "peer: server %d forwarded a txn of type %d, which only a "
               "leader makes: refused",
               k->from, t.type);
        refuse_origin(k, t.origin, TB_EBADARGUMENTS, t.xid, 16);
        return;
    }
    if (tb_map_get(&k->refused, (uint64_t)t.origin) != NULL ||
        !replog_is_leader(s->log))
        rv = TB_ECONNECTIONLOSS;
    else
        rv = peer__writer(k->p, &t, k->from);
    if (rv == 0 && (f = malloc(sizeof *f)) == NULL)
        rv = TB_ENOMEM;
    else if (rv == 0) {
        *f = (struct forward){s, k->id, t.origin};
        if ((rv = proc_propose_txn(s, &t, forward_done, f)) != 0)
            free(f);
    }
    /* Refused before it was logged, so never applied (n 16); one refused
     * for low disk the follower answers as such, and the client goes on
     * knowing. */
    if (rv == TB_ENOTREADONLY)
        send_failed_xid(k, t.origin, rv, t.xid, 16);
    else if (rv != 0)
        refuse_origin(k, t.origin, rv, t.xid, 16);
}

/* Sessions now held on k's follower: recorded, and the leader's own
 * connection of each, if any, closed (the client has moved). */
void peer__on_own(struct link *k, const uint8_t *p, size_t n)
{
    struct tbd *s = k->p->srv;
    uint8_t b[8];
    struct proc_client *c;
    uint64_t id;
    size_t i;

    for (i = 0; i + 16 <= n; i += 16) {
        id = tb_load_be64(p + i);
        memcpy(b, p + i + 8, 8);
        /* Not the leader, or a new one that has not applied all its
         * predecessor committed (it may not know of the session's
         * creation, or of its close, yet): the client tries again (the
         * follower closes its connection).  Closed, or its close decided,
         * here: never resumed, though the follower may not have applied
         * it yet. */
        if (!replog_leader_caught_up(s->log)) {
            send_failed(k, (int64_t)tb_load_be64(b), TB_ECONNECTIONLOSS);
            continue;
        }
        if (!session_resumable(s, (int64_t)id, NULL)) {
            send_failed(k, (int64_t)tb_load_be64(b), TB_ESESSIONEXPIRED);
            continue;
        }
        if (tb_map_put(&k->p->owner, id, (void *)(intptr_t)k->from) != 0) {
            send_failed(k, (int64_t)tb_load_be64(b), TB_ENOMEM);
            continue;
        }
        if ((c = tb_map_get(&s->conn_by_session, id)) != NULL)
            c->ops->close(c);
        /* Taken over by a client that just connected: its timeout counts
         * from now, as ZooKeeper's leader touches a revalidated session. */
        session_touch(s, (int64_t)id);
        peer__link_send(k, PEER_OWNED, b, sizeof b, NULL, 0);
    }
}

void peer__on_touch(struct link *k, const uint8_t *p, size_t n)
{
    size_t i;

    for (i = 0; i + 8 <= n; i += 8)
        session_touch(k->p->srv, (int64_t)tb_load_be64(p + i));
}

/* ---- followers connecting ---- */

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
    peer__link_read(k);
}

static void follower_secured(void *arg, int fd)
{
    struct link *k = arg;

    if (peer__secured(k, fd) == 0)
        follower_linked(k);
}

/* A connection from no member (`a`, or NULL: unknown), closed: a line a
 * second at most, so that a server left out of the configuration, or
 * anything else that keeps connecting, cannot flood the log. */
static void refuse(struct peer *p, struct link *k,
                   const struct sockaddr_storage *a)
{
    uint64_t now = tbd_now_ms(p->srv);
    char ip[64] = "an unknown address";

    peer__link_discard(k);
    if (!tb_log_due(&p->refused_log, now))
        return;
    if (a != NULL)
        (void)uv_ip_name((const struct sockaddr *)a, ip, sizeof ip);
    tb_log_rated(&p->refused_log, TB_LOG_WARN,
                 "peer: a connection to the election port from no member "
                 "(%s, not in this server's configuration): closed",
                 ip);
}

void peer__accept_again(struct peer *p)
{
    if (p->accept_again) {
        p->accept_again = 0;
        peer__on_connection((uv_stream_t *)&p->listener, 0);
    }
}

void peer__on_connection(uv_stream_t *server, int status)
{
    struct peer *p = server->data;
    struct sockaddr_storage a;
    int alen = sizeof a;
    struct link *k;

    if (status != 0)
        return;
    if ((k = peer__link_new(p)) == NULL) { /* it waits in the kernel */
        p->accept_again = 1;
        return;
    }
    if (uv_accept(server, (uv_stream_t *)&k->tcp) != 0 ||
        uv_tcp_getpeername(&k->tcp, (struct sockaddr *)&a, &alen) != 0) {
        refuse(p, k, NULL);
        return;
    }
    if (!from_member(p, &a)) {
        refuse(p, k, &a);
        return;
    }
    tb_queue_insert_tail(&p->accepted, &k->node);
    peer__link_bound(k, 1);
    if (p->srv->quorum_tls == NULL)
        follower_linked(k);
    else
        (void)peer__secure(k, NULL, follower_secured);
}
