/* Snapshots, in files of our own.  `state-<index>` holds a snapshot's
 * term, index and configuration, then its state, LZ4-compressed and synced
 * a piece at a time: raft_uv wrote a state whole, then synced it at once,
 * and at a million znodes (30-50 MB compressed) log writes queued behind
 * that sync for up to 90-200 ms.  Synced in pieces, a log write waits for
 * one piece.
 *
 * A snapshot is stored when state-tmp is renamed to its state-<index>: the
 * newest state file of this format is the log's snapshot.  The one before
 * it is kept until the next is stored, then written over.  raft reads a
 * snapshot on load and on snapshot_get (what a follower is sent).
 *
 * A data directory of an older tumblerd holds raft_uv's snapshot files
 * (`snapshot-<term>-<index>-<time>` and its `.meta`), which name a state
 * file with no header (or hold the state themselves), and may hold
 * raft_uv's segment with the first configuration.  raft_uv's load reads
 * them (wal_io.c) while no snapshot of this format exists; the first start
 * writes raft_uv's snapshot in this format (replog__snapstore_adopt), and
 * raft_uv's files go once a snapshot of this format covers them.
 *
 * state-<index>, big-endian:
 *
 *   OFFSET  SIZE  FIELD
 *        0     8  magic "TBSNAP01"
 *        8     4  crc: CRC-32 of bytes 12 .. H
 *       12     4  H: the header's bytes, at most SNAP_HDR_MAX
 *       16     8  term of the last entry the snapshot holds
 *       24     8  index of that entry
 *       32     8  index of the entry of the configuration below
 *       40     8  the state's bytes, uncompressed
 *       48     4  n: servers in the configuration
 *       52     …  n servers, each:
 *                   0  8  id
 *                   8  4  role (raft's: 0 standby, 1 voter, 2 spare)
 *                  12  4  A: the address's bytes
 *                  16  A  the address, with no terminating zero
 *        H     …  the state: one LZ4 frame, with its content size and a
 *                 checksum of the content
 */
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
#define SNAP_HDR_MAX ((uint32_t)1 << 20)

static const char snap_magic[8] = {'T', 'B', 'S', 'N', 'A', 'P', '0', '1'};

/* The header's fields' offsets, and a server's within it. */
enum {
    SH_MAGIC = 0,
    SH_CRC = 8,
    SH_LEN = 12,
    SH_TERM = 16,
    SH_INDEX = 24,
    SH_CONF_INDEX = 32,
    SH_RAW = 40,
    SH_N = 48,
    SH_SERVERS = 52,
};
enum { SV_ID = 0, SV_ROLE = 8, SV_ADDR_LEN = 12, SV_ADDR = 16 };

/* What raft_uv's snapshot file holds in an older tumblerd's directory
 * (WAL_STATE_REF bytes): magic, index, file bytes, state bytes
 * (big-endian); the state file it names is an LZ4 frame alone. */
static const char ref_magic[8] = {'T', 'B', 'S', 'T', 'A', 'T', 'E', '1'};

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

/* The index in a state file's name (`state-` and 16 hex digits), or 0
 * for any other name: no snapshot has index 0. */
static uint64_t state_index(const char *name)
{
    uint64_t index;
    int end = 0;

    if (sscanf(name, "state-%16" SCNx64 "%n", &index, &end) != 1 ||
        end != 22 || name[end] != '\0')
        return 0;
    return index;
}

/* The decimal digits at the start of `s`: how many. */
static size_t digits(const char *s)
{
    size_t n = 0;

    while (s[n] >= '0' && s[n] <= '9')
        n++;
    return n;
}

/* raft_uv's files in an older tumblerd's directory, by the names libraft
 * 0.15 gives them (src/uv.h): its snapshots, "snapshot-%llu-%llu-%llu",
 * their metadata, the same and ".meta", and its segment of the first
 * configuration, closed: "%016llu-%016llu".  They are removed once a
 * snapshot of this format covers them: a file of another name is not
 * ours to remove (an operator's "2024-notes.txt", "snapshot-notes"). */
