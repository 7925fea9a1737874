/* Barriers.  The barrier: waiters are held while the node exists and all
 * let go by its removal; set and remove are idempotent; timeouts (sync,
 * async, one look).  The double barrier: members arriving one after
 * another, each its own session, none gets past enter before the last
 * arrived, none past leave before the last began to leave; a timed-out
 * enter leaves no node; nothing left once all are out.  The member
 * process the kill -9 and Curator scripts run (dmember). */
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rt.h"
#include "rt_async.h"
#include "tests.h"

#define BAR  "/rt/bar/gate"
#define DBAR "/rt/dbar"
#define N    4

static void barrier(struct tb_client *c1, struct tb_client *c2)
{
    struct rt_done d1, d2;
    int64_t start;

    CHECK_RC(tb_barrier_wait_sync(c2, BAR, 0), 0); /* not set: through */
    CHECK_RC(tb_barrier_set_sync(c1, BAR), 0);
    CHECK_RC(tb_barrier_set_sync(c1, BAR), 0);
    CHECK_RC(tb_barrier_wait_sync(c2, BAR, 0), TB_ETIMEDOUT);
    start = rt_now_ms();
    CHECK_RC(tb_barrier_wait_sync(c2, BAR, 300), TB_ETIMEDOUT);
    CHECK(rt_now_ms() - start >= 290);
    rt_done_init(&d1);
    CHECK_RC(tb_barrier_wait(c2, BAR, 200, rt_done_cb, &d1), 0);
    CHECK_RC(rt_done_wait(&d1, 5000), TB_ETIMEDOUT);

    /* Two waiters, held until the removal. */
    rt_done_init(&d1);
    rt_done_init(&d2);
    CHECK_RC(tb_barrier_wait(c2, BAR, -1, rt_done_cb, &d1), 0);
    CHECK_RC(tb_barrier_wait(c1, BAR, 20000, rt_done_cb, &d2), 0);
    rt_sleep_ms(200);
    CHECK(!rt_acq_done(&d1) && !rt_acq_done(&d2));
    CHECK_RC(tb_barrier_remove_sync(c1, BAR), 0);
    CHECK_RC(rt_done_wait(&d1, 5000), 0);
    CHECK_RC(rt_done_wait(&d2, 5000), 0);
    CHECK_RC(tb_barrier_remove_sync(c1, BAR), 0);
    CHECK_RC(tb_barrier_set_sync(c1, "/"), TB_EINVAL);
    printf("barrier: held while set (sync, async, one look), both waiters "
           "let go by the removal; set and remove idempotent\n");
}

struct member {
    struct tb_client *c;
    int i;
    int64_t arrive, entered, leave, left;
};

static void *member_main(void *arg)
{
    struct member *m = arg;
    struct tb_dbarrier *b;

    CHECK_RC(tb_dbarrier_new(&b, m->c, DBAR, N), 0);
    rt_sleep_ms(100 * m->i); /* arrive one after another */
    m->arrive = rt_now_ms();
    CHECK_RC(tb_dbarrier_enter_sync(b, 20000), 0);
    m->entered = rt_now_ms();
    CHECK(tb_dbarrier_entered(b));
    rt_sleep_ms(100 * (N - m->i)); /* leave in the other order */
    m->leave = rt_now_ms();
    CHECK_RC(tb_dbarrier_leave_sync(b, 20000), 0);
    m->left = rt_now_ms();
    CHECK(!tb_dbarrier_entered(b));
    tb_dbarrier_free(b);
    return NULL;
}

