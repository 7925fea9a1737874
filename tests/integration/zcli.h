/* Helpers around the official ZooKeeper C client (libzookeeper_mt) for the integration tests:
 * connect and wait for a state, collect watch events in a queue, and wait for them with bounds.
 *
 * Why a queue plus a barrier: the multi-threaded C client completes synchronous calls on its I/O
 * thread but delivers watch events on its completion thread, so an event the server sent before
 * a reply may reach the watcher after the sync call returned.  zc_barrier() sends an async
 * request and waits for its completion; the completion thread handles events and async
 * completions in arrival order, so once the barrier completes every event the server sent
 * before the barrier's reply is in the queue. */
#ifndef TB_ZCLI_H
#define TB_ZCLI_H

#include <pthread.h>
#include <stdint.h>
#include <zookeeper/zookeeper.h>

#define ZC_MAXEV 256

struct zc_event {
    int type;  /* ZOO_CREATED_EVENT ... */
    int state; /* connection state reported with it */
    int tag;   /* 0 for the default watcher, else the zc_wctx tag */
    char path[512];
};

struct zc {
    zhandle_t *zh;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int state; /* last session state seen by the default watcher */
    int head, count;
    struct zc_event ev[ZC_MAXEV];
};

/* Context for a per-call watcher (zoo_wexists etc.): events land in `c`'s queue with `tag`. */
struct zc_wctx {
    struct zc *c;
    int tag;
};

/* Library log level from $ZKC_LOG (error, warn, info, debug); default: silent. */
void zc_quiet(void);

/* Open a session to hostport and wait (up to wait_ms) for it to be connected or to fail.
 * Returns the state reached: ZOO_CONNECTED_STATE on success, ZOO_EXPIRED_SESSION_STATE or
 * ZOO_AUTH_FAILED_STATE on rejection, 0 on timeout.  The handle is kept either way; call
 * zc_close(). */
int zc_open(struct zc *c, const char *hostport, int timeout_ms, const clientid_t *cid,
            int wait_ms);
void zc_close(struct zc *c);

/* Wait until the session state equals `state` (returns 1) or wait_ms passes (0). */
int zc_wait_state(struct zc *c, int state, int wait_ms);

/* The watcher to pass to zoo_w* calls with a struct zc_wctx as context. */
void zc_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx);

/* Pop the next node event (session events are not queued); waits up to wait_ms.  1 or 0. */
int zc_next_event(struct zc *c, int wait_ms, struct zc_event *out);
/* Number of queued events. */
int zc_pending(struct zc *c);
/* Round-trip an async request so that all events sent before it are queued (see above).
 * Returns ZOK or the error. */
int zc_barrier(struct zc *c);

/* zoo_async (sync op) made synchronous: returns rc, copies the echoed path. */
int zc_sync(struct zc *c, const char *path, char *out, size_t outlen);
/* zoo_add_auth made synchronous: returns the completion's rc (ZAUTHFAILED ...). */
int zc_add_auth(struct zc *c, const char *scheme, const char *cred);

const char *zc_event_name(int type);

#endif
