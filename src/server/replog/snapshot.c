/* Taking snapshots (G5, G9).  The state is serialized by a forked child,
 * which sees a copy-on-write image of the process as it was at the fork, so
 * the loop stalls for the fork (copying page tables) instead of for the
 * whole serialization, which takes hundreds of ms at a million znodes.
 *
 * libraft 0.15 calls fsm snapshot on the loop, records the snapshot at its
 * last_applied, and calls again after the next applied batch when we answer
 * RAFT_BUSY.  So the first call forks and answers busy; the loop goes on
 * applying and keeps a copy of each entry it applies (the delta); the first
 * call after the child has exited gives raft the child's state followed by
 * the delta, and restore applies the delta on top of the state (raft_fsm.c).
 *
 * The child writes into a memfd that the parent maps read-only for the
 * snapshot store (snapstore.c) to compress and write, so the state is
 * never copied on the loop.  Should
 * fork or the child fail, the state is serialized on the loop instead. */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "server/replog/internal.h"

/* ---- the child ------------------------------------------------------------
 */

/* The child serializes straight into the memfd that the parent maps: the
 * state is neither copied through write(2) nor held twice in the child (at
 * 400k znodes the copy took a third of the child's time).  The file grows
 * in steps, each populated in one call: faulting shared pages in one at a
 * time costs more than the copy did. */
#define CHILD_STEP ((size_t)8 << 20)

/* The wait before the next snapshot after a failed one, doubling with
 * each failure in a row. */
#define SNAP_RETRY_MS     1000u
#define SNAP_RETRY_MAX_MS 64000u

struct child_out {
    struct tb_wbuf w;
    int fd;
};

static int child_grow(struct tb_wbuf *b, size_t need)
{
    struct child_out *o = TB_CONTAINER_OF(b, struct child_out, w);
    size_t cap = (need + CHILD_STEP - 1) / CHILD_STEP * CHILD_STEP;
    void *p;

    if (cap < need || ftruncate(o->fd, (off_t)cap) != 0)
        return -1;
    p = b->base == NULL
            ? mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_SHARED, o->fd, 0)
            : mremap(b->base, b->cap, cap, MREMAP_MAYMOVE);
    if (p == MAP_FAILED)
        return -1;
#ifdef MADV_POPULATE_WRITE
    madvise((uint8_t *)p + b->cap, cap - b->cap, MADV_POPULATE_WRITE);
#endif
    b->base = p;
    b->cap = cap;
    return 0;
}

static __attribute__((noreturn)) void child_main(struct replog *l, int fd,
                                                 pid_t parent)
{
    struct child_out o;
    int sig;

    /* Die with the server, and keep none of its descriptors: a socket the
     * server closes must not stay open in here. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(3);
    for (sig = 1; sig < NSIG; sig++)
        signal(sig, SIG_DFL);
    if (fd > 3)
        close_range(3, (unsigned)fd - 1, 0);
    close_range((unsigned)fd + 1, ~0u, 0);

    tb_wbuf_init(&o.w);
    o.w.grow = child_grow;
    o.fd = fd;
    if (l->fsm.snapshot(l->fsm.data, &o.w) != 0 || o.w.oom)
        _exit(1);
    if (ftruncate(fd, (off_t)o.w.len) != 0) /* the unused end of a step */
        _exit(2);
    _exit(0);
}

/* ---- the parent -----------------------------------------------------------
 */

static void record_stall(struct replog *l, uint64_t t0)
{
    double ms = (double)(uv_hrtime() - t0) / 1e6;

    l->stats.snapshot_stall_last_ms = ms;
    if (ms > l->stats.snapshot_stall_max_ms)
        l->stats.snapshot_stall_max_ms = ms;
}

