/* What a lock's holder is told: the lock's state (held, suspended,
 * lost, unlocked), moved by the session states the registry forwards,
 * and rcp_lk_state(), which also reads the client's live state.
 *
 * How a holder learns its lock is lost, from the most to the least
 * direct:
 *   - the watch on its own node (lk_acquire.c): NodeDeleted (someone
 *     deleted it), or the watch's final call with TB_ESESSIONEXPIRED /
 *     TB_ECLOSING (the client declares expiry itself after a session
 *     timeout without a server, e.g. after a SIGSTOP longer than the
 *     timeout);
 *   - forwarded session states: SUSPENDED (may be lost), CONNECTED again
 *     with the same session (held again once our node is seen to be still
 *     ours, below) or with another one (lost), READONLY (still
 *     suspended), EXPIRED / CLOSED (lost);
 *   - tb_mutex_state, which also reads the client's live state.
 * A lost lock keeps its hold count until released; the release reports
 * TB_ELOCKLOST, so code that never looked at the state still learns it.
 *
 * Why a reconnect is not "held" at once: while we were away our node
 * may have been deleted (by an operator, or a broken lock) and the lock
 * taken by a waiter.  The own-node watch hears of it only from the
 * replay of watches (setWatches), whose catch-up events come after the
 * CONNECTED state.  So a suspended holder reconnected within its session
 * looks at its node (sync, then exists) and is told HELD only if it is
 * there with our czxid (the token) and our session as ephemeral owner,
 * else LOST.  The client sends the replay before any request made after
 * the handshake and the server answers in order, so the look's replies
 * come after the replay's events.  A read-only server may be behind the quorum:
 * it can tell a holder nothing, so there the lock stays SUSPENDED. Nothing here
 * calls the acquisition or the handle (lk.c). */
#include "recipes/rcp.h"

void rcp_lk_set_lstate(struct tb_mutex *m, int s, struct rcp_out *o)
{
    if (m->lstate == s)
        return;
    m->lstate = s;
    /* A grant still in its lock delay is not the caller's yet: the
     * acquisition's callback tells how it ended, and a loss ends it. */
    if (m->ld != NULL) {
        if (s == TB_LOCK_LOST && o->ld_lost == NULL) {
            rcp_lk_ref(m);
            o->ld_lost = m;
        }
        return;
    }
    rcp_lk_tell_state(m, o);
}

void rcp_lk_tell_state(struct tb_mutex *m, struct rcp_out *o)
{
    if (o->nstates < (int)(sizeof o->states / sizeof o->states[0]))
        o->states[o->nstates++] = m->lstate;
    o->scb = m->scb;
    o->sdata = m->sdata;
    o->stoken = m->token;
}

int rcp_lk_holding(const struct tb_mutex *m)
{
    return m->holds > 0 &&
           (m->lstate == TB_LOCK_HELD || m->lstate == TB_LOCK_SUSPENDED);
}

void rcp_lk_note_session_end(struct tb_mutex *m, int rc)
{
    if (rc == TB_ECLOSING)
        m->c_closed = 1; /* the handle is about to be freed */
}

int rcp_lk_session_over(int rc)
{
    return rc == TB_ESESSIONEXPIRED || rc == TB_ECLOSING ||
           rc == TB_EAUTHFAILED;
}

int rcp_lk_node_ours(const struct tb_mutex *m, const struct tb_stat *st)
{
    return st->czxid == m->token && st->ephemeral_owner == m->session;
}

int64_t rcp_lk_shared_czxid(const struct tb_mutex *m)
{
    return m->cfg->fair ? 0 : m->czxid;
}

/* ---- after a reconnect: is our node still ours? ---- */

/* The look's replies count while the hold waits for them. */
static int awaits_look(const struct tb_mutex *m)
{
    return rcp_lk_holding(m) && m->lstate == TB_LOCK_SUSPENDED;
}

/* A look that cannot be sent cannot confirm the lock: LOST is the answer
 * that keeps two holders apart. */
static void sent_or_lost(struct tb_mutex *m, struct rcp_ctx *x, int rv,
                         struct rcp_out *o)
{
    if (x != NULL && rv == 0)
        return;
    if (x != NULL)
        rcp_ctx_free_locked(x);
    rcp_lk_set_lstate(m, TB_LOCK_LOST, o);
}

static void on_own_look(struct tb_client *c, int rc, const struct tb_stat *st,
                        void *data)
{
    struct rcp_ctx *x = data;
    struct tb_mutex *m = x->m;
    struct rcp_out o = {0};

    (void)c;
    if (!rcp_ctx_enter(x) || !awaits_look(m)) { /* stale, or decided */
        rcp_ctx_leave(x, &o);
        return;
    }
    rcp_lk_note_session_end(m, rc);
    if (rc == TB_ECONNECTIONLOSS) {
        /* The next reconnect looks again. */
    } else if (rc != 0 || !rcp_lk_node_ours(m, st)) {
        rcp_lk_set_lstate(m, TB_LOCK_LOST, &o);
    } else if (!m->c_closed && tb_client_state(m->c) == TB_SESSION_CONNECTED) {
        /* Else the connection went again: its SUSPENDED is on its way,
         * and the next CONNECTED looks again. */
        rcp_lk_set_lstate(m, TB_LOCK_HELD, &o);
    }
    rcp_ctx_leave(x, &o);
}

