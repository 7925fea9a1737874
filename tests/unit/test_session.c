/* Session expiry through the server's own code on a virtual clock
 * (session_fixture.c): session.c's ticks, touches and opens read the
 * test's time; a close proposed by a tick is logged, applied and forgotten
 * as in tumblerd.  Expiry's arithmetic alone is test_expiry.c's; this
 * proves the wiring: what reads the clock, what the tick proposes, what a
 * restart starts again, what a leader answers a follower's claim. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "server/fsm/fsm.h"
#include "server/peer/peer_int.h"
#include "server/proc/proc.h"
#include "server/replog/replog.h"
#include "session_fixture.h"

/* Closed at the first tick at or past last touch + timeout; ticks read the
 * server's clock, and txns carry its wall time. */
static void expires_on_the_clock(void **state)
{
    struct sfx *f = *state;
    int64_t id = create_session(f, 4000);
    uint64_t t;

    assert_true(id != 0);
    assert_int_equal(f->last_time, WALL);
    assert_int_equal(tracked(f, id)->deadline_ms, T0 + 4000);
    for (t = T0 + 1000; t < T0 + 4000; t += 1000)
        assert_false(tick_at(f, t, id));
    assert_false(tick_at(f, T0 + 3999, id));
    f->wall = WALL + 4000;
    assert_true(tick_at(f, T0 + 4000, id));
    /* Proposed once, however many ticks pass before it is applied. */
    assert_false(tick_at(f, T0 + 4500, id));
    assert_closed(f, id, 1);
    assert_int_equal(f->last_time, WALL + 4000);
}

static void touch_counts_from_then(void **state)
{
    struct sfx *f = *state;
    int64_t id = create_session(f, 4000);

    assert_false(tick_at(f, T0 + 1000, id));
    f->now = T0 + 2500;
    session_touch(&f->s, id);
    assert_false(tick_at(f, T0 + 3000, id));
    assert_false(tick_at(f, T0 + 4000, id));
    assert_false(tick_at(f, T0 + 5000, id));
    assert_false(tick_at(f, T0 + 6000, id));
    assert_false(tick_at(f, T0 + 6499, id));
    assert_true(tick_at(f, T0 + 6500, id));
    assert_closed(f, id, 1);
}

/* A loop stopped for 7 s (SIGSTOP): the session's deadline moves by what
 * was lost past one tick, so it outlives the stop by exactly that. */
static void stalled_loop_counts_against_no_session(void **state)
{
    struct sfx *f = *state;
    int64_t id = create_session(f, 4000);

    assert_false(tick_at(f, T0 + 1000, id));
    assert_false(tick_at(f, T0 + 8000, id)); /* 6000 ms lost */
    assert_int_equal(tracked(f, id)->deadline_ms, T0 + 10000);
    assert_false(tick_at(f, T0 + 9000, id));
    assert_false(tick_at(f, T0 + 9999, id));
    assert_true(tick_at(f, T0 + 10000, id));
    assert_closed(f, id, 1);
}

/* The leader's answer to a follower's claim of session `id` for its
 * connection `origin` (PEER_OWN): the frame it sends on a link whose
 * connect has not completed, which keeps it. */
static int claim(struct sfx *f, int64_t id, uint64_t origin, int *status)
{
    struct peer p = {0};
    struct link k = {0};
    uint8_t own[16];
    int type;

    p.srv = &f->s;
    tb_map_init(&p.owner);
    k.p = &p;
    tb_wbuf_init(&k.held);
    tb_store_be64(own, (uint64_t)id);
    tb_store_be64(own + 8, origin);
    peer__on_own(&k, own, sizeof own);
    assert_true(k.held.len >= FRAME_HDR + 8);
    type = k.held.base[4];
    *status = k.held.len >= FRAME_HDR + 12
                  ? (int32_t)tb_load_be32(k.held.base + FRAME_HDR + 8)
                  : 0;
    assert_int_equal(tb_load_be64(k.held.base + FRAME_HDR), origin);
    tb_wbuf_free(&k.held);
    tb_map_free(&p.owner);
    return type;
}

/* The leader's side (p) of a link k from follower 2, whose connect has
 * not completed: what the leader sends on it is kept in k.held. */
static void link_open(struct sfx *f, struct peer *p, struct link *k)
{
    memset(p, 0, sizeof *p);
    memset(k, 0, sizeof *k);
    p->srv = &f->s;
    tb_map_init(&p->owner);
    tb_queue_init(&p->accepted);
    k->p = p;
    k->from = 2;
    tb_wbuf_init(&k->held);
    tb_map_init(&k->refused);
}

