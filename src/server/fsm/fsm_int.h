/* The fsm's private state, shared by fsm.c (apply and hooks), fsm_ops.c
 * (the write operations), fsm_multi.c, fsm_session.c and fsm_snap.c. */
#ifndef TB_FSM_INT_H
#define TB_FSM_INT_H

#include "common/map.h"
#include "server/fsm/fsm.h"

struct fsm_session {
    struct tb_queue link; /* on fsm.sessions_list, creation order */
    int64_t id;
    int32_t timeout;
    uint8_t passwd[16];
};

/* The farthest zxids move ahead of log indexes (TB_OP_NEWEPOCH): far
 * beyond any epoch a repair makes, and index + bias cannot overflow. */
#define FSM_ZXID_BIAS_MAX (INT64_MAX / 4)

/* A watch trigger waiting for the apply to commit.  The path is copied
 * (the node may be gone by then) and the ACL reference is held.  Or, type
 * FSM_QUOTA_OVER, a quota left above its soft limit `what` (the path is
 * the quota's, no ACL): told only if the change it is about stays. */
#define FSM_QUOTA_OVER (-1)
struct fsm_event {
    int type;
    size_t path_off;
    size_t path_len;
    struct tree_acl *acl;
    const char *what;
    int64_t used, limit;
};

struct fsm {
    struct fsm_hooks h;
    struct tree *tree;
    int64_t last_zxid;
    int64_t zxid_bias;      /* the entry at log index i is zxid i + zxid_bias */
    struct tb_map sessions; /* id -> struct fsm_session */
    struct tb_queue sessions_list;

    /* The apply in progress; buffers are reused from one apply to the
     * next so that a steady state allocates only what the tree keeps. */
    const struct tb_txn *txn;
    int64_t zxid;
    int oom;             /* an allocation failed: abandon the apply */
    struct tb_wbuf body; /* the result record */
    struct tb_wbuf acl;  /* a fixed-up ACL list's elements */
    int32_t acl_n;
    struct tb_wbuf path;     /* a sequential node's full path */
    struct tb_wbuf ev_paths; /* event paths, back to back */
    struct fsm_event *ev;
    size_t nev;
    size_t ev_cap;
    struct tree_node **sorted; /* closeSession's ephemerals */
    size_t sorted_cap;
    /* Session-table changes, made only once nothing can fail any more. */
    struct fsm_session *opened;
    struct fsm_session *closed;
};

/* One create/delete/setData/setACL/check as a single txn or a multi sub-op.
 * They run the checks in ZooKeeper's order and return the first failing
 * code, 0 after applying, or TB_ENOMEM.  On success *node is the node to
 * report (created or changed), or NULL. */
/* Points the tree's callbacks at this fsm's hooks (a new or restored tree). */
void fsm__tree_hooks(struct fsm *f);
int fsm__create(struct fsm *f, int32_t type,
                const struct tb_create_ttl_req *req, struct tree_node **node);
int fsm__delete(struct fsm *f, const struct tb_delete_req *req);
int fsm__set_data(struct fsm *f, const struct tb_set_data_req *req,
                  struct tree_node **node);
int fsm__set_acl(struct fsm *f, const struct tb_set_acl_req *req,
                 struct tree_node **node);
int fsm__check(struct fsm *f, const struct tb_check_req *req);
int fsm__delete_container(struct fsm *f, struct tb_str path);
/* Deletes every ephemeral node of `owner` (closeSession). */
int fsm__remove_ephemerals(struct fsm *f, int64_t owner);

int fsm__multi(struct fsm *f, struct tb_str body);
/* fsm_reconfig.c: a reconfig's outcome (body reconfig_txn). */
int fsm__reconfig(struct fsm *f, struct tb_str body);
int fsm__create_session(struct fsm *f, struct tb_str body);
int fsm__close_session(struct fsm *f);
/* Makes the deferred session-table change (cannot fail) and says which
 * session hook is due. */
struct fsm_session_change {
    int due;
    int64_t id;
    int32_t timeout;
    int opened;
};
void fsm__sessions_commit(struct fsm *f, struct fsm_session_change *c);
void fsm__sessions_abort(struct fsm *f);
struct fsm_session *fsm__session(const struct fsm *f, int64_t id);
void fsm__sessions_free(struct tb_map *m, struct tb_queue *list);

/* Queues a watch trigger (sets f->oom on allocation failure). */
void fsm__event(struct fsm *f, int type, struct tb_str path,
                struct tree_acl *acl);
/* Drops queued events (a failed multi). */
void fsm__events_drop(struct fsm *f);
/* The node's Stat appended to f->body. */
void fsm__put_stat(struct fsm *f, const struct tree_node *n);
/* The Stat of a node just created with `data`: a quota's stats node, which
 * counts its subtree once it exists, shows the data its creator gave, as
 * ZooKeeper takes the Stat before it counts. */
void fsm__put_created_stat(struct fsm *f, const struct tree_node *n,
                           struct tb_str data);

#endif
