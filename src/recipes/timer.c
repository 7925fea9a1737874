/* Deadlines of asynchronous acquisitions.
 *
 * The client API has no timers, so the recipes keep one thread for the
 * whole process, started on first use.  It only ever calls the timer's
 * function, which gives an acquisition up through ordinary client calls;
 * the user's callback then fires from the reply of one of those calls, on
 * the client's callback thread, like every other recipe callback.  Timers
 * sit in a list sorted by deadline (a handful are armed at once).
 *
 * After fork() the child has no timer thread; an atfork handler resets
 * the state so that the child starts its own on first use. */
#include <time.h>

#include "recipes/rcp.h"

static pthread_mutex_t tm_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t tm_cv;
static struct tb_queue timers = {&timers, &timers};
static int started;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Registered by init_once, so the condition variable exists already. */
static void child_after_fork(void)
{
    pthread_condattr_t a;

    pthread_mutex_init(&tm_mu, NULL);
    tb_queue_init(&timers);
    started = 0;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&tm_cv, &a);
    pthread_condattr_destroy(&a);
}

static void init_once(void)
{
    pthread_condattr_t a;

    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&tm_cv, &a);
    pthread_condattr_destroy(&a);
    pthread_atfork(NULL, NULL, child_after_fork);
}

static void *timer_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&tm_mu);
    for (;;) {
        struct rcp_timer *t;
        unsigned tag;
        int64_t now = rcp_now_ms();
        if (tb_queue_empty(&timers)) {
            pthread_cond_wait(&tm_cv, &tm_mu);
            continue;
        }
        t = TB_CONTAINER_OF(tb_queue_head(&timers), struct rcp_timer, q);
        if (t->deadline > now) {
            struct timespec ts;
            ts.tv_sec = (time_t)(t->deadline / 1000);
            ts.tv_nsec = (long)(t->deadline % 1000) * 1000000;
            pthread_cond_timedwait(&tm_cv, &tm_mu, &ts);
            continue;
        }
        tb_queue_remove(&t->q);
        t->armed = 0;
        tag = t->tag;
        pthread_mutex_unlock(&tm_mu);
        t->fn(t, tag); /* owns the reference the arming took */
        pthread_mutex_lock(&tm_mu);
    }
    return NULL;
}

int rcp_timer_arm(struct rcp_timer *t, int64_t deadline, unsigned tag)
{
    struct tb_queue *q;

    pthread_once(&once, init_once);
    pthread_mutex_lock(&tm_mu);
    if (!started) {
        pthread_t th;
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&th, &a, timer_main, NULL) != 0) {
            pthread_attr_destroy(&a);
            pthread_mutex_unlock(&tm_mu);
            return TB_ESYSTEM;
        }
        pthread_attr_destroy(&a);
        started = 1;
    }
    t->deadline = deadline;
    t->tag = tag;
    t->armed = 1;
    for (q = timers.next; q != &timers; q = q->next) {
        struct rcp_timer *o = TB_CONTAINER_OF(q, struct rcp_timer, q);
        if (o->deadline > deadline)
            break;
    }
    tb_queue_insert_tail(q, &t->q); /* before q */
    pthread_cond_signal(&tm_cv);
    pthread_mutex_unlock(&tm_mu);
    return 0;
}

int rcp_timer_disarm(struct rcp_timer *t)
{
    int was;

    pthread_once(&once, init_once);
    pthread_mutex_lock(&tm_mu);
    was = t->armed;
    if (was) {
        tb_queue_remove(&t->q);
        t->armed = 0;
    }
    pthread_mutex_unlock(&tm_mu);
    return was;
}
