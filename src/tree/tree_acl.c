/* The ACL cache: one refcounted copy of each distinct encoded ACL list, as
 * ZooKeeper's ReferenceCountedACLCache keeps one per distinct List<ACL>.
 * Most trees use a handful of lists for millions of nodes, so a node pays
 * one pointer for its ACL. */
#include <stdlib.h>

#include "tree/tree_int.h"

static void acl_grow(struct tree *t)
{
    size_t nb = t->nabuckets * 2, i;
    struct tree_acl **b = calloc(nb, sizeof *b);
    struct tree_acl *a, *next;

    if (b == NULL)
        return;
    for (i = 0; i < t->nabuckets; i++) {
        for (a = t->abuckets[i]; a != NULL; a = next) {
            next = a->hnext;
            a->hnext = b[a->hash & (nb - 1)];
            b[a->hash & (nb - 1)] = a;
        }
    }
    free(t->abuckets);
    t->abuckets = b;
    t->nabuckets = nb;
}

int tree_acl_intern(struct tree *t, struct tb_vec acl, struct tree_acl **out)
{
    uint32_t h;
    struct tree_acl *a, **head;

    if (acl.len > UINT32_MAX)
        return TB_ENOMEM;
    h = tree__hash(acl.raw, acl.len) ^ (uint32_t)acl.n;
    for (a = t->abuckets[h & (t->nabuckets - 1)]; a != NULL; a = a->hnext) {
        if (a->hash == h && a->n == acl.n && a->len == acl.len &&
            (acl.len == 0 || memcmp(a->raw, acl.raw, acl.len) == 0)) {
            a->refs++;
            *out = a;
            return 0;
        }
    }
    a = malloc(sizeof *a + acl.len);
    if (a == NULL)
        return TB_ENOMEM;
    a->hash = h;
    a->refs = 1;
    a->snap_id = 0;
    a->n = acl.n;
    a->len = (uint32_t)acl.len;
    if (acl.len > 0)
        memcpy(a->raw, acl.raw, acl.len);
    if (t->nacl >= t->nabuckets)
        acl_grow(t);
    head = &t->abuckets[h & (t->nabuckets - 1)];
    a->hnext = *head;
    *head = a;
    t->nacl++;
    *out = a;
    return 0;
}

void tree_acl_ref(struct tree_acl *a)
{
    a->refs++;
}

void tree_acl_unref(struct tree *t, struct tree_acl *a)
{
    struct tree_acl **pp;

    assert(a->refs > 0);
    if (--a->refs > 0)
        return;
    pp = &t->abuckets[a->hash & (t->nabuckets - 1)];
    while (*pp != a)
        pp = &(*pp)->hnext;
    *pp = a->hnext;
    t->nacl--;
    free(a);
}

struct tb_vec tree_acl_vec(const struct tree_acl *a)
{
    return (struct tb_vec){a->n, a->raw, a->len};
}

size_t tree_acl_count(const struct tree *t)
{
    return t->nacl;
}

void tree__acl_free_all(struct tree *t)
{
    size_t i;
    struct tree_acl *a, *next;

    for (i = 0; i < t->nabuckets; i++) {
        for (a = t->abuckets[i]; a != NULL; a = next) {
            next = a->hnext;
            free(a);
        }
        t->abuckets[i] = NULL;
    }
    t->nacl = 0;
}
