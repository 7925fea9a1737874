/* Unit tests of the snapshots' own files (src/server/replog/snapstore.c)
 * through replog, on a temporary directory and a real libuv loop: a
 * snapshot is its state file alone (no raft_uv file), comes back on load
 * and on snapshot_get, a stale file is written over, a snapshot of an
 * older tumblerd (its state inline, in raft_uv's files) moves into a file
 * of this format, a snapshot installed over entries of another term voids
 * them, a state that cannot be written is removed, a damaged one stops
 * the log from opening with a message that names it, and only raft_uv's
 * files go, not others in the data directory. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "server/replog/internal.h"
#include "server/replog/wal.h"

#include "address_space.h"
#include "raft_fixture.h"

#define MIN_PROPS 200
#define MAX_PROPS 2000
#define PROP_LEN  1000

struct listing {
    uint64_t state[8]; /* indexes of the state-<index> files */
    unsigned n_state;
    uint64_t latest;   /* the highest of them */
    unsigned n_uv;     /* raft_uv's snapshot files */
};

static void list_dir(const struct fx *f, struct listing *out)
{
    struct dirent *de;
    int end;
    DIR *d = opendir(f->dir);

    memset(out, 0, sizeof *out);
    assert_non_null(d);
    while ((de = readdir(d)) != NULL) {
        if (sscanf(de->d_name, "state-%" SCNx64 "%n", &out->state[out->n_state],
                   &end) == 1 &&
            de->d_name[end] == '\0') {
            if (out->state[out->n_state] > out->latest)
                out->latest = out->state[out->n_state];
            assert_true(++out->n_state < 8);
        }
        out->n_uv += strncmp(de->d_name, "snapshot-", 9) == 0;
    }
    closedir(d);
}

static int has_state(const struct listing *l, uint64_t index)
{
    unsigned i;

    for (i = 0; i < l->n_state; i++)
        if (l->state[i] == index)
            return 1;
    return 0;
}

static void state_file(const struct fx *f, uint64_t index, char *path, size_t n)
{
    snprintf(path, n, "%s/state-%016" PRIx64, f->dir, index);
}

/* Proposals from `seq` on until two more snapshots are taken (one is due
 * every 64 entries, later when the child serializing one is slow); how
 * many. */
static int snapshot_twice(struct fx *f, int seq)
{
    struct replog_stats s;
    uint64_t want;
    int n = 0;

    replog_get_stats(f->l, &s);
    want = s.snapshots_taken + 2;
    do {
        propose_one(f, (uint64_t)(seq + n), PROP_LEN);
        replog_get_stats(f->l, &s);
    } while (++n < MIN_PROPS || (s.snapshots_taken < want && n < MAX_PROPS));
    wait_snapshots(f, want, &s);
    return n;
}

static int write_and_snapshot(struct fx *f, const struct replog_config *c)
{
    assert_int_equal(fx_open(f, c), 0);
    return snapshot_twice(f, 0);
}

static void assert_all_back(struct fx *f, int n)
{
    int i;

    assert_int_equal(f->fsm.n, n);
    assert_true(f->fsm.n_restored > 0);
    for (i = 0; i < n; i++)
        assert_true(rec_matches(&f->fsm.recs[i], (uint64_t)i, PROP_LEN));
}

/* The snapshot is its state file alone, which starts with the header
 * that names its term, index and configuration; a reopen restores from
 * it, past the state-tmp a crash in the next snapshot's write leaves.  Two
 * state files at most: the latest snapshot's and the one before it. */
static void test_state_in_own_file(void **state)
{
    struct fx *f = *state;
    struct replog_config c = churn_config(f);
    struct listing l;
    char path[600], magic[8];
    int fd, n = write_and_snapshot(f, &c);

    fx_close(f);
    list_dir(f, &l);
    assert_true(l.latest > 0);
    assert_int_equal(l.n_uv, 0);
    assert_true(l.n_state >= 1 && l.n_state <= 2);
    state_file(f, l.latest, path, sizeof path);
    fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(read(fd, magic, sizeof magic), sizeof magic);
    close(fd);
    assert_memory_equal(magic, "TBSNAP01", 8);
    snprintf(path, sizeof path, "%s/state-tmp", f->dir);
    fd = open(path, O_WRONLY | O_CREAT, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "TBSNAP01", 8), 8); /* cut short */
    close(fd);

    assert_int_equal(fx_open(f, &c), 0);
    assert_all_back(f, n);
}

