/* The log's records, writes and segments (wal.h says why the log is
 * ours).  Appends and truncations become records in `pending`; while fewer
 * than WAL_INFLIGHT writes are on their way, pending goes to the disk as
 * one write with O_DIRECT and RWF_DSYNC, submitted from the loop with
 * kernel AIO, or on libuv's threadpool where that cannot be had.  An
 * append only marks pending as due: it is submitted just before the loop
 * next waits, so that the appends of one turn make one write, and the
 * replies of that turn are on their sockets before the submission
 * (notifying the device takes tens of microseconds under a hypervisor).
 * An append made while WAL_INFLIGHT writes are on their way waits for one
 * to end, and then goes with every other waiting one: a group commit.
 * Completions are handed to raft in submission order, and after a failed
 * write every later one fails too: its records follow a gap.
 *
 * Segments are prepared ahead of use, one at a time, so that every log
 * write overwrites allocated blocks: a synced write into an unallocated or
 * unwritten block also writes the file system's metadata that marks it
 * written (through its journal, where it keeps one), 280 us instead of
 * 190 us for 4 KiB here.  A spare (wal.h) is renamed; without one, a
 * new file is zero-filled and synced, unless the segment being written
 * took large writes (WAL_LARGE_WRITE on average): the metadata is then a
 * small part of each write, and the zeros, which every write queued
 * behind them waits for, are not; that segment's blocks are only
 * reserved. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "server/replog/internal.h"
#include "server/replog/wal.h"

/* One page of zeros repeated by pwritev: even zero-page mappings of a
 * larger buffer count in the process's RSS.  While another segment takes
 * log writes, each call's zeros are synced before the next are written: a
 * log write queued behind a sync waits for 128 KiB, not for the whole
 * segment.  With none (a new log's first segment, which the first request
 * waits for), one sync at the end: each costs a cache flush. */
#define ZERO_IOVS 32 /* 128 KiB a call */

static const uint8_t zeros[WAL_BLOCK];

void replog__wal_path(const struct wal *w, uint64_t seq, char *buf, size_t n)
{
    snprintf(buf, n, "%s/wal-%016llx", w->dir, (unsigned long long)seq);
}

void replog__wal_spare_path(const struct wal *w, uint64_t seq, char *buf,
                            size_t n)
{
    snprintf(buf, n, "%s/wal-spare-%016llx", w->dir, (unsigned long long)seq);
}

/* O_DIRECT where the file system has it (tmpfs has not). */
int replog__wal_open(const char *path)
{
    int fd = open(path, O_WRONLY | O_DSYNC | O_DIRECT | O_CLOEXEC);

    if (fd < 0 && errno == EINVAL)
        fd = open(path, O_WRONLY | O_DSYNC | O_CLOEXEC);
    return fd;
}

int replog__wal_sync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rv;

    if (fd < 0)
        return errno;
    rv = fsync(fd) == 0 ? 0 : errno;
    close(fd);
    return rv;
}

/* Zeros over [0, len), synced: 0 or an errno value. */
static int zero_fill(int fd, off_t len, int once)
{
    struct iovec iov[ZERO_IOVS];
    off_t pos = 0, left;
    ssize_t n;
    int i;

    while (pos < len) {
        for (i = 0, left = len - pos; i < ZERO_IOVS && left > 0; i++) {
            iov[i].iov_base = (void *)zeros;
            iov[i].iov_len = left < WAL_BLOCK ? (size_t)left : WAL_BLOCK;
            left -= (off_t)iov[i].iov_len;
        }
        n = pwritev(fd, iov, i, pos);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n == 0 ? EIO : errno;
        pos += n;
        if ((!once || pos >= len) && fdatasync(fd) != 0)
            return errno;
    }
    /* The log writes the segment with O_DIRECT: its zeros, cached and
     * clean now, would only cost memory. */
    (void)posix_fadvise(fd, 0, len, POSIX_FADV_DONTNEED);
    return 0;
}

/* [0, len) allocated but not written (unwritten extents), synced: the
 * log's writes then need no new blocks, so a full disk cannot stop one
 * half-way through a segment.  0 or an errno value. */
static int reserve(int fd, off_t len)
{
    int err = posix_fallocate(fd, 0, len);

    if (err == 0 && fdatasync(fd) != 0)
        err = errno;
    return err;
}

