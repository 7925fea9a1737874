/* Distributed queues on kazoo's layouts, FIFO within a priority.
 *
 *   simple    PATH/entry-<prio>-<seq>            kazoo Queue
 *   locking   PATH/entries/entry-<prio>-<seq>    kazoo LockingQueue
 *             PATH/taken/entry-<prio>-<seq>      EPHEMERAL claim, data: our id
 *
 * <prio> is three digits, lower first (kazoo's default 100); names sort
 * by priority, then by the sequence number, which is the order of puts.
 *
 * Simple take: read the first entry, then delete it; the one taker whose
 * delete succeeds has it (exactly one taker per item), and a taker that
 * dies between reading and deleting leaves the item for the next.  An
 * item deleted but not yet processed is lost with its taker (at most
 * once), and a delete whose reply is lost may or may not have taken the
 * item: TB_ECONNECTIONLOSS, never handed out twice.
 *
 * Locking take: claim the first unclaimed entry with an ephemeral node
 * under taken/ (the create succeeds for one taker only), then read it;
 * consume deletes entry and claim in one multi, release deletes the
 * claim.  A claimer that dies loses its claim with its session and the
 * item is taken again: at least once, nothing lost.
 *
 * The queue's own nodes are persistent, as kazoo makes them: containers
 * would vanish under a taker waiting on an empty queue.  A take that finds
 * nothing waits for the children of the entries (and, locking, of the
 * claims: a released claim frees an item) to change: every put wakes
 * every waiting taker, who race for it (the herd is the queue's nature:
 * which taker gets the item is decided by the delete or the claim). */
#include <stdio.h>
#include <string.h>

#include "recipes/queue.h"

/* ---- the handle ---- */

static void q_free(struct tb_dqueue *q)
{
    pthread_mutex_destroy(&q->mu);
    free(q->path);
    free(q->entries);
    free(q->taken);
    free(q->claimed);
    free(q);
}

void rcp_q_unref(struct tb_dqueue *q)
{
    if (rcp_unref(&q->mu, &q->refs))
        q_free(q);
}

int tb_dqueue_new(struct tb_dqueue **out, struct tb_client *c, const char *path,
                  int kind)
{
    struct tb_dqueue *q;

    if (out == NULL || c == NULL || !rcp_path_ok(path) || path[1] == '\0' ||
        (kind != TB_QUEUE_SIMPLE && kind != TB_QUEUE_LOCKING))
        return TB_EINVAL;
    q = calloc(1, sizeof *q);
    if (q == NULL)
        return TB_ENOMEM;
    pthread_mutex_init(&q->mu, NULL);
    q->refs = 1;
    q->c = c;
    q->locking = kind == TB_QUEUE_LOCKING;
    rcp_uuid(q->id);
    q->path = rcp_strdup(path);
    q->entries = q->locking ? rcp_join(path, "entries") : rcp_strdup(path);
    q->taken = q->locking ? rcp_join(path, "taken") : NULL;
    if (q->path == NULL || q->entries == NULL ||
        (q->locking && q->taken == NULL)) {
        q_free(q);
        return TB_ENOMEM;
    }
    *out = q;
    return 0;
}

/* ---- the queue's own nodes ---- */

struct mk {
    struct tb_dqueue *q;
    int parent_tries;
    tb_done_cb done;
    void *data;
};

static int send_ancestors(struct mk *k);

static void mk_end(struct mk *k, int rc)
{
    k->done(rc, k->data);
    free(k);
}

static void made(int rc, void *data)
{
    struct mk *k = data;

    /* NoNode: an ancestor reaped before the queue's node was made under
     * it (the server reaps emptied containers whenever it looks). */
    if (rc == TB_ENONODE && ++k->parent_tries <= RCP_PARENT_TRIES &&
        (rc = send_ancestors(k)) == 0)
        return;
    if (rc == 0) {
        pthread_mutex_lock(&k->q->mu);
        k->q->paths_made = 1;
        pthread_mutex_unlock(&k->q->mu);
    }
    mk_end(k, rc);
}

static void on_made(struct tb_client *c, int rc, const char *path,
                    const struct tb_stat *st, void *data)
{
    (void)path;
    (void)st;
    (void)c;
    rcp_fan_answer(data, rc == TB_ENODEEXISTS ? 0 : rc);
}

