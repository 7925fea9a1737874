/* The leader tells each follower of a commit at once, with no log entry.
 *
 * libraft 0.15 gives a follower the commit index only in AppendEntries: with
 * the next entries, or in the heartbeat it sends every heartbeatInterval.  A
 * follower answers its clients' writes, and fires their watches, once it has
 * applied the entry, so a commit it hears of a heartbeat later is an answer
 * that much later (ZooKeeper's leader sends a COMMIT at once).  So once a
 * follower holds the entry at the leader's commit index C, the leader sends
 * it the AppendEntries a heartbeat is:
 *
 *   { term: the leader's, prev_log_index: C, prev_log_term: the leader's,
 *     leader_commit: C, no entries }
 *
 * sent only when C is at or after the first index this leader appended in
 * its term, so that the entry at C is of its term.  The follower's raft
 * checks that its entry at C has that term (Raft's log matching: its log
 * then equals the leader's up to C) and takes commit = min(C, its last
 * stored) = C: Raft's own rule for a heartbeat.  It answers as it answers a
 * heartbeat, and the leader's raft takes that answer as any.  A follower
 * whose log ends at C then holds every committed entry, which is what
 * fresh.c takes a heartbeat to mean.
 *
 * Each follower is sent each C once: `told` keeps the last commit it was
 * sent, raised too by raft's own AppendEntries (replog__notice_sent).  One
 * that stores C after the commit is sent it when its acknowledgment comes
 * in: wal_io.c calls replog__notice after every message raft receives, and
 * wal.c after every local write. */
#include <stdlib.h>

#include "server/replog/internal.h"

/* The slot of follower `id` in n->told, added if new; NULL without memory. */
static struct replog_told *told_of(struct replog_notice *n, raft_id id)
{
    struct replog_told *t;
    unsigned i;

    for (i = 0; i < n->n_told; i++)
        if (n->told[i].id == id)
            return &n->told[i];
    if ((t = realloc(n->told, (n->n_told + 1) * sizeof *t)) == NULL)
        return NULL;
    n->told = t;
    t = &n->told[n->n_told++];
    *t = (struct replog_told){id, 0};
    return t;
}

/* Whether `r` leads in the term n knows; a new term starts n afresh: only
 * what is appended from now on is surely of this leader's term. */
static int leading(struct replog_notice *n, struct raft *r)
{
    if (r->state != RAFT_LEADER)
        return 0;
    if (n->term != r->current_term) {
        n->term = r->current_term;
        n->first = raft_last_index(r) + 1;
        n->n_told = 0;
    }
    return 1;
}

static void sent(struct raft_io_send *req, int status)
{
    (void)status; /* a heartbeat lost: the next entries or heartbeat say it */
    free(req);
}

static void tell(struct raft *r, const struct raft_server *s, raft_index p)
{
    struct raft_message m = {0};
    struct raft_io_send *req;

    if ((req = malloc(sizeof *req)) == NULL)
        return;
    m.type = RAFT_IO_APPEND_ENTRIES;
    m.server_id = s->id;
    m.server_address = s->address;
    m.append_entries.term = r->current_term;
    m.append_entries.prev_log_index = p;
    m.append_entries.prev_log_term = r->current_term;
    m.append_entries.leader_commit = p;
    if (r->io->send(r->io, req, &m, sent) != 0)
        free(req);
}

void replog__notice(struct replog *l)
{
    struct raft *r = l->raft;
    const struct raft_configuration *c;
    struct replog_told *t;
    raft_index p;
    unsigned i;

    if (l->closing || r == NULL || !leading(&l->notice, r))
        return;
    if ((p = r->commit_index) < l->notice.first)
        return;
    c = &r->configuration;
    for (i = 0; i < c->n; i++) {
        if (c->servers[i].id == r->id ||
            r->leader_state.progress[i].match_index < p)
            continue;
        if ((t = told_of(&l->notice, c->servers[i].id)) == NULL ||
            t->index >= p)
            continue;
        t->index = p;
        tell(r, &c->servers[i], p);
    }
}

void replog__notice_sent(struct replog *l, const struct raft_message *m)
{
    const struct raft_append_entries *a = &m->append_entries;
    struct replog_told *t;
    raft_index p;

    if (m->type != RAFT_IO_APPEND_ENTRIES || l->raft == NULL ||
        !leading(&l->notice, l->raft) || a->term != l->notice.term)
        return;
    /* The follower takes the commit up to the last entry it is sent. */
    p = a->prev_log_index + a->n_entries;
    if (a->leader_commit < p)
        p = a->leader_commit;
    if ((t = told_of(&l->notice, m->server_id)) != NULL && t->index < p)
        t->index = p;
}
