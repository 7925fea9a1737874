/* Unit tests of what some operations send and how their answers reach
 * the caller, against the scripted server of client_fixture.h: a multi's
 * results, getConfig outside the chroot, reconfig's request, a null
 * string where a reply must have one, and tb_remove_watches behind
 * requests still outstanding (among them ones that set the watcher it
 * removes). */
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

static void test_multi_results(void **state)
{
    struct tb_client *c = connected("h:1/ch", 5);
    struct tb_multi *m = tb_multi_new();
    uint8_t buf[1024];
    struct tb_rd body;
    struct tb_request_header h;
    struct tb_multi_op op;
    struct tb_wbuf w;
    struct tb_multi_header mh;
    struct tb_error_resp er;
    struct tb_path_resp pr = {TB_STR("/ch/a")};
    struct tb_multi_results res;
    int n = 0, rc;

    (void)state;
    assert_int_equal(tb_multi_create(m, "/a", "x", 1, NULL, TB_PERSISTENT, 0),
                     0);
    assert_int_equal(tb_multi_delete(m, "/b", -1), 0);
    assert_int_equal(tb_multi_get_data(m, "/a"), TB_EBADARGUMENTS);
    assert_int_equal(tb_multi_exec(c, m, NULL, NULL), 0); /* fire & forget */
    pump(c);
    h = srv_request(buf, sizeof buf, &body);
    assert_int_equal(h.type, TB_OP_MULTI);
    while ((rc = tb_multi_next(&body, TB_OP_MULTI, &op)) == 1)
        n++;
    assert_int_equal(rc, 0);
    assert_int_equal(n, 2);
    /* create OK then delete failed: a multi result, header err 0 */
    tb_wbuf_init(&w);
    mh = (struct tb_multi_header){TB_OP_ERROR, 0, 0};
    tb_multi_header_encode(&w, &mh);
    er.err = 0;
    tb_error_resp_encode(&w, &er);
    mh = (struct tb_multi_header){TB_OP_ERROR, 0, TB_ENONODE};
    tb_multi_header_encode(&w, &mh);
    er.err = TB_ENONODE;
    tb_error_resp_encode(&w, &er);
    tb_multi_end_encode(&w);
    srv_reply(h.xid, 8, 0, &w);
    tb_wbuf_free(&w);
    pump(c);
    /* and a successful one, synchronously in loop mode */
    tb_wbuf_init(&w);
    mh = (struct tb_multi_header){TB_OP_CREATE, 0, 0};
    tb_multi_header_encode(&w, &mh);
    tb_path_resp_encode(&w, &pr);
    mh = (struct tb_multi_header){TB_OP_DELETE, 0, 0};
    tb_multi_header_encode(&w, &mh);
    tb_multi_end_encode(&w);
    /* the reply is written before the call: the call reads it */
    srv_reply(c->next_xid, 9, 0, &w);
    tb_wbuf_free(&w);
    assert_int_equal(tb_multi_exec_sync(c, m, &res), 0);
    assert_int_equal(res.count, 2);
    assert_string_equal(res.v[0].path, "/a");
    assert_int_equal(res.v[1].op, TB_OP_DELETE);
    tb_multi_results_free(&res);
    tb_multi_free(m);
    close_replied(c);
}

/* getConfig goes to /zookeeper/config whatever the chroot; reconfig sends
 * what is not given as null strings, and takes `members` or the parts. */
