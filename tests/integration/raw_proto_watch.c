/* raw_proto, watch part: what a server must send, in what order, for standard, persistent and
 * persistent-recursive watches, setWatches/setWatches2 after a reconnect, watch removal, and
 * session close and expiry.  Ordering is checked frame by frame on one connection, which the
 * official C client cannot show (it delivers events on another thread). */
#include "raw_proto.h"

#include <stdio.h>
#include <string.h>

/* Read one frame from z and split its header; 1 on success. */
static int next_frame(struct rz *z, int32_t *xid, int64_t *zxid, int32_t *err,
                      struct rz_r *body)
{
    if (rz_recv_frame(z, 5000) != 1)
        return 0;
    body->p = z->frame;
    body->end = z->frame + z->frame_len;
    body->bad = 0;
    *xid = rz_r_i32(body);
    *zxid = rz_r_i64(body);
    *err = rz_r_i32(body);
    return !body->bad;
}

/* The next frame must be a notification of this type and path; returns its zxid in *zxid. */
#define FRAME_EVENT(z, etype, epath, zxid_out)                                 \
    do {                                                                       \
        int32_t x_, e_;                                                        \
        struct rz_r b_;                                                        \
        char p_[600];                                                          \
        IT_CHECKF(next_frame(&(z), &x_, &(zxid_out), &e_, &b_),                \
                  "no frame where %s %s was expected", rz_event_name(etype),   \
                  (epath));                                                    \
        IT_CHECKF(x_ == -1, "got reply xid %d where %s %s was expected", x_,   \
                  rz_event_name(etype), (epath));                              \
        int32_t t_ = rz_r_i32(&b_), s_ = rz_r_i32(&b_);                        \
        rz_r_str(&b_, p_, sizeof p_);                                          \
        IT_CHECKF(t_ == (etype) && s_ == 3 && strcmp(p_, (epath)) == 0,        \
                  "event: got %s %s state %d, want %s %s",                     \
                  rz_event_name(t_), p_, s_, rz_event_name(etype), (epath));   \
    } while (0)

/* The next frame must be the reply with this xid and err; returns its zxid. */
#define FRAME_REPLY(z, wxid, werr, zxid_out)                                   \
    do {                                                                       \
        int32_t x_, e_;                                                        \
        struct rz_r b_;                                                        \
        IT_CHECKF(next_frame(&(z), &x_, &(zxid_out), &e_, &b_),                \
                  "no reply for xid %d", (int)(wxid));                         \
        IT_CHECKF(x_ == (wxid) && e_ == (werr), "frame xid %d err %d, want "   \
                  "reply xid %d err %d", x_, e_, (int)(wxid), (int)(werr));    \
    } while (0)

static void send_set(struct rz *z, int32_t xid, const char *path, const char *data)
{
    struct rz_w w = {0};
    rz_w_str(&w, path);
    rz_w_buf(&w, data, (int32_t)strlen(data));
    rz_w_i32(&w, -1);
    (void)rz_send_req(z, xid, RZ_OP_SETDATA, &w);
    rz_w_free(&w);
}

static int watch_call(struct rz *z, int32_t op, const char *path, int32_t type)
{
    struct rz_w w = {0};
    struct rz_reply rep;
    rz_w_str(&w, path);
    rz_w_i32(&w, type);
    int rc = rz_call(z, op, &w, &rep);
    rz_w_free(&w);
    return rc != 0 ? RZ_ETRANSPORT : rep.err;
}

void t_notify_before_reply(void)
{
    struct rz a;
    const char *p = it_path("raw", "order");
    int64_t ev_zxid = 0, rep_zxid = 0;
    rz_init(&a);
    ROPEN(a);
    IT_EQ(rmk(&a, p), 0);
    IT_EQ(rz_get(&a, p, 1, NULL), 0);
    send_set(&a, 500, p, "v");
    /* the writer's own watch fires before the write's reply */
    FRAME_EVENT(a, 3, p, ev_zxid);
    FRAME_REPLY(a, 500, 0, rep_zxid);
    /* -1 on 3.5-3.8; the triggering zxid on 3.9+ */
    IT_CHECKF(ev_zxid == -1 || ev_zxid == rep_zxid, "notification zxid %lld (reply %lld)",
              (long long)ev_zxid, (long long)rep_zxid);
    RNO_EVENT(a, 200);
done:
    rz_close(&a);
}

