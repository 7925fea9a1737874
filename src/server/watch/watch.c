/* The watch manager's tables and trigger rules (see watch.h).
 *
 * Layout: a path node per watched path, found by name in one hash table,
 * holds one list per kind of the entries watching it.  An entry is one
 * (path node, owner, kind); a second hash table finds it by that triple so
 * add, remove and check never scan a list.  Each entry is also linked into
 * its owner, next to the owner's other entries on the same path, so an
 * owner can be emptied, or listed path by path, without any lookup.
 *
 * A trigger first collects the owners to notify into a list threaded
 * through the owners themselves (fire_link), marking each with the
 * trigger's stamp so that a second matching entry adds nothing, and removes
 * the one-shot entries it meets; only then does it deliver.  Collecting
 * first keeps the tables consistent while callbacks run, and lets a
 * callback cancel a later delivery by dropping that owner. */
#include "server/watch/watch.h"

#include <stdlib.h>

struct wpath {
    struct watch__hlink h;
    struct tb_queue lists[WATCH_NKINDS]; /* struct wentry.path_link */
    struct tb_queue mgr_link;            /* watch_mgr.path_list */
    size_t nentries;
    size_t len;
    char name[]; /* len bytes, then a NUL */
};

struct wentry {
    struct watch__hlink h;
    struct wpath *path;
    struct watch_owner *owner;
    struct tb_queue path_link;  /* wpath.lists[kind] */
    struct tb_queue owner_link; /* watch_owner.entries */
    enum watch_kind kind;
};

#define HTAB_MIN_BUCKETS 16

/* ---- hashing ---------------------------------------------------------- */

#define FNV_BASIS 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL

/* The finaliser of MurmurHash3: spreads FNV's weak low bits over the
 * bucket index. */
static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

/* FNV-1a runs left to right, so the state after each '/' boundary is the
 * hash of that ancestor: one pass over a path hashes all its ancestors. */
static uint64_t fnv_start(const struct watch_mgr *m)
{
    return FNV_BASIS ^ m->seed;
}

static uint64_t fnv_step(uint64_t h, char c)
{
    return (h ^ (unsigned char)c) * FNV_PRIME;
}

static uint64_t path_hash(const struct watch_mgr *m, const char *p, size_t n)
{
    uint64_t h = fnv_start(m);
    for (size_t i = 0; i < n; i++)
        h = fnv_step(h, p[i]);
    return mix64(h);
}

static uint64_t entry_hash(const struct watch_mgr *m, const struct wpath *pn,
                           const struct watch_owner *w, enum watch_kind kind)
{
    /* Owners are pointer-aligned, so the kind fits in the low bits. */
    uint64_t x = mix64((uint64_t)(uintptr_t)pn ^ m->seed);
    return mix64(x ^ ((uint64_t)(uintptr_t)w | (uint64_t)kind));
}

/* ---- intrusive hash table -------------------------------------------- */

static size_t htab_nbuckets(const struct watch__htab *t)
{
    return t->buckets ? t->mask + 1 : 0;
}

static int htab_resize(struct watch__htab *t, size_t nb)
{
    struct watch__hlink **b = calloc(nb, sizeof(struct watch__hlink *));
    if (b == NULL)
        return TB_ENOMEM;
    for (size_t i = 0; i < htab_nbuckets(t); i++) {
        struct watch__hlink *l = t->buckets[i], *next;
        for (; l != NULL; l = next) {
            next = l->next;
            l->next = b[l->hash & (nb - 1)];
            b[l->hash & (nb - 1)] = l;
        }
    }
    free(t->buckets);
    t->buckets = b;
    t->mask = nb - 1;
    return 0;
}

/* Fails only when the table has no buckets yet: a failed growth merely
 * lengthens the chains. */
static int htab_insert(struct watch__htab *t, struct watch__hlink *l)
{
    if (t->buckets == NULL) {
        if (htab_resize(t, HTAB_MIN_BUCKETS) != 0)
            return TB_ENOMEM;
    } else if (t->n >= htab_nbuckets(t)) {
        (void)htab_resize(t, htab_nbuckets(t) * 2);
    }
    l->next = t->buckets[l->hash & t->mask];
    t->buckets[l->hash & t->mask] = l;
    t->n++;
    return 0;
}

