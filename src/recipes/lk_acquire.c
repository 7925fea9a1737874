/* The engine's acquisition: create our node, find it again after a lost
 * reply, look at the queue, wait for the one node we queue behind, give
 * up cleanly, and the watch on our own node.  rcp.h draws the phases.
 *
 * Fair (cfg->fair): our node is PARENT/_c_<uuid>-<name><seq>, sequential
 * and ephemeral.  After the create we send, back to back, exists(our
 * node, watch) -- the holder's own-node watch, set once per node -- and
 * getChildren(PARENT); replies come in order, so when the children are
 * in we also know our node's czxid (the fencing token).  The children of
 * the kinds cfg->kinds names are sorted into one queue (kinds.c); a
 * strict engine refuses a parent holding any other (lk_other.c).  The
 * predicate says whether we hold or which single node to watch (exists),
 * so a departure wakes exactly the waiter behind it.
 *
 * Non-fair: our node is PATH itself, ephemeral, its data "_c_<uuid>"
 * followed by the user's data.  A failed create (node exists) watches
 * PATH, and every waiter wakes when it goes: the herd, on purpose.
 *
 * A create whose reply is lost (connection loss) may or may not have
 * happened: FINDING lists the parent for our uuid prefix (non-fair: reads
 * PATH's data), and either carries on with the node found or creates
 * again.  This is why a lost reply leaves no orphan: the node is always
 * found, and then owned, queued or deleted like any other.  The server
 * FINDING asks may not have applied the lost create yet: so for the rest
 * of that acquisition a non-fair create refused (node exists) reads
 * PATH's data too before it waits, for PATH may be our node.
 *
 * The watch on our own node (lk_own.c) belongs with the acquisition
 * although it outlasts it: the check sets it, its reply is part of the
 * check (our node's czxid, the fencing token once we hold; for the
 * non-fair engine the verdict), and its events restart or fail a node
 * still queued, as well as tell a holder (lk_state.c) that its node is
 * gone.  Kept with the hold, it would call back into the acquisition that
 * sets it.  So the calls go one way: lk.c calls this file and lk_own.c,
 * which call lk_state.c and lk_ctx.c, never lk.c.  The refusals of lk_other.c
 * end the acquisition themselves (rcp_lk_fail). */
#include <stdio.h>
#include <string.h>

#include "recipes/rcp.h"

#define MAX_RESTARTS 20

static void pred_watch_cb(struct tb_client *c, const struct tb_event *ev,
                          void *wdata);
static void children_watch_cb(struct tb_client *c, const struct tb_event *ev,
                              void *wdata);
static void send_check(struct tb_mutex *m, struct rcp_out *o);
static void send_create(struct tb_mutex *m, struct rcp_out *o);
static void send_find(struct tb_mutex *m, struct rcp_out *o);
static void watch_pred(struct tb_mutex *m, const char *name, struct rcp_out *o);
static void wait_holder(struct tb_mutex *m, struct rcp_out *o);
static void rcp_lk_drop_pred_watch(struct tb_mutex *m);
static void rcp_lk_finish(struct tb_mutex *m, int rc, struct rcp_out *o);

/* ---- ending an acquisition ---- */

static void rcp_lk_drop_pred_watch(struct tb_mutex *m)
{
    if (m->pred_w == NULL || m->c_closed)
        return;
    /* Local removal: the watcher gets its final call (and frees its
     * context); the server is told unless another local watcher of this
     * client still needs the watch. */
    tb_remove_watches(m->c, m->pred_path,
                      m->pred_children ? TB_WATCHER_CHILDREN : TB_WATCHER_DATA,
                      m->pred_children ? children_watch_cb : pred_watch_cb,
                      m->pred_w, 1, NULL, NULL);
    m->pred_w = NULL;
}

