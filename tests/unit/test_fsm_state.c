/* Unit tests of the state machine as a whole: determinism of a random
 * workload across replicas and restores; snapshots (round trip,
 * truncation, corruption); and allocation failure at every point of an
 * apply leaving the state untouched. */
#include "fsm_fixture.h"

/* A workload touching every txn kind, from a seeded generator. */
struct rng {
    uint64_t s;
};

static uint32_t rnd(struct rng *r, uint32_t n)
{
    r->s = r->s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(r->s >> 33) % n;
}

struct pick {
    uint64_t left;
    int64_t id;
};

static int pick_cb(void *data, const struct fsm_session_info *s)
{
    struct pick *p = data;

    p->id = s->id;
    return p->left-- == 0;
}

/* A live session mostly, sometimes one that does not exist. */
static int64_t pick_session(struct rng *g, struct fx *x)
{
    struct pick p = {rnd(g, (uint32_t)fsm_session_count(x->f) + 1), 12345};

    fsm_session_foreach(x->f, pick_cb, &p);
    return p.left == UINT64_MAX ? 12345 : p.id;
}

static void random_txn(struct rng *g, struct fx *x, struct tb_wbuf *e)
{
    static const char *names[] = {"/a",   "/a/b", "/a/c",   "/b",
                                  "/b/x", "/c",   "/a/b/d", "/e"};
    const char *p = names[rnd(g, 8)];
    struct tb_wbuf b;
    struct multi m;
    int64_t sid = pick_session(g, x);
    int k = (int)rnd(g, 10), i;

    tb_wbuf_init(&b);
    if (k == 0) {
        struct tb_create_session_txn cs = {(int32_t)rnd(g, 9999),
                                           TB_STR("0123456789abcdef")};
        tb_create_session_txn_encode(&b, &cs);
        encode_txn(x, TB_OP_CREATESESSION, 0,
                   (struct tb_str){(char *)b.base, b.len}, e);
    } else if (k == 1) {
        encode_txn(x, TB_OP_CLOSESESSION, sid, TB_STR(""), e);
    } else if (k <= 4) {
        struct tb_create_req c = {tb_str_c(p), TB_STR("x"), tb_acl_open_unsafe,
                                  (int32_t)rnd(g, 5)};
        int32_t type = c.flags == 4 ? TB_OP_CREATECONTAINER : TB_OP_CREATE;
        tb_create_req_encode(&b, &c);
        encode_txn(x, type, sid, (struct tb_str){(char *)b.base, b.len}, e);
    } else if (k <= 6) {
        struct tb_delete_req d = {tb_str_c(p), -1};
        tb_delete_req_encode(&b, &d);
        encode_txn(x, TB_OP_DELETE, sid, (struct tb_str){(char *)b.base, b.len},
                   e);
    } else if (k == 7) {
        struct tb_set_data_req sd = {tb_str_c(p), TB_STR("y"), -1};
        tb_set_data_req_encode(&b, &sd);
        encode_txn(x, TB_OP_SETDATA, sid,
                   (struct tb_str){(char *)b.base, b.len}, e);
    } else if (k == 8) {
        struct tb_path_req dc = {tb_str_c(p)};
        tb_path_req_encode(&b, &dc);
        encode_txn(x, TB_OP_DELETECONTAINER, 0,
                   (struct tb_str){(char *)b.base, b.len}, e);
    } else {
        tb_wbuf_init(&m.w);
        for (i = (int)rnd(g, 4); i >= 0; i--) {
            switch (rnd(g, 3)) {
            case 0:
                m_create(&m, TB_OP_CREATE, names[rnd(g, 8)], (int32_t)rnd(g, 4),
                         -1);
                break;
            case 1:
                m_delete(&m, names[rnd(g, 8)], -1);
                break;
            default:
                m_set(&m, names[rnd(g, 8)], -1);
            }
        }
        tb_multi_end_encode(&m.w);
        encode_txn(x, TB_OP_MULTI, sid,
                   (struct tb_str){(char *)m.w.base, m.w.len}, e);
        tb_wbuf_free(&m.w);
    }
    tb_wbuf_free(&b);
}

