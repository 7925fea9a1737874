/* Unit tests of the state machine's operations: txns built with the proto
 * encoders are applied and the results, result bodies, watch events, stats
 * and sequence names are compared with what ZooKeeper 3.8 produces; every
 * error of each check order; multi atomicity (snapshot bytes unchanged by
 * a failed multi); sessions and their ephemerals; container and TTL
 * cleanup; a reconfig's outcome.  test_fsm_state.c has determinism,
 * snapshots and allocation failure; test_fsm_quota.c the quotas.  The
 * tree's consistency checker runs after every apply. */
#include "fsm_fixture.h"


static void test_sessions(void **state)
{
    struct fx *x = fx_new();
    struct fsm_session_info info;
    int64_t s1, s2;
    struct tb_wbuf b;
    struct tb_create_session_txn bad = {5000, TB_STR("short")};

    (void)state;
    s1 = open_session(x, 10000);
    assert_int_equal(s1, (int64_t)((1ULL << 56) | 1));
    s2 = open_session(x, 4000);
    assert_int_equal(fsm_session_count(x->f), 2);
    assert_int_equal(fsm_session_get(x->f, s2, &info), 1);
    assert_int_equal(info.timeout_ms, 4000);
    assert_memory_equal(info.passwd, "0123456789abcdef", 16);
    assert_string_equal((char *)x->sess.base, "+100000000000001/10000|"
                                              "+100000000000002/4000|");
    tb_wbuf_init(&b);
    tb_create_session_txn_encode(&b, &bad);
    assert_int_equal(apply(x, TB_OP_CREATESESSION, 0, &b), TB_EMARSHALLING);
    tb_wbuf_free(&b);
    assert_int_equal(fsm_session_count(x->f), 2);

    assert_int_equal(close_session(x, s1), 0);
    assert_int_equal(x->body.len, 0);
    assert_int_equal(fsm_session_get(x->f, s1, NULL), 0);
    assert_int_equal(close_session(x, s1), TB_ESESSIONEXPIRED);
    assert_int_equal(close_session(x, 12345), TB_ESESSIONEXPIRED);
    /* Every write from a closed or unknown session. */
    assert_int_equal(create(x, s1, "/a", 0), TB_ESESSIONEXPIRED);
    assert_int_equal(del(x, s1, "/a", -1), TB_ESESSIONEXPIRED);
    assert_int_equal(set_data(x, s1, "/", TB_STR(""), -1), TB_ESESSIONEXPIRED);
    assert_int_equal(set_acl(x, 0, "/", tb_acl_open_unsafe, -1),
                     TB_ESESSIONEXPIRED);
    assert_int_equal(x->zxid, 10);
    fx_free(x);
}

static void test_create_basic(void **state)
{
    struct fx *x = fx_new();
    int64_t s = open_session(x, 10000);
    struct tb_stat st;

    (void)state;
    x->time = 5555;
    assert_int_equal(create(x, s, "/a", 0), 0);
    assert_int_equal(x->res_type, TB_OP_CREATE);
    assert_int_equal(x->res_origin, 77);
    body_path_is(x, "/a");
    assert_int_equal(x->body.len, 4 + 2);
    ev_is(x, "1 /a|4 /|");
    st = stat_of(x, "/a");
    assert_int_equal(st.czxid, x->zxid);
    assert_int_equal(st.ctime, 5555);
    assert_int_equal(st.data_length, 1);
    assert_int_equal(stat_of(x, "/").pzxid, x->zxid);
    assert_int_equal(stat_of(x, "/").cversion, 0);

    /* create2 answers path + Stat. */
    assert_int_equal(create_full(x, s, TB_OP_CREATE2, TB_STR("/a/b"),
                                 TB_STR_NULL, tb_acl_open_unsafe, 1, -1),
                     0);
    body_path_is(x, "/a/b");
    st = body_stat(x, 4 + 4);
    assert_int_equal(st.czxid, x->zxid);
    assert_int_equal(st.ephemeral_owner, s);
    assert_int_equal(st.data_length, 0);
    ev_is(x, "1 /a/b|4 /a|");
    assert_null(tree_node_data(tree_find(fsm_tree(x->f), TB_STR("/a/b"))).ptr);

    /* Containers and TTL nodes answer like create2 and hide their owner. */
    assert_int_equal(create_full(x, s, TB_OP_CREATECONTAINER, TB_STR("/c"),
                                 TB_STR(""), tb_acl_open_unsafe, 4, -1),
                     0);
    assert_int_equal(body_stat(x, 4 + 2).ephemeral_owner, 0);
    assert_int_equal(tree_node_owner(tree_find(fsm_tree(x->f), TB_STR("/c"))),
                     TREE_CONTAINER_OWNER);
    assert_int_equal(create_full(x, s, TB_OP_CREATETTL, TB_STR("/t"),
                                 TB_STR(""), tb_acl_open_unsafe, 5, 1000),
                     0);
    assert_int_equal(body_stat(x, 4 + 2).ephemeral_owner, 0);
    assert_int_equal(tree_node_owner(tree_find(fsm_tree(x->f), TB_STR("/t"))),
                     tree_ttl_owner(1000));
    /* Containers and TTL nodes may have children, /zookeeper too. */
    assert_int_equal(create(x, s, "/c/k", 0), 0);
    assert_int_equal(create(x, s, "/t/k", 0), 0);
    assert_int_equal(create(x, s, "/zookeeper/x", 0), 0);
    assert_int_equal(fsm_ephemeral_count(x->f), 1);
    fx_free(x);
}

