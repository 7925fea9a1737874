/* Fuzz target: a stateful differential test of the fsm and its tree
 * against the naive model of tree_model.h.
 *
 * The input is a script of at most MAX_STEPS ops (enum fz_model_op):
 * create in every mode, delete, setData, multi of create / delete /
 * setData / check, createSession, closeSession, deleteContainer, a clock
 * tick, setting a parent's sequence counter near the int32 wrap, and
 * putting a quota on a node as zkCli's setquota does.  The model predicts
 * each result code (ZooKeeper's check order, wire doc §6 and §9.2; hard
 * quota limits when the step's txn carries TB_TXN_ENFORCE_QUOTA), the
 * sequential name, the Stat, and a multi's per-op results; after every op
 * the tree must hold exactly the model's nodes with the model's data
 * (quota stats included) and Stats, mntr's quota sums by namespace must be
 * the model's, and tree_check must pass. */
#include "fuzz_gen.h"
#include "tree_model.h"

#define MAX_STEPS 64

struct ctx {
    struct model m, work;
    struct fsm *f;
    struct fz_log log;
    struct m_txn txn; /* the step's txn header, for the fsm and the model */
    struct tb_wbuf body, entry;
    struct m_name name; /* what the model's last create or setData named */
};

/* ---- the script ---- */

static const char *const names[] = {"a", "b", "c", "s-"};
static const char *const awkward[] = {
    "",
    "a",
    "/a/",
    "//a",
    "/a/.",
    "/a/..",
    "/zookeeper",
    "/zookeeper/quota",
    "/zookeeper/config",
    "/",
    "/.",
    "/a//b",
    "/zookeeper/config/c",
    "/\x01",
};

/* Mode byte bits 0-2: 0-1 the node itself, 2-4 a child named by bits 3-4,
 * 5 the node plus "/" (for sequential names), 6 an awkward path (bits
 * 3-7), 7 a null path.  Then a node index byte. */
static void gen_path(struct ctx *c, struct fz_in *in, struct mreq *q)
{
    uint8_t m = fz_u8(in);
    const struct mnode *x = &c->m.v[fz_u8(in) % c->m.n];
    const char *s;
    size_t k;

    q->has_path = 1;
    switch (m & 7) {
    case 0:
    case 1:
        memcpy(q->path, x->path, x->plen);
        q->plen = x->plen;
        return;
    case 2:
    case 3:
    case 4:
        s = names[(m >> 3) & 3];
        break;
    case 5:
        s = "";
        break;
    case 6:
        s = awkward[(m >> 3) % (sizeof awkward / sizeof awkward[0])];
        q->plen = strlen(s);
        memcpy(q->path, s, q->plen);
        return;
    default:
        q->has_path = 0;
        q->plen = 0;
        return;
    }
    if (x->plen + 16 >= MPATH) { /* no room for a child: the node */
        memcpy(q->path, x->path, x->plen);
        q->plen = x->plen;
        return;
    }
    memcpy(q->path, x->path, x->plen);
    k = x->plen;
    if (k > 1)
        q->path[k++] = '/';
    memcpy(q->path + k, s, strlen(s));
    q->plen = k + strlen(s);
}

static struct tb_str gen_data(struct fz_in *in)
{
    switch (fz_u8(in) % 4) {
    case 0:
        return TB_STR_NULL;
    case 1:
        return TB_STR("");
    default:
        return fz_bytes(in, fz_u8(in) % 16);
    }
}

/* A create request.  Mode byte: flags in bits 0-2 (7 is no mode at all),
 * create or create2 by bit 3, a TTL of 1000 x bits 3-4 ms (0 is out of
 * range); the opcode goes with the flags unless bits 5-7 are all set, which
 * pairs them at random.  Then path, data and an ACL byte (0 in 16: an
 * empty list). */
