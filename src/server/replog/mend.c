/* Nine defects of libraft 0.15's replication, mended where its messages and
 * appends cross the raft io.  test_cluster_random found each one, and fails
 * without its mend: the seeds named are of its schedules.
 *
 * 1. A follower answers an AppendEntries by naming its last stored index,
 *    whatever the request covered, and the leader takes that index, capped
 *    at its own last one, as how far the follower's log equals its own.  A
 *    follower holding entries of an earlier term after the request's last
 *    one (a heartbeat sent while the new leader's log was shorter) is then
 *    counted for the leader's own entries at those indexes: the leader may
 *    commit, and acknowledge, an entry only a minority holds, and takes the
 *    follower's rejections for stale ones ever after, so that the follower
 *    never catches up (three servers, seed 4; five, seed 10).  Mended:
 *    while raft handles an AppendEntries, a success it sends names at most
 *    that request's last index, prev_log_index + n_entries.
 * 2. An append a follower made for one leader that ends after another was
 *    elected is answered to the new leader, in the new term, with the same
 *    last stored index (five servers, seed 18720).  Mended: while an append
 *    raft asked for in an earlier term completes, no AppendEntries result
 *    is sent.  A lost answer is safe: the leader asks again.
 * 3. A follower given entries its own snapshot covers, below the ones it
 *    keeps in memory (a new leader that failed a send starts again at index
 *    1), finds no term for them, takes them for new ones and appends them
 *    after its last entry, at the wrong indexes; raft then crashed (three
 *    servers, seed 19; five, seed 159).  Mended: an AppendEntries whose
 *    entries start at or before the snapshot's last index is given to raft
 *    as starting after it, anchored at that index and its term (committed,
 *    so the leader's term there is the same).
 * 4. A member rejecting a pre-vote answers with the candidate's term even
 *    when its own is higher, so a candidate behind in term is never told:
 *    with one member of a higher term and a shorter log, and one of a
 *    lower term and a longer log, neither can win, for ever (five
 *    servers, seed 23063).  Mended: such a rejection names the member's own
 *    term, as a rejected vote does, and the candidate catches up.
 * 5. A follower told to overwrite an uncommitted configuration entry goes
 *    back to the committed configuration by decoding that one's entry from
 *    its log, and crashed when a snapshot had taken it out of the log
 *    (three servers with members added and removed, seed 179).  Mended: the
 *    committed configuration is kept here, a copy taken whenever raft holds
 *    no uncommitted one, and put back before raft handles the request;
 *    raft then has nothing to roll back.  (Only while that copy is of the
 *    configuration raft calls committed: if a second change was committed
 *    unseen, raft does as it did.)
 * 6. A follower sent a snapshot whose last index it holds with an entry of
 *    a later term (an uncommitted one of a deposed leader) takes the
 *    snapshot for held, as if that entry were the same: it answers that its
 *    log equals the leader's there, the leader takes its rejections after
 *    for stale ones, and it never catches up, serving reads from its old
 *    state (three servers, seed 96237).  Mended: such a snapshot is given
 *    to raft with its term raised past the entry's, so that raft installs
 *    it and drops its log, as a follower missing the entry does; its true
 *    term is put back in the snapshot that raft stores and in the log's
 *    record of it.  That is safe: the snapshot is committed, and an entry
 *    of another term at its last index, or after it, never can be.
 * 7. A candidate whose election fails starts the next one without a
 *    pre-vote, raising its term each time: a member with a shorter log,
 *    which no one elects, keeps voting for itself in the terms the others
 *    stand in, and with timeouts that keep step no one is elected, for
 *    ever (five servers, seed 143765).  Later libraft versions do the
 *    pre-vote again.  Mended: when a candidate's election time runs out,
 *    it is put back in its pre-vote.
 * 8. A leader sending a snapshot keeps sending heartbeats, with its last
 *    index for their previous one; a follower that lacks it rejects them,
 *    naming that index.  Where the last index is the snapshot's (a leader
 *    with no write since its snapshot), the leader takes such a rejection
 *    for the snapshot's own failure and gives the snapshot up; if reading
 *    the snapshot takes longer than a heartbeat, it is given up before it
 *    is read, every time, and the follower never catches up (three
 *    servers, seed 137716).  Mended: such a heartbeat names index 0 for
 *    its previous one, which every log holds, so that it is never
 *    rejected, and commit index 0: a follower commits up to the commit
 *    index it is sent, within its own log, trusting that the previous
 *    index named vouches for that log, and index 0 vouches for nothing.
 * 9. A follower installing a snapshot it was sent may stand for election
 *    before the install ends, and the install's end then puts the
 *    snapshot's configuration under a candidate, or a leader, whose votes
 *    or progress were counted in arrays sized for the configuration
 *    before: with members added since, raft wrote past the end of its
 *    votes (three servers with members added, seed 83; valgrind saw the
 *    write, and the harness now checks that a server installing a
 *    snapshot is a follower).  Later libraft versions hold such a
 *    follower too.  Mended: while it installs, its election timer starts
 *    over instead of running out, and a TimeoutNow (a transfer's, or the
 *    one failover.c hands a successor) is dropped; the transfer's leader
 *    gives up on it after an election timeout.
 * 10. A follower takes the configuration entries of an AppendEntries only
 *    as the write holding them ends, and only if it still follows then.
 *    One that became leader meanwhile keeps the configuration before, and
 *    may make a change of members over the entry it did not take: two in
 *    flight.  Once the second is overwritten, raft rolls back to the
 *    first's configuration, which may have left the log, and is left with
 *    none (three servers, seed 5,097,585: a crash).  Mended in part:
 *    membership.c refuses a change while the log holds a configuration
 *    entry past raft's (replog__mend_untaken_change).  Raft still holds
 *    the configuration before until that entry's is taken again (not
 *    counted: the harness checks only that the seed passes). */
