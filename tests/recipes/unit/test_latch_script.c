/* A count-down latch's await watching PATH's children when PATH goes,
 * against the client's scripted server (tests/unit/client_fixture.c: a
 * socketpair and a fake clock, loop mode).  Deleting the counters is the
 * documented reset; the server then removes the emptied container PATH,
 * and the waiter's children watch fires NodeDeleted.  The waiter waits
 * for PATH to come back, as when it found none at the start, and is not
 * told TB_ENONODE. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "rcp_script.h"
#include "tumbler/recipes.h"

#define PATH "/l"

/* ---- the scripted server's side ---- */

/* The next request, a look at PATH (exists or getChildren2) with a watch
 * or without; its xid. */
static int32_t expect_look(int type, int watch)
{
    struct tb_path_watch_req rq;
    struct tb_rd body;
    int32_t xid = rs_expect(type, &body);

    assert_int_equal(tb_path_watch_req_decode(&body, &rq), 0);
    assert_true(tb_str_eq(rq.path, TB_STR(PATH)));
    assert_int_equal(rq.watch != 0, watch);
    return xid;
}

/* ---- the client's side ---- */

/* An await of 2 counts on PATH, there and empty: it watches the children.
 * PATH goes (NodeDeleted), and the look again finds it missing: the
 * waiter waits for PATH (exists, a watch), told nothing; PATH back with
 * the 2 counts lets it go. */
static void test_path_gone_while_waiting(void **state)
{
    static const char *const counts[] = {"countDownLatch-0000000000",
                                         "countDownLatch-0000000001", NULL};
    static const char *const none[] = {NULL};
    struct tb_client *c = rs_open_client(0);
    struct tb_latch *l;
    struct rs_done d = {0};

    (void)state;
    assert_int_equal(tb_latch_new(&l, c, PATH, 2), 0);
    assert_int_equal(tb_latch_await(l, -1, rs_done_cb, &d), 0);
    pump(c);
    rs_reply_names(expect_look(TB_OP_GETCHILDREN2, 0), none, 1, 4);
    pump(c);
    rs_reply_names(expect_look(TB_OP_GETCHILDREN2, 1), none, 1, 4);
    pump(c);
    srv_event(TB_EVENT_DELETED, PATH); /* reset: PATH removed */
    pump(c);
    srv_reply(expect_look(TB_OP_GETCHILDREN2, 1), 301, TB_ENONODE, NULL);
    pump(c);
    assert_int_equal(d.calls, 0);
    srv_reply(expect_look(TB_OP_EXISTS, 1), 301, TB_ENONODE, NULL);
    pump(c);
    assert_int_equal(d.calls, 0);
    assert_false(srv_has_data());
    /* PATH made again, and counted down twice. */
    srv_event(TB_EVENT_CREATED, PATH);
    pump(c);
    rs_reply_stat(expect_look(TB_OP_EXISTS, 1), 310, 0);
    pump(c);
    srv_reply(rs_expect_at(TB_OP_REMOVEWATCHES, PATH), 310, 0, NULL);
    rs_reply_names(expect_look(TB_OP_GETCHILDREN2, 0), counts, 1, 2);
    pump(c);
    assert_int_equal(d.calls, 1);
    assert_int_equal(d.rc, 0);
    tb_latch_free(l);
    rs_close(c);
}

/* Freed while its look was lost with the connection and no server
 * answers: cancelled at the next failed attempt, not left waiting for a
 * server or the session's end. */
static void test_freed_while_down(void **state)
{
    struct tb_client *c = rs_open_client(0);
    struct tb_latch *l;
    struct rs_done d = {0};

    (void)state;
    assert_int_equal(tb_latch_new(&l, c, PATH, 2), 0);
    assert_int_equal(tb_latch_await(l, -1, rs_done_cb, &d), 0);
    pump(c);
    (void)expect_look(TB_OP_GETCHILDREN2, 0); /* never answered */
    refuse = 1;
    close(server_fd);
    server_fd = -1;
    pump(c);
    tb_latch_free(l);
    fake_now += 600; /* the next attempt, refused */
    pump(c);
    assert_int_equal(d.calls, 1);
    assert_int_equal(d.rc, TB_ECANCELED);
    tb_client_close(c);
}

/* Freed while its first look is in flight, which then finds no PATH: the
 * give-up ends it (no wait for PATH is started). */
static void test_freed_before_no_path(void **state)
{
    struct tb_client *c = rs_open_client(0);
    struct tb_latch *l;
    struct rs_done d = {0};
    int32_t xid;

    (void)state;
    assert_int_equal(tb_latch_new(&l, c, PATH, 2), 0);
    assert_int_equal(tb_latch_await(l, -1, rs_done_cb, &d), 0);
    pump(c);
    xid = expect_look(TB_OP_GETCHILDREN2, 0);
    tb_latch_free(l);
    srv_reply(xid, 300, TB_ENONODE, NULL);
    pump(c);
    assert_int_equal(d.calls, 1);
    assert_int_equal(d.rc, TB_ECANCELED);
    assert_false(srv_has_data()); /* no exists set on PATH */
    rs_close(c);
}

/* An await of 3 counts that sees counters 0 and 1 waits for the first of
 * two: counter 2 there, or counter 0 gone (a reset).  Counter 2's answer
 * ends it (the watch that answer set is removed), and the waiter looks
 * again.  The answer for counter 0 then comes back having set a watch,
 * and that watch is removed too: a finished wait leaves none behind. */
static void test_other_watch_removed(void **state)
{
    static const char *const two[] = {"countDownLatch-0000000000",
                                      "countDownLatch-0000000001", NULL};
    static const char *const three[] = {"countDownLatch-0000000000",
                                        "countDownLatch-0000000001",
                                        "countDownLatch-0000000002", NULL};
    struct tb_client *c = rs_open_client(0);
    struct tb_latch *l;
    struct rs_done d = {0};
    int32_t last, first, removed, again;

    (void)state;
    assert_int_equal(tb_latch_new(&l, c, PATH, 3), 0);
    assert_int_equal(tb_latch_await(l, -1, rs_done_cb, &d), 0);
    pump(c);
    rs_reply_names(expect_look(TB_OP_GETCHILDREN2, 0), two, 1, 2);
    pump(c);
    last = rs_expect_at(TB_OP_EXISTS, PATH "/countDownLatch-0000000002");
    first = rs_expect_at(TB_OP_EXISTS, PATH "/countDownLatch-0000000000");
    rs_reply_stat(last, 320, 0);
    pump(c);
    removed =
        rs_expect_at(TB_OP_REMOVEWATCHES, PATH "/countDownLatch-0000000002");
    again = expect_look(TB_OP_GETCHILDREN2, 0);
    assert_int_equal(d.calls, 0);
    rs_reply_stat(first, 300, 0); /* replies in the order asked */
    srv_reply(removed, 320, 0, NULL);
    rs_reply_names(again, three, 1, 3);
    pump(c);
    srv_reply(
        rs_expect_at(TB_OP_REMOVEWATCHES, PATH "/countDownLatch-0000000000"),
        320, 0, NULL);
    pump(c);
    assert_int_equal(d.calls, 1);
    assert_int_equal(d.rc, 0);
    assert_false(srv_has_data());
    tb_latch_free(l);
    rs_close(c);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_path_gone_while_waiting, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_freed_while_down, setup, teardown),
        cmocka_unit_test_setup_teardown(test_freed_before_no_path, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_other_watch_removed, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
