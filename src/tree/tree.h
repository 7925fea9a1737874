/* The in-memory znode tree: nodes keyed by full path in a hash table, each
 * linked to its parent and holding its children in an array, with the
 * persisted stat fields of ZooKeeper's DataNode.  The tree is pure: no I/O,
 * no clock, no validation of requests (the fsm decides what is allowed and
 * in which order errors win; the tree only mutates).
 *
 * Mutations may run inside a transaction (tree_begin): every change is
 * recorded in an undo log so that tree_rollback restores the exact prior
 * state (a failed multi, or an allocation failure half-way through an
 * apply).  Deleted nodes and replaced data stay allocated until commit.
 *
 * Children are kept in no particular order (ZooKeeper answers in hash
 * order too); the order is nevertheless a deterministic function of the
 * history, and snapshots preserve it, so replicas stay byte-identical.
 *
 * The stored cversion is ZooKeeper's child-creation counter `c` (also the
 * next sequence number); the client-visible cversion is 2*c - numChildren,
 * exactly DataNode.copyStat, so it rises on every create and delete and the
 * root starts at -1 and /zookeeper at -2, as on a fresh ZooKeeper. */
#ifndef TB_TREE_H
#define TB_TREE_H

#include "common/common.h"
#include "proto/proto.h"

struct tree;
struct tree_node;
struct tree_acl;

/* ephemeralOwner encodings (wire doc §7.4). */
#define TREE_CONTAINER_OWNER INT64_MIN
#define TREE_EXTENDED_MASK   ((int64_t)0xFF00000000000000ULL)
#define TREE_TTL_MAX         ((int64_t)0xFFFFFFFFFFLL) /* 2^40 - 1 ms */

enum tree_kind {
    TREE_PERSISTENT,
    TREE_EPHEMERAL,
    TREE_CONTAINER,
    TREE_TTL,
};

static inline enum tree_kind tree_owner_kind(int64_t owner)
{
    if (owner == 0)
        return TREE_PERSISTENT;
    if (owner == TREE_CONTAINER_OWNER)
        return TREE_CONTAINER;
    if ((owner & TREE_EXTENDED_MASK) == TREE_EXTENDED_MASK)
        return TREE_TTL;
    return TREE_EPHEMERAL;
}

/* The stored owner of a TTL node (ttl in 1 .. TREE_TTL_MAX). */
static inline int64_t tree_ttl_owner(int64_t ttl)
{
    return TREE_EXTENDED_MASK | (ttl & TREE_TTL_MAX);
}

static inline int64_t tree_owner_ttl(int64_t owner)
{
    return owner & TREE_TTL_MAX;
}

/* Life cycle.  A new tree holds "/", "/zookeeper", "/zookeeper/quota" and
 * "/zookeeper/config" (empty data, zero stats, world:anyone ALL except the
 * config node: world:anyone READ and aversion -1). */
int tree_init(struct tree **out);
void tree_close(struct tree *t);

/* Quotas (tree_quota.c).  The callback is told when a write leaves a
 * quota's use above its soft limit `what` ("count" or "bytes"), or, with
 * refused set, when tree_quota_check refuses one that would take it past a
 * hard limit ("countHardLimit" or "byteHardLimit"); path is the quota's. */
typedef void (*tree_quota_cb)(void *arg, struct tb_str path, const char *what,
                              int64_t used, int64_t limit, int refused);
void tree_on_quota(struct tree *t, tree_quota_cb cb, void *arg);
/* 0, or TB_EQUOTAEXCEEDED when adding count nodes and bytes bytes at path
 * would take the quota over it past a hard limit, or TB_ENOMEM. */
int tree_quota_check(struct tree *t, struct tb_str path, int64_t count,
                     int64_t bytes);
/* What the quotas of one namespace, the first name of their paths, add up
 * to, as ZooKeeper's mntr sums them: of each limits node, its hard limit
 * if it has one, else its soft one (-1 for none, added as it is); of each
 * stats node, the use.  As there, only limits and stats nodes without
 * children and with data count.  ns stays valid until the tree changes. */
struct tree_quota_sums {
    struct tb_str ns;
    int limits, stats; /* whether it has any */
    int64_t count_limit, bytes_limit, count, bytes;
};
void tree_quota_namespaces(const struct tree *t,
                           void (*fn)(void *arg,
                                      const struct tree_quota_sums *sums),
                           void *arg);

/* Reads.  Views returned here stay valid until the next mutation.
 * tree_find is not for a forked child: a large path table is not inherited
 * (tree_snapshot and walking the children are). */