static void htab_remove(struct watch__htab *t, struct watch__hlink *l)
{
    struct watch__hlink **pp = &t->buckets[l->hash & t->mask];
    while (*pp != l)
        pp = &(*pp)->next;
    *pp = l->next;
    t->n--;
}

/* Gives memory back after mass removals; shrinking to a quarter keeps a
 * table that hovers at a threshold from resizing on every call. */
static void htab_shrink(struct watch__htab *t)
{
    size_t nb = htab_nbuckets(t);
    if (t->n == 0) {
        free(t->buckets);
        t->buckets = NULL;
        t->mask = 0;
    } else if (nb > HTAB_MIN_BUCKETS && t->n < nb / 8) {
        size_t want = nb / 4;
        (void)htab_resize(t, want < HTAB_MIN_BUCKETS ? HTAB_MIN_BUCKETS : want);
    }
}

static struct watch__hlink *htab_chain(const struct watch__htab *t,
                                       uint64_t hash)
{
    return t->buckets ? t->buckets[hash & t->mask] : NULL;
}

static void shrink_tables(struct watch_mgr *m)
{
    htab_shrink(&m->entries);
    htab_shrink(&m->paths);
}

/* ---- lookups ---------------------------------------------------------- */

static int path_ok(struct tb_str path)
{
    return path.ptr != NULL && path.len > 0 && path.ptr[0] == '/' &&
           path.len < SIZE_MAX / 2;
}

static struct wpath *path_find(const struct watch_mgr *m, const char *p,
                               size_t len, uint64_t hash)
{
    struct watch__hlink *l = htab_chain(&m->paths, hash);
    for (; l != NULL; l = l->next) {
        struct wpath *pn = TB_CONTAINER_OF(l, struct wpath, h);
        if (l->hash == hash && pn->len == len && memcmp(pn->name, p, len) == 0)
            return pn;
    }
    return NULL;
}

static struct wpath *path_lookup(const struct watch_mgr *m, struct tb_str path)
{
    if (m->nwatches == 0)
        return NULL;
    return path_find(m, path.ptr, path.len, path_hash(m, path.ptr, path.len));
}

static struct wentry *entry_find(const struct watch_mgr *m,
                                 const struct wpath *pn,
                                 const struct watch_owner *w,
                                 enum watch_kind kind)
{
    uint64_t hash = entry_hash(m, pn, w, kind);
    struct watch__hlink *l = htab_chain(&m->entries, hash);
    for (; l != NULL; l = l->next) {
        struct wentry *e = TB_CONTAINER_OF(l, struct wentry, h);
        if (l->hash == hash && e->path == pn && e->owner == w &&
            e->kind == kind)
            return e;
    }
    return NULL;
}

/* ---- path nodes and entries ------------------------------------------- */

static struct wpath *path_create(struct watch_mgr *m, struct tb_str path,
                                 uint64_t hash)
{
    struct wpath *pn = malloc(sizeof(*pn) + path.len + 1);
    if (pn == NULL)
        return NULL;
    pn->h.hash = hash;
    for (int k = 0; k < WATCH_NKINDS; k++)
        tb_queue_init(&pn->lists[k]);
    pn->nentries = 0;
    pn->len = path.len;
    memcpy(pn->name, path.ptr, path.len);
    pn->name[path.len] = '\0';
    if (htab_insert(&m->paths, &pn->h) != 0) {
        free(pn);
        return NULL;
    }
    tb_queue_insert_tail(&m->path_list, &pn->mgr_link);
    return pn;
}

/* Frees a path node that no entry uses any more. */
static void path_release(struct watch_mgr *m, struct wpath *pn)
{
    if (pn->nentries != 0)
        return;
    htab_remove(&m->paths, &pn->h);
    tb_queue_remove(&pn->mgr_link);
    free(pn);
}

static struct tb_str path_str(const struct wpath *pn)
{
    return (struct tb_str){pn->name, pn->len};
}

