/* tumblerd: start-up and shutdown.
 *
 * One libuv loop thread hosts everything: the client listener, the raft
 * log and the timers.  Start: configuration, the fsm, the log (which
 * restores the newest snapshot and replays the rest), then every known
 * session gets a fresh timeout, then the listener opens.  SIGTERM/SIGINT:
 * stop accepting, close the connections, close the log (entries already
 * acknowledged are durable), exit 0. */
#include <errno.h>
#include <malloc.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server/admin/fourlw.h"
#include "server/config/config.h"
#include "server/fsm/fsm.h"
#include "server/logging/log.h"
#include "server/net/net.h"
#include "server/peer/peer.h"
#include "server/peer/tunnel.h"
#include "server/proc/proc.h"
#include "server/recovery.h"
#include "server/replog/replog.h"
#include "server/server.h"

static void on_event(void *data, int type, struct tb_str path,
                     struct tb_vec acl);

static void hook_result(void *data, const struct tb_txn *t, int64_t zxid,
                        int rc, const uint8_t *body, size_t len)
{
    proc_result(data, t, zxid, rc, body, len);
}

static void hook_session(void *data, int64_t id, int32_t timeout, int opened)
{
    if (opened)
        session_opened(data, id, timeout);
    else
        session_closed(data, id);
}

/* One more refusal in the namespace of the quota at path; out of memory,
 * the count by namespace misses it. */
static void count_refused(struct tbd *s, struct tb_str path)
{
    struct quota_ns_refused *q;
    size_t n = 1, i;
    char *ns;

    while (n < path.len && path.ptr[n] != '/')
        n++;
    for (i = 0; i < s->quota_nns; i++) {
        ns = s->quota_ns[i].ns;
        if (strlen(ns) == n - 1 && memcmp(ns, path.ptr + 1, n - 1) == 0) {
            s->quota_ns[i].count++;
            return;
        }
    }
    q = realloc(s->quota_ns, (s->quota_nns + 1) * sizeof *q);
    if (q == NULL)
        return;
    s->quota_ns = q;
    if ((ns = strndup(path.ptr + 1, n - 1)) == NULL)
        return;
    q[s->quota_nns++] = (struct quota_ns_refused){ns, 1};
}

static void hook_quota(void *data, struct tb_str path, const char *what,
                       int64_t used, int64_t limit, int refused)
{
    struct tbd *s = data;

    if (refused) {
        s->quota_refused++;
        count_refused(s, path);
    } else {
        s->quota_exceeded++;
    }
    if (!tb_log_due(&s->quota_log, tbd_now_ms(s)))
        return;
    if (refused)
        tb_log_rated(&s->quota_log, TB_LOG_WARN,
                     "write refused: quota on %.*s: %s %lld, would be %lld",
                     (int)path.len, path.ptr, what, (long long)limit,
                     (long long)used);
    else
        tb_log_rated(&s->quota_log, TB_LOG_WARN,
                     "quota exceeded on %.*s: %s=%lld, limit %lld",
                     (int)path.len, path.ptr, what, (long long)used,
                     (long long)limit);
}

struct deliver {
    struct tbd *srv;
    struct tb_vec acl;
};

/* Sends one notification; a watcher without READ on the node is not told
 * (ZooKeeper 3.8.4+, CVE-2024-23944). */
static void deliver(void *arg, struct watch_owner *w, enum tb_event_type type,
                    struct tb_str path)
{
    struct deliver *d = arg;
    struct proc_client *c = TB_CONTAINER_OF(w, struct proc_client, watch);
    struct tb_watcher_event ev = {type, TB_STATE_SYNC_CONNECTED, path};
    struct tb_wbuf *b = &d->srv->scratch;
    size_t start;

    if (auth_check(c, d->acl, TB_PERM_READ) != 0)
        return;
    tb_wbuf_reset(b);
    start = tb_frame_begin(b);
    tb_put_I32(b, TB_XID_NOTIFICATION);
    tb_put_I64(b, -1);
    tb_put_I32(b, 0);
    tb_watcher_event_encode(b, &ev);
    tb_frame_end(b, start);
    if (b->oom) {
        /* The watch is spent: the client, back with the last zxid it saw,
         * is told of the change by SetWatches. */
        c->ops->close(c);
        return;
    }
    c->ops->send(c, b->base, b->len);
    if (c->closed) /* its output too far behind: the send closed it */
        return;
    c->ops->notified(c);
    d->srv->watch_notifications++;
}

