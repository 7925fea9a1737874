/* The steps that bring raft's members back to the configuration applied
 * (reconcile.h says in which order and why). */
#include "server/proc/reconcile.h"

int reconcile_may(struct replog *l)
{
    return replog_leader_caught_up(l) && !replog_member_changing(l) &&
           replog_applied_all(l);
}

static const struct reconcile_member *
reconcile_find(const struct reconcile_member *cfg, size_t ncfg, int id)
{
    size_t i;

    for (i = 0; i < ncfg; i++)
        if (cfg[i].id == id)
            return &cfg[i];
    return NULL;
}

struct reconcile_step reconcile_next(const struct replog_member *rm, unsigned n,
                                     const struct reconcile_member *cfg,
                                     size_t ncfg, int self)
{
    const struct reconcile_member *c;
    int want, pass;
    unsigned i;

    for (i = 0; i < n; i++)
        if (rm[i].id != self && reconcile_find(cfg, ncfg, rm[i].id) == NULL)
            return (struct reconcile_step){RECONCILE_REMOVE, rm[i].id,
                                           rm[i].role, 0};
    /* pass 0: to voters, 1: others to standbys. */
    for (pass = 0; pass < 2; pass++)
        for (i = 0; i < n; i++) {
            if (rm[i].id == self)
                continue;
            c = reconcile_find(cfg, ncfg, rm[i].id);
            want = c->voter ? REPLOG_VOTER : REPLOG_STANDBY;
            if (rm[i].role == want ||
                want != (pass == 0 ? REPLOG_VOTER : REPLOG_STANDBY))
                continue;
            return (struct reconcile_step){RECONCILE_ASSIGN, rm[i].id,
                                           rm[i].role, c->voter};
        }
    /* This leader, a voter: out of the configuration or an observer. */
    c = reconcile_find(cfg, ncfg, self);
    if (c == NULL || !c->voter)
        return (struct reconcile_step){RECONCILE_HANDOVER, self, REPLOG_VOTER,
                                       0};
    return (struct reconcile_step){RECONCILE_NONE, 0, 0, 0};
}

int reconcile_apart(struct replog *l, const struct reconcile_member *cfg,
                    size_t ncfg, int self)
{
    struct replog_member rm[REPLOG_MAX_MEMBERS];
    unsigned n = replog_members(l, rm, REPLOG_MAX_MEMBERS);

    return reconcile_next(rm, n, cfg, ncfg, self).op != RECONCILE_NONE;
}
