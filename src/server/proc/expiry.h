/* Session expiry's arithmetic, apart from the server: each session's
 * deadline, which sessions a tick finds past theirs, and how a late tick
 * moves the deadlines.
 *
 * Pure: no I/O, no clock, no log.  Time is passed in as monotonic
 * milliseconds, so a test drives it on virtual time (tests/unit/
 * test_expiry.c); session.c feeds it the server's clock (struct tbd_clock),
 * proposes the closes and logs.  Only the leader's ticks can close:
 * liveness is not replicated.  After a restart every session in the fsm is
 * opened again here with a fresh timeout (main.c); a new leader must do
 * the same.
 *
 * A session is due at the first tick at or after its deadline, whatever
 * the tick's phase: the ticker runs every half tickTime, so a session
 * expires between `timeout` and `timeout` + tickTime/2 after it was last
 * heard from (ZooKeeper's buckets: up to a whole tickTime). */
#ifndef TBD_EXPIRY_H
#define TBD_EXPIRY_H

#include <stdint.h>

#include "common/map.h"

/* Liveness of one session, known to the leader only: the replicated part
 * (timeout, password, ephemerals) lives in the fsm.  At all times
 * deadline_ms = last touch + timeout + the stalls seen since, and `closing`
 * is set once a close txn has been proposed (by a tick, by its client) so
 * it is proposed once, and the session is neither resumed nor served any
 * more (session.c, proc.c). */
struct sess {
    int64_t id;
    int32_t timeout_ms;
    uint64_t deadline_ms;
    int closing;
};

/* Tracks session `id` in `m` (id -> struct sess) from `now`, or starts it
 * again: a fresh deadline, and no close proposed.  NULL if out of memory
 * (the session is then not tracked and cannot expire here). */
struct sess *expiry_open(struct tb_map *m, int64_t id, int32_t timeout_ms,
                         uint64_t now);
/* The session was heard from at `now`; unknown ids are ignored. */
void expiry_touch(struct tb_map *m, int64_t id, uint64_t now);
/* A connection took the session over at `now` with a newly negotiated
 * timeout, which counts from then on. */
void expiry_attach(struct tb_map *m, int64_t id, int32_t timeout_ms,
                   uint64_t now);
/* A close of `id` is being proposed (its client's, or one a follower
 * forwarded): 1 if this marks it closing, which expiry_close_failed undoes
 * should the proposal fail; 0 if it was closing already (whatever marked
 * it, a tick or an earlier close, unmarks it) or is not tracked. */
int expiry_closing(struct tb_map *m, int64_t id);
/* The session is closed: no longer tracked. */
void expiry_forget(struct tb_map *m, int64_t id);
/* The close proposed for `id` failed (the log refused it after taking it,
 * or leadership went): the next tick proposes it again.  A session left
 * `closing` would never expire, its ephemeral nodes (its locks) kept. */
void expiry_close_failed(struct tb_map *m, int64_t id);
/* No session is tracked any more (the state was replaced). */
void expiry_forget_all(struct tb_map *m);

/* The time a tick at `now` finds lost, ticks being due every `period_ms`
 * after the one at *last_ms (0: no tick yet, nothing lost), and records
 * `now` as the last tick.  A tick more than two periods after the one
 * before means the loop did not run (the process was stopped, the machine
 * paused, a system call blocked): what clients sent meanwhile is still
 * unread, so the time past one period counts against no session. */
uint64_t expiry_lost(uint64_t period_ms, uint64_t *last_ms, uint64_t now);

/* 0 if the close of `se` was proposed; else it is asked again next tick
 * (not the leader, the log refusing).  It may call expiry_close_failed
 * for `se` before it returns (a failure the log reports at once). */
typedef int (*expiry_close_fn)(void *arg, const struct sess *se);

/* One tick at `now`: moves every deadline by `lost` (expiry_lost), then
 * calls `close` once for each session at or past its deadline whose close
 * was not proposed yet.  `close` must not change `m`. */
void expiry_tick(struct tb_map *m, uint64_t now, uint64_t lost,
                 expiry_close_fn close, void *arg);

#endif
