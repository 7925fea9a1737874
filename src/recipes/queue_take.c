/* The queues' take and peek (see queue.c for the layouts and the
 * guarantees): one round lists the entries (and, locking, the claims),
 * sorts the candidates, and tries them in order -- read then delete
 * (simple), claim then read (locking), read (peek) -- and when none is
 * left waits for the children to change, then lists again. */
#include <string.h>

#include "recipes/queue.h"

/* ---- take and peek: one round over the sorted candidates ---- */

static void free_cand(struct tb_dqueue *q)
{
    int i;

    for (i = 0; i < q->ncand; i++)
        free(q->cand[i]);
    free(q->cand);
    q->cand = NULL;
    q->ncand = q->icand = 0;
}

/* Ends the operation; the lock is held and released here. */
static void op_end(struct tb_dqueue *q, int rc, const void *v, size_t len)
{
    tb_item_cb cb = q->cb;
    void *data = q->data;

    free_cand(q);
    if (rc == 0 && q->op == Q_TAKE && q->freed && q->claimed != NULL)
        rc = TB_ECANCELED; /* its claim goes back below: not the caller's */
    /* A claim this take made, or one the freed handle leaves: back.  Not
     * the claim a peek runs beside: that one is the caller's. */
    if (((rc != 0 && q->op == Q_TAKE) || q->freed) && q->claimed != NULL) {
        char *t = rcp_join(q->taken, q->claimed);
        if (t != NULL) /* a claim the caller will not have: back */
            rcp_reap(q->c, t, q->claimed_czxid, 0, NULL, NULL);
        free(t);
        free(q->claimed);
        q->claimed = NULL;
    }
    q->busy = 0;
    q->cb = NULL;
    pthread_mutex_unlock(&q->mu);
    if (cb != NULL)
        cb(rc, rc == 0 ? v : NULL, rc == 0 ? len : 0, data);
    rcp_q_unref(q);
}

/* The end of a step (lock held, released here): the operation goes on,
 * or ends with `rc`. */
static void step_done(struct tb_dqueue *q, int rc)
{
    if (rc != 0)
        op_end(q, rc, NULL, 0);
    else
        pthread_mutex_unlock(&q->mu);
}

static int list_entries(struct tb_dqueue *q);
static int try_next(struct tb_dqueue *q);

