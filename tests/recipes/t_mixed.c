/* One path, one lock, whatever the kind (flock's rule), and a path that
 * holds what a lock cannot queue with is refused, never granted:
 *   - a mutex excludes readers and writers of the read-write layout on the
 *     same path, and queues with them in sequence order;
 *   - kazoo's lock nodes (<hex>__lock__<seq>, __rlock__<seq>, made here
 *     by plain creates as kazoo makes them) are holders like ours;
 *   - a child of any other layout (a semaphore's parents, an election's
 *     candidate, a kazoo Semaphore's lease, a plain node) refuses every
 *     lock kind with TB_EFOREIGNLOCK and a sentence naming it, and leaves
 *     no node of ours behind;
 *   - a semaphore or an election on a path holding a lock is refused too,
 *     and the other way round;
 *   - a fair lock on a non-fair lock's node, and a non-fair lock on a
 *     queue's parent, are refused.
 * `try` and `hold` are building blocks for run.sh's kazoo scenario. */
#include <string.h>
#include <unistd.h>

#include "rt.h"
#include "rt_async.h"
#include "tests.h"

#define BASE "/rt/mix"

/* A kazoo-style contender: <32 hex>__lock__<seq> or ...__rlock__<seq>. */
static void kazoo_node(struct tb_client *c, const char *path, const char *name,
                       char *out, size_t cap)
{
    char p[512];

    snprintf(p, sizeof p, "%s/0123456789abcdef0123456789abcdef%s", path, name);
    CHECK_RC(tb_create_sync(c, p, "kazoo", 5, NULL, TB_EPHEMERAL_SEQUENTIAL, 0,
                            out, cap, NULL),
             0);
}

static int try_lock(struct tb_mutex *m)
{
    int64_t t;
    int rc = tb_mutex_trylock_sync(m, &t);

    if (rc == 0)
        CHECK_RC(tb_mutex_unlock_sync(m), 0);
    return rc;
}

/* Two readers hold: a mutex waits, a reader after it waits behind it,
 * and while the mutex holds neither side of the read-write lock gets in. */
static void mutex_and_rw(struct tb_client **c)
{
    const char *path = BASE "/rw";
    struct tb_rwlock *r1, *r2, *r3;
    struct tb_mutex *m;
    struct rt_acq a;
    int64_t t1, t2, t;

    CHECK_RC(tb_rwlock_new(&r1, c[0], path, NULL), 0);
    CHECK_RC(tb_rwlock_new(&r2, c[1], path, NULL), 0);
    CHECK_RC(tb_rwlock_new(&r3, c[3], path, NULL), 0);
    CHECK_RC(tb_mutex_new(&m, c[2], path, NULL), 0);
    CHECK_RC(tb_mutex_lock_sync(tb_rwlock_read(r1), 5000, &t1), 0);
    CHECK_RC(tb_mutex_lock_sync(tb_rwlock_read(r2), 5000, &t2), 0);
    CHECK_RC(tb_mutex_trylock_sync(m, &t), TB_ETIMEDOUT);
    CHECK(rt_nchildren(c[0], path) == 2);
    rt_acq_init(&a);
    CHECK_RC(tb_mutex_lock(m, -1, rt_acq_cb, &a), 0);
    CHECK(rt_wait_nchildren(c[0], path, 3, 5000) == 3);
    CHECK_RC(try_lock(tb_rwlock_read(r3)), TB_ETIMEDOUT);
    CHECK_RC(tb_mutex_unlock_sync(tb_rwlock_read(r1)), 0);
    rt_sleep_ms(100);
    CHECK(!rt_acq_done(&a));
    CHECK_RC(tb_mutex_unlock_sync(tb_rwlock_read(r2)), 0);
    CHECK_RC(rt_acq_wait(&a, 5000), 0);
    CHECK(a.token > t1 && a.token > t2);
    CHECK_RC(try_lock(tb_rwlock_read(r3)), TB_ETIMEDOUT);
    CHECK_RC(try_lock(tb_rwlock_write(r3)), TB_ETIMEDOUT);
    CHECK_RC(tb_mutex_unlock_sync(m), 0);
    CHECK_RC(tb_mutex_lock_sync(tb_rwlock_write(r3), 5000, &t), 0);
    CHECK_RC(tb_mutex_trylock_sync(m, &t1), TB_ETIMEDOUT);
    CHECK_RC(tb_mutex_unlock_sync(tb_rwlock_write(r3)), 0);
    CHECK(rt_nchildren(c[0], path) == 0);
    tb_mutex_free(m);
    tb_rwlock_free(r1);
    tb_rwlock_free(r2);
    tb_rwlock_free(r3);
    printf("mixed: a mutex waits for readers and excludes both sides\n");
}

