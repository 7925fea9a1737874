/* Clients of the session tests' server (session_fixture.c) served
 * through struct proc_client's ops alone, on a carrier of the test's own:
 * proc's handshake, a write's answer after the log and a read's must all
 * leave through them; resumes, closes and replies in their order. */
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
#include "server/replog/replog.h"
#include "server/watch/watch.h"
#include "session_fixture.h"

/* The allocation fail_in counts down to fails (-1: none), in the code
 * linked into this program (libuv's and cmocka's are their own). */
void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
static int fail_in = -1;

static int failing(void)
{
    return fail_in >= 0 && fail_in-- == 0;
}

void *__wrap_malloc(size_t n)
{
    return failing() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
    return failing() ? NULL : __real_calloc(n, size);
}

static void client_without_a_socket(void **state)
{
    struct sfx *f = *state;
    struct carrier k;
    struct tb_connect_req cr = {0, 0, 8000, 0, TB_STR(""), 0, 0};
    struct tb_connect_resp resp;
    struct tb_reply_header h;
    struct tb_path_resp pr;
    struct tb_wbuf body, acl;
    struct tb_rd rd;
    struct tb_str data;

    f->cfg.min_session_timeout = 4000; /* as tickTime 2000 gives */
    f->cfg.max_session_timeout = 40000;
    tb_wbuf_init(&body);
    tb_wbuf_init(&acl);
    carrier_init(f, &k, 7);

    /* The handshake: createSession goes through the log; its answer comes
     * back by the client's id and leaves through send. */
    tb_connect_req_encode(&body, &cr);
    proc_frame(&k.pc, (struct tb_str){(const char *)body.base, body.len});
    body.len = 0;
    assert_int_equal(k.pc.state, CONN_SESSION);
    assert_true(run_until(f, &k.frames, 1));
    rd = nth_frame(&k, 1);
    assert_int_equal(tb_connect_resp_decode(&rd, &resp), 0);
    assert_int_equal(resp.session_id, f->last_session);
    assert_int_equal(resp.timeout, 8000);
    assert_int_equal(k.pc.state, CONN_OPEN);
    assert_ptr_equal(
        tb_map_get(&f->s.conn_by_session, (uint64_t)resp.session_id), &k.pc);
    assert_int_equal(k.resumes, 1);

    /* A write: answered through reply once the log has applied it. */
    tb_put_acl(&acl, &(struct tb_acl){TB_PERM_ALL,
                                      {TB_STR("world"), TB_STR("anyone")}});
    tb_create_req_encode(&body,
                         &(struct tb_create_req){TB_STR("/a"), TB_STR("x"),
                                                 tb_vec_view(&acl, 1), 0});
    request(&k, &body, 1, TB_OP_CREATE);
    assert_int_equal(k.frames, 1);
    assert_true(run_until(f, &k.frames, 2));
    rd = nth_frame(&k, 2);
    assert_int_equal(tb_reply_header_decode(&rd, &h), 0);
    assert_int_equal(h.xid, 1);
    assert_int_equal(h.err, 0);
    assert_true(h.zxid > 0);
    assert_int_equal(tb_path_resp_decode(&rd, &pr), 0);
    assert_true(tb_str_eq(pr.path, TB_STR("/a")));

    /* A read, answered at once, sees it. */
    tb_path_watch_req_encode(&body,
                             &(struct tb_path_watch_req){TB_STR("/a"), 0});
    request(&k, &body, 2, TB_OP_GETDATA);
    assert_int_equal(k.frames, 3);
    rd = nth_frame(&k, 3);
    assert_int_equal(tb_reply_header_decode(&rd, &h), 0);
    assert_int_equal(h.xid, 2);
    assert_int_equal(h.err, 0);
    assert_int_equal(tb_get_BUF(&rd, &data), 0);
    assert_true(tb_str_eq(data, TB_STR("x")));

    /* A request of a missing node: an error reply, header only. */
    tb_path_watch_req_encode(&body,
                             &(struct tb_path_watch_req){TB_STR("/b"), 0});
    request(&k, &body, 3, TB_OP_GETDATA);
    assert_int_equal(k.frames, 4);
    rd = nth_frame(&k, 4);
    assert_int_equal(tb_reply_header_decode(&rd, &h), 0);
    assert_int_equal(h.xid, 3);
    assert_int_equal(h.err, TB_ENONODE);
    assert_true(rd.pos == rd.end);

    /* A malformed request header closes the client through its ops. */
    proc_frame(&k.pc, (struct tb_str){"\0\0", 2});
    assert_int_equal(k.closes, 1);
    assert_true(k.pc.closed);
    assert_null(tb_map_get(&f->s.conn_by_id, k.pc.id));
    assert_null(tb_map_get(&f->s.conn_by_session, (uint64_t)resp.session_id));
    assert_int_equal(k.frames, 4);

    tb_wbuf_free(&k.pc.ids);
    tb_wbuf_free(&k.out);
    tb_wbuf_free(&body);
    tb_wbuf_free(&acl);
}

