/* The engine's configurations: a row (struct rcp_cfg) for each use of
 * it -- the name of our node, the kinds of node it queues with, and the
 * predicate that says, over the sorted queue, whether we hold or which
 * node to wait for.  The mutex, both sides of the read-write lock, the
 * election's latch and the semaphore's lease are rows here, not code
 * paths; the engine that runs them is lk_acquire.c. */
#include <string.h>

#include "recipes/rcp.h"

static int pred_leases(struct tb_mutex *m, const struct rcp_child *v, int n,
                       int me, int *watch)
{
    (void)v;
    (void)n;
    if (me < m->max_leases)
        return 1;
    *watch = me - m->max_leases;
    return 0;
}

/* Readers share; a reader waits for the nearest exclusive node (a writer,
 * a mutex, a kazoo lock) queued before it (the ZooKeeper recipe; Curator
 * waits for the first writer, which wakes readers that cannot proceed
 * yet).  Holding the write side through the same handle pair lets the
 * read side in at once: that is the downgrade.  Unless another exclusive
 * node queued between our writer and us: once our writer goes it would
 * hold beside us, and to wait for it would be to wait for ourselves. */
static int pred_read(struct tb_mutex *m, const struct rcp_child *v, int n,
                     int me, int *watch)
{
    struct tb_mutex *w = m->peer;
    int i, last = -1;

    (void)n;
    if (w != NULL && w->holds > 0 && w->lstate != TB_LOCK_LOST) {
        const char *ours = w->node != NULL ? strrchr(w->node, '/') + 1 : "";
        for (i = 0; i < me; i++)
            if (!tb_lock_node_shared(v[i].kind) && strcmp(v[i].name, ours))
                return TB_EINVAL;
        return 1;
    }
    for (i = 0; i < me; i++)
        if (!tb_lock_node_shared(v[i].kind))
            last = i;
    if (last < 0)
        return 1;
    *watch = last;
    return 0;
}

/* Semaphore leases (InterProcessSemaphoreV2): proceed while the lease
 * nodes, ours included, are no more than the limit. */
static int pred_count(struct tb_mutex *m, const struct rcp_child *v, int n,
                      int me, int *watch)
{
    (void)v;
    (void)me;
    if (n <= m->max_leases)
        return 1;
    *watch = -1;
    return 0;
}

/* The mutex and both read-write sides queue with every lock kind and
 * refuse anything else on their path (lk_other.c); a mutex or a writer
 * holds when first.  An election queues with its own kind alone, as
 * Curator's does, and refuses anything else too: a lock held on its path
 * is never joined by a leader.  A semaphore's lease queue keeps to its
 * own kind under `leases`, which the semaphore itself guards. */
const struct rcp_cfg rcp_cfg_mutex = {.name = "lock-",
                                      .kinds = RCP_LOCK_KINDS,
                                      .strict = 1,
                                      .fair = 1,
                                      .pred = pred_leases};
const struct rcp_cfg rcp_cfg_nonfair = {.name = ""};
const struct rcp_cfg rcp_cfg_read = {.name = "__READ__",
                                     .kinds = RCP_LOCK_KINDS,
                                     .strict = 1,
                                     .fair = 1,
                                     .pred = pred_read};
const struct rcp_cfg rcp_cfg_write = {.name = "__WRIT__",
                                      .kinds = RCP_LOCK_KINDS,
                                      .strict = 1,
                                      .fair = 1,
                                      .pred = pred_leases};
const struct rcp_cfg rcp_cfg_latch = {.name = "latch-",
                                      .kinds = RCP_KIND(TB_NODE_LATCH),
                                      .strict = 1,
                                      .fair = 1,
                                      .pred = pred_leases};
const struct rcp_cfg rcp_cfg_lease = {.name = "lease-",
                                      .kinds = RCP_KIND(TB_NODE_LEASE),
                                      .fair = 1,
                                      .pred = pred_count,
                                      .children_watch = 1};
