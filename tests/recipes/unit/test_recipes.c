/* Unit tests of the recipes' I/O-free parts: ordering a lock's children by
 * sequence number (never by the random uuid in front), every lock kind in
 * one queue and what each child is, uuid v4 names,
 * path arithmetic, the timer thread firing in deadline order with the
 * tag of the arming that fired, each timer at or after its deadline; the
 * counter's bytes (Curator's layout) and which nodes a token check counts
 * as holding. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "recipes/rcp.h"

static void sort_by_sequence(void **state)
{
    char *names[] = {
        "_c_ffff0000-0000-4000-8000-000000000000-lock-0000000003",
        "_c_00000000-0000-4000-8000-000000000000-lock-0000000010",
        "_c_aaaa0000-0000-4000-8000-000000000000-lock-0000000001",
        "_c_bbbb0000-0000-4000-8000-000000000000-lock-notanumber",
    };
    struct tb_strings v = {4, names};
    struct rcp_child out[4];
    const char *other;
    int n;

    (void)state;
    n = rcp_children_sort(&v, RCP_LOCK_KINDS, out, &other);
    assert_int_equal(n, 3);
    assert_int_equal(out[0].seq, 1);
    assert_int_equal(out[1].seq, 3);
    assert_int_equal(out[2].seq, 10); /* not "10" < "3" as strings */
    assert_ptr_equal(out[0].name, names[2]);
    assert_ptr_equal(other, names[3]); /* no sequence: of no lock kind */
}

/* Across the counter's wrap, in the order the numbers were given: the
 * holder made at 2147483647 stays ahead of the waiters made after it. */
static void sort_across_the_wrap(void **state)
{
    char *names[] = {
        "_c_1-lock--2147483647",
        "_c_2-lock-2147483647",
        "_c_3-lock--2147483648",
        "_c_4-lock-2147483646",
    };
    struct tb_strings v = {4, names};
    struct rcp_child out[4];

    (void)state;
    assert_int_equal(rcp_children_sort(&v, RCP_LOCK_KINDS, out, NULL), 4);
    assert_ptr_equal(out[0].name, names[3]);
    assert_ptr_equal(out[1].name, names[1]);
    assert_ptr_equal(out[2].name, names[2]);
    assert_ptr_equal(out[3].name, names[0]);
}

/* Every lock kind queues in one order, by the counter they share; the
 * first child of another kind is reported, not queued. */
static void sort_lock_kinds_together(void **state)
{
    char *names[] = {
        "_c_1-__WRIT__0000000005",
        "_c_2-__READ__0000000004",
        "_c_3-__READ__-000000001", /* the counter wrapped (Java int) */
        "_c_4-lock-0000000000",
        "0123456789abcdef0123456789abcdef__lock__0000000007",
        "0123456789abcdef0123456789abcdef__rlock__0000000006",
        "_c_5-latch-0000000002",
        "leases",
    };
    struct tb_strings v = {8, names};
    struct rcp_child out[8];
    const char *other;
    int n;

    (void)state;
    n = rcp_children_sort(&v, RCP_LOCK_KINDS, out, &other);
    assert_int_equal(n, 6);
    assert_int_equal(out[0].seq, -1);
    assert_int_equal(out[1].kind, TB_NODE_MUTEX);
    assert_int_equal(out[2].kind, TB_NODE_READ);
    assert_int_equal(out[3].kind, TB_NODE_WRITE);
    assert_int_equal(out[4].kind, TB_NODE_KAZOO_READ);
    assert_int_equal(out[5].kind, TB_NODE_KAZOO_LOCK);
    assert_ptr_equal(other, names[6]);
    n = rcp_children_sort(&v, RCP_KIND(TB_NODE_LATCH), out, NULL);
    assert_int_equal(n, 1);
}

