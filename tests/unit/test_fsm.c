/* Unit tests of the state machine: txns built with the proto encoders are
 * applied and the results, result bodies, watch events, stats and
 * sequence names are compared with what ZooKeeper 3.8 produces; every
 * error of each check order; multi atomicity (snapshot bytes unchanged by
 * a failed multi); sessions and their ephemerals; container and TTL
 * cleanup; snapshots (round trip, truncation, corruption); determinism of
 * a random workload across replicas and restores; and allocation failure
 * at every point of an apply leaving the state untouched.
 *
 * The tree's consistency checker runs after every apply. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include "server/fsm/fsm.h"

/* Allocation failure injection: the libraries' malloc/calloc/realloc are
 * routed here by the linker (--wrap); the Nth call from now fails. */
void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);
static long fail_countdown = -1; /* -1: never fail */
static long alloc_calls;

static int should_fail(void)
{
    alloc_calls++;
    if (fail_countdown < 0)
        return 0;
    return fail_countdown-- == 0;
}

void *__wrap_malloc(size_t n)
{
    return should_fail() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t m)
{
    return should_fail() ? NULL : __real_calloc(n, m);
}

void *__wrap_realloc(void *p, size_t n)
{
    return should_fail() ? NULL : __real_realloc(p, n);
}

/* The fixture: one fsm, what its hooks reported, and the caller identity
 * the next txns carry. */
struct fx {
    struct fsm *f;
    int64_t zxid;
    int64_t time;
    struct tb_wbuf ids;
    int32_t nids;
    int super;
    /* recorded by the hooks */
    int results;
    int rc;
    int64_t res_zxid;
    int32_t res_type;
    int64_t res_origin;
    struct tb_wbuf body;
    struct tb_wbuf ev;     /* "type path|" per event */
    struct tb_wbuf ev_acl; /* "n|" per event: ACL element count */
    struct tb_wbuf sess;   /* "+id|" / "-id|" */
    int hook_calls;
    uint64_t digest; /* of everything the hooks reported */
};

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
    const uint8_t *s = p;
    size_t i;

    for (i = 0; i < n; i++)
        h = (h ^ s[i]) * 0x100000001b3ULL;
    return h;
}

static void on_event(void *data, int type, struct tb_str path,
                     struct tb_vec acl)
{
    struct fx *x = data;

    x->hook_calls++;
    x->digest = mix(x->digest, &type, sizeof type);
    x->digest = mix(x->digest, path.ptr, path.len);
    x->digest = mix(x->digest, acl.raw, acl.len);
    tb_wbuf_printf(&x->ev, "%d %.*s|", type, (int)path.len, path.ptr);
    tb_wbuf_printf(&x->ev_acl, "%d|", acl.n);
}

static void on_result(void *data, const struct tb_txn *txn, int64_t zxid,
                      int rc, const uint8_t *body, size_t len)
{
    struct fx *x = data;

    x->hook_calls++;
    x->digest = mix(x->digest, &rc, sizeof rc);
    x->digest = mix(x->digest, &zxid, sizeof zxid);
    x->digest = mix(x->digest, body, len);
    x->results++;
    x->rc = rc;
    x->res_zxid = zxid;
    x->res_type = txn->type;
    x->res_origin = txn->origin;
    x->body.len = 0;
    tb_wbuf_put(&x->body, body, len);
}

static void on_session(void *data, int64_t id, int32_t timeout, int opened)
{
    struct fx *x = data;

    x->hook_calls++;
    x->digest = mix(x->digest, &id, sizeof id);
    x->digest = mix(x->digest, &opened, sizeof opened);
    tb_wbuf_printf(&x->sess, "%c%llx/%d|", opened ? '+' : '-',
                   (unsigned long long)id, timeout);
}

static void chk(struct fx *x)
{
    char why[256] = "";

    if (tree_check(fsm_tree(x->f), why, sizeof why) != 0)
        fail_msg("tree_check: %s", why);
}

static struct fx *fx_new(void)
{
    struct fx *x = calloc(1, sizeof *x);
    struct fsm_hooks h = {x, on_event, on_result, on_session};

    assert_int_equal(fsm_init(&x->f, &h), 0);
    x->time = 1000000;
    chk(x);
    return x;
}

static void fx_free(struct fx *x)
{
    fsm_close(x->f);
    tb_wbuf_free(&x->ids);
    tb_wbuf_free(&x->body);
    tb_wbuf_free(&x->ev);
    tb_wbuf_free(&x->ev_acl);
    tb_wbuf_free(&x->sess);
    free(x);
}

static void fx_id(struct fx *x, const char *scheme, const char *id)
{
    struct tb_id i = {tb_str_c(scheme), tb_str_c(id)};

    tb_put_id(&x->ids, &i);
    x->nids++;
}

static void encode_txn(struct fx *x, int32_t type, int64_t session,
                       struct tb_str body, struct tb_wbuf *out)
{
    struct tb_txn t = {type,
                       session,
                       1,
                       x->time,
                       77,
                       (uint8_t)x->super,
                       {x->nids, x->ids.base, x->ids.len},
                       body};

    tb_wbuf_init(out);
    tb_txn_encode(out, &t);
}

/* Applies raw entry bytes as the next zxid; exactly one result. */
static int apply_raw(struct fx *x, const void *p, size_t n)
{
    int before = x->results;

    x->ev.len = 0;
    x->ev_acl.len = 0;
    assert_int_equal(fsm_apply(x->f, ++x->zxid, p, n), 0);
    assert_int_equal(x->results, before + 1);
    assert_int_equal(x->res_zxid, x->zxid);
    assert_int_equal(fsm_last_zxid(x->f), x->zxid);
    chk(x);
    return x->rc;
}

static int apply(struct fx *x, int32_t type, int64_t session,
                 const struct tb_wbuf *body)
{
    struct tb_wbuf e;
    int rc;

    encode_txn(x, type, session,
               (struct tb_str){body ? (const char *)body->base : "",
                               body ? body->len : 0},
               &e);
    rc = apply_raw(x, e.base, e.len);
    tb_wbuf_free(&e);
    if (rc != 0 && type != TB_OP_MULTI) {
        assert_int_equal(x->body.len, 0);
        assert_int_equal(x->ev.len, 0);
    }
    return rc;
}

static int64_t open_session(struct fx *x, int32_t timeout)
{
    struct tb_wbuf b;
    struct tb_create_session_txn req = {timeout, TB_STR("0123456789abcdef")};
    struct tb_session_resp resp;
    struct tb_rd r;

    tb_wbuf_init(&b);
    tb_create_session_txn_encode(&b, &req);
    assert_int_equal(apply(x, TB_OP_CREATESESSION, 0, &b), 0);
    tb_wbuf_free(&b);
    r = tb_rd_make(x->body.base, x->body.len);
    assert_int_equal(tb_session_resp_decode(&r, &resp), 0);
    assert_int_equal(resp.timeout, timeout);
    assert_int_equal(resp.passwd.len, 16);
    assert_memory_equal(resp.passwd.ptr, "0123456789abcdef", 16);
    assert_int_equal(resp.session, fsm_session_id_for(x->zxid));
    return resp.session;
}