/* Another entry of the owner on the same path, after which `e` goes to keep
 * the owner's entries grouped by path; NULL if there is none. */
static struct wentry *owner_sibling(const struct watch_mgr *m,
                                    const struct wentry *e)
{
    for (int k = 0; k < WATCH_NKINDS; k++) {
        struct wentry *x;
        if ((enum watch_kind)k == e->kind)
            continue;
        if ((x = entry_find(m, e->path, e->owner, (enum watch_kind)k)))
            return x;
    }
    return NULL;
}

static void entry_link(struct watch_mgr *m, struct wentry *e)
{
    struct watch_owner *w = e->owner;
    struct wentry *sib = e->path->nentries ? owner_sibling(m, e) : NULL;

    if (sib != NULL)
        tb_queue_insert_tail(sib->owner_link.next, &e->owner_link);
    else
        tb_queue_insert_tail(&w->entries, &e->owner_link);
    tb_queue_insert_tail(&e->path->lists[e->kind], &e->path_link);
    if (w->count++ == 0) {
        tb_queue_insert_tail(&m->owner_list, &w->mgr_link);
        m->nowners++;
    }
    e->path->nentries++;
    m->nkind[e->kind]++;
    m->nwatches++;
}

/* Unlinks and frees an entry; its path node is left for path_release() so
 * that a walk over the node's lists can go on. */
static void entry_drop(struct watch_mgr *m, struct wentry *e)
{
    struct watch_owner *w = e->owner;

    htab_remove(&m->entries, &e->h);
    tb_queue_remove(&e->path_link);
    tb_queue_remove(&e->owner_link);
    if (--w->count == 0) {
        tb_queue_remove(&w->mgr_link);
        m->nowners--;
    }
    e->path->nentries--;
    m->nkind[e->kind]--;
    m->nwatches--;
    free(e);
}

/* ---- setup ------------------------------------------------------------ */

void watch_mgr_init(struct watch_mgr *m, uint64_t seed)
{
    memset(m, 0, sizeof(*m));
    tb_queue_init(&m->path_list);
    tb_queue_init(&m->owner_list);
    m->seed = seed;
}

void watch_mgr_close(struct watch_mgr *m)
{
    struct tb_queue *q, *qnext;

    while (!tb_queue_empty(&m->owner_list)) {
        q = tb_queue_head(&m->owner_list);
        struct watch_owner *w =
            TB_CONTAINER_OF(q, struct watch_owner, mgr_link);
        tb_queue_remove(q);
        tb_queue_init(&w->entries);
        w->count = 0;
    }
    /* Everything goes, so nothing needs unlinking. */
    for (q = m->path_list.next; q != &m->path_list; q = qnext) {
        struct wpath *pn = TB_CONTAINER_OF(q, struct wpath, mgr_link);
        qnext = q->next;
        for (int k = 0; k < WATCH_NKINDS; k++) {
            struct tb_queue *eq, *enext;
            for (eq = pn->lists[k].next; eq != &pn->lists[k]; eq = enext) {
                enext = eq->next;
                free(TB_CONTAINER_OF(eq, struct wentry, path_link));
            }
        }
        free(pn);
    }
    free(m->paths.buckets);
    free(m->entries.buckets);
    watch_mgr_init(m, m->seed);
}

void watch_owner_init(struct watch_owner *w)
{
    tb_queue_init(&w->entries);
    tb_queue_init(&w->mgr_link);
    tb_queue_init(&w->fire_link);
    w->stamp = 0;
    w->count = 0;
}

/* ---- add / remove ----------------------------------------------------- */

int watch_add(struct watch_mgr *m, enum watch_kind kind, struct tb_str path,
              struct watch_owner *w)
{
    uint64_t hash;
    struct wpath *pn;
    struct wentry *e;

