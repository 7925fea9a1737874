/* The client library's internals: the handle, requests, watchers and the
 * functions the files of src/client share (prefix tb__).
 *
 * Locking: every field of struct tb_client below `mu` is guarded by it.
 * Public entry points take the lock; tb__ functions expect it held, except
 * tb__fire_done, which takes it itself and runs user callbacks unlocked.
 *
 * Life of a request (struct req), which is always on exactly one queue:
 *
 *   submit --> outq --(connection open: bytes appended to `out`)--> pendq
 *                |                                                    |
 *                +-- attempt failed / close / expiry --+    reply ----+
 *                                                      v              v
 *                                                    doneq --> callback, free
 *
 * Auth packets and pings never enter pendq: their replies carry special
 * xids and are matched out of band.  A watcher (struct watcher) is held by
 * its request until the reply decides whether the server set the watch; it
 * then lives in the registry (watch.c) until it fires, is removed or the
 * session ends, when it moves to doneq for its final call.
 *
 * A removal of watches the server need not hear of (quiet) never enters
 * outq or pendq: it waits on the `after` queue of the last request
 * outstanding and completes right after it (at once if there is none), so
 * that completions keep request order. */
#ifndef TB_CLIENT_H
#define TB_CLIENT_H

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/types.h>

/* proto.h first: tumbler.h skips the definitions proto.h already made. */
#include "proto/proto.h"
#include "tumbler/tumbler.h"

/* ---- memory (heap.c) ---- */
void *tb__malloc(size_t n);
void *tb__calloc(size_t n, size_t size);
void tb__free(void *p);
char *tb__strndup(const char *s, size_t n);

/* ---- items on the done queue ---- */
enum item_kind { ITEM_REQ, ITEM_WATCH, ITEM_PEVENT, ITEM_STATE };
struct item {
    struct tb_queue q;
    int kind;
};

/* How a reply body is decoded and which callback type a request holds. */
enum reply_kind {
    R_VOID,
    R_STAT,     /* exists, setData, setACL */
    R_CREATE,   /* create2, createContainer, createTTL */
    R_DATA,     /* getData */
    R_CHILDREN, /* getChildren */
    R_CHILDREN2,
    R_EPHEMERALS,
    R_ACL,
    R_COUNT,
    R_WHOAMI,
    R_MULTI,
    R_INTERNAL, /* closeSession: no user callback */
};

enum watch_kind { WK_DATA, WK_EXIST, WK_CHILD, WK_PERSISTENT, WK_RECURSIVE };

struct watcher {
    struct item it;     /* it.q links the registry bucket, then doneq */
    uint32_t hash;
    int kind;           /* enum watch_kind */
    int set_kind;       /* kind to register if the call succeeds */
    tb_watch_cb cb;
    void *data;
    int ev_type, ev_rc; /* the final call's event */
    size_t path_len;
    char path[];        /* server path (chroot included), NUL-terminated */
};

/* A persistent watcher's non-final event. */
struct pevent {
    struct item it;
    tb_watch_cb cb;
    void *data;
    int type;
    char path[];
};

struct state_item {
    struct item it;
    int state;
};

union req_cb {
    tb_void_cb v;
    tb_stat_cb stat;
    tb_create_cb create;
    tb_data_cb data;
    tb_strings_cb strings;
    tb_acl_cb acl;
    tb_count_cb count;
    tb_whoami_cb whoami;
    tb_multi_cb multi;
};

/* What tb_remove_watches removes once the server agreed, or, if `quiet`,
 * once its turn came without the server being told. */
struct rm_spec {
    int type; /* enum tb_watcher_type */
    tb_watch_cb cb;
    void *data;
    int local;
    int quiet;
    size_t path_len;
    char path[]; /* server path */
};

struct req {
    struct item it;
    int32_t xid;
    int32_t op;
    int kind; /* enum reply_kind */
    union req_cb cb;
    void *data;
    struct tb_wbuf fw; /* the encoded frame while queued */
    struct watcher *w;   /* to register on success, else freed */
    struct rm_spec *rm;  /* removeWatches only */
    struct tb_queue after; /* quiet removals completing right after it */
    int nops;            /* multi only: sub-operations sent */
    int rc;
    uint8_t *body; /* a copy of the reply body (rc == 0) */
    size_t body_len;
};

