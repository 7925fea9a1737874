/* Session, event-queue and barrier helpers over the official C client (see zcli.h). */
#include "zcli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void deadline_after(struct timespec *ts, int ms)
{
    clock_gettime(CLOCK_REALTIME, ts);
    ts->tv_sec += ms / 1000;
    ts->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

void zc_quiet(void)
{
    const char *lv = getenv("ZKC_LOG");
    ZooLogLevel level = (ZooLogLevel)0;
    if (lv != NULL) {
        if (strcmp(lv, "error") == 0)
            level = ZOO_LOG_LEVEL_ERROR;
        else if (strcmp(lv, "warn") == 0)
            level = ZOO_LOG_LEVEL_WARN;
        else if (strcmp(lv, "info") == 0)
            level = ZOO_LOG_LEVEL_INFO;
        else if (strcmp(lv, "debug") == 0)
            level = ZOO_LOG_LEVEL_DEBUG;
    }
    zoo_set_debug_level(level);
}

static void push_event(struct zc *c, int type, int state, const char *path, int tag)
{
    pthread_mutex_lock(&c->mu);
    if (type == ZOO_SESSION_EVENT) {
        c->state = state;
    } else if (c->count < ZC_MAXEV) {
        struct zc_event *e = &c->ev[(c->head + c->count) % ZC_MAXEV];
        e->type = type;
        e->state = state;
        e->tag = tag;
        snprintf(e->path, sizeof e->path, "%s", path ? path : "");
        c->count++;
    }
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

static void default_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
    (void)zh;
    push_event((struct zc *)ctx, type, state, path, 0);
}

void zc_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
    (void)zh;
    struct zc_wctx *w = ctx;
    push_event(w->c, type, state, path, w->tag);
}

int zc_open(struct zc *c, const char *hostport, int timeout_ms, const clientid_t *cid,
            int wait_ms)
{
    memset(c, 0, sizeof *c);
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    c->zh = zookeeper_init(hostport, default_watcher, timeout_ms, cid, c, 0);
    if (c->zh == NULL)
        return 0;
    struct timespec ts;
    deadline_after(&ts, wait_ms);
    pthread_mutex_lock(&c->mu);
    while (c->state != ZOO_CONNECTED_STATE && c->state != ZOO_EXPIRED_SESSION_STATE &&
           c->state != ZOO_AUTH_FAILED_STATE) {
        if (pthread_cond_timedwait(&c->cv, &c->mu, &ts) == ETIMEDOUT)
            break;
    }
    int st = c->state;
    pthread_mutex_unlock(&c->mu);
    if (st != ZOO_CONNECTED_STATE && st != ZOO_EXPIRED_SESSION_STATE &&
        st != ZOO_AUTH_FAILED_STATE)
        st = 0;
    return st;
}

void zc_close(struct zc *c)
{
    if (c->zh != NULL) {
        zookeeper_close(c->zh);
        c->zh = NULL;
    }
}

int zc_wait_state(struct zc *c, int state, int wait_ms)
{
    struct timespec ts;
    deadline_after(&ts, wait_ms);
    pthread_mutex_lock(&c->mu);
    while (c->state != state) {
        if (pthread_cond_timedwait(&c->cv, &c->mu, &ts) == ETIMEDOUT)
            break;
    }
    int ok = c->state == state;
    pthread_mutex_unlock(&c->mu);
    return ok;
}

int zc_next_event(struct zc *c, int wait_ms, struct zc_event *out)
{
    struct timespec ts;
    deadline_after(&ts, wait_ms);
    pthread_mutex_lock(&c->mu);
    while (c->count == 0) {
        if (pthread_cond_timedwait(&c->cv, &c->mu, &ts) == ETIMEDOUT)
            break;
    }
    int got = c->count > 0;
    if (got) {
        *out = c->ev[c->head];
        c->head = (c->head + 1) % ZC_MAXEV;
        c->count--;
    }
    pthread_mutex_unlock(&c->mu);
    return got;
}

