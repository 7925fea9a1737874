/* Unit tests of a new log (src/server/replog/wal_bootstrap.c, wal_term.c):
 * the first configuration is the first record of wal-0000000000000001,
 * raft's term and vote are in wal-meta, and no file of raft_uv's is made;
 * a bootstrap cut short before wal-meta named its segment is done again;
 * an ensemble member's new log keeps to fresh.c's rule across restarts. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <dirent.h>

#include "server/replog/internal.h"
#include "server/replog/wal.h"

#include "raft_fixture.h"

/* Every file of f->dir is one of tumblerd's own. */
static void only_own_files(const struct fx *f)
{
    static const char *const own[] = {"LOCK", "wal-meta", "wal-0", "state-"};
    DIR *d = opendir(f->dir);
    struct dirent *de;
    size_t i;
    int ok;

    assert_non_null(d);
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        for (i = 0, ok = 0; i < sizeof own / sizeof own[0]; i++)
            ok |= strncmp(de->d_name, own[i], strlen(own[i])) == 0;
        if (!ok)
            fail_msg("%s in a new log's directory", de->d_name);
    }
    closedir(d);
}

static void read_meta(const struct fx *f, struct wal_meta *m)
{
    char err[256];
    int format = 0;

    assert_int_equal(replog__wal_meta_read(f->dir, m, &format, err, sizeof err),
                     0);
    assert_int_equal(format, 2);
}

/* The first record: ENTRIES, index 1, one entry of term 1, raft's
 * configuration (type 3), the log's first write. */
static void check_first_record(const struct fx *f)
{
    char path[512];
    uint8_t b[WAL_BLOCK];
    struct wal_rec r;
    struct wal_meta m;
    int fd;

    read_meta(f, &m);
    snprintf(path, sizeof path, "%s/wal-0000000000000001", f->dir);
    fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(pread(fd, b, sizeof b, 0), (ssize_t)sizeof b);
    close(fd);
    assert_int_equal(replog__wal_decode(b, sizeof b, &r), 0);
    assert_int_equal(r.kind, WAL_ENTRIES);
    assert_int_equal(r.index, 1);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.write, 1);
    assert_int_equal(r.prev, 0);
    assert_int_equal(r.seg, 1);
    assert_int_equal(r.log, m.log_id);
    assert_int_equal(r.seg_size, REPLOG_FIRST_SEGMENT_BYTES);
    assert_int_equal(tb_load_be64(r.payload + WAL_E_TERM), 1);
    assert_int_equal(tb_load_be32(r.payload + WAL_E_TYPE), RAFT_CHANGE);
}

static void test_new_log(void **state)
{
    struct fx *f = *state;
    struct replog_config c = base_config(f);
    struct wal_meta m;

    assert_int_equal(fx_open(f, &c), 0);
    assert_true(replog_is_leader(f->l));
    only_own_files(f);
    check_first_record(f);
    read_meta(f, &m);
    assert_int_equal(m.term, 1);
    assert_int_equal(m.vote, 0);
    assert_int_equal(m.oldest, 1);
    assert_int_equal(m.newest, 1);
    propose_one(f, 0, 100);
    fx_close(f);

    assert_int_equal(fx_open(f, &c), 0);
    assert_int_equal(f->fsm.n, 1);
    assert_true(rec_matches(&f->fsm.recs[0], 0, 100));
    assert_int_equal(f->l->raft->configuration.n, 1);
    assert_int_equal(f->l->raft->configuration.servers[0].id, 1);
    only_own_files(f);
}

/* set_term and set_vote are in wal-meta when they return; a new term has
 * no vote; both survive a reopen. */
static void test_term_and_vote(void **state)
{
    struct fx *f = *state;
    struct replog_config c = base_config(f);
    struct raft_io *io;
    struct wal_meta m;

    assert_int_equal(fx_open(f, &c), 0);
    io = &f->l->io;
    assert_int_equal(io->set_term(io, 3), 0);
    assert_int_equal(io->set_vote(io, 1), 0);
    read_meta(f, &m);
    assert_int_equal(m.term, 3);
    assert_int_equal(m.vote, 1);
    assert_int_equal(io->set_term(io, 4), 0);
    read_meta(f, &m);
    assert_int_equal(m.term, 4);
    assert_int_equal(m.vote, 0);
    assert_int_equal(m.newest, 1); /* the rest as it was */
    fx_close(f);
    assert_int_equal(fx_open(f, &c), 0);
    assert_int_equal(f->l->raft->current_term, 4);
}

