/* libtumbler: a C client for Tumbler and Apache ZooKeeper servers.
 *
 * The handle is a threadless state machine over one TCP connection.  It is
 * driven in one of two ways, chosen by the first call that drives it:
 *
 *  - a background I/O thread the library runs (tb_client_start).  Any thread
 *    may then call any function; every callback runs on that I/O thread.
 *  - the application's own event loop: the plain descriptor + timeout
 *    interface (tb_client_interest / tb_client_process), or the header-only
 *    libuv adapter <tumbler/adapters/libuv.h>, built on tb_client_set_ev.
 *    All calls and all callbacks then happen on the loop's thread.
 *
 * Contract of every asynchronous operation (tb_create, tb_get_data, ...):
 *  - it returns 0 and its callback then fires exactly once, or it returns a
 *    negative TB_E* code and the callback never fires;
 *  - completions arrive in request order, interleaved with watch events in
 *    the order the server sent them;
 *  - a request outstanding when the connection breaks completes with
 *    TB_ECONNECTIONLOSS (it may or may not have been applied); one still
 *    unsent is sent on the next connection, unless that connection attempt
 *    fails, in which case it too completes with TB_ECONNECTIONLOSS;
 *  - on session expiry everything outstanding completes with
 *    TB_ESESSIONEXPIRED, and on tb_client_close with TB_ECLOSING;
 *  - everything a callback receives by pointer is borrowed: valid only until
 *    the callback returns.
 *
 * Every synchronous form (tb_*_sync) is the asynchronous call plus a wait.
 * With the I/O thread it may be called from any thread, including from a
 * callback; in loop mode it drives the connection itself until the reply is
 * in, so it must be called from the loop's thread.
 *
 * Paths are NUL-terminated, absolute, validated locally as ZooKeeper does,
 * and relative to the chroot of the connection string; paths handed back
 * (created names, events, ephemerals) are relative to the chroot too. */
#ifndef TUMBLER_TUMBLER_H
#define TUMBLER_TUMBLER_H

#include <stddef.h>
#include <stdint.h>

#include "tumbler/errors.h"
#include "tumbler/wire.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tb_client;

/* ------------------------------------------------------------------ */
/* Memory                                                              */

/* The allocator every allocation of the library goes through.  Set it once,
 * before any other call of the library, or never (the C library's malloc
 * is the default).  Passing NULL restores the default.  (The codec's
 * growable encode buffers still use the C library's realloc.) */
struct tb_heap {
    void *data;
    void *(*malloc)(void *data, size_t n);
    void (*free)(void *data, void *p);
};
TB_API void tb_heap_set(const struct tb_heap *h);
/* Frees memory the library handed to the caller (sync results). */
TB_API void tb_free(void *p);

/* ------------------------------------------------------------------ */
/* Results                                                             */

/* A list of strings; `v[i]` is NUL-terminated. */
struct tb_strings {
    int32_t count;
    char **v;
};
TB_API void tb_strings_free(struct tb_strings *s); /* sync results only */

struct tb_acl_entry {
    int32_t perms; /* TB_PERM_* bits */
    const char *scheme;
    const char *id;
};
struct tb_acl_list {
    int32_t count;
    const struct tb_acl_entry *v;
};
TB_API void tb_acl_list_free(struct tb_acl_list *a); /* sync results only */

/* world:anyone ALL, auth: ALL (the creator's ids), world:anyone READ. */
TB_API extern const struct tb_acl_list tb_open_acl_unsafe;
TB_API extern const struct tb_acl_list tb_creator_all_acl;
TB_API extern const struct tb_acl_list tb_read_acl_unsafe;

/* The id of a digest ACL entry for the credentials "user:password":
 * "user:" + base64(sha1("user:password")).  Writes it NUL-terminated to
 * `out` (the user's length + 30 bytes suffice); returns its length or
 * TB_EINVAL. */
TB_API int tb_digest_acl_id(const char *user_password, char *out,
                            size_t cap);

/* One identity of the connection, as whoAmI reports it. */
struct tb_client_info {
    const char *scheme;
    const char *user;
};

/* ------------------------------------------------------------------ */
/* The handle                                                          */

