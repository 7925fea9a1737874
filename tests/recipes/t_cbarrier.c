/* Cyclic barrier: 3 parties in their own sessions, arriving 100 ms apart,
 * pass two generations, none before the last arrival of its generation,
 * and only the fresh generation's node is left; 4 parties of a barrier of
 * 2 arriving at once pass as two generations; a timeout breaks the
 * generation for a party waiting beside it (TB_EBROKEN), every await is
 * then refused until a reset; a reset breaks the parties waiting; free
 * cancels an await and breaks the others; the asynchronous timeout; no
 * party node is left after any of these; 12 parties arriving one by one
 * take at most 3 wake-ups each in all (herd freedom); a generation a dead
 * party left behind is removed by the next arrival. */
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "rt.h"
#include "rt_async.h"
#include "tests.h"

#define CB     "/rt/cbar"
#define N      3
#define ROUNDS 2
#define GEN0   CB "/gen-0000000000"

struct party {
    struct tb_client *c;
    const char *path;
    int i, parties, rounds, timeout_ms;
    int64_t arrive[ROUNDS], passed[ROUNDS];
    int rc;
    struct tb_recipe_stats st;
};

static void *party_main(void *arg)
{
    struct party *p = arg;
    struct tb_cbarrier *b;
    int r;

    CHECK_RC(tb_cbarrier_new(&b, p->c, p->path, p->parties), 0);
    for (r = 0; r < p->rounds; r++) {
        rt_sleep_ms(100 * p->i); /* arrive one after another */
        p->arrive[r] = rt_now_ms();
        p->rc = tb_cbarrier_await_sync(b, p->timeout_ms);
        p->passed[r] = rt_now_ms();
        if (p->rc != 0)
            break;
    }
    tb_cbarrier_stats(b, &p->st);
    tb_cbarrier_free(b);
    return NULL;
}

static void start(struct party *p, pthread_t *th, int i, int parties,
                  int rounds, int timeout_ms)
{
    memset(p, 0, sizeof *p);
    p->c = rt_connect(rt_hosts, RT_SESSION_MS);
    p->path = CB;
    p->i = i;
    p->parties = parties;
    p->rounds = rounds;
    p->timeout_ms = timeout_ms;
    CHECK(pthread_create(th, NULL, party_main, p) == 0);
}

static void finish(struct party *p, pthread_t th)
{
    pthread_join(th, NULL);
    tb_client_close(p->c);
}

/* Nodes of the current generation, which must be the only one. */
static int current_parties(struct tb_client *c)
{
    struct tb_strings v;
    char path[128];
    int n;

    CHECK_RC(tb_get_children_sync(c, CB, NULL, NULL, &v), 0);
    for (n = 0; v.count != 1 && n < v.count; n++) {
        snprintf(path, sizeof path, CB "/%s", v.v[n]);
        fprintf(stderr, "left: %s (%d children)\n", v.v[n],
                rt_nchildren(c, path));
    }
    CHECK(v.count == 1);
    snprintf(path, sizeof path, CB "/%s", v.v[0]);
    tb_strings_free(&v);
    n = rt_nchildren(c, path);
    return n;
}

static void generations(struct tb_client *c1)
{
    struct party p[N];
    pthread_t th[N];
    int64_t last, first;
    int i, r;

    for (i = 0; i < N; i++)
        start(&p[i], &th[i], i, N, ROUNDS, 20000);
    for (i = 0; i < N; i++)
        finish(&p[i], th[i]);
    for (r = 0; r < ROUNDS; r++) {
        last = 0;
        first = -1;
        for (i = 0; i < N; i++) {
            CHECK_RC(p[i].rc, 0);
            last = p[i].arrive[r] > last ? p[i].arrive[r] : last;
            if (first < 0 || p[i].passed[r] < first)
                first = p[i].passed[r];
        }
        CHECK(first >= last);
        printf("cyclic barrier: generation %d: %d parties, the first through "
               "%lld ms after the last arrived\n",
               r, N, (long long)(first - last));
    }
    CHECK(rt_nchildren_with(c1, CB, "gen-0000000002") == 1);
    CHECK(current_parties(c1) == 0);
}

/* 4 parties of a barrier of 2, all at once: two generations. */
static void more_than_parties(struct tb_client *c1)
{
    struct party p[4];
    pthread_t th[4];
    int i;

    rt_rmr(c1, CB);
    for (i = 0; i < 4; i++) {
        start(&p[i], &th[i], 0, 2, 1, 20000);
    }
    for (i = 0; i < 4; i++) {
        finish(&p[i], th[i]);
        CHECK_RC(p[i].rc, 0);
    }
    CHECK(rt_nchildren_with(c1, CB, "gen-0000000002") == 1);
    CHECK(current_parties(c1) == 0);
    printf("cyclic barrier: 4 parties of a barrier of 2 at once passed as "
           "two generations\n");
}

