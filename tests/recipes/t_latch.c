/* Count-down latch: Menagerie's node names; await with the count not
 * reached times out (at once, after 300 ms, async); 4 waiters in their own
 * sessions are all held until the last of 3 counts, made 100 ms apart from
 * other sessions, one of them closed since (counts survive their
 * session), and none is let go before it; the latch stays open; a pending
 * await is cancelled by free; a reset (the counters deleted, the emptied
 * PATH removed) while a waiter watches the name the last count would have
 * taken does not leave it waiting: the counts made after it let it go. */
#include <pthread.h>
#include <string.h>

#include "rt.h"
#include "rt_async.h"
#include "tests.h"

#define LATCH   "/rt/latch"
#define NCOUNT  3
#define NWAITER 4

static int64_t released[NWAITER];

static void *waiter(void *arg)
{
    long i = (long)arg;
    struct tb_client *c = rt_connect(rt_hosts, RT_SESSION_MS);
    struct tb_latch *l;

    CHECK_RC(tb_latch_new(&l, c, LATCH, NCOUNT), 0);
    CHECK_RC(tb_latch_await_sync(l, 20000), 0);
    released[i] = rt_now_ms();
    tb_latch_free(l);
    tb_client_close(c);
    return NULL;
}

/* The documented reset: PATH's children deleted; `all`: PATH too, as the
 * server removes the emptied container. */
static void reset(struct tb_client *c, int all)
{
    struct tb_strings v;
    char sub[256];
    int i;

    CHECK_RC(tb_get_children_sync(c, LATCH, NULL, NULL, &v), 0);
    for (i = 0; i < v.count; i++) {
        snprintf(sub, sizeof sub, "%s/%s", LATCH, v.v[i]);
        CHECK_RC(tb_delete_sync(c, sub, -1), 0);
    }
    tb_strings_free(&v);
    if (all)
        CHECK_RC(tb_delete_sync(c, LATCH, -1), 0);
}

/* A waiter that has seen NCOUNT - 1 counters from 2 on watches the name
 * the last will take, 2 + NCOUNT - 1.  After a reset that removes PATH
 * the names start again from 0, so the NCOUNT counts made after it never
 * reach that one. */
static void reset_while_waiting(struct tb_client *c1)
{
    struct tb_latch *l;
    struct rt_done d;
    int i;

    rt_rmr(c1, LATCH);
    CHECK_RC(tb_latch_new(&l, c1, LATCH, NCOUNT), 0);
    for (i = 0; i < 2; i++)
        CHECK_RC(tb_latch_count_down_sync(l), 0);
    reset(c1, 0);
    for (i = 0; i < NCOUNT - 1; i++)
        CHECK_RC(tb_latch_count_down_sync(l), 0);
    CHECK(rt_nchildren_with(c1, LATCH, "countDownLatch-0000000002") == 1);
    rt_done_init(&d);
    CHECK_RC(tb_latch_await(l, 20000, rt_done_cb, &d), 0);
    rt_sleep_ms(200); /* waiting for the last name */
    reset(c1, 1);
    for (i = 0; i < NCOUNT - 1; i++)
        CHECK_RC(tb_latch_count_down_sync(l), 0);
    rt_sleep_ms(100);
    CHECK(!rt_acq_done(&d)); /* not through before the last count */
    CHECK_RC(tb_latch_count_down_sync(l), 0);
    CHECK_RC(rt_done_wait(&d, 5000), 0);

    /* Freed while it waits for the last name (and the first's deletion):
     * cancelled once. */
    reset(c1, 0);
    CHECK_RC(tb_latch_count_down_sync(l), 0);
    rt_done_init(&d);
    CHECK_RC(tb_latch_await(l, -1, rt_done_cb, &d), 0);
    rt_sleep_ms(100);
    tb_latch_free(l);
    CHECK_RC(rt_done_wait(&d, 5000), TB_ECANCELED);
}

