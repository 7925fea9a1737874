/* Unit tests of the log's own files (src/server/replog/wal.c, wal_load.c)
 * through replog, on a temporary directory and a real libuv loop: segments
 * prepared ahead, two writes in flight, segments filled and removed after
 * snapshots, spare segments, and segment numbers never skipped.  What a
 * crash or damage leaves of the log, and repairs: test_wal_damage.c. */
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

/* Pages of `path` in the page cache. */
static size_t cached_pages(const char *path, size_t len)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), n = 0, i;
    unsigned char *vec = malloc(len / page);
    int fd = open(path, O_RDONLY);
    void *p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);

    assert_true(fd >= 0);
    assert_true(p != MAP_FAILED);
    assert_non_null(vec);
    close(fd);
    assert_int_equal(mincore(p, len, vec), 0);
    for (i = 0; i < len / page; i++)
        n += vec[i] & 1;
    munmap(p, len);
    free(vec);
    return n;
}

/* The first segment, a smaller one, is zero-filled and synced before a
 * record goes in (no unwritten extent, nothing left in the page cache);
 * the next one, of the full size, is prepared once the first is half
 * full, not before.  A record of 60,000 bytes takes 15 blocks. */
static void test_segments_prepared_ahead(void **state)
{
    struct fx *f = *state;
    struct replog_config c = base_config(f);
    char path[300], next[300];
    struct stat st;
    struct statfs sf;
    int fd, i;

    assert_int_equal(fx_open(f, &c), 0);
    propose_one(f, 0, 100);
    seg_name(f, 1, path, sizeof path);
    fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(fstat(fd, &st), 0);
    assert_int_equal(st.st_size, REPLOG_FIRST_SEGMENT_BYTES);
    assert_true(st.st_blocks * 512 >= REPLOG_FIRST_SEGMENT_BYTES);
    if (unwritten_extents(fd) >= 0)
        assert_int_equal(unwritten_extents(fd), 0);
    if (fstatfs(fd, &sf) == 0 && sf.f_type != TMPFS_MAGIC)
        assert_int_equal(cached_pages(path, REPLOG_FIRST_SEGMENT_BYTES), 0);
    close(fd);

    seg_name(f, 2, next, sizeof next);
    for (i = 1; i <= 8; i++) /* a few blocks + 480 KiB: short of half */
        propose_one(f, (uint64_t)i, 60000);
    run_for(f, 100);
    assert_int_equal(stat(next, &st), -1);
    propose_one(f, 9, 60000);
    for (i = 0; i < 3000 && stat(next, &st) != 0; i++)
        run_for(f, 10);
    assert_int_equal(st.st_size, REPLOG_SEGMENT_BYTES);
}

/* Proposals of `len` bytes, numbered on from *n, until segment `seq`
 * exists (at most up to `max`). */
static void propose_until_segment(struct fx *f, int *n, int max, uint64_t seq,
                                  size_t len)
{
    char path[300];
    struct stat st;

    seg_name(f, seq, path, sizeof path);
    for (; *n < max && stat(path, &st) != 0; (*n)++)
        propose_one(f, (uint64_t)*n, len);
}

/* A new segment is zero-filled after small writes (a 4 KiB record each)
 * and only has its blocks reserved after large ones (60 KB): the log
 * reads back through both. */
static void test_new_segment_zeroed_or_reserved(void **state)
{
    struct fx *f = *state;
    struct replog_config c = base_config(f);
    struct replog_stats s;
    int n = 0, i;

    assert_int_equal(fx_open(f, &c), 0);
    for (; n < 130; n++) /* 520 KiB: past half of the first segment */
        propose_one(f, (uint64_t)n, 100);
    assert_true(prepared_unwritten(f, 2) <= 0);
    propose_until_segment(f, &n, 1000, 3, 60000);
    assert_true(prepared_unwritten(f, 3) != 0); /* -1 on tmpfs */
    replog_get_stats(f->l, &s);
    assert_int_equal(s.log_segments_zeroed, 2);
    assert_int_equal(s.log_segments_reserved, 1);
    /* On into segment 3, half of it. */
    propose_until_segment(f, &n, 2000, 4, 60000);
    fx_close(f);

    assert_int_equal(fx_open(f, &c), 0);
    assert_int_equal(f->fsm.n, (size_t)n);
    for (i = 0; i < 130; i += 43)
        assert_true(rec_matches(&f->fsm.recs[i], (uint64_t)i, 100));
    for (i = 130; i < n; i += 29)
        assert_true(rec_matches(&f->fsm.recs[i], (uint64_t)i, 60000));
    assert_true(rec_matches(&f->fsm.recs[n - 1], (uint64_t)n - 1, 60000));
}

