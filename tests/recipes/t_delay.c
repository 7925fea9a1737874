/* Lock-delay: a clean release hands over at once (well within the
 * delay); a holder whose node went without a release (deleted under it,
 * as its session's expiry would) makes the next holder wait the delay,
 * while a lock without lock-delay on the same path is granted at once; a
 * waiter whose timeout ends within the delay gives up, leaving the record
 * so the next one waits too, also once the emptied lock has stood past the
 * servers' container reaping; free during the delay cancels; non-fair locks
 * refuse it.  The processes of the kill -9 script (ldhold, ldwait). */
#include <string.h>
#include <time.h>

#include "rt.h"
#include "rt_async.h"
#include "tests.h"

#define LOCK  "/rt/ld/lock"
#define DELAY 1500

static struct tb_mutex *new_lock(struct tb_client *c, int delay)
{
    struct tb_lock_options o = {.lock_delay_ms = delay};
    struct tb_mutex *m;

    CHECK_RC(tb_mutex_new(&m, c, LOCK, &o), 0);
    return m;
}

/* Deletes m's node from another session: the holder's node goes without a
 * release. */
static void kill_node(struct tb_client *other, struct tb_mutex *m)
{
    char node[512];

    CHECK_RC(tb_mutex_node(m, node, sizeof node), 0);
    CHECK_RC(tb_delete_sync(other, node, -1), 0);
}

/* The thread a callback ran on, and the lock states a handle was told. */
struct seen {
    struct rt_acq a;
    pthread_t thread;
    int states;
};

static void seen_acq(int rc, int64_t token, void *data)
{
    struct seen *s = data;

    s->thread = pthread_self(); /* published by rt_acq_set's mutex */
    rt_acq_set(&s->a, rc, token, NULL);
}

static void seen_stat(struct tb_client *c, int rc, const struct tb_stat *st,
                      void *data)
{
    (void)c;
    (void)st;
    seen_acq(rc, 0, data);
}

static void seen_state(int state, int64_t token, void *data)
{
    (void)state;
    (void)token;
    __atomic_add_fetch(&((struct seen *)data)->states, 1, __ATOMIC_RELAXED);
}

/* During the delay the grant is not the caller's yet: ACQUIRING, no token,
 * no hold (nothing to release or fence with), no state callback, a second
 * acquire refused; its node deleted then fails the acquisition at once
 * (not at the delay's end) with TB_ELOCKLOST, on the client's I/O thread
 * like every callback.  m1 on c1 is the holder that dies; a reentrant
 * acquire of it first is a plain one more hold, shown at once. */
static void lost_in_delay(struct tb_client *c1, struct tb_client *c2,
                          struct tb_mutex *m1)
{
    struct seen io = {0}, w = {0};
    struct tb_lock_options o = {
        .lock_delay_ms = DELAY, .state_cb = seen_state, .data = &w};
    struct tb_mutex *m;
    struct tb_multi *ops = tb_multi_new();
    struct rt_acq again;
    int64_t t, t0;

    CHECK(ops != NULL);
    rt_acq_init(&io.a);
    CHECK_RC(tb_exists(c2, "/", NULL, NULL, seen_stat, &io), 0);
    CHECK_RC(rt_acq_wait(&io.a, 5000), 0);
    CHECK_RC(tb_mutex_new(&m, c2, LOCK, &o), 0);
    CHECK_RC(tb_mutex_lock_sync(m1, 10000, &t), 0);
    rt_acq_init(&again);
    CHECK_RC(tb_mutex_lock(m1, -1, rt_acq_cb, &again), 0);
    CHECK(tb_mutex_holds(m1) == 2);
    CHECK_RC(tb_mutex_state(m1), TB_LOCK_HELD);
    CHECK_RC(rt_acq_wait(&again, 5000), 0);
    CHECK(again.token == t);
    CHECK_RC(tb_mutex_unlock_sync(m1), 0); /* one hold left */
    rt_acq_init(&w.a);
    CHECK_RC(tb_mutex_lock(m, -1, seen_acq, &w), 0);
    CHECK(rt_wait_nchildren(c1, LOCK, 2, 5000) == 2);
    kill_node(c1, m1);
    rt_sleep_ms(300); /* granted, its record read: in the delay */
    CHECK(!rt_acq_done(&w.a));
    CHECK_RC(tb_mutex_state(m), TB_LOCK_ACQUIRING);
    CHECK(tb_mutex_token(m) == 0);
    CHECK_RC(tb_mutex_lock_sync(m, 0, &t), TB_EINVAL);
    CHECK(tb_mutex_holds(m) == 0);
    CHECK_RC(tb_mutex_unlock(m, NULL, NULL), TB_ENOTHELD);
    CHECK_RC(tb_mutex_fence(m, ops), TB_ENOTHELD);
    t0 = rt_now_ms();
    kill_node(c1, m);
    CHECK_RC(rt_acq_wait(&w.a, 5000), TB_ELOCKLOST);
    printf("lock-delay: lost in its delay, told %lld ms later\n",
           (long long)(rt_now_ms() - t0));
    CHECK(rt_now_ms() - t0 < DELAY / 2);
    CHECK(pthread_equal(w.thread, io.thread));
    CHECK(__atomic_load_n(&w.states, __ATOMIC_RELAXED) == 0);
    CHECK_RC(tb_mutex_unlock_sync(m1), TB_ELOCKLOST);
    tb_mutex_free(m);
    tb_multi_free(ops);
}

