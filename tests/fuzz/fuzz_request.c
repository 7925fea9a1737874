/* Fuzz target: the decoders of every record the server accepts from a
 * client, and their encoders, as a round trip (see fuzz_records.h).
 *
 * Input: byte 0 selects the record (modulo the count below), the rest is
 * the record's bytes.  Besides the fixed-shape records this covers the
 * hand-written ConnectRequest (optional trailing readOnly byte) and the
 * MultiRequest of multi and multiRead as walked by tb_multi_next: each
 * sub-op must be of a type the request kind allows, and re-encoding the
 * ops plus the terminator must give back the same sub-op records. */
#include "fuzz_records.h"

static int eq_connect_req(const void *a, const void *b)
{
    const struct tb_connect_req *x = a, *y = b;

    return x->protocol_version == y->protocol_version &&
           x->last_zxid == y->last_zxid && x->timeout == y->timeout &&
           x->session_id == y->session_id && fz_eq_str(x->passwd, y->passwd) &&
           x->has_readonly == y->has_readonly && x->readonly == y->readonly;
}

static void walk_connect_req(const void *a)
{
    const struct tb_connect_req *x = a;

    FZ_CHECK(x->has_readonly <= 1 && x->readonly <= 1 &&
                 (x->has_readonly || !x->readonly),
             "readOnly %u/%u", x->has_readonly, x->readonly);
}

static int dec_connect_req(struct tb_rd *r, void *o)
{
    return tb_connect_req_decode(r, o);
}

static void enc_connect_req(struct tb_wbuf *w, const void *o)
{
    tb_connect_req_encode(w, o);
}

static const struct fz_rec records[FZ_REQ_MULTI] = {
    [FZ_REQ_HEADER] = FZ_REC(request_header),
    [FZ_REQ_CREATE] = FZ_REC(create_req),
    [FZ_REQ_CREATE_TTL] = FZ_REC(create_ttl_req),
    [FZ_REQ_DELETE] = FZ_REC(delete_req),
    [FZ_REQ_PATH_WATCH] = FZ_REC(path_watch_req),
    [FZ_REQ_PATH] = FZ_REC(path_req),
    [FZ_REQ_SET_DATA] = FZ_REC(set_data_req),
    [FZ_REQ_SET_ACL] = FZ_REC(set_acl_req),
    [FZ_REQ_CHECK] = FZ_REC(check_req),
    [FZ_REQ_AUTH] = FZ_REC(auth_req),
    [FZ_REQ_SET_WATCHES] = FZ_REC(set_watches_req),
    [FZ_REQ_SET_WATCHES2] = FZ_REC(set_watches2_req),
    [FZ_REQ_ADD_WATCH] = FZ_REC(add_watch_req),
    [FZ_REQ_WATCHES] = FZ_REC(watches_req),
    [FZ_REQ_RECONFIG] = FZ_REC(reconfig_req),
    [FZ_REQ_CONNECT] = {"connect_req", sizeof(struct tb_connect_req),
                        dec_connect_req, enc_connect_req, eq_connect_req,
                        walk_connect_req},
};

static int op_allowed(int32_t kind, int32_t type)
{
    if (kind == TB_OP_MULTIREAD)
        return type == TB_OP_GETDATA || type == TB_OP_GETCHILDREN;
    return type == TB_OP_CREATE || type == TB_OP_CREATE2 ||
           type == TB_OP_CREATECONTAINER || type == TB_OP_CREATETTL ||
           type == TB_OP_DELETE || type == TB_OP_SETDATA || type == TB_OP_CHECK;
}

static int op_eq(const struct tb_multi_op *a, const struct tb_multi_op *b)
{
    if (a->type != b->type)
        return 0;
    switch (a->type) {
    case TB_OP_CREATE:
    case TB_OP_CREATE2:
    case TB_OP_CREATECONTAINER:
    case TB_OP_CREATETTL:
        return fz_eq_create_ttl_req(&a->u.create, &b->u.create);
    case TB_OP_DELETE:
        return fz_eq_delete_req(&a->u.del, &b->u.del);
    case TB_OP_SETDATA:
        return fz_eq_set_data_req(&a->u.set_data, &b->u.set_data);
    case TB_OP_CHECK:
        return fz_eq_check_req(&a->u.check, &b->u.check);
    default:
        return fz_eq_path_watch_req(&a->u.read, &b->u.read);
    }
}

/* Where each sub-op's record starts and ends in a walked multi. */
struct span {
    size_t rec, end;
};