/* Proposals made in one turn of the loop go to the disk as one write;
 * proposals of the next turn go while that write is on its way.  All are
 * there after a reopen, in order. */
static void test_two_writes_in_flight(void **state)
{
    struct fx *f = *state;
    struct replog_config c = base_config(f);
    struct prop p[9];
    struct replog_stats s0, mid, s1;
    int i;

    memset(p, 0, sizeof p);
    assert_int_equal(fx_open(f, &c), 0);
    propose_one(f, 0, 10);
    replog_get_stats(f->l, &s0);
    for (i = 1; i < 5; i++)
        propose_seq(f, &p[i], (uint64_t)i, 1000);
    /* One turn submits the first four.  Unless that turn's poll already saw
     * the write done (a loaded machine can delay the poll that long), the
     * next turn submits the next four while it is on its way. */
    uv_run(&f->loop, UV_RUN_NOWAIT);
    replog_get_stats(f->l, &mid);
    for (i = 5; i < 9; i++)
        propose_seq(f, &p[i], (uint64_t)i, 1000);
    uv_run(&f->loop, UV_RUN_NOWAIT);
    wait_props(f, p + 1, 8);
    for (i = 1; i < 9; i++)
        assert_int_equal(p[i].status, 0);
    replog_get_stats(f->l, &s1);
    assert_int_equal(s1.log_writes - s0.log_writes, 2);
    assert_int_equal(mid.log_writes - s0.log_writes, 1);
    assert_int_equal(s1.log_writes_overlapped - s0.log_writes_overlapped,
                     mid.log_write_us > s0.log_write_us ? 0 : 1);
    assert_int_equal(s1.log_entries - s0.log_entries, 8);
    assert_true(s1.log_write_us > s0.log_write_us);
    assert_true(s1.log_write_us_max > 0);
    fx_close(f);

    assert_int_equal(fx_open(f, &c), 0);
    assert_int_equal(f->fsm.n, 9);
    for (i = 0; i < 9; i++)
        assert_true(rec_matches(&f->fsm.recs[i], (uint64_t)i, i ? 1000 : 10));
}

/* An append made while both writes are on their way waits for one to end,
 * and says so: counted as queued, its wait summed until its submission.
 * Tries enough for a loaded machine under a sanitizer, where the first
 * write often ends before the second turn (20 were once too few). */
#define BOTH_TRIES 200
static void test_append_waits_for_a_write(void **state)
{
    struct fx *f = *state;
    struct replog_config c = base_config(f);
    struct prop p[2 * BOTH_TRIES + 1];
    struct replog_stats s0, s1;
    struct wal *w;
    uint64_t t0;
    int n = 0;

    memset(p, 0, sizeof p);
    assert_int_equal(fx_open(f, &c), 0);
    propose_one(f, 0, 10);
    w = f->l->io.impl;
    /* Two turns submit a write each, unless the first is done before the
     * second turn (a loaded machine): then again. */
    while (w->inflight < WAL_INFLIGHT) {
        if (n == 2 * BOTH_TRIES)
            fail_msg("no two writes on their way at once in %d tries",
                     BOTH_TRIES);
        wait_props(f, p, (size_t)n);
        propose_seq(f, &p[n], (uint64_t)n + 1, 100);
        n++;
        uv_run(&f->loop, UV_RUN_NOWAIT);
        propose_seq(f, &p[n], (uint64_t)n + 1, 100);
        n++;
        uv_run(&f->loop, UV_RUN_NOWAIT);
    }
    replog_get_stats(f->l, &s0);
    t0 = uv_hrtime();
    propose_seq(f, &p[n], (uint64_t)n + 1, 100);
    n++;
    wait_props(f, p, (size_t)n);
    replog_get_stats(f->l, &s1);
    assert_int_equal(s1.log_appends - s0.log_appends, 1);
    assert_int_equal(s1.log_appends_queued - s0.log_appends_queued, 1);
    assert_true(s1.log_append_wait_us > s0.log_append_wait_us);
    assert_true(s1.log_append_wait_us - s0.log_append_wait_us <=
                (uv_hrtime() - t0) / 1000);
    /* Appends made with a write free go at once: none of them queued. */
    propose_one(f, (uint64_t)n + 1, 100);
    replog_get_stats(f->l, &s0);
    assert_int_equal(s0.log_appends - s1.log_appends, 1);
    assert_int_equal(s0.log_appends_queued, s1.log_appends_queued);
    fx_close(f);
}