    if ((unsigned)kind >= WATCH_NKINDS || !path_ok(path) || w == NULL)
        return TB_EINVAL;
    hash = path_hash(m, path.ptr, path.len);
    pn = path_find(m, path.ptr, path.len, hash);
    if (pn == NULL && (pn = path_create(m, path, hash)) == NULL)
        return TB_ENOMEM;
    if (entry_find(m, pn, w, kind) != NULL)
        return 0;
    if ((e = malloc(sizeof(*e))) == NULL)
        goto err_path;
    e->h.hash = entry_hash(m, pn, w, kind);
    e->path = pn;
    e->owner = w;
    e->kind = kind;
    if (htab_insert(&m->entries, &e->h) != 0)
        goto err_entry;
    entry_link(m, e);
    return 0;

err_entry:
    free(e);
err_path:
    path_release(m, pn);
    return TB_ENOMEM;
}

/* The kinds a ZooKeeper WatcherType selects; 0 for an unknown type. */
static unsigned type_kinds(enum tb_watcher_type type)
{
    switch (type) {
    case TB_WATCHER_CHILDREN:
        return WATCH_BIT(WATCH_CHILD);
    case TB_WATCHER_DATA:
        return WATCH_BIT(WATCH_DATA);
    case TB_WATCHER_ANY:
        return WATCH_BIT(WATCH_DATA) | WATCH_BIT(WATCH_CHILD) |
               WATCH_BIT(WATCH_PERSISTENT) |
               WATCH_BIT(WATCH_PERSISTENT_RECURSIVE);
    case TB_WATCHER_PERSISTENT:
        return WATCH_BIT(WATCH_PERSISTENT);
    case TB_WATCHER_PERSISTENT_RECURSIVE:
        return WATCH_BIT(WATCH_PERSISTENT_RECURSIVE);
    }
    return 0;
}

int watch_check(const struct watch_mgr *m, struct tb_str path,
                const struct watch_owner *w, enum tb_watcher_type type)
{
    unsigned kinds = type_kinds(type);
    struct wpath *pn;

    if (kinds == 0 || !path_ok(path))
        return TB_EINVAL;
    if ((pn = path_lookup(m, path)) == NULL)
        return TB_ENOWATCHER;
    for (int k = 0; k < WATCH_NKINDS; k++) {
        if ((kinds & WATCH_BIT(k)) &&
            entry_find(m, pn, w, (enum watch_kind)k) != NULL)
            return 0;
    }
    return TB_ENOWATCHER;
}

int watch_remove(struct watch_mgr *m, struct tb_str path, struct watch_owner *w,
                 enum tb_watcher_type type)
{
    unsigned kinds = type_kinds(type);
    struct wpath *pn;
    int removed = 0;

    if (kinds == 0 || !path_ok(path))
        return TB_EINVAL;
    if ((pn = path_lookup(m, path)) == NULL)
        return TB_ENOWATCHER;
    for (int k = 0; k < WATCH_NKINDS; k++) {
        struct wentry *e;
        if ((kinds & WATCH_BIT(k)) &&
            (e = entry_find(m, pn, w, (enum watch_kind)k)) != NULL) {
            entry_drop(m, e);
            removed = 1;
        }
    }
    if (!removed)
        return TB_ENOWATCHER;
    path_release(m, pn);
    shrink_tables(m);
    return 0;
}

size_t watch_remove_watcher(struct watch_mgr *m, struct watch_owner *w)
{
    struct tb_queue *q, *next;
    size_t n = 0;

    tb_queue_remove(&w->fire_link); /* cancels a pending delivery */
    for (q = w->entries.next; q != &w->entries; q = next) {
        struct wentry *e = TB_CONTAINER_OF(q, struct wentry, owner_link);
        struct wpath *pn = e->path;
        next = q->next;
        entry_drop(m, e);
        path_release(m, pn);
        n++;
    }
    if (n > 0)
        shrink_tables(m);
    return n;
}

/* ---- trigger ---------------------------------------------------------- */

