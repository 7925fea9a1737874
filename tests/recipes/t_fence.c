/* Fencing on the server: the fenced write applies only while its lock is
 * held, and the server-side check does the refusing even when the holder
 * has not heard of its loss; the token check names exactly the current
 * holders' tokens (mutex, readers, leader, non-fair node) and no other;
 * tb_lock_run_timeout gives up without calling fn and leaves no node.
 * The processes of the paused-holder scenario (run.sh fence_stop). */
#include <string.h>

#include "rt.h"
#include "rt_async.h"
#include "tests.h"

#define LOCK "/rt/fence/lock"
#define RES  "/rt/fence/res"

/* RES's data, NUL-terminated in buf. */
static void read_res(struct tb_client *c, const char *path, char *buf,
                     size_t cap)
{
    char *v;
    size_t n;

    CHECK_RC(tb_get_data_sync(c, path, NULL, NULL, &v, &n, NULL), 0);
    CHECK(n < cap);
    memcpy(buf, v != NULL ? v : "", n);
    buf[n] = '\0';
    tb_free(v);
}

static int set_token(void *arg, int64_t token)
{
    *(int64_t *)arg = token;
    return 3;
}

static void lock_run_timeout(struct tb_client *c1, struct tb_client *c2)
{
    struct tb_mutex *m;
    int64_t t = 0, got = 0, start;

    CHECK_RC(tb_mutex_new(&m, c1, LOCK, NULL), 0);
    CHECK_RC(tb_mutex_lock_sync(m, 5000, &t), 0);
    start = rt_now_ms();
    CHECK_RC(tb_lock_run_timeout(c2, LOCK, 300, set_token, &got), TB_ETIMEDOUT);
    CHECK(rt_now_ms() - start >= 290);
    CHECK_RC(tb_lock_run_timeout(c2, LOCK, 0, set_token, &got), TB_ETIMEDOUT);
    CHECK(got == 0); /* fn never ran */
    CHECK(rt_nchildren(c1, LOCK) == 1);
    CHECK_RC(tb_mutex_unlock_sync(m), 0);
    CHECK_RC(tb_lock_run_timeout(c2, LOCK, 5000, set_token, &got), 3);
    CHECK(got > t);
    CHECK(rt_nchildren(c1, LOCK) == 0);
    tb_mutex_free(m);
    printf("tb_lock_run_timeout: gave up at 300 ms and at once, fn not "
           "called, no node; ran once free\n");
}

static void fenced_write(struct tb_client *c1, struct tb_client *c2)
{
    struct tb_mutex *m1, *m2;
    struct tb_multi *ops;
    struct tb_multi_results r;
    struct rt_done d;
    char node[512], buf[64];
    int64_t t;

    CHECK_RC(tb_create_sync(c1, RES, "-", 1, NULL, 0, 0, NULL, 0, NULL), 0);
    CHECK_RC(tb_mutex_new(&m1, c1, LOCK, NULL), 0);
    CHECK_RC(tb_mutex_new(&m2, c2, LOCK, NULL), 0);
    CHECK_RC(tb_fenced_set_data_sync(m1, RES, "x", 1, -1, NULL), TB_ENOTHELD);
    CHECK_RC(tb_mutex_lock_sync(m1, 5000, &t), 0);
    CHECK_RC(tb_fenced_set_data_sync(m1, RES, "a", 1, -1, NULL), 0);
    read_res(c2, RES, buf, sizeof buf);
    CHECK(strcmp(buf, "a") == 0);

    /* The asynchronous form: the check is the last result. */
    ops = tb_multi_new();
    CHECK_RC(tb_multi_set_data(ops, RES, "b", 1, -1), 0);
    rt_done_init(&d);
    CHECK_RC(tb_fenced_exec(m1, ops, rt_multi_cb, &d), 0);
    CHECK_RC(rt_done_wait(&d, 5000), 0);
    CHECK(d.token == 2);
    tb_multi_free(ops);

    /* The server refuses by itself: a check made while held, sent after
     * the node is gone (as a paused holder's would be), applies nothing,
     * whatever the holder's library knows. */
    ops = tb_multi_new();
    CHECK_RC(tb_multi_set_data(ops, RES, "stale", 5, -1), 0);
    CHECK_RC(tb_mutex_fence(m1, ops), 0);
    CHECK_RC(tb_mutex_node(m1, node, sizeof node), 0);
    CHECK_RC(tb_delete_sync(c2, node, -1), 0);
    CHECK_RC(tb_mutex_lock_sync(m2, 5000, &t), 0);
    CHECK_RC(tb_multi_exec_sync(c1, ops, &r), TB_ENONODE);
    CHECK(r.count == 2 && r.v[1].rc == TB_ENONODE);
    tb_multi_results_free(&r);
    tb_multi_free(ops);
    /* Through the recipe's own call: TB_ELOCKLOST, nothing applied. */
    CHECK_RC(tb_fenced_set_data_sync(m1, RES, "stale", 5, -1, NULL),
             TB_ELOCKLOST);
    read_res(c2, RES, buf, sizeof buf);
    CHECK(strcmp(buf, "b") == 0);
    CHECK_RC(tb_fenced_set_data_sync(m2, RES, "c", 1, -1, NULL), 0);
    CHECK_RC(tb_mutex_unlock_sync(m1), TB_ELOCKLOST);
    CHECK_RC(tb_mutex_unlock_sync(m2), 0);
    CHECK_RC(tb_fenced_set_data_sync(m2, RES, "d", 1, -1, NULL), TB_ENOTHELD);
    read_res(c2, RES, buf, sizeof buf);
    CHECK(strcmp(buf, "c") == 0);
    tb_mutex_free(m1);
    tb_mutex_free(m2);

    /* A non-fair lock cannot be fenced by its node. */
    {
        struct tb_lock_options o = {.kind = TB_LOCK_NONFAIR};
        CHECK_RC(tb_mutex_new(&m1, c1, "/rt/fence/nf", &o), 0);
        CHECK_RC(tb_mutex_lock_sync(m1, 5000, &t), 0);
        CHECK_RC(tb_fenced_set_data_sync(m1, RES, "x", 1, -1, NULL), TB_EINVAL);
        CHECK_RC(tb_mutex_unlock_sync(m1), 0);
        tb_mutex_free(m1);
    }
    printf("fenced write: applied while held; refused by the server once the "
           "node was gone (ELOCKLOST), nothing applied\n");
}

