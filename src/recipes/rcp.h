/* The recipes' internals (prefix rcp_), shared by the files of
 * src/recipes.  Everything here is built on the public client API only.
 *
 * The engine (lk.c and its lk_*.c) is one state machine, struct tb_mutex,
 * that puts one node of its own into a parent and waits until a predicate
 * over the parent's sorted children says it holds.  With different names
 * and predicates it is the fair mutex, both sides of the read-write lock,
 * a semaphore lease and the election latch; with fair == 0 it is the
 * non-fair mutex (one ephemeral node).  Composites (rwlock.c,
 * semaphore.c, multilock.c, election.c) are built from engines.
 *
 * Life of an acquisition (phase):
 *
 *   IDLE --lock--> CREATING --ok--> CHECKING --holds--> HELD --unlock--> IDLE
 *                   |  ^  |            |  ^                (node to reaper)
 *     no parent --> PARENTS |   not first |  | pred deleted
 *     lost reply --> FINDING (by uuid)    v  |
 *                                  WATCHING --> WAITING
 *
 *   Give-up (timeout, cancel, error, free) in any phase: when the node is
 *   known it goes to the reaper (reaper.c: deletes it, retrying across
 *   reconnects) and the callback fires after the reaper's first attempt;
 *   while a create is in flight the give-up waits for its reply, and a
 *   lost reply sends the uuid prefix to the reaper, which finds and
 *   deletes whatever the create made.
 *
 * Callbacks of client operations carry a small context with the
 * attempt number they belong to; `attempt` is bumped whenever an
 * acquisition ends or restarts, so replies to an older attempt are
 * recognised and dropped.  Watches carry `gen` the same way.
 *
 * Locking: each engine has a mutex (the two sides of a read-write lock
 * share one).  Client calls are made with it held (the client never calls
 * back from inside a call); user callbacks are collected in a struct
 * rcp_out and fired after it is released.  Lock order: engine mutex, then
 * a fan's (fan.c), then the client's, then the registry's or the timer's. */
#ifndef TB_RCP_H
#define TB_RCP_H

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/common.h"
#include "tumbler/recipes.h"

#define RCP_UUID_LEN 36
#define RCP_PREFIX   "_c_"

/* ---- util.c ---- */
void rcp_uuid(char out[RCP_UUID_LEN + 1]);
int64_t rcp_now_ms(void);
/* What is left to `deadline` (rcp_now_ms clock) in ms: -1 when it is
 * < 0 (none), 0 once it has passed. */
int rcp_ms_left(int64_t deadline);
char *rcp_strdup(const char *s);
char *rcp_join(const char *parent, const char *name);
/* The parent of an absolute path ("/" for "/a"), allocated. */
char *rcp_dirname(const char *path);
/* Default node data: "<hostname>:<pid>". */
void rcp_default_value(char *buf, size_t cap, size_t *len);
int rcp_path_ok(const char *path);
/* Drops one of the references counted in *refs under mu: 1 when it was the
 * last, and the caller frees the object. */
int rcp_unref(pthread_mutex_t *mu, int *refs);

/* ---- kinds.c: what a lock's children are ---- */
/* The bit of a TB_NODE_* kind in a set of kinds. */
#define RCP_KIND(k) (1u << (unsigned)(k))
/* The kinds that queue together on one path (flock's rule). */
#define RCP_LOCK_KINDS                                                         \
    (RCP_KIND(TB_NODE_MUTEX) | RCP_KIND(TB_NODE_WRITE) |                       \
     RCP_KIND(TB_NODE_READ) | RCP_KIND(TB_NODE_KAZOO_LOCK) |                   \
     RCP_KIND(TB_NODE_KAZOO_READ))

/* One child of a lock's parent, parsed. */
struct rcp_child {
    const char *name;
    int64_t seq;
    int kind; /* TB_NODE_* */
};
/* Keeps the children whose kind is in the set `kinds`, sorted by sequence
 * number; *other (may be NULL) gets the first child of any other kind, or
 * NULL.  `out` has room for v->count entries; returns how many were
 * kept. */
int rcp_children_sort(const struct tb_strings *v, unsigned kinds,
                      struct rcp_child *out, const char **other);

