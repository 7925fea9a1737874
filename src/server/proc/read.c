/* Requests answered without the log: reads of the tree, watch
 * registration, and the few requests ZooKeeper answers locally.  They run
 * in this connection's order (proc.c), against the tree as applied. */
#include "common/path.h"
#include "server/config/config.h"
#include "server/fsm/fsm.h"
#include "server/logging/log.h"
#include "server/proc/proc.h"
#include "server/server.h"
#include "tree/acl.h"
#include "tree/tree.h"

/* A multiRead's reply is built no larger than PROC_UNREAD_MAX beyond a
 * node's data: one may ask for a node's data tens of thousands of times,
 * and built whole, its reply took gigabytes.  A reply of more than
 * REPLY_KEEP gives its memory back once sent. */
#define REPLY_KEEP ((size_t)4 << 20)

/* Starts a reply frame with a success header in the scratch buffer. */
static struct tb_wbuf *begin(struct proc_client *c, int32_t xid, size_t *start)
{
    struct tb_wbuf *w = &c->srv->scratch;

    tb_wbuf_reset(w);
    *start = tb_frame_begin(w);
    tb_put_I32(w, xid);
    tb_put_I64(w, proc_zxid(c->srv));
    tb_put_I32(w, 0);
    return w;
}

static void finish(struct proc_client *c, struct tb_wbuf *w, size_t start)
{
    tb_frame_end(w, start);
    if (w->oom)
        c->ops->close(c);
    else
        c->ops->send(c, w->base, w->len);
    if (w->cap > REPLY_KEEP)
        tb_wbuf_free(w);
}

static void fail(struct proc_client *c, int32_t xid, int err)
{
    c->ops->reply(c, xid, proc_zxid(c->srv), err, NULL, 0);
}

static void notify(struct proc_client *c, int type, struct tb_str path)
{
    struct tb_watcher_event ev = {type, TB_STATE_SYNC_CONNECTED, path};
    struct tb_wbuf *w = &c->srv->scratch;
    size_t start;

    tb_wbuf_reset(w);
    start = tb_frame_begin(w);
    tb_put_I32(w, TB_XID_NOTIFICATION);
    tb_put_I64(w, -1);
    tb_put_I32(w, 0);
    tb_watcher_event_encode(w, &ev);
    finish(c, w, start);
}

static struct tree *tree(const struct proc_client *c)
{
    return fsm_tree(c->srv->fsm);
}

/* Finds a readable node: NoNode, then NoAuth, as ZooKeeper orders them. */
static int lookup(struct proc_client *c, struct tb_str path, int perm,
                  struct tree_node **out)
{
    struct tree_node *n;

    if (tb_path_validate(path) != 0)
        return TB_EBADARGUMENTS;
    n = tree_find(tree(c), path);
    if (n == NULL)
        return TB_ENONODE;
    if (perm != 0 && auth_check(c, tree_node_acl(n), perm) != 0)
        return TB_ENOAUTH;
    *out = n;
    return 0;
}

static void put_children(struct tb_wbuf *w, const struct tree_node *n)
{
    uint32_t i, k = tree_node_nchildren(n);

    tb_put_I32(w, (int32_t)k);
    for (i = 0; i < k; i++)
        tb_put_STR(w, tree_node_name(tree_node_child(n, i)));
}

/* A node as every read shows it: its stat in *st, and its data.  An
 * ensemble's /zookeeper/config holds its members, as ZooKeeper's does:
 * the tree's text once a reconfig wrote it (fsm_reconfig.c), before that
 * the server.N lines, version 0, with dataVersion -1 as ZooKeeper's
 * ensembles give it from the start (ZKDatabase.initConfigInZKDatabase
 * sets it with version -1). */
static struct tb_str node_view(struct proc_client *c, struct tree_node *n,
                               struct tb_stat *st)
{
    const struct tb_config *cfg = c->srv->cfg;
    struct tb_wbuf *m = &c->srv->scratch2;

    tree_node_stat(n, st);
    if (!tb_config_ensemble(cfg) || tree_node_data(n).len > 0 ||
        !tb_str_eq(tree_node_path(n), TB_STR("/zookeeper/config")))
        return tree_node_data(n);
    tb_wbuf_reset(m);
    tb_config_render_membership(cfg, m);
    st->data_length = (int32_t)m->len;
    st->version = -1;
    return (struct tb_str){(const char *)m->base, m->len};
}