#ifndef NDEBUG
/* The "at all times" statements of struct wal and struct replog hold with
 * writes on their way, and a state that breaks one is found, named. */
static void test_state_checks(void **state)
{
    struct fx *f = *state;
    struct replog_config c = base_config(f);
    struct prop p[8];
    struct wal *w;
    struct wal_seg *s;
    char why[256];
    int i;

    memset(p, 0, sizeof p);
    assert_int_equal(fx_open(f, &c), 0);
    propose_one(f, 0, 10);
    w = f->l->io.impl;
    assert_int_equal(replog__wal_check(w, why, sizeof why), 0);
    assert_int_equal(replog__check(f->l, why, sizeof why), 0);
    for (i = 0; i < 8; i++) {
        propose_seq(f, &p[i], (uint64_t)i + 1, 1000);
        if (i % 3 == 2)
            uv_run(&f->loop, UV_RUN_NOWAIT);
        assert_int_equal(replog__wal_check(w, why, sizeof why), 0);
        assert_int_equal(replog__check(f->l, why, sizeof why), 0);
    }
    wait_props(f, p, 8);

    s = w->segs[w->n_segs - 1];
    s->end += 1;
    assert_int_equal(replog__wal_check(w, why, sizeof why),
                     TB_EDATAINCONSISTENCY);
    assert_non_null(strstr(why, "ends at"));
    s->end -= 1;
    w->inflight++;
    assert_int_equal(replog__wal_check(w, why, sizeof why),
                     TB_EDATAINCONSISTENCY);
    assert_non_null(strstr(why, "inflight 1"));
    w->inflight--;
    w->pending_at_ns++;
    assert_int_equal(replog__wal_check(w, why, sizeof why),
                     TB_EDATAINCONSISTENCY);
    w->pending_at_ns--;
    assert_int_equal(replog__wal_check(w, why, sizeof why), 0);

    f->l->batch_n++;
    assert_int_equal(replog__check(f->l, why, sizeof why),
                     TB_EDATAINCONSISTENCY);
    assert_non_null(strstr(why, "requests queued"));
    f->l->batch_n--;
    f->l->idle_index = f->l->applied_index + 1;
    assert_int_equal(replog__check(f->l, why, sizeof why),
                     TB_EDATAINCONSISTENCY);
    f->l->idle_index = f->l->applied_index;
    assert_int_equal(replog__check(f->l, why, sizeof why), 0);
    fx_close(f);
}
#endif

/* Past a segment's size the log goes on in the next one; once snapshots
 * cover a segment (and the trailing entries kept), it is removed; the
 * state survives a reopen. */
static void test_rollover_and_removal(void **state)
{
    struct fx *f = *state;
    struct replog_config c = churn_config(f);
    struct replog_stats s;
    char path[300];
    struct stat st;
    int i;

    assert_int_equal(fx_open(f, &c), 0);
    for (i = 0; i < 400; i++)
        propose_one(f, (uint64_t)i, 60000);
    seg_name(f, 4, path, sizeof path); /* 24 MB of records: 1 + 8 + 8 + */
    assert_int_equal(stat(path, &st), 0);
    seg_name(f, 1, path, sizeof path);
    for (i = 0; i < 3000 && stat(path, &st) == 0; i++)
        run_for(f, 10);
    assert_int_equal(stat(path, &st), -1);
    assert_int_equal(errno, ENOENT);
    wait_snapshots(f, 1, &s);
    assert_true(s.snapshots_taken >= 2);
    fx_close(f);

    assert_int_equal(fx_open(f, &c), 0);
    assert_int_equal(f->fsm.n, 400);
    for (i = 0; i < 400; i += 57)
        assert_true(rec_matches(&f->fsm.recs[i], (uint64_t)i, 60000));
    assert_true(rec_matches(&f->fsm.recs[399], 399, 60000));
}

