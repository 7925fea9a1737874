/* Proposals: entries batched for raft, each answered once, with its
 * index once applied or with why it failed (replog.h's replog_propose).
 * The rest of the handle is in replog.c. */
#include <stdlib.h>

#include "server/replog/internal.h"

/* ---- proposals ---------------------------------------------------------- */

static void finish_req(struct replog_req *req, int status, int64_t index)
{
    tb_queue_remove(&req->link);
    if (req->done != NULL)
        req->done(req->arg, status, index);
    free(req);
}

static struct replog_req *req_of(struct tb_queue *q)
{
    return TB_CONTAINER_OF(q, struct replog_req, link);
}

/* The entry at `index` is a proposal's own only if raft's term is still
 * the one it was proposed in: a leader that lost its place and won it back
 * may have had its entries replaced.  Then, as for any proposal left
 * behind, the outcome is unknown. */
void replog__answer(struct replog *l, int64_t index, int status)
{
    struct replog_req *req;

    while (!tb_queue_empty(&l->pending)) {
        req = req_of(tb_queue_head(&l->pending));
        if (req->index > index)
            return;
        finish_req(req,
                   req->index == index && req->term == l->raft->current_term
                       ? status
                       : TB_ECONNECTIONLOSS,
                   req->index);
    }
}

/* Answers the proposals given to raft whose entries are at `from` or
 * later. */
void replog__fail_from(struct replog *l, int64_t from, int status)
{
    struct tb_queue *it = tb_queue_head(&l->pending), *next;

    for (; it != &l->pending; it = next) {
        next = it->next;
        if (req_of(it)->index >= from)
            finish_req(req_of(it), status, 0);
    }
}

static const char *state_name(int state)
{
    switch (state) {
    case RAFT_FOLLOWER:
        return "follower";
    case RAFT_CANDIDATE:
        return "candidate";
    case RAFT_LEADER:
        return "leader";
    default:
        return "unavailable";
    }
}

static int refuse_not_leader(struct replog *l)
{
    raft_id id = 0;
    const char *addr = NULL;

    raft_leader(l->raft, &id, &addr);
    replog__logf(l, REPLOG_LOG_WARN,
                 "write refused: server %d is not the leader (%s, leader "
                 "%llu at %s)",
                 l->server_id, state_name(raft_state(l->raft)),
                 (unsigned long long)id, addr != NULL ? addr : "unknown");
    return TB_ESYSTEM;
}

static void batch_cb(struct raft_apply *rreq, int status, void *result)
{
    struct replog_batch *b =
        TB_CONTAINER_OF(rreq, struct replog_batch, raft_req);
    struct replog *l = rreq->data;

    (void)result;
    if (status != 0 && !l->closing)
        replog__logf(l, REPLOG_LOG_WARN, "entries %llu..%llu failed: %s (%s)",
                     (unsigned long long)rreq->index,
                     (unsigned long long)rreq->index + b->n - 1,
                     raft_strerror(status), raft_errmsg(l->raft));
    if (status != 0)
        replog__fail_from(l, (int64_t)rreq->index,
                          l->closing ? TB_ECLOSING : replog__err(status));
    free(b);
    REPLOG_CHECK(l);
}