/* ---- batches ---- */

static void buf_put(struct wal *w, uint8_t *buf, size_t cap);

/* Write buffers are kept for reuse, WAL_INFLIGHT + 1 of them at most:
 * fresh memory costs a page fault per page on its first write. */
#define SPARE_BUFS (WAL_INFLIGHT + 1)
#define SPARE_MAX  ((size_t)4 << 20) /* larger ones go back at once */

static int batch_reserve(struct wal *w, struct wal_batch *b, size_t extra)
{
    size_t cap = b->cap ? b->cap : 16 * WAL_BLOCK;
    unsigned i;
    uint8_t *p;

    if (b->len + extra <= b->cap)
        return 0;
    while (cap < b->len + extra)
        cap *= 2;
    p = NULL;
    for (i = 0; i < w->n_spare && p == NULL; i++)
        if (w->spare[i].cap >= cap) {
            p = w->spare[i].buf;
            cap = w->spare[i].cap;
            w->spare[i] = w->spare[--w->n_spare];
        }
    if (p == NULL && (p = tb_map_unshared(cap, 0)) == NULL)
        return RAFT_NOMEM;
    if (b->len > 0)
        memcpy(p, b->buf, b->len);
    if (b->buf != NULL)
        buf_put(w, b->buf, b->cap);
    b->buf = p;
    b->cap = cap;
    return 0;
}

static void buf_put(struct wal *w, uint8_t *buf, size_t cap)
{
    unsigned i, small = 0;

    if (cap <= SPARE_MAX && w->n_spare < SPARE_BUFS) {
        w->spare[w->n_spare].buf = buf;
        w->spare[w->n_spare++].cap = cap;
        return;
    }
    /* Full: keep the larger of it and the smallest kept. */
    for (i = 1; i < w->n_spare; i++)
        if (w->spare[i].cap < w->spare[small].cap)
            small = i;
    if (cap <= SPARE_MAX && w->n_spare > 0 && w->spare[small].cap < cap) {
        munmap(w->spare[small].buf, w->spare[small].cap);
        w->spare[small].buf = buf;
        w->spare[small].cap = cap;
        return;
    }
    munmap(buf, cap);
}

uint64_t replog__wal_unwritten(const struct wal *w)
{
    const struct wal_write *wr;
    uint64_t n = w->pending.len;

    for (wr = w->head; wr != NULL; wr = wr->next)
        n += wr->b.len;
    return n;
}

void replog__wal_batch_free(struct wal *w, struct wal_batch *b)
{
    if (b->buf != NULL)
        buf_put(w, b->buf, b->cap);
    free(b->acks);
    memset(b, 0, sizeof *b);
    b->open = SIZE_MAX;
}

static int batch_ack(struct wal_batch *b, struct raft_io_append *req,
                     raft_io_append_cb cb)
{
    if (b->n_acks == b->cap_acks) {
        unsigned cap = b->cap_acks ? 2 * b->cap_acks : 8;
        struct wal_ack *a = realloc(b->acks, cap * sizeof *a);
        if (a == NULL)
            return RAFT_NOMEM;
        b->acks = a;
        b->cap_acks = cap;
    }
    b->acks[b->n_acks].req = req;
    b->acks[b->n_acks].cb = cb;
    b->n_acks++;
    return 0;
}

/* Starts a record at the end of `b`, which has room for its header. */
static void record_open(struct wal *w, uint32_t kind, uint64_t index)
{
    uint8_t *h = w->pending.buf + w->pending.len;

    memset(h, 0, WAL_HDR);
    tb_store_be32(h + WAL_H_MAGIC, WAL_MAGIC);
    tb_store_be32(h + WAL_H_KIND, kind);
    tb_store_be64(h + WAL_H_INDEX, index);
    tb_store_be64(h + WAL_H_LOG, w->meta.log_id);
    w->pending.open = w->pending.len;
    w->pending.len += WAL_HDR;
}

/* Ends the open record: its length, and zeros up to the next block. */
static void record_close(struct wal *w)
{
    struct wal_batch *b = &w->pending;
    size_t end;

    if (b->open == SIZE_MAX)
        return;
    tb_store_be64(b->buf + b->open + WAL_H_LEN, b->len - b->open - WAL_HDR);
    end = wal_aligned(b->len);
    memset(b->buf + b->len, 0, end - b->len);
    b->len = end;
    b->open = SIZE_MAX;
}

