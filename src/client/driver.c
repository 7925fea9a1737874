/* The handle's life and its two drivers.
 *
 * Thread driver: one I/O thread polls the socket and an eventfd that other
 * threads write to after queueing work; it runs the core and then the done
 * queue, so every callback runs on it.  Loop driver: the application calls
 * tb_client_interest / tb_client_process (or an adapter does, through
 * struct tb_ev).  A synchronous call waits on a condition variable when an
 * I/O thread exists and it is not on it; otherwise it drives the handle
 * itself with a private poll() until its result is in. */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "client/client.h"

static int64_t mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int init_sync(struct tb_client *c)
{
    pthread_condattr_t ca;

    if (pthread_mutex_init(&c->mu, NULL) != 0)
        return TB_ENOMEM;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    if (pthread_cond_init(&c->done_cv, &ca) != 0) {
        pthread_condattr_destroy(&ca);
        pthread_mutex_destroy(&c->mu);
        return TB_ENOMEM;
    }
    if (pthread_cond_init(&c->idle_cv, &ca) != 0) {
        pthread_condattr_destroy(&ca);
        pthread_cond_destroy(&c->done_cv);
        pthread_mutex_destroy(&c->mu);
        return TB_ENOMEM;
    }
    pthread_condattr_destroy(&ca);
    return 0;
}

/* The copies tb_client_init made (the password wiped first). */
static void free_sasl_options(struct tb_client *c)
{
    char *pw = (char *)c->o.sasl_password;

    if (pw != NULL)
        memset(pw, 0, strlen(pw));
    tb__free(pw);
    tb__free((char *)c->o.sasl_user);
}

static void set_defaults(struct tb_client *c, const struct tb_options *o)
{
    c->o = *o;
    c->o.hosts = NULL; /* not kept */
    c->o.session_passwd = NULL;
    c->o.sasl_user = c->o.sasl_password = NULL; /* copied by the caller */
    c->o.tls_ca_file = c->o.tls_cert_file = c->o.tls_key_file = NULL;
    if (c->o.session_timeout_ms <= 0)
        c->o.session_timeout_ms = 10000;
    if (c->o.connect_timeout_ms < 0)
        c->o.connect_timeout_ms = 0; /* derived: conn.c, connect_timeout */
    if (c->o.close_timeout_ms <= 0)
        c->o.close_timeout_ms = 1000;
    if (c->o.max_frame_bytes == 0)
        c->o.max_frame_bytes = 4u << 20;
    if (c->o.max_request_bytes == 0)
        c->o.max_request_bytes = TB_DEFAULT_MAXBUFFER;
}

int tb_client_init(struct tb_client **out, const struct tb_options *o)
{
    struct tb_client *c;
    size_t i;
    int rv;

    if (out == NULL || o == NULL || o->hosts == NULL)
        return TB_EINVAL;
    if (o->session_id != 0 && o->session_passwd == NULL)
        return TB_EINVAL;
    c = tb__calloc(1, sizeof *c);
    if (c == NULL)
        return TB_ENOMEM;
    c->fd = c->wake_fd = -1;
    tb_queue_init(&c->outq);
    tb_queue_init(&c->pendq);
    tb_queue_init(&c->doneq);
    tb_queue_init(&c->auths);
    tb_wbuf_init(&c->out);
    c->now = mono_ms;
    c->next_xid = 1;
    c->state = TB_SESSION_CONNECTING;
    c->phase = PH_IDLE;
    if ((rv = tb__hosts_parse(c, o->hosts)) != 0 || c->nhosts == 0)
        goto err_hosts;
    set_defaults(c, o);
    if ((o->sasl_user == NULL) != (o->sasl_password == NULL)) {
        rv = TB_EINVAL;
        goto err_hosts;
    }
    if (o->sasl_user != NULL) {
        c->o.sasl_user = tb__strndup(o->sasl_user, strlen(o->sasl_user));
        c->o.sasl_password =
            tb__strndup(o->sasl_password, strlen(o->sasl_password));
        if (c->o.sasl_user == NULL || c->o.sasl_password == NULL) {
            rv = TB_ENOMEM;
            goto err_hosts;
        }
    }
    if ((rv = tb__tls_init(c, o)) != 0) /* reads the files now */
        goto err_hosts;
    c->rng = (uint64_t)mono_ms() ^ ((uint64_t)getpid() << 32) ^
             (uint64_t)(uintptr_t)c;
    tb__hosts_shuffle(c, c->rng);
    /* A session handed over is asked for in the first handshake. */
    if (o->session_id != 0) {
        c->session_id = o->session_id;
        memcpy(c->passwd, o->session_passwd, sizeof c->passwd);
        c->seen_rw = 1;
    }
    c->nbuckets = 16;
    c->buckets = tb__calloc(c->nbuckets, sizeof *c->buckets);
    if (c->buckets == NULL) {
        rv = TB_ENOMEM;
        goto err_hosts;
    }
    for (i = 0; i < c->nbuckets; i++)
        tb_queue_init(&c->buckets[i]);
    if ((rv = init_sync(c)) != 0)
        goto err_buckets;
    *out = c;
    return 0;
err_buckets:
    tb__free(c->buckets);
err_hosts:
    tb__tls_free(c);
    free_sasl_options(c);
    tb__hosts_free(c);
    tb__free(c);
    return rv == 0 ? TB_EINVAL : rv;
}

