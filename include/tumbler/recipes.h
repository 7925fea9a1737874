/* libtumbler recipes: locks, read-write locks, semaphores, multi-locks,
 * leader election, fencing, barriers, queues and a shared counter on top
 * of the client API of <tumbler/tumbler.h>.
 *
 * Every recipe keeps its state in znodes laid out as Apache Curator 5 lays
 * them out (the queues: as kazoo does), so a libtumbler client and a
 * Curator (kazoo) client using the same path cooperate (docs/recipes.md
 * draws each layout):
 *
 *   fair mutex   PATH/_c_<uuid>-lock-<seq>        EPHEMERAL_SEQUENTIAL
 *   rw lock      PATH/_c_<uuid>-__READ__<seq>, PATH/_c_<uuid>-__WRIT__<seq>
 *   semaphore    PATH/locks/_c_<uuid>-lock-<seq>,
 *                PATH/leases/_c_<uuid>-lease-<seq>
 *   election     PATH/_c_<uuid>-latch-<seq>
 *   non-fair     PATH itself, EPHEMERAL (data starts with _c_<uuid>)
 *   barrier      PATH itself, PERSISTENT (DistributedBarrier)
 *   double       PATH/<uuid> EPHEMERAL, PATH/ready (DistributedDoubleBarrier)
 *   counter      PATH, 8 bytes big-endian (DistributedAtomicLong)
 *   queue        PATH/entry-<prio>-<seq>, or PATH/entries/... and
 *                PATH/taken/... (kazoo's Queue and LockingQueue)
 *
 * One path, one lock, whatever the kind (flock's rule): the nodes of the
 * fair mutex, of both sides of the read-write lock and of kazoo's Lock,
 * WriteLock and ReadLock (<hex uuid>__lock__<seq>, ...__rlock__<seq>) queue
 * together, ordered by their sequence numbers, which one parent's children
 * draw from one counter.  A mutex, a writer or a kazoo lock holds when it
 * is first; a reader or a kazoo ReadLock when none of those is before it.
 * A lock whose path holds anything else (a semaphore, an election, a
 * non-fair lock's node, nodes of no known layout) is refused with
 * TB_EFOREIGNLOCK, and tb_mutex_conflict says what was found; so is a
 * semaphore whose path holds anything but its own two parents.  Curator's
 * and kazoo's own recipes see only their own names: see docs/recipes.md
 * for which mixes with them are safe.
 *
 * Parents are created as container nodes, which the server removes once
 * they are empty again.  The uuid in each name lets a client find its own
 * node when the reply to its create was lost with the connection, so a
 * lost reply leaves neither an orphan node nor a deadlock.
 *
 * Herd freedom: a waiter of a fair recipe watches only the node it queues
 * behind (exists), so a release wakes one waiter.  The non-fair mutex and
 * the non-fair election are the exception: every waiter watches the one
 * node, and a release wakes them all (the "herd"); they exist for low
 * contention and for comparison.
 *
 * Fencing token: every acquisition yields the czxid of the node that won.
 * It is strictly larger than the token of every earlier holder of the same
 * lock, also across server restarts, so a resource that remembers the
 * largest token it has seen can refuse a stale holder.
 *
 * Ownership and reentrancy: the owner of a lock is its handle (struct
 * tb_mutex, ...), not a thread.  Acquiring again through a handle that
 * already holds the lock only increments its hold count; as many releases
 * give it up.  Two threads that must exclude each other use two handles
 * (they may share one struct tb_client, i.e. one session).
 *
 * Lock lost: a holder's state (tb_mutex_state) moves from TB_LOCK_HELD to
 * TB_LOCK_SUSPENDED when the connection is lost (the session, and the lock,
 * may still live) and back to TB_LOCK_HELD when the same session is
 * reconnected to a read-write server and the holder has read its lock node
 * there, still its own (a sync and a read after the reconnect; a read-only
 * server keeps it suspended), or to TB_LOCK_LOST when the session expires,
 * the handle is closed or the lock node was deleted or replaced by someone
 * else.  The state callback of the options is told each change.  Releasing
 * a lost lock reports TB_ELOCKLOST.  The library sees connection-state
 * changes only if the application forwards them: install
 * tb_recipes_state_cb as the client's state_cb, or call it from yours.
 * Without it, a holder still learns of expiry and node deletion (through a
 * watch on its own node), and tb_mutex_state still answers from the
 * client's live state, but the SUSPENDED callback cannot come, nor the
 * check of the node after a reconnect, nor an election candidate's join
 * again once the client has a new session (it stays TB_LOCK_LOST).
 *
 * Threads and callbacks, following the client: with the I/O thread
 * (tb_client_start) every function may be called from any thread and
 * every recipe callback runs on the I/O thread; in loop mode everything
 * happens on the loop's thread.  Asynchronous calls return 0 and fire
 * their callback exactly once, or return a negative TB_E* code and never
 * fire it.  A callback never runs inside the call that started it.
 *
 * Timeouts: timeout_ms < 0 waits for ever, 0 tries once without waiting
 * (try-lock: TB_ETIMEDOUT if the lock is taken), > 0 gives up after that
 * many milliseconds with TB_ETIMEDOUT.  Asynchronous forms with a positive
 * timeout need the I/O thread (a private timer thread starts the
 * give-up); in loop mode they return TB_EINVAL, and the application uses
 * its own timer and the cancel function instead.  Synchronous forms
 * accept every timeout in both modes.  Giving up, cancelling, an error and
 * expiry all remove the waiter's node.
 *
 * Synchronous forms block the calling thread.  With the I/O thread they
 * must not be called from a libtumbler callback (TB_EINVAL when the library
 * can tell); in loop mode they drive the handle themselves.
 *
 * Memory: recipe objects use the C library's allocator, not tb_heap_set's
 * hooks. */