/* ---- registry.c: state forwarding and the callback thread ---- */
struct rcp_client;
struct rcp_reg {
    struct tb_queue q;         /* in the client's list */
    struct rcp_client *client; /* NULL when not registered */
    void (*on_state)(struct rcp_reg *r, int state);
    void (*ref)(struct rcp_reg *r);
    void (*unref)(struct rcp_reg *r);
};
int rcp_reg_attach(struct rcp_reg *r, struct tb_client *c);
void rcp_reg_detach(struct rcp_reg *r);
/* 1 if called on the handle's I/O thread (libtumbler's driver.c), where
 * every callback of a thread-driven handle runs. */
int tb__on_io_thread(struct tb_client *c);

/* ---- timer.c: one thread for asynchronous timeouts ---- */
struct rcp_timer {
    struct tb_queue q;
    int64_t deadline;
    int armed;
    unsigned tag;
    /* Runs on the timer thread with the tag of the arming that fired
     * (the timer may be armed again meanwhile). */
    void (*fn)(struct rcp_timer *t, unsigned tag);
};
int rcp_timer_arm(struct rcp_timer *t, int64_t deadline, unsigned tag);
/* 1 if it was disarmed before firing (fn will not run). */
int rcp_timer_disarm(struct rcp_timer *t);

/* ---- wait.c: synchronous forms ---- */
struct rcp_wait {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done;
    int rc;
    int64_t token;
    void *ptr;
};
void rcp_wait_init(struct rcp_wait *w);
void rcp_wait_destroy(struct rcp_wait *w);
/* Completes a wait (from a callback). */
void rcp_wait_done(struct rcp_wait *w, int rc, int64_t token, void *ptr);
/* Ready-made callbacks whose data is a struct rcp_wait. */
void rcp_wait_acquire_cb(int rc, int64_t token, void *data);
void rcp_wait_done_cb(int rc, void *data);
/* Blocks until done.  At `deadline` (ms, rcp_now_ms clock; < 0: none),
 * calls give_up(arg) once and keeps waiting for the completion it
 * causes.  Call rcp_sync_check before starting the operation. */
int rcp_wait(struct tb_client *c, struct rcp_wait *w, int64_t deadline,
             void (*give_up)(void *arg), void *arg);
/* 0 if a sync call may block here; TB_EINVAL on the callback thread. */
int rcp_sync_check(struct tb_client *c);
/* TB_EINVAL if an asynchronous positive timeout cannot be timed here
 * (loop mode). */
int rcp_async_timeout_check(struct tb_client *c, int timeout_ms);
/* The synchronous form of an asynchronous call: rcp_sync_check, then
 * start(arg, 0 or -1, w), whose callback completes `w`; at timeout_ms > 0
 * give_up(arg) once, and the wait goes on for the callback.  Returns
 * w->rc (or start's or the check's error); `w` is initialised and
 * destroyed here, its result fields kept. */
int rcp_sync_run(struct tb_client *c, struct rcp_wait *w, int timeout_ms,
                 int (*start)(void *arg, int timeout_ms, struct rcp_wait *w),
                 void (*give_up)(void *arg), void *arg);

/* ---- reaper.c: deletes nodes, retrying across reconnects ---- */
/* Deletes our ephemeral node at `path`.  `czxid` is its create's zxid
 * when the name may be someone else's too (a non-fair lock's PATH, a
 * queue's claim): the reaper looks before it deletes, and only that node
 * goes; 0 for a name ours alone (or a czxid unknown: any node of this
 * session there), deleted at once.  `done` (may be NULL)
 * fires once: with wait_final 0 after the first attempt (the reaper keeps
 * retrying on connection loss), else with the final outcome: 0 when the
 * node is gone by our delete, TB_ENONODE if it was already gone, or the
 * session's end (TB_ESESSIONEXPIRED, TB_ECLOSING). */
int rcp_reap(struct tb_client *c, const char *path, int64_t czxid,
             int wait_final, tb_done_cb done, void *data);
/* Creates `path` (`mode`) and its missing ancestors as containers
 * (pipelined); `done` gets 0 or the first error other than
 * TB_ENODEEXISTS. */
int rcp_mkparents(struct tb_client *c, const char *path, int mode,
                  tb_done_cb done, void *data);
