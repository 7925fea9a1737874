/* Fencing on the server side of a lock: the fenced write, a multi that
 * applies only while the writer's lock node still exists, and the token
 * check, which tells a resource whether a token is a current holder's
 * (Chubby's CheckSequencer).
 *
 * Why a node check fences: a fair lock's node has a name no other client
 * can create (its uuid), and once its owner holds, it holds until the
 * node is deleted -- by its release, by someone else, or by the server
 * when the session expires.  So "the node exists" is "the lock is still
 * ours", and a check on it inside the same multi as the writes makes them
 * all-or-nothing with that fact: a holder paused past its session cannot
 * write after the next holder got the lock.  The non-fair lock's node is
 * PATH itself, which the next holder creates again under the same name,
 * so it cannot be fenced this way (TB_EINVAL).
 *
 * A semaphore's lease is held from its grant until its node is deleted
 * (only the gate's holder waits with a lease node, and its token is
 * handed out once it holds), so every node under PATH/leases holds, and
 * the check on a semaphore's PATH looks there.  The fenced writes of a
 * lease and of an election's leader are those of their engines
 * (semaphore.c, election.c).
 *
 * Why the token check reads after a sync: the resource's session may be
 * on another server than the holder's, and a read there may lag; sync
 * makes the read see at least every write acknowledged before it, among
 * them the grant the holder was told of before it sent its token. */
#include <string.h>

#include "recipes/rcp.h"

/* ---- the fenced write ---- */

/* The node the check is made on; TB_ENOTHELD, TB_ELOCKLOST or TB_EINVAL
 * (non-fair) if there is none to make. */
static int fence_node(struct tb_mutex *m, struct tb_multi *ops, int *at)
{
    int rv;

    if (m == NULL || ops == NULL)
        return TB_EINVAL;
    pthread_mutex_lock(m->mu);
    if (!m->cfg->fair)
        rv = TB_EINVAL;
    else if (rcp_lk_told_holds(m) == 0 || m->node == NULL)
        rv = TB_ENOTHELD; /* a grant in its lock delay too: not held yet */
    else if (m->lstate == TB_LOCK_LOST)
        rv = TB_ELOCKLOST;
    else {
        *at = tb_multi_count(ops);
        rv = tb_multi_check(ops, m->node, -1);
    }
    pthread_mutex_unlock(m->mu);
    return rv;
}

int tb_mutex_fence(struct tb_mutex *m, struct tb_multi *ops)
{
    int at;

    return fence_node(m, ops, &at);
}

/* The multi's outcome as the fenced write reports it: the check's
 * failure is the lock's loss, whatever else failed with it; so is the
 * session's expiry, which deletes the lock node (a write it ended either
 * applied while the node was there, or not at all). */
static int fenced_rc(int rc, const struct tb_op_result *r, int count, int at)
{
    if (rc == TB_ESESSIONEXPIRED ||
        (rc != 0 && at < count && r[at].rc == TB_ENONODE))
        return TB_ELOCKLOST;
    return rc;
}

struct fenced {
    int at;
    tb_multi_cb cb;
    void *data;
};

static void on_fenced(struct tb_client *c, int rc,
                      const struct tb_op_result *results, int count, void *data)
{
    struct fenced *f = data;

    if (f->cb != NULL)
        f->cb(c, fenced_rc(rc, results, count, f->at), results, count, f->data);
    free(f);
}

int tb_fenced_exec(struct tb_mutex *m, struct tb_multi *ops, tb_multi_cb cb,
                   void *data)
{
    struct fenced *f = calloc(1, sizeof *f);
    int rv;

    if (f == NULL)
        return TB_ENOMEM;
    f->cb = cb;
    f->data = data;
    rv = fence_node(m, ops, &f->at);
    if (rv == 0)
        rv = tb_multi_exec(m->c, ops, on_fenced, f);
    if (rv != 0)
        free(f);
    return rv;
}

