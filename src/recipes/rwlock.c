/* The read-write lock: two engines on one parent, as Curator's
 * InterProcessReadWriteLock lays it out:
 *
 *   PATH/_c_<uuid>-__READ__<seq>   a reader's node
 *   PATH/_c_<uuid>-__WRIT__<seq>   a writer's node
 *
 * Both kinds sort together by sequence.  A writer holds when it is first
 * (it waits for the node just before it, reader or writer); a reader
 * holds when no writer is queued before it (it waits for the nearest such
 * writer), or when the same handle holds the write side: that is how a
 * writer downgrades (take the read side, then release the write side).
 *
 * The two engines share the write engine's mutex, so the read side's
 * predicate can look at the write side's hold; the read engine keeps a
 * reference on the write engine for that mutex (rcp_lk_new_read). */
#include "recipes/rcp.h"

struct tb_rwlock {
    struct tb_mutex *rd, *wr;
};

int tb_rwlock_new(struct tb_rwlock **out, struct tb_client *c, const char *path,
                  const struct tb_lock_options *o)
{
    struct tb_rwlock *l;
    int rv;

    if (out == NULL)
        return TB_EINVAL;
    l = calloc(1, sizeof *l);
    if (l == NULL)
        return TB_ENOMEM;
    if ((rv = rcp_lk_new(&l->wr, c, path, &rcp_cfg_write, o)) != 0) {
        free(l);
        return rv;
    }
    if ((rv = rcp_lk_new_read(&l->rd, c, path, o, l->wr)) != 0) {
        rcp_lk_free(l->wr);
        free(l);
        return rv;
    }
    l->wr->peer = l->rd;
    l->rd->embedded = 1;
    l->wr->embedded = 1;
    *out = l;
    return 0;
}

void tb_rwlock_free(struct tb_rwlock *l)
{
    if (l == NULL)
        return;
    pthread_mutex_lock(l->wr->mu);
    l->wr->peer = NULL; /* the read engine may go first */
    pthread_mutex_unlock(l->wr->mu);
    rcp_lk_free(l->rd);
    rcp_lk_free(l->wr);
    free(l);
}

struct tb_mutex *tb_rwlock_read(struct tb_rwlock *l)
{
    return l->rd;
}

struct tb_mutex *tb_rwlock_write(struct tb_rwlock *l)
{
    return l->wr;
}
