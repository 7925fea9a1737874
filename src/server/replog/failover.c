/* What an ensemble asks of raft besides proposals: a barrier, and a
 * failover that does not wait for election timeouts when the leader's
 * process is known to be gone (replog_leader_gone).
 *
 * libraft 0.15 has a follower turn down every vote while it still knows a
 * leader, until its own election timeout passes; the first candidate is
 * therefore turned down, the followers' timers fire apart, votes split,
 * and a failover took 2.5-3.4 election timeouts (measured here).  A
 * leadership transfer avoids that: the leader sends the chosen follower a
 * TimeoutNow, and the follower's election carries raft's permission to
 * disrupt the leader, which the others honour.  When the leader died, the
 * first voter after it in the membership hands itself that TimeoutNow,
 * through raft's own receive path, as the leader would have: the election
 * starts at once and the others grant it (if its log is as up to date as
 * theirs; otherwise the timeouts decide, as before).  Only one member does
 * so, so the votes do not split. */
#include <stdlib.h>

#include "server/replog/internal.h"

struct barrier {
    struct raft_barrier req;
    struct replog_deferred answer; /* raft's, until taken */
    struct replog *l;
    raft_term term; /* the leader's when proposed: its entry's */
    void (*cb)(void *arg, int status);
    void *arg;
};

/* Outside raft (replog__defer): a reconfig's callback makes its
 * changes. */
static void barrier_taken(struct replog_deferred *a)
{
    struct barrier *b = TB_CONTAINER_OF(a, struct barrier, answer);

    if (a->status == 0 && b->term > b->l->caught_term)
        b->l->caught_term = b->term;
    if (a->status != 0 && b->term == b->l->catching_term)
        b->l->catching_term = 0; /* replog__poll_leader proposes another */
    if (b->cb != NULL)
        b->cb(b->arg, replog__err(a->status));
    free(b);
}

static void barrier_done(struct raft_barrier *req, int status)
{
    struct barrier *b = req->data;

    replog__defer(b->l, &b->answer, status);
}

int replog_barrier(struct replog *l, void (*cb)(void *arg, int status),
                   void *arg)
{
    struct barrier *b;
    int rv;

    if (l->closing)
        return TB_ECLOSING;
    if ((b = malloc(sizeof *b)) == NULL)
        return TB_ENOMEM;
    b->req.data = b;
    b->answer.take = barrier_taken;
    b->l = l;
    b->term = l->raft->current_term;
    b->cb = cb;
    b->arg = arg;
    if ((rv = raft_barrier(l->raft, &b->req, barrier_done)) != 0) {
        free(b);
        return replog__err(rv);
    }
    return 0;
}

int replog_leader_caught_up(struct replog *l)
{
    return replog_is_leader(l) && l->caught_term == l->raft->current_term;
}

/* The voter that stands for a lost leader: the first one after it. */
static raft_id successor(const struct raft_configuration *c, raft_id gone)
{
    raft_id best = 0, first = 0;
    unsigned i;

    for (i = 0; i < c->n; i++) {
        raft_id id = c->servers[i].id;
        if (c->servers[i].role != RAFT_VOTER || id == gone)
            continue;
        if (first == 0 || id < first)
            first = id;
        if (id > gone && (best == 0 || id < best))
            best = id;
    }
    return best != 0 ? best : first;
}

raft_term replog__last_term(const struct raft_log *log)
{
    if (log->front == log->back)
        return log->snapshot.last_term;
    return log->entries[(log->back + log->size - 1) % log->size].term;
}

void replog_leader_gone(struct replog *l, int id)
{
    struct raft *r = l->raft;
    struct raft_message m = {0};
    const struct raft_server *s;
    unsigned i;

    if (l->closing || r->state != RAFT_FOLLOWER ||
        r->follower_state.current_leader.id != (raft_id)id ||
        successor(&r->configuration, (raft_id)id) != (raft_id)l->server_id)
        return;
    for (i = 0, s = NULL; i < r->configuration.n; i++)
        if (r->configuration.servers[i].id == (raft_id)id)
            s = &r->configuration.servers[i];
    if (s == NULL)
        return;
    replog__logf_fields(
        l, REPLOG_LOG_INFO,
        REPLOG_FIELDS(REPLOG_STR("event", "election_started"),
                      REPLOG_INT("gone", id),
                      REPLOG_INT("server", l->server_id),
                      REPLOG_INT("term", r->current_term + 1)),
        "leader %d is gone: server %d starts an election now (term %llu)", id,
        l->server_id, (unsigned long long)r->current_term + 1);
    m.type = RAFT_IO_TIMEOUT_NOW;
    m.server_id = (raft_id)id;
    m.server_address = s->address;
    m.timeout_now.term = r->current_term;
    m.timeout_now.last_log_index = raft_last_index(r);
    m.timeout_now.last_log_term = replog__last_term(&r->log);
    replog__mend_recv(l, &m);
}
