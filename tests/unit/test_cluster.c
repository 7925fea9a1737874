/* Cluster scenarios over the deterministic harness (cluster.h): the
 * server's state machine and replicated log on three servers, raft driven
 * by libraft's fixture in virtual time.  Each scenario ends with
 * cluster_converge (same state everywhere, every acknowledged write
 * present) and cluster_close (every proposal answered exactly once).
 * Membership changes are test_cluster_members.c's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cluster.h"
#include "proto/proto.h"
#include "server/replog/replog_attach.h"
#include "tree/tree.h"

static struct cluster cl;

static int64_t czxid(struct cluster *c, unsigned i, const char *path)
{
    struct tb_stat st;
    struct tree_node *n = tree_find(fsm_tree(c->nodes[i].fsm), tb_str_c(path));

    assert_non_null(n);
    tree_node_stat(n, &st);
    return st.czxid;
}

/* Writes on the leader reach every server, in one order; the leader
 * keeps its proposals' sizes (srvr's "Proposal sizes"), the others none. */
static void test_writes_converge(void **state)
{
    struct cluster *c = &cl;
    struct replog_stats st;
    char path[32];
    unsigned l, k, first;
    int i;

    (void)state;
    cluster_init(c, 3, NULL);
    l = cluster_leader(c, 10000);
    cluster_session_on(c, l);
    first = c->nprops;
    for (i = 0; i < 200; i++) {
        snprintf(path, sizeof path, "/n%d", i);
        cluster_create(c, l, path, 0);
    }
    cluster_converge(c, 10000);
    for (k = first; k < c->nprops; k++)
        assert_int_equal(c->props[k].status, 0);
    replog_get_stats(c->nodes[l].log, &st);
    assert_true(st.proposal_min > 0);
    assert_true(st.proposal_min < st.proposal_max); /* "/n1" < "/n199" */
    assert_true(st.proposal_last >= st.proposal_min &&
                st.proposal_last <= st.proposal_max);
    replog_get_stats(c->nodes[(l + 1) % 3].log, &st);
    assert_int_equal(st.proposal_max, 0);
    cluster_close(c);
}

/* The leader dies with writes in flight: every proposal is answered once
 * (the dead leader's when it comes back and finds it no longer leads),
 * what was acknowledged survives, and the zxids (fencing tokens) of writes
 * acknowledged by the next leader are above every earlier one. */
static void test_leader_killed_under_writes(void **state)
{
    struct cluster *c = &cl;
    char path[32];
    unsigned l, m, k, mark;
    int64_t top = 0;
    int i;

    (void)state;
    cluster_init(c, 3, NULL);
    l = cluster_leader(c, 10000);
    cluster_session_on(c, l);
    for (i = 0; i < 50; i++) {
        snprintf(path, sizeof path, "/a%d", i);
        cluster_create(c, l, path, 0);
    }
    cluster_step_for(c, 3);
    raft_fixture_kill(&c->f, l);
    m = cluster_new_leader(c, l, 20000);
    mark = c->nprops;
    for (i = 0; i < 50; i++) {
        snprintf(path, sizeof path, "/b%d", i);
        cluster_create(c, m, path, 0);
    }
    cluster_converge(c, 10000);
    raft_fixture_revive(&c->f, l);
    cluster_converge(c, 20000);
    for (k = 0; k < mark; k++)
        if (c->props[k].fired && c->props[k].status == 0 &&
            c->props[k].type == TB_OP_CREATE &&
            czxid(c, m, c->props[k].path) > top)
            top = czxid(c, m, c->props[k].path);
    for (k = mark; k < c->nprops; k++) {
        assert_int_equal(c->props[k].status, 0);
        assert_true(czxid(c, m, c->props[k].path) > top);
    }
    cluster_close(c);
}

/* A leader cut off from the others: what it is asked to write is never
 * acknowledged; the majority elects another and goes on; healed, the old
 * leader's writes are answered as lost and are nowhere. */
