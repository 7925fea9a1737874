/* Unit tests of the wire codec: a round trip for every record, the bytes of
 * captured ZooKeeper frames, and every truncation of each record refused
 * without reading past its end (inputs sit right before a PROT_NONE page). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "proto/proto.h"

/* Copies `n` bytes so that they end exactly at an inaccessible page. */
struct guarded {
    uint8_t *map;
    size_t maplen;
    uint8_t *p;
};

static struct guarded guard(const void *src, size_t n)
{
    struct guarded g;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t pages = (n + page - 1) / page + 1;

    g.maplen = pages * page;
    g.map = mmap(NULL, g.maplen, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(g.map != MAP_FAILED);
    assert_int_equal(mprotect(g.map + (pages - 1) * page, page, PROT_NONE), 0);
    g.p = g.map + (pages - 1) * page - n;
    memcpy(g.p, src, n);
    return g;
}

static void unguard(struct guarded *g)
{
    munmap(g->map, g->maplen);
}

static struct tb_vec make_acl(struct tb_wbuf *w)
{
    struct tb_acl a = {31, {TB_STR("world"), TB_STR("anyone")}};
    struct tb_acl b = {1, {TB_STR("digest"), TB_STR("u:h=")}};
    tb_put_acl(w, &a);
    tb_put_acl(w, &b);
    return tb_vec_view(w, 2);
}

/* Encodes `in`, decodes it back, re-encodes and compares the bytes; then
 * checks that every strict prefix of the encoding is refused. */
/* Every shorter input fails to decode, except the last `opt` bytes: a
 * record's optional tail, absent in records written before it existed. */
#define ROUND_TRIP(rec, value) ROUND_TRIP_OPT(rec, value, 0)
#define ROUND_TRIP_OPT(rec, value, opt)                                     \
    do {                                                                    \
        struct tb_wbuf w1, w2;                                              \
        struct tb_##rec out;                                                \
        struct tb_rd r;                                                     \
        struct guarded g;                                                   \
        size_t cut;                                                         \
        tb_wbuf_init(&w1);                                                  \
        tb_wbuf_init(&w2);                                                  \
        tb_##rec##_encode(&w1, &(value));                                   \
        g = guard(w1.base, w1.len);                                         \
        r = tb_rd_make(g.p, w1.len);                                        \
        assert_int_equal(tb_##rec##_decode(&r, &out), 0);                   \
        assert_ptr_equal(r.pos, r.end);                                     \
        tb_##rec##_encode(&w2, &out);                                       \
        assert_int_equal(w1.len, w2.len);                                   \
        assert_memory_equal(w1.base, w2.base, w1.len);                      \
        unguard(&g);                                                        \
        for (cut = 0; cut < w1.len; cut++) {                                \
            g = guard(w1.base, cut);                                        \
            r = tb_rd_make(g.p, cut);                                       \
            assert_int_equal(tb_##rec##_decode(&r, &out),                   \
                             cut < w1.len - (opt) ? TB_EMARSHALLING : 0);   \
            unguard(&g);                                                    \
        }                                                                   \
        tb_wbuf_free(&w1);                                                  \
        tb_wbuf_free(&w2);                                                  \
    } while (0)

static const struct tb_stat stat1 = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};

static void test_round_trips(void **state)
{
    struct tb_wbuf acl, strs;
    struct tb_vec acls, names;
    (void)state;

    tb_wbuf_init(&acl);
    tb_wbuf_init(&strs);
    acls = make_acl(&acl);
    tb_put_STR(&strs, TB_STR("a"));
    tb_put_STR(&strs, TB_STR(""));
    tb_put_STR(&strs, TB_STR("zz"));
    names = tb_vec_view(&strs, 3);
    {
        struct tb_request_header v = {7, TB_OP_CREATE};
        ROUND_TRIP(request_header, v);
    }
    {
        struct tb_reply_header v = {-1, -1, TB_ENONODE};
        ROUND_TRIP(reply_header, v);
    }
    {
        struct tb_create_req v = {TB_STR("/a"), TB_STR_NULL, acls, 3};
        ROUND_TRIP(create_req, v);
    }
    {
        struct tb_create_ttl_req v = {TB_STR("/a"), TB_STR("d"), acls, 5,
                                      1000};
        ROUND_TRIP(create_ttl_req, v);
    }
    {
        struct tb_delete_req v = {TB_STR("/x"), -1};
        ROUND_TRIP(delete_req, v);
    }
    {
        struct tb_path_watch_req v = {TB_STR("/x"), 1};
        ROUND_TRIP(path_watch_req, v);
    }
    {
        struct tb_set_data_req v = {TB_STR("/x"), TB_STR("hello"), 3};
        ROUND_TRIP(set_data_req, v);
    }
    {
        struct tb_set_acl_req v = {TB_STR("/x"), acls, -1};
        ROUND_TRIP(set_acl_req, v);
    }
    {
        struct tb_auth_req v = {0, TB_STR("digest"), TB_STR("u:p")};
        ROUND_TRIP(auth_req, v);
    }
    {
        struct tb_set_watches2_req v = {0x53, names, names, names, names,
                                        names};
        ROUND_TRIP(set_watches2_req, v);
    }
    {
        struct tb_reconfig_req v = {TB_STR_NULL, TB_STR(""), TB_STR("x"), -1};
        ROUND_TRIP(reconfig_req, v);
    }
    {
        struct tb_create2_resp v = {TB_STR("/a0000000001"), stat1};
        ROUND_TRIP(create2_resp, v);
    }
    {
        struct tb_get_data_resp v = {TB_STR("data"), stat1};
        ROUND_TRIP(get_data_resp, v);
    }
    {
        struct tb_get_acl_resp v = {acls, stat1};
        ROUND_TRIP(get_acl_resp, v);
    }
    {
        struct tb_children2_resp v = {names, stat1};
        ROUND_TRIP(children2_resp, v);
    }
    {
        struct tb_watcher_event v = {TB_EVENT_CREATED, 3, TB_STR("/w")};
        ROUND_TRIP(watcher_event, v);
    }
    {
        struct tb_wbuf idw;
        struct tb_id id = {TB_STR("ip"), TB_STR("127.0.0.1")};
        struct tb_txn v;
        tb_wbuf_init(&idw);
        tb_put_id(&idw, &id);
        v = (struct tb_txn){TB_OP_CREATE, 77, 5, 1000, 9, 0,
                            tb_vec_view(&idw, 1), TB_STR("body"),
                            TB_TXN_ENFORCE_QUOTA};
        ROUND_TRIP_OPT(txn, v, 1);
        {
            /* An entry logged before `flags` existed ends with its body. */
            struct tb_wbuf w;
            struct tb_txn out;
            struct tb_rd r;
            tb_wbuf_init(&w);
            tb_txn_encode(&w, &v);
            r = tb_rd_make(w.base, w.len - 1);
            assert_int_equal(tb_txn_decode(&r, &out), 0);
            assert_int_equal(out.flags, 0);
            assert_true(tb_str_eq(out.body, TB_STR("body")));
            tb_wbuf_free(&w);
        }
        tb_wbuf_free(&idw);
    }
    tb_wbuf_free(&acl);
    tb_wbuf_free(&strs);
}

static void test_vec_iteration(void **state)
{
    struct tb_wbuf w;
    struct tb_vec v;
    struct tb_rd it;
    struct tb_acl a;
    (void)state;

    tb_wbuf_init(&w);
    v = make_acl(&w);
    it = tb_vec_reader(v);
    assert_int_equal(tb_vec_next_acl(&it, &a), 1);
    assert_int_equal(a.perms, 31);
    assert_true(tb_str_eq(a.id.scheme, TB_STR("world")));
    assert_int_equal(tb_vec_next_acl(&it, &a), 1);
    assert_true(tb_str_eq(a.id.id, TB_STR("u:h=")));
    assert_int_equal(tb_vec_next_acl(&it, &a), 0);
    tb_wbuf_free(&w);
}

/* The handshake as kazoo sent it to ZooKeeper 3.8.0 (protocol doc §2.8). */
static const uint8_t kazoo_connect[] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x27, 0x10, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};

