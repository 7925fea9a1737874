/* Helpers shared by the tree's unit tests: test_tree.c (nodes, indexes,
 * undo), test_tree_snap.c (snapshots) and test_tree_acl.c (ACL rules).
 * The consistency checker runs after every mutation made through them. */
#ifndef TB_TEST_TREE_FIXTURE_H
#define TB_TEST_TREE_FIXTURE_H

#include "tree/acl.h"
#include "tree/tree.h"

#define SID1 ((int64_t)0x0100000000000001LL)
#define SID2 ((int64_t)0x0100000000000002LL)

/* tree_check, failing the test with its reason. */
void chk(const struct tree *t);
struct tree *new_tree(void);
struct tree_node *find(const struct tree *t, const char *path);
struct tree_acl *open_acl(struct tree *t);
/* Creates `path` (parent must exist) outside any transaction. */
struct tree_node *mk(struct tree *t, const char *path, const char *data,
                     int64_t owner, int64_t zxid);
/* Creates /<prefix>0 .. /<prefix>n-1 under the root, zxids 1 .. n. */
void mk_many(struct tree *t, const char *prefix, int n, const char *data);
void del(struct tree *t, const char *path, int64_t zxid);
struct tb_stat stat_of(const struct tree *t, const char *path);
void snap(const struct tree *t, struct tb_wbuf *w);
void assert_same_snapshot(const struct tree *t, const struct tb_wbuf *a);

#endif
