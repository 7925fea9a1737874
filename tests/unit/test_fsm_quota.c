/* Unit tests of quotas in the state machine, as ZooKeeper 3.8 keeps them:
 * the stats nodes' bookkeeping, mntr's sums by namespace, and hard limits
 * refusing creates and setData.  The tree's consistency checker runs
 * after every apply. */
#include "fsm_fixture.h"

static int cr(struct fx *x, int64_t s, const char *path, const char *data)
{
    return create_full(x, s, TB_OP_CREATE, tb_str_c(path), tb_str_c(data),
                       tb_acl_open_unsafe, 0, -1);
}

static void data_is(struct fx *x, const char *path, const char *expect)
{
    struct tree_node *n = tree_find(fsm_tree(x->f), tb_str_c(path));
    struct tb_str d;

    assert_non_null(n);
    d = tree_node_data(n);
    assert_int_equal(d.len, strlen(expect));
    assert_memory_equal(d.ptr, expect, d.len);
}

/* ZooKeeper's quota bookkeeping: the stats node of the deepest quota above
 * a change follows every create, delete and setData below it, and is
 * counted afresh when it is created; its own Stat does not move. */
static void test_quota(void **state)
{
    struct fx *x = fx_new();
    int64_t s = open_session(x, 10000);
    struct tb_stat before, after;
    struct multi m;
    struct tb_wbuf w;
    struct fx *y;

    (void)state;
    tb_wbuf_init(&m.w);
    assert_int_equal(cr(x, s, "/q", "abc"), 0);
    assert_int_equal(cr(x, s, "/q/a", "12345"), 0);
    assert_int_equal(cr(x, s, "/qx", "not under /q"), 0);
    assert_int_equal(cr(x, s, "/zookeeper/quota/q", ""), 0);
    assert_int_equal(
        cr(x, s, "/zookeeper/quota/q/zookeeper_limits", "count=3,bytes=-1"), 0);
    assert_int_equal(
        cr(x, s, "/zookeeper/quota/q/zookeeper_stats", "count=0,bytes=0"), 0);
    data_is(x, "/zookeeper/quota/q/zookeeper_stats", "count=2,bytes=8");
    before = stat_of(x, "/zookeeper/quota/q/zookeeper_stats");

    assert_int_equal(cr(x, s, "/q/b", "xy"), 0);
    data_is(x, "/zookeeper/quota/q/zookeeper_stats", "count=3,bytes=10");
    assert_int_equal(x->quota.len, 0);
    assert_int_equal(cr(x, s, "/q/b/c", ""), 0); /* over the count */
    data_is(x, "/zookeeper/quota/q/zookeeper_stats", "count=4,bytes=10");
    assert_int_equal(x->quota.len, strlen("/q count=4/3|"));
    assert_memory_equal(x->quota.base, "/q count=4/3|", x->quota.len);
    assert_int_equal(set_data(x, s, "/q/a", TB_STR("1"), -1), 0);
    data_is(x, "/zookeeper/quota/q/zookeeper_stats", "count=4,bytes=6");
    assert_int_equal(del(x, s, "/q/b/c", -1), 0);
    assert_int_equal(set_data(x, s, "/qx", TB_STR(""), -1), 0);
    data_is(x, "/zookeeper/quota/q/zookeeper_stats", "count=3,bytes=6");
    after = stat_of(x, "/zookeeper/quota/q/zookeeper_stats");
    assert_int_equal(after.version, before.version);
    assert_int_equal(after.mzxid, before.mzxid);
    assert_int_equal(after.data_length, strlen("count=3,bytes=6"));

    /* Counts a client set near the top wrap as Java's longs do. */
    assert_int_equal(set_data(x, s, "/zookeeper/quota/q/zookeeper_stats",
                              TB_STR("count=9223372036854775807,bytes=0"), -1),
                     0);
    assert_int_equal(cr(x, s, "/q/w", ""), 0);
    data_is(x, "/zookeeper/quota/q/zookeeper_stats",
            "count=-9223372036854775808,bytes=0");
    assert_int_equal(del(x, s, "/q/w", -1), 0);
    data_is(x, "/zookeeper/quota/q/zookeeper_stats",
            "count=9223372036854775807,bytes=0");
    assert_int_equal(set_data(x, s, "/zookeeper/quota/q/zookeeper_stats",
                              TB_STR("count=3,bytes=6"), -1),
                     0);

    /* A deeper quota takes its subtree's changes. */
    assert_int_equal(cr(x, s, "/zookeeper/quota/q/b", ""), 0);
    assert_int_equal(cr(x, s, "/zookeeper/quota/q/b/zookeeper_limits", ""), 0);
    assert_int_equal(cr(x, s, "/zookeeper/quota/q/b/zookeeper_stats", ""), 0);
    data_is(x, "/zookeeper/quota/q/b/zookeeper_stats", "count=1,bytes=2");
    assert_int_equal(cr(x, s, "/q/b/d", "1234"), 0);
    data_is(x, "/zookeeper/quota/q/b/zookeeper_stats", "count=2,bytes=6");
    data_is(x, "/zookeeper/quota/q/zookeeper_stats", "count=3,bytes=6");
    /* Limits as 3.8's zkCli writes them: a value ends at '=' too. */
    assert_int_equal(
        set_data(x, s, "/zookeeper/quota/q/b/zookeeper_limits",
                 TB_STR("count=-1,bytes=7=;byteHardLimit=-1;countHardLimit=-1"),
                 -1),
        0);
    x->quota.len = 0;
    assert_int_equal(set_data(x, s, "/q/b/d", TB_STR("12345"), -1), 0);
    assert_int_equal(x->quota.len, 0); /* 7 bytes: at the limit */
    assert_int_equal(set_data(x, s, "/q/b/d", TB_STR("123456"), -1), 0);
    assert_int_equal(x->quota.len, strlen("/q/b bytes=8/7|"));
    assert_memory_equal(x->quota.base, "/q/b bytes=8/7|", x->quota.len);
    assert_int_equal(set_data(x, s, "/q/b/d", TB_STR("1234"), -1), 0);

    /* A restored tree keeps the books, and reports to the new hooks. */
    y = fx_new();
    snap(x, &w);
    assert_int_equal(fsm_restore(y->f, w.base, w.len), 0);
    y->zxid = x->zxid;
    assert_int_equal(cr(y, s, "/q/g", "1"), 0);
    data_is(y, "/zookeeper/quota/q/zookeeper_stats", "count=4,bytes=7");
    assert_int_equal(y->quota.len, strlen("/q count=4/3|"));
    tb_wbuf_free(&w);
    fx_free(y);

    /* A multi that fails leaves the stats as they were, and tells of no
     * quota its undone create went over. */
    x->quota.len = 0;
    m_create(&m, TB_OP_CREATE, "/q/e", 0, -1);
    m_delete(&m, "/q/nonexistent", -1);
    assert_int_equal(m_apply(x, s, &m), 0);
    assert_false(exists(x, "/q/e"));
    data_is(x, "/zookeeper/quota/q/zookeeper_stats", "count=3,bytes=6");
    assert_int_equal(x->quota.len, 0);

    /* Without its limits, a path is under no quota. */
    assert_int_equal(del(x, s, "/zookeeper/quota/q/zookeeper_limits", -1), 0);
    assert_int_equal(cr(x, s, "/q/f", ""), 0);
    data_is(x, "/zookeeper/quota/q/zookeeper_stats", "count=3,bytes=6");
    tb_wbuf_free(&m.w);
    fx_free(x);
}

