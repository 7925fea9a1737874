/* Unit tests of the client core against a scripted server on a socketpair,
 * with a fake clock: the bytes of the handshake and of requests, replies
 * and events reaching the right callbacks, reconnects that replay auth and
 * watches, pings and the read timeout, expiry, close; the names of event
 * types.  Servers and sessions across connections (timeouts granted,
 * backoff, read-only servers, resumption, setWatches): test_client_session.c.
 * What single operations send: test_client_ops.c; host names
 * looked up: test_client_lookup.c; allocation failures:
 * test_client_heap.c; the library's own I/O thread: test_client_thread.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "client_fixture.h"

static void test_hosts(void **state)
{
    struct tb_options o = {0};
    struct tb_client *c;
    size_t i;
    int seen = 0;

    (void)state;
    o.hosts = "a:1,b,[::1]:3/app/x";
    assert_int_equal(tb_client_init(&c, &o), 0);
    assert_int_equal(c->nhosts, 3);
    assert_string_equal(c->chroot, "/app/x");
    for (i = 0; i < 3; i++) {
        if (strcmp(c->hosts[i].name, "a") == 0)
            seen |= 1, assert_string_equal(c->hosts[i].port, "1");
        if (strcmp(c->hosts[i].name, "b") == 0)
            seen |= 2, assert_string_equal(c->hosts[i].port, "2181");
        if (strcmp(c->hosts[i].name, "::1") == 0)
            seen |= 4, assert_string_equal(c->hosts[i].port, "3");
    }
    assert_int_equal(seen, 7);
    tb_client_close(c);
    o.hosts = "a:1/";
    assert_int_equal(tb_client_init(&c, &o), 0);
    assert_null(c->chroot);
    tb_client_close(c);
    /* each entry trimmed, as Java's client does */
    o.hosts = " a ,b:2 ";
    assert_int_equal(tb_client_init(&c, &o), 0);
    assert_int_equal(c->nhosts, 2);
    for (i = 0; i < 2; i++)
        assert_true(strcmp(c->hosts[i].name, "a") == 0 ||
                    strcmp(c->hosts[i].name, "b") == 0);
    tb_client_close(c);
    static const char *bad[] = {"",        "a:",     "a:x",      "a:1/bad/",
                                "[::1",    "a:1,,b", "a:123456", "a:70000",
                                "a:65536", NULL};
    for (i = 0; bad[i]; i++) {
        o.hosts = bad[i];
        assert_int_equal(tb_client_init(&c, &o), TB_EINVAL);
    }
}

