/* A semaphore's acquisition between its lease's grant and its report,
 * against the client's scripted server (tests/unit/client_fixture.c: a
 * socketpair and a fake clock, loop mode, states forwarded to the
 * recipes).  The lease engine holds once PATH/leases is within the limit,
 * and the gate goes back before the caller hears of it: its delete may
 * wait across a reconnect.  What happens meanwhile decides: a session
 * that expired took the lease node with it, so the caller must not be
 * told it holds a slot others can now take; a cancel or a free that came
 * wins as it would have earlier, the lease node deleted and no lease
 * handed out. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "rcp_script.h"
#include "tumbler/recipes.h"

#define SID   RS_SID /* our session */
#define GATE  100    /* the gate node's czxid */
#define LEASE 101    /* the lease node's czxid: the lease's token */

/* ---- the scripted server's side ---- */

/* A sequential create of a name under `parent`, answered: the node's path
 * (the name asked for and sequence 1) in `node`. */
static void create_seq(const char *parent, int64_t czxid, char *node,
                       size_t cap)
{
    struct tb_create_req cr;
    struct tb_rd body;
    int32_t xid = rs_expect(TB_OP_CREATE2, &body);

    assert_int_equal(tb_create_req_decode(&body, &cr), 0);
    assert_true(cr.path.len > strlen(parent) + 1);
    assert_memory_equal(cr.path.ptr, parent, strlen(parent));
    assert_true(cr.path.len + 11 < cap);
    snprintf(node, cap, "%.*s0000000001", (int)cr.path.len, cr.path.ptr);
    rs_reply_create(xid, node, czxid);
}

/* The engine's look at its own node (with the watch), then at the queue:
 * ours the only node there, so it holds. */
static void hold_alone(struct tb_client *c, const char *parent,
                       const char *node, int64_t czxid)
{
    const char *name = strrchr(node, '/') + 1;

    rs_reply_stat(rs_expect_at(TB_OP_EXISTS, node), czxid, SID);
    rs_reply_names(rs_expect_at(TB_OP_GETCHILDREN, parent),
                   (const char *const[]){name, NULL}, 0, 0);
    pump(c);
}

/* ---- the client's side ---- */

struct leased {
    int calls, rc;
    struct tb_lease *lease;
};

static void on_leased(int rc, struct tb_lease *l, void *data)
{
    struct leased *r = data;

    r->calls++;
    r->rc = rc;
    r->lease = l;
}

/* An acquisition of a lease of /s (limit 1) up to its end: the gate and
 * the lease granted, the gate's delete sent and not answered.  The lease
 * node's path in `lease`; returns the gate delete's xid. */
static int32_t grant_to_gate_return(struct tb_client *c, struct tb_semaphore *s,
                                    struct leased *r, char *lease, size_t cap)
{
    static const char *const parents[] = {"leases", "locks", NULL};
    char gate[256];
    int32_t xid;

    assert_int_equal(tb_semaphore_acquire(s, -1, on_leased, r), 0);
    pump(c);
    create_seq("/s/locks/", GATE, gate, sizeof gate);
    pump(c);
    hold_alone(c, "/s/locks", gate, GATE);
    rs_reply_names(rs_expect_at(TB_OP_GETCHILDREN, "/s"), parents, 0, 0);
    pump(c);
    create_seq("/s/leases/", LEASE, lease, cap);
    pump(c);
    hold_alone(c, "/s/leases", lease, LEASE);
    /* Held: the watch on the leases goes.  Then the gate goes back: its
     * own-node watch, then its node. */
    srv_reply(rs_expect_at(TB_OP_REMOVEWATCHES, "/s/leases"), 300, 0, NULL);
    srv_reply(rs_expect_at(TB_OP_REMOVEWATCHES, gate), 300, 0, NULL);
    xid = rs_expect_at(TB_OP_DELETE, gate);
    pump(c);
    assert_int_equal(r->calls, 0);
    return xid;
}

struct states {
    int calls, last;
};

static void on_state(int state, int64_t token, void *data)
{
    struct states *st = data;

    (void)token;
    st->calls++;
    st->last = state;
}

static void close_client(struct tb_client *c, struct tb_semaphore *s)
{
    rs_cut(c);
    tb_semaphore_free(s);
    pump(c);
    tb_client_close(c);
}

/* The way it should go: the gate's delete answered, the lease held. */
static void test_granted(void **state)
{
    struct tb_client *c = rs_open_client(0);
    struct tb_semaphore *s;
    struct leased r = {0};
    char lease[256];
    int32_t xid;

    (void)state;
    assert_int_equal(tb_semaphore_new(&s, c, "/s", 1, NULL), 0);
    xid = grant_to_gate_return(c, s, &r, lease, sizeof lease);
    srv_reply(xid, 301, 0, NULL);
    pump(c);
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.rc, 0);
    assert_non_null(r.lease);
    assert_int_equal(tb_lease_token(r.lease), LEASE);
    assert_int_equal(tb_lease_state(r.lease), TB_LOCK_HELD);
    assert_int_equal(tb_lease_release(r.lease, NULL, NULL), 0);
    pump(c);
    (void)rs_expect_at(TB_OP_REMOVEWATCHES, lease);
    (void)rs_expect_at(TB_OP_DELETE, lease);
    close_client(c, s);
}

