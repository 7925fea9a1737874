/* The queues' handle, shared by queue.c (the handle, put, consume,
 * release, the synchronous forms) and queue_take.c (take and peek). */
#ifndef TB_RECIPES_QUEUE_H
#define TB_RECIPES_QUEUE_H

#include "recipes/rcp.h"

#define PREFIX "entry-"

enum { Q_TAKE, Q_PEEK };

struct tb_dqueue {
    pthread_mutex_t mu;
    int refs; /* the user's, and an operation's */
    int freed;
    struct tb_client *c;
    int locking;
    char *path, *entries, *taken;
    char id[RCP_UUID_LEN + 1]; /* a claim's data */
    int paths_made;

    /* The take or peek in progress. */
    int busy;
    int op;
    int gave_up;
    int64_t deadline; /* < 0: none */
    tb_item_cb cb;
    void *data;
    char **cand; /* this round's candidates, sorted */
    int ncand, icand;
    int64_t cv_entries, cv_taken;
    int claim_retried;
    struct rcp_nw *nw; /* the wait for a change, NULL when none is out */

    char *claimed; /* locking: the name of the entry we hold */
    int64_t claimed_czxid; /* its claim's (0: not known) */
    int64_t claimed_session; /* its claim's owner */
};

void rcp_q_unref(struct tb_dqueue *q);
/* Makes the queue's own nodes once per handle (lock held): 1 if made
 * already, else 0 and `done` later, or an error now. */
int rcp_q_make_paths(struct tb_dqueue *q, tb_done_cb done, void *data);
/* Starts a take or a peek; `cb` gets the item. */
int rcp_q_op_start(struct tb_dqueue *q, int op, int timeout_ms, tb_item_cb cb,
                   void *data);
/* Gives the take or peek in progress up with `rc`. */
void rcp_q_give_up(struct tb_dqueue *q, int rc);

#endif