static void test_handshake_and_get(void **state)
{
    struct tb_client *c = make("h:1/root", 6000);
    uint8_t buf[512];
    struct tb_rd body;
    struct tb_request_header h;
    struct tb_path_watch_req rq;
    struct tb_get_data_resp rs = {TB_STR("val"), {0}};
    struct tb_wbuf w;
    struct rec r = {0}, wr = {0};

    (void)state;
    assert_int_equal(tb_client_state(c), TB_SESSION_CONNECTING);
    /* submitted before connecting: queued, sent after the handshake */
    assert_int_equal(tb_get_data(c, "/n", rec_watch, &wr, rec_data, &r), 0);
    pump(c);
    srv_handshake(0x42, 5000);
    pump(c);
    assert_int_equal(tb_client_state(c), TB_SESSION_CONNECTED);
    assert_int_equal(tb_client_session(c, NULL), 0x42);
    assert_int_equal(tb_client_session_timeout(c), 5000);
    h = srv_request(buf, sizeof buf, &body);
    assert_int_equal(h.type, TB_OP_GETDATA);
    assert_true(h.xid > 0);
    assert_int_equal(tb_path_watch_req_decode(&body, &rq), 0);
    assert_true(tb_str_eq(rq.path, TB_STR("/root/n"))); /* chroot added */
    assert_int_equal(rq.watch, 1);
    tb_wbuf_init(&w);
    tb_get_data_resp_encode(&w, &rs);
    srv_reply(h.xid, 7, 0, &w);
    tb_wbuf_free(&w);
    pump(c);
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.value, "val");
    assert_int_equal(c->last_zxid, 7);
    assert_int_equal(wr.events, 0);
    srv_event(TB_EVENT_DATA_CHANGED, "/root/n");
    pump(c);
    assert_int_equal(wr.events, 1);
    assert_int_equal(wr.ev_type, TB_EVENT_DATA_CHANGED);
    assert_string_equal(wr.ev_path, "/n"); /* chroot stripped */
    assert_int_equal(wr.ev_final, 1);
    srv_event(TB_EVENT_DATA_CHANGED, "/root/n"); /* one-shot: consumed */
    pump(c);
    assert_int_equal(wr.events, 1);
    {
        /* larger than the server takes: refused here, never sent */
        char *big = calloc(1, 1 << 20);
        assert_int_equal(tb_set_data(c, "/n", big, 1 << 20, -1, rec_stat,
                                     &r),
                         TB_ETOOBIG);
        free(big);
        assert_int_equal(tb_create(c, "/x", NULL, 0, NULL, 7, 0, NULL, NULL),
                         TB_EBADARGUMENTS);
        assert_int_equal(tb_create(c, "/x", NULL, 0, NULL, TB_CONTAINER, 5,
                                   NULL, NULL),
                         TB_EBADARGUMENTS);
        assert_int_equal(tb_get_data(c, "/a/", NULL, NULL, rec_data, &r),
                         TB_EBADARGUMENTS);
        assert_int_equal(r.calls, 1);
    }
    close_replied(c);
}

/* The server's end takes `n` bytes, the client writing meanwhile. */
static void srv_take(struct tb_client *c, uint8_t *buf, size_t n)
{
    size_t got = 0;
    ssize_t k;
    int waits = 0;

    while (got < n) {
        k = recv(server_fd, buf + got, n - got, MSG_DONTWAIT);
        if (k > 0) {
            got += (size_t)k;
            continue;
        }
        assert_true(k < 0 && errno == EAGAIN && ++waits < 1000);
        pump(c);
    }
}

/* Requests coming all the while to a server that reads one as each comes,
 * behind a backlog: what the client holds is what is unsent, not all it
 * ever sent (its buffer was emptied only when it drained whole, which a
 * backlog never does). */
static void test_sent_bytes_let_go(void **state)
{
    struct tb_client *c = connected("h:1", 0x42);
    static uint8_t data[65536], buf[2 * 65536];
    int i;

    (void)state;
    for (i = 0; i < 10; i++) /* more than the socket holds */
        assert_int_equal(
            tb_set_data(c, "/n", data, sizeof data, -1, NULL, NULL), 0);
    pump(c);
    for (i = 0; i < 300; i++) {
        assert_true(c->out.len > c->out_off); /* never drained whole */
        assert_int_equal(
            tb_set_data(c, "/n", data, sizeof data, -1, NULL, NULL), 0);
        srv_take(c, buf, 4); /* one request */
        srv_take(c, buf, tb_load_be32(buf));
    }
    /* About 19 MiB sent meanwhile, some 300 KiB unsent at any time. */
    assert_true(c->out.cap < 4 << 20);
    close_replied(c);
}

