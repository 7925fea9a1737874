/* Four-letter words on the client port: the first four bytes of a fresh
 * connection may name one; the answer is written and the connection
 * closed.  The texts are rendered by admin/fourlw.c from what this file
 * reads off the server. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "server/admin/fourlw.h"
#include "server/config/config.h"
#include "server/fsm/fsm.h"
#include "server/net/net.h"
#include "server/peer/peer.h"
#include "server/proc/proc.h"
#include "server/replog/replog.h"
#include "server/server.h"
#include "tree/tree.h"

static uint64_t outstanding(const struct tbd *s)
{
    struct tb_queue *q;
    uint64_t n = 0;

    TB_QUEUE_FOREACH(q, &s->conns)
    n += TB_CONTAINER_OF(q, struct conn, link)->client.nreqs;
    return n;
}

/* Whether this server is an observer in the configuration applied. */
static int self_observer(const struct tbd *s)
{
    struct tb_config_members m = reconfig_members(s);
    size_t i;

    for (i = 0; i < m.n; i++)
        if (m.v[i].id == (int)s->server_id)
            return m.v[i].role == TB_ROLE_OBSERVER;
    return 0;
}

static struct tb_config_members members(void *data)
{
    return reconfig_members(data);
}

static void stats(void *data, struct fourlw_stats *out)
{
    struct tbd *s = data;
    struct tb_queue *q;
    uint64_t n = 0;

    TB_QUEUE_FOREACH(q, &s->conns)
    n++;
    memset(out, 0, sizeof *out);
    out->latency = (struct fourlw_latency){s->lat.min_ms, s->lat.max_ms,
                                           s->lat.total_ms, s->lat.count};
    out->packets_received = s->packets_received;
    out->packets_sent = s->packets_sent;
    out->connections = n;
    out->outstanding = outstanding(s);
    out->zxid = (uint64_t)proc_zxid(s);
    if (s->peer != NULL)
        out->mode = replog_is_leader(s->log) ? "leader"
                    : self_observer(s)       ? "observer"
                                             : "follower";
    if (s->peer != NULL && replog_is_leader(s->log)) {
        struct replog_stats rs;
        replog_get_stats(s->log, &rs);
        out->has_proposal_sizes = 1; /* -1 for none yet, as ZooKeeper's */
        out->proposal_last = rs.proposal_last ? rs.proposal_last : -1;
        out->proposal_min = rs.proposal_min ? rs.proposal_min : -1;
        out->proposal_max = rs.proposal_max ? rs.proposal_max : -1;
    }
    /* ZooKeeper counts the root twice (as "" and "/"). */
    out->node_count = tree_count(fsm_tree(s->fsm)) + 1;
}

static void mntr(void *data, struct fourlw_mntr *out)
{
    struct tbd *s = data;
    struct watch_stats ws;

    watch_get_stats(&s->watches, &ws);
    memset(out, 0, sizeof *out);
    out->watch_count = ws.watches;
    out->ephemerals_count = fsm_ephemeral_count(s->fsm);
    out->approximate_data_size = tree_data_size(fsm_tree(s->fsm));
    fourlw_fd_counts(&out->open_fds, &out->max_fds);
    out->global_sessions = fsm_session_count(s->fsm);
    out->uptime_ms = uv_now(s->loop) - s->started_ms;
}

static void quota_sums(void *arg, const struct tree_quota_sums *q)
{
    struct fourlw_emit *e = arg;

    if (q->limits) {
        fourlw_emit_ns_metric(e, q->ns, "quota_count_limit_per_namespace",
                              q->count_limit);
        fourlw_emit_ns_metric(e, q->ns, "quota_bytes_limit_per_namespace",
                              q->bytes_limit);
    }
    if (q->stats) {
        fourlw_emit_ns_metric(e, q->ns, "quota_count_usage_per_namespace",
                              q->count);
        fourlw_emit_ns_metric(e, q->ns, "quota_bytes_usage_per_namespace",
                              q->bytes);
    }
}

/* ZooKeeper's leader-only figures, by 3.8's names (learners, synced
 * observers) and 3.4's (followers), which many monitors still read, with
 * the proposal sizes srvr shows; and each follower's lag in entries. */
