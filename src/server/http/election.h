/* The time each election takes, as seen by one member: ZooKeeper's
 * election_time summary (its time from going LOOKING to leading or
 * following), for raft.
 *
 * On a member, an election runs from losing or lacking a leader to naming
 * one again:
 *   - it begins when the member starts (it knows no leader yet), or when
 *     an observation names no leader, another leader, or a higher term
 *     than the last one that named a leader (raft begins every election
 *     with a new term: the member stood or voted);
 *   - if the member lost its link to that leader shortly before
 *     (election_lost, within ELECTION_HINT_MS), the election began then,
 *     as ZooKeeper's does when its follower's socket breaks: raft notices
 *     a dead leader only later, and its poll later still;
 *   - it ends at the first observation naming a leader, and its time goes
 *     into `hist`.
 * A link lost and made again to the same leader in the same term is no
 * election: the hint expires.  Observations come from a timer, so a time
 * is late by up to its period.
 *
 * Plain data, no clock: the caller passes the server's own (tbd_now_ms),
 * which tests may drive. */
#ifndef TB_ELECTION_H
#define TB_ELECTION_H

#include <stdint.h>

#include "common/hist.h"

/* How long a lost link may precede the observation that an election
 * began: twice raft's longest election timeout at its default, and the
 * leaderless bound of peer_follower.c. */
#define ELECTION_HINT_MS 2000

struct election_timer {
    int running; /* an election is on: began at since_ms */
    uint64_t since_ms;
    uint64_t lost_ms; /* the link to the leader was lost then; 0: not */
    int leader;       /* the leader last named (0: none yet) ... */
    uint64_t term;    /* ... in this term */
    struct hist hist; /* every election's time, in microseconds */
};

/* A member starting: it knows no leader, so an election is on. */
void election_start(struct election_timer *e, uint64_t now_ms);
/* The link to server `leader` was lost at now_ms: a hint only while that
 * is the leader last named (a link closed because another was named
 * meanwhile is none). */
void election_lost(struct election_timer *e, int leader, uint64_t now_ms);
/* What the member names now: `leader` (0: none) in `term`. */
void election_note(struct election_timer *e, int leader, uint64_t term,
                   uint64_t now_ms);

#endif