static void gen_create(struct ctx *c, struct fz_in *in, struct mreq *q)
{
    static const int32_t odd[] = {TB_OP_CREATE, TB_OP_CREATECONTAINER,
                                  TB_OP_CREATETTL};
    uint8_t b = fz_u8(in);

    q->flags = b & 7;
    q->ttl = -1;
    if (q->flags == 4) {
        q->type = TB_OP_CREATECONTAINER;
    } else if (q->flags == 5 || q->flags == 6) {
        q->type = TB_OP_CREATETTL;
        q->ttl = ((b >> 3) & 3) * 1000;
    } else {
        q->type = (b >> 3) & 1 ? TB_OP_CREATE2 : TB_OP_CREATE;
    }
    if ((b >> 5) == 7)
        q->type = odd[(b >> 3) % 3];
    gen_path(c, in, q);
    q->data = gen_data(in);
    q->bad_acl = fz_u8(in) % 16 == 0;
}

static int32_t version_of(struct ctx *c, const struct mreq *q)
{
    struct mnode *x = m_find(&c->m, q->path, q->plen);

    return x ? x->version : 0;
}

static struct tb_str req_path(const struct mreq *q)
{
    return q->has_path ? (struct tb_str){q->path, q->plen} : TB_STR_NULL;
}

/* Encodes a request record (not a multi) into c->body. */
static void encode_req(struct ctx *c, const struct mreq *q)
{
    struct tb_str p = req_path(q);
    struct tb_vec acl =
        q->bad_acl ? (struct tb_vec){0, NULL, 0} : tb_acl_open_unsafe;

    switch (q->type) {
    case TB_OP_CREATETTL:
        tb_create_ttl_req_encode(
            &c->body,
            &(struct tb_create_ttl_req){p, q->data, acl, q->flags, q->ttl});
        break;
    case TB_OP_CREATE:
    case TB_OP_CREATE2:
    case TB_OP_CREATECONTAINER:
        tb_create_req_encode(
            &c->body, &(struct tb_create_req){p, q->data, acl, q->flags});
        break;
    case TB_OP_DELETE:
        tb_delete_req_encode(&c->body, &(struct tb_delete_req){p, q->version});
        break;
    case TB_OP_SETDATA:
        tb_set_data_req_encode(
            &c->body, &(struct tb_set_data_req){p, q->data, q->version});
        break;
    case TB_OP_CHECK:
        tb_check_req_encode(&c->body, &(struct tb_check_req){p, q->version});
        break;
    case TB_OP_DELETECONTAINER:
        tb_path_req_encode(&c->body, &(struct tb_path_req){p});
        break;
    }
}

/* ---- comparing ---- */

static void expect_stat(const struct mnode *x, const struct tb_stat *st,
                        const char *what)
{
    int32_t cv = (int32_t)(2u * (uint32_t)x->ccount - (uint32_t)x->nkids);
    int64_t eo = x->kind == K_EPHEMERAL ? x->owner : 0;

    FZ_CHECK(st->czxid == x->czxid && st->mzxid == x->mzxid &&
                 st->ctime == x->ctime && st->mtime == x->mtime &&
                 st->pzxid == x->pzxid,
             "%s %.*s: zxids/times (czxid %lld/%lld mzxid %lld/%lld pzxid "
             "%lld/%lld)",
             what, (int)x->plen, x->path, (long long)st->czxid,
             (long long)x->czxid, (long long)st->mzxid, (long long)x->mzxid,
             (long long)st->pzxid, (long long)x->pzxid);
    FZ_CHECK(st->version == x->version && st->aversion == x->aversion &&
                 st->cversion == cv && st->num_children == x->nkids,
             "%s %.*s: version %d/%d cversion %d/%d children %d/%d", what,
             (int)x->plen, x->path, st->version, x->version, st->cversion, cv,
             st->num_children, x->nkids);
    FZ_CHECK(st->ephemeral_owner == eo && st->data_length == (int32_t)x->dlen,
             "%s %.*s: owner %llx/%llx length %d/%zu", what, (int)x->plen,
             x->path, (unsigned long long)st->ephemeral_owner,
             (unsigned long long)eo, st->data_length, x->dlen);
}

static int64_t stored_owner(const struct mnode *x)
{
    switch (x->kind) {
    case K_EPHEMERAL:
        return x->owner;
    case K_CONTAINER:
        return TREE_CONTAINER_OWNER;
    case K_TTL:
        return tree_ttl_owner(x->owner);
    default:
        return 0;
    }
}

/* mntr's quota sums by namespace: each leaf limits or stats node with
 * data under QROOT adds to the namespace of its path's first name. */
