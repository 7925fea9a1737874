/* proc/: request processing.  Every frame of a client after the bytes
 * are split (net/) comes to proc_frame: the handshake (session.c),
 * identities (auth.c, sasl.c), reads answered from the tree (read.c),
 * writes turned into txns and proposed (proc.c); the fsm's result hook
 * (proc_result) routes each txn's outcome back to the client that asked.
 * Session expiry (session.c, expiry.h) and reconfig (reconfig.c) live
 * here too. */
#ifndef TBD_PROC_H
#define TBD_PROC_H

#include <stddef.h>
#include <stdint.h>

#include "common/common.h"
#include "proto/proto.h"
#include "server/server.h"
#include "server/watch/watch.h"

struct tb_config;
struct fsm_session_info;
struct sasl_conn;
struct proc_client;

/* What proc needs of whoever carries a client's requests and takes its
 * replies: a socket today (net/conn.c), whose buffers, flushing and
 * backpressure proc never sees.  Every reply, local or to a request
 * forwarded through the log, leaves through these.  As the carrier
 * closes (at once, or once drained) it calls proc_client_closed, then
 * sets `closed`; a closed client is sent nothing more, and proc checks
 * `closed` after every call that may close it. */
struct proc_client_ops {
    /* Queues one whole frame. */
    void (*send)(struct proc_client *pc, const void *frame, size_t len);
    /* Queues a reply: its header (proc_reply_header) and, if err is 0,
     * the body of len bytes, as one frame. */
    void (*reply)(struct proc_client *pc, int32_t xid, int64_t zxid,
                  int32_t err, const void *body, size_t len);
    /* Closes now; what was queued is dropped. */
    void (*close)(struct proc_client *pc);
    /* Sends what was queued, then closes; nothing more is read. */
    void (*close_after_flush)(struct proc_client *pc);
    /* Reading may go on: a handshake answered, queued requests drained. */
    void (*resume)(struct proc_client *pc);
    /* A watch's notice was queued: worth sending before the loop's turn
     * ends (conn_flush_notified). */
    void (*notified)(struct proc_client *pc);
};

enum conn_state {
    CONN_NEW,       /* waiting for ConnectRequest or a four-letter word */
    CONN_SESSION,   /* createSession in the log */
    CONN_OPEN,      /* session attached */
    CONN_CLOSING,   /* output drains, then the carrier closes */
};

/* A client as proc serves it: its session, identities, queue of requests
 * and statistics.  The carrier sets ops, srv, id, peer and peer_port
 * before the first frame, initialises ids and reqs (auth_init_conn then
 * adds the ip id) and frees ids once closed; only it sets `closed` and
 * CONN_CLOSING; proc owns the rest, which the carrier may read.
 * `id` is unique on this server for its life: a txn's origin. */
struct proc_client {
    const struct proc_client_ops *ops;
    struct tbd *srv;
    uint64_t id;
    enum conn_state state;
    int closed;
    const char *peer;           /* its address, for logs and the ip id */
    int peer_port;

    int64_t session_id;
    int32_t timeout_ms;
    uint8_t has_readonly;
    uint8_t passwd[16];         /* of the session it resumes, until held */
    int revalidating;           /* a follower's barrier out for it */
    struct tb_wbuf ids;         /* encoded vector<Id> elements */
    int32_t nids;
    int super;
    unsigned schemes;           /* TB_SCHEME_* bits of its ids */
    struct sasl_conn *sasl;     /* a SASL exchange begun, or NULL */

    struct tb_queue reqs;       /* struct req, oldest first */
    unsigned nreqs;
    unsigned writes_in_flight;
    unsigned forwarded; /* of them, those sent to the leader */
    /* Reconfigs of its own out (another is taken while one is, refused as
     * in progress, as ZooKeeper's): nothing else it sent after is read
     * until all are answered.  A reconfig's outcome is logged only once
     * raft's members have changed, and a write after it would be applied
     * first, which ZooKeeper's order (zxid after zxid) never allows. */
    int reconfiguring;

