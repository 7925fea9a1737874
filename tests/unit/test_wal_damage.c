/* Unit tests of what a crash, or damage, leaves of the log's files
 * (src/server/replog/wal_load.c, wal_repair.c), through replog on a
 * temporary directory: gaps and torn writes at the end, a clean close and
 * what a crash after a restart leaves beyond it, damage the log refuses
 * to open on, records of other segments, a repair that keeps no
 * segment, and a member's log, which is not repaired.  The log's
 * writing: test_wal.c. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/capability.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "server/replog/internal.h"
#include "server/replog/wal.h"

#include "raft_fixture.h"
#include "wal_fixture.h"

/* Offsets of the records of segment `seq` that join one after another. */
static size_t record_offsets(const struct fx *f, uint64_t seq, off_t *out,
                             size_t max)
{
    char path[300];
    struct wal_rec r;
    struct stat st;
    uint8_t *buf;
    size_t n = 0, off = 0;
    int fd;

    seg_name(f, seq, path, sizeof path);
    fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(fstat(fd, &st), 0);
    buf = malloc((size_t)st.st_size);
    assert_non_null(buf);
    assert_int_equal(pread(fd, buf, (size_t)st.st_size, 0), st.st_size);
    close(fd);
    while (off < (size_t)st.st_size && n < max &&
           replog__wal_decode(buf + off, (size_t)st.st_size - off, &r) == 0) {
        out[n++] = (off_t)off;
        off += wal_aligned(WAL_HDR + r.len);
    }
    free(buf);
    return n;
}

static void overwrite(const struct fx *f, uint64_t seq, off_t off,
                      const void *p, size_t n)
{
    char path[300];
    int fd;

    seg_name(f, seq, path, sizeof path);
    fd = open(path, O_WRONLY);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, p, n, off), (ssize_t)n);
    assert_int_equal(fsync(fd), 0);
    close(fd);
}

/* A log of `n` proposals of `len` bytes, closed. */
static void write_log(struct fx *f, const struct replog_config *c, int n,
                      size_t len)
{
    int i;

    assert_int_equal(fx_open(f, c), 0);
    for (i = 0; i < n; i++)
        propose_one(f, (uint64_t)i, len);
    fx_close(f);
}

/* The record at `off` of segment `seq`: `n` bytes from there in buf,
 * decoded into *r. */
static void read_record(const struct fx *f, uint64_t seq, off_t off,
                        uint8_t *buf, size_t n, struct wal_rec *r)
{
    char path[300];
    int fd;

    seg_name(f, seq, path, sizeof path);
    fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(pread(fd, buf, n, off), (ssize_t)n);
    close(fd);
    assert_int_equal(replog__wal_decode(buf, n, r), 0);
}

/* The CRC of the record in buf (of payload length len) made again. */
static void reseal(uint8_t *buf, uint64_t len)
{
    tb_store_be32(buf + WAL_H_CRC,
                  replog__wal_crc(0, buf + WAL_H_PREV,
                                  WAL_HDR - WAL_H_PREV + (size_t)len));
}

/* The kind of the record at `off` of segment `seq`. */
static uint32_t kind_at(const struct fx *f, uint64_t seq, off_t off)
{
    struct wal_rec r;
    uint8_t buf[WAL_BLOCK];

    read_record(f, seq, off, buf, sizeof buf, &r);
    return r.kind;
}

/* What a crash leaves instead of a clean close: segment `seq`'s last
 * record, the closing one, is not there. */
static void crash_after_in(const struct fx *f, uint64_t seq, off_t *off,
                           size_t *n)
{
    static const uint8_t zero[WAL_BLOCK];

    *n = record_offsets(f, seq, off, 64);
    assert_true(*n > 0 && *n < 64);
    assert_int_equal(kind_at(f, seq, off[*n - 1]), WAL_CLOSED);
    overwrite(f, seq, off[--*n], zero, sizeof zero);
}

static void crash_after(const struct fx *f, off_t *off, size_t *n)
{
    crash_after_in(f, 1, off, n);
}

/* A crash can leave a later write on the disk and an earlier one not.  A
 * record whose predecessor is missing does not join the log, though it is
 * whole and its index would fit: the log ends at the gap. */
