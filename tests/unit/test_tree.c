/* Unit tests of the data tree: system nodes, stats and counters, children
 * bookkeeping, the path table, the owner and container indexes, the ACL
 * cache, and undo of every mutation.  Snapshots are test_tree_snap.c, the
 * ACL rules test_tree_acl.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include "tree/tree_int.h"

#include "tree_fixture.h"

static void test_system_nodes(void **state)
{
    struct tree *t = new_tree();
    struct tb_stat st;
    struct tree_node *cfg;

    (void)state;
    assert_int_equal(tree_count(t), 4);
    assert_int_equal(tree_data_size(t), 1 + 10 + 16 + 17);
    st = stat_of(t, "/");
    assert_int_equal(st.num_children, 1);
    assert_int_equal(st.cversion, -1); /* 2*0 - 1, as a fresh ZooKeeper */
    assert_int_equal(st.czxid, 0);
    assert_int_equal(st.pzxid, 0);
    st = stat_of(t, "/zookeeper");
    assert_int_equal(st.num_children, 2);
    assert_int_equal(st.cversion, -2);
    st = stat_of(t, "/zookeeper/config");
    assert_int_equal(st.aversion, -1);
    assert_int_equal(st.data_length, 0);
    cfg = find(t, "/zookeeper/config");
    assert_non_null(tree_node_data(cfg).ptr); /* empty, not null */
    assert_int_equal(tree_node_acl(cfg).n, 1);
    assert_int_equal(tree_node_acl(cfg).len, tb_acl_read_unsafe.len);
    assert_memory_equal(tree_node_acl(cfg).raw, tb_acl_read_unsafe.raw,
                        tb_acl_read_unsafe.len);
    assert_memory_equal(tree_node_acl(find(t, "/")).raw, tb_acl_open_unsafe.raw,
                        tb_acl_open_unsafe.len);
    assert_int_equal(tree_acl_count(t), 2);
    assert_null(find(t, ""));
    assert_null(find(t, "/zookeeper/"));
    assert_string_equal(tree_node_name(find(t, "/zookeeper/quota")).ptr,
                        "quota");
    assert_int_equal(tree_node_name(find(t, "/")).len, 0);
    tree_close(t);
}

static void test_create_stats(void **state)
{
    struct tree *t = new_tree();
    struct tb_stat st;
    struct tree_node *a;

    (void)state;
    a = mk(t, "/a", "hello", 0, 5);
    st = stat_of(t, "/a");
    assert_int_equal(st.czxid, 5);
    assert_int_equal(st.mzxid, 5);
    assert_int_equal(st.pzxid, 5);
    assert_int_equal(st.ctime, 5000);
    assert_int_equal(st.mtime, 5000);
    assert_int_equal(st.version, 0);
    assert_int_equal(st.cversion, 0);
    assert_int_equal(st.aversion, 0);
    assert_int_equal(st.data_length, 5);
    assert_int_equal(st.ephemeral_owner, 0);
    assert_memory_equal(tree_node_data(a).ptr, "hello", 5);
    st = stat_of(t, "/");
    assert_int_equal(st.num_children, 2);
    assert_int_equal(st.cversion, 0); /* 2*1 - 2 */
    assert_int_equal(st.pzxid, 5);
    assert_int_equal(tree_node_ccount(find(t, "/")), 1);

    /* Six creates and one delete under /sq: numChildren 5, cversion 7
     * (the wire doc's capture). */
    mk(t, "/sq", "", 0, 6);
    mk(t, "/sq/a", "", 0, 7);
    mk(t, "/sq/b", "", 0, 8);
    mk(t, "/sq/c", "", 0, 9);
    del(t, "/sq/b", 10);
    mk(t, "/sq/d", "", 0, 11);
    mk(t, "/sq/e", "", 0, 12);
    mk(t, "/sq/f", "", 0, 13);
    st = stat_of(t, "/sq");
    assert_int_equal(st.num_children, 5);
    assert_int_equal(st.cversion, 7);
    assert_int_equal(tree_node_ccount(find(t, "/sq")), 6);
    assert_int_equal(st.pzxid, 13);
    del(t, "/sq/f", 14);
    assert_int_equal(stat_of(t, "/sq").pzxid, 14);
    assert_int_equal(tree_node_ccount(find(t, "/sq")), 6); /* never lowered */
    assert_int_equal(tree_count_descendants(find(t, "/")), 3 + 1 + 1 + 4);
    assert_int_equal(tree_count_descendants(find(t, "/sq")), 4);
    tree_close(t);
}

