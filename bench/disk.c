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
 * is the data alone. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
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

/* WRITES timed writes into a file prepared with zeros or with fallocate;
 * -1 when the file cannot be prepared, else how many were written. */
static int timed_writes(const char *dir, int zeroed, const void *buf,
                        struct bn_hist *h, int *direct)
{
    char path[512];
    int fd, i;

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
    for (i = 0; i < WRITES; i++) {
        uint64_t t = bn_now_ns();
        if (pwrite(fd, buf, BLOCK, (off_t)i * BLOCK) != BLOCK)
            break;
        bn_hist_add(h, bn_now_ns() - t);
    }
    close(fd);
    unlink(path);
    return i;
}

int bn_run_disk(const struct bn_opts *o)
{
    const char *dir = o->dir ? o->dir : ".";
    struct bn_hist *zeroed = calloc(1, sizeof(*zeroed));
    struct bn_hist *reserved = calloc(1, sizeof(*reserved));
    struct bn_result res;
    void *buf = NULL;
    int direct = 0, nz = -1, nr = -1;

    if (zeroed != NULL && reserved != NULL &&
        posix_memalign(&buf, BLOCK, BLOCK) == 0) {
        memset(buf, 0xab, BLOCK);
        nz = timed_writes(dir, 1, buf, zeroed, &direct);
        nr = timed_writes(dir, 0, buf, reserved, &direct);
    }
    if (nz < 0 || nr < 0) {
        fprintf(stderr, "tbbench: cannot prepare a file in %s\n", dir);
    } else {
        bn_say("disk: synced 4 KiB write (O_DSYNC%s) into zero-filled blocks "
               "p50 %.0f us p99 %.0f us; into fallocated blocks p50 %.0f us "
               "p99 %.0f us",
               direct ? " | O_DIRECT" : "", bn_hist_q(zeroed, 0.5) / 1e3,
               bn_hist_q(zeroed, 0.99) / 1e3, bn_hist_q(reserved, 0.5) / 1e3,
               bn_hist_q(reserved, 0.99) / 1e3);
        bn_result_begin(&res, "disk");
        bn_result_add(&res, "direct", "%d", direct);
        bn_result_hist(&res, "sync_write", zeroed);
        bn_result_hist(&res, "sync_write_falloc", reserved);
        bn_result_end(&res);
    }
    free(buf);
    free(zeroed);
    free(reserved);
    return nz == WRITES && nr == WRITES ? 0 : 1;
}