static void test_minority_leader(void **state)
{
    struct cluster *c = &cl;
    char path[32];
    unsigned l, m, k, mark;
    int i;

    (void)state;
    cluster_init(c, 3, NULL);
    l = cluster_leader(c, 10000);
    cluster_session_on(c, l);
    cluster_isolate(c, l);
    mark = c->nprops;
    for (i = 0; i < 10; i++) {
        snprintf(path, sizeof path, "/lost%d", i);
        cluster_create(c, l, path, 0);
    }
    m = cluster_new_leader(c, l, 10000);
    for (i = 0; i < 10; i++) {
        snprintf(path, sizeof path, "/kept%d", i);
        cluster_create(c, m, path, 0);
    }
    cluster_step_for(c, 2000);
    for (k = mark; k < mark + 10; k++)
        assert_true(!c->props[k].fired || c->props[k].status != 0);
    cluster_rejoin(c, l);
    cluster_converge(c, 20000);
    for (k = mark; k < mark + 10; k++) {
        assert_int_equal(c->props[k].fired, 1);
        assert_int_not_equal(c->props[k].status, 0);
        for (i = 0; i < (int)c->n; i++)
            assert_false(cluster_has(c, (unsigned)i, c->props[k].path));
    }
    for (; k < c->nprops; k++)
        assert_int_equal(c->props[k].status, 0);
    assert_false(c->nodes[l].leader);
    cluster_close(c);
}

/* Three servers that snapshot every few entries; the leader's next one
 * (its successor in failover.c's order) stopped while `n` creates, /s0 on,
 * are made and the others compact their log past them.  The leader's
 * index; *f, the stopped one's. */
static unsigned follower_left_behind(struct cluster *c, int n, unsigned *f)
{
    struct replog_config cfg = {0};
    char path[32];
    unsigned l;
    int i;

    cfg.snapshot_max_entries = 16;
    cfg.snapshot_trailing = 4;
    cluster_init(c, 3, &cfg);
    l = cluster_leader(c, 10000);
    *f = (l + 1) % c->n; /* id l + 2, or 1 after the last */
    cluster_session_on(c, l);
    raft_fixture_kill(&c->f, *f);
    for (i = 0; i < n; i++) {
        snprintf(path, sizeof path, "/s%d", i);
        cluster_create(c, l, path, 0);
    }
    cluster_converge(c, 10000);
    return l;
}

/* A follower down while the others compact their log past what it has is
 * brought back by a snapshot, then by entries. */
static void test_follower_caught_up_by_snapshot(void **state)
{
    struct cluster *c = &cl;
    struct replog_stats before, after;
    unsigned f;

    (void)state;
    follower_left_behind(c, 200, &f);
    replog_get_stats(c->nodes[f].log, &before);
    raft_fixture_revive(&c->f, f);
    cluster_converge(c, 20000);
    replog_get_stats(c->nodes[f].log, &after);
    /* Most of the 200 came in the snapshot, not one by one. */
    assert_true(after.entries_applied - before.entries_applied < 100);
    assert_true(cluster_has(c, f, "/s199"));
    cluster_close(c);
}

static int has_s199(struct cluster *c, void *arg)
{
    return cluster_has(c, *(unsigned *)arg, "/s199");
}

/* A snapshot sent by the leader that the follower's state machine cannot
 * take (out of memory, a format of another release) stops the follower
 * (exit 74): raft has dropped the log the snapshot replaces, and going on
 * it would apply nothing more, stale for ever.  In a child process. */
static void test_snapshot_refused_stops_the_follower(void **state)
{
    struct cluster *c = &cl;
    unsigned f;
    pid_t pid;
    int status;

    (void)state;
    fflush(NULL);
    if ((pid = fork()) == 0) {
        follower_left_behind(c, 200, &f);
        c->nodes[f].refuse_restore = 1;
        raft_fixture_revive(&c->f, f);
        _exit(cluster_step_until(c, has_s199, &f, 20000) ? 1 : 2);
    }
    assert_true(pid > 0);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 74);
}

static int installing(struct cluster *c, void *arg)
{
    return cluster_installing(c, *(unsigned *)arg);
}

/* The leader dies while its successor (failover.c) installs a snapshot on
 * a slow disk: the successor is handed no TimeoutNow and stands for no
 * election until the snapshot is in (mend.c's ninth mend), and then the
 * two left elect one of them and go on. */
