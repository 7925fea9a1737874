/* The cyclic barrier, with the semantics of Java's CyclicBarrier and
 * Menagerie's ZkCyclicBarrier: `parties` parties await; when the last
 * arrives they all pass together and the barrier is ready for the next
 * generation.  A party that gives up (its timeout, free) or dies (its
 * session ends) breaks the generation: every other party of it returns
 * TB_EBROKEN, and so does each await until a reset starts a new one.
 *
 *   PATH                        PERSISTENT (its parents containers)
 *   PATH/gen-<K, 10 digits>     PERSISTENT, one per generation; the
 *                               highest is the current one
 *   PATH/gen-K/party-<uuid>-<seq>   EPHEMERAL_SEQUENTIAL, a party of K
 *   PATH/gen-K/end              PERSISTENT, "passed" or "broken": made
 *                               once, it decides K; "passed" is made in
 *                               one multi with gen-(K+1)
 *
 * Why these choices:
 * - One "end" node, made by whoever decides first (the last arrival
 *   passing, a party giving up breaking), so a timeout that races the
 *   trip is either before it (the others are broken) or after it (the
 *   late party passes, as in Java), never both.
 * - A party's departure is seen in the generation's stat: while K is
 *   open its children are only created, so cversion (creates + deletes)
 *   equals the number of parties; cversion > count means one left, and
 *   the generation is broken by whoever sees it.  A party that gives up
 *   deletes its node in the same multi that makes "end".
 * - Herd freedom, and every departure seen: the lowest party watches
 *   K's children; every other party watches "end" and the nearest party
 *   node below its own.  So a departure wakes the party above it (the
 *   highest's wakes the lowest), and parties that die together, as two
 *   handles of one client do, wake the first live party above them,
 *   where a fixed set of watchers could all be gone.  An arrival wakes
 *   one party, the trip wakes each once.
 * - Sequence numbers of an open generation run 0, 1, ...: a party whose
 *   number is `parties` or more arrived after the trip was due, so once K
 *   has passed it moves on to K+1, as a late thread does in Java.  A
 *   look at K while open corrects the number for twins below it (see
 *   a lost connection).
 * - The last party out of a decided generation deletes "end" and the
 *   generation's node in one multi, which for a broken one checks that
 *   K+1 exists (a broken generation stays, it is the barrier's state,
 *   until a reset).  A party that died leaves that cleanup to the next
 *   arrival, which removes every generation below the current one that
 *   has no party left, decided or made late and empty.
 * - A lost connection: a read is made again; a create whose reply was
 *   lost is looked for by the uuid in its name, after a sync (the server
 *   we came back to may not have applied it yet: a second create would
 *   count us twice), and a multi's outcome by looking whether "end" is
 *   there.  A twin all the same (two nodes of ours) counts once: parties
 *   are counted by uuid, each where it first arrived.  It stays while K
 *   is open, as a delete there is how a departure shows, and goes when
 *   we leave.
 *
 * cbarrier_gen.c has the generations' names, what a look at one says,
 * the removal of one that is over, and the reset.
 *
 * An await runs as a chain of client callbacks on the handle, one at a
 * time; a give-up is a flag each step looks at, and ends a wait in
 * progress. */
#include <stdio.h>
#include <string.h>

#include "recipes/rcp.h"

#define PARTY  "party-"
#define END    RCP_CB_END
#define PASSED RCP_CB_PASSED
#define BROKEN RCP_CB_BROKEN

struct tb_cbarrier {
    pthread_mutex_t mu;
    int refs; /* the user's, and an await's */
    struct tb_client *c;
    char *path;
    int parties;
    int busy, gave_up;
    int64_t deadline; /* < 0: none */
    struct rcp_nw *nw; /* a step's wait, NULL when none is out */
    tb_done_cb cb;
    void *data;
    int64_t gen;    /* K */
    char *gen_path; /* PATH/gen-K */
    char uuid[RCP_UUID_LEN + 1];
    char *node;  /* our party node, NULL when we have none */
    int64_t seq; /* the parties before ours (see the header) */
    int result; /* decided, while leaving */
    struct tb_recipe_stats st;
};

/* ---- the handle ---- */