/* The loop stalls for the fork, which is recorded as the snapshot's stall. */
static int fork_child(struct replog *l)
{
    uint64_t t0 = uv_hrtime();
    pid_t parent = getpid(), pid;
    int fd;

    fd = memfd_create("tumblerd-snapshot", MFD_CLOEXEC);
    if (fd < 0)
        return -errno;
    pid = fork();
    if (pid < 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    if (pid == 0)
        child_main(l, fd, parent);
    l->snap_pid = pid;
    l->snap_forked_ns = uv_hrtime();
    l->snap_fd = fd;
    l->snap_base = raft_last_applied(l->raft);
    tb_wbuf_init(&l->snap_delta);
    record_stall(l, t0);
    return 0;
}

/* Keeps what raft_fsm.c's apply hands us while the child runs. */
void replog__snapshot_record(struct replog *l, int64_t index,
                             const void *payload, size_t len)
{
    if (l->snap_pid > 0)
        replog__delta_put(&l->snap_delta, index, payload, len);
}

static void barrier_cb(struct raft_barrier *req, int status)
{
    struct replog *l = req->data;

    (void)status;
    l->snap_barrier_busy = 0;
}

/* An entry for raft to apply, after which it asks for the snapshot due. */
static void barrier(struct replog *l)
{
    l->snap_barrier.data = l;
    if (raft_barrier(l->raft, &l->snap_barrier, barrier_cb) == 0)
        l->snap_barrier_busy = 1;
}

/* Writes have paused for `ms`, and the log kept in memory since the last
 * snapshot is worth giving back: without this it would stay until the next
 * burst of writes took the log to the policy's limit (raft_fsm.c).  A write
 * waiting on a slow disk is no pause. */
static int idle_with_log(struct replog *l, unsigned ms)
{
    const struct replog_stats *s = &l->stats;
    uint64_t now = replog__now(l);

    if (l->applied_index != l->idle_index || !tb_queue_empty(&l->pending)) {
        l->idle_index = l->applied_index;
        l->idle_since = now;
        return 0;
    }
    return now - l->idle_since >= ms &&
           s->snapshot_log_bytes >= s->snapshot_log_limit / 4;
}

/* The child has exited (not reaped: collect_child does that). */
static int child_done(struct replog *l)
{
    siginfo_t si;

    memset(&si, 0, sizeof si);
    return waitid(P_PID, (id_t)l->snap_pid, &si, WEXITED | WNOHANG | WNOWAIT) ==
               0 &&
           si.si_pid != 0;
}

/* A member that does not lead applies entries but appends none, so its
 * snapshot comes with the leader's barriers (below): once writes have paused
 * half as long as the leader waits before its first, raft is to take one at
 * the next entry it applies, and the child is forked now, so that the state
 * is serialized by the time the leader's second barrier comes (its own
 * child, forked at the first, done).  Should no entry come (the leader's log
 * since its last snapshot too small to give back), the snapshot lands with
 * the next write. */
static void follow_idle(struct replog *l)
{
    if (l->snap_active || l->snap_pid > 0 ||
        replog__now(l) < l->snap_retry_at ||
        !idle_with_log(l, l->snap_idle_ms / 2))
        return;
    raft_set_snapshot_threshold(l->raft, 1);
    if (!l->snap_in_loop)
        (void)fork_child(l); /* failing, raft's call forks or serializes */
}

/* From the tick.  Raft asks for a snapshot only after applying entries, so
 * a barrier entry makes raft ask: when the child is done and nothing is
 * being written, so that the snapshot lands without waiting for a write;
 * and when writes have paused with a log worth a snapshot, which raft
 * takes once its threshold is down to one entry.
 *
 * On every member, once writes have paused after a snapshot freed the log,
 * the heap is trimmed.  A follower's entries are not in our chunks
 * (arena.c) but in raft_uv's buffers of the messages that brought them,
 * allocated among the tree's nodes: freed by the snapshot, they stayed in
 * the heap (about 9 MB of a follower's 57 MB after 100,000 creates).  Not
 * in finalize: the trim walks the whole heap on the loop, and writes may
 * be coming. */
void replog__snapshot_poke(struct replog *l)
{
    uint64_t now = replog__now(l);

    if (l->applied_index != l->idle_index || !tb_queue_empty(&l->pending)) {
        l->idle_index = l->applied_index;
        l->idle_since = now;
    } else if (l->trim_due && !l->snap_active && l->snap_pid <= 0 &&
               now - l->idle_since >= l->snap_idle_ms) {
        malloc_trim(0);
        l->trim_due = 0;
    }
    if (raft_state(l->raft) == RAFT_FOLLOWER)
        follow_idle(l);
    if (l->snap_barrier_busy || l->snap_active ||
        raft_state(l->raft) != RAFT_LEADER || replog__now(l) < l->snap_retry_at)
        return;
    if (l->snap_pid > 0 ? !child_done(l) : !idle_with_log(l, l->snap_idle_ms))
        return;
    if (l->snap_pid <= 0)
        raft_set_snapshot_threshold(l->raft, 1);
    barrier(l);
}

/* The leader's snapshot stored could not be read to be sent to a follower
 * (damaged on disk, or the disk failed the read).  libraft 0.15 asks for
 * the same one again at each try (every install_snapshot_timeout, 30 s), so
 * the follower would never catch up, and a restart would refuse the file.
 * A new snapshot is taken now from the state in memory: stored, it is the
 * one the next try sends and the one a restart loads, and the damaged file
 * is written over by the snapshot after it.  Not while closing: the close
 * would wait for it. */
void replog__snapshot_renew(struct replog *l)
{
    if (l->closing)
        return;
    raft_set_snapshot_threshold(l->raft, 1);
    if (!l->snap_barrier_busy && raft_state(l->raft) == RAFT_LEADER)
        barrier(l);
}

void replog__snapshot_stored(struct replog *l, int status)
{
    if (status == 0) {
        l->snap_backoff_ms = 0;
        return;
    }
    l->stats.snapshots_failed++;
    l->snap_backoff_ms = l->snap_backoff_ms == 0 ? SNAP_RETRY_MS
                         : l->snap_backoff_ms < SNAP_RETRY_MAX_MS
                             ? 2 * l->snap_backoff_ms
                             : SNAP_RETRY_MAX_MS;
    l->snap_retry_at = replog__now(l) + l->snap_backoff_ms;
    replog__logf(l, REPLOG_LOG_WARN, "next snapshot tried in %u ms",
                 l->snap_backoff_ms);
    /* Still due, though its taking moved the policy on (a limit of log
     * more): raft asks at each entry it applies, answered busy until the
     * time above.  Else the log kept growing by that limit at each failure,
     * in raft's memory too. */
    if (!l->closing)
        raft_set_snapshot_threshold(l->raft, 1);
}

/* Drops a child and what was kept for it. */
void replog__snapshot_discard(struct replog *l)
{
    int status;

    if (l->snap_pid > 0) {
        kill(l->snap_pid, SIGKILL);
        while (waitpid(l->snap_pid, &status, 0) < 0 && errno == EINTR)
            ;
        l->snap_pid = 0;
    }
    if (l->snap_map != NULL)
        munmap(l->snap_map, l->snap_map_len);
    l->snap_map = NULL;
    if (l->snap_fd >= 0)
        close(l->snap_fd);
    l->snap_fd = -1;
    tb_wbuf_free(&l->snap_delta);
}

/* 1: the child is done and its state is mapped at snap_map; 0: it is still
 * working; a negative TB_E* code: it failed (logged). */
static int collect_child(struct replog *l)
{
    struct stat st;
    int status, rv = TB_EIO;
    pid_t r;
    void *p;

    r = waitpid(l->snap_pid, &status, WNOHANG);
    if (r == 0)
        return 0;
    l->snap_pid = 0;
    if (r < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        replog__logf(l, REPLOG_LOG_ERROR,
                     "snapshot child failed (%s %d); serializing on the loop",
                     r > 0 && WIFSIGNALED(status) ? "signal" : "status",
                     r > 0 && WIFSIGNALED(status) ? WTERMSIG(status)
                                                  : WEXITSTATUS(status));
        return TB_EIO;
    }
    if (l->snap_delta.oom)
        rv = TB_ENOMEM;
    else if (fstat(l->snap_fd, &st) == 0 && st.st_size > 0) {
        p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, l->snap_fd,
                 0);
        if (p != MAP_FAILED) {
            l->snap_map = p;
            l->snap_map_len = (size_t)st.st_size;
            return 1;
        }
        rv = TB_ENOMEM;
    }
    replog__logf(l, REPLOG_LOG_ERROR,
                 "snapshot child's state unusable (%s); serializing on the"
                 " loop",
                 tb_strerror(rv));
    return rv;
}

