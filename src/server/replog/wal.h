/* The log's own files, behind raft_io: the entries go to `wal-<seq>` files
 * written here (the first configuration too, wal_bootstrap.c), the term and
 * the vote to wal-meta (wal_term.c), the snapshots to `state-<index>` files
 * (snapstore.c).  raft_uv carries messages and ticks, and writes no file
 * but its probe at each start (docs/disk-format.md).
 * raft_uv wrote one batch at a time, so an entry proposed while a batch is
 * on its way to the disk waited for that batch and then for its own; here
 * WAL_INFLIGHT writes may be on their way at once, each its own records,
 * and raft hears of them in the order they were submitted.
 *
 * A record is a header and its payload, padded to WAL_BLOCK so that no two
 * writes share a block.  Each header holds the CRC of the record before it
 * in the log (`prev`), so a record counts only if it follows the last one
 * that counted: what a crash leaves of a write beyond the first lost one,
 * or of an earlier run, never joins the log.
 *
 * A segment that snapshots cover is kept as a spare (`wal-spare-<seq>`,
 * WAL_SPARES of them at most, while the disk has room) and renamed to be
 * the next segment when one is needed: its blocks are allocated and
 * written, as a fresh segment's are only after 8 MiB of zeros are written
 * and synced, which a log write queued behind them waited for.  Its old
 * records stay until overwritten, and each header holds its segment's
 * sequence number: a record found in another segment than the one it was
 * written to is not read. */
#ifndef TB_SERVER_RAFT_WAL_H
#define TB_SERVER_RAFT_WAL_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/aio_abi.h>
#include <raft.h>
#include <uv.h>

#include "common/common.h"
#include "common/hist.h"

#define WAL_BLOCK       4096
#define WAL_INFLIGHT    2
#define WAL_SPARES      16
#define WAL_LARGE_WRITE ((uint64_t)32 << 10) /* wal.c */
#define WAL_STATE_REF   32                   /* snapstore.c */
#define WAL_MAGIC       0x33574254u          /* "3WBT" on disk */
/* The formats of older tumblerds, refused. */
#define WAL_MAGIC_1 0x31574254u
#define WAL_MAGIC_2 0x32574254u

enum wal_kind {
    WAL_ENTRIES = 1,  /* n entries from `index` on */
    WAL_TRUNCATE = 2, /* entries from `index` on are void */
    WAL_RESET = 3,    /* every entry is void; the next is `index` */
    WAL_CLOSED = 4,   /* closed cleanly: every write before it completed */
};

/* A record, big-endian, starting at a block boundary:
 *
 *   OFFSET  SIZE  FIELD
 *        0     4  magic WAL_MAGIC
 *        4     4  crc: CRC-32 of bytes 8 .. WAL_HDR + len
 *        8     4  prev: the crc of the record before it in the log
 *       12     4  kind (enum wal_kind)
 *       16     8  index
 *       24     8  write: the number of the write that carried it; it
 *                 rises along the log (wal_load.c bounds a torn tail by it)
 *       32     4  n: entries in the payload
 *       36     4  seg: its segment's sequence number, low 32 bits
 *       40     8  len: payload bytes
 *       48     8  log: the log's id, chosen when it was made (wal-meta)
 *       56     8  seg_size: its segment's size when it was made
 *       64   len  payload: n entries, each
 *                   0  8  term
 *                   8  4  type
 *                  12  4  size S
 *                  16  S  bytes, then zeros up to a multiple of 8
 *        …        zeros up to the next block
 */
enum {
    WAL_H_MAGIC = 0,
    WAL_H_CRC = 4,
    WAL_H_PREV = 8,
    WAL_H_KIND = 12,
    WAL_H_INDEX = 16,
    WAL_H_WRITE = 24,
    WAL_H_N = 32,
    WAL_H_SEG = 36,
    WAL_H_LEN = 40,
    WAL_H_LOG = 48,
    WAL_H_SEG_SIZE = 56,
    WAL_HDR = 64,
    WAL_E_TERM = 0,
    WAL_E_TYPE = 8,
    WAL_E_SIZE = 12,
    WAL_E_HDR = 16,
};

struct wal_rec {
    uint32_t crc, prev, kind, n, seg;
    uint64_t index, write, len, log, seg_size;
    const uint8_t *payload;
};

/* A record's size on disk: header and payload, padded to the block. */
static inline size_t wal_aligned(size_t n)
{
    return (n + WAL_BLOCK - 1) & ~(size_t)(WAL_BLOCK - 1);
}

