/* Shared declarations of the zkc_ops test program (official C client against a live server).
 * zkc_ops.c holds the runner and the node, data, watch and multi tests; zkc_ops_sess.c the ACL,
 * auth and session-lifecycle tests and the helper process that holds a session for them. */
#ifndef TB_ZKC_OPS_H
#define TB_ZKC_OPS_H

#include "itest.h"
#include "zcli.h"

#define ZKC_TIMEOUT 10000 /* session timeout used by most tests, ms */

/* Open a session or fail the test. */
#define OPEN(c)                                                                \
    IT_EQ(zc_open(&(c), it_hostport, ZKC_TIMEOUT, NULL, 10000), ZOO_CONNECTED_STATE)

/* Wait for the next event of `c` and check its type, path and tag. */
#define EXPECT_EVENT(c, wait_ms, etype, epath, etag)                           \
    do {                                                                       \
        struct zc_event ev_;                                                   \
        IT_CHECKF(zc_next_event(&(c), (wait_ms), &ev_),                        \
                  "no %s event for %s within %d ms", zc_event_name(etype),     \
                  (epath), (wait_ms));                                         \
        IT_CHECKF(ev_.type == (etype) && strcmp(ev_.path, (epath)) == 0 &&     \
                      ev_.tag == (etag),                                       \
                  "event: got %s %s tag %d, want %s %s tag %d",                \
                  zc_event_name(ev_.type), ev_.path, ev_.tag,                  \
                  zc_event_name(etype), (epath), (etag));                      \
    } while (0)

/* No event may arrive on `c` within wait_ms. */
#define EXPECT_NO_EVENT(c, wait_ms)                                            \
    do {                                                                       \
        struct zc_event ev_;                                                   \
        IT_CHECKF(!zc_next_event(&(c), (wait_ms), &ev_),                       \
                  "unexpected event %s %s tag %d", zc_event_name(ev_.type),    \
                  ev_.path, ev_.tag);                                          \
    } while (0)

/* Compare two Stats field by field; prints the first difference.  1 if equal. */
int stat_same(const struct Stat *a, const struct Stat *b);
/* Wall-clock milliseconds (to check ctime/mtime plausibility). */
int64_t wall_ms(void);
/* Create a persistent node with empty data; returns the rc. */
int mk(zhandle_t *zh, const char *path);
/* "base/name" into a static rotating buffer. */
const char *sub(const char *base, const char *name);

/* Entry point of the helper mode (argv[1] == "--hold"). */
int zkc_hold_main(int argc, char **argv);

void t_acl_get_set(void);
void t_acl_invalid(void);
void t_auth_digest(void);
void t_auth_digest_masking(void);
void t_auth_unknown_scheme(void);
void t_acl_ip(void);
void t_session_timeout_negotiation(void);
void t_session_keepalive(void);
void t_session_close_removes_ephemerals(void);
void t_session_expiry(void);
void t_session_reconnect(void);

#endif
