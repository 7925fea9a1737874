/* The server's shared state: one libuv loop thread owns everything here.
 *
 * A request's path: net/ reads bytes and splits frames (conn.c), proc/
 * answers reads from the tree and turns writes into txns (proc.c, read.c),
 * raft/ makes each txn durable and hands it to fsm/ in log order, whose
 * hooks fire watches (watch/) and route the result back to the connection
 * that asked (proc_result, proc.c).  Replies leave once per loop turn
 * (conn_flush_all). */
#ifndef TBD_SERVER_H
#define TBD_SERVER_H

#include <uv.h>

#include "common/common.h"
#include "common/hist.h"
#include "common/map.h"
#include "proto/proto.h"
#include "server/http/metrics.h"
#include "server/logging/log.h"
#include "server/proc/expiry.h"
#include "server/watch/watch.h"

struct tb_config;
struct fsm;
struct replog;
struct sasl_conn;
struct httpd;
struct fourlw_source;

/* Counters shown by srvr/stat/mntr/cons. */
struct latency {
    uint64_t count, total_ms, min_ms, max_ms;
};

struct quota_ns_refused {
    char *ns;
    uint64_t count;
};

/* Time as the server reads it, in one place (proc/clock.c): `now_ms`,
 * monotonic milliseconds (session deadlines, ticks, latencies, rates of
 * log lines); `wall_ms`, milliseconds since the epoch (the time a txn
 * carries, which TTLs count from).  tumblerd runs on tbd_clock_system():
 * the loop's uv_now and gettimeofday; a test gives its own to drive
 * sessions on virtual time. */
struct tbd_clock {
    uint64_t (*now_ms)(void *data);
    int64_t (*wall_ms)(void *data);
    void *data;
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
    struct tb_wbuf scratch; /* txn and notification encoding, reused */
    struct tb_wbuf scratch2;

    uv_tcp_t listener;
    uv_tcp_t tls_listener;      /* secureClientPort's, if configured */
    struct ssl_ctx_st *tls_ctx; /* OpenSSL's SSL_CTX for it */
    uv_fs_poll_t tls_stores[2]; /* client.certReload: key, trust store */
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
    struct tb_map conn_by_id;
    struct tb_map conn_by_session;
    struct tb_map sessions; /* session id -> struct sess (proc/expiry.h) */
    struct tb_map ip_count; /* IPv4 address -> open connections */
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

enum conn_state {
    CONN_NEW,       /* waiting for ConnectRequest or a four-letter word */
    CONN_SESSION,   /* createSession in the log */
    CONN_OPEN,      /* session attached */
    CONN_CLOSING,   /* output drains, then the socket closes */
};

/* One queued request: served in arrival order, reads behind this
 * connection's writes still in the log. */
enum req_state { REQ_READ, REQ_WRITE, REQ_DONE };
struct req {
    struct tb_queue link;
    enum req_state state;
    int32_t xid;
    int32_t type;
    uint64_t start_ms;
    uint64_t start_ns;   /* tbd_shown_ns(): the latency histograms' clock */
    struct tb_str body;  /* REQ_READ: a copy of the request record */
    uint8_t *reply;      /* REQ_DONE: the framed reply */
    size_t reply_len;
    int close_after;     /* close the connection after this reply */
};

struct conn {
    uv_tcp_t tcp;
    struct tbd *srv;
    struct tb_queue link;       /* in srv->conns */
    struct tb_queue dirty_link; /* in srv->dirty while it has output */
    struct tb_queue notified_link; /* in srv->notified (conn.c) */
    struct tb_queue fresh_link; /* in srv->fresh until swept */
    uint64_t id;
    enum conn_state state;
    char peer[64];              /* "a.b.c.d" */
    int peer_port;
    uint32_t peer_ip4;          /* host order; 0 if not IPv4 */

    uint8_t *in; /* unprocessed input, or NULL */
    size_t in_len, in_cap;
    int reading;

    struct tb_wbuf out;         /* frames not yet handed to the kernel */
    size_t writing;             /* bytes in the uv_write in flight */

    int64_t session_id;
    int32_t timeout_ms;
    uint8_t has_readonly;
    struct tb_wbuf ids;         /* encoded vector<Id> elements */
    int32_t nids;
    int super;
    unsigned schemes;           /* TB_SCHEME_* bits of its ids */
    struct sasl_conn *sasl; /* a SASL exchange begun, or NULL */
    struct tls_conn *tls;   /* on the TLS port, else NULL (net/tls.c) */

    struct tb_queue reqs;       /* struct req, oldest first */
    unsigned nreqs;
    unsigned writes_in_flight;

    struct watch_owner watch;

