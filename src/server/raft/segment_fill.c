/* posix_fallocate(3), taken over for raft_uv by defining it in the server
 * (as sys_hooks.c does io_destroy): raft_uv allocates each new segment so,
 * past the end of the file, on its threadpool.  Allocated but never written
 * blocks are "unwritten" to ext4 and xfs: the first synced write into each
 * of them also commits the journal, 280 us instead of 190 us for a 4 KiB
 * O_DSYNC write here.  The range is written with zeros and synced instead,
 * so every log write is a plain overwrite.  Disk full is still ENOSPC,
 * from the write.
 *
 * raft_uv prepares its first segment only when the first entry is
 * appended, so the first request after a start waited for 8 MiB of zeros
 * to reach the disk: a third of the start-up.  A thread fills a spare,
 * "spare-segment" in the data directory, from the moment the log is opened,
 * alongside raft's own start (a whole one left by an earlier start is used
 * as it is), and the first allocation of a whole segment in that
 * directory takes it over: the spare is renamed over the new, empty
 * segment and dup3(2) puts it behind raft's descriptor.  raft then syncs
 * the directory as it does for every segment it creates; if a crash comes
 * first, the segment is an unwritten open segment either way, which raft
 * removes when it loads the log. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <uv.h>

#include "server/raft/internal.h"

/* One page of zeros repeated by pwritev: even zero-page mappings of a
 * larger buffer count in the process's RSS. */
#define ZEROS     4096
#define ZERO_IOVS 256 /* 1 MiB a call */

typedef int (*fallocate_fn)(int, off_t, off_t);

static pthread_once_t resolved = PTHREAD_ONCE_INIT;
static fallocate_fn real_fallocate;
static const char zeros[ZEROS];

enum { SPARE_NONE, SPARE_FILLING, SPARE_READY };

static struct {
    pthread_mutex_t lock;
    pthread_cond_t done;
    int state;
    char dir[PATH_MAX];
    char path[PATH_MAX + 16];
} spare = {.lock = PTHREAD_MUTEX_INITIALIZER, .done = PTHREAD_COND_INITIALIZER};

/* A child of fork(2) has no filling thread: the replog tests open logs in
 * forked children, and the server forks its snapshot writers. */
static void before_fork(void)
{
    pthread_mutex_lock(&spare.lock);
}

static void after_fork_parent(void)
{
    pthread_mutex_unlock(&spare.lock);
}

static void after_fork_child(void)
{
    if (spare.state == SPARE_FILLING)
        spare.state = SPARE_NONE;
    pthread_cond_init(&spare.done, NULL);
    pthread_mutex_unlock(&spare.lock);
}

__attribute__((constructor)) static void segment_fill_init(void)
{
    pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}

static void resolve(void)
{
    real_fallocate = (fallocate_fn)dlsym(RTLD_NEXT, "posix_fallocate");
}

/* Zeros over [off, off + len), synced; 0 or an errno value, and then the
 * file is cut back to `size`. */
static int zero_fill(int fd, off_t size, off_t off, off_t len)
{
    struct iovec iov[ZERO_IOVS];
    off_t end = off + len, pos = off, left;
    ssize_t n;
    int i, err;

    while (pos < end) {
        for (i = 0, left = end - pos; i < ZERO_IOVS && left > 0; i++) {
            iov[i].iov_base = (void *)zeros;
            iov[i].iov_len = left < ZEROS ? (size_t)left : ZEROS;
            left -= (off_t)iov[i].iov_len;
        }
        n = pwritev(fd, iov, i, pos);
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0)
            errno = EIO; /* no progress and no error: not worth a retry */
        if (n <= 0)
            goto fail;
        pos += n;
    }
    if (fdatasync(fd) == 0) {
        /* raft_uv writes with O_DIRECT and RWF_NOWAIT: a block still in
         * the page cache would send each first write into it to the
         * threadpool (EAGAIN).  The pages are clean now. */
        (void)posix_fadvise(fd, off, len, POSIX_FADV_DONTNEED);
        return 0;
    }
fail:
    err = errno;
    if (ftruncate(fd, size) != 0) {
        /* The file keeps some zeros past its old end; the error stands. */
    }
    return err;
}

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#endif

#ifndef UNDER_TSAN
static void nothing(uv_work_t *w)
{
    (void)w;
}
#endif

/* libuv starts its threadpool, shared by every loop, at the first work
 * queued anywhere and waits for each of its threads to run: ~2 ms here,
 * which the first request would wait for behind raft_uv's first segment.
 * Not under ThreadSanitizer: libuv closes a loop's descriptors with a raw
 * system call it does not see, so the main thread's next open, given the
 * same number, would be reported as a race with this loop's epoll_create. */
static void threadpool_start(void)
{
#ifndef UNDER_TSAN
    uv_loop_t loop;
    uv_work_t w;

    if (uv_loop_init(&loop) != 0)
        return;
    if (uv_queue_work(&loop, &w, nothing, NULL) == 0)
        uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
#endif
}

