/* Fuzz target: the state machine applying a sequence of txns.
 *
 * The input is a script (enum fz_txn_op in fuzz_gen.h) of at most
 * MAX_STEPS txns over a small path alphabet, the live tree's own paths,
 * live sessions, varied ACLs and identities, plus raw entries and raw
 * bodies for the decoder.  Every txn is applied to two fsms (A and B),
 * and from a FZ_OP_RESTORE step on also to a third one (C) restored from
 * A's snapshot at that point, as a follower that installs a snapshot and
 * then follows the log.  After every step:
 *   - fsm_apply returned 0, reported exactly one result, and advanced the
 *     last zxid; every replica reported byte-identical hook calls;
 *   - tree_check passes on every replica;
 *   - a txn that failed (rc != 0, or a multi whose results are errors)
 *     left the tree's snapshot bytes and the session count unchanged;
 *   - a multi's result list has one result per sub-op, and a failed one
 *     reads 0..0, the code, -2..-2;
 *   - a create's result names a node that exists, with the Stat reported.
 * At the end the fsm snapshots of all replicas are identical, and a fresh
 * fsm restored from that snapshot writes it back byte for byte. */
#include "fuzz_gen.h"

#define MAX_STEPS 48
#define NREPLICAS 3

struct replica {
    struct fsm *f;
    struct fz_log log;
};

struct ctx {
    struct replica r[NREPLICAS];
    int nrep;
    int64_t zxid;
    int64_t time;
    struct fz_txn t;
    int raw;        /* the entry is raw bytes, not t */
    int32_t create_data_len; /* the last create request's data */
    long multi_ops; /* sub-ops of a well-formed multi, else -1 */
    struct tb_wbuf entry, path, acl, ids, before, after;
};

static const int32_t raw_types[] = {
    TB_OP_CREATE,
    TB_OP_DELETE,
    TB_OP_EXISTS,
    TB_OP_GETDATA,
    TB_OP_SETDATA,
    TB_OP_GETACL,
    TB_OP_SETACL,
    TB_OP_GETCHILDREN,
    TB_OP_SYNC,
    TB_OP_PING,
    TB_OP_CHECK,
    TB_OP_MULTI,
    TB_OP_CREATE2,
    TB_OP_RECONFIG,
    TB_OP_CREATECONTAINER,
    TB_OP_DELETECONTAINER,
    TB_OP_CREATETTL,
    TB_OP_MULTIREAD,
    TB_OP_AUTH,
    TB_OP_SETWATCHES,
    TB_OP_CREATESESSION,
    TB_OP_CLOSESESSION,
    TB_OP_NOTIFICATION,
    TB_OP_ERROR,
    TB_OP_ADDWATCH,
    TB_OP_WHOAMI,
};
#define NRAW_TYPES (sizeof raw_types / sizeof raw_types[0])

static const int32_t create_ops[] = {TB_OP_CREATE, TB_OP_CREATE2,
                                     TB_OP_CREATECONTAINER, TB_OP_CREATETTL};

static int64_t pick_ttl(struct fz_in *in, unsigned sel)
{
    static const int64_t ttls[] = {
        -1, 0, 1, 1000, TREE_TTL_MAX, TREE_TTL_MAX + 1, -5};

    return sel < 7 ? ttls[sel] : (int64_t)fz_u64(in);
}

static struct tree *tree_of(struct ctx *c)
{
    return fsm_tree(c->r[0].f);
}

static int32_t version_at(struct ctx *c, struct tb_str path, int acl)
{
    struct tree_node *n = path.ptr ? tree_find(tree_of(c), path) : NULL;

    if (n == NULL)
        return 0;
    return acl ? tree_node_aversion(n) : tree_node_version(n);
}

/* A create request (type is the opcode) appended to the body. */
static int32_t put_create(struct ctx *c, struct fz_in *in)
{
    uint8_t b = fz_u8(in);
    int32_t type = create_ops[b & 3];
    struct tb_create_ttl_req q;

    q.flags = (b >> 2) & 7;
    q.ttl = pick_ttl(in, b >> 5);
    q.path = fz_gen_path(in, tree_of(c), &c->path);
    q.data = fz_gen_data(in);
    q.acl = fz_gen_acl(in, &c->acl);
    c->create_data_len = (int32_t)q.data.len;
    if (type == TB_OP_CREATETTL) {
        tb_create_ttl_req_encode(&c->t.body, &q);
    } else {
        struct tb_create_req r = {q.path, q.data, q.acl, q.flags};
        tb_create_req_encode(&c->t.body, &r);
    }
    return type;
}

