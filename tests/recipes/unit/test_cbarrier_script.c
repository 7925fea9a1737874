/* A cyclic barrier's party against the client's scripted server
 * (tests/unit/client_fixture.c: a socketpair and a fake clock, loop
 * mode), in generation 0 of /cb.  A create whose reply was lost is
 * looked for after a sync, so a server that lags the leader cannot make
 * us create a second node; a twin all the same counts once, does not
 * make a party above it late, and goes when we leave.  Parties that die
 * together below a waiting party are seen by it: it watches the party
 * node below its own, and breaks the generation once it is gone. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "rcp_script.h"
#include "tumbler/recipes.h"

#define GEN  "/cb/gen-0000000000"
#define NEXT "/cb/gen-0000000001"
#define END  GEN "/end"
#define PA   "party-a-0000000000" /* other parties' nodes */
#define PB   "party-b-0000000001"
#define PC   "party-c-0000000002"

/* ---- the scripted server's side ---- */

/* The reply of a multi whose every op succeeded: `ops` of them, each a
 * TB_OP_CREATE of `created` or a TB_OP_DELETE. */
static void reply_multi(int32_t xid, const int *ops, int n, const char *created)
{
    struct tb_path_resp pr = {tb_str_c(created)};
    struct tb_multi_header mh;
    struct tb_wbuf b;
    int i;

    tb_wbuf_init(&b);
    for (i = 0; i < n; i++) {
        mh = (struct tb_multi_header){ops[i], 0, 0};
        tb_multi_header_encode(&b, &mh);
        if (ops[i] == TB_OP_CREATE)
            tb_path_resp_encode(&b, &pr);
    }
    tb_multi_end_encode(&b);
    srv_reply(xid, 300, 0, &b);
    tb_wbuf_free(&b);
}

/* Reads the multi that breaks the generation: "end" = broken made, our
 * node `mine` deleted; answers it. */
static void expect_break(const char *mine)
{
    static const int ops[] = {TB_OP_CREATE, TB_OP_DELETE};
    struct tb_multi_op op;
    struct tb_rd body;
    int32_t xid = rs_expect(TB_OP_MULTI, &body);

    assert_int_equal(tb_multi_next(&body, TB_OP_MULTI, &op), 1);
    assert_true(op.type == TB_OP_CREATE || op.type == TB_OP_CREATE2);
    assert_true(tb_str_eq(op.u.create.path, TB_STR(END)));
    assert_true(tb_str_eq(op.u.create.data, TB_STR("broken")));
    assert_int_equal(tb_multi_next(&body, TB_OP_MULTI, &op), 1);
    assert_int_equal(op.type, TB_OP_DELETE);
    assert_true(tb_str_eq(op.u.del.path, tb_str_c(mine)));
    assert_int_equal(tb_multi_next(&body, TB_OP_MULTI, &op), 0);
    reply_multi(xid, ops, 2, END);
}

/* ---- the client's side ---- */

/* An await on /cb (generation 0 there) up to its party's create, which
 * this reads: its xid; the name it asks for, "party-<uuid>-", in
 * `prefix`. */
static int32_t arrive(struct tb_client *c, struct tb_cbarrier *b,
                      struct rs_done *d, char *prefix, size_t cap)
{
    static const char *const gens[] = {"gen-0000000000", NULL};
    struct tb_create_req cr;
    struct tb_rd body;
    int32_t xid;

    assert_int_equal(tb_cbarrier_await(b, -1, rs_done_cb, d), 0);
    pump(c);
    rs_reply_names(rs_expect_at(TB_OP_GETCHILDREN, "/cb"), gens, 0, 0);
    pump(c);
    xid = rs_expect(TB_OP_CREATE2, &body);
    assert_int_equal(tb_create_req_decode(&body, &cr), 0);
    assert_true(cr.path.len > strlen(GEN "/") && cr.path.len < cap);
    assert_int_equal(cr.flags, TB_EPHEMERAL_SEQUENTIAL);
    snprintf(prefix, cap, "%.*s", (int)(cr.path.len - strlen(GEN "/")),
             cr.path.ptr + strlen(GEN "/"));
    assert_int_equal(strncmp(prefix, "party-", 6), 0);
    return xid;
}

/* The create's reply is lost with the connection; back on a server, the
 * party first syncs it, then reads the generation's children: the names
 * up to NULL (made by that create or not). */
static void lose_create(struct tb_client *c, const char *const *names)
{
    rs_reconnect(c, 0);
    rs_reply_sync(rs_expect_at(TB_OP_SYNC, GEN), GEN);
    rs_reply_names(rs_expect_at(TB_OP_GETCHILDREN, GEN), names, 0, 0);
    pump(c);
}

