/* Transactions over the tree: an undo log of the mutations since
 * tree_begin.  Rollback replays it backwards and restores the exact prior
 * state, down to the order of every children array, so that a failed multi
 * leaves the snapshot bytes unchanged.  Commit releases what the undone
 * state would have needed (deleted nodes, replaced data, replaced ACLs). */
#include <stdlib.h>

#include "tree/tree_int.h"

/* Makes room for one more record, so that the mutation that follows cannot
 * fail half-way. */
int tree__undo_reserve(struct tree *t)
{
    size_t cap;
    struct tree_undo *u;

    if (!t->in_txn || t->nundo < t->undo_cap)
        return 0;
    cap = t->undo_cap ? t->undo_cap * 2 : 16;
    u = realloc(t->undo, cap * sizeof *u);
    if (u == NULL)
        return TB_ENOMEM;
    t->undo = u;
    t->undo_cap = cap;
    return 0;
}

struct tree_undo *tree__undo_push(struct tree *t, enum tree_undo_kind kind,
                                  struct tree_node *n)
{
    struct tree_undo *u = &t->undo[t->nundo++];

    assert(t->nundo <= t->undo_cap);
    u->kind = kind;
    u->node = n;
    return u;
}

void tree__undo_data(struct tree *t, struct tree_node *n)
{
    struct tree_undo *u;

    if (!t->in_txn) {
        tree__data_free(n, n->data);
        return;
    }
    u = tree__undo_push(t, UNDO_DATA, n);
    u->u.data.data = n->data;
    u->u.data.len = n->data_len;
    u->u.data.null = n->data_null;
    u->u.data.version = n->version;
    u->u.data.mzxid = n->mzxid;
    u->u.data.mtime = n->mtime;
}

void tree_begin(struct tree *t)
{
    assert(!t->in_txn && t->nundo == 0);
    t->in_txn = 1;
    t->quota_failed = 0;
}

int tree_failed(const struct tree *t)
{
    return t->quota_failed;
}

static void undo_create(struct tree *t, struct tree_undo *u)
{
    struct tree_node *n = u->node, *p = n->parent;

    /* Everything after this create has been undone already, so n is the
     * last child of p again. */
    assert(p->kids[p->nkids - 1] == n && n->nkids == 0);
    p->nkids--;
    p->ccount = u->u.create.ccount;
    p->pzxid = u->u.create.pzxid;
    tree__hash_remove(t, n);
    tree__unlink(t, n);
    tree__node_free(t, n);
}

static void undo_delete(struct tree *t, struct tree_undo *u)
{
    struct tree_node *n = u->node, *p = n->parent;
    uint32_t slot = u->u.del.slot;

    /* Reverse the swap-remove: whoever took n's slot goes back to the end
     * (capacity is still there: arrays only shrink outside transactions). */
    assert(p->nkids < p->kcap);
    if (slot < p->nkids) {
        p->kids[p->nkids] = p->kids[slot];
        p->kids[p->nkids]->slot = p->nkids;
    }
    p->kids[slot] = n;
    n->slot = slot;
    p->nkids++;
    p->pzxid = u->u.del.pzxid;
    n->dead = 0;
    tree__hash_insert(t, n);
}

static void undo_data(struct tree *t, struct tree_undo *u)
{
    struct tree_node *n = u->node;

    tree__data_free(n, n->data);
    t->data_size = t->data_size - n->data_len + u->u.data.len;
    n->data = u->u.data.data;
    n->data_len = u->u.data.len;
    n->data_null = u->u.data.null;
    n->version = u->u.data.version;
    n->mzxid = u->u.data.mzxid;
    n->mtime = u->u.data.mtime;
}

static void undo_acl(struct tree *t, struct tree_undo *u)
{
    struct tree_node *n = u->node;

    tree_acl_unref(t, n->acl);
    n->acl = u->u.acl.acl;
    n->aversion = u->u.acl.aversion;
}

void tree_rollback(struct tree *t)
{
    struct tree_undo *u;

    assert(t->in_txn);
    t->quota_failed = 0;
    while (t->nundo > 0) {
        u = &t->undo[--t->nundo];
        switch (u->kind) {
        case UNDO_CREATE:
            undo_create(t, u);
            break;
        case UNDO_DELETE:
            undo_delete(t, u);
            break;
        case UNDO_DATA:
            undo_data(t, u);
            break;
        case UNDO_ACL:
            undo_acl(t, u);
            break;
        }
    }
    t->in_txn = 0;
}

/* Forward order: a node deleted here cannot be touched by a later record
 * (a re-created path is a new node), and its parent, if deleted later in
 * the same transaction, is still allocated when the child is released. */
void tree_commit(struct tree *t)
{
    struct tree_undo *u;
    size_t i;

    assert(t->in_txn);
    for (i = 0; i < t->nundo; i++) {
        u = &t->undo[i];
        switch (u->kind) {
        case UNDO_CREATE:
            break;
        case UNDO_DELETE:
            tree__kids_shrink(u->node->parent);
            tree__unlink(t, u->node);
            tree__node_free(t, u->node);
            break;
        case UNDO_DATA:
            tree__data_free(u->node, u->u.data.data);
            break;
        case UNDO_ACL:
            tree_acl_unref(t, u->u.acl.acl);
            break;
        }
    }
    t->nundo = 0;
    t->in_txn = 0;
    /* A big multi must not pin a big log forever. */
    if (t->undo_cap > 1024) {
        free(t->undo);
        t->undo = NULL;
        t->undo_cap = 0;
    }
}
