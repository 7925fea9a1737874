/* Multi-lock: all members held with their own tokens; a multi-lock that
 * cannot get every member gives back the ones it took (all or nothing),
 * also when one it took is lost while it waits for the next;
 * two threads locking the same set given in opposite orders neither
 * deadlock nor overlap; release frees everything. */
#include <string.h>

#include "rt.h"
#include "rt_async.h"
#include "tests.h"

static int inside, bad, rounds;

static void *cross_thread(void *arg)
{
    static const char *fwd[] = {"/rt/ml/x", "/rt/ml/y", "/rt/ml/z"};
    static const char *rev[] = {"/rt/ml/z", "/rt/ml/y", "/rt/ml/x"};
    struct tb_client *c = rt_connect(rt_hosts, RT_SESSION_MS);
    struct tb_multilock *ml;
    int i;

    CHECK_RC(tb_multilock_new(&ml, c, arg ? fwd : rev, 3, NULL), 0);
    for (i = 0; i < 15; i++) {
        CHECK_RC(tb_multilock_lock_sync(ml, 30000), 0);
        if (__atomic_add_fetch(&inside, 1, __ATOMIC_SEQ_CST) != 1)
            __atomic_add_fetch(&bad, 1, __ATOMIC_SEQ_CST);
        rt_sleep_ms(1);
        __atomic_sub_fetch(&inside, 1, __ATOMIC_SEQ_CST);
        __atomic_add_fetch(&rounds, 1, __ATOMIC_SEQ_CST);
        CHECK_RC(tb_multilock_unlock_sync(ml), 0);
    }
    tb_multilock_free(ml);
    tb_client_close(c);
    return NULL;
}

static int m2_states; /* m2's state callbacks */

static void count_state(int state, int64_t token, void *data)
{
    (void)state;
    (void)token;
    (void)data;
    __atomic_add_fetch(&m2_states, 1, __ATOMIC_SEQ_CST);
}

