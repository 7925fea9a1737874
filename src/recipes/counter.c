/* The shared counter: Curator's DistributedAtomicLong, one persistent
 * node whose data is the value as 8 bytes, big-endian (Java's
 * ByteBuffer.putLong); a missing node or empty data reads as 0.  Curator
 * and libtumbler clients thus count on the same node.
 *
 * Every change is optimistic: read the value and its version, write the
 * new value on that version, and on a version conflict (someone wrote in
 * between) read again.  Each conflict means another change succeeded, so
 * the retries end, and no change is lost: a write lands only on the
 * version it was computed from.  A missing node is created (its parents
 * as containers, as Curator's creatingParentContainersIfNeeded), and a
 * create that meets the node made by another is a conflict too.
 *
 * A write whose reply is lost with the connection may or may not have
 * been applied, and the node keeps nothing to tell which (Curator's layout
 * has no room for it): it is reported, TB_ECONNECTIONLOSS, not retried,
 * which could count twice. */
#include <string.h>

#include "recipes/rcp.h"

enum ctr_op { CTR_GET, CTR_ADD, CTR_SET, CTR_CAS };

struct ctr {
    struct tb_client *c;
    char *path;
    int op;
    int64_t arg;     /* ADD: the delta; SET, CAS: the new value */
    int32_t version; /* CAS: the expected version */
    int64_t value;   /* the value being written */
    tb_counter_cb cb;
    void *data;
};

void rcp_counter_encode(int64_t v, unsigned char b[8])
{
    uint64_t u = (uint64_t)v;
    int i;

    for (i = 7; i >= 0; i--, u >>= 8)
        b[i] = (unsigned char)(u & 0xff);
}

/* Curator's bytesToValue: null or empty is 0; anything but 8 bytes is a
 * node of another layout. */
int rcp_counter_decode(const void *p, size_t len, int64_t *v)
{
    const unsigned char *b = p;
    uint64_t u = 0;
    size_t i;

    if (p == NULL || len == 0) {
        *v = 0;
        return 0;
    }
    if (len != 8)
        return TB_EDATAINCONSISTENCY;
    for (i = 0; i < 8; i++)
        u = (u << 8) | b[i];
    *v = (int64_t)u;
    return 0;
}

static void ctr_end(struct ctr *k, int rc, int64_t value, int32_t version)
{
    if (k->cb != NULL)
        k->cb(rc, rc == 0 ? value : 0, rc == 0 ? version : 0, k->data);
    free(k->path);
    free(k);
}

static int ctr_read(struct ctr *k);

/* A conflict: another change came first.  CAS reports it; the others
 * read again and recompute. */
static void conflict(struct ctr *k)
{
    int rv;

    if (k->op == CTR_CAS) {
        ctr_end(k, TB_EBADVERSION, 0, 0);
        return;
    }
    if ((rv = ctr_read(k)) != 0)
        ctr_end(k, rv, 0, 0);
}

static void on_set(struct tb_client *c, int rc, const struct tb_stat *st,
                   void *data)
{
    struct ctr *k = data;

    (void)c;
    if (rc == TB_EBADVERSION || rc == TB_ENONODE)
        conflict(k);
    else
        ctr_end(k, rc, k->value, rc == 0 ? st->version : 0);
}

static void on_create(int rc, void *data)
{
    struct ctr *k = data;

    if (rc == TB_ENODEEXISTS && k->op == CTR_CAS && k->version == -1) {
        /* A look says which: a counter there (a conflict), or data of
         * another layout. */
        if ((rc = ctr_read(k)) != 0)
            ctr_end(k, rc, 0, 0);
    } else if (rc == TB_ENODEEXISTS) {
        conflict(k);
    } else {
        ctr_end(k, rc, k->value, 0); /* a new node's version */
    }
}

static int ctr_create(struct ctr *k)
{
    unsigned char b[8];

    rcp_counter_encode(k->value, b);
    return rcp_create_in(k->c, k->path, b, sizeof b, TB_PERSISTENT, on_create,
                         k);
}

/* Writes k->value on `version`, or creates the node if it has none.  A
 * version is any int: past 2^31 writes the server's wraps negative, as
 * ZooKeeper's does (and at -1 setData matches any, a race the protocol
 * leaves once in 2^32 writes). */
static int ctr_write(struct ctr *k, int exists, int32_t version)
{
    unsigned char b[8];

    if (!exists)
        return ctr_create(k);
    rcp_counter_encode(k->value, b);
    return tb_set_data(k->c, k->path, b, sizeof b, version, on_set, k);
}

