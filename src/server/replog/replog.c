/* replog handle: open (bootstrap, restore, replay), propose, close, and the
 * tick that refreshes the free-disk figure and polls leadership.  Proposals
 * are in propose.c, the state machine glue in raft_fsm.c, the disk guard in
 * disk.c, the entry format in envelope.c. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/replog/internal.h"
#include "server/replog/wal.h"

#define DEFAULT_ADDRESS          "127.0.0.1:0"
#define DEFAULT_SNAP_TRAILING    8192
#define DEFAULT_SNAP_LOG_BYTES   (4u << 20)
#define DEFAULT_SNAP_IDLE_MS     100
/* The wait for a leader that is cut off or stopped (one whose process is
 * gone is replaced at once, failover.c): it tolerates loop stalls of a few
 * hundred ms from snapshots of a large state. */
#define DEFAULT_ELECTION_MS  500
#define DEFAULT_HEARTBEAT_MS 50

static void vlogf(struct replog *l, int level, const struct replog_field *f,
                  size_t n, const char *fmt, va_list ap)
    __attribute__((format(printf, 5, 0)));
static void vlogf(struct replog *l, int level, const struct replog_field *f,
                  size_t n, const char *fmt, va_list ap)
{
    char msg[512];

    vsnprintf(msg, sizeof msg, fmt, ap);
    if (l->log_fields != NULL)
        l->log_fields(l->log_data, level, msg, f, n);
    else if (l->log != NULL)
        l->log(l->log_data, level, msg);
    else if (level <= REPLOG_LOG_WARN)
        fprintf(stderr, "replog: %s\n", msg);
}

void replog__logf(struct replog *l, int level, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vlogf(l, level, NULL, 0, fmt, ap);
    va_end(ap);
}

void replog__logf_fields(struct replog *l, int level,
                         const struct replog_field *f, size_t n,
                         const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vlogf(l, level, f, n, fmt, ap);
    va_end(ap);
}

void replog__fail_stop(struct replog *l, const char *fmt, ...)
{
    char msg[256];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    replog__logf(l, REPLOG_LOG_ERROR,
                 "%s; stopping (exit %d): every acknowledged write is on disk,"
                 " and a restart recovers from it",
                 msg, REPLOG_EXIT_LOG_FAILED);
    /* A snapshot child would outlive us holding the client port.  Killed,
     * not discarded: a worker thread may be writing the snapshot from the
     * map that discarding unmaps, and would crash before the exit. */
    if (l->snap_pid > 0)
        kill(l->snap_pid, SIGKILL);
    _exit(REPLOG_EXIT_LOG_FAILED);
}

int replog__err(int raft_rv)
{
    switch (raft_rv) {
    case 0:
        return 0;
    case RAFT_NOMEM:
        return TB_ENOMEM;
    case RAFT_CORRUPT:
    case RAFT_MALFORMED:
        return TB_EDATAINCONSISTENCY;
    case RAFT_IOERR:
    case RAFT_NOSPACE:
        return TB_EIO;
    case RAFT_SHUTDOWN:
    case RAFT_CANCELED:
        return TB_ECLOSING;
    case RAFT_LEADERSHIPLOST:
        return TB_ECONNECTIONLOSS;
    case RAFT_TOOBIG:
        return TB_ETOOBIG;
    case RAFT_NAMETOOLONG:
    case RAFT_INVALID:
    case RAFT_NOTFOUND:
    case RAFT_BADID:
        return TB_EINVAL;
    default:
        return TB_ESYSTEM;
    }
}

/* ---- queries ------------------------------------------------------------ */

uint64_t replog__now(struct replog *l)
{
    return (uint64_t)l->raft->io->time(l->raft->io);
}

int64_t replog_last_applied(struct replog *l)
{
    int64_t r = (int64_t)raft_last_applied(l->raft);

    /* Inside apply and done, raft has not advanced last_applied yet. */
    return r > l->applied_index ? r : l->applied_index;
}

int replog_is_leader(struct replog *l)
{
    return !l->closing && raft_state(l->raft) == RAFT_LEADER;
}

