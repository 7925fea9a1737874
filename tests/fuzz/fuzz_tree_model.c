/* Fuzz target: a stateful differential test of the fsm and its tree
 * against a naive model written from the protocol document alone: an
 * array of nodes (path, data, version, child-creation counter, children,
 * owner, zxids, times) and a list of sessions, searched linearly.
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

#define MAX_STEPS 64
#define MAX_NODES 400
#define MPATH     160

enum m_kind { K_PERSISTENT, K_EPHEMERAL, K_CONTAINER, K_TTL };

struct mnode {
    char path[MPATH];
    size_t plen;
    uint8_t data[64];
    size_t dlen;
    int dnull;
    int32_t version, aversion, ccount, nkids;
    int readonly;  /* ACL world:anyone READ (only /zookeeper/config) */
    int64_t owner; /* session id (ephemeral), ttl (TTL), else 0 */
    enum m_kind kind;
    int64_t czxid, mzxid, pzxid, ctime, mtime;
};

struct model {
    struct mnode v[MAX_NODES];
    size_t n;
    int64_t sess[64];
    size_t nsess;
};

/* One request as the script describes it. */
struct mreq {
    int32_t type; /* opcode */
    char path[MPATH + 16];
    size_t plen;
    int has_path; /* 0: null path */
    struct tb_str data;
    int32_t flags, version;
    int64_t ttl;
    int bad_acl;
};

struct ctx {
    struct model m, work;
    struct fsm *f;
    struct fz_log log;
    int64_t zxid, time, session;
    int enforce; /* the txn carries TB_TXN_ENFORCE_QUOTA */
    struct tb_wbuf body, entry;
    char name[MPATH + 16]; /* a create's expected path */
    size_t name_len;
};

static struct mnode *m_find(struct model *m, const char *p, size_t n)
{
    size_t i;

    for (i = 0; i < m->n; i++)
        if (m->v[i].plen == n && memcmp(m->v[i].path, p, n) == 0)
            return &m->v[i];
    return NULL;
}

static struct mnode *m_add(struct model *m, const char *p)
{
    struct mnode *x = &m->v[m->n++];

    memset(x, 0, sizeof *x);
    x->plen = strlen(p);
    memcpy(x->path, p, x->plen);
    return x;
}

static void m_init(struct model *m)
{
    struct mnode *x;

    memset(m, 0, sizeof *m);
    m_add(m, "/")->nkids = 1;
    m_add(m, "/zookeeper")->nkids = 2;
    m_add(m, "/zookeeper/quota");
    x = m_add(m, "/zookeeper/config");
    x->aversion = -1;
    x->readonly = 1;
}

static int m_has_session(const struct model *m, int64_t id)
{
    size_t i;

    for (i = 0; i < m->nsess; i++)
        if (m->sess[i] == id)
            return 1;
    return 0;
}

/* ---- quotas: /zookeeper/quota<P>/zookeeper_limits puts the subtree at P
 * under a quota, .../zookeeper_stats counts it ("count=N,bytes=M") ---- */

#define QROOT "/zookeeper/quota"

/* The last "key=value" pair naming key, pairs split at ',' or ';' and a
 * value ending at '='; -1 when there is none or it is not a number. */
static int64_t m_kv(const struct mnode *x, const char *key)
{
    char s[sizeof x->data + 1], *pair, *save = NULL, *end;
    size_t klen = strlen(key), i;
    int64_t v = -1;

    for (i = 0; i < x->dlen; i++) /* a '\0' is one more character */
        s[i] = x->data[i] != 0 ? (char)x->data[i] : '\x01';
    s[x->dlen] = '\0';
    for (pair = strtok_r(s, ",;", &save); pair != NULL;
         pair = strtok_r(NULL, ",;", &save)) {
        if (strncmp(pair, key, klen) != 0 || pair[klen] != '=')
            continue;
        pair += klen + 1;
        pair[strcspn(pair, "=")] = '\0';
        v = strtoll(pair, &end, 10);
        if (*pair == '\0' || *end != '\0')
            v = -1;
    }
    return v;
}

static struct mnode *m_qnode(struct model *m, const char *p, size_t n,
                             const char *leaf)
{
    char buf[MPATH + 48];
    int k = snprintf(buf, sizeof buf, QROOT "%.*s/%s", (int)n, p, leaf);

    return k < (int)sizeof buf ? m_find(m, buf, (size_t)k) : NULL;
}

