/* Reading the log back (wal.h has the format).  raft_uv loads the term, the
 * vote, the latest snapshot and the entries of its own segments (the
 * bootstrap configuration, or a log raft_uv wrote); the records of our
 * segments follow, and supersede raft_uv's entries from their first index
 * on.  Segments are read in sequence order, and a record joins the log only
 * if it names the CRC of the last record that did; the first record of the
 * oldest segment starts the chain.  Only the last segment written may end
 * early, with what a crash left of its last writes: a later segment that
 * starts with a record means damage, and the log does not open (G2).  The
 * segment holding the last record takes the next write, after it; a whole
 * segment no record reached is kept as the next one; the rest are
 * removed.  A record counts only in the segment it was written to: a
 * spare renamed to be the next segment still holds its old ones. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "server/raft/internal.h"
#include "server/raft/wal.h"

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
    if (avail < WAL_HDR || tb_load_be32(p) != WAL_MAGIC)
        return -1;
    r->crc = tb_load_be32(p + 4);
    r->prev = tb_load_be32(p + 8);
    r->kind = tb_load_be32(p + 12);
    r->index = tb_load_be64(p + 16);
    r->n = tb_load_be32(p + 32);
    r->seg = tb_load_be32(p + 36);
    r->len = tb_load_be64(p + 40);
    if (r->len > avail - WAL_HDR ||
        replog__wal_crc(0, p + 8, WAL_HDR - 8 + r->len) != r->crc)
        return -1;
    r->payload = p + WAL_HDR;
    return 0;
}

/* A record of segment `seq` at `p`. */
static int decode_in(uint64_t seq, const uint8_t *p, size_t avail,
                     struct wal_rec *r)
{
    if (replog__wal_decode(p, avail, r) != 0)
        return -1;
    return r->seg == (uint32_t)seq ? 0 : -1;
}

/* The entries loaded so far: list[0] has index `first`. */
struct list {
    struct raft_entry *e;
    size_t n, cap;
    raft_index first;
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
        if ((e = raft_realloc(l->e, cap * sizeof *e)) == NULL)
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
        if ((e->buf.base = raft_malloc(len)) == NULL)
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
        if (l->n == 0)
            l->first = r->index;
        else if (r->index > next)
            return RAFT_CORRUPT;
        else
            list_truncate(l, r->index);
        for (i = 0; i < r->n; i++) {
            uint64_t len;
            if (end - p < 16)
                return RAFT_CORRUPT;
            len = tb_load_be32(p + 12);
            if ((uint64_t)(end - p - 16) < len)
                return RAFT_CORRUPT;
            rv = list_push(l, tb_load_be64(p), tb_load_be32(p + 8), p + 16,
                           (size_t)len);
            if (rv != 0)
                return rv;
            p += 16 + ((len + 7) & ~(uint64_t)7);
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
    default:
        return RAFT_CORRUPT;
    }
}

/* raft_uv's entries, copied into the list. */
static int take_uv_entries(struct list *l, raft_index start,
                           struct raft_entry *e, size_t n)
{
    void *batch = NULL;
    size_t i;
    int rv = 0;

    l->first = start;
    for (i = 0; i < n && rv == 0; i++)
        rv = list_push(l, e[i].term, e[i].type, e[i].buf.base, e[i].buf.len);
    for (i = 0; i < n; i++) {
        if (e[i].batch == NULL)
            raft_free(e[i].buf.base);
        else if (e[i].batch != batch)
            raft_free(batch = e[i].batch);
    }
    raft_free(e);
    return rv;
}

