/* The server's two HTTP endpoints, each started only if configured:
 *
 *   metricsProvider.className=...PrometheusMetricsProvider
 *       GET http://httpHost:httpPort/metrics, Prometheus's text
 *   admin.enableServer=true
 *       GET http://serverAddress:serverPort/commands[/NAME], the AdminServer
 *
 * Both read the server through admin_source(), the same callbacks as the
 * four-letter words, and answer from the loop thread (httpd.h). */
#include <string.h>

#include "server/admin/adminsrv.h"
#include "server/admin/fourlw.h"
#include "server/config/config.h"
#include "server/http/httpd.h"
#include "server/http/metrics.h"
#include "server/http/zksummary.h"
#include "server/logging/log.h"
#include "server/peer/peer.h"
#include "server/replog/replog.h"
#include "server/server.h"

/* ZooKeeper's summaries where tumblerd has the same figure, so the panels
 * of its dashboards built on them work (zksummary.h): fsynctime from the
 * log's writes (each ends in its fdatasync), snapshottime from the
 * snapshots' making, readlatency and updatelatency from the request types'
 * histograms, split as ZooKeeper splits them; election_time from each
 * election's time on this member (election.h: from losing or lacking a
 * leader to naming one; none on a server alone, as on ZooKeeper's). */
static void zk_summaries(const struct tbd *s, const struct replog_stats *rs,
                         struct tb_wbuf *out)
{
    struct hist reads = {0}, updates = {0}, none = {0};
    const struct hist *el;
    int i, kind;

    zksummary_render(out, "fsynctime", "A write of the log, fdatasync "
                     "included, in ms.", ZKSUMMARY_BASIC, &rs->log_write_hist);
    zksummary_render(out, "snapshottime", "The making of a snapshot, in ms.",
                     ZKSUMMARY_BASIC, &rs->snapshot_hist);
    for (i = 0; i < METRICS_NOPS; i++) {
        kind = metrics_op_is_update(i);
        if (kind >= 0)
            hist_add(kind ? &updates : &reads, &s->req_latency[i]);
    }
    zksummary_render(out, "readlatency", "From a read's arrival to its "
                     "answer, in ms.", ZKSUMMARY_ADVANCED, &reads);
    zksummary_render(out, "updatelatency", "From a write's arrival to its "
                     "answer, in ms.", ZKSUMMARY_ADVANCED, &updates);
    el = peer_election_time(s);
    zksummary_render(out, "election_time", "From losing or lacking a leader "
                     "to naming one, in ms.", ZKSUMMARY_BASIC,
                     el != NULL ? el : &none);
}

/* What mntr's flat lines cannot carry: the spread of the log's writes,
 * a latency histogram per request type that has been seen, and
 * ZooKeeper's summaries made from them. */
static void histograms(void *arg, struct tb_wbuf *out)
{
    struct tbd *s = arg;
    struct replog_stats rs;
    char labels[64];
    int i, typed = 0;

    replog_get_stats(s->log, &rs);
    tb_wbuf_printf(out, "# HELP tumbler_log_write_duration_seconds A write "
                   "of the log, from its submission to its completion, "
                   "fdatasync included.\n# TYPE tumbler_log_write_duration_"
                   "seconds histogram\n");
    hist_render(out, "tumbler_log_write_duration_seconds", "",
                &rs.log_write_hist);

    for (i = 0; i < METRICS_NOPS; i++) {
        if (s->req_latency[i].count == 0)
            continue;
        if (!typed++)
            tb_wbuf_printf(out, "# HELP tumbler_request_latency_seconds "
                           "From a request's arrival to its answer, by "
                           "type.\n# TYPE tumbler_request_latency_seconds "
                           "histogram\n");
        snprintf(labels, sizeof labels, "op=\"%s\"", metrics_op_name(i));
        hist_render(out, "tumbler_request_latency_seconds", labels,
                    &s->req_latency[i]);
    }
    zk_summaries(s, &rs, out);
}

/* The log is open from before the loop first runs; but never read a
 * server that is not there. */
static int ready(const struct tbd *s, struct httpd_resp *resp)
{
    if (s->log != NULL && !s->stopping)
        return 1;
    resp->status = 503;
    resp->content_type = "text/plain";
    tb_wbuf_printf(&resp->body, "not serving\n");
    return 0;
}

static void on_metrics(void *data, const struct httpd_req *req,
                       struct httpd_resp *resp)
{
    struct tbd *s = data;
    struct fourlw_source src;

    if (strcmp(req->path, "/metrics") != 0) {
        resp->status = 404;
        resp->content_type = "text/plain";
        tb_wbuf_printf(&resp->body, "not found; metrics are at /metrics\n");
        return;
    }
    if (!ready(s, resp))
        return;
    admin_source(s, &src);
    resp->status = 200;
    resp->content_type = METRICS_CONTENT_TYPE;
    metrics_render(&src, histograms, s, &resp->body);
}

static const char *query_arg(void *ctx, const char *name)
{
    return httpd_arg(ctx, name);
}

static void on_admin(void *data, const struct httpd_req *req,
                     struct httpd_resp *resp)
{
    struct tbd *s = data;
    const char *base = s->cfg->admin.command_url;
    size_t n = strlen(base);
    struct fourlw_source src;

    if (strcmp(req->path, base) == 0 ||
        (strncmp(req->path, base, n) == 0 && strcmp(req->path + n, "/") == 0)) {
        resp->status = 200;
        resp->content_type = "text/html";
        adminsrv_index(base, &resp->body);
        return;
    }
    if (strncmp(req->path, base, n) != 0 || req->path[n] != '/') {
        resp->status = 404;
        resp->content_type = "text/plain";
        tb_wbuf_printf(&resp->body, "not found; commands are under %s/\n",
                       base);
        return;
    }
    if (!ready(s, resp))
        return;
    admin_source(s, &src);
    resp->content_type = "application/json";
    resp->status = adminsrv_run(&src, req->path + n + 1, query_arg,
                                (void *)req, &resp->body);
}

static int start_one(struct tbd *s, struct httpd **h, const char *name,
                     const char *address, int port, unsigned idle_ms,
                     httpd_handler fn)
{
    struct httpd_config hc = {name, address, port, idle_ms, fn, s};
    char err[256];

    if (httpd_start(h, s->loop, &hc, err, sizeof err) != 0) {
        tb_log(TB_LOG_ERROR, "%s", err);
        return -1;
    }
    tb_log(TB_LOG_INFO, "%s on http://%s%s%s:%d%s%s", name,
           strchr(address, ':') ? "[" : "", address,
           strchr(address, ':') ? "]" : "", httpd_port(*h),
           fn == on_metrics ? "/metrics" : s->cfg->admin.command_url,
           fn == on_metrics ? "" : "/");
    return 0;
}

int http_start(struct tbd *s)
{
    const struct tb_config *c = s->cfg;

    if (c->metrics.enabled &&
        start_one(s, &s->metrics_http, "metrics", c->metrics.http_host,
                  c->metrics.http_port, 0, on_metrics) != 0)
        return -1;
    if (c->admin.enabled &&
        start_one(s, &s->admin_http, "admin server", c->admin.address,
                  c->admin.port, (unsigned)c->admin.idle_timeout,
                  on_admin) != 0)
        return -1;
    return 0;
}

void http_stop(struct tbd *s)
{
    httpd_stop(s->metrics_http);
    httpd_stop(s->admin_http);
    s->metrics_http = s->admin_http = NULL;
}