static void mntr_followers(struct tbd *s, struct fourlw_emit *e)
{
    struct replog_follower f[REPLOG_MAX_MEMBERS];
    unsigned n = replog_followers(s->log, f, REPLOG_MAX_MEMBERS), i, synced = 0,
             observers = 0;
    struct fourlw_stats st;
    char id[16];

    if (s->peer == NULL || !replog_is_leader(s->log))
        return;
    stats(s, &st);
    fourlw_emit_metric_int(e, "last_proposal_size", st.proposal_last);
    fourlw_emit_metric_int(e, "min_proposal_size", st.proposal_min);
    fourlw_emit_metric_int(e, "max_proposal_size", st.proposal_max);
    for (i = 0; i < n; i++) {
        synced += f[i].synced && f[i].voter;
        observers += f[i].synced && !f[i].voter;
        snprintf(id, sizeof id, "server.%d", f[i].id);
        fourlw_emit_ns_metric(e, tb_str_c(id), "tumbler_follower_lag",
                              (int64_t)f[i].lag);
    }
    fourlw_emit_metric_int(e, "learners", (int64_t)n);
    fourlw_emit_metric_int(e, "followers", (int64_t)n);
    fourlw_emit_metric_int(e, "synced_followers", (int64_t)synced);
    fourlw_emit_metric_int(e, "synced_observers", (int64_t)observers);
    fourlw_emit_metric_int(e, "pending_syncs", 0);
}

/* The ensemble as this member sees it: ZooKeeper's quorum_size (voters),
 * raft's term, the leader and how often it changed, and how often each of
 * the log's mends of libraft's replication was needed. */
static void mntr_ensemble(struct tbd *s, struct fourlw_emit *e,
                          const struct replog_stats *rs)
{
    struct tb_config_members m = reconfig_members(s);
    size_t i, voters = 0;
    char name[32];

    if (s->peer == NULL)
        return;
    for (i = 0; i < m.n; i++)
        voters += m.v[i].role != TB_ROLE_OBSERVER;
    fourlw_emit_metric_int(e, "quorum_size", (int64_t)voters);
    fourlw_emit_metric_int(e, "tumbler_raft_term", (int64_t)rs->term);
    fourlw_emit_metric_int(e, "tumbler_leader_id",
                           (int64_t)replog_leader(s->log));
    fourlw_emit_metric_int(e, "tumbler_leader_changes",
                           (int64_t)rs->leader_changes);
    for (i = 0; i < REPLOG_MENDS; i++) {
        snprintf(name, sizeof name, "tumbler_raft_mended_%zu", i + 1);
        fourlw_emit_metric_int(e, name, (int64_t)rs->mended[i]);
    }
}