#ifndef TUMBLER_RECIPES_H
#define TUMBLER_RECIPES_H

#include <stddef.h>
#include <stdint.h>

#include "tumbler/tumbler.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Common                                                              */

/* Forward the client's session-state changes to the recipes: install it
 * as tb_options.state_cb, or call it from your own state callback with the
 * same arguments.  `data` is not used. */
TB_API void tb_recipes_state_cb(struct tb_client *c, int state, void *data);

enum tb_lock_state {
    TB_LOCK_UNLOCKED = 0,  /* not held, not waiting */
    TB_LOCK_ACQUIRING = 1, /* waiting in the queue */
    TB_LOCK_HELD = 2,      /* held; for an election: leading */
    TB_LOCK_SUSPENDED = 3, /* held, but the connection is lost (or is to a
                              read-only server, or the node is not yet
                              confirmed after a reconnect): the lock may be
                              lost; stop writing to fenced resources until
                              HELD again */
    TB_LOCK_LOST = 4,      /* held once, no longer: stop, then release */
};
TB_API const char *tb_lock_state_name(int state);

/* An acquisition finished: rc 0 with the fencing token, or an error
 * (TB_ETIMEDOUT, TB_ECANCELED, TB_ESESSIONEXPIRED, TB_ECLOSING, ...). */
typedef void (*tb_acquire_cb)(int rc, int64_t token, void *data);
typedef void (*tb_done_cb)(int rc, void *data);
/* A held lock's state changed (TB_LOCK_SUSPENDED, TB_LOCK_HELD again,
 * TB_LOCK_LOST).  `token` names the hold that changed. */
typedef void (*tb_lock_state_cb)(int state, int64_t token, void *data);

enum tb_lock_kind {
    TB_LOCK_FAIR = 0,    /* queue of sequential nodes; herd-free */
    TB_LOCK_NONFAIR = 1, /* one ephemeral node everyone races for */
};

/* Options of every recipe; NULL or zero fields mean the defaults. */
struct tb_lock_options {
    int kind;                  /* enum tb_lock_kind (mutex, election) */
    tb_lock_state_cb state_cb; /* hold state changes; NULL: none */
    void *data;                /* for state_cb */
    /* Data stored in the recipe's nodes; NULL: "<hostname>:<pid>". */
    const void *value;
    size_t len;
    /* Fair mutex only (else TB_EINVAL), and with the I/O thread: when the
     * previous holder's node went without a release (its session died),
     * the grant waits this long (Chubby's lock-delay); a clean release
     * hands over at once.  Meanwhile the acquisition is pending (state
     * ACQUIRING, no token, no hold to release, no state callback); a loss
     * then fails it with TB_ELOCKLOST; a hold suspended meanwhile and not
     * yet looked at again is told TB_LOCK_SUSPENDED after the grant.  0:
     * none.  See docs/recipes.md. */
    int lock_delay_ms;
};

/* Counters of one recipe object, for monitoring and for the tests that
 * measure the herd effect. */
struct tb_recipe_stats {
    uint64_t acquisitions;   /* acquisitions that took a node (not reentry) */
    uint64_t creates;        /* lock nodes created */
    uint64_t children_reads; /* getChildren calls */
    uint64_t watches_set;    /* watches set on other nodes or the parent */
    uint64_t wakeups;        /* node events those watches delivered */
    uint64_t recoveries;     /* lost create replies resolved by the uuid */
    uint64_t restarts;       /* attempts restarted because a node vanished */
};

/* ------------------------------------------------------------------ */
/* Mutex                                                               */

struct tb_mutex;

/* A handle for the lock at `path` (absolute; for a fair lock the parent of
 * the queue's nodes, for a non-fair lock the node itself).  No I/O. */