#include <stdlib.h>
#include <string.h>

#include "server/replog/internal.h"

struct mend_append {
    struct raft_io_append req; /* given to the io below */
    struct raft_io_append *raft_req;
    raft_io_append_cb cb;
    struct replog *l;
    raft_term term; /* raft's when it asked */
};

static struct replog *replog_of(struct raft_io *io)
{
    return ((struct raft *)io->data)->data;
}

/* Whether log g holds its entry at index i in memory. */
static int held(const struct raft_log *g, raft_index i)
{
    size_t n = g->size == 0 ? 0 : (g->back + g->size - g->front) % g->size;

    return i > g->offset && i <= g->offset + n;
}

/* g's entry at index i, which it holds (held). */
static const struct raft_entry *entry_at(const struct raft_log *g, raft_index i)
{
    return &g->entries[(g->front + (i - g->offset - 1)) % g->size];
}

/* The term of g's entry at index i, as raft reads it: 0 if g holds none
 * there (its snapshot's last index excepted). */
static raft_term term_at(const struct raft_log *g, raft_index i)
{
    if (held(g, i))
        return entry_at(g, i)->term;
    return i == g->snapshot.last_index ? g->snapshot.last_term : 0;
}

int replog__mend_untaken_change(const struct replog *l)
{
    const struct raft *r = l->raft;
    const struct raft_log *g = &r->log;
    raft_index i = r->configuration_uncommitted_index > r->configuration_index
                       ? r->configuration_uncommitted_index
                       : r->configuration_index;

    /* From the first entry past it that the log still holds. */
    for (i = i > g->offset ? i + 1 : g->offset + 1; held(g, i); i++)
        if (entry_at(g, i)->type == RAFT_CHANGE)
            return 1;
    return 0;
}

static int copy_configuration(const struct raft_configuration *from,
                              struct raft_configuration *to)
{
    unsigned i;
    int rv = 0;