/* The stats node of the quota over p: the deepest prefix of p but "/"
 * that has limits; none if that one has no stats. */
static struct mnode *m_quota(struct model *m, const char *p, size_t n,
                             struct mnode **limits)
{
    size_t i;

    for (i = n; i > 1; i--)
        if ((i == n || p[i] == '/') &&
            (*limits = m_qnode(m, p, i, "zookeeper_limits")) != NULL)
            return m_qnode(m, p, i, "zookeeper_stats");
    return NULL;
}

static void m_put_stats(struct mnode *st, int64_t count, int64_t bytes)
{
    int k = snprintf((char *)st->data, sizeof st->data, "count=%lld,bytes=%lld",
                     (long long)count, (long long)bytes);

    st->dlen = (size_t)k;
    st->dnull = 0;
}

/* A write of x changes its quota's stats (never a stats node's own). */
static void m_quota_add(struct model *m, const struct mnode *x, int64_t count,
                        int64_t bytes)
{
    struct mnode *lim, *st = m_quota(m, x->path, x->plen, &lim);

    if (st != NULL && st != x)
        m_put_stats(st, m_kv(st, "count") + count, m_kv(st, "bytes") + bytes);
}

/* Whether a write at p would take its quota past a hard limit. */
static int m_quota_over(struct model *m, const char *p, size_t n, int64_t count,
                        int64_t bytes)
{
    struct mnode *lim, *st = m_quota(m, p, n, &lim);
    int64_t hc, hb;

    if (st == NULL)
        return 0;
    hc = m_kv(lim, "countHardLimit");
    hb = m_kv(lim, "byteHardLimit");
    return (count != 0 && hc >= 0 && m_kv(st, "count") + count > hc) ||
           (bytes != 0 && hb >= 0 && m_kv(st, "bytes") + bytes > hb);
}

/* A new stats node counts its subtree afresh; it then counts as any new
 * node, with the data its creator gave. */
static void m_quota_created(struct model *m, struct mnode *x)
{
    const size_t qlen = sizeof QROOT - 1, leaf = sizeof "/zookeeper_stats" - 1;
    int64_t count = 0, bytes = 0, created = (int64_t)x->dlen;
    const char *p = x->path + qlen;
    size_t n, i;

    if (x->plen > qlen + leaf + 1 &&
        memcmp(x->path, QROOT "/", qlen + 1) == 0 &&
        strcmp(x->path + x->plen - leaf, "/zookeeper_stats") == 0) {
        n = x->plen - qlen - leaf;
        for (i = 0; i < m->n; i++)
            if (m->v[i].plen >= n && memcmp(m->v[i].path, p, n) == 0 &&
                (m->v[i].plen == n || m->v[i].path[n] == '/')) {
                count++;
                bytes += (int64_t)m->v[i].dlen;
            }
        m_put_stats(x, count, bytes);
    }
    m_quota_add(m, x, 1, created);
}

/* PathUtils.validatePath for the ASCII paths the script builds. */
static int m_valid(const char *p, size_t n)
{
    size_t i, start = 1;

    if (n == 0 || p[0] != '/')
        return 0;
    if (n == 1)
        return 1;
    if (p[n - 1] == '/')
        return 0;
    for (i = 1; i <= n; i++) {
        if (i < n && (p[i] < 0x20 || p[i] == 0x7f))
            return 0;
        if (i == n || p[i] == '/') {
            size_t len = i - start;
            if (len == 0 || (len == 1 && p[start] == '.') ||
                (len == 2 && p[start] == '.' && p[start + 1] == '.'))
                return 0;
            start = i + 1;
        }
    }
    return 1;
}

/* The parent as ZooKeeper cuts it: before the last '/', "" = root; -1 if
 * there is no '/'. */
static long m_last_slash(const struct mreq *q)
{
    size_t i = q->plen;

    if (!q->has_path)
        return -1;
    while (i > 0)
        if (q->path[--i] == '/')
            return (long)i;
    return -1;
}

static struct mnode *m_parent(struct model *m, const struct mreq *q)
{
    long i = m_last_slash(q);