TB_API int tb_mutex_new(struct tb_mutex **out, struct tb_client *c,
                        const char *path, const struct tb_lock_options *o);
/* Gives the lock up if held and cancels a pending acquisition (its
 * callback fires with TB_ECANCELED, also for a grant not yet told; a
 * callback already running, on another thread, may still see 0: the free
 * then gave that hold up); node removal finishes in the background.  Free
 * every handle before closing its client.  Handles of a read-write lock
 * are freed with it, not with this. */
TB_API void tb_mutex_free(struct tb_mutex *m);

/* Acquires (see Timeouts above).  Reentrant: if the handle holds the lock,
 * the hold count goes up and `cb` fires with the same token.  TB_EINVAL if
 * an acquisition is already pending on the handle; TB_ELOCKLOST if the
 * handle holds a lost lock (release it first). */
TB_API int tb_mutex_lock(struct tb_mutex *m, int timeout_ms, tb_acquire_cb cb,
                         void *data);
TB_API int tb_mutex_trylock(struct tb_mutex *m, tb_acquire_cb cb, void *data);
/* Decrements the hold count; at zero deletes the node.  `cb` gets 0, or
 * TB_ELOCKLOST if the session expired before the node was deleted.
 * Returns TB_ENOTHELD if not held, and TB_ELOCKLOST (no callback; the
 * hold is gone) if the lock was already known to be lost. */
TB_API int tb_mutex_unlock(struct tb_mutex *m, tb_done_cb cb, void *data);
/* Ends a pending acquisition: its callback fires with TB_ECANCELED once
 * the waiter's node is removed.  TB_EINVAL if none is pending. */
TB_API int tb_mutex_cancel(struct tb_mutex *m);

TB_API int tb_mutex_lock_sync(struct tb_mutex *m, int timeout_ms,
                              int64_t *token);
TB_API int tb_mutex_trylock_sync(struct tb_mutex *m, int64_t *token);
TB_API int tb_mutex_unlock_sync(struct tb_mutex *m);

/* enum tb_lock_state, read from the handle and the client's live state. */
TB_API int tb_mutex_state(struct tb_mutex *m);
TB_API int64_t tb_mutex_token(struct tb_mutex *m); /* 0 unless held */
TB_API int tb_mutex_holds(struct tb_mutex *m);     /* the hold count */
/* The path of the handle's current node (held or queued), NUL-terminated
 * in `buf`; TB_ENONODE if it has none now. */
TB_API int tb_mutex_node(struct tb_mutex *m, char *buf, size_t cap);
TB_API void tb_mutex_stats(struct tb_mutex *m, struct tb_recipe_stats *out);

/* After an acquisition failed with TB_EFOREIGNLOCK: what was found and
 * where ("/p/leases: a semaphore's leases (...)"), NUL-terminated in
 * `buf`; TB_ENONODE if the last acquisition was not refused so. */
TB_API int tb_mutex_conflict(struct tb_mutex *m, char *buf, size_t cap);

/* What a child of a lock's path is, judged from its name alone (not a
 * path) as the recipes judge it: the marker just before the server's
 * sequence number ("%010d": 10 characters, 11 below -999,999,999 after
 * a wrap).  The first five kinds queue together. */
enum tb_lock_node {
    TB_NODE_OTHER = 0,  /* of no layout a lock takes part in */
    TB_NODE_MUTEX,      /* ...lock-<seq>: a mutex (InterProcessMutex) */
    TB_NODE_WRITE,      /* ...__WRIT__<seq>: a read-write lock's writer */
    TB_NODE_READ,       /* ...__READ__<seq>: its reader */
    TB_NODE_KAZOO_LOCK, /* ...__lock__<seq>: kazoo's Lock or WriteLock */
    TB_NODE_KAZOO_READ, /* ...__rlock__<seq>: kazoo's ReadLock */
    TB_NODE_LATCH,      /* ...latch-<seq>: an election candidate */
    TB_NODE_LEASE,      /* ...lease-<seq>: a semaphore's lease */
};
/* The kind of the child `name`; *seq (may be NULL) gets its sequence
 * number (0 for TB_NODE_OTHER). */
TB_API int tb_lock_node_kind(const char *name, int64_t *seq);
/* 1 for the kinds that share the lock (readers), 0 for the others. */
TB_API int tb_lock_node_shared(int kind);
/* A phrase for messages saying what the child `name` looks like: "a
 * kazoo ReadLock's node", "a semaphore's leases (...)", ... */
TB_API const char *tb_lock_node_what(const char *name);

/* Runs fn while holding the fair lock at `path`: acquires (waiting for
 * ever), calls fn(arg, token), releases.  Returns fn's result, or the
 * acquisition's error, or TB_ELOCKLOST if the lock was lost before it was
 * released (fn's work may then not have been exclusive). */
