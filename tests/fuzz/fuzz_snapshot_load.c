/* Fuzz target: fsm_restore on arbitrary bytes.
 *
 * Input: byte 0 is a mode, the rest the snapshot.  Mode bit 0 clear: the
 * bytes are restored as they are (the header checks, mostly).  Bit 0 set:
 * the header is repaired first - magic, the checksum recomputed over the
 * body, and with bit 1 the body length set to all the bytes, with bit 2
 * version 2 and reserved 0 - so that the fuzzer reaches the session table
 * and the tree section behind the checksum.
 *
 * Checked: fsm_restore never crashes; a refused snapshot gives
 * TB_EDATAINCONSISTENCY and leaves the fsm's state (and snapshot bytes)
 * exactly as before; an accepted one passes tree_check, keeps the zxid of
 * its header, snapshots back to bytes that restore again and snapshot to
 * the same bytes; and both copies then apply the same few txns (a new
 * session, creates under restored nodes, setData, deletes, due container
 * and TTL cleanup, closing every restored session) with identical results
 * and identical final snapshots, tree_check passing after each. */
#include "fuzz_gen.h"

#define HEADER 48 /* version 2's */

/* fsm_snap.c's checksum (the format is documented there); checked against
 * a real snapshot before the first input, so a change shows up at once. */
static uint64_t checksum(const uint8_t *p, size_t n)
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

static void repair(uint8_t *p, size_t n, uint8_t mode)
{
    uint64_t blen;

    if (n < HEADER)
        return;
    memcpy(p, "TBSNAP\r\n", 8);
    if (mode & 2)
        tb_store_be64(p + 32, n - HEADER);
    if (mode & 4) {
        tb_store_be32(p + 16, 2);
        tb_store_be32(p + 20, 0);
    }
    blen = tb_load_be64(p + 32);
    if (blen <= n - HEADER)
        tb_store_be64(p + 8, checksum(p + 16, HEADER - 16 + blen));
}

static void snap(const struct fsm *f, struct tb_wbuf *w)
{
    w->len = 0;
    FZ_CHECK(fsm_snapshot(f, w) == 0, "snapshot failed");
}

static int same(const struct tb_wbuf *a, const struct tb_wbuf *b)
{
    return a->len == b->len && memcmp(a->base, b->base, a->len) == 0;
}

/* The checksum copy must still match: repair a real snapshot whose
 * checksum was zeroed and restore it. */
static void self_check(void)
{
    struct fsm *f;
    struct tb_wbuf w;

    FZ_CHECK(fsm_init(&f, NULL) == 0, "fsm_init failed");
    tb_wbuf_init(&w);
    snap(f, &w);
    memset(w.base + 8, 0, 8);
    repair(w.base, w.len, 1);
    FZ_CHECK(fsm_restore(f, w.base, w.len) == 0,
             "fsm_snap.c's checksum changed; update checksum() here");
    tb_wbuf_free(&w);
    fsm_close(f);
}

/* Applies the same txn to both fsms and compares what they report. */
struct pair {
    struct fsm *f[2];
    struct fz_log log[2];
    int64_t zxid;
    struct fz_txn t;
    struct tb_wbuf entry, scratch;
};

static void apply_both(struct pair *p)
{
    int i;

    p->zxid++;
    fz_txn_entry(&p->t, &p->entry);
    for (i = 0; i < 2; i++) {
        fz_log_reset(&p->log[i]);
        FZ_CHECK(fsm_apply(p->f[i], p->zxid, p->entry.base, p->entry.len) == 0,
                 "fsm_apply failed");
        FZ_CHECK(p->log[i].results == 1, "%d results", p->log[i].results);
        fz_tree_check(p->f[i], "after apply on a restored tree");
    }
    FZ_CHECK(same(&p->log[0].all, &p->log[1].all),
             "restored copies reported differently (type %d)", p->t.type);
}

static int collect_session(void *data, const struct fsm_session_info *s)
{
    int64_t *ids = data;
    int i;

    for (i = 0; i < 8 && ids[i] != 0; i++)
        ;
    if (i == 8)
        return 1;
    ids[i] = s->id;
    return 0;
}

static int collect_due(void *data, struct tree_node *n)
{
    struct tb_wbuf *w = data;
    struct tb_str path = tree_node_path(n);

    tb_put_STR(w, path);
    return w->len > 4096;
}

