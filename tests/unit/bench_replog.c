/* bench_replog: figures for the replicated log, not a test.
 *
 * Measures, on a real raft_uv data dir (argv[1], default a fresh dir under
 * /tmp) with 100-byte payloads:
 *   - propose->done latency (p50/p90/p99/max) and throughput with 1 and 64
 *     proposals in flight, 1 MiB state, the default snapshot policy;
 *   - the loop stall of a snapshot of a ~100 MiB state (half random, so LZ4
 *     halves it), with 1 and 64 in flight, snapshot every 20000 entries;
 *   - the time replog_open takes to restore that snapshot and replay the
 *     log behind it;
 *   - the same state under the default policy (threshold from state size).
 * Usage: bench_replog [dir] [scale]   (scale < 1 shortens every run) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/replog/replog.h"

struct bench {
    uv_loop_t loop;
    struct replog *l;
    uint8_t *state;
    size_t state_len;
    size_t total, issued, completed;
    unsigned conc, inflight;
    uint64_t *lat; /* ns, one per proposal */
    int failed;
    int closed;
};

struct slot {
    struct bench *b;
    uint64_t t0;
};

static void b_apply(void *data, int64_t index, const void *p, size_t n)
{
    struct bench *b = data;

    /* O(1) per entry, as the real tree is O(path). */
    if (n > 0)
        b->state[((uint64_t)index * 64) % b->state_len] ^=
            ((const uint8_t *)p)[0];
}

static int b_snapshot(void *data, struct tb_wbuf *out)
{
    struct bench *b = data;

    tb_wbuf_put(out, b->state, b->state_len);
    return out->oom ? TB_ENOMEM : 0;
}

static int b_restore(void *data, const void *buf, size_t len)
{
    struct bench *b = data;

    if (len != b->state_len)
        return TB_EMARSHALLING;
    memcpy(b->state, buf, len);
    return 0;
}

static void b_log(void *data, int level, const char *msg)
{
    (void)data;
    if (level <= REPLOG_LOG_WARN)
        fprintf(stderr, "replog: %s\n", msg);
}

static void pump(struct bench *b);

static void done(void *arg, int status, int64_t index)
{
    struct slot *s = arg;
    struct bench *b = s->b;

    (void)index;
    if (status != 0)
        b->failed++;
    b->lat[b->completed++] = uv_hrtime() - s->t0;
    free(s);
    b->inflight--;
    pump(b);
}

