/* The multi-lock: several fair mutexes, all or nothing.
 *
 * The members are taken one after the other in the order of their sorted
 * paths, whatever order the caller gave: two multi-locks that share locks
 * then always take the shared ones in the same order, so they cannot
 * deadlock each other.  If a member cannot be had (timeout, cancel,
 * error), the members taken by this call are released and the call fails.
 * Release gives all members back.  Built on the public mutex calls; a
 * member keeps its own layout, token and lost detection, and the
 * multi-lock's state is the weakest of its members'. */
#include <string.h>

#include "recipes/rcp.h"

struct tb_multilock {
    pthread_mutex_t mu;
    int refs;  /* the handle's own, plus one per member engine */
    int freed; /* tb_multilock_free ran */
    struct tb_client *c;
    int n;
    struct tb_mutex **m; /* sorted by path */
    int *order;          /* order[i]: index in m of the caller's paths[i] */
    /* The lock call in progress. */
    int busy;
    int rollbacks; /* releases in flight after a failure */
    int result;
    int next;
    int abort_rc;
    int timer;
    int64_t deadline;
    tb_done_cb cb;
    void *data;
    /* The unlock call in progress. */
    int unlocking;
    int worst;
    tb_done_cb ucb;
    void *udata;
    /* State reporting. */
    tb_lock_state_cb scb;
    void *sdata;
    int reported;
};

struct sorted {
    const char *path;
    int i;
};

static int by_path(const void *a, const void *b)
{
    return strcmp(((const struct sorted *)a)->path,
                  ((const struct sorted *)b)->path);
}

static int weakest(struct tb_multilock *ml)
{
    static const int rank[] = {[TB_LOCK_LOST] = 0,
                               [TB_LOCK_UNLOCKED] = 1,
                               [TB_LOCK_ACQUIRING] = 2,
                               [TB_LOCK_SUSPENDED] = 3,
                               [TB_LOCK_HELD] = 4};
    int i, w = TB_LOCK_HELD;

    for (i = 0; i < ml->n; i++) {
        int s = rcp_lk_state(ml->m[i]);
        if (rank[s] < rank[w])
            w = s;
    }
    return w;
}

static int abort_call(struct tb_multilock *ml, int rc);

/* A member's hold changed: report the multi-lock's state if it moved.  A
 * member lost while a lock call waits for the next one fails the call:
 * all or nothing. */
static void on_member_state(int state, int64_t token, void *data)
{
    struct tb_multilock *ml = data;
    int w;

    (void)token;
    pthread_mutex_lock(&ml->mu);
    if (ml->freed) {
        pthread_mutex_unlock(&ml->mu);
        return;
    }
    pthread_mutex_unlock(&ml->mu);
    if (state == TB_LOCK_LOST)
        abort_call(ml, TB_ELOCKLOST); /* EINVAL: no call in progress */
    pthread_mutex_lock(&ml->mu);
    /* The members are read under mu, where tb_multilock_free sets freed:
     * it frees them after, an idle one at once.  While a lock call runs,
     * the multi-lock is not held: the call's result tells. */
    w = ml->freed || ml->busy ? ml->reported : weakest(ml);
    if (w == ml->reported || ml->scb == NULL ||
        (w != TB_LOCK_SUSPENDED && w != TB_LOCK_LOST && w != TB_LOCK_HELD)) {
        pthread_mutex_unlock(&ml->mu);
        return;
    }
    ml->reported = w;
    pthread_mutex_unlock(&ml->mu);
    ml->scb(w, 0, ml->sdata);
}