/* Whether this server has a vote in the configuration raft follows. */
static int votes(const struct raft *r)
{
    unsigned i;

    for (i = 0; i < r->configuration.n; i++)
        if (r->configuration.servers[i].id == r->id)
            return r->configuration.servers[i].role == RAFT_VOTER;
    return 0;
}

int replog_leader(struct replog *l)
{
    raft_id id = 0;
    const char *addr = NULL;

    if (l->closing)
        return 0;
    raft_leader(l->raft, &id, &addr);
    /* raft's follower tick turns only a voter into a candidate when the
     * leader falls silent: a standby (an observer), a spare or a server no
     * longer in the configuration goes on naming the leader it last heard
     * from, however long ago.  raft restarts election_timer_start on every
     * AppendEntries (heartbeats included) and InstallSnapshot it accepts
     * from the current leader; silent for longer than an election timeout,
     * the leader is no longer known, as a voter would have stood for
     * election by then. */
    if (id != 0 && id != l->raft->id && raft_state(l->raft) == RAFT_FOLLOWER &&
        !votes(l->raft) &&
        replog__now(l) - l->raft->election_timer_start >
            l->raft->election_timeout)
        return 0;
    return (int)id;
}

void replog__heard(struct replog *l, raft_id id)
{
    unsigned i, oldest = 0;

    for (i = 0; i < l->nheard && l->heard[i].id != id; i++)
        if (l->heard[i].at < l->heard[oldest].at)
            oldest = i;
    if (i == REPLOG_MAX_MEMBERS)
        i = oldest; /* a member long gone, after many changes */
    else if (i == l->nheard)
        l->nheard++;
    l->heard[i].id = id;
    l->heard[i].at = replog__now(l);
}

/* Heard from within an election timeout (a member the leader would count
 * in its contact with a majority). */
static int heard_lately(struct replog *l, raft_id id)
{
    unsigned i;

    for (i = 0; i < l->nheard; i++)
        if (l->heard[i].id == id)
            return replog__now(l) - l->heard[i].at <= l->raft->election_timeout;
    return 0;
}

unsigned replog_followers(struct replog *l, struct replog_follower *out,
                          unsigned max)
{
    const struct raft_configuration *c = &l->raft->configuration;
    const struct raft_progress *pr;
    raft_index last = raft_last_index(l->raft);
    unsigned i, n = 0;

    if (!replog_is_leader(l))
        return 0;
    for (i = 0; i < c->n && n < max; i++) {
        if (c->servers[i].id == (raft_id)l->server_id)
            continue;
        pr = &l->raft->leader_state.progress[i];
        out[n++] = (struct replog_follower){
            (int)c->servers[i].id, c->servers[i].role == RAFT_VOTER,
            heard_lately(l, c->servers[i].id),
            last > pr->match_index ? last - pr->match_index : 0};
    }
    return n;
}

/* Outside raft (replog__defer): the caller may close the log, or ask for
 * another transfer. */
static void transfer_taken(struct replog_deferred *a)
{
    struct replog *l = TB_CONTAINER_OF(a, struct replog, transfer_end);
    void (*cb)(void *arg) = l->transfer_cb;

    l->transfer_cb = NULL; /* the next may be asked for from cb on */
    cb(l->transfer_arg);
}

static void transferred(struct raft_transfer *req)
{
    struct replog *l = req->data;
    int id = replog_leader(l);

    replog__logf_fields(
        l, REPLOG_LOG_INFO,
        REPLOG_FIELDS(REPLOG_STR("event", "leadership_transfer"),
                      REPLOG_INT("leader", id != 0 ? id : l->server_id),
                      REPLOG_INT("handed", id != 0 && id != l->server_id)),
        "leadership %s server %d",
        id != 0 && id != l->server_id ? "handed to" : "kept by",
        id != 0 ? id : l->server_id);
    l->transfer_end.take = transfer_taken;
    replog__defer(l, &l->transfer_end, 0);
}

