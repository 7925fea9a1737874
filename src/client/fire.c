/* The done queue: every user callback runs from here, in the order its
 * cause arrived, with the handle's lock released.
 *
 * Replies are decoded only now, from the request's private copy of the
 * body.  Strings handed to callbacks are NUL-terminated in place: once a
 * record is fully decoded, the byte after each string (the next length
 * prefix, a decoded Stat, or the copy's spare byte) is no longer needed.
 * None is null there: tb__reply_check refused a reply with a null string
 * where a name must be (only data may be null). */
#include "client/client.h"

void tb__push_done(struct tb_client *c, struct item *it)
{
    tb_queue_insert_tail(&c->doneq, &it->q);
}

void tb__push_state(struct tb_client *c, int state)
{
    struct state_item *s;

    if (c->o.state_cb == NULL)
        return;
    s = tb__malloc(sizeof *s);
    if (s == NULL) {
        tb__log(c, TB_LOG_ERROR, "out of memory: state %s not reported",
                tb_session_state_name(state));
        return;
    }
    s->it.kind = ITEM_STATE;
    s->state = state;
    tb__push_done(c, &s->it);
}

static char *nul_at(struct tb_str s)
{
    char *p = (char *)s.ptr;

    p[s.len] = '\0';
    return p;
}

/* The strings of `v` (server paths if `strip`), chroot-relative, entries
 * outside the chroot dropped.  out->v is one allocation. */
int tb__decode_strings(struct tb_vec v, struct tb_client *c, int strip,
                       struct tb_strings *out)
{
    struct tb_rd it = tb_vec_reader(v);
    struct tb_str s;
    size_t len;
    int32_t n = 0;
    struct tb_str *views;
    int rv;

    out->count = 0;
    out->v = tb__calloc(v.n > 0 ? (size_t)v.n : 1, sizeof(char *));
    if (out->v == NULL)
        return TB_ENOMEM;
    views = tb__calloc(v.n > 0 ? (size_t)v.n : 1, sizeof *views);
    if (views == NULL) {
        tb__free(out->v);
        out->v = NULL;
        return TB_ENOMEM;
    }
    while ((rv = tb_vec_next_str(&it, &s)) == 1 && n < v.n)
        views[n++] = s;
    for (int32_t i = 0; i < n; i++) {
        char *p = nul_at(views[i]);
        if (strip) {
            const char *q = tb__path_strip(c, p, views[i].len, &len);
            if (q == p && c->chroot != NULL)
                continue; /* outside the chroot */
            p = (char *)q;
        }
        out->v[out->count++] = p;
    }
    tb__free(views);
    return rv < 0 ? TB_EMARSHALLING : 0;
}

static void fire_strings(struct tb_client *c, struct req *r,
                         struct tb_rd *rd)
{
    struct tb_children2_resp cr;
    struct tb_strings sv = {0, NULL};
    const struct tb_stat *stat = NULL;
    int rc = r->rc;

    if (rc == 0) {
        if (r->kind == R_CHILDREN2) {
            rc = tb_children2_resp_decode(rd, &cr);
            stat = &cr.stat;
        } else {
            rc = tb_get_STRS(rd, &cr.children);
        }
        if (rc == 0)
            rc = tb__decode_strings(cr.children, c, r->kind == R_EPHEMERALS,
                                    &sv);
        if (rc != 0)
            stat = NULL;
    }
    r->cb.strings(c, rc, rc == 0 ? &sv : NULL, stat, r->data);
    tb__free(sv.v);
}

