/* Unit tests of a data directory an older tumblerd made: its term and vote,
 * which raft_uv kept in metadata1/metadata2, move into wal-meta
 * (src/server/replog/wal_term.c); raft_uv's snapshot moves into a state
 * file of this tumblerd's format (snapstore.c) and raft_uv's files go;
 * raft_uv's segment with the bootstrap configuration is still read until
 * a snapshot covers it, and refused when damaged (G2).
 *
 * The fixtures (in argv[1], tests/unit/fixtures; README.md there) are such
 * directories, as the replog of that tumblerd left them: server 1 at
 * 127.0.0.1:9001, closed cleanly; wal-meta of format 1, metadata1 at
 * version 1 (term 1, no vote).  datadir-raft-uv: five proposals of
 * g1_len(0..4) bytes, raft_uv's segment with the bootstrap configuration,
 * and wal-0000000000000001.  datadir-raft-uv-snapshot: a hundred of
 * g1_len(0..99) bytes with churn_config's snapshots, raft_uv's snapshot
 * files naming state-0000000000000041 (its bootstrap segment removed with
 * it). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <raft.h>
#include <raft/uv.h>

#include "server/replog/internal.h"
#include "server/replog/wal.h"

#include "raft_fixture.h"

static char fixture[512], fixture_snap[512];

static const char *const files[] = {"0000000000000001-0000000000000001",
                                    "metadata1", "metadata2",
                                    "wal-0000000000000001", "wal-meta"};
#define N_FILES (sizeof files / sizeof files[0])

/* A file's bytes (NULL, *n 0 if it does not exist). */
static uint8_t *slurp(const char *dir, const char *name, size_t *n)
{
    char path[512];
    struct stat st;
    uint8_t *b;
    int fd;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    *n = 0;
    if ((fd = open(path, O_RDONLY)) < 0) {
        assert_int_equal(errno, ENOENT);
        return NULL;
    }
    assert_int_equal(fstat(fd, &st), 0);
    b = malloc((size_t)st.st_size + 1);
    assert_non_null(b);
    assert_int_equal(read(fd, b, (size_t)st.st_size), st.st_size);
    close(fd);
    *n = (size_t)st.st_size;
    return b;
}

static void spit(const char *dir, const char *name, const void *b, size_t n)
{
    char path[512];
    int fd;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, b, n), (ssize_t)n);
    close(fd);
}

/* The fixture copied into f->dir, in place of what is there. */
static void copy_fixture(struct fx *f)
{
    char path[512];
    uint8_t *b;
    size_t i, n;

    for (i = 0; i < N_FILES; i++) {
        snprintf(path, sizeof path, "%s/%s", f->dir, files[i]);
        unlink(path);
    }
    for (i = 0; i < N_FILES; i++)
        if ((b = slurp(fixture, files[i], &n)) != NULL) {
            spit(f->dir, files[i], b, n);
            free(b);
        }
}

/* raft_uv's metadata file: format 1, version, term, vote, little-endian. */
static void put_uv_meta(struct fx *f, int which, uint64_t version,
                        uint64_t term, uint64_t vote)
{
    uint64_t v[4] = {1, version, term, vote};
    uint8_t b[32];
    char name[16];
    int i, k;

    for (i = 0; i < 4; i++)
        for (k = 0; k < 8; k++)
            b[i * 8 + k] = (uint8_t)(v[i] >> (8 * k));
    snprintf(name, sizeof name, "metadata%d", which);
    spit(f->dir, name, b, sizeof b);
}

static int exists(const struct fx *f, const char *name)
{
    char path[512];

    snprintf(path, sizeof path, "%s/%s", f->dir, name);
    return access(path, F_OK) == 0;
}

/* wal-meta's term and vote, checking it is of format 2. */
static void meta_term(const struct fx *f, uint64_t *term, uint64_t *vote)
{
    size_t n;
    uint8_t *b = slurp(f->dir, "wal-meta", &n);

    assert_non_null(b);
    assert_int_equal(n, 80);
    assert_memory_equal(b, "TBWALMT2", 8);
    *term = tb_load_be64(b + 64);
    *vote = tb_load_be64(b + 72);
    free(b);
}

/* The files of `from` whose names start with `prefix` copied into
 * f->dir. */
static void copy_files(struct fx *f, const char *from, const char *prefix)
{
    DIR *d = opendir(from);
    struct dirent *de;
    uint8_t *b;
    size_t n;

    assert_non_null(d);
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.' ||
            strncmp(de->d_name, prefix, strlen(prefix)) != 0)
            continue;
        b = slurp(from, de->d_name, &n);
        assert_non_null(b);
        spit(f->dir, de->d_name, b, n);
        free(b);
    }
    closedir(d);
}