/* Once its segment is known: each record's segment and its size, the
 * write's number, the previous record's CRC and its own. */
static void seal(struct wal *w, struct wal_batch *b, const struct wal_seg *s)
{
    size_t off = 0;
    uint64_t len;
    uint8_t *h;

    while (off < b->len) {
        h = b->buf + off;
        len = tb_load_be64(h + WAL_H_LEN);
        tb_store_be32(h + WAL_H_PREV, w->last_crc);
        tb_store_be64(h + WAL_H_WRITE, w->write_seq);
        tb_store_be32(h + WAL_H_SEG, (uint32_t)s->seq);
        tb_store_be64(h + WAL_H_SEG_SIZE, (uint64_t)s->size);
        w->last_crc =
            replog__wal_crc(0, h + WAL_H_PREV, WAL_HDR - WAL_H_PREV + len);
        tb_store_be32(h + WAL_H_CRC, w->last_crc);
        off += wal_aligned(WAL_HDR + len);
    }
    w->write_seq++;
}

/* ---- writes ---- */

static void flush(struct wal *w);

int replog__wal_pwrite_all(int fd, const void *p, size_t n, off_t off)
{
    const uint8_t *c = p;
    ssize_t k;

    while (n > 0) {
        k = pwrite(fd, c, n, off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return k == 0 ? EIO : errno;
        c += k;
        n -= (size_t)k;
        off += k;
    }
    return 0;
}

int replog__wal_zero(struct wal *w, uint64_t seq, off_t from, off_t to,
                     int resize, const char *what)
{
    char path[PATH_MAX];
    off_t at;
    int fd, err = 0;

    replog__wal_path(w, seq, path, sizeof path);
    if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0)
        err = errno;
    if (err == 0 && resize && ftruncate(fd, to) != 0)
        err = errno;
    for (at = from; err == 0 && at < to; at += (off_t)sizeof zeros)
        err = replog__wal_pwrite_all(
            fd, zeros,
            to - at < (off_t)sizeof zeros ? (size_t)(to - at) : sizeof zeros,
            at);
    if (err == 0 && fdatasync(fd) != 0)
        err = errno;
    if (fd >= 0)
        close(fd);
    if (err != 0)
        snprintf(w->io->errmsg, sizeof w->io->errmsg,
                 "%s: zero wal-%016" PRIx64 ": %s", what, seq, strerror(err));
    return err != 0 ? RAFT_IOERR : 0;
}

static void answer(struct wal_batch *b, int status)
{
    unsigned i;

    for (i = 0; i < b->n_acks; i++)
        b->acks[i].cb(b->acks[i].req, status);
}

static void write_work(uv_work_t *work)
{
    struct wal_write *wr = work->data;

    wr->status =
        replog__wal_pwrite_all(wr->seg->fd, wr->b.buf, wr->b.len, wr->off);
}

static struct wal_seg *current_seg(const struct wal *w)
{
    return w->n_segs > 0 ? w->segs[w->n_segs - 1] : NULL;
}

static void seg_release(struct wal *w, struct wal_seg *s)
{
    if (s != current_seg(w) && s->writing == 0 && s->fd >= 0) {
        close(s->fd);
        s->fd = -1;
    }
}

static void write_finish(struct wal_write *wr, int err)
{
    struct wal *w = wr->w;
    struct wal_write *head;
    uint64_t ns;

    wr->status = err;
    wr->done = 1;
    ns = uv_hrtime() - wr->submitted_ns;
    w->write_ns += ns;
    if (ns > w->write_ns_max)
        w->write_ns_max = ns;
    hist_note(&w->write_hist, ns / 1000);
    while ((head = w->head) != NULL && head->done) {
        w->head = head->next;
        if (w->head == NULL)
            w->tail = NULL;
        w->inflight--;
        head->seg->writing--;
        seg_release(w, head->seg);
        if (head->status != 0)
            replog__fail_stop(w->l, "log write: %s", strerror(head->status));
        answer(&head->b, 0);
        replog__wal_batch_free(w, &head->b);
        free(head);
    }
    replog__notice(w->l); /* the leader's write may have made a commit */
    WAL_CHECK(w);
    flush(w);
    replog__wal_maybe_closed(w);
}

