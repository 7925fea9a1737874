/* The log's face to raft (wal.h): snapshots, after which the segments they
 * cover go; loading; the raft_io calls raft_uv answers (messages, ticks,
 * time); closing. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "server/replog/internal.h"
#include "server/replog/wal.h"

/* raft_uv's message for a call of ours that failed in it. */
#define UV_ERR(w, rv)                                                          \
    do {                                                                       \
        if ((rv) != 0)                                                         \
            memcpy((w)->io->errmsg, (w)->uv->errmsg, sizeof(w)->io->errmsg);   \
    } while (0)

/* ---- raft_io: snapshots, and the segments they make obsolete ---- */

static void removal_work(uv_work_t *work)
{
    struct wal *w = work->data;
    char path[PATH_MAX], spare[PATH_MAX];
    struct wal_doomed *d;

    /* wal-meta first: a segment before the oldest it names is a leftover,
     * one after it missing is damage (wal_load.c). */
    if (replog__wal_meta_set(w, WAL_META_OLDEST, w->removal_oldest) != 0) {
        /* They stay on disk, still the log's start as wal-meta says, and
         * go after the next start reads them back. */
        for (d = w->doomed; d < w->doomed + w->n_doomed; d++)
            d->keep = 0;
        return;
    }

    /* Oldest first: the log's start is its oldest remaining segment. */
    for (d = w->doomed; d < w->doomed + w->n_doomed; d++) {
        replog__wal_path(w, d->seq, path, sizeof path);
        replog__wal_spare_path(w, d->seq, spare, sizeof spare);
        if (d->keep && rename(path, spare) != 0)
            d->keep = 0;
        if (!d->keep)
            unlink(path);
    }
    (void)replog__wal_sync_dir(w->dir);
}

static void removal_done(uv_work_t *work, int status)
{
    struct wal *w = work->data;
    unsigned i;

    (void)status;
    for (i = 0; i < w->n_doomed; i++)
        if (w->doomed[i].keep)
            w->spare_segs[w->n_spare_segs++] = w->doomed[i].seq;
    free(w->doomed);
    w->doomed = NULL;
    w->n_doomed = 0;
    w->removal_busy = 0;
    WAL_CHECK(w);
    replog__wal_maybe_closed(w);
}

/* Removes the segments holding only entries up to `upto`, never the one
 * being written, and keeps those of the full size as spares while there
 * is room for them.  One removal at a time; a later snapshot catches up. */
static void remove_upto(struct wal *w, raft_index upto)
{
    unsigned i, k = 0, spares;

    if (w->removal_busy || w->closing)
        return;
    while (k + 1 < w->n_segs && w->segs[k]->last_index <= upto &&
           w->segs[k]->writing == 0)
        k++;
    if (k == 0 || (w->doomed = calloc(k, sizeof *w->doomed)) == NULL)
        return;
    spares = replog__disk_roomy(w->l) ? w->n_spare_segs : WAL_SPARES;
    /* Only a prefix may go: a segment left behind a removed one would
     * start a log the next segment does not follow. */
    for (i = 0; i < k; i++) {
        w->doomed[i].seq = w->segs[i]->seq;
        w->doomed[i].keep =
            spares < WAL_SPARES && w->segs[i]->size == w->seg_bytes;
        spares += (unsigned)w->doomed[i].keep;
        if (w->segs[i]->fd >= 0)
            close(w->segs[i]->fd);
        free(w->segs[i]);
    }
    w->n_doomed = k;
    memmove(w->segs, w->segs + k, (w->n_segs - k) * sizeof *w->segs);
    w->n_segs -= k;
    w->removal_oldest = w->segs[0]->seq;
    w->removal_busy = 1;
    w->removal.data = w;
    if (uv_queue_work(w->loop, &w->removal, removal_work, removal_done) != 0) {
        removal_work(&w->removal);
        removal_done(&w->removal, 0);
    }
    WAL_CHECK(w);
}

