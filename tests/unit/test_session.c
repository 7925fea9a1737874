/* Session expiry through the server's own code on a virtual clock: a
 * struct tbd whose clock the test sets, with the real fsm and replicated
 * log (in a temporary directory) behind it, and no sockets.  session.c's
 * ticks, touches and opens read the test's time; a close proposed by a
 * tick is logged, applied and forgotten as in tumblerd.  Expiry's
 * arithmetic alone is test_expiry.c's; this proves the wiring: what reads
 * the clock, what the tick proposes, what a restart starts again.
 *
 * The hooks are main.c's, reduced: session opened/closed go to session.c,
 * results are recorded and routed by proc_result as in tumblerd; on a
 * restart every session in the fsm is opened again by session_reload, as
 * in main.c.
 *
 * client_without_a_socket serves a client through struct proc_client's
 * ops alone, on a carrier of the test's own: proc's handshake, a write's
 * answer after the log and a read's must all leave through them. */
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "server/config/config.h"
#include "server/fsm/fsm.h"
#include "server/peer/peer_int.h"
#include "server/proc/proc.h"
#include "server/replog/replog.h"
#include "server/server.h"

#define T0      1000000u
#define WALL    1700000000000
#define WAIT_MS 30000

struct sfx {
    struct tbd s;
    struct tb_config cfg;
    uv_loop_t loop;
    char dir[256];
    uint64_t now; /* the virtual monotonic clock */
    /* When set, the server reads `loop_now`, as tumblerd reads the loop's
     * cached time, brought to `now` only by a refresh. */
    int cached;
    uint64_t loop_now;
    int64_t wall; /* the virtual wall clock */
    int opened, closed, closes_applied;
    int64_t last_session; /* of the latest createSession's result */
    int64_t last_time;    /* the latest txn's time */
    int log_closed;
};

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

/* Runs the loop until *n reaches want; 0 if WAIT_MS of real time pass. */
static int run_until(struct sfx *f, const int *n, int want)
{
    uint64_t end = uv_hrtime() + (uint64_t)WAIT_MS * 1000000;

    while (*n < want) {
        if (uv_hrtime() > end)
            return 0;
        uv_run(&f->loop, UV_RUN_ONCE);
    }
    return 1;
}

/* Opens the server on f->dir, as main.c does up to its ticker, at the
 * clock's present time. */
static void start(struct sfx *f)
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

static void stop(struct sfx *f)
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
    for (i = 0; tb_map_next(&s->sessions, &i, &key, &v);)
        free(v);
    tb_map_free(&s->sessions);
    tb_map_free(&s->conn_by_id);
    tb_map_free(&s->conn_by_session);
    tb_wbuf_free(&s->scratch);
    tb_wbuf_free(&s->scratch2);
}

static int rm_one(const char *p, const struct stat *st, int flag,
                  struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(p);
}

static int setup(void **state)
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