    if (i < 0)
        return NULL;
    return i == 0 ? &m->v[0] : m_find(m, q->path, (size_t)i);
}

static int m_cheap_ok(const struct mreq *q)
{
    return m_last_slash(q) >= 0 && memchr(q->path, '\0', q->plen) == NULL;
}

static int m_special(const struct mreq *q)
{
    static const char *const s[] = {"/", "/zookeeper", "/zookeeper/quota",
                                    "/zookeeper/config"};
    size_t i;

    for (i = 0; i < 4; i++)
        if (q->has_path && q->plen == strlen(s[i]) &&
            memcmp(q->path, s[i], q->plen) == 0)
            return 1;
    return 0;
}

static int32_t wrap_inc(int32_t v)
{
    return (int32_t)((uint32_t)v + 1);
}

static int m_mode_ok(int32_t type, int32_t flags, int64_t ttl)
{
    int is_ttl = flags == 5 || flags == 6, is_cont = flags == 4;

    if (flags < 0 || flags > 6)
        return 0;
    if (type == TB_OP_CREATECONTAINER && !is_cont)
        return 0;
    if (type == TB_OP_CREATETTL && !is_ttl)
        return 0;
    if ((type == TB_OP_CREATE || type == TB_OP_CREATE2) && (is_ttl || is_cont))
        return 0;
    return is_ttl ? ttl >= 1 && ttl <= TREE_TTL_MAX : ttl < 0;
}

static void m_remove(struct model *m, struct mnode *x, int64_t zxid)
{
    struct mreq q;
    struct mnode *p;

    memcpy(q.path, x->path, x->plen);
    q.plen = x->plen;
    q.has_path = 1;
    p = m_parent(m, &q);
    m_quota_add(m, x, -1, -(int64_t)x->dlen);
    p->nkids--;
    if (zxid > p->pzxid)
        p->pzxid = zxid;
    *x = m->v[--m->n];
}

/* The model's create; fills c->name with the path it creates. */
static int m_create(struct ctx *c, struct model *m, const struct mreq *q)
{
    struct mnode *p, *x;
    char num[16];
    int k;

    if (!m_mode_ok(q->type, q->flags, q->ttl))
        return TB_EBADARGUMENTS;
    if (!m_has_session(m, c->session))
        return TB_ESESSIONEXPIRED;
    if (!m_cheap_ok(q))
        return TB_EBADARGUMENTS;
    if (q->bad_acl)
        return TB_EINVALIDACL;
    if ((p = m_parent(m, q)) == NULL)
        return TB_ENONODE;
    if (p->readonly)
        return TB_ENOAUTH;
    memcpy(c->name, q->path, q->plen);
    c->name_len = q->plen;
    if (q->flags == 2 || q->flags == 3 || q->flags == 6) {
        k = snprintf(num, sizeof num, "%010d", p->ccount);
        memcpy(c->name + c->name_len, num, (size_t)k);
        c->name_len += (size_t)k;
    }
    if (!m_valid(c->name, c->name_len))
        return TB_EBADARGUMENTS;
    if (m_find(m, c->name, c->name_len))
        return TB_ENODEEXISTS;
    if (p->kind == K_EPHEMERAL)
        return TB_ENOCHILDRENFOREPHEMERALS;
    if (c->enforce &&
        m_quota_over(m, c->name, c->name_len, 1, (int64_t)q->data.len))
        return TB_EQUOTAEXCEEDED;
    FZ_CHECK(m->n < MAX_NODES && c->name_len < MPATH, "model full");
    x = &m->v[m->n++];
    memset(x, 0, sizeof *x);
    memcpy(x->path, c->name, c->name_len);
    x->plen = c->name_len;
    x->dnull = q->data.ptr == NULL;
    x->dlen = q->data.len;
    if (x->dlen)
        memcpy(x->data, q->data.ptr, x->dlen);
    x->kind = q->flags == 1 || q->flags == 3 ? K_EPHEMERAL
              : q->flags == 4                ? K_CONTAINER
              : q->flags >= 5                ? K_TTL
                                             : K_PERSISTENT;
    x->owner = x->kind == K_EPHEMERAL ? c->session
               : x->kind == K_TTL     ? q->ttl
                                      : 0;
    x->czxid = x->mzxid = x->pzxid = c->zxid;
    x->ctime = x->mtime = c->time;
    p->ccount = wrap_inc(p->ccount);
    p->nkids++;
    p->pzxid = c->zxid;
    m_quota_created(m, x);
    return 0;
}

