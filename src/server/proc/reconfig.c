/* reconfig: an ensemble's members changed at run time by ZooKeeper's own
 * request (opcode 16: zkCli's `reconfig -add/-remove/-members`, Curator's
 * and kazoo's reconfig).
 *
 * Only the leader decides one: a follower forwards it as any write
 * (peer.h), and proc_propose_txn hands it here.  The checks run in the
 * order ZooKeeper 3.8's PrepRequestProcessor runs them, so the first that
 * fails gives its error:
 *
 *   reconfigEnabled false       ZRECONFIGDISABLED (-123)
 *   a standalone server         ZUNIMPLEMENTED (-6)
 *   writes refused for low disk ZNOTREADONLY (-119), as any write's
 *   another change in flight,   ZRECONFIGINPROGRESS (-14)
 *   or raft's members not yet
 *   the configuration's
 *   fromConfig not the current  ZBADVERSION (-103)
 *   a server line that cannot   ZBADARGUMENTS (-8), the reason logged
 *   be parsed, a joiner's
 *   address another server's,
 *   fewer than two voters left
 *   no synced majority among    ZNEWCONFIGNOQUORUM (-13)
 *   the new voters
 *   no WRITE on /zookeeper/     ZNOAUTH (-102): its ACL is world:anyone
 *   config                      READ, so only the super user passes
 *
 * Then raft's members change, one server at a time: joiners first (a
 * voter catches up before it votes), then the other servers' roles, as
 * one change that is all or nothing (replog_members_change: when a step
 * fails, those made are undone, so a whole member list that fails midway
 * leaves the members and roles as they were, as ZooKeeper's one-proposal
 * reconfig does).  Then a TB_OP_RECONFIG_TXN (reconfig_outcome_txn)
 * carries the outcome through the log: every replica's /zookeeper/config
 * becomes the new members with the txn's zxid as version
 * (fsm_reconfig.c), and the server the client is on answers it with that
 * data and stat.  An error travels the same way, changing nothing.  The
 * leavers leave once the outcome is applied.  A leader that leaves, or is
 * made an observer, then hands leadership to another voter, whose tick
 * makes that change (reconcile.h says why a leader never takes its own
 * vote away; and only a leader logs the outcome).  A change is in flight
 * from its acceptance until those are made.
 *
 * A leader lost in the middle of a change (before its outcome is logged,
 * or before its leavers have left) leaves raft's members apart from the
 * configuration applied: the next leader's tick brings them back to it
 * (reconcile, reconcile.h), one change at a time, once no change is in
 * flight and it has applied all its log holds; a reconfig waits until they
 * are.  A server raft has and the configuration does not leaves; a role
 * changed gets the configuration's back (participant: a voter, observer: a
 * standby); last, a leader the configuration leaves out or makes an
 * observer hands leadership over.
 *
 * Every member looks at /zookeeper/config on its tick (reconfig_tick): the
 * peer links follow the new members, and a server no longer among them
 * stops serving clients and says why.  A joiner (joinEnsemble) serves none
 * before it is in raft's members and in the configuration applied: until
 * then what it holds is not the ensemble's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/config/config.h"
#include "server/fsm/fsm.h"
#include "server/logging/log.h"
#include "server/peer/peer.h"
#include "server/proc/members.h"
#include "server/proc/proc.h"
#include "server/proc/reconcile.h"
#include "server/replog/membership.h"
#include "server/replog/replog.h"
#include "server/server.h"
#include "tree/acl.h"
#include "tree/tree.h"

#define CONFIG_NODE "/zookeeper/config"

enum step_op { STEP_ADD, STEP_ASSIGN };

struct step {
    enum step_op op;
    int id;
    int voter;
    char address[TB_CONFIG_ADDR_MAX]; /* STEP_ADD: its raft address */
};

/* At all times: busy iff a reconfig was accepted and its outcome, then
 * its leavers' removal and this leader's handover, are not all made, or
 * reconcile's handover is in flight;
 * steps[0..nsteps) are its joiners and role changes. */