static void rcp_lk_finish(struct tb_mutex *m, int rc, struct rcp_out *o)
{
    if (rcp_timer_disarm(&m->timer))
        rcp_lk_unref_locked(m);
    o->acb = m->acb;
    o->adata = m->adata;
    o->arc = rc;
    o->atoken = rc == 0 ? m->token : 0;
    if (rc == 0 && o->acb != NULL) {
        rcp_lk_ref(m);
        o->granted = m;
    }
    m->acb = NULL;
    m->adata = NULL;
    if (rc != 0) {
        m->phase = LK_IDLE;
        m->attempt++;
        if (m->holds == 0)
            m->lstate = TB_LOCK_UNLOCKED;
    }
}

/* Gives up an acquisition whose node (if any) is known: the reaper deletes
 * it, and the callback fires once it has tried. */
static void on_abort_reaped(int rc, void *data)
{
    struct rcp_ctx *x = data;
    struct tb_mutex *m = x->m;
    struct rcp_out o = {0};

    (void)rc;
    pthread_mutex_lock(m->mu);
    rcp_lk_finish(m, m->abort_rc, &o);
    rcp_ctx_leave(x, &o);
}

void rcp_lk_fail(struct tb_mutex *m, int rc, struct rcp_out *o)
{
    struct rcp_ctx *x;

    rcp_lk_note_session_end(m, rc);
    if (m->abort_rc == 0)
        m->abort_rc = rc;
    m->attempt++; /* replies still in flight are now stale */
    rcp_lk_drop_pred_watch(m);
    if (m->node == NULL || m->c_closed || rcp_lk_session_over(rc)) {
        free(m->node);
        m->node = NULL;
        m->own_w = NULL;
        rcp_lk_finish(m, m->abort_rc, o);
        return;
    }
    rcp_lk_drop_own_watch(m);
    m->phase = LK_ABORTING;
    x = rcp_ctx_new(m);
    if (x == NULL || rcp_reap(m->c, m->node, rcp_lk_shared_czxid(m), 0,
                              on_abort_reaped, x) != 0) {
        if (x != NULL)
            rcp_ctx_free_locked(x);
        rcp_lk_finish(m, m->abort_rc, o);
    }
    free(m->node);
    m->node = NULL;
}

/* ---- phases ---- */

/* A client call failed at once (closing, out of memory). */
static int submitted(struct tb_mutex *m, int rv, struct rcp_ctx *x,
                     struct rcp_out *o)
{
    if (rv == 0)
        return 1;
    if (x != NULL)
        rcp_ctx_free_locked(x);
    rcp_lk_fail(m, rv, o);
    return 0;
}

/* Queued, and watching: a restart from here on is a new one.  The bound
 * on restarts is for those that follow one another with no wait between
 * (a node that vanishes as fast as it is made); a waiter whose node
 * someone deletes now and then, over a long wait, stays in the queue. */
static void waiting(struct tb_mutex *m)
{
    m->phase = LK_WAITING;
    m->restarts = 0;
}

void rcp_lk_restart(struct tb_mutex *m, struct rcp_out *o)
{
    if (++m->restarts > MAX_RESTARTS) {
        rcp_lk_fail(m, TB_ENONODE, o);
        return;
    }
    m->st.restarts++;
    m->attempt++;
    rcp_lk_drop_pred_watch(m);
    rcp_lk_drop_own_watch(m);
    free(m->node);
    m->node = NULL;
    m->czxid = 0;
    send_create(m, o);
}

static void on_parents(int rc, void *data)
{
    struct rcp_ctx *x = data;
    struct tb_mutex *m = x->m;
    struct rcp_out o = {0};

    if (!rcp_ctx_enter(x)) {
        rcp_ctx_leave(x, &o);
        return;
    }
    if (m->abort_rc != 0)
        rcp_lk_fail(m, m->abort_rc, &o);
    else if (rc == 0 || rc == TB_ECONNECTIONLOSS || rc == TB_ENONODE)
        send_create(m, &o); /* NoNode: a level reaped meanwhile (counted) */
    else if (!rcp_lk_refuse_ephemeral(m, rc, 1, &o))
        rcp_lk_fail(m, rc, &o);
    rcp_ctx_leave(x, &o);
}