struct wal_seg {
    uint64_t seq;
    uint64_t made;       /* bytes it was made, as its records say; 0: none */
    uint64_t last_index; /* of the entries written in it; 0: none */
    off_t end;           /* where its next record goes */
    off_t stale_to;      /* records a crash left lie between end and this
                            (wal_load.c): zeroed before it takes writes */
    off_t size;          /* zero-filled bytes: it is full at this end */
    int fd;              /* -1 once closed */
    int direct;          /* 0 not known yet, 1 O_DIRECT, 2 not */
    unsigned writing;    /* writes not yet completed */
    uint64_t writes;     /* submitted into it */
};

/* Records waiting for a write: one aligned buffer, and who to answer. */
struct wal_batch {
    uint8_t *buf;
    size_t len, cap;
    size_t open; /* offset of the ENTRIES record still growing, or SIZE_MAX */
    struct wal_ack {
        struct raft_io_append *req;
        raft_io_append_cb cb;
    } * acks;
    unsigned n_acks, cap_acks;
    uint64_t last_index; /* of its entries; 0: none */
    unsigned n_entries;
};

struct wal_write {
    struct iocb iocb; /* written by kernel AIO */
    uv_work_t work;   /* or on the threadpool */
    struct wal *w;
    struct wal_seg *seg;
    off_t off;
    struct wal_batch b;
    int status; /* errno value from the thread */
    int done;
    uint64_t submitted_ns;
    struct wal_write *next;
};

/* What wal-meta keeps (wal_meta.c): the log's id, in every record; the
 * oldest and newest segments (0: none yet), so that every one between
 * them must be there; the newest zxid epoch a repair began; raft's term
 * and vote. */
#define WAL_META_NAME "wal-meta"
struct wal_meta {
    uint64_t log_id, oldest, newest, epoch;
    uint64_t repair_bound; /* a repair cut, zxids not yet moved: see
                              wal_meta.c */
    uint64_t server_id;    /* whose log it is */
    uint64_t term, vote;   /* raft's; term 0: not bootstrapped */
    uint64_t fresh;        /* 1: caught up with no leader yet (fresh.c) */
};

/* What reading the log found (wal_load.c): where it ends, and what lies
 * beyond its end.  A repair (wal_repair.c) cuts the log there. */
struct wal_exam {
    uint64_t end_seq;    /* segment of the log's last record; 0: none */
    off_t end_off;       /* just after that record */
    uint64_t end_made;   /* the size its segment was made */
    uint64_t end_write;  /* its write's number */
    int end_closed;      /* it is a WAL_CLOSED record */
    uint64_t last_index; /* of the log's last entry (raft_uv's included) */
    /* Records of this log beyond the end: what a crash left, when the log
     * opens; what a repair drops otherwise (as far as they are whole). */
    uint64_t beyond, beyond_entries, beyond_first, beyond_last;
    uint64_t last_wal_index; /* of the log's last entry in a segment */
    uint64_t max_index; /* the highest index of any record of this log */
    uint64_t bytes_beyond; /* of the segments, from the end on */
    int cut_all;           /* the segments do not follow the snapshot */
    int snapshot;          /* a snapshot precedes the log */
    int voided;            /* their entries dropped for the snapshot's */
    int odd_spares;     /* some wal-spare-* cannot serve: removed */
    int leftovers;      /* segments before the oldest: removed */
    int damaged;        /* the log's errmsg says how */
    unsigned members;   /* servers of the last configuration loaded (an
                           entry's, else the snapshot's); 0: none */
};

