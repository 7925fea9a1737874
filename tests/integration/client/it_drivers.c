/* The drivers: the sync API from many threads at once, the application's
 * own poll loop, the libuv adapter, and close completing everything. */
#include <poll.h>
#include <stdlib.h>
#include <tumbler/adapters/libuv.h>

#include "it_client.h"

#define NTHREADS 8
#define NOPS 150

struct worker {
    struct tb_client *c;
    const char *root;
    int id, errors;
};

static void *work(void *arg)
{
    struct worker *w = arg;
    char path[200], *v;
    size_t len;
    struct tb_stat st;
    int i;

    for (i = 0; i < NOPS; i++) {
        snprintf(path, sizeof path, "%s/t%d-%d", w->root, w->id, i);
        if (tb_create_sync(w->c, path, "v", 1, NULL, TB_PERSISTENT, 0, NULL,
                           0, NULL) != 0 ||
            tb_set_data_sync(w->c, path, "w", 1, 0, &st) != 0 ||
            st.version != 1 ||
            tb_get_data_sync(w->c, path, NULL, NULL, &v, &len, NULL) != 0)
            w->errors++;
        else if (len != 1 || v[0] != 'w')
            w->errors++;
        else
            tb_free(v);
        if (tb_delete_sync(w->c, path, 1) != 0)
            w->errors++;
    }
    return NULL;
}

static void test_threads(void)
{
    struct tb_client *c = it_connect(it_hostport, 10000, NULL);
    const char *root = it_root("threads");
    struct worker w[NTHREADS];
    pthread_t th[NTHREADS];
    int i, errors = 0;

    CHECK(c != NULL);
    CHECK_RC(tb_create_sync(c, root, "", 0, NULL,
                            TB_PERSISTENT, 0, NULL, 0, NULL),
             0);
    for (i = 0; i < NTHREADS; i++) {
        w[i] = (struct worker){c, root, i, 0};
        pthread_create(&th[i], NULL, work, &w[i]);
    }
    for (i = 0; i < NTHREADS; i++) {
        pthread_join(th[i], NULL);
        errors += w[i].errors;
    }
    CHECK(errors == 0);
done:
    if (c) {
        it_rmr(c, root);
        tb_client_close(c);
    }
}

/* ---- the application's own loop ---- */

struct loop_ctx {
    int done, rc, gets;
    char created[200];
};

static void loop_get(struct tb_client *c, int rc, const void *v, size_t len,
                     const struct tb_stat *st, void *data)
{
    struct loop_ctx *x = data;

    (void)c;
    (void)st;
    if (rc == 0 && len == 2 && memcmp(v, "hi", 2) == 0)
        x->gets++;
    else
        x->rc = rc ? rc : -1;
}

static void loop_created(struct tb_client *c, int rc, const char *path,
                         const struct tb_stat *st, void *data)
{
    struct loop_ctx *x = data;

    (void)st;
    x->rc = rc;
    if (rc != 0) {
        x->done = 1;
        return;
    }
    snprintf(x->created, sizeof x->created, "%s", path);
    /* chaining from a callback: the next requests */
    for (int i = 0; i < 10; i++)
        tb_get_data(c, path, NULL, NULL, loop_get, x);
}

static void poll_until(struct tb_client *c, int *flag, int ms)
{
    int64_t end = it_now() + ms;
    struct tb_interest in;

    while (!*flag && it_now() < end) {
        struct pollfd p = {-1, 0, 0};
        int ev = 0;
        tb_client_interest(c, &in);
        p.fd = in.fd;
        p.events = (short)((in.events & TB_EV_READ ? POLLIN : 0) |
                           (in.events & TB_EV_WRITE ? POLLOUT : 0));
        if (poll(&p, 1, in.timeout_ms < 0 || in.timeout_ms > 100
                            ? 100
                            : in.timeout_ms) > 0) {
            if (p.revents & (POLLIN | POLLHUP | POLLERR))
                ev |= TB_EV_READ;
            if (p.revents & (POLLOUT | POLLERR))
                ev |= TB_EV_WRITE;
        }
        tb_client_process(c, ev);
    }
}

static int gets_done(struct loop_ctx *x)
{
    return x->gets == 10;
}

static void test_own_loop(void)
{
    struct tb_options o = {0};
    struct tb_client *c = NULL;
    struct loop_ctx x = {0};
    int connected = 0, i, flag = 0;

    o.hosts = it_hostport;
    o.session_timeout_ms = 10000;
    CHECK_RC(tb_client_init(&c, &o), 0);
    CHECK_RC(tb_create(c, "/", NULL, 0, NULL, TB_PERSISTENT, 0, NULL, NULL),
             0); /* queued before the first drive: NODEEXISTS later */
    for (i = 0; i < 200 && !connected; i++) {
        poll_until(c, &flag, 50);
        connected = tb_client_state(c) == TB_SESSION_CONNECTED;
    }
    CHECK(connected);
    CHECK_RC(tb_create(c, it_root("loop"), "hi", 2, NULL, TB_EPHEMERAL, 0,
                       loop_created, &x),
             0);
    for (i = 0; i < 100 && !gets_done(&x) && x.rc == 0; i++)
        poll_until(c, &flag, 50);
    CHECK(x.rc == 0 && gets_done(&x));
    /* a sync call in loop mode drives the handle itself */
    CHECK_RC(tb_exists_sync(c, x.created, NULL, NULL, NULL), 0);
done:
    if (c)
        tb_client_close(c);
}