    struct watch_owner watch;

    /* statistics */
    uint64_t last_resp_ms, last_latency_ms;
    int32_t last_op, last_cxid;
    int64_t last_zxid;
    struct latency lat;
};

/* The most a client may leave unread before a reply comes: its
 * connection is closed past it (conn.c), and no reply is built larger
 * than this beyond a node's data (read.c's multiRead). */
#define PROC_UNREAD_MAX ((size_t)64 << 20)

/* A reply's frame header (length, xid, zxid, err) into `hdr`; the body of
 * `len` bytes follows it only if err is 0.  Returns the frame's length. */
#define PROC_REPLY_HDR 20
size_t proc_reply_header(uint8_t *hdr, int32_t xid, int64_t zxid, int32_t err,
                         size_t len);

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
    int32_t nids;        /* REQ_READ: the identities it is checked with, */
    size_t ids_len;      /* those the client had when it sent it: the */
    int super;           /* first of c->ids, and whether super then */
    uint8_t *reply;      /* REQ_DONE: the framed reply */
    size_t reply_len;
    int close_after;     /* close the connection after this reply */
    int forwarded;       /* REQ_WRITE: sent to the leader, not logged here */
    int restamp;         /* REQ_DONE: its zxid is the server's when sent */
};

/* proc/proc.c */
/* A client's frame, after the bytes are split: 0, or PROC_HELD when it
 * must wait (c->reconfiguring): the carrier keeps it, and everything after
 * it, unread until c->ops->resume. */
#define PROC_HELD 1
int proc_frame(struct proc_client *c, struct tb_str frame);
void proc_drain(struct proc_client *c);
/* Called once by the carrier as it closes, before it sets c->closed: the
 * queued requests, the watches and a SASL exchange go. */
void proc_client_closed(struct proc_client *c);
/* ops->close_after_flush, the client's watches dropped first: what it was
 * sent drains, and no change adds to it meanwhile. */
void proc_close_after_flush(struct proc_client *c);
int64_t proc_zxid(const struct tbd *s);
int proc_propose(struct tbd *s, int32_t type, int64_t session, int32_t xid,
                 uint64_t origin, const struct proc_client *c,
                 struct tb_str body);
struct tb_txn;
/* On the leader: stamps t with what it decides once for every replica
 * (time, policies) and proposes it; done answers (replog_propose). */
int proc_propose_txn(struct tbd *s, struct tb_txn *t,
                     void (*done)(void *arg, int status, int64_t index),
                     void *arg);
void proc_result(struct tbd *s, const struct tb_txn *t, int64_t zxid, int rc,
                 const uint8_t *body, size_t len);
/* The leader refused c's forwarded write `xid` before logging it (its disk
 * is low: err TB_ENOTREADONLY): the client is answered err in its turn, as
 * by a server refusing its own write.  No such write out: c closes. */
void proc_refused(struct proc_client *c, int32_t xid, int err);

/* proc/reconfig.c: a reconfig request's txn, on the leader (proc_propose_txn
 * hands it over; done as replog_propose's); the members applied, followed
 * on every member once a tick; its state freed at exit. */
int reconfig_propose(struct tbd *s, const struct tb_txn *t,
                     void (*done)(void *arg, int status, int64_t index),
                     void *arg);
void reconfig_tick(struct tbd *s);
void reconfig_free(struct tbd *s);
/* The members as the configuration applied names them (/zookeeper/config
 * once a reconfig wrote it, followed once a tick; else the server.N
 * lines, version 0), valid until the next tick. */
struct tb_config_members reconfig_members(const struct tbd *s);
/* The txn that logs a reconfig's outcome (TB_OP_RECONFIG_TXN, applied by
 * fsm_reconfig.c), as the leader proposes it and --recover-ensemble
 * (recovery.c) writes it: `rc`, and when it is 0 `members`, the server
 * lines /zookeeper/config becomes (tb_config_render_servers).  The body
 * goes into `body` (emptied first), which t->body then views; t's other
 * fields are zero but its type and super (the outcome passes
 * /zookeeper/config's ACL), for the caller to set.  0 or TB_ENOMEM. */
