/* The scripted server of the client's unit tests (client_fixture.h). */
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "client_fixture.h"

/* ---- fake clock and connection ---- */

int64_t fake_now;
int server_fd = -1;
int connects;
int refuse;

int64_t clock_fn(void)
{
    return __atomic_load_n(&fake_now, __ATOMIC_SEQ_CST);
}

void *advance_later(void *arg)
{
    (void)arg;
    usleep(100000);
    __atomic_add_fetch(&fake_now, 5000, __ATOMIC_SEQ_CST);
    return NULL;
}

int hook(struct tb_client *c, const struct host *h)
{
    int sv[2];

    (void)c;
    (void)h;
    if (refuse)
        return -1;
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    fcntl(sv[0], F_SETFL, O_NONBLOCK);
    if (server_fd >= 0)
        close(server_fd);
    server_fd = sv[1];
    connects++;
    return sv[0];
}

/* Reads one frame from the client (bounded wait); returns its length. */
size_t srv_read(uint8_t *buf, size_t cap)
{
    struct pollfd p = {server_fd, POLLIN, 0};
    uint8_t hdr[4];
    size_t len, got = 0;

    assert_true(poll(&p, 1, 2000) == 1);
    assert_int_equal(read(server_fd, hdr, 4), 4);
    len = tb_load_be32(hdr);
    assert_true(len <= cap);
    while (got < len) {
        ssize_t n = read(server_fd, buf + got, len - got);
        assert_true(n > 0);
        got += (size_t)n;
    }
    return len;
}

int srv_has_data(void)
{
    struct pollfd p = {server_fd, POLLIN, 0};
    return poll(&p, 1, 0) == 1;
}

int soft_mode;

void srv_send(struct tb_wbuf *w)
{
    ssize_t n;

    assert_false(w->oom);
    n = server_fd >= 0 ? write(server_fd, w->base, w->len) : -1;
    if (!soft_mode)
        assert_int_equal(n, (ssize_t)w->len);
    tb_wbuf_free(w);
}

size_t srv_accept(int64_t sid, int32_t timeout, int readonly,
                  struct tb_connect_req *rq)
{
    uint8_t buf[128];
    struct tb_rd rd;
    struct tb_connect_resp rs = {0, timeout, sid, {"0123456789abcdef", 16},
                                 1, readonly};
    struct tb_wbuf w;
    size_t start, n = srv_read(buf, sizeof buf);

    rd = tb_rd_make(buf, n);
    assert_int_equal(tb_connect_req_decode(&rd, rq), 0);
    tb_wbuf_init(&w);
    start = tb_frame_begin(&w);
    tb_connect_resp_encode(&w, &rs);
    tb_frame_end(&w, start);
    srv_send(&w);
    return n;
}

void srv_handshake(int64_t sid, int32_t timeout)
{
    struct tb_connect_req rq;

    assert_int_equal(srv_accept(sid, timeout, 0, &rq), 45);
    assert_true(rq.has_readonly);
}

/* A reply frame: header then `body` bytes. */
void srv_reply(int32_t xid, int64_t zxid, int32_t err,
               const struct tb_wbuf *body)
{
    struct tb_wbuf w;
    struct tb_reply_header h = {xid, zxid, err};
    size_t start;

    tb_wbuf_init(&w);
    start = tb_frame_begin(&w);
    tb_reply_header_encode(&w, &h);
    if (body)
        tb_wbuf_put(&w, body->base, body->len);
    tb_frame_end(&w, start);
    srv_send(&w);
}

void srv_event(int type, const char *path)
{
    struct tb_wbuf b;
    struct tb_watcher_event ev = {type, 3, tb_str_c(path)};

    tb_wbuf_init(&b);
    tb_watcher_event_encode(&b, &ev);
    srv_reply(-1, -1, 0, &b);
    tb_wbuf_free(&b);
}

/* Closes a connected handle, the closeSession reply written beforehand
 * (close waits for it; its xid is the next one). */
void close_replied(struct tb_client *c)
{
    if (server_fd >= 0 && c->phase == PH_OPEN)
        srv_reply(c->next_xid, 99, 0, NULL);
    tb_client_close(c);
}

/* Reads a request: its header, and the body in `body` (a view). */
struct tb_request_header srv_request(uint8_t *buf, size_t cap,
                                     struct tb_rd *body)
{
    struct tb_request_header h;
    size_t n = srv_read(buf, cap);

    *body = tb_rd_make(buf, n);
    assert_int_equal(tb_request_header_decode(body, &h), 0);
    return h;
}

void pump(struct tb_client *c)
{
    int i;

    for (i = 0; i < 5; i++)
        tb_client_process(c, TB_EV_READ | TB_EV_WRITE);
}

struct tb_client *make(const char *hosts, int timeout)
{
    struct tb_options o = {0};
    struct tb_client *c;

    o.hosts = hosts;
    o.session_timeout_ms = timeout;
    assert_int_equal(tb_client_init(&c, &o), 0);
    c->now = clock_fn;
    c->connect_hook = hook;
    return c;
}

struct tb_client *connected(const char *hosts, int64_t sid)
{
    struct tb_client *c = make(hosts, 6000);

    pump(c);
    srv_handshake(sid, 6000);
    pump(c);
    assert_int_equal(tb_client_state(c), TB_SESSION_CONNECTED);
    return c;
}

int setup(void **state)
{
    (void)state;
    fake_now = 1000000;
    connects = 0;
    refuse = 0;
    server_fd = -1;
    return 0;
}

int teardown(void **state)
{
    (void)state;
    if (server_fd >= 0)
        close(server_fd);
    server_fd = -1;
    tb_heap_set(NULL);
    return 0;
}

/* ---- callback recorders ---- */

void rec_stat(struct tb_client *c, int rc, const struct tb_stat *st, void *data)
{
    struct rec *r = data;

    (void)c;
    (void)st;
    r->calls++;
    r->rc = rc;
}

void rec_data(struct tb_client *c, int rc, const void *v, size_t len,
              const struct tb_stat *st, void *data)
{
    struct rec *r = data;

    (void)c;
    (void)st;
    r->calls++;
    r->rc = rc;
    if (rc == 0)
        snprintf(r->value, sizeof r->value, "%.*s", (int)len, (const char *)v);
}

void rec_strings(struct tb_client *c, int rc, const struct tb_strings *v,
                 const struct tb_stat *st, void *data)
{
    struct rec *r = data;

    (void)c;
    (void)v;
    (void)st;
    r->calls++;
    r->rc = rc;
}

void rec_void(struct tb_client *c, int rc, void *data)
{
    struct rec *r = data;

    (void)c;
    r->calls++;
    r->rc = rc;
}

void rec_watch(struct tb_client *c, const struct tb_event *ev, void *data)
{
    struct rec *r = data;

    (void)c;
    r->events++;
    r->ev_type = ev->type;
    r->ev_rc = ev->rc;
    r->ev_final = ev->final;
    snprintf(r->ev_path, sizeof r->ev_path, "%s", ev->path);
}
