/* The one wire codec, generated from the record tables in proto.h.
 *
 * Every reader checks the remaining length before it touches a byte and
 * every length read off the wire is checked against what remains, so a
 * hostile frame can at worst be rejected with TB_EMARSHALLING. */
#include <stdio.h>

#include "proto/proto.h"

int tb_get_I32(struct tb_rd *r, int32_t *v)
{
    if (r->end - r->pos < 4)
        return TB_EMARSHALLING;
    *v = (int32_t)tb_load_be32(r->pos);
    r->pos += 4;
    return 0;
}

int tb_get_I64(struct tb_rd *r, int64_t *v)
{
    if (r->end - r->pos < 8)
        return TB_EMARSHALLING;
    *v = (int64_t)tb_load_be64(r->pos);
    r->pos += 8;
    return 0;
}

int tb_get_BOOL(struct tb_rd *r, uint8_t *v)
{
    if (r->end - r->pos < 1)
        return TB_EMARSHALLING;
    *v = *r->pos++ != 0;
    return 0;
}

int tb_get_FLAGS(struct tb_rd *r, uint8_t *v)
{
    *v = r->pos < r->end ? *r->pos++ : 0;
    return 0;
}

int tb_get_BUF(struct tb_rd *r, struct tb_str *v)
{
    int32_t n;

    if (tb_get_I32(r, &n) != 0)
        return TB_EMARSHALLING;
    if (n == -1) {
        *v = TB_STR_NULL;
        return 0;
    }
    if (n < 0 || (size_t)n > (size_t)(r->end - r->pos))
        return TB_EMARSHALLING;
    v->ptr = (const char *)r->pos;
    v->len = (size_t)n;
    r->pos += n;
    return 0;
}

int tb_get_STR(struct tb_rd *r, struct tb_str *v)
{
    return tb_get_BUF(r, v);
}

int tb_get_STAT(struct tb_rd *r, struct tb_stat *v)
{
    if (r->end - r->pos < 68)
        return TB_EMARSHALLING;
    tb_get_I64(r, &v->czxid);
    tb_get_I64(r, &v->mzxid);
    tb_get_I64(r, &v->ctime);
    tb_get_I64(r, &v->mtime);
    tb_get_I32(r, &v->version);
    tb_get_I32(r, &v->cversion);
    tb_get_I32(r, &v->aversion);
    tb_get_I64(r, &v->ephemeral_owner);
    tb_get_I32(r, &v->data_length);
    tb_get_I32(r, &v->num_children);
    tb_get_I64(r, &v->pzxid);
    return 0;
}

/* Walks `count` elements with `skip` to find the vector's extent; each
 * element is at least 4 bytes, which bounds count before the walk. */
static int get_vec(struct tb_rd *r, struct tb_vec *v,
                   int (*skip)(struct tb_rd *))
{
    int32_t i;

    if (tb_get_I32(r, &v->n) != 0)
        return TB_EMARSHALLING;
    v->raw = r->pos;
    v->len = 0;
    if (v->n == -1) {
        v->raw = NULL;
        return 0;
    }
    if (v->n < 0 || (size_t)v->n > (size_t)(r->end - r->pos) / 4)
        return TB_EMARSHALLING;
    for (i = 0; i < v->n; i++)
        if (skip(r) != 0)
            return TB_EMARSHALLING;
    v->len = (size_t)(r->pos - v->raw);
    return 0;
}

static int skip_str(struct tb_rd *r)
{
    struct tb_str s;
    return tb_get_STR(r, &s);
}

static int skip_id(struct tb_rd *r)
{
    struct tb_id id;
    return tb_vec_next_id(r, &id) == 1 ? 0 : TB_EMARSHALLING;
}

static int skip_acl(struct tb_rd *r)
{
    struct tb_acl a;
    return tb_vec_next_acl(r, &a) == 1 ? 0 : TB_EMARSHALLING;
}

int tb_get_ACLS(struct tb_rd *r, struct tb_vec *v)
{
    return get_vec(r, v, skip_acl);
}

int tb_get_STRS(struct tb_rd *r, struct tb_vec *v)
{
    return get_vec(r, v, skip_str);
}

int tb_get_IDS(struct tb_rd *r, struct tb_vec *v)
{
    return get_vec(r, v, skip_id);
}