static void put_delete(struct ctx *c, struct fz_in *in)
{
    struct tb_delete_req q;

    q.path = fz_gen_path(in, tree_of(c), &c->path);
    q.version = fz_gen_version(in, version_at(c, q.path, 0));
    tb_delete_req_encode(&c->t.body, &q);
}

static void put_set_data(struct ctx *c, struct fz_in *in)
{
    struct tb_set_data_req q;

    q.path = fz_gen_path(in, tree_of(c), &c->path);
    q.data = fz_gen_data(in);
    q.version = fz_gen_version(in, version_at(c, q.path, 0));
    tb_set_data_req_encode(&c->t.body, &q);
}

static void put_check(struct ctx *c, struct fz_in *in)
{
    struct tb_check_req q;

    q.path = fz_gen_path(in, tree_of(c), &c->path);
    q.version = fz_gen_version(in, version_at(c, q.path, 0));
    tb_check_req_encode(&c->t.body, &q);
}

static void put_multi_header(struct ctx *c, int32_t type)
{
    struct tb_multi_header h = {type, 0, -1};

    tb_multi_header_encode(&c->t.body, &h);
}

/* A multi of up to 7 sub-ops; some kinds make it malformed on purpose. */
static void put_multi(struct ctx *c, struct fz_in *in)
{
    unsigned n = fz_u8(in) % 8, i;
    size_t at;

    c->multi_ops = 0;
    for (i = 0; i < n; i++) {
        uint8_t k = fz_u8(in);
        switch (k % 8) {
        case 0:
        case 4: {
            int32_t type;
            at = c->t.body.len;
            put_multi_header(c, 0); /* type patched below */
            type = put_create(c, in);
            FZ_CHECK(!c->t.body.oom, "out of memory");
            tb_store_be32(c->t.body.base + at, (uint32_t)type);
            break;
        }
        case 1:
        case 7:
            put_multi_header(c, TB_OP_DELETE);
            put_delete(c, in);
            break;
        case 2:
            put_multi_header(c, TB_OP_SETDATA);
            put_set_data(c, in);
            break;
        case 3:
            put_multi_header(c, TB_OP_CHECK);
            put_check(c, in);
            break;
        case 5: /* a read in a write multi: the whole request is refused */
            put_multi_header(c, TB_OP_GETDATA);
            tb_path_watch_req_encode(
                &c->t.body, &(struct tb_path_watch_req){TB_STR("/"), 0});
            c->multi_ops = -1;
            break;
        default: /* a header with a truncated record, then nothing */
            put_multi_header(c, raw_types[(k >> 3) % NRAW_TYPES]);
            tb_put_I32(&c->t.body, 1);
            c->multi_ops = -1;
            return;
        }
        if (c->multi_ops >= 0)
            c->multi_ops++;
    }
    tb_multi_end_encode(&c->t.body);
}

static void put_session(struct ctx *c, struct fz_in *in)
{
    static const uint8_t pw[17] = "0123456789abcdef";
    struct tb_create_session_txn q;
    uint8_t kind;

    q.timeout = (int32_t)fz_u16(in);
    kind = fz_u8(in);
    q.passwd = kind % 8 == 6   ? TB_STR_NULL
               : kind % 8 == 7 ? (struct tb_str){(const char *)pw, 15}
                               : (struct tb_str){(const char *)pw, 16};
    tb_create_session_txn_encode(&c->t.body, &q);
}

/* A container or TTL node due at the txn's time, or any path. */
struct due {
    struct tb_wbuf *w;
    unsigned skip;
    int found;
};

static int due_cb(void *data, struct tree_node *n)
{
    struct due *d = data;
    struct tb_str p = tree_node_path(n);

    d->w->len = 0;
    tb_wbuf_put(d->w, p.ptr, p.len);
    d->found = 1;
    return d->skip-- == 0;
}

static void put_container(struct ctx *c, struct fz_in *in)
{
    uint8_t b = fz_u8(in);
    struct due d = {&c->path, b >> 1, 0};
    struct tb_path_req q;

    if (b & 1)
        tree_candidates(tree_of(c), c->t.time, due_cb, &d);
    q.path = d.found ? (struct tb_str){(const char *)c->path.base, c->path.len}
                     : fz_gen_path(in, tree_of(c), &c->path);
    tb_path_req_encode(&c->t.body, &q);
}

