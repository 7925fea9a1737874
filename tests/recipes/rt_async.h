/* Waiting in a test for one asynchronous recipe callback (header-only).
 * The callbacks run on the client's I/O thread; the test thread waits on
 * a condition variable with a bound. */
#ifndef TB_RT_ASYNC_H
#define TB_RT_ASYNC_H

#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "rt.h"

struct rt_acq {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done, calls, rc;
    int64_t token;
    void *ptr;
};
#define rt_done rt_acq

static inline void rt_acq_init(struct rt_acq *a)
{
    pthread_mutex_init(&a->mu, NULL);
    pthread_cond_init(&a->cv, NULL);
    a->done = a->calls = a->rc = 0;
    a->token = 0;
    a->ptr = NULL;
}
#define rt_done_init rt_acq_init

static inline void rt_acq_set(struct rt_acq *a, int rc, int64_t token,
                              void *ptr)
{
    pthread_mutex_lock(&a->mu);
    a->calls++;
    a->done = 1;
    a->rc = rc;
    a->token = token;
    a->ptr = ptr;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
}

static inline void rt_acq_cb(int rc, int64_t token, void *data)
{
    rt_acq_set(data, rc, token, NULL);
}

static inline void rt_done_cb(int rc, void *data)
{
    rt_acq_set(data, rc, 0, NULL);
}

/* A multi's completion: rc, and the count of results as the token. */
static inline void rt_multi_cb(struct tb_client *c, int rc,
                               const struct tb_op_result *r, int count,
                               void *data)
{
    (void)c;
    (void)r;
    rt_acq_set(data, rc, count, NULL);
}

static inline void rt_lease_cb(int rc, struct tb_lease *l, void *data)
{
    rt_acq_set(data, rc, 0, l);
}

static inline int rt_acq_done(struct rt_acq *a)
{
    int d;

    pthread_mutex_lock(&a->mu);
    d = a->done;
    pthread_mutex_unlock(&a->mu);
    return d;
}

/* The callback's rc; exits the test if it does not come within ms, or
 * comes more than once. */
static inline int rt_acq_wait(struct rt_acq *a, int ms)
{
    struct timespec ts;
    int rc;

    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (long)(ms % 1000) * 1000000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&a->mu);
    while (!a->done)
        if (pthread_cond_timedwait(&a->cv, &a->mu, &ts) == ETIMEDOUT)
            break;
    CHECK(a->done);
    CHECK(a->calls == 1);
    rc = a->rc;
    pthread_mutex_unlock(&a->mu);
    return rc;
}
#define rt_done_wait rt_acq_wait

#endif
