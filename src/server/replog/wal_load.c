/* Reading the log back (wal.h has the format), and telling what a crash
 * can leave from damage.
 *
 * raft_uv loads the latest snapshot and, in an older tumblerd's directory,
 * the entry of its own segment (the bootstrap configuration, which a new
 * log holds as its first record: wal_bootstrap.c); the records of our
 * segments follow, and supersede raft_uv's entries from their first index
 * on.  Segments are read in sequence order, and a record joins the log
 * only if it names the CRC of the last record that did (the first record
 * of the oldest segment starts the chain) and belongs to this log and to
 * the segment it is in.  Where the chain stops is the log's end.
 *
 * A crash can leave only this beyond the end: the records of the writes
 * that were on their way, at most WAL_INFLIGHT of them, all in the last
 * segment written or the one after it (a segment takes writes only once
 * the one before it has none on its way).  Write numbers rise along the
 * log, so a whole record of this log found beyond the end with a number
 * above the end's by more than WAL_INFLIGHT, in a later segment, at the
 * start of the one after the end's, or a CLOSED record (every write
 * before it completed) is proof of damage: what was acknowledged would be
 * lost, and the log does not open.  Nor does it with a segment missing
 * (between two that exist, or up to the newest wal-meta names) or of
 * another size than it was made, or a record of another log in the chain
 * (beyond the end, one proves nothing: it is ignored).  An end that
 * is a CLOSED record is no exception: the next run's first writes follow
 * it, and a crash leaves of them what it leaves of any.  Records a crash
 * left are dropped, and logged.  Nothing is changed on disk before all of that,
 * and the checks after it (wal_io.c), passed: then the records a crash
 * left are zeroed, and spares that cannot serve, a half-made wal-tmp and
 * unused segments beyond the end are removed (replog__wal_tidy).  Older records
 * a spare (wal.h) or an earlier crash left have lower write numbers and are
 * ignored. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "server/replog/internal.h"
#include "server/replog/wal.h"

uint32_t replog__wal_crc(uint32_t crc, const void *p, size_t n)
{
    const uint8_t *b = p;

    while (n > 0) {
        uInt k = n > (1u << 30) ? 1u << 30 : (uInt)n;
        crc = (uint32_t)crc32(crc, b, k);
        b += k;
        n -= k;
    }
    return crc;
}

int replog__wal_decode(const uint8_t *p, size_t avail, struct wal_rec *r)
{
    if (avail < WAL_HDR || tb_load_be32(p + WAL_H_MAGIC) != WAL_MAGIC)
        return -1;
    r->crc = tb_load_be32(p + WAL_H_CRC);
    r->prev = tb_load_be32(p + WAL_H_PREV);
    r->kind = tb_load_be32(p + WAL_H_KIND);
    r->index = tb_load_be64(p + WAL_H_INDEX);
    r->write = tb_load_be64(p + WAL_H_WRITE);
    r->n = tb_load_be32(p + WAL_H_N);
    r->seg = tb_load_be32(p + WAL_H_SEG);
    r->len = tb_load_be64(p + WAL_H_LEN);
    r->log = tb_load_be64(p + WAL_H_LOG);
    r->seg_size = tb_load_be64(p + WAL_H_SEG_SIZE);
    if (r->len > avail - WAL_HDR ||
        replog__wal_crc(0, p + WAL_H_PREV, WAL_HDR - WAL_H_PREV + r->len) !=
            r->crc)
        return -1;
    r->payload = p + WAL_HDR;
    return 0;
}

/* Damage: the message every refusal gives, in errmsg. */
static int damage(struct wal *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int damage(struct wal *w, const char *fmt, ...)
{
    va_list ap;

    /* A repair looks on past the first; that one is reported. */
    if (!w->exam.damaged) {
        va_start(ap, fmt);
        vsnprintf(w->io->errmsg, sizeof w->io->errmsg, fmt, ap);
        va_end(ap);
    }
    w->exam.damaged = 1;
    return RAFT_CORRUPT;
}

/* The entries loaded so far: list[0] has index `first`. */
struct list {
    struct raft_entry *e;
    size_t n, cap;
    raft_index first;
    raft_index floor; /* the first index the snapshot does not hold */
};

/* Drops the entries from `index` on; an index before the first empties the
 * list, which then starts at `index`. */
static void list_truncate(struct list *l, raft_index index)
{
    if (index <= l->first) {
        while (l->n > 0)
            raft_free(l->e[--l->n].buf.base);
        l->first = index;
        return;
    }
    while (l->n > index - l->first)
        raft_free(l->e[--l->n].buf.base);
}

static int list_push(struct list *l, raft_term term, unsigned type,
                     const uint8_t *data, size_t len)
{
    struct raft_entry *e;

    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 1024;
        if ((e = replog__own_realloc(l->e, cap * sizeof *e)) == NULL)
            return RAFT_NOMEM;
        l->e = e;
        l->cap = cap;
    }
    e = &l->e[l->n];
    memset(e, 0, sizeof *e);
    e->term = term;
    e->type = (unsigned short)type;
    e->buf.len = len;
    if (len > 0) {
        if ((e->buf.base = replog__own_calloc(1, len)) == NULL)
            return RAFT_NOMEM;
        memcpy(e->buf.base, data, len);
    }
    l->n++;
    return 0;
}