static void test_config_and_reconfig(void **state)
{
    struct tb_client *c = make("h:1/root", 6000);
    uint8_t buf[512];
    struct tb_rd body;
    struct tb_request_header h;
    struct tb_path_watch_req gq;
    struct tb_reconfig_req rq;
    struct tb_get_data_resp rs = {TB_STR("server.1=a:1:2;3\nversion=0"), {0}};
    struct tb_wbuf w;
    struct rec r = {0};

    (void)state;
    pump(c);
    srv_handshake(0x42, 5000);
    pump(c);
    tb_wbuf_init(&w);
    tb_get_data_resp_encode(&w, &rs);

    assert_int_equal(tb_get_config(c, rec_data, &r), 0);
    pump(c);
    h = srv_request(buf, sizeof buf, &body);
    assert_int_equal(h.type, TB_OP_GETDATA);
    assert_int_equal(tb_path_watch_req_decode(&body, &gq), 0);
    assert_true(tb_str_eq(gq.path, TB_STR("/zookeeper/config")));
    assert_int_equal(gq.watch, 0);
    srv_reply(h.xid, 7, 0, &w);
    pump(c);
    assert_int_equal(r.calls, 1);
    assert_string_equal(r.value, "server.1=a:1:2;3\nversion=0");

    assert_int_equal(tb_reconfig(c, "server.4=d:1:2;3", "2", NULL, 0x100000003,
                                 rec_data, &r),
                     0);
    pump(c);
    h = srv_request(buf, sizeof buf, &body);
    assert_int_equal(h.type, TB_OP_RECONFIG);
    assert_int_equal(tb_reconfig_req_decode(&body, &rq), 0);
    assert_true(tb_str_eq(rq.joining, TB_STR("server.4=d:1:2;3")));
    assert_true(tb_str_eq(rq.leaving, TB_STR("2")));
    assert_null(rq.new_members.ptr);
    assert_int_equal(rq.config_id, 0x100000003);
    srv_reply(h.xid, 8, 0, &w);
    pump(c);
    assert_int_equal(r.calls, 2);
    assert_int_equal(r.rc, 0);

    assert_int_equal(
        tb_reconfig(c, NULL, "2", "server.1=a:1:2", -1, rec_data, &r),
        TB_EBADARGUMENTS);
    assert_int_equal(r.calls, 2);
    tb_wbuf_free(&w);
    close_replied(c);
}

/* ---- a null string (length -1) in a reply ---- */

static void rec_create(struct tb_client *c, int rc, const char *path,
                       const struct tb_stat *st, void *data)
{
    struct rec *r = data;

    (void)c;
    (void)st;
    r->calls++;
    r->rc = rc;
    if (rc == 0)
        snprintf(r->path, sizeof r->path, "%s", path);
}

static void rec_acl(struct tb_client *c, int rc, const struct tb_acl_list *a,
                    const struct tb_stat *st, void *data)
{
    struct rec *r = data;

    (void)c;
    (void)st;
    r->calls++;
    r->rc = rc;
    if (rc == 0 && a->count > 0)
        snprintf(r->value, sizeof r->value, "%s:%s", a->v[0].scheme,
                 a->v[0].id);
}

static void rec_whoami(struct tb_client *c, int rc,
                       const struct tb_client_info *v, int32_t n, void *data)
{
    struct rec *r = data;

    (void)c;
    r->calls++;
    r->rc = rc;
    if (rc == 0 && n > 0)
        snprintf(r->value, sizeof r->value, "%s:%s", v[0].scheme, v[0].user);
}

static void rec_multi(struct tb_client *c, int rc, const struct tb_op_result *v,
                      int n, void *data)
{
    struct rec *r = data;

    (void)c;
    r->calls++;
    r->rc = rc;
    r->events = n;
    if (rc == 0 && n > 0 && v[0].op == TB_OP_GETDATA)
        snprintf(r->value, sizeof r->value, "%s",
                 v[0].value == NULL ? "(null)" : "(not null)");
}

/* Null data, as ZooKeeper sends for a node created with none. */
static void rec_null_data(struct tb_client *c, int rc, const void *v,
                          size_t len, const struct tb_stat *st, void *data)
{
    struct rec *r = data;

    (void)c;
    r->calls++;
    r->rc = rc;
    snprintf(r->value, sizeof r->value, "%s %zu %s",
             v == NULL ? "(null)" : "(not null)", len,
             st == NULL ? "no stat" : "stat");
}

/* Answers the request just sent with `body` (freed), a reply the handle
 * is to refuse: the connection is dropped as for any malformed frame, the
 * request failed with TB_ECONNECTIONLOSS, and the handle back on the
 * session at the next connection.  `r` is the request's recorder. */
