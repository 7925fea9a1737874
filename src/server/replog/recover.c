/* tumblerd --recover-ensemble's work on the log (replog_recover.h): a data
 * directory opened as replog_open would, up to raft_init, then either read
 * (where its log ends) or given to raft_recover, whose io call lands in
 * replog__recover_io.  raft never starts: no message is sent, nothing is
 * applied.  Both read the log as a start does, every check included; the
 * load itself changes nothing (wal_io.c leaves its tidying to the
 * recovery), so a refusal leaves the directory as it was. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/replog/envelope.h"
#include "server/replog/internal.h"
#include "server/replog/replog_recover.h"
#include "server/replog/wal.h"

struct replog_recovery {
    struct replog_position at; /* where the log ends */
    /* Recovering (not only reading): the other survivors' logs. */
    int write;
    const struct replog_position *others;
    const char *const *other_dirs;
    unsigned n_others;
    replog_recover_entries entries; /* the state machine's, after it */
    void *entries_arg;
    int refused;  /* errmsg says why */
    int appended; /* the entries' write: 0 on its way, 1 done, -1 failed */
    struct raft_io_append req;
};

/* raft never starts: the state machine is never called. */
static void no_apply(void *data, int64_t index, const void *p, size_t n)
{
    (void)data, (void)index, (void)p, (void)n;
}

static int no_snapshot(void *data, struct tb_wbuf *out)
{
    (void)data, (void)out;
    return TB_ESYSTEM;
}

static int no_restore(void *data, const void *buf, size_t len)
{
    (void)data, (void)buf, (void)len;
    return TB_ESYSTEM;
}

static const struct replog_fsm no_fsm = {NULL, no_apply, no_snapshot,
                                         no_restore};

/* Loads the log (wal_load, every check of a start) for where it ends. */
static int load_position(struct wal *w, struct replog_position *at)
{
    raft_term term = 0;
    raft_id vote = 0;
    struct raft_snapshot *snap = NULL;
    raft_index start = 0;
    struct raft_entry *e = NULL;
    size_t n = 0;
    int rv = w->io->load(w->io, &term, &vote, &snap, &start, &e, &n);

    if (rv != 0)
        return rv;
    at->server_id = (int)w->meta.server_id;
    at->term = term;
    at->last_index = n > 0 ? start + n - 1 : snap != NULL ? snap->index : 0;
    at->last_term = n > 0 ? e[n - 1].term : snap != NULL ? snap->term : 0;
    replog__wal_entries_free(e, n);
    replog__wal_snapshot_free(&snap);
    return 0;
}

/* Raft's order of logs: the later last term, then the longer. */
static int goes_further(const struct replog_position *a,
                        const struct replog_position *b)
{
    return a->last_term > b->last_term ||
           (a->last_term == b->last_term && a->last_index > b->last_index);
}

static int refuse(struct wal *w, const char *why)
{
    struct replog_recovery *r = w->recovery;

    snprintf(w->io->errmsg, sizeof w->io->errmsg, "%s", why);
    r->refused = 1;
    /* Nothing written: no CLOSED record at the close either. */
    w->loaded = 0;
    return RAFT_INVALID;
}

static void appended(struct raft_io_append *req, int status)
{
    struct replog_recovery *r = req->data;

    r->appended = status == 0 ? 1 : -1;
}

#define MAX_CMDS 4

/* Appends the configuration at the log's end, in term `term`, then the
 * state machine's entries, and waits until they are on disk. */
static int append_conf(struct wal *w, const struct raft_configuration *c,
                       raft_term term)
{
    struct replog_recovery *r = w->recovery;
    struct raft_entry e[1 + MAX_CMDS] = {{.term = term, .type = RAFT_CHANGE}};
    struct tb_str cmds[MAX_CMDS];
    uint64_t seen = r->at.last_index;
    unsigned i, n = 0;
    int rv;

    if (w->meta.repair_bound > seen)
        seen = w->meta.repair_bound;
    if (r->entries(r->entries_arg, seen, w->meta.epoch, cmds, MAX_CMDS, &n) !=
        0)
        return RAFT_NOMEM;
    if ((rv = raft_configuration_encode(c, &e[0].buf)) != 0)
        return rv;
    for (i = 0; i < n && rv == 0; i++) {
        e[1 + i] = (struct raft_entry){.term = term, .type = RAFT_COMMAND};
        e[1 + i].buf.len = replog__entry_size(cmds[i].len);
        if ((e[1 + i].buf.base = malloc(e[1 + i].buf.len)) == NULL)
            rv = RAFT_NOMEM;
        else
            replog__entry_encode(e[1 + i].buf.base, cmds[i].ptr, cmds[i].len);
    }
    r->req.data = r;
    if (rv == 0)
        rv = replog__wal_append(w->io, &r->req, e, 1 + n, appended);
    raft_free(e[0].buf.base); /* the log copied them */
    for (i = 0; i < n; i++)
        free(e[1 + i].buf.base);
    while (rv == 0 && r->appended == 0)
        if (uv_run(w->loop, UV_RUN_ONCE) == 0 && r->appended == 0)
            r->appended = -1; /* nothing left that could complete it */
    if (rv == 0 && r->appended < 0) {
        snprintf(w->io->errmsg, sizeof w->io->errmsg,
                 "the configuration entry was not written (the log's "
                 "write failed; the server's log says why)");
        rv = RAFT_IOERR;
    }
    return rv;
}

