/* Snapshot states in files of our own (`state-<index>`), LZ4-compressed
 * and synced a piece at a time; raft_uv keeps only a reference to one (a
 * few bytes, snap_ref below) with the snapshot's term, index and
 * configuration.  raft_uv wrote the state itself, whole, then synced it at
 * once: at a million znodes (30-50 MB compressed) log writes queued behind
 * that sync for up to 90-200 ms.  Synced in pieces, a log write waits for
 * one piece.
 *
 * The reference is expanded back into the state where raft reads a
 * snapshot: on load, and on snapshot_get (what a follower is sent).  A
 * snapshot stored before these files existed holds its state itself and
 * is handed on as it is. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <lz4frame.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/replog/internal.h"
#include "server/replog/wal.h"

/* Input compressed per call, and output written between syncs. */
#define SNAP_PIECE ((size_t)1 << 20)

/* What raft_uv stores (WAL_STATE_REF bytes): magic, index, file bytes,
 * state bytes (big-endian).  The magic differs from the state's own
 * (envelope.c). */
static const char ref_magic[8] = {'T', 'B', 'S', 'T', 'A', 'T', 'E', '1'};

/* Its fields' offsets. */
enum {
    REF_MAGIC = 0,
    REF_INDEX = 8,
    REF_FILE_BYTES = 16,
    REF_RAW_BYTES = 24,
};

struct snap_ref {
    uint64_t index, file_bytes, raw_bytes;
};

static int ref_decode(const struct raft_snapshot *s, struct snap_ref *r)
{
    const uint8_t *p;

    if (s->n_bufs != 1 || s->bufs[0].len != WAL_STATE_REF)
        return 0;
    p = s->bufs[0].base;
    if (memcmp(p + REF_MAGIC, ref_magic, sizeof ref_magic) != 0)
        return 0;
    r->index = tb_load_be64(p + REF_INDEX);
    r->file_bytes = tb_load_be64(p + REF_FILE_BYTES);
    r->raw_bytes = tb_load_be64(p + REF_RAW_BYTES);
    return 1;
}

/* A state file's name, for messages, and its path. */
static void state_path(const char *dir, uint64_t index, char name[32],
                       char path[PATH_MAX])
{
    snprintf(name, 32, "state-%016" PRIx64, index);
    snprintf(path, PATH_MAX, "%s/%s", dir, name);
}

/* ---- writing ---- */

/* The RAFT_* code for a failed write's errno value. */
static int raft_status(int err)
{
    return err == ENOSPC || err == EDQUOT ? RAFT_NOSPACE : RAFT_IOERR;
}

struct piece_writer {
    int fd;
    off_t off, synced;
    int err; /* errno value of the first failure */
};

/* Each piece reaches the disk before the next is written: a log write
 * behind them waits for one piece, not for the whole file. */
static void pw_write(struct piece_writer *pw, const void *p, size_t n)
{
    if (pw->err != 0 ||
        (pw->err = replog__wal_pwrite_all(pw->fd, p, n, pw->off)) != 0)
        return;
    pw->off += (off_t)n;
    if (pw->off - pw->synced >= (off_t)SNAP_PIECE) {
        if (sync_file_range(pw->fd, pw->synced, pw->off - pw->synced,
                            SYNC_FILE_RANGE_WAIT_BEFORE |
                                SYNC_FILE_RANGE_WRITE |
                                SYNC_FILE_RANGE_WAIT_AFTER) != 0)
            pw->err = errno;
        pw->synced = pw->off;
    }
}

static int lz4_failed(size_t rv, char *errmsg, const char *what)
{
    if (!LZ4F_isError(rv))
        return 0;
    snprintf(errmsg, RAFT_ERRMSG_BUF_SIZE, "snapshot: %s: %s", what,
             LZ4F_getErrorName(rv));
    return 1;
}

