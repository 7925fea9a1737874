/* See rcp_script.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include "rcp_script.h"
#include "tumbler/recipes.h"

static uint8_t buf[4096];

struct tb_client *rs_open_client(int readonly_allowed)
{
    struct tb_options o = {0};
    struct tb_connect_req rq;
    struct tb_client *c;

    o.hosts = "h:1";
    o.session_timeout_ms = 6000;
    o.readonly_allowed = readonly_allowed;
    o.state_cb = tb_recipes_state_cb;
    assert_int_equal(tb_client_init(&c, &o), 0);
    c->now = clock_fn;
    c->connect_hook = hook;
    pump(c);
    srv_accept(RS_SID, 6000, 0, &rq);
    pump(c);
    assert_int_equal(tb_client_state(c), TB_SESSION_CONNECTED);
    return c;
}

void rs_reconnect(struct tb_client *c, int readonly)
{
    struct tb_connect_req rq;

    close(server_fd);
    server_fd = -1;
    pump(c);
    fake_now += 600; /* past any backoff */
    pump(c);
    srv_accept(RS_SID, 6000, readonly, &rq);
    assert_int_equal(rq.session_id, RS_SID);
    pump(c);
}

int32_t rs_expect(int type, struct tb_rd *body)
{
    struct tb_rd rest;
    struct tb_request_header h =
        srv_request(buf, sizeof buf, body != NULL ? body : &rest);

    assert_int_equal(h.type, type);
    return h.xid;
}

int32_t rs_expect_at(int type, const char *path)
{
    struct tb_rd body;
    int32_t xid = rs_expect(type, &body);
    struct tb_str p;

    assert_int_equal(tb_get_STR(&body, &p), 0);
    assert_true(tb_str_eq(p, tb_str_c(path)));
    return xid;
}

void rs_reply_sync(int32_t xid, const char *path)
{
    struct tb_path_resp pr = {tb_str_c(path)};
    struct tb_wbuf b;

    tb_wbuf_init(&b);
    tb_path_resp_encode(&b, &pr);
    srv_reply(xid, 300, 0, &b);
    tb_wbuf_free(&b);
}

void rs_reply_stat(int32_t xid, int64_t czxid, int64_t owner)
{
    struct tb_stat st = {0};
    struct tb_wbuf b;

    st.czxid = czxid;
    st.mzxid = czxid;
    st.ephemeral_owner = owner;
    tb_wbuf_init(&b);
    tb_put_STAT(&b, &st);
    srv_reply(xid, 300, 0, &b);
    tb_wbuf_free(&b);
}

void rs_reply_data(int32_t xid, const void *data, size_t len, int64_t czxid,
                   int64_t owner)
{
    struct tb_get_data_resp rs = {{data, len}, {0}};
    struct tb_wbuf b;

    rs.stat.czxid = czxid;
    rs.stat.mzxid = czxid;
    rs.stat.ephemeral_owner = owner;
    tb_wbuf_init(&b);
    tb_get_data_resp_encode(&b, &rs);
    srv_reply(xid, 300, 0, &b);
    tb_wbuf_free(&b);
}

void rs_reply_create(int32_t xid, const char *path, int64_t czxid)
{
    struct tb_stat st = {0};
    struct tb_wbuf b;

    st.czxid = czxid;
    st.mzxid = czxid;
    st.ephemeral_owner = RS_SID;
    tb_wbuf_init(&b);
    tb_put_STR(&b, tb_str_c(path));
    tb_put_STAT(&b, &st);
    srv_reply(xid, czxid, 0, &b);
    tb_wbuf_free(&b);
}

void rs_reply_names(int32_t xid, const char *const *names, int stat, int32_t cv)
{
    struct tb_stat st = {0};
    struct tb_wbuf b;
    int i, n = 0;

    while (names[n] != NULL)
        n++;
    st.cversion = cv;
    tb_wbuf_init(&b);
    tb_put_I32(&b, n);
    for (i = 0; i < n; i++)
        tb_put_STR(&b, tb_str_c(names[i]));
    if (stat)
        tb_put_STAT(&b, &st);
    srv_reply(xid, 300, 0, &b);
    tb_wbuf_free(&b);
}

void rs_cut(struct tb_client *c)
{
    close(server_fd);
    server_fd = -1;
    pump(c);
}

void rs_close(struct tb_client *c)
{
    rs_cut(c);
    tb_client_close(c);
}

void rs_done_cb(int rc, void *data)
{
    struct rs_done *d = data;

    d->calls++;
    d->rc = rc;
}
