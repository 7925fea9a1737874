/* The client core against a scripted server on a socketpair, with a fake
 * clock (client_fixture.h): servers and sessions across connections.  The
 * session timeout a server grants (at its longest, and as the connect
 * timeout's share), the backoff of short connections, read-only servers'
 * sessions (not carried, not expired), a session handed over and resumed,
 * and the watches set again in setWatches batches.  The rest of the core:
 * test_client.c. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "client_fixture.h"

/* A server may grant a session timeout as long as INT32_MAX ms: the read
 * timeout (2T/3) must not overflow and drop the connection at once, nor
 * make the driver wait for nothing. */
static void test_longest_session_timeout(void **state)
{
    struct tb_client *c = make("h:1", 6000);
    struct tb_interest in;
    uint8_t buf[64];
    struct tb_rd body;

    (void)state;
    pump(c);
    srv_handshake(0x5, 0x7fffffff);
    pump(c);
    assert_int_equal(tb_client_state(c), TB_SESSION_CONNECTED);
    assert_int_equal(tb_client_session_timeout(c), 0x7fffffff);
    fake_now += 1000;
    pump(c);
    assert_int_equal(tb_client_state(c), TB_SESSION_CONNECTED);
    assert_int_equal(connects, 1);
    assert_false(srv_has_data()); /* no ping yet either */
    /* the next thing due is the ping, T/3 after the handshake was sent */
    assert_int_equal(tb_client_interest(c, &in), 0);
    assert_int_equal(in.timeout_ms, 0x7fffffff / 3 - 1000);
    fake_now += 0x7fffffff / 3 - 1000;
    pump(c);
    assert_int_equal(tb_client_state(c), TB_SESSION_CONNECTED);
    assert_int_equal(srv_request(buf, sizeof buf, &body).xid, TB_XID_PING);
    close_replied(c);
}

/* The connection breaks; the handle, past its backoff, dials the next
 * server. */
static void next_server(struct tb_client *c)
{
    close(server_fd);
    server_fd = -1;
    pump(c);
    fake_now += 600;
    pump(c);
}

/* The default connect timeout is a share of the session the server
 * granted, not of the one asked for: with 60 s asked and 6 s granted, an
 * attempt a server never answers gives way after 1 s (6000 / 9, at least
 * 1000), not 6.7 s, and the third host is tried before the session would
 * expire. */
static void test_connect_timeout_of_granted_session(void **state)
{
    struct tb_client *c = make("a:1,b:2,c:3", 60000);

    (void)state;
    pump(c);
    srv_handshake(0x5, 6000);
    pump(c);
    assert_int_equal(tb_client_state(c), TB_SESSION_CONNECTED);
    fake_now += 3000; /* the connection held: the next host at once */
    close(server_fd);
    server_fd = -1;
    pump(c);
    assert_int_equal(connects, 2);
    fake_now += 999;
    pump(c);
    assert_int_equal(connects, 2);
    fake_now += 1; /* the second host never answered the handshake */
    pump(c);
    assert_int_equal(connects, 3);
    srv_handshake(0x5, 6000);
    pump(c);
    assert_int_equal(tb_client_state(c), TB_SESSION_CONNECTED);
    close_replied(c);
}

/* Servers that take the session and drop the connection at once (two
 * handles of one session taking it from each other do that) count as
 * failed attempts: after a round of them the handle pauses, as after a
 * round of refusals, instead of dialling on without end. */
static void test_short_connections_back_off(void **state)
{
    struct tb_client *c = make("a:1,b:2,c:3", 6000);
    int i;

    (void)state;
    pump(c);
    for (i = 1; i <= 3; i++) {
        assert_int_equal(connects, i);
        srv_handshake(0x5, 6000);
        pump(c);
        assert_int_equal(tb_client_state(c), TB_SESSION_CONNECTED);
        fake_now += 100;
        close(server_fd);
        server_fd = -1;
        pump(c);
    }
    assert_int_equal(connects, 3); /* paused */
    fake_now += 600;               /* past any backoff */
    pump(c);
    assert_int_equal(connects, 4);
    srv_handshake(0x5, 6000);
    pump(c);
    assert_int_equal(tb_client_state(c), TB_SESSION_CONNECTED);
    close_replied(c);
}

/* A handle on `hosts` that takes read-only servers (session timeout 6 s,
 * the test's clock and connections), its first connection begun. */
static struct tb_client *readonly_client(const char *hosts)
{
    struct tb_options o = {0};
    struct tb_client *c;

    o.hosts = hosts;
    o.session_timeout_ms = 6000;
    o.readonly_allowed = 1;
    assert_int_equal(tb_client_init(&c, &o), 0);
    c->now = clock_fn;
    c->connect_hook = hook;
    pump(c);
    return c;
}