struct reconfig {
    struct tbd *srv;
    int busy;
    struct members next;
    struct members live; /* the configuration applied, once one was */
    struct step steps[REPLOG_MAX_MEMBERS];
    size_t nsteps;
    int leaving[REPLOG_MAX_MEMBERS]; /* removed from raft once the outcome is
                                 applied, so that they learn it; not this
                                 leader */
    size_t nleaving, at_leave;
    /* This leader leaves or becomes an observer: once the outcome is
     * logged and the other leavers are gone, it hands leadership over. */
    int hand_over;
    unsigned leave_tries; /* looks at leaving[at_leave]'s lag */
    int leave_retry;      /* the tick looks again */
    /* reconcile's last step failed: the next waits until reconcile_at
     * (tbd_now_ms); 0 when it did not. */
    uint64_t reconcile_wait, reconcile_at;
    uint64_t sync_start; /* tbd_now_ms when the first barrier went */
    int rc;
    int32_t xid;
    int64_t session, origin;
    void (*done)(void *arg, int status, int64_t index);
    void *arg;
    struct tb_wbuf body;
    int64_t seen; /* /zookeeper/config's mzxid the tick last acted on */
    int absent;   /* the configuration applied does not hold this server */
    int admitted; /* a joiner: added, caught up and in the configuration */
    int outside;  /* absent, or joining: it serves no clients */
};

static struct reconfig *state(struct tbd *s);

static struct tree_node *config_node(struct tbd *s)
{
    return tree_find(fsm_tree(s->fsm), TB_STR(CONFIG_NODE));
}

/* The members now: /zookeeper/config's text once a reconfig wrote it,
 * else the server.N lines; a joiner's, less its own: they name it only
 * so that it knows itself, and until a reconfig's outcome lists it, it is
 * no member (were it to lead in between, after a change cut short, it
 * would keep itself in raft, which the others' lines do not hold, and
 * they could not link to it). */
static int current(struct tbd *s, struct members *m)
{
    struct tree_node *n = config_node(s);
    struct tb_str text = n != NULL ? tree_node_data(n) : TB_STR("");
    struct tb_stat st;
    char err[256];
    size_t i;
    int rv = 0;

    memset(m, 0, sizeof *m);
    if (text.len > 0) {
        tree_node_stat(n, &st);
        m->version = st.mzxid;
        return parse_lines(m, text, "\n", 1, 0, err, sizeof err);
    }
    for (i = 0; i < s->cfg->nservers && rv == 0; i++)
        if (!s->cfg->join_ensemble ||
            s->cfg->servers[i].id != (int)s->server_id)
            rv = members_put(m, s->cfg->servers[i].id, s->cfg->servers[i].spec,
                             err, sizeof err);
    return rv;
}

/* ---- the outcome, through the log ---- */

int reconfig_outcome_txn(struct tb_txn *t, struct tb_wbuf *body, int rc,
                         struct tb_str members)
{
    memset(t, 0, sizeof *t);
    body->len = 0;
    tb_reconfig_txn_encode(body, &(struct tb_reconfig_txn){rc, members});
    if (body->oom)
        return TB_ENOMEM;
    t->type = TB_OP_RECONFIG_TXN;
    t->super = 1;
    t->body = (struct tb_str){(const char *)body->base, body->len};
    return 0;
}

static int propose_outcome(struct tbd *s, struct tb_wbuf *body, int rc,
                           struct tb_str members, int32_t xid, int64_t session,
                           int64_t origin, void (*done)(void *, int, int64_t),
                           void *arg)
{
    struct tb_txn t;
    int rv;

    if ((rv = reconfig_outcome_txn(&t, body, rc, members)) != 0)
        return rv;
    t.session = session;
    t.xid = xid;
    t.origin = origin;
    return proc_propose_txn(s, &t, done, arg);
}

static void leave_next(struct reconfig *r);

/* The outcome is applied here: the client is answered (by the fsm, on its
 * server); the leavers, who have it too by then, are removed next. */
static void answered(void *arg, int status, int64_t index)
{
    struct reconfig *r = arg;
    void (*done)(void *, int, int64_t) = r->done;

    members_free(&r->next);
    if (status != 0 || r->rc != 0) {
        r->nleaving = 0;
        r->hand_over = 0;
    }
    r->at_leave = 0;
    r->leave_tries = 0;
    leave_next(r);
    done(r->arg, status, index);
}

static void finish(struct reconfig *r, int rc)
{
    struct tb_wbuf text;
    int rv;

    r->rc = rc;
    tb_wbuf_init(&text);
    if (rc == 0)
        tb_config_render_servers(r->next.v, r->next.n, &text);
    rv = text.oom ? TB_ENOMEM
                  : propose_outcome(
                        r->srv, &r->body, rc,
                        (struct tb_str){(const char *)text.base, text.len},
                        r->xid, r->session, r->origin, answered, r);
    tb_wbuf_free(&text);
    if (rv != 0)
        answered(r, rv, 0);
}