/* kazoo's nodes are holders: a ReadLock shares with our readers only, a
 * Lock excludes everyone, and its release lets a waiting mutex in. */
static void kazoo_names(struct tb_client **c)
{
    const char *path = BASE "/kz";
    struct tb_rwlock *rw;
    struct tb_mutex *m;
    struct rt_acq a;
    char node[512];

    CHECK_RC(tb_rwlock_new(&rw, c[0], path, NULL), 0);
    CHECK_RC(tb_mutex_new(&m, c[0], path, NULL), 0);
    tb_create_sync(c[3], path, NULL, 0, NULL, TB_PERSISTENT, 0, NULL, 0, NULL);
    kazoo_node(c[3], path, "__rlock__", node, sizeof node);
    CHECK_RC(try_lock(tb_rwlock_read(rw)), 0);
    CHECK_RC(try_lock(m), TB_ETIMEDOUT);
    CHECK_RC(try_lock(tb_rwlock_write(rw)), TB_ETIMEDOUT);
    CHECK_RC(tb_delete_sync(c[3], node, -1), 0);
    kazoo_node(c[3], path, "__lock__", node, sizeof node);
    CHECK_RC(try_lock(tb_rwlock_read(rw)), TB_ETIMEDOUT);
    rt_acq_init(&a);
    CHECK_RC(tb_mutex_lock(m, -1, rt_acq_cb, &a), 0);
    CHECK(rt_wait_nchildren(c[0], path, 2, 5000) == 2);
    rt_sleep_ms(100);
    CHECK(!rt_acq_done(&a));
    CHECK_RC(tb_delete_sync(c[3], node, -1), 0);
    CHECK_RC(rt_acq_wait(&a, 5000), 0);
    CHECK_RC(tb_mutex_unlock_sync(m), 0);
    CHECK(rt_nchildren(c[0], path) == 0);
    tb_mutex_free(m);
    tb_rwlock_free(rw);
    tb_delete_sync(c[3], path, -1);
    printf("mixed: kazoo's Lock and ReadLock nodes hold like ours\n");
}

/* The lock kinds on `path`, where `child` (of another layout) is: each is
 * refused with a sentence naming the child, and leaves nothing behind. */
static void refused_all(struct tb_client *c, const char *path,
                        const char *child, const char *what)
{
    struct tb_rwlock *rw;
    struct tb_mutex *m, *v[3];
    char why[1024];
    int i, before = rt_nchildren(c, path);

    CHECK_RC(tb_mutex_new(&m, c, path, NULL), 0);
    CHECK_RC(tb_rwlock_new(&rw, c, path, NULL), 0);
    v[0] = m;
    v[1] = tb_rwlock_read(rw);
    v[2] = tb_rwlock_write(rw);
    for (i = 0; i < 3; i++) {
        CHECK_RC(tb_mutex_conflict(v[i], why, sizeof why), TB_ENONODE);
        CHECK_RC(tb_mutex_lock_sync(v[i], i == 0 ? 3000 : 0, NULL),
                 TB_EFOREIGNLOCK);
        CHECK_RC(tb_mutex_conflict(v[i], why, sizeof why), 0);
        if (strstr(why, child) == NULL || strstr(why, what) == NULL) {
            fprintf(stderr, "conflict '%s' does not name %s (%s)\n", why, child,
                    what);
            exit(1);
        }
        CHECK(rt_wait_nchildren(c, path, before, 5000) == before);
    }
    printf("mixed: refused: %s\n", why);
    tb_mutex_free(m);
    tb_rwlock_free(rw);
}

