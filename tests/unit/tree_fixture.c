/* Helpers shared by the tree's unit tests (test_tree*.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include "tree_fixture.h"

void chk(const struct tree *t)
{
    char why[256] = "";
    int rv = tree_check(t, why, sizeof why);

    if (rv != 0)
        fail_msg("tree_check: %s", why);
}

struct tree *new_tree(void)
{
    struct tree *t;

    assert_int_equal(tree_init(&t), 0);
    chk(t);
    return t;
}

struct tree_node *find(const struct tree *t, const char *path)
{
    return tree_find(t, tb_str_c(path));
}

struct tree_acl *open_acl(struct tree *t)
{
    struct tree_acl *a;

    assert_int_equal(tree_acl_intern(t, tb_acl_open_unsafe, &a), 0);
    return a;
}

/* Creates `path` (parent must exist) outside any transaction. */
struct tree_node *mk(struct tree *t, const char *path, const char *data,
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

void del(struct tree *t, const char *path, int64_t zxid)
{
    struct tree_node *n = find(t, path);

    assert_non_null(n);
    assert_int_equal(tree_delete(t, n, zxid), 0);
    chk(t);
}

struct tb_stat stat_of(const struct tree *t, const char *path)
{
    struct tb_stat st;
    struct tree_node *n = find(t, path);

    assert_non_null(n);
    tree_node_stat(n, &st);
    return st;
}

void snap(const struct tree *t, struct tb_wbuf *w)
{
    tb_wbuf_init(w);
    tree_snapshot(t, w);
    assert_false(w->oom);
}

void assert_same_snapshot(const struct tree *t, const struct tb_wbuf *a)
{
    struct tb_wbuf b;

    snap(t, &b);
    assert_int_equal(a->len, b.len);
    assert_memory_equal(a->base, b.base, a->len);
    tb_wbuf_free(&b);
}

void mk_many(struct tree *t, const char *prefix, int n, const char *data)
{
    char path[64];
    int i;

    for (i = 0; i < n; i++) {
        snprintf(path, sizeof path, "/%s%d", prefix, i);
        assert_int_equal(tree_create(t, tree_root(t), tb_str_c(path),
                                     tb_str_c(data), open_acl(t), 0, i + 1, 0,
                                     NULL),
                         0);
    }
}