/* A lease engine that holds is not the caller's lease until the grant is
 * reported: the connection lost while the gate goes back tells the
 * caller's state callback nothing (it said SUSPENDED, for a lease the
 * caller had no handle of); the acquisition's end says what became of
 * it.  Once granted, the lease's states are told. */
static void test_no_state_before_the_grant(void **state)
{
    struct tb_client *c = rs_open_client(0);
    struct states st = {0};
    struct tb_lock_options o = {.state_cb = on_state, .data = &st};
    struct tb_semaphore *s;
    struct leased r = {0};
    char lease[256];
    int32_t xid;

    (void)state;
    assert_int_equal(tb_semaphore_new(&s, c, "/s", 1, &o), 0);
    (void)grant_to_gate_return(c, s, &r, lease, sizeof lease);
    close(server_fd); /* the delete's reply is lost */
    server_fd = -1;
    pump(c);
    assert_int_equal(tb_client_state(c), TB_SESSION_SUSPENDED);
    assert_int_equal(r.calls, 0);
    assert_int_equal(st.calls, 0);
    close_client(c, s);
    assert_int_equal(r.calls, 1);
    assert_true(r.rc != 0);
    assert_int_equal(st.calls, 0);

    c = rs_open_client(0);
    assert_int_equal(tb_semaphore_new(&s, c, "/s", 1, &o), 0);
    r = (struct leased){0};
    xid = grant_to_gate_return(c, s, &r, lease, sizeof lease);
    srv_reply(xid, 301, 0, NULL);
    pump(c);
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.rc, 0);
    close(server_fd);
    server_fd = -1;
    pump(c);
    assert_int_equal(st.calls, 1);
    assert_int_equal(st.last, TB_LOCK_SUSPENDED);
    close_client(c, s);
}

/* The nodes' data given in the options is the caller's only during
 * tb_semaphore_new: an acquisition later still writes it, not whatever
 * the caller's buffer holds by then. */
static void test_value_copied(void **state)
{
    struct tb_client *c = rs_open_client(0);
    struct tb_lock_options o = {0};
    struct tb_semaphore *s;
    struct leased r = {0};
    struct tb_create_req cr;
    struct tb_rd body;
    char *buf = strdup("abc");

    (void)state;
    assert_non_null(buf);
    o.value = buf;
    o.len = 3;
    assert_int_equal(tb_semaphore_new(&s, c, "/s", 1, &o), 0);
    memcpy(buf, "XYZ", 3);
    free(buf);
    assert_int_equal(tb_semaphore_acquire(s, -1, on_leased, &r), 0);
    pump(c);
    (void)rs_expect(TB_OP_CREATE2, &body); /* the gate's node */
    assert_int_equal(tb_create_req_decode(&body, &cr), 0);
    assert_int_equal(cr.data.len, 3);
    assert_memory_equal(cr.data.ptr, "abc", 3);
    close_client(c, s);
}

/* The gate's delete lost with the connection, sent again (a look first)
 * once the client is back, and the server says the session expired: the
 * lease node went with it, and another client may hold that slot now.
 * The acquisition fails with the session's end, no lease handed out. */
static void test_session_expired_during_gate_return(void **state)
{
    struct tb_client *c = rs_open_client(0);
    struct tb_semaphore *s;
    struct tb_connect_req rq;
    struct leased r = {0};
    char lease[256];

    (void)state;
    assert_int_equal(tb_semaphore_new(&s, c, "/s", 1, NULL), 0);
    (void)grant_to_gate_return(c, s, &r, lease, sizeof lease);
    close(server_fd); /* the delete's reply is lost */
    server_fd = -1;
    pump(c);
    assert_int_equal(r.calls, 0); /* the gate's release waits */
    fake_now += 600;
    pump(c);
    srv_accept(0, 0, 0, &rq); /* timeOut 0: the session is gone */
    pump(c);
    assert_int_equal(tb_client_state(c), TB_SESSION_EXPIRED);
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.rc, TB_ESESSIONEXPIRED);
    assert_null(r.lease);
    close_client(c, s);
}

/* A cancel while the gate's delete is in flight, the lease already
 * granted: the cancel wins.  Its lease node is deleted and the callback
 * gets TB_ECANCELED, as for a cancel earlier in the acquisition. */
