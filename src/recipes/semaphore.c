/* The counting semaphore, in Curator's InterProcessSemaphoreV2 layout:
 *
 *   PATH/locks/_c_<uuid>-lock-<seq>     the gate: a fair mutex
 *   PATH/leases/_c_<uuid>-lease-<seq>   one per lease (held or wanted)
 *
 * An acquisition takes the gate, creates its lease node, and waits while
 * PATH/leases has more than max_leases children, watching those children;
 * then it gives the gate back.  Only the gate's holder ever waits on the
 * leases, so a returned lease wakes one client, and the others queue on
 * the gate herd-free.  At most max_leases lease nodes can belong to
 * holders: a node is only ever created by the gate's holder, who proceeds
 * only once the count, its own node included, is within the limit.
 *
 * flock's rule: PATH holds the two parents and nothing else.  Once the
 * gate is ours (so "locks" exists), PATH's children are listed, and any
 * other child refuses the acquisition (TB_EFOREIGNLOCK); a lock on PATH
 * that lists it later sees "locks" and refuses in turn, so the two never
 * both hold.
 *
 * Each acquisition has its own two engines (gate and lease), so one
 * handle may hold several leases and wait for more at once. */
#include <stdio.h>
#include <string.h>

#include "recipes/rcp.h"

/* L_GATE lasts until the lease engine starts: while PATH is looked at,
 * a give-up only sets abort_rc, which take_lease sees.  L_LEASE lasts
 * until the report, so also while the gate goes back after the lease
 * engine held: a give-up then only sets abort_rc, which lease_report
 * sees.  L_ENDED: the acquisition failed, its engines are gone. */
enum { L_GATE, L_LEASE, L_HELD, L_ENDED };

struct tb_semaphore {
    pthread_mutex_t mu;
    int refs;
    struct tb_client *c;
    char *path, *locks, *leases;
    char *conflict; /* what refused the last acquisition */
    int max;
    struct tb_lock_options o; /* its value is `value`, ours */
    void *value;
    struct tb_queue all; /* struct tb_lease, pending and held */
    struct tb_recipe_stats st;
};

struct tb_lease {
    struct tb_queue q;
    struct tb_semaphore *s;
    /* The acquisition's (until it fails) or the holder's (until the
     * release), and the synchronous caller's while it waits: its give-up
     * may come as the acquisition fails on the I/O thread; and a grant's
     * report's. */
    int refs;
    struct tb_mutex *gate, *lease; /* set and cleared under s->mu */
    int phase;
    int abort_rc;
    int result;       /* of the acquisition, while the gate goes back */
    /* A grant's callback runs (reporting) with a reference of its own: a
     * free meanwhile, which cannot wait for it (it may run inside it),
     * leaves the lease to it (orphaned), released once it returns. */
    int reporting, orphaned;
    int timer;        /* the engines time out themselves (async form) */
    int64_t deadline; /* < 0: none */
    tb_lease_cb cb;
    void *data;
};