struct m_sums {
    const char *ns;
    size_t len;
    int limits, stats, seen;
    int64_t v[4]; /* count and bytes limits, count and bytes used */
};

struct sums_check {
    struct m_sums e[MAX_NODES];
    size_t n;
};

static struct m_sums *sums_of(struct sums_check *k, const char *ns, size_t len)
{
    size_t i;

    for (i = 0; i < k->n; i++)
        if (k->e[i].len == len && memcmp(k->e[i].ns, ns, len) == 0)
            return &k->e[i];
    return NULL;
}

static void got_sums(void *arg, const struct tree_quota_sums *q)
{
    struct m_sums *e = sums_of(arg, q->ns.ptr, q->ns.len);

    FZ_CHECK(e != NULL && !e->seen, "quota namespace %.*s: not in the model",
             (int)q->ns.len, q->ns.ptr);
    e->seen = 1;
    FZ_CHECK(e->limits == q->limits && e->stats == q->stats &&
                 (!q->limits ||
                  (q->count_limit == e->v[0] && q->bytes_limit == e->v[1])) &&
                 (!q->stats || (q->count == e->v[2] && q->bytes == e->v[3])),
             "quota sums of %.*s: %d %d %lld/%lld %lld/%lld, model %d %d "
             "%lld/%lld %lld/%lld",
             (int)q->ns.len, q->ns.ptr, q->limits, q->stats,
             (long long)q->count_limit, (long long)q->bytes_limit,
             (long long)q->count, (long long)q->bytes, e->limits, e->stats,
             (long long)e->v[0], (long long)e->v[1], (long long)e->v[2],
             (long long)e->v[3]);
}

static void compare_sums(struct ctx *c)
{
    static struct sums_check k;
    const size_t qlen = sizeof QROOT - 1;
    const char *name;
    struct m_sums *e;
    size_t i, n;
    int64_t hard;
    int limits;

    k.n = 0;
    for (i = 0; i < c->m.n; i++) {
        const struct mnode *x = &c->m.v[i];
        if (x->nkids != 0 || x->dnull || x->plen <= qlen + 1 ||
            memcmp(x->path, QROOT "/", qlen + 1) != 0)
            continue;
        for (name = x->path + x->plen; name[-1] != '/'; name--)
            ;
        n = (size_t)(x->path + x->plen - name);
        limits = n == 16 && memcmp(name, "zookeeper_limits", n) == 0;
        if (!limits && !(n == 15 && memcmp(name, "zookeeper_stats", n) == 0))
            continue;
        for (n = qlen + 1; n < x->plen && x->path[n] != '/'; n++)
            ;
        if ((e = sums_of(&k, x->path + qlen + 1, n - qlen - 1)) == NULL) {
            e = &k.e[k.n++];
            memset(e, 0, sizeof *e);
            e->ns = x->path + qlen + 1;
            e->len = n - qlen - 1;
        }
        if (limits) {
            e->limits = 1;
            hard = m_kv(x, "countHardLimit");
            e->v[0] += hard > -1 ? hard : m_kv(x, "count");
            hard = m_kv(x, "byteHardLimit");
            e->v[1] += hard > -1 ? hard : m_kv(x, "bytes");
        } else {
            e->stats = 1;
            e->v[2] += m_kv(x, "count");
            e->v[3] += m_kv(x, "bytes");
        }
    }
    tree_quota_namespaces(fsm_tree(c->f), got_sums, &k);
    for (i = 0; i < k.n; i++)
        FZ_CHECK(k.e[i].seen, "quota namespace %.*s: not reported",
                 (int)k.e[i].len, k.e[i].ns);
}

