/* The tree's snapshot section: written in one pre-order walk of the
 * children arrays (so the bytes are a function of the tree's history, not
 * of hash-table layout) and restored with every length and invariant
 * checked.  A corrupt section is an error, never a crash.
 *
 * Tree section, big endian (embedded in the fsm snapshot, see fsm_snap.c):
 *
 *   OFFSET  SIZE  DESCRIPTION
 *        0     4  A = number of distinct ACL lists
 *        4     …  A × ACL list, numbered 0..A-1 in order of first use:
 *                      4  element count n (>= 1)
 *                      4  byte length L
 *                      L  the encoded vector<ACL> elements
 *        …     8  N = number of nodes
 *        …     …  N × node, pre-order (a parent before its children; the
 *                 children of one parent in their array order):
 *                      4  path length P (>= 1)
 *                      P  path bytes
 *                      4  data length D (-1 = null)
 *                      D  data bytes (none when D = -1)
 *                     48  czxid, mzxid, ctime, mtime, pzxid, ephemeralOwner
 *                     12  version, aversion, child-creation counter
 *                      4  ACL list index (< A)
 *
 * Invariants checked on restore: the first node is "/", every path is
 * valid and unique, every parent precedes its children and is not a plain
 * ephemeral node, the /zookeeper system nodes exist, TTL owners encode a
 * TTL in 1..2^40-1, pzxid >= czxid and >= every child's czxid, every ACL
 * list parses, is distinct and is used: what tree_check verifies holds
 * for any tree this accepts. */
#include <stdlib.h>

#include "common/path.h"
#include "tree/tree_int.h"

#define NODE_MIN_BYTES (4 + 1 + 4 + 48 + 12 + 4)

static void put_u32(struct tb_wbuf *w, uint32_t v)
{
    tb_put_I32(w, (int32_t)v);
}

/* Same walk as tree.c's, over the whole tree. */
static const struct tree_node *next_node(const struct tree_node *n)
{
    if (n->nkids > 0)
        return n->kids[0];
    while (n->parent != NULL) {
        if (n->slot + 1 < n->parent->nkids)
            return n->parent->kids[n->slot + 1];
        n = n->parent;
    }
    return NULL;
}

static void reset_acl_ids(const struct tree *t)
{
    size_t i;
    struct tree_acl *a;

    for (i = 0; i < t->nabuckets; i++)
        for (a = t->abuckets[i]; a != NULL; a = a->hnext)
            a->snap_id = 0;
}

static void put_node(struct tb_wbuf *w, const struct tree_node *n)
{
    put_u32(w, n->path_len);
    tb_wbuf_put(w, n->path, n->path_len);
    tb_put_I32(w, n->data_null ? -1 : (int32_t)n->data_len);
    tb_wbuf_put(w, n->data, n->data_len);
    tb_put_I64(w, n->czxid);
    tb_put_I64(w, n->mzxid);
    tb_put_I64(w, n->ctime);
    tb_put_I64(w, n->mtime);
    tb_put_I64(w, n->pzxid);
    tb_put_I64(w, tree__owner(n));
    tb_put_I32(w, n->version);
    tb_put_I32(w, n->aversion);
    tb_put_I32(w, n->ccount);
    put_u32(w, n->acl->snap_id - 1);
}

void tree_snapshot(const struct tree *t, struct tb_wbuf *w)
{
    const struct tree_node *n;
    size_t count_at = w->len;
    uint32_t nacl = 0;

    assert(!t->in_txn);
    reset_acl_ids(t);
    put_u32(w, 0); /* patched below */
    for (n = t->root; n != NULL; n = next_node(n)) {
        if (n->acl->snap_id != 0)
            continue;
        n->acl->snap_id = ++nacl;
        tb_put_I32(w, n->acl->n);
        put_u32(w, n->acl->len);
        tb_wbuf_put(w, n->acl->raw, n->acl->len);
    }
    if (!w->oom)
        tb_store_be32(w->base + count_at, nacl);
    tb_put_I64(w, (int64_t)t->count);
    for (n = t->root; n != NULL; n = next_node(n))
        put_node(w, n);
}