/* How many times a create makes its missing parents before it gives up
 * with TB_ENONODE: each time means the server reaped a parent in the
 * moment between its making and the create. */
#define RCP_PARENT_TRIES 10

/* Creates `path` (`mode`, open ACL), and its missing parents as
 * containers if the create finds them missing; `done` gets the create's
 * result (TB_ENODEEXISTS included). */
int rcp_create_in(struct tb_client *c, const char *path, const void *value,
                  size_t len, int mode, tb_done_cb done, void *data);

/* ---- fan.c: several requests answered as one ---- */
/* begin (NULL: no memory), then for each request rcp_fan_sent(f, the
 * call's return) while it returns 0, then rcp_fan_end: 0 and `done` later
 * with the first error, once every request sent was answered through
 * rcp_fan_answer; or, when none could be sent, that error now and no
 * `done`.  Between begin and end the sender holds the fan's lock. */
struct rcp_fan;
struct rcp_fan *rcp_fan_begin(tb_done_cb done, void *data);
int rcp_fan_sent(struct rcp_fan *f, int rv);
int rcp_fan_end(struct rcp_fan *f);
void rcp_fan_answer(struct rcp_fan *f, int rc);

/* ---- nodewait.c: until a node exists, or is gone ---- */
struct rcp_nw;
enum { RCP_NW_GONE = 0, RCP_NW_EXISTS = 1, RCP_NW_CHILDREN = 2 };
/* Waits until `path` exists (RCP_NW_EXISTS) or does not (RCP_NW_GONE); `cb`
 * gets 0, TB_ETIMEDOUT after timeout_ms (0: one look; < 0: none; > 0 needs the
 * I/O thread), the give-up's rc, or the session's end.  With `keep`, the
 * caller also holds the wait (for rcp_nw_give_up) until rcp_nw_release. */
int rcp_nw_start(struct tb_client *c, const char *path, int want,
                 int timeout_ms, tb_done_cb cb, void *data,
                 struct rcp_nw **keep);
/* One node of a wait; RCP_NW_CHILDREN: until the children of `path`
 * change from those whose parent's cversion was `cversion` (TB_ENONODE if
 * `path` is missing). */
struct rcp_nw_node {
    const char *path;
    int want;
    int64_t cversion;
};
#define RCP_NW_MAX 2
/* The same, for the first of `n` (up to RCP_NW_MAX) nodes: 0 once one is
 * as wanted, or the first error. */
int rcp_nw_start_any(struct tb_client *c, const struct rcp_nw_node *v, int n,
                     int timeout_ms, tb_done_cb cb, void *data,
                     struct rcp_nw **keep);
void rcp_nw_give_up(struct rcp_nw *w, int rc);
void rcp_nw_release(struct rcp_nw *w);
/* The same, blocking (any timeout, both modes); its result. */
int rcp_nw_sync(struct tb_client *c, const char *path, int want,
                int timeout_ms);

/* ---- counter.c, fence.c: their I/O-free parts ---- */
/* Curator's DistributedAtomicLong bytes: 8, big-endian (ByteBuffer). */
void rcp_counter_encode(int64_t v, unsigned char b[8]);
/* NULL or empty: 0; 8 bytes: the value; else TB_EDATAINCONSISTENCY. */
int rcp_counter_decode(const void *p, size_t len, int64_t *v);
/* How many of a lock's sorted children hold now: the first, and while
 * they are shared, every reader before the first exclusive node. */
int rcp_holders(const struct rcp_child *v, int n);

/* ---- cbarrier_gen.c: a cyclic barrier's generations ---- */
#define RCP_CB_END    "end"
#define RCP_CB_PASSED "passed"
#define RCP_CB_BROKEN "broken"
/* "PATH/gen-<k, 10 digits>", allocated. */
char *rcp_cb_gen_path(const char *path, int64_t k);
/* K of a generation's name "gen-K", else -1. */
int64_t rcp_cb_gen(const char *name);
/* The highest generation among a barrier's children, -1 if none. */
int64_t rcp_cb_highest_gen(const struct tb_strings *v);
/* The sequence number of a party's name "party-<uuid>-<seq>", else -1. */
int64_t rcp_cb_party_seq(const char *name);
/* What one look at a generation's children says (`cversion` the
 * generation's, `mine` our party's name or NULL): decided ("end" there);
 * our node gone; a party left while it was open (break it); all arrived
 * (pass it; a party with two nodes counts once); wait. */
