/* Clients of the session tests' server (session_fixture.c) through
 * struct proc_client's ops, on a carrier of the test's own: the order of
 * what they are answered (a write behind a reconfig, a read behind a
 * write, a close with requests after it, zxids), which session a reply
 * goes to, and multi's and /zookeeper/config's writes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/digest.h"
#include "server/fsm/fsm.h"
#include "server/replog/replog.h"
#include "session_fixture.h"

/* k's client sends reconfig `xid` (server 2 removed), encoded in `body`:
 * what request() says. */
static int reconfig_request(struct carrier *k, struct tb_wbuf *body,
                            int32_t xid)
{
    tb_reconfig_req_encode(body, &(struct tb_reconfig_req){
                                     TB_STR(""), TB_STR("2"), TB_STR(""), -1});
    return request(k, body, xid, TB_OP_RECONFIG);
}

/* The outcome of the reconfig `xid` of k's session, as the log gives it. */
static void reconfig_outcome(struct sfx *f, struct carrier *k, int32_t xid,
                             int64_t zxid, int rc)
{
    proc_result(&f->s,
                &(struct tb_txn){.type = TB_OP_RECONFIG_TXN,
                                 .session = k->pc.session_id,
                                 .xid = xid,
                                 .origin = (int64_t)k->pc.id},
                zxid, rc, NULL, 0);
}

/* k closed, as its carrier closes it: the real proposals, still in the
 * log, would answer again. */
static void carrier_drop(struct sfx *f, struct carrier *k)
{
    tb_map_del(&f->s.conn_by_id, k->pc.id);
    proc_client_closed(&k->pc);
    k->pc.closed = 1;
    carrier_free(k);
}

/* A reconfig's outcome is logged once raft's members have changed: a write
 * the client sent after it, proposed at once, would be applied first, at a
 * lower zxid.  It waits unread (PROC_HELD: the carrier keeps it) until the
 * reconfig is answered, and so does all after it; another reconfig is
 * taken meanwhile, as ZooKeeper's (then refused as in progress).  (Alone,
 * this server decides a reconfig at once: its result comes by hand.) */
static void write_held_behind_a_reconfig(void **state)
{
    struct sfx *f = *state;
    struct carrier k;
    struct tb_wbuf body;
    int64_t z;
    int base, resumes;

    carrier_open(f, &k, 61);
    base = k.frames;
    z = proc_zxid(&f->s);
    tb_wbuf_init(&body);
    assert_int_equal(reconfig_request(&k, &body, 1), 0);
    assert_int_equal(k.pc.writes_in_flight, 1);
    tb_set_data_req_encode(
        &body, &(struct tb_set_data_req){TB_STR("/"), TB_STR("x"), -1});
    assert_int_equal(request(&k, &body, 2, TB_OP_SETDATA), PROC_HELD);
    assert_int_equal(request(&k, &body, TB_XID_PING, TB_OP_PING), PROC_HELD);
    assert_int_equal(k.pc.writes_in_flight, 1); /* nothing more proposed */
    assert_int_equal(k.frames, base);
    resumes = k.resumes;
    reconfig_outcome(f, &k, 1, z, 0);
    assert_int_equal(k.frames, base + 1);
    (void)reply_at(&k, base + 1, 1, 0);
    assert_true(k.resumes > resumes); /* what waits is read on */
    tb_set_data_req_encode(
        &body, &(struct tb_set_data_req){TB_STR("/"), TB_STR("x"), -1});
    assert_int_equal(request(&k, &body, 2, TB_OP_SETDATA), 0);
    assert_int_equal(k.pc.writes_in_flight, 1);
    tb_wbuf_free(&body);
    carrier_drop(f, &k);
}

/* A second reconfig, taken while the first is out and refused as in
 * progress, is answered first (its refusal is logged at once): what the
 * client sent after them still waits for the first's answer. */
