/* Record round trips for the codec fuzz targets (request and reply).
 *
 * From the record table in proto.h (TB_RECORDS) this generates, for each
 * record, a type-erased decode/encode pair, a field-by-field comparison
 * (views compared by content, null distinct from empty) and a walk of its
 * vectors with the tb_vec_next_* iterators, which must consume exactly the
 * bytes the decoder accepted.  fz_roundtrip() then checks, for one
 * record type and one input:
 *
 *   x  = decode(input)         must stay inside the input;
 *   e1 = encode(x)             must equal the bytes decode consumed (a
 *                              boolean read as non-zero is written as 1,
 *                              the only byte allowed to differ);
 *   x2 = decode(e1)            must consume all of e1 and equal x;
 *   encode(x2)                 must equal e1 byte for byte. */
#ifndef TB_FUZZ_RECORDS_H
#define TB_FUZZ_RECORDS_H

#include "fuzz.h"
#include "proto/proto.h"

static inline int fz_eq_str(struct tb_str a, struct tb_str b)
{
    return (a.ptr == NULL) == (b.ptr == NULL) && tb_str_eq(a, b);
}

static inline int fz_eq_vec(struct tb_vec a, struct tb_vec b)
{
    return a.n == b.n && a.len == b.len &&
           (a.len == 0 || memcmp(a.raw, b.raw, a.len) == 0);
}

/* Field by field: the struct has padding. */
static inline int fz_eq_stat(const struct tb_stat *a, const struct tb_stat *b)
{
    return a->czxid == b->czxid && a->mzxid == b->mzxid &&
           a->ctime == b->ctime && a->mtime == b->mtime &&
           a->version == b->version && a->cversion == b->cversion &&
           a->aversion == b->aversion &&
           a->ephemeral_owner == b->ephemeral_owner &&
           a->data_length == b->data_length &&
           a->num_children == b->num_children && a->pzxid == b->pzxid;
}

#define fz_eq_I32(a, b)  ((a) == (b))
#define fz_eq_I64(a, b)  ((a) == (b))
#define fz_eq_BOOL(a, b) ((a) == (b))
#define fz_eq_FLAGS(a, b) ((a) == (b))
#define fz_eq_STR(a, b)  fz_eq_str(a, b)
#define fz_eq_BUF(a, b)  fz_eq_str(a, b)
#define fz_eq_STAT(a, b) fz_eq_stat(&(a), &(b))
#define fz_eq_ACLS(a, b) fz_eq_vec(a, b)
#define fz_eq_STRS(a, b) fz_eq_vec(a, b)
#define fz_eq_IDS(a, b)  fz_eq_vec(a, b)

/* The iterator must find exactly n elements in exactly len bytes. */
static inline void fz_walk_vec(struct tb_vec v, int kind)
{
    struct tb_rd it;
    struct tb_acl a;
    struct tb_str s;
    struct tb_id id;
    int32_t count = 0;
    int rv;

    FZ_CHECK(v.n >= -1 && (v.n > 0 || v.len == 0), "vector n %d len %zu", v.n,
             v.len);
    if (v.raw == NULL) { /* a null vector: nothing to walk (NULL + 0 is UB) */
        FZ_CHECK(v.n == -1, "vector of %d without bytes", v.n);
        return;
    }
    it = tb_vec_reader(v);
    for (;;) {
        rv = kind == 0   ? tb_vec_next_acl(&it, &a)
             : kind == 1 ? tb_vec_next_str(&it, &s)
                         : tb_vec_next_id(&it, &id);
        if (rv != 1)
            break;
        count++;
    }
    FZ_CHECK(rv == 0, "iterator failed (%d) on an accepted vector", rv);
    FZ_CHECK(it.pos == it.end, "iterator stopped short");
    FZ_CHECK(count == (v.n < 0 ? 0 : v.n), "iterated %d of %d", count, v.n);
}

#define fz_walk_I32(x)  ((void)0)
#define fz_walk_I64(x)  ((void)0)
#define fz_walk_BOOL(x) FZ_CHECK((x) <= 1, "boolean decoded as %u", (x))
#define fz_walk_FLAGS(x) ((void)0)
#define fz_walk_STR(x)  ((void)0)
#define fz_walk_BUF(x)  ((void)0)
#define fz_walk_STAT(x) ((void)0)
#define fz_walk_ACLS(x) fz_walk_vec(x, 0)
#define fz_walk_STRS(x) fz_walk_vec(x, 1)
#define fz_walk_IDS(x)  fz_walk_vec(x, 2)

/* The selector (first input byte) of the request and reply targets, so
 * that the seed generator and the targets agree. */
enum fz_req_sel {
    FZ_REQ_HEADER,
    FZ_REQ_CREATE,
    FZ_REQ_CREATE_TTL,
    FZ_REQ_DELETE,
    FZ_REQ_PATH_WATCH,
    FZ_REQ_PATH,
    FZ_REQ_SET_DATA,
    FZ_REQ_SET_ACL,
    FZ_REQ_CHECK,
    FZ_REQ_AUTH,
    FZ_REQ_SET_WATCHES,
    FZ_REQ_SET_WATCHES2,
    FZ_REQ_ADD_WATCH,
    FZ_REQ_WATCHES,
    FZ_REQ_RECONFIG,
    FZ_REQ_CONNECT,
    FZ_REQ_MULTI,
    FZ_REQ_MULTIREAD,
    FZ_REQ_COUNT
};
enum fz_reply_sel {
    FZ_REP_HEADER,
    FZ_REP_PATH,
    FZ_REP_CREATE2,
    FZ_REP_STAT,
    FZ_REP_DATA,
    FZ_REP_ACL,
    FZ_REP_CHILDREN,
    FZ_REP_CHILDREN2,
    FZ_REP_COUNT_RESP,
    FZ_REP_WHOAMI,
    FZ_REP_ERROR,
    FZ_REP_EVENT,
    FZ_REP_MULTI_HEADER,
    FZ_REP_CONNECT,
    FZ_REP_MULTI,
    FZ_REP_COUNT
};

