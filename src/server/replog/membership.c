/* An ensemble's members changed at run time, through raft's own
 * configuration entries: one change at a time, on the leader.
 *
 * A server joins as raft_add (a spare: no log, no vote), then raft_assign
 * to its role.  To become a voter it must first catch up (libraft's
 * rounds: a snapshot install and the entries after it), so that a server
 * that is far behind, or not running, never counts towards a majority; if
 * it does not answer within a round (5 s), raft gives the change up.  An
 * observer is a standby: it gets the log and has no vote.  A server leaves
 * as raft_remove.  The change's callback fires once the configuration
 * entry that makes it is committed, or with the reason it is not. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/replog/internal.h"

/* One change, from the call to its callback.  A join is two of raft's:
 * add, then assign (role). */
struct change {
    struct raft_change req;
    struct replog *l;
    raft_id id;
    int role; /* RAFT_VOTER or RAFT_STANDBY: the join's second step;
                 -1: none left */
    void (*cb)(void *arg, int status);
    void *arg;
};

static int role_of(int voter)
{
    return voter ? RAFT_VOTER : RAFT_STANDBY;
}

static const char *role_name(int role)
{
    return role == RAFT_VOTER     ? "voter"
           : role == RAFT_STANDBY ? "standby"
                                  : "spare";
}

static void finish(struct change *c, int status)
{
    void (*cb)(void *, int) = c->cb;
    void *arg = c->arg;

    free(c);
    cb(arg, status);
}

static int change_err(int rv)
{
    switch (rv) {
    case RAFT_CANTCHANGE:
        return TB_ERECONFIGINPROGRESS;
    case RAFT_NOCONNECTION:
        return TB_ENEWCONFIGNOQUORUM;
    case RAFT_NOTLEADER:
    case RAFT_LEADERSHIPLOST:
        return TB_ECONNECTIONLOSS;
    case RAFT_DUPLICATEID:
    case RAFT_DUPLICATEADDRESS:
    case RAFT_BADROLE:
        return TB_EBADARGUMENTS;
    default:
        return replog__err(rv);
    }
}

static void changed(struct raft_change *req, int status)
{
    struct change *c = req->data;
    struct replog *l = c->l;
    int role = c->role, rv;

    if (status != 0) {
        replog__logf(l, REPLOG_LOG_WARN, "member %llu: change failed: %s",
                     (unsigned long long)c->id, raft_strerror(status));
        finish(c, change_err(status));
        return;
    }
    if (role < 0) {
        replog__logf(l, REPLOG_LOG_INFO, "member %llu: change committed",
                     (unsigned long long)c->id);
        finish(c, 0);
        return;
    }
    /* Added as a spare: now its role, which for a voter first catches
     * it up. */
    c->role = -1;
    replog__logf(l, REPLOG_LOG_INFO, "member %llu added: becoming a %s%s",
                 (unsigned long long)c->id, role_name(role),
                 role == RAFT_VOTER ? " once it has caught up" : "");
    rv = raft_assign(l->raft, &c->req, c->id, role, changed);
    if (rv != 0) {
        replog__logf(l, REPLOG_LOG_WARN, "member %llu: cannot assign: %s",
                     (unsigned long long)c->id, raft_strerror(rv));
        finish(c, change_err(rv));
    }
}

static struct change *change_new(struct replog *l, int id, int role,
                                 void (*cb)(void *, int), void *arg)
{
    struct change *c = calloc(1, sizeof *c);

    if (c == NULL)
        return NULL;
    c->req.data = c;
    c->l = l;
    c->id = (raft_id)id;
    c->role = role;
    c->cb = cb;
    c->arg = arg;
    return c;
}

static int start(struct replog *l, struct change *c, int rv)
{
    if (rv == 0)
        return 0;
    free(c);
    if (rv == RAFT_NOTLEADER)
        return TB_ECONNECTIONLOSS;
    replog__logf(l, REPLOG_LOG_WARN, "member change refused: %s (%s)",
                 raft_strerror(rv), raft_errmsg(l->raft));
    return change_err(rv);
}

int replog_member_add(struct replog *l, int id, const char *address, int voter,
                      void (*cb)(void *arg, int status), void *arg)
{
    struct change *c;

    if (l->closing)
        return TB_ECLOSING;
    if (id <= 0 || address == NULL)
        return TB_EINVAL;
    if ((c = change_new(l, id, role_of(voter), cb, arg)) == NULL)
        return TB_ENOMEM;
    replog__logf(l, REPLOG_LOG_INFO, "member %d at %s: joining as a %s", id,
                 address, role_name(role_of(voter)));
    return start(l, c,
                 raft_add(l->raft, &c->req, (raft_id)id, address, changed));
}

int replog_member_assign(struct replog *l, int id, int voter,
                         void (*cb)(void *arg, int status), void *arg)
{
    struct change *c;

    if (l->closing)
        return TB_ECLOSING;
    if ((c = change_new(l, id, -1, cb, arg)) == NULL)
        return TB_ENOMEM;
    replog__logf(l, REPLOG_LOG_INFO, "member %d: becoming a %s", id,
                 role_name(role_of(voter)));
    return start(
        l, c,
        raft_assign(l->raft, &c->req, (raft_id)id, role_of(voter), changed));
}

int replog_member_remove(struct replog *l, int id,
                         void (*cb)(void *arg, int status), void *arg)
{
    struct change *c;

    if (l->closing)
        return TB_ECLOSING;
    if ((c = change_new(l, id, -1, cb, arg)) == NULL)
        return TB_ENOMEM;
    replog__logf(l, REPLOG_LOG_INFO, "member %d: leaving", id);
    return start(l, c, raft_remove(l->raft, &c->req, (raft_id)id, changed));
}

int replog_member_changing(struct replog *l)
{
    struct raft *r = l->raft;

    return raft_state(r) == RAFT_LEADER &&
           (r->leader_state.change != NULL ||
            r->configuration_uncommitted_index != 0);
}

int replog_applied_all(struct replog *l)
{
    return raft_last_applied(l->raft) >= raft_last_index(l->raft);
}

unsigned replog_members(struct replog *l, struct replog_member *out,
                        unsigned max)
{
    const struct raft_configuration *c = &l->raft->configuration;
    unsigned i, n = 0;

    for (i = 0; i < c->n && n < max; i++) {
        out[n].id = (int)c->servers[i].id;
        snprintf(out[n].address, sizeof out[n].address, "%s",
                 c->servers[i].address);
        out[n].role = c->servers[i].role == RAFT_VOTER     ? REPLOG_VOTER
                      : c->servers[i].role == RAFT_STANDBY ? REPLOG_STANDBY
                                                           : REPLOG_SPARE;
        n++;
    }
    return n;
}