static void test_gap_ends_the_log(void **state)
{
    struct fx *f = *state;
    struct replog_config c = base_config(f);
    static const uint8_t zero[WAL_BLOCK];
    off_t off[64];
    size_t n;

    write_log(f, &c, 4, 200);
    crash_after(f, off, &n);
    assert_true(n >= 4);
    /* The third proposal's record goes; the fourth's stays. */
    overwrite(f, 1, off[n - 2], zero, sizeof zero);

    assert_int_equal(fx_open(f, &c), 0);
    assert_int_equal(f->fsm.n, 2);
    assert_true(rec_matches(&f->fsm.recs[1], 1, 200));
    /* The log goes on from the gap, and the old record stays out. */
    propose_one(f, 7, 300);
    fx_close(f);
    assert_int_equal(fx_open(f, &c), 0);
    assert_int_equal(f->fsm.n, 3);
    assert_true(rec_matches(&f->fsm.recs[2], 7, 300));
}

/* What a crash left beyond the end is zeroed when the log opens.  Left
 * there, the next writes, numbered on from the end's, leave it beyond a
 * later end with a higher number than that end's: after a clean close
 * right after the start (its record numbered as the lost write was), or
 * when the next write goes to the next segment; either read as damage
 * and refused the next start. */
static void gap_then(struct fx *f, int next_segment)
{
    struct replog_config c = base_config(f);
    static const uint8_t zero[WAL_BLOCK];
    off_t off[64];
    size_t n;

    write_log(f, &c, 4, 200);
    crash_after(f, off, &n);
    assert_true(n >= 4);
    overwrite(f, 1, off[n - 2], zero, sizeof zero); /* as above */
    assert_int_equal(fx_open(f, &c), 0);
    assert_int_equal(f->fsm.n, 2);
    if (next_segment) /* too large for the first segment's room */
        propose_one(f, 9, (size_t)REPLOG_FIRST_SEGMENT_BYTES);
    fx_close(f);
    assert_int_equal(fx_open(f, &c), 0);
    assert_int_equal(f->fsm.n, 2 + next_segment);
    if (next_segment)
        assert_true(
            rec_matches(&f->fsm.recs[2], 9, REPLOG_FIRST_SEGMENT_BYTES));
}

static void test_gap_then_clean_close(void **state)
{
    gap_then(*state, 0);
}

static void test_gap_then_next_segment(void **state)
{
    gap_then(*state, 1);
}

/* A clean close, a restart, and a crash while the restarted log's first
 * two writes were on their way: the first torn, the second whole.  Neither
 * was acknowledged, and the second can only be the later run's (the run
 * that closed wrote nothing after its CLOSED record): the log opens at
 * the clean close and drops it, as it drops any crash's torn tail, without
 * --repair-log.  The two writes go after the CLOSED record in segment 1,
 * or, the first too large for the room left there, into segment 2. */
static void clean_restart_then_crash(struct fx *f, int next_segment)
{
    struct replog_config c = base_config(f);
    static const uint8_t zero[WAL_BLOCK];
    off_t off[64];
    size_t n;

    write_log(f, &c, 2, 200);
    assert_int_equal(fx_open(f, &c), 0);
    propose_one(f, 2, next_segment ? (size_t)REPLOG_FIRST_SEGMENT_BYTES : 200);
    propose_one(f, 3, 200);
    fx_close(f);
    crash_after_in(f, 1 + (uint64_t)next_segment, off, &n);
    if (next_segment) {
        assert_int_equal(n, 2);
        overwrite(f, 2, off[0], zero, sizeof zero);
        n = record_offsets(f, 1, off, 64);
        assert_int_equal(kind_at(f, 1, off[n - 1]), WAL_CLOSED);
    } else {
        assert_true(n >= 3);
        assert_int_equal(kind_at(f, 1, off[n - 3]), WAL_CLOSED);
        overwrite(f, 1, off[n - 2], zero, sizeof zero);
    }
    assert_int_equal(fx_open(f, &c), 0);
    assert_int_equal(f->fsm.n, 2);
    assert_non_null(strstr(f->logbuf, "dropped"));
    propose_one(f, 9, 300);
    fx_close(f);
    assert_int_equal(fx_open(f, &c), 0);
    assert_int_equal(f->fsm.n, 3);
    assert_true(rec_matches(&f->fsm.recs[1], 1, 200));
    assert_true(rec_matches(&f->fsm.recs[2], 9, 300));
}