static int m_delete(struct ctx *c, struct model *m, const struct mreq *q)
{
    struct mnode *x;

    if (!m_has_session(m, c->session))
        return TB_ESESSIONEXPIRED;
    if (!m_cheap_ok(q) || m_special(q))
        return TB_EBADARGUMENTS;
    if ((x = m_parent(m, q)) == NULL)
        return TB_ENONODE;
    if (x->readonly)
        return TB_ENOAUTH;
    if ((x = m_find(m, q->path, q->plen)) == NULL)
        return TB_ENONODE;
    if (q->version != -1 && q->version != x->version)
        return TB_EBADVERSION;
    if (x->nkids > 0)
        return TB_ENOTEMPTY;
    m_remove(m, x, c->zxid);
    return 0;
}

/* setData (set = 1) or check (set = 0). */
static int m_set(struct ctx *c, struct model *m, const struct mreq *q, int set)
{
    struct mnode *x;
    int64_t grown;

    if (!m_has_session(m, c->session))
        return TB_ESESSIONEXPIRED;
    if (!q->has_path || !m_valid(q->path, q->plen))
        return TB_EBADARGUMENTS;
    if ((x = m_find(m, q->path, q->plen)) == NULL)
        return TB_ENONODE;
    grown = (int64_t)q->data.len - (int64_t)x->dlen;
    if (set && x->readonly)
        return TB_ENOAUTH;
    if (set && c->enforce && m_quota_over(m, q->path, q->plen, 0, grown))
        return TB_EQUOTAEXCEEDED;
    if (q->version != -1 && q->version != x->version)
        return TB_EBADVERSION;
    if (!set)
        return 0;
    m_quota_add(m, x, 0, grown);
    x->version = wrap_inc(x->version);
    x->dnull = q->data.ptr == NULL;
    x->dlen = q->data.len;
    if (x->dlen)
        memcpy(x->data, q->data.ptr, x->dlen);
    x->mzxid = c->zxid;
    x->mtime = c->time;
    return 0;
}

static int m_delete_container(struct ctx *c, struct model *m,
                              const struct mreq *q)
{
    struct mnode *x;
    int due;

    if (!m_cheap_ok(q) || m_special(q))
        return TB_EBADARGUMENTS;
    if ((x = m_find(m, q->path, q->plen)) == NULL)
        return TB_ENONODE;
    if (x->nkids > 0)
        return TB_ENOTEMPTY;
    if (x->kind != K_CONTAINER && x->kind != K_TTL)
        return TB_EBADVERSION;
    due =
        x->kind == K_CONTAINER ? x->ccount > 0 : c->time - x->mtime > x->owner;
    if (!due)
        return TB_ENOTEMPTY;
    m_remove(m, x, c->zxid);
    return 0;
}

static int m_close(struct ctx *c, struct model *m)
{
    size_t i;

    if (!m_has_session(m, c->session))
        return TB_ESESSIONEXPIRED;
    for (i = 0; i < m->n;) {
        if (m->v[i].kind == K_EPHEMERAL && m->v[i].owner == c->session)
            m_remove(m, &m->v[i], c->zxid);
        else
            i++;
    }
    for (i = 0; m->sess[i] != c->session; i++)
        ;
    m->sess[i] = m->sess[--m->nsess];
    return 0;
}

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
        FZ_CHECK(pr.path.len == c->name_len &&
                     memcmp(pr.path.ptr, c->name, c->name_len) == 0,
                 "created %.*s, model %.*s", (int)pr.path.len, pr.path.ptr,
                 (int)c->name_len, c->name);
        break;
    case TB_OP_CREATE2:
        FZ_CHECK(tb_create2_resp_decode(r, &cr) == 0, "create2 result cut");
        FZ_CHECK(cr.path.len == c->name_len &&
                     memcmp(cr.path.ptr, c->name, c->name_len) == 0,
                 "created %.*s, model %.*s", (int)cr.path.len, cr.path.ptr,
                 (int)c->name_len, c->name);
        x = m_find(&c->work, c->name, c->name_len);
        FZ_CHECK(x != NULL, "model lost its node");
        expect_stat(x, &cr.stat, "create2 result");
        break;
    case TB_OP_SETDATA:
        FZ_CHECK(tb_stat_resp_decode(r, &sr) == 0, "setData result cut");
        x = m_find(&c->work, c->name, c->name_len);
        FZ_CHECK(x != NULL, "model lost its node");
        expect_stat(x, &sr.stat, "setData result");
        break;
    }
}