/* One more snapshot, the stale state file (the one no snapshot needs any
 * more) held open meanwhile, so that its inode number cannot go to a new
 * file: whether the new state was written over it.  With `reading`, a
 * snapshot is being read (sent to a follower) as the new one is stored. */
static int stale_state_written_over(struct fx *f, int reading)
{
    struct replog_config c = churn_config(f);
    struct wal *w;
    struct replog_stats s;
    struct listing before, after;
    struct stat held, st;
    char path[600];
    uint64_t want;
    unsigned i;
    int k, fd, n = write_and_snapshot(f, &c);

    w = f->l->io.impl;
    w->snap_gets += (unsigned)reading;

    list_dir(f, &before);
    assert_int_equal(before.n_state, 2);
    i = before.state[0] == before.latest ? 1 : 0;
    state_file(f, before.state[i], path, sizeof path);
    fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    /* Exactly one more snapshot: a second would write over before.latest's
     * state, the one this test holds. */
    replog_get_stats(f->l, &s);
    want = s.snapshots_taken + 1;
    for (k = 0; s.snapshots_taken < want; k++) {
        assert_true(k < MAX_PROPS);
        propose_one(f, (uint64_t)(n + k), PROP_LEN);
        replog_get_stats(f->l, &s);
    }
    wait_snapshots(f, want, &s);
    w->snap_gets -= (unsigned)reading;
    list_dir(f, &after);
    assert_int_equal(after.n_state, 2);
    assert_true(has_state(&after, before.latest));
    assert_true(has_state(&after, after.latest));
    assert_true(after.latest > before.latest);
    state_file(f, after.latest, path, sizeof path);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(fstat(fd, &held), 0);
    close(fd);
    return held.st_nlink == 1 && held.st_ino == st.st_ino;
}

/* The next state is written over the stale file, not into a new one:
 * freeing and allocating blocks is what held the log's writes. */
static void test_stale_state_written_over(void **state)
{
    assert_true(stale_state_written_over(*state, 0));
}

/* Unless a snapshot is being read: begun before the last one was stored,
 * it reads the state that is stale now, which would change under it (its
 * checksum then fails, and the follower waits for the next try). */
static void test_state_read_not_written_over(void **state)
{
    assert_false(stale_state_written_over(*state, 1));
}

static void get_cb(struct raft_io_snapshot_get *req, struct raft_snapshot *snap,
                   int status)
{
    struct raft_snapshot **out = req->data;

    assert_int_equal(status, 0);
    *out = snap;
}

/* The latest snapshot as the log's snapshot_get hands it on. */
static struct raft_snapshot *get_snapshot(struct fx *f)
{
    struct raft_io_snapshot_get req;
    struct raft_snapshot *snap = NULL;
    uint64_t end = uv_hrtime() + (uint64_t)WAIT_MS * 1000000;

    req.data = &snap;
    assert_int_equal(f->l->io.snapshot_get(&f->l->io, &req, get_cb), 0);
    while (snap == NULL) {
        assert_true(uv_hrtime() < end);
        uv_run(&f->loop, UV_RUN_ONCE);
    }
    return snap;
}

/* What a follower would be sent is the state, with the snapshot's term
 * and configuration. */
static void test_get_reads_state(void **state)
{
    struct fx *f = *state;
    struct replog_config c = churn_config(f);
    struct raft_snapshot *snap;
    struct replog_snap decoded;
    struct listing l;

    write_and_snapshot(f, &c);
    list_dir(f, &l);
    snap = get_snapshot(f);
    assert_int_equal(snap->index, l.latest);
    assert_int_equal(snap->term, f->l->raft->current_term);
    assert_int_equal(snap->configuration.n, 1);
    assert_int_equal(snap->configuration.servers[0].id, 1);
    assert_int_equal(snap->configuration.servers[0].role, RAFT_VOTER);
    assert_int_equal(snap->n_bufs, 1);
    assert_int_equal(
        replog__snap_decode(snap->bufs[0].base, snap->bufs[0].len, &decoded),
        0);
    assert_int_equal(decoded.index, l.latest);
    replog__wal_snapshot_free(&snap);
}

