/* The server's own count of its synced log writes, from `mntr`: the one
 * figure here that only the server can give.  tumblerd reports its log's
 * writes as zk_tumbler_log_writes; ZooKeeper times every commit of its
 * transaction log, and the count of those timings is its number of syncs
 * (zk_cnt_fsynctime).  tumblerd also sums how long they took.  A server
 * with neither, or without mntr allowed, gives nothing and the figure is
 * left out. */
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tbbench.h"

static const char *const keys[] = {"zk_tumbler_log_writes", "zk_cnt_fsynctime"};
/* Their time, submission to completion, where it is kept in microseconds
 * (ZooKeeper's is in whole milliseconds, 0 for most syncs here). */
static const char *const times[] = {"zk_tumbler_log_write_us", NULL};

/* The value of "\n<key>\t" in `text`, or -1. */
static long long value_of(const char *text, const char *key)
{
    char k[64];
    const char *at;

    snprintf(k, sizeof(k), "\n%s\t", key);
    at = strstr(text, k);
    return at != NULL ? strtoll(at + strlen(k), NULL, 10) : -1;
}

int bn_synced_writes(const struct bn_env *e, uint64_t *writes, uint64_t *us)
{
    static char buf[65536];
    uint64_t deadline = bn_now_ns() + 2000000000ull;
    size_t used = 1;
    unsigned i;
    int fd;

    buf[0] = '\n'; /* so the first line matches "\n<key>\t" too */
    fd = socket(e->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, (const struct sockaddr *)&e->addr, e->addrlen) != 0 ||
        send(fd, "mntr", 4, MSG_NOSIGNAL) != 4) {
        close(fd);
        return -1;
    }
    while (used < sizeof(buf) - 1) {
        struct pollfd p = {fd, POLLIN, 0};
        uint64_t now = bn_now_ns();
        ssize_t n;
        if (now >= deadline ||
            poll(&p, 1, (int)((deadline - now) / 1000000) + 1) <= 0)
            break;
        if ((n = recv(fd, buf + used, sizeof(buf) - 1 - used, 0)) <= 0)
            break;
        used += (size_t)n;
    }
    close(fd);
    buf[used] = '\0';
    for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        long long v = value_of(buf, keys[i]);
        if (v >= 0) {
            long long t = times[i] ? value_of(buf, times[i]) : -1;
            *writes = (uint64_t)v;
            *us = t >= 0 ? (uint64_t)t : UINT64_MAX;
            return 0;
        }
    }
    return -1;
}
