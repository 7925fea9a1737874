/* Shared declarations of the raw_proto test program: wire-level tests with
 * rawzk, for what the official C client cannot send or cannot show. raw_proto.c
 * holds the runner and the session, framing and error tests; raw_proto_ops.c
 * the 3.6+ opcodes, multi and create checks; raw_proto_watch.c the watch tests
 * (ordering, persistent and recursive watches, setWatches catch-up, removal);
 * raw_proto_sasl.c the SASL request. */
#ifndef TB_RAW_PROTO_H
#define TB_RAW_PROTO_H

#include "itest.h"
#include "rawzk.h"

/* Open a raw session with a 10 s timeout or fail the test (z was rz_init'ed). */
#define ROPEN(z)                                                               \
    do {                                                                       \
        IT_CHECKF(rz_open(&(z), it_hostport, 10000) == 0,                      \
                  "raw session to %s failed", it_hostport);                    \
    } while (0)

/* Wait for the next notification on z and check type and path (state must be 3). */
#define REXPECT_EVENT(z, wait_ms, etype, epath)                                \
    do {                                                                       \
        struct rz_event rev_;                                                  \
        int rr_ = rz_next_event(&(z), (wait_ms), &rev_);                       \
        IT_CHECKF(rr_ == 1, "no %s %s event (rc %d)", rz_event_name(etype),    \
                  (epath), rr_);                                               \
        IT_CHECKF(rev_.type == (etype) && strcmp(rev_.path, (epath)) == 0 &&   \
                      rev_.state == 3,                                         \
                  "event: got %s %s state %d, want %s %s state 3",             \
                  rz_event_name(rev_.type), rev_.path, rev_.state,             \
                  rz_event_name(etype), (epath));                              \
    } while (0)

/* No notification may be pending on z after a round trip plus wait_ms. */
#define RNO_EVENT(z, wait_ms)                                                  \
    do {                                                                       \
        struct rz_event rev_;                                                  \
        IT_EQ(rz_ping_read(&(z), NULL), 0);                                    \
        int rr_ = rz_next_event(&(z), (wait_ms), &rev_);                       \
        IT_CHECKF(rr_ == 0, "unexpected event %s %s (rc %d)",                  \
                  rr_ == 1 ? rz_event_name(rev_.type) : "-",                   \
                  rr_ == 1 ? rev_.path : "-", rr_);                            \
    } while (0)

/* "base/name" into a rotating static buffer. */
const char *rsub(const char *base, const char *name);
/* Create a persistent node with empty data; returns the error code. */
int rmk(struct rz *z, const char *path);
/* Multi header: {int type, boolean done, int err}. */
void mh(struct rz_w *w, int32_t type, int done, int32_t err);
/* A create record: path, empty data, open ACL, flags. */
void create_rec(struct rz_w *w, const char *path, int32_t flags);

void t_auth_and_whoami(void);
void t_auth_ids_bounded(void);
void t_get_ephemerals(void);
void t_all_children_number(void);
void t_multi_wire_failure(void);
void t_multi_wire_success(void);
void t_multi_read(void);
void t_create_path_checks(void);
void t_create_mode_checks(void);

void t_notify_before_reply(void);
void t_exists_watch_missing(void);
void t_watch_dedup(void);
void t_delete_events(void);
void t_persistent_watch(void);
void t_recursive_watch(void);
void t_persistent_plus_standard(void);
void t_wchp_data_watches(void);
void t_remove_check_watches(void);
void t_setwatches_catchup(void);
void t_setwatches2_persistent(void);
void t_close_session_events(void);
void t_session_expiry_raw(void);

void t_sasl(void);

#endif
