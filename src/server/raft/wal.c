/* The log's writes (wal.h says why the log is ours).  Appends and
 * truncations become records in `pending`; while fewer than WAL_INFLIGHT
 * writes are on their way, pending goes to the disk as one write, on
 * libuv's threadpool, with O_DIRECT and O_DSYNC.  Completions are handed to
 * raft in submission order, and after a failed write every later one
 * fails too: its records follow a gap.
 *
 * Segments are zero-filled and synced ahead of use, one at a time, so that
 * every log write overwrites allocated blocks: a synced write into an
 * unallocated or unwritten block also commits the file system's journal,
 * 280 us instead of 190 us for 4 KiB here. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "server/raft/internal.h"
#include "server/raft/wal.h"

/* One page of zeros repeated by pwritev: even zero-page mappings of a
 * larger buffer count in the process's RSS. */
#define ZERO_IOVS 256 /* 1 MiB a call */

static const uint8_t zeros[WAL_BLOCK];

static size_t align_up(size_t n)
{
    return (n + WAL_BLOCK - 1) & ~(size_t)(WAL_BLOCK - 1);
}

void replog__wal_path(const struct wal *w, uint64_t seq, char *buf, size_t n)
{
    snprintf(buf, n, "%s/wal-%016llx", w->dir, (unsigned long long)seq);
}

/* O_DIRECT where the file system has it (tmpfs has not). */
int replog__wal_open(const char *path)
{
    int fd = open(path, O_WRONLY | O_DSYNC | O_DIRECT | O_CLOEXEC);

    if (fd < 0 && errno == EINVAL)
        fd = open(path, O_WRONLY | O_DSYNC | O_CLOEXEC);
    return fd;
}

static int sync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rv;

    if (fd < 0)
        return errno;
    rv = fsync(fd) == 0 ? 0 : errno;
    close(fd);
    return rv;
}

/* Zeros over [0, len), synced: 0 or an errno value. */
static int zero_fill(int fd, off_t len)
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
    }
    if (fdatasync(fd) != 0)
        return errno;
    /* Clean pages of a file written with O_DIRECT only cost memory. */
    (void)posix_fadvise(fd, 0, len, POSIX_FADV_DONTNEED);
    return 0;
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
    if (p == NULL && (p = aligned_alloc(WAL_BLOCK, cap)) == NULL)
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
        free(w->spare[small].buf);
        w->spare[small].buf = buf;
        w->spare[small].cap = cap;
        return;
    }
    free(buf);
}

static void batch_free(struct wal *w, struct wal_batch *b)
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
    tb_store_be32(h, WAL_MAGIC);
    tb_store_be32(h + 12, kind);
    tb_store_be64(h + 16, index);
    tb_store_be64(h + 24, w->nonce);
    w->pending.open = w->pending.len;
    w->pending.len += WAL_HDR;
}

/* Seals the open record: its length, the previous record's CRC, its own
 * CRC, and zeros up to the next block. */
static void record_close(struct wal *w)
{
    struct wal_batch *b = &w->pending;
    uint8_t *h;
    size_t len, end;
    uint32_t crc;

    if (b->open == SIZE_MAX)
        return;
    h = b->buf + b->open;
    len = b->len - b->open - WAL_HDR;
    tb_store_be32(h + 8, w->last_crc);
    tb_store_be64(h + 40, len);
    crc = replog__wal_crc(0, h + 8, WAL_HDR - 8 + len);
    tb_store_be32(h + 4, crc);
    w->last_crc = crc;
    end = align_up(b->len);
    memset(b->buf + b->len, 0, end - b->len);
    b->len = end;
    b->open = SIZE_MAX;
    w->records++;
}

/* ---- writes ---- */

static void flush(struct wal *w);
static void maybe_closed(struct wal *w);