static void test_sequential_names(void **state)
{
    struct fx *x = fx_new();
    int64_t s = open_session(x, 10000);
    struct tree_node *sq;

    (void)state;
    assert_int_equal(create(x, s, "/sq", 0), 0);
    assert_int_equal(create(x, s, "/sq/n-", 2), 0);
    body_path_is(x, "/sq/n-0000000000");
    assert_int_equal(create(x, s, "/sq/n-", 3), 0);
    body_path_is(x, "/sq/n-0000000001");
    assert_int_equal(create(x, s, "/sq/n-", 2), 0);
    body_path_is(x, "/sq/n-0000000002");
    assert_int_equal(del(x, s, "/sq/n-0000000001", -1), 0);
    assert_int_equal(create(x, s, "/sq/n-", 2), 0);
    body_path_is(x, "/sq/n-0000000003"); /* a delete does not lower it */
    assert_int_equal(create(x, s, "/sq/plain", 0), 0);
    assert_int_equal(create(x, s, "/sq/", 2), 0);
    body_path_is(x, "/sq/0000000005"); /* plain creates count too */
    assert_int_equal(create(x, s, "/sq", 2), 0);
    body_path_is(x, "/sq0000000001");
    assert_int_equal(stat_of(x, "/sq").num_children, 5);
    assert_int_equal(stat_of(x, "/sq").cversion, 7);
    assert_int_equal(create_full(x, s, TB_OP_CREATETTL, TB_STR("/sq/t-"),
                                 TB_STR(""), tb_acl_open_unsafe, 6, 50),
                     0);
    body_path_is(x, "/sq/t-0000000006");

    /* Java's %010d of a wrapped (negative) counter. */
    sq = tree_find(fsm_tree(x->f), TB_STR("/sq"));
    tree_node_set_ccount(sq, INT32_MAX);
    assert_int_equal(create(x, s, "/sq/w-", 2), 0);
    body_path_is(x, "/sq/w-2147483647");
    assert_int_equal(create(x, s, "/sq/w-", 2), 0);
    body_path_is(x, "/sq/w--2147483648");
    tree_node_set_ccount(sq, -1);
    assert_int_equal(create(x, s, "/sq/w-", 2), 0);
    body_path_is(x, "/sq/w--000000001");
    /* A wrapped name may collide: NodeExists, and the counter stays. */
    tree_node_set_ccount(sq, 5);
    assert_int_equal(create(x, s, "/sq/", 2), TB_ENODEEXISTS);
    assert_int_equal(tree_node_ccount(sq), 5);
    fx_free(x);
}