static int by_name(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

static int is_taken(const struct tb_strings *t, const char *n)
{
    int i;

    for (i = 0; t != NULL && i < t->count; i++)
        if (strcmp(t->v[i], n) == 0)
            return 1;
    return 0;
}

/* This round's candidates: the entries of our layout not claimed. */
static int set_cand(struct tb_dqueue *q, const struct tb_strings *e,
                    const struct tb_strings *t)
{
    int i;

    free_cand(q);
    q->cand = calloc((size_t)e->count + 1, sizeof *q->cand);
    if (q->cand == NULL)
        return TB_ENOMEM;
    for (i = 0; i < e->count; i++)
        if (strncmp(e->v[i], PREFIX, strlen(PREFIX)) == 0 &&
            !is_taken(t, e->v[i]) &&
            (q->cand[q->ncand] = rcp_strdup(e->v[i])) != NULL)
            q->ncand++;
    qsort(q->cand, (size_t)q->ncand, sizeof *q->cand, by_name);
    return 0;
}

static void on_waited(int rc, void *data);

/* Nothing to take: wait for the children to change (lock held): the
 * entries', and for a locking queue the claims' too, whichever first. */
static int wait_change(struct tb_dqueue *q)
{
    struct rcp_nw_node v[2] = {{q->entries, RCP_NW_CHILDREN, q->cv_entries},
                               {q->taken, RCP_NW_CHILDREN, q->cv_taken}};
    int t;

    if (q->op == Q_PEEK)
        return TB_ENONODE; /* peek does not wait */
    if ((t = rcp_ms_left(q->deadline)) == 0)
        return TB_ETIMEDOUT;
    return rcp_nw_start_any(q->c, v, q->locking ? 2 : 1, t, on_waited, q,
                            &q->nw);
}

/* The wait ended: a change, so list again; else the error. */
static void on_waited(int rc, void *data)
{
    struct tb_dqueue *q = data;
    struct rcp_nw *nw;

    pthread_mutex_lock(&q->mu);
    nw = q->nw;
    q->nw = NULL;
    rc = q->gave_up != 0 ? q->gave_up : rc;
    if (rc == 0)
        rc = list_entries(q);
    step_done(q, rc);
    rcp_nw_release(nw);
}

static void on_taken_list(struct tb_client *c, int rc,
                          const struct tb_strings *v, const struct tb_stat *st,
                          void *data);

static void on_entries(struct tb_client *c, int rc, const struct tb_strings *v,
                       const struct tb_stat *st, void *data)
{
    struct tb_dqueue *q = data;

    pthread_mutex_lock(&q->mu);
    if (rc == 0 && q->gave_up != 0)
        rc = q->gave_up;
    if (rc == 0) {
        q->cv_entries = st->cversion;
        rc = set_cand(q, v, NULL);
    }
    if (rc == 0 && q->locking)
        rc = tb_get_children2(c, q->taken, NULL, NULL, on_taken_list, q);
    else if (rc == 0)
        rc = try_next(q);
    step_done(q, rc);
}

/* Locking: the claims, listed after the entries; an entry claimed since
 * is refused by our claim's create. */
static void on_taken_list(struct tb_client *c, int rc,
                          const struct tb_strings *v, const struct tb_stat *st,
                          void *data)
{
    struct tb_dqueue *q = data;
    int i, j = 0;

    (void)c;
    pthread_mutex_lock(&q->mu);
    if (rc == TB_ENONODE && q->op == Q_PEEK) { /* made nothing: none taken */
        rc = 0;
        v = NULL;
    } else if (rc == 0) {
        q->cv_taken = st->cversion;
    }
    if (rc == 0) {
        for (i = 0; i < q->ncand; i++) {
            if (is_taken(v, q->cand[i]))
                free(q->cand[i]);
            else
                q->cand[j++] = q->cand[i];
        }
        q->ncand = j;
        rc = try_next(q);
    }
    step_done(q, rc);
}

static int list_entries(struct tb_dqueue *q)
{
    return tb_get_children2(q->c, q->entries, NULL, NULL, on_entries, q);
}

/* ---- one candidate ---- */

static void on_deleted(struct tb_client *c, int rc, void *data);
static void on_claim(struct tb_client *c, int rc, const char *path,
                     const struct tb_stat *st, void *data);

/* The value read, kept until the delete says it is ours. */
struct held {
    struct tb_dqueue *q;
    void *v;
    size_t len;
};

static int next_or_wait(struct tb_dqueue *q)
{
    q->icand++;
    return try_next(q);
}

static void on_read(struct tb_client *c, int rc, const void *value, size_t len,
                    const struct tb_stat *st, void *data)
{
    struct tb_dqueue *q = data;
    struct held *h;
    char *p;

    (void)st;
    pthread_mutex_lock(&q->mu);
    if (rc == TB_ENONODE) { /* taken (simple) or consumed (locking) */
        if (q->locking && q->op == Q_TAKE) { /* our claim on nothing: back */
            p = rcp_join(q->taken, q->cand[q->icand]);
            if (p != NULL)
                rcp_reap(c, p, q->claimed_czxid, 0, NULL, NULL);
            free(p);
            free(q->claimed);
            q->claimed = NULL;
        }
        rc = next_or_wait(q);
    } else if (rc == 0 && (q->op == Q_PEEK || q->locking)) {
        op_end(q, 0, value, len); /* peeked, or claimed and read */
        return;
    } else if (rc == 0) {
        h = calloc(1, sizeof *h);
        p = rcp_join(q->entries, q->cand[q->icand]);
        rc = TB_ENOMEM;
        if (h != NULL && p != NULL && (len == 0 || (h->v = malloc(len)))) {
            h->q = q;
            h->len = len;
            if (len > 0)
                memcpy(h->v, value, len);
            rc = tb_delete(c, p, -1, on_deleted, h);
        }
        if (rc != 0 && h != NULL)
            free(h->v);
        if (rc != 0)
            free(h);
        free(p);
    }
    step_done(q, rc);
}

/* Simple take: the delete decides whose the item is. */
static void on_deleted(struct tb_client *c, int rc, void *data)
{
    struct held *h = data;
    struct tb_dqueue *q = h->q;

    (void)c;
    pthread_mutex_lock(&q->mu);
    if (rc == 0) {
        op_end(q, 0, h->v, h->len);
        free(h->v);
        free(h);
        return;
    }
    free(h->v);
    free(h);
    if (rc == TB_ENONODE) /* another taker's */
        rc = next_or_wait(q);
    step_done(q, rc);
}

static int read_cand(struct tb_dqueue *q)
{
    char *p = rcp_join(q->entries, q->cand[q->icand]);
    int rv;

    if (p == NULL)
        return TB_ENOMEM;
    rv = tb_get_data(q->c, p, NULL, NULL, on_read, q);
    free(p);
    return rv;
}

static int send_claim(struct tb_dqueue *q)
{
    char *p = rcp_join(q->taken, q->cand[q->icand]);
    int rv;

    if (p == NULL)
        return TB_ENOMEM;
    rv = tb_create(q->c, p, q->id, strlen(q->id), NULL, TB_EPHEMERAL, 0,
                   on_claim, q);
    free(p);
    return rv;
}

static void on_claim_owner(struct tb_client *c, int rc, const void *value,
                           size_t len, const struct tb_stat *st, void *data);

/* Whose is the claim on the candidate (lock held)?  Its owner and its
 * data say: our session, and this handle's id (another handle of this
 * client has our session too). */
static int ask_claim_owner(struct tb_dqueue *q)
{
    char *p = rcp_join(q->taken, q->cand[q->icand]);
    int rv;

    if (p == NULL)
        return TB_ENOMEM;
    rv = tb_get_data(q->c, p, NULL, NULL, on_claim_owner, q);
    free(p);
    return rv;
}

static void on_claim_owner(struct tb_client *c, int rc, const void *value,
                           size_t len, const struct tb_stat *st, void *data)
{
    struct tb_dqueue *q = data;

    pthread_mutex_lock(&q->mu);
    if (rc == 0 && st->ephemeral_owner == tb_client_session(c, NULL) &&
        len == strlen(q->id) && memcmp(value, q->id, len) == 0) {
        q->claimed = rcp_strdup(q->cand[q->icand]); /* its reply was lost */
        q->claimed_czxid = st->czxid;
        q->claimed_session = st->ephemeral_owner;
        rc = q->claimed == NULL ? TB_ENOMEM : read_cand(q);
    } else if (rc == 0 || rc == TB_ENONODE) {
        rc = next_or_wait(q);
    } else if (rc == TB_ECONNECTIONLOSS) {
        rc = ask_claim_owner(q); /* it may be ours: ask again */
    }
    step_done(q, rc);
}

static void on_claim(struct tb_client *c, int rc, const char *path,
                     const struct tb_stat *st, void *data)
{
    struct tb_dqueue *q = data;

    (void)path;
    (void)c;
    pthread_mutex_lock(&q->mu);
    if (rc == 0) {
        q->claimed = rcp_strdup(q->cand[q->icand]);
        q->claimed_czxid = st->czxid;
        q->claimed_session = st->ephemeral_owner;
        rc = q->claimed == NULL ? TB_ENOMEM : read_cand(q);
    } else if (rc == TB_ECONNECTIONLOSS) {
        q->claim_retried = 1;
        rc = send_claim(q);
    } else if (rc == TB_ENODEEXISTS && q->claim_retried) {
        /* Ours from before the loss, or another taker's (another handle
         * of this client's too): its owner and its data say. */
        q->claim_retried = 0;
        rc = ask_claim_owner(q);
    } else if (rc == TB_ENODEEXISTS) {
        rc = next_or_wait(q);
    }
    step_done(q, rc);
}

/* Tries the candidate at icand, or waits if none is left (lock held). */
static int try_next(struct tb_dqueue *q)
{
    if (q->gave_up != 0)
        return q->gave_up;
    if (q->icand >= q->ncand)
        return wait_change(q);
    q->claim_retried = 0;
    if (q->locking && q->op == Q_TAKE)
        return send_claim(q);
    return read_cand(q);
}

static void start_list(int rc, void *data)
{
    struct tb_dqueue *q = data;

    pthread_mutex_lock(&q->mu);
    if (rc == 0)
        rc = q->gave_up != 0 ? q->gave_up : list_entries(q);
    step_done(q, rc);
}

int rcp_q_op_start(struct tb_dqueue *q, int op, int timeout_ms, tb_item_cb cb,
                   void *data)
{
    int rv;

    if (q == NULL)
        return TB_EINVAL;
    if ((rv = rcp_async_timeout_check(q->c, timeout_ms)) != 0)
        return rv;
    pthread_mutex_lock(&q->mu);
    if (q->busy || (op == Q_TAKE && q->claimed != NULL)) {
        pthread_mutex_unlock(&q->mu); /* one at a time; consume first */
        return TB_EINVAL;
    }
    q->busy = 1;
    q->op = op;
    q->gave_up = 0;
    q->deadline = timeout_ms < 0 ? -1 : rcp_now_ms() + timeout_ms;
    q->cb = cb;
    q->data = data;
    /* A peek is a read: a queue not there is empty, and is not made. */
    rv = op == Q_PEEK ? 1 : rcp_q_make_paths(q, start_list, q);
    if (rv == 1)
        rv = list_entries(q);
    if (rv != 0)
        q->busy = 0;
    else
        q->refs++;
    pthread_mutex_unlock(&q->mu);
    return rv;
}

int tb_dqueue_take(struct tb_dqueue *q, int timeout_ms, tb_item_cb cb,
                   void *data)
{
    return rcp_q_op_start(q, Q_TAKE, timeout_ms, cb, data);
}

int tb_dqueue_peek(struct tb_dqueue *q, tb_item_cb cb, void *data)
{
    return rcp_q_op_start(q, Q_PEEK, -1, cb, data);
}

void rcp_q_give_up(struct tb_dqueue *q, int rc)
{
    pthread_mutex_lock(&q->mu);
    if (q->busy && q->gave_up == 0) {
        q->gave_up = rc;
        if (q->nw != NULL)
            rcp_nw_give_up(q->nw, rc);
    }
    pthread_mutex_unlock(&q->mu);
}

int tb_dqueue_cancel(struct tb_dqueue *q)
{
    int busy;

    pthread_mutex_lock(&q->mu);
    busy = q->busy;
    pthread_mutex_unlock(&q->mu);
    if (!busy)
        return TB_EINVAL;
    rcp_q_give_up(q, TB_ECANCELED);
    return 0;
}