    raft_configuration_init(to);
    for (i = 0; i < from->n && rv == 0; i++)
        rv = raft_configuration_add(to, from->servers[i].id,
                                    from->servers[i].address,
                                    from->servers[i].role);
    if (rv != 0)
        raft_configuration_close(to);
    return rv;
}

/* 5: a copy of raft's configuration whenever it is the committed one. */
static void keep_committed(struct replog *l)
{
    struct raft *r = l->raft;
    struct raft_configuration c;

    if (r->configuration_uncommitted_index != 0 ||
        r->configuration_index == l->mend.committed_index ||
        copy_configuration(&r->configuration, &c) != 0)
        return;
    raft_configuration_close(&l->mend.committed);
    l->mend.committed = c;
    l->mend.committed_index = r->configuration_index;
}

/* 5: where raft would overwrite an uncommitted configuration entry with
 * `ae` and the committed one's entry has left its log, the committed
 * configuration put back first. */
static void roll_back_configuration(struct replog *l,
                                    const struct raft_append_entries *ae)
{
    struct raft *r = l->raft;
    struct raft_configuration c;
    raft_index x = 0;
    raft_term t;
    unsigned j;

    if (r->configuration_uncommitted_index == 0 ||
        r->configuration_index != l->mend.committed_index ||
        held(&r->log, r->configuration_index) ||
        (ae->prev_log_index > 0 &&
         term_at(&r->log, ae->prev_log_index) != ae->prev_log_term))
        return;
    for (j = 0; j < ae->n_entries && x == 0; j++) {
        t = term_at(&r->log, ae->prev_log_index + 1 + j);
        if (t == 0)
            return;
        if (t != ae->entries[j].term)
            x = ae->prev_log_index + 1 + j;
    }
    if (x == 0 || x > r->configuration_uncommitted_index ||
        x <= r->commit_index || copy_configuration(&l->mend.committed, &c) != 0)
        return;
    l->stats.mended[4]++;
    raft_configuration_close(&r->configuration);
    r->configuration = c;
    r->configuration_uncommitted_index = 0;
}

static void append_done(struct raft_io_append *req, int status)
{
    struct mend_append *a = TB_CONTAINER_OF(req, struct mend_append, req);
    struct replog *l = a->l;

    l->mend.late = a->term != l->raft->current_term;
    a->cb(a->raft_req, status);
    l->mend.late = 0;
    keep_committed(l);
    free(a);
}

static int mend_append(struct raft_io *io, struct raft_io_append *req,
                       const struct raft_entry entries[], unsigned n,
                       raft_io_append_cb cb)
{
    struct replog *l = replog_of(io);
    struct mend_append *a = malloc(sizeof *a);
    int rv;

    if (a == NULL) /* never refused: see replog__wal_append */
        replog__fail_stop(l, "log append of %u entries: out of memory", n);
    a->raft_req = req;
    a->cb = cb;
    a->l = l;
    a->term = l->raft->current_term;
    a->req.data = a;
    if ((rv = l->mend.append(io, &a->req, entries, n, append_done)) != 0)
        free(a);
    return rv;
}

/* 3: the entries of `ae` at or before the snapshot's last index S dropped,
 * prev_log_index set to S.  raft owns what the message holds and frees it
 * by the entries left: what is dropped is freed here, the batch that the
 * entries left point into excepted. */
static void skip_snapshotted(struct replog *l, struct raft_append_entries *ae)
{
    const struct raft *r = l->raft;
    raft_index s = r->log.snapshot.last_index;
    unsigned k = 0, i;

    if (ae->prev_log_index >= s)
        return;
    l->stats.mended[2]++;
    k = s - ae->prev_log_index < ae->n_entries
            ? (unsigned)(s - ae->prev_log_index)
            : ae->n_entries;
    ae->prev_log_term = k > 0 && k < ae->n_entries ? ae->entries[k - 1].term
                                                   : r->log.snapshot.last_term;
    ae->prev_log_index = s;
    for (i = 0; i < k; i++)
        if (ae->entries[i].batch == NULL)
            raft_free(ae->entries[i].buf.base);
    if (k == ae->n_entries) {
        if (k > 0 && ae->entries[0].batch != NULL)
            raft_free(ae->entries[0].batch);
        raft_free(ae->entries);
        ae->entries = NULL;
        ae->n_entries = 0;
        return;
    }
    memmove(ae->entries, ae->entries + k,
            (ae->n_entries - k) * sizeof *ae->entries);
    ae->n_entries -= k;
}

