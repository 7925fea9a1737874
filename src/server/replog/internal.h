/* The replog handle and the helpers its files share.  Internal to
 * src/server/replog: nothing outside this folder includes raft.h. */
#ifndef TB_SERVER_RAFT_INTERNAL_H
#define TB_SERVER_RAFT_INTERNAL_H

#include <sys/types.h>

#include <raft.h>
#include <raft/uv.h>

#include "server/replog/envelope.h"
#include "server/replog/replog.h"

/* When the estimated free space is within this much of the limit, every
 * proposal measures again instead of trusting the cached figure (G3). */
#define REPLOG_DISK_NEAR_MARGIN ((uint64_t)64 << 20)
/* The log's segment size (wal.c). */
#define REPLOG_SEGMENT_BYTES ((off_t)8 << 20)
/* A new log's first segment is smaller: the first write waits for its
 * zeros to be synced (8 MiB took 9-11 ms here, 1 MiB 3 ms), and libraft's
 * start-up probe, a synced write, waits for them too. */
#define REPLOG_FIRST_SEGMENT_BYTES ((off_t)1 << 20)
/* Free space that is never given to writes: three open segments. */
#define REPLOG_DISK_FLOOR ((uint64_t)3 * REPLOG_SEGMENT_BYTES)
/* How often the cached free-space figure is refreshed. */
#define REPLOG_DISK_REFRESH_MS 250
/* replog_close waits at most this long for appends to reach the disk. */
#define REPLOG_CLOSE_DRAIN_MS 10000
/* State poll period when someone listens for leadership changes (G6). */
#define REPLOG_STATE_POLL_MS 10

/* A proposal not yet answered: on replog.queued until its turn's batch
 * goes to raft, then on replog.pending, in both in proposal order, until
 * its done fires. */
struct replog_req {
    int64_t index;  /* its entry's, once raft has it */
    raft_term term; /* raft's when it got it */
    struct tb_queue link;
    replog_done_cb done;
    void *arg;
};

/* The proposals of one loop turn go to raft in one raft_apply, just before
 * the loop waits (the log's flusher, wal.c): raft's work for each call (an
 * append request, its entries array, the append's callback) is then paid
 * once a turn instead of once a write.  raft answers a batch once, when its
 * first entry is applied, and only to fail it; each entry's own answer
 * comes from raft_fsm.c's apply. */
struct replog_batch {
    struct raft_apply raft_req; /* raft_req.index: its first entry's */
    unsigned n;
};

/* A member whose log no leader has caught up, in an ensemble (fresh.c):
 * it votes only for candidates as new as itself, and for none once
 * another member has shown a log beyond the first entry, until a leader
 * caught it up. */
#define FRESH_FIRST_INDEX 1 /* the bootstrap configuration's entry */
enum { FRESH_DELIVER, FRESH_DROP };
struct replog_fresh {
    int on;       /* its log is the bootstrap entry alone, not caught up */
    int evidence; /* a log beyond the first entry was heard of */
    int kept;     /* wal-meta says so too, for the starts after this one */
    raft_index caught_at; /* caught up to there: once stored, no longer */
};

/* notice.c: what the leader has told each follower of its commits. */
struct replog_told {
    raft_id id;
    raft_index index; /* the last commit sent to it (by raft or by us) */
};
struct replog_notice {
    raft_term term;   /* the term told describes */
    raft_index first; /* entries from here on are surely of that term */
    struct replog_told *told;
    unsigned n_told;
};

/* An answer raft gives from inside itself, to a member change, a barrier
 * or a transfer, is taken up later, outside raft: libraft 0.15 calls those
 * callbacks from within its handling of a message or a write, holding
 * pointers into its configuration across the call, and what a caller does
 * next (a change: a join's second step, a reconfig's next member)
 * reallocates that configuration under it.  replog__defer queues `a`
 * with raft's status; replog__deferred_take, on the log's tick and at
 * close (with l->closing set), calls each queued a->take in turn. */
struct replog_deferred {
    struct tb_queue link;
    int status;
    void (*take)(struct replog_deferred *a);
};

