/* Unit tests of the data tree: system nodes, stats and counters, children
 * bookkeeping, the owner and container indexes, the ACL cache, undo of
 * every mutation, snapshots (round trip, truncation, corruption), and the
 * ACL check and fix-up rules.  The consistency checker runs after every
 * operation. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include "tree/acl.h"
#include "tree/tree.h"
#include "tree/tree_int.h"

#define SID1 ((int64_t)0x0100000000000001LL)
#define SID2 ((int64_t)0x0100000000000002LL)

static void chk(const struct tree *t)
{
    char why[256] = "";
    int rv = tree_check(t, why, sizeof why);

    if (rv != 0)
        fail_msg("tree_check: %s", why);
}

static struct tree *new_tree(void)
{
    struct tree *t;

    assert_int_equal(tree_init(&t), 0);
    chk(t);
    return t;
}

static struct tree_node *find(const struct tree *t, const char *path)
{
    return tree_find(t, tb_str_c(path));
}

static struct tree_acl *open_acl(struct tree *t)
{
    struct tree_acl *a;

    assert_int_equal(tree_acl_intern(t, tb_acl_open_unsafe, &a), 0);
    return a;
}

/* Creates `path` (parent must exist) outside any transaction. */
static struct tree_node *mk(struct tree *t, const char *path, const char *data,
                            int64_t owner, int64_t zxid)
{
    struct tb_str p = tb_str_c(path);
    struct tree_node *parent, *n = NULL;
    size_t i = p.len;

    while (p.ptr[i - 1] != '/')
        i--;
    parent = tree_find(t, (struct tb_str){p.ptr, i > 1 ? i - 1 : 1});
    assert_non_null(parent);
    assert_int_equal(tree_create(t, parent, p, tb_str_c(data), open_acl(t),
                                 owner, zxid, zxid * 1000, &n),
                     0);
    chk(t);
    return n;
}

static void del(struct tree *t, const char *path, int64_t zxid)
{
    struct tree_node *n = find(t, path);

    assert_non_null(n);
    assert_int_equal(tree_delete(t, n, zxid), 0);
    chk(t);
}

static struct tb_stat stat_of(const struct tree *t, const char *path)
{
    struct tb_stat st;
    struct tree_node *n = find(t, path);

    assert_non_null(n);
    tree_node_stat(n, &st);
    return st;
}

static void snap(const struct tree *t, struct tb_wbuf *w)
{
    tb_wbuf_init(w);
    tree_snapshot(t, w);
    assert_false(w->oom);
}

static void assert_same_snapshot(const struct tree *t, const struct tb_wbuf *a)
{
    struct tb_wbuf b;

    snap(t, &b);
    assert_int_equal(a->len, b.len);
    assert_memory_equal(a->base, b.base, a->len);
    tb_wbuf_free(&b);
}

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
    struct tree_node *root = tree_root(t);

    (void)state;
    for (i = 0; i < 20000; i++) {
        snprintf(path, sizeof path, "/n%d", i);
        assert_int_equal(tree_create(t, root, tb_str_c(path), TB_STR("d"),
                                     open_acl(t), 0, i + 1, 0, NULL),
                         0);
    }
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

/* Creates and deletes in a random order, the table hovering around each
 * size it grows to: removal must keep every other node reachable (runs
 * that wrap around the end of the table included) and find nothing it
 * removed. */
static void test_hash_churn(void **state)
{
    enum { NAMES = 3000, STEPS = 60000 };
    static uint8_t present[NAMES];
    struct tree *t = new_tree();
    struct tree_node *root = tree_root(t), *n;
    uint64_t x = 88172645463325252ULL;
    uint64_t live = 0;
    char path[32];
    int i, k;

    (void)state;
    for (i = 0; i < STEPS; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        /* Grow towards NAMES early on, then churn around two thirds. */
        k = (int)(x % (uint64_t)(i < STEPS / 4 ? NAMES * 2 / 3 : NAMES));
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
        if (i % 512 == 0)
            chk(t);
    }
    chk(t);
    for (k = 0; k < NAMES; k++) {
        snprintf(path, sizeof path, "/h%d", k);
        assert_int_equal(find(t, path) != NULL, present[k]);
    }
    assert_int_equal(tree_count(t), live + 4);
    tree_close(t);
}