static void answer_refused(struct tb_client *c, struct tb_wbuf *body,
                           int32_t type, struct rec *r)
{
    uint8_t buf[512];
    struct tb_rd rd;
    struct tb_request_header h;
    int calls = r->calls;

    pump(c);
    h = srv_request(buf, sizeof buf, &rd);
    assert_int_equal(h.type, type);
    srv_reply(h.xid, 5, 0, body);
    tb_wbuf_free(body);
    pump(c);
    assert_int_equal(r->calls, calls + 1);
    assert_int_equal(r->rc, TB_ECONNECTIONLOSS);
    assert_int_equal(tb_client_state(c), TB_SESSION_SUSPENDED);
    fake_now += 600;
    pump(c);
    srv_handshake(0x42, 6000);
    pump(c);
    assert_int_equal(tb_client_state(c), TB_SESSION_CONNECTED);
}

/* A vector of one string, null. */
static void put_null_list(struct tb_wbuf *w)
{
    tb_put_I32(w, 1);
    tb_put_STR(w, TB_STR_NULL);
}

/* A child's name, a created path, an ACL entry's scheme or id and a
 * whoAmI identity are never null: a reply with one (length -1) is a
 * malformed reply, not a string to write a NUL into. */
static void test_null_child_refused(void **state)
{
    struct tb_client *c = connected("h:1", 0x42);
    struct tb_stat st = {0};
    struct tb_wbuf w;
    struct rec r = {0};

    (void)state;
    assert_int_equal(tb_get_children(c, "/p", NULL, NULL, rec_strings, &r), 0);
    tb_wbuf_init(&w);
    put_null_list(&w);
    answer_refused(c, &w, TB_OP_GETCHILDREN, &r);

    assert_int_equal(tb_get_children2(c, "/p", NULL, NULL, rec_strings, &r), 0);
    tb_wbuf_init(&w);
    put_null_list(&w);
    tb_put_STAT(&w, &st);
    answer_refused(c, &w, TB_OP_GETCHILDREN2, &r);

    assert_int_equal(tb_get_ephemerals(c, "/p", rec_strings, &r), 0);
    tb_wbuf_init(&w);
    put_null_list(&w);
    answer_refused(c, &w, TB_OP_GETEPHEMERALS, &r);
    close_replied(c);
}

static void test_null_created_path_refused(void **state)
{
    struct tb_client *c = connected("h:1", 0x42);
    struct tb_stat st = {0};
    struct tb_wbuf w;
    struct rec r = {0};

    (void)state;
    assert_int_equal(
        tb_create(c, "/a", "x", 1, NULL, TB_PERSISTENT, 0, rec_create, &r), 0);
    tb_wbuf_init(&w);
    tb_put_STR(&w, TB_STR_NULL);
    tb_put_STAT(&w, &st);
    answer_refused(c, &w, TB_OP_CREATE2, &r);
    close_replied(c);
}

/* An ACL entry's scheme null, then its id. */
static void test_null_acl_id_refused(void **state)
{
    struct tb_client *c = connected("h:1", 0x42);
    struct tb_stat st = {0};
    struct tb_acl a;
    struct tb_wbuf w;
    struct rec r = {0};
    int i;

    (void)state;
    for (i = 0; i < 2; i++) {
        assert_int_equal(tb_get_acl(c, "/p", rec_acl, &r), 0);
        a.perms = TB_PERM_ALL;
        a.id.scheme = i == 0 ? TB_STR_NULL : TB_STR("world");
        a.id.id = i == 0 ? TB_STR("anyone") : TB_STR_NULL;
        tb_wbuf_init(&w);
        tb_put_I32(&w, 1);
        tb_put_acl(&w, &a);
        tb_put_STAT(&w, &st);
        answer_refused(c, &w, TB_OP_GETACL, &r);
    }
    close_replied(c);
}

/* whoAmI: an identity's scheme null, then its user. */
static void test_null_whoami_refused(void **state)
{
    struct tb_client *c = connected("h:1", 0x42);
    struct tb_id id;
    struct tb_wbuf w;
    struct rec r = {0};
    int i;

    (void)state;
    for (i = 0; i < 2; i++) {
        assert_int_equal(tb_whoami(c, rec_whoami, &r), 0);
        id.scheme = i == 0 ? TB_STR_NULL : TB_STR("ip");
        id.id = i == 0 ? TB_STR("127.0.0.1") : TB_STR_NULL;
        tb_wbuf_init(&w);
        tb_put_I32(&w, 1);
        tb_put_id(&w, &id);
        answer_refused(c, &w, TB_OP_WHOAMI, &r);
    }
    close_replied(c);
}