typedef int (*fz_dec_fn)(struct tb_rd *, void *);
typedef void (*fz_enc_fn)(struct tb_wbuf *, const void *);
typedef int (*fz_eq_fn)(const void *, const void *);
typedef void (*fz_walk_fn)(const void *);

struct fz_rec {
    const char *name;
    size_t size;
    fz_dec_fn dec;
    fz_enc_fn enc;
    fz_eq_fn eq;
    fz_walk_fn walk;
};

/* Three passes over TB_RECORDS, each with its own meaning of F: the
 * fields of a record are expanded when the record's macro is, so one pass
 * cannot give F two meanings. */
#define FZ__GEN_CODEC(rec, fields)                                             \
    __attribute__((unused)) static int fz_dec_##rec(struct tb_rd *r, void *o)  \
    {                                                                          \
        return tb_##rec##_decode(r, o);                                        \
    }                                                                          \
    __attribute__((unused)) static void fz_enc_##rec(struct tb_wbuf *w,        \
                                                     const void *o)            \
    {                                                                          \
        tb_##rec##_encode(w, o);                                               \
    }
#define FZ__GEN_EQ(rec, fields)                                                \
    __attribute__((unused)) static int fz_eq_##rec(const void *a,              \
                                                   const void *b)              \
    {                                                                          \
        const struct tb_##rec *x = a, *y = b;                                  \
        return 1 fields;                                                       \
    }
#define FZ__GEN_WALK(rec, fields)                                              \
    __attribute__((unused)) static void fz_walk_##rec(const void *a)           \
    {                                                                          \
        const struct tb_##rec *x = a;                                          \
        (void)x;                                                               \
        fields                                                                 \
    }

#define F(T, f)
TB_RECORDS(FZ__GEN_CODEC)
#undef F
#define F(T, f) &&fz_eq_##T(x->f, y->f)
TB_RECORDS(FZ__GEN_EQ)
#undef F
#define F(T, f) fz_walk_##T(x->f);
TB_RECORDS(FZ__GEN_WALK)
#undef F

#define FZ_REC(rec)                                                            \
    {                                                                          \
#rec, sizeof(struct tb_##rec), fz_dec_##rec, fz_enc_##rec,             \
            fz_eq_##rec, fz_walk_##rec                                         \
    }

/* Bytes of `want` (what was decoded) and `got` (its encoding) agree, but
 * for booleans: any non-zero byte reads as true and is written as 1. */
static inline int fz_same_but_bools(const uint8_t *want, const uint8_t *got,
                                    size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (want[i] != got[i] && !(want[i] > 1 && got[i] == 1))
            return 0;
    return 1;
}

/* The round trip described at the top, for one record type; returns 1 if
 * the input decoded, 0 if it was refused. */
static inline int fz_roundtrip(const struct fz_rec *rec, const uint8_t *p,
                               size_t n)
{
    _Alignas(16) uint8_t x[512], x2[512];
    struct tb_rd r = tb_rd_make(p, n), r2;
    struct tb_wbuf e1, e2;
    size_t used;
    char hex[64];
    int rv;

    FZ_CHECK(rec->size <= sizeof x, "record %s too big", rec->name);
    memset(x, 0xa5, sizeof x);
    rv = rec->dec(&r, x);
    FZ_CHECK(r.pos >= p && r.pos <= p + n && r.end == p + n,
             "%s: cursor left the input", rec->name);
    if (rv != 0) {
        FZ_CHECK(rv == TB_EMARSHALLING, "%s: decode gave %d", rec->name, rv);
        return 0;
    }
    used = (size_t)(r.pos - p);
    rec->walk(x);
    tb_wbuf_init(&e1);
    tb_wbuf_init(&e2);
    rec->enc(&e1, x);
    FZ_CHECK(!e1.oom, "out of memory");
    FZ_CHECK(e1.len == used && fz_same_but_bools(p, e1.base, used),
             "%s: decoded %zu bytes, encoded %zu: %s", rec->name, used, e1.len,
             fz_hex(e1.base, e1.len < 24 ? e1.len : 24, hex, sizeof hex));
    memset(x2, 0x5a, sizeof x2);
    r2 = tb_rd_make(e1.base, e1.len);
    rv = rec->dec(&r2, x2);
    FZ_CHECK(rv == 0 && r2.pos == r2.end,
             "%s: own encoding refused (%d) or not consumed", rec->name, rv);
    FZ_CHECK(rec->eq(x, x2), "%s: decode(encode(x)) != x", rec->name);
    rec->enc(&e2, x2);
    FZ_CHECK(e2.len == e1.len &&
                 (e1.len == 0 || memcmp(e1.base, e2.base, e1.len) == 0),
             "%s: encoding not stable", rec->name);
    tb_wbuf_free(&e1);
    tb_wbuf_free(&e2);
    return 1;
}

#endif