static void cb_free(struct tb_cbarrier *b)
{
    pthread_mutex_destroy(&b->mu);
    free(b->path);
    free(b->gen_path);
    free(b->node);
    free(b);
}

static void unref(struct tb_cbarrier *b)
{
    if (rcp_unref(&b->mu, &b->refs))
        cb_free(b);
}

int tb_cbarrier_new(struct tb_cbarrier **out, struct tb_client *c,
                    const char *path, int parties)
{
    struct tb_cbarrier *b;

    if (out == NULL || c == NULL || !rcp_path_ok(path) || path[1] == '\0' ||
        parties < 1)
        return TB_EINVAL;
    if ((b = calloc(1, sizeof *b)) == NULL)
        return TB_ENOMEM;
    if ((b->path = rcp_strdup(path)) == NULL) {
        free(b);
        return TB_ENOMEM;
    }
    pthread_mutex_init(&b->mu, NULL);
    b->refs = 1;
    b->c = c;
    b->parties = parties;
    *out = b;
    return 0;
}

/* ---- ending ---- */

/* Ends the await (lock held, released here); a node still ours goes to
 * the reaper. */
static void await_end(struct tb_cbarrier *b, int rc)
{
    tb_done_cb cb = b->cb;
    void *data = b->data;

    if (b->node != NULL)
        rcp_reap(b->c, b->node, 0, 0, NULL, NULL);
    free(b->node);
    b->node = NULL;
    b->busy = 0;
    b->cb = NULL;
    pthread_mutex_unlock(&b->mu);
    if (cb != NULL)
        cb(rc, data);
    unref(b);
}

/* The end of a step (lock held, released here): the await goes on, or
 * ends with `rc`. */
static void step_done(struct tb_cbarrier *b, int rc)
{
    if (rc != 0)
        await_end(b, rc);
    else
        pthread_mutex_unlock(&b->mu);
}

static int look_gens(struct tb_cbarrier *b);
static int join(struct tb_cbarrier *b);
static int look(struct tb_cbarrier *b);
static int find(struct tb_cbarrier *b);

/* ---- the last one out ---- */

/* Out of generation K (lock held, released here): the await ends, or a
 * party that arrived after the trip goes on to K+1. */
static void out_of_gen(struct tb_cbarrier *b)
{
    if (b->result != 0 || b->seq < b->parties) {
        await_end(b, b->result);
        return;
    }
    b->gen++;
    step_done(b, join(b));
}

static void on_cleaned(struct tb_client *c, int rc,
                       const struct tb_op_result *r, int count, void *data)
{
    struct tb_cbarrier *b = data;

    (void)rc;
    (void)r;
    (void)count;
    (void)c;
    pthread_mutex_lock(&b->mu);
    out_of_gen(b);
}

/* Deletes a node of ours other than the one we used: K is decided, so
 * its delete is no departure. */
static void reap_twin(struct tb_cbarrier *b, const char *name)
{
    char *p = rcp_join(b->gen_path, name);

    if (p != NULL)
        rcp_reap(b->c, p, 0, 0, NULL, NULL);
    free(p);
}

static void on_remaining(struct tb_client *c, int rc,
                         const struct tb_strings *v, const struct tb_stat *st,
                         void *data)
{
    struct tb_cbarrier *b = data;
    int i, n = 0;

    (void)st;
    pthread_mutex_lock(&b->mu);
    for (i = 0; rc == 0 && i < v->count; i++) {
        if (rcp_cb_party_seq(v->v[i]) < 0)
            continue;
        if (strstr(v->v[i], b->uuid) != NULL)
            reap_twin(b, v->v[i]); /* sent before the cleanup below */
        else
            n++;
    }
    /* K passed is not the current one, whatever is above it by now: K+1,
     * made with its "end", may even be gone already (its parties passed
     * it while we were slow to leave K); K broken is, until a reset. */
    if (rc == 0 && n == 0 &&
        rcp_cb_clean_gen(c, b->path, b->gen, b->result == 0 ? -1 : b->gen + 1,
                         on_cleaned, b) == 0) {
        pthread_mutex_unlock(&b->mu);
        return;
    }
    out_of_gen(b);
}