/* A read-only server's session is not carried to the next server until a
 * read-write one was seen (ZooKeeper's clients send session id 0 until
 * then): a read-write server would call it expired, as it is no session
 * of the quorum's.  Reaching quorum is a new session, not an expiry. */
static void test_readonly_session_not_carried(void **state)
{
    struct tb_connect_req rq;
    struct tb_client *c;

    (void)state;
    c = readonly_client("h:1,g:2");
    srv_accept(0x55, 6000, 1, &rq);
    pump(c);
    assert_int_equal(tb_client_state(c), TB_SESSION_READONLY);
    next_server(c); /* read-only too */
    srv_accept(0x56, 6000, 1, &rq);
    assert_int_equal(rq.session_id, 0);
    pump(c);
    next_server(c); /* one with quorum */
    srv_accept(0x66, 6000, 0, &rq);
    assert_int_equal(rq.session_id, 0);
    pump(c);
    assert_int_equal(tb_client_state(c), TB_SESSION_CONNECTED);
    assert_int_equal(tb_client_session(c, NULL), 0x66);
    next_server(c); /* from now on the session is carried */
    srv_accept(0x66, 6000, 1, &rq);
    assert_int_equal(rq.session_id, 0x66);
    pump(c);
    close_replied(c);
}

/* Nor is a read-only server's session expired by the handle when no
 * server is heard from for its timeout: no server would resume it, and
 * the next connection takes a new one (as ZooKeeper's clients do).  Its
 * watches go on, set again there (they all ended with an expiry, and the
 * handle stayed expired until tb_client_new_session). */
static void test_readonly_session_not_expired(void **state)
{
    struct tb_connect_req rq;
    struct tb_client *c;
    struct rec e = {0}, w = {0};
    uint8_t buf[512];
    struct tb_rd body;
    int i;

    (void)state;
    c = readonly_client("h:1");
    srv_accept(0x55, 6000, 1, &rq);
    pump(c);
    assert_int_equal(tb_client_state(c), TB_SESSION_READONLY);
    assert_int_equal(tb_exists(c, "/a", rec_watch, &w, rec_stat, &e), 0);
    pump(c);
    srv_reply(srv_request(buf, sizeof buf, &body).xid, 3, TB_ENONODE, NULL);
    pump(c);
    assert_int_equal(e.rc, TB_ENONODE);
    refuse = 1; /* no server for longer than the timeout */
    close(server_fd);
    server_fd = -1;
    for (i = 0; i < 20; i++) {
        fake_now += 600;
        pump(c);
    }
    assert_int_not_equal(tb_client_state(c), TB_SESSION_EXPIRED);
    assert_int_equal(w.events, 0);
    refuse = 0;
    fake_now += 2000;
    pump(c);
    srv_accept(0x66, 6000, 0, &rq); /* one with quorum: a new session */
    assert_int_equal(rq.session_id, 0);
    pump(c);
    assert_int_equal(tb_client_state(c), TB_SESSION_CONNECTED);
    assert_int_equal(srv_request(buf, sizeof buf, &body).type,
                     TB_OP_SETWATCHES);
    assert_int_equal(w.events, 0);
    close_replied(c);
}

/* The same for a session started by tb_client_new_session after a
 * read-write server was seen in the first: the new session, first made on
 * a read-only server, is its own there, and the read-write server after
 * it is asked for a new one (session id 0), not told the read-only
 * server's id, which it would call expired. */
static void test_readonly_new_session_not_carried(void **state)
{
    struct tb_connect_req rq;
    struct tb_client *c;

    (void)state;
    c = readonly_client("h:1,g:2");
    srv_accept(0x66, 6000, 0, &rq); /* the first session, read-write */
    pump(c);
    assert_int_equal(tb_client_state(c), TB_SESSION_CONNECTED);
    next_server(c);
    srv_accept(0, 0, 0, &rq); /* timeOut 0: the session is gone */
    assert_int_equal(rq.session_id, 0x66);
    pump(c);
    assert_int_equal(tb_client_state(c), TB_SESSION_EXPIRED);

    assert_int_equal(tb_client_new_session(c), 0);
    pump(c);
    fake_now += 600;
    pump(c);
    srv_accept(0x57, 6000, 1, &rq); /* a read-only server's session */
    assert_int_equal(rq.session_id, 0);
    pump(c);
    assert_int_equal(tb_client_state(c), TB_SESSION_READONLY);
    next_server(c); /* one with quorum */
    srv_accept(0x77, 6000, 0, &rq);
    assert_int_equal(rq.session_id, 0);
    pump(c);
    assert_int_equal(tb_client_state(c), TB_SESSION_CONNECTED);
    assert_int_equal(tb_client_session(c, NULL), 0x77);
    next_server(c); /* from now on the session is carried */
    srv_accept(0x77, 6000, 1, &rq);
    assert_int_equal(rq.session_id, 0x77);
    pump(c);
    close_replied(c);
}