/* Restore. */

struct restore {
    struct tb_rd *r;
    struct tree *t;
    struct tree_acl **acls;
    uint32_t nacl;
};

#define CORRUPT TB_EDATAINCONSISTENCY

static int get_u32(struct tb_rd *r, uint32_t *v)
{
    return tb_get_I32(r, (int32_t *)v) == 0 ? 0 : CORRUPT;
}

static int get_bytes(struct tb_rd *r, size_t n, const uint8_t **p)
{
    if ((size_t)(r->end - r->pos) < n)
        return CORRUPT;
    *p = r->pos;
    r->pos += n;
    return 0;
}

static int acl_list_ok(int32_t n, const uint8_t *p, size_t len)
{
    struct tb_rd it = tb_rd_make(p, len);
    struct tb_acl a;
    int32_t i;

    for (i = 0; i < n; i++)
        if (tb_vec_next_acl(&it, &a) != 1)
            return 0;
    return it.pos == it.end;
}

static int restore_acls(struct restore *s)
{
    uint32_t i, len;
    int32_t n;
    const uint8_t *p;
    int rv;

    if (get_u32(s->r, &s->nacl) != 0 ||
        s->nacl > (size_t)(s->r->end - s->r->pos) / 8)
        return CORRUPT;
    s->acls = calloc(s->nacl ? s->nacl : 1, sizeof *s->acls);
    if (s->acls == NULL)
        return TB_ENOMEM;
    for (i = 0; i < s->nacl; i++) {
        if (tb_get_I32(s->r, &n) != 0 || get_u32(s->r, &len) != 0 || n < 1 ||
            get_bytes(s->r, len, &p) != 0 || !acl_list_ok(n, p, len))
            return CORRUPT;
        rv = tree_acl_intern(s->t, (struct tb_vec){n, p, len}, &s->acls[i]);
        if (rv != 0)
            return rv;
        if (s->acls[i]->refs != 1) { /* the same list twice */
            tree_acl_unref(s->t, s->acls[i]);
            s->acls[i] = NULL;
            return CORRUPT;
        }
    }
    return 0;
}

static int owner_ok(int64_t owner)
{
    if (tree_owner_kind(owner) != TREE_TTL)
        return 1;
    return (owner & 0x00FFFF0000000000LL) == 0 && tree_owner_ttl(owner) > 0;
}

/* Reads the fields after path and data into f (a node's stats; its owner
 * and ACL index in owner and acl). */
static int read_fields(struct restore *s, struct tree_node *f, int64_t *owner,
                       uint32_t *acl)
{
    if (tb_get_I64(s->r, &f->czxid) != 0 || tb_get_I64(s->r, &f->mzxid) != 0 ||
        tb_get_I64(s->r, &f->ctime) != 0 || tb_get_I64(s->r, &f->mtime) != 0 ||
        tb_get_I64(s->r, &f->pzxid) != 0 || tb_get_I64(s->r, owner) != 0 ||
        tb_get_I32(s->r, &f->version) != 0 ||
        tb_get_I32(s->r, &f->aversion) != 0 ||
        tb_get_I32(s->r, &f->ccount) != 0 || get_u32(s->r, acl) != 0 ||
        *acl >= s->nacl || !owner_ok(*owner) || f->pzxid < f->czxid)
        return CORRUPT;
    return 0;
}

/* Finds and checks the parent of a new node; NULL for the root. */
static int find_parent(struct restore *s, struct tb_str path,
                       struct tree_node **parent)
{
    *parent = NULL;
    if (tb_path_validate(path) != 0 || tree_find(s->t, path) != NULL)
        return CORRUPT;
    if (s->t->root == NULL)
        return path.len == 1 ? 0 : CORRUPT;
    if (path.len == 1)
        return CORRUPT;
    *parent = tree_find(s->t, tb_path_parent(path));
    if (*parent == NULL ||
        tree_owner_kind(tree__owner(*parent)) == TREE_EPHEMERAL)
        return CORRUPT;
    return 0;
}

