/* The double barrier: Curator's DistributedDoubleBarrier, on its layout.
 *
 *   PATH/<uuid>   EPHEMERAL, one per member that entered
 *   PATH/ready    PERSISTENT, made by the member whose arrival makes N
 *
 * Enter: create our node; if PATH then has N members, create "ready";
 * else wait until "ready" exists.  Leave (the ZooKeeper recipe, as
 * Curator does it): list the members (names sorted, "ready" aside); the
 * lowest waits until the highest is gone, every other deletes its node
 * and waits until the lowest is gone; look again after each wait; the
 * lowest deletes its node when it is the last, and whoever finds none
 * left deletes "ready".  Each waiter watches one node, so a departure
 * wakes one or two members, not all.
 *
 * The last one out deletes its node, then "ready", pipelined: in that
 * order, as a member entering meanwhile would count a node left standing
 * with "ready" gone.  A "ready" left behind would let the next round's
 * first member through enter alone, so after a connection loss both
 * deletes are sent again (our node first) until the outcome is known
 * (Curator retries them too): the leave ends then, with an error only
 * if the session is gone.
 *
 * An operation runs as a chain of client callbacks on the handle, one at
 * a time.  A give-up (the deadline, free) is a flag each step looks at,
 * and ends the wait in progress; an enter given up deletes our node (the
 * reaper), a leave given up keeps it (the member has not left).  The last
 * step of a leave, those deletes, does not look: it runs to its end. */
#include <string.h>

#include "recipes/rcp.h"

#define READY "ready"

enum { OP_NONE, OP_ENTER, OP_LEAVE };

struct tb_dbarrier {
    pthread_mutex_t mu;
    int refs; /* the user's, and the operation's */
    int freed;
    struct tb_client *c;
    char *path, *ready;
    char *node; /* our member node, NULL when we have none */
    int members;
    int op;
    int gave_up;
    int64_t deadline; /* rcp_now_ms; < 0: none */
    struct rcp_nw *nw;
    tb_done_cb cb;
    void *data;
};

static void db_free(struct tb_dbarrier *b)
{
    pthread_mutex_destroy(&b->mu);
    free(b->path);
    free(b->ready);
    free(b->node);
    free(b);
}

static void unref(struct tb_dbarrier *b)
{
    if (rcp_unref(&b->mu, &b->refs))
        db_free(b);
}

static void drop_node(struct tb_dbarrier *b)
{
    if (b->node != NULL)
        rcp_reap(b->c, b->node, 0, 0, NULL, NULL);
    free(b->node);
    b->node = NULL;
}

/* Ends the operation (called with the lock held, which it releases). */
static void op_end(struct tb_dbarrier *b, int rc)
{
    tb_done_cb cb = b->cb;
    void *data = b->data;

    if (rc != 0 && b->op == OP_ENTER)
        drop_node(b);
    if (b->freed)
        drop_node(b);
    b->op = OP_NONE;
    b->cb = NULL;
    pthread_mutex_unlock(&b->mu);
    if (cb != NULL)
        cb(rc, data);
    unref(b);
}

/* The end of a step (lock held, released here): the operation goes on,
 * or ends with `rc`. */
static void step_done(struct tb_dbarrier *b, int rc)
{
    if (rc != 0)
        op_end(b, rc);
    else
        pthread_mutex_unlock(&b->mu);
}

/* Takes the lock for a step; 0 if the operation was given up (ended). */
static int step(struct tb_dbarrier *b)
{
    pthread_mutex_lock(&b->mu);
    if (b->gave_up == 0)
        return 1;
    op_end(b, b->gave_up);
    return 0;
}

static void on_waited(int rc, void *data);

/* Waits (lock held) for `path` to exist or be gone; the rest of the
 * time to the deadline, or until given up. */
static int wait_node(struct tb_dbarrier *b, const char *path, int want)
{
    return rcp_nw_start(b->c, path, want, rcp_ms_left(b->deadline), on_waited,
                        b, &b->nw);
}