typedef int (*tb_lock_fn)(void *arg, int64_t token);
TB_API int tb_lock_run(struct tb_client *c, const char *path, tb_lock_fn fn,
                       void *arg);
/* The same, giving up the wait after `timeout_ms` (see Timeouts above):
 * then TB_ETIMEDOUT, fn not called and no node left. */
TB_API int tb_lock_run_timeout(struct tb_client *c, const char *path,
                               int timeout_ms, tb_lock_fn fn, void *arg);
/* The same, asynchronous: fn runs on the callback thread (it must not
 * block), then `cb` gets what tb_lock_run would return. */
TB_API int tb_lock_run_async(struct tb_client *c, const char *path,
                             int timeout_ms, tb_lock_fn fn, void *arg,
                             tb_done_cb cb, void *data);

/* ------------------------------------------------------------------ */
/* Fencing on the server                                               */

/* A fenced write: a multi that applies only while the handle still holds
 * its fair lock (a mutex or a side of a read-write lock).  It carries a
 * check that the handle's lock node exists, which is true exactly while
 * the hold lasts, so a holder paused past its session, or whose node was
 * deleted, writes nothing once another can hold.  tb_mutex_fence appends
 * that check to `ops` (the writes and the check apply all or nothing, in
 * any order).  The exec forms append it and send `ops`; they report
 * TB_ELOCKLOST when the check failed (nothing was applied), else the
 * multi's own result (TB_ELOCKLOST too when the session expired: the
 * write then applied before the loss or not at all); the results include
 * the check, last.  All return
 * TB_ENOTHELD if the handle does not hold, TB_ELOCKLOST if it knows the
 * lock lost, TB_EINVAL for a non-fair lock (its node is recreated by the
 * next holder under the same name, so no check can tell the two apart).
 * `ops` keeps the check: build a new one for the next write. */
TB_API int tb_mutex_fence(struct tb_mutex *m, struct tb_multi *ops);
TB_API int tb_fenced_exec(struct tb_mutex *m, struct tb_multi *ops,
                          tb_multi_cb cb, void *data);
TB_API int tb_fenced_exec_sync(struct tb_mutex *m, struct tb_multi *ops,
                               struct tb_multi_results *out);
/* One fenced setData (`version` -1: any). */
TB_API int tb_fenced_set_data_sync(struct tb_mutex *m, const char *path,
                                   const void *value, size_t len,
                                   int32_t version, struct tb_stat *stat);

/* The token check (Chubby's CheckSequencer), for a resource that is
 * handed a fencing token and must know before it acts whether the hold
 * that token names is still on: `cb` gets 0 if a current holder of the
 * lock at `path` has that token (the first node of the queue, each reader
 * sharing the lock, a reader its writer let in (a downgrade: the same
 * session's, right behind it), an election's leader, a semaphore's lease, or a
 * non-fair lock's or leader's node PATH), TB_ELOCKLOST if none has (that hold
 * is over, or the token was never a holder's), or the error that kept the
 * server from answering.  It syncs first, so a server behind the holder's
 * answers with the grant the holder saw.  Any session may ask; the answer is
 * true of the moment the server read the queue -- a resource that acts on it
 * must still refuse tokens lower than the largest it has seen. */
TB_API int tb_token_check(struct tb_client *c, const char *path, int64_t token,
                          tb_done_cb cb, void *data);
TB_API int tb_token_check_sync(struct tb_client *c, const char *path,
                               int64_t token);

/* ------------------------------------------------------------------ */
/* Count-down latch                                                    */

/* Menagerie's ZkCountDownLatch semantics: count_down adds one persistent
 * sequential node PATH/countDownLatch-<seq>; await returns once there are
 * `count` of them (at once if there are; TB_ETIMEDOUT, see Timeouts
 * above).  Counts are persistent: one made survives its session.  Waiters
 * watch only the name the last count will take, so counting down wakes
 * nobody before the last.  PATH must hold only the latch's nodes; to use
 * a path again, delete its children.  Every user agrees on `count`. */
struct tb_latch;
TB_API int tb_latch_new(struct tb_latch **out, struct tb_client *c,
                        const char *path, int count);
/* Gives a pending await up (TB_ECANCELED). */
TB_API void tb_latch_free(struct tb_latch *l);
TB_API int tb_latch_count_down(struct tb_latch *l, tb_done_cb cb, void *data);
TB_API int tb_latch_await(struct tb_latch *l, int timeout_ms, tb_done_cb cb,
                          void *data);
TB_API int tb_latch_count_down_sync(struct tb_latch *l);
TB_API int tb_latch_await_sync(struct tb_latch *l, int timeout_ms);
/* How many counts are still missing (0 once open). */
TB_API int tb_latch_remaining_sync(struct tb_latch *l, int *remaining);