enum { RCP_CB_DECIDED, RCP_CB_GONE, RCP_CB_BREAK, RCP_CB_PASS, RCP_CB_WAIT };
int rcp_cb_decide(const struct tb_strings *v, int64_t cversion,
                  const char *mine, int parties);
/* Where our party (`mine`, one of its nodes) is in a look at an open
 * generation: *below the parties that arrived before it, *pred (a name
 * in v) the nearest other party's node below ours, NULL if none. */
void rcp_cb_place(const struct tb_strings *v, const char *mine, int64_t *below,
                  const char **pred);
/* Removes generation k's "end" and node if it is decided, has no party
 * left and is not the current one (a multi checking that generation
 * `later`, above k, exists: not always k+1, which may be gone already;
 * `later` < 0: no check, k passed, so k+1 was made with its "end");
 * `done` (NULL: nobody waits) gets the multi's answer. */
int rcp_cb_clean_gen(struct tb_client *c, const char *path, int64_t k,
                     int64_t later, tb_multi_cb done, void *data);
/* Removes generation k, below the current one `later`, whoever left it:
 * decided (rcp_cb_clean_gen), or empty (a new barrier's arrival that
 * found no generation made the first late, once the others had passed
 * it and removed it).  Nobody waits for it. */
void rcp_cb_clean_below(struct tb_client *c, const char *path, int64_t k,
                        int64_t later);
/* tb_cbarrier_reset and tb_cbarrier_waiting_sync of the barrier at PATH. */
int rcp_cb_reset(struct tb_client *c, const char *path, tb_done_cb cb,
                 void *data);
int rcp_cb_waiting(struct tb_client *c, const char *path, int *waiting);

/* ---- the engine ---- */
enum rcp_phase {
    LK_IDLE,
    LK_CREATING,
    LK_PARENTS,
    LK_FINDING,
    LK_CHECKING,
    LK_WATCHING,
    LK_WAITING,
    LK_HELD,
    LK_ABORTING, /* the node is with the reaper; the callback is due */
};

struct tb_mutex;
/* Given the sorted children and our index, 1 if we hold; 0 and *watch
 * the index of the node to wait for, or -1 to wait for any change of the
 * parent's children; or an error that ends the acquisition. */
typedef int (*rcp_pred)(struct tb_mutex *m, const struct rcp_child *v, int n,
                        int me, int *watch);

struct rcp_cfg {
    const char *name; /* node name after the uuid: "lock-", "latch-" ... */
    unsigned kinds;   /* the kinds of node queued with ours (RCP_KIND) */
    int strict;       /* a child of any other kind refuses the lock */
    int fair;         /* 0: the non-fair single node */
    rcp_pred pred;
    int children_watch; /* wait by watching the parent's children */
};
/* lk_cfg.c: the rows */
extern const struct rcp_cfg rcp_cfg_mutex, rcp_cfg_nonfair, rcp_cfg_read,
    rcp_cfg_write, rcp_cfg_latch, rcp_cfg_lease;

/* User callbacks decided under the engine's mutex, fired after it. */
struct rcp_out {
    tb_acquire_cb acb;
    void *adata;
    int arc;
    int64_t atoken;
    tb_done_cb dcb;
    void *ddata;
    int drc;
    int nstates;
    int states[4];
    int64_t stoken;
    tb_lock_state_cb scb;
    void *sdata;
    void (*session_cb)(void *data);
    void *session_data;
    struct tb_mutex *ld_lost; /* a grant lost in its lock delay (a ref) */
    struct tb_mutex *granted; /* acb's, if arc is 0 (a ref) */
};