static void write_done(uv_work_t *work, int status)
{
    struct wal_write *wr = work->data;

    write_finish(wr, wr->status != 0 ? wr->status : status != 0 ? EIO : 0);
}

static int pool_submit(struct wal_write *wr)
{
    wr->work.data = wr;
    if (uv_queue_work(wr->w->loop, &wr->work, write_work, write_done) != 0)
        return -1;
    wr->w->threaded++;
    return 0;
}

/* Kernel AIO, from the loop: a threadpool write first wakes a worker,
 * which took 50-500 us here.  Only with O_DIRECT, where a write into
 * allocated blocks does not block the submitter; RWF_NOWAIT sends any
 * write that would block to the threadpool instead. */
static int aio_submit(struct wal_write *wr)
{
    struct wal *w = wr->w;
    struct wal_seg *s = wr->seg;
    struct iocb *cb = &wr->iocb;

    if (s->direct == 0)
        s->direct = (fcntl(s->fd, F_GETFL) & O_DIRECT) != 0 ? 1 : 2;
    if (w->aio == 0 || s->direct != 1)
        return -1;
    memset(cb, 0, sizeof *cb);
    cb->aio_data = (uint64_t)(uintptr_t)wr;
    cb->aio_lio_opcode = IOCB_CMD_PWRITE;
    cb->aio_fildes = (uint32_t)s->fd;
    cb->aio_buf = (uint64_t)(uintptr_t)wr->b.buf;
    cb->aio_nbytes = wr->b.len;
    cb->aio_offset = wr->off;
    cb->aio_rw_flags = RWF_DSYNC | RWF_NOWAIT;
    cb->aio_flags = IOCB_FLAG_RESFD;
    cb->aio_resfd = (uint32_t)w->aio_fd;
    return syscall(__NR_io_submit, w->aio, 1L, &cb) == 1 ? 0 : -1;
}

static void aio_ready(uv_poll_t *h, int status, int events)
{
    struct wal *w = h->data;
    struct io_event ev[WAL_INFLIGHT];
    struct timespec now = {0, 0};
    uint64_t count;
    long i, n;

    (void)status;
    (void)events;
    if (read(w->aio_fd, &count, sizeof count) < 0)
        return;
    n = syscall(__NR_io_getevents, w->aio, 0L, (long)WAL_INFLIGHT, ev, &now);
    for (i = 0; i < n; i++) {
        struct wal_write *wr = (void *)(uintptr_t)ev[i].data;
        long res = (long)ev[i].res;
        if (res == -EAGAIN && pool_submit(wr) == 0)
            continue;
        write_finish(wr, res < 0                    ? (int)-res
                         : (size_t)res != wr->b.len ? EIO
                                                    : 0);
    }
}

void replog__wal_aio_init(struct wal *w)
{
    if (syscall(__NR_io_setup, (long)WAL_INFLIGHT, &w->aio) != 0) {
        w->aio = 0;
        return;
    }
    w->aio_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (w->aio_fd >= 0 && uv_poll_init(w->loop, &w->aio_poll, w->aio_fd) == 0) {
        w->aio_poll.data = w;
        if (uv_poll_start(&w->aio_poll, UV_READABLE, aio_ready) == 0)
            return;
        uv_close((uv_handle_t *)&w->aio_poll, NULL);
    }
    if (w->aio_fd >= 0)
        close(w->aio_fd);
    syscall(__NR_io_destroy, w->aio);
    w->aio = 0;
}

/* ---- segments ---- */