/* The look at the open generation, answered with `names` (cversion:
 * their count); then, as a party that is not the lowest, it waits for
 * "end" and for `pred`, the node below its own, to go: both set. */
static void look_then_wait(struct tb_client *c, const char *const *names,
                           const char *pred)
{
    char p[128];
    int n = 0;

    while (names[n] != NULL)
        n++;
    rs_reply_names(rs_expect_at(TB_OP_GETCHILDREN2, GEN), names, 1, n);
    pump(c);
    srv_reply(rs_expect_at(TB_OP_EXISTS, END), 300, TB_ENONODE, NULL);
    snprintf(p, sizeof p, GEN "/%s", pred);
    rs_reply_stat(rs_expect_at(TB_OP_EXISTS, p), 100, 0x99);
    pump(c);
    assert_false(srv_has_data());
}

/* The watches a wake ends, whichever of the two was met: "end"'s, then
 * the one on the party `pred` before ours. */
static void expect_removals(struct tb_client *c, const char *pred)
{
    srv_reply(rs_expect_at(TB_OP_REMOVEWATCHES, END), 310, 0, NULL);
    srv_reply(rs_expect_at(TB_OP_REMOVEWATCHES, pred), 310, 0, NULL);
    pump(c);
}

/* The trip, made by another party: "end" there wakes the party (not the
 * lowest: A is), which ends its wait for A, looks and reads "end" =
 * passed. */
static void trip(struct tb_client *c, const char *const *names)
{
    int n = 0;

    while (names[n] != NULL)
        n++;
    srv_event(TB_EVENT_CREATED, END);
    pump(c);
    rs_reply_stat(rs_expect_at(TB_OP_EXISTS, END), 310, 0);
    pump(c);
    expect_removals(c, GEN "/" PA);
    rs_reply_names(rs_expect_at(TB_OP_GETCHILDREN2, GEN), names, 1, n);
    pump(c);
    rs_reply_data(rs_expect_at(TB_OP_GETDATA, END), "passed", 6, 310, 0);
    pump(c);
}

/* The last of our await: our node `node` deleted, the children left
 * (party nodes of others: nobody cleans up yet). */
static void leave(struct tb_client *c, const char *node,
                  const char *const *left)
{
    srv_reply(rs_expect_at(TB_OP_DELETE, node), 320, 0, NULL);
    pump(c);
    rs_reply_names(rs_expect_at(TB_OP_GETCHILDREN, GEN), left, 0, 0);
    pump(c);
}

static void close_all(struct tb_client *c, struct tb_cbarrier *b)
{
    rs_cut(c);
    tb_cbarrier_free(b);
    pump(c);
    tb_client_close(c);
}

/* Parties 3: A arrived as 0; our create was applied as 1 but its reply
 * lost.  The server we come back to may not have applied it yet: the
 * party syncs it before it reads, finds its node there and creates no
 * second one (with one, 3 nodes would trip a barrier of 3 with two
 * parties).  It waits, and passes with the trip. */
static void test_lost_create_synced_found(void **state)
{
    struct tb_client *c = rs_open_client(0);
    struct tb_cbarrier *b;
    struct rs_done d = {0};
    char prefix[128], mine[160], node[200];
    const char *found[] = {PA, mine, NULL};
    const char *passed[] = {PA, mine, PC, "end", NULL};
    const char *left[] = {PA, PC, "end", NULL};

    (void)state;
    assert_int_equal(tb_cbarrier_new(&b, c, "/cb", 3), 0);
    (void)arrive(c, b, &d, prefix, sizeof prefix); /* its reply is lost */
    snprintf(mine, sizeof mine, "%s0000000001", prefix);
    snprintf(node, sizeof node, GEN "/%s", mine);
    lose_create(c, found);
    look_then_wait(c, found, PA); /* no second create before it */
    assert_int_equal(d.calls, 0);
    trip(c, passed);
    leave(c, node, left);
    assert_int_equal(d.calls, 1);
    assert_int_equal(d.rc, 0);
    close_all(c, b);
}

/* Parties 3: our lost create was applied twice (once after the look
 * that sent the second), so there are A-0, ours-1, ours-2.  We are one
 * party: no trip with two; we use our first node; the twin is deleted
 * once the generation is decided and we leave. */