enum tb_session_state {
    TB_SESSION_CONNECTING = 1, /* no session yet; trying hosts */
    TB_SESSION_CONNECTED = 2,  /* session established on a server */
    TB_SESSION_READONLY = 3,   /* connected to a read-only server */
    TB_SESSION_SUSPENDED = 4,  /* disconnected; the session may still live */
    TB_SESSION_EXPIRED = 5,    /* the session is gone (terminal until
                                  tb_client_new_session) */
    TB_SESSION_AUTH_FAILED = 6, /* a credential was refused (terminal) */
    TB_SESSION_CLOSED = 7,      /* tb_client_close ran (last callback) */
};
TB_API const char *tb_session_state_name(int state);
/* ZooKeeper's name of an event type (TB_EVENT_*): "NodeCreated",
 * "NodeDataChanged", "None", "DataWatchRemoved" ...; "unknown" for any
 * other value.  Static storage. */
TB_API const char *tb_event_name(int type);

enum tb_log_level { TB_LOG_ERROR, TB_LOG_WARN, TB_LOG_INFO, TB_LOG_DEBUG };

/* A watch event.  `path` is relative to the chroot and borrowed.  For a
 * node event `type` is TB_EVENT_CREATED..CHILDREN_CHANGED and `rc` is 0.
 * A watch that ends without a node event gets one last call with
 * TB_EVENT_NONE and `rc` = TB_ECLOSING, TB_ESESSIONEXPIRED or
 * TB_EAUTHFAILED, or with TB_EVENT_*_WATCH_REMOVED after
 * tb_remove_watches.  `final` is 1 on the last call a watcher gets: a
 * one-shot watcher's only call, a persistent watcher's end. */
struct tb_event {
    int type;
    int rc;
    int final;
    const char *path;
};

typedef void (*tb_watch_cb)(struct tb_client *c, const struct tb_event *ev,
                            void *data);
typedef void (*tb_state_cb)(struct tb_client *c, int state, void *data);
typedef void (*tb_log_cb)(void *data, int level, const char *msg);

/* Pass as the watcher of any call to route its events to the options'
 * default watcher `watch_cb` (with the options' `data`). */
TB_API void tb_watch_default(struct tb_client *c, const struct tb_event *ev,
                             void *data);

/* Everything a handle is configured with.  Zero means the default. */
struct tb_options {
    /* Required.  "host:port,host:port/chroot"; the port defaults to 2181,
     * IPv6 hosts are bracketed ("[::1]:2181").  Hosts are shuffled. */
    const char *hosts;
    int session_timeout_ms; /* requested; default 10000; the server clamps */
    /* per host and attempt; default the session timeout (the granted one
     * once a server answered) / (3 x hosts), >= 1000 */
    int connect_timeout_ms;
    int close_timeout_ms;   /* wait for closeSession's reply; default 1000 */
    int readonly_allowed;   /* accept read-only servers */
    /* Resume an existing session (0: a new one); `session_passwd` is 16
     * bytes, as tb_client_session returned them.  One a read-only server
     * made is known to no other server: it is refused as expired. */
    int64_t session_id;
    const unsigned char *session_passwd;
    size_t max_frame_bytes;  /* largest reply accepted; default 4 MiB */
    size_t max_request_bytes; /* largest request sent; default 1048575 */
    /* NULL: silent.  Called with the handle's lock held, from any thread
     * that drives or calls the handle: it must not call the library. */
    tb_log_cb log_cb;
    int log_level;           /* messages up to this level are passed */
    tb_state_cb state_cb;    /* every state change, in order */
    tb_watch_cb watch_cb;    /* the default watcher (tb_watch_default) */
    void *data;              /* handed to log_cb, state_cb and watch_cb */
    /* A SASL login (DIGEST-MD5, as ZooKeeper's clients make it to a server
     * with a JAAS Server section), made on every connection before any
     * request; the session is then known as sasl:<user>.  NULL: none.
     * Both are copied.  A refused login ends the session: AUTH_FAILED. */
    const char *sasl_user;
    const char *sasl_password;
    /* TLS on every connection (1), as to ZooKeeper's secureClientPort; the
     * handshake comes first, within connect_timeout_ms.  A handshake that
     * fails, or a server certificate that does not verify, fails the
     * attempt like a refused connection: the next host is tried, and
     * tb_client_last_error says TB_ETLS and why.  The files are PEM, read
     * by tb_client_init (TB_ETLS, logged, if one cannot be used), and again
     * before a connection attempt if one changed on disk (a renewal; if
     * they cannot be used then, a warning and the old ones stay):
     * `tls_ca_file` the CAs that sign the servers' certificates (NULL: the
     * system's trust store); `tls_cert_file` the client's certificate
     * chain (NULL: none; a ZooKeeper server with ssl.clientAuth=need, its
     * default, requires one), `tls_key_file` its key (NULL: in the
     * certificate file).  The server's certificate must name the host of
     * the connection string (a DNS name, or an IP address as written),
     * unless `tls_no_verify_host` is set; its chain is always verified.
     * The session is then also known by the certificate, as x509:<DN>. */
    int tls;
    const char *tls_ca_file;
    const char *tls_cert_file;
    const char *tls_key_file;
    int tls_no_verify_host;
};