static void test_create_errors(void **state)
{
    struct fx *x = fx_new();
    int64_t s = open_session(x, 10000), gone = fsm_session_id_for(999);
    struct tb_wbuf w, w2;
    struct tb_vec ro = one_acl(&w, TB_PERM_READ, "world", "anyone");
    struct tb_vec bad = one_acl(&w2, TB_PERM_ALL, "world", "nobody");
    struct tb_wbuf before;
    int64_t z;

    (void)state;
    assert_int_equal(create(x, s, "/t", 0), 0);
    assert_int_equal(create_acl(x, s, "/ro", ro), 0);
    assert_int_equal(create(x, s, "/e", TB_EPHEMERAL), 0);
    snap(x, &before);
    z = x->zxid;

    /* Flags and TTL rules come first, even before the session. */
    assert_int_equal(create(x, gone, "/t/x", 7), TB_EBADARGUMENTS);
    assert_int_equal(create(x, gone, "/t/x", -1), TB_EBADARGUMENTS);
    assert_int_equal(create(x, s, "/t/x", 4), TB_EBADARGUMENTS);
    assert_int_equal(create(x, s, "/t/x", 5), TB_EBADARGUMENTS);
    assert_int_equal(create_full(x, s, TB_OP_CREATE2, TB_STR("/t/x"),
                                 TB_STR(""), tb_acl_open_unsafe, 6, -1),
                     TB_EBADARGUMENTS);
    assert_int_equal(create_full(x, s, TB_OP_CREATECONTAINER, TB_STR("/t/x"),
                                 TB_STR(""), tb_acl_open_unsafe, 0, -1),
                     TB_EBADARGUMENTS);
    assert_int_equal(create_full(x, s, TB_OP_CREATETTL, TB_STR("/t/x"),
                                 TB_STR(""), tb_acl_open_unsafe, 0, -1),
                     TB_EBADARGUMENTS);
    assert_int_equal(create_full(x, s, TB_OP_CREATETTL, TB_STR("/t/x"),
                                 TB_STR(""), tb_acl_open_unsafe, 1, 100),
                     TB_EBADARGUMENTS);
    assert_int_equal(create_full(x, s, TB_OP_CREATETTL, TB_STR("/t/x"),
                                 TB_STR(""), tb_acl_open_unsafe, 5, 0),
                     TB_EBADARGUMENTS);
    assert_int_equal(create_full(x, s, TB_OP_CREATETTL, TB_STR("/t/x"),
                                 TB_STR(""), tb_acl_open_unsafe, 5,
                                 TREE_TTL_MAX + 1),
                     TB_EBADARGUMENTS);
    assert_int_equal(create_full(x, gone, TB_OP_CREATETTL, TB_STR("/t/x"),
                                 TB_STR(""), tb_acl_open_unsafe, 5, -5),
                     TB_EBADARGUMENTS);
    /* Then the session, before any path check. */
    assert_int_equal(create(x, gone, "t", 0), TB_ESESSIONEXPIRED);
    /* Cheap path check, then the ACL, then the parent. */
    assert_int_equal(create(x, s, "t", 0), TB_EBADARGUMENTS);
    assert_int_equal(create(x, s, "", 0), TB_EBADARGUMENTS);
    assert_int_equal(create_full(x, s, TB_OP_CREATE, TB_STR("/t/a\0b"),
                                 TB_STR(""), tb_acl_open_unsafe, 0, -1),
                     TB_EBADARGUMENTS);
    assert_int_equal(create_full(x, s, TB_OP_CREATE, TB_STR_NULL, TB_STR(""),
                                 tb_acl_open_unsafe, 0, -1),
                     TB_EBADARGUMENTS);
    assert_int_equal(create_acl(x, s, "t", bad), TB_EBADARGUMENTS);
    assert_int_equal(create_acl(x, s, "/missing/x", bad), TB_EINVALIDACL);
    assert_int_equal(create_acl(x, s, "/t/x", (struct tb_vec){0, NULL, 0}),
                     TB_EINVALIDACL);
    assert_int_equal(create_acl(x, s, "/t/x", tb_acl_creator_all),
                     TB_EINVALIDACL); /* no digest identity */
    assert_int_equal(create(x, s, "/missing/x", 0), TB_ENONODE);
    assert_int_equal(create(x, s, "/t//x", 0), TB_ENONODE);
    assert_int_equal(create(x, s, "/t/./x", 0), TB_ENONODE);
    /* CREATE on the parent is checked before the full path validation. */
    assert_int_equal(create(x, s, "/ro/x", 0), TB_ENOAUTH);
    assert_int_equal(create(x, s, "/ro/.", 0), TB_ENOAUTH);
    assert_int_equal(create(x, s, "/t/", 0), TB_EBADARGUMENTS);
    assert_int_equal(create(x, s, "/t/.", 0), TB_EBADARGUMENTS);
    assert_int_equal(create(x, s, "/t/..", 0), TB_EBADARGUMENTS);
    assert_int_equal(create(x, s, "/t/a\x01", 0), TB_EBADARGUMENTS);
    assert_int_equal(create(x, s, "/t/\xf0\x9f\x98\x80", 0), TB_EBADARGUMENTS);
    /* Then existence, then the ephemeral parent. */
    assert_int_equal(create(x, s, "/", 0), TB_ENODEEXISTS);
    assert_int_equal(create(x, s, "/t", TB_EPHEMERAL), TB_ENODEEXISTS);
    assert_int_equal(create(x, s, "/e", 0), TB_ENODEEXISTS);
    assert_int_equal(create(x, s, "/e/x", 0), TB_ENOCHILDRENFOREPHEMERALS);
    assert_int_equal(create(x, s, "/e/x", 3), TB_ENOCHILDRENFOREPHEMERALS);
    /* Every failure consumed a zxid and changed nothing else. */
    assert_int_equal(x->zxid, z + 35);
    x->zxid = z;
    assert_int_equal(fsm_apply(x->f, z, "", 0), 0); /* last_zxid back */
    assert_int_equal(x->rc, TB_EMARSHALLING);
    assert_snapshot_is(x, &before);

    /* /t/ with a sequential flag passes: the suffix comes first. */
    assert_int_equal(create(x, s, "/t/", 2), 0);
    body_path_is(x, "/t/0000000000");
    assert_int_equal(create(x, s, "/t/é", 0), 0);
    tb_wbuf_free(&before);
    tb_wbuf_free(&w);
    tb_wbuf_free(&w2);
    fx_free(x);
}

static void test_delete(void **state)
{
    struct fx *x = fx_new();
    int64_t s = open_session(x, 10000);
    struct tb_wbuf w;
    struct tb_vec nodel =
        one_acl(&w, TB_PERM_ALL & ~TB_PERM_DELETE, "world", "anyone");
    int32_t cv;

    (void)state;
    assert_int_equal(create(x, s, "/a", 0), 0);
    assert_int_equal(create(x, s, "/a/b", 0), 0);
    assert_int_equal(create_acl(x, s, "/nd", nodel), 0);
    assert_int_equal(create(x, s, "/nd/k", 0), 0);

    assert_int_equal(del(x, fsm_session_id_for(99), "t", -1),
                     TB_ESESSIONEXPIRED);
    assert_int_equal(del(x, s, "t", -1), TB_EBADARGUMENTS);
    assert_int_equal(del(x, s, "/", -1), TB_EBADARGUMENTS);
    assert_int_equal(del(x, s, "/zookeeper", -1), TB_EBADARGUMENTS);
    assert_int_equal(del(x, s, "/zookeeper/quota", -1), TB_EBADARGUMENTS);
    assert_int_equal(del(x, s, "/zookeeper/config", -1), TB_EBADARGUMENTS);
    assert_int_equal(del(x, s, "/missing/x", -1), TB_ENONODE);
    assert_int_equal(del(x, s, "/nd/missing", 5), TB_ENOAUTH); /* parent */
    assert_int_equal(del(x, s, "/nd/k", -1), TB_ENOAUTH);
    assert_int_equal(del(x, s, "/a/", -1), TB_ENONODE);
    assert_int_equal(del(x, s, "/a//b", -1), TB_ENONODE);
    assert_int_equal(del(x, s, "/a/c", 3), TB_ENONODE);
    assert_int_equal(del(x, s, "/a", 3), TB_EBADVERSION);
    assert_int_equal(del(x, s, "/a", 0), TB_ENOTEMPTY);
    assert_int_equal(del(x, s, "/a", -1), TB_ENOTEMPTY);
    cv = stat_of(x, "/a").cversion;
    assert_int_equal(del(x, s, "/a/b", 0), 0);
    assert_int_equal(x->body.len, 0);
    ev_is(x, "2 /a/b|4 /a|");
    assert_int_equal(stat_of(x, "/a").cversion, cv + 1);
    assert_int_equal(stat_of(x, "/a").pzxid, x->zxid);
    assert_int_equal(stat_of(x, "/a").num_children, 0);
    assert_int_equal(set_data(x, s, "/a", TB_STR("v"), -1), 0);
    assert_int_equal(del(x, s, "/a", 0), TB_EBADVERSION);
    assert_int_equal(del(x, s, "/a", 1), 0);
    ev_is(x, "2 /a|4 /|");
    tb_wbuf_free(&w);
    fx_free(x);
}