static void mntr_extra(void *data, struct fourlw_emit *e)
{
    struct tbd *s = data;
    struct replog_stats rs;
    size_t i;

    mntr_followers(s, e);
    replog_get_stats(s->log, &rs);
    fourlw_emit_metric_int(e, "connection_rejected",
                           (int64_t)s->conns_rejected);
    fourlw_emit_metric_int(e, "unsuccessful_handshake", (int64_t)s->tls_failed);
    fourlw_emit_metric_int(e, "outstanding_tls_handshake",
                           (int64_t)s->tls_handshaking);
    fourlw_emit_metric_int(e, "tumbler_quota_exceeded",
                           (int64_t)s->quota_exceeded);
    fourlw_emit_metric_int(e, "tumbler_quota_refused",
                           (int64_t)s->quota_refused);
    tree_quota_namespaces(fsm_tree(s->fsm), quota_sums, e);
    for (i = 0; i < s->quota_nns; i++)
        fourlw_emit_ns_metric(e, tb_str_c(s->quota_ns[i].ns),
                              "quota_exceeded_error_per_namespace",
                              (int64_t)s->quota_ns[i].count);
    fourlw_emit_metric_int(e, "tumbler_snapshots_taken",
                           (int64_t)rs.snapshots_taken);
    fourlw_emit_metric_int(e, "tumbler_snapshots_failed",
                           (int64_t)rs.snapshots_failed);
    fourlw_emit_metric_int(e, "tumbler_snapshots_in_loop",
                           (int64_t)rs.snapshots_in_loop);
    fourlw_emit_metric_int(e, "tumbler_snapshot_delta_last",
                           (int64_t)rs.snapshot_delta_last);
    fourlw_emit_metric_double(e, "tumbler_snapshot_stall_max_ms",
                              rs.snapshot_stall_max_ms);
    fourlw_emit_metric_int(e, "tumbler_snapshot_threshold",
                           (int64_t)rs.snapshot_threshold);
    fourlw_emit_metric_int(e, "tumbler_snapshot_log_limit",
                           (int64_t)rs.snapshot_log_limit);
    fourlw_emit_metric_int(e, "tumbler_snapshot_log_bytes",
                           (int64_t)rs.snapshot_log_bytes);
    fourlw_emit_metric_int(e, "tumbler_log_writes", (int64_t)rs.log_writes);
    fourlw_emit_metric_int(e, "tumbler_log_writes_overlapped",
                           (int64_t)rs.log_writes_overlapped);
    fourlw_emit_metric_int(e, "tumbler_log_writes_threaded",
                           (int64_t)rs.log_writes_threaded);
    fourlw_emit_metric_int(e, "tumbler_log_entries", (int64_t)rs.log_entries);
    fourlw_emit_metric_int(e, "tumbler_log_appends", (int64_t)rs.log_appends);
    fourlw_emit_metric_int(e, "tumbler_log_appends_queued",
                           (int64_t)rs.log_appends_queued);
    fourlw_emit_metric_int(e, "tumbler_log_append_wait_us",
                           (int64_t)rs.log_append_wait_us);
    fourlw_emit_metric_int(e, "tumbler_log_write_us", (int64_t)rs.log_write_us);
    fourlw_emit_metric_int(e, "tumbler_log_write_us_max",
                           (int64_t)rs.log_write_us_max);
    fourlw_emit_metric_int(e, "tumbler_log_segments_zeroed",
                           (int64_t)rs.log_segments_zeroed);
    fourlw_emit_metric_int(e, "tumbler_log_segments_reserved",
                           (int64_t)rs.log_segments_reserved);
    fourlw_emit_metric_int(e, "tumbler_log_segments_reused",
                           (int64_t)rs.log_segments_reused);
    fourlw_emit_metric_int(e, "tumbler_log_spare_segments",
                           (int64_t)rs.log_spare_segments);
    fourlw_emit_metric_int(e, "tumbler_free_disk_bytes",
                           (int64_t)rs.free_bytes);
    fourlw_emit_metric_int(e, "tumbler_writes_refused_low_disk",
                           (int64_t)rs.proposals_refused_disk);
    fourlw_emit_metric_int(e, "tumbler_snapshot_bytes_last",
                           (int64_t)rs.last_snapshot_bytes);
    fourlw_emit_metric_double(e, "tumbler_snapshot_stall_last_ms",
                              rs.snapshot_stall_last_ms);
    fourlw_emit_metric_int(e, "tumbler_watch_notifications",
                           (int64_t)s->watch_notifications);
    fourlw_emit_metric_int(e, "tumbler_sessions_connected",
                           (int64_t)s->conn_by_session.count);
    mntr_ensemble(s, e, &rs);
}

static void conn_info(const struct conn *c, struct fourlw_conn *f)
{
    memset(f, 0, sizeof *f);
    f->addr = c->peer;
    f->port = c->peer_port;
    f->interest = c->reading ? 1 : 0;
    f->queued = c->client.nreqs;
    f->recved = c->received;
    f->sent = c->sent;
    f->sid = c->client.session_id;
    f->lop = fourlw_op_name(c->client.last_op);
    /* On the wall clock, as ZooKeeper gives it (tumbler top learns the
     * server's time from it); the connection's stamp is on the loop's
     * clock, so it is carried over by its age. */
    f->est = tbd_wall_ms() - (int64_t)(tbd_now_ms(c->srv) - c->established_ms);
    f->to = c->client.timeout_ms;
    f->lcxid = c->client.last_cxid;
    f->lzxid = c->client.last_zxid ? c->client.last_zxid : -1;
    f->lresp = (int64_t)c->client.last_resp_ms;
    f->llat = (int64_t)c->client.last_latency_ms;
    f->latency =
        (struct fourlw_latency){c->client.lat.min_ms, c->client.lat.max_ms,
                                c->client.lat.total_ms, c->client.lat.count};
}

