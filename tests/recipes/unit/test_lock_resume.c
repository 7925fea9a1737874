/* What a lock holder is told across a reconnect, against the client's scripted
 * server (tests/unit/client_fixture.c: a socketpair and a fake clock, loop
 * mode, states forwarded to the recipes): after a reconnect within the session
 * the holder stays SUSPENDED until it has seen its node still there and still
 * its own, and hears LOST if the node went meanwhile (deleted, or taken by
 * another); a read-only server never makes it HELD.  A non-fair node
 * replaced by another client's, seen when the own-node watch is set again
 * after a data change, is a lost lock, not a new token; seen right after
 * the create, it is no hold at all.  A non-fair create made again after
 * a lost reply, refused because the lost one was applied meanwhile, reads
 * PATH and holds it as its own.  A multi-lock granted while one of its
 * members still has to look is SUSPENDED until that member has looked. */
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
#define OTHER 0x88   /* another client's */
#define TOKEN 100    /* our node's czxid */

/* The lock states the holder was told, in order. */
struct states {
    int n;
    int v[16];
};

static void on_lock_state(int state, int64_t token, void *data)
{
    struct states *s = data;

    (void)token;
    if (s->n < 16)
        s->v[s->n++] = state;
}

struct acquired {
    int calls, rc;
    int64_t token;
};

static void on_acquired(int rc, int64_t token, void *data)
{
    struct acquired *a = data;

    a->calls++;
    a->rc = rc;
    a->token = token;
}

/* ---- the scripted server's side ---- */

/* The replay of watches the client sends first on a reconnect. */
static void expect_setwatches(void)
{
    static uint8_t buf[4096];
    struct tb_rd body;
    struct tb_request_header h = srv_request(buf, sizeof buf, &body);

    assert_true(h.type == TB_OP_SETWATCHES || h.type == TB_OP_SETWATCHES2);
    assert_int_equal(h.xid, TB_XID_SETWATCHES);
}

/* The holder's look at its node after a reconnect, once the replay of
 * watches is read: a sync, answered here after the replay's reply, then
 * an exists, whose xid this returns. */
static int32_t look(struct tb_client *c, const char *node)
{
    struct tb_rd body;
    int32_t xid = rs_expect(TB_OP_SYNC, &body);

    srv_reply(TB_XID_SETWATCHES, 300, 0, NULL);
    rs_reply_sync(xid, node);
    pump(c);
    return rs_expect(TB_OP_EXISTS, &body);
}

/* FINDING's look after a lost create's reply: a sync of `path` first (the
 * server may lag the leader that took the create), answered here, then
 * the read of `type` behind it, whose xid this returns. */
static int32_t expect_find(int type, const char *path)
{
    rs_reply_sync(rs_expect_at(TB_OP_SYNC, path), path);
    return rs_expect(type, NULL);
}

/* The reaper's look at a node whose name others use, before it deletes:
 * a sync of `path` (the server may lag), then the exists. */
static int32_t expect_look(const char *path)
{
    return expect_find(TB_OP_EXISTS, path);
}

/* A getChildren's reply: one name. */
static void reply_child(int32_t xid, const char *name)
{
    rs_reply_names(xid, (const char *const[]){name, NULL}, 0, 0);
}

/* ---- the client's side ---- */

static void close_client(struct tb_client *c, struct tb_mutex *m)
{
    rs_cut(c);
    tb_mutex_free(m);
    tb_client_close(c);
}

static struct tb_mutex *new_lock(struct tb_client *c, int kind,
                                 const char *path, struct states *s)
{
    struct tb_lock_options lo = {0};
    struct tb_mutex *m;

    lo.kind = kind;
    lo.state_cb = on_lock_state;
    lo.data = s;
    assert_int_equal(tb_mutex_new(&m, c, path, &lo), 0);
    return m;
}

static void assert_held(struct tb_mutex *m, const struct acquired *a)
{
    assert_int_equal(a->calls, 1);
    assert_int_equal(a->rc, 0);
    assert_int_equal(a->token, TOKEN);
    assert_int_equal(tb_mutex_state(m), TB_LOCK_HELD);
}

