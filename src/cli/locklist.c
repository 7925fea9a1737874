/* Reading one lock path's holders and waiters from the tree: which
 * layout PATH holds (found from its children's names), its nodes with
 * their stat and data, in queue order, and which of them hold.  The
 * layouts are drawn in locklist.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/locklist.h"

/* The KIND column, by enum tb_lock_node. */
static const char *const kind_names[] = {
    "other", "lock", "write", "read", "kz-lock", "kz-read", "latch", "lease"};
static const char *const layout_names[] = {
    "none",     "lock",   "semaphore", "election",
    "non-fair", "foreign"}; /* "lock" is spelled out by lock_layout_name */

#define BIT(k) (1u << (unsigned)(k))
#define LOCK_KINDS                                                             \
    (BIT(TB_NODE_MUTEX) | BIT(TB_NODE_WRITE) | BIT(TB_NODE_READ) |             \
     BIT(TB_NODE_KAZOO_LOCK) | BIT(TB_NODE_KAZOO_READ))

const char *ll_kind_name(int kind)
{
    if (kind < 0 || kind >= (int)(sizeof kind_names / sizeof kind_names[0]))
        return kind_names[0];
    return kind_names[kind];
}

/* Reads the node `full` into the listing under the name `rel` (taken
 * over); a node gone meanwhile is skipped. */
static int add_path(struct tb_client *c, struct ll_listing *l, const char *full,
                    char *rel, int kind, int64_t seq)
{
    struct ll_entry *e;
    int rc;

    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 16;
        struct ll_entry *v = realloc(l->v, (size_t)cap * sizeof *v);
        if (v == NULL) {
            free(rel);
            return TB_ENOMEM;
        }
        l->v = v;
        l->cap = cap;
    }
    e = &l->v[l->n];
    memset(e, 0, sizeof *e);
    l->reads++;
    rc = tb_get_data_sync(c, full, NULL, NULL, &e->data, &e->len, &e->st);
    if (rc != 0) {
        free(rel);
        return rc == TB_ENONODE ? 0 : rc;
    }
    e->rel = rel;
    e->kind = kind;
    e->seq = seq;
    l->n++;
    return 0;
}

static int add_node(struct tb_client *c, struct ll_listing *l, const char *sub,
                    const char *name)
{
    size_t n = strlen(l->path) + strlen(sub) + strlen(name) + 3;
    char *full = malloc(n), *rel = malloc(n);
    int64_t seq;
    int rc, kind = tb_lock_node_kind(name, &seq);

    if (full == NULL || rel == NULL) {
        free(full);
        free(rel);
        return TB_ENOMEM;
    }
    snprintf(rel, n, "%s%s%s", sub, *sub ? "/" : "", name);
    snprintf(full, n, "%s/%s", strcmp(l->path, "/") ? l->path : "", rel);
    rc = add_path(c, l, full, rel, kind, seq);
    free(full);
    return rc;
}

/* Adds the names of `ch`, children of PATH/sub, whose kind is in the set
 * `kinds`. */
static int add_names(struct tb_client *c, struct ll_listing *l, const char *sub,
                     const struct tb_strings *ch, unsigned kinds)
{
    int32_t i;
    int rc = 0;

    for (i = 0; i < ch->count && rc == 0; i++)
        if (kinds & BIT(tb_lock_node_kind(ch->v[i], NULL)))
            rc = add_node(c, l, sub, ch->v[i]);
    return rc;
}

/* Lists PATH/sub (a semaphore's leases or locks) and adds its children
 * whose kind is in the set `kinds`. */
static int add_children(struct tb_client *c, struct ll_listing *l,
                        const char *sub, unsigned kinds)
{
    size_t n = strlen(l->path) + strlen(sub) + 2;
    char *dir = malloc(n);
    struct tb_strings ch;
    int rc;

    if (dir == NULL)
        return TB_ENOMEM;
    snprintf(dir, n, "%s%s%s", l->path, strcmp(l->path, "/") ? "/" : "", sub);
    l->reads++;
    rc = tb_get_children_sync(c, dir, NULL, NULL, &ch);
    free(dir);
    if (rc == TB_ENONODE)
        return 0;
    if (rc != 0)
        return rc;
    rc = add_names(c, l, sub, &ch, kinds);
    tb_strings_free(&ch);
    return rc;
}

static int sem_parent(const char *name)
{
    return strcmp(name, "leases") == 0 || strcmp(name, "locks") == 0;
}

static int detect(const struct tb_strings *ch, const struct tb_stat *st)
{
    int32_t i;
    int lock = 0, latch = 0, sem = 0;

    for (i = 0; i < ch->count; i++) {
        int k = tb_lock_node_kind(ch->v[i], NULL);
        sem |= sem_parent(ch->v[i]);
        lock |= (LOCK_KINDS & BIT(k)) != 0;
        latch |= k == TB_NODE_LATCH;
    }
    if (sem)
        return LL_SEM;
    if (lock)
        return LL_LOCK;
    if (latch)
        return LL_ELECT;
    if (st->ephemeral_owner != 0)
        return LL_NONFAIR;
    return ch->count > 0 ? LL_FOREIGN : LL_NONE;
}

/* 1 if the child `name` of PATH is part of the layout found. */
static int belongs(int layout, const char *name)
{
    int k = tb_lock_node_kind(name, NULL);

    switch (layout) {
    case LL_SEM:
        return sem_parent(name);
    case LL_LOCK:
        return (LOCK_KINDS & BIT(k)) != 0;
    case LL_ELECT:
        return k == TB_NODE_LATCH;
    default:
        return 0;
    }
}