static void test_crash_after_clean_restart(void **state)
{
    clean_restart_then_crash(*state, 0);
}

static void test_crash_after_clean_restart_next_segment(void **state)
{
    clean_restart_then_crash(*state, 1);
}

/* Beyond a clean close, only the next run's first two writes may lie: its
 * third, whole beyond its first, lost, is damage. */
static void test_damage_after_clean_restart_fails_open(void **state)
{
    struct fx *f = *state;
    struct replog_config c = base_config(f);
    static const uint8_t zero[WAL_BLOCK];
    off_t off[64];
    size_t n;

    write_log(f, &c, 2, 200);
    assert_int_equal(fx_open(f, &c), 0);
    propose_one(f, 2, 200);
    propose_one(f, 3, 200);
    propose_one(f, 4, 200);
    fx_close(f);
    crash_after(f, off, &n);
    assert_true(n >= 4);
    assert_int_equal(kind_at(f, 1, off[n - 4]), WAL_CLOSED);
    overwrite(f, 1, off[n - 3], zero, sizeof zero);
    assert_int_not_equal(fx_open(f, &c), 0);
    assert_non_null(strstr(f->logbuf, "beyond the log's break"));
}

/* A torn write (garbage where the next record would be) ends the log; the
 * next write overwrites it. */
static void test_torn_tail(void **state)
{
    struct fx *f = *state;
    struct replog_config c = base_config(f);
    uint8_t junk[WAL_BLOCK];
    off_t off[64];
    size_t n;
    int i;

    write_log(f, &c, 3, 5000);
    n = record_offsets(f, 1, off, 64);
    assert_true(n >= 3);
    /* A header that decodes, with a CRC that does not match. */
    memset(junk, 0x5a, sizeof junk);
    tb_store_be32(junk, WAL_MAGIC);
    overwrite(f, 1, off[n - 1] + 2 * WAL_BLOCK, junk, sizeof junk);

    assert_int_equal(fx_open(f, &c), 0);
    assert_int_equal(f->fsm.n, 3);
    propose_one(f, 3, 10);
    fx_close(f);
    assert_int_equal(fx_open(f, &c), 0);
    assert_int_equal(f->fsm.n, 4);
    for (i = 0; i < 3; i++)
        assert_true(rec_matches(&f->fsm.recs[i], (uint64_t)i, 5000));
    assert_true(rec_matches(&f->fsm.recs[3], 3, 10));
}

/* A crash after a prepared segment was made longer for a large write, and
 * before the write was whole: the segment holds no record, and the log
 * opens without the write, which was never acknowledged. */
static void test_grown_segment_without_its_write(void **state)
{
    struct fx *f = *state;
    struct replog_config c = base_config(f);
    char path[300];
    int i;

    assert_int_equal(fx_open(f, &c), 0);
    for (i = 0; i < 130; i++) /* past half of the first segment */
        propose_one(f, (uint64_t)i, 100);
    assert_true(prepared_unwritten(f, 2) <= 0);
    fx_close(f);
    seg_name(f, 2, path, sizeof path);
    assert_int_equal(truncate(path, 12001280), 0);
    assert_int_equal(fx_open(f, &c), 0);
    assert_int_equal(f->fsm.n, 130);
    propose_one(f, 130, 100);
    fx_close(f);
    assert_int_equal(fx_open(f, &c), 0);
    assert_int_equal(f->fsm.n, 131);
    assert_true(rec_matches(&f->fsm.recs[130], 130, 100));
}

/* After a clean close nothing may be missing: a record gone before the
 * last is damage, and so is the last one gone, as the closing record
 * follows it. */
static void test_gap_after_clean_close_fails_open(void **state)
{
    struct fx *f = *state;
    struct replog_config c = base_config(f);
    static const uint8_t zero[WAL_BLOCK];
    off_t off[64];
    size_t n;

    write_log(f, &c, 4, 200);
    n = record_offsets(f, 1, off, 64);
    assert_true(n >= 5);
    overwrite(f, 1, off[n - 2], zero, sizeof zero); /* the fourth's */
    assert_int_not_equal(fx_open(f, &c), 0);
    assert_non_null(strstr(f->logbuf, "a clean close"));
}

/* Only the last segment may end early: a gap in an earlier one is damage,
 * and the log does not open (G2) rather than lose what follows. */
