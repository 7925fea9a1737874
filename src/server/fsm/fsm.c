/* fsm_apply: decode the txn, run it as one tree transaction, and only once
 * nothing can fail any more commit it and report events, session changes
 * and the result.  An allocation failure anywhere rolls everything back,
 * so the caller may retry the same entry (or stop) without divergence. */
#include <stdlib.h>

#include "server/fsm/fsm_int.h"

/* The tree tells of a quota while the change is still in its
 * transaction: one over a soft limit waits, with the events, for the
 * change to stay (a multi's later op may fail, an allocation may fail and
 * the entry be applied again).  A refusal is told at once: it stands
 * whatever becomes of the rest. */
static void quota_seen(void *arg, struct tb_str path, const char *what,
                       int64_t used, int64_t limit, int refused)
{
    struct fsm *f = arg;

    if (refused) {
        if (f->h.quota)
            f->h.quota(f->h.data, path, what, used, limit, 1);
        return;
    }
    fsm__event(f, FSM_QUOTA_OVER, path, NULL);
    if (!f->oom) {
        f->ev[f->nev - 1].what = what;
        f->ev[f->nev - 1].used = used;
        f->ev[f->nev - 1].limit = limit;
    }
}

void fsm__tree_hooks(struct fsm *f)
{
    tree_on_quota(f->tree, quota_seen, f);
}

int fsm_init(struct fsm **out, const struct fsm_hooks *h)
{
    struct fsm *f = calloc(1, sizeof *f);
    int rv;

    if (f == NULL)
        return TB_ENOMEM;
    if ((rv = tree_init(&f->tree)) != 0) {
        free(f);
        return rv;
    }
    if (h)
        f->h = *h;
    fsm__tree_hooks(f);
    tb_map_init(&f->sessions);
    tb_queue_init(&f->sessions_list);
    tb_wbuf_init(&f->body);
    tb_wbuf_init(&f->acl);
    tb_wbuf_init(&f->path);
    tb_wbuf_init(&f->ev_paths);
    *out = f;
    return 0;
}

void fsm_close(struct fsm *f)
{
    if (f == NULL)
        return;
    fsm__sessions_free(&f->sessions, &f->sessions_list);
    tree_close(f->tree);
    tb_wbuf_free(&f->body);
    tb_wbuf_free(&f->acl);
    tb_wbuf_free(&f->path);
    tb_wbuf_free(&f->ev_paths);
    free(f->ev);
    free(f->sorted);
    free(f);
}

void fsm_set_hooks(struct fsm *f, const struct fsm_hooks *h)
{
    memset(&f->h, 0, sizeof f->h);
    if (h)
        f->h = *h;
    fsm__tree_hooks(f);
}

struct tree *fsm_tree(const struct fsm *f)
{
    return f->tree;
}

int64_t fsm_last_zxid(const struct fsm *f)
{
    return f->last_zxid;
}

int64_t fsm_zxid_of(const struct fsm *f, int64_t index)
{
    return index + f->zxid_bias;
}

void fsm__event(struct fsm *f, int type, struct tb_str path,
                struct tree_acl *acl)
{
    struct fsm_event *e;
    size_t cap;

    if (f->nev == f->ev_cap) {
        cap = f->ev_cap ? f->ev_cap * 2 : 16;
        e = realloc(f->ev, cap * sizeof *e);
        if (e == NULL) {
            f->oom = 1;
            return;
        }
        f->ev = e;
        f->ev_cap = cap;
    }
    e = &f->ev[f->nev++];
    e->type = type;
    e->path_off = f->ev_paths.len;
    e->path_len = path.len;
    e->acl = acl;
    if (acl != NULL)
        tree_acl_ref(acl);
    tb_wbuf_put(&f->ev_paths, path.ptr, path.len);
}

void fsm__events_drop(struct fsm *f)
{
    size_t i;

    for (i = 0; i < f->nev; i++)
        if (f->ev[i].acl != NULL)
            tree_acl_unref(f->tree, f->ev[i].acl);
    f->nev = 0;
    f->ev_paths.len = 0;
}