/* A multiRead's getChildren result with a null child; a multi's create
 * result (create and create2) with a null path. */
static void test_null_in_multi_refused(void **state)
{
    struct tb_client *c = connected("h:1", 0x42);
    struct tb_stat st = {0};
    struct tb_multi *m;
    struct tb_multi_header mh;
    struct tb_wbuf w;
    struct rec r = {0};
    int i;

    (void)state;
    m = tb_multi_new();
    assert_int_equal(tb_multi_get_children(m, "/p"), 0);
    assert_int_equal(tb_multi_exec(c, m, rec_multi, &r), 0);
    tb_multi_free(m);
    tb_wbuf_init(&w);
    mh = (struct tb_multi_header){TB_OP_GETCHILDREN, 0, 0};
    tb_multi_header_encode(&w, &mh);
    put_null_list(&w);
    tb_multi_end_encode(&w);
    answer_refused(c, &w, TB_OP_MULTIREAD, &r);

    for (i = 0; i < 2; i++) {
        m = tb_multi_new();
        assert_int_equal(
            tb_multi_create(m, "/a", "x", 1, NULL, TB_PERSISTENT, 0), 0);
        assert_int_equal(tb_multi_exec(c, m, rec_multi, &r), 0);
        tb_multi_free(m);
        tb_wbuf_init(&w);
        mh = (struct tb_multi_header){i == 0 ? TB_OP_CREATE : TB_OP_CREATE2, 0,
                                      0};
        tb_multi_header_encode(&w, &mh);
        tb_put_STR(&w, TB_STR_NULL);
        if (i == 1)
            tb_put_STAT(&w, &st);
        tb_multi_end_encode(&w);
        answer_refused(c, &w, TB_OP_MULTI, &r);
    }
    close_replied(c);
}

/* Null data is data: getData's reply (and a multiRead's getData result)
 * with length -1 is answered with value NULL, as ZooKeeper's clients
 * answer null. */
static void test_null_data_accepted(void **state)
{
    struct tb_client *c = connected("h:1", 0x42);
    struct tb_get_data_resp dr = {TB_STR_NULL, {0}};
    struct tb_multi_header mh;
    struct tb_multi *m;
    uint8_t buf[512];
    struct tb_rd rd;
    struct tb_request_header h;
    struct tb_wbuf w;
    struct rec r = {0}, q = {0};

    (void)state;
    assert_int_equal(tb_get_data(c, "/p", NULL, NULL, rec_null_data, &r), 0);
    pump(c);
    h = srv_request(buf, sizeof buf, &rd);
    assert_int_equal(h.type, TB_OP_GETDATA);
    tb_wbuf_init(&w);
    tb_get_data_resp_encode(&w, &dr);
    srv_reply(h.xid, 5, 0, &w);
    tb_wbuf_free(&w);
    pump(c);
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.value, "(null) 0 stat");

    m = tb_multi_new();
    assert_int_equal(tb_multi_get_data(m, "/p"), 0);
    assert_int_equal(tb_multi_exec(c, m, rec_multi, &q), 0);
    tb_multi_free(m);
    pump(c);
    h = srv_request(buf, sizeof buf, &rd);
    assert_int_equal(h.type, TB_OP_MULTIREAD);
    tb_wbuf_init(&w);
    mh = (struct tb_multi_header){TB_OP_GETDATA, 0, 0};
    tb_multi_header_encode(&w, &mh);
    tb_get_data_resp_encode(&w, &dr);
    tb_multi_end_encode(&w);
    srv_reply(h.xid, 6, 0, &w);
    tb_wbuf_free(&w);
    pump(c);
    assert_int_equal(q.calls, 1);
    assert_int_equal(q.rc, 0);
    assert_int_equal(q.events, 1);
    assert_string_equal(q.value, "(null)");
    assert_int_equal(tb_client_state(c), TB_SESSION_CONNECTED);
    close_replied(c);
}

/* ---- tb_remove_watches and the requests before it ---- */

/* Reads the next request, which must be of `type`; its xid. */
static int32_t next_request(int32_t type)
{
    uint8_t buf[512];
    struct tb_rd rd;
    struct tb_request_header h = srv_request(buf, sizeof buf, &rd);

    assert_int_equal(h.type, type);
    return h.xid;
}