/* A watch the server could not keep (out of memory) would be waited on for
 * ever: the client is closed instead, and sets its watches again on its
 * next connection, as when a notification cannot be sent.  Non-zero then;
 * the request is not answered. */
static int keep_watch(struct proc_client *c, enum watch_kind kind,
                      struct tb_str path)
{
    /* A closing client is told of no change (proc_close_after_flush): a
     * read queued before its close sets nothing. */
    if (c->state == CONN_CLOSING ||
        watch_add(&c->srv->watches, kind, path, &c->watch) == 0)
        return 0;
    c->ops->close(c);
    return -1;
}

static void get_node(struct proc_client *c, int32_t xid, int32_t type,
                     struct tb_str body)
{
    struct tb_rd rd = tb_rd_make(body.ptr, body.len);
    struct tb_path_watch_req r;
    struct tree_node *n = NULL;
    struct tb_wbuf *w;
    struct tb_stat st;
    struct tb_str data;
    size_t start;
    int rv;

    if (tb_path_watch_req_decode(&rd, &r) != 0) {
        fail(c, xid, TB_EMARSHALLING);
        return;
    }
    rv = lookup(c, r.path, type == TB_OP_EXISTS ? 0 : TB_PERM_READ, &n);
    if (type == TB_OP_EXISTS && rv == 0 &&
        auth_check(c, tree_node_acl(n), TB_PERM_READ) != 0)
        rv = TB_ENOAUTH;
    /* exists leaves its watch on a missing node: it fires on creation. */
    if (r.watch && (rv == 0 || (rv == TB_ENONODE && type == TB_OP_EXISTS)) &&
        keep_watch(c,
                   type == TB_OP_GETCHILDREN || type == TB_OP_GETCHILDREN2
                       ? WATCH_CHILD
                       : WATCH_DATA,
                   r.path) != 0)
        return;
    if (rv != 0) {
        fail(c, xid, rv);
        return;
    }
    w = begin(c, xid, &start);
    data = node_view(c, n, &st);
    switch (type) {
    case TB_OP_GETDATA:
        tb_put_BUF(w, data);
        tb_put_STAT(w, &st);
        break;
    case TB_OP_GETCHILDREN:
        put_children(w, n);
        break;
    case TB_OP_GETCHILDREN2:
        put_children(w, n);
        tb_put_STAT(w, &st);
        break;
    default: /* exists */
        tb_put_STAT(w, &st);
        break;
    }
    finish(c, w, start);
}

/* getACL: READ or ADMIN; without ADMIN, digest ids are shown as user:x. */
static void get_acl(struct proc_client *c, int32_t xid, struct tb_str body)
{
    struct tb_rd rd = tb_rd_make(body.ptr, body.len), it;
    struct tb_path_req r;
    struct tree_node *n = NULL;
    struct tb_wbuf *w;
    struct tb_stat st;
    struct tb_acl a;
    struct tb_vec acl;
    size_t start, colon;
    int rv, admin;

    if (tb_path_req_decode(&rd, &r) != 0) {
        fail(c, xid, TB_EMARSHALLING);
        return;
    }
    rv = lookup(c, r.path, 0, &n);
    if (rv == 0) {
        acl = tree_node_acl(n);
        admin = auth_check(c, acl, TB_PERM_ADMIN) == 0;
        if (!admin && auth_check(c, acl, TB_PERM_READ) != 0)
            rv = TB_ENOAUTH;
    }
    if (rv != 0) {
        fail(c, xid, rv);
        return;
    }
    w = begin(c, xid, &start);
    (void)node_view(c, n, &st);
    if (admin) {
        tb_put_VEC(w, acl);
    } else {
        tb_put_I32(w, acl.n);
        it = tb_vec_reader(acl);
        while (tb_vec_next_acl(&it, &a) == 1) {
            if (tb_str_eq(a.id.scheme, TB_STR("digest"))) {
                for (colon = 0; colon < a.id.id.len; colon++)
                    if (a.id.id.ptr[colon] == ':')
                        break;
                tb_put_I32(w, a.perms);
                tb_put_STR(w, a.id.scheme);
                tb_put_I32(w, (int32_t)colon + 2);
                tb_wbuf_put(w, a.id.id.ptr, colon);
                tb_wbuf_put(w, ":x", 2);
            } else {
                tb_put_acl(w, &a);
            }
        }
    }
    tb_put_STAT(w, &st);
    finish(c, w, start);
}

