/* replog: the server's replicated log, a thin layer over libraft 0.15.
 *
 * The rest of the server sees an ordered, durable log of opaque payloads and
 * a state machine that consumes them; it never includes raft.h.  Keeping the
 * surface this small is what lets us swap the library (cowsql/raft, or our
 * own) later, and it is the one place where the defects of libraft 0.15 that
 * lose data silently are guarded:
 *
 *   G1  every entry is padded to a multiple of 8 bytes and carries its real
 *       length inside (format drawn in envelope.h);
 *   G2  raft_uv auto-recovery is off, and the log's own segments may end
 *       early only in the last one (wal_load.c): a damaged log makes
 *       replog_open fail;
 *   G3  writes are refused with TB_ENOTREADONLY before the disk fills up;
 *   G4  the state machine's apply has no failure return;
 *   G5  the snapshot threshold grows with the state size, and the time the
 *       loop spends serializing a snapshot is measured.
 *
 * A lone voter leads as soon as replog_open returns.  An ensemble's members
 * (replog_config.peers) talk over TCP (transport.c), and leadership changes
 * are reported through on_leader (polled on the tick).
 *
 * Threading: everything here, and every callback it makes, runs on the
 * thread that runs `loop`.  Nothing is thread-safe. */
#ifndef TB_SERVER_REPLOG_H
#define TB_SERVER_REPLOG_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "common/common.h"
#include "common/hist.h"

/* Log severities, syslog(3) numbering, so a shared logger can map them. */
enum {
    REPLOG_LOG_ERROR = 3,
    REPLOG_LOG_WARN = 4,
    REPLOG_LOG_INFO = 6,
    REPLOG_LOG_DEBUG = 7,
};

/* The exit status of a process whose log could not be written (EX_IOERR):
 * see replog__fail_stop. */
#define REPLOG_EXIT_LOG_FAILED 74

/* Largest payload replog_propose accepts. */
#define REPLOG_MAX_PAYLOAD ((size_t)1 << 30)

/* How many defects of libraft 0.15's replication mend.c mends. */
#define REPLOG_MENDS 9

/* The replicated state machine.  All callbacks run on the loop thread. */
struct replog_fsm {
    void *data;
    /* Applies the committed entry at `index` (strictly increasing, gaps are
     * entries that are not commands).  `payload` is borrowed: valid only
     * during the call.  Must be deterministic and cannot fail: a business
     * error (no node, bad version) is a result of the entry, not a failure
     * of apply.  Also runs during replog_open to replay the log. */
    void (*apply)(void *data, int64_t index, const void *payload, size_t len);
    /* Serializes the whole state into `out` (initialized and empty); returns
     * 0 or a negative TB_E* code.  Runs on the loop thread: its duration is
     * the loop stall recorded in the stats. */
    int (*snapshot)(void *data, struct tb_wbuf *out);
    /* Replaces the whole state with a serialized one (borrowed buffer);
     * returns 0 or a negative TB_E* code.  Runs during replog_open, and in an
     * ensemble when the leader installs a snapshot. */
    int (*restore)(void *data, const void *buf, size_t len);
};

/* A structured field of a log line: a string, or (str NULL) a number.
 * Valid only during the log call. */
struct replog_field {
    const char *key;
    const char *str;
    int64_t num;
};

/* A member of an ensemble. */
struct replog_peer {
    int id;              /* > 0 */
    const char *address; /* "host:port" its raft listens on */
    int voter;           /* 0: it replicates the log without a vote */
};