static void events_emit(struct fsm *f)
{
    struct fsm_event *e;
    struct tb_str path;
    size_t i;

    for (i = 0; i < f->nev; i++) {
        e = &f->ev[i];
        path.ptr = (const char *)f->ev_paths.base + e->path_off;
        path.len = e->path_len;
        if (e->type == FSM_QUOTA_OVER && f->h.quota)
            f->h.quota(f->h.data, path, e->what, e->used, e->limit, 0);
        else if (e->type != FSM_QUOTA_OVER && f->h.event)
            f->h.event(f->h.data, e->type, path, tree_acl_vec(e->acl));
    }
    fsm__events_drop(f);
}

void fsm__put_stat(struct fsm *f, const struct tree_node *n)
{
    struct tb_stat st;

    tree_node_stat(n, &st);
    tb_put_STAT(&f->body, &st);
}

void fsm__put_created_stat(struct fsm *f, const struct tree_node *n,
                           struct tb_str data)
{
    struct tb_stat st;

    tree_node_stat(n, &st);
    st.data_length = (int32_t)data.len;
    tb_put_STAT(&f->body, &st);
}

static void put_path(struct fsm *f, const struct tree_node *n)
{
    struct tb_path_resp p = {tree_node_path(n)};

    tb_path_resp_encode(&f->body, &p);
}

static int apply_create(struct fsm *f, int32_t type, struct tb_rd *r)
{
    struct tb_create_req c;
    struct tb_create_ttl_req req;
    struct tree_node *n = NULL;
    int rv;

    if (type == TB_OP_CREATETTL) {
        if (tb_create_ttl_req_decode(r, &req) != 0)
            return TB_EMARSHALLING;
    } else {
        if (tb_create_req_decode(r, &c) != 0)
            return TB_EMARSHALLING;
        req = (struct tb_create_ttl_req){c.path, c.data, c.acl, c.flags, -1};
    }
    if ((rv = fsm__create(f, type, &req, &n)) != 0)
        return rv;
    put_path(f, n);
    if (type != TB_OP_CREATE)
        fsm__put_created_stat(f, n, req.data);
    return 0;
}

static int apply_set(struct fsm *f, int32_t type, struct tb_rd *r)
{
    struct tb_set_data_req d;
    struct tb_set_acl_req a;
    struct tree_node *n = NULL;
    int rv;

    if (type == TB_OP_SETDATA)
        rv = tb_set_data_req_decode(r, &d) != 0 ? TB_EMARSHALLING
                                                : fsm__set_data(f, &d, &n);
    else
        rv = tb_set_acl_req_decode(r, &a) != 0 ? TB_EMARSHALLING
                                               : fsm__set_acl(f, &a, &n);
    if (rv == 0)
        fsm__put_stat(f, n);
    return rv;
}

static int dispatch(struct fsm *f, const struct tb_txn *txn)
{
    struct tb_rd r = tb_rd_make(txn->body.ptr, txn->body.len);
    struct tb_delete_req del;
    struct tb_path_req p;

    switch (txn->type) {
    case TB_OP_CREATE:
    case TB_OP_CREATE2:
    case TB_OP_CREATECONTAINER:
    case TB_OP_CREATETTL:
        return apply_create(f, txn->type, &r);
    case TB_OP_DELETE:
        if (tb_delete_req_decode(&r, &del) != 0)
            return TB_EMARSHALLING;
        return fsm__delete(f, &del);
    case TB_OP_SETDATA:
    case TB_OP_SETACL:
        return apply_set(f, txn->type, &r);
    case TB_OP_MULTI:
        return fsm__multi(f, txn->body);
    case TB_OP_CREATESESSION:
        return fsm__create_session(f, txn->body);
    case TB_OP_CLOSESESSION:
        return fsm__close_session(f);
    case TB_OP_DELETECONTAINER:
        if (tb_path_req_decode(&r, &p) != 0)
            return TB_EMARSHALLING;
        return fsm__delete_container(f, p.path);
    case TB_OP_NEWEPOCH: /* new_epoch did its work */
        return 0;
    case TB_OP_RECONFIG_TXN:
        return fsm__reconfig(f, txn->body);
    case TB_OP_SYNC:
        /* A log barrier: changes nothing, echoes the path. */
        if (tb_path_req_decode(&r, &p) != 0)
            return TB_EMARSHALLING;
        tb_path_resp_encode(&f->body, &(struct tb_path_resp){p.path});
        return 0;
    default: /* reads, and check outside a multi, have no txn form */
        return TB_EUNIMPLEMENTED;
    }
}

