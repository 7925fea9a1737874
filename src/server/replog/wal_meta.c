/* wal-meta: what the log's segments cannot say about themselves, and
 * raft's term and vote.  A segment deleted whole leaves no trace in the
 * others, so the oldest and newest kept are written down: the newest
 * before any record goes into it, the oldest before the segments before it
 * are removed.  Every record names the log it belongs to, whose id is kept
 * here.
 *
 *   OFFSET  SIZE  FIELD (big-endian)
 *        0     8  magic "TBWALMT2"
 *        8     4  crc: CRC-32 of bytes 12 .. 80
 *       12     4  flags: bit 0, the log has caught up with no leader
 *                 yet (fresh.c); the other bits zero
 *       16     8  log id
 *       24     8  newest segment made (0: none yet)
 *       32     8  epoch: the newest zxid epoch a repair began (zxids then
 *                 went on from epoch << 32), 0: none
 *       40     8  oldest segment kept (0: none yet)
 *       48     8  repair pending: from a repair's cut until zxids have moved
 *                 to a new epoch, the highest log index a client may have
 *                 seen a zxid of before the cut; 0: none pending
 *       56     8  the id of the server whose log it is; 0: a log
 *                 tumblerd --recover-ensemble made, which the first
 *                 server of its members to start takes as its own
 *       64     8  term: raft's current term (0: none yet, a log not
 *                 bootstrapped)
 *       72     8  vote: the server voted for in that term, 0: none
 *
 * It is replaced whole (a temporary file synced, renamed, the directory
 * synced), so a crash leaves the old one or the new one.
 *
 * "TBWALMT1", 64 bytes, is the format before the term and vote were kept
 * here: raft_uv kept them in metadata1/metadata2, which wal_term.c reads
 * once and replaces by the first "TBWALMT2". */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "server/replog/internal.h"
#include "server/replog/wal.h"

/* The fields' offsets, as drawn above. */
enum {
    META_MAGIC = 0,
    META_CRC = 8,
    META_CRC_FROM = 12,
    META_FLAGS = 12,
    META_LOG_ID = 16,
    META_NEWEST = 24,
    META_EPOCH = 32,
    META_OLDEST = 40,
    META_REPAIR_BOUND = 48,
    META_SERVER_ID = 56,
    META_TERM = 64,
    META_VOTE = 72,
    META_SIZE = 80,
    META_SIZE_1 = 64, /* "TBWALMT1": no term, no vote */
};
static const char meta_magic[8] = {'T', 'B', 'W', 'A', 'L', 'M', 'T', '2'};
static const char meta_magic_1[8] = {'T', 'B', 'W', 'A', 'L', 'M', 'T', '1'};

/* A whole wal-meta of either format: its size, or 0. */
static size_t meta_size(const uint8_t *b, ssize_t n)
{
    size_t size = n == META_SIZE && memcmp(b, meta_magic, 8) == 0 ? META_SIZE
                  : n == META_SIZE_1 && memcmp(b, meta_magic_1, 8) == 0
                      ? META_SIZE_1
                      : 0;

    if (size != 0 &&
        tb_load_be32(b + META_CRC) !=
            replog__wal_crc(0, b + META_CRC_FROM, size - META_CRC_FROM))
        return 0;
    return size;
}

int replog__wal_meta_read(const char *dir, struct wal_meta *m, int *format,
                          char *errmsg, size_t errlen)
{
    char path[PATH_MAX];
    uint8_t b[META_SIZE + 1];
    size_t size;
    ssize_t n;
    int fd;

    snprintf(path, sizeof path, "%s/" WAL_META_NAME, dir);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
        snprintf(errmsg, errlen, "%s: %s", path, strerror(errno));
        return errno == ENOENT ? RAFT_NOTFOUND : RAFT_IOERR;
    }
    n = pread(fd, b, sizeof b, 0);
    if (n < 0) { /* the disk failed: nothing is known of the file */
        snprintf(errmsg, errlen, "%s: %s", path, strerror(errno));
        close(fd);
        return RAFT_IOERR;
    }
    close(fd);
    if ((size = meta_size(b, n)) == 0) {
        snprintf(errmsg, errlen,
                 "%s is damaged: expected %d bytes starting \"TBWALMT2\" "
                 "(or %d starting \"TBWALMT1\") with a matching checksum",
                 path, META_SIZE, META_SIZE_1);
        return RAFT_CORRUPT;
    }
    memset(m, 0, sizeof *m);
    m->log_id = tb_load_be64(b + META_LOG_ID);
    m->newest = tb_load_be64(b + META_NEWEST);
    m->epoch = tb_load_be64(b + META_EPOCH);
    m->oldest = tb_load_be64(b + META_OLDEST);
    m->repair_bound = tb_load_be64(b + META_REPAIR_BOUND);
    m->server_id = tb_load_be64(b + META_SERVER_ID);
    m->fresh = tb_load_be32(b + META_FLAGS) & 1;
    *format = size == META_SIZE_1 ? 1 : 2;
    if (size == META_SIZE_1)
        return 0;
    m->term = tb_load_be64(b + META_TERM);
    m->vote = tb_load_be64(b + META_VOTE);
    return 0;
}

