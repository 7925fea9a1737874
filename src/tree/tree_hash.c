/* The path hash table: open addressing, linear probing, each node's hash
 * kept beside it so that moving or removing an entry never touches a node.
 *
 * Growing never stops the loop for the whole table.  Doubling a table of
 * a million nodes at once took 30-60 ms (the random writes of the rehash
 * and populating the new table), in one turn of the loop.  Instead, the
 * next table is made once the current one is 5/8 full (later would leave
 * too few inserts to populate it, earlier holds its memory longer) and
 * populated a few pages per insert; at three quarters it becomes the current
 * table and the old one's entries move to it MIGRATE_STEP slots per insert or
 * removal.  Meanwhile a lookup tries the current table, then the old.  A
 * slot moved out of the old table, or removed from it, holds tree__tomb:
 * not empty, so that the old table's probes still run past it, and never
 * equal to a path. */
#include <stdlib.h>
#include <sys/mman.h>

#include "tree/tree_int.h"

#define INITIAL_SLOTS 64
#define MIGRATE_STEP  128 /* old slots per insert; at least 2 are needed */
#define POPULATE_STEP ((size_t)16 << 10) /* of the next table, per insert */

struct tree_node tree__tomb;

/* A word-at-a-time multiplicative hash.  Only the in-memory layout depends
 * on it, never anything a client or a snapshot can observe. */
uint32_t tree__hash(const void *p, size_t n)
{
    const uint8_t *s = p;
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ (n * 0xff51afd7ed558ccdULL);
    uint64_t k;

    while (n >= 8) {
        memcpy(&k, s, 8);
        h = (h ^ k) * 0xbf58476d1ce4e5b9ULL;
        h ^= h >> 31;
        s += 8;
        n -= 8;
    }
    k = 0;
    memcpy(&k, s, n);
    h = (h ^ k) * 0x94d049bb133111ebULL;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 32;
    return (uint32_t)h;
}

#define SLOT_BYTES (sizeof(struct tree_node *) + sizeof(uint32_t))
/* Above this, a table is a mapping of its own, left out of forked
 * children (MADV_DONTFORK).  A snapshot's child walks the tree by its
 * children arrays and never looks a path up; the loop's inserts would
 * otherwise copy the table, page by page, after every fork.  Its pages are
 * populated before use: the hashes spread over every page of it anyway,
 * and faulting pages in one by one (a lookup's read, then an insert's
 * write) costs ten times as much. */
#define SLOTS_MAPPED ((size_t)64 << 10)

static int mapped(size_t n)
{
    return n * SLOT_BYTES >= SLOTS_MAPPED;
}

/* Slots and their hashes in one allocation, populated unless `later`. */
static int slots_alloc(struct tree_slots *s, size_t n, int later)
{
    void *p;

    if (!mapped(n)) {
        p = calloc(n, SLOT_BYTES);
    } else {
        p = tb_map_unshared(n * SLOT_BYTES, !later);
    }
    if (p == NULL)
        return TB_ENOMEM;
    s->node = p;
    s->hash = (uint32_t *)(s->node + n);
    s->n = n;
    s->populated = later ? 0 : n * SLOT_BYTES;
    return 0;
}

static void slots_free(struct tree_slots *s)
{
    if (s->n == 0)
        return;
    if (!mapped(s->n))
        free(s->node);
    else
        munmap(s->node, s->n * SLOT_BYTES);
    memset(s, 0, sizeof *s);
}

static void populate(struct tree_slots *s, size_t bytes)
{
    size_t total = s->n * SLOT_BYTES;
    size_t end = bytes < total - s->populated ? s->populated + bytes : total;

    if (end > s->populated)
        madvise((uint8_t *)s->node + s->populated, end - s->populated,
                MADV_POPULATE_WRITE);
    s->populated = end;
}

/* The slot holding path, or the empty one that ends its probe. */
static size_t slot_of(const struct tree_slots *s, uint32_t h,
                      struct tb_str path)
{
    size_t mask = s->n - 1, i = h & mask;
    const struct tree_node *n;

    for (; (n = s->node[i]) != NULL; i = (i + 1) & mask)
        if (s->hash[i] == h && n->path_len == path.len &&
            memcmp(n->path, path.ptr, path.len) == 0)
            break;
    return i;
}

static void put(struct tree_slots *s, struct tree_node *n, uint32_t h)
{
    size_t mask = s->n - 1, i = h & mask;

    while (s->node[i] != NULL)
        i = (i + 1) & mask;
    s->node[i] = n;
    s->hash[i] = h;
}