/* A server that did not catch up to vote again (it is down, say), or a
 * handover that failed or that no voter took, is tried again after
 * RECONCILE_WAIT_MS, the wait doubling each time up to
 * RECONCILE_WAIT_MAX_MS: raft's members are changing while a server
 * catches up, and a reconfig meanwhile is refused, so the operator's,
 * which may be the remedy, gets its turn (decide refuses one only while
 * reconcile's next step is not waiting).  Any other failure (leadership
 * lost) is tried again by the next tick that finds the conditions.
 * wait_longer starts the next wait and gives it in seconds. */
#define RECONCILE_WAIT_MS     10000
#define RECONCILE_WAIT_MAX_MS 320000

static unsigned long long wait_longer(struct reconfig *r)
{
    r->reconcile_wait = r->reconcile_wait == 0 ? RECONCILE_WAIT_MS
                        : r->reconcile_wait >= RECONCILE_WAIT_MAX_MS / 2
                            ? RECONCILE_WAIT_MAX_MS
                            : 2 * r->reconcile_wait;
    r->reconcile_at = tbd_now_ms(r->srv) + r->reconcile_wait;
    return r->reconcile_wait / 1000;
}

/* Another voter leads, whose tick makes the change; or none took over
 * within an election timeout, and this leader's tick hands over again
 * after a wait. */
static void handed_over(void *arg)
{
    struct reconfig *r = arg;

    r->busy = 0;
    if (!replog_is_leader(r->srv->log)) {
        r->reconcile_wait = 0;
        return;
    }
    tb_log(TB_LOG_WARN,
           "reconfig: no other voter took leadership from server %lld; "
           "trying again in %llu s",
           (long long)r->srv->server_id, wait_longer(r));
}

/* This leader leaves raft's voters: another voter, given leadership,
 * takes its vote away (reconcile.h says why not this one).  r->busy until
 * handed_over fires.  0, or a TB_E* code (logged, and the next try
 * waits). */
static int hand_over(struct reconfig *r)
{
    int rv;

    r->busy = 1;
    if ((rv = replog_transfer(r->srv->log, handed_over, r)) == 0)
        return 0;
    r->busy = 0;
    tb_log(TB_LOG_WARN,
           "reconfig: server %lld cannot hand leadership over: %s; trying "
           "again in %llu s",
           (long long)r->srv->server_id, tb_strerror(rv), wait_longer(r));
    return rv;
}

/* Whether follower id, or, id 0, any follower heard from lately, has
 * entries yet to store. */
static int lagging(struct reconfig *r, int id)
{
    struct replog_follower f[REPLOG_MAX_MEMBERS];
    unsigned n = replog_followers(r->srv->log, f, REPLOG_MAX_MEMBERS), i;

    for (i = 0; i < n; i++)
        if (id == 0 ? f[i].synced && f[i].lag > 0
                    : f[i].id == id && f[i].lag > 0)
            return 1;
    return 0;
}

static void left(void *arg, int status)
{
    struct reconfig *r = arg;

    if (status != 0) {
        tb_log(TB_LOG_WARN,
               "reconfig: server %d did not leave raft's "
               "members: %s",
               r->leaving[r->at_leave], tb_strerror(status));
        r->busy = 0; /* a leader's tick removes it (reconfig_tick) */
        return;
    }
    r->at_leave++;
    r->leave_tries = 0;
    leave_next(r);
}

/* A leaver is removed once it has the outcome (its lag 0 after a
 * barrier, which carries the commit index), or after a few ticks: one
 * that is down learns nothing anyway.  This leader hands over once every
 * follower it hears from has the outcome, the same way: the server a
 * client asked through answers it once it has applied the outcome, and
 * would answer ConnectionLoss should its link to this leader close
 * before. */
static void leave_synced(void *arg, int status)
{
    struct reconfig *r = arg;
    int self = r->at_leave == r->nleaving, rv;
    int id = self ? 0 : r->leaving[r->at_leave];

    if (status != 0) {
        r->busy = 0;
        return;
    }
    if (lagging(r, id) && ++r->leave_tries < 4) {
        r->leave_retry = 1;
        return;
    }
    if (self) {
        r->hand_over = 0;
        tb_log(TB_LOG_INFO,
               "reconfig: server %lld is no voter in the new configuration: "
               "it hands leadership to one, which makes the change",
               (long long)r->srv->server_id);
        (void)hand_over(r); /* busy until it ends; its failure logged */
        return;
    }
    if ((rv = replog_member_remove(r->srv->log, id, left, r)) != 0)
        left(r, rv);
}