/* Segments as long as their records say (their first record's header;
 * those removed or not written yet skipped): how many are longer than
 * the usual 8 MiB. */
static int grown_segments(const struct fx *f)
{
    uint8_t h[WAL_BLOCK];
    char path[300];
    struct stat st;
    uint64_t seq;
    int fd, grown = 0;

    for (seq = 1; seq < 20; seq++) {
        seg_name(f, seq, path, sizeof path);
        if ((fd = open(path, O_RDONLY)) < 0)
            continue;
        assert_int_equal(fstat(fd, &st), 0);
        assert_int_equal(pread(fd, h, sizeof h, 0), (ssize_t)sizeof h);
        close(fd);
        if (tb_load_be32(h + WAL_H_MAGIC) != WAL_MAGIC)
            continue;
        assert_int_equal((uint64_t)st.st_size,
                         tb_load_be64(h + WAL_H_SEG_SIZE));
        grown += st.st_size > (off_t)8 << 20;
    }
    return grown;
}

/* A write larger than a segment (the appends of one turn, 12 MB; one
 * entry of 9 MiB) goes into a segment first made as long as it: each
 * segment is as long as its records say, and the log reopens whole. */
static void test_write_larger_than_a_segment(void **state)
{
    struct fx *f = *state;
    struct replog_config c = base_config(f);
    struct prop p[12];
    int i;

    assert_int_equal(fx_open(f, &c), 0);
    propose_one(f, 0, 100);
    memset(p, 0, sizeof p);
    for (i = 0; i < 12; i++)
        propose_seq(f, &p[i], (uint64_t)i + 1, 1000000);
    wait_props(f, p, 12);
    fx_close(f);
    assert_int_equal(grown_segments(f), 1);
    assert_int_equal(fx_open(f, &c), 0);
    assert_int_equal(f->fsm.n, 13);
    propose_one(f, 13, (size_t)9 << 20);
    propose_one(f, 14, 100);
    fx_close(f);
    assert_true(grown_segments(f) >= 1);
    assert_int_equal(fx_open(f, &c), 0);
    assert_int_equal(f->fsm.n, 15);
    for (i = 1; i < 13; i++)
        assert_true(rec_matches(&f->fsm.recs[i], (uint64_t)i, 1000000));
    assert_true(rec_matches(&f->fsm.recs[13], 13, (size_t)9 << 20));
    assert_true(rec_matches(&f->fsm.recs[14], 14, 100));
}

/* A truncation is a record of its own: entries from its index on are void
 * when the log is read back, and the next append takes that index. */
static void test_truncate_record(void **state)
{
    struct fx *f = *state;
    struct replog_config c = base_config(f);
    struct prop p[3];
    struct raft_io *io;
    int i;

    memset(p, 0, sizeof p);
    assert_int_equal(fx_open(f, &c), 0);
    for (i = 0; i < 3; i++) {
        propose_seq(f, &p[i], (uint64_t)i, 100);
        wait_props(f, &p[i], 1);
        assert_int_equal(p[i].status, 0);
    }
    /* As a follower's raft would, under a log it no longer trusts. */
    io = &f->l->io;
    assert_int_equal(io->truncate(io, (raft_index)p[1].index), 0);
    run_for(f, 50);
    fx_close(f);

    assert_int_equal(fx_open(f, &c), 0);
    assert_int_equal(f->fsm.n, 1);
    assert_true(rec_matches(&f->fsm.recs[0], 0, 100));
    propose_one(f, 9, 100);
    assert_int_equal(f->fsm.recs[1].index, p[1].index);
    fx_close(f);
    assert_int_equal(fx_open(f, &c), 0);
    assert_int_equal(f->fsm.n, 2);
    assert_true(rec_matches(&f->fsm.recs[1], 9, 100));
}

static ino_t inode_of(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 ? st.st_ino : 0;
}

/* The first record of segment `seq`, whichever segment it was written to. */
static void first_record(const struct fx *f, uint64_t seq, struct wal_rec *r)
{
    static uint8_t buf[WAL_BLOCK * 16];
    char path[300];
    int fd;

    seg_name(f, seq, path, sizeof path);
    fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(pread(fd, buf, sizeof buf, 0), (ssize_t)sizeof buf);
    close(fd);
    assert_int_equal(replog__wal_decode(buf, sizeof buf, r), 0);
}