static int close_session(struct fx *x, int64_t sid)
{
    return apply(x, TB_OP_CLOSESESSION, sid, NULL);
}

static int create_full(struct fx *x, int64_t sid, int32_t type,
                       struct tb_str path, struct tb_str data,
                       struct tb_vec acl, int32_t flags, int64_t ttl)
{
    struct tb_wbuf b;
    int rc;

    tb_wbuf_init(&b);
    if (type == TB_OP_CREATETTL) {
        struct tb_create_ttl_req r = {path, data, acl, flags, ttl};
        tb_create_ttl_req_encode(&b, &r);
    } else {
        struct tb_create_req r = {path, data, acl, flags};
        tb_create_req_encode(&b, &r);
    }
    rc = apply(x, type, sid, &b);
    tb_wbuf_free(&b);
    return rc;
}

static int create(struct fx *x, int64_t sid, const char *path, int32_t flags)
{
    return create_full(x, sid, TB_OP_CREATE, tb_str_c(path), TB_STR("d"),
                       tb_acl_open_unsafe, flags, -1);
}

static int create_acl(struct fx *x, int64_t sid, const char *path,
                      struct tb_vec acl)
{
    return create_full(x, sid, TB_OP_CREATE, tb_str_c(path), TB_STR(""), acl, 0,
                       -1);
}

static int del(struct fx *x, int64_t sid, const char *path, int32_t version)
{
    struct tb_wbuf b;
    struct tb_delete_req r = {tb_str_c(path), version};
    int rc;

    tb_wbuf_init(&b);
    tb_delete_req_encode(&b, &r);
    rc = apply(x, TB_OP_DELETE, sid, &b);
    tb_wbuf_free(&b);
    return rc;
}

static int set_data(struct fx *x, int64_t sid, const char *path,
                    struct tb_str data, int32_t version)
{
    struct tb_wbuf b;
    struct tb_set_data_req r = {tb_str_c(path), data, version};
    int rc;

    tb_wbuf_init(&b);
    tb_set_data_req_encode(&b, &r);
    rc = apply(x, TB_OP_SETDATA, sid, &b);
    tb_wbuf_free(&b);
    return rc;
}

static int set_acl(struct fx *x, int64_t sid, const char *path,
                   struct tb_vec acl, int32_t version)
{
    struct tb_wbuf b;
    struct tb_set_acl_req r = {tb_str_c(path), acl, version};
    int rc;

    tb_wbuf_init(&b);
    tb_set_acl_req_encode(&b, &r);
    rc = apply(x, TB_OP_SETACL, sid, &b);
    tb_wbuf_free(&b);
    return rc;
}

static int delete_container(struct fx *x, const char *path)
{
    struct tb_wbuf b;
    struct tb_path_req r = {tb_str_c(path)};
    int rc;

    tb_wbuf_init(&b);
    tb_path_req_encode(&b, &r);
    rc = apply(x, TB_OP_DELETECONTAINER, 0, &b);
    tb_wbuf_free(&b);
    return rc;
}

static struct tb_stat stat_of(struct fx *x, const char *path)
{
    struct tb_stat st;
    struct tree_node *n = tree_find(fsm_tree(x->f), tb_str_c(path));

    assert_non_null(n);
    tree_node_stat(n, &st);
    return st;
}

static int exists(struct fx *x, const char *path)
{
    return tree_find(fsm_tree(x->f), tb_str_c(path)) != NULL;
}

static void ev_is(struct fx *x, const char *expect)
{
    tb_wbuf_put(&x->ev, "", 1);
    x->ev.len--;
    assert_string_equal(x->ev.len ? (char *)x->ev.base : "", expect);
}

/* The path in a CreateResponse / Create2Response body. */
static void body_path_is(struct fx *x, const char *expect)
{
    struct tb_rd r = tb_rd_make(x->body.base, x->body.len);
    struct tb_str p;

    assert_int_equal(tb_get_STR(&r, &p), 0);
    assert_int_equal(p.len, strlen(expect));
    assert_memory_equal(p.ptr, expect, p.len);
}

static struct tb_stat body_stat(struct fx *x, size_t off)
{
    struct tb_rd r = tb_rd_make(x->body.base + off, x->body.len - off);
    struct tb_stat st;

    assert_int_equal(tb_get_STAT(&r, &st), 0);
    assert_ptr_equal(r.pos, r.end);
    return st;
}

static void snap(struct fx *x, struct tb_wbuf *w)
{
    tb_wbuf_init(w);
    assert_int_equal(fsm_snapshot(x->f, w), 0);
}

static void assert_snapshot_is(struct fx *x, const struct tb_wbuf *a)
{
    struct tb_wbuf b;

    snap(x, &b);
    assert_int_equal(a->len, b.len);
    assert_memory_equal(a->base, b.base, a->len);
    tb_wbuf_free(&b);
}

/* The documented checksum, recomputed here to forge snapshots that get
 * past it and exercise the structural checks behind it. */
static uint64_t doc_checksum(const uint8_t *p, size_t n)
{
    uint64_t h = 0x6a09e667f3bcc909ULL ^ n, w;
    uint8_t tail[8] = {0};

    for (; n >= 8; p += 8, n -= 8) {
        w = tb_load_be64(p);
        h = (h ^ w) * 0x9fb21c651e98df25ULL;
        h ^= h >> 28;
    }
    memcpy(tail, p, n);
    h = (h ^ tb_load_be64(tail)) * 0x9fb21c651e98df25ULL;
    h ^= h >> 32;
    return h;
}

static void reseal(struct tb_wbuf *w)
{
    tb_store_be64(w->base + 32, w->len - 40);
    tb_store_be64(w->base + 8, doc_checksum(w->base + 16, w->len - 16));
}

static struct tb_vec one_acl(struct tb_wbuf *w, int32_t perms,
                             const char *scheme, const char *id)
{
    struct tb_acl a = {perms, {tb_str_c(scheme), tb_str_c(id)}};

    tb_wbuf_init(w);
    tb_put_acl(w, &a);
    return tb_vec_view(w, 1);
}

/* Tests. */

