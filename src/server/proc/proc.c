/* Request processing: every frame after the handshake comes here.
 *
 * Per-connection order is kept with one queue of struct req: a write is
 * turned into a txn and proposed at once (writes pipeline into the log),
 * a read is answered at once when nothing is queued, else it waits behind
 * this connection's writes still in the log, so a client always reads its
 * own writes.  Replies therefore leave in request order. */
#include <stdlib.h>

#include "server/config/config.h"
#include "server/fsm/fsm.h"
#include "server/logging/log.h"
#include "server/peer/peer.h"
#include "server/proc/proc.h"
#include "server/replog/replog.h"
#include "server/server.h"

int64_t proc_zxid(const struct tbd *s)
{
    return fsm_last_zxid(s->fsm);
}

static void note_latency(struct latency *l, uint64_t ms)
{
    if (l->count == 0 || ms < l->min_ms)
        l->min_ms = ms;
    if (ms > l->max_ms)
        l->max_ms = ms;
    l->count++;
    l->total_ms += ms;
}

static void request_done(struct proc_client *c, const struct req *r)
{
    uint64_t now = tbd_now_ms(c->srv), ms = now - r->start_ms;
    int op = metrics_op_index(r->type);

    note_latency(&c->lat, ms);
    c->last_latency_ms = ms;
    note_latency(&c->srv->lat, ms);
    if (op >= 0)
        hist_note(&c->srv->req_latency[op],
                  (tbd_shown_ns(c->srv) - r->start_ns) / 1000);
    c->last_resp_ms = now;
    if (c->srv->cfg->slow_request_ms > 0 &&
        ms > (uint64_t)c->srv->cfg->slow_request_ms &&
        tb_log_due(&c->srv->slow_log, c->last_resp_ms))
        tb_log_rated_fields(
            &c->srv->slow_log, TB_LOG_WARN,
            TB_LOG_FIELDS(TB_LOG_STR("op", op >= 0 ? metrics_op_name(op) : "?"),
                          TB_LOG_INT("opcode", r->type),
                          TB_LOG_HEX("session", c->session_id),
                          TB_LOG_STR("peer", c->peer),
                          TB_LOG_INT("xid", r->xid), TB_LOG_INT("ms", ms)),
            "slow request: %s (xid %d) of session 0x%llx from %s answered "
            "in %llu ms (slowRequestMs %d)",
            op >= 0 ? metrics_op_name(op) : "?", r->xid,
            (unsigned long long)c->session_id, c->peer,
            (unsigned long long)ms, c->srv->cfg->slow_request_ms);
}

static void req_free(struct proc_client *c, struct req *r)
{
    tb_queue_remove(&r->link);
    c->nreqs--;
    free(r->reply);
    free((void *)r->body.ptr);
    free(r);
}

static struct req *req_push(struct proc_client *c, enum req_state st,
                            int32_t xid, int32_t type)
{
    struct req *r = calloc(1, sizeof *r);

    if (r == NULL)
        return NULL;
    r->state = st;
    r->xid = xid;
    r->type = type;
    r->start_ms = tbd_now_ms(c->srv);
    r->start_ns = tbd_shown_ns(c->srv);
    tb_queue_insert_tail(&c->reqs, &r->link);
    c->nreqs++;
    return r;
}

/* The head request's reply is sent: 1 if the connection closes after it. */
static int head_done(struct proc_client *c, struct req *r)
{
    int close_after = r->close_after;

    request_done(c, r);
    req_free(c, r);
    if (close_after)
        proc_close_after_flush(c);
    return close_after;
}

/* A read that waited for the writes before it is checked with the
 * identities its client had when it sent it, as ZooKeeper checks it: a
 * setAuth sent after it is answered at once, and may have added one.
 * Identities are only ever added: the first r->nids of c->ids (its first
 * r->ids_len bytes) are those. */
static void queued_read_serve(struct proc_client *c, struct req *r)
{
    int32_t nids = c->nids;
    size_t len = c->ids.len;
    int super = c->super;

    c->nids = r->nids;
    c->ids.len = r->ids_len;
    c->super = r->super;
    read_serve(c, r->xid, r->type, r->body);
    c->nids = nids;
    c->ids.len = len;
    c->super = super;
}

