/* Writes the seed corpora of the fuzz targets: well-formed records of
 * every kind for the codec targets, framed streams, paths on both sides
 * of every rule, scripts that walk the state machine through sessions,
 * sequences, multis, containers, TTL nodes and ACLs, and real snapshots of
 * such states.  Seeds only need to start the fuzzer somewhere deep; they
 * are regenerated with `fuzz_seedgen tests/fuzz/corpus` when the formats
 * change, and each file is named after what it holds.
 *
 * Scripts follow enum fz_txn_op / enum fz_model_op (fuzz_gen.h). */
#include <errno.h>
#include <sys/stat.h>

#include "fuzz_gen.h"
#include "fuzz_records.h"

static const char *outdir;
static unsigned long written;

static void save(const char *target, const char *name, const void *p, size_t n)
{
    char path[1024];
    FILE *fp;

    snprintf(path, sizeof path, "%s/%s", outdir, target);
    if (mkdir(path, 0755) != 0 && errno != EEXIST) {
        perror(path);
        exit(1);
    }
    snprintf(path, sizeof path, "%s/%s/%s", outdir, target, name);
    fp = fopen(path, "wb");
    if (fp == NULL || (n > 0 && fwrite(p, 1, n, fp) != n) || fclose(fp)) {
        perror(path);
        exit(1);
    }
    written++;
}

static void save_w(const char *target, const char *name, struct tb_wbuf *w)
{
    FZ_CHECK(!w->oom, "out of memory");
    save(target, name, w->base, w->len);
    w->len = 0;
}

static void put_u8(struct tb_wbuf *w, uint8_t b)
{
    tb_wbuf_put(w, &b, 1);
}

static void put_u16(struct tb_wbuf *w, uint16_t v)
{
    put_u8(w, (uint8_t)(v >> 8));
    put_u8(w, (uint8_t)v);
}

/* ---- codec records ---- */

static const struct tb_stat some_stat = {0x100000003,
                                         0x100000007,
                                         1700000000123,
                                         1700000000456,
                                         3,
                                         5,
                                         1,
                                         0x0100000000000002,
                                         4,
                                         2,
                                         0x100000009};

static struct tb_vec acl_list(struct tb_wbuf *w)
{
    struct tb_acl a = {TB_PERM_ALL,
                       {TB_STR("digest"), tb_str_c(fz_alice_digest)}};
    struct tb_acl b = {TB_PERM_READ, {TB_STR("world"), TB_STR("anyone")}};

    w->len = 0;
    tb_put_acl(w, &a);
    tb_put_acl(w, &b);
    return tb_vec_view(w, 2);
}

static struct tb_vec str_list(struct tb_wbuf *w, int n)
{
    static const char *const s[] = {"/a", "/a/b", "n-0000000001", ""};
    int i;

    w->len = 0;
    for (i = 0; i < n; i++)
        tb_put_STR(w, tb_str_c(s[i % 4]));
    return tb_vec_view(w, n);
}