static void put_cb(struct raft_io_snapshot_put *req, int status)
{
    *(int *)req->data = status + 1;
}

/* Not under ASan: see test_get_without_memory_answered. */
#ifndef __SANITIZE_ADDRESS__
static void got_cb(struct raft_io_snapshot_get *req, struct raft_snapshot *snap,
                   int status)
{
    if (snap != NULL)
        replog__wal_snapshot_free(&snap);
    *(int *)req->data = status + 1;
}

static void warm_work(uv_work_t *req)
{
    (void)req;
}

static void warm_done(uv_work_t *req, int status)
{
    (void)status;
    *(int *)req->data = 1;
}

/* In a child, which it ends: a snapshot read for a follower once no
 * more address space can be had (the buffer for its state cannot be); 0
 * if the read is answered RAFT_NOMEM. */
static int get_without_memory(struct fx *f)
{
    struct raft_io_snapshot_get req;
    uv_work_t warm;
    int done = 0, status;
    pid_t pid;

    fflush(NULL);
    if ((pid = fork()) == 0) {
        /* The loop and its worker threads first: a thread cannot be
         * started without address space. */
        warm.data = &done;
        if (uv_loop_fork(&f->loop) != 0 ||
            uv_queue_work(&f->loop, &warm, warm_work, warm_done) != 0)
            _exit(2);
        while (!done)
            uv_run(&f->loop, UV_RUN_ONCE);
        if (address_space_limit(16u << 10) != 0)
            _exit(3);
        done = 0;
        req.data = &done;
        if (f->l->io.snapshot_get(&f->l->io, &req, got_cb) != 0)
            _exit(5);
        while (!done)
            uv_run(&f->loop, UV_RUN_ONCE);
        _exit(done == RAFT_NOMEM + 1 ? 0 : 6);
    }
    assert_true(pid > 0);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}
#endif

/* A snapshot read for a follower with no memory for its state is answered
 * RAFT_NOMEM, which libraft 0.15 takes for a send not made: the buffer is
 * ours, allocated through raft's heap only for raft to free, and its
 * failure is no stop (arena.c), unlike raft's own.  Not under ASan, whose
 * allocator stops the process itself once no address space is left. */
static void test_get_without_memory_answered(void **state)
{
#ifdef __SANITIZE_ADDRESS__
    (void)state;
    skip();
#else
    struct fx *f = *state;
    struct replog_config c = churn_config(f);

    write_and_snapshot(f, &c);
    assert_int_equal(get_without_memory(f), 0);
#endif
}

/* A data directory of an older tumblerd, whose snapshots hold the state
 * themselves (compressed by raft_uv, as it did then), opens with every
 * record; its snapshot moves into a state file of this format, raft_uv's
 * files go, and the log goes on. */
static void test_inline_state_loads(void **state)
{
    struct fx *f = *state;
    struct replog_config c = churn_config(f);
    struct wal *w;
    struct raft_snapshot *snap;
    struct raft_io_snapshot_put req;
    struct listing l;
    uint64_t index;
    char path[600];
    unsigned i;
    int done = 0, n = write_and_snapshot(f, &c);

    /* The latest snapshot again, its state inline, stored the way raft_uv
     * stored it before the state files. */
    snap = get_snapshot(f);
    index = snap->index;
    w = f->l->io.impl;
    raft_uv_set_snapshot_compression(w->uv, true);
    req.data = &done;
    assert_int_equal(w->uv->snapshot_put(w->uv, 0, &req, snap, put_cb), 0);
    assert_true(run_until(&f->loop, &done, 1));
    assert_int_equal(done, 1); /* status 0 */
    replog__wal_snapshot_free(&snap);
    fx_close(f);
    list_dir(f, &l);
    assert_int_equal(l.n_uv, 2); /* the snapshot and its .meta */
    for (i = 0; i < l.n_state; i++) {
        state_file(f, l.state[i], path, sizeof path);
        assert_int_equal(unlink(path), 0);
    }

    assert_int_equal(fx_open(f, &c), 0);
    assert_all_back(f, n);
    list_dir(f, &l);
    assert_int_equal(l.n_uv, 0);
    assert_int_equal(l.n_state, 1);
    assert_int_equal(l.latest, index);
    n += snapshot_twice(f, n);
    fx_close(f);
    assert_int_equal(fx_open(f, &c), 0);
    assert_all_back(f, n);
}