int replog_transfer(struct replog *l, void (*cb)(void *arg), void *arg)
{
    int rv;

    if (!replog_is_leader(l) || l->transfer_cb != NULL)
        return TB_EINVAL;
    memset(&l->transfer, 0, sizeof l->transfer);
    l->transfer.data = l;
    if ((rv = raft_transfer(l->raft, &l->transfer, 0, transferred)) != 0)
        return replog__err(rv);
    l->transfer_cb = cb;
    l->transfer_arg = arg;
    return 0;
}

void replog_set_min_free(struct replog *l, uint64_t bytes)
{
    l->min_free = bytes;
    replog__disk_refresh(l);
}

void replog_get_stats(struct replog *l, struct replog_stats *out)
{
    *out = l->stats;
    out->last_applied = replog_last_applied(l);
    out->free_limit = replog__disk_limit(l);
    out->snapshot_busy = l->snap_pid > 0 || l->snap_active;
    out->term = l->raft->current_term;
    replog__wal_stats(&l->io, out);
}

/* ---- tick: disk refresh and leadership poll ----------------------------- */

/* A leader's first entry, in its own term (Raft's no-op, which libraft
 * does not write): it commits what earlier terms left, and every member
 * it reaches then holds more than the bootstrap entry, which is how a
 * member whose log is new tells a first start from an ensemble with data
 * (fresh.c); once applied, this leader's state holds whatever any member
 * applied (replog_leader_caught_up).  Proposed again if it fails. */
static void catch_up(struct replog *l, int lead)
{
    raft_term t = l->raft->current_term;

    if (lead && l->caught_term != t && l->catching_term != t &&
        replog_barrier(l, NULL, NULL) == 0)
        l->catching_term = t;
}

void replog__poll_leader(struct replog *l)
{
    int lead, id;

    /* A close is no change of leader.  replog_is_leader says no from the
     * close on, but raft leads while the appends drain, and drain_cb waits
     * for their real outcome: a tick in between took the close for a loss
     * of leadership and failed them, ECONNECTIONLOSS. */
    if (l->closing)
        return;
    lead = replog_is_leader(l);
    id = replog_leader(l);
    catch_up(l, lead);

    if (id != l->known_leader) {
        l->known_leader = id;
        l->stats.leader_changes++;
    }
    if (lead == l->was_leader)
        return;
    l->was_leader = lead;
    replog__logf_fields(
        l, REPLOG_LOG_INFO,
        REPLOG_FIELDS(REPLOG_STR("event", lead ? "leadership_taken"
                                               : "leadership_lost"),
                      REPLOG_INT("server", l->server_id),
                      REPLOG_INT("term", l->raft->current_term)),
        "server %d %s leadership (term %llu)", l->server_id,
        lead ? "took" : "lost", (unsigned long long)l->raft->current_term);
    /* raft fails a batch only until its first entry is applied: the rest
     * of one that was cut short would otherwise wait forever.  Their
     * outcome is unknown, as with any write a lost leader accepted. */
    if (!lead)
        replog__fail_from(l, 0, TB_ECONNECTIONLOSS);
    else /* ZooKeeper's are its Leader's: each leadership's own */
        l->stats.proposal_last = l->stats.proposal_min = l->stats.proposal_max =
            0;
    REPLOG_CHECK(l);
    if (l->on_leader != NULL) {
        l->on_leader(l->on_leader_data, lead);
    }
}

void replog__defer(struct replog *l, struct replog_deferred *a, int status)
{
    a->status = status;
    tb_queue_insert_tail(&l->deferred, &a->link);
}

void replog__deferred_take(struct replog *l)
{
    struct replog_deferred *a;

    while (!tb_queue_empty(&l->deferred)) {
        a = TB_CONTAINER_OF(tb_queue_head(&l->deferred), struct replog_deferred,
                            link);
        tb_queue_remove(&a->link);
        a->take(a);
    }
}