/* A segment's size, every block of it allocated. */
static int whole(const struct stat *st)
{
    return st->st_size == REPLOG_SEGMENT_BYTES &&
           (off_t)st->st_blocks * 512 >= REPLOG_SEGMENT_BYTES;
}

static void *spare_fill(void *arg)
{
    char tmp[sizeof spare.path + 4];
    struct stat st;
    int fd, err = 0;

    (void)arg;
    threadpool_start();
    /* A spare left by an earlier run was renamed into place only once it
     * was whole and synced. */
    if (stat(spare.path, &st) != 0 || !whole(&st)) {
        snprintf(tmp, sizeof tmp, "%s.tmp", spare.path);
        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        err = fd < 0 ? errno : zero_fill(fd, 0, 0, REPLOG_SEGMENT_BYTES);
        if (fd >= 0)
            close(fd);
        if (err == 0 && rename(tmp, spare.path) != 0)
            err = errno;
        if (err != 0)
            unlink(tmp);
    }
    pthread_mutex_lock(&spare.lock);
    spare.state = err == 0 ? SPARE_READY : SPARE_NONE;
    pthread_cond_broadcast(&spare.done);
    pthread_mutex_unlock(&spare.lock);
    return NULL;
}

void replog__spare_segment(const char *dir)
{
    char real[PATH_MAX];
    pthread_attr_t attr;
    pthread_t t;

    if (realpath(dir, real) == NULL)
        return;
    pthread_mutex_lock(&spare.lock);
    /* One spare at a time: one left ready for another directory is
     * forgotten (its file stays there for that directory's next start). */
    if (spare.state == SPARE_FILLING ||
        (spare.state == SPARE_READY && strcmp(spare.dir, real) == 0) ||
        pthread_attr_init(&attr) != 0) {
        pthread_mutex_unlock(&spare.lock);
        return;
    }
    memcpy(spare.dir, real, sizeof real);
    snprintf(spare.path, sizeof spare.path, "%s/spare-segment", spare.dir);
    spare.state = SPARE_NONE;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    if (pthread_create(&t, &attr, spare_fill, NULL) == 0)
        spare.state = SPARE_FILLING;
    pthread_attr_destroy(&attr);
    pthread_mutex_unlock(&spare.lock);
}

/* Puts the spare behind `fd`, a new and empty file in the spare's
 * directory: 0, an errno value, or -1 when there is no spare to take. */
static int spare_take(int fd, int fl, const struct stat *st)
{
    char self[32], path[PATH_MAX];
    const char *slash;
    struct stat named;
    ssize_t n;
    int sfd, rv = -1;

    pthread_mutex_lock(&spare.lock);
    while (spare.state == SPARE_FILLING)
        pthread_cond_wait(&spare.done, &spare.lock);
    if (spare.state != SPARE_READY)
        goto out;
    snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
    n = readlink(self, path, sizeof path - 1);
    if (n <= 0 || n == (ssize_t)sizeof path - 1)
        goto out;
    path[n] = '\0';
    slash = strrchr(path, '/');
    if (slash == NULL || (size_t)(slash - path) != strlen(spare.dir) ||
        strncmp(path, spare.dir, (size_t)(slash - path)) != 0 ||
        stat(path, &named) != 0 || named.st_ino != st->st_ino ||
        named.st_dev != st->st_dev)
        goto out;
    spare.state = SPARE_NONE;
    sfd = open(spare.path, (fl & (O_ACCMODE | O_DSYNC | O_SYNC)) | O_CLOEXEC);
    if (sfd < 0)
        goto out;
    /* Whole, as it was when renamed into place (another process on the
     * same directory could have been filling it too). */
    if (fstat(sfd, &named) != 0 || !whole(&named) ||
        rename(spare.path, path) != 0) {
        close(sfd);
        goto out;
    }
    /* From here raft's file is gone: only an error may tell raft, which
     * then drops the segment it was preparing. */
    rv = dup3(sfd, fd, O_CLOEXEC) < 0 ? errno : 0;
    close(sfd);
out:
    pthread_mutex_unlock(&spare.lock);
    return rv;
}

int posix_fallocate(int fd, off_t off, off_t len)
{
    struct stat st;
    int fl, rv;

    pthread_once(&resolved, resolve);
    if (off < 0 || len <= 0 || off > INT64_MAX - len || fstat(fd, &st) != 0 ||
        !S_ISREG(st.st_mode) || st.st_size > off)
        return real_fallocate(fd, off, len);
    fl = fcntl(fd, F_GETFL);
    if (fl < 0 || (fl & (O_DIRECT | O_APPEND)) != 0 ||
        (fl & O_ACCMODE) == O_RDONLY)
        return real_fallocate(fd, off, len);
    if (off == 0 && st.st_size == 0 && len == REPLOG_SEGMENT_BYTES &&
        (rv = spare_take(fd, fl, &st)) >= 0)
        return rv;
    return zero_fill(fd, st.st_size, off, len);
}