/* Creates a handle from `o` (copied; nothing of it is kept).  No I/O yet:
 * the handle starts connecting when a driver first runs it.  Returns 0 and
 * *out, or TB_EINVAL (bad host string or chroot) / TB_ENOMEM. */
TB_API int tb_client_init(struct tb_client **out, const struct tb_options *o);

/* Starts the background I/O thread that drives the handle.  Call once,
 * right after tb_client_init, when not using an event loop. */
TB_API int tb_client_start(struct tb_client *c);

/* Closes the session and frees the handle.  If connected, sends
 * closeSession and waits up to close_timeout_ms for its reply (replies to
 * requests sent before it are delivered normally).  Then every request
 * still outstanding completes with TB_ECLOSING, every watcher gets its
 * final call with TB_ECLOSING, and the state callback sees
 * TB_SESSION_CLOSED, in that order.  Returns once all that has run (with
 * the I/O thread: on it).  May be called from any thread and from inside a
 * callback; the handle is then freed when the callback returns.  `c` must
 * not be used afterwards. */
TB_API void tb_client_close(struct tb_client *c);

/* After TB_SESSION_EXPIRED: forget the session and start a new one on the
 * same handle (state TB_SESSION_CONNECTING).  Credentials added with
 * tb_add_auth are kept; watches are not (they ended at expiry).
 * TB_EINVAL in any other state. */
TB_API int tb_client_new_session(struct tb_client *c);

TB_API int tb_client_state(struct tb_client *c);
/* The session id (0 before the first handshake) and, if `passwd` is not
 * NULL, its 16-byte password. */
TB_API int64_t tb_client_session(struct tb_client *c, unsigned char *passwd);
/* The timeout the server granted (0 before the first handshake). */
TB_API int tb_client_session_timeout(struct tb_client *c);
TB_API void *tb_client_data(struct tb_client *c);
/* Why the most recent connection attempt failed, or the last connection
 * broke (0 if none did yet): TB_ETLS (the TLS handshake failed or the
 * server's certificate was not accepted), TB_ETIMEDOUT (no answer within
 * connect_timeout_ms), or TB_ECONNECTIONLOSS (refused, closed, cut,
 * unresolvable ...).  `why` (NULL: not wanted) gets "HOST:PORT: reason",
 * as the log said it, truncated to `cap`. */
TB_API int tb_client_last_error(struct tb_client *c, char *why, size_t cap);

/* Waits until the state is CONNECTED or READONLY: 0; TB_ETIMEDOUT after
 * `timeout_ms` (< 0: no limit); or the terminal state's error
 * (TB_ESESSIONEXPIRED, TB_EAUTHFAILED, TB_ECLOSING).  A synchronous call:
 * see above for which thread may call it. */
TB_API int tb_client_wait_connected(struct tb_client *c, int timeout_ms);

/* ---- driving the handle from the application's loop ---------------- */

enum { TB_EV_READ = 1, TB_EV_WRITE = 2 };

/* What the handle waits for: `fd` (-1: no socket now) for `events`, and a
 * call to tb_client_process within `timeout_ms` (-1: no deadline). */
struct tb_interest {
    int fd;
    int events;
    int timeout_ms;
};
TB_API int tb_client_interest(struct tb_client *c, struct tb_interest *out);
/* Runs the handle after the loop saw `events` (TB_EV_*, 0 on a timeout) on
 * the fd of the last interest.  Callbacks fire from inside this call.  Then
 * ask for the interest again. */
TB_API int tb_client_process(struct tb_client *c, int events);

/* Push form of the interest, for loops that keep registrations (libuv):
 * `update` is called, on the loop's thread, whenever the interest changes,
 * and with fd -1 before the handle closes a socket; `detach` once when the
 * handle is freed.  Set it before the first drive. */
struct tb_ev {
    void *data;
    void (*update)(void *data, const struct tb_interest *in);
    void (*detach)(void *data);
};
TB_API int tb_client_set_ev(struct tb_client *c, const struct tb_ev *ev);

