/* A double barrier's last step of leave, the deletes of the member's node
 * and of PATH/ready, cut off by a connection loss, against the client's
 * scripted server (tests/unit/client_fixture.c: a socketpair and a fake
 * clock, loop mode).  Either delete may have applied; a "ready" left
 * behind would let the next round's first member through enter alone.
 * So both are sent again after the reconnect, the node's first (a member
 * entering meanwhile must not count it with "ready" gone), and the leave
 * ends only then: done (NoNode counts), or the session's end. */
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

#define SID   RS_SID /* our session */
#define PATH  "/d"
#define READY PATH "/ready"
/* The other member: its uuid below any other, so we are not the lowest. */
#define LOW "00000000-0000-0000-0000-000000000000"

/* ---- the scripted server's side ---- */

/* The next request, the create of our member node: answered, its path
 * in `node`. */
static void create_member(char *node, size_t cap)
{
    struct tb_create_req cr;
    struct tb_rd body;
    int32_t xid = rs_expect(TB_OP_CREATE2, &body);

    assert_int_equal(tb_create_req_decode(&body, &cr), 0);
    assert_true(cr.path.len > strlen(PATH "/") && cr.path.len < cap);
    assert_memory_equal(cr.path.ptr, PATH "/", strlen(PATH "/"));
    snprintf(node, cap, "%.*s", (int)cr.path.len, cr.path.ptr);
    rs_reply_create(xid, node, 100);
}

/* ---- the client's side ---- */

/* A member of the barrier PATH of 2 through enter: our node made, the
 * other member (LOW) there, "ready" made.  Our node's path in `node`. */
static void enter(struct tb_client *c, struct tb_dbarrier *b, char *node,
                  size_t cap)
{
    struct rs_done d = {0};
    const char *names[3] = {LOW, NULL, NULL};

    assert_int_equal(tb_dbarrier_enter(b, -1, rs_done_cb, &d), 0);
    pump(c);
    create_member(node, cap);
    pump(c);
    names[1] = strrchr(node, '/') + 1;
    rs_reply_names(rs_expect_at(TB_OP_GETCHILDREN, PATH), names, 0, 0);
    pump(c);
    rs_reply_create(rs_expect_at(TB_OP_CREATE2, READY), READY, 101);
    pump(c);
    assert_int_equal(d.calls, 1);
    assert_int_equal(d.rc, 0);
    assert_int_equal(tb_dbarrier_entered(b), 1);
}

/* A leave of the last one out, up to its deletes, sent (our node, then
 * "ready") and not answered. */
static void leave_to_last_deletes(struct tb_client *c, struct tb_dbarrier *b,
                                  const char *node, struct rs_done *d)
{
    const char *names[3] = {strrchr(node, '/') + 1, "ready", NULL};

    assert_int_equal(tb_dbarrier_leave(b, -1, rs_done_cb, d), 0);
    pump(c);
    rs_reply_names(rs_expect_at(TB_OP_GETCHILDREN, PATH), names, 0, 0);
    pump(c);
    (void)rs_expect_at(TB_OP_DELETE, node);
    (void)rs_expect_at(TB_OP_DELETE, READY);
    assert_int_equal(d->calls, 0);
}

/* The connection breaks with the replies in flight: nothing told yet. */
static void cut(struct tb_client *c, const struct rs_done *d)
{
    close(server_fd);
    server_fd = -1;
    pump(c);
    assert_int_equal(d->calls, 0);
    fake_now += 600; /* past any backoff */
    pump(c);
}

/* The last one out loses its deletes' replies: after the reconnect both
 * are sent again, our node first; "ready" already gone (NoNode) is done,
 * and the leave succeeds with the member out. */
static void test_last_deletes_sent_again(void **state)
{
    struct tb_client *c = rs_open_client(0);
    struct tb_connect_req rq;
    struct tb_dbarrier *b;
    struct rs_done d = {0};
    char node[256];

    (void)state;
    assert_int_equal(tb_dbarrier_new(&b, c, PATH, 2), 0);
    enter(c, b, node, sizeof node);
    leave_to_last_deletes(c, b, node, &d);
    cut(c, &d);
    srv_accept(SID, 6000, 0, &rq);
    pump(c);
    srv_reply(rs_expect_at(TB_OP_DELETE, node), 301, TB_ENONODE, NULL);
    srv_reply(rs_expect_at(TB_OP_DELETE, READY), 301, TB_ENONODE, NULL);
    pump(c);
    assert_int_equal(d.calls, 1);
    assert_int_equal(d.rc, 0);
    assert_int_equal(tb_dbarrier_entered(b), 0);
    tb_dbarrier_free(b); /* nothing left to delete */
    pump(c);
    assert_false(srv_has_data());
    rs_close(c);
}

/* The same, the session gone when the client is back: the leave reports
 * it (the server deletes our node with the session). */
static void test_last_deletes_session_expired(void **state)
{
    struct tb_client *c = rs_open_client(0);
    struct tb_connect_req rq;
    struct tb_dbarrier *b;
    struct rs_done d = {0};
    char node[256];

    (void)state;
    assert_int_equal(tb_dbarrier_new(&b, c, PATH, 2), 0);
    enter(c, b, node, sizeof node);
    leave_to_last_deletes(c, b, node, &d);
    cut(c, &d);
    srv_accept(0, 0, 0, &rq); /* timeOut 0: the session is gone */
    pump(c);
    assert_int_equal(tb_client_state(c), TB_SESSION_EXPIRED);
    assert_int_equal(d.calls, 1);
    assert_int_equal(d.rc, TB_ESESSIONEXPIRED);
    assert_int_equal(tb_dbarrier_entered(b), 0); /* its node went with it */
    tb_dbarrier_free(b);
    rs_close(c);
}