static void foreign_children(struct tb_client **c)
{
    static const struct {
        const char *name;
        int mode;
        const char *what;
    } cases[] = {
        {"leases", TB_PERSISTENT, "semaphore"},
        {"_c_0-latch-", TB_EPHEMERAL_SEQUENTIAL, "election"},
        {"0123456789abcdef0123456789abcdef", TB_EPHEMERAL, "kazoo Semaphore"},
        {"config", TB_PERSISTENT, "no lock layout"},
    };
    char path[256], child[512], made[512];
    size_t i;

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(path, sizeof path, BASE "/f%zu", i);
        CHECK_RC(tb_create_sync(c[3], path, NULL, 0, NULL, TB_PERSISTENT, 0,
                                NULL, 0, NULL),
                 0);
        snprintf(child, sizeof child, "%s/%s", path, cases[i].name);
        CHECK_RC(tb_create_sync(c[3], child, NULL, 0, NULL, cases[i].mode, 0,
                                made, sizeof made, NULL),
                 0);
        refused_all(c[0], path, strrchr(made, '/') + 1, cases[i].what);
        rt_rmr(c[3], path);
    }
}

/* A semaphore and a lock on one path: whichever comes second is refused. */
static void semaphore_and_lock(struct tb_client **c)
{
    const char *path = BASE "/sem";
    struct tb_semaphore *s;
    struct tb_lease *l;
    struct tb_mutex *m;
    char why[1024];

    CHECK_RC(tb_semaphore_new(&s, c[0], path, 2, NULL), 0);
    CHECK_RC(tb_mutex_new(&m, c[1], path, NULL), 0);
    CHECK_RC(tb_mutex_lock_sync(m, 5000, NULL), 0);
    CHECK_RC(tb_semaphore_acquire_sync(s, 3000, &l), TB_EFOREIGNLOCK);
    CHECK_RC(tb_semaphore_conflict(s, why, sizeof why), 0);
    CHECK(strstr(why, "-lock-") != NULL && strstr(why, "mutex") != NULL);
    printf("mixed: semaphore refused: %s\n", why);
    CHECK(rt_wait_nchildren(c[0], BASE "/sem/leases", 0, 5000) == 0);
    CHECK(rt_wait_nchildren(c[0], BASE "/sem/locks", 0, 5000) == 0);
    CHECK_RC(tb_mutex_unlock_sync(m), 0);
    CHECK_RC(tb_semaphore_acquire_sync(s, 3000, &l), 0);
    CHECK_RC(tb_mutex_lock_sync(m, 3000, NULL), TB_EFOREIGNLOCK);
    CHECK_RC(tb_mutex_conflict(m, why, sizeof why), 0);
    CHECK(strstr(why, "semaphore") != NULL);
    printf("mixed: lock refused: %s\n", why);
    CHECK_RC(tb_lease_release_sync(l), 0);
    tb_mutex_free(m);
    tb_semaphore_free(s);
}

/* A lock held, then an election on its path: the candidate is out of the
 * race (TB_EFOREIGNLOCK), its node deleted, and the lock held still.  The
 * other way round is foreign_children's. */