static void on_create(struct tb_client *c, int rc, const char *path,
                      const struct tb_stat *st, void *data)
{
    struct rcp_ctx *x = data;
    struct tb_mutex *m = x->m;
    struct rcp_out o = {0};

    (void)c;
    if (!rcp_ctx_enter(x)) {
        if (rc == 0) /* cannot happen: a give-up waits for this reply */
            rcp_reap(m->c, path, m->cfg->fair ? 0 : st->czxid, 0, NULL, NULL);
        rcp_ctx_leave(x, &o);
        return;
    }
    switch (rc) {
    case TB_OK:
        m->node = rcp_strdup(path);
        m->czxid = st->czxid;
        if (m->node == NULL)
            rcp_reap(m->c, path, rcp_lk_shared_czxid(m), 0, NULL, NULL);
        if (m->node == NULL || m->abort_rc != 0)
            rcp_lk_fail(m, m->node == NULL ? TB_ENOMEM : m->abort_rc, &o);
        else
            send_check(m, &o);
        break;
    case TB_ENONODE: { /* the parent is missing: make it, then again */
        struct rcp_ctx *y;
        if (m->abort_rc != 0 || ++m->parent_tries > RCP_PARENT_TRIES) {
            rcp_lk_fail(m, m->abort_rc ? m->abort_rc : rc, &o);
            break;
        }
        m->phase = LK_PARENTS;
        y = rcp_ctx_new(m);
        /* Lock-delay keeps its record in PATH's data: a container would
         * be reaped with it once the lock empties. */
        submitted(m,
                  y ? rcp_mkparents(m->c, m->parent,
                                    m->lock_delay_ms > 0 ? TB_PERSISTENT
                                                         : TB_CONTAINER,
                                    on_parents, y)
                    : TB_ENOMEM,
                  y, &o);
        break;
    }
    case TB_ENODEEXISTS: /* non-fair only: somebody holds PATH */
        /* After a lost reply it may be us: that create, applied after
         * FINDING looked, or after a wait began.  Read PATH then; a
         * plain wait would be on our own node. */
        if (m->abort_rc != 0)
            rcp_lk_fail(m, m->abort_rc, &o);
        else if (m->try_only || m->create_lost)
            send_find(m, &o); /* whose is it? (its data says) */
        else
            wait_holder(m, &o);
        break;
    case TB_ECONNECTIONLOSS:
        m->create_lost = 1;
        send_find(m, &o);
        break;
    default:
        if (!rcp_lk_refuse_ephemeral(m, rc, 0, &o))
            rcp_lk_fail(m, rc, &o);
    }
    rcp_ctx_leave(x, &o);
}

static void send_create(struct tb_mutex *m, struct rcp_out *o)
{
    struct rcp_ctx *x = rcp_ctx_new(m);
    char *path;
    int rv;

    m->phase = LK_CREATING;
    if (x == NULL) {
        rcp_lk_fail(m, TB_ENOMEM, o);
        return;
    }
    m->st.creates++;
    if (m->cfg->fair) {
        path = rcp_join(m->parent, m->prefix);
        rv = path == NULL ? TB_ENOMEM
                          : tb_create(m->c, path, m->value, m->len, NULL,
                                      TB_EPHEMERAL_SEQUENTIAL, 0, on_create, x);
        free(path);
    } else {
        rv = tb_create(m->c, m->path, m->value, m->len, NULL, TB_EPHEMERAL, 0,
                       on_create, x);
    }
    submitted(m, rv, x, o);
}

/* ---- FINDING: was the create with the lost reply made? ---- */

