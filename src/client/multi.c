/* multi and multiRead: the builder, the request, and the reply, which
 * reports a failed multi through its results rather than its header
 * (wire doc 6.11): every result is an error then, the first that is
 * neither 0 (rolled back) nor -2 (not executed) being the cause. */
#include "client/client.h"

struct mop {
    int32_t type; /* opcode of the sub-operation */
    char *path;
    char *value;  /* NULL: null data */
    size_t len;
    struct tb_wbuf acl;
    int32_t acl_n;
    int32_t flags, version;
    int64_t ttl;
};

struct tb_multi {
    struct mop *ops;
    int n, cap;
    int reads; /* -1 unknown, 0 writes, 1 reads */
};

struct tb_multi *tb_multi_new(void)
{
    struct tb_multi *m = tb__calloc(1, sizeof *m);

    if (m != NULL)
        m->reads = -1;
    return m;
}

static void mop_free(struct mop *o)
{
    tb__free(o->path);
    tb__free(o->value);
    tb_wbuf_free(&o->acl);
}

void tb_multi_free(struct tb_multi *m)
{
    int i;

    if (m == NULL)
        return;
    for (i = 0; i < m->n; i++)
        mop_free(&m->ops[i]);
    tb__free(m->ops);
    tb__free(m);
}

int tb_multi_count(const struct tb_multi *m)
{
    return m->n;
}

/* A new op slot after the kind check, or NULL with *rv set. */
static struct mop *add(struct tb_multi *m, int32_t type, int read,
                       const char *path, int *rv)
{
    struct mop *o;

    *rv = TB_EBADARGUMENTS;
    if (m == NULL || path == NULL || (m->reads >= 0 && m->reads != read))
        return NULL;
    if (m->n == m->cap) {
        int cap = m->cap ? m->cap * 2 : 8;
        struct mop *p = tb__calloc((size_t)cap, sizeof *p);
        *rv = TB_ENOMEM;
        if (p == NULL)
            return NULL;
        if (m->n)
            memcpy(p, m->ops, (size_t)m->n * sizeof *p);
        tb__free(m->ops);
        m->ops = p;
        m->cap = cap;
    }
    o = &m->ops[m->n];
    memset(o, 0, sizeof *o);
    tb_wbuf_init(&o->acl);
    o->type = type;
    o->path = tb__strndup(path, strlen(path));
    *rv = TB_ENOMEM;
    if (o->path == NULL)
        return NULL;
    *rv = 0;
    return o;
}

static int commit(struct tb_multi *m, struct mop *o, int read, int rv)
{
    if (rv != 0) {
        mop_free(o);
        return rv;
    }
    m->reads = read;
    m->n++;
    return 0;
}

static int set_value(struct mop *o, const void *value, size_t len)
{
    if (value == NULL)
        return len == 0 ? 0 : TB_EBADARGUMENTS;
    o->value = tb__strndup(value, len);
    o->len = len;
    return o->value ? 0 : TB_ENOMEM;
}

int tb_multi_create(struct tb_multi *m, const char *path, const void *value,
                    size_t len, const struct tb_acl_list *acl, int mode,
                    int64_t ttl_ms)
{
    int op = tb__create_opcode(mode, ttl_ms), rv;
    struct tb_vec v;
    struct mop *o;

    if (op < 0)
        return op;
    if ((o = add(m, op, 0, path, &rv)) == NULL)
        return rv;
    o->flags = mode;
    o->ttl = op == TB_OP_CREATETTL ? ttl_ms : -1;
    if ((rv = set_value(o, value, len)) == 0 &&
        (rv = tb__encode_acl(&o->acl, acl, &v)) == 0) {
        if (acl == NULL) /* a constant vector: copy its bytes */
            tb_wbuf_put(&o->acl, v.raw, v.len);
        o->acl_n = v.n;
        rv = o->acl.oom ? TB_ENOMEM : 0;
    }
    return commit(m, o, 0, rv);
}

int tb_multi_delete(struct tb_multi *m, const char *path, int32_t version)
{
    int rv;
    struct mop *o = add(m, TB_OP_DELETE, 0, path, &rv);

    if (o == NULL)
        return rv;
    o->version = version;
    return commit(m, o, 0, 0);
}