static void election_and_lock(struct tb_client **c)
{
    const char *path = BASE "/el";
    struct tb_election *e;
    struct tb_mutex *m;
    int64_t end;

    CHECK_RC(tb_mutex_new(&m, c[1], path, NULL), 0);
    CHECK_RC(tb_mutex_lock_sync(m, 5000, NULL), 0);
    CHECK_RC(tb_election_new(&e, c[0], path, NULL), 0);
    CHECK_RC(tb_election_join(e), 0);
    end = rt_now_ms() + 5000;
    while (tb_election_error(e) == 0) {
        CHECK(rt_now_ms() < end);
        rt_sleep_ms(5);
    }
    CHECK_RC(tb_election_error(e), TB_EFOREIGNLOCK);
    CHECK_RC(tb_election_state(e), TB_LOCK_LOST);
    CHECK(rt_wait_nchildren(c[0], path, 1, 5000) == 1);
    CHECK_RC(tb_mutex_state(m), TB_LOCK_HELD);
    printf("mixed: an election on a held lock's path refused\n");
    tb_election_free(e);
    CHECK_RC(tb_mutex_unlock_sync(m), 0);
    tb_mutex_free(m);
}

static void nonfair_and_fair(struct tb_client **c)
{
    struct tb_lock_options nf = {.kind = TB_LOCK_NONFAIR};
    struct tb_mutex *a, *b;
    char why[1024];

    /* A non-fair holder's node cannot be a queue's parent. */
    CHECK_RC(tb_mutex_new(&a, c[0], BASE "/nf", &nf), 0);
    CHECK_RC(tb_mutex_new(&b, c[1], BASE "/nf", NULL), 0);
    CHECK_RC(tb_mutex_lock_sync(a, 5000, NULL), 0);
    CHECK_RC(tb_mutex_lock_sync(b, 3000, NULL), TB_EFOREIGNLOCK);
    CHECK_RC(tb_mutex_conflict(b, why, sizeof why), 0);
    CHECK(strstr(why, "ephemeral") != NULL);
    printf("mixed: fair on non-fair refused: %s\n", why);
    CHECK_RC(tb_mutex_unlock_sync(a), 0);
    tb_mutex_free(a);
    tb_mutex_free(b);

    /* A queue's parent is no non-fair lock. */
    CHECK_RC(tb_mutex_new(&a, c[0], BASE "/q", NULL), 0);
    CHECK_RC(tb_mutex_new(&b, c[1], BASE "/q", &nf), 0);
    CHECK_RC(tb_mutex_lock_sync(a, 5000, NULL), 0);
    CHECK_RC(tb_mutex_trylock_sync(b, NULL), TB_EFOREIGNLOCK);
    CHECK_RC(tb_mutex_lock_sync(b, 3000, NULL), TB_EFOREIGNLOCK);
    CHECK_RC(tb_mutex_conflict(b, why, sizeof why), 0);
    CHECK(strstr(why, "parent of 1 node") != NULL);
    printf("mixed: non-fair on a queue refused: %s\n", why);
    CHECK_RC(tb_mutex_unlock_sync(a), 0);
    tb_mutex_free(a);
    tb_mutex_free(b);
    /* Childless, it may be an emptied container going away: waited for. */
    CHECK_RC(tb_create_sync(c[3], BASE "/p", NULL, 0, NULL, TB_PERSISTENT, 0,
                            NULL, 0, NULL),
             0);
    CHECK_RC(tb_mutex_new(&b, c[1], BASE "/p", &nf), 0);
    CHECK_RC(tb_mutex_lock_sync(b, 300, NULL), TB_ETIMEDOUT);
    tb_mutex_free(b);
    CHECK_RC(tb_delete_sync(c[3], BASE "/p", -1), 0);
}

int t_mixed(int argc, char **argv)
{
    struct tb_client *c[4];
    int i;

    (void)argc;
    (void)argv;
    for (i = 0; i < 4; i++)
        c[i] = rt_connect(rt_hosts, RT_SESSION_MS);
    rt_rmr(c[0], BASE);
    tb_create_sync(c[0], "/rt", NULL, 0, NULL, TB_PERSISTENT, 0, NULL, 0, NULL);
    CHECK_RC(tb_create_sync(c[0], BASE, NULL, 0, NULL, TB_PERSISTENT, 0, NULL,
                            0, NULL),
             0);
    mutex_and_rw(c);
    kazoo_names(c);
    foreign_children(c);
    semaphore_and_lock(c);
    election_and_lock(c);
    nonfair_and_fair(c);
    for (i = 0; i < 4; i++)
        tb_client_close(c[i]);
    printf("mixed: ok\n");
    return 0;
}