static void prep_work(uv_work_t *work)
{
    struct wal *w = work->data;
    struct wal_seg *s = w->prep_seg;
    char tmp[PATH_MAX], path[PATH_MAX];
    int fd, err = 0, named = 0;

    replog__wal_path(w, s->seq, path, sizeof path);
    if (w->prep_spare != 0)
        replog__wal_spare_path(w, w->prep_spare, tmp, sizeof tmp);
    if (w->prep_spare == 0 || rename(tmp, path) != 0) {
        snprintf(tmp, sizeof tmp, "%s/wal-tmp", w->dir);
        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0) {
            w->prep_err = errno;
            return;
        }
        if (w->prep_zero)
            err = zero_fill(fd, s->size, w->prep_sync_once);
        else
            err = reserve(fd, s->size);
        close(fd);
        w->prep_spare = 0;
        /* Named only once whole. */
        if (err == 0 && rename(tmp, path) != 0)
            err = errno;
    }
    /* The name is synced, and wal-meta names it, before any record goes
     * in: a deleted segment is then missed (wal_load.c). */
    if (err == 0) {
        named = 1;
        err = replog__wal_sync_dir(w->dir);
    }
    if (err == 0)
        err = replog__wal_meta_set(w, WAL_META_NEWEST, s->seq);
    if (err == 0 && (s->fd = replog__wal_open(path)) < 0)
        err = errno;
    /* Named, it stays: wal-meta may name it already, and a segment it
     * names must be there (an empty one beyond the end is removed at the
     * next start). */
    if (err != 0 && !named)
        unlink(tmp);
    w->prep_err = err;
}

void replog__wal_mark_closed(struct wal *w)
{
    struct wal_seg *s = current_seg(w);
    struct wal_batch *b = &w->pending;

    if (s == NULL || s->fd < 0 || s->end + WAL_BLOCK > s->size ||
        batch_reserve(w, b, WAL_HDR + 2 * WAL_BLOCK) != 0)
        return;
    record_open(w, WAL_CLOSED, w->next_index);
    record_close(w);
    seal(w, b, s);
    if (replog__wal_pwrite_all(s->fd, b->buf, b->len, s->end) == 0)
        s->end += (off_t)b->len;
    replog__wal_batch_free(w, b);
}

/* At close: the appends not yet written never will be. */
void replog__wal_cancel_pending(struct wal *w)
{
    struct wal_batch b = w->pending;

    memset(&w->pending, 0, sizeof w->pending);
    w->pending.open = SIZE_MAX;
    w->pending_at_ns = 0;
    answer(&b, RAFT_CANCELED);
    replog__wal_batch_free(w, &b);
}

static void prep_done(uv_work_t *work, int status)
{
    struct wal *w = work->data;
    struct wal_seg *s = w->prep_seg;

    w->prep_seg = NULL;
    if (status != 0 && w->prep_err == 0)
        w->prep_err = EIO;
    /* Closing (also when the log failed to open), nothing will be written
     * to it. */
    if (w->prep_err != 0 && !w->closing)
        replog__fail_stop(w->l, "log segment %llu: %s",
                          (unsigned long long)s->seq, strerror(w->prep_err));
    if (w->closing) {
        if (s->fd >= 0)
            close(s->fd);
        free(s);
    } else {
        if (w->prep_spare != 0)
            w->segs_reused++;
        else if (w->prep_zero)
            w->segs_zeroed++;
        else
            w->segs_reserved++;
        w->ready = s;
        WAL_CHECK(w);
        flush(w);
    }
    replog__wal_maybe_closed(w);
}

void replog__wal_start_prep(struct wal *w)
{
    struct wal_seg *s, *cur = current_seg(w);

    if (w->prep_seg != NULL || w->ready != NULL || w->closing)
        return;
    if ((s = calloc(1, sizeof *s)) == NULL)
        return; /* tried again at the next rollover */
    s->seq = w->next_seq++;
    s->fd = -1;
    s->size = w->n_segs == 0 && w->seg_bytes > REPLOG_FIRST_SEGMENT_BYTES
                  ? REPLOG_FIRST_SEGMENT_BYTES
                  : w->seg_bytes;
    w->prep_spare = 0;
    w->prep_sync_once = cur == NULL;
    w->prep_zero = cur == NULL || cur->writes == 0 ||
                   (uint64_t)cur->end / cur->writes < WAL_LARGE_WRITE;
    if (w->n_spare_segs > 0) {
        w->prep_spare = w->spare_segs[--w->n_spare_segs];
        s->size = w->seg_bytes;
    }
    w->prep_seg = s;
    w->prep_err = 0;
    w->prep.data = w;
    if (uv_queue_work(w->loop, &w->prep, prep_work, prep_done) != 0) {
        if (w->prep_spare != 0)
            w->spare_segs[w->n_spare_segs++] = w->prep_spare;
        w->prep_seg = NULL;
        free(s);
    }
}

