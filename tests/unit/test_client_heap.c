/* The client core under an allocator of the test's own, against the
 * scripted server of client_fixture.h: allocation failures at every step
 * of a session's life leave no leak and no callback twice or never, and a
 * handle closed from a callback while tb_client_wait_connected drives it
 * is freed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "client_fixture.h"

static int fail_at, allocs;

static void *failing_malloc(void *data, size_t n)
{
    (void)data;
    if (++allocs == fail_at)
        return NULL;
    return malloc(n);
}

static void failing_free(void *data, void *p)
{
    (void)data;
    free(p);
}

/* Reads a frame if one comes within 100 ms: its length, or -1. */
static ssize_t soft_read(uint8_t *buf, size_t cap)
{
    struct pollfd p = {server_fd, POLLIN, 0};
    uint8_t hdr[4];
    size_t len, got = 0;

    if (server_fd < 0 || poll(&p, 1, 100) != 1 ||
        read(server_fd, hdr, 4) != 4)
        return -1;
    len = tb_load_be32(hdr);
    if (len > cap)
        return -1;
    while (got < len) {
        ssize_t n = read(server_fd, buf + got, len - got);
        if (n <= 0)
            return -1;
        got += (size_t)n;
    }
    return (ssize_t)len;
}

static void soft_handshake(void)
{
    uint8_t buf[128];
    struct tb_connect_resp rs = {0, 6000, 1, {"0123456789abcdef", 16}, 1, 0};
    struct tb_wbuf w;
    size_t start;

    if (soft_read(buf, sizeof buf) != 45)
        return;
    tb_wbuf_init(&w);
    start = tb_frame_begin(&w);
    tb_connect_resp_encode(&w, &rs);
    tb_frame_end(&w, start);
    srv_send(&w);
}

/* One scenario: connect, three requests with watches, events, a lost
 * connection, reconnect, close.  Every accepted request must complete
 * exactly once and every watch end at most once, whatever fails. */
static int scenario(void)
{
    struct tb_options o = {0};
    struct tb_client *c;
    struct rec r[3] = {{0}}, w[3] = {{0}};
    int ok[3], i, rv;
    uint8_t buf[512];
    struct tb_rd body;
    struct tb_request_header h;
    ssize_t n;

    o.hosts = "h:1/r";
    o.session_timeout_ms = 6000;
    if ((rv = tb_client_init(&c, &o)) != 0)
        return rv == TB_ENOMEM ? 0 : -1;
    c->now = clock_fn;
    c->connect_hook = hook;
    pump(c);
    soft_handshake();
    pump(c);
    for (i = 0; i < 3; i++)
        ok[i] = tb_get_children(c, "/p", rec_watch, &w[i], rec_strings,
                                &r[i]) == 0;
    pump(c);
    while ((n = soft_read(buf, sizeof buf)) > 0) {
        struct tb_wbuf b;
        struct tb_children_resp cr = {{0, NULL, 0}};
        body = tb_rd_make(buf, (size_t)n);
        if (tb_request_header_decode(&body, &h) != 0 || h.xid < 0)
            continue;
        tb_wbuf_init(&b);
        tb_children_resp_encode(&b, &cr);
        srv_reply(h.xid, 2, 0, &b);
        tb_wbuf_free(&b);
        pump(c);
    }
    if (server_fd >= 0) {
        srv_event(TB_EVENT_CHILDREN_CHANGED, "/r/p");
        pump(c);
        close(server_fd);
        server_fd = -1;
    }
    pump(c);
    fake_now += 600;
    pump(c);
    soft_handshake();
    pump(c);
    {
        /* ...for closeSession's reply: let fake time run out instead */
        pthread_t th;
        pthread_create(&th, NULL, advance_later, NULL);
        tb_client_close(c);
        pthread_join(th, NULL);
    }
    for (i = 0; i < 3; i++) {
        if (r[i].calls != ok[i])
            return -1;
        if (w[i].events > 1)
            return -1;
    }
    return 0;
}

static void test_alloc_failures(void **state)
{
    struct tb_heap heap = {NULL, failing_malloc, failing_free};
    int n;

    (void)state;
    tb_heap_set(&heap);
    soft_mode = 1;
    fail_at = 0;
    allocs = 0;
    assert_int_equal(scenario(), 0);
    n = allocs;
    assert_true(n > 5);
    for (fail_at = 1; fail_at <= n + 2; fail_at++) {
        allocs = 0;
        fake_now = 1000000;
        if (server_fd >= 0)
            close(server_fd);
        server_fd = -1;
        assert_int_equal(scenario(), 0);
    }
    soft_mode = 0;
    tb_heap_set(NULL);
}

/* Allocations not yet freed, through the library's heap. */
static long live;

static void *counting_malloc(void *data, size_t n)
{
    (void)data;
    live++;
    return malloc(n);
}

static void counting_free(void *data, void *p)
{
    (void)data;
    if (p != NULL)
        live--;
    free(p);
}

static void close_on_expired(struct tb_client *c, int state, void *data)
{
    (void)data;
    if (state == TB_SESSION_EXPIRED)
        tb_client_close(c);
}

/* Loop mode: a state callback that closes the handle while
 * tb_client_wait_connected drives it (the session found expired).  The
 * wait returns TB_ECLOSING and the handle is freed: nothing else would
 * free it (a later close does nothing, the handle being closed). */
static void test_closed_during_wait_freed(void **state)
{
    static const unsigned char pw[16] = "0123456789abcdef";
    struct tb_heap heap = {NULL, counting_malloc, counting_free};
    struct tb_options o = {0};
    struct tb_client *c;

    (void)state;
    live = 0;
    tb_heap_set(&heap);
    o.hosts = "h:1";
    o.session_timeout_ms = 6000;
    o.session_id = 0x42;
    o.session_passwd = pw;
    o.state_cb = close_on_expired;
    assert_int_equal(tb_client_init(&c, &o), 0);
    c->now = clock_fn;
    c->connect_hook = hook;
    pump(c);
    srv_handshake(0, 0); /* the session is gone */
    assert_int_equal(tb_client_wait_connected(c, 5000), TB_ECLOSING);
    tb_heap_set(NULL);
    assert_int_equal(live, 0);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_alloc_failures, setup, teardown),
        cmocka_unit_test_setup_teardown(test_closed_during_wait_freed, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
