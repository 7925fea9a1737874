/* Queues, both kinds: kazoo's node names; peek and take on an empty queue
 * (ENONODE, timeouts); priority, then FIFO; a blocked take woken by a put;
 * 6 takers in their own sessions racing over 300 items: each item taken
 * exactly once, none missing.  Locking: a claimed item is hidden from peek
 * and other takers, goes back on release and when its claimer frees its
 * handle, and is gone after consume.  Fresh handles on paths whose parents
 * are missing: every first put succeeds.  The processes of the kill -9
 * script (qop). */
#include <pthread.h>
#include <string.h>

#include "rt.h"
#include "rt_async.h"
#include "tests.h"

#define NITEMS  300
#define NTAKERS 6
#define NFRESH  200

static const char *qpath(int kind)
{
    return kind == TB_QUEUE_SIMPLE ? "/rt/q/simple" : "/rt/q/locking";
}

/* Takes one item and (locking) consumes it; its text in buf. */
static int take(struct tb_dqueue *q, int kind, int ms, char *buf, size_t cap)
{
    void *v;
    size_t n;
    int rc = tb_dqueue_take_sync(q, ms, &v, &n);

    if (rc != 0)
        return rc;
    CHECK(n < cap);
    memcpy(buf, v, n + 1);
    free(v);
    if (kind == TB_QUEUE_LOCKING)
        CHECK_RC(tb_dqueue_consume_sync(q), 0);
    return 0;
}

static void item_cb(int rc, const void *value, size_t len, void *data)
{
    struct rt_acq *a = data;
    char *copy = NULL;

    if (rc == 0) {
        copy = malloc(len + 1);
        CHECK(copy != NULL);
        memcpy(copy, value, len);
        copy[len] = '\0';
    }
    rt_acq_set(a, rc, 0, copy);
}

static void basics(struct tb_client *c1, struct tb_client *c2, int kind)
{
    struct tb_dqueue *q1, *q2;
    struct tb_strings v;
    struct rt_acq a;
    char buf[64], dir[64];
    void *p;
    size_t n;
    int64_t start;

    CHECK_RC(tb_dqueue_new(&q1, c1, qpath(kind), kind), 0);
    CHECK_RC(tb_dqueue_new(&q2, c2, qpath(kind), kind), 0);
    /* a peek is a read: an empty queue, not made */
    CHECK_RC(tb_dqueue_peek_sync(q1, &p, &n), TB_ENONODE);
    CHECK_RC(tb_exists_sync(c1, qpath(kind), NULL, NULL, NULL), TB_ENONODE);
    CHECK_RC(take(q1, kind, 0, buf, sizeof buf), TB_ETIMEDOUT);
    start = rt_now_ms();
    CHECK_RC(take(q1, kind, 300, buf, sizeof buf), TB_ETIMEDOUT);
    CHECK(rt_now_ms() - start >= 290);

    /* Priority first, then the order of puts; kazoo's names. */
    CHECK_RC(tb_dqueue_put_sync(q1, "a", 1, -1), 0);
    CHECK_RC(tb_dqueue_put_sync(q2, "b", 1, -1), 0);
    CHECK_RC(tb_dqueue_put_sync(q1, "c", 1, 5), 0);
    snprintf(dir, sizeof dir, "%s%s", qpath(kind),
             kind == TB_QUEUE_LOCKING ? "/entries" : "");
    CHECK_RC(tb_get_children_sync(c1, dir, NULL, NULL, &v), 0);
    CHECK(v.count == 3);
    CHECK(rt_nchildren_with(c1, dir, "entry-100-") == 2);
    CHECK(rt_nchildren_with(c1, dir, "entry-005-") == 1);
    tb_strings_free(&v);
    CHECK_RC(tb_dqueue_peek_sync(q2, &p, &n), 0);
    CHECK(n == 1 && memcmp(p, "c", 1) == 0);
    free(p);
    CHECK_RC(take(q2, kind, 0, buf, sizeof buf), 0);
    CHECK(strcmp(buf, "c") == 0);
    CHECK_RC(take(q1, kind, 0, buf, sizeof buf), 0);
    CHECK(strcmp(buf, "a") == 0);
    CHECK_RC(take(q2, kind, 0, buf, sizeof buf), 0);
    CHECK(strcmp(buf, "b") == 0);
    CHECK(rt_nchildren(c1, dir) == 0);

    /* A blocked take, woken by a put from another session. */
    rt_acq_init(&a);
    CHECK_RC(tb_dqueue_take(q1, 20000, item_cb, &a), 0);
    CHECK_RC(tb_dqueue_take(q1, 20000, item_cb, &a), TB_EINVAL);
    rt_sleep_ms(200);
    CHECK(!rt_acq_done(&a));
    CHECK_RC(tb_dqueue_put_sync(q2, "late", 4, -1), 0);
    CHECK_RC(rt_acq_wait(&a, 5000), 0);
    CHECK(strcmp(a.ptr, "late") == 0);
    free(a.ptr);
    if (kind == TB_QUEUE_LOCKING)
        CHECK_RC(tb_dqueue_consume_sync(q1), 0);
    /* Cancelled while blocked. */
    rt_acq_init(&a);
    CHECK_RC(tb_dqueue_take(q1, -1, item_cb, &a), 0);
    rt_sleep_ms(100);
    CHECK_RC(tb_dqueue_cancel(q1), 0);
    CHECK_RC(rt_acq_wait(&a, 5000), TB_ECANCELED);
    tb_dqueue_free(q1);
    tb_dqueue_free(q2);
    printf("queue %s: priority then FIFO, kazoo's names; empty peek and "
           "take; a blocked take woken by a put, or cancelled\n",
           kind == TB_QUEUE_SIMPLE ? "simple" : "locking");
}