static void test_failed_call_sets_no_watch(void **state)
{
    struct tb_client *c = connected("h:1", 1);
    uint8_t buf[512];
    struct tb_rd body;
    struct tb_request_header h;
    struct rec r = {0}, wr = {0}, er = {0}, e2 = {0};

    (void)state;
    assert_int_equal(tb_get_data(c, "/a", rec_watch, &wr, rec_data, &r), 0);
    assert_int_equal(tb_exists(c, "/b", rec_watch, &er, rec_stat, &e2), 0);
    pump(c);
    h = srv_request(buf, sizeof buf, &body);
    srv_reply(h.xid, 3, TB_ENONODE, NULL);
    h = srv_request(buf, sizeof buf, &body);
    srv_reply(h.xid, 3, TB_ENONODE, NULL);
    pump(c);
    assert_int_equal(r.rc, TB_ENONODE);
    assert_int_equal(e2.rc, TB_ENONODE);
    assert_int_equal(c->nwatchers, 1); /* only the exists watch */
    close_replied(c);
    assert_int_equal(wr.events, 0);     /* never set: never called */
    assert_int_equal(er.events, 1);     /* set: ended by the close */
    assert_int_equal(er.ev_type, TB_EVENT_NONE);
    assert_int_equal(er.ev_rc, TB_ECLOSING);
}

static void test_reconnect_replays(void **state)
{
    struct tb_client *c = connected("h:1,g:2", 0x77);
    uint8_t buf[4096];
    struct tb_rd body;
    struct tb_request_header h;
    struct tb_auth_req ar;
    struct tb_set_watches_req sw;
    struct tb_str s;
    struct tb_rd it;
    struct tb_connect_req cr;
    struct rec a = {0}, w = {0}, g = {0}, late = {0};
    struct it_state { int n; } st = {0};
    size_t n;

    (void)state;
    (void)st;
    assert_int_equal(tb_add_auth(c, "digest", "u:p", 3, rec_void, &a), 0);
    pump(c);
    h = srv_request(buf, sizeof buf, &body);
    assert_int_equal(h.xid, TB_XID_AUTH);
    srv_reply(TB_XID_AUTH, 0, 0, NULL);
    assert_int_equal(tb_exists(c, "/w", rec_watch, &w, rec_stat, &g), 0);
    pump(c);
    h = srv_request(buf, sizeof buf, &body);
    {
        struct tb_wbuf sb;
        struct tb_stat st0 = {0};
        tb_wbuf_init(&sb);
        tb_put_STAT(&sb, &st0);
        srv_reply(h.xid, 9, 0, &sb);
        tb_wbuf_free(&sb);
    }
    pump(c);
    assert_int_equal(a.calls, 1);
    assert_int_equal(a.rc, 0);
    assert_int_equal(g.rc, 0);
    assert_int_equal(c->nwatchers, 1);
    /* a request in flight, then a reply with the wrong xid */
    assert_int_equal(tb_get_data(c, "/x", NULL, NULL, rec_data, &g), 0);
    pump(c);
    h = srv_request(buf, sizeof buf, &body);
    srv_reply(h.xid + 5, 10, 0, NULL);
    /* queued while the connection is broken: goes on the next one */
    pump(c);
    assert_int_equal(g.calls, 2);
    assert_int_equal(g.rc, TB_ECONNECTIONLOSS);
    assert_int_equal(tb_client_state(c), TB_SESSION_SUSPENDED);
    assert_int_equal(tb_exists(c, "/late", NULL, NULL, rec_stat, &late), 0);
    fake_now += 600; /* past any backoff */
    pump(c);
    assert_int_equal(connects, 2);
    n = srv_read(buf, sizeof buf);
    body = tb_rd_make(buf, n);
    assert_int_equal(tb_connect_req_decode(&body, &cr), 0);
    assert_int_equal(cr.session_id, 0x77);
    assert_int_equal(cr.last_zxid, 9);
    {
        struct tb_connect_resp rs = {0, 6000, 0x77, {"0123456789abcdef", 16},
                                     1, 0};
        struct tb_wbuf wb;
        size_t start;
        tb_wbuf_init(&wb);
        start = tb_frame_begin(&wb);
        tb_connect_resp_encode(&wb, &rs);
        tb_frame_end(&wb, start);
        srv_send(&wb);
    }
    pump(c);
    assert_int_equal(tb_client_state(c), TB_SESSION_CONNECTED);
    /* auth first, then setWatches, then the queued request */
    h = srv_request(buf, sizeof buf, &body);
    assert_int_equal(h.xid, TB_XID_AUTH);
    assert_int_equal(tb_auth_req_decode(&body, &ar), 0);
    assert_true(tb_str_eq(ar.auth, TB_STR("u:p")));
    h = srv_request(buf, sizeof buf, &body);
    assert_int_equal(h.type, TB_OP_SETWATCHES);
    assert_int_equal(tb_set_watches_req_decode(&body, &sw), 0);
    assert_int_equal(sw.relative_zxid, 9);
    assert_int_equal(sw.data.n, 1); /* exists on an existing node */
    it = tb_vec_reader(sw.data);
    assert_int_equal(tb_vec_next_str(&it, &s), 1);
    assert_true(tb_str_eq(s, TB_STR("/w")));
    h = srv_request(buf, sizeof buf, &body);
    assert_int_equal(h.type, TB_OP_EXISTS);
    srv_reply(TB_XID_AUTH, 0, 0, NULL); /* auth replies may overtake */
    srv_event(TB_EVENT_DELETED, "/w");  /* catch-up before the reply */
    srv_reply(TB_XID_SETWATCHES, 11, 0, NULL);
    pump(c);
    /* its zxid is seen, as Java's client takes it: a reconnect now asks
     * for a server past the change its event just told */
    assert_int_equal(c->last_zxid, 11);
    srv_reply(h.xid, 11, TB_ENONODE, NULL);
    pump(c);
    assert_int_equal(w.events, 1);
    assert_int_equal(w.ev_type, TB_EVENT_DELETED);
    assert_int_equal(late.rc, TB_ENONODE);
    assert_int_equal(a.calls, 1);
    close_replied(c);
}