/* One failed growth of the server's shared encoding buffers fails the
 * request that met it, not every later one: after it, reads are answered
 * and writes logged (they closed the client and failed for good). */
static void scratch_failure_passes(void **state)
{
    struct sfx *f = *state;
    struct carrier k;
    struct tb_wbuf body, acl;
    struct tb_reply_header h;
    struct tb_rd rd;

    carrier_open(f, &k, 11);
    tb_wbuf_init(&body);
    tb_wbuf_init(&acl);
    f->s.scratch.oom = 1; /* as a growth that failed leaves it */
    f->s.scratch2.oom = 1;
    tb_path_watch_req_encode(&body,
                             &(struct tb_path_watch_req){TB_STR("/"), 0});
    request(&k, &body, 1, TB_OP_EXISTS);
    assert_int_equal(k.closes, 0);
    assert_int_equal(k.frames, 2);
    rd = nth_frame(&k, 2);
    assert_int_equal(tb_reply_header_decode(&rd, &h), 0);
    assert_int_equal(h.xid, 1);
    assert_int_equal(h.err, 0);
    f->s.scratch.oom = 1;
    tb_put_acl(&acl, &(struct tb_acl){TB_PERM_ALL,
                                      {TB_STR("world"), TB_STR("anyone")}});
    tb_create_req_encode(&body,
                         &(struct tb_create_req){TB_STR("/s"), TB_STR("x"),
                                                 tb_vec_view(&acl, 1), 0});
    request(&k, &body, 2, TB_OP_CREATE);
    assert_true(run_until(f, &k.frames, 3));
    rd = nth_frame(&k, 3);
    assert_int_equal(tb_reply_header_decode(&rd, &h), 0);
    assert_int_equal(h.xid, 2);
    assert_int_equal(h.err, 0);
    assert_int_equal(k.closes, 0);
    tb_wbuf_free(&body);
    tb_wbuf_free(&acl);
    carrier_free(&k);
}

/* The leader's ticks, a second apart, until one decides the close of
 * session id (it expired); the close is in the log, not applied. */
static void expire_by_tick(struct sfx *f, int64_t id)
{
    uint64_t t;
    int closed = 0;

    for (t = T0 + 1000; !closed && t <= T0 + 20000; t += 1000)
        closed = tick_at(f, t, id);
    assert_true(closed);
}

/* A resume of session r's on a new carrier b (id n) is refused at once, as
 * for an expired session. */
static void resume_refused(struct sfx *f, struct carrier *b, int n,
                           const struct tb_connect_resp *r)
{
    struct tb_connect_resp again;
    struct tb_wbuf body;
    struct tb_rd rd;

    carrier_init(f, b, n);
    tb_wbuf_init(&body);
    tb_connect_req_encode(
        &body,
        &(struct tb_connect_req){0, 0, 8000, r->session_id, r->passwd, 0, 0});
    proc_frame(&b->pc, (struct tb_str){(const char *)body.base, body.len});
    assert_int_equal(b->frames, 1);
    rd = nth_frame(b, 1);
    assert_int_equal(tb_connect_resp_decode(&rd, &again), 0);
    assert_int_equal(again.timeout, 0);
    assert_int_equal(again.session_id, 0);
    tb_wbuf_free(&body);
}

/* A session whose close the leader decided (it expired; the close is not
 * applied yet) is refused to a client that resumes it, as expired: it is
 * no longer the client's, whatever it would read there meanwhile. */
static void closing_session_refused(void **state)
{
    struct sfx *f = *state;
    struct carrier a, b;
    struct tb_connect_resp resp;
    struct tb_rd rd;

    carrier_open(f, &a, 21);
    rd = nth_frame(&a, 1);
    assert_int_equal(tb_connect_resp_decode(&rd, &resp), 0);
    expire_by_tick(f, resp.session_id);
    resume_refused(f, &b, 22, &resp);
    carrier_free(&a);
    carrier_free(&b);
}