static void found(struct tb_mutex *m, const char *path, struct rcp_out *o)
{
    m->st.recoveries++;
    m->node = rcp_strdup(path);
    if (m->node == NULL) {
        rcp_reap(m->c, path, 0, 0, NULL, NULL);
        rcp_lk_fail(m, TB_ENOMEM, o);
    } else if (m->abort_rc != 0) {
        rcp_lk_fail(m, m->abort_rc, o);
    } else {
        send_check(m, o);
    }
}

static void on_find_children(struct tb_client *c, int rc,
                             const struct tb_strings *v,
                             const struct tb_stat *st, void *data)
{
    struct rcp_ctx *x = data;
    struct tb_mutex *m = x->m;
    struct rcp_out o = {0};
    size_t plen;
    int i;

    (void)c;
    (void)st;
    if (!rcp_ctx_enter(x)) {
        rcp_ctx_leave(x, &o);
        return;
    }
    plen = strlen(m->prefix);
    if (rc == TB_ECONNECTIONLOSS) {
        send_find(m, &o);
    } else if (rc == TB_ENONODE) { /* no parent: nothing was made */
        if (m->abort_rc != 0)
            rcp_lk_fail(m, m->abort_rc, &o);
        else
            send_create(m, &o);
    } else if (rc != 0) {
        rcp_lk_fail(m, rc, &o);
    } else {
        for (i = 0; i < v->count; i++)
            if (strncmp(v->v[i], m->prefix, plen) == 0)
                break;
        if (i < v->count) {
            char *p = rcp_join(m->parent, v->v[i]);
            if (p == NULL)
                rcp_lk_fail(m, TB_ENOMEM, &o);
            else
                found(m, p, &o);
            free(p);
        } else if (m->abort_rc != 0) {
            rcp_lk_fail(m, m->abort_rc, &o);
        } else {
            send_create(m, &o);
        }
    }
    rcp_ctx_leave(x, &o);
}

static void on_find_data(struct tb_client *c, int rc, const void *value,
                         size_t len, const struct tb_stat *st, void *data)
{
    struct rcp_ctx *x = data;
    struct tb_mutex *m = x->m;
    struct rcp_out o = {0};
    size_t plen;

    (void)c;
    if (!rcp_ctx_enter(x)) {
        rcp_ctx_leave(x, &o);
        return;
    }
    plen = strlen(m->prefix);
    if (rc == TB_ECONNECTIONLOSS) {
        send_find(m, &o);
    } else if (rc == TB_ENONODE) {
        if (m->abort_rc != 0)
            rcp_lk_fail(m, m->abort_rc, &o);
        else
            send_create(m, &o);
    } else if (rc != 0) {
        rcp_lk_fail(m, rc, &o);
    } else if (len >= plen && memcmp(value, m->prefix, plen) == 0) {
        m->czxid = st->czxid; /* PATH is a name others use: ours is this */
        found(m, m->path, &o);
    } else if (m->abort_rc != 0) {
        rcp_lk_fail(m, m->abort_rc, &o);
    } else if (!rcp_lk_refuse_nonfair(m, st, &o)) {
        if (m->try_only)
            rcp_lk_fail(m, TB_ETIMEDOUT, &o);
        else
            wait_holder(m, &o);
    }
    rcp_ctx_leave(x, &o);
}

static void send_find(struct tb_mutex *m, struct rcp_out *o)
{
    struct rcp_ctx *x = rcp_ctx_new(m);
    int rv;

    m->phase = LK_FINDING;
    if (x == NULL) {
        rcp_lk_fail(m, TB_ENOMEM, o);
        return;
    }
    /* The server we came back to may lag the leader, which ordered the
     * lost create before this session came back (a create sent later
     * from the old connection is refused: the session moved).  A sync
     * first, which the read waits behind: else a read that misses our
     * node would leave it, made later, an orphan once we give up. */
    (void)tb_sync(m->c, m->cfg->fair ? m->parent : m->path, NULL, NULL);
    if (m->cfg->fair)
        rv = tb_get_children(m->c, m->parent, NULL, NULL, on_find_children, x);
    else
        rv = tb_get_data(m->c, m->path, NULL, NULL, on_find_data, x);
    submitted(m, rv, x, o);
}

