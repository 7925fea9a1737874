/* The public mutex: the engine with Curator's "lock-" names (fair) or the
 * single ephemeral node (non-fair), its synchronous forms, and
 * tb_lock_run, the "run this while holding the lock" shape.
 *
 * Synchronous forms keep reentrancy local, as Curator does: acquiring a
 * held lock again, or releasing all but the last hold, only changes the
 * count.  Everything else is the asynchronous call plus rcp_wait, which
 * turns a timeout into a give-up and waits for its callback. */
#include <string.h>

#include "recipes/rcp.h"

int tb_mutex_new(struct tb_mutex **out, struct tb_client *c, const char *path,
                 const struct tb_lock_options *o)
{
    const struct rcp_cfg *cfg = &rcp_cfg_mutex;

    int rv;

    if (o != NULL && o->kind == TB_LOCK_NONFAIR)
        cfg = &rcp_cfg_nonfair;
    else if (o != NULL && o->kind != TB_LOCK_FAIR)
        return TB_EINVAL;
    if ((rv = rcp_lk_new(out, c, path, cfg, o)) == 0 && o != NULL)
        (*out)->lock_delay_ms = o->lock_delay_ms;
    return rv;
}

/* With lock-delay the acquisition has steps after the engine's grant. */
static int lock_any(struct tb_mutex *m, int timeout_ms, int64_t deadline,
                    tb_acquire_cb cb, void *data)
{
    if (m->lock_delay_ms > 0)
        return rcp_ld_lock(m, timeout_ms, deadline, cb, data);
    return rcp_lk_lock(m, timeout_ms, cb, data);
}

static int abort_any(struct tb_mutex *m, int rc)
{
    return m->lock_delay_ms > 0 ? rcp_ld_abort(m, rc) : rcp_lk_abort(m, rc);
}

void tb_mutex_free(struct tb_mutex *m)
{
    if (m != NULL && !m->embedded) {
        if (m->lock_delay_ms > 0)
            rcp_ld_abort(m, TB_ECANCELED); /* a grant still in its delay */
        rcp_lk_free(m);
    }
}

int tb_mutex_lock(struct tb_mutex *m, int timeout_ms, tb_acquire_cb cb,
                  void *data)
{
    return lock_any(m, timeout_ms,
                    timeout_ms < 0 ? -1 : rcp_now_ms() + timeout_ms, cb, data);
}

int tb_mutex_trylock(struct tb_mutex *m, tb_acquire_cb cb, void *data)
{
    return tb_mutex_lock(m, 0, cb, data);
}

/* A grant in its lock delay is not the caller's to release (cancel gives
 * the acquisition up). */
static int told_none(struct tb_mutex *m)
{
    int none;

    pthread_mutex_lock(m->mu);
    none = rcp_lk_told_holds(m) == 0;
    pthread_mutex_unlock(m->mu);
    return none;
}

int tb_mutex_unlock(struct tb_mutex *m, tb_done_cb cb, void *data)
{
    if (told_none(m))
        return TB_ENOTHELD;
    return rcp_lk_unlock(m, cb, data);
}

int tb_mutex_cancel(struct tb_mutex *m)
{
    return abort_any(m, TB_ECANCELED);
}

static void give_up(void *arg)
{
    abort_any(arg, TB_ETIMEDOUT);
}

/* 1 and the result if a held lock was re-entered locally. */
static int reenter(struct tb_mutex *m, int64_t *token, int *rv)
{
    int done = 0;

    pthread_mutex_lock(m->mu);
    if (rcp_lk_told_holds(m) > 0 && m->acb == NULL) {
        done = 1;
        if (m->lstate == TB_LOCK_LOST) {
            *rv = TB_ELOCKLOST;
        } else {
            m->holds++;
            if (token != NULL)
                *token = m->token;
            *rv = 0;
        }
    }
    pthread_mutex_unlock(m->mu);
    return done;
}

int tb_mutex_lock_sync(struct tb_mutex *m, int timeout_ms, int64_t *token)
{
    struct rcp_wait w;
    int rv;

    if (token != NULL)
        *token = 0;
    if ((rv = rcp_sync_check(m->c)) != 0)
        return rv;
    if (reenter(m, token, &rv))
        return rv;
    rcp_wait_init(&w);
    rv = lock_any(m, timeout_ms == 0 ? 0 : -1,
                  timeout_ms == 0 ? rcp_now_ms() : -1, rcp_wait_acquire_cb, &w);
    if (rv == 0) {
        rcp_wait(m->c, &w, timeout_ms > 0 ? rcp_now_ms() + timeout_ms : -1,
                 give_up, m);
        rv = w.rc;
        if (token != NULL)
            *token = w.token;
    }
    rcp_wait_destroy(&w);
    return rv;
}

int tb_mutex_trylock_sync(struct tb_mutex *m, int64_t *token)
{
    return tb_mutex_lock_sync(m, 0, token);
}