/* Compresses the state of `s` into `fd`; 0 or a RAFT_* code. */
static int write_state(int fd, const struct raft_snapshot *s, uint64_t raw,
                       uint64_t *file_bytes, char *errmsg)
{
    struct piece_writer pw = {fd, 0, 0, 0};
    LZ4F_preferences_t prefs;
    LZ4F_cctx *cctx = NULL;
    uint8_t *out = NULL;
    size_t cap, n, k, off;
    unsigned i;
    int rv = RAFT_IOERR;

    memset(&prefs, 0, sizeof prefs);
    prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
    prefs.frameInfo.contentSize = raw;
    cap = LZ4F_compressBound(SNAP_PIECE, &prefs) + LZ4F_HEADER_SIZE_MAX;
    if (LZ4F_isError(LZ4F_createCompressionContext(&cctx, LZ4F_VERSION)) ||
        (out = malloc(cap)) == NULL) {
        rv = RAFT_NOMEM;
        snprintf(errmsg, RAFT_ERRMSG_BUF_SIZE, "snapshot: out of memory");
        goto out;
    }
    n = LZ4F_compressBegin(cctx, out, cap, &prefs);
    if (lz4_failed(n, errmsg, "compress"))
        goto out;
    pw_write(&pw, out, n);
    for (i = 0; i < s->n_bufs && pw.err == 0; i++)
        for (off = 0; off < s->bufs[i].len && pw.err == 0; off += k) {
            k = s->bufs[i].len - off < SNAP_PIECE ? s->bufs[i].len - off
                                                  : SNAP_PIECE;
            n = LZ4F_compressUpdate(cctx, out, cap,
                                    (const uint8_t *)s->bufs[i].base + off, k,
                                    NULL);
            if (lz4_failed(n, errmsg, "compress"))
                goto out;
            pw_write(&pw, out, n);
        }
    /* Ending a frame cut short by a failed write would report a frame of
     * the wrong size instead of the write's error. */
    if (pw.err == 0) {
        n = LZ4F_compressEnd(cctx, out, cap, NULL);
        if (lz4_failed(n, errmsg, "compress"))
            goto out;
        pw_write(&pw, out, n);
    }
    /* What is left of the file written over. */
    if (pw.err == 0 && ftruncate(fd, pw.off) != 0)
        pw.err = errno;
    if (pw.err == 0 && fdatasync(fd) != 0)
        pw.err = errno;
    if (pw.err != 0) {
        rv = raft_status(pw.err);
        snprintf(errmsg, RAFT_ERRMSG_BUF_SIZE, "snapshot: write: %s",
                 strerror(pw.err));
        goto out;
    }
    *file_bytes = (uint64_t)pw.off;
    rv = 0;
out:
    free(out);
    LZ4F_freeCompressionContext(cctx);
    return rv;
}

/* Opens `tmp` for the next state over a state file no snapshot needs
 * (the one before the last, or one a crash or failure left), renamed:
 * writing over its blocks frees and allocates none, where unlinking a
 * state file of tens of MB held log writes for 40-80 ms on a file system
 * mounted with discard.  Any other stale file goes.  A descriptor or -1. */
