/* Txn building blocks for the state-machine fuzz targets; see fuzz_gen.h.
 * The choices lean towards inputs the fsm accepts (existing paths, valid
 * ACLs, live sessions) so that fuzzing reaches deep states, with a steady
 * share of the awkward cases that exercise its error precedence. */
#include "fuzz_gen.h"

const char fz_alice_digest[] = "alice:vv0SyQJbNQj6d0qg0XqCeRP3Fck=";
static const char bob_digest[] = "bob:Lx0W1AJOa0dYfSSgjzoTpsYPBcA=";

/* ---- hooks ---- */

void fz_log_init(struct fz_log *l)
{
    memset(l, 0, sizeof *l);
    tb_wbuf_init(&l->all);
    tb_wbuf_init(&l->body);
    /* Readers make cursors over body: never a NULL base (NULL + 0 is UB). */
    FZ_CHECK(tb_wbuf_reserve(&l->body, 1) == 0, "out of memory");
}

void fz_log_reset(struct fz_log *l)
{
    l->all.len = 0;
    l->body.len = 0;
    l->results = 0;
    l->events = 0;
    l->rc = 0;
    l->type = 0;
    l->zxid = 0;
}

void fz_log_free(struct fz_log *l)
{
    tb_wbuf_free(&l->all);
    tb_wbuf_free(&l->body);
}

static void on_event(void *data, int type, struct tb_str path,
                     struct tb_vec acl)
{
    struct fz_log *l = data;

    l->events++;
    tb_wbuf_put(&l->all, "E", 1);
    tb_put_I32(&l->all, type);
    tb_put_STR(&l->all, path);
    tb_put_VEC(&l->all, acl);
}

static void on_session(void *data, int64_t id, int32_t timeout, int opened)
{
    struct fz_log *l = data;

    tb_wbuf_put(&l->all, "S", 1);
    tb_put_I64(&l->all, id);
    tb_put_I32(&l->all, timeout);
    tb_put_I32(&l->all, opened);
}

static void on_result(void *data, const struct tb_txn *txn, int64_t zxid,
                      int rc, const uint8_t *body, size_t len)
{
    struct fz_log *l = data;

    l->results++;
    l->rc = rc;
    l->type = txn->type;
    l->zxid = zxid;
    l->body.len = 0;
    tb_wbuf_put(&l->body, body, len);
    tb_wbuf_put(&l->all, "R", 1);
    tb_put_I32(&l->all, txn->type);
    tb_put_I64(&l->all, zxid);
    tb_put_I32(&l->all, rc);
    /* An empty body may come as NULL or not, depending on buffer history. */
    tb_put_I32(&l->all, (int32_t)len);
    tb_wbuf_put(&l->all, body, len);
}

struct fsm_hooks fz_log_hooks(struct fz_log *l)
{
    return (struct fsm_hooks){l, on_event, on_result, on_session, NULL};
}

void fz_tree_check(const struct fsm *f, const char *who)
{
    char why[256] = "";
    int rv = tree_check(fsm_tree(f), why, sizeof why);

    FZ_CHECK(rv == 0, "%s: tree_check: %s", who, why);
}

/* ---- txns ---- */

void fz_txn_entry(const struct fz_txn *t, struct tb_wbuf *out)
{
    struct tb_txn txn = {
        .type = t->type,
        .session = t->session,
        .xid = 1,
        .time = t->time,
        .origin = 0,
        .super = t->super,
        .ids = t->ids,
        .body = {(const char *)t->body.base, t->body.len},
        .flags = t->flags,
    };

    if (txn.body.ptr == NULL)
        txn.body.ptr = ""; /* an empty body, not a null one */
    out->len = 0;
    tb_txn_encode(out, &txn);
    FZ_CHECK(!out->oom, "out of memory");
}

