/* The debug consistency checks of the log's state: every "at all times"
 * statement of struct wal (wal.h) and struct replog (internal.h), checked
 * from scratch, as tree_check.c checks the tree's.  Built only without
 * NDEBUG: wal.c, wal_io.c and replog.c call them through WAL_CHECK and
 * REPLOG_CHECK where the state changes most, and a statement that does not
 * hold traps there, naming it. */
#include <stdio.h>
#include <stdlib.h>

#include "server/replog/internal.h"
#include "server/replog/wal.h"

#ifndef NDEBUG

struct check {
    char *why;
    size_t cap;
};

#define fail(c, ...) tb_check_fail((c)->why, (c)->cap, __VA_ARGS__)

/* ---- struct wal ---- */

/* Where the records seen so far leave the log. */
struct chain {
    int any;      /* a record was seen */
    uint64_t end; /* the index the last one ends at */
    int sealed;   /* a sealed record was seen */
    uint32_t crc; /* the last sealed one's */
};

static int check_record(struct check *c, const uint8_t *h, size_t off,
                        struct chain *ch, uint64_t *n, uint64_t *last)
{
    uint32_t kind = tb_load_be32(h + WAL_H_KIND), nr;
    uint64_t index = tb_load_be64(h + WAL_H_INDEX);

    if (tb_load_be32(h + WAL_H_MAGIC) != WAL_MAGIC)
        return fail(c, "record at %zu: no magic", off);
    if (kind != WAL_ENTRIES && kind != WAL_TRUNCATE && kind != WAL_RESET)
        return fail(c, "record at %zu: kind %u", off, (unsigned)kind);
    if (kind != WAL_ENTRIES) {
        ch->end = index;
        ch->any = 1;
        return 0;
    }
    if (ch->any && index != ch->end)
        return fail(c,
                    "record at %zu: entries from %llu after records ending "
                    "at %llu",
                    off, (unsigned long long)index,
                    (unsigned long long)ch->end);
    nr = tb_load_be32(h + WAL_H_N);
    ch->end = index + nr;
    ch->any = 1;
    *n += nr;
    if (nr > 0)
        *last = index + nr - 1;
    return 0;
}

/* The records of `b`, whole from offset 0; sealed for write number
 * `write` into `s` when s is not NULL. */
static int check_batch(struct check *c, const struct wal_batch *b,
                       const struct wal_seg *s, uint64_t write,
                       struct chain *ch)
{
    uint64_t n = 0, last = 0;
    size_t off = 0, end;
    const uint8_t *h;
    int rv;

    if (b->len > b->cap || (b->buf == NULL && b->len > 0) ||
        b->n_acks > b->cap_acks || (b->acks == NULL && b->cap_acks > 0))
        return fail(c, "a batch beyond its buffers");
    if (b->open != SIZE_MAX && (b->open >= b->len || b->open % WAL_BLOCK))
        return fail(c, "a batch's open record at %zu of %zu", b->open, b->len);
    if (b->open == SIZE_MAX && b->len % WAL_BLOCK != 0)
        return fail(c, "a batch of %zu bytes, not whole blocks", b->len);
    while (off < b->len) {
        h = b->buf + off;
        if (b->len - off < WAL_HDR)
            return fail(c, "record at %zu: its header cut short", off);
        if ((rv = check_record(c, h, off, ch, &n, &last)) != 0)
            return rv;
        if (off == b->open && tb_load_be32(h + WAL_H_KIND) != WAL_ENTRIES)
            return fail(c, "record at %zu: open, but not of entries", off);
        end = off == b->open
                  ? b->len
                  : off + wal_aligned(WAL_HDR +
                                      (size_t)tb_load_be64(h + WAL_H_LEN));
        if (end > b->len || (off < b->open && end > b->open))
            return fail(c, "record at %zu: beyond its batch", off);
        if (s != NULL) {
            if (tb_load_be64(h + WAL_H_WRITE) != write ||
                tb_load_be32(h + WAL_H_SEG) != (uint32_t)s->seq ||
                tb_load_be64(h + WAL_H_SEG_SIZE) != (uint64_t)s->size)
                return fail(c,
                            "record at %zu of write %llu: sealed for "
                            "another write or segment",
                            off, (unsigned long long)write);
            if (ch->sealed && tb_load_be32(h + WAL_H_PREV) != ch->crc)
                return fail(c,
                            "record at %zu of write %llu: prev is not the "
                            "crc of the record before it",
                            off, (unsigned long long)write);
            ch->crc = tb_load_be32(h + WAL_H_CRC);
            ch->sealed = 1;
        }
        off = end;
    }
    if (n != b->n_entries || last != b->last_index)
        return fail(c, "a batch of %llu entries up to %llu says %u up to %llu",
                    (unsigned long long)n, (unsigned long long)last,
                    b->n_entries, (unsigned long long)b->last_index);
    return 0;
}