static int is_uv_file(const char *name)
{
    const char *p = name + 9;
    int i;

    if (digits(name) == 16 && name[16] == '-' && digits(name + 17) == 16 &&
        name[33] == '\0')
        return 1;
    if (strncmp(name, "snapshot-", 9) != 0)
        return 0;
    for (i = 0; i < 3; i++) {
        if (digits(p) == 0)
            return 0;
        p += digits(p);
        if (i < 2 && *p++ != '-')
            return 0;
    }
    return *p == '\0' || strcmp(p, ".meta") == 0;
}

/* ---- the header ---- */

/* The header of `s`, whose state is `raw` bytes, in a buffer of *len
 * bytes; NULL when out of memory, or too large. */
static uint8_t *header_encode(const struct raft_snapshot *s, uint64_t raw,
                              size_t *len)
{
    const struct raft_configuration *c = &s->configuration;
    size_t n = SH_SERVERS, a;
    uint8_t *b, *p;
    unsigned i;

    for (i = 0; i < c->n; i++)
        n += SV_ADDR + strlen(c->servers[i].address);
    if (n > SNAP_HDR_MAX || (b = calloc(1, n)) == NULL)
        return NULL;
    memcpy(b + SH_MAGIC, snap_magic, sizeof snap_magic);
    tb_store_be32(b + SH_LEN, (uint32_t)n);
    tb_store_be64(b + SH_TERM, s->term);
    tb_store_be64(b + SH_INDEX, s->index);
    tb_store_be64(b + SH_CONF_INDEX, s->configuration_index);
    tb_store_be64(b + SH_RAW, raw);
    tb_store_be32(b + SH_N, c->n);
    for (p = b + SH_SERVERS, i = 0; i < c->n; i++) {
        a = strlen(c->servers[i].address);
        tb_store_be64(p + SV_ID, c->servers[i].id);
        tb_store_be32(p + SV_ROLE, (uint32_t)c->servers[i].role);
        tb_store_be32(p + SV_ADDR_LEN, (uint32_t)a);
        memcpy(p + SV_ADDR, c->servers[i].address, a);
        p += SV_ADDR + a;
    }
    tb_store_be32(b + SH_CRC, replog__wal_crc(0, b + SH_LEN, n - SH_LEN));
    *len = n;
    return b;
}

/* The snapshot a whole header of `n` bytes (its checksum verified)
 * describes, into `s`, and its state's bytes; 0, or -1 if it is not
 * well formed. */