static void on_left(struct tb_client *c, int rc, void *data)
{
    struct tb_cbarrier *b = data;

    pthread_mutex_lock(&b->mu);
    if (rc == TB_ECONNECTIONLOSS) { /* deleted or not: the reaper sees */
        rcp_reap(c, b->node, 0, 0, NULL, NULL);
    } else if (rc != 0 && rc != TB_ENONODE) {
        await_end(b, rc);
        return;
    }
    free(b->node);
    b->node = NULL;
    /* Out as any party is: a late one goes on to K+1. */
    if (tb_get_children(c, b->gen_path, NULL, NULL, on_remaining, b) != 0)
        out_of_gen(b);
    else
        pthread_mutex_unlock(&b->mu);
}

/* The generation is decided: `rc` is our result; our node goes. */
static int leave(struct tb_cbarrier *b, int rc)
{
    b->result = rc;
    if (b->node == NULL)
        return tb_get_children(b->c, b->gen_path, NULL, NULL, on_remaining, b);
    return tb_delete(b->c, b->node, -1, on_left, b);
}

/* ---- deciding ---- */

static void on_end_data(struct tb_client *c, int rc, const void *value,
                        size_t len, const struct tb_stat *st, void *data)
{
    struct tb_cbarrier *b = data;

    (void)st;
    (void)c;
    pthread_mutex_lock(&b->mu);
    if (rc == 0 && len == strlen(PASSED) && memcmp(value, PASSED, len) == 0)
        rc = leave(b, 0);
    else if (rc == 0 || rc == TB_ENONODE) /* ENONODE: cleaned up since */
        rc = leave(b, b->gave_up != 0 ? b->gave_up : TB_EBROKEN);
    else if (rc == TB_ECONNECTIONLOSS)
        rc = look(b);
    step_done(b, rc);
}

static void on_broke(struct tb_client *c, int rc, const struct tb_op_result *r,
                     int count, void *data)
{
    struct tb_cbarrier *b = data;

    pthread_mutex_lock(&b->mu);
    if (rc == 0) { /* broken by us; our node went with it */
        free(b->node);
        b->node = NULL;
        b->result = b->gave_up != 0 ? b->gave_up : TB_EBROKEN;
        rc = tb_get_children(c, b->gen_path, NULL, NULL, on_remaining, b);
    } else if ((count > 0 && r[0].rc == TB_ENODEEXISTS) ||
               rc == TB_ECONNECTIONLOSS) {
        rc = look(b); /* decided already (or by our lost multi): "end" */
    } else if (rc == TB_ENONODE) { /* our node went with our session */
        free(b->node);
        b->node = NULL;
        rc = TB_EBROKEN;
    }
    step_done(b, rc);
}

/* Breaks the generation (lock held): "end" = broken, our node deleted. */
static int break_gen(struct tb_cbarrier *b)
{
    struct tb_multi *ops = tb_multi_new();
    char *end = rcp_join(b->gen_path, END);
    int rv = TB_ENOMEM;

    if (ops != NULL && end != NULL &&
        tb_multi_create(ops, end, BROKEN, strlen(BROKEN), NULL, TB_PERSISTENT,
                        0) == 0 &&
        (b->node == NULL || tb_multi_delete(ops, b->node, -1) == 0))
        rv = tb_multi_exec(b->c, ops, on_broke, b);
    tb_multi_free(ops);
    free(end);
    return rv;
}

static void on_passed(struct tb_client *c, int rc, const struct tb_op_result *r,
                      int count, void *data)
{
    struct tb_cbarrier *b = data;

    (void)r;
    (void)count;
    (void)c;
    pthread_mutex_lock(&b->mu);
    /* "end" is there: read it like everyone; after a lost reply, look
     * whether it is */
    if (rc == 0 || rc == TB_ENODEEXISTS || rc == TB_ECONNECTIONLOSS)
        rc = look(b);
    step_done(b, rc);
}

