/* The replicated state machine: applies committed txns (raft entries) to the
 * data tree and the session table with Apache ZooKeeper 3.8's semantics,
 * including its error precedence, and reports every result and watch
 * trigger through callbacks.
 *
 * Deterministic: the same sequence of (zxid, entry) gives the same tree,
 * sessions, results and snapshot bytes on every replica and after every
 * restart.  No I/O, no clock: time comes from the txn.  Each apply is
 * O(size of the txn) (closeSession: O(k log k) in its k ephemerals).
 *
 * Business errors (NoNode, BadVersion, ...) are results, never failures of
 * fsm_apply, and every txn consumes its zxid, failed or not.  A txn that
 * cannot be decoded gives TB_EMARSHALLING. */
#ifndef TB_FSM_H
#define TB_FSM_H

#include "proto/proto.h"
#include "tree/acl.h"
#include "tree/tree.h"

struct fsm;

/* Callbacks, all optional, called synchronously from fsm_apply after the
 * change is committed, in this order: every `event`, then `session`, then
 * `result` once.  Views passed to them are valid only during the call. */
struct fsm_hooks {
    void *data;
    /* A watch trigger (TB_EVENT_*) on `path`; node_acl is the ACL of the
     * node the event is about (for deletes, the ACL it had), for READ
     * filtering of deliveries.  For a multi: the events of all sub-ops in
     * order, and only when it succeeded. */
    void (*event)(void *data, int type, struct tb_str path,
                  struct tb_vec node_acl);
    /* The result of `txn` (views into the entry).  body is the response
     * record ZooKeeper sends when rc == 0 (CreateResponse, Create2Response,
     * Stat, MultiResponse, session_resp, or empty); empty when rc != 0,
     * except for multi, whose rc is 0 and whose body lists per-op results.
     * An entry that is not even a txn reports a zeroed txn. */
    void (*result)(void *data, const struct tb_txn *txn, int64_t zxid, int rc,
                   const uint8_t *body, size_t len);
    /* A session was created (opened = 1) or closed (opened = 0). */
    void (*session)(void *data, int64_t session_id, int32_t timeout_ms,
                    int opened);
    /* A write left the quota on `path` above its soft limit `what`: with
     * the events, only if the write stays (not for a multi's ops undone).
     * Or a hard limit refused one: at once, during the apply, as the
     * refusal stands whatever becomes of the rest (see tree_on_quota). */
    tree_quota_cb quota;
};

int fsm_init(struct fsm **out, const struct fsm_hooks *h);
void fsm_close(struct fsm *f);
void fsm_set_hooks(struct fsm *f, const struct fsm_hooks *h);

/* Applies the committed entry at log index `index` (an encoded struct
 * tb_txn; trailing padding is ignored).  Its zxid is `index` until a
 * TB_OP_NEWEPOCH txn moves zxids ahead, then `index` plus the distance it
 * moved them (kept in snapshots).  Returns 0, or TB_ENOMEM when memory ran
 * out, in which case nothing changed and no hook was called. */
int fsm_apply(struct fsm *f, int64_t index, const void *entry, size_t len);

/* The tree, for reads.  Mutating it bypasses the log: don't, except in
 * tests and tools. */
struct tree *fsm_tree(const struct fsm *f);
/* The zxid of the last applied entry (0 before any). */
int64_t fsm_last_zxid(const struct fsm *f);
/* The zxid the entry at log index `index` takes, if no new epoch comes
 * before it. */
int64_t fsm_zxid_of(const struct fsm *f, int64_t index);

/* The id a createSession txn applied at `zxid` gives its session. */
int64_t fsm_session_id_for(int64_t zxid);

struct fsm_session_info {
    int64_t id;
    int32_t timeout_ms;
    uint8_t passwd[16];
};

/* 1 and *out filled if the session exists, else 0. */
int fsm_session_get(const struct fsm *f, int64_t id,
                    struct fsm_session_info *out);
uint64_t fsm_session_count(const struct fsm *f);
/* Sessions in creation order; stops when cb returns non-zero. */
int fsm_session_foreach(const struct fsm *f,
                        int (*cb)(void *data, const struct fsm_session_info *s),
                        void *data);
/* The ephemeral nodes a session owns (any order); see tree_node_path. */
int fsm_session_ephemerals(const struct fsm *f, int64_t id, tree_node_cb cb,
                           void *data);
uint64_t fsm_ephemeral_count(const struct fsm *f);

/* Snapshot of tree + sessions + last zxid (format in fsm_snap.c).
 * fsm_snapshot returns 0 or TB_ENOMEM (w->oom).  fsm_restore replaces the
 * whole state, or on error (TB_EDATAINCONSISTENCY for a corrupt or
 * truncated snapshot, TB_ENOMEM) leaves it untouched. */
int fsm_snapshot(const struct fsm *f, struct tb_wbuf *w);
int fsm_restore(struct fsm *f, const void *buf, size_t len);

#endif
