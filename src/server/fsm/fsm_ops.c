/* The write operations, each checking in exactly the order ZooKeeper 3.8's
 * PrepRequestProcessor does (wire doc §6 and §9.2), so that the first
 * failing check decides the error code, and then applying the change to
 * the tree and queueing its watch triggers (§10.3).
 *
 * Nothing is mutated before the last check has passed, except inside a
 * multi, where earlier sub-ops stay applied until the multi rolls back. */
#include <stdlib.h>

#include "common/path.h"
#include "server/fsm/fsm_int.h"

static int session_ok(const struct fsm *f)
{
    return fsm__session(f, f->txn->session) != NULL ? 0 : TB_ESESSIONEXPIRED;
}

static int perm_ok(const struct fsm *f, const struct tree_node *n, int perm)
{
    return tb_acl_check(tree_node_acl(n), f->txn->ids, f->txn->super, perm);
}

/* Where the parent part of a path ends: the last '/', or -1. */
static long last_slash(struct tb_str p)
{
    size_t i = p.len;

    if (p.ptr == NULL)
        return -1;
    while (i > 0)
        if (p.ptr[--i] == '/')
            return (long)i;
    return -1;
}

/* validatePathForCreate / getParentPathAndValidate's cheap checks. */
static int cheap_path_ok(struct tb_str p)
{
    return last_slash(p) >= 0 && memchr(p.ptr, '\0', p.len) == NULL;
}

/* The parent's path as ZooKeeper cuts it: everything before the last '/',
 * where "" means the root. */
static struct tree_node *find_parent(const struct fsm *f, struct tb_str p)
{
    long i = last_slash(p);

    if (i == 0)
        return tree_root(f->tree);
    return tree_find(f->tree, (struct tb_str){p.ptr, (size_t)i});
}

static int is_special(struct tb_str p)
{
    return tb_str_eq(p, TB_STR("/")) || tb_str_eq(p, TB_STR("/zookeeper")) ||
           tb_str_eq(p, TB_STR("/zookeeper/quota")) ||
           tb_str_eq(p, TB_STR("/zookeeper/config"));
}

/* checkAndIncVersion: -1 matches anything; the new value wraps. */
static int version_ok(int32_t expected, int32_t current)
{
    return expected == -1 || expected == current ? 0 : TB_EBADVERSION;
}

/* Hard quota limits hold only when the leader enforced them (its
 * enforceQuota), whatever this replica's own configuration says.  As
 * ZooKeeper, a create and a setData are checked; a write inside a multi
 * sees the ops before it. */
static int quota_ok(struct fsm *f, struct tb_str path, int64_t count,
                    int64_t bytes)
{
    if (!(f->txn->flags & TB_TXN_ENFORCE_QUOTA))
        return 0;
    return tree_quota_check(f->tree, path, count, bytes);
}

static int32_t inc(int32_t v)
{
    return (int32_t)((uint32_t)v + 1);
}

/* fixupACL into f->acl / f->acl_n; "sasl" and "x509" ACLs as the leader
 * allowed. */
static int fixup(struct fsm *f, struct tb_vec acl)
{
    unsigned opt = (f->txn->flags & TB_TXN_SASL_ACLS ? TB_ACL_SASL : 0) |
                   (f->txn->flags & TB_TXN_X509_ACLS ? TB_ACL_X509 : 0);

    f->acl.len = 0;
    return tb_acl_fixup(acl, f->txn->ids, opt, &f->acl, &f->acl_n);
}

static int intern_fixed(struct fsm *f, struct tree_acl **out)
{
    return tree_acl_intern(f->tree, tb_vec_view(&f->acl, f->acl_n), out);
}

/* The opcode must match the mode (3.8.0 misbehaves otherwise, see §6.1),
 * and the TTL must be in range for TTL modes and absent for the others. */
static int mode_ok(int32_t type, int32_t flags, int64_t ttl)
{
    int is_ttl = flags == TB_PERSISTENT_WITH_TTL ||
                 flags == TB_PERSISTENT_SEQUENTIAL_WITH_TTL;
    int is_container = flags == TB_CONTAINER;

    if (flags < TB_PERSISTENT || flags > TB_PERSISTENT_SEQUENTIAL_WITH_TTL)
        return TB_EBADARGUMENTS;
    if (type == TB_OP_CREATECONTAINER ? !is_container
        : type == TB_OP_CREATETTL     ? !is_ttl
                                      : is_ttl || is_container)
        return TB_EBADARGUMENTS;
    if (is_ttl ? ttl <= 0 || ttl > TREE_TTL_MAX : ttl >= 0)
        return TB_EBADARGUMENTS;
    return 0;
}

static int64_t owner_for(const struct fsm *f, int32_t flags, int64_t ttl)
{
    switch (flags) {
    case TB_EPHEMERAL:
    case TB_EPHEMERAL_SEQUENTIAL:
        return f->txn->session;
    case TB_CONTAINER:
        return TREE_CONTAINER_OWNER;
    case TB_PERSISTENT_WITH_TTL:
    case TB_PERSISTENT_SEQUENTIAL_WITH_TTL:
        return tree_ttl_owner(ttl);
    default:
        return 0;
    }
}

