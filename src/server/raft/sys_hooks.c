/* Two of raft_uv's calls into libc are taken over here, by defining them
 * in the server: the dynamic linker gives libraft these definitions instead
 * of libc's (libraft 0.15 has no option for either behaviour).
 *
 * io_destroy(2), through syscall(2).  raft_uv writes the log with kernel
 * AIO and destroys its AIO context on the loop thread: once in its I/O
 * probe at start-up, and each time an open segment is finalized (every
 * 8 MiB of log).  io_destroy waits for an RCU grace period before it
 * returns, 28-46 ms here, so the whole server stood still for that long at
 * every segment and start-up took twice as long as its work.  raft_uv calls
 * it only after the context's last write has completed, so nothing waits
 * on the destruction itself: it returns 0 at once and a reaper thread does
 * the waiting.  Every other system call goes to libc.
 *
 * posix_fallocate(3), for a range past the end of the file (raft_uv
 * allocates each new segment so, on its threadpool).  Allocated but never
 * written blocks are "unwritten" to ext4 and xfs: the first synced write
 * into each of them also commits the journal, 280 us instead of 190 us
 * for a 4 KiB O_DSYNC write here.  The range is written with zeros and
 * synced instead, so every log write is a plain overwrite.  Disk full is
 * still ENOSPC, from the write. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "server/raft/internal.h"

#define QUEUE 64 /* contexts waiting; beyond that the caller waits */

/* One page of zeros repeated by pwritev: even zero-page mappings of a
 * larger buffer count in the process's RSS. */
#define ZEROS     4096
#define ZERO_IOVS 256 /* 1 MiB a call */

typedef long (*syscall_fn)(long, ...);
typedef int (*fallocate_fn)(int, off_t, off_t);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static unsigned long queue[QUEUE];
static unsigned head, queued;
static int reaper_state; /* 0 none, 1 running, -1 could not start */
static atomic_ulong reaped;
static pthread_once_t resolved = PTHREAD_ONCE_INIT;
static syscall_fn real_syscall;
static fallocate_fn real_fallocate;
static const char zeros[ZEROS];

static void resolve(void)
{
    real_syscall = (syscall_fn)dlsym(RTLD_NEXT, "syscall");
    real_fallocate = (fallocate_fn)dlsym(RTLD_NEXT, "posix_fallocate");
}

static syscall_fn libc_syscall(void)
{
    pthread_once(&resolved, resolve);
    return real_syscall;
}

static void *reaper(void *arg)
{
    unsigned long ctx;

    (void)arg;
    pthread_mutex_lock(&lock);
    for (;;) {
        while (queued == 0)
            pthread_cond_wait(&wake, &lock);
        ctx = queue[head];
        head = (head + 1) % QUEUE;
        queued--;
        pthread_mutex_unlock(&lock);
        libc_syscall()(SYS_io_destroy, ctx);
        atomic_fetch_add(&reaped, 1);
        pthread_mutex_lock(&lock);
    }
    return NULL;
}

/* 0 if `ctx` is now the reaper's; the lock is held. */
static int hand_over(unsigned long ctx)
{
    pthread_t t;
    pthread_attr_t attr;

    if (reaper_state == 0) {
        reaper_state = -1;
        if (pthread_attr_init(&attr) == 0) {
            pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
            pthread_attr_setstacksize(&attr, 64 * 1024);
            if (pthread_create(&t, &attr, reaper, NULL) == 0)
                reaper_state = 1;
            pthread_attr_destroy(&attr);
        }
    }
    if (reaper_state != 1 || queued == QUEUE)
        return -1;
    queue[(head + queued) % QUEUE] = ctx;
    queued++;
    pthread_cond_signal(&wake);
    return 0;
}

long syscall(long number, ...)
{
    long a[6];
    va_list ap;
    int taken;

    va_start(ap, number);
    for (int i = 0; i < 6; i++)
        a[i] = va_arg(ap, long);
    va_end(ap);
    if (number == SYS_io_destroy && a[0] != 0) {
        pthread_mutex_lock(&lock);
        taken = hand_over((unsigned long)a[0]);
        pthread_mutex_unlock(&lock);
        if (taken == 0)
            return 0;
    }
    return libc_syscall()(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}

uint64_t replog__aio_reaped(void)
{
    return atomic_load(&reaped);
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
    if (fdatasync(fd) == 0)
        return 0;
fail:
    err = errno;
    if (ftruncate(fd, size) != 0) {
        /* The file keeps some zeros past its old end; the error stands. */
    }
    return err;
}

int posix_fallocate(int fd, off_t off, off_t len)
{
    struct stat st;
    int fl;

    pthread_once(&resolved, resolve);
    if (off < 0 || len <= 0 || off > INT64_MAX - len || fstat(fd, &st) != 0 ||
        !S_ISREG(st.st_mode) || st.st_size > off)
        return real_fallocate(fd, off, len);
    fl = fcntl(fd, F_GETFL);
    if (fl < 0 || (fl & (O_DIRECT | O_APPEND)) != 0 ||
        (fl & O_ACCMODE) == O_RDONLY)
        return real_fallocate(fd, off, len);
    return zero_fill(fd, st.st_size, off, len);
}