/* A segment that snapshots cover is kept as a spare, and the next segment
 * but one is that file renamed, not a new one zero-filled.  Prepared
 * ahead, it starts with a whole record of its old segment: the log opens
 * past it, reads on into the records written over it, and leaves out
 * the old ones after them. */
static void test_spare_segments_reused(void **state)
{
    struct fx *f = *state;
    struct replog_config c = churn_config(f);
    struct replog_stats s;
    char spare[300], path[300];
    uint64_t old = 0, seq = 0;
    struct wal_rec r;
    ino_t ino;
    int i, n = 0;

    assert_int_equal(fx_open(f, &c), 0);
    for (; n < 1000 && (old = find_spare(f)) == 0; n++)
        propose_one(f, (uint64_t)n, 60000);
    assert_true(old > 1); /* the first segment, 1 MiB, is not kept */
    snprintf(spare, sizeof spare, "%s/wal-spare-%016llx", f->dir,
             (unsigned long long)old);
    ino = inode_of(spare);
    assert_true(ino != 0);
    /* Once the segment being written is half full, the spare is the next. */
    for (; n < 1000 && inode_of(spare) == ino; n++)
        propose_one(f, (uint64_t)n, 60000);
    for (i = 0; i < 1000 && seq == 0; i++) {
        seg_name(f, old + (uint64_t)i + 1, path, sizeof path);
        if (inode_of(path) == ino)
            seq = old + (uint64_t)i + 1;
    }
    assert_true(seq > old);
    first_record(f, seq, &r);
    assert_int_equal(r.seg, (uint32_t)old);
    /* Counted once the loop hears the renamed segment is ready. */
    replog_get_stats(f->l, &s);
    for (i = 0; i < 300 && s.log_segments_reused == 0; i++) {
        run_for(f, 10);
        replog_get_stats(f->l, &s);
    }
    assert_true(s.log_segments_reused >= 1);
    /* The first zero-filled; the second reserved: its writes are large. */
    assert_true(s.log_segments_zeroed >= 1 && s.log_segments_reserved >= 1);
    fx_close(f);

    assert_int_equal(fx_open(f, &c), 0);
    assert_int_equal(f->fsm.n, (size_t)n);
    /* On into the renamed segment, over a few of its old records. */
    for (i = 0; i < 200; i++, n++)
        propose_one(f, (uint64_t)n, 60000);
    first_record(f, seq, &r);
    assert_int_equal(r.seg, (uint32_t)seq);
    fx_close(f);
    assert_int_equal(fx_open(f, &c), 0);
    assert_int_equal(f->fsm.n, (size_t)n);
    for (i = 0; i < n; i += 61)
        assert_true(rec_matches(&f->fsm.recs[i], (uint64_t)i, 60000));
    assert_true(rec_matches(&f->fsm.recs[n - 1], (uint64_t)n - 1, 60000));
}

/* Spares are kept only while the disk has room well beyond the minimum
 * free space: near it, covered segments are removed. */
static void test_no_spares_near_min_free(void **state)
{
    struct fx *f = *state;
    struct replog_config c = churn_config(f);
    char path[300];
    int i, seen = 0;
    ino_t ino;

    /* A disk 56 MiB above the log's floor (REPLOG_DISK_FLOOR, 24 MiB),
     * whatever the rest of the machine does meanwhile. */
    static const uint64_t tight = (uint64_t)80 << 20;

    /* Writes go on (about 30 MiB of segments and snapshots), but the room
     * left is less than the 64 MiB spares need. */
    c.free_space = fixed_free_space;
    c.free_space_data = (void *)&tight;
    assert_int_equal(fx_open(f, &c), 0);
    seg_name(f, 2, path, sizeof path);
    for (i = 0; i < 6000; i++) { /* until segment 2 is written and covered */
        ino = inode_of(path);
        if (seen && ino == 0)
            break;
        seen |= ino != 0;
        propose_one(f, (uint64_t)i, 1000);
    }
    assert_true(seen);
    assert_int_equal(inode_of(path), 0);
    assert_int_equal(find_spare(f), 0);
}

