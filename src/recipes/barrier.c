/* The barrier: Curator's DistributedBarrier.  The barrier is up while the
 * node PATH exists (persistent, its parents containers); waiters wait
 * until it is gone.  Set and remove are idempotent, as Curator's are (an
 * existing node, a missing one, are fine). */
#include "recipes/rcp.h"

struct bop {
    int set;
    tb_done_cb cb;
    void *data;
};

/* Set's create and remove's delete: already so is fine.  Only that: a
 * set's NoNode (its parents could not be made) is no barrier up. */
static void bop_done(int rc, void *data)
{
    struct bop *b = data;

    if (rc == (b->set ? TB_ENODEEXISTS : TB_ENONODE))
        rc = 0;
    if (b->cb != NULL)
        b->cb(rc, b->data);
    free(b);
}

static void on_delete(struct tb_client *c, int rc, void *data)
{
    (void)c;
    bop_done(rc, data);
}

static int bop_start(struct tb_client *c, const char *path, int set,
                     tb_done_cb cb, void *data)
{
    struct bop *b;
    int rv;

    if (c == NULL || !rcp_path_ok(path) || path[1] == '\0')
        return TB_EINVAL;
    if ((b = calloc(1, sizeof *b)) == NULL)
        return TB_ENOMEM;
    b->set = set;
    b->cb = cb;
    b->data = data;
    rv = set ? rcp_create_in(c, path, NULL, 0, TB_PERSISTENT, bop_done, b)
             : tb_delete(c, path, -1, on_delete, b);
    if (rv != 0)
        free(b);
    return rv;
}

int tb_barrier_set(struct tb_client *c, const char *path, tb_done_cb cb,
                   void *data)
{
    return bop_start(c, path, 1, cb, data);
}

int tb_barrier_remove(struct tb_client *c, const char *path, tb_done_cb cb,
                      void *data)
{
    return bop_start(c, path, 0, cb, data);
}

int tb_barrier_wait(struct tb_client *c, const char *path, int timeout_ms,
                    tb_done_cb cb, void *data)
{
    if (c == NULL || !rcp_path_ok(path))
        return TB_EINVAL;
    return rcp_nw_start(c, path, 0, timeout_ms, cb, data, NULL);
}

/* ---- synchronous forms ---- */

struct bsync {
    struct tb_client *c;
    const char *path;
    int set;
};

static int bsync_start(void *arg, int timeout_ms, struct rcp_wait *w)
{
    struct bsync *b = arg;

    (void)timeout_ms;
    return bop_start(b->c, b->path, b->set, rcp_wait_done_cb, w);
}

static int sync_op(struct tb_client *c, const char *path, int set)
{
    struct bsync b = {c, path, set};
    struct rcp_wait w;

    if (c == NULL)
        return TB_EINVAL;
    return rcp_sync_run(c, &w, -1, bsync_start, NULL, &b);
}

int tb_barrier_set_sync(struct tb_client *c, const char *path)
{
    return sync_op(c, path, 1);
}

int tb_barrier_remove_sync(struct tb_client *c, const char *path)
{
    return sync_op(c, path, 0);
}

int tb_barrier_wait_sync(struct tb_client *c, const char *path, int timeout_ms)
{
    return rcp_nw_sync(c, path, 0, timeout_ms);
}