static void test_set_data(void **state)
{
    struct fx *x = fx_new();
    int64_t s = open_session(x, 10000);
    struct tb_wbuf w;
    struct tb_vec ro = one_acl(&w, TB_PERM_READ, "world", "anyone");
    struct tb_stat st;

    (void)state;
    assert_int_equal(create(x, s, "/a", 0), 0);
    assert_int_equal(create_acl(x, s, "/ro", ro), 0);
    assert_int_equal(set_data(x, 0, "bad", TB_STR(""), -1), TB_ESESSIONEXPIRED);
    assert_int_equal(set_data(x, s, "/a/", TB_STR(""), -1), TB_EBADARGUMENTS);
    assert_int_equal(set_data(x, s, "", TB_STR(""), -1), TB_EBADARGUMENTS);
    assert_int_equal(set_data(x, s, "/b", TB_STR(""), -1), TB_ENONODE);
    assert_int_equal(set_data(x, s, "/ro", TB_STR(""), 9), TB_ENOAUTH);
    assert_int_equal(set_data(x, s, "/a", TB_STR(""), 9), TB_EBADVERSION);
    x->time = 777;
    assert_int_equal(set_data(x, s, "/a", TB_STR("hello"), 0), 0);
    ev_is(x, "3 /a|");
    st = body_stat(x, 0);
    assert_int_equal(st.version, 1);
    assert_int_equal(st.mzxid, x->zxid);
    assert_int_equal(st.mtime, 777);
    assert_int_equal(st.data_length, 5);
    assert_true(st.czxid < st.mzxid);
    assert_int_equal(set_data(x, s, "/a", TB_STR_NULL, -1), 0);
    assert_int_equal(body_stat(x, 0).version, 2);
    assert_null(tree_node_data(tree_find(fsm_tree(x->f), TB_STR("/a"))).ptr);
    assert_int_equal(set_data(x, s, "/zookeeper", TB_STR("z"), -1), 0);
    x->super = 1; /* super ignores ACLs */
    assert_int_equal(set_data(x, s, "/ro", TB_STR("x"), -1), 0);
    tb_wbuf_free(&w);
    fx_free(x);
}

/* A reconfig's outcome (fsm_reconfig.c): on success /zookeeper/config
 * holds the members then "version=" this txn's zxid in hex, watchers hear
 * of it, the result is its data and stat; an error changes nothing. */
static void test_reconfig_outcome(void **state)
{
    struct fx *x = fx_new();
    struct tb_wbuf b;
    struct tb_rd r;
    struct tb_get_data_resp res;
    struct tb_str data;
    char want[128];

    (void)state;
    tb_wbuf_init(&b);
    tb_reconfig_txn_encode(
        &b, &(struct tb_reconfig_txn){TB_ERECONFIGINPROGRESS, TB_STR("")});
    assert_int_equal(apply(x, TB_OP_RECONFIG_TXN, 0, &b),
                     TB_ERECONFIGINPROGRESS);
    data = tree_node_data(tree_find(fsm_tree(x->f), TB_STR("/zookeeper/config")));
    assert_int_equal(data.len, 0);
    ev_is(x, "");
    b.len = 0;
    tb_reconfig_txn_encode(
        &b, &(struct tb_reconfig_txn){
                0, TB_STR("server.1=127.0.0.1:2888:3888:participant;"
                          "0.0.0.0:2181\n")});
    x->time = 4242;
    assert_int_equal(apply(x, TB_OP_RECONFIG_TXN, 0, &b), 0);
    snprintf(want, sizeof want,
             "server.1=127.0.0.1:2888:3888:participant;0.0.0.0:2181\n"
             "version=%llx",
             (unsigned long long)x->zxid);
    ev_is(x, "3 /zookeeper/config|");
    r = tb_rd_make(x->body.base, x->body.len);
    assert_int_equal(tb_get_data_resp_decode(&r, &res), 0);
    assert_int_equal(res.data.len, strlen(want));
    assert_memory_equal(res.data.ptr, want, strlen(want));
    assert_int_equal(res.stat.mzxid, x->zxid);
    assert_int_equal(res.stat.mtime, 4242);
    /* ZooKeeper's dataVersion after a reconfig: -1, the SetDataTxn's. */
    assert_int_equal(res.stat.version, -1);
    assert_int_equal(stat_of(x, "/zookeeper/config").version, -1);
    data = tree_node_data(tree_find(fsm_tree(x->f), TB_STR("/zookeeper/config")));
    assert_int_equal(data.len, strlen(want));
    /* An outcome in one of tumblerd's own codes is none the leader logs:
     * MarshallingError, not an out of memory that would stop every
     * replica at every start. */
    b.len = 0;
    tb_reconfig_txn_encode(&b,
                           &(struct tb_reconfig_txn){TB_ENOMEM, TB_STR("")});
    assert_int_equal(apply(x, TB_OP_RECONFIG_TXN, 0, &b), TB_EMARSHALLING);
    /* Malformed: MarshallingError, nothing changed. */
    b.len = 0;
    tb_put_I32(&b, 0);
    assert_int_equal(apply(x, TB_OP_RECONFIG_TXN, 0, &b), TB_EMARSHALLING);
    assert_int_equal(stat_of(x, "/zookeeper/config").mzxid, res.stat.mzxid);
    tb_wbuf_free(&b);
    fx_free(x);
}