void replog__wal_put_done(struct wal *w, int status)
{
    struct raft_io_snapshot_put *req = w->put_req;
    int rv;

    w->put_req = NULL;
    if (status == 0)
        w->state_kept = w->put_index;
    /* An installed snapshot (trailing 0) not stored: libraft 0.15 dropped
     * its log for the snapshot before asking, and goes on with neither,
     * applying nothing for ever.  A restart has the old log and state
     * whole, and is sent the snapshot again. */
    if (status != 0 && w->put_trailing == 0)
        replog__fail_stop(w->l, "the leader's snapshot %llu not stored: %s",
                          (unsigned long long)w->put_index,
                          raft_strerror(status));
    replog__snapshot_stored(w->l, status);
    /* An installed snapshot (trailing 0) replaces the whole log, once it
     * is safely stored itself.  Without the record the next entries would
     * be numbered on from the old log's end, and a restart would read
     * them at the wrong indexes: a restart reads the snapshot and drops
     * the old log instead. */
    if (status == 0 && w->put_trailing == 0 &&
        (rv = replog__wal_mark(w, WAL_RESET, w->put_index + 1)) != 0)
        replog__fail_stop(w->l, "the log's reset after snapshot %llu: %s",
                          (unsigned long long)w->put_index, raft_strerror(rv));
    if (status == 0 && w->put_trailing > 0 && w->put_index > w->put_trailing)
        remove_upto(w, w->put_index - w->put_trailing);
    w->put_cb(req, status);
}

static int wal_snapshot_put(struct raft_io *io, unsigned trailing,
                            struct raft_io_snapshot_put *req,
                            const struct raft_snapshot *snap,
                            raft_io_snapshot_put_cb cb)
{
    struct wal *w = io->impl;
    int rv;

    if (w->put_req != NULL)
        return RAFT_BUSY;
    w->put_req = req;
    w->put_cb = cb;
    w->put_index = snap->index;
    w->put_trailing = trailing;
    rv = replog__snapstore_put(w, snap);
    if (rv != 0)
        w->put_req = NULL;
    return rv;
}

/* ---- raft_io: loading, and what raft_uv answers ---- */

/* A file that holds part of a log: raft_uv's metadata, segments and
 * snapshots, our segments, spares and states; not a temporary file. */
static int is_log_file(const char *name)
{
    static const char *const tmp[] = {"wal-tmp", WAL_META_NAME ".tmp",
                                      "state-tmp"};
    static const char *const prefix[] = {"metadata", "snapshot-", "open-",
                                         "wal-", "state-"};
    size_t i;

    for (i = 0; i < sizeof tmp / sizeof tmp[0]; i++)
        if (strcmp(name, tmp[i]) == 0)
            return 0;
    for (i = 0; i < sizeof prefix / sizeof prefix[0]; i++)
        if (strncmp(name, prefix[i], strlen(prefix[i])) == 0)
            return 1;
    return name[0] >= '0' && name[0] <= '9';
}

static int is_pristine(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int pristine = 1;

    if (d == NULL)
        return 0;
    while (pristine && (de = readdir(d)) != NULL)
        pristine = !is_log_file(de->d_name);
    closedir(d);
    return pristine;
}