static void on_event(void *data, int type, struct tb_str path,
                     struct tb_vec acl)
{
    struct tbd *s = data;
    struct deliver d = {s, acl};

    if (watch_any(&s->watches))
        watch_trigger(&s->watches, type, path, deliver, &d);
}

/* Each zxid epoch reached is recorded in wal-meta, as a repair records
 * the one it begins: a later repair or recovery that cuts the log before
 * the entry that began it (a recovery's, whose epoch is known only once
 * applied) then still begins a later one, and gives no zxid, no fencing
 * token, a second time.  Written once per epoch; not while the log opens
 * (replog_open's replay), but once it has. */
static void note_epoch(struct tbd *s)
{
    uint64_t epoch = (uint64_t)proc_zxid(s) >> 32;

    if (epoch > s->epoch_noted && s->log != NULL &&
        replog_begin_epoch(s->log, epoch) == 0)
        s->epoch_noted = epoch;
}

static void replog_apply(void *data, int64_t index, const void *p, size_t n)
{
    struct tbd *s = data;

    if (fsm_apply(s->fsm, index, p, n) != 0) {
        /* Skipping the entry would fork this replica from the others. */
        tb_log(TB_LOG_ERROR, "out of memory applying entry %lld; stopping",
               (long long)index);
        abort();
    }
    note_epoch(s);
    conn_flush_notified(s);
}

static int replog_snapshot(void *data, struct tb_wbuf *out)
{
    struct tbd *s = data;
    return fsm_snapshot(s->fsm, out);
}

/* A snapshot replaces the state at once: no watch fires and no write is
 * answered for what it holds.  At open no client is here yet; later (a
 * follower sent the leader's snapshot) every client connection is closed,
 * as a ZooKeeper learner's are when it syncs, so that each client comes
 * back to the new state: its watches, set again with the last zxid it saw,
 * fire for what changed meanwhile (wire doc 10.6), and a write it was
 * waiting on ends in connection loss.  Sessions the snapshot ended are
 * tracked no more; those in it start a full timeout, as after a restart
 * (session_reload). */
static int replog_restore(void *data, const void *buf, size_t len)
{
    struct tbd *s = data;
    unsigned n;
    int rv = fsm_restore(s->fsm, buf, len);

    if (rv != 0)
        return rv;
    note_epoch(s);
    n = conn_close_all(s);
    if (n > 0)
        tb_log(TB_LOG_WARN,
               "snapshot from the leader installed: %u client "
               "connection(s) closed, so that their clients see what it "
               "changed",
               n);
    session_reload(s);
    return 0;
}

static int raft_level(int level)
{
    return level <= REPLOG_LOG_ERROR  ? TB_LOG_ERROR
           : level <= REPLOG_LOG_WARN ? TB_LOG_WARN
           : level <= REPLOG_LOG_INFO ? TB_LOG_INFO
                                      : TB_LOG_DEBUG;
}

static void replog_logger(void *data, int level, const char *msg)
{
    (void)data;
    tb_log(raft_level(level), "raft: %s", msg);
}

/* ... with the line's fields, for a JSON log (raft's lines have 6 at
 * most, 8 are kept). */
static void replog_logger_fields(void *data, int level, const char *msg,
                                 const struct replog_field *f, size_t n)
{
    struct tb_log_field lf[8];
    size_t i;

    (void)data;
    for (i = 0; i < n && i < sizeof lf / sizeof lf[0]; i++)
        lf[i] = (struct tb_log_field){f[i].key, f[i].str, f[i].num, 0};
    tb_log_fields(raft_level(level), lf, i, "raft: %s", msg);
}

static void on_tick(uv_timer_t *t)
{
    conn_touch_readers(t->data); /* before the deadlines are looked at */
    session_tick(t->data);
    conn_sweep_sessionless(t->data);
    conn_accept_again(t->data);
    reconfig_tick(t->data);
}

struct cleanup {
    struct tbd *srv;
    unsigned budget;
};

