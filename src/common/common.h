/* Small shared types: length-explicit views, a growable byte buffer, an
 * intrusive queue and big-endian loads/stores.  No I/O, no clock. */
#ifndef TB_COMMON_H
#define TB_COMMON_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tumbler/errors.h"

/* A borrowed view of bytes; never assumed NUL-terminated.  `ptr == NULL`
 * stands for the jute null (length -1), which differs from empty. */
struct tb_str {
    const char *ptr;
    size_t len;
};

#define TB_STR(lit) ((struct tb_str){(lit), sizeof(lit) - 1})
#define TB_STR_NULL ((struct tb_str){NULL, 0})

static inline struct tb_str tb_str_c(const char *s)
{
    return (struct tb_str){s, s ? strlen(s) : 0};
}

static inline int tb_str_eq(struct tb_str a, struct tb_str b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

/* Java's String.trim(): every byte <= ' ' off either end. */
static inline struct tb_str tb_str_java_trim(struct tb_str s)
{
    while (s.len > 0 && (unsigned char)s.ptr[0] <= ' ') {
        s.ptr++;
        s.len--;
    }
    while (s.len > 0 && (unsigned char)s.ptr[s.len - 1] <= ' ')
        s.len--;
    return s;
}

/* A growable, owned byte buffer.  At all times len <= cap and, when cap > 0,
 * base[len] is addressable (one spare byte for a terminating NUL). */
struct tb_wbuf {
    uint8_t *base;
    size_t len;
    size_t cap;
    size_t populated; /* bytes from base known resident (common.c) */
    int oom; /* sticky: an allocation failed, contents are incomplete */
    /* NULL: base is the heap's.  Otherwise it makes room for `need` bytes
     * (setting base and cap) in memory of its own, which tb_wbuf_free and
     * tb_wbuf_take must not be given; non-zero if it cannot. */
    int (*grow)(struct tb_wbuf *b, size_t need);
};

void tb_wbuf_init(struct tb_wbuf *b);
void tb_wbuf_free(struct tb_wbuf *b);
/* Empties a heap buffer for its next use, keeping its capacity; one whose
 * allocation failed (oom) starts afresh, so that one failure fails one
 * use, not every later one. */
void tb_wbuf_reset(struct tb_wbuf *b);
int tb_wbuf_reserve(struct tb_wbuf *b, size_t extra);
void tb_wbuf_put(struct tb_wbuf *b, const void *p, size_t n);
void tb_wbuf_printf(struct tb_wbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Hands the bytes to the caller (free() them) and resets the buffer. */
uint8_t *tb_wbuf_take(struct tb_wbuf *b, size_t *len);

/* For the debug consistency checkers: the reason a statement does not
 * hold, into why[cap] (nothing when cap is 0); returns
 * TB_EDATAINCONSISTENCY, so that a checker says `return tb_check_fail(..)`. */
int tb_check_fail(char *why, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* `len` bytes of zeroed, page-aligned memory of its own (munmap it) that a
 * forked child does not inherit: a snapshot's child would otherwise make
 * each page the parent writes next a copy.  `populated`: its pages are
 * made at once rather than faulted in one by one.  NULL if there is none. */
void *tb_map_unshared(size_t len, int populated);

/* Intrusive circular doubly-linked queue. */
struct tb_queue {
    struct tb_queue *next, *prev;
};

#define TB_CONTAINER_OF(p, type, field)                                     \
    ((type *)(void *)((char *)(p)-offsetof(type, field)))
#define TB_QUEUE_FOREACH(q, h) for ((q) = (h)->next; (q) != (h); (q) = (q)->next)

static inline void tb_queue_init(struct tb_queue *q)
{
    q->next = q->prev = q;
}
static inline int tb_queue_empty(const struct tb_queue *q)
{
    return q->next == q;
}
static inline void tb_queue_insert_tail(struct tb_queue *h, struct tb_queue *q)
{
    q->next = h;
    q->prev = h->prev;
    h->prev->next = q;
    h->prev = q;
}
static inline void tb_queue_remove(struct tb_queue *q)
{
    q->prev->next = q->next;
    q->next->prev = q->prev;
    q->next = q->prev = q;
}
static inline struct tb_queue *tb_queue_head(const struct tb_queue *h)
{
    return h->next;
}

static inline uint32_t tb_load_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
           (uint32_t)p[3];
}
static inline uint64_t tb_load_be64(const uint8_t *p)
{
    return (uint64_t)tb_load_be32(p) << 32 | tb_load_be32(p + 4);
}
static inline void tb_store_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}
static inline void tb_store_be64(uint8_t *p, uint64_t v)
{
    tb_store_be32(p, (uint32_t)(v >> 32));
    tb_store_be32(p + 4, (uint32_t)v);
}
/* Little endian: libraft's own formats (raft_uv's files, its handshake). */
static inline uint64_t tb_load_le64(const uint8_t *p)
{
    uint64_t v = 0;
    int i;

    for (i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}
static inline void tb_store_le64(uint8_t *p, uint64_t v)
{
    int i;

    for (i = 0; i < 8; i++, v >>= 8)
        p[i] = (uint8_t)v;
}

#ifndef NDEBUG
#define TB_NEVER(x) ((x) ? (assert(0), 1) : 0)
#else
#define TB_NEVER(x) (x)
#endif

#endif
