/* Helpers of the recipe tests (see rt.h). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rt.h"

const char *rt_hosts;

int64_t rt_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t rt_now_ms(void)
{
    return rt_now_ns() / 1000000;
}

void rt_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static void log_cb(void *data, int level, const char *msg)
{
    (void)data;
    fprintf(stderr, "[%lld] client %d: %s\n", (long long)rt_now_ms() % 100000,
            level, msg);
}

struct tb_client *rt_connect(const char *hosts, int session_ms)
{
    struct tb_options o;
    struct tb_client *c;
    int rc = -1, i;

    memset(&o, 0, sizeof o);
    o.hosts = hosts;
    o.session_timeout_ms = session_ms;
    o.connect_timeout_ms = 1000;
    o.state_cb = tb_recipes_state_cb;
    if (getenv("RT_DEBUG") != NULL) {
        o.log_cb = log_cb;
        o.log_level = atoi(getenv("RT_DEBUG"));
    }
    for (i = 0; i < 3 && rc != 0; i++) { /* a busy CI machine: retry */
        CHECK_RC(tb_client_init(&c, &o), 0);
        CHECK_RC(tb_client_start(c), 0);
        rc = tb_client_wait_connected(c, 10000);
        if (rc != 0) {
            fprintf(stderr, "connect to %s: %s, retrying\n", hosts,
                    tb_errname(rc));
            tb_client_close(c);
        }
    }
    CHECK_RC(rc, 0);
    return c;
}

int rt_nchildren(struct tb_client *c, const char *path)
{
    return rt_nchildren_with(c, path, "");
}

int rt_nchildren_with(struct tb_client *c, const char *path, const char *sub)
{
    struct tb_strings v;
    int rc, i, n = 0;

    rc = tb_get_children_sync(c, path, NULL, NULL, &v);
    if (rc == TB_ENONODE)
        return 0;
    CHECK_RC(rc, 0);
    for (i = 0; i < v.count; i++)
        if (strstr(v.v[i], sub) != NULL)
            n++;
    tb_strings_free(&v);
    return n;
}

void rt_rmr(struct tb_client *c, const char *path)
{
    struct tb_strings v;
    int i;

    if (tb_get_children_sync(c, path, NULL, NULL, &v) != 0)
        return;
    for (i = 0; i < v.count; i++) {
        char sub[1024];
        snprintf(sub, sizeof sub, "%s/%s", path, v.v[i]);
        rt_rmr(c, sub);
    }
    tb_strings_free(&v);
    tb_delete_sync(c, path, -1);
}

int rt_wait_nchildren(struct tb_client *c, const char *path, int n, int ms)
{
    int64_t end = rt_now_ms() + ms;
    int k;

    while ((k = rt_nchildren(c, path)) != n && rt_now_ms() < end)
        rt_sleep_ms(20);
    return k;
}

void rt_hold_log(const char *file, const struct rt_hold *h)
{
    char line[128];
    int n, fd = open(file, O_WRONLY | O_CREAT | O_APPEND, 0644);

    CHECK(fd >= 0);
    n = snprintf(line, sizeof line, "%lld %lld %lld %ld\n", (long long)h->token,
                 (long long)h->t0, (long long)h->t1, h->who);
    CHECK(write(fd, line, (size_t)n) == n);
    close(fd);
}

int rt_hold_read(const char *file, struct rt_hold **out)
{
    FILE *f = fopen(file, "r");
    struct rt_hold *v = NULL, h;
    long long a, b, c;
    int n = 0, cap = 0;

    CHECK(f != NULL);
    while (fscanf(f, "%lld %lld %lld %ld", &a, &b, &c, &h.who) == 4) {
        h.token = a;
        h.t0 = b;
        h.t1 = c;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            v = realloc(v, (size_t)cap * sizeof *v);
            CHECK(v != NULL);
        }
        v[n++] = h;
    }
    fclose(f);
    *out = v;
    return n;
}

static int by_start(const void *a, const void *b)
{
    const struct rt_hold *x = a, *y = b;

    return x->t0 < y->t0 ? -1 : x->t0 > y->t0;
}

int rt_hold_check(struct rt_hold *v, int n, const char *what)
{
    int i, overlap = 0, order = 0, owners = 0;

    qsort(v, (size_t)n, sizeof *v, by_start);
    for (i = 0; i < n; i++) {
        int j;
        for (j = 0; j < i && v[j].who != v[i].who; j++)
            ;
        owners += j == i;
        if (i == 0)
            continue;
        if (v[i].t0 < v[i - 1].t1) {
            fprintf(stderr,
                    "%s: holds overlap: token %lld [%lld, %lld] "
                    "and token %lld [%lld, %lld]\n",
                    what, (long long)v[i - 1].token, (long long)v[i - 1].t0,
                    (long long)v[i - 1].t1, (long long)v[i].token,
                    (long long)v[i].t0, (long long)v[i].t1);
            overlap = 1;
        }
        if (v[i].token <= v[i - 1].token) {
            fprintf(stderr, "%s: token %lld after token %lld\n", what,
                    (long long)v[i].token, (long long)v[i - 1].token);
            order = 1;
        }
    }
    printf("%s: %d holds by %ld owners; no overlap: %s; tokens rise in "
           "hold order: %s\n",
           what, n, (long)owners, overlap ? "NO" : "yes", order ? "NO" : "yes");
    return overlap || order;
}

int rt_wait_gone(struct tb_client *c, const char *path, int ms)
{
    int64_t end = rt_now_ms() + ms;
    int rc;

    while ((rc = tb_exists_sync(c, path, NULL, NULL, NULL)) == 0 &&
           rt_now_ms() < end)
        rt_sleep_ms(50);
    return rc == TB_ENONODE;
}