static void all_children(struct proc_client *c, int32_t xid, struct tb_str body)
{
    struct tb_rd rd = tb_rd_make(body.ptr, body.len);
    struct tb_path_req r;
    struct tree_node *n = NULL;
    struct tb_wbuf *w;
    size_t start;
    int rv;

    if (tb_path_req_decode(&rd, &r) != 0) {
        fail(c, xid, TB_EMARSHALLING);
        return;
    }
    if ((rv = lookup(c, r.path, TB_PERM_READ, &n)) != 0) {
        fail(c, xid, rv);
        return;
    }
    w = begin(c, xid, &start);
    tb_put_I32(w, (int32_t)tree_count_descendants(n));
    finish(c, w, start);
}

struct eph_walk {
    struct tb_wbuf *w;
    struct tb_str prefix;
    int32_t n;
};

static int eph_one(void *data, struct tree_node *n)
{
    struct eph_walk *e = data;
    struct tb_str p = tree_node_path(n);

    if (p.len >= e->prefix.len &&
        memcmp(p.ptr, e->prefix.ptr, e->prefix.len) == 0) {
        tb_put_STR(e->w, p);
        e->n++;
    }
    return 0;
}

/* getEphemerals: a plain string-prefix match; a prefix that is "" or "/"
 * once trimmed as Java trims (bytes up to the space, both ends) means all,
 * as ZooKeeper's. */
static void ephemerals(struct proc_client *c, int32_t xid, struct tb_str body)
{
    struct tb_rd rd = tb_rd_make(body.ptr, body.len);
    struct tb_path_req r;
    struct tb_str t;
    struct eph_walk e;
    size_t start, count_at;

    if (tb_path_req_decode(&rd, &r) != 0) {
        fail(c, xid, TB_EMARSHALLING);
        return;
    }
    t = tb_str_java_trim(r.path); /* null: empty */
    e.w = begin(c, xid, &start);
    e.prefix = t.len == 0 || tb_str_eq(t, TB_STR("/")) ? TB_STR("") : r.path;
    e.n = 0;
    count_at = e.w->len;
    tb_put_I32(e.w, 0);
    fsm_session_ephemerals(c->srv->fsm, c->session_id, eph_one, &e);
    if (!e.w->oom)
        tb_store_be32(e.w->base + count_at, (uint32_t)e.n);
    finish(c, e.w, start);
}

/* whoAmI: authenticated identities first, then the address; digest
 * identities show only their user. */
static void who_am_i(struct proc_client *c, int32_t xid)
{
    struct tb_rd it = tb_vec_reader(tb_vec_view(&c->ids, c->nids));
    struct tb_wbuf *w;
    struct tb_id id;
    size_t start = 0, user;
    int pass;

    w = begin(c, xid, &start);
    tb_put_I32(w, c->nids);
    for (pass = 0; pass < 2; pass++) {
        it = tb_vec_reader(tb_vec_view(&c->ids, c->nids));
        while (tb_vec_next_id(&it, &id) == 1) {
            if ((pass == 0) == tb_str_eq(id.scheme, TB_STR("ip")))
                continue;
            for (user = 0; user < id.id.len && id.id.ptr[user] != ':'; user++)
                ;
            tb_put_STR(w, id.scheme);
            tb_put_STR(w, tb_str_eq(id.scheme, TB_STR("digest"))
                              ? (struct tb_str){id.id.ptr, user}
                              : id.id);
        }
    }
    finish(c, w, start);
}

static void sync_path(struct proc_client *c, int32_t xid, struct tb_str body)
{
    struct tb_rd rd = tb_rd_make(body.ptr, body.len);
    struct tb_path_req r;
    struct tb_wbuf *w;
    size_t start;

    if (tb_path_req_decode(&rd, &r) != 0) {
        fail(c, xid, TB_EMARSHALLING);
        return;
    }
    w = begin(c, xid, &start);
    tb_path_resp_encode(w, &(struct tb_path_resp){r.path});
    finish(c, w, start);
}

/* multiRead: each getData / getChildren answered on its own; a failure
 * gives that op an error result and the others still run. */
