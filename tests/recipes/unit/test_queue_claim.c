/* A locking queue's claim whose create lost its reply, against the
 * client's scripted server (tests/unit/client_fixture.c: a socketpair and
 * a fake clock, loop mode): the create made again finds taken/X there
 * (NodeExists), and the take looks at that claim to tell whether it is
 * the one its lost create made.  Our session as its owner is not enough:
 * two handles on one client share the session, and the other's claim is
 * not ours; the claim's data, the handle's id, tells. */
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
#include "recipes/queue.h"
#include "tumbler/recipes.h"

#define SID   RS_SID /* our session */
#define CLAIM 200    /* the claim's czxid */
#define ITEM  "entry-100-0000000000"

/* ---- the client's side ---- */

struct taken_item {
    int calls, rc;
    char value[64];
};

static void on_item(int rc, const void *value, size_t len, void *data)
{
    struct taken_item *it = data;

    it->calls++;
    it->rc = rc;
    if (rc == 0)
        snprintf(it->value, sizeof it->value, "%.*s", (int)len,
                 (const char *)value);
}

/* A take on the locking queue /q up to its claim's create made again
 * after the first one lost its reply, that create answered NodeExists;
 * then the look at the claim taken/ITEM, answered as a claim of session
 * SID with `data` as its data (a getData; an exists gets the stat). */
static void take_to_claim_look(struct tb_client *c, struct tb_dqueue *q,
                               struct taken_item *it, const char *data)
{
    int32_t xid;
    int i;

    assert_int_equal(tb_dqueue_take(q, -1, on_item, it), 0);
    pump(c);
    for (i = 0; i < 3; i++) { /* /q, entries, taken: made already */
        xid = rs_expect(TB_OP_CREATE2, NULL);
        srv_reply(xid, 300, TB_ENODEEXISTS, NULL);
    }
    pump(c);
    xid = rs_expect_at(TB_OP_GETCHILDREN2, "/q/entries");
    rs_reply_names(xid, (const char *const[]){ITEM, NULL}, 1, 1);
    pump(c);
    xid = rs_expect_at(TB_OP_GETCHILDREN2, "/q/taken");
    rs_reply_names(xid, (const char *const[]){NULL}, 1, 1);
    pump(c);
    (void)rs_expect_at(TB_OP_CREATE2, "/q/taken/" ITEM); /* reply lost */
    rs_reconnect(c, 0);
    xid = rs_expect_at(TB_OP_CREATE2, "/q/taken/" ITEM); /* made again */
    srv_reply(xid, 301, TB_ENODEEXISTS, NULL);
    pump(c);
    {
        static uint8_t buf[4096];
        struct tb_rd body;
        struct tb_request_header h = srv_request(buf, sizeof buf, &body);
        struct tb_str p;

        assert_int_equal(tb_get_STR(&body, &p), 0);
        assert_true(tb_str_eq(p, TB_STR("/q/taken/" ITEM)));
        assert_true(h.type == TB_OP_GETDATA || h.type == TB_OP_EXISTS);
        if (h.type == TB_OP_GETDATA)
            rs_reply_data(h.xid, data, strlen(data), CLAIM, SID);
        else
            rs_reply_stat(h.xid, CLAIM, SID);
    }
    pump(c);
}

static void close_all(struct tb_client *c, struct tb_dqueue *q,
                      struct tb_dqueue *q2)
{
    rs_cut(c);
    tb_dqueue_free(q);
    tb_dqueue_free(q2);
    pump(c);
    tb_client_close(c);
}

/* Handles q and other on /q, and q's take through the look at its claim
 * (its own) to the item, read and delivered. */
static void claimed(struct tb_client *c, struct tb_dqueue **q,
                    struct tb_dqueue **other, struct taken_item *it)
{
    int32_t xid;