int tb__on_io_thread(struct tb_client *c)
{
    return c->mode == DRIVE_THREAD &&
           pthread_equal(pthread_self(), c->io_thread);
}

void tb__changed(struct tb_client *c)
{
    struct tb_interest in;
    int64_t d;

    if (c->mode == DRIVE_THREAD && !tb__on_io_thread(c) && c->wake_fd >= 0) {
        uint64_t one = 1;
        ssize_t n = write(c->wake_fd, &one, sizeof one);
        (void)n; /* a full counter still wakes the thread */
        return;
    }
    if (!c->ev_set || c->mode != DRIVE_LOOP || c->closed)
        return;
    tb__interest(c, &in);
    d = in.timeout_ms < 0 ? -1 : c->now() + in.timeout_ms;
    if (in.fd == c->ev_last.fd && in.events == c->ev_last.events &&
        d == c->ev_deadline)
        return;
    c->ev_last = in;
    c->ev_deadline = d;
    c->ev.update(c->ev.data, &in);
}

void tb__client_free(struct tb_client *c)
{
    struct tb_queue *q;

    if (c->ev_set && c->ev.detach != NULL)
        c->ev.detach(c->ev.data);
    tb__conn_close_fd(c);
    if (c->wake_fd >= 0)
        close(c->wake_fd);
    if (c->ai != NULL)
        freeaddrinfo(c->ai);
    while (!tb_queue_empty(&c->auths)) {
        struct auth *a;
        q = tb_queue_head(&c->auths);
        tb_queue_remove(q);
        a = TB_CONTAINER_OF(q, struct auth, q);
        tb__free(a->scheme);
        tb__free(a->cred);
        tb__req_free(a->waiter);
        tb__free(a);
    }
    tb__watch_free_all(c);
    tb__hosts_free(c);
    free_sasl_options(c);
    tb__tls_free(c);
    tb_wbuf_free(&c->out);
    tb__free(c->in);
    pthread_cond_destroy(&c->done_cv);
    pthread_cond_destroy(&c->idle_cv);
    pthread_mutex_destroy(&c->mu);
    tb__free(c);
}

/* ---- the I/O thread ---- */

static int to_poll(int ev)
{
    return (ev & TB_EV_READ ? POLLIN : 0) | (ev & TB_EV_WRITE ? POLLOUT : 0);
}

static int from_poll(short re)
{
    int ev = 0;

    if (re & (POLLIN | POLLHUP | POLLERR))
        ev |= TB_EV_READ;
    if (re & (POLLOUT | POLLERR))
        ev |= TB_EV_WRITE;
    return ev;
}