/* wal-meta: read, or made for a new log. */
static int open_meta(struct wal *w)
{
    struct wal_meta m = {0};
    int format = 2;
    int rv = replog__wal_meta_read(w->dir, &w->meta, &format, w->io->errmsg,
                                   sizeof w->io->errmsg);

    /* An older tumblerd's log: raft_uv keeps the term and vote.  Read
     * before any write of wal-meta, which records them. */
    if (rv == 0 && format == 1)
        rv = replog__wal_term_read_uv(w);
    /* A log tumblerd --recover-ensemble made is for any of its members
     * to take, once: it holds no vote, and its copies are alike. */
    if (rv == 0 && w->meta.server_id == 0 && w->recovery == NULL) {
        if ((rv = replog__wal_meta_set(w, WAL_META_SERVER_ID,
                                       (uint64_t)w->l->server_id)) != 0) {
            snprintf(w->io->errmsg, sizeof w->io->errmsg, "write %s/%s: %s",
                     w->dir, WAL_META_NAME, strerror(rv));
            return RAFT_IOERR;
        }
        replog__logf(w->l, REPLOG_LOG_INFO,
                     "%s: a recovered log, now server %d's", w->dir,
                     w->l->server_id);
    }
    /* A data directory is one server's: another's vote and log are not
     * this one's to use. */
    if (rv == 0 && !w->foreign && w->meta.server_id != 0 &&
        w->meta.server_id != (uint64_t)w->l->server_id) {
        snprintf(w->io->errmsg, sizeof w->io->errmsg,
                 "the log in %s is server %llu's, not server %d's", w->dir,
                 (unsigned long long)w->meta.server_id, w->l->server_id);
        return RAFT_CORRUPT;
    }
    if (rv == 0 && w->meta.repair_bound != 0 && !w->repair) {
        snprintf(w->io->errmsg, sizeof w->io->errmsg,
                 "a repair cut the log but stopped before zxids moved to a "
                 "new epoch: run tumblerd --repair-log again");
        return RAFT_CORRUPT;
    }
    if (rv != RAFT_NOTFOUND)
        return rv;
    if (w->recovery != NULL) {
        snprintf(w->io->errmsg, sizeof w->io->errmsg,
                 "%s holds no log (no " WAL_META_NAME ")", w->dir);
        return RAFT_NOTFOUND;
    }
    if (!is_pristine(w->dir)) {
        snprintf(w->io->errmsg, sizeof w->io->errmsg,
                 "%s holds files of a log but no " WAL_META_NAME
                 " (removed, or a data directory of an older tumblerd, "
                 "whose log this one does not read)",
                 w->dir);
        return RAFT_CORRUPT;
    }
    if (getrandom(&m.log_id, sizeof m.log_id, 0) != sizeof m.log_id)
        m.log_id = uv_hrtime() ^ ((uint64_t)getpid() << 32);
    m.server_id = (uint64_t)w->l->server_id;
    if ((rv = replog__wal_meta_write(w->dir, &m)) != 0) {
        snprintf(w->io->errmsg, sizeof w->io->errmsg, "write %s/%s: %s", w->dir,
                 WAL_META_NAME, strerror(rv));
        return RAFT_IOERR;
    }
    w->meta = m;
    w->fresh = 1;
    return 0;
}

static int wal_init_io(struct raft_io *io, raft_id id, const char *address)
{
    struct wal *w = io->impl;
    /* Ours first: a failure after raft_uv's init would leave it to undo. */
    int rv = open_meta(w);

    if (rv == 0) {
        rv = w->uv->init(w->uv, id, address);
        UV_ERR(w, rv);
    }
    /* A new log's first segment is prepared once the log is loaded
     * (wal_load), not meanwhile: the load reads wal-meta, which the
     * preparation writes. */
    return rv;
}

/* raft owns what load returns only when it succeeds. */
void replog__wal_snapshot_free(struct raft_snapshot **snap)
{
    struct raft_snapshot *s = *snap;
    unsigned i;

    if (s == NULL)
        return;
    for (i = 0; i < s->n_bufs; i++)
        raft_free(s->bufs[i].base);
    raft_free(s->bufs);
    raft_configuration_close(&s->configuration);
    raft_free(s);
    *snap = NULL;
}

/* A member's log is not repaired in place (main.c says why).  Without
 * server.N lines the configuration cannot tell a member, but the log's
 * own last configuration can.  A recovery's may be (recover.c). */
static int refuse_member(struct wal *w)
{
    if (w->recovery != NULL || w->exam.members <= 1)
        return 0;
    snprintf(w->io->errmsg, sizeof w->io->errmsg,
             "repair refused, nothing changed: the log is an ensemble "
             "member's (%u members), and a member's log is not repaired "
             "in place: start it with an empty dataDir, or recover from it "
             "(--recover-ensemble)",
             w->exam.members);
    return RAFT_CORRUPT;
}

/* The term and vote (wal-meta) must not be older than the log: a
 * server that forgot a term it acted in could vote twice in it.  A repair
 * raises the term to the log's (with no vote in it). */