/* A session whose client asked for its close (the closeSession in the log,
 * not applied yet) is refused at once, as expired, to a client that
 * resumes it, as ZooKeeper's leader marks a session closing as it
 * prepares its close: it was handed over, then taken away as the close
 * was applied, and the client's next resume told it expired. */
static void closing_by_its_client_refused(void **state)
{
    struct sfx *f = *state;
    struct carrier a, b;
    struct tb_connect_resp resp;
    struct tb_wbuf body;
    struct tb_rd rd;

    carrier_open(f, &a, 23);
    rd = nth_frame(&a, 1);
    assert_int_equal(tb_connect_resp_decode(&rd, &resp), 0);
    tb_wbuf_init(&body);
    request(&a, &body, 1, TB_OP_CLOSESESSION);
    assert_int_equal(a.frames, 1); /* in the log */
    resume_refused(f, &b, 24, &resp);
    assert_int_equal(b.closes, 1);
    assert_closed(f, resp.session_id, 1);
    tb_wbuf_free(&body);
    carrier_free(&a);
    carrier_free(&b);
}

/* A closeSession whose proposal fails (an allocation on its way fails)
 * leaves its session to expire as any other: left closing, it would never
 * be closed, its ephemeral nodes (its locks) kept.  Each allocation the
 * request makes fails in turn; one that let it be proposed closes it. */
static void failed_close_leaves_session_to_expire(void **state)
{
    struct sfx *f = *state;
    struct carrier a;
    struct tb_wbuf body;
    uint64_t t, end;
    int64_t id;
    int k, failed, closes = 0;

    tb_wbuf_init(&body);
    for (k = 0, failed = 1; failed; k++) {
        carrier_open(f, &a, 300 + (uint64_t)k);
        id = a.pc.session_id;
        fail_in = k;
        request(&a, &body, 1, TB_OP_CLOSESESSION);
        failed = fail_in < 0; /* the k-th allocation was made, and failed */
        fail_in = -1;
        if (!tracked(f, id)->closing) {
            assert_true(failed); /* not proposed: expires */
            for (t = f->now + 1000, end = t + 20000;
                 !tick_at(f, t, id) && t < end; t += 1000)
                ;
        }
        assert_true(tracked(f, id)->closing);
        assert_closed(f, id, ++closes);
        carrier_free(&a);
    }
    assert_true(closes >= 2); /* some allocation failed, and one passed */
    tb_wbuf_free(&body);
}

/* A session whose close the leader decided (it expired; the close is not
 * applied yet) is served no more, as ZooKeeper's checks every request's
 * session: reads, pings, watches are answered SessionExpired and set no
 * watch, and the connection stays until the close is applied. */
static void closing_session_served_no_more(void **state)
{
    struct sfx *f = *state;
    struct carrier a;
    struct tb_wbuf body;
    struct tb_rd rd;

    carrier_open(f, &a, 25);
    expire_by_tick(f, a.pc.session_id);
    tb_wbuf_init(&body);
    tb_path_watch_req_encode(&body,
                             &(struct tb_path_watch_req){TB_STR("/"), 1});
    request(&a, &body, 1, TB_OP_GETDATA);
    tb_path_watch_req_encode(&body,
                             &(struct tb_path_watch_req){TB_STR("/x"), 1});
    request(&a, &body, 2, TB_OP_EXISTS);
    tb_add_watch_req_encode(
        &body, &(struct tb_add_watch_req){TB_STR("/"),
                                          TB_ADDWATCH_PERSISTENT_RECURSIVE});
    request(&a, &body, 3, TB_OP_ADDWATCH);
    request(&a, &body, TB_XID_PING, TB_OP_PING);
    assert_int_equal(a.frames, 5);
    rd = reply_at(&a, 2, 1, TB_ESESSIONEXPIRED);
    assert_true(rd.pos == rd.end);
    (void)reply_at(&a, 3, 2, TB_ESESSIONEXPIRED);
    (void)reply_at(&a, 4, 3, TB_ESESSIONEXPIRED);
    (void)reply_at(&a, 5, TB_XID_PING, TB_ESESSIONEXPIRED);
    assert_int_equal(watch_owner_count(&a.pc.watch), 0);
    assert_int_equal(a.closes, 0);
    assert_closed(f, a.pc.session_id, 1);
    assert_int_equal(a.closes, 1); /* as the close is applied */
    tb_wbuf_free(&body);
    carrier_free(&a);
}