/* Buffers keep their capacity from one apply to the next; a failed
 * allocation leaves them sticky-oom, so they are reset from scratch. */
static void reset_buffers(struct fsm *f)
{
    struct tb_wbuf *b[] = {&f->body, &f->acl, &f->path, &f->ev_paths};
    size_t i;

    for (i = 0; i < sizeof b / sizeof b[0]; i++) {
        if (b[i]->oom || b[i]->cap > (1u << 20))
            tb_wbuf_free(b[i]);
        b[i]->len = 0;
    }
    /* A session closing with a million ephemerals must not pin the
     * arrays it needed for good. */
    if (f->ev_cap > 4096) {
        free(f->ev);
        f->ev = NULL;
        f->ev_cap = 0;
    }
    if (f->sorted_cap > 4096) {
        free(f->sorted);
        f->sorted = NULL;
        f->sorted_cap = 0;
    }
    f->oom = 0;
}

static int abandon(struct fsm *f)
{
    tree_rollback(f->tree);
    fsm__events_drop(f);
    fsm__sessions_abort(f);
    reset_buffers(f);
    return TB_ENOMEM;
}

/* A new epoch: from this entry on, zxids go on from the one it names when
 * that is ahead, so that none a client may have seen is given again after
 * a log was cut short by a repair (replog's).  A zxid of -i (i >= 0)
 * names the start of the epoch after that of log index i, or of the entry
 * before if later: a recovery's, which reads no state (the writes lost
 * with a majority, or cut by its repair, are in that epoch). */
static void new_epoch(struct fsm *f, int64_t index, const struct tb_txn *t)
{
    struct tb_rd r = tb_rd_make(t->body.ptr, t->body.len);
    struct tb_new_epoch_txn e;
    int64_t seen;

    if (tb_new_epoch_txn_decode(&r, &e) != 0)
        return;
    if (e.zxid <= 0) {
        if (e.zxid < -FSM_ZXID_BIAS_MAX) /* and -INT64_MIN overflows */
            return;
        seen = -e.zxid > index - 1 ? -e.zxid : index - 1;
        e.zxid = (int64_t)((((uint64_t)(seen + f->zxid_bias) >> 32) + 1) << 32);
    }
    if (e.zxid > index + f->zxid_bias && e.zxid - index <= FSM_ZXID_BIAS_MAX)
        f->zxid_bias = e.zxid - index;
}

int fsm_apply(struct fsm *f, int64_t index, const void *entry, size_t len)
{
    struct tb_rd r = tb_rd_make(entry, len);
    struct tb_txn txn;
    struct fsm_session_change change;
    int decoded = entry != NULL && tb_txn_decode(&r, &txn) == 0;
    int64_t zxid, bias = f->zxid_bias;
    int rc;

    reset_buffers(f);
    if (decoded && txn.type == TB_OP_NEWEPOCH)
        new_epoch(f, index, &txn);
    f->zxid = zxid = index + f->zxid_bias;
    f->txn = &txn;
    if (!decoded) {
        memset(&txn, 0, sizeof txn);
        f->last_zxid = zxid;
        if (f->h.result)
            f->h.result(f->h.data, &txn, zxid, TB_EMARSHALLING, NULL, 0);
        f->txn = NULL;
        return 0;
    }
    tree_begin(f->tree);
    rc = dispatch(f, &txn);
    if (rc == TB_ENOMEM || f->oom || f->body.oom || f->ev_paths.oom ||
        tree_failed(f->tree)) {
        f->zxid_bias = bias; /* a retry would move it again */
        f->txn = NULL;
        return abandon(f);
    }
    if (rc != 0) {
        /* An op fails before it changes anything (a multi turns a failed
         * sub-op into results and rc 0), but be exact regardless. */
        tree_rollback(f->tree);
        tree_begin(f->tree);
        fsm__events_drop(f);
        f->body.len = 0;
    }
    tree_commit(f->tree);
    fsm__sessions_commit(f, &change);
    f->last_zxid = zxid;
    events_emit(f);
    if (change.due && f->h.session)
        f->h.session(f->h.data, change.id, change.timeout, change.opened);
    if (f->h.result)
        f->h.result(f->h.data, &txn, zxid, rc, f->body.base, f->body.len);
    f->txn = NULL;
    return 0;
}