static void test_sessions(void **state)
{
    struct fx *x = fx_new();
    struct fsm_session_info info;
    int64_t s1, s2;
    struct tb_wbuf b;
    struct tb_create_session_txn bad = {5000, TB_STR("short")};

    (void)state;
    s1 = open_session(x, 10000);
    assert_int_equal(s1, (int64_t)((1ULL << 56) | 1));
    s2 = open_session(x, 4000);
    assert_int_equal(fsm_session_count(x->f), 2);
    assert_int_equal(fsm_session_get(x->f, s2, &info), 1);
    assert_int_equal(info.timeout_ms, 4000);
    assert_memory_equal(info.passwd, "0123456789abcdef", 16);
    assert_string_equal((char *)x->sess.base, "+100000000000001/10000|"
                                              "+100000000000002/4000|");
    tb_wbuf_init(&b);
    tb_create_session_txn_encode(&b, &bad);
    assert_int_equal(apply(x, TB_OP_CREATESESSION, 0, &b), TB_EMARSHALLING);
    tb_wbuf_free(&b);
    assert_int_equal(fsm_session_count(x->f), 2);

    assert_int_equal(close_session(x, s1), 0);
    assert_int_equal(x->body.len, 0);
    assert_int_equal(fsm_session_get(x->f, s1, NULL), 0);
    assert_int_equal(close_session(x, s1), TB_ESESSIONEXPIRED);
    assert_int_equal(close_session(x, 12345), TB_ESESSIONEXPIRED);
    /* Every write from a closed or unknown session. */
    assert_int_equal(create(x, s1, "/a", 0), TB_ESESSIONEXPIRED);
    assert_int_equal(del(x, s1, "/a", -1), TB_ESESSIONEXPIRED);
    assert_int_equal(set_data(x, s1, "/", TB_STR(""), -1), TB_ESESSIONEXPIRED);
    assert_int_equal(set_acl(x, 0, "/", tb_acl_open_unsafe, -1),
                     TB_ESESSIONEXPIRED);
    assert_int_equal(x->zxid, 10);
    fx_free(x);
}

static void test_create_basic(void **state)
{
    struct fx *x = fx_new();
    int64_t s = open_session(x, 10000);
    struct tb_stat st;

    (void)state;
    x->time = 5555;
    assert_int_equal(create(x, s, "/a", 0), 0);
    assert_int_equal(x->res_type, TB_OP_CREATE);
    assert_int_equal(x->res_origin, 77);
    body_path_is(x, "/a");
    assert_int_equal(x->body.len, 4 + 2);
    ev_is(x, "1 /a|4 /|");
    st = stat_of(x, "/a");
    assert_int_equal(st.czxid, x->zxid);
    assert_int_equal(st.ctime, 5555);
    assert_int_equal(st.data_length, 1);
    assert_int_equal(stat_of(x, "/").pzxid, x->zxid);
    assert_int_equal(stat_of(x, "/").cversion, 0);

    /* create2 answers path + Stat. */
    assert_int_equal(create_full(x, s, TB_OP_CREATE2, TB_STR("/a/b"),
                                 TB_STR_NULL, tb_acl_open_unsafe, 1, -1),
                     0);
    body_path_is(x, "/a/b");
    st = body_stat(x, 4 + 4);
    assert_int_equal(st.czxid, x->zxid);
    assert_int_equal(st.ephemeral_owner, s);
    assert_int_equal(st.data_length, 0);
    ev_is(x, "1 /a/b|4 /a|");
    assert_null(tree_node_data(tree_find(fsm_tree(x->f), TB_STR("/a/b"))).ptr);

    /* Containers and TTL nodes answer like create2 and hide their owner. */
    assert_int_equal(create_full(x, s, TB_OP_CREATECONTAINER, TB_STR("/c"),
                                 TB_STR(""), tb_acl_open_unsafe, 4, -1),
                     0);
    assert_int_equal(body_stat(x, 4 + 2).ephemeral_owner, 0);
    assert_int_equal(tree_node_owner(tree_find(fsm_tree(x->f), TB_STR("/c"))),
                     TREE_CONTAINER_OWNER);
    assert_int_equal(create_full(x, s, TB_OP_CREATETTL, TB_STR("/t"),
                                 TB_STR(""), tb_acl_open_unsafe, 5, 1000),
                     0);
    assert_int_equal(body_stat(x, 4 + 2).ephemeral_owner, 0);
    assert_int_equal(tree_node_owner(tree_find(fsm_tree(x->f), TB_STR("/t"))),
                     tree_ttl_owner(1000));
    /* Containers and TTL nodes may have children, /zookeeper too. */
    assert_int_equal(create(x, s, "/c/k", 0), 0);
    assert_int_equal(create(x, s, "/t/k", 0), 0);
    assert_int_equal(create(x, s, "/zookeeper/x", 0), 0);
    assert_int_equal(fsm_ephemeral_count(x->f), 1);
    fx_free(x);
}

static void test_sequential_names(void **state)
{
    struct fx *x = fx_new();
    int64_t s = open_session(x, 10000);
    struct tree_node *sq;

    (void)state;
    assert_int_equal(create(x, s, "/sq", 0), 0);
    assert_int_equal(create(x, s, "/sq/n-", 2), 0);
    body_path_is(x, "/sq/n-0000000000");
    assert_int_equal(create(x, s, "/sq/n-", 3), 0);
    body_path_is(x, "/sq/n-0000000001");
    assert_int_equal(create(x, s, "/sq/n-", 2), 0);
    body_path_is(x, "/sq/n-0000000002");
    assert_int_equal(del(x, s, "/sq/n-0000000001", -1), 0);
    assert_int_equal(create(x, s, "/sq/n-", 2), 0);
    body_path_is(x, "/sq/n-0000000003"); /* a delete does not lower it */
    assert_int_equal(create(x, s, "/sq/plain", 0), 0);
    assert_int_equal(create(x, s, "/sq/", 2), 0);
    body_path_is(x, "/sq/0000000005"); /* plain creates count too */
    assert_int_equal(create(x, s, "/sq", 2), 0);
    body_path_is(x, "/sq0000000001");
    assert_int_equal(stat_of(x, "/sq").num_children, 5);
    assert_int_equal(stat_of(x, "/sq").cversion, 7);
    assert_int_equal(create_full(x, s, TB_OP_CREATETTL, TB_STR("/sq/t-"),
                                 TB_STR(""), tb_acl_open_unsafe, 6, 50),
                     0);
    body_path_is(x, "/sq/t-0000000006");

    /* Java's %010d of a wrapped (negative) counter. */
    sq = tree_find(fsm_tree(x->f), TB_STR("/sq"));
    tree_node_set_ccount(sq, INT32_MAX);
    assert_int_equal(create(x, s, "/sq/w-", 2), 0);
    body_path_is(x, "/sq/w-2147483647");
    assert_int_equal(create(x, s, "/sq/w-", 2), 0);
    body_path_is(x, "/sq/w--2147483648");
    tree_node_set_ccount(sq, -1);
    assert_int_equal(create(x, s, "/sq/w-", 2), 0);
    body_path_is(x, "/sq/w--000000001");
    /* A wrapped name may collide: NodeExists, and the counter stays. */
    tree_node_set_ccount(sq, 5);
    assert_int_equal(create(x, s, "/sq/", 2), TB_ENODEEXISTS);
    assert_int_equal(tree_node_ccount(sq), 5);
    fx_free(x);
}