int replog__wal_meta_write(const char *dir, const struct wal_meta *m)
{
    char tmp[PATH_MAX], path[PATH_MAX];
    uint8_t b[META_SIZE] = {0};
    int fd, err;

    memcpy(b + META_MAGIC, meta_magic, sizeof meta_magic);
    tb_store_be32(b + META_FLAGS, m->fresh ? 1 : 0);
    tb_store_be64(b + META_LOG_ID, m->log_id);
    tb_store_be64(b + META_NEWEST, m->newest);
    tb_store_be64(b + META_EPOCH, m->epoch);
    tb_store_be64(b + META_OLDEST, m->oldest);
    tb_store_be64(b + META_REPAIR_BOUND, m->repair_bound);
    tb_store_be64(b + META_SERVER_ID, m->server_id);
    tb_store_be64(b + META_TERM, m->term);
    tb_store_be64(b + META_VOTE, m->vote);
    tb_store_be32(b + META_CRC, replog__wal_crc(0, b + META_CRC_FROM,
                                                META_SIZE - META_CRC_FROM));
    snprintf(tmp, sizeof tmp, "%s/" WAL_META_NAME ".tmp", dir);
    snprintf(path, sizeof path, "%s/" WAL_META_NAME, dir);
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return errno;
    err = write(fd, b, sizeof b) == (ssize_t)sizeof b ? 0 : errno ? errno : EIO;
    if (err == 0 && fsync(fd) != 0)
        err = errno;
    close(fd);
    if (err == 0 && rename(tmp, path) != 0)
        err = errno;
    if (err == 0)
        err = replog__wal_sync_dir(dir);
    if (err != 0)
        unlink(tmp);
    return err;
}

/* The loop and the threads that make and remove segments write it: one
 * at a time. */
static pthread_mutex_t saving = PTHREAD_MUTEX_INITIALIZER;

static uint64_t *field_of(struct wal_meta *m, enum wal_meta_field f)
{
    switch (f) {
    case WAL_META_OLDEST:
        return &m->oldest;
    case WAL_META_NEWEST:
        return &m->newest;
    case WAL_META_EPOCH:
        return &m->epoch;
    case WAL_META_SERVER_ID:
        return &m->server_id;
    case WAL_META_FRESH:
        return &m->fresh;
    default:
        return &m->repair_bound;
    }
}

int replog__wal_meta_set(struct wal *w, enum wal_meta_field f, uint64_t v)
{
    struct wal_meta m;
    int err = 0;

    pthread_mutex_lock(&saving);
    m = w->meta;
    *field_of(&m, f) = v;
    /* The first segment made is the oldest. */
    if (m.oldest == 0 || m.newest == 0)
        m.oldest = m.newest;
    if (memcmp(&m, &w->meta, sizeof m) != 0 &&
        (err = replog__wal_meta_write(w->dir, &m)) == 0) {
        /* Only what changed is stored: the loop reads the fields no
         * thread sets without the lock. */
        *field_of(&w->meta, f) = v;
        if (w->meta.oldest != m.oldest)
            w->meta.oldest = m.oldest;
    }
    pthread_mutex_unlock(&saving);
    return err;
}

int replog__wal_meta_set_term(struct wal *w, uint64_t term, uint64_t vote)
{
    struct wal_meta m;
    int err;

    pthread_mutex_lock(&saving);
    m = w->meta;
    m.term = term;
    m.vote = vote;
    /* Always written: a log adopting raft_uv's term and vote writes the
     * same values, in the new format. */
    if ((err = replog__wal_meta_write(w->dir, &m)) == 0) {
        w->meta.term = term;
        w->meta.vote = vote;
    }
    pthread_mutex_unlock(&saving);
    return err;
}