/* The kinds at the changed path itself that an event fires (§10.3, §10.5). */
static unsigned event_kinds(enum tb_event_type type)
{
    switch (type) {
    case TB_EVENT_CREATED:
    case TB_EVENT_DATA_CHANGED:
        return WATCH_BIT(WATCH_DATA) | WATCH_BIT(WATCH_PERSISTENT) |
               WATCH_BIT(WATCH_PERSISTENT_RECURSIVE);
    case TB_EVENT_DELETED:
        return WATCH_BIT(WATCH_DATA) | WATCH_BIT(WATCH_CHILD) |
               WATCH_BIT(WATCH_PERSISTENT) |
               WATCH_BIT(WATCH_PERSISTENT_RECURSIVE);
    case TB_EVENT_CHILDREN_CHANGED:
        return WATCH_BIT(WATCH_CHILD) | WATCH_BIT(WATCH_PERSISTENT);
    default:
        return 0;
    }
}

static int one_shot(enum watch_kind kind)
{
    return kind == WATCH_DATA || kind == WATCH_CHILD;
}

/* Queues each owner of the selected lists once per trigger, and removes the
 * one-shot entries met.  The caller releases the node afterwards. */
static void collect(struct watch_mgr *m, struct wpath *pn, unsigned kinds,
                    struct tb_queue *pending)
{
    for (int k = 0; k < WATCH_NKINDS; k++) {
        struct tb_queue *head = &pn->lists[k], *q, *next;
        if (!(kinds & WATCH_BIT(k)))
            continue;
        for (q = head->next; q != head; q = next) {
            struct wentry *e = TB_CONTAINER_OF(q, struct wentry, path_link);
            next = q->next;
            if (e->owner->stamp != m->stamp) {
                e->owner->stamp = m->stamp;
                tb_queue_insert_tail(pending, &e->owner->fire_link);
            }
            if (one_shot(e->kind))
                entry_drop(m, e);
        }
    }
}

static void collect_ancestor(struct watch_mgr *m, const char *p, size_t len,
                             uint64_t state, struct tb_queue *pending)
{
    struct wpath *pn = path_find(m, p, len, mix64(state));
    if (pn != NULL)
        collect(m, pn, WATCH_BIT(WATCH_PERSISTENT_RECURSIVE), pending);
}

/* Every strict ancestor of `path`, from "/" down, in one hashing pass.
 * Recursive entries are never removed, so no node needs releasing. */
static void collect_ancestors(struct watch_mgr *m, struct tb_str path,
                              struct tb_queue *pending)
{
    uint64_t h = fnv_start(m);
    for (size_t i = 0; i < path.len; i++) {
        if (i > 0 && path.ptr[i] == '/')
            collect_ancestor(m, path.ptr, i, h, pending);
        h = fnv_step(h, path.ptr[i]);
        if (i == 0 && path.len > 1)
            collect_ancestor(m, path.ptr, 1, h, pending);
    }
}

int watch_trigger(struct watch_mgr *m, enum tb_event_type type,
                  struct tb_str path, watch_deliver_fn deliver, void *arg)
{
    unsigned kinds = event_kinds(type);
    struct tb_queue pending;
    struct wpath *pn;
    int n = 0;

    if (kinds == 0 || !path_ok(path) || deliver == NULL)
        return TB_EINVAL;
    if (TB_NEVER(m->delivering))
        return TB_EINVAL;
    if (m->nwatches == 0)
        return 0;

    m->stamp++;
    tb_queue_init(&pending);
    if ((pn = path_lookup(m, path)) != NULL) {
        collect(m, pn, kinds, &pending);
        path_release(m, pn);
    }
    if (type != TB_EVENT_CHILDREN_CHANGED &&
        m->nkind[WATCH_PERSISTENT_RECURSIVE] > 0)
        collect_ancestors(m, path, &pending);
    /* No shrinking here, so a trigger never allocates: the buckets are
     * bounded by the peak and are trimmed by the next remove. */

    /* Pop before calling: the callback may unlink any other pending owner
     * (watch_remove_watcher) and may free the one it is given. */
    m->delivering = 1;
    while (!tb_queue_empty(&pending)) {
        struct tb_queue *q = tb_queue_head(&pending);
        tb_queue_remove(q);
        deliver(arg, TB_CONTAINER_OF(q, struct watch_owner, fire_link), type,
                path);
        n++;
    }
    m->delivering = 0;
    return n;
}

