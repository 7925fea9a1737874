/* The server's own figures of its log, from `mntr`: the ones here that
 * only the server can give.  tumblerd reports its log's writes as
 * zk_tumbler_log_writes; ZooKeeper times every commit of its transaction
 * log, and the count of those timings is its number of syncs
 * (zk_cnt_fsynctime).  tumblerd also sums how long they took, and how long
 * appends waited for one of its two writes on their way to end.  A server
 * with neither, or without mntr allowed, gives nothing and the figures are
 * left out. */
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tbbench.h"

static const char *const keys[] = {"zk_tumbler_log_writes", "zk_cnt_fsynctime"};
/* Figures of tumblerd's alone: the writes' time, submission to completion,
 * in microseconds (ZooKeeper's is in whole milliseconds, 0 for most syncs
 * here), and how long appends waited for their write to be submitted. */
static const char *const write_us = "zk_tumbler_log_write_us";
static const char *const appends = "zk_tumbler_log_appends";
static const char *const wait_us = "zk_tumbler_log_append_wait_us";

/* The value of "\n<key>\t" in `text`, or -1. */
static long long value_of(const char *text, const char *key)
{
    char k[64];
    const char *at;

    snprintf(k, sizeof(k), "\n%s\t", key);
    at = strstr(text, k);
    return at != NULL ? strtoll(at + strlen(k), NULL, 10) : -1;
}

static uint64_t told(const char *text, const char *key)
{
    long long v = value_of(text, key);

    return v >= 0 ? (uint64_t)v : UINT64_MAX;
}

int bn_log_figures(const struct bn_env *e, struct bn_log *out)
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
            out->writes = (uint64_t)v;
            out->write_us = told(buf, write_us);
            out->appends = told(buf, appends);
            out->wait_us = told(buf, wait_us);
            return 0;
        }
    }
    return -1;
}