/* The push form of the interest (tb_client_set_ev), as libuv's adapter
 * keeps it: one timer, started by each update.  A loop's clock may run
 * behind the handle's, so the timer can fire a little before the
 * deadline: nothing is due then, and the interest is the same as before,
 * but the timer is spent and the update must come again (none came: the
 * handle sent no ping, and its session expired). */
struct ev_rec {
    int updates;
    struct tb_interest last;
};

static void ev_record(void *data, const struct tb_interest *in)
{
    struct ev_rec *r = data;

    r->updates++;
    r->last = *in;
}

static void test_early_timer_armed_again(void **state)
{
    struct tb_client *c = make("h:1", 6000);
    struct ev_rec r = {0};
    struct tb_ev ev = {&r, ev_record, NULL};
    uint8_t buf[256];
    struct tb_rd body;
    int n;

    (void)state;
    assert_int_equal(tb_client_set_ev(c, &ev), 0);
    pump(c);
    srv_handshake(5, 6000);
    pump(c);
    assert_int_equal(tb_client_state(c), TB_SESSION_CONNECTED);
    assert_int_equal(r.last.timeout_ms, 2000); /* T/3: the ping */
    n = r.updates;
    fake_now += 1999; /* the timer, 1 ms early */
    tb_client_process(c, 0);
    assert_false(srv_has_data());
    assert_true(r.updates > n);
    assert_int_equal(r.last.timeout_ms, 1);
    fake_now += 1;
    tb_client_process(c, 0);
    assert_int_equal(srv_request(buf, sizeof buf, &body).xid, TB_XID_PING);
    srv_reply(TB_XID_PING, 5, 0, NULL);
    pump(c);
    close_replied(c);
}

