/* ZooKeeper's quotas.  A node /zookeeper/quota<P>/zookeeper_limits puts the
 * subtree at P under a quota ("count=N,bytes=M", -1 for none), and
 * /zookeeper/quota<P>/zookeeper_stats holds what the subtree uses, in the
 * same form.  Every create, delete and setData in the subtree updates the
 * stats of the deepest P above it, without changing the stats node's Stat,
 * as DataTree.updateQuotaStat does; creating the stats node counts the
 * subtree afresh.  Going over a limit is reported through the tree's quota
 * callback.  tree_quota_check refuses a write beforehand that would go over
 * a hard limit ("countHardLimit", "byteHardLimit"); the caller decides
 * whether to ask, as ZooKeeper asks only with zookeeper.enforceQuota.
 *
 * Whether a path is under a quota is read from the tree itself, so a
 * rolled-back multi and a restored snapshot need nothing more; with no
 * quota at all, /zookeeper/quota has no children and a write pays one
 * test. */
#include "tree/tree_int.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QROOT     "/zookeeper/quota"
#define QROOT_LEN (sizeof QROOT - 1)
#define LIMITS    "zookeeper_limits"
#define STATS     "zookeeper_stats"

/* The value of key in "k=v,k=v;k=v", read as ZooKeeper's StatsTrack reads
 * it: pairs split at ',' or ';', a value ends at the next '=' (3.8's zkCli
 * writes "count=4,bytes=-1=;byteHardLimit=-1;countHardLimit=-1"), the last
 * pair with the key wins.  0, or -1 when absent or not a number. */
static int kv_get(struct tb_str s, const char *key, int64_t *v)
{
    size_t klen = strlen(key), i = 0, j, k;
    char num[24];
    char *end;
    int found = -1;

    for (; i < s.len; i = j + 1) {
        for (j = i; j < s.len && s.ptr[j] != ',' && s.ptr[j] != ';'; j++)
            ;
        if (j - i <= klen || memcmp(s.ptr + i, key, klen) != 0 ||
            s.ptr[i + klen] != '=')
            continue;
        for (k = i + klen + 1; k < j && s.ptr[k] != '='; k++)
            ;
        k -= i + klen + 1;
        found = -1;
        if (k == 0 || k >= sizeof num)
            continue;
        memcpy(num, s.ptr + i + klen + 1, k);
        num[k] = '\0';
        /* As Java's Long.parseLong: a sign at most, digits, in range (no
         * blank, which strtoll would skip; no overflow, which it would
         * saturate). */
        if (!isdigit((unsigned char)num[num[0] == '-' || num[0] == '+']))
            continue;
        errno = 0;
        *v = strtoll(num, &end, 10);
        found = end == num + k && errno == 0 ? 0 : -1; /* not at a '\0' */
    }
    return found;
}

/* a + b as Java's longs add, wrapping: the stats are client-writable, and
 * a count set near INT64_MAX must not make the next write undefined. */
static int64_t add(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a + (uint64_t)b);
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

/* Replaces a stats node's data, as a setData that leaves its Stat alone. */
static void put_stats(struct tree *t, struct tree_node *n, int64_t count,
                      int64_t bytes)
{
    char buf[64];
    int len = snprintf(buf, sizeof buf, "count=%" PRId64 ",bytes=%" PRId64,
                       count, bytes);

    if (tree__put_data(t, n, (struct tb_str){buf, (size_t)len}) != 0)
        t->quota_failed = 1;
}

static void report(struct tree *t, struct tb_str prefix,
                   const struct tree_node *limits, const char *key,
                   int64_t used)
{
    int64_t limit;

    if (t->quota_cb != NULL && kv_get(node_data(limits), key, &limit) == 0 &&
        limit > -1 && used > limit)
        t->quota_cb(t->quota_arg, prefix, key, used, limit, 0);
}

/* The quota over path: the deepest prefix of it, itself included, with
 * limits ("/" is never one).  *len is its length, with its limits and stats
 * nodes; 0 when there is none, or it has no stats, whose absence ZooKeeper
 * takes as no quota.  Returns 0 or TB_ENOMEM. */
static int find_quota(const struct tree *t, struct tb_str path, size_t *len,
                      struct tree_node **limits, struct tree_node **stats)
{
    const struct tree_node *quota = t->quota;
    size_t n = path.len;
    char *buf;