static void run_workload(struct rng *g, struct fx **xs, int nx, int n)
{
    struct tb_wbuf e;
    int i, j;

    for (i = 0; i < n; i++) {
        xs[0]->time += rnd(g, 3000);
        random_txn(g, xs[0], &e);
        for (j = 0; j < nx; j++) {
            apply_raw(xs[j], e.base, e.len);
        }
        tb_wbuf_free(&e);
    }
}

static void assert_same_state(struct fx *a, struct fx *b)
{
    struct tb_wbuf wa;

    snap(a, &wa);
    assert_snapshot_is(b, &wa);
    tb_wbuf_free(&wa);
    assert_int_equal(a->digest, b->digest);
}

/* Two replicas, one log: identical results, events and snapshot bytes. A
 * third replica restored from a snapshot half-way agrees from there on. */
static void test_determinism(void **state)
{
    struct fx *a = fx_new(), *b = fx_new(), *c = fx_new();
    struct fx *ab[2] = {a, b}, *ac[2] = {a, c};
    struct rng g = {42};
    struct tb_wbuf w;

    (void)state;
    run_workload(&g, ab, 2, 1500);
    assert_same_state(a, b);
    assert_true(fsm_session_count(a->f) > 0);
    assert_true(tree_count(fsm_tree(a->f)) > 6);

    snap(a, &w);
    assert_int_equal(fsm_restore(c->f, w.base, w.len), 0);
    chk(c);
    assert_snapshot_is(c, &w);
    assert_int_equal(fsm_last_zxid(c->f), a->zxid);
    c->zxid = a->zxid;
    c->time = a->time;
    a->digest = c->digest = 0;
    run_workload(&g, ac, 2, 1500);
    assert_same_state(a, c);
    tb_wbuf_free(&w);
    fx_free(a);
    fx_free(b);
    fx_free(c);
}

static struct fx *sample(void)
{
    struct fx *x = fx_new();
    int64_t s1 = open_session(x, 10000), s2 = open_session(x, 4000);
    struct tb_wbuf w;

    assert_int_equal(create(x, s1, "/a", 0), 0);
    assert_int_equal(create(x, s1, "/a/e", TB_EPHEMERAL), 0);
    assert_int_equal(create(x, s2, "/a/s-", TB_EPHEMERAL_SEQUENTIAL), 0);
    assert_int_equal(create_full(x, s1, TB_OP_CREATECONTAINER, TB_STR("/c"),
                                 TB_STR_NULL, tb_acl_open_unsafe, 4, -1),
                     0);
    assert_int_equal(
        create_acl(x, s1, "/d", one_acl(&w, 3, "digest", "al:pw=")), 0);
    tb_wbuf_free(&w);
    assert_int_equal(set_data(x, s2, "/a", TB_STR("data"), -1), 0);
    return x;
}

static void test_snapshot_round_trip(void **state)
{
    struct fx *x = sample(), *y = fx_new();
    struct tb_wbuf w;
    struct fsm_session_info a, b;
    int64_t s1 = fsm_session_id_for(1);

    (void)state;
    snap(x, &w);
    assert_int_equal(fsm_restore(y->f, w.base, w.len), 0);
    chk(y);
    assert_snapshot_is(y, &w);
    assert_int_equal(fsm_session_count(y->f), 2);
    assert_int_equal(fsm_session_get(x->f, s1, &a), 1);
    assert_int_equal(fsm_session_get(y->f, s1, &b), 1);
    assert_int_equal(a.id, b.id);
    assert_int_equal(a.timeout_ms, b.timeout_ms);
    assert_memory_equal(a.passwd, b.passwd, sizeof a.passwd);
    assert_int_equal(fsm_ephemeral_count(y->f), 2);
    assert_int_equal(fsm_last_zxid(y->f), x->zxid);
    /* Trailing padding is ignored. */
    tb_wbuf_put(&w, "\0\0\0", 3);
    assert_int_equal(fsm_restore(y->f, w.base, w.len), 0);
    /* The restored replica goes on like the original. */
    y->zxid = x->zxid;
    assert_int_equal(close_session(x, s1), 0);
    assert_int_equal(close_session(y, s1), 0);
    assert_int_equal(create(x, fsm_session_id_for(2), "/a/s-", 2), 0);
    assert_int_equal(create(y, fsm_session_id_for(2), "/a/s-", 2), 0);
    body_path_is(y, "/a/s-0000000002");
    tb_wbuf_free(&w);
    snap(x, &w);
    assert_snapshot_is(y, &w);
    tb_wbuf_free(&w);
    fx_free(x);
    fx_free(y);
}