int tb_multi_set_data(struct tb_multi *m, const char *path, const void *value,
                      size_t len, int32_t version)
{
    int rv;
    struct mop *o = add(m, TB_OP_SETDATA, 0, path, &rv);

    if (o == NULL)
        return rv;
    o->version = version;
    return commit(m, o, 0, set_value(o, value, len));
}

int tb_multi_check(struct tb_multi *m, const char *path, int32_t version)
{
    int rv;
    struct mop *o = add(m, TB_OP_CHECK, 0, path, &rv);

    if (o == NULL)
        return rv;
    o->version = version;
    return commit(m, o, 0, 0);
}

int tb_multi_get_data(struct tb_multi *m, const char *path)
{
    int rv;
    struct mop *o = add(m, TB_OP_GETDATA, 1, path, &rv);

    return o == NULL ? rv : commit(m, o, 1, 0);
}

int tb_multi_get_children(struct tb_multi *m, const char *path)
{
    int rv;
    struct mop *o = add(m, TB_OP_GETCHILDREN, 1, path, &rv);

    return o == NULL ? rv : commit(m, o, 1, 0);
}

static int encode_op(struct tb_client *c, struct tb_wbuf *w,
                     const struct mop *o, struct tb_wbuf *scratch)
{
    struct tb_multi_op mo;
    struct tb_str p;
    int seq = o->flags == TB_PERSISTENT_SEQUENTIAL ||
              o->flags == TB_EPHEMERAL_SEQUENTIAL ||
              o->flags == TB_PERSISTENT_SEQUENTIAL_WITH_TTL;
    int rv;

    scratch->len = 0;
    rv = tb__path_server(c, o->path, o->type == TB_OP_CREATE2 ||
                                             o->type == TB_OP_CREATETTL
                                         ? seq
                                         : 0,
                         scratch, &p);
    if (rv != 0)
        return rv;
    memset(&mo, 0, sizeof mo);
    mo.type = o->type;
    switch (o->type) {
    case TB_OP_CREATE2:
    case TB_OP_CREATECONTAINER:
    case TB_OP_CREATETTL:
        mo.u.create = (struct tb_create_ttl_req){
            p, {o->value, o->len}, tb_vec_view(&o->acl, o->acl_n), o->flags,
            o->ttl};
        break;
    case TB_OP_DELETE:
        mo.u.del = (struct tb_delete_req){p, o->version};
        break;
    case TB_OP_SETDATA:
        mo.u.set_data =
            (struct tb_set_data_req){p, {o->value, o->len}, o->version};
        break;
    case TB_OP_CHECK:
        mo.u.check = (struct tb_check_req){p, o->version};
        break;
    default:
        mo.u.read = (struct tb_path_watch_req){p, 0};
    }
    tb_multi_op_encode(w, &mo);
    return 0;
}

int tb_multi_exec(struct tb_client *c, const struct tb_multi *m,
                  tb_multi_cb cb, void *data)
{
    struct tb_wbuf scratch;
    struct req *r;
    int i, rv;

    if (m == NULL)
        return TB_EINVAL;
    tb_wbuf_init(&scratch);
    pthread_mutex_lock(&c->mu);
    if ((rv = tb__submit_check(c)) != 0)
        goto out;
    r = tb__req_new(c, m->reads == 1 ? TB_OP_MULTIREAD : TB_OP_MULTI,
                    R_MULTI);
    if (r == NULL) {
        rv = TB_ENOMEM;
        goto out;
    }
    tb__req_begin(c, r);
    for (i = 0; i < m->n && rv == 0; i++)
        rv = encode_op(c, &r->fw, &m->ops[i], &scratch);
    tb_multi_end_encode(&r->fw);
    if (rv != 0) {
        tb__req_free(r);
        goto out;
    }
    r->nops = m->n;
    r->cb.multi = cb;
    r->data = data;
    if ((rv = tb__req_submit(c, r)) == 0)
        tb__changed(c);
out:
    pthread_mutex_unlock(&c->mu);
    tb_wbuf_free(&scratch);
    return rv;
}

/* ---- the reply ---- */

struct mres {
    struct tb_op_result *v;
    struct tb_stat *stats;
    struct tb_strings *kids;
    struct tb_str *paths; /* NUL-terminated once everything is decoded */
    struct tb_vec *vecs;  /* children lists, likewise */
    int n;
};