/* The log's state, on the loop.  At all times (replog__wal_check, in debug
 * builds, after each write is submitted or completes, each append or mark,
 * and each segment taken into use, prepared or removed):
 *   - head..tail lists the writes submitted and not yet handed back to
 *     raft, in submission order (a write done before the one ahead of it
 *     waits there): head is NULL iff tail is, tail->next is NULL, and
 *     inflight is their number, at most WAL_INFLIGHT;
 *   - every write on the list goes to the last of segs, one after the
 *     other: each begins where the one before it ends, the tail ends at
 *     that segment's `end`, whose `writing` is inflight (every other
 *     segment's is 0), and whose last_index is at least theirs;
 *   - the records of those writes, then pending's, follow one another:
 *     the writes are numbered up to write_seq - 1, one apart, each record
 *     sealed with its write's number and its segment, its prev the crc of
 *     the record before it, the tail's last crc last_crc; each ENTRIES
 *     record begins at the index where the record before it ends (a
 *     TRUNCATE or RESET record ends at its own index), and the last ends at
 *     next_index;
 *   - a batch holds whole records at block boundaries, all closed but the
 *     ENTRIES record at `open` (SIZE_MAX: none), which runs to its `len`;
 *     n_entries and last_index are its entries' number and the last one's
 *     index (0: none); pending's appends (n_acks) came at times summed in
 *     pending_at_ns, 0 without any;
 *   - segs ascend by seq, each below next_seq; only the last may be open
 *     (fd >= 0), and it is while a write is on its way; a segment's end is
 *     a multiple of WAL_BLOCK, beyond its size only after a first write
 *     larger than the segment;
 *   - ready and prep_seg are never both set, and neither is in segs: their
 *     seq is above the last segment's and below next_seq; ready is open and
 *     holds nothing of the log (end 0, no write);
 *   - removal_busy iff doomed is set, with n_doomed > 0 segments, all below
 *     removal_oldest, the first of segs;
 *   - unused is empty once the log is loaded; n_spare_segs <= WAL_SPARES,
 *     n_spare <= WAL_INFLIGHT + 1;
 *   - uv_snap only with uv_files: the snapshot loaded is raft_uv's only
 *     while raft_uv's files are here;
 *   - overlapped and threaded count some of the writes, queued some of the
 *     appends; bytes is whole blocks, at least one a write. */
struct wal {
    struct replog *l;
    struct raft_io *io, *uv;
    uv_loop_t *loop;
    char *dir;
    off_t seg_bytes;
    struct wal_meta meta; /* as in wal-meta (wal_meta.c) */
    uint64_t write_seq;  /* the number of the next write */
    int loaded;          /* the log was read and found whole */
    int repair;          /* cut damage instead of refusing (wal_repair.c) */
    char backup[32];     /* repair-<time>, where the files it cut went */
    struct wal_exam repair_exam; /* the log before the cut */
    int fresh;           /* the directory was empty: a new log */
    /* The term and vote in w->meta come from raft_uv's metadata1/2 (a
     * wal-meta of format 1): wal_term.c writes them into wal-meta and
     * removes those files once the log is found whole. */
    int adopt_term;
    /* Set while tumblerd --recover-ensemble reads or recovers the log
     * (recover.c): the load changes nothing; wal_recover does the rest. */
    struct replog_recovery *recovery;
    int foreign; /* ... another server's log, only read: its id unchecked */
    struct wal_exam exam;
    raft_index next_index; /* of the next entry appended */
    uint32_t last_crc;     /* of the last record submitted */
    struct wal_batch pending;
    struct wal_write *head, *tail; /* submitted, in order */
    aio_context_t aio;             /* 0: writes go to the threadpool */
    int aio_fd;                    /* eventfd the AIO completions signal */
    uv_poll_t aio_poll;
    uv_prepare_t flusher; /* submits pending before the loop next waits */
    int flusher_on;       /* initialized: closed with the log */
    unsigned inflight;
    struct wal_seg **segs; /* ascending; the last one is written to */
    unsigned n_segs, cap_segs;
    uint64_t next_seq;
    struct wal_seg *ready; /* prepared, not yet written to */
    struct wal_seg **unused; /* beyond ready, removed by replog__wal_tidy */
    unsigned n_unused;
    uv_work_t prep;
    struct wal_seg *prep_seg; /* being prepared */
    uint64_t prep_spare;      /* the spare it is renamed from; 0: zero-filled
                                 (also when that spare could not be renamed) */
    int prep_err;
    int prep_zero;      /* a new segment is zero-filled; else reserved */
    int prep_sync_once; /* synced once: nothing is written meanwhile */
    uint64_t spare_segs[WAL_SPARES]; /* seqs in their wal-spare-<seq> names */
    unsigned n_spare_segs;
    uv_work_t removal;
    int removal_busy;
    struct wal_doomed {
        uint64_t seq;
        int keep; /* renamed to a spare; cleared if that failed */
    } * doomed;   /* segments the removal work unlinks or keeps */
    unsigned n_doomed;
    uint64_t removal_oldest; /* the oldest segment the removal keeps */
    raft_io_tick_cb tick;
    raft_io_recv_cb recv;
    raft_io_close_cb close_cb;
    int closing;
    struct raft_io_snapshot_put *put_req;
    raft_io_snapshot_put_cb put_cb;
    raft_index put_index;
    unsigned put_trailing;
    /* snapstore.c: the snapshot being stored, and how it went. */
    const struct raft_snapshot *put_snap_in;
    uv_work_t put_work;
    int put_status;
    int put_reuse; /* it may write over a stale state file: none is read */
    char put_errmsg[RAFT_ERRMSG_BUF_SIZE];
    raft_index state_kept; /* the snapshot last stored, or loaded */
    /* An older tumblerd's directory: raft_uv's files are here, and the
     * snapshot loaded is theirs (snapstore.c). */
    int uv_files, uv_snap;
    unsigned snap_busy;    /* snapstore.c's works running */
    unsigned snap_gets;    /* ... of them, reads of a stored snapshot */
    struct {
        uint8_t *buf;
        size_t cap;
    } spare[WAL_INFLIGHT + 1]; /* write buffers kept for reuse */
    unsigned n_spare;
    uint64_t writes;        /* submitted */
    uint64_t bytes;         /* in them */
    uint64_t overlapped;    /* submitted while another was on its way */
    uint64_t threaded;      /* written by the threadpool */
    uint64_t entries;       /* appended */
    uint64_t appends;       /* raft's appends, each of one or more entries */
    uint64_t queued;        /* of those, made while WAL_INFLIGHT writes were on
                               their way: they wait for one to end */
    uint64_t wait_ns;       /* appends' time until their write was submitted */
    uint64_t pending_at_ns; /* pending's appends: when each came, summed */
    uint64_t write_ns, write_ns_max; /* submission to completion, done ones */
    struct hist write_hist;          /* ... their spread */
    uint64_t segs_zeroed, segs_reserved, segs_reused;
};