static int raft_status(int err)
{
    return err == 0 ? 0 : err == ENOSPC ? RAFT_NOSPACE : RAFT_IOERR;
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
    const uint8_t *p = wr->b.buf;
    size_t left = wr->b.len;
    off_t off = wr->off;
    ssize_t n;

    while (left > 0) {
        n = pwrite(wr->seg->fd, p, left, off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            wr->status = n == 0 ? EIO : errno;
            return;
        }
        p += n;
        left -= (size_t)n;
        off += n;
    }
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

    wr->status = err;
    wr->done = 1;
    while ((head = w->head) != NULL && head->done) {
        w->head = head->next;
        if (w->head == NULL)
            w->tail = NULL;
        w->inflight--;
        head->seg->writing--;
        seg_release(w, head->seg);
        if (head->status != 0 && !w->errored) {
            w->errored = head->status;
            replog__logf(w->l, REPLOG_LOG_ERROR, "log write: %s",
                         strerror(head->status));
        }
        answer(&head->b, w->errored ? raft_status(w->errored) : 0);
        batch_free(w, &head->b);
        free(head);
    }
    flush(w);
    maybe_closed(w);
}

static void write_done(uv_work_t *work, int status)
{
    struct wal_write *wr = work->data;

    write_finish(wr, wr->status != 0 ? wr->status : status != 0 ? EIO : 0);
}

static int pool_submit(struct wal_write *wr)
{
    wr->work.data = wr;
    return uv_queue_work(wr->w->loop, &wr->work, write_work, write_done);
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

static void aio_init(struct wal *w)
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
    int fd, err;

    snprintf(tmp, sizeof tmp, "%s/wal-tmp", w->dir);
    replog__wal_path(w, s->seq, path, sizeof path);
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        w->prep_err = errno;
        return;
    }
    err = zero_fill(fd, w->seg_bytes);
    close(fd);
    /* Named only once whole, and the name synced before any record
     * goes in. */
    if (err == 0 && rename(tmp, path) != 0)
        err = errno;
    if (err == 0)
        err = sync_dir(w->dir);
    if (err == 0 && (s->fd = replog__wal_open(path)) < 0)
        err = errno;
    if (err != 0)
        unlink(err == 0 ? path : tmp);
    w->prep_err = err;
}

static void fail_pending(struct wal *w, int status)
{
    struct wal_batch b = w->pending;

    memset(&w->pending, 0, sizeof w->pending);
    w->pending.open = SIZE_MAX;
    answer(&b, status);
    batch_free(w, &b);
}

static void prep_done(uv_work_t *work, int status)
{
    struct wal *w = work->data;
    struct wal_seg *s = w->prep_seg;

    w->prep_seg = NULL;
    if (status != 0 && w->prep_err == 0)
        w->prep_err = EIO;
    if (w->prep_err != 0) {
        /* The records waiting for it may not be written later, after
         * others: fail them, and the log with them. */
        replog__logf(w->l, REPLOG_LOG_ERROR, "log segment %llu: %s",
                     (unsigned long long)s->seq, strerror(w->prep_err));
        if (!w->errored)
            w->errored = w->prep_err;
        free(s);
        fail_pending(w, raft_status(w->errored));
    } else if (w->closing) {
        close(s->fd);
        free(s);
    } else {
        w->ready = s;
        flush(w);
    }
    maybe_closed(w);
}

