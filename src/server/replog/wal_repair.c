/* The repair of a damaged log, only when an operator asks for it
 * (tumblerd --repair-log).  The log is cut at the end wal_load.c found,
 * its last record that joins the chain: first every file the cut changes
 * or removes is copied into repair-<UTC time>/ in the data directory, then
 * the segment holding the end is zeroed from the end on (and given back
 * the length it was made with, if it was cut short), the segments after
 * it are removed, and wal-meta names it the newest.  Nothing before the
 * end changes.  A log whose snapshot is gone is not repaired: nothing
 * could rebuild its state.  zxids must not go back after a repair:
 * the caller moves them to a new epoch (replog_begin_epoch, main.c). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "server/replog/internal.h"
#include "server/replog/wal.h"

/* The folder the copies go to (w->backup, in the data directory), made
 * once per run. */
static int backup_dir(struct wal *w)
{
    char path[PATH_MAX];
    time_t now = time(NULL);
    struct tm tm;

    if (w->backup[0] != '\0')
        return 0;
    gmtime_r(&now, &tm);
    strftime(w->backup, sizeof w->backup, "repair-%Y%m%dT%H%M%SZ", &tm);
    snprintf(path, sizeof path, "%s/%s", w->dir, w->backup);
    if (mkdir(path, 0700) != 0) {
        snprintf(w->io->errmsg, sizeof w->io->errmsg, "repair: mkdir %s: %s",
                 w->backup, strerror(errno));
        w->backup[0] = '\0';
        return RAFT_IOERR;
    }
    return 0;
}