static void multi_read(struct proc_client *c, int32_t xid, struct tb_str body)
{
    struct tb_rd rd = tb_rd_make(body.ptr, body.len);
    struct tb_multi_op op;
    struct tree_node *n;
    struct tb_wbuf *w;
    struct tb_stat st;
    size_t start;
    int rv;

    /* Validate the whole request first: a malformed one gets one error. */
    while ((rv = tb_multi_next(&rd, TB_OP_MULTIREAD, &op)) == 1)
        ;
    if (rv != 0) {
        fail(c, xid, TB_EMARSHALLING);
        return;
    }
    rd = tb_rd_make(body.ptr, body.len);
    w = begin(c, xid, &start);
    while (tb_multi_next(&rd, TB_OP_MULTIREAD, &op) == 1) {
        n = NULL;
        rv = lookup(c, op.u.read.path, TB_PERM_READ, &n);
        if (rv != 0) {
            tb_multi_header_encode(w, &(struct tb_multi_header){-1, 0, rv});
            tb_put_I32(w, rv);
            continue;
        }
        tb_multi_header_encode(w, &(struct tb_multi_header){op.type, 0, 0});
        if (op.type == TB_OP_GETDATA) {
            tb_put_BUF(w, node_view(c, n, &st));
            tb_put_STAT(w, &st);
        } else {
            put_children(w, n);
        }
        if (w->len - start >
            PROC_UNREAD_MAX + (size_t)c->srv->cfg->jute_maxbuffer) {
            tb_log(TB_LOG_WARN,
                   "closing session 0x%llx: its multiRead's reply passes "
                   "%zu MiB",
                   (unsigned long long)c->session_id, PROC_UNREAD_MAX >> 20);
            c->ops->close(c);
            tb_wbuf_free(w);
            return;
        }
    }
    tb_multi_end_encode(w);
    finish(c, w, start);
}

/* setWatches(2) after a reconnect: report what changed since the client's
 * last zxid (those watches are used up), register the rest. */
static void set_watches(struct proc_client *c, int32_t xid, int32_t type,
                        struct tb_str body)
{
    struct tb_rd rd = tb_rd_make(body.ptr, body.len), it;
    struct tb_set_watches2_req r;
    struct tb_set_watches_req r1;
    struct tree_node *n;
    struct tb_stat st;
    struct tb_str p;
    int list, rv;

    if (type == TB_OP_SETWATCHES2) {
        rv = tb_set_watches2_req_decode(&rd, &r);
    } else {
        rv = tb_set_watches_req_decode(&rd, &r1);
        r = (struct tb_set_watches2_req){r1.relative_zxid, r1.data, r1.exist,
                                         r1.child, {0, NULL, 0},
                                         {0, NULL, 0}};
    }
    if (rv != 0) {
        fail(c, xid, TB_EMARSHALLING);
        return;
    }
    /* A notification may close the connection (its client leaves too
     * much unread), and a queued request's body goes with it: nothing
     * more is read of it then. */
    for (list = 0; list < 5 && !c->closed; list++) {
        struct tb_vec v = list == 0   ? r.data
                          : list == 1 ? r.exist
                          : list == 2 ? r.child
                          : list == 3 ? r.persistent
                                      : r.recursive;
        it = tb_vec_reader(v);
        while (!c->closed && tb_vec_next_str(&it, &p) == 1) {
            if (tb_path_validate(p) != 0)
                continue;
            n = tree_find(tree(c), p);
            if (n != NULL)
                tree_node_stat(n, &st);
            switch (list) {
            case 0:
                if (n == NULL)
                    notify(c, TB_EVENT_DELETED, p);
                else if (st.mzxid > r.relative_zxid)
                    notify(c, TB_EVENT_DATA_CHANGED, p);
                else
                    (void)keep_watch(c, WATCH_DATA, p);
                break;
            case 1:
                if (n != NULL)
                    notify(c, TB_EVENT_CREATED, p);
                else
                    (void)keep_watch(c, WATCH_DATA, p);
                break;
            case 2:
                if (n == NULL)
                    notify(c, TB_EVENT_DELETED, p);
                else if (st.pzxid > r.relative_zxid)
                    notify(c, TB_EVENT_CHILDREN_CHANGED, p);
                else
                    (void)keep_watch(c, WATCH_CHILD, p);
                break;
            case 3:
                (void)keep_watch(c, WATCH_PERSISTENT, p);
                break;
            default:
                (void)keep_watch(c, WATCH_PERSISTENT_RECURSIVE, p);
                break;
            }
        }
    }
    if (!c->closed)
        c->ops->reply(c, xid, proc_zxid(c->srv), 0, NULL, 0);
}