/* Sends the creates of PATH (and entries/, taken/), pipelined: each finds
 * its parent made by the one before.  An error if none could be sent. */
static int send_paths(struct mk *k)
{
    struct tb_dqueue *q = k->q;
    const char *p[3] = {q->path, q->entries, q->taken};
    struct rcp_fan *f = rcp_fan_begin(made, k);
    int i, n = q->locking ? 3 : 1, rv = 0;

    if (f == NULL)
        return TB_ENOMEM;
    for (i = 0; i < n && rv == 0; i++)
        rv = rcp_fan_sent(f, tb_create(q->c, p[i], NULL, 0, NULL,
                                       TB_PERSISTENT, 0, on_made, f));
    return rcp_fan_end(f);
}

static void on_ancestors(int rc, void *data)
{
    struct mk *k = data;

    /* NoNode: a level reaped meanwhile; PATH's create finds out. */
    if (rc == 0 || rc == TB_ENONODE)
        rc = send_paths(k);
    if (rc != 0)
        mk_end(k, rc);
}

/* PATH's ancestors as containers, then PATH's own nodes. */
static int send_ancestors(struct mk *k)
{
    char *parent = rcp_dirname(k->q->path);
    int rv;

    if (parent == NULL)
        return TB_ENOMEM;
    rv = strcmp(parent, "/") == 0
             ? send_paths(k)
             : rcp_mkparents(k->q->c, parent, TB_CONTAINER, on_ancestors, k);
    free(parent);
    return rv;
}

/* Makes PATH (and entries/, taken/) persistent, its ancestors as
 * containers, once per handle: 1 if made already, else 0 and `done`
 * later, or an error now. */
int rcp_q_make_paths(struct tb_dqueue *q, tb_done_cb done, void *data)
{
    struct mk *k;
    int rv;

    if (q->paths_made)
        return 1;
    if ((k = calloc(1, sizeof *k)) == NULL)
        return TB_ENOMEM;
    k->q = q;
    k->done = done;
    k->data = data;
    if ((rv = send_ancestors(k)) != 0)
        free(k);
    return rv;
}

/* ---- put ---- */

struct put {
    struct tb_dqueue *q;
    char *node;
    void *value;
    size_t len;
    tb_done_cb cb;
    void *data;
};

static void put_end(struct put *p, int rc)
{
    if (p->cb != NULL)
        p->cb(rc, p->data);
    rcp_q_unref(p->q);
    free(p->node);
    free(p->value);
    free(p);
}

static void on_put(struct tb_client *c, int rc, const char *path,
                   const struct tb_stat *st, void *data)
{
    (void)path;
    (void)st;
    (void)c;
    put_end(data, rc);
}

static void put_send(int rc, void *data)
{
    struct put *p = data;

    if (rc == 0)
        rc = tb_create(p->q->c, p->node, p->value, p->len, NULL,
                       TB_PERSISTENT_SEQUENTIAL, 0, on_put, p);
    if (rc != 0)
        put_end(p, rc);
}

int tb_dqueue_put(struct tb_dqueue *q, const void *value, size_t len,
                  int priority, tb_done_cb cb, void *data)
{
    char name[32];
    struct put *p;
    int rv;

    if (q == NULL || priority < -1 || priority > 999 ||
        (value == NULL && len > 0))
        return TB_EINVAL;
    snprintf(name, sizeof name, PREFIX "%03d-", priority < 0 ? 100 : priority);
    p = calloc(1, sizeof *p);
    if (p == NULL || (p->node = rcp_join(q->entries, name)) == NULL ||
        (len > 0 && (p->value = malloc(len)) == NULL)) {
        if (p != NULL)
            free(p->node);
        free(p);
        return TB_ENOMEM;
    }
    if (len > 0)
        memcpy(p->value, value, len);
    p->q = q;
    p->len = len;
    p->cb = cb;
    p->data = data;
    pthread_mutex_lock(&q->mu);
    q->refs++;
    rv = rcp_q_make_paths(q, put_send, p);
    if (rv == 1)
        rv = tb_create(q->c, p->node, p->value, p->len, NULL,
                       TB_PERSISTENT_SEQUENTIAL, 0, on_put, p);
    if (rv != 0)
        q->refs--;
    pthread_mutex_unlock(&q->mu);
    if (rv != 0) {
        free(p->node);
        free(p->value);
        free(p);
    }
    return rv;
}

