/* Shared helpers of the client integration tests: the runner, checks,
 * connecting, recording watch events and states, a unique path per test,
 * server control and a TCP proxy that can cut connections. */
#ifndef IT_CLIENT_H
#define IT_CLIENT_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <tumbler/tumbler.h>

struct it_test {
    const char *name;
    void (*fn)(void);
};

extern const char *it_hostport; /* "127.0.0.1:PORT" of the server */
extern int it_failed;           /* the current test failed */

void it_fail_at(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#define CHECK(cond)                                                       \
    do {                                                                  \
        if (!(cond)) {                                                    \
            it_fail_at(__FILE__, __LINE__, "%s", #cond);                  \
            goto done;                                                    \
        }                                                                 \
    } while (0)
#define CHECK_RC(expr, want)                                              \
    do {                                                                  \
        int rc_ = (expr);                                                 \
        if (rc_ != (want)) {                                              \
            it_fail_at(__FILE__, __LINE__, "%s = %s, want %s", #expr,     \
                       tb_errname(rc_), tb_errname(want));                \
            goto done;                                                    \
        }                                                                 \
    } while (0)

int64_t it_now(void);
void it_sleep(int ms);
/* "/it-<pid>-<name>", the test's own subtree. */
const char *it_root(const char *name);

/* A started, connected handle (NULL and a failure otherwise). */
struct tb_client *it_connect(const char *hosts, int timeout_ms,
                             struct tb_options *extra);
/* 1 when whoAmI lists `id` ("scheme:id") for the connection. */
int it_has_id(struct tb_client *c, const char *id);
/* Deletes a subtree (best effort). */
void it_rmr(struct tb_client *c, const char *path);

/* Records watch events and state changes, thread-safely. */
struct it_ev {
    int type, rc, final;
    char path[200];
};
struct it_rec {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int n;
    struct it_ev ev[256];
    int nstates;
    int states[64];
};
void it_rec_init(struct it_rec *r);
void it_rec_watch(struct tb_client *c, const struct tb_event *ev, void *r);
void it_rec_state(struct tb_client *c, int state, void *r);
/* Waits until n events were recorded: 0, or -1 after timeout_ms. */
int it_rec_wait(struct it_rec *r, int n, int timeout_ms);
int it_rec_count(struct it_rec *r);
/* Waits until `state` was recorded. */
int it_rec_wait_state(struct it_rec *r, int state, int timeout_ms);

/* Server control (srvctl.sh): 0 on success. */
int it_server_stop(void);
int it_server_start(void);
int it_server_port(void);

/* A TCP proxy to the server on its own thread. */
struct it_proxy;
struct it_proxy *it_proxy_start(int upstream_port);
/* The same, listening on the IPv4 address `ip` instead of 127.0.0.1. */
struct it_proxy *it_proxy_start_at(const char *ip, int upstream_port);
int it_proxy_port(struct it_proxy *p);
/* Closes every relayed connection (new ones are still accepted). */
void it_proxy_cut(struct it_proxy *p);
/* Stops relaying bytes without closing (a silent, stalled network). */
void it_proxy_stall(struct it_proxy *p, int stalled);
/* Connections accepted from now on (deaf != 0) are held open and never
 * relayed, even after it_proxy_deaf(p, 0). */
void it_proxy_deaf(struct it_proxy *p, int deaf);
void it_proxy_stop(struct it_proxy *p);

extern const struct it_test it_ops_tests[];
extern const struct it_test it_session_tests[];
extern const struct it_test it_sasl_tests[];
extern const struct it_test it_tls_tests[];
extern const struct it_test it_driver_tests[];

#endif