/* A request refused as its session is closing keeps its turn: sent after
 * a write still in the log, its answer follows the write's. */
static void closing_refusal_keeps_its_turn(void **state)
{
    struct sfx *f = *state;
    struct carrier a;
    struct tb_wbuf body, acl;

    tb_wbuf_init(&body);
    tb_wbuf_init(&acl);
    tb_put_acl(&acl, &(struct tb_acl){TB_PERM_ALL,
                                      {TB_STR("world"), TB_STR("anyone")}});
    carrier_open(f, &a, 26);
    a.draining = 1;
    tb_create_req_encode(&body,
                         &(struct tb_create_req){TB_STR("/k"), TB_STR("x"),
                                                 tb_vec_view(&acl, 1), 0});
    request(&a, &body, 1, TB_OP_CREATE); /* in the log */
    expire_by_tick(f, a.pc.session_id);
    tb_path_watch_req_encode(&body,
                             &(struct tb_path_watch_req){TB_STR("/"), 1});
    request(&a, &body, 2, TB_OP_GETDATA);
    assert_int_equal(a.frames, 1);
    assert_closed(f, a.pc.session_id, 1);
    assert_int_equal(a.frames, 3);
    (void)reply_at(&a, 2, 1, 0);
    (void)reply_at(&a, 3, 2, TB_ESESSIONEXPIRED);
    assert_int_equal(a.closing, 1);
    tb_wbuf_free(&body);
    tb_wbuf_free(&acl);
    carrier_free(&a);
}

/* An expired session's connection, closing while its client reads slowly,
 * is told of no more changes: its watches go as its session closes, so
 * its output drains and it closes (a stream of events kept it open). */
static void expired_session_watches_dropped(void **state)
{
    struct sfx *f = *state;
    struct carrier a;
    struct tb_connect_resp resp;
    struct tb_wbuf body;
    struct tb_rd rd;

    carrier_open(f, &a, 41);
    a.draining = 1;
    rd = nth_frame(&a, 1);
    assert_int_equal(tb_connect_resp_decode(&rd, &resp), 0);
    tb_wbuf_init(&body);
    tb_path_watch_req_encode(&body,
                             &(struct tb_path_watch_req){TB_STR("/"), 1});
    request(&a, &body, 1, TB_OP_GETDATA);
    assert_int_equal(watch_owner_count(&a.pc.watch), 1);
    expire_by_tick(f, resp.session_id);
    assert_closed(f, resp.session_id, 1);
    assert_int_equal(a.closing, 1);
    assert_false(a.pc.closed); /* still draining */
    assert_int_equal(watch_owner_count(&a.pc.watch), 0);
    tb_wbuf_free(&body);
    carrier_free(&a);
}

/* A session closed by a txn from elsewhere (on a follower: the leader's
 * expiry, which it did not know of), its client's write logged after the
 * close and a read queued behind that write: once the close is applied,
 * while the connection's output drains, it is sent nothing more.  Before,
 * the write's SessionExpired went out, then the read was served (with
 * success) for a session already gone.  ZooKeeper closes the connection
 * as the close commits. */
static void nothing_sent_once_session_closed(void **state)
{
    struct sfx *f = *state;
    struct carrier a;
    struct tb_wbuf body, acl, txn;

    tb_wbuf_init(&body);
    tb_wbuf_init(&acl);
    tb_wbuf_init(&txn);
    tb_put_acl(&acl, &(struct tb_acl){TB_PERM_ALL,
                                      {TB_STR("world"), TB_STR("anyone")}});
    carrier_open(f, &a, 43);
    a.draining = 1;
    tb_txn_encode(&txn, &(struct tb_txn){.type = TB_OP_CLOSESESSION,
                                         .session = a.pc.session_id,
                                         .body = TB_STR("")});
    assert_int_equal(replog_propose(f->s.log, txn.base, txn.len, NULL, NULL),
                     0);
    tb_create_req_encode(&body,
                         &(struct tb_create_req){TB_STR("/g"), TB_STR("x"),
                                                 tb_vec_view(&acl, 1), 0});
    request(&a, &body, 1, TB_OP_CREATE); /* logged after the close */
    tb_path_watch_req_encode(&body,
                             &(struct tb_path_watch_req){TB_STR("/"), 0});
    request(&a, &body, 2, TB_OP_GETDATA); /* waits for the create */
    assert_int_equal(a.frames, 1);
    (void)create_session(f, 8000); /* logged last: all before are applied */
    assert_int_equal(f->closed, 1);
    assert_int_equal(a.closing, 1);
    assert_int_equal(a.frames, 1);
    assert_null(tree_find(fsm_tree(f->s.fsm), TB_STR("/g")));
    carrier_free(&a);
    tb_wbuf_free(&txn);
    tb_wbuf_free(&body);
    tb_wbuf_free(&acl);
}

