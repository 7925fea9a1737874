/* What a child of a lock's path is, from its name alone: the one table
 * that the engine (which nodes queue together, which refuse a lock) and
 * `tumbler locks` (what to list, what to name) both read.
 *
 * A lock node's name ends in a marker and the server's sequence number,
 * "%010d" of a Java int: "_c_<uuid>-lock-0000000007" (Curator's
 * InterProcessMutex, and ours), "_c_<uuid>-__READ__..." and "__WRIT__"
 * (InterProcessReadWriteLock), "<hex uuid>__lock__..." and "__rlock__"
 * (kazoo's Lock and WriteLock, ReadLock).  The children of one parent
 * draw their sequence numbers from one counter, so nodes of every kind
 * order together by that number (as Curator's fixForSorting and kazoo's
 * contender regex do, each for its own names), never by the whole name,
 * whose uuid in front is random.  Names of no lock kind are known only
 * well enough to say what they are in a message. */
#include <string.h>

#include "recipes/rcp.h"

#define SEQ_LEN 10 /* "%010d": 10 digits, or '-' and 9 */

static const struct {
    const char *marker;
    int kind;
    const char *what;
} seq_kinds[] = {
    {"lock-", TB_NODE_MUTEX, "a mutex's node (Curator InterProcessMutex)"},
    {"__WRIT__", TB_NODE_WRITE, "a read-write lock's writer"},
    {"__READ__", TB_NODE_READ, "a read-write lock's reader"},
    {"__lock__", TB_NODE_KAZOO_LOCK, "a kazoo Lock's or WriteLock's node"},
    {"__rlock__", TB_NODE_KAZOO_READ, "a kazoo ReadLock's node"},
    {"latch-", TB_NODE_LATCH, "an election's candidate (LeaderLatch)"},
    {"lease-", TB_NODE_LEASE, "a semaphore's lease"},
};

static const struct {
    const char *name;
    const char *what;
} plain_names[] = {
    {"locks", "a semaphore's gate (InterProcessSemaphoreV2)"},
    {"leases", "a semaphore's leases (InterProcessSemaphoreV2)"},
};

/* The sequence number a sequential create appended, read from the last
 * `len` characters of `name` as the server writes it, "%010d" of a Java
 * int: 10 digits; after a wrap '-' and 9 digits (-999999999..-1), or
 * '-' and 10 digits (-2147483648..-1000000000), one character more. */
static int seq_suffix(const char *name, size_t len, int64_t *out)
{
    size_t n = strlen(name), i;
    const char *s;
    int neg;
    int64_t v = 0;

    if (n < len)
        return -1;
    s = name + n - len;
    neg = s[0] == '-';
    for (i = neg; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    /* 11 characters only for what "%010d" cannot write in 10. */
    if (len > SEQ_LEN && (!neg || v < 1000000000 || v > 2147483648LL))
        return -1;
    *out = neg ? -v : v;
    return 0;
}

/* The row of seq_kinds whose marker ends the name just before its
 * sequence number, or -1.  Both lengths are tried: "lock-2147483647" and
 * "lock--1000000000" both put a '-' before 10 digits, and only whether
 * the marker ends before or at that '-' tells them apart. */
static int seq_row(const char *name, int64_t *seq)
{
    size_t n = strlen(name), k, i, len;

    for (len = SEQ_LEN; len <= SEQ_LEN + 1; len++) {
        if (seq_suffix(name, len, seq) != 0)
            continue;
        for (i = 0; i < sizeof seq_kinds / sizeof seq_kinds[0]; i++) {
            k = strlen(seq_kinds[i].marker);
            if (n - len >= k &&
                memcmp(name + n - len - k, seq_kinds[i].marker, k) == 0)
                return (int)i;
        }
    }
    return -1;
}

/* A sequence number ends `name`, of either length. */
static int parse_seq(const char *name, int64_t *out)
{
    return seq_suffix(name, SEQ_LEN, out) == 0 ||
                   seq_suffix(name, SEQ_LEN + 1, out) == 0
               ? 0
               : -1;
}

int tb_lock_node_kind(const char *name, int64_t *seq)
{
    int64_t s = 0;
    int row = name != NULL ? seq_row(name, &s) : -1;

    if (seq != NULL)
        *seq = row < 0 ? 0 : s;
    return row < 0 ? TB_NODE_OTHER : seq_kinds[row].kind;
}

int tb_lock_node_shared(int kind)
{
    return kind == TB_NODE_READ || kind == TB_NODE_KAZOO_READ;
}

/* kazoo's Semaphore: one node per lease, named by a bare uuid4().hex. */
static int kazoo_lease(const char *name)
{
    size_t i;

    for (i = 0; name[i] != '\0'; i++)
        if (strchr("0123456789abcdef", name[i]) == NULL)
            return 0;
    return i == 32;
}

const char *tb_lock_node_what(const char *name)
{
    int64_t seq;
    int row;
    size_t i;

    if (name == NULL)
        return "nothing";
    if ((row = seq_row(name, &seq)) >= 0)
        return seq_kinds[row].what;
    for (i = 0; i < sizeof plain_names / sizeof plain_names[0]; i++)
        if (strcmp(name, plain_names[i].name) == 0)
            return plain_names[i].what;
    if (kazoo_lease(name))
        return "a kazoo Semaphore's lease";
    if (parse_seq(name, &seq) == 0)
        return "a sequential node of no lock layout";
    return "a node of no lock layout";
}

/* In the order the server gave the numbers, across its counter's wrap
 * (2147483647, then -2147483648): by their difference as a Java int, so a
 * node made after the wrap queues behind those made before it, however
 * negative its number.  Nodes alive together are never 2^31 apart. */
static int by_seq(const void *a, const void *b)
{
    const struct rcp_child *x = a, *y = b;
    int32_t d = (int32_t)((uint32_t)x->seq - (uint32_t)y->seq);

    if (d != 0)
        return d < 0 ? -1 : 1;
    return strcmp(x->name, y->name);
}

int rcp_children_sort(const struct tb_strings *v, unsigned kinds,
                      struct rcp_child *out, const char **other)
{
    int i, n = 0;

    if (other != NULL)
        *other = NULL;
    for (i = 0; i < v->count; i++) {
        const char *s = v->v[i];
        int64_t seq;
        int kind = tb_lock_node_kind(s, &seq);
        if ((kinds & RCP_KIND(kind)) == 0) {
            if (other != NULL && *other == NULL)
                *other = s;
            continue;
        }
        out[n].name = s;
        out[n].seq = seq;
        out[n].kind = kind;
        n++;
    }
    qsort(out, (size_t)n, sizeof *out, by_seq);
    return n;
}