static void requests(void)
{
    struct tb_wbuf w, v;
    struct tb_multi_op op;

    tb_wbuf_init(&w);
    tb_wbuf_init(&v);
#define REQ(sel, name, rec, ...)                                               \
    do {                                                                       \
        put_u8(&w, sel);                                                       \
        tb_##rec##_encode(&w, &(struct tb_##rec){__VA_ARGS__});                \
        save_w("request", name, &w);                                           \
    } while (0)
    REQ(FZ_REQ_HEADER, "header_ping", request_header, -2, TB_OP_PING);
    REQ(FZ_REQ_CREATE, "create", create_req, TB_STR("/a/b"), TB_STR("data"),
        tb_acl_open_unsafe, TB_EPHEMERAL_SEQUENTIAL);
    REQ(FZ_REQ_CREATE, "create_null_data", create_req, TB_STR("/x"),
        TB_STR_NULL, acl_list(&v), TB_PERSISTENT);
    REQ(FZ_REQ_CREATE_TTL, "create_ttl", create_ttl_req, TB_STR("/t"),
        TB_STR(""), tb_acl_creator_all, TB_PERSISTENT_WITH_TTL, 60000);
    REQ(FZ_REQ_DELETE, "delete", delete_req, TB_STR("/a"), -1);
    REQ(FZ_REQ_PATH_WATCH, "get_data_watch", path_watch_req, TB_STR("/a"), 1);
    REQ(FZ_REQ_PATH, "sync", path_req, TB_STR("/"));
    REQ(FZ_REQ_SET_DATA, "set_data", set_data_req, TB_STR("/a"),
        TB_STR("\x00\x01\xff"), 7);
    REQ(FZ_REQ_SET_ACL, "set_acl", set_acl_req, TB_STR("/a"), acl_list(&v), 2);
    REQ(FZ_REQ_CHECK, "check", check_req, TB_STR("/a"), 0);
    REQ(FZ_REQ_AUTH, "auth_digest", auth_req, 0, TB_STR("digest"),
        TB_STR("alice:secret"));
    REQ(FZ_REQ_SET_WATCHES, "set_watches", set_watches_req, 0x10000002a,
        str_list(&v, 2), (struct tb_vec){0, NULL, 0},
        (struct tb_vec){-1, NULL, 0});
    {
        struct tb_wbuf v2;
        tb_wbuf_init(&v2);
        REQ(FZ_REQ_SET_WATCHES2, "set_watches2", set_watches2_req, 7,
            str_list(&v, 1), str_list(&v2, 3), (struct tb_vec){0, NULL, 0},
            (struct tb_vec){0, NULL, 0}, (struct tb_vec){-1, NULL, 0});
        tb_wbuf_free(&v2);
    }
    REQ(FZ_REQ_ADD_WATCH, "add_watch", add_watch_req, TB_STR("/a"),
        TB_ADDWATCH_PERSISTENT_RECURSIVE);
    REQ(FZ_REQ_WATCHES, "remove_watches", watches_req, TB_STR("/a"),
        TB_WATCHER_ANY);
    REQ(FZ_REQ_RECONFIG, "reconfig", reconfig_req, TB_STR_NULL,
        TB_STR("server.1=127.0.0.1:2888:3888"), TB_STR_NULL, -1);
#undef REQ
    put_u8(&w, FZ_REQ_CONNECT);
    tb_connect_req_encode(
        &w,
        &(struct tb_connect_req){
            0, 0, 30000, 0, {"\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16}, 1, 0});
    save_w("request", "connect_45", &w);
    put_u8(&w, FZ_REQ_CONNECT);
    tb_connect_req_encode(&w, &(struct tb_connect_req){0,
                                                       0x10000002a,
                                                       4000,
                                                       0x0100000000000001,
                                                       {"0123456789abcdef", 16},
                                                       0,
                                                       0});
    save_w("request", "connect_44", &w);

    put_u8(&w, FZ_REQ_MULTI);
    op.type = TB_OP_CREATE;
    op.u.create = (struct tb_create_ttl_req){TB_STR("/m"), TB_STR("x"),
                                             tb_acl_open_unsafe, 0, -1};
    tb_multi_op_encode(&w, &op);
    op.type = TB_OP_CREATETTL;
    op.u.create.flags = TB_PERSISTENT_SEQUENTIAL_WITH_TTL;
    op.u.create.ttl = 1000;
    tb_multi_op_encode(&w, &op);
    op.type = TB_OP_CHECK;
    op.u.check = (struct tb_check_req){TB_STR("/m"), 0};
    tb_multi_op_encode(&w, &op);
    op.type = TB_OP_SETDATA;
    op.u.set_data = (struct tb_set_data_req){TB_STR("/m"), TB_STR("y"), -1};
    tb_multi_op_encode(&w, &op);
    op.type = TB_OP_DELETE;
    op.u.del = (struct tb_delete_req){TB_STR("/m"), 1};
    tb_multi_op_encode(&w, &op);
    tb_multi_end_encode(&w);
    save_w("request", "multi", &w);
    put_u8(&w, FZ_REQ_MULTI);
    tb_multi_end_encode(&w);
    save_w("request", "multi_empty", &w);
    put_u8(&w, FZ_REQ_MULTIREAD);
    op.type = TB_OP_GETDATA;
    op.u.read = (struct tb_path_watch_req){TB_STR("/m"), 0};
    tb_multi_op_encode(&w, &op);
    op.type = TB_OP_GETCHILDREN;
    tb_multi_op_encode(&w, &op);
    tb_multi_end_encode(&w);
    save_w("request", "multiread", &w);
    tb_wbuf_free(&w);
    tb_wbuf_free(&v);
}

static void replies(void)
{
    struct tb_wbuf w, v;
    struct tb_multi_header h;

    tb_wbuf_init(&w);
    tb_wbuf_init(&v);
#define REP(sel, name, rec, ...)                                               \
    do {                                                                       \
        put_u8(&w, sel);                                                       \
        tb_##rec##_encode(&w, &(struct tb_##rec){__VA_ARGS__});                \
        save_w("reply", name, &w);                                             \
    } while (0)
    REP(FZ_REP_HEADER, "header", reply_header, 5, 0x100000007, TB_ENONODE);
    REP(FZ_REP_PATH, "path", path_resp, TB_STR("/a/n-0000000003"));
    REP(FZ_REP_CREATE2, "create2", create2_resp, TB_STR("/a"), some_stat);
    REP(FZ_REP_STAT, "stat", stat_resp, some_stat);
    REP(FZ_REP_DATA, "get_data", get_data_resp, TB_STR("hello"), some_stat);
    REP(FZ_REP_DATA, "get_data_null", get_data_resp, TB_STR_NULL, some_stat);
    REP(FZ_REP_ACL, "get_acl", get_acl_resp, acl_list(&v), some_stat);
    REP(FZ_REP_CHILDREN, "children", children_resp, str_list(&v, 3));
    REP(FZ_REP_CHILDREN2, "children2", children2_resp, str_list(&v, 2),
        some_stat);
    REP(FZ_REP_COUNT_RESP, "count", count_resp, 42);
    v.len = 0;
    tb_put_id(&v, &(struct tb_id){TB_STR("digest"), TB_STR("alice")});
    tb_put_id(&v, &(struct tb_id){TB_STR("ip"), TB_STR("127.0.0.1")});
    REP(FZ_REP_WHOAMI, "whoami", whoami_resp, tb_vec_view(&v, 2));
    REP(FZ_REP_ERROR, "error", error_resp, TB_ENOTEMPTY);
    REP(FZ_REP_EVENT, "event", watcher_event, TB_EVENT_CHILDREN_CHANGED,
        TB_STATE_SYNC_CONNECTED, TB_STR("/a"));
    REP(FZ_REP_MULTI_HEADER, "multi_header", multi_header, -1, 1, -1);
#undef REP
    put_u8(&w, FZ_REP_CONNECT);
    tb_connect_resp_encode(
        &w, &(struct tb_connect_resp){
                0, 30000, 0x0100000000000001, {"0123456789abcdef", 16}, 1, 0});
    save_w("reply", "connect_37", &w);
    put_u8(&w, FZ_REP_CONNECT);
    tb_connect_resp_encode(
        &w, &(struct tb_connect_resp){
                0, 0, 0, {"\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16}, 0, 0});
    save_w("reply", "connect_36_expired", &w);

    /* A successful multi (3.8 result types) and a failed one. */
    put_u8(&w, FZ_REP_MULTI);
    h = (struct tb_multi_header){TB_OP_CREATE, 0, 0};
    tb_multi_header_encode(&w, &h);
    tb_path_resp_encode(&w, &(struct tb_path_resp){TB_STR("/m")});
    h.type = TB_OP_CREATE2;
    tb_multi_header_encode(&w, &h);
    tb_create2_resp_encode(&w,
                           &(struct tb_create2_resp){TB_STR("/c"), some_stat});
    h.type = TB_OP_SETDATA;
    tb_multi_header_encode(&w, &h);
    tb_stat_resp_encode(&w, &(struct tb_stat_resp){some_stat});
    h.type = TB_OP_DELETE;
    tb_multi_header_encode(&w, &h);
    h.type = TB_OP_CHECK;
    tb_multi_header_encode(&w, &h);
    tb_multi_end_encode(&w);
    save_w("reply", "multi_ok", &w);
    put_u8(&w, FZ_REP_MULTI);
    h = (struct tb_multi_header){TB_OP_ERROR, 0, 0};
    tb_multi_header_encode(&w, &h);
    tb_error_resp_encode(&w, &(struct tb_error_resp){0});
    h.err = TB_EBADVERSION;
    tb_multi_header_encode(&w, &h);
    tb_error_resp_encode(&w, &(struct tb_error_resp){TB_EBADVERSION});
    h.err = TB_ERUNTIMEINCONSISTENCY;
    tb_multi_header_encode(&w, &h);
    tb_error_resp_encode(&w, &(struct tb_error_resp){TB_ERUNTIMEINCONSISTENCY});
    tb_multi_end_encode(&w);
    save_w("reply", "multi_failed", &w);
    put_u8(&w, FZ_REP_MULTI);
    h = (struct tb_multi_header){TB_OP_GETDATA, 0, 0};
    tb_multi_header_encode(&w, &h);
    tb_get_data_resp_encode(&w,
                            &(struct tb_get_data_resp){TB_STR("v"), some_stat});
    h.type = TB_OP_GETCHILDREN;
    tb_multi_header_encode(&w, &h);
    tb_children_resp_encode(&w, &(struct tb_children_resp){str_list(&v, 2)});
    h = (struct tb_multi_header){TB_OP_ERROR, 0, TB_ENONODE};
    tb_multi_header_encode(&w, &h);
    tb_error_resp_encode(&w, &(struct tb_error_resp){TB_ENONODE});
    tb_multi_end_encode(&w);
    save_w("reply", "multiread", &w);
    tb_wbuf_free(&w);
    tb_wbuf_free(&v);
}

/* ---- frames ---- */

static void frames(void)
{
    struct tb_wbuf w;
    size_t at;

    tb_wbuf_init(&w);
    /* limit index 10 = TB_DEFAULT_MAXBUFFER; seed; largest chunk */
    put_u8(&w, 10);
    put_u16(&w, 0x1234);
    put_u8(&w, 7);
    at = tb_frame_begin(&w);
    tb_connect_req_encode(
        &w,
        &(struct tb_connect_req){
            0, 0, 30000, 0, {"\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16}, 1, 0});
    tb_frame_end(&w, at);
    at = tb_frame_begin(&w);
    tb_request_header_encode(&w, &(struct tb_request_header){-2, 11});
    tb_frame_end(&w, at);
    at = tb_frame_begin(&w);
    tb_request_header_encode(&w, &(struct tb_request_header){1, 4});
    tb_path_watch_req_encode(&w, &(struct tb_path_watch_req){TB_STR("/a"), 1});
    tb_frame_end(&w, at);
    tb_put_I32(&w, 0); /* an empty frame */
    tb_put_I32(&w, 9); /* and a partial one */
    tb_wbuf_put(&w, "part", 4);
    save_w("frame", "session_start", &w);

    put_u8(&w, 4); /* limit 15 */
    put_u8(&w, 0);
    put_u8(&w, 1);
    put_u8(&w, 1);
    tb_put_I32(&w, 15);
    tb_wbuf_put(&w, "fifteen bytes!!", 15);
    tb_put_I32(&w, 16);
    tb_wbuf_put(&w, "sixteen bytes!!!", 16);
    save_w("frame", "at_the_limit", &w);

    put_u8(&w, 10);
    put_u8(&w, 9);
    put_u8(&w, 9);
    put_u8(&w, 3);
    tb_put_I32(&w, 4);
    tb_wbuf_put(&w, "ruok", 4);
    tb_put_I32(&w, -5);
    tb_put_I32(&w, 1);
    save_w("frame", "negative_length", &w);

    put_u8(&w, 10);
    put_u8(&w, 0);
    put_u8(&w, 0);
    put_u8(&w, 0);
    tb_wbuf_put(&w, "ruok", 4); /* a four-letter word is "too big" */
    save_w("frame", "four_letter_word", &w);
    tb_wbuf_free(&w);
}

/* ---- paths ---- */

static void paths(void)
{
    static const struct {
        const char *name;
        const char *path;
        size_t len;
    } p[] = {
        {"root", "/", 1},
        {"simple", "/a/b/c", 6},
        {"dots_ok", "/.a/a./.../x", 12},
        {"dot", "/a/./b", 6},
        {"dotdot", "/a/..", 5},
        {"empty_component", "/a//b", 5},
        {"trailing_slash", "/a/", 3},
        {"relative", "a/b", 3},
        {"empty", "", 0},
        {"nul", "/a\0b", 4},
        {"control", "/a\x1f", 3},
        {"del", "/\x7f", 2},
        {"c1", "/\xc2\x85", 3},
        {"latin", "/t/\xc3\xa9", 5},
        {"cjk", "/\xe4\xb8\xad\xe6\x96\x87", 7},
        {"private_use", "/\xee\x80\x80", 4},
        {"after_private_use", "/\xef\xa4\x80", 4},
        {"specials", "/\xef\xbf\xb0", 4},
        {"bom", "/\xef\xbb\xbf", 4},
        {"emoji", "/\xf0\x9f\x98\x80", 5},
        {"surrogate_encoded", "/\xed\xa0\x80", 4},
        {"truncated_utf8", "/\xe4\xb8", 3},
        {"stray_continuation", "/\x80", 2},
        {"seq_name", "/q/n-0000000007", 15},
        {"negative_seq", "/q/-2147483648", 14},
    };
    size_t i;

    for (i = 0; i < sizeof p / sizeof p[0]; i++)
        save("path", p[i].name, p[i].path, p[i].len);
}

/* ---- txn_apply scripts ---- */

/* Path bytes for fz_gen_path: an alphabet path of 1-3 names (indices
 * into its name table: a b c d n- x zookeeper config). */
static void apath(struct tb_wbuf *w, int depth, const uint8_t *names)
{
    int i;

    put_u8(w, (uint8_t)(6 | (depth - 1) << 3));
    for (i = 0; i < depth; i++)
        put_u8(w, names[i]);
}

static void awkward(struct tb_wbuf *w, uint8_t index)
{
    put_u8(w, 7 | 8);
    put_u8(w, index);
}

static void data(struct tb_wbuf *w, const char *s)
{
    if (s == NULL) {
        put_u8(w, 0);
        return;
    }
    put_u8(w, 2);
    put_u8(w, (uint8_t)strlen(s));
    tb_wbuf_put(w, s, strlen(s));
}

/* create byte: opcode index (create, create2, container, TTL), flags,
 * ttl index (0: -1, 3: 1000). */
static uint8_t cbyte(int op, int flags, int ttl)
{
    return (uint8_t)(op | flags << 2 | ttl << 5);
}

static void t_step(struct tb_wbuf *w, enum fz_txn_op op, uint8_t hdr)
{
    put_u8(w, (uint8_t)op);
    put_u8(w, hdr);
}

static void t_create(struct tb_wbuf *w, uint8_t hdr, uint8_t cb, int depth,
                     const uint8_t *names, const char *d, uint8_t acl)
{
    t_step(w, FZ_OP_CREATE, hdr);
    put_u8(w, cb);
    apath(w, depth, names);
    data(w, d);
    put_u8(w, acl);
}

static void t_session(struct tb_wbuf *w)
{
    t_step(w, FZ_OP_SESSION, 0);
    put_u16(w, 30000);
    put_u8(w, 0);
}

static const uint8_t A[] = {0}, AB[] = {0, 1}, AC[] = {0, 2}, ABC[] = {0, 1, 2},
                     C[] = {2}, D[] = {3}, X[] = {5};

static void txn_scripts(void)
{
    struct tb_wbuf w;
    int i;

    tb_wbuf_init(&w);
    /* Plain writes: create, setData, setACL, delete, sync. */
    t_session(&w);
    t_create(&w, 0, cbyte(0, 0, 0), 1, A, "root of it", 0);
    t_create(&w, 0, cbyte(1, 0, 0), 2, AB, "child", 0);
    t_create(&w, 0, cbyte(1, 0, 0), 3, ABC, NULL, 0);
    t_step(&w, FZ_OP_SETDATA, 0);
    apath(&w, 2, AB);
    data(&w, "new");
    put_u8(&w, 2); /* version: the current one */
    t_step(&w, FZ_OP_SETACL, 0);
    apath(&w, 1, A);
    put_u8(&w, 7); /* ip + world read/create */
    put_u8(&w, 0);
    t_step(&w, FZ_OP_DELETE, 0);
    apath(&w, 3, ABC);
    put_u8(&w, 2);
    t_step(&w, FZ_OP_DELETE, 0);
    apath(&w, 1, A); /* not empty */
    put_u8(&w, 0);
    t_step(&w, FZ_OP_SYNC, 0);
    apath(&w, 1, A);
    save_w("txn_apply", "writes", &w);

    /* Sequential and ephemeral nodes, then the session closes. */
    t_session(&w);
    t_session(&w);
    t_create(&w, 0, cbyte(0, 0, 0), 1, A, "", 0);
    for (i = 0; i < 6; i++) {
        t_step(&w, FZ_OP_CREATE, (uint8_t)(i & 1));
        put_u8(&w, cbyte(i % 2, 2 + (i & 1), 0));
        awkward(&w, 3); /* "/a/" */
        data(&w, "s");
        put_u8(&w, 0);
    }
    t_create(&w, 1, cbyte(0, 1, 0), 2, AC, "eph", 0);
    t_create(&w, 1, cbyte(0, 0, 0), 3, (const uint8_t[]){0, 2, 0}, NULL, 0);
    t_step(&w, FZ_OP_CLOSE, 1);
    t_step(&w, FZ_OP_CLOSE, 1);
    save_w("txn_apply", "sequential_ephemeral", &w);

    /* Multis that succeed, fail, and are malformed. */
    t_session(&w);
    t_step(&w, FZ_OP_MULTI, 0);
    put_u8(&w, 4);
    put_u8(&w, 0);
    put_u8(&w, cbyte(0, 0, 0));
    apath(&w, 1, A);
    data(&w, "m");
    put_u8(&w, 0);
    put_u8(&w, 0);
    put_u8(&w, cbyte(2, 4, 0));
    apath(&w, 1, C);
    data(&w, NULL);
    put_u8(&w, 0);
    put_u8(&w, 2);
    apath(&w, 1, A);
    data(&w, "m2");
    put_u8(&w, 0);
    put_u8(&w, 3);
    apath(&w, 1, A);
    put_u8(&w, 0);
    t_step(&w, FZ_OP_MULTI, 0);
    put_u8(&w, 3);
    put_u8(&w, 1);
    apath(&w, 1, A);
    put_u8(&w, 0);
    put_u8(&w, 3);
    apath(&w, 1, A); /* gone by now */
    put_u8(&w, 0);
    put_u8(&w, 2);
    apath(&w, 1, C);
    data(&w, "x");
    put_u8(&w, 0);
    t_step(&w, FZ_OP_MULTI, 0);
    put_u8(&w, 2);
    put_u8(&w, 1);
    apath(&w, 1, C);
    put_u8(&w, 0);
    put_u8(&w, 5); /* a read: refused as a whole */
    t_step(&w, FZ_OP_MULTI, 0);
    put_u8(&w, 0);
    save_w("txn_apply", "multi", &w);

    /* Containers and TTL nodes, cleaned up when due. */
    t_session(&w);
    t_create(&w, 0, cbyte(2, 4, 0), 1, C, NULL, 0);
    t_create(&w, 0, cbyte(0, 0, 0), 2, (const uint8_t[]){2, 0}, "k", 0);
    t_step(&w, FZ_OP_CONTAINER, 0);
    put_u8(&w, 0);
    apath(&w, 1, C); /* not empty */
    t_step(&w, FZ_OP_DELETE, 0);
    apath(&w, 2, (const uint8_t[]){2, 0});
    put_u8(&w, 0);
    t_step(&w, FZ_OP_CONTAINER, 0);
    put_u8(&w, 1); /* the first due node */
    t_create(&w, 0, cbyte(3, 5, 3), 1, X, "ttl", 0);
    t_create(&w, 0, cbyte(3, 6, 3), 1, D, "ttl-seq", 0);
    t_step(&w, FZ_OP_CONTAINER, 0x80);
    put_u16(&w, 100); /* +10 s */
    put_u8(&w, 1);
    t_step(&w, FZ_OP_CONTAINER, 0);
    put_u8(&w, 1);
    save_w("txn_apply", "container_ttl", &w);

    /* ACLs and identities: digest-only nodes, auth expansion, super. */
    t_session(&w);
    t_create(&w, 1 << 3, cbyte(0, 0, 0), 1, A, "alice's", 5);
    t_create(&w, 2 << 3, cbyte(0, 0, 0), 2, AB, "bob", 0);
    t_create(&w, 1 << 3, cbyte(0, 0, 0), 2, AB, "alice", 6);
    t_step(&w, FZ_OP_SETDATA, 2 << 3);
    apath(&w, 2, AB);
    data(&w, "bob again");
    put_u8(&w, 0);
    t_step(&w, FZ_OP_SETDATA, 5 << 3);
    apath(&w, 2, AB);
    data(&w, "super");
    put_u8(&w, 0);
    t_step(&w, FZ_OP_SETACL, 1 << 6);
    apath(&w, 1, A);
    put_u8(&w, 11);
    put_u8(&w, 0);
    t_create(&w, 0, cbyte(0, 0, 0), 1, D, NULL, 8);
    t_create(&w, 0, cbyte(0, 0, 0), 1, D, NULL, 9);
    t_create(&w, 0, cbyte(0, 0, 0), 1, D, NULL, 5);
    save_w("txn_apply", "acl", &w);

    /* A replica restored from a snapshot mid-way. */
    t_session(&w);
    t_create(&w, 0, cbyte(0, 0, 0), 1, A, NULL, 0);
    t_create(&w, 0, cbyte(0, 1, 0), 2, AB, NULL, 0);
    t_step(&w, FZ_OP_RESTORE, 0);
    for (i = 0; i < 3; i++) {
        t_step(&w, FZ_OP_CREATE, 0);
        put_u8(&w, cbyte(0, 3, 0));
        awkward(&w, 3);
        data(&w, NULL);
        put_u8(&w, 0);
    }
    t_step(&w, FZ_OP_CLOSE, 0);
    save_w("txn_apply", "restore_then_follow", &w);

    /* A wide node: the hash table and a children array grow, then
     * shrink. */
    t_session(&w);
    t_create(&w, 0, cbyte(0, 0, 0), 1, A, NULL, 0);
    t_step(&w, FZ_OP_BULK_CREATE, 0);
    put_u8(&w, 56); /* 64 creates */
    put_u8(&w, 0);  /* persistent sequential */
    awkward(&w, 3); /* "/a/" */
    t_step(&w, FZ_OP_BULK_CREATE, 0);
    put_u8(&w, 2); /* 10 creates */
    put_u8(&w, 1); /* ephemeral sequential */
    awkward(&w, 3);
    t_step(&w, FZ_OP_BULK_DELETE, 0);
    put_u8(&w, 4); /* /a, in pre-order after the system nodes */
    put_u8(&w, 3);
    put_u8(&w, 66);
    t_step(&w, FZ_OP_CLOSE, 0);
    save_w("txn_apply", "wide_node", &w);

    /* Raw entries and raw bodies. */
    t_step(&w, FZ_OP_RAW_ENTRY, 0);
    put_u8(&w, 5);
    tb_wbuf_put(&w, "\0\0\0\x01\0", 5);
    t_step(&w, FZ_OP_RAW_BODY, 0);
    put_u8(&w, 10); /* check outside a multi */
    put_u8(&w, 4);
    tb_wbuf_put(&w, "\0\0\0\x01", 4);
    t_step(&w, FZ_OP_RAW_BODY, 6);
    put_u8(&w, 3); /* getData */
    put_u8(&w, 0);
    save_w("txn_apply", "raw", &w);
    tb_wbuf_free(&w);
}

/* ---- tree_model scripts ---- */

/* Model path bytes: mode, node index (0 = "/"). */
static void mpath(struct tb_wbuf *w, uint8_t mode, uint8_t node)
{
    put_u8(w, mode);
    put_u8(w, node);
}

#define M_CHILD(name) ((uint8_t)(2 | (name) << 3)) /* a b c s- */
#define M_SEQ         5
#define M_NODE        0

static void m_step(struct tb_wbuf *w, enum fz_model_op op, uint8_t session)
{
    put_u8(w, (uint8_t)op);
    put_u8(w, session);
}

/* A create's fields; its first byte: flags 0-6, then create (0) or
 * create2 (1). */
static void create_fields(struct tb_wbuf *w, uint8_t flags, int create2,
                          uint8_t mode, uint8_t node, const char *d)
{
    put_u8(w, (uint8_t)(flags | create2 << 3));
    mpath(w, mode, node);
    data(w, d);
    put_u8(w, 1); /* a valid ACL */
}

static void m_create(struct tb_wbuf *w, uint8_t session, uint8_t flags,
                     int create2, uint8_t mode, uint8_t node, const char *d)
{
    m_step(w, FZ_M_CREATE, session);
    create_fields(w, flags, create2, mode, node, d);
}

/* The sub-ops of a multi, after their count. */
static void sub_create(struct tb_wbuf *w, uint8_t flags, uint8_t mode,
                       uint8_t node, const char *d)
{
    put_u8(w, 0);
    create_fields(w, flags, 0, mode, node, d);
}

enum { SUB_DELETE = 1, SUB_SET, SUB_CHECK };

/* With version byte 0; d is setData's. */
static void sub_op(struct tb_wbuf *w, uint8_t kind, uint8_t mode, uint8_t node,
                   const char *d)
{
    put_u8(w, kind);
    mpath(w, mode, node);
    if (kind == SUB_SET)
        data(w, d);
    put_u8(w, 0);
}

static void model_scripts(void)
{
    struct tb_wbuf w;
    int i;

    tb_wbuf_init(&w);
    m_step(&w, FZ_M_SESSION, 0);
    m_create(&w, 0, 0, 0, M_CHILD(0), 0, "a"); /* /a = node 4 */
    for (i = 0; i < 5; i++)
        m_create(&w, 0, 2, i & 1, M_SEQ, 4, NULL); /* /a/0000000000.. */
    m_create(&w, 0, 0, 1, M_CHILD(1), 4, "b");     /* /a/b */
    m_step(&w, FZ_M_DELETE, 0);
    mpath(&w, M_NODE, 6);
    put_u8(&w, 0);
    m_create(&w, 0, 2, 0, M_SEQ, 4, "after delete");
    m_step(&w, FZ_M_SETDATA, 0);
    mpath(&w, M_NODE, 4);
    data(&w, "v1");
    put_u8(&w, 2);
    m_step(&w, FZ_M_SETDATA, 0);
    mpath(&w, M_NODE, 4);
    data(&w, "bad version");
    put_u8(&w, 4);
    save_w("tree_model", "sequential", &w);

    m_step(&w, FZ_M_SESSION, 0);
    m_step(&w, FZ_M_SESSION, 0);
    m_create(&w, 0, 0, 0, M_CHILD(0), 0, NULL); /* /a */
    m_create(&w, 1, 3, 0, M_CHILD(3), 4, "e1"); /* /a/s-.. */
    m_create(&w, 1, 1, 1, M_CHILD(1), 4, "e2"); /* /a/b */
    m_create(&w, 0, 1, 0, M_CHILD(2), 4, "e3"); /* /a/c */
    m_create(&w, 0, 0, 0, M_CHILD(0), 6, NULL); /* under an ephemeral */
    m_step(&w, FZ_M_DELETE, 0);
    mpath(&w, M_NODE, 4); /* not empty */
    put_u8(&w, 0);
    m_step(&w, FZ_M_CLOSE, 1);
    m_step(&w, FZ_M_CLOSE, 1); /* already gone */
    m_step(&w, FZ_M_CLOSE, 6); /* no session */
    save_w("tree_model", "ephemeral", &w);

    m_step(&w, FZ_M_SESSION, 0);
    m_step(&w, FZ_M_MULTI, 0);
    put_u8(&w, 4);
    sub_create(&w, 0, M_CHILD(0), 0, "m");
    sub_create(&w, 2, M_SEQ, 0, NULL);
    sub_op(&w, SUB_SET, M_NODE, 0, "root data");
    sub_op(&w, SUB_CHECK, M_NODE, 0, NULL);
    m_step(&w, FZ_M_MULTI, 0);
    put_u8(&w, 3);
    sub_op(&w, SUB_DELETE, M_NODE, 4, NULL);
    sub_op(&w, SUB_DELETE, M_NODE, 4, NULL); /* deleted twice */
    sub_op(&w, SUB_SET, M_NODE, 0, NULL);
    save_w("tree_model", "multi", &w);

    m_step(&w, FZ_M_SESSION, 0);
    m_create(&w, 0, 4, 0, M_CHILD(2), 0, NULL); /* container /c */
    m_create(&w, 0, 0, 0, M_CHILD(0), 4, NULL); /* /c/a */
    m_step(&w, FZ_M_CONTAINER, 0);
    mpath(&w, M_NODE, 4);
    m_step(&w, FZ_M_DELETE, 0);
    mpath(&w, M_NODE, 5);
    put_u8(&w, 0);
    m_step(&w, FZ_M_CONTAINER, 0);
    mpath(&w, M_NODE, 4);
    m_create(&w, 0, 5, 0, M_CHILD(1), 0, "ttl"); /* ttl 0: refused */
    m_create(&w, 0, 5 | 1 << 3, 0, M_CHILD(1), 0, "ttl");
    m_step(&w, FZ_M_CONTAINER, 0);
    mpath(&w, M_NODE, 4);
    m_step(&w, FZ_M_TICK, 0);
    put_u8(&w, 1);
    put_u8(&w, 0);
    m_step(&w, FZ_M_CONTAINER, 0);
    mpath(&w, M_NODE, 4);
    save_w("tree_model", "container_ttl", &w);

    m_step(&w, FZ_M_SESSION, 0);
    m_create(&w, 0, 0, 0, M_CHILD(0), 0, NULL);
    m_step(&w, FZ_M_COUNTER, 0);
    put_u8(&w, 4);
    put_u8(&w, 0); /* 2147483646 */
    for (i = 0; i < 4; i++)
        m_create(&w, 0, 2, 0, M_SEQ, 4, NULL);
    m_step(&w, FZ_M_COUNTER, 0);
    put_u8(&w, 4);
    put_u8(&w, 3); /* -1000000000 */
    m_create(&w, 0, 2, 0, M_SEQ, 4, NULL);
    save_w("tree_model", "counter_wrap", &w);

    /* Session byte 8: the first session, hard quota limits enforced. */
    m_step(&w, FZ_M_SESSION, 0);
    m_create(&w, 8, 0, 0, M_CHILD(0), 0, "a"); /* /a = node 4 */
    m_step(&w, FZ_M_QUOTA, 8);
    put_u8(&w, 4);
    put_u8(&w, 0);  /* limits, then stats: nodes 5-7 */
    put_u8(&w, 4);  /* countHardLimit 3 */
    put_u8(&w, 11); /* byteHardLimit 10 */
    m_create(&w, 8, 0, 0, M_CHILD(1), 4, "bb");         /* /a/b = 8 */
    m_create(&w, 8, 0, 0, M_CHILD(2), 4, "0123456789"); /* bytes */
    m_create(&w, 8, 0, 1, M_CHILD(2), 4, "cc");         /* /a/c = 9 */
    m_create(&w, 8, 2, 0, M_SEQ, 4, NULL);              /* count */
    m_create(&w, 0, 2, 0, M_SEQ, 4, NULL);              /* not enforced */
    m_step(&w, FZ_M_SETDATA, 8);
    mpath(&w, M_NODE, 8);
    data(&w, "0123456789"); /* bytes */
    put_u8(&w, 0);
    m_step(&w, FZ_M_DELETE, 8);
    mpath(&w, M_NODE, 8); /* /a/s-.. takes its place */
    put_u8(&w, 0);
    m_step(&w, FZ_M_MULTI, 8); /* shrinks /a, then goes over: undone */
    put_u8(&w, 2);
    sub_op(&w, SUB_SET, M_NODE, 4, "");
    sub_create(&w, 0, M_CHILD(1), 4, "x");
    m_step(&w, FZ_M_MULTI, 8); /* deletes /a/c, then has room */
    put_u8(&w, 2);
    sub_op(&w, SUB_DELETE, M_NODE, 9, NULL);
    sub_create(&w, 0, M_CHILD(1), 4, "x");
    m_step(&w, FZ_M_QUOTA, 8); /* on /a/b: stats first, zkCli's form */
    put_u8(&w, 9);
    put_u8(&w, 5);
    put_u8(&w, 2); /* countHardLimit 1 */
    put_u8(&w, 0); /* no byteHardLimit */
    /* /a/b/a: count */
    m_create(&w, 8, 0, 0, M_CHILD(0), 9, NULL);
    m_step(&w, FZ_M_CLOSE, 0);
    save_w("tree_model", "quota", &w);

    /* What mntr sums by namespace skips: limits with a child, and limits
     * whose data a setData made null. */
    m_step(&w, FZ_M_SESSION, 0);
    m_create(&w, 0, 0, 0, M_CHILD(0), 0, "x"); /* /a: node 4 */
    m_step(&w, FZ_M_QUOTA, 0);                 /* 5 and its limits, 6 */
    put_u8(&w, 4);
    put_u8(&w, 2); /* no stats */
    put_u8(&w, 4);
    put_u8(&w, 11);
    m_create(&w, 0, 0, 0, M_CHILD(0), 6, "");  /* under the limits: 7 */
    m_create(&w, 0, 0, 0, M_CHILD(1), 0, "y"); /* /b: 8 */
    m_step(&w, FZ_M_QUOTA, 0);                 /* 9 and 10 */
    put_u8(&w, 8);
    put_u8(&w, 2);
    put_u8(&w, 3);
    put_u8(&w, 0);
    m_step(&w, FZ_M_SETDATA, 0);
    mpath(&w, M_NODE, 10);
    data(&w, NULL);
    put_u8(&w, 0);
    save_w("tree_model", "quota_sums", &w);
    tb_wbuf_free(&w);
}

/* ---- snapshots ---- */

struct builder {
    struct fsm *f;
    int64_t zxid;
    struct fz_txn t;
    struct tb_wbuf entry;
};

static void b_apply(struct builder *b, int32_t type)
{
    b->t.type = type;
    fz_txn_entry(&b->t, &b->entry);
    FZ_CHECK(fsm_apply(b->f, ++b->zxid, b->entry.base, b->entry.len) == 0,
             "apply failed");
    b->t.body.len = 0;
}

static void b_create(struct builder *b, const char *path, const char *d,
                     struct tb_vec acl, int32_t flags, int32_t op, int64_t ttl)
{
    if (op == TB_OP_CREATETTL)
        tb_create_ttl_req_encode(
            &b->t.body, &(struct tb_create_ttl_req){tb_str_c(path), tb_str_c(d),
                                                    acl, flags, ttl});
    else
        tb_create_req_encode(
            &b->t.body,
            &(struct tb_create_req){tb_str_c(path), tb_str_c(d), acl, flags});
    b_apply(b, op);
}

static void b_session(struct builder *b)
{
    tb_create_session_txn_encode(
        &b->t.body,
        &(struct tb_create_session_txn){10000, {"seed-password-16", 16}});
    b_apply(b, TB_OP_CREATESESSION);
    b->t.session = fsm_session_id_for(b->zxid);
}

static void save_snapshot(struct builder *b, const char *name)
{
    struct tb_wbuf w;
    char n2[128];

    tb_wbuf_init(&w);
    put_u8(&w, 0); /* as is */
    FZ_CHECK(fsm_snapshot(b->f, &w) == 0, "snapshot failed");
    save("snapshot_load", name, w.base, w.len);
    w.base[0] = 7; /* header repaired by the target */
    snprintf(n2, sizeof n2, "%s_repaired", name);
    save("snapshot_load", n2, w.base, w.len);
    tb_wbuf_free(&w);
}

static void snapshots(void)
{
    struct builder b;
    struct tb_wbuf acl;
    int i;

    memset(&b, 0, sizeof b);
    b.t.time = FZ_TIME0;
    FZ_CHECK(fsm_init(&b.f, NULL) == 0, "fsm_init failed");
    save_snapshot(&b, "fresh");

    b_session(&b);
    b_create(&b, "/app", "config", tb_acl_open_unsafe, 0, TB_OP_CREATE, -1);
    for (i = 0; i < 3; i++)
        b_create(&b, "/app/lock-", NULL, tb_acl_open_unsafe,
                 TB_EPHEMERAL_SEQUENTIAL, TB_OP_CREATE2, -1);
    save_snapshot(&b, "session_ephemerals");

    tb_wbuf_init(&acl);
    tb_put_acl(&acl,
               &(struct tb_acl){TB_PERM_ALL,
                                {TB_STR("digest"), tb_str_c(fz_alice_digest)}});
    tb_put_acl(&acl, &(struct tb_acl){TB_PERM_READ,
                                      {TB_STR("ip"), TB_STR("10.0.0.0/8")}});
    b_create(&b, "/secure", "s", tb_vec_view(&acl, 2), 0, TB_OP_CREATE, -1);
    b_create(&b, "/c", NULL, tb_acl_read_unsafe, TB_CONTAINER,
             TB_OP_CREATECONTAINER, -1);
    b_create(&b, "/t", "", tb_acl_open_unsafe, TB_PERSISTENT_WITH_TTL,
             TB_OP_CREATETTL, 5000);
    b_create(&b, "/t/x", "child of a TTL node", tb_acl_open_unsafe, 0,
             TB_OP_CREATE, -1);
    b_create(&b, "/c/q-", "", tb_acl_open_unsafe, TB_PERSISTENT_SEQUENTIAL,
             TB_OP_CREATE, -1);
    b_session(&b);
    b_create(&b, "/c/e", "second session", tb_acl_open_unsafe, TB_EPHEMERAL,
             TB_OP_CREATE, -1);
    tb_set_data_req_encode(
        &b.t.body, &(struct tb_set_data_req){TB_STR("/app"), TB_STR_NULL, -1});
    b_apply(&b, TB_OP_SETDATA);
    tb_delete_req_encode(&b.t.body,
                         &(struct tb_delete_req){TB_STR("/c/q-0000000000"), 0});
    b_apply(&b, TB_OP_DELETE);
    save_snapshot(&b, "mixed");
    tree_node_set_ccount(tree_find(fsm_tree(b.f), TB_STR("/app")), 2147483647);
    save_snapshot(&b, "counter_at_max");
    tb_wbuf_free(&acl);
    tb_wbuf_free(&b.entry);
    tb_wbuf_free(&b.t.body);
    fsm_close(b.f);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
        return 2;
    }
    outdir = argv[1];
    if (mkdir(outdir, 0755) != 0 && errno != EEXIST) {
        perror(outdir);
        return 1;
    }
    requests();
    replies();
    frames();
    paths();
    txn_scripts();
    model_scripts();
    snapshots();
    printf("%lu seed files written under %s\n", written, outdir);
    return 0;
}