struct live {
    int64_t id[6];
    int n;
};

static int live_cb(void *data, const struct fsm_session_info *s)
{
    struct live *l = data;

    l->id[l->n++] = s->id;
    return l->n == 6;
}

static void put_header(struct ctx *c, struct fz_in *in)
{
    uint8_t h = fz_u8(in);
    struct live l = {{0}, 0};

    fsm_session_foreach(c->r[0].f, live_cb, &l);
    switch (h & 7) {
    case 6:
        c->t.session = 0;
        break;
    case 7:
        c->t.session = (int64_t)fz_u64(in);
        break;
    default:
        c->t.session = l.n ? l.id[(h & 7) % l.n] : 0;
        break;
    }
    c->t.ids = fz_gen_ids((h >> 3) & 7, &c->ids);
    c->t.super = (h >> 6) & 1;
    /* The schemes a leader's configuration allows ride on the ids' bits,
     * so that a sasl or x509 id meets both a leader that takes its scheme
     * and one that does not. */
    c->t.flags = (c->t.super ? 0 : TB_TXN_ENFORCE_QUOTA) |
                 (h & 0x08 ? TB_TXN_SASL_ACLS : 0) |
                 (h & 0x10 ? TB_TXN_X509_ACLS : 0);
    c->time += h & 0x80 ? 100 * (int64_t)fz_u16(in) : 1;
    c->t.time = c->time;
}

/* Wide nodes: many children at once grow the hash table and the children
 * arrays, and deleting many shrinks them (paths a few creates never
 * reach). */
static void put_bulk_create(struct ctx *c, struct fz_in *in)
{
    unsigned n = 8 + fz_u8(in) % 64, i;
    uint8_t f = fz_u8(in);
    struct tb_create_req q;

    q.flags = f & 4 ? (int32_t)(f & 3) : TB_PERSISTENT_SEQUENTIAL + (f & 1);
    q.path = fz_gen_path(in, tree_of(c), &c->path);
    q.data = TB_STR("bulk");
    q.acl = tb_acl_open_unsafe;
    c->multi_ops = n;
    for (i = 0; i < n; i++) {
        put_multi_header(c, TB_OP_CREATE);
        tb_create_req_encode(&c->t.body, &q);
    }
    tb_multi_end_encode(&c->t.body);
}

static void put_bulk_delete(struct ctx *c, struct fz_in *in)
{
    struct tree_node *p = fz_node_at(tree_of(c), fz_u8(in));
    uint32_t k = tree_node_nchildren(p), first = fz_u8(in), n = fz_u8(in);
    uint32_t i;

    c->multi_ops = 0;
    for (i = 0; k > 0 && i < n % 72 && i < k; i++) {
        struct tree_node *x = tree_node_child(p, (first + i) % k);
        put_multi_header(c, TB_OP_DELETE);
        tb_delete_req_encode(&c->t.body,
                             &(struct tb_delete_req){tree_node_path(x), -1});
        c->multi_ops++;
    }
    tb_multi_end_encode(&c->t.body);
}