/* A read queued behind a write, the client closing before the write is
 * applied (a refused login came meanwhile), is not served, and sets no
 * watch: a closing client is sent nothing more, nor told of a change, so
 * its output drains and it closes. */
static void closing_client_sets_no_watch(void **state)
{
    struct sfx *f = *state;
    struct carrier a;
    struct tb_wbuf body, acl;

    tb_wbuf_init(&body);
    tb_wbuf_init(&acl);
    tb_put_acl(&acl, &(struct tb_acl){TB_PERM_ALL,
                                      {TB_STR("world"), TB_STR("anyone")}});
    carrier_open(f, &a, 42);
    a.draining = 1;
    tb_create_req_encode(&body,
                         &(struct tb_create_req){TB_STR("/w"), TB_STR("x"),
                                                 tb_vec_view(&acl, 1), 0});
    request(&a, &body, 1, TB_OP_CREATE);
    tb_add_watch_req_encode(
        &body, &(struct tb_add_watch_req){TB_STR("/"),
                                          TB_ADDWATCH_PERSISTENT_RECURSIVE});
    request(&a, &body, 2, TB_OP_ADDWATCH); /* queued behind the create */
    tb_auth_req_encode(&body,
                       &(struct tb_auth_req){0, TB_STR("nosuch"), TB_STR("x")});
    request(&a, &body, -4, TB_OP_AUTH); /* refused: the client is closing */
    assert_int_equal(a.closing, 1);
    assert_int_equal(a.frames, 2); /* the login's refusal */
    (void)create_session(f, 8000); /* logged last: the create is applied */
    assert_non_null(tree_find(fsm_tree(f->s.fsm), TB_STR("/w")));
    assert_int_equal(a.frames, 2);
    assert_int_equal(watch_owner_count(&a.pc.watch), 0);
    carrier_free(&a);
    tb_wbuf_free(&body);
    tb_wbuf_free(&acl);
}

/* A watch the server cannot keep (an allocation fails) is never answered
 * as set: the client is closed instead, and sets it again on its next
 * connection.  Each allocation a watching exists, getChildren and addWatch
 * make fails in turn. */
static void unkept_watch_closes(void **state)
{
    static const int32_t ops[] = {TB_OP_EXISTS, TB_OP_GETCHILDREN2,
                                  TB_OP_ADDWATCH};
    struct sfx *f = *state;
    struct carrier a;
    struct tb_reply_header h;
    struct tb_wbuf body;
    struct tb_rd rd;
    const char *path;
    int k, op, closed = 0, failed;

    tb_wbuf_init(&body);
    for (op = 0; op < 3; op++)
        for (k = 0, failed = 1; failed; k++) {
            carrier_open(f, &a, 100 + (uint64_t)(op * 100 + k));
            path = op == 1 ? "/" : "/w";
            body.len = 0;
            if (ops[op] == TB_OP_ADDWATCH) {
                tb_put_STR(&body, tb_str_c(path));
                tb_put_I32(&body, TB_ADDWATCH_PERSISTENT_RECURSIVE);
            } else {
                tb_path_watch_req_encode(
                    &body, &(struct tb_path_watch_req){tb_str_c(path), 1});
            }
            fail_in = k;
            request(&a, &body, 1, ops[op]);
            failed = fail_in < 0; /* the k-th allocation was made, and failed */
            fail_in = -1;
            if (a.pc.closed) {
                closed++;
            } else {
                assert_int_equal(a.frames, 2);
                rd = nth_frame(&a, 2);
                assert_int_equal(tb_reply_header_decode(&rd, &h), 0);
                assert_true(h.err == 0 || h.err == TB_ENONODE);
                assert_int_equal(watch_owner_count(&a.pc.watch), 1);
                a.pc.ops->close(&a.pc);
            }
            carrier_free(&a);
        }
    assert_true(closed >= 3); /* each kind of request met a failure */
    tb_wbuf_free(&body);
}