/* Sends every finished reply at the head of the queue and serves the reads
 * that no longer wait for a write. */
void proc_drain(struct proc_client *c)
{
    struct req *r;

    while (!tb_queue_empty(&c->reqs) && !c->closed &&
           c->state != CONN_CLOSING) {
        r = TB_CONTAINER_OF(tb_queue_head(&c->reqs), struct req, link);
        if (r->state == REQ_WRITE)
            break;
        /* A reply decided early carries the zxid of when it is sent, so
         * that a session's zxids never go back: the writes before it were
         * answered with theirs meanwhile. */
        if (r->state == REQ_DONE && r->restamp)
            tb_store_be64(r->reply + 8, (uint64_t)proc_zxid(c->srv));
        if (r->state == REQ_DONE)
            c->ops->send(c, r->reply, r->reply_len);
        else
            queued_read_serve(c, r);
        if (c->closed)
            return; /* the reply closed the connection; reqs are freed */
        if (head_done(c, r))
            return;
    }
    c->ops->resume(c);
}

size_t proc_reply_header(uint8_t *hdr, int32_t xid, int64_t zxid, int32_t err,
                         size_t len)
{
    size_t n = PROC_REPLY_HDR + (err == 0 ? len : 0);

    tb_store_be32(hdr, (uint32_t)(n - 4));
    tb_store_be32(hdr + 4, (uint32_t)xid);
    tb_store_be64(hdr + 8, (uint64_t)zxid);
    tb_store_be32(hdr + 16, (uint32_t)err);
    return n;
}

/* r's reply, kept until the replies before it are sent: 0, or -1 out of
 * memory. */
static int keep_reply(struct req *r, int64_t zxid, int32_t err,
                      const void *body, size_t len)
{
    uint8_t *frame = malloc(PROC_REPLY_HDR + (err == 0 ? len : 0));

    if (frame == NULL)
        return -1;
    r->reply_len = proc_reply_header(frame, r->xid, zxid, err, len);
    if (r->reply_len > PROC_REPLY_HDR)
        memcpy(frame + PROC_REPLY_HDR, body, len);
    r->reply = frame;
    r->state = REQ_DONE;
    return 0;
}

/* A reply decided now for a request that must still keep its place. */
static void reply_in_order(struct proc_client *c, int32_t xid, int32_t type,
                           int64_t zxid, int err, const uint8_t *body,
                           size_t len)
{
    struct req *r;

    if (tb_queue_empty(&c->reqs)) {
        c->ops->reply(c, xid, zxid, err, body, len);
        return;
    }
    r = req_push(c, REQ_DONE, xid, type);
    if (r == NULL || keep_reply(r, zxid, err, body, len) != 0)
        c->ops->close(c);
    else
        r->restamp = 1;
}

/* A proposal, for its answer: the fsm hook replies to one applied; one
 * that failed has an unknown outcome (it may still be applied, now or
 * after a restart), and the client learns so as ZooKeeper's do: its
 * connection closes, it sees the connection lost, and it reconnects and
 * looks.  A request is never left waiting for its session to time out. */
struct proposal {
    struct tbd *srv;
    uint64_t origin;
    int64_t expiring; /* the session an expiry closes; 0: none */
};

static void on_proposed(void *arg, int status, int64_t index)
{
    struct proposal *p = arg;
    struct proc_client *c = tb_map_get(&p->srv->conn_by_id, p->origin);

    (void)index;
    if (status != 0) {
        tb_log(TB_LOG_WARN, "a write did not complete (%s)%s",
               tb_strerror(status),
               c != NULL          ? ": its connection is closed"
               : p->expiring != 0 ? ": the expiry is proposed again"
                                  : "");
        if (c != NULL && !c->closed)
            c->ops->close(c);
        if (p->expiring != 0)
            expiry_close_failed(&p->srv->sessions, p->expiring);
    }
    free(p);
}