/* The log's handle.  At all times (replog__check, in debug builds, once
 * open, after each turn's proposals go to raft, a batch fails or the
 * leadership changes):
 *   - attached iff loop is NULL: raft is then a test's, dir NULL and
 *     snapshots serialized on the loop; else raft is &raft_own, dir set;
 *   - server_id > 0; n_peers is 0 (a lone voter) or 2 and more, peers set
 *     iff it is not 0, and tcp_ready only then;
 *   - queued holds batch_n <= batch_cap requests, in proposal order, the
 *     i-th one's entry in batch[i], none with an index yet;
 *   - pending holds the requests given to raft and not yet answered, in
 *     proposal order: their indexes rise, each above applied_index (apply
 *     answers every request up to the entry it applies), which idle_index
 *     does not pass;
 *   - while a snapshot's child runs (snap_pid > 0), snap_fd is open, no
 *     state is mapped or being written (snap_active 0), and snap_in_loop
 *     is 0; a mapped state (snap_map) is a collected child's: snap_pid 0,
 *     snap_fd open; snap_delta holds entries only while a child runs or its
 *     state is mapped, snap_state a state only while raft writes it;
 *   - raft_closed only once closing; handles_open <= 2. */
struct replog {
    uv_loop_t *loop;
    struct raft *raft; /* &raft_own, or a test's (replog_attach.h) */
    struct raft raft_own;
    struct raft_io io; /* wal.c's, in front of uv */
    struct raft_io uv; /* raft_uv: messages and ticks; it reads an older
                        * tumblerd's files (snapstore.c) */
    struct raft_uv_transport transport; /* transport.c's or tcp.c's */
    struct raft_fsm raft_fsm; /* raft's view of `fsm`, version 2 */
    struct replog_fsm fsm;

    char *dir;
    int lock_fd; /* holds the data directory's LOCK (replog.c) */
    int repair;  /* replog_config.repair_log */
    char *address;
    struct replog_peer *peers; /* copied, addresses too; n_peers > 1: the
                                  TCP transport and the peers' list */
    unsigned n_peers;
    int tcp_ready; /* replog__tcp_init succeeded: freed with the log */
    struct replog_secure secure; /* replog_config.secure: peer TLS */
    int server_id;
    void (*log)(void *data, int level, const char *msg);
    void (*log_fields)(void *data, int level, const char *msg,
                       const struct replog_field *f, size_t n);
    void *log_data;
    void (*on_leader)(void *data, int is_leader);
    void *on_leader_data;
    unsigned snap_max_entries;
    unsigned snap_trailing;
    uint64_t snap_log_floor;
    uint64_t snap_log_entries; /* applied since the latest snapshot */
    unsigned snap_idle_ms;
    unsigned election_ms, heartbeat_ms;
    /* A test's raft (replog_attach.h): no files, timers or transport of
     * ours; proposals go to raft at once. */
    int attached;

    struct tb_queue queued;    /* struct replog_req, not yet given to raft */
    struct tb_queue pending;   /* given to raft, not yet answered */
    struct tb_queue deferred;  /* struct replog_deferred, not yet taken */
    struct raft_buffer *batch; /* the entries of `queued` */
    unsigned batch_n, batch_cap;
    int64_t applied_index;   /* last index given to fsm.apply or restore */
    int was_leader;
    int known_leader;         /* replog_leader() at the last poll */
    /* When each server was last heard from (any message; mend.c's recv
     * notes it), for replog_followers: libraft's recent_recv is cleared at
     * every check of the leader's contact and reads false until the next
     * reply, a tenth of the time on an idle, healthy ensemble. */
    struct {
        raft_id id;
        uint64_t at;
    } heard[REPLOG_MAX_MEMBERS];
    unsigned nheard;
    raft_term caught_term;    /* of the last barrier applied here */
    raft_term catching_term;  /* of the leader's own barrier in flight */
    struct replog_fresh fresh;   /* set at open; wal.c's recv asks it */
    struct replog_notice notice; /* notice.c's */
    /* mend.c's: the io's own start, append, send and snapshot_put, behind
     * its own, and raft's tick and recv; handling while raft handles an
     * AppendEntries whose last index is shown; late while an append raft
     * asked for in an earlier term completes; while raft handles a
     * snapshot at raised_index raised to term raised, its true term; the
     * last committed configuration seen. */
    struct {
        int (*start)(struct raft_io *io, unsigned msecs,
                     raft_io_tick_cb tick, raft_io_recv_cb recv);
        int (*append)(struct raft_io *io, struct raft_io_append *req,
                      const struct raft_entry entries[], unsigned n,
                      raft_io_append_cb cb);
        int (*send)(struct raft_io *io, struct raft_io_send *req,
                    const struct raft_message *m, raft_io_send_cb cb);
        int (*snapshot_put)(struct raft_io *io, unsigned trailing,
                            struct raft_io_snapshot_put *req,
                            const struct raft_snapshot *snapshot,
                            raft_io_snapshot_put_cb cb);
        raft_io_tick_cb tick;
        raft_io_recv_cb recv;
        int handling, late;
        raft_index shown;
        raft_index raised_index;
        raft_term raised, true_term;
        struct raft_configuration committed; /* raft's at committed_index */
        raft_index committed_index;
    } mend;

