/* The Prometheus endpoint's text (exposition format 0.0.4).
 *
 * Every figure mntr shows, from the same walk (fourlw_emit_mntr): a number
 * under mntr's name without "zk_" (znode_count, avg_latency, ...), which is
 * the name ZooKeeper's PrometheusMetricsProvider gives the same figure, so
 * its dashboards find them; a figure of one quota namespace or one member
 * as a label, key="..." (as ZooKeeper's labelled gauges); a text figure
 * (server_state, version) as tumbler_<name>{<name>="<text>"} 1.  All are
 * gauges, as ZooKeeper declares them.  Then what mntr's flat lines cannot
 * carry, added by `more` (histograms, and ZooKeeper's summaries made from
 * them: zksummary.h). */
#ifndef TB_METRICS_H
#define TB_METRICS_H

#include "common/common.h"

struct fourlw_source;

#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

void metrics_render(const struct fourlw_source *src,
                    void (*more)(void *arg, struct tb_wbuf *out), void *arg,
                    struct tb_wbuf *out);

/* Request types as ZooKeeper names them (its OpCode names): the `op` label
 * of the request latency histograms.  METRICS_NOPS types, indexed by
 * metrics_op_index(opcode) (-1: not one of them). */
#define METRICS_NOPS 31
int metrics_op_index(int32_t opcode);
const char *metrics_op_name(int index);

/* How ZooKeeper splits its request latency: 1 for a type it counts in
 * updatelatency (one that makes a txn: a write, a check, a multi, a
 * reconfig, a session's start or close), 0 for one in readlatency (every
 * other it answers, pings and watch settings too), -1 for neither (auth and
 * sasl, answered before its request pipeline). */
int metrics_op_is_update(int index);

#endif