static void test_twin_counts_once(void **state)
{
    struct tb_client *c = rs_open_client(0);
    struct tb_cbarrier *b;
    struct rs_done d = {0};
    char prefix[128], mine[160], twin[160], node[200], tnode[200];
    const char *found[] = {PA, twin, mine, NULL};
    const char *passed[] = {PA, mine, twin, "party-c-0000000003", "end", NULL};
    const char *left[] = {PA, twin, "party-c-0000000003", "end", NULL};

    (void)state;
    assert_int_equal(tb_cbarrier_new(&b, c, "/cb", 3), 0);
    (void)arrive(c, b, &d, prefix, sizeof prefix);
    snprintf(mine, sizeof mine, "%s0000000001", prefix);
    snprintf(twin, sizeof twin, "%s0000000002", prefix);
    snprintf(node, sizeof node, GEN "/%s", mine);
    snprintf(tnode, sizeof tnode, GEN "/%s", twin);
    lose_create(c, found);
    look_then_wait(c, found, PA); /* a wait, not the trip's multi */
    assert_int_equal(d.calls, 0);
    trip(c, passed);
    leave(c, node, left);
    srv_reply(rs_expect_at(TB_OP_DELETE, tnode), 330, 0, NULL);
    pump(c);
    assert_int_equal(d.calls, 1);
    assert_int_equal(d.rc, 0);
    close_all(c, b);
}

/* Parties 3: B has a twin below us (B-1, B-2), we arrive as 3, the third
 * party.  Our look makes the trip; we are no late party (3 is our
 * number, but two parties are before us): the await ends with 0 and
 * does not go on to generation 1. */
static void test_twin_below_no_late_party(void **state)
{
    static const int ops[] = {TB_OP_CREATE, TB_OP_CREATE};
    struct tb_client *c = rs_open_client(0);
    struct tb_cbarrier *b;
    struct rs_done d = {0};
    char prefix[128], mine[160], node[200];
    const char *open[] = {PA, PB, "party-b-0000000002", mine, NULL};
    const char *passed[] = {PA, PB, "party-b-0000000002", mine, "end", NULL};
    const char *left[] = {PA, PB, "party-b-0000000002", "end", NULL};
    struct tb_multi_op op;
    struct tb_rd body;
    int32_t xid;

    (void)state;
    assert_int_equal(tb_cbarrier_new(&b, c, "/cb", 3), 0);
    xid = arrive(c, b, &d, prefix, sizeof prefix);
    snprintf(mine, sizeof mine, "%s0000000003", prefix);
    snprintf(node, sizeof node, GEN "/%s", mine);
    rs_reply_create(xid, node, 300);
    pump(c);
    rs_reply_names(rs_expect_at(TB_OP_GETCHILDREN2, GEN), open, 1, 4);
    pump(c);
    xid = rs_expect(TB_OP_MULTI, &body); /* the trip */
    assert_int_equal(tb_multi_next(&body, TB_OP_MULTI, &op), 1);
    assert_true(tb_str_eq(op.u.create.path, TB_STR(END)));
    assert_int_equal(tb_multi_next(&body, TB_OP_MULTI, &op), 1);
    assert_true(tb_str_eq(op.u.create.path, TB_STR(NEXT)));
    reply_multi(xid, ops, 2, END);
    pump(c);
    rs_reply_names(rs_expect_at(TB_OP_GETCHILDREN2, GEN), passed, 1, 5);
    pump(c);
    rs_reply_data(rs_expect_at(TB_OP_GETDATA, END), "passed", 6, 310, 0);
    pump(c);
    leave(c, node, left);
    assert_int_equal(d.calls, 1);
    assert_int_equal(d.rc, 0);
    assert_false(srv_has_data()); /* no create in generation 1 */
    close_all(c, b);
}

/* Parties 2: A-0 and B-1 tripped the generation; we arrived as 2, late.
 * Our delete on leaving is lost with the connection: whether it was
 * applied or not, we are no party of generation 0, and go on to 1 (we
 * returned 0, and generation 1 waited a party short). */
static void test_late_party_lost_delete_goes_on(void **state)
{
    struct tb_client *c = rs_open_client(0);
    struct tb_cbarrier *b;
    struct rs_done d = {0};
    char prefix[128], mine[160], node[200];
    const char *passed[] = {PA, PB, mine, "end", NULL};
    const char *left[] = {PA, PB, "end", NULL};
    struct tb_create_req cr;
    struct tb_rd body;
    int32_t xid;

    (void)state;
    assert_int_equal(tb_cbarrier_new(&b, c, "/cb", 2), 0);
    xid = arrive(c, b, &d, prefix, sizeof prefix);
    snprintf(mine, sizeof mine, "%s0000000002", prefix);
    snprintf(node, sizeof node, GEN "/%s", mine);
    rs_reply_create(xid, node, 300);
    pump(c);
    rs_reply_names(rs_expect_at(TB_OP_GETCHILDREN2, GEN), passed, 1, 4);
    pump(c);
    rs_reply_data(rs_expect_at(TB_OP_GETDATA, END), "passed", 6, 310, 0);
    pump(c);
    (void)rs_expect_at(TB_OP_DELETE, node); /* its reply is lost */
    rs_reconnect(c, 0);
    srv_reply(rs_expect_at(TB_OP_DELETE, node), 320, 0, NULL); /* reaped */
    rs_reply_names(rs_expect_at(TB_OP_GETCHILDREN, GEN), left, 0, 0);
    pump(c);
    assert_int_equal(d.calls, 0);
    xid = rs_expect(TB_OP_CREATE2, &body); /* a party of generation 1 */
    assert_int_equal(tb_create_req_decode(&body, &cr), 0);
    assert_true(cr.path.len > strlen(NEXT "/party-") &&
                memcmp(cr.path.ptr, NEXT "/party-", strlen(NEXT "/party-")) ==
                    0);
    close_all(c, b);
    assert_int_equal(d.calls, 1);
    assert_int_not_equal(d.rc, 0);
}