int tb_mutex_unlock_sync(struct tb_mutex *m)
{
    struct rcp_wait w;
    int rv;

    if ((rv = rcp_sync_check(m->c)) != 0)
        return rv;
    if (told_none(m))
        return TB_ENOTHELD;
    pthread_mutex_lock(m->mu);
    if (m->holds > 1 && m->lstate != TB_LOCK_LOST) {
        m->holds--;
        pthread_mutex_unlock(m->mu);
        return 0;
    }
    pthread_mutex_unlock(m->mu);
    rcp_wait_init(&w);
    rv = rcp_lk_unlock(m, rcp_wait_done_cb, &w);
    if (rv == 0) {
        rcp_wait(m->c, &w, -1, NULL, NULL);
        rv = w.rc;
    }
    rcp_wait_destroy(&w);
    return rv;
}

int tb_mutex_state(struct tb_mutex *m)
{
    return rcp_lk_state(m);
}

int64_t tb_mutex_token(struct tb_mutex *m)
{
    int64_t t;

    pthread_mutex_lock(m->mu);
    t = rcp_lk_told_holds(m) > 0 ? m->token : 0;
    pthread_mutex_unlock(m->mu);
    return t;
}

int tb_mutex_holds(struct tb_mutex *m)
{
    int n;

    pthread_mutex_lock(m->mu);
    n = rcp_lk_told_holds(m);
    pthread_mutex_unlock(m->mu);
    return n;
}

int tb_mutex_node(struct tb_mutex *m, char *buf, size_t cap)
{
    int rv = TB_ENONODE;

    pthread_mutex_lock(m->mu);
    if (m->node != NULL && cap > 0) {
        size_t n = strlen(m->node);
        if (n >= cap)
            n = cap - 1;
        memcpy(buf, m->node, n);
        buf[n] = '\0';
        rv = 0;
    }
    pthread_mutex_unlock(m->mu);
    return rv;
}

void tb_mutex_stats(struct tb_mutex *m, struct tb_recipe_stats *out)
{
    pthread_mutex_lock(m->mu);
    *out = m->st;
    pthread_mutex_unlock(m->mu);
}

/* ---- tb_lock_run ---- */

static int run_result(int fn_rc, int unlock_rc)
{
    if (unlock_rc == TB_ELOCKLOST)
        return TB_ELOCKLOST; /* fn's work may not have been exclusive */
    return fn_rc != 0 ? fn_rc : unlock_rc;
}

int tb_lock_run(struct tb_client *c, const char *path, tb_lock_fn fn, void *arg)
{
    return tb_lock_run_timeout(c, path, -1, fn, arg);
}

int tb_lock_run_timeout(struct tb_client *c, const char *path, int timeout_ms,
                        tb_lock_fn fn, void *arg)
{
    struct tb_mutex *m;
    int64_t token;
    int rv, frc;

    if (fn == NULL)
        return TB_EINVAL;
    if ((rv = tb_mutex_new(&m, c, path, NULL)) != 0)
        return rv;
    rv = tb_mutex_lock_sync(m, timeout_ms, &token);
    if (rv == 0) {
        frc = fn(arg, token);
        rv = run_result(frc, tb_mutex_unlock_sync(m));
    }
    tb_mutex_free(m);
    return rv;
}

struct run {
    struct tb_mutex *m;
    tb_lock_fn fn;
    void *arg;
    tb_done_cb cb;
    void *data;
    int frc;
};

static void run_end(struct run *r, int rc)
{
    tb_mutex_free(r->m);
    if (r->cb != NULL)
        r->cb(rc, r->data);
    free(r);
}

static void on_run_released(int rc, void *data)
{
    struct run *r = data;

    run_end(r, run_result(r->frc, rc));
}

static void on_run_acquired(int rc, int64_t token, void *data)
{
    struct run *r = data;

    if (rc != 0) {
        run_end(r, rc);
        return;
    }
    r->frc = r->fn(r->arg, token);
    rc = tb_mutex_unlock(r->m, on_run_released, r);
    if (rc != 0)
        run_end(r, run_result(r->frc, rc));
}

int tb_lock_run_async(struct tb_client *c, const char *path, int timeout_ms,
                      tb_lock_fn fn, void *arg, tb_done_cb cb, void *data)
{
    struct run *r;
    int rv;

    if (fn == NULL)
        return TB_EINVAL;
    r = calloc(1, sizeof *r);
    if (r == NULL)
        return TB_ENOMEM;
    r->fn = fn;
    r->arg = arg;
    r->cb = cb;
    r->data = data;
    if ((rv = tb_mutex_new(&r->m, c, path, NULL)) != 0) {
        free(r);
        return rv;
    }
    rv = tb_mutex_lock(r->m, timeout_ms, on_run_acquired, r);
    if (rv != 0) {
        tb_mutex_free(r->m);
        free(r);
    }
    return rv;
}