/* A session handed over in the options (tb_client_session's id and
 * password) is asked for in the first handshake; if it has expired, the
 * handle says so instead of taking a new session or trying for ever.  A
 * server that answers with another session id (kind 2) says the same. */
static void test_given_session_resumed(void **state)
{
    static const unsigned char pw[16] = "0123456789abcdef";
    static const struct {
        int64_t id;
        int timeout;
    } reply[] = {{0x77, 6000}, {0, 0}, {0x88, 6000}};
    struct tb_options o = {0};
    struct tb_connect_req rq;
    struct tb_client *c;
    int kind;

    (void)state;
    for (kind = 0; kind < 3; kind++) {
        o.hosts = "h:1";
        o.session_timeout_ms = 6000;
        o.session_id = 0x77;
        o.session_passwd = pw;
        assert_int_equal(tb_client_init(&c, &o), 0);
        c->now = clock_fn;
        c->connect_hook = hook;
        pump(c);
        srv_accept(reply[kind].id, reply[kind].timeout, 0, &rq);
        assert_int_equal(rq.session_id, 0x77);
        pump(c);
        if (kind > 0) {
            assert_int_equal(tb_client_state(c), TB_SESSION_EXPIRED);
            assert_int_equal(tb_client_session(c, NULL), 0x77);
            tb_client_close(c);
            close(server_fd);
            server_fd = -1;
            continue;
        }
        assert_int_equal(tb_client_state(c), TB_SESSION_CONNECTED);
        assert_int_equal(tb_client_session(c, NULL), 0x77);
        close_replied(c);
        close(server_fd);
        server_fd = -1;
    }
}

static void test_setwatches_batches(void **state)
{
    struct tb_client *c = connected("h:1", 5);
    uint8_t *buf = malloc(1 << 20);
    char path[1100];
    struct tb_rd body;
    struct tb_request_header h;
    struct tb_set_watches2_req sw;
    int i, frames = 0, paths = 0, v2 = 0;
    static struct rec sink;

    (void)state;
    memset(path, 'x', sizeof path);
    path[0] = '/';
    for (i = 0; i < 300; i++) { /* 300 x ~1 KB: three batches */
        struct tb_str p;
        struct watcher *w;
        snprintf(path + 1000, 20, "%d", i);
        p = tb_str_c(path);
        w = tb__watcher_new(p, rec_watch, &sink,
                            i == 7 ? WK_PERSISTENT : WK_CHILD);
        pthread_mutex_lock(&c->mu);
        tb__watch_register(c, w);
        pthread_mutex_unlock(&c->mu);
    }
    next_server(c);
    srv_handshake(5, 6000);
    pump(c);
    while (srv_has_data()) {
        h = srv_request(buf, 1 << 20, &body);
        frames++;
        if (h.type == TB_OP_SETWATCHES2) {
            v2++;
            assert_int_equal(tb_set_watches2_req_decode(&body, &sw), 0);
            paths += sw.persistent.n;
        } else {
            assert_int_equal(h.type, TB_OP_SETWATCHES);
            assert_int_equal(tb_set_watches_req_decode(
                                 &body, (struct tb_set_watches_req *)&sw),
                             0);
        }
        paths += sw.child.n;
        pump(c);
    }
    assert_int_equal(frames, 3);
    assert_int_equal(v2, 1);
    assert_int_equal(paths, 300);
    /* The first batch answered at zxid 20, then the connection lost
     * before the others' catch-up events: the next connection asks from
     * the zxid before, or what those events were to tell is never told. */
    srv_reply(TB_XID_SETWATCHES, 20, 0, NULL);
    pump(c);
    next_server(c);
    srv_handshake(5, 6000);
    pump(c);
    h = srv_request(buf, 1 << 20, &body);
    assert_int_equal(
        tb_set_watches_req_decode(&body, (struct tb_set_watches_req *)&sw), 0);
    assert_int_equal(sw.relative_zxid, 0);
    free(buf);
    close_replied(c);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_longest_session_timeout, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_connect_timeout_of_granted_session,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_short_connections_back_off, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_readonly_session_not_carried,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_readonly_session_not_expired,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_readonly_new_session_not_carried,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_given_session_resumed, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_setwatches_batches, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