/* ---- consume and release (locking) ---- */

struct fin {
    struct tb_dqueue *q;
    char *taken;     /* the claim */
    int64_t czxid;   /* its create's */
    int64_t session; /* that made it */
    tb_done_cb cb;
    void *data;
};

static void consumed(struct fin *f, int rc)
{
    if (f->cb != NULL)
        f->cb(rc == TB_ENONODE ? TB_ELOCKLOST : rc, f->data);
    rcp_q_unref(f->q);
    free(f->taken);
    free(f);
}

/* The claim after a consume lost with the connection: the multi and the
 * reaper's delete each delete it, so exactly one of them does.  Gone
 * already, the consume was applied (0); deleted now, it was not, and the
 * item is back in the queue (TB_ECONNECTIONLOSS, as its loss said).  The
 * session ended first: the outcome is not known. */
static void reaped(int rc, void *data)
{
    consumed(data, rc == TB_ENONODE ? 0 : rc == 0 ? TB_ECONNECTIONLOSS : rc);
}

static void on_consumed(struct tb_client *c, int rc,
                        const struct tb_op_result *r, int n, void *data)
{
    struct fin *f = data;

    (void)r;
    (void)n;
    /* Lost with the connection, applied or not: the claim goes back (the
     * reaper keeps at it across reconnects), else an item not consumed
     * would stay claimed by nobody until the session ends, and what the
     * reaper finds says which it was.  Only while the session that
     * claimed lives: the claim's name is the item's, and anyone's once
     * ours is gone. */
    if (rc == TB_ECONNECTIONLOSS && tb_client_session(c, NULL) == f->session &&
        rcp_reap(c, f->taken, f->czxid, 1, reaped, f) == 0)
        return;
    /* Refused (the entry not ours to delete, say): nothing changed, and
     * the claim goes back, else it hid the item until the session ended
     * with nobody to release it. */
    if (rc != 0 && tb_client_session(c, NULL) == f->session)
        (void)rcp_reap(c, f->taken, f->czxid, 0, NULL, NULL);
    /* Refused as expired: the claim went with the session. */
    consumed(f, rc == TB_ESESSIONEXPIRED ? TB_ELOCKLOST : rc);
}

int tb_dqueue_consume(struct tb_dqueue *q, tb_done_cb cb, void *data)
{
    struct tb_multi *m;
    struct fin *f;
    char *e = NULL, *t = NULL;
    int rv = TB_ENOMEM;

    if (q == NULL)
        return TB_EINVAL;
    pthread_mutex_lock(&q->mu);
    if (q->claimed == NULL || q->busy) {
        pthread_mutex_unlock(&q->mu);
        return TB_ENOTHELD;
    }
    /* The claim went with the session that made it: taken/X, if there,
     * is another taker's now (the item's name is the claim's), and the
     * deletes would take the item from under it. */
    if (tb_client_session(q->c, NULL) != q->claimed_session) {
        free(q->claimed);
        q->claimed = NULL;
        pthread_mutex_unlock(&q->mu);
        return TB_ELOCKLOST;
    }
    m = tb_multi_new();
    f = calloc(1, sizeof *f);
    e = rcp_join(q->entries, q->claimed);
    t = rcp_join(q->taken, q->claimed);
    if (m != NULL && f != NULL && e != NULL && t != NULL &&
        tb_multi_delete(m, e, -1) == 0 && tb_multi_delete(m, t, -1) == 0) {
        f->q = q;
        f->taken = t;
        t = NULL;
        f->czxid = q->claimed_czxid;
        f->session = tb_client_session(q->c, NULL);
        f->cb = cb;
        f->data = data;
        rv = tb_multi_exec(q->c, m, on_consumed, f);
    }
    if (rv == 0 || rv == TB_ESESSIONEXPIRED) { /* the claim went with it */
        q->refs += rv == 0;
        free(q->claimed); /* the consume, or its callback, ends it */
        q->claimed = NULL;
        rv = rv == 0 ? 0 : TB_ELOCKLOST;
    }
    if (rv != 0) {
        if (f != NULL)
            free(f->taken);
        free(f);
    }
    pthread_mutex_unlock(&q->mu);
    tb_multi_free(m);
    free(e);
    free(t);
    return rv;
}

