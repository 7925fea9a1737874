/* A new log's start: raft's bootstrap, the first configuration as the
 * log's first record, index 1, in its first segment.
 *
 * raft asks at every start of a member that does not join.  Once a term
 * is recorded the log was bootstrapped; without one, only a new log may be
 * made: over an existing one it would start a second history.
 *
 * The first segment is made whole in `wal-tmp`: one ENTRIES record (write
 * 1, no record before it) holding the configuration, then zeros up to the
 * segment's size, synced; renamed to wal-0000000000000001, the directory
 * synced; then one write of wal-meta names it (oldest and newest) and
 * records term 1.  Until that last write the directory holds no log: a
 * crash before it leaves term 0 and no segment named, and the next start
 * bootstraps again, over what is left.  The load then reads the segment as
 * any other.
 *
 * A data directory of an older tumblerd holds the configuration in
 * raft_uv's segment 0000000000000001-0000000000000001 instead; raft_uv's
 * load still reads it (wal_io.c), until a snapshot covers it and raft_uv
 * removes it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/replog/internal.h"
#include "server/replog/wal.h"

/* The first segment, with the configuration `conf` (raft's encoding) as
 * its one record, made whole under its name: 0 or an errno value. */
static int write_first(struct wal *w, const struct raft_buffer *conf,
                       off_t size)
{
    size_t len = WAL_E_HDR + ((conf->len + 7) & ~(size_t)7);
    char tmp[PATH_MAX], path[PATH_MAX];
    uint8_t *b = calloc(1, (size_t)size), *e = b + WAL_HDR;
    int fd, err = 0;

    if (b == NULL)
        return ENOMEM;
    tb_store_be32(b + WAL_H_MAGIC, WAL_MAGIC);
    tb_store_be32(b + WAL_H_KIND, WAL_ENTRIES);
    tb_store_be64(b + WAL_H_INDEX, 1);
    tb_store_be64(b + WAL_H_WRITE, 1);
    tb_store_be32(b + WAL_H_N, 1);
    tb_store_be32(b + WAL_H_SEG, 1);
    tb_store_be64(b + WAL_H_LEN, len);
    tb_store_be64(b + WAL_H_LOG, w->meta.log_id);
    tb_store_be64(b + WAL_H_SEG_SIZE, (uint64_t)size);
    tb_store_be64(e + WAL_E_TERM, 1);
    tb_store_be32(e + WAL_E_TYPE, RAFT_CHANGE);
    tb_store_be32(e + WAL_E_SIZE, (uint32_t)conf->len);
    memcpy(e + WAL_E_HDR, conf->base, conf->len);
    tb_store_be32(b + WAL_H_CRC, replog__wal_crc(0, b + WAL_H_PREV,
                                                 WAL_HDR - WAL_H_PREV + len));

    snprintf(tmp, sizeof tmp, "%s/wal-tmp", w->dir);
    replog__wal_path(w, 1, path, sizeof path);
    if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0)
        err = errno;
    if (err == 0)
        err = replog__wal_pwrite_all(fd, b, (size_t)size, 0);
    if (err == 0 && fdatasync(fd) != 0)
        err = errno;
    /* The log writes with O_DIRECT: clean cached pages only cost memory. */
    if (fd >= 0) {
        (void)posix_fadvise(fd, 0, size, POSIX_FADV_DONTNEED);
        close(fd);
    }
    if (err == 0 && rename(tmp, path) != 0)
        err = errno;
    if (err == 0)
        err = replog__wal_sync_dir(w->dir);
    if (err != 0)
        unlink(tmp);
    free(b);
    return err;
}

int replog__wal_bootstrap(struct raft_io *io,
                          const struct raft_configuration *c)
{
    struct wal *w = io->impl;
    struct raft_buffer conf;
    struct wal_meta m = w->meta;
    off_t size = w->seg_bytes < REPLOG_FIRST_SEGMENT_BYTES
                     ? w->seg_bytes
                     : REPLOG_FIRST_SEGMENT_BYTES;
    int rv, err;

    if (w->meta.term != 0)
        return RAFT_CANTBOOTSTRAP;
    if (!w->fresh && w->meta.newest > 0 && w->adopt_term) {
        snprintf(io->errmsg, sizeof io->errmsg,
                 "metadata1 and metadata2 (the term and the vote) are "
                 "missing, but the log exists (" WAL_META_NAME
                 " names wal-%016llx)",
                 (unsigned long long)w->meta.newest);
        return RAFT_CORRUPT;
    }
    /* A term lost from a log that exists: the load refuses it as older
     * than the log's entries, and a repair raises it. */
    if (w->meta.newest > 0)
        return RAFT_CANTBOOTSTRAP;
    if ((rv = raft_configuration_encode(c, &conf)) != 0)
        return rv;
    if ((size_t)size < wal_aligned(WAL_HDR + WAL_E_HDR + conf.len + 7))
        size = (off_t)wal_aligned(WAL_HDR + WAL_E_HDR + conf.len + 7);
    err = write_first(w, &conf, size);
    raft_free(conf.base);
    /* No segment prepares meanwhile (the log is not loaded yet): wal-meta
     * is this thread's to write. */
    m.oldest = m.newest = 1;
    m.term = 1;
    m.vote = 0;
    if (err == 0 && (err = replog__wal_meta_write(w->dir, &m)) == 0) {
        w->meta = m;
        w->segs_zeroed++;
    }
    if (err != 0) {
        snprintf(io->errmsg, sizeof io->errmsg,
                 "bootstrap: write %s/wal-0000000000000001 and "
                 "" WAL_META_NAME ": %s",
                 w->dir, strerror(err));
        return err == ENOSPC || err == EDQUOT ? RAFT_NOSPACE : RAFT_IOERR;
    }
    return 0;
}