/* A fair lock at /lk, held; its node's path in `node`. */
static struct tb_mutex *hold_fair(struct tb_client *c, struct states *s,
                                  char *node, size_t cap)
{
    struct tb_mutex *m = new_lock(c, TB_LOCK_FAIR, "/lk", s);
    struct acquired a = {0};
    struct tb_create_req cr;
    struct tb_rd body;
    int32_t xid;

    assert_int_equal(tb_mutex_lock(m, -1, on_acquired, &a), 0);
    pump(c);
    xid = rs_expect(TB_OP_CREATE2, &body);
    assert_int_equal(tb_create_req_decode(&body, &cr), 0);
    assert_true(cr.path.len + 11 < cap);
    snprintf(node, cap, "%.*s0000000001", (int)cr.path.len, cr.path.ptr);
    rs_reply_create(xid, node, TOKEN);
    pump(c);
    xid = rs_expect(TB_OP_EXISTS, &body); /* our node, with the watch */
    rs_reply_stat(xid, TOKEN, SID);
    xid = rs_expect(TB_OP_GETCHILDREN, &body);
    reply_child(xid, strrchr(node, '/') + 1);
    pump(c);
    assert_held(m, &a);
    return m;
}

/* A non-fair lock: its node is /nf itself. */
static struct tb_mutex *hold_nonfair(struct tb_client *c, struct states *s)
{
    struct tb_mutex *m = new_lock(c, TB_LOCK_NONFAIR, "/nf", s);
    struct acquired a = {0};
    struct tb_rd body;
    int32_t xid;

    assert_int_equal(tb_mutex_lock(m, -1, on_acquired, &a), 0);
    pump(c);
    xid = rs_expect(TB_OP_CREATE2, &body);
    rs_reply_create(xid, "/nf", TOKEN);
    pump(c);
    xid = rs_expect(TB_OP_EXISTS, &body);
    rs_reply_stat(xid, TOKEN, SID);
    pump(c);
    assert_held(m, &a);
    return m;
}

static void assert_states(const struct states *s, int n, const int *want)
{
    int i;

    for (i = 0; i < s->n && i < n; i++)
        if (s->v[i] != want[i])
            fail_msg("state %d: %s, expected %s", i,
                     tb_lock_state_name(s->v[i]), tb_lock_state_name(want[i]));
    assert_int_equal(s->n, n);
}

/* Reconnected within the session: not HELD before the holder knows its
 * node is still there; it is, so HELD once the look at it is answered. */
static void test_resumed_held_after_look(void **state)
{
    static const int want[] = {TB_LOCK_SUSPENDED, TB_LOCK_HELD};
    struct tb_client *c = rs_open_client(0);
    struct states s = {0};
    char node[256];
    struct tb_mutex *m = hold_fair(c, &s, node, sizeof node);
    int32_t xid;

    (void)state;
    rs_reconnect(c, 0);
    assert_int_equal(tb_client_state(c), TB_SESSION_CONNECTED);
    assert_int_equal(tb_mutex_state(m), TB_LOCK_SUSPENDED);
    assert_states(&s, 1, want);
    expect_setwatches();
    xid = look(c, node); /* after the replay */
    assert_int_equal(tb_mutex_state(m), TB_LOCK_SUSPENDED);
    rs_reply_stat(xid, TOKEN, SID);
    pump(c);
    assert_int_equal(tb_mutex_state(m), TB_LOCK_HELD);
    assert_int_equal(tb_mutex_token(m), TOKEN);
    assert_states(&s, 2, want);
    close_client(c, m);
}

/* The node was deleted while the holder was away (an operator, or a
 * broken lock a waiter then took): SUSPENDED, then LOST, never HELD. */
