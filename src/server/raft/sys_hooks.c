/* One of raft_uv's calls into libc is taken over here, by defining it in
 * the server: the dynamic linker gives libraft this definition instead of
 * libc's (libraft 0.15 has no option for the behaviour).
 *
 * io_destroy(2), through syscall(2).  raft_uv destroys the AIO context of
 * its I/O probe on the loop thread at start-up (wal.c its own at close).
 * io_destroy waits for an RCU grace period before it returns, 28-46 ms
 * here, so start-up took twice as long as its work.  The context's writes
 * have all completed by then, so nothing waits on the destruction itself:
 * it returns 0 at once and a reaper thread does the waiting.  Every other
 * system call goes to libc. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "server/raft/internal.h"

#define QUEUE 64 /* contexts waiting; beyond that the caller waits */

typedef long (*syscall_fn)(long, ...);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static unsigned long queue[QUEUE];
static unsigned head, queued;
static int reaper_state; /* 0 none, 1 running, -1 could not start */
static atomic_ulong reaped;
static pthread_once_t resolved = PTHREAD_ONCE_INIT;
static syscall_fn real_syscall;

/* A child of fork(2) has no reaper, and none of its parent's AIO
 * contexts: the replog tests open logs in forked children. */
static void before_fork(void)
{
    pthread_mutex_lock(&lock);
}

static void after_fork_parent(void)
{
    pthread_mutex_unlock(&lock);
}

static void after_fork_child(void)
{
    reaper_state = 0;
    queued = 0;
    pthread_cond_init(&wake, NULL);
    pthread_mutex_unlock(&lock);
}

__attribute__((constructor)) static void sys_hooks_init(void)
{
    pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}

static void resolve(void)
{
    real_syscall = (syscall_fn)dlsym(RTLD_NEXT, "syscall");
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
