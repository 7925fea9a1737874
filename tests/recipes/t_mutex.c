/* Mutex tests: the layout on the server, reentrancy, try-lock, timeouts,
 * cancellation and release leaving no node, tokens, hand-over order, the
 * asynchronous forms; mutual exclusion between threads with separate
 * sessions; the process worker the exclusion script runs many of. */
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "rt.h"
#include "rt_async.h"
#include "tests.h"

/* "_c_" + 36-char uuid v4 + "-" + name + 10 digits. */
static int curator_name(const char *n, const char *name)
{
    size_t nl = strlen(name), i;

    if (strncmp(n, "_c_", 3) != 0 || strlen(n) != 3 + 36 + 1 + nl + 10)
        return 0;
    for (i = 0; i < 36; i++) {
        char ch = n[3 + i];
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (ch != '-')
                return 0;
        } else if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'))) {
            return 0;
        }
    }
    if (n[3 + 14] != '4' || n[39] != '-' || strncmp(n + 40, name, nl) != 0)
        return 0;
    for (i = 40 + nl; n[i]; i++)
        if (n[i] < '0' || n[i] > '9')
            return 0;
    return 1;
}

static void check_layout(struct tb_client *c, struct tb_mutex *m,
                         const char *path)
{
    char node[512];
    struct tb_stat st;
    size_t pl = strlen(path);

    CHECK_RC(tb_mutex_node(m, node, sizeof node), 0);
    CHECK(strncmp(node, path, pl) == 0 && node[pl] == '/');
    CHECK(curator_name(node + pl + 1, "lock-"));
    CHECK_RC(tb_exists_sync(c, node, NULL, NULL, &st), 0);
    CHECK(st.ephemeral_owner == tb_client_session(c, NULL));
    CHECK(st.czxid == tb_mutex_token(m));
    printf("layout: %s\n", node);
}