static int header_decode(const uint8_t *b, uint32_t n, struct raft_snapshot *s,
                         uint64_t *raw)
{
    const uint8_t *p = b + SH_SERVERS, *end = b + n;
    uint32_t i, count = tb_load_be32(b + SH_N), role, a;
    char *addr;
    int ok;

    s->term = tb_load_be64(b + SH_TERM);
    s->index = tb_load_be64(b + SH_INDEX);
    s->configuration_index = tb_load_be64(b + SH_CONF_INDEX);
    *raw = tb_load_be64(b + SH_RAW);
    raft_configuration_init(&s->configuration);
    for (i = 0; i < count; i++) {
        if (end - p < SV_ADDR)
            goto bad;
        role = tb_load_be32(p + SV_ROLE);
        a = tb_load_be32(p + SV_ADDR_LEN);
        if (role > RAFT_SPARE || (size_t)(end - p - SV_ADDR) < a)
            goto bad;
        addr = strndup((const char *)p + SV_ADDR, a);
        ok = addr != NULL && strlen(addr) == a &&
             raft_configuration_add(&s->configuration, tb_load_be64(p + SV_ID),
                                    addr, (int)role) == 0;
        free(addr);
        if (!ok)
            goto bad;
        p += SV_ADDR + a;
    }
    if (p == end && count > 0)
        return 0;
bad:
    raft_configuration_close(&s->configuration);
    return -1;
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

/* Writes the header `hdr`, then the state of `s` compressed, into `fd`;
 * 0 or a RAFT_* code. */
static int write_state(int fd, const uint8_t *hdr, size_t hdr_len,
                       const struct raft_snapshot *s, uint64_t raw,
                       char *errmsg)
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
    pw_write(&pw, hdr, hdr_len);
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
 * mounted with discard.  Any other stale file goes; all of them without
 * `reuse` (a snapshot is being read: it may be one of them, and goes on
 * reading its unlinked file).  A descriptor or -1. */
static int open_over_stale(const char *dir, uint64_t keep, const char *tmp,
                           int reuse)
{
    char path[PATH_MAX];
    struct dirent *de;
    int reused = 0;
    DIR *d = opendir(dir);

    while (d != NULL && (de = readdir(d)) != NULL) {
        if (strncmp(de->d_name, "state-", 6) != 0 ||
            (keep != 0 && state_index(de->d_name) == keep))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        /* The one renamed, which readdir may list again under its name. */
        if (reused && strcmp(path, tmp) == 0)
            continue;
        if (reuse && !reused && rename(path, tmp) == 0)
            reused = 1;
        else
            unlink(path);
    }
    if (d != NULL)
        closedir(d);
    return open(tmp, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
}

/* raft_uv's files of an older tumblerd, once a snapshot of this format
 * covers them. */
static void remove_uv_files(const char *dir)
{
    char path[PATH_MAX];
    struct dirent *de;
    DIR *d = opendir(dir);

    while (d != NULL && (de = readdir(d)) != NULL)
        if (is_uv_file(de->d_name)) {
            snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
            unlink(path);
        }
    if (d != NULL)
        closedir(d);
    (void)replog__wal_sync_dir(dir);
}

/* Stores `s`: written as state-tmp, synced, renamed to its state-<index>,
 * the directory synced; then raft_uv's files, if any, go.  0 or a RAFT_*
 * code, with `errmsg` set. */
static int store(struct wal *w, const struct raft_snapshot *s, char *errmsg)
{
    char tmp[PATH_MAX], path[PATH_MAX], name[32];
    uint64_t raw = 0;
    uint8_t *hdr;
    size_t hdr_len;
    unsigned i;
    int fd, rv;

    for (i = 0; i < s->n_bufs; i++)
        raw += s->bufs[i].len;
    if ((hdr = header_encode(s, raw, &hdr_len)) == NULL) {
        snprintf(errmsg, RAFT_ERRMSG_BUF_SIZE,
                 "snapshot: out of memory, or a configuration over %u bytes",
                 SNAP_HDR_MAX);
        return RAFT_NOMEM;
    }
    snprintf(tmp, sizeof tmp, "%s/state-tmp", w->dir);
    state_path(w->dir, s->index, name, path);
    fd = open_over_stale(w->dir, w->state_kept, tmp, w->put_reuse);
    if (fd < 0) {
        rv = raft_status(errno);
        snprintf(errmsg, RAFT_ERRMSG_BUF_SIZE, "snapshot: open state-tmp: %s",
                 strerror(errno));
        free(hdr);
        return rv;
    }
    rv = write_state(fd, hdr, hdr_len, s, raw, errmsg);
    free(hdr);
    close(fd);
    if (rv == 0 &&
        (rename(tmp, path) != 0 || replog__wal_sync_dir(w->dir) != 0)) {
        rv = raft_status(errno);
        snprintf(errmsg, RAFT_ERRMSG_BUF_SIZE, "snapshot: %s: %s", name,
                 strerror(errno));
    }
    /* A state cut short by a full disk must not keep the space it took
     * from the log until the next snapshot. */
    if (rv != 0)
        unlink(tmp);
    else if (w->uv_files)
        remove_uv_files(w->dir);
    return rv;
}

static void put_work(uv_work_t *work)
{
    struct wal *w = work->data;

    w->put_status = store(w, w->put_snap_in, w->put_errmsg);
}

static void put_work_done(uv_work_t *work, int status)
{
    struct wal *w = work->data;

    (void)status;
    w->snap_busy--;
    if (w->put_status != 0)
        replog__logf(w->l, REPLOG_LOG_ERROR, "%s", w->put_errmsg);
    else
        w->uv_files = w->uv_snap = 0;
    replog__wal_put_done(w, w->put_status);
    replog__wal_maybe_closed(w);
}

/* Stores `s` on a worker thread; replog__wal_put_done answers raft. */
int replog__snapstore_put(struct wal *w, const struct raft_snapshot *s)
{
    w->put_snap_in = s;
    w->put_status = 0;
    /* A read begun before this is of the snapshot kept then, which may be
     * stale by now (another was stored since). */
    w->put_reuse = w->snap_gets == 0;
    w->put_work.data = w;
    if (uv_queue_work(w->loop, &w->put_work, put_work, put_work_done) != 0)
        return RAFT_IOERR;
    w->snap_busy++;
    return 0;
}

/* ---- reading ---- */

/* Reads exactly `n` bytes at `off`: 0, an errno value, or -1 at the end
 * of the file. */
static int pread_full(int fd, void *p, size_t n, off_t off)
{
    ssize_t k;

    while (n > 0) {
        k = pread(fd, p, n, off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return k < 0 ? errno : -1;
        p = (uint8_t *)p + k;
        n -= (size_t)k;
        off += k;
    }
    return 0;
}

/* Decompresses the LZ4 frame that fills `fd` from `at` to its end, of
 * `raw` bytes, into one buffer; 0 or a RAFT_* code. */
static int decompress(int fd, off_t at, const char *name, uint64_t raw,
                      struct raft_buffer *out, char *errmsg)
{
    LZ4F_dctx *dctx = NULL;
    uint8_t *in = NULL, *dst;
    size_t have = 0, used, dst_len, hint = 1;
    uint64_t done = 0;
    struct stat st;
    ssize_t k;
    int rv = RAFT_CORRUPT;

    if (fstat(fd, &st) != 0 || lseek(fd, at, SEEK_SET) != at) {
        snprintf(errmsg, RAFT_ERRMSG_BUF_SIZE, "snapshot %s: %s", name,
                 strerror(errno));
        return RAFT_IOERR;
    }
    dst = replog__own_calloc(1, raw > 0 ? raw : 1);
    if (dst == NULL || (in = malloc(SNAP_PIECE)) == NULL ||
        LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION))) {
        snprintf(errmsg, RAFT_ERRMSG_BUF_SIZE, "snapshot %s: %s", name,
                 "out of memory");
        rv = RAFT_NOMEM;
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
        dst_len = raw - done;
        hint = LZ4F_decompress(dctx, dst + done, &dst_len, in, &used, NULL);
        if (LZ4F_isError(hint)) {
            snprintf(errmsg, RAFT_ERRMSG_BUF_SIZE,
                     "snapshot %s: its state is damaged (LZ4: %s)", name,
                     LZ4F_getErrorName(hint));
            goto out;
        }
        done += dst_len;
        memmove(in, in + used, have - used);
        have -= used;
    }
    if (done != raw || have != 0 || lseek(fd, 0, SEEK_CUR) != st.st_size) {
        snprintf(errmsg, RAFT_ERRMSG_BUF_SIZE,
                 "snapshot %s: %llu bytes, %llu expected", name,
                 (unsigned long long)done, (unsigned long long)raw);
        goto out;
    }
    out->base = dst;
    out->len = raw;
    dst = NULL;
    rv = 0;
out:
    raft_free(dst);
    free(in);
    LZ4F_freeDecompressionContext(dctx);
    return rv;
}

/* Reads the header of `fd`, the file `name`, into `s`; 0, RAFT_NOTFOUND
 * if the file is not of this format (an older tumblerd's state), or
 * RAFT_CORRUPT, RAFT_IOERR (a read failed: not taken for another format,
 * whose snapshot would be passed over) or RAFT_NOMEM with `errmsg` set. */
static int header_read(int fd, const char *name, struct raft_snapshot *s,
                       uint64_t *raw, uint32_t *len, char *errmsg)
{
    uint8_t head[SH_TERM] = {0}, *b;
    int rv = pread_full(fd, head, sizeof head, 0);

    if (rv > 0) {
        snprintf(errmsg, RAFT_ERRMSG_BUF_SIZE, "snapshot %s: read: %s", name,
                 strerror(rv));
        return RAFT_IOERR;
    }
    /* What a short read left in `head` is its start. */
    if (memcmp(head, snap_magic, sizeof snap_magic) != 0)
        return RAFT_NOTFOUND;
    *len = tb_load_be32(head + SH_LEN);
    if (rv != 0 || *len < SH_SERVERS || *len > SNAP_HDR_MAX) {
        snprintf(errmsg, RAFT_ERRMSG_BUF_SIZE,
                 "snapshot %s: its header is damaged (%s)", name,
                 rv != 0 ? "cut short" : "its length");
        return RAFT_CORRUPT;
    }
    if ((b = malloc(*len)) == NULL) {
        snprintf(errmsg, RAFT_ERRMSG_BUF_SIZE, "snapshot %s: out of memory",
                 name);
        return RAFT_NOMEM;
    }
    if ((rv = pread_full(fd, b, *len, 0)) > 0) {
        free(b);
        snprintf(errmsg, RAFT_ERRMSG_BUF_SIZE, "snapshot %s: read: %s", name,
                 strerror(rv));
        return RAFT_IOERR;
    }
    if (rv == 0 && tb_load_be32(b + SH_CRC) !=
                       replog__wal_crc(0, b + SH_LEN, *len - SH_LEN))
        rv = EBADMSG;
    if (rv == 0 && header_decode(b, *len, s, raw) != 0)
        rv = EINVAL;
    free(b);
    if (rv != 0) {
        snprintf(errmsg, RAFT_ERRMSG_BUF_SIZE,
                 "snapshot %s: its header is damaged (%s)", name,
                 rv < 0          ? "cut short"
                 : rv == EBADMSG ? "checksum mismatch"
                                 : "not well formed");
        return RAFT_CORRUPT;
    }
    return 0;
}

/* The snapshot in state-<index>, its state in one buffer; RAFT_NOTFOUND
 * if the file is not of this format, or another RAFT_* code with
 * `errmsg` naming the file. */
static int state_read(const char *dir, uint64_t index,
                      struct raft_snapshot **out, char *errmsg)
{
    char path[PATH_MAX], name[32];
    struct raft_snapshot *s = replog__own_calloc(1, sizeof *s);
    uint64_t raw;
    uint32_t len;
    int fd, rv;

    state_path(dir, index, name, path);
    if (s == NULL ||
        (s->bufs = replog__own_calloc(1, sizeof *s->bufs)) == NULL) {
        raft_free(s);
        snprintf(errmsg, RAFT_ERRMSG_BUF_SIZE, "snapshot %s: out of memory",
                 name);
        return RAFT_NOMEM;
    }
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
        snprintf(errmsg, RAFT_ERRMSG_BUF_SIZE, "snapshot %s: %s", name,
                 strerror(errno));
        raft_free(s->bufs);
        raft_free(s);
        return RAFT_IOERR;
    }
    rv = header_read(fd, name, s, &raw, &len, errmsg);
    if (rv != 0) {
        raft_free(s->bufs);
        raft_free(s);
        close(fd);
        return rv;
    }
    s->n_bufs = 1;
    if (s->index != index) {
        snprintf(errmsg, RAFT_ERRMSG_BUF_SIZE,
                 "snapshot %s: holds the snapshot of index %llu", name,
                 (unsigned long long)s->index);
        rv = RAFT_CORRUPT;
    } else
        rv = decompress(fd, len, name, raw, &s->bufs[0], errmsg);
    close(fd);
    if (rv != 0) {
        s->n_bufs = 0;
        replog__wal_snapshot_free(&s);
    }
    *out = s;
    return rv;
}