int tb_dqueue_release(struct tb_dqueue *q)
{
    char *t;
    int rv;

    if (q == NULL)
        return TB_EINVAL;
    pthread_mutex_lock(&q->mu);
    if (q->claimed == NULL || q->busy) {
        pthread_mutex_unlock(&q->mu);
        return TB_ENOTHELD;
    }
    t = rcp_join(q->taken, q->claimed);
    rv = t == NULL ? TB_ENOMEM
                   : rcp_reap(q->c, t, q->claimed_czxid, 0, NULL, NULL);
    free(t);
    free(q->claimed);
    q->claimed = NULL;
    pthread_mutex_unlock(&q->mu);
    return rv;
}

void tb_dqueue_free(struct tb_dqueue *q)
{
    if (q == NULL)
        return;
    /* First: a take in flight may end between the give-up and the
     * release, and its claim must go back too (op_end). */
    pthread_mutex_lock(&q->mu);
    q->freed = 1;
    pthread_mutex_unlock(&q->mu);
    rcp_q_give_up(q, TB_ECANCELED);
    tb_dqueue_release(q); /* a claim not consumed goes back */
    rcp_q_unref(q);
}

/* ---- synchronous forms ---- */

struct item_wait {
    struct rcp_wait w;
    void *v;
    size_t len;
    struct tb_dqueue *q;
    int op;
};

static void on_item(int rc, const void *value, size_t len, void *data)
{
    struct item_wait *iw = data;

    if (rc == 0) {
        iw->v = malloc(len + 1); /* a spare NUL, as tb_get_data_sync's */
        if (iw->v == NULL) {
            rc = TB_ENOMEM;
        } else {
            memcpy(iw->v, value, len);
            ((char *)iw->v)[len] = '\0';
            iw->len = len;
        }
    }
    rcp_wait_done(&iw->w, rc, 0, NULL);
}

static void sync_give_up(void *arg)
{
    rcp_q_give_up(((struct item_wait *)arg)->q, TB_ETIMEDOUT);
}

static int item_start(void *arg, int timeout_ms, struct rcp_wait *w)
{
    struct item_wait *iw = arg;

    (void)w; /* iw->w: on_item completes it */
    return rcp_q_op_start(iw->q, iw->op, timeout_ms, on_item, iw);
}

static int item_sync(struct tb_dqueue *q, int op, int timeout_ms, void **value,
                     size_t *len)
{
    struct item_wait iw = {.v = NULL, .len = 0, .q = q, .op = op};
    int rv;

    if (q == NULL || value == NULL)
        return TB_EINVAL;
    rv = rcp_sync_run(q->c, &iw.w, timeout_ms, item_start, sync_give_up, &iw);
    *value = rv == 0 ? iw.v : NULL;
    if (rv != 0)
        free(iw.v);
    if (len != NULL)
        *len = rv == 0 ? iw.len : 0;
    return rv;
}

int tb_dqueue_take_sync(struct tb_dqueue *q, int timeout_ms, void **value,
                        size_t *len)
{
    return item_sync(q, Q_TAKE, timeout_ms, value, len);
}

int tb_dqueue_peek_sync(struct tb_dqueue *q, void **value, size_t *len)
{
    return item_sync(q, Q_PEEK, -1, value, len);
}

struct put_wait {
    struct tb_dqueue *q;
    int put;
    const void *v;
    size_t len;
    int priority;
};

static int done_start(void *arg, int timeout_ms, struct rcp_wait *w)
{
    struct put_wait *p = arg;

    (void)timeout_ms;
    return p->put ? tb_dqueue_put(p->q, p->v, p->len, p->priority,
                                  rcp_wait_done_cb, w)
                  : tb_dqueue_consume(p->q, rcp_wait_done_cb, w);
}

static int done_sync(struct tb_dqueue *q, int put, const void *v, size_t len,
                     int priority)
{
    struct put_wait p = {q, put, v, len, priority};
    struct rcp_wait w;

    if (q == NULL)
        return TB_EINVAL;
    return rcp_sync_run(q->c, &w, -1, done_start, NULL, &p);
}

int tb_dqueue_put_sync(struct tb_dqueue *q, const void *value, size_t len,
                       int priority)
{
    return done_sync(q, 1, value, len, priority);
}

int tb_dqueue_consume_sync(struct tb_dqueue *q)
{
    return done_sync(q, 0, NULL, 0, 0);
}