static void reply_data(int32_t xid, int64_t zxid)
{
    struct tb_get_data_resp dr = {TB_STR("v"), {0}};
    struct tb_wbuf w;

    tb_wbuf_init(&w);
    tb_get_data_resp_encode(&w, &dr);
    srv_reply(xid, zxid, 0, &w);
    tb_wbuf_free(&w);
}

/* A data watcher on `path`, its getData answered. */
static void watch_data(struct tb_client *c, const char *path, tb_watch_cb cb,
                       void *wdata, int64_t zxid)
{
    struct rec g = {0};

    assert_int_equal(tb_get_data(c, path, cb, wdata, rec_data, &g), 0);
    pump(c);
    reply_data(next_request(TB_OP_GETDATA), zxid);
    pump(c);
    assert_int_equal(g.calls, 1);
    assert_int_equal(g.rc, 0);
}

/* A watch set on every read of a node that does not change is one
 * watcher, called once for the change, as ZooKeeper's clients keep one
 * (cb, data) per path and kind; set as a child watch too it is another
 * watcher, called for a deletion as well. */
static void test_same_watcher_set_again(void **state)
{
    struct tb_client *c = connected("h:1", 0x42);
    struct rec w = {0}, g = {0};
    struct tb_wbuf none;
    int i;

    (void)state;
    for (i = 0; i < 100; i++)
        watch_data(c, "/a", rec_watch, &w, 5 + i);
    assert_int_equal(c->nwatchers, 1);
    srv_event(TB_EVENT_DATA_CHANGED, "/a");
    pump(c);
    assert_int_equal(w.events, 1);
    assert_int_equal(w.ev_final, 1);
    assert_int_equal(c->nwatchers, 0);

    watch_data(c, "/a", rec_watch, &w, 200);
    assert_int_equal(tb_get_children(c, "/a", rec_watch, &w, rec_strings, &g),
                     0);
    pump(c);
    tb_wbuf_init(&none);
    tb_put_I32(&none, 0); /* no children */
    srv_reply(next_request(TB_OP_GETCHILDREN), 201, 0, &none);
    tb_wbuf_free(&none);
    pump(c);
    assert_int_equal(g.rc, 0);
    assert_int_equal(c->nwatchers, 2);
    srv_event(TB_EVENT_DELETED, "/a");
    pump(c);
    assert_int_equal(w.events, 3);
    assert_int_equal(c->nwatchers, 0);
    close_replied(c);
}

/* Which callback ran when: each records its rank among them. */
static int order_n;
struct seen {
    int at, calls, rc, ev_type, ev_final;
};

static void seen_void(struct tb_client *c, int rc, void *data)
{
    struct seen *s = data;

    (void)c;
    s->at = ++order_n;
    s->calls++;
    s->rc = rc;
}

static void seen_stat(struct tb_client *c, int rc, const struct tb_stat *st,
                      void *data)
{
    (void)st;
    seen_void(c, rc, data);
}

static void seen_watch(struct tb_client *c, const struct tb_event *ev,
                       void *data)
{
    struct seen *s = data;

    seen_void(c, ev->rc, data);
    s->ev_type = ev->type;
    s->ev_final = ev->final;
}

/* W1 is set; getData sets W2, its reply not in yet.  Removing W1 must not
 * tell the server, whose data watch on /a serves W2 once that getData is
 * done: sent, removeWatches dropped it after the getData set it, and W2
 * never heard of a change. */