static void list_free(struct list *l)
{
    list_truncate(l, 0);
    raft_free(l->e);
    l->e = NULL;
    l->cap = 0;
}

/* Applies one record; RAFT_CORRUPT if it does not fit the entries. */
static int apply(struct list *l, const struct wal_rec *r)
{
    const uint8_t *p = r->payload, *end = r->payload + r->len;
    raft_index next = l->first + l->n;
    uint32_t i;
    int rv;

    switch (r->kind) {
    case WAL_ENTRIES:
        /* A gap is damage, unless the snapshot holds what it skips (a
         * repair cut entries it holds, and the log went on after it). */
        if (r->index > next && l->n > 0 && r->index > l->floor)
            return RAFT_CORRUPT;
        if (l->n == 0 || r->index > next)
            list_truncate(l, 0);
        if (l->n == 0)
            l->first = r->index;
        else
            list_truncate(l, r->index);
        for (i = 0; i < r->n; i++) {
            uint64_t len;
            if (end - p < WAL_E_HDR)
                return RAFT_CORRUPT;
            len = tb_load_be32(p + WAL_E_SIZE);
            if ((uint64_t)(end - p - WAL_E_HDR) < len)
                return RAFT_CORRUPT;
            rv = list_push(l, tb_load_be64(p + WAL_E_TERM),
                           tb_load_be32(p + WAL_E_TYPE), p + WAL_E_HDR,
                           (size_t)len);
            if (rv != 0)
                return rv;
            p += WAL_E_HDR + ((len + 7) & ~(uint64_t)7);
            if (p > end)
                return RAFT_CORRUPT;
        }
        return 0;
    case WAL_TRUNCATE:
        if (r->index < next)
            list_truncate(l, r->index);
        return 0;
    case WAL_RESET:
        list_truncate(l, 0);
        l->first = r->index;
        return 0;
    case WAL_CLOSED:
        return 0;
    default:
        return RAFT_CORRUPT;
    }
}

/* raft_uv's entries, copied into the list. */
static int copy_uv_entries(struct list *l, raft_index start,
                           const struct raft_entry *e, size_t n)
{
    size_t i;
    int rv = 0;

    l->first = start;
    for (i = 0; i < n && rv == 0; i++)
        rv = list_push(l, e[i].term, e[i].type, e[i].buf.base, e[i].buf.len);
    return rv;
}

/* Entries as raft_uv's load gives them: some share a batch. */
void replog__wal_uv_entries_free(struct raft_entry *e, size_t n)
{
    void *batch = NULL;
    size_t i;

    for (i = 0; i < n; i++) {
        if (e[i].batch == NULL)
            raft_free(e[i].buf.base);
        else if (e[i].batch != batch)
            raft_free(batch = e[i].batch);
    }
    raft_free(e);
}

void replog__wal_entries_free(struct raft_entry *e, size_t n)
{
    struct list l = {e, n, n, 0, 0};

    list_free(&l);
}