static void test_create_errors(void **state)
{
    struct fx *x = fx_new();
    int64_t s = open_session(x, 10000), gone = fsm_session_id_for(999);
    struct tb_wbuf w, w2;
    struct tb_vec ro = one_acl(&w, TB_PERM_READ, "world", "anyone");
    struct tb_vec bad = one_acl(&w2, TB_PERM_ALL, "world", "nobody");
    struct tb_wbuf before;
    int64_t z;

    (void)state;
    assert_int_equal(create(x, s, "/t", 0), 0);
    assert_int_equal(create_acl(x, s, "/ro", ro), 0);
    assert_int_equal(create(x, s, "/e", TB_EPHEMERAL), 0);
    snap(x, &before);
    z = x->zxid;

    /* Flags and TTL rules come first, even before the session. */
    assert_int_equal(create(x, gone, "/t/x", 7), TB_EBADARGUMENTS);
    assert_int_equal(create(x, gone, "/t/x", -1), TB_EBADARGUMENTS);
    assert_int_equal(create(x, s, "/t/x", 4), TB_EBADARGUMENTS);
    assert_int_equal(create(x, s, "/t/x", 5), TB_EBADARGUMENTS);
    assert_int_equal(create_full(x, s, TB_OP_CREATE2, TB_STR("/t/x"),
                                 TB_STR(""), tb_acl_open_unsafe, 6, -1),
                     TB_EBADARGUMENTS);
    assert_int_equal(create_full(x, s, TB_OP_CREATECONTAINER, TB_STR("/t/x"),
                                 TB_STR(""), tb_acl_open_unsafe, 0, -1),
                     TB_EBADARGUMENTS);
    assert_int_equal(create_full(x, s, TB_OP_CREATETTL, TB_STR("/t/x"),
                                 TB_STR(""), tb_acl_open_unsafe, 0, -1),
                     TB_EBADARGUMENTS);
    assert_int_equal(create_full(x, s, TB_OP_CREATETTL, TB_STR("/t/x"),
                                 TB_STR(""), tb_acl_open_unsafe, 1, 100),
                     TB_EBADARGUMENTS);
    assert_int_equal(create_full(x, s, TB_OP_CREATETTL, TB_STR("/t/x"),
                                 TB_STR(""), tb_acl_open_unsafe, 5, 0),
                     TB_EBADARGUMENTS);
    assert_int_equal(create_full(x, s, TB_OP_CREATETTL, TB_STR("/t/x"),
                                 TB_STR(""), tb_acl_open_unsafe, 5,
                                 TREE_TTL_MAX + 1),
                     TB_EBADARGUMENTS);
    assert_int_equal(create_full(x, gone, TB_OP_CREATETTL, TB_STR("/t/x"),
                                 TB_STR(""), tb_acl_open_unsafe, 5, -5),
                     TB_EBADARGUMENTS);
    /* Then the session, before any path check. */
    assert_int_equal(create(x, gone, "t", 0), TB_ESESSIONEXPIRED);
    /* Cheap path check, then the ACL, then the parent. */
    assert_int_equal(create(x, s, "t", 0), TB_EBADARGUMENTS);
    assert_int_equal(create(x, s, "", 0), TB_EBADARGUMENTS);
    assert_int_equal(create_full(x, s, TB_OP_CREATE, TB_STR("/t/a\0b"),
                                 TB_STR(""), tb_acl_open_unsafe, 0, -1),
                     TB_EBADARGUMENTS);
    assert_int_equal(create_full(x, s, TB_OP_CREATE, TB_STR_NULL, TB_STR(""),
                                 tb_acl_open_unsafe, 0, -1),
                     TB_EBADARGUMENTS);
    assert_int_equal(create_acl(x, s, "t", bad), TB_EBADARGUMENTS);
    assert_int_equal(create_acl(x, s, "/missing/x", bad), TB_EINVALIDACL);
    assert_int_equal(create_acl(x, s, "/t/x", (struct tb_vec){0, NULL, 0}),
                     TB_EINVALIDACL);
    assert_int_equal(create_acl(x, s, "/t/x", tb_acl_creator_all),
                     TB_EINVALIDACL); /* no digest identity */
    assert_int_equal(create(x, s, "/missing/x", 0), TB_ENONODE);
    assert_int_equal(create(x, s, "/t//x", 0), TB_ENONODE);
    assert_int_equal(create(x, s, "/t/./x", 0), TB_ENONODE);
    /* CREATE on the parent is checked before the full path validation. */
    assert_int_equal(create(x, s, "/ro/x", 0), TB_ENOAUTH);
    assert_int_equal(create(x, s, "/ro/.", 0), TB_ENOAUTH);
    assert_int_equal(create(x, s, "/t/", 0), TB_EBADARGUMENTS);
    assert_int_equal(create(x, s, "/t/.", 0), TB_EBADARGUMENTS);
    assert_int_equal(create(x, s, "/t/..", 0), TB_EBADARGUMENTS);
    assert_int_equal(create(x, s, "/t/a\x01", 0), TB_EBADARGUMENTS);
    assert_int_equal(create(x, s, "/t/\xf0\x9f\x98\x80", 0), TB_EBADARGUMENTS);
    /* Then existence, then the ephemeral parent. */
    assert_int_equal(create(x, s, "/", 0), TB_ENODEEXISTS);
    assert_int_equal(create(x, s, "/t", TB_EPHEMERAL), TB_ENODEEXISTS);
    assert_int_equal(create(x, s, "/e", 0), TB_ENODEEXISTS);
    assert_int_equal(create(x, s, "/e/x", 0), TB_ENOCHILDRENFOREPHEMERALS);
    assert_int_equal(create(x, s, "/e/x", 3), TB_ENOCHILDRENFOREPHEMERALS);
    /* Every failure consumed a zxid and changed nothing else. */
    assert_int_equal(x->zxid, z + 35);
    x->zxid = z;
    assert_int_equal(fsm_apply(x->f, z, "", 0), 0); /* last_zxid back */
    assert_int_equal(x->rc, TB_EMARSHALLING);
    assert_snapshot_is(x, &before);

    /* /t/ with a sequential flag passes: the suffix comes first. */
    assert_int_equal(create(x, s, "/t/", 2), 0);
    body_path_is(x, "/t/0000000000");
    assert_int_equal(create(x, s, "/t/é", 0), 0);
    tb_wbuf_free(&before);
    tb_wbuf_free(&w);
    tb_wbuf_free(&w2);
    fx_free(x);
}

