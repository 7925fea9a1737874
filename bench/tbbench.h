/* tbbench: a load generator for any ZooKeeper-compatible server.
 *
 * One thread drives every session through one epoll loop, so the client
 * side stays cheap on a small machine and the server is what is measured.
 * The sessions here are deliberately minimal (handshake, pings, xid
 * matching, watch notifications, closeSession): enough to run lock recipes
 * and raw operations, nothing a real client library needs beyond that.
 *
 * Pieces: loop.c (epoll + timer heap), clock.c and addr.c (clocks and
 * addresses, shared with tbfail), conn.c (one session over one socket),
 * hist.c (latency histograms), sysinfo.c (server pid, RSS, CPU from
 * /proc), mntr.c (the server's count of synced writes), lock.c (lock
 * recipes), raw.c (pipelined operations), storm.c (session storm, memory,
 * serving probe), disk.c (the disk's synced-write floor), setup.c (shared
 * scenario plumbing), tbbench.c (options, output). */
#ifndef TBBENCH_H
#define TBBENCH_H

#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include "common/common.h"
#include "proto/proto.h"

#include "addr.h"
#include "clock.h"

/* ---- loop (loop.c) ------------------------------------------------- */

struct bn_loop;

/* A one-shot timer.  At all times heap_idx >= 0 iff it is armed. */
struct bn_timer {
    uint64_t when;
    long heap_idx;
    void (*cb)(struct bn_timer *t);
    void *data;
};

/* Something that owns a file descriptor in the loop. */
struct bn_io {
    int fd;
    uint32_t events; /* EPOLLIN / EPOLLOUT currently registered */
    void (*cb)(struct bn_io *io, uint32_t events);
};

struct bn_loop *bn_loop_new(void);
void bn_loop_free(struct bn_loop *l);
int bn_io_add(struct bn_loop *l, struct bn_io *io, uint32_t events);
int bn_io_mod(struct bn_loop *l, struct bn_io *io, uint32_t events);
void bn_io_del(struct bn_loop *l, struct bn_io *io);
void bn_timer_init(struct bn_timer *t, void (*cb)(struct bn_timer *),
                   void *data);
void bn_timer_start(struct bn_loop *l, struct bn_timer *t, uint64_t delay_ns);
void bn_timer_stop(struct bn_loop *l, struct bn_timer *t);
/* Runs until `*done` is non-zero or `deadline_ns` (0: none) passes.
 * Returns 0, or -1 when the deadline passed first. */
int bn_loop_run(struct bn_loop *l, const int *done, uint64_t deadline_ns);
/* Calls fn(data) after the current batch of events (once per loop turn);
 * used to write every connection's queued requests with one syscall. */
void bn_loop_defer(struct bn_loop *l, struct tb_queue *link);
void bn_loop_set_flush(struct bn_loop *l, void (*fn)(struct tb_queue *));

/* ---- one session (conn.c) ------------------------------------------- */

enum bn_state {
    BN_CONNECTING, /* TCP connect in progress */
    BN_TLS,        /* TLS handshake in progress (--tls-port) */
    BN_HANDSHAKE,  /* ConnectRequest sent */
    BN_READY,      /* session established */
    BN_CLOSING,    /* closeSession sent */
    BN_CLOSED,     /* socket closed; `err` says why (0: orderly) */
};

struct bn_conn;

/* `body` is positioned after the ReplyHeader; only meaningful if err == 0.
 * `sent_ns` is when the request was queued. */
typedef void (*bn_reply_cb)(struct bn_conn *c, int32_t err, struct tb_rd *body,
                            uint64_t arg, uint64_t sent_ns);

struct bn_conn_ops {
    void (*on_ready)(struct bn_conn *c);
    void (*on_event)(struct bn_conn *c, int32_t type, struct tb_str path);
    void (*on_closed)(struct bn_conn *c);
};

struct bn_pending {
    int32_t xid;
    int32_t op;
    bn_reply_cb cb;
    uint64_t arg;
    uint64_t sent_ns;
};