/* ------------------------------------------------------------------ */
/* Operations: asynchronous forms.                                     */

typedef void (*tb_void_cb)(struct tb_client *c, int rc, void *data);
/* `stat` is NULL unless rc == 0. */
typedef void (*tb_stat_cb)(struct tb_client *c, int rc,
                           const struct tb_stat *stat, void *data);
/* `path` is the created name (with any sequential suffix). */
typedef void (*tb_create_cb)(struct tb_client *c, int rc, const char *path,
                             const struct tb_stat *stat, void *data);
/* `value` is NULL for a node whose data is null. */
typedef void (*tb_data_cb)(struct tb_client *c, int rc, const void *value,
                           size_t len, const struct tb_stat *stat,
                           void *data);
/* `stat` is NULL for tb_get_children and tb_get_ephemerals. */
typedef void (*tb_strings_cb)(struct tb_client *c, int rc,
                              const struct tb_strings *v,
                              const struct tb_stat *stat, void *data);
typedef void (*tb_acl_cb)(struct tb_client *c, int rc,
                          const struct tb_acl_list *acl,
                          const struct tb_stat *stat, void *data);
typedef void (*tb_count_cb)(struct tb_client *c, int rc, int32_t count,
                            void *data);
typedef void (*tb_whoami_cb)(struct tb_client *c, int rc,
                             const struct tb_client_info *v, int32_t count,
                             void *data);

/* Watchers.  Calls that can set a watch take `watch` (NULL: none) and
 * `wdata`.  The watch is set only if the call succeeds (tb_exists: also
 * when it fails with TB_ENONODE); it then fires exactly once (persistent
 * watches: until their final call, see struct tb_event), on the thread
 * callbacks run on.  Watches survive reconnects (re-registered with
 * setWatches) and end on expiry and close. */

/* Creates `path` (mode: enum tb_create_mode).  `value` NULL with len 0 is a
 * null data buffer.  `acl` NULL means tb_open_acl_unsafe.  `ttl_ms` is for
 * the TTL modes only (1 .. 2^40-1), else 0.  Sent as create2 (containers:
 * createContainer, TTL modes: createTTL), so `stat` is always there. */
TB_API int tb_create(struct tb_client *c, const char *path, const void *value,
                     size_t len, const struct tb_acl_list *acl, int mode,
                     int64_t ttl_ms, tb_create_cb cb, void *data);
/* `version` -1 deletes any version. */
TB_API int tb_delete(struct tb_client *c, const char *path, int32_t version,
                     tb_void_cb cb, void *data);
TB_API int tb_exists(struct tb_client *c, const char *path, tb_watch_cb watch,
                     void *wdata, tb_stat_cb cb, void *data);
TB_API int tb_get_data(struct tb_client *c, const char *path,
                       tb_watch_cb watch, void *wdata, tb_data_cb cb,
                       void *data);
TB_API int tb_set_data(struct tb_client *c, const char *path,
                       const void *value, size_t len, int32_t version,
                       tb_stat_cb cb, void *data);
/* Children names, in the server's order (unsorted). */
TB_API int tb_get_children(struct tb_client *c, const char *path,
                           tb_watch_cb watch, void *wdata, tb_strings_cb cb,
                           void *data);
/* The same, with the parent's stat. */
TB_API int tb_get_children2(struct tb_client *c, const char *path,
                            tb_watch_cb watch, void *wdata, tb_strings_cb cb,
                            void *data);
/* Makes the server this handle is connected to catch up with the leader. */
TB_API int tb_sync(struct tb_client *c, const char *path, tb_void_cb cb,
                   void *data);
TB_API int tb_get_acl(struct tb_client *c, const char *path, tb_acl_cb cb,
                      void *data);
/* `version` is the expected aversion, -1 for any. */
TB_API int tb_set_acl(struct tb_client *c, const char *path,
                      const struct tb_acl_list *acl, int32_t version,
                      tb_stat_cb cb, void *data);
/* Adds a credential ("digest", "user:password").  It is kept and replayed
 * after every reconnect.  The callback reports the server's first answer,
 * or TB_ECONNECTIONLOSS if the connection it was sent on, or the attempt
 * it waited for, failed before any answer (the credential stays, replayed
 * on the next connection); a refused credential moves the handle to
 * TB_SESSION_AUTH_FAILED. */