/* The trip: "end" = passed, and the next generation, in one multi. */
static int pass_gen(struct tb_cbarrier *b)
{
    struct tb_multi *ops = tb_multi_new();
    char *end = rcp_join(b->gen_path, END);
    char *next = rcp_cb_gen_path(b->path, b->gen + 1);
    int rv = TB_ENOMEM;

    if (ops != NULL && end != NULL && next != NULL &&
        tb_multi_create(ops, end, PASSED, strlen(PASSED), NULL, TB_PERSISTENT,
                        0) == 0 &&
        tb_multi_create(ops, next, NULL, 0, NULL, TB_PERSISTENT, 0) == 0)
        rv = tb_multi_exec(b->c, ops, on_passed, b);
    tb_multi_free(ops);
    free(next);
    free(end);
    return rv;
}

/* ---- waiting ---- */

/* A step's wait ended: the step goes on. */
static void on_waited(int rc, void *data)
{
    struct tb_cbarrier *b = data;
    struct rcp_nw *nw;

    pthread_mutex_lock(&b->mu);
    nw = b->nw;
    b->nw = NULL;
    if (rc == 0)
        b->st.wakeups++;
    if (rc == TB_ETIMEDOUT && b->gave_up == 0)
        b->gave_up = rc;
    if (rc == 0 || rc == b->gave_up)
        rc = look(b); /* a give-up breaks the generation there */
    step_done(b, rc);
    rcp_nw_release(nw);
}

/* Waits while K is open (lock held; `pred` from the look, in v): the
 * lowest party for any change of the children, another for "end" or
 * its predecessor gone, whichever comes first. */
static int wait_open(struct tb_cbarrier *b, const struct tb_stat *st,
                     const char *pred)
{
    struct rcp_nw_node v[2] = {{b->gen_path, RCP_NW_CHILDREN, st->cversion}};
    char *end = NULL, *p = NULL;
    int rv = 0, n = 1;

    if (pred != NULL) {
        end = rcp_join(b->gen_path, END);
        p = rcp_join(b->gen_path, pred);
        v[0] = (struct rcp_nw_node){end, RCP_NW_EXISTS, -1};
        v[1] = (struct rcp_nw_node){p, RCP_NW_GONE, -1};
        n = 2;
        if (end == NULL || p == NULL)
            rv = TB_ENOMEM;
    }
    if (rv == 0) {
        b->st.watches_set += (uint64_t)n;
        rv = rcp_nw_start_any(b->c, v, n, rcp_ms_left(b->deadline), on_waited,
                              b, &b->nw);
    }
    free(p);
    free(end);
    return rv;
}

static void on_look(struct tb_client *c, int rc, const struct tb_strings *v,
                    const struct tb_stat *st, void *data)
{
    struct tb_cbarrier *b = data;
    const char *mine, *pred = NULL;
    char *end;
    int d;

    pthread_mutex_lock(&b->mu);
    if (rc != 0) { /* a read: after a lost connection, read again */
        step_done(b, rc == TB_ECONNECTIONLOSS ? look(b)
                     : rc == TB_ENONODE       ? TB_EBROKEN
                                              : rc);
        return;
    }
    mine = b->node != NULL ? strrchr(b->node, '/') + 1 : NULL;
    d = rcp_cb_decide(v, st->cversion, mine, b->parties);
    /* While K is open all before us are here (a departure breaks it);
     * once decided, some may have left, and the number stands. */
    if (mine != NULL && (d == RCP_CB_PASS || d == RCP_CB_WAIT))
        rcp_cb_place(v, mine, &b->seq, &pred);
    switch (d) {
    case RCP_CB_DECIDED:
        end = rcp_join(b->gen_path, END);
        rc = end == NULL ? TB_ENOMEM
                         : tb_get_data(c, end, NULL, NULL, on_end_data, b);
        free(end);
        break;
    case RCP_CB_GONE: /* our session ended: we broke it */
        free(b->node);
        b->node = NULL;
        rc = TB_EBROKEN;
        break;
    case RCP_CB_BREAK:
        rc = break_gen(b);
        break;
    case RCP_CB_PASS:
        rc = pass_gen(b);
        break;
    default:
        if (b->gave_up != 0 || rcp_ms_left(b->deadline) == 0) {
            if (b->gave_up == 0)
                b->gave_up = TB_ETIMEDOUT;
            rc = break_gen(b);
        } else {
            rc = wait_open(b, st, pred);
        }
    }
    step_done(b, rc);
}