/* The leavers one at a time, then this leader's handover: after the
 * outcome, which only a leader can log. */
static void leave_next(struct reconfig *r)
{
    if ((r->at_leave == r->nleaving && !r->hand_over) ||
        replog_barrier(r->srv->log, leave_synced, r) != 0)
        r->busy = 0;
}

/* The joiners and role changes made, or undone (replog_members_change). */
static void steps_done(void *arg, int status)
{
    struct reconfig *r = arg;

    if (status != 0)
        tb_log(TB_LOG_WARN,
               "reconfig: the members could not change, and are as they "
               "were: %s",
               tb_strerror(status));
    finish(r, status == 0 || status == TB_ECONNECTIONLOSS
                  ? status
                  : TB_ENEWCONFIGNOQUORUM);
}

static void make_steps(struct reconfig *r)
{
    struct replog_member_step ms[REPLOG_MAX_MEMBERS];
    size_t i;
    int rv;

    if (r->nsteps == 0) {
        finish(r, 0);
        return;
    }
    for (i = 0; i < r->nsteps; i++)
        ms[i] = (struct replog_member_step){
            r->steps[i].id,
            r->steps[i].op == STEP_ADD ? r->steps[i].address : NULL,
            r->steps[i].voter};
    rv = replog_members_change(r->srv->log, ms, (unsigned)r->nsteps,
                               steps_done, r);
    if (rv != 0)
        finish(r, rv == TB_ECONNECTIONLOSS ? rv : TB_ENEWCONFIGNOQUORUM);
}

/* ---- deciding ---- */

/* A server of `cur` that leaves in r->next, at quorum address `addr`. */
static const struct tb_config_server *
leaver_at(const struct reconfig *r, const struct members *cur, const char *addr)
{
    char x[TB_CONFIG_ADDR_MAX];
    size_t i;

    for (i = 0; i < cur->n; i++)
        if (members_find(&r->next, cur->v[i].id) == NULL &&
            tb_config_quorum_address(&cur->v[i], x, sizeof x) == 0 &&
            strcmp(x, addr) == 0)
            return &cur->v[i];
    return NULL;
}

/* Steps from `cur` to r->next: joiners, then promotions, then
 * demotions, so that the voters are never fewer than the old or the new
 * configuration has (reconcile.h's order); TB_EBADARGUMENTS when a
 * server would change its quorum address (it must leave, then join), or
 * a joiner take a leaver's (raft has no two members at one address, and
 * leavers go only after the outcome: one change removes it, the next adds
 * the joiner). */
static int plan(struct reconfig *r, const struct members *cur, char *err,
                size_t errlen)
{
    const struct tb_config_server *gone;
    struct tb_config_server *a, *b;
    char x[TB_CONFIG_ADDR_MAX], y[TB_CONFIG_ADDR_MAX];
    int self = (int)r->srv->server_id, pass;
    size_t i;

    r->nsteps = 0;
    r->hand_over = 0;
    for (pass = 0; pass < 3; pass++)
        for (i = 0; i < r->next.n; i++) {
            b = &r->next.v[i];
            a = members_find(cur, b->id);
            if (tb_config_quorum_address(b, y, sizeof y) != 0)
                return TB_EBADARGUMENTS;
            if (a == NULL && pass == 0 && (gone = leaver_at(r, cur, y))) {
                snprintf(err, errlen,
                         "server.%d's quorum address %s is server.%d's, "
                         "which leaves: remove server.%d, then add "
                         "server.%d",
                         b->id, y, gone->id, gone->id, b->id);
                return TB_EBADARGUMENTS;
            }
            if (a == NULL) {
                if (pass == 0) {
                    r->steps[r->nsteps] =
                        (struct step){STEP_ADD, b->id, voter(b), ""};
                    memcpy(r->steps[r->nsteps++].address, y, sizeof y);
                }
                continue;
            }
            (void)tb_config_quorum_address(a, x, sizeof x);
            if (!tb_config_same_quorum(a, b)) {
                snprintf(err, errlen,
                         "server.%d's quorum address would change from %s "
                         "to %s: remove it, then add it",
                         b->id, x, y);
                return TB_EBADARGUMENTS;
            }
            /* Its peer port is where the others' links go, and it listens
             * on the one it started with. */
            if (a->election_port != b->election_port) {
                snprintf(err, errlen,
                         "server.%d's election port would change from %d to "
                         "%d: remove it, then add it",
                         b->id, a->election_port, b->election_port);
                return TB_EBADARGUMENTS;
            }
            if (pass == 2 && voter(a) && !voter(b) && b->id == self)
                r->hand_over = 1;
            else if (voter(a) != voter(b) && pass == (voter(b) ? 1 : 2))
                r->steps[r->nsteps++] =
                    (struct step){STEP_ASSIGN, b->id, voter(b), ""};
        }
    /* Leavers after the outcome; this leader hands over instead. */
    r->nleaving = 0;
    for (i = 0; i < cur->n; i++)
        if (members_find(&r->next, cur->v[i].id) != NULL)
            continue;
        else if (cur->v[i].id == self)
            r->hand_over = 1;
        else
            r->leaving[r->nleaving++] = cur->v[i].id;
    return 0;
}

