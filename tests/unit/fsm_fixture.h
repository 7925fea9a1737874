/* The state machine's test fixture, shared by test_fsm.c (operations) and
 * test_fsm_state.c (determinism, snapshots, allocation failure): one fsm
 * whose hooks record what they report, txn builders, and allocation
 * failure injection through the linker's --wrap of malloc/calloc/realloc. */
#ifndef TB_TEST_FSM_FIXTURE_H
#define TB_TEST_FSM_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include "server/fsm/fsm.h"

/* A snapshot's header (fsm_snap.c), the session count after it. */
#define SNAP_HEADER 48

/* The Nth allocation from now fails (-1: none); allocations counted. */
extern long fail_countdown;
extern long alloc_calls;

/* The fixture: one fsm, what its hooks reported, and the caller identity
 * the next txns carry. */
struct fx {
    struct fsm *f;
    int64_t zxid;
    int64_t time;
    struct tb_wbuf ids;
    int32_t nids;
    int super;
    int flags; /* TB_TXN_* */
    /* recorded by the hooks */
    int results;
    int rc;
    int64_t res_zxid;
    int32_t res_type;
    int64_t res_origin;
    struct tb_wbuf body;
    struct tb_wbuf ev;     /* "type path|" per event */
    struct tb_wbuf ev_acl; /* "n|" per event: ACL element count */
    struct tb_wbuf sess;   /* "+id|" / "-id|" */
    struct tb_wbuf quota;  /* "path what=used/limit|" per quota report */
    int hook_calls;
    uint64_t digest; /* of everything the hooks reported */
};

void chk(struct fx *x);
struct fx *fx_new(void);
void fx_free(struct fx *x);
void fx_id(struct fx *x, const char *scheme, const char *id);
void encode_txn(struct fx *x, int32_t type, int64_t session,
                       struct tb_str body, struct tb_wbuf *out);
int apply_raw(struct fx *x, const void *p, size_t n);
int apply(struct fx *x, int32_t type, int64_t session,
                 const struct tb_wbuf *body);
int64_t open_session(struct fx *x, int32_t timeout);
int close_session(struct fx *x, int64_t sid);
int create_full(struct fx *x, int64_t sid, int32_t type,
                       struct tb_str path, struct tb_str data,
                       struct tb_vec acl, int32_t flags, int64_t ttl);
int create(struct fx *x, int64_t sid, const char *path, int32_t flags);
int create_acl(struct fx *x, int64_t sid, const char *path,
                      struct tb_vec acl);
int del(struct fx *x, int64_t sid, const char *path, int32_t version);
int set_data(struct fx *x, int64_t sid, const char *path,
                    struct tb_str data, int32_t version);
int set_acl(struct fx *x, int64_t sid, const char *path,
                   struct tb_vec acl, int32_t version);
int delete_container(struct fx *x, const char *path);
struct tb_stat stat_of(struct fx *x, const char *path);
int exists(struct fx *x, const char *path);
void ev_is(struct fx *x, const char *expect);
void body_path_is(struct fx *x, const char *expect);
struct tb_stat body_stat(struct fx *x, size_t off);
void snap(struct fx *x, struct tb_wbuf *w);
void assert_snapshot_is(struct fx *x, const struct tb_wbuf *a);
uint64_t doc_checksum(const uint8_t *p, size_t n);
void reseal(struct tb_wbuf *w);
struct tb_vec one_acl(struct tb_wbuf *w, int32_t perms,
                             const char *scheme, const char *id);

/* Multi: a request under construction, and readers of its results. */
struct multi {
    struct tb_wbuf w;
};
void m_create(struct multi *m, int32_t type, const char *path,
                     int32_t flags, int64_t ttl);
void m_delete(struct multi *m, const char *path, int32_t version);
void m_set(struct multi *m, const char *path, int32_t version);
void m_check(struct multi *m, const char *path, int32_t version);
int m_apply(struct fx *x, int64_t s, struct multi *m);
void res_hdr(struct tb_rd *r, int32_t type, int32_t err);
void res_end(struct tb_rd *r);
void res_path(struct tb_rd *r, const char *expect);

#endif
