/* The state machine's test fixture; see fsm_fixture.h. */
#include "fsm_fixture.h"

/* Allocation failure injection: the libraries' malloc/calloc/realloc are
 * routed here by the linker (--wrap); the Nth call from now fails. */
void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);
long fail_countdown = -1; /* -1: never fail */
long alloc_calls;

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

void chk(struct fx *x)
{
    char why[256] = "";

    if (tree_check(fsm_tree(x->f), why, sizeof why) != 0)
        fail_msg("tree_check: %s", why);
}

static void on_quota(void *data, struct tb_str path, const char *what,
                     int64_t used, int64_t limit, int refused)
{
    struct fx *x = data;

    tb_wbuf_printf(&x->quota, "%.*s %s=%lld/%lld%s|", (int)path.len, path.ptr,
                   what, (long long)used, (long long)limit,
                   refused ? " refused" : "");
}

struct fx *fx_new(void)
{
    struct fx *x = calloc(1, sizeof *x);
    struct fsm_hooks h = {x, on_event, on_result, on_session, on_quota};

    assert_int_equal(fsm_init(&x->f, &h), 0);
    x->time = 1000000;
    chk(x);
    return x;
}

void fx_free(struct fx *x)
{
    fsm_close(x->f);
    tb_wbuf_free(&x->ids);
    tb_wbuf_free(&x->body);
    tb_wbuf_free(&x->ev);
    tb_wbuf_free(&x->ev_acl);
    tb_wbuf_free(&x->sess);
    tb_wbuf_free(&x->quota);
    free(x);
}

void fx_id(struct fx *x, const char *scheme, const char *id)
{
    struct tb_id i = {tb_str_c(scheme), tb_str_c(id)};

    tb_put_id(&x->ids, &i);
    x->nids++;
}

void encode_txn(struct fx *x, int32_t type, int64_t session,
                       struct tb_str body, struct tb_wbuf *out)
{
    struct tb_txn t = {type,
                       session,
                       1,
                       x->time,
                       77,
                       (uint8_t)x->super,
                       {x->nids, x->ids.base, x->ids.len},
                       body,
                       (uint8_t)x->flags};

    tb_wbuf_init(out);
    tb_txn_encode(out, &t);
}

/* Applies raw entry bytes as the next zxid; exactly one result. */
int apply_raw(struct fx *x, const void *p, size_t n)
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