static int sequential(int32_t flags)
{
    return flags == TB_PERSISTENT_SEQUENTIAL ||
           flags == TB_EPHEMERAL_SEQUENTIAL ||
           flags == TB_PERSISTENT_SEQUENTIAL_WITH_TTL;
}

/* The requested path plus the parent's counter formatted as %010d. */
static struct tb_str seq_path(struct fsm *f, struct tb_str p,
                              const struct tree_node *parent)
{
    char num[16];
    int k = tb_seq_format(num, sizeof num, tree_node_ccount(parent));

    f->path.len = 0;
    tb_wbuf_put(&f->path, p.ptr, p.len);
    tb_wbuf_put(&f->path, num, (size_t)k);
    if (f->path.oom) {
        f->oom = 1;
        return TB_STR_NULL;
    }
    return (struct tb_str){(const char *)f->path.base, f->path.len};
}

static int do_create(struct fsm *f, struct tree_node *parent,
                     struct tb_str path, const struct tb_create_ttl_req *req,
                     struct tree_node **node)
{
    struct tree_acl *acl;
    int rv;

    if (intern_fixed(f, &acl) != 0)
        return TB_ENOMEM;
    rv = tree_create(f->tree, parent, path, req->data, acl,
                     owner_for(f, req->flags, req->ttl), f->zxid, f->txn->time,
                     node);
    if (rv != 0) {
        tree_acl_unref(f->tree, acl);
        return rv;
    }
    fsm__event(f, TB_EVENT_CREATED, path, acl);
    fsm__event(f, TB_EVENT_CHILDREN_CHANGED, tree_node_path(parent),
               tree_node_acl_ref(parent));
    return 0;
}

int fsm__create(struct fsm *f, int32_t type,
                const struct tb_create_ttl_req *req, struct tree_node **node)
{
    struct tree_node *parent;
    struct tb_str path = req->path;
    int rv;

    if ((rv = mode_ok(type, req->flags, req->ttl)) != 0 ||
        (rv = session_ok(f)) != 0)
        return rv;
    if (!cheap_path_ok(path))
        return TB_EBADARGUMENTS;
    if ((rv = fixup(f, req->acl)) != 0)
        return rv;
    if ((parent = find_parent(f, path)) == NULL)
        return TB_ENONODE;
    if ((rv = perm_ok(f, parent, TB_PERM_CREATE)) != 0)
        return rv;
    if (sequential(req->flags) &&
        (path = seq_path(f, path, parent)).ptr == NULL)
        return TB_ENOMEM;
    if (tb_path_validate(path) != 0)
        return TB_EBADARGUMENTS;
    if (tree_find(f->tree, path) != NULL)
        return TB_ENODEEXISTS;
    if (tree_owner_kind(tree_node_owner(parent)) == TREE_EPHEMERAL)
        return TB_ENOCHILDRENFOREPHEMERALS;
    if ((rv = quota_ok(f, path, 1, (int64_t)req->data.len)) != 0)
        return rv;
    return do_create(f, parent, path, req, node);
}

/* Shared by delete, deleteContainer and closeSession. */
static int remove_node(struct fsm *f, struct tree_node *n)
{
    struct tree_node *parent = tree_node_parent(n);

    fsm__event(f, TB_EVENT_DELETED, tree_node_path(n), tree_node_acl_ref(n));
    fsm__event(f, TB_EVENT_CHILDREN_CHANGED, tree_node_path(parent),
               tree_node_acl_ref(parent));
    return tree_delete(f->tree, n, f->zxid);
}

int fsm__delete(struct fsm *f, const struct tb_delete_req *req)
{
    struct tree_node *parent, *n;
    int rv;

    if ((rv = session_ok(f)) != 0)
        return rv;
    if (!cheap_path_ok(req->path) || is_special(req->path))
        return TB_EBADARGUMENTS;
    if ((parent = find_parent(f, req->path)) == NULL)
        return TB_ENONODE;
    if ((rv = perm_ok(f, parent, TB_PERM_DELETE)) != 0)
        return rv;
    if ((n = tree_find(f->tree, req->path)) == NULL)
        return TB_ENONODE;
    if ((rv = version_ok(req->version, tree_node_version(n))) != 0)
        return rv;
    if (tree_node_nchildren(n) > 0)
        return TB_ENOTEMPTY;
    return remove_node(f, n);
}

int fsm__set_data(struct fsm *f, const struct tb_set_data_req *req,
                  struct tree_node **node)
{
    struct tree_node *n;
    int rv;