/* 6: where raft's log holds its entry at the last index of snapshot `is`
 * with a later term, the snapshot's term raised past it. */
static void raise_snapshot(struct replog *l, struct raft_install_snapshot *is)
{
    raft_term t = term_at(&l->raft->log, is->last_index);

    if (!held(&l->raft->log, is->last_index) || t <= is->last_term)
        return;
    l->stats.mended[5]++;
    l->mend.raised_index = is->last_index;
    l->mend.true_term = is->last_term;
    l->mend.raised = is->last_term = t + 1;
}

/* 6: the raised snapshot stored with its true term.  raft 0.15 asks for
 * this while it handles the message, and reads the term of what it hands
 * on no more: the true one is put back in raft's own copy. */
static int mend_snapshot_put(struct raft_io *io, unsigned trailing,
                             struct raft_io_snapshot_put *req,
                             const struct raft_snapshot *snapshot,
                             raft_io_snapshot_put_cb cb)
{
    struct replog *l = replog_of(io);

    if (l->mend.raised != 0 && snapshot->index == l->mend.raised_index &&
        snapshot->term == l->mend.raised)
        ((struct raft_snapshot *)snapshot)->term = l->mend.true_term;
    return l->mend.snapshot_put(io, trailing, req, snapshot, cb);
}

/* 6: the raised term out of raft's record of its last snapshot. */
static void lower_snapshot(struct replog *l)
{
    struct raft_log *g = &l->raft->log;

    if (l->mend.raised != 0 && g->snapshot.last_index == l->mend.raised_index &&
        g->snapshot.last_term == l->mend.raised)
        g->snapshot.last_term = l->mend.true_term;
    l->mend.raised = 0;
}

/* 9: raft is installing a snapshot it was sent (later libraft versions'
 * own test: the install sets last_stored to 0 until it ends). */
static int installing(const struct raft *r)
{
    return r->last_stored == 0 && r->snapshot.put.data != NULL;
}

static void mend_deliver(struct raft_io *io, struct raft_message *m)
{
    struct replog *l = replog_of(io);
    struct raft_append_entries *ae = &m->append_entries;

    if (m->type == RAFT_IO_TIMEOUT_NOW && installing(l->raft)) {
        l->stats.mended[8]++;
        return;
    }
    l->mend.handling = m->type == RAFT_IO_APPEND_ENTRIES;
    keep_committed(l);
    if (l->mend.handling) {
        skip_snapshotted(l, ae);
        roll_back_configuration(l, ae);
        l->mend.shown = ae->prev_log_index + ae->n_entries;
    } else if (m->type == RAFT_IO_INSTALL_SNAPSHOT) {
        raise_snapshot(l, &m->install_snapshot);
    }
    l->mend.recv(io, m);
    l->mend.handling = 0;
    lower_snapshot(l);
    keep_committed(l);
}

static void mend_recv(struct raft_io *io, struct raft_message *m)
{
    replog__heard(replog_of(io), m->server_id);
    mend_deliver(io, m);
}

/* A message made here (failover.c's TimeoutNow, in the name of a leader
 * that is gone): not one heard from that member. */
void replog__mend_recv(struct replog *l, struct raft_message *m)
{
    mend_deliver(l->raft->io, m);
}

/* 9: a follower installing a snapshot does not stand for election.
 * 7: a candidate whose election time ran out starts the next election
 * with a pre-vote, as it did its first. */