/* A credential, replayed after every reconnect.  `waiter` is the
 * tb_add_auth request waiting for the server's first answer, or for the
 * connection or attempt it waited on to fail first. */
struct auth {
    struct tb_queue q;
    char *scheme;
    char *cred;
    size_t len;
    struct req *waiter;
};

struct host {
    char *name;
    char *port;
    /* Its name's lookup on its way (lookup.c): kept across attempts, so
     * that one slower than an attempt's timeout still serves the next. */
    struct tb_lookup *lookup;
};

enum phase {
    PH_IDLE,       /* not started */
    PH_BACKOFF,    /* waiting before the next attempt */
    PH_RESOLVING,  /* the host's name looked up (lookup.c) */
    PH_CONNECTING, /* TCP connect in progress */
    PH_TLS,        /* TLS handshake in progress (tb_options.tls) */
    PH_HANDSHAKE,  /* ConnectRequest sent */
    PH_OPEN,       /* session established on this connection */
    PH_DEAD,       /* expired, auth failed or closed */
};

enum drive_mode { DRIVE_NONE, DRIVE_THREAD, DRIVE_LOOP };

struct tb_client {
    /* Immutable after init. */
    struct tb_options o;
    struct host *hosts;
    size_t nhosts;
    char *chroot; /* NULL or "/app" */
    size_t chroot_len;
    int64_t (*now)(void); /* monotonic ms; tests replace it */
    int (*connect_hook)(struct tb_client *c, const struct host *h);
    /* SSL_CTX; NULL: plain TCP.  Never NULL once set, but replaced on the
     * connection's path when its files changed (tls.c). */
    struct ssl_ctx_st *tls_ctx;
    struct tb__tls_files *tls_files; /* what tls_ctx is built from */

    pthread_mutex_t mu;
    int mode; /* enum drive_mode */
    pthread_t io_thread;
    int wake_fd; /* eventfd waking the I/O thread */
    int stop_thread;
    int thread_owns_free; /* closed from a callback on the I/O thread */
    int sync_waiters;
    pthread_cond_t idle_cv; /* sync_waiters reached 0 */
    struct tb_ev ev;
    int ev_set;
    struct tb_interest ev_last;
    int64_t ev_deadline;

    /* Connection. */
    int phase;
    int state; /* enum tb_session_state */
    int fd;
    size_t host_idx;     /* host of the current / last attempt */
    struct addrinfo *ai; /* resolved addresses of host_idx */
    struct addrinfo *ai_next;
    int failed_in_round; /* attempts since a connection that held */
    int64_t opened_at;   /* the current connection's handshake answered */
    int64_t deadline;    /* connect/handshake timeout, or backoff end */
    int64_t last_send, last_recv;
    int ping_inflight;
    int setwatches_inflight;
    struct tb__sasl *sasl;  /* a SASL login on its way (sasl.c) */
    struct tb__tls *tls;    /* this connection's TLS (tls.c), or NULL */
    int last_err;           /* the last failure (tb_client_last_error) */
    char last_why[224];
    int open_readonly;      /* the handshake's readOnly, once it is done */
    struct auth *auth_next; /* next credential whose answer is due */
    int auth_unanswered;
    struct tb_wbuf out;
    size_t out_off;
    uint8_t *in;
    size_t in_len, in_cap;

    /* Session. */
    int64_t session_id;
    /* A read-write server answered once: until then session_id is a
     * read-only server's, which no other server knows (sent as 0). */
    int seen_rw;
    uint8_t passwd[16];
    int timeout;      /* negotiated, ms */
    int64_t last_zxid;
    int64_t last_heard; /* last frame from a server in this session */
    int32_t next_xid;

    /* Requests and watches. */
    struct tb_queue outq, pendq, doneq, auths;
    struct tb_queue *buckets;
    size_t nbuckets, nwatchers;

    /* Closing. */
    int closing;       /* no new requests */
    int64_t close_deadline;
    struct req *close_req;
    int closed;        /* finish_close ran */
    unsigned conn_gen; /* bumped whenever a socket is closed */
    uint64_t rng;
    pthread_cond_t done_cv; /* a sync call's result or a state arrived */
    int close_requested;
    int cb_depth;      /* > 0 while user callbacks run */
    int free_pending;  /* closed from a callback: free when depth is 0 */
};