/* Walks a MultiRequest; returns the op count, or -1 if it is refused. */
static long walk_multi(const uint8_t *p, size_t n, int32_t kind,
                       struct tb_multi_op *ops, struct span *spans, size_t cap,
                       size_t *used)
{
    struct tb_rd r = tb_rd_make(p, n);
    const uint8_t *at;
    size_t k = 0;
    int rv;

    for (;;) {
        FZ_CHECK(k < cap, "more ops than the input can hold");
        at = r.pos;
        rv = tb_multi_next(&r, kind, &ops[k]);
        FZ_CHECK(r.pos >= at && r.pos <= p + n, "cursor left the input");
        if (rv != 1)
            break;
        FZ_CHECK(op_allowed(kind, ops[k].type) && r.pos - at >= 9,
                 "op type %d accepted in a %d", ops[k].type, kind);
        if (ops[k].type == TB_OP_CREATE || ops[k].type == TB_OP_CREATE2 ||
            ops[k].type == TB_OP_CREATECONTAINER) {
            FZ_CHECK(ops[k].u.create.ttl == -1, "ttl %lld without createTTL",
                     (long long)ops[k].u.create.ttl);
        }
        if (ops[k].type == TB_OP_CREATE || ops[k].type == TB_OP_CREATE2 ||
            ops[k].type == TB_OP_CREATECONTAINER ||
            ops[k].type == TB_OP_CREATETTL)
            fz_walk_vec(ops[k].u.create.acl, 0);
        spans[k].rec = (size_t)(at + 9 - p);
        spans[k].end = (size_t)(r.pos - p);
        k++;
    }
    if (rv != 0) {
        FZ_CHECK(rv == TB_EMARSHALLING, "tb_multi_next gave %d", rv);
        return -1;
    }
    *used = (size_t)(r.pos - p);
    return (long)k;
}

static void multi_roundtrip(const uint8_t *p, size_t n, int32_t kind)
{
    /* Each op takes at least a 9-byte header, so n/9 + 1 bounds them. */
    size_t cap = n / 9 + 1, used = 0, used2 = 0, i;
    struct tb_multi_op *ops = malloc(cap * sizeof *ops);
    struct tb_multi_op *ops2 = malloc(cap * sizeof *ops2);
    struct span *sp = malloc(cap * sizeof *sp);
    struct span *sp2 = malloc(cap * sizeof *sp2);
    struct tb_wbuf e1, e2;
    long k, k2;

    FZ_CHECK(ops && ops2 && sp && sp2, "out of memory");
    tb_wbuf_init(&e1);
    tb_wbuf_init(&e2);
    k = walk_multi(p, n, kind, ops, sp, cap, &used);
    if (k < 0)
        goto out;
    for (i = 0; i < (size_t)k; i++)
        tb_multi_op_encode(&e1, &ops[i]);
    tb_multi_end_encode(&e1);
    FZ_CHECK(!e1.oom, "out of memory");
    k2 = walk_multi(e1.base, e1.len, kind, ops2, sp2, e1.len / 9 + 1, &used2);
    FZ_CHECK(k2 == k && used2 == e1.len,
             "re-encoded multi walks as %ld ops (%zu of %zu bytes), not %ld",
             k2, used2, e1.len, k);
    for (i = 0; i < (size_t)k; i++) {
        FZ_CHECK(op_eq(&ops[i], &ops2[i]), "op %zu differs after encoding", i);
        /* The sub-op record bytes come back unchanged (the header's done
         * and err fields are rewritten as requests carry them). */
        FZ_CHECK(sp[i].end - sp[i].rec == sp2[i].end - sp2[i].rec &&
                     fz_same_but_bools(p + sp[i].rec, e1.base + sp2[i].rec,
                                       sp[i].end - sp[i].rec),
                 "op %zu record bytes differ", i);
        FZ_CHECK(tb_load_be32(p + sp[i].rec - 9) ==
                     tb_load_be32(e1.base + sp2[i].rec - 9),
                 "op %zu header type differs", i);
    }
    FZ_CHECK(e1.len >= 9 &&
                 memcmp(e1.base + e1.len - 9,
                        "\xff\xff\xff\xff\x01\xff\xff\xff\xff", 9) == 0,
             "terminator not {-1, true, -1}");
    for (i = 0; i < (size_t)k; i++)
        tb_multi_op_encode(&e2, &ops2[i]);
    tb_multi_end_encode(&e2);
    FZ_CHECK(e2.len == e1.len && memcmp(e1.base, e2.base, e1.len) == 0,
             "multi encoding not stable");
out:
    tb_wbuf_free(&e1);
    tb_wbuf_free(&e2);
    free(ops);
    free(ops2);
    free(sp);
    free(sp2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned sel;

    if (size == 0)
        return 0;
    sel = data[0] % FZ_REQ_COUNT;
    if (sel < FZ_REQ_MULTI)
        fz_roundtrip(&records[sel], data + 1, size - 1);
    else
        multi_roundtrip(data + 1, size - 1,
                        sel == FZ_REQ_MULTI ? TB_OP_MULTI : TB_OP_MULTIREAD);
    return 0;
}