static int check(struct tb_client *c, const char *path, int64_t token)
{
    return tb_token_check_sync(c, path, token);
}

/* Every node under `path` whose czxid is neither `a` nor `b` (waiters)
 * has no current token. */
static void others_stale(struct tb_client *c, const char *path, int64_t a,
                         int64_t b)
{
    struct tb_strings v;
    struct tb_stat st;
    char p[512];
    int i;

    CHECK_RC(tb_get_children_sync(c, path, NULL, NULL, &v), 0);
    for (i = 0; i < v.count; i++) {
        snprintf(p, sizeof p, "%s/%s", path, v.v[i]);
        CHECK_RC(tb_exists_sync(c, p, NULL, NULL, &st), 0);
        if (st.czxid != a && st.czxid != b)
            CHECK_RC(check(c, path, st.czxid), TB_ELOCKLOST);
    }
    tb_strings_free(&v);
}

static void token_check(struct tb_client *c1, struct tb_client *c2,
                        struct tb_client *c3)
{
    struct tb_mutex *m1, *m2;
    struct tb_rwlock *r1, *r2, *w;
    struct tb_election *e;
    struct rt_done d;
    struct tb_lock_options nf = {.kind = TB_LOCK_NONFAIR};
    int64_t t1, t2, tw;

    CHECK_RC(check(c3, LOCK, 1), TB_ELOCKLOST); /* nothing there */
    CHECK_RC(tb_mutex_new(&m1, c1, LOCK, NULL), 0);
    CHECK_RC(tb_mutex_new(&m2, c2, LOCK, NULL), 0);
    CHECK_RC(tb_mutex_lock_sync(m1, 5000, &t1), 0);
    CHECK_RC(check(c3, LOCK, t1), 0);
    CHECK_RC(check(c3, LOCK, t1 - 1), TB_ELOCKLOST);
    CHECK_RC(check(c3, LOCK, t1 + 1), TB_ELOCKLOST);
    rt_done_init(&d);
    CHECK_RC(tb_token_check(c3, LOCK, t1, rt_done_cb, &d), 0);
    CHECK_RC(rt_done_wait(&d, 5000), 0);
    /* A waiter's czxid is no holder's token. */
    rt_done_init(&d);
    CHECK_RC(tb_mutex_lock(m2, -1, rt_acq_cb, &d), 0);
    CHECK(rt_wait_nchildren(c3, LOCK, 2, 5000) == 2);
    others_stale(c3, LOCK, t1, t1);
    CHECK_RC(tb_mutex_unlock_sync(m1), 0);
    CHECK_RC(rt_acq_wait(&d, 5000), 0);
    t2 = d.token;
    CHECK_RC(check(c3, LOCK, t1), TB_ELOCKLOST); /* released: stale */
    CHECK_RC(check(c3, LOCK, t2), 0);
    CHECK_RC(tb_mutex_unlock_sync(m2), 0);
    CHECK_RC(check(c3, LOCK, t2), TB_ELOCKLOST);
    tb_mutex_free(m1);
    tb_mutex_free(m2);

