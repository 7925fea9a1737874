/* The disk's own floor: how long one synced 4 KiB write takes here.
 *
 * Every lock handoff needs at least one durable write (the holder's delete)
 * before the next holder can be told, so this latency, plus the loopback
 * round trips, bounds lock throughput on one lock for any server.  The
 * write is what a write-ahead log does: O_DSYNC | O_DIRECT into a
 * preallocated file, one block at a time, never overwriting. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tbbench.h"

#define BLOCK  4096
#define WRITES 2000

int bn_run_disk(const struct bn_opts *o)
{
    char path[512];
    struct bn_hist *h = calloc(1, sizeof(*h));
    struct bn_result res;
    void *buf = NULL;
    int fd, i, direct = 1;

    if (h == NULL || posix_memalign(&buf, BLOCK, BLOCK) != 0) {
        free(h);
        return 1;
    }
    memset(buf, 0xab, BLOCK);
    snprintf(path, sizeof(path), "%s/tbbench-disk-probe.%ld",
             o->dir ? o->dir : ".", (long)getpid());
    fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_DSYNC | O_DIRECT, 0600);
    if (fd < 0 && errno == EINVAL) { /* a filesystem without O_DIRECT */
        direct = 0;
        fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_DSYNC, 0600);
    }
    if (fd < 0 || posix_fallocate(fd, 0, (off_t)BLOCK * WRITES) != 0 ||
        fsync(fd) != 0) {
        fprintf(stderr, "tbbench: cannot prepare %s\n", path);
        if (fd >= 0)
            close(fd);
        unlink(path);
        free(buf);
        free(h);
        return 1;
    }
    for (i = 0; i < WRITES; i++) {
        uint64_t t = bn_now_ns();
        if (pwrite(fd, buf, BLOCK, (off_t)i * BLOCK) != BLOCK)
            break;
        bn_hist_add(h, bn_now_ns() - t);
    }
    close(fd);
    unlink(path);
    bn_say("disk: synced 4 KiB write (O_DSYNC%s) p50 %.0f us p99 %.0f us",
           direct ? " | O_DIRECT" : "", bn_hist_q(h, 0.5) / 1e3,
           bn_hist_q(h, 0.99) / 1e3);
    bn_result_begin(&res, "disk");
    bn_result_add(&res, "direct", "%d", direct);
    bn_result_hist(&res, "sync_write", h);
    bn_result_end(&res);
    free(buf);
    free(h);
    return i == WRITES ? 0 : 1;
}