static void fire_acl(struct tb_client *c, struct req *r, struct tb_rd *rd)
{
    struct tb_get_acl_resp ar;
    struct tb_acl_list list = {0, NULL};
    struct tb_acl_entry *e = NULL;
    struct tb_str *ids = NULL;
    struct tb_acl a;
    struct tb_rd it;
    int rc = r->rc, i = 0;

    if (rc == 0)
        rc = tb_get_acl_resp_decode(rd, &ar);
    if (rc == 0) {
        e = tb__calloc(ar.acl.n > 0 ? (size_t)ar.acl.n : 1, sizeof *e);
        ids = tb__calloc(ar.acl.n > 0 ? (size_t)ar.acl.n * 2 : 1,
                         sizeof *ids);
        if (e == NULL || ids == NULL)
            rc = TB_ENOMEM;
    }
    if (rc == 0) {
        it = tb_vec_reader(ar.acl);
        while (i < ar.acl.n && tb_vec_next_acl(&it, &a) == 1) {
            e[i].perms = a.perms;
            ids[2 * i] = a.id.scheme;
            ids[2 * i + 1] = a.id.id;
            i++;
        }
        for (int k = 0; k < i; k++) {
            e[k].scheme = nul_at(ids[2 * k]);
            e[k].id = nul_at(ids[2 * k + 1]);
        }
        list.count = i;
        list.v = e;
    }
    r->cb.acl(c, rc, rc == 0 ? &list : NULL, rc == 0 ? &ar.stat : NULL,
              r->data);
    tb__free(e);
    tb__free(ids);
}

static void fire_whoami(struct tb_client *c, struct req *r, struct tb_rd *rd)
{
    struct tb_whoami_resp wr;
    struct tb_client_info *v = NULL;
    struct tb_str *ids = NULL;
    struct tb_id id;
    struct tb_rd it;
    int rc = r->rc, i = 0;

    if (rc == 0)
        rc = tb_whoami_resp_decode(rd, &wr);
    if (rc == 0) {
        v = tb__calloc(wr.clients.n > 0 ? (size_t)wr.clients.n : 1,
                       sizeof *v);
        ids = tb__calloc(wr.clients.n > 0 ? (size_t)wr.clients.n * 2 : 1,
                         sizeof *ids);
        if (v == NULL || ids == NULL)
            rc = TB_ENOMEM;
    }
    if (rc == 0) {
        it = tb_vec_reader(wr.clients);
        while (i < wr.clients.n && tb_vec_next_id(&it, &id) == 1) {
            ids[2 * i] = id.scheme;
            ids[2 * i + 1] = id.id;
            i++;
        }
        for (int k = 0; k < i; k++) {
            v[k].scheme = nul_at(ids[2 * k]);
            v[k].user = nul_at(ids[2 * k + 1]);
        }
    }
    r->cb.whoami(c, rc, rc == 0 ? v : NULL, rc == 0 ? i : 0, r->data);
    tb__free(v);
    tb__free(ids);
}

/* Strings a reply must have: a length of -1 (null, which tb_get_STR
 * accepts, as for getData's data) in one of these makes the reply
 * malformed.  Each returns 0 or TB_EMARSHALLING. */
static int present(struct tb_str s)
{
    return s.ptr != NULL ? 0 : TB_EMARSHALLING;
}

static int strs_present(struct tb_vec v)
{
    struct tb_rd it = tb_vec_reader(v);
    struct tb_str s;
    int rv;

    while ((rv = tb_vec_next_str(&it, &s)) == 1)
        if (s.ptr == NULL)
            return TB_EMARSHALLING;
    return rv < 0 ? TB_EMARSHALLING : 0;
}

static int id_present(const struct tb_id *id)
{
    return present(id->scheme) != 0 ? TB_EMARSHALLING : present(id->id);
}

static int acls_present(struct tb_vec v)
{
    struct tb_rd it = tb_vec_reader(v);
    struct tb_acl a;
    int rv;

    while ((rv = tb_vec_next_acl(&it, &a)) == 1)
        if (id_present(&a.id) != 0)
            return TB_EMARSHALLING;
    return rv < 0 ? TB_EMARSHALLING : 0;
}

static int ids_present(struct tb_vec v)
{
    struct tb_rd it = tb_vec_reader(v);
    struct tb_id id;
    int rv;

    while ((rv = tb_vec_next_id(&it, &id)) == 1)
        if (id_present(&id) != 0)
            return TB_EMARSHALLING;
    return rv < 0 ? TB_EMARSHALLING : 0;
}

