/* What a leader does to bring raft's members back to the configuration
 * applied (/zookeeper/config, else the server.N lines) when a reconfig
 * was cut short: its leader lost after some of its steps (joiners added,
 * roles changed) and before its outcome was logged, or a leaver not
 * removed.  proc/reconfig.c's tick makes one step at a time; the decision
 * is here (reconcile.c), free of the server's state, so that a cluster
 * test over raft's fixture (tests/unit/test_cluster.c) drives the same
 * one.
 *
 * The order, one step a tick:
 *
 *   1. a server raft has and the configuration does not is removed (in
 *      raft's order);
 *   2. a participant that is not a voter in raft becomes one, before
 *   3. a voter in raft that the configuration makes an observer becomes a
 *      standby, so that the configuration's voters vote throughout;
 *   4. last, when the configuration leaves the leader itself out or makes
 *      it an observer, it hands leadership to another voter, whose tick
 *      makes the change.
 *
 * A leader never takes its own vote away: in libraft 0.15 a server stops
 * standing for election as soon as its log holds an entry that takes its
 * vote, committed or not.  A leader that logged such an entry and lost its
 * leadership before the entry reached another member would hold the
 * longest log and not stand, and the others, should they need its vote,
 * would elect no one.  A leader that stays, proposing another's removal,
 * holds the entry too and can stand.
 *
 * A server in the configuration and not in raft is left alone. */
#ifndef TBD_PROC_RECONCILE_H
#define TBD_PROC_RECONCILE_H

#include <stddef.h>

#include "server/replog/replog.h"

/* A server of the configuration: a participant votes, an observer not. */
struct reconcile_member {
    int id;
    int voter;
};

enum reconcile_op {
    RECONCILE_NONE,
    RECONCILE_REMOVE,  /* replog_member_remove(id) */
    RECONCILE_ASSIGN,  /* replog_member_assign(id, voter) */
    RECONCILE_HANDOVER /* replog_transfer: id is the leader's own */
};

struct reconcile_step {
    enum reconcile_op op;
    int id;
    int role;  /* its role in raft now (REPLOG_*) */
    int voter; /* RECONCILE_ASSIGN: the role it gets */
};

/* Whether a leader may change raft's members to match the configuration
 * now: it leads, an entry of its own term is applied (before that, a
 * change an earlier leader stored on a minority could still win and
 * overwrite this one's: Raft's single-server changes need it), raft has
 * no change in flight, and every entry its log holds is applied (an
 * outcome committed and not yet applied here would look missing).  The
 * caller adds its own change in flight. */
int reconcile_may(struct replog *l);

/* Whether raft's members (on the leader `self`) are apart from the
 * configuration's (cfg[0..ncfg)): the tick has a step to make. */
int reconcile_apart(struct replog *l, const struct reconcile_member *cfg,
                    size_t ncfg, int self);

/* The next step from raft's members (rm[0..n), replog_members on the
 * leader `self`) to the configuration's (cfg[0..ncfg)), or
 * RECONCILE_NONE when they match. */
struct reconcile_step reconcile_next(const struct replog_member *rm, unsigned n,
                                     const struct reconcile_member *cfg,
                                     size_t ncfg, int self);

#endif
