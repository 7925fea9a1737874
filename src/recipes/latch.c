/* The count-down latch, with Menagerie's semantics: countDown adds one
 * persistent sequential node PATH/countDownLatch-<seq> (persistent, as
 * Menagerie's: a count made is not lost with the session that made it),
 * and await returns once there are `count` of them.
 *
 * Herd freedom where the count allows: the counters' sequence numbers
 * follow one another (the parent's counter, nothing else created under
 * PATH, no counter deleted while in use), so a waiter that sees the
 * first counter knows the name the last one will get and watches that
 * name alone (exists): one wake-up per waiter, however many count down.
 * It waits as well for the first counter it saw to go, whichever comes
 * first: a reset deletes that one, and once the emptied container PATH is
 * removed and made again the names start again from 0, below the one
 * watched.
 * Before the first counter, or when the names are not consecutive (PATH
 * reset while waiting), a waiter watches PATH's children instead and
 * looks again at each change.  While PATH is missing (none made yet, or
 * the container removed by the server once a reset emptied it) a waiter
 * waits for it to exist, then looks again. */
#include <stdio.h>
#include <string.h>

#include "recipes/rcp.h"

#define PREFIX "countDownLatch-"

struct tb_latch {
    pthread_mutex_t mu;
    int refs; /* the user's, and an await's */
    struct tb_client *c;
    char *path;
    int count;
    int busy, gave_up;
    int64_t deadline; /* < 0: none */
    struct rcp_nw *nw; /* PATH, its children, or the last and first names */
    tb_done_cb cb;
    void *data;
};

static void latch_free(struct tb_latch *l)
{
    pthread_mutex_destroy(&l->mu);
    free(l->path);
    free(l);
}

static void unref(struct tb_latch *l)
{
    if (rcp_unref(&l->mu, &l->refs))
        latch_free(l);
}

int tb_latch_new(struct tb_latch **out, struct tb_client *c, const char *path,
                 int count)
{
    struct tb_latch *l;

    if (out == NULL || c == NULL || !rcp_path_ok(path) || path[1] == '\0' ||
        count < 1)
        return TB_EINVAL;
    if ((l = calloc(1, sizeof *l)) == NULL)
        return TB_ENOMEM;
    if ((l->path = rcp_strdup(path)) == NULL) {
        free(l);
        return TB_ENOMEM;
    }
    pthread_mutex_init(&l->mu, NULL);
    l->refs = 1;
    l->c = c;
    l->count = count;
    *out = l;
    return 0;
}

/* ---- count down ---- */

static void ignore(int rc, void *data)
{
    (void)rc;
    (void)data;
}

int tb_latch_count_down(struct tb_latch *l, tb_done_cb cb, void *data)
{
    char *p;
    int rv;

    if (l == NULL)
        return TB_EINVAL;
    if ((p = rcp_join(l->path, PREFIX)) == NULL)
        return TB_ENOMEM;
    rv = rcp_create_in(l->c, p, NULL, 0, TB_PERSISTENT_SEQUENTIAL,
                       cb != NULL ? cb : ignore, data);
    free(p);
    return rv;
}

/* ---- await ---- */

/* Ends the await (lock held, released here). */
static void await_end(struct tb_latch *l, int rc)
{
    tb_done_cb cb = l->cb;
    void *data = l->data;

    l->busy = 0;
    l->cb = NULL;
    pthread_mutex_unlock(&l->mu);
    if (cb != NULL)
        cb(rc, data);
    unref(l);
}

/* The end of a step (lock held, released here): the operation goes on,
 * or ends with `rc`. */
static void step_done(struct tb_latch *l, int rc)
{
    if (rc != 0)
        await_end(l, rc);
    else
        pthread_mutex_unlock(&l->mu);
}

static int look(struct tb_latch *l);
static int wait_path(struct tb_latch *l);

/* A wait ended: look again; a children wait whose PATH went (the
 * reset's container removed: TB_ENONODE) waits for PATH first. */
static void on_waited(int rc, void *data)
{
    struct tb_latch *l = data;
    struct rcp_nw *nw;

    pthread_mutex_lock(&l->mu);
    nw = l->nw;
    l->nw = NULL;
    if ((rc == 0 || rc == TB_ENONODE) && l->gave_up != 0)
        rc = l->gave_up;
    else if (rc == 0)
        rc = look(l);
    else if (rc == TB_ENONODE)
        rc = wait_path(l);
    step_done(l, rc);
    rcp_nw_release(nw);
}

/* Until PATH exists (none yet, or removed while we waited). */
static int wait_path(struct tb_latch *l)
{
    return rcp_nw_start(l->c, l->path, RCP_NW_EXISTS, rcp_ms_left(l->deadline),
                        on_waited, l, &l->nw);
}

/* PATH/countDownLatch-<seq>, allocated (NULL: no memory). */
static char *counter(const struct tb_latch *l, int64_t seq)
{
    char name[64];

    snprintf(name, sizeof name, PREFIX "%010lld", (long long)seq);
    return rcp_join(l->path, name);
}

