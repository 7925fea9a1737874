/* The ensemble's raft transport (src/server/replog/tcp.c), on loopback:
 * its own listener, the one peer TLS uses, with a secure.start that hands
 * the socket back as its plaintext (TLS itself is test_tunnel's). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <raft.h>
#include <uv.h>

#include "common/common.h"
#include "server/replog/internal.h"

/* ---- secure.start: the socket is the plaintext, on the next turn ---- */

struct passing {
    uv_timer_t timer;
    int fd;
    void (*cb)(void *arg, int fd);
    void *arg;
};

static void passing_freed(uv_handle_t *h)
{
    free(h->data);
}

static void passed(uv_timer_t *h)
{
    struct passing *p = h->data;

    p->cb(p->arg, p->fd);
    uv_close((uv_handle_t *)&p->timer, passing_freed);
}

static uv_loop_t loop;

static void *pass_start(void *data, int fd, int dialing, const char *peer,
                        void (*cb)(void *arg, int fd), void *arg)
{
    struct passing *p = calloc(1, sizeof *p);

    (void)data, (void)dialing, (void)peer;
    assert_non_null(p);
    *p = (struct passing){.fd = fd, .cb = cb, .arg = arg};
    uv_timer_init(&loop, &p->timer);
    p->timer.data = p;
    uv_timer_start(&p->timer, passed, 0, 0);
    return p;
}

static void pass_cancel(void *handle)
{
    struct passing *p = handle;

    close(p->fd);
    uv_close((uv_handle_t *)&p->timer, passing_freed);
}

/* ---- raft's heap, failing the next `failing` allocations ---- */

static int failing;

static void *failing_malloc(void *data, size_t size)
{
    (void)data;
    if (failing > 0) {
        failing--;
        return NULL;
    }
    return malloc(size);
}

static void heap_free(void *data, void *ptr)
{
    (void)data;
    free(ptr);
}

static void *failing_calloc(void *data, size_t n, size_t size)
{
    (void)data;
    if (failing > 0) {
        failing--;
        return NULL;
    }
    return calloc(n, size);
}

static void *heap_realloc(void *data, void *ptr, size_t size)
{
    (void)data;
    return realloc(ptr, size);
}

static void *heap_aligned(void *data, size_t align, size_t size)
{
    (void)data;
    return aligned_alloc(align, size);
}

static void heap_aligned_free(void *data, size_t align, void *ptr)
{
    (void)data, (void)align;
    free(ptr);
}

static struct raft_heap failing_heap = {
    NULL,         failing_malloc, heap_free,        failing_calloc,
    heap_realloc, heap_aligned,   heap_aligned_free};

/* ---- the transport ---- */

static raft_id accepted_id;

static void stream_freed(uv_handle_t *h)
{
    raft_free(h);
}

static void on_accepted(struct raft_uv_transport *t, raft_id id,
                        const char *address, uv_stream_t *stream)
{
    (void)t;
    assert_string_equal(address, "127.0.0.1:1");
    accepted_id = id;
    uv_close((uv_handle_t *)stream, stream_freed);
}

static int closed;

static void on_closed(struct raft_uv_transport *t)
{
    (void)t;
    closed = 1;
}

/* A port nothing listens on now. */
static int free_port(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET};
    socklen_t len = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    close(fd);
    return ntohs(a.sin_port);
}

/* A member connecting, its handshake written: it says it is server `id`
 * at 127.0.0.1:1. */
static int dial(int port, raft_id id)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    uint8_t hs[40] = {0};
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    tb_store_le64(hs, 1);
    tb_store_le64(hs + 8, id);
    tb_store_le64(hs + 16, 16);
    memcpy(hs + 24, "127.0.0.1:1", 12);
    assert_int_equal(write(fd, hs, sizeof hs), (ssize_t)sizeof hs);
    return fd;
}

static void woken(uv_timer_t *h)
{
    (void)h;
}

/* Runs the loop until raft is handed server `id`'s connection, for up to
 * 5 s: whether it was. */
static int handed(raft_id id)
{
    uint64_t end = uv_hrtime() + 5000000000u;
    uv_timer_t wake; /* so that the loop waits no longer than 10 ms */

    uv_timer_init(&loop, &wake);
    uv_timer_start(&wake, woken, 10, 10);
    while (accepted_id != id && uv_hrtime() < end)
        uv_run(&loop, UV_RUN_ONCE);
    uv_close((uv_handle_t *)&wake, NULL);
    uv_run(&loop, UV_RUN_NOWAIT);
    return accepted_id == id;
}

/* A connection that finds no memory for its handle waits in the kernel,
 * and libuv polls the listener no more until it is accepted: it is, a
 * little later, and the listener goes on taking connections. */
static void test_accept_again_after_no_memory(void **state)
{
    struct replog *l = calloc(1, sizeof *l);
    struct raft_uv_transport rt;
    char address[32];
    int port = free_port(), fd, fd2;

    (void)state;
    assert_non_null(l);
    assert_int_equal(uv_loop_init(&loop), 0);
    l->loop = &loop;
    l->election_ms = 1000;
    l->heartbeat_ms = 100;
    l->secure = (struct replog_secure){pass_start, pass_cancel, NULL, 0};
    assert_int_equal(replog__tcp_init(&rt, l), 0);
    snprintf(address, sizeof address, "127.0.0.1:%d", port);
    assert_int_equal(rt.init(&rt, 1, address), 0);
    assert_int_equal(rt.listen(&rt, on_accepted), 0);

    raft_heap_set(&failing_heap);
    failing = 1;
    fd = dial(port, 2);
    assert_true(handed(2));
    assert_int_equal(failing, 0); /* it did find no memory */
    fd2 = dial(port, 3);
    assert_true(handed(3));
    raft_heap_set_default();

    rt.close(&rt, on_closed);
    while (!closed)
        uv_run(&loop, UV_RUN_ONCE);
    replog__tcp_free(&rt);
    close(fd);
    close(fd2);
    assert_int_equal(uv_loop_close(&loop), 0);
    free(l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accept_again_after_no_memory),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
