/* One lock of any kind, acquired asynchronously (hold.c). */
#ifndef TB_CLI_HOLD_H
#define TB_CLI_HOLD_H

#include <tumbler/recipes.h>

#include "cli/cli.h"

enum hold_kind {
    HOLD_MUTEX, /* fair, or non-fair with `nonfair` */
    HOLD_READ,  /* read side of a read-write lock (--shared) */
    HOLD_WRITE, /* write side (--exclusive) */
    HOLD_SEM,   /* a lease of a semaphore of `max_leases` */
    HOLD_ELECT, /* leadership (fair, or non-fair with `nonfair`) */
};

/* Fill in the first block, then hold_new.  At all times `m` is set for
 * the mutex kinds, `sem` for HOLD_SEM, `el` for HOLD_ELECT. */
struct hold {
    int kind;
    int nonfair;
    int max_leases;
    int lock_delay_ms;      /* HOLD_MUTEX, fair: lock-delay; 0: none */
    int lost_on_disconnect; /* SUSPENDED counts as lost */
    const char *path;
    const char *value; /* node data; NULL: the library's "<host>:<pid>" */
    struct tb_client *c; /* hold_new's */

    struct tb_mutex *m;
    struct tb_rwlock *rw;
    struct tb_semaphore *sem;
    struct tb_lease *lease;
    struct tb_election *el;
    int io_held; /* I/O thread only: held at least once */
    int64_t granted_ms; /* cli_now_ms() of the grant, set on the I/O
                           thread before CLI_MSG_ACQUIRED is posted */
    int lost;    /* set on the I/O thread (atomically): a loss was posted */
};

int hold_new(struct hold *h, struct tb_client *c);
/* Starts the acquisition; CLI_MSG_ACQUIRED comes when it ends (for an
 * election only on success: the timeout is the caller's). */
int hold_start(struct hold *h, int timeout_ms);
/* HOLD_ELECT: whether the candidate waits behind another one, so that
 * giving up now gives nothing away (its leading, or its end, comes as
 * CLI_MSG_ACQUIRED); other kinds: 1. */
int hold_tried(struct hold *h);
/* cli_hold_check's `held` (child.h), `arg` the hold.  The round trip is a
 * sync of PATH, made again until it is answered or the hold is lost. */
int hold_check(void *arg, int64_t stopped_ms);
/* Gives the hold back, synchronously; TB_ELOCKLOST if it was lost,
 * also if only the hold's state callback said so (an election that lost
 * its leadership has nothing left to release). */
int hold_release(struct hold *h);
/* Cancels whatever is pending, returns what is held, frees. */
void hold_free(struct hold *h);
/* The path of the node that holds (mutex kinds), however long PATH is:
 * 0 and *node (malloc'd), TB_ENONODE (none) or TB_ENOMEM. */
int hold_node(struct hold *h, char **node);

#endif