static void link_free(struct peer *p, struct link *k)
{
    tb_wbuf_free(&k->held);
    tb_map_free(&k->refused);
    tb_map_free(&p->owner);
}

/* A follower's claim of a session the leader has closed is refused as
 * expired, though the follower has not applied the close yet (it learns
 * of the commit a heartbeat later): it would have told the client its
 * session and its locks were there.  A live session is taken. */
static void claim_of_closed_session_refused(void **state)
{
    struct sfx *f = *state;
    int64_t live = create_session(f, 60000), id = create_session(f, 4000);
    int status;

    assert_true(tick_at(f, T0 + 4000, id));
    assert_closed(f, id, 1);
    while (!replog_leader_caught_up(f->s.log))
        uv_run(&f->loop, UV_RUN_ONCE);
    assert_int_equal(claim(f, id, 7, &status), PEER_FAILED);
    assert_int_equal(status, TB_ESESSIONEXPIRED);
    assert_int_equal(claim(f, live, 8, &status), PEER_OWNED);
}

/* Connection n of k's follower, as its ids go (proc_conn_id_base). */
#define ORIGIN(k, n) ((int64_t)((uint64_t)(k)->from << 56 | (uint64_t)(n)))

/* A create of `path` by session `id`, forwarded on k from its follower's
 * connection `origin` (ORIGIN) with `xid`. */
static void forward_create(struct link *k, int64_t id, int64_t origin,
                           int32_t xid, const char *path)
{
    struct tb_create_req r = {tb_str_c(path), TB_STR("v"), tb_acl_open_unsafe,
                              0};
    struct tb_txn t = {0};
    struct tb_wbuf b, e;

    tb_wbuf_init(&b);
    tb_wbuf_init(&e);
    tb_create_req_encode(&b, &r);
    t.type = TB_OP_CREATE;
    t.session = id;
    t.xid = xid;
    t.origin = ORIGIN(k, origin);
    t.super = 1;
    t.body = (struct tb_str){(const char *)b.base, b.len};
    tb_txn_encode(&e, &t);
    peer__on_forward(k, e.base, e.len);
    tb_wbuf_free(&e);
    tb_wbuf_free(&b);
}

/* The n-th frame (from 1) the leader sent on k: a PEER_FAILED's origin,
 * status and xid; 0 if there is no such frame. */
static int nth_failed(const struct link *k, int n, int64_t *origin, int *status,
                      int32_t *xid)
{
    size_t at = 0, len;

    for (;;) {
        if (at + FRAME_HDR > k->held.len)
            return 0;
        len = tb_load_be32(k->held.base + at);
        if (--n == 0)
            break;
        at += 4 + len;
    }
    assert_int_equal(k->held.base[at + 4], PEER_FAILED);
    assert_int_equal(len, 1 + 16);
    *origin = (int64_t)tb_load_be64(k->held.base + at + FRAME_HDR);
    *status = (int32_t)tb_load_be32(k->held.base + at + FRAME_HDR + 8);
    *xid = (int32_t)tb_load_be32(k->held.base + at + FRAME_HDR + 12);
    return 1;
}

/* A session's writes apply in the order its client sent them, or not at
 * all: once the leader refused a write a follower forwarded for one of
 * its connections, it refuses the connection's later ones (the follower
 * closes it on the refusal, but they may be on their way already), though
 * what refused the first is gone by then: here the session was held on
 * another server; in tumblerd also this server not leading for a moment
 * while the follower's link stayed, or memory short.  Another connection
 * of the follower's is not concerned. */
static void forwards_after_a_refusal_refused(void **state)
{
    struct sfx *f = *state;
    int64_t id = create_session(f, 60000), origin;
    struct peer p;
    struct link k;
    int status;
    int32_t xid;

    link_open(f, &p, &k);
    assert_int_equal(tb_map_put(&p.owner, (uint64_t)id, (void *)(intptr_t)3),
                     0);
    forward_create(&k, id, 7, 1, "/a");
    assert_true(nth_failed(&k, 1, &origin, &status, &xid));
    assert_int_equal(origin, ORIGIN(&k, 7));
    assert_int_equal(status, TB_ESESSIONMOVED);
    assert_int_equal(xid, 1);
    (void)tb_map_del(&p.owner, (uint64_t)id);
    forward_create(&k, id, 7, 2, "/b");
    assert_true(nth_failed(&k, 2, &origin, &status, &xid));
    assert_int_equal(origin, ORIGIN(&k, 7));
    assert_int_equal(status, TB_ECONNECTIONLOSS);
    assert_int_equal(xid, 2);
    forward_create(&k, id, 8, 1, "/c"); /* proposed: no answer yet */
    assert_false(nth_failed(&k, 3, &origin, &status, &xid));
    link_free(&p, &k);
}