static void test_gap_before_last_segment_fails_open(void **state)
{
    struct fx *f = *state;
    struct replog_config c = base_config(f);
    static const uint8_t zero[WAL_BLOCK];
    off_t off[256];
    size_t n;

    write_log(f, &c, 200, 60000); /* 1 MiB, 8 MiB, and on into a third */
    assert_true(record_offsets(f, 3, off, 256) > 0);
    n = record_offsets(f, 2, off, 256);
    assert_true(n >= 20);
    overwrite(f, 2, off[n / 2], zero, sizeof zero);
    assert_int_not_equal(fx_open(f, &c), 0);
    assert_non_null(strstr(f->logbuf, "beyond the log's break"));
}

/* A write goes into the next segment only once every write into this one
 * is on the disk: a whole record at the start of the segment after the
 * log's end, which the chain did not reach, proves the end's segment
 * damaged, though its write number is one a crash could leave. */
static void test_damage_before_the_next_segments_first(void **state)
{
    struct fx *f = *state;
    struct replog_config c = base_config(f);
    static const uint8_t zero[WAL_BLOCK];
    uint8_t bad[WAL_BLOCK];
    off_t off[256];
    size_t n, i;

    write_log(f, &c, 24, 60000); /* 1 MiB, and on into the second */
    n = record_offsets(f, 2, off, 256);
    assert_true(n >= 2);
    for (i = 1; i < n; i++) /* a crash took the writes after its first */
        overwrite(f, 2, off[i], zero, sizeof zero);
    n = record_offsets(f, 1, off, 256);
    assert_true(n >= 2);
    memset(bad, 0x5a, sizeof bad); /* the first segment's last record */
    overwrite(f, 1, off[n - 1] + WAL_BLOCK, bad, sizeof bad);
    assert_int_not_equal(fx_open(f, &c), 0);
    assert_non_null(strstr(f->logbuf, "beyond the log's break"));
}

/* A repair that keeps no segment (the oldest one's first record is
 * damaged, so the log has no start) keeps the snapshot, and the log goes
 * on in a new segment.  That one is numbered above every spare, not from 1
 * again: made from a spare, it keeps the spare's old records, and a record
 * naming a segment of the log other than its own is a copy, which would
 * stop every later start. */
static void test_repair_keeping_no_segment(void **state)
{
    struct fx *f = *state;
    struct replog_config c = churn_config(f);
    struct wal_meta m;
    uint8_t junk[WAL_BLOCK];
    uint64_t spare = 0;
    char err[256];
    int format, n = 0, i;
    size_t kept;

    assert_int_equal(fx_open(f, &c), 0);
    for (; n < 1000 && (spare = find_spare(f)) == 0; n++)
        propose_one(f, (uint64_t)n, 60000);
    assert_true(spare > 0);
    fx_close(f);
    assert_int_equal(
        replog__wal_meta_read(f->dir, &m, &format, err, sizeof err), 0);
    memset(junk, 0x5a, sizeof junk);
    overwrite(f, m.oldest, 0, junk, sizeof junk);
    c.repair_log = 1;
    assert_int_equal(fx_open(f, &c), 0);
    assert_non_null(strstr(f->logbuf, "no segment of the log is kept"));
    assert_int_equal(replog_end_repair(f->l), 0);
    for (i = 0; i < 20; i++, n++)
        propose_one(f, (uint64_t)n, 60000);
    kept = f->fsm.n;
    fx_close(f);

    c.repair_log = 0;
    assert_int_equal(fx_open(f, &c), 0);
    assert_int_equal(f->fsm.n, kept);
    assert_true(rec_matches(&f->fsm.recs[kept - 1], (uint64_t)n - 1, 60000));
    assert_int_equal(
        replog__wal_meta_read(f->dir, &m, &format, err, sizeof err), 0);
    assert_true(m.oldest > spare);
}

/* The first `n` bytes of segment 1. */
static void read_head(const struct fx *f, uint8_t *buf, size_t n)
{
    char path[300];
    int fd;

    seg_name(f, 1, path, sizeof path);
    assert_true((fd = open(path, O_RDONLY)) >= 0);
    assert_int_equal(pread(fd, buf, n, 0), (ssize_t)n);
    close(fd);
}