static void on_own_synced(struct tb_client *c, int rc, void *data)
{
    struct rcp_ctx *x = data, *y;
    struct tb_mutex *m = x->m;
    struct rcp_out o = {0};

    (void)c;
    if (!rcp_ctx_enter(x) || !awaits_look(m)) {
        rcp_ctx_leave(x, &o);
        return;
    }
    rcp_lk_note_session_end(m, rc);
    if (rc == TB_ECONNECTIONLOSS) {
        /* The next reconnect looks again. */
    } else if (rcp_lk_session_over(rc) || m->c_closed) {
        rcp_lk_set_lstate(m, TB_LOCK_LOST, &o);
    } else {
        y = rcp_ctx_new(m);
        sent_or_lost(m, y,
                     y ? tb_exists(m->c, m->node, NULL, NULL, on_own_look, y)
                       : TB_ENOMEM,
                     &o);
    }
    rcp_ctx_leave(x, &o);
}

/* Reads our node after a sync: the server we reconnected to may lag
 * behind the quorum, and the sync makes the read see every write
 * acknowledged before it (a delete of our node among them). */
static void look_at_own(struct tb_mutex *m, struct rcp_out *o)
{
    struct rcp_ctx *x = m->node != NULL ? rcp_ctx_new(m) : NULL;

    sent_or_lost(m, x, x ? tb_sync(m->c, m->node, on_own_synced, x) : TB_ENOMEM,
                 o);
}

/* A holder's answer to a connected session (CONNECTED or READONLY). */
static void on_connected(struct tb_mutex *m, int state, int64_t sid,
                         struct rcp_out *o)
{
    if (!rcp_lk_holding(m))
        return;
    if (sid != m->session)
        rcp_lk_set_lstate(m, TB_LOCK_LOST, o);
    else if (state == TB_SESSION_READONLY)
        rcp_lk_set_lstate(m, TB_LOCK_SUSPENDED, o);
    else if (m->lstate == TB_LOCK_SUSPENDED)
        look_at_own(m, o);
}

/* ---- session states ---- */

void rcp_lk_on_state(struct rcp_reg *r, int state)
{
    struct tb_mutex *m = TB_CONTAINER_OF(r, struct tb_mutex, reg);
    struct rcp_out o = {0};
    int64_t sid;

    pthread_mutex_lock(m->mu);
    switch (state) {
    case TB_SESSION_SUSPENDED:
        if (m->holds > 0 && m->lstate == TB_LOCK_HELD)
            rcp_lk_set_lstate(m, TB_LOCK_SUSPENDED, &o);
        break;
    case TB_SESSION_CONNECTED:
    case TB_SESSION_READONLY:
        if (m->c_closed)
            break;
        sid = tb_client_session(m->c, NULL);
        on_connected(m, state, sid, &o);
        if (sid != m->seen_session) {
            if (m->seen_session != 0) {
                o.session_cb = m->session_cb;
                o.session_data = m->session_data;
            }
            m->seen_session = sid;
        }
        break;
    case TB_SESSION_EXPIRED:
    case TB_SESSION_AUTH_FAILED:
    case TB_SESSION_CLOSED:
        if (state == TB_SESSION_CLOSED)
            m->c_closed = 1;
        if (rcp_lk_holding(m))
            rcp_lk_set_lstate(m, TB_LOCK_LOST, &o);
        break;
    default:
        break;
    }
    pthread_mutex_unlock(m->mu);
    rcp_out_fire(&o);
}

/* What a holder should believe now: the handle's state, corrected down by
 * the client's live one (which moves even when nobody forwards states).
 * Never up: a suspended hold is HELD again only once its node was seen
 * after the reconnect. */
int rcp_lk_state(struct tb_mutex *m)
{
    int s, cs;

    pthread_mutex_lock(m->mu);
    s = m->ld != NULL ? TB_LOCK_ACQUIRING : m->lstate; /* lock delay */
    if ((s == TB_LOCK_HELD || s == TB_LOCK_SUSPENDED) && !m->c_closed) {
        cs = tb_client_state(m->c);
        if (cs == TB_SESSION_EXPIRED || cs == TB_SESSION_AUTH_FAILED ||
            cs == TB_SESSION_CLOSED ||
            tb_client_session(m->c, NULL) != m->session)
            s = TB_LOCK_LOST;
        else if (cs == TB_SESSION_SUSPENDED || cs == TB_SESSION_CONNECTING ||
                 cs == TB_SESSION_READONLY)
            s = TB_LOCK_SUSPENDED;
    } else if (s == TB_LOCK_HELD || s == TB_LOCK_SUSPENDED) {
        s = TB_LOCK_LOST;
    }
    pthread_mutex_unlock(m->mu);
    return s;
}