/* ---- enter ---- */

static void on_ready(struct tb_client *c, int rc, const char *path,
                     const struct tb_stat *st, void *data)
{
    struct tb_dbarrier *b = data;

    (void)path;
    (void)st;
    pthread_mutex_lock(&b->mu);
    if (rc == TB_ECONNECTIONLOSS) { /* made or not, make it again */
        rc = tb_create(c, b->ready, NULL, 0, NULL, TB_PERSISTENT, 0, on_ready,
                       b);
        if (rc == 0) {
            pthread_mutex_unlock(&b->mu);
            return;
        }
    }
    op_end(b, rc == TB_ENODEEXISTS ? 0 : rc);
}

static int members(const struct tb_strings *v)
{
    int i, n = 0;

    for (i = 0; i < v->count; i++)
        n += strcmp(v->v[i], READY) != 0;
    return n;
}

/* The members, read again after a lost reply: behind a sync, as the
 * server we come back to may lag the one that made our node (a read
 * missing it would count one member short, and no one would make
 * "ready"). */
static int read_again(struct tb_dbarrier *b, tb_strings_cb cb)
{
    (void)tb_sync(b->c, b->path, NULL, NULL);
    return tb_get_children(b->c, b->path, NULL, NULL, cb, b);
}

static void on_enter_children(struct tb_client *c, int rc,
                              const struct tb_strings *v,
                              const struct tb_stat *st, void *data)
{
    struct tb_dbarrier *b = data;

    (void)st;
    if (!step(b))
        return;
    if (rc == TB_ECONNECTIONLOSS)
        rc = read_again(b, on_enter_children);
    else if (rc == 0 && members(v) >= b->members)
        rc = tb_create(c, b->ready, NULL, 0, NULL, TB_PERSISTENT, 0, on_ready,
                       b);
    else if (rc == 0)
        rc = wait_node(b, b->ready, 1);
    step_done(b, rc);
}

static int send_create(struct tb_dbarrier *b);

static void on_created(int rc, void *data)
{
    struct tb_dbarrier *b = data;

    pthread_mutex_lock(&b->mu);
    /* The name is ours alone: "exists" after a lost reply is our create. */
    if (rc == TB_ECONNECTIONLOSS)
        rc = send_create(b);
    else if (rc == 0 || rc == TB_ENODEEXISTS) {
        rc = b->gave_up;
        if (rc == 0)
            rc = tb_get_children(b->c, b->path, NULL, NULL, on_enter_children,
                                 b);
    }
    step_done(b, rc);
}

static int send_create(struct tb_dbarrier *b)
{
    return rcp_create_in(b->c, b->node, NULL, 0, TB_EPHEMERAL, on_created, b);
}

/* ---- leave ---- */

static int send_last(struct tb_dbarrier *b);

static void on_ready_gone(struct tb_client *c, int rc, void *data)
{
    struct tb_dbarrier *b = data;

    (void)c;
    pthread_mutex_lock(&b->mu);
    /* Either may have applied: both again, even if given up meanwhile. */
    if (rc == TB_ECONNECTIONLOSS) {
        rc = send_last(b);
        if (rc == 0) {
            pthread_mutex_unlock(&b->mu);
            return;
        }
    }
    /* Our node went before it, or with the session (ephemeral). */
    if (rc == 0 || rc == TB_ENONODE || rc == TB_ESESSIONEXPIRED ||
        rc == TB_ECLOSING || rc == TB_EAUTHFAILED) {
        free(b->node);
        b->node = NULL;
    }
    op_end(b, rc == TB_ENONODE ? 0 : rc);
}

/* The last one out (lock held): our node, if we still have one, then
 * "ready", on one connection and so in that order.  Not through the
 * reaper: its retry looks first, and "ready" sent again meanwhile would
 * go before our node. */