/* ---- CHECKING: where are we in the queue? ---- */

/* Deletes other nodes carrying our uuid: made by a create whose reply
 * was lost and that the server applied only after we looked. */
static void reap_twins(struct tb_mutex *m, const struct tb_strings *v,
                       const char *mine)
{
    size_t plen = strlen(m->prefix);
    int i;

    for (i = 0; i < v->count; i++) {
        char *p;
        if (strncmp(v->v[i], m->prefix, plen) != 0 ||
            strcmp(v->v[i], mine) == 0)
            continue;
        p = rcp_join(m->parent, v->v[i]);
        if (p != NULL)
            rcp_reap(m->c, p, 0, 0, NULL, NULL);
        free(p);
    }
}

static void decide(struct tb_mutex *m, const struct tb_strings *v,
                   struct rcp_out *o)
{
    const char *mine = strrchr(m->node, '/') + 1;
    struct rcp_child *kids = malloc(((size_t)v->count + 1) * sizeof *kids);
    const char *other;
    int n, me, watch = -1, holds;

    if (kids == NULL) {
        rcp_lk_fail(m, TB_ENOMEM, o);
        return;
    }
    n = rcp_children_sort(v, m->cfg->kinds, kids, &other);
    for (me = 0; me < n; me++)
        if (strcmp(kids[me].name, mine) == 0)
            break;
    reap_twins(m, v, mine);
    if (rcp_lk_refuse_children(m, other, o)) {
        free(kids);
        return;
    }
    if (me == n) { /* our node is gone (deleted by someone) */
        free(kids);
        rcp_lk_restart(m, o);
        return;
    }
    if ((holds = m->cfg->pred(m, kids, n, me, &watch)) < 0) {
        free(kids);
        rcp_lk_fail(m, holds, o);
        return;
    }
    if (holds) {
        free(kids);
        if (m->czxid == 0 || m->own_w == NULL) /* own exists failed */
            send_check(m, o);
        else
            rcp_lk_hold(m, o);
        return;
    }
    if (m->try_only) {
        free(kids);
        rcp_lk_fail(m, TB_ETIMEDOUT, o);
        return;
    }
    if (watch < 0) { /* the getChildren already set the parent watch */
        free(kids);
        waiting(m);
        return;
    }
    watch_pred(m, kids[watch].name, o);
    free(kids);
}

static void on_children(struct tb_client *c, int rc, const struct tb_strings *v,
                        const struct tb_stat *st, void *data)
{
    struct rcp_ctx *x = data;
    struct tb_mutex *m = x->m;
    struct rcp_out o = {0};

    (void)c;
    (void)st;
    if (!rcp_ctx_enter(x)) {
        rcp_lk_settle_watch(x, rc == 0);
        rcp_ctx_leave(x, &o);
        return;
    }
    rcp_lk_settle_watch(x, rc == 0);
    if (m->phase != LK_CHECKING) {
        rcp_ctx_leave(x, &o);
        return;
    }
    if (rc == TB_ECONNECTIONLOSS)
        send_check(m, &o);
    else if (rc == TB_ENONODE)
        rcp_lk_restart(m, &o);
    else if (rc != 0)
        rcp_lk_fail(m, rc, &o);
    else
        decide(m, v, &o);
    rcp_ctx_leave(x, &o);
}

