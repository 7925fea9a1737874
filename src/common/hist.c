/* Latency histograms (hist.h). */
#include <inttypes.h>
#include <stdio.h>

#include "common/hist.h"

#define HIST__BOUND(us) us,
static const uint64_t bounds[HIST_NBOUNDS] = {HIST_BOUNDS(HIST__BOUND)};

void hist_note(struct hist *h, uint64_t us)
{
    unsigned i;

    h->count++;
    h->sum_us += us;
    for (i = 0; i < HIST_NBOUNDS; i++)
        if (us <= bounds[i]) {
            h->in[i]++;
            return;
        }
}

void hist_add(struct hist *to, const struct hist *from)
{
    unsigned i;

    to->count += from->count;
    to->sum_us += from->sum_us;
    for (i = 0; i < HIST_NBOUNDS; i++)
        to->in[i] += from->in[i];
}

double hist_quantile_us(const struct hist *h, double q)
{
    double rank = q * (double)h->count, below = 0, lower = 0;
    unsigned i;

    if (h->count == 0)
        return -1;
    for (i = 0; i < HIST_NBOUNDS; i++) {
        if (h->in[i] > 0 && below + (double)h->in[i] >= rank)
            return lower + ((double)bounds[i] - lower) * (rank - below) /
                               (double)h->in[i];
        below += (double)h->in[i];
        lower = (double)bounds[i];
    }
    return lower; /* in +Inf: past the last bound, how far is not known */
}

static void series(struct tb_wbuf *out, const char *name, const char *suffix,
                   const char *labels, const char *le)
{
    int any = *labels != '\0' || le != NULL;

    tb_wbuf_printf(out, "%s%s%s%s%s%s%s%s", name, suffix, any ? "{" : "",
                   labels, *labels && le ? "," : "", le ? "le=\"" : "",
                   le ? le : "", le ? "\"}" : any ? "}" : "");
}

void hist_render(struct tb_wbuf *out, const char *name, const char *labels,
                 const struct hist *h)
{
    char le[32];
    uint64_t below = 0;
    unsigned i;

    for (i = 0; i < HIST_NBOUNDS; i++) {
        below += h->in[i];
        /* microseconds as seconds, exactly: 250 -> 0.00025 */
        snprintf(le, sizeof le, "%" PRIu64 ".%06" PRIu64, bounds[i] / 1000000,
                 bounds[i] % 1000000);
        series(out, name, "_bucket", labels, le);
        tb_wbuf_printf(out, " %" PRIu64 "\n", below);
    }
    series(out, name, "_bucket", labels, "+Inf");
    tb_wbuf_printf(out, " %" PRIu64 "\n", h->count);
    series(out, name, "_sum", labels, NULL);
    tb_wbuf_printf(out, " %" PRIu64 ".%06" PRIu64 "\n", h->sum_us / 1000000,
                   h->sum_us % 1000000);
    series(out, name, "_count", labels, NULL);
    tb_wbuf_printf(out, " %" PRIu64 "\n", h->count);
}