/* A leader that took over knows where no session is held but those
 * resumed since: to it the first server that writes for one holds it, as
 * ZooKeeper's leader takes a session's first writer for its owner, and
 * another server's writes for it are refused from then on, its own
 * client's too.  Else a write a client left on its old server, held up
 * there, would be applied after those it made since on another.  A close,
 * a creation or a sync may come from anywhere. */
static void first_writer_holds_the_session(void **state)
{
    struct sfx *f = *state;
    int64_t a = create_session(f, 60000), b = create_session(f, 60000);
    int64_t origin;
    struct peer p;
    struct link k, k3 = {0};
    struct tb_create_req r = {TB_STR("/b"), TB_STR("v"), tb_acl_open_unsafe, 0};
    struct tb_wbuf body;
    int status;
    int32_t xid;

    link_open(f, &p, &k);
    k3.p = &p;
    k3.from = 3;
    tb_wbuf_init(&k3.held);
    tb_map_init(&k3.refused);
    f->s.peer = &p;

    forward_create(&k, a, 7, 1, "/a"); /* proposed: a is held on 2 now */
    assert_int_equal(k.held.len, 0);
    forward_create(&k3, a, 9, 1, "/a3");
    assert_true(nth_failed(&k3, 1, &origin, &status, &xid));
    assert_int_equal(origin, ORIGIN(&k3, 9));
    assert_int_equal(status, TB_ESESSIONMOVED);
    assert_int_equal(
        proc_propose(&f->s, TB_OP_CREATE, a, 1, 11, NULL, TB_STR("")),
        TB_ESESSIONMOVED);

    assert_int_equal(
        proc_propose(&f->s, TB_OP_SYNC, b, 1, 11, NULL, TB_STR("")), 0);
    tb_wbuf_init(&body);
    tb_create_req_encode(&body, &r);
    assert_int_equal(
        proc_propose(&f->s, TB_OP_CREATE, b, 2, 11, NULL,
                     (struct tb_str){(const char *)body.base, body.len}),
        0); /* proposed: b is held here now */
    tb_wbuf_free(&body);
    forward_create(&k, b, 8, 1, "/b2");
    assert_true(nth_failed(&k, 1, &origin, &status, &xid));
    assert_int_equal(origin, ORIGIN(&k, 8));
    assert_int_equal(status, TB_ESESSIONMOVED);

    f->s.peer = NULL;
    tb_wbuf_free(&k3.held);
    tb_map_free(&k3.refused);
    link_free(&p, &k);
}

/* A write forwarded for a session already closed here is refused as
 * expired once applied, and gives the session no home: before, an entry
 * was made that nothing took out while this server led.  And a txn only a
 * leader makes (a new epoch), forwarded, is refused, not logged: it would
 * have moved every member's zxids. */
static void forwards_of_no_session_refused(void **state)
{
    struct sfx *f = *state;
    int64_t id = create_session(f, 4000), origin, zxid;
    struct tb_new_epoch_txn ne = {-1};
    struct tb_txn t = {0};
    struct tb_wbuf b, e;
    struct peer p;
    struct link k;
    int status;
    int32_t xid;

    assert_true(tick_at(f, T0 + 4000, id));
    assert_closed(f, id, 1);
    link_open(f, &p, &k);
    forward_create(&k, id, 7, 1, "/gone"); /* proposed, refused there */
    assert_int_equal(p.owner.count, 0);
    assert_false(nth_failed(&k, 1, &origin, &status, &xid));

    zxid = proc_zxid(&f->s);
    tb_wbuf_init(&b);
    tb_wbuf_init(&e);
    tb_new_epoch_txn_encode(&b, &ne);
    t.type = TB_OP_NEWEPOCH;
    t.xid = 2;
    t.origin = ORIGIN(&k, 8);
    t.body = (struct tb_str){(const char *)b.base, b.len};
    tb_txn_encode(&e, &t);
    peer__on_forward(&k, e.base, e.len);
    assert_true(nth_failed(&k, 1, &origin, &status, &xid));
    assert_int_equal(origin, ORIGIN(&k, 8));
    assert_int_equal(status, TB_EBADARGUMENTS);
    assert_int_equal(xid, 2);
    (void)create_session(f, 4000); /* logged after anything before it */
    assert_true(proc_zxid(&f->s) >> 32 == zxid >> 32);
    tb_wbuf_free(&e);
    tb_wbuf_free(&b);
    link_free(&p, &k);
}