void t_exists_watch_missing(void)
{
    struct rz a;
    struct rz_w w = {0};
    struct rz_reply rep;
    const char *p = it_path("raw", "exw");
    int64_t zx = 0;
    rz_init(&a);
    ROPEN(a);
    IT_EQ(rmk(&a, p), 0);
    IT_EQ(rz_children(&a, p, 1, NULL, 0), 0);
    rz_w_str(&w, rsub(p, "n"));
    rz_w_bool(&w, 1);
    IT_EQ(rz_call(&a, RZ_OP_EXISTS, &w, &rep), 0);
    IT_EQ(rep.err, -101);
    IT_EQ(rep.len, 16);
    rz_w_free(&w);
    rz_w_str(&w, rsub(p, "n"));
    rz_w_buf(&w, "", 0);
    rz_w_acl_open(&w);
    rz_w_i32(&w, 0);
    IT_EQ(rz_send_req(&a, 600, RZ_OP_CREATE, &w), 0);
    FRAME_EVENT(a, 1, rsub(p, "n"), zx);
    FRAME_EVENT(a, 4, p, zx);
    FRAME_REPLY(a, 600, 0, zx);
    RNO_EVENT(a, 200);
done:
    rz_w_free(&w);
    rz_close(&a);
}

void t_watch_dedup(void)
{
    struct rz a, b;
    const char *p = it_path("raw", "dedup");
    rz_init(&a);
    rz_init(&b);
    ROPEN(a);
    ROPEN(b);
    IT_EQ(rmk(&a, p), 0);
    /* the same watch registered several times is one entry: one event */
    IT_EQ(rz_get(&a, p, 1, NULL), 0);
    IT_EQ(rz_exists(&a, p, 1, NULL), 0);
    IT_EQ(rz_get(&a, p, 1, NULL), 0);
    IT_EQ(rz_set(&b, p, "x", 1, -1, NULL), 0);
    REXPECT_EVENT(a, 5000, 3, p);
    RNO_EVENT(a, 300);
    IT_EQ(rz_children(&a, p, 1, NULL, 0), 0);
    IT_EQ(rz_children(&a, p, 1, NULL, 0), 0);
    IT_EQ(rmk(&b, rsub(p, "k")), 0);
    REXPECT_EVENT(a, 5000, 4, p);
    RNO_EVENT(a, 300);
done:
    rz_close(&a);
    rz_close(&b);
}

void t_delete_events(void)
{
    struct rz a;
    struct rz_w w = {0};
    const char *p = it_path("raw", "delev");
    const char *n = rsub(p, "n");
    int64_t zx = 0;
    rz_init(&a);
    ROPEN(a);
    IT_EQ(rmk(&a, p), 0);
    IT_EQ(rmk(&a, n), 0);
    IT_EQ(rz_get(&a, n, 1, NULL), 0);
    IT_EQ(rz_children(&a, n, 1, NULL, 0), 0);
    IT_EQ(rz_children(&a, p, 1, NULL, 0), 0);
    rz_w_str(&w, n);
    rz_w_i32(&w, -1);
    IT_EQ(rz_send_req(&a, 700, RZ_OP_DELETE, &w), 0);
    /* data and child watch of the node: one NodeDeleted; then the parent's child watch */
    FRAME_EVENT(a, 2, n, zx);
    FRAME_EVENT(a, 4, p, zx);
    FRAME_REPLY(a, 700, 0, zx);
    RNO_EVENT(a, 200);
done:
    rz_w_free(&w);
    rz_close(&a);
}