static void tick_cb(uv_timer_t *t)
{
    struct replog *l = t->data;

    /* raft goes unavailable after an error of its own it cannot undo (out
     * of memory handling a message, a write of its term that failed), and
     * stays so: up, serving no one, voting for no one.  Stopped instead, a
     * restart recovers it. */
    if (!l->closing && raft_state(l->raft) == RAFT_UNAVAILABLE)
        replog__fail_stop(l, "raft stopped after an error of its own%s%s",
                          raft_errmsg(l->raft)[0] != '\0' ? ": " : "",
                          raft_errmsg(l->raft));
    if (uv_now(l->loop) - l->last_check_ms >= REPLOG_DISK_REFRESH_MS)
        replog__disk_refresh(l);
    replog__poll_leader(l);
    if (!l->closing)
        replog__fresh_tick(l, replog_is_leader(l));
    replog__deferred_take(l);
    replog__snapshot_poke(l);
    if (l->tcp_ready)
        replog__tcp_follow(&l->transport);
}

/* ---- close -------------------------------------------------------------- */

static void free_handle(struct replog *l)
{
    void (*cb)(void *) = l->close_cb;
    void *arg = l->close_arg;

    /* raft finalizes a snapshot it was given; a child may still run. */
    replog__snapshot_discard(l);
    replog__deferred_take(l);
    tb_wbuf_free(&l->snap_state);
    free(l->batch);
    free(l->notice.told);
    raft_configuration_close(&l->mend.committed);
    if (l->lock_fd >= 0)
        close(l->lock_fd);
    replog__delete(l);
    if (cb != NULL)
        cb(arg);
}

static void maybe_finish(struct replog *l)
{
    if (l->raft_closed && l->handles_open == 0)
        free_handle(l);
}

static void handle_closed(uv_handle_t *h)
{
    struct replog *l = h->data;

    l->handles_open--;
    maybe_finish(l);
}

static void raft_closed(struct raft *r)
{
    struct replog *l = r->data;

    replog__wal_free(&l->io);
    raft_uv_close(&l->uv);
    if (l->tcp_ready)
        replog__tcp_free(&l->transport);
    /* raft fails the batches it knows of while closing; anything not
     * answered is answered here, so done fires exactly once. */
    replog__fail_from(l, 0, TB_ECLOSING);
    replog__fail_queued(l, TB_ECLOSING);
    l->raft_closed = 1;
    maybe_finish(l);
}

static void start_close(struct replog *l)
{
    if (l->handles_open > 0) {
        uv_close((uv_handle_t *)&l->tick, handle_closed);
        uv_close((uv_handle_t *)&l->close_timer, handle_closed);
    }
    raft_close(l->raft, raft_closed);
}

/* libraft 0.15 crashes in raft_close when appends are still queued in
 * raft_uv: it cancels them, and the leader's append callback then walks
 * request state that raft_close has already torn down.  So close waits
 * until every entry appended to the log is on disk.  A lone voter commits
 * and applies an entry as soon as it is on disk, so this also answers
 * every accepted proposal with its real outcome.  A snapshot being written
 * is waited for too, as is a leader's child serializing one: raft_close
 * drops it, and the next start would then replay the log it was meant to
 * replace.  Not a follower's: raft takes it only as it applies an entry,
 * which an idle leader never sends, so the close would wait its whole
 * REPLOG_CLOSE_DRAIN_MS for nothing. */
static void drain_cb(uv_timer_t *t)
{
    struct replog *l = t->data;
    raft_index last;
    int busy, child;

    replog__submit(l); /* what was proposed before the close */
    last = raft_last_index(l->raft);
    child = l->snap_pid > 0 && raft_state(l->raft) == RAFT_LEADER;
    busy = l->raft->last_stored < last || l->snap_active || child;

    if (busy && uv_now(l->loop) - l->close_started_ms < REPLOG_CLOSE_DRAIN_MS)
        return;
    if (busy)
        replog__logf(l, REPLOG_LOG_WARN,
                     "closing with entries %llu..%llu not yet on disk%s",
                     (unsigned long long)l->raft->last_stored + 1,
                     (unsigned long long)last,
                     l->snap_active || child ? ", snapshot being written" : "");
    uv_timer_stop(t);
    start_close(l);
}