/* Paths nest far deeper than any recursion could follow. */
static void test_deep_path(void **state)
{
    struct tree *t = new_tree(), *r;
    struct tb_wbuf w, path;
    struct tree_node *parent = tree_root(t), *n;
    struct tb_rd rd;
    int i;

    (void)state;
    tb_wbuf_init(&path);
    for (i = 0; i < 3000; i++) {
        tb_wbuf_put(&path, "/d", 2);
        assert_int_equal(
            tree_create(t, parent, (struct tb_str){(char *)path.base, path.len},
                        TB_STR_NULL, open_acl(t), 0, i + 1, 0, &n),
            0);
        parent = n;
    }
    assert_int_equal(tree_count_descendants(tree_root(t)), 3000 + 3);
    snap(t, &w);
    rd = tb_rd_make(w.base, w.len);
    assert_int_equal(tree_restore(&r, &rd), 0);
    assert_same_snapshot(r, &w);
    tree_close(r);
    tb_wbuf_free(&w);
    tb_wbuf_free(&path);
    tree_close(t);
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

static struct tree *sample_tree(void)
{
    struct tree *t = new_tree();
    struct tb_wbuf w;
    struct tb_acl a = {5, {TB_STR("digest"), TB_STR("bob:x=")}};
    struct tree_acl *acl;

    mk(t, "/a", "alpha", 0, 2);
    mk(t, "/a/b", "", SID1, 3);
    mk(t, "/a/c", "gamma", 0, 4);
    mk(t, "/c", "", TREE_CONTAINER_OWNER, 5);
    mk(t, "/ttl", "t", tree_ttl_owner(5000), 6);
    assert_int_equal(tree_create(t, tree_root(t), TB_STR("/null"), TB_STR_NULL,
                                 open_acl(t), 0, 7, 7, NULL),
                     0);
    tb_wbuf_init(&w);
    tb_put_acl(&w, &a);
    assert_int_equal(tree_acl_intern(t, tb_vec_view(&w, 1), &acl), 0);
    assert_int_equal(tree_set_acl(t, find(t, "/a/c"), acl, 3), 0);
    tb_wbuf_free(&w);
    del(t, "/a/b", 8);
    mk(t, "/a/d", "", SID2, 9);
    chk(t);
    return t;
}

static void test_snapshot_round_trip(void **state)
{
    struct tree *t = sample_tree(), *r;
    struct tb_wbuf w;
    struct tb_rd rd;
    struct tb_stat s1, s2;

    (void)state;
    snap(t, &w);
    rd = tb_rd_make(w.base, w.len);
    assert_int_equal(tree_restore(&r, &rd), 0);
    assert_ptr_equal(rd.pos, w.base + w.len);
    memset(&s1, 0, sizeof s1);
    memset(&s2, 0, sizeof s2);
    chk(r);
    assert_same_snapshot(r, &w);
    tree_node_stat(find(t, "/a"), &s1);
    tree_node_stat(find(r, "/a"), &s2);
    assert_memory_equal(&s1, &s2, sizeof s1);
    assert_null(tree_node_data(find(r, "/null")).ptr);
    assert_non_null(tree_node_data(find(r, "/c")).ptr);
    assert_int_equal(tree_ephemerals_count(r, SID2), 1);
    assert_int_equal(tree_count(r), tree_count(t));
    assert_int_equal(tree_data_size(r), tree_data_size(t));
    assert_int_equal(tree_acl_count(r), 3);
    assert_int_equal(tree_node_ccount(find(r, "/a")), 3);
    tree_close(r);
    tb_wbuf_free(&w);
    tree_close(t);
}

/* A snapshot's forked child walks the tree without its path table, which
 * a large tree keeps out of children: the child's snapshot is the
 * parent's, byte for byte. */
static void test_snapshot_in_forked_child(void **state)
{
    struct tree *t = new_tree();
    struct tree_node *root = tree_root(t);
    struct tb_wbuf w, got;
    unsigned char v;
    char path[32], buf[65536];
    int fds[2], i, status;
    ssize_t n;
    pid_t pid;

    (void)state;
    for (i = 0; i < 20000; i++) {
        snprintf(path, sizeof path, "/f%d", i);
        assert_int_equal(tree_create(t, root, tb_str_c(path), TB_STR("data"),
                                     open_acl(t), 0, i + 1, 0, NULL),
                         0);
    }
    assert_int_equal(pipe(fds), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        /* Not mapped here at all: mincore fails with ENOMEM. */
        if (mincore(t->slots, 1, &v) == 0 || errno != ENOMEM)
            _exit(2);
        snap(t, &w);
        _exit(write(fds[1], w.base, w.len) == (ssize_t)w.len ? 0 : 1);
    }
    close(fds[1]);
    tb_wbuf_init(&got);
    while ((n = read(fds[0], buf, sizeof buf)) > 0)
        tb_wbuf_put(&got, buf, (size_t)n);
    close(fds[0]);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_same_snapshot(t, &got);
    tb_wbuf_free(&got);
    tree_close(t);
}

static int restore_rc(const uint8_t *p, size_t n)
{
    struct tree *r;
    struct tb_rd rd = tb_rd_make(p, n);
    int rv = tree_restore(&r, &rd);

    if (rv == 0) {
        chk(r);
        tree_close(r);
    }
    return rv;
}

static void test_snapshot_truncated(void **state)
{
    struct tree *t = sample_tree();
    struct tb_wbuf w;
    size_t cut;
    uint8_t *copy;

    (void)state;
    snap(t, &w);
    for (cut = 0; cut < w.len; cut++) {
        copy = malloc(cut + 1); /* exact size: ASan sees any overread */
        memcpy(copy, w.base, cut);
        assert_int_equal(restore_rc(copy, cut), TB_EDATAINCONSISTENCY);
        free(copy);
    }
    tb_wbuf_free(&w);
    tree_close(t);
}

/* Flipping any byte either still gives a consistent tree (a data byte, a
 * stat) or is refused; never a crash or a broken tree. */
static void test_snapshot_corrupt(void **state)
{
    struct tree *t = sample_tree();
    struct tb_wbuf w;
    size_t i;
    int bit, refused = 0;
    uint8_t *copy;

    (void)state;
    snap(t, &w);
    copy = malloc(w.len);
    for (i = 0; i < w.len; i++) {
        for (bit = 0; bit < 8; bit++) {
            memcpy(copy, w.base, w.len);
            copy[i] ^= (uint8_t)(1u << bit);
            refused += restore_rc(copy, w.len) != 0;
        }
    }
    assert_true(refused > 0);
    free(copy);
    tb_wbuf_free(&w);
    tree_close(t);
}

/* Hand-made sections breaking one rule each. */
static void put_node(struct tb_wbuf *w, const char *path, int64_t owner,
                     uint32_t acl)
{
    tb_put_STR(w, tb_str_c(path));
    tb_put_I32(w, 0);
    tb_put_I64(w, 0);
    tb_put_I64(w, 0);
    tb_put_I64(w, 0);
    tb_put_I64(w, 0);
    tb_put_I64(w, 0);
    tb_put_I64(w, owner);
    tb_put_I32(w, 0);
    tb_put_I32(w, 0);
    tb_put_I32(w, 0);
    tb_put_I32(w, (int32_t)acl);
}

static int section_rc(const char *const *paths, size_t n, int64_t owner_last,
                      uint32_t acl_last, int dup_acl)
{
    struct tb_wbuf w;
    size_t i;
    int rv;

    tb_wbuf_init(&w);
    tb_put_I32(&w, dup_acl ? 2 : 1);
    for (i = 0; i < (dup_acl ? 2u : 1u); i++) {
        tb_put_I32(&w, 1);
        tb_put_I32(&w, (int32_t)tb_acl_open_unsafe.len);
        tb_wbuf_put(&w, tb_acl_open_unsafe.raw, tb_acl_open_unsafe.len);
    }
    tb_put_I64(&w, (int64_t)n);
    for (i = 0; i < n; i++)
        put_node(&w, paths[i], i == n - 1 ? owner_last : 0,
                 i == n - 1 ? acl_last : 0);
    rv = restore_rc(w.base, w.len);
    tb_wbuf_free(&w);
    return rv;
}

static void test_snapshot_invariants(void **state)
{
    const char *ok[] = {"/", "/zookeeper", "/zookeeper/quota",
                        "/zookeeper/config", "/x"};
    const char *no_root[] = {"/zookeeper", "/", "/zookeeper/quota",
                             "/zookeeper/config"};
    const char *orphan[] = {"/", "/zookeeper", "/zookeeper/quota",
                            "/zookeeper/config", "/x/y"};
    const char *dup[] = {"/", "/zookeeper", "/zookeeper/quota",
                         "/zookeeper/config", "/zookeeper"};
    const char *bad[] = {"/", "/zookeeper", "/zookeeper/quota",
                         "/zookeeper/config", "/a/"};
    const char *no_sys[] = {"/", "/zookeeper", "/zookeeper/quota"};
    const char *eph_kid[] = {
        "/",  "/zookeeper", "/zookeeper/quota", "/zookeeper/config",
        "/e", "/e/k"};

    (void)state;
    assert_int_equal(section_rc(ok, 5, 0, 0, 0), 0);
    assert_int_equal(section_rc(ok, 5, SID1, 0, 0), 0);
    assert_int_equal(section_rc(ok, 5, tree_ttl_owner(7), 0, 0), 0);
    assert_int_equal(section_rc(ok, 5, 0, 1, 0), TB_EDATAINCONSISTENCY);
    assert_int_equal(section_rc(ok, 5, 0, 0, 1), TB_EDATAINCONSISTENCY);
    assert_int_equal(section_rc(ok, 5, TREE_EXTENDED_MASK, 0, 0),
                     TB_EDATAINCONSISTENCY); /* TTL 0 */
    assert_int_equal(section_rc(ok, 5, (int64_t)0xFF00010000000005ULL, 0, 0),
                     TB_EDATAINCONSISTENCY); /* unknown extended type */
    assert_int_equal(section_rc(no_root, 4, 0, 0, 0), TB_EDATAINCONSISTENCY);
    assert_int_equal(section_rc(orphan, 5, 0, 0, 0), TB_EDATAINCONSISTENCY);
    assert_int_equal(section_rc(dup, 5, 0, 0, 0), TB_EDATAINCONSISTENCY);
    assert_int_equal(section_rc(bad, 5, 0, 0, 0), TB_EDATAINCONSISTENCY);
    assert_int_equal(section_rc(no_sys, 3, 0, 0, 0), TB_EDATAINCONSISTENCY);
    /* /e is given owner 0 here; only the last node gets an owner, so build
     * the ephemeral-parent case with the owner on /e instead. */
    assert_int_equal(section_rc(eph_kid, 5, SID1, 0, 0), 0);
    assert_int_equal(section_rc(eph_kid, 6, 0, 0, 0), 0);
}

static void test_ephemeral_parent_refused(void **state)
{
    struct tb_wbuf w;
    const char *paths[] = {
        "/",  "/zookeeper", "/zookeeper/quota", "/zookeeper/config",
        "/e", "/e/k"};
    size_t i;

    (void)state;
    tb_wbuf_init(&w);
    tb_put_I32(&w, 1);
    tb_put_I32(&w, 1);
    tb_put_I32(&w, (int32_t)tb_acl_open_unsafe.len);
    tb_wbuf_put(&w, tb_acl_open_unsafe.raw, tb_acl_open_unsafe.len);
    tb_put_I64(&w, 6);
    for (i = 0; i < 6; i++)
        put_node(&w, paths[i], i == 4 ? SID1 : 0, 0);
    assert_int_equal(restore_rc(w.base, w.len), TB_EDATAINCONSISTENCY);
    tb_wbuf_free(&w);
}

/* ACL rules. */

struct ids {
    struct tb_wbuf w;
    int32_t n;
};

static void ids_add(struct ids *ids, const char *scheme, const char *id)
{
    struct tb_id x = {tb_str_c(scheme), tb_str_c(id)};

    if (ids->n == 0)
        tb_wbuf_init(&ids->w);
    tb_put_id(&ids->w, &x);
    ids->n++;
}

static struct tb_vec ids_vec(struct ids *ids)
{
    return ids->n ? tb_vec_view(&ids->w, ids->n) : (struct tb_vec){0, NULL, 0};
}

static struct tb_vec acl1(struct tb_wbuf *w, int32_t perms, const char *scheme,
                          const char *id)
{
    struct tb_acl a = {perms, {tb_str_c(scheme), tb_str_c(id)}};

    tb_wbuf_init(w);
    tb_put_acl(w, &a);
    return tb_vec_view(w, 1);
}

static void test_acl_check(void **state)
{
    struct tb_wbuf w;
    struct ids none = {0}, bob = {0}, ip = {0}, sup = {0};
    struct tb_vec acl;

    (void)state;
    ids_add(&bob, "ip", "127.0.0.1");
    ids_add(&bob, "digest", "bob:hash=");
    ids_add(&ip, "ip", "10.1.2.3");
    ids_add(&sup, "super", "");

    /* Empty or null list: anything goes. */
    assert_int_equal(tb_acl_check((struct tb_vec){0, NULL, 0}, ids_vec(&none),
                                  0, TB_PERM_ADMIN),
                     0);
    assert_int_equal(tb_acl_check((struct tb_vec){-1, NULL, 0}, ids_vec(&none),
                                  0, TB_PERM_ADMIN),
                     0);
    assert_int_equal(
        tb_acl_check(tb_acl_open_unsafe, ids_vec(&none), 0, TB_PERM_ALL), 0);
    assert_int_equal(
        tb_acl_check(tb_acl_read_unsafe, ids_vec(&none), 0, TB_PERM_READ), 0);
    assert_int_equal(
        tb_acl_check(tb_acl_read_unsafe, ids_vec(&none), 0, TB_PERM_WRITE),
        TB_ENOAUTH);
    assert_int_equal(
        tb_acl_check(tb_acl_read_unsafe, ids_vec(&none), 1, TB_PERM_WRITE), 0);
    assert_int_equal(
        tb_acl_check(tb_acl_read_unsafe, ids_vec(&sup), 0, TB_PERM_WRITE), 0);

    acl = acl1(&w, TB_PERM_READ | TB_PERM_WRITE, "digest", "bob:hash=");
    assert_int_equal(tb_acl_check(acl, ids_vec(&bob), 0, TB_PERM_WRITE), 0);
    assert_int_equal(tb_acl_check(acl, ids_vec(&bob), 0, TB_PERM_DELETE),
                     TB_ENOAUTH);
    assert_int_equal(tb_acl_check(acl, ids_vec(&ip), 0, TB_PERM_READ),
                     TB_ENOAUTH);
    tb_wbuf_free(&w);
    acl = acl1(&w, TB_PERM_READ, "digest", "bob:hash");
    assert_int_equal(tb_acl_check(acl, ids_vec(&bob), 0, TB_PERM_READ),
                     TB_ENOAUTH); /* exact match only */
    tb_wbuf_free(&w);

    acl = acl1(&w, TB_PERM_READ, "ip", "10.0.0.0/8");
    assert_int_equal(tb_acl_check(acl, ids_vec(&ip), 0, TB_PERM_READ), 0);
    assert_int_equal(tb_acl_check(acl, ids_vec(&bob), 0, TB_PERM_READ),
                     TB_ENOAUTH);
    tb_wbuf_free(&w);
    acl = acl1(&w, TB_PERM_READ, "ip", "10.1.2.3");
    assert_int_equal(tb_acl_check(acl, ids_vec(&ip), 0, TB_PERM_READ), 0);
    tb_wbuf_free(&w);
    acl = acl1(&w, TB_PERM_READ, "world", "someone");
    assert_int_equal(tb_acl_check(acl, ids_vec(&ip), 0, TB_PERM_READ),
                     TB_ENOAUTH);
    tb_wbuf_free(&w);
    /* Same id under another scheme is not a match. */
    acl = acl1(&w, TB_PERM_READ, "digest", "10.1.2.3");
    assert_int_equal(tb_acl_check(acl, ids_vec(&ip), 0, TB_PERM_READ),
                     TB_ENOAUTH);
    tb_wbuf_free(&w);
    tb_wbuf_free(&bob.w);
    tb_wbuf_free(&ip.w);
    tb_wbuf_free(&sup.w);
}

static void test_acl_ip_rules(void **state)
{
    (void)state;
    assert_true(tb_acl_ip_valid(TB_STR("1.2.3.4")));
    assert_true(tb_acl_ip_valid(TB_STR("1.2.3.4/0")));
    assert_true(tb_acl_ip_valid(TB_STR("1.2.3.4/32")));
    assert_true(tb_acl_ip_valid(TB_STR("+1.2.3.4"))); /* Integer.parseInt */
    assert_false(tb_acl_ip_valid(TB_STR("999.1.1.1")));
    assert_false(tb_acl_ip_valid(TB_STR("1.2.3.4/33")));
    assert_false(tb_acl_ip_valid(TB_STR("1.2.3.4/-1")));
    assert_false(tb_acl_ip_valid(TB_STR("1.2.3.4/")));
    assert_false(tb_acl_ip_valid(TB_STR("1.2.3")));
    assert_false(tb_acl_ip_valid(TB_STR("1.2.3.4.")));
    assert_false(tb_acl_ip_valid(TB_STR("1..3.4")));
    assert_false(tb_acl_ip_valid(TB_STR("::1")));
    assert_false(tb_acl_ip_valid(TB_STR("")));
    assert_true(
        tb_acl_ip_match(TB_STR("192.168.1.0/24"), TB_STR("192.168.1.77")));
    assert_false(
        tb_acl_ip_match(TB_STR("192.168.1.0/24"), TB_STR("192.168.2.77")));
    assert_true(
        tb_acl_ip_match(TB_STR("192.168.1.0/23"), TB_STR("192.168.0.1")));
    assert_true(tb_acl_ip_match(TB_STR("0.0.0.0/0"), TB_STR("8.8.8.8")));
    assert_true(tb_acl_ip_match(TB_STR("10.0.0.1/31"), TB_STR("10.0.0.0")));
    assert_false(tb_acl_ip_match(TB_STR("10.0.0.1"), TB_STR("10.0.0.0")));
    assert_false(tb_acl_ip_match(TB_STR("10.0.0.1"), TB_STR("::1")));
    assert_true(tb_acl_digest_valid(TB_STR("bob:h=")));
    assert_true(tb_acl_digest_valid(TB_STR(":h")));
    assert_true(tb_acl_digest_valid(TB_STR("a:b:"))); /* trailing dropped */
    assert_false(tb_acl_digest_valid(TB_STR("a:")));
    assert_false(tb_acl_digest_valid(TB_STR("a")));
    assert_false(tb_acl_digest_valid(TB_STR("a:b:c")));
    assert_false(tb_acl_digest_valid(TB_STR("a::b")));
    assert_false(tb_acl_digest_valid(TB_STR(":")));
    assert_false(tb_acl_digest_valid(TB_STR("")));
}

static int fixup_rc(struct tb_vec acl, struct tb_vec ids, struct tb_wbuf *out,
                    int32_t *n)
{
    tb_wbuf_init(out);
    return tb_acl_fixup(acl, ids, out, n);
}

static void test_acl_fixup(void **state)
{
    struct tb_wbuf in, out, expect;
    struct ids bob = {0}, iponly = {0};
    struct tb_acl a;
    int32_t n;
    int i;

    (void)state;
    ids_add(&bob, "ip", "127.0.0.1");
    ids_add(&bob, "digest", "bob:h1=");
    ids_add(&bob, "super", "");
    ids_add(&bob, "digest", "al:h2=");
    ids_add(&iponly, "ip", "127.0.0.1");

    assert_int_equal(
        fixup_rc((struct tb_vec){0, NULL, 0}, ids_vec(&bob), &out, &n),
        TB_EINVALIDACL);
    tb_wbuf_free(&out);
    assert_int_equal(
        fixup_rc((struct tb_vec){-1, NULL, 0}, ids_vec(&bob), &out, &n),
        TB_EINVALIDACL);
    tb_wbuf_free(&out);
    assert_int_equal(fixup_rc(tb_acl_open_unsafe, ids_vec(&iponly), &out, &n),
                     0);
    assert_int_equal(n, 1);
    assert_memory_equal(out.base, tb_acl_open_unsafe.raw, out.len);
    tb_wbuf_free(&out);

    /* auth expands to the digest ids only, with the entry's perms. */
    assert_int_equal(fixup_rc(tb_acl_creator_all, ids_vec(&bob), &out, &n), 0);
    assert_int_equal(n, 2);
    tb_wbuf_init(&expect);
    a = (struct tb_acl){31, {TB_STR("digest"), TB_STR("bob:h1=")}};
    tb_put_acl(&expect, &a);
    a.id.id = TB_STR("al:h2=");
    tb_put_acl(&expect, &a);
    assert_int_equal(out.len, expect.len);
    assert_memory_equal(out.base, expect.base, out.len);
    tb_wbuf_free(&expect);
    tb_wbuf_free(&out);
    assert_int_equal(fixup_rc(tb_acl_creator_all, ids_vec(&iponly), &out, &n),
                     TB_EINVALIDACL);
    tb_wbuf_free(&out);

    /* One bad entry spoils the list. */
    {
        const char *bad[][2] = {{"world", "someone"}, {"digest", "nocolon"},
                                {"ip", "999.1.1.1"},  {"ip", "1.2.3.4/33"},
                                {"sasl", "bob"},      {"super", ""},
                                {"x509", "CN=a"}};
        for (i = 0; i < 7; i++) {
            tb_wbuf_init(&in);
            tb_wbuf_put(&in, tb_acl_open_unsafe.raw, tb_acl_open_unsafe.len);
            a = (struct tb_acl){1, {tb_str_c(bad[i][0]), tb_str_c(bad[i][1])}};
            tb_put_acl(&in, &a);
            assert_int_equal(
                fixup_rc(tb_vec_view(&in, 2), ids_vec(&bob), &out, &n),
                TB_EINVALIDACL);
            tb_wbuf_free(&out);
            tb_wbuf_free(&in);
        }
    }
    /* Null id. */
    tb_wbuf_init(&in);
    a = (struct tb_acl){1, {TB_STR("world"), TB_STR_NULL}};
    tb_put_acl(&in, &a);
    assert_int_equal(fixup_rc(tb_vec_view(&in, 1), ids_vec(&bob), &out, &n),
                     TB_EINVALIDACL);
    tb_wbuf_free(&out);
    tb_wbuf_free(&in);

    /* Duplicates go, first occurrence order stays; perms make a
     * difference.  Large lists take the hashed path. */
    for (int big = 0; big < 2; big++) {
        int copies = big ? 500 : 3;
        tb_wbuf_init(&in);
        for (i = 0; i < copies; i++) {
            a = (struct tb_acl){1, {TB_STR("ip"), TB_STR("10.0.0.1")}};
            tb_put_acl(&in, &a);
            a = (struct tb_acl){3, {TB_STR("ip"), TB_STR("10.0.0.1")}};
            tb_put_acl(&in, &a);
            tb_wbuf_put(&in, tb_acl_open_unsafe.raw, tb_acl_open_unsafe.len);
        }
        assert_int_equal(
            fixup_rc(tb_vec_view(&in, 3 * copies), ids_vec(&bob), &out, &n), 0);
        assert_int_equal(n, 3);
        assert_int_equal(out.len, in.len / (size_t)copies);
        assert_memory_equal(out.base, in.base, out.len);
        tb_wbuf_free(&out);
        tb_wbuf_free(&in);
    }
    tb_wbuf_free(&bob.w);
    tb_wbuf_free(&iponly.w);
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
        cmocka_unit_test(test_deep_path),
        cmocka_unit_test(test_ephemeral_index),
        cmocka_unit_test(test_containers_and_ttl),
        cmocka_unit_test(test_acl_cache),
        cmocka_unit_test(test_rollback_exact),
        cmocka_unit_test(test_snapshot_round_trip),
        cmocka_unit_test(test_snapshot_in_forked_child),
        cmocka_unit_test(test_snapshot_truncated),
        cmocka_unit_test(test_snapshot_corrupt),
        cmocka_unit_test(test_snapshot_invariants),
        cmocka_unit_test(test_ephemeral_parent_refused),
        cmocka_unit_test(test_acl_check),
        cmocka_unit_test(test_acl_ip_rules),
        cmocka_unit_test(test_acl_fixup),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