void t_persistent_watch(void)
{
    struct rz a, b;
    struct rz_w w = {0};
    struct rz_reply rep;
    const char *p = it_path("raw", "pw");
    rz_init(&a);
    rz_init(&b);
    ROPEN(a);
    ROPEN(b);
    /* the node need not exist; the reply body is ErrorResponse{0} */
    rz_w_str(&w, p);
    rz_w_i32(&w, 0);
    IT_EQ(rz_call(&a, RZ_OP_ADDWATCH, &w, &rep), 0);
    IT_EQ(rep.err, 0);
    IT_EQ(rep.len, 20);
    IT_EQ(rz_r_i32(&rep.body), 0);
    IT_EQ(rmk(&b, p), 0);
    REXPECT_EVENT(a, 5000, 1, p);
    IT_EQ(rmk(&b, rsub(p, "c1")), 0);
    REXPECT_EVENT(a, 5000, 4, p);
    IT_EQ(rz_set(&b, p, "1", 1, -1, NULL), 0);
    REXPECT_EVENT(a, 5000, 3, p);
    IT_EQ(rz_set(&b, p, "2", 1, -1, NULL), 0); /* not one-shot */
    REXPECT_EVENT(a, 5000, 3, p);
    /* not recursive: nothing for the child's own changes or grandchildren */
    IT_EQ(rz_set(&b, rsub(p, "c1"), "x", 1, -1, NULL), 0);
    IT_EQ(rmk(&b, rsub(p, "c1/g")), 0);
    IT_EQ(rz_delete(&b, rsub(p, "c1/g"), -1), 0);
    RNO_EVENT(a, 300);
    IT_EQ(rz_delete(&b, rsub(p, "c1"), -1), 0);
    REXPECT_EVENT(a, 5000, 4, p);
    IT_EQ(rz_delete(&b, p, -1), 0);
    REXPECT_EVENT(a, 5000, 2, p);
    RNO_EVENT(a, 300);
    /* it survives the deletion */
    IT_EQ(rmk(&b, p), 0);
    REXPECT_EVENT(a, 5000, 1, p);
    RNO_EVENT(a, 300);
done:
    rz_w_free(&w);
    rz_close(&a);
    rz_close(&b);
}

void t_recursive_watch(void)
{
    struct rz a, b;
    const char *r = it_path("raw", "rw");
    char sibling[600];
    rz_init(&a);
    rz_init(&b);
    ROPEN(a);
    ROPEN(b);
    snprintf(sibling, sizeof sibling, "%sx", r);
    IT_EQ(rz_add_watch(&a, r, 1), 0);
    IT_EQ(rmk(&b, r), 0);
    REXPECT_EVENT(a, 5000, 1, r);
    IT_EQ(rmk(&b, rsub(r, "a")), 0);
    REXPECT_EVENT(a, 5000, 1, rsub(r, "a"));
    IT_EQ(rmk(&b, rsub(r, "a/b")), 0);
    REXPECT_EVENT(a, 5000, 1, rsub(r, "a/b"));
    IT_EQ(rz_set(&b, rsub(r, "a/b"), "x", 1, -1, NULL), 0);
    REXPECT_EVENT(a, 5000, 3, rsub(r, "a/b"));
    IT_EQ(rz_delete(&b, rsub(r, "a/b"), -1), 0);
    REXPECT_EVENT(a, 5000, 2, rsub(r, "a/b"));
    IT_EQ(rz_set(&b, r, "y", 1, -1, NULL), 0);
    REXPECT_EVENT(a, 5000, 3, r);
    /* a path that merely starts with the same characters is not below it */
    IT_EQ(rmk(&b, sibling), 0);
    /* no NodeChildrenChanged at all in recursive mode */
    RNO_EVENT(a, 300);
done:
    rz_close(&a);
    rz_close(&b);
}

void t_persistent_plus_standard(void)
{
    struct rz a, b;
    const char *p = it_path("raw", "pws");
    rz_init(&a);
    rz_init(&b);
    ROPEN(a);
    ROPEN(b);
    IT_EQ(rmk(&a, p), 0);
    /* Standard watch first: 3.8 keeps one mode per (path, watcher), so a standard watch added
     * after a persistent one replaces it (ZOOKEEPER-4466, fixed in 3.9); in this order both
     * versions agree. */
    IT_EQ(rz_get(&a, p, 1, NULL), 0);
    IT_EQ(rz_add_watch(&a, p, 0), 0);
    IT_EQ(rz_set(&b, p, "1", 1, -1, NULL), 0);
    REXPECT_EVENT(a, 5000, 3, p);
    RNO_EVENT(a, 300); /* one event for both */
    IT_EQ(rz_set(&b, p, "2", 1, -1, NULL), 0);
    REXPECT_EVENT(a, 5000, 3, p); /* the persistent part stays */
    RNO_EVENT(a, 300);
done:
    rz_close(&a);
    rz_close(&b);
}