/* Pre-order walk with an explicit stack: restored trees can be deep. */
int fz_tree_walk(const struct tree *t, tree_node_cb cb, void *data)
{
    struct frame {
        struct tree_node *n;
        uint32_t next;
    } *st = NULL, *grown;
    size_t depth = 0, cap = 0;
    struct tree_node *n = tree_root(t);
    int rv;

    for (;;) {
        if ((rv = cb(data, n)) != 0)
            break;
        if (depth == cap) {
            cap = cap ? cap * 2 : 32;
            grown = realloc(st, cap * sizeof *st);
            FZ_CHECK(grown != NULL, "out of memory");
            st = grown;
        }
        st[depth++] = (struct frame){n, 0};
        /* The next node: first unvisited child of the deepest frame. */
        while (depth > 0 &&
               st[depth - 1].next >= tree_node_nchildren(st[depth - 1].n))
            depth--;
        if (depth == 0)
            break;
        n = tree_node_child(st[depth - 1].n, st[depth - 1].next++);
    }
    free(st);
    return rv;
}

struct node_at {
    uint64_t want, k;
    struct tree_node *found;
};

static int node_at_cb(void *data, struct tree_node *n)
{
    struct node_at *a = data;

    if (a->k++ != a->want)
        return 0;
    a->found = n;
    return 1;
}

struct tree_node *fz_node_at(const struct tree *t, uint32_t i)
{
    struct node_at a = {i % tree_count(t), 0, NULL};

    fz_tree_walk(t, node_at_cb, &a);
    FZ_CHECK(a.found != NULL, "pre-order walk found %llu of %llu nodes",
             (unsigned long long)a.k, (unsigned long long)tree_count(t));
    return a.found;
}

/* zookeeper_limits and zookeeper_stats under /zookeeper/quota make quotas. */
static const char *const names[] = {"a",
                                    "b",
                                    "c",
                                    "d",
                                    "n-",
                                    "x",
                                    "zookeeper",
                                    "config",
                                    "quota",
                                    "zookeeper_limits",
                                    "zookeeper_stats"};
#define NNAMES (sizeof names / sizeof names[0])

static const struct tb_str awkward[] = {
    {"/", 1},
    {"", 0},
    {"a", 1},
    {"/a/", 3},
    {"//a", 3},
    {"/a/.", 4},
    {"/a/..", 5},
    {"/zookeeper", 10},
    {"/zookeeper/quota", 16},
    {"/zookeeper/config", 17},
    {"/zookeeper/x", 12},
    {"/a\0b", 4},
    {"/a//b", 5},
    {"/\xc3\xa9", 3},
    {"/a/b/", 5},
    {"/.", 2},
    {"/...", 4},
    {"/\x01", 2},
    {"/\xef\xbf\xbf", 4},
    {"/-2147483648", 12},
    {NULL, 0},
};
#define NAWKWARD (sizeof awkward / sizeof awkward[0])

static void put_child(struct tb_wbuf *w, struct tb_str parent, const char *name)
{
    tb_wbuf_put(w, parent.ptr, parent.len);
    if (parent.len != 1)
        tb_wbuf_put(w, "/", 1);
    tb_wbuf_put(w, name, strlen(name));
}

struct tb_str fz_gen_path(struct fz_in *in, const struct tree *t,
                          struct tb_wbuf *w)
{
    uint8_t m = fz_u8(in);
    struct tb_str p;
    unsigned depth, i;

    w->len = 0;
    switch (m % 8) {
    case 0:
    case 1:
    case 2:
        p = tree_node_path(fz_node_at(t, fz_u8(in)));
        tb_wbuf_put(w, p.ptr, p.len);
        break;
    case 3:
    case 4:
        p = tree_node_path(fz_node_at(t, fz_u8(in)));
        put_child(w, p, names[(m >> 3) % NNAMES]);
        break;
    case 5:
        p = tree_node_path(fz_node_at(t, fz_u8(in)));
        put_child(w, p, ""); /* "/" stays "/" */
        break;
    case 6:
        depth = 1 + (m >> 3) % 3;
        for (i = 0; i < depth; i++) {
            tb_wbuf_put(w, "/", 1);
            p = tb_str_c(names[fz_u8(in) % NNAMES]);
            tb_wbuf_put(w, p.ptr, p.len);
        }
        break;
    default:
        if (m & 8)
            return awkward[fz_u8(in) % NAWKWARD];
        p = fz_bytes(in, fz_u8(in) % 24);
        tb_wbuf_put(w, p.ptr, p.len);
        break;
    }
    FZ_CHECK(!w->oom, "out of memory");
    return (struct tb_str){w->base ? (const char *)w->base : "", w->len};
}