static int by_seq(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

/* Keeps `name` as a spare if it is one of the full size, and there is room
 * for it; removes it if not.  0 if it is not a spare's name. */
static int take_spare(struct wal *w, DIR *d, const char *name)
{
    unsigned long long seq;
    struct stat st;
    int end = 0;

    if (sscanf(name, "wal-spare-%16llx%n", &seq, &end) != 1 || end != 26 ||
        name[end] != '\0')
        return 0;
    if (w->n_spare_segs < WAL_SPARES && seq > 0 &&
        fstatat(dirfd(d), name, &st, 0) == 0 && st.st_size == w->seg_bytes)
        w->spare_segs[w->n_spare_segs++] = seq;
    else
        (void)unlinkat(dirfd(d), name, 0);
    return 1;
}

static int list_segments(struct wal *w, uint64_t **seqs, size_t *n)
{
    DIR *d = opendir(w->dir);
    struct dirent *de;
    size_t cap = 0;
    uint64_t *s = NULL, *t;
    unsigned long long seq;
    int end;

    *n = 0;
    if (d == NULL)
        return RAFT_IOERR;
    while ((de = readdir(d)) != NULL) {
        if (take_spare(w, d, de->d_name))
            continue;
        if (strlen(de->d_name) != 20 ||
            sscanf(de->d_name, "wal-%16llx%n", &seq, &end) != 1 || end != 20)
            continue;
        if (w->prep_seg != NULL && seq == w->prep_seg->seq)
            continue; /* being prepared since the log was opened */
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
    close(fd);
    /* Our reads must not keep the log in the page cache. */
    return 0;
fail:
    if (fd >= 0)
        close(fd);
    free(*buf);
    *buf = NULL;
    return RAFT_IOERR;
}

/* Reads segment `seq` into the list; s->end is 0 if no record of it
 * joined the log. */
static int load_segment(struct wal *w, uint64_t seq, struct list *l,
                        int *chained, struct wal_seg **out)
{
    char path[PATH_MAX];
    struct wal_rec r;
    struct wal_seg *s;
    uint8_t *buf;
    size_t len, off = 0;
    int rv;

    replog__wal_path(w, seq, path, sizeof path);
    if ((rv = read_file(path, &buf, &len)) != 0) {
        snprintf(w->io->errmsg, sizeof w->io->errmsg, "read wal-%016llx",
                 (unsigned long long)seq);
        return rv;
    }
    if ((s = calloc(1, sizeof *s)) == NULL) {
        free(buf);
        return RAFT_NOMEM;
    }
    s->seq = seq;
    s->fd = -1;
    if (len >= 4 && tb_load_be32(buf) == WAL_MAGIC_1) {
        snprintf(w->io->errmsg, sizeof w->io->errmsg,
                 "wal-%016llx is in the log format of an older tumblerd,"
                 " which this one does not read",
                 (unsigned long long)seq);
        free(buf);
        free(s);
        return RAFT_CORRUPT;
    }
    while (off < len && decode_in(seq, buf + off, len - off, &r) == 0 &&
           (!*chained || r.prev == w->last_crc)) {
        if ((rv = apply(l, &r)) != 0) {
            snprintf(w->io->errmsg, sizeof w->io->errmsg,
                     "wal-%016llx: record at %zu does not follow the log",
                     (unsigned long long)seq, off);
            free(buf);
            free(s);
            return rv;
        }
        *chained = 1;
        w->last_crc = r.crc;
        if (r.kind == WAL_ENTRIES && r.n > 0)
            s->last_index = r.index + r.n - 1;
        off += wal_aligned(WAL_HDR + r.len);
    }
    /* A segment is written only once the one before it is complete. */
    if (off == 0 && *chained && decode_in(seq, buf, len, &r) == 0) {
        snprintf(w->io->errmsg, sizeof w->io->errmsg,
                 "wal-%016llx does not follow the log before it",
                 (unsigned long long)seq);
        free(buf);
        free(s);
        return RAFT_CORRUPT;
    }
    free(buf);
    s->end = (off_t)off;
    s->size = (off_t)len;
    *out = s;
    return 0;
}

static void drop_segment(struct wal *w, struct wal_seg *s)
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

static int load_segments(struct wal *w, struct list *l)
{
    struct wal_seg *s, *cur;
    uint64_t *seqs;
    size_t n, i;
    int chained = 0, rv;

    if ((rv = list_segments(w, &seqs, &n)) != 0)
        return rv;
    for (i = 0; i < n; i++) {
        if (seqs[i] >= w->next_seq)
            w->next_seq = seqs[i] + 1;
        if ((rv = load_segment(w, seqs[i], l, &chained, &s)) != 0)
            break;
        if (s->end > 0) {
            /* A segment no record reached is never followed by one. */
            if (w->ready != NULL) {
                drop_segment(w, w->ready);
                w->ready = NULL;
            }
            if ((rv = replog__wal_add_seg(w, s)) != 0) {
                free(s);
                break;
            }
        } else if (w->ready == NULL && s->size >= w->seg_bytes) {
            w->ready = s; /* whole, and never reached: the next segment */
        } else {
            drop_segment(w, s);
        }
    }
    free(seqs);
    if (rv != 0)
        return rv;
    cur = w->n_segs > 0 ? w->segs[w->n_segs - 1] : NULL;
    if (cur != NULL && cur->end < cur->size && (rv = open_segment(w, cur)) != 0)
        return rv;
    if (w->ready != NULL && open_segment(w, w->ready) != 0) {
        free(w->ready);
        w->ready = NULL;
    }
    return 0;
}

int replog__wal_load(struct wal *w, struct raft_snapshot *snap,
                     raft_index *start, struct raft_entry **entries, size_t *n)
{
    struct list l = {0};
    raft_index floor = snap != NULL ? snap->index + 1 : 1;
    int rv;

    rv = take_uv_entries(&l, *start, *entries, *n);
    *entries = NULL;
    *n = 0;
    if (rv == 0)
        rv = load_segments(w, &l);
    if (rv != 0) {
        list_free(&l);
        return rv;
    }
    /* Entries all behind the snapshot are of no use (a crash came between
     * an installed snapshot and the record that voids the log). */
    if (l.n > 0 && l.first + l.n <= floor)
        list_truncate(&l, 0);
    if (l.n == 0)
        l.first = floor;
    if (l.first > floor) {
        snprintf(w->io->errmsg, sizeof w->io->errmsg,
                 "log starts at entry %llu, after %llu",
                 (unsigned long long)l.first, (unsigned long long)floor);
        list_free(&l);
        return RAFT_CORRUPT;
    }
    w->next_index = l.first + l.n;
    *start = l.first;
    *n = l.n;
    if (l.n > 0)
        *entries = l.e;
    else
        raft_free(l.e);
    return 0;
}