/* A follower's client's closeSession, forwarded, marks the session closing
 * on the leader as it is proposed, as its own client's does: a claim of it
 * (its client back on another follower) is refused as expired before the
 * close is applied, not granted and then taken away. */
static void forwarded_close_refuses_claim(void **state)
{
    struct sfx *f = *state;
    int64_t id = create_session(f, 60000);
    struct peer p;
    struct link k;
    struct tb_txn t = {0};
    struct tb_wbuf e;
    int status;

    while (!replog_leader_caught_up(f->s.log))
        uv_run(&f->loop, UV_RUN_ONCE);
    link_open(f, &p, &k);
    tb_wbuf_init(&e);
    t.type = TB_OP_CLOSESESSION;
    t.session = id;
    t.xid = 1;
    t.origin = ORIGIN(&k, 7);
    tb_txn_encode(&e, &t);
    peer__on_forward(&k, e.base, e.len);
    assert_int_equal(k.held.len, 0); /* proposed */
    assert_true(tracked(f, id)->closing);
    assert_int_equal(claim(f, id, 8, &status), PEER_FAILED);
    assert_int_equal(status, TB_ESESSIONEXPIRED);
    assert_closed(f, id, 1);
    tb_wbuf_free(&e);
    link_free(&p, &k);
}

/* After a restart every session in the fsm gets a fresh timeout from the
 * restart's time, however long the server was down: none expires at the
 * first tick. */
static void fresh_timeout_after_restart(void **state)
{
    struct sfx *f = *state;
    int64_t a = create_session(f, 4000), b = create_session(f, 6000);
    const uint64_t r = T0 + 3600000;

    assert_true(a != 0 && b != 0 && a != b);
    assert_false(tick_at(f, T0 + 1000, a));
    stop(f);
    f->now = r;
    start(f);
    assert_int_equal(fsm_session_count(f->s.fsm), 2);
    assert_int_equal(tracked(f, a)->deadline_ms, r + 4000);
    assert_int_equal(tracked(f, b)->deadline_ms, r + 6000);
    assert_false(tick_at(f, r + 1000, a));
    assert_false(tick_at(f, r + 2000, a));
    assert_false(tick_at(f, r + 3000, a));
    assert_false(tick_at(f, r + 3999, a));
    assert_true(tick_at(f, r + 4000, a));
    assert_closed(f, a, 1);
    assert_false(tick_at(f, r + 5000, b));
    assert_false(tick_at(f, r + 5999, b));
    assert_true(tick_at(f, r + 6000, b));
    assert_closed(f, b, 2);
}

/* A start whose log took long to replay: the loop's cached time is still
 * that of before it, and the sessions' fresh timeouts count from the time
 * after it (they expired at the first tick before). */
static void reload_counts_from_now(void **state)
{
    struct sfx *f = *state;
    int64_t a = create_session(f, 4000);
    const uint64_t r = T0 + 3600000;
    uint64_t t;

    stop(f);
    f->cached = 1;
    f->loop_now = r;    /* the loop's time when the start began */
    f->now = r + 10000; /* when the replay ended */
    start(f);
    assert_int_equal(tracked(f, a)->deadline_ms, r + 14000);
    f->cached = 0;
    for (t = r + 10500; t < r + 14000; t += 1000)
        assert_false(tick_at(f, t, a));
    assert_true(tick_at(f, r + 14000, a));
    assert_closed(f, a, 1);
}

/* A leader not yet told it leads expires nothing: its deadlines are still
 * a follower's, which its own clients alone moved.  Once told, every
 * session has a full timeout from then. */
static void no_expiry_before_leadership_is_told(void **state)
{
    struct sfx *f = *state;
    int64_t a = create_session(f, 4000);
    uint64_t t;

    f->s.expiring = 0; /* as on_leader(0) leaves it */
    for (t = T0 + 1000; t <= T0 + 10000; t += 1000)
        assert_false(tick_at(f, t, a));
    session_reload(&f->s); /* on_leader(1), at T0 + 10000 */
    for (t = T0 + 11000; t < T0 + 14000; t += 1000)
        assert_false(tick_at(f, t, a));
    assert_true(tick_at(f, T0 + 14000, a));
    assert_closed(f, a, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(expires_on_the_clock, setup, teardown),
        cmocka_unit_test_setup_teardown(touch_counts_from_then, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(stalled_loop_counts_against_no_session,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(forwards_after_a_refusal_refused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(first_writer_holds_the_session, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(forwards_of_no_session_refused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(claim_of_closed_session_refused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(forwarded_close_refuses_claim, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(fresh_timeout_after_restart, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(reload_counts_from_now, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(no_expiry_before_leadership_is_told,
                                        setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
