/* The replog tests' fixture: a test state machine that records what it
 * applies, a temporary directory and loop per test, deterministic payloads,
 * proposals and bounded waits.  Shared by test_raft.c and
 * test_raft_durability.c. */
#ifndef TB_TEST_RAFT_FIXTURE_H
#define TB_TEST_RAFT_FIXTURE_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "common/common.h"
#include "server/replog/replog.h"

#define WAIT_MS  30000
#define G1_COUNT (301 + 5) /* g1_len's lengths: 0..300, then 5 large */

struct rec {
    int64_t index;
    size_t len;
    uint8_t *data;
};

struct tfsm {
    struct rec *recs;
    size_t n, cap;
    size_t n_restored;     /* records that came from the latest restore */
    size_t n_applied;      /* apply calls since open */
    size_t ballast;        /* extra state bytes, to make snapshots big */
    const char *snap_gate; /* a slow serializer, waiting for this file to
                              exist (the loop goes on meanwhile) */
    int fail_restore;
};

struct fx {
    char dir[256];
    uv_loop_t loop;
    struct replog *l;
    struct tfsm fsm;
    char logbuf[16384];
    size_t loglen;
    int closed;
};

struct prop {
    struct fx *f;
    int fired;
    int status;
    int64_t index;
    int applied_first; /* the fsm had applied `index` when done fired */
};

void tfsm_clear(struct tfsm *f);

void tfsm_push(struct tfsm *f, int64_t index, const void *p, size_t len);

void tfsm_apply(void *data, int64_t index, const void *p, size_t len);

void put64(struct tb_wbuf *b, uint64_t v);

/* State: n, ballast, ballast bytes, then n x (index, len, bytes). */
int tfsm_snapshot(void *data, struct tb_wbuf *out);

int tfsm_restore(void *data, const void *buf, size_t len);

struct replog_fsm fsm_of(struct tfsm *f);

void capture_log(void *data, int level, const char *msg);

/* replog_config.free_space for a disk whose free space is always
 * *(const uint64_t *)data bytes, however much is written. */
int fixed_free_space(void *data, const char *dir, uint64_t *bytes);

void make_tmpdir(char *out, size_t n);

int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw);

void rm_rf(const char *dir);

int setup(void **state);

void close_cb(void *arg);

/* Runs the loop until *flag reaches want or WAIT_MS pass. */
int run_until(uv_loop_t *loop, const int *flag, int want);

/* Runs f's loop for `ms`, the tick included. */
void run_for(struct fx *f, uint64_t ms);

void fx_close(struct fx *f);

int teardown(void **state);

struct replog_config base_config(struct fx *f);

/* A snapshot every 64 entries (bytes permitting). */
struct replog_config churn_config(struct fx *f);

int fx_open(struct fx *f, const struct replog_config *c);

void gen(uint8_t *p, uint64_t seq, size_t len);

/* Lengths 0..300, then a few large ones that are not multiples of 8. */
size_t g1_len(uint64_t seq);

int rec_matches(const struct rec *r, uint64_t seq, size_t len);

void prop_done(void *arg, int status, int64_t index);

void propose_seq(struct fx *f, struct prop *p, uint64_t seq, size_t len);

/* Proposes one and waits for it to succeed. */
void propose_one(struct fx *f, uint64_t seq, size_t len);

int all_fired(struct prop *p, size_t n);

void wait_props(struct fx *f, struct prop *p, size_t n);

/* Snapshots complete after the child serializing them exits; waits until
 * n were taken and the latest is on disk. */
void wait_snapshots(struct fx *f, uint64_t n, struct replog_stats *s);

#endif
