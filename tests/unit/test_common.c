/* Unit tests: error table, growable buffer, path rules, digest ids. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/common.h"
#include "common/digest.h"
#include "common/map.h"
#include "common/path.h"

static void test_errors(void **state)
{
    (void)state;
    assert_string_equal(tb_strerror(TB_ENONODE), "node does not exist");
    assert_string_equal(tb_errname(TB_EBADVERSION), "EBADVERSION");
    assert_int_equal(TB_ENONODE, -101);
    assert_int_equal(TB_ENOWATCHER, -121);
    assert_string_equal(tb_errname(12345), "UNKNOWN");
}

static void test_wbuf(void **state)
{
    struct tb_wbuf b;
    size_t n;
    uint8_t *p;
    int i;

    (void)state;
    tb_wbuf_init(&b);
    for (i = 0; i < 1000; i++)
        tb_wbuf_put(&b, "abc", 3);
    tb_wbuf_printf(&b, "%d-%s", 42, "x");
    assert_int_equal(b.len, 3004);
    assert_memory_equal(b.base + 3000, "42-x", 4);
    p = tb_wbuf_take(&b, &n);
    assert_int_equal(n, 3004);
    assert_null(b.base);
    free(p);
}

/* Pages of [from, to) of a buffer that are resident, and how many. */
static size_t resident(const struct tb_wbuf *b, size_t from, size_t to,
                       size_t *pages)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), i, n, in = 0;
    uintptr_t a =
        ((uintptr_t)b->base + from + page - 1) & ~(uintptr_t)(page - 1);
    uintptr_t z = ((uintptr_t)b->base + to) & ~(uintptr_t)(page - 1);
    unsigned char *v;

    n = (z - a) / page;
    v = calloc(n, 1);
    assert_non_null(v);
    assert_int_equal(mincore((void *)a, z - a, v), 0);
    for (i = 0; i < n; i++)
        in += v[i] & 1;
    free(v);
    *pages = n;
    return in;
}

/* A buffer past a MiB is resident before it is written, populated a step
 * (a MiB) ahead of what is reserved, not faulted in page by page; the
 * rest of what a growth added is left until it is needed. */
static void test_wbuf_large_populated(void **state)
{
    const size_t mib = (size_t)1 << 20;
    struct tb_wbuf b;
    size_t n, in;

    (void)state;
    tb_wbuf_init(&b);
    tb_wbuf_put(&b, "x", 1);
    assert_int_equal(tb_wbuf_reserve(&b, 8 * mib), 0);
    assert_true(b.cap >= 16 * mib);
    in = resident(&b, 0, 9 * mib, &n);
    assert_int_equal(in, n);
    assert_true(n >= 2048);
    in = resident(&b, 10 * mib, b.cap, &n);
    assert_int_equal(in, 0);
    assert_true(n > 0);

    memset(b.base + b.len, 1, 8 * mib);
    b.len += 8 * mib;
    assert_int_equal(tb_wbuf_reserve(&b, 2 * mib), 0);
    in = resident(&b, 9 * mib, 11 * mib, &n);
    assert_int_equal(in, n);
    in = resident(&b, 12 * mib, b.cap, &n);
    assert_int_equal(in, 0);
    tb_wbuf_free(&b);
}

/* A buffer with a grow function of its own: it is asked for room (at
 * least what is needed) instead of realloc, and a refusal makes the buffer
 * oom with what it held kept. */
struct fixed_buf {
    struct tb_wbuf w;
    uint8_t mem[64];
    unsigned calls;
};

static int fixed_grow(struct tb_wbuf *b, size_t need)
{
    struct fixed_buf *f = TB_CONTAINER_OF(b, struct fixed_buf, w);

    f->calls++;
    if (need > sizeof f->mem)
        return -1;
    b->base = f->mem;
    b->cap = need;
    return 0;
}

static void test_wbuf_grow_hook(void **state)
{
    struct fixed_buf f;
    int i;

    (void)state;
    tb_wbuf_init(&f.w);
    f.w.grow = fixed_grow;
    f.calls = 0;
    for (i = 0; i < 10; i++)
        tb_wbuf_put(&f.w, "abcdef", 6);
    assert_false(f.w.oom);
    assert_int_equal(f.w.len, 60);
    assert_int_equal(f.calls, 10);
    assert_ptr_equal(f.w.base, f.mem);
    assert_memory_equal(f.w.base + 54, "abcdef", 6);
    tb_wbuf_put(&f.w, "abcdef", 6);
    assert_true(f.w.oom);
    assert_int_equal(f.w.len, 60);
    assert_int_equal(tb_wbuf_reserve(&f.w, 1), TB_ENOMEM);
}

static int valid(const char *p)
{
    return tb_path_validate(tb_str_c(p)) == 0;
}

