/* The herd effect, counted: N waiters, each in its own session, queue on
 * one lock behind a holder; the holder releases and every waiter, once it
 * gets the lock, releases at once.  Each recipe counts the watch events
 * delivered to its waiting watches (tb_recipe_stats.wakeups).
 *
 * Fair lock: a release notifies only the next waiter, so the total is
 * about N for N acquisitions.  Non-fair lock: every release notifies every
 * remaining waiter, so the total grows with N squared and the figure per
 * acquisition with N.  The test prints the table and asserts both. */
#include <string.h>

#include "rt.h"
#include "rt_async.h"
#include "tests.h"

#define MAXW 100

struct herd {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int acquired;
    int64_t last_token;
    int order_ok;
    struct tb_mutex *m[MAXW];
};

struct wslot {
    struct herd *h;
    int i;
};

static void on_released(int rc, void *data)
{
    CHECK_RC(rc, 0);
    (void)data;
}

static void on_acquired(int rc, int64_t token, void *data)
{
    struct wslot *w = data;
    struct herd *h = w->h;

    CHECK_RC(rc, 0);
    pthread_mutex_lock(&h->mu);
    if (token <= h->last_token)
        h->order_ok = 0;
    h->last_token = token;
    h->acquired++;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
    /* A short hold, so the losers of the last race are all watching
     * again before the release (each waiter has its own client, so this
     * blocks nobody else's I/O thread). */
    rt_sleep_ms(5);
    CHECK_RC(tb_mutex_unlock(h->m[w->i], on_released, NULL), 0);
}

/* Runs one round; returns the total of wakeups. */
static uint64_t round_of(struct tb_client **cs, int n, int kind,
                         const char *path, uint64_t *watches)
{
    struct tb_lock_options o = {.kind = kind};
    struct herd h;
    struct wslot slots[MAXW];
    struct tb_mutex *holder;
    struct tb_recipe_stats st;
    uint64_t total = 0;
    int i, queued;
    int64_t end;

    memset(&h, 0, sizeof h);
    pthread_mutex_init(&h.mu, NULL);
    pthread_cond_init(&h.cv, NULL);
    h.order_ok = 1;
    CHECK_RC(tb_mutex_new(&holder, cs[0], path, &o), 0);
    CHECK_RC(tb_mutex_lock_sync(holder, 10000, &h.last_token), 0);
    for (i = 0; i < n; i++) {
        slots[i].h = &h;
        slots[i].i = i;
        CHECK_RC(tb_mutex_new(&h.m[i], cs[1 + i], path, &o), 0);
        CHECK_RC(tb_mutex_lock(h.m[i], -1, on_acquired, &slots[i]), 0);
    }
    /* Everyone waits: each has set its watch. */
    end = rt_now_ms() + 20000;
    do {
        rt_sleep_ms(20);
        for (queued = 0, i = 0; i < n; i++) {
            tb_mutex_stats(h.m[i], &st);
            queued += st.watches_set > 0;
        }
    } while (queued < n && rt_now_ms() < end);
    CHECK(queued == n);
    CHECK_RC(tb_mutex_unlock_sync(holder), 0);
    pthread_mutex_lock(&h.mu);
    end = rt_now_ms() + 60000;
    while (h.acquired < n && rt_now_ms() < end) {
        pthread_mutex_unlock(&h.mu);
        rt_sleep_ms(10);
        pthread_mutex_lock(&h.mu);
    }
    CHECK(h.acquired == n);
    CHECK(h.order_ok);
    pthread_mutex_unlock(&h.mu);
    rt_sleep_ms(300); /* stragglers: late events still count */
    *watches = 0;
    for (i = 0; i < n; i++) {
        tb_mutex_stats(h.m[i], &st);
        total += st.wakeups;
        *watches += st.watches_set;
        CHECK(st.acquisitions == 1);
        tb_mutex_free(h.m[i]);
    }
    tb_mutex_free(holder);
    return total;
}

int t_herd(int argc, char **argv)
{
    struct tb_client *cs[MAXW + 1];
    int sizes[8], ns = 0, i, kind, maxn = 0;
    double first = 0, last = 0;
    char path[64];

    CHECK(argc >= 2);
    kind = strcmp(argv[0], "nonfair") == 0 ? TB_LOCK_NONFAIR : TB_LOCK_FAIR;
    for (i = 1; i < argc && ns < 8; i++) {
        sizes[ns] = atoi(argv[i]);
        CHECK(sizes[ns] > 0 && sizes[ns] <= MAXW);
        if (sizes[ns] > maxn)
            maxn = sizes[ns];
        ns++;
    }
    for (i = 0; i <= maxn; i++)
        cs[i] = rt_connect(rt_hosts, 10000);
    snprintf(path, sizeof path, "/rt/herd/%s", argv[0]);
    rt_rmr(cs[0], "/rt/herd");
    printf("%-8s %8s %12s %13s %14s %16s\n", "lock", "waiters",
           "acquisitions", "watches set", "notifications", "per acquisition");
    for (i = 0; i < ns; i++) {
        uint64_t watches;
        uint64_t w = round_of(cs, sizes[i], kind, path, &watches);
        double per = (double)w / sizes[i];
        printf("%-8s %8d %12d %13llu %14llu %16.2f\n", argv[0], sizes[i],
               sizes[i], (unsigned long long)watches, (unsigned long long)w,
               per);
        if (i == 0)
            first = per;
        last = per;
        if (kind == TB_LOCK_FAIR) /* about one per acquisition */
            CHECK(w >= (uint64_t)sizes[i] - 1 &&
                  w <= (uint64_t)sizes[i] + sizes[i] / 10 + 1);
    }
    if (kind == TB_LOCK_NONFAIR && ns > 1) /* grows with the waiters */
        CHECK(last > 2 * first && last >= maxn / 10.0);
    for (i = 0; i <= maxn; i++)
        tb_client_close(cs[i]);
    return 0;
}