struct tb_mutex {
    pthread_mutex_t own_mu;
    pthread_mutex_t *mu; /* &own_mu, or the read-write lock's shared one */
    int refs;            /* user + each callback context + timer */
    struct rcp_reg reg;
    struct tb_client *c;
    int c_closed; /* the client is closing or gone: no calls into it */
    const struct rcp_cfg *cfg;
    struct tb_mutex *peer; /* rw lock: the other side */
    int is_read;
    int max_leases;
    int embedded; /* part of a composite: tb_mutex_free refuses */
    char *path;   /* fair: parent of the nodes; non-fair: the node */
    char *parent; /* where parents are created from (fair: path) */
    void *uvalue; /* the user's node data */
    size_t ulen;
    void *value; /* what is created: uvalue (non-fair: prefix first) */
    size_t len;
    tb_lock_state_cb scb;
    void *sdata;
    void (*session_cb)(void *data); /* a new session connected */
    void *session_data;
    /* Called when the last reference goes, after every callback: lets a
     * composite free what its callbacks use. */
    void (*on_destroy)(void *data);
    void *destroy_data;
    int64_t seen_session;

    /* The acquisition. */
    int phase;
    unsigned acq_id; /* bumped per acquisition; the timer's tag */
    unsigned attempt;
    unsigned gen;
    char uuid[RCP_UUID_LEN + 1];
    char *prefix;          /* "_c_<uuid>-<name>" (fair) or "_c_<uuid>" (data) */
    char *node;            /* our node's full path, NULL if unknown */
    struct rcp_ctx *own_w; /* our node's watch, until its final call */
    struct rcp_ctx *pred_w; /* the watch we wait on, until its final call */
    char *pred_path;
    int pred_children; /* pred_w watches pred_path's children */
    int64_t czxid;
    char *conflict; /* what refused the last acquisition (lk_other.c) */
    int try_only;
    int create_lost; /* a create of this acquisition lost its reply */
    int abort_rc;
    int parent_tries;
    int restarts;
    tb_acquire_cb acb;
    void *adata;
    struct rcp_timer timer;

    /* Lock-delay (lk_delay.c): the delay, and the acquisition in its
     * steps after the engine's grant (NULL: none). */
    int lock_delay_ms;
    struct rcp_ld *ld;

    /* The hold. */
    int holds;
    int lstate;
    int64_t token;
    int64_t session;

    struct tb_recipe_stats st;
};

/* The engine's files call one way: lk.c -> lk_acquire.c -> lk_state.c ->
 * lk_ctx.c (lk_other.c, called by lk_acquire.c, ends an acquisition it
 * refuses through rcp_lk_fail). */

/* lk.c: the handle, what the recipes call */
int rcp_lk_new(struct tb_mutex **out, struct tb_client *c, const char *path,
               const struct rcp_cfg *cfg, const struct tb_lock_options *o);
/* The read engine of the read-write lock whose write engine is `wr`. */
int rcp_lk_new_read(struct tb_mutex **out, struct tb_client *c,
                    const char *path, const struct tb_lock_options *o,
                    struct tb_mutex *wr);
/* Frees as tb_mutex_free does (also embedded engines). */
void rcp_lk_free(struct tb_mutex *m);
int rcp_lk_lock(struct tb_mutex *m, int timeout_ms, tb_acquire_cb cb,
                void *data);
/* Under m->mu, the handle holding: one more hold, told by cb from the
 * I/O thread (TB_ELOCKLOST if lost). */
int rcp_lk_reenter_locked(struct tb_mutex *m, tb_acquire_cb cb, void *data);
int rcp_lk_unlock(struct tb_mutex *m, tb_done_cb cb, void *data);

/* Under m->mu: the holds the caller was told of.  None while a grant
 * waits out its lock delay: it is not the caller's yet (lk_delay.c). */
static inline int rcp_lk_told_holds(const struct tb_mutex *m)
{
    return m->ld != NULL ? 0 : m->holds;
}

/* lk_acquire.c: the acquisition, and the watch on our own node */
int rcp_lk_start(struct tb_mutex *m, int timeout_ms, tb_acquire_cb cb,
                 void *data);
/* Gives a pending acquisition up with `rc`; TB_EINVAL if none.  The
 * _locked form under m->mu, its callbacks to fire in `o`. */
int rcp_lk_abort(struct tb_mutex *m, int rc);
int rcp_lk_abort_locked(struct tb_mutex *m, int rc, struct rcp_out *o);
void rcp_lk_fail(struct tb_mutex *m, int rc, struct rcp_out *o);
void rcp_lk_on_timer(struct rcp_timer *t, unsigned tag);
void rcp_lk_drop_own_watch(struct tb_mutex *m);
void rcp_lk_restart(struct tb_mutex *m, struct rcp_out *o);
void rcp_lk_hold(struct tb_mutex *m, struct rcp_out *o);
/* Non-fair, CHECKING: the exists on the node we created failed (rc). */
void rcp_lk_recheck_own(struct tb_mutex *m, int rc, struct rcp_out *o);
/* After an operation that carried x->w: frees the watch context unless
 * the server set the watch. */