int replog__recover_io(struct wal *w, const struct raft_configuration *c)
{
    struct replog_recovery *r = w->recovery;
    struct replog_position *at = &r->at;
    char why[RAFT_ERRMSG_BUF_SIZE];
    raft_term term;
    unsigned i;
    int rv;

    if ((rv = load_position(w, at)) != 0)
        return rv;
    if (at->last_index == 0)
        return refuse(w, "the log holds no entry: nothing to recover");
    for (i = 0; i < r->n_others; i++) {
        if (!goes_further(&r->others[i], at))
            continue;
        snprintf(why, sizeof why,
                 "the log in %s goes further (entry %" PRIu64 " of term "
                 "%" PRIu64 ") than this one (entry %" PRIu64 " of term "
                 "%" PRIu64 "): it may hold acknowledged writes this one "
                 "lacks; recover from that one",
                 r->other_dirs[i], r->others[i].last_index,
                 r->others[i].last_term, at->last_index, at->last_term);
        return refuse(w, why);
    }
    /* Decided: the log is made ready as a start makes it, then the term
     * first (a higher term alone is always safe; an entry of a term above
     * raft's would be refused at the next start), the entry, and last the
     * directory's owner. */
    if ((rv = replog__wal_tidy(w)) != 0)
        return rv;
    replog__wal_maybe_prep(w);
    WAL_CHECK(w);
    /* Above every term a survivor's log or vote has seen, too. */
    term = at->term > at->last_term ? at->term : at->last_term;
    for (i = 0; i < r->n_others; i++)
        if (r->others[i].term > term)
            term = r->others[i].term;
    term++;
    if ((rv = replog__wal_term_adopt(w)) != 0 ||
        (rv = replog__wal_save_term(w, term, 0)) != 0)
        return rv;
    if ((rv = append_conf(w, c, term)) != 0)
        return rv;
    at->term = term;
    /* A repair's cut is done with: zxids move past it (the entries).  The
     * log is the ensemble's now, caught up or not before (fresh.c): its
     * copies, each keeping that rule, would elect no one. */
    if ((w->meta.repair_bound != 0 &&
         (rv = replog__wal_meta_set(w, WAL_META_REPAIR_BOUND, 0)) != 0) ||
        (rv = replog__wal_meta_set(w, WAL_META_FRESH, 0)) != 0 ||
        (rv = replog__wal_meta_set(w, WAL_META_SERVER_ID, 0)) != 0) {
        snprintf(w->io->errmsg, sizeof w->io->errmsg, "write %s/%s: %s", w->dir,
                 WAL_META_NAME, strerror(rv));
        return RAFT_IOERR;
    }
    return 0;
}

/* ---- a directory opened for it, and closed ---- */

static void raft_done(struct raft *raft)
{
    struct replog *l = raft->data;

    replog__wal_free(&l->io);
    raft_uv_close(&l->uv);
    l->raft_closed = 1;
}

static void close_dir(struct replog *l)
{
    if (l->raft_started) {
        raft_close(l->raft, raft_done);
        while (!l->raft_closed && uv_run(l->loop, UV_RUN_ONCE) != 0)
            ;
        /* raft_uv's handles close on the loop too. */
        uv_run(l->loop, UV_RUN_NOWAIT);
    }
    if (l->lock_fd >= 0)
        close(l->lock_fd);
    replog__delete(l);
}