static int check_term(struct wal *w, raft_term *term, raft_id *vote,
                      const struct raft_snapshot *snap,
                      const struct raft_entry *e, size_t n)
{
    raft_term max = snap != NULL ? snap->term : 0;
    size_t i;

    for (i = 0; i < n; i++)
        if (e[i].term > max)
            max = e[i].term;
    if (max <= *term)
        return 0;
    snprintf(w->io->errmsg, sizeof w->io->errmsg,
             "%s term %llu, but the log holds entries of term %llu: the term "
             "and vote are older than the log",
             w->adopt_term ? "metadata1/metadata2 give"
                           : WAL_META_NAME " gives",
             (unsigned long long)*term, (unsigned long long)max);
    w->exam.damaged = 1;
    if (!w->repair || refuse_member(w) != 0 ||
        replog__wal_repair_term(w, max) != 0)
        return RAFT_CORRUPT;
    *term = max;
    *vote = 0;
    return 0;
}

/* The log's own segments after raft_uv's part; a repair, if asked for and
 * needed, and then again. */
static int load_segments(struct wal *w, raft_term *term, raft_id *vote,
                         struct raft_snapshot *snap, raft_index *start,
                         struct raft_entry **entries, size_t *n)
{
    int rv = replog__wal_load(w, snap, start, entries, n);

    if (rv == RAFT_CORRUPT && w->repair && w->exam.damaged) {
        if ((rv = refuse_member(w)) == 0 && (rv = replog__wal_repair(w)) == 0)
            rv = replog__wal_load(w, snap, start, entries, n);
    }
    if (rv != 0) {
        replog__wal_uv_entries_free(*entries, *n);
        *entries = NULL;
        *n = 0;
        return rv;
    }
    if ((rv = check_term(w, term, vote, snap, *entries, *n)) != 0) {
        replog__wal_entries_free(*entries, *n);
        *entries = NULL;
        *n = 0;
    }
    return rv;
}

/* The snapshot: ours (snapstore.c), or in an older tumblerd's directory
 * that holds none of ours, raft_uv's, which its load reads with the
 * first configuration if a segment of raft_uv's holds it. */
static int load_snapshot(struct wal *w, struct raft_snapshot **snap,
                         raft_index *start, struct raft_entry **entries,
                         size_t *n)
{
    raft_term uv_term;
    raft_id uv_vote;
    int rv = replog__snapstore_load(w, snap);

    *start = *snap != NULL ? (*snap)->index + 1 : 1;
    *entries = NULL;
    *n = 0;
    if (rv != 0 || *snap != NULL || !w->uv_files)
        return rv;
    rv = w->uv->load(w->uv, &uv_term, &uv_vote, snap, start, entries, n);
    UV_ERR(w, rv);
    if (rv == 0 && *snap != NULL) {
        w->uv_snap = 1;
        w->state_kept = (*snap)->index;
        rv = replog__snapstore_expand(w->dir, *snap, w->io->errmsg);
    }
    if (rv != 0) {
        replog__wal_uv_entries_free(*entries, *n);
        *entries = NULL;
        *n = 0;
        replog__wal_snapshot_free(snap);
    }
    return rv;
}

static int wal_load(struct raft_io *io, raft_term *term, raft_id *vote,
                    struct raft_snapshot **snap, raft_index *start,
                    struct raft_entry **entries, size_t *n)
{
    struct wal *w = io->impl;
    int rv = load_snapshot(w, snap, start, entries, n);

    if (rv != 0)
        return rv;
    *term = w->meta.term;
    *vote = w->meta.vote;
    replog__wal_aio_init(w);
    replog__wal_flusher_init(w);
    rv = load_segments(w, term, vote, *snap, start, entries, n);
    if (rv != 0) {
        replog__wal_snapshot_free(snap);
        return rv;
    }
    w->loaded = 1;
    /* A recovery decides first, changing nothing, and tidies once it has
     * (recover.c). */
    if (w->recovery != NULL)
        return 0;
    if ((rv = replog__wal_term_adopt(w)) != 0 ||
        (rv = replog__snapstore_adopt(w, *snap)) != 0) {
        replog__wal_entries_free(*entries, *n);
        *entries = NULL;
        *n = 0;
        replog__wal_snapshot_free(snap);
        return rv;
    }
    if ((rv = replog__wal_tidy(w)) != 0) {
        replog__wal_entries_free(*entries, *n);
        *entries = NULL;
        *n = 0;
        replog__wal_snapshot_free(snap);
        return rv;
    }
    replog__wal_maybe_prep(w);
    WAL_CHECK(w);
    return 0;
}