/* Builds the step's entry; returns 0, or 1 for a restore step. */
static int build(struct ctx *c, struct fz_in *in)
{
    unsigned op = fz_u8(in) % FZ_OP_COUNT;

    c->raw = 0;
    c->multi_ops = -1;
    c->t.body.len = 0;
    put_header(c, in);
    switch (op) {
    case FZ_OP_CREATE:
        c->t.type = put_create(c, in);
        break;
    case FZ_OP_DELETE:
        c->t.type = TB_OP_DELETE;
        put_delete(c, in);
        break;
    case FZ_OP_SETDATA:
        c->t.type = TB_OP_SETDATA;
        put_set_data(c, in);
        break;
    case FZ_OP_SETACL: {
        struct tb_set_acl_req q;
        c->t.type = TB_OP_SETACL;
        q.path = fz_gen_path(in, tree_of(c), &c->path);
        q.acl = fz_gen_acl(in, &c->acl);
        q.version = fz_gen_version(in, version_at(c, q.path, 1));
        tb_set_acl_req_encode(&c->t.body, &q);
        break;
    }
    case FZ_OP_MULTI:
        c->t.type = TB_OP_MULTI;
        put_multi(c, in);
        break;
    case FZ_OP_SESSION:
        c->t.type = TB_OP_CREATESESSION;
        put_session(c, in);
        break;
    case FZ_OP_CLOSE:
        c->t.type = TB_OP_CLOSESESSION;
        break;
    case FZ_OP_CONTAINER:
        c->t.type = TB_OP_DELETECONTAINER;
        put_container(c, in);
        break;
    case FZ_OP_SYNC:
        c->t.type = TB_OP_SYNC;
        tb_path_req_encode(&c->t.body, &(struct tb_path_req){fz_gen_path(
                                           in, tree_of(c), &c->path)});
        break;
    case FZ_OP_RAW_ENTRY: {
        struct tb_str b = fz_bytes(in, fz_u8(in));
        c->raw = 1;
        c->entry.len = 0;
        tb_wbuf_put(&c->entry, b.ptr, b.len);
        return 0;
    }
    case FZ_OP_RAW_BODY: {
        struct tb_str b;
        c->t.type = raw_types[fz_u8(in) % NRAW_TYPES];
        b = fz_bytes(in, fz_u8(in));
        tb_wbuf_put(&c->t.body, b.ptr, b.len);
        break;
    }
    case FZ_OP_BULK_CREATE:
        c->t.type = TB_OP_MULTI;
        put_bulk_create(c, in);
        break;
    case FZ_OP_BULK_DELETE:
        c->t.type = TB_OP_MULTI;
        put_bulk_delete(c, in);
        break;
    default:
        return 1;
    }
    FZ_CHECK(!c->t.body.oom, "out of memory");
    fz_txn_entry(&c->t, &c->entry);
    return 0;
}

static void restore_replica(struct ctx *c)
{
    struct fsm_hooks h;

    if (c->nrep == NREPLICAS)
        return;
    c->before.len = 0;
    FZ_CHECK(fsm_snapshot(c->r[0].f, &c->before) == 0, "snapshot failed");
    fz_log_init(&c->r[c->nrep].log);
    h = fz_log_hooks(&c->r[c->nrep].log);
    FZ_CHECK(fsm_init(&c->r[c->nrep].f, &h) == 0, "fsm_init failed");
    FZ_CHECK(fsm_restore(c->r[c->nrep].f, c->before.base, c->before.len) == 0,
             "restoring a fresh snapshot failed");
    c->after.len = 0;
    FZ_CHECK(fsm_snapshot(c->r[c->nrep].f, &c->after) == 0, "snapshot failed");
    FZ_CHECK(c->after.len == c->before.len &&
                 memcmp(c->after.base, c->before.base, c->after.len) == 0,
             "a restored replica snapshots differently");
    fz_tree_check(c->r[c->nrep].f, "restored");
    c->nrep++;
}

/* The results of a multi body: count, and whether they are an error
 * list (then in the 0..0, code, -2..-2 shape). */
static void check_multi_body(const struct fz_log *l, long ops, int *failed)
{
    struct tb_rd r = tb_rd_make(l->body.base, l->body.len);
    struct tb_multi_header h;
    struct tb_error_resp e;
    struct tb_path_resp pr;
    struct tb_create2_resp cr;
    struct tb_stat_resp sr;
    long k = 0, at = -1;
    int rv = 0;

    *failed = 0;
    for (;; k++) {
        FZ_CHECK(tb_multi_header_decode(&r, &h) == 0, "result %ld cut", k);
        if (h.done)
            break;
        if (h.type == TB_OP_ERROR) {
            *failed = 1;
            FZ_CHECK(tb_error_resp_decode(&r, &e) == 0 && e.err == h.err,
                     "error result %ld: body differs from header", k);
            if (at < 0 && h.err != 0) {
                at = k;
                FZ_CHECK(h.err != TB_ERUNTIMEINCONSISTENCY,
                         "-2 before the failing op");
            } else {
                FZ_CHECK(h.err == (at < 0 ? 0 : TB_ERUNTIMEINCONSISTENCY),
                         "result %ld: %d in a failed multi", k, h.err);
            }
            continue;
        }
        FZ_CHECK(!*failed && h.err == 0, "success %ld after an error", k);
        switch (h.type) {
        case TB_OP_CREATE:
            rv = tb_path_resp_decode(&r, &pr);
            break;
        case TB_OP_CREATE2:
            rv = tb_create2_resp_decode(&r, &cr);
            break;
        case TB_OP_SETDATA:
            rv = tb_stat_resp_decode(&r, &sr);
            break;
        case TB_OP_DELETE:
        case TB_OP_CHECK:
            break;
        default:
            FZ_CHECK(0, "result %ld has type %d", k, h.type);
        }
        FZ_CHECK(rv == 0, "result %ld of type %d cut", k, h.type);
    }
    FZ_CHECK(r.pos == r.end, "bytes after the terminator");
    FZ_CHECK(!*failed || at >= 0, "error list without a cause");
    if (ops >= 0)
        FZ_CHECK(k == ops, "%ld results for %ld ops", k, ops);
}

