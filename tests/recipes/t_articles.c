/* The articles' test: N clients on each of K keys, every client its own
 * session, each taking its key's fair lock once and holding it HOLD_MS.
 * Every hold is recorded (its node's sequence number, token, start and
 * end) and checked, per key: no two holds overlap, grants follow the
 * queue's order (sequence numbers and tokens rise in hold order: FIFO),
 * every client was served once, and the key's nodes are all gone after.
 * Prints, per key, the time from the first grant to the last release
 * against the holds alone, and the mean gap between one release and the
 * next grant.  CI runs it small (100 x 2 x 20 ms, recipes_articles_*);
 * bench/articles.sh runs the articles' own 1,000 x 2 x 500 ms. */
#include <pthread.h>
#include <string.h>

#include "rt.h"
#include "tests.h"

struct art_hold {
    int64_t seq, token, t0, t1; /* ns, CLOCK_MONOTONIC */
    int done;
};

struct art {
    int key, holds_ms;
    struct tb_client *c;
    struct art_hold h;
};

static pthread_barrier_t art_start;

static void key_path(int key, char *buf, size_t cap)
{
    snprintf(buf, cap, "/rt/articles/key%d", key);
}

static void *art_client(void *arg)
{
    struct art *a = arg;
    struct tb_mutex *m;
    char path[64], node[512];

    key_path(a->key, path, sizeof path);
    CHECK_RC(tb_mutex_new(&m, a->c, path, NULL), 0);
    pthread_barrier_wait(&art_start); /* all queue at once */
    CHECK_RC(tb_mutex_lock_sync(m, -1, &a->h.token), 0);
    a->h.t0 = rt_now_ns();
    CHECK_RC(tb_mutex_node(m, node, sizeof node), 0);
    a->h.seq = strtoll(node + strlen(node) - 10, NULL, 10);
    rt_sleep_ms(a->holds_ms);
    a->h.t1 = rt_now_ns();
    CHECK_RC(tb_mutex_unlock_sync(m), 0);
    a->h.done = 1;
    tb_mutex_free(m);
    return NULL;
}

static int by_t0(const void *x, const void *y)
{
    const struct art_hold *a = x, *b = y;

    return a->t0 < b->t0 ? -1 : a->t0 > b->t0;
}

/* The checks of one key; returns the failures. */
static int check_key(int key, struct art_hold *v, int n, int hold_ms)
{
    int i, overlaps = 0, order = 0, unserved = 0;
    int64_t gaps = 0, span;

    qsort(v, (size_t)n, sizeof *v, by_t0);
    for (i = 0; i < n; i++) {
        unserved += !v[i].done;
        if (i == 0)
            continue;
        overlaps += v[i].t0 < v[i - 1].t1;
        order += v[i].seq <= v[i - 1].seq || v[i].token <= v[i - 1].token;
        gaps += v[i].t0 - v[i - 1].t1;
    }
    span = v[n - 1].t1 - v[0].t0;
    printf("key%d: %d holds of %d ms: %.3f s from the first grant to the "
           "last release, %.3f s of holds; mean gap between holds %.3f ms; "
           "overlaps %d, out of queue order %d, unserved %d\n",
           key, n, hold_ms, span / 1e9, (double)n * hold_ms / 1e3,
           n > 1 ? gaps / 1e6 / (n - 1) : 0.0, overlaps, order, unserved);
    return overlaps + order + unserved;
}

/* articles N KEYS HOLD_MS */
int t_articles(int argc, char **argv)
{
    int n, keys, hold_ms, i, k, bad = 0;
    struct art *a;
    pthread_t *th;
    struct tb_client *c0;
    int64_t t0;

    CHECK(argc >= 3);
    n = atoi(argv[0]);
    keys = atoi(argv[1]);
    hold_ms = atoi(argv[2]);
    CHECK(n > 0 && keys > 0 && hold_ms >= 0);
    c0 = rt_connect(rt_hosts, RT_SESSION_MS);
    rt_rmr(c0, "/rt/articles");
    a = calloc((size_t)(n * keys), sizeof *a);
    th = calloc((size_t)(n * keys), sizeof *th);
    CHECK(a != NULL && th != NULL);
    /* Sessions first, so the measured part is the locks alone. */
    for (i = 0; i < n * keys; i++) {
        a[i].key = i % keys;
        a[i].holds_ms = hold_ms;
        a[i].c = rt_connect(rt_hosts, 30000);
    }
    printf("articles: %d sessions connected\n", n * keys);
    CHECK(pthread_barrier_init(&art_start, NULL, (unsigned)(n * keys)) == 0);
    t0 = rt_now_ms();
    for (i = 0; i < n * keys; i++)
        CHECK(pthread_create(&th[i], NULL, art_client, &a[i]) == 0);
    for (i = 0; i < n * keys; i++)
        pthread_join(th[i], NULL);
    printf("articles: all %d holds done in %.3f s\n", n * keys,
           (rt_now_ms() - t0) / 1e3);
    for (k = 0; k < keys; k++) {
        struct art_hold *v = calloc((size_t)n, sizeof *v);
        char path[64];
        int m = 0;
        CHECK(v != NULL);
        for (i = 0; i < n * keys; i++)
            if (a[i].key == k)
                v[m++] = a[i].h;
        bad += check_key(k, v, m, hold_ms);
        free(v);
        key_path(k, path, sizeof path);
        CHECK(rt_nchildren(c0, path) == 0); /* every node gone */
    }
    for (i = 0; i < n * keys; i++)
        tb_client_close(a[i].c);
    pthread_barrier_destroy(&art_start);
    free(a);
    free(th);
    tb_client_close(c0);
    CHECK(bad == 0);
    printf("articles: ok\n");
    return 0;
}
