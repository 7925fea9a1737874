/* raft's term and vote, kept in wal-meta (wal_meta.c), and the adoption of
 * those raft_uv kept before.
 *
 * raft asks for each change to be on disk before it acts on it: a server
 * that forgot a vote could vote twice in a term.  Each set_term or
 * set_vote is one synced replacement of wal-meta, on the loop; it comes at
 * elections only.
 *
 * A data directory of an older tumblerd has a wal-meta of format 1 and
 * raft_uv's two files (little-endian, raft_uv's format):
 *
 *   metadata1, metadata2
 *   OFFSET  SIZE  FIELD
 *        0     8  format version (1)
 *        8     8  version: rises with each write; odd ones went to
 *                 metadata1, even ones to metadata2
 *       16     8  term
 *       24     8  vote: the server voted for in that term, 0 none
 *
 * read as raft_uv reads them: a file missing or shorter than 32 bytes (a
 * write cut short) counts as version 0; the higher version holds the
 * term and vote; both at version 0, none was ever written.  The start
 * reads them and changes nothing until the log is found whole; then
 * (replog__wal_term_adopt) wal-meta is written in format 2 with the term
 * and vote, and only then are metadata1 and metadata2 removed.  A crash
 * in between leaves a wal-meta of format 2 beside them: it is the one
 * read, and they are removed at that start. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "server/replog/internal.h"
#include "server/replog/wal.h"

#define UV_META_SIZE   32
#define UV_META_FORMAT 1

static const char *const uv_names[2] = {"metadata1", "metadata2"};

struct uv_meta {
    uint64_t version, term, vote;
};

/* One of raft_uv's files; 0, or RAFT_CORRUPT / RAFT_IOERR with errmsg. */
static int read_uv_file(struct wal *w, const char *name, struct uv_meta *m)
{
    char path[PATH_MAX];
    uint8_t b[UV_META_SIZE];
    ssize_t n;
    int fd;

    memset(m, 0, sizeof *m);
    snprintf(path, sizeof path, "%s/%s", w->dir, name);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
        if (errno == ENOENT)
            return 0;
        snprintf(w->io->errmsg, sizeof w->io->errmsg, "open %s/%s: %s", w->dir,
                 name, strerror(errno));
        return RAFT_IOERR;
    }
    n = pread(fd, b, sizeof b, 0);
    close(fd);
    if (n < 0) {
        snprintf(w->io->errmsg, sizeof w->io->errmsg, "read %s/%s: %s", w->dir,
                 name, strerror(errno));
        return RAFT_IOERR;
    }
    if (n < UV_META_SIZE)
        return 0; /* a write cut short: the other file holds the last */
    if (tb_load_le64(b) != UV_META_FORMAT || tb_load_le64(b + 8) == 0) {
        snprintf(w->io->errmsg, sizeof w->io->errmsg,
                 "%s/%s is damaged: expected format 1 and a version above 0 "
                 "(raft_uv's term and vote)",
                 w->dir, name);
        return RAFT_CORRUPT;
    }
    m->version = tb_load_le64(b + 8);
    m->term = tb_load_le64(b + 16);
    m->vote = tb_load_le64(b + 24);
    return 0;
}

int replog__wal_term_read_uv(struct wal *w)
{
    struct uv_meta m[2];
    int i, rv;

    for (i = 0; i < 2; i++)
        if ((rv = read_uv_file(w, uv_names[i], &m[i])) != 0)
            return rv;
    if (m[0].version != 0 && m[0].version == m[1].version) {
        snprintf(w->io->errmsg, sizeof w->io->errmsg,
                 "%s/metadata1 and metadata2 are both at version %llu", w->dir,
                 (unsigned long long)m[0].version);
        return RAFT_CORRUPT;
    }
    i = m[1].version > m[0].version;
    w->meta.term = m[i].term;
    w->meta.vote = m[i].vote;
    w->adopt_term = 1;
    return 0;
}

int replog__wal_term_adopt(struct wal *w)
{
    char path[PATH_MAX];
    int i, rv, removed = 0;

    if (w->adopt_term) {
        if ((rv = replog__wal_meta_set_term(w, w->meta.term, w->meta.vote)) !=
            0) {
            snprintf(w->io->errmsg, sizeof w->io->errmsg, "write %s/%s: %s",
                     w->dir, WAL_META_NAME, strerror(rv));
            return RAFT_IOERR;
        }
        replog__logf(w->l, REPLOG_LOG_INFO,
                     "%s: the term (%llu) and vote (%llu) moved from "
                     "metadata1/metadata2 into " WAL_META_NAME,
                     w->dir, (unsigned long long)w->meta.term,
                     (unsigned long long)w->meta.vote);
        w->adopt_term = 0;
    }
    /* wal-meta holds them now: raft_uv's files are stale, whether an
     * adoption or a crash after one left them. */
    for (i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", w->dir, uv_names[i]);
        removed |= unlink(path) == 0;
    }
    if (removed)
        (void)replog__wal_sync_dir(w->dir);
    return 0;
}

int replog__wal_save_term(struct wal *w, raft_term term, raft_id vote)
{
    int err = replog__wal_meta_set_term(w, term, vote);

    if (err == 0)
        return 0;
    snprintf(w->io->errmsg, sizeof w->io->errmsg, "write %s/%s: %s", w->dir,
             WAL_META_NAME, strerror(err));
    return RAFT_IOERR;
}

/* raft's own changes.  One that cannot be written stops the server, as a
 * log write that fails does: libraft 0.15 does not survive the failure.
 * At an election's start it leaves its state half changed, and the
 * conversion to unavailable that follows frees a pointer it never
 * allocated (the server crashed); anywhere else it goes unavailable, a
 * member still up that serves no one and votes for no one. */
static int save_or_stop(struct raft_io *io, raft_term term, raft_id vote)
{
    struct wal *w = io->impl;

    if (replog__wal_save_term(w, term, vote) != 0)
        replog__fail_stop(w->l, "term %llu and vote %llu: %s",
                          (unsigned long long)term, (unsigned long long)vote,
                          io->errmsg);
    return 0;
}

int replog__wal_set_term(struct raft_io *io, raft_term term)
{
    return save_or_stop(io, term, 0);
}

int replog__wal_set_vote(struct raft_io *io, raft_id id)
{
    struct wal *w = io->impl;

    return save_or_stop(io, w->meta.term, id);
}