static void append_cb(struct raft_io_append *req, int status)
{
    *(int *)req->data = status + 1;
}

/* A snapshot installed over a log that holds its last index with another
 * term (a deposed leader's entries, mend.c's sixth mend) voids that log;
 * a crash before the record that says so leaves the entries in place,
 * and the load drops them: none is applied, and the log goes on after the
 * snapshot, through any number of restarts. */
static void test_installed_snapshot_voids_other_term(void **state)
{
    struct fx *f = *state;
    struct replog_config c = churn_config(f);
    struct raft_io *io;
    struct raft_snapshot *snap;
    struct raft_io_snapshot_put put;
    struct raft_io_append app;
    struct raft_entry e[4];
    const struct raft_log *g;
    raft_index last;
    size_t kept = 0;
    int i, done = 0, n = write_and_snapshot(f, &c);

    io = &f->l->io;
    snap = get_snapshot(f);
    for (i = 0; i < n; i++)
        kept += f->fsm.recs[i].index <= (int64_t)snap->index;
    /* Four entries of a later term after the log's last, as a deposed
     * leader's: copies of that last entry (a proposal). */
    g = &f->l->raft->log;
    last = (raft_index)f->l->raft->last_stored;
    for (i = 0; i < 4; i++) {
        e[i] = g->entries[(g->back + g->size - 1) % g->size];
        e[i].term = snap->term + 1;
        e[i].batch = NULL;
    }
    assert_int_equal(io->set_term(io, snap->term + 1), 0);
    app.data = &done;
    assert_int_equal(io->append(io, &app, e, 4, append_cb), 0);
    assert_true(run_until(&f->loop, &done, 1));
    assert_int_equal(done, 1); /* status 0 */
    /* The snapshot, its state as it is, given the second of them for last
     * index and its own, earlier term: stored, and with trailing entries
     * past any index, no record voids the log, as after a crash between
     * the two. */
    snap->index = last + 2;
    put.data = &done;
    done = 0;
    assert_int_equal(io->snapshot_put(io, 1u << 30, &put, snap, put_cb), 0);
    assert_true(run_until(&f->loop, &done, 1));
    assert_int_equal(done, 1);
    replog__wal_snapshot_free(&snap);
    fx_close(f);

    assert_int_equal(fx_open(f, &c), 0);
    assert_int_equal(f->fsm.n, kept);
    propose_one(f, 99, PROP_LEN);
    assert_int_equal(f->fsm.recs[kept].index, (int64_t)last + 3);
    /* A second restart: the load wrote down what it dropped, so the entry
     * made since comes back.  It was dropped with the void ones, having
     * been read after them, at an index they held. */
    fx_close(f);
    assert_int_equal(fx_open(f, &c), 0);
    assert_int_equal(f->fsm.n, kept + 1);
    assert_int_equal(f->fsm.recs[kept].index, (int64_t)last + 3);
}

/* A snapshot installed past the log's end (as a leader sends one) voids
 * the log: its reset record starts the log after it.  With that state
 * file gone, the log does not open, and names the entries missing (it
 * opened empty after the snapshot before, the server's state gone back
 * to that one's, silently). */