/* wchp lists data watches only (ZooKeeper's DataTree keeps child watches
 * apart): a child watch alone puts no path in it; a data watch, or a persistent
 * one, does. */
void t_wchp_data_watches(void)
{
    static char out[65536];
    struct rz a;
    const char *p = it_path("raw", "wchp"), *c = it_path("raw", "wchp2");
    rz_init(&a);
    ROPEN(a);
    IT_EQ(rmk(&a, p), 0);
    IT_EQ(rmk(&a, c), 0);
    IT_EQ(rz_children(&a, p, 1, NULL, 0), 0);
    IT_CHECK(rz_four_letter(it_hostport, "wchp", out, sizeof out) >= 0);
    IT_CHECKF(strstr(out, p) == NULL, "a child watch alone is listed: %s", out);
    IT_EQ(rz_exists(&a, p, 1, NULL), 0);
    IT_EQ(rz_add_watch(&a, c, 0), 0);
    IT_CHECK(rz_four_letter(it_hostport, "wchp", out, sizeof out) >= 0);
    IT_CHECKF(strstr(out, p) != NULL && strstr(out, c) != NULL,
              "a data or a persistent watch is not listed: %s", out);
done:
    rz_close(&a);
}

void t_remove_check_watches(void)
{
    struct rz a, b;
    const char *p = it_path("raw", "rmw");
    rz_init(&a);
    rz_init(&b);
    ROPEN(a);
    ROPEN(b);
    IT_EQ(rmk(&a, p), 0);
    IT_EQ(rz_get(&a, p, 1, NULL), 0);
    IT_EQ(watch_call(&a, RZ_OP_CHECKWATCHES, p, 2), 0);
    IT_EQ(watch_call(&a, RZ_OP_CHECKWATCHES, p, 1), -121);
    IT_EQ(watch_call(&a, RZ_OP_REMOVEWATCHES, p, 2), 0);
    IT_EQ(watch_call(&a, RZ_OP_CHECKWATCHES, p, 2), -121);
    IT_EQ(watch_call(&a, RZ_OP_REMOVEWATCHES, p, 2), -121);
    /* removed on the server: the change sends nothing */
    IT_EQ(rz_set(&b, p, "1", 1, -1, NULL), 0);
    RNO_EVENT(a, 300);
    IT_EQ(rz_children(&a, p, 1, NULL, 0), 0);
    IT_EQ(watch_call(&a, RZ_OP_CHECKWATCHES, p, 3), 0);
    IT_EQ(watch_call(&a, RZ_OP_REMOVEWATCHES, p, 1), 0);
    IT_EQ(rmk(&b, rsub(p, "k")), 0);
    RNO_EVENT(a, 300);
    /* Any removes persistent watches too */
    IT_EQ(rz_add_watch(&a, p, 0), 0);
    IT_EQ(watch_call(&a, RZ_OP_REMOVEWATCHES, p, 3), 0);
    IT_EQ(rz_set(&b, p, "2", 1, -1, NULL), 0);
    RNO_EVENT(a, 300);
    IT_EQ(watch_call(&a, RZ_OP_REMOVEWATCHES, rsub(p, "missing"), 3), -121);
    /* another session's watch is not ours to remove */
    IT_EQ(rz_get(&b, p, 1, NULL), 0);
    IT_EQ(watch_call(&a, RZ_OP_REMOVEWATCHES, p, 2), -121);
    IT_EQ(rz_set(&a, p, "3", 1, -1, NULL), 0);
    REXPECT_EVENT(b, 5000, 3, p);
done:
    rz_close(&a);
    rz_close(&b);
}