static int look(struct tb_cbarrier *b)
{
    b->st.children_reads++;
    return tb_get_children2(b->c, b->gen_path, NULL, NULL, on_look, b);
}

/* ---- arriving ---- */

static void on_found(struct tb_client *c, int rc, const struct tb_strings *v,
                     const struct tb_stat *st, void *data)
{
    struct tb_cbarrier *b = data;
    int64_t seq;
    int i;

    (void)st;
    (void)c;
    pthread_mutex_lock(&b->mu);
    /* Ours: the first, where we arrived; a twin goes when we leave. */
    for (i = 0; rc == 0 && i < v->count; i++)
        if (strstr(v->v[i], b->uuid) != NULL &&
            (seq = rcp_cb_party_seq(v->v[i])) >= 0 &&
            (b->node == NULL || seq < b->seq)) {
            free(b->node);
            b->node = rcp_join(b->gen_path, v->v[i]);
            b->seq = seq;
            if (b->node == NULL)
                rc = TB_ENOMEM;
        }
    if (rc == 0)
        rc = b->node != NULL ? look(b) : join(b); /* not made: again */
    else if (rc == TB_ENONODE)
        rc = look_gens(b);
    else if (rc == TB_ECONNECTIONLOSS)
        rc = find(b);
    step_done(b, rc);
}

/* Our node after a create whose reply was lost (lock held).  The server
 * we came back to may lag the leader, which ordered that create before
 * this session came back: a sync first, which the read waits behind.
 * Else a read that missed our node would have us create a second. */
static int find(struct tb_cbarrier *b)
{
    (void)tb_sync(b->c, b->gen_path, NULL, NULL);
    return tb_get_children(b->c, b->gen_path, NULL, NULL, on_found, b);
}

static void on_joined(struct tb_client *c, int rc, const char *path,
                      const struct tb_stat *st, void *data)
{
    struct tb_cbarrier *b = data;

    (void)st;
    (void)c;
    pthread_mutex_lock(&b->mu);
    if (rc == 0) {
        b->st.creates++;
        b->node = rcp_strdup(path);
        b->seq = rcp_cb_party_seq(strrchr(path, '/') + 1);
        rc = b->node == NULL ? TB_ENOMEM : look(b);
    } else if (rc == TB_ECONNECTIONLOSS) { /* made or not: find it */
        rc = find(b);
    } else if (rc == TB_ENONODE) { /* K is over and cleaned up */
        rc = look_gens(b);
    }
    step_done(b, rc);
}

/* Our party node in generation b->gen (lock held). */
static int join(struct tb_cbarrier *b)
{
    char name[64], *p;
    int rv;

    if (b->gave_up != 0)
        return b->gave_up;
    free(b->gen_path);
    if ((b->gen_path = rcp_cb_gen_path(b->path, b->gen)) == NULL)
        return TB_ENOMEM;
    snprintf(name, sizeof name, PARTY "%s-", b->uuid);
    if ((p = rcp_join(b->gen_path, name)) == NULL)
        return TB_ENOMEM;
    rv = tb_create(b->c, p, NULL, 0, NULL, TB_EPHEMERAL_SEQUENTIAL, 0,
                   on_joined, b);
    free(p);
    return rv;
}

static void on_gen_made(int rc, void *data)
{
    struct tb_cbarrier *b = data;

    pthread_mutex_lock(&b->mu);
    if (rc == 0 || rc == TB_ENODEEXISTS)
        rc = look_gens(b);
    step_done(b, rc);
}