/* The new members from the request. */
static int next_members(struct reconfig *r, const struct members *cur,
                        const struct tb_reconfig_req *q, char *err,
                        size_t errlen)
{
    char *copy, *save, *item, *end;
    size_t i;
    long id;
    int rv;

    memset(&r->next, 0, sizeof r->next);
    if (q->new_members.ptr != NULL)
        return parse_lines(&r->next, q->new_members, ",\n", 1, 0, err, errlen);
    for (i = 0; i < cur->n; i++)
        if ((rv = members_put(&r->next, cur->v[i].id, cur->v[i].spec, err,
                              errlen)) != 0)
            return rv;
    if (q->leaving.ptr != NULL) {
        if ((copy = strndup(q->leaving.ptr, q->leaving.len)) == NULL)
            return TB_ENOMEM;
        for (item = strtok_r(copy, ",", &save); item != NULL;
             item = strtok_r(NULL, ",", &save)) {
            item = members_trim(item);
            if (*item == '\0')
                continue; /* ZooKeeper's split drops empty items */
            id = strtol(item, &end, 10);
            if (*end != '\0') {
                snprintf(err, errlen, "leaving: \"%s\" is not a server id",
                         item);
                free(copy);
                return TB_EINVAL;
            }
            /* As ZooKeeper's: an id the configuration does not hold (0
             * among them) leaves nothing. */
            if (id >= 1 && id <= 254)
                members_del(&r->next, (int)id);
        }
        free(copy);
    }
    if (q->joining.ptr != NULL)
        return parse_lines(&r->next, q->joining, ",", 0, 1, err, errlen);
    return 0;
}

/* ZooKeeper's isQuorumSynced: the new voters the leader hears from now
 * (itself included) are a majority of them. */
static int quorum_synced(struct reconfig *r)
{
    struct replog_follower f[REPLOG_MAX_MEMBERS];
    unsigned nf = replog_followers(r->srv->log, f, REPLOG_MAX_MEMBERS), j;
    size_t i, voters = 0, synced = 0;

    for (i = 0; i < r->next.n; i++) {
        if (!voter(&r->next.v[i]))
            continue;
        voters++;
        if (r->next.v[i].id == (int)r->srv->server_id) {
            synced++;
            continue;
        }
        for (j = 0; j < nf; j++)
            if (f[j].id == r->next.v[i].id && (f[j].synced || f[j].lag == 0))
                synced++;
    }
    return synced > voters / 2;
}

/* The configuration's members as reconcile.h takes them: their count. */
static size_t wanted(const struct members *m, struct reconcile_member *want)
{
    size_t i;

    for (i = 0; i < m->n; i++)
        want[i] = (struct reconcile_member){m->v[i].id, voter(&m->v[i])};
    return m->n;
}

/* Whether writes are refused for low disk: the free space last measured
 * is below the limit (replog.h's G3).  replog measures again as a write
 * nears the limit, so this is what its last write found. */
static int disk_low(struct tbd *s)
{
    struct replog_stats st;

    replog_get_stats(s->log, &st);
    return st.free_bytes < st.free_limit;
}