static void test_remove_watches_counts_pending_watch(void **state)
{
    struct tb_client *c = connected("h:1", 0x42);
    struct rec w1 = {0}, w2 = {0}, g2 = {0}, rm = {0};
    int32_t x;

    (void)state;
    watch_data(c, "/a", rec_watch, &w1, 5);
    assert_int_equal(tb_get_data(c, "/a", rec_watch, &w2, rec_data, &g2), 0);
    pump(c);
    x = next_request(TB_OP_GETDATA);
    assert_int_equal(tb_remove_watches(c, "/a", TB_WATCHER_DATA, rec_watch, &w1,
                                       0, rec_void, &rm),
                     0);
    pump(c);
    assert_false(srv_has_data()); /* no removeWatches */
    assert_int_equal(rm.calls, 0);
    reply_data(x, 6);
    pump(c);
    assert_int_equal(g2.calls, 1);
    assert_int_equal(w1.events, 1);
    assert_int_equal(w1.ev_type, TB_EVENT_DATA_WATCH_REMOVED);
    assert_int_equal(w1.ev_final, 1);
    assert_int_equal(rm.calls, 1);
    assert_int_equal(rm.rc, 0);
    assert_int_equal(w2.events, 0);
    srv_event(TB_EVENT_DATA_CHANGED, "/a");
    pump(c);
    assert_int_equal(w2.events, 1);
    assert_int_equal(w2.ev_type, TB_EVENT_DATA_CHANGED);
    assert_int_equal(w1.events, 1);
    assert_false(srv_has_data());
    close_replied(c);
}

/* The only watcher on /a is one a getData still unanswered sets: removing
 * it counts it (not TB_ENOWATCHER, which would leave it to be registered
 * anyway and called after the caller gave it up), tells the server after
 * the getData, and takes it out once the getData has set it. */
static void test_remove_watches_takes_pending_watch(void **state)
{
    struct tb_client *c = connected("h:1", 0x42);
    struct rec w1 = {0}, g = {0}, rm = {0}, again = {0};
    int32_t x, y;

    (void)state;
    assert_int_equal(tb_get_data(c, "/a", rec_watch, &w1, rec_data, &g), 0);
    pump(c);
    x = next_request(TB_OP_GETDATA);
    assert_int_equal(tb_remove_watches(c, "/a", TB_WATCHER_DATA, rec_watch, &w1,
                                       0, rec_void, &rm),
                     0);
    /* W1 is on its way out: removing it again finds nothing */
    assert_int_equal(tb_remove_watches(c, "/a", TB_WATCHER_DATA, rec_watch, &w1,
                                       0, rec_void, &again),
                     TB_ENOWATCHER);
    pump(c);
    y = next_request(TB_OP_REMOVEWATCHES); /* nothing else watches /a */
    reply_data(x, 5);
    srv_reply(y, 6, 0, NULL);
    pump(c);
    assert_int_equal(g.calls, 1);
    assert_int_equal(g.rc, 0);
    assert_int_equal(w1.events, 1);
    assert_int_equal(w1.ev_type, TB_EVENT_DATA_WATCH_REMOVED);
    assert_int_equal(w1.ev_final, 1);
    assert_int_equal(rm.calls, 1);
    assert_int_equal(rm.rc, 0);
    assert_int_equal(again.calls, 0);
    assert_int_equal(c->nwatchers, 0);
    srv_event(TB_EVENT_DATA_CHANGED, "/a");
    pump(c);
    assert_int_equal(w1.events, 1);
    close_replied(c);
    assert_int_equal(w1.events, 1);
}

/* The same behind a watcher that stays (W2): the removal of W1, which a
 * getData still unanswered sets, is local, and takes W1 out right after
 * that getData set it; W2 alone hears of the next change. */
static void test_local_remove_takes_pending_watch(void **state)
{
    struct tb_client *c = connected("h:1", 0x42);
    struct rec w1 = {0}, w2 = {0}, g = {0}, rm = {0};
    int32_t x;

    (void)state;
    watch_data(c, "/a", rec_watch, &w2, 5);
    assert_int_equal(tb_get_data(c, "/a", rec_watch, &w1, rec_data, &g), 0);
    pump(c);
    x = next_request(TB_OP_GETDATA);
    assert_int_equal(tb_remove_watches(c, "/a", TB_WATCHER_DATA, rec_watch, &w1,
                                       0, rec_void, &rm),
                     0);
    pump(c);
    assert_false(srv_has_data()); /* no removeWatches: W2 keeps the watch */
    assert_int_equal(rm.calls, 0);
    reply_data(x, 6);
    pump(c);
    assert_int_equal(g.calls, 1);
    assert_int_equal(w1.events, 1);
    assert_int_equal(w1.ev_type, TB_EVENT_DATA_WATCH_REMOVED);
    assert_int_equal(w1.ev_final, 1);
    assert_int_equal(rm.calls, 1);
    assert_int_equal(rm.rc, 0);
    assert_int_equal(w2.events, 0);
    srv_event(TB_EVENT_DATA_CHANGED, "/a");
    pump(c);
    assert_int_equal(w2.events, 1);
    assert_int_equal(w2.ev_type, TB_EVENT_DATA_CHANGED);
    assert_int_equal(w1.events, 1);
    close_replied(c);
}