void replog_close(struct replog *l, void (*cb)(void *arg), void *arg)
{
    if (TB_NEVER(l->closing))
        return;
    l->closing = 1;
    l->close_cb = cb;
    l->close_arg = arg;
    l->close_started_ms = uv_now(l->loop);
    /* Always from the timer: raft_close must not run inside a raft
     * callback that called us, nor before the appends have drained. */
    uv_timer_start(&l->close_timer, drain_cb, 0, 1);
}

/* ---- open --------------------------------------------------------------- */

static int mkdir_p(const char *dir)
{
    char path[4096];
    size_t i, n = strlen(dir);

    if (n == 0 || n >= sizeof path)
        return ENAMETOOLONG;
    memcpy(path, dir, n + 1);
    for (i = 1; i <= n; i++) {
        if (path[i] != '/' && path[i] != '\0')
            continue;
        path[i] = '\0';
        if (mkdir(path, 0755) != 0 && errno != EEXIST)
            return errno;
        path[i] = dir[i];
    }
    return 0;
}

static int bootstrap(struct replog *l)
{
    struct raft_configuration conf;
    unsigned i;
    int rv;

    /* A lone voter, or every member of the ensemble, each bootstrapped
     * with the same list. */
    raft_configuration_init(&conf);
    rv = 0;
    if (l->n_peers == 0)
        rv = raft_configuration_add(&conf, (raft_id)l->server_id, l->address,
                                    RAFT_VOTER);
    for (i = 0; i < l->n_peers && rv == 0; i++) {
        rv = raft_configuration_add(
            &conf, (raft_id)l->peers[i].id, l->peers[i].address,
            l->peers[i].voter ? RAFT_VOTER : RAFT_STANDBY);
    }
    if (rv == 0)
        rv = raft_bootstrap(l->raft, &conf);
    raft_configuration_close(&conf);
    if (rv == RAFT_CANTBOOTSTRAP) /* already initialised: the usual case */
        return 0;
    if (rv == 0)
        replog__logf(l, REPLOG_LOG_INFO, "bootstrapped %s as server %d", l->dir,
                     l->server_id);
    return rv;
}

static void copy_config(struct replog *l, const struct replog_config *cfg)
{
    l->server_id = cfg->server_id;
    l->min_free = cfg->min_free_bytes;
    l->free_space = cfg->free_space;
    l->free_space_data = cfg->free_space_data;
    l->log = cfg->log;
    l->log_fields = cfg->log_fields;
    l->log_data = cfg->log_data;
    l->on_leader = cfg->on_leader;
    l->on_leader_data = cfg->on_leader_data;
    l->snap_in_loop = cfg->snapshot_in_loop;
    l->repair = cfg->repair_log;
#define OR(v, d) ((v) != 0 ? (v) : (d))
    l->snap_max_entries = OR(cfg->snapshot_max_entries, UINT_MAX);
    l->snap_trailing = OR(cfg->snapshot_trailing, DEFAULT_SNAP_TRAILING);
    l->snap_log_floor = OR(cfg->snapshot_log_bytes, DEFAULT_SNAP_LOG_BYTES);
    l->snap_idle_ms = OR(cfg->snapshot_idle_ms, DEFAULT_SNAP_IDLE_MS);
    l->election_ms = OR(cfg->election_timeout_ms, DEFAULT_ELECTION_MS);
    l->heartbeat_ms = OR(cfg->heartbeat_timeout_ms, DEFAULT_HEARTBEAT_MS);
#undef OR
}

void replog__configure_raft(struct replog *l)
{
    replog__mend_init(l);
    raft_set_election_timeout(l->raft, l->election_ms);
    raft_set_heartbeat_timeout(l->raft, l->heartbeat_ms);
    /* A member cut off and back must not depose a working leader by the
     * terms it raised meanwhile. */
    raft_set_pre_vote(l->raft, true);
    replog__snapshot_policy(l, 0);
}