static void conns(void *data, struct fourlw_emit *e)
{
    struct tbd *s = data;
    struct tb_queue *q;
    struct fourlw_conn f;

    TB_QUEUE_FOREACH(q, &s->conns)
    {
        conn_info(TB_CONTAINER_OF(q, struct conn, link), &f);
        fourlw_emit_conn(e, &f);
    }
}

/* wchs, wchc and wchp list ZooKeeper's data watches: its DataTree keeps
 * persistent and recursive watches there too, child watches apart. */
#define DATA_KINDS                                                             \
    (WATCH_BIT(WATCH_DATA) | WATCH_BIT(WATCH_PERSISTENT) |                     \
     WATCH_BIT(WATCH_PERSISTENT_RECURSIVE))

static int count_path(void *arg, struct tb_str path, unsigned kinds)
{
    (void)path;
    *(uint64_t *)arg += (kinds & DATA_KINDS) != 0;
    return 0;
}

static int count_owner(void *arg, struct watch_owner *w, unsigned kinds)
{
    struct fourlw_watch_summary *out = arg;

    if (kinds & DATA_KINDS) {
        out->connections++;
        watch_owner_foreach_path(w, count_path, &out->watches);
    }
    return 0;
}

static void watch_summary(void *data, struct fourlw_watch_summary *out)
{
    struct tbd *s = data;

    memset(out, 0, sizeof *out);
    watch_foreach_owner(&s->watches, count_owner, out);
    watch_foreach_path(&s->watches, count_path, &out->paths);
}

static int emit_path(void *arg, struct tb_str path, unsigned kinds)
{
    if (kinds & DATA_KINDS)
        fourlw_emit_path(arg, path.ptr, path.len);
    return 0;
}

static int emit_owner_paths(void *arg, struct watch_owner *w, unsigned kinds)
{
    struct proc_client *c = TB_CONTAINER_OF(w, struct proc_client, watch);

    if (!(kinds & DATA_KINDS))
        return 0;
    fourlw_emit_session(arg, c->session_id);
    watch_owner_foreach_path(w, emit_path, arg);
    return 0;
}

static void by_session(void *data, struct fourlw_emit *e)
{
    struct tbd *s = data;
    watch_foreach_owner(&s->watches, emit_owner_paths, e);
}

static int emit_session(void *arg, struct watch_owner *w, unsigned kinds)
{
    if (!(kinds & DATA_KINDS))
        return 0;
    fourlw_emit_session(
        arg, TB_CONTAINER_OF(w, struct proc_client, watch)->session_id);
    return 0;
}

struct path_walk {
    struct tbd *srv;
    struct fourlw_emit *e;
};

static int emit_path_owners(void *arg, struct tb_str path, unsigned kinds)
{
    struct path_walk *p = arg;

    if (!(kinds & DATA_KINDS))
        return 0;
    fourlw_emit_path(p->e, path.ptr, path.len);
    watch_path_foreach_owner(&p->srv->watches, path, emit_session, p->e);
    return 0;
}

static void by_path(void *data, struct fourlw_emit *e)
{
    struct path_walk p = {data, e};
    watch_foreach_path(&p.srv->watches, emit_path_owners, &p);
}

static int emit_eph(void *arg, struct tree_node *n)
{
    struct tb_str p = tree_node_path(n);
    fourlw_emit_path(arg, p.ptr, p.len);
    return 0;
}

struct eph_walk {
    struct tbd *srv;
    struct fourlw_emit *e;
};

static int emit_session_ephs(void *arg, const struct fsm_session_info *si)
{
    struct eph_walk *w = arg;

    if (tree_ephemerals_count(fsm_tree(w->srv->fsm), si->id) == 0)
        return 0;
    fourlw_emit_session(w->e, si->id);
    fsm_session_ephemerals(w->srv->fsm, si->id, emit_eph, w->e);
    return 0;
}