static void node_kinds(void **state)
{
    int64_t seq = -5;

    (void)state;
    assert_int_equal(tb_lock_node_kind("x__rlock__0000000012", &seq),
                     TB_NODE_KAZOO_READ);
    assert_int_equal(seq, 12);
    assert_int_equal(tb_lock_node_kind("x__lock__0000000012", NULL),
                     TB_NODE_KAZOO_LOCK);
    assert_int_equal(tb_lock_node_kind("_c_u-lease-0000000001", NULL),
                     TB_NODE_LEASE);
    assert_int_equal(tb_lock_node_kind("queue-0000000001", &seq),
                     TB_NODE_OTHER);
    assert_int_equal(seq, 0);
    assert_int_equal(tb_lock_node_kind("lock-", NULL), TB_NODE_OTHER);
    /* After the counter wrapped, "%010d" writes '-' and 10 digits from
     * -2147483648 to -1000000000: 11 characters, all of them the number. */
    assert_int_equal(tb_lock_node_kind("_c_x-lease--2147483648", &seq),
                     TB_NODE_LEASE);
    assert_int_equal(seq, -2147483648LL);
    assert_int_equal(tb_lock_node_kind("_c_x-lock--1000000000", &seq),
                     TB_NODE_MUTEX);
    assert_int_equal(seq, -1000000000LL);
    assert_int_equal(tb_lock_node_kind("_c_x-lease--999999999", &seq),
                     TB_NODE_LEASE);
    assert_int_equal(seq, -999999999);
    assert_int_equal(tb_lock_node_kind("_c_x-lease-2147483647", &seq),
                     TB_NODE_LEASE);
    assert_int_equal(seq, 2147483647);
    /* No other shapes: a sign inside the digits, or 11 digits. */
    assert_int_equal(tb_lock_node_kind("_c_x-lease-00-0000001", NULL),
                     TB_NODE_OTHER);
    assert_int_equal(tb_lock_node_kind("_c_x-lease-12345678901", NULL),
                     TB_NODE_OTHER);
    assert_true(tb_lock_node_shared(TB_NODE_READ));
    assert_true(tb_lock_node_shared(TB_NODE_KAZOO_READ));
    assert_false(tb_lock_node_shared(TB_NODE_MUTEX));
    assert_false(tb_lock_node_shared(TB_NODE_KAZOO_LOCK));
    assert_string_equal(tb_lock_node_what("0123456789abcdef0123456789abcdef"),
                        "a kazoo Semaphore's lease");
    assert_non_null(strstr(tb_lock_node_what("leases"), "semaphore"));
    assert_non_null(strstr(tb_lock_node_what("x__rlock__0000000001"), "kazoo"));
    assert_string_equal(tb_lock_node_what("data"), "a node of no lock layout");
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
    int64_t at; /* rcp_now_ms() when it fired */
};

static pthread_mutex_t fired_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fired_cv = PTHREAD_COND_INITIALIZER;
static int fired;

static void on_fire(struct rcp_timer *t, unsigned tag)
{
    struct probe *p = TB_CONTAINER_OF(t, struct probe, t);

    pthread_mutex_lock(&fired_mu);
    p->at = rcp_now_ms();
    p->tag = tag;
    p->order = ++fired;
    pthread_cond_signal(&fired_cv);
    pthread_mutex_unlock(&fired_mu);
}

/* The deadlines are on rcp_now_ms's clock, which the timer thread reads:
 * no timer may fire before its own, whatever the machine's load, and a
 * late thread still fires the due ones in deadline order.  The waits are
 * for the firings themselves, not for a time. */
static void timers(void **state)
{
    struct probe a = {0}, b = {0}, c = {0};
    int64_t now = rcp_now_ms();
    struct timespec bound;
    int n;

    (void)state;
    a.t.fn = b.t.fn = c.t.fn = on_fire;
    assert_int_equal(rcp_timer_arm(&a.t, now + 30, 1), 0);
    assert_int_equal(rcp_timer_arm(&b.t, now + 10, 2), 0);
    /* Far ahead, so certainly disarmed before it fires. */
    assert_int_equal(rcp_timer_arm(&c.t, now + 600000, 3), 0);
    assert_int_equal(rcp_timer_disarm(&c.t), 1);
    assert_int_equal(rcp_timer_arm(&c.t, now + 20, 4), 0);
    /* Only a timer thread that never fires meets the bound. */
    clock_gettime(CLOCK_REALTIME, &bound);
    bound.tv_sec += 10;
    pthread_mutex_lock(&fired_mu);
    while (fired < 3 &&
           pthread_cond_timedwait(&fired_cv, &fired_mu, &bound) == 0)
        ;
    n = fired;
    pthread_mutex_unlock(&fired_mu);
    assert_int_equal(n, 3);
    assert_int_equal(b.order, 1);
    assert_int_equal(c.order, 2);
    assert_int_equal(a.order, 3);
    assert_int_equal(c.tag, 4);
    assert_true(b.at >= now + 10);
    assert_true(c.at >= now + 20);
    assert_true(a.at >= now + 30);
    assert_int_equal(rcp_timer_disarm(&a.t), 0); /* already fired */
}