static void test_delete(void **state)
{
    struct fx *x = fx_new();
    int64_t s = open_session(x, 10000);
    struct tb_wbuf w;
    struct tb_vec nodel =
        one_acl(&w, TB_PERM_ALL & ~TB_PERM_DELETE, "world", "anyone");
    int32_t cv;

    (void)state;
    assert_int_equal(create(x, s, "/a", 0), 0);
    assert_int_equal(create(x, s, "/a/b", 0), 0);
    assert_int_equal(create_acl(x, s, "/nd", nodel), 0);
    assert_int_equal(create(x, s, "/nd/k", 0), 0);

    assert_int_equal(del(x, fsm_session_id_for(99), "t", -1),
                     TB_ESESSIONEXPIRED);
    assert_int_equal(del(x, s, "t", -1), TB_EBADARGUMENTS);
    assert_int_equal(del(x, s, "/", -1), TB_EBADARGUMENTS);
    assert_int_equal(del(x, s, "/zookeeper", -1), TB_EBADARGUMENTS);
    assert_int_equal(del(x, s, "/zookeeper/quota", -1), TB_EBADARGUMENTS);
    assert_int_equal(del(x, s, "/zookeeper/config", -1), TB_EBADARGUMENTS);
    assert_int_equal(del(x, s, "/missing/x", -1), TB_ENONODE);
    assert_int_equal(del(x, s, "/nd/missing", 5), TB_ENOAUTH); /* parent */
    assert_int_equal(del(x, s, "/nd/k", -1), TB_ENOAUTH);
    assert_int_equal(del(x, s, "/a/", -1), TB_ENONODE);
    assert_int_equal(del(x, s, "/a//b", -1), TB_ENONODE);
    assert_int_equal(del(x, s, "/a/c", 3), TB_ENONODE);
    assert_int_equal(del(x, s, "/a", 3), TB_EBADVERSION);
    assert_int_equal(del(x, s, "/a", 0), TB_ENOTEMPTY);
    assert_int_equal(del(x, s, "/a", -1), TB_ENOTEMPTY);
    cv = stat_of(x, "/a").cversion;
    assert_int_equal(del(x, s, "/a/b", 0), 0);
    assert_int_equal(x->body.len, 0);
    ev_is(x, "2 /a/b|4 /a|");
    assert_int_equal(stat_of(x, "/a").cversion, cv + 1);
    assert_int_equal(stat_of(x, "/a").pzxid, x->zxid);
    assert_int_equal(stat_of(x, "/a").num_children, 0);
    assert_int_equal(set_data(x, s, "/a", TB_STR("v"), -1), 0);
    assert_int_equal(del(x, s, "/a", 0), TB_EBADVERSION);
    assert_int_equal(del(x, s, "/a", 1), 0);
    ev_is(x, "2 /a|4 /|");
    tb_wbuf_free(&w);
    fx_free(x);
}

static void test_set_data(void **state)
{
    struct fx *x = fx_new();
    int64_t s = open_session(x, 10000);
    struct tb_wbuf w;
    struct tb_vec ro = one_acl(&w, TB_PERM_READ, "world", "anyone");
    struct tb_stat st;

    (void)state;
    assert_int_equal(create(x, s, "/a", 0), 0);
    assert_int_equal(create_acl(x, s, "/ro", ro), 0);
    assert_int_equal(set_data(x, 0, "bad", TB_STR(""), -1), TB_ESESSIONEXPIRED);
    assert_int_equal(set_data(x, s, "/a/", TB_STR(""), -1), TB_EBADARGUMENTS);
    assert_int_equal(set_data(x, s, "", TB_STR(""), -1), TB_EBADARGUMENTS);
    assert_int_equal(set_data(x, s, "/b", TB_STR(""), -1), TB_ENONODE);
    assert_int_equal(set_data(x, s, "/ro", TB_STR(""), 9), TB_ENOAUTH);
    assert_int_equal(set_data(x, s, "/a", TB_STR(""), 9), TB_EBADVERSION);
    x->time = 777;
    assert_int_equal(set_data(x, s, "/a", TB_STR("hello"), 0), 0);
    ev_is(x, "3 /a|");
    st = body_stat(x, 0);
    assert_int_equal(st.version, 1);
    assert_int_equal(st.mzxid, x->zxid);
    assert_int_equal(st.mtime, 777);
    assert_int_equal(st.data_length, 5);
    assert_true(st.czxid < st.mzxid);
    assert_int_equal(set_data(x, s, "/a", TB_STR_NULL, -1), 0);
    assert_int_equal(body_stat(x, 0).version, 2);
    assert_null(tree_node_data(tree_find(fsm_tree(x->f), TB_STR("/a"))).ptr);
    assert_int_equal(set_data(x, s, "/zookeeper", TB_STR("z"), -1), 0);
    x->super = 1; /* super ignores ACLs */
    assert_int_equal(set_data(x, s, "/ro", TB_STR("x"), -1), 0);
    tb_wbuf_free(&w);
    fx_free(x);
}

static void test_set_acl(void **state)
{
    struct fx *x = fx_new();
    int64_t s = open_session(x, 10000);
    struct tb_wbuf w1, w2, w3;
    struct tb_vec noadmin =
        one_acl(&w1, TB_PERM_ALL & ~TB_PERM_ADMIN, "world", "anyone");
    struct tb_vec bad = one_acl(&w2, TB_PERM_ALL, "ip", "999.1.1.1");
    struct tb_vec dig = one_acl(&w3, TB_PERM_ALL, "digest", "bob:h=");
    struct tb_stat st;
    int64_t z;

    (void)state;
    assert_int_equal(create(x, s, "/a", 0), 0);
    assert_int_equal(create_acl(x, s, "/na", noadmin), 0);
    z = stat_of(x, "/a").mzxid;
    assert_int_equal(set_acl(x, 0, "/a", bad, -1), TB_ESESSIONEXPIRED);
    assert_int_equal(set_acl(x, s, "a", bad, -1), TB_EBADARGUMENTS);
    assert_int_equal(set_acl(x, s, "/missing", bad, -1), TB_EINVALIDACL);
    assert_int_equal(set_acl(x, s, "/a", (struct tb_vec){0, NULL, 0}, -1),
                     TB_EINVALIDACL);
    assert_int_equal(set_acl(x, s, "/missing", dig, -1), TB_ENONODE);
    assert_int_equal(set_acl(x, s, "/na", dig, 7), TB_ENOAUTH);
    assert_int_equal(set_acl(x, s, "/a", dig, 7), TB_EBADVERSION);
    assert_int_equal(set_acl(x, s, "/a", dig, 0), 0);
    ev_is(x, ""); /* setACL fires nothing */
    st = body_stat(x, 0);
    assert_int_equal(st.aversion, 1);
    assert_int_equal(st.version, 0);
    assert_int_equal(st.mzxid, z);
    /* Now only bob may touch /a. */
    assert_int_equal(set_data(x, s, "/a", TB_STR(""), -1), TB_ENOAUTH);
    fx_id(x, "ip", "127.0.0.1");
    fx_id(x, "digest", "bob:h=");
    assert_int_equal(set_data(x, s, "/a", TB_STR(""), -1), 0);
    /* auth expands to the caller's digest ids. */
    assert_int_equal(set_acl(x, s, "/a", tb_acl_creator_all, 1), 0);
    assert_int_equal(tree_node_acl(tree_find(fsm_tree(x->f), TB_STR("/a"))).len,
                     dig.len);
    assert_memory_equal(
        tree_node_acl(tree_find(fsm_tree(x->f), TB_STR("/a"))).raw, dig.raw,
        dig.len);
    /* /zookeeper/config starts at aversion -1 and READ only. */
    assert_int_equal(set_data(x, s, "/zookeeper/config", TB_STR(""), -1),
                     TB_ENOAUTH);
    assert_int_equal(set_acl(x, s, "/zookeeper/config", dig, -1), TB_ENOAUTH);
    x->super = 1;
    assert_int_equal(set_acl(x, s, "/zookeeper/config", dig, 0),
                     TB_EBADVERSION);
    assert_int_equal(set_acl(x, s, "/zookeeper/config", dig, -1), 0);
    assert_int_equal(body_stat(x, 0).aversion, 0);
    tb_wbuf_free(&w1);
    tb_wbuf_free(&w2);
    tb_wbuf_free(&w3);
    fx_free(x);
}