/* The log's snapshot: the newest state file of this format, if any.
 * Notes whether raft_uv's files of an older tumblerd are here.  0 or a
 * RAFT_* code, with the message in the log's errmsg. */
int replog__snapstore_load(struct wal *w, struct raft_snapshot **snap)
{
    uint64_t *idx = NULL, *more, index;
    size_t n = 0, cap = 0, i, j;
    struct dirent *de;
    DIR *d = opendir(w->dir);
    int rv = RAFT_NOTFOUND;

    *snap = NULL;
    if (d == NULL) {
        snprintf(w->io->errmsg, RAFT_ERRMSG_BUF_SIZE, "open %s: %s", w->dir,
                 strerror(errno));
        return RAFT_IOERR;
    }
    while ((de = readdir(d)) != NULL) {
        w->uv_files |= is_uv_file(de->d_name);
        if ((index = state_index(de->d_name)) == 0)
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 8;
            if ((more = realloc(idx, cap * sizeof *idx)) == NULL) {
                rv = RAFT_NOMEM;
                break;
            }
            idx = more;
        }
        idx[n++] = index;
    }
    closedir(d);
    /* Newest first; a state file of an older format is not a snapshot. */
    while (rv == RAFT_NOTFOUND && n > 0) {
        for (i = j = 0; i < n; i++)
            if (idx[i] > idx[j])
                j = i;
        index = idx[j];
        idx[j] = idx[--n];
        rv = state_read(w->dir, index, snap, w->io->errmsg);
        /* Said: were it this format's newest, its first bytes damaged, a
         * refusal for the entries it held would not name it. */
        if (rv == RAFT_NOTFOUND)
            replog__logf(w->l, REPLOG_LOG_INFO,
                         "snapshot state-%016llx passed over: not of this "
                         "format (an older release's state, or its first "
                         "bytes damaged)",
                         (unsigned long long)index);
    }
    free(idx);
    if (rv == RAFT_NOMEM)
        snprintf(w->io->errmsg, RAFT_ERRMSG_BUF_SIZE, "out of memory");
    if (rv == RAFT_NOTFOUND)
        rv = 0;
    if (rv == 0 && *snap != NULL)
        w->state_kept = (*snap)->index;
    return rv;
}

