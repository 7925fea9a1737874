/* raft_fsm (version 2) over the server's struct replog_fsm: unwraps the
 * entry envelope before apply (G1), never reports an apply failure to raft
 * (G4), wraps snapshots in their envelope, measures the loop stall of each
 * snapshot and scales the snapshot threshold with the state size (G5).
 *
 * Version 2 (snapshot_finalize) lets raft write the state machine's own
 * buffer without copying it: we keep ownership and free it in finalize.
 * Version 3 (snapshot_async) would move serialization off the loop, but the
 * state cannot be read safely from another thread without a copy-on-write
 * view, so serialization stays on the loop and its duration is recorded. */
#include <malloc.h>
#include <string.h>

#include "server/raft/internal.h"

/* Passed from apply to the proposer's callback through raft's `result`:
 * the entry's envelope was unreadable and apply skipped it. */
static char malformed_marker;
void *const replog__malformed = &malformed_marker;

static int fsm_apply(struct raft_fsm *rf, const struct raft_buffer *buf,
                     void **result)
{
    struct replog *l = rf->data;
    /* raft_fsm.apply is not told the index, but raft applies in order and
     * advances last_applied only after apply returns (libraft 0.15,
     * replicationApply), so the entry being applied is the next one. */
    int64_t index = (int64_t)raft_last_applied(&l->raft) + 1;
    const void *payload;
    size_t len;

    *result = NULL;
    if (TB_NEVER(index <= l->applied_index))
        replog__logf(l, REPLOG_LOG_ERROR, "apply: index %lld after %lld",
                     (long long)index, (long long)l->applied_index);
    l->applied_index = index;
    if (replog__entry_decode(buf->base, buf->len, &payload, &len) != 0) {
        /* Returning non-zero would make raft retry this entry forever (G4).
         * Skipping it is deterministic: every replica reads the same bytes
         * and skips the same entry. */
        l->stats.entries_malformed++;
        replog__logf(l, REPLOG_LOG_ERROR,
                     "apply: entry %lld has a malformed envelope (%zu bytes),"
                     " skipped",
                     (long long)index, buf->len);
        *result = replog__malformed;
        return 0;
    }
    l->stats.entries_applied++;
    l->fsm.apply(l->fsm.data, index, payload, len);
    return 0;
}

void replog__snapshot_policy(struct replog *l, uint64_t state_bytes)
{
    uint64_t n = state_bytes / l->snap_bytes_per_entry;

    if (n < l->snap_min_threshold)
        n = l->snap_min_threshold;
    if (n > (1u << 30))
        n = 1u << 30;
    l->stats.last_snapshot_bytes = state_bytes;
    l->stats.free_limit = replog__disk_limit(l);
    if (l->stats.snapshot_threshold != (unsigned)n && state_bytes > 0)
        replog__logf(l, REPLOG_LOG_DEBUG,
                     "snapshot every %llu entries (state %llu bytes)",
                     (unsigned long long)n, (unsigned long long)state_bytes);
    l->stats.snapshot_threshold = (unsigned)n;
    raft_set_snapshot_threshold(&l->raft, (unsigned)n);
}

static int fsm_snapshot(struct raft_fsm *rf, struct raft_buffer *bufs[],
                        unsigned *n_bufs)
{
    struct replog *l = rf->data;
    uint64_t t0, dt;
    double ms;
    int rv;

    if (TB_NEVER(l->snap_active))
        return RAFT_BUSY; /* raft retries later */
    tb_wbuf_init(&l->snap_state);
    t0 = uv_hrtime();
    rv = l->fsm.snapshot(l->fsm.data, &l->snap_state);
    dt = uv_hrtime() - t0;
    ms = (double)dt / 1e6;
    l->stats.snapshot_stall_last_ms = ms;
    if (ms > l->stats.snapshot_stall_max_ms)
        l->stats.snapshot_stall_max_ms = ms;
    if (rv == 0 && l->snap_state.oom)
        rv = TB_ENOMEM;
    if (rv != 0) {
        tb_wbuf_free(&l->snap_state);
        l->stats.snapshots_failed++;
        replog__logf(l, REPLOG_LOG_ERROR, "snapshot at %lld failed: %s",
                     (long long)raft_last_applied(&l->raft), tb_strerror(rv));
        return rv == TB_ENOMEM ? RAFT_NOMEM : RAFT_IOERR;
    }
    /* takeSnapshot records last_applied as the snapshot's index. */
    replog__snap_header_encode(l->snap_hdr, raft_last_applied(&l->raft),
                               l->snap_state.len);
    l->snap_bufs[0].base = l->snap_hdr;
    l->snap_bufs[0].len = REPLOG_SNAP_HDR;
    l->snap_bufs[1].base = l->snap_state.base;
    l->snap_bufs[1].len = l->snap_state.len;
    *bufs = l->snap_bufs;
    *n_bufs = l->snap_state.len > 0 ? 2 : 1;
    l->snap_active = 1;
    l->stats.snapshots_taken++;
    replog__logf(l, REPLOG_LOG_DEBUG,
                 "snapshot at %lld: %zu bytes, loop stalled %.1f ms",
                 (long long)raft_last_applied(&l->raft), l->snap_state.len, ms);
    replog__snapshot_policy(l, l->snap_state.len);
    return 0;
}

/* Raft is done with the buffers (written or not). */
static int fsm_snapshot_finalize(struct raft_fsm *rf,
                                 struct raft_buffer *bufs[], unsigned *n_bufs)
{
    struct replog *l = rf->data;

    tb_wbuf_free(&l->snap_state);
    /* The snapshot buffer, as big as the state, and the log entries raft
     * just compacted away were freed; give the pages back to the system
     * instead of keeping them resident until the next snapshot. */
    malloc_trim(0);
    l->snap_active = 0;
    *bufs = NULL;
    *n_bufs = 0;
    return 0;
}

/* On success we own buf->base and free it; on failure raft frees it. */
static int fsm_restore(struct raft_fsm *rf, struct raft_buffer *buf)
{
    struct replog *l = rf->data;
    uint64_t index;
    const void *state;
    size_t len;
    int rv;

    if (replog__snap_decode(buf->base, buf->len, &index, &state, &len) != 0) {
        replog__logf(l, REPLOG_LOG_ERROR,
                     "restore: snapshot of %zu bytes has a malformed envelope",
                     buf->len);
        return RAFT_CORRUPT;
    }
    rv = l->fsm.restore(l->fsm.data, state, len);
    if (rv != 0) {
        replog__logf(l, REPLOG_LOG_ERROR,
                     "restore: state machine rejected snapshot at %llu: %s",
                     (unsigned long long)index, tb_strerror(rv));
        return RAFT_CORRUPT;
    }
    raft_free(buf->base);
    buf->base = NULL;
    l->applied_index = (int64_t)index;
    replog__logf(l, REPLOG_LOG_INFO, "restored snapshot at %llu (%zu bytes)",
                 (unsigned long long)index, len);
    replog__snapshot_policy(l, len);
    return 0;
}

void replog__fsm_init(struct replog *l)
{
    memset(&l->raft_fsm, 0, sizeof l->raft_fsm);
    l->raft_fsm.version = 2;
    l->raft_fsm.data = l;
    l->raft_fsm.apply = fsm_apply;
    l->raft_fsm.snapshot = fsm_snapshot;
    l->raft_fsm.restore = fsm_restore;
    l->raft_fsm.snapshot_finalize = fsm_snapshot_finalize;
}