static int propose_cleanup(void *arg, struct tree_node *n)
{
    struct cleanup *cl = arg;
    struct tbd *s = cl->srv;
    struct tb_path_req r = {tree_node_path(n)};

    if (cl->budget == 0)
        return 1;
    cl->budget--;
    tb_wbuf_reset(&s->scratch2);
    tb_path_req_encode(&s->scratch2, &r);
    if (!s->scratch2.oom)
        proc_propose(s, TB_OP_DELETECONTAINER, 0, 0, 0, NULL,
                     (struct tb_str){(const char *)s->scratch2.base,
                                     s->scratch2.len});
    return 0;
}

/* Containers emptied and TTL nodes past their time are deleted by txns
 * the leader proposes; the fsm re-checks each one when it applies. */
static void on_cleanup(uv_timer_t *t)
{
    struct tbd *s = t->data;
    struct cleanup cl = {s, 0};

    /* znode.container.maxPerMinute, spread over the check interval. */
    cl.budget = (unsigned)((uint64_t)s->cfg->container_max_per_minute *
                           (uint64_t)s->cfg->container_check_interval_ms /
                           60000);
    if (cl.budget == 0)
        cl.budget = 1;
    if (replog_is_leader(s->log))
        tree_candidates(fsm_tree(s->fsm), tbd_txn_time(s), propose_cleanup,
                        &cl);
}

static void close_walk(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (!uv_is_closing(h))
        uv_close(h, NULL);
}

static void on_log_closed(void *arg)
{
    struct tbd *s = arg;
    uv_walk(s->loop, close_walk, NULL);
}

static void stop(struct tbd *s);

static void handed_over(void *arg)
{
    stop(arg);
}

static void stop(struct tbd *s)
{
    if (s->stopping)
        return;
    /* A leader of an ensemble hands over first: the others go on without
     * waiting for an election timeout (a rolling restart costs clients a
     * reconnect).  Its clients are served meanwhile. */
    if (s->peer != NULL && !s->handing_over &&
        replog_transfer(s->log, handed_over, s) == 0) {
        s->handing_over = 1;
        tb_log(TB_LOG_INFO, "stopping: leadership handed over first");
        return;
    }
    s->stopping = 1;
    tb_log(TB_LOG_INFO, "shutting down");
    http_stop(s);
    if (s->cfg->client_port >= 0)
        uv_close((uv_handle_t *)&s->listener, NULL);
    if (s->tls_ctx != NULL)
        uv_close((uv_handle_t *)&s->tls_listener, NULL);
    conn_close_all(s);
    uv_timer_stop(&s->ticker);
    uv_timer_stop(&s->cleaner);
    peer_stop(s);
    replog_close(s->log, on_log_closed, s);
}

static void on_signal(uv_signal_t *h, int signum)
{
    (void)signum;
    stop(h->data);
}

/* SIGHUP: logFile is opened again (logrotate moved it away), and
 * certificates, which expire, are put in use without a restart.  Nothing
 * else is read again: other keys need a restart. */
static void on_sighup(uv_signal_t *h, int signum)
{
    struct tbd *s = h->data;
    int rv;

    (void)signum;
    if (s->cfg->log_file != NULL) {
        rv = tb_log_reopen();
        if (rv != 0)
            tb_log(TB_LOG_ERROR, "SIGHUP: cannot reopen logFile %s (%s): "
                   "logging on to the file open before",
                   s->cfg->log_file, strerror(-rv));
        else
            tb_log(TB_LOG_INFO, "SIGHUP: logFile reopened");
    }
    if (s->quorum_tls != NULL)
        tunnel_ctx_reload(s->quorum_tls, s->cfg);
    if (s->tls_ctx != NULL)
        tls_server_reload(s);
    else if (s->quorum_tls == NULL)
        tb_log(TB_LOG_INFO,
               "SIGHUP: no TLS port, no certificates to read again");
}

/* Only the leader expires sessions, from what its followers report; a new
 * one first gives every session a full timeout, as ZooKeeper's does. */
static void on_leader(void *data, int is_leader)
{
    struct tbd *s = data;

    if (is_leader)
        session_reload(s);
    else
        s->expiring = 0;
}

/* server.N lines: raft's members, and the peer links' (peer.h). */
static int ensemble(const struct tb_config *cfg, struct replog_config *rc,
                    char (*addr)[TB_CONFIG_ADDR_MAX], struct replog_peer *peers,
                    struct peer_member *members)
{
    size_t i;