/* ------------------------------------------------------------------ */
/* Cyclic barrier                                                      */

/* Java's CyclicBarrier, as Menagerie's ZkCyclicBarrier carries it over:
 * await returns 0 once `parties` parties have arrived, all together, and
 * the barrier is then ready for the next generation of `parties`.  A
 * party that gives up (timeout: TB_ETIMEDOUT; free: TB_ECANCELED) or
 * whose session ends while it waits breaks the generation: the others
 * get TB_EBROKEN, and so does every await until a reset, which also
 * breaks the parties waiting when it is made.  A timeout that comes after
 * the trip is no break: that party passes.  Nodes (see docs/recipes.md):
 * PATH/gen-<K>/party-<uuid>-<seq> per party, PATH/gen-<K>/end deciding
 * generation K; PATH must hold only these.  Every user agrees on
 * `parties`; one await at a time per handle (TB_EINVAL). */
struct tb_cbarrier;
TB_API int tb_cbarrier_new(struct tb_cbarrier **out, struct tb_client *c,
                           const char *path, int parties);
/* Gives a pending await up (TB_ECANCELED; it breaks the generation). */
TB_API void tb_cbarrier_free(struct tb_cbarrier *b);
TB_API int tb_cbarrier_await(struct tb_cbarrier *b, int timeout_ms,
                             tb_done_cb cb, void *data);
TB_API int tb_cbarrier_await_sync(struct tb_cbarrier *b, int timeout_ms);
/* A new generation; the current one's waiters get TB_EBROKEN. */
TB_API int tb_cbarrier_reset(struct tb_cbarrier *b, tb_done_cb cb, void *data);
TB_API int tb_cbarrier_reset_sync(struct tb_cbarrier *b);
/* How many parties wait in the current generation; TB_EBROKEN (with
 * *waiting set) if it is broken. */
TB_API int tb_cbarrier_waiting_sync(struct tb_cbarrier *b, int *waiting);
/* Party nodes created, looks at a generation (children_reads), waits
 * started (watches_set) and the wake-ups they delivered, over the
 * handle's life. */
TB_API void tb_cbarrier_stats(struct tb_cbarrier *b,
                              struct tb_recipe_stats *out);

/* ------------------------------------------------------------------ */
/* Distributed queue                                                   */

/* On kazoo's layouts, FIFO within a priority (0..999, lower first; -1:
 * kazoo's default, 100):
 *   TB_QUEUE_SIMPLE   kazoo Queue: PATH/entry-<prio>-<seq>; a take reads
 *                     the first entry and deletes it: each item goes to
 *                     exactly one taker, at most once (an item deleted
 *                     and not yet processed dies with its taker; a take
 *                     whose delete reply is lost with the connection
 *                     fails with TB_ECONNECTIONLOSS and may have removed
 *                     it).
 *   TB_QUEUE_LOCKING  kazoo LockingQueue: PATH/entries/entry-<prio>-<seq>
 *                     and an ephemeral claim PATH/taken/<same name>; a
 *                     take claims an item, consume removes it, release
 *                     gives it back; a claimer that dies loses the claim
 *                     with its session and the item is taken again: at
 *                     least once, nothing lost.  A handle holds one claim
 *                     at a time (kazoo's rule); take again after consume
 *                     or release (TB_EINVAL before).
 * PATH (and entries/, taken/) are persistent, made on first use. */
enum tb_queue_kind { TB_QUEUE_SIMPLE = 0, TB_QUEUE_LOCKING = 1 };
struct tb_dqueue;
TB_API int tb_dqueue_new(struct tb_dqueue **out, struct tb_client *c,
                         const char *path, int kind);
/* Cancels a take in progress; a claim not consumed goes back. */
TB_API void tb_dqueue_free(struct tb_dqueue *q);
TB_API int tb_dqueue_put(struct tb_dqueue *q, const void *value, size_t len,
                         int priority, tb_done_cb cb, void *data);
/* An item, borrowed for the callback: rc 0 and its data, or TB_ETIMEDOUT,
 * TB_ECANCELED, TB_ENONODE (peek: the queue is empty), ... */
typedef void (*tb_item_cb)(int rc, const void *value, size_t len, void *data);
/* Takes the first item, waiting for one (see Timeouts above).  One
 * take or peek at a time per handle. */
TB_API int tb_dqueue_take(struct tb_dqueue *q, int timeout_ms, tb_item_cb cb,
                          void *data);
/* The first item not claimed, left in place; TB_ENONODE if none (a queue
 * not there is empty: a peek makes no node). */
TB_API int tb_dqueue_peek(struct tb_dqueue *q, tb_item_cb cb, void *data);
TB_API int tb_dqueue_cancel(struct tb_dqueue *q);
/* Locking: removes the claimed item (entry and claim in one multi);
 * TB_ENOTHELD without a claim, TB_ELOCKLOST if the claim was lost (the
 * session expired: the item is someone else's now). */
