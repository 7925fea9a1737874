/* Fuzz target: tb_frame_split over an arbitrary byte stream that arrives
 * in chunks of fuzzer-chosen sizes, as a connection's reads would.
 *
 * Input:   OFFSET SIZE  DESCRIPTION
 *               0    1  frame limit `max`, an index into limits[]
 *               1    2  seed of the chunk sizes
 *               3    1  largest chunk (0 = 256)
 *               4    …  the stream
 *
 * Checked: the return is 0, TB_EAGAIN or TB_ETOOBIG and agrees with the
 * length prefix; consumed and the payload view stay inside what is
 * buffered; an oversized or negative length is refused as soon as its 4
 * bytes are there; the frames seen incrementally are exactly those of a
 * reference split of the whole stream; tb_frame_begin/end re-frame each
 * payload to the same bytes.  Bytes outside the buffered window are
 * poisoned under ASan, so a read past it is caught. */
#include "fuzz.h"
#include "proto/proto.h"

#if defined(__SANITIZE_ADDRESS__)
#define FZ_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FZ_ASAN 1
#endif
#endif
#ifdef FZ_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n)   ASAN_POISON_MEMORY_REGION(p, n)
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define POISON(p, n)   ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

static const size_t limits[] = {
    0,
    1,
    3,
    4,
    15,
    16,
    255,
    256,
    4096,
    65535,
    TB_DEFAULT_MAXBUFFER,
    0x7fffffff,
    0x80000000u,
    SIZE_MAX,
};

/* The reference: where each whole frame of `s` ends, as the protocol
 * defines it; stops at the first bad length (sets *toobig) or at an
 * incomplete frame. */
static size_t ref_split(const uint8_t *s, size_t n, size_t max, size_t *ends,
                        size_t cap, int *toobig)
{
    size_t pos = 0, k = 0;
    int64_t len;

    *toobig = 0;
    while (n - pos >= 4 && k < cap) {
        len = (int32_t)((uint32_t)s[pos] << 24 | (uint32_t)s[pos + 1] << 16 |
                        (uint32_t)s[pos + 2] << 8 | s[pos + 3]);
        if (len < 0 || (uint64_t)len > (uint64_t)max) {
            *toobig = 1;
            break;
        }
        if (n - pos - 4 < (uint64_t)len)
            break;
        pos += 4 + (size_t)len;
        ends[k++] = pos;
    }
    return k;
}

static uint32_t next_rand(uint32_t *s)
{
    *s = *s * 1103515245u + 12345u;
    return *s >> 16;
}

static void check_reframe(const uint8_t *frame, struct tb_str payload)
{
    struct tb_wbuf w;
    size_t start;

    tb_wbuf_init(&w);
    tb_put_I32(&w, 0x5a5a5a5a); /* the frame need not start at 0 */
    start = tb_frame_begin(&w);
    tb_wbuf_put(&w, payload.ptr, payload.len);
    tb_frame_end(&w, start);
    FZ_CHECK(!w.oom && w.len == start + 4 + payload.len &&
                 memcmp(w.base + start, frame, 4 + payload.len) == 0,
             "re-framed %zu payload bytes differ", payload.len);
    tb_wbuf_free(&w);
}

/* One call on the window [p, p+n): checks the answer against the prefix.
 * Returns the bytes consumed, 0 for "need more", or -1 for "closed". */
static long split_once(const uint8_t *p, size_t n, size_t max)
{
    struct tb_str payload = {NULL, 0};
    size_t consumed = 0;
    int64_t len = 0;
    int rc = tb_frame_split(p, n, max, &payload, &consumed);

    if (n >= 4)
        len = (int32_t)tb_load_be32(p);
    if (n < 4) {
        FZ_CHECK(rc == TB_EAGAIN, "%zu bytes gave %d", n, rc);
        return 0;
    }
    if (len < 0 || (uint64_t)len > (uint64_t)max) {
        FZ_CHECK(rc == TB_ETOOBIG, "length %lld max %zu gave %d",
                 (long long)len, max, rc);
        return -1;
    }
    if (n - 4 < (uint64_t)len) {
        FZ_CHECK(rc == TB_EAGAIN, "length %lld of %zu gave %d", (long long)len,
                 n, rc);
        return 0;
    }
    FZ_CHECK(rc == 0, "a whole frame (%lld of %zu) gave %d", (long long)len, n,
             rc);
    FZ_CHECK(consumed == 4 + (size_t)len && consumed <= n,
             "consumed %zu for length %lld", consumed, (long long)len);
    FZ_CHECK((const uint8_t *)payload.ptr == p + 4 &&
                 payload.len == (size_t)len,
             "payload view off by %td, length %zu",
             (const uint8_t *)payload.ptr - (p + 4), payload.len);
    check_reframe(p, payload);
    return (long)consumed;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fz_in in = fz_in_make(data, size);
    size_t max = limits[fz_u8(&in) % (sizeof limits / sizeof limits[0])];
    uint32_t seed = fz_u16(&in);
    size_t chunk_max = fz_u8(&in), n = fz_left(&in);
    size_t start = 0, filled = 0, nref, k = 0, chunk, *ends;
    uint8_t *buf;
    int toobig, closed = 0;
    long got;

    if (chunk_max == 0)
        chunk_max = 256;
    ends = malloc((n / 4 + 1) * sizeof *ends);
    buf = malloc(n + 1);
    FZ_CHECK(ends && buf, "out of memory");
    memcpy(buf, in.p, n);
    nref = ref_split(buf, n, max, ends, n / 4 + 1, &toobig);
    POISON(buf, n + 1);
    while (filled < n && !closed) {
        chunk = 1 + next_rand(&seed) % chunk_max;
        if (chunk > n - filled)
            chunk = n - filled;
        UNPOISON(buf + filled, chunk);
        filled += chunk;
        /* Split until the window needs more bytes, as a reader loop does. */
        while ((got = split_once(buf + start, filled - start, max)) > 0) {
            FZ_CHECK(k < nref && start + (size_t)got == ends[k],
                     "frame %zu ends at %zu, reference %zu of %zu", k,
                     start + (size_t)got, k < nref ? ends[k] : 0, nref);
            POISON(buf + start, (size_t)got);
            start += (size_t)got;
            k++;
        }
        closed = got < 0;
    }
    FZ_CHECK(k == nref, "%zu frames, reference %zu", k, nref);
    FZ_CHECK(closed == toobig, "closed %d, reference %d", closed, toobig);
    UNPOISON(buf, n + 1);
    free(buf);
    free(ends);
    return 0;
}
