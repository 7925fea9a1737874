/* Where log entries live while raft holds them.  Raft keeps every entry
 * since the last snapshot in memory (about 20 MB for the 100,000 entries of
 * the default snapCount) and frees most of them at once when a snapshot is
 * written.  From malloc they would be interleaved with the long-lived tree
 * nodes created by those very entries, so the freed memory could not go
 * back to the system: 100k creates left tumblerd at 65 MB after their
 * snapshot, against 41 MB for the same state after a restart.
 *
 * So entries are carved in order out of 1 MiB chunks, and a chunk is
 * unmapped when the last entry in it is freed.  A chunk is populated 64 KiB
 * at a time ahead of the entries, not page by page on first touch, and is
 * left out of a snapshot's forked child, which never reads the log: after
 * a fork, the first write to every page the child shares is a page fault.
 * (An older kernel refuses either madvise, harmlessly: both only save
 * time.)
 *
 * Raft's own large arrays, the ring of the entries it holds and their
 * reference counts, are written at every append, and so are the log's
 * write buffers (wal.c): they come from mappings left out of children too.
 * Under a snapshot's child every page written first is a copy, and a copy
 * whose process also runs a thread on the other CPU is a TLB flush there:
 * a quarter of the loop's time under pipelined setData went to such faults,
 * a third of them on these arrays and buffers.
 *
 * Raft frees through its heap hooks, installed here once per process: a
 * pointer inside one of our chunks is counted down, one of our large
 * blocks unmapped, anything else goes to free().  The hooks can be called
 * from raft_uv's threadpool, hence the lock.
 *
 * An allocation of raft's that fails stops the process (exit 74), as a
 * log write that fails does: libraft 0.15 does not survive one.  Out of
 * memory decoding a message it crashed on a NULL array; building a new
 * leader's progress array, it freed a pointer it never allocated; growing
 * its log in an apply, it kept entries our log never had.  Not so a
 * request for more than the machine's memory: no shortage, but a length
 * read off the quorum port, which raft_uv trusts (a handshake naming an
 * address of 2^62 bytes); it has NULL, on which raft_uv drops that
 * connection, as before there was a stop.  Nor what
 * our own code allocates through raft's heap for raft to free (a
 * snapshot read, a loaded log, a connection's handle): that asks for it
 * with replog__own_calloc and answers a failure where it happens. */
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/map.h"
#include "server/replog/internal.h"

#define CHUNK ((size_t)1 << 20)
/* Bigger entries are rare and go to malloc. */
#define ARENA_MAX (CHUNK / 8)

struct chunk {
    size_t used;      /* bytes handed out, header included */
    size_t live;      /* entries not yet freed */
    size_t populated; /* bytes from the start populated */
};

/* Entries start 16-byte aligned, after the header. */
#define CHUNK_HDR ((sizeof(struct chunk) + 15) & ~(size_t)15)

#define POPULATE_STEP ((size_t)64 << 10)

/* Raft's allocations from this size on are mappings of their own, their
 * length in a header in front. */
#define BIG_MIN ((size_t)64 << 10)
#define BIG_HDR ((size_t)16)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct tb_map chunks; /* chunk address -> chunk */
static struct tb_map bigs;   /* large block -> its mapping */
static struct chunk *current;
static struct replog *stopper; /* whose process stops; atomic */
static size_t ram;             /* the machine's memory, in bytes */
static __thread int own;       /* the allocation under way is ours */

static struct chunk *chunk_of(void *p)
{
    return tb_map_get(&chunks, (uintptr_t)p & ~(uintptr_t)(CHUNK - 1));
}

/* A CHUNK-aligned mapping of CHUNK bytes. */
static struct chunk *chunk_new(void)
{
    uint8_t *p, *a;
    size_t head;