/* Multi. */

struct multi {
    struct tb_wbuf w;
};

static void m_create(struct multi *m, int32_t type, const char *path,
                     int32_t flags, int64_t ttl)
{
    struct tb_multi_op op = {.type = type};

    op.u.create = (struct tb_create_ttl_req){tb_str_c(path), TB_STR("m"),
                                             tb_acl_open_unsafe, flags, ttl};
    tb_multi_op_encode(&m->w, &op);
}

static void m_delete(struct multi *m, const char *path, int32_t version)
{
    struct tb_multi_op op = {.type = TB_OP_DELETE};

    op.u.del = (struct tb_delete_req){tb_str_c(path), version};
    tb_multi_op_encode(&m->w, &op);
}

static void m_set(struct multi *m, const char *path, int32_t version)
{
    struct tb_multi_op op = {.type = TB_OP_SETDATA};

    op.u.set_data =
        (struct tb_set_data_req){tb_str_c(path), TB_STR("set"), version};
    tb_multi_op_encode(&m->w, &op);
}

static void m_check(struct multi *m, const char *path, int32_t version)
{
    struct tb_multi_op op = {.type = TB_OP_CHECK};

    op.u.check = (struct tb_check_req){tb_str_c(path), version};
    tb_multi_op_encode(&m->w, &op);
}

static int m_apply(struct fx *x, int64_t s, struct multi *m)
{
    int rc;

    tb_multi_end_encode(&m->w);
    rc = apply(x, TB_OP_MULTI, s, &m->w);
    tb_wbuf_free(&m->w);
    tb_wbuf_init(&m->w);
    return rc;
}

/* Reads one result: header, then checks its type and error. */
static void res_hdr(struct tb_rd *r, int32_t type, int32_t err)
{
    struct tb_multi_header h;

    assert_int_equal(tb_multi_header_decode(r, &h), 0);
    assert_int_equal(h.type, type);
    assert_int_equal(h.done, 0);
    assert_int_equal(h.err, err);
}

static void res_end(struct tb_rd *r)
{
    struct tb_multi_header h;

    assert_int_equal(tb_multi_header_decode(r, &h), 0);
    assert_int_equal(h.type, -1);
    assert_int_equal(h.done, 1);
    assert_int_equal(h.err, -1);
    assert_ptr_equal(r->pos, r->end);
}

static void res_path(struct tb_rd *r, const char *expect)
{
    struct tb_str p;

    assert_int_equal(tb_get_STR(r, &p), 0);
    assert_int_equal(p.len, strlen(expect));
    assert_memory_equal(p.ptr, expect, p.len);
}

static void test_multi_success(void **state)
{
    struct fx *x = fx_new();
    int64_t s = open_session(x, 10000);
    struct multi m;
    struct tb_rd r;
    struct tb_stat st;
    struct tb_error_resp e;

    (void)state;
    tb_wbuf_init(&m.w);
    assert_int_equal(create(x, s, "/m", 0), 0);
    m_create(&m, TB_OP_CREATE, "/m/a", 0, -1);
    m_create(&m, TB_OP_CREATE2, "/m/b", 0, -1);
    m_set(&m, "/m/a", 0);
    m_check(&m, "/m/a", 1);
    m_delete(&m, "/m/b", 0);
    m_create(&m, TB_OP_CREATECONTAINER, "/m/c", 4, -1);
    m_create(&m, TB_OP_CREATE, "/m/s-", 2, -1);
    m_create(&m, TB_OP_CREATE, "/m/s-", 2, -1);
    m_create(&m, TB_OP_CREATETTL, "/m/t", 5, 60000);
    assert_int_equal(m_apply(x, s, &m), 0);
    r = tb_rd_make(x->body.base, x->body.len);
    res_hdr(&r, TB_OP_CREATE, 0);
    res_path(&r, "/m/a");
    res_hdr(&r, TB_OP_CREATE, 0); /* create2 downgraded, as 3.8 */
    res_path(&r, "/m/b");
    res_hdr(&r, TB_OP_SETDATA, 0);
    assert_int_equal(tb_get_STAT(&r, &st), 0);
    assert_int_equal(st.version, 1);
    assert_int_equal(st.mzxid, x->zxid);
    res_hdr(&r, TB_OP_CHECK, 0);
    res_hdr(&r, TB_OP_DELETE, 0);
    res_hdr(&r, TB_OP_CREATE2, 0);
    res_path(&r, "/m/c");
    assert_int_equal(tb_get_STAT(&r, &st), 0);
    assert_int_equal(st.czxid, x->zxid);
    res_hdr(&r, TB_OP_CREATE, 0);
    res_path(&r, "/m/s-0000000003");
    res_hdr(&r, TB_OP_CREATE, 0);
    res_path(&r, "/m/s-0000000004");
    res_hdr(&r, TB_OP_CREATE2, 0);
    res_path(&r, "/m/t");
    assert_int_equal(tb_get_STAT(&r, &st), 0);
    res_end(&r);
    ev_is(x, "1 /m/a|4 /m|1 /m/b|4 /m|3 /m/a|2 /m/b|4 /m|1 /m/c|4 /m|"
             "1 /m/s-0000000003|4 /m|1 /m/s-0000000004|4 /m|1 /m/t|4 /m|");
    assert_int_equal(stat_of(x, "/m").pzxid, x->zxid);
    assert_int_equal(stat_of(x, "/m").num_children, 5);

    /* The empty multi: one zxid, just the terminator. */
    assert_int_equal(m_apply(x, s, &m), 0);
    r = tb_rd_make(x->body.base, x->body.len);
    res_end(&r);

    /* Sub-ops see each other: setData then check of the old version. */
    m_set(&m, "/m/a", 1);
    m_check(&m, "/m/a", 1);
    assert_int_equal(m_apply(x, s, &m), 0);
    r = tb_rd_make(x->body.base, x->body.len);
    res_hdr(&r, TB_OP_ERROR, 0);
    assert_int_equal(tb_error_resp_decode(&r, &e), 0);
    assert_int_equal(e.err, 0);
    res_hdr(&r, TB_OP_ERROR, TB_EBADVERSION);
    assert_int_equal(tb_error_resp_decode(&r, &e), 0);
    assert_int_equal(e.err, TB_EBADVERSION);
    res_end(&r);
    ev_is(x, "");
    tb_wbuf_free(&m.w);
    fx_free(x);
}

