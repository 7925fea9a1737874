/* The client's unit tests' scripted server (client_fixture.c): each
 * connect the client makes is one end of a socketpair, the test holds the
 * other (server_fd) and reads requests from it and writes replies; the
 * clock is fake_now.  setup/teardown reset them around each test. */
#ifndef TB_TEST_CLIENT_FIXTURE_H
#define TB_TEST_CLIENT_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "client/client.h"

extern int64_t fake_now;
extern int server_fd; /* the test's end of the current connection */
extern int connects;  /* how many times the client connected */
extern int refuse;    /* make the next connects fail */
extern int soft_mode; /* the allocation-failure scenario: peer may be gone */

int64_t clock_fn(void);
/* A thread's body: moves the clock 5 s on, 100 ms from now. */
void *advance_later(void *arg);
int hook(struct tb_client *c, const struct host *h);
/* Reads one frame from the client (bounded wait); returns its length. */
size_t srv_read(uint8_t *buf, size_t cap);
int srv_has_data(void);
void srv_send(struct tb_wbuf *w);
/* Reads the handshake into *rq and answers it (read-only or not); the
 * request's length. */
size_t srv_accept(int64_t sid, int32_t timeout, int readonly,
                  struct tb_connect_req *rq);
void srv_handshake(int64_t sid, int32_t timeout);
/* A reply frame: header then `body` bytes. */
void srv_reply(int32_t xid, int64_t zxid, int32_t err,
               const struct tb_wbuf *body);
void srv_event(int type, const char *path);
/* Closes a connected handle, the closeSession reply written beforehand
 * (close waits for it; its xid is the next one). */
void close_replied(struct tb_client *c);
/* Reads a request: its header, and the body in `body` (a view). */
struct tb_request_header srv_request(uint8_t *buf, size_t cap,
                                     struct tb_rd *body);
void pump(struct tb_client *c);
struct tb_client *make(const char *hosts, int timeout);
struct tb_client *connected(const char *hosts, int64_t sid);
int setup(void **state);
int teardown(void **state);

/* ---- callback recorders ---- */

struct rec {
    int calls, rc;
    char path[256];
    char value[256];
    int events, ev_type, ev_rc, ev_final;
    char ev_path[256];
};
void rec_stat(struct tb_client *c, int rc, const struct tb_stat *st,
              void *data);
void rec_data(struct tb_client *c, int rc, const void *v, size_t len,
              const struct tb_stat *st, void *data);
void rec_strings(struct tb_client *c, int rc, const struct tb_strings *v,
                 const struct tb_stat *st, void *data);
void rec_void(struct tb_client *c, int rc, void *data);
void rec_watch(struct tb_client *c, const struct tb_event *ev, void *data);

#endif