static void copy_dir(struct fx *f, const char *from)
{
    copy_files(f, from, "");
}

/* The fixture's five proposals, applied in order. */
static void check_entries(const struct fx *f)
{
    size_t i;

    assert_int_equal(f->fsm.n, 5);
    for (i = 0; i < 5; i++)
        assert_true(rec_matches(&f->fsm.recs[i], i, g1_len(i)));
}

/* Every file's bytes, to tell that a refused start changed none. */
struct dir_bytes {
    uint8_t *b[N_FILES];
    size_t n[N_FILES];
};

static void take(const struct fx *f, struct dir_bytes *d)
{
    size_t i;

    for (i = 0; i < N_FILES; i++)
        d->b[i] = slurp(f->dir, files[i], &d->n[i]);
}

static void same_as(const struct fx *f, struct dir_bytes *d)
{
    struct dir_bytes now;
    size_t i;

    take(f, &now);
    for (i = 0; i < N_FILES; i++) {
        assert_int_equal(now.n[i], d->n[i]);
        assert_true((now.b[i] == NULL) == (d->b[i] == NULL));
        if (now.b[i] != NULL)
            assert_memory_equal(now.b[i], d->b[i], d->n[i]);
        free(now.b[i]);
        free(d->b[i]);
    }
}

/* libraft 0.15 leaks a few KiB on its way out of a failed load; those
 * allocations are kept out of the leak check, and only those. */
void __lsan_disable(void) __attribute__((weak));
void __lsan_enable(void) __attribute__((weak));

static void lsan_pause(int on)
{
    if (on && __lsan_disable != NULL)
        __lsan_disable();
    if (!on && __lsan_enable != NULL)
        __lsan_enable();
}