/* Where a snapshot's first session record starts. */
#define SESSIONS (SNAP_HEADER + 4)

static void test_snapshot_rejected(void **state)
{
    struct fx *x = sample(), *y = sample();
    struct tb_wbuf w, keep, forged;
    size_t cut, i;
    uint8_t *copy;

    (void)state;
    assert_int_equal(close_session(y, fsm_session_id_for(2)), 0);
    snap(x, &w);
    snap(y, &keep);
    for (cut = 0; cut < w.len; cut++) {
        copy = malloc(cut + 1);
        memcpy(copy, w.base, cut);
        assert_int_equal(fsm_restore(y->f, copy, cut), TB_EDATAINCONSISTENCY);
        free(copy);
    }
    for (i = 0; i < w.len; i++) {
        w.base[i] ^= 0x20;
        if (fsm_restore(y->f, w.base, w.len) != TB_EDATAINCONSISTENCY)
            fail_msg("flip at %zu of %zu accepted", i, w.len);
        w.base[i] ^= 0x20;
    }
    assert_int_equal(fsm_restore(y->f, NULL, 0), TB_EDATAINCONSISTENCY);
    /* Past the checksum: an ephemeral whose session is missing (the
     * second session's record dropped), and a duplicate session. */
    tb_wbuf_init(&forged);
    tb_wbuf_put(&forged, w.base, SNAP_HEADER);
    tb_put_I32(&forged, 1);
    tb_wbuf_put(&forged, w.base + SESSIONS, 28);
    tb_wbuf_put(&forged, w.base + SESSIONS + 56, w.len - SESSIONS - 56);
    reseal(&forged);
    assert_int_equal(fsm_restore(y->f, forged.base, forged.len),
                     TB_EDATAINCONSISTENCY);
    forged.len = 0;
    tb_wbuf_put(&forged, w.base, SNAP_HEADER);
    tb_put_I32(&forged, 2);
    tb_wbuf_put(&forged, w.base + SESSIONS, 28);
    tb_wbuf_put(&forged, w.base + SESSIONS, 28);
    tb_wbuf_put(&forged, w.base + SESSIONS + 56, w.len - SESSIONS - 56);
    reseal(&forged);
    assert_int_equal(fsm_restore(y->f, forged.base, forged.len),
                     TB_EDATAINCONSISTENCY);
    /* Trailing garbage inside the body. */
    forged.len = 0;
    tb_wbuf_put(&forged, w.base, w.len);
    tb_wbuf_put(&forged, "x", 1);
    reseal(&forged);
    assert_int_equal(fsm_restore(y->f, forged.base, forged.len),
                     TB_EDATAINCONSISTENCY);
    /* And the resealed original is fine. */
    forged.len = 0;
    tb_wbuf_put(&forged, w.base, w.len);
    reseal(&forged);
    assert_int_equal(memcmp(forged.base, w.base, w.len), 0);
    /* Nothing above touched y. */
    assert_snapshot_is(y, &keep);
    chk(y);
    tb_wbuf_free(&forged);
    tb_wbuf_free(&keep);
    tb_wbuf_free(&w);
    fx_free(x);
    fx_free(y);
}

/* The entry at `index`: its result code, the zxid it reported. */
static int apply_at(struct fx *x, int64_t index, int32_t type,
                    const struct tb_wbuf *body)
{
    struct tb_wbuf e;

    encode_txn(x, type, fsm_session_id_for(1),
               (struct tb_str){(const char *)body->base, body->len}, &e);
    assert_int_equal(fsm_apply(x->f, index, e.base, e.len), 0);
    tb_wbuf_free(&e);
    return x->rc;
}

