/* ZooKeeper's summaries from Tumbler's histograms (zksummary.h). */
#include <inttypes.h>

#include "server/http/zksummary.h"

void zksummary_render(struct tb_wbuf *out, const char *name, const char *help,
                      enum zksummary_detail detail, const struct hist *h)
{
    static const struct {
        double q;
        const char *label;
    } quantiles[] = {{0.5, "0.5"}, {0.9, "0.9"}, {0.99, "0.99"}};
    unsigned i, n = detail == ZKSUMMARY_ADVANCED ? 3 : 1;
    double us;

    tb_wbuf_printf(out, "# HELP %s %s\n# TYPE %s summary\n", name, help, name);
    for (i = 0; i < n; i++) {
        us = hist_quantile_us(h, quantiles[i].q);
        /* nothing seen: NaN, as a Prometheus summary without observations */
        if (us < 0)
            tb_wbuf_printf(out, "%s{quantile=\"%s\"} NaN\n", name,
                           quantiles[i].label);
        else
            tb_wbuf_printf(out, "%s{quantile=\"%s\"} %.6g\n", name,
                           quantiles[i].label, us / 1000);
    }
    tb_wbuf_printf(out, "%s_count %" PRIu64 "\n", name, h->count);
    tb_wbuf_printf(out, "%s_sum %" PRIu64 ".%03" PRIu64 "\n", name,
                   h->sum_us / 1000, h->sum_us % 1000);
}