static const struct wal_seg *last_seg(const struct wal *w)
{
    return w->n_segs > 0 ? w->segs[w->n_segs - 1] : NULL;
}

static int check_writes(struct check *c, const struct wal *w, struct chain *ch)
{
    const struct wal_seg *s = last_seg(w);
    const struct wal_write *wr;
    uint64_t write = w->write_seq - w->inflight;
    unsigned n = 0;
    off_t at;
    int rv;

    if ((w->head == NULL) != (w->tail == NULL) ||
        (w->head == NULL) != (w->inflight == 0) || w->inflight > WAL_INFLIGHT)
        return fail(c, "head %p, tail %p, inflight %u", (void *)w->head,
                    (void *)w->tail, w->inflight);
    if (w->head == NULL)
        return 0;
    if (s == NULL)
        return fail(c, "writes on their way and no segment");
    at = w->head->off;
    for (wr = w->head; wr != NULL; wr = wr->next, write++) {
        if (++n > w->inflight)
            return fail(c, "more writes listed than the %u inflight",
                        w->inflight);
        if (wr->w != w || wr->seg != s || wr->off != at)
            return fail(c, "write %llu: not next in the last segment",
                        (unsigned long long)write);
        if (wr->b.open != SIZE_MAX || wr->b.len == 0)
            return fail(c, "write %llu: not whole records",
                        (unsigned long long)write);
        if ((rv = check_batch(c, &wr->b, s, write, ch)) != 0)
            return rv;
        if (wr->b.last_index > s->last_index)
            return fail(c, "write %llu: entries beyond its segment's last",
                        (unsigned long long)write);
        if (wr->next == NULL && wr != w->tail)
            return fail(c, "the list ends before the tail");
        at += (off_t)wr->b.len;
    }
    if (n != w->inflight || s->writing != n || at != s->end)
        return fail(c,
                    "%u writes listed, %u inflight, %u in the segment, "
                    "ending at %lld of %lld",
                    n, w->inflight, s->writing, (long long)at,
                    (long long)s->end);
    if (ch->crc != w->last_crc)
        return fail(c, "the tail's last crc is not last_crc");
    return 0;
}

static int check_pending(struct check *c, const struct wal *w, struct chain *ch)
{
    const struct wal_batch *b = &w->pending;
    int rv;

    if ((rv = check_batch(c, b, NULL, 0, ch)) != 0)
        return rv;
    if (ch->any && ch->end != w->next_index)
        return fail(c, "the records end at %llu, next_index is %llu",
                    (unsigned long long)ch->end,
                    (unsigned long long)w->next_index);
    if ((b->n_acks == 0) != (w->pending_at_ns == 0))
        return fail(c, "%u appends pending, pending_at_ns %llu", b->n_acks,
                    (unsigned long long)w->pending_at_ns);
    return 0;
}