int tb_fenced_exec_sync(struct tb_mutex *m, struct tb_multi *ops,
                        struct tb_multi_results *out)
{
    struct tb_multi_results r = {0, NULL};
    int at, rv;

    if ((rv = fence_node(m, ops, &at)) != 0)
        return rv;
    rv = tb_multi_exec_sync(m->c, ops, &r);
    rv = fenced_rc(rv, r.v, r.count, at);
    if (out != NULL)
        *out = r;
    else
        tb_multi_results_free(&r);
    return rv;
}

int tb_fenced_set_data_sync(struct tb_mutex *m, const char *path,
                            const void *value, size_t len, int32_t version,
                            struct tb_stat *stat)
{
    struct tb_multi *ops = tb_multi_new();
    struct tb_multi_results r = {0, NULL};
    int rv;

    if (ops == NULL)
        return TB_ENOMEM;
    rv = tb_multi_set_data(ops, path, value, len, version);
    if (rv == 0)
        rv = tb_fenced_exec_sync(m, ops, &r);
    if (rv == 0 && stat != NULL && r.count > 0 && r.v[0].stat != NULL)
        *stat = *r.v[0].stat;
    tb_multi_results_free(&r);
    tb_multi_free(ops);
    return rv;
}

/* ---- the token check ---- */

/* The kinds whose first nodes hold: every lock kind, and an election's
 * candidates (its leader holds a token too). */
#define CHECK_KINDS (RCP_LOCK_KINDS | RCP_KIND(TB_NODE_LATCH))

struct tcheck {
    struct tb_client *c;
    char *path;
    int leases;  /* path is a semaphore's PATH/leases */
    int holders; /* the first `holders` nodes read hold; those after them
                    are readers behind a writer, which hold if they are
                    its session's (a downgrade) */
    int64_t token;
    tb_done_cb cb;
    void *data;
};

static void check_end(struct tcheck *k, int rc)
{
    if (k->cb != NULL)
        k->cb(rc, k->data);
    free(k->path);
    free(k);
}

/* Session over or closing: the answer is unknown, say why.  A node that
 * is not there (the lock's parent, a holder's node): not current. */
static int check_rc(int rc)
{
    return rc == TB_ENONODE ? TB_ELOCKLOST : rc;
}

static void on_holders(struct tb_client *c, int rc,
                       const struct tb_op_result *r, int count, void *data)
{
    struct tcheck *k = data;
    int i, found = 0;

    (void)c;
    if (rc != 0) {
        check_end(k, check_rc(rc));
        return;
    }
    /* A holder deleted since the listing reads as ENONODE: its token is
     * stale now.  A reader behind the writer holds beside it if it is the
     * writer's own (read through the writer's handle: the downgrade), and
     * any of them does once the writer is gone.  Another handle of the
     * writer's session queued there would count too; but waiting, it was
     * never granted, and no one has its token. */
    for (i = 0; i < count; i++)
        if (r[i].rc == 0 && r[i].stat != NULL && r[i].stat->czxid == k->token &&
            (i < k->holders || r[0].rc == TB_ENONODE ||
             (r[0].rc == 0 && r[0].stat != NULL &&
              r[i].stat->ephemeral_owner == r[0].stat->ephemeral_owner)))
            found = 1;
    check_end(k, found ? 0 : TB_ELOCKLOST);
}

/* How many of the sorted children hold now, by their kinds: the first,
 * and while they are shared (readers), every reader before the first
 * exclusive node. */
int rcp_holders(const struct rcp_child *v, int n)
{
    int i;

    if (n == 0)
        return 0;
    if (!tb_lock_node_shared(v[0].kind))
        return 1;
    for (i = 1; i < n && tb_lock_node_shared(v[i].kind); i++)
        ;
    return i;
}

