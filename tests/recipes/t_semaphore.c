/* Semaphore: Curator's V2 layout (PATH/locks, PATH/leases); threads in
 * separate sessions never hold more than MAX leases at once (and do reach
 * MAX); a timed-out or cancelled acquisition leaves no lease or gate node
 * behind; leases carry rising tokens; one handle holds several leases;
 * cancels racing synchronous acquisitions' deadlines (a give-up meeting an
 * acquisition that ends at that moment: under the sanitizers, no use of a
 * freed lease). */
#include <string.h>

#include "rt.h"
#include "rt_async.h"
#include "tests.h"

#define PATH "/rt/sem"

static int max_leases;
static int inside, peak, bad, total;

static void *sem_thread(void *arg)
{
    struct tb_client *c = rt_connect(rt_hosts, RT_SESSION_MS);
    struct tb_semaphore *s;
    int i;

    (void)arg;
    CHECK_RC(tb_semaphore_new(&s, c, PATH, max_leases, NULL), 0);
    for (i = 0; i < 6; i++) {
        struct tb_lease *l;
        int n, p;
        CHECK_RC(tb_semaphore_acquire_sync(s, 60000, &l), 0);
        CHECK(tb_lease_token(l) > 0);
        n = __atomic_add_fetch(&inside, 1, __ATOMIC_SEQ_CST);
        if (n > max_leases)
            __atomic_add_fetch(&bad, 1, __ATOMIC_SEQ_CST);
        p = __atomic_load_n(&peak, __ATOMIC_SEQ_CST);
        while (n > p &&
               !__atomic_compare_exchange_n(&peak, &p, n, 0, __ATOMIC_SEQ_CST,
                                            __ATOMIC_SEQ_CST))
            ;
        /* Long enough that the limit is reached even when a freed slot
         * takes a slow server tens of ms to grant (10 ms was not, once,
         * against ZooKeeper under the parallel ASan run). */
        rt_sleep_ms(50);
        __atomic_sub_fetch(&inside, 1, __ATOMIC_SEQ_CST);
        __atomic_add_fetch(&total, 1, __ATOMIC_SEQ_CST);
        CHECK_RC(tb_lease_state(l), TB_LOCK_HELD);
        CHECK_RC(tb_lease_release_sync(l), 0);
    }
    tb_semaphore_free(s);
    tb_client_close(c);
    return NULL;
}

static int curator_lease(const char *n)
{
    return strncmp(n, "_c_", 3) == 0 && strlen(n) == 3 + 36 + 1 + 6 + 10 &&
           strncmp(n + 40, "lease-", 6) == 0;
}

static void edges(struct tb_client *c1, struct tb_client *c2)
{
    struct tb_semaphore *s1, *s2;
    struct tb_lease *l[8], *x;
    struct tb_strings v;
    struct rt_acq a;
    int i;
    int64_t last = 0;

    CHECK_RC(tb_semaphore_new(&s1, c1, PATH, max_leases, NULL), 0);
    CHECK_RC(tb_semaphore_new(&s2, c2, PATH, max_leases, NULL), 0);
    for (i = 0; i < max_leases; i++) { /* one handle, several leases */
        CHECK_RC(tb_semaphore_acquire_sync(s1, 5000, &l[i]), 0);
        CHECK(tb_lease_token(l[i]) > last);
        last = tb_lease_token(l[i]);
    }
    CHECK_RC(tb_get_children_sync(c1, PATH "/leases", NULL, NULL, &v), 0);
    CHECK(v.count == max_leases);
    for (i = 0; i < v.count; i++)
        CHECK(curator_lease(v.v[i]));
    tb_strings_free(&v);
    printf("semaphore layout: %s/leases/_c_<uuid>-lease-<seq>, gate %s/locks\n",
           PATH, PATH);

    /* Full: a timeout and a cancel leave nothing behind. */
    CHECK_RC(tb_semaphore_acquire_sync(s2, 0, &x), TB_ETIMEDOUT);
    CHECK(x == NULL);
    CHECK_RC(tb_semaphore_acquire_sync(s2, 300, &x), TB_ETIMEDOUT);
    CHECK(rt_nchildren(c1, PATH "/leases") == max_leases);
    CHECK(rt_nchildren(c1, PATH "/locks") == 0);
    rt_acq_init(&a);
    CHECK_RC(tb_semaphore_acquire(s2, -1, rt_lease_cb, &a), 0);
    CHECK(rt_wait_nchildren(c1, PATH "/leases", max_leases + 1, 5000) ==
          max_leases + 1);
    CHECK(rt_nchildren(c1, PATH "/locks") == 1);
    CHECK_RC(tb_semaphore_cancel(s2), 0);
    CHECK_RC(rt_acq_wait(&a, 5000), TB_ECANCELED);
    CHECK(rt_wait_nchildren(c1, PATH "/leases", max_leases, 5000) ==
          max_leases);
    CHECK(rt_wait_nchildren(c1, PATH "/locks", 0, 5000) == 0);
    printf("semaphore: full; timeout and cancel leave no node\n");

    /* A waiter gets the lease given back. */
    rt_acq_init(&a);
    CHECK_RC(tb_semaphore_acquire(s2, 5000, rt_lease_cb, &a), 0);
    rt_sleep_ms(200);
    CHECK(!rt_acq_done(&a));
    CHECK_RC(tb_lease_release_sync(l[0]), 0);
    CHECK_RC(rt_acq_wait(&a, 5000), 0);
    x = a.ptr;
    CHECK(tb_lease_token(x) > last);
    CHECK_RC(tb_lease_release_sync(x), 0);
    for (i = 1; i < max_leases; i++)
        CHECK_RC(tb_lease_release_sync(l[i]), 0);
    CHECK(rt_nchildren(c1, PATH "/leases") == 0);
    tb_semaphore_free(s1);
    tb_semaphore_free(s2);
}