static void pump(struct bench *b)
{
    static uint8_t payload[100];

    while (b->inflight < b->conc && b->issued < b->total) {
        struct slot *s = malloc(sizeof *s);

        s->b = b;
        payload[0] = (uint8_t)b->issued;
        s->t0 = uv_hrtime();
        if (replog_propose(b->l, payload, sizeof payload, done, s) != 0) {
            fprintf(stderr, "propose refused\n");
            exit(1);
        }
        b->issued++;
        b->inflight++;
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static double pct(const uint64_t *v, size_t n, double p)
{
    size_t i = (size_t)(p * (double)(n - 1));
    return (double)v[i] / 1e3;
}

static void run(struct bench *b, const char *name, unsigned conc, size_t total)
{
    struct replog_stats s0, s1;
    uint64_t t0, dt;

    b->conc = conc;
    b->total = total;
    b->issued = b->completed = 0;
    b->lat = calloc(total, sizeof *b->lat);
    replog_get_stats(b->l, &s0);
    t0 = uv_hrtime();
    pump(b);
    while (b->completed < total)
        uv_run(&b->loop, UV_RUN_ONCE);
    dt = uv_hrtime() - t0;
    replog_get_stats(b->l, &s1);
    qsort(b->lat, total, sizeof *b->lat, cmp_u64);
    printf("%-28s conc %3u  n %7zu  %8.0f ops/s  p50 %7.0f us  p90 %7.0f us"
           "  p99 %7.0f us  max %8.0f us  snapshots %llu  stall max %.1f ms\n",
           name, conc, total, (double)total / ((double)dt / 1e9),
           pct(b->lat, total, 0.50), pct(b->lat, total, 0.90),
           pct(b->lat, total, 0.99), (double)b->lat[total - 1] / 1e3,
           (unsigned long long)(s1.snapshots_taken - s0.snapshots_taken),
           s1.snapshot_stall_max_ms);
    fflush(stdout);
    free(b->lat);
}

static void on_closed(void *arg)
{
    ((struct bench *)arg)->closed = 1;
}

static void b_close(struct bench *b)
{
    b->closed = 0;
    replog_close(b->l, on_closed, b);
    while (!b->closed)
        uv_run(&b->loop, UV_RUN_ONCE);
}

static void b_open(struct bench *b, struct replog_config *c)
{
    struct replog_fsm f = {b, b_apply, b_snapshot, b_restore};

    if (replog_open(&b->l, &b->loop, c, &f) != 0) {
        fprintf(stderr, "replog_open failed\n");
        exit(1);
    }
}

static void fill_state(struct bench *b, size_t len)
{
    uint64_t x = 88172645463325252ull;
    size_t i;

    free(b->state);
    b->state_len = len;
    b->state = calloc(1, len);
    for (i = 0; i < len / 2; i++) { /* half random, half zeros */
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        b->state[i] = (uint8_t)x;
    }
}

int main(int argc, char **argv)
{
    static struct bench b;
    char dir[256], sub[300];
    double scale = argc > 2 ? atof(argv[2]) : 1.0;
    struct replog_config c;
    struct replog_stats st;
    uint64_t t0;

    if (argc > 1 && argv[1][0] != '\0') {
        snprintf(dir, sizeof dir, "%s", argv[1]);
    } else {
        snprintf(dir, sizeof dir, "/tmp/bench_replog_XXXXXX");
        if (mkdtemp(dir) == NULL)
            return 1;
    }
    printf("data dir %s, 100-byte payloads\n", dir);
    uv_loop_init(&b.loop);
    memset(&c, 0, sizeof c);
    c.server_id = 1;
    c.log = b_log;

    /* 1 MiB state, default snapshot policy (every 4 MiB of log). */
    snprintf(sub, sizeof sub, "%s/small", dir);
    c.dir = sub;
    fill_state(&b, 1u << 20);
    b_open(&b, &c);
    run(&b, "1 MiB state, default policy", 1, (size_t)(20000 * scale));
    run(&b, "1 MiB state, default policy", 64, (size_t)(200000 * scale));
    b_close(&b);

    /* ~100 MiB state, a snapshot every 20000 entries. */
    snprintf(sub, sizeof sub, "%s/big", dir);
    c.dir = sub;
    c.snapshot_max_entries = 20000;
    fill_state(&b, 100u << 20);
    b_open(&b, &c);
    run(&b, "100 MiB state, every 20000", 1, (size_t)(25000 * scale));
    run(&b, "100 MiB state, every 20000", 64, (size_t)(65000 * scale));
    replog_get_stats(b.l, &st);
    printf("snapshot: %llu taken, last %llu bytes, loop stall max %.1f ms, "
           "last %.1f ms\n",
           (unsigned long long)st.snapshots_taken,
           (unsigned long long)st.last_snapshot_bytes, st.snapshot_stall_max_ms,
           st.snapshot_stall_last_ms);
    t0 = uv_hrtime();
    b_close(&b);
    printf("close (drain + final snapshot write): %.0f ms\n",
           (double)(uv_hrtime() - t0) / 1e6);

    memset(b.state, 0, b.state_len);
    t0 = uv_hrtime();
    b_open(&b, &c);
    replog_get_stats(b.l, &st);
    printf("reopen: restore %llu-byte snapshot + replay to index %lld: "
           "%.0f ms\n",
           (unsigned long long)st.last_snapshot_bytes,
           (long long)st.last_applied, (double)(uv_hrtime() - t0) / 1e6);
    b_close(&b);

    /* The same state under the default policy: a snapshot every 100000
     * entries (their bytes stay below the state's). */
    snprintf(sub, sizeof sub, "%s/big-default", dir);
    c.dir = sub;
    c.snapshot_max_entries = 0;
    b_open(&b, &c);
    run(&b, "100 MiB state, default policy", 64, (size_t)(250000 * scale));
    b_close(&b);
    uv_loop_close(&b.loop);
    free(b.state);
    return b.failed ? 1 : 0;
}
