/* The error table's strings and the growable buffer. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/common.h"

const char *tb_strerror(int rc)
{
#define X(name, value, msg)                                                 \
    case value:                                                             \
        return msg;
    switch (rc) { TB_ERRORS(X) }
#undef X
    return "unknown error";
}

const char *tb_errname(int rc)
{
#define X(name, value, msg)                                                 \
    case value:                                                             \
        return #name;
    switch (rc) { TB_ERRORS(X) }
#undef X
    return "UNKNOWN";
}

void tb_wbuf_init(struct tb_wbuf *b)
{
    memset(b, 0, sizeof *b);
}

void tb_wbuf_free(struct tb_wbuf *b)
{
    free(b->base);
    tb_wbuf_init(b);
}

void tb_wbuf_reset(struct tb_wbuf *b)
{
    if (b->oom)
        tb_wbuf_free(b);
    b->len = 0;
}

/* A large buffer's pages are populated a step ahead of what is written:
 * faulting them in one by one costs about ten times as much (more under
 * some hypervisors).  A step at a time, not all a growth adds at once: a
 * snapshot's delta growing to 64 MiB stalled the loop 13-38 ms populating
 * its new half.  Smaller buffers come from the heap, mostly resident
 * already. */
#define POPULATE_FROM ((size_t)1 << 20)
#define POPULATE_STEP ((size_t)1 << 20)

static void populate(uint8_t *from, uint8_t *to)
{
#ifdef MADV_POPULATE_WRITE
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = ((uintptr_t)from + page - 1) & ~(page - 1);
    uintptr_t z = (uintptr_t)to & ~(page - 1);

    if (a < z)
        madvise((void *)a, z - a, MADV_POPULATE_WRITE);
#else
    (void)from;
    (void)to;
#endif
}

void *tb_map_unshared(size_t len, int populated)
{
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    if (p == MAP_FAILED)
        return NULL;
    madvise(p, len, MADV_DONTFORK); /* an old kernel refuses: only slower */
    if (populated)
        populate(p, (uint8_t *)p + len);
    return p;
}

int tb_wbuf_reserve(struct tb_wbuf *b, size_t extra)
{
    size_t cap, end = b->len + extra;
    uint8_t *p;

    if (b->oom)
        return TB_ENOMEM;
    if (b->grow != NULL) {
        if (end >= b->cap && (end + 1 < b->len || b->grow(b, end + 1))) {
            b->oom = 1;
            return TB_ENOMEM;
        }
        return 0;
    }
    if (end >= b->cap) {
        cap = b->cap ? b->cap : 64;
        while (cap <= end)
            cap *= 2;
        p = realloc(b->base, cap);
        if (p == NULL) {
            b->oom = 1;
            return TB_ENOMEM;
        }
        b->base = p;
        b->cap = cap; /* what was resident stays so, moved or copied */
    }
    if (b->cap >= POPULATE_FROM && end > b->populated) {
        cap = end + POPULATE_STEP < b->cap ? end + POPULATE_STEP : b->cap;
        populate(b->base + b->populated, b->base + cap);
        b->populated = cap;
    }
    return 0;
}

void tb_wbuf_put(struct tb_wbuf *b, const void *p, size_t n)
{
    if (n == 0 || tb_wbuf_reserve(b, n) != 0)
        return;
    memcpy(b->base + b->len, p, n);
    b->len += n;
}

void tb_wbuf_printf(struct tb_wbuf *b, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || tb_wbuf_reserve(b, (size_t)n + 1) != 0)
        return;
    va_start(ap, fmt);
    vsnprintf((char *)b->base + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

int tb_check_fail(char *why, size_t cap, const char *fmt, ...)
{
    va_list ap;

    if (cap > 0) {
        va_start(ap, fmt);
        vsnprintf(why, cap, fmt, ap);
        va_end(ap);
    }
    return TB_EDATAINCONSISTENCY;
}

uint8_t *tb_wbuf_take(struct tb_wbuf *b, size_t *len)
{
    uint8_t *p = b->base;

    if (len)
        *len = b->len;
    tb_wbuf_init(b);
    return p;
}