int reconfig_outcome_txn(struct tb_txn *t, struct tb_wbuf *body, int rc,
                         struct tb_str members);

/* The id before the first of this server's connections (ids count up
 * from it), at wall time `wall_ms`.  A txn's origin is one of these ids:
 * the top byte says which server (peer.h), the rest start from the time,
 * 256 ids a millisecond, so that the ids of one start are none of an
 * earlier start's, whose entries a restarted server may yet apply (a
 * createSession's answer must not reach a client of its own that happens
 * to have that number). */
uint64_t proc_conn_id_base(int server_id, int64_t wall_ms);

/* proc/multi.c: a multi's body before it is logged.  1: refused (an op
 * proc_write_refused refuses), its results are in `out` to answer with;
 * 0: *body, perhaps written again into `out` (each create's opcode as its
 * mode says), is what to log; TB_ENOMEM. */
int proc_multi_prepare(const struct tbd *s, struct tb_str *body,
                       struct tb_wbuf *out);
/* The error a write other than a multi gets before the log, whatever the
 * tree (multi.c says which), or 0. */
int proc_write_refused(const struct tbd *s, int32_t type, struct tb_str body);

/* proc/session.c */
void session_connect(struct proc_client *c, struct tb_str frame);
void session_touch(struct tbd *s, int64_t id);
void session_opened(struct tbd *s, int64_t id, int32_t timeout_ms);
void session_closed(struct tbd *s, int64_t id);
/* Tracks exactly the fsm's sessions, each with a full timeout from now: at
 * start, on becoming leader, after a snapshot replaced the state. */
void session_reload(struct tbd *s);
void session_tick(struct tbd *s);
void session_result(struct proc_client *c, int rc, const uint8_t *body,
                    size_t len);
/* The barrier c's resumption waited for has come back (proc_result). */
void session_revalidated(struct proc_client *c);
/* The leader recorded the session c resumes as held here (peer.h). */
void session_claimed(struct proc_client *c);
/* The leader refused c's claim: the session's close is decided. */
void session_expired(struct proc_client *c);
/* 1 if the close of session id was decided here (it expired, or its
 * client's closeSession was proposed: the close is in the log), which
 * only the server that proposes closes knows: the leader, or a server
 * alone.  A follower's clients' sessions are not known closing there. */
int session_closing(struct tbd *s, int64_t id);
/* 1 (and *fs filled, if not NULL) if session id is here and its close
 * was not decided here (session_closing): a client may resume it, as
 * ZooKeeper's leader refuses a closing session. */
int session_resumable(struct tbd *s, int64_t id, struct fsm_session_info *fs);

/* proc/read.c */
void read_serve(struct proc_client *c, int32_t xid, int32_t type,
                struct tb_str body);

/* proc/auth.c */
void auth_init_conn(struct proc_client *c);
void auth_add_id(struct proc_client *c, struct tb_id id);
void auth_make_super(struct proc_client *c);
/* Logs a refused login (setAuth, SASL, enforce.auth) a line a second at
 * most: a client can fail them as fast as it can connect. */
void auth_log_refusal(struct proc_client *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void auth_request(struct proc_client *c, int32_t xid, struct tb_str body);
int auth_check(const struct proc_client *c, struct tb_vec acl, int perm);
/* ZooKeeper's enforce.auth: 1 if the connection may go on; else it was
 * answered SessionClosedRequireAuth (-124) and is closing. */
int auth_enforced(struct proc_client *c, int32_t xid);

/* proc/sasl.c: nothing happens unless java.security.auth.login.config is
 * set; then sasl_setup() reads its users and fails (err) if SASL cannot
 * be offered. */
int sasl_setup(const struct tb_config *cfg, char *err, size_t errlen);
void sasl_teardown(void);
void sasl_request(struct proc_client *c, int32_t xid, struct tb_str body);
void sasl_conn_closed(struct proc_client *c);

#endif