void replog__submit(struct replog *l)
{
    struct replog_batch *b;
    struct tb_queue *q;
    unsigned i, n = l->batch_n;
    int rv = RAFT_NOMEM, status;

    if (n == 0)
        return;
    l->batch_n = 0;
    b = malloc(sizeof *b);
    if (b != NULL) {
        memset(&b->raft_req, 0, sizeof b->raft_req);
        b->raft_req.data = l;
        b->n = n;
        rv = raft_apply(l->raft, &b->raft_req, l->batch, n, batch_cb);
    }
    if (rv != 0) {
        free(b);
        for (i = 0; i < n; i++)
            raft_free(l->batch[i].base); /* still ours when raft_apply fails */
        /* Batched before a handover began: refused as those after it
         * are (propose). */
        if (rv == RAFT_NOTLEADER && l->raft->transfer != NULL) {
            status = TB_ECONNECTIONLOSS;
        } else if (rv == RAFT_NOTLEADER) {
            status = refuse_not_leader(l);
        } else {
            replog__logf(l, REPLOG_LOG_WARN, "write refused: %s (%s)",
                         raft_strerror(rv), raft_errmsg(l->raft));
            status = rv == RAFT_NOMEM ? TB_ENOMEM : TB_ESYSTEM;
        }
        /* Those proposed by the done callbacks come after these n. */
        for (i = 0; i < n; i++)
            finish_req(req_of(tb_queue_head(&l->queued)), status, 0);
        REPLOG_CHECK(l);
        return;
    }
    for (i = 0; i < n; i++) {
        q = tb_queue_head(&l->queued);
        tb_queue_remove(q);
        req_of(q)->index = (int64_t)b->raft_req.index + i;
        req_of(q)->term = l->raft->current_term;
        tb_queue_insert_tail(&l->pending, q);
    }
    REPLOG_CHECK(l);
}

static int batch_reserve(struct replog *l)
{
    unsigned cap = l->batch_cap ? l->batch_cap * 2 : 64;
    struct raft_buffer *p;

    if (l->batch_n < l->batch_cap)
        return 0;
    if ((p = realloc(l->batch, cap * sizeof *p)) == NULL)
        return TB_ENOMEM;
    l->batch = p;
    l->batch_cap = cap;
    return 0;
}

static void sized(struct replog_stats *st, int64_t n)
{
    st->proposal_last = n;
    if (st->proposal_min == 0 || n < st->proposal_min)
        st->proposal_min = n;
    if (n > st->proposal_max)
        st->proposal_max = n;
}

static int propose(struct replog *l, const void *payload, size_t len,
                   int reserved, replog_done_cb done, void *arg)
{
    struct replog_req *req;
    struct raft_buffer *buf;
    int rv;

    if (l->closing)
        return TB_ECLOSING;
    if (payload == NULL && len > 0)
        return TB_EINVAL;
    if (len > REPLOG_MAX_PAYLOAD)
        return TB_ETOOBIG;
    if ((rv = replog__disk_admit(l, replog__entry_size(len), reserved)) != 0)
        return rv;
    if (raft_state(l->raft) != RAFT_LEADER)
        return refuse_not_leader(l);
    /* Handing leadership over (a stop's, a reconfig's): raft takes no
     * entry meanwhile (RAFT_NOTLEADER), though it still leads.  The
     * client looks again, as when a leader is lost. */
    if (l->raft->transfer != NULL)
        return TB_ECONNECTIONLOSS;
    if (batch_reserve(l) != 0)
        return TB_ENOMEM;

    req = malloc(sizeof *req);
    if (req == NULL)
        return TB_ENOMEM;
    buf = &l->batch[l->batch_n];
    buf->len = replog__entry_size(len);
    /* raft frees accepted entries with raft_free (arena.c). */
    buf->base = replog__entry_alloc(buf->len);
    if (buf->base == NULL) {
        free(req);
        return TB_ENOMEM;
    }
    replog__entry_encode(buf->base, payload, len);
    sized(&l->stats, (int64_t)buf->len);
    req->index = 0;
    req->done = done;
    req->arg = arg;
    tb_queue_insert_tail(&l->queued, &req->link);
    if (l->batch_n++ == 0 && !l->attached)
        replog__wal_flush_soon(&l->io);
    if (l->attached)
        replog__submit(l);
    return 0;
}

int replog_propose(struct replog *l, const void *payload, size_t len,
                   replog_done_cb done, void *arg)
{
    return propose(l, payload, len, 0, done, arg);
}

int replog_propose_reserved(struct replog *l, const void *payload, size_t len,
                            replog_done_cb done, void *arg)
{
    return propose(l, payload, len, 1, done, arg);
}

void replog__fail_queued(struct replog *l, int status)
{
    while (l->batch_n > 0)
        raft_free(l->batch[--l->batch_n].base);
    while (!tb_queue_empty(&l->queued))
        finish_req(req_of(tb_queue_head(&l->queued)), status, 0);
}