/* Curator's DistributedAtomicLong bytes, both ways; what is no counter. */
static void counter_bytes(void **state)
{
    static const unsigned char minus2[8] = {0xff, 0xff, 0xff, 0xff,
                                            0xff, 0xff, 0xff, 0xfe};
    static const int64_t vals[] = {
        0, 1, -1, 0x0102030405060708LL, INT64_MAX, INT64_MIN};
    unsigned char b[8];
    int64_t v = 7;
    size_t i;

    (void)state;
    rcp_counter_encode(-2, b);
    assert_memory_equal(b, minus2, 8);
    rcp_counter_encode(0x0102030405060708LL, b);
    assert_int_equal(b[0], 1);
    assert_int_equal(b[7], 8);
    for (i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        rcp_counter_encode(vals[i], b);
        assert_int_equal(rcp_counter_decode(b, 8, &v), 0);
        assert_true(v == vals[i]);
    }
    assert_int_equal(rcp_counter_decode(NULL, 0, &v), 0);
    assert_int_equal(v, 0);
    assert_int_equal(rcp_counter_decode("", 0, &v), 0);
    assert_int_equal(v, 0);
    assert_int_equal(rcp_counter_decode("12", 2, &v), TB_EDATAINCONSISTENCY);
    assert_int_equal(rcp_counter_decode("123456789", 9, &v),
                     TB_EDATAINCONSISTENCY);
}

/* Which nodes of a queue a token check counts as holding. */
static void token_holders(void **state)
{
    struct rcp_child v[5] = {{NULL, 0, 0}};
    int i;
    const int kinds[][5] = {
        {TB_NODE_MUTEX, TB_NODE_MUTEX, -1},
        {TB_NODE_READ, TB_NODE_KAZOO_READ, TB_NODE_WRITE, TB_NODE_READ, -1},
        {TB_NODE_READ, -1},
        {TB_NODE_WRITE, TB_NODE_READ, TB_NODE_READ, -1},
        {TB_NODE_LATCH, TB_NODE_LATCH, -1},
        {TB_NODE_KAZOO_LOCK, TB_NODE_READ, -1},
    };
    const int want[] = {1, 2, 1, 1, 1, 1};
    size_t c;

    (void)state;
    assert_int_equal(rcp_holders(v, 0), 0);
    for (c = 0; c < sizeof want / sizeof want[0]; c++) {
        for (i = 0; kinds[c][i] >= 0; i++) {
            v[i].kind = kinds[c][i];
            v[i].seq = i;
            v[i].name = "";
        }
        assert_int_equal(rcp_holders(v, i), want[c]);
    }
}

/* The cyclic barrier's names and what one look at a generation says. */
static void cbarrier_look(void **state)
{
    char *gens[] = {"gen-0000000003", "gen-0000000012", "gen-x", "gen-",
                    "other"};
    struct tb_strings g = {5, gens};
    char *open2[] = {"party-u1-0000000001", "party-u0-0000000000"};
    struct tb_strings o = {2, open2};
    char *ended[] = {"party-u0-0000000000", "end"};
    struct tb_strings e = {2, ended};
    struct tb_strings none = {0, NULL};

    (void)state;
    assert_int_equal(rcp_cb_highest_gen(&g), 12);
    assert_int_equal(rcp_cb_highest_gen(&none), -1);
    assert_int_equal(rcp_cb_gen("gen-0000000007"), 7);
    assert_int_equal(rcp_cb_gen("gen-7x"), -1);
    assert_int_equal(rcp_cb_gen("gen--1"), -1);
    assert_int_equal(rcp_cb_party_seq("party-u1-0000000041"), 41);
    assert_int_equal(rcp_cb_party_seq("party-u1-"), -1);
    assert_int_equal(rcp_cb_party_seq("end"), -1);
    /* Two of three, nobody left (cversion = creates): wait; of two: pass. */
    assert_int_equal(rcp_cb_decide(&o, 2, "party-u1-0000000001", 3),
                     RCP_CB_WAIT);
    assert_int_equal(rcp_cb_decide(&o, 2, "party-u1-0000000001", 2),
                     RCP_CB_PASS);
    /* One left while it was open (a create and a delete more): break,
     * even when the count is reached by another arrival. */
    assert_int_equal(rcp_cb_decide(&o, 4, "party-u1-0000000001", 3),
                     RCP_CB_BREAK);
    assert_int_equal(rcp_cb_decide(&o, 4, "party-u1-0000000001", 2),
                     RCP_CB_BREAK);
    /* Our node is gone: our session ended. */
    assert_int_equal(rcp_cb_decide(&o, 2, "party-u9-0000000009", 3),
                     RCP_CB_GONE);
    /* "end" decides, whatever else the look shows. */
    assert_int_equal(rcp_cb_decide(&e, 9, "party-u9-0000000009", 3),
                     RCP_CB_DECIDED);
    /* A look without a node of ours (none yet): the count alone. */
    assert_int_equal(rcp_cb_decide(&o, 2, NULL, 3), RCP_CB_WAIT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sort_by_sequence),
        cmocka_unit_test(sort_across_the_wrap),
        cmocka_unit_test(sort_lock_kinds_together),
        cmocka_unit_test(node_kinds),
        cmocka_unit_test(uuid_v4),
        cmocka_unit_test(paths),
        cmocka_unit_test(timers),
        cmocka_unit_test(counter_bytes),
        cmocka_unit_test(token_holders),
        cmocka_unit_test(cbarrier_look),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