static void write_held_behind_two_reconfigs(void **state)
{
    struct sfx *f = *state;
    struct carrier k;
    struct tb_wbuf body;
    int64_t z;
    int base;

    carrier_open(f, &k, 62);
    base = k.frames;
    z = proc_zxid(&f->s);
    tb_wbuf_init(&body);
    assert_int_equal(reconfig_request(&k, &body, 1), 0);
    assert_int_equal(reconfig_request(&k, &body, 2), 0);
    assert_int_equal(k.pc.writes_in_flight, 2);
    reconfig_outcome(f, &k, 2, z, TB_ERECONFIGINPROGRESS);
    assert_int_equal(k.frames, base); /* kept for after the first's */
    tb_set_data_req_encode(
        &body, &(struct tb_set_data_req){TB_STR("/"), TB_STR("x"), -1});
    assert_int_equal(request(&k, &body, 3, TB_OP_SETDATA), PROC_HELD);
    assert_int_equal(k.pc.writes_in_flight, 1);
    reconfig_outcome(f, &k, 1, z, 0);
    assert_int_equal(k.frames, base + 2);
    (void)reply_at(&k, base + 1, 1, 0);
    (void)reply_at(&k, base + 2, 2, TB_ERECONFIGINPROGRESS);
    assert_int_equal(request(&k, &body, 3, TB_OP_SETDATA), 0);
    tb_wbuf_free(&body);
    carrier_drop(f, &k);
}

/* A read queued behind a write is checked with the identities its client
 * had when it sent it, as ZooKeeper checks it: a setAuth the client sent
 * after it, answered at once, does not open it. */
static void queued_read_checked_as_sent(void **state)
{
    struct sfx *f = *state;
    struct carrier k;
    struct tb_wbuf body, acl;
    struct tb_reply_header h;
    struct tb_rd rd;
    char id[64];

    tb_wbuf_init(&body);
    tb_wbuf_init(&acl);
    assert_true(tb_digest_id(TB_STR("u:p"), id, sizeof id) > 0);
    tb_put_acl(&acl,
               &(struct tb_acl){TB_PERM_ALL, {TB_STR("digest"), tb_str_c(id)}});
    carrier_open(f, &k, 71);
    k.pc.super = 1; /* makes the node; not the client below */
    tb_create_req_encode(&body,
                         &(struct tb_create_req){TB_STR("/s"), TB_STR("x"),
                                                 tb_vec_view(&acl, 1), 0});
    request(&k, &body, 1, TB_OP_CREATE);
    assert_true(run_until(f, &k.frames, 2));
    k.pc.super = 0;
    tb_set_data_req_encode(
        &body, &(struct tb_set_data_req){TB_STR("/"), TB_STR("y"), -1});
    request(&k, &body, 2, TB_OP_SETDATA); /* in flight */
    tb_path_watch_req_encode(&body,
                             &(struct tb_path_watch_req){TB_STR("/s"), 0});
    request(&k, &body, 3, TB_OP_GETDATA); /* queued behind it */
    tb_auth_req_encode(
        &body, &(struct tb_auth_req){0, TB_STR("digest"), TB_STR("u:p")});
    request(&k, &body, -4, TB_OP_AUTH);
    assert_true(run_until(f, &k.frames, 5));
    rd = nth_frame(&k, 4);
    assert_int_equal(tb_reply_header_decode(&rd, &h), 0);
    assert_int_equal(h.xid, 2);
    rd = nth_frame(&k, 5);
    assert_int_equal(tb_reply_header_decode(&rd, &h), 0);
    assert_int_equal(h.xid, 3);
    assert_int_equal(h.err, TB_ENOAUTH);
    /* Sent after the setAuth, it is read. */
    tb_path_watch_req_encode(&body,
                             &(struct tb_path_watch_req){TB_STR("/s"), 0});
    request(&k, &body, 4, TB_OP_GETDATA);
    rd = nth_frame(&k, k.frames);
    assert_int_equal(tb_reply_header_decode(&rd, &h), 0);
    assert_int_equal(h.xid, 4);
    assert_int_equal(h.err, 0);
    carrier_free(&k);
    tb_wbuf_free(&body);
    tb_wbuf_free(&acl);
}

