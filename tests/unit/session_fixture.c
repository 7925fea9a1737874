/* See session_fixture.h. */
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "server/fsm/fsm.h"
#include "server/replog/replog.h"
#include "server/watch/watch.h"
#include "session_fixture.h"

static uint64_t fake_now(void *data)
{
    struct sfx *f = data;

    return f->cached ? f->loop_now : f->now;
}

static void fake_refresh(void *data)
{
    struct sfx *f = data;

    f->loop_now = f->now;
}

static int64_t fake_wall(void *data)
{
    return ((struct sfx *)data)->wall;
}

static void on_event(void *data, int type, struct tb_str path,
                     struct tb_vec acl)
{
    (void)data;
    (void)type;
    (void)path;
    (void)acl;
}

static void on_result(void *data, const struct tb_txn *t, int64_t zxid, int rc,
                      const uint8_t *body, size_t len)
{
    struct sfx *f = TB_CONTAINER_OF(data, struct sfx, s);
    struct tb_rd rd = tb_rd_make(body, len);
    struct tb_session_resp r;

    f->last_time = t->time;
    if (t->type == TB_OP_CREATESESSION && rc == 0 &&
        tb_session_resp_decode(&rd, &r) == 0)
        f->last_session = r.session;
    if (t->type == TB_OP_CLOSESESSION)
        f->closes_applied++;
    proc_result(data, t, zxid, rc, body, len);
}

static void on_session(void *data, int64_t id, int32_t timeout, int opened)
{
    struct sfx *f = TB_CONTAINER_OF(data, struct sfx, s);

    if (opened) {
        f->opened++;
        session_opened(data, id, timeout);
    } else {
        f->closed++;
        session_closed(data, id);
    }
}

static void on_quota(void *data, struct tb_str path, const char *what,
                     int64_t used, int64_t limit, int refused)
{
    (void)data;
    (void)path;
    (void)what;
    (void)used;
    (void)limit;
    (void)refused;
}

static void log_apply(void *data, int64_t index, const void *p, size_t n)
{
    struct tbd *s = data;

    assert_int_equal(fsm_apply(s->fsm, index, p, n), 0);
}

static int log_snapshot(void *data, struct tb_wbuf *out)
{
    return fsm_snapshot(((struct tbd *)data)->fsm, out);
}

static int log_restore(void *data, const void *buf, size_t len)
{
    return fsm_restore(((struct tbd *)data)->fsm, buf, len);
}

static void log_quiet(void *data, int level, const char *msg)
{
    (void)data;
    if (level <= REPLOG_LOG_WARN)
        fprintf(stderr, "raft: %s\n", msg);
}

int run_until(struct sfx *f, const int *n, int want)
{
    uint64_t end = uv_hrtime() + (uint64_t)WAIT_MS * 1000000;

    while (*n < want) {
        if (uv_hrtime() > end)
            return 0;
        uv_run(&f->loop, UV_RUN_ONCE);
    }
    return 1;
}

void start(struct sfx *f)
{
    struct tbd *s = &f->s;
    struct fsm_hooks hooks = {s, on_event, on_result, on_session, on_quota};
    struct replog_config rc;
    struct replog_fsm rf = {s, log_apply, log_snapshot, log_restore};

    memset(s, 0, sizeof *s);
    s->loop = &f->loop;
    s->clock = (struct tbd_clock){fake_now, fake_wall, f, fake_refresh};
    s->cfg = &f->cfg;
    s->server_id = 1;
    tb_queue_init(&s->conns);
    tb_map_init(&s->conn_by_id);
    tb_map_init(&s->conn_by_session);
    tb_map_init(&s->sessions);
    tb_wbuf_init(&s->scratch);
    tb_wbuf_init(&s->scratch2);
    watch_mgr_init(&s->watches, 1);
    s->tick_ms = 1000; /* tickTime 2000 */
    assert_int_equal(fsm_init(&s->fsm, &hooks), 0);
    memset(&rc, 0, sizeof rc);
    rc.dir = f->dir;
    rc.server_id = 1;
    rc.log = log_quiet;
    assert_int_equal(replog_open(&s->log, &f->loop, &rc, &rf), 0);
    session_reload(s);
}