struct replog_config {
    const char *dir;         /* data directory; created if missing */
    int server_id;           /* > 0, stable for the life of the data dir */
    const char *address;     /* "ip:port" identity for raft peers; unused by a
                                lone voter; NULL means "127.0.0.1:0" */
    /* The ensemble's members, this server among them (its address is
     * then that one's); fewer than two: a lone voter.  Every member is
     * given the same list; a log made with another one is refused. */
    const struct replog_peer *peers;
    unsigned n_peers;
    uint64_t min_free_bytes; /* refuse writes when free disk is below
                                max(this, 24 MiB) + 2 x last snapshot (G3) */
    /* The free bytes of dir's file system into *bytes, 0 or -errno; NULL:
     * statvfs.  For tests that need a disk of a given size, whatever else
     * the machine writes meanwhile. */
    int (*free_space)(void *data, const char *dir, uint64_t *bytes);
    void *free_space_data;
    /* Snapshot policy (G5); 0 picks the default in brackets.  A snapshot
     * is due when the log since the last one holds as many bytes as the
     * state, at least snapshot_log_bytes (the memory raft keeps it in is
     * bounded so, and snapshots write no more than the log did), or after
     * snapshot_max_entries entries.  An entry counts its payload and what
     * raft keeps per entry besides. */
    unsigned snapshot_max_entries; /* [no limit] */
    uint64_t snapshot_log_bytes;   /* [4 MiB] */
    unsigned snapshot_trailing;    /* entries kept after one, at most
                                      snapshot_log_bytes of them [8192] */
    /* Once no write has been proposed or applied for this long, a snapshot
     * is also taken if the log holds a quarter of what would make one due:
     * the memory a burst of writes left is given back, on every member (one
     * that does not lead starts at half this, and takes it at the barrier
     * the leader then appends). */
    unsigned snapshot_idle_ms; /* [100] */
    /* Serialize snapshots on the loop rather than in a forked child (what
     * is done anyway when fork fails). */
    int snapshot_in_loop;
    /* Cut a log that is damaged beyond what a crash leaves at its last
     * good record (wal_repair.c) instead of refusing to open it; see
     * replog_repair_report. */
    int repair_log;
    /* Raft timing, for ensembles; 0 picks the default in brackets. */
    unsigned election_timeout_ms;  /* [500] */
    unsigned heartbeat_timeout_ms; /* [50] */
    /* A new server that an ensemble already running adds at run time
     * (replog_member_add on its leader): its log starts empty, not with
     * the members above, and fills from the leader's. */
    int join;
    /* Peer TLS, optional: with start set, every connection between the
     * members is handed to it once made (its socket, `dialing` to `peer`,
     * the member's "host:port", or accepted), and carries raft's bytes on
     * the fd that cb then gets (-1: it failed).  start returns a handle
     * for cancel (cb then never fires), or NULL (fd closed, no cb). */
    struct replog_secure {
        void *(*start)(void *data, int fd, int dialing, const char *peer,
                       void (*cb)(void *arg, int fd), void *arg);
        void (*cancel)(void *handle);
        void *data;
        int dial_plain; /* connections made are plain: only those taken
                           go through start (portUnification without
                           sslQuorum) */
    } secure;
    /* Log sink; NULL prints warnings and errors to stderr. `msg` has no
     * trailing newline and is valid only during the call. */
    void (*log)(void *data, int level, const char *msg);
    /* Optional, called instead of `log` when set: the same line with its
     * structured fields (replog_field; n of them, possibly none), for a log
     * that keeps them apart from the message, as a JSON one does.  Lines
     * an operator follows carry an "event" field naming what happened
     * ("snapshot", "snapshot_restored", "leadership_taken",
     * "leadership_lost", "leadership_transfer", "election_started") and
     * the figures the message says. */
    void (*log_fields)(void *data, int level, const char *msg,
                       const struct replog_field *f, size_t n);
    void *log_data;
    /* Optional: called from a timer when this server gains or loses
     * leadership (libraft 0.15 has no state callback, G6). */
    void (*on_leader)(void *data, int is_leader);
    void *on_leader_data;
};

struct replog_stats {
    int64_t last_applied;            /* same as replog_last_applied */
    uint64_t entries_applied;        /* fsm apply calls, replay included */
    uint64_t entries_malformed;      /* skipped: bad envelope (logged) */
    uint64_t proposals_refused_disk; /* TB_ENOTREADONLY answers */
    int64_t proposal_last;           /* entries proposed while leading, */
    int64_t proposal_min;            /* in bytes (ZooKeeper's "Proposal */
    int64_t proposal_max;            /* sizes"); 0 before the first */
    uint64_t snapshots_taken;        /* fsm snapshot calls that succeeded */
    uint64_t snapshots_failed;       /* snapshots not serialized or not
                                        stored */
    uint64_t snapshots_in_loop;      /* of those, serialized on the loop */
    uint64_t snapshot_delta_last;    /* entries applied while the latest
                                        snapshot's child ran */
    double snapshot_stall_max_ms;    /* longest fsm snapshot call (a fork,
                                        or a serialization on the loop) */
    double snapshot_stall_last_ms;   /* latest fsm snapshot call */
    struct hist snapshot_hist;       /* each snapshot's making: the fork (or
                                        the call serializing on the loop) to
                                        its state in hand, as its log line's
                                        "made in" */
    uint64_t last_snapshot_bytes;    /* serialized state size (uncompressed),
                                        taken or restored */
    unsigned snapshot_threshold;     /* at most this many entries between
                                        snapshots; 0: no limit */
    uint64_t snapshot_log_limit;     /* ... or this many bytes of them */
    uint64_t snapshot_log_bytes;     /* bytes applied since the latest */
    int snapshot_busy;               /* a snapshot is being serialized or
                                        written: raft starts no other */
    uint64_t free_bytes;             /* last measured free disk space */
    uint64_t free_limit;             /* writes are refused below this */
    uint64_t disk_checks;            /* statvfs calls */
    /* How often each of mend.c's mends of libraft 0.15's replication was
     * needed, mended[i] for its mend i + 1: answers capped, late answers
     * not sent, AppendEntries moved past the snapshot, pre-vote rejections
     * naming this member's term, configurations rolled back, snapshots
     * taken over an entry of a later term, elections started again with a
     * pre-vote, heartbeats to a server sent a snapshot that name index 0,
     * elections held off while a snapshot is installed. */
    uint64_t mended[REPLOG_MENDS];
    uint64_t log_writes;             /* synced writes of the log */
    uint64_t log_writes_overlapped;  /* of those, submitted while another
                                        was on its way */
    uint64_t log_writes_threaded;    /* of those, by the threadpool */
    uint64_t log_entries;            /* entries appended */
    uint64_t log_appends;            /* appends of one or more entries */
    uint64_t log_appends_queued;     /* of those, made while the log's
                                        writes in flight were all taken */
    uint64_t log_append_wait_us;     /* append to its write's submission,
                                        summed */
    uint64_t log_write_us;           /* submission to completion, summed */
    uint64_t log_write_us_max;       /* ... the longest */
    uint64_t log_segments_zeroed;    /* new segments, zero-filled */
    uint64_t log_segments_reserved;  /* new segments, blocks reserved */
    uint64_t log_segments_reused;    /* spares renamed to be the next */
    uint64_t log_spare_segments;     /* spares kept now */
    struct hist log_write_hist;      /* log_write_us's spread */
    uint64_t term;                   /* raft's current term */
    uint64_t leader_changes;         /* times the leader this server knows
                                        of became another (none included) */
};

