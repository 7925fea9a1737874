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

struct conn;
struct tb_config;

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

#endif
