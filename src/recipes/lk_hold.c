/* The engine once it holds: the own-node watch that tells a holder its
 * lock is gone, session-state changes, reentrant holds, release, and the
 * engine's creation and end.
 *
 * How a holder learns its lock is lost, from the most to the least
 * direct:
 *   - the watch on its own node: NodeDeleted (someone deleted it), or the
 *     watch's final call with TB_ESESSIONEXPIRED / TB_ECLOSING (the
 *     client declares expiry itself after a session timeout without a
 *     server, e.g. after a SIGSTOP longer than the timeout);
 *   - forwarded session states: SUSPENDED (may be lost), CONNECTED again
 *     with the same session (held again) or with another one (lost),
 *     EXPIRED / CLOSED (lost);
 *   - tb_mutex_state, which also reads the client's live state.
 * A lost lock keeps its hold count until released; the release reports
 * TB_ELOCKLOST, so code that never looked at the state still learns it. */
#include <string.h>

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

static int holding(const struct tb_mutex *m)
{
    return m->holds > 0 &&
           (m->lstate == TB_LOCK_HELD || m->lstate == TB_LOCK_SUSPENDED);
}

void rcp_lk_note_session_end(struct tb_mutex *m, int rc)
{
    if (rc == TB_ECLOSING)
        m->c_closed = 1; /* the handle is about to be freed */
}

/* ---- the own-node watch ---- */

void rcp_lk_drop_own_watch(struct tb_mutex *m)
{
    struct rcp_ctx *w = m->own_w;

    m->own_w = NULL;
    if (w == NULL || m->c_closed || m->node == NULL)
        return;
    /* Sent before the delete on the same connection: the server drops the
     * watch first, so our own delete notifies nobody but real waiters. */
    tb_remove_watches(m->c, m->node, TB_WATCHER_DATA, rcp_lk_own_watch, w, 1,
                      NULL, NULL);
}

static void on_own_stat(struct tb_client *c, int rc, const struct tb_stat *st,
                        void *data)
{
    struct rcp_ctx *x = data;
    struct tb_mutex *m = x->m;
    struct rcp_out o = {0};
    struct rcp_ctx *w = x->w;
    int cur = rcp_ctx_enter(x);
    int mine = cur && w == m->own_w;

    (void)c;
    rcp_lk_settle_watch(x, rc == 0 || rc == TB_ENONODE);
    if (!mine) {
        rcp_ctx_leave(x, &o);
        return;
    }
    if (rc == 0)
        m->czxid = st->czxid;
    else if (rc == TB_ENONODE)
        rcp_lk_drop_own_watch(m); /* it watches for a creation now */
    if (m->phase == LK_HELD && rc == TB_ENONODE && holding(m)) {
        rcp_lk_set_lstate(m, TB_LOCK_LOST, &o);
    } else if (!m->cfg->fair && m->phase == LK_CHECKING) {
        /* Non-fair: creating the node was winning; this only fetched the
         * token and set the watch. */
        if (rc == 0 && m->abort_rc != 0)
            rcp_lk_fail(m, m->abort_rc, &o);
        else if (rc == 0)
            rcp_lk_hold(m, &o);
        else if (rc == TB_ENONODE || rc == TB_ECONNECTIONLOSS)
            rcp_lk_recheck_own(m, rc, &o);
        else
            rcp_lk_fail(m, rc, &o);
    }
    rcp_ctx_leave(x, &o);
}

int rcp_lk_watch_own(struct tb_mutex *m)
{
    struct rcp_ctx *x = rcp_ctx_new(m), *w;
    int rv;

    w = x != NULL ? rcp_ctx_new(m) : NULL;
    if (w == NULL) {
        if (x != NULL)
            rcp_ctx_free_locked(x);
        return TB_ENOMEM;
    }
    x->w = w;
    m->own_w = w;
    rv = tb_exists(m->c, m->node, rcp_lk_own_watch, w, on_own_stat, x);
    if (rv != 0) {
        m->own_w = NULL;
        rcp_ctx_free_locked(w);
        rcp_ctx_free_locked(x);
    }
    return rv;
}