static void compare(struct ctx *c)
{
    struct tree *t = fsm_tree(c->f);
    struct tree_node *n;
    struct tb_stat st;
    struct tb_str d;
    size_t i;

    fz_tree_check(c->f, "tree_model");
    FZ_CHECK(tree_count(t) == c->m.n, "tree has %llu nodes, model %zu",
             (unsigned long long)tree_count(t), c->m.n);
    FZ_CHECK(fsm_session_count(c->f) == c->m.nsess, "%llu sessions, model %zu",
             (unsigned long long)fsm_session_count(c->f), c->m.nsess);
    for (i = 0; i < c->m.n; i++) {
        const struct mnode *x = &c->m.v[i];
        n = tree_find(t, (struct tb_str){x->path, x->plen});
        FZ_CHECK(n != NULL, "%.*s missing", (int)x->plen, x->path);
        tree_node_stat(n, &st);
        expect_stat(x, &st, "node");
        FZ_CHECK(tree_node_owner(n) == stored_owner(x), "%.*s: owner %llx",
                 (int)x->plen, x->path, (unsigned long long)tree_node_owner(n));
        FZ_CHECK(tree_node_ccount(n) == x->ccount, "%.*s: counter %d/%d",
                 (int)x->plen, x->path, tree_node_ccount(n), x->ccount);
        d = tree_node_data(n);
        FZ_CHECK((d.ptr == NULL) == x->dnull && d.len == x->dlen &&
                     (x->dlen == 0 || memcmp(d.ptr, x->data, x->dlen) == 0),
                 "%.*s: data differs", (int)x->plen, x->path);
    }
    compare_sums(c);
}

/* The result record of a successful single create/setData. */
static void expect_body(struct ctx *c, int32_t type, struct tb_rd *r)
{
    struct tb_create2_resp cr;
    struct tb_path_resp pr;
    struct tb_stat_resp sr;
    const struct mnode *x;

    switch (type) {
    case TB_OP_CREATE:
        FZ_CHECK(tb_path_resp_decode(r, &pr) == 0, "create result cut");
        FZ_CHECK(pr.path.len == c->name.len &&
                     memcmp(pr.path.ptr, c->name.path, c->name.len) == 0,
                 "created %.*s, model %.*s", (int)pr.path.len, pr.path.ptr,
                 (int)c->name.len, c->name.path);
        break;
    case TB_OP_CREATE2:
        FZ_CHECK(tb_create2_resp_decode(r, &cr) == 0, "create2 result cut");
        FZ_CHECK(cr.path.len == c->name.len &&
                     memcmp(cr.path.ptr, c->name.path, c->name.len) == 0,
                 "created %.*s, model %.*s", (int)cr.path.len, cr.path.ptr,
                 (int)c->name.len, c->name.path);
        x = m_find(&c->work, c->name.path, c->name.len);
        FZ_CHECK(x != NULL, "model lost its node");
        expect_stat(x, &cr.stat, "create2 result");
        break;
    case TB_OP_SETDATA:
        FZ_CHECK(tb_stat_resp_decode(r, &sr) == 0, "setData result cut");
        x = m_find(&c->work, c->name.path, c->name.len);
        FZ_CHECK(x != NULL, "model lost its node");
        expect_stat(x, &sr.stat, "setData result");
        break;
    }
}

/* Sends the txn in c->body as transaction c->txn.zxid (which the caller
 * advanced before the model computed its expectations) and returns the
 * result code. */
static int submit(struct ctx *c, int32_t type)
{
    static int trace = -1;
    struct fz_txn t = {
        type, c->txn.session, c->txn.time, 0, {0, NULL, 0}, c->body, 0};

    t.flags = c->txn.enforce ? TB_TXN_ENFORCE_QUOTA : 0;
    fz_txn_entry(&t, &c->entry);
    fz_log_reset(&c->log);
    FZ_CHECK(fsm_apply(c->f, c->txn.zxid, c->entry.base, c->entry.len) == 0,
             "fsm_apply failed");
    FZ_CHECK(c->log.results == 1 && c->log.zxid == c->txn.zxid, "%d results",
             c->log.results);
    if (trace < 0)
        trace = getenv("FUZZ_TRACE") != NULL;
    if (trace)
        fprintf(stderr,
                "zxid %lld: type %d session %llx -> rc %d, %zu body "
                "bytes, %d events\n",
                (long long)c->txn.zxid, type,
                (unsigned long long)c->txn.session, c->log.rc, c->log.body.len,
                c->log.events);
    return c->log.rc;
}