static int check_multi(struct tb_rd *rd)
{
    struct tb_multi_header h;
    struct tb_create2_resp cr;
    struct tb_get_data_resp dr;
    struct tb_vec v;
    struct tb_str s;
    struct tb_stat st;
    int32_t e;

    for (;;) {
        if (tb_multi_header_decode(rd, &h) != 0)
            return TB_EMARSHALLING;
        if (h.done)
            return 0;
        switch (h.type) {
        case TB_OP_CREATE:
            if (tb_get_STR(rd, &s) != 0 || present(s) != 0)
                return TB_EMARSHALLING;
            break;
        case TB_OP_CREATE2:
            if (tb_create2_resp_decode(rd, &cr) != 0 || present(cr.path) != 0)
                return TB_EMARSHALLING;
            break;
        case TB_OP_SETDATA:
            if (tb_get_STAT(rd, &st) != 0)
                return TB_EMARSHALLING;
            break;
        case TB_OP_GETDATA: /* null data is data */
            if (tb_get_data_resp_decode(rd, &dr) != 0)
                return TB_EMARSHALLING;
            break;
        case TB_OP_GETCHILDREN:
            if (tb_get_STRS(rd, &v) != 0 || strs_present(v) != 0)
                return TB_EMARSHALLING;
            break;
        case TB_OP_ERROR:
            if (tb_get_I32(rd, &e) != 0)
                return TB_EMARSHALLING;
            break;
        case TB_OP_DELETE:
        case TB_OP_CHECK:
            break;
        default:
            return TB_EMARSHALLING;
        }
    }
}

int tb__reply_check(int kind, const uint8_t *p, size_t n)
{
    struct tb_rd rd = tb_rd_make(p, n);
    union {
        struct tb_stat_resp stat;
        struct tb_create2_resp create;
        struct tb_get_data_resp data;
        struct tb_children2_resp kids;
        struct tb_get_acl_resp acl;
        struct tb_count_resp count;
        struct tb_whoami_resp who;
        struct tb_vec v;
    } u;

    /* Strings handed to callbacks must be present; only data may be
     * null (getData's, getConfig's, reconfig's). */
    switch (kind) {
    case R_STAT:
        return tb_stat_resp_decode(&rd, &u.stat);
    case R_CREATE:
        if (tb_create2_resp_decode(&rd, &u.create) != 0)
            return TB_EMARSHALLING;
        return present(u.create.path);
    case R_DATA:
        return tb_get_data_resp_decode(&rd, &u.data);
    case R_CHILDREN:
    case R_EPHEMERALS:
        if (tb_get_STRS(&rd, &u.v) != 0)
            return TB_EMARSHALLING;
        return strs_present(u.v);
    case R_CHILDREN2:
        if (tb_children2_resp_decode(&rd, &u.kids) != 0)
            return TB_EMARSHALLING;
        return strs_present(u.kids.children);
    case R_ACL:
        if (tb_get_acl_resp_decode(&rd, &u.acl) != 0)
            return TB_EMARSHALLING;
        return acls_present(u.acl.acl);
    case R_COUNT:
        return tb_count_resp_decode(&rd, &u.count);
    case R_WHOAMI:
        if (tb_whoami_resp_decode(&rd, &u.who) != 0)
            return TB_EMARSHALLING;
        return ids_present(u.who.clients);
    case R_MULTI:
        return check_multi(&rd);
    default:
        return 0;
    }
}

