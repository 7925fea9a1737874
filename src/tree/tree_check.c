/* The debug consistency checker: recomputes from scratch everything the
 * tree maintains incrementally and compares.  O(n); tests run it after
 * every operation, fuzzers after every step. */
#include <stdlib.h>

#include "common/path.h"
#include "tree/tree_int.h"

struct check {
    const struct tree *t;
    char *why;
    size_t cap;
};

#define fail(c, ...) tb_check_fail((c)->why, (c)->cap, __VA_ARGS__)

static int check_links(struct check *c, const struct tree_node *n)
{
    const struct tree *t = c->t;
    struct tb_str path = {n->path, n->path_len};
    uint32_t i;

    if (n->dead || tree_find(t, path) != n ||
        n->hash != tree__hash(n->path, n->path_len))
        return fail(c, "%s: not found under its own path", n->path);
    if (tb_path_validate(path) != 0 || n->path[n->path_len] != '\0')
        return fail(c, "%s: invalid path", n->path);
    if (n->parent == NULL) {
        if (n != t->root || n->path_len != 1)
            return fail(c, "%s: has no parent", n->path);
    } else {
        if (tree_find(t, tb_path_parent(path)) != n->parent)
            return fail(c, "%s: parent is not its path's parent", n->path);
        if (n->slot >= n->parent->nkids || n->parent->kids[n->slot] != n)
            return fail(c, "%s: not in its parent's children", n->path);
        if (n->name_off !=
            tb_path_parent(path).len + (path.len > 1 && n->parent != t->root))
            return fail(c, "%s: bad name offset", n->path);
    }
    if (n->nkids > n->kcap)
        return fail(c, "%s: more children than capacity", n->path);
    for (i = 0; i < n->nkids; i++) {
        if (n->kids[i]->parent != n || n->kids[i]->slot != i)
            return fail(c, "%s: child %u has a wrong back link", n->path, i);
        if (n->kids[i]->czxid > n->pzxid)
            return fail(c, "%s: pzxid below a child's czxid", n->path);
    }
    return 0;
}

static int check_fields(struct check *c, const struct tree_node *n)
{
    enum tree_kind k = tree_owner_kind(tree__owner(n));

    if ((n->data == NULL) != (n->data_len == 0))
        return fail(c, "%s: data pointer and length disagree", n->path);
    if (n->data_null && n->data_len != 0)
        return fail(c, "%s: null data with a length", n->path);
    if (n->pzxid < n->czxid)
        return fail(c, "%s: pzxid below czxid", n->path);
    if (k == TREE_EPHEMERAL && n->nkids > 0)
        return fail(c, "%s: ephemeral node with children", n->path);
    if ((k == TREE_PERSISTENT) !=
        (!n->has_ext || tb_queue_empty(&tree__ext(n)->link)))
        return fail(c, "%s: owner list membership", n->path);
    if (n->acl == NULL || n->acl->refs == 0)
        return fail(c, "%s: no ACL", n->path);
    return 0;
}

/* Counts nodes per ACL entry in a scratch table keyed by pointer. */
static int check_acls(struct check *c)
{
    const struct tree *t = c->t;
    size_t i, nacl = 0;
    uint64_t uses;
    const struct tree_acl *a;
    const struct tree_node *n;

    for (i = 0; i < t->nabuckets; i++) {
        for (a = t->abuckets[i]; a != NULL; a = a->hnext) {
            nacl++;
            if ((a->hash & (t->nabuckets - 1)) != i)
                return fail(c, "ACL in the wrong bucket");
            uses = 0;
            /* Quadratic in distinct lists x nodes is too slow for big trees,
             * so count only for small ones. */
            if (t->count * t->nacl > 4000000)
                continue;
            for (n = t->root; n != NULL;) {
                uses += n->acl == a;
                if (n->nkids > 0) {
                    n = n->kids[0];
                    continue;
                }
                while (n->parent && n->slot + 1 >= n->parent->nkids)
                    n = n->parent;
                n = n->parent ? n->parent->kids[n->slot + 1] : NULL;
            }
            if (uses != a->refs)
                return fail(c, "ACL has %u references but %llu users", a->refs,
                            (unsigned long long)uses);
        }
    }
    return nacl == t->nacl ? 0 : fail(c, "ACL count %zu != %zu", nacl, t->nacl);
}