/* ---- exactly once under contention ---- */

static int kind_g;
static int seen[NITEMS];

static void *taker(void *arg)
{
    struct tb_client *c = rt_connect(rt_hosts, RT_SESSION_MS);
    struct tb_dqueue *q;
    char buf[32];

    (void)arg;
    CHECK_RC(tb_dqueue_new(&q, c, qpath(kind_g), kind_g), 0);
    for (;;) {
        CHECK_RC(take(q, kind_g, 30000, buf, sizeof buf), 0);
        if (strcmp(buf, "end") == 0)
            break;
        __atomic_add_fetch(&seen[atoi(buf)], 1, __ATOMIC_SEQ_CST);
    }
    tb_dqueue_free(q);
    tb_client_close(c);
    return NULL;
}

static void contention(struct tb_client *c, int kind)
{
    pthread_t th[NTAKERS];
    struct tb_dqueue *q;
    char buf[32];
    int i, n, twice = 0, missing = 0;

    kind_g = kind;
    memset(seen, 0, sizeof seen);
    CHECK_RC(tb_dqueue_new(&q, c, qpath(kind), kind), 0);
    for (i = 0; i < NTAKERS; i++)
        CHECK(pthread_create(&th[i], NULL, taker, NULL) == 0);
    for (i = 0; i < NITEMS; i++) {
        n = snprintf(buf, sizeof buf, "%d", i);
        CHECK_RC(tb_dqueue_put_sync(q, buf, (size_t)n, -1), 0);
    }
    for (i = 0; i < NTAKERS; i++) /* after every item: lower priority */
        CHECK_RC(tb_dqueue_put_sync(q, "end", 3, 999), 0);
    for (i = 0; i < NTAKERS; i++)
        pthread_join(th[i], NULL);
    for (i = 0; i < NITEMS; i++) {
        twice += seen[i] > 1;
        missing += seen[i] == 0;
    }
    printf("queue %s: %d takers, %d items: taken twice %d, missing %d\n",
           kind == TB_QUEUE_SIMPLE ? "simple" : "locking", NTAKERS, NITEMS,
           twice, missing);
    CHECK(twice == 0 && missing == 0);
    tb_dqueue_free(q);
}