    /* Two readers share: both current; the writer queued behind is not. */
    CHECK_RC(tb_rwlock_new(&r1, c1, LOCK, NULL), 0);
    CHECK_RC(tb_rwlock_new(&r2, c2, LOCK, NULL), 0);
    CHECK_RC(tb_rwlock_new(&w, c3, LOCK, NULL), 0);
    CHECK_RC(tb_mutex_lock_sync(tb_rwlock_read(r1), 5000, &t1), 0);
    CHECK_RC(tb_mutex_lock_sync(tb_rwlock_read(r2), 5000, &t2), 0);
    rt_done_init(&d);
    CHECK_RC(tb_mutex_lock(tb_rwlock_write(w), -1, rt_acq_cb, &d), 0);
    CHECK(rt_wait_nchildren(c3, LOCK, 3, 5000) == 3);
    CHECK_RC(check(c3, LOCK, t1), 0);
    CHECK_RC(check(c3, LOCK, t2), 0);
    CHECK_RC(tb_mutex_unlock_sync(tb_rwlock_read(r1)), 0);
    CHECK_RC(check(c3, LOCK, t1), TB_ELOCKLOST);
    CHECK_RC(tb_mutex_unlock_sync(tb_rwlock_read(r2)), 0);
    CHECK_RC(rt_acq_wait(&d, 5000), 0);
    tw = d.token;
    CHECK_RC(check(c1, LOCK, tw), 0);
    CHECK_RC(check(c1, LOCK, t2), TB_ELOCKLOST);
    CHECK_RC(tb_mutex_unlock_sync(tb_rwlock_write(w)), 0);
    tb_rwlock_free(r1);
    tb_rwlock_free(r2);
    tb_rwlock_free(w);

    /* A downgrade: the writer's own reader holds beside it, current; a
     * reader of another session queued behind them is not, until the
     * writer goes. */
    CHECK_RC(tb_rwlock_new(&r1, c1, LOCK, NULL), 0);
    CHECK_RC(tb_rwlock_new(&r2, c2, LOCK, NULL), 0);
    CHECK_RC(tb_mutex_lock_sync(tb_rwlock_write(r1), 5000, &tw), 0);
    CHECK_RC(tb_mutex_lock_sync(tb_rwlock_read(r1), 5000, &t1), 0);
    rt_done_init(&d);
    CHECK_RC(tb_mutex_lock(tb_rwlock_read(r2), -1, rt_acq_cb, &d), 0);
    CHECK(rt_wait_nchildren(c3, LOCK, 3, 5000) == 3);
    CHECK_RC(check(c3, LOCK, tw), 0);
    CHECK_RC(check(c3, LOCK, t1), 0);
    others_stale(c3, LOCK, tw, t1);
    CHECK_RC(tb_mutex_unlock_sync(tb_rwlock_write(r1)), 0);
    CHECK_RC(rt_acq_wait(&d, 5000), 0);
    t2 = d.token;
    CHECK_RC(check(c3, LOCK, tw), TB_ELOCKLOST);
    CHECK_RC(check(c3, LOCK, t1), 0);
    CHECK_RC(check(c3, LOCK, t2), 0);
    CHECK_RC(tb_mutex_unlock_sync(tb_rwlock_read(r1)), 0);
    CHECK_RC(tb_mutex_unlock_sync(tb_rwlock_read(r2)), 0);
    tb_rwlock_free(r1);
    tb_rwlock_free(r2);

    /* An election's leader; a non-fair lock's node. */
    CHECK_RC(tb_election_new(&e, c1, "/rt/fence/elect", NULL), 0);
    CHECK_RC(tb_election_join(e), 0);
    CHECK_RC(tb_election_await_sync(e, 5000, &t1), 0);
    CHECK_RC(check(c3, "/rt/fence/elect", t1), 0);
    CHECK_RC(tb_election_leave_sync(e), 0);
    CHECK_RC(check(c3, "/rt/fence/elect", t1), TB_ELOCKLOST);
    tb_election_free(e);
    CHECK_RC(tb_mutex_new(&m1, c1, "/rt/fence/nf", &nf), 0);
    CHECK_RC(tb_mutex_lock_sync(m1, 5000, &t1), 0);
    CHECK_RC(check(c3, "/rt/fence/nf", t1), 0);
    CHECK_RC(tb_mutex_unlock_sync(m1), 0);
    CHECK_RC(check(c3, "/rt/fence/nf", t1), TB_ELOCKLOST);
    tb_mutex_free(m1);
    CHECK_RC(tb_token_check(c3, "rel", 5, rt_done_cb, &d), TB_EINVAL);
    printf("token check: holders' tokens current (mutex, 2 readers, writer, "
           "a downgraded reader, leader, non-fair); waiters', released and "
           "others' stale\n");
}