TB_API int tb_add_auth(struct tb_client *c, const char *scheme,
                       const void *cred, size_t len, tb_void_cb cb,
                       void *data);
/* A persistent watch (mode: enum tb_add_watch_mode) on `path`, which need
 * not exist.  `watch` is called for every event until its final call. */
TB_API int tb_add_watch(struct tb_client *c, const char *path, int mode,
                        tb_watch_cb watch, void *wdata, tb_void_cb cb,
                        void *data);
/* Removes this handle's watchers of `type` (enum tb_watcher_type) on
 * `path`: those registered with (watch, wdata), or all if `watch` is NULL.
 * The server is told only when no watcher of that kind remains locally
 * (counting those that earlier requests still unanswered will register),
 * and of a persistent kind only when no other watch is set on `path` (a
 * 3.8 server cannot end a persistent watch alone; its events then find no
 * watcher, and a reconnect does not set it again); a removal it is not
 * told of still completes in request order.  Each removed watcher gets
 * its final call (TB_EVENT_*_WATCH_REMOVED) just before `cb`.
 * TB_ENOWATCHER (returned) if none matches, counting those that earlier
 * requests still unanswered will register.  With `local` set, watchers
 * are removed even if the server cannot be told. */
TB_API int tb_remove_watches(struct tb_client *c, const char *path, int type,
                             tb_watch_cb watch, void *wdata, int local,
                             tb_void_cb cb, void *data);
/* The session's ephemeral nodes whose path starts with `prefix`. */
TB_API int tb_get_ephemerals(struct tb_client *c, const char *prefix,
                             tb_strings_cb cb, void *data);
/* The number of all descendants of `path`. */
TB_API int tb_get_all_children_number(struct tb_client *c, const char *path,
                                      tb_count_cb cb, void *data);
TB_API int tb_whoami(struct tb_client *c, tb_whoami_cb cb, void *data);
/* The ensemble's members: the data of /zookeeper/config (ZooKeeper's
 * getConfig), whatever the handle's chroot.  One "server.N=..." line per
 * member, then "version=V", V the zxid (hex) of the change that made it
 * (0 before any). */
TB_API int tb_get_config(struct tb_client *c, tb_data_cb cb, void *data);
/* Changes the members at run time (ZooKeeper's reconfig: the servers need
 * reconfigEnabled=true, and the session the super user's credential).
 * Either `joining` (members to add or whose role changes, comma-separated
 * "server.N=HOST:QUORUMPORT:ELECTIONPORT[:participant|:observer][;[ADDR:]PORT]")
 * and `leaving` (ids to remove, comma-separated), or `members` (the whole
 * new list, as `joining`); NULL for none.  `from_config` is the version
 * the configuration must still have (TB_EBADVERSION otherwise), -1 for any.
 * The answer is the new configuration, as tb_get_config gives it. */
TB_API int tb_reconfig(struct tb_client *c, const char *joining,
                       const char *leaving, const char *members,
                       int64_t from_config, tb_data_cb cb, void *data);

/* ---- multi / multiRead --------------------------------------------- */

/* A builder.  Either only writes (create, delete, set, check: one atomic
 * multi) or only reads (get_data, get_children: a multiRead); mixing is
 * refused with TB_EBADARGUMENTS.  Adding copies its arguments. */
struct tb_multi;
TB_API struct tb_multi *tb_multi_new(void);
TB_API void tb_multi_free(struct tb_multi *m);
TB_API int tb_multi_create(struct tb_multi *m, const char *path,
                           const void *value, size_t len,
                           const struct tb_acl_list *acl, int mode,
                           int64_t ttl_ms);
TB_API int tb_multi_delete(struct tb_multi *m, const char *path,
                           int32_t version);
TB_API int tb_multi_set_data(struct tb_multi *m, const char *path,
                             const void *value, size_t len, int32_t version);
TB_API int tb_multi_check(struct tb_multi *m, const char *path,
                          int32_t version);
TB_API int tb_multi_get_data(struct tb_multi *m, const char *path);
TB_API int tb_multi_get_children(struct tb_multi *m, const char *path);
TB_API int tb_multi_count(const struct tb_multi *m);

/* One sub-operation's result.  `op` is the TB_OP-style opcode the server
 * reported (1 create, 2 delete, 4 getData, 5 setData, 8 getChildren,
 * 13 check, 15 create2; -1 for an error).  Fields not produced by that op
 * are NULL / 0. */