static void new_epoch_at(struct fx *x, int64_t index, int64_t zxid)
{
    struct tb_wbuf b;

    tb_wbuf_init(&b);
    tb_new_epoch_txn_encode(&b, &(struct tb_new_epoch_txn){zxid});
    assert_int_equal(apply_at(x, index, TB_OP_NEWEPOCH, &b), 0);
    tb_wbuf_free(&b);
}

/* A new epoch moves zxids ahead from its own entry on, and the log's
 * indexes keep their pace; one behind them changes nothing; one of zxid
 * -i (a recovery's) moves them to the start of the epoch after log index
 * i's, or after the entry before's.  A snapshot
 * keeps the distance: a replica restored from it gives the next entry the
 * same zxid. */
static void test_new_epoch(void **state)
{
    struct fx *x = sample(), *y = fx_new();
    const int64_t epoch = (int64_t)1 << 32;
    int64_t at = x->zxid;
    struct tb_wbuf w, c;

    (void)state;
    new_epoch_at(x, at + 1, epoch);
    assert_int_equal(x->res_zxid, epoch);
    assert_int_equal(fsm_last_zxid(x->f), epoch);
    new_epoch_at(x, at + 2, 5); /* behind: no change */
    assert_int_equal(x->res_zxid, epoch + 1);
    new_epoch_at(x, at + 3, INT64_MIN); /* beyond any log: no change */
    assert_int_equal(x->res_zxid, epoch + 2);
    at++;
    new_epoch_at(x, at + 3, 0); /* a recovery's: the next epoch */
    assert_int_equal(x->res_zxid, 2 * epoch);
    /* ... past a log index beyond this one's: past its epoch */
    new_epoch_at(x, at + 4, -(at + 4 + 2 * epoch));
    assert_int_equal(x->res_zxid, 5 * epoch);
    at += 2;
    snap(x, &w);
    assert_int_equal(fsm_restore(y->f, w.base, w.len), 0);
    assert_snapshot_is(y, &w);
    tb_wbuf_init(&c);
    tb_create_req_encode(&c, &(struct tb_create_req){TB_STR("/n"), TB_STR(""),
                                                     tb_acl_open_unsafe, 0});
    assert_int_equal(apply_at(x, at + 3, TB_OP_CREATE, &c), 0);
    assert_int_equal(apply_at(y, at + 3, TB_OP_CREATE, &c), 0);
    assert_int_equal(x->res_zxid, 5 * epoch + 1);
    assert_int_equal(y->res_zxid, 5 * epoch + 1);
    assert_int_equal(fsm_last_zxid(y->f), 5 * epoch + 1);
    tb_wbuf_free(&c);
    tb_wbuf_free(&w);
    snap(x, &w);
    assert_snapshot_is(y, &w);
    tb_wbuf_free(&w);
    fx_free(x);
    fx_free(y);
}

/* Every allocation of an apply made to fail in turn: TB_ENOMEM, no hook,
 * state unchanged; the retry then succeeds like the first try would. */
static long injected; /* failures the sweeps caused */

static void enomem_sweep(struct fx *x, const struct tb_wbuf *e)
{
    struct tb_wbuf before;
    int calls, rv;
    long n;

    snap(x, &before);
    for (n = 0;; n++) {
        calls = x->hook_calls;
        fail_countdown = n;
        rv = fsm_apply(x->f, x->zxid + 1, e->base, e->len);
        fail_countdown = -1;
        if (rv == 0)
            break;
        assert_int_equal(rv, TB_ENOMEM);
        assert_int_equal(x->hook_calls, calls);
        assert_int_equal(fsm_last_zxid(x->f), x->zxid);
        chk(x);
        assert_snapshot_is(x, &before);
    }
    injected += n;
    x->zxid++;
    chk(x);
    tb_wbuf_free(&before);
}

/* The heavier paths, each under the sweep: a session with many
 * ephemerals closed, a long multi, a long ACL list, setACL. */
