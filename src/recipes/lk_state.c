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
 *     with the same session (held again) or with another one (lost),
 *     EXPIRED / CLOSED (lost);
 *   - tb_mutex_state, which also reads the client's live state.
 * A lost lock keeps its hold count until released; the release reports
 * TB_ELOCKLOST, so code that never looked at the state still learns it.
 * Nothing here calls the acquisition or the handle (lk.c). */
#include "recipes/rcp.h"

void rcp_lk_set_lstate(struct tb_mutex *m, int s, struct rcp_out *o)
{
    if (m->lstate == s)
        return;
    m->lstate = s;
    if (o->nstates < (int)(sizeof o->states / sizeof o->states[0]))
        o->states[o->nstates++] = s;
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
        if (rcp_lk_holding(m))
            rcp_lk_set_lstate(
                m, sid != m->session ? TB_LOCK_LOST : TB_LOCK_HELD, &o);
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

/* What a holder should believe now: the handle's state, corrected by the
 * client's live one (which moves even when nobody forwards states). */
int rcp_lk_state(struct tb_mutex *m)
{
    int s, cs;

    pthread_mutex_lock(m->mu);
    s = m->lstate;
    if ((s == TB_LOCK_HELD || s == TB_LOCK_SUSPENDED) && !m->c_closed) {
        cs = tb_client_state(m->c);
        if (cs == TB_SESSION_EXPIRED || cs == TB_SESSION_AUTH_FAILED ||
            cs == TB_SESSION_CLOSED ||
            tb_client_session(m->c, NULL) != m->session)
            s = TB_LOCK_LOST;
        else if (cs == TB_SESSION_SUSPENDED || cs == TB_SESSION_CONNECTING)
            s = TB_LOCK_SUSPENDED;
        else
            s = TB_LOCK_HELD;
    } else if (s == TB_LOCK_HELD || s == TB_LOCK_SUSPENDED) {
        s = TB_LOCK_LOST;
    }
    pthread_mutex_unlock(m->mu);
    return s;
}
