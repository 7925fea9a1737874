/* A member whose log this start made: its data directory was empty, and
 * the configuration names other voters (or a start after such a one, the
 * log still the bootstrap entry alone: replog__fresh_at_start).
 *
 * That is a first start of the ensemble, or a member whose data was lost
 * (a disk replaced, a directory wiped) started again as it was, without
 * joinEnsemble; nothing on this side tells the two apart.  In the second
 * case raft alone would let it lose acknowledged writes: with an empty
 * log it grants its vote to any candidate, also to one that lacks writes
 * this member had acknowledged and that the others' majority now lacks
 * without it (three members: a write on A and B, B wiped, A down; C, which
 * missed the write, asks B and wins, and the write is gone, A's copy
 * overwritten when A comes back).
 *
 * So until it has caught up with a leader, such a member votes only for a
 * candidate whose log is as new as its own (its last entry the first, the
 * bootstrap configuration): every member at a first start.  A candidate
 * with more, or any message showing a log beyond the first entry, is
 * evidence that the ensemble has data; from then on it votes for no one
 * until caught up.  Caught up is an AppendEntries with no entries from a
 * leader of at least its term, whose previous entry is its last one: the
 * leader had nothing more to send it, so it holds the leader's whole log,
 * which holds every committed write.  It then votes as raft does.
 *
 * What it cannot tell: a candidate that has received nothing since the
 * first start (its log the bootstrap entry alone, as this one's) looks
 * like a first start's, and gets the vote while no other member has shown
 * more.  Every leader's first entry is a barrier (replog__poll_leader), so
 * that is a member down since before the first leader's.
 *
 * What this costs: a member wiped and restarted gives the ensemble no vote
 * until a leader has caught it up, so with another member down the
 * ensemble waits for that one rather than elect a leader without its
 * writes.  A first start where one member comes up after the others have
 * written is the same case, and the same wait, should a second member die
 * before the late one caught up.  And since the rule holds at every start
 * while the log is the bootstrap entry alone (a member wiped and started
 * again twice must keep to it): an ensemble stopped whole in the moment
 * after its first election, before the first leader's entry reached the
 * others' disks, starts again with that leader's log the only longer one;
 * the others take it for evidence and vote for no one, and the operator
 * ends the wait with --recover-ensemble from the leader's directory
 * (docs/operations.md).  Nothing tells that leader from a member that
 * lacks acknowledged writes: a vote for it could lose them.
 *
 * The rule outlives a restart: wal-meta keeps a flag from the start that
 * applies it until it ends, so a member restarted after a leader sent it
 * part of the log (a snapshot, some entries), its log then beyond the
 * bootstrap entry, still keeps to it.  It ends when a leader has caught it
 * up, once the log is stored that far (a crash before would leave less),
 * or when this member leads: elected, its log holds every committed
 * entry. */
#include "server/replog/internal.h"

/* Not only at the start that made the log: every leader's first entry is
 * a barrier, so a log of the bootstrap entry alone has caught up with no
 * leader, and a member wiped and started again twice before one reached
 * it must keep to the rule the second time too. */
int replog__fresh_at_start(const struct raft_configuration *c, raft_id self,
                           raft_index last_index)
{
    unsigned i, others = 0;

    for (i = 0; i < c->n; i++)
        others += c->servers[i].role == RAFT_VOTER && c->servers[i].id != self;
    return others > 0 && last_index == FRESH_FIRST_INDEX;
}

int replog__fresh_open(struct replog *l, int join)
{
    struct replog_fresh *g = &l->fresh;
    int rv;

    g->kept = replog__wal_fresh(&l->io);
    g->on =
        !join && (g->kept || replog__fresh_at_start(&l->raft->configuration,
                                                    (raft_id)l->server_id,
                                                    raft_last_index(l->raft)));
    if (!g->on)
        return 0;
    if (!g->kept && (rv = replog__wal_set_fresh(&l->io, 1)) != 0) {
        replog__logf(l, REPLOG_LOG_ERROR,
                     "open %s: cannot note in wal-meta that its log is new: "
                     "%s",
                     l->dir, strerror(rv));
        return TB_EIO;
    }
    g->kept = 1;
    replog__logf(l, REPLOG_LOG_INFO,
                 "server %d's log is new: it votes only for a member "
                 "as new until a leader has caught it up",
                 l->server_id);
    return 0;
}

void replog__fresh_tick(struct replog *l, int lead)
{
    struct replog_fresh *g = &l->fresh;
    int rv;

    if (g->on && lead) {
        g->on = 0;
        g->caught_at = raft_last_index(l->raft);
    }
    if (g->on || !g->kept || l->raft->last_stored < g->caught_at)
        return;
    if ((rv = replog__wal_set_fresh(&l->io, 0)) != 0) {
        replog__logf(l, REPLOG_LOG_WARN,
                     "cannot note in wal-meta that server %d's log has "
                     "caught up: %s; tried again at the next tick",
                     l->server_id, strerror(rv));
        return;
    }
    g->kept = 0;
}

int replog__fresh_check(struct replog_fresh *g, const struct raft_message *m,
                        raft_term term, raft_index last_index,
                        raft_term last_term)
{
    const struct raft_append_entries *ae = &m->append_entries;
    const struct raft_request_vote *rv = &m->request_vote;

    if (!g->on)
        return FRESH_DELIVER;
    switch (m->type) {
    case RAFT_IO_APPEND_ENTRIES:
        if (ae->prev_log_index > FRESH_FIRST_INDEX || ae->n_entries > 0)
            g->evidence = 1;
        if (ae->n_entries == 0 && ae->term >= term &&
            ae->prev_log_index == last_index &&
            ae->prev_log_term == last_term)
            g->on = 0;
        return FRESH_DELIVER;
    case RAFT_IO_INSTALL_SNAPSHOT:
        g->evidence = 1;
        return FRESH_DELIVER;
    case RAFT_IO_REQUEST_VOTE:
        if (rv->last_log_index > FRESH_FIRST_INDEX)
            g->evidence = 1;
        return g->evidence ? FRESH_DROP : FRESH_DELIVER;
    default:
        return FRESH_DELIVER;
    }
}

int replog__fresh_recv(struct replog *l, const struct raft_message *m)
{
    struct replog_fresh *g = &l->fresh;
    struct raft *r = l->raft;
    int evidence = g->evidence, verdict;

    if (!g->on)
        return FRESH_DELIVER;
    verdict = replog__fresh_check(g, m, r->current_term, raft_last_index(r),
                                  replog__last_term(&r->log));
    if (!g->on)
        g->caught_at = raft_last_index(r);
    if (!g->on) /* stored that far, wal-meta's flag goes (fresh_tick) */
        replog__logf(l, REPLOG_LOG_INFO,
                     "server %d's new log caught up with the leader "
                     "(server %llu) at index %llu: it votes as any member",
                     l->server_id, (unsigned long long)m->server_id,
                     (unsigned long long)raft_last_index(r));
    else if (verdict == FRESH_DROP && !evidence)
        replog__logf(l, REPLOG_LOG_WARN,
                     "server %d started with an empty data directory, and "
                     "server %llu asks for its vote with a log to index "
                     "%llu: it votes for no one until a leader has caught it "
                     "up, since a log it would elect may lack what it "
                     "acknowledged before its data was lost",
                     l->server_id, (unsigned long long)m->server_id,
                     (unsigned long long)m->request_vote.last_log_index);
    return verdict;
}
