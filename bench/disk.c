/* The disk's own floor: how long one synced 4 KiB write takes here.
 *
 * Every lock handoff needs durable writes (the holder's delete, the next
 * waiter's create) before the next holder can be told, so this latency,
 * plus the loopback round trips, bounds lock throughput on one lock for
 * any server.  The write is what a write-ahead log does: O_DSYNC | O_DIRECT
 * into a prepared file, one block at a time, never overwriting.  How the
 * file was prepared matters: into blocks reserved with fallocate, every
 * synced write also commits the journal entry that marks its extent
 * written; into blocks already written with zeros (tumblerd's segments) it
 * is the data alone.
 *
 * Writes on their way together share the disk's cache flushes: tumblerd
 * keeps two of its log's writes in flight, so the lock's delete is often
 * written while the previous holder's create still is.  That case is timed
 * too, two writes always on their way: from two threads, and by kernel AIO
 * as tumblerd's log writes. */
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tbbench.h"

#define BLOCK  4096
#define WRITES 2000

/* The file prepared with zeros written or blocks reserved, then synced,
 * through a plain descriptor: only the timed writes are synced ones. */
static int prepare(const char *path, int zeroed)
{
    static const char zeros[BLOCK];
    int fd, i, rv = 0;

    fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0600);
    if (fd < 0)
        return -1;
    if (zeroed) {
        for (i = 0; i < WRITES && rv == 0; i++)
            if (pwrite(fd, zeros, BLOCK, (off_t)i * BLOCK) != BLOCK)
                rv = -1;
    } else if (posix_fallocate(fd, 0, (off_t)BLOCK * WRITES) != 0) {
        rv = -1;
    }
    if (fsync(fd) != 0)
        rv = -1;
    /* As tumblerd leaves its segments: a block still cached would make
     * each first O_DIRECT write into it drop the page first. */
    (void)posix_fadvise(fd, 0, (off_t)BLOCK * WRITES, POSIX_FADV_DONTNEED);
    close(fd);
    return rv;
}

#define WRITERS 2

struct writer {
    pthread_t t;
    int fd;
    const void *buf;
    atomic_int *next; /* the next block to write, shared */
    struct bn_hist *h;
    int written;
};

static void *writer_main(void *arg)
{
    struct writer *wr = arg;
    int i;

    while ((i = atomic_fetch_add(wr->next, 1)) < WRITES) {
        uint64_t t = bn_now_ns();
        if (pwrite(wr->fd, wr->buf, BLOCK, (off_t)i * BLOCK) != BLOCK)
            break;
        bn_hist_add(wr->h, bn_now_ns() - t);
        wr->written++;
    }
    return NULL;
}

/* WRITERS writes kept in flight by this thread with kernel AIO, each
 * submitted as the last one's completion is seen (as tumblerd's log
 * does); -1 if this kernel has no AIO. */
static int aio_writes(int fd, const void *buf, struct bn_hist *h)
{
    aio_context_t ctx = 0;
    struct iocb cb[WRITERS], *p;
    struct io_event ev;
    uint64_t start[WRITERS];
    int i, next = 0, done = 0, inflight = 0, idle[WRITERS];

    if (syscall(__NR_io_setup, (long)WRITERS, &ctx) != 0)
        return -1;
    for (i = 0; i < WRITERS; i++)
        idle[i] = i; /* the slots not in flight: idle[inflight..] */
    for (;;) {
        while (inflight < WRITERS && next < WRITES) {
            i = idle[inflight];
            memset(&cb[i], 0, sizeof(cb[i]));
            cb[i].aio_data = (uint64_t)i;
            cb[i].aio_lio_opcode = IOCB_CMD_PWRITE;
            cb[i].aio_fildes = (uint32_t)fd;
            cb[i].aio_buf = (uint64_t)(uintptr_t)buf;
            cb[i].aio_nbytes = BLOCK;
            cb[i].aio_offset = (int64_t)next * BLOCK;
            cb[i].aio_rw_flags = RWF_DSYNC;
            p = &cb[i];
            start[i] = bn_now_ns();
            if (syscall(__NR_io_submit, ctx, 1L, &p) != 1)
                goto out;
            next++;
            inflight++;
        }
        if (inflight == 0 ||
            syscall(__NR_io_getevents, ctx, 1L, 1L, &ev, NULL) != 1)
            break;
        idle[--inflight] = (int)ev.data;
        if (ev.res != BLOCK)
            break;
        bn_hist_add(h, bn_now_ns() - start[ev.data]);
        done++;
    }
out:
    syscall(__NR_io_destroy, ctx);
    return done;
}

enum how { ONE, THREADS, AIO };

/* WRITES timed writes into a file prepared with zeros or with fallocate:
 * one at a time, or WRITERS at once from as many threads (each into its
 * own histogram of h[]) or with kernel AIO; -1 when the file cannot be
 * prepared, else how many were written.  *secs is the time they took. */