static void ephemerals(void *data, struct fourlw_emit *e)
{
    struct eph_walk w = {data, e};
    fsm_session_foreach(w.srv->fsm, emit_session_ephs, &w);
}

struct due {
    int64_t at, id;
    const struct conn *c; /* conn_buckets' */
};

static int by_due(const void *a, const void *b)
{
    const struct due *x = a, *y = b;

    if (x->at != y->at)
        return x->at < y->at ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* Sessions grouped by their deadline, rounded up to a tick as
 * ZooKeeper's expiry buckets are: each bucket once, the earliest first,
 * as ZooKeeper lists them (the AdminServer's JSON keys them by time). */
static void session_buckets(void *data, struct fourlw_emit *e)
{
    struct tbd *s = data;
    int64_t tick = s->cfg->tick_time, offset = tbd_wall_ms() -
                                               (int64_t)uv_now(s->loop);
    struct due *d = malloc(s->sessions.count * sizeof *d + 1);
    size_t i, n = 0;
    uint64_t key;
    void *v;

    if (d == NULL)
        return;
    for (i = 0; tb_map_next(&s->sessions, &i, &key, &v);) {
        struct sess *se = v;
        d[n].at = ((int64_t)se->deadline_ms + offset + tick - 1) / tick * tick;
        d[n++].id = se->id;
    }
    qsort(d, n, sizeof *d, by_due);
    for (i = 0; i < n; i++) {
        if (i == 0 || d[i].at != d[i - 1].at)
            fourlw_emit_bucket(e, d[i].at);
        fourlw_emit_session(e, d[i].id);
    }
    free(d);
}

/* Connections grouped as ZooKeeper's NIO factory keeps them: each due its
 * session's timeout (one without a session: 10 s) after the last bytes
 * read from it, in buckets of 10 s, each the next boundary past its
 * connections' time (ExpiryQueue), on the wall clock. */
static void conn_buckets(void *data, struct fourlw_emit *e)
{
    struct tbd *s = data;
    int64_t offset = tbd_wall_ms() - (int64_t)tbd_now_ms(s);
    struct tb_queue *q;
    struct due *d;
    size_t i, n = 0;

    TB_QUEUE_FOREACH(q, &s->conns)
    {
        n++;
    }
    if ((d = malloc(n * sizeof *d + 1)) == NULL)
        return;
    n = 0;
    TB_QUEUE_FOREACH(q, &s->conns)
    {
        const struct conn *c = TB_CONTAINER_OF(q, struct conn, link);
        int64_t due = (int64_t)c->heard_ms + offset +
                      (c->client.session_id != 0 ? c->client.timeout_ms
                                                 : CONN_SESSIONLESS_MS);

        if (c->client.state == CONN_CLOSING) /* out of ZooKeeper's at once */
            continue;
        d[n].at = (due / CONN_SESSIONLESS_MS + 1) * CONN_SESSIONLESS_MS;
        d[n].id = (int64_t)c->client.id;
        d[n++].c = c;
    }
    qsort(d, n, sizeof *d, by_due);
    for (i = 0; i < n; i++) {
        if (i == 0 || d[i].at != d[i - 1].at)
            fourlw_emit_bucket(e, d[i].at);
        fourlw_emit_conn_id(e, d[i].c->peer, d[i].c->peer_port,
                            d[i].c->client.session_id);
    }
    free(d);
}

static uint64_t dir_size(const char *dir)
{
    char path[4096];
    uv_fs_t req;
    uv_dirent_t ent;
    struct stat st;
    uint64_t total = 0;

    if (uv_fs_scandir(NULL, &req, dir, 0, NULL) < 0) {
        uv_fs_req_cleanup(&req);
        return 0;
    }
    while (uv_fs_scandir_next(&req, &ent) != UV_EOF) {
        snprintf(path, sizeof path, "%s/%s", dir, ent.name);
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
            total += (uint64_t)st.st_size;
    }
    uv_fs_req_cleanup(&req);
    return total;
}

static void dir_sizes(void *data, uint64_t *data_dir, uint64_t *log_dir)
{
    struct tbd *s = data;

    *data_dir = dir_size(s->cfg->data_dir);
    *log_dir = *data_dir;
}

static void reset_conn_stats(void *data)
{
    struct tbd *s = data;
    struct tb_queue *q;

    TB_QUEUE_FOREACH(q, &s->conns)
    {
        struct conn *c = TB_CONTAINER_OF(q, struct conn, link);
        c->received = c->sent = 0;
        memset(&c->client.lat, 0, sizeof c->client.lat);
        /* And the last request, as ZooKeeper's resetStats: lop=NA, no
         * lcxid, lzxid -1, lresp and llat 0. */
        c->client.last_op = 0;
        c->client.last_cxid = -1;
        c->client.last_zxid = 0;
        c->client.last_resp_ms = c->client.last_latency_ms = 0;
    }
}

static void reset_server_stats(void *data)
{
    struct tbd *s = data;
    size_t i;

    s->packets_received = s->packets_sent = 0;
    memset(&s->lat, 0, sizeof s->lat);
    for (i = 0; i < s->quota_nns; i++)
        s->quota_ns[i].count = 0; /* as ZooKeeper's srst: the names stay */
}

static int leader(void *data, int *is_self)
{
    struct tbd *s = data;

    if (s->peer == NULL)
        return -1;
    *is_self = replog_is_leader(s->log);
    return replog_leader(s->log);
}

static uint64_t get_trace_mask(void *data)
{
    return ((struct tbd *)data)->trace_mask;
}

static void set_trace_mask(void *data, uint64_t mask)
{
    ((struct tbd *)data)->trace_mask = mask;
}

/* As ZooKeeper's: a member removed by a reconfig, or one that lost its
 * leader long enough to drop its clients, serves no four-letter word but
 * those that answer anyway (fourlw_exec.c). */
static int serving(void *data)
{
    return peer_serving(data);
}

void admin_source(struct tbd *s, struct fourlw_source *src)
{
    memset(src, 0, sizeof *src);
    src->data = s;
    src->cfg = s->cfg;
    src->stats = stats;
    src->mntr = mntr;
    src->mntr_extra = mntr_extra;
    src->conns = conns;
    src->watch_summary = watch_summary;
    src->watches_by_session = by_session;
    src->watches_by_path = by_path;
    src->session_buckets = session_buckets;
    src->ephemerals = ephemerals;
    src->conn_buckets = conn_buckets;
    src->dir_sizes = dir_sizes;
    src->reset_conn_stats = reset_conn_stats;
    src->reset_server_stats = reset_server_stats;
    src->leader = leader;
    src->serving = serving;
    src->members = members;
    src->get_trace_mask = get_trace_mask;
    src->set_trace_mask = set_trace_mask;
}

/* If the connection opened with a four-letter word, answers it and returns
 * 1 (2 while its argument is still arriving); else 0 and the bytes are a
 * frame length. */
int admin_try(struct conn *c)
{
    struct fourlw_source src;
    struct tb_wbuf out;
    uint64_t arg = 0;
    int cmd = fourlw_lookup(c->in);

    if (cmd < 0)
        return 0;
    /* The mask is waited for only if the word may run: a refused one is
     * told so at once, as ZooKeeper checks its whitelist first. */
    if (cmd == FOURLW_STMK &&
        fourlw_allowed(fourlw_whitelist_parse(c->srv->cfg->fourlw_whitelist,
                                              NULL, NULL, 0),
                       cmd)) {
        if (c->in_len < 12)
            return 2; /* wait for the mask */
        arg = tb_load_be64(c->in + 4);
    }
    c->received++; /* before srvr's figures are read, as ZooKeeper's */
    c->srv->packets_received++;
    admin_source(c->srv, &src);
    tb_wbuf_init(&out);
    fourlw_execute(&src, cmd, arg, &out);
    c->client.state = CONN_OPEN; /* so the reply is written, then the close */
    conn_pause(c);
    if (out.len > 0 && !out.oom) /* out of memory: nothing, not a part */
        conn_write(c, out.base, out.len);
    tb_wbuf_free(&out);
    conn_close_after_flush(c);
    c->in_len = 0;
    return 1;
}