/* Reads the state an older tumblerd's reference `r` names: an LZ4 frame
 * alone; 0 or a RAFT_* code. */
static int read_uv_state(const char *dir, const struct snap_ref *r,
                         struct raft_buffer *out, char *errmsg)
{
    char path[PATH_MAX], name[32];
    struct stat st;
    int fd, rv;

    state_path(dir, r->index, name, path);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(errmsg, RAFT_ERRMSG_BUF_SIZE, "snapshot %s: %s", name,
                 strerror(errno));
        if (fd >= 0)
            close(fd);
        return RAFT_IOERR;
    }
    if ((uint64_t)st.st_size != r->file_bytes) {
        snprintf(errmsg, RAFT_ERRMSG_BUF_SIZE,
                 "snapshot %s: %lld bytes, %llu expected", name,
                 (long long)st.st_size, (unsigned long long)r->file_bytes);
        close(fd);
        return RAFT_CORRUPT;
    }
    rv = decompress(fd, 0, name, r->raw_bytes, out, errmsg);
    close(fd);
    return rv;
}

/* Puts the state in place of a reference to it, in a snapshot raft_uv
 * loaded; 0 or a RAFT_* code. */
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
    if ((rv = read_uv_state(dir, &r, &buf, errmsg)) != 0)
        return rv;
    raft_free(s->bufs[0].base);
    s->bufs[0] = buf;
    return 0;
}