/* A repair of the log in f->dir, asked for with c, is refused, saying
 * `why`, before anything is copied or cut: the segment's head, wal-meta
 * and the directory (no repair-*) as they were. */
static void repair_refused(struct fx *f, struct replog_config *c,
                           const char *why)
{
    static uint8_t before[3 * WAL_BLOCK], after[3 * WAL_BLOCK];
    struct wal_meta m0, m1;
    struct dirent *e;
    char err[256];
    int format;
    DIR *d;

    read_head(f, before, sizeof before);
    assert_int_equal(
        replog__wal_meta_read(f->dir, &m0, &format, err, sizeof err), 0);
    c->repair_log = 1;
    assert_int_not_equal(fx_open(f, c), 0);
    assert_non_null(strstr(f->logbuf, why));
    read_head(f, after, sizeof after);
    assert_memory_equal(before, after, sizeof before);
    assert_int_equal(
        replog__wal_meta_read(f->dir, &m1, &format, err, sizeof err), 0);
    assert_memory_equal(&m0, &m1, sizeof m0);
    assert_non_null(d = opendir(f->dir));
    while ((e = readdir(d)) != NULL)
        assert_false(strncmp(e->d_name, "repair-", 7) == 0);
    closedir(d);
}

/* A repair asked for on a directory that holds no log (its name mistyped)
 * is refused, and makes nothing: it made the directory and a new log in
 * it, and said the log was whole. */
static void test_repair_of_no_log_refused(void **state)
{
    struct fx *f = *state;
    struct replog_config c = base_config(f);
    char dir[300];
    struct stat st;

    snprintf(dir, sizeof dir, "%s/nope", f->dir);
    c.dir = dir;
    c.repair_log = 1;
    assert_int_not_equal(fx_open(f, &c), 0);
    assert_non_null(strstr(f->logbuf, "holds no log to repair"));
    assert_int_not_equal(stat(dir, &st), 0);
}

/* A member's log (three members in its configuration), damaged, and a
 * repair asked for with no server.N lines, which would let it through as
 * a server alone's: refused from the log's own configuration, before
 * anything is copied or cut. */
static void test_member_not_repaired(void **state)
{
    struct fx *f = *state;
    struct replog_config c = base_config(f);
    static const struct replog_peer peers[] = {
        {1, "127.0.0.1:9001", 1}, {2, "127.0.0.1:1", 1}, {3, "127.0.0.1:3", 1}};
    static uint8_t junk[16];
    off_t off[64];
    int i;

    c.peers = peers;
    c.n_peers = 3;
    for (i = 0; i < 2; i++) { /* the bootstrap entry, two CLOSED records */
        assert_int_equal(fx_open(f, &c), 0);
        fx_close(f);
    }
    assert_int_equal(record_offsets(f, 1, off, 64), 3);
    memset(junk, 0x5a, sizeof junk);
    overwrite(f, 1, off[1] + 40, junk, sizeof junk); /* the first CLOSED */
    c.peers = NULL;
    c.n_peers = 0;
    repair_refused(f, &c, "an ensemble member's (3 members)");
}

/* A server alone's log whose first record (its members) is damaged, with
 * no snapshot before it: a repair would keep nothing, and is refused,
 * nothing changed.  It removed every segment, said the snapshot was kept
 * (there was none), and the server could start no more. */
static void test_repair_keeping_nothing_refused(void **state)
{
    struct fx *f = *state;
    struct replog_config c = base_config(f);
    static uint8_t junk[16];

    write_log(f, &c, 4, 200);
    memset(junk, 0x5a, sizeof junk);
    overwrite(f, 1, 40, junk, sizeof junk);
    repair_refused(f, &c, "no snapshot precedes it");
}

/* A copy of segment 1's last record, placed after it as the next record
 * of the log, but written for segment `seg`. */
static void forge_next(const struct fx *f, uint32_t seg)
{
    static uint8_t buf[WAL_BLOCK * 2];
    off_t off[64];
    struct wal_rec r;
    uint64_t len;
    size_t n;

    crash_after(f, off, &n);
    read_record(f, 1, off[n - 1], buf, sizeof buf, &r);
    assert_int_equal(r.kind, WAL_ENTRIES);
    len = wal_aligned(WAL_HDR + r.len);
    assert_true(len <= WAL_BLOCK);
    tb_store_be32(buf + WAL_H_PREV, r.crc);
    tb_store_be64(buf + WAL_H_INDEX, r.index + r.n);
    tb_store_be32(buf + WAL_H_SEG, seg);
    reseal(buf, r.len);
    overwrite(f, 1, off[n - 1] + (off_t)len, buf, WAL_BLOCK);
}