static void test_multi_failure_rolls_back(void **state)
{
    struct fx *x = fx_new();
    int64_t s = open_session(x, 10000);
    struct multi m;
    struct tb_wbuf before;
    struct tb_rd r;
    struct tb_error_resp e;
    int i;
    int32_t expect[] = {0,
                        0,
                        0,
                        0,
                        0,
                        0,
                        TB_ENONODE,
                        TB_ERUNTIMEINCONSISTENCY,
                        TB_ERUNTIMEINCONSISTENCY};

    (void)state;
    tb_wbuf_init(&m.w);
    assert_int_equal(create(x, s, "/p", 0), 0);
    assert_int_equal(create(x, s, "/p/x", 0), 0);
    assert_int_equal(create(x, s, "/p/y", 0), 0);
    assert_int_equal(create(x, s, "/p/z", TB_EPHEMERAL), 0);
    snap(x, &before);

    m_create(&m, TB_OP_CREATE, "/p/s-", 2, -1); /* counter 3 -> 4 */
    m_delete(&m, "/p/x", -1);                   /* swap-remove */
    m_set(&m, "/p", -1);                        /* data and version */
    m_create(&m, TB_OP_CREATE, "/p/e", TB_EPHEMERAL, -1);
    m_delete(&m, "/p/z", -1); /* an ephemeral */
    m_create(&m, TB_OP_CREATECONTAINER, "/p/c", 4, -1);
    m_delete(&m, "/p/nonexistent", -1); /* fails */
    m_create(&m, TB_OP_CREATE, "/p/never", 0, -1);
    m_create(&m, TB_OP_CREATE, "/p/bad", 99, -1); /* never examined */
    assert_int_equal(m_apply(x, s, &m), 0);       /* header rc stays 0 */
    r = tb_rd_make(x->body.base, x->body.len);
    for (i = 0; i < 9; i++) {
        res_hdr(&r, TB_OP_ERROR, expect[i]);
        assert_int_equal(tb_error_resp_decode(&r, &e), 0);
        assert_int_equal(e.err, expect[i]);
    }
    res_end(&r);
    ev_is(x, "");
    assert_int_equal(fsm_last_zxid(x->f), x->zxid);
    /* Byte for byte the state before, apart from the zxid. */
    tb_store_be64(before.base + 24, (uint64_t)x->zxid);
    reseal(&before);
    assert_snapshot_is(x, &before);
    assert_int_equal(fsm_ephemeral_count(x->f), 1);
    assert_int_equal(create(x, s, "/p/s-", 2), 0);
    body_path_is(x, "/p/s-0000000003");

    /* A failure at the first sub-op. */
    m_create(&m, TB_OP_CREATE, "/p", 0, -1);
    m_create(&m, TB_OP_CREATE, "/p/q", 0, -1);
    assert_int_equal(m_apply(x, s, &m), 0);
    r = tb_rd_make(x->body.base, x->body.len);
    res_hdr(&r, TB_OP_ERROR, TB_ENODEEXISTS);
    assert_int_equal(tb_error_resp_decode(&r, &e), 0);
    res_hdr(&r, TB_OP_ERROR, TB_ERUNTIMEINCONSISTENCY);
    assert_int_equal(tb_error_resp_decode(&r, &e), 0);
    res_end(&r);
    assert_false(exists(x, "/p/q"));

    /* The session is checked per sub-op. */
    m_create(&m, TB_OP_CREATE, "/p/q", 0, -1);
    assert_int_equal(m_apply(x, fsm_session_id_for(12345), &m), 0);
    r = tb_rd_make(x->body.base, x->body.len);
    res_hdr(&r, TB_OP_ERROR, TB_ESESSIONEXPIRED);
    tb_wbuf_free(&before);
    tb_wbuf_free(&m.w);
    fx_free(x);
}

static void test_multi_malformed(void **state)
{
    struct fx *x = fx_new();
    int64_t s = open_session(x, 10000);
    struct multi m;
    struct tb_multi_op op = {.type = TB_OP_GETDATA};
    struct tb_wbuf before;

    (void)state;
    snap(x, &before);
    tb_wbuf_init(&m.w);
    /* A read inside a write multi, after a valid create. */
    m_create(&m, TB_OP_CREATE, "/a", 0, -1);
    op.u.read = (struct tb_path_watch_req){TB_STR("/a"), 0};
    tb_multi_op_encode(&m.w, &op);
    assert_int_equal(m_apply(x, s, &m), TB_EMARSHALLING);
    assert_int_equal(x->body.len, 0);
    assert_false(exists(x, "/a"));
    /* Truncated: no terminator. */
    m_create(&m, TB_OP_CREATE, "/a", 0, -1);
    assert_int_equal(apply(x, TB_OP_MULTI, s, &m.w), TB_EMARSHALLING);
    assert_int_equal(x->body.len, 0);
    assert_false(exists(x, "/a"));
    tb_store_be64(before.base + 24, (uint64_t)x->zxid);
    reseal(&before);
    assert_snapshot_is(x, &before);
    tb_wbuf_free(&before);
    tb_wbuf_free(&m.w);
    fx_free(x);
}

static void test_close_session_ephemerals(void **state)
{
    struct fx *x = fx_new();
    int64_t s1 = open_session(x, 10000), s2 = open_session(x, 20000);
    int32_t cv;

    (void)state;
    assert_int_equal(create(x, s1, "/l", 0), 0);
    assert_int_equal(create(x, s1, "/l/b", TB_EPHEMERAL), 0);
    assert_int_equal(create(x, s1, "/l/a", TB_EPHEMERAL_SEQUENTIAL), 0);
    assert_int_equal(create(x, s2, "/l/c", TB_EPHEMERAL), 0);
    assert_int_equal(create(x, s1, "/e", TB_EPHEMERAL), 0);
    assert_int_equal(fsm_ephemeral_count(x->f), 4);
    assert_int_equal(tree_ephemerals_count(fsm_tree(x->f), s1), 3);
    cv = stat_of(x, "/l").cversion;
    x->sess.len = 0;
    assert_int_equal(close_session(x, s1), 0);
    /* In path order: /e, /l/a0000000001, /l/b. */
    ev_is(x, "2 /e|4 /|2 /l/a0000000001|4 /l|2 /l/b|4 /l|");
    assert_string_equal((char *)x->sess.base, "-100000000000001/10000|");
    assert_int_equal(fsm_ephemeral_count(x->f), 1);
    assert_int_equal(stat_of(x, "/l").cversion, cv + 2);
    assert_int_equal(stat_of(x, "/l").pzxid, x->zxid);
    assert_int_equal(stat_of(x, "/").pzxid, x->zxid);
    assert_true(exists(x, "/l/c"));
    assert_false(exists(x, "/e"));
    assert_int_equal(close_session(x, s2), 0);
    ev_is(x, "2 /l/c|4 /l|");
    assert_int_equal(fsm_ephemeral_count(x->f), 0);
    assert_int_equal(fsm_session_count(x->f), 0);
    fx_free(x);
}

static void test_event_acls(void **state)
{
    struct fx *x = fx_new();
    int64_t s = open_session(x, 10000);
    struct tb_wbuf w;
    struct tb_acl two[2] = {{1, {TB_STR("ip"), TB_STR("1.2.3.4")}},
                            {1, {TB_STR("ip"), TB_STR("1.2.3.5")}}};

    (void)state;
    tb_wbuf_init(&w);
    tb_put_acl(&w, &two[0]);
    tb_put_acl(&w, &two[1]);
    x->super = 1;
    assert_int_equal(create_acl(x, s, "/two", tb_vec_view(&w, 2)), 0);
    assert_string_equal((char *)x->ev_acl.base, "2|1|");
    assert_int_equal(create(x, s, "/two/k", 0), 0);
    assert_string_equal((char *)x->ev_acl.base, "1|2|");
    assert_int_equal(del(x, s, "/two/k", -1), 0);
    assert_string_equal((char *)x->ev_acl.base, "1|2|");
    /* A deleted node's event carries the ACL it had, even once freed. */
    assert_int_equal(del(x, s, "/two", -1), 0);
    assert_string_equal((char *)x->ev_acl.base, "2|1|");
    assert_int_equal(tree_acl_count(fsm_tree(x->f)), 2);
    tb_wbuf_free(&w);
    fx_free(x);
}