/* A removal the server need not hear of (W2 keeps the watch) completes in
 * its turn: after the exists sent before it, the watcher's final call
 * just before the removal's callback. */
static void test_local_remove_in_request_order(void **state)
{
    struct tb_client *c = connected("h:1", 0x42);
    struct seen w1 = {0}, w2 = {0}, e = {0}, rm = {0};
    int32_t x;

    (void)state;
    order_n = 0;
    watch_data(c, "/a", seen_watch, &w1, 5);
    watch_data(c, "/a", seen_watch, &w2, 6);
    assert_int_equal(tb_exists(c, "/b", NULL, NULL, seen_stat, &e), 0);
    pump(c);
    x = next_request(TB_OP_EXISTS);
    assert_int_equal(tb_remove_watches(c, "/a", TB_WATCHER_DATA, seen_watch,
                                       &w1, 0, seen_void, &rm),
                     0);
    pump(c);
    assert_false(srv_has_data());
    assert_int_equal(rm.calls, 0);
    assert_int_equal(w1.calls, 0);
    srv_reply(x, 7, TB_ENONODE, NULL);
    pump(c);
    assert_int_equal(e.calls, 1);
    assert_int_equal(e.rc, TB_ENONODE);
    assert_int_equal(e.at, 1);
    assert_int_equal(w1.calls, 1);
    assert_int_equal(w1.ev_type, TB_EVENT_DATA_WATCH_REMOVED);
    assert_int_equal(w1.at, 2);
    assert_int_equal(rm.calls, 1);
    assert_int_equal(rm.rc, 0);
    assert_int_equal(rm.at, 3);
    srv_event(TB_EVENT_DATA_CHANGED, "/a");
    pump(c);
    assert_int_equal(w2.calls, 1);
    assert_int_equal(w2.ev_type, TB_EVENT_DATA_CHANGED);
    assert_int_equal(w1.calls, 1);
    close_replied(c);
}

/* The same, the watch fired while the removal waited: there is nothing
 * left to remove, and the removal says so (TB_ENOWATCHER, as one the
 * server answers; it said 0, and W1 had no removal call). */
static void test_local_remove_after_the_event(void **state)
{
    struct tb_client *c = connected("h:1", 0x42);
    struct seen w1 = {0}, w2 = {0}, e = {0}, rm = {0};
    int32_t x;

    (void)state;
    order_n = 0;
    watch_data(c, "/a", seen_watch, &w1, 5);
    watch_data(c, "/a", seen_watch, &w2, 6);
    assert_int_equal(tb_exists(c, "/b", NULL, NULL, seen_stat, &e), 0);
    pump(c);
    x = next_request(TB_OP_EXISTS);
    assert_int_equal(tb_remove_watches(c, "/a", TB_WATCHER_DATA, seen_watch,
                                       &w1, 0, seen_void, &rm),
                     0);
    srv_event(TB_EVENT_DATA_CHANGED, "/a");
    srv_reply(x, 7, TB_ENONODE, NULL);
    pump(c);
    assert_int_equal(w1.calls, 1);
    assert_int_equal(w1.ev_type, TB_EVENT_DATA_CHANGED);
    assert_int_equal(w2.calls, 1);
    assert_int_equal(rm.calls, 1);
    assert_int_equal(rm.rc, TB_ENOWATCHER);
    close_replied(c);
}

/* Two removals in a row while a request is outstanding: the first is
 * local (W2 remains), the second finds no watcher left once the first
 * has had its turn, and tells the server. */
