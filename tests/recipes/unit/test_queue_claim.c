/* A locking queue's claim whose create lost its reply, against the
 * client's scripted server (tests/unit/client_fixture.c: a socketpair and
 * a fake clock, loop mode): the create made again finds taken/X there
 * (NodeExists), and the take looks at that claim to tell whether it is
 * the one its lost create made.  Our session as its owner is not enough:
 * two handles on one client share the session, and the other's claim is
 * not ours; the claim's data, the handle's id, tells. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "client_fixture.h"
#include "recipes/queue.h"
#include "tumbler/recipes.h"

#define SID   0x77 /* our session */
#define CLAIM 200  /* the claim's czxid */
#define ITEM  "entry-100-0000000000"

/* ---- the scripted server's side ---- */

static uint8_t buf[4096];

/* Reads the next request, which must be of `type`; its xid, and its path
 * (every request here starts with one) in `path`. */
static int32_t expect_path(int type, char *path, size_t cap)
{
    struct tb_rd body;
    struct tb_request_header h = srv_request(buf, sizeof buf, &body);
    struct tb_str p;

    assert_int_equal(h.type, type);
    assert_int_equal(tb_get_STR(&body, &p), 0);
    assert_true(p.len < cap);
    snprintf(path, cap, "%.*s", (int)p.len, p.ptr);
    return h.xid;
}

/* The same, the path being `want`. */
static int32_t expect_at(int type, const char *want)
{
    char path[256];
    int32_t xid = expect_path(type, path, sizeof path);

    assert_string_equal(path, want);
    return xid;
}

/* A getChildren2 reply: `n` names (0 or 1), cversion 1. */
static void reply_children(int32_t xid, const char *name)
{
    struct tb_stat st = {0};
    struct tb_wbuf b;

    st.cversion = 1;
    tb_wbuf_init(&b);
    tb_put_I32(&b, name != NULL ? 1 : 0);
    if (name != NULL)
        tb_put_STR(&b, tb_str_c(name));
    tb_put_STAT(&b, &st);
    srv_reply(xid, 300, 0, &b);
    tb_wbuf_free(&b);
}

static void reply_stat(int32_t xid, int64_t czxid, int64_t owner)
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

static void reply_data(int32_t xid, const char *data, int64_t czxid,
                       int64_t owner)
{
    struct tb_get_data_resp rs = {tb_str_c(data), {0}};
    struct tb_wbuf b;

    rs.stat.czxid = czxid;
    rs.stat.mzxid = czxid;
    rs.stat.ephemeral_owner = owner;
    tb_wbuf_init(&b);
    tb_get_data_resp_encode(&b, &rs);
    srv_reply(xid, 300, 0, &b);
    tb_wbuf_free(&b);
}

/* ---- the client's side ---- */

static struct tb_client *open_client(void)
{
    struct tb_options o = {0};
    struct tb_connect_req rq;
    struct tb_client *c;

    o.hosts = "h:1";
    o.session_timeout_ms = 6000;
    o.state_cb = tb_recipes_state_cb;
    assert_int_equal(tb_client_init(&c, &o), 0);
    c->now = clock_fn;
    c->connect_hook = hook;
    pump(c);
    srv_accept(SID, 6000, 0, &rq);
    pump(c);
    assert_int_equal(tb_client_state(c), TB_SESSION_CONNECTED);
    return c;
}

/* The connection breaks and the client reconnects within the session. */
static void reconnect(struct tb_client *c)
{
    struct tb_connect_req rq;

    close(server_fd);
    server_fd = -1;
    pump(c);
    fake_now += 600; /* past any backoff */
    pump(c);
    srv_accept(SID, 6000, 0, &rq);
    assert_int_equal(rq.session_id, SID);
    pump(c);
}

struct taken_item {
    int calls, rc;
    char value[64];
};

static void on_item(int rc, const void *value, size_t len, void *data)
{
    struct taken_item *it = data;

    it->calls++;
    it->rc = rc;
    if (rc == 0)
        snprintf(it->value, sizeof it->value, "%.*s", (int)len,
                 (const char *)value);
}

/* A take on the locking queue /q up to its claim's create made again
 * after the first one lost its reply, that create answered NodeExists;
 * then the look at the claim taken/ITEM, answered as a claim of session
 * SID with `data` as its data (a getData; an exists gets the stat). */
static void take_to_claim_look(struct tb_client *c, struct tb_dqueue *q,
                               struct taken_item *it, const char *data)
{
    char path[256];
    int32_t xid;
    int i;

