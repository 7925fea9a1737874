/* New tree nodes come from the top of the heap, so a burst of creates
 * keeps touching fresh pages; under a hypervisor like this machine's a
 * page faulted in on first touch costs about 12 us, one populated by
 * madvise about 1 us.  glibc grows the heap by the request plus M_TOP_PAD,
 * and what a turn of the loop has not used of a growth is populated before
 * the next turn touches it.  The pad is kept at an eighth of what the heap
 * has grown by (128 KiB to 8 MiB): the populated, unused part stays small
 * beside the heap, and an idle server's heap as small as glibc keeps it. */
#include <malloc.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "server/heap.h"

#define PAD_MIN ((uintptr_t)128 << 10)
#define PAD_MAX ((uintptr_t)8 << 20)

static uintptr_t start, done, pad;

void tbd_heap_populate(void)
{
    uintptr_t top = (uintptr_t)sbrk(0), page, from, want;

    if (top == (uintptr_t)-1)
        return;
    if (start == 0)
        start = done = top;
    page = (uintptr_t)sysconf(_SC_PAGESIZE);
    from = (done + page - 1) & ~(page - 1);
#ifdef MADV_POPULATE_WRITE
    if (top > from)
        madvise((void *)from, top - from, MADV_POPULATE_WRITE);
#endif
    done = top;
    want = top > start ? (top - start) / 8 : 0;
    want = want < PAD_MIN ? PAD_MIN : want > PAD_MAX ? PAD_MAX : want;
    want &= ~(PAD_MIN - 1);
    if (want != pad && mallopt(M_TOP_PAD, (int)want) == 1)
        pad = want;
}
