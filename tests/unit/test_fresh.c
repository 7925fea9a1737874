/* replog/fresh.c's rule for a member whose log this start made: which
 * messages its raft is given, and when it votes as any member again.  The
 * process-level case (a member wiped and restarted, the only other member
 * up lacking a write it had acknowledged) is tests/crash/wiped.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "server/replog/internal.h"

static struct raft_message vote(raft_index last_index, int pre_vote)
{
    struct raft_message m = {.type = RAFT_IO_REQUEST_VOTE, .server_id = 2};

    m.request_vote.term = 7;
    m.request_vote.candidate_id = 2;
    m.request_vote.last_log_index = last_index;
    m.request_vote.last_log_term = last_index > 1 ? 6 : 1;
    m.request_vote.pre_vote = pre_vote;
    return m;
}

static struct raft_message append(raft_term term, raft_index prev,
                                  raft_term prev_term, unsigned n)
{
    static struct raft_entry e[1];
    struct raft_message m = {.type = RAFT_IO_APPEND_ENTRIES, .server_id = 3};

    m.append_entries.term = term;
    m.append_entries.prev_log_index = prev;
    m.append_entries.prev_log_term = prev_term;
    m.append_entries.entries = n > 0 ? e : NULL;
    m.append_entries.n_entries = n;
    return m;
}

/* A first start: every candidate's log is the bootstrap entry alone, so
 * votes flow; the first leader's heartbeat, which ends where this log
 * ends, catches it up. */
static void test_first_start(void **state)
{
    struct replog_fresh g = {.on = 1};
    struct raft_message m = vote(1, 1);

    (void)state;
    assert_int_equal(replog__fresh_check(&g, &m, 1, 1, 1), FRESH_DELIVER);
    m = vote(1, 0);
    assert_int_equal(replog__fresh_check(&g, &m, 1, 1, 1), FRESH_DELIVER);
    m = append(2, 1, 1, 0);
    assert_int_equal(replog__fresh_check(&g, &m, 2, 1, 1), FRESH_DELIVER);
    assert_int_equal(g.on, 0);
}

/* A wiped member: a candidate with a longer log gets no vote (pre-vote or
 * not), nor, from then on, one as new as itself; the leader's entries and
 * a snapshot reach raft; it votes again once a heartbeat ends where its
 * log ends, in the leader's term. */
static void test_wiped(void **state)
{
    struct replog_fresh g = {.on = 1};
    struct raft_message m = vote(40, 1);

    (void)state;
    assert_int_equal(replog__fresh_check(&g, &m, 1, 1, 1), FRESH_DROP);
    assert_int_equal(g.evidence, 1);
    m = vote(40, 0);
    assert_int_equal(replog__fresh_check(&g, &m, 7, 1, 1), FRESH_DROP);
    m = vote(1, 0);
    assert_int_equal(replog__fresh_check(&g, &m, 7, 1, 1), FRESH_DROP);
    /* The leader probes past this log's end: refused by raft, still on. */
    m = append(8, 40, 6, 0);
    assert_int_equal(replog__fresh_check(&g, &m, 8, 1, 1), FRESH_DELIVER);
    assert_int_equal(g.on, 1);
    m = append(8, 1, 1, 39);
    assert_int_equal(replog__fresh_check(&g, &m, 8, 1, 1), FRESH_DELIVER);
    assert_int_equal(g.on, 1);
    m.type = RAFT_IO_INSTALL_SNAPSHOT;
    assert_int_equal(replog__fresh_check(&g, &m, 8, 40, 6), FRESH_DELIVER);
    assert_int_equal(g.on, 1);
    /* An older leader's heartbeat, and one whose previous entry's term is
     * not this log's, catch nothing up. */
    m = append(7, 40, 6, 0);
    assert_int_equal(replog__fresh_check(&g, &m, 8, 40, 6), FRESH_DELIVER);
    assert_int_equal(g.on, 1);
    m = append(8, 40, 5, 0);
    assert_int_equal(replog__fresh_check(&g, &m, 8, 40, 6), FRESH_DELIVER);
    assert_int_equal(g.on, 1);
    m = append(8, 40, 6, 0);
    assert_int_equal(replog__fresh_check(&g, &m, 8, 40, 6), FRESH_DELIVER);
    assert_int_equal(g.on, 0);
    m = vote(41, 0);
    assert_int_equal(replog__fresh_check(&g, &m, 8, 40, 6), FRESH_DELIVER);
}

/* A late member at a first start hears the leader's entries before any
 * candidate: from then on a new candidate gets no vote either. */
static void test_entries_are_evidence(void **state)
{
    struct replog_fresh g = {.on = 1};
    struct raft_message m = append(2, 1, 1, 5);

    (void)state;
    assert_int_equal(replog__fresh_check(&g, &m, 2, 1, 1), FRESH_DELIVER);
    assert_int_equal(g.evidence, 1);
    m = vote(1, 1);
    assert_int_equal(replog__fresh_check(&g, &m, 2, 6, 2), FRESH_DROP);
}

/* A log that was there at start: raft decides alone. */
static void test_off(void **state)
{
    struct replog_fresh g = {.on = 0};
    struct raft_message m = vote(1, 0);

    (void)state;
    assert_int_equal(replog__fresh_check(&g, &m, 7, 40, 6), FRESH_DELIVER);
    m = vote(2, 1);
    assert_int_equal(replog__fresh_check(&g, &m, 7, 40, 6), FRESH_DELIVER);
}

/* When the rule applies at a start: a log of the bootstrap entry alone
 * among other voters, whether this start made it or one before it did
 * (a member wiped and started twice before a leader reached it). */
static void test_at_start(void **state)
{
    struct raft_configuration c;

    (void)state;
    raft_configuration_init(&c);
    assert_int_equal(raft_configuration_add(&c, 1, "a:1", RAFT_VOTER), 0);
    assert_int_equal(replog__fresh_at_start(&c, 1, 1), 0); /* alone */
    assert_int_equal(raft_configuration_add(&c, 2, "b:1", RAFT_STANDBY), 0);
    assert_int_equal(replog__fresh_at_start(&c, 1, 1), 0); /* no other voter */
    assert_int_equal(raft_configuration_add(&c, 3, "c:1", RAFT_VOTER), 0);
    assert_int_equal(replog__fresh_at_start(&c, 1, 1), 1);
    assert_int_equal(replog__fresh_at_start(&c, 1, 2), 0); /* caught up */
    assert_int_equal(replog__fresh_at_start(&c, 1, 0), 0); /* a joiner's */
    raft_configuration_close(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_start),
        cmocka_unit_test(test_wiped),
        cmocka_unit_test(test_entries_are_evidence),
        cmocka_unit_test(test_off),
        cmocka_unit_test(test_at_start),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
