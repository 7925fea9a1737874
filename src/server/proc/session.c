/* Sessions: the handshake, and expiry.
 *
 * Creating and closing a session are txns, so every replica agrees on the
 * session table (it lives in the fsm).  Liveness is not replicated: only
 * the leader keeps deadlines here, touched by every request, and it alone
 * proposes the close of a session whose deadline passed — expiry is
 * decided in one place.  After a restart or a leader change every session
 * starts with a fresh timeout.  The deadlines' arithmetic is expiry.c's,
 * on the server's clock (tbd_now_ms). */
#include <sys/random.h>

#include "server/config/config.h"
#include "server/fsm/fsm.h"
#include "server/logging/log.h"
#include "server/peer/peer.h"
#include "server/proc/proc.h"
#include "server/replog/replog.h"
#include "server/server.h"

static void reply_connect(struct proc_client *c, int32_t timeout, int64_t id,
                          struct tb_str passwd)
{
    struct tb_connect_resp r = {0, timeout, id, passwd, c->has_readonly, 0};
    struct tb_wbuf w;
    size_t start;

    tb_wbuf_init(&w);
    start = tb_frame_begin(&w);
    tb_connect_resp_encode(&w, &r);
    tb_frame_end(&w, start);
    c->ops->send(c, w.base, w.len);
    tb_wbuf_free(&w);
}

static void refuse(struct proc_client *c)
{
    static const char zeros[16];

    reply_connect(c, 0, 0, (struct tb_str){zeros, 16});
    proc_close_after_flush(c);
}

static int32_t negotiate(const struct tb_config *cfg, int32_t asked)
{
    if (asked < cfg->min_session_timeout)
        return cfg->min_session_timeout;
    if (asked > cfg->max_session_timeout)
        return cfg->max_session_timeout;
    return asked;
}

/* 0, or the connection is closed: one its session's close could not
 * find would be served on after its ephemerals went (the client comes
 * back, and resumes). */
static int attach(struct proc_client *c, int64_t id, int32_t timeout)
{
    struct tbd *s = c->srv;

    if (tb_map_put(&s->conn_by_session, (uint64_t)id, c) != 0) {
        tb_log(TB_LOG_WARN,
               "closing a connection of session 0x%llx: out of "
               "memory",
               (unsigned long long)id);
        c->ops->close(c);
        return -1;
    }
    c->session_id = id;
    c->timeout_ms = timeout;
    c->state = CONN_OPEN;
    expiry_attach(&s->sessions, id, timeout, tbd_now_ms(s));
    return 0;
}

/* c resumes its session (c->session_id, c->timeout_ms), held here now. */
static void resume(struct proc_client *c)
{
    struct fsm_session_info fs;
    struct proc_client *old =
        tb_map_get(&c->srv->conn_by_session, (uint64_t)c->session_id);

    /* Closed while the leader was asked, or its close decided here: not
     * the client's any more. */
    if (!session_resumable(c->srv, c->session_id, &fs)) {
        refuse(c);
        return;
    }
    /* Two connections may have claimed it at once: one waited for the
     * leader's answer, or for the session's creation to be applied here,
     * and the client, tired of waiting, came back on another, which no
     * map held yet to be closed (session_connect).  The latest connection
     * keeps the session, whichever claim is answered first; else the
     * other, once gone, would take the session's entry with it, and the
     * session's close would never reach the one left. */
    if (old != NULL && old != c) {
        if (old->id > c->id) {
            c->ops->close(c);
            return;
        }
        old->ops->close(old);
    }
    /* Its timeout is the one it was created with, whatever the client asks
     * now: the one every member's log has, which a leader counts from (a
     * new one reloads it), not one this member would negotiate. */
    if (attach(c, c->session_id, fs.timeout_ms) != 0)
        return;
    reply_connect(c, fs.timeout_ms, c->session_id,
                  (struct tb_str){(const char *)fs.passwd, 16});
}

/* c resumes its session (c->session_id, with c->passwd).  One this server
 * knows is claimed from the leader (peer.h).  One a follower does not know
 * may be one whose creation it has not applied yet: it is looked for again
 * once a barrier through the log has come back, so after everything the
 * leader had committed (ZooKeeper's learner asks its leader), and only then
 * refused as expired. */
