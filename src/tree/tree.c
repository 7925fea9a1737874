/* The tree proper: node allocation, reads, and the four mutations (create,
 * delete, setData, setACL) with their undo records.  Every operation is
 * O(1) apart from hashing the path; the path table is in tree_hash.c. */
#include <stdlib.h>

#include "tree/tree_int.h"

struct tree_node *tree__node_alloc(struct tb_str path, struct tb_str data,
                                   int64_t owner)
{
    size_t ext = owner != 0 ? sizeof(struct tree_node_ext) : 0;
    struct tree_node *n;
    size_t i = path.len;
    char *p;

    if (path.len > UINT32_MAX - 1 || data.len > INT32_MAX)
        return NULL;
    /* Sized to the path and data, not to sizeof: the struct's tail padding
     * would push many nodes into the next malloc size class. */
    p = malloc(ext + offsetof(struct tree_node, path) + path.len + 1 +
               data.len);
    if (p == NULL)
        return NULL;
    n = (struct tree_node *)(p + ext);
    memset(n, 0, offsetof(struct tree_node, path));
    if (ext > 0) {
        n->has_ext = 1;
        tree__ext(n)->owner = owner;
        tb_queue_init(&tree__ext(n)->link);
    }
    memcpy(n->path, path.ptr, path.len);
    n->path[path.len] = '\0';
    n->path_len = (uint32_t)path.len;
    if (data.len > 0) {
        n->data = (uint8_t *)n->path + path.len + 1;
        memcpy(n->data, data.ptr, data.len);
    }
    n->data_len = (uint32_t)data.len;
    n->data_null = data.ptr == NULL;
    n->hash = tree__hash(path.ptr, path.len);
    while (i > 0 && path.ptr[i - 1] != '/')
        i--;
    n->name_off = (uint32_t)i;
    return n;
}

void tree__data_free(struct tree_node *n, uint8_t *data)
{
    if (data != (uint8_t *)n->path + n->path_len + 1)
        free(data);
}

void tree__node_free(struct tree *t, struct tree_node *n)
{
    if (n->acl != NULL)
        tree_acl_unref(t, n->acl);
    tree__data_free(n, n->data);
    free(n->kids);
    free(n->has_ext ? (void *)tree__ext(n) : (void *)n);
}

int tree__kids_reserve(struct tree_node *p)
{
    uint32_t cap;
    struct tree_node **k;

    if (p->nkids < p->kcap)
        return 0;
    if (p->kcap > UINT32_MAX / 2)
        return TB_ENOMEM;
    cap = p->kcap ? p->kcap * 2 : 2;
    k = realloc(p->kids, cap * sizeof *k);
    if (k == NULL)
        return TB_ENOMEM;
    p->kids = k;
    p->kcap = cap;
    return 0;
}

void tree__kids_add(struct tree_node *p, struct tree_node *n)
{
    assert(p->nkids < p->kcap);
    n->parent = p;
    n->slot = p->nkids;
    p->kids[p->nkids++] = n;
}

/* Swap-remove: the last child takes n's slot. */
static void kids_remove(struct tree_node *p, struct tree_node *n)
{
    struct tree_node *last = p->kids[--p->nkids];

    p->kids[n->slot] = last;
    last->slot = n->slot;
}

/* Gives back most of a children array that has emptied out.  Only outside
 * transactions: a rollback relies on the capacity still being there. */
void tree__kids_shrink(struct tree_node *p)
{
    struct tree_node **k;
    uint32_t cap;

    if (p->nkids == 0) {
        free(p->kids);
        p->kids = NULL;
        p->kcap = 0;
        return;
    }
    if (p->kcap < 16 || p->nkids > p->kcap / 4)
        return;
    cap = p->kcap / 2;
    k = realloc(p->kids, cap * sizeof *k);
    if (k != NULL) {
        p->kids = k;
        p->kcap = cap;
    }
}

int tree__owner_prepare(struct tree *t, int64_t owner)
{
    struct tree_owner *o;

    if (tree_owner_kind(owner) != TREE_EPHEMERAL ||
        tb_map_get(&t->owners, (uint64_t)owner) != NULL)
        return 0;
    o = malloc(sizeof *o);
    if (o == NULL)
        return TB_ENOMEM;
    tb_queue_init(&o->nodes);
    o->count = 0;
    if (tb_map_put(&t->owners, (uint64_t)owner, o) != 0) {
        free(o);
        return TB_ENOMEM;
    }
    return 0;
}

static void owner_drop_if_empty(struct tree *t, int64_t owner)
{
    struct tree_owner *o = tb_map_get(&t->owners, (uint64_t)owner);

    if (o != NULL && o->count == 0) {
        tb_map_del(&t->owners, (uint64_t)owner);
        free(o);
    }
}