/* The parts both kinds share. */
static void common_flow(struct tb_client *c1, struct tb_client *c2,
                        const char *path, int kind)
{
    struct tb_lock_options o = {.kind = kind};
    struct tb_mutex *m1, *m2;
    struct rt_acq a;
    int64_t t1, t, t2;
    int64_t start;
    const char *dir = kind == TB_LOCK_FAIR ? path : "/rt/nf";

    CHECK_RC(tb_mutex_new(&m1, c1, path, &o), 0);
    CHECK_RC(tb_mutex_new(&m2, c2, path, &o), 0);
    CHECK_RC(tb_mutex_state(m1), TB_LOCK_UNLOCKED);
    CHECK_RC(tb_mutex_unlock_sync(m1), TB_ENOTHELD);

    CHECK_RC(tb_mutex_lock_sync(m1, -1, &t1), 0);
    CHECK(t1 > 0);
    CHECK_RC(tb_mutex_state(m1), TB_LOCK_HELD);
    if (kind == TB_LOCK_FAIR)
        check_layout(c1, m1, path);

    /* Reentrancy: same token, count 2, one node. */
    CHECK_RC(tb_mutex_lock_sync(m1, -1, &t), 0);
    CHECK(t == t1 && tb_mutex_holds(m1) == 2);
    rt_acq_init(&a);
    CHECK_RC(tb_mutex_lock(m1, -1, rt_acq_cb, &a), 0);
    CHECK_RC(rt_acq_wait(&a, 5000), 0);
    CHECK(a.token == t1 && tb_mutex_holds(m1) == 3);
    CHECK_RC(tb_mutex_unlock_sync(m1), 0);
    CHECK_RC(tb_mutex_unlock_sync(m1), 0);
    CHECK(tb_mutex_holds(m1) == 1 && tb_mutex_state(m1) == TB_LOCK_HELD);
    if (kind == TB_LOCK_FAIR)
        CHECK(rt_nchildren(c1, dir) == 1);

    /* Try-lock and timeouts fail and leave no node. */
    CHECK_RC(tb_mutex_trylock_sync(m2, &t), TB_ETIMEDOUT);
    CHECK(t == 0 && tb_mutex_state(m2) == TB_LOCK_UNLOCKED);
    if (kind == TB_LOCK_FAIR)
        CHECK(rt_nchildren(c1, dir) == 1);
    start = rt_now_ms();
    CHECK_RC(tb_mutex_lock_sync(m2, 400, &t), TB_ETIMEDOUT);
    CHECK(rt_now_ms() - start >= 390);
    if (kind == TB_LOCK_FAIR)
        CHECK(rt_nchildren(c1, dir) == 1);
    rt_acq_init(&a);
    CHECK_RC(tb_mutex_lock(m2, 300, rt_acq_cb, &a), 0);
    CHECK_RC(rt_acq_wait(&a, 5000), TB_ETIMEDOUT);
    rt_acq_init(&a);
    CHECK_RC(tb_mutex_trylock(m2, rt_acq_cb, &a), 0);
    CHECK_RC(rt_acq_wait(&a, 5000), TB_ETIMEDOUT);
    if (kind == TB_LOCK_FAIR)
        CHECK(rt_nchildren(c1, dir) == 1);

    /* Cancellation of a queued waiter removes its node. */
    rt_acq_init(&a);
    CHECK_RC(tb_mutex_lock(m2, -1, rt_acq_cb, &a), 0);
    CHECK_RC(tb_mutex_lock(m2, -1, rt_acq_cb, &a), TB_EINVAL);
    if (kind == TB_LOCK_FAIR)
        CHECK(rt_wait_nchildren(c1, dir, 2, 5000) == 2);
    else
        rt_sleep_ms(200);
    CHECK_RC(tb_mutex_state(m2), TB_LOCK_ACQUIRING);
    CHECK_RC(tb_mutex_cancel(m2), 0);
    CHECK_RC(rt_acq_wait(&a, 5000), TB_ECANCELED);
    CHECK_RC(tb_mutex_cancel(m2), TB_EINVAL);
    if (kind == TB_LOCK_FAIR)
        CHECK(rt_nchildren(c1, dir) == 1);

    /* Hand-over: the waiter gets it when the holder releases, with a
     * larger token. */
    rt_acq_init(&a);
    CHECK_RC(tb_mutex_lock(m2, -1, rt_acq_cb, &a), 0);
    rt_sleep_ms(200);
    CHECK(!rt_acq_done(&a));
    CHECK_RC(tb_mutex_unlock_sync(m1), 0);
    CHECK_RC(tb_mutex_unlock_sync(m1), TB_ENOTHELD);
    CHECK_RC(rt_acq_wait(&a, 5000), 0);
    t2 = a.token;
    CHECK(t2 > t1);
    CHECK(tb_mutex_token(m2) == t2);
    CHECK_RC(tb_mutex_trylock_sync(m1, &t), TB_ETIMEDOUT);
    {
        struct rt_done d;
        rt_done_init(&d);
        CHECK_RC(tb_mutex_unlock(m2, rt_done_cb, &d), 0);
        CHECK_RC(rt_done_wait(&d, 5000), 0);
    }
    CHECK_RC(tb_mutex_trylock_sync(m1, &t), 0);
    CHECK(t > t2);
    CHECK_RC(tb_mutex_unlock_sync(m1), 0);
    if (kind == TB_LOCK_FAIR)
        CHECK(rt_nchildren(c1, dir) == 0);
    else
        CHECK_RC(tb_exists_sync(c1, path, NULL, NULL, NULL), TB_ENONODE);

    /* Freeing a handle that waits cancels it; one that holds releases. */
    CHECK_RC(tb_mutex_lock_sync(m1, -1, &t), 0);
    rt_acq_init(&a);
    CHECK_RC(tb_mutex_lock(m2, -1, rt_acq_cb, &a), 0);
    rt_sleep_ms(100);
    tb_mutex_free(m2);
    CHECK_RC(rt_acq_wait(&a, 5000), TB_ECANCELED);
    tb_mutex_free(m1);
    if (kind == TB_LOCK_FAIR)
        CHECK(rt_wait_nchildren(c1, dir, 0, 5000) == 0);
    else /* looked at before it is deleted: not yet gone */
        CHECK(rt_wait_gone(c1, path, 5000));
    /* The parents were made as containers: the server removes them once
     * empty (it checks every second in the tests' configuration). */
    CHECK(rt_wait_gone(c1, dir, 10000));
    printf("%s: container %s removed once empty\n",
           kind == TB_LOCK_FAIR ? "fair" : "nonfair", dir);
}

static int add_one(void *arg, int64_t token)
{
    int *n = arg;

    CHECK(token > 0);
    (*n)++;
    return 7;
}

static void on_run(int rc, void *data)
{
    rt_done_cb(rc, data);
}

int t_basic(int argc, char **argv)
{
    struct tb_client *c1 = rt_connect(rt_hosts, RT_SESSION_MS);
    struct tb_client *c2 = rt_connect(rt_hosts, RT_SESSION_MS);
    struct rt_done d;
    int n = 0;

    (void)argc;
    (void)argv;
    rt_rmr(c1, "/rt/basic");
    common_flow(c1, c2, "/rt/basic/lock", TB_LOCK_FAIR);

    CHECK_RC(tb_lock_run(c1, "/rt/basic/run", add_one, &n), 7);
    CHECK(n == 1);
    rt_done_init(&d);
    CHECK_RC(
        tb_lock_run_async(c2, "/rt/basic/run", -1, add_one, &n, on_run, &d), 0);
    CHECK_RC(rt_done_wait(&d, 5000), 7);
    CHECK(n == 2);
    CHECK(rt_nchildren(c1, "/rt/basic/run") == 0);
    tb_client_close(c1);
    tb_client_close(c2);
    printf("basic: ok\n");
    return 0;
}