/* Lock-delay is the fair mutex's alone: every other recipe refuses it,
 * rather than granting without the delay asked for. */
static void refused_elsewhere(struct tb_client *c)
{
    static const char *const two[] = {LOCK, LOCK "2"};
    struct tb_lock_options d = {.lock_delay_ms = 5};
    struct tb_rwlock *rw;
    struct tb_semaphore *s;
    struct tb_election *e;
    struct tb_multilock *ml;
    struct tb_mutex *m;

    CHECK_RC(tb_rwlock_new(&rw, c, LOCK, &d), TB_EINVAL);
    CHECK_RC(tb_semaphore_new(&s, c, LOCK, 2, &d), TB_EINVAL);
    CHECK_RC(tb_election_new(&e, c, LOCK, &d), TB_EINVAL);
    CHECK_RC(tb_multilock_new(&ml, c, two, 2, &d), TB_EINVAL);
    d.lock_delay_ms = -1;
    CHECK_RC(tb_mutex_new(&m, c, LOCK, &d), TB_EINVAL);
}

int t_delay(int argc, char **argv)
{
    struct tb_client *c1 = rt_connect(rt_hosts, RT_SESSION_MS);
    struct tb_client *c2 = rt_connect(rt_hosts, RT_SESSION_MS);
    struct tb_lock_options nf = {.kind = TB_LOCK_NONFAIR, .lock_delay_ms = 5};
    struct tb_mutex *m1, *m2, *plain;
    struct rt_acq a;
    int64_t t, t0, took;
    char *v;
    size_t n;

    (void)argc;
    (void)argv;
    rt_rmr(c1, "/rt/ld");
    CHECK_RC(tb_mutex_new(&plain, c1, LOCK, &nf), TB_EINVAL);
    refused_elsewhere(c1);

    /* A clean release: at once. */
    m1 = new_lock(c1, DELAY);
    m2 = new_lock(c2, DELAY);
    CHECK_RC(tb_mutex_lock_sync(m1, 5000, &t), 0);
    rt_acq_init(&a);
    CHECK_RC(tb_mutex_lock(m2, -1, rt_acq_cb, &a), 0);
    CHECK(rt_wait_nchildren(c1, LOCK, 2, 5000) == 2);
    t0 = rt_now_ms();
    CHECK_RC(tb_mutex_unlock_sync(m1), 0);
    CHECK_RC(rt_acq_wait(&a, 5000), 0);
    took = rt_now_ms() - t0;
    printf("lock-delay: a clean release handed over in %lld ms\n",
           (long long)took);
    CHECK(took < DELAY / 2);
    CHECK_RC(tb_get_data_sync(c1, LOCK, NULL, NULL, &v, &n, NULL), 0);
    CHECK(n > 5 && memcmp(v, "held:", 5) == 0);
    tb_free(v);

    /* The holder's node goes without a release: the next waits. */
    rt_acq_init(&a);
    CHECK_RC(tb_mutex_lock(m1, -1, rt_acq_cb, &a), 0);
    CHECK(rt_wait_nchildren(c1, LOCK, 2, 5000) == 2);
    t0 = rt_now_ms();
    kill_node(c1, m2);
    CHECK_RC(rt_acq_wait(&a, DELAY + 5000), 0);
    took = rt_now_ms() - t0;
    printf("lock-delay: after a holder died, granted %lld ms later (delay "
           "%d ms)\n",
           (long long)took, DELAY);
    CHECK(took >= DELAY - 20);
    CHECK_RC(tb_mutex_unlock_sync(m2), TB_ELOCKLOST);

    /* A give-up within the delay keeps the record: the next waits too. */
    kill_node(c2, m1);
    CHECK_RC(tb_mutex_lock_sync(m2, 300, &t), TB_ETIMEDOUT);
    CHECK(rt_nchildren(c1, LOCK) == 0 ||
          rt_wait_nchildren(c1, LOCK, 0, 2000) == 0);
    /* The lock is empty now: past two of the servers' container checks
     * (1 s in these tests) PATH, and the record in it, must still be
     * there. */
    rt_sleep_ms(2100);
    CHECK_RC(tb_exists_sync(c1, LOCK, NULL, NULL, NULL), 0);
    /* Without lock-delay: granted at once on the same path. */
    plain = new_lock(c2, 0);
    t0 = rt_now_ms();
    CHECK_RC(tb_mutex_lock_sync(plain, 5000, &t), 0);
    CHECK(rt_now_ms() - t0 < DELAY / 2);
    CHECK_RC(tb_mutex_unlock_sync(plain), 0);
    tb_mutex_free(plain);
    t0 = rt_now_ms();
    CHECK_RC(tb_mutex_lock_sync(m2, 10000, &t), 0);
    CHECK(rt_now_ms() - t0 >= DELAY - 20);
    CHECK_RC(tb_mutex_unlock_sync(m1), TB_ELOCKLOST);

    /* Freed during the delay: ECANCELED, node gone. */
    kill_node(c1, m2);
    tb_mutex_free(m2);
    m2 = new_lock(c2, DELAY);
    rt_acq_init(&a);
    CHECK_RC(tb_mutex_lock(m2, -1, rt_acq_cb, &a), 0);
    rt_sleep_ms(200);
    CHECK(!rt_acq_done(&a));
    tb_mutex_free(m2);
    CHECK_RC(rt_acq_wait(&a, 5000), TB_ECANCELED);
    CHECK(rt_wait_nchildren(c1, LOCK, 0, 5000) == 0);
    lost_in_delay(c1, c2, m1);
    tb_mutex_free(m1);
    rt_rmr(c1, "/rt/ld");
    tb_client_close(c1);
    tb_client_close(c2);
    printf("lock-delay: ok\n");
    return 0;
}