/* ---- building blocks for the kazoo scenario ---- */

/* KIND: mutex, read, write, nonfair or sem (a semaphore of 2). */
struct any_lock {
    struct tb_mutex *m;
    struct tb_rwlock *rw;
    struct tb_semaphore *s;
    struct tb_lease *l;
};

static void any_new(struct any_lock *k, struct tb_client *c, const char *path,
                    const char *kind)
{
    struct tb_lock_options nf = {.kind = TB_LOCK_NONFAIR};

    memset(k, 0, sizeof *k);
    if (strcmp(kind, "sem") == 0) {
        CHECK_RC(tb_semaphore_new(&k->s, c, path, 2, NULL), 0);
    } else if (strcmp(kind, "read") == 0 || strcmp(kind, "write") == 0) {
        CHECK_RC(tb_rwlock_new(&k->rw, c, path, NULL), 0);
        k->m = kind[0] == 'r' ? tb_rwlock_read(k->rw) : tb_rwlock_write(k->rw);
    } else {
        CHECK(strcmp(kind, "mutex") == 0 || strcmp(kind, "nonfair") == 0);
        CHECK_RC(tb_mutex_new(&k->m, c, path, kind[0] == 'n' ? &nf : NULL), 0);
    }
}

static int any_lock(struct any_lock *k, int timeout_ms, char *why, size_t cap)
{
    int rc = k->s != NULL ? tb_semaphore_acquire_sync(k->s, timeout_ms, &k->l)
                          : tb_mutex_lock_sync(k->m, timeout_ms, NULL);

    why[0] = '\0';
    if (rc == TB_EFOREIGNLOCK && k->s != NULL)
        tb_semaphore_conflict(k->s, why, cap);
    else if (rc == TB_EFOREIGNLOCK)
        tb_mutex_conflict(k->m, why, cap);
    return rc;
}

static void any_free(struct any_lock *k)
{
    if (k->l != NULL)
        CHECK_RC(tb_lease_release_sync(k->l), 0);
    else if (k->m != NULL && tb_mutex_holds(k->m) > 0)
        CHECK_RC(tb_mutex_unlock_sync(k->m), 0);
    tb_semaphore_free(k->s);
    if (k->rw != NULL)
        tb_rwlock_free(k->rw);
    else
        tb_mutex_free(k->m);
}

/* try PATH KIND [TIMEOUT_MS]: one acquisition; prints "RESULT <code>
 * [what refused it]" and releases at once. */
int t_try(int argc, char **argv)
{
    struct tb_client *c;
    struct any_lock k;
    char why[1024];
    int rc;

    CHECK(argc >= 2);
    c = rt_connect(rt_hosts, RT_SESSION_MS);
    any_new(&k, c, argv[0], argv[1]);
    rc = any_lock(&k, argc >= 3 ? atoi(argv[2]) : 0, why, sizeof why);
    printf("RESULT %s %s\n", tb_errname(rc), why);
    any_free(&k);
    tb_client_close(c);
    return 0;
}

/* hold PATH KIND FILE: waits for the lock, prints HELD, keeps it until
 * FILE exists, releases. */
int t_hold(int argc, char **argv)
{
    struct tb_client *c;
    struct any_lock k;
    char why[1024];
    int64_t end;

    CHECK(argc >= 3);
    c = rt_connect(rt_hosts, RT_SESSION_MS);
    any_new(&k, c, argv[0], argv[1]);
    CHECK_RC(any_lock(&k, 60000, why, sizeof why), 0);
    printf("HELD\n");
    end = rt_now_ms() + 60000;
    while (access(argv[2], F_OK) != 0 && rt_now_ms() < end)
        rt_sleep_ms(10);
    any_free(&k);
    tb_client_close(c);
    printf("RELEASED\n");
    return 0;
}