/* A non-fair holder whose node PATH an operator deleted (the lock is
 * lost), releasing after another client took the lock: its release must
 * not delete PATH, which is the new holder's now. */
static void lost_then_taken(struct tb_client *c1, struct tb_client *c2)
{
    const char *path = "/rt/nf/lost";
    struct tb_lock_options o = {.kind = TB_LOCK_NONFAIR};
    struct tb_mutex *a, *b;
    struct tb_stat st;
    int64_t ta, tb, end = rt_now_ms() + 10000;

    CHECK_RC(tb_mutex_new(&a, c1, path, &o), 0);
    CHECK_RC(tb_mutex_new(&b, c2, path, &o), 0);
    CHECK_RC(tb_mutex_lock_sync(a, 5000, &ta), 0);
    CHECK_RC(tb_delete_sync(c2, path, -1), 0);
    while (tb_mutex_state(a) != TB_LOCK_LOST) {
        CHECK(rt_now_ms() < end);
        rt_sleep_ms(2);
    }
    CHECK_RC(tb_mutex_lock_sync(b, 5000, &tb), 0);
    CHECK(tb > ta);
    CHECK_RC(tb_mutex_unlock_sync(a), TB_ELOCKLOST);
    /* c1 is answered in order: whatever the release sent came first */
    CHECK_RC(tb_exists_sync(c1, path, NULL, NULL, &st), 0);
    CHECK(st.ephemeral_owner == tb_client_session(c2, NULL));
    CHECK(tb_mutex_state(b) == TB_LOCK_HELD);
    CHECK_RC(tb_mutex_unlock_sync(b), 0);
    tb_mutex_free(a);
    tb_mutex_free(b);
    printf("nonfair: a lost holder's release leaves the next holder's node\n");
}

int t_nonfair(int argc, char **argv)
{
    struct tb_client *c1 = rt_connect(rt_hosts, RT_SESSION_MS);
    struct tb_client *c2 = rt_connect(rt_hosts, RT_SESSION_MS);

    (void)argc;
    (void)argv;
    rt_rmr(c1, "/rt/nf");
    common_flow(c1, c2, "/rt/nf/lock", TB_LOCK_NONFAIR);
    lost_then_taken(c1, c2);
    tb_client_close(c1);
    tb_client_close(c2);
    printf("nonfair: ok\n");
    return 0;
}

/* ---- many threads, one session each ---- */

struct tshared {
    const char *path;
    int kind, iters;
    pthread_mutex_t mu;
    struct rt_hold *holds;
    int n;
    int inside; /* a plain in-process detector, on top of the log */
    int violations;
};

struct targ {
    struct tshared *s;
    long who;
};

static void *thread_main(void *arg)
{
    struct targ *ta = arg;
    struct tshared *s = ta->s;
    struct tb_lock_options o = {.kind = s->kind};
    struct tb_client *c = rt_connect(rt_hosts, RT_SESSION_MS);
    struct tb_mutex *m;
    int i;

    CHECK_RC(tb_mutex_new(&m, c, s->path, &o), 0);
    for (i = 0; i < s->iters; i++) {
        struct rt_hold h = {.who = ta->who};
        CHECK_RC(tb_mutex_lock_sync(m, 60000, &h.token), 0);
        h.t0 = rt_now_ns();
        if (__atomic_add_fetch(&s->inside, 1, __ATOMIC_SEQ_CST) != 1)
            __atomic_add_fetch(&s->violations, 1, __ATOMIC_SEQ_CST);
        rt_sleep_ms(1);
        __atomic_sub_fetch(&s->inside, 1, __ATOMIC_SEQ_CST);
        h.t1 = rt_now_ns();
        CHECK_RC(tb_mutex_state(m), TB_LOCK_HELD);
        CHECK_RC(tb_mutex_unlock_sync(m), 0);
        pthread_mutex_lock(&s->mu);
        s->holds[s->n++] = h;
        pthread_mutex_unlock(&s->mu);
    }
    tb_mutex_free(m);
    tb_client_close(c);
    return NULL;
}

