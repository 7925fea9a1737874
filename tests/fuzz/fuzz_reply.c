/* Fuzz target: what the client library decodes from a server: the
 * ReplyHeader, every response record, the ConnectResponse (optional
 * readOnly byte), the WatcherEvent of a notification, and a MultiResponse
 * walked as the client walks it (a MultiHeader, then the result record its
 * type calls for, until the done header).  Each decode is round-tripped
 * through the encoders (see fuzz_records.h).
 *
 * Input: byte 0 selects the record (modulo the count below), the rest is
 * the record's bytes. */
#include "fuzz_records.h"

static int eq_connect_resp(const void *a, const void *b)
{
    const struct tb_connect_resp *x = a, *y = b;

    return x->protocol_version == y->protocol_version &&
           x->timeout == y->timeout && x->session_id == y->session_id &&
           fz_eq_str(x->passwd, y->passwd) &&
           x->has_readonly == y->has_readonly && x->readonly == y->readonly;
}

static void walk_connect_resp(const void *a)
{
    const struct tb_connect_resp *x = a;

    FZ_CHECK(x->has_readonly <= 1 && x->readonly <= 1 &&
                 (x->has_readonly || !x->readonly),
             "readOnly %u/%u", x->has_readonly, x->readonly);
}

static int dec_connect_resp(struct tb_rd *r, void *o)
{
    return tb_connect_resp_decode(r, o);
}

static void enc_connect_resp(struct tb_wbuf *w, const void *o)
{
    tb_connect_resp_encode(w, o);
}

static const struct fz_rec records[FZ_REP_MULTI] = {
    [FZ_REP_HEADER] = FZ_REC(reply_header),
    [FZ_REP_PATH] = FZ_REC(path_resp),
    [FZ_REP_CREATE2] = FZ_REC(create2_resp),
    [FZ_REP_STAT] = FZ_REC(stat_resp),
    [FZ_REP_DATA] = FZ_REC(get_data_resp),
    [FZ_REP_ACL] = FZ_REC(get_acl_resp),
    [FZ_REP_CHILDREN] = FZ_REC(children_resp),
    [FZ_REP_CHILDREN2] = FZ_REC(children2_resp),
    [FZ_REP_COUNT_RESP] = FZ_REC(count_resp),
    [FZ_REP_WHOAMI] = FZ_REC(whoami_resp),
    [FZ_REP_ERROR] = FZ_REC(error_resp),
    [FZ_REP_EVENT] = FZ_REC(watcher_event),
    [FZ_REP_MULTI_HEADER] = FZ_REC(multi_header),
    [FZ_REP_CONNECT] = {"connect_resp", sizeof(struct tb_connect_resp),
                        dec_connect_resp, enc_connect_resp, eq_connect_resp,
                        walk_connect_resp},
};

static const struct fz_rec multi_header_rec = FZ_REC(multi_header);

/* The result record that follows a MultiHeader of this type, NULL for
 * none (delete, check), or `refuse` for a type no server sends. */
static const struct fz_rec refuse = {"refused", 0, NULL, NULL, NULL, NULL};
static const struct fz_rec *result_record(int32_t type)
{
    static const struct fz_rec path = FZ_REC(path_resp),
                               create2 = FZ_REC(create2_resp),
                               stat = FZ_REC(stat_resp),
                               data = FZ_REC(get_data_resp),
                               kids = FZ_REC(children_resp),
                               err = FZ_REC(error_resp);

    switch (type) {
    case TB_OP_CREATE:
        return &path;
    case TB_OP_CREATE2:
        return &create2;
    case TB_OP_SETDATA:
        return &stat;
    case TB_OP_GETDATA:
        return &data;
    case TB_OP_GETCHILDREN:
        return &kids;
    case TB_OP_ERROR:
        return &err;
    case TB_OP_DELETE:
    case TB_OP_CHECK:
        return NULL;
    default:
        return &refuse;
    }
}

/* Every header and result round-trips on its own, and the walk ends at a
 * done header or at the first record that does not decode. */
static void multi_response(const uint8_t *p, size_t n)
{
    struct tb_rd r = tb_rd_make(p, n), hr;
    struct tb_multi_header h;
    const struct fz_rec *rec;
    _Alignas(16) uint8_t res[512];
    size_t results = 0;

    for (;;) {
        hr = r;
        if (!fz_roundtrip(&multi_header_rec, r.pos, (size_t)(r.end - r.pos)))
            break;
        FZ_CHECK(tb_multi_header_decode(&hr, &h) == 0 && hr.pos == r.pos + 9,
                 "a MultiHeader is 9 bytes");
        r.pos = hr.pos;
        if (h.done)
            break;
        rec = result_record(h.type);
        if (rec == &refuse)
            break;
        if (rec == NULL) {
            results++;
            continue;
        }
        hr = r;
        if (!fz_roundtrip(rec, r.pos, (size_t)(r.end - r.pos)))
            break;
        FZ_CHECK(rec->dec(&hr, res) == 0 && hr.pos > r.pos && hr.pos <= r.end,
                 "result %zu: second decode differs", results);
        r.pos = hr.pos;
        results++;
    }
    FZ_CHECK(results <= n / 9, "%zu results in %zu bytes", results, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned sel;

    if (size == 0)
        return 0;
    sel = data[0] % FZ_REP_COUNT;
    if (sel < FZ_REP_MULTI)
        fz_roundtrip(&records[sel], data + 1, size - 1);
    else
        multi_response(data + 1, size - 1);
    return 0;
}