static int serialize_in_loop(struct replog *l)
{
    int rv;

    replog__snapshot_discard(l);
    tb_wbuf_init(&l->snap_state);
    rv = l->fsm.snapshot(l->fsm.data, &l->snap_state);
    if (rv == 0 && l->snap_state.oom)
        rv = TB_ENOMEM;
    if (rv != 0) {
        tb_wbuf_free(&l->snap_state);
        replog__logf(l, REPLOG_LOG_ERROR, "snapshot at %lld failed: %s",
                     (long long)raft_last_applied(l->raft), tb_strerror(rv));
        replog__snapshot_stored(l, rv);
        return rv;
    }
    l->stats.snapshots_in_loop++;
    return 0;
}

static int fsm_snapshot(struct raft_fsm *rf, struct raft_buffer *bufs[],
                        unsigned *n_bufs)
{
    struct replog *l = rf->data;
    uint64_t t0 = uv_hrtime();
    const uint8_t *state;
    size_t state_len;
    uint64_t made_ns;
    unsigned n = 0;
    int rv;

    if (TB_NEVER(l->snap_active))
        return RAFT_BUSY;
    if (l->snap_pid == 0 && replog__now(l) < l->snap_retry_at)
        return RAFT_BUSY;
    /* Raft asks after every entry it applies while we answer busy: the
     * child is looked at once per turn of the loop. */
    if (l->snap_pid > 0 && replog__now(l) == l->snap_polled)
        return RAFT_BUSY;
    l->snap_polled = replog__now(l);
    if (l->snap_pid == 0 && !l->snap_in_loop) {
        if ((rv = fork_child(l)) == 0)
            return RAFT_BUSY;
        replog__logf(l, REPLOG_LOG_WARN,
                     "snapshot: cannot fork (%s); serializing on the loop",
                     strerror(-rv));
    }
    rv = l->snap_pid > 0 ? collect_child(l) : TB_EIO;
    if (rv == 0)
        return RAFT_BUSY;
    /* Busy, not failed: a follower's raft goes unavailable on a failure
     * (while handling a heartbeat).  The failure's backoff is recorded. */
    if (rv < 0 && serialize_in_loop(l) != 0)
        return RAFT_BUSY;
    if (l->snap_map != NULL) {
        state = l->snap_map;
        state_len = l->snap_map_len;
    } else {
        l->snap_base = raft_last_applied(l->raft);
        state = l->snap_state.base;
        state_len = l->snap_state.len;
    }
    replog__snap_header_encode(l->snap_hdr, raft_last_applied(l->raft),
                               state_len, l->snap_base, l->snap_delta.len);
    l->snap_bufs[n].base = l->snap_hdr;
    l->snap_bufs[n++].len = REPLOG_SNAP_HDR;
    if (state_len > 0) {
        l->snap_bufs[n].base = (void *)state;
        l->snap_bufs[n++].len = state_len;
    }
    if (l->snap_delta.len > 0) {
        l->snap_bufs[n].base = l->snap_delta.base;
        l->snap_bufs[n++].len = l->snap_delta.len;
    }
    *bufs = l->snap_bufs;
    *n_bufs = n;
    record_stall(l, t0);
    l->snap_active = 1;
    l->stats.snapshots_taken++;
    l->stats.snapshot_delta_last = raft_last_applied(l->raft) - l->snap_base;
    /* how long since it began (the fork, or this call when serialized on
     * the loop): an operator's line, with its size, and the spread */
    made_ns = uv_hrtime() - (l->snap_map != NULL ? l->snap_forked_ns : t0);
    hist_note(&l->stats.snapshot_hist, made_ns / 1000);
    replog__logf_fields(
        l, REPLOG_LOG_INFO,
        REPLOG_FIELDS(REPLOG_STR("event", "snapshot"),
                      REPLOG_INT("index", raft_last_applied(l->raft)),
                      REPLOG_INT("state_index", l->snap_base),
                      REPLOG_INT("state_bytes", state_len),
                      REPLOG_INT("entries_bytes", l->snap_delta.len),
                      REPLOG_INT("made_ms", made_ns / 1000000)),
        "snapshot at %lld: state at %lld, %zu bytes, then %zu bytes"
        " of entries; made in %llu ms",
        (long long)raft_last_applied(l->raft), (long long)l->snap_base,
        state_len, l->snap_delta.len, (unsigned long long)(made_ns / 1000000));
    replog__snapshot_policy(l, state_len);
    return 0;
}

/* Raft is done with the buffers (written or not). */
static int fsm_snapshot_finalize(struct raft_fsm *rf,
                                 struct raft_buffer *bufs[], unsigned *n_bufs)
{
    struct replog *l = rf->data;
    uint64_t state = l->stats.last_snapshot_bytes;

    replog__snapshot_discard(l);
    tb_wbuf_free(&l->snap_state);
    /* Once the state has shrunk to half its size at the last trim, give
     * the freed pages back to the system.  Not after every snapshot: the
     * trim walks the whole heap on the loop (5-60 ms measured on a 100 MB
     * heap). */
    if (state > l->trim_high)
        l->trim_high = state;
    else if (state < l->trim_high / 2) {
        malloc_trim(0);
        l->trim_high = state;
    }
    l->trim_due = 1;
    l->snap_active = 0;
    *bufs = NULL;
    *n_bufs = 0;
    return 0;
}

void replog__snapshot_init(struct replog *l)
{
    l->raft_fsm.snapshot = fsm_snapshot;
    l->raft_fsm.snapshot_finalize = fsm_snapshot_finalize;
}