TB_API int tb_dqueue_consume(struct tb_dqueue *q, tb_done_cb cb, void *data);
/* Locking: gives the claimed item back (its claim deleted, retried
 * across reconnects). */
TB_API int tb_dqueue_release(struct tb_dqueue *q);
TB_API int tb_dqueue_put_sync(struct tb_dqueue *q, const void *value,
                              size_t len, int priority);
/* *value is malloc'ed (free()), with a spare NUL after its *len bytes. */
TB_API int tb_dqueue_take_sync(struct tb_dqueue *q, int timeout_ms,
                               void **value, size_t *len);
TB_API int tb_dqueue_peek_sync(struct tb_dqueue *q, void **value, size_t *len);
TB_API int tb_dqueue_consume_sync(struct tb_dqueue *q);

/* ------------------------------------------------------------------ */
/* Shared counter                                                      */

/* Curator's DistributedAtomicLong: the persistent node `path` holds the
 * value as 8 bytes, big-endian; a missing node or empty data reads as 0,
 * data of another length fails with TB_EDATAINCONSISTENCY.  Curator and
 * libtumbler clients share one counter.  Writes are optimistic (read,
 * write on the version read, read again after a conflict), so no add is
 * lost however many clients add at once.  A missing node is created by
 * the first write, its parents as containers.  A write cut off with the
 * connection may or may not have applied: TB_ECONNECTIONLOSS, not retried
 * (a retry could count twice).  `cb` gets the value (for an add, set or
 * compare-and-set: the value written) and the node's version (-1: no node
 * yet; past 2^31 writes a version wraps negative, as ZooKeeper's does). */
typedef void (*tb_counter_cb)(int rc, int64_t value, int32_t version,
                              void *data);
TB_API int tb_counter_get(struct tb_client *c, const char *path,
                          tb_counter_cb cb, void *data);
/* Adds `delta` (negative subtracts; wraps as Java's long does). */
TB_API int tb_counter_add(struct tb_client *c, const char *path, int64_t delta,
                          tb_counter_cb cb, void *data);
/* Sets the value whatever it was. */
TB_API int tb_counter_set(struct tb_client *c, const char *path, int64_t value,
                          tb_counter_cb cb, void *data);
/* Compare-and-set on the version (as Curator's SharedCount.trySetCount,
 * not on its node): sets `value` only if the node is still at `version` as
 * read by a get (-1: only if there is no node yet; other negative versions
 * are wrapped ones); else TB_EBADVERSION and nothing changes.  Data not a
 * counter's is TB_EDATAINCONSISTENCY, as for the other calls. */
TB_API int tb_counter_cas(struct tb_client *c, const char *path,
                          int32_t version, int64_t value, tb_counter_cb cb,
                          void *data);
/* Out-parameters may be NULL. */
TB_API int tb_counter_get_sync(struct tb_client *c, const char *path,
                               int64_t *value, int32_t *version);
TB_API int tb_counter_add_sync(struct tb_client *c, const char *path,
                               int64_t delta, int64_t *value);
TB_API int tb_counter_set_sync(struct tb_client *c, const char *path,
                               int64_t value);
TB_API int tb_counter_cas_sync(struct tb_client *c, const char *path,
                               int32_t version, int64_t value,
                               int32_t *new_version);

/* ------------------------------------------------------------------ */
/* Barriers                                                            */

/* Curator's DistributedBarrier: the barrier is up while the persistent
 * node `path` exists.  Set creates it (its parents as containers; set
 * already: fine), remove deletes it (gone already: fine), wait waits until
 * it is gone (see Timeouts above: TB_ETIMEDOUT; 0 looks once). */
TB_API int tb_barrier_set(struct tb_client *c, const char *path, tb_done_cb cb,
                          void *data);
TB_API int tb_barrier_remove(struct tb_client *c, const char *path,
                             tb_done_cb cb, void *data);
TB_API int tb_barrier_wait(struct tb_client *c, const char *path,
                           int timeout_ms, tb_done_cb cb, void *data);
TB_API int tb_barrier_set_sync(struct tb_client *c, const char *path);
TB_API int tb_barrier_remove_sync(struct tb_client *c, const char *path);
TB_API int tb_barrier_wait_sync(struct tb_client *c, const char *path,
                                int timeout_ms);

/* Curator's DistributedDoubleBarrier: `members` processes enter, and
 * none gets past enter until all have; then none gets past leave until
 * all have left.  Each member is an ephemeral node PATH/<uuid>, and the
 * one whose arrival makes `members` creates PATH/ready, which lets all
 * in.  Every member of a barrier must agree on `members`.  One operation
 * at a time per handle (TB_EINVAL).  An enter that fails or is given up
 * removes the member's node; a leave given up keeps it, if it still
 * stands (leave again, or free).  Leave fails with TB_ENONODE if the
 * member's node was deleted under it (its session expired). */