void tree__link(struct tree *t, struct tree_node *n)
{
    struct tree_owner *o;

    switch (tree_owner_kind(tree__owner(n))) {
    case TREE_EPHEMERAL:
        o = tb_map_get(&t->owners, (uint64_t)tree__owner(n));
        assert(o != NULL);
        tb_queue_insert_tail(&o->nodes, &tree__ext(n)->link);
        o->count++;
        t->n_ephemeral++;
        break;
    case TREE_CONTAINER:
    case TREE_TTL:
        tb_queue_insert_tail(&t->special, &tree__ext(n)->link);
        break;
    case TREE_PERSISTENT:
        break;
    }
}

void tree__unlink(struct tree *t, struct tree_node *n)
{
    struct tree_owner *o;

    if (!n->has_ext || tb_queue_empty(&tree__ext(n)->link))
        return;
    tb_queue_remove(&tree__ext(n)->link);
    if (tree_owner_kind(tree__owner(n)) == TREE_EPHEMERAL) {
        o = tb_map_get(&t->owners, (uint64_t)tree__owner(n));
        o->count--;
        t->n_ephemeral--;
        owner_drop_if_empty(t, tree__owner(n));
    }
}

int tree__alloc(struct tree **out)
{
    struct tree *t = calloc(1, sizeof *t);

    if (t == NULL)
        return TB_ENOMEM;
    t->nabuckets = 16;
    t->abuckets = calloc(t->nabuckets, sizeof *t->abuckets);
    if (tree__hash_init(t) != 0 || t->abuckets == NULL) {
        tree__hash_free(t);
        free(t->abuckets);
        free(t);
        return TB_ENOMEM;
    }
    tb_map_init(&t->owners);
    tb_queue_init(&t->special);
    *out = t;
    return 0;
}

/* A system node: empty data, zero stats, the given ACL. */
static int add_system_node(struct tree *t, struct tree_node *parent,
                           const char *path, struct tb_vec acl,
                           int32_t aversion)
{
    struct tree_node *n = tree__node_alloc(tb_str_c(path), tb_str_c(""), 0);

    if (n == NULL || (parent && tree__kids_reserve(parent) != 0) ||
        tree__hash_reserve(t) != 0 || tree_acl_intern(t, acl, &n->acl) != 0) {
        free(n);
        return TB_ENOMEM;
    }
    n->aversion = aversion;
    if (parent)
        tree__kids_add(parent, n);
    else
        t->root = n;
    tree__hash_insert(t, n);
    return 0;
}

int tree_init(struct tree **out)
{
    struct tree *t;
    struct tree_node *zk;
    int rv;

    if ((rv = tree__alloc(&t)) != 0)
        return rv;
    /* Kept in ZooKeeper's order so that children arrays match its
     * DataTree constructor; the counters stay 0 although / and /zookeeper
     * have children, which is what makes their visible cversion negative. */
    if (add_system_node(t, NULL, "/", tb_acl_open_unsafe, 0) != 0 ||
        add_system_node(t, t->root, "/zookeeper", tb_acl_open_unsafe, 0) != 0)
        goto err;
    zk = tree_find(t, TB_STR("/zookeeper"));
    if (add_system_node(t, zk, "/zookeeper/quota", tb_acl_open_unsafe, 0) !=
            0 ||
        add_system_node(t, zk, "/zookeeper/config", tb_acl_read_unsafe, -1) !=
            0)
        goto err;
    t->quota = tree_find(t, TB_STR("/zookeeper/quota"));
    *out = t;
    return 0;
err:
    tree_close(t);
    return TB_ENOMEM;
}

void tree_close(struct tree *t)
{
    struct tree_node *n;
    size_t i;
    struct tree_owner *o;
    uint64_t key;
    void *val;

    if (t == NULL)
        return;
    if (t->in_txn)
        tree_rollback(t);
    for (i = 0; (n = tree__hash_next(t, &i)) != NULL;)
        tree__node_free(t, n);
    for (i = 0; tb_map_next(&t->owners, &i, &key, &val);) {
        o = val;
        free(o);
    }
    tb_map_free(&t->owners);
    tree__acl_free_all(t);
    tree__hash_free(t);
    free(t->abuckets);
    free(t->undo);
    free(t);
}

/* Reads. */

struct tree_node *tree_root(const struct tree *t)
{
    return t->root;
}