/* Locking: claims hide an item, and give it back. */
static void claims(struct tb_client *c1)
{
    struct tb_client *c2 = rt_connect(rt_hosts, RT_SESSION_MS);
    struct tb_dqueue *q1, *q2;
    const char *path = qpath(TB_QUEUE_LOCKING);
    char buf[32];
    void *p;
    size_t n;

    CHECK_RC(tb_dqueue_new(&q1, c1, path, TB_QUEUE_LOCKING), 0);
    CHECK_RC(tb_dqueue_new(&q2, c2, path, TB_QUEUE_LOCKING), 0);
    CHECK_RC(tb_dqueue_put_sync(q1, "x", 1, -1), 0);
    CHECK_RC(tb_dqueue_take_sync(q2, 0, &p, &n), 0);
    free(p);
    CHECK_RC(tb_dqueue_take_sync(q2, 0, &p, &n), TB_EINVAL); /* one claim */
    CHECK(rt_nchildren(c1, "/rt/q/locking/taken") == 1);
    /* The claimer's own peek finds nothing unclaimed, and keeps its claim */
    CHECK_RC(tb_dqueue_peek_sync(q2, &p, &n), TB_ENONODE);
    CHECK_RC(tb_dqueue_peek_sync(q1, &p, &n), TB_ENONODE);
    CHECK_RC(take(q1, TB_QUEUE_LOCKING, 0, buf, sizeof buf), TB_ETIMEDOUT);
    CHECK_RC(tb_dqueue_release(q2), 0);
    CHECK_RC(tb_dqueue_release(q2), TB_ENOTHELD);
    CHECK_RC(tb_dqueue_take_sync(q1, 5000, &p, &n), 0); /* back */
    CHECK(n == 1 && memcmp(p, "x", 1) == 0);
    free(p);
    CHECK_RC(tb_dqueue_release(q1), 0);
    /* The claimer frees its handle: the claim goes back (its session's
     * death is the kill -9 script's). */
    CHECK_RC(tb_dqueue_take_sync(q2, 5000, &p, &n), 0);
    free(p);
    tb_dqueue_free(q2);
    tb_client_close(c2);
    CHECK_RC(take(q1, TB_QUEUE_LOCKING, 5000, buf, sizeof buf), 0);
    CHECK(strcmp(buf, "x") == 0);
    CHECK_RC(tb_dqueue_consume_sync(q1), TB_ENOTHELD);
    CHECK(rt_nchildren(c1, "/rt/q/locking/entries") == 0);
    CHECK(rt_nchildren(c1, "/rt/q/locking/taken") == 0);
    tb_dqueue_free(q1);
    printf("queue locking: a claim hides its item (its owner's peek too "
           "keeps it); release and free give it back; consume removes both "
           "nodes\n");
}

/* A handle's first put makes its path and the missing parents, pipelined
 * creates whose answers may all arrive before the last one is sent. */
static void fresh(struct tb_client *c)
{
    struct tb_dqueue *q;
    char path[64];
    int i, kind, failed = 0;

    for (i = 0; i < NFRESH; i++) {
        kind = i % 2 ? TB_QUEUE_LOCKING : TB_QUEUE_SIMPLE;
        snprintf(path, sizeof path, "/rt/q/fresh/%d/a/q", i);
        CHECK_RC(tb_dqueue_new(&q, c, path, kind), 0);
        failed += tb_dqueue_put_sync(q, "x", 1, -1) != 0;
        tb_dqueue_free(q);
    }
    printf("queue: %d fresh handles on missing parents, %d first puts "
           "failed\n", NFRESH, failed);
    CHECK(failed == 0);
}

int t_queue(int argc, char **argv)
{
    struct tb_client *c1 = rt_connect(rt_hosts, RT_SESSION_MS);
    struct tb_client *c2 = rt_connect(rt_hosts, RT_SESSION_MS);
    int kind;

    (void)argc;
    (void)argv;
    rt_rmr(c1, "/rt/q");
    for (kind = TB_QUEUE_SIMPLE; kind <= TB_QUEUE_LOCKING; kind++) {
        basics(c1, c2, kind);
        contention(c1, kind);
    }
    claims(c1);
    fresh(c1);
    rt_rmr(c1, "/rt/q");
    tb_client_close(c1);
    tb_client_close(c2);
    printf("queue: ok\n");
    return 0;
}

/* qop PATH simple|locking put VALUE | take MS | claim: prints TOOK <value>
 * (take: consumed), or CLAIMED <value> and then waits to be killed. */
int t_qop(int argc, char **argv)
{
    struct tb_client *c;
    struct tb_dqueue *q;
    int kind, rc;
    void *v = NULL;
    size_t n;

    CHECK(argc >= 3);
    kind = strcmp(argv[1], "locking") == 0 ? TB_QUEUE_LOCKING : TB_QUEUE_SIMPLE;
    c = rt_connect(rt_hosts, RT_SESSION_MS);
    CHECK_RC(tb_dqueue_new(&q, c, argv[0], kind), 0);
    if (strcmp(argv[2], "put") == 0) {
        CHECK(argc >= 4);
        rc = tb_dqueue_put_sync(q, argv[3], strlen(argv[3]), -1);
        printf("PUT %s\n", tb_errname(rc));
    } else if (strcmp(argv[2], "claim") == 0) {
        CHECK_RC(tb_dqueue_take_sync(q, 30000, &v, &n), 0);
        printf("CLAIMED %s\n", (char *)v);
        rt_sleep_ms(120000);
    } else {
        rc = tb_dqueue_take_sync(q, argc > 3 ? atoi(argv[3]) : -1, &v, &n);
        if (rc == 0 && kind == TB_QUEUE_LOCKING)
            rc = tb_dqueue_consume_sync(q);
        printf("TOOK %s %s\n", tb_errname(rc), rc == 0 ? (char *)v : "");
    }
    free(v);
    tb_dqueue_free(q);
    tb_client_close(c);
    return 0;
}