static void enomem_heavy(struct fx *x)
{
    struct tb_wbuf b, e;
    struct multi m;
    struct tb_create_session_txn cs = {5000, TB_STR("0123456789abcdef")};
    struct tb_acl a;
    char path[32];
    int64_t sid;
    int i;

    tb_wbuf_init(&b);
    tb_create_session_txn_encode(&b, &cs);
    encode_txn(x, TB_OP_CREATESESSION, 0,
               (struct tb_str){(char *)b.base, b.len}, &e);
    enomem_sweep(x, &e);
    sid = fsm_session_id_for(x->zxid);
    tb_wbuf_free(&e);
    tb_wbuf_init(&m.w);
    for (i = 0; i < 40; i++) {
        snprintf(path, sizeof path, "/h%d", i);
        m_create(&m, TB_OP_CREATE, path, i % 4, -1);
    }
    m_set(&m, "/h0", -1);
    m_delete(&m, "/h4", -1);
    tb_multi_end_encode(&m.w);
    encode_txn(x, TB_OP_MULTI, sid, (struct tb_str){(char *)m.w.base, m.w.len},
               &e);
    enomem_sweep(x, &e);
    tb_wbuf_free(&e);
    tb_wbuf_free(&m.w);
    b.len = 0;
    {
        struct tb_wbuf acl;
        struct tb_set_acl_req r;

        tb_wbuf_init(&acl);
        for (i = 0; i < 40; i++) {
            snprintf(path, sizeof path, "10.0.0.%d", i % 30);
            a = (struct tb_acl){1 + i % 2, {TB_STR("ip"), tb_str_c(path)}};
            tb_put_acl(&acl, &a);
        }
        r = (struct tb_set_acl_req){TB_STR("/h0"), tb_vec_view(&acl, 40), -1};
        tb_set_acl_req_encode(&b, &r);
        encode_txn(x, TB_OP_SETACL, sid, (struct tb_str){(char *)b.base, b.len},
                   &e);
        enomem_sweep(x, &e);
        tb_wbuf_free(&e);
        tb_wbuf_free(&acl);
    }
    assert_int_equal(x->rc, 0);
    assert_int_equal(tree_ephemerals_count(fsm_tree(x->f), sid), 20);
    encode_txn(x, TB_OP_CLOSESESSION, sid, TB_STR(""), &e);
    enomem_sweep(x, &e);
    assert_int_equal(x->rc, 0);
    assert_int_equal(fsm_ephemeral_count(x->f), 0);
    tb_wbuf_free(&e);
    tb_wbuf_free(&b);
}

static void test_out_of_memory(void **state)
{
    struct fx *x = fx_new(), *y;
    struct rng g = {7};
    struct tb_wbuf e;
    int i;

    (void)state;
    enomem_heavy(x);
    for (i = 0; i < 400; i++) {
        random_txn(&g, x, &e);
        enomem_sweep(x, &e);
        tb_wbuf_free(&e);
    }
    assert_true(injected > 100);
    /* The same log without failures reaches the same state. */
    y = fx_new();
    enomem_heavy(y);
    g.s = 7;
    for (i = 0; i < 400; i++) {
        random_txn(&g, y, &e);
        apply_raw(y, e.base, e.len);
        tb_wbuf_free(&e);
    }
    x->digest = y->digest = 0;
    assert_same_state(x, y);
    fx_free(x);
    fx_free(y);
}
/* A failed allocation in quota accounting fails the write whole: the apply
 * that succeeds has the stats counted (they missed it before, and a
 * replica's quota checks then differed from the others'). */
/* The same inside a multi: a delete whose stats update failed lowered no
 * count, and the create after it was refused as over the hard limit, on
 * that replica alone; the multi's rollback then cleared the failure, and
 * the apply succeeded with another outcome than every other replica's.
 * Now each apply either fails whole or ends as one without failures. */
