/* The replog tests' fixture (raft_fixture.h). */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <raft.h>
#include <raft/uv.h>

#include "server/replog/envelope.h"
#include "server/replog/replog.h"

#include "raft_fixture.h"

/* ---- a test state machine: the list of applied entries ------------------ */

void tfsm_clear(struct tfsm *f)
{
    size_t i;

    for (i = 0; i < f->n; i++)
        free(f->recs[i].data);
    free(f->recs);
    f->recs = NULL;
    f->n = f->cap = 0;
}

void tfsm_push(struct tfsm *f, int64_t index, const void *p, size_t len)
{
    struct rec *r;

    if (f->n == f->cap) {
        f->cap = f->cap ? 2 * f->cap : 64;
        f->recs = realloc(f->recs, f->cap * sizeof *f->recs);
        assert_non_null(f->recs);
    }
    r = &f->recs[f->n++];
    r->index = index;
    r->len = len;
    r->data = malloc(len ? len : 1);
    assert_non_null(r->data);
    if (len)
        memcpy(r->data, p, len);
}

void tfsm_apply(void *data, int64_t index, const void *p, size_t len)
{
    struct tfsm *f = data;

    f->n_applied++;
    tfsm_push(f, index, p, len);
}

void put64(struct tb_wbuf *b, uint64_t v)
{
    uint8_t x[8];

    tb_store_be64(x, v);
    tb_wbuf_put(b, x, 8);
}

/* State: n, ballast, ballast bytes, then n x (index, len, bytes). */
int tfsm_snapshot(void *data, struct tb_wbuf *out)
{
    struct tfsm *f = data;
    size_t i;

    for (i = 0; f->snap_gate && access(f->snap_gate, F_OK) != 0; i++) {
        if (i == WAIT_MS)
            return TB_EIO;
        uv_sleep(1);
    }
    put64(out, f->n);
    put64(out, f->ballast);
    if (f->ballast > 0 && tb_wbuf_reserve(out, f->ballast) == 0) {
        for (i = 0; i < f->ballast; i++)
            out->base[out->len + i] = (uint8_t)(i * 2654435761u >> 13);
        out->len += f->ballast;
    }
    for (i = 0; i < f->n; i++) {
        put64(out, (uint64_t)f->recs[i].index);
        put64(out, f->recs[i].len);
        tb_wbuf_put(out, f->recs[i].data, f->recs[i].len);
    }
    return out->oom ? TB_ENOMEM : 0;
}

int tfsm_restore(void *data, const void *buf, size_t len)
{
    struct tfsm *f = data;
    const uint8_t *p = buf, *end = p + len;
    uint64_t n, i, idx, l;

    if (f->fail_restore)
        return TB_EDATAINCONSISTENCY;
    if (len < 16)
        return TB_EMARSHALLING;
    n = tb_load_be64(p);
    f->ballast = (size_t)tb_load_be64(p + 8);
    p += 16;
    if ((uint64_t)(end - p) < f->ballast)
        return TB_EMARSHALLING;
    p += f->ballast;
    tfsm_clear(f);
    for (i = 0; i < n; i++) {
        if (end - p < 16)
            return TB_EMARSHALLING;
        idx = tb_load_be64(p);
        l = tb_load_be64(p + 8);
        p += 16;
        if ((uint64_t)(end - p) < l)
            return TB_EMARSHALLING;
        tfsm_push(f, (int64_t)idx, p, (size_t)l);
        p += l;
    }
    f->n_restored = f->n;
    return p == end ? 0 : TB_EMARSHALLING;
}

struct replog_fsm fsm_of(struct tfsm *f)
{
    struct replog_fsm m = {f, tfsm_apply, tfsm_snapshot, tfsm_restore};
    return m;
}

/* ---- fixture: temp dir, loop, captured log ------------------------------ */

int fixed_free_space(void *data, const char *dir, uint64_t *bytes)
{
    (void)dir;
    *bytes = *(const uint64_t *)data;
    return 0;
}

void capture_log(void *data, int level, const char *msg)
{
    struct fx *f = data;
    int n;

    if (getenv("TB_TEST_VERBOSE"))
        fprintf(stderr, "  [replog %d] %s\n", level, msg);
    n = snprintf(f->logbuf + f->loglen, sizeof f->logbuf - f->loglen, "%s\n",
                 msg);
    if (n > 0 && (size_t)n < sizeof f->logbuf - f->loglen)
        f->loglen += (size_t)n;
}

void make_tmpdir(char *out, size_t n)
{
    const char *base = getenv("TB_TEST_TMPDIR");

    snprintf(out, n, "%s/tb_raft_XXXXXX", base ? base : "/tmp");
    assert_non_null(mkdtemp(out));
}

int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(p);
}

void rm_rf(const char *dir)
{
    nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);

    assert_non_null(f);
    make_tmpdir(f->dir, sizeof f->dir);
    assert_int_equal(uv_loop_init(&f->loop), 0);
    *state = f;
    return 0;
}

void close_cb(void *arg)
{
    ((struct fx *)arg)->closed++;
}