static void test_null_and_empty_data(void **state)
{
    struct tree *t = new_tree();
    struct tree_node *n, *root = tree_root(t);

    (void)state;
    assert_int_equal(tree_create(t, root, TB_STR("/null"), TB_STR_NULL,
                                 open_acl(t), 0, 2, 2, &n),
                     0);
    assert_null(tree_node_data(n).ptr);
    assert_int_equal(tree_node_data(n).len, 0);
    n = mk(t, "/empty", "", 0, 3);
    assert_non_null(tree_node_data(n).ptr);
    assert_int_equal(tree_node_data(n).len, 0);
    assert_int_equal(tree_set_data(t, n, TB_STR_NULL, 1, 4, 4), 0);
    assert_null(tree_node_data(n).ptr);
    assert_int_equal(tree_set_data(t, n, TB_STR("xyz"), 2, 5, 50), 0);
    chk(t);
    assert_int_equal(stat_of(t, "/empty").version, 2);
    assert_int_equal(stat_of(t, "/empty").mzxid, 5);
    assert_int_equal(stat_of(t, "/empty").mtime, 50);
    assert_int_equal(stat_of(t, "/empty").czxid, 3);
    tree_close(t);
}

/* Swap-remove keeps every back index right, whatever the order. */
static void test_children_bookkeeping(void **state)
{
    struct tree *t = new_tree();
    char path[32];
    int i, seen[64] = {0};
    uint32_t k;
    struct tree_node *p;

    (void)state;
    mk(t, "/p", "", 0, 1);
    for (i = 0; i < 64; i++) {
        snprintf(path, sizeof path, "/p/c%d", i);
        mk(t, path, "", 0, 2 + i);
    }
    for (i = 0; i < 64; i += 3) {
        snprintf(path, sizeof path, "/p/c%d", i);
        del(t, path, 100 + i);
    }
    p = find(t, "/p");
    assert_int_equal(tree_node_nchildren(p), 64 - 22);
    for (k = 0; k < tree_node_nchildren(p); k++)
        seen[atoi(tree_node_name(tree_node_child(p, k)).ptr + 1)]++;
    for (i = 0; i < 64; i++)
        assert_int_equal(seen[i], i % 3 == 0 ? 0 : 1);
    assert_null(tree_node_child(p, 64));
    tree_close(t);
}

static void test_many_nodes(void **state)
{
    struct tree *t = new_tree();
    char path[32];
    int i;

    (void)state;
    mk_many(t, "n", 20000, "d");
    chk(t);
    for (i = 0; i < 20000; i++) {
        snprintf(path, sizeof path, "/n%d", i);
        assert_non_null(find(t, path));
    }
    assert_int_equal(tree_count(t), 20004);
    assert_int_equal(tree_acl_count(t), 2);
    for (i = 0; i < 20000; i += 2) {
        snprintf(path, sizeof path, "/n%d", i);
        assert_int_equal(tree_delete(t, find(t, path), 30000), 0);
    }
    chk(t);
    assert_int_equal(tree_count(t), 10004);
    tree_close(t);
}

/* Creates and deletes of `names` paths in a random order, the table
 * hovering around each size it grows to: removal must keep every other
 * node reachable (runs that wrap around the end of the table included)
 * and find nothing it removed, also while entries move from an old table
 * to a new one (tree_hash.c).  Returns how many steps ran mid-move. */
static int churn(int names, int steps)
{
    uint8_t *present = calloc((size_t)names, 1);
    struct tree *t = new_tree();
    struct tree_node *root = tree_root(t), *n;
    uint64_t x = 88172645463325252ULL;
    uint64_t live = 0;
    char path[32];
    int i, k, moving = 0;

    assert_non_null(present);
    for (i = 0; i < steps; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        /* Grow towards `names` early on, then churn around two thirds. */
        k = (int)(x % (uint64_t)(i < steps / 4 ? names * 2 / 3 : names));
        snprintf(path, sizeof path, "/h%d", k);
        n = find(t, path);
        assert_int_equal(n != NULL, present[k]);
        if (present[k]) {
            assert_int_equal(tree_delete(t, n, i + 1), 0);
            live--;
        } else {
            assert_int_equal(tree_create(t, root, tb_str_c(path), TB_STR("d"),
                                         open_acl(t), 0, i + 1, 0, NULL),
                             0);
            live++;
        }
        present[k] ^= 1;
        moving += t->old.n > 0;
        if (i % 512 == 0 || (t->old.n > 0 && i % 16 == 0))
            chk(t);
    }
    chk(t);
    for (k = 0; k < names; k++) {
        snprintf(path, sizeof path, "/h%d", k);
        assert_int_equal(find(t, path) != NULL, present[k]);
    }
    assert_int_equal(tree_count(t), live + 4);
    tree_close(t);
    free(present);
    return moving;
}