/* closeSession followed by another request before it is applied: its
 * reply is sent, then the connection closes (it closed at once, the
 * reply lost: the client saw its connection lost, not its close). */
static void close_answered_with_requests_after(void **state)
{
    struct sfx *f = *state;
    struct carrier a;
    struct tb_reply_header h;
    struct tb_wbuf body;
    struct tb_rd rd;

    carrier_open(f, &a, 41);
    tb_wbuf_init(&body);
    request(&a, &body, 5, TB_OP_CLOSESESSION);
    tb_path_req_encode(&body, &(struct tb_path_req){TB_STR("/")});
    tb_put_BOOL(&body, 0);
    request(&a, &body, 6, TB_OP_GETDATA);
    assert_true(run_until(f, &a.closes, 1));
    assert_true(a.frames >= 2);
    rd = nth_frame(&a, 2);
    assert_int_equal(tb_reply_header_decode(&rd, &h), 0);
    assert_int_equal(h.xid, 5);
    assert_int_equal(h.err, 0);
    tb_wbuf_free(&body);
    carrier_free(&a);
}

/* A reply decided at once (a createTTL refused, extended types off) that
 * waits for a write before it never carries a zxid below that write's. */
static void zxids_never_go_back(void **state)
{
    struct sfx *f = *state;
    struct carrier k;
    struct tb_wbuf body, acl;
    struct tb_reply_header h1, h2;
    struct tb_rd rd;

    f->cfg.extended_types_enabled = 0;
    carrier_open(f, &k, 31);
    tb_wbuf_init(&body);
    tb_wbuf_init(&acl);
    tb_put_acl(&acl, &(struct tb_acl){TB_PERM_ALL,
                                      {TB_STR("world"), TB_STR("anyone")}});
    tb_create_req_encode(&body,
                         &(struct tb_create_req){TB_STR("/z"), TB_STR("x"),
                                                 tb_vec_view(&acl, 1), 0});
    request(&k, &body, 1, TB_OP_CREATE);
    tb_create_ttl_req_encode(
        &body, &(struct tb_create_ttl_req){TB_STR("/t"), TB_STR("x"),
                                           tb_vec_view(&acl, 1),
                                           TB_PERSISTENT_WITH_TTL, 1000});
    request(&k, &body, 2, TB_OP_CREATETTL);
    assert_true(run_until(f, &k.frames, 3));
    rd = nth_frame(&k, 2);
    assert_int_equal(tb_reply_header_decode(&rd, &h1), 0);
    rd = nth_frame(&k, 3);
    assert_int_equal(tb_reply_header_decode(&rd, &h2), 0);
    assert_int_equal(h1.xid, 1);
    assert_int_equal(h1.err, 0);
    assert_int_equal(h2.xid, 2);
    assert_int_equal(h2.err, TB_EUNIMPLEMENTED);
    assert_true(h2.zxid >= h1.zxid);
    tb_wbuf_free(&body);
    tb_wbuf_free(&acl);
    carrier_free(&k);
}

/* Extended types off, a createTTL is refused as Unimplemented only for a
 * TTL mode: another mode (or none) is BadArguments, as ZooKeeper reads the
 * mode before it finds TTLs off.  Before, every createTTL was refused as
 * Unimplemented. */