    /* Free-disk guard (G3).  free_cached is exact right after a statvfs;
     * bytes_since counts what was proposed since, so the estimate
     * free_cached - bytes_since errs on the low side. */
    uv_timer_t tick;
    uint64_t min_free;
    int (*free_space)(void *data, const char *dir, uint64_t *bytes);
    void *free_space_data;
    uint64_t free_cached;
    uint64_t bytes_since;
    uint64_t last_check_ms;
    int disk_refusing; /* last admit refused: log transitions only */
    /* A leader's hand-over at a spell's first refusal (disk.c), queued
     * while disk_handover_queued. */
    struct replog_deferred disk_handover;
    int disk_handover_queued;

    /* Snapshots (snapshot.c).  While snap_pid > 0 a child serializes the
     * state at snap_base into snap_fd and apply copies every entry into
     * snap_delta.  snap_active: raft is writing snap_bufs, whose state is
     * snap_map (the child's) or snap_state (serialized on the loop), until
     * finalize. */
    int snap_in_loop; /* never fork */
    pid_t snap_pid;
    uint64_t snap_forked_ns; /* uv_hrtime when the child was forked */
    uint64_t snap_polled; /* uv_now when the child was last looked at */
    int snap_fd;
    int64_t snap_base;
    struct tb_wbuf snap_delta;
    void *snap_map;
    size_t snap_map_len;
    struct raft_barrier snap_barrier; /* see replog__snapshot_poke */
    int snap_barrier_busy;
    int64_t idle_index;  /* applied_index when the tick last saw it move */
    uint64_t idle_since; /* uv_now then */
    int snap_active;
    /* After a failed snapshot the next is not tried before snap_retry_at:
     * a disk that refuses the state would otherwise get a fork and a
     * write of it after every applied entry. */
    unsigned snap_backoff_ms; /* 0 while snapshots succeed */
    uint64_t snap_retry_at;   /* uv_now */
    uint64_t trim_high; /* largest state since the heap was last trimmed */
    int trim_due; /* a snapshot has been taken since the last trim at a
                     pause of writes (replog__snapshot_poke) */
    struct tb_wbuf snap_state;
    uint8_t snap_hdr[REPLOG_SNAP_HDR];
    struct raft_buffer snap_bufs[3];

    struct replog_stats stats;

    struct raft_transfer transfer; /* replog_transfer's, one at a time */
    struct replog_deferred transfer_end; /* raft's, until taken */
    void (*transfer_cb)(void *arg);
    void *transfer_arg;

    /* Closing: raft first, then our handles, then the user's cb. */
    int closing;
    int raft_started; /* raft_init succeeded: raft_close is needed */
    int raft_closed;
    unsigned handles_open;
    uv_timer_t close_timer; /* drains appends, then raft_close */
    uint64_t close_started_ms;
    void (*close_cb)(void *arg);
    void *close_arg;
};

/* The handle with its configuration and state machine glue, before a
 * raft is given to it (replog_open, replog_attach_new); NULL without
 * memory. */
struct replog *replog__new(uv_loop_t *loop, const struct replog_config *cfg,
                           const struct replog_fsm *fsm);
