/* The watch on our own node (lk_acquire.c's header says why it belongs
 * with the acquisition): the check sets it, its reply fetches our node's
 * czxid (the token) and, for the non-fair engine, the verdict; its events
 * restart or fail a node still queued, and tell a holder (lk_state.c) that
 * its node is gone.  Set again after each data change, and after a re-arm
 * lost with the connection. */
#include "recipes/rcp.h"

static void rcp_lk_own_watch(struct tb_client *c, const struct tb_event *ev,
                             void *wdata);
static void rearm_own(struct tb_mutex *m, struct rcp_out *o);

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

/* Non-fair, CHECKING: 1 if PATH's stat is still the node we created (or
 * found by our uuid, czxid then unknown): between our create and this
 * exists it may have been deleted and made again by another client. */
static int nonfair_still_ours(struct tb_mutex *m, const struct tb_stat *st)
{
    return st->ephemeral_owner == tb_client_session(m->c, NULL) &&
           (m->czxid == 0 || st->czxid == m->czxid);
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
    if (rc == 0 && !m->cfg->fair && m->phase == LK_CHECKING &&
        !nonfair_still_ours(m, st))
        rc = TB_ENONODE; /* ours is gone: race for the lock again */
    if (rc == TB_ENONODE)
        rcp_lk_drop_own_watch(m); /* it watches for a creation now */
    else if (rc == 0 && m->phase != LK_HELD)
        m->czxid = st->czxid; /* a hold keeps its token's */
    if (m->phase == LK_HELD && rcp_lk_holding(m) && rc != TB_ECONNECTIONLOSS &&
        (rc != 0 || !rcp_lk_node_ours(m, st))) {
        /* Re-armed after a data change: the node is gone, PATH was deleted
         * and made again by another client in between, or the watch was
         * not set (the session over, the read refused) and nothing would
         * tell of a deletion. */
        rcp_lk_note_session_end(m, rc);
        rcp_lk_set_lstate(m, TB_LOCK_LOST, &o);
    } else if (m->phase == LK_HELD && rc == TB_ECONNECTIONLOSS) {
        rearm_own(m, &o); /* else nothing would tell of a deletion */
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

/* The own-node watch set again while the node is ours (a one-shot watch
 * fired, or its exists lost its reply, which the client sends again on
 * the next connection).  A holder that cannot watch its node cannot
 * learn it is gone: LOST is the answer that keeps two holders apart. */
static void rearm_own(struct tb_mutex *m, struct rcp_out *o)
{
    if (m->c_closed || rcp_lk_watch_own(m) == 0)
        return;
    if (rcp_lk_holding(m))
        rcp_lk_set_lstate(m, TB_LOCK_LOST, o);
}

static void rcp_lk_own_watch(struct tb_client *c, const struct tb_event *ev,
                             void *wdata)
{
    struct rcp_ctx *x = wdata;
    struct tb_mutex *m = x->m;
    struct rcp_out o = {0};
    int cur;

    (void)c;
    pthread_mutex_lock(m->mu);
    cur = m->own_w == x;
    if (cur)
        m->own_w = NULL;
    if (!cur) {
        /* removed, or an older node's watch */
    } else if (ev->type == TB_EVENT_DELETED) {
        if (rcp_lk_holding(m))
            rcp_lk_set_lstate(m, TB_LOCK_LOST, &o);
        else if (m->phase == LK_WAITING || m->phase == LK_WATCHING)
            rcp_lk_restart(m, &o); /* our queued node was deleted */
    } else if (ev->type > 0 && ev->type <= TB_EVENT_CHILDREN_CHANGED) {
        if (m->node != NULL && (m->holds > 0 || m->acb != NULL))
            rearm_own(m, &o); /* data changed: keep watching */
    } else if (ev->type == TB_EVENT_NONE && rcp_lk_session_over(ev->rc)) {
        rcp_lk_note_session_end(m, ev->rc);
        if (rcp_lk_holding(m))
            rcp_lk_set_lstate(m, TB_LOCK_LOST, &o);
        if (m->phase == LK_WAITING)
            rcp_lk_fail(m, ev->rc, &o);
    }
    rcp_ctx_leave(x, &o);
}
