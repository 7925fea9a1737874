/* The synchronous forms: an asynchronous call plus a wait here.
 *
 * Which way to wait depends on how the client is driven, which the public
 * API reveals through tb_client_interest: it refuses (TB_EINVAL) when the
 * I/O thread drives the handle, and then the completion arrives on that
 * thread and we sleep on a condition variable.  Otherwise the caller is on
 * the loop's thread and nothing else will drive the handle while we block,
 * so we drive it ourselves with poll() and tb_client_process, as the
 * client's own synchronous calls do.  (On a handle nobody drives yet, the
 * probe makes it loop-driven, as any synchronous client call would.)
 *
 * A deadline does not end the wait by itself: it starts the give-up
 * (remove the node, ...) and the wait goes on until the callback that the
 * give-up produces, so the caller never returns with work in flight. */
#include <poll.h>
#include <time.h>

#include "recipes/rcp.h"

void rcp_wait_init(struct rcp_wait *w)
{
    pthread_condattr_t a;

    pthread_mutex_init(&w->mu, NULL);
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&w->cv, &a);
    pthread_condattr_destroy(&a);
    w->done = 0;
    w->rc = 0;
    w->token = 0;
    w->ptr = NULL;
}

void rcp_wait_destroy(struct rcp_wait *w)
{
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
}

void rcp_wait_done(struct rcp_wait *w, int rc, int64_t token, void *ptr)
{
    pthread_mutex_lock(&w->mu);
    w->rc = rc;
    w->token = token;
    w->ptr = ptr;
    w->done = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

void rcp_wait_acquire_cb(int rc, int64_t token, void *data)
{
    rcp_wait_done(data, rc, token, NULL);
}

void rcp_wait_done_cb(int rc, void *data)
{
    rcp_wait_done(data, rc, 0, NULL);
}

static int thread_driven(struct tb_client *c)
{
    struct tb_interest in;

    return tb_client_interest(c, &in) == TB_EINVAL;
}

int rcp_sync_check(struct tb_client *c)
{
    /* Whether or not a recipe's callback ran there before: a callback of
     * the application's own (tb_exists', a state callback) runs there too. */
    if (thread_driven(c) && tb__on_io_thread(c))
        return TB_EINVAL; /* we would wait for ourselves */
    return 0;
}

int rcp_async_timeout_check(struct tb_client *c, int timeout_ms)
{
    if (timeout_ms > 0 && !thread_driven(c))
        return TB_EINVAL;
    return 0;
}

static int is_done(struct rcp_wait *w)
{
    int d;

    pthread_mutex_lock(&w->mu);
    d = w->done;
    pthread_mutex_unlock(&w->mu);
    return d;
}

static void wait_thread(struct rcp_wait *w, int64_t deadline,
                        void (*give_up)(void *), void *arg)
{
    pthread_mutex_lock(&w->mu);
    while (!w->done) {
        if (deadline < 0) {
            pthread_cond_wait(&w->cv, &w->mu);
        } else if (rcp_now_ms() >= deadline) {
            deadline = -1;
            pthread_mutex_unlock(&w->mu);
            give_up(arg);
            pthread_mutex_lock(&w->mu);
        } else {
            struct timespec ts;
            ts.tv_sec = (time_t)(deadline / 1000);
            ts.tv_nsec = (long)(deadline % 1000) * 1000000;
            pthread_cond_timedwait(&w->cv, &w->mu, &ts);
        }
    }
    pthread_mutex_unlock(&w->mu);
}

static int to_poll(int ev)
{
    return (ev & TB_EV_READ ? POLLIN : 0) | (ev & TB_EV_WRITE ? POLLOUT : 0);
}

static int from_poll(short re)
{
    return ((re & (POLLIN | POLLHUP | POLLERR)) ? TB_EV_READ : 0) |
           ((re & (POLLOUT | POLLERR)) ? TB_EV_WRITE : 0);
}

static void wait_loop(struct tb_client *c, struct rcp_wait *w, int64_t deadline,
                      void (*give_up)(void *), void *arg)
{
    while (!is_done(w)) {
        struct tb_interest in;
        struct pollfd p;
        int timeout, ev = 0;

        if (deadline >= 0 && rcp_now_ms() >= deadline) {
            deadline = -1;
            give_up(arg);
            continue;
        }
        if (tb_client_interest(c, &in) != 0)
            break;
        timeout =
            in.timeout_ms < 0 || in.timeout_ms > 1000 ? 1000 : in.timeout_ms;
        if (deadline >= 0 && deadline - rcp_now_ms() < timeout)
            timeout = (int)(deadline - rcp_now_ms());
        if (timeout < 0)
            timeout = 0;
        p.fd = in.fd;
        p.events = (short)to_poll(in.events);
        p.revents = 0;
        if (poll(&p, in.fd >= 0 ? 1 : 0, timeout) > 0)
            ev = from_poll(p.revents);
        if (tb_client_process(c, ev) == TB_ECLOSING)
            break; /* freed from a callback; everything has completed */
    }
}

int rcp_wait(struct tb_client *c, struct rcp_wait *w, int64_t deadline,
             void (*give_up)(void *arg), void *arg)
{
    /* rcp_sync_check ran before the call was started: the wait itself
     * cannot refuse, or the callback would find its waiter gone. */
    if (thread_driven(c))
        wait_thread(w, deadline, give_up, arg);
    else
        wait_loop(c, w, deadline, give_up, arg);
    return 0;
}

int rcp_sync_run(struct tb_client *c, struct rcp_wait *w, int timeout_ms,
                 int (*start)(void *arg, int timeout_ms, struct rcp_wait *w),
                 void (*give_up)(void *arg), void *arg)
{
    int rv;

    if ((rv = rcp_sync_check(c)) != 0)
        return rv;
    rcp_wait_init(w);
    /* The deadline is kept here, not by the timer thread (loop mode has
     * none); 0 is the call's own single look. */
    rv = start(arg, timeout_ms == 0 ? 0 : -1, w);
    if (rv == 0) {
        rcp_wait(c, w, timeout_ms > 0 ? rcp_now_ms() + timeout_ms : -1, give_up,
                 arg);
        rv = w->rc;
    }
    rcp_wait_destroy(w);
    return rv;
}