/* Lock held on entry and exit; released while polling and firing. */
static void drive_once(struct tb_client *c, int wake_fd, int64_t limit)
{
    struct tb_interest in;
    struct pollfd p[2];
    nfds_t n = 0;
    int timeout, ev = 0, rv;

    /* Before the poll: a close asked for from a callback on the I/O
     * thread wakes nothing, and an expired handle polls nothing at all. */
    if (c->close_requested && !c->closing)
        tb__begin_close(c);
    tb__interest(c, &in);
    timeout = in.timeout_ms;
    if (limit >= 0) {
        int64_t left = limit - c->now();
        if (left < 0)
            left = 0;
        if (timeout < 0 || left < timeout)
            timeout = (int)left;
    }
    if (in.fd >= 0)
        p[n++] = (struct pollfd){in.fd, (short)to_poll(in.events), 0};
    if (wake_fd >= 0)
        p[n++] = (struct pollfd){wake_fd, POLLIN, 0};
    pthread_mutex_unlock(&c->mu);
    rv = poll(p, n, timeout);
    pthread_mutex_lock(&c->mu);
    if (rv > 0) {
        if (in.fd >= 0)
            ev = from_poll(p[0].revents);
        if (wake_fd >= 0 && p[n - 1].revents) {
            uint64_t v;
            ssize_t r = read(wake_fd, &v, sizeof v);
            (void)r;
        }
    }
    /* The socket polled may have been replaced meanwhile (a close from a
     * callback of another nested driver); its events mean nothing then. */
    if (in.fd >= 0 && in.fd != c->fd)
        ev = 0;
    tb__process(c, ev);
    tb__changed(c);
    pthread_mutex_unlock(&c->mu);
    tb__fire_done(c);
    pthread_mutex_lock(&c->mu);
}

static void *io_main(void *arg)
{
    struct tb_client *c = arg;
    int owns;

    pthread_mutex_lock(&c->mu);
    while (!c->closed || !tb_queue_empty(&c->doneq))
        drive_once(c, c->wake_fd, -1);
    owns = c->thread_owns_free;
    pthread_mutex_unlock(&c->mu);
    if (owns) {
        /* Closed from a callback: nobody joins; wait for sync callers. */
        pthread_detach(pthread_self());
        pthread_mutex_lock(&c->mu);
        while (c->sync_waiters > 0)
            pthread_cond_wait(&c->idle_cv, &c->mu);
        pthread_mutex_unlock(&c->mu);
        tb__client_free(c);
    }
    return NULL;
}

int tb_client_start(struct tb_client *c)
{
    int rv = 0;

    pthread_mutex_lock(&c->mu);
    if (c->mode != DRIVE_NONE || c->closing) {
        rv = TB_EINVAL;
        goto out;
    }
    c->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (c->wake_fd < 0) {
        rv = TB_ESYSTEM;
        goto out;
    }
    c->mode = DRIVE_THREAD;
    tb__start(c);
    if (pthread_create(&c->io_thread, NULL, io_main, c) != 0) {
        c->mode = DRIVE_NONE;
        close(c->wake_fd); /* a retry makes another */
        c->wake_fd = -1;
        rv = TB_ESYSTEM;
    }
out:
    pthread_mutex_unlock(&c->mu);
    return rv;
}

/* ---- waiting (sync calls, close, wait_connected) ---- */

int tb__wait(struct tb_client *c, int (*ready)(struct tb_client *, void *),
             void *arg, int64_t deadline)
{
    if (c->mode == DRIVE_THREAD && !tb__on_io_thread(c)) {
        while (!ready(c, arg)) {
            if (deadline < 0) {
                pthread_cond_wait(&c->done_cv, &c->mu);
            } else {
                struct timespec ts;
                if (c->now() >= deadline)
                    return TB_ETIMEDOUT;
                ts.tv_sec = (time_t)(deadline / 1000);
                ts.tv_nsec = (long)(deadline % 1000) * 1000000;
                pthread_cond_timedwait(&c->done_cv, &c->mu, &ts);
            }
        }
        return 0;
    }
    if (c->mode == DRIVE_NONE) {
        c->mode = DRIVE_LOOP;
        tb__start(c);
    }
    /* On the I/O thread (a callback's synchronous call), its wake-ups
     * too: another thread's close, or a request it left unsent. */
    while (!ready(c, arg)) {
        if (deadline >= 0 && c->now() >= deadline)
            return TB_ETIMEDOUT;
        drive_once(c, c->wake_fd, deadline);
    }
    return 0;
}