static void test_ping_and_read_timeout(void **state)
{
    struct tb_client *c = connected("h:1", 5);
    uint8_t buf[256];
    struct tb_rd body;
    struct tb_request_header h;
    struct tb_interest in;

    (void)state;
    tb_client_interest(c, &in);
    assert_int_equal(in.timeout_ms, 2000); /* T/3 */
    fake_now += 1999;
    pump(c);
    assert_false(srv_has_data());
    fake_now += 1;
    pump(c);
    h = srv_request(buf, sizeof buf, &body);
    assert_int_equal(h.xid, TB_XID_PING);
    assert_int_equal(h.type, TB_OP_PING);
    srv_reply(TB_XID_PING, 5, 0, NULL);
    pump(c);
    /* no more replies: dropped 2T/3 after the last byte received */
    fake_now += 2000;
    pump(c);
    h = srv_request(buf, sizeof buf, &body);
    assert_int_equal(h.xid, TB_XID_PING);
    fake_now += 1999;
    pump(c);
    assert_int_equal(tb_client_state(c), TB_SESSION_CONNECTED);
    refuse = 1;
    fake_now += 1;
    pump(c);
    assert_int_equal(tb_client_state(c), TB_SESSION_SUSPENDED);
    /* no server for T since the last one was heard: expired */
    fake_now += 1999;
    pump(c);
    assert_int_equal(tb_client_state(c), TB_SESSION_SUSPENDED);
    fake_now += 1;
    pump(c);
    assert_int_equal(tb_client_state(c), TB_SESSION_EXPIRED);
    assert_int_equal(tb_exists(c, "/", NULL, NULL, rec_stat, NULL),
                     TB_ESESSIONEXPIRED);
    /* a new session on the same handle */
    refuse = 0;
    assert_int_equal(tb_client_new_session(c), 0);
    pump(c);
    srv_handshake(0x99, 6000);
    pump(c);
    assert_int_equal(tb_client_state(c), TB_SESSION_CONNECTED);
    assert_int_equal(tb_client_session(c, NULL), 0x99);
    close_replied(c);
}

/* Silence is judged before what waits in the socket is read: a frame
 * that arrived while the process was stopped for longer than the session
 * timeout says nothing of the server now.  The session is told expired at
 * once (a lock holder told LOST), not kept for another 2T/3. */
static void test_stale_frame_after_a_pause(void **state)
{
    struct tb_client *c = connected("h:1", 5);

    (void)state;
    srv_event(TB_EVENT_DATA_CHANGED, "/x"); /* sent, then the pause */
    fake_now += 20000;
    pump(c);
    assert_int_equal(tb_client_state(c), TB_SESSION_EXPIRED);
    close_replied(c);
}

static void test_server_says_expired(void **state)
{
    struct tb_client *c = connected("h:1", 5);
    uint8_t buf[256];
    struct tb_rd body;
    struct rec r = {0}, w = {0}, q = {0};
    struct tb_request_header h;

    (void)state;
    assert_int_equal(tb_exists(c, "/p", rec_watch, &w, rec_stat, &r), 0);
    pump(c);
    h = srv_request(buf, sizeof buf, &body);
    srv_reply(h.xid, 4, 0, NULL);
    pump(c);
    /* a reply without its Stat: the stream is not trusted any more */
    assert_int_equal(r.rc, TB_ECONNECTIONLOSS);
    assert_int_equal(tb_client_state(c), TB_SESSION_SUSPENDED);
    assert_int_equal(tb_exists(c, "/q", NULL, NULL, rec_stat, &q), 0);
    fake_now += 600;
    pump(c);
    srv_handshake(0, 0); /* timeOut 0: the session is gone */
    pump(c);
    assert_int_equal(tb_client_state(c), TB_SESSION_EXPIRED);
    assert_int_equal(q.calls, 1);
    assert_int_equal(q.rc, TB_ESESSIONEXPIRED);
    close_replied(c);
    assert_int_equal(w.events, 0); /* the call failed: no watch */
}

