/* The client core driven by its own I/O thread (tb_client_start), against
 * the scripted server of client_fixture.h: a handle closed from one of its
 * callbacks, on that thread, closes at once and is freed there. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "client_fixture.h"

/* Thread mode: the connection the I/O thread makes, handed to the test's
 * thread (which alone uses server_fd) through an atomic. */
static int io_fd = -1;

static int io_hook(struct tb_client *c, const struct host *h)
{
    int sv[2];

    (void)c;
    (void)h;
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    fcntl(sv[0], F_SETFL, O_NONBLOCK);
    __atomic_store_n(&io_fd, sv[1], __ATOMIC_SEQ_CST);
    return sv[0];
}

/* The handle's own free, the I/O thread's last use of the library, the
 * allocator hook's included (which the teardown sets again). */
static void *io_handle;
static int io_freed;

static void *io_malloc(void *data, size_t n)
{
    (void)data;
    return malloc(n);
}

static void io_free(void *data, void *p)
{
    int handle = p == __atomic_load_n(&io_handle, __ATOMIC_SEQ_CST);

    (void)data;
    free(p);
    if (handle)
        __atomic_store_n(&io_freed, 1, __ATOMIC_SEQ_CST);
}

static int io_wait_freed(void)
{
    int i;

    for (i = 0; i < 2000 && !__atomic_load_n(&io_freed, __ATOMIC_SEQ_CST); i++)
        usleep(1000);
    return __atomic_load_n(&io_freed, __ATOMIC_SEQ_CST);
}

/* As an application does: closes the handle from its own callback. */
static void close_in_state_cb(struct tb_client *c, int st, void *data)
{
    (void)data;
    if (st == TB_SESSION_EXPIRED)
        tb_client_close(c);
}

static void close_in_reply_cb(struct tb_client *c, int rc,
                              const struct tb_stat *st, void *data)
{
    (void)rc;
    (void)st;
    (void)data;
    tb_client_close(c);
}

static struct tb_client *started(int64_t sid, int timeout)
{
    static const unsigned char pw[16] = "0123456789abcdef";
    static const struct tb_heap heap = {NULL, io_malloc, io_free};
    struct tb_options o = {0};
    struct tb_client *c;
    int i;

    io_fd = -1;
    io_freed = 0;
    tb_heap_set(&heap);
    o.hosts = "h:1";
    o.session_timeout_ms = timeout;
    o.session_id = sid;
    o.session_passwd = pw;
    o.state_cb = close_in_state_cb;
    assert_int_equal(tb_client_init(&c, &o), 0);
    __atomic_store_n(&io_handle, c, __ATOMIC_SEQ_CST);
    c->now = clock_fn;
    c->connect_hook = io_hook;
    assert_int_equal(tb_client_start(c), 0);
    for (i = 0; i < 2000 && __atomic_load_n(&io_fd, __ATOMIC_SEQ_CST) < 0; i++)
        usleep(1000);
    server_fd = __atomic_load_n(&io_fd, __ATOMIC_SEQ_CST);
    assert_true(server_fd >= 0);
    return c;
}

/* Closed from a callback on the I/O thread, the handle closes at once:
 * not at the next timer (a third of the session timeout later, its
 * ephemerals and locks kept that long), and not never, as an expired
 * handle, which polls nothing, would. */
static void test_close_from_io_thread(void **state)
{
    struct tb_connect_req rq;
    struct tb_request_header h;
    struct tb_rd body;
    uint8_t buf[256];

    (void)state;
    /* The session given is gone: closed from the EXPIRED callback. */
    started(0x77, 6000);
    srv_accept(0, 0, 0, &rq);
    assert_true(io_wait_freed());
    close(server_fd);
    /* Connected, closed from a reply's callback: closeSession is sent
     * within srv_read's two seconds, not at the ping ten seconds on. */
    {
        struct tb_client *c = started(0, 30000);
        srv_accept(0x78, 30000, 0, &rq);
        assert_int_equal(
            tb_exists(c, "/a", NULL, NULL, close_in_reply_cb, NULL), 0);
        h = srv_request(buf, sizeof buf, &body);
        srv_reply(h.xid, 4, TB_ENONODE, NULL);
        h = srv_request(buf, sizeof buf, &body);
        assert_int_equal(h.type, TB_OP_CLOSESESSION);
        srv_reply(h.xid, 5, 0, NULL);
        assert_true(io_wait_freed());
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_close_from_io_thread, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