struct bn_conn {
    struct bn_io io;
    struct ssl_st *ssl; /* OpenSSL's SSL when the run is over TLS */
    struct bn_loop *loop;
    const struct bn_conn_ops *ops;
    void *data;
    enum bn_state state;
    int err; /* why it closed: 0, or a TB_E* / -errno-ish code */
    int64_t session_id;
    int32_t timeout_ms;
    int32_t next_xid;
    struct tb_wbuf out;
    size_t out_off;
    int out_queued; /* on the loop's flush list */
    struct tb_queue flush_link;
    uint8_t *in;
    size_t in_len, in_cap;
    struct bn_pending *pend; /* ring, capacity pend_cap (power of two) */
    uint32_t pend_head, pend_tail, pend_cap;
    struct bn_timer ping;
    uint64_t connect_ns, ready_ns;
    /* Called once when the connect attempt settles: the session is ready
     * (ok = 1) or the socket closed first (ok = 0); before ops->on_ready. */
    void (*settle)(struct bn_conn *c, int ok);
    void *settle_data;
    /* counters */
    uint64_t n_requests; /* excluding pings and closeSession */
    uint64_t n_events;
};

void bn_conn_init(struct bn_conn *c, struct bn_loop *l,
                  const struct bn_conn_ops *ops, void *data);
/* Makes every later connection TLS, trusting `ca` and presenting
 * `cert`/`key` (PEM; NULL: none).  0, or -1 with a message on stderr. */
int bn_tls_init(const char *ca, const char *cert, const char *key);
/* Starts the TCP connect and the handshake.  0 or a negative error. */
int bn_conn_start(struct bn_conn *c, const struct sockaddr *addr,
                  unsigned addrlen, int32_t timeout_ms);
/* Sends closeSession; on_closed fires when the server closes or answers. */
void bn_conn_close(struct bn_conn *c);
/* Closes the socket at once (no closeSession). */
void bn_conn_abort(struct bn_conn *c, int err);
void bn_conn_free(struct bn_conn *c);
/* How many requests wait for a reply. */
static inline uint32_t bn_conn_inflight(const struct bn_conn *c)
{
    return c->pend_tail - c->pend_head;
}

void bn_create(struct bn_conn *c, struct tb_str path, struct tb_str data,
               int32_t flags, bn_reply_cb cb, uint64_t arg);
void bn_delete(struct bn_conn *c, struct tb_str path, int32_t version,
               bn_reply_cb cb, uint64_t arg);
void bn_exists(struct bn_conn *c, struct tb_str path, int watch, bn_reply_cb cb,
               uint64_t arg);
void bn_get_data(struct bn_conn *c, struct tb_str path, int watch,
                 bn_reply_cb cb, uint64_t arg);
void bn_set_data(struct bn_conn *c, struct tb_str path, struct tb_str data,
                 int32_t version, bn_reply_cb cb, uint64_t arg);
void bn_get_children(struct bn_conn *c, struct tb_str path, int watch,
                     bn_reply_cb cb, uint64_t arg);

/* ---- latency histogram (hist.c) -------------------------------------- */

/* Log-linear buckets: 64 sub-buckets per power of two (< 1.6% error),
 * values in nanoseconds up to 2^46 (19 hours). */
#define BN_HIST_SUB 128
#define BN_HIST_EXP 41
struct bn_hist {
    uint64_t n;
    uint64_t sum;
    uint64_t min, max;
    uint64_t b[BN_HIST_EXP * BN_HIST_SUB];
};

void bn_hist_reset(struct bn_hist *h);
void bn_hist_add(struct bn_hist *h, uint64_t v_ns);
/* The value at quantile q (0..1), in ns; 0 if empty. */
uint64_t bn_hist_q(const struct bn_hist *h, double q);
double bn_hist_mean(const struct bn_hist *h);
void bn_hist_merge(struct bn_hist *into, const struct bn_hist *h);

/* ---- the server process (sysinfo.c) ---------------------------------- */

struct bn_proc_sample {
    int ok;
    uint64_t cpu_ticks; /* utime + stime */
    uint64_t rss_kb;
    uint64_t hwm_kb;
};

/* The pid of the process listening on TCP `port` (v4 or v6), or -1. */
long bn_find_listener_pid(int port);
int bn_proc_sample(long pid, struct bn_proc_sample *s);
double bn_ticks_to_s(uint64_t ticks);

/* The whole machine's CPU time from /proc/stat, in ticks: busy (user,
 * system, interrupts), steal (the hypervisor's) and all (those, idle and
 * waiting for I/O). */
struct bn_machine_sample {
    int ok;
    uint64_t busy, steal, all;
};

int bn_machine_sample(struct bn_machine_sample *m);
/* How many CPUs `part` ticks of the time between two samples amount to. */
double bn_machine_cpus(const struct bn_machine_sample *a,
                       const struct bn_machine_sample *b, uint64_t part);