int t_latch(int argc, char **argv)
{
    struct tb_client *c1 = rt_connect(rt_hosts, RT_SESSION_MS);
    struct tb_client *c2;
    struct tb_latch *l1, *l2;
    pthread_t th[NWAITER];
    struct rt_done d;
    int64_t last_count, start;
    int left, i;

    (void)argc;
    (void)argv;
    rt_rmr(c1, LATCH);
    CHECK_RC(tb_latch_new(&l1, c1, LATCH, NCOUNT), 0);
    CHECK_RC(tb_latch_remaining_sync(l1, &left), 0);
    CHECK(left == NCOUNT);
    CHECK_RC(tb_latch_await_sync(l1, 0), TB_ETIMEDOUT);
    start = rt_now_ms();
    CHECK_RC(tb_latch_await_sync(l1, 300), TB_ETIMEDOUT);
    CHECK(rt_now_ms() - start >= 290);
    rt_done_init(&d);
    CHECK_RC(tb_latch_await(l1, 200, rt_done_cb, &d), 0);
    CHECK_RC(rt_done_wait(&d, 5000), TB_ETIMEDOUT);

    for (i = 0; i < NWAITER; i++)
        CHECK(pthread_create(&th[i], NULL, waiter, (void *)(long)i) == 0);
    rt_sleep_ms(300); /* let them wait */
    /* The first count from a session closed at once. */
    c2 = rt_connect(rt_hosts, RT_SESSION_MS);
    CHECK_RC(tb_latch_new(&l2, c2, LATCH, NCOUNT), 0);
    CHECK_RC(tb_latch_count_down_sync(l2), 0);
    tb_latch_free(l2);
    tb_client_close(c2);
    rt_sleep_ms(100);
    CHECK_RC(tb_latch_count_down_sync(l1), 0);
    CHECK_RC(tb_latch_remaining_sync(l1, &left), 0);
    CHECK(left == 1);
    rt_sleep_ms(100);
    for (i = 0; i < NWAITER; i++)
        CHECK(released[i] == 0); /* nobody through before the last count */
    last_count = rt_now_ms();
    rt_done_init(&d);
    CHECK_RC(tb_latch_count_down(l1, rt_done_cb, &d), 0);
    CHECK_RC(rt_done_wait(&d, 5000), 0);
    for (i = 0; i < NWAITER; i++) {
        pthread_join(th[i], NULL);
        CHECK(released[i] >= last_count);
    }
    CHECK(rt_nchildren_with(c1, LATCH, "countDownLatch-") == NCOUNT);
    CHECK_RC(tb_latch_remaining_sync(l1, &left), 0);
    CHECK(left == 0);
    CHECK_RC(tb_latch_await_sync(l1, 0), 0); /* stays open */
    tb_latch_free(l1);

    /* Freed while waiting: ECANCELED. */
    rt_rmr(c1, LATCH);
    CHECK_RC(tb_latch_new(&l1, c1, LATCH, NCOUNT), 0);
    rt_done_init(&d);
    CHECK_RC(tb_latch_await(l1, -1, rt_done_cb, &d), 0);
    rt_sleep_ms(100);
    tb_latch_free(l1);
    CHECK_RC(rt_done_wait(&d, 5000), TB_ECANCELED);
    CHECK_RC(tb_latch_new(&l1, c1, LATCH, 0), TB_EINVAL);
    reset_while_waiting(c1);
    rt_rmr(c1, LATCH);
    tb_client_close(c1);
    printf("latch: %d waiters held until the last of %d counts (one from a "
           "closed session), then all through; timeouts; cancel; a reset while "
           "waiting\n",
           NWAITER, NCOUNT);
    printf("latch: ok\n");
    return 0;
}

/* latch_op PATH N count [hold] | await MS: counts down (prints COUNTED,
 * then with "hold" waits to be killed), or awaits (prints RESULT <error
 * name>). */
int t_latch_op(int argc, char **argv)
{
    struct tb_client *c;
    struct tb_latch *l;
    int rc;

    CHECK(argc >= 3);
    c = rt_connect(rt_hosts, RT_SESSION_MS);
    CHECK_RC(tb_latch_new(&l, c, argv[0], atoi(argv[1])), 0);
    if (strcmp(argv[2], "count") == 0) {
        CHECK_RC(tb_latch_count_down_sync(l), 0);
        printf("COUNTED\n");
        while (argc > 3 && strcmp(argv[3], "hold") == 0)
            rt_sleep_ms(1000); /* until killed */
    } else {
        rc = tb_latch_await_sync(l, argc > 3 ? atoi(argv[3]) : -1);
        printf("RESULT %s\n", tb_errname(rc));
    }
    tb_latch_free(l);
    tb_client_close(c);
    return 0;
}