static void on_log_closed(void *arg)
{
    ((struct sfx *)arg)->log_closed++;
}

void stop(struct sfx *f)
{
    struct tbd *s = &f->s;
    uint64_t key;
    void *v;
    size_t i;

    f->log_closed = 0;
    replog_close(s->log, on_log_closed, f);
    assert_true(run_until(f, &f->log_closed, 1));
    while (uv_run(&f->loop, UV_RUN_NOWAIT) != 0)
        ;
    fsm_close(s->fsm);
    reconfig_free(s); /* as main.c: a reconfig's state, if one came */
    for (i = 0; tb_map_next(&s->sessions, &i, &key, &v);)
        free(v);
    tb_map_free(&s->sessions);
    tb_map_free(&s->conn_by_id);
    tb_map_free(&s->conn_by_session);
    tb_wbuf_free(&s->scratch);
    tb_wbuf_free(&s->scratch2);
    watch_mgr_close(&s->watches);
}

static int rm_one(const char *p, const struct stat *st, int flag,
                  struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(p);
}

int setup(void **state)
{
    struct sfx *f = calloc(1, sizeof *f);
    const char *base = getenv("TB_TEST_TMPDIR");

    assert_non_null(f);
    snprintf(f->dir, sizeof f->dir, "%s/tb_session_XXXXXX",
             base ? base : "/tmp");
    assert_non_null(mkdtemp(f->dir));
    assert_int_equal(uv_loop_init(&f->loop), 0);
    tb_config_init(&f->cfg);
    f->now = T0;
    f->wall = WALL;
    start(f);
    *state = f;
    return 0;
}