/* A crash can leave the segment after the next one made and named, with
 * neither holding a record: the next took a write larger than half of it,
 * which let the one after it be prepared at once, and the crash lost the
 * write.  That one goes, and the log goes on into the next and then into
 * one numbered right after it: a number skipped reads as a segment
 * missing, and every later start would refuse the log. */
static void test_no_segment_number_skipped(void **state)
{
    struct fx *f = *state;
    struct replog_config c = base_config(f);
    struct wal_meta m;
    char path[300], after[300], err[256];
    struct stat st;
    int format, fd, n = 0;

    assert_int_equal(fx_open(f, &c), 0);
    for (; n < 130; n++) /* past half of the first segment */
        propose_one(f, (uint64_t)n, 100);
    assert_true(prepared_unwritten(f, 2) <= 0);
    fx_close(f);
    seg_name(f, 3, path, sizeof path);
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, REPLOG_SEGMENT_BYTES), 0);
    close(fd);
    assert_int_equal(
        replog__wal_meta_read(f->dir, &m, &format, err, sizeof err), 0);
    m.newest = 3;
    assert_int_equal(replog__wal_meta_write(f->dir, &m), 0);

    assert_int_equal(fx_open(f, &c), 0);
    assert_int_equal(stat(path, &st), -1);
    seg_name(f, 4, after, sizeof after);
    for (; n < 1000 && stat(path, &st) != 0 && stat(after, &st) != 0; n++)
        propose_one(f, (uint64_t)n, 60000);
    fx_close(f);
    assert_int_equal(fx_open(f, &c), 0);
    assert_int_equal(f->fsm.n, (size_t)n);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(stat(after, &st), -1);
}

/* Whether this thread's file accesses may pass over the files' modes, as
 * root's do (CAP_DAC_OVERRIDE): without it a mode binds root too.  For a
 * user without the capability, nothing changes. */
static void dac_override(int on)
{
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
    const uint32_t bit = 1u << CAP_DAC_OVERRIDE;

    assert_int_equal(syscall(SYS_capget, &h, d), 0);
    d[0].effective =
        on ? d[0].effective | (d[0].permitted & bit) : d[0].effective & ~bit;
    assert_int_equal(syscall(SYS_capset, &h, d), 0);
}

/* The next segment, prepared, cannot be opened for writing when the log
 * opens (too many files open, a disk error; here its mode): it goes, and
 * is made again under its number.  The log never goes on into a segment
 * after it while it is left empty, which every later start would
 * refuse. */
static void test_unopenable_next_segment_made_again(void **state)
{
    struct fx *f = *state;
    struct replog_config c = base_config(f);
    char path[300], after[300];
    struct stat st;
    int n = 0, i, rv;

    assert_int_equal(fx_open(f, &c), 0);
    for (; n < 130; n++) /* past half of the first segment */
        propose_one(f, (uint64_t)n, 100);
    assert_true(prepared_unwritten(f, 2) <= 0);
    fx_close(f);
    seg_name(f, 2, path, sizeof path);
    assert_int_equal(chmod(path, 0400), 0);
    dac_override(0);
    rv = fx_open(f, &c);
    dac_override(1);
    assert_int_equal(rv, 0);
    /* On past the first segment's end, short of half of the next. */
    for (i = 0; i < 40; i++, n++)
        propose_one(f, (uint64_t)n, 60000);
    fx_close(f);
    assert_int_equal(fx_open(f, &c), 0);
    assert_int_equal(f->fsm.n, (size_t)n);
    assert_true(rec_matches(&f->fsm.recs[n - 1], (uint64_t)n - 1, 60000));
    seg_name(f, 3, after, sizeof after);
    assert_int_equal(stat(after, &st), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_segments_prepared_ahead, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_new_segment_zeroed_or_reserved,
                                        setup, teardown),
#ifndef NDEBUG
        cmocka_unit_test_setup_teardown(test_state_checks, setup, teardown),
#endif
        cmocka_unit_test_setup_teardown(test_append_waits_for_a_write, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_two_writes_in_flight, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_rollover_and_removal, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_write_larger_than_a_segment, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_truncate_record, setup, teardown),
        cmocka_unit_test_setup_teardown(test_spare_segments_reused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_no_spares_near_min_free, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_no_segment_number_skipped, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_unopenable_next_segment_made_again,
                                        setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