int tb_vec_next_str(struct tb_rd *it, struct tb_str *out)
{
    if (it->pos == it->end)
        return 0;
    return tb_get_STR(it, out) == 0 ? 1 : TB_EMARSHALLING;
}

int tb_vec_next_id(struct tb_rd *it, struct tb_id *out)
{
    if (it->pos == it->end)
        return 0;
    if (tb_get_STR(it, &out->scheme) != 0 || tb_get_STR(it, &out->id) != 0)
        return TB_EMARSHALLING;
    return 1;
}

int tb_vec_next_acl(struct tb_rd *it, struct tb_acl *out)
{
    if (it->pos == it->end)
        return 0;
    if (tb_get_I32(it, &out->perms) != 0)
        return TB_EMARSHALLING;
    return tb_vec_next_id(it, &out->id) == 1 ? 1 : TB_EMARSHALLING;
}

void tb_put_I32(struct tb_wbuf *w, int32_t v)
{
    uint8_t b[4];
    tb_store_be32(b, (uint32_t)v);
    tb_wbuf_put(w, b, 4);
}

void tb_put_I64(struct tb_wbuf *w, int64_t v)
{
    uint8_t b[8];
    tb_store_be64(b, (uint64_t)v);
    tb_wbuf_put(w, b, 8);
}

void tb_put_BOOL(struct tb_wbuf *w, uint8_t v)
{
    uint8_t b = v ? 1 : 0;
    tb_wbuf_put(w, &b, 1);
}

void tb_put_FLAGS(struct tb_wbuf *w, uint8_t v)
{
    tb_wbuf_put(w, &v, 1);
}

void tb_put_BUF(struct tb_wbuf *w, struct tb_str v)
{
    if (v.ptr == NULL) {
        tb_put_I32(w, -1);
        return;
    }
    tb_put_I32(w, (int32_t)v.len);
    tb_wbuf_put(w, v.ptr, v.len);
}

void tb_put_STR(struct tb_wbuf *w, struct tb_str v)
{
    tb_put_BUF(w, v);
}

void tb_put_STAT(struct tb_wbuf *w, const struct tb_stat *v)
{
    tb_put_I64(w, v->czxid);
    tb_put_I64(w, v->mzxid);
    tb_put_I64(w, v->ctime);
    tb_put_I64(w, v->mtime);
    tb_put_I32(w, v->version);
    tb_put_I32(w, v->cversion);
    tb_put_I32(w, v->aversion);
    tb_put_I64(w, v->ephemeral_owner);
    tb_put_I32(w, v->data_length);
    tb_put_I32(w, v->num_children);
    tb_put_I64(w, v->pzxid);
}

void tb_put_VEC(struct tb_wbuf *w, struct tb_vec v)
{
    tb_put_I32(w, v.n);
    tb_wbuf_put(w, v.raw, v.len);
}

void tb_put_id(struct tb_wbuf *w, const struct tb_id *id)
{
    tb_put_STR(w, id->scheme);
    tb_put_STR(w, id->id);
}

void tb_put_acl(struct tb_wbuf *w, const struct tb_acl *a)
{
    tb_put_I32(w, a->perms);
    tb_put_id(w, &a->id);
}