static void on_gens(struct tb_client *c, int rc, const struct tb_strings *v,
                    const struct tb_stat *st, void *data)
{
    struct tb_cbarrier *b = data;
    struct tb_strings none = {0, NULL};
    char *g;
    int i;

    (void)st;
    pthread_mutex_lock(&b->mu);
    if (rc == TB_ECONNECTIONLOSS) {
        step_done(b, look_gens(b));
        return;
    }
    if (rc == 0 || rc == TB_ENONODE) {
        if (rc != 0)
            v = &none;
        b->gen = rcp_cb_highest_gen(v);
        if (b->gen < 0) { /* a new barrier: its first generation */
            rc = (g = rcp_cb_gen_path(b->path, 0)) == NULL
                     ? TB_ENOMEM
                     : rcp_create_in(c, g, NULL, 0, TB_PERSISTENT, on_gen_made,
                                     b);
            free(g);
        } else {
            /* Generations below the current one whose last party died
             * before it could clean up, or made late: nobody waits for
             * this. */
            for (i = 0; i < v->count; i++) {
                int64_t k = rcp_cb_gen(v->v[i]);
                if (k >= 0 && k < b->gen) /* b->gen is there: listed */
                    rcp_cb_clean_below(c, b->path, k, b->gen);
            }
            rc = join(b);
        }
    }
    step_done(b, rc);
}

static int look_gens(struct tb_cbarrier *b)
{
    if (b->gave_up != 0)
        return b->gave_up;
    return tb_get_children(b->c, b->path, NULL, NULL, on_gens, b);
}

int tb_cbarrier_await(struct tb_cbarrier *b, int timeout_ms, tb_done_cb cb,
                      void *data)
{
    int rv;

    if (b == NULL || timeout_ms < -1)
        return TB_EINVAL;
    if ((rv = rcp_async_timeout_check(b->c, timeout_ms)) != 0)
        return rv;
    pthread_mutex_lock(&b->mu);
    if (b->busy) {
        pthread_mutex_unlock(&b->mu);
        return TB_EINVAL;
    }
    b->busy = 1;
    b->gave_up = 0;
    b->result = 0;
    b->deadline = timeout_ms < 0 ? -1 : rcp_now_ms() + timeout_ms;
    b->cb = cb;
    b->data = data;
    rcp_uuid(b->uuid);
    if ((rv = look_gens(b)) == 0)
        b->refs++;
    else
        b->busy = 0;
    pthread_mutex_unlock(&b->mu);
    return rv;
}

static void give_up(struct tb_cbarrier *b, int rc)
{
    pthread_mutex_lock(&b->mu);
    if (b->busy && b->gave_up == 0) {
        b->gave_up = rc;
        if (b->nw != NULL)
            rcp_nw_give_up(b->nw, rc);
    }
    pthread_mutex_unlock(&b->mu);
}

void tb_cbarrier_free(struct tb_cbarrier *b)
{
    if (b == NULL)
        return;
    give_up(b, TB_ECANCELED);
    unref(b);
}

/* ---- synchronous forms ---- */

static void sync_give_up(void *arg)
{
    give_up(arg, TB_ETIMEDOUT);
}

static int await_start(void *arg, int timeout_ms, struct rcp_wait *w)
{
    return tb_cbarrier_await(arg, timeout_ms, rcp_wait_done_cb, w);
}

int tb_cbarrier_await_sync(struct tb_cbarrier *b, int timeout_ms)
{
    struct rcp_wait w;

    if (b == NULL)
        return TB_EINVAL;
    return rcp_sync_run(b->c, &w, timeout_ms, await_start, sync_give_up, b);
}

static int reset_start(void *arg, int timeout_ms, struct rcp_wait *w)
{
    (void)timeout_ms;
    return tb_cbarrier_reset(arg, rcp_wait_done_cb, w);
}

int tb_cbarrier_reset(struct tb_cbarrier *b, tb_done_cb cb, void *data)
{
    if (b == NULL)
        return TB_EINVAL;
    return rcp_cb_reset(b->c, b->path, cb, data);
}

int tb_cbarrier_reset_sync(struct tb_cbarrier *b)
{
    struct rcp_wait w;

    if (b == NULL)
        return TB_EINVAL;
    return rcp_sync_run(b->c, &w, -1, reset_start, NULL, b);
}

int tb_cbarrier_waiting_sync(struct tb_cbarrier *b, int *waiting)
{
    if (b == NULL || waiting == NULL)
        return TB_EINVAL;
    return rcp_cb_waiting(b->c, b->path, waiting);
}

void tb_cbarrier_stats(struct tb_cbarrier *b, struct tb_recipe_stats *out)
{
    pthread_mutex_lock(&b->mu);
    *out = b->st;
    pthread_mutex_unlock(&b->mu);
}