    assert_int_equal(tb_dqueue_take(q, -1, on_item, it), 0);
    pump(c);
    for (i = 0; i < 3; i++) { /* /q, entries, taken: made already */
        xid = expect_path(TB_OP_CREATE2, path, sizeof path);
        srv_reply(xid, 300, TB_ENODEEXISTS, NULL);
    }
    pump(c);
    xid = expect_at(TB_OP_GETCHILDREN2, "/q/entries");
    reply_children(xid, ITEM);
    pump(c);
    xid = expect_at(TB_OP_GETCHILDREN2, "/q/taken");
    reply_children(xid, NULL);
    pump(c);
    (void)expect_at(TB_OP_CREATE2, "/q/taken/" ITEM); /* reply lost */
    reconnect(c);
    xid = expect_at(TB_OP_CREATE2, "/q/taken/" ITEM); /* made again */
    srv_reply(xid, 301, TB_ENODEEXISTS, NULL);
    pump(c);
    {
        struct tb_rd body;
        struct tb_request_header h = srv_request(buf, sizeof buf, &body);
        struct tb_str p;

        assert_int_equal(tb_get_STR(&body, &p), 0);
        assert_true(tb_str_eq(p, TB_STR("/q/taken/" ITEM)));
        assert_true(h.type == TB_OP_GETDATA || h.type == TB_OP_EXISTS);
        if (h.type == TB_OP_GETDATA)
            reply_data(h.xid, data, CLAIM, SID);
        else
            reply_stat(h.xid, CLAIM, SID);
    }
    pump(c);
}

static void close_all(struct tb_client *c, struct tb_dqueue *q,
                      struct tb_dqueue *q2)
{
    /* Without a connection nothing waits for the server's answers. */
    close(server_fd);
    server_fd = -1;
    pump(c);
    tb_dqueue_free(q);
    tb_dqueue_free(q2);
    pump(c);
    tb_client_close(c);
}

/* The claim there is another handle's of this client (its id as the
 * data): not ours, the take does not deliver the item; it has no other
 * candidate and waits for the queue to change. */
static void test_claim_of_other_handle(void **state)
{
    struct tb_client *c = open_client();
    struct tb_dqueue *q, *other;
    struct taken_item it = {0};

    (void)state;
    assert_int_equal(tb_dqueue_new(&q, c, "/q", TB_QUEUE_LOCKING), 0);
    assert_int_equal(tb_dqueue_new(&other, c, "/q", TB_QUEUE_LOCKING), 0);
    assert_string_not_equal(q->id, other->id);
    take_to_claim_look(c, q, &it, other->id);
    assert_int_equal(it.calls, 0);
    if (srv_has_data()) {
        char path[256];
        struct tb_rd body;
        struct tb_request_header h = srv_request(buf, sizeof buf, &body);
        struct tb_str p;

        assert_int_equal(tb_get_STR(&body, &p), 0);
        snprintf(path, sizeof path, "%.*s", (int)p.len, p.ptr);
        if (h.type == TB_OP_GETDATA) { /* reads the item: takes it */
            reply_data(h.xid, "item", 150, 0);
            pump(c);
            assert_int_equal(it.calls, 0); /* delivered another's item */
        }
        /* It waits: the entries' children, then the claims'. */
        assert_int_equal(h.type, TB_OP_GETCHILDREN2);
        assert_string_equal(path, "/q/entries");
    } else {
        fail_msg("neither the item read nor the wait");
    }
    assert_int_equal(it.calls, 0);
    assert_null(q->claimed);
    close_all(c, q, other);
}

/* The claim there is this handle's (its id): the lost create made it;
 * the take reads the item and delivers it, holding that claim. */
static void test_claim_of_this_handle(void **state)
{
    struct tb_client *c = open_client();
    struct tb_dqueue *q, *other;
    struct taken_item it = {0};
    int32_t xid;

    (void)state;
    assert_int_equal(tb_dqueue_new(&q, c, "/q", TB_QUEUE_LOCKING), 0);
    assert_int_equal(tb_dqueue_new(&other, c, "/q", TB_QUEUE_LOCKING), 0);
    take_to_claim_look(c, q, &it, q->id);
    xid = expect_at(TB_OP_GETDATA, "/q/entries/" ITEM);
    reply_data(xid, "item", 150, 0);
    pump(c);
    assert_int_equal(it.calls, 1);
    assert_int_equal(it.rc, 0);
    assert_string_equal(it.value, "item");
    assert_non_null(q->claimed);
    assert_string_equal(q->claimed, ITEM);
    assert_int_equal(q->claimed_czxid, CLAIM);
    close_all(c, q, other);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_claim_of_other_handle, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_claim_of_this_handle, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