struct replog;

/* What opening with repair_log did, or an earlier repair left to do. */
struct replog_repair {
    int repaired;   /* a repair cut the log, and zxids are still to move
                       past `bound`: all below set */
    uint64_t bound; /* the highest index a client may have seen a
                       zxid of before the cut */
    uint64_t epoch; /* the newest zxid epoch begun (0: none) */
    uint64_t last_index;      /* the log's last entry now */
    /* What this run's cut dropped (0s when an earlier run cut): */
    char backup[512];         /* the folder holding copies of what changed */
    uint64_t dropped;         /* whole records found beyond the cut ... */
    uint64_t dropped_entries; /* ... the entries in them */
    uint64_t dropped_first, dropped_last; /* ... their indexes */
    uint64_t dropped_bytes; /* segment bytes beyond the cut, whole or not */
};

/* Called exactly once per accepted proposal: status 0 once the entry is
 * durable, committed and applied (fsm apply for `index` ran just before,
 * with no other apply in between), else a negative TB_E* code and the
 * outcome is unknown: the entry may still be committed and applied, now or
 * after a restart.  TB_ECLOSING when the log closed first,
 * TB_ECONNECTIONLOSS when leadership was lost.  `index` is the entry's log
 * index (0 if it never got one). */
typedef void (*replog_done_cb)(void *arg, int status, int64_t index);

/* Opens (bootstrapping a pristine dir), restores the newest snapshot and
 * replays the log through fsm->apply before returning; a lone voter is then
 * leader.  `cfg` and `fsm` are copied.  On failure returns a negative
 * TB_E* code after logging the reason (TB_EDATAINCONSISTENCY for a damaged
 * log or snapshot); some cleanup may then still be pending on the loop, so
 * run the loop before uv_loop_close. */
int replog_open(struct replog **out, uv_loop_t *loop,
                const struct replog_config *cfg, const struct replog_fsm *fsm);

/* Appends a copy of `payload`.  Returns 0 (done will fire exactly once) or,
 * without calling done: TB_ENOTREADONLY when free disk is below the limit,
 * TB_ECLOSING after replog_close, TB_ETOOBIG above REPLOG_MAX_PAYLOAD,
 * TB_ENOMEM, TB_EINVAL, or TB_ESYSTEM (not leader and the like; logged).
 * May be called from inside done and apply callbacks. */
int replog_propose(struct replog *l, const void *payload, size_t len,
                   replog_done_cb done, void *arg);

/* As replog_propose, for the few entries that must get through while
 * ordinary writes are refused for low disk (opening and closing sessions:
 * a closed session releases its ephemeral nodes and locks).  They may use
 * the disk down to the hard floor the log itself needs, which the
 * configured minimum always stays above. */
int replog_propose_reserved(struct replog *l, const void *payload, size_t len,
                            replog_done_cb done, void *arg);

