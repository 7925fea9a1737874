/* The engine's handle: what the recipes call -- rcp_lk_new, rcp_lk_lock,
 * rcp_lk_unlock, rcp_lk_free -- and the hold count.
 *
 * A lock on a handle that holds is a reentrant hold, and an unlock above
 * one keeps the lock: neither asks the server anything, but their
 * callbacks still ride on one small request, so that they come from the
 * callback thread.  Any other lock starts an acquisition (lk_acquire.c);
 * the last unlock gives our node to the reaper.
 *
 * The engine's files call one way: this file calls lk_acquire.c, which
 * calls lk_state.c (what a holder is told), which calls lk_ctx.c (the
 * object and its callback contexts); lk_cfg.c holds the rows the recipes
 * run on it. */
#include <string.h>

#include "recipes/rcp.h"

/* ---- reentrant holds and the release ---- */

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
    int lost, arc;

    (void)c;
    (void)rc;
    (void)st;
    pthread_mutex_lock(m->mu);
    lost = m->lstate == TB_LOCK_LOST;
    /* A reentrant acquire is pending until told: one given up meanwhile
     * (the handle freed, the hold released) is cancelled, never told 0
     * while another client may hold the lock. */
    arc = lost                                        ? TB_ELOCKLOST
          : rcp_lk_holding(m) && m->token == b->token ? 0
                                                      : TB_ECANCELED;
    pthread_mutex_unlock(m->mu);
    if (b->acb != NULL)
        b->acb(arc, arc == 0 ? b->token : 0, b->data);
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

int rcp_lk_reenter_locked(struct tb_mutex *m, tb_acquire_cb cb, void *data)
{
    int rv;

    if (m->lstate == TB_LOCK_LOST)
        return TB_ELOCKLOST;
    if ((rv = bounce(m, cb, NULL, data)) == 0)
        m->holds++;
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
        rv = rcp_lk_reenter_locked(m, cb, data);
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
    rcp_ld_record_release(m); /* lock-delay: before the delete */
    rv = rcp_reap(m->c, m->node, rcp_lk_shared_czxid(m), 1, on_released, r);
    if (rv != 0) {
        free(r);
        return rcp_lk_session_over(rv) ? TB_ELOCKLOST : rv;
    }
    return 0;
}

/* A lost hold's node, deleted in case it still exists (lost as far as we
 * can tell: a look that could not be sent, a watch that could not be
 * set).  A non-fair lock's is PATH, whoever made it last: the reaper
 * deletes only ours (its czxid), never the next holder's. */
static void reap_lost(struct tb_mutex *m)
{
    if (m->c_closed || m->node == NULL || (!m->cfg->fair && m->czxid == 0))
        return;
    rcp_lk_drop_own_watch(m);
    rcp_reap(m->c, m->node, rcp_lk_shared_czxid(m), 0, NULL, NULL);
}

int rcp_lk_unlock(struct tb_mutex *m, tb_done_cb cb, void *data)
{
    int rv;

    pthread_mutex_lock(m->mu);
    if (m->holds == 0) {
        rv = TB_ENOTHELD;
    } else if (m->lstate == TB_LOCK_LOST || m->c_closed) {
        reap_lost(m);
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

/* `wr`: the write engine of the read engine made, whose mutex it shares
 * from before it is registered, when a state can come. */
static int lk_new(struct tb_mutex **out, struct tb_client *c, const char *path,
                  const struct rcp_cfg *cfg, const struct tb_lock_options *o,
                  struct tb_mutex *wr)
{
    struct tb_mutex *m;

    if (out == NULL || c == NULL || !rcp_path_ok(path) || strlen(path) < 2)
        return TB_EINVAL;
    /* Chubby's lock-delay is a fair mutex's alone (mutex.c). */
    if (o != NULL && (o->lock_delay_ms < 0 ||
                      (o->lock_delay_ms > 0 && cfg != &rcp_cfg_mutex)))
        return TB_EINVAL;
    m = calloc(1, sizeof *m);
    if (m == NULL)
        return TB_ENOMEM;
    pthread_mutex_init(&m->own_mu, NULL);
    m->mu = &m->own_mu;
    if (wr != NULL) {
        rcp_lk_ref(wr); /* for its mutex; dropped as m is destroyed */
        m->mu = &wr->own_mu;
        m->is_read = 1;
        m->peer = wr;
    }
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

int rcp_lk_new(struct tb_mutex **out, struct tb_client *c, const char *path,
               const struct rcp_cfg *cfg, const struct tb_lock_options *o)
{
    return lk_new(out, c, path, cfg, o, NULL);
}

int rcp_lk_new_read(struct tb_mutex **out, struct tb_client *c,
                    const char *path, const struct tb_lock_options *o,
                    struct tb_mutex *wr)
{
    return lk_new(out, c, path, &rcp_cfg_read, o, wr);
}

void rcp_lk_free(struct tb_mutex *m)
{
    struct rcp_out o = {0};

    if (m == NULL)
        return;
    pthread_mutex_lock(m->mu);
    if (m->holds > 0) {
        if (m->lstate != TB_LOCK_LOST && !m->c_closed)
            release_node(m, NULL, NULL);
        else /* it would block every other client */
            reap_lost(m);
        reset_hold(m);
    }
    /* Given up under the hold that looked: a grant in between would hold
     * the node for good, its callback told 0 after the free. */
    if (m->acb != NULL && m->phase != LK_ABORTING)
        rcp_lk_abort_locked(m, TB_ECANCELED, &o);
    pthread_mutex_unlock(m->mu);
    rcp_out_fire(&o);
    rcp_reg_detach(&m->reg);
    rcp_lk_unref(m);
}