    for (i = 0; i < cfg->nservers; i++) {
        const struct tb_config_server *sv = &cfg->servers[i];
        if (tb_config_quorum_address(sv, addr[i], TB_CONFIG_ADDR_MAX) != 0)
            return TB_EINVAL;
        peers[i] = (struct replog_peer){sv->id, addr[i],
                                        sv->role == TB_ROLE_PARTICIPANT};
        members[i] = (struct peer_member){sv->id, sv->host, sv->election_port};
    }
    rc->peers = peers;
    rc->n_peers = (unsigned)cfg->nservers;
    return 0;
}

/* A member's quorum and election ports, tried before the log is opened:
 * raft binds the first only as it starts, after a first start has made the
 * data directory, and says no more than "I/O error"; the peer links bind
 * the second after that too.  A start that cannot serve must leave the
 * data directory as it was, and say which port is taken. */
static int member_ports_free(const struct tb_config *cfg)
{
    const struct tb_config_server *self = tb_config_self(cfg);
    const char *what[2] = {"quorum", "election"};
    struct addrinfo hints = {0}, *ai;
    char port[8];
    int k, fd, rv, one = 1;

    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    for (k = 0; self != NULL && k < 2; k++) {
        snprintf(port, sizeof port, "%d",
                 k == 0 ? self->quorum_port : self->election_port);
        /* As each binds: raft an IPv4 address (replog/tcp.c), the links
         * the first address the name gives (peer.c). */
        hints.ai_family = k == 0 ? AF_INET : AF_UNSPEC;
        if ((rv = getaddrinfo(self->host, port, &hints, &ai)) != 0 && k == 0) {
            /* raft would fail the same way, once the log was made */
            tb_log(TB_LOG_ERROR,
                   "server.%d's host %s has no IPv4 address (%s): raft "
                   "between the members speaks IPv4 only; not started, %s "
                   "left as it was",
                   self->id, self->host, gai_strerror(rv), cfg->data_dir);
            return 1;
        }
        if (rv != 0)
            continue; /* said as the links resolve it */
        rv = (fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
                     setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one,
                                sizeof one) != 0 ||
                     bind(fd, ai->ai_addr, ai->ai_addrlen) != 0
                 ? errno
                 : 0;
        if (fd >= 0)
            close(fd);
        freeaddrinfo(ai);
        if (rv != 0) {
            tb_log(TB_LOG_ERROR,
                   "cannot listen on %s:%s (server.%d's %s port): %s; not "
                   "started, %s left as it was",
                   self->host, port, self->id, what[k], strerror(rv),
                   cfg->data_dir);
            return 1;
        }
    }
    return 0;
}

/* --repair-log: the log was cut (replog did it while opening, or an
 * earlier run did); zxids then move to a new epoch, above any a client
 * may have seen (replog's bound) and any epoch an earlier repair began. */
