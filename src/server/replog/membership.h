/* Several members changed as one (membership.c): what a reconfig with a
 * whole member list, or joiners with role changes, asks of raft, which
 * changes one server at a time. */
#ifndef TB_REPLOG_MEMBERSHIP_H
#define TB_REPLOG_MEMBERSHIP_H

#include "server/replog/replog.h"

/* One step: a server joins (address set, its raft address) as a voter or
 * a standby, or a member's role changes (address NULL) to voter or to
 * standby, the other of the two being its role before. */
struct replog_member_step {
    int id;
    const char *address;
    int voter;
};

/* Makes the steps in order on the leader (replog_member_add or _assign
 * each), all or nothing: when one fails, the steps made are undone, last
 * first (a joiner removed, a role given back), and a joiner its failure
 * left a spare is removed, before cb fires once with the failure's status
 * (as replog_member_add's).  cb(0) once every step is committed.  With
 * leadership lost (TB_ECONNECTIONLOSS) nothing can be undone here: the
 * next leader finds raft's members and the configuration apart.  An undo
 * that fails is logged and the others are still tried.  The steps are
 * copied.  0, or a TB_E* code and cb does not fire (nothing changed). */
int replog_members_change(struct replog *l,
                          const struct replog_member_step *steps, unsigned n,
                          void (*cb)(void *arg, int status), void *arg);

#endif