static void double_barrier(struct tb_client *c1)
{
    struct member m[N];
    pthread_t th[N];
    struct tb_dbarrier *b;
    struct rt_done d;
    int64_t last_arrive = 0, first_entered = -1, last_leave = 0,
            first_left = -1;
    int i;

    for (i = 0; i < N; i++) {
        m[i].c = rt_connect(rt_hosts, RT_SESSION_MS);
        m[i].i = i;
        CHECK(pthread_create(&th[i], NULL, member_main, &m[i]) == 0);
    }
    for (i = 0; i < N; i++)
        pthread_join(th[i], NULL);
    for (i = 0; i < N; i++) {
        if (m[i].arrive > last_arrive)
            last_arrive = m[i].arrive;
        if (first_entered < 0 || m[i].entered < first_entered)
            first_entered = m[i].entered;
        if (m[i].leave > last_leave)
            last_leave = m[i].leave;
        if (first_left < 0 || m[i].left < first_left)
            first_left = m[i].left;
        tb_client_close(m[i].c);
    }
    CHECK(first_entered >= last_arrive);
    CHECK(first_left >= last_leave);
    CHECK(rt_nchildren(c1, DBAR) == 0);
    printf("double barrier: %d members; first through enter %lld ms after "
           "the last arrived, first through leave %lld ms after the last "
           "began to leave; nothing left\n",
           N, (long long)(first_entered - last_arrive),
           (long long)(first_left - last_leave));

    /* Alone in a barrier of N: enter times out (sync, async) and leaves
     * no node; one operation at a time. */
    CHECK_RC(tb_dbarrier_new(&b, c1, DBAR, N), 0);
    CHECK_RC(tb_dbarrier_enter_sync(b, 300), TB_ETIMEDOUT);
    CHECK(rt_nchildren(c1, DBAR) == 0);
    rt_done_init(&d);
    CHECK_RC(tb_dbarrier_enter(b, 200, rt_done_cb, &d), 0);
    CHECK_RC(tb_dbarrier_enter(b, 200, rt_done_cb, &d), TB_EINVAL);
    CHECK_RC(rt_done_wait(&d, 5000), TB_ETIMEDOUT);
    CHECK(rt_nchildren(c1, DBAR) == 0);
    /* Freed while waiting: ECANCELED, node gone. */
    rt_done_init(&d);
    CHECK_RC(tb_dbarrier_enter(b, -1, rt_done_cb, &d), 0);
    CHECK(rt_wait_nchildren(c1, DBAR, 1, 5000) == 1);
    tb_dbarrier_free(b);
    CHECK_RC(rt_done_wait(&d, 5000), TB_ECANCELED);
    CHECK(rt_wait_nchildren(c1, DBAR, 0, 5000) == 0);
    CHECK_RC(tb_dbarrier_new(&b, c1, DBAR, 0), TB_EINVAL);
    printf("double barrier: a lone member's enter times out or is "
           "cancelled, its node removed\n");
}

int t_barrier(int argc, char **argv)
{
    struct tb_client *c1 = rt_connect(rt_hosts, RT_SESSION_MS);
    struct tb_client *c2 = rt_connect(rt_hosts, RT_SESSION_MS);

    (void)argc;
    (void)argv;
    rt_rmr(c1, "/rt/bar");
    rt_rmr(c1, DBAR);
    barrier(c1, c2);
    double_barrier(c1);
    tb_client_close(c1);
    tb_client_close(c2);
    printf("barrier: ok\n");
    return 0;
}

/* Wall-clock ms, to compare with the scripts' `date +%s%3N`. */
static long long wall_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* dmember PATH N [GO_FILE]: one member of a double barrier of N; prints
 * ENTERED <ms>, waits for GO_FILE to exist if given, leaves, LEFT <ms>
 * (wall clock). */
int t_dmember(int argc, char **argv)
{
    struct tb_client *c;
    struct tb_dbarrier *b;
    int64_t end;

    CHECK(argc >= 2);
    c = rt_connect(rt_hosts, RT_SESSION_MS);
    CHECK_RC(tb_dbarrier_new(&b, c, argv[0], atoi(argv[1])), 0);
    CHECK_RC(tb_dbarrier_enter_sync(b, 60000), 0);
    printf("ENTERED %lld\n", wall_ms());
    end = rt_now_ms() + 60000;
    while (argc > 2 && access(argv[2], F_OK) != 0 && rt_now_ms() < end)
        rt_sleep_ms(20);
    CHECK_RC(tb_dbarrier_leave_sync(b, 60000), 0);
    printf("LEFT %lld\n", wall_ms());
    tb_dbarrier_free(b);
    tb_client_close(c);
    return 0;
}

/* barrier_op PATH set|remove|wait [TIMEOUT_MS]: prints the result. */
int t_barrier_op(int argc, char **argv)
{
    struct tb_client *c;
    int rc;

    CHECK(argc >= 2);
    c = rt_connect(rt_hosts, RT_SESSION_MS);
    if (strcmp(argv[1], "set") == 0)
        rc = tb_barrier_set_sync(c, argv[0]);
    else if (strcmp(argv[1], "remove") == 0)
        rc = tb_barrier_remove_sync(c, argv[0]);
    else
        rc = tb_barrier_wait_sync(c, argv[0], argc > 2 ? atoi(argv[2]) : -1);
    printf("BARRIER %s\n", tb_errname(rc));
    tb_client_close(c);
    return 0;
}