static int check_owners(struct check *c, uint64_t ephemerals, uint64_t special)
{
    const struct tree *t = c->t;
    size_t i;
    uint64_t key, total = 0, k;
    void *val;
    const struct tree_owner *o;
    const struct tb_queue *q;
    const struct tree_node *n;

    for (i = 0; tb_map_next(&t->owners, &i, &key, &val);) {
        o = val;
        k = 0;
        TB_QUEUE_FOREACH (q, &o->nodes) {
            n = tree__node_of(q);
            if (tree__owner(n) != (int64_t)key || n->dead)
                return fail(c, "%s: on the wrong owner list", n->path);
            k++;
        }
        if (k != o->count || k == 0)
            return fail(c, "owner %llx: count %llu, listed %llu",
                        (unsigned long long)key, (unsigned long long)o->count,
                        (unsigned long long)k);
        total += k;
    }
    if (total != ephemerals || total != t->n_ephemeral)
        return fail(c, "ephemeral count: %llu listed, %llu in tree, %llu kept",
                    (unsigned long long)total, (unsigned long long)ephemerals,
                    (unsigned long long)t->n_ephemeral);
    k = 0;
    TB_QUEUE_FOREACH (q, &t->special) {
        n = tree__node_of(q);
        if (tree_owner_kind(tree__owner(n)) != TREE_CONTAINER &&
            tree_owner_kind(tree__owner(n)) != TREE_TTL)
            return fail(c, "%s: on the container list", n->path);
        k++;
    }
    return k == special ? 0 : fail(c, "container/TTL list length");
}

int tree_check(const struct tree *t, char *why, size_t cap)
{
    struct check c = {t, why, cap};
    const struct tree_slots *s;
    const struct tree_node *n;
    uint64_t count = 0, kids = 0, size = 0, eph = 0, special = 0;
    size_t i, j, k;
    int rv;

    if (t->in_txn || t->nundo != 0)
        return fail(&c, "transaction left open");
    for (i = 0; i < t->tab.n + t->old.n; i++) {
        s = i < t->tab.n ? &t->tab : &t->old;
        k = i < t->tab.n ? i : i - t->tab.n;
        if ((n = s->node[k]) == NULL || n == &tree__tomb)
            continue;
        if (s == &t->old && k < t->mig)
            return fail(&c, "%s: left behind in the old table", n->path);
        if (s->hash[k] != n->hash)
            return fail(&c, "%s: hash %08x in its slot", n->path,
                        (unsigned)s->hash[k]);
        for (j = n->hash & (s->n - 1); j != k; j = (j + 1) & (s->n - 1))
            if (s->node[j] == NULL)
                return fail(&c, "%s: an empty slot before it", n->path);
        if ((rv = check_links(&c, n)) != 0 || (rv = check_fields(&c, n)) != 0)
            return rv;
        count++;
        kids += n->nkids;
        size += n->path_len + n->data_len;
        eph += tree_owner_kind(tree__owner(n)) == TREE_EPHEMERAL;
        special += tree_owner_kind(tree__owner(n)) == TREE_CONTAINER ||
                   tree_owner_kind(tree__owner(n)) == TREE_TTL;
    }
    if (count != t->count || kids + 1 != count)
        return fail(&c, "node count %llu, kept %llu, children %llu",
                    (unsigned long long)count, (unsigned long long)t->count,
                    (unsigned long long)kids);
    if (size != t->data_size)
        return fail(&c, "data size %llu != kept %llu", (unsigned long long)size,
                    (unsigned long long)t->data_size);
    if ((rv = check_owners(&c, eph, special)) != 0)
        return rv;
    return check_acls(&c);
}
