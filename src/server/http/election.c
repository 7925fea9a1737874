/* Timing elections for the election_time summary (election.h). */
#include <string.h>

#include "server/http/election.h"

void election_start(struct election_timer *e, uint64_t now_ms)
{
    memset(e, 0, sizeof *e);
    e->running = 1;
    e->since_ms = now_ms;
}

void election_lost(struct election_timer *e, int leader, uint64_t now_ms)
{
    if (leader == 0 || leader != e->leader)
        return;
    /* the first loss stands for the election: a link to a dead leader is
     * tried again, and lost again, until raft names another */
    if (!e->running && e->lost_ms == 0)
        e->lost_ms = now_ms != 0 ? now_ms : 1;
}

void election_note(struct election_timer *e, int leader, uint64_t term,
                   uint64_t now_ms)
{
    if (!e->running) {
        if (leader != 0 && leader == e->leader && term == e->term) {
            /* still the same leader: a lost link was only that */
            if (e->lost_ms != 0 && now_ms - e->lost_ms > ELECTION_HINT_MS)
                e->lost_ms = 0;
            return;
        }
        e->running = 1;
        e->since_ms = e->lost_ms != 0 && e->lost_ms <= now_ms &&
                              now_ms - e->lost_ms <= ELECTION_HINT_MS
                          ? e->lost_ms
                          : now_ms;
    }
    e->lost_ms = 0;
    if (leader == 0)
        return;
    /* a clock that went back counts as no time, not as ages */
    hist_note(&e->hist,
              now_ms > e->since_ms ? (now_ms - e->since_ms) * 1000 : 0);
    e->running = 0;
    e->leader = leader;
    e->term = term;
}
