/* Unit tests of src/server/replog (replog) over the real raft_uv on a
 * temporary directory (TB_TEST_TMPDIR, default /tmp) and a real libuv loop:
 * the envelope, opening, proposals, close semantics and failures at open.
 * Every wait is bounded.  The durability guards are test_raft_durability.c;
 * here:
 *   G4  test_g4_*: apply has no failure return (checked at compile time). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/fs.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <raft.h>
#include <raft/fixture.h>
#include <raft/uv.h>

#include "server/replog/envelope.h"
#include "server/replog/internal.h"
#include "server/replog/replog.h"
#include "server/replog/replog_attach.h"

#include "address_space.h"
#include "raft_fixture.h"

/* ---- envelope ------------------------------------------------------------ */

static void test_envelope_entry(void **state)
{
    uint8_t buf[512], pay[320];
    const void *out;
    size_t len, n, size;

    (void)state;
    for (n = 0; n <= 300; n++) {
        gen(pay, n, n);
        size = replog__entry_size(n);
        assert_int_equal(size % 8, 0);
        assert_true(size >= n + REPLOG_ENTRY_HDR && size < n + 16);
        memset(buf, 0xa5, sizeof buf);
        replog__entry_encode(buf, pay, n);
        assert_int_equal(replog__entry_decode(buf, size, &out, &len), 0);
        assert_int_equal(len, n);
        assert_memory_equal(out, pay, n);
        assert_ptr_equal(out, buf + REPLOG_ENTRY_HDR);
        /* A buffer of any other length is refused, never over-read. */
        assert_int_equal(replog__entry_decode(buf, size + 8, &out, &len),
                         TB_EMARSHALLING);
        assert_int_equal(replog__entry_decode(buf, size - 1, &out, &len),
                         TB_EMARSHALLING);
    }
    replog__entry_encode(buf, pay, 5);
    buf[4] = 2; /* unknown version */
    assert_int_equal(replog__entry_decode(buf, 16, &out, &len),
                     TB_EMARSHALLING);
    buf[4] = 1;
    buf[6] = 1; /* reserved byte */
    assert_int_equal(replog__entry_decode(buf, 16, &out, &len),
                     TB_EMARSHALLING);
    assert_int_equal(replog__entry_decode(buf, 4, &out, &len), TB_EMARSHALLING);
}

static void test_envelope_snapshot(void **state)
{
    uint8_t buf[128];
    struct tb_wbuf d;
    struct replog_snap s, s2;
    const void *p;
    size_t len, total;
    int64_t index;

    (void)state;
    /* State at 1230, then entries 1232 ("ab") and 1234 (empty). */
    tb_wbuf_init(&d);
    replog__delta_put(&d, 1232, "ab", 2);
    replog__delta_put(&d, 1234, "", 0);
    assert_int_equal(d.len, 2 * REPLOG_DELTA_HDR + 2);
    replog__snap_header_encode(buf, 1234, 10, 1230, d.len);
    memset(buf + REPLOG_SNAP_HDR, 7, 10);
    memcpy(buf + REPLOG_SNAP_HDR + 10, d.base, d.len);
    total = REPLOG_SNAP_HDR + 10 + d.len;
    assert_int_equal(replog__snap_decode(buf, total, &s), 0);
    assert_int_equal(s.index, 1234);
    assert_int_equal(s.base_index, 1230);
    assert_int_equal(s.state_len, 10);
    assert_ptr_equal(s.state, buf + REPLOG_SNAP_HDR);
    s2 = s;
    assert_int_equal(replog__delta_next(&s, &index, &p, &len), 1);
    assert_int_equal(index, 1232);
    assert_int_equal(len, 2);
    assert_memory_equal(p, "ab", 2);
    assert_int_equal(replog__delta_next(&s, &index, &p, &len), 1);
    assert_int_equal(index, 1234);
    assert_int_equal(len, 0);
    assert_int_equal(replog__delta_next(&s, &index, &p, &len), 0);

    /* A record cut short, out of order or past the snapshot's index. */
    s = s2;
    s.delta_len = REPLOG_DELTA_HDR + 1;
    assert_int_equal(replog__delta_next(&s, &index, &p, &len), TB_EMARSHALLING);
    s = s2;
    s.base_index = 1232;
    assert_int_equal(replog__delta_next(&s, &index, &p, &len), TB_EMARSHALLING);
    s = s2;
    s.index = 1233;
    assert_int_equal(replog__delta_next(&s, &index, &p, &len), 1);
    assert_int_equal(replog__delta_next(&s, &index, &p, &len), TB_EMARSHALLING);
    tb_wbuf_free(&d);

    /* Truncated or extended, wrong magic, base past the index: refused. */
    assert_int_equal(replog__snap_decode(buf, total - 1, &s), TB_EMARSHALLING);
    assert_int_equal(replog__snap_decode(buf, total + 1, &s), TB_EMARSHALLING);
    assert_int_equal(replog__snap_decode(buf, 20, &s), TB_EMARSHALLING);
    replog__snap_header_encode(buf, 1229, 10, 1230, total - 58);
    assert_int_equal(replog__snap_decode(buf, total, &s), TB_EMARSHALLING);
    replog__snap_header_encode(buf, 1234, 10, 1230, total - 58);
    assert_int_equal(replog__snap_decode(buf, total, &s), 0);
    buf[0] ^= 1;
    assert_int_equal(replog__snap_decode(buf, total, &s), TB_EMARSHALLING);
}