static void test_set_acl(void **state)
{
    struct fx *x = fx_new();
    int64_t s = open_session(x, 10000);
    struct tb_wbuf w1, w2, w3;
    struct tb_vec noadmin =
        one_acl(&w1, TB_PERM_ALL & ~TB_PERM_ADMIN, "world", "anyone");
    struct tb_vec bad = one_acl(&w2, TB_PERM_ALL, "ip", "999.1.1.1");
    struct tb_vec dig = one_acl(&w3, TB_PERM_ALL, "digest", "bob:h=");
    struct tb_stat st;
    int64_t z;

    (void)state;
    assert_int_equal(create(x, s, "/a", 0), 0);
    assert_int_equal(create_acl(x, s, "/na", noadmin), 0);
    z = stat_of(x, "/a").mzxid;
    assert_int_equal(set_acl(x, 0, "/a", bad, -1), TB_ESESSIONEXPIRED);
    assert_int_equal(set_acl(x, s, "a", bad, -1), TB_EBADARGUMENTS);
    assert_int_equal(set_acl(x, s, "/missing", bad, -1), TB_EINVALIDACL);
    assert_int_equal(set_acl(x, s, "/a", (struct tb_vec){0, NULL, 0}, -1),
                     TB_EINVALIDACL);
    assert_int_equal(set_acl(x, s, "/missing", dig, -1), TB_ENONODE);
    assert_int_equal(set_acl(x, s, "/na", dig, 7), TB_ENOAUTH);
    assert_int_equal(set_acl(x, s, "/a", dig, 7), TB_EBADVERSION);
    assert_int_equal(set_acl(x, s, "/a", dig, 0), 0);
    ev_is(x, ""); /* setACL fires nothing */
    st = body_stat(x, 0);
    assert_int_equal(st.aversion, 1);
    assert_int_equal(st.version, 0);
    assert_int_equal(st.mzxid, z);
    /* Now only bob may touch /a. */
    assert_int_equal(set_data(x, s, "/a", TB_STR(""), -1), TB_ENOAUTH);
    fx_id(x, "ip", "127.0.0.1");
    fx_id(x, "digest", "bob:h=");
    assert_int_equal(set_data(x, s, "/a", TB_STR(""), -1), 0);
    /* auth expands to the caller's digest ids. */
    assert_int_equal(set_acl(x, s, "/a", tb_acl_creator_all, 1), 0);
    assert_int_equal(tree_node_acl(tree_find(fsm_tree(x->f), TB_STR("/a"))).len,
                     dig.len);
    assert_memory_equal(
        tree_node_acl(tree_find(fsm_tree(x->f), TB_STR("/a"))).raw, dig.raw,
        dig.len);
    /* /zookeeper/config starts at aversion -1 and READ only. */
    assert_int_equal(set_data(x, s, "/zookeeper/config", TB_STR(""), -1),
                     TB_ENOAUTH);
    assert_int_equal(set_acl(x, s, "/zookeeper/config", dig, -1), TB_ENOAUTH);
    x->super = 1;
    assert_int_equal(set_acl(x, s, "/zookeeper/config", dig, 0),
                     TB_EBADVERSION);
    assert_int_equal(set_acl(x, s, "/zookeeper/config", dig, -1), 0);
    assert_int_equal(body_stat(x, 0).aversion, 0);
    tb_wbuf_free(&w1);
    tb_wbuf_free(&w2);
    tb_wbuf_free(&w3);
    fx_free(x);
}