static void test_hash_churn(void **state)
{
    (void)state;
    churn(3000, 60000);
}

/* Past 64 KiB a table grows by moving its entries a few at a time; the
 * churn runs through several such moves. */
static void test_hash_churn_moving(void **state)
{
    (void)state;
    assert_true(churn(40000, 200000) > 100);
}

static int count_cb(void *data, struct tree_node *n)
{
    (void)n;
    (*(int *)data)++;
    return 0;
}

static void test_ephemeral_index(void **state)
{
    struct tree *t = new_tree();
    int n = 0;
    struct tb_stat st;

    (void)state;
    mk(t, "/e1", "", SID1, 2);
    mk(t, "/e2", "", SID1, 3);
    mk(t, "/e3", "", SID2, 4);
    assert_int_equal(tree_ephemeral_count(t), 3);
    assert_int_equal(tree_ephemerals_count(t, SID1), 2);
    assert_int_equal(tree_ephemerals_count(t, SID2), 1);
    assert_int_equal(tree_ephemerals_foreach(t, SID1, count_cb, &n), 0);
    assert_int_equal(n, 2);
    st = stat_of(t, "/e1");
    assert_int_equal(st.ephemeral_owner, SID1);
    del(t, "/e3", 5);
    assert_int_equal(tree_ephemerals_count(t, SID2), 0);
    assert_int_equal(tree_ephemeral_count(t), 2);

    /* Deleted inside a transaction: gone from the index at commit. */
    tree_begin(t);
    assert_int_equal(tree_delete(t, find(t, "/e1"), 6), 0);
    n = 0;
    tree_ephemerals_foreach(t, SID1, count_cb, &n);
    assert_int_equal(n, 1);
    tree_commit(t);
    chk(t);
    assert_int_equal(tree_ephemerals_count(t, SID1), 1);
    tree_close(t);
}

static int list_cb(void *data, struct tree_node *n)
{
    struct tb_wbuf *w = data;

    tb_wbuf_put(w, tree_node_path(n).ptr, tree_node_path(n).len);
    tb_wbuf_put(w, ";", 1);
    return 0;
}

static void test_containers_and_ttl(void **state)
{
    struct tree *t = new_tree();
    struct tb_wbuf w;
    struct tb_stat st;

    (void)state;
    mk(t, "/c", "", TREE_CONTAINER_OWNER, 2);    /* time 2000 */
    mk(t, "/ttl", "", tree_ttl_owner(1000), 3);  /* mtime 3000 */
    mk(t, "/ttlk", "", tree_ttl_owner(1000), 4); /* mtime 4000 */
    mk(t, "/ttlk/k", "", 0, 5);
    st = stat_of(t, "/c");
    assert_int_equal(st.ephemeral_owner, 0); /* hidden from clients */
    assert_int_equal(stat_of(t, "/ttl").ephemeral_owner, 0);
    assert_int_equal(tree_ephemeral_count(t), 0);

    tb_wbuf_init(&w);
    tree_candidates(t, 4000, list_cb, &w); /* 4000 - 3000 is not > 1000 */
    assert_int_equal(w.len, 0);
    tree_candidates(t, 4001, list_cb, &w);
    assert_int_equal(w.len, 5);
    assert_memory_equal(w.base, "/ttl;", 5);

    /* A container becomes due once it has had a child and is empty. */
    mk(t, "/c/x", "", 0, 6);
    w.len = 0;
    tree_candidates(t, 4001, list_cb, &w);
    assert_memory_equal(w.base, "/ttl;", w.len);
    del(t, "/c/x", 7);
    w.len = 0;
    tree_candidates(t, 4001, list_cb, &w);
    assert_int_equal(w.len, 8);
    assert_true(tree_node_expired(find(t, "/c"), 0));
    /* The TTL node with a child never is, however old. */
    assert_false(tree_node_expired(find(t, "/ttlk"), INT64_MAX));
    assert_true(tree_node_expired(find(t, "/ttl"), INT64_MAX));
    assert_false(tree_node_expired(find(t, "/ttl"), INT64_MIN));
    tb_wbuf_free(&w);
    tree_close(t);
}