static void test_path_validate(void **state)
{
    (void)state;
    assert_true(valid("/"));
    assert_true(valid("/a"));
    assert_true(valid("/a/b.c/.d/e./..."));
    assert_true(valid("/t/\xc3\xa9"));    /* é */
    assert_true(valid("/with space"));
    assert_false(valid(""));
    assert_false(valid("a"));
    assert_false(valid("/a/"));
    assert_false(valid("//"));
    assert_false(valid("/a//b"));
    assert_false(valid("/a/."));
    assert_false(valid("/a/../b"));
    assert_false(valid("/a\x01"));
    assert_false(valid("/a\x7f"));
    assert_false(valid("/a\xc2\x85"));          /* U+0085, C1 */
    assert_false(valid("/e\xf0\x9f\x98\x80"));  /* emoji: outside the BMP */
    assert_false(valid("/p\xee\x80\x80"));      /* U+E000 private use */
    assert_false(valid("/s\xef\xbf\xb0"));      /* U+FFF0 */
    assert_false(valid("/bad\xc3"));            /* truncated UTF-8 */
    assert_false(valid("/n\xc0\x80"));          /* overlong NUL */
    assert_false(valid("/s\xe0\x80\xaf"));      /* overlong '/' */
    assert_int_equal(tb_path_validate((struct tb_str){"/a\0b", 4}),
                     TB_EBADARGUMENTS);
    assert_int_equal(tb_path_validate(TB_STR_NULL), TB_EBADARGUMENTS);
}

static void test_path_parts(void **state)
{
    struct tb_str p;

    (void)state;
    p = tb_path_parent(TB_STR("/a/b/c"));
    assert_int_equal(p.len, 4);
    assert_memory_equal(p.ptr, "/a/b", 4);
    p = tb_path_parent(TB_STR("/a"));
    assert_true(tb_str_eq(p, TB_STR("/")));
    p = tb_path_basename(TB_STR("/a/bcd"));
    assert_true(tb_str_eq(p, TB_STR("bcd")));
}

static void test_digest(void **state)
{
    char out[128];
    int n;

    (void)state;
    /* The value ZooKeeper 3.8 computes for alice:secret. */
    n = tb_digest_id(TB_STR("alice:secret"), out, sizeof out);
    assert_int_equal(n, (int)strlen("alice:aYXlLOpEooaV1cRAvUL1fp9Qt7E="));
    assert_string_equal(out, "alice:aYXlLOpEooaV1cRAvUL1fp9Qt7E=");
    n = tb_digest_id(TB_STR("nocolon"), out, sizeof out);
    assert_true(n > 8);
    assert_memory_equal(out, "nocolon:", 8);
    assert_int_equal(tb_digest_id(TB_STR("u:p"), out, 10), TB_EINVAL);
}

static void test_map(void **state)
{
    struct tb_map m;
    uint64_t k, key;
    void *v;
    size_t i, n;
    (void)state;

    tb_map_init(&m);
    assert_null(tb_map_get(&m, 5));
    for (k = 1; k <= 5000; k++)
        assert_int_equal(tb_map_put(&m, k * 7919, (void *)(uintptr_t)k), 0);
    assert_int_equal(m.count, 5000);
    for (k = 1; k <= 5000; k += 2)
        assert_ptr_equal(tb_map_del(&m, k * 7919), (void *)(uintptr_t)k);
    assert_null(tb_map_del(&m, 7919));
    for (k = 1; k <= 5000; k++)
        assert_ptr_equal(tb_map_get(&m, k * 7919),
                         k % 2 ? NULL : (void *)(uintptr_t)k);
    n = 0;
    for (i = 0; tb_map_next(&m, &i, &key, &v);)
        n++, assert_int_equal(key / 7919, (uintptr_t)v);
    assert_int_equal(n, 2500);
    assert_int_equal(tb_map_put(&m, 0, NULL), TB_EINVAL);
    tb_map_free(&m);

    /* A replacement never allocates, however full the table: it cannot
     * fail (it grew first, and could fail, when the next insert would). */
    for (k = 1; k <= 8; k++)
        assert_int_equal(tb_map_put(&m, k, NULL), 0);
    assert_int_equal(m.cap, 16);
    assert_int_equal(tb_map_put(&m, 3, &m), 0);
    assert_int_equal(m.cap, 16);
    assert_ptr_equal(tb_map_get(&m, 3), &m);
    assert_int_equal(tb_map_put(&m, 9, NULL), 0);
    assert_int_equal(m.cap, 32);
    assert_int_equal(m.count, 9);
    tb_map_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_wbuf),
        cmocka_unit_test(test_wbuf_large_populated),
        cmocka_unit_test(test_wbuf_grow_hook),
        cmocka_unit_test(test_path_validate),
        cmocka_unit_test(test_path_parts),
        cmocka_unit_test(test_digest),
        cmocka_unit_test(test_map),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