static void send_check(struct tb_mutex *m, struct rcp_out *o)
{
    struct rcp_ctx *x;
    int rv;

    m->phase = LK_CHECKING;
    if (m->own_w == NULL && (rv = rcp_lk_watch_own(m)) != 0) {
        rcp_lk_fail(m, rv, o);
        return;
    }
    if (!m->cfg->fair)
        return; /* the own-node exists reply decides */
    x = rcp_ctx_new(m);
    if (x == NULL) {
        rcp_lk_fail(m, TB_ENOMEM, o);
        return;
    }
    m->st.children_reads++;
    if (m->cfg->children_watch) {
        char *pp = rcp_strdup(m->parent);
        x->w = pp != NULL ? rcp_ctx_new(m) : NULL;
        if (x->w == NULL) {
            free(pp);
            rcp_ctx_free_locked(x);
            rcp_lk_fail(m, TB_ENOMEM, o);
            return;
        }
        rcp_lk_drop_pred_watch(m);
        free(m->pred_path);
        m->pred_path = pp;
        m->pred_children = 1;
        m->gen++;
        x->w->gen = m->gen;
        m->pred_w = x->w;
        m->st.watches_set++;
        rv = tb_get_children(m->c, m->parent, children_watch_cb, x->w,
                             on_children, x);
        if (rv != 0) {
            m->pred_w = NULL;
            rcp_ctx_free_locked(x->w);
        }
    } else {
        rv = tb_get_children(m->c, m->parent, NULL, NULL, on_children, x);
    }
    submitted(m, rv, x, o);
}

/* ---- waiting for the node ahead (or the parent's children) ---- */

/* After an operation that carried x->w: frees the watch context unless
 * the server set the watch (then its final call frees it). */
void rcp_lk_settle_watch(struct rcp_ctx *x, int set)
{
    struct tb_mutex *m = x->m;
    struct rcp_ctx *w = x->w;

    if (w == NULL)
        return;
    x->w = NULL;
    if (set)
        return; /* registered: its final call frees it */
    if (m->pred_w == w)
        m->pred_w = NULL;
    if (m->own_w == w)
        m->own_w = NULL;
    rcp_ctx_free_locked(w);
}

/* What a wake-up leads to: the fair engine looks at the queue again, the
 * non-fair one races to create the node again. */
static void recheck(struct tb_mutex *m, struct rcp_out *o)
{
    if (m->cfg->fair)
        send_check(m, o);
    else
        send_create(m, o);
}

static void on_pred_stat(struct tb_client *c, int rc, const struct tb_stat *st,
                         void *data)
{
    struct rcp_ctx *x = data;
    struct tb_mutex *m = x->m;
    struct rcp_out o = {0};
    int set = rc == 0 || rc == TB_ENONODE;

    (void)c;
    if (!rcp_ctx_enter(x) || m->phase != LK_WATCHING) {
        rcp_lk_settle_watch(x, set);
        rcp_ctx_leave(x, &o);
        return;
    }
    rcp_lk_settle_watch(x, set);
    if (rc == 0) {
        if (m->cfg->fair || !rcp_lk_refuse_nonfair(m, st, &o))
            waiting(m);
    } else if (rc == TB_ENONODE) { /* gone already: no wait */
        rcp_lk_drop_pred_watch(m); /* the watch for its creation */
        recheck(m, &o);
    } else if (rc == TB_ECONNECTIONLOSS) {
        recheck(m, &o);
    } else {
        rcp_lk_fail(m, rc, &o);
    }
    rcp_ctx_leave(x, &o);
}

static void send_watch(struct tb_mutex *m, char *path, struct rcp_out *o)
{
    struct rcp_ctx *x, *w;
    int rv;

    rcp_lk_drop_pred_watch(m);
    free(m->pred_path);
    m->pred_path = path;
    m->pred_children = 0;
    m->gen++;
    m->phase = LK_WATCHING;
    x = rcp_ctx_new(m);
    w = x != NULL ? rcp_ctx_new(m) : NULL;
    if (w == NULL) {
        if (x != NULL)
            rcp_ctx_free_locked(x);
        rcp_lk_fail(m, TB_ENOMEM, o);
        return;
    }
    x->w = w;
    m->pred_w = w;
    m->st.watches_set++;
    rv = tb_exists(m->c, path, pred_watch_cb, w, on_pred_stat, x);
    if (rv != 0) {
        m->pred_w = NULL;
        rcp_ctx_free_locked(w);
    }
    submitted(m, rv, x, o);
}