/* A generation whose last party died before cleaning up (made here by
 * hand: passed, only its "end" left) is removed by the next arrival, also
 * once the generation after it is gone (cleaned up in its turn): the
 * current one, two above, shows it is not current. */
static void stale_generation(struct tb_client *c1)
{
    struct tb_cbarrier *b;
    int rc, tries = 0;

    rt_rmr(c1, CB);
    /* /rt, a container emptied by the removal, may be reaped meanwhile */
    do {
        tb_create_sync(c1, "/rt", NULL, 0, NULL, TB_PERSISTENT, 0, NULL, 0,
                       NULL);
        rc = tb_create_sync(c1, CB, NULL, 0, NULL, TB_PERSISTENT, 0, NULL, 0,
                            NULL);
    } while (rc == TB_ENONODE && ++tries < 10);
    CHECK_RC(rc, 0);
    CHECK_RC(tb_create_sync(c1, GEN0, NULL, 0, NULL, TB_PERSISTENT, 0, NULL, 0,
                            NULL),
             0);
    CHECK_RC(tb_create_sync(c1, GEN0 "/end", "passed", 6, NULL, TB_PERSISTENT,
                            0, NULL, 0, NULL),
             0);
    CHECK_RC(tb_create_sync(c1, CB "/gen-0000000002", NULL, 0, NULL,
                            TB_PERSISTENT, 0, NULL, 0, NULL),
             0);
    CHECK_RC(tb_cbarrier_new(&b, c1, CB, 1), 0);
    CHECK_RC(tb_cbarrier_await_sync(b, 5000), 0);
    tb_cbarrier_free(b);
    CHECK(rt_wait_nchildren(c1, CB, 1, 5000) == 1);
    CHECK(rt_nchildren_with(c1, CB, "gen-0000000003") == 1);
    printf("cyclic barrier: a generation a dead party left behind removed by "
           "the next arrival\n");
}

/* Waits until `n` parties wait in the current generation. */
static void wait_parties(struct tb_cbarrier *b, int n)
{
    int64_t end = rt_now_ms() + 10000;
    int w = -1;

    while (rt_now_ms() < end) {
        CHECK_RC(tb_cbarrier_waiting_sync(b, &w), 0);
        if (w == n)
            return;
        rt_sleep_ms(20);
    }
    fprintf(stderr, "%d parties wait, want %d\n", w, n);
    exit(1);
}

/* Herd freedom: HERD parties arriving one after another; an arrival wakes
 * the lowest party only, the trip each party once: at most 3 wake-ups per
 * party in all, where parties all watching the children would take
 * HERD * (HERD - 1) / 2 for the arrivals alone. */
#define HERD 12
static void herd(struct tb_client *c1)
{
    struct party p[HERD];
    pthread_t th[HERD];
    struct tb_cbarrier *b;
    uint64_t wakeups = 0, looks = 0;
    int i;

    rt_rmr(c1, CB);
    CHECK_RC(tb_cbarrier_new(&b, c1, CB, HERD), 0);
    for (i = 0; i < HERD; i++) {
        start(&p[i], &th[i], 0, HERD, 1, 30000);
        if (i < HERD - 1)
            wait_parties(b, i + 1);
    }
    for (i = 0; i < HERD; i++) {
        finish(&p[i], th[i]);
        CHECK_RC(p[i].rc, 0);
        wakeups += p[i].st.wakeups;
        looks += p[i].st.children_reads;
    }
    tb_cbarrier_free(b);
    printf("cyclic barrier: %d parties arriving one by one: %llu wake-ups "
           "and %llu looks in all (all watching the children: %d wake-ups "
           "for the arrivals alone)\n",
           HERD, (unsigned long long)wakeups, (unsigned long long)looks,
           HERD * (HERD - 1) / 2);
    CHECK(wakeups <= 3 * HERD);
}