struct race {
    struct tb_semaphore *s;
    int stop;
};

static void *canceller(void *arg)
{
    struct race *r = arg;
    int i = 0;

    /* 1-3 ms apart, as the deadlines: some meet them */
    while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
        rt_sleep_ms(1 + i++ % 3);
        tb_semaphore_cancel(r->s);
    }
    return NULL;
}

/* Acquisitions of a full semaphore, each given up at 1-3 ms by its own
 * wait, while another thread cancels whatever is pending. */
static void cancel_races_deadline(struct tb_client *c)
{
    struct race r = {0};
    struct tb_lease *held, *l;
    pthread_t th;
    int i, rc, timedout = 0, cancelled = 0;

    CHECK_RC(tb_semaphore_new(&r.s, c, "/rt/semrace", 1, NULL), 0);
    CHECK_RC(tb_semaphore_acquire_sync(r.s, 5000, &held), 0);
    CHECK(pthread_create(&th, NULL, canceller, &r) == 0);
    for (i = 0; i < 300; i++) {
        rc = tb_semaphore_acquire_sync(r.s, 1 + i % 3, &l);
        CHECK(rc == TB_ETIMEDOUT || rc == TB_ECANCELED);
        timedout += rc == TB_ETIMEDOUT;
        cancelled += rc == TB_ECANCELED;
    }
    __atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
    pthread_join(th, NULL);
    CHECK_RC(tb_lease_release_sync(held), 0);
    CHECK(rt_wait_nchildren(c, "/rt/semrace/leases", 0, 5000) == 0);
    tb_semaphore_free(r.s);
    printf("semaphore: 300 acquisitions given up at their deadline while "
           "cancelled from another thread: %d timed out, %d cancelled\n",
           timedout, cancelled);
}

int t_semaphore(int argc, char **argv)
{
    struct tb_client *c1, *c2;
    pthread_t th[32];
    int i, n;

    CHECK(argc >= 2);
    n = atoi(argv[0]);
    max_leases = atoi(argv[1]);
    CHECK(n > 0 && n <= 32 && max_leases > 0 && max_leases < 8);
    c1 = rt_connect(rt_hosts, RT_SESSION_MS);
    c2 = rt_connect(rt_hosts, RT_SESSION_MS);
    rt_rmr(c1, PATH);
    edges(c1, c2);
    cancel_races_deadline(c1);
    for (i = 0; i < n; i++)
        CHECK(pthread_create(&th[i], NULL, sem_thread, NULL) == 0);
    for (i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    printf("semaphore: %d leases by %d sessions, at most %d at once "
           "(limit %d), %d violations\n",
           total, n, peak, max_leases, bad);
    CHECK(bad == 0 && peak <= max_leases && total == 6 * n);
    CHECK(n < max_leases || peak == max_leases);
    CHECK(rt_nchildren(c1, PATH "/leases") == 0);
    tb_client_close(c1);
    tb_client_close(c2);
    printf("semaphore: ok\n");
    return 0;
}