static void ttl_off_reads_the_mode_first(void **state)
{
    static const struct {
        int32_t flags, err;
    } cases[] = {{TB_PERSISTENT, TB_EBADARGUMENTS},
                 {7, TB_EBADARGUMENTS},
                 {TB_PERSISTENT_WITH_TTL, TB_EUNIMPLEMENTED}};
    struct sfx *f = *state;
    struct carrier k;
    struct tb_wbuf body, acl;
    size_t i;

    f->cfg.extended_types_enabled = 0;
    carrier_open(f, &k, 32);
    tb_wbuf_init(&body);
    tb_wbuf_init(&acl);
    tb_put_acl(&acl, &(struct tb_acl){TB_PERM_ALL,
                                      {TB_STR("world"), TB_STR("anyone")}});
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tb_create_ttl_req_encode(
            &body, &(struct tb_create_ttl_req){TB_STR("/m"), TB_STR("x"),
                                               tb_vec_view(&acl, 1),
                                               cases[i].flags, 100});
        request(&k, &body, (int32_t)i + 1, TB_OP_CREATETTL);
        assert_true(run_until(f, &k.frames, (int)i + 2));
        (void)reply_at(&k, (int)i + 2, (int32_t)i + 1, cases[i].err);
    }
    assert_null(tree_find(fsm_tree(f->s.fsm), TB_STR("/m")));
    tb_wbuf_free(&body);
    tb_wbuf_free(&acl);
    carrier_free(&k);
}

/* A createSession entry applied again after a restart (or proposed by an
 * earlier start) names a connection id of then: a client of now with
 * that id, resuming a session of its own, is not handed the new one; and
 * a later start's ids are none of an earlier one's. */
static void new_session_only_to_its_own_waiter(void **state)
{
    struct sfx *f = *state;
    struct carrier k;
    struct tb_wbuf body;
    struct tb_txn t = {0};
    uint64_t a, b;
    int i;

    carrier_init(f, &k, 9);
    k.pc.state = CONN_SESSION; /* resuming 0x55, the leader not yet heard */
    k.pc.session_id = 0x55;
    tb_wbuf_init(&body);
    tb_session_resp_encode(&body, &(struct tb_session_resp){
                                      0x77, 8000, TB_STR("0123456789abcdef")});
    t.type = TB_OP_CREATESESSION;
    t.origin = (int64_t)k.pc.id;
    proc_result(&f->s, &t, 5, 0, body.base, body.len);
    assert_int_equal(k.frames, 0);
    assert_int_equal(k.pc.session_id, 0x55);
    assert_int_equal(k.pc.state, CONN_SESSION);
    assert_null(tb_map_get(&f->s.conn_by_session, 0x77));

    /* Server 3 started at WALL, then again a millisecond later: the top
     * byte names it, and 256 connections of the first start are not
     * enough to reach the second's first id. */
    a = proc_conn_id_base(3, WALL);
    b = proc_conn_id_base(3, WALL + 1);
    assert_int_equal(a >> 56, 3);
    assert_int_equal(b >> 56, 3);
    assert_true(b >= a + 256);
    for (i = 1; i < 1000; i++)
        assert_true(proc_conn_id_base(3, WALL + i * 1000) >
                    proc_conn_id_base(3, WALL + (i - 1) * 1000) + 255000);
    tb_map_del(&f->s.conn_by_id, k.pc.id);
    tb_wbuf_free(&k.pc.ids);
    tb_wbuf_free(&k.out);
    tb_wbuf_free(&body);
}

/* A client whose writes went to the leader while this server followed,
 * with one still out when this server leads: its next write is not logged
 * here (it could be applied without the one before); its connection ends,
 * as when the link to the leader ends.  (Alone, this server always leads:
 * the write still out is set by hand.) */
static void forwarded_write_out_on_a_new_leader(void **state)
{
    struct sfx *f = *state;
    struct carrier k;
    struct tb_wbuf body, acl;

    tb_wbuf_init(&body);
    tb_wbuf_init(&acl);
    carrier_open(f, &k, 11);
    k.pc.forwarded = 1;
    k.pc.writes_in_flight = 1;
    tb_put_acl(&acl, &(struct tb_acl){TB_PERM_ALL,
                                      {TB_STR("world"), TB_STR("anyone")}});
    tb_create_req_encode(&body,
                         &(struct tb_create_req){TB_STR("/fw"), TB_STR("x"),
                                                 tb_vec_view(&acl, 1), 0});
    request(&k, &body, 1, TB_OP_CREATE);
    assert_int_equal(k.closes, 1);
    assert_int_equal(k.frames, 1);
    assert_null(tree_find(fsm_tree(f->s.fsm), TB_STR("/fw")));
    carrier_free(&k);
    tb_wbuf_free(&body);
    tb_wbuf_free(&acl);
}