static void test_resumed_node_deleted(void **state)
{
    static const int want[] = {TB_LOCK_SUSPENDED, TB_LOCK_LOST};
    struct tb_client *c = rs_open_client(0);
    struct states s = {0};
    char node[256];
    struct tb_mutex *m = hold_fair(c, &s, node, sizeof node);
    struct tb_rd body;
    int32_t xid;

    (void)state;
    rs_reconnect(c, 0);
    assert_int_equal(tb_mutex_state(m), TB_LOCK_SUSPENDED);
    expect_setwatches();
    xid = rs_expect(TB_OP_SYNC, &body);
    srv_event(TB_EVENT_DELETED, node); /* the replay's catch-up */
    srv_reply(TB_XID_SETWATCHES, 300, 0, NULL);
    rs_reply_sync(xid, node);
    pump(c);
    assert_int_equal(tb_mutex_state(m), TB_LOCK_LOST);
    assert_false(srv_has_data()); /* decided: no exists */
    assert_states(&s, 2, want);
    close_client(c, m);
}

/* The look alone decides, even if no catch-up event comes. */
static void test_resumed_look_finds_no_node(void **state)
{
    static const int want[] = {TB_LOCK_SUSPENDED, TB_LOCK_LOST};
    struct tb_client *c = rs_open_client(0);
    struct states s = {0};
    char node[256];
    struct tb_mutex *m = hold_fair(c, &s, node, sizeof node);
    int32_t xid;

    (void)state;
    rs_reconnect(c, 0);
    expect_setwatches();
    xid = look(c, node);
    srv_reply(xid, 300, TB_ENONODE, NULL);
    pump(c);
    assert_int_equal(tb_mutex_state(m), TB_LOCK_LOST);
    assert_states(&s, 2, want);
    close_client(c, m);
}

/* A non-fair lock's node was deleted and created again by another client
 * while the holder was away: the path is there, but not ours. */
static void test_resumed_node_taken(void **state)
{
    static const int want[] = {TB_LOCK_SUSPENDED, TB_LOCK_LOST};
    struct tb_client *c = rs_open_client(0);
    struct states s = {0};
    struct tb_mutex *m = hold_nonfair(c, &s);
    int32_t xid;

    (void)state;
    rs_reconnect(c, 0);
    assert_int_equal(tb_mutex_state(m), TB_LOCK_SUSPENDED);
    expect_setwatches();
    xid = look(c, "/nf");
    rs_reply_stat(xid, 250, OTHER);
    pump(c);
    assert_int_equal(tb_mutex_state(m), TB_LOCK_LOST);
    assert_states(&s, 2, want);
    close_client(c, m);
}

/* A read-only server cannot tell the holder it still holds: SUSPENDED
 * there; HELD again only on a read-write server, after the look. */
static void test_resumed_readonly(void **state)
{
    static const int want[] = {TB_LOCK_SUSPENDED, TB_LOCK_HELD};
    struct tb_client *c = rs_open_client(1);
    struct states s = {0};
    char node[256];
    struct tb_mutex *m = hold_fair(c, &s, node, sizeof node);
    int32_t xid;

    (void)state;
    rs_reconnect(c, 1);
    assert_int_equal(tb_client_state(c), TB_SESSION_READONLY);
    assert_int_equal(tb_mutex_state(m), TB_LOCK_SUSPENDED);
    assert_states(&s, 1, want);
    expect_setwatches();
    srv_reply(TB_XID_SETWATCHES, 300, 0, NULL);
    pump(c);
    assert_false(srv_has_data()); /* no look on a read-only server */
    assert_int_equal(tb_mutex_state(m), TB_LOCK_SUSPENDED);
    rs_reconnect(c, 0);
    assert_int_equal(tb_mutex_state(m), TB_LOCK_SUSPENDED);
    expect_setwatches();
    xid = look(c, node);
    rs_reply_stat(xid, TOKEN, SID);
    pump(c);
    assert_int_equal(tb_mutex_state(m), TB_LOCK_HELD);
    assert_states(&s, 2, want);
    close_client(c, m);
}

/* The look's reply was lost with the connection: the next reconnect
 * looks again, and only its answer makes the holder HELD. */
