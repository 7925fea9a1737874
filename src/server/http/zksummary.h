/* ZooKeeper's summaries (fsynctime, snapshottime, readlatency,
 * updatelatency) in the shape its PrometheusMetricsProvider gives them, so
 * the dashboard panels built on them work: TYPE summary, milliseconds,
 * NAME{quantile="0.5"} (and "0.9", "0.99" for those ZooKeeper keeps at
 * its advanced detail level), NAME_count, NAME_sum.
 *
 * Tumbler keeps histograms, not ZooKeeper's streaming quantiles: the
 * count and sum are exact, the quantiles are estimates from the buckets
 * (hist_quantile_us), as Prometheus's histogram_quantile() would give. */
#ifndef TB_ZKSUMMARY_H
#define TB_ZKSUMMARY_H

#include "common/common.h"
#include "common/hist.h"

enum zksummary_detail {
    ZKSUMMARY_BASIC,   /* the median only */
    ZKSUMMARY_ADVANCED /* 0.5, 0.9, 0.99 */
};

void zksummary_render(struct tb_wbuf *out, const char *name, const char *help,
                      enum zksummary_detail detail, const struct hist *h);

#endif