static void on_get(struct tb_client *c, int rc, const void *value, size_t len,
                   const struct tb_stat *st, void *data)
{
    struct ctr *k = data;
    int32_t version = -1;
    int64_t cur = 0;
    int exists = rc == 0;

    (void)c;
    if (rc == 0) {
        version = st->version;
        rc = rcp_counter_decode(value, len, &cur);
    } else if (rc == TB_ENONODE) {
        rc = 0; /* no node yet: 0, and a write creates it */
    }
    if (rc != 0 || k->op == CTR_GET) {
        ctr_end(k, rc, cur, version);
        return;
    }
    /* A compare-and-set looked first, so that data of another layout (a
     * SharedCount's 4 bytes) is refused, not written over. */
    if (k->op == CTR_CAS && (exists ? version != k->version || k->version == -1
                                    : k->version != -1)) {
        ctr_end(k, TB_EBADVERSION, 0, 0);
        return;
    }
    /* Two's-complement wrap on overflow, as Java's long addition. */
    k->value =
        k->op == CTR_ADD ? (int64_t)((uint64_t)cur + (uint64_t)k->arg) : k->arg;
    if ((rc = ctr_write(k, exists, version)) != 0)
        ctr_end(k, rc, 0, 0);
}

static int ctr_read(struct ctr *k)
{
    return tb_get_data(k->c, k->path, NULL, NULL, on_get, k);
}

static int ctr_start(struct tb_client *c, const char *path, int op, int64_t arg,
                     int32_t version, tb_counter_cb cb, void *data)
{
    struct ctr *k;
    int rv;

    if (c == NULL || !rcp_path_ok(path) || strcmp(path, "/") == 0)
        return TB_EINVAL;
    k = calloc(1, sizeof *k);
    if (k == NULL || (k->path = rcp_strdup(path)) == NULL) {
        free(k);
        return TB_ENOMEM;
    }
    k->c = c;
    k->op = op;
    k->arg = arg;
    k->version = version;
    k->value = arg;
    k->cb = cb;
    k->data = data;
    rv = op == CTR_CAS && version == -1 ? ctr_create(k) : ctr_read(k);
    if (rv != 0) {
        free(k->path);
        free(k);
    }
    return rv;
}

int tb_counter_get(struct tb_client *c, const char *path, tb_counter_cb cb,
                   void *data)
{
    return ctr_start(c, path, CTR_GET, 0, 0, cb, data);
}

int tb_counter_add(struct tb_client *c, const char *path, int64_t delta,
                   tb_counter_cb cb, void *data)
{
    return ctr_start(c, path, CTR_ADD, delta, 0, cb, data);
}

int tb_counter_set(struct tb_client *c, const char *path, int64_t value,
                   tb_counter_cb cb, void *data)
{
    return ctr_start(c, path, CTR_SET, value, 0, cb, data);
}

int tb_counter_cas(struct tb_client *c, const char *path, int32_t version,
                   int64_t value, tb_counter_cb cb, void *data)
{
    return ctr_start(c, path, CTR_CAS, value, version, cb, data);
}

/* ---- synchronous forms ---- */

struct ctr_wait {
    struct rcp_wait w;
    int32_t version;
    struct tb_client *c;
    const char *path;
    int op;
    int64_t arg;
    int32_t version_in;
};

static void on_sync_done(int rc, int64_t value, int32_t version, void *data)
{
    struct ctr_wait *cw = data;

    cw->version = version; /* published by rcp_wait_done's lock */
    rcp_wait_done(&cw->w, rc, value, NULL);
}

static int ctr_sync_start(void *arg, int timeout_ms, struct rcp_wait *w)
{
    struct ctr_wait *cw = arg;

    (void)timeout_ms;
    (void)w; /* cw->w: on_sync_done completes it */
    return ctr_start(cw->c, cw->path, cw->op, cw->arg, cw->version_in,
                     on_sync_done, cw);
}

static int ctr_sync(struct tb_client *c, const char *path, int op, int64_t arg,
                    int32_t version, int64_t *value, int32_t *version_out)
{
    struct ctr_wait cw = {
        .c = c, .path = path, .op = op, .arg = arg, .version_in = version};
    int rv;

    if (c == NULL)
        return TB_EINVAL;
    rv = rcp_sync_run(c, &cw.w, -1, ctr_sync_start, NULL, &cw);
    if (rv == 0 && value != NULL)
        *value = cw.w.token;
    if (rv == 0 && version_out != NULL)
        *version_out = cw.version;
    return rv;
}

int tb_counter_get_sync(struct tb_client *c, const char *path, int64_t *value,
                        int32_t *version)
{
    return ctr_sync(c, path, CTR_GET, 0, 0, value, version);
}

int tb_counter_add_sync(struct tb_client *c, const char *path, int64_t delta,
                        int64_t *value)
{
    return ctr_sync(c, path, CTR_ADD, delta, 0, value, NULL);
}

int tb_counter_set_sync(struct tb_client *c, const char *path, int64_t value)
{
    return ctr_sync(c, path, CTR_SET, value, 0, NULL, NULL);
}

int tb_counter_cas_sync(struct tb_client *c, const char *path, int32_t version,
                        int64_t value, int32_t *new_version)
{
    return ctr_sync(c, path, CTR_CAS, value, version, NULL, new_version);
}