/* A session's close, proposed where closes are decided (the leader, or a
 * server alone), whoever asked: its client, here or through a follower
 * (peer.h), as ZooKeeper's PrepRequestProcessor marks the session closing
 * as it prepares the closeSession.  From then on it is not resumed (a
 * client reconnecting is told it expired, not handed a session about to
 * go), and its requests are refused (proc_frame).  Unless the proposal
 * fails: the session then lives on, to expire as any other; left closing,
 * it would never be closed, its ephemeral nodes (its locks) kept. */
struct close_proposal {
    struct tbd *srv;
    int64_t session;
    replog_done_cb done;
    void *arg;
};

static void on_close_proposed(void *arg, int status, int64_t index)
{
    struct close_proposal *k = arg;

    if (status != 0)
        expiry_close_failed(&k->srv->sessions, k->session);
    k->done(k->arg, status, index);
    free(k);
}

/* Proposes the close t encodes (in s->scratch), the session marked closing
 * first: a failure the log reports before it returns unmarks it. */
static int propose_close(struct tbd *s, const struct tb_txn *t,
                         replog_done_cb done, void *arg)
{
    struct close_proposal *k;
    int rv;

    /* Marked already (an expiry's, or an earlier close's, whose own
     * failure unmarks it), or not tracked here. */
    if (!expiry_closing(&s->sessions, t->session))
        return replog_propose_reserved(s->log, s->scratch.base, s->scratch.len,
                                       done, arg);
    if ((k = malloc(sizeof *k)) == NULL) {
        rv = TB_ENOMEM;
    } else {
        *k = (struct close_proposal){s, t->session, done, arg};
        rv = replog_propose_reserved(s->log, s->scratch.base, s->scratch.len,
                                     on_close_proposed, k);
        if (rv != 0)
            free(k);
    }
    if (rv != 0)
        expiry_close_failed(&s->sessions, t->session);
    return rv;
}

int proc_propose_txn(struct tbd *s, struct tb_txn *t, replog_done_cb done,
                     void *arg)
{
    t->time = tbd_txn_time(s);
    t->flags = (s->cfg->enforce_quota ? TB_TXN_ENFORCE_QUOTA : 0) |
               (s->cfg->sasl_acls ? TB_TXN_SASL_ACLS : 0) |
               (s->cfg->tls.port ? TB_TXN_X509_ACLS : 0);
    if (t->type == TB_OP_RECONFIG) /* decided first (reconfig.c) */
        return reconfig_propose(s, t, done, arg);
    tb_wbuf_reset(&s->scratch);
    tb_txn_encode(&s->scratch, t);
    if (s->scratch.oom)
        return TB_ENOMEM;
    /* Sessions open and close even while low disk refuses other writes:
     * a close is what releases a dead client's ephemeral nodes.  So does
     * a sync's barrier, a few bytes: reads stay served, and current.  And
     * a reconfig's outcome: raft's members changed already (decide
     * refused the reconfig under low disk), and it is what says so. */
    if (t->type == TB_OP_CLOSESESSION)
        return propose_close(s, t, done, arg);
    if (t->type == TB_OP_CREATESESSION || t->type == TB_OP_SYNC ||
        t->type == TB_OP_RECONFIG_TXN)
        return replog_propose_reserved(s->log, s->scratch.base, s->scratch.len,
                                       done, arg);
    return replog_propose(s->log, s->scratch.base, s->scratch.len, done, arg);
}

/* A txn from this server: proposed here, or forwarded to the leader by a
 * follower (peer.h); the reply comes from the fsm result hook. */
int proc_propose(struct tbd *s, int32_t type, int64_t session, int32_t xid,
                 uint64_t origin, const struct proc_client *c,
                 struct tb_str body)
{
    struct proposal *p;
    struct tb_txn t;
    int rv;