/* The handle freed while the deletes wait for the connection: the give-up
 * does not stop them (the member's node may be gone already, and "ready"
 * must not outlive it); the leave ends with their outcome. */
static void test_free_during_last_deletes(void **state)
{
    struct tb_client *c = rs_open_client(0);
    struct tb_connect_req rq;
    struct tb_dbarrier *b;
    struct rs_done d = {0};
    char node[256];

    (void)state;
    assert_int_equal(tb_dbarrier_new(&b, c, PATH, 2), 0);
    enter(c, b, node, sizeof node);
    leave_to_last_deletes(c, b, node, &d);
    cut(c, &d);
    tb_dbarrier_free(b);
    pump(c);
    assert_int_equal(d.calls, 0);
    srv_accept(SID, 6000, 0, &rq);
    pump(c);
    srv_reply(rs_expect_at(TB_OP_DELETE, node), 301, 0, NULL);
    srv_reply(rs_expect_at(TB_OP_DELETE, READY), 302, 0, NULL);
    pump(c);
    assert_int_equal(d.calls, 1);
    assert_int_equal(d.rc, 0);
    assert_false(srv_has_data());
    rs_close(c);
}

/* Not the lowest: our node went first, and we waited for the lowest to
 * go; finding nobody left we delete "ready", and that delete loses its
 * reply: sent again alone after the reconnect. */
static void test_ready_delete_of_other_sent_again(void **state)
{
    struct tb_client *c = rs_open_client(0);
    struct tb_connect_req rq;
    struct tb_dbarrier *b;
    struct rs_done d = {0};
    const char *names[4] = {LOW, NULL, "ready", NULL};
    char node[256];

    (void)state;
    assert_int_equal(tb_dbarrier_new(&b, c, PATH, 2), 0);
    enter(c, b, node, sizeof node);
    names[1] = strrchr(node, '/') + 1;
    assert_int_equal(tb_dbarrier_leave(b, -1, rs_done_cb, &d), 0);
    pump(c);
    rs_reply_names(rs_expect_at(TB_OP_GETCHILDREN, PATH), names, 0, 0);
    pump(c);
    srv_reply(rs_expect_at(TB_OP_DELETE, node), 301, 0, NULL);
    rs_reply_stat(rs_expect_at(TB_OP_EXISTS, PATH "/" LOW), 50, 0x99);
    pump(c);
    srv_event(TB_EVENT_DELETED, PATH "/" LOW);
    pump(c);
    srv_reply(rs_expect_at(TB_OP_EXISTS, PATH "/" LOW), 302, TB_ENONODE, NULL);
    pump(c);
    /* Gone: the wait removes its watch, and we look again. */
    srv_reply(rs_expect_at(TB_OP_REMOVEWATCHES, PATH "/" LOW), 302, 0, NULL);
    rs_reply_names(rs_expect_at(TB_OP_GETCHILDREN, PATH), names + 2, 0, 0);
    pump(c);
    (void)rs_expect_at(TB_OP_DELETE, READY);
    cut(c, &d);
    srv_accept(SID, 6000, 0, &rq);
    pump(c);
    srv_reply(rs_expect_at(TB_OP_DELETE, READY), 303, 0, NULL);
    pump(c);
    assert_int_equal(d.calls, 1);
    assert_int_equal(d.rc, 0);
    assert_int_equal(tb_dbarrier_entered(b), 0);
    assert_false(srv_has_data());
    tb_dbarrier_free(b);
    rs_close(c);
}

/* The second member of 2: the read after our create loses its reply.
 * It is read again, behind a sync, and we make "ready" (we ended with
 * ConnectionLoss, our node reaped, and the other member waited for a
 * "ready" no one would make). */
static void test_enter_read_lost_read_again(void **state)
{
    struct tb_client *c = rs_open_client(0);
    struct tb_connect_req rq;
    struct tb_dbarrier *b;
    struct rs_done d = {0};
    const char *names[3] = {LOW, NULL, NULL};
    char node[256];

    (void)state;
    assert_int_equal(tb_dbarrier_new(&b, c, PATH, 2), 0);
    assert_int_equal(tb_dbarrier_enter(b, -1, rs_done_cb, &d), 0);
    pump(c);
    create_member(node, sizeof node);
    pump(c);
    names[1] = strrchr(node, '/') + 1;
    (void)rs_expect_at(TB_OP_GETCHILDREN, PATH); /* its reply is lost */
    cut(c, &d);
    srv_accept(SID, 6000, 0, &rq);
    pump(c);
    rs_reply_sync(rs_expect_at(TB_OP_SYNC, PATH), PATH);
    rs_reply_names(rs_expect_at(TB_OP_GETCHILDREN, PATH), names, 0, 0);
    pump(c);
    rs_reply_create(rs_expect_at(TB_OP_CREATE2, READY), READY, 101);
    pump(c);
    assert_int_equal(d.calls, 1);
    assert_int_equal(d.rc, 0);
    assert_int_equal(tb_dbarrier_entered(b), 1);
    assert_false(srv_has_data()); /* our node kept */
    rs_cut(c);
    tb_dbarrier_free(b);
    pump(c);
    tb_client_close(c);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_last_deletes_sent_again, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_last_deletes_session_expired,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_free_during_last_deletes, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_ready_delete_of_other_sent_again,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_enter_read_lost_read_again, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