static void sem_unref(struct tb_semaphore *s)
{
    if (__atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    free(s->path);
    free(s->locks);
    free(s->leases);
    free(s->conflict);
    free(s->value);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

static void lease_unref(struct tb_lease *l)
{
    struct tb_semaphore *s = l->s;

    if (__atomic_sub_fetch(&l->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    free(l);
    sem_unref(s);
}

int tb_semaphore_new(struct tb_semaphore **out, struct tb_client *c,
                     const char *path, int max_leases,
                     const struct tb_lock_options *o)
{
    struct tb_semaphore *s;

    if (out == NULL || c == NULL || max_leases < 1 || !rcp_path_ok(path) ||
        strlen(path) < 2 || (o != NULL && o->lock_delay_ms != 0))
        return TB_EINVAL; /* lock-delay: a fair mutex's alone */
    s = calloc(1, sizeof *s);
    if (s == NULL)
        return TB_ENOMEM;
    pthread_mutex_init(&s->mu, NULL);
    s->refs = 1;
    s->c = c;
    s->max = max_leases;
    if (o != NULL)
        s->o = *o;
    s->o.kind = TB_LOCK_FAIR;
    tb_queue_init(&s->all);
    /* The nodes' data is the caller's only during this call, as for the
     * other recipes; each acquisition's locks copy it from here. */
    if (s->o.value != NULL &&
        (s->value = malloc(s->o.len > 0 ? s->o.len : 1)) != NULL)
        memcpy(s->value, s->o.value, s->o.len);
    s->o.value = s->value;
    s->path = rcp_strdup(path);
    s->locks = rcp_join(path, "locks");
    s->leases = rcp_join(path, "leases");
    if (s->path == NULL || s->locks == NULL || s->leases == NULL ||
        (o != NULL && o->value != NULL && s->value == NULL)) {
        sem_unref(s);
        return TB_ENOMEM;
    }
    *out = s;
    return 0;
}

static void add_stats(struct tb_recipe_stats *a, struct tb_mutex *m)
{
    struct tb_recipe_stats b;

    tb_mutex_stats(m, &b);
    a->acquisitions += b.acquisitions;
    a->creates += b.creates;
    a->children_reads += b.children_reads;
    a->watches_set += b.watches_set;
    a->wakeups += b.wakeups;
    a->recoveries += b.recoveries;
    a->restarts += b.restarts;
}

static void lease_free(struct tb_lease *l)
{
    struct tb_semaphore *s = l->s;

    pthread_mutex_lock(&s->mu);
    add_stats(&s->st, l->lease);
    tb_queue_remove(&l->q);
    l->phase = L_ENDED;
    pthread_mutex_unlock(&s->mu);
    rcp_lk_free(l->lease);
    lease_unref(l);
}

/* A held lease goes back, its node with the reaper if need be. */
static void lease_return(struct tb_lease *l)
{
    rcp_lk_unlock(l->lease, NULL, NULL);
    lease_free(l);
}

/* What a lease lost before its report tells the caller: the session's
 * end if that took it (as an acquisition it cut short reports), else
 * TB_ELOCKLOST. */
static int lost_rc(struct tb_client *c)
{
    switch (tb_client_state(c)) {
    case TB_SESSION_EXPIRED:
        return TB_ESESSIONEXPIRED;
    case TB_SESSION_AUTH_FAILED:
        return TB_EAUTHFAILED;
    case TB_SESSION_CLOSED:
        return TB_ECLOSING;
    default:
        return TB_ELOCKLOST; /* its node deleted, or another session */
    }
}

/* The gate is back (or was never held): report the acquisition.  A
 * grant is no lease if the lease went while the gate went back (a
 * session expired while the gate's delete waited for a reconnect):
 * others may hold that slot now.  Nor if a give-up came meanwhile: the
 * lease engine held already and refused the abort, so the give-up wins
 * here, as it would have earlier.  Either way the lease engine is freed
 * (a node still there goes to the reaper) before the caller hears. */
static void lease_report(struct tb_lease *l, int rc)
{
    struct tb_semaphore *s = l->s;
    struct tb_mutex *gate, *lease = NULL;
    tb_lease_cb cb = l->cb;
    void *data = l->data;
    int orphan, suspended = 0;
    int64_t token = 0;

    if (rc == 0 && rcp_lk_state(l->lease) == TB_LOCK_LOST)
        rc = lost_rc(s->c);
    pthread_mutex_lock(&s->mu);
    if (rc == 0 && l->abort_rc != 0)
        rc = l->abort_rc; /* decided under s->mu, as the give-up is */
    add_stats(&s->st, l->gate);
    gate = l->gate;
    l->gate = NULL;
    if (rc != 0) {
        add_stats(&s->st, l->lease);
        tb_queue_remove(&l->q);
        lease = l->lease;
        l->lease = NULL;
        l->phase = L_ENDED;
    } else {
        l->phase = L_HELD;
        l->reporting = 1;
        __atomic_add_fetch(&l->refs, 1, __ATOMIC_ACQ_REL);
    }
    pthread_mutex_unlock(&s->mu);
    rcp_lk_free(gate);
    rcp_lk_free(lease);
    if (rc == 0) {
        pthread_mutex_lock(l->lease->mu);
        l->lease->scb = s->o.state_cb;
        l->lease->sdata = s->o.data;
        suspended = l->lease->lstate == TB_LOCK_SUSPENDED;
        token = l->lease->czxid;
        pthread_mutex_unlock(l->lease->mu);
    }
    if (cb != NULL)
        cb(rc, rc == 0 ? l : NULL, data);
    if (rc == 0) {
        pthread_mutex_lock(&s->mu);
        l->reporting = 0;
        orphan = l->orphaned && l->phase == L_HELD;
        suspended &= !l->orphaned && l->phase == L_HELD;
        pthread_mutex_unlock(&s->mu);
        if (orphan)
            lease_return(l);
        /* Granted while its engine waits to look at its node again (the
         * connection came back): told after the grant, as it would have
         * been had it come after (HELD or LOST follows), unless the grant's
         * callback gave it back.  On the I/O thread, as the engine's own
         * changes are. */
        if (suspended && s->o.state_cb != NULL)
            s->o.state_cb(TB_LOCK_SUSPENDED, token, s->o.data);
    }
    lease_unref(l);
}

/* A refused semaphore leaves no empty parent of its own in a path that
 * is someone else's (kazoo's Semaphore counts PATH's children as leases).
 * A parent still in use is not empty, and its delete fails harmlessly. */
static void drop_parents(struct tb_semaphore *s)
{
    tb_delete(s->c, s->leases, -1, NULL, NULL);
    tb_delete(s->c, s->locks, -1, NULL, NULL);
}

static void on_gate_released(int rc, void *data)
{
    struct tb_lease *l = data;

    /* A lost gate is gone anyway, and says nothing of the lease (a gate
     * node already deleted is no loss of ours): lease_report looks at
     * the lease itself. */
    (void)rc;
    if (l->result == TB_EFOREIGNLOCK)
        drop_parents(l->s);
    lease_report(l, l->result);
}

/* The acquisition ended: the gate goes back first, so that when the
 * caller hears of it the gate's node is gone (or with the reaper while
 * disconnected) and the next waiter is on its way. */
static void lease_end(struct tb_lease *l, int rc)
{
    l->result = rc;
    if (rcp_lk_unlock(l->gate, on_gate_released, l) != 0)
        lease_report(l, rc); /* not held: nothing to give back */
}

/* The lease engine's timeout: what is left of the acquisition's, or, in
 * the synchronous form (whose wait gives up itself), none or one try. */
static int remaining(const struct tb_lease *l)
{
    if (!l->timer && l->deadline > 0)
        return -1;
    return rcp_ms_left(l->deadline); /* past it (0): one try */
}

static void on_lease(int rc, int64_t token, void *data)
{
    (void)token;
    lease_end(data, rc);
}

/* Takes over `text` (may be NULL) as what refused the acquisition. */
static void keep_conflict(struct tb_semaphore *s, char *text)
{
    pthread_mutex_lock(&s->mu);
    free(s->conflict);
    s->conflict = text;
    pthread_mutex_unlock(&s->mu);
}

/* The gate and PATH are ours to use: wait for a lease. */
static void take_lease(struct tb_lease *l)
{
    struct tb_semaphore *s = l->s;
    int rc;

    pthread_mutex_lock(&s->mu);
    rc = l->abort_rc;
    if (rc == 0) {
        l->phase = L_LEASE;
        rc = rcp_lk_lock(l->lease, remaining(l), on_lease, l);
    }
    pthread_mutex_unlock(&s->mu);
    if (rc != 0)
        lease_end(l, rc);
}

/* The first child of PATH other than the two parents, or NULL. */
static const char *other_child(const struct tb_strings *v)
{
    int i;

    for (i = 0; i < v->count; i++)
        if (strcmp(v->v[i], "locks") != 0 && strcmp(v->v[i], "leases") != 0)
            return v->v[i];
    return NULL;
}

static int check_path(struct tb_lease *l);

static void on_path_children(struct tb_client *c, int rc,
                             const struct tb_strings *v,
                             const struct tb_stat *st, void *data)
{
    struct tb_lease *l = data;
    struct tb_semaphore *s = l->s;
    const char *other;
    char *text;
    size_t n;

    (void)st;
    (void)c;
    if (rc == TB_ECONNECTIONLOSS && (rc = check_path(l)) == 0)
        return; /* asked again once connected */
    if (rc != 0) {
        lease_end(l, rc);
        return;
    }
    if ((other = other_child(v)) == NULL) {
        take_lease(l);
        return;
    }
    n = strlen(s->path) + strlen(other) + 128;
    text = malloc(n);
    if (text != NULL)
        snprintf(text, n, "%s/%s: %s", s->path, other,
                 tb_lock_node_what(other));
    keep_conflict(s, text);
    lease_end(l, TB_EFOREIGNLOCK);
}

static int check_path(struct tb_lease *l)
{
    return tb_get_children(l->s->c, l->s->path, NULL, NULL, on_path_children,
                           l);
}

static void on_gate(int rc, int64_t token, void *data)
{
    struct tb_lease *l = data;

    (void)token;
    if (rc == TB_EFOREIGNLOCK) { /* something else under PATH/locks */
        char *text;
        pthread_mutex_lock(l->gate->mu);
        text = l->gate->conflict ? rcp_strdup(l->gate->conflict) : NULL;
        pthread_mutex_unlock(l->gate->mu); /* before s->mu: lock order */
        keep_conflict(l->s, text);
    }
    if (rc == 0)
        rc = check_path(l);
    if (rc != 0)
        lease_end(l, rc);
}

/* Starts an acquisition; *out is the lease object (for a give-up). */
static int start(struct tb_semaphore *s, int timeout_ms, int timer,
                 tb_lease_cb cb, void *data, struct tb_lease **out)
{
    struct tb_lock_options go = {0}, lo = s->o;
    struct tb_lease *l;
    int rv;

    l = calloc(1, sizeof *l);
    if (l == NULL)
        return TB_ENOMEM;
    l->s = s;
    l->refs = out != NULL ? 2 : 1; /* and the caller's, who gives up */
    l->cb = cb;
    l->data = data;
    l->timer = timer;
    l->deadline = timeout_ms > 0 ? rcp_now_ms() + timeout_ms : -1;
    if (timeout_ms == 0)
        l->deadline = 0;
    go.value = s->o.value;
    go.len = s->o.len;
    if ((rv = rcp_lk_new(&l->gate, s->c, s->locks, &rcp_cfg_mutex, &go)))
        goto err;
    /* Its states are the caller's only once the lease is (lease_report):
     * until then, what becomes of it is the acquisition's result. */
    lo.state_cb = NULL;
    if ((rv = rcp_lk_new(&l->lease, s->c, s->leases, &rcp_cfg_lease, &lo)))
        goto err_gate;
    l->gate->embedded = l->lease->embedded = 1;
    l->lease->max_leases = s->max;
    __atomic_add_fetch(&s->refs, 1, __ATOMIC_ACQ_REL);
    pthread_mutex_lock(&s->mu);
    tb_queue_insert_tail(&s->all, &l->q);
    pthread_mutex_unlock(&s->mu);
    rv = rcp_lk_lock(l->gate, timer ? timeout_ms : (timeout_ms == 0 ? 0 : -1),
                     on_gate, l);
    if (rv != 0) {
        pthread_mutex_lock(&s->mu);
        tb_queue_remove(&l->q);
        pthread_mutex_unlock(&s->mu);
        sem_unref(s);
        rcp_lk_free(l->lease);
        goto err_gate;
    }
    if (out != NULL)
        *out = l;
    return 0;
err_gate:
    rcp_lk_free(l->gate);
err:
    free(l);
    return rv;
}

int tb_semaphore_conflict(struct tb_semaphore *s, char *buf, size_t cap)
{
    int rv;

    if (s == NULL)
        return TB_EINVAL;
    pthread_mutex_lock(&s->mu);
    rv = rcp_copy_conflict(s->conflict, buf, cap);
    pthread_mutex_unlock(&s->mu);
    return rv;
}

int tb_semaphore_acquire(struct tb_semaphore *s, int timeout_ms, tb_lease_cb cb,
                         void *data)
{
    int rv = rcp_async_timeout_check(s->c, timeout_ms);

    return rv != 0 ? rv : start(s, timeout_ms, 1, cb, data, NULL);
}

/* The engine an acquisition waits in, referenced (lock held); NULL once
 * it is over. */
static struct tb_mutex *waiting_engine(struct tb_lease *l)
{
    struct tb_mutex *m = l->phase == L_GATE    ? l->gate
                         : l->phase == L_LEASE ? l->lease
                                               : NULL;

    if (m != NULL)
        rcp_lk_ref(m);
    return m;
}

static int abort_lease(struct tb_lease *l, int rc)
{
    struct tb_mutex *m;

    pthread_mutex_lock(&l->s->mu);
    if (l->abort_rc != 0 || (m = waiting_engine(l)) == NULL) {
        pthread_mutex_unlock(&l->s->mu);
        return TB_EINVAL;
    }
    l->abort_rc = rc;
    pthread_mutex_unlock(&l->s->mu);
    /* EINVAL: between the engines, and take_lease sees abort_rc; or the
     * lease engine held already, and lease_report sees it. */
    rcp_lk_abort(m, rc);
    rcp_lk_unref(m);
    return 0;
}

int tb_semaphore_cancel(struct tb_semaphore *s)
{
    struct tb_mutex *v[64];
    struct tb_queue *q;
    int n = 0, i, found = 0;

    do { /* in rounds: an abort may end a lease, unlinking it */
        pthread_mutex_lock(&s->mu);
        n = 0;
        TB_QUEUE_FOREACH (q, &s->all) {
            struct tb_lease *l = TB_CONTAINER_OF(q, struct tb_lease, q);
            if (l->abort_rc == 0 && n < 64 &&
                (v[n] = waiting_engine(l)) != NULL) {
                l->abort_rc = TB_ECANCELED;
                n++;
            }
        }
        pthread_mutex_unlock(&s->mu);
        for (i = 0; i < n; i++) { /* outside s->mu: it may end a lease */
            rcp_lk_abort(v[i], TB_ECANCELED);
            rcp_lk_unref(v[i]);
            found = 1;
        }
    } while (n == 64);
    return found ? 0 : TB_EINVAL;
}

static void give_up(void *arg)
{
    abort_lease(arg, TB_ETIMEDOUT);
}

static void on_sync_lease(int rc, struct tb_lease *l, void *data)
{
    rcp_wait_done(data, rc, 0, l);
}

int tb_semaphore_acquire_sync(struct tb_semaphore *s, int timeout_ms,
                              struct tb_lease **out)
{
    struct tb_lease *l = NULL;
    struct rcp_wait w;
    int rv;

    if (out != NULL)
        *out = NULL;
    if ((rv = rcp_sync_check(s->c)) != 0)
        return rv;
    rcp_wait_init(&w);
    rv = start(s, timeout_ms, 0, on_sync_lease, &w, &l);
    if (rv == 0) {
        rcp_wait(s->c, &w, timeout_ms > 0 ? rcp_now_ms() + timeout_ms : -1,
                 give_up, l);
        lease_unref(l);
        rv = w.rc;
        if (out != NULL)
            *out = w.ptr;
    }
    rcp_wait_destroy(&w);
    return rv;
}

int tb_lease_release(struct tb_lease *l, tb_done_cb cb, void *data)
{
    int rv;

    if (l == NULL || l->phase != L_HELD)
        return TB_EINVAL;
    rv = rcp_lk_unlock(l->lease, cb, data);
    if (rv == 0 || rv == TB_ELOCKLOST || rv == TB_ENOTHELD)
        lease_free(l); /* the node is with the reaper */
    return rv;
}

int tb_lease_release_sync(struct tb_lease *l)
{
    struct rcp_wait w;
    struct tb_client *c;
    int rv;

    if (l == NULL || l->phase != L_HELD)
        return TB_EINVAL;
    c = l->s->c;
    if ((rv = rcp_sync_check(c)) != 0)
        return rv;
    rcp_wait_init(&w);
    rv = tb_lease_release(l, rcp_wait_done_cb, &w);
    if (rv == 0) {
        rcp_wait(c, &w, -1, NULL, NULL);
        rv = w.rc;
    }
    rcp_wait_destroy(&w);
    return rv;
}

/* The fenced write of a lease: its engine's, whose node is the lease's. */
int tb_lease_fence(struct tb_lease *l, struct tb_multi *ops)
{
    return l == NULL ? TB_EINVAL : tb_mutex_fence(l->lease, ops);
}

int tb_lease_fenced_exec(struct tb_lease *l, struct tb_multi *ops,
                         tb_multi_cb cb, void *data)
{
    return l == NULL ? TB_EINVAL : tb_fenced_exec(l->lease, ops, cb, data);
}

int tb_lease_fenced_exec_sync(struct tb_lease *l, struct tb_multi *ops,
                              struct tb_multi_results *out)
{
    return l == NULL ? TB_EINVAL : tb_fenced_exec_sync(l->lease, ops, out);
}

int64_t tb_lease_token(struct tb_lease *l)
{
    return tb_mutex_token(l->lease);
}

int tb_lease_state(struct tb_lease *l)
{
    return rcp_lk_state(l->lease);
}

void tb_semaphore_stats(struct tb_semaphore *s, struct tb_recipe_stats *out)
{
    pthread_mutex_lock(&s->mu);
    *out = s->st;
    pthread_mutex_unlock(&s->mu);
}

void tb_semaphore_free(struct tb_semaphore *s)
{
    struct tb_queue *q;

    if (s == NULL)
        return;
    tb_semaphore_cancel(s); /* also a grant whose gate is going back */
    for (;;) { /* leases still held go back */
        struct tb_lease *l = NULL;
        pthread_mutex_lock(&s->mu);
        TB_QUEUE_FOREACH (q, &s->all) {
            struct tb_lease *x = TB_CONTAINER_OF(q, struct tb_lease, q);
            /* One reporting is left to its report, which returns it:
             * marked, it is the report's (returned once, not twice). */
            if (x->phase == L_HELD && (x->reporting || x->orphaned))
                x->orphaned = 1;
            else if (x->phase == L_HELD) {
                l = x;
                break;
            }
        }
        pthread_mutex_unlock(&s->mu);
        if (l == NULL)
            break;
        lease_return(l);
    }
    sem_unref(s);
}
