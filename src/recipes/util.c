/* Small helpers of the recipes: random uuids for node names, paths, the
 * default node data, and sorting a lock's children by sequence number.
 *
 * Node names follow Curator's protected mode: "_c_" + uuid + "-" + name +
 * the server's 10-digit sequence.  Children are ordered by that trailing
 * number (as Curator's fixForSorting does), never by the whole name,
 * because the uuid in front is random. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "recipes/rcp.h"

static void random_bytes(uint8_t *b, size_t n)
{
    size_t got = 0;

    while (got < n) {
        ssize_t r = getrandom(b + got, n - got, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    if (got < n) { /* no getrandom: the same pool through the device */
        int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
        while (fd >= 0 && got < n) {
            ssize_t r = read(fd, b + got, n - got);
            if (r <= 0)
                break;
            got += (size_t)r;
        }
        if (fd >= 0)
            close(fd);
    }
    if (got < n) { /* last resort; uniqueness, not secrecy, matters */
        uint64_t x = (uint64_t)rcp_now_ms() ^ ((uint64_t)getpid() << 40) ^
                     (uint64_t)(uintptr_t)b;
        for (; got < n; got++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            b[got] = (uint8_t)x;
        }
    }
}

void rcp_uuid(char out[RCP_UUID_LEN + 1])
{
    uint8_t b[16];

    random_bytes(b, sizeof b);
    b[6] = (uint8_t)((b[6] & 0x0f) | 0x40); /* version 4 */
    b[8] = (uint8_t)((b[8] & 0x3f) | 0x80); /* RFC 4122 variant */
    snprintf(out, RCP_UUID_LEN + 1,
             "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
             "%02x%02x%02x%02x%02x%02x",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10],
             b[11], b[12], b[13], b[14], b[15]);
}

int64_t rcp_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

char *rcp_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);

    if (p != NULL)
        memcpy(p, s, n);
    return p;
}

char *rcp_join(const char *parent, const char *name)
{
    size_t a = strlen(parent), b = strlen(name);
    char *p;

    if (a == 1 && parent[0] == '/')
        a = 0; /* the root: "/" + name */
    p = malloc(a + b + 2);
    if (p == NULL)
        return NULL;
    memcpy(p, parent, a);
    p[a] = '/';
    memcpy(p + a + 1, name, b + 1);
    return p;
}

char *rcp_dirname(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t n = slash == NULL || slash == path ? 1 : (size_t)(slash - path);
    char *p = malloc(n + 1);

    if (p == NULL)
        return NULL;
    memcpy(p, slash == NULL ? "/" : path, n);
    p[n] = '\0';
    if (slash == NULL)
        p[0] = '/';
    return p;
}

void rcp_default_value(char *buf, size_t cap, size_t *len)
{
    char host[256];
    int n;

    if (gethostname(host, sizeof host) != 0)
        strcpy(host, "unknown");
    host[sizeof host - 1] = '\0';
    n = snprintf(buf, cap, "%s:%ld", host, (long)getpid());
    *len = n < 0 ? 0 : ((size_t)n < cap ? (size_t)n : cap - 1);
}

/* The client validates paths fully; this only refuses what would make
 * the recipes' own path arithmetic wrong. */
int rcp_path_ok(const char *path)
{
    size_t n;

    if (path == NULL || path[0] != '/')
        return 0;
    n = strlen(path);
    return n == 1 || path[n - 1] != '/';
}

/* The sequence number a sequential create appended: the last 10
 * characters, "%010d" of a Java int (so possibly negative after a wrap). */
static int parse_seq(const char *name, int64_t *out)
{
    size_t n = strlen(name), i;
    const char *s;
    int neg = 0;
    int64_t v = 0;

    if (n < 10)
        return -1;
    s = name + n - 10;
    for (i = 0; i < 10; i++) {
        if (i == 0 && s[i] == '-') {
            neg = 1;
            continue;
        }
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    *out = neg ? -v : v;
    return 0;
}

static int by_seq(const void *a, const void *b)
{
    const struct rcp_child *x = a, *y = b;

    if (x->seq != y->seq)
        return x->seq < y->seq ? -1 : 1;
    return strcmp(x->name, y->name);
}

int rcp_children_sort(const struct tb_strings *v, const char *name,
                      const char *other, struct rcp_child *out)
{
    int i, n = 0;

    for (i = 0; i < v->count; i++) {
        const char *s = v->v[i];
        int64_t seq;
        if (strstr(s, name) == NULL &&
            (other == NULL || strstr(s, other) == NULL))
            continue;
        if (parse_seq(s, &seq) != 0)
            continue;
        out[n].name = s;
        out[n].seq = seq;
        n++;
    }
    qsort(out, (size_t)n, sizeof *out, by_seq);
    return n;
}