static void claim(struct proc_client *c, int may_wait)
{
    static const struct tb_path_req root = {TB_STR("/")};
    struct tbd *s = c->srv;
    struct fsm_session_info fs;
    struct tb_wbuf body;
    int rv;

    /* A new leader that has not applied all its predecessor committed may
     * not know of the session's creation, or of its close, yet: the client
     * tries again (peer__on_own answers followers' claims the same). */
    if (s->peer != NULL && replog_is_leader(s->log) &&
        !replog_leader_caught_up(s->log)) {
        c->ops->close(c);
        return;
    }
    if (!fsm_session_get(s->fsm, c->session_id, &fs)) {
        if (!may_wait || s->peer == NULL || replog_is_leader(s->log)) {
            refuse(c);
            return;
        }
        tb_wbuf_init(&body);
        tb_path_req_encode(&body, &root);
        rv = proc_propose(s, TB_OP_SYNC, 0, 0, c->id, c,
                          (struct tb_str){(const char *)body.base, body.len});
        tb_wbuf_free(&body);
        if (rv != 0) { /* no leader to ask: the client tries again */
            c->ops->close(c);
            return;
        }
        c->revalidating = 1;
        c->state = CONN_SESSION; /* reads nothing until answered */
        return;
    }
    if (memcmp(c->passwd, fs.passwd, 16) != 0) {
        refuse(c);
        return;
    }
    rv = peer_claim(s, c->id, c->session_id);
    if (rv == 1)
        resume(c);
    else if (rv == 0)
        c->state = CONN_SESSION; /* reads nothing until claimed */
    else
        c->ops->close(c);
}

void session_revalidated(struct proc_client *c)
{
    c->revalidating = 0;
    claim(c, 0);
    /* Taken at once (this server leads now): what the client sent since,
     * held while the barrier went, is read now, as session_claimed does. */
    if (!c->closed && c->state == CONN_OPEN)
        c->ops->resume(c);
}

void session_connect(struct proc_client *c, struct tb_str frame)
{
    struct tbd *s = c->srv;
    struct tb_rd rd = tb_rd_make(frame.ptr, frame.len);
    struct tb_connect_req req;
    struct tb_create_session_txn st;
    struct proc_client *old;
    uint8_t pw[16];
    int32_t timeout;
    struct tb_wbuf body;
    int rv;

    if (tb_connect_req_decode(&rd, &req) != 0) {
        tb_log_fields(TB_LOG_WARN,
                      TB_LOG_FIELDS(TB_LOG_STR("peer", c->peer),
                                    TB_LOG_STR("refused", "handshake")),
                      "closing %s:%d: malformed ConnectRequest", c->peer,
                      c->peer_port);
        c->ops->close(c);
        return;
    }
    if (!peer_serving(s)) {
        /* no leader: another server can serve it */
        if (tb_log_due(&s->refused_log, tbd_now_ms(s)))
            tb_log_rated_fields(&s->refused_log, TB_LOG_INFO,
                                TB_LOG_FIELDS(TB_LOG_STR("peer", c->peer),
                                              TB_LOG_STR("refused",
                                                         "not serving")),
                                "refusing %s:%d: no leader is known, this "
                                "server is not serving", c->peer,
                                c->peer_port);
        c->ops->close(c);
        return;
    }
    if (req.last_zxid > proc_zxid(s)) {
        tb_log_fields(TB_LOG_WARN,
                      TB_LOG_FIELDS(TB_LOG_STR("peer", c->peer),
                                    TB_LOG_STR("refused", "zxid ahead"),
                                    TB_LOG_HEX("client_zxid", req.last_zxid),
                                    TB_LOG_HEX("zxid", proc_zxid(s))),
                      "refusing %s:%d: client has seen zxid 0x%llx, "
                      "this server only 0x%llx", c->peer, c->peer_port,
                      (unsigned long long)req.last_zxid,
                      (unsigned long long)proc_zxid(s));
        c->ops->close(c);
        return;
    }
    c->has_readonly = req.has_readonly;
    timeout = negotiate(s->cfg, req.timeout);
    if (req.session_id != 0) {
        /* Whoever held the session loses it first, as ZooKeeper does. */
        old = tb_map_get(&s->conn_by_session, (uint64_t)req.session_id);
        if (old != NULL && old != c)
            old->ops->close(old);
        if (req.passwd.len != 16) {
            refuse(c);
            return;
        }
        c->session_id = req.session_id;
        c->timeout_ms = timeout;
        memcpy(c->passwd, req.passwd.ptr, 16);
        claim(c, 1);
        return;
    }
    /* The kernel's generator: OpenSSL's would load its providers, a few
     * MiB of libcrypto made resident for 16 bytes. */
    if (getrandom(pw, sizeof pw, 0) != (ssize_t)sizeof pw) {
        c->ops->close(c);
        return;
    }
    st.timeout = timeout;
    st.passwd = (struct tb_str){(const char *)pw, sizeof pw};
    tb_wbuf_init(&body);
    tb_create_session_txn_encode(&body, &st);
    rv = proc_propose(s, TB_OP_CREATESESSION, 0, 0, c->id, c,
                      (struct tb_str){(const char *)body.base, body.len});
    tb_wbuf_free(&body);
    if (rv != 0) {
        tb_log(TB_LOG_WARN, "cannot create a session for %s:%d: %s",
               c->peer, c->peer_port, tb_strerror(rv));
        c->ops->close(c);
        return;
    }
    c->state = CONN_SESSION;
}