static int check_segs(struct check *c, const struct wal *w)
{
    const struct wal_seg *s, *last = last_seg(w);
    unsigned i;

    if (w->n_segs > w->cap_segs)
        return fail(c, "%u segments in room for %u", w->n_segs, w->cap_segs);
    for (i = 0; i < w->n_segs; i++) {
        s = w->segs[i];
        if (i > 0 && s->seq <= w->segs[i - 1]->seq)
            return fail(c, "segment %llu after %llu",
                        (unsigned long long)s->seq,
                        (unsigned long long)w->segs[i - 1]->seq);
        if (s->seq >= w->next_seq)
            return fail(c, "segment %llu, next_seq %llu",
                        (unsigned long long)s->seq,
                        (unsigned long long)w->next_seq);
        if (s->end < 0 || s->end % WAL_BLOCK != 0 || s->end > s->size)
            return fail(c, "segment %llu ends at %lld of %lld",
                        (unsigned long long)s->seq, (long long)s->end,
                        (long long)s->size);
        if (s->writing > s->writes || (s->writing > 0 && s->fd < 0) ||
            (s != last && (s->fd >= 0 || s->writing > 0)))
            return fail(c, "segment %llu: fd %d, %u writes on their way",
                        (unsigned long long)s->seq, s->fd, s->writing);
    }
    if (w->ready != NULL &&
        (w->prep_seg != NULL || w->ready->seq >= w->next_seq ||
         (last != NULL && w->ready->seq <= last->seq) || w->ready->fd < 0 ||
         w->ready->end != 0 || w->ready->writing != 0 || w->ready->writes != 0))
        return fail(c, "ready segment %llu", (unsigned long long)w->ready->seq);
    if (w->prep_seg != NULL &&
        (w->prep_seg->seq >= w->next_seq ||
         (last != NULL && w->prep_seg->seq <= last->seq)))
        return fail(c, "segment %llu being prepared",
                    (unsigned long long)w->prep_seg->seq);
    return 0;
}

static int check_rest(struct check *c, const struct wal *w)
{
    unsigned i;

    if (w->removal_busy != (w->doomed != NULL) ||
        (w->doomed != NULL) != (w->n_doomed > 0))
        return fail(c, "removal %d with %u doomed", w->removal_busy,
                    w->n_doomed);
    for (i = 0; i < w->n_doomed; i++)
        if (w->n_segs == 0 || w->removal_oldest != w->segs[0]->seq ||
            w->doomed[i].seq >= w->removal_oldest)
            return fail(c, "doomed segment %llu, the oldest kept %llu",
                        (unsigned long long)w->doomed[i].seq,
                        (unsigned long long)w->removal_oldest);
    if (w->loaded && w->n_unused > 0)
        return fail(c, "%u unused segments once loaded", w->n_unused);
    if (w->uv_snap && !w->uv_files)
        return fail(c, "raft_uv's snapshot loaded, and none of its files");
    if (w->n_spare_segs > WAL_SPARES || w->n_spare > WAL_INFLIGHT + 1)
        return fail(c, "%u spare segments, %u spare buffers", w->n_spare_segs,
                    w->n_spare);
    if (w->overlapped > w->writes || w->threaded > w->writes ||
        w->queued > w->appends || w->bytes % WAL_BLOCK != 0 ||
        w->bytes < w->writes * WAL_BLOCK)
        return fail(
            c,
            "counters: %llu writes, %llu overlapped, %llu "
            "threaded, %llu bytes; %llu appends, %llu queued",
            (unsigned long long)w->writes, (unsigned long long)w->overlapped,
            (unsigned long long)w->threaded, (unsigned long long)w->bytes,
            (unsigned long long)w->appends, (unsigned long long)w->queued);
    return 0;
}

int replog__wal_check(const struct wal *w, char *why, size_t cap)
{
    struct check c = {why, cap};
    struct chain ch = {0, 0, 0, 0};
    int rv;

    if ((rv = check_writes(&c, w, &ch)) != 0 ||
        (rv = check_pending(&c, w, &ch)) != 0 ||
        (rv = check_segs(&c, w)) != 0 || (rv = check_rest(&c, w)) != 0)
        return rv;
    return 0;
}

