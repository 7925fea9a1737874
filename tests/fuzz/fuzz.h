/* Shared by the fuzz targets: a check that aborts with a message (asserts
 * may be compiled out, a fuzz check never is), and a consumer that turns
 * the fuzzer's bytes into small structured choices.
 *
 * The consumer reads from the front and yields zeros once the input is
 * used up, so every byte string is a valid script and a short input still
 * ends in a well-defined state. */
#ifndef TB_FUZZ_H
#define TB_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_CHECK(cond, ...)                                                    \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__,   \
                    #cond);                                                    \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
            abort();                                                           \
        }                                                                      \
    } while (0)

struct fz_in {
    const uint8_t *p;
    const uint8_t *end;
};

static inline struct fz_in fz_in_make(const uint8_t *p, size_t n)
{
    return (struct fz_in){p, p + n};
}

static inline size_t fz_left(const struct fz_in *in)
{
    return (size_t)(in->end - in->p);
}

static inline uint8_t fz_u8(struct fz_in *in)
{
    return in->p < in->end ? *in->p++ : 0;
}

static inline uint16_t fz_u16(struct fz_in *in)
{
    uint16_t hi = fz_u8(in);
    return (uint16_t)(hi << 8 | fz_u8(in));
}

static inline uint32_t fz_u32(struct fz_in *in)
{
    uint32_t hi = fz_u16(in);
    return hi << 16 | fz_u16(in);
}

static inline uint64_t fz_u64(struct fz_in *in)
{
    uint64_t hi = fz_u32(in);
    return hi << 32 | fz_u32(in);
}

/* Up to `max` bytes as a view into the input (fewer if it runs out). */
static inline struct tb_str fz_bytes(struct fz_in *in, size_t max)
{
    size_t n = max < fz_left(in) ? max : fz_left(in);
    struct tb_str s = {(const char *)in->p, n};

    in->p += n;
    return s;
}

/* A printable dump of a few bytes for failure messages. */
static inline const char *fz_hex(const void *p, size_t n, char *out, size_t cap)
{
    const uint8_t *b = p;
    size_t i, o = 0;

    for (i = 0; i < n && o + 3 < cap; i++)
        o += (size_t)snprintf(out + o, cap - o, "%02x", b[i]);
    if (cap > 0)
        out[o < cap ? o : cap - 1] = '\0';
    return out;
}

#endif
