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