void replog_repair_report(struct replog *l, struct replog_repair *out);
/* Records that zxids reached (or, a repair's, are to reach) epoch
 * `epoch`, if it is above the one recorded: the next repair or recovery
 * begins a later one.  0 or TB_EIO. */
int replog_begin_epoch(struct replog *l, uint64_t epoch);
/* Once zxids have moved (the new epoch's entry applied): the log serves
 * again.  0 or TB_EIO. */
int replog_end_repair(struct replog *l);

/* Index of the newest entry whose effect is in the state machine. */
int64_t replog_last_applied(struct replog *l);
int replog_is_leader(struct replog *l);
/* The server id of the leader this server knows of; 0: none known.  A
 * server without a vote (an observer, or one outside the configuration)
 * knows none once it has heard nothing from its leader for longer than the
 * election timeout, as a voter knows none once it stands for election;
 * the next message from a leader makes it known again. */
int replog_leader(struct replog *l);
/* What the leader knows of another member. */
/* Room for every member there can be: server ids are 1..254. */
#define REPLOG_MAX_MEMBERS 255

struct replog_follower {
    int id;
    int voter;
    int synced;   /* heard from within an election timeout */
    uint64_t lag; /* entries it has yet to store */
};
/* The leader's followers (up to max): their number, 0 on a follower. */
unsigned replog_followers(struct replog *l, struct replog_follower *out,
                          unsigned max);
/* An entry that changes nothing: cb, unless NULL, fires once it is applied
 * here (status 0), or with a TB_E* code.  Once applied on a leader, every
 * entry before it is committed.  0, or a TB_E* code and cb does not fire. */
int replog_barrier(struct replog *l, void (*cb)(void *arg, int status),
                   void *arg);
/* 1 if this server leads and has applied an entry of its own term (its
 * first barrier, at least): raft commits earlier terms' entries only so,
 * so its state then holds whatever any member has applied. */
int replog_leader_caught_up(struct replog *l);
/* The leader `id`'s process is gone (its peer links closed, its port
 * refuses): the first voter after it starts an election at once instead
 * of waiting for election timeouts (failover.c). */
void replog_leader_gone(struct replog *l, int id);
/* Hands leadership to another voter (one raft picks): cb fires once,
 * outside raft, after it leads or an election timeout has passed; another
 * transfer may be asked for from then on.  0, or a negative TB_E* code
 * (not the leader, one in flight, no other voter) and cb does not fire. */
int replog_transfer(struct replog *l, void (*cb)(void *arg), void *arg);

/* Members changed at run time (membership.c), on the leader, one change
 * at a time: cb fires once, with 0 when the configuration entry making the
 * change is committed, else TB_ERECONFIGINPROGRESS (another change is in
 * flight), TB_ENEWCONFIGNOQUORUM (a joining voter did not catch up: it is
 * left a spare), TB_EBADARGUMENTS (the id is a member already, or none),
 * TB_ECONNECTIONLOSS (leadership lost) or another TB_E* code.  The calls
 * return 0, or such a code and cb does not fire. */
int replog_member_add(struct replog *l, int id, const char *address,
                      int voter, void (*cb)(void *arg, int status), void *arg);
int replog_member_assign(struct replog *l, int id, int voter,
                         void (*cb)(void *arg, int status), void *arg);
int replog_member_remove(struct replog *l, int id,
                         void (*cb)(void *arg, int status), void *arg);
/* 1 on a leader while a change is in flight. */
int replog_member_changing(struct replog *l);
/* 1 when every entry this server's log holds is applied. */
int replog_applied_all(struct replog *l);
enum { REPLOG_SPARE, REPLOG_STANDBY, REPLOG_VOTER };
struct replog_member {
    int id;
    char address[280]; /* its raft address, "host:port" */
    int role;          /* REPLOG_* */
};
/* raft's members as this server knows them (the latest configuration
 * entry, committed or not), up to max: their number. */
unsigned replog_members(struct replog *l, struct replog_member *out,
                        unsigned max);

/* Changes the free-disk minimum and re-measures at once. */
void replog_set_min_free(struct replog *l, uint64_t bytes);

void replog_get_stats(struct replog *l, struct replog_stats *out);

/* Stops the log; returns at once, the work happens on the loop.  New
 * proposals are refused from now on.  Appends already accepted are first
 * drained to disk, and a snapshot being written is finished (up to 10 s;
 * libraft 0.15 crashes when closed with appends queued), so apply and done
 * keep firing meanwhile: with a lone voter every pending done gets its real
 * outcome.  Whatever is still pending then gets TB_ECLOSING.  `cb` fires
 * exactly once, after every done, and `l` is freed right before it.  Safe
 * to call from inside callbacks.  Call at most once. */
void replog_close(struct replog *l, void (*cb)(void *arg), void *arg);

#endif
