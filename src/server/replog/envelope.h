/* On-disk envelopes of the replicated log: one around every log entry and
 * one around every snapshot.  Internal to src/server/replog.
 *
 * Why the entry envelope exists (G1): libraft 0.15's raft_uv pads each
 * entry to 8 bytes when writing a segment but sums the unpadded lengths
 * when loading it, so an entry whose length is not a multiple of 8 made
 * the segment unreadable at the next start.  We therefore only ever hand
 * raft buffers whose length is a multiple of 8 and carry the real payload
 * length inside.  raft_uv writes no segment now (an older tumblerd's data
 * directory holds one, with the bootstrap configuration, which is raft's
 * own entry): the log's entries are wal.c's records, which keep each
 * entry's size themselves (wal.h), so the envelope's length repeats it.
 * It stays while entries of existing logs, and of members running an
 * older tumblerd, carry it: nothing in a bare txn would tell it from an
 * enveloped one.
 *
 * Entry, version 1 (big endian):
 *
 *   OFFSET  SIZE  DESCRIPTION
 *        0     4  payload length L
 *        4     1  envelope version (1)
 *        5     3  zero
 *        8     L  payload
 *      8+L     P  zero padding, P = (8 - L % 8) % 8
 *
 *   Invariant: total length 8 + L + P is a multiple of 8 (and >= 8).
 *
 * Snapshot, version 2 (big endian).  snapstore.c writes these bytes,
 * LZ4-compressed, into a `state-<index>` file after the snapshot's own
 * header (term, index, configuration); restore is handed one buffer
 * holding exactly these bytes:
 *
 *   OFFSET  SIZE  DESCRIPTION
 *        0     8  magic "TBRLSNAP"
 *        8     4  envelope version (2)
 *       12     4  zero
 *       16     8  K: raft index of the last entry the snapshot includes
 *       24     8  state length L
 *       32     8  B: raft index of the last entry the state includes, B <= K
 *       40     8  delta length D
 *       48     L  the state machine's serialized state
 *     48+L     D  the entries B+1..K that reached the state machine, each:
 *                      8  raft index (strictly increasing, in B+1..K)
 *                      4  payload length n
 *                      n  payload (what apply was given)
 *
 * The delta exists because the state is serialized by a forked child while
 * the loop goes on applying (snapshot.c): the child's state is the one at
 * B, and raft records the snapshot at K, the index applied when the child
 * is done.  Restore applies the delta on top of the state.
 */
#ifndef TB_SERVER_RAFT_ENVELOPE_H
#define TB_SERVER_RAFT_ENVELOPE_H

#include <stddef.h>
#include <stdint.h>

#include "common/common.h"

#define REPLOG_ENTRY_HDR     8
#define REPLOG_ENTRY_VERSION 1
#define REPLOG_SNAP_HDR      48
#define REPLOG_SNAP_VERSION  2
#define REPLOG_DELTA_HDR     12

/* Bytes of the envelope around a payload of `len` bytes (len <= 2^32 - 16). */
size_t replog__entry_size(size_t len);
/* Writes the envelope of `len` payload bytes to dst[0..entry_size(len)). */
void replog__entry_encode(void *dst, const void *payload, size_t len);
/* Finds the payload inside an envelope; 0 or TB_EMARSHALLING. */
int replog__entry_decode(const void *buf, size_t buf_len, const void **payload,
                         size_t *len);

struct replog_snap {
    uint64_t index;      /* K */
    uint64_t base_index; /* B */
    const uint8_t *state;
    size_t state_len;
    const uint8_t *delta;
    size_t delta_len;
};

void replog__snap_header_encode(uint8_t hdr[REPLOG_SNAP_HDR], uint64_t index,
                                uint64_t state_len, uint64_t base_index,
                                uint64_t delta_len);
/* Checks a whole snapshot buffer's framing; 0 or TB_EMARSHALLING. */
int replog__snap_decode(const void *buf, size_t buf_len,
                        struct replog_snap *out);
/* Appends one delta record. */
void replog__delta_put(struct tb_wbuf *w, int64_t index, const void *payload,
                       size_t len);
/* Takes the next delta record off s->delta: 1, 0 at the end, or
 * TB_EMARSHALLING for a record that is cut short or out of order. */
int replog__delta_next(struct replog_snap *s, int64_t *index,
                       const void **payload, size_t *len);

#endif