    t.type = type;
    t.session = session;
    t.xid = xid;
    t.origin = (int64_t)origin;
    t.super = c ? (uint8_t)c->super : 1;
    t.ids = c ? tb_vec_view(&c->ids, c->nids) : (struct tb_vec){0, NULL, 0};
    t.body = body.ptr ? body : TB_STR("");
    if (s->peer != NULL && !replog_is_leader(s->log)) {
        t.time = 0; /* the leader's are what count */
        t.flags = 0;
        tb_wbuf_reset(&s->scratch);
        tb_txn_encode(&s->scratch, &t);
        return s->scratch.oom
                   ? TB_ENOMEM
                   : peer_forward(s, s->scratch.base, s->scratch.len);
    }
    if (origin != 0 && (rv = peer_write_here(s, &t)) != 0)
        return rv;
    if ((p = malloc(sizeof *p)) == NULL)
        return TB_ENOMEM;
    /* A close no client asked for is an expiry's (session.c). */
    *p = (struct proposal){
        s, origin, type == TB_OP_CLOSESESSION && origin == 0 ? session : 0};
    if ((rv = proc_propose_txn(s, &t, on_proposed, p)) != 0)
        free(p);
    return rv;
}

/* What goes through the log.  In an ensemble, sync too: a follower
 * answers it once it has applied the barrier the leader logged, so the
 * reads after it see everything the leader had committed. */
static int is_write(const struct tbd *s, int32_t type)
{
    switch (type) {
    case TB_OP_SYNC:
        return s->peer != NULL;
    case TB_OP_CREATE:
    case TB_OP_DELETE:
    case TB_OP_SETDATA:
    case TB_OP_SETACL:
    case TB_OP_MULTI:
    case TB_OP_CREATE2:
    case TB_OP_CREATECONTAINER:
    case TB_OP_CREATETTL:
    case TB_OP_CLOSESESSION:
    case TB_OP_RECONFIG:
        return 1;
    default:
        return 0;
    }
}

/* A write, logged (or forwarded to the leader); its answer comes when it
 * is applied (proc_result). */
static void log_write(struct proc_client *c, int32_t xid, int32_t type,
                      struct tb_str body)
{
    struct tbd *s = c->srv;
    struct req *r;
    int rv, forward;

    forward = s->peer != NULL && !replog_is_leader(s->log);
    /* Writes it sent to the leader are still out and this server leads
     * now, or writes logged here while it led are still out and it
     * follows now: this one could be applied without them, which the
     * other term may lose.  Their outcome is unknown, as when the link to
     * the leader ends: the connection ends too. */
    if (forward ? c->writes_in_flight > c->forwarded : c->forwarded > 0) {
        c->ops->close(c);
        return;
    }
    rv = proc_propose(s, type, c->session_id, xid, c->id, c, body);
    /* A follower with no leader to forward to (one just died): the client
     * sees the connection lost, as with ZooKeeper's, and goes on through
     * another server or once a leader is known; not an error reply.  So
     * does a leader's client whose session is held on another server now
     * (peer.h), as ZooKeeper's closes a moved session's connection. */
    if (rv == TB_ECONNECTIONLOSS || rv == TB_ESESSIONMOVED) {
        c->ops->close(c);
        return;
    }
    if (rv != 0) {
        if (rv != TB_ENOTREADONLY)
            tb_log(TB_LOG_ERROR, "cannot log a write: %s", tb_strerror(rv));
        reply_in_order(c, xid, type, proc_zxid(s),
                       rv == TB_ENOTREADONLY ? TB_ENOTREADONLY : TB_ESYSTEM,
                       NULL, 0);
        return;
    }
    r = req_push(c, REQ_WRITE, xid, type);
    if (r == NULL) {
        c->ops->close(c);
        return;
    }
    r->forwarded = forward;
    c->writes_in_flight++;
    c->forwarded += (unsigned)forward;
    c->reconfiguring += type == TB_OP_RECONFIG;
}

static void write_request(struct proc_client *c, int32_t xid, int32_t type,
                          struct tb_str body)
{
    struct tbd *s = c->srv;
    struct tb_wbuf multi;
    int rv;