/* One create sub-op of a multi, as a client may send it. */
static void multi_create(struct tb_wbuf *w, const struct tb_wbuf *acl,
                         int32_t type, const char *path, int32_t flags,
                         int64_t ttl)
{
    struct tb_multi_op op = {.type = type};

    op.u.create = (struct tb_create_ttl_req){
        {path, strlen(path)}, TB_STR(""), tb_vec_view(acl, 1), flags, ttl};
    tb_multi_op_encode(w, &op);
}

/* The multi's answer, the k->frames-th frame: each result's type and
 * error, in `types` and `errs` (at most 4). */
static int multi_results(struct carrier *k, int32_t *types, int32_t *errs)
{
    struct tb_rd rd = nth_frame(k, k->frames);
    struct tb_reply_header h;
    struct tb_multi_header mh;
    struct tb_path_resp pr;
    struct tb_stat st;
    int n = 0;

    assert_int_equal(tb_reply_header_decode(&rd, &h), 0);
    assert_int_equal(h.err, 0);
    for (;;) {
        assert_int_equal(tb_multi_header_decode(&rd, &mh), 0);
        if (mh.done)
            return n;
        assert_true(n < 4);
        types[n] = mh.type;
        errs[n++] = mh.err;
        if (mh.type == TB_OP_ERROR)
            assert_int_equal(tb_get_I32(&rd, &mh.err), 0);
        else if (mh.type == TB_OP_CREATE)
            assert_int_equal(tb_path_resp_decode(&rd, &pr), 0);
        else if (mh.type == TB_OP_CREATE2)
            assert_true(tb_path_resp_decode(&rd, &pr) == 0 &&
                        tb_get_STAT(&rd, &st) == 0);
    }
}

/* A multi's creates make what their modes say, whatever their opcodes,
 * as ZooKeeper's do; and a TTL create in one is refused with extended
 * types off, as a createTTL request is. */
static void multi_creates_follow_their_modes(void **state)
{
    struct sfx *f = *state;
    struct carrier k;
    struct tb_wbuf body, acl;
    struct tree_node *n;
    int32_t types[4], errs[4];

    tb_wbuf_init(&body);
    tb_wbuf_init(&acl);
    tb_put_acl(&acl, &(struct tb_acl){TB_PERM_ALL,
                                      {TB_STR("world"), TB_STR("anyone")}});
    carrier_open(f, &k, 13);

    /* The C client's container: opcode create, mode container. */
    multi_create(&body, &acl, TB_OP_CREATE, "/c", TB_CONTAINER, -1);
    multi_create(&body, &acl, TB_OP_CREATE, "/c/k", TB_PERSISTENT, -1);
    multi_create(&body, &acl, TB_OP_CREATECONTAINER, "/p", TB_PERSISTENT, -1);
    multi_create(&body, &acl, TB_OP_CREATETTL, "/q", TB_PERSISTENT, 100);
    tb_multi_end_encode(&body);
    request(&k, &body, 1, TB_OP_MULTI);
    assert_true(run_until(f, &k.frames, 2));
    assert_int_equal(multi_results(&k, types, errs), 4);
    assert_int_equal(types[0], TB_OP_CREATE2);
    assert_int_equal(types[1], TB_OP_CREATE);
    assert_int_equal(types[2], TB_OP_CREATE);
    assert_int_equal(types[3], TB_OP_CREATE);
    n = tree_find(fsm_tree(f->s.fsm), TB_STR("/c"));
    assert_non_null(n);
    assert_int_equal(tree_owner_kind(tree_node_owner(n)), TREE_CONTAINER);
    n = tree_find(fsm_tree(f->s.fsm), TB_STR("/p"));
    assert_non_null(n);
    assert_int_equal(tree_node_owner(n), 0);
    n = tree_find(fsm_tree(f->s.fsm), TB_STR("/q"));
    assert_non_null(n);
    assert_int_equal(tree_node_owner(n), 0);

    /* Extended types off: the multi fails at its TTL create, answered
     * without the log; nothing of it is made. */
    f->cfg.extended_types_enabled = 0;
    multi_create(&body, &acl, TB_OP_CREATE, "/x", TB_PERSISTENT, -1);
    multi_create(&body, &acl, TB_OP_CREATE, "/t", TB_PERSISTENT_WITH_TTL, -1);
    multi_create(&body, &acl, TB_OP_CREATE, "/y", TB_PERSISTENT, -1);
    tb_multi_end_encode(&body);
    request(&k, &body, 2, TB_OP_MULTI);
    assert_int_equal(k.frames, 3);
    assert_int_equal(multi_results(&k, types, errs), 3);
    assert_int_equal(errs[0], 0);
    assert_int_equal(errs[1], TB_EUNIMPLEMENTED);
    assert_int_equal(errs[2], TB_ERUNTIMEINCONSISTENCY);
    assert_null(tree_find(fsm_tree(f->s.fsm), TB_STR("/x")));

    carrier_free(&k);
    tb_wbuf_free(&body);
    tb_wbuf_free(&acl);
}

