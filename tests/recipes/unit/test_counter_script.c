/* A shared counter whose node's version wrapped (the server's, as
 * ZooKeeper's, is a Java int: negative past 2^31 writes), against the
 * client's scripted server (tests/unit/client_fixture.c): an add or a set
 * writes on that negative version, and a compare-and-set takes one too
 * (after a look at the node, which must be a counter's);
 * only -1 asks for no node.  A negative version read as "no node" had
 * the add create, find the node there, read it again, for ever. */
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
#include "recipes/rcp.h"
#include "tumbler/recipes.h"

/* ---- the scripted server's side ---- */

/* A getData's reply: the counter's 8 bytes, the node at `version`. */
static void reply_counter(int32_t xid, int64_t value, int32_t version)
{
    unsigned char b[8];
    struct tb_get_data_resp rs = {{(const char *)b, sizeof b}, {0}};
    struct tb_wbuf w;

    rcp_counter_encode(value, b);
    rs.stat.czxid = rs.stat.mzxid = 5;
    rs.stat.version = version;
    tb_wbuf_init(&w);
    tb_get_data_resp_encode(&w, &rs);
    srv_reply(xid, 300, 0, &w);
    tb_wbuf_free(&w);
}

/* The next request, a setData of the counter at `path`: its value and the
 * version it names; answered with the node now at version + 1. */
static void expect_set(const char *path, int64_t *value, int32_t *version)
{
    struct tb_stat st = {0};
    struct tb_rd body;
    struct tb_str p, data;
    struct tb_wbuf w;
    int32_t xid = rs_expect(TB_OP_SETDATA, &body);

    assert_int_equal(tb_get_STR(&body, &p), 0);
    assert_true(tb_str_eq(p, tb_str_c(path)));
    assert_int_equal(tb_get_BUF(&body, &data), 0);
    assert_int_equal(rcp_counter_decode(data.ptr, data.len, value), 0);
    assert_int_equal(tb_get_I32(&body, version), 0);
    st.version = (int32_t)((uint32_t)*version + 1);
    tb_wbuf_init(&w);
    tb_put_STAT(&w, &st);
    srv_reply(xid, 301, 0, &w);
    tb_wbuf_free(&w);
}

/* ---- the client's side ---- */

struct done {
    int calls, rc;
    int64_t value;
    int32_t version;
};

static void on_done(int rc, int64_t value, int32_t version, void *data)
{
    struct done *d = data;

    d->calls++;
    d->rc = rc;
    d->value = value;
    d->version = version;
}

/* An add reads 10 at version INT32_MIN and writes 15 on that version. */
static void test_add_on_wrapped_version(void **state)
{
    struct tb_client *c = rs_open_client(0);
    struct done d = {0};
    int64_t value;
    int32_t version;

    (void)state;
    assert_int_equal(tb_counter_add(c, "/n", 5, on_done, &d), 0);
    pump(c);
    reply_counter(rs_expect_at(TB_OP_GETDATA, "/n"), 10, INT32_MIN);
    pump(c);
    expect_set("/n", &value, &version);
    assert_int_equal(value, 15);
    assert_int_equal(version, INT32_MIN);
    pump(c);
    assert_int_equal(d.calls, 1);
    assert_int_equal(d.rc, 0);
    assert_int_equal(d.value, 15);
    assert_int_equal(d.version, INT32_MIN + 1);
    rs_close(c);
}

/* A compare-and-set on a wrapped version (-5, as a get returned it) is a
 * setData on it, not a create, once a look found the counter there. */
static void test_cas_on_wrapped_version(void **state)
{
    struct tb_client *c = rs_open_client(0);
    struct done d = {0};
    int64_t value;
    int32_t version;

    (void)state;
    assert_int_equal(tb_counter_cas(c, "/n", -5, 7, on_done, &d), 0);
    pump(c);
    reply_counter(rs_expect_at(TB_OP_GETDATA, "/n"), 3, -5);
    pump(c);
    expect_set("/n", &value, &version);
    assert_int_equal(value, 7);
    assert_int_equal(version, -5);
    pump(c);
    assert_int_equal(d.calls, 1);
    assert_int_equal(d.rc, 0);
    assert_int_equal(d.version, -4);
    rs_close(c);
}

/* A compare-and-set at -1 (only if there is no node) finds a node there:
 * a look tells data of another layout (TB_EDATAINCONSISTENCY, as the
 * header says; it was TB_EBADVERSION) from a counter (TB_EBADVERSION,
 * even at a version wrapped to -1, which setData would take as any). */
static void test_cas_create_finds_node(void **state)
{
    static const char four[4] = {0, 0, 0, 9}; /* a SharedCount's */
    struct tb_client *c = rs_open_client(0);
    struct done d = {0};

    (void)state;
    assert_int_equal(tb_counter_cas(c, "/n", -1, 7, on_done, &d), 0);
    pump(c);
    srv_reply(rs_expect_at(TB_OP_CREATE2, "/n"), 300, TB_ENODEEXISTS, NULL);
    pump(c);
    rs_reply_data(rs_expect_at(TB_OP_GETDATA, "/n"), four, sizeof four, 5, 0);
    pump(c);
    assert_int_equal(d.calls, 1);
    assert_int_equal(d.rc, TB_EDATAINCONSISTENCY);

    assert_int_equal(tb_counter_cas(c, "/n", -1, 7, on_done, &d), 0);
    pump(c);
    srv_reply(rs_expect_at(TB_OP_CREATE2, "/n"), 300, TB_ENODEEXISTS, NULL);
    pump(c);
    reply_counter(rs_expect_at(TB_OP_GETDATA, "/n"), 3, -1);
    pump(c);
    assert_int_equal(d.calls, 2);
    assert_int_equal(d.rc, TB_EBADVERSION);
    assert_false(srv_has_data()); /* no setData */
    rs_close(c);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_add_on_wrapped_version, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_cas_on_wrapped_version, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_cas_create_finds_node, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
