/* Recipes whose parents the server reaps under them.  A recipe makes a
 * missing parent as a container, and the server deletes a container that
 * had children and has none left; so a parent the recipe found, or a
 * level above the one it is making, can be gone by its next request.
 * Each case holds one of the recipe's requests at the proxy (rt_proxy.c),
 * deletes a parent as the server's reaper would, and lets the request go
 * on: the recipe makes the parents again and succeeds, where giving up
 * would hand its caller a NoNode for a path it never asked to exist. */
#include <string.h>

#include "recipes/rcp.h"
#include "rt.h"
#include "rt_async.h"
#include "tests.h"

#define OP_CREATE2         15
#define OP_CREATECONTAINER 19

static struct rt_cut k;

static void mkdir_as(const char *path, int mode)
{
    CHECK_RC(
        tb_create_sync(k.direct, path, NULL, 0, NULL, mode, 0, NULL, 0, NULL),
        0);
}

/* Arms a hold on the (skip+1)-th request `op`, starts the recipe with
 * `call`, and once the request is held deletes `gone`. */
#define REAPED_UNDER(op, skip, gone, call)                                     \
    do {                                                                       \
        rt_proxy_hold_on(k.px, (op), (skip));                                  \
        CHECK_RC((call), 0);                                                   \
        CHECK(rt_proxy_wait_held(k.px, 10000));                                \
        CHECK_RC(tb_delete_sync(k.direct, (gone), -1), 0);                     \
        rt_proxy_release(k.px);                                                \
    } while (0)

static void exists(const char *path)
{
    CHECK_RC(tb_exists_sync(k.direct, path, NULL, NULL, NULL), 0);
}

/* The create itself finds its parent gone: the parent made, then reaped
 * before the create (the second create, after the first's NoNode). */
static void barrier_node(void)
{
    struct rt_done d;

    rt_done_init(&d);
    REAPED_UNDER(OP_CREATE2, 1, "/rt/reap/b1",
                 tb_barrier_set(k.proxied, "/rt/reap/b1/bar", rt_done_cb, &d));
    CHECK_RC(rt_done_wait(&d, 10000), 0);
    exists("/rt/reap/b1/bar");
    printf("barrier: the parent reaped between its making and the set's "
           "create: made again, set\n");
}

/* A level of the parents' pipeline finds the level above gone: the
 * container /rt/reap/b2 was there (NodeExists), then reaped before its
 * child's create. */
static void barrier_pipeline(void)
{
    struct rt_done d;

    mkdir_as("/rt/reap/b2", TB_CONTAINER);
    rt_done_init(&d);
    /* /rt, /rt/reap, /rt/reap/b2, then /rt/reap/b2/x held */
    REAPED_UNDER(
        OP_CREATECONTAINER, 3, "/rt/reap/b2",
        tb_barrier_set(k.proxied, "/rt/reap/b2/x/bar", rt_done_cb, &d));
    CHECK_RC(rt_done_wait(&d, 10000), 0);
    exists("/rt/reap/b2/x/bar");
    printf("barrier: a parent reaped while its parents were being made: "
           "made again, set\n");
}

/* The parent reaped under every create, one more time than a create
 * makes its parents: the set gives up with NoNode, and says so. */
static void barrier_gives_up(void)
{
    struct rt_done d;
    int holds = 0;
    int64_t end = rt_now_ms() + 30000;

    rt_done_init(&d);
    rt_proxy_hold_on(k.px, OP_CREATE2, 1);
    CHECK_RC(tb_barrier_set(k.proxied, "/rt/reap/b3/bar", rt_done_cb, &d), 0);
    while (!rt_acq_done(&d)) {
        CHECK(rt_now_ms() < end);
        if (!rt_proxy_wait_held(k.px, 100))
            continue;
        CHECK_RC(tb_delete_sync(k.direct, "/rt/reap/b3", -1), 0);
        holds++;
        rt_proxy_hold_on(k.px, OP_CREATE2, 0);
        rt_proxy_release(k.px);
    }
    rt_proxy_hold_off(k.px);
    CHECK_RC(rt_done_wait(&d, 0), TB_ENONODE);
    CHECK(holds == RCP_PARENT_TRIES);
    CHECK_RC(tb_exists_sync(k.direct, "/rt/reap/b3/bar", NULL, NULL, NULL),
             TB_ENONODE);
    printf("barrier: the parent reaped before each of the set's %d creates "
           "after its parents were made: NoNode, not set\n",
           holds);
}

static void queue_path(void)
{
    struct tb_dqueue *q;
    struct rt_done d;
    void *v;
    size_t n;

    CHECK_RC(tb_dqueue_new(&q, k.proxied, "/rt/reap/q/queue", TB_QUEUE_SIMPLE),
             0);
    rt_done_init(&d);
    /* The ancestors made, then the queue's own node held. */
    REAPED_UNDER(OP_CREATE2, 0, "/rt/reap/q",
                 tb_dqueue_put(q, "v", 1, -1, rt_done_cb, &d));
    CHECK_RC(rt_done_wait(&d, 10000), 0);
    CHECK_RC(tb_dqueue_take_sync(q, 0, &v, &n), 0);
    CHECK(n == 1 && memcmp(v, "v", 1) == 0);
    free(v);
    tb_dqueue_free(q);
    printf("queue: its parent reaped before the queue's node: made again, "
           "the item put and taken\n");
}

static void lock_pipeline(void)
{
    struct tb_mutex *m;
    struct rt_acq a;

    mkdir_as("/rt/reap/l", TB_CONTAINER);
    CHECK_RC(tb_mutex_new(&m, k.proxied, "/rt/reap/l/lock", NULL), 0);
    rt_acq_init(&a);
    /* /rt, /rt/reap, /rt/reap/l, then /rt/reap/l/lock held */
    REAPED_UNDER(OP_CREATECONTAINER, 3, "/rt/reap/l",
                 tb_mutex_lock(m, 10000, rt_acq_cb, &a));
    CHECK_RC(rt_acq_wait(&a, 10000), 0);
    CHECK(a.token > 0);
    CHECK(rt_nchildren(k.direct, "/rt/reap/l/lock") == 1);
    CHECK_RC(tb_mutex_unlock_sync(m), 0);
    tb_mutex_free(m);
    printf("fair lock: a parent reaped while its parents were being made: "
           "made again, acquired\n");
}

int t_reaped(int argc, char **argv)
{
    CHECK(argc >= 1);
    rt_cut_open(&k, argv[0]);
    rt_rmr(k.direct, "/rt/reap");
    /* Parents of our own, not containers the server could reap. */
    tb_create_sync(k.direct, "/rt", NULL, 0, NULL, TB_PERSISTENT, 0, NULL, 0,
                   NULL);
    mkdir_as("/rt/reap", TB_PERSISTENT);
    barrier_node();
    barrier_pipeline();
    barrier_gives_up();
    queue_path();
    lock_pipeline();
    rt_rmr(k.direct, "/rt/reap");
    rt_cut_close(&k);
    printf("reaped: ok\n");
    return 0;
}