/* wal.c: records, writes and segments. */
/* Writes all n bytes at off: 0 or an errno value. */
int replog__wal_pwrite_all(int fd, const void *p, size_t n, off_t off);
/* Zeros over [from, to) of segment `seq` (its length kept unless
 * `resize`: then it becomes `to` long), synced; 0 or RAFT_IOERR with
 * the message, after `what`, in errmsg. */
int replog__wal_zero(struct wal *w, uint64_t seq, off_t from, off_t to,
                     int resize, const char *what);
void replog__wal_path(const struct wal *w, uint64_t seq, char *buf, size_t n);
void replog__wal_spare_path(const struct wal *w, uint64_t seq, char *buf,
                            size_t n);
int replog__wal_sync_dir(const char *dir);
int replog__wal_append(struct raft_io *io, struct raft_io_append *req,
                       const struct raft_entry entries[], unsigned n,
                       raft_io_append_cb cb);
int replog__wal_truncate(struct raft_io *io, raft_index index);
int replog__wal_mark(struct wal *w, uint32_t kind, uint64_t index);
void replog__wal_batch_free(struct wal *w, struct wal_batch *b);
void replog__wal_cancel_pending(struct wal *w);
/* At a clean close, once every write has ended: a WAL_CLOSED record. */
void replog__wal_mark_closed(struct wal *w);
void replog__wal_start_prep(struct wal *w);
void replog__wal_maybe_prep(struct wal *w);
void replog__wal_aio_init(struct wal *w);
void replog__wal_flusher_init(struct wal *w);

/* check.c, in debug builds: 0 if every "at all times" statement of struct
 * wal holds, else TB_EDATAINCONSISTENCY with the first that does not in
 * why.  WAL_CHECK traps on one that does not (and is nothing with NDEBUG). */
#ifndef NDEBUG
int replog__wal_check(const struct wal *w, char *why, size_t cap);
void replog__wal_check_trap(const struct wal *w);
#define WAL_CHECK(w) replog__wal_check_trap(w)
#else
#define WAL_CHECK(w) ((void)0)
#endif

/* wal_io.c: raft_uv's calls, snapshots, closing. */
void replog__wal_maybe_closed(struct wal *w);
void replog__wal_put_done(struct wal *w, int status);
/* Frees a snapshot raft_uv loaded. */
void replog__wal_snapshot_free(struct raft_snapshot **snap);

/* snapstore.c: snapshots in files of their own. */
int replog__snapstore_put(struct wal *w, const struct raft_snapshot *s);
int replog__snapstore_get(struct wal *w, struct raft_io_snapshot_get *req,
                          raft_io_snapshot_get_cb cb);
int replog__snapstore_load(struct wal *w, struct raft_snapshot **snap);
/* The state in place of raft_uv's reference to it, in a snapshot raft_uv
 * loaded from an older tumblerd's directory. */