/* A crash after the first segment was made, before wal-meta named it and
 * took term 1: the next start bootstraps again over it, and the log works.
 * (Made here from a closed new log: its segment holds the configuration
 * and a closing record; wal-meta is put back as the bootstrap found it.) */
static void test_bootstrap_cut_short(void **state)
{
    struct fx *f = *state;
    struct replog_config c = base_config(f);
    struct wal_meta m;

    assert_int_equal(fx_open(f, &c), 0);
    fx_close(f);
    read_meta(f, &m);
    m.oldest = m.newest = 0;
    m.term = m.vote = 0;
    assert_int_equal(replog__wal_meta_write(f->dir, &m), 0);

    assert_int_equal(fx_open(f, &c), 0);
    assert_true(replog_is_leader(f->l));
    check_first_record(f);
    read_meta(f, &m);
    assert_int_equal(m.term, 1);
    assert_int_equal(m.newest, 1);
    propose_one(f, 0, 100);
    fx_close(f);
    assert_int_equal(fx_open(f, &c), 0);
    assert_int_equal(f->fsm.n, 1);
}

static void appended(struct raft_io_append *req, int status)
{
    *(int *)req->data = status + 1;
}

/* "127.0.0.1:PORT" of a port free now. */
static void free_address(char *out, size_t n)
{
    struct sockaddr_in a = {0};
    socklen_t len = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    assert_true(fd >= 0);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    snprintf(out, n, "127.0.0.1:%d", ntohs(a.sin_port));
    close(fd);
}

/* A member of an ensemble whose log this start made keeps to fresh.c's
 * rule until a leader has caught it up, through restarts, also once a
 * leader sent it part of the log (its log then more than the bootstrap
 * entry): wal-meta's flag says so.  Caught up, and the log stored that
 * far, the flag goes, and the next start votes as any member. */
static void test_fresh_outlives_a_restart(void **state)
{
    struct fx *f = *state;
    struct replog_config c = base_config(f);
    char self[32];
    struct replog_peer peers[3] = {
        {1, self, 1}, {2, "127.0.0.2:9002", 1}, {3, "127.0.0.3:9003", 1}};
    static uint8_t payload[8];
    struct raft_entry e[2];
    struct raft_io_append app;
    struct raft_message hb = {.type = RAFT_IO_APPEND_ENTRIES, .server_id = 2};
    struct raft_io *io;
    struct wal_meta m;
    int i, done = 0;

    free_address(self, sizeof self);
    c.address = self;
    c.peers = peers;
    c.n_peers = 3;
    assert_int_equal(fx_open(f, &c), 0);
    assert_true(f->l->fresh.on);
    read_meta(f, &m);
    assert_int_equal(m.fresh, 1);
    /* Part of a leader's log: two entries after the bootstrap one. */
    io = &f->l->io;
    for (i = 0; i < 2; i++)
        e[i] = (struct raft_entry){
            .term = 1, .type = RAFT_COMMAND, .buf = {payload, sizeof payload}};
    app.data = &done;
    assert_int_equal(io->append(io, &app, e, 2, appended), 0);
    assert_true(run_until(&f->loop, &done, 1));
    assert_int_equal(done, 1); /* status 0 */
    fx_close(f);

    assert_int_equal(fx_open(f, &c), 0);
    assert_int_equal(raft_last_index(f->l->raft), 3);
    assert_true(f->l->fresh.on);
    /* A leader's heartbeat that ends where this log ends. */
    hb.append_entries.term = f->l->raft->current_term;
    hb.append_entries.prev_log_index = 3;
    hb.append_entries.prev_log_term = 1;
    assert_int_equal(replog__fresh_recv(f->l, &hb), FRESH_DELIVER);
    assert_false(f->l->fresh.on);
    run_for(f, 600); /* a tick or two */
    read_meta(f, &m);
    assert_int_equal(m.fresh, 0);
    fx_close(f);
    assert_int_equal(fx_open(f, &c), 0);
    assert_false(f->l->fresh.on);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_new_log, setup, teardown),
        cmocka_unit_test_setup_teardown(test_term_and_vote, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fresh_outlives_a_restart, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_bootstrap_cut_short, setup,
                                        teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