static void test_reset_of_a_missing_snapshot_refused(void **state)
{
    struct fx *f = *state;
    struct replog_config c = churn_config(f);
    struct raft_io_snapshot_put put;
    struct raft_snapshot *snap;
    struct raft_io *io;
    struct listing l;
    struct wal *w;
    char path[600];
    int done = 0, i;

    (void)write_and_snapshot(f, &c);
    io = &f->l->io;
    snap = get_snapshot(f);
    snap->index = (raft_index)f->l->raft->last_stored + 10;
    put.data = &done;
    assert_int_equal(io->snapshot_put(io, 0, &put, snap, put_cb), 0);
    assert_true(run_until(&f->loop, &done, 1));
    assert_int_equal(done, 1);
    /* The reset record written (a close cancels what is not: a crash
     * before it, which the snapshot there makes good) */
    w = io->impl;
    for (i = 0; i < 1000 && (w->pending.len > 0 || w->inflight > 0); i++)
        uv_run(&f->loop, UV_RUN_ONCE);
    assert_true(w->pending.len == 0 && w->inflight == 0);
    replog__wal_snapshot_free(&snap);
    fx_close(f);
    list_dir(f, &l);
    assert_true(l.n_state >= 2);
    state_file(f, l.latest, path, sizeof path);
    assert_int_equal(unlink(path), 0);
    f->loglen = 0;
    assert_int_not_equal(fx_open(f, &c), 0);
    assert_non_null(strstr(f->logbuf, "are missing"));
}

/* Linked with --wrap=tb_map_unshared: fails once the wal named here has
 * no snapshot being stored (inside put_done, after the store). */
void *__real_tb_map_unshared(size_t len, int populated);
void *__wrap_tb_map_unshared(size_t len, int populated);
static struct wal *fail_after_put;

void *__wrap_tb_map_unshared(size_t len, int populated)
{
    if (fail_after_put != NULL && fail_after_put->put_req == NULL)
        return NULL;
    return __real_tb_map_unshared(len, populated);
}

/* An installed snapshot whose reset record cannot be written (no buffer
 * for it) stops the server (exit 74): going on, the next entries would
 * be numbered from the old log's end, and read back at those indexes
 * after a restart.  The restart reads the snapshot and drops the rest. */
static void test_reset_unwritable_stops(void **state)
{
    struct fx *f = *state;
    struct replog_config c = churn_config(f);
    struct raft_io_snapshot_put put;
    struct wal *w;
    int done = 0, status, n = write_and_snapshot(f, &c);
    pid_t pid;

    w = f->l->io.impl;
    fflush(NULL);
    if ((pid = fork()) == 0) {
        /* As when a leader's snapshot is stored: its put done. */
        w->n_spare = 0;
        w->pending.cap = w->pending.len; /* full: the record needs more */
        fail_after_put = w;
        put.data = &done;
        w->put_req = &put;
        w->put_cb = put_cb;
        w->put_index = (uint64_t)f->l->raft->last_stored + 10;
        w->put_trailing = 0;
        replog__wal_put_done(w, 0);
        _exit(done == 1 ? 0 : 1); /* went on */
    }
    assert_true(pid > 0);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), REPLOG_EXIT_LOG_FAILED);
    fx_close(f);
    assert_int_equal(fx_open(f, &c), 0);
    assert_int_equal(f->fsm.n, n);
}

enum { STOP_APPEND, STOP_TRUNCATE, STOP_INSTALL };

/* In a child, which it ends: the log's `step` fails, with no buffer for
 * its record or its store failed; the child's status. */