static void start_prep(struct wal *w)
{
    struct wal_seg *s;

    if (w->prep_seg != NULL || w->ready != NULL || w->closing || w->errored)
        return;
    if ((s = calloc(1, sizeof *s)) == NULL)
        return; /* tried again at the next rollover */
    s->seq = w->next_seq++;
    s->fd = -1;
    w->prep_seg = s;
    w->prep_err = 0;
    w->prep.data = w;
    if (uv_queue_work(w->loop, &w->prep, prep_work, prep_done) != 0) {
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

/* The segment the next write of `len` bytes goes to; NULL until the next
 * one is prepared.  A fresh segment takes a write of any size. */
static struct wal_seg *seg_for(struct wal *w, size_t len)
{
    struct wal_seg *s = current_seg(w);

    if (s != NULL && s->fd >= 0 &&
        (s->end == 0 || s->end + (off_t)len <= w->seg_bytes))
        return s;
    /* Nothing goes to the next segment before this one's writes are
     * done, so that only the last segment can end with a lost write: a
     * gap anywhere else is damage (wal_load.c). */
    if (s != NULL && s->writing > 0)
        return NULL;
    if (w->ready == NULL || replog__wal_add_seg(w, w->ready) != 0) {
        start_prep(w);
        return NULL;
    }
    s = w->ready;
    w->ready = NULL;
    return s;
}

/* The next segment is prepared once this one is half full: its 8 MiB of
 * zeros then compete with no write that waits, at start-up least of all. */
static void maybe_prep(struct wal *w)
{
    struct wal_seg *s = current_seg(w);

    if (s == NULL || s->fd < 0 || s->end >= w->seg_bytes / 2)
        start_prep(w);
}

static void flush(struct wal *w)
{
    struct wal_write *wr;
    struct wal_seg *s;

    if (w->pending.len == 0 && w->pending.open == SIZE_MAX)
        return;
    if (w->errored) {
        fail_pending(w, raft_status(w->errored));
        return;
    }
    if (w->inflight >= WAL_INFLIGHT)
        return;
    record_close(w);
    if ((s = seg_for(w, w->pending.len)) == NULL)
        return;
    if ((wr = calloc(1, sizeof *wr)) == NULL)
        return; /* tried again at the next completion or append */
    wr->w = w;
    wr->seg = s;
    wr->off = s->end;
    wr->b = w->pending;
    memset(&w->pending, 0, sizeof w->pending);
    w->pending.open = SIZE_MAX;
    if (aio_submit(wr) != 0 && pool_submit(wr) != 0) {
        w->pending = wr->b;
        free(wr);
        return;
    }
    s->end += (off_t)wr->b.len;
    s->writing++;
    if (wr->b.last_index > s->last_index)
        s->last_index = wr->b.last_index;
    if (w->inflight++ > 0)
        w->overlapped++;
    if (w->tail != NULL)
        w->tail->next = wr;
    else
        w->head = wr;
    w->tail = wr;
    maybe_prep(w);
}

/* ---- raft_io: the log ---- */

static int wal_append(struct raft_io *io, struct raft_io_append *req,
                      const struct raft_entry entries[], unsigned n,
                      raft_io_append_cb cb)
{
    struct wal *w = io->impl;
    struct wal_batch *b = &w->pending;
    size_t need = WAL_HDR + WAL_BLOCK;
    unsigned i;
    uint8_t *p;
    int rv;

    if (w->errored || w->closing)
        return RAFT_IOERR;
    for (i = 0; i < n; i++)
        need += 16 + ((entries[i].buf.len + 7) & ~(size_t)7);
    if ((rv = batch_reserve(w, b, need)) != 0 ||
        (rv = batch_ack(b, req, cb)) != 0)
        return rv;
    if (b->open == SIZE_MAX)
        record_open(w, WAL_ENTRIES, w->next_index);
    p = b->buf + b->len;
    for (i = 0; i < n; i++) {
        size_t len = entries[i].buf.len, pad = ((len + 7) & ~(size_t)7) - len;
        tb_store_be64(p, entries[i].term);
        tb_store_be32(p + 8, (uint32_t)entries[i].type);
        tb_store_be32(p + 12, (uint32_t)len);
        if (len > 0)
            memcpy(p + 16, entries[i].buf.base, len);
        memset(p + 16 + len, 0, pad);
        p += 16 + len + pad;
    }
    b->len = (size_t)(p - b->buf);
    p = b->buf + b->open;
    tb_store_be32(p + 32, tb_load_be32(p + 32) + n);
    w->next_index += n;
    b->last_index = w->next_index - 1;
    flush(w);
    return 0;
}

static int wal_truncate(struct raft_io *io, raft_index index)
{
    struct wal *w = io->impl;
    int rv;

    if (w->errored || w->closing)
        return RAFT_IOERR;
    if ((rv = batch_reserve(w, &w->pending, WAL_HDR + 2 * WAL_BLOCK)) != 0)
        return rv;
    record_close(w);
    record_open(w, WAL_TRUNCATE, index);
    record_close(w);
    w->next_index = index;
    flush(w);
    return 0;
}

/* ---- raft_io: snapshots, and the segments they make obsolete ---- */

static void removal_work(uv_work_t *work)
{
    struct wal *w = work->data;
    unsigned i;

    /* Oldest first: the log's start is its oldest remaining segment. */
    for (i = 0; i < w->n_doomed; i++)
        unlink(w->doomed[i]);
    (void)sync_dir(w->dir);
}

static void removal_done(uv_work_t *work, int status)
{
    struct wal *w = work->data;
    unsigned i;

    (void)status;
    for (i = 0; i < w->n_doomed; i++)
        free(w->doomed[i]);
    free(w->doomed);
    w->doomed = NULL;
    w->n_doomed = 0;
    w->removal_busy = 0;
    maybe_closed(w);
}

/* Removes the segments holding only entries up to `upto`, never the one
 * being written.  One removal at a time; a later snapshot catches up. */
static void remove_upto(struct wal *w, raft_index upto)
{
    char path[PATH_MAX];
    unsigned i, k = 0;

    if (w->removal_busy || w->closing)
        return;
    while (k + 1 < w->n_segs && w->segs[k]->last_index <= upto &&
           w->segs[k]->writing == 0)
        k++;
    if (k == 0 || (w->doomed = calloc(k, sizeof *w->doomed)) == NULL)
        return;
    for (i = 0; i < k; i++) {
        replog__wal_path(w, w->segs[i]->seq, path, sizeof path);
        w->doomed[w->n_doomed] = strdup(path);
        if (w->doomed[w->n_doomed] != NULL)
            w->n_doomed++;
        if (w->segs[i]->fd >= 0)
            close(w->segs[i]->fd);
        free(w->segs[i]);
    }
    memmove(w->segs, w->segs + k, (w->n_segs - k) * sizeof *w->segs);
    w->n_segs -= k;
    w->removal_busy = 1;
    w->removal.data = w;
    if (uv_queue_work(w->loop, &w->removal, removal_work, removal_done) != 0)
        removal_done(&w->removal, 0);
}

static void put_done(struct raft_io_snapshot_put *put, int status)
{
    struct wal *w = put->data;
    struct raft_io_snapshot_put *req = w->put_req;

    w->put_req = NULL;
    /* An installed snapshot (trailing 0) replaces the whole log, once it
     * is safely stored itself. */
    if (status == 0 && w->put_trailing == 0 &&
        batch_reserve(w, &w->pending, WAL_HDR + 2 * WAL_BLOCK) == 0) {
        record_close(w);
        record_open(w, WAL_RESET, w->put_index + 1);
        record_close(w);
        w->next_index = w->put_index + 1;
        flush(w);
    }
    if (status == 0 && w->put_trailing > 0 && w->put_index > w->put_trailing)
        remove_upto(w, w->put_index - w->put_trailing);
    w->put_cb(req, status);
}

static int wal_snapshot_put(struct raft_io *io, unsigned trailing,
                            struct raft_io_snapshot_put *req,
                            const struct raft_snapshot *snap,
                            raft_io_snapshot_put_cb cb)
{
    struct wal *w = io->impl;
    int rv;

    if (w->put_req != NULL)
        return RAFT_BUSY;
    w->put_req = req;
    w->put_cb = cb;
    w->put_index = snap->index;
    w->put_trailing = trailing;
    w->put.data = w;
    rv = w->uv->snapshot_put(w->uv, trailing, &w->put, snap, put_done);
    if (rv != 0) {
        w->put_req = NULL;
        memcpy(io->errmsg, w->uv->errmsg, sizeof io->errmsg);
    }
    return rv;
}

/* ---- raft_io: the rest is raft_uv's ---- */

#define UV_ERR(w, rv)                                                          \
    do {                                                                       \
        if ((rv) != 0)                                                         \
            memcpy((w)->io->errmsg, (w)->uv->errmsg, sizeof(w)->io->errmsg);   \
    } while (0)

static int wal_init_io(struct raft_io *io, raft_id id, const char *address)
{
    struct wal *w = io->impl;
    int rv = w->uv->init(w->uv, id, address);

    UV_ERR(w, rv);
    return rv;
}

/* raft owns what load returns only when it succeeds. */
static void snapshot_free(struct raft_snapshot **snap)
{
    struct raft_snapshot *s = *snap;
    unsigned i;

    if (s == NULL)
        return;
    for (i = 0; i < s->n_bufs; i++)
        raft_free(s->bufs[i].base);
    raft_free(s->bufs);
    raft_configuration_close(&s->configuration);
    raft_free(s);
    *snap = NULL;
}

static int wal_load(struct raft_io *io, raft_term *term, raft_id *vote,
                    struct raft_snapshot **snap, raft_index *start,
                    struct raft_entry **entries, size_t *n)
{
    struct wal *w = io->impl;
    int rv = w->uv->load(w->uv, term, vote, snap, start, entries, n);

    UV_ERR(w, rv);
    if (rv == 0)
        aio_init(w);
    if (rv == 0 && (rv = replog__wal_load(w, *snap, start, entries, n)) != 0)
        snapshot_free(snap);
    if (rv == 0)
        maybe_prep(w);
    return rv;
}

static void wal_tick(struct raft_io *uv)
{
    struct wal *w = uv->data;

    w->tick(w->io);
}

static void wal_recv(struct raft_io *uv, struct raft_message *msg)
{
    struct wal *w = uv->data;

    w->recv(w->io, msg);
}

static int wal_start(struct raft_io *io, unsigned msecs, raft_io_tick_cb tick,
                     raft_io_recv_cb recv)
{
    struct wal *w = io->impl;
    int rv;

    w->tick = tick;
    w->recv = recv;
    rv = w->uv->start(w->uv, msecs, wal_tick, wal_recv);
    UV_ERR(w, rv);
    return rv;
}

static int wal_bootstrap(struct raft_io *io, const struct raft_configuration *c)
{
    struct wal *w = io->impl;
    int rv = w->uv->bootstrap(w->uv, c);

    UV_ERR(w, rv);
    return rv;
}

/* raft_uv would write the configuration after its own entries only. */
static int wal_recover(struct raft_io *io, const struct raft_configuration *c)
{
    (void)c;
    snprintf(io->errmsg, sizeof io->errmsg, "recover: not supported");
    return RAFT_NOTFOUND;
}

static int wal_set_term(struct raft_io *io, raft_term term)
{
    struct wal *w = io->impl;
    int rv = w->uv->set_term(w->uv, term);

    UV_ERR(w, rv);
    return rv;
}

static int wal_set_vote(struct raft_io *io, raft_id id)
{
    struct wal *w = io->impl;
    int rv = w->uv->set_vote(w->uv, id);

    UV_ERR(w, rv);
    return rv;
}

static int wal_send(struct raft_io *io, struct raft_io_send *req,
                    const struct raft_message *msg, raft_io_send_cb cb)
{
    struct wal *w = io->impl;
    int rv = w->uv->send(w->uv, req, msg, cb);

    UV_ERR(w, rv);
    return rv;
}

static int wal_snapshot_get(struct raft_io *io,
                            struct raft_io_snapshot_get *req,
                            raft_io_snapshot_get_cb cb)
{
    struct wal *w = io->impl;
    int rv = w->uv->snapshot_get(w->uv, req, cb);

    UV_ERR(w, rv);
    return rv;
}

static raft_time wal_time(struct raft_io *io)
{
    struct wal *w = io->impl;

    return w->uv->time(w->uv);
}

static int wal_random(struct raft_io *io, int min, int max)
{
    struct wal *w = io->impl;

    return w->uv->random(w->uv, min, max);
}

static int wal_async_work(struct raft_io *io, struct raft_io_async_work *req,
                          raft_io_async_work_cb cb)
{
    struct wal *w = io->impl;

    return w->uv->async_work(w->uv, req, cb);
}

/* ---- closing ---- */

static void uv_closed(struct raft_io *uv)
{
    struct wal *w = uv->data;

    w->close_cb(w->io);
}

static void aio_closed(uv_handle_t *h)
{
    struct wal *w = h->data;

    close(w->aio_fd);
    syscall(__NR_io_destroy, w->aio);
    w->aio = 0;
    w->uv->close(w->uv, uv_closed);
}

/* raft_uv closes once no write, preparation or removal is running: their
 * threads use the files and `w`. */
static void maybe_closed(struct wal *w)
{
    unsigned i;

    if (w->closing != 1 || w->inflight > 0 || w->prep_seg != NULL ||
        w->removal_busy)
        return;
    w->closing = 2;
    fail_pending(w, RAFT_CANCELED);
    for (i = 0; i < w->n_segs; i++)
        if (w->segs[i]->fd >= 0) {
            close(w->segs[i]->fd);
            w->segs[i]->fd = -1;
        }
    if (w->ready != NULL) {
        close(w->ready->fd);
        free(w->ready);
        w->ready = NULL;
    }
    if (w->aio != 0)
        uv_close((uv_handle_t *)&w->aio_poll, aio_closed);
    else
        w->uv->close(w->uv, uv_closed);
}

static void wal_close(struct raft_io *io, raft_io_close_cb cb)
{
    struct wal *w = io->impl;

    w->closing = 1;
    w->close_cb = cb;
    maybe_closed(w);
}

void replog__wal_free(struct raft_io *io)
{
    struct wal *w = io->impl;
    unsigned i;

    if (w == NULL)
        return;
    for (i = 0; i < w->n_segs; i++) {
        if (w->segs[i]->fd >= 0)
            close(w->segs[i]->fd);
        free(w->segs[i]);
    }
    free(w->segs);
    batch_free(w, &w->pending);
    while (w->n_spare > 0)
        free(w->spare[--w->n_spare].buf);
    free(w->dir);
    free(w);
    io->impl = NULL;
}

uint64_t replog__wal_overlapped(struct raft_io *io)
{
    struct wal *w = io->impl;

    return w->overlapped;
}

static int has_segments(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int found = 0;

    if (d == NULL)
        return 0;
    while (!found && (de = readdir(d)) != NULL)
        found = strncmp(de->d_name, "wal-", 4) == 0 &&
                strcmp(de->d_name, "wal-tmp") != 0;
    closedir(d);
    return found;
}

int replog__wal_init(struct replog *l, off_t segment_bytes)
{
    struct raft_io *io = &l->io;
    struct wal *w = calloc(1, sizeof *w);

    if (w == NULL || (w->dir = strdup(l->dir)) == NULL) {
        free(w);
        return RAFT_NOMEM;
    }
    w->l = l;
    w->io = io;
    w->uv = &l->uv;
    w->loop = l->loop;
    w->seg_bytes = segment_bytes;
    w->next_index = 1;
    w->next_seq = 1;
    w->pending.open = SIZE_MAX;
    if (getrandom(&w->nonce, sizeof w->nonce, 0) != sizeof w->nonce)
        w->nonce = (uint64_t)uv_hrtime() ^ (uint64_t)getpid();
    l->uv.data = w;
    /* A new log's first segment is prepared while raft opens. */
    if (!has_segments(w->dir))
        start_prep(w);
    memset(io, 0, sizeof *io);
    io->version = l->uv.version;
    io->impl = w;
    io->init = wal_init_io;
    io->close = wal_close;
    io->load = wal_load;
    io->start = wal_start;
    io->bootstrap = wal_bootstrap;
    io->recover = wal_recover;
    io->set_term = wal_set_term;
    io->set_vote = wal_set_vote;
    io->send = wal_send;
    io->append = wal_append;
    io->truncate = wal_truncate;
    io->snapshot_put = wal_snapshot_put;
    io->snapshot_get = wal_snapshot_get;
    io->time = wal_time;
    io->random = wal_random;
    if (l->uv.version >= 2)
        io->async_work = wal_async_work;
    return 0;
}