struct tb_dbarrier;
TB_API int tb_dbarrier_new(struct tb_dbarrier **out, struct tb_client *c,
                           const char *path, int members);
/* Gives up a pending operation (its callback gets TB_ECANCELED) and
 * removes the member's node, if any. */
TB_API void tb_dbarrier_free(struct tb_dbarrier *b);
TB_API int tb_dbarrier_enter(struct tb_dbarrier *b, int timeout_ms,
                             tb_done_cb cb, void *data);
TB_API int tb_dbarrier_leave(struct tb_dbarrier *b, int timeout_ms,
                             tb_done_cb cb, void *data);
TB_API int tb_dbarrier_enter_sync(struct tb_dbarrier *b, int timeout_ms);
TB_API int tb_dbarrier_leave_sync(struct tb_dbarrier *b, int timeout_ms);
/* 1 between a successful enter and the leave that removes the node. */
TB_API int tb_dbarrier_entered(struct tb_dbarrier *b);

/* ------------------------------------------------------------------ */
/* Read-write lock                                                     */

/* Curator's InterProcessReadWriteLock: readers share, a writer excludes
 * everyone, in queue order.  Both sides are reentrant.  The holder of the
 * write lock may take the read lock and then release the write lock
 * (downgrade), unless another writer queued behind it meanwhile (it would
 * hold beside the reader once the write lock goes: TB_EINVAL, release the
 * write lock first); taking the write lock while holding only the read
 * lock would deadlock and is refused with TB_EINVAL.  Always fair. */
struct tb_rwlock;
TB_API int tb_rwlock_new(struct tb_rwlock **out, struct tb_client *c,
                         const char *path, const struct tb_lock_options *o);
TB_API void tb_rwlock_free(struct tb_rwlock *l);
/* The two sides, used with the tb_mutex_* functions (not tb_mutex_free). */
TB_API struct tb_mutex *tb_rwlock_read(struct tb_rwlock *l);
TB_API struct tb_mutex *tb_rwlock_write(struct tb_rwlock *l);

/* ------------------------------------------------------------------ */
/* Counting semaphore                                                  */

/* Curator's InterProcessSemaphoreV2: at most `max_leases` leases exist at
 * any time.  A waiter first takes the fair mutex PATH/locks, creates its
 * lease node under PATH/leases, waits while there are more than
 * max_leases lease nodes (only the mutex holder watches, so releases wake
 * one client), then gives the mutex back.  Every semaphore using a path
 * must agree on max_leases. */
struct tb_semaphore;
struct tb_lease;
TB_API int tb_semaphore_new(struct tb_semaphore **out, struct tb_client *c,
                            const char *path, int max_leases,
                            const struct tb_lock_options *o);
/* Cancels pending acquisitions and returns the leases still held; a lease
 * whose grant's callback is running (on another thread, or the caller's
 * own) stays valid in it and goes back when it returns. */
TB_API void tb_semaphore_free(struct tb_semaphore *s);
/* `lease` is NULL unless rc == 0; then it is the caller's until
 * tb_lease_release.  A handle may hold several leases. */
typedef void (*tb_lease_cb)(int rc, struct tb_lease *lease, void *data);
TB_API int tb_semaphore_acquire(struct tb_semaphore *s, int timeout_ms,
                                tb_lease_cb cb, void *data);
TB_API int tb_semaphore_acquire_sync(struct tb_semaphore *s, int timeout_ms,
                                     struct tb_lease **out);
/* After an acquisition failed with TB_EFOREIGNLOCK: what was found, as
 * tb_mutex_conflict says it. */
TB_API int tb_semaphore_conflict(struct tb_semaphore *s, char *buf, size_t cap);
/* Cancels every pending acquisition of the handle (TB_ECANCELED). */
TB_API int tb_semaphore_cancel(struct tb_semaphore *s);
/* Returns the lease and frees it (after `cb`, when given).  `cb` gets 0 or
 * TB_ELOCKLOST. */
TB_API int tb_lease_release(struct tb_lease *l, tb_done_cb cb, void *data);
TB_API int tb_lease_release_sync(struct tb_lease *l);
TB_API int64_t tb_lease_token(struct tb_lease *l);
/* Fenced writes while this lease is held, as tb_mutex_fence and
 * tb_fenced_exec(_sync) for a lock (TB_ENOTHELD, TB_ELOCKLOST alike);
 * tb_token_check on the semaphore's PATH checks a lease's token. */
TB_API int tb_lease_fence(struct tb_lease *l, struct tb_multi *ops);
TB_API int tb_lease_fenced_exec(struct tb_lease *l, struct tb_multi *ops,
                                tb_multi_cb cb, void *data);