static void test_leader_gone_while_installing(void **state)
{
    struct cluster *c = &cl;
    struct replog_stats st;
    unsigned l, f, m;

    (void)state;
    l = follower_left_behind(c, 100, &f);
    raft_fixture_set_disk_latency(&c->f, f, 3000);
    raft_fixture_revive(&c->f, f);
    assert_true(cluster_step_until(c, installing, &f, 10000));
    raft_fixture_kill(&c->f, l);
    replog_leader_gone(c->nodes[f].log, (int)l + 1);
    m = cluster_new_leader(c, l, 20000);
    assert_false(cluster_installing(c, f));
    replog_get_stats(c->nodes[f].log, &st);
    assert_true(st.mended[8] >= 1);
    cluster_create(c, m, "/after", 0);
    cluster_converge(c, 10000);
    assert_int_equal(c->props[c->nprops - 1].status, 0);
    assert_true(cluster_has(c, f, "/s99"));
    cluster_close(c);
}

/* Once writes pause, every member gives back the log it keeps in memory
 * since its last snapshot, followers as well as the leader. */
static void test_idle_snapshot_on_every_member(void **state)
{
    struct cluster *c = &cl;
    struct replog_config cfg = {0};
    struct replog_stats s;
    char path[32];
    unsigned l, i;

    (void)state;
    cfg.snapshot_log_bytes = 16384;
    cluster_init(c, 3, &cfg);
    l = cluster_leader(c, 10000);
    cluster_session_on(c, l);
    for (i = 0; i < 40; i++) {
        snprintf(path, sizeof path, "/idle%u", i);
        cluster_create(c, l, path, 0);
        cluster_step_for(c, 5); /* a few ms apart: no pause */
    }
    cluster_converge(c, 5000);
    for (i = 0; i < c->n; i++) {
        replog_get_stats(c->nodes[i].log, &s);
        /* Not due by size: a quarter of the limit or more, under it. */
        assert_int_equal(s.snapshots_taken, 0);
        assert_true(s.snapshot_log_bytes >= s.snapshot_log_limit / 4);
        assert_true(s.snapshot_log_bytes < s.snapshot_log_limit);
    }
    cluster_step_for(c, 1000);
    for (i = 0; i < c->n; i++) {
        replog_get_stats(c->nodes[i].log, &s);
        assert_int_equal(s.snapshots_taken, 1);
        assert_true(s.snapshot_log_bytes < s.snapshot_log_limit / 4);
    }
    /* A snapshot taken at an entry the leader added changed no state. */
    cluster_converge(c, 5000);
    cluster_close(c);
}

/* Sessions are replicated: an ephemeral node outlives its leader, and the
 * session's close through the next leader removes it everywhere. */
static void test_session_across_leader_change(void **state)
{
    struct cluster *c = &cl;
    unsigned l, m, k, i, eph;

    (void)state;
    cluster_init(c, 3, NULL);
    l = cluster_leader(c, 10000);
    cluster_session_on(c, l);
    eph = cluster_create(c, l, "/eph", TB_EPHEMERAL);
    cluster_converge(c, 5000);
    assert_int_equal(c->props[eph].status, 0);
    raft_fixture_kill(&c->f, l);
    m = cluster_new_leader(c, l, 20000);
    for (i = 0; i < c->n; i++)
        if (i != l)
            assert_true(cluster_has(c, i, "/eph"));
    k = cluster_create(c, m, "/after", 0);
    cluster_converge(c, 5000);
    assert_int_equal(c->props[k].status, 0);
    raft_fixture_revive(&c->f, l);
    cluster_converge(c, 20000);
    assert_true(cluster_has(c, l, "/eph"));
    k = cluster_close_session(c, m);
    c->props[eph].gone = 1;
    cluster_converge(c, 5000);
    assert_int_equal(c->props[k].status, 0);
    for (i = 0; i < c->n; i++) {
        assert_false(cluster_has(c, i, "/eph"));
        assert_true(cluster_has(c, i, "/after"));
    }
    cluster_close(c);
}

/* An observer (a member without a vote) has every write, and writes go on
 * without it; without a majority of the voters they stop. */