void tree_node_stat(const struct tree_node *n, struct tb_stat *st)
{
    st->czxid = n->czxid;
    st->mzxid = n->mzxid;
    st->ctime = n->ctime;
    st->mtime = n->mtime;
    st->version = n->version;
    /* DataNode.copyStat: creates counted twice minus those still present
     * equals creates + deletes; Java int arithmetic, so wrap. */
    st->cversion = (int32_t)(2u * (uint32_t)n->ccount - n->nkids);
    st->aversion = n->aversion;
    st->ephemeral_owner =
        tree_owner_kind(tree__owner(n)) == TREE_EPHEMERAL ? tree__owner(n) : 0;
    st->data_length = (int32_t)n->data_len;
    st->num_children = (int32_t)n->nkids;
    st->pzxid = n->pzxid;
}

struct tb_str tree_node_data(const struct tree_node *n)
{
    if (n->data_null)
        return TB_STR_NULL;
    return (struct tb_str){n->data ? (const char *)n->data : "", n->data_len};
}

struct tb_vec tree_node_acl(const struct tree_node *n)
{
    return tree_acl_vec(n->acl);
}

struct tree_acl *tree_node_acl_ref(const struct tree_node *n)
{
    return n->acl;
}

struct tb_str tree_node_path(const struct tree_node *n)
{
    return (struct tb_str){n->path, n->path_len};
}

struct tb_str tree_node_name(const struct tree_node *n)
{
    if (n->parent == NULL)
        return TB_STR("");
    return (struct tb_str){n->path + n->name_off, n->path_len - n->name_off};
}

struct tree_node *tree_node_parent(const struct tree_node *n)
{
    return n->parent;
}

uint32_t tree_node_nchildren(const struct tree_node *n)
{
    return n->nkids;
}

struct tree_node *tree_node_child(const struct tree_node *n, uint32_t i)
{
    return i < n->nkids ? n->kids[i] : NULL;
}

int64_t tree_node_owner(const struct tree_node *n)
{
    return tree__owner(n);
}

int32_t tree_node_ccount(const struct tree_node *n)
{
    return n->ccount;
}

int32_t tree_node_version(const struct tree_node *n)
{
    return n->version;
}

int32_t tree_node_aversion(const struct tree_node *n)
{
    return n->aversion;
}

int64_t tree_node_mtime(const struct tree_node *n)
{
    return n->mtime;
}

void tree_node_set_ccount(struct tree_node *n, int32_t c)
{
    n->ccount = c;
}

uint64_t tree_count(const struct tree *t)
{
    return t->count;
}

uint64_t tree_data_size(const struct tree *t)
{
    return t->data_size;
}

uint64_t tree_ephemeral_count(const struct tree *t)
{
    return t->n_ephemeral;
}

/* Pre-order walk without a stack (paths may nest very deep): the next node
 * after `n` within the subtree of `top`, or NULL. */
const struct tree_node *tree__walk_next(const struct tree_node *n,
                                        const struct tree_node *top)
{
    if (n->nkids > 0)
        return n->kids[0];
    while (n != top) {
        if (n->slot + 1 < n->parent->nkids)
            return n->parent->kids[n->slot + 1];
        n = n->parent;
    }
    return NULL;
}

uint64_t tree_count_descendants(const struct tree_node *top)
{
    const struct tree_node *n;
    uint64_t c = 0;

    for (n = tree__walk_next(top, top); n != NULL; n = tree__walk_next(n, top))
        c++;
    return c;
}

int tree_ephemerals_foreach(const struct tree *t, int64_t owner,
                            tree_node_cb cb, void *data)
{
    struct tree_owner *o = tb_map_get(&t->owners, (uint64_t)owner);
    struct tb_queue *q, *next;
    struct tree_node *n;
    int rv;

    if (o == NULL)
        return 0;
    for (q = o->nodes.next; q != &o->nodes; q = next) {
        next = q->next; /* cb may delete the node */
        n = tree__node_of(q);
        if (!n->dead && (rv = cb(data, n)) != 0)
            return rv;
    }
    return 0;
}

uint64_t tree_ephemerals_count(const struct tree *t, int64_t owner)
{
    struct tree_owner *o = tb_map_get(&t->owners, (uint64_t)owner);

    return o ? o->count : 0;
}

int tree_owners_foreach(const struct tree *t,
                        int (*cb)(void *data, int64_t owner), void *data)
{
    size_t i;
    uint64_t key;
    void *val;
    int rv;

    for (i = 0; tb_map_next(&t->owners, &i, &key, &val);)
        if ((rv = cb(data, (int64_t)key)) != 0)
            return rv;
    return 0;
}

int tree_node_expired(const struct tree_node *n, int64_t now)
{
    int64_t ttl, elapsed;

    if (n->dead || n->nkids > 0)
        return 0;
    switch (tree_owner_kind(tree__owner(n))) {
    case TREE_CONTAINER: /* that ever had a child: a counter that wrapped
                            past INT32_MAX (a busy lock's) is negative */
        return n->ccount != 0;
    case TREE_TTL:
        ttl = tree_owner_ttl(tree__owner(n));
        if (__builtin_sub_overflow(now, n->mtime, &elapsed))
            return ttl != 0 && now > n->mtime;
        return ttl != 0 && elapsed > ttl;
    default:
        return 0;
    }
}

