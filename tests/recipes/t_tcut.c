/* The barrier, the latch, the counter and the cyclic barrier through a
 * proxy the test cuts (rt_proxy.c).  A write whose reply is lost reports
 * TB_ECONNECTIONLOSS and was applied exactly once if it reached the
 * server, not at all if it did not (barrier set, count down, counter
 * add); a waiter whose connection breaks while it waits is let go by
 * what happens meanwhile (the barrier removed, the last count, the other
 * parties arriving), once it has reconnected: no recipe stuck, and no node
 * but the recipe's own left.  A lock-delay holder whose read of the
 * lock's record, or write of its own, loses its reply still waits the
 * delay a dead holder's record asks for, and leaves the record that makes
 * the next holder wait if it dies. */
#include <string.h>

#include "rt.h"
#include "rt_async.h"
#include "tests.h"

#define OP_GETDATA      4
#define OP_SETDATA      5
#define OP_GETCHILDREN2 12
#define OP_CREATE2      15

static struct rt_cut k;

static void wait_cuts(int n)
{
    rt_cut_wait(&k, n);
    CHECK_RC(tb_client_wait_connected(k.proxied, 10000), 0); /* same session */
}

/* `d` is still pending after `ms`. */
static void pending(struct rt_done *d, int ms)
{
    rt_sleep_ms(ms);
    CHECK(!rt_acq_done(d));
}

/* A write whose request is forwarded (or dropped) and whose reply is
 * lost: `op` runs through the proxy and must report the loss. */
#define CUT_WRITE(opcode, forward, call)                                       \
    do {                                                                       \
        int cuts_ = rt_proxy_cuts(k.px);                                       \
        rt_proxy_cut_on(k.px, (opcode), (forward), 300);                       \
        CHECK_RC((call), TB_ECONNECTIONLOSS);                                  \
        wait_cuts(cuts_ + 1);                                                  \
    } while (0)

static void barrier(void)
{
    const char *path = "/rt/tcut/bar";
    struct rt_done d;
    int cuts;

    CUT_WRITE(OP_CREATE2, 0, tb_barrier_set_sync(k.proxied, path));
    CHECK_RC(tb_barrier_wait_sync(k.direct, path, 0), 0); /* not set */
    CUT_WRITE(OP_CREATE2, 1, tb_barrier_set_sync(k.proxied, path));
    CHECK_RC(tb_barrier_wait_sync(k.direct, path, 0), TB_ETIMEDOUT); /* set */
    CHECK_RC(tb_barrier_set_sync(k.proxied, path), 0); /* again: idempotent */

    /* Cut while waiting; removed while the waiter is away. */
    rt_done_init(&d);
    CHECK_RC(tb_barrier_wait(k.proxied, path, -1, rt_done_cb, &d), 0);
    pending(&d, 300);
    cuts = rt_proxy_cuts(k.px);
    rt_proxy_cut_all(k.px, 500);
    CHECK_RC(tb_barrier_remove_sync(k.direct, path), 0);
    CHECK_RC(rt_done_wait(&d, 15000), 0);
    wait_cuts(cuts + 1);
    CHECK(rt_nchildren(k.direct, "/rt/tcut") == 0);
    printf("barrier: set lost before the server: ECONNECTIONLOSS, not set; "
           "after it: ECONNECTIONLOSS, set; a waiter cut off while it was "
           "removed let go after reconnecting\n");
}