static void test_observer(void **state)
{
    struct cluster *c = &cl;
    unsigned l, k;

    (void)state;
    cluster_init_voters(c, 3, 2, NULL);
    l = cluster_leader(c, 10000);
    assert_true(l < 2);
    cluster_session_on(c, l);
    cluster_create(c, l, "/o1", 0);
    cluster_converge(c, 5000);
    assert_true(cluster_has(c, 2, "/o1"));
    raft_fixture_kill(&c->f, 2);
    k = cluster_create(c, l, "/o2", 0);
    cluster_converge(c, 5000);
    assert_int_equal(c->props[k].status, 0);
    raft_fixture_revive(&c->f, 2);
    raft_fixture_kill(&c->f, 1 - l);
    k = cluster_create(c, l, "/o3", 0);
    cluster_step_for(c, 3000);
    assert_true(!c->props[k].fired || c->props[k].status != 0);
    raft_fixture_revive(&c->f, 1 - l);
    cluster_converge(c, 20000);
    assert_true(cluster_has(c, 2, "/o2"));
    cluster_close(c);
}

static int leader_has(struct cluster *c, void *arg)
{
    unsigned l = *(unsigned *)arg;

    return cluster_has(c, l, "/hb");
}

static int all_have(struct cluster *c, void *arg)
{
    unsigned i;

    (void)arg;
    for (i = 0; i < c->n; i++)
        if (!cluster_has(c, i, "/hb"))
            return 0;
    return 1;
}

/* Every follower applies a write one message after the leader has (the
 * leader tells it the commit at once, replog/notice.c), not with the next
 * heartbeat: with heartbeats 400 ms apart, within 40 ms, 15 of which the
 * fixture's network takes.  A write no heartbeat, entry or barrier follows
 * would otherwise wait up to 400 ms on the followers. */
static void test_followers_hear_commit_at_once(void **state)
{
    struct replog_config cfg = {0};
    struct cluster *c = &cl;
    raft_time applied;
    unsigned l;

    (void)state;
    cfg.heartbeat_timeout_ms = 400;
    cfg.election_timeout_ms = 4000;
    cluster_init(c, 3, &cfg);
    l = cluster_leader(c, 20000);
    cluster_session_on(c, l);
    cluster_step_for(c, 1000);
    cluster_create(c, l, "/hb", 0);
    assert_true(cluster_step_until(c, leader_has, &l, 1000));
    applied = raft_fixture_time(&c->f);
    assert_true(cluster_step_until(c, all_have, NULL, 40));
    assert_true(raft_fixture_time(&c->f) - applied <= 40);
    cluster_converge(c, 5000);
    cluster_close(c);
}

/* How many of the leader's followers it reports synced (heard from within
 * an election timeout: mntr's zk_synced_followers). */
static unsigned synced(struct cluster *c, unsigned l)
{
    struct replog_follower f[REPLOG_MAX_MEMBERS];
    unsigned n = replog_followers(c->nodes[l].log, f, REPLOG_MAX_MEMBERS), i,
             k = 0;

    for (i = 0; i < n; i++)
        k += f[i].synced;
    return k;
}

/* An idle, healthy ensemble: both followers synced at every moment of
 * several election timeouts (raft's own flag reads false after each of
 * its contact checks until the next reply); one cut off is not, within
 * two election timeouts. */
static void test_followers_synced_while_idle(void **state)
{
    struct replog_config cfg = {0};
    struct cluster *c = &cl;
    unsigned l, ms;

    (void)state;
    cfg.election_timeout_ms = 1000;
    cfg.heartbeat_timeout_ms = 100;
    cluster_init(c, 3, &cfg);
    l = cluster_leader(c, 10000);
    cluster_step_for(c, 1000);
    for (ms = 0; ms < 4 * cfg.election_timeout_ms; ms += 5) {
        assert_int_equal(synced(c, l), 2);
        cluster_step_for(c, 5);
    }
    raft_fixture_kill(&c->f, (l + 1) % c->n);
    cluster_step_for(c, 2 * cfg.election_timeout_ms);
    assert_int_equal(synced(c, l), 1);
    raft_fixture_revive(&c->f, (l + 1) % c->n);
    cluster_converge(c, 10000);
    cluster_close(c);
}

/* The successor told its leader is gone (failover.c hands its raft a
 * TimeoutNow in that leader's name) does not count the dead leader as
 * heard from then: once an election timeout has passed since its last
 * heartbeat, the new leader reports it unsynced. */