static void exercise(struct pair *p)
{
    static const uint8_t pw[16] = "fuzz-snapshot-pw";
    int64_t ids[8] = {0}, session;
    uint64_t count = tree_count(fsm_tree(p->f[0]));
    struct tb_wbuf due;
    struct tb_rd r;
    struct tb_str path;
    uint32_t i;

    fsm_session_foreach(p->f[0], collect_session, ids);
    p->t.type = TB_OP_CREATESESSION;
    p->t.body.len = 0;
    tb_create_session_txn_encode(
        &p->t.body,
        &(struct tb_create_session_txn){5000, {(const char *)pw, sizeof pw}});
    apply_both(p);
    session = fsm_session_id_for(p->zxid);
    p->t.session = session;
    for (i = 0; i < 6 && i < count; i++) {
        struct tree_node *n = fz_node_at(fsm_tree(p->f[0]), i * 5);
        p->scratch.len = 0;
        path = tree_node_path(n);
        tb_wbuf_put(&p->scratch, path.ptr, path.len);
        tb_wbuf_put(&p->scratch, path.len > 1 ? "/s" : "s",
                    path.len > 1 ? 2 : 1);
        path = (struct tb_str){(const char *)p->scratch.base, p->scratch.len};
        p->t.type = TB_OP_CREATE2;
        p->t.body.len = 0;
        tb_create_req_encode(
            &p->t.body,
            &(struct tb_create_req){path, TB_STR("d"), tb_acl_open_unsafe,
                                    i % 2 ? TB_EPHEMERAL_SEQUENTIAL
                                          : TB_PERSISTENT_SEQUENTIAL});
        apply_both(p);
        path = tree_node_path(fz_node_at(fsm_tree(p->f[0]), i * 3 + 1));
        p->t.type = TB_OP_SETDATA;
        p->t.body.len = 0;
        tb_set_data_req_encode(
            &p->t.body, &(struct tb_set_data_req){path, TB_STR_NULL, -1});
        apply_both(p);
        path = tree_node_path(fz_node_at(fsm_tree(p->f[0]), i * 11 + 2));
        p->t.type = TB_OP_DELETE;
        p->t.body.len = 0;
        tb_delete_req_encode(&p->t.body, &(struct tb_delete_req){path, -1});
        apply_both(p);
    }
    /* Far in the future every container and TTL node with no children is
     * due; the list is taken first since each delete changes the tree. */
    p->t.time = INT64_MAX / 2;
    tb_wbuf_init(&due);
    tree_candidates(fsm_tree(p->f[0]), p->t.time, collect_due, &due);
    r = tb_rd_make(due.base ? due.base : (const uint8_t *)"", due.len);
    while (tb_get_STR(&r, &path) == 0) {
        p->t.type = TB_OP_DELETECONTAINER;
        p->t.body.len = 0;
        tb_path_req_encode(&p->t.body, &(struct tb_path_req){path});
        apply_both(p);
    }
    tb_wbuf_free(&due);
    for (i = 0; i < 8 && ids[i] != 0; i++) {
        p->t.type = TB_OP_CLOSESESSION;
        p->t.session = ids[i];
        p->t.body.len = 0;
        apply_both(p);
        FZ_CHECK(p->log[0].rc == 0 &&
                     tree_ephemerals_count(fsm_tree(p->f[0]), ids[i]) == 0,
                 "closing restored session %llx: rc %d",
                 (unsigned long long)ids[i], p->log[0].rc);
    }
}

/* A snapshot taken after zxid Z holds no node changed later than Z. */
static int not_from_future(void *data, struct tree_node *n)
{
    const int64_t *last = data;
    struct tb_stat st;

    tree_node_stat(n, &st);
    FZ_CHECK(st.czxid <= *last && st.mzxid <= *last && st.pzxid <= *last,
             "restored %s has zxids %lld/%lld/%lld after the snapshot's "
             "last zxid %lld",
             tree_node_path(n).ptr, (long long)st.czxid, (long long)st.mzxid,
             (long long)st.pzxid, (long long)*last);
    return 0;
}