/* ---- logging ---- */
void tb__log(struct tb_client *c, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- hosts and paths (hosts.c) ---- */
int tb__hosts_parse(struct tb_client *c, const char *spec);
void tb__hosts_free(struct tb_client *c);
void tb__hosts_shuffle(struct tb_client *c, uint64_t seed);
/* Validates a client path (`seq`: a sequential create's prefix, which may
 * end with '/') and gives the server's path: a view of `path` itself, or
 * chroot + path built in `scratch`. */
int tb__path_server(struct tb_client *c, const char *path, int seq,
                    struct tb_wbuf *scratch, struct tb_str *out);
/* A server path as the application sees it (a suffix of `p`, or "/"). */
const char *tb__path_strip(struct tb_client *c, const char *p, size_t len,
                           size_t *out_len);

/* ---- watch registry (watch.c) ---- */
struct watcher *tb__watcher_new(struct tb_str server_path, tb_watch_cb cb,
                                void *data, int set_kind);
void tb__watch_register(struct tb_client *c, struct watcher *w);
/* Queues every watcher the event triggers; < 0 on allocation failure. */
int tb__watch_dispatch(struct tb_client *c, int type, struct tb_str path);
/* Watchers that tb_remove_watches with `rm` would remove, as things will
 * be when its turn comes: the requests outstanding (outq, pendq and their
 * `after` queues) set their watches and make their removals first.
 * *others gets a bit per wire class of the watchers then left on `path`
 * that `rm` does not match. */
int tb__watch_count(struct tb_client *c, struct tb_str path,
                    const struct rm_spec *rm, int *others);
int tb__watch_remove(struct tb_client *c, struct tb_str path,
                     const struct rm_spec *rm);
/* Ends every watcher: final call with TB_EVENT_NONE and `rc`. */
void tb__watch_end_all(struct tb_client *c, int rc);
/* Appends the setWatches requests re-registering everything to `out`. */
int tb__watch_encode_set(struct tb_client *c, struct tb_wbuf *out,
                         size_t batch_bytes, int *nreq);
void tb__watch_free_all(struct tb_client *c);

/* ---- requests (req.c) ---- */
struct req *tb__req_new(struct tb_client *c, int32_t op, int kind);
void tb__req_free(struct req *r);
/* The next xid of a request (a SASL token's too). */
int32_t tb__next_xid(struct tb_client *c);
/* Starts the request's frame (header with a fresh xid) in r->fw. */
void tb__req_begin(struct tb_client *c, struct req *r);
/* Ends the frame and queues the request; on error frees it. */
int tb__req_submit(struct tb_client *c, struct req *r);
/* The request got its reply (or failed with rc != 0). */
void tb__req_complete(struct tb_client *c, struct req *r, int rc,
                      const uint8_t *body, size_t len);
void tb__req_fail_queue(struct tb_client *c, struct tb_queue *q, int rc);
/* Completes a request the server is not told of in its turn: right after
 * the last request outstanding, at once if there is none. */
void tb__req_after(struct tb_client *c, struct req *r);
int tb__submit_check(struct tb_client *c);

/* ---- encoding helpers (ops.c) ---- */
int tb__encode_acl(struct tb_wbuf *w, const struct tb_acl_list *acl,
                   struct tb_vec *out);
int tb__create_opcode(int mode, int64_t ttl_ms);

/* ---- done queue (fire.c) ---- */
void tb__push_done(struct tb_client *c, struct item *it);
void tb__push_state(struct tb_client *c, int state);
/* Runs every queued callback, with the lock released around each. */
void tb__fire_done(struct tb_client *c);
void tb__fire_req(struct tb_client *c, struct req *r);
/* 0 if a successful reply body of that kind decodes. */
int tb__reply_check(int kind, const uint8_t *p, size_t n);
void tb__multi_fire(struct tb_client *c, struct req *r, struct tb_rd *rd);
int tb__decode_strings(struct tb_vec v, struct tb_client *c, int strip,
                       struct tb_strings *out);

/* ---- connection and session (conn.c, session.c) ---- */
void tb__start(struct tb_client *c);
void tb__process(struct tb_client *c, int events);
void tb__interest(struct tb_client *c, struct tb_interest *in);
/* Sends queued requests if the connection is open; tries to write. */
void tb__flush(struct tb_client *c);
void tb__conn_close_fd(struct tb_client *c);
/* ---- a host's name looked up off the handle's lock (lookup.c) ---- */
struct tb_lookup;
int tb__lookup_start(const struct host *h, struct tb_lookup **out);
int tb__lookup_fd(const struct tb_lookup *l);
int tb__lookup_done(struct tb_lookup *l);
/* Once done: *ai (the caller's to free) or *err (getaddrinfo's); the
 * lookup is freed, its descriptor closed. */
void tb__lookup_take(struct tb_lookup *l, struct addrinfo **ai, int *err);
/* The handle waits no more: the lookup is freed once done. */
void tb__lookup_abandon(struct tb_lookup *l);
void tb__conn_lost(struct tb_client *c, int rc, const char *why);
void tb__conn_failed(struct tb_client *c, const char *why);
/* The same, reporting `err` (TB_ETLS, TB_ETIMEDOUT; tb__conn_failed:
 * TB_ECONNECTIONLOSS) to tb_client_last_error. */
void tb__conn_fail(struct tb_client *c, int err, const char *why);
void tb__next_attempt(struct tb_client *c);
/* Appends the credential's auth packet to the output. */
void tb__send_auth(struct tb_client *c, struct auth *a);
/* The session is usable on this connection: credentials, watches, state,
 * queued requests. */
void tb__session_open(struct tb_client *c);

/* ---- SASL login (sasl.c) ---- */
/* Starts the login after the handshake; the connection stays in
 * PH_HANDSHAKE until it completes.  0, or an error (nothing started). */
int tb__sasl_start(struct tb_client *c);
/* A frame while the login is on its way: its next step. */
void tb__sasl_on_frame(struct tb_client *c, const uint8_t *p, size_t n);
/* Drops the login's state (a lost connection, the end of the login). */
void tb__sasl_end(struct tb_client *c);

/* ---- TLS (tls.c) ---- */
/* Builds the handle's context from the options (tb_client_init): 0 (also
 * when TLS is off), TB_EINVAL, TB_ENOMEM, or TB_ETLS (logged) when a file
 * cannot be used. */
int tb__tls_init(struct tb_client *c, const struct tb_options *o);
void tb__tls_free(struct tb_client *c);
/* A TLS client on c->fd for the current host, with the context built
 * again first if a file changed: 0, TB_ENOMEM or TB_ETLS. */
int tb__tls_start(struct tb_client *c);
/* One step of the handshake: 0 done, TB_EAGAIN, or TB_ETLS (tb__tls_why). */
int tb__tls_handshake(struct tb_client *c);
/* As send/recv: bytes, 0 (recv: closed by the peer), TB_EAGAIN, or
 * TB_ETLS / TB_EIO (tb__tls_why). */
ssize_t tb__tls_send(struct tb_client *c, const void *p, size_t n);
ssize_t tb__tls_recv(struct tb_client *c, void *p, size_t n);
/* The events to wait for, given those plain TCP would wait for. */
int tb__tls_events(struct tb_client *c, int events);
/* Whether reading may make progress after `events`. */
int tb__tls_read_on(struct tb_client *c, int events);
/* Plaintext already decrypted and not read yet. */
int tb__tls_pending(struct tb_client *c);
const char *tb__tls_why(struct tb_client *c);
/* Frees the connection's TLS (close_notify if it is healthy). */
void tb__tls_end(struct tb_client *c);

void tb__on_handshake(struct tb_client *c, const struct tb_connect_resp *r);
void tb__on_frame(struct tb_client *c, const uint8_t *p, size_t n);
void tb__terminate(struct tb_client *c, int state, int rc);
void tb__begin_close(struct tb_client *c);
void tb__finish_close(struct tb_client *c);
void tb__set_state(struct tb_client *c, int state);
void tb__timers(struct tb_client *c, int64_t now);

/* ---- drivers (driver.c) ---- */
/* Call at the end of every public entry point, lock held. */
void tb__changed(struct tb_client *c);
/* Lock held; drives until *flag != 0 or deadline (ms, -1: none).  Returns
 * 0 or TB_ETIMEDOUT.  Used by sync calls and close in loop mode. */
int tb__wait(struct tb_client *c, int (*ready)(struct tb_client *, void *),
             void *arg, int64_t deadline);
int tb__on_io_thread(struct tb_client *c);
void tb__client_free(struct tb_client *c);
/* The end of a synchronous call or wait, c->mu held (and released here):
 * one sync waiter less, and the handle freed if a callback the wait ran
 * closed it in loop mode. */
void tb__sync_leave(struct tb_client *c);

#endif