static long long wall_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ldhold PATH DELAY_MS: holds until killed ("HELD"). */
int t_ldhold(int argc, char **argv)
{
    struct tb_lock_options o = {0};
    struct tb_client *c;
    struct tb_mutex *m;
    int64_t t;

    CHECK(argc >= 2);
    o.lock_delay_ms = atoi(argv[1]);
    c = rt_connect(rt_hosts, RT_SESSION_MS);
    CHECK_RC(tb_mutex_new(&m, c, argv[0], &o), 0);
    CHECK_RC(tb_mutex_lock_sync(m, 30000, &t), 0);
    printf("HELD %lld\n", (long long)t);
    rt_sleep_ms(120000);
    return 0;
}

/* ldwait PATH DELAY_MS: waits, prints ACQUIRED <wall ms>, releases. */
int t_ldwait(int argc, char **argv)
{
    struct tb_lock_options o = {0};
    struct tb_client *c;
    struct tb_mutex *m;
    int64_t t;

    CHECK(argc >= 2);
    o.lock_delay_ms = atoi(argv[1]);
    c = rt_connect(rt_hosts, RT_SESSION_MS);
    CHECK_RC(tb_mutex_new(&m, c, argv[0], &o), 0);
    printf("WAITING\n");
    CHECK_RC(tb_mutex_lock_sync(m, 60000, &t), 0);
    printf("ACQUIRED %lld\n", wall_ms());
    CHECK_RC(tb_mutex_unlock_sync(m), 0);
    tb_mutex_free(m);
    tb_client_close(c);
    return 0;
}
