/* The client integration test runner: it_client HOST:PORT [NAME ...].
 * Runs every test (or those whose name contains an argument) against the
 * server, prints PASS/FAIL per test and "N passed, N failed". */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "it_client.h"

const char *it_hostport;
int it_failed;

void it_fail_at(const char *file, int line, const char *fmt, ...)
{
    va_list ap;

    it_failed = 1;
    fprintf(stdout, "  %s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stdout, fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
    fflush(stdout);
}

int64_t it_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void it_sleep(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

const char *it_root(const char *name)
{
    static char buf[4][256];
    static int slot;
    char *b = buf[slot++ & 3];

    snprintf(b, sizeof buf[0], "/it-%d-%s", (int)getpid(), name);
    return b;
}

struct tb_client *it_connect(const char *hosts, int timeout_ms,
                             struct tb_options *extra)
{
    struct tb_options o;
    struct tb_client *c = NULL;
    int rc;

    if (extra != NULL)
        o = *extra;
    else
        memset(&o, 0, sizeof o);
    o.hosts = hosts;
    if (o.session_timeout_ms == 0)
        o.session_timeout_ms = timeout_ms;
    if ((rc = tb_client_init(&c, &o)) != 0) {
        it_fail_at(__FILE__, __LINE__, "init %s: %s", hosts, tb_strerror(rc));
        return NULL;
    }
    if ((rc = tb_client_start(c)) != 0 ||
        (rc = tb_client_wait_connected(c, 20000)) != 0) {
        it_fail_at(__FILE__, __LINE__, "connect %s: %s", hosts,
                   tb_strerror(rc));
        tb_client_close(c);
        return NULL;
    }
    return c;
}

int it_has_id(struct tb_client *c, const char *id)
{
    struct tb_strings who = {0};
    int i, found = 0;

    if (tb_whoami_sync(c, &who) != 0)
        return 0;
    for (i = 0; i < who.count; i++)
        found |= strcmp(who.v[i], id) == 0;
    tb_strings_free(&who);
    return found;
}

void it_rmr(struct tb_client *c, const char *path)
{
    struct tb_strings kids;
    char sub[512];
    int32_t i;

    if (tb_get_children_sync(c, path, NULL, NULL, &kids) == 0) {
        for (i = 0; i < kids.count; i++) {
            snprintf(sub, sizeof sub, "%s/%s", path, kids.v[i]);
            it_rmr(c, sub);
        }
        tb_strings_free(&kids);
    }
    tb_delete_sync(c, path, -1);
}

void it_rec_init(struct it_rec *r)
{
    memset(r, 0, sizeof *r);
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
}

void it_rec_watch(struct tb_client *c, const struct tb_event *ev, void *arg)
{
    struct it_rec *r = arg;

    (void)c;
    pthread_mutex_lock(&r->mu);
    if (r->n < 256) {
        r->ev[r->n].type = ev->type;
        r->ev[r->n].rc = ev->rc;
        r->ev[r->n].final = ev->final;
        snprintf(r->ev[r->n].path, sizeof r->ev[0].path, "%s", ev->path);
    }
    r->n++;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

void it_rec_state(struct tb_client *c, int state, void *arg)
{
    struct it_rec *r = arg;

    (void)c;
    pthread_mutex_lock(&r->mu);
    if (r->nstates < 64)
        r->states[r->nstates++] = state;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

static int wait_for(struct it_rec *r, int (*ok)(struct it_rec *, int), int v,
                    int timeout_ms)
{
    int64_t end = it_now() + timeout_ms;
    int rv = 0;

    pthread_mutex_lock(&r->mu);
    while (!ok(r, v)) {
        struct timespec ts;
        int64_t left = end - it_now();
        if (left <= 0) {
            rv = -1;
            break;
        }
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += left / 1000;
        ts.tv_nsec += (left % 1000) * 1000000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&r->cv, &r->mu, &ts);
    }
    pthread_mutex_unlock(&r->mu);
    return rv;
}

static int have_n(struct it_rec *r, int n)
{
    return r->n >= n;
}

static int have_state(struct it_rec *r, int s)
{
    for (int i = 0; i < r->nstates; i++)
        if (r->states[i] == s)
            return 1;
    return 0;
}

int it_rec_wait(struct it_rec *r, int n, int timeout_ms)
{
    return wait_for(r, have_n, n, timeout_ms);
}

int it_rec_wait_state(struct it_rec *r, int state, int timeout_ms)
{
    return wait_for(r, have_state, state, timeout_ms);
}

int it_rec_count(struct it_rec *r)
{
    int n;

    pthread_mutex_lock(&r->mu);
    n = r->n;
    pthread_mutex_unlock(&r->mu);
    return n;
}

static int ctl(const char *what)
{
    char cmd[1024];
    const char *ctl = getenv("IT_CTL");

    if (ctl == NULL)
        return -1;
    snprintf(cmd, sizeof cmd, "'%s' %s >&2", ctl, what);
    return system(cmd) == 0 ? 0 : -1;
}

int it_server_stop(void)
{
    return ctl("stop");
}

int it_server_start(void)
{
    return ctl("start");
}

int it_server_port(void)
{
    const char *p = strrchr(it_hostport, ':');
    return p ? atoi(p + 1) : 0;
}

static int run_list(const struct it_test *t, int argc, char **argv,
                    int *pass, int *fail)
{
    for (; t->name != NULL; t++) {
        int pick = argc <= 2;
        for (int i = 2; i < argc; i++)
            pick |= strstr(t->name, argv[i]) != NULL;
        if (!pick)
            continue;
        it_failed = 0;
        fprintf(stdout, "RUN  %s\n", t->name);
        fflush(stdout);
        int64_t t0 = it_now();
        t->fn();
        fprintf(stdout, "%s %s (%lld ms)\n", it_failed ? "FAIL" : "PASS",
                t->name, (long long)(it_now() - t0));
        fflush(stdout);
        if (it_failed)
            (*fail)++;
        else
            (*pass)++;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int pass = 0, fail = 0;

    if (argc < 2) {
        fprintf(stderr, "usage: %s HOST:PORT [NAME ...]\n", argv[0]);
        return 2;
    }
    it_hostport = argv[1];
    run_list(it_ops_tests, argc, argv, &pass, &fail);
    run_list(it_driver_tests, argc, argv, &pass, &fail);
    run_list(it_session_tests, argc, argv, &pass, &fail);
    run_list(it_sasl_tests, argc, argv, &pass, &fail);
    run_list(it_tls_tests, argc, argv, &pass, &fail);
    printf("%d passed, %d failed\n", pass, fail);
    return fail == 0 && pass > 0 ? 0 : 1;
}