    if (type != TB_OP_MULTI) {
        if ((rv = proc_write_refused(s, type, body)) != 0)
            reply_in_order(c, xid, type, proc_zxid(s), rv, NULL, 0);
        else
            log_write(c, xid, type, body);
        return;
    }
    tb_wbuf_init(&multi);
    rv = proc_multi_prepare(s, &body, &multi);
    if (rv == 1)
        reply_in_order(c, xid, type, proc_zxid(s), 0, multi.base, multi.len);
    else if (rv == 0)
        log_write(c, xid, type, body);
    else
        c->ops->close(c);
    tb_wbuf_free(&multi);
}

static void read_request(struct proc_client *c, int32_t xid, int32_t type,
                         struct tb_str body)
{
    struct req *r;
    char *copy;

    if (tb_queue_empty(&c->reqs)) {
        uint64_t start = tbd_now_ms(c->srv);
        struct req tmp = {.type = type, .start_ms = start,
                          .start_ns = tbd_shown_ns(c->srv)};
        read_serve(c, xid, type, body);
        request_done(c, &tmp);
        return;
    }
    r = req_push(c, REQ_READ, xid, type);
    copy = malloc(body.len ? body.len : 1);
    if (r == NULL || copy == NULL) {
        free(copy);
        c->ops->close(c);
        return;
    }
    memcpy(copy, body.ptr, body.len);
    r->body = (struct tb_str){copy, body.len};
    r->nids = c->nids;
    r->ids_len = c->ids.len;
    r->super = c->super;
}

int proc_frame(struct proc_client *c, struct tb_str frame)
{
    struct tb_rd rd = tb_rd_make(frame.ptr, frame.len);
    struct tb_request_header h;
    struct tb_str body;

    if (c->state == CONN_NEW) {
        session_connect(c, frame);
        return 0;
    }
    if (tb_request_header_decode(&rd, &h) != 0) {
        tb_log(TB_LOG_WARN, "closing 0x%llx: truncated request header",
               (unsigned long long)c->session_id);
        c->ops->close(c);
        return 0;
    }
    if (c->reconfiguring && h.type != TB_OP_RECONFIG)
        return PROC_HELD;
    body = (struct tb_str){(const char *)rd.pos, (size_t)(rd.end - rd.pos)};
    session_touch(c->srv, c->session_id);
    c->last_op = h.type;
    if (h.xid >= 0) /* the client's last own request, not a ping's -2 */
        c->last_cxid = h.xid;
    if (h.type == TB_OP_AUTH) {
        auth_request(c, h.xid, body);
        return 0;
    }
    if (h.type == TB_OP_SASL) {
        sasl_request(c, h.xid, body);
        return 0;
    }
    if (!auth_enforced(c, h.xid))
        return 0;
    /* A session whose close is decided here is served no more, as
     * ZooKeeper checks every request's session before it serves it: the
     * request is answered SessionExpired in its turn, sets no watch, and
     * the connection stays until the close is applied (wire doc 11.2).
     * Writes go on to the log, behind the close: applied after it, they
     * are refused as expired there, in ZooKeeper's order of checks; a
     * closeSession again is logged as ZooKeeper's is.  A follower does
     * not know its clients' sessions closing (session_closing): their
     * requests are served until the close is applied there. */
    if ((h.type == TB_OP_SYNC || !is_write(c->srv, h.type)) &&
        session_closing(c->srv, c->session_id)) {
        reply_in_order(c, h.xid, h.type, proc_zxid(c->srv), TB_ESESSIONEXPIRED,
                       NULL, 0);
        return 0;
    }
    if (is_write(c->srv, h.type))
        write_request(c, h.xid, h.type, body);
    else
        read_request(c, h.xid, h.type, body);
    return 0;
}

uint64_t proc_conn_id_base(int server_id, int64_t wall_ms)
{
    uint64_t time = wall_ms > 0 ? (uint64_t)wall_ms : 0;

    return (uint64_t)server_id << 56 | (time << 8 & ((UINT64_C(1) << 56) - 1));
}

/* r, a write out, is answered: sent now if nothing before it waits (with
 * no copy kept), else kept until the replies before it are sent. */