static void wal_tick(struct raft_io *uv)
{
    struct wal *w = uv->data;

    w->tick(w->io);
}

static void wal_recv(struct raft_io *uv, struct raft_message *msg)
{
    struct wal *w = uv->data;

    if (replog__fresh_recv(w->l, msg) == FRESH_DELIVER)
        w->recv(w->io, msg);
    replog__notice(w->l);
}

static int wal_start(struct raft_io *io, unsigned msecs, raft_io_tick_cb tick,
                     raft_io_recv_cb recv)
{
    struct wal *w = io->impl;
    int rv;

    w->tick = tick;
    w->recv = recv;
    rv = w->uv->start(w->uv, msecs, wal_tick, wal_recv);
    UV_ERR(w, rv);
    return rv;
}

/* raft_uv's would write the configuration into a segment of its own,
 * after its own entries, which are not the log's: recover.c writes it
 * after the log's last entry, through the log. */
static int wal_recover(struct raft_io *io, const struct raft_configuration *c)
{
    return replog__recover_io(io->impl, c);
}

static int wal_send(struct raft_io *io, struct raft_io_send *req,
                    const struct raft_message *msg, raft_io_send_cb cb)
{
    struct wal *w = io->impl;
    int rv = w->uv->send(w->uv, req, msg, cb);

    UV_ERR(w, rv);
    if (rv == 0)
        replog__notice_sent(w->l, msg);
    /* A message not sent is one lost, as raft counts one it was told
     * could not be: any other error in a reply it sends while handling a
     * message (out of memory, a write refused at once) made libraft 0.15
     * unavailable for good. */
    return rv == 0 ? 0 : RAFT_NOCONNECTION;
}

static int wal_snapshot_get(struct raft_io *io,
                            struct raft_io_snapshot_get *req,
                            raft_io_snapshot_get_cb cb)
{
    return replog__snapstore_get(io->impl, req, cb);
}

static raft_time wal_time(struct raft_io *io)
{
    struct wal *w = io->impl;

    return w->uv->time(w->uv);
}

static int wal_random(struct raft_io *io, int min, int max)
{
    struct wal *w = io->impl;

    return w->uv->random(w->uv, min, max);
}

static int wal_async_work(struct raft_io *io, struct raft_io_async_work *req,
                          raft_io_async_work_cb cb)
{
    struct wal *w = io->impl;

    return w->uv->async_work(w->uv, req, cb);
}

/* ---- closing ---- */

static void uv_closed(struct raft_io *uv)
{
    struct wal *w = uv->data;

    w->close_cb(w->io);
}

static void aio_closed(uv_handle_t *h)
{
    struct wal *w = h->data;

    close(w->aio_fd);
    syscall(__NR_io_destroy, w->aio);
    w->aio = 0;
    w->uv->close(w->uv, uv_closed);
}

/* The log's handles, one after the other, then raft_uv. */
static void close_aio(struct wal *w)
{
    if (w->aio != 0)
        uv_close((uv_handle_t *)&w->aio_poll, aio_closed);
    else
        w->uv->close(w->uv, uv_closed);
}

static void flusher_closed(uv_handle_t *h)
{
    close_aio(h->data);
}

/* raft_uv closes once no write, preparation, removal, or state being
 * written or read (snapstore.c) is running: their threads use the files
 * and `w`. */