static void single(struct ctx *c, const struct mreq *q)
{
    struct tb_rd r;
    int want, got;

    c->txn.zxid++;
    c->work = c->m;
    want = m_apply(&c->work, &c->txn, q, &c->name);
    c->body.len = 0;
    encode_req(c, q);
    got = submit(c, q->type);
    FZ_CHECK(got == want, "op %d on %.*s: rc %d, model %d", q->type,
             (int)q->plen, q->path, got, want);
    r = tb_rd_make(c->log.body.base, c->log.body.len);
    if (want == 0) {
        expect_body(c,
                    q->type == TB_OP_CREATECONTAINER ||
                            q->type == TB_OP_CREATETTL
                        ? TB_OP_CREATE2
                        : q->type,
                    &r);
        c->m = c->work;
    }
    FZ_CHECK(r.pos == r.end, "op %d: %td bytes left in the result", q->type,
             r.end - r.pos);
}

/* What one successful sub-op should report: the created node's name,
 * and the node as it stood right after that sub-op (for its Stat). */
struct expect {
    char name[MPATH + 16];
    size_t len;
    struct mnode node;
};

static void check_sub_result(struct ctx *c, const struct mreq *q,
                             const struct expect *ex, struct tb_rd *r,
                             unsigned i)
{
    struct tb_multi_header h;
    struct tb_path_resp pr;
    struct tb_create2_resp cr;
    struct tb_stat_resp sr;
    int32_t want_type = q->type;

    (void)c;
    FZ_CHECK(tb_multi_header_decode(r, &h) == 0 && !h.done,
             "multi result %u missing", i);
    FZ_CHECK(h.type != TB_OP_ERROR && h.err == 0,
             "multi op %u (type %d on %.*s): error %d, model 0", i, q->type,
             (int)q->plen, q->path, h.err);
    /* 3.8 reports create2 as create, container/TTL creates as create2. */
    if (q->type == TB_OP_CREATE2)
        want_type = TB_OP_CREATE;
    if (q->type == TB_OP_CREATECONTAINER || q->type == TB_OP_CREATETTL)
        want_type = TB_OP_CREATE2;
    FZ_CHECK(h.type == want_type, "multi op %u: type %d, model %d", i, h.type,
             want_type);
    switch (h.type) {
    case TB_OP_CREATE:
        FZ_CHECK(tb_path_resp_decode(r, &pr) == 0, "result cut");
        cr.path = pr.path;
        break;
    case TB_OP_CREATE2:
        FZ_CHECK(tb_create2_resp_decode(r, &cr) == 0, "result cut");
        expect_stat(&ex->node, &cr.stat, "multi create2 result");
        break;
    case TB_OP_SETDATA:
        FZ_CHECK(tb_stat_resp_decode(r, &sr) == 0, "result cut");
        expect_stat(&ex->node, &sr.stat, "multi setData result");
        return;
    default:
        return;
    }
    FZ_CHECK(cr.path.len == ex->len &&
                 memcmp(cr.path.ptr, ex->name, ex->len) == 0,
             "multi op %u created %.*s, model %.*s", i, (int)cr.path.len,
             cr.path.ptr, (int)ex->len, ex->name);
}

static void multi(struct ctx *c, struct fz_in *in)
{
    struct mreq q[8];
    struct expect ex[8];
    int want, failed = -1, code = 0;
    unsigned n = fz_u8(in) % 8, i;
    struct tb_multi_header h;
    struct tb_error_resp e;
    struct tb_rd r;
    const struct mnode *x;

    c->txn.zxid++;
    c->work = c->m;
    c->body.len = 0;
    for (i = 0; i < n; i++) {
        uint8_t k = fz_u8(in) % 4;
        memset(&q[i], 0, sizeof q[i]);
        if (k == 0) {
            gen_create(c, in, &q[i]);
        } else {
            q[i].type = k == 1   ? TB_OP_DELETE
                        : k == 2 ? TB_OP_SETDATA
                                 : TB_OP_CHECK;
            gen_path(c, in, &q[i]);
            if (k == 2)
                q[i].data = gen_data(in);
            q[i].version = fz_gen_version(in, version_of(c, &q[i]));
        }
        h = (struct tb_multi_header){q[i].type, 0, -1};
        tb_multi_header_encode(&c->body, &h);
        encode_req(c, &q[i]);
    }
    tb_multi_end_encode(&c->body);
    /* The model runs the sub-ops in order until one fails. */
    for (i = 0; i < n && failed < 0; i++) {
        want = m_apply(&c->work, &c->txn, &q[i], &c->name);
        if (want != 0) {
            failed = (int)i;
            code = want;
            break;
        }
        memcpy(ex[i].name, c->name.path, c->name.len);
        ex[i].len = c->name.len;
        x = m_find(&c->work, c->name.path, c->name.len);
        if (x)
            ex[i].node = *x;
    }
    FZ_CHECK(submit(c, TB_OP_MULTI) == 0, "multi rc %d", c->log.rc);
    r = tb_rd_make(c->log.body.base, c->log.body.len);
    for (i = 0; i < n; i++) {
        if (failed < 0) {
            check_sub_result(c, &q[i], &ex[i], &r, i);
            continue;
        }
        want = (int)i < failed    ? 0
               : (int)i == failed ? code
                                  : TB_ERUNTIMEINCONSISTENCY;
        FZ_CHECK(tb_multi_header_decode(&r, &h) == 0 && !h.done &&
                     h.type == TB_OP_ERROR && h.err == want &&
                     tb_error_resp_decode(&r, &e) == 0 && e.err == want,
                 "multi op %u (type %d on %.*s): type %d err %d, model %d", i,
                 q[i].type, (int)q[i].plen, q[i].path, h.type, h.err, want);
    }
    FZ_CHECK(tb_multi_header_decode(&r, &h) == 0 && h.done && r.pos == r.end,
             "multi terminator");
    if (failed < 0)
        c->m = c->work;
}