static void accepted(struct fsm *f, int64_t zxid)
{
    struct pair p;
    struct tb_wbuf s1, s2;
    struct fsm_hooks h;
    int i;

    fz_tree_check(f, "restored");
    FZ_CHECK(fsm_last_zxid(f) == zxid, "zxid %lld, header says %lld",
             (long long)fsm_last_zxid(f), (long long)zxid);
    fz_tree_walk(fsm_tree(f), not_from_future, &zxid);
    tb_wbuf_init(&s1);
    tb_wbuf_init(&s2);
    snap(f, &s1);
    memset(&p, 0, sizeof p);
    p.f[0] = f;
    FZ_CHECK(fsm_init(&p.f[1], NULL) == 0, "fsm_init failed");
    FZ_CHECK(fsm_restore(p.f[1], s1.base, s1.len) == 0,
             "an accepted snapshot written back does not restore");
    snap(p.f[1], &s2);
    FZ_CHECK(same(&s1, &s2), "snapshot -> restore -> snapshot differs");
    for (i = 0; i < 2; i++) {
        fz_log_init(&p.log[i]);
        h = fz_log_hooks(&p.log[i]);
        fsm_set_hooks(p.f[i], &h);
    }
    p.zxid = zxid;
    p.t.time = FZ_TIME0;
    exercise(&p);
    snap(p.f[0], &s1);
    snap(p.f[1], &s2);
    FZ_CHECK(same(&s1, &s2), "restored copies diverged");
    fsm_set_hooks(f, NULL);
    fsm_close(p.f[1]);
    for (i = 0; i < 2; i++)
        fz_log_free(&p.log[i]);
    tb_wbuf_free(&p.t.body);
    tb_wbuf_free(&p.entry);
    tb_wbuf_free(&p.scratch);
    tb_wbuf_free(&s1);
    tb_wbuf_free(&s2);
}

/* A state to fall back to: one session, a node, an ephemeral. */
static struct fsm *prepared(void)
{
    static const uint8_t pw[16] = "prepared-passwd!";
    struct fz_txn t = {0};
    struct tb_wbuf entry;
    struct fsm *f;

    FZ_CHECK(fsm_init(&f, NULL) == 0, "fsm_init failed");
    tb_wbuf_init(&entry);
    tb_wbuf_init(&t.body);
    t.type = TB_OP_CREATESESSION;
    tb_create_session_txn_encode(
        &t.body,
        &(struct tb_create_session_txn){4000, {(const char *)pw, sizeof pw}});
    fz_txn_entry(&t, &entry);
    FZ_CHECK(fsm_apply(f, 1, entry.base, entry.len) == 0, "apply failed");
    t.session = fsm_session_id_for(1);
    t.type = TB_OP_CREATE;
    t.body.len = 0;
    tb_create_req_encode(
        &t.body, &(struct tb_create_req){TB_STR("/p"), TB_STR("x"),
                                         tb_acl_open_unsafe, TB_EPHEMERAL});
    fz_txn_entry(&t, &entry);
    FZ_CHECK(fsm_apply(f, 2, entry.base, entry.len) == 0, "apply failed");
    tb_wbuf_free(&entry);
    tb_wbuf_free(&t.body);
    return f;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int checked;
    struct tb_wbuf before, after;
    struct fsm *f;
    uint8_t *copy, mode;
    size_t n;
    int rv;

    if (!checked) {
        self_check();
        checked = 1;
    }
    if (size == 0)
        return 0;
    mode = data[0];
    n = size - 1;
    copy = malloc(n ? n : 1);
    FZ_CHECK(copy != NULL, "out of memory");
    memcpy(copy, data + 1, n);
    if (mode & 1)
        repair(copy, n, mode);
    f = prepared();
    tb_wbuf_init(&before);
    tb_wbuf_init(&after);
    snap(f, &before);
    rv = fsm_restore(f, copy, n);
    if (rv != 0) {
        FZ_CHECK(rv == TB_EDATAINCONSISTENCY, "fsm_restore gave %d", rv);
        snap(f, &after);
        FZ_CHECK(same(&before, &after), "a refused snapshot changed state");
        fz_tree_check(f, "after a refused restore");
    } else {
        FZ_CHECK(n >= HEADER, "%zu bytes accepted", n);
        accepted(f, (int64_t)tb_load_be64(copy + 24));
    }
    fsm_close(f);
    tb_wbuf_free(&before);
    tb_wbuf_free(&after);
    free(copy);
    return 0;
}