/* As replog_open up to raft_init, for a recovery. */
static int open_dir(struct replog *l, struct replog_recovery *r, int foreign)
{
    struct wal *w;
    int rv;

    if ((rv = replog__lock_dir(l)) != 0)
        return rv;
    replog__local_transport_init(&l->transport);
    rv = raft_uv_init(&l->uv, l->loop, l->dir, &l->transport);
    if (rv != 0) {
        replog__logf(l, REPLOG_LOG_ERROR, "open %s: %s (%s)", l->dir,
                     raft_strerror(rv), l->uv.errmsg);
        return replog__err(rv);
    }
    raft_uv_set_auto_recovery(&l->uv, false);
    if ((rv = replog__wal_init(l, REPLOG_SEGMENT_BYTES)) != 0) {
        raft_uv_close(&l->uv);
        return replog__err(rv);
    }
    w = l->io.impl;
    w->recovery = r;
    w->foreign = foreign;
    rv = raft_init(l->raft, &l->io, &l->raft_fsm, (raft_id)l->server_id,
                   l->address);
    if (rv != 0) {
        replog__logf(l, REPLOG_LOG_ERROR, "open %s: %s", l->dir,
                     l->io.errmsg[0] != '\0' ? l->io.errmsg
                                             : raft_strerror(rv));
        replog__wal_free(&l->io);
        raft_uv_close(&l->uv);
        uv_run(l->loop, UV_RUN_NOWAIT);
        return replog__err(rv);
    }
    l->raft->data = l;
    l->raft_started = 1;
    return 0;
}

int replog_read_position(uv_loop_t *loop, const char *dir,
                         void (*log)(void *data, int level, const char *msg),
                         void *log_data, struct replog_position *out)
{
    struct replog_config cfg = {
        .dir = dir, .server_id = 1, .log = log, .log_data = log_data};
    struct replog_recovery r = {0};
    struct replog *l = replog__new(loop, &cfg, &no_fsm);
    int rv;

    if (l == NULL)
        return TB_ENOMEM;
    rv = open_dir(l, &r, 1);
    if (rv == 0 && (rv = load_position(l->io.impl, &r.at)) != 0) {
        replog__logf(l, REPLOG_LOG_ERROR, "read %s: %s (%s)", dir,
                     raft_strerror(rv), l->io.errmsg);
        rv = replog__err(rv);
    }
    /* Read only: no CLOSED record. */
    if (l->raft_started)
        ((struct wal *)l->io.impl)->loaded = 0;
    *out = r.at;
    close_dir(l);
    return rv;
}

/* cfg's members, as replog_open bootstraps them. */
static int members(const struct replog *l, struct raft_configuration *c)
{
    unsigned i;
    int rv = 0;

    raft_configuration_init(c);
    if (l->n_peers == 0)
        rv = raft_configuration_add(c, (raft_id)l->server_id, l->address,
                                    RAFT_VOTER);
    for (i = 0; i < l->n_peers && rv == 0; i++)
        rv = raft_configuration_add(
            c, (raft_id)l->peers[i].id, l->peers[i].address,
            l->peers[i].voter ? RAFT_VOTER : RAFT_STANDBY);
    return rv;
}

static int is_voter(const struct replog *l)
{
    unsigned i;

    for (i = 0; i < l->n_peers; i++)
        if (l->peers[i].id == l->server_id)
            return l->peers[i].voter;
    return l->n_peers == 0;
}

int replog_recover(uv_loop_t *loop, const struct replog_config *cfg,
                   const struct replog_position *others,
                   const char *const *other_dirs, unsigned n_others,
                   replog_recover_entries entries, void *arg,
                   struct replog_position *out)
{
    struct replog_recovery r = {.write = 1,
                                .others = others,
                                .other_dirs = other_dirs,
                                .n_others = n_others,
                                .entries = entries,
                                .entries_arg = arg};
    struct raft_configuration conf;
    struct replog *l;
    int rv;

    if (replog__check_args(cfg, &no_fsm) != 0 || cfg->dir == NULL)
        return TB_EINVAL;
    if ((l = replog__new(loop, cfg, &no_fsm)) == NULL)
        return TB_ENOMEM;
    if (!is_voter(l)) {
        replog__logf(l, REPLOG_LOG_ERROR,
                     "recover %s: server %d is not a voter of the members "
                     "given: the server recovered leads the new ensemble",
                     l->dir, l->server_id);
        close_dir(l);
        return TB_EINVAL;
    }
    if ((rv = open_dir(l, &r, 0)) != 0) {
        close_dir(l);
        return rv;
    }
    rv = members(l, &conf);
    if (rv == 0)
        rv = raft_recover(l->raft, &conf);
    raft_configuration_close(&conf);
    if (rv != 0)
        replog__logf(l, REPLOG_LOG_ERROR, "recover %s: %s%s%s", l->dir,
                     r.refused ? "refused, nothing changed: " : "",
                     r.refused ? "" : raft_strerror(rv),
                     r.refused ? l->io.errmsg : "");
    if (rv != 0 && !r.refused && l->io.errmsg[0] != '\0')
        replog__logf(l, REPLOG_LOG_ERROR, "recover %s: %s", l->dir,
                     l->io.errmsg);
    *out = r.at;
    close_dir(l);
    return rv == 0 ? 0 : r.refused ? TB_EINVAL : replog__err(rv);
}