int replog__snapstore_adopt(struct wal *w, const struct raft_snapshot *snap)
{
    int rv;

    if (!w->uv_files || snap == NULL)
        return 0;
    if (!w->uv_snap) {
        remove_uv_files(w->dir); /* a crash after the adoption left them */
        w->uv_files = 0;
        return 0;
    }
    w->put_reuse = 1; /* at the load: nothing is read */
    if ((rv = store(w, snap, w->io->errmsg)) != 0)
        return rv;
    replog__logf(w->l, REPLOG_LOG_INFO,
                 "%s: snapshot %llu moved from raft_uv's files into "
                 "state-%016llx",
                 w->dir, (unsigned long long)snap->index,
                 (unsigned long long)snap->index);
    w->uv_files = 0;
    w->uv_snap = 0;
    return 0;
}

struct snap_get {
    struct wal *w;
    struct raft_io_snapshot_get *req;
    raft_io_snapshot_get_cb cb;
    struct raft_snapshot *snap;
    uint64_t index;
    uv_work_t work;
    int status;
    char errmsg[RAFT_ERRMSG_BUF_SIZE];
};

static void get_work(uv_work_t *work)
{
    struct snap_get *g = work->data;

    g->status = state_read(g->w->dir, g->index, &g->snap, g->errmsg);
    if (g->status == RAFT_NOTFOUND) {
        snprintf(g->errmsg, sizeof g->errmsg,
                 "snapshot state-%016" PRIx64 ": not a snapshot", g->index);
        g->status = RAFT_CORRUPT;
    }
}