int replog__check_args(const struct replog_config *cfg,
                       const struct replog_fsm *fsm);
/* Frees what replog__new made, the handle last. */
void replog__delete(struct replog *l);
/* raft's settings from the configuration, and mend.c in front of its io,
 * once raft_init is done and before raft_start. */
void replog__configure_raft(struct replog *l);
/* Leadership polled (G6): logs a change, fails what a lost leader had
 * proposed, tells on_leader. */
void replog__poll_leader(struct replog *l);
void replog__defer(struct replog *l, struct replog_deferred *a, int status);
void replog__deferred_take(struct replog *l);
/* fresh.c: what to do with `m` (FRESH_DELIVER or FRESH_DROP), given
 * raft's current term and last entry; updates g.  Pure. */
int replog__fresh_check(struct replog_fresh *g, const struct raft_message *m,
                        raft_term term, raft_index last_index,
                        raft_term last_term);
/* ... for a message l's raft is about to receive, logging what changed. */
int replog__fresh_recv(struct replog *l, const struct raft_message *m);
/* Whether the rule applies to a log opened with `last_index` under
 * configuration `c` (other voters than this one).  Pure. */
int replog__fresh_at_start(const struct raft_configuration *c, raft_id self,
                           raft_index last_index);
/* At open, after raft_start: whether the rule holds (above, or wal-meta's
 * flag of a start before), written down in wal-meta; 0 or a TB_E* code. */
int replog__fresh_open(struct replog *l, int join);
/* Leading, or caught up to an index now stored: the rule ends, and
 * wal-meta's flag with it (from the tick). */
void replog__fresh_tick(struct replog *l, int lead);
/* mend.c: puts its start, append, send and snapshot_put in front of the
 * raft io's, to mend what libraft 0.15's replication gets wrong (mend.c
 * lists it). */
void replog__mend_init(struct replog *l);
/* mend.c's 10: whether raft's log holds a configuration entry past the
 * configuration raft holds, one raft did not take; a change of members
 * made over it would leave two in flight. */
int replog__mend_untaken_change(const struct replog *l);
/* Hands raft message m as if the io had received it, through the mends. */
void replog__mend_recv(struct replog *l, struct raft_message *m);
/* notice.c: as leader, tells each follower of the commits it holds and has
 * not yet been sent; called after each message raft receives and each local
 * write, and on a test's tick. */
void replog__notice(struct replog *l);
/* ... notes what raft's own message `m`, about to go, tells a follower. */
void replog__notice_sent(struct replog *l, const struct raft_message *m);
/* The term of the last entry of `log`, or of its snapshot (failover.c). */
raft_term replog__last_term(const struct raft_log *log);
/* Milliseconds of raft's clock (its io's: virtual under a fixture). */
uint64_t replog__now(struct replog *l);
/* A message from server `id` came now. */
void replog__heard(struct replog *l, raft_id id);