int apply(struct fx *x, int32_t type, int64_t session,
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

int64_t open_session(struct fx *x, int32_t timeout)
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

int close_session(struct fx *x, int64_t sid)
{
    return apply(x, TB_OP_CLOSESESSION, sid, NULL);
}

int create_full(struct fx *x, int64_t sid, int32_t type,
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

int create(struct fx *x, int64_t sid, const char *path, int32_t flags)
{
    return create_full(x, sid, TB_OP_CREATE, tb_str_c(path), TB_STR("d"),
                       tb_acl_open_unsafe, flags, -1);
}

int create_acl(struct fx *x, int64_t sid, const char *path,
                      struct tb_vec acl)
{
    return create_full(x, sid, TB_OP_CREATE, tb_str_c(path), TB_STR(""), acl, 0,
                       -1);
}

int del(struct fx *x, int64_t sid, const char *path, int32_t version)
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

int set_data(struct fx *x, int64_t sid, const char *path,
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

int set_acl(struct fx *x, int64_t sid, const char *path,
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

int delete_container(struct fx *x, const char *path)
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

struct tb_stat stat_of(struct fx *x, const char *path)
{
    struct tb_stat st;
    struct tree_node *n = tree_find(fsm_tree(x->f), tb_str_c(path));

    assert_non_null(n);
    tree_node_stat(n, &st);
    return st;
}

int exists(struct fx *x, const char *path)
{
    return tree_find(fsm_tree(x->f), tb_str_c(path)) != NULL;
}

void ev_is(struct fx *x, const char *expect)
{
    tb_wbuf_put(&x->ev, "", 1);
    x->ev.len--;
    assert_string_equal(x->ev.len ? (char *)x->ev.base : "", expect);
}

/* The path in a CreateResponse / Create2Response body. */
void body_path_is(struct fx *x, const char *expect)
{
    struct tb_rd r = tb_rd_make(x->body.base, x->body.len);
    struct tb_str p;

    assert_int_equal(tb_get_STR(&r, &p), 0);
    assert_int_equal(p.len, strlen(expect));
    assert_memory_equal(p.ptr, expect, p.len);
}

struct tb_stat body_stat(struct fx *x, size_t off)
{
    struct tb_rd r = tb_rd_make(x->body.base + off, x->body.len - off);
    struct tb_stat st;

    assert_int_equal(tb_get_STAT(&r, &st), 0);
    assert_ptr_equal(r.pos, r.end);
    return st;
}

void snap(struct fx *x, struct tb_wbuf *w)
{
    tb_wbuf_init(w);
    assert_int_equal(fsm_snapshot(x->f, w), 0);
}

void assert_snapshot_is(struct fx *x, const struct tb_wbuf *a)
{
    struct tb_wbuf b;

    snap(x, &b);
    assert_int_equal(a->len, b.len);
    assert_memory_equal(a->base, b.base, a->len);
    tb_wbuf_free(&b);
}

/* The documented checksum, recomputed here to forge snapshots that get
 * past it and exercise the structural checks behind it. */
uint64_t doc_checksum(const uint8_t *p, size_t n)
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

void reseal(struct tb_wbuf *w)
{
    tb_store_be64(w->base + 32, w->len - SNAP_HEADER);
    tb_store_be64(w->base + 8, doc_checksum(w->base + 16, w->len - 16));
}

struct tb_vec one_acl(struct tb_wbuf *w, int32_t perms,
                             const char *scheme, const char *id)
{
    struct tb_acl a = {perms, {tb_str_c(scheme), tb_str_c(id)}};

    tb_wbuf_init(w);
    tb_put_acl(w, &a);
    return tb_vec_view(w, 1);
}

/* Tests. */

/* Multi. */


void m_create(struct multi *m, int32_t type, const char *path,
                     int32_t flags, int64_t ttl)
{
    struct tb_multi_op op = {.type = type};

    op.u.create = (struct tb_create_ttl_req){tb_str_c(path), TB_STR("m"),
                                             tb_acl_open_unsafe, flags, ttl};
    tb_multi_op_encode(&m->w, &op);
}

void m_delete(struct multi *m, const char *path, int32_t version)
{
    struct tb_multi_op op = {.type = TB_OP_DELETE};

    op.u.del = (struct tb_delete_req){tb_str_c(path), version};
    tb_multi_op_encode(&m->w, &op);
}

void m_set(struct multi *m, const char *path, int32_t version)
{
    struct tb_multi_op op = {.type = TB_OP_SETDATA};

    op.u.set_data =
        (struct tb_set_data_req){tb_str_c(path), TB_STR("set"), version};
    tb_multi_op_encode(&m->w, &op);
}

void m_check(struct multi *m, const char *path, int32_t version)
{
    struct tb_multi_op op = {.type = TB_OP_CHECK};

    op.u.check = (struct tb_check_req){tb_str_c(path), version};
    tb_multi_op_encode(&m->w, &op);
}

int m_apply(struct fx *x, int64_t s, struct multi *m)
{
    int rc;

    tb_multi_end_encode(&m->w);
    rc = apply(x, TB_OP_MULTI, s, &m->w);
    tb_wbuf_free(&m->w);
    tb_wbuf_init(&m->w);
    return rc;
}

/* Reads one result: header, then checks its type and error. */
void res_hdr(struct tb_rd *r, int32_t type, int32_t err)
{
    struct tb_multi_header h;

    assert_int_equal(tb_multi_header_decode(r, &h), 0);
    assert_int_equal(h.type, type);
    assert_int_equal(h.done, 0);
    assert_int_equal(h.err, err);
}

void res_end(struct tb_rd *r)
{
    struct tb_multi_header h;

    assert_int_equal(tb_multi_header_decode(r, &h), 0);
    assert_int_equal(h.type, -1);
    assert_int_equal(h.done, 1);
    assert_int_equal(h.err, -1);
    assert_ptr_equal(r->pos, r->end);
}

void res_path(struct tb_rd *r, const char *expect)
{
    struct tb_str p;

    assert_int_equal(tb_get_STR(r, &p), 0);
    assert_int_equal(p.len, strlen(expect));
    assert_memory_equal(p.ptr, expect, p.len);
}
