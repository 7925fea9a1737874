/* Four defects of libraft 0.15's replication, mended where its messages and
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
 *    never catches up (three servers, seed 239; five, seed 31).  Mended:
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
 *    after its last entry, at the wrong indexes; raft then crashed (five
 *    servers, seed 159).  Mended: an AppendEntries whose entries start at
 *    or before the snapshot's last index is given to raft as starting after
 *    it, anchored at that index and its term (committed, so the leader's
 *    term there is the same).
 * 4. A member rejecting a pre-vote answers with the candidate's term even
 *    when its own is higher, so a candidate behind in term is never told:
 *    with one member of a higher term and a shorter log, and one of a
 *    lower term and a longer log, neither can win, for ever (five
 *    servers, seed 45).  Mended: such a rejection names the member's own
 *    term, as a rejected vote does, and the candidate catches up. */
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

static void append_done(struct raft_io_append *req, int status)
{
    struct mend_append *a = TB_CONTAINER_OF(req, struct mend_append, req);
    struct replog *l = a->l;

    l->mend.late = a->term != l->raft->current_term;
    a->cb(a->raft_req, status);
    l->mend.late = 0;
    free(a);
}

static int mend_append(struct raft_io *io, struct raft_io_append *req,
                       const struct raft_entry entries[], unsigned n,
                       raft_io_append_cb cb)
{
    struct replog *l = replog_of(io);
    struct mend_append *a = malloc(sizeof *a);
    int rv;

    if (a == NULL)
        return RAFT_NOMEM;
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

static void mend_recv(struct raft_io *io, struct raft_message *m)
{
    struct replog *l = replog_of(io);
    struct raft_append_entries *ae = &m->append_entries;

    l->mend.handling = m->type == RAFT_IO_APPEND_ENTRIES;
    if (l->mend.handling) {
        skip_snapshotted(l, ae);
        l->mend.shown = ae->prev_log_index + ae->n_entries;
    }
    l->mend.recv(io, m);
    l->mend.handling = 0;
}

static int mend_start(struct raft_io *io, unsigned msecs, raft_io_tick_cb tick,
                      raft_io_recv_cb recv)
{
    replog_of(io)->mend.recv = recv;
    return replog_of(io)->mend.start(io, msecs, tick, mend_recv);
}

static int mend_send(struct raft_io *io, struct raft_io_send *req,
                     const struct raft_message *m, raft_io_send_cb cb)
{
    struct replog *l = replog_of(io);
    const struct raft_append_entries_result *r = &m->append_entries_result;
    const struct raft_request_vote_result *v = &m->request_vote_result;
    struct raft_message mended = *m;

    switch (m->type) {
    case RAFT_IO_APPEND_ENTRIES_RESULT:
        if (l->mend.late) {
            l->stats.mended[1]++;
            return RAFT_NOCONNECTION; /* raft frees req */
        }
        if (l->mend.handling && r->rejected == 0 &&
            r->last_log_index > l->mend.shown) {
            l->stats.mended[0]++;
            mended.append_entries_result.last_log_index = l->mend.shown;
        }
        break;
    case RAFT_IO_REQUEST_VOTE_RESULT:
        if (v->pre_vote == raft_tribool_true && !v->vote_granted &&
            v->term < l->raft->current_term) {
            l->stats.mended[3]++;
            mended.request_vote_result.term = l->raft->current_term;
        }
        break;
    default:
        break;
    }
    return l->mend.send(io, req, &mended, cb);
}

void replog__mend_init(struct replog *l)
{
    struct raft_io *io = l->raft->io;

    l->mend.start = io->start;
    l->mend.append = io->append;
    l->mend.send = io->send;
    io->start = mend_start;
    io->append = mend_append;
    io->send = mend_send;
}