/* Records: decode and encode generated from TB_RECORDS. */
#define GET(T, name)                                                        \
    if (tb_get_##T(r, &out->name) != 0)                                     \
        return TB_EMARSHALLING;
#define PUT_STAT(w, v) tb_put_STAT(w, &(v))
#define PUT(T, name) TB__PUT_##T(w, in->name);
#define TB__PUT_I32 tb_put_I32
#define TB__PUT_I64 tb_put_I64
#define TB__PUT_BOOL tb_put_BOOL
#define TB__PUT_FLAGS tb_put_FLAGS
#define TB__PUT_STR tb_put_STR
#define TB__PUT_BUF tb_put_BUF
#define TB__PUT_STAT PUT_STAT
#define TB__PUT_ACLS tb_put_VEC
#define TB__PUT_STRS tb_put_VEC
#define TB__PUT_IDS tb_put_VEC

#define F GET
#define DEFINE_DECODE(rec, fields)                                          \
    int tb_##rec##_decode(struct tb_rd *r, struct tb_##rec *out)            \
    {                                                                       \
        fields return 0;                                                    \
    }
TB_RECORDS(DEFINE_DECODE)
#undef F

#define F PUT
#define DEFINE_ENCODE(rec, fields)                                          \
    void tb_##rec##_encode(struct tb_wbuf *w, const struct tb_##rec *in)    \
    {                                                                       \
        fields                                                              \
    }
TB_RECORDS(DEFINE_ENCODE)
#undef F

int tb_connect_req_decode(struct tb_rd *r, struct tb_connect_req *out)
{
    if (tb_get_I32(r, &out->protocol_version) != 0 ||
        tb_get_I64(r, &out->last_zxid) != 0 ||
        tb_get_I32(r, &out->timeout) != 0 ||
        tb_get_I64(r, &out->session_id) != 0 ||
        tb_get_BUF(r, &out->passwd) != 0)
        return TB_EMARSHALLING;
    out->has_readonly = tb_get_BOOL(r, &out->readonly) == 0;
    if (!out->has_readonly)
        out->readonly = 0;
    return 0;
}

void tb_connect_req_encode(struct tb_wbuf *w, const struct tb_connect_req *in)
{
    tb_put_I32(w, in->protocol_version);
    tb_put_I64(w, in->last_zxid);
    tb_put_I32(w, in->timeout);
    tb_put_I64(w, in->session_id);
    tb_put_BUF(w, in->passwd);
    if (in->has_readonly)
        tb_put_BOOL(w, in->readonly);
}

int tb_connect_resp_decode(struct tb_rd *r, struct tb_connect_resp *out)
{
    if (tb_get_I32(r, &out->protocol_version) != 0 ||
        tb_get_I32(r, &out->timeout) != 0 ||
        tb_get_I64(r, &out->session_id) != 0 ||
        tb_get_BUF(r, &out->passwd) != 0)
        return TB_EMARSHALLING;
    out->has_readonly = tb_get_BOOL(r, &out->readonly) == 0;
    if (!out->has_readonly)
        out->readonly = 0;
    return 0;
}

void tb_connect_resp_encode(struct tb_wbuf *w,
                            const struct tb_connect_resp *in)
{
    tb_put_I32(w, in->protocol_version);
    tb_put_I32(w, in->timeout);
    tb_put_I64(w, in->session_id);
    tb_put_BUF(w, in->passwd);
    if (in->has_readonly)
        tb_put_BOOL(w, in->readonly);
}

int tb_frame_split(const uint8_t *p, size_t n, size_t max,
                   struct tb_str *payload, size_t *consumed)
{
    int32_t len;

    if (n < 4)
        return TB_EAGAIN;
    len = (int32_t)tb_load_be32(p);
    if (len < 0 || (size_t)len > max)
        return TB_ETOOBIG;
    if (n - 4 < (size_t)len)
        return TB_EAGAIN;
    payload->ptr = (const char *)p + 4;
    payload->len = (size_t)len;
    *consumed = 4 + (size_t)len;
    return 0;
}

size_t tb_frame_begin(struct tb_wbuf *w)
{
    size_t start = w->len;
    tb_put_I32(w, 0);
    return start;
}

void tb_frame_end(struct tb_wbuf *w, size_t start)
{
    if (w->oom || w->len < start + 4)
        return;
    tb_store_be32(w->base + start, (uint32_t)(w->len - start - 4));
}

static int multi_allows(int32_t multi_type, int32_t op)
{
    if (multi_type == TB_OP_MULTIREAD)
        return op == TB_OP_GETDATA || op == TB_OP_GETCHILDREN;
    switch (op) {
    case TB_OP_CREATE:
    case TB_OP_CREATE2:
    case TB_OP_CREATECONTAINER:
    case TB_OP_CREATETTL:
    case TB_OP_DELETE:
    case TB_OP_SETDATA:
    case TB_OP_CHECK:
        return 1;
    default:
        return 0;
    }
}

int tb_multi_next(struct tb_rd *r, int32_t multi_type, struct tb_multi_op *op)
{
    struct tb_multi_header h;
    struct tb_create_req c;
    int rv;

    if (tb_multi_header_decode(r, &h) != 0)
        return TB_EMARSHALLING;
    if (h.done)
        return 0;
    if (!multi_allows(multi_type, h.type))
        return TB_EMARSHALLING;
    op->type = h.type;
    switch (h.type) {
    case TB_OP_CREATETTL:
        rv = tb_create_ttl_req_decode(r, &op->u.create);
        break;
    case TB_OP_CREATE:
    case TB_OP_CREATE2:
    case TB_OP_CREATECONTAINER:
        rv = tb_create_req_decode(r, &c);
        op->u.create.path = c.path;
        op->u.create.data = c.data;
        op->u.create.acl = c.acl;
        op->u.create.flags = c.flags;
        op->u.create.ttl = -1;
        break;
    case TB_OP_DELETE:
        rv = tb_delete_req_decode(r, &op->u.del);
        break;
    case TB_OP_SETDATA:
        rv = tb_set_data_req_decode(r, &op->u.set_data);
        break;
    case TB_OP_CHECK:
        rv = tb_check_req_decode(r, &op->u.check);
        break;
    default: /* getData, getChildren */
        rv = tb_path_watch_req_decode(r, &op->u.read);
        break;
    }
    return rv == 0 ? 1 : TB_EMARSHALLING;
}

void tb_multi_op_encode(struct tb_wbuf *w, const struct tb_multi_op *op)
{
    struct tb_multi_header h = {op->type, 0, -1};
    struct tb_create_req c;

    tb_multi_header_encode(w, &h);
    switch (op->type) {
    case TB_OP_CREATETTL:
        tb_create_ttl_req_encode(w, &op->u.create);
        break;
    case TB_OP_CREATE:
    case TB_OP_CREATE2:
    case TB_OP_CREATECONTAINER:
        c.path = op->u.create.path;
        c.data = op->u.create.data;
        c.acl = op->u.create.acl;
        c.flags = op->u.create.flags;
        tb_create_req_encode(w, &c);
        break;
    case TB_OP_DELETE:
        tb_delete_req_encode(w, &op->u.del);
        break;
    case TB_OP_SETDATA:
        tb_set_data_req_encode(w, &op->u.set_data);
        break;
    case TB_OP_CHECK:
        tb_check_req_encode(w, &op->u.check);
        break;
    default:
        tb_path_watch_req_encode(w, &op->u.read);
        break;
    }
}

void tb_multi_end_encode(struct tb_wbuf *w)
{
    struct tb_multi_header h = {-1, 1, -1};
    tb_multi_header_encode(w, &h);
}

void tb_multi_failure_encode(struct tb_wbuf *w, size_t count, size_t failed,
                             int32_t code)
{
    struct tb_error_resp e;
    size_t i;

    for (i = 0; i < count; i++) {
        e.err = i < failed    ? TB_OK
                : i == failed ? code
                              : TB_ERUNTIMEINCONSISTENCY;
        tb_multi_header_encode(
            w, &(struct tb_multi_header){TB_OP_ERROR, 0, e.err});
        tb_error_resp_encode(w, &e);
    }
    tb_multi_end_encode(w);
}

/* Encoded ACL vectors: perms, "world", "anyone" / "auth", "". */
static const uint8_t open_raw[] = {0, 0, 0, 31,  0,   0,   0,   5,   'w',
                                   'o', 'r', 'l', 'd', 0,   0,   0,   6,
                                   'a', 'n', 'y', 'o', 'n', 'e'};
static const uint8_t read_raw[] = {0, 0, 0, 1,   0,   0,   0,   5,   'w',
                                   'o', 'r', 'l', 'd', 0,   0,   0,   6,
                                   'a', 'n', 'y', 'o', 'n', 'e'};
static const uint8_t creator_raw[] = {0, 0, 0, 31, 0, 0, 0, 4,
                                      'a', 'u', 't', 'h', 0, 0, 0, 0};
const struct tb_vec tb_acl_open_unsafe = {1, open_raw, sizeof open_raw};
const struct tb_vec tb_acl_read_unsafe = {1, read_raw, sizeof read_raw};
const struct tb_vec tb_acl_creator_all = {1, creator_raw, sizeof creator_raw};

int tb_seq_format(char *out, size_t cap, int32_t seq)
{
    /* Java's %010d pads to width 10 after the sign: -1 -> "-000000001". */
    return snprintf(out, cap, "%010d", seq);
}