static void latch(void)
{
    const char *path = "/rt/tcut/latch";
    struct tb_latch *lp, *ld;
    struct rt_done d;
    int left, cuts;

    CHECK_RC(tb_create_sync(k.direct, path, NULL, 0, NULL, TB_PERSISTENT, 0,
                            NULL, 0, NULL),
             0); /* so that the cut create is the count's own */
    CHECK_RC(tb_latch_new(&lp, k.proxied, path, 3), 0);
    CHECK_RC(tb_latch_new(&ld, k.direct, path, 3), 0);
    CUT_WRITE(OP_CREATE2, 0, tb_latch_count_down_sync(lp));
    CHECK_RC(tb_latch_remaining_sync(ld, &left), 0);
    CHECK(left == 3);
    CUT_WRITE(OP_CREATE2, 1, tb_latch_count_down_sync(lp));
    CHECK_RC(tb_latch_remaining_sync(ld, &left), 0);
    CHECK(left == 2); /* counted once */

    rt_done_init(&d);
    CHECK_RC(tb_latch_await(lp, -1, rt_done_cb, &d), 0);
    pending(&d, 300);
    cuts = rt_proxy_cuts(k.px);
    rt_proxy_cut_all(k.px, 500);
    CHECK_RC(tb_latch_count_down_sync(ld), 0);
    CHECK_RC(tb_latch_count_down_sync(ld), 0);
    CHECK_RC(rt_done_wait(&d, 15000), 0);
    wait_cuts(cuts + 1);
    CHECK(rt_nchildren(k.direct, path) == 3);
    tb_latch_free(lp);
    tb_latch_free(ld);

    /* The await's look loses its reply: it looks again, and waits on. */
    CHECK_RC(tb_latch_new(&lp, k.proxied, "/rt/tcut/latch1", 1), 0);
    CHECK_RC(tb_latch_new(&ld, k.direct, "/rt/tcut/latch1", 1), 0);
    cuts = rt_proxy_cuts(k.px);
    rt_proxy_cut_on(k.px, OP_GETCHILDREN2, 1, 300);
    rt_done_init(&d);
    CHECK_RC(tb_latch_await(lp, -1, rt_done_cb, &d), 0);
    wait_cuts(cuts + 1);
    pending(&d, 300);
    CHECK_RC(tb_latch_count_down_sync(ld), 0);
    CHECK_RC(rt_done_wait(&d, 15000), 0);
    tb_latch_free(lp);
    tb_latch_free(ld);
    printf("latch: a count lost before the server: not counted; after it: "
           "counted once; a waiter cut off during the last counts, or whose "
           "look lost its reply, let go\n");
}

static void counter(void)
{
    const char *path = "/rt/tcut/ctr";
    int64_t v;

    CHECK_RC(tb_counter_set_sync(k.direct, path, 10), 0);
    CUT_WRITE(OP_SETDATA, 0, tb_counter_add_sync(k.proxied, path, 1, &v));
    CHECK_RC(tb_counter_get_sync(k.direct, path, &v, NULL), 0);
    CHECK(v == 10);
    CUT_WRITE(OP_SETDATA, 1, tb_counter_add_sync(k.proxied, path, 1, &v));
    CHECK_RC(tb_counter_get_sync(k.direct, path, &v, NULL), 0);
    CHECK(v == 11); /* added once, not retried */
    CHECK_RC(tb_counter_add_sync(k.proxied, path, 1, &v), 0);
    CHECK(v == 12);
    printf("counter: an add lost before the server: not added; after it: "
           "added once, not retried; the next add works\n");
}

static void cbarrier(void)
{
    const char *path = "/rt/tcut/cbar";
    struct tb_cbarrier *bp, *bd, *one;
    struct rt_done d;
    int cuts, w;

    /* Generation 0 passed by a barrier of 1: gen-1 is there, so the next
     * create through the proxy is the party's own. */
    CHECK_RC(tb_cbarrier_new(&one, k.direct, path, 1), 0);
    CHECK_RC(tb_cbarrier_await_sync(one, 5000), 0);
    tb_cbarrier_free(one);
    CHECK_RC(tb_cbarrier_new(&bp, k.proxied, path, 2), 0);
    CHECK_RC(tb_cbarrier_new(&bd, k.direct, path, 2), 0);

    /* The party's create applied, its reply lost: found by its name. */
    cuts = rt_proxy_cuts(k.px);
    rt_proxy_cut_on(k.px, OP_CREATE2, 1, 300);
    rt_done_init(&d);
    CHECK_RC(tb_cbarrier_await(bp, -1, rt_done_cb, &d), 0);
    wait_cuts(cuts + 1);
    pending(&d, 300);
    CHECK_RC(tb_cbarrier_waiting_sync(bd, &w), 0);
    CHECK(w == 1); /* one node, not two */
    CHECK_RC(tb_cbarrier_await_sync(bd, 10000), 0);
    CHECK_RC(rt_done_wait(&d, 10000), 0);

    /* Cut while waiting, briefly: the session lives, nothing broken. */
    rt_done_init(&d);
    CHECK_RC(tb_cbarrier_await(bp, -1, rt_done_cb, &d), 0);
    pending(&d, 300);
    cuts = rt_proxy_cuts(k.px);
    rt_proxy_cut_all(k.px, 500);
    CHECK_RC(tb_cbarrier_await_sync(bd, 10000), 0);
    CHECK_RC(rt_done_wait(&d, 15000), 0);
    wait_cuts(cuts + 1);
    CHECK_RC(tb_cbarrier_waiting_sync(bd, &w), 0);
    CHECK(w == 0);
    CHECK(rt_nchildren(k.direct, path) == 1); /* gen-3 alone */
    CHECK(rt_nchildren_with(k.direct, path, "gen-0000000003") == 1);
    tb_cbarrier_free(bp);
    tb_cbarrier_free(bd);
    printf("cyclic barrier: a party whose create reply was lost found its "
           "node (one party, passed); a party cut off while waiting passed "
           "with the other after reconnecting; only the fresh generation "
           "left\n");
}