static int open_over_stale(const char *dir, uint64_t keep, const char *tmp)
{
    char path[PATH_MAX];
    struct dirent *de;
    uint64_t index;
    int reused = 0;
    DIR *d = opendir(dir);

    while (d != NULL && (de = readdir(d)) != NULL) {
        if (strncmp(de->d_name, "state-", 6) != 0 ||
            (sscanf(de->d_name + 6, "%" SCNx64, &index) == 1 && index == keep))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        if (!reused && rename(path, tmp) == 0)
            reused = 1;
        else
            unlink(path);
    }
    if (d != NULL)
        closedir(d);
    return open(tmp, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
}

static void put_work(uv_work_t *work)
{
    struct wal *w = work->data;
    const struct raft_snapshot *s = w->put_snap_in;
    char tmp[PATH_MAX], path[PATH_MAX], name[32];
    uint64_t raw = 0;
    unsigned i;
    int fd;

    for (i = 0; i < s->n_bufs; i++)
        raw += s->bufs[i].len;
    w->put_raw = raw;
    snprintf(tmp, sizeof tmp, "%s/state-tmp", w->dir);
    state_path(w->dir, s->index, name, path);
    fd = open_over_stale(w->dir, w->state_kept, tmp);
    if (fd < 0) {
        w->put_status = raft_status(errno);
        snprintf(w->put_errmsg, sizeof w->put_errmsg,
                 "snapshot: open state-tmp: %s", strerror(errno));
        return;
    }
    w->put_status = write_state(fd, s, raw, &w->put_file, w->put_errmsg);
    close(fd);
    if (w->put_status == 0 &&
        (rename(tmp, path) != 0 || replog__wal_sync_dir(w->dir) != 0)) {
        w->put_status = raft_status(errno);
        snprintf(w->put_errmsg, sizeof w->put_errmsg, "snapshot: %s: %s", name,
                 strerror(errno));
    }
    /* A state cut short by a full disk must not keep the space it took
     * from the log until the next snapshot. */
    if (w->put_status != 0)
        unlink(tmp);
}

static void put_work_done(uv_work_t *work, int status)
{
    struct wal *w = work->data;
    const struct raft_snapshot *s = w->put_snap_in;
    uint8_t *p = w->put_ref;
    int rv = w->put_status;

    (void)status;
    w->snap_busy--;
    if (rv == 0) {
        memcpy(p + REF_MAGIC, ref_magic, sizeof ref_magic);
        tb_store_be64(p + REF_INDEX, s->index);
        tb_store_be64(p + REF_FILE_BYTES, w->put_file);
        tb_store_be64(p + REF_RAW_BYTES, w->put_raw);
        w->put_ref_buf.base = p;
        w->put_ref_buf.len = WAL_STATE_REF;
        w->put_snap = *s;
        w->put_snap.bufs = &w->put_ref_buf;
        w->put_snap.n_bufs = 1;
        rv = w->uv->snapshot_put(w->uv, w->put_trailing, &w->put, &w->put_snap,
                                 replog__wal_put_done);
        if (rv != 0)
            memcpy(w->put_errmsg, w->uv->errmsg, sizeof w->put_errmsg);
    }
    if (rv != 0) {
        replog__logf(w->l, REPLOG_LOG_ERROR, "%s", w->put_errmsg);
        replog__wal_put_done(&w->put, rv);
    }
    replog__wal_maybe_closed(w);
}

/* Writes the state of `s`, then has raft_uv store the reference to it;
 * replog__wal_put_done answers raft. */
int replog__snapstore_put(struct wal *w, const struct raft_snapshot *s)
{
    w->put_snap_in = s;
    w->put_status = 0;
    w->put_work.data = w;
    if (uv_queue_work(w->loop, &w->put_work, put_work, put_work_done) != 0)
        return RAFT_IOERR;
    w->snap_busy++;
    return 0;
}

/* ---- reading ---- */

/* Reads the state `r` names into one buffer; 0 or a RAFT_* code. */
static int read_state(const char *dir, const struct snap_ref *r,
                      struct raft_buffer *out, char *errmsg)
{
    char path[PATH_MAX], name[32];
    LZ4F_dctx *dctx = NULL;
    uint8_t *in = NULL, *dst;
    size_t have = 0, used, dst_len, hint = 1;
    uint64_t done = 0;
    struct stat st;
    ssize_t k;
    int fd, rv = RAFT_CORRUPT;

    state_path(dir, r->index, name, path);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(errmsg, RAFT_ERRMSG_BUF_SIZE, "snapshot %s: %s", name,
                 strerror(errno));
        if (fd >= 0)
            close(fd);
        return RAFT_IOERR;
    }
    dst = raft_malloc(r->raw_bytes > 0 ? r->raw_bytes : 1);
    if (dst == NULL || (in = malloc(SNAP_PIECE)) == NULL ||
        LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION))) {
        snprintf(errmsg, RAFT_ERRMSG_BUF_SIZE, "snapshot %s: %s", name,
                 "out of memory");
        rv = RAFT_NOMEM;
        goto out;
    }
    if ((uint64_t)st.st_size != r->file_bytes) {
        snprintf(errmsg, RAFT_ERRMSG_BUF_SIZE,
                 "snapshot %s: %lld bytes, %llu expected", name,
                 (long long)st.st_size, (unsigned long long)r->file_bytes);
        goto out;
    }
    while (hint != 0) {
        k = read(fd, in + have, SNAP_PIECE - have);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            snprintf(errmsg, RAFT_ERRMSG_BUF_SIZE, "snapshot %s: %s", name,
                     k < 0 ? strerror(errno) : "cut short");
            rv = k < 0 ? RAFT_IOERR : RAFT_CORRUPT;
            goto out;
        }
        have += (size_t)k;
        used = have;
        dst_len = r->raw_bytes - done;
        hint = LZ4F_decompress(dctx, dst + done, &dst_len, in, &used, NULL);
        if (LZ4F_isError(hint)) {
            snprintf(errmsg, RAFT_ERRMSG_BUF_SIZE, "snapshot %s: %s", name,
                     LZ4F_getErrorName(hint));
            goto out;
        }
        done += dst_len;
        memmove(in, in + used, have - used);
        have -= used;
    }
    if (done != r->raw_bytes || have != 0 ||
        lseek(fd, 0, SEEK_CUR) != st.st_size) {
        snprintf(errmsg, RAFT_ERRMSG_BUF_SIZE,
                 "snapshot %s: %llu bytes, %llu expected", name,
                 (unsigned long long)done, (unsigned long long)r->raw_bytes);
        goto out;
    }
    out->base = dst;
    out->len = r->raw_bytes;
    dst = NULL;
    rv = 0;