static int step_failing(struct fx *f, int step)
{
    struct wal *w = f->l->io.impl;
    struct raft_io_append req;
    struct raft_io_snapshot_put put;
    struct raft_entry e = {.term = f->l->raft->current_term,
                           .type = RAFT_COMMAND};
    uint8_t data[8] = {0};
    int done = 0, status;
    pid_t pid;

    fflush(NULL);
    if ((pid = fork()) == 0) {
        w->n_spare = 0;
        w->pending.cap = w->pending.len; /* full: the record needs more */
        fail_after_put = w;
        req.data = &done;
        e.buf.base = data;
        e.buf.len = sizeof data;
        if (step == STOP_APPEND) {
            (void)w->io->append(w->io, &req, &e, 1, append_cb);
        } else if (step == STOP_TRUNCATE) {
            (void)w->io->truncate(w->io, f->l->raft->last_stored);
        } else {
            put.data = &done;
            w->put_req = &put;
            w->put_cb = put_cb;
            w->put_index = (uint64_t)f->l->raft->last_stored + 10;
            w->put_trailing = 0;
            replog__wal_put_done(w, RAFT_IOERR);
        }
        _exit(0); /* went on */
    }
    assert_true(pid > 0);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

/* An append or a truncation the log cannot take, or a leader's snapshot
 * not stored, stops the server (exit 74) rather than be refused to
 * libraft 0.15, which does not survive it (wal.c, wal_io.c); a restart
 * has everything. */
static void test_log_refusals_stop(void **state)
{
    struct fx *f = *state;
    struct replog_config c = churn_config(f);
    int n = write_and_snapshot(f, &c);

    assert_int_equal(step_failing(f, STOP_APPEND), REPLOG_EXIT_LOG_FAILED);
    assert_int_equal(step_failing(f, STOP_TRUNCATE), REPLOG_EXIT_LOG_FAILED);
    assert_int_equal(step_failing(f, STOP_INSTALL), REPLOG_EXIT_LOG_FAILED);
    fx_close(f);
    assert_int_equal(fx_open(f, &c), 0);
    assert_int_equal(f->fsm.n, n);
}

/* A state the disk has no room for (here: state-tmp leads to /dev/full)
 * is removed at once rather than left holding what space it took, the
 * failure is counted with the write's own error, and the next snapshot is
 * stored, a second later: not after the next entry, as each try forks and
 * writes, nor after another limit of log.  Left in place, the link would
 * fail every later one.  Snapshots here come of the log's bytes alone. */
static void test_failed_state_removed(void **state)
{
    struct fx *f = *state;
    struct replog_config c = base_config(f);
    struct replog_stats s;
    struct listing l;
    struct stat st;
    char tmp[600];
    uint64_t failed_at, taken;
    int n = 0;

    c.snapshot_log_bytes = 64 * PROP_LEN;
    snprintf(tmp, sizeof tmp, "%s/state-tmp", f->dir);
    assert_int_equal(symlink("/dev/full", tmp), 0);
    assert_int_equal(fx_open(f, &c), 0);
    do {
        propose_one(f, (uint64_t)n, PROP_LEN);
        replog_get_stats(f->l, &s);
    } while (++n < MAX_PROPS && s.snapshots_failed == 0);
    failed_at = uv_hrtime();
    taken = s.snapshots_taken;
    assert_int_equal(s.snapshots_failed, 1);
    assert_non_null(strstr(f->logbuf, "No space left on device"));
    assert_non_null(strstr(f->logbuf, "next snapshot tried in 1000 ms"));
    assert_int_equal(lstat(tmp, &st), -1);

    /* Due again once that second has passed: taken at the next entry, not
     * after as many as the failed one waited for. */
    while (uv_hrtime() - failed_at < 1100 * 1000000ull)
        run_for(f, 10);
    replog_get_stats(f->l, &s);
    assert_int_equal(s.snapshots_taken, taken);
    propose_one(f, (uint64_t)n++, PROP_LEN);
    while (s.snapshots_taken == taken) {
        assert_true(uv_hrtime() - failed_at < (uint64_t)WAIT_MS * 1000000);
        run_for(f, 10);
        replog_get_stats(f->l, &s);
    }
    n += snapshot_twice(f, n);
    replog_get_stats(f->l, &s);
    assert_int_equal(s.snapshots_failed, 1);
    fx_close(f);
    list_dir(f, &l);
    assert_true(l.latest > 0);
    assert_true(has_state(&l, l.latest));
    assert_int_equal(fx_open(f, &c), 0);
    assert_all_back(f, n);
}

/* Flips a bit of the byte at `off`. */
static void flip(int fd, off_t off)
{
    uint8_t byte;

    assert_int_equal(pread(fd, &byte, 1, off), 1);
    byte ^= 0x40;
    assert_int_equal(pwrite(fd, &byte, 1, off), 1);
}

/* A state file damaged (one byte of its state or of its header), cut
 * short or unreadable: the log does not open, and says which file.  Gone: the
 * snapshot before it and the log's entries give every entry, or the log does
 * not open and says which entries are missing; never fewer entries. */
static void test_damaged_state_refused(void **state)
{
    struct fx *f = *state;
    struct replog_config c = churn_config(f);
    struct listing l;
    char path[600], moved[640], name[40];
    struct stat st;
    int fd, n = write_and_snapshot(f, &c);

    fx_close(f);
    list_dir(f, &l);
    state_file(f, l.latest, path, sizeof path);
    snprintf(name, sizeof name, "state-%016" PRIx64, l.latest);
    assert_int_equal(stat(path, &st), 0);

    fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    flip(fd, st.st_size / 2);
    f->loglen = 0;
    assert_int_not_equal(fx_open(f, &c), 0);
    assert_non_null(strstr(f->logbuf, name));
    flip(fd, st.st_size / 2); /* mended */

    flip(fd, 20); /* the term */
    f->loglen = 0;
    assert_int_not_equal(fx_open(f, &c), 0);
    assert_non_null(strstr(f->logbuf, name));
    assert_non_null(strstr(f->logbuf, "checksum mismatch"));
    flip(fd, 20);

    assert_int_equal(ftruncate(fd, st.st_size - 1), 0);
    close(fd);
    f->loglen = 0;
    assert_int_not_equal(fx_open(f, &c), 0);
    assert_non_null(strstr(f->logbuf, name));

    /* Unreadable (here a directory in its place: read fails, EISDIR): not
     * passed over for an older snapshot as a file of another format is. */
    snprintf(moved, sizeof moved, "%s.moved", path);
    assert_int_equal(rename(path, moved), 0);
    assert_int_equal(mkdir(path, 0700), 0);
    f->loglen = 0;
    assert_int_not_equal(fx_open(f, &c), 0);
    assert_non_null(strstr(f->logbuf, name));
    assert_non_null(strstr(f->logbuf, strerror(EISDIR)));
    assert_int_equal(rmdir(path), 0);
    assert_int_equal(rename(moved, path), 0);

    assert_int_equal(unlink(path), 0);
    f->loglen = 0;
    if (fx_open(f, &c) == 0)
        assert_all_back(f, n);
    else
        assert_non_null(strstr(f->logbuf, "are missing"));
}

/* A file `name` in f's directory, of a few bytes. */
static void put_file(const struct fx *f, const char *name)
{
    char path[600];
    int fd;

    snprintf(path, sizeof path, "%s/%s", f->dir, name);
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "notes\n", 6), 6);
    close(fd);
}

