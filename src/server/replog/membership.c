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
 * entry that makes it is committed, or with the reason it is not.
 *
 * A change of several members (replog_members_change: a reconfig's
 * joiners and role changes) is made as those single changes in turn, and
 * is all or nothing, as ZooKeeper's reconfig, one proposal, is: when a
 * step fails, the steps made are undone last first, so raft's members are
 * the ones before the change again, as /zookeeper/config still says.
 *
 * Raft's answer to a change is taken up on the log's next tick, never
 * inside raft's callback (replog__defer says why). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/replog/internal.h"
#include "server/replog/membership.h"

/* One change, from the call to its callback.  A join is two of raft's:
 * add, then assign (role). */
struct change {
    struct raft_change req;
    struct replog_deferred answer; /* raft's, until taken */
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

static void changed(struct raft_change *req, int status);

/* Raft's answer to change c: done, a failure, or the join's next step. */
static void answered(struct replog_deferred *a)
{
    struct change *c = TB_CONTAINER_OF(a, struct change, answer);
    struct replog *l = c->l;
    int role = c->role, status = a->status, rv;

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
    if (l->closing) {
        finish(c, TB_ECLOSING);
        return;
    }
    replog__logf(l, REPLOG_LOG_INFO, "member %llu added: becoming a %s%s",
                 (unsigned long long)c->id, role_name(role),
                 role == RAFT_VOTER ? " once it has caught up" : "");
    /* Its catch-up goes where the configuration now has it: a connection
     * to where a member of that id was goes first (tcp.c). */
    if (l->tcp_ready)
        replog__tcp_follow(&l->transport);
    rv = raft_assign(l->raft, &c->req, c->id, role, changed);
    if (rv != 0) {
        replog__logf(l, REPLOG_LOG_WARN, "member %llu: cannot assign: %s",
                     (unsigned long long)c->id, raft_strerror(rv));
        finish(c, change_err(rv));
    }
}

static void changed(struct raft_change *req, int status)
{
    struct change *c = req->data;

    replog__defer(c->l, &c->answer, status);
}

static struct change *change_new(struct replog *l, int id, int role,
                                 void (*cb)(void *, int), void *arg)
{
    struct change *c = calloc(1, sizeof *c);

    if (c == NULL)
        return NULL;
    c->req.data = c;
    c->answer.take = answered;
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

/* 0 if raft may take a change of members now; else why not. */
static int refused(const struct replog *l)
{
    if (l->closing)
        return TB_ECLOSING;
    if (replog__mend_untaken_change(l))
        return TB_ERECONFIGINPROGRESS;
    return 0;
}

int replog_member_add(struct replog *l, int id, const char *address, int voter,
                      void (*cb)(void *arg, int status), void *arg)
{
    struct change *c;
    int rv;

    if ((rv = refused(l)) != 0)
        return rv;
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
    int rv;

    if ((rv = refused(l)) != 0)
        return rv;
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
    int rv;

    if ((rv = refused(l)) != 0)
        return rv;
    if ((c = change_new(l, id, -1, cb, arg)) == NULL)
        return TB_ENOMEM;
    replog__logf(l, REPLOG_LOG_INFO, "member %d: leaving", id);
    return start(l, c, raft_remove(l->raft, &c->req, (raft_id)id, changed));
}

/* ---- several members as one ---- */

/* At all times: steps[0..at) are made (or, undoing, not yet undone);
 * status is 0 going forward, else the failure being undone. */
struct batch {
    struct replog *l;
    struct replog_member_step *steps; /* addresses owned */
    unsigned n, at;
    int status;
    int spare; /* undoing: the failed join at steps[at] left a spare */
    void (*cb)(void *arg, int status);
    void *arg;
};

static void batch_free(struct batch *b)
{
    unsigned i;

    for (i = 0; i < b->n; i++)
        free((char *)b->steps[i].address);
    free(b->steps);
    free(b);
}

static void batch_end(struct batch *b, int status)
{
    void (*cb)(void *, int) = b->cb;
    void *arg = b->arg;

    batch_free(b);
    cb(arg, status);
}

/* The role `id` has in raft's latest configuration: REPLOG_*, or -1. */
static int role_in_raft(struct replog *l, int id)
{
    const struct raft_configuration *c = &l->raft->configuration;
    unsigned i;

    for (i = 0; i < c->n; i++)
        if (c->servers[i].id == (raft_id)id)
            return c->servers[i].role == RAFT_VOTER     ? REPLOG_VOTER
                   : c->servers[i].role == RAFT_STANDBY ? REPLOG_STANDBY
                                                        : REPLOG_SPARE;
    return -1;
}

static void undo_next(struct batch *b);

static void undone(void *arg, int status)
{
    struct batch *b = arg;

    if (status != 0)
        replog__logf(b->l, REPLOG_LOG_WARN,
                     "member %d: a change of several members failed and "
                     "this step of it could not be undone: %s",
                     b->steps[b->at].id, tb_strerror(status));
    if (status == TB_ECONNECTIONLOSS || status == TB_ECLOSING) {
        batch_end(b, b->status);
        return;
    }
    undo_next(b);
}

/* Undoes steps[at - 1], then the ones before it; a spare the failed join
 * left goes first (it is at steps[at], not counted as made). */
static void undo_next(struct batch *b)
{
    const struct replog_member_step *st;
    int rv;

    for (;;) {
        if (b->spare) {
            b->spare = 0;
            st = &b->steps[b->at];
            rv = replog_member_remove(b->l, st->id, undone, b);
        } else if (b->at > 0) {
            st = &b->steps[--b->at];
            rv = st->address != NULL
                     ? replog_member_remove(b->l, st->id, undone, b)
                     : replog_member_assign(b->l, st->id, !st->voter, undone,
                                            b);
        } else {
            batch_end(b, b->status);
            return;
        }
        if (rv == 0)
            return;
        replog__logf(b->l, REPLOG_LOG_WARN,
                     "member %d: a change of several members failed and "
                     "this step of it could not be undone: %s",
                     st->id, tb_strerror(rv));
        if (rv == TB_ECONNECTIONLOSS || rv == TB_ECLOSING) {
            batch_end(b, b->status);
            return;
        }
    }
}

static int batch_step(struct batch *b);

static void stepped(void *arg, int status)
{
    struct batch *b = arg;
    int rv;

    if (status == 0) {
        b->at++;
        if (b->at == b->n) {
            batch_end(b, 0);
            return;
        }
        if ((rv = batch_step(b)) == 0)
            return;
        status = rv;
    }
    b->status = status;
    if (status == TB_ECONNECTIONLOSS || status == TB_ECLOSING) {
        batch_end(b, status);
        return;
    }
    replog__logf(b->l, REPLOG_LOG_WARN,
                 "member %d: a change of %u members failed at step %u: "
                 "undoing the %u made",
                 b->steps[b->at].id, b->n, b->at + 1, b->at);
    b->spare = b->steps[b->at].address != NULL &&
               role_in_raft(b->l, b->steps[b->at].id) == REPLOG_SPARE;
    undo_next(b);
}

static int batch_step(struct batch *b)
{
    const struct replog_member_step *st = &b->steps[b->at];

    return st->address != NULL
               ? replog_member_add(b->l, st->id, st->address, st->voter,
                                   stepped, b)
               : replog_member_assign(b->l, st->id, st->voter, stepped, b);
}

int replog_members_change(struct replog *l,
                          const struct replog_member_step *steps, unsigned n,
                          void (*cb)(void *arg, int status), void *arg)
{
    struct batch *b;
    unsigned i;
    int rv;

    if (n == 0 || steps == NULL || cb == NULL)
        return TB_EINVAL;
    if ((b = calloc(1, sizeof *b)) == NULL ||
        (b->steps = calloc(n, sizeof *b->steps)) == NULL) {
        free(b);
        return TB_ENOMEM;
    }
    b->l = l;
    b->cb = cb;
    b->arg = arg;
    for (i = 0; i < n; i++) {
        b->steps[i] = steps[i];
        b->steps[i].address = NULL;
        b->n = i + 1;
        if (steps[i].address != NULL &&
            (b->steps[i].address = strdup(steps[i].address)) == NULL) {
            batch_free(b);
            return TB_ENOMEM;
        }
    }
    if ((rv = batch_step(b)) != 0)
        batch_free(b);
    return rv;
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