int t_multilock(int argc, char **argv)
{
    static const char *set1[] = {"/rt/ml/b", "/rt/ml/a", "/rt/ml/c"};
    static const char *set2[] = {"/rt/ml/b", "/rt/ml/0"};
    static const char *unset[] = {"/rt/ml/b", NULL};
    struct tb_client *c1 = rt_connect(rt_hosts, RT_SESSION_MS);
    struct tb_client *c2 = rt_connect(rt_hosts, RT_SESSION_MS);
    struct tb_multilock *m1, *m2;
    struct tb_mutex *single;
    struct tb_lock_options o2 = {.state_cb = count_state};
    struct rt_done d;
    pthread_t th[2];
    int64_t t;
    int i, states;

    (void)argc;
    (void)argv;
    rt_rmr(c1, "/rt/ml");
    CHECK_RC(tb_multilock_new(&m1, c1, unset, 2, NULL), TB_EINVAL);
    CHECK_RC(tb_multilock_new(&m1, c1, set1, 3, NULL), 0);
    CHECK_RC(tb_multilock_new(&m2, c2, set2, 2, &o2), 0);
    CHECK_RC(tb_multilock_lock_sync(m1, 5000), 0);
    CHECK_RC(tb_multilock_state(m1), TB_LOCK_HELD);
    for (i = 0; i < 3; i++)
        CHECK(tb_multilock_token(m1, i) > 0);
    /* Taken in sorted order: a, b, c. */
    CHECK(tb_multilock_token(m1, 1) < tb_multilock_token(m1, 0) &&
          tb_multilock_token(m1, 0) < tb_multilock_token(m1, 2));

    /* m2 gets /rt/ml/0 first, then cannot get b: it must give 0 back. */
    CHECK_RC(tb_multilock_lock_sync(m2, 400), TB_ETIMEDOUT);
    CHECK(rt_nchildren(c1, "/rt/ml/0") == 0);
    CHECK(rt_nchildren(c1, "/rt/ml/b") == 1);
    CHECK_RC(tb_mutex_new(&single, c2, "/rt/ml/0", NULL), 0);
    CHECK_RC(tb_mutex_trylock_sync(single, &t), 0);
    CHECK_RC(tb_mutex_unlock_sync(single), 0);
    tb_mutex_free(single);
    CHECK_RC(tb_multilock_state(m2), TB_LOCK_UNLOCKED);
    printf("multilock: a partial acquisition gave its member back\n");

    /* Asynchronous: m2 waits; m1's release lets it through. */
    rt_done_init(&d);
    CHECK_RC(tb_multilock_lock(m2, -1, rt_done_cb, &d), 0);
    rt_sleep_ms(200);
    CHECK(!rt_acq_done(&d));
    CHECK_RC(tb_multilock_unlock_sync(m1), 0);
    CHECK_RC(rt_done_wait(&d, 5000), 0);
    CHECK(tb_multilock_token(m2, 0) > 0 && tb_multilock_token(m2, 1) > 0);
    CHECK_RC(tb_multilock_unlock_sync(m2), 0);
    CHECK_RC(tb_multilock_unlock_sync(m2), TB_ENOTHELD);

    /* Cancel while waiting gives back what was taken. */
    CHECK_RC(tb_multilock_lock_sync(m1, 5000), 0);
    rt_done_init(&d);
    CHECK_RC(tb_multilock_lock(m2, -1, rt_done_cb, &d), 0);
    CHECK(rt_wait_nchildren(c1, "/rt/ml/b", 2, 5000) == 2);
    CHECK_RC(tb_multilock_cancel(m2), 0);
    CHECK_RC(rt_done_wait(&d, 5000), TB_ECANCELED);
    CHECK(rt_wait_nchildren(c1, "/rt/ml/0", 0, 5000) == 0);
    CHECK(rt_nchildren(c1, "/rt/ml/b") == 1);

    /* A member taken is lost while the call waits for the next: the call
     * fails (TB_ELOCKLOST) and gives back what it took, rather than
     * report success over a lost member.  That is the call's to say: no
     * state callback tells of a multi-lock that was never held. */
    states = __atomic_load_n(&m2_states, __ATOMIC_SEQ_CST);
    rt_done_init(&d);
    CHECK_RC(tb_multilock_lock(m2, -1, rt_done_cb, &d), 0);
    CHECK(rt_wait_nchildren(c1, "/rt/ml/b", 2, 5000) == 2);
    CHECK(rt_nchildren(c1, "/rt/ml/0") == 1);
    rt_rmr(c1, "/rt/ml/0"); /* an operator deletes m2's node there */
    CHECK_RC(rt_done_wait(&d, 5000), TB_ELOCKLOST);
    CHECK(rt_wait_nchildren(c1, "/rt/ml/b", 1, 5000) == 1);
    CHECK(__atomic_load_n(&m2_states, __ATOMIC_SEQ_CST) == states);
    CHECK_RC(tb_multilock_unlock_sync(m1), 0);
    tb_multilock_free(m1);
    tb_multilock_free(m2);
    printf("multilock: a member lost while the call waited for the next: "
           "TB_ELOCKLOST, nothing left\n");

    /* Same set, opposite orders, two threads: no deadlock, no overlap. */
    CHECK(pthread_create(&th[0], NULL, cross_thread, (void *)1) == 0);
    CHECK(pthread_create(&th[1], NULL, cross_thread, NULL) == 0);
    pthread_join(th[0], NULL);
    pthread_join(th[1], NULL);
    printf("multilock: %d rounds from two threads with opposite orders, "
           "%d overlaps\n",
           rounds, bad);
    CHECK(bad == 0 && rounds == 30);
    for (i = 0; i < 3; i++) {
        char p[32];
        snprintf(p, sizeof p, "/rt/ml/%c", "abc"[i]);
        CHECK(rt_nchildren(c1, p) == 0);
    }
    tb_client_close(c1);
    tb_client_close(c2);
    printf("multilock: ok\n");
    return 0;
}