    *limits = *stats = NULL;
    *len = 0;
    if (quota == NULL || quota->nkids == 0)
        return 0;
    if ((buf = malloc(QROOT_LEN + n + sizeof "/" LIMITS)) == NULL)
        return TB_ENOMEM;
    memcpy(buf, QROOT, QROOT_LEN);
    memcpy(buf + QROOT_LEN, path.ptr, n);
    for (; n > 1; n--) {
        if (n < path.len && path.ptr[n] != '/')
            continue;
        if ((*limits = qnode(t, buf, n, "/" LIMITS)) != NULL) {
            *stats = qnode(t, buf, n, "/" STATS);
            break;
        }
    }
    free(buf);
    *len = *stats != NULL ? n : 0;
    return 0;
}

static int64_t stat_of(const struct tree_node *stats, const char *key)
{
    int64_t v;

    return kv_get(node_data(stats), key, &v) == 0 ? v : -1;
}

void tree__quota_add(struct tree *t, const struct tree_node *n, int64_t count,
                     int64_t bytes)
{
    struct tree_node *limits, *stats;
    struct tb_str path = {n->path, n->path_len};
    int64_t c, b;

    /* Out of memory, the write that has already happened is failed whole
     * (tree_failed).  A stats node under a quota of its own counts only
     * others' changes. */
    if (find_quota(t, path, &path.len, &limits, &stats) != 0) {
        t->quota_failed = 1;
        return;
    }
    if (path.len == 0 || stats == n)
        return;
    c = add(stat_of(stats, "count"), count);
    b = add(stat_of(stats, "bytes"), bytes);
    put_stats(t, stats, c, b);
    report(t, path, limits, "count", c);
    report(t, path, limits, "bytes", b);
}

/* Whether adding diff to the stats' `used` passes the hard limit `key`
 * (reported if so); a write that leaves `used` alone is not checked. */
static int over_hard(struct tree *t, struct tb_str prefix,
                     const struct tree_node *limits,
                     const struct tree_node *stats, const char *key,
                     const char *used_key, int64_t diff)
{
    int64_t limit, used = add(stat_of(stats, used_key), diff);

    if (diff == 0 || kv_get(node_data(limits), key, &limit) != 0 || limit < 0 ||
        used <= limit)
        return 0;
    if (t->quota_cb != NULL)
        t->quota_cb(t->quota_arg, prefix, key, used, limit, 1);
    return 1;
}

int tree_quota_check(struct tree *t, struct tb_str path, int64_t count,
                     int64_t bytes)
{
    struct tree_node *limits, *stats;
    int rv = find_quota(t, path, &path.len, &limits, &stats);

    if (rv != 0 || path.len == 0)
        return rv;
    if (over_hard(t, path, limits, stats, "countHardLimit", "count", count) ||
        over_hard(t, path, limits, stats, "byteHardLimit", "bytes", bytes))
        return TB_EQUOTAEXCEEDED;
    return 0;
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
                bytes = add(bytes, (int64_t)m->data_len);
            }
        put_stats(t, n, count, bytes);
    }
    tree__quota_add(t, n, 1, created);
}

static int is_named(const struct tree_node *n, const char *name)
{
    size_t len = n->path_len - n->name_off;

    return len == strlen(name) && memcmp(n->path + n->name_off, name, len) == 0;
}

static int64_t limit_of(const struct tree_node *limits, const char *hard,
                        const char *soft)
{
    int64_t v = stat_of(limits, hard);

    return v > -1 ? v : stat_of(limits, soft);
}

void tree_quota_namespaces(const struct tree *t,
                           void (*fn)(void *arg,
                                      const struct tree_quota_sums *sums),
                           void *arg)
{
    const struct tree_node *top, *m;
    struct tree_quota_sums s;
    uint32_t i;

    for (i = 0; t->quota != NULL && i < t->quota->nkids; i++) {
        top = t->quota->kids[i];
        memset(&s, 0, sizeof s);
        s.ns = (struct tb_str){top->path + top->name_off,
                               top->path_len - top->name_off};
        for (m = top; m != NULL; m = tree__walk_next(m, top)) {
            if (m->nkids != 0 || m->data_null)
                continue;
            if (is_named(m, LIMITS)) {
                s.limits = 1;
                s.count_limit =
                    add(s.count_limit, limit_of(m, "countHardLimit", "count"));
                s.bytes_limit =
                    add(s.bytes_limit, limit_of(m, "byteHardLimit", "bytes"));
            } else if (is_named(m, STATS)) {
                s.stats = 1;
                s.count = add(s.count, stat_of(m, "count"));
                s.bytes = add(s.bytes, stat_of(m, "bytes"));
            }
        }
        if (s.limits || s.stats)
            fn(arg, &s);
    }
}

void tree_on_quota(struct tree *t, tree_quota_cb cb, void *arg)
{
    t->quota_cb = cb;
    t->quota_arg = arg;
}