void replog__wal_maybe_closed(struct wal *w)
{
    unsigned i;

    if (w->closing != 1 || w->inflight > 0 || w->prep_seg != NULL ||
        w->removal_busy || w->snap_busy > 0)
        return;
    w->closing = 2;
    replog__wal_cancel_pending(w);
    if (w->loaded)
        replog__wal_mark_closed(w);
    for (i = 0; i < w->n_segs; i++)
        if (w->segs[i]->fd >= 0) {
            close(w->segs[i]->fd);
            w->segs[i]->fd = -1;
        }
    if (w->ready != NULL) {
        close(w->ready->fd);
        free(w->ready);
        w->ready = NULL;
    }
    if (w->flusher_on)
        uv_close((uv_handle_t *)&w->flusher, flusher_closed);
    else
        close_aio(w);
}

static void wal_close(struct raft_io *io, raft_io_close_cb cb)
{
    struct wal *w = io->impl;

    w->closing = 1;
    w->close_cb = cb;
    replog__wal_maybe_closed(w);
}

void replog__wal_free(struct raft_io *io)
{
    struct wal *w = io->impl;
    unsigned i;

    if (w == NULL)
        return;
    for (i = 0; i < w->n_segs; i++) {
        if (w->segs[i]->fd >= 0)
            close(w->segs[i]->fd);
        free(w->segs[i]);
    }
    free(w->segs);
    for (i = 0; i < w->n_unused; i++)
        free(w->unused[i]);
    free(w->unused);
    replog__wal_batch_free(w, &w->pending);
    while (w->n_spare > 0) {
        w->n_spare--;
        munmap(w->spare[w->n_spare].buf, w->spare[w->n_spare].cap);
    }
    free(w->dir);
    free(w);
    io->impl = NULL;
}

int replog__wal_fresh(struct raft_io *io)
{
    struct wal *w = io->impl;

    return w->meta.fresh != 0;
}

int replog__wal_set_fresh(struct raft_io *io, int on)
{
    return replog__wal_meta_set(io->impl, WAL_META_FRESH, on ? 1 : 0);
}

void replog__wal_stats(struct raft_io *io, struct replog_stats *out)
{
    struct wal *w = io->impl;

    if (w == NULL)
        return;
    out->log_writes = w->writes;
    out->log_writes_overlapped = w->overlapped;
    out->log_writes_threaded = w->threaded;
    out->log_entries = w->entries;
    out->log_appends = w->appends;
    out->log_appends_queued = w->queued;
    out->log_append_wait_us = w->wait_ns / 1000;
    out->log_write_us = w->write_ns / 1000;
    out->log_write_us_max = w->write_ns_max / 1000;
    out->log_write_hist = w->write_hist;
    out->log_segments_zeroed = w->segs_zeroed;
    out->log_segments_reserved = w->segs_reserved;
    out->log_segments_reused = w->segs_reused;
    out->log_spare_segments = w->n_spare_segs;
}

int replog__wal_init(struct replog *l, off_t segment_bytes)
{
    struct raft_io *io = &l->io;
    struct wal *w = calloc(1, sizeof *w);

    if (w == NULL || (w->dir = strdup(l->dir)) == NULL) {
        free(w);
        return RAFT_NOMEM;
    }
    w->l = l;
    w->io = io;
    w->uv = &l->uv;
    w->loop = l->loop;
    w->seg_bytes = segment_bytes;
    w->repair = l->repair;
    w->next_index = 1;
    w->next_seq = 1;
    w->write_seq = 1;
    w->pending.open = SIZE_MAX;
    l->uv.data = w;
    memset(io, 0, sizeof *io);
    io->version = l->uv.version;
    io->impl = w;
    io->init = wal_init_io;
    io->close = wal_close;
    io->load = wal_load;
    io->start = wal_start;
    io->bootstrap = replog__wal_bootstrap;
    io->recover = wal_recover;
    io->set_term = replog__wal_set_term;
    io->set_vote = replog__wal_set_vote;
    io->send = wal_send;
    io->append = replog__wal_append;
    io->truncate = replog__wal_truncate;
    io->snapshot_put = wal_snapshot_put;
    io->snapshot_get = wal_snapshot_get;
    io->time = wal_time;
    io->random = wal_random;
    if (l->uv.version >= 2)
        io->async_work = wal_async_work;
    return 0;
}
