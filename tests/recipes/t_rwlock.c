/* Read-write lock: readers share, a queued writer holds back later
 * readers (queue order), writers exclude everyone, downgrade works (and
 * is refused once another writer queued behind ours), upgrade is refused, both
 * sides are reentrant, nothing is left behind; then threads (one session each)
 * mixing reads and writes never see a writer overlap anyone. */
#include <string.h>

#include "rt.h"
#include "rt_async.h"
#include "tests.h"

#define PATH "/rt/rw/lock"

static void scenario(struct tb_client **c)
{
    struct tb_rwlock *l[4];
    struct rt_acq w3, r4;
    int64_t t1, t2, t, tw;
    int i;

    for (i = 0; i < 4; i++)
        CHECK_RC(tb_rwlock_new(&l[i], c[i], PATH, NULL), 0);
    CHECK_RC(tb_mutex_lock_sync(tb_rwlock_read(l[0]), 5000, &t1), 0);
    CHECK_RC(tb_mutex_lock_sync(tb_rwlock_read(l[1]), 5000, &t2), 0);
    CHECK(rt_nchildren_with(c[0], PATH, "-__READ__") == 2);
    CHECK_RC(tb_mutex_trylock_sync(tb_rwlock_write(l[2]), &t), TB_ETIMEDOUT);
    CHECK(rt_nchildren(c[0], PATH) == 2);

    /* A writer queues; a reader arriving after it waits behind it. */
    rt_acq_init(&w3);
    CHECK_RC(tb_mutex_lock(tb_rwlock_write(l[2]), -1, rt_acq_cb, &w3), 0);
    CHECK(rt_wait_nchildren(c[0], PATH, 3, 5000) == 3);
    CHECK(rt_nchildren_with(c[0], PATH, "-__WRIT__") == 1);
    rt_acq_init(&r4);
    CHECK_RC(tb_mutex_lock(tb_rwlock_read(l[3]), -1, rt_acq_cb, &r4), 0);
    CHECK(rt_wait_nchildren(c[0], PATH, 4, 5000) == 4);
    rt_sleep_ms(200);
    CHECK(!rt_acq_done(&w3) && !rt_acq_done(&r4));

    /* Reentrant read, then the readers leave: the writer gets it. */
    CHECK_RC(tb_mutex_lock_sync(tb_rwlock_read(l[0]), 5000, &t), 0);
    CHECK(t == t1 && tb_mutex_holds(tb_rwlock_read(l[0])) == 2);
    CHECK_RC(tb_mutex_unlock_sync(tb_rwlock_read(l[0])), 0);
    CHECK_RC(tb_mutex_unlock_sync(tb_rwlock_read(l[0])), 0);
    rt_sleep_ms(100);
    CHECK(!rt_acq_done(&w3));
    CHECK_RC(tb_mutex_unlock_sync(tb_rwlock_read(l[1])), 0);
    CHECK_RC(rt_acq_wait(&w3, 5000), 0);
    tw = w3.token;
    CHECK(tw > t1 && tw > t2);
    rt_sleep_ms(100);
    CHECK(!rt_acq_done(&r4));
    CHECK_RC(tb_mutex_trylock_sync(tb_rwlock_read(l[0]), &t), TB_ETIMEDOUT);

    /* Reentrant write; downgrade: read through the writer's handle, then
     * release the write side; the waiting reader joins. */
    CHECK_RC(tb_mutex_lock_sync(tb_rwlock_write(l[2]), 5000, &t), 0);
    CHECK(t == tw);
    CHECK_RC(tb_mutex_unlock_sync(tb_rwlock_write(l[2])), 0);
    CHECK_RC(tb_mutex_lock_sync(tb_rwlock_read(l[2]), 1000, &t), 0);
    CHECK_RC(tb_mutex_state(tb_rwlock_read(l[2])), TB_LOCK_HELD);
    CHECK(!rt_acq_done(&r4));
    CHECK_RC(tb_mutex_unlock_sync(tb_rwlock_write(l[2])), 0);
    CHECK_RC(rt_acq_wait(&r4, 5000), 0);
    CHECK_RC(tb_mutex_state(tb_rwlock_read(l[2])), TB_LOCK_HELD);
    printf("rwlock: downgrade write -> read, waiting reader joined\n");

    /* Upgrade would deadlock: refused. */
    CHECK_RC(tb_mutex_lock_sync(tb_rwlock_write(l[3]), 1000, &t), TB_EINVAL);
    CHECK_RC(tb_mutex_unlock_sync(tb_rwlock_read(l[2])), 0);
    CHECK_RC(tb_mutex_unlock_sync(tb_rwlock_read(l[3])), 0);
    CHECK(rt_nchildren(c[0], PATH) == 0);

    /* A downgrade with another writer queued behind ours: once ours went
     * that writer would hold beside our reader, and waiting for it would
     * wait for ourselves: refused, nothing left of the read side. */
    CHECK_RC(tb_mutex_lock_sync(tb_rwlock_write(l[0]), 5000, &t), 0);
    rt_acq_init(&w3);
    CHECK_RC(tb_mutex_lock(tb_rwlock_write(l[1]), -1, rt_acq_cb, &w3), 0);
    CHECK(rt_wait_nchildren(c[0], PATH, 2, 5000) == 2);
    CHECK_RC(tb_mutex_lock_sync(tb_rwlock_read(l[0]), 5000, &t), TB_EINVAL);
    CHECK(rt_wait_nchildren(c[0], PATH, 2, 5000) == 2);
    CHECK_RC(tb_mutex_unlock_sync(tb_rwlock_write(l[0])), 0);
    CHECK_RC(rt_acq_wait(&w3, 5000), 0);
    CHECK_RC(tb_mutex_unlock_sync(tb_rwlock_write(l[1])), 0);
    CHECK(rt_nchildren(c[0], PATH) == 0);
    printf("rwlock: a downgrade behind which another writer queued: "
           "refused\n");
    for (i = 0; i < 4; i++)
        tb_rwlock_free(l[i]);
}

