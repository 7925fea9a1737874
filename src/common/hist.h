/* Latency histograms in Prometheus's shape: fixed bucket bounds, counts per
 * bucket, a sum and a count.  Noting a value is a few comparisons and three
 * additions, cheap enough for every request.  No clock here: the caller
 * measures. */
#ifndef TB_COMMON_HIST_H
#define TB_COMMON_HIST_H

#include <stdint.h>

#include "common/common.h"

/* Upper bounds in microseconds, 100 us to 10 s; a value above the last is
 * counted in +Inf only (count). */
#define HIST_BOUNDS(X)                                                      \
    X(100) X(250) X(500) X(1000) X(2500) X(5000) X(10000) X(25000)         \
    X(50000) X(100000) X(250000) X(500000) X(1000000) X(2500000)           \
    X(5000000) X(10000000)
#define HIST__ONE(us) +1
#define HIST_NBOUNDS (0 HIST_BOUNDS(HIST__ONE))

/* At all times count >= the sum of `in`, and sum_us the sum of every value
 * noted. */
struct hist {
    uint64_t count;
    uint64_t sum_us;
    uint64_t in[HIST_NBOUNDS]; /* values in (bound[i-1], bound[i]] */
};

void hist_note(struct hist *h, uint64_t us);

/* Adds `from`'s counts and sum to `to`'s: several series as one. */
void hist_add(struct hist *to, const struct hist *from);

/* An estimate of the q-quantile (0 < q < 1) in microseconds, from the
 * buckets alone, as Prometheus's histogram_quantile() makes it: the bucket
 * that holds the value of rank q * count is found, and the value is placed
 * within it linearly, as if its values were spread evenly from its lower
 * bound (0 for the first) to its upper.  So it can be off by up to a
 * bucket's width; a rank past the last bound gives that bound (10 s).
 * -1 when nothing has been noted. */
double hist_quantile_us(const struct hist *h, double q);

/* Prometheus text lines of one histogram series, in seconds:
 *   NAME_bucket{LABELS,le="0.0001"} N ... {le="+Inf"} N, NAME_sum, NAME_count
 * `labels` is "" or already formatted without braces ("op=\"create\""). */
void hist_render(struct tb_wbuf *out, const char *name, const char *labels,
                 const struct hist *h);

#endif