static void test_connect(void **state)
{
    struct tb_connect_req req;
    struct tb_connect_resp resp = {0};
    struct tb_rd r = tb_rd_make(kazoo_connect, sizeof kazoo_connect);
    struct tb_wbuf w;
    static const char pw[16] = {1};
    (void)state;

    assert_int_equal(sizeof kazoo_connect, 45);
    assert_int_equal(tb_connect_req_decode(&r, &req), 0);
    assert_int_equal(req.timeout, 10000);
    assert_int_equal(req.passwd.len, 16);
    assert_true(req.has_readonly);
    r = tb_rd_make(kazoo_connect, 44);
    assert_int_equal(tb_connect_req_decode(&r, &req), 0);
    assert_false(req.has_readonly);
    r = tb_rd_make(kazoo_connect, 4);
    assert_int_equal(tb_connect_req_decode(&r, &req), TB_EMARSHALLING);

    tb_wbuf_init(&w);
    resp.timeout = 10000;
    resp.session_id = 0x010000066a710000;
    resp.passwd = (struct tb_str){pw, 16};
    resp.has_readonly = 1;
    tb_connect_resp_encode(&w, &resp);
    assert_int_equal(w.len, 37);
    w.len = 0;
    resp.has_readonly = 0;
    tb_connect_resp_encode(&w, &resp);
    assert_int_equal(w.len, 36);
    tb_wbuf_free(&w);
}