int teardown(void **state)
{
    struct sfx *f = *state;

    stop(f);
    assert_int_equal(uv_loop_close(&f->loop), 0);
    tb_config_free(&f->cfg);
    nftw(f->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    free(f);
    return 0;
}

int64_t create_session(struct sfx *f, int32_t timeout)
{
    static const char pw[16] = "0123456789abcdef";
    struct tb_create_session_txn st = {timeout, {pw, sizeof pw}};
    struct tb_wbuf body;
    int want = f->opened + 1;

    tb_wbuf_init(&body);
    tb_create_session_txn_encode(&body, &st);
    assert_int_equal(
        proc_propose(&f->s, TB_OP_CREATESESSION, 0, 0, 0, NULL,
                     (struct tb_str){(const char *)body.base, body.len}),
        0);
    tb_wbuf_free(&body);
    assert_true(run_until(f, &f->opened, want));
    return f->last_session;
}

const struct sess *tracked(struct sfx *f, int64_t id)
{
    return tb_map_get(&f->s.sessions, (uint64_t)id);
}

int tick_at(struct sfx *f, uint64_t now, int64_t id)
{
    const struct sess *se = tracked(f, id);
    int was = se != NULL && se->closing;

    f->now = now;
    session_tick(&f->s);
    se = tracked(f, id);
    return !was && se != NULL && se->closing;
}

void assert_closed(struct sfx *f, int64_t id, int closes)
{
    assert_true(run_until(f, &f->closes_applied, closes));
    assert_int_equal(f->closed, closes);
    assert_null(tracked(f, id));
    assert_false(fsm_session_get(f->s.fsm, id, &(struct fsm_session_info){0}));
}

static void car_send(struct proc_client *pc, const void *frame, size_t len)
{
    struct carrier *k = TB_CONTAINER_OF(pc, struct carrier, pc);

    assert_false(pc->closed);
    tb_wbuf_put(&k->out, frame, len);
    k->frames++;
}

static void car_reply(struct proc_client *pc, int32_t xid, int64_t zxid,
                      int32_t err, const void *body, size_t len)
{
    uint8_t hdr[PROC_REPLY_HDR];
    struct tb_wbuf w;

    tb_wbuf_init(&w);
    proc_reply_header(hdr, xid, zxid, err, len);
    tb_wbuf_put(&w, hdr, sizeof hdr);
    if (err == 0)
        tb_wbuf_put(&w, body, len);
    car_send(pc, w.base, w.len);
    tb_wbuf_free(&w);
}

static void car_close(struct proc_client *pc)
{
    struct carrier *k = TB_CONTAINER_OF(pc, struct carrier, pc);

    if (pc->closed)
        return;
    k->closes++;
    pc->state = CONN_CLOSING;
    tb_map_del(&k->s->conn_by_id, pc->id);
    if (tb_map_get(&k->s->conn_by_session, (uint64_t)pc->session_id) == pc)
        tb_map_del(&k->s->conn_by_session, (uint64_t)pc->session_id);
    proc_client_closed(pc);
    pc->closed = 1;
}

static void car_close_after_flush(struct proc_client *pc)
{
    struct carrier *k = TB_CONTAINER_OF(pc, struct carrier, pc);

    if (!k->draining) {
        car_close(pc);
        return;
    }
    pc->state = CONN_CLOSING;
    k->closing++;
}

static void car_resume(struct proc_client *pc)
{
    TB_CONTAINER_OF(pc, struct carrier, pc)->resumes++;
}

static void car_notified(struct proc_client *pc)
{
    (void)pc;
}

static const struct proc_client_ops car_ops = {
    car_send,   car_reply,    car_close, car_close_after_flush,
    car_resume, car_notified,
};

struct tb_rd nth_frame(struct carrier *k, int n)
{
    const uint8_t *p = k->out.base, *end = k->out.base + k->out.len;
    uint32_t len;

    for (;;) {
        assert_true(end - p >= 4);
        len = tb_load_be32(p);
        assert_true((size_t)(end - p) >= 4 + (size_t)len);
        if (--n == 0)
            return tb_rd_make(p + 4, len);
        p += 4 + len;
    }
}

struct tb_rd reply_at(struct carrier *k, int n, int32_t xid, int err)
{
    struct tb_reply_header h;
    struct tb_rd rd = nth_frame(k, n);

    assert_int_equal(tb_reply_header_decode(&rd, &h), 0);
    assert_int_equal(h.xid, xid);
    assert_int_equal(h.err, err);
    return rd;
}

int request(struct carrier *k, struct tb_wbuf *body, int32_t xid, int32_t type)
{
    struct tb_wbuf w;
    int rv;

    tb_wbuf_init(&w);
    tb_request_header_encode(&w, &(struct tb_request_header){xid, type});
    tb_wbuf_put(&w, body->base, body->len);
    rv = proc_frame(&k->pc, (struct tb_str){(const char *)w.base, w.len});
    tb_wbuf_free(&w);
    body->len = 0;
    return rv;
}

void carrier_init(struct sfx *f, struct carrier *k, uint64_t id)
{
    memset(k, 0, sizeof *k);
    k->s = &f->s;
    tb_wbuf_init(&k->out);
    k->pc.ops = &car_ops;
    k->pc.srv = &f->s;
    k->pc.id = id;
    k->pc.peer = "test";
    k->pc.state = CONN_NEW;
    tb_wbuf_init(&k->pc.ids);
    tb_queue_init(&k->pc.reqs);
    auth_init_conn(&k->pc);
    assert_int_equal(tb_map_put(&f->s.conn_by_id, k->pc.id, &k->pc), 0);
}

void carrier_open(struct sfx *f, struct carrier *k, uint64_t id)
{
    struct tb_connect_req cr = {0, 0, 8000, 0, TB_STR(""), 0, 0};
    struct tb_wbuf body;

    f->cfg.min_session_timeout = 4000; /* as tickTime 2000 gives */
    f->cfg.max_session_timeout = 40000;
    carrier_init(f, k, id);
    tb_wbuf_init(&body);
    tb_connect_req_encode(&body, &cr);
    proc_frame(&k->pc, (struct tb_str){(const char *)body.base, body.len});
    tb_wbuf_free(&body);
    assert_true(run_until(f, &k->frames, 1));
    assert_int_equal(k->pc.state, CONN_OPEN);
}

void carrier_free(struct carrier *k)
{
    if (k->draining && !k->pc.closed)
        car_close(&k->pc);
    tb_wbuf_free(&k->pc.ids);
    tb_wbuf_free(&k->out);
}