/* A session a follower revalidated through a barrier, taken at once once
 * the barrier is back (this server leads by then): the client's requests
 * held meanwhile are read on (they were held for good before). */
static void revalidated_resume_reads_on(void **state)
{
    struct sfx *f = *state;
    struct carrier a, b;
    struct tb_connect_resp resp;
    struct tb_rd rd;

    carrier_open(f, &a, 31);
    rd = nth_frame(&a, 1);
    assert_int_equal(tb_connect_resp_decode(&rd, &resp), 0);
    carrier_init(f, &b, 32);
    b.pc.session_id = resp.session_id;
    memcpy(b.pc.passwd, resp.passwd.ptr, 16);
    b.pc.timeout_ms = 8000;
    b.pc.revalidating = 1;
    b.pc.state = CONN_SESSION; /* as the barrier left it */
    session_revalidated(&b.pc);
    assert_int_equal(b.pc.state, CONN_OPEN);
    assert_int_equal(b.frames, 1); /* the ConnectResponse */
    assert_int_equal(b.resumes, 1);
    carrier_free(&a);
    carrier_free(&b);
}

/* Connections waiting for their claim of a session to be answered are
 * in no map: a client that came back on a newer one while an older one
 * waited has both claims answered, in any order.  The newest connection
 * keeps the session, and the others are closed: else the older one,
 * attached last and then gone, took the session's entry with it, and the
 * session's close never reached the connection left open on it. */
static void latest_claim_keeps_the_session(void **state)
{
    struct sfx *f = *state;
    struct carrier a, b, c;
    struct tb_connect_resp resp;
    struct tb_rd rd;

    carrier_open(f, &a, 41);
    rd = nth_frame(&a, 1);
    assert_int_equal(tb_connect_resp_decode(&rd, &resp), 0);
    carrier_init(f, &b, 42);
    carrier_init(f, &c, 43);
    b.pc.session_id = c.pc.session_id = resp.session_id;
    b.pc.timeout_ms = c.pc.timeout_ms = 8000;
    b.pc.state = c.pc.state = CONN_SESSION; /* their claims sent */
    session_claimed(&c.pc);
    assert_int_equal(c.pc.state, CONN_OPEN);
    assert_int_equal(a.closes, 1); /* the session moved */
    session_claimed(&b.pc);        /* older than c: answered last */
    assert_int_equal(b.closes, 1);
    assert_int_equal(b.frames, 0);
    assert_ptr_equal(
        tb_map_get(&f->s.conn_by_session, (uint64_t)resp.session_id), &c.pc);
    assert_int_equal(c.closes, 0);
    carrier_free(&a);
    carrier_free(&b);
    carrier_free(&c);
}

/* A session resumed is told the timeout it was created with, which the
 * leaders count from, not the one this member negotiates for what the
 * client asks now (members' limits may differ). */
static void resumed_with_its_own_timeout(void **state)
{
    struct sfx *f = *state;
    struct carrier a, b;
    struct tb_connect_resp resp;
    struct tb_rd rd;

    carrier_open(f, &a, 51); /* 8000 ms */
    rd = nth_frame(&a, 1);
    assert_int_equal(tb_connect_resp_decode(&rd, &resp), 0);
    assert_int_equal(resp.timeout, 8000);
    carrier_init(f, &b, 52);
    b.pc.session_id = resp.session_id;
    b.pc.timeout_ms = 30000; /* negotiated for a new ask */
    b.pc.state = CONN_SESSION;
    session_claimed(&b.pc);
    rd = nth_frame(&b, 1);
    assert_int_equal(tb_connect_resp_decode(&rd, &resp), 0);
    assert_int_equal(resp.timeout, 8000);
    assert_int_equal(b.pc.timeout_ms, 8000);
    assert_int_equal(tracked(f, resp.session_id)->timeout_ms, 8000);
    carrier_free(&a);
    carrier_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(client_without_a_socket, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(scratch_failure_passes, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(closing_session_refused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(closing_by_its_client_refused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(failed_close_leaves_session_to_expire,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(closing_session_served_no_more, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(closing_refusal_keeps_its_turn, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(expired_session_watches_dropped, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(unkept_watch_closes, setup, teardown),
        cmocka_unit_test_setup_teardown(nothing_sent_once_session_closed, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(closing_client_sets_no_watch, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(revalidated_resume_reads_on, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(latest_claim_keeps_the_session, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(resumed_with_its_own_timeout, setup,
                                        teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