static void test_gone_leader_not_heard(void **state)
{
    struct replog_config cfg = {0};
    struct cluster *c = &cl;
    unsigned l, m, i;
    raft_time killed;

    (void)state;
    cfg.election_timeout_ms = 1000;
    cfg.heartbeat_timeout_ms = 100;
    cluster_init(c, 3, &cfg);
    l = cluster_leader(c, 10000);
    cluster_step_for(c, 1000);
    raft_fixture_kill(&c->f, l);
    killed = raft_fixture_time(&c->f);
    cluster_step_for(c, 800); /* under any follower's election timeout */
    for (i = 0; i < c->n; i++)
        if (i != l) /* the successor acts, the other does nothing */
            replog_leader_gone(c->nodes[i].log, (int)l + 1);
    m = cluster_new_leader(c, l, 5000);
    cluster_step_for(c, 10);
    assert_true(raft_fixture_time(&c->f) - killed <
                800 + cfg.election_timeout_ms);
    while (raft_fixture_time(&c->f) - killed < 1200)
        cluster_step_for(c, 10);
    assert_int_equal(synced(c, m), 1);
    raft_fixture_revive(&c->f, l);
    cluster_converge(c, 10000);
    cluster_close(c);
}

/* Disk faults: the leader's log fails a write while it takes writes, then
 * a follower's.  A proposal the log could not take is refused at once and
 * is nowhere; one whose entry failed later is answered once, with an
 * outcome the client must look up (the entry may still be committed by the
 * next leader); what was acknowledged is on every server; the cluster goes
 * on and converges. */
static void test_disk_faults(void **state)
{
    struct cluster *c = &cl;
    char path[32];
    unsigned l, m, f, k, failed = 0;
    int i;

    (void)state;
    cluster_init(c, 3, NULL);
    l = cluster_leader(c, 10000);
    cluster_session_on(c, l);
    raft_fixture_io_fault(&c->f, l, 3, 1);
    for (i = 0; i < 30; i++) {
        snprintf(path, sizeof path, "/d%d", i);
        cluster_create(c, l, path, 0);
        cluster_step_for(c, 1);
    }
    m = cluster_leader(c, 20000);
    f = (m + 1) % c->n;
    raft_fixture_io_fault(&c->f, f, 2, 1);
    for (i = 0; i < 30; i++) {
        snprintf(path, sizeof path, "/e%d", i);
        cluster_create(c, m, path, 0);
        cluster_step_for(c, 1);
    }
    cluster_converge(c, 20000);
    for (k = 0; k < c->nprops; k++) {
        struct prop *p = &c->props[k];
        assert_int_equal(p->fired, 1);
        if (p->status == 0)
            continue;
        failed++;
        /* Refused at once (the log could not take it): a definite "no",
         * so it must be nowhere; or failed later, outcome unknown. */
        if (p->index == 0) {
            assert_int_equal(p->status, TB_ESYSTEM);
            for (i = 0; i < (int)c->n; i++)
                assert_false(cluster_has(c, (unsigned)i, p->path));
        } else {
            assert_true(p->status == TB_ECONNECTIONLOSS ||
                        p->status == TB_EIO);
        }
    }
    /* The fault was hit: some write failed, and writes went on after. */
    assert_true(failed > 0);
    k = cluster_create(c, cluster_leader(c, 10000), "/after", 0);
    cluster_converge(c, 10000);
    assert_int_equal(c->props[k].status, 0);
    cluster_close(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_writes_converge),
        cmocka_unit_test(test_leader_killed_under_writes),
        cmocka_unit_test(test_minority_leader),
        cmocka_unit_test(test_follower_caught_up_by_snapshot),
        cmocka_unit_test(test_snapshot_refused_stops_the_follower),
        cmocka_unit_test(test_leader_gone_while_installing),
        cmocka_unit_test(test_idle_snapshot_on_every_member),
        cmocka_unit_test(test_session_across_leader_change),
        cmocka_unit_test(test_observer),
        cmocka_unit_test(test_followers_hear_commit_at_once),
        cmocka_unit_test(test_followers_synced_while_idle),
        cmocka_unit_test(test_gone_leader_not_heard),
        cmocka_unit_test(test_disk_faults),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