static int send_last(struct tb_dbarrier *b)
{
    int rv;

    if (b->node != NULL && (rv = tb_delete(b->c, b->node, -1, NULL, NULL)) != 0)
        return rv;
    return tb_delete(b->c, b->ready, -1, on_ready_gone, b);
}

static int by_name(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

/* One look at the members (lock held): 0 and a wait or the end started,
 * or an error. */
static int leave_look(struct tb_dbarrier *b, const struct tb_strings *v)
{
    const char *mine = b->node != NULL ? strrchr(b->node, '/') + 1 : NULL;
    char **m = calloc((size_t)v->count + 1, sizeof *m);
    char *target = NULL;
    int i, n = 0, me = -1, rv;

    if (m == NULL)
        return TB_ENOMEM;
    for (i = 0; i < v->count; i++)
        if (strcmp(v->v[i], READY) != 0)
            m[n++] = v->v[i];
    qsort(m, (size_t)n, sizeof *m, by_name);
    for (i = 0; i < n && mine != NULL; i++)
        if (strcmp(m[i], mine) == 0)
            me = i;
    if (mine != NULL && me < 0) {
        free(m); /* our node is gone: the session ended under us */
        free(b->node);
        b->node = NULL;
        return TB_ENONODE;
    }
    if (n == 0 || (n == 1 && me == 0)) {
        free(m); /* the last one out */
        return send_last(b);
    }
    if (me == 0) {
        target = rcp_join(b->path, m[n - 1]); /* wait for the highest */
    } else {
        drop_node(b); /* leave, and wait for the lowest */
        target = rcp_join(b->path, m[0]);
    }
    free(m);
    rv = target == NULL ? TB_ENOMEM : wait_node(b, target, 0);
    free(target);
    return rv;
}

static void on_leave_children(struct tb_client *c, int rc,
                              const struct tb_strings *v,
                              const struct tb_stat *st, void *data)
{
    struct tb_dbarrier *b = data;
    struct tb_strings none = {0, NULL};

    (void)st;
    (void)c;
    if (!step(b))
        return;
    if (rc == TB_ECONNECTIONLOSS)
        rc = read_again(b, on_leave_children);
    else if (rc == 0 || rc == TB_ENONODE)
        rc = leave_look(b, rc == 0 ? v : &none);
    step_done(b, rc);
}

static int leave_next(struct tb_dbarrier *b)
{
    return tb_get_children(b->c, b->path, NULL, NULL, on_leave_children, b);
}

/* A wait ended: enter is done; leave looks again. */
static void on_waited(int rc, void *data)
{
    struct tb_dbarrier *b = data;
    struct rcp_nw *nw;

    pthread_mutex_lock(&b->mu);
    nw = b->nw;
    b->nw = NULL;
    pthread_mutex_unlock(&b->mu);
    rcp_nw_release(nw);
    if (!step(b))
        return;
    if (rc == 0 && b->op == OP_LEAVE)
        rc = leave_next(b);
    if (rc != 0 || b->op == OP_ENTER)
        op_end(b, rc);
    else
        pthread_mutex_unlock(&b->mu);
}

/* ---- the handle ---- */

int tb_dbarrier_new(struct tb_dbarrier **out, struct tb_client *c,
                    const char *path, int members)
{
    struct tb_dbarrier *b;

    if (out == NULL || c == NULL || !rcp_path_ok(path) || path[1] == '\0' ||
        members < 1)
        return TB_EINVAL;
    b = calloc(1, sizeof *b);
    if (b == NULL)
        return TB_ENOMEM;
    pthread_mutex_init(&b->mu, NULL);
    b->refs = 1;
    b->c = c;
    b->members = members;
    b->path = rcp_strdup(path);
    b->ready = rcp_join(path, READY);
    if (b->path == NULL || b->ready == NULL) {
        db_free(b);
        return TB_ENOMEM;
    }
    *out = b;
    return 0;
}

static void give_up(struct tb_dbarrier *b, int rc)
{
    pthread_mutex_lock(&b->mu);
    if (b->op != OP_NONE && b->gave_up == 0) {
        b->gave_up = rc;
        if (b->nw != NULL)
            rcp_nw_give_up(b->nw, rc);
    }
    pthread_mutex_unlock(&b->mu);
}

void tb_dbarrier_free(struct tb_dbarrier *b)
{
    if (b == NULL)
        return;
    give_up(b, TB_ECANCELED);
    pthread_mutex_lock(&b->mu);
    b->freed = 1;
    if (b->op == OP_NONE)
        drop_node(b);
    pthread_mutex_unlock(&b->mu);
    unref(b);
}

static int op_start(struct tb_dbarrier *b, int op, int timeout_ms,
                    tb_done_cb cb, void *data)
{
    char uuid[RCP_UUID_LEN + 1];
    int rv;

    if (b == NULL || timeout_ms < -1)
        return TB_EINVAL;
    if ((rv = rcp_async_timeout_check(b->c, timeout_ms)) != 0)
        return rv;
    pthread_mutex_lock(&b->mu);
    if (b->op != OP_NONE || (op == OP_ENTER && b->node != NULL)) {
        pthread_mutex_unlock(&b->mu); /* one at a time; entered once */
        return TB_EINVAL;
    }
    b->op = op;
    b->gave_up = 0;
    b->deadline = timeout_ms < 0 ? -1 : rcp_now_ms() + timeout_ms;
    b->cb = cb;
    b->data = data;
    if (op == OP_ENTER) {
        rcp_uuid(uuid); /* Curator's member names: a bare uuid */
        b->node = rcp_join(b->path, uuid);
        rv = b->node == NULL ? TB_ENOMEM : send_create(b);
    } else {
        rv = leave_next(b);
    }
    if (rv != 0) {
        if (op == OP_ENTER) {
            free(b->node);
            b->node = NULL;
        }
        b->op = OP_NONE;
        b->cb = NULL;
    } else {
        b->refs++;
    }
    pthread_mutex_unlock(&b->mu);
    return rv;
}

int tb_dbarrier_enter(struct tb_dbarrier *b, int timeout_ms, tb_done_cb cb,
                      void *data)
{
    return op_start(b, OP_ENTER, timeout_ms, cb, data);
}

int tb_dbarrier_leave(struct tb_dbarrier *b, int timeout_ms, tb_done_cb cb,
                      void *data)
{
    return op_start(b, OP_LEAVE, timeout_ms, cb, data);
}

struct dsync {
    struct tb_dbarrier *b;
    int op;
};

static void sync_give_up(void *arg)
{
    give_up(((struct dsync *)arg)->b, TB_ETIMEDOUT);
}

static int dsync_start(void *arg, int timeout_ms, struct rcp_wait *w)
{
    struct dsync *d = arg;

    return op_start(d->b, d->op, timeout_ms, rcp_wait_done_cb, w);
}

static int op_sync(struct tb_dbarrier *b, int op, int timeout_ms)
{
    struct dsync d = {b, op};
    struct rcp_wait w;

    if (b == NULL)
        return TB_EINVAL;
    return rcp_sync_run(b->c, &w, timeout_ms, dsync_start, sync_give_up, &d);
}

int tb_dbarrier_enter_sync(struct tb_dbarrier *b, int timeout_ms)
{
    return op_sync(b, OP_ENTER, timeout_ms);
}

int tb_dbarrier_leave_sync(struct tb_dbarrier *b, int timeout_ms)
{
    return op_sync(b, OP_LEAVE, timeout_ms);
}

int tb_dbarrier_entered(struct tb_dbarrier *b)
{
    int in;

    pthread_mutex_lock(&b->mu);
    in = b->node != NULL && b->op == OP_NONE;
    pthread_mutex_unlock(&b->mu);
    return in;
}
