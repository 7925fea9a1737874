/* Listings fed item by item by the server's walk callbacks (see
 * struct fourlw_emit in fourlw.h).
 *
 * ZooKeeper prints some counts before what they count: "Session Sets
 * (buckets)/(sessions):", then per bucket "<n> expire at <date>:".  The
 * server walks its structures once, so items of the open group are kept
 * in `group` until the group ends, complete groups in `body` until the
 * listing ends; then the headers are written with the counts.  A 4lw is
 * rare and answered once, so the copies cost nothing that matters. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "server/admin/fourlw.h"

void fourlw_emit_init(struct fourlw_emit *e, enum fourlw_list_kind kind,
                      struct tb_wbuf *out)
{
    memset(e, 0, sizeof *e);
    e->kind = kind;
    e->out = out;
    tb_wbuf_init(&e->body);
    tb_wbuf_init(&e->group);
}

/* Kinds whose group headers carry the group's item count. */
static int counted_groups(const struct fourlw_emit *e)
{
    return e->kind == FOURLW_LIST_SESSIONS ||
           e->kind == FOURLW_LIST_CNXN_EXPIRY;
}

static void close_group(struct fourlw_emit *e)
{
    char date[64];

    if (!e->in_group)
        return;
    if (counted_groups(e)) {
        if (fourlw_format_date(date, sizeof date, e->group_key) == 0)
            snprintf(date, sizeof date, "%" PRId64, e->group_key);
        tb_wbuf_printf(&e->body, "%" PRIu64 " expire at %s:\n",
                       e->group_items, date);
        tb_wbuf_put(&e->body, e->group.base, e->group.len);
        e->group.len = 0;
        e->body.oom |= e->group.oom;
    }
    e->in_group = 0;
}

static void open_group(struct fourlw_emit *e, int64_t key)
{
    close_group(e);
    e->in_group = 1;
    e->group_key = key;
    e->group_items = 0;
    e->groups++;
}

/* Where an item goes: held back while its group header waits for a count,
 * else straight into the listing.  NULL if no group is open. */
static struct tb_wbuf *item_buf(struct fourlw_emit *e)
{
    if (!e->in_group)
        return NULL;
    e->group_items++;
    e->items++;
    return counted_groups(e) ? &e->group : &e->body;
}

void fourlw_emit_conn(struct fourlw_emit *e, const struct fourlw_conn *c)
{
    if (e->sink != NULL) {
        if (e->sink->conn != NULL)
            e->sink->conn(e->sink->arg, c);
        return;
    }
    if (e->kind != FOURLW_LIST_CONNS_BRIEF && e->kind != FOURLW_LIST_CONNS_FULL)
        return;
    e->items++;
    fourlw_render_conn(&e->body, c, e->kind == FOURLW_LIST_CONNS_BRIEF);
}

void fourlw_emit_session(struct fourlw_emit *e, int64_t sid)
{
    struct tb_wbuf *b;

    if (e->sink != NULL) {
        if (e->sink->session != NULL)
            e->sink->session(e->sink->arg, sid);
        return;
    }
    switch (e->kind) {
    case FOURLW_LIST_WATCH_BY_SID:
        open_group(e, sid);
        tb_wbuf_printf(&e->body, "0x%" PRIx64 "\n", (uint64_t)sid);
        return;
    case FOURLW_LIST_EPHEMERALS:
        open_group(e, sid);
        tb_wbuf_printf(&e->body, "0x%" PRIx64 ":\n", (uint64_t)sid);
        return;
    case FOURLW_LIST_WATCH_BY_PATH:
    case FOURLW_LIST_SESSIONS:
        if ((b = item_buf(e)) != NULL)
            tb_wbuf_printf(b, "\t0x%" PRIx64 "\n", (uint64_t)sid);
        return;
    default:
        return;
    }
}

void fourlw_emit_path(struct fourlw_emit *e, const char *path, size_t len)
{
    struct tb_wbuf *b;

    if (e->sink != NULL) {
        if (e->sink->path != NULL)
            e->sink->path(e->sink->arg, path, len);
        return;
    }
    switch (e->kind) {
    case FOURLW_LIST_WATCH_BY_PATH:
        open_group(e, 0);
        tb_wbuf_put(&e->body, path, len);
        tb_wbuf_put(&e->body, "\n", 1);
        return;
    case FOURLW_LIST_WATCH_BY_SID:
    case FOURLW_LIST_EPHEMERALS:
        if ((b = item_buf(e)) != NULL) {
            tb_wbuf_put(b, "\t", 1);
            tb_wbuf_put(b, path, len);
            tb_wbuf_put(b, "\n", 1);
        }
        return;
    default:
        return;
    }
}