struct tree_node *tree_find(const struct tree *t, struct tb_str path);
struct tree_node *tree_root(const struct tree *t);
void tree_node_stat(const struct tree_node *n, struct tb_stat *st);
/* ptr NULL when the node's data is null (distinct from empty). */
struct tb_str tree_node_data(const struct tree_node *n);
/* The encoded ACL vector, ready for tb_put_VEC / tb_acl_check. */
struct tb_vec tree_node_acl(const struct tree_node *n);
struct tb_str tree_node_path(const struct tree_node *n); /* NUL-terminated */
struct tb_str tree_node_name(const struct tree_node *n); /* "" for root */
struct tree_node *tree_node_parent(const struct tree_node *n);
uint32_t tree_node_nchildren(const struct tree_node *n);
/* Children by index, 0 <= i < tree_node_nchildren(n); order unspecified. */
struct tree_node *tree_node_child(const struct tree_node *n, uint32_t i);
int64_t tree_node_owner(const struct tree_node *n); /* as stored */
int32_t tree_node_ccount(const struct tree_node *n);
int32_t tree_node_version(const struct tree_node *n);
int32_t tree_node_aversion(const struct tree_node *n);
int64_t tree_node_mtime(const struct tree_node *n);
struct tree_acl *tree_node_acl_ref(const struct tree_node *n);

/* Every descendant of n, not counting n (getAllChildrenNumber). O(subtree). */
uint64_t tree_count_descendants(const struct tree_node *n);
/* Nodes in the tree ("/" counted once; ZooKeeper's count also includes its
 * "" alias of the root, i.e. one more). */
uint64_t tree_count(const struct tree *t);
/* Sum of path length + data length over all nodes. */
uint64_t tree_data_size(const struct tree *t);
uint64_t tree_ephemeral_count(const struct tree *t);

/* The ephemeral nodes of session `owner`, in no particular order; stops
 * early when `cb` returns non-zero and returns that value. */
typedef int (*tree_node_cb)(void *data, struct tree_node *n);
int tree_ephemerals_foreach(const struct tree *t, int64_t owner,
                            tree_node_cb cb, void *data);
uint64_t tree_ephemerals_count(const struct tree *t, int64_t owner);
/* Calls cb for each ephemeral owner (session id) that has nodes. */
int tree_owners_foreach(const struct tree *t,
                        int (*cb)(void *data, int64_t owner), void *data);

/* Container and TTL nodes due for deletion at time `now` (ms): containers
 * with no children that have had one (counter > 0); TTL nodes with no
 * children and now - mtime > ttl.  O(containers + TTL nodes). */
int tree_candidates(const struct tree *t, int64_t now, tree_node_cb cb,
                    void *data);
/* The rule above for one node (the deleteContainer re-check). */
int tree_node_expired(const struct tree_node *n, int64_t now);

/* ACL cache: deduplicated, refcounted encoded ACL vectors shared between
 * nodes.  tree_acl_intern returns a new reference to the entry holding
 * exactly these bytes (creating it if needed). */
int tree_acl_intern(struct tree *t, struct tb_vec acl, struct tree_acl **out);
void tree_acl_ref(struct tree_acl *a);
void tree_acl_unref(struct tree *t, struct tree_acl *a);
struct tb_vec tree_acl_vec(const struct tree_acl *a);
size_t tree_acl_count(const struct tree *t);

/* Transactions.  Between begin and commit/rollback every mutation is
 * undoable; outside, mutations take effect (and free) immediately. */
void tree_begin(struct tree *t);
void tree_commit(struct tree *t);
void tree_rollback(struct tree *t);
/* Whether a change of this transaction was made but its quota accounting
 * ran out of memory: the transaction must be rolled back, since a replica
 * whose stats missed a change would decide quotas otherwise. */
int tree_failed(const struct tree *t);

/* Mutations.  The caller has checked everything ZooKeeper checks: `parent`
 * is the node of path's parent, `path` is free and valid.  They fail only
 * with TB_ENOMEM, and then change nothing.
 *
 * tree_create consumes the reference `acl` on success.  The parent's
 * counter rises by one (wrapping like a Java int) and its pzxid = zxid. */
int tree_create(struct tree *t, struct tree_node *parent, struct tb_str path,
                struct tb_str data, struct tree_acl *acl, int64_t owner,
                int64_t zxid, int64_t time, struct tree_node **out);
/* n must have no children and not be the root. */
int tree_delete(struct tree *t, struct tree_node *n, int64_t zxid);
int tree_set_data(struct tree *t, struct tree_node *n, struct tb_str data,
                  int32_t version, int64_t zxid, int64_t time);
/* Consumes the reference `acl` on success. */
int tree_set_acl(struct tree *t, struct tree_node *n, struct tree_acl *acl,
                 int32_t aversion);
/* Sets the child-creation counter directly: for tests and tools that need
 * a counter near the int32 wrap; never used by the apply path. */
void tree_node_set_ccount(struct tree_node *n, int32_t c);

/* Snapshot section: appends the whole tree to `w` (see tree_snap.c for the
 * format).  tree_restore builds a new tree from the section at `r`,
 * advancing it; any malformed length or broken invariant gives
 * TB_EDATAINCONSISTENCY (never a crash), allocation failure TB_ENOMEM. */
void tree_snapshot(const struct tree *t, struct tb_wbuf *w);
int tree_restore(struct tree **out, struct tb_rd *r);

/* Debug consistency checker: parents exist and list their children,
 * numChildren, pzxid >= children's czxid, hash, owner and container
 * indexes, ACL refcounts, data size.  0 or TB_EDATAINCONSISTENCY with a
 * description in `why`. O(n). */
int tree_check(const struct tree *t, char *why, size_t cap);

#endif