void replog__logf(struct replog *l, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* ... with n structured fields (replog_config.log_fields). */
void replog__logf_fields(struct replog *l, int level,
                         const struct replog_field *f, size_t n,
                         const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
#define REPLOG_STR(k, v) {(k), (v), 0}
#define REPLOG_INT(k, v) {(k), NULL, (int64_t)(v)}
/* The fields and their count, as replog__logf_fields takes them. */
#define REPLOG_FIELDS(...)                                                  \
    (const struct replog_field[]){__VA_ARGS__},                             \
        sizeof((const struct replog_field[]){__VA_ARGS__}) /                \
            sizeof(struct replog_field)

/* The log could not be written: logs why and ends the process with
 * REPLOG_EXIT_LOG_FAILED, without returning.  libraft 0.15 cannot go on
 * from a failed append (it crashed in its own failure path, and a log that
 * refuses every append leaves sessions unable to expire), while a restart
 * recovers every acknowledged write from what is on disk. */
__attribute__((noreturn, format(printf, 2, 3))) void
replog__fail_stop(struct replog *l, const char *fmt, ...);

/* lock.c: takes the data directory's LOCK, as a start and a recovery
 * do: 0, or a TB_E* code after logging why (another server holds it). */
int replog__lock_dir(struct replog *l);

/* Maps a raft error code to a TB_E* code. */
int replog__err(int raft_rv);
/* Gives raft the proposals queued this turn (the log's flusher calls it). */
void replog__submit(struct replog *l);
/* The entry at `index` was applied (status 0) or skipped as malformed. */
void replog__answer(struct replog *l, int64_t index, int status);
/* Every request given to raft from `from` on (0: all) fails with status. */
void replog__fail_from(struct replog *l, int64_t from, int status);
/* Every request not yet given to raft fails with status. */
void replog__fail_queued(struct replog *l, int status);

/* check.c, in debug builds: 0 if every "at all times" statement of struct
 * replog holds, else TB_EDATAINCONSISTENCY with the first that does not in
 * why.  REPLOG_CHECK traps on one that does not (nothing with NDEBUG). */
#ifndef NDEBUG
int replog__check(const struct replog *l, char *why, size_t cap);
void replog__check_trap(const struct replog *l);
#define REPLOG_CHECK(l) replog__check_trap(l)
#else
#define REPLOG_CHECK(l) ((void)0)
#endif

/* disk.c */
void replog__disk_refresh(struct replog *l);
uint64_t replog__disk_limit(const struct replog *l);
int replog__disk_roomy(const struct replog *l);

/* 0 if a write of `n` bytes may go ahead, else TB_ENOTREADONLY.  A
 * reserved write may use the space down to REPLOG_DISK_FLOOR. */
int replog__disk_admit(struct replog *l, size_t n, int reserved);

/* raft_fsm.c: raft_fsm callbacks over struct replog_fsm, and the G5 policy. */
void replog__fsm_init(struct replog *l);
void replog__snapshot_policy(struct replog *l, uint64_t state_bytes);

/* snapshot.c: raft_fsm snapshot and finalize, by a forked child. */
void replog__snapshot_init(struct replog *l);
void replog__snapshot_record(struct replog *l, int64_t index,
                             const void *payload, size_t len);
void replog__snapshot_discard(struct replog *l);
void replog__snapshot_poke(struct replog *l);
/* A snapshot was stored (status 0), or not serialized or not stored
 * (already logged): the wait before the next one. */
void replog__snapshot_stored(struct replog *l, int status);
/* The snapshot stored could not be read to be sent: a new one, soon. */
void replog__snapshot_renew(struct replog *l);

/* arena.c: log entries' memory, given back once raft frees them all; and
 * raft's other memory, which it stops `l`'s process if it cannot have
 * (the last `l` given and not yet forgotten: a process serves one). */
void replog__arena_init(struct replog *l);
void replog__arena_forget(struct replog *l);
/* For a buffer raft will own; NULL when out of memory. */
void *replog__entry_alloc(size_t size);
/* Through raft's heap, for raft to free, but ours: NULL when out of
 * memory, for the caller to answer, never a stop. */
void *replog__own_calloc(size_t n, size_t size);
void *replog__own_realloc(void *ptr, size_t size);

/* wal.c: the log's files, in front of l->uv as l->io. */
int replog__wal_init(struct replog *l, off_t segment_bytes);
/* After the io is closed, or when raft_init failed. */
void replog__wal_free(struct raft_io *io);
/* The log_* figures of replog_stats. */
void replog__wal_stats(struct raft_io *io, struct replog_stats *out);
/* wal-meta's fresh flag (fresh.c): read; set, 0 or an errno value. */
int replog__wal_fresh(struct raft_io *io);
int replog__wal_set_fresh(struct raft_io *io, int on);
/* Calls replog__submit, then writes what is pending, before the loop next
 * waits. */
void replog__wal_flush_soon(struct raft_io *io);

/* transport.c */
void replog__local_transport_init(struct raft_uv_transport *t);

/* tcp.c: an ensemble's transport.  Freed once raft_uv has closed it, or
 * if raft_uv never used it. */
int replog__tcp_init(struct raft_uv_transport *t, struct replog *l);
void replog__tcp_free(struct raft_uv_transport *t);
/* Ends the connections to a member at another address than raft's
 * configuration now gives it (removed, then added again elsewhere). */
void replog__tcp_follow(struct raft_uv_transport *t);

#endif
