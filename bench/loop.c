/* The benchmark's event loop: level-triggered epoll, a binary heap of
 * one-shot timers, and a flush list run once per turn.
 *
 * Why not libuv: the generator needs nothing but readiness, timers and a
 * "after this batch" hook, and owning the loop keeps the per-event cost to
 * one epoll_wait per batch and one write per connection per turn. */
#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "tbbench.h"

#define MAX_EVENTS 512

struct bn_loop {
    int epfd;
    struct bn_timer **heap;
    long heap_len, heap_cap;
    struct tb_queue deferred;
    void (*flush)(struct tb_queue *link);
    int no_pwait2; /* kernel older than 5.11 */
};

struct bn_loop *bn_loop_new(void)
{
    struct bn_loop *l = calloc(1, sizeof(*l));

    if (l == NULL)
        return NULL;
    /* timers fire when due, not up to 50 us later */
    (void)prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    l->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (l->epfd < 0) {
        free(l);
        return NULL;
    }
    tb_queue_init(&l->deferred);
    return l;
}

void bn_loop_free(struct bn_loop *l)
{
    if (l == NULL)
        return;
    close(l->epfd);
    free(l->heap);
    free(l);
}

static int io_ctl(struct bn_loop *l, int op, struct bn_io *io, uint32_t ev)
{
    struct epoll_event e = {.events = ev, .data.ptr = io};

    if (epoll_ctl(l->epfd, op, io->fd, &e) != 0)
        return -errno;
    io->events = ev;
    return 0;
}

int bn_io_add(struct bn_loop *l, struct bn_io *io, uint32_t events)
{
    return io_ctl(l, EPOLL_CTL_ADD, io, events);
}

int bn_io_mod(struct bn_loop *l, struct bn_io *io, uint32_t events)
{
    if (io->events == events)
        return 0;
    return io_ctl(l, EPOLL_CTL_MOD, io, events);
}

void bn_io_del(struct bn_loop *l, struct bn_io *io)
{
    if (io->fd >= 0)
        (void)epoll_ctl(l->epfd, EPOLL_CTL_DEL, io->fd, NULL);
    io->events = 0;
}

/* ---- timer heap: heap[0] is the earliest ---- */

static void heap_set(struct bn_loop *l, long i, struct bn_timer *t)
{
    l->heap[i] = t;
    t->heap_idx = i;
}

static void sift_up(struct bn_loop *l, long i)
{
    struct bn_timer *t = l->heap[i];

    while (i > 0) {
        long p = (i - 1) / 2;
        if (l->heap[p]->when <= t->when)
            break;
        heap_set(l, i, l->heap[p]);
        i = p;
    }
    heap_set(l, i, t);
}

static void sift_down(struct bn_loop *l, long i)
{
    struct bn_timer *t = l->heap[i];

    for (;;) {
        long c = 2 * i + 1;
        if (c >= l->heap_len)
            break;
        if (c + 1 < l->heap_len && l->heap[c + 1]->when < l->heap[c]->when)
            c++;
        if (t->when <= l->heap[c]->when)
            break;
        heap_set(l, i, l->heap[c]);
        i = c;
    }
    heap_set(l, i, t);
}

void bn_timer_init(struct bn_timer *t, void (*cb)(struct bn_timer *),
                   void *data)
{
    t->when = 0;
    t->heap_idx = -1;
    t->cb = cb;
    t->data = data;
}

void bn_timer_stop(struct bn_loop *l, struct bn_timer *t)
{
    long i = t->heap_idx;
    struct bn_timer *last;

    if (i < 0)
        return;
    t->heap_idx = -1;
    last = l->heap[--l->heap_len];
    if (last == t)
        return;
    heap_set(l, i, last);
    sift_up(l, i);
    sift_down(l, last->heap_idx);
}

void bn_timer_start(struct bn_loop *l, struct bn_timer *t, uint64_t delay_ns)
{
    bn_timer_stop(l, t);
    if (l->heap_len == l->heap_cap) {
        long cap = l->heap_cap ? l->heap_cap * 2 : 256;
        struct bn_timer **h = realloc(l->heap, (size_t)cap * sizeof(*h));
        if (h == NULL)
            abort(); /* a benchmark cannot go on without its timers */
        l->heap = h;
        l->heap_cap = cap;
    }
    t->when = bn_now_ns() + delay_ns;
    heap_set(l, l->heap_len++, t);
    sift_up(l, t->heap_idx);
}

static void run_timers(struct bn_loop *l, uint64_t now)
{
    while (l->heap_len > 0 && l->heap[0]->when <= now) {
        struct bn_timer *t = l->heap[0];
        bn_timer_stop(l, t);
        t->cb(t);
    }
}

void bn_loop_defer(struct bn_loop *l, struct tb_queue *link)
{
    tb_queue_insert_tail(&l->deferred, link);
}

void bn_loop_set_flush(struct bn_loop *l, void (*fn)(struct tb_queue *))
{
    l->flush = fn;
}

static void run_deferred(struct bn_loop *l)
{
    while (!tb_queue_empty(&l->deferred)) {
        struct tb_queue *q = tb_queue_head(&l->deferred);
        tb_queue_remove(q);
        l->flush(q);
    }
}

/* How long epoll may sleep, in ns.  Nanosecond waits (epoll_pwait2) keep
 * a 500 ms hold from turning into 501 ms, which the articles' test would
 * otherwise count as server overhead. */
static uint64_t wait_ns(struct bn_loop *l, uint64_t now, uint64_t deadline)
{
    uint64_t until = deadline;

    if (!tb_queue_empty(&l->deferred))
        return 0;
    if (l->heap_len > 0 && (until == 0 || l->heap[0]->when < until))
        until = l->heap[0]->when;
    if (until == 0)
        return 1000000000u;
    return until <= now ? 0 : until - now;
}

static int poll_events(struct bn_loop *l, struct epoll_event *ev, int max,
                       uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    int n;

    if (!l->no_pwait2) {
        n = epoll_pwait2(l->epfd, ev, max, &ts, NULL);
        if (n >= 0 || errno != ENOSYS)
            return n;
        l->no_pwait2 = 1;
    }
    /* round up so a timer never spins the loop at 0 ms */
    return epoll_wait(l->epfd, ev, max, (int)((ns + 999999) / 1000000));
}

int bn_loop_run(struct bn_loop *l, const int *done, uint64_t deadline_ns)
{
    struct epoll_event ev[MAX_EVENTS];

    while (!*done) {
        uint64_t now = bn_now_ns();
        int n, i;

        if (deadline_ns != 0 && now >= deadline_ns)
            return -1;
        n = poll_events(l, ev, MAX_EVENTS, wait_ns(l, now, deadline_ns));
        if (n < 0 && errno != EINTR)
            abort();
        for (i = 0; i < n; i++) {
            struct bn_io *io = ev[i].data.ptr;
            io->cb(io, ev[i].events);
        }
        run_timers(l, bn_now_ns());
        run_deferred(l);
    }
    return 0;
}
