/* ZooKeeper's quotas.  A node /zookeeper/quota<P>/zookeeper_limits puts the
 * subtree at P under a quota ("count=N,bytes=M", -1 for none), and
 * /zookeeper/quota<P>/zookeeper_stats holds what the subtree uses, in the
 * same form.  Every create, delete and setData in the subtree updates the
 * stats of the deepest P above it, without changing the stats node's Stat,
 * as DataTree.updateQuotaStat does; creating the stats node counts the
 * subtree afresh.  Limits are not enforced (ZooKeeper's default): going over
 * one is reported through the tree's quota callback.
 *
 * Whether a path is under a quota is read from the tree itself, so a
 * rolled-back multi and a restored snapshot need nothing more; with no
 * quota at all, /zookeeper/quota has no children and a write pays one
 * test. */
#include "tree/tree_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QROOT     "/zookeeper/quota"
#define QROOT_LEN (sizeof QROOT - 1)
#define LIMITS    "zookeeper_limits"
#define STATS     "zookeeper_stats"

/* The value of key in "k=v,k=v": 0, or -1 when absent or not a number.  A
 * value ends at the next '=' too, as ZooKeeper's StatsTrack reads it: 3.8's
 * zkCli writes limits as "count=4,bytes=-1=;byteHardLimit=-1;...". */
static int kv_get(struct tb_str s, const char *key, int64_t *v)
{
    size_t klen = strlen(key), i = 0, j, k;
    char num[24];
    char *end;

    while (i < s.len) {
        for (j = i; j < s.len && s.ptr[j] != ','; j++)
            ;
        if (j - i > klen && memcmp(s.ptr + i, key, klen) == 0 &&
            s.ptr[i + klen] == '=') {
            for (k = i + klen + 1; k < j && s.ptr[k] != '='; k++)
                ;
            k -= i + klen + 1;
            if (k == 0 || k >= sizeof num)
                return -1;
            memcpy(num, s.ptr + i + klen + 1, k);
            num[k] = '\0';
            *v = strtoll(num, &end, 10);
            return *end == '\0' ? 0 : -1;
        }
        i = j + 1;
    }
    return -1;
}

static struct tb_str node_data(const struct tree_node *n)
{
    return (struct tb_str){(const char *)n->data, n->data_len};
}

/* The node QROOT + path[0, len) + suffix, if any.  buf holds QROOT + path
 * and room for the suffix, which is written over what follows path[len). */
static struct tree_node *qnode(const struct tree *t, char *buf, size_t len,
                               const char *suffix)
{
    size_t slen = strlen(suffix);

    memcpy(buf + QROOT_LEN + len, suffix, slen);
    return tree_find(t, (struct tb_str){buf, QROOT_LEN + len + slen});
}

/* Replaces a stats node's data, as a setData that leaves its Stat alone.
 * Out of memory, the stats miss one change rather than fail a write that
 * has already happened. */
static void put_stats(struct tree *t, struct tree_node *n, int64_t count,
                      int64_t bytes)
{
    char buf[64];
    int len = snprintf(buf, sizeof buf, "count=%" PRId64 ",bytes=%" PRId64,
                       count, bytes);

    (void)tree__put_data(t, n, (struct tb_str){buf, (size_t)len});
}

static void report(struct tree *t, const char *prefix, size_t len,
                   const struct tree_node *limits, const char *key,
                   int64_t used)
{
    int64_t limit;

    if (t->quota_cb != NULL && kv_get(node_data(limits), key, &limit) == 0 &&
        limit > -1 && used > limit)
        t->quota_cb(t->quota_arg, (struct tb_str){prefix, len}, key, used,
                    limit);
}

void tree__quota_add(struct tree *t, const struct tree_node *n, int64_t count,
                     int64_t bytes)
{
    struct tree_node *quota = t->quota, *limits = NULL, *stats = NULL;
    const char *path = n->path;
    size_t len = n->path_len;
    int64_t c, b;
    char *buf;

    if (quota == NULL || quota->nkids == 0)
        return;
    if ((buf = malloc(QROOT_LEN + len + sizeof "/" LIMITS)) == NULL)
        return;
    memcpy(buf, QROOT, QROOT_LEN);
    memcpy(buf + QROOT_LEN, path, len);
    /* The deepest prefix of the path, itself included, with limits; "/" is
     * never one. */
    for (; len > 1; len--) {
        if (len < n->path_len && path[len] != '/')
            continue;
        if ((limits = qnode(t, buf, len, "/" LIMITS)) != NULL) {
            stats = qnode(t, buf, len, "/" STATS);
            break;
        }
    }
    free(buf);
    /* A stats node under a quota of its own counts only others' changes. */
    if (stats == NULL || stats == n)
        return;
    if (kv_get(node_data(stats), "count", &c) != 0)
        c = -1;
    if (kv_get(node_data(stats), "bytes", &b) != 0)
        b = -1;
    put_stats(t, stats, c + count, b + bytes);
    report(t, path, len, limits, "count", c + count);
    report(t, path, len, limits, "bytes", b + bytes);
}

void tree__quota_created(struct tree *t, struct tree_node *n)
{
    const struct tree_node *top, *m;
    struct tb_str prefix;
    int64_t count = 0, bytes = 0, created = n->data_len;

    if (t->quota == NULL || t->quota->nkids == 0)
        return; /* no quota, and this is no stats node */
    /* A stats node under /zookeeper/quota/<P>, P not empty. */
    if (n->parent != t->quota && n->path_len > QROOT_LEN + 1 &&
        memcmp(n->path, QROOT "/", QROOT_LEN + 1) == 0 &&
        strcmp(n->path + n->name_off, STATS) == 0) {
        prefix.ptr = n->path + QROOT_LEN;
        prefix.len = n->name_off - 1 - QROOT_LEN;
        if ((top = tree_find(t, prefix)) != NULL)
            for (m = top; m != NULL; m = tree__walk_next(m, top)) {
                count++;
                bytes += m->data_len;
            }
        put_stats(t, n, count, bytes);
    }
    tree__quota_add(t, n, 1, created);
}

void tree_on_quota(struct tree *t, tree_quota_cb cb, void *arg)
{
    t->quota_cb = cb;
    t->quota_arg = arg;
}