/* ---- the server's own figures (mntr.c) -------------------------------- */

struct bn_env;
/* The server's log so far, from its `mntr`: synced writes; their summed
 * time, and its appends and their summed wait for a write, in microseconds
 * (UINT64_MAX where not told). */
struct bn_log {
    uint64_t writes, write_us, appends, wait_us;
};
/* -1 if the server does not tell even its writes. */
int bn_log_figures(const struct bn_env *e, struct bn_log *out);

/* ---- output (tbbench.c) ---------------------------------------------- */

/* A RESULT line: a fixed prefix (server label, scenario) then key=value
 * pairs appended by the scenario. */
struct bn_result {
    char buf[4096];
    size_t len;
};
void bn_result_begin(struct bn_result *r, const char *scenario);
void bn_result_add(struct bn_result *r, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void bn_result_hist(struct bn_result *r, const char *prefix,
                    const struct bn_hist *h);
void bn_result_end(struct bn_result *r);

/* Human-readable line on stdout. */
void bn_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- scenarios ------------------------------------------------------- */

struct bn_opts {
    const char *server;  /* host:port */
    const char *label;   /* server name in RESULT lines */
    long pid;            /* server pid, or 0: find it by port */
    int clients;         /* N */
    int locks;           /* M */
    double hold_ms;      /* H */
    double duration_s;   /* measured time */
    double warmup_s;     /* unmeasured time before it */
    int outstanding;     /* K: pipelined requests per client */
    int data_bytes;      /* B */
    long znodes;         /* K for memory */
    int connect_window;  /* handshakes in flight during a storm */
    int session_timeout; /* ms */
    double hold_s;       /* sessions: how long to hold them */
    const char *variant; /* lock: fair, herd, nonfair */
    const char *ops;     /* raw: comma list */
    int once;            /* lock: each client acquires once */
    const char *root;    /* root znode for this run */
    int cleanup;         /* delete the root's subtree at the end */
    const char *dir;     /* disk: where to write the probe file */
    uint64_t since_us;   /* serving: wall clock (us) of the server's exec */
    const char *since_file; /* or the file that holds it */
    int verbose;
    int tls_port;        /* sessions over TLS to this port (mntr stays on
                            --server's); 0: plain */
    const char *tls_ca, *tls_cert, *tls_key; /* PEM files */
};

/* Shared setup: the sockaddr to connect to and the server pid.  --server
 * may list several servers (an ensemble), comma-separated: the sessions go
 * round-robin over them (the i-th opened to server i mod n), four-letter
 * words and the pid stay with the first. */
#define BN_MAX_SERVERS 16
struct bn_env {
    const struct bn_opts *o;
    struct sockaddr_storage addr; /* --server's first: four-letter words */
    unsigned addrlen;
    struct sockaddr_storage sess_addr; /* sessions: addr, or the TLS port */
    struct sockaddr_storage more[BN_MAX_SERVERS]; /* sessions, all of them */
    unsigned more_len[BN_MAX_SERVERS];
    int n_servers;
    long pid;
    struct bn_loop *loop;
};

/* The address session number `i` opens to. */
const struct sockaddr *bn_sess_addr(const struct bn_env *e, int i,
                                    unsigned *len);

int bn_env_init(struct bn_env *e, const struct bn_opts *o);
void bn_env_fini(struct bn_env *e);

/* Opens `n` sessions with at most `window` handshakes in flight; returns
 * how many are ready.  `conns` must be initialised by the caller. */
int bn_connect_all(struct bn_env *e, struct bn_conn **conns, int n, int window,
                   double timeout_s);
/* Sends closeSession on every ready session and waits (bounded). */
void bn_close_all(struct bn_env *e, struct bn_conn **conns, int n,
                  double timeout_s);
/* Creates `path` and any missing parents as persistent nodes. */
int bn_ensure_path(struct bn_env *e, struct bn_conn *c, const char *path);
/* Deletes `path` and everything below it; best effort, returns count. */
long bn_delete_tree(struct bn_env *e, struct bn_conn *c, const char *path);

int bn_run_lock(struct bn_env *e);
int bn_run_raw(struct bn_env *e);
int bn_run_sessions(struct bn_env *e);
int bn_run_memory(struct bn_env *e);
int bn_run_idle(struct bn_env *e);
int bn_run_disk(const struct bn_opts *o);
int bn_run_serving(struct bn_env *e);

#endif