/* What to wait for after a look at `n` counters from `lo` to `hi`. */
static int wait_more(struct tb_latch *l, int n, int64_t lo, int64_t hi,
                     int64_t cversion)
{
    struct rcp_nw_node v[2] = {{l->path, RCP_NW_CHILDREN, cversion}};
    char *last = NULL, *first = NULL;
    int rv = 0, nv = 1;

    if (n > 0 && hi - lo + 1 == n) { /* consecutive: the last one's name */
        last = counter(l, lo + l->count - 1);
        first = counter(l, lo);
        v[0] = (struct rcp_nw_node){last, RCP_NW_EXISTS, -1};
        v[1] = (struct rcp_nw_node){first, RCP_NW_GONE, -1};
        nv = 2;
        if (last == NULL || first == NULL)
            rv = TB_ENOMEM;
    }
    if (rv == 0)
        rv = rcp_nw_start_any(l->c, v, nv, rcp_ms_left(l->deadline), on_waited,
                              l, &l->nw);
    free(last);
    free(first);
    return rv;
}

static void on_children(struct tb_client *c, int rc, const struct tb_strings *v,
                        const struct tb_stat *st, void *data)
{
    struct tb_latch *l = data;
    int64_t seq, lo = INT64_MAX, hi = -1;
    int i, n = 0;

    (void)c;
    pthread_mutex_lock(&l->mu);
    /* Given up: before any wait starts (for PATH, after TB_ENONODE, a
     * wait nothing would give up), and also with the connection down,
     * when the look sent again would wait for the next server (nothing
     * of ours to clean up). */
    if ((rc == 0 || rc == TB_ENONODE || rc == TB_ECONNECTIONLOSS) &&
        l->gave_up != 0)
        rc = l->gave_up;
    if (rc == 0) {
        for (i = 0; i < v->count; i++) {
            if (strncmp(v->v[i], PREFIX, strlen(PREFIX)) != 0)
                continue;
            seq = strtoll(v->v[i] + strlen(PREFIX), NULL, 10);
            lo = seq < lo ? seq : lo;
            hi = seq > hi ? seq : hi;
            n++;
        }
        if (n >= l->count) {
            await_end(l, 0);
            return;
        }
        rc = rcp_ms_left(l->deadline) == 0 ? TB_ETIMEDOUT
                               : wait_more(l, n, lo, hi, st->cversion);
    } else if (rc == TB_ENONODE) { /* no counter yet: wait for PATH */
        rc = wait_path(l);
    } else if (rc == TB_ECONNECTIONLOSS) { /* a waiter waits on: again */
        rc = look(l);
    }
    step_done(l, rc);
}

static int look(struct tb_latch *l)
{
    return tb_get_children2(l->c, l->path, NULL, NULL, on_children, l);
}

int tb_latch_await(struct tb_latch *l, int timeout_ms, tb_done_cb cb,
                   void *data)
{
    int rv;

    if (l == NULL)
        return TB_EINVAL;
    if ((rv = rcp_async_timeout_check(l->c, timeout_ms)) != 0)
        return rv;
    pthread_mutex_lock(&l->mu);
    if (l->busy) {
        pthread_mutex_unlock(&l->mu);
        return TB_EINVAL;
    }
    l->busy = 1;
    l->gave_up = 0;
    l->deadline = timeout_ms < 0 ? -1 : rcp_now_ms() + timeout_ms;
    l->cb = cb;
    l->data = data;
    if ((rv = look(l)) == 0)
        l->refs++;
    else
        l->busy = 0;
    pthread_mutex_unlock(&l->mu);
    return rv;
}

static void give_up(struct tb_latch *l, int rc)
{
    pthread_mutex_lock(&l->mu);
    if (l->busy && l->gave_up == 0) {
        l->gave_up = rc;
        if (l->nw != NULL)
            rcp_nw_give_up(l->nw, rc);
    }
    pthread_mutex_unlock(&l->mu);
}

void tb_latch_free(struct tb_latch *l)
{
    if (l == NULL)
        return;
    give_up(l, TB_ECANCELED);
    unref(l);
}

/* ---- synchronous forms ---- */

static void sync_give_up(void *arg)
{
    give_up(arg, TB_ETIMEDOUT);
}

static int await_start(void *arg, int timeout_ms, struct rcp_wait *w)
{
    return tb_latch_await(arg, timeout_ms, rcp_wait_done_cb, w);
}

int tb_latch_await_sync(struct tb_latch *l, int timeout_ms)
{
    struct rcp_wait w;

    if (l == NULL)
        return TB_EINVAL;
    return rcp_sync_run(l->c, &w, timeout_ms, await_start, sync_give_up, l);
}

static int count_start(void *arg, int timeout_ms, struct rcp_wait *w)
{
    (void)timeout_ms;
    return tb_latch_count_down(arg, rcp_wait_done_cb, w);
}

int tb_latch_count_down_sync(struct tb_latch *l)
{
    struct rcp_wait w;

    if (l == NULL)
        return TB_EINVAL;
    return rcp_sync_run(l->c, &w, -1, count_start, NULL, l);
}

int tb_latch_remaining_sync(struct tb_latch *l, int *remaining)
{
    struct tb_strings v;
    int rc, i, n = 0;

    if (l == NULL || remaining == NULL)
        return TB_EINVAL;
    rc = tb_get_children_sync(l->c, l->path, NULL, NULL, &v);
    if (rc == TB_ENONODE) {
        *remaining = l->count;
        return 0;
    }
    if (rc != 0)
        return rc;
    for (i = 0; i < v.count; i++)
        n += strncmp(v.v[i], PREFIX, strlen(PREFIX)) == 0;
    tb_strings_free(&v);
    *remaining = n >= l->count ? 0 : l->count - n;
    return 0;
}