static void test_multi_success(void **state)
{
    struct fx *x = fx_new();
    int64_t s = open_session(x, 10000);
    struct multi m;
    struct tb_rd r;
    struct tb_stat st;
    struct tb_error_resp e;

    (void)state;
    tb_wbuf_init(&m.w);
    assert_int_equal(create(x, s, "/m", 0), 0);
    m_create(&m, TB_OP_CREATE, "/m/a", 0, -1);
    m_create(&m, TB_OP_CREATE2, "/m/b", 0, -1);
    m_set(&m, "/m/a", 0);
    m_check(&m, "/m/a", 1);
    m_delete(&m, "/m/b", 0);
    m_create(&m, TB_OP_CREATECONTAINER, "/m/c", 4, -1);
    m_create(&m, TB_OP_CREATE, "/m/s-", 2, -1);
    m_create(&m, TB_OP_CREATE, "/m/s-", 2, -1);
    m_create(&m, TB_OP_CREATETTL, "/m/t", 5, 60000);
    assert_int_equal(m_apply(x, s, &m), 0);
    r = tb_rd_make(x->body.base, x->body.len);
    res_hdr(&r, TB_OP_CREATE, 0);
    res_path(&r, "/m/a");
    res_hdr(&r, TB_OP_CREATE, 0); /* create2 downgraded, as 3.8 */
    res_path(&r, "/m/b");
    res_hdr(&r, TB_OP_SETDATA, 0);
    assert_int_equal(tb_get_STAT(&r, &st), 0);
    assert_int_equal(st.version, 1);
    assert_int_equal(st.mzxid, x->zxid);
    res_hdr(&r, TB_OP_CHECK, 0);
    res_hdr(&r, TB_OP_DELETE, 0);
    res_hdr(&r, TB_OP_CREATE2, 0);
    res_path(&r, "/m/c");
    assert_int_equal(tb_get_STAT(&r, &st), 0);
    assert_int_equal(st.czxid, x->zxid);
    res_hdr(&r, TB_OP_CREATE, 0);
    res_path(&r, "/m/s-0000000003");
    res_hdr(&r, TB_OP_CREATE, 0);
    res_path(&r, "/m/s-0000000004");
    res_hdr(&r, TB_OP_CREATE2, 0);
    res_path(&r, "/m/t");
    assert_int_equal(tb_get_STAT(&r, &st), 0);
    res_end(&r);
    ev_is(x, "1 /m/a|4 /m|1 /m/b|4 /m|3 /m/a|2 /m/b|4 /m|1 /m/c|4 /m|"
             "1 /m/s-0000000003|4 /m|1 /m/s-0000000004|4 /m|1 /m/t|4 /m|");
    assert_int_equal(stat_of(x, "/m").pzxid, x->zxid);
    assert_int_equal(stat_of(x, "/m").num_children, 5);

    /* The empty multi: one zxid, just the terminator. */
    assert_int_equal(m_apply(x, s, &m), 0);
    r = tb_rd_make(x->body.base, x->body.len);
    res_end(&r);

    /* Sub-ops see each other: setData then check of the old version. */
    m_set(&m, "/m/a", 1);
    m_check(&m, "/m/a", 1);
    assert_int_equal(m_apply(x, s, &m), 0);
    r = tb_rd_make(x->body.base, x->body.len);
    res_hdr(&r, TB_OP_ERROR, 0);
    assert_int_equal(tb_error_resp_decode(&r, &e), 0);
    assert_int_equal(e.err, 0);
    res_hdr(&r, TB_OP_ERROR, TB_EBADVERSION);
    assert_int_equal(tb_error_resp_decode(&r, &e), 0);
    assert_int_equal(e.err, TB_EBADVERSION);
    res_end(&r);
    ev_is(x, "");
    tb_wbuf_free(&m.w);
    fx_free(x);
}

static void test_multi_failure_rolls_back(void **state)
{
    struct fx *x = fx_new();
    int64_t s = open_session(x, 10000);
    struct multi m;
    struct tb_wbuf before;
    struct tb_rd r;
    struct tb_error_resp e;
    int i;
    int32_t expect[] = {0,
                        0,
                        0,
                        0,
                        0,
                        0,
                        TB_ENONODE,
                        TB_ERUNTIMEINCONSISTENCY,
                        TB_ERUNTIMEINCONSISTENCY};

    (void)state;
    tb_wbuf_init(&m.w);
    assert_int_equal(create(x, s, "/p", 0), 0);
    assert_int_equal(create(x, s, "/p/x", 0), 0);
    assert_int_equal(create(x, s, "/p/y", 0), 0);
    assert_int_equal(create(x, s, "/p/z", TB_EPHEMERAL), 0);
    snap(x, &before);

    m_create(&m, TB_OP_CREATE, "/p/s-", 2, -1); /* counter 3 -> 4 */
    m_delete(&m, "/p/x", -1);                   /* swap-remove */
    m_set(&m, "/p", -1);                        /* data and version */
    m_create(&m, TB_OP_CREATE, "/p/e", TB_EPHEMERAL, -1);
    m_delete(&m, "/p/z", -1); /* an ephemeral */
    m_create(&m, TB_OP_CREATECONTAINER, "/p/c", 4, -1);
    m_delete(&m, "/p/nonexistent", -1); /* fails */
    m_create(&m, TB_OP_CREATE, "/p/never", 0, -1);
    m_create(&m, TB_OP_CREATE, "/p/bad", 99, -1); /* never examined */
    assert_int_equal(m_apply(x, s, &m), 0);       /* header rc stays 0 */
    r = tb_rd_make(x->body.base, x->body.len);
    for (i = 0; i < 9; i++) {
        res_hdr(&r, TB_OP_ERROR, expect[i]);
        assert_int_equal(tb_error_resp_decode(&r, &e), 0);
        assert_int_equal(e.err, expect[i]);
    }
    res_end(&r);
    ev_is(x, "");
    assert_int_equal(fsm_last_zxid(x->f), x->zxid);
    /* Byte for byte the state before, apart from the zxid. */
    tb_store_be64(before.base + 24, (uint64_t)x->zxid);
    reseal(&before);
    assert_snapshot_is(x, &before);
    assert_int_equal(fsm_ephemeral_count(x->f), 1);
    assert_int_equal(create(x, s, "/p/s-", 2), 0);
    body_path_is(x, "/p/s-0000000003");

    /* A failure at the first sub-op. */
    m_create(&m, TB_OP_CREATE, "/p", 0, -1);
    m_create(&m, TB_OP_CREATE, "/p/q", 0, -1);
    assert_int_equal(m_apply(x, s, &m), 0);
    r = tb_rd_make(x->body.base, x->body.len);
    res_hdr(&r, TB_OP_ERROR, TB_ENODEEXISTS);
    assert_int_equal(tb_error_resp_decode(&r, &e), 0);
    res_hdr(&r, TB_OP_ERROR, TB_ERUNTIMEINCONSISTENCY);
    assert_int_equal(tb_error_resp_decode(&r, &e), 0);
    res_end(&r);
    assert_false(exists(x, "/p/q"));

    /* The session is checked per sub-op. */
    m_create(&m, TB_OP_CREATE, "/p/q", 0, -1);
    assert_int_equal(m_apply(x, fsm_session_id_for(12345), &m), 0);
    r = tb_rd_make(x->body.base, x->body.len);
    res_hdr(&r, TB_OP_ERROR, TB_ESESSIONEXPIRED);
    tb_wbuf_free(&before);
    tb_wbuf_free(&m.w);
    fx_free(x);
}