static int by_seq(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

/* Notes `name` as a spare if it is one of the full size and there is room
 * for it (the others are removed once the log is found whole), and the
 * highest number a spare's name holds in *top.  0 if it is not a spare's
 * name. */
static int take_spare(struct wal *w, DIR *d, const char *name, uint64_t *top)
{
    unsigned long long seq;
    struct stat st;
    int end = 0;

    if (sscanf(name, "wal-spare-%16llx%n", &seq, &end) != 1 || end != 26 ||
        name[end] != '\0')
        return 0;
    if (seq > *top)
        *top = seq;
    if (w->n_spare_segs < WAL_SPARES && seq > 0 &&
        fstatat(dirfd(d), name, &st, 0) == 0 && st.st_size == w->seg_bytes)
        w->spare_segs[w->n_spare_segs++] = seq;
    else
        w->exam.odd_spares = 1;
    return 1;
}

/* The segments' numbers, ascending, and the highest a spare's name holds
 * (0: no spare) in *spare_top. */
static int list_segments(struct wal *w, uint64_t **seqs, size_t *n,
                         uint64_t *spare_top)
{
    DIR *d = opendir(w->dir);
    struct dirent *de;
    size_t cap = 0;
    uint64_t *s = NULL, *t;
    unsigned long long seq;
    int end;

    *n = 0;
    *spare_top = 0;
    if (d == NULL)
        return RAFT_IOERR;
    while ((de = readdir(d)) != NULL) {
        if (take_spare(w, d, de->d_name, spare_top))
            continue;
        if (strlen(de->d_name) != 20 ||
            sscanf(de->d_name, "wal-%16llx%n", &seq, &end) != 1 || end != 20)
            continue;
        if (w->prep_seg != NULL && seq == w->prep_seg->seq)
            continue; /* being prepared since the log was opened */
        if (seq < w->meta.oldest) {
            w->exam.leftovers = 1; /* a removal's, crashed */
            continue;
        }
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            if ((t = realloc(s, cap * sizeof *t)) == NULL) {
                closedir(d);
                free(s);
                return RAFT_NOMEM;
            }
            s = t;
        }
        s[(*n)++] = seq;
    }
    closedir(d);
    if (*n > 0)
        qsort(s, *n, sizeof *s, by_seq);
    *seqs = s;
    return 0;
}