    assert_int_equal(tb_dqueue_new(q, c, "/q", TB_QUEUE_LOCKING), 0);
    assert_int_equal(tb_dqueue_new(other, c, "/q", TB_QUEUE_LOCKING), 0);
    take_to_claim_look(c, *q, it, (*q)->id);
    xid = rs_expect_at(TB_OP_GETDATA, "/q/entries/" ITEM);
    rs_reply_data(xid, "item", 4, 150, 0);
    pump(c);
}

/* The claim there is another handle's of this client (its id as the
 * data): not ours, the take does not deliver the item; it has no other
 * candidate and waits for the queue to change. */
static void test_claim_of_other_handle(void **state)
{
    struct tb_client *c = rs_open_client(0);
    struct tb_dqueue *q, *other;
    struct taken_item it = {0};

    (void)state;
    assert_int_equal(tb_dqueue_new(&q, c, "/q", TB_QUEUE_LOCKING), 0);
    assert_int_equal(tb_dqueue_new(&other, c, "/q", TB_QUEUE_LOCKING), 0);
    assert_string_not_equal(q->id, other->id);
    take_to_claim_look(c, q, &it, other->id);
    assert_int_equal(it.calls, 0);
    /* It waits: the entries' children (a getData of the item would be
     * taking another handle's). */
    assert_true(srv_has_data());
    (void)rs_expect_at(TB_OP_GETCHILDREN2, "/q/entries");
    assert_int_equal(it.calls, 0);
    assert_null(q->claimed);
    close_all(c, q, other);
}

/* The claim there is this handle's (its id): the lost create made it;
 * the take reads the item and delivers it, holding that claim. */
static void test_claim_of_this_handle(void **state)
{
    struct tb_client *c = rs_open_client(0);
    struct tb_dqueue *q, *other;
    struct taken_item it = {0};

    (void)state;
    claimed(c, &q, &other, &it);
    assert_int_equal(it.calls, 1);
    assert_int_equal(it.rc, 0);
    assert_string_equal(it.value, "item");
    assert_non_null(q->claimed);
    assert_string_equal(q->claimed, ITEM);
    assert_int_equal(q->claimed_czxid, CLAIM);
    close_all(c, q, other);
}

/* The handle freed while its take reads the item it claimed: the claim
 * goes back, so the take is cancelled, not told it has the item (which
 * the next taker gets). */
static void test_take_freed_while_reading(void **state)
{
    struct tb_client *c = rs_open_client(0);
    struct tb_dqueue *q, *other;
    struct taken_item it = {0};
    int32_t xid;

    (void)state;
    assert_int_equal(tb_dqueue_new(&q, c, "/q", TB_QUEUE_LOCKING), 0);
    assert_int_equal(tb_dqueue_new(&other, c, "/q", TB_QUEUE_LOCKING), 0);
    take_to_claim_look(c, q, &it, q->id);
    xid = rs_expect_at(TB_OP_GETDATA, "/q/entries/" ITEM);
    tb_dqueue_free(q);
    pump(c);
    rs_reply_data(xid, "item", 4, 150, 0);
    pump(c);
    assert_int_equal(it.calls, 1);
    assert_int_equal(it.rc, TB_ECANCELED);
    rs_cut(c);
    tb_dqueue_free(other);
    pump(c);
    tb_client_close(c);
}

/* A consume the server refuses (an ACL on the entry, say): nothing
 * changed, and the claim goes back (a look, then its delete), not left to
 * hide the item until the session ends with nobody able to release it. */
static void test_consume_refused_gives_claim_back(void **state)
{
    struct tb_client *c = rs_open_client(0);
    struct tb_dqueue *q, *other;
    struct taken_item it = {0};
    struct rs_done d = {0};
    struct tb_wbuf w;
    int32_t xid;

    (void)state;
    claimed(c, &q, &other, &it);
    assert_int_equal(it.rc, 0);
    assert_int_equal(tb_dqueue_consume(q, rs_done_cb, &d), 0);
    pump(c);
    xid = rs_expect(TB_OP_MULTI, NULL);
    tb_wbuf_init(&w);
    tb_multi_failure_encode(&w, 2, 0, TB_ENOAUTH);
    srv_reply(xid, 310, 0, &w);
    tb_wbuf_free(&w);
    pump(c);
    assert_int_equal(d.calls, 1);
    assert_int_equal(d.rc, TB_ENOAUTH);
    (void)rs_expect_at(TB_OP_SYNC, "/q/taken/" ITEM);
    xid = rs_expect_at(TB_OP_EXISTS, "/q/taken/" ITEM);
    (void)xid;
    close_all(c, q, other);
}