static void test_multi_malformed(void **state)
{
    struct fx *x = fx_new();
    int64_t s = open_session(x, 10000);
    struct multi m;
    struct tb_multi_op op = {.type = TB_OP_GETDATA};
    struct tb_wbuf before;

    (void)state;
    snap(x, &before);
    tb_wbuf_init(&m.w);
    /* A read inside a write multi, after a valid create. */
    m_create(&m, TB_OP_CREATE, "/a", 0, -1);
    op.u.read = (struct tb_path_watch_req){TB_STR("/a"), 0};
    tb_multi_op_encode(&m.w, &op);
    assert_int_equal(m_apply(x, s, &m), TB_EMARSHALLING);
    assert_int_equal(x->body.len, 0);
    assert_false(exists(x, "/a"));
    /* Truncated: no terminator. */
    m_create(&m, TB_OP_CREATE, "/a", 0, -1);
    assert_int_equal(apply(x, TB_OP_MULTI, s, &m.w), TB_EMARSHALLING);
    assert_int_equal(x->body.len, 0);
    assert_false(exists(x, "/a"));
    tb_store_be64(before.base + 24, (uint64_t)x->zxid);
    reseal(&before);
    assert_snapshot_is(x, &before);
    tb_wbuf_free(&before);
    tb_wbuf_free(&m.w);
    fx_free(x);
}

static void test_close_session_ephemerals(void **state)
{
    struct fx *x = fx_new();
    int64_t s1 = open_session(x, 10000), s2 = open_session(x, 20000);
    int32_t cv;

    (void)state;
    assert_int_equal(create(x, s1, "/l", 0), 0);
    assert_int_equal(create(x, s1, "/l/b", TB_EPHEMERAL), 0);
    assert_int_equal(create(x, s1, "/l/a", TB_EPHEMERAL_SEQUENTIAL), 0);
    assert_int_equal(create(x, s2, "/l/c", TB_EPHEMERAL), 0);
    assert_int_equal(create(x, s1, "/e", TB_EPHEMERAL), 0);
    assert_int_equal(fsm_ephemeral_count(x->f), 4);
    assert_int_equal(tree_ephemerals_count(fsm_tree(x->f), s1), 3);
    cv = stat_of(x, "/l").cversion;
    x->sess.len = 0;
    assert_int_equal(close_session(x, s1), 0);
    /* In path order: /e, /l/a0000000001, /l/b. */
    ev_is(x, "2 /e|4 /|2 /l/a0000000001|4 /l|2 /l/b|4 /l|");
    assert_string_equal((char *)x->sess.base, "-100000000000001/10000|");
    assert_int_equal(fsm_ephemeral_count(x->f), 1);
    assert_int_equal(stat_of(x, "/l").cversion, cv + 2);
    assert_int_equal(stat_of(x, "/l").pzxid, x->zxid);
    assert_int_equal(stat_of(x, "/").pzxid, x->zxid);
    assert_true(exists(x, "/l/c"));
    assert_false(exists(x, "/e"));
    assert_int_equal(close_session(x, s2), 0);
    ev_is(x, "2 /l/c|4 /l|");
    assert_int_equal(fsm_ephemeral_count(x->f), 0);
    assert_int_equal(fsm_session_count(x->f), 0);
    fx_free(x);
}

static void test_event_acls(void **state)
{
    struct fx *x = fx_new();
    int64_t s = open_session(x, 10000);
    struct tb_wbuf w;
    struct tb_acl two[2] = {{1, {TB_STR("ip"), TB_STR("1.2.3.4")}},
                            {1, {TB_STR("ip"), TB_STR("1.2.3.5")}}};

    (void)state;
    tb_wbuf_init(&w);
    tb_put_acl(&w, &two[0]);
    tb_put_acl(&w, &two[1]);
    x->super = 1;
    assert_int_equal(create_acl(x, s, "/two", tb_vec_view(&w, 2)), 0);
    assert_string_equal((char *)x->ev_acl.base, "2|1|");
    assert_int_equal(create(x, s, "/two/k", 0), 0);
    assert_string_equal((char *)x->ev_acl.base, "1|2|");
    assert_int_equal(del(x, s, "/two/k", -1), 0);
    assert_string_equal((char *)x->ev_acl.base, "1|2|");
    /* A deleted node's event carries the ACL it had, even once freed. */
    assert_int_equal(del(x, s, "/two", -1), 0);
    assert_string_equal((char *)x->ev_acl.base, "2|1|");
    assert_int_equal(tree_acl_count(fsm_tree(x->f)), 2);
    tb_wbuf_free(&w);
    fx_free(x);
}