static int read_file(const char *path, uint8_t **buf, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    size_t got = 0;
    ssize_t k;

    *buf = NULL;
    if (fd < 0 || fstat(fd, &st) != 0)
        goto fail;
    *len = (size_t)st.st_size;
    if ((*buf = malloc(*len ? *len : 1)) == NULL)
        goto fail;
    while (got < *len) {
        k = pread(fd, *buf + got, *len - got, (off_t)got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            goto fail;
        got += (size_t)k;
    }
    /* The log writes with O_DIRECT: what the read left in the page cache
     * would only cost memory. */
    (void)posix_fadvise(fd, 0, (off_t)*len, POSIX_FADV_DONTNEED);
    close(fd);
    return 0;
fail:
    if (fd >= 0)
        close(fd);
    free(*buf);
    *buf = NULL;
    return RAFT_IOERR;
}

/* One segment file, read whole. */
struct seg_file {
    uint64_t seq;
    uint8_t *buf;
    size_t len;
};

static int seg_read(struct wal *w, uint64_t seq, struct seg_file *f)
{
    char path[PATH_MAX];

    f->seq = seq;
    replog__wal_path(w, seq, path, sizeof path);
    if (read_file(path, &f->buf, &f->len) != 0) {
        snprintf(w->io->errmsg, sizeof w->io->errmsg,
                 "read wal-%016" PRIx64 ": %s", seq, strerror(errno));
        return RAFT_IOERR;
    }
    if (f->len >= 4 && (tb_load_be32(f->buf) == WAL_MAGIC_1 ||
                        tb_load_be32(f->buf) == WAL_MAGIC_2)) {
        free(f->buf);
        f->buf = NULL;
        return damage(w,
                      "wal-%016" PRIx64 " is in the log format of an older "
                      "tumblerd, which this one does not read",
                      seq);
    }
    return 0;
}

/* A record of this log at `off` in f, whatever its segment; 1 if one of
 * another log is there (damage, reported). */
static int record_at(struct wal *w, const struct seg_file *f, size_t off,
                     struct wal_rec *r, int *found)
{
    *found = replog__wal_decode(f->buf + off, f->len - off, r) == 0;
    if (*found && r->log != w->meta.log_id) {
        damage(w,
               "wal-%016" PRIx64 ", offset %zu: a record of another log "
               "(id %016" PRIx64 ", this log's is %016" PRIx64 ")",
               f->seq, off, r->log, w->meta.log_id);
        return 1;
    }
    return 0;
}

/* A segment is named in wal-meta before any record goes into it. */
static int newer_than_newest(struct wal *w, uint64_t seq)
{
    return damage(w,
                  "wal-%016" PRIx64
                  " holds records of the log, but " WAL_META_NAME
                  " says the newest segment made is "
                  "wal-%016" PRIx64 " (a segment renamed or copied in?)",
                  seq, w->meta.newest);
}

/* Walks the log's chain through f from offset 0, applying each record
 * that joins it.  Damage ends the walk: a repair cuts the log there. */
static int walk(struct wal *w, const struct seg_file *f, struct list *l,
                struct wal_seg *s)
{
    struct wal_exam *x = &w->exam;
    struct wal_rec r;
    size_t off = 0;
    int found, rv = 0;

    while (off < f->len && rv == 0) {
        if (record_at(w, f, off, &r, &found) != 0) {
            rv = RAFT_CORRUPT;
            break;
        }
        if (!found || r.seg != (uint32_t)f->seq ||
            (x->end_seq != 0 && r.prev != w->last_crc))
            break;
        if (f->seq > w->meta.newest) {
            rv = newer_than_newest(w, f->seq);
            break;
        }
        if ((rv = apply(l, &r)) == RAFT_CORRUPT)
            damage(w,
                   "wal-%016" PRIx64 ", offset %zu: the record (index "
                   "%" PRIu64 ") does not follow the entries before it",
                   f->seq, off, r.index);
        if (rv != 0)
            break;
        w->last_crc = r.crc;
        x->end_seq = f->seq;
        x->end_write = r.write;
        x->end_closed = r.kind == WAL_CLOSED;
        x->end_made = r.seg_size;
        if (r.kind == WAL_ENTRIES && r.n > 0)
            x->last_wal_index = s->last_index = r.index + r.n - 1;
        s->made = r.seg_size;
        off += wal_aligned(WAL_HDR + r.len);
        x->end_off = (off_t)off;
    }
    s->end = (off_t)off;
    return rv == RAFT_CORRUPT && w->repair ? 0 : rv;
}

/* A whole record at `off` of segment `seq`, beyond where the log broke
 * after write `last`, which a crash cannot leave. */
static int beyond_break(struct wal *w, uint64_t seq, size_t off,
                        const struct wal_rec *r, uint64_t last)
{
    const struct wal_exam *x = &w->exam;
    char at[64];

    if (x->end_seq != 0)
        snprintf(at, sizeof at, "wal-%016" PRIx64 " offset %lld", x->end_seq,
                 (long long)x->end_off);
    else
        snprintf(at, sizeof at, "its first record");
    return damage(w,
                  "wal-%016" PRIx64 " offset %zu: a whole record (write "
                  "%" PRIu64 ") beyond the log's break at %s (after write "
                  "%" PRIu64 "), %s: a record there is damaged or missing",
                  seq, off, r->write, at, last,
                  x->end_closed           ? "which is a clean close"
                  : r->kind == WAL_CLOSED ? "and it is a clean close"
                                          : "which no crash leaves");
}

/* Looks at what lies in f from `from` on, beyond the log's end (or, for a
 * segment before the last, beyond the part the chain went through, whose
 * write numbers end at `upto`): see the comment at the top. */
static int beyond(struct wal *w, const struct seg_file *f, size_t from,
                  int before_end, int next_to_end, uint64_t upto,
                  struct wal_seg *s)
{
    struct wal_exam *x = &w->exam;
    const uint64_t last = before_end ? upto : x->end_write;
    struct wal_rec r;
    size_t off;

    /* Every block is looked at: where what was written before the end
     * (a spare's old records, an older crash's) begins is not known.  So
     * a block inside such a record's payload, a client's data, is looked
     * at too, and may look like a record: one of another log is no
     * evidence of anything here, and must not stop the server (the log's
     * id, which its own records carry, is no client's to know). */
    for (off = from; off < f->len; off += WAL_BLOCK) {
        if (replog__wal_decode(f->buf + off, f->len - off, &r) != 0 ||
            r.log != w->meta.log_id)
            continue;
        /* A spare holds records of a segment removed before the oldest. */
        if (r.seg != (uint32_t)f->seq && r.seg >= (uint32_t)w->meta.oldest &&
            damage(w,
                   "wal-%016" PRIx64 " offset %zu: a record of wal-%016" PRIx64
                   ", a segment of the log (copied?)",
                   f->seq, off, (uint64_t)r.seg) != 0 &&
            !w->repair)
            return RAFT_CORRUPT;
        if (r.seg != (uint32_t)f->seq)
            continue;
        s->made = r.seg_size;
        if (f->seq > w->meta.newest && newer_than_newest(w, f->seq) != 0 &&
            !w->repair)
            return RAFT_CORRUPT;
        if (r.kind == WAL_ENTRIES && r.n > 0 &&
            r.index + r.n - 1 > x->max_index)
            x->max_index = r.index + r.n - 1;
        if (r.write <= last)
            continue; /* older than the log's end: overwritten since */
        /* The first write into the segment after the end's went only
         * once every write into that one was on the disk.  An end that is
         * a clean close is no exception (the top of this file). */
        if ((before_end || !next_to_end || r.write > last + WAL_INFLIGHT ||
             r.kind == WAL_CLOSED ||
             (off == 0 && x->end_seq != 0 && f->seq == x->end_seq + 1)) &&
            beyond_break(w, f->seq, off, &r, last) != 0 && !w->repair)
            return RAFT_CORRUPT;
        x->beyond++;
        if ((off_t)(off + wal_aligned(WAL_HDR + r.len)) > s->stale_to)
            s->stale_to = (off_t)(off + wal_aligned(WAL_HDR + r.len));
        if (r.kind == WAL_ENTRIES && r.n > 0) {
            if (x->beyond_entries == 0 || r.index < x->beyond_first)
                x->beyond_first = r.index;
            if (r.index + r.n - 1 > x->beyond_last)
                x->beyond_last = r.index + r.n - 1;
            x->beyond_entries += r.n;
        }
        off += wal_aligned(WAL_HDR + r.len) - WAL_BLOCK;
    }
    return 0;
}

/* A segment is as long as it was made: its records say how long.  One
 * without any was made seg_bytes long, or smaller as a new log's first,
 * or longer for a write larger than that which never became whole
 * (wal.c, seg_grow). */
static int check_size(struct wal *w, const struct seg_file *f,
                      const struct wal_seg *s)
{
    off_t first = w->seg_bytes < REPLOG_FIRST_SEGMENT_BYTES
                      ? w->seg_bytes
                      : REPLOG_FIRST_SEGMENT_BYTES;

    if (s->made != 0 && (uint64_t)f->len != s->made)
        return damage(w,
                      "wal-%016" PRIx64 " is %zu bytes, but its records say "
                      "it was made %" PRIu64 " bytes long: it was cut short "
                      "or added to",
                      f->seq, f->len, s->made);
    if (s->made == 0 && (off_t)f->len != w->seg_bytes &&
        (off_t)f->len != first && (off_t)f->len < w->seg_bytes)
        return damage(w,
                      "wal-%016" PRIx64 " is %zu bytes, but segments are made "
                      "%lld (or, first, %lld) bytes long: it was cut short",
                      f->seq, f->len, (long long)w->seg_bytes,
                      (long long)first);
    return 0;
}

/* The segment files must follow each other with no gap, up to the newest
 * one made. */
static int check_present(struct wal *w, const uint64_t *seqs, size_t n)
{
    size_t i;

    if (n > 0 && w->meta.oldest > 0 && seqs[0] != w->meta.oldest)
        return damage(w,
                      "wal-%016" PRIx64 " is missing: " WAL_META_NAME
                      " says it is the log's oldest segment",
                      w->meta.oldest);
    for (i = 1; i < n; i++)
        if (seqs[i] != seqs[i - 1] + 1)
            return damage(w,
                          "wal-%016" PRIx64 " is missing (wal-%016" PRIx64
                          " and wal-%016" PRIx64 " exist)",
                          seqs[i - 1] + 1, seqs[i - 1], seqs[i]);
    /* A new log's first segment may be named while this runs: it is not
     * in the list, and the preparation names it in wal-meta. */
    if (w->prep_seg != NULL)
        return 0;
    /* The newest is never removed: only segments before the one written
     * to are, once snapshots cover them. */
    for (i = 0; i < n && seqs[i] != w->meta.newest; i++)
        ;
    if (w->meta.newest > 0 && i == n)
        return damage(w,
                      "wal-%016" PRIx64 " is missing: " WAL_META_NAME
                      " says the log made segments up to it",
                      w->meta.newest);
    return 0;
}

static void seg_drop(struct wal *w, struct wal_seg *s)
{
    char path[PATH_MAX];

    replog__wal_path(w, s->seq, path, sizeof path);
    unlink(path);
    free(s);
}

static int open_segment(struct wal *w, struct wal_seg *s)
{
    char path[PATH_MAX];

    replog__wal_path(w, s->seq, path, sizeof path);
    if ((s->fd = replog__wal_open(path)) < 0) {
        snprintf(w->io->errmsg, sizeof w->io->errmsg, "open wal-%016llx: %s",
                 (unsigned long long)s->seq, strerror(errno));
        return RAFT_IOERR;
    }
    return 0;
}

/* Zeros the records a crash left beyond the end, in the end's segment
 * and the one kept unused, before anything is written.  The next writes
 * are numbered on from the end's, so a record left there would one day
 * lie beyond an end with a higher number than it: after a clean close
 * right after this start, or in a segment the log went on from, which
 * reads as damage (the top of this file). */
static int wipe_beyond(struct wal *w)
{
    struct wal_seg *s;
    unsigned i;
    int rv;

    for (i = 0; i <= w->n_segs; i++) {
        s = i < w->n_segs ? w->segs[i] : w->ready;
        if (s == NULL || s->stale_to <= s->end)
            continue;
        if ((rv = replog__wal_zero(w, s->seq, s->end, s->stale_to, 0,
                                   "what a crash left")) != 0)
            return rv;
        s->stale_to = 0;
    }
    return 0;
}

/* Once the log is found whole (wal_io.c, after the checks that follow
 * this file's): what a crash left is zeroed, and what is of no use goes.
 * Segments beyond the one kept unused have no record of the log; wal-meta
 * is made to name the newest kept, which may be one a crash left unnamed
 * (made, not yet in wal-meta: it must be before records go into it) or
 * one before those dropped. */
int replog__wal_tidy(struct wal *w)
{
    char path[PATH_MAX];
    DIR *d;
    struct dirent *de;
    unsigned long long seq;
    uint64_t newest;
    unsigned i;
    int end, kept, named = 1, rv;

    if ((rv = wipe_beyond(w)) != 0) {
        w->loaded = 0; /* no clean close over what could not be zeroed */
        return rv;
    }
    /* Entries the load dropped for the snapshot are voided on disk too,
     * before any entry comes after them: read back behind them, at indexes
     * they held, the next entries would be dropped with them. */
    if (w->exam.voided &&
        (rv = replog__wal_mark(w, WAL_RESET, w->next_index)) != 0)
        return rv;
    w->exam.voided = 0;
    newest = w->ready != NULL ? w->ready->seq
             : w->n_segs > 0  ? w->segs[w->n_segs - 1]->seq
                              : w->meta.newest;
    /* wal-meta first: it never names a segment that is gone. */
    if (newest != w->meta.newest &&
        replog__wal_meta_set(w, WAL_META_NEWEST, newest) != 0) {
        named = 0; /* the unused stay, as wal-meta names them */
        if (w->ready != NULL && w->ready->seq > w->meta.newest) {
            /* Made again under its number, and named, when needed. */
            close(w->ready->fd);
            w->next_seq = w->ready->seq;
            free(w->ready);
            w->ready = NULL;
        }
    }
    for (i = 0; i < w->n_unused; i++) {
        if (named)
            seg_drop(w, w->unused[i]);
        else
            free(w->unused[i]);
    }
    free(w->unused);
    w->unused = NULL;
    w->n_unused = 0;
    /* A new log's first segment may be being made in it. */
    snprintf(path, sizeof path, "%s/wal-tmp", w->dir);
    if (w->prep_seg == NULL)
        unlink(path);
    if ((!w->exam.odd_spares && !w->exam.leftovers) ||
        (d = opendir(w->dir)) == NULL)
        return 0;
    /* Spares that cannot serve, and segments a removal left. */
    while ((de = readdir(d)) != NULL) {
        end = 0;
        if (sscanf(de->d_name, "wal-%16llx%n", &seq, &end) == 1 && end == 20 &&
            de->d_name[end] == '\0' && seq < w->meta.oldest)
            (void)unlinkat(dirfd(d), de->d_name, 0);
        if (sscanf(de->d_name, "wal-spare-%16llx%n", &seq, &end) != 1 ||
            de->d_name[end] != '\0')
            continue;
        for (i = 0, kept = 0; i < w->n_spare_segs; i++)
            kept |= w->spare_segs[i] == seq;
        if (!kept)
            (void)unlinkat(dirfd(d), de->d_name, 0);
    }
    closedir(d);
    return 0;
}

/* Reads every segment into the list, then checks what lies beyond the
 * log's end; only then (not on damage) takes its segments into use. */
static int load_segments(struct wal *w, struct list *l)
{
    struct wal_exam *x = &w->exam;
    struct wal_seg **segs = NULL;
    struct seg_file f = {0};
    uint64_t *seqs = NULL, *upto = NULL, spare_top;
    size_t n, i, e = 0;
    int ended = 0, rv;

    memset(x, 0, sizeof *x);
    w->n_spare_segs = 0;
    w->last_crc = 0;
    if ((rv = list_segments(w, &seqs, &n, &spare_top)) != 0)
        return rv;
    if ((rv = check_present(w, seqs, n)) != 0 && !w->repair)
        goto out;
    segs = calloc(n ? n : 1, sizeof *segs);
    upto = calloc(n ? n : 1, sizeof *upto);
    if (segs == NULL || upto == NULL) {
        rv = RAFT_NOMEM;
        goto out;
    }
    /* The chain, up to its end. */
    for (i = 0; i < n; i++) {
        if ((segs[i] = calloc(1, sizeof *segs[i])) == NULL) {
            rv = RAFT_NOMEM;
            goto out;
        }
        segs[i]->seq = seqs[i];
        segs[i]->fd = -1;
        if (ended)
            continue;
        if ((rv = seg_read(w, seqs[i], &f)) != 0)
            goto out;
        segs[i]->size = (off_t)f.len;
        rv = walk(w, &f, l, segs[i]);
        free(f.buf);
        if (rv != 0)
            goto out;
        upto[i] = x->end_write;
        if (segs[i]->end > 0)
            e = i;
        /* A segment the chain did not reach ends it. */
        ended = x->end_seq != seqs[i];
    }
    /* What lies beyond: segment e holds the log's end. */
    for (i = 0; i < n; i++) {
        if ((rv = seg_read(w, seqs[i], &f)) != 0)
            goto out;
        segs[i]->size = (off_t)f.len;
        rv = beyond(w, &f, (size_t)segs[i]->end, x->end_seq != 0 && i < e,
                    i <= e + 1, upto[i], segs[i]);
        if (rv == 0 && check_size(w, &f, segs[i]) != 0 && !w->repair)
            rv = RAFT_CORRUPT;
        if (x->end_seq == 0 || seqs[i] > x->end_seq)
            x->bytes_beyond += f.len;
        else if (seqs[i] == x->end_seq && f.len > (size_t)x->end_off)
            x->bytes_beyond += f.len - (size_t)x->end_off;
        free(f.buf);
        if (rv != 0)
            goto out;
    }
    /* A repair cuts the log at its end (wal_repair.c) and reads it again. */
    if (x->damaged) {
        rv = RAFT_CORRUPT;
        goto out;
    }
    w->write_seq = x->end_write + 1;
    if (x->beyond > 0)
        replog__logf(w->l, REPLOG_LOG_WARN,
                     "wal-%016" PRIx64 ": the log ends at offset %lld (write "
                     "%" PRIu64 "); %" PRIu64 " record(s) after it, of %" PRIu64
                     " entries (%" PRIu64 "..%" PRIu64 "), are what a crash "
                     "left of writes never acknowledged: dropped",
                     x->end_seq, (long long)x->end_off, x->end_write, x->beyond,
                     x->beyond_entries, x->beyond_first, x->beyond_last);
    /* Into use: every segment up to the end, and one whole unused one. */
    for (i = 0; i < n && (x->end_seq != 0 && i <= e); i++) {
        if ((rv = replog__wal_add_seg(w, segs[i])) != 0)
            goto out;
        segs[i] = NULL;
    }
    if (i < n) {
        w->ready = segs[i];
        segs[i++] = NULL;
    }
    /* The next segment made follows the last one kept: the rest go, and a
     * number skipped would read as a segment missing.  With none kept
     * (a new log, or a repair that kept none), it goes above every spare:
     * one made from a spare keeps the spare's records, which must name a
     * segment before the oldest, not one of the log (a copy). */
    w->next_seq = i > 0 ? seqs[i - 1] + 1 : spare_top + 1;
    /* The rest go once every check has passed (replog__wal_tidy). */
    for (; i < n; i++) {
        segs[w->n_unused++] = segs[i];
        segs[i] = NULL;
    }
    w->unused = segs;
    segs = NULL;
    if (w->n_segs > 0 &&
        w->segs[w->n_segs - 1]->end < w->segs[w->n_segs - 1]->size)
        rv = open_segment(w, w->segs[w->n_segs - 1]);
    /* One that cannot be opened goes with them, and is made again under
     * its number. */
    if (rv == 0 && w->ready != NULL && open_segment(w, w->ready) != 0) {
        w->next_seq = w->ready->seq;
        w->unused[w->n_unused++] = w->ready;
        w->ready = NULL;
    }
out:
    if (segs != NULL)
        for (i = 0; i < n; i++)
            free(segs[i]);
    free(segs);
    free(upto);
    free(seqs);
    return rv;
}

/* The servers of the last configuration in `l`, else in the snapshot's;
 * 0 if neither has one.  raft's encoding of one: a format byte, then the
 * count, 8 bytes little-endian. */
static unsigned members_of(const struct list *l,
                           const struct raft_snapshot *snap)
{
    size_t i;

    for (i = l->n; i-- > 0;)
        if (l->e[i].type == RAFT_CHANGE && l->e[i].buf.len >= 9)
            return (unsigned)tb_load_le64((const uint8_t *)l->e[i].buf.base +
                                          1);
    return snap != NULL ? snap->configuration.n : 0;
}

int replog__wal_load(struct wal *w, struct raft_snapshot *snap,
                     raft_index *start, struct raft_entry **entries, size_t *n)
{
    struct list l = {0};
    raft_index floor = snap != NULL ? snap->index + 1 : 1;
    int rv;

    l.floor = floor;
    w->exam.voided = 0; /* of this load alone: a repair's loads again */
    rv = copy_uv_entries(&l, *start, *entries, *n);
    if (rv == 0)
        rv = load_segments(w, &l);
    /* Entries all behind the snapshot are of no use (a crash came between
     * an installed snapshot and the record that voids the log). */
    if (rv == 0 && l.n > 0 && l.first + l.n <= floor) {
        list_truncate(&l, 0);
        w->exam.voided = 1;
    }
    /* So is a log holding the snapshot's last index with another term: the
     * snapshot was installed over it (raft installs one over such a log;
     * mend.c, 6), and that entry and the ones after it are a replaced
     * leader's, which can never commit. */
    if (rv == 0 && snap != NULL && l.n > 0 && l.first < floor &&
        l.first + l.n >= floor && l.e[floor - 1 - l.first].term != snap->term) {
        list_truncate(&l, 0);
        w->exam.voided = 1;
    }
    /* An empty log starts after the snapshot; unless a record started it
     * further on (an installed snapshot's reset), whose snapshot is gone:
     * the entries up to it are missing as surely as if it held some. */
    if (rv == 0 && l.n == 0 && l.first <= floor)
        l.first = floor;
    if (rv == 0 && l.first > floor) {
        rv = damage(w,
                    "the log starts at entry %llu, but the newest snapshot "
                    "holds entries up to %llu only: entries %llu..%llu are "
                    "missing",
                    (unsigned long long)l.first, (unsigned long long)floor - 1,
                    (unsigned long long)floor, (unsigned long long)l.first - 1);
        w->exam.cut_all = 1;
    }
    w->exam.members = members_of(&l, snap);
    w->exam.snapshot = snap != NULL;
    /* On failure raft_uv's entries stay the caller's: a repair reads the
     * log again. */
    if (rv != 0) {
        list_free(&l);
        return rv;
    }
    replog__wal_uv_entries_free(*entries, *n);
    w->exam.last_index = l.first + l.n - 1;
    w->next_index = l.first + l.n;
    *start = l.first;
    *n = l.n;
    *entries = l.n > 0 ? l.e : NULL;
    if (l.n == 0)
        raft_free(l.e);
    return 0;
}