int t_fence(int argc, char **argv)
{
    struct tb_client *c1 = rt_connect(rt_hosts, RT_SESSION_MS);
    struct tb_client *c2 = rt_connect(rt_hosts, RT_SESSION_MS);
    struct tb_client *c3 = rt_connect(rt_hosts, RT_SESSION_MS);
    int rc;

    (void)argc;
    (void)argv;
    rt_rmr(c1, "/rt/fence");
    rc = tb_create_sync(c1, "/rt", NULL, 0, NULL, 0, 0, NULL, 0, NULL);
    CHECK(rc == 0 || rc == TB_ENODEEXISTS);
    CHECK_RC(
        tb_create_sync(c1, "/rt/fence", NULL, 0, NULL, 0, 0, NULL, 0, NULL), 0);
    lock_run_timeout(c1, c2);
    fenced_write(c1, c2);
    token_check(c1, c2, c3);
    rt_rmr(c1, "/rt/fence");
    tb_client_close(c1);
    tb_client_close(c2);
    tb_client_close(c3);
    printf("fence: ok\n");
    return 0;
}

/* fence_holder LOCK RES: holds, then writes RES fenced every 20 ms until a
 * write is refused; prints HELD <token>, WROTE <n>, FENCED <rc>. */
int t_fence_holder(int argc, char **argv)
{
    struct tb_client *c;
    struct tb_mutex *m;
    int64_t token, end;
    char val[64];
    int n = 0, rc = 0;

    CHECK(argc >= 2);
    c = rt_connect(rt_hosts, RT_SESSION_MS);
    rc = tb_create_sync(c, argv[1], NULL, 0, NULL, 0, 0, NULL, 0, NULL);
    CHECK(rc == 0 || rc == TB_ENODEEXISTS);
    rc = 0;
    CHECK_RC(tb_mutex_new(&m, c, argv[0], NULL), 0);
    CHECK_RC(tb_mutex_lock_sync(m, 30000, &token), 0);
    printf("HELD %lld\n", (long long)token);
    end = rt_now_ms() + 120000;
    /* A write cut off with the connection is sent again, as an
     * application would: only a refusal ends the loop. */
    while ((rc == 0 || rc == TB_ECONNECTIONLOSS) && rt_now_ms() < end) {
        int len =
            snprintf(val, sizeof val, "holder %lld %d", (long long)token, ++n);
        rc = tb_fenced_set_data_sync(m, argv[1], val, (size_t)len, -1, NULL);
        if (rc == 0 && n == 1)
            printf("WROTE %d\n", n);
        rt_sleep_ms(20);
    }
    printf("FENCED %s after %d attempts\n", tb_errname(rc), n - 1);
    tb_mutex_unlock_sync(m);
    tb_mutex_free(m);
    tb_client_close(c);
    return 0;
}

/* fence_taker LOCK RES OLD_TOKEN: takes the lock (after the paused
 * holder's session expired), writes RES fenced, checks that the old token
 * is stale and its own current; prints TOOK <token>. */
int t_fence_taker(int argc, char **argv)
{
    struct tb_client *c;
    struct tb_mutex *m;
    int64_t token, old;
    char val[64];
    int len;

    CHECK(argc >= 3);
    old = strtoll(argv[2], NULL, 10);
    c = rt_connect(rt_hosts, RT_SESSION_MS);
    CHECK_RC(tb_mutex_new(&m, c, argv[0], NULL), 0);
    CHECK_RC(tb_mutex_lock_sync(m, 60000, &token), 0);
    CHECK(token > old);
    len = snprintf(val, sizeof val, "taker %lld", (long long)token);
    CHECK_RC(tb_fenced_set_data_sync(m, argv[1], val, (size_t)len, -1, NULL),
             0);
    CHECK_RC(tb_token_check_sync(c, argv[0], old), TB_ELOCKLOST);
    CHECK_RC(tb_token_check_sync(c, argv[0], token), 0);
    printf("TOOK %lld\n", (long long)token);
    CHECK_RC(tb_mutex_unlock_sync(m), 0);
    tb_mutex_free(m);
    tb_client_close(c);
    return 0;
}

/* check_token PATH TOKEN: prints the token check's result. */
int t_check_token(int argc, char **argv)
{
    struct tb_client *c;
    int rc;

    CHECK(argc >= 2);
    c = rt_connect(rt_hosts, RT_SESSION_MS);
    rc = tb_token_check_sync(c, argv[0], strtoll(argv[1], NULL, 10));
    printf("CHECK %s\n", tb_errname(rc));
    tb_client_close(c);
    return 0;
}

/* get PATH: prints the node's data (for the scripts). */
int t_get(int argc, char **argv)
{
    struct tb_client *c;
    char buf[1024];

    CHECK(argc >= 1);
    c = rt_connect(rt_hosts, RT_SESSION_MS);
    read_res(c, argv[0], buf, sizeof buf);
    printf("%s\n", buf);
    tb_client_close(c);
    return 0;
}
