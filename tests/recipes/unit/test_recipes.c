/* Unit tests of the recipes' I/O-free parts: ordering a lock's children by
 * sequence number (never by the random uuid in front), uuid v4 names,
 * path arithmetic, and the timer thread firing in deadline order with the
 * tag of the arming that fired. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "recipes/rcp.h"

static void sort_by_sequence(void **state)
{
    char *names[] = {
        "_c_ffff0000-0000-4000-8000-000000000000-lock-0000000003",
        "_c_00000000-0000-4000-8000-000000000000-lock-0000000010",
        "unrelated",
        "_c_aaaa0000-0000-4000-8000-000000000000-lock-0000000001",
        "_c_bbbb0000-0000-4000-8000-000000000000-lock-notanumber",
        "_c_cccc0000-0000-4000-8000-000000000000-lease-0000000000",
    };
    struct tb_strings v = {6, names};
    struct rcp_child out[6];
    int n;

    (void)state;
    n = rcp_children_sort(&v, "lock-", NULL, out);
    assert_int_equal(n, 3);
    assert_int_equal(out[0].seq, 1);
    assert_int_equal(out[1].seq, 3);
    assert_int_equal(out[2].seq, 10); /* not "10" < "3" as strings */
    assert_ptr_equal(out[0].name, names[3]);
}

static void sort_rw_and_wrapped(void **state)
{
    char *names[] = {
        "_c_1-__WRIT__0000000005",
        "_c_2-__READ__0000000004",
        "_c_3-__READ__-000000001", /* the counter wrapped (Java int) */
        "_c_4-lock-0000000000",
    };
    struct tb_strings v = {4, names};
    struct rcp_child out[4];
    int n;

    (void)state;
    n = rcp_children_sort(&v, "__READ__", "__WRIT__", out);
    assert_int_equal(n, 3);
    assert_int_equal(out[0].seq, -1);
    assert_int_equal(out[1].seq, 4);
    assert_int_equal(out[2].seq, 5);
}

static void uuid_v4(void **state)
{
    char a[RCP_UUID_LEN + 1], b[RCP_UUID_LEN + 1];
    int i;

    (void)state;
    rcp_uuid(a);
    rcp_uuid(b);
    assert_int_equal(strlen(a), 36);
    assert_string_not_equal(a, b);
    for (i = 0; i < 36; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23)
            assert_int_equal(a[i], '-');
        else
            assert_non_null(strchr("0123456789abcdef", a[i]));
    }
    assert_int_equal(a[14], '4');
    assert_non_null(strchr("89ab", a[19]));
}

static void paths(void **state)
{
    char *p;

    (void)state;
    p = rcp_join("/", "a");
    assert_string_equal(p, "/a");
    free(p);
    p = rcp_join("/a/b", "c");
    assert_string_equal(p, "/a/b/c");
    free(p);
    p = rcp_dirname("/a");
    assert_string_equal(p, "/");
    free(p);
    p = rcp_dirname("/a/b/c");
    assert_string_equal(p, "/a/b");
    free(p);
    assert_true(rcp_path_ok("/a/b"));
    assert_true(rcp_path_ok("/"));
    assert_false(rcp_path_ok("a/b"));
    assert_false(rcp_path_ok("/a/"));
    assert_false(rcp_path_ok(NULL));
}

struct probe {
    struct rcp_timer t;
    int order;
    unsigned tag;
};

static int fired;

static void on_fire(struct rcp_timer *t, unsigned tag)
{
    struct probe *p = TB_CONTAINER_OF(t, struct probe, t);

    p->tag = tag;
    p->order = __atomic_add_fetch(&fired, 1, __ATOMIC_SEQ_CST);
}

static void timers(void **state)
{
    struct probe a = {0}, b = {0}, c = {0};
    int64_t now = rcp_now_ms();
    int i;

    (void)state;
    a.t.fn = b.t.fn = c.t.fn = on_fire;
    assert_int_equal(rcp_timer_arm(&a.t, now + 120, 1), 0);
    assert_int_equal(rcp_timer_arm(&b.t, now + 40, 2), 0);
    assert_int_equal(rcp_timer_arm(&c.t, now + 80, 3), 0);
    assert_int_equal(rcp_timer_disarm(&c.t), 1); /* before it fires */
    assert_int_equal(rcp_timer_arm(&c.t, now + 80, 4), 0);
    for (i = 0; i < 200 && __atomic_load_n(&fired, __ATOMIC_SEQ_CST) < 3; i++)
        usleep(5000);
    assert_int_equal(fired, 3);
    assert_int_equal(b.order, 1);
    assert_int_equal(c.order, 2);
    assert_int_equal(a.order, 3);
    assert_int_equal(c.tag, 4);
    assert_true(rcp_now_ms() - now >= 120);
    assert_int_equal(rcp_timer_disarm(&a.t), 0); /* already fired */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sort_by_sequence),
        cmocka_unit_test(sort_rw_and_wrapped),
        cmocka_unit_test(uuid_v4),
        cmocka_unit_test(paths),
        cmocka_unit_test(timers),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