static void test_close(void **state)
{
    struct tb_client *c = connected("h:1", 5);
    uint8_t buf[256];
    struct tb_rd body;
    struct tb_request_header h, h2;
    struct rec a = {0}, b = {0};

    (void)state;
    assert_int_equal(tb_exists(c, "/a", NULL, NULL, rec_stat, &a), 0);
    assert_int_equal(tb_exists(c, "/b", NULL, NULL, rec_stat, &b), 0);
    pump(c);
    h = srv_request(buf, sizeof buf, &body);
    h2 = srv_request(buf, sizeof buf, &body);
    (void)h2;
    /* the first is answered before close; the close waits its turn */
    {
        struct tb_wbuf w;
        struct tb_stat st = {0};
        tb_wbuf_init(&w);
        tb_put_STAT(&w, &st);
        srv_reply(h.xid, 4, 0, &w);
        tb_wbuf_free(&w);
    }
    {
        /* no closeSession reply: done when close_timeout_ms passed */
        pthread_t th;
        pthread_create(&th, NULL, advance_later, NULL);
        tb_client_close(c);
        pthread_join(th, NULL);
    }
    assert_int_equal(a.calls, 1);
    assert_int_equal(a.rc, 0);
    assert_int_equal(b.calls, 1);
    assert_int_equal(b.rc, TB_ECLOSING);
    h = srv_request(buf, sizeof buf, &body);
    assert_int_equal(h.type, TB_OP_CLOSESESSION);
}

/* A credential refused while the client closes: the refusal ends the
 * session before closeSession is answered; the close still ends once its
 * time is up, the closeSession request freed once (not by both). */
static void test_auth_refused_while_closing(void **state)
{
    struct tb_client *c = connected("h:1", 5);
    uint8_t buf[256];
    struct tb_rd body;
    struct tb_request_header h;
    struct rec a = {0};
    pthread_t th;

    (void)state;
    assert_int_equal(tb_add_auth(c, "digest", "u:bad", 5, rec_void, &a), 0);
    pump(c);
    h = srv_request(buf, sizeof buf, &body);
    assert_int_equal(h.xid, TB_XID_AUTH);
    srv_reply(TB_XID_AUTH, 0, TB_EAUTHFAILED, NULL); /* read during close */
    pthread_create(&th, NULL, advance_later, NULL);
    tb_client_close(c);
    pthread_join(th, NULL);
    assert_int_equal(a.calls, 1);
    assert_int_equal(a.rc, TB_EAUTHFAILED);
    h = srv_request(buf, sizeof buf, &body);
    assert_int_equal(h.type, TB_OP_CLOSESESSION);
}

/* Reads the next request, an auth packet, and checks its credential. */
static void srv_auth_is(const char *cred)
{
    uint8_t buf[256];
    struct tb_rd body;
    struct tb_request_header h = srv_request(buf, sizeof buf, &body);
    struct tb_auth_req ar;

    assert_int_equal(h.xid, TB_XID_AUTH);
    assert_int_equal(tb_auth_req_decode(&body, &ar), 0);
    assert_true(tb_str_eq(ar.auth, tb_str_c(cred)));
}

/* The next attempt, past the backoff, opens session 0x5 again. */
static void back_after_backoff(struct tb_client *c)
{
    fake_now += 600;
    pump(c);
    srv_handshake(0x5, 6000);
    pump(c);
    assert_int_equal(tb_client_state(c), TB_SESSION_CONNECTED);
}

/* A credential added while no server can be reached: its callback hears
 * of the failed attempt as a request queued then does (and
 * tb_add_auth_sync returns instead of waiting until the handle is
 * closed); one sent on a connection that breaks before its answer hears
 * of the loss as a request sent then does.  Each credential stays and is
 * replayed on the next connection, its callback not called again. */
