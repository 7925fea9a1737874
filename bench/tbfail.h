/* tbfail's pieces and what they share (usage in tbfail.c):
 *
 *   fail_sess.c     one session over one blocking socket: connect,
 *                   handshake, request and reply on the project's codec
 *   fail_ops.c      the requests tbfail sends on a session: create, sync,
 *                   getChildren
 *   fail_servers.c  the --servers list, and opening a session on one of
 *                   its servers (in turn, or again on the same one)
 *   fail_srvr.c     a server's role and zxid from its `srvr`
 *   fail_trial.c    the failover trial: the write loop, the signal, the
 *                   session on the stopped leader (tbfail failover)
 *   fail_verify.c   acknowledged writes on every server (tbfail verify)
 *   fail_members.c  waiting for the ensemble to settle and for a restarted
 *                   member to rejoin (tbfail ensemble, tbfail rejoin)
 *   fail_writer.c   writing without pause through a rolling restart
 *                   (tbfail writer)
 *   tbfail.c        the command line
 *
 * Clocks and address resolution are tbbench's (clock.c, addr.c). */
#ifndef TBFAIL_H
#define TBFAIL_H

#include <stdint.h>
#include <sys/socket.h>

#include "common/common.h"
#include "proto/proto.h"

#include "addr.h"
#include "clock.h"

/* ---- the servers (fail_servers.c) ---- */

#define TF_MAX_SRV 8

struct tf_srv {
    char name[128];
    struct sockaddr_storage ss;
    unsigned len;
};

extern struct tf_srv tf_srvs[TF_MAX_SRV];
extern int tf_nsrv;

/* Fills tf_srvs from "A,B,...": 0, or -1 (a message on stderr). */
int tf_parse_servers(const char *list);

/* ---- one session over one blocking socket (fail_sess.c) ---- */

/* At all times fd >= 0 iff connected; id != 0 iff a session was made (its
 * password in passwd); in[consumed..in_len) is what is read and not yet
 * handed out. */
struct tf_sess {
    int fd;
    int64_t id;
    uint8_t passwd[64];
    size_t passwd_len;
    int32_t timeout_ms;
    int64_t last_zxid;
    int32_t xid;
    uint8_t *in;
    size_t in_len, in_cap, consumed;
};

void tf_sess_init(struct tf_sess *s, int32_t timeout_ms);
/* Closes the socket; the session (id, password) is kept for an open. */
void tf_sess_drop(struct tf_sess *s);
/* Milliseconds to `deadline` (rounded up; 0 once past). */
int tf_remaining_ms(uint64_t deadline);
/* All of p[0..n) on a non-blocking socket by `deadline`: 0,
 * TB_EOPTIMEOUT or TB_ECONNECTIONLOSS. */
int tf_send_all(int fd, const uint8_t *p, size_t n, uint64_t deadline);
/* A connection to `v` in s->fd by `deadline`, nothing sent: 0,
 * TB_ESYSTEM, TB_ECONNECTIONLOSS (refused) or TB_EOPTIMEOUT. */
int tf_connect(struct tf_sess *s, const struct tf_srv *v, uint64_t deadline);
/* Opens a connection to `v` and makes (or takes up again) the session.
 * 0, TB_ESESSIONEXPIRED (the server says the session is gone; the session
 * is forgotten, so the next open makes a new one), or another error. */
int tf_sess_open(struct tf_sess *s, const struct tf_srv *v, uint64_t deadline);
/* Sends request `op` with the body in `body` (no frame, no header): 0 once
 * it is sent, and the xid in *xid_out. */
int tf_sess_send(struct tf_sess *s, int32_t op, const struct tb_wbuf *body,
                 uint64_t deadline, int32_t *xid_out);
/* Reads frames until the reply to `xid` (skipping notifications and
 * pings): its err, and *rd on its body.  `deadline` 0: only what is
 * already there. */
int tf_sess_reply(struct tf_sess *s, int32_t xid, uint64_t deadline,
                  struct tb_rd *rd);
/* tf_sess_send then tf_sess_reply. */
int tf_sess_call(struct tf_sess *s, int32_t op, const struct tb_wbuf *body,
                 uint64_t deadline, struct tb_rd *rd);
/* closeSession if connected, then frees the buffers. */
void tf_sess_close(struct tf_sess *s, uint64_t deadline);

/* ---- requests (fail_ops.c) ---- */

/* Sends a create of `path` (data "tbfail", open ACL) without waiting. */
int tf_send_create(struct tf_sess *s, const char *path, int32_t flags,
                   uint64_t deadline, int32_t *xid);
/* A create's reply: err, and the path made into `out`. */
int tf_create_reply(struct tb_rd *rd, int err, char *out, size_t cap);
/* A create and its reply; the path made into `out` (NULL: not wanted). */
int tf_create(struct tf_sess *s, const char *path, int32_t flags,
              uint64_t deadline, char *out, size_t cap);
/* TB_OP_SYNC or TB_OP_GETCHILDREN (no watch) of `path`. */
int tf_path_op(struct tf_sess *s, int32_t op, const char *path,
               uint64_t deadline, struct tb_rd *rd);

/* ---- opening on the servers (fail_servers.c) ---- */

/* Opens on server `first`, trying the others in turn, until `deadline`;
 * the server's index in *at (NULL: not wanted). */
int tf_sess_open_any(struct tf_sess *s, int first, int n, uint64_t deadline,
                     int *at);
/* Opens on server `v` alone, again every 20 ms until `deadline` (a member
 * just started may close new connections until it has a leader link). */
int tf_sess_open_retry(struct tf_sess *s, const struct tf_srv *v,
                       uint64_t deadline);

/* ---- srvr (fail_srvr.c) ---- */

struct tf_srvr {
    int ok;        /* answered */
    int serving;   /* not "not currently serving requests" */
    char mode[32]; /* leader, follower, standalone, ... or "" */
    uint64_t zxid;
};

/* `v`'s srvr, within a second; r->ok = 0 if it did not answer. */
void tf_srvr(const struct tf_srv *v, struct tf_srvr *r);

/* ---- the modes (fail_trial.c, fail_verify.c, fail_members.c,
 * fail_writer.c) ---- */

struct tf_fo_opts {
    long pid;
    int stop; /* SIGSTOP rather than SIGKILL */
    const char *root, *stale, *acked;
    double timeout_ms, retry_ms, warm_ms, after_ms, cont_ms, max_s;
};

int tf_run_failover(const struct tf_fo_opts *o);
/* SIGTERM/SIGINT: a stopped leader gets its SIGCONT before tbfail dies. */
void tf_on_term(int sig);
int tf_run_verify(const char *root, const char *acked_file);
int tf_run_ensemble(double timeout_s);
int tf_run_rejoin(int node, uint64_t since_us, double timeout_s);
/* R and its parents, made if missing (fail_trial.c). */
int tf_ensure_root(struct tf_sess *s, const char *root);
int tf_run_writer(const char *root, const char *acked_file, const char *until,
                  double timeout_ms, double retry_ms);

#endif
