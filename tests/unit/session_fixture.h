/* The session tests' server (test_session.c, test_session_conn.c): a
 * struct tbd whose clock the test sets, with the real fsm and replicated
 * log (in a temporary directory) behind it, and no sockets.  The hooks are
 * main.c's, reduced: session opened/closed go to session.c, results are
 * recorded and routed by proc_result as in tumblerd; on a restart every
 * session in the fsm is opened again by session_reload, as in main.c.
 * A carrier of the test's own serves clients through struct proc_client's
 * ops alone. */
#ifndef TB_TEST_SESSION_FIXTURE_H
#define TB_TEST_SESSION_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "server/config/config.h"
#include "server/proc/proc.h"
#include "server/server.h"

#define T0      1000000u
#define WALL    1700000000000
#define WAIT_MS 30000

struct sfx {
    struct tbd s;
    struct tb_config cfg;
    uv_loop_t loop;
    char dir[256];
    uint64_t now; /* the virtual monotonic clock */
    /* When set, the server reads `loop_now`, as tumblerd reads the loop's
     * cached time, brought to `now` only by a refresh. */
    int cached;
    uint64_t loop_now;
    int64_t wall; /* the virtual wall clock */
    int opened, closed, closes_applied;
    int64_t last_session; /* of the latest createSession's result */
    int64_t last_time;    /* the latest txn's time */
    int log_closed;
};

/* A carrier that is no socket: what proc sends is kept, frame by frame,
 * and closing does what conn_close does for proc (proc.h's contract). */
struct carrier {
    struct proc_client pc;
    struct tbd *s;
    struct tb_wbuf out; /* every frame sent, each with its length prefix */
    int frames, closes, resumes;
    /* Set: close_after_flush leaves the client open and closing, as a
     * socket with output unsent does (counted in `closing`). */
    int draining, closing;
};

/* Runs the loop until *n reaches want; 0 if WAIT_MS of real time pass. */
int run_until(struct sfx *f, const int *n, int want);
/* Opens the server on f->dir, as main.c does up to its ticker, at the
 * clock's present time. */
void start(struct sfx *f);
void stop(struct sfx *f);
int setup(void **state);
int teardown(void **state);
/* A createSession txn, as session_connect proposes it; returns its id. */
int64_t create_session(struct sfx *f, int32_t timeout);
const struct sess *tracked(struct sfx *f, int64_t id);
/* A tick at `now`; 1 if it proposed the close of `id`. */
int tick_at(struct sfx *f, uint64_t now, int64_t id);
/* The close the tick proposed is applied: the session is gone from the fsm
 * and from the deadlines. */
void assert_closed(struct sfx *f, int64_t id, int closes);
/* The k->frames-th frame sent (from 1): its payload, past the prefix. */
struct tb_rd nth_frame(struct carrier *k, int n);
/* Frame n of k is the reply to xid, with err; what follows its header. */
struct tb_rd reply_at(struct carrier *k, int n, int32_t xid, int err);
/* One request as proc_frame takes it: the header, then the record; what
 * proc_frame returns. */
int request(struct carrier *k, struct tb_wbuf *body, int32_t xid, int32_t type);
/* A client of the test's carrier, new, with id `id`. */
void carrier_init(struct sfx *f, struct carrier *k, uint64_t id);
/* carrier_init, then a session opened through proc's handshake. */
void carrier_open(struct sfx *f, struct carrier *k, uint64_t id);
void carrier_free(struct carrier *k);

#endif