int replog__snapstore_expand(const char *dir, struct raft_snapshot *s,
                             char *errmsg);
/* Once the log is found whole: raft_uv's snapshot, if `snap` is, written
 * in this format, and raft_uv's files removed. */
int replog__snapstore_adopt(struct wal *w, const struct raft_snapshot *snap);

/* A segment opened for writing records, or -1 (errno). */
int replog__wal_open(const char *path);
/* Makes `s` the segment written to. */
int replog__wal_add_seg(struct wal *w, struct wal_seg *s);

/* wal.c: the bytes of records not yet on the disk (pending, and the
 * writes on their way), which the free space measured does not show yet. */
uint64_t replog__wal_unwritten(const struct wal *w);

/* wal_meta.c */
/* 0, RAFT_NOTFOUND (no file), RAFT_CORRUPT or RAFT_IOERR with errmsg.
 * *format is 2, or 1 for a wal-meta without the term and vote (0 in m):
 * raft_uv's metadata1/metadata2 hold them (wal_term.c). */
int replog__wal_meta_read(const char *dir, struct wal_meta *m, int *format,
                          char *errmsg, size_t errlen);
/* 0 or an errno value. */
int replog__wal_meta_write(const char *dir, const struct wal_meta *m);
/* Sets one field of w->meta and writes it all, if that changes it: 0 or
 * an errno value (the field then keeps its old value).  Safe from the loop
 * and from a segment's preparation or removal at once; the loop reads the
 * fields those threads set (oldest, newest) only while the log loads,
 * before any of them runs. */
enum wal_meta_field {
    WAL_META_OLDEST,
    WAL_META_NEWEST,
    WAL_META_EPOCH,
    WAL_META_REPAIR_BOUND,
    WAL_META_SERVER_ID,
    WAL_META_FRESH,
};
int replog__wal_meta_set(struct wal *w, enum wal_meta_field f, uint64_t v);
/* Sets the term and the vote together, and writes wal-meta: 0 or an errno
 * value (they then keep their old values). */
int replog__wal_meta_set_term(struct wal *w, uint64_t term, uint64_t vote);

/* wal_bootstrap.c: raft's bootstrap, the log's first record. */
int replog__wal_bootstrap(struct raft_io *io,
                          const struct raft_configuration *c);

/* wal_term.c: raft's term and vote, kept in wal-meta. */
/* raft_uv's metadata1/metadata2, where a wal-meta of format 1 leaves the
 * term and vote: read into w->meta, changing nothing (w->adopt_term set);
 * 0 or RAFT_CORRUPT / RAFT_IOERR with the io's errmsg. */
int replog__wal_term_read_uv(struct wal *w);
/* Once the log is found whole: the term and vote read from raft_uv's
 * files written into wal-meta, then those files removed. */
int replog__wal_term_adopt(struct wal *w);
/* The term and vote written, synced: 0 or RAFT_IOERR with the io's
 * errmsg. */
int replog__wal_save_term(struct wal *w, raft_term term, raft_id vote);
/* raft's set_term and set_vote: the server stops if they fail. */
int replog__wal_set_term(struct raft_io *io, raft_term term);
int replog__wal_set_vote(struct raft_io *io, raft_id id);

/* wal_load.c */
int replog__wal_decode(const uint8_t *p, size_t avail, struct wal_rec *r);
/* Scans the files of `w` and merges them after raft_uv's entries. */
int replog__wal_load(struct wal *w, struct raft_snapshot *snap,
                     raft_index *start, struct raft_entry **entries, size_t *n);
uint32_t replog__wal_crc(uint32_t crc, const void *p, size_t n);
/* Zeros what a crash left beyond the end, then removes what the log
 * found whole does not use (wal_load.c); 0 or RAFT_IOERR. */
int replog__wal_tidy(struct wal *w);
/* Entries replog__wal_load gave, and raft_uv's load. */
void replog__wal_entries_free(struct raft_entry *e, size_t n);
void replog__wal_uv_entries_free(struct raft_entry *e, size_t n);

/* recover.c: raft_recover's work (wal_io.c's io->recover). */
int replog__recover_io(struct wal *w, const struct raft_configuration *c);

/* wal_repair.c: cuts a damaged log at its end (w->exam), after copying
 * what it changes; raises the term (wal-meta) to the log's. */
int replog__wal_repair(struct wal *w);
int replog__wal_repair_term(struct wal *w, raft_term term);

#endif