static int finish_repair(struct tbd *s)
{
    struct replog_repair r;
    struct tb_wbuf b;
    uint64_t last, epoch;
    int64_t kept = proc_zxid(s), target;
    int rv;

    replog_repair_report(s->log, &r);
    if (!r.repaired) {
        tb_log(TB_LOG_INFO, "repair: the log in %s is whole; nothing changed",
               s->cfg->data_dir);
        return 0;
    }
    last = r.bound > r.last_index ? r.bound : r.last_index;
    epoch = ((uint64_t)fsm_zxid_of(s->fsm, (int64_t)last) >> 32) + 1;
    if (epoch <= r.epoch)
        epoch = r.epoch + 1;
    target = (int64_t)(epoch << 32);
    if (replog_begin_epoch(s->log, epoch) != 0)
        return 1;
    tb_wbuf_init(&b);
    tb_new_epoch_txn_encode(&b, &(struct tb_new_epoch_txn){target});
    rv = b.oom ? TB_ENOMEM
               : proc_propose(s, TB_OP_NEWEPOCH, 0, 0, 0, NULL,
                              (struct tb_str){(const char *)b.base, b.len});
    tb_wbuf_free(&b);
    while (rv == 0 && proc_zxid(s) < target &&
           uv_run(s->loop, UV_RUN_ONCE) != 0)
        ;
    if (rv != 0 || proc_zxid(s) < target || replog_end_repair(s->log) != 0) {
        tb_log(TB_LOG_ERROR,
               "repair: the new epoch was not logged (%s): "
               "run --repair-log again",
               tb_strerror(rv != 0 ? rv : TB_EIO));
        return 1;
    }
    if (r.backup[0] != '\0')
        tb_log(TB_LOG_WARN,
               "repair: kept the log up to entry %llu (zxid 0x%llx); dropped "
               "%llu bytes of segments beyond it, in which %llu whole "
               "record(s) of %llu entries were found; the files changed or "
               "removed are copied in %s",
               (unsigned long long)r.last_index, (unsigned long long)kept,
               (unsigned long long)r.dropped_bytes,
               (unsigned long long)r.dropped,
               (unsigned long long)r.dropped_entries, r.backup);
    if (r.dropped_entries > 0)
        tb_log(TB_LOG_WARN, "repair: the entries dropped include %llu..%llu",
               (unsigned long long)r.dropped_first,
               (unsigned long long)r.dropped_last);
    tb_log(TB_LOG_WARN,
           "repair: zxids go on from 0x%llx, above any a client may have "
           "seen",
           (unsigned long long)target);
    return 0;
}

/* Every session holds a descriptor: take all the process may have. */
static void raise_fd_limit(void)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