#define LD_PATH  "/rt/tcut/ld"
#define LD_DELAY 1000

static struct tb_mutex *ld_lock(struct tb_client *c)
{
    struct tb_lock_options o = {.lock_delay_ms = LD_DELAY};
    struct tb_mutex *m;

    CHECK_RC(tb_mutex_new(&m, c, LD_PATH, &o), 0);
    return m;
}

/* Locks m, its record's `op` cut (forward or not); the ms it took. */
static int64_t ld_cut_lock(struct tb_mutex *m, int op, int forward)
{
    int64_t t0 = rt_now_ms(), token;
    int cuts = rt_proxy_cuts(k.px);

    rt_proxy_cut_on(k.px, op, forward, 300);
    CHECK_RC(tb_mutex_lock_sync(m, 15000, &token), 0);
    wait_cuts(cuts + 1);
    return rt_now_ms() - t0;
}

static void lock_delay(void)
{
    struct tb_mutex *mp = ld_lock(k.proxied), *md = ld_lock(k.direct);
    char node[256];
    int64_t t0, took;

    /* A dead holder's record; its read loses its reply: read again. */
    CHECK_RC(tb_create_sync(k.direct, LD_PATH, "held:gone", 9, NULL,
                            TB_PERSISTENT, 0, NULL, 0, NULL),
             0);
    took = ld_cut_lock(mp, OP_GETDATA, 1);
    CHECK(took >= LD_DELAY - 20);
    CHECK_RC(tb_mutex_unlock_sync(mp), 0);

    /* A clean release's record; the holder's own record is lost before
     * the server: written again, so its death makes the next one wait. */
    took = ld_cut_lock(mp, OP_SETDATA, 0);
    CHECK(took < LD_DELAY);
    CHECK_RC(tb_mutex_node(mp, node, sizeof node), 0);
    t0 = rt_now_ms();
    CHECK_RC(tb_delete_sync(k.direct, node, -1), 0); /* dies */
    CHECK_RC(tb_mutex_lock_sync(md, 15000, NULL), 0);
    CHECK(rt_now_ms() - t0 >= LD_DELAY - 20);
    CHECK_RC(tb_mutex_unlock_sync(md), 0);
    CHECK_RC(tb_mutex_unlock_sync(mp), TB_ELOCKLOST);
    tb_mutex_free(mp);
    tb_mutex_free(md);
    printf("lock-delay: a dead holder's record whose read lost its reply: "
           "waited %lld ms; a record write lost: written again, the next "
           "holder waited\n",
           (long long)took);
}

int t_toolbox_connloss(int argc, char **argv)
{
    CHECK(argc >= 1);
    rt_cut_open(&k, argv[0]);
    rt_rmr(k.direct, "/rt/tcut");
    /* A parent of our own, not a container the server could reap. */
    tb_create_sync(k.direct, "/rt", NULL, 0, NULL, TB_PERSISTENT, 0, NULL, 0,
                   NULL);
    CHECK_RC(tb_create_sync(k.direct, "/rt/tcut", NULL, 0, NULL, TB_PERSISTENT,
                            0, NULL, 0, NULL),
             0);
    barrier();
    latch();
    counter();
    cbarrier();
    lock_delay();
    rt_rmr(k.direct, "/rt/tcut");
    rt_cut_close(&k);
    printf("toolbox_connloss: ok\n");
    return 0;
}