static void breaking(struct tb_client *c1)
{
    struct tb_cbarrier *b;
    struct party p[2];
    pthread_t th[2];
    struct rt_done d;
    int64_t t0;
    int w;

    rt_rmr(c1, CB);
    CHECK_RC(tb_cbarrier_new(&b, c1, CB, N), 0);
    /* A timeout breaks it for the party beside; then refused until a
     * reset. */
    start(&p[0], &th[0], 0, N, 1, 20000);
    wait_parties(b, 1);
    t0 = rt_now_ms();
    CHECK_RC(tb_cbarrier_await_sync(b, 300), TB_ETIMEDOUT);
    CHECK(rt_now_ms() - t0 >= 290);
    finish(&p[0], th[0]);
    CHECK_RC(p[0].rc, TB_EBROKEN);
    CHECK_RC(tb_cbarrier_waiting_sync(b, &w), TB_EBROKEN);
    CHECK(w == 0);
    CHECK_RC(tb_cbarrier_await_sync(b, 5000), TB_EBROKEN);
    CHECK(rt_nchildren_with(c1, GEN0, "party-") == 0);
    CHECK_RC(tb_cbarrier_reset_sync(b), 0);
    CHECK_RC(tb_cbarrier_waiting_sync(b, &w), 0);
    CHECK(rt_wait_nchildren(c1, CB, 1, 5000) == 1); /* the broken one gone */
    printf("cyclic barrier: a timeout broke the generation for the party "
           "waiting beside; awaits refused until the reset\n");

    /* A reset breaks the parties waiting. */
    start(&p[0], &th[0], 0, N, 1, 20000);
    start(&p[1], &th[1], 0, N, 1, 20000);
    wait_parties(b, 2);
    CHECK_RC(tb_cbarrier_reset_sync(b), 0);
    finish(&p[0], th[0]);
    finish(&p[1], th[1]);
    CHECK_RC(p[0].rc, TB_EBROKEN);
    CHECK_RC(p[1].rc, TB_EBROKEN);
    CHECK(rt_wait_nchildren(c1, CB, 1, 5000) == 1);
    CHECK(current_parties(c1) == 0);
    printf("cyclic barrier: a reset broke the 2 parties waiting\n");

    /* Free while waiting: ECANCELED, and broken for the other. */
    start(&p[0], &th[0], 0, N, 1, 20000);
    wait_parties(b, 1);
    rt_done_init(&d);
    CHECK_RC(tb_cbarrier_await(b, -1, rt_done_cb, &d), 0);
    CHECK_RC(tb_cbarrier_await(b, -1, rt_done_cb, &d), TB_EINVAL);
    wait_parties(b, 2);
    tb_cbarrier_free(b);
    CHECK_RC(rt_done_wait(&d, 5000), TB_ECANCELED);
    finish(&p[0], th[0]);
    CHECK_RC(p[0].rc, TB_EBROKEN);

    /* The asynchronous timeout, after a reset. */
    CHECK_RC(tb_cbarrier_new(&b, c1, CB, N), 0);
    CHECK_RC(tb_cbarrier_reset_sync(b), 0);
    rt_done_init(&d);
    CHECK_RC(tb_cbarrier_await(b, 200, rt_done_cb, &d), 0);
    CHECK_RC(rt_done_wait(&d, 5000), TB_ETIMEDOUT);
    CHECK_RC(tb_cbarrier_reset_sync(b), 0);
    CHECK(rt_wait_nchildren(c1, CB, 1, 5000) == 1);
    CHECK(current_parties(c1) == 0);
    tb_cbarrier_free(b);
    CHECK_RC(tb_cbarrier_new(&b, c1, CB, 0), TB_EINVAL);
    CHECK_RC(tb_cbarrier_new(&b, c1, "/", 2), TB_EINVAL);
    printf("cyclic barrier: free cancels and breaks; asynchronous timeout; "
           "no party node left\n");
}

int t_cbarrier(int argc, char **argv)
{
    struct tb_client *c1 = rt_connect(rt_hosts, RT_SESSION_MS);

    (void)argc;
    (void)argv;
    rt_rmr(c1, CB);
    generations(c1);
    more_than_parties(c1);
    breaking(c1);
    herd(c1);
    stale_generation(c1);
    rt_rmr(c1, CB);
    tb_client_close(c1);
    printf("cbarrier: ok\n");
    return 0;
}

/* Wall-clock ms, to compare with the scripts' `date +%s%3N`. */
static long long wall_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* cparty PATH N await TIMEOUT_MS | reset | waiting: one party's await
 * (prints RESULT <error name> <wall ms>), a reset, or the count waiting
 * (WAITING <n> <error name>). */
int t_cparty(int argc, char **argv)
{
    struct tb_client *c;
    struct tb_cbarrier *b;
    int rc, w = 0;

    CHECK(argc >= 3);
    c = rt_connect(rt_hosts, RT_SESSION_MS);
    CHECK_RC(tb_cbarrier_new(&b, c, argv[0], atoi(argv[1])), 0);
    if (strcmp(argv[2], "await") == 0) {
        rc = tb_cbarrier_await_sync(b, argc > 3 ? atoi(argv[3]) : -1);
        printf("RESULT %s %lld\n", tb_errname(rc), wall_ms());
    } else if (strcmp(argv[2], "reset") == 0) {
        rc = tb_cbarrier_reset_sync(b);
        printf("RESET %s\n", tb_errname(rc));
    } else {
        rc = tb_cbarrier_waiting_sync(b, &w);
        printf("WAITING %d %s\n", w, tb_errname(rc));
    }
    tb_cbarrier_free(b);
    tb_client_close(c);
    return 0;
}