static void watch_pred(struct tb_mutex *m, const char *name, struct rcp_out *o)
{
    char *path = rcp_join(m->parent, name);

    if (path == NULL)
        rcp_lk_fail(m, TB_ENOMEM, o);
    else
        send_watch(m, path, o);
}

static void wait_holder(struct tb_mutex *m, struct rcp_out *o)
{
    char *path = rcp_strdup(m->path);

    if (path == NULL)
        rcp_lk_fail(m, TB_ENOMEM, o);
    else
        send_watch(m, path, o);
}

static int node_event(const struct tb_event *ev)
{
    return ev->type >= TB_EVENT_CREATED &&
           ev->type <= TB_EVENT_CHILDREN_CHANGED;
}

/* Every call of a one-shot watcher is its last: the context ends here. */
static void wait_event(struct rcp_ctx *x, const struct tb_event *ev)
{
    struct tb_mutex *m = x->m;
    struct rcp_out o = {0};
    int current;

    pthread_mutex_lock(m->mu);
    if (m->pred_w == x)
        m->pred_w = NULL;
    current =
        x->attempt == m->attempt && x->gen == m->gen && m->phase == LK_WAITING;
    if (node_event(ev))
        m->st.wakeups++; /* stale ones too: the server sent them */
    if (current && node_event(ev)) {
        recheck(m, &o);
    } else if (current && ev->type == TB_EVENT_NONE &&
               rcp_lk_session_over(ev->rc)) {
        rcp_lk_fail(m, ev->rc, &o);
    }
    rcp_ctx_leave(x, &o);
}

static void pred_watch_cb(struct tb_client *c, const struct tb_event *ev,
                          void *wdata)
{
    (void)c;
    wait_event(wdata, ev);
}

static void children_watch_cb(struct tb_client *c, const struct tb_event *ev,
                              void *wdata)
{
    (void)c;
    wait_event(wdata, ev);
}

/* Non-fair node data: our uuid prefix, then the user's data, so FINDING
 * can tell our node from another holder's. */
static int nonfair_value(struct tb_mutex *m)
{
    size_t plen = strlen(m->prefix);
    char *v = malloc(plen + m->ulen + 1);

    if (v == NULL)
        return TB_ENOMEM;
    memcpy(v, m->prefix, plen);
    if (m->ulen > 0)
        memcpy(v + plen, m->uvalue, m->ulen);
    if (m->value != m->uvalue)
        free(m->value);
    m->value = v;
    m->len = plen + m->ulen;
    return 0;
}

/* Non-fair, CHECKING: the exists on the node we created failed. */
void rcp_lk_recheck_own(struct tb_mutex *m, int rc, struct rcp_out *o)
{
    if (rc == TB_ENONODE)
        rcp_lk_restart(m, o);
    else
        send_check(m, o);
}

/* ---- held: the acquisition's end ---- */

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

/* ---- starting and giving up ---- */

/* The acquisition's deadline: given up, if it is still the acquisition
 * the timer was armed for (checked and done under one hold of the lock:
 * a callback may have started the next one meanwhile). */
void rcp_lk_on_timer(struct rcp_timer *t, unsigned tag)
{
    struct tb_mutex *m = TB_CONTAINER_OF(t, struct tb_mutex, timer);
    struct rcp_out o = {0};

    pthread_mutex_lock(m->mu);
    if (tag == m->acq_id)
        rcp_lk_abort_locked(m, TB_ETIMEDOUT, &o);
    pthread_mutex_unlock(m->mu);
    rcp_out_fire(&o);
    rcp_lk_unref(m); /* the timer's */
}