void tb__fire_req(struct tb_client *c, struct req *r)
{
    struct tb_rd rd = tb_rd_make(r->body, r->body_len);
    int rc = r->rc;

    if (r->cb.v == NULL)
        return;
    switch (r->kind) {
    case R_VOID:
        r->cb.v(c, rc, r->data);
        break;
    case R_STAT: {
        struct tb_stat_resp sr;
        if (rc == 0)
            rc = tb_stat_resp_decode(&rd, &sr);
        r->cb.stat(c, rc, rc == 0 ? &sr.stat : NULL, r->data);
        break;
    }
    case R_CREATE: {
        struct tb_create2_resp cr;
        const char *p = NULL;
        size_t n;
        if (rc == 0)
            rc = tb_create2_resp_decode(&rd, &cr);
        if (rc == 0)
            p = tb__path_strip(c, nul_at(cr.path), cr.path.len, &n);
        r->cb.create(c, rc, p, rc == 0 ? &cr.stat : NULL, r->data);
        break;
    }
    case R_DATA: {
        struct tb_get_data_resp dr;
        if (rc == 0)
            rc = tb_get_data_resp_decode(&rd, &dr);
        if (rc == 0)
            r->cb.data(c, 0, dr.data.ptr, dr.data.len, &dr.stat, r->data);
        else
            r->cb.data(c, rc, NULL, 0, NULL, r->data);
        break;
    }
    case R_CHILDREN:
    case R_CHILDREN2:
    case R_EPHEMERALS:
        fire_strings(c, r, &rd);
        break;
    case R_ACL:
        fire_acl(c, r, &rd);
        break;
    case R_COUNT: {
        struct tb_count_resp cr = {0};
        if (rc == 0)
            rc = tb_count_resp_decode(&rd, &cr);
        r->cb.count(c, rc, rc == 0 ? cr.count : 0, r->data);
        break;
    }
    case R_WHOAMI:
        fire_whoami(c, r, &rd);
        break;
    case R_MULTI:
        tb__multi_fire(c, r, &rd);
        break;
    default:
        break;
    }
}

static void fire_item(struct tb_client *c, struct item *it)
{
    struct tb_event ev;
    size_t n;

    switch (it->kind) {
    case ITEM_REQ: {
        struct req *r = TB_CONTAINER_OF(it, struct req, it);
        tb__fire_req(c, r);
        tb__req_free(r);
        break;
    }
    case ITEM_WATCH: {
        struct watcher *w = TB_CONTAINER_OF(it, struct watcher, it);
        ev.type = w->ev_type;
        ev.rc = w->ev_rc;
        ev.final = 1;
        ev.path = tb__path_strip(c, w->path, w->path_len, &n);
        if (w->cb != NULL)
            w->cb(c, &ev, w->data);
        tb__free(w);
        break;
    }
    case ITEM_PEVENT: {
        struct pevent *e = TB_CONTAINER_OF(it, struct pevent, it);
        ev.type = e->type;
        ev.rc = 0;
        ev.final = 0;
        ev.path = tb__path_strip(c, e->path, strlen(e->path), &n);
        if (e->cb != NULL)
            e->cb(c, &ev, e->data);
        tb__free(e);
        break;
    }
    case ITEM_STATE: {
        struct state_item *s = TB_CONTAINER_OF(it, struct state_item, it);
        if (c->o.state_cb != NULL)
            c->o.state_cb(c, s->state, c->o.data);
        tb__free(s);
        break;
    }
    default:
        break;
    }
}

void tb__fire_done(struct tb_client *c)
{
    struct tb_queue *q;

    pthread_mutex_lock(&c->mu);
    while (!tb_queue_empty(&c->doneq)) {
        q = tb_queue_head(&c->doneq);
        tb_queue_remove(q);
        c->cb_depth++;
        pthread_mutex_unlock(&c->mu);
        fire_item(c, TB_CONTAINER_OF(q, struct item, q));
        pthread_mutex_lock(&c->mu);
        c->cb_depth--;
    }
    pthread_mutex_unlock(&c->mu);
}

void tb_watch_default(struct tb_client *c, const struct tb_event *ev,
                      void *data)
{
    (void)data;
    if (c->o.watch_cb != NULL)
        c->o.watch_cb(c, ev, c->o.data);
}