static void test_acl_cache(void **state)
{
    struct tree *t = new_tree();
    struct tb_wbuf w;
    struct tb_acl a = {1, {TB_STR("digest"), TB_STR("u:h")}};
    struct tree_acl *x, *y;
    struct tree_node *n1, *n2;

    (void)state;
    n1 = mk(t, "/n1", "", 0, 2);
    n2 = mk(t, "/n2", "", 0, 3);
    assert_ptr_equal(tree_node_acl_ref(n1), tree_node_acl_ref(n2));
    assert_int_equal(tree_acl_count(t), 2);
    tb_wbuf_init(&w);
    tb_put_acl(&w, &a);
    assert_int_equal(tree_acl_intern(t, tb_vec_view(&w, 1), &x), 0);
    assert_int_equal(tree_acl_intern(t, tb_vec_view(&w, 1), &y), 0);
    assert_ptr_equal(x, y);
    assert_int_equal(tree_acl_count(t), 3);
    assert_int_equal(tree_set_acl(t, n1, x, 1), 0);
    tree_acl_unref(t, y); /* the second reference was ours */
    chk(t);
    assert_int_equal(tree_node_aversion(n1), 1);
    tree_begin(t);
    assert_int_equal(tree_set_acl(t, n1, open_acl(t), 2), 0);
    tree_commit(t); /* the digest list lost its last user */
    chk(t);
    assert_int_equal(tree_acl_count(t), 2);
    tb_wbuf_free(&w);
    tree_close(t);
}

/* Every kind of mutation inside one transaction, rolled back: the
 * snapshot bytes are identical to before. */
static void test_rollback_exact(void **state)
{
    struct tree *t = new_tree();
    struct tb_wbuf before, w;
    struct tb_acl a = {3, {TB_STR("ip"), TB_STR("10.0.0.0/8")}};
    struct tree_acl *acl;
    struct tree_node *n;

    (void)state;
    mk(t, "/a", "one", 0, 2);
    mk(t, "/a/x", "", 0, 3);
    mk(t, "/a/y", "", SID1, 4);
    mk(t, "/a/z", "", 0, 5);
    mk(t, "/c", "", TREE_CONTAINER_OWNER, 6);
    snap(t, &before);

    tree_begin(t);
    assert_int_equal(tree_delete(t, find(t, "/a/x"), 7), 0); /* swap */
    n = NULL;
    assert_int_equal(tree_create(t, find(t, "/a"), TB_STR("/a/x"),
                                 TB_STR("new"), open_acl(t), SID2, 7, 7, &n),
                     0);
    assert_int_equal(tree_set_data(t, find(t, "/a"), TB_STR("two"), 1, 7, 7),
                     0);
    assert_int_equal(tree_delete(t, find(t, "/a/y"), 7), 0);
    tb_wbuf_init(&w);
    tb_put_acl(&w, &a);
    assert_int_equal(tree_acl_intern(t, tb_vec_view(&w, 1), &acl), 0);
    assert_int_equal(tree_set_acl(t, find(t, "/a/z"), acl, 1), 0);
    assert_int_equal(tree_create(t, find(t, "/c"), TB_STR("/c/k"), TB_STR_NULL,
                                 open_acl(t), 0, 7, 7, &n),
                     0);
    assert_int_equal(tree_delete(t, n, 7), 0);
    assert_int_equal(tree_delete(t, find(t, "/a/x"), 7), 0);
    assert_null(find(t, "/a/x"));
    tree_rollback(t);
    chk(t);
    assert_same_snapshot(t, &before);
    assert_int_equal(tree_ephemerals_count(t, SID1), 1);
    assert_int_equal(tree_ephemerals_count(t, SID2), 0);
    assert_int_equal(tree_acl_count(t), 2);
    assert_memory_equal(tree_node_data(find(t, "/a")).ptr, "one", 3);

    /* The same transaction committed. */
    tree_begin(t);
    assert_int_equal(tree_delete(t, find(t, "/a/x"), 8), 0);
    assert_int_equal(tree_delete(t, find(t, "/a/y"), 8), 0);
    assert_int_equal(tree_set_data(t, find(t, "/a"), TB_STR("two"), 1, 8, 8),
                     0);
    tree_commit(t);
    chk(t);
    assert_int_equal(tree_ephemerals_count(t, SID1), 0);
    assert_int_equal(tree_node_nchildren(find(t, "/a")), 1);
    tb_wbuf_free(&w);
    tb_wbuf_free(&before);
    tree_close(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_system_nodes),
        cmocka_unit_test(test_create_stats),
        cmocka_unit_test(test_null_and_empty_data),
        cmocka_unit_test(test_children_bookkeeping),
        cmocka_unit_test(test_many_nodes),
        cmocka_unit_test(test_hash_churn),
        cmocka_unit_test(test_hash_churn_moving),
        cmocka_unit_test(test_ephemeral_index),
        cmocka_unit_test(test_containers_and_ttl),
        cmocka_unit_test(test_acl_cache),
        cmocka_unit_test(test_rollback_exact),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