/* Runs the loop until *flag reaches want or WAIT_MS pass. */
int run_until(uv_loop_t *loop, const int *flag, int want)
{
    uint64_t end = uv_hrtime() + (uint64_t)WAIT_MS * 1000000;

    while (*flag < want) {
        if (uv_hrtime() > end)
            return 0;
        uv_run(loop, UV_RUN_ONCE);
    }
    return 1;
}

void run_for(struct fx *f, uint64_t ms)
{
    uint64_t end = uv_now(&f->loop) + ms;

    while (uv_now(&f->loop) < end)
        uv_run(&f->loop, UV_RUN_ONCE);
}

void fx_close(struct fx *f)
{
    int before = f->closed;

    replog_close(f->l, close_cb, f);
    assert_true(run_until(&f->loop, &f->closed, before + 1));
    assert_int_equal(f->closed, before + 1);
    f->l = NULL;
}

int teardown(void **state)
{
    struct fx *f = *state;

    if (f->l != NULL)
        fx_close(f);
    uv_run(&f->loop, UV_RUN_DEFAULT); /* finish any abandoned open */
    assert_int_equal(uv_loop_close(&f->loop), 0); /* no handle leaked */
    tfsm_clear(&f->fsm);
    rm_rf(f->dir);
    free(f);
    return 0;
}

struct replog_config base_config(struct fx *f)
{
    struct replog_config c;

    memset(&c, 0, sizeof c);
    c.dir = f->dir;
    c.server_id = 1;
    c.address = "127.0.0.1:9001";
    c.log = capture_log;
    c.log_data = f;
    /* Snapshots only when the policy's limits call them: the tests count
     * them, and a pause on a loaded machine must not add one. */
    c.snapshot_idle_ms = UINT_MAX;
    return c;
}

/* A snapshot every 64 entries (bytes permitting). */
struct replog_config churn_config(struct fx *f)
{
    struct replog_config c = base_config(f);

    c.snapshot_max_entries = 64;
    c.snapshot_trailing = 16;
    return c;
}

int fx_open(struct fx *f, const struct replog_config *c)
{
    struct replog_fsm m = fsm_of(&f->fsm);

    tfsm_clear(&f->fsm);
    f->fsm.n_restored = f->fsm.n_applied = 0;
    return replog_open(&f->l, &f->loop, c, &m);
}

/* ---- deterministic payloads --------------------------------------------- */

void gen(uint8_t *p, uint64_t seq, size_t len)
{
    size_t j;

    for (j = 0; j < len; j++)
        p[j] = (uint8_t)(seq * 131 + j * 7 + (j >> 8) + 1);
}

/* Lengths 0..300, then a few large ones that are not multiples of 8. */
size_t g1_len(uint64_t seq)
{
    static const size_t big[] = {4096, 4097, 65535, 65536 + 3, (1u << 20) + 5};

    if (seq <= 300)
        return (size_t)seq;
    return big[(seq - 301) % (sizeof big / sizeof big[0])];
}

int rec_matches(const struct rec *r, uint64_t seq, size_t len)
{
    uint8_t *want = malloc(len ? len : 1);
    int ok;

    gen(want, seq, len);
    ok = r->len == len && memcmp(r->data, want, len) == 0;
    free(want);
    return ok;
}

/* ---- proposals ---------------------------------------------------------- */

void prop_done(void *arg, int status, int64_t index)
{
    struct prop *p = arg;
    struct tfsm *m = &p->f->fsm;

    p->fired++;
    p->status = status;
    p->index = index;
    p->applied_first = m->n > 0 && m->recs[m->n - 1].index == index;
}

void propose_seq(struct fx *f, struct prop *p, uint64_t seq, size_t len)
{
    uint8_t *buf = malloc(len ? len : 1);

    assert_non_null(buf);
    gen(buf, seq, len);
    p->f = f;
    assert_int_equal(replog_propose(f->l, buf, len, prop_done, p), 0);
    memset(buf, 0xee, len ? len : 1); /* the payload was copied */
    free(buf);
}

void propose_one(struct fx *f, uint64_t seq, size_t len)
{
    struct prop p;

    memset(&p, 0, sizeof p);
    propose_seq(f, &p, seq, len);
    wait_props(f, &p, 1);
    assert_int_equal(p.status, 0);
}

int all_fired(struct prop *p, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (p[i].fired == 0)
            return 0;
    return 1;
}

void wait_props(struct fx *f, struct prop *p, size_t n)
{
    uint64_t end = uv_hrtime() + (uint64_t)WAIT_MS * 1000000;

    while (!all_fired(p, n)) {
        assert_true(uv_hrtime() < end);
        uv_run(&f->loop, UV_RUN_ONCE);
    }
}

/* Snapshots complete after the child serializing them exits; waits until
 * n were taken and the latest is on disk. */
void wait_snapshots(struct fx *f, uint64_t n, struct replog_stats *s)
{
    uint64_t end = uv_hrtime() + (uint64_t)WAIT_MS * 1000000;

    replog_get_stats(f->l, s);
    while (s->snapshots_taken < n || s->snapshot_busy) {
        assert_true(uv_hrtime() < end);
        uv_run(&f->loop, UV_RUN_NOWAIT);
        uv_sleep(1);
        replog_get_stats(f->l, s);
    }
}