static void get_done(uv_work_t *work, int status)
{
    struct snap_get *g = work->data;
    struct wal *w = g->w;

    (void)status;
    w->snap_busy--;
    w->snap_gets--;
    if (g->status != 0 && g->index != w->state_kept)
        /* A snapshot stored since may have taken the file's place: no
         * damage, and the next try reads the new one. */
        replog__logf(w->l, REPLOG_LOG_INFO, "%s (snapshot %llu stored since)",
                     g->errmsg, (unsigned long long)w->state_kept);
    else if (g->status == RAFT_CORRUPT || g->status == RAFT_IOERR) {
        replog__logf(w->l, REPLOG_LOG_ERROR,
                     "%s; cannot be sent; a new snapshot is taken", g->errmsg);
        replog__snapshot_renew(w->l);
    } else if (g->status != 0)
        replog__logf(w->l, REPLOG_LOG_ERROR, "%s", g->errmsg);
    g->cb(g->req, g->status == 0 ? g->snap : NULL, g->status);
    free(g);
    replog__wal_maybe_closed(w);
}

/* The last snapshot stored, read on a worker thread. */
int replog__snapstore_get(struct wal *w, struct raft_io_snapshot_get *req,
                          raft_io_snapshot_get_cb cb)
{
    struct snap_get *g;

    if (w->state_kept == 0) {
        snprintf(w->io->errmsg, RAFT_ERRMSG_BUF_SIZE, "no snapshot");
        return RAFT_NOTFOUND;
    }
    if ((g = calloc(1, sizeof *g)) == NULL) {
        snprintf(w->io->errmsg, RAFT_ERRMSG_BUF_SIZE,
                 "snapshot: out of memory");
        return RAFT_NOMEM;
    }
    g->w = w;
    g->req = req;
    g->cb = cb;
    g->index = w->state_kept;
    g->work.data = g;
    if (uv_queue_work(w->loop, &g->work, get_work, get_done) != 0) {
        free(g);
        snprintf(w->io->errmsg, RAFT_ERRMSG_BUF_SIZE, "snapshot: no worker");
        return RAFT_IOERR;
    }
    w->snap_busy++;
    w->snap_gets++;
    return 0;
}