static void mend_tick(struct raft_io *io)
{
    struct replog *l = replog_of(io);
    struct raft *r = l->raft;
    raft_time now = io->time(io);

    if (r->state == RAFT_FOLLOWER && installing(r) &&
        now - r->election_timer_start >=
            r->follower_state.randomized_election_timeout) {
        l->stats.mended[8]++;
        r->election_timer_start = now;
    }
    if (r->state == RAFT_CANDIDATE && r->pre_vote &&
        !r->candidate_state.in_pre_vote &&
        now - r->election_timer_start >=
            r->candidate_state.randomized_election_timeout) {
        l->stats.mended[6]++;
        r->candidate_state.in_pre_vote = true;
        r->candidate_state.disrupt_leader = false;
    }
    l->mend.tick(io);
}

static int mend_start(struct raft_io *io, unsigned msecs, raft_io_tick_cb tick,
                      raft_io_recv_cb recv)
{
    replog_of(io)->mend.tick = tick;
    replog_of(io)->mend.recv = recv;
    return replog_of(io)->mend.start(io, msecs, mend_tick, mend_recv);
}

/* 8: libraft 0.15's PROGRESS__SNAPSHOT (its progress.h): a snapshot is
 * being sent to that server. */
#define PROGRESS_SNAPSHOT 2

/* 8: whether `ae`, sent by a leader, is a heartbeat to a server being sent
 * a snapshot that names the snapshot's last index for its previous one. */
static int heartbeat_as_snapshot(const struct raft *r, raft_id to,
                                 const struct raft_append_entries *ae)
{
    const struct raft_progress *p;
    unsigned i;

    if (r->state != RAFT_LEADER || ae->n_entries != 0)
        return 0;
    for (i = 0; i < r->configuration.n; i++)
        if (r->configuration.servers[i].id == to) {
            p = &r->leader_state.progress[i];
            return p->state == PROGRESS_SNAPSHOT &&
                   ae->prev_log_index == p->snapshot_index;
        }
    return 0;
}

static int mend_send(struct raft_io *io, struct raft_io_send *req,
                     const struct raft_message *m, raft_io_send_cb cb)
{
    struct replog *l = replog_of(io);
    const struct raft_append_entries_result *r = &m->append_entries_result;
    const struct raft_request_vote_result *v = &m->request_vote_result;
    struct raft_message mended; /* m, changed: copied only to change it */

    if (m->type == RAFT_IO_APPEND_ENTRIES_RESULT && l->mend.late) {
        l->stats.mended[1]++;
        return RAFT_NOCONNECTION; /* raft frees req */
    }
    if (m->type == RAFT_IO_APPEND_ENTRIES_RESULT && l->mend.handling &&
        r->rejected == 0 && r->last_log_index > l->mend.shown) {
        l->stats.mended[0]++;
        mended = *m;
        mended.append_entries_result.last_log_index = l->mend.shown;
        m = &mended;
    } else if (m->type == RAFT_IO_APPEND_ENTRIES &&
               heartbeat_as_snapshot(l->raft, m->server_id,
                                     &m->append_entries)) {
        l->stats.mended[7]++;
        mended = *m;
        mended.append_entries.prev_log_index = 0;
        mended.append_entries.prev_log_term = 0;
        mended.append_entries.leader_commit = 0;
        m = &mended;
    } else if (m->type == RAFT_IO_REQUEST_VOTE_RESULT &&
               v->pre_vote == raft_tribool_true && !v->vote_granted &&
               v->term < l->raft->current_term) {
        l->stats.mended[3]++;
        mended = *m;
        mended.request_vote_result.term = l->raft->current_term;
        m = &mended;
    }
    return l->mend.send(io, req, m, cb);
}

void replog__mend_init(struct replog *l)
{
    struct raft_io *io = l->raft->io;

    raft_configuration_init(&l->mend.committed);
    l->mend.start = io->start;
    l->mend.append = io->append;
    l->mend.send = io->send;
    l->mend.snapshot_put = io->snapshot_put;
    io->start = mend_start;
    io->append = mend_append;
    io->send = mend_send;
    io->snapshot_put = mend_snapshot_put;
}