static void test_out_of_memory_quota_in_multi(void **state)
{
    static const char *const nodes[][2] = {
        {"/qq", ""},
        {"/qq/a", ""},
        {"/zookeeper/quota/qq", ""},
        {"/zookeeper/quota/qq/zookeeper_limits", "countHardLimit=2"},
        {"/zookeeper/quota/qq/zookeeper_stats", "count=2,bytes=0"},
    };
    struct fx *x = fx_new(), *y = fx_new();
    int64_t sid = open_session(x, 10000);
    struct tb_wbuf e, s0, want;
    struct multi m;
    size_t i;
    long n;
    int rv;

    (void)state;
    for (i = 0; i < sizeof nodes / sizeof nodes[0]; i++)
        assert_int_equal(
            create_full(x, sid, TB_OP_CREATE, tb_str_c(nodes[i][0]),
                        tb_str_c(nodes[i][1]), tb_acl_open_unsafe, 0, -1),
            0);
    x->flags = TB_TXN_ENFORCE_QUOTA;
    tb_wbuf_init(&m.w);
    m_delete(&m, "/qq/a", -1);
    m_create(&m, TB_OP_CREATE, "/qq/b", 0, -1);
    tb_multi_end_encode(&m.w);
    encode_txn(x, TB_OP_MULTI, sid, (struct tb_str){(char *)m.w.base, m.w.len},
               &e);
    snap(x, &s0);
    /* The outcome without failures: the multi succeeds. */
    assert_int_equal(fsm_restore(y->f, s0.base, s0.len), 0);
    y->zxid = x->zxid;
    assert_int_equal(apply_raw(y, e.base, e.len), 0);
    assert_int_equal(y->rc, 0);
    assert_int_equal(exists(y, "/qq/b"), 1);
    snap(y, &want);
    for (n = 0;; n++) {
        assert_int_equal(fsm_restore(x->f, s0.base, s0.len), 0);
        fail_countdown = n;
        rv = fsm_apply(x->f, x->zxid + 1, e.base, e.len);
        fail_countdown = -1;
        if (rv == 0)
            break;
        assert_int_equal(rv, TB_ENOMEM);
    }
    assert_true(n > 0);
    x->zxid++;
    assert_snapshot_is(x, &want);
    tb_wbuf_free(&want);
    tb_wbuf_free(&s0);
    tb_wbuf_free(&e);
    tb_wbuf_free(&m.w);
    fx_free(x);
    fx_free(y);
}

static void test_out_of_memory_quota(void **state)
{
    static const char *const nodes[][2] = {
        {"/qq", ""},
        {"/zookeeper/quota/qq", ""},
        {"/zookeeper/quota/qq/zookeeper_limits", "count=10,bytes=-1"},
        {"/zookeeper/quota/qq/zookeeper_stats", "count=0,bytes=0"},
    };
    struct fx *x = fx_new();
    int64_t sid = open_session(x, 10000);
    struct tb_wbuf b, e;
    struct tb_str d;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof nodes / sizeof nodes[0]; i++)
        assert_int_equal(
            create_full(x, sid, TB_OP_CREATE, tb_str_c(nodes[i][0]),
                        tb_str_c(nodes[i][1]), tb_acl_open_unsafe, 0, -1),
            0);
    tb_wbuf_init(&b);
    tb_create_req_encode(&b,
                         &(struct tb_create_req){TB_STR("/qq/a"), TB_STR("abc"),
                                                 tb_acl_open_unsafe, 0});
    encode_txn(x, TB_OP_CREATE, sid, (struct tb_str){(char *)b.base, b.len},
               &e);
    enomem_sweep(x, &e);
    d = tree_node_data(tree_find(
        fsm_tree(x->f), TB_STR("/zookeeper/quota/qq/zookeeper_stats")));
    assert_int_equal(d.len, strlen("count=2,bytes=3"));
    assert_memory_equal(d.ptr, "count=2,bytes=3", d.len);
    tb_wbuf_free(&e);
    tb_wbuf_free(&b);
    fx_free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_determinism),
        cmocka_unit_test(test_snapshot_round_trip),
        cmocka_unit_test(test_snapshot_rejected),
        cmocka_unit_test(test_new_epoch),
        cmocka_unit_test(test_out_of_memory),
        cmocka_unit_test(test_out_of_memory_quota),
        cmocka_unit_test(test_out_of_memory_quota_in_multi),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
