/* Helpers of the recipe tests: connecting, asserting, reading the tree,
 * recording lock holds, and a TCP proxy the tests can cut.
 *
 * Every test runs against a real server (tumblerd or Apache ZooKeeper)
 * given as "127.0.0.1:PORT"; waits are bounded. */
#ifndef TB_RT_H
#define TB_RT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tumbler/recipes.h"
#include "tumbler/tumbler.h"

#define RT_SESSION_MS 4000

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__,   \
                    #cond);                                                    \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

#define CHECK_RC(expr, want)                                                   \
    do {                                                                       \
        int rc_ = (expr);                                                      \
        if (rc_ != (want)) {                                                   \
            fprintf(stderr, "%s:%d: %s = %s (%d), want %s\n", __FILE__,        \
                    __LINE__, #expr, tb_errname(rc_), rc_, tb_errname(want));  \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

extern const char *rt_hosts; /* set by main */

/* A client on its I/O thread, connected, states forwarded to the
 * recipes (and counted, see rt_states). */
struct tb_client *rt_connect(const char *hosts, int session_ms);
int64_t rt_now_ns(void);
int64_t rt_now_ms(void);
void rt_sleep_ms(int ms);

/* Children of `path` (0 if it does not exist). */
int rt_nchildren(struct tb_client *c, const char *path);
/* Children whose name contains `sub`. */
int rt_nchildren_with(struct tb_client *c, const char *path, const char *sub);
/* Deletes `path` and everything under it. */
void rt_rmr(struct tb_client *c, const char *path);
/* Waits up to ms for the children count of `path` to become `n`. */
int rt_wait_nchildren(struct tb_client *c, const char *path, int n, int ms);

/* 1 once `path` does not exist (waits up to ms). */
int rt_wait_gone(struct tb_client *c, const char *path, int ms);

/* One hold: who, its token, when it began and ended (CLOCK_MONOTONIC ns,
 * the same clock in every process of the machine). */
struct rt_hold {
    int64_t token;
    int64_t t0, t1;
    long who;
};
/* Appends "token t0 t1 who\n" to `file` in one write (O_APPEND). */
void rt_hold_log(const char *file, const struct rt_hold *h);
/* Reads a log; returns the count, *out malloc'ed. */
int rt_hold_read(const char *file, struct rt_hold **out);
/* No two holds overlap and tokens rise in hold order; prints a summary.
 * Returns 0 if so. */
int rt_hold_check(struct rt_hold *v, int n, const char *what);

/* ---- proxy ---- */
struct rt_proxy;
/* Listens on 127.0.0.1 (a free port) and forwards to 127.0.0.1:port. */
struct rt_proxy *rt_proxy_start(int port);
int rt_proxy_port(struct rt_proxy *p);
/* Arms a cut: the next client request with opcode `op` is forwarded to
 * the server (forward = 1) or dropped (0), then the connection is cut
 * before any reply reaches the client.  For `refuse_ms` afterwards new
 * connections are accepted and closed at once. */
void rt_proxy_cut_on(struct rt_proxy *p, int op, int forward, int refuse_ms);
/* Cuts every connection now; refuses new ones for refuse_ms. */
void rt_proxy_cut_all(struct rt_proxy *p, int refuse_ms);
/* Holds the client request that is the (skip+1)-th with opcode `op` from
 * now on (on any connection), and every later one on its connection,
 * until rt_proxy_release; replies still flow.  One hold at a time: a hold
 * armed while a request is held applies to the requests after it. */
void rt_proxy_hold_on(struct rt_proxy *p, int op, int skip);
void rt_proxy_hold_off(struct rt_proxy *p); /* disarms */
/* 1 once a request is held (and not released), 0 after `ms` if none is. */
int rt_proxy_wait_held(struct rt_proxy *p, int ms);
void rt_proxy_release(struct rt_proxy *p);
/* How many cuts happened. */
int rt_proxy_cuts(struct rt_proxy *p);
void rt_proxy_stop(struct rt_proxy *p);

/* A test's two clients of one server: `direct`, and `proxied` through a
 * proxy to it that the test cuts. */
struct rt_cut {
    struct rt_proxy *px;
    struct tb_client *direct, *proxied;
};
/* Starts the proxy to 127.0.0.1:port (a test's argument) and connects
 * both clients. */
void rt_cut_open(struct rt_cut *k, const char *port);
void rt_cut_close(struct rt_cut *k);
/* Waits (10 s at most) until the proxy has made `n` cuts in all. */
void rt_cut_wait(struct rt_cut *k, int n);

#endif