TB_API int tb_lease_fenced_exec_sync(struct tb_lease *l, struct tb_multi *ops,
                                     struct tb_multi_results *out);
TB_API int tb_lease_state(struct tb_lease *l);
TB_API void tb_semaphore_stats(struct tb_semaphore *s,
                               struct tb_recipe_stats *out);

/* ------------------------------------------------------------------ */
/* Multi-lock                                                          */

/* Several fair mutexes taken all or nothing, always in the order of their
 * sorted paths (so two multi-locks over overlapping sets cannot deadlock),
 * released together.  If one cannot be had, those taken are released. */
struct tb_multilock;
TB_API int tb_multilock_new(struct tb_multilock **out, struct tb_client *c,
                            const char *const *paths, int n,
                            const struct tb_lock_options *o);
TB_API void tb_multilock_free(struct tb_multilock *ml);
TB_API int tb_multilock_lock(struct tb_multilock *ml, int timeout_ms,
                             tb_done_cb cb, void *data);
TB_API int tb_multilock_unlock(struct tb_multilock *ml, tb_done_cb cb,
                               void *data);
TB_API int tb_multilock_cancel(struct tb_multilock *ml);
TB_API int tb_multilock_lock_sync(struct tb_multilock *ml, int timeout_ms);
TB_API int tb_multilock_unlock_sync(struct tb_multilock *ml);
/* The fencing token of paths[i] (as given to tb_multilock_new). */
TB_API int64_t tb_multilock_token(struct tb_multilock *ml, int i);
/* The weakest state of the member locks. */
TB_API int tb_multilock_state(struct tb_multilock *ml);

/* ------------------------------------------------------------------ */
/* Leader election                                                     */

/* Fair: Curator's LeaderLatch, leadership in the order candidates joined.
 * Non-fair: candidates race to create PATH.  The state callback of the
 * options reports TB_LOCK_HELD (leading, with the leader's fencing
 * token), TB_LOCK_SUSPENDED (connection lost: leadership may be lost) and
 * TB_LOCK_LOST (leadership ended; the candidate queues again at once if
 * its session lives, else as soon as the client has a new session; or,
 * token 0, a candidacy that ended without leading: the session's end, or
 * a refusal such as TB_EFOREIGNLOCK, which tb_election_error names; it
 * is tried again once the client has a new session).  A leader keeps
 * leading until it leaves, closes or its session dies. */
struct tb_election;
TB_API int tb_election_new(struct tb_election **out, struct tb_client *c,
                           const char *path, const struct tb_lock_options *o);
/* Leaves the election (if joined) and frees the handle. */
TB_API void tb_election_free(struct tb_election *e);
/* Joins; TB_EINVAL if already joined. */
TB_API int tb_election_join(struct tb_election *e);
/* Resigns or stops waiting; `cb` once the node is gone. */
TB_API int tb_election_leave(struct tb_election *e, tb_done_cb cb, void *data);
TB_API int tb_election_leave_sync(struct tb_election *e);
/* Waits until this candidate leads (0 and the token) or the timeout. */
TB_API int tb_election_await_sync(struct tb_election *e, int timeout_ms,
                                  int64_t *token);
/* TB_LOCK_UNLOCKED (not joined), TB_LOCK_ACQUIRING (queued),
 * TB_LOCK_HELD / TB_LOCK_SUSPENDED (leading), TB_LOCK_LOST (joined but
 * out of the race until the client has a new session). */
TB_API int tb_election_state(struct tb_election *e);
/* Why the candidate is out of the race (TB_LOCK_LOST without leading):
 * the error that ended its candidacy; 0 while it is in the race. */
TB_API int tb_election_error(struct tb_election *e);
TB_API int64_t tb_election_token(struct tb_election *e);
/* Fenced writes while this candidate leads, as tb_mutex_fence and
 * tb_fenced_exec(_sync) for a lock: TB_ENOTHELD when it does not lead,
 * TB_ELOCKLOST once it knows the leadership lost or the server's check
 * fails; TB_EINVAL for a non-fair election.  tb_token_check on PATH
 * checks a leader's token. */
TB_API int tb_election_fence(struct tb_election *e, struct tb_multi *ops);
TB_API int tb_election_fenced_exec(struct tb_election *e, struct tb_multi *ops,
                                   tb_multi_cb cb, void *data);
TB_API int tb_election_fenced_exec_sync(struct tb_election *e,
                                        struct tb_multi *ops,
                                        struct tb_multi_results *out);
TB_API int tb_election_is_leader(struct tb_election *e);
TB_API void tb_election_stats(struct tb_election *e,
                              struct tb_recipe_stats *out);

#ifdef __cplusplus
}
#endif
#endif
