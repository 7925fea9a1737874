/* The heap's new top is resident once tbd_heap_populate has run: what the
 * heap grew by and no allocation has touched yet is populated in one call. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include "server/heap.h"

/* Pages of [from, to) that are not resident. */
static size_t absent_pages(uintptr_t from, uintptr_t to)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    size_t n, i, absent = 0;
    unsigned char *v;

    from = (from + page - 1) & ~(page - 1);
    to &= ~(page - 1);
    if (to <= from)
        return 0;
    n = (to - from) / page;
    v = calloc(n, 1);
    assert_non_null(v);
    assert_int_equal(mincore((void *)from, to - from, v), 0);
    for (i = 0; i < n; i++)
        absent += !(v[i] & 1);
    free(v);
    return absent;
}

/* The heap grows by one block plus the pad: the pad, untouched by any
 * allocation, is resident after the next call. */
static void test_new_top_populated(void **state)
{
    void *blocks[1024];
    uintptr_t before, end = 0, top;
    int i, n = 0;

    (void)state;
    mallopt(M_MMAP_THRESHOLD, 1 << 20); /* as tumblerd: blocks from the heap */
    tbd_heap_populate();
    before = (uintptr_t)sbrk(0);
    while (n < 1024 && (uintptr_t)sbrk(0) == before) {
        blocks[n] = malloc(16 << 10);
        assert_non_null(blocks[n]);
        memset(blocks[n], 1, 16 << 10);
        end = (uintptr_t)blocks[n++] + (16 << 10);
    }
    top = (uintptr_t)sbrk(0);
    assert_true(top >= end + (64 << 10));
    tbd_heap_populate();
    assert_int_equal(absent_pages(end, top), 0);
    for (i = 0; i < n; i++)
        free(blocks[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_new_top_populated),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