static void test_cancel_during_gate_return(void **state)
{
    struct tb_client *c = rs_open_client(0);
    struct tb_semaphore *s;
    struct leased r = {0};
    char lease[256];
    int32_t xid;

    (void)state;
    assert_int_equal(tb_semaphore_new(&s, c, "/s", 1, NULL), 0);
    xid = grant_to_gate_return(c, s, &r, lease, sizeof lease);
    assert_int_equal(tb_semaphore_cancel(s), 0);
    pump(c);
    assert_int_equal(r.calls, 0);
    srv_reply(xid, 301, 0, NULL);
    pump(c);
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.rc, TB_ECANCELED);
    assert_null(r.lease);
    srv_reply(rs_expect_at(TB_OP_REMOVEWATCHES, lease), 300, 0, NULL);
    srv_reply(rs_expect_at(TB_OP_DELETE, lease), 302, 0, NULL);
    pump(c);
    assert_false(srv_has_data());
    assert_int_equal(tb_client_state(c), TB_SESSION_CONNECTED);
    assert_int_equal(tb_semaphore_cancel(s), TB_EINVAL); /* none left */
    close_client(c, s);
}

/* The same with the handle freed: nothing is left held, the lease node
 * is deleted, and the pending acquisition ends with TB_ECANCELED. */
static void test_free_during_gate_return(void **state)
{
    struct tb_client *c = rs_open_client(0);
    struct tb_semaphore *s;
    struct leased r = {0};
    char lease[256];
    int32_t xid;

    (void)state;
    assert_int_equal(tb_semaphore_new(&s, c, "/s", 1, NULL), 0);
    xid = grant_to_gate_return(c, s, &r, lease, sizeof lease);
    tb_semaphore_free(s);
    pump(c);
    assert_int_equal(r.calls, 0);
    srv_reply(xid, 301, 0, NULL);
    pump(c);
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.rc, TB_ECANCELED);
    assert_null(r.lease);
    srv_reply(rs_expect_at(TB_OP_REMOVEWATCHES, lease), 300, 0, NULL);
    srv_reply(rs_expect_at(TB_OP_DELETE, lease), 302, 0, NULL);
    pump(c);
    assert_false(srv_has_data());
    assert_int_equal(tb_client_state(c), TB_SESSION_CONNECTED);
    close(server_fd);
    server_fd = -1;
    pump(c);
    tb_client_close(c);
}

/* A free from inside the grant's callback (on another thread the same
 * race): the lease it was handed stays valid there, and goes back, its
 * node deleted, once the callback returns. */
struct freeing {
    struct tb_semaphore *s;
    int calls, rc, state;
    int64_t token;
};

static void on_leased_free(int rc, struct tb_lease *l, void *data)
{
    struct freeing *f = data;

    f->calls++;
    f->rc = rc;
    tb_semaphore_free(f->s);
    f->token = tb_lease_token(l);
    f->state = tb_lease_state(l);
}

static void test_free_in_grant_callback(void **state)
{
    struct tb_client *c = rs_open_client(0);
    struct freeing f = {0};
    char gate[256], lease[256];

    (void)state;
    assert_int_equal(tb_semaphore_new(&f.s, c, "/s", 1, NULL), 0);
    assert_int_equal(tb_semaphore_acquire(f.s, -1, on_leased_free, &f), 0);
    pump(c);
    create_seq("/s/locks/", GATE, gate, sizeof gate);
    pump(c);
    hold_alone(c, "/s/locks", gate, GATE);
    rs_reply_names(rs_expect_at(TB_OP_GETCHILDREN, "/s"),
                   (const char *const[]){"leases", "locks", NULL}, 0, 0);
    pump(c);
    create_seq("/s/leases/", LEASE, lease, sizeof lease);
    pump(c);
    hold_alone(c, "/s/leases", lease, LEASE);
    srv_reply(rs_expect_at(TB_OP_REMOVEWATCHES, "/s/leases"), 300, 0, NULL);
    srv_reply(rs_expect_at(TB_OP_REMOVEWATCHES, gate), 300, 0, NULL);
    srv_reply(rs_expect_at(TB_OP_DELETE, gate), 301, 0, NULL);
    pump(c);
    assert_int_equal(f.calls, 1);
    assert_int_equal(f.rc, 0);
    assert_int_equal(f.token, LEASE);
    assert_int_equal(f.state, TB_LOCK_HELD);
    srv_reply(rs_expect_at(TB_OP_REMOVEWATCHES, lease), 300, 0, NULL);
    srv_reply(rs_expect_at(TB_OP_DELETE, lease), 302, 0, NULL);
    pump(c);
    assert_false(srv_has_data());
    close(server_fd);
    server_fd = -1;
    pump(c);
    tb_client_close(c);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_granted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_state_before_the_grant, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_value_copied, setup, teardown),
        cmocka_unit_test_setup_teardown(test_session_expired_during_gate_return,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancel_during_gate_return, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_free_during_gate_return, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_free_in_grant_callback, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