static void test_resumed_look_lost(void **state)
{
    static const int want[] = {TB_LOCK_SUSPENDED, TB_LOCK_HELD};
    struct tb_client *c = rs_open_client(0);
    struct states s = {0};
    char node[256];
    struct tb_mutex *m = hold_fair(c, &s, node, sizeof node);
    struct tb_rd body;
    int32_t xid;

    (void)state;
    rs_reconnect(c, 0);
    expect_setwatches();
    rs_expect(TB_OP_SYNC, &body); /* never answered */
    rs_reconnect(c, 0);
    assert_int_equal(tb_mutex_state(m), TB_LOCK_SUSPENDED);
    expect_setwatches();
    xid = look(c, node);
    rs_reply_stat(xid, TOKEN, SID);
    pump(c);
    assert_int_equal(tb_mutex_state(m), TB_LOCK_HELD);
    assert_states(&s, 2, want);
    close_client(c, m);
}

/* A non-fair holder's node changed (its watch fires NodeDataChanged) and
 * the watch's new exists finds PATH made again by another session in
 * between: the lock is lost; a mere setData on our node keeps it. */
static void test_node_replaced_while_held(void **state)
{
    static const int want[] = {TB_LOCK_LOST};
    struct tb_client *c = rs_open_client(0);
    struct states s = {0};
    struct tb_mutex *m = hold_nonfair(c, &s);
    struct tb_rd body;
    int32_t xid;

    (void)state;
    srv_event(TB_EVENT_DATA_CHANGED, "/nf"); /* a setData on our node */
    pump(c);
    xid = rs_expect(TB_OP_EXISTS, &body);
    rs_reply_stat(xid, TOKEN, SID);
    pump(c);
    assert_int_equal(tb_mutex_state(m), TB_LOCK_HELD);
    assert_states(&s, 0, want);
    srv_event(TB_EVENT_DATA_CHANGED, "/nf"); /* deleted, made again */
    pump(c);
    xid = rs_expect(TB_OP_EXISTS, &body);
    rs_reply_stat(xid, 250, OTHER);
    pump(c);
    assert_int_equal(tb_mutex_state(m), TB_LOCK_LOST);
    assert_int_equal(tb_mutex_token(m), TOKEN);
    assert_states(&s, 1, want);
    close_client(c, m);
}

/* The same by another handle of our own session: its czxid tells. */
static void test_node_replaced_same_session(void **state)
{
    static const int want[] = {TB_LOCK_LOST};
    struct tb_client *c = rs_open_client(0);
    struct states s = {0};
    struct tb_mutex *m = hold_nonfair(c, &s);
    struct tb_rd body;
    int32_t xid;

    (void)state;
    srv_event(TB_EVENT_DATA_CHANGED, "/nf");
    pump(c);
    xid = rs_expect(TB_OP_EXISTS, &body);
    rs_reply_stat(xid, 250, SID);
    pump(c);
    assert_int_equal(tb_mutex_state(m), TB_LOCK_LOST);
    assert_states(&s, 1, want);
    close_client(c, m);
}

/* A non-fair acquisition whose node was deleted and PATH made again by
 * another client between its create and the exists that follows: it does
 * not hold (that node is not ours), it queues behind the new holder. */
static void test_created_node_replaced(void **state)
{
    struct tb_client *c = rs_open_client(0);
    struct states s = {0};
    struct tb_mutex *m = new_lock(c, TB_LOCK_NONFAIR, "/nf", &s);
    struct acquired a = {0};
    struct tb_rd body;
    int32_t xid;

    (void)state;
    assert_int_equal(tb_mutex_lock(m, -1, on_acquired, &a), 0);
    pump(c);
    xid = rs_expect(TB_OP_CREATE2, &body);
    rs_reply_create(xid, "/nf", TOKEN);
    pump(c);
    xid = rs_expect(TB_OP_EXISTS, &body);
    rs_reply_stat(xid, 250, OTHER);
    pump(c);
    assert_int_equal(a.calls, 0);
    xid = rs_expect(TB_OP_REMOVEWATCHES, &body); /* the watch on their node */
    srv_reply(xid, 300, 0, NULL);
    xid = rs_expect(TB_OP_CREATE2, &body); /* the race again */
    srv_reply(xid, 300, TB_ENODEEXISTS, NULL);
    pump(c);
    xid = rs_expect(TB_OP_EXISTS, &body); /* waits for the holder */
    rs_reply_stat(xid, 250, OTHER);
    pump(c);
    assert_int_equal(a.calls, 0);
    assert_int_equal(tb_mutex_state(m), TB_LOCK_ACQUIRING);
    assert_states(&s, 0, NULL);
    close_client(c, m);
}