int replog__wal_add_seg(struct wal *w, struct wal_seg *s)
{
    struct wal_seg *prev = current_seg(w);

    if (w->n_segs == w->cap_segs) {
        unsigned cap = w->cap_segs ? 2 * w->cap_segs : 8;
        struct wal_seg **p = realloc(w->segs, cap * sizeof *p);
        if (p == NULL)
            return RAFT_NOMEM;
        w->segs = p;
        w->cap_segs = cap;
    }
    w->segs[w->n_segs++] = s;
    if (prev != NULL)
        seg_release(w, prev);
    return 0;
}

/* A fresh segment made as long as the write of `len` bytes it takes (the
 * appends of a turn, or one entry, larger than a segment), and no shorter
 * than seg_bytes; its length synced before any record says it.  So a
 * write never goes past its segment's end, and a segment is as long as
 * its records say (wal_load.c).  In the loop: only writes of megabytes
 * come here. */
static struct wal_seg *seg_grow(struct wal *w, struct wal_seg *s, size_t len)
{
    off_t size = (off_t)len > w->seg_bytes ? (off_t)len : w->seg_bytes;
    int err = reserve(s->fd, size);

    if (err != 0) {
        replog__fail_stop(w->l,
                          "log segment %llu: cannot make it %lld bytes "
                          "long for a write: %s",
                          (unsigned long long)s->seq, (long long)size,
                          strerror(err));
        return NULL;
    }
    s->size = size;
    return s;
}

/* The segment the next write of `len` bytes goes to; NULL until the next
 * one is prepared. */
static struct wal_seg *seg_for(struct wal *w, size_t len)
{
    struct wal_seg *s = current_seg(w);

    if (s != NULL && s->fd >= 0 && s->end + (off_t)len <= s->size)
        return s;
    if (s != NULL && s->fd >= 0 && s->end == 0)
        return seg_grow(w, s, len);
    /* Nothing goes to the next segment before this one's writes are
     * done, so that only the last segment can end with a lost write: a
     * gap anywhere else is damage (wal_load.c). */
    if (s != NULL && s->writing > 0)
        return NULL;
    if (w->ready == NULL || replog__wal_add_seg(w, w->ready) != 0) {
        replog__wal_start_prep(w);
        return NULL;
    }
    s = w->ready;
    w->ready = NULL;
    WAL_CHECK(w);
    return s->size >= (off_t)len ? s : seg_grow(w, s, len);
}

/* The next segment is prepared once this one is half full: its zeros
 * then compete with no write that waits, at start-up least of all. */
void replog__wal_maybe_prep(struct wal *w)
{
    struct wal_seg *s = current_seg(w);

    if (s == NULL || s->fd < 0 || s->end >= s->size / 2)
        replog__wal_start_prep(w);
}

static void flush(struct wal *w)
{
    struct wal_write *wr;
    struct wal_seg *s;
    uint32_t crc;

    if (w->pending.len == 0 && w->pending.open == SIZE_MAX)
        return;
    if (w->inflight >= WAL_INFLIGHT)
        return;
    record_close(w);
    if ((s = seg_for(w, w->pending.len)) == NULL)
        return;
    if ((wr = calloc(1, sizeof *wr)) == NULL)
        return; /* tried again at the next completion or append */
    crc = w->last_crc;
    seal(w, &w->pending, s);
    wr->w = w;
    wr->seg = s;
    wr->off = s->end;
    wr->b = w->pending;
    wr->submitted_ns = uv_hrtime();
    memset(&w->pending, 0, sizeof w->pending);
    w->pending.open = SIZE_MAX;
    if (aio_submit(wr) != 0 && pool_submit(wr) != 0) {
        w->pending = wr->b;
        w->last_crc = crc; /* sealed again when submitted */
        w->write_seq--;
        free(wr);
        return;
    }
    w->wait_ns += wr->b.n_acks * wr->submitted_ns - w->pending_at_ns;
    w->pending_at_ns = 0;
    s->end += (off_t)wr->b.len;
    s->writing++;
    s->writes++;
    if (wr->b.last_index > s->last_index)
        s->last_index = wr->b.last_index;
    w->writes++;
    w->bytes += wr->b.len;
    w->overlapped += w->inflight++ > 0;
    if (w->tail != NULL)
        w->tail->next = wr;
    else
        w->head = wr;
    w->tail = wr;
    WAL_CHECK(w);
    replog__wal_maybe_prep(w);
}

