/* A deterministic cluster: N servers' real state machines (src/server/fsm)
 * and replicated logs (src/server/replog, attached: replog_attach.h) over
 * libraft's raft_fixture, with its in-memory io and virtual clock, in one
 * process.  Nothing sleeps: a scenario of seconds of cluster time runs in
 * milliseconds, the same way every time.
 *
 * The harness records every proposal and the one answer it must get, and
 * cluster_converge asserts what must hold after any scenario: every live
 * server has applied the same entries (the same zxid and byte-identical
 * state machine snapshots), every acknowledged write is on every one of
 * them, and no proposal was answered twice.  All through, it asserts that
 * no two servers apply different entries at one index, that a write is
 * acknowledged only once the entry applied at its index is its own, that
 * a follower's success answer to an AppendEntries is true of its leader's
 * log, and that a server installing a snapshot is a follower.
 * (cluster.c also keeps the fixture io's truncate from running, and puts
 * back what its snapshots lose: it says why.) */
#ifndef TB_TEST_CLUSTER_H
#define TB_TEST_CLUSTER_H

#include <stdint.h>

#include <raft.h>
#include <raft/fixture.h>

#include "server/fsm/fsm.h"
#include "server/replog/replog.h"

#define CLUSTER_MAX       5
#define CLUSTER_MAX_PROPS 4096

struct cluster;

struct node {
    struct cluster *c;
    unsigned i;
    struct fsm *fsm;
    struct replog *log;
    int leader; /* as on_leader last said */
    int refuse_restore; /* its state machine takes no snapshot (TB_ENOMEM) */
    uint64_t leader_changes;
    /* The last two snapshots raft stored in the fixture's io: their last
     * index and their configuration's (cluster.c says why). */
    raft_index put_index[2], put_conf_index[2];
};

/* A proposal and its answer. */
struct prop {
    unsigned node; /* proposed on */
    uint64_t hash; /* of its entry's payload */
    int32_t type;
    char path[48]; /* a create's */
    int fired;     /* answers: must end at 1 */
    int status;
    int64_t index;
    int gone; /* a later write removed it, as the scenario means to */
};

struct cluster {
    struct raft_fixture f;
    unsigned n;
    struct node nodes[CLUSTER_MAX];
    struct replog_config cfg;
    struct prop props[CLUSTER_MAX_PROPS];
    unsigned nprops;
    /* The hash of the payload applied at each log index, by whichever
     * server applied it first: every other must apply the same there. */
    uint64_t *applied;
    size_t napplied;
    int64_t session; /* the session creates are made in */
    /* Called on every live server after its log's tick, as tumblerd's
     * tick follows the log's; NULL for none. */
    void (*on_tick)(struct cluster *c, unsigned i, void *arg);
    void *on_tick_arg;
    /* Set while the fixture steps, when raft calls its callbacks: a
     * server's own callbacks must run after, outside raft (replog__defer),
     * as they may call raft again. */
    int in_raft;
};

/* n servers, all voters, bootstrapped and started; none leads yet.  cfg:
 * the logs' configuration (snapshot policy), or NULL for the default. */
void cluster_init(struct cluster *c, unsigned n,
                  const struct replog_config *cfg);
/* The same, the first `voters` voting, the others replicating only (an
 * ensemble's observers). */
void cluster_init_voters(struct cluster *c, unsigned n, unsigned voters,
                         const struct replog_config *cfg);
void cluster_close(struct cluster *c);
/* One more server, started with an empty log and in no configuration, as
 * a server joining at run time (replog_config.join): its index.  It
 * becomes a member by replog_member_add on the leader. */
unsigned cluster_grow(struct cluster *c);

/* Steps the fixture (ticking every live server's log after each step)
 * until stop(c, arg) or ms of cluster time passed; whether it stopped. */
int cluster_step_until(struct cluster *c, int (*stop)(struct cluster *, void *),
                       void *arg, unsigned ms);
void cluster_step_for(struct cluster *c, unsigned ms);
/* Steps until a leader is known; its index. */
unsigned cluster_leader(struct cluster *c, unsigned ms);
/* Steps until a live server other than `old` leads; its index. */
unsigned cluster_new_leader(struct cluster *c, unsigned old, unsigned ms);

/* Proposals on server i; the prop's index in c->props.  A refusal is an
 * answer too (recorded with fired = 1). */
unsigned cluster_open_session(struct cluster *c, unsigned i);
unsigned cluster_create(struct cluster *c, unsigned i, const char *path,
                        int32_t flags);
/* Closes c->session. */
unsigned cluster_close_session(struct cluster *c, unsigned i);
/* The session created by prop p, once applied. */
int64_t cluster_session_of(struct cluster *c, unsigned p);
/* A session opened on server `leader`, applied everywhere, made
 * c->session (the one creates use). */
void cluster_session_on(struct cluster *c, unsigned leader);

/* Every live server has applied everything its log holds that is
 * committed, and then: the invariants above.  Steps up to ms. */
void cluster_converge(struct cluster *c, unsigned ms);
/* Whether server i's tree has path. */
int cluster_has(struct cluster *c, unsigned i, const char *path);
/* Whether server i is installing a snapshot it was sent. */
int cluster_installing(struct cluster *c, unsigned i);
/* The role (REPLOG_*) of member `id` in server i's configuration, or -1. */
int cluster_role(struct cluster *c, unsigned i, int id);

/* Cuts server i off from every other (both directions), or back. */
void cluster_isolate(struct cluster *c, unsigned i);
void cluster_rejoin(struct cluster *c, unsigned i);

#endif