static int is_closed(struct tb_client *c, void *arg)
{
    (void)arg;
    return c->closed;
}

void tb_client_close(struct tb_client *c)
{
    if (c == NULL)
        return;
    pthread_mutex_lock(&c->mu);
    if (c->close_requested) { /* a second close is a no-op */
        pthread_mutex_unlock(&c->mu);
        return;
    }
    c->close_requested = 1;
    if (c->mode == DRIVE_THREAD) {
        if (tb__on_io_thread(c)) {
            c->thread_owns_free = 1; /* the I/O loop closes and frees */
            pthread_mutex_unlock(&c->mu);
            return;
        }
        tb__changed(c); /* wake the thread: it runs the close */
        pthread_mutex_unlock(&c->mu);
        pthread_join(c->io_thread, NULL);
        pthread_mutex_lock(&c->mu);
        while (c->sync_waiters > 0)
            pthread_cond_wait(&c->idle_cv, &c->mu);
        pthread_mutex_unlock(&c->mu);
        tb__client_free(c);
        return;
    }
    tb__begin_close(c);
    if (c->mode == DRIVE_LOOP || !c->closed)
        tb__wait(c, is_closed, NULL, -1);
    pthread_mutex_unlock(&c->mu);
    tb__fire_done(c);
    pthread_mutex_lock(&c->mu);
    if (c->cb_depth > 0) {
        c->free_pending = 1; /* the driver on the stack frees it */
        pthread_mutex_unlock(&c->mu);
        return;
    }
    pthread_mutex_unlock(&c->mu);
    tb__client_free(c);
}

static int is_connected(struct tb_client *c, void *arg)
{
    (void)arg;
    return c->state == TB_SESSION_CONNECTED ||
           c->state == TB_SESSION_READONLY || c->state == TB_SESSION_EXPIRED ||
           c->state == TB_SESSION_AUTH_FAILED || c->closing;
}

void tb__sync_leave(struct tb_client *c)
{
    int free_now;

    if (--c->sync_waiters == 0)
        pthread_cond_broadcast(&c->idle_cv);
    /* In loop mode a callback the wait ran may have closed the handle,
     * which it could not free under the wait (free_pending): nothing
     * would free it once the wait returns. */
    free_now = c->mode == DRIVE_LOOP && c->free_pending && c->cb_depth == 0;
    pthread_mutex_unlock(&c->mu);
    if (free_now)
        tb__client_free(c);
}

int tb_client_wait_connected(struct tb_client *c, int timeout_ms)
{
    int rv;

    pthread_mutex_lock(&c->mu);
    c->sync_waiters++;
    rv = tb__wait(c, is_connected, NULL,
                  timeout_ms < 0 ? -1 : c->now() + timeout_ms);
    if (rv == 0) {
        if (c->closing)
            rv = TB_ECLOSING;
        else if (c->state == TB_SESSION_EXPIRED)
            rv = TB_ESESSIONEXPIRED;
        else if (c->state == TB_SESSION_AUTH_FAILED)
            rv = TB_EAUTHFAILED;
    }
    tb__sync_leave(c);
    return rv;
}

/* ---- the application's loop ---- */

static int loop_mode(struct tb_client *c)
{
    if (c->mode == DRIVE_THREAD)
        return TB_EINVAL;
    if (c->mode == DRIVE_NONE) {
        c->mode = DRIVE_LOOP;
        tb__start(c);
    }
    return 0;
}