static int decide(struct reconfig *r, const struct tb_txn *t)
{
    struct tbd *s = r->srv;
    struct tb_rd rd = tb_rd_make(t->body.ptr, t->body.len);
    struct tb_reconfig_req q;
    struct members cur;
    struct reconcile_member want[REPLOG_MAX_MEMBERS];
    struct tree_node *n;
    char err[800] = "";
    size_t i, voters = 0;
    int rv;

    if (!s->cfg->reconfig_enabled) {
        tb_log(TB_LOG_WARN, "reconfig refused: reconfigEnabled is false");
        return TB_ERECONFIGDISABLED;
    }
    if (s->peer == NULL)
        return TB_EUNIMPLEMENTED;
    /* Refused as any write under low disk, before raft's members change:
     * the outcome goes through replog_propose, which would refuse it
     * after. */
    if (disk_low(s))
        return TB_ENOTREADONLY;
    if (r->busy)
        return TB_ERECONFIGINPROGRESS;
    if ((rv = current(s, &cur)) != 0) {
        members_free(&cur);
        return rv == TB_ENOMEM ? rv : TB_ESYSTEM;
    }
    /* A new leader decides on what it has applied (until an entry of its
     * own term is, the last change's outcome may be among what it has
     * not), and plans from the configuration's members: until raft's are
     * those again (after a change cut short, reconcile's steps), a plan
     * would ask raft for what it has already, or leave it with what the
     * configuration does not say.  Unless reconcile's step failed and
     * waits (a server it needs is down): then the operator's reconfig,
     * which may be the remedy (its removal), gets its turn. */
    if (replog_member_changing(s->log) || !replog_leader_caught_up(s->log) ||
        (reconcile_apart(s->log, want, wanted(&cur, want), (int)s->server_id) &&
         !(r->reconcile_wait != 0 && tbd_now_ms(s) < r->reconcile_at))) {
        members_free(&cur);
        return TB_ERECONFIGINPROGRESS;
    }
    if (tb_reconfig_req_decode(&rd, &q) != 0) {
        members_free(&cur);
        return TB_EMARSHALLING;
    }
    if (q.config_id != -1 && q.config_id != cur.version) {
        tb_log(TB_LOG_WARN,
               "reconfig refused: from version %llx, the current is %llx",
               (unsigned long long)q.config_id,
               (unsigned long long)cur.version);
        members_free(&cur);
        return TB_EBADVERSION;
    }
    rv = next_members(r, &cur, &q, err, sizeof err);
    if (rv == 0)
        rv = duplicate_address(&r->next, &cur, err, sizeof err);
    for (i = 0; rv == 0 && i < r->next.n; i++)
        voters += voter(&r->next.v[i]);
    if (rv == 0 && voters < 2) {
        snprintf(err, sizeof err,
                 "the new configuration must include at least 2 voters");
        rv = TB_EINVAL;
    }
    if (rv == 0)
        rv = plan(r, &cur, err, sizeof err);
    members_free(&cur);
    n = config_node(s);
    if (rv == 0 && (n == NULL || tb_acl_check(tree_node_acl(n), t->ids,
                                              t->super, TB_PERM_WRITE) != 0)) {
        snprintf(err, sizeof err, "only the super user may reconfig");
        rv = TB_ENOAUTH;
    }
    if (rv != 0) {
        members_free(&r->next);
        tb_log(TB_LOG_WARN, "reconfig refused: %s",
               err[0] ? err : tb_strerror(rv));
        return rv == TB_EINVAL ? TB_EBADARGUMENTS : rv;
    }
    return 0;
}

/* The barrier before the first step: the followers that have its entry
 * are those a change can count on now. */
static void synced(void *arg, int status)
{
    struct reconfig *r = arg;

    if (status != 0) {
        finish(r, TB_ECONNECTIONLOSS);
        return;
    }
    /* Barriers again until they are, for an election timeout: a follower
     * that is up answers one within a round trip, but a loaded machine
     * delays what raft last heard from it. */
    if (!quorum_synced(r)) {
        if (tbd_now_ms(r->srv) - r->sync_start <
                (uint64_t)r->srv->cfg->election_timeout &&
            replog_barrier(r->srv->log, synced, r) == 0)
            return;
        tb_log(TB_LOG_WARN, "reconfig refused: a majority of the new voters "
                            "must be connected and synced");
        finish(r, TB_ENEWCONFIGNOQUORUM);
        return;
    }
    make_steps(r);
}