static int same_stat(const struct tb_stat *a, const struct tb_stat *b)
{
    return a->czxid == b->czxid && a->mzxid == b->mzxid &&
           a->ctime == b->ctime && a->mtime == b->mtime &&
           a->version == b->version && a->cversion == b->cversion &&
           a->aversion == b->aversion &&
           a->ephemeral_owner == b->ephemeral_owner &&
           a->data_length == b->data_length &&
           a->num_children == b->num_children && a->pzxid == b->pzxid;
}

static void check_create_result(struct ctx *c, const struct fz_log *l)
{
    struct tb_rd r = tb_rd_make(l->body.base, l->body.len);
    struct tb_create2_resp cr;
    struct tb_path_resp pr;
    struct tb_stat st;
    struct tree_node *n;

    if (l->type == TB_OP_CREATE) {
        FZ_CHECK(tb_path_resp_decode(&r, &pr) == 0, "create result cut");
        cr.path = pr.path;
    } else {
        FZ_CHECK(tb_create2_resp_decode(&r, &cr) == 0, "create2 result cut");
    }
    FZ_CHECK(r.pos == r.end, "bytes after a create result");
    n = tree_find(tree_of(c), cr.path);
    FZ_CHECK(n != NULL, "created %.*s is not there", (int)cr.path.len,
             cr.path.ptr);
    FZ_CHECK(tree_node_version(n) == 0 && tree_node_nchildren(n) == 0 &&
                 (tree_owner_kind(tree_node_owner(n)) != TREE_EPHEMERAL ||
                  tree_node_owner(n) == c->t.session),
             "created node has version %d, owner %llx", tree_node_version(n),
             (unsigned long long)tree_node_owner(n));
    tree_node_stat(n, &st);
    FZ_CHECK(st.czxid == c->zxid && st.mzxid == c->zxid &&
                 st.pzxid == c->zxid && st.ctime == c->t.time,
             "created node's zxids or time are not the txn's");
    if (l->type == TB_OP_CREATE)
        return;
    /* The reply's Stat is taken as the node is made, before a quota stats
     * node gets its counts for data (ZooKeeper's DataTree does the same),
     * so its data length is the request's. */
    st.data_length = c->create_data_len;
    FZ_CHECK(same_stat(&st, &cr.stat), "create2 Stat differs from the node's");
}