static void test_remove_after_pending_local_remove(void **state)
{
    struct tb_client *c = connected("h:1", 0x42);
    struct seen w1 = {0}, w2 = {0}, e = {0}, rm1 = {0}, rm2 = {0};
    int32_t x, y;

    (void)state;
    order_n = 0;
    watch_data(c, "/a", seen_watch, &w1, 5);
    watch_data(c, "/a", seen_watch, &w2, 6);
    assert_int_equal(tb_exists(c, "/b", NULL, NULL, seen_stat, &e), 0);
    pump(c);
    x = next_request(TB_OP_EXISTS);
    assert_int_equal(tb_remove_watches(c, "/a", TB_WATCHER_DATA, seen_watch,
                                       &w1, 0, seen_void, &rm1),
                     0);
    /* W1 is on its way out: removing it again finds nothing */
    assert_int_equal(tb_remove_watches(c, "/a", TB_WATCHER_DATA, seen_watch,
                                       &w1, 0, seen_void, &rm1),
                     TB_ENOWATCHER);
    assert_int_equal(tb_remove_watches(c, "/a", TB_WATCHER_DATA, seen_watch,
                                       &w2, 0, seen_void, &rm2),
                     0);
    pump(c);
    y = next_request(TB_OP_REMOVEWATCHES);
    srv_reply(x, 7, TB_ENONODE, NULL);
    pump(c);
    assert_int_equal(e.at, 1);
    assert_int_equal(w1.at, 2);
    assert_int_equal(rm1.at, 3);
    assert_int_equal(rm2.calls, 0);
    assert_int_equal(w2.calls, 0);
    srv_reply(y, 8, 0, NULL);
    pump(c);
    assert_int_equal(w2.calls, 1);
    assert_int_equal(w2.ev_type, TB_EVENT_DATA_WATCH_REMOVED);
    assert_int_equal(w2.at, 4);
    assert_int_equal(rm2.calls, 1);
    assert_int_equal(rm2.rc, 0);
    assert_int_equal(rm2.at, 5);
    close_replied(c);
}

/* A local removal waiting for its turn when the session expires ends as
 * every request outstanding does; its watcher gets the expiry as its one
 * final call. */
static void test_local_remove_waiting_at_expiry(void **state)
{
    struct tb_client *c = connected("h:1", 0x42);
    struct seen w1 = {0}, w2 = {0}, e = {0}, rm = {0};

    (void)state;
    order_n = 0;
    watch_data(c, "/a", seen_watch, &w1, 5);
    watch_data(c, "/a", seen_watch, &w2, 6);
    close(server_fd);
    server_fd = -1;
    pump(c);
    assert_int_equal(tb_client_state(c), TB_SESSION_SUSPENDED);
    assert_int_equal(tb_exists(c, "/b", NULL, NULL, seen_stat, &e), 0);
    assert_int_equal(tb_remove_watches(c, "/a", TB_WATCHER_DATA, seen_watch,
                                       &w1, 0, seen_void, &rm),
                     0);
    pump(c);
    assert_int_equal(rm.calls, 0);
    fake_now += 600;
    pump(c);
    srv_handshake(0, 0); /* timeOut 0: the session is gone */
    pump(c);
    assert_int_equal(tb_client_state(c), TB_SESSION_EXPIRED);
    assert_int_equal(e.calls, 1);
    assert_int_equal(e.rc, TB_ESESSIONEXPIRED);
    assert_int_equal(rm.calls, 1);
    assert_int_equal(rm.rc, TB_ESESSIONEXPIRED);
    assert_true(e.at < rm.at);
    assert_int_equal(w1.calls, 1);
    assert_int_equal(w1.ev_type, TB_EVENT_NONE);
    assert_int_equal(w1.rc, TB_ESESSIONEXPIRED);
    assert_int_equal(w2.calls, 1);
    assert_int_equal(w2.rc, TB_ESESSIONEXPIRED);
    close_replied(c);
    assert_int_equal(w1.calls, 1);
    assert_int_equal(rm.calls, 1);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_multi_results, setup, teardown),
        cmocka_unit_test_setup_teardown(test_config_and_reconfig, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_null_child_refused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_null_created_path_refused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_null_acl_id_refused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_null_whoami_refused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_null_in_multi_refused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_null_data_accepted, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_remove_watches_counts_pending_watch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_remove_watches_takes_pending_watch,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_local_remove_takes_pending_watch,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_local_remove_in_request_order,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_remove_after_pending_local_remove,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_local_remove_after_the_event,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_same_watcher_set_again, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_local_remove_waiting_at_expiry,
                                        setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