void rcp_lk_settle_watch(struct rcp_ctx *x, int set);
/* lk_own.c: sets the watch on m->node (an exists); 0 or a TB_E* code. */
int rcp_lk_watch_own(struct tb_mutex *m);

/* lk_state.c: what a holder is told */
void rcp_lk_set_lstate(struct tb_mutex *m, int s, struct rcp_out *o);
/* The holder told the handle's state as it is (lock held). */
void rcp_lk_tell_state(struct tb_mutex *m, struct rcp_out *o);
/* 1 if it holds and has not learnt that the lock is lost. */
int rcp_lk_holding(const struct tb_mutex *m);
int rcp_lk_state(struct tb_mutex *m);
/* 1 if `st`, of our node's path, is our hold's node: the token's czxid,
 * our session's ephemeral. */
int rcp_lk_node_ours(const struct tb_mutex *m, const struct tb_stat *st);
/* What rcp_reap is given to delete our node and no other: a non-fair
 * lock's node is PATH, whoever made it last (its czxid); a fair lock's
 * name is ours alone (0). */
int64_t rcp_lk_shared_czxid(const struct tb_mutex *m);
void rcp_lk_on_state(struct rcp_reg *r, int state);
void rcp_lk_note_session_end(struct tb_mutex *m, int rc);
int rcp_lk_session_over(int rc);

/* lk_ctx.c: references, callback contexts, user callbacks */
void rcp_lk_ref(struct tb_mutex *m);
void rcp_lk_unref(struct tb_mutex *m);
/* Under the lock, never the last reference (the caller holds one). */
void rcp_lk_unref_locked(struct tb_mutex *m);
void rcp_out_fire(struct rcp_out *o);
struct rcp_ctx {
    struct tb_mutex *m;
    unsigned attempt;
    unsigned gen;
    struct rcp_ctx *w; /* the watch this operation sets, if any */
};
struct rcp_ctx *rcp_ctx_new(struct tb_mutex *m);
/* Takes the engine lock for a callback; 0 if the context is stale. */
int rcp_ctx_enter(struct rcp_ctx *x);
void rcp_ctx_leave(struct rcp_ctx *x, struct rcp_out *o);
void rcp_ctx_free_locked(struct rcp_ctx *x);

/* lk_delay.c: lock-delay around the engine.  rcp_ld_lock acquires and,
 * if the previous holder died holding, waits the delay (deadline: the
 * caller's, < 0 none); rcp_ld_abort gives either step up;
 * rcp_ld_record_release is the release's record (lock held). */
struct rcp_ld;
int rcp_ld_lock(struct tb_mutex *m, int timeout_ms, int64_t deadline,
                tb_acquire_cb cb, void *data);
int rcp_ld_abort(struct tb_mutex *m, int rc);
void rcp_ld_record_release(struct tb_mutex *m);

/* lk_other.c: refusing a path that holds what we cannot queue with.  Each
 * returns 1 if it refused (the acquisition then fails with
 * TB_EFOREIGNLOCK and m->conflict says why), else 0. */
/* `other`: a child of no kind in cfg->kinds (NULL: none). */
int rcp_lk_refuse_children(struct tb_mutex *m, const char *other,
                           struct rcp_out *o);
/* `rc` of a create under the parent, or of making the parents. */
int rcp_lk_refuse_ephemeral(struct tb_mutex *m, int rc, int made_parents,
                            struct rcp_out *o);
/* Non-fair: `st` is PATH's, which exists and is not ours. */
int rcp_lk_refuse_nonfair(struct tb_mutex *m, const struct tb_stat *st,
                          struct rcp_out *o);
void rcp_lk_clear_conflict(struct tb_mutex *m);
/* Copies a conflict sentence to buf: 0, or TB_ENONODE if there is none. */
int rcp_copy_conflict(const char *conflict, char *buf, size_t cap);

#endif