void t_setwatches_catchup(void)
{
    struct rz a, b, c;
    struct rz_w w = {0};
    struct rz_reply rep;
    struct rz_event ev;
    const char *p = it_path("raw", "sw");
    const char *w2 = it_path("raw", "sw2");
    const char *data[3], *exist[2], *child[1];
    int64_t rel;
    static const int want_type[4] = {3, 2, 1, 4};
    const char *want_path[4];
    rz_init(&a);
    rz_init(&b);
    rz_init(&c);
    ROPEN(a);
    ROPEN(b);
    ROPEN(c);
    IT_EQ(rz_create(&a, RZ_OP_CREATE, p, "0", 1, 0, 0, NULL, 0, NULL), 0);
    IT_EQ(rmk(&a, rsub(p, "c1")), 0);
    IT_EQ(rz_create(&a, RZ_OP_CREATE, w2, "0", 1, 0, 0, NULL, 0, NULL), 0);
    IT_EQ(rz_ping_read(&a, &rel), 0);
    /* changes the reconnecting client missed */
    IT_EQ(rz_set(&b, p, "1", 1, -1, NULL), 0);
    IT_EQ(rmk(&b, rsub(p, "new")), 0);
    IT_EQ(rz_delete(&b, rsub(p, "c1"), -1), 0);
    data[0] = p;
    data[1] = rsub(p, "c1");
    data[2] = w2;
    exist[0] = rsub(p, "new");
    exist[1] = rsub(p, "never");
    child[0] = p;
    rz_w_i64(&w, rel);
    rz_w_strvec(&w, data, 3);
    rz_w_strvec(&w, exist, 2);
    rz_w_strvec(&w, child, 1);
    IT_EQ(rz_send_req(&c, -8, RZ_OP_SETWATCHES, &w), 0);
    IT_EQ(rz_read_reply(&c, &rep, 5000), 0);
    IT_EQ(rep.xid, -8);
    IT_EQ(rep.err, 0);
    IT_EQ(rep.len, 16);
    /* catch-up events came before the reply, in list order: data, exist, child */
    IT_EQ(rz_pending_events(&c), 4);
    want_path[0] = p;
    want_path[1] = rsub(p, "c1");
    want_path[2] = rsub(p, "new");
    want_path[3] = p;
    for (int i = 0; i < 4; i++) {
        IT_EQ(rz_next_event(&c, 0, &ev), 1);
        IT_CHECKF(ev.type == want_type[i] && strcmp(ev.path, want_path[i]) == 0,
                  "catch-up #%d: got %s %s, want %s %s", i, rz_event_name(ev.type), ev.path,
                  rz_event_name(want_type[i]), want_path[i]);
        IT_EQ(ev.state, 3);
        IT_EQ(ev.zxid, -1);
    }
    /* unchanged entries were registered as watches */
    IT_EQ(rmk(&b, rsub(p, "never")), 0);
    REXPECT_EVENT(c, 5000, 1, rsub(p, "never"));
    IT_EQ(rz_set(&b, w2, "1", 1, -1, NULL), 0);
    REXPECT_EVENT(c, 5000, 3, w2);
    /* the ones that fired during catch-up were not kept */
    IT_EQ(rz_set(&b, p, "2", 1, -1, NULL), 0);
    RNO_EVENT(c, 300);
done:
    rz_w_free(&w);
    rz_close(&a);
    rz_close(&b);
    rz_close(&c);
}

void t_setwatches2_persistent(void)
{
    struct rz a, b, c;
    struct rz_w w = {0};
    struct rz_reply rep;
    const char *p = it_path("raw", "sw2p");
    const char *q = it_path("raw", "sw2q");
    const char *pl[1], *ql[1];
    int64_t rel;
    rz_init(&a);
    rz_init(&b);
    rz_init(&c);
    ROPEN(a);
    ROPEN(b);
    ROPEN(c);
    IT_EQ(rmk(&a, p), 0);
    IT_EQ(rmk(&a, q), 0);
    IT_EQ(rz_ping_read(&a, &rel), 0);
    IT_EQ(rz_set(&b, p, "1", 1, -1, NULL), 0);
    IT_EQ(rmk(&b, rsub(q, "x")), 0);
    pl[0] = p;
    ql[0] = q;
    rz_w_i64(&w, rel);
    rz_w_strvec(&w, NULL, 0);
    rz_w_strvec(&w, NULL, 0);
    rz_w_strvec(&w, NULL, 0);
    rz_w_strvec(&w, pl, 1);
    rz_w_strvec(&w, ql, 1);
    IT_EQ(rz_send_req(&c, -8, RZ_OP_SETWATCHES2, &w), 0);
    IT_EQ(rz_read_reply(&c, &rep, 5000), 0);
    IT_EQ(rep.xid, -8);
    IT_EQ(rep.err, 0);
    /* persistent watches get no catch-up events */
    IT_EQ(rz_pending_events(&c), 0);
    IT_EQ(rz_set(&b, p, "2", 1, -1, NULL), 0);
    REXPECT_EVENT(c, 5000, 3, p);
    IT_EQ(rz_set(&b, p, "3", 1, -1, NULL), 0);
    REXPECT_EVENT(c, 5000, 3, p);
    IT_EQ(rmk(&b, rsub(q, "x/y")), 0);
    REXPECT_EVENT(c, 5000, 1, rsub(q, "x/y"));
    RNO_EVENT(c, 300);
done:
    rz_w_free(&w);
    rz_close(&a);
    rz_close(&b);
    rz_close(&c);
}