int rcp_lk_start(struct tb_mutex *m, int timeout_ms, tb_acquire_cb cb,
                 void *data)
{
    struct rcp_out o = {0};
    size_t nlen = strlen(m->cfg->name);
    char *prefix = malloc(sizeof RCP_PREFIX + RCP_UUID_LEN + 1 + nlen);
    int rv;

    if (prefix == NULL)
        return TB_ENOMEM;
    rcp_uuid(m->uuid);
    if (m->cfg->fair)
        sprintf(prefix, RCP_PREFIX "%s-%s", m->uuid, m->cfg->name);
    else
        sprintf(prefix, RCP_PREFIX "%s", m->uuid);
    free(m->prefix);
    m->prefix = prefix;
    if (!m->cfg->fair && (rv = nonfair_value(m)) != 0)
        return rv;
    rcp_lk_clear_conflict(m);
    m->acq_id++;
    m->attempt++;
    m->acb = cb;
    m->adata = data;
    m->try_only = timeout_ms == 0;
    m->create_lost = 0;
    m->abort_rc = 0;
    m->parent_tries = 0;
    m->restarts = 0;
    m->czxid = 0;
    m->lstate = TB_LOCK_ACQUIRING;
    send_create(m, &o);
    if (m->phase != LK_CREATING) { /* refused at once: no callback */
        m->acb = NULL;
        m->lstate = TB_LOCK_UNLOCKED;
        return o.arc != 0 ? o.arc : TB_ESYSTEM;
    }
    if (timeout_ms > 0) {
        rcp_lk_ref(m);
        if (rcp_timer_arm(&m->timer, rcp_now_ms() + timeout_ms, m->acq_id)) {
            rcp_lk_unref_locked(m);
            m->abort_rc = TB_ESYSTEM; /* no timer thread: the reply to
                                         the create ends it */
        }
    }
    return 0;
}

static void on_deferred(struct tb_client *c, int rc, const struct tb_stat *st,
                        void *data)
{
    struct rcp_ctx *x = data;
    struct rcp_out o = {0};

    (void)c;
    (void)rc;
    (void)st;
    rcp_ctx_enter(x);
    rcp_lk_finish(x->m, x->m->abort_rc, &o);
    rcp_ctx_leave(x, &o);
}

/* A give-up from a thread other than the callback thread, with no node to
 * delete (a non-fair waiter): one cheap request carries the callback to
 * the callback thread, where every recipe callback runs. */
static void defer_fail(struct tb_mutex *m, struct rcp_out *o)
{
    struct rcp_ctx *x;

    m->attempt++;
    rcp_lk_drop_pred_watch(m);
    m->phase = LK_ABORTING;
    x = rcp_ctx_new(m);
    if (x == NULL ||
        tb_exists(m->c, m->parent, NULL, NULL, on_deferred, x) != 0) {
        if (x != NULL)
            rcp_ctx_free_locked(x);
        rcp_lk_finish(m, m->abort_rc, o);
    }
}

int rcp_lk_abort_locked(struct tb_mutex *m, int rc, struct rcp_out *o)
{
    if (m->acb == NULL || m->phase == LK_ABORTING || m->abort_rc != 0)
        return TB_EINVAL;
    m->abort_rc = rc;
    switch (m->phase) {
    case LK_CREATING:
    case LK_PARENTS:
    case LK_FINDING:
        break; /* the reply in flight decides what there is to delete */
    default:
        if (m->node == NULL && !m->c_closed)
            defer_fail(m, o);
        else
            rcp_lk_fail(m, rc, o);
    }
    return 0;
}

int rcp_lk_abort(struct tb_mutex *m, int rc)
{
    struct rcp_out o = {0};
    int rv;

    pthread_mutex_lock(m->mu);
    rv = rcp_lk_abort_locked(m, rc, &o);
    pthread_mutex_unlock(m->mu);
    rcp_out_fire(&o);
    return rv;
}