/* An ensemble's members; this server's address is its entry's. */
static int copy_peers(struct replog *l, const struct replog_config *cfg)
{
    unsigned i;

    if (cfg->n_peers < 2)
        return 0;
    if ((l->peers = calloc(cfg->n_peers, sizeof *l->peers)) == NULL)
        return TB_ENOMEM;
    l->n_peers = cfg->n_peers;
    for (i = 0; i < cfg->n_peers; i++) {
        l->peers[i] = cfg->peers[i];
        if ((l->peers[i].address = strdup(cfg->peers[i].address)) == NULL)
            return TB_ENOMEM;
        if (cfg->peers[i].id == cfg->server_id) {
            free(l->address);
            if ((l->address = strdup(cfg->peers[i].address)) == NULL)
                return TB_ENOMEM;
        }
    }
    return 0;
}

void replog__delete(struct replog *l)
{
    unsigned i;

    replog__arena_forget(l);
    for (i = 0; i < l->n_peers; i++)
        free((char *)l->peers[i].address);
    free(l->peers);
    free(l->dir);
    free(l->address);
    free(l);
}

struct replog *replog__new(uv_loop_t *loop, const struct replog_config *cfg,
                           const struct replog_fsm *fsm)
{
    struct replog *l = calloc(1, sizeof *l);

    if (l == NULL)
        return NULL;
    replog__arena_init(l);
    l->loop = loop;
    l->raft = &l->raft_own;
    l->fsm = *fsm;
    l->snap_fd = -1;
    l->lock_fd = -1;
    tb_queue_init(&l->queued);
    tb_queue_init(&l->pending);
    tb_queue_init(&l->deferred);
    copy_config(l, cfg);
    l->address = strdup(cfg->address != NULL ? cfg->address : DEFAULT_ADDRESS);
    l->secure = cfg->secure;
    if (cfg->dir != NULL)
        l->dir = strdup(cfg->dir);
    if (l->address == NULL || (cfg->dir != NULL && l->dir == NULL)) {
        replog__delete(l);
        return NULL;
    }
    if (copy_peers(l, cfg) != 0) {
        replog__delete(l);
        return NULL;
    }
    replog__fsm_init(l);
    return l;
}

int replog__check_args(const struct replog_config *cfg,
                       const struct replog_fsm *fsm)
{
    if (cfg == NULL || fsm == NULL || cfg->server_id <= 0 ||
        fsm->apply == NULL || fsm->snapshot == NULL || fsm->restore == NULL)
        return TB_EINVAL;
    if (cfg->heartbeat_timeout_ms != 0 && cfg->election_timeout_ms != 0 &&
        cfg->heartbeat_timeout_ms >= cfg->election_timeout_ms)
        return TB_EINVAL;
    return 0;
}

static const struct replog_peer *peer_of(const struct replog *l, raft_id id)
{
    unsigned i;

    for (i = 0; i < l->n_peers; i++)
        if ((raft_id)l->peers[i].id == id)
            return &l->peers[i];
    return NULL;
}

/* The members the log holds must be the ones given: a configuration
 * edited, or another server's, would otherwise start a second history
 * beside the first.  A lone voter's log holds it alone.  Once members
 * changed at run time (a configuration entry after the first), the log's
 * are the ensemble's and the server.N lines only the first ones, but a
 * server given none is standalone: on an ensemble's log it would serve a
 * state that never moves on (no member to reach), and keep the sessions
 * it resumed for ever.  A server joining has none until the leader sends
 * them. */