out:
    raft_free(dst);
    free(in);
    LZ4F_freeDecompressionContext(dctx);
    close(fd);
    return rv;
}

/* Puts the state in place of a reference to it; 0 or a RAFT_* code. */
int replog__snapstore_expand(const char *dir, struct raft_snapshot *s,
                             char *errmsg)
{
    struct raft_buffer buf;
    struct snap_ref r;
    int rv;

    if (!ref_decode(s, &r))
        return 0;
    if (r.index != s->index) {
        snprintf(errmsg, RAFT_ERRMSG_BUF_SIZE,
                 "snapshot %llu names the state of %llu",
                 (unsigned long long)s->index, (unsigned long long)r.index);
        return RAFT_CORRUPT;
    }
    if ((rv = read_state(dir, &r, &buf, errmsg)) != 0)
        return rv;
    raft_free(s->bufs[0].base);
    s->bufs[0] = buf;
    return 0;
}

struct snap_get {
    struct wal *w;
    struct raft_io_snapshot_get inner;
    struct raft_io_snapshot_get *req;
    raft_io_snapshot_get_cb cb;
    struct raft_snapshot *snap;
    uv_work_t work;
    int status;
    char errmsg[RAFT_ERRMSG_BUF_SIZE];
};

static void get_work(uv_work_t *work)
{
    struct snap_get *g = work->data;

    g->status = replog__snapstore_expand(g->w->dir, g->snap, g->errmsg);
}

static void get_done(uv_work_t *work, int status)
{
    struct snap_get *g = work->data;
    struct wal *w = g->w;

    (void)status;
    w->snap_busy--;
    /* raft frees the snapshot it is given only with status 0. */
    if (g->status != 0) {
        replog__logf(w->l, REPLOG_LOG_ERROR, "%s", g->errmsg);
        replog__wal_snapshot_free(&g->snap);
    }
    g->cb(g->req, g->snap, g->status);
    free(g);
    replog__wal_maybe_closed(w);
}

static void get_loaded(struct raft_io_snapshot_get *inner,
                       struct raft_snapshot *snap, int status)
{
    struct snap_get *g = TB_CONTAINER_OF(inner, struct snap_get, inner);
    struct snap_ref r;

    if (status != 0 || !ref_decode(snap, &r)) {
        g->cb(g->req, snap, status);
        free(g);
        return;
    }
    g->snap = snap;
    g->work.data = g;
    g->w->snap_busy++;
    if (uv_queue_work(g->w->loop, &g->work, get_work, get_done) != 0) {
        g->status = RAFT_IOERR;
        snprintf(g->errmsg, sizeof g->errmsg, "snapshot: no worker");
        get_done(&g->work, 0);
    }
}

/* raft_uv's last snapshot, its state read back if it is in a file here. */
int replog__snapstore_get(struct wal *w, struct raft_io_snapshot_get *req,
                          raft_io_snapshot_get_cb cb)
{
    struct snap_get *g = calloc(1, sizeof *g);
    int rv;

    if (g == NULL) {
        snprintf(w->io->errmsg, RAFT_ERRMSG_BUF_SIZE,
                 "snapshot: out of memory");
        return RAFT_NOMEM;
    }
    g->w = w;
    g->req = req;
    g->cb = cb;
    rv = w->uv->snapshot_get(w->uv, &g->inner, get_loaded);
    if (rv != 0) {
        memcpy(w->io->errmsg, w->uv->errmsg, sizeof w->io->errmsg);
        free(g);
    }
    return rv;
}