static void add_sums(void *arg, const struct tree_quota_sums *q)
{
    tb_wbuf_printf(arg, "%.*s", (int)q->ns.len, q->ns.ptr);
    if (q->limits)
        tb_wbuf_printf(arg, " limits %lld/%lld", (long long)q->count_limit,
                       (long long)q->bytes_limit);
    if (q->stats)
        tb_wbuf_printf(arg, " use %lld/%lld", (long long)q->count,
                       (long long)q->bytes);
    tb_wbuf_printf(arg, "|");
}

static void sums_are(struct fx *x, const char *expect)
{
    struct tb_wbuf w;

    tb_wbuf_init(&w);
    tree_quota_namespaces(fsm_tree(x->f), add_sums, &w);
    assert_int_equal(w.len, strlen(expect));
    assert_memory_equal(w.base, expect, w.len);
    tb_wbuf_free(&w);
}

/* mntr's sums by namespace, as ZooKeeper's QuotaMetricsUtils makes them. */
static void test_quota_namespaces(void **state)
{
    struct fx *x = fx_new();
    int64_t s = open_session(x, 10000);

    (void)state;
    sums_are(x, "");
    assert_int_equal(cr(x, s, "/a", "xyz"), 0);
    assert_int_equal(cr(x, s, "/a/b", "1"), 0);
    assert_int_equal(cr(x, s, "/zookeeper/quota/a", ""), 0);
    sums_are(x, ""); /* no limits or stats yet */
    assert_int_equal(cr(x, s, "/zookeeper/quota/a/zookeeper_limits",
                        "count=5,bytes=100,countHardLimit=10"),
                     0);
    sums_are(x, "a limits 10/100|"); /* the hard limit first */
    assert_int_equal(cr(x, s, "/zookeeper/quota/a/zookeeper_stats", ""), 0);
    sums_are(x, "a limits 10/100 use 2/4|");
    /* A deeper quota in the same namespace adds to it, its subtree counted
     * twice, and a missing limit adds -1. */
    assert_int_equal(cr(x, s, "/zookeeper/quota/a/b", ""), 0);
    assert_int_equal(
        cr(x, s, "/zookeeper/quota/a/b/zookeeper_limits", "count=7"), 0);
    assert_int_equal(cr(x, s, "/zookeeper/quota/a/b/zookeeper_stats", ""), 0);
    sums_are(x, "a limits 17/99 use 3/5|");
    /* Only leaves with data count; empty limits are -1. */
    assert_int_equal(cr(x, s, "/zookeeper/quota/n", ""), 0);
    assert_int_equal(create_full(x, s, TB_OP_CREATE,
                                 TB_STR("/zookeeper/quota/n/zookeeper_limits"),
                                 TB_STR_NULL, tb_acl_open_unsafe, 0, -1),
                     0);
    assert_int_equal(cr(x, s, "/zookeeper/quota/e", ""), 0);
    assert_int_equal(cr(x, s, "/zookeeper/quota/e/zookeeper_limits", ""), 0);
    assert_int_equal(cr(x, s, "/zookeeper/quota/k", ""), 0);
    assert_int_equal(cr(x, s, "/zookeeper/quota/k/zookeeper_limits", "count=1"),
                     0);
    assert_int_equal(
        cr(x, s, "/zookeeper/quota/k/zookeeper_limits/kid", "count=1"), 0);
    sums_are(x, "a limits 17/99 use 3/5|e limits -1/-1|");
    /* Limits for "/" (ZooKeeper 3.8.0 stops on them): a namespace of that
     * name for mntr, and no quota over any write. */
    assert_int_equal(
        cr(x, s, "/zookeeper/quota/zookeeper_limits", "count=0,bytes=0"), 0);
    x->quota.len = 0;
    assert_int_equal(cr(x, s, "/c", ""), 0);
    assert_int_equal(x->quota.len, 0);
    sums_are(x, "a limits 17/99 use 3/5|e limits -1/-1|"
                "zookeeper_limits limits 0/0|");
    fx_free(x);
}