static int m_apply(struct ctx *c, struct model *m, const struct mreq *q)
{
    switch (q->type) {
    case TB_OP_CREATE:
    case TB_OP_CREATE2:
    case TB_OP_CREATECONTAINER:
    case TB_OP_CREATETTL:
        return m_create(c, m, q);
    case TB_OP_DELETE:
        return m_delete(c, m, q);
    case TB_OP_SETDATA:
        memcpy(c->name, q->path, q->plen);
        c->name_len = q->plen;
        return m_set(c, m, q, 1);
    case TB_OP_CHECK:
        return m_set(c, m, q, 0);
    default:
        return m_delete_container(c, m, q);
    }
}

/* Sends the txn in c->body as transaction c->zxid (which the caller
 * advanced before the model computed its expectations) and returns the
 * result code. */
static int submit(struct ctx *c, int32_t type)
{
    static int trace = -1;
    struct fz_txn t = {type, c->session, c->time, 0, {0, NULL, 0}, c->body, 0};

    t.flags = c->enforce ? TB_TXN_ENFORCE_QUOTA : 0;
    fz_txn_entry(&t, &c->entry);
    fz_log_reset(&c->log);
    FZ_CHECK(fsm_apply(c->f, c->zxid, c->entry.base, c->entry.len) == 0,
             "fsm_apply failed");
    FZ_CHECK(c->log.results == 1 && c->log.zxid == c->zxid, "%d results",
             c->log.results);
    if (trace < 0)
        trace = getenv("FUZZ_TRACE") != NULL;
    if (trace)
        fprintf(stderr,
                "zxid %lld: type %d session %llx -> rc %d, %zu body "
                "bytes, %d events\n",
                (long long)c->zxid, type, (unsigned long long)c->session,
                c->log.rc, c->log.body.len, c->log.events);
    return c->log.rc;
}

static void single(struct ctx *c, const struct mreq *q)
{
    struct tb_rd r;
    int want, got;

    c->zxid++;
    c->work = c->m;
    want = m_apply(c, &c->work, q);
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

    c->zxid++;
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
        want = m_apply(c, &c->work, &q[i]);
        if (want != 0) {
            failed = (int)i;
            code = want;
            break;
        }
        memcpy(ex[i].name, c->name, c->name_len);
        ex[i].len = c->name_len;
        x = m_find(&c->work, c->name, c->name_len);
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
    c->enforce = (b >> 3 & 3) != 0;
    switch (b % 8) {
    case 6:
        c->session = 0;
        break;
    case 7:
        c->session = (int64_t)((1ULL << 56) | 0xfffff);
        break;
    default:
        c->session = c->m.nsess ? c->m.sess[(b % 8) % c->m.nsess] : 0;
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
    c->time += 1;
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
        c->zxid++;
        c->body.len = 0;
        tb_create_session_txn_encode(&c->body,
                                     &(struct tb_create_session_txn){
                                         3000, {(const char *)pw, sizeof pw}});
        FZ_CHECK(submit(c, TB_OP_CREATESESSION) == 0, "createSession rc %d",
                 c->log.rc);
        FZ_CHECK(c->m.nsess < 64, "too many sessions");
        c->m.sess[c->m.nsess++] = fsm_session_id_for(c->zxid);
        FZ_CHECK(fsm_session_id_for(c->zxid) ==
                     (int64_t)((1ULL << 56) | (uint64_t)c->zxid),
                 "session id");
        break;
    }
    case FZ_M_CLOSE: {
        int want;
        c->zxid++;
        c->work = c->m;
        want = m_close(c, &c->work);
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
        c->time += 10 * (int64_t)fz_u16(in);
        break;
    case FZ_M_QUOTA:
        if (!m_has_session(&c->m, c->session) && c->m.nsess > 0)
            c->session = c->m.sess[0];
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
    c->time = FZ_TIME0;
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