    if ((rv = session_ok(f)) != 0)
        return rv;
    if (tb_path_validate(req->path) != 0)
        return TB_EBADARGUMENTS;
    if ((n = tree_find(f->tree, req->path)) == NULL)
        return TB_ENONODE;
    if ((rv = perm_ok(f, n, TB_PERM_WRITE)) != 0 ||
        (rv = quota_ok(f, req->path, 0,
                       (int64_t)req->data.len -
                           (int64_t)tree_node_data(n).len)) != 0 ||
        (rv = version_ok(req->version, tree_node_version(n))) != 0)
        return rv;
    rv = tree_set_data(f->tree, n, req->data, inc(tree_node_version(n)),
                       f->zxid, f->txn->time);
    if (rv != 0)
        return rv;
    fsm__event(f, TB_EVENT_DATA_CHANGED, tree_node_path(n),
               tree_node_acl_ref(n));
    *node = n;
    return 0;
}

int fsm__set_acl(struct fsm *f, const struct tb_set_acl_req *req,
                 struct tree_node **node)
{
    struct tree_node *n;
    struct tree_acl *acl;
    int rv;

    if ((rv = session_ok(f)) != 0)
        return rv;
    if (tb_path_validate(req->path) != 0)
        return TB_EBADARGUMENTS;
    if ((rv = fixup(f, req->acl)) != 0)
        return rv;
    if ((n = tree_find(f->tree, req->path)) == NULL)
        return TB_ENONODE;
    if ((rv = perm_ok(f, n, TB_PERM_ADMIN)) != 0 ||
        (rv = version_ok(req->version, tree_node_aversion(n))) != 0)
        return rv;
    if (intern_fixed(f, &acl) != 0)
        return TB_ENOMEM;
    rv = tree_set_acl(f->tree, n, acl, inc(tree_node_aversion(n)));
    if (rv != 0) {
        tree_acl_unref(f->tree, acl);
        return rv;
    }
    *node = n; /* setACL triggers no watch */
    return 0;
}

int fsm__check(struct fsm *f, const struct tb_check_req *req)
{
    struct tree_node *n;
    int rv;

    if ((rv = session_ok(f)) != 0)
        return rv;
    if (tb_path_validate(req->path) != 0)
        return TB_EBADARGUMENTS;
    if ((n = tree_find(f->tree, req->path)) == NULL)
        return TB_ENONODE;
    if ((rv = perm_ok(f, n, TB_PERM_READ)) != 0)
        return rv;
    return version_ok(req->version, tree_node_version(n));
}

/* The cleanup the leader proposes for containers and TTL nodes.  Unlike
 * 3.8 (which trusts the candidate list), the rule is checked again against
 * the state at apply time with the txn's time, so a child created or a
 * setData applied since the candidate was listed keeps the node.  Errors:
 * NoNode; NotEmpty for children or not (or no longer) due; BadVersion for
 * a node that is neither a container nor a TTL node, as ZooKeeper. */
int fsm__delete_container(struct fsm *f, struct tb_str path)
{
    struct tree_node *n;
    enum tree_kind k;

    if (!cheap_path_ok(path) || is_special(path))
        return TB_EBADARGUMENTS;
    if ((n = tree_find(f->tree, path)) == NULL)
        return TB_ENONODE;
    if (tree_node_nchildren(n) > 0)
        return TB_ENOTEMPTY;
    k = tree_owner_kind(tree_node_owner(n));
    if (k != TREE_CONTAINER && k != TREE_TTL)
        return TB_EBADVERSION;
    if (!tree_node_expired(n, f->txn->time))
        return TB_ENOTEMPTY;
    return remove_node(f, n);
}

/* closeSession's deletions: its ephemerals in path order, so that every
 * replica (including one restored from a snapshot, whose owner lists are
 * in another order) fires the same events in the same order. */
static int cmp_path(const void *a, const void *b)
{
    struct tb_str x = tree_node_path(*(struct tree_node *const *)a);
    struct tb_str y = tree_node_path(*(struct tree_node *const *)b);
    int c = memcmp(x.ptr, y.ptr, x.len < y.len ? x.len : y.len);

    return c != 0 ? c : (x.len > y.len) - (x.len < y.len);
}

struct collector {
    struct tree_node **v;
    uint64_t n;
};

static int collect(void *data, struct tree_node *n)
{
    struct collector *c = data;

    c->v[c->n++] = n;
    return 0;
}

int fsm__remove_ephemerals(struct fsm *f, int64_t owner)
{
    uint64_t k = tree_ephemerals_count(f->tree, owner), i;
    struct collector c;
    struct tree_node **v;
    int rv;

    if (k == 0)
        return 0;
    if (k > f->sorted_cap) {
        v = realloc(f->sorted, k * sizeof *v);
        if (v == NULL)
            return TB_ENOMEM;
        f->sorted = v;
        f->sorted_cap = k;
    }
    c.v = f->sorted;
    c.n = 0;
    tree_ephemerals_foreach(f->tree, owner, collect, &c);
    qsort(c.v, c.n, sizeof *c.v, cmp_path);
    for (i = 0; i < c.n; i++)
        if ((rv = remove_node(f, c.v[i])) != 0)
            return rv;
    return 0;
}