/* A claim held when the session expired, consumed once the handle has a
 * new session: the claim went with the old one, and taken/ITEM, if there,
 * is another taker's, whose item the consume's deletes would take.
 * Refused, nothing sent. */
static void test_consume_in_new_session(void **state)
{
    struct tb_client *c = rs_open_client(0);
    struct tb_dqueue *q, *other;
    struct taken_item it = {0};
    struct tb_connect_req rq;

    (void)state;
    claimed(c, &q, &other, &it);
    assert_int_equal(it.rc, 0);
    close(server_fd); /* then back to a server that says it expired */
    server_fd = -1;
    pump(c);
    fake_now += 600;
    pump(c);
    srv_accept(0, 0, 0, &rq);
    pump(c);
    assert_int_equal(tb_client_state(c), TB_SESSION_EXPIRED);
    assert_int_equal(tb_client_new_session(c), 0);
    pump(c);
    fake_now += 600;
    pump(c);
    srv_accept(SID + 1, 6000, 0, &rq);
    pump(c);
    assert_int_equal(tb_client_session(c, NULL), SID + 1);
    assert_int_equal(tb_dqueue_consume(q, NULL, NULL), TB_ELOCKLOST);
    pump(c);
    assert_false(srv_has_data());
    assert_null(q->claimed);
    close_all(c, q, other);
}

/* A consume the server refuses as expired: TB_ELOCKLOST, as the header
 * says (it was TB_ESESSIONEXPIRED).  The same for a claim held when the
 * session expired, consumed before a new session, and nothing is sent
 * (the claim was kept too: the next take was refused). */
static void test_consume_after_expiry(void **state)
{
    struct tb_client *c = rs_open_client(0);
    struct tb_dqueue *q, *other;
    struct taken_item it = {0};
    struct rs_done d = {0};

    (void)state;
    claimed(c, &q, &other, &it);
    assert_int_equal(it.rc, 0);
    assert_int_equal(tb_dqueue_consume(q, rs_done_cb, &d), 0);
    pump(c);
    srv_reply(rs_expect(TB_OP_MULTI, NULL), 310, TB_ESESSIONEXPIRED, NULL);
    pump(c);
    assert_int_equal(d.calls, 1);
    assert_int_equal(d.rc, TB_ELOCKLOST);
    assert_null(q->claimed);
    close_all(c, q, other);
}

static void test_consume_after_expiry_sync(void **state)
{
    struct tb_client *c = rs_open_client(0);
    struct tb_dqueue *q, *other;
    struct taken_item it = {0};
    struct tb_connect_req rq;

    (void)state;
    claimed(c, &q, &other, &it);
    assert_int_equal(it.rc, 0);
    close(server_fd); /* then back to a server that says it expired */
    server_fd = -1;
    pump(c);
    fake_now += 600;
    pump(c);
    srv_accept(0, 0, 0, &rq);
    pump(c);
    assert_int_equal(tb_client_state(c), TB_SESSION_EXPIRED);
    assert_int_equal(tb_dqueue_consume(q, NULL, NULL), TB_ELOCKLOST);
    assert_null(q->claimed);
    close_all(c, q, other);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_claim_of_other_handle, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_claim_of_this_handle, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_consume_refused_gives_claim_back,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_consume_in_new_session, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_take_freed_while_reading, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_consume_after_expiry, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_consume_after_expiry_sync, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