static void quota_is(struct fx *x, const char *expect)
{
    assert_int_equal(x->quota.len, strlen(expect));
    assert_memory_equal(x->quota.base, expect, x->quota.len);
    x->quota.len = 0;
}

/* Hard limits refuse a create or setData that would pass them, in the txns
 * the leader marked TB_TXN_ENFORCE_QUOTA only, after ZooKeeper's other
 * checks but before the version's; each op of a multi sees those before
 * it. */
static void test_quota_enforced(void **state)
{
    const char *stats = "/zookeeper/quota/q/zookeeper_stats";
    struct fx *x = fx_new();
    int64_t s = open_session(x, 10000);
    struct tb_error_resp e;
    struct multi m;
    struct tb_rd r;

    (void)state;
    tb_wbuf_init(&m.w);
    assert_int_equal(cr(x, s, "/q", ""), 0);
    assert_int_equal(cr(x, s, "/zookeeper/quota/q", ""), 0);
    assert_int_equal(cr(x, s, "/zookeeper/quota/q/zookeeper_limits",
                        "count=-1,bytes=-1=;byteHardLimit=5;countHardLimit=3"),
                     0);
    assert_int_equal(cr(x, s, stats, ""), 0);
    /* Not marked: counted, not refused. */
    assert_int_equal(cr(x, s, "/q/a", "1234567"), 0);
    assert_int_equal(del(x, s, "/q/a", -1), 0);
    quota_is(x, "");

    x->flags = TB_TXN_ENFORCE_QUOTA;
    assert_int_equal(cr(x, s, "/q/a", "12345"), 0);
    assert_int_equal(cr(x, s, "/q/b", ""), 0);
    data_is(x, stats, "count=3,bytes=5");
    assert_int_equal(cr(x, s, "/q/c", ""), TB_EQUOTAEXCEEDED);
    assert_false(exists(x, "/q/c"));
    quota_is(x, "/q countHardLimit=4/3 refused|");
    assert_int_equal(cr(x, s, "/q/a", ""), TB_ENODEEXISTS);
    assert_int_equal(cr(x, s, "/q/none/x", ""), TB_ENONODE);
    assert_int_equal(set_data(x, s, "/q/b", TB_STR("x"), 5), TB_EQUOTAEXCEEDED);
    quota_is(x, "/q byteHardLimit=6/5 refused|");
    /* A setData that keeps the size is not checked. */
    assert_int_equal(set_data(x, s, "/q/b", TB_STR(""), 5), TB_EBADVERSION);
    assert_int_equal(set_data(x, s, "/q/a", TB_STR("54321"), -1), 0);
    assert_int_equal(set_data(x, s, "/q/a", TB_STR("1"), -1), 0);
    data_is(x, stats, "count=3,bytes=1");

    /* Alone, either setData fits (4 and 3 bytes); the second, after the
     * first, does not. */
    m_set(&m, "/q/b", -1);
    m_set(&m, "/q/a", -1);
    assert_int_equal(m_apply(x, s, &m), 0);
    r = tb_rd_make(x->body.base, x->body.len);
    res_hdr(&r, TB_OP_ERROR, 0);
    assert_int_equal(tb_error_resp_decode(&r, &e), 0);
    res_hdr(&r, TB_OP_ERROR, TB_EQUOTAEXCEEDED);
    assert_int_equal(tb_error_resp_decode(&r, &e), 0);
    assert_int_equal(e.err, TB_EQUOTAEXCEEDED);
    res_end(&r);
    data_is(x, stats, "count=3,bytes=1");
    data_is(x, "/q/b", "");
    quota_is(x, "/q byteHardLimit=6/5 refused|"); /* the multi failed */

    /* A delete makes room; without stats, limits hold nothing. */
    assert_int_equal(del(x, s, "/q/b", -1), 0);
    assert_int_equal(cr(x, s, "/q/c", ""), 0);
    /* A value with a '\0' in it is no number: no limit. */
    assert_int_equal(set_data(x, s, "/zookeeper/quota/q/zookeeper_limits",
                              (struct tb_str){"countHardLimit=2\0", 17}, -1),
                     0);
    assert_int_equal(cr(x, s, "/q/e", ""), 0);
    /* Nor is one with a blank before it (Java's Long.parseLong refuses
     * it; strtoll skips it). */
    assert_int_equal(set_data(x, s, "/zookeeper/quota/q/zookeeper_limits",
                              TB_STR("countHardLimit= 2"), -1),
                     0);
    assert_int_equal(cr(x, s, "/q/f", ""), 0);
    assert_int_equal(del(x, s, stats, -1), 0);
    assert_int_equal(cr(x, s, "/q/d", "123456"), 0);
    quota_is(x, "");
    tb_wbuf_free(&m.w);
    fx_free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quota),
        cmocka_unit_test(test_quota_enforced),
        cmocka_unit_test(test_quota_namespaces),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
