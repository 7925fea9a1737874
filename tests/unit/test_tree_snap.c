/* Unit tests of the tree's snapshots: round trip, deep paths, a forked
 * child's snapshot, truncation, corruption and the invariants a restore
 * checks. */
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

#include "tree/tree_int.h"
#include "tree_fixture.h"

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
    struct tb_wbuf w, got;
    unsigned char v;
    char buf[65536];
    int fds[2], status;
    ssize_t n;
    pid_t pid;

    (void)state;
    mk_many(t, "f", 20000, "data");
    assert_int_equal(pipe(fds), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        /* Not mapped here at all: mincore fails with ENOMEM. */
        if (mincore(t->tab.node, 1, &v) == 0 || errno != ENOMEM)
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
    const char *sys_config[] = {"/", "/zookeeper", "/zookeeper/quota",
                                "/zookeeper/config"};
    const char *sys_quota[] = {"/", "/zookeeper", "/zookeeper/config",
                               "/zookeeper/quota"};
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
    /* the tree's own nodes belong to no session, TTL or container: the
     * session's close would delete /zookeeper/quota under t->quota */
    assert_int_equal(section_rc(sys_config, 4, 0, 0, 0), 0);
    assert_int_equal(section_rc(sys_quota, 4, SID1, 0, 0),
                     TB_EDATAINCONSISTENCY);
    assert_int_equal(section_rc(sys_config, 4, tree_ttl_owner(7), 0, 0),
                     TB_EDATAINCONSISTENCY);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_snapshot_round_trip),
        cmocka_unit_test(test_snapshot_in_forked_child),
        cmocka_unit_test(test_snapshot_truncated),
        cmocka_unit_test(test_snapshot_corrupt),
        cmocka_unit_test(test_snapshot_invariants),
        cmocka_unit_test(test_ephemeral_parent_refused),
        cmocka_unit_test(test_deep_path),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