int reconfig_propose(struct tbd *s, const struct tb_txn *t,
                     void (*done)(void *arg, int status, int64_t index),
                     void *arg)
{
    struct reconfig *r = s->reconfig;
    int rc;

    if (r == NULL && (r = state(s)) == NULL)
        return TB_ENOMEM;
    if ((rc = decide(r, t)) != 0) {
        struct tb_wbuf body;
        int rv;

        /* Its own buffer: r->body may be the change in flight's. */
        tb_wbuf_init(&body);
        rv = propose_outcome(s, &body, rc, TB_STR(""), t->xid, t->session,
                             t->origin, done, arg);
        tb_wbuf_free(&body);
        return rv;
    }
    r->busy = 1;
    r->rc = 0;
    r->xid = t->xid;
    r->session = t->session;
    r->origin = t->origin;
    r->done = done;
    r->arg = arg;
    tb_log(TB_LOG_INFO,
           "reconfig: %zu server(s) joining or changing role, %zu leaving%s",
           r->nsteps, r->nleaving,
           r->hand_over ? ", then this leader hands leadership over" : "");
    r->sync_start = tbd_now_ms(s);
    /* Refused as any write the log does not take (a leadership handover
     * under way, say): `done` must not fire before this returns. */
    if ((rc = replog_barrier(s->log, synced, r)) != 0) {
        members_free(&r->next);
        r->busy = 0;
        return rc;
    }
    return 0;
}

/* ---- every member: following the members applied ---- */

static struct reconfig *state(struct tbd *s)
{
    struct reconfig *r = s->reconfig;

    if (r == NULL && (r = calloc(1, sizeof *r)) != NULL) {
        r->srv = s;
        tb_wbuf_init(&r->body);
        s->reconfig = r;
    }
    return r;
}

static void reconciled(void *arg, int status)
{
    struct reconfig *r = arg;

    if (status != TB_ENEWCONFIGNOQUORUM) {
        r->reconcile_wait = 0;
        if (status != 0)
            tb_log(TB_LOG_WARN,
                   "reconfig: raft's members did not change back to the "
                   "configuration's: %s",
                   tb_strerror(status));
        return;
    }
    tb_log(TB_LOG_WARN,
           "reconfig: raft's members did not change back to the "
           "configuration's: %s; trying again in %llu s",
           tb_strerror(status), wait_longer(r));
}

static const char *raft_role(int role)
{
    return role == REPLOG_VOTER     ? "a voter"
           : role == REPLOG_STANDBY ? "a standby"
                                    : "a spare";
}

/* On a leader with no change in flight: raft's members brought back to
 * the configuration's after a reconfig its leader did not finish (lost
 * before the outcome was logged or a leaver removed, or handing over as
 * a leaver), one change per tick (reconcile.h): a server raft has and the
 * configuration does not goes; a server whose role in raft is not the
 * configuration's (participant: a voter, observer: a standby) gets it
 * back; last, this leader, out of the configuration or an observer in it,
 * hands leadership over. */
static void reconcile(struct reconfig *r)
{
    struct tbd *s = r->srv;
    struct replog_member rm[REPLOG_MAX_MEMBERS];
    struct reconcile_member want[REPLOG_MAX_MEMBERS];
    struct reconcile_step st;
    struct members m;
    unsigned n;
    int rv = 0;

    if (r->busy || !reconcile_may(s->log) ||
        (r->reconcile_wait != 0 && tbd_now_ms(s) < r->reconcile_at))
        return;
    n = replog_members(s->log, rm, REPLOG_MAX_MEMBERS);
    if (current(s, &m) != 0) {
        members_free(&m);
        return;
    }
    st = reconcile_next(rm, n, want, wanted(&m, want), (int)s->server_id);
    members_free(&m);
    if (st.op == RECONCILE_REMOVE) {
        tb_log(TB_LOG_WARN,
               "reconfig: server %d is among raft's members but not in the "
               "configuration (a change its leader did not finish): "
               "removing it",
               st.id);
        rv = replog_member_remove(s->log, st.id, reconciled, r);
    } else if (st.op == RECONCILE_ASSIGN) {
        tb_log(TB_LOG_WARN,
               "reconfig: server %d is %s in raft's members but %s in the "
               "configuration (a change its leader did not finish): making "
               "it %s",
               st.id, raft_role(st.role),
               st.voter ? "a participant" : "an observer",
               raft_role(st.voter ? REPLOG_VOTER : REPLOG_STANDBY));
        rv = replog_member_assign(s->log, st.id, st.voter, reconciled, r);
    } else if (st.op == RECONCILE_HANDOVER) {
        tb_log(TB_LOG_WARN,
               "reconfig: this leader, server %d, is a voter in raft's "
               "members but no voter in the configuration (a change its "
               "leader did not finish): handing leadership to another voter, "
               "which makes the change",
               st.id);
        (void)hand_over(r); /* its failure logged, the next try waits */
    }
    if (rv != 0)
        reconciled(r, rv);
}