struct tb_str fz_gen_data(struct fz_in *in)
{
    switch (fz_u8(in) % 4) {
    case 0:
        return TB_STR_NULL;
    case 1:
        return TB_STR("");
    default:
        return fz_bytes(in, fz_u8(in) % 40);
    }
}

static void put_acl(struct tb_wbuf *w, int32_t perms, const char *scheme,
                    const char *id)
{
    struct tb_acl a = {perms, {tb_str_c(scheme), tb_str_c(id)}};

    tb_put_acl(w, &a);
}

struct tb_vec fz_gen_acl(struct fz_in *in, struct tb_wbuf *w)
{
    uint8_t m = fz_u8(in);
    int32_t n = 1;

    w->len = 0;
    switch (m % 12) {
    case 3: /* valid only where the txn's flags make the scheme one */
        if (m & 0x10)
            put_acl(w, TB_PERM_ALL, "sasl", "alice");
        else
            put_acl(w, TB_PERM_READ, "x509", "CN=alice,O=Example");
        break;
    case 4:
        put_acl(w, TB_PERM_READ, "world", "anyone");
        break;
    case 5:
        put_acl(w, TB_PERM_ALL, "auth", "");
        break;
    case 6:
        put_acl(w, TB_PERM_ALL, "digest", fz_alice_digest);
        break;
    case 7:
        put_acl(w, TB_PERM_ALL, "ip", "127.0.0.1/8");
        put_acl(w, TB_PERM_READ | TB_PERM_CREATE, "world", "anyone");
        n = 2;
        break;
    case 8:
        put_acl(w, TB_PERM_ALL, "world", "nobody");
        break;
    case 9:
        return (struct tb_vec){0, NULL, 0};
    case 10:
        return (struct tb_vec){-1, NULL, 0};
    case 11:
        put_acl(w, (int32_t)(m >> 4) | 1, "world", "anyone");
        put_acl(w, (int32_t)(m >> 4) | 1, "world", "anyone");
        put_acl(w, TB_PERM_ADMIN, "digest", bob_digest);
        n = 3;
        break;
    default:
        put_acl(w, TB_PERM_ALL, "world", "anyone");
        break;
    }
    FZ_CHECK(!w->oom, "out of memory");
    return tb_vec_view(w, n);
}

static void put_id(struct tb_wbuf *w, const char *scheme, const char *id)
{
    struct tb_id x = {tb_str_c(scheme), tb_str_c(id)};

    tb_put_id(w, &x);
}

struct tb_vec fz_gen_ids(unsigned sel, struct tb_wbuf *w)
{
    int32_t n = 1;

    w->len = 0;
    switch (sel % 8) {
    case 1:
        put_id(w, "digest", fz_alice_digest);
        break;
    case 2:
        put_id(w, "digest", bob_digest);
        break;
    case 3:
        put_id(w, "ip", "127.0.0.1");
        put_id(w, "sasl", "alice");
        n = 2;
        break;
    case 4:
        put_id(w, "ip", "10.1.2.3");
        put_id(w, "digest", fz_alice_digest);
        put_id(w, "x509", "CN=alice,O=Example");
        n = 3;
        break;
    case 5:
        put_id(w, "super", "admin");
        break;
    case 6:
        return (struct tb_vec){-1, NULL, 0};
    case 7:
        put_id(w, "digest", fz_alice_digest);
        put_id(w, "digest", bob_digest);
        n = 2;
        break;
    default:
        return (struct tb_vec){0, NULL, 0};
    }
    FZ_CHECK(!w->oom, "out of memory");
    return tb_vec_view(w, n);
}

int32_t fz_gen_version(struct fz_in *in, int32_t current)
{
    switch (fz_u8(in) % 8) {
    case 2:
    case 3:
        return current;
    case 4:
        return (int32_t)((uint32_t)current + 1);
    case 5:
        return (int32_t)((uint32_t)current - 1);
    case 6:
        return 0;
    case 7:
        return (int32_t)fz_u32(in);
    default:
        return -1;
    }
}