    /* statistics */
    uint64_t received, sent, established_ms, last_resp_ms;
    int32_t last_op, last_cxid;
    int64_t last_zxid;
    struct latency lat;
};

/* net/conn.c */
int conn_listen(struct tbd *s);
/* Closes what conn_listen opened (a start that goes no further). */
void conn_unlisten(struct tbd *s);
void conn_send(struct conn *c, const void *frame, size_t len);
void conn_reply(struct conn *c, int32_t xid, int64_t zxid, int32_t err,
                const void *body, size_t len);
/* A reply's frame header (length, xid, zxid, err) into `hdr`; the body of
 * `len` bytes follows it only if err is 0.  Returns the frame's length. */
#define CONN_REPLY_HDR 20
size_t conn_reply_header(uint8_t *hdr, int32_t xid, int64_t zxid, int32_t err,
                         size_t len);
void conn_close(struct conn *c);
void conn_close_after_flush(struct conn *c);
void conn_pause(struct conn *c);
void conn_resume(struct conn *c);
void conn_flush_all(struct tbd *s);
/* c was sent a watch's notice; conn_flush_notified writes out every such
 * connection now, not at the end of the loop's turn (conn.c). */
void conn_notified(struct conn *c);
void conn_flush_notified(struct tbd *s);
/* Closes connections that sent no ConnectRequest (nor finished a TLS
 * handshake) within CONN_SESSIONLESS_MS: each holds a descriptor. */
#define CONN_SESSIONLESS_MS 10000
void conn_sweep_sessionless(struct tbd *s);

/* net/tls.c: the TLS port's context (start-up; logs why it cannot be had),
 * and each of its connections: tls_conn_input decrypts what a read brought
 * into c->in (non-zero: close once the alert it may have left is sent);
 * tls_conn_output encrypts c->out and returns the bytes to write, NULL if
 * it cannot (close). */
int tls_server_init(struct tbd *s);
/* Reads the stores again (SIGHUP): new connections get what they hold now,
 * open ones keep theirs; if they cannot be used, nothing changes. */
int tls_server_reload(struct tbd *s);
/* client.certReload: tls_server_reload when a store's file changes. */
void tls_server_watch(struct tbd *s);
void tls_server_free(struct tbd *s);
int tls_conn_new(struct conn *c);
void tls_conn_free(struct conn *c);
int tls_conn_input(struct conn *c, const uint8_t *p, size_t n);
struct tb_wbuf *tls_conn_output(struct conn *c);
size_t tls_conn_unsent(const struct conn *c);

/* proc/clock.c: the default clock; reads of s->clock (monotonic, and the
 * time a txn carries); and the system's wall clock itself, which what is
 * only shown (four-letter words) reads directly. */
struct tbd_clock tbd_clock_system(uv_loop_t *loop);
uint64_t tbd_now_ms(const struct tbd *s);
int64_t tbd_txn_time(const struct tbd *s);
int64_t tbd_wall_ms(void);
/* Monotonic nanoseconds for what is only shown (the latency histograms),
 * read at most once per read callback and loop turn rather than per
 * request: a clock read costs about 45 ns here, a pipelined get 1 us.  The
 * requests one read brings share a start; the answers of one turn share an
 * end.  tbd_shown_ns_expire() makes the next call read the clock. */
uint64_t tbd_shown_ns(struct tbd *s);
void tbd_shown_ns_expire(struct tbd *s);

/* proc/proc.c */
void proc_frame(struct conn *c, struct tb_str frame);
void proc_drain(struct conn *c);
void proc_conn_closed(struct conn *c);
int64_t proc_zxid(const struct tbd *s);
int proc_propose(struct tbd *s, int32_t type, int64_t session, int32_t xid,
                 uint64_t origin, const struct conn *c, struct tb_str body);
struct tb_txn;
/* On the leader: stamps t with what it decides once for every replica
 * (time, policies) and proposes it; done answers (replog_propose). */
int proc_propose_txn(struct tbd *s, struct tb_txn *t,
                     void (*done)(void *arg, int status, int64_t index),
                     void *arg);
void proc_result(struct tbd *s, const struct tb_txn *t, int64_t zxid, int rc,
                 const uint8_t *body, size_t len);

/* proc/reconfig.c: a reconfig request's txn, on the leader (proc_propose_txn
 * hands it over; done as replog_propose's); the members applied, followed
 * on every member once a tick; its state freed at exit. */
int reconfig_propose(struct tbd *s, const struct tb_txn *t,
                     void (*done)(void *arg, int status, int64_t index),
                     void *arg);
void reconfig_tick(struct tbd *s);
void reconfig_free(struct tbd *s);

/* proc/session.c */
void session_connect(struct conn *c, struct tb_str frame);
void session_touch(struct tbd *s, int64_t id);
void session_opened(struct tbd *s, int64_t id, int32_t timeout_ms);
void session_closed(struct tbd *s, int64_t id);
void session_tick(struct tbd *s);
void session_result(struct conn *c, int rc, const uint8_t *body, size_t len);
/* The leader recorded the session c resumes as held here (peer.h). */
void session_claimed(struct conn *c);

/* proc/read.c */
void read_serve(struct conn *c, int32_t xid, int32_t type, struct tb_str body);

/* proc/auth.c */
void auth_init_conn(struct conn *c);
void auth_add_id(struct conn *c, struct tb_id id);
void auth_make_super(struct conn *c);
/* Logs a refused login (setAuth, SASL, enforce.auth) a line a second at
 * most: a client can fail them as fast as it can connect. */
void auth_log_refusal(struct conn *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void auth_request(struct conn *c, int32_t xid, struct tb_str body);
int auth_check(const struct conn *c, struct tb_vec acl, int perm);
/* ZooKeeper's enforce.auth: 1 if the connection may go on; else it was
 * answered SessionClosedRequireAuth (-124) and is closing. */
int auth_enforced(struct conn *c, int32_t xid);

/* proc/sasl.c: nothing happens unless java.security.auth.login.config is
 * set; then sasl_setup() reads its users and fails (err) if SASL cannot
 * be offered. */
int sasl_setup(const struct tb_config *cfg, char *err, size_t errlen);
void sasl_teardown(void);
void sasl_request(struct conn *c, int32_t xid, struct tb_str body);
void sasl_conn_closed(struct conn *c);

/* net/admin.c: four-letter words, and what they read off the server,
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
