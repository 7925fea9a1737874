/* The naive tree model of tree_model.h.  Lookups are linear searches of
 * the node array; each op makes all its checks, in ZooKeeper's order,
 * before it changes anything; quota stats live as text in the stats nodes'
 * data, as on ZooKeeper, and are parsed and rewritten on every change. */
#include "tree_model.h"

#include "tree/tree.h"

struct mnode *m_find(struct model *m, const char *p, size_t n)
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

void m_init(struct model *m)
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

int m_has_session(const struct model *m, int64_t id)
{
    size_t i;

    for (i = 0; i < m->nsess; i++)
        if (m->sess[i] == id)
            return 1;
    return 0;
}

/* ---- quotas ---- */

int64_t m_kv(const struct mnode *x, const char *key)
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

/* The model's create; fills name with the path it creates. */
static int m_create(struct model *m, const struct m_txn *t,
                    const struct mreq *q, struct m_name *name)
{
    struct mnode *p, *x;
    char num[16];
    int k;

    if (!m_mode_ok(q->type, q->flags, q->ttl))
        return TB_EBADARGUMENTS;
    if (!m_has_session(m, t->session))
        return TB_ESESSIONEXPIRED;
    if (!m_cheap_ok(q))
        return TB_EBADARGUMENTS;
    if (q->bad_acl)
        return TB_EINVALIDACL;
    if ((p = m_parent(m, q)) == NULL)
        return TB_ENONODE;
    if (p->readonly)
        return TB_ENOAUTH;
    memcpy(name->path, q->path, q->plen);
    name->len = q->plen;
    if (q->flags == 2 || q->flags == 3 || q->flags == 6) {
        k = snprintf(num, sizeof num, "%010d", p->ccount);
        memcpy(name->path + name->len, num, (size_t)k);
        name->len += (size_t)k;
    }
    if (!m_valid(name->path, name->len))
        return TB_EBADARGUMENTS;
    if (m_find(m, name->path, name->len))
        return TB_ENODEEXISTS;
    if (p->kind == K_EPHEMERAL)
        return TB_ENOCHILDRENFOREPHEMERALS;
    if (t->enforce &&
        m_quota_over(m, name->path, name->len, 1, (int64_t)q->data.len))
        return TB_EQUOTAEXCEEDED;
    FZ_CHECK(m->n < MAX_NODES && name->len < MPATH, "model full");
    x = &m->v[m->n++];
    memset(x, 0, sizeof *x);
    memcpy(x->path, name->path, name->len);
    x->plen = name->len;
    x->dnull = q->data.ptr == NULL;
    x->dlen = q->data.len;
    if (x->dlen)
        memcpy(x->data, q->data.ptr, x->dlen);
    x->kind = q->flags == 1 || q->flags == 3 ? K_EPHEMERAL
              : q->flags == 4                ? K_CONTAINER
              : q->flags >= 5                ? K_TTL
                                             : K_PERSISTENT;
    x->owner = x->kind == K_EPHEMERAL ? t->session
               : x->kind == K_TTL     ? q->ttl
                                      : 0;
    x->czxid = x->mzxid = x->pzxid = t->zxid;
    x->ctime = x->mtime = t->time;
    p->ccount = wrap_inc(p->ccount);
    p->nkids++;
    p->pzxid = t->zxid;
    m_quota_created(m, x);
    return 0;
}

static int m_delete(struct model *m, const struct m_txn *t,
                    const struct mreq *q)
{
    struct mnode *x;

    if (!m_has_session(m, t->session))
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
    m_remove(m, x, t->zxid);
    return 0;
}

/* setData (set = 1) or check (set = 0). */
static int m_set(struct model *m, const struct m_txn *t, const struct mreq *q,
                 int set)
{
    struct mnode *x;
    int64_t grown;

    if (!m_has_session(m, t->session))
        return TB_ESESSIONEXPIRED;
    if (!q->has_path || !m_valid(q->path, q->plen))
        return TB_EBADARGUMENTS;
    if ((x = m_find(m, q->path, q->plen)) == NULL)
        return TB_ENONODE;
    grown = (int64_t)q->data.len - (int64_t)x->dlen;
    if (set && x->readonly)
        return TB_ENOAUTH;
    if (set && t->enforce && m_quota_over(m, q->path, q->plen, 0, grown))
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
    x->mzxid = t->zxid;
    x->mtime = t->time;
    return 0;
}

static int m_delete_container(struct model *m, const struct m_txn *t,
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
    /* A container that ever had a child: its counter, wrapped past
     * INT32_MAX, may be negative. */
    due =
        x->kind == K_CONTAINER ? x->ccount != 0 : t->time - x->mtime > x->owner;
    if (!due)
        return TB_ENOTEMPTY;
    m_remove(m, x, t->zxid);
    return 0;
}

int m_close(struct model *m, const struct m_txn *t)
{
    size_t i;

    if (!m_has_session(m, t->session))
        return TB_ESESSIONEXPIRED;
    for (i = 0; i < m->n;) {
        if (m->v[i].kind == K_EPHEMERAL && m->v[i].owner == t->session)
            m_remove(m, &m->v[i], t->zxid);
        else
            i++;
    }
    for (i = 0; m->sess[i] != t->session; i++)
        ;
    m->sess[i] = m->sess[--m->nsess];
    return 0;
}

int m_apply(struct model *m, const struct m_txn *t, const struct mreq *q,
            struct m_name *name)
{
    switch (q->type) {
    case TB_OP_CREATE:
    case TB_OP_CREATE2:
    case TB_OP_CREATECONTAINER:
    case TB_OP_CREATETTL:
        return m_create(m, t, q, name);
    case TB_OP_DELETE:
        return m_delete(m, t, q);
    case TB_OP_SETDATA:
        memcpy(name->path, q->path, q->plen);
        name->len = q->plen;
        return m_set(m, t, q, 1);
    case TB_OP_CHECK:
        return m_set(m, t, q, 0);
    default:
        return m_delete_container(m, t, q);
    }
}