void fourlw_emit_bucket(struct fourlw_emit *e, int64_t expire_wall_ms)
{
    if (e->sink != NULL) {
        if (e->sink->bucket != NULL)
            e->sink->bucket(e->sink->arg, expire_wall_ms);
        return;
    }
    if (counted_groups(e))
        open_group(e, expire_wall_ms);
}

void fourlw_emit_conn_id(struct fourlw_emit *e, const char *addr, int port,
                         int64_t sid)
{
    struct tb_wbuf *b;

    if (e->sink != NULL) {
        if (e->sink->conn_id != NULL)
            e->sink->conn_id(e->sink->arg, addr, port, sid);
        return;
    }
    if (e->kind != FOURLW_LIST_CNXN_EXPIRY || (b = item_buf(e)) == NULL)
        return;
    if (addr == NULL)
        addr = "";
    /* NIOServerCnxn.toString() */
    if (strchr(addr, ':') != NULL)
        tb_wbuf_printf(b, "\tip: /[%s]:%d sessionId: 0x%" PRIx64 "\n", addr,
                       port, (uint64_t)sid);
    else
        tb_wbuf_printf(b, "\tip: /%s:%d sessionId: 0x%" PRIx64 "\n", addr,
                       port, (uint64_t)sid);
}

/* A metric to the sink, if there is one: 1 if it took it. */
static int to_sink(struct fourlw_emit *e, const struct fourlw_metric *m)
{
    if (e->sink == NULL)
        return 0;
    if (e->sink->metric != NULL)
        e->sink->metric(e->sink->arg, m);
    return 1;
}

void fourlw_emit_metric_int(struct fourlw_emit *e, const char *key,
                            int64_t value)
{
    struct fourlw_metric m = {key, TB_STR_NULL, FOURLW_METRIC_INT, value, 0,
                              NULL};

    if (e->kind != FOURLW_LIST_METRICS || to_sink(e, &m))
        return;
    tb_wbuf_printf(&e->body, "zk_%s\t%" PRId64 "\n", key, value);
}

void fourlw_emit_metric_double(struct fourlw_emit *e, const char *key,
                               double value)
{
    struct fourlw_metric m = {key, TB_STR_NULL, FOURLW_METRIC_DOUBLE, 0, value,
                              NULL};
    char num[40];

    if (e->kind != FOURLW_LIST_METRICS || to_sink(e, &m))
        return;
    fourlw_format_double(num, sizeof num, value);
    tb_wbuf_printf(&e->body, "zk_%s\t%s\n", key, num);
}

void fourlw_emit_metric_avg(struct fourlw_emit *e, const char *key,
                            uint64_t total, uint64_t count)
{
    struct fourlw_metric m = {
        key, TB_STR_NULL, FOURLW_METRIC_DOUBLE, 0, fourlw_avg(total, count),
        NULL};
    char avg[40];

    if (e->kind != FOURLW_LIST_METRICS || to_sink(e, &m))
        return;
    fourlw_format_avg(avg, sizeof avg, total, count);
    tb_wbuf_printf(&e->body, "zk_%s\t%s\n", key, avg);
}

void fourlw_emit_metric_str(struct fourlw_emit *e, const char *key,
                            const char *value)
{
    struct fourlw_metric m = {key, TB_STR_NULL, FOURLW_METRIC_STR, 0, 0,
                              value};

    if (e->kind != FOURLW_LIST_METRICS || to_sink(e, &m))
        return;
    tb_wbuf_printf(&e->body, "zk_%s\t%s\n", key, value);
}

void fourlw_emit_ns_metric(struct fourlw_emit *e, struct tb_str ns,
                           const char *key, int64_t value)
{
    struct fourlw_metric m = {key, ns, FOURLW_METRIC_INT, value, 0, NULL};

    if (e->kind != FOURLW_LIST_METRICS || to_sink(e, &m))
        return;
    tb_wbuf_printf(&e->body, "zk_%.*s_%s\t%" PRId64 "\n", (int)ns.len,
                   ns.ptr, key, value);
}

void fourlw_emit_finish(struct fourlw_emit *e)
{
    close_group(e);
    switch (e->kind) {
    case FOURLW_LIST_SESSIONS:
        tb_wbuf_printf(e->out, "Session Sets (%" PRIu64 ")/(%" PRIu64 "):\n",
                       e->groups, e->items);
        break;
    case FOURLW_LIST_CNXN_EXPIRY:
        tb_wbuf_printf(e->out, "Connections Sets (%" PRIu64 ")/(%" PRIu64
                       "):\n", e->groups, e->items);
        break;
    case FOURLW_LIST_EPHEMERALS:
        tb_wbuf_printf(e->out, "Sessions with Ephemerals (%" PRIu64 "):\n",
                       e->groups);
        break;
    default:
        break;
    }
    tb_wbuf_put(e->out, e->body.base, e->body.len);
    e->out->oom |= e->body.oom;
    tb_wbuf_free(&e->body);
    tb_wbuf_free(&e->group);
}