void replog__wal_check_trap(const struct wal *w)
{
    char why[256];

    if (replog__wal_check(w, why, sizeof why) != 0) {
        fprintf(stderr, "wal_check: %s\n", why);
        abort();
    }
}

/* ---- struct replog ---- */

static struct replog_req *req_of(const struct tb_queue *q)
{
    return TB_CONTAINER_OF(q, struct replog_req, link);
}

static int check_reqs(struct check *c, const struct replog *l)
{
    const struct tb_queue *q;
    int64_t prev = 0;
    unsigned n = 0;

    for (q = l->queued.next; q != &l->queued; q = q->next, n++)
        if (req_of(q)->index != 0 || n >= l->batch_n ||
            l->batch[n].base == NULL)
            return fail(c, "queued request %u of %u: index %lld", n, l->batch_n,
                        (long long)req_of(q)->index);
    if (n != l->batch_n || l->batch_n > l->batch_cap)
        return fail(c, "%u requests queued, batch_n %u of %u", n, l->batch_n,
                    l->batch_cap);
    for (q = l->pending.next; q != &l->pending; q = q->next) {
        if (req_of(q)->index <= prev || req_of(q)->index <= l->applied_index)
            return fail(c,
                        "pending request at %lld after one at %lld, applied "
                        "%lld",
                        (long long)req_of(q)->index, (long long)prev,
                        (long long)l->applied_index);
        prev = req_of(q)->index;
    }
    return 0;
}

static int check_snapshot(struct check *c, const struct replog *l)
{
    if (l->snap_pid > 0 && (l->snap_fd < 0 || l->snap_map != NULL ||
                            l->snap_active || l->snap_in_loop))
        return fail(c, "a snapshot child with fd %d, map %p, active %d",
                    l->snap_fd, l->snap_map, l->snap_active);
    if (l->snap_map != NULL &&
        (l->snap_pid != 0 || l->snap_fd < 0 || l->snap_map_len == 0))
        return fail(c, "a mapped state with child %ld, fd %d",
                    (long)l->snap_pid, l->snap_fd);
    if (l->snap_delta.len > 0 && l->snap_pid <= 0 && l->snap_map == NULL)
        return fail(c, "a delta of %zu bytes and no child's state",
                    l->snap_delta.len);
    if (l->snap_state.len > 0 && !l->snap_active)
        return fail(c, "a state serialized on the loop, not being written");
    return 0;
}

int replog__check(const struct replog *l, char *why, size_t cap)
{
    struct check c = {why, cap};
    int rv;

    if (l->attached != (l->loop == NULL) ||
        (l->attached ? l->dir != NULL || !l->snap_in_loop
                     : l->raft != &l->raft_own || l->dir == NULL))
        return fail(&c, "attached %d, loop %p, dir %p", l->attached,
                    (void *)l->loop, (void *)l->dir);
    if (l->server_id <= 0 || l->n_peers == 1 ||
        (l->peers != NULL) != (l->n_peers > 0) ||
        (l->tcp_ready && l->n_peers == 0))
        return fail(&c, "server %d with %u peers", l->server_id, l->n_peers);
    if ((rv = check_reqs(&c, l)) != 0 || (rv = check_snapshot(&c, l)) != 0)
        return rv;
    if (l->idle_index > l->applied_index || l->applied_index < 0)
        return fail(&c, "idle at %lld, applied %lld", (long long)l->idle_index,
                    (long long)l->applied_index);
    if ((l->raft_closed && !l->closing) || l->handles_open > 2)
        return fail(&c, "raft closed %d, closing %d, %u handles",
                    l->raft_closed, l->closing, l->handles_open);
    return 0;
}

void replog__check_trap(const struct replog *l)
{
    char why[256];

    if (replog__check(l, why, sizeof why) != 0) {
        fprintf(stderr, "replog_check: %s\n", why);
        abort();
    }
}

#endif
