/* The engine meeting nodes it does not queue with: flock's rule says one
 * path is one lock, so a lock never grants while its path holds a node
 * whose holder it cannot see.  It refuses instead, with TB_EFOREIGNLOCK,
 * and keeps a sentence saying what it found and where
 * (tb_mutex_conflict).
 *
 * What is refused:
 *   - fair, strict kinds (mutex, both read-write sides, election): a
 *     child of the path of a kind outside cfg->kinds (kinds.c names it);
 *   - fair: a path that is itself ephemeral (a non-fair lock's or a
 *     leader's node), which the server reports as "no children for
 *     ephemerals" when we create under it or make it a parent;
 *   - non-fair: a path that exists, is no session's ephemeral node and
 *     has children (the parent of a queue).  A childless one is waited
 *     for: it may be an emptied container on its way out (servers do not
 *     tell containers from persistent nodes in a stat). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "recipes/rcp.h"

/* Keeps the sentence (best effort: the code alone still says enough). */
static void set_conflict(struct tb_mutex *m, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void set_conflict(struct tb_mutex *m, const char *fmt, ...)
{
    va_list ap;
    char *s;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s != NULL) {
        va_start(ap, fmt);
        vsnprintf(s, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    free(m->conflict);
    m->conflict = s;
}

int rcp_lk_refuse_children(struct tb_mutex *m, const char *other,
                           struct rcp_out *o)
{
    if (other == NULL || !m->cfg->strict)
        return 0;
    set_conflict(m, "%s%s%s: %s", m->parent, strcmp(m->parent, "/") ? "/" : "",
                 other, tb_lock_node_what(other));
    rcp_lk_fail(m, TB_EFOREIGNLOCK, o);
    return 1;
}

int rcp_lk_refuse_ephemeral(struct tb_mutex *m, int rc, int made_parents,
                            struct rcp_out *o)
{
    if (rc != TB_ENOCHILDRENFOREPHEMERALS)
        return 0;
    if (made_parents)
        set_conflict(m,
                     "%s or a node above it is ephemeral (a non-fair "
                     "lock's or a leader's node): no queue can be made "
                     "under it",
                     m->parent);
    else
        set_conflict(m,
                     "%s is an ephemeral node (a non-fair lock's or a "
                     "leader's): no queue can be made under it",
                     m->parent);
    rcp_lk_fail(m, TB_EFOREIGNLOCK, o);
    return 1;
}

int rcp_lk_refuse_nonfair(struct tb_mutex *m, const struct tb_stat *st,
                          struct rcp_out *o)
{
    /* Servers show 0 as the owner of containers and TTL nodes, so a
     * childless node may be a queue's emptied container, which the server
     * removes by itself: that one is waited for. */
    if (st->ephemeral_owner != 0 || st->num_children == 0)
        return 0;
    set_conflict(m,
                 "%s is the parent of %d node(s), not a non-fair lock's "
                 "node",
                 m->path, (int)st->num_children);
    rcp_lk_fail(m, TB_EFOREIGNLOCK, o);
    return 1;
}

void rcp_lk_clear_conflict(struct tb_mutex *m)
{
    free(m->conflict);
    m->conflict = NULL;
}

int rcp_copy_conflict(const char *conflict, char *buf, size_t cap)
{
    size_t n;

    if (conflict == NULL || buf == NULL || cap == 0)
        return TB_ENONODE;
    n = strlen(conflict);
    if (n >= cap)
        n = cap - 1;
    memcpy(buf, conflict, n);
    buf[n] = '\0';
    return 0;
}

int tb_mutex_conflict(struct tb_mutex *m, char *buf, size_t cap)
{
    int rv;

    if (m == NULL)
        return TB_EINVAL;
    pthread_mutex_lock(m->mu);
    rv = rcp_copy_conflict(m->conflict, buf, cap);
    pthread_mutex_unlock(m->mu);
    return rv;
}
