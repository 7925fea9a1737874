/* The fsm snapshot: last zxid, the session table and the tree, in one
 * buffer that is a pure function of the state (two replicas that applied
 * the same log produce identical bytes).
 *
 * Format, big endian:
 *
 *   OFFSET  SIZE  DESCRIPTION
 *        0     8  magic "TBSNAP\r\n"
 *        8     8  checksum of bytes 16 .. 48+B (see checksum())
 *       16     4  format version = 2
 *       20     4  reserved, 0
 *       24     8  last applied zxid
 *       32     8  body length B
 *       40     8  zxid bias: the entry at log index i is zxid i + bias
 *                 (0 until a new epoch, fsm.c)
 *       48     B  body:
 *                   4  S = number of sessions
 *                   S × 28  session, in creation order:
 *                          8  session id
 *                          4  timeout (ms)
 *                         16  password
 *                   …  tree section (format in src/tree/tree_snap.c)
 *   48 + B     …  ignored (room for padding by a storage layer)
 *
 * Version 1 had no bias (a 40-byte header) and is still read.
 *
 * Restore checks the magic, version, lengths and checksum, then parses
 * with every count bounded by the bytes left, and finally that every
 * ephemeral node's owner is a session in the table.  The current state is
 * replaced only when all of that succeeded. */
#include <stdlib.h>

#include "server/fsm/fsm_int.h"

#define SNAP_MAGIC   "TBSNAP\r\n"
#define SNAP_VERSION 2
#define HEADER_SIZE  48
#define HEADER_V1    40
#define SESSION_SIZE 28

/* A 64-bit multiply-xorshift over big-endian words: fast (a snapshot can
 * be gigabytes) and machine-independent; it guards against damage, not
 * against an adversary. */
static uint64_t checksum(const uint8_t *p, size_t n)
{
    uint64_t h = 0x6a09e667f3bcc909ULL ^ n, w;
    uint8_t tail[8] = {0};

    for (; n >= 8; p += 8, n -= 8) {
        w = tb_load_be64(p);
        h = (h ^ w) * 0x9fb21c651e98df25ULL;
        h ^= h >> 28;
    }
    memcpy(tail, p, n);
    h = (h ^ tb_load_be64(tail)) * 0x9fb21c651e98df25ULL;
    h ^= h >> 32;
    return h;
}

int fsm_snapshot(const struct fsm *f, struct tb_wbuf *w)
{
    size_t start = w->len, body;
    const struct tb_queue *q;
    const struct fsm_session *s;
    uint8_t *h;

    tb_wbuf_put(w, SNAP_MAGIC, 8);
    tb_put_I64(w, 0); /* checksum, patched below */
    tb_put_I32(w, SNAP_VERSION);
    tb_put_I32(w, 0);
    tb_put_I64(w, f->last_zxid);
    tb_put_I64(w, 0); /* body length, patched below */
    tb_put_I64(w, f->zxid_bias);
    body = w->len;
    tb_put_I32(w, (int32_t)f->sessions.count);
    TB_QUEUE_FOREACH (q, &f->sessions_list) {
        s = TB_CONTAINER_OF(q, struct fsm_session, link);
        tb_put_I64(w, s->id);
        tb_put_I32(w, s->timeout);
        tb_wbuf_put(w, s->passwd, sizeof s->passwd);
    }
    tree_snapshot(f->tree, w);
    if (w->oom)
        return TB_ENOMEM;
    h = w->base + start;
    tb_store_be64(h + 32, (uint64_t)(w->len - body));
    tb_store_be64(h + 8, checksum(h + 16, w->len - start - 16));
    return 0;
}

#define CORRUPT TB_EDATAINCONSISTENCY

struct restored {
    struct tb_map sessions;
    struct tb_queue list;
    struct tree *tree;
};

static int restore_sessions(struct restored *s, struct tb_rd *r)
{
    uint32_t count, i;
    struct fsm_session *x;

    if (tb_get_I32(r, (int32_t *)&count) != 0 ||
        count > (size_t)(r->end - r->pos) / SESSION_SIZE)
        return CORRUPT;
    for (i = 0; i < count; i++) {
        x = malloc(sizeof *x);
        if (x == NULL)
            return TB_ENOMEM;
        tb_get_I64(r, &x->id);
        tb_get_I32(r, &x->timeout);
        memcpy(x->passwd, r->pos, sizeof x->passwd);
        r->pos += sizeof x->passwd;
        if (tree_owner_kind(x->id) != TREE_EPHEMERAL ||
            tb_map_get(&s->sessions, (uint64_t)x->id) != NULL) {
            free(x);
            return CORRUPT;
        }
        if (tb_map_put(&s->sessions, (uint64_t)x->id, x) != 0) {
            free(x);
            return TB_ENOMEM;
        }
        tb_queue_insert_tail(&s->list, &x->link);
    }
    return 0;
}