struct mix {
    int readers, writers, bad, reads, writes, max_readers;
};

static struct mix mix;

static void *mix_thread(void *arg)
{
    long id = (long)arg;
    struct tb_client *c = rt_connect(rt_hosts, RT_SESSION_MS);
    struct tb_rwlock *l;
    unsigned seed = (unsigned)id * 7919u;
    int i;

    CHECK_RC(tb_rwlock_new(&l, c, "/rt/rw/mix", NULL), 0);
    for (i = 0; i < 12; i++) {
        int write = (rand_r(&seed) % 3) == 0;
        struct tb_mutex *m = write ? tb_rwlock_write(l) : tb_rwlock_read(l);
        CHECK_RC(tb_mutex_lock_sync(m, 60000, NULL), 0);
        if (write) {
            if (__atomic_add_fetch(&mix.writers, 1, __ATOMIC_SEQ_CST) != 1 ||
                __atomic_load_n(&mix.readers, __ATOMIC_SEQ_CST) != 0)
                __atomic_add_fetch(&mix.bad, 1, __ATOMIC_SEQ_CST);
            __atomic_add_fetch(&mix.writes, 1, __ATOMIC_SEQ_CST);
            rt_sleep_ms(2);
            __atomic_sub_fetch(&mix.writers, 1, __ATOMIC_SEQ_CST);
        } else {
            int r = __atomic_add_fetch(&mix.readers, 1, __ATOMIC_SEQ_CST);
            int mx = __atomic_load_n(&mix.max_readers, __ATOMIC_SEQ_CST);
            if (__atomic_load_n(&mix.writers, __ATOMIC_SEQ_CST) != 0)
                __atomic_add_fetch(&mix.bad, 1, __ATOMIC_SEQ_CST);
            while (r > mx && !__atomic_compare_exchange_n(
                                 &mix.max_readers, &mx, r, 0, __ATOMIC_SEQ_CST,
                                 __ATOMIC_SEQ_CST))
                ;
            __atomic_add_fetch(&mix.reads, 1, __ATOMIC_SEQ_CST);
            rt_sleep_ms(4);
            __atomic_sub_fetch(&mix.readers, 1, __ATOMIC_SEQ_CST);
        }
        CHECK_RC(tb_mutex_unlock_sync(m), 0);
    }
    tb_rwlock_free(l);
    tb_client_close(c);
    return NULL;
}

int t_rwlock(int argc, char **argv)
{
    struct tb_client *c[4];
    pthread_t th[6];
    long i;

    (void)argc;
    (void)argv;
    for (i = 0; i < 4; i++)
        c[i] = rt_connect(rt_hosts, RT_SESSION_MS);
    rt_rmr(c[0], "/rt/rw");
    scenario(c);
    for (i = 0; i < 6; i++)
        CHECK(pthread_create(&th[i], NULL, mix_thread, (void *)i) == 0);
    for (i = 0; i < 6; i++)
        pthread_join(th[i], NULL);
    printf("rwlock mix: %d reads (up to %d at once), %d writes, %d "
           "violations\n",
           mix.reads, mix.max_readers, mix.writes, mix.bad);
    CHECK(mix.bad == 0 && mix.reads + mix.writes == 72);
    CHECK(rt_nchildren(c[0], "/rt/rw/mix") == 0);
    for (i = 0; i < 4; i++)
        tb_client_close(c[i]);
    printf("rwlock: ok\n");
    return 0;
}