/* A non-fair create whose reply was lost, looked for on a server that has
 * not applied it yet (getData: NoNode), then applied before the create
 * made again: that one finds PATH there (NodeExists).  PATH is our own
 * node: the engine reads it (our uuid prefix) and holds, rather than
 * wait for its own node to go (forever, or until a timeout that would
 * leave it behind, unreaped, locking everyone out). */
static void test_nonfair_lost_create_exists(void **state)
{
    struct tb_client *c = rs_open_client(0);
    struct states s = {0};
    struct tb_mutex *m = new_lock(c, TB_LOCK_NONFAIR, "/nf", &s);
    struct acquired a = {0};
    struct tb_create_req cr;
    struct tb_rd body;
    char mine[256];
    size_t len;
    int32_t xid;

    (void)state;
    assert_int_equal(tb_mutex_lock(m, -1, on_acquired, &a), 0);
    pump(c);
    (void)rs_expect(TB_OP_CREATE2, &body); /* its reply is lost */
    assert_int_equal(tb_create_req_decode(&body, &cr), 0);
    len = cr.data.len;
    assert_true(len > 3 && len < sizeof mine);
    memcpy(mine, cr.data.ptr, len); /* "_c_<uuid>" + the user's data */
    assert_memory_equal(mine, "_c_", 3);
    rs_reconnect(c, 0);
    xid = expect_find(TB_OP_GETDATA, "/nf"); /* FINDING: was it made? */
    srv_reply(xid, 300, TB_ENONODE, NULL);   /* not yet, here */
    pump(c);
    xid = rs_expect(TB_OP_CREATE2, &body); /* again: the first is in now */
    srv_reply(xid, 301, TB_ENODEEXISTS, NULL);
    pump(c);
    xid = expect_find(TB_OP_GETDATA, "/nf"); /* whose?  not: exists (wait) */
    rs_reply_data(xid, mine, len, TOKEN, SID);
    pump(c);
    xid = rs_expect(TB_OP_EXISTS, &body); /* our node's, with the watch */
    rs_reply_stat(xid, TOKEN, SID);
    pump(c);
    assert_held(m, &a);
    assert_false(srv_has_data());
    close_client(c, m);
}

/* A fair acquisition whose create lost its reply looks for its node in
 * the parent after a sync: the server it came back to may not have
 * applied the create yet, and a look that missed it would leave the node,
 * made later, an orphan queued for good once the acquisition gave up. */
static void test_fair_lost_create_synced(void **state)
{
    struct tb_client *c = rs_open_client(0);
    struct states s = {0};
    struct tb_mutex *m = new_lock(c, TB_LOCK_FAIR, "/lk", &s);
    struct acquired a = {0};
    struct tb_create_req cr;
    struct tb_rd body;
    char node[256];
    int32_t xid;

    (void)state;
    assert_int_equal(tb_mutex_lock(m, -1, on_acquired, &a), 0);
    pump(c);
    (void)rs_expect(TB_OP_CREATE2, &body); /* its reply is lost */
    assert_int_equal(tb_create_req_decode(&body, &cr), 0);
    assert_true(cr.path.len + 11 < sizeof node);
    snprintf(node, sizeof node, "%.*s0000000001", (int)cr.path.len,
             cr.path.ptr);
    rs_reconnect(c, 0);
    xid = expect_find(TB_OP_GETCHILDREN, "/lk");
    reply_child(xid, strrchr(node, '/') + 1); /* made: found */
    pump(c);
    xid = rs_expect(TB_OP_EXISTS, &body);
    rs_reply_stat(xid, TOKEN, SID);
    xid = rs_expect(TB_OP_GETCHILDREN, &body);
    reply_child(xid, strrchr(node, '/') + 1);
    pump(c);
    assert_held(m, &a);
    close_client(c, m);
}