int tb_client_interest(struct tb_client *c, struct tb_interest *out)
{
    int rv;

    pthread_mutex_lock(&c->mu);
    if ((rv = loop_mode(c)) == 0)
        tb__interest(c, out);
    pthread_mutex_unlock(&c->mu);
    return rv;
}

int tb_client_process(struct tb_client *c, int events)
{
    int rv, free_now;

    pthread_mutex_lock(&c->mu);
    if ((rv = loop_mode(c)) != 0) {
        pthread_mutex_unlock(&c->mu);
        return rv;
    }
    if (events && c->ev_set && c->ev_last.fd != c->fd)
        events = 0; /* stale: the socket was replaced */
    /* A timeout: the loop's timer is spent, whether or not anything was
     * due (its clock may run behind ours); the update below, even of the
     * same interest, starts it again. */
    if (events == 0)
        c->ev_deadline = INT64_MIN;
    tb__process(c, events);
    tb__changed(c);
    c->cb_depth++; /* a close from a callback must not free under us */
    pthread_mutex_unlock(&c->mu);
    tb__fire_done(c);
    pthread_mutex_lock(&c->mu);
    c->cb_depth--;
    free_now = c->free_pending && c->cb_depth == 0;
    if (!free_now)
        tb__changed(c);
    pthread_mutex_unlock(&c->mu);
    if (free_now) {
        tb__client_free(c);
        return TB_ECLOSING;
    }
    return 0;
}

int tb_client_set_ev(struct tb_client *c, const struct tb_ev *ev)
{
    int rv = 0;

    pthread_mutex_lock(&c->mu);
    if (c->mode != DRIVE_NONE || ev == NULL || ev->update == NULL) {
        rv = TB_EINVAL;
    } else {
        c->ev = *ev;
        c->ev_set = 1;
        c->ev_last = (struct tb_interest){-1, 0, -1};
        c->ev_deadline = -1;
        loop_mode(c);
        tb__changed(c);
    }
    pthread_mutex_unlock(&c->mu);
    return rv;
}

/* ---- queries ---- */

int tb_client_state(struct tb_client *c)
{
    int s;

    pthread_mutex_lock(&c->mu);
    s = c->state;
    pthread_mutex_unlock(&c->mu);
    return s;
}

int64_t tb_client_session(struct tb_client *c, unsigned char *passwd)
{
    int64_t id;

    pthread_mutex_lock(&c->mu);
    id = c->session_id;
    if (passwd != NULL)
        memcpy(passwd, c->passwd, sizeof c->passwd);
    pthread_mutex_unlock(&c->mu);
    return id;
}

int tb_client_session_timeout(struct tb_client *c)
{
    int t;

    pthread_mutex_lock(&c->mu);
    t = c->timeout;
    pthread_mutex_unlock(&c->mu);
    return t;
}

int tb_client_last_error(struct tb_client *c, char *why, size_t cap)
{
    int rv;

    pthread_mutex_lock(&c->mu);
    rv = c->last_err;
    if (why != NULL && cap > 0)
        snprintf(why, cap, "%s", c->last_why);
    pthread_mutex_unlock(&c->mu);
    return rv;
}

void *tb_client_data(struct tb_client *c)
{
    return c->o.data;
}

int tb_client_new_session(struct tb_client *c)
{
    int rv = 0;

    pthread_mutex_lock(&c->mu);
    if (c->state != TB_SESSION_EXPIRED || c->closing) {
        rv = TB_EINVAL;
        goto out;
    }
    c->session_id = 0;
    memset(c->passwd, 0, sizeof c->passwd);
    c->timeout = 0;
    /* As for a handle's first session: one a read-only server gives is
     * not offered to the next server until a read-write one has answered
     * (that of the expired session does not count). */
    c->seen_rw = 0;
    c->phase = PH_IDLE;
    tb__set_state(c, TB_SESSION_CONNECTING);
    if (c->mode != DRIVE_NONE)
        tb__start(c);
    tb__changed(c);
out:
    pthread_mutex_unlock(&c->mu);
    return rv;
}