/* The failed multi request of protocol doc §15.6, rebuilt and walked. */
static void test_multi(void **state)
{
    struct tb_wbuf w;
    struct tb_multi_op op;
    struct tb_rd r;
    int n = 0, rv;
    (void)state;

    tb_wbuf_init(&w);
    op.type = TB_OP_CREATE;
    op.u.create = (struct tb_create_ttl_req){
        TB_STR("/proto/m2"), TB_STR("a"), tb_acl_open_unsafe, 0, -1};
    tb_multi_op_encode(&w, &op);
    op.type = TB_OP_DELETE;
    op.u.del = (struct tb_delete_req){TB_STR("/proto/nonexistent"), -1};
    tb_multi_op_encode(&w, &op);
    op.type = TB_OP_CHECK;
    op.u.check = (struct tb_check_req){TB_STR("/c"), 4};
    tb_multi_op_encode(&w, &op);
    tb_multi_end_encode(&w);
    assert_memory_equal(w.base + w.len - 9,
                        "\xff\xff\xff\xff\x01\xff\xff\xff\xff", 9);
    r = tb_rd_make(w.base, w.len);
    while ((rv = tb_multi_next(&r, TB_OP_MULTI, &op)) == 1)
        n++;
    assert_int_equal(rv, 0);
    assert_int_equal(n, 3);
    /* The same ops are not allowed in a multiRead. */
    r = tb_rd_make(w.base, w.len);
    assert_int_equal(tb_multi_next(&r, TB_OP_MULTIREAD, &op),
                     TB_EMARSHALLING);
    /* Truncation anywhere is refused. */
    r = tb_rd_make(w.base, w.len - 1);
    while ((rv = tb_multi_next(&r, TB_OP_MULTI, &op)) == 1)
        ;
    assert_int_equal(rv, TB_EMARSHALLING);
    tb_wbuf_free(&w);
}

