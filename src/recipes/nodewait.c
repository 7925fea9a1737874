/* Waiting until a node exists, or until it is gone, or until a node's
 * children change: the one wait the barriers, the latch and the queue are
 * made of.  A wait may be for the first of two nodes (a latch's last
 * counter there or its first one gone; a cyclic barrier's "end" there or
 * the party before ours gone; a queue's entries or claims changed).
 *
 * exists() (getChildren2() for children) with a watch, and again after
 * each event, until the answer is the one wanted.  The answer is read
 * after the watch is set, by the same call, so a change between the two
 * cannot be missed.  Each registration has its own small context, so a
 * finished wait can remove exactly its watches (locally: the server is
 * told unless another watcher needs them).
 *
 * The first node to be as wanted ends the wait with 0; so does the first
 * error (the session's end, a parent missing).  A give-up (the deadline,
 * or the synchronous caller's) never fires the callback itself: it
 * removes the watches, or lets a reply in flight see it, and the callback
 * fires from the first of those to come back, on the client's callback
 * thread, like every other recipe callback.  A finished wait removes the
 * watches its other nodes' replies set after it.
 *
 * References: the caller's (until the callback is decided), each request
 * in flight, each registered watch, an armed timer, and the synchronous
 * caller's handle (rcp_nw_start's `keep`). */
#include "recipes/rcp.h"

struct nw_node {
    char *path;
    int want;               /* RCP_NW_GONE, _EXISTS or _CHILDREN */
    int64_t cversion;       /* _CHILDREN: until it is no longer this */
    struct nw_watch *watch; /* registered, not fired yet */
};

/* A registration's context, and its request's (the reply sets it or
 * frees it). */
struct nw_watch {
    struct rcp_nw *w;
    struct nw_node *node;
};

struct rcp_nw {
    pthread_mutex_t mu;
    int refs;
    struct tb_client *c;
    struct nw_node node[RCP_NW_MAX];
    int n;
    int done;    /* the callback is decided */
    int gave_up; /* the give-up's rc, 0 if none */
    tb_done_cb cb;
    void *data;
    struct rcp_timer timer;
};

static void nw_free(struct rcp_nw *w)
{
    int i;

    pthread_mutex_destroy(&w->mu);
    for (i = 0; i < w->n; i++)
        free(w->node[i].path);
    free(w);
}

/* Drops a reference taken under the lock, with the lock held; 1 if it was
 * the last (the caller frees after unlocking). */
static int drop_locked(struct rcp_nw *w)
{
    return --w->refs == 0;
}

void rcp_nw_release(struct rcp_nw *w)
{
    int last;

    pthread_mutex_lock(&w->mu);
    last = drop_locked(w);
    pthread_mutex_unlock(&w->mu);
    if (last)
        nw_free(w);
}

static void on_watch(struct tb_client *c, const struct tb_event *ev,
                     void *data);
static void on_exists(struct tb_client *c, int rc, const struct tb_stat *st,
                      void *data);
static void on_children(struct tb_client *c, int rc, const struct tb_strings *v,
                        const struct tb_stat *st, void *data);

/* Only our registration: other watchers of the path (another wait, a
 * lock) keep theirs.  Its final call (WATCH_REMOVED) frees the context. */
static void remove_watch(struct rcp_nw *w, struct nw_node *n)
{
    if (n->watch == NULL)
        return;
    tb_remove_watches(w->c, n->path,
                      n->want == RCP_NW_CHILDREN ? TB_WATCHER_CHILDREN
                                                 : TB_WATCHER_DATA,
                      on_watch, n->watch, 1, NULL, NULL);
    n->watch = NULL;
}

static void remove_watches(struct rcp_nw *w)
{
    int i;

    for (i = 0; i < w->n; i++)
        remove_watch(w, &w->node[i]);
}

/* Decides the callback (under the lock); *fire gets it. */
static void finish(struct rcp_nw *w, int rc, int *fire, int *last)
{
    if (w->done)
        return;
    w->done = 1;
    *fire = rc;
    if (rcp_timer_disarm(&w->timer))
        *last |= drop_locked(w);
    remove_watches(w);
    *last |= drop_locked(w); /* the caller's */
}