/* Copies `name` from the data directory into the backup, synced. */
static int copy_file(struct wal *w, const char *name)
{
    char from[PATH_MAX], to[PATH_MAX], buf[1 << 16];
    int in, out = -1, err = 0;
    off_t at = 0;
    ssize_t k;

    snprintf(from, sizeof from, "%s/%s", w->dir, name);
    snprintf(to, sizeof to, "%s/%s/%s", w->dir, w->backup, name);
    if ((in = open(from, O_RDONLY | O_CLOEXEC)) < 0 ||
        (out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0)
        err = errno;
    while (err == 0 && (k = read(in, buf, sizeof buf)) != 0) {
        if (k < 0) {
            err = errno == EINTR ? 0 : errno;
            continue;
        }
        err = replog__wal_pwrite_all(out, buf, (size_t)k, at);
        at += k;
    }
    if (err == 0 && fsync(out) != 0)
        err = errno;
    if (in >= 0)
        close(in);
    if (out >= 0)
        close(out);
    if (err != 0)
        snprintf(w->io->errmsg, sizeof w->io->errmsg, "repair: copy %s: %s",
                 name, strerror(err));
    return err != 0 ? RAFT_IOERR : 0;
}

/* The segment files' sequence numbers from `from` on. */
static int for_segments(struct wal *w, uint64_t from,
                        int (*fn)(struct wal *w, const char *name))
{
    DIR *d = opendir(w->dir);
    struct dirent *de;
    unsigned long long seq;
    int end, rv = 0;

    if (d == NULL)
        return RAFT_IOERR;
    while (rv == 0 && (de = readdir(d)) != NULL) {
        end = 0;
        if (sscanf(de->d_name, "wal-%16llx%n", &seq, &end) == 1 && end == 20 &&
            de->d_name[end] == '\0' && seq >= from)
            rv = fn(w, de->d_name);
    }
    closedir(d);
    return rv;
}

static int remove_file(struct wal *w, const char *name)
{
    char path[PATH_MAX];

    snprintf(path, sizeof path, "%s/%s", w->dir, name);
    if (unlink(path) == 0)
        return 0;
    snprintf(w->io->errmsg, sizeof w->io->errmsg, "repair: remove %s: %s", name,
             strerror(errno));
    return RAFT_IOERR;
}

static uint64_t bound_of(const struct wal_exam *x)
{
    uint64_t last =
        x->max_index > x->last_wal_index ? x->max_index : x->last_wal_index;

    return last + x->bytes_beyond / WAL_E_HDR + 1;
}

int replog__wal_repair(struct wal *w)
{
    struct wal_exam *x = &w->exam;
    uint64_t keep = x->end_seq;
    struct stat st;
    char path[PATH_MAX];
    off_t size;
    int rv;

    replog__logf(w->l, REPLOG_LOG_WARN, "repair: the log is damaged: %s",
                 w->io->errmsg);
    /* Without the snapshot the log starts after, no state can be had. */
    if (x->cut_all) {
        snprintf(w->io->errmsg, sizeof w->io->errmsg,
                 "repair: the snapshot the log follows is gone, and the log "
                 "alone cannot rebuild the state: restore the data directory "
                 "from a copy");
        return RAFT_CORRUPT;
    }
    /* Nor with no record whole and no snapshot: a cut would keep nothing,
     * not even the members (the first record's), and the server could not
     * start again. */
    if (keep == 0 && !x->snapshot) {
        snprintf(w->io->errmsg, sizeof w->io->errmsg,
                 "repair: the log's first record is damaged and no snapshot "
                 "precedes it: a cut would keep nothing of the log; restore "
                 "the data directory from a copy");
        return RAFT_CORRUPT;
    }
    if ((rv = backup_dir(w)) != 0 ||
        (rv = for_segments(w, keep, copy_file)) != 0 ||
        (rv = copy_file(w, WAL_META_NAME)) != 0)
        return rv;
    /* Before the cut: until zxids have moved past every one a dropped
     * entry may have had (an entry takes 16 bytes at least), no start may
     * serve, and a repair run again goes on from here. */
    if ((rv = replog__wal_meta_set(w, WAL_META_REPAIR_BOUND, bound_of(x))) !=
        0) {
        snprintf(w->io->errmsg, sizeof w->io->errmsg,
                 "repair: write " WAL_META_NAME ": %s", strerror(rv));
        return RAFT_IOERR;
    }
    /* The copies are the only ones once the cut is made: on disk first. */
    snprintf(path, sizeof path, "%s/%s", w->dir, w->backup);
    if ((rv = replog__wal_sync_dir(path)) != 0) {
        snprintf(w->io->errmsg, sizeof w->io->errmsg,
                 "repair: sync %s: %s (nothing cut)", w->backup, strerror(rv));
        return RAFT_IOERR;
    }
    /* The segment kept last is made as long as its records say again:
     * grown back if cut short, cut back if added to. */
    if (keep != 0) {
        replog__wal_path(w, keep, path, sizeof path);
        size = stat(path, &st) == 0 ? st.st_size : 0;
        if (x->end_made != 0)
            size = (off_t)x->end_made;
        if ((rv = replog__wal_zero(w, keep, x->end_off, size, 1, "repair")) !=
            0)
            return rv;
    }
    /* The load that follows numbers the next segment: after `keep`, or,
     * with none kept, above every spare, whose old records must not name a
     * segment of the log (wal_load.c). */
    if ((rv = for_segments(w, keep + 1, remove_file)) != 0)
        return rv;
    if ((rv = replog__wal_meta_set(w, WAL_META_NEWEST, keep)) != 0) {
        snprintf(w->io->errmsg, sizeof w->io->errmsg,
                 "repair: write " WAL_META_NAME ": %s", strerror(rv));
        return RAFT_IOERR;
    }
    (void)replog__wal_sync_dir(w->dir);
    w->repair_exam = *x;
    if (keep != 0)
        replog__logf(w->l, REPLOG_LOG_WARN,
                     "repair: the log now ends at wal-%016" PRIx64
                     ", offset %lld; the files it changed or removed are "
                     "copied in %s/%s",
                     keep, (long long)x->end_off, w->dir, w->backup);
    else
        replog__logf(w->l, REPLOG_LOG_WARN,
                     "repair: no segment of the log is kept, the snapshot "
                     "is; the files removed are copied in %s/%s",
                     w->dir, w->backup);
    return 0;
}

int replog__wal_repair_term(struct wal *w, raft_term term)
{
    char path[PATH_MAX];
    int i, rv;

    if ((rv = backup_dir(w)) != 0)
        return rv;
    /* wal-meta, unless the cut copied it already; raft_uv's files while
     * they hold the term (wal_term.c). */
    snprintf(path, sizeof path, "%s/%s/" WAL_META_NAME, w->dir, w->backup);
    if (access(path, F_OK) != 0 && (rv = copy_file(w, WAL_META_NAME)) != 0)
        return rv;
    for (i = 1; i <= 2 && w->adopt_term; i++) {
        snprintf(path, sizeof path, "%s/metadata%d", w->dir, i);
        if (access(path, F_OK) == 0 &&
            (rv = copy_file(w, i == 1 ? "metadata1" : "metadata2")) != 0)
            return rv;
    }
    if (w->meta.repair_bound == 0 &&
        (rv = replog__wal_meta_set(w, WAL_META_REPAIR_BOUND,
                                   w->exam.last_index + 1)) != 0)
        return RAFT_IOERR;
    if ((rv = replog__wal_meta_set_term(w, term, 0)) != 0) {
        snprintf(w->io->errmsg, sizeof w->io->errmsg,
                 "repair: write " WAL_META_NAME ": %s", strerror(rv));
        return RAFT_IOERR;
    }
    replog__logf(w->l, REPLOG_LOG_WARN,
                 "repair: the term is raised to the log's, %llu, with no "
                 "vote; the files that held it are copied in %s/%s",
                 (unsigned long long)term, w->dir, w->backup);
    return 0;
}

void replog_repair_report(struct replog *l, struct replog_repair *out)
{
    const struct wal *w = l->io.impl;
    const struct wal_exam *x = &w->repair_exam;

    memset(out, 0, sizeof *out);
    out->epoch = w->meta.epoch;
    out->last_index = w->exam.last_index;
    out->bound = w->meta.repair_bound;
    if (out->bound == 0)
        return;
    out->repaired = 1;
    /* An earlier run's cut, its zxids not moved: this one cut nothing. */
    if (w->backup[0] == '\0')
        return;
    snprintf(out->backup, sizeof out->backup, "%s/%s", w->dir, w->backup);
    out->dropped = x->beyond;
    out->dropped_entries = x->beyond_entries;
    out->dropped_first = x->beyond_first;
    out->dropped_last = x->beyond_last;
    out->dropped_bytes = x->bytes_beyond;
}

int replog_begin_epoch(struct replog *l, uint64_t epoch)
{
    struct wal *w = l->io.impl;
    int err = epoch > w->meta.epoch
                  ? replog__wal_meta_set(w, WAL_META_EPOCH, epoch)
                  : 0;

    if (err != 0) {
        replog__logf(l, REPLOG_LOG_ERROR, "write %s/" WAL_META_NAME ": %s",
                     w->dir, strerror(err));
        return TB_EIO;
    }
    return 0;
}

int replog_end_repair(struct replog *l)
{
    struct wal *w = l->io.impl;
    int err = replog__wal_meta_set(w, WAL_META_REPAIR_BOUND, 0);

    if (err != 0) {
        replog__logf(l, REPLOG_LOG_ERROR, "write %s/" WAL_META_NAME ": %s",
                     w->dir, strerror(err));
        return TB_EIO;
    }
    return 0;
}