/* ---- counting and iteration ------------------------------------------- */

void watch_get_stats(const struct watch_mgr *m, struct watch_stats *s)
{
    s->watches = m->nwatches;
    s->owners = m->nowners;
    s->paths = m->paths.n;
    for (int k = 0; k < WATCH_NKINDS; k++)
        s->by_kind[k] = m->nkind[k];
}

size_t watch_owner_count(const struct watch_owner *w)
{
    return w->count;
}

int watch_foreach_owner(const struct watch_mgr *m, watch_owner_cb cb, void *arg)
{
    struct tb_queue *q, *eq;
    int rc;

    TB_QUEUE_FOREACH (q, &m->owner_list) {
        struct watch_owner *w =
            TB_CONTAINER_OF(q, struct watch_owner, mgr_link);
        unsigned kinds = 0;
        TB_QUEUE_FOREACH (eq, &w->entries) {
            kinds |=
                WATCH_BIT(TB_CONTAINER_OF(eq, struct wentry, owner_link)->kind);
        }
        if ((rc = cb(arg, w, kinds)) != 0)
            return rc;
    }
    return 0;
}

int watch_foreach_path(const struct watch_mgr *m, watch_path_cb cb, void *arg)
{
    struct tb_queue *q;
    int rc;

    TB_QUEUE_FOREACH (q, &m->path_list) {
        struct wpath *pn = TB_CONTAINER_OF(q, struct wpath, mgr_link);
        unsigned kinds = 0;
        for (int k = 0; k < WATCH_NKINDS; k++) {
            if (!tb_queue_empty(&pn->lists[k]))
                kinds |= WATCH_BIT(k);
        }
        if ((rc = cb(arg, path_str(pn), kinds)) != 0)
            return rc;
    }
    return 0;
}

int watch_owner_foreach_path(const struct watch_owner *w, watch_path_cb cb,
                             void *arg)
{
    const struct tb_queue *head = &w->entries;
    struct tb_queue *q = head->next;
    int rc;

    /* An owner's entries on one path are adjacent (see entry_link). */
    while (q != head) {
        struct wentry *e = TB_CONTAINER_OF(q, struct wentry, owner_link);
        struct wpath *pn = e->path;
        unsigned kinds = 0;
        for (; q != head; q = q->next) {
            e = TB_CONTAINER_OF(q, struct wentry, owner_link);
            if (e->path != pn)
                break;
            kinds |= WATCH_BIT(e->kind);
        }
        if ((rc = cb(arg, path_str(pn), kinds)) != 0)
            return rc;
    }
    return 0;
}

/* The kinds an owner holds on the path of one of its entries: the entry's
 * neighbours in the owner's list. */
static unsigned group_kinds(const struct wentry *e)
{
    const struct tb_queue *head = &e->owner->entries;
    const struct tb_queue *q = &e->owner_link;
    unsigned kinds = 0;

    while (q->prev != head &&
           TB_CONTAINER_OF(q->prev, struct wentry, owner_link)->path == e->path)
        q = q->prev;
    for (; q != head; q = q->next) {
        const struct wentry *x = TB_CONTAINER_OF(q, struct wentry, owner_link);
        if (x->path != e->path)
            break;
        kinds |= WATCH_BIT(x->kind);
    }
    return kinds;
}

int watch_path_foreach_owner(struct watch_mgr *m, struct tb_str path,
                             watch_owner_cb cb, void *arg)
{
    struct wpath *pn;
    struct tb_queue *q;
    int rc;

    if (!path_ok(path) || (pn = path_lookup(m, path)) == NULL)
        return 0;
    m->stamp++;
    for (int k = 0; k < WATCH_NKINDS; k++) {
        TB_QUEUE_FOREACH (q, &pn->lists[k]) {
            struct wentry *e = TB_CONTAINER_OF(q, struct wentry, path_link);
            if (e->owner->stamp == m->stamp)
                continue;
            e->owner->stamp = m->stamp;
            if ((rc = cb(arg, e->owner, group_kinds(e))) != 0)
                return rc;
        }
    }
    return 0;
}
