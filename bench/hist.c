/* Latency histograms with log-linear buckets, so percentiles over millions
 * of samples cost a few counters and no sorting.
 *
 * A value v falls in exponent e = floor(log2(v)) - 6 (0 for v < 128) and
 * sub-bucket v >> e (64..127 once e >= 1) within it; each bucket is at most
 * 1/64 of its value wide, so a reported percentile is within 1.6% of the
 * exact one. */
#include "tbbench.h"

static unsigned bucket_of(uint64_t v)
{
    unsigned e = 0;

    if (v >= BN_HIST_SUB) {
        e = (unsigned)(63 - __builtin_clzll(v)) - 6;
        if (e >= BN_HIST_EXP)
            return BN_HIST_EXP * BN_HIST_SUB - 1;
    }
    return e * BN_HIST_SUB + (unsigned)(v >> e);
}

/* The upper edge of bucket i (a value just inside it). */
static uint64_t bucket_value(unsigned i)
{
    unsigned e = i / BN_HIST_SUB, s = i % BN_HIST_SUB;

    return ((uint64_t)s << e) + ((1ull << e) - 1);
}

void bn_hist_reset(struct bn_hist *h)
{
    memset(h, 0, sizeof(*h));
}

void bn_hist_add(struct bn_hist *h, uint64_t v)
{
    if (h->n == 0 || v < h->min)
        h->min = v;
    if (v > h->max)
        h->max = v;
    h->n++;
    h->sum += v;
    h->b[bucket_of(v)]++;
}

uint64_t bn_hist_q(const struct bn_hist *h, double q)
{
    uint64_t rank, seen = 0;
    unsigned i;

    if (h->n == 0)
        return 0;
    rank = (uint64_t)(q * (double)h->n + 0.5);
    if (rank < 1)
        rank = 1;
    if (rank > h->n)
        rank = h->n;
    for (i = 0; i < BN_HIST_EXP * BN_HIST_SUB; i++) {
        seen += h->b[i];
        if (seen >= rank) {
            uint64_t v = bucket_value(i);
            if (v > h->max)
                v = h->max;
            if (v < h->min)
                v = h->min;
            return v;
        }
    }
    return h->max;
}

void bn_hist_merge(struct bn_hist *into, const struct bn_hist *h)
{
    unsigned i;

    if (h->n == 0)
        return;
    if (into->n == 0 || h->min < into->min)
        into->min = h->min;
    if (h->max > into->max)
        into->max = h->max;
    into->n += h->n;
    into->sum += h->sum;
    for (i = 0; i < BN_HIST_EXP * BN_HIST_SUB; i++)
        into->b[i] += h->b[i];
}

double bn_hist_mean(const struct bn_hist *h)
{
    return h->n ? (double)h->sum / (double)h->n : 0.0;
}