void rcp_lk_own_watch(struct tb_client *c, const struct tb_event *ev,
                      void *wdata)
{
    struct rcp_ctx *x = wdata;
    struct tb_mutex *m = x->m;
    struct rcp_out o = {0};
    int cur;

    (void)c;
    rcp_note_cb_thread(m->c);
    pthread_mutex_lock(m->mu);
    cur = m->own_w == x;
    if (cur)
        m->own_w = NULL;
    if (!cur) {
        /* removed, or an older node's watch */
    } else if (ev->type == TB_EVENT_DELETED) {
        if (holding(m))
            rcp_lk_set_lstate(m, TB_LOCK_LOST, &o);
        else if (m->phase == LK_WAITING || m->phase == LK_WATCHING)
            rcp_lk_restart(m, &o); /* our queued node was deleted */
    } else if (ev->type > 0 && ev->type <= TB_EVENT_CHILDREN_CHANGED) {
        if (m->node != NULL && (m->holds > 0 || m->acb != NULL))
            rcp_lk_watch_own(m); /* data changed: keep watching */
    } else if (ev->type == TB_EVENT_NONE && rcp_lk_session_over(ev->rc)) {
        rcp_lk_note_session_end(m, ev->rc);
        if (holding(m))
            rcp_lk_set_lstate(m, TB_LOCK_LOST, &o);
        if (m->phase == LK_WAITING)
            rcp_lk_fail(m, ev->rc, &o);
    }
    rcp_ctx_leave(x, &o);
}

/* ---- holding ---- */

void rcp_lk_hold(struct tb_mutex *m, struct rcp_out *o)
{
    rcp_lk_drop_pred_watch(m);
    m->phase = LK_HELD;
    m->holds = 1;
    m->token = m->czxid;
    m->session = tb_client_session(m->c, NULL);
    m->lstate = TB_LOCK_HELD;
    m->st.acquisitions++;
    rcp_lk_finish(m, 0, o);
}

static void reset_hold(struct tb_mutex *m)
{
    m->holds = 0;
    m->token = 0;
    m->lstate = TB_LOCK_UNLOCKED;
    m->phase = LK_IDLE;
    m->attempt++;
    free(m->node);
    m->node = NULL;
}

/* A reentrant acquire or a release that keeps the lock: nothing to do on
 * the server, but the callback must still come from the callback thread,
 * so it rides on the reply of one small request. */
struct bounce {
    struct tb_mutex *m;
    tb_acquire_cb acb;
    tb_done_cb dcb;
    void *data;
    int64_t token;
};

static void on_bounce(struct tb_client *c, int rc, const struct tb_stat *st,
                      void *data)
{
    struct bounce *b = data;
    struct tb_mutex *m = b->m;
    int lost;

    (void)c;
    (void)rc;
    (void)st;
    rcp_note_cb_thread(m->c);
    pthread_mutex_lock(m->mu);
    lost = m->lstate == TB_LOCK_LOST;
    pthread_mutex_unlock(m->mu);
    if (b->acb != NULL)
        b->acb(lost ? TB_ELOCKLOST : 0, lost ? 0 : b->token, b->data);
    if (b->dcb != NULL)
        b->dcb(lost ? TB_ELOCKLOST : 0, b->data);
    rcp_lk_unref(m);
    free(b);
}

static int bounce(struct tb_mutex *m, tb_acquire_cb acb, tb_done_cb dcb,
                  void *data)
{
    struct bounce *b = malloc(sizeof *b);
    int rv;

    if (b == NULL)
        return TB_ENOMEM;
    b->m = m;
    b->acb = acb;
    b->dcb = dcb;
    b->data = data;
    b->token = m->token;
    rcp_lk_ref(m);
    rv = tb_exists(m->c, m->node, NULL, NULL, on_bounce, b);
    if (rv != 0) {
        rcp_lk_unref(m); /* the caller's reference keeps it alive */
        free(b);
    }
    return rv;
}

int rcp_lk_lock(struct tb_mutex *m, int timeout_ms, tb_acquire_cb cb,
                void *data)
{
    int rv;

    if (timeout_ms > 0 && (rv = rcp_async_timeout_check(m->c, timeout_ms)))
        return rv;
    pthread_mutex_lock(m->mu);
    if (m->c_closed) {
        rv = TB_ECLOSING;
    } else if (m->acb != NULL || m->phase == LK_ABORTING) {
        rv = TB_EINVAL; /* one acquisition at a time per handle */
    } else if (m->holds > 0) {
        if (m->lstate == TB_LOCK_LOST) {
            rv = TB_ELOCKLOST;
        } else if ((rv = bounce(m, cb, NULL, data)) == 0) {
            m->holds++;
        }
    } else if (m->peer != NULL && !m->is_read && m->peer->holds > 0) {
        rv = TB_EINVAL; /* read -> write upgrade would deadlock */
    } else {
        rv = rcp_lk_start(m, timeout_ms, cb, data);
    }
    pthread_mutex_unlock(m->mu);
    return rv;
}

struct release {
    tb_done_cb cb;
    void *data;
};

static void on_released(int rc, void *data)
{
    struct release *r = data;

    if (r->cb != NULL)
        r->cb(rc == 0                                         ? 0
              : (rc == TB_ENONODE || rcp_lk_session_over(rc)) ? TB_ELOCKLOST
                                                              : rc,
              r->data);
    free(r);
}