static int send_look(struct rcp_nw *w, struct nw_node *n)
{
    struct nw_watch *x = malloc(sizeof *x);
    int rv;

    if (x == NULL)
        return TB_ENOMEM;
    x->w = w;
    x->node = n;
    w->refs += 2; /* the request and the watch */
    if (n->want == RCP_NW_CHILDREN)
        rv = tb_get_children2(w->c, n->path, on_watch, x, on_children, x);
    else
        rv = tb_exists(w->c, n->path, on_watch, x, on_exists, x);
    if (rv != 0) {
        w->refs -= 2;
        free(x);
    }
    return rv;
}

static void unlock_fire(struct rcp_nw *w, int fire, int last)
{
    tb_done_cb cb = w->cb;
    void *data = w->data;

    pthread_mutex_unlock(&w->mu);
    if (fire != 1 && cb != NULL)
        cb(fire, data);
    if (last)
        nw_free(w);
}

/* A reply: `set` if it set the watch, `met` if the answer is the one
 * wanted. */
static void on_answer(struct nw_watch *x, int rc, int set, int met)
{
    struct rcp_nw *w = x->w;
    struct nw_node *n = x->node;
    int fire = 1, last = 0, rv;

    pthread_mutex_lock(&w->mu);
    if (set) {
        n->watch = x;
    } else {
        free(x); /* not set: its callback never comes */
        last |= drop_locked(w);
    }
    if (w->done)
        remove_watch(w, n); /* another node ended the wait meanwhile */
    else if (met)
        finish(w, 0, &fire, &last);
    else if (w->gave_up != 0)
        finish(w, w->gave_up, &fire, &last);
    else if (set) {
        /* not yet: the watch will tell */
    } else if (rc == TB_ECONNECTIONLOSS) {
        /* Sent again; the client holds it until it reconnects. */
        if ((rv = send_look(w, n)) != 0)
            finish(w, rv, &fire, &last);
    } else {
        finish(w, rc, &fire, &last);
    }
    last |= drop_locked(w); /* the request's */
    unlock_fire(w, fire, last);
}

static void on_exists(struct tb_client *c, int rc, const struct tb_stat *st,
                      void *data)
{
    struct nw_watch *x = data;
    int set = rc == 0 || rc == TB_ENONODE; /* set for a missing node too */

    (void)st;
    (void)c;
    on_answer(x, rc, set, set && (rc == 0) == (x->node->want == RCP_NW_EXISTS));
}

/* Children: met once the parent's cversion moved.  A missing parent sets
 * no watch and ends the wait with TB_ENONODE. */
static void on_children(struct tb_client *c, int rc, const struct tb_strings *v,
                        const struct tb_stat *st, void *data)
{
    struct nw_watch *x = data;

    (void)v;
    (void)c;
    on_answer(x, rc, rc == 0, rc == 0 && st->cversion != x->node->cversion);
}

static void on_watch(struct tb_client *c, const struct tb_event *ev, void *data)
{
    struct nw_watch *x = data;
    struct rcp_nw *w = x->w;
    struct nw_node *n = x->node;
    int fire = 1, last = 0, rv;

    (void)c;
    pthread_mutex_lock(&w->mu);
    if (n->watch == x)
        n->watch = NULL;
    if (!w->done) {
        if (w->gave_up != 0)
            finish(w, w->gave_up, &fire, &last);
        else if (ev->rc != 0)
            finish(w, ev->rc, &fire, &last); /* the session ended */
        else if ((rv = send_look(w, n)) != 0)
            finish(w, rv, &fire, &last);
    }
    if (ev->final) {
        free(x);
        last |= drop_locked(w);
    }
    unlock_fire(w, fire, last);
}

/* Gives the wait up with `rc`: its callback fires from the removal of the
 * watches, or from the replies in flight. */
void rcp_nw_give_up(struct rcp_nw *w, int rc)
{
    pthread_mutex_lock(&w->mu);
    if (!w->done && w->gave_up == 0) {
        w->gave_up = rc;
        remove_watches(w);
    }
    pthread_mutex_unlock(&w->mu);
}