static void add_watch(struct proc_client *c, int32_t xid, struct tb_str body)
{
    struct tb_rd rd = tb_rd_make(body.ptr, body.len);
    struct tb_add_watch_req r;
    struct tb_wbuf *w;
    size_t start;

    if (tb_add_watch_req_decode(&rd, &r) != 0 ||
        (r.mode != TB_ADDWATCH_PERSISTENT &&
         r.mode != TB_ADDWATCH_PERSISTENT_RECURSIVE)) {
        fail(c, xid, TB_EMARSHALLING);
        return;
    }
    if (tb_path_validate(r.path) != 0) {
        fail(c, xid, TB_EBADARGUMENTS);
        return;
    }
    if (keep_watch(c,
                   r.mode == TB_ADDWATCH_PERSISTENT
                       ? WATCH_PERSISTENT
                       : WATCH_PERSISTENT_RECURSIVE,
                   r.path) != 0)
        return;
    w = begin(c, xid, &start);
    tb_put_I32(w, 0);
    finish(c, w, start);
}

/* checkWatches / removeWatches.  Like 3.8, only types 1-3 exist (3 also
 * removes persistent watches); 4 and 5 are a MarshallingError. */
static void remove_watches(struct proc_client *c, int32_t xid, int32_t type,
                           struct tb_str body)
{
    struct tb_rd rd = tb_rd_make(body.ptr, body.len);
    struct tb_watches_req r;
    int rv;

    if (tb_watches_req_decode(&rd, &r) != 0 || r.type < TB_WATCHER_CHILDREN ||
        r.type > TB_WATCHER_ANY) {
        fail(c, xid, TB_EMARSHALLING);
        return;
    }
    if (tb_path_validate(r.path) != 0) {
        fail(c, xid, TB_EBADARGUMENTS);
        return;
    }
    if (type == TB_OP_REMOVEWATCHES)
        rv = watch_remove(&c->srv->watches, r.path, &c->watch, r.type);
    else
        rv = watch_check(&c->srv->watches, r.path, &c->watch, r.type);
    c->ops->reply(c, xid, proc_zxid(c->srv), rv, NULL, 0);
}

void read_serve(struct proc_client *c, int32_t xid, int32_t type,
                struct tb_str body)
{
    /* The zxid its reply carries: cons's lzxid, after a read or a ping
     * too, as ZooKeeper's updateStatsForResponse keeps it. */
    c->last_zxid = proc_zxid(c->srv);
    switch (type) {
    case TB_OP_PING:
        c->ops->reply(c, TB_XID_PING, proc_zxid(c->srv), 0, NULL, 0);
        break;
    case TB_OP_EXISTS:
    case TB_OP_GETDATA:
    case TB_OP_GETCHILDREN:
    case TB_OP_GETCHILDREN2:
        get_node(c, xid, type, body);
        break;
    case TB_OP_GETACL:
        get_acl(c, xid, body);
        break;
    case TB_OP_SYNC:
        sync_path(c, xid, body);
        break;
    case TB_OP_GETALLCHILDRENNUMBER:
        all_children(c, xid, body);
        break;
    case TB_OP_GETEPHEMERALS:
        ephemerals(c, xid, body);
        break;
    case TB_OP_WHOAMI:
        who_am_i(c, xid);
        break;
    case TB_OP_MULTIREAD:
        multi_read(c, xid, body);
        break;
    case TB_OP_SETWATCHES:
    case TB_OP_SETWATCHES2:
        set_watches(c, xid, type, body);
        break;
    case TB_OP_ADDWATCH:
        add_watch(c, xid, body);
        break;
    case TB_OP_CHECKWATCHES:
    case TB_OP_REMOVEWATCHES:
        remove_watches(c, xid, type, body);
        break;
    default:
        /* Unknown opcodes, a standalone check, and the internal
         * createSession / deleteContainer: refused, connection kept. */
        c->ops->reply(c, xid, -1, TB_EUNIMPLEMENTED, NULL, 0);
        break;
    }
}