/* Lock held.  Gives the node to the reaper, which reports the outcome. */
static int release_node(struct tb_mutex *m, tb_done_cb cb, void *data)
{
    struct release *r;
    int rv;

    if (m->c_closed)
        return TB_ELOCKLOST;
    r = malloc(sizeof *r);
    if (r == NULL)
        return TB_ENOMEM;
    r->cb = cb;
    r->data = data;
    rcp_lk_drop_own_watch(m);
    rv = rcp_reap(m->c, m->node, 1, on_released, r);
    if (rv != 0) {
        free(r);
        return rcp_lk_session_over(rv) ? TB_ELOCKLOST : rv;
    }
    return 0;
}

int rcp_lk_unlock(struct tb_mutex *m, tb_done_cb cb, void *data)
{
    int rv;

    pthread_mutex_lock(m->mu);
    if (m->holds == 0) {
        rv = TB_ENOTHELD;
    } else if (m->lstate == TB_LOCK_LOST || m->c_closed) {
        if (!m->c_closed && m->node != NULL) /* in case it still exists */
            rcp_reap(m->c, m->node, 0, NULL, NULL);
        reset_hold(m);
        rv = TB_ELOCKLOST;
    } else if (m->holds > 1) {
        if ((rv = bounce(m, NULL, cb, data)) == 0)
            m->holds--;
    } else {
        rv = release_node(m, cb, data);
        reset_hold(m);
    }
    pthread_mutex_unlock(m->mu);
    return rv;
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
        if (holding(m))
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
        if (holding(m))
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

/* ---- creation and end ---- */

static void reg_ref(struct rcp_reg *r)
{
    rcp_lk_ref(TB_CONTAINER_OF(r, struct tb_mutex, reg));
}

static void reg_unref(struct rcp_reg *r)
{
    rcp_lk_unref(TB_CONTAINER_OF(r, struct tb_mutex, reg));
}

static int copy_value(struct tb_mutex *m, const struct tb_lock_options *o)
{
    char buf[300];
    const void *v = buf;
    size_t n;

    if (o != NULL && o->value != NULL) {
        v = o->value;
        n = o->len;
    } else {
        rcp_default_value(buf, sizeof buf, &n);
    }
    m->uvalue = malloc(n + 1);
    if (m->uvalue == NULL)
        return TB_ENOMEM;
    memcpy(m->uvalue, v, n);
    m->ulen = n;
    m->value = m->uvalue;
    m->len = n;
    return 0;
}

int rcp_lk_new(struct tb_mutex **out, struct tb_client *c, const char *path,
               const struct rcp_cfg *cfg, const struct tb_lock_options *o)
{
    struct tb_mutex *m;

    if (out == NULL || c == NULL || !rcp_path_ok(path) || strlen(path) < 2)
        return TB_EINVAL;
    m = calloc(1, sizeof *m);
    if (m == NULL)
        return TB_ENOMEM;
    pthread_mutex_init(&m->own_mu, NULL);
    m->mu = &m->own_mu;
    m->refs = 1;
    m->c = c;
    m->cfg = cfg;
    m->max_leases = 1;
    m->lstate = TB_LOCK_UNLOCKED;
    m->phase = LK_IDLE;
    m->timer.fn = rcp_lk_on_timer;
    m->path = rcp_strdup(path);
    m->parent = cfg->fair ? rcp_strdup(path) : rcp_dirname(path);
    if (o != NULL) {
        m->scb = o->state_cb;
        m->sdata = o->data;
    }
    m->reg.on_state = rcp_lk_on_state;
    m->reg.ref = reg_ref;
    m->reg.unref = reg_unref;
    m->seen_session = tb_client_session(c, NULL);
    if (m->path == NULL || m->parent == NULL || copy_value(m, o) != 0 ||
        rcp_reg_attach(&m->reg, c) != 0) {
        rcp_lk_unref(m);
        return TB_ENOMEM;
    }
    *out = m;
    return 0;
}

void rcp_lk_free(struct tb_mutex *m)
{
    int acquiring;

    if (m == NULL)
        return;
    pthread_mutex_lock(m->mu);
    m->user_freed = 1;
    acquiring = m->acb != NULL && m->phase != LK_ABORTING;
    if (m->holds > 0) {
        if (m->lstate != TB_LOCK_LOST && !m->c_closed)
            release_node(m, NULL, NULL);
        reset_hold(m);
    }
    pthread_mutex_unlock(m->mu);
    if (acquiring)
        rcp_lk_abort(m, TB_ECANCELED);
    rcp_reg_detach(&m->reg);
    rcp_lk_unref(m);
}