static void test_auth_waiter_ends_with_attempt(void **state)
{
    struct tb_client *c = make("h:1", 6000);
    struct rec a = {0}, b = {0}, g = {0};
    pthread_t th;

    (void)state;
    refuse = 1;
    assert_int_equal(tb_add_auth(c, "digest", "u:p", 3, rec_void, &a), 0);
    assert_int_equal(tb_exists(c, "/x", NULL, NULL, rec_stat, &g), 0);
    pump(c);
    assert_int_equal(g.calls, 1);
    assert_int_equal(g.rc, TB_ECONNECTIONLOSS);
    assert_int_equal(a.calls, 1);
    assert_int_equal(a.rc, TB_ECONNECTIONLOSS);
    /* the sync form: the next attempt, past the backoff, fails too */
    pthread_create(&th, NULL, advance_later, NULL);
    assert_int_equal(tb_add_auth_sync(c, "digest", "v:q", 3),
                     TB_ECONNECTIONLOSS);
    pthread_join(th, NULL);
    refuse = 0;
    back_after_backoff(c);
    srv_auth_is("u:p");
    srv_auth_is("v:q");
    srv_reply(TB_XID_AUTH, 0, 0, NULL);
    srv_reply(TB_XID_AUTH, 0, 0, NULL);
    pump(c);
    assert_int_equal(a.calls, 1);
    /* sent, then the connection breaks before the answer */
    assert_int_equal(tb_add_auth(c, "digest", "w:r", 3, rec_void, &b), 0);
    pump(c);
    srv_auth_is("w:r");
    close(server_fd);
    server_fd = -1;
    pump(c);
    assert_int_equal(tb_client_state(c), TB_SESSION_SUSPENDED);
    assert_int_equal(b.calls, 1);
    assert_int_equal(b.rc, TB_ECONNECTIONLOSS);
    back_after_backoff(c);
    srv_auth_is("u:p");
    srv_auth_is("v:q");
    srv_auth_is("w:r");
    srv_reply(TB_XID_AUTH, 0, 0, NULL);
    srv_reply(TB_XID_AUTH, 0, 0, NULL);
    srv_reply(TB_XID_AUTH, 0, 0, NULL);
    pump(c);
    assert_int_equal(a.calls, 1);
    assert_int_equal(b.calls, 1);
    assert_int_equal(tb_client_state(c), TB_SESSION_CONNECTED);
    close_replied(c);
    assert_int_equal(a.calls, 1);
    assert_int_equal(b.calls, 1);
}

/* The names ZooKeeper's clients print, so tools agree on them. */
static void test_event_name(void **state)
{
    (void)state;
    assert_string_equal(tb_event_name(TB_EVENT_NONE), "None");
    assert_string_equal(tb_event_name(TB_EVENT_CREATED), "NodeCreated");
    assert_string_equal(tb_event_name(TB_EVENT_DELETED), "NodeDeleted");
    assert_string_equal(tb_event_name(TB_EVENT_DATA_CHANGED),
                        "NodeDataChanged");
    assert_string_equal(tb_event_name(TB_EVENT_CHILDREN_CHANGED),
                        "NodeChildrenChanged");
    assert_string_equal(tb_event_name(TB_EVENT_DATA_WATCH_REMOVED),
                        "DataWatchRemoved");
    assert_string_equal(tb_event_name(TB_EVENT_CHILD_WATCH_REMOVED),
                        "ChildWatchRemoved");
    assert_string_equal(tb_event_name(TB_EVENT_PERSISTENT_WATCH_REMOVED),
                        "PersistentWatchRemoved");
    assert_string_equal(tb_event_name(0), "unknown");
    assert_string_equal(tb_event_name(8), "unknown");
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_hosts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_handshake_and_get, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_sent_bytes_let_go, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_failed_call_sets_no_watch, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_reconnect_replays, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_ping_and_read_timeout, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_early_timer_armed_again, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_stale_frame_after_a_pause, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_server_says_expired, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_close, setup, teardown),
        cmocka_unit_test_setup_teardown(test_auth_refused_while_closing, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_auth_waiter_ends_with_attempt,
                                        setup, teardown),
        cmocka_unit_test(test_event_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