void t_close_session_events(void)
{
    struct rz a, b;
    const char *p = it_path("raw", "closeev");
    int64_t zx = 0;
    rz_init(&a);
    rz_init(&b);
    ROPEN(a);
    ROPEN(b);
    IT_EQ(rmk(&a, p), 0);
    IT_EQ(rz_create(&a, RZ_OP_CREATE, rsub(p, "e"), "", 0, 1, 0, NULL, 0, NULL), 0);
    IT_EQ(rz_children(&a, p, 1, NULL, 0), 0);
    IT_EQ(rz_exists(&b, rsub(p, "e"), 1, NULL), 0);
    IT_EQ(rz_children(&b, p, 1, NULL, 0), 0);
    IT_EQ(rz_send_req(&a, 900, RZ_OP_CLOSE, NULL), 0);
    /* the closing session's own watch still fires, before the close reply */
    FRAME_EVENT(a, 4, p, zx);
    FRAME_REPLY(a, 900, 0, zx);
    IT_EQ(rz_expect_close(&a, 5000), 1);
    /* other sessions see the deletion of the ephemeral */
    REXPECT_EVENT(b, 5000, 2, rsub(p, "e"));
    REXPECT_EVENT(b, 5000, 4, p);
    RNO_EVENT(b, 200);
done:
    rz_drop(&a);
    rz_close(&b);
}

/* Waits as long as the session timeout granted: raw_proto_sessions_* run it
 * against a server ticking every 250 ms, so about a second.  When exactly a
 * session expires is tested on virtual time by unit_expiry and unit_session. */
void t_session_expiry_raw(void)
{
    struct rz a, b;
    const char *p = it_path("raw", "expire");
    int64_t t0, dt;
    rz_init(&a);
    rz_init(&b);
    ROPEN(b);
    t0 = it_now_ms();
    /* every request of `a` comes after t0, so its deadline is at least t0 + its
     * timeout */
    IT_CHECK(rz_open(&a, it_hostport, 1000) == 0);
    IT_CHECKF(a.timeout >= 1000, "asked for 1000 ms, granted %d", a.timeout);
    IT_EQ(rz_create(&a, RZ_OP_CREATE, p, "", 0, 1, 0, NULL, 0, NULL), 0);
    IT_EQ(rz_exists(&b, p, 1, NULL), 0);
    /* silence: the server expires the session and closes the socket without a frame */
    IT_EQ(rz_expect_close(&a, 3 * a.timeout + 10000), 1);
    dt = it_now_ms() - t0;
    /* not before its timeout: a bound the server cannot beat however slow the
     * machine is (its clock may read a few ms behind ours, cached for the turn
     * of its loop) */
    IT_CHECKF(dt >= a.timeout - 50, "idle %d ms session closed after %lld ms",
              a.timeout, (long long)dt);
    REXPECT_EVENT(b, 5000, 2, p);
    IT_EQ(rz_exists(&b, p, 0, NULL), -101);
    {
        struct rz_hello h = {0, 0, a.timeout, a.sid, a.pw, 0};
        IT_EQ(rz_dial(&a, it_hostport), 0);
        IT_EQ(rz_hello(&a, &h), 0);
    }
done:
    rz_drop(&a);
    rz_close(&b);
}