/* A non-fair acquisition given up, its node made, and the connection lost
 * under the reaper's look at that node: the give-up is told then, as it
 * was when the reaper's first request was a delete, not once the
 * connection is back (the look is sent again then). */
static void test_nonfair_giveup_while_down(void **state)
{
    struct tb_client *c = rs_open_client(0);
    struct states s = {0};
    struct tb_mutex *m = new_lock(c, TB_LOCK_NONFAIR, "/nf", &s);
    struct acquired a = {0};
    struct tb_rd body;
    int32_t xid;

    (void)state;
    assert_int_equal(tb_mutex_lock(m, -1, on_acquired, &a), 0);
    pump(c);
    xid = rs_expect(TB_OP_CREATE2, &body);
    rs_reply_create(xid, "/nf", TOKEN);
    pump(c);
    (void)rs_expect(TB_OP_EXISTS, &body); /* never answered */
    assert_int_equal(tb_mutex_cancel(m), 0);
    pump(c);
    /* the own-node watch, which that exists sets if it succeeds */
    (void)rs_expect(TB_OP_REMOVEWATCHES, &body);
    (void)rs_expect_at(TB_OP_SYNC, "/nf"); /* the reaper's look */
    (void)rs_expect_at(TB_OP_EXISTS, "/nf");
    assert_int_equal(a.calls, 0);
    close(server_fd);
    server_fd = -1;
    refuse = 1;
    pump(c);
    assert_int_equal(a.calls, 1);
    assert_int_equal(a.rc, TB_ECANCELED);
    close_client(c, m);
}

/* A non-fair holder's node was deleted by someone else and PATH made
 * again by another client before the holder heard of it: its release
 * looks before it deletes, leaves their node alone and reports the lock
 * lost.  A plain delete of PATH would end the new holder's hold while it
 * still works, and let a third client in beside it. */
static void test_nonfair_release_spares_next_holder(void **state)
{
    struct tb_client *c = rs_open_client(0);
    struct states s = {0};
    struct tb_mutex *m = hold_nonfair(c, &s);
    struct rs_done r = {0};
    struct tb_rd body;
    int32_t xid;

    (void)state;
    assert_int_equal(tb_mutex_unlock(m, rs_done_cb, &r), 0);
    pump(c);
    xid = rs_expect(TB_OP_REMOVEWATCHES, &body); /* our own-node watch */
    srv_reply(xid, 300, 0, NULL);
    xid = expect_look("/nf"); /* the look, before any delete */
    rs_reply_stat(xid, 250, OTHER);
    pump(c);
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.rc, TB_ELOCKLOST);
    assert_false(srv_has_data()); /* no delete */
    close_client(c, m);
}

/* The same release, PATH still ours: deleted at the version seen. */
static void test_nonfair_release_deletes_ours(void **state)
{
    struct tb_client *c = rs_open_client(0);
    struct states s = {0};
    struct tb_mutex *m = hold_nonfair(c, &s);
    struct rs_done r = {0};
    struct tb_rd body;
    int32_t xid;

    (void)state;
    assert_int_equal(tb_mutex_unlock(m, rs_done_cb, &r), 0);
    pump(c);
    xid = rs_expect(TB_OP_REMOVEWATCHES, &body);
    srv_reply(xid, 300, 0, NULL);
    xid = expect_look("/nf");
    rs_reply_stat(xid, TOKEN, SID);
    pump(c);
    xid = rs_expect(TB_OP_DELETE, &body);
    srv_reply(xid, 301, 0, NULL);
    pump(c);
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.rc, 0);
    close_client(c, m);
}

/* The holder's own-node watch, set again after a data change, lost its
 * reply with the connection: it is set once more on the next one, so a
 * later deletion of the node still tells the holder its lock is lost. */