static int ask_holders(struct tcheck *k, const struct tb_strings *v)
{
    struct rcp_child *kids = calloc((size_t)v->count + 1, sizeof *kids);
    struct tb_multi *ops = tb_multi_new();
    int n, h, i, rv = TB_ENOMEM;

    if (kids != NULL && ops != NULL) {
        n = rcp_children_sort(
            v, k->leases ? RCP_KIND(TB_NODE_LEASE) : CHECK_KINDS, kids, NULL);
        h = k->leases ? n : rcp_holders(kids, n);
        k->holders = h;
        /* A writer first: the readers right behind it are read too. */
        if (!k->leases && h == 1 && !tb_lock_node_shared(kids[0].kind))
            while (h < n && tb_lock_node_shared(kids[h].kind))
                h++;
        rv = h == 0 ? TB_ELOCKLOST : 0;
        for (i = 0; i < h && rv == 0; i++) {
            char *p = rcp_join(k->path, kids[i].name);
            rv = p == NULL ? TB_ENOMEM : tb_multi_get_data(ops, p);
            free(p);
        }
        if (rv == 0)
            rv = tb_multi_exec(k->c, ops, on_holders, k);
    }
    tb_multi_free(ops);
    free(kids);
    return rv;
}

static int has_child(const struct tb_strings *v, const char *name)
{
    int i;

    for (i = 0; i < v->count; i++)
        if (strcmp(v->v[i], name) == 0)
            return 1;
    return 0;
}

static void on_children(struct tb_client *c, int rc, const struct tb_strings *v,
                        const struct tb_stat *st, void *data)
{
    struct tcheck *k = data;

    if (rc != 0) {
        check_end(k, check_rc(rc));
        return;
    }
    /* A non-fair lock or leader is PATH itself, an ephemeral node. */
    if (st->ephemeral_owner != 0) {
        check_end(k, st->czxid == k->token ? 0 : TB_ELOCKLOST);
        return;
    }
    if (!k->leases && has_child(v, "leases")) { /* a semaphore's PATH */
        char *p = rcp_join(k->path, "leases");
        if (p == NULL) {
            check_end(k, TB_ENOMEM);
            return;
        }
        free(k->path);
        k->path = p;
        k->leases = 1;
        if ((rc = tb_get_children2(c, p, NULL, NULL, on_children, k)) != 0)
            check_end(k, check_rc(rc));
        return;
    }
    if ((rc = ask_holders(k, v)) != 0)
        check_end(k, rc);
}

static void on_synced(struct tb_client *c, int rc, void *data)
{
    struct tcheck *k = data;

    if (rc == 0)
        rc = tb_get_children2(c, k->path, NULL, NULL, on_children, k);
    if (rc != 0)
        check_end(k, check_rc(rc));
}

int tb_token_check(struct tb_client *c, const char *path, int64_t token,
                   tb_done_cb cb, void *data)
{
    struct tcheck *k;
    int rv;

    if (c == NULL || !rcp_path_ok(path) || token <= 0)
        return TB_EINVAL;
    k = calloc(1, sizeof *k);
    if (k == NULL || (k->path = rcp_strdup(path)) == NULL) {
        free(k);
        return TB_ENOMEM;
    }
    k->c = c;
    k->token = token;
    k->cb = cb;
    k->data = data;
    rv = tb_sync(c, path, on_synced, k);
    if (rv != 0) {
        free(k->path);
        free(k);
    }
    return rv;
}

struct tsync {
    struct tb_client *c;
    const char *path;
    int64_t token;
};

static int tsync_start(void *arg, int timeout_ms, struct rcp_wait *w)
{
    struct tsync *t = arg;

    (void)timeout_ms;
    return tb_token_check(t->c, t->path, t->token, rcp_wait_done_cb, w);
}

int tb_token_check_sync(struct tb_client *c, const char *path, int64_t token)
{
    struct tsync t = {c, path, token};
    struct rcp_wait w;

    if (c == NULL)
        return TB_EINVAL;
    return rcp_sync_run(c, &w, -1, tsync_start, NULL, &t);
}