/* ---- libuv ---- */

struct uv_ctx {
    uv_loop_t *loop;
    int step, rc;
    struct tb_client *c;
};

static void uv_deleted(struct tb_client *c, int rc, void *data)
{
    struct uv_ctx *x = data;

    x->rc = rc;
    x->step = 3;
    tb_client_close(c); /* from a callback: freed when it returns */
}

static void uv_set(struct tb_client *c, int rc, const struct tb_stat *st,
                   void *data)
{
    struct uv_ctx *x = data;

    x->rc = rc;
    if (rc == 0 && st->version == 1) {
        x->step = 2;
        tb_delete(c, it_root("uv"), 1, uv_deleted, x);
    }
}

static void uv_created(struct tb_client *c, int rc, const char *path,
                       const struct tb_stat *st, void *data)
{
    struct uv_ctx *x = data;

    (void)st;
    x->rc = rc;
    if (rc == 0) {
        x->step = 1;
        tb_set_data(c, path, "b", 1, 0, uv_set, x);
    }
}

static void test_libuv(void)
{
    uv_loop_t loop;
    struct tb_options o = {0};
    struct tb_client *c = NULL;
    struct uv_ctx x = {&loop, 0, 0, NULL};

    uv_loop_init(&loop);
    o.hosts = it_hostport;
    o.session_timeout_ms = 10000;
    CHECK_RC(tb_client_init(&c, &o), 0);
    CHECK_RC(tb_libuv_attach(c, &loop), 0);
    CHECK_RC(tb_create(c, it_root("uv"), "a", 1, NULL, TB_PERSISTENT, 0,
                       uv_created, &x),
             0);
    c = NULL; /* the last callback closes it */
    uv_run(&loop, UV_RUN_DEFAULT); /* returns once every handle closed */
    CHECK(x.rc == 0 && x.step == 3);
done:
    if (c)
        tb_client_close(c);
    uv_loop_close(&loop);
}

/* ---- close ---- */

struct closing {
    pthread_mutex_t mu;
    int calls[300], rcs[300], watch_calls, watch_rc;
};

static void close_stat(struct tb_client *c, int rc, const struct tb_stat *st,
                       void *data)
{
    struct closing *k = tb_client_data(c);
    intptr_t i = (intptr_t)data;

    (void)st;
    pthread_mutex_lock(&k->mu);
    k->calls[i]++;
    k->rcs[i] = rc;
    pthread_mutex_unlock(&k->mu);
}

static void close_watch(struct tb_client *c, const struct tb_event *ev,
                        void *data)
{
    struct closing *k = data;

    (void)c;
    k->watch_calls++;
    k->watch_rc = ev->rc;
}

static void test_close_completes_all(void)
{
    static struct closing k;
    struct tb_options o = {0};
    struct tb_client *c;
    int i, closing = 0;

    pthread_mutex_init(&k.mu, NULL);
    o.data = &k;
    c = it_connect(it_hostport, 10000, &o);
    CHECK(c != NULL);
    CHECK_RC(tb_exists(c, "/nonexistent-close", close_watch, &k, close_stat,
                       (void *)(intptr_t)0),
             0);
    for (i = 1; i < 300; i++)
        CHECK_RC(tb_exists(c, "/", NULL, NULL, close_stat,
                           (void *)(intptr_t)i),
                 0);
    tb_client_close(c);
    c = NULL;
    for (i = 0; i < 300; i++) {
        CHECK(k.calls[i] == 1);
        CHECK(k.rcs[i] == 0 || k.rcs[i] == TB_ECLOSING ||
              (i == 0 && k.rcs[i] == TB_ENONODE));
        closing += k.rcs[i] == TB_ECLOSING;
    }
    /* the exists watch on a missing node was set, then ended by close */
    if (k.rcs[0] == TB_ENONODE)
        CHECK(k.watch_calls == 1 && k.watch_rc == TB_ECLOSING);
    printf("  close: %d of 300 completed with ECLOSING\n", closing);
done:
    if (c)
        tb_client_close(c);
}

static void close_in_cb(struct tb_client *c, int rc, const struct tb_stat *st,
                        void *data)
{
    (void)rc;
    (void)st;
    __atomic_add_fetch((int *)data, 1, __ATOMIC_SEQ_CST);
    tb_client_close(c);
}

static void test_close_from_callback(void)
{
    struct tb_client *c = it_connect(it_hostport, 10000, NULL);
    static int n;
    int64_t end;

    n = 0;
    CHECK(c != NULL);
    CHECK_RC(tb_exists(c, "/", NULL, NULL, close_in_cb, &n), 0);
    end = it_now() + 5000;
    while (__atomic_load_n(&n, __ATOMIC_SEQ_CST) == 0 && it_now() < end)
        it_sleep(10);
    CHECK(__atomic_load_n(&n, __ATOMIC_SEQ_CST) == 1);
    it_sleep(100); /* the I/O thread finishes the close and frees */
done:;
}

const struct it_test it_driver_tests[] = {
    {"driver_threads", test_threads},
    {"driver_own_loop", test_own_loop},
    {"driver_libuv", test_libuv},
    {"driver_close_completes_all", test_close_completes_all},
    {"driver_close_from_callback", test_close_from_callback},
    {NULL, NULL},
};