static int check_members(struct replog *l, int join)
{
    const struct raft_configuration *c = &l->raft->configuration;
    const struct replog_peer *p;
    unsigned i, n = l->n_peers > 0 ? l->n_peers : 1;
    int same = c->n == n, alone;

    alone = c->n == 1 && c->servers[0].id == (raft_id)l->server_id;
    for (i = 0; i < c->n && same; i++) {
        p = peer_of(l, c->servers[i].id);
        if (l->n_peers == 0)
            same = c->servers[i].id == (raft_id)l->server_id;
        else
            same = p != NULL &&
                   strcmp(p->address, c->servers[i].address) == 0 &&
                   (c->servers[i].role == RAFT_VOTER) == (p->voter != 0);
    }
    if ((join && c->n == 0) ||
        (l->raft->configuration_index > 1 && (l->n_peers > 0 || alone))) {
        /* Lines that differ are the operator's to know of: a server they
         * name and the log does not, started on an empty directory
         * without joinEnsemble, would begin a log of its own. */
        replog__logf(l, same || c->n == 0 ? REPLOG_LOG_INFO : REPLOG_LOG_WARN,
                     "open %s: %u member(s) in the log%s", l->dir, c->n,
                     c->n == 0 ? ": joining, the leader sends them"
                     : same    ? ", changed at run time: they hold"
                               : ", changed at run time: they hold, not the "
                                 "server.N lines, which differ (a server "
                                 "only the lines name is no member: on an "
                                 "empty dataDir it must have "
                                 "joinEnsemble=true)");
        return 0;
    }
    if (same)
        return 0;
    if (c->n == 0)
        replog__logf(l, REPLOG_LOG_ERROR,
                     "open %s: the log holds no members: its first start was "
                     "cut short before it wrote any; it holds no writes, and "
                     "a new data directory starts it again",
                     l->dir);
    else
        replog__logf(l, REPLOG_LOG_ERROR,
                     "open %s: the log's members (%u: server %llu at %s%s) "
                     "are not the %u configured: %s",
                     l->dir, c->n, (unsigned long long)c->servers[0].id,
                     c->servers[0].address, c->n > 1 ? ", ..." : "", n,
                     l->n_peers > 0 ? "the server.N lines differ from the "
                                      "ones this log was made with"
                                    : "the log belongs to an ensemble; give "
                                      "this server its server.N lines");
    return TB_EINVAL;
}

/* Called once raft_init succeeded and a later step failed: raft must be
 * closed, which completes on the loop. */
static int abandon(struct replog *l, const char *step, int rv)
{
    const char *why = raft_errmsg(l->raft);

    /* raft passes on its io's message from some calls only. */
    if (why[0] == '\0')
        why = l->io.errmsg;
    replog__logf(l, REPLOG_LOG_ERROR, "open %s: %s: %s (%s)", l->dir, step,
                 raft_strerror(rv), why);
    l->closing = 1;
    raft_close(l->raft, raft_closed);
    return replog__err(rv);
}

static void start_ticking(struct replog *l)
{
    uint64_t ms =
        l->on_leader != NULL ? REPLOG_STATE_POLL_MS : REPLOG_DISK_REFRESH_MS;

    uv_timer_init(l->loop, &l->tick);
    uv_timer_init(l->loop, &l->close_timer);
    l->tick.data = l->close_timer.data = l;
    l->handles_open = 2;
    uv_timer_start(&l->tick, tick_cb, ms, ms);
    /* The tick must not keep a loop alive on its own. */
    uv_unref((uv_handle_t *)&l->tick);
}

static int has_log(const char *dir)
{
    char path[PATH_MAX];
    struct stat st;

    snprintf(path, sizeof path, "%s/" WAL_META_NAME, dir);
    return stat(path, &st) == 0;
}