static void test_delete_container(void **state)
{
    struct fx *x = fx_new();
    int64_t s = open_session(x, 10000);

    (void)state;
    x->time = 10000;
    assert_int_equal(create_full(x, s, TB_OP_CREATECONTAINER, TB_STR("/c"),
                                 TB_STR(""), tb_acl_open_unsafe, 4, -1),
                     0);
    assert_int_equal(create_full(x, s, TB_OP_CREATETTL, TB_STR("/t"),
                                 TB_STR(""), tb_acl_open_unsafe, 5, 5000),
                     0);
    assert_int_equal(create(x, s, "/p", 0), 0);
    assert_int_equal(delete_container(x, "/c"), TB_ENOTEMPTY); /* unused */
    assert_int_equal(create(x, s, "/c/k", 0), 0);
    assert_int_equal(delete_container(x, "/c"), TB_ENOTEMPTY);
    assert_int_equal(del(x, s, "/c/k", -1), 0);
    assert_int_equal(delete_container(x, "/p"), TB_EBADVERSION);
    assert_int_equal(delete_container(x, "/nope"), TB_ENONODE);
    assert_int_equal(delete_container(x, "/"), TB_EBADARGUMENTS);
    assert_int_equal(delete_container(x, "nope"), TB_EBADARGUMENTS);
    assert_int_equal(delete_container(x, "/c"), 0); /* no session needed */
    ev_is(x, "2 /c|4 /|");
    /* A container whose sequence counter wrapped had children too. */
    assert_int_equal(create_full(x, s, TB_OP_CREATECONTAINER, TB_STR("/w"),
                                 TB_STR(""), tb_acl_open_unsafe, 4, -1),
                     0);
    tree_node_set_ccount(tree_find(fsm_tree(x->f), TB_STR("/w")), INT32_MAX);
    assert_int_equal(create(x, s, "/w/k-", 2), 0);
    assert_int_equal(del(x, s, "/w/k-2147483647", -1), 0);
    assert_true(tree_node_ccount(tree_find(fsm_tree(x->f), TB_STR("/w"))) < 0);
    assert_int_equal(delete_container(x, "/w"), 0);
    ev_is(x, "2 /w|4 /|");

    x->time = 15000; /* 15000 - 10000 is not > 5000 */
    assert_int_equal(delete_container(x, "/t"), TB_ENOTEMPTY);
    x->time = 15001;
    assert_int_equal(set_data(x, s, "/t", TB_STR("x"), -1), 0); /* refresh */
    x->time = 20001;
    assert_int_equal(delete_container(x, "/t"), TB_ENOTEMPTY);
    assert_int_equal(create(x, s, "/t/k", 0), 0);
    x->time = 99999;
    assert_int_equal(delete_container(x, "/t"), TB_ENOTEMPTY);
    assert_int_equal(del(x, s, "/t/k", -1), 0);
    assert_int_equal(delete_container(x, "/t"), 0);
    ev_is(x, "2 /t|4 /|");
    assert_false(exists(x, "/t"));
    fx_free(x);
}

static void test_odd_txns(void **state)
{
    struct fx *x = fx_new();
    int64_t s = open_session(x, 10000);
    struct tb_wbuf b, e;
    struct tb_path_req p = {TB_STR("/any")};
    struct tb_check_req c = {TB_STR("/"), -1};
    uint8_t junk[] = {0, 0, 0, 1, 2};

    (void)state;
    assert_int_equal(apply_raw(x, junk, sizeof junk), TB_EMARSHALLING);
    assert_int_equal(x->res_type, 0);
    assert_int_equal(x->res_origin, 0);
    assert_int_equal(apply_raw(x, NULL, 0), TB_EMARSHALLING);
    tb_wbuf_init(&b);
    tb_wbuf_put(&b, junk, sizeof junk);
    assert_int_equal(apply(x, TB_OP_CREATE, s, &b), TB_EMARSHALLING);
    assert_int_equal(apply(x, TB_OP_DELETE, s, &b), TB_EMARSHALLING);
    assert_int_equal(apply(x, TB_OP_SETDATA, s, &b), TB_EMARSHALLING);
    assert_int_equal(apply(x, TB_OP_SETACL, s, &b), TB_EMARSHALLING);
    assert_int_equal(apply(x, TB_OP_CREATESESSION, s, &b), TB_EMARSHALLING);
    b.base[3] = 9; /* a path longer than what follows */
    assert_int_equal(apply(x, TB_OP_DELETECONTAINER, s, &b), TB_EMARSHALLING);
    assert_int_equal(apply(x, TB_OP_SYNC, s, &b), TB_EMARSHALLING);
    assert_int_equal(apply(x, TB_OP_GETDATA, s, &b), TB_EUNIMPLEMENTED);
    assert_int_equal(apply(x, 50, s, &b), TB_EUNIMPLEMENTED);
    b.len = 0;
    tb_check_req_encode(&b, &c);
    assert_int_equal(apply(x, TB_OP_CHECK, s, &b), TB_EUNIMPLEMENTED);
    b.len = 0;
    tb_path_req_encode(&b, &p);
    assert_int_equal(apply(x, TB_OP_SYNC, s, &b), 0);
    body_path_is(x, "/any");
    /* Padding after the txn (raft entries are padded to 8 bytes). */
    encode_txn(x, TB_OP_SYNC, s, (struct tb_str){(char *)b.base, b.len}, &e);
    tb_wbuf_put(&e, "\0\0\0\0\0\0\0", 7);
    assert_int_equal(apply_raw(x, e.base, e.len), 0);
    assert_int_equal(x->zxid, 15);
    tb_wbuf_free(&e);
    tb_wbuf_free(&b);
    fx_free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sessions),
        cmocka_unit_test(test_create_basic),
        cmocka_unit_test(test_sequential_names),
        cmocka_unit_test(test_create_errors),
        cmocka_unit_test(test_delete),
        cmocka_unit_test(test_set_data),
        cmocka_unit_test(test_reconfig_outcome),
        cmocka_unit_test(test_set_acl),
        cmocka_unit_test(test_multi_success),
        cmocka_unit_test(test_multi_failure_rolls_back),
        cmocka_unit_test(test_multi_malformed),
        cmocka_unit_test(test_close_session_ephemerals),
        cmocka_unit_test(test_event_acls),
        cmocka_unit_test(test_delete_container),
        cmocka_unit_test(test_odd_txns),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