/* Keeps the names of PATH's children that are not the layout's. */
static int note_others(struct ll_listing *l, const struct tb_strings *ch)
{
    int32_t i;

    l->other = calloc((size_t)ch->count + 1, sizeof *l->other);
    if (l->other == NULL)
        return TB_ENOMEM;
    for (i = 0; i < ch->count; i++)
        if (!belongs(l->layout, ch->v[i]) &&
            (l->other[l->nother] = strdup(ch->v[i])) != NULL)
            l->nother++;
    return 0;
}

static int cmp_entry(const void *a, const void *b)
{
    const struct ll_entry *x = a, *y = b;
    /* Semaphore: leases before the locks/ queue.  Every other layout is
     * one queue in sequence order, mutex nodes among the others. */
    int gx = x->kind != TB_NODE_LEASE, gy = y->kind != TB_NODE_LEASE;

    if (gx != gy)
        return gx - gy;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Marks the holders, per layout. */
static void assign_roles(struct ll_listing *l)
{
    int i, exclusive_seen = 0, leases = 0;

    for (i = 0; i < l->n; i++) {
        struct ll_entry *e = &l->v[i];
        switch (l->layout) {
        case LL_LOCK:
            if (tb_lock_node_shared(e->kind)) {
                e->holds = !exclusive_seen;
            } else {
                e->holds = i == 0;
                exclusive_seen = 1;
            }
            break;
        case LL_SEM:
            if (e->kind == TB_NODE_LEASE) {
                e->holds = l->max_leases == 0 || leases < l->max_leases;
                leases++;
            }
            break;
        default:
            e->holds = i == 0;
        }
    }
}

int ll_holding(const struct ll_listing *l)
{
    int i, nh = 0;

    for (i = 0; i < l->n; i++)
        nh += l->v[i].holds;
    return nh;
}

void ll_owner(const struct ll_listing *l, const struct ll_entry *e,
              const char **p, size_t *n)
{
    *p = e->data;
    *n = e->data ? e->len : 0;
    if (l->layout == LL_NONFAIR && *n >= 39 && memcmp(*p, "_c_", 3) == 0) {
        *p += 39;
        *n -= 39;
        if (*n > 0 && **p == '-') {
            (*p)++;
            (*n)--;
        }
    }
}

/* "mutex", "read-write", "kazoo" or a mix of them ("mutex+read-write"):
 * the kinds of lock queued on one path. */
static void lock_layout_name(const struct ll_listing *l, char *buf, size_t cap)
{
    static const struct {
        unsigned kinds;
        const char *name;
    } parts[] = {
        {BIT(TB_NODE_MUTEX), "mutex"},
        {BIT(TB_NODE_READ) | BIT(TB_NODE_WRITE), "read-write"},
        {BIT(TB_NODE_KAZOO_LOCK) | BIT(TB_NODE_KAZOO_READ), "kazoo"},
    };
    unsigned seen = 0;
    size_t i, len = 0;
    int j;

    for (j = 0; j < l->n; j++)
        seen |= BIT(l->v[j].kind);
    buf[0] = '\0';
    for (i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if ((seen & parts[i].kinds) != 0 && len < cap)
            len += (size_t)snprintf(buf + len, cap - len, "%s%s",
                                    len ? "+" : "", parts[i].name);
    if (len == 0) /* every node went meanwhile */
        snprintf(buf, cap, "%s", "mutex");
}

const char *ll_layout_name(const struct ll_listing *l, char *buf, size_t cap)
{
    if (l->layout != LL_LOCK)
        return layout_names[l->layout];
    lock_layout_name(l, buf, cap);
    return buf;
}

int ll_collect_from(struct tb_client *c, struct ll_listing *l,
                    const struct tb_strings *ch, const struct tb_stat *st)
{
    int rc;

    l->layout = detect(ch, st);
    if ((rc = note_others(l, ch)) != 0)
        return rc;
    switch (l->layout) {
    case LL_SEM:
        if ((rc = add_children(c, l, "leases", BIT(TB_NODE_LEASE))) == 0)
            rc = add_children(c, l, "locks", BIT(TB_NODE_MUTEX));
        break;
    case LL_LOCK:
        rc = add_names(c, l, "", ch, LOCK_KINDS);
        break;
    case LL_ELECT:
        rc = add_names(c, l, "", ch, BIT(TB_NODE_LATCH));
        break;
    case LL_NONFAIR: {
        char *rel = strdup(".");
        rc = rel ? add_path(c, l, l->path, rel, TB_NODE_MUTEX, 0) : TB_ENOMEM;
    } break;
    default:
        break;
    }
    if (rc == 0 && l->n > 1)
        qsort(l->v, (size_t)l->n, sizeof l->v[0], cmp_entry);
    assign_roles(l);
    return rc;
}

int ll_collect(struct tb_client *c, struct ll_listing *l)
{
    struct tb_strings ch;
    struct tb_stat st;
    int rc;

    rc = tb_get_children2_sync(c, l->path, NULL, NULL, &ch, &st);
    if (rc == TB_ENONODE) {
        l->layout = LL_NONE;
        return 0;
    }
    if (rc != 0)
        return rc;
    rc = ll_collect_from(c, l, &ch, &st);
    tb_strings_free(&ch);
    return rc;
}

void ll_free(struct ll_listing *l)
{
    int i;

    for (i = 0; i < l->n; i++) {
        free(l->v[i].rel);
        tb_free(l->v[i].data);
    }
    free(l->v);
    for (i = 0; i < l->nother; i++)
        free(l->other[i]);
    free(l->other);
    l->v = NULL;
    l->other = NULL;
    l->n = l->cap = l->nother = 0;
}
