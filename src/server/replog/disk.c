/* Free-disk guard (G3).  libraft 0.15 can crash inside its own code when the
 * data directory runs out of space with writes in flight, so we refuse new
 * writes ourselves, well before that.  Free space is measured with statvfs
 * (or the configuration's free_space), cached, refreshed by the tick timer,
 * and measured again on every proposal while the estimate is near the
 * limit.  The estimate is that measure less what was accepted since, or
 * accepted before and not yet written (which no measure shows).
 *
 * A leader that begins to refuse hands leadership to another voter, whose
 * disk may have the room its own lacks: so an ensemble goes on when one
 * member's disk fills, leader or not, as ZooKeeper's does.  It follows
 * then, taking the log as any follower does, and stops (74) if its disk
 * fills up.  Once per spell of refusals: members all short of space hand
 * leadership round once at most, and it stays where it lands, refusing. */
#include <errno.h>
#include <string.h>
#include <sys/statvfs.h>

#include "server/replog/internal.h"
#include "server/replog/wal.h"

/* The configured minimum never goes below REPLOG_DISK_FLOOR: raft_uv
 * allocates 8 MiB open segments ahead of need (one being written, one
 * prepared, one being created).  And raft keeps the previous snapshot on
 * disk until the next one is complete, the next one being about as big as
 * the state: two snapshots must fit on top. */
uint64_t replog__disk_limit(const struct replog *l)
{
    uint64_t reserve = 2 * l->stats.last_snapshot_bytes;
    uint64_t min =
        l->min_free > REPLOG_DISK_FLOOR ? l->min_free : REPLOG_DISK_FLOOR;

    if (min > UINT64_MAX - reserve)
        return UINT64_MAX;
    return min + reserve;
}

static uint64_t estimate(const struct replog *l)
{
    return l->free_cached > l->bytes_since ? l->free_cached - l->bytes_since
                                           : 0;
}

/* Whether the free space is well above the limit: then the log may keep
 * disk it does not need yet (spare segments, wal.h). */
int replog__disk_roomy(const struct replog *l)
{
    uint64_t est = estimate(l), limit = replog__disk_limit(l);

    return est > limit && est - limit >= REPLOG_DISK_NEAR_MARGIN;
}

static int free_space(void *data, const char *dir, uint64_t *bytes)
{
    struct statvfs st;

    (void)data;
    if (statvfs(dir, &st) != 0)
        return -errno;
    *bytes = (uint64_t)st.f_bavail * st.f_frsize;
    return 0;
}

/* What was accepted and is not on the disk yet: proposals still batched
 * and the log's records not yet written.  A measure of the free space
 * does not show them, so they count against it until written. */
static uint64_t unwritten(const struct replog *l)
{
    uint64_t n = 0;
    unsigned i;

    for (i = 0; i < l->batch_n; i++)
        n += l->batch[i].len;
    if (!l->attached && l->io.impl != NULL)
        n += replog__wal_unwritten(l->io.impl);
    return n;
}

void replog__disk_refresh(struct replog *l)
{
    int rv;

    l->stats.disk_checks++;
    l->bytes_since = unwritten(l);
    l->last_check_ms = uv_now(l->loop);
    rv = (l->free_space != NULL ? l->free_space : free_space)(
        l->free_space_data, l->dir, &l->free_cached);
    if (rv != 0) {
        /* Unknown free space: fail safe, refuse writes until it is known. */
        if (l->free_cached != 0)
            replog__logf(l, REPLOG_LOG_ERROR, "free space of %s: %s", l->dir,
                         strerror(-rv));
        l->free_cached = 0;
    }
    l->stats.free_bytes = l->free_cached;
    l->stats.free_limit = replog__disk_limit(l);
}

static void handed_over(void *arg)
{
    (void)arg;
}

/* Outside raft (replog__defer): a proposal may be made from within it. */
static void hand_over(struct replog_deferred *a)
{
    struct replog *l = TB_CONTAINER_OF(a, struct replog, disk_handover);

    l->disk_handover_queued = 0;
    if (l->closing || !l->disk_refusing || !replog_is_leader(l) ||
        l->n_peers == 0)
        return;
    if (replog_transfer(l, handed_over, NULL) == 0)
        replog__logf(l, REPLOG_LOG_WARN,
                     "refusing writes: handing leadership to another "
                     "member, whose disk may have room");
}

int replog__disk_admit(struct replog *l, size_t n, int reserved)
{
    uint64_t limit = reserved ? REPLOG_DISK_FLOOR : replog__disk_limit(l);
    uint64_t est;

    if (l->attached) /* no disk of ours */
        return 0;
    est = estimate(l);
    if (est < limit || est - limit < REPLOG_DISK_NEAR_MARGIN) {
        replog__disk_refresh(l);
        est = estimate(l);
    }
    if (reserved && est >= limit) {
        l->bytes_since += n < 4096 ? 4096 : n;
        return 0; /* the reserve is used; the refusing state stays */
    }
    if (est < limit) {
        l->stats.proposals_refused_disk++;
        /* Log transitions only, not every refused request. */
        if (!l->disk_refusing) {
            replog__logf(l, REPLOG_LOG_WARN,
                         "refusing writes: %llu bytes free in %s, minimum %llu",
                         (unsigned long long)est, l->dir,
                         (unsigned long long)limit);
            if (!l->disk_handover_queued) {
                l->disk_handover.take = hand_over;
                l->disk_handover_queued = 1;
                replog__defer(l, &l->disk_handover, 0);
            }
        }
        l->disk_refusing = 1;
        return TB_ENOTREADONLY;
    }
    if (l->disk_refusing)
        replog__logf(l, REPLOG_LOG_INFO,
                     "accepting writes again: %llu bytes free in %s",
                     (unsigned long long)est, l->dir);
    l->disk_refusing = 0;
    /* Every write is at least one synced 4 KiB block. */
    l->bytes_since += n < 4096 ? 4096 : n;
    return 0;
}
