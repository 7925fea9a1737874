/* The tree's private structures, shared by its files (tree.c, tree_acl.c,
 * tree_undo.c, tree_snap.c, tree_check.c, tree_quota.c) and nobody else. */
#ifndef TB_TREE_INT_H
#define TB_TREE_INT_H

#include "common/map.h"
#include "tree/tree.h"

/* One deduplicated ACL list.  At all times refs counts the nodes, undo
 * records and outside holders that point here; the entry is freed at 0. */
struct tree_acl {
    struct tree_acl *hnext;
    uint32_t hash;
    uint32_t refs;
    uint32_t snap_id; /* scratch numbering while a snapshot is written */
    int32_t n;        /* element count of the vector */
    uint32_t len;     /* bytes in raw */
    uint8_t raw[];
};

/* A znode.  At all times, for a live node:
 *   - it is in the hash table under path, with hash = hash of path;
 *   - parent->kids[slot] == this (root: parent NULL, slot 0);
 *   - path[name_off..] is its last component, path is NUL-terminated;
 *   - data == NULL iff data_len == 0; data_null says null vs empty; the
 *     data given at creation lives after path in the same allocation, a
 *     later setData's in its own;
 *   - an ephemeral, container or TTL node has an ext (has_ext) whose link
 *     is on its owner's list (ephemeral) or the tree's special list
 *     (container, TTL); a persistent node has none.
 * A node deleted inside a transaction is `dead`: out of the hash table and
 * its parent's children, but still on its owner/special list until commit,
 * so that a rollback needs no allocation. */
struct tree_node {
    struct tree_node *parent;
    struct tree_node **kids;
    uint8_t *data;
    struct tree_acl *acl;
    int64_t czxid;
    int64_t mzxid;
    int64_t ctime;
    int64_t mtime;
    int64_t pzxid;
    uint32_t hash;
    uint32_t slot;
    uint32_t nkids;
    uint32_t kcap;
    uint32_t data_len;
    uint32_t path_len;
    uint32_t name_off;
    int32_t version;
    int32_t aversion;
    int32_t ccount;
    uint8_t data_null;
    uint8_t dead;
    uint8_t has_ext;
    char path[];
};

/* What only ephemeral, container and TTL nodes need, just before the node
 * in the same allocation: most nodes are persistent and do without. */
struct tree_node_ext {
    int64_t owner;
    struct tb_queue link;
};

static inline struct tree_node_ext *tree__ext(const struct tree_node *n)
{
    return (struct tree_node_ext *)((uintptr_t)n -
                                    sizeof(struct tree_node_ext));
}

static inline int64_t tree__owner(const struct tree_node *n)
{
    return n->has_ext ? tree__ext(n)->owner : 0;
}

static inline struct tree_node *tree__node_of(const struct tb_queue *link)
{
    return (struct tree_node *)((uintptr_t)link -
                                offsetof(struct tree_node_ext, link) +
                                sizeof(struct tree_node_ext));
}

/* The ephemeral nodes of one session. */
struct tree_owner {
    struct tb_queue nodes;
    uint64_t count;
};

enum tree_undo_kind { UNDO_CREATE, UNDO_DELETE, UNDO_DATA, UNDO_ACL };

struct tree_undo {
    enum tree_undo_kind kind;
    struct tree_node *node;
    union {
        struct {
            int64_t pzxid; /* parent's before */
            int32_t ccount;
        } create;
        struct {
            int64_t pzxid; /* parent's before */
            uint32_t slot;
        } del;
        struct {
            uint8_t *data;
            uint32_t len;
            uint8_t null;
            int32_t version;
            int64_t mzxid;
            int64_t mtime;
        } data;
        struct {
            struct tree_acl *acl;
            int32_t aversion;
        } acl;
    } u;
};

struct tree_slots {
    struct tree_node **node; /* power-of-two count */
    uint32_t *hash;          /* in the same allocation as node */
    size_t n;
    size_t populated; /* bytes of the allocation */
};