/* What libraft does with auto-recovery on (its default): start anyway. */
static int raw_start(const char *dir)
{
    struct raft_uv_transport t;
    struct raft_io io;
    struct raft r;
    struct raft_fsm fsm;
    uv_loop_t loop;
    int rv;

    memset(&fsm, 0, sizeof fsm); /* no snapshot in this dir: never called */
    uv_loop_init(&loop);
    assert_int_equal(raft_uv_tcp_init(&t, &loop), 0);
    assert_int_equal(raft_uv_init(&io, &loop, dir, &t), 0);
    raft_uv_set_auto_recovery(&io, true);
    assert_int_equal(raft_init(&r, &io, &fsm, 1, "127.0.0.1:0"), 0);
    rv = raft_start(&r);
    raft_close(&r, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    raft_uv_close(&io);
    raft_uv_tcp_close(&t);
    uv_loop_close(&loop);
    return rv;
}

/* The older directory opens with its entries; its term and vote move into
 * wal-meta, and metadata1 goes.  raft's own segment stays (its bootstrap
 * entry). */
static void test_adopted(void **state)
{
    struct fx *f = *state;
    struct replog_config c = base_config(f);
    uint64_t term, vote;

    copy_fixture(f);
    assert_int_equal(fx_open(f, &c), 0);
    check_entries(f);
    assert_non_null(strstr(f->logbuf, "moved from metadata1/metadata2"));
    assert_false(exists(f, "metadata1"));
    assert_false(exists(f, "metadata2"));
    meta_term(f, &term, &vote);
    assert_int_equal(term, 1);
    assert_int_equal(vote, 0);
    assert_int_equal(f->l->raft->current_term, 1);
    propose_one(f, 5, 100);
    fx_close(f);

    /* And it is read back from there. */
    assert_int_equal(fx_open(f, &c), 0);
    assert_int_equal(f->fsm.n, 6);
    assert_int_equal(f->l->raft->current_term, 1);
    assert_null(strstr(f->logbuf + f->loglen / 2, "moved from"));
}

/* raft_uv's rule: the file of the higher version holds the term and vote,
 * whichever it is. */
static void test_higher_version_wins(void **state)
{
    struct fx *f = *state;
    struct replog_config c = base_config(f);
    uint64_t term, vote;

    copy_fixture(f);
    put_uv_meta(f, 1, 5, 7, 1);
    put_uv_meta(f, 2, 4, 6, 0);
    assert_int_equal(fx_open(f, &c), 0);
    check_entries(f);
    meta_term(f, &term, &vote);
    assert_int_equal(term, 7);
    assert_int_equal(vote, 1);
    assert_int_equal(f->l->raft->current_term, 7);
    assert_false(exists(f, "metadata1"));
    assert_false(exists(f, "metadata2"));
    fx_close(f);

    copy_fixture(f);
    put_uv_meta(f, 1, 5, 7, 1);
    put_uv_meta(f, 2, 6, 8, 0);
    assert_int_equal(fx_open(f, &c), 0);
    meta_term(f, &term, &vote);
    assert_int_equal(term, 8);
    assert_int_equal(f->l->raft->current_term, 8);
}

/* A write raft_uv cut short (a file under 32 bytes) counts as none: the
 * other file holds the last term. */
static void test_short_file_ignored(void **state)
{
    struct fx *f = *state;
    struct replog_config c = base_config(f);
    uint64_t term, vote;

    copy_fixture(f);
    put_uv_meta(f, 1, 3, 4, 1);
    spit(f->dir, "metadata2", "\x01\0\0\0", 4);
    assert_int_equal(fx_open(f, &c), 0);
    meta_term(f, &term, &vote);
    assert_int_equal(term, 4);
    assert_int_equal(vote, 1);
}

/* What cannot be adopted is refused, and nothing changes: a metadata file
 * of another format, two of the same version, none beside a log, and an
 * older directory whose log is damaged (the adoption waits for the log to
 * be found whole). */
static void test_refused_unchanged(void **state)
{
    struct fx *f = *state;
    struct replog_config c = base_config(f);
    struct dir_bytes d;
    char path[512];

    copy_fixture(f);
    spit(f->dir, "metadata1",
         "\x09\0\0\0\0\0\0\0\x01\0\0\0\0\0\0\0"
         "\x01\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0",
         32);
    take(f, &d);
    assert_int_not_equal(fx_open(f, &c), 0);
    assert_non_null(strstr(f->logbuf, "metadata1 is damaged"));
    same_as(f, &d);

    copy_fixture(f);
    put_uv_meta(f, 1, 2, 3, 0);
    put_uv_meta(f, 2, 2, 3, 0);
    take(f, &d);
    assert_int_not_equal(fx_open(f, &c), 0);
    assert_non_null(strstr(f->logbuf, "both at version 2"));
    same_as(f, &d);

    copy_fixture(f);
    snprintf(path, sizeof path, "%s/metadata1", f->dir);
    assert_int_equal(unlink(path), 0);
    take(f, &d);
    assert_int_not_equal(fx_open(f, &c), 0);
    assert_non_null(strstr(f->logbuf, "metadata1 and metadata2 (the term and "
                                      "the vote) are missing, but the log "
                                      "exists"));
    same_as(f, &d);

    copy_fixture(f);
    snprintf(path, sizeof path, "%s/wal-0000000000000001", f->dir);
    assert_int_equal(truncate(path, 100000), 0);
    take(f, &d);
    assert_int_not_equal(fx_open(f, &c), 0);
    assert_non_null(strstr(f->logbuf, "cut short"));
    same_as(f, &d);
}

/* A crash after wal-meta took the term, before raft_uv's files went: the
 * files are stale, whatever they say, and go. */
static void test_stale_files_removed(void **state)
{
    struct fx *f = *state;
    struct replog_config c = base_config(f);
    uint64_t term, vote;

    copy_fixture(f);
    assert_int_equal(fx_open(f, &c), 0);
    fx_close(f);
    put_uv_meta(f, 1, 9, 9, 1);
    assert_int_equal(fx_open(f, &c), 0);
    check_entries(f);
    assert_int_equal(f->l->raft->current_term, 1);
    assert_false(exists(f, "metadata1"));
    meta_term(f, &term, &vote);
    assert_int_equal(term, 1);
}

/* G2: raft_uv's segment damaged (a byte of its entry changed) makes the
 * start fail, naming it, and the segment stays where it is: raft_uv's
 * auto-recovery, off, would have renamed it away and started with a
 * shorter log, as libraft does by default. */
static void test_g2_damaged_uv_segment(void **state)
{
    struct fx *f = *state;
    struct replog_config c = base_config(f);
    const char *name = "0000000000000001-0000000000000001";
    char path[512];
    struct dir_bytes d;
    size_t n;
    uint8_t *b;

    copy_fixture(f);
    b = slurp(f->dir, name, &n);
    assert_non_null(b);
    b[n - 20] ^= 0x5a;
    spit(f->dir, name, b, n);
    free(b);
    take(f, &d);
    lsan_pause(1);
    assert_int_equal(fx_open(f, &c), TB_EDATAINCONSISTENCY);
    lsan_pause(0);
    assert_null(f->l);
    assert_non_null(strstr(f->logbuf, name));
    uv_run(&f->loop, UV_RUN_DEFAULT); /* the abandoned open cleans up */
    same_as(f, &d);

    /* The guard is what makes the difference. */
    lsan_pause(1);
    assert_int_equal(raw_start(f->dir), 0);
    lsan_pause(0);
    snprintf(path, sizeof path, "%s/%s", f->dir, name);
    assert_int_equal(access(path, F_OK), -1);
}

/* Files in the directory whose names start with `prefix`. */
static unsigned count_prefix(const struct fx *f, const char *prefix)
{
    DIR *d = opendir(f->dir);
    struct dirent *de;
    unsigned n = 0;

    assert_non_null(d);
    while ((de = readdir(d)) != NULL)
        n += strncmp(de->d_name, prefix, strlen(prefix)) == 0;
    closedir(d);
    return n;
}

/* Whether the file starts as a snapshot of this tumblerd (snapstore.c). */
static int is_own_snapshot(const struct fx *f, const char *name)
{
    size_t n;
    uint8_t *b = slurp(f->dir, name, &n);
    int own = b != NULL && n > 8 && memcmp(b, "TBSNAP01", 8) == 0;

    free(b);
    return own;
}

static void assert_first(struct fx *f, size_t n)
{
    size_t i;

    assert_int_equal(f->fsm.n, n);
    for (i = 0; i < n; i++)
        assert_true(rec_matches(&f->fsm.recs[i], i, g1_len(i)));
}

/* An older directory with a snapshot (raft_uv's snapshot files naming a
 * state file; raft_uv's bootstrap segment gone with it): every entry comes
 * back, from the snapshot and the log; the term moves into wal-meta; the
 * snapshot is written in this tumblerd's format and raft_uv's files go;
 * the log goes on, and opens again. */
static void test_adopted_with_snapshot(void **state)
{
    struct fx *f = *state;
    struct replog_config c = churn_config(f);
    uint64_t term, vote;
    size_t i;

    copy_dir(f, fixture_snap);
    assert_int_equal(count_prefix(f, "snapshot-"), 2);
    assert_false(is_own_snapshot(f, "state-0000000000000041"));
    assert_int_equal(fx_open(f, &c), 0);
    assert_true(f->fsm.n_restored > 0);
    assert_first(f, 100);
    assert_false(exists(f, "metadata1"));
    meta_term(f, &term, &vote);
    assert_int_equal(term, 1);
    assert_int_equal(vote, 0);
    assert_int_equal(count_prefix(f, "snapshot-"), 0);
    assert_true(is_own_snapshot(f, "state-0000000000000041"));
    for (i = 100; i < 200; i++)
        propose_one(f, i, g1_len(i));
    fx_close(f);

    assert_int_equal(fx_open(f, &c), 0);
    assert_first(f, 200);
}

/* A crash after the snapshot was written in this format but before
 * raft_uv's files went: raft_uv's snapshot is not read again (it names a
 * state file now of the other format), and its files go at the next
 * start. */
static void test_adoption_finished(void **state)
{
    struct fx *f = *state;
    struct replog_config c = churn_config(f);

    copy_dir(f, fixture_snap);
    assert_int_equal(fx_open(f, &c), 0);
    fx_close(f);
    assert_int_equal(count_prefix(f, "snapshot-"), 0);
    copy_files(f, fixture_snap, "snapshot-");
    assert_int_equal(count_prefix(f, "snapshot-"), 2);

    assert_int_equal(fx_open(f, &c), 0);
    assert_first(f, 100);
    assert_int_equal(count_prefix(f, "snapshot-"), 0);
    assert_true(is_own_snapshot(f, "state-0000000000000041"));
}

/* Without a snapshot, raft_uv's segment holds the first configuration
 * and stays until a snapshot of this format covers it. */
static void test_uv_segment_until_snapshot(void **state)
{
    struct fx *f = *state;
    struct replog_config c = churn_config(f);
    size_t i;

    copy_dir(f, fixture);
    assert_int_equal(fx_open(f, &c), 0);
    assert_first(f, 5);
    assert_true(exists(f, files[0]));
    for (i = 5; i < 200; i++)
        propose_one(f, i, g1_len(i));
    fx_close(f);
    assert_false(exists(f, files[0]));
    assert_int_equal(fx_open(f, &c), 0);
    assert_first(f, 200);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_adopted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_higher_version_wins, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_short_file_ignored, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_refused_unchanged, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_stale_files_removed, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_g2_damaged_uv_segment, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_adopted_with_snapshot, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_adoption_finished, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_uv_segment_until_snapshot, setup,
                                        teardown),
    };

    if (argc != 2) {
        fprintf(stderr, "usage: %s FIXTURE_DIR\n", argv[0]);
        return 2;
    }
    snprintf(fixture, sizeof fixture, "%s/datadir-raft-uv", argv[1]);
    snprintf(fixture_snap, sizeof fixture_snap, "%s/datadir-raft-uv-snapshot",
             argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