static void on_timer(struct rcp_timer *t, unsigned tag)
{
    struct rcp_nw *w = TB_CONTAINER_OF(t, struct rcp_nw, timer);

    (void)tag;
    rcp_nw_give_up(w, TB_ETIMEDOUT);
    rcp_nw_release(w); /* the timer's */
}

int rcp_nw_start(struct tb_client *c, const char *path, int want,
                 int timeout_ms, tb_done_cb cb, void *data,
                 struct rcp_nw **keep)
{
    struct rcp_nw_node node = {path, want, -1};

    return rcp_nw_start_any(c, &node, 1, timeout_ms, cb, data, keep);
}

int rcp_nw_start_any(struct tb_client *c, const struct rcp_nw_node *v, int n,
                     int timeout_ms, tb_done_cb cb, void *data,
                     struct rcp_nw **keep)
{
    struct rcp_nw *w;
    int i, rv, last;

    if (n < 1 || n > RCP_NW_MAX)
        return TB_EINVAL;
    if ((rv = rcp_async_timeout_check(c, timeout_ms)) != 0)
        return rv;
    if ((w = calloc(1, sizeof *w)) == NULL)
        return TB_ENOMEM;
    pthread_mutex_init(&w->mu, NULL);
    for (w->n = 0; w->n < n; w->n++) {
        if ((w->node[w->n].path = rcp_strdup(v[w->n].path)) == NULL) {
            nw_free(w);
            return TB_ENOMEM;
        }
        w->node[w->n].want = v[w->n].want;
        w->node[w->n].cversion = v[w->n].cversion;
    }
    w->c = c;
    w->cb = cb;
    w->data = data;
    w->timer.fn = on_timer;
    w->refs = keep != NULL ? 2 : 1;
    pthread_mutex_lock(&w->mu);
    if (timeout_ms == 0) {
        w->gave_up = TB_ETIMEDOUT; /* one look, then the answer */
    } else if (timeout_ms > 0) {
        w->refs++;
        rv = rcp_timer_arm(&w->timer, rcp_now_ms() + timeout_ms, 0);
        if (rv != 0) {
            pthread_mutex_unlock(&w->mu);
            nw_free(w);
            return rv;
        }
    }
    rv = send_look(w, &w->node[0]);
    if (rv != 0) {
        /* No callback: the caller is told.  A timer that has fired
         * already holds its reference until its give-up, a no-op now,
         * has run. */
        w->done = 1;
        if (rcp_timer_disarm(&w->timer))
            w->refs--;
        w->refs -= keep != NULL ? 2 : 1;
        last = w->refs == 0;
        pthread_mutex_unlock(&w->mu);
        if (last)
            nw_free(w);
        return rv;
    }
    /* Another node's look that cannot be sent ends the wait, with its
     * error, once the first has come back. */
    for (i = 1; i < n; i++)
        if ((rv = send_look(w, &w->node[i])) != 0) {
            w->gave_up = rv;
            break;
        }
    pthread_mutex_unlock(&w->mu);
    if (keep != NULL)
        *keep = w;
    return 0;
}

/* ---- the synchronous wait ---- */

struct nw_sync {
    struct tb_client *c;
    const char *path;
    int want;
    struct rcp_nw *nw; /* kept, for the give-up */
};

static int sync_start(void *arg, int timeout_ms, struct rcp_wait *w)
{
    struct nw_sync *s = arg;

    return rcp_nw_start(s->c, s->path, s->want, timeout_ms, rcp_wait_done_cb, w,
                        &s->nw);
}

static void sync_give_up(void *arg)
{
    rcp_nw_give_up(((struct nw_sync *)arg)->nw, TB_ETIMEDOUT);
}

int rcp_nw_sync(struct tb_client *c, const char *path, int want, int timeout_ms)
{
    struct nw_sync s = {c, path, want, NULL};
    struct rcp_wait w;
    int rv;

    if (c == NULL || !rcp_path_ok(path))
        return TB_EINVAL;
    rv = rcp_sync_run(c, &w, timeout_ms, sync_start, sync_give_up, &s);
    if (s.nw != NULL)
        rcp_nw_release(s.nw);
    return rv;
}