static void test_delete_container(void **state)
{
    struct fx *x = fx_new();
    int64_t s = open_session(x, 10000);

    (void)state;
    x->time = 10000;
    assert_int_equal(create_full(x, s, TB_OP_CREATECONTAINER, TB_STR("/c"),
                                 TB_STR(""), tb_acl_open_unsafe, 4, -1),
                     0);
    assert_int_equal(create_full(x, s, TB_OP_CREATETTL, TB_STR("/t"),
                                 TB_STR(""), tb_acl_open_unsafe, 5, 5000),
                     0);
    assert_int_equal(create(x, s, "/p", 0), 0);
    assert_int_equal(delete_container(x, "/c"), TB_ENOTEMPTY); /* unused */
    assert_int_equal(create(x, s, "/c/k", 0), 0);
    assert_int_equal(delete_container(x, "/c"), TB_ENOTEMPTY);
    assert_int_equal(del(x, s, "/c/k", -1), 0);
    assert_int_equal(delete_container(x, "/p"), TB_EBADVERSION);
    assert_int_equal(delete_container(x, "/nope"), TB_ENONODE);
    assert_int_equal(delete_container(x, "/"), TB_EBADARGUMENTS);
    assert_int_equal(delete_container(x, "nope"), TB_EBADARGUMENTS);
    assert_int_equal(delete_container(x, "/c"), 0); /* no session needed */
    ev_is(x, "2 /c|4 /|");

    x->time = 15000; /* 15000 - 10000 is not > 5000 */
    assert_int_equal(delete_container(x, "/t"), TB_ENOTEMPTY);
    x->time = 15001;
    assert_int_equal(set_data(x, s, "/t", TB_STR("x"), -1), 0); /* refresh */
    x->time = 20001;
    assert_int_equal(delete_container(x, "/t"), TB_ENOTEMPTY);
    assert_int_equal(create(x, s, "/t/k", 0), 0);
    x->time = 99999;
    assert_int_equal(delete_container(x, "/t"), TB_ENOTEMPTY);
    assert_int_equal(del(x, s, "/t/k", -1), 0);
    assert_int_equal(delete_container(x, "/t"), 0);
    ev_is(x, "2 /t|4 /|");
    assert_false(exists(x, "/t"));
    fx_free(x);
}

static void test_odd_txns(void **state)
{
    struct fx *x = fx_new();
    int64_t s = open_session(x, 10000);
    struct tb_wbuf b, e;
    struct tb_path_req p = {TB_STR("/any")};
    struct tb_check_req c = {TB_STR("/"), -1};
    uint8_t junk[] = {0, 0, 0, 1, 2};

    (void)state;
    assert_int_equal(apply_raw(x, junk, sizeof junk), TB_EMARSHALLING);
    assert_int_equal(x->res_type, 0);
    assert_int_equal(x->res_origin, 0);
    assert_int_equal(apply_raw(x, NULL, 0), TB_EMARSHALLING);
    tb_wbuf_init(&b);
    tb_wbuf_put(&b, junk, sizeof junk);
    assert_int_equal(apply(x, TB_OP_CREATE, s, &b), TB_EMARSHALLING);
    assert_int_equal(apply(x, TB_OP_DELETE, s, &b), TB_EMARSHALLING);
    assert_int_equal(apply(x, TB_OP_SETDATA, s, &b), TB_EMARSHALLING);
    assert_int_equal(apply(x, TB_OP_SETACL, s, &b), TB_EMARSHALLING);
    assert_int_equal(apply(x, TB_OP_CREATESESSION, s, &b), TB_EMARSHALLING);
    b.base[3] = 9; /* a path longer than what follows */
    assert_int_equal(apply(x, TB_OP_DELETECONTAINER, s, &b), TB_EMARSHALLING);
    assert_int_equal(apply(x, TB_OP_SYNC, s, &b), TB_EMARSHALLING);
    assert_int_equal(apply(x, TB_OP_GETDATA, s, &b), TB_EUNIMPLEMENTED);
    assert_int_equal(apply(x, 50, s, &b), TB_EUNIMPLEMENTED);
    b.len = 0;
    tb_check_req_encode(&b, &c);
    assert_int_equal(apply(x, TB_OP_CHECK, s, &b), TB_EUNIMPLEMENTED);
    b.len = 0;
    tb_path_req_encode(&b, &p);
    assert_int_equal(apply(x, TB_OP_SYNC, s, &b), 0);
    body_path_is(x, "/any");
    /* Padding after the txn (raft entries are padded to 8 bytes). */
    encode_txn(x, TB_OP_SYNC, s, (struct tb_str){(char *)b.base, b.len}, &e);
    tb_wbuf_put(&e, "\0\0\0\0\0\0\0", 7);
    assert_int_equal(apply_raw(x, e.base, e.len), 0);
    assert_int_equal(x->zxid, 15);
    tb_wbuf_free(&e);
    tb_wbuf_free(&b);
    fx_free(x);
}

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
    tb_wbuf_put(&forged, w.base, 40);
    tb_put_I32(&forged, 1);
    tb_wbuf_put(&forged, w.base + 44, 28);
    tb_wbuf_put(&forged, w.base + 44 + 56, w.len - 44 - 56);
    reseal(&forged);
    assert_int_equal(fsm_restore(y->f, forged.base, forged.len),
                     TB_EDATAINCONSISTENCY);
    forged.len = 0;
    tb_wbuf_put(&forged, w.base, 40);
    tb_put_I32(&forged, 2);
    tb_wbuf_put(&forged, w.base + 44, 28);
    tb_wbuf_put(&forged, w.base + 44, 28);
    tb_wbuf_put(&forged, w.base + 44 + 56, w.len - 44 - 56);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sessions),
        cmocka_unit_test(test_create_basic),
        cmocka_unit_test(test_sequential_names),
        cmocka_unit_test(test_create_errors),
        cmocka_unit_test(test_delete),
        cmocka_unit_test(test_set_data),
        cmocka_unit_test(test_set_acl),
        cmocka_unit_test(test_multi_success),
        cmocka_unit_test(test_multi_failure_rolls_back),
        cmocka_unit_test(test_multi_malformed),
        cmocka_unit_test(test_close_session_ephemerals),
        cmocka_unit_test(test_event_acls),
        cmocka_unit_test(test_delete_container),
        cmocka_unit_test(test_odd_txns),
        cmocka_unit_test(test_determinism),
        cmocka_unit_test(test_snapshot_round_trip),
        cmocka_unit_test(test_snapshot_rejected),
        cmocka_unit_test(test_out_of_memory),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