static int timed_writes(const char *dir, int zeroed, enum how how,
                        const void *buf, struct bn_hist *h, int *direct,
                        double *secs)
{
    char path[512];
    struct writer wr[WRITERS];
    atomic_int next = 0;
    uint64_t t0;
    int fd, i, n = 0, started = 0;

    snprintf(path, sizeof(path), "%s/tbbench-disk-probe.%ld", dir,
             (long)getpid());
    if (prepare(path, zeroed) != 0) {
        unlink(path);
        return -1;
    }
    fd = open(path, O_WRONLY | O_DSYNC | O_DIRECT);
    if (fd < 0 && errno == EINVAL) /* a filesystem without O_DIRECT */
        fd = open(path, O_WRONLY | O_DSYNC);
    if (fd < 0) {
        unlink(path);
        return -1;
    }
    *direct = (fcntl(fd, F_GETFL) & O_DIRECT) != 0;
    for (i = 0; i < WRITERS; i++)
        wr[i] =
            (struct writer){.fd = fd, .buf = buf, .next = &next, .h = &h[i]};
    t0 = bn_now_ns();
    if (how == AIO) {
        n = *direct ? aio_writes(fd, buf, h) : -1;
    } else {
        if (how == THREADS)
            while (started < WRITERS &&
                   pthread_create(&wr[started].t, NULL, writer_main,
                                  &wr[started]) == 0)
                started++;
        if (started == 0) /* one writer, or no thread could start: this one */
            writer_main(&wr[0]);
        for (i = 0; i < started; i++)
            pthread_join(wr[i].t, NULL);
        for (i = 0; i < WRITERS; i++)
            n += wr[i].written;
    }
    *secs = (double)(bn_now_ns() - t0) / 1e9;
    close(fd);
    unlink(path);
    return n;
}

int bn_run_disk(const struct bn_opts *o)
{
    const char *dir = o->dir ? o->dir : ".";
    /* [0]: one writer into zeros; [1]: into fallocated blocks; [2], [3]:
     * two threads into zeros, then [4] both; [5]: two by kernel AIO. */
    struct bn_hist *h = calloc(6, sizeof(*h));
    struct bn_result res;
    void *buf = NULL;
    int direct = 0, nz = -1, nr = -1, nt = -1, na = -1;
    double secs[4] = {0, 0, 0, 0};

    if (h != NULL && posix_memalign(&buf, BLOCK, BLOCK) == 0) {
        memset(buf, 0xab, BLOCK);
        nz = timed_writes(dir, 1, ONE, buf, &h[0], &direct, &secs[0]);
        nr = timed_writes(dir, 0, ONE, buf, &h[1], &direct, &secs[1]);
        nt = timed_writes(dir, 1, THREADS, buf, &h[2], &direct, &secs[2]);
        na = timed_writes(dir, 1, AIO, buf, &h[5], &direct, &secs[3]);
        bn_hist_merge(&h[4], &h[2]);
        bn_hist_merge(&h[4], &h[3]);
    }
    if (nz < 0 || nr < 0 || nt < 0) {
        fprintf(stderr, "tbbench: cannot prepare a file in %s\n", dir);
    } else {
        bn_say("disk: synced 4 KiB write (O_DSYNC%s) into zero-filled blocks "
               "p50 %.0f us p99 %.0f us, %.0f/s; into fallocated blocks p50 "
               "%.0f us p99 %.0f us",
               direct ? " | O_DIRECT" : "", bn_hist_q(&h[0], 0.5) / 1e3,
               bn_hist_q(&h[0], 0.99) / 1e3, nz / secs[0],
               bn_hist_q(&h[1], 0.5) / 1e3, bn_hist_q(&h[1], 0.99) / 1e3);
        bn_say("disk: two at once into zero-filled blocks, from two threads "
               "p50 %.0f us p99 %.0f us, %.0f/s; by kernel AIO p50 %.0f us "
               "p99 %.0f us, %.0f/s",
               bn_hist_q(&h[4], 0.5) / 1e3, bn_hist_q(&h[4], 0.99) / 1e3,
               nt / secs[2], bn_hist_q(&h[5], 0.5) / 1e3,
               bn_hist_q(&h[5], 0.99) / 1e3, na > 0 ? na / secs[3] : 0.0);
        bn_result_begin(&res, "disk");
        bn_result_add(&res, "direct", "%d", direct);
        bn_result_hist(&res, "sync_write", &h[0]);
        bn_result_add(&res, "sync_write_per_s", "%.0f", nz / secs[0]);
        bn_result_hist(&res, "sync_write_falloc", &h[1]);
        bn_result_hist(&res, "sync_write2", &h[4]);
        bn_result_add(&res, "sync_write2_per_s", "%.0f", nt / secs[2]);
        if (na > 0) {
            bn_result_hist(&res, "sync_write2_aio", &h[5]);
            bn_result_add(&res, "sync_write2_aio_per_s", "%.0f", na / secs[3]);
        }
        bn_result_end(&res);
    }
    free(buf);
    free(h);
    return nz == WRITES && nr == WRITES && nt == WRITES ? 0 : 1;
}