void session_result(struct proc_client *c, int rc, const uint8_t *body,
                    size_t len)
{
    struct tb_rd rd = tb_rd_make(body, len);
    struct tb_session_resp r;

    if (rc != 0 || tb_session_resp_decode(&rd, &r) != 0) {
        c->ops->close(c);
        return;
    }
    if (attach(c, r.session, r.timeout) != 0)
        return;
    reply_connect(c, r.timeout, r.session, r.passwd);
    c->ops->resume(c);
}

int session_closing(struct tbd *s, int64_t id)
{
    const struct sess *se = tb_map_get(&s->sessions, (uint64_t)id);

    return se != NULL && se->closing;
}

int session_resumable(struct tbd *s, int64_t id, struct fsm_session_info *fs)
{
    return fsm_session_get(s->fsm, id, fs) && !session_closing(s, id);
}

void session_expired(struct proc_client *c)
{
    refuse(c);
}

void session_claimed(struct proc_client *c)
{
    resume(c);
    c->ops->resume(c); /* what the client sent since */
}

void session_touch(struct tbd *s, int64_t id)
{
    expiry_touch(&s->sessions, id, tbd_now_ms(s));
    /* Only the leader expires: a follower tells it (peer.h). */
    if (s->peer != NULL && !replog_is_leader(s->log))
        peer_touched(s, id);
}

void session_opened(struct tbd *s, int64_t id, int32_t timeout_ms)
{
    if (expiry_open(&s->sessions, id, timeout_ms, tbd_now_ms(s)) == NULL)
        tb_log(TB_LOG_ERROR, "out of memory tracking session 0x%llx",
               (unsigned long long)id);
}

static int reopen(void *arg, const struct fsm_session_info *si)
{
    session_opened(arg, si->id, si->timeout_ms);
    return 0;
}

void session_reload(struct tbd *s)
{
    /* At start the log was replayed, on a follower a snapshot installed,
     * holding the loop: each session's full timeout counts from now. */
    tbd_clock_refresh(s);
    expiry_forget_all(&s->sessions);
    fsm_session_foreach(s->fsm, reopen, s);
    s->expiring = s->log != NULL && replog_is_leader(s->log); /* NULL: opening */
}

void session_closed(struct tbd *s, int64_t id)
{
    struct proc_client *c = tb_map_get(&s->conn_by_session, (uint64_t)id);
    struct tb_queue *q;
    struct req *r;

    expiry_forget(&s->sessions, id);
    peer_session_closed(s, id);
    if (c == NULL)
        return;
    /* A client's own closeSession is answered before its socket closes
     * (its reply closes it), also with requests sent after it. */
    TB_QUEUE_FOREACH (q, &c->reqs) {
        r = TB_CONTAINER_OF(q, struct req, link);
        if (r->type == TB_OP_CLOSESESSION && r->state == REQ_WRITE)
            return; /* not one refused before it was logged */
    }
    tb_map_del(&s->conn_by_session, (uint64_t)id);
    proc_close_after_flush(c);
}

static int propose_close(void *arg, const struct sess *se)
{
    int rv =
        proc_propose(arg, TB_OP_CLOSESESSION, se->id, 0, 0, NULL, TB_STR(""));

    if (rv == 0)
        tb_log_fields(TB_LOG_INFO,
                      TB_LOG_FIELDS(TB_LOG_HEX("session", se->id),
                                    TB_LOG_INT("timeout_ms", se->timeout_ms)),
                      "expiring session 0x%llx (timeout %d ms)",
                      (unsigned long long)se->id, se->timeout_ms);
    return rv;
}

/* Once per tick: propose the close of every session past its deadline.
 *
 * A tick that comes late means the loop did not run (the process stopped,
 * the machine paused, a system call blocked): what clients sent meanwhile
 * is still unread, and timers run before the loop reads, so the time lost
 * counts against no session (expiry_lost). */
void session_tick(struct tbd *s)
{
    uint64_t now = tbd_now_ms(s);
    uint64_t lost = expiry_lost(s->tick_ms, &s->last_tick_ms, now);

    if (lost > 0)
        tb_log(TB_LOG_WARN, "stalled %llu ms: session deadlines moved by it",
               (unsigned long long)lost);
    /* Only the leader expires sessions; a new one gives each a fresh
     * timeout first (session_reload, once told it leads: raft may say so
     * a poll earlier, while the deadlines are still a follower's). */
    if (s->expiring && replog_is_leader(s->log))
        expiry_tick(&s->sessions, now, lost, propose_close, s);
}
