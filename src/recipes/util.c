/* Small helpers of the recipes: random uuids for node names, paths and
 * the default node data.
 *
 * Node names follow Curator's protected mode: "_c_" + uuid + "-" + name +
 * the server's 10-digit sequence (kinds.c reads them back). */
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

int rcp_ms_left(int64_t deadline)
{
    int64_t left;

    if (deadline < 0)
        return -1;
    left = deadline - rcp_now_ms();
    return left <= 0 ? 0 : left > INT32_MAX ? INT32_MAX : (int)left;
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

int rcp_unref(pthread_mutex_t *mu, int *refs)
{
    int last;

    pthread_mutex_lock(mu);
    last = --*refs == 0;
    pthread_mutex_unlock(mu);
    return last;
}