static int teardown(void **state)
{
    struct sfx *f = *state;

    stop(f);
    assert_int_equal(uv_loop_close(&f->loop), 0);
    tb_config_free(&f->cfg);
    nftw(f->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    free(f);
    return 0;
}

/* A createSession txn, as session_connect proposes it; returns its id. */
static int64_t create_session(struct sfx *f, int32_t timeout)
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

static const struct sess *tracked(struct sfx *f, int64_t id)
{
    return tb_map_get(&f->s.sessions, (uint64_t)id);
}

/* A tick at `now`; 1 if it proposed the close of `id`. */
static int tick_at(struct sfx *f, uint64_t now, int64_t id)
{
    const struct sess *se = tracked(f, id);
    int was = se != NULL && se->closing;

    f->now = now;
    session_tick(&f->s);
    se = tracked(f, id);
    return !was && se != NULL && se->closing;
}

/* The close the tick proposed is applied: the session is gone from the fsm
 * and from the deadlines. */
static void assert_closed(struct sfx *f, int64_t id, int closes)
{
    assert_true(run_until(f, &f->closes_applied, closes));
    assert_int_equal(f->closed, closes);
    assert_null(tracked(f, id));
    assert_false(fsm_session_get(f->s.fsm, id, &(struct fsm_session_info){0}));
}

/* Closed at the first tick at or past last touch + timeout; ticks read the
 * server's clock, and txns carry its wall time. */
static void expires_on_the_clock(void **state)
{
    struct sfx *f = *state;
    int64_t id = create_session(f, 4000);
    uint64_t t;

    assert_true(id != 0);
    assert_int_equal(f->last_time, WALL);
    assert_int_equal(tracked(f, id)->deadline_ms, T0 + 4000);
    for (t = T0 + 1000; t < T0 + 4000; t += 1000)
        assert_false(tick_at(f, t, id));
    assert_false(tick_at(f, T0 + 3999, id));
    f->wall = WALL + 4000;
    assert_true(tick_at(f, T0 + 4000, id));
    /* Proposed once, however many ticks pass before it is applied. */
    assert_false(tick_at(f, T0 + 4500, id));
    assert_closed(f, id, 1);
    assert_int_equal(f->last_time, WALL + 4000);
}

static void touch_counts_from_then(void **state)
{
    struct sfx *f = *state;
    int64_t id = create_session(f, 4000);

    assert_false(tick_at(f, T0 + 1000, id));
    f->now = T0 + 2500;
    session_touch(&f->s, id);
    assert_false(tick_at(f, T0 + 3000, id));
    assert_false(tick_at(f, T0 + 4000, id));
    assert_false(tick_at(f, T0 + 5000, id));
    assert_false(tick_at(f, T0 + 6000, id));
    assert_false(tick_at(f, T0 + 6499, id));
    assert_true(tick_at(f, T0 + 6500, id));
    assert_closed(f, id, 1);
}

/* A loop stopped for 7 s (SIGSTOP): the session's deadline moves by what
 * was lost past one tick, so it outlives the stop by exactly that. */
static void stalled_loop_counts_against_no_session(void **state)
{
    struct sfx *f = *state;
    int64_t id = create_session(f, 4000);

    assert_false(tick_at(f, T0 + 1000, id));
    assert_false(tick_at(f, T0 + 8000, id)); /* 6000 ms lost */
    assert_int_equal(tracked(f, id)->deadline_ms, T0 + 10000);
    assert_false(tick_at(f, T0 + 9000, id));
    assert_false(tick_at(f, T0 + 9999, id));
    assert_true(tick_at(f, T0 + 10000, id));
    assert_closed(f, id, 1);
}

/* The leader's answer to a follower's claim of session `id` for its
 * connection `origin` (PEER_OWN): the frame it sends on a link whose
 * connect has not completed, which keeps it. */
static int claim(struct sfx *f, int64_t id, uint64_t origin, int *status)
{
    struct peer p = {0};
    struct link k = {0};
    uint8_t own[16];
    int type;

    p.srv = &f->s;
    tb_map_init(&p.owner);
    k.p = &p;
    tb_wbuf_init(&k.held);
    tb_store_be64(own, (uint64_t)id);
    tb_store_be64(own + 8, origin);
    peer__on_own(&k, own, sizeof own);
    assert_true(k.held.len >= FRAME_HDR + 8);
    type = k.held.base[4];
    *status = k.held.len >= FRAME_HDR + 12
                  ? (int32_t)tb_load_be32(k.held.base + FRAME_HDR + 8)
                  : 0;
    assert_int_equal(tb_load_be64(k.held.base + FRAME_HDR), origin);
    tb_wbuf_free(&k.held);
    tb_map_free(&p.owner);
    return type;
}

/* A follower's claim of a session the leader has closed is refused as
 * expired, though the follower has not applied the close yet (it learns
 * of the commit a heartbeat later): it would have told the client its
 * session and its locks were there.  A live session is taken. */
static void claim_of_closed_session_refused(void **state)
{
    struct sfx *f = *state;
    int64_t live = create_session(f, 60000), id = create_session(f, 4000);
    int status;

    assert_true(tick_at(f, T0 + 4000, id));
    assert_closed(f, id, 1);
    while (!replog_leader_caught_up(f->s.log))
        uv_run(&f->loop, UV_RUN_ONCE);
    assert_int_equal(claim(f, id, 7, &status), PEER_FAILED);
    assert_int_equal(status, TB_ESESSIONEXPIRED);
    assert_int_equal(claim(f, live, 8, &status), PEER_OWNED);
}

/* After a restart every session in the fsm gets a fresh timeout from the
 * restart's time, however long the server was down: none expires at the
 * first tick. */
static void fresh_timeout_after_restart(void **state)
{
    struct sfx *f = *state;
    int64_t a = create_session(f, 4000), b = create_session(f, 6000);
    const uint64_t r = T0 + 3600000;

    assert_true(a != 0 && b != 0 && a != b);
    assert_false(tick_at(f, T0 + 1000, a));
    stop(f);
    f->now = r;
    start(f);
    assert_int_equal(fsm_session_count(f->s.fsm), 2);
    assert_int_equal(tracked(f, a)->deadline_ms, r + 4000);
    assert_int_equal(tracked(f, b)->deadline_ms, r + 6000);
    assert_false(tick_at(f, r + 1000, a));
    assert_false(tick_at(f, r + 2000, a));
    assert_false(tick_at(f, r + 3000, a));
    assert_false(tick_at(f, r + 3999, a));
    assert_true(tick_at(f, r + 4000, a));
    assert_closed(f, a, 1);
    assert_false(tick_at(f, r + 5000, b));
    assert_false(tick_at(f, r + 5999, b));
    assert_true(tick_at(f, r + 6000, b));
    assert_closed(f, b, 2);
}

/* A start whose log took long to replay: the loop's cached time is still
 * that of before it, and the sessions' fresh timeouts count from the time
 * after it (they expired at the first tick before). */
static void reload_counts_from_now(void **state)
{
    struct sfx *f = *state;
    int64_t a = create_session(f, 4000);
    const uint64_t r = T0 + 3600000;
    uint64_t t;

    stop(f);
    f->cached = 1;
    f->loop_now = r;    /* the loop's time when the start began */
    f->now = r + 10000; /* when the replay ended */
    start(f);
    assert_int_equal(tracked(f, a)->deadline_ms, r + 14000);
    f->cached = 0;
    for (t = r + 10500; t < r + 14000; t += 1000)
        assert_false(tick_at(f, t, a));
    assert_true(tick_at(f, r + 14000, a));
    assert_closed(f, a, 1);
}

/* A leader not yet told it leads expires nothing: its deadlines are still
 * a follower's, which its own clients alone moved.  Once told, every
 * session has a full timeout from then. */
static void no_expiry_before_leadership_is_told(void **state)
{
    struct sfx *f = *state;
    int64_t a = create_session(f, 4000);
    uint64_t t;

    f->s.expiring = 0; /* as on_leader(0) leaves it */
    for (t = T0 + 1000; t <= T0 + 10000; t += 1000)
        assert_false(tick_at(f, t, a));
    session_reload(&f->s); /* on_leader(1), at T0 + 10000 */
    for (t = T0 + 11000; t < T0 + 14000; t += 1000)
        assert_false(tick_at(f, t, a));
    assert_true(tick_at(f, T0 + 14000, a));
    assert_closed(f, a, 1);
}

/* A carrier that is no socket: what proc sends is kept, frame by frame,
 * and closing does what conn_close does for proc (proc.h's contract). */
struct carrier {
    struct proc_client pc;
    struct tbd *s;
    struct tb_wbuf out; /* every frame sent, each with its length prefix */
    int frames, closes, resumes;
};

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

static void car_resume(struct proc_client *pc)
{
    TB_CONTAINER_OF(pc, struct carrier, pc)->resumes++;
}

static void car_notified(struct proc_client *pc)
{
    (void)pc;
}

static const struct proc_client_ops car_ops = {
    car_send, car_reply, car_close, car_close, car_resume, car_notified,
};

/* The k->frames-th frame sent (from 1): its payload, past the prefix. */
static struct tb_rd nth_frame(struct carrier *k, int n)
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

/* One request as proc_frame takes it: the header, then the record. */
static void request(struct carrier *k, struct tb_wbuf *body, int32_t xid,
                    int32_t type)
{
    struct tb_wbuf w;

    tb_wbuf_init(&w);
    tb_request_header_encode(&w, &(struct tb_request_header){xid, type});
    tb_wbuf_put(&w, body->base, body->len);
    proc_frame(&k->pc, (struct tb_str){(const char *)w.base, w.len});
    tb_wbuf_free(&w);
    body->len = 0;
}

/* A client of the test's carrier, new, with id `id`. */
static void carrier_init(struct sfx *f, struct carrier *k, uint64_t id)
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

/* carrier_init, then a session opened through proc's handshake. */
static void carrier_open(struct sfx *f, struct carrier *k, uint64_t id)
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

static void carrier_free(struct carrier *k)
{
    tb_wbuf_free(&k->pc.ids);
    tb_wbuf_free(&k->out);
}

static void client_without_a_socket(void **state)
{
    struct sfx *f = *state;
    struct carrier k;
    struct tb_connect_req cr = {0, 0, 8000, 0, TB_STR(""), 0, 0};
    struct tb_connect_resp resp;
    struct tb_reply_header h;
    struct tb_path_resp pr;
    struct tb_wbuf body, acl;
    struct tb_rd rd;
    struct tb_str data;

    f->cfg.min_session_timeout = 4000; /* as tickTime 2000 gives */
    f->cfg.max_session_timeout = 40000;
    tb_wbuf_init(&body);
    tb_wbuf_init(&acl);
    carrier_init(f, &k, 7);

    /* The handshake: createSession goes through the log; its answer comes
     * back by the client's id and leaves through send. */
    tb_connect_req_encode(&body, &cr);
    proc_frame(&k.pc, (struct tb_str){(const char *)body.base, body.len});
    body.len = 0;
    assert_int_equal(k.pc.state, CONN_SESSION);
    assert_true(run_until(f, &k.frames, 1));
    rd = nth_frame(&k, 1);
    assert_int_equal(tb_connect_resp_decode(&rd, &resp), 0);
    assert_int_equal(resp.session_id, f->last_session);
    assert_int_equal(resp.timeout, 8000);
    assert_int_equal(k.pc.state, CONN_OPEN);
    assert_ptr_equal(tb_map_get(&f->s.conn_by_session,
                                (uint64_t)resp.session_id),
                     &k.pc);
    assert_int_equal(k.resumes, 1);

    /* A write: answered through reply once the log has applied it. */
    tb_put_acl(&acl, &(struct tb_acl){TB_PERM_ALL,
                                      {TB_STR("world"), TB_STR("anyone")}});
    tb_create_req_encode(&body,
                         &(struct tb_create_req){TB_STR("/a"), TB_STR("x"),
                                                 tb_vec_view(&acl, 1), 0});
    request(&k, &body, 1, TB_OP_CREATE);
    assert_int_equal(k.frames, 1);
    assert_true(run_until(f, &k.frames, 2));
    rd = nth_frame(&k, 2);
    assert_int_equal(tb_reply_header_decode(&rd, &h), 0);
    assert_int_equal(h.xid, 1);
    assert_int_equal(h.err, 0);
    assert_true(h.zxid > 0);
    assert_int_equal(tb_path_resp_decode(&rd, &pr), 0);
    assert_true(tb_str_eq(pr.path, TB_STR("/a")));

    /* A read, answered at once, sees it. */
    tb_path_watch_req_encode(&body,
                             &(struct tb_path_watch_req){TB_STR("/a"), 0});
    request(&k, &body, 2, TB_OP_GETDATA);
    assert_int_equal(k.frames, 3);
    rd = nth_frame(&k, 3);
    assert_int_equal(tb_reply_header_decode(&rd, &h), 0);
    assert_int_equal(h.xid, 2);
    assert_int_equal(h.err, 0);
    assert_int_equal(tb_get_BUF(&rd, &data), 0);
    assert_true(tb_str_eq(data, TB_STR("x")));

    /* A request of a missing node: an error reply, header only. */
    tb_path_watch_req_encode(&body,
                             &(struct tb_path_watch_req){TB_STR("/b"), 0});
    request(&k, &body, 3, TB_OP_GETDATA);
    assert_int_equal(k.frames, 4);
    rd = nth_frame(&k, 4);
    assert_int_equal(tb_reply_header_decode(&rd, &h), 0);
    assert_int_equal(h.xid, 3);
    assert_int_equal(h.err, TB_ENONODE);
    assert_true(rd.pos == rd.end);

    /* A malformed request header closes the client through its ops. */
    proc_frame(&k.pc, (struct tb_str){"\0\0", 2});
    assert_int_equal(k.closes, 1);
    assert_true(k.pc.closed);
    assert_null(tb_map_get(&f->s.conn_by_id, k.pc.id));
    assert_null(tb_map_get(&f->s.conn_by_session,
                           (uint64_t)resp.session_id));
    assert_int_equal(k.frames, 4);

    tb_wbuf_free(&k.pc.ids);
    tb_wbuf_free(&k.out);
    tb_wbuf_free(&body);
    tb_wbuf_free(&acl);
}

/* One failed growth of the server's shared encoding buffers fails the
 * request that met it, not every later one: after it, reads are answered
 * and writes logged (they closed the client and failed for good). */
static void scratch_failure_passes(void **state)
{
    struct sfx *f = *state;
    struct carrier k;
    struct tb_wbuf body, acl;
    struct tb_reply_header h;
    struct tb_rd rd;

    carrier_open(f, &k, 11);
    tb_wbuf_init(&body);
    tb_wbuf_init(&acl);
    f->s.scratch.oom = 1; /* as a growth that failed leaves it */
    f->s.scratch2.oom = 1;
    tb_path_watch_req_encode(&body,
                             &(struct tb_path_watch_req){TB_STR("/"), 0});
    request(&k, &body, 1, TB_OP_EXISTS);
    assert_int_equal(k.closes, 0);
    assert_int_equal(k.frames, 2);
    rd = nth_frame(&k, 2);
    assert_int_equal(tb_reply_header_decode(&rd, &h), 0);
    assert_int_equal(h.xid, 1);
    assert_int_equal(h.err, 0);
    f->s.scratch.oom = 1;
    tb_put_acl(&acl, &(struct tb_acl){TB_PERM_ALL,
                                      {TB_STR("world"), TB_STR("anyone")}});
    tb_create_req_encode(&body,
                         &(struct tb_create_req){TB_STR("/s"), TB_STR("x"),
                                                 tb_vec_view(&acl, 1), 0});
    request(&k, &body, 2, TB_OP_CREATE);
    assert_true(run_until(f, &k.frames, 3));
    rd = nth_frame(&k, 3);
    assert_int_equal(tb_reply_header_decode(&rd, &h), 0);
    assert_int_equal(h.xid, 2);
    assert_int_equal(h.err, 0);
    assert_int_equal(k.closes, 0);
    tb_wbuf_free(&body);
    tb_wbuf_free(&acl);
    carrier_free(&k);
}

/* A session whose close the leader decided (it expired; the close is not
 * applied yet) is refused to a client that resumes it, as expired: it is
 * no longer the client's, whatever it would read there meanwhile. */
static void closing_session_refused(void **state)
{
    struct sfx *f = *state;
    struct carrier a, b;
    struct tb_connect_resp resp, again;
    struct tb_wbuf body;
    struct tb_rd rd;
    uint64_t t;
    int closed = 0;

    carrier_open(f, &a, 21);
    rd = nth_frame(&a, 1);
    assert_int_equal(tb_connect_resp_decode(&rd, &resp), 0);
    for (t = T0 + 1000; !closed && t <= T0 + 20000; t += 1000)
        closed = tick_at(f, t, resp.session_id);
    assert_true(closed);
    carrier_init(f, &b, 22);
    tb_wbuf_init(&body);
    tb_connect_req_encode(&body,
                          &(struct tb_connect_req){0, 0, 8000, resp.session_id,
                                                   resp.passwd, 0, 0});
    proc_frame(&b.pc, (struct tb_str){(const char *)body.base, body.len});
    assert_int_equal(b.frames, 1);
    rd = nth_frame(&b, 1);
    assert_int_equal(tb_connect_resp_decode(&rd, &again), 0);
    assert_int_equal(again.timeout, 0);
    assert_int_equal(again.session_id, 0);
    tb_wbuf_free(&body);
    carrier_free(&a);
    carrier_free(&b);
}

/* A session a follower revalidated through a barrier, taken at once once
 * the barrier is back (this server leads by then): the client's requests
 * held meanwhile are read on (they were held for good before). */
static void revalidated_resume_reads_on(void **state)
{
    struct sfx *f = *state;
    struct carrier a, b;
    struct tb_connect_resp resp;
    struct tb_rd rd;

    carrier_open(f, &a, 31);
    rd = nth_frame(&a, 1);
    assert_int_equal(tb_connect_resp_decode(&rd, &resp), 0);
    carrier_init(f, &b, 32);
    b.pc.session_id = resp.session_id;
    memcpy(b.pc.passwd, resp.passwd.ptr, 16);
    b.pc.timeout_ms = 8000;
    b.pc.revalidating = 1;
    b.pc.state = CONN_SESSION; /* as the barrier left it */
    session_revalidated(&b.pc);
    assert_int_equal(b.pc.state, CONN_OPEN);
    assert_int_equal(b.frames, 1); /* the ConnectResponse */
    assert_int_equal(b.resumes, 1);
    carrier_free(&a);
    carrier_free(&b);
}

/* closeSession followed by another request before it is applied: its
 * reply is sent, then the connection closes (it closed at once, the
 * reply lost: the client saw its connection lost, not its close). */
static void close_answered_with_requests_after(void **state)
{
    struct sfx *f = *state;
    struct carrier a;
    struct tb_reply_header h;
    struct tb_wbuf body;
    struct tb_rd rd;

    carrier_open(f, &a, 41);
    tb_wbuf_init(&body);
    request(&a, &body, 5, TB_OP_CLOSESESSION);
    tb_path_req_encode(&body, &(struct tb_path_req){TB_STR("/")});
    tb_put_BOOL(&body, 0);
    request(&a, &body, 6, TB_OP_GETDATA);
    assert_true(run_until(f, &a.closes, 1));
    assert_true(a.frames >= 2);
    rd = nth_frame(&a, 2);
    assert_int_equal(tb_reply_header_decode(&rd, &h), 0);
    assert_int_equal(h.xid, 5);
    assert_int_equal(h.err, 0);
    tb_wbuf_free(&body);
    carrier_free(&a);
}

/* A reply decided at once (a createTTL refused, extended types off) that
 * waits for a write before it never carries a zxid below that write's. */
static void zxids_never_go_back(void **state)
{
    struct sfx *f = *state;
    struct carrier k;
    struct tb_wbuf body, acl;
    struct tb_reply_header h1, h2;
    struct tb_rd rd;

    f->cfg.extended_types_enabled = 0;
    carrier_open(f, &k, 31);
    tb_wbuf_init(&body);
    tb_wbuf_init(&acl);
    tb_put_acl(&acl, &(struct tb_acl){TB_PERM_ALL,
                                      {TB_STR("world"), TB_STR("anyone")}});
    tb_create_req_encode(&body,
                         &(struct tb_create_req){TB_STR("/z"), TB_STR("x"),
                                                 tb_vec_view(&acl, 1), 0});
    request(&k, &body, 1, TB_OP_CREATE);
    tb_create_ttl_req_encode(
        &body, &(struct tb_create_ttl_req){TB_STR("/t"), TB_STR("x"),
                                           tb_vec_view(&acl, 1),
                                           TB_PERSISTENT_WITH_TTL, 1000});
    request(&k, &body, 2, TB_OP_CREATETTL);
    assert_true(run_until(f, &k.frames, 3));
    rd = nth_frame(&k, 2);
    assert_int_equal(tb_reply_header_decode(&rd, &h1), 0);
    rd = nth_frame(&k, 3);
    assert_int_equal(tb_reply_header_decode(&rd, &h2), 0);
    assert_int_equal(h1.xid, 1);
    assert_int_equal(h1.err, 0);
    assert_int_equal(h2.xid, 2);
    assert_int_equal(h2.err, TB_EUNIMPLEMENTED);
    assert_true(h2.zxid >= h1.zxid);
    tb_wbuf_free(&body);
    tb_wbuf_free(&acl);
    carrier_free(&k);
}

/* A createSession entry applied again after a restart (or proposed by an
 * earlier start) names a connection id of then: a client of now with
 * that id, resuming a session of its own, is not handed the new one; and
 * a later start's ids are none of an earlier one's. */
static void new_session_only_to_its_own_waiter(void **state)
{
    struct sfx *f = *state;
    struct carrier k;
    struct tb_wbuf body;
    struct tb_txn t = {0};
    uint64_t a, b;
    int i;

    carrier_init(f, &k, 9);
    k.pc.state = CONN_SESSION; /* resuming 0x55, the leader not yet heard */
    k.pc.session_id = 0x55;
    tb_wbuf_init(&body);
    tb_session_resp_encode(&body, &(struct tb_session_resp){
                                      0x77, 8000, TB_STR("0123456789abcdef")});
    t.type = TB_OP_CREATESESSION;
    t.origin = (int64_t)k.pc.id;
    proc_result(&f->s, &t, 5, 0, body.base, body.len);
    assert_int_equal(k.frames, 0);
    assert_int_equal(k.pc.session_id, 0x55);
    assert_int_equal(k.pc.state, CONN_SESSION);
    assert_null(tb_map_get(&f->s.conn_by_session, 0x77));

    /* Server 3 started at WALL, then again a millisecond later: the top
     * byte names it, and 256 connections of the first start are not
     * enough to reach the second's first id. */
    a = proc_conn_id_base(3, WALL);
    b = proc_conn_id_base(3, WALL + 1);
    assert_int_equal(a >> 56, 3);
    assert_int_equal(b >> 56, 3);
    assert_true(b >= a + 256);
    for (i = 1; i < 1000; i++)
        assert_true(proc_conn_id_base(3, WALL + i * 1000) >
                    proc_conn_id_base(3, WALL + (i - 1) * 1000) + 255000);
    tb_map_del(&f->s.conn_by_id, k.pc.id);
    tb_wbuf_free(&k.pc.ids);
    tb_wbuf_free(&k.out);
    tb_wbuf_free(&body);
}

/* A client whose writes went to the leader while this server followed,
 * with one still out when this server leads: its next write is not logged
 * here (it could be applied without the one before); its connection ends,
 * as when the link to the leader ends.  (Alone, this server always leads:
 * the write still out is set by hand.) */
static void forwarded_write_out_on_a_new_leader(void **state)
{
    struct sfx *f = *state;
    struct carrier k;
    struct tb_wbuf body, acl;

    tb_wbuf_init(&body);
    tb_wbuf_init(&acl);
    carrier_open(f, &k, 11);
    k.pc.forwarded = 1;
    k.pc.writes_in_flight = 1;
    tb_put_acl(&acl, &(struct tb_acl){TB_PERM_ALL,
                                      {TB_STR("world"), TB_STR("anyone")}});
    tb_create_req_encode(&body,
                         &(struct tb_create_req){TB_STR("/fw"), TB_STR("x"),
                                                 tb_vec_view(&acl, 1), 0});
    request(&k, &body, 1, TB_OP_CREATE);
    assert_int_equal(k.closes, 1);
    assert_int_equal(k.frames, 1);
    assert_null(tree_find(fsm_tree(f->s.fsm), TB_STR("/fw")));
    carrier_free(&k);
    tb_wbuf_free(&body);
    tb_wbuf_free(&acl);
}

/* One create sub-op of a multi, as a client may send it. */
static void multi_create(struct tb_wbuf *w, const struct tb_wbuf *acl,
                         int32_t type, const char *path, int32_t flags,
                         int64_t ttl)
{
    struct tb_multi_op op = {.type = type};

    op.u.create = (struct tb_create_ttl_req){
        {path, strlen(path)}, TB_STR(""), tb_vec_view(acl, 1), flags, ttl};
    tb_multi_op_encode(w, &op);
}

/* The multi's answer, the k->frames-th frame: each result's type and
 * error, in `types` and `errs` (at most 4). */
static int multi_results(struct carrier *k, int32_t *types, int32_t *errs)
{
    struct tb_rd rd = nth_frame(k, k->frames);
    struct tb_reply_header h;
    struct tb_multi_header mh;
    struct tb_path_resp pr;
    struct tb_stat st;
    int n = 0;

    assert_int_equal(tb_reply_header_decode(&rd, &h), 0);
    assert_int_equal(h.err, 0);
    for (;;) {
        assert_int_equal(tb_multi_header_decode(&rd, &mh), 0);
        if (mh.done)
            return n;
        assert_true(n < 4);
        types[n] = mh.type;
        errs[n++] = mh.err;
        if (mh.type == TB_OP_ERROR)
            assert_int_equal(tb_get_I32(&rd, &mh.err), 0);
        else if (mh.type == TB_OP_CREATE)
            assert_int_equal(tb_path_resp_decode(&rd, &pr), 0);
        else if (mh.type == TB_OP_CREATE2)
            assert_true(tb_path_resp_decode(&rd, &pr) == 0 &&
                        tb_get_STAT(&rd, &st) == 0);
    }
}

/* A multi's creates make what their modes say, whatever their opcodes,
 * as ZooKeeper's do; and a TTL create in one is refused with extended
 * types off, as a createTTL request is. */
static void multi_creates_follow_their_modes(void **state)
{
    struct sfx *f = *state;
    struct carrier k;
    struct tb_wbuf body, acl;
    struct tree_node *n;
    int32_t types[4], errs[4];

    tb_wbuf_init(&body);
    tb_wbuf_init(&acl);
    tb_put_acl(&acl, &(struct tb_acl){TB_PERM_ALL,
                                      {TB_STR("world"), TB_STR("anyone")}});
    carrier_open(f, &k, 13);

    /* The C client's container: opcode create, mode container. */
    multi_create(&body, &acl, TB_OP_CREATE, "/c", TB_CONTAINER, -1);
    multi_create(&body, &acl, TB_OP_CREATE, "/c/k", TB_PERSISTENT, -1);
    multi_create(&body, &acl, TB_OP_CREATECONTAINER, "/p", TB_PERSISTENT, -1);
    multi_create(&body, &acl, TB_OP_CREATETTL, "/q", TB_PERSISTENT, 100);
    tb_multi_end_encode(&body);
    request(&k, &body, 1, TB_OP_MULTI);
    assert_true(run_until(f, &k.frames, 2));
    assert_int_equal(multi_results(&k, types, errs), 4);
    assert_int_equal(types[0], TB_OP_CREATE2);
    assert_int_equal(types[1], TB_OP_CREATE);
    assert_int_equal(types[2], TB_OP_CREATE);
    assert_int_equal(types[3], TB_OP_CREATE);
    n = tree_find(fsm_tree(f->s.fsm), TB_STR("/c"));
    assert_non_null(n);
    assert_int_equal(tree_owner_kind(tree_node_owner(n)), TREE_CONTAINER);
    n = tree_find(fsm_tree(f->s.fsm), TB_STR("/p"));
    assert_non_null(n);
    assert_int_equal(tree_node_owner(n), 0);
    n = tree_find(fsm_tree(f->s.fsm), TB_STR("/q"));
    assert_non_null(n);
    assert_int_equal(tree_node_owner(n), 0);

    /* Extended types off: the multi fails at its TTL create, answered
     * without the log; nothing of it is made. */
    f->cfg.extended_types_enabled = 0;
    multi_create(&body, &acl, TB_OP_CREATE, "/x", TB_PERSISTENT, -1);
    multi_create(&body, &acl, TB_OP_CREATE, "/t", TB_PERSISTENT_WITH_TTL, -1);
    multi_create(&body, &acl, TB_OP_CREATE, "/y", TB_PERSISTENT, -1);
    tb_multi_end_encode(&body);
    request(&k, &body, 2, TB_OP_MULTI);
    assert_int_equal(k.frames, 3);
    assert_int_equal(multi_results(&k, types, errs), 3);
    assert_int_equal(errs[0], 0);
    assert_int_equal(errs[1], TB_EUNIMPLEMENTED);
    assert_int_equal(errs[2], TB_ERUNTIMEINCONSISTENCY);
    assert_null(tree_find(fsm_tree(f->s.fsm), TB_STR("/x")));

    carrier_free(&k);
    tb_wbuf_free(&body);
    tb_wbuf_free(&acl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(expires_on_the_clock, setup, teardown),
        cmocka_unit_test_setup_teardown(touch_counts_from_then, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(stalled_loop_counts_against_no_session,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(fresh_timeout_after_restart, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(reload_counts_from_now, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(no_expiry_before_leadership_is_told,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(new_session_only_to_its_own_waiter,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(forwarded_write_out_on_a_new_leader,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(multi_creates_follow_their_modes, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(client_without_a_socket, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(revalidated_resume_reads_on, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(close_answered_with_requests_after,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(claim_of_closed_session_refused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(scratch_failure_passes, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(closing_session_refused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(zxids_never_go_back, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
