/* Unit tests of what some operations send and how their answers reach
 * the caller, against the scripted server of client_fixture.h: a multi's
 * results, getConfig outside the chroot and reconfig's request. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "client_fixture.h"

static void test_multi_results(void **state)
{
    struct tb_client *c = connected("h:1/ch", 5);
    struct tb_multi *m = tb_multi_new();
    uint8_t buf[1024];
    struct tb_rd body;
    struct tb_request_header h;
    struct tb_multi_op op;
    struct tb_wbuf w;
    struct tb_multi_header mh;
    struct tb_error_resp er;
    struct tb_path_resp pr = {TB_STR("/ch/a")};
    struct tb_multi_results res;
    int n = 0, rc;

    (void)state;
    assert_int_equal(tb_multi_create(m, "/a", "x", 1, NULL, TB_PERSISTENT, 0),
                     0);
    assert_int_equal(tb_multi_delete(m, "/b", -1), 0);
    assert_int_equal(tb_multi_get_data(m, "/a"), TB_EBADARGUMENTS);
    assert_int_equal(tb_multi_exec(c, m, NULL, NULL), 0); /* fire & forget */
    pump(c);
    h = srv_request(buf, sizeof buf, &body);
    assert_int_equal(h.type, TB_OP_MULTI);
    while ((rc = tb_multi_next(&body, TB_OP_MULTI, &op)) == 1)
        n++;
    assert_int_equal(rc, 0);
    assert_int_equal(n, 2);
    /* create OK then delete failed: a multi result, header err 0 */
    tb_wbuf_init(&w);
    mh = (struct tb_multi_header){TB_OP_ERROR, 0, 0};
    tb_multi_header_encode(&w, &mh);
    er.err = 0;
    tb_error_resp_encode(&w, &er);
    mh = (struct tb_multi_header){TB_OP_ERROR, 0, TB_ENONODE};
    tb_multi_header_encode(&w, &mh);
    er.err = TB_ENONODE;
    tb_error_resp_encode(&w, &er);
    tb_multi_end_encode(&w);
    srv_reply(h.xid, 8, 0, &w);
    tb_wbuf_free(&w);
    pump(c);
    /* and a successful one, synchronously in loop mode */
    tb_wbuf_init(&w);
    mh = (struct tb_multi_header){TB_OP_CREATE, 0, 0};
    tb_multi_header_encode(&w, &mh);
    tb_path_resp_encode(&w, &pr);
    mh = (struct tb_multi_header){TB_OP_DELETE, 0, 0};
    tb_multi_header_encode(&w, &mh);
    tb_multi_end_encode(&w);
    /* the reply is written before the call: the call reads it */
    srv_reply(c->next_xid, 9, 0, &w);
    tb_wbuf_free(&w);
    assert_int_equal(tb_multi_exec_sync(c, m, &res), 0);
    assert_int_equal(res.count, 2);
    assert_string_equal(res.v[0].path, "/a");
    assert_int_equal(res.v[1].op, TB_OP_DELETE);
    tb_multi_results_free(&res);
    tb_multi_free(m);
    close_replied(c);
}

/* getConfig goes to /zookeeper/config whatever the chroot; reconfig sends
 * what is not given as null strings, and takes `members` or the parts. */
static void test_config_and_reconfig(void **state)
{
    struct tb_client *c = make("h:1/root", 6000);
    uint8_t buf[512];
    struct tb_rd body;
    struct tb_request_header h;
    struct tb_path_watch_req gq;
    struct tb_reconfig_req rq;
    struct tb_get_data_resp rs = {TB_STR("server.1=a:1:2;3\nversion=0"), {0}};
    struct tb_wbuf w;
    struct rec r = {0};

    (void)state;
    pump(c);
    srv_handshake(0x42, 5000);
    pump(c);
    tb_wbuf_init(&w);
    tb_get_data_resp_encode(&w, &rs);

    assert_int_equal(tb_get_config(c, rec_data, &r), 0);
    pump(c);
    h = srv_request(buf, sizeof buf, &body);
    assert_int_equal(h.type, TB_OP_GETDATA);
    assert_int_equal(tb_path_watch_req_decode(&body, &gq), 0);
    assert_true(tb_str_eq(gq.path, TB_STR("/zookeeper/config")));
    assert_int_equal(gq.watch, 0);
    srv_reply(h.xid, 7, 0, &w);
    pump(c);
    assert_int_equal(r.calls, 1);
    assert_string_equal(r.value, "server.1=a:1:2;3\nversion=0");

    assert_int_equal(tb_reconfig(c, "server.4=d:1:2;3", "2", NULL, 0x100000003,
                                 rec_data, &r),
                     0);
    pump(c);
    h = srv_request(buf, sizeof buf, &body);
    assert_int_equal(h.type, TB_OP_RECONFIG);
    assert_int_equal(tb_reconfig_req_decode(&body, &rq), 0);
    assert_true(tb_str_eq(rq.joining, TB_STR("server.4=d:1:2;3")));
    assert_true(tb_str_eq(rq.leaving, TB_STR("2")));
    assert_null(rq.new_members.ptr);
    assert_int_equal(rq.config_id, 0x100000003);
    srv_reply(h.xid, 8, 0, &w);
    pump(c);
    assert_int_equal(r.calls, 2);
    assert_int_equal(r.rc, 0);

    assert_int_equal(
        tb_reconfig(c, NULL, "2", "server.1=a:1:2", -1, rec_data, &r),
        TB_EBADARGUMENTS);
    assert_int_equal(r.calls, 2);
    tb_wbuf_free(&w);
    close_replied(c);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_multi_results, setup, teardown),
        cmocka_unit_test_setup_teardown(test_config_and_reconfig, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