static void test_own_watch_rearmed_after_loss(void **state)
{
    static const int want[] = {TB_LOCK_SUSPENDED, TB_LOCK_HELD, TB_LOCK_LOST};
    struct tb_client *c = rs_open_client(0);
    struct states s = {0};
    struct tb_mutex *m = hold_nonfair(c, &s);
    struct tb_rd body;
    int32_t xid, look_xid;

    (void)state;
    srv_event(TB_EVENT_DATA_CHANGED, "/nf");
    pump(c);
    (void)rs_expect(TB_OP_EXISTS, &body); /* the re-arm: never answered */
    rs_reconnect(c, 0);                   /* no watch to replay: none was set */
    xid = rs_expect(TB_OP_EXISTS, &body); /* the re-arm, sent again */
    rs_reply_stat(xid, TOKEN, SID);
    look_xid = rs_expect(TB_OP_SYNC, &body);
    rs_reply_sync(look_xid, "/nf");
    pump(c);
    look_xid = rs_expect(TB_OP_EXISTS, &body);
    rs_reply_stat(look_xid, TOKEN, SID);
    pump(c);
    assert_int_equal(tb_mutex_state(m), TB_LOCK_HELD);
    srv_event(TB_EVENT_DELETED, "/nf");
    pump(c);
    assert_int_equal(tb_mutex_state(m), TB_LOCK_LOST);
    assert_states(&s, 3, want);
    close_client(c, m);
}

/* The holder's own-node watch, set again after a data change, refused
 * (the node's ACL changed with its data, the session ended): nothing
 * would tell the holder of a deletion, so its lock counts as lost at
 * once.  Freed so, it still deletes its node, which would block every
 * other client until the session's end. */
static void test_own_watch_refused(void **state)
{
    static const int want[] = {TB_LOCK_LOST};
    struct tb_client *c = rs_open_client(0);
    struct states s = {0};
    char node[256];
    struct tb_mutex *m = hold_fair(c, &s, node, sizeof node);
    struct tb_rd body;
    int32_t xid;

    (void)state;
    srv_event(TB_EVENT_DATA_CHANGED, node);
    pump(c);
    xid = rs_expect(TB_OP_EXISTS, &body); /* the re-arm */
    srv_reply(xid, 300, TB_ENOAUTH, NULL);
    pump(c);
    assert_int_equal(tb_mutex_state(m), TB_LOCK_LOST);
    assert_states(&s, 1, want);
    tb_mutex_free(m);
    pump(c);
    (void)rs_expect_at(TB_OP_DELETE, node); /* at once: a unique name */
    rs_close(c);
}

/* A reentrant acquire still waiting for its callback when the handle is
 * freed (the hold released with it) is cancelled, not told it holds. */
static void test_reentry_cancelled_by_free(void **state)
{
    struct tb_client *c = rs_open_client(0);
    struct states s = {0};
    char node[256];
    struct tb_mutex *m = hold_fair(c, &s, node, sizeof node);
    struct acquired a = {0};
    struct tb_rd body;
    int32_t xid;

    (void)state;
    assert_int_equal(tb_mutex_lock(m, -1, on_acquired, &a), 0);
    pump(c);
    xid = rs_expect(TB_OP_EXISTS, &body); /* the callback's ride */
    tb_mutex_free(m);
    pump(c);
    rs_reply_stat(xid, TOKEN, SID);
    pump(c);
    assert_int_equal(a.calls, 1);
    assert_int_equal(a.rc, TB_ECANCELED);
    assert_int_equal(a.token, 0);
    rs_close(c);
}

static void on_ml_done(int rc, void *data)
{
    struct acquired *a = data;

    a->calls++;
    a->rc = rc;
}

#define OTHER_NODE "_c_00000000-0000-0000-0000-000000000000-lock-0000000001"

/* A multi-lock on /a and /b holds /a and waits for /b behind another
 * client's node.  The connection breaks and comes back: /a's holder looks
 * at its node again (a sync, then an exists), and /b's predecessor went
 * meanwhile.  /b is granted before /a's exists is answered: the call
 * succeeds, and the multi-lock is SUSPENDED, told so, until /a's node is
 * seen still its own (HELD). */
