/* Shared counter: Curator's DistributedAtomicLong layout on the server (8
 * bytes, big-endian); get of a missing node; compare-and-set refused on a
 * stale version with the value unchanged; set; negative adds; a node of
 * another layout refused; many threads in their own sessions adding at
 * once lose no add (the final value is the number of adds, and no two
 * adds were handed the same result); the asynchronous forms.  The
 * process the Curator interop script runs beside Curator's adds. */
#include <pthread.h>
#include <string.h>

#include "rt.h"
#include "rt_async.h"
#include "tests.h"

#define CTR "/rt/ctr/n"

#define NTHREADS 8
#define NADDS    40

/* The sessions' timeout.  An add whose reply is lost with the connection
 * is reported (TB_ECONNECTIONLOSS: it may or may not have been applied),
 * and the client drops a connection that is silent for 2/3 of it; a
 * loaded machine can stall the server's synced writes for seconds, which
 * RT_SESSION_MS (4 s) does not outlast.  This test asserts every add's
 * result, so its sessions are long enough for such a stall. */
#define CTR_SESSION_MS 20000

static int64_t seen[NTHREADS * NADDS];

static void *adder(void *arg)
{
    struct tb_client *c = rt_connect(rt_hosts, CTR_SESSION_MS);
    long t = (long)arg;
    int i;

    for (i = 0; i < NADDS; i++)
        CHECK_RC(tb_counter_add_sync(c, CTR, 1, &seen[t * NADDS + i]), 0);
    tb_client_close(c);
    return NULL;
}

static int by_value(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return x < y ? -1 : x > y;
}

/* Each add's result is the value it wrote: n adds of +1 from `base` must
 * have written base+1 .. base+n, each once. */
static void contention(struct tb_client *c)
{
    pthread_t th[NTHREADS];
    int64_t base, v;
    long t;
    int i;

    CHECK_RC(tb_counter_get_sync(c, CTR, &base, NULL), 0);
    for (t = 0; t < NTHREADS; t++)
        CHECK(pthread_create(&th[t], NULL, adder, (void *)t) == 0);
    for (t = 0; t < NTHREADS; t++)
        pthread_join(th[t], NULL);
    qsort(seen, NTHREADS * NADDS, sizeof seen[0], by_value);
    for (i = 0; i < NTHREADS * NADDS; i++)
        CHECK(seen[i] == base + 1 + i);
    CHECK_RC(tb_counter_get_sync(c, CTR, &v, NULL), 0);
    CHECK(v == base + NTHREADS * NADDS);
    printf("counter: %d threads x %d adds at once: %lld -> %lld, every "
           "result once\n",
           NTHREADS, NADDS, (long long)base, (long long)v);
}

static void counter_cb(int rc, int64_t value, int32_t version, void *data)
{
    struct rt_acq *a = data;

    (void)version;
    rt_acq_set(a, rc, value, NULL);
}