static void ml_unref(struct tb_multilock *ml)
{
    if (__atomic_sub_fetch(&ml->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    free(ml->m);
    free(ml->order);
    pthread_mutex_destroy(&ml->mu);
    free(ml);
}

/* A member engine is gone, with every callback that could use ml. */
static void member_destroyed(void *data)
{
    ml_unref(data);
}

int tb_multilock_new(struct tb_multilock **out, struct tb_client *c,
                     const char *const *paths, int n,
                     const struct tb_lock_options *o)
{
    struct tb_lock_options mo = {0};
    struct tb_multilock *ml;
    struct sorted *s;
    int i, rv = 0;

    if (out == NULL || paths == NULL || n < 1 ||
        (o != NULL && o->lock_delay_ms != 0)) /* a fair mutex's alone */
        return TB_EINVAL;
    for (i = 0; i < n; i++)
        if (!rcp_path_ok(paths[i]))
            return TB_EINVAL;
    s = calloc((size_t)n, sizeof *s);
    ml = calloc(1, sizeof *ml);
    if (s == NULL || ml == NULL) {
        free(s);
        free(ml);
        return TB_ENOMEM;
    }
    for (i = 0; i < n; i++) {
        s[i].path = paths[i];
        s[i].i = i;
    }
    qsort(s, (size_t)n, sizeof *s, by_path);
    for (i = 1; i < n && rv == 0; i++)
        if (strcmp(s[i].path, s[i - 1].path) == 0)
            rv = TB_EINVAL; /* the same lock twice */
    pthread_mutex_init(&ml->mu, NULL);
    ml->refs = 1;
    ml->c = c;
    ml->m = calloc((size_t)n, sizeof *ml->m);
    ml->order = calloc((size_t)n, sizeof *ml->order);
    if (rv == 0 && (ml->m == NULL || ml->order == NULL))
        rv = TB_ENOMEM;
    if (o != NULL) {
        ml->scb = o->state_cb;
        ml->sdata = o->data;
        mo.value = o->value;
        mo.len = o->len;
    }
    mo.state_cb = on_member_state;
    mo.data = ml;
    ml->reported = TB_LOCK_UNLOCKED;
    for (i = 0; i < n && rv == 0; i++) {
        rv = tb_mutex_new(&ml->m[i], c, s[i].path, &mo);
        ml->order[s[i].i] = i;
        ml->n = i + (rv == 0);
        if (rv == 0) {
            ml->refs++;
            ml->m[i]->on_destroy = member_destroyed;
            ml->m[i]->destroy_data = ml;
        }
    }
    free(s);
    if (rv != 0) {
        tb_multilock_free(ml);
        return rv;
    }
    *out = ml;
    return 0;
}

void tb_multilock_free(struct tb_multilock *ml)
{
    int i;

    if (ml == NULL)
        return;
    pthread_mutex_lock(&ml->mu);
    ml->freed = 1;
    pthread_mutex_unlock(&ml->mu);
    for (i = ml->n - 1; i >= 0; i--)
        tb_mutex_free(ml->m[i]); /* cancels or releases */
    ml_unref(ml);                /* the rest goes with the last member engine */
}

/* ---- locking ---- */

static void step(struct tb_multilock *ml, struct rcp_out *o);

static void on_rolled_back(int rc, void *data)
{
    struct tb_multilock *ml = data;
    struct rcp_out o = {0};

    (void)rc;
    pthread_mutex_lock(&ml->mu);
    if (--ml->rollbacks == 0) {
        ml->busy = 0;
        o.dcb = ml->cb;
        o.ddata = ml->data;
        o.drc = ml->result;
    }
    pthread_mutex_unlock(&ml->mu);
    rcp_out_fire(&o);
    ml_unref(ml);
}

/* Gives back the members this call took; the call ends with rc once they
 * are released, so a caller that hears of the failure finds them free. */
static void rollback(struct tb_multilock *ml, int rc, struct rcp_out *o)
{
    int i;

    ml->result = rc;
    ml->rollbacks = 1; /* held while sending */
    for (i = ml->next - 1; i >= 0; i--) {
        __atomic_add_fetch(&ml->refs, 1, __ATOMIC_ACQ_REL);
        if (tb_mutex_unlock(ml->m[i], on_rolled_back, ml) == 0)
            ml->rollbacks++;
        else
            __atomic_sub_fetch(&ml->refs, 1, __ATOMIC_ACQ_REL);
    }
    if (--ml->rollbacks == 0) {
        ml->busy = 0;
        o->dcb = ml->cb;
        o->ddata = ml->data;
        o->drc = rc;
    }
}

static void on_member(int rc, int64_t token, void *data)
{
    struct tb_multilock *ml = data;
    struct rcp_out o = {0};
    int granted = 0;

    (void)token;
    pthread_mutex_lock(&ml->mu);
    if (ml->freed) { /* the members are released already */
        ml->busy = 0;
        o.dcb = ml->cb;
        o.ddata = ml->data;
        o.drc = rc == 0 ? TB_ECANCELED : rc;
        pthread_mutex_unlock(&ml->mu);
        rcp_out_fire(&o);
        return;
    }
    if (rc == 0 && ml->abort_rc != 0) {
        ml->next++;
        rc = ml->abort_rc;
    }
    if (rc != 0) {
        rollback(ml, rc, &o);
    } else {
        ml->next++;
        step(ml, &o);
        granted = ml->next == ml->n;
    }
    pthread_mutex_unlock(&ml->mu);
    rcp_out_fire(&o);
    /* Granted while a member waits to look at its node again (the
     * connection came back during the call): told after the grant, as a
     * semaphore's lease is, unless the grant's callback freed the handle;
     * HELD or LOST follows.  A member's engine, whose callback this is,
     * keeps ml. */
    pthread_mutex_lock(&ml->mu);
    granted &=
        ml->reported == TB_LOCK_SUSPENDED && !ml->freed && ml->scb != NULL;
    pthread_mutex_unlock(&ml->mu);
    if (granted)
        ml->scb(TB_LOCK_SUSPENDED, 0, ml->sdata);
}

static void step(struct tb_multilock *ml, struct rcp_out *o)
{
    int timeout = -1, rv;

    if (ml->next == ml->n) {
        ml->busy = 0;
        ml->reported =
            weakest(ml) == TB_LOCK_SUSPENDED ? TB_LOCK_SUSPENDED : TB_LOCK_HELD;
        o->dcb = ml->cb;
        o->ddata = ml->data;
        o->drc = 0;
        return;
    }
    if (ml->deadline == 0)
        timeout = 0;
    else if (ml->deadline > 0 && ml->timer)
        timeout = rcp_ms_left(ml->deadline);
    rv = tb_mutex_lock(ml->m[ml->next], timeout, on_member, ml);
    if (rv != 0)
        rollback(ml, rv, o);
}

static int start(struct tb_multilock *ml, int timeout_ms, int timer,
                 tb_done_cb cb, void *data)
{
    struct rcp_out o = {0};
    int rv = 0;

    pthread_mutex_lock(&ml->mu);
    if (ml->busy || ml->unlocking) {
        pthread_mutex_unlock(&ml->mu);
        return TB_EINVAL;
    }
    ml->busy = 1;
    ml->next = 0;
    ml->abort_rc = 0;
    ml->timer = timer;
    ml->deadline = timeout_ms < 0    ? -1
                   : timeout_ms == 0 ? 0
                                     : rcp_now_ms() + timeout_ms;
    ml->cb = cb;
    ml->data = data;
    step(ml, &o);
    if (ml->next == 0 && !ml->busy) { /* refused at once: no callback */
        rv = o.drc;
        o.dcb = NULL;
    }
    pthread_mutex_unlock(&ml->mu);
    rcp_out_fire(&o);
    return rv;
}

int tb_multilock_lock(struct tb_multilock *ml, int timeout_ms, tb_done_cb cb,
                      void *data)
{
    int rv = rcp_async_timeout_check(ml->c, timeout_ms);

    return rv != 0 ? rv : start(ml, timeout_ms, 1, cb, data);
}

static int abort_call(struct tb_multilock *ml, int rc)
{
    struct tb_mutex *m;

    pthread_mutex_lock(&ml->mu);
    if (!ml->busy || ml->abort_rc != 0) {
        pthread_mutex_unlock(&ml->mu);
        return TB_EINVAL;
    }
    ml->abort_rc = rc;
    m = ml->m[ml->next];
    pthread_mutex_unlock(&ml->mu);
    rcp_lk_abort(m, rc); /* EINVAL if just acquired: on_member sees it */
    return 0;
}

int tb_multilock_cancel(struct tb_multilock *ml)
{
    return abort_call(ml, TB_ECANCELED);
}

static void give_up(void *arg)
{
    abort_call(arg, TB_ETIMEDOUT);
}

int tb_multilock_lock_sync(struct tb_multilock *ml, int timeout_ms)
{
    struct rcp_wait w;
    int rv;

    if ((rv = rcp_sync_check(ml->c)) != 0)
        return rv;
    rcp_wait_init(&w);
    rv = start(ml, timeout_ms, 0, rcp_wait_done_cb, &w);
    if (rv == 0) {
        rcp_wait(ml->c, &w, timeout_ms > 0 ? rcp_now_ms() + timeout_ms : -1,
                 give_up, ml);
        rv = w.rc;
    }
    rcp_wait_destroy(&w);
    return rv;
}

/* ---- unlocking ---- */

static void on_member_released(int rc, void *data)
{
    struct tb_multilock *ml = data;
    struct rcp_out o = {0};

    pthread_mutex_lock(&ml->mu);
    if (rc != 0 && ml->worst != TB_ELOCKLOST)
        ml->worst = rc;
    if (--ml->unlocking == 0) {
        o.dcb = ml->ucb;
        o.ddata = ml->udata;
        o.drc = ml->worst;
    }
    pthread_mutex_unlock(&ml->mu);
    rcp_out_fire(&o);
    ml_unref(ml); /* the release's */
}

int tb_multilock_unlock(struct tb_multilock *ml, tb_done_cb cb, void *data)
{
    struct rcp_out o = {0};
    int i, rv, sync_worst = 0, held = 0;

    pthread_mutex_lock(&ml->mu);
    if (ml->busy || ml->unlocking) {
        pthread_mutex_unlock(&ml->mu);
        return TB_EINVAL;
    }
    ml->worst = 0;
    ml->ucb = cb;
    ml->udata = data;
    ml->unlocking = 1; /* held while sending, so none completes the call */
    for (i = ml->n - 1; i >= 0; i--) {
        __atomic_add_fetch(&ml->refs, 1, __ATOMIC_ACQ_REL);
        rv = tb_mutex_unlock(ml->m[i], on_member_released, ml);
        if (rv != 0)
            __atomic_sub_fetch(&ml->refs, 1, __ATOMIC_ACQ_REL);
        if (rv == 0) {
            ml->unlocking++;
            held++;
        } else if (rv != TB_ENOTHELD) {
            held++;
            if (sync_worst != TB_ELOCKLOST)
                sync_worst = rv;
        }
    }
    ml->reported = TB_LOCK_UNLOCKED;
    if (sync_worst != 0 && ml->worst != TB_ELOCKLOST)
        ml->worst = sync_worst;
    if (--ml->unlocking == 0) { /* nothing in flight: answer now */
        pthread_mutex_unlock(&ml->mu);
        return held == 0 ? TB_ENOTHELD : ml->worst;
    }
    pthread_mutex_unlock(&ml->mu);
    rcp_out_fire(&o);
    return 0;
}

int tb_multilock_unlock_sync(struct tb_multilock *ml)
{
    struct rcp_wait w;
    int rv;

    if ((rv = rcp_sync_check(ml->c)) != 0)
        return rv;
    rcp_wait_init(&w);
    rv = tb_multilock_unlock(ml, rcp_wait_done_cb, &w);
    if (rv == 0) {
        rcp_wait(ml->c, &w, -1, NULL, NULL);
        rv = w.rc;
    }
    rcp_wait_destroy(&w);
    return rv;
}

int64_t tb_multilock_token(struct tb_multilock *ml, int i)
{
    if (i < 0 || i >= ml->n)
        return 0;
    return tb_mutex_token(ml->m[ml->order[i]]);
}

int tb_multilock_state(struct tb_multilock *ml)
{
    return weakest(ml);
}
