/* Encoding and checking of the log entry and snapshot envelopes drawn in
 * envelope.h.  No I/O. */
#include "server/replog/envelope.h"

#include <string.h>

#include "common/common.h"

static const char snap_magic[8] = {'T', 'B', 'R', 'L', 'S', 'N', 'A', 'P'};

/* The fields' offsets, as envelope.h draws them. */
enum {
    ENTRY_LEN = 0,     /* payload length L */
    ENTRY_VERSION = 4, /* then 3 zero bytes */
    SNAP_MAGIC = 0,
    SNAP_VERSION = 8,
    SNAP_ZERO = 12,
    SNAP_INDEX = 16,      /* K */
    SNAP_STATE_LEN = 24,  /* L */
    SNAP_BASE_INDEX = 32, /* B */
    SNAP_DELTA_LEN = 40,  /* D */
    DELTA_INDEX = 0,
    DELTA_LEN = 8,
};

size_t replog__entry_size(size_t len)
{
    return REPLOG_ENTRY_HDR + ((len + 7) & ~(size_t)7);
}

void replog__entry_encode(void *dst, const void *payload, size_t len)
{
    uint8_t *p = dst;
    size_t size = replog__entry_size(len);

    assert(len <= UINT32_MAX);
    tb_store_be32(p + ENTRY_LEN, (uint32_t)len);
    p[ENTRY_VERSION] = REPLOG_ENTRY_VERSION;
    memset(p + ENTRY_VERSION + 1, 0, REPLOG_ENTRY_HDR - ENTRY_VERSION - 1);
    if (len > 0)
        memcpy(p + REPLOG_ENTRY_HDR, payload, len);
    memset(p + REPLOG_ENTRY_HDR + len, 0, size - REPLOG_ENTRY_HDR - len);
}

int replog__entry_decode(const void *buf, size_t buf_len, const void **payload,
                         size_t *len)
{
    const uint8_t *p = buf;
    uint32_t n;

    /* The length must be checked before it is trusted: the entry might come
     * from a peer running a different version. */
    if (buf_len < REPLOG_ENTRY_HDR || buf_len % 8 != 0)
        return TB_EMARSHALLING;
    if (p[ENTRY_VERSION] != REPLOG_ENTRY_VERSION || p[ENTRY_VERSION + 1] != 0 ||
        p[ENTRY_VERSION + 2] != 0 || p[ENTRY_VERSION + 3] != 0)
        return TB_EMARSHALLING;
    n = tb_load_be32(p + ENTRY_LEN);
    if (replog__entry_size(n) != buf_len)
        return TB_EMARSHALLING;
    *payload = p + REPLOG_ENTRY_HDR;
    *len = n;
    return 0;
}

void replog__snap_header_encode(uint8_t hdr[REPLOG_SNAP_HDR], uint64_t index,
                                uint64_t state_len, uint64_t base_index,
                                uint64_t delta_len)
{
    memcpy(hdr + SNAP_MAGIC, snap_magic, sizeof snap_magic);
    tb_store_be32(hdr + SNAP_VERSION, REPLOG_SNAP_VERSION);
    tb_store_be32(hdr + SNAP_ZERO, 0);
    tb_store_be64(hdr + SNAP_INDEX, index);
    tb_store_be64(hdr + SNAP_STATE_LEN, state_len);
    tb_store_be64(hdr + SNAP_BASE_INDEX, base_index);
    tb_store_be64(hdr + SNAP_DELTA_LEN, delta_len);
}

int replog__snap_decode(const void *buf, size_t buf_len,
                        struct replog_snap *out)
{
    const uint8_t *p = buf;
    uint64_t state_len, delta_len, rest;

    if (buf_len < REPLOG_SNAP_HDR ||
        memcmp(p + SNAP_MAGIC, snap_magic, sizeof snap_magic) != 0)
        return TB_EMARSHALLING;
    if (tb_load_be32(p + SNAP_VERSION) != REPLOG_SNAP_VERSION ||
        tb_load_be32(p + SNAP_ZERO) != 0)
        return TB_EMARSHALLING;
    state_len = tb_load_be64(p + SNAP_STATE_LEN);
    delta_len = tb_load_be64(p + SNAP_DELTA_LEN);
    rest = buf_len - REPLOG_SNAP_HDR;
    if (state_len > rest || delta_len != rest - state_len)
        return TB_EMARSHALLING;
    out->index = tb_load_be64(p + SNAP_INDEX);
    out->base_index = tb_load_be64(p + SNAP_BASE_INDEX);
    if (out->base_index > out->index)
        return TB_EMARSHALLING;
    out->state = p + REPLOG_SNAP_HDR;
    out->state_len = (size_t)state_len;
    out->delta = out->state + state_len;
    out->delta_len = (size_t)delta_len;
    return 0;
}

void replog__delta_put(struct tb_wbuf *w, int64_t index, const void *payload,
                       size_t len)
{
    uint8_t hdr[REPLOG_DELTA_HDR];

    tb_store_be64(hdr + DELTA_INDEX, (uint64_t)index);
    tb_store_be32(hdr + DELTA_LEN, (uint32_t)len);
    tb_wbuf_put(w, hdr, sizeof hdr);
    tb_wbuf_put(w, payload, len);
}

int replog__delta_next(struct replog_snap *s, int64_t *index,
                       const void **payload, size_t *len)
{
    uint64_t i;
    uint32_t n;

    if (s->delta_len == 0)
        return 0;
    if (s->delta_len < REPLOG_DELTA_HDR)
        return TB_EMARSHALLING;
    i = tb_load_be64(s->delta + DELTA_INDEX);
    n = tb_load_be32(s->delta + DELTA_LEN);
    /* Each record moves base_index on, so order and range are one check. */
    if (i <= s->base_index || i > s->index ||
        n > s->delta_len - REPLOG_DELTA_HDR)
        return TB_EMARSHALLING;
    *index = (int64_t)i;
    *payload = s->delta + REPLOG_DELTA_HDR;
    *len = n;
    s->base_index = i;
    s->delta += REPLOG_DELTA_HDR + n;
    s->delta_len -= REPLOG_DELTA_HDR + n;
    return 1;
}