/* ---- G4 ------------------------------------------------------------------ */

/* If apply ever grows a return value, this stops compiling. */
_Static_assert(__builtin_types_compatible_p(
                   __typeof__(((struct replog_fsm *)0)->apply),
                   void (*)(void *, int64_t, const void *, size_t)),
               "replog_fsm.apply must not be able to fail (G4)");

static void test_g4_apply_cannot_fail(void **state)
{
    struct fx *f = *state;
    struct replog_config c = base_config(f);
    struct prop p[3];

    /* Business errors live in the state machine's result, so three entries
     * whose "outcome" is an error still all apply, in order. */
    memset(p, 0, sizeof p);
    assert_int_equal(fx_open(f, &c), 0);
    propose_seq(f, &p[0], 0, 3);
    propose_seq(f, &p[1], 1, 3);
    propose_seq(f, &p[2], 2, 3);
    wait_props(f, p, 3);
    assert_int_equal(f->fsm.n, 3);
    assert_int_equal(p[2].index, p[0].index + 2);
}

/* ---- open / basics ------------------------------------------------------- */

static void test_open_creates_dir_and_leads(void **state)
{
    struct fx *f = *state;
    struct replog_config c = base_config(f);
    char nested[300];
    struct stat st;
    struct replog_stats s;

    snprintf(nested, sizeof nested, "%s/a/b", f->dir);
    c.dir = nested;
    assert_int_equal(fx_open(f, &c), 0);
    assert_int_equal(stat(nested, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_true(replog_is_leader(f->l));
    /* Index 1 holds the bootstrap configuration. */
    assert_int_equal(replog_last_applied(f->l), 1);
    replog_get_stats(f->l, &s);
    assert_int_equal(s.entries_applied, 0);
    assert_int_equal(s.snapshot_threshold, 0);
    assert_int_equal(s.snapshot_log_limit, 4u << 20);
    assert_true(s.free_bytes > 0);
    assert_int_equal(s.disk_checks >= 1, 1);
    fx_close(f);

    /* Reopening is not bootstrapping again. */
    assert_int_equal(fx_open(f, &c), 0);
    assert_int_equal(replog_last_applied(f->l), 1);
    assert_non_null(strstr(f->logbuf, "bootstrapped"));
    assert_null(strstr(strstr(f->logbuf, "bootstrapped") + 1, "bootstrapped"));
}

enum { CHILD_UNAVAILABLE, CHILD_OUT_OF_MEMORY };

/* In a child, which it ends: raft made unavailable (as after an error it
 * cannot undo) and the loop run, or an allocation of raft's failing (16
 * MiB, once no more address space can be had); the child's exit
 * status. */
static int child_status(struct fx *f, int what)
{
    pid_t pid;
    int status;

    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (what == CHILD_OUT_OF_MEMORY)
            _exit(address_space_limit(0) != 0             ? 2
                  : raft_malloc((size_t)16 << 20) == NULL ? 0
                                                          : 1);
        (void)uv_loop_fork(&f->loop); /* its own epoll set */
        f->l->raft->state = RAFT_UNAVAILABLE;
        run_for(f, 5000);
        _exit(0);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

/* Either stops the server, the first within a tick, with the log's exit
 * status: libraft 0.15 survives neither (replog.c's tick, arena.c); the
 * second not under ASan (address_space.h).  An entry the server asks for
 * is refused instead, and it goes on; so is a request of raft's for more
 * than the machine's memory, a length off the wire, not a shortage. */
static void test_raft_failures_stop(void **state)
{
    struct fx *f = *state;
    struct replog_config c = base_config(f);

    assert_int_equal(fx_open(f, &c), 0);
    assert_int_equal(child_status(f, CHILD_UNAVAILABLE),
                     REPLOG_EXIT_LOG_FAILED);
#ifndef __SANITIZE_ADDRESS__
    assert_int_equal(child_status(f, CHILD_OUT_OF_MEMORY),
                     REPLOG_EXIT_LOG_FAILED);
#endif
    assert_null(replog__entry_alloc((size_t)1 << 62));
    assert_null(raft_malloc((size_t)1 << 62));
    assert_true(replog_is_leader(f->l));
}

static void test_open_rejects_bad_config(void **state)
{
    struct fx *f = *state;
    struct replog_config c = base_config(f);
    struct replog_fsm m = fsm_of(&f->fsm);
    struct replog *l = (struct replog *)&m;

    c.server_id = 0;
    assert_int_equal(replog_open(&l, &f->loop, &c, &m), TB_EINVAL);
    assert_null(l);
    c.server_id = 1;
    m.restore = NULL;
    assert_int_equal(replog_open(&l, &f->loop, &c, &m), TB_EINVAL);
    m = fsm_of(&f->fsm);
    c.dir = "";
    assert_int_equal(replog_open(&l, &f->loop, &c, &m), TB_EINVAL);
}

static void test_propose_checks(void **state)
{
    struct fx *f = *state;
    struct replog_config c = base_config(f);
    struct prop p;

    memset(&p, 0, sizeof p);
    assert_int_equal(fx_open(f, &c), 0);
    assert_int_equal(replog_propose(f->l, NULL, 1, prop_done, &p), TB_EINVAL);
    assert_int_equal(
        replog_propose(f->l, "x", REPLOG_MAX_PAYLOAD + 1, prop_done, &p),
        TB_ETOOBIG);
    assert_int_equal(p.fired, 0);
}

/* ---- close semantics ----------------------------------------------------- */

struct closer {
    struct fx *f;
    int fired;
    int closed_seen; /* done fired after close cb: must stay 0 */
};

static void count_done(void *arg, int status, int64_t index)
{
    struct closer *k = arg;

    (void)index;
    /* A lone voter drains its appends at close: real outcomes only. */
    assert_int_equal(status, 0);
    if (k->f->closed)
        k->closed_seen++;
    k->fired++;
}

static void test_close_fires_every_done_once(void **state)
{
    struct fx *f = *state;
    struct replog_config c = base_config(f);
    struct closer k = {f, 0, 0};
    int i;

    assert_int_equal(fx_open(f, &c), 0);
    for (i = 0; i < 200; i++)
        assert_int_equal(replog_propose(f->l, "abcdefg", 7, count_done, &k), 0);
    replog_close(f->l, close_cb, f);
    assert_int_equal(replog_propose(f->l, "x", 1, count_done, &k), TB_ECLOSING);
    /* The drain's first step, then the tick's leadership poll before the
     * appends are on disk, as a loaded machine runs them: closing is no
     * loss of leadership, and the 200 still get their real outcome. */
    replog__submit(f->l);
    replog__poll_leader(f->l);
    assert_int_equal(k.fired, 0);
    assert_true(run_until(&f->loop, &f->closed, 1));
    f->l = NULL;
    assert_int_equal(k.fired, 200);
    assert_int_equal(k.closed_seen, 0);
    assert_int_equal(f->fsm.n, 200);
    uv_run(&f->loop, UV_RUN_NOWAIT);
    assert_int_equal(k.fired, 200);
    assert_int_equal(f->closed, 1);

    /* All 200 were durable. */
    assert_int_equal(fx_open(f, &c), 0);
    assert_int_equal(f->fsm.n, 200);
}

struct close_in_done {
    struct fx *f;
    int fired;
    int after_close;
    int propose_rc;
};

static void close_from_done(void *arg, int status, int64_t index)
{
    struct close_in_done *k = arg;

    (void)index;
    k->fired++;
    if (k->fired == 3) {
        assert_int_equal(status, 0);
        replog_close(k->f->l, close_cb, k->f);
        k->propose_rc = replog_propose(k->f->l, "y", 1, close_from_done, k);
    } else if (k->fired > 3) {
        k->after_close++;
    }
}

static void test_close_from_inside_done(void **state)
{
    struct fx *f = *state;
    struct replog_config c = base_config(f);
    struct close_in_done k = {f, 0, 0, 0};
    int i;

    assert_int_equal(fx_open(f, &c), 0);
    for (i = 0; i < 50; i++)
        assert_int_equal(replog_propose(f->l, "abc", 3, close_from_done, &k),
                         0);
    assert_true(run_until(&f->loop, &f->closed, 1));
    f->l = NULL;
    assert_int_equal(k.fired, 50);
    assert_int_equal(k.propose_rc, TB_ECLOSING);
}

struct chain {
    struct fx *f;
    int n;
    int64_t last_index;
};

static void chain_done(void *arg, int status, int64_t index)
{
    struct chain *k = arg;

    assert_int_equal(status, 0);
    assert_true(index > k->last_index);
    k->last_index = index;
    if (++k->n < 100) /* propose the next one from inside done */
        assert_int_equal(
            replog_propose(k->f->l, &k->n, sizeof k->n, chain_done, k), 0);
}

static void test_propose_from_done(void **state)
{
    struct fx *f = *state;
    struct replog_config c = base_config(f);
    struct chain k = {f, 0, 0};

    assert_int_equal(fx_open(f, &c), 0);
    assert_int_equal(replog_propose(f->l, &k.n, sizeof k.n, chain_done, &k), 0);
    assert_true(run_until(&f->loop, &k.n, 100));
    assert_int_equal(f->fsm.n, 100);
    assert_int_equal(replog_last_applied(f->l), k.last_index);
}

/* ---- failures at open -----------------------------------------------------
 */

static void test_restore_failure_fails_open(void **state)
{
    struct fx *f = *state;
    struct replog_config c = churn_config(f);
    struct prop p[100];
    size_t i;

    memset(p, 0, sizeof p);
    assert_int_equal(fx_open(f, &c), 0);
    for (i = 0; i < 100; i++)
        propose_seq(f, &p[i], i, 20);
    wait_props(f, p, 100);
    fx_close(f);

    f->fsm.fail_restore = 1;
    assert_int_equal(fx_open(f, &c), TB_EDATAINCONSISTENCY);
    assert_null(f->l);
    assert_non_null(strstr(f->logbuf, "rejected snapshot"));
    uv_run(&f->loop, UV_RUN_DEFAULT);
    f->fsm.fail_restore = 0;
    assert_int_equal(fx_open(f, &c), 0);
    assert_int_equal(f->fsm.n, 100);
}

/* A log made by server 1 is not server 2's: opening it as server 2 (a
 * copied data directory, a wrong serverId) is refused, not a server that
 * never leads. */
static void test_other_servers_log_refused(void **state)
{
    struct fx *f = *state;
    struct replog_config c = base_config(f);

    assert_int_equal(fx_open(f, &c), 0);
    fx_close(f);
    c.server_id = 2;
    assert_int_equal(fx_open(f, &c), TB_EDATAINCONSISTENCY);
    assert_null(f->l);
    assert_non_null(strstr(f->logbuf, "is server 1's, not server 2's"));
    uv_run(&f->loop, UV_RUN_DEFAULT);
    c.server_id = 1;
    assert_int_equal(fx_open(f, &c), 0);
}

/* 1: the page holding p is resident; 0: mapped, not resident; -1: not
 * mapped at all. */
static int resident(const void *p)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    unsigned char v = 0;

    if (mincore((void *)((uintptr_t)p & ~(uintptr_t)(page - 1)), 1, &v) != 0)
        return errno == ENOMEM ? -1 : -2;
    return v & 1;
}

/* Log entries are resident before they are first written (populated in
 * one call, not page by page) and are not inherited by a forked child.
 * Entries are written as they are handed out, as the log does: writing one
 * must not stop the populating of the pages after it.  raft_uv's few
 * aligned buffers are aligned. */
static void test_log_memory(void **state)
{
    uint8_t *e, *b, *more[256];
    pid_t pid;
    int status, i;

    (void)state;
    replog__arena_init(NULL);
    b = raft_aligned_alloc(4096, 10000);
    assert_non_null(b);
    assert_int_equal((uintptr_t)b % 4096, 0);
    memset(b, 0xff, 10000);
    raft_aligned_free(4096, b);
    e = replog__entry_alloc(200);
    assert_non_null(e);
    memset(e, 0xff, 200);
    assert_int_equal(resident(e + 4096), 1);
    for (i = 0; i < 256; i++) { /* 256 KiB: several populating steps */
        more[i] = replog__entry_alloc(1024);
        assert_non_null(more[i]);
        assert_int_equal(resident(more[i] + 1023), 1);
        memset(more[i], 0xff, 1024);
    }
    for (i = 0; i < 256; i++)
        raft_free(more[i]);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(resident(e) == -1 ? 0 : 1);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    raft_free(e);
}

/* Raft's large arrays are written at every append: a forked child does
 * not inherit them, small ones it does; calloc's are zeroed, and realloc
 * keeps what a block held, growing or shrinking, into or out of a large
 * block. */
static void test_large_blocks(void **state)
{
    uint8_t *m, *c, *small, *r;
    size_t i;
    pid_t pid;
    int status;

    (void)state;
    replog__arena_init(NULL);
    m = raft_malloc(100000);
    c = raft_calloc(1000, 100);
    small = raft_malloc(1000);
    assert_non_null(m);
    assert_non_null(c);
    assert_non_null(small);
    for (i = 0; i < 100000; i++)
        assert_int_equal(c[i], 0);
    memset(m, 0xab, 100000);
    memset(small, 0xcd, 1000);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(resident(m + 50000) == -1 && resident(c + 50000) == -1 &&
                      small[999] == 0xcd
                  ? 0
                  : 1);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    r = raft_realloc(m, 300000); /* large to larger */
    assert_non_null(r);
    assert_int_equal(r[0], 0xab);
    assert_int_equal(r[99999], 0xab);
    r = raft_realloc(r, 10); /* large to small */
    assert_non_null(r);
    assert_int_equal(r[9], 0xab);
    small = raft_realloc(small, 200000); /* small to large */
    assert_non_null(small);
    assert_int_equal(small[999], 0xcd);
    raft_free(r);
    raft_free(small);
    raft_free(c);
}

/* ---- the leader a server without a vote knows ---------------------------- */

/* Three voters and a standby (an observer), the last, over libraft's
 * raft_fixture: virtual time, an in-memory network, nothing sleeps. */
#define SB_N       4
#define SB_STANDBY 3
#define SB_VOTER   2 /* cut off with the standby */
#define SB_ELECT   1000u
#define SB_BEAT    100u

struct sb {
    struct raft_fixture f;
    struct tfsm fsm[SB_N];
    struct replog *l[SB_N];
};

static void sb_log(void *data, int level, const char *msg)
{
    (void)data;
    if (level <= REPLOG_LOG_ERROR)
        fprintf(stderr, "replog: %s\n", msg);
}

static void sb_init(struct sb *x)
{
    struct raft_configuration conf;
    unsigned i;

    memset(x, 0, sizeof *x);
    assert_int_equal(raft_fixture_initialize(&x->f), 0);
    for (i = 0; i < SB_N; i++) {
        struct replog_config c = {0};
        struct replog_fsm m = fsm_of(&x->fsm[i]);

        c.server_id = (int)i + 1;
        c.election_timeout_ms = SB_ELECT;
        c.heartbeat_timeout_ms = SB_BEAT;
        c.log = sb_log;
        assert_int_equal(replog_attach_new(&x->l[i], &c, &m), 0);
        assert_int_equal(raft_fixture_grow(&x->f, replog_attached_fsm(x->l[i])),
                         0);
        replog_attach(x->l[i], raft_fixture_get(&x->f, i));
    }
    assert_int_equal(raft_fixture_configuration(&x->f, SB_N - 1, &conf), 0);
    assert_int_equal(conf.servers[SB_STANDBY].role, RAFT_STANDBY);
    assert_int_equal(raft_fixture_bootstrap(&x->f, &conf), 0);
    raft_configuration_close(&conf);
    assert_int_equal(raft_fixture_start(&x->f), 0);
}

static void sb_close(struct sb *x)
{
    unsigned i;

    raft_fixture_close(&x->f);
    for (i = 0; i < SB_N; i++) {
        replog_attached_free(x->l[i]);
        tfsm_clear(&x->fsm[i]);
    }
}

/* What raft itself says server i's leader is. */
static int sb_raft_leader(struct sb *x, unsigned i)
{
    raft_id id = 0;
    const char *addr = NULL;

    raft_leader(raft_fixture_get(&x->f, i), &id, &addr);
    return (int)id;
}

/* Steps until the standby names `want`, or ms of virtual time pass, each
 * step checking what must hold at every step: server 1 leads, as server
 * 2 says, and a voter's leader is raft's own answer.  The time it took,
 * or -1. */
static int64_t sb_step_until(struct sb *x, int want, unsigned ms)
{
    raft_time start = raft_fixture_time(&x->f);
    unsigned i;

    while (replog_leader(x->l[SB_STANDBY]) != want) {
        if (raft_fixture_time(&x->f) - start > ms)
            return -1;
        raft_fixture_step(&x->f);
        for (i = 0; i < SB_N; i++)
            replog_attached_tick(x->l[i]);
        assert_int_equal(replog_leader(x->l[0]), 1);
        assert_int_equal(replog_leader(x->l[1]), 1);
        assert_int_equal(replog_leader(x->l[SB_VOTER]),
                         sb_raft_leader(x, SB_VOTER));
    }
    return (int64_t)(raft_fixture_time(&x->f) - start);
}

/* Cuts the standby and SB_VOTER off from every other server (both
 * directions), or back. */
static void sb_cut(struct sb *x, int cut)
{
    unsigned i, j;

    for (i = SB_VOTER; i < SB_N; i++)
        for (j = 0; j < SB_N; j++)
            if (j != i && cut) {
                raft_fixture_disconnect(&x->f, i, j);
                raft_fixture_disconnect(&x->f, j, i);
            } else if (j != i) {
                raft_fixture_reconnect(&x->f, i, j);
                raft_fixture_reconnect(&x->f, j, i);
            }
}

/* raft's follower tick makes only a voter a candidate when its leader
 * falls silent: a standby cut off from the leader would name it forever,
 * and the peer links' leaderless bound would never close its clients.
 * replog_leader says none once it has heard nothing for longer than the
 * election timeout, and the leader again as soon as it hears from it;
 * while it hears the heartbeats, the leader stays known, and a voter's
 * answer is raft's own throughout. */
static void test_standby_cut_off_knows_no_leader(void **state)
{
    struct sb *x = malloc(sizeof *x);
    int64_t t;

    (void)state;
    assert_non_null(x);
    sb_init(x);
    raft_fixture_elect(&x->f, 0);
    assert_true(sb_step_until(x, 1, 5 * SB_ELECT) >= 0);
    /* Heard from every heartbeat: known all along. */
    assert_int_equal(sb_step_until(x, 0, 5 * SB_ELECT), -1);
    assert_int_equal(replog_leader(x->l[SB_STANDBY]), 1);

    sb_cut(x, 1);
    t = sb_step_until(x, 0, 3 * SB_ELECT);
    assert_true(t >= 0); /* raft's own answer names server 1 forever */
    /* The last heartbeat came at most one interval (and the network's 15
     * ms) before the cut. */
    assert_true(t > (int64_t)(SB_ELECT - SB_BEAT - 20));
    assert_true(t <= (int64_t)(SB_ELECT + 2 * SB_BEAT));
    assert_int_equal(sb_raft_leader(x, SB_STANDBY), 1); /* raft's: stale */
    /* No leader for as long as it stays cut off. */
    assert_int_equal(sb_step_until(x, 1, 3 * SB_ELECT), -1);
    assert_int_equal(replog_leader(x->l[SB_STANDBY]), 0);

    sb_cut(x, 0);
    t = sb_step_until(x, 1, 3 * SB_ELECT);
    assert_true(t >= 0 && t <= (int64_t)(2 * SB_BEAT + 50));
    assert_int_equal(sb_step_until(x, 0, 3 * SB_ELECT), -1);
    sb_close(x);
    free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_envelope_entry),
        cmocka_unit_test(test_envelope_snapshot),
        cmocka_unit_test(test_log_memory),
        cmocka_unit_test(test_large_blocks),
        cmocka_unit_test(test_standby_cut_off_knows_no_leader),
        cmocka_unit_test_setup_teardown(test_g4_apply_cannot_fail, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_open_creates_dir_and_leads, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_raft_failures_stop, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_open_rejects_bad_config, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_propose_checks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_close_fires_every_done_once, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_close_from_inside_done, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_propose_from_done, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_restore_failure_fails_open, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_other_servers_log_refused, setup,
                                        teardown),
    };

    if (getenv("TB_TEST_FILTER")) /* e.g. TB_TEST_FILTER='test_g1*' */
        cmocka_set_test_filter(getenv("TB_TEST_FILTER"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