static void write_answered(struct proc_client *c, struct req *r, int64_t zxid,
                           int rc, const uint8_t *body, size_t len)
{
    c->writes_in_flight--;
    c->forwarded -= (unsigned)r->forwarded;
    /* The last out: what was sent after is read on (drain). */
    c->reconfiguring -= r->type == TB_OP_RECONFIG;
    if (&r->link == tb_queue_head(&c->reqs)) {
        c->ops->reply(c, r->xid, zxid, rc, body, len);
        if (c->closed || head_done(c, r))
            return;
    } else if (keep_reply(r, zxid, rc, body, len) != 0) {
        c->ops->close(c);
        return;
    } else {
        /* Answered before a write ahead of it: a reconfig refused while
         * another is out (proc_result), or a write the leader refused
         * (proc_refused).  Sent after that, with the zxid of then. */
        r->restamp = 1;
    }
    proc_drain(c);
}

/* The fsm's result hook: route a txn's outcome to the connection that
 * proposed it, if it is still here and still that session's.  A new
 * session goes only to a connection waiting for one.  A closing one
 * (its session's close applied, its login refused, its input ended) is
 * sent nothing more than it has, as ZooKeeper's closes at once: were the
 * answers after its close sent, a read queued behind them would be served
 * for a session already gone. */
void proc_result(struct tbd *s, const struct tb_txn *t, int64_t zxid, int rc,
                 const uint8_t *body, size_t len)
{
    struct proc_client *c = tb_map_get(&s->conn_by_id, (uint64_t)t->origin);
    struct tb_queue *q;
    struct req *r = NULL;
    if (c == NULL || c->closed || c->state == CONN_CLOSING)
        return;
    if (t->type == TB_OP_CREATESESSION) {
        if (c->state == CONN_SESSION && c->session_id == 0)
            session_result(c, rc, body, len);
        return;
    }
    if (c->revalidating) {
        if (t->type == TB_OP_SYNC && t->session == 0)
            session_revalidated(c);
        return;
    }
    if (c->session_id != t->session)
        return;
    /* The first write out: writes are applied in the order sent (one
     * behind a reconfig waits for its answer, reconfiguring), but for a
     * reconfig sent while another was out: refused at once (in progress),
     * its answer comes first, and waits to be sent after the other's. */
    TB_QUEUE_FOREACH(q, &c->reqs)
    {
        r = TB_CONTAINER_OF(q, struct req, link);
        if (r->state == REQ_WRITE &&
            (r->type != TB_OP_RECONFIG || r->xid == t->xid))
            break;
        r = NULL;
    }
    if (r == NULL || r->xid != t->xid) {
        tb_log(TB_LOG_ERROR, "reply for xid %d out of order on 0x%llx",
               t->xid, (unsigned long long)c->session_id);
        c->ops->close(c);
        return;
    }
    c->last_zxid = zxid;
    r->close_after = t->type == TB_OP_CLOSESESSION;
    write_answered(c, r, zxid, rc, body, len);
}

void proc_refused(struct proc_client *c, int32_t xid, int err)
{
    struct tb_queue *q;
    struct req *r;

    if (c->state == CONN_CLOSING)
        return;

    TB_QUEUE_FOREACH (q, &c->reqs) {
        r = TB_CONTAINER_OF(q, struct req, link);
        if (r->state == REQ_WRITE && r->forwarded && r->xid == xid) {
            r->restamp = 1;
            write_answered(c, r, proc_zxid(c->srv), err, NULL, 0);
            return;
        }
    }
    c->ops->close(c); /* no such write: its outcome is not known here */
}

/* Without the watches, a slow reader of a busy subtree's events would keep
 * a closing connection (an expired session's among them) for as long as
 * the changes come: its output would never drain. */
void proc_close_after_flush(struct proc_client *c)
{
    watch_remove_watcher(&c->srv->watches, &c->watch);
    c->ops->close_after_flush(c);
}

void proc_client_closed(struct proc_client *c)
{
    while (!tb_queue_empty(&c->reqs))
        req_free(c, TB_CONTAINER_OF(tb_queue_head(&c->reqs), struct req,
                                    link));
    watch_remove_watcher(&c->srv->watches, &c->watch);
    sasl_conn_closed(c);
}