/* The txn's session: a live one (0-5), none (6), or an unknown id; hard
 * quota limits enforced unless bits 3-4 are 0. */
static void pick_session(struct ctx *c, uint8_t b)
{
    c->txn.enforce = (b >> 3 & 3) != 0;
    switch (b % 8) {
    case 6:
        c->txn.session = 0;
        break;
    case 7:
        c->txn.session = (int64_t)((1ULL << 56) | 0xfffff);
        break;
    default:
        c->txn.session = c->m.nsess ? c->m.sess[(b % 8) % c->m.nsess] : 0;
        break;
    }
}

/* A create of path (null data) or of path + "/" + leaf with data d. */
static void create_at(struct ctx *c, const char *path, size_t n,
                      const char *leaf, const char *d)
{
    struct mreq q;

    memset(&q, 0, sizeof q);
    q.type = TB_OP_CREATE;
    q.ttl = -1;
    q.has_path = 1;
    q.plen = (size_t)snprintf(q.path, sizeof q.path, "%.*s%s%s", (int)n, path,
                              leaf ? "/" : "", leaf ? leaf : "");
    q.data = d ? tb_str_c(d) : TB_STR_NULL;
    single(c, &q);
}

/* A quota on a node outside /zookeeper, as zkCli's setquota makes one: its
 * path under QROOT, then limits and stats, each its own txn.  Bytes: the
 * node; the order (bit 0: stats first, bit 1: no stats, bit 2: 3.8 zkCli's
 * form of the limits); the count and bytes hard limits (-1: none). */
static void quota(struct ctx *c, struct fz_in *in)
{
    const struct mnode *x = &c->m.v[fz_u8(in) % c->m.n];
    uint8_t order = fz_u8(in);
    int hc = fz_u8(in) % 12 - 1, hb = fz_u8(in) % 80 - 1, i;
    char p[MPATH + 48], limits[64];
    size_t n = sizeof QROOT - 1;

    if (x->plen < 2 || x->plen + n + sizeof "/zookeeper_limits" > MPATH ||
        (x->plen >= 10 && memcmp(x->path, "/zookeeper", 10) == 0 &&
         (x->plen == 10 || x->path[10] == '/')))
        return;
    memcpy(p, QROOT, n);
    memcpy(p + n, x->path, x->plen);
    for (n += 2; n <= sizeof QROOT - 1 + x->plen; n++)
        if (n == sizeof QROOT - 1 + x->plen || p[n] == '/')
            create_at(c, p, n, NULL, NULL);
    n--;
    if (order & 4)
        snprintf(limits, sizeof limits,
                 "count=%d,bytes=-1=;byteHardLimit=%d;countHardLimit=%d", hc,
                 hb, hc);
    else
        snprintf(limits, sizeof limits,
                 "count=-1,bytes=-1,countHardLimit=%d,byteHardLimit=%d", hc,
                 hb);
    for (i = 0; i < 2; i++)
        if (i == (order & 1))
            create_at(c, p, n, "zookeeper_limits", limits);
        else if (!(order & 2))
            create_at(c, p, n, "zookeeper_stats", "count=0,bytes=0");
}