static int decode_one(struct tb_rd *rd,
                      const struct tb_multi_header *h, struct mres *m)
{
    struct tb_op_result *o = &m->v[m->n];
    int rv = 0;

    memset(o, 0, sizeof *o);
    o->op = h->type;
    switch (h->type) {
    case TB_OP_CREATE: {
        struct tb_path_resp pr;
        rv = tb_path_resp_decode(rd, &pr);
        m->paths[m->n] = pr.path;
        break;
    }
    case TB_OP_CREATE2: {
        struct tb_create2_resp cr;
        rv = tb_create2_resp_decode(rd, &cr);
        m->paths[m->n] = cr.path;
        m->stats[m->n] = cr.stat;
        o->stat = &m->stats[m->n];
        break;
    }
    case TB_OP_SETDATA:
        rv = tb_get_STAT(rd, &m->stats[m->n]);
        o->stat = &m->stats[m->n];
        break;
    case TB_OP_GETDATA: {
        struct tb_get_data_resp dr;
        rv = tb_get_data_resp_decode(rd, &dr);
        o->value = dr.data.ptr;
        o->len = dr.data.len;
        m->stats[m->n] = dr.stat;
        o->stat = &m->stats[m->n];
        break;
    }
    case TB_OP_GETCHILDREN: {
        struct tb_children_resp cr;
        rv = tb_children_resp_decode(rd, &cr);
        m->vecs[m->n] = cr.children;
        o->children = &m->kids[m->n];
        break;
    }
    case TB_OP_ERROR: {
        struct tb_error_resp er;
        rv = tb_error_resp_decode(rd, &er);
        o->rc = er.err;
        break;
    }
    default: /* delete, check: no body */
        break;
    }
    m->n++;
    return rv;
}

void tb__multi_fire(struct tb_client *c, struct req *r, struct tb_rd *rd)
{
    struct mres m;
    struct tb_multi_header h;
    size_t cap = (size_t)r->nops + 1;
    int rc = r->rc, i;

    memset(&m, 0, sizeof m);
    if (rc == 0) {
        m.v = tb__calloc(cap, sizeof *m.v);
        m.stats = tb__calloc(cap, sizeof *m.stats);
        m.kids = tb__calloc(cap, sizeof *m.kids);
        m.paths = tb__calloc(cap, sizeof *m.paths);
        m.vecs = tb__calloc(cap, sizeof *m.vecs);
        if (!m.v || !m.stats || !m.kids || !m.paths || !m.vecs)
            rc = TB_ENOMEM;
    }
    while (rc == 0) {
        if ((rc = tb_multi_header_decode(rd, &h)) != 0 || h.done)
            break;
        if ((size_t)m.n >= cap - 1) {
            rc = TB_EMARSHALLING;
            break;
        }
        rc = decode_one(rd, &h, &m);
    }
    /* Strings are terminated in place only now: a NUL written earlier
     * would have overwritten the next record's first byte. */
    for (i = 0; rc == 0 && i < m.n; i++) {
        size_t n;
        if (m.v[i].children != NULL)
            rc = tb__decode_strings(m.vecs[i], c, 0, &m.kids[i]);
        if (m.paths[i].ptr != NULL) {
            char *p = (char *)m.paths[i].ptr;
            p[m.paths[i].len] = '\0';
            m.v[i].path = tb__path_strip(c, p, m.paths[i].len, &n);
        }
    }
    if (rc == 0 && r->op == TB_OP_MULTI)
        for (i = 0; i < m.n; i++)
            if (m.v[i].rc != 0 && m.v[i].rc != TB_ERUNTIMEINCONSISTENCY) {
                rc = m.v[i].rc;
                break;
            }
    if (rc == 0 || (r->op == TB_OP_MULTI && m.n > 0 && r->rc == 0 &&
                    rc != TB_EMARSHALLING && rc != TB_ENOMEM))
        r->cb.multi(c, rc, m.v, m.n, r->data);
    else
        r->cb.multi(c, rc, NULL, 0, r->data);
    for (i = 0; m.kids != NULL && i < m.n; i++)
        tb__free(m.kids[i].v);
    tb__free(m.v);
    tb__free(m.stats);
    tb__free(m.kids);
    tb__free(m.paths);
    tb__free(m.vecs);
}