int main(int argc, char **argv)
{
    static struct tbd srv;
    struct tbd *s = &srv;
    struct tb_config cfg;
    struct fsm_hooks hooks;
    struct replog_config rc;
    struct replog_fsm rf;
    char(*addr)[TB_CONFIG_ADDR_MAX] = NULL;
    struct replog_peer *peers = NULL;
    struct peer_member *members = NULL;
    char err[512], plain[80] = "", tls[96] = "";
    int rv, status = 0;

    /* Large buffers (snapshots, compression, growing arrays) straight from
     * mmap, so that each goes back to the system when freed: glibc would
     * otherwise raise the threshold after the first such free and keep
     * them in the heap.  One arena: libuv's workers allocate little, and
     * an arena of their own kept megabytes of freed buffers resident. */
    mallopt(M_MMAP_THRESHOLD, 256 << 10);
    mallopt(M_ARENA_MAX, 1);
    /* A reload (systemctl reload, logrotate's) during a long start (a
     * snapshot restored, a log replayed) must not end it: SIGHUP is
     * ignored until the loop's own handler takes it.  First, so that one
     * that sees SIGXFSZ ignored knows it is (tests/crash/damage.sh). */
    signal(SIGHUP, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    /* A file-size limit (ulimit -f) below a log segment or a snapshot is
     * an error the log reports (EFBIG), not a silent death by signal. */
    signal(SIGXFSZ, SIG_IGN);
    raise_fd_limit();
    tb_config_init(&cfg);
    cfg.check_4lw = fourlw_whitelist_check;
    /* What reading the configuration logs waits for its logLevel,
     * logFormat and logFile. */
    tb_log_hold();
    rv = tb_config_parse_args(&cfg, argc, argv, err, sizeof err);
    tb_log_set_level(cfg.log_level);
    tb_log_set_format(cfg.log_format);
    if (rv == 0 && cfg.log_file != NULL &&
        (rv = tb_log_open(cfg.log_file)) != 0) {
        snprintf(err, sizeof err, "logFile %s: %s", cfg.log_file,
                 strerror(-rv));
        rv = TB_EINVAL;
    }
    tb_log_release();
    if (rv != 0 && rv != TB_CONFIG_EXIT)
        fprintf(stderr, "tumblerd: %s\n", err);
    if (rv != 0) {
        tb_config_free(&cfg);
        return rv == TB_CONFIG_EXIT ? 0 : 2;
    }
    if (sasl_setup(&cfg, err, sizeof err) != 0) {
        fprintf(stderr, "tumblerd: %s\n", err);
        tb_config_free(&cfg);
        return 2;
    }

    s->loop = uv_default_loop();
    s->clock = tbd_clock_system(s->loop);
    s->cfg = &cfg;
    s->server_id = cfg.server_id;
    tb_queue_init(&s->conns);
    tb_queue_init(&s->dirty);
    tb_queue_init(&s->notified);
    tb_queue_init(&s->fresh);
    tb_map_init(&s->conn_by_id);
    tb_map_init(&s->conn_by_session);
    tb_map_init(&s->sessions);
    tb_map_init(&s->ip_count);
    s->trace_mask = 306; /* ZooKeeper's default (ZooTrace) */
    tb_wbuf_init(&s->scratch);
    tb_wbuf_init(&s->scratch2);
    watch_mgr_init(&s->watches, (uint64_t)uv_hrtime() ^ (uint64_t)getpid());
    s->started_ms = uv_now(s->loop);

    hooks =
        (struct fsm_hooks){s, on_event, hook_result, hook_session, hook_quota};
    if (fsm_init(&s->fsm, &hooks) != 0) {
        fprintf(stderr, "tumblerd: out of memory\n");
        return 1;
    }
    memset(&rc, 0, sizeof rc);
    rc.dir = cfg.data_dir;
    rc.server_id = cfg.server_id;
    rc.min_free_bytes = (uint64_t)cfg.min_free_disk_bytes;
    rc.snapshot_max_entries = (unsigned)cfg.snap_count;
    rc.log = replog_logger; /* replog_read_position's */
    rc.log_fields = replog_logger_fields;
    rc.repair_log = cfg.repair_log;
    rc.join = cfg.join_ensemble;
    rc.on_leader = on_leader;
    rc.on_leader_data = s;
    rc.election_timeout_ms = (unsigned)cfg.election_timeout;
    rc.heartbeat_timeout_ms = (unsigned)cfg.heartbeat_interval;
    /* A repair ends by logging a new epoch, which a member cannot do on
     * its own (only a leader logs), and its cut log must not vote as if
     * it still held what it acknowledged: refused before anything is
     * touched.  A recovery (a majority lost for good) may cut it: its new
     * epoch moves zxids past the cut. */
    if (cfg.repair_log && !cfg.recover_ensemble && tb_config_ensemble(&cfg)) {
        fprintf(stderr,
                "tumblerd: --repair-log: server %d is a member of an "
                "ensemble (server.N lines), and a member's log is not "
                "repaired in place; nothing changed.  With a majority of "
                "the other members running, move %s aside and start the "
                "server with an empty dataDir: it catches up from the "
                "leader, and votes for no one until it has.  If a majority "
                "is lost for good, rebuild the ensemble from the survivor "
                "whose log goes furthest (--recover-ensemble, with "
                "--repair-log if that log is damaged)\n",
                cfg.server_id, cfg.data_dir);
        status = 2;
        goto out;
    }
    if (tb_config_ensemble(&cfg) &&
        ((addr = calloc(cfg.nservers, sizeof *addr)) == NULL ||
         (peers = calloc(cfg.nservers, sizeof *peers)) == NULL ||
         (members = calloc(cfg.nservers, sizeof *members)) == NULL ||
         ensemble(&cfg, &rc, addr, peers, members) != 0)) {
        fprintf(stderr, "tumblerd: cannot set up the ensemble\n");
        status = 1;
        goto out;
    }
    s->next_conn_id = proc_conn_id_base(cfg.server_id, tbd_txn_time(s));
    rf = (struct replog_fsm){s, replog_apply, replog_snapshot, replog_restore};
    if (cfg.recover_ensemble) {
        status = recover_ensemble(s->loop, &cfg, &rc);
        goto out;
    }
    /* Peer TLS: the stores are read before anything listens, and every
     * connection between the members is secured from then on (with
     * portUnification, every connection made, if sslQuorum). */
    if (members != NULL && !cfg.repair_log &&
        (cfg.quorum_tls.enabled || cfg.quorum_tls.port_unification)) {
        if ((s->quorum_tls = tunnel_ctx_from(s->loop, &cfg)) == NULL) {
            tb_log(TB_LOG_ERROR, "%s: not started",
                   cfg.quorum_tls.enabled ? "sslQuorum" : "portUnification");
            status = 1;
            goto out;
        }
        rc.secure = (struct replog_secure){tunnel_start, tunnel_cancel,
                                           s->quorum_tls,
                                           !cfg.quorum_tls.enabled};
        if (cfg.quorum_tls.reload)
            tunnel_ctx_watch(s->quorum_tls, s->cfg);
    }
    /* The ports first: a start that cannot serve must not have created or
     * touched a data directory.  Nothing is accepted before the loop
     * runs, once the log is open.  A repair serves nothing. */
    if (!cfg.repair_log && ((members != NULL && member_ports_free(&cfg) != 0) ||
                            conn_listen(s) != 0)) {
        status = 1;
        goto out;
    }
    if (!cfg.repair_log && http_start(s) != 0) {
        http_stop(s);
        conn_unlisten(s);
        tunnel_ctx_unwatch(s->quorum_tls);
        uv_run(s->loop, UV_RUN_DEFAULT);
        status = 1;
        goto out;
    }
    rv = replog_open(&s->log, s->loop, &rc, &rf);
    if (rv != 0) {
        tb_log(TB_LOG_ERROR, "cannot open the log in %s (%s): not started",
               cfg.data_dir, tb_strerror(rv));
        /* What the log still closes finishes on the loop: nothing else
         * may keep it running. */
        if (!cfg.repair_log) {
            http_stop(s);
            conn_unlisten(s);
        }
        tunnel_ctx_unwatch(s->quorum_tls);
        uv_run(s->loop, UV_RUN_DEFAULT);
        status = 1;
        goto out;
    }
    note_epoch(s); /* what the replay reached */
    if (cfg.repair_log) {
        status = finish_repair(s);
        replog_close(s->log, on_log_closed, s);
        uv_run(s->loop, UV_RUN_DEFAULT);
        goto out;
    }
    session_reload(s);
    if (members != NULL &&
        peer_start(s, members, (unsigned)cfg.nservers) != 0) {
        http_stop(s);
        replog_close(s->log, on_log_closed, s);
        uv_run(s->loop, UV_RUN_DEFAULT);
        status = 1;
        goto out;
    }
    /* A joiner takes no clients before it is in the ensemble. */
    reconfig_tick(s);
    uv_timer_init(s->loop, &s->ticker);
    s->ticker.data = s;
    /* At least 1 ms: a repeat of 0 would tick once. */
    s->tick_ms = cfg.tick_time > 1 ? (uint64_t)cfg.tick_time / 2 : 1;
    uv_timer_start(&s->ticker, on_tick, s->tick_ms, s->tick_ms);
    uv_timer_init(s->loop, &s->cleaner);
    s->cleaner.data = s;
    uv_timer_start(&s->cleaner, on_cleanup,
                   (uint64_t)cfg.container_check_interval_ms,
                   (uint64_t)cfg.container_check_interval_ms);
    uv_signal_init(s->loop, &s->sigterm);
    s->sigterm.data = s;
    uv_signal_start(&s->sigterm, on_signal, SIGTERM);
    uv_signal_init(s->loop, &s->sigint);
    s->sigint.data = s;
    uv_signal_start(&s->sigint, on_signal, SIGINT);
    uv_signal_init(s->loop, &s->sighup);
    s->sighup.data = s;
    uv_signal_start(&s->sighup, on_sighup, SIGHUP);

    if (cfg.client_port >= 0)
        snprintf(plain, sizeof plain, "%s:%d", cfg.client_port_address,
                 cfg.client_port);
    if (cfg.tls.port != 0)
        snprintf(tls, sizeof tls, "%s with TLS %s:%d",
                 cfg.client_port >= 0 ? " and" : "only", cfg.tls.address,
                 cfg.tls.port);
    tb_log(TB_LOG_INFO, "tumblerd %s serving %s%s, data in %s, zxid 0x%llx",
           tb_config_version(), plain, tls, cfg.data_dir,
           (unsigned long long)proc_zxid(s));
    uv_run(s->loop, UV_RUN_DEFAULT);
    tb_log(TB_LOG_INFO, "stopped");
out:
    free(addr);
    free(peers);
    free(members);
    reconfig_free(s);
    fsm_close(s->fsm);
    while (s->quota_nns > 0)
        free(s->quota_ns[--s->quota_nns].ns);
    free(s->quota_ns);
    watch_mgr_close(&s->watches);
    sasl_teardown();
    tls_server_free(s);
    tunnel_ctx_free(s->quorum_tls);
    tb_config_free(&cfg);
    return status;
}