static void step(struct ctx *c, struct fz_in *in)
{
    static const int32_t counters[] = {2147483646,  2147483647, -1,
                                       -1000000000, 999999999,  2147483600};
    unsigned op = fz_u8(in) % FZ_M_OP_COUNT;
    struct mreq q;

    pick_session(c, fz_u8(in));
    c->txn.time += 1;
    memset(&q, 0, sizeof q);
    switch (op) {
    case FZ_M_CREATE:
        gen_create(c, in, &q);
        single(c, &q);
        break;
    case FZ_M_DELETE:
    case FZ_M_SETDATA:
        q.type = op == FZ_M_DELETE ? TB_OP_DELETE : TB_OP_SETDATA;
        gen_path(c, in, &q);
        if (op == FZ_M_SETDATA)
            q.data = gen_data(in);
        q.version = fz_gen_version(in, version_of(c, &q));
        single(c, &q);
        break;
    case FZ_M_MULTI:
        multi(c, in);
        break;
    case FZ_M_SESSION: {
        static const uint8_t pw[16] = "tree-model-pw-16";
        c->txn.zxid++;
        c->body.len = 0;
        tb_create_session_txn_encode(&c->body,
                                     &(struct tb_create_session_txn){
                                         3000, {(const char *)pw, sizeof pw}});
        FZ_CHECK(submit(c, TB_OP_CREATESESSION) == 0, "createSession rc %d",
                 c->log.rc);
        FZ_CHECK(c->m.nsess < 64, "too many sessions");
        c->m.sess[c->m.nsess++] = fsm_session_id_for(c->txn.zxid);
        FZ_CHECK(fsm_session_id_for(c->txn.zxid) ==
                     (int64_t)((1ULL << 56) | (uint64_t)c->txn.zxid),
                 "session id");
        break;
    }
    case FZ_M_CLOSE: {
        int want;
        c->txn.zxid++;
        c->work = c->m;
        want = m_close(&c->work, &c->txn);
        c->body.len = 0;
        FZ_CHECK(submit(c, TB_OP_CLOSESESSION) == want,
                 "closeSession rc %d, model %d", c->log.rc, want);
        c->m = c->work;
        break;
    }
    case FZ_M_CONTAINER:
        q.type = TB_OP_DELETECONTAINER;
        gen_path(c, in, &q);
        single(c, &q);
        break;
    case FZ_M_TICK:
        c->txn.time += 10 * (int64_t)fz_u16(in);
        break;
    case FZ_M_QUOTA:
        if (!m_has_session(&c->m, c->txn.session) && c->m.nsess > 0)
            c->txn.session = c->m.sess[0];
        quota(c, in);
        break;
    default: { /* FZ_M_COUNTER */
        struct mnode *x = &c->m.v[fz_u8(in) % c->m.n];
        int32_t v = counters[fz_u8(in) % 6];
        tree_node_set_ccount(
            tree_find(fsm_tree(c->f), (struct tb_str){x->path, x->plen}), v);
        x->ccount = v;
        break;
    }
    }
    compare(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fz_in in = fz_in_make(data, size);
    struct ctx *c = calloc(1, sizeof *c);
    struct fsm_hooks h;
    int steps;

    FZ_CHECK(c != NULL, "out of memory");
    m_init(&c->m);
    fz_log_init(&c->log);
    h = fz_log_hooks(&c->log);
    FZ_CHECK(fsm_init(&c->f, &h) == 0, "fsm_init failed");
    c->txn.time = FZ_TIME0;
    compare(c);
    for (steps = 0; steps < MAX_STEPS && fz_left(&in) > 0; steps++) {
        /* Stop before the model could overflow its arrays. */
        if (c->m.n + 8 >= MAX_NODES)
            break;
        step(c, &in);
    }
    fsm_close(c->f);
    fz_log_free(&c->log);
    tb_wbuf_free(&c->body);
    tb_wbuf_free(&c->entry);
    free(c);
    return 0;
}