struct tree {
    /* The path hash table (tree_hash.c): open addressing, linear probing,
     * a node's hash kept beside it in the table, so that growing it or
     * removing from it never touches a node.  After a snapshot's fork the
     * first write to each page of the heap is a page fault; a chained
     * table's doubling wrote to every node. */
    struct tree_slots tab;  /* at most 3/4 used */
    struct tree_slots old;  /* while its entries move to tab; else empty */
    struct tree_slots next; /* made once tab is 5/8 full; else empty */
    size_t mig;             /* old's slots before this one have moved */
    uint64_t count;
    uint64_t data_size;
    struct tree_node *root;

    struct tree_acl **abuckets;
    size_t nabuckets;
    size_t nacl;

    struct tb_map owners; /* session id -> struct tree_owner */
    uint64_t n_ephemeral;
    struct tb_queue special; /* container and TTL nodes */

    struct tree_undo *undo;
    size_t nundo;
    size_t undo_cap;
    int in_txn;

    struct tree_node *quota; /* /zookeeper/quota */
    int quota_failed;        /* tree_failed(): reset by begin and rollback */
    tree_quota_cb quota_cb;
    void *quota_arg;
};

uint32_t tree__hash(const void *p, size_t n);
/* A moved or removed slot of the old table (tree_hash.c). */
extern struct tree_node tree__tomb;
int tree__hash_init(struct tree *t);
void tree__hash_free(struct tree *t);
/* Each node once, from *cursor = 0 on, then NULL. */
struct tree_node *tree__hash_next(const struct tree *t, size_t *cursor);
/* Makes room for one more node in the hash table, or TB_ENOMEM. */
int tree__hash_reserve(struct tree *t);
/* Inserts a node: room must be there (tree__hash_reserve), or the node
 * was removed in the transaction being rolled back. */
void tree__hash_insert(struct tree *t, struct tree_node *n);
void tree__hash_remove(struct tree *t, struct tree_node *n);
/* Allocates a node for `path` holding `data`, owned by `owner` (not linked
 * anywhere yet), or NULL. */
struct tree_node *tree__node_alloc(struct tb_str path, struct tb_str data,
                                   int64_t owner);
/* Frees `data`, n's now or formerly, unless it is n's own tail. */
void tree__data_free(struct tree_node *n, uint8_t *data);
void tree__node_free(struct tree *t, struct tree_node *n);
/* Adds n to parent's children (capacity must be there: tree__kids_reserve). */
int tree__kids_reserve(struct tree_node *parent);
void tree__kids_add(struct tree_node *parent, struct tree_node *n);
void tree__kids_shrink(struct tree_node *parent);
/* Links n on its owner's or the special list; owner entry must exist. */
int tree__owner_prepare(struct tree *t, int64_t owner);
void tree__link(struct tree *t, struct tree_node *n);
void tree__unlink(struct tree *t, struct tree_node *n);
/* The tree without its system nodes (for restore). */
int tree__alloc(struct tree **out);

/* tree_undo.c.  tree__undo_reserve makes room for one more record, so that
 * the mutation that follows cannot fail half-way; tree__undo_data, before
 * n's data is replaced, keeps what rollback needs (in a transaction) or
 * frees the old data. */
int tree__undo_reserve(struct tree *t);
struct tree_undo *tree__undo_push(struct tree *t, enum tree_undo_kind kind,
                                  struct tree_node *n);
void tree__undo_data(struct tree *t, struct tree_node *n);
/* A copy of data in place of n's, undoable, its Stat untouched; 0 or
 * TB_ENOMEM (nothing changed). */
int tree__put_data(struct tree *t, struct tree_node *n, struct tb_str data);
/* The next node after n in a preorder walk of top's subtree, or NULL. */
const struct tree_node *tree__walk_next(const struct tree_node *n,
                                        const struct tree_node *top);

/* tree_quota.c: a node's count and bytes added to the quota above it, if
 * any; a created node also counted afresh if it is a quota's stats. */
void tree__quota_add(struct tree *t, const struct tree_node *n, int64_t count,
                     int64_t bytes);
void tree__quota_created(struct tree *t, struct tree_node *n);
void tree__acl_free_all(struct tree *t);

#endif
