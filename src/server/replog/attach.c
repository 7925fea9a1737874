/* replog over a raft someone else owns (replog_attach.h says why). */
#include <stdlib.h>

#include "server/replog/internal.h"
#include "server/replog/replog_attach.h"

int replog_attach_new(struct replog **out, const struct replog_config *cfg,
                      const struct replog_fsm *fsm)
{
    struct replog_config c;
    int rv;

    *out = NULL;
    if ((rv = replog__check_args(cfg, fsm)) != 0)
        return rv;
    c = *cfg;
    c.dir = NULL;
    c.snapshot_in_loop = 1;
    if ((*out = replog__new(NULL, &c, fsm)) == NULL)
        return TB_ENOMEM;
    (*out)->attached = 1;
    return 0;
}

struct raft_fsm *replog_attached_fsm(struct replog *l)
{
    return &l->raft_fsm;
}

void replog_attach(struct replog *l, struct raft *raft)
{
    l->raft = raft;
    raft->data = l;
    replog__configure_raft(l);
}

void replog_attached_tick(struct replog *l)
{
    replog__poll_leader(l);
    replog__deferred_take(l);
    replog__snapshot_poke(l);
    replog__notice(l);
}

void replog_attached_free(struct replog *l)
{
    struct tb_queue *q;
    struct replog_req *req;

    l->closing = 1;
    replog__deferred_take(l);
    while (!tb_queue_empty(&l->pending) || !tb_queue_empty(&l->queued)) {
        q = tb_queue_head(tb_queue_empty(&l->pending) ? &l->queued
                                                      : &l->pending);
        req = TB_CONTAINER_OF(q, struct replog_req, link);
        tb_queue_remove(q);
        if (req->done != NULL)
            req->done(req->arg, TB_ECLOSING, 0);
        free(req);
    }
    tb_wbuf_free(&l->snap_state);
    free(l->batch);
    free(l->notice.told);
    raft_configuration_close(&l->mend.committed);
    replog__delete(l);
}