/* Whether `name` is in f's directory. */
static int exists(const struct fx *f, const char *name)
{
    char path[600];
    struct stat st;

    snprintf(path, sizeof path, "%s/%s", f->dir, name);
    return stat(path, &st) == 0;
}

/* raft_uv's files go once a snapshot of this format covers them, but only
 * files of the names raft_uv gives them: an operator's file in the data
 * directory whose name merely starts like one of theirs (a digit, or
 * "snapshot-") stays, through the start and the snapshots after it. */
static void test_other_files_stay(void **state)
{
    struct fx *f = *state;
    struct replog_config c = churn_config(f);
    static const char *const others[] = {"2024-notes.txt", "snapshot-notes",
                                         "snapshot-1-2-3.old"};
    static const char *const uv[] = {"0000000000000001-0000000000000001",
                                     "snapshot-1-2-3", "snapshot-1-2-3.meta"};
    unsigned i;
    int n = write_and_snapshot(f, &c);

    fx_close(f);
    for (i = 0; i < 3; i++) {
        put_file(f, others[i]);
        put_file(f, uv[i]);
    }
    assert_int_equal(fx_open(f, &c), 0);
    assert_all_back(f, n);
    n += snapshot_twice(f, n);
    fx_close(f);
    for (i = 0; i < 3; i++) {
        assert_true(exists(f, others[i]));
        assert_false(exists(f, uv[i]));
    }
    assert_int_equal(fx_open(f, &c), 0);
    assert_all_back(f, n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_state_in_own_file, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_stale_state_written_over, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_state_read_not_written_over, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_get_reads_state, setup, teardown),
        cmocka_unit_test_setup_teardown(test_get_without_memory_answered, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_inline_state_loads, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_installed_snapshot_voids_other_term, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_reset_of_a_missing_snapshot_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_log_refusals_stop, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_reset_unwritable_stops, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_failed_state_removed, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_damaged_state_refused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_other_files_stay, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