/* A record whose predecessor's CRC fits joins the log only in the segment
 * it was written to: a spare's old records (of a segment before the
 * oldest kept) stay out, whatever their CRCs; one of a segment still in
 * the log was copied, and the log does not open. */
static void test_record_of_another_segment_stays_out(void **state)
{
    struct fx *f = *state;
    struct replog_config c = base_config(f);
    size_t n;

    write_log(f, &c, 3, 100);
    forge_next(f, 1); /* in its own segment: a copy the log takes */
    assert_int_equal(fx_open(f, &c), 0);
    n = f->fsm.n;
    assert_int_equal(n, 4);
    assert_true(rec_matches(&f->fsm.recs[3], 2, 100));
    fx_close(f);
    forge_next(f, 0);
    assert_int_equal(fx_open(f, &c), 0);
    assert_int_equal(f->fsm.n, n);
    fx_close(f);
    forge_next(f, 2);
    assert_int_not_equal(fx_open(f, &c), 0);
    assert_non_null(strstr(f->logbuf, "a segment of the log (copied?)"));
}

/* Beyond the end every block is looked at, also those inside the payload
 * of a record written before the end (a spare's, an earlier crash's):
 * a client's data.  A block there that looks like a record of another log
 * proves nothing, and the log opens; before, the server refused to start,
 * as any client writing such data could make it.  In the chain, a record
 * of another log is damage still. */
static void test_record_of_another_log_beyond_the_end(void **state)
{
    struct fx *f = *state;
    struct replog_config c = base_config(f);
    static uint8_t buf[WAL_BLOCK];
    off_t off[64];
    struct wal_rec r;
    size_t n;

    write_log(f, &c, 3, 100);
    n = record_offsets(f, 1, off, 64);
    assert_true(n > 1 && n < 64);
    read_record(f, 1, off[n - 2], buf, sizeof buf, &r);
    assert_true(wal_aligned(WAL_HDR + r.len) <= WAL_BLOCK);
    tb_store_be64(buf + WAL_H_LOG, r.log ^ 0x5a5a5a5a5a5a5a5aULL);
    reseal(buf, r.len);
    overwrite(f, 1, off[n - 1] + 4 * WAL_BLOCK, buf, sizeof buf);
    assert_int_equal(fx_open(f, &c), 0);
    assert_int_equal(f->fsm.n, 3);
    fx_close(f);

    overwrite(f, 1, off[n - 1], buf, sizeof buf); /* in the chain */
    assert_int_not_equal(fx_open(f, &c), 0);
    assert_non_null(strstr(f->logbuf, "a record of another log"));
}

/* The log of an older tumblerd (format 1) is refused, not read as empty. */
static void test_older_format_refused(void **state)
{
    struct fx *f = *state;
    struct replog_config c = base_config(f);
    uint8_t magic[4];

    write_log(f, &c, 1, 100);
    tb_store_be32(magic, WAL_MAGIC_1);
    overwrite(f, 1, 0, magic, sizeof magic);
    assert_int_not_equal(fx_open(f, &c), 0);
    assert_non_null(strstr(f->logbuf, "older tumblerd"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_gap_ends_the_log, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gap_then_clean_close, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_gap_then_next_segment, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_gap_after_clean_close_fails_open,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_crash_after_clean_restart, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_crash_after_clean_restart_next_segment, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_damage_after_clean_restart_fails_open, setup, teardown),
        cmocka_unit_test_setup_teardown(test_torn_tail, setup, teardown),
        cmocka_unit_test_setup_teardown(test_grown_segment_without_its_write,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_gap_before_last_segment_fails_open,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_damage_before_the_next_segments_first, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_record_of_another_segment_stays_out, setup, teardown),
        cmocka_unit_test_setup_teardown(test_repair_keeping_no_segment, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_record_of_another_log_beyond_the_end, setup, teardown),
        cmocka_unit_test_setup_teardown(test_repair_keeping_nothing_refused,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_repair_of_no_log_refused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_member_not_repaired, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_older_format_refused, setup,
                                        teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
