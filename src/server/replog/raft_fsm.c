/* raft_fsm (version 2) over the server's struct replog_fsm: unwraps the
 * entry envelope before apply (G1), never reports an apply failure to raft
 * (G4), restores snapshots with their delta, and calls a snapshot when
 * the log kept in memory since the last one outgrows the state (G5).  Taking
 * snapshots is snapshot.c.
 *
 * Version 2 (snapshot_finalize) lets raft write the state machine's own
 * buffer without copying it: we keep ownership and free it in finalize.
 * Version 3 (snapshot_async) is refused by libraft 0.15's raft_init. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "server/replog/internal.h"

/* Raft keeps every entry since the last snapshot in memory and counts
 * them, not their bytes: apply lowers raft's threshold once the bytes are
 * reached, so that the next apply takes a snapshot.  Besides its payload,
 * an entry costs raft its struct raft_entry in the log's ring and its
 * reference count: small entries (a delete is about 60 bytes) would
 * otherwise hold twice the memory the policy allows. */
#define ENTRY_OVERHEAD 64

static void count_for_snapshot(struct replog *l, size_t len)
{
    l->stats.snapshot_log_bytes += len + ENTRY_OVERHEAD;
    l->snap_log_entries++;
    if (l->stats.snapshot_log_bytes >= l->stats.snapshot_log_limit)
        raft_set_snapshot_threshold(l->raft, 1);
}

static int fsm_apply(struct raft_fsm *rf, const struct raft_buffer *buf,
                     void **result)
{
    struct replog *l = rf->data;
    /* raft_fsm.apply is not told the index, but raft applies in order and
     * advances last_applied only after apply returns (libraft 0.15,
     * replicationApply), so the entry being applied is the next one. */
    int64_t index = (int64_t)raft_last_applied(l->raft) + 1;
    const void *payload;
    size_t len;

    *result = NULL;
    if (TB_NEVER(index <= l->applied_index))
        replog__logf(l, REPLOG_LOG_ERROR, "apply: index %lld after %lld",
                     (long long)index, (long long)l->applied_index);
    l->applied_index = index;
    count_for_snapshot(l, buf->len);
    if (replog__entry_decode(buf->base, buf->len, &payload, &len) != 0) {
        /* Returning non-zero would make raft retry this entry forever (G4).
         * Skipping it is deterministic: every replica reads the same bytes
         * and skips the same entry. */
        l->stats.entries_malformed++;
        replog__logf(l, REPLOG_LOG_ERROR,
                     "apply: entry %lld has a malformed envelope (%zu bytes),"
                     " skipped",
                     (long long)index, buf->len);
        replog__answer(l, index, TB_EDATAINCONSISTENCY);
        return 0;
    }
    l->stats.entries_applied++;
    l->fsm.apply(l->fsm.data, index, payload, len);
    replog__snapshot_record(l, index, payload, len);
    replog__answer(l, index, 0);
    return 0;
}

#define LONE_TRAILING 64

/* A snapshot was taken or restored (at open, an empty state). */
void replog__snapshot_policy(struct replog *l, uint64_t state_bytes)
{
    struct replog_stats *s = &l->stats;
    uint64_t limit =
        state_bytes > l->snap_log_floor ? state_bytes : l->snap_log_floor;
    uint64_t trailing = l->snap_trailing, fit;

    /* The trailing entries, kept for followers that lag, stay in memory as
     * well: a lone server keeps few, and no server more than the floor
     * holds at the mean size seen since the previous snapshot. */
    if (l->raft->configuration.n <= 1 && trailing > LONE_TRAILING)
        trailing = LONE_TRAILING;
    if (l->snap_log_entries > 0) {
        fit = l->snap_log_floor /
              (s->snapshot_log_bytes / l->snap_log_entries + 1);
        if (fit < trailing)
            trailing = fit > 0 ? fit : 1;
    }
    raft_set_snapshot_trailing(l->raft, (unsigned)trailing);
    if (limit != s->snapshot_log_limit)
        replog__logf(l, REPLOG_LOG_DEBUG,
                     "next snapshot after %llu bytes or %u entries of log"
                     " (state %llu bytes)",
                     (unsigned long long)limit, l->snap_max_entries,
                     (unsigned long long)state_bytes);
    s->last_snapshot_bytes = state_bytes;
    s->free_limit = replog__disk_limit(l);
    s->snapshot_threshold =
        l->snap_max_entries == UINT_MAX ? 0 : l->snap_max_entries;
    s->snapshot_log_limit = limit;
    s->snapshot_log_bytes = 0;
    l->snap_log_entries = 0;
    raft_set_snapshot_threshold(l->raft, l->snap_max_entries);
}

/* A snapshot that cannot be restored.  At open (raft_start, raft not yet
 * a follower), the start fails.  Sent by the leader, it stops the process: raft
 * has already dropped the log the snapshot replaces (and wal_io.c stored it,
 * the log on disk made void), so going on would leave this server applying
 * nothing, stale for ever; a restart restores the stored snapshot, or says why
 * it cannot. */
__attribute__((format(printf, 2, 3))) static int refused(struct replog *l,
                                                         const char *fmt, ...)
{
    char msg[200];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (raft_state(l->raft) != RAFT_UNAVAILABLE)
        replog__fail_stop(l, "restore of the leader's snapshot: %s", msg);
    replog__logf(l, REPLOG_LOG_ERROR, "restore: %s", msg);
    return RAFT_CORRUPT;
}

/* On success we own buf->base and free it; on failure raft frees it. */
static int fsm_restore(struct raft_fsm *rf, struct raft_buffer *buf)
{
    struct replog *l = rf->data;
    struct replog_snap s, check;
    uint64_t base;
    const void *payload;
    size_t len;
    int64_t index;
    int rv;

    rv = replog__snap_decode(buf->base, buf->len, &s);
    /* The delta is checked whole before the state is touched. */
    check = s;
    while (rv == 0 &&
           (rv = replog__delta_next(&check, &index, &payload, &len)) == 1)
        rv = 0;
    if (rv != 0)
        return refused(l, "snapshot of %zu bytes has a malformed envelope",
                       buf->len);
    base = s.base_index;
    /* A child serializing the state being replaced is of no more use. */
    replog__snapshot_discard(l);
    rv = l->fsm.restore(l->fsm.data, s.state, s.state_len);
    if (rv != 0)
        return refused(l, "state machine rejected snapshot at %llu: %s",
                       (unsigned long long)base, tb_strerror(rv));
    while (replog__delta_next(&s, &index, &payload, &len) == 1) {
        l->stats.entries_applied++;
        l->fsm.apply(l->fsm.data, index, payload, len);
    }
    raft_free(buf->base);
    buf->base = NULL;
    l->applied_index = (int64_t)s.index;
    replog__logf_fields(
        l, REPLOG_LOG_INFO,
        REPLOG_FIELDS(REPLOG_STR("event", "snapshot_restored"),
                      REPLOG_INT("index", s.index),
                      REPLOG_INT("state_index", base),
                      REPLOG_INT("state_bytes", s.state_len)),
        "restored snapshot at %llu (state at %llu, %zu bytes)",
        (unsigned long long)s.index, (unsigned long long)base, s.state_len);
    replog__snapshot_policy(l, s.state_len);
    return 0;
}

void replog__fsm_init(struct replog *l)
{
    memset(&l->raft_fsm, 0, sizeof l->raft_fsm);
    l->raft_fsm.version = 2;
    l->raft_fsm.data = l;
    l->raft_fsm.apply = fsm_apply;
    l->raft_fsm.restore = fsm_restore;
    replog__snapshot_init(l);
}