int t_threads(int argc, char **argv)
{
    struct tshared s;
    pthread_t th[64];
    struct targ ta[64];
    struct tb_client *c;
    int i, nth;
    char path[64];

    CHECK(argc >= 3);
    memset(&s, 0, sizeof s);
    s.kind = strcmp(argv[0], "nonfair") == 0 ? TB_LOCK_NONFAIR : TB_LOCK_FAIR;
    nth = atoi(argv[1]);
    s.iters = atoi(argv[2]);
    CHECK(nth > 0 && nth <= 64 && s.iters > 0);
    snprintf(path, sizeof path, "/rt/threads/%s", argv[0]);
    s.path = path;
    pthread_mutex_init(&s.mu, NULL);
    s.holds = calloc((size_t)(nth * s.iters), sizeof *s.holds);
    c = rt_connect(rt_hosts, RT_SESSION_MS);
    rt_rmr(c, "/rt/threads");
    for (i = 0; i < nth; i++) {
        ta[i].s = &s;
        ta[i].who = i;
        CHECK(pthread_create(&th[i], NULL, thread_main, &ta[i]) == 0);
    }
    for (i = 0; i < nth; i++)
        pthread_join(th[i], NULL);
    CHECK(s.n == nth * s.iters);
    CHECK(s.violations == 0);
    CHECK(rt_hold_check(s.holds, s.n, "threads") == 0);
    if (s.kind == TB_LOCK_FAIR)
        CHECK(rt_nchildren(c, path) == 0);
    tb_client_close(c);
    free(s.holds);
    return 0;
}

/* ---- one process of the multi-process exclusion test ---- */

struct wargs {
    const char *path, *log;
    int kind, iters, hold_ms;
    long who;
};

/* One session per thread; every hold is appended to the shared log. */
static void *worker_thread(void *arg)
{
    struct wargs *a = arg;
    struct tb_lock_options o = {.kind = a->kind};
    struct tb_client *c = rt_connect(rt_hosts, RT_SESSION_MS);
    struct tb_mutex *m;
    int i;

    CHECK_RC(tb_mutex_new(&m, c, a->path, &o), 0);
    for (i = 0; i < a->iters; i++) {
        struct rt_hold h = {.who = a->who};
        CHECK_RC(tb_mutex_lock_sync(m, 60000, &h.token), 0);
        h.t0 = rt_now_ns();
        if (a->hold_ms > 0)
            rt_sleep_ms(a->hold_ms);
        h.t1 = rt_now_ns();
        CHECK_RC(tb_mutex_state(m), TB_LOCK_HELD);
        CHECK_RC(tb_mutex_unlock_sync(m), 0);
        rt_hold_log(a->log, &h);
    }
    tb_mutex_free(m);
    tb_client_close(c);
    return NULL;
}

int t_worker(int argc, char **argv)
{
    struct wargs a[16];
    pthread_t th[16];
    int i, n;

    CHECK(argc >= 7);
    n = atoi(argv[6]);
    CHECK(n > 0 && n <= 16);
    for (i = 0; i < n; i++) {
        a[i].path = argv[0];
        a[i].kind =
            strcmp(argv[1], "nonfair") == 0 ? TB_LOCK_NONFAIR : TB_LOCK_FAIR;
        a[i].iters = atoi(argv[2]);
        a[i].hold_ms = atoi(argv[3]);
        a[i].log = argv[4];
        a[i].who = atol(argv[5]) * 100 + i;
        CHECK(pthread_create(&th[i], NULL, worker_thread, &a[i]) == 0);
    }
    for (i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    return 0;
}

int t_checklog(int argc, char **argv)
{
    struct rt_hold *v;
    int n, i, rc;

    CHECK(argc >= 2);
    n = rt_hold_read(argv[0], &v);
    if (n < atoi(argv[1])) {
        fprintf(stderr, "only %d holds logged, want %s\n", n, argv[1]);
        return 1;
    }
    rc = rt_hold_check(v, n, argv[0]);
    if (argc >= 3 && strcmp(argv[2], "ordered") == 0) {
        /* Holds came in the order of the holders' numbers (the order in
         * which the test queued them). */
        for (i = 1; i < n; i++)
            if (v[i].who <= v[i - 1].who) {
                fprintf(stderr, "hold %d by %ld came after one by %ld\n", i,
                        v[i].who, v[i - 1].who);
                rc = 1;
            }
        printf("%s: holds in queue order: %s\n", argv[0], rc ? "NO" : "yes");
    }
    free(v);
    return rc;
}

/* Prints the children of PATH, one per line (for the scripts). */
int t_children(int argc, char **argv)
{
    struct tb_client *c = rt_connect(rt_hosts, RT_SESSION_MS);
    struct tb_strings v;
    int i, rc;

    CHECK(argc >= 1);
    rc = tb_get_children_sync(c, argv[0], NULL, NULL, &v);
    if (rc == 0) {
        for (i = 0; i < v.count; i++)
            printf("%s\n", v.v[i]);
        tb_strings_free(&v);
    } else if (rc != TB_ENONODE) {
        CHECK_RC(rc, 0);
    }
    tb_client_close(c);
    return 0;
}