int tree_candidates(const struct tree *t, int64_t now, tree_node_cb cb,
                    void *data)
{
    struct tb_queue *q, *next;
    struct tree_node *n;
    int rv;

    for (q = t->special.next; q != &t->special; q = next) {
        next = q->next;
        n = tree__node_of(q);
        if (tree_node_expired(n, now) && (rv = cb(data, n)) != 0)
            return rv;
    }
    return 0;
}

/* Mutations. */

int tree_create(struct tree *t, struct tree_node *parent, struct tb_str path,
                struct tb_str data, struct tree_acl *acl, int64_t owner,
                int64_t zxid, int64_t time, struct tree_node **out)
{
    struct tree_node *n;
    struct tree_undo *u;

    n = tree__node_alloc(path, data, owner);
    if (n == NULL)
        return TB_ENOMEM;
    if (tree__kids_reserve(parent) != 0 || tree__undo_reserve(t) != 0 ||
        tree__hash_reserve(t) != 0 || tree__owner_prepare(t, owner) != 0) {
        tree__node_free(t, n);
        return TB_ENOMEM;
    }

    if (t->in_txn) {
        u = tree__undo_push(t, UNDO_CREATE, n);
        u->u.create.pzxid = parent->pzxid;
        u->u.create.ccount = parent->ccount;
    }
    n->acl = acl;
    n->czxid = n->mzxid = n->pzxid = zxid;
    n->ctime = n->mtime = time;
    tree__kids_add(parent, n);
    parent->ccount = (int32_t)((uint32_t)parent->ccount + 1);
    parent->pzxid = zxid;
    tree__hash_insert(t, n);
    tree__link(t, n);
    tree__quota_created(t, n);
    if (out)
        *out = n;
    return 0;
}

int tree_delete(struct tree *t, struct tree_node *n, int64_t zxid)
{
    struct tree_node *p = n->parent;
    struct tree_undo *u;

    assert(p != NULL && n->nkids == 0 && !n->dead);
    tree__quota_add(t, n, -1, -(int64_t)n->data_len);
    if (tree__undo_reserve(t) != 0)
        return TB_ENOMEM;
    if (t->in_txn) {
        u = tree__undo_push(t, UNDO_DELETE, n);
        u->u.del.pzxid = p->pzxid;
        u->u.del.slot = n->slot;
    }
    tree__hash_remove(t, n);
    kids_remove(p, n);
    /* DataTree.deleteNode only ever raises pzxid. */
    if (zxid > p->pzxid)
        p->pzxid = zxid;
    if (t->in_txn) {
        n->dead = 1;
        return 0;
    }
    tree__kids_shrink(p);
    tree__unlink(t, n);
    tree__node_free(t, n);
    return 0;
}

int tree__put_data(struct tree *t, struct tree_node *n, struct tb_str data)
{
    uint8_t *copy = NULL;

    if (data.len > INT32_MAX)
        return TB_ENOMEM;
    if (data.len > 0) {
        copy = malloc(data.len);
        if (copy == NULL)
            return TB_ENOMEM;
        memcpy(copy, data.ptr, data.len);
    }
    if (tree__undo_reserve(t) != 0) {
        free(copy);
        return TB_ENOMEM;
    }
    tree__undo_data(t, n);
    t->data_size = t->data_size - n->data_len + data.len;
    n->data = copy;
    n->data_len = (uint32_t)data.len;
    n->data_null = data.ptr == NULL;
    return 0;
}

int tree_set_data(struct tree *t, struct tree_node *n, struct tb_str data,
                  int32_t version, int64_t zxid, int64_t time)
{
    int64_t grown = (int64_t)data.len - (int64_t)n->data_len;
    int rv;

    if ((rv = tree__put_data(t, n, data)) != 0)
        return rv;
    n->version = version;
    n->mzxid = zxid;
    n->mtime = time;
    tree__quota_add(t, n, 0, grown);
    return 0;
}

int tree_set_acl(struct tree *t, struct tree_node *n, struct tree_acl *acl,
                 int32_t aversion)
{
    struct tree_undo *u;

    if (tree__undo_reserve(t) != 0)
        return TB_ENOMEM;
    if (t->in_txn) {
        u = tree__undo_push(t, UNDO_ACL, n);
        u->u.acl.acl = n->acl;
        u->u.acl.aversion = n->aversion;
    } else {
        tree_acl_unref(t, n->acl);
    }
    n->acl = acl;
    n->aversion = aversion;
    return 0;
}