int t_counter(int argc, char **argv)
{
    struct tb_client *c = rt_connect(rt_hosts, CTR_SESSION_MS);
    unsigned char raw[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe};
    char *data;
    size_t len;
    int64_t v;
    int32_t ver, ver2;
    struct tb_stat st;
    struct rt_acq a;

    (void)argc;
    (void)argv;
    rt_rmr(c, "/rt/ctr");
    CHECK_RC(tb_counter_get_sync(c, CTR, &v, &ver), 0);
    CHECK(v == 0 && ver == -1);
    /* Compare-and-set: -1 creates only a missing node. */
    CHECK_RC(tb_counter_cas_sync(c, CTR, -1, 5, &ver), 0);
    CHECK(ver == 0);
    CHECK_RC(tb_counter_cas_sync(c, CTR, -1, 6, NULL), TB_EBADVERSION);
    CHECK_RC(tb_counter_cas_sync(c, CTR, ver, 7, &ver2), 0);
    CHECK(ver2 == ver + 1);
    CHECK_RC(tb_counter_cas_sync(c, CTR, ver, 8, NULL), TB_EBADVERSION);
    CHECK_RC(tb_counter_get_sync(c, CTR, &v, &ver), 0);
    CHECK(v == 7 && ver == ver2);

    /* The layout: Java's putLong. */
    CHECK_RC(tb_counter_add_sync(c, CTR, -9, &v), 0);
    CHECK(v == -2);
    CHECK_RC(tb_get_data_sync(c, CTR, NULL, NULL, &data, &len, NULL), 0);
    CHECK(len == 8 && memcmp(data, raw, 8) == 0);
    tb_free(data);
    CHECK_RC(tb_counter_set_sync(c, CTR, 0x0102030405060708LL), 0);
    CHECK_RC(tb_get_data_sync(c, CTR, NULL, NULL, &data, &len, NULL), 0);
    CHECK(len == 8 && data[0] == 1 && data[7] == 8);
    tb_free(data);

    /* Empty data is 0 (a node made by hand); other data is refused. */
    CHECK_RC(tb_set_data_sync(c, CTR, NULL, 0, -1, NULL), 0);
    CHECK_RC(tb_counter_add_sync(c, CTR, 3, &v), 0);
    CHECK(v == 3);
    CHECK_RC(tb_set_data_sync(c, CTR, "12", 2, -1, NULL), 0);
    CHECK_RC(tb_counter_add_sync(c, CTR, 1, &v), TB_EDATAINCONSISTENCY);
    CHECK_RC(tb_get_data_sync(c, CTR, NULL, NULL, &data, &len, NULL), 0);
    CHECK(len == 2); /* untouched */
    tb_free(data);
    CHECK_RC(tb_counter_set_sync(c, CTR, 0), TB_EDATAINCONSISTENCY);
    /* ... by a compare-and-set too, on the very version (a SharedCount's
     * 4-byte node, say) */
    CHECK_RC(tb_set_data_sync(c, CTR, "\0\0\0\5", 4, -1, &st), 0);
    CHECK_RC(tb_counter_cas_sync(c, CTR, st.version, 6, NULL),
             TB_EDATAINCONSISTENCY);
    CHECK_RC(tb_get_data_sync(c, CTR, NULL, NULL, &data, &len, NULL), 0);
    CHECK(len == 4 && data[3] == 5); /* untouched */
    tb_free(data);
    CHECK_RC(tb_delete_sync(c, CTR, -1), 0);

    /* Asynchronous forms; the first write makes the parents. */
    rt_rmr(c, "/rt/ctr");
    rt_acq_init(&a);
    CHECK_RC(tb_counter_add(c, CTR, 10, counter_cb, &a), 0);
    CHECK_RC(rt_acq_wait(&a, 5000), 0);
    CHECK(a.token == 10);
    rt_acq_init(&a);
    CHECK_RC(tb_counter_get(c, CTR, counter_cb, &a), 0);
    CHECK_RC(rt_acq_wait(&a, 5000), 0);
    CHECK(a.token == 10);
    rt_acq_init(&a);
    CHECK_RC(tb_counter_set(c, CTR, 20, counter_cb, &a), 0);
    CHECK_RC(rt_acq_wait(&a, 5000), 0);
    rt_acq_init(&a);
    CHECK_RC(tb_counter_cas(c, CTR, 0, 30, counter_cb, &a), 0);
    CHECK_RC(rt_acq_wait(&a, 5000), TB_EBADVERSION);
    CHECK_RC(tb_counter_add(c, "/", 1, counter_cb, &a), TB_EINVAL);
    CHECK_RC(tb_counter_get_sync(c, CTR, &v, NULL), 0);
    CHECK(v == 20);

    contention(c);
    rt_rmr(c, "/rt/ctr");
    tb_client_close(c);
    printf("counter: ok\n");
    return 0;
}

/* counter_op PATH get | set V | add N | addlog N: as CuratorCounter
 * does, for the interop script; add prints "ADDED <n> LAST <value>",
 * addlog "ACK <value>" after each add. */
int t_counter_op(int argc, char **argv)
{
    struct tb_client *c;
    int64_t v = 0;
    int i, n;

    CHECK(argc >= 2);
    c = rt_connect(rt_hosts, RT_SESSION_MS);
    if (strcmp(argv[1], "get") == 0) {
        CHECK_RC(tb_counter_get_sync(c, argv[0], &v, NULL), 0);
        printf("VALUE %lld\n", (long long)v);
    } else if (strcmp(argv[1], "set") == 0 && argc >= 3) {
        CHECK_RC(tb_counter_set_sync(c, argv[0], strtoll(argv[2], NULL, 10)),
                 0);
    } else if (strcmp(argv[1], "addlog") == 0 && argc >= 3) {
        n = atoi(argv[2]); /* one line per add, for a test that kills us */
        for (i = 0; i < n; i++) {
            CHECK_RC(tb_counter_add_sync(c, argv[0], 1, &v), 0);
            printf("ACK %lld\n", (long long)v);
        }
    } else {
        CHECK(strcmp(argv[1], "add") == 0 && argc >= 3);
        n = atoi(argv[2]);
        for (i = 0; i < n; i++)
            CHECK_RC(tb_counter_add_sync(c, argv[0], 1, &v), 0);
        printf("ADDED %d LAST %lld\n", n, (long long)v);
    }
    tb_client_close(c);
    return 0;
}