static int restore_node(struct restore *s)
{
    uint32_t plen;
    int32_t dlen;
    const uint8_t *p, *d = NULL;
    struct tb_str data = {"", 0};
    struct tree_node *n, *parent, f;
    int64_t owner;
    uint32_t acl;
    int rv;

    if (get_u32(s->r, &plen) != 0 || get_bytes(s->r, plen, &p) != 0)
        return CORRUPT;
    if ((rv = find_parent(s, (struct tb_str){(const char *)p, plen},
                          &parent)) != 0)
        return rv;
    if (tb_get_I32(s->r, &dlen) != 0 || dlen < -1 ||
        (dlen > 0 && get_bytes(s->r, (size_t)dlen, &d) != 0))
        return CORRUPT;
    if (dlen == -1)
        data.ptr = NULL;
    else if (dlen > 0)
        data = (struct tb_str){(const char *)d, (size_t)dlen};
    if (read_fields(s, &f, &owner, &acl) != 0 ||
        (parent && f.czxid > parent->pzxid))
        return CORRUPT;
    n = tree__node_alloc((struct tb_str){(const char *)p, plen}, data, owner);
    if (n == NULL)
        return TB_ENOMEM;
    if ((rv = parent ? tree__kids_reserve(parent) : 0) != 0 ||
        (rv = tree__hash_reserve(s->t)) != 0 ||
        (rv = tree__owner_prepare(s->t, owner)) != 0) {
        tree__node_free(s->t, n);
        return rv;
    }
    n->czxid = f.czxid;
    n->mzxid = f.mzxid;
    n->ctime = f.ctime;
    n->mtime = f.mtime;
    n->pzxid = f.pzxid;
    n->version = f.version;
    n->aversion = f.aversion;
    n->ccount = f.ccount;
    n->acl = s->acls[acl];
    tree_acl_ref(n->acl);
    if (parent)
        tree__kids_add(parent, n);
    else
        s->t->root = n;
    tree__hash_insert(s->t, n);
    tree__link(s->t, n);
    return 0;
}

/* Every tree's own nodes are there, and no session's, TTL's or
 * container's: a close, an expiry or a sweep would delete such a node,
 * and t->quota would point at freed memory. */
static int system_nodes_ok(const struct tree *t)
{
    static const char *const names[] = {"/", "/zookeeper", "/zookeeper/quota",
                                        "/zookeeper/config"};
    const struct tree_node *n;
    size_t i;

    for (i = 0; i < sizeof names / sizeof names[0]; i++)
        if ((n = tree_find(t, tb_str_c(names[i]))) == NULL ||
            tree__owner(n) != 0)
            return 0;
    return 1;
}

static int restore_nodes(struct restore *s)
{
    uint64_t i, count;
    int rv;

    if (tb_get_I64(s->r, (int64_t *)&count) != 0 ||
        count > (uint64_t)(s->r->end - s->r->pos) / NODE_MIN_BYTES ||
        count == 0)
        return CORRUPT;
    for (i = 0; i < count; i++)
        if ((rv = restore_node(s)) != 0)
            return rv;
    s->t->quota = tree_find(s->t, TB_STR("/zookeeper/quota"));
    return system_nodes_ok(s->t) ? 0 : CORRUPT;
}

/* Drops the restore's own reference on each list; one that no node took
 * was never written by tree_snapshot. */
static int release_acls(struct restore *s, int rv)
{
    uint32_t i;

    for (i = 0; i < s->nacl && s->acls; i++) {
        if (s->acls[i] == NULL)
            continue;
        if (s->acls[i]->refs == 1 && rv == 0)
            rv = CORRUPT;
        tree_acl_unref(s->t, s->acls[i]);
    }
    free(s->acls);
    return rv;
}

int tree_restore(struct tree **out, struct tb_rd *r)
{
    struct restore s = {r, NULL, NULL, 0};
    int rv;

    if ((rv = tree__alloc(&s.t)) != 0)
        return rv;
    rv = restore_acls(&s);
    if (rv == 0)
        rv = restore_nodes(&s);
    rv = release_acls(&s, rv);
    if (rv != 0) {
        tree_close(s.t);
        return rv;
    }
    *out = s.t;
    return 0;
}
