/* The server's shared state: one libuv loop thread owns everything here.
 *
 * A request's path: net/ reads bytes and splits frames (net/net.h), proc/
 * answers reads from the tree and turns writes into txns (proc/proc.h),
 * replog/ makes each txn durable and hands it to fsm/ in log order, whose
 * hooks fire watches (watch/) and route the result back to the connection
 * that asked (proc_result).  Replies leave once per loop turn
 * (conn_flush_all).  Each folder's header says what it exports; this one
 * holds only what every part shares: struct tbd. */
#ifndef TBD_SERVER_H
#define TBD_SERVER_H

#include <uv.h>

#include "common/common.h"
#include "common/hist.h"
#include "common/map.h"
#include "proto/proto.h"
#include "server/http/metrics.h"
#include "server/logging/log.h"
#include "server/net/tls_ctx.h"
#include "server/proc/clock.h"
#include "server/proc/expiry.h"
#include "server/watch/watch.h"

struct tb_config;
struct fsm;
struct replog;
struct httpd;
struct fourlw_source;
struct conn;

/* Counters shown by srvr/stat/mntr/cons. */
struct latency {
    uint64_t count, total_ms, min_ms, max_ms;
};

struct quota_ns_refused {
    char *ns;
    uint64_t count;
};

struct tbd {
    uv_loop_t *loop;
    struct tbd_clock clock;
    const struct tb_config *cfg;
    struct fsm *fsm;
    struct replog *log;
    struct peer *peer;     /* an ensemble's links (peer.h), or NULL */
    struct reconfig *reconfig; /* proc/reconfig.c's, once used */
    struct watch_mgr watches;
    uint64_t trace_mask;    /* stmk's, read by gtmk; tumblerd traces nothing */
    int expiring; /* a leader whose sessions have their fresh timeouts */
    struct tb_wbuf scratch; /* txn and notification encoding, reused */
    struct tb_wbuf scratch2;

    uv_tcp_t listener;
    uv_tcp_t tls_listener;      /* secureClientPort's, if configured */
    int accept_again; /* listeners whose connection found no memory (conn.c) */
    struct ssl_ctx_st *tls_ctx; /* OpenSSL's SSL_CTX for it */
    struct tls_watch tls_stores; /* client.certReload's (net/tls_ctx.h) */
    struct tunnel_ctx *quorum_tls; /* sslQuorum's (peer/tunnel.h), or NULL */
    uv_check_t flusher;   /* writes out every dirty connection per turn */
    uv_timer_t ticker;    /* session expiry, once per tick */
    uv_timer_t cleaner;   /* container and TTL cleanup */
    uv_signal_t sigterm, sigint, sighup;

    struct tb_queue conns; /* every open connection */
    struct tb_queue dirty; /* connections with output to flush */
    struct tb_queue notified; /* ... of them, told of a watch just now */
    struct tb_queue fresh; /* connections maybe still without a
                              ConnectRequest, oldest first */
    /* The clients proc serves (struct proc_client, proc.h), by their id
     * (a txn's origin) and by the session each holds. */
    struct tb_map conn_by_id;
    struct tb_map conn_by_session;
    struct tb_map sessions; /* session id -> struct sess (proc/expiry.h) */
    struct tb_map ip_count; /* address hash -> its chain (net/conn.c) */
    uint64_t next_conn_id;
    uint64_t max_conns; /* what the open-file limit leaves room for */
    uint64_t conns_rejected;                   /* refused over either limit */
    uint64_t tls_failed;                       /* TLS handshakes that failed */
    uint64_t tls_handshaking;                  /* ... that have not ended */
    struct tb_log_rate refused_log;            /* conn.c's refuse() */
    struct tb_log_rate auth_log;               /* refused logins */
    struct tb_log_rate quota_log;              /* quotas gone over */
    struct tb_log_rate slow_log;               /* over slowRequestMs */
    uint64_t quota_exceeded;                   /* limits a write went over */
    uint64_t quota_refused;                    /* writes a hard limit refused */
    /* Those refusals by namespace, the first name of the quota's path, as
     * ZooKeeper counts them; a list, as namespaces with quotas are few. */
    struct quota_ns_refused *quota_ns;
    size_t quota_nns;
    int64_t server_id;
    uint64_t epoch_noted; /* the zxid epoch wal-meta records (main.c) */

    /* What every connection reads into when its last read left nothing
     * over (conn.c); what a read leaves over moves to the connection. */
    uint8_t in[65536];

    uint64_t started_ms;
    uint64_t tick_ms;      /* the ticker's period: half of tickTime */
    uint64_t last_tick_ms; /* session_tick's, to tell a stalled loop */
    uint64_t packets_received, packets_sent;
    struct latency lat;
    /* Request latency by type, for the Prometheus endpoint (http/). */
    struct hist req_latency[METRICS_NOPS];
    uint64_t shown_ns;            /* tbd_shown_ns()'s reading, if valid */
    int shown_ns_valid;
    uint64_t watch_notifications; /* notices sent to this server's clients */
    struct httpd *metrics_http;   /* metricsProvider.*, or NULL */
    struct httpd *admin_http;     /* admin.*, or NULL */
    int stopping;
    int handing_over; /* stopping: leadership is being handed over first */
};

/* admin/source.c: four-letter words, and what they read off the server,
 * which the AdminServer and the Prometheus endpoint read too. */
int admin_try(struct conn *c);
void admin_source(struct tbd *s, struct fourlw_source *src);

/* http/serve.c: the Prometheus endpoint (metricsProvider.*) and the
 * AdminServer (admin.*), each if configured.  0, or logs why not and
 * returns non-zero (a port taken): the start fails. */
int http_start(struct tbd *s);
/* Closes both; safe if they never started. */
void http_stop(struct tbd *s);

#endif