/* The configuration applied changed: the peer links follow it, and
 * whether this server is in it is noted. */
static void follow_config(struct reconfig *r)
{
    struct tbd *s = r->srv;
    struct tree_node *n = config_node(s);
    struct peer_member pm[REPLOG_MAX_MEMBERS];
    struct members m;
    struct tb_stat st;
    size_t i;

    if (n == NULL || tree_node_data(n).len == 0)
        return;
    tree_node_stat(n, &st);
    if (r->seen == st.mzxid || current(s, &m) != 0) {
        if (r->seen != st.mzxid)
            members_free(&m);
        return;
    }
    r->seen = st.mzxid;
    for (i = 0; i < m.n; i++)
        pm[i] =
            (struct peer_member){m.v[i].id, m.v[i].host, m.v[i].election_port};
    peer_set_members(s, pm, (unsigned)m.n);
    r->absent = members_find(&m, (int)s->server_id) == NULL;
    tb_log(TB_LOG_INFO, "members: configuration version %llx, %zu server(s)",
           (unsigned long long)st.mzxid, m.n);
    members_free(&r->live);
    r->live = m;
}

struct tb_config_members reconfig_members(const struct tbd *s)
{
    const struct reconfig *r = s->reconfig;

    if (r != NULL && r->live.n > 0)
        return (struct tb_config_members){r->live.v, r->live.n,
                                          r->live.version};
    return (struct tb_config_members){s->cfg->servers, s->cfg->nservers, 0};
}

/* Whether raft's members (the latest configuration entry this server
 * has) hold it as a voter or standby: added and caught up. */
static int in_raft(struct reconfig *r)
{
    struct replog_member rm[REPLOG_MAX_MEMBERS];
    unsigned n = replog_members(r->srv->log, rm, REPLOG_MAX_MEMBERS), i;

    for (i = 0; i < n; i++)
        if (rm[i].id == (int)r->srv->server_id && rm[i].role != REPLOG_SPARE)
            return 1;
    return 0;
}

/* Outside the ensemble a server serves no clients, what it holds not
 * being the ensemble's: a joiner (joinEnsemble) until it is in raft's
 * members and in the configuration applied, a member once the
 * configuration applied no longer holds it. */
static void serve_or_not(struct reconfig *r)
{
    struct tbd *s = r->srv;
    int join, outside;

    if (s->cfg->join_ensemble && !r->admitted && r->seen != 0 && !r->absent &&
        in_raft(r))
        r->admitted = 1;
    join = s->cfg->join_ensemble && !r->admitted;
    outside = join || r->absent;
    if (outside == r->outside)
        return;
    r->outside = outside;
    peer_set_outside(s, outside);
    if (join)
        tb_log(TB_LOG_INFO,
               "joining: no clients until the leader has added server %lld "
               "(reconfig -add) and it has caught up",
               (long long)s->server_id);
    else if (outside)
        tb_log(TB_LOG_WARN,
               "server %lld is not a member of the ensemble any more "
               "(configuration version %llx, a reconfig removed it): it "
               "serves no clients from now on; stop it",
               (long long)s->server_id, (unsigned long long)r->seen);
    else
        tb_log(TB_LOG_INFO, "server %lld is a member: serving clients",
               (long long)s->server_id);
}

void reconfig_tick(struct tbd *s)
{
    struct reconfig *r;

    if (s->peer == NULL || (r = state(s)) == NULL)
        return;
    if (r->leave_retry) {
        r->leave_retry = 0;
        leave_next(r);
    }
    reconcile(r);
    follow_config(r);
    serve_or_not(r);
}

void reconfig_free(struct tbd *s)
{
    struct reconfig *r = s->reconfig;

    if (r == NULL)
        return;
    members_free(&r->next);
    members_free(&r->live);
    tb_wbuf_free(&r->body);
    free(r);
    s->reconfig = NULL;
}