static void test_hostile_lengths(void **state)
{
    /* A string that claims more bytes than remain, a negative length other
     * than -1, and a vector count that cannot fit. */
    static const uint8_t long_str[] = {0, 0, 0, 9, 'a', 'b'};
    static const uint8_t neg_str[] = {0xff, 0xff, 0xff, 0xfe};
    static const uint8_t big_vec[] = {0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0};
    struct tb_str s;
    struct tb_vec v;
    struct tb_rd r;
    (void)state;

    r = tb_rd_make(long_str, sizeof long_str);
    assert_int_equal(tb_get_STR(&r, &s), TB_EMARSHALLING);
    r = tb_rd_make(neg_str, sizeof neg_str);
    assert_int_equal(tb_get_STR(&r, &s), TB_EMARSHALLING);
    r = tb_rd_make(big_vec, sizeof big_vec);
    assert_int_equal(tb_get_STRS(&r, &v), TB_EMARSHALLING);
}

static void test_frames(void **state)
{
    static const uint8_t ping[] = {0, 0, 0, 8, 0xff, 0xff, 0xff, 0xfe,
                                   0, 0, 0, 0x0b, 0, 0, 0};
    static const uint8_t huge[] = {0, 0x10, 0, 0};     /* 1,048,576 */
    static const uint8_t neg[] = {0xff, 0xff, 0xff, 0xfb};
    static const uint8_t ruok[] = {'r', 'u', 'o', 'k'};
    struct tb_str payload;
    size_t used;
    struct tb_wbuf w;
    size_t start;
    (void)state;

    assert_int_equal(tb_frame_split(ping, 3, 1048575, &payload, &used),
                     TB_EAGAIN);
    assert_int_equal(tb_frame_split(ping, 11, 1048575, &payload, &used),
                     TB_EAGAIN);
    assert_int_equal(tb_frame_split(ping, sizeof ping, 1048575, &payload,
                                    &used), 0);
    assert_int_equal(used, 12);
    assert_int_equal(payload.len, 8);
    assert_int_equal(tb_frame_split(huge, 4, 1048575, &payload, &used),
                     TB_ETOOBIG);
    assert_int_equal(tb_frame_split(neg, 4, 1048575, &payload, &used),
                     TB_ETOOBIG);
    assert_int_equal(tb_frame_split(ruok, 4, 1048575, &payload, &used),
                     TB_ETOOBIG);

    tb_wbuf_init(&w);
    start = tb_frame_begin(&w);
    tb_put_I32(&w, -2);
    tb_put_I32(&w, TB_OP_PING);
    tb_frame_end(&w, start);
    assert_int_equal(w.len, 12);
    assert_memory_equal(w.base, ping, 12);
    tb_wbuf_free(&w);
}

static void test_seq_format(void **state)
{
    char b[16];
    (void)state;

    tb_seq_format(b, sizeof b, 0);
    assert_string_equal(b, "0000000000");
    tb_seq_format(b, sizeof b, 2147483647);
    assert_string_equal(b, "2147483647");
    tb_seq_format(b, sizeof b, -1);
    assert_string_equal(b, "-000000001");
    tb_seq_format(b, sizeof b, -2147483647 - 1);
    assert_string_equal(b, "-2147483648");
}

static void test_well_known_acls(void **state)
{
    /* OPEN_ACL_UNSAFE as ZooKeeper encodes it (protocol doc §4.1). */
    static const uint8_t open[] = {0, 0, 0, 1, 0, 0, 0, 0x1f, 0, 0, 0, 5,
                                   'w', 'o', 'r', 'l', 'd', 0, 0, 0, 6,
                                   'a', 'n', 'y', 'o', 'n', 'e'};
    struct tb_wbuf w;
    (void)state;

    tb_wbuf_init(&w);
    tb_put_VEC(&w, tb_acl_open_unsafe);
    assert_int_equal(w.len, 27);
    assert_memory_equal(w.base, open, sizeof open);
    tb_wbuf_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trips),
        cmocka_unit_test(test_vec_iteration),
        cmocka_unit_test(test_connect),
        cmocka_unit_test(test_multi),
        cmocka_unit_test(test_hostile_lengths),
        cmocka_unit_test(test_frames),
        cmocka_unit_test(test_seq_format),
        cmocka_unit_test(test_well_known_acls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