    p = mmap(NULL, 2 * CHUNK, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    a = (uint8_t *)(((uintptr_t)p + CHUNK - 1) & ~(uintptr_t)(CHUNK - 1));
    head = (size_t)(a - p);
    if (head > 0)
        munmap(p, head);
    munmap(a + CHUNK, CHUNK - head);
    if (tb_map_put(&chunks, (uintptr_t)a, a) != 0) {
        munmap(a, CHUNK);
        return NULL;
    }
    madvise(a, CHUNK, MADV_DONTFORK);
    madvise(a, POPULATE_STEP, MADV_POPULATE_WRITE);
    ((struct chunk *)a)->used = CHUNK_HDR;
    ((struct chunk *)a)->populated = POPULATE_STEP;
    return (struct chunk *)a;
}

static void chunk_drop(struct chunk *c)
{
    tb_map_del(&chunks, (uintptr_t)c);
    munmap(c, CHUNK);
}

static void *big_alloc(size_t size);

/* Zero-filled: see heap_malloc. */
static void *plain_alloc(size_t size)
{
    return size >= BIG_MIN ? big_alloc(size) : calloc(1, size);
}

/* Not raft's: a proposal whose entry cannot be had is refused, and the
 * server goes on. */
void *replog__entry_alloc(size_t size)
{
    struct chunk *c;
    void *p = NULL;

    size = (size + 15) & ~(size_t)15;
    if (size > ARENA_MAX)
        return plain_alloc(size);
    pthread_mutex_lock(&lock);
    if (current == NULL || current->used + size > CHUNK) {
        if (current != NULL && current->live == 0)
            chunk_drop(current);
        current = chunk_new();
    }
    if ((c = current) != NULL) {
        p = (uint8_t *)c + c->used;
        c->used += size;
        c->live++;
        while (c->populated < c->used) {
            madvise((uint8_t *)c + c->populated, POPULATE_STEP,
                    MADV_POPULATE_WRITE);
            c->populated += POPULATE_STEP;
        }
    }
    pthread_mutex_unlock(&lock);
    return p;
}

/* Zero-filled, as a fresh mapping is. */
static void *big_alloc(size_t size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t len = (size + BIG_HDR + page - 1) & ~(page - 1);
    uint8_t *p;
    int rv;

    if (size > SIZE_MAX - BIG_HDR - page ||
        (p = tb_map_unshared(len, 0)) == NULL)
        return NULL;
    *(size_t *)p = len;
    pthread_mutex_lock(&lock);
    rv = tb_map_put(&bigs, (uintptr_t)(p + BIG_HDR), p);
    pthread_mutex_unlock(&lock);
    if (rv != 0) {
        munmap(p, len);
        return NULL;
    }
    return p + BIG_HDR;
}

/* The block's mapping if `ptr` is a large block, else NULL; `take`: it is
 * forgotten too.  A large block starts BIG_HDR bytes into a page (a
 * multiple of 4 KiB), so any other pointer, nearly every one malloc gives,
 * is not looked up.  Called with the lock held. */
static uint8_t *big_find(void *ptr, int take)
{
    uint8_t *p;

    if (((uintptr_t)ptr & 4095) != BIG_HDR ||
        (p = tb_map_get(&bigs, (uintptr_t)ptr)) == NULL)
        return NULL;
    if (take)
        tb_map_del(&bigs, (uintptr_t)ptr);
    return p;
}

static void heap_free(void *data, void *ptr)
{
    struct chunk *c;
    uint8_t *big = NULL;

    (void)data;
    if (ptr == NULL)
        return;
    pthread_mutex_lock(&lock);
    c = chunk_of(ptr);
    if (c != NULL && --c->live == 0) {
        if (c == current)
            c->used = CHUNK_HDR; /* start over in place */
        else
            chunk_drop(c);
    }
    if (c == NULL)
        big = big_find(ptr, 1);
    pthread_mutex_unlock(&lock);
    if (big != NULL)
        munmap(big, *(size_t *)big);
    else if (c == NULL)
        free(ptr);
}

/* `p`, unless raft could not have its `size` bytes: see the top. */
static void *must(void *p, size_t size)
{
    struct replog *l = __atomic_load_n(&stopper, __ATOMIC_ACQUIRE);

    if (p == NULL && size > 0 && size <= ram && !own && l != NULL)
        replog__fail_stop(l, "out of memory: %zu bytes for libraft", size);
    return p;
}

/* Zero-filled too: raft leaves bytes of some of its buffers unwritten (a
 * barrier entry's payload, the padding of its encodings) and writes them
 * to the log and to peers, which would otherwise carry whatever the heap
 * last held there.  Raft's own allocations are small and few. */
static void *heap_malloc(void *data, size_t size)
{
    (void)data;
    return must(plain_alloc(size), size);
}

static void *heap_calloc(void *data, size_t n, size_t size)
{
    (void)data;
    if (size != 0 && n > SIZE_MAX / size)
        return must(NULL, SIZE_MAX);
    return must(plain_alloc(n * size), n * size);
}

/* Raft reallocates only what it allocated itself, never an entry. */
static void *heap_realloc(void *data, void *ptr, size_t size)
{
    uint8_t *big;
    void *q;
    size_t old;

    (void)data;
    pthread_mutex_lock(&lock);
    big = big_find(ptr, 0);
    pthread_mutex_unlock(&lock);
    if (big == NULL && size < BIG_MIN)
        return must(realloc(ptr, size), size);
    if ((q = heap_malloc(NULL, size)) == NULL)
        return NULL;
    if (ptr != NULL) {
        old = big != NULL ? *(size_t *)big - BIG_HDR : malloc_usable_size(ptr);
        memcpy(q, ptr, old < size ? old : size);
        heap_free(NULL, ptr);
    }
    return q;
}

/* The log's writes are wal.c's own; raft_uv asks for an aligned buffer
 * only a few times, at start.  posix_memalign, not aligned_alloc: the
 * size need not be a multiple of the alignment. */
static void *heap_aligned_alloc(void *data, size_t alignment, size_t size)
{
    void *p;

    (void)data;
    return must(posix_memalign(&p, alignment, size) == 0 ? p : NULL, size);
}

static void heap_aligned_free(void *data, size_t alignment, void *ptr)
{
    (void)data;
    (void)alignment;
    free(ptr);
}

static struct raft_heap heap = {
    NULL,         heap_malloc,        heap_free,         heap_calloc,
    heap_realloc, heap_aligned_alloc, heap_aligned_free,
};

/* A forked child has none of the chunks (MADV_DONTFORK): one that opens a
 * log of its own starts from nothing. */
static void forget_chunks(void)
{
    pthread_mutex_init(&lock, NULL);
    tb_map_free(&chunks);
    tb_map_free(&bigs);
    current = NULL;
}

static void install(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);

    /* Unknown: every failure is taken for a shortage. */
    ram = pages > 0 && page > 0 ? (size_t)pages * (size_t)page : SIZE_MAX;
    tb_map_init(&chunks);
    tb_map_init(&bigs);
    raft_heap_set(&heap);
    pthread_atfork(NULL, NULL, forget_chunks);
}

void *replog__own_calloc(size_t n, size_t size)
{
    void *p;

    own = 1;
    p = raft_calloc(n, size);
    own = 0;
    return p;
}

void *replog__own_realloc(void *ptr, size_t size)
{
    void *p;

    own = 1;
    p = raft_realloc(ptr, size);
    own = 0;
    return p;
}

void replog__arena_init(struct replog *l)
{
    pthread_once(&once, install);
    __atomic_store_n(&stopper, l, __ATOMIC_RELEASE);
}

void replog__arena_forget(struct replog *l)
{
    struct replog *mine = l;

    __atomic_compare_exchange_n(&stopper, &mine, NULL, 0, __ATOMIC_ACQ_REL,
                                __ATOMIC_ACQUIRE);
}