/* /zookeeper/config is reconfig's to write: a setData of it is refused
 * before the log, alone or in a multi (which fails there, whole). */
static void config_written_by_reconfig_alone(void **state)
{
    struct sfx *f = *state;
    struct carrier k;
    struct tb_wbuf body, acl;
    struct tb_multi_op op = {.type = TB_OP_SETDATA};
    struct tb_reply_header h;
    struct tb_rd rd;
    int32_t types[4], errs[4];

    tb_wbuf_init(&body);
    tb_wbuf_init(&acl);
    tb_put_acl(&acl, &(struct tb_acl){TB_PERM_ALL,
                                      {TB_STR("world"), TB_STR("anyone")}});
    carrier_open(f, &k, 14);
    op.u.set_data = (struct tb_set_data_req){TB_STR("/zookeeper/config"),
                                             TB_STR("server.9=h:1:2"), -1};
    tb_set_data_req_encode(&body, &op.u.set_data);
    request(&k, &body, 1, TB_OP_SETDATA);
    assert_int_equal(k.frames, 2); /* answered at once, not logged */
    rd = nth_frame(&k, 2);
    assert_int_equal(tb_reply_header_decode(&rd, &h), 0);
    assert_int_equal(h.err, TB_EBADARGUMENTS);

    multi_create(&body, &acl, TB_OP_CREATE, "/m", TB_PERSISTENT, -1);
    tb_multi_op_encode(&body, &op);
    tb_multi_end_encode(&body);
    request(&k, &body, 2, TB_OP_MULTI);
    assert_int_equal(k.frames, 3);
    assert_int_equal(multi_results(&k, types, errs), 2);
    assert_int_equal(errs[0], 0);
    assert_int_equal(errs[1], TB_EBADARGUMENTS);
    assert_null(tree_find(fsm_tree(f->s.fsm), TB_STR("/m")));
    assert_int_equal(tree_node_data(tree_find(fsm_tree(f->s.fsm),
                                              TB_STR("/zookeeper/config")))
                         .len,
                     0);
    carrier_free(&k);
    tb_wbuf_free(&body);
    tb_wbuf_free(&acl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(write_held_behind_two_reconfigs, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(write_held_behind_a_reconfig, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(queued_read_checked_as_sent, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(close_answered_with_requests_after,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(zxids_never_go_back, setup, teardown),
        cmocka_unit_test_setup_teardown(new_session_only_to_its_own_waiter,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(ttl_off_reads_the_mode_first, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(forwarded_write_out_on_a_new_leader,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(multi_creates_follow_their_modes, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(config_written_by_reconfig_alone, setup,
                                        teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