static int owner_known(void *data, int64_t owner)
{
    const struct restored *s = data;

    return tb_map_get(&s->sessions, (uint64_t)owner) ? 0 : CORRUPT;
}

/* No node may carry a zxid after the snapshot's own: a replica restoring
 * it would later reuse those zxids for other changes. */
static int zxids_within(const struct tree *t, int64_t zxid)
{
    struct tree_node **stack = NULL, **grown, *n;
    size_t depth = 0, cap = 0;
    struct tb_stat st;
    uint32_t i, k;
    int rv = 0;

    n = tree_root(t);
    for (;;) {
        tree_node_stat(n, &st);
        if (st.czxid > zxid || st.mzxid > zxid || st.pzxid > zxid) {
            rv = CORRUPT;
            break;
        }
        k = tree_node_nchildren(n);
        if (depth + k > cap) {
            cap = (depth + k) * 2;
            grown = realloc(stack, cap * sizeof *stack);
            if (grown == NULL) {
                rv = TB_ENOMEM;
                break;
            }
            stack = grown;
        }
        for (i = 0; i < k; i++)
            stack[depth++] = tree_node_child(n, i);
        if (depth == 0)
            break;
        n = stack[--depth];
    }
    free(stack);
    return rv;
}

static int parse(struct restored *s, const uint8_t *p, size_t len,
                 int64_t *zxid, int64_t *bias)
{
    struct tb_rd r = tb_rd_make(p, len);
    uint64_t blen, sum;
    int32_t version, reserved;
    size_t hdr;
    int rv;

    if (len < HEADER_V1 || memcmp(p, SNAP_MAGIC, 8) != 0)
        return CORRUPT;
    r.pos += 8;
    tb_get_I64(&r, (int64_t *)&sum);
    tb_get_I32(&r, &version);
    tb_get_I32(&r, &reserved);
    tb_get_I64(&r, zxid);
    tb_get_I64(&r, (int64_t *)&blen);
    hdr = version == 1 ? HEADER_V1 : HEADER_SIZE;
    *bias = 0;
    if ((version != 1 && version != SNAP_VERSION) || reserved != 0 ||
        len < hdr || blen > len - hdr ||
        checksum(p + 16, hdr - 16 + (size_t)blen) != sum)
        return CORRUPT;
    if (version != 1)
        tb_get_I64(&r, bias);
    /* zxids are index + bias: one this far out is no log's, and the sum
     * would overflow. */
    if (*bias < 0 || *bias > FSM_ZXID_BIAS_MAX)
        return CORRUPT;
    r.end = r.pos + blen;
    if ((rv = restore_sessions(s, &r)) != 0 ||
        (rv = tree_restore(&s->tree, &r)) != 0)
        return rv;
    if (r.pos != r.end || (rv = zxids_within(s->tree, *zxid)) != 0)
        return rv ? rv : CORRUPT;
    return tree_owners_foreach(s->tree, owner_known, s);
}

int fsm_restore(struct fsm *f, const void *buf, size_t len)
{
    struct restored s;
    int64_t zxid = 0, bias = 0;
    int rv;

    tb_map_init(&s.sessions);
    tb_queue_init(&s.list);
    s.tree = NULL;
    rv = buf ? parse(&s, buf, len, &zxid, &bias) : CORRUPT;
    if (rv != 0) {
        fsm__sessions_free(&s.sessions, &s.list);
        tree_close(s.tree);
        return rv;
    }
    fsm__sessions_free(&f->sessions, &f->sessions_list);
    tree_close(f->tree);
    f->sessions = s.sessions;
    /* The list head moves: relink its ends to the new head. */
    tb_queue_init(&f->sessions_list);
    if (!tb_queue_empty(&s.list)) {
        f->sessions_list.next = s.list.next;
        f->sessions_list.prev = s.list.prev;
        f->sessions_list.next->prev = &f->sessions_list;
        f->sessions_list.prev->next = &f->sessions_list;
    }
    f->tree = s.tree;
    fsm__tree_hooks(f);
    f->last_zxid = zxid;
    f->zxid_bias = bias;
    return 0;
}