static void test_multilock_granted_suspended(void **state)
{
    static const int want[] = {TB_LOCK_SUSPENDED, TB_LOCK_HELD};
    static const char *const paths[] = {"/a", "/b"};
    struct tb_client *c = rs_open_client(0);
    struct states s = {0};
    struct tb_lock_options lo = {.state_cb = on_lock_state, .data = &s};
    struct tb_multilock *ml;
    struct acquired a = {0};
    struct tb_create_req cr;
    struct tb_rd body;
    char na[256], nb[256];
    int32_t xid, sync, look_a;

    (void)state;
    assert_int_equal(tb_multilock_new(&ml, c, paths, 2, &lo), 0);
    assert_int_equal(tb_multilock_lock(ml, -1, on_ml_done, &a), 0);
    pump(c);
    xid = rs_expect(TB_OP_CREATE2, &body);
    assert_int_equal(tb_create_req_decode(&body, &cr), 0);
    snprintf(na, sizeof na, "%.*s0000000001", (int)cr.path.len, cr.path.ptr);
    rs_reply_create(xid, na, TOKEN);
    pump(c);
    rs_reply_stat(rs_expect_at(TB_OP_EXISTS, na), TOKEN, SID);
    reply_child(rs_expect(TB_OP_GETCHILDREN, NULL), strrchr(na, '/') + 1);
    pump(c);
    xid = rs_expect(TB_OP_CREATE2, &body);
    assert_int_equal(tb_create_req_decode(&body, &cr), 0);
    snprintf(nb, sizeof nb, "%.*s0000000002", (int)cr.path.len, cr.path.ptr);
    rs_reply_create(xid, nb, TOKEN + 1);
    pump(c);
    rs_reply_stat(rs_expect_at(TB_OP_EXISTS, nb), TOKEN + 1, SID);
    rs_reply_names(
        rs_expect(TB_OP_GETCHILDREN, NULL),
        (const char *const[]){OTHER_NODE, strrchr(nb, '/') + 1, NULL}, 0, 0);
    pump(c);
    rs_reply_stat(rs_expect_at(TB_OP_EXISTS, "/b/" OTHER_NODE), TOKEN - 1,
                  OTHER);
    pump(c);
    assert_false(srv_has_data());
    rs_reconnect(c, 0);
    expect_setwatches();
    sync = rs_expect(TB_OP_SYNC, NULL);            /* /a's look at its node */
    srv_event(TB_EVENT_DELETED, "/b/" OTHER_NODE); /* the replay's */
    srv_reply(TB_XID_SETWATCHES, 300, 0, NULL);
    pump(c);
    rs_reply_sync(sync, na);
    pump(c);
    /* /b's look after its predecessor went, then /a's exists. */
    xid = rs_expect_at(TB_OP_GETCHILDREN, "/b");
    look_a = rs_expect_at(TB_OP_EXISTS, na);
    reply_child(xid, strrchr(nb, '/') + 1);
    pump(c);
    assert_int_equal(a.calls, 1);
    assert_int_equal(a.rc, 0);
    assert_int_equal(tb_multilock_state(ml), TB_LOCK_SUSPENDED);
    assert_states(&s, 1, want);
    rs_reply_stat(look_a, TOKEN, SID);
    pump(c);
    assert_int_equal(tb_multilock_state(ml), TB_LOCK_HELD);
    assert_states(&s, 2, want);
    rs_cut(c);
    tb_multilock_free(ml);
    tb_client_close(c);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_resumed_held_after_look, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_resumed_node_deleted, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_resumed_look_finds_no_node, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_resumed_node_taken, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_resumed_readonly, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resumed_look_lost, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_node_replaced_while_held, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_node_replaced_same_session, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_created_node_replaced, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_nonfair_lost_create_exists, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_nonfair_giveup_while_down, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_fair_lost_create_synced, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_nonfair_release_spares_next_holder,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_nonfair_release_deletes_ours,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_own_watch_rearmed_after_loss,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_own_watch_refused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_reentry_cancelled_by_free, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_multilock_granted_suspended, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