/* Moves up to k of the old table's slots; frees it once all have moved. */
static void migrate(struct tree *t, size_t k)
{
    struct tree_node *n;

    for (; k > 0 && t->mig < t->old.n; k--, t->mig++) {
        n = t->old.node[t->mig];
        if (n != NULL && n != &tree__tomb) {
            put(&t->tab, n, t->old.hash[t->mig]);
            t->old.node[t->mig] = &tree__tomb;
        }
    }
    if (t->old.n > 0 && t->mig == t->old.n)
        slots_free(&t->old);
}

int tree__hash_init(struct tree *t)
{
    return slots_alloc(&t->tab, INITIAL_SLOTS, 0);
}

void tree__hash_free(struct tree *t)
{
    slots_free(&t->tab);
    slots_free(&t->old);
    slots_free(&t->next);
}

struct tree_node *tree__hash_next(const struct tree *t, size_t *cursor)
{
    const struct tree_slots *s;
    struct tree_node *n;

    for (; *cursor < t->tab.n + t->old.n; (*cursor)++) {
        s = *cursor < t->tab.n ? &t->tab : &t->old;
        n = s->node[*cursor < t->tab.n ? *cursor : *cursor - t->tab.n];
        if (n != NULL && n != &tree__tomb) {
            (*cursor)++;
            return n;
        }
    }
    return NULL;
}

int tree__hash_reserve(struct tree *t)
{
    if (t->old.n > 0)
        migrate(t, MIGRATE_STEP);
    else if (t->next.n > 0)
        populate(&t->next, POPULATE_STEP);
    if ((t->count + 1) * 4 <= t->tab.n * 3) {
        if (t->next.n == 0 && t->old.n == 0 && mapped(t->tab.n * 2) &&
            t->count * 8 >= t->tab.n * 5)
            (void)slots_alloc(&t->next, t->tab.n * 2, 1);
        return 0;
    }
    migrate(t, SIZE_MAX); /* a table filled faster than it emptied */
    if (t->next.n == 0 && slots_alloc(&t->next, t->tab.n * 2, 0) != 0)
        /* Fuller than planned still works while one slot stays empty. */
        return t->count + 2 <= t->tab.n ? 0 : TB_ENOMEM;
    populate(&t->next, SIZE_MAX);
    t->old = t->tab;
    t->tab = t->next;
    memset(&t->next, 0, sizeof t->next);
    t->mig = 0;
    migrate(t, MIGRATE_STEP);
    return 0;
}

void tree__hash_insert(struct tree *t, struct tree_node *n)
{
    assert(t->count + 2 <= t->tab.n);
    put(&t->tab, n, n->hash);
    t->count++;
    t->data_size += n->path_len + n->data_len;
}

/* Backward-shift deletion: each later entry of the run that may move into
 * the hole does, so that no probe ever passes an empty slot it should not.
 * In the old table the slot only turns to a tomb. */
void tree__hash_remove(struct tree *t, struct tree_node *n)
{
    size_t mask = t->tab.n - 1, i = n->hash & mask, j, home;
    struct tree_slots *s = &t->tab;

    while (s->node[i] != n && s->node[i] != NULL)
        i = (i + 1) & mask;
    if (s->node[i] == NULL) {
        s = &t->old;
        mask = s->n - 1;
        for (i = n->hash & mask; s->node[i] != n; i = (i + 1) & mask)
            assert(s->node[i] != NULL);
        s->node[i] = &tree__tomb;
    } else {
        for (j = (i + 1) & mask; s->node[j] != NULL; j = (j + 1) & mask) {
            home = s->hash[j] & mask;
            if (((j - home) & mask) >= ((j - i) & mask)) {
                s->node[i] = s->node[j];
                s->hash[i] = s->hash[j];
                i = j;
            }
        }
        s->node[i] = NULL;
    }
    t->count--;
    t->data_size -= n->path_len + n->data_len;
    if (t->old.n > 0)
        migrate(t, MIGRATE_STEP);
}

struct tree_node *tree_find(const struct tree *t, struct tb_str path)
{
    struct tree_node *n;
    uint32_t h;

    if (path.ptr == NULL || path.len == 0 || path.len > UINT32_MAX)
        return NULL;
    h = tree__hash(path.ptr, path.len);
    n = t->tab.node[slot_of(&t->tab, h, path)];
    if (n == NULL && t->old.n > 0)
        n = t->old.node[slot_of(&t->old, h, path)];
    return n;
}