struct tb_op_result {
    int op;
    int rc; /* 0, the op's error, TB_ERUNTIMEINCONSISTENCY (not executed)
               or 0 for an op rolled back by a later failure */
    const char *path;           /* create */
    const struct tb_stat *stat; /* create2, setData, getData */
    const void *value;          /* getData */
    size_t len;
    const struct tb_strings *children; /* getChildren */
};
/* `rc` is 0 when every write applied, else the error of the op that failed
 * (a multi applies all or nothing); for a multiRead, 0 unless the request
 * as a whole failed: look at each result. */
typedef void (*tb_multi_cb)(struct tb_client *c, int rc,
                            const struct tb_op_result *results, int count,
                            void *data);
/* Sends the builder's ops; `m` may be freed as soon as this returns. */
TB_API int tb_multi_exec(struct tb_client *c, const struct tb_multi *m,
                         tb_multi_cb cb, void *data);

/* ------------------------------------------------------------------ */
/* Operations: synchronous forms.  Out-parameters may be NULL.  Owned
 * results are freed with tb_free / tb_strings_free / tb_acl_list_free.  */

/* The created path is written to `path_out` (NUL-terminated, truncated to
 * `cap`). */
TB_API int tb_create_sync(struct tb_client *c, const char *path,
                          const void *value, size_t len,
                          const struct tb_acl_list *acl, int mode,
                          int64_t ttl_ms, char *path_out, size_t cap,
                          struct tb_stat *stat);
TB_API int tb_delete_sync(struct tb_client *c, const char *path,
                          int32_t version);
TB_API int tb_exists_sync(struct tb_client *c, const char *path,
                          tb_watch_cb watch, void *wdata,
                          struct tb_stat *stat);
/* *value is owned (tb_free), NULL for null data; one spare NUL byte
 * follows its *len bytes. */
TB_API int tb_get_data_sync(struct tb_client *c, const char *path,
                            tb_watch_cb watch, void *wdata, char **value,
                            size_t *len, struct tb_stat *stat);
TB_API int tb_set_data_sync(struct tb_client *c, const char *path,
                            const void *value, size_t len, int32_t version,
                            struct tb_stat *stat);
TB_API int tb_get_children_sync(struct tb_client *c, const char *path,
                                tb_watch_cb watch, void *wdata,
                                struct tb_strings *out);
TB_API int tb_get_children2_sync(struct tb_client *c, const char *path,
                                 tb_watch_cb watch, void *wdata,
                                 struct tb_strings *out,
                                 struct tb_stat *stat);
TB_API int tb_sync_sync(struct tb_client *c, const char *path);
TB_API int tb_get_acl_sync(struct tb_client *c, const char *path,
                           struct tb_acl_list *out, struct tb_stat *stat);
TB_API int tb_set_acl_sync(struct tb_client *c, const char *path,
                           const struct tb_acl_list *acl, int32_t version,
                           struct tb_stat *stat);
TB_API int tb_add_auth_sync(struct tb_client *c, const char *scheme,
                            const void *cred, size_t len);
TB_API int tb_add_watch_sync(struct tb_client *c, const char *path, int mode,
                             tb_watch_cb watch, void *wdata);
TB_API int tb_remove_watches_sync(struct tb_client *c, const char *path,
                                  int type, tb_watch_cb watch, void *wdata,
                                  int local);
TB_API int tb_get_ephemerals_sync(struct tb_client *c, const char *prefix,
                                  struct tb_strings *out);
TB_API int tb_get_all_children_number_sync(struct tb_client *c,
                                           const char *path, int32_t *count);
/* `out` is a list of "scheme:user" strings. */
TB_API int tb_whoami_sync(struct tb_client *c, struct tb_strings *out);
/* *value as tb_get_data_sync gives it. */
TB_API int tb_get_config_sync(struct tb_client *c, char **value, size_t *len,
                              struct tb_stat *stat);
TB_API int tb_reconfig_sync(struct tb_client *c, const char *joining,
                            const char *leaving, const char *members,
                            int64_t from_config, char **value, size_t *len,
                            struct tb_stat *stat);

/* Results of a synchronous multi, owned by the caller. */
struct tb_multi_results {
    int count;
    struct tb_op_result *v;
};
TB_API int tb_multi_exec_sync(struct tb_client *c, const struct tb_multi *m,
                              struct tb_multi_results *out);
TB_API void tb_multi_results_free(struct tb_multi_results *r);

#ifdef __cplusplus
}
#endif
#endif