/* An arrival finds generation 0 below the current one, empty: made late
 * by a party of a new barrier that found no generation (the others had
 * passed it and removed it meanwhile), with no "end" for the removal of
 * a decided one.  It is removed all the same (it stayed for good), and
 * the arrival joins generation 1. */
static void test_empty_generation_below_removed(void **state)
{
    static const char *const gens[] = {"gen-0000000000", "gen-0000000001",
                                       NULL};
    struct tb_client *c = rs_open_client(0);
    struct tb_cbarrier *b;
    struct rs_done d = {0};
    struct tb_create_req cr;
    struct tb_rd body;
    struct tb_wbuf w;

    (void)state;
    assert_int_equal(tb_cbarrier_new(&b, c, "/cb", 2), 0);
    assert_int_equal(tb_cbarrier_await(b, -1, rs_done_cb, &d), 0);
    pump(c);
    rs_reply_names(rs_expect_at(TB_OP_GETCHILDREN, "/cb"), gens, 0, 0);
    pump(c);
    tb_wbuf_init(&w); /* the decided one's removal: no "end" there */
    tb_multi_failure_encode(&w, 3, 1, TB_ENONODE);
    srv_reply(rs_expect(TB_OP_MULTI, NULL), 300, 0, &w);
    tb_wbuf_free(&w);
    srv_reply(rs_expect_at(TB_OP_DELETE, GEN), 301, 0, NULL);
    (void)rs_expect(TB_OP_CREATE2, &body);
    assert_int_equal(tb_create_req_decode(&body, &cr), 0);
    assert_true(cr.path.len > strlen(NEXT "/party-") &&
                memcmp(cr.path.ptr, NEXT "/party-", strlen(NEXT "/party-")) ==
                    0);
    pump(c);
    assert_int_equal(d.calls, 0);
    close_all(c, b);
}

/* Parties 4: A-0 and B-1 are two handles of one client, we are 2.  That
 * client's session ends: both nodes go at once.  We watch B-1, the node
 * below ours: its deletion wakes us, the look shows a departure
 * (cversion 5, one child), and we break the generation: TB_EBROKEN. */
static void test_lowest_two_die_together(void **state)
{
    struct tb_client *c = rs_open_client(0);
    struct tb_cbarrier *b;
    struct rs_done d = {0};
    char prefix[128], mine[160], node[200];
    const char *open[] = {PA, PB, mine, NULL};
    const char *after[] = {mine, NULL};
    const char *left[] = {"end", NULL};
    int32_t xid;

    (void)state;
    assert_int_equal(tb_cbarrier_new(&b, c, "/cb", 4), 0);
    xid = arrive(c, b, &d, prefix, sizeof prefix);
    snprintf(mine, sizeof mine, "%s0000000002", prefix);
    snprintf(node, sizeof node, GEN "/%s", mine);
    rs_reply_create(xid, node, 300);
    pump(c);
    look_then_wait(c, open, PB);
    srv_event(TB_EVENT_DELETED, GEN "/" PB);
    pump(c);
    srv_reply(rs_expect_at(TB_OP_EXISTS, GEN "/" PB), 400, TB_ENONODE, NULL);
    pump(c);
    expect_removals(c, GEN "/" PB);
    rs_reply_names(rs_expect_at(TB_OP_GETCHILDREN2, GEN), after, 1, 5);
    pump(c);
    expect_break(node);
    pump(c);
    rs_reply_names(rs_expect_at(TB_OP_GETCHILDREN, GEN), left, 0, 0);
    pump(c);
    /* The cleanup of a broken generation is refused: it has no next. */
    srv_reply(rs_expect(TB_OP_MULTI, NULL), 410, TB_ENONODE, NULL);
    pump(c);
    assert_int_equal(d.calls, 1);
    assert_int_equal(d.rc, TB_EBROKEN);
    close_all(c, b);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_lost_create_synced_found, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_twin_counts_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_twin_below_no_late_party, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_lowest_two_die_together, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_late_party_lost_delete_goes_on,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_empty_generation_below_removed,
                                        setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