int zc_pending(struct zc *c)
{
    pthread_mutex_lock(&c->mu);
    int n = c->count;
    pthread_mutex_unlock(&c->mu);
    return n;
}

/* A one-shot completion slot for the async-made-sync helpers. */
struct waiter {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done;
    int rc;
    char value[512];
};

static void waiter_init(struct waiter *w)
{
    memset(w, 0, sizeof *w);
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
}

static void waiter_finish(struct waiter *w, int rc, const char *value)
{
    pthread_mutex_lock(&w->mu);
    w->rc = rc;
    if (value != NULL)
        snprintf(w->value, sizeof w->value, "%s", value);
    w->done = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

/* Waits at most wait_ms; ZOPERATIONTIMEOUT if the completion has not fired by then. */
static int waiter_wait(struct waiter *w, int wait_ms)
{
    struct timespec ts;
    deadline_after(&ts, wait_ms);
    pthread_mutex_lock(&w->mu);
    while (!w->done) {
        if (pthread_cond_timedwait(&w->cv, &w->mu, &ts) == ETIMEDOUT)
            break;
    }
    int rc = w->done ? w->rc : ZOPERATIONTIMEOUT;
    pthread_mutex_unlock(&w->mu);
    return rc;
}

static void stat_done(int rc, const struct Stat *stat, const void *data)
{
    (void)stat;
    waiter_finish((struct waiter *)data, rc, NULL);
}

static void string_done(int rc, const char *value, const void *data)
{
    waiter_finish((struct waiter *)data, rc, value);
}

static void void_done(int rc, const void *data)
{
    waiter_finish((struct waiter *)data, rc, NULL);
}

/* The waiters below are heap-allocated and freed only after their completion fired, because a
 * completion that fires after a timeout must not write into a dead stack frame. */
static int finish_wait(struct waiter *w, int wait_ms, char *out, size_t outlen)
{
    int rc = waiter_wait(w, wait_ms);
    if (rc == ZOPERATIONTIMEOUT)
        return rc; /* leaked on purpose: the completion may still fire */
    if (out != NULL && outlen > 0)
        snprintf(out, outlen, "%s", w->value);
    free(w);
    return rc;
}

int zc_barrier(struct zc *c)
{
    struct waiter *w = malloc(sizeof *w);
    if (w == NULL)
        return ZSYSTEMERROR;
    waiter_init(w);
    int rc = zoo_aexists(c->zh, "/", 0, stat_done, w);
    if (rc != ZOK) {
        free(w);
        return rc;
    }
    return finish_wait(w, 15000, NULL, 0);
}

int zc_sync(struct zc *c, const char *path, char *out, size_t outlen)
{
    struct waiter *w = malloc(sizeof *w);
    if (w == NULL)
        return ZSYSTEMERROR;
    waiter_init(w);
    int rc = zoo_async(c->zh, path, string_done, w);
    if (rc != ZOK) {
        free(w);
        return rc;
    }
    return finish_wait(w, 15000, out, outlen);
}

int zc_add_auth(struct zc *c, const char *scheme, const char *cred)
{
    struct waiter *w = malloc(sizeof *w);
    if (w == NULL)
        return ZSYSTEMERROR;
    waiter_init(w);
    int rc = zoo_add_auth(c->zh, scheme, cred, (int)strlen(cred), void_done, w);
    if (rc != ZOK) {
        free(w);
        return rc;
    }
    return finish_wait(w, 15000, NULL, 0);
}

const char *zc_event_name(int type)
{
    if (type == ZOO_CREATED_EVENT)
        return "NodeCreated";
    if (type == ZOO_DELETED_EVENT)
        return "NodeDeleted";
    if (type == ZOO_CHANGED_EVENT)
        return "NodeDataChanged";
    if (type == ZOO_CHILD_EVENT)
        return "NodeChildrenChanged";
    if (type == ZOO_SESSION_EVENT)
        return "Session";
    if (type == ZOO_NOTWATCHING_EVENT)
        return "NotWatching";
    return "Unknown";
}
