/* httpd (src/server/http/httpd.c) on a real loop and socket: a request
 * must come whole within the idle timeout, but an answer on its way has
 * no deadline.  A client reading a large answer at its own pace, longer
 * than the idle timeout, gets all of it (it was shut down at the
 * deadline, its answer cut short). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "server/http/httpd.h"

enum { BIG = 16 << 20, IDLE_MS = 1000 };

static void big_answer(void *data, const struct httpd_req *req,
                       struct httpd_resp *resp)
{
    (void)data;
    (void)req;
    resp->status = 200;
    resp->content_type = "text/plain";
    tb_wbuf_reserve(&resp->body, BIG);
    if (!resp->body.oom) {
        memset(resp->body.base, 'x', BIG);
        resp->body.len = BIG;
    }
}

struct reader {
    int port;
    size_t body; /* bytes of the body read */
    long length; /* its Content-Length */
    uv_async_t done;
};

/* Reads the answer through a small receive buffer (so that the kernel
 * takes a little of it at a time), 10 ms apart: some 64 KiB each, 2.5 s
 * in all, the server still writing it past the idle timeout. */
static void *read_slowly(void *arg)
{
    struct reader *r = arg;
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)r->port)};
    static const char req[] = "GET /big HTTP/1.1\r\nHost: t\r\n\r\n";
    static char buf[256 << 10];
    struct timespec pause = {0, 10 * 1000000};
    int fd = socket(AF_INET, SOCK_STREAM, 0), small = 64 << 10;
    size_t head = 0, got;
    ssize_t n;
    char *end;

    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        write(fd, req, sizeof req - 1) == (ssize_t)sizeof req - 1) {
        while ((n = read(fd, buf + head, sizeof buf - 1 - head)) > 0) {
            got = head + (size_t)n;
            if (r->length < 0) { /* the headers, then the body */
                buf[got] = '\0';
                if ((end = strstr(buf, "\r\n\r\n")) == NULL) {
                    head = got;
                    continue;
                }
                r->length =
                    strtol(strstr(buf, "Content-Length:") + 15, NULL, 10);
                r->body = got - (size_t)(end + 4 - buf);
                head = 0;
            } else {
                r->body += got;
            }
            if ((long)r->body >= r->length)
                break;
            nanosleep(&pause, NULL);
        }
    }
    close(fd);
    uv_async_send(&r->done);
    return NULL;
}

static void on_done(uv_async_t *a)
{
    uv_close((uv_handle_t *)a, NULL);
}

static void test_slow_reader_gets_all(void **state)
{
    struct httpd_config cfg = {"test",  "127.0.0.1", 0,
                               IDLE_MS, big_answer,  NULL};
    struct reader r = {.length = -1};
    struct httpd *h;
    char err[256];
    pthread_t t;
    uv_loop_t loop;

    (void)state;
    uv_loop_init(&loop);
    assert_int_equal(httpd_start(&h, &loop, &cfg, err, sizeof err), 0);
    r.port = httpd_port(h);
    uv_async_init(&loop, &r.done, on_done);
    assert_int_equal(pthread_create(&t, NULL, read_slowly, &r), 0);
    while (uv_is_active((uv_handle_t *)&r.done) &&
           !uv_is_closing((uv_handle_t *)&r.done))
        uv_run(&loop, UV_RUN_ONCE);
    pthread_join(t, NULL);
    httpd_stop(h);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
    assert_int_equal(r.length, BIG);
    assert_int_equal(r.body, BIG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slow_reader_gets_all),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