int replog_open(struct replog **out, uv_loop_t *loop,
                const struct replog_config *cfg, const struct replog_fsm *fsm)
{
    struct replog *l;
    int rv;

    *out = NULL;
    if ((rv = replog__check_args(cfg, fsm)) != 0)
        return rv;
    if (cfg->dir == NULL || cfg->dir[0] == '\0')
        return TB_EINVAL;
    if ((l = replog__new(loop, cfg, fsm)) == NULL)
        return TB_ENOMEM;
    /* A repair is of a log: on a directory that holds none (its name
     * mistyped), it would make one, and call it whole. */
    if (cfg->repair_log && !has_log(cfg->dir)) {
        replog__logf(l, REPLOG_LOG_ERROR,
                     "open %s: --repair-log: it holds no log to repair "
                     "(no " WAL_META_NAME "); nothing made",
                     cfg->dir);
        rv = TB_EINVAL;
        goto err;
    }
    if ((rv = mkdir_p(cfg->dir)) != 0) {
        replog__logf(l, REPLOG_LOG_ERROR, "open %s: mkdir: %s", cfg->dir,
                     strerror(rv));
        rv = TB_EIO;
        goto err;
    }
    if ((rv = replog__lock_dir(l)) != 0)
        goto err;
    if (l->n_peers > 0 && (rv = replog__tcp_init(&l->transport, l)) == 0)
        l->tcp_ready = 1;
    if (l->n_peers == 0)
        replog__local_transport_init(&l->transport);
    if (rv != 0) {
        replog__logf(l, REPLOG_LOG_ERROR, "open %s: raft_uv_tcp_init: %s",
                     l->dir, raft_strerror(rv));
        rv = replog__err(rv);
        goto err;
    }
    rv = raft_uv_init(&l->uv, loop, l->dir, &l->transport);
    if (rv != 0) {
        replog__logf(l, REPLOG_LOG_ERROR, "open %s: raft_uv_init: %s (%s)",
                     l->dir, raft_strerror(rv), l->uv.errmsg);
        rv = replog__err(rv);
        goto err;
    }
    /* G2: a damaged log must stop the server, not silently shorten it. */
    raft_uv_set_auto_recovery(&l->uv, false);
    /* A member back from a restart is reached within a heartbeat, not
     * the second raft_uv waits between attempts by default. */
    raft_uv_set_connect_retry_delay(&l->uv, l->heartbeat_ms);
    if ((rv = replog__wal_init(l, REPLOG_SEGMENT_BYTES)) != 0) {
        raft_uv_close(&l->uv);
        rv = replog__err(rv);
        goto err;
    }
    rv = raft_init(l->raft, &l->io, &l->raft_fsm, (raft_id)cfg->server_id,
                   l->address);
    if (rv != 0) {
        replog__logf(l, REPLOG_LOG_ERROR, "open %s: raft_init: %s (%s)", l->dir,
                     raft_strerror(rv), l->io.errmsg);
        replog__wal_free(&l->io);
        raft_uv_close(&l->uv);
        rv = replog__err(rv);
        goto err;
    }
    l->raft->data = l;
    replog__configure_raft(l);
    if (!cfg->join && (rv = bootstrap(l)) != 0)
        return abandon(l, "bootstrap", rv);
    /* Loads term, vote, snapshot (fsm restore) and log; a lone voter
     * elects itself and applies the whole log (fsm apply) right here. */
    if ((rv = raft_start(l->raft)) != 0)
        return abandon(l, "start", rv);
    if ((rv = check_members(l, cfg->join)) != 0) {
        l->closing = 1;
        raft_close(l->raft, raft_closed);
        return rv;
    }
    /* Among other voters, a log that is the bootstrap entry alone may be a
     * lost one's, made at this start or at one before it that no leader
     * caught up (fresh.c). */
    if ((rv = replog__fresh_open(l, cfg->join)) != 0) {
        l->closing = 1;
        raft_close(l->raft, raft_closed);
        return rv;
    }
    replog__disk_refresh(l);
    start_ticking(l);
    l->was_leader = replog_is_leader(l);
    /* A lone voter elected itself and applied its whole log right here:
     * no member can have applied more (replog_leader_caught_up). */
    if (l->was_leader)
        l->caught_term = l->raft->current_term;
    replog__logf(l, REPLOG_LOG_INFO,
                 "opened %s: server %d, last index %llu, applied %lld, %s",
                 l->dir, l->server_id,
                 (unsigned long long)raft_last_index(l->raft),
                 (long long)replog_last_applied(l),
                 l->was_leader ? "leader" : "not leader");
    REPLOG_CHECK(l);
    *out = l;
    return 0;

err:
    if (l->tcp_ready)
        replog__tcp_free(&l->transport);
    replog__snapshot_discard(l);
    if (l->lock_fd >= 0)
        close(l->lock_fd);
    replog__delete(l);
    return rv;
}