static void on_flusher(uv_prepare_t *h)
{
    struct wal *w = h->data;

    replog__submit(w->l); /* the turn's proposals join its appends */
    uv_prepare_stop(h);
    flush(w);
}

void replog__wal_flusher_init(struct wal *w)
{
    if (uv_prepare_init(w->loop, &w->flusher) == 0) {
        w->flusher.data = w;
        w->flusher_on = 1;
    }
}

/* Before the loop waits next; at once if there is no loop turn to wait
 * for (the handle could not be had). */
static void flush_soon(struct wal *w)
{
    if (!w->flusher_on || uv_prepare_start(&w->flusher, on_flusher) != 0) {
        replog__submit(w->l);
        flush(w);
    }
}

void replog__wal_flush_soon(struct raft_io *io)
{
    flush_soon(io->impl);
}

/* ---- raft_io: the log ---- */

int replog__wal_append(struct raft_io *io, struct raft_io_append *req,
                       const struct raft_entry entries[], unsigned n,
                       raft_io_append_cb cb)
{
    struct wal *w = io->impl;
    struct wal_batch *b = &w->pending;
    size_t need = WAL_HDR + WAL_BLOCK;
    unsigned i;
    uint8_t *p;
    int rv;

    if (w->closing)
        return RAFT_IOERR;
    for (i = 0; i < n; i++)
        need += WAL_E_HDR + ((entries[i].buf.len + 7) & ~(size_t)7);
    /* Never refused: libraft 0.15 does not survive an append it asked for
     * failing at once.  A membership change then left its configuration
     * freed but in use, and raft_assign a freed request as its change in
     * progress; an apply's entries stayed in raft's log but not in ours,
     * every later entry stored at the wrong index. */
    if ((rv = batch_reserve(w, b, need)) != 0 ||
        (rv = batch_ack(b, req, cb)) != 0)
        replog__fail_stop(w->l, "log append of %u entries: %s", n,
                          raft_strerror(rv));
    w->appends++;
    w->queued += w->inflight >= WAL_INFLIGHT;
    w->pending_at_ns += uv_hrtime();
    if (b->open == SIZE_MAX)
        record_open(w, WAL_ENTRIES, w->next_index);
    p = b->buf + b->len;
    for (i = 0; i < n; i++) {
        size_t len = entries[i].buf.len, pad = ((len + 7) & ~(size_t)7) - len;
        tb_store_be64(p + WAL_E_TERM, entries[i].term);
        tb_store_be32(p + WAL_E_TYPE, (uint32_t)entries[i].type);
        tb_store_be32(p + WAL_E_SIZE, (uint32_t)len);
        if (len > 0)
            memcpy(p + WAL_E_HDR, entries[i].buf.base, len);
        memset(p + WAL_E_HDR + len, 0, pad);
        p += WAL_E_HDR + len + pad;
    }
    b->len = (size_t)(p - b->buf);
    p = b->buf + b->open;
    tb_store_be32(p + WAL_H_N, tb_load_be32(p + WAL_H_N) + n);
    w->next_index += n;
    b->n_entries += n;
    w->entries += n;
    b->last_index = w->next_index - 1;
    flush_soon(w);
    WAL_CHECK(w);
    return 0;
}

/* A record of its own: a truncation, or the reset after an installed
 * snapshot.  The next entry appended is `index`. */
int replog__wal_mark(struct wal *w, uint32_t kind, uint64_t index)
{
    int rv;

    if ((rv = batch_reserve(w, &w->pending, WAL_HDR + 2 * WAL_BLOCK)) != 0)
        return rv;
    record_close(w);
    record_open(w, kind, index);
    record_close(w);
    w->next_index = index;
    flush_soon(w);
    WAL_CHECK(w);
    return 0;
}

int replog__wal_truncate(struct raft_io *io, raft_index index)
{
    struct wal *w = io->impl;
    int rv;

    if (w->closing)
        return RAFT_IOERR;
    /* Never refused, as appends are not (above). */
    if ((rv = replog__wal_mark(w, WAL_TRUNCATE, index)) != 0)
        replog__fail_stop(w->l, "log truncation at %llu: %s",
                          (unsigned long long)index, raft_strerror(rv));
    return 0;
}