static void apply_step(struct ctx *c)
{
    struct fz_log *l0 = &c->r[0].log;
    static int trace = -1;
    uint64_t sessions = fsm_session_count(c->r[0].f);
    int i, failed = 0, unchanged;

    c->zxid++;
    c->before.len = 0;
    tree_snapshot(tree_of(c), &c->before);
    for (i = 0; i < c->nrep; i++) {
        struct replica *r = &c->r[i];
        fz_log_reset(&r->log);
        FZ_CHECK(fsm_apply(r->f, c->zxid, c->entry.base, c->entry.len) == 0,
                 "replica %d: fsm_apply failed", i);
        FZ_CHECK(r->log.results == 1, "replica %d: %d results", i,
                 r->log.results);
        FZ_CHECK(fsm_last_zxid(r->f) == c->zxid, "replica %d: last zxid", i);
        fz_tree_check(r->f, "after apply");
        FZ_CHECK(r->log.all.len == l0->all.len &&
                     memcmp(r->log.all.base, l0->all.base, l0->all.len) == 0,
                 "replica %d reported differently: type %d rc %d, %d events,"
                 " %zu bytes / type %d rc %d, %d events, %zu bytes",
                 i, l0->type, l0->rc, l0->events, l0->all.len, r->log.type,
                 r->log.rc, r->log.events, r->log.all.len);
    }
    if (trace < 0)
        trace = getenv("FUZZ_TRACE") != NULL;
    if (trace)
        fprintf(stderr,
                "zxid %lld: type %d%s -> rc %d, %zu body bytes, %d "
                "events\n",
                (long long)c->zxid, l0->type, c->raw ? " (raw)" : "", l0->rc,
                l0->body.len, l0->events);
    if (l0->rc == 0 && l0->type == TB_OP_MULTI)
        check_multi_body(l0, c->multi_ops, &failed);
    if (l0->rc == 0 && !c->raw &&
        (l0->type == TB_OP_CREATE || l0->type == TB_OP_CREATE2 ||
         l0->type == TB_OP_CREATECONTAINER || l0->type == TB_OP_CREATETTL))
        check_create_result(c, l0);
    if (l0->rc != 0)
        FZ_CHECK(l0->body.len == 0 && l0->events == 0,
                 "a failed txn has a body or events");
    unchanged = l0->rc != 0 || failed || l0->type == TB_OP_SYNC ||
                l0->type == TB_OP_CREATESESSION;
    if (unchanged) {
        c->after.len = 0;
        tree_snapshot(tree_of(c), &c->after);
        FZ_CHECK(c->after.len == c->before.len &&
                     memcmp(c->after.base, c->before.base, c->after.len) == 0,
                 "txn type %d rc %d%s changed the tree", l0->type, l0->rc,
                 failed ? " (failed multi)" : "");
        FZ_CHECK(failed == 0 || l0->events == 0, "a failed multi fired");
    }
    if (l0->rc != 0 || failed)
        FZ_CHECK(fsm_session_count(c->r[0].f) == sessions,
                 "a failed txn changed the sessions");
    else if (l0->type == TB_OP_CREATESESSION)
        FZ_CHECK(
            fsm_session_count(c->r[0].f) == sessions + 1 &&
                fsm_session_get(c->r[0].f, fsm_session_id_for(c->zxid), NULL),
            "createSession did not add its session");
    else if (l0->type == TB_OP_CLOSESESSION && !c->raw)
        FZ_CHECK(fsm_session_count(c->r[0].f) == sessions - 1 &&
                     !fsm_session_get(c->r[0].f, c->t.session, NULL) &&
                     tree_ephemerals_count(tree_of(c), c->t.session) == 0,
                 "closeSession left its session or ephemerals");
}

static void final_checks(struct ctx *c)
{
    struct fsm *d;
    int i;

    c->before.len = 0;
    FZ_CHECK(fsm_snapshot(c->r[0].f, &c->before) == 0, "snapshot failed");
    for (i = 1; i < c->nrep; i++) {
        c->after.len = 0;
        FZ_CHECK(fsm_snapshot(c->r[i].f, &c->after) == 0, "snapshot failed");
        FZ_CHECK(c->after.len == c->before.len &&
                     memcmp(c->after.base, c->before.base, c->after.len) == 0,
                 "replica %d diverged (%zu vs %zu snapshot bytes)", i,
                 c->after.len, c->before.len);
    }
    FZ_CHECK(fsm_init(&d, NULL) == 0, "fsm_init failed");
    FZ_CHECK(fsm_restore(d, c->before.base, c->before.len) == 0,
             "final snapshot does not restore");
    c->after.len = 0;
    FZ_CHECK(fsm_snapshot(d, &c->after) == 0, "snapshot failed");
    FZ_CHECK(c->after.len == c->before.len &&
                 memcmp(c->after.base, c->before.base, c->after.len) == 0,
             "snapshot -> restore -> snapshot differs");
    fsm_close(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fz_in in = fz_in_make(data, size);
    struct ctx c;
    struct fsm_hooks h;
    int i, steps;

    memset(&c, 0, sizeof c);
    c.time = FZ_TIME0;
    for (i = 0; i < 2; i++) {
        fz_log_init(&c.r[i].log);
        h = fz_log_hooks(&c.r[i].log);
        FZ_CHECK(fsm_init(&c.r[i].f, &h) == 0, "fsm_init failed");
    }
    c.nrep = 2;
    for (steps = 0; steps < MAX_STEPS && fz_left(&in) > 0; steps++) {
        if (build(&c, &in) == 1)
            restore_replica(&c);
        else
            apply_step(&c);
    }
    final_checks(&c);
    for (i = 0; i < c.nrep; i++) {
        fsm_close(c.r[i].f);
        fz_log_free(&c.r[i].log);
    }
    tb_wbuf_free(&c.t.body);
    tb_wbuf_free(&c.entry);
    tb_wbuf_free(&c.path);
    tb_wbuf_free(&c.acl);
    tb_wbuf_free(&c.ids);
    tb_wbuf_free(&c.before);
    tb_wbuf_free(&c.after);
    return 0;
}
