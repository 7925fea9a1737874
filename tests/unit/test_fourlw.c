/* Unit tests for the four-letter words: lookup, whitelist, and each answer's
 * exact text on sample data, compared with what Apache ZooKeeper 3.8.0
 * printed for the same state (captured from a standalone server with two
 * sessions, ephemeral nodes and watches). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "server/admin/fourlw.h"
#include "server/config/config.h"

#define ZKV "3.8.0-${mvngit.commit.id}, built on 2024-12-29 17:54 UTC"

/* ---- a fake server ------------------------------------------------------ */

struct fake {
    int serving;
    int read_only;
    int conn_resets, server_resets;
    uint64_t mask;
    struct tb_config cfg;
};

static const struct fourlw_conn fake_conns[] = {
    {.addr = "127.0.0.1", .port = 48110, .interest = 1, .queued = 0,
     .recved = 7, .sent = 7, .sid = 0x100001968c70000, .lop = "GETC",
     .est = 1795321607305, .to = 10000, .lcxid = 7, .lzxid = 6,
     .lresp = 1687091, .llat = 1,
     .latency = {.min = 0, .max = 8, .total = 21, .count = 7}},
    {.addr = "127.0.0.1", .port = 48114, .interest = 1, .queued = 0,
     .recved = 4, .sent = 4, .sid = 0x100001968c70001, .lop = "EXIS",
     .est = 1795321607318, .to = 30000, .lcxid = 9, .lzxid = 6,
     .lresp = 1687092, .llat = 0,
     .latency = {.min = 0, .max = 1, .total = 1, .count = 4}},
    /* the connection asking: no session yet */
    {.addr = "127.0.0.1", .port = 48130, .interest = 0, .recved = 1},
};

static int fake_serving(void *data)
{
    return ((struct fake *)data)->serving;
}

static void fake_stats(void *data, struct fourlw_stats *s)
{
    s->version = ZKV;
    s->latency = (struct fourlw_latency){.min = 0, .max = 8, .total = 24,
                                         .count = 11};
    s->packets_received = 15;
    s->packets_sent = 16;
    s->connections = 3;
    s->outstanding = 0;
    s->zxid = 6;
    s->node_count = 9;
    s->read_only = ((struct fake *)data)->read_only;
}

static void fake_conns_walk(void *data, struct fourlw_emit *e)
{
    size_t i;

    (void)data;
    for (i = 0; i < sizeof fake_conns / sizeof fake_conns[0]; i++)
        fourlw_emit_conn(e, &fake_conns[i]);
}

static void fake_mntr(void *data, struct fourlw_mntr *m)
{
    (void)data;
    m->watch_count = 5;
    m->ephemerals_count = 3;
    m->approximate_data_size = 44;
    m->open_fds = 38;
    m->max_fds = 20000;
    m->global_sessions = 2;
    m->local_sessions = 0;
    m->uptime_ms = 12796;
}

static void fake_mntr_extra(void *data, struct fourlw_emit *e)
{
    (void)data;
    fourlw_emit_metric_int(e, "raft_last_index", 42);
    fourlw_emit_metric_double(e, "avg_fsync_ms", 1.25);
    fourlw_emit_metric_str(e, "raft_state", "leader");
    fourlw_emit_session(e, 1); /* not a metric: ignored */
}

static void fake_watch_summary(void *data, struct fourlw_watch_summary *w)
{
    (void)data;
    w->connections = 2;
    w->paths = 3;
    w->watches = 4;
}

static void fake_by_session(void *data, struct fourlw_emit *e)
{
    (void)data;
    fourlw_emit_session(e, 0x100001968c70000);
    fourlw_emit_path(e, "/a", 2);
    fourlw_emit_path(e, "/a/e1", 5);
    fourlw_emit_session(e, 0x100001968c70001);
    fourlw_emit_path(e, "/a", 2);
    fourlw_emit_path(e, "/zz", 3);
}

static void fake_by_path(void *data, struct fourlw_emit *e)
{
    (void)data;
    fourlw_emit_path(e, "/a", 2);
    fourlw_emit_session(e, 0x100001968c70001);
    fourlw_emit_session(e, 0x100001968c70000);
    fourlw_emit_path(e, "/a/e1", 5);
    fourlw_emit_session(e, 0x100001968c70000);
    fourlw_emit_path(e, "/zz", 3);
    fourlw_emit_session(e, 0x100001968c70001);
}

static void fake_session_buckets(void *data, struct fourlw_emit *e)
{
    (void)data;
    fourlw_emit_bucket(e, 1795321618000);
    fourlw_emit_session(e, 0x100001968c70000);
    fourlw_emit_bucket(e, 1795321638000);
    fourlw_emit_session(e, 0x100001968c70001);
}

static void fake_ephemerals(void *data, struct fourlw_emit *e)
{
    (void)data;
    fourlw_emit_session(e, 0x100001968c70000);
    fourlw_emit_path(e, "/a/e2", 5);
    fourlw_emit_path(e, "/a/e1", 5);
    fourlw_emit_session(e, 0x100001968c70001);
    fourlw_emit_path(e, "/b", 2);
}

static void fake_conn_buckets(void *data, struct fourlw_emit *e)
{
    (void)data;
    fourlw_emit_bucket(e, 1795321610000);
    fourlw_emit_bucket(e, 1795321620000);
    fourlw_emit_conn_id(e, "127.0.0.1", 48110, 0x100001968c70000);
    fourlw_emit_conn_id(e, "127.0.0.1", 48152, 0);
    fourlw_emit_bucket(e, 1795321640000);
    fourlw_emit_conn_id(e, "127.0.0.1", 48114, 0x100001968c70001);
}

static void fake_dir_sizes(void *data, uint64_t *d, uint64_t *l)
{
    (void)data;
    *d = 457;
    *l = 458;
}

static void fake_env(void *data, struct fourlw_env *env)
{
    (void)data;
    snprintf(env->host_name, sizeof env->host_name, "localhost");
    snprintf(env->os_name, sizeof env->os_name, "Linux");
    snprintf(env->os_arch, sizeof env->os_arch, "x86_64");
    snprintf(env->os_version, sizeof env->os_version, "6.1.0");
    snprintf(env->user_name, sizeof env->user_name, "root");
    snprintf(env->user_home, sizeof env->user_home, "/root");
    snprintf(env->user_dir, sizeof env->user_dir, "/tmp/zkref");
    env->mem_free = 369ull * 1024 * 1024 + 5;
    env->mem_max = 6028ull * 1024 * 1024;
    env->mem_total = 388ull * 1024 * 1024;
}

static void fake_reset_conns(void *data)
{
    ((struct fake *)data)->conn_resets++;
}

static void fake_reset_server(void *data)
{
    ((struct fake *)data)->server_resets++;
}

static uint64_t fake_get_mask(void *data)
{
    return ((struct fake *)data)->mask;
}

static void fake_set_mask(void *data, uint64_t mask)
{
    ((struct fake *)data)->mask = mask;
}

static struct fourlw_source source_of(struct fake *f)
{
    struct fourlw_source s = {
        .data = f,
        .cfg = &f->cfg,
        .serving = fake_serving,
        .stats = fake_stats,
        .mntr = fake_mntr,
        .mntr_extra = fake_mntr_extra,
        .conns = fake_conns_walk,
        .watch_summary = fake_watch_summary,
        .watches_by_session = fake_by_session,
        .watches_by_path = fake_by_path,
        .session_buckets = fake_session_buckets,
        .ephemerals = fake_ephemerals,
        .conn_buckets = fake_conn_buckets,
        .dir_sizes = fake_dir_sizes,
        .env = fake_env,
        .reset_conn_stats = fake_reset_conns,
        .reset_server_stats = fake_reset_server,
        .get_trace_mask = fake_get_mask,
        .set_trace_mask = fake_set_mask,
    };
    return s;
}

static int setup(void **state)
{
    struct fake *f = calloc(1, sizeof *f);
    char err[128];

    if (f == NULL)
        return -1;
    f->serving = 1;
    f->mask = 306;
    tb_config_init(&f->cfg);
    if (tb_config_set(&f->cfg, "4lw.commands.whitelist", "*", NULL, err,
                      sizeof err) != 0 ||
        tb_config_set(&f->cfg, "clientPort", "52137", NULL, err,
                      sizeof err) != 0 ||
        tb_config_finish(&f->cfg, err, sizeof err) != 0)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fake *f = *state;

    tb_config_free(&f->cfg);
    free(f);
    return 0;
}

/* Runs `word` against the fake and compares the whole answer. */
static void expect_answer(struct fake *f, const char *word, const char *want)
{
    struct fourlw_source src = source_of(f);
    struct tb_wbuf b;
    int cmd = fourlw_lookup((const uint8_t *)word);

    assert_true(cmd >= 0);
    tb_wbuf_init(&b);
    assert_int_equal(fourlw_execute(&src, cmd, 0, &b), 0);
    assert_false(b.oom);
    tb_wbuf_put(&b, "", 1);
    assert_string_equal((char *)b.base, want);
    tb_wbuf_free(&b);
}

/* ---- words and whitelist ------------------------------------------------ */

static void test_lookup(void **state)
{
    static const char *const all[] = {
        "ruok", "srvr", "stat", "mntr", "cons", "wchs", "wchc", "wchp", "dump",
        "conf", "envi", "isro", "dirs", "crst", "srst", "gtmk", "stmk"};
    size_t i;

    (void)state;
    assert_int_equal(FOURLW__COUNT, sizeof all / sizeof all[0]);
    for (i = 0; i < sizeof all / sizeof all[0]; i++) {
        int cmd = fourlw_lookup((const uint8_t *)all[i]);
        assert_true(cmd >= 0);
        assert_string_equal(fourlw_name(cmd), all[i]);
    }
    assert_int_equal(fourlw_lookup((const uint8_t *)"xyzw"), -1);
    assert_int_equal(fourlw_lookup((const uint8_t *)"RUOK"), -1);
    assert_int_equal(fourlw_lookup((const uint8_t *)"hash"), -1);
    /* a frame length: 45-byte ConnectRequest */
    assert_int_equal(fourlw_lookup((const uint8_t *)"\0\0\0\x2d"), -1);
    assert_null(fourlw_name(-1));
    assert_null(fourlw_name(FOURLW__COUNT));
}

static void test_whitelist(void **state)
{
    char first[16];
    uint32_t m;
    int unknown;

    (void)state;
    m = fourlw_whitelist_parse(NULL, &unknown, first, sizeof first);
    assert_int_equal(m, FOURLW_BIT(FOURLW_SRVR));
    assert_int_equal(unknown, 0);
    assert_true(fourlw_allowed(m, FOURLW_SRVR));
    assert_false(fourlw_allowed(m, FOURLW_RUOK));

    m = fourlw_whitelist_parse("*", NULL, NULL, 0);
    assert_int_equal(m, FOURLW_ALL);
    assert_true(fourlw_allowed(m, FOURLW_STMK));
    m = fourlw_whitelist_parse(" mntr , * ", NULL, NULL, 0);
    assert_int_equal(m, FOURLW_ALL);

    m = fourlw_whitelist_parse(" stat,ruok ,,\tcons\t, bogus,hash", &unknown,
                               first, sizeof first);
    assert_int_equal(m, FOURLW_BIT(FOURLW_SRVR) | FOURLW_BIT(FOURLW_STAT) |
                            FOURLW_BIT(FOURLW_RUOK) | FOURLW_BIT(FOURLW_CONS));
    assert_int_equal(unknown, 2);
    assert_string_equal(first, "bogus");

    /* srvr cannot be switched off: zkServer.sh status depends on it */
    m = fourlw_whitelist_parse("", NULL, NULL, 0);
    assert_true(fourlw_allowed(m, FOURLW_SRVR));
    assert_true(fourlw_allowed(0, FOURLW_SRVR));
    assert_false(fourlw_allowed(FOURLW_ALL, -1));
    assert_false(fourlw_allowed(FOURLW_ALL, FOURLW__COUNT));
}

static void test_not_whitelisted(void **state)
{
    struct fake *f = *state;
    char err[64];

    assert_int_equal(tb_config_set(&f->cfg, "4lw.commands.whitelist", "ruok",
                                   NULL, err, sizeof err), 0);
    expect_answer(f, "stat",
                  "stat is not executed because it is not in the whitelist.\n");
    expect_answer(f, "ruok", "imok");
    expect_answer(f, "srvr", "Zookeeper version: " ZKV "\n"
                             "Latency min/avg/max: 0/2.1818/8\n"
                             "Received: 15\nSent: 16\nConnections: 3\n"
                             "Outstanding: 0\nZxid: 0x6\nMode: standalone\n"
                             "Node count: 9\n");
}

/* ---- each answer -------------------------------------------------------- */

static void test_srvr_stat(void **state)
{
    struct fake *f = *state;

    expect_answer(f, "srvr", "Zookeeper version: " ZKV "\n"
                             "Latency min/avg/max: 0/2.1818/8\n"
                             "Received: 15\n"
                             "Sent: 16\n"
                             "Connections: 3\n"
                             "Outstanding: 0\n"
                             "Zxid: 0x6\n"
                             "Mode: standalone\n"
                             "Node count: 9\n");
    expect_answer(f, "stat",
                  "Zookeeper version: " ZKV "\n"
                  "Clients:\n"
                  " /127.0.0.1:48110[1](queued=0,recved=7,sent=7)\n"
                  " /127.0.0.1:48114[1](queued=0,recved=4,sent=4)\n"
                  " /127.0.0.1:48130[0](queued=0,recved=1,sent=0)\n"
                  "\n"
                  "Latency min/avg/max: 0/2.1818/8\n"
                  "Received: 15\n"
                  "Sent: 16\n"
                  "Connections: 3\n"
                  "Outstanding: 0\n"
                  "Zxid: 0x6\n"
                  "Mode: standalone\n"
                  "Node count: 9\n");
    f->read_only = 1;
    expect_answer(f, "srvr", "Zookeeper version: " ZKV "\n"
                             "READ-ONLY mode; serving only read-only clients\n"
                             "Latency min/avg/max: 0/2.1818/8\n"
                             "Received: 15\nSent: 16\nConnections: 3\n"
                             "Outstanding: 0\nZxid: 0x6\nMode: standalone\n"
                             "Node count: 9\n");
}

static void test_srvr_leader_and_empty(void **state)
{
    struct fourlw_stats s = {.version = "V", .mode = "leader",
                             .zxid = 0x100000025, .has_proposal_sizes = 1,
                             .proposal_last = 120, .proposal_min = 36,
                             .proposal_max = 4096,
                             .latency = {.min = 99, .count = 0}};
    struct tb_wbuf b;

    (void)state;
    tb_wbuf_init(&b);
    fourlw_render_srvr(&b, &s);
    tb_wbuf_put(&b, "", 1);
    /* no samples: min shows 0, avg 0.0 */
    assert_string_equal((char *)b.base,
                        "Zookeeper version: V\n"
                        "Latency min/avg/max: 0/0.0/0\n"
                        "Received: 0\nSent: 0\nConnections: 0\n"
                        "Outstanding: 0\nZxid: 0x100000025\nMode: leader\n"
                        "Node count: 0\n"
                        "Proposal sizes last/min/max: 120/36/4096\n");
    tb_wbuf_free(&b);

    /* the default version and mode */
    memset(&s, 0, sizeof s);
    tb_wbuf_init(&b);
    fourlw_render_srvr(&b, &s);
    tb_wbuf_put(&b, "", 1);
    assert_true(strncmp((char *)b.base, "Zookeeper version: 3.8.0-tumbler-",
                        33) == 0);
    assert_non_null(strstr((char *)b.base, ", built on "));
    assert_non_null(strstr((char *)b.base, "\nMode: standalone\n"));
    tb_wbuf_free(&b);
}

static void test_cons(void **state)
{
    struct fake *f = *state;

    /* the first two lines as ZooKeeper printed them */
    expect_answer(f, "cons",
                  " /127.0.0.1:48110[1](queued=0,recved=7,sent=7,"
                  "sid=0x100001968c70000,lop=GETC,est=1795321607305,to=10000,"
                  "lcxid=0x7,lzxid=0x6,lresp=1687091,llat=1,minlat=0,"
                  "avglat=3,maxlat=8)\n"
                  " /127.0.0.1:48114[1](queued=0,recved=4,sent=4,"
                  "sid=0x100001968c70001,lop=EXIS,est=1795321607318,to=30000,"
                  "lcxid=0x9,lzxid=0x6,lresp=1687092,llat=0,minlat=0,"
                  "avglat=0,maxlat=1)\n"
                  " /127.0.0.1:48130[0](queued=0,recved=1,sent=0)\n"
                  "\n");
}

static void test_conn_line_details(void **state)
{
    /* after crst: lcxid -1 is left out, lzxid -1 prints as Java's
     * Long.toHexString(-1); no samples: latencies 0; no lop: NA */
    struct fourlw_conn c = {.addr = "::1", .port = 5000, .interest = 5,
                            .queued = 2, .recved = 3, .sent = 4,
                            .sid = (int64_t)0xff00000000000001ull,
                            .est = 1, .to = 4000, .lcxid = -1, .lzxid = -1,
                            .lresp = 0, .llat = 0,
                            .latency = {.min = 77, .max = 0, .count = 0}};
    struct tb_wbuf b;

    (void)state;
    tb_wbuf_init(&b);
    fourlw_render_conn(&b, &c, 0);
    fourlw_render_conn(&b, &c, 1);
    tb_wbuf_put(&b, "", 1);
    assert_string_equal((char *)b.base,
                        " /[::1]:5000[5](queued=2,recved=3,sent=4,"
                        "sid=0xff00000000000001,lop=NA,est=1,to=4000,"
                        "lzxid=0xffffffffffffffff,lresp=0,llat=0,minlat=0,"
                        "avglat=0,maxlat=0)\n"
                        " /[::1]:5000[5](queued=2,recved=3,sent=4)\n");
    tb_wbuf_free(&b);
}

static void test_mntr(void **state)
{
    struct fake *f = *state;

    expect_answer(f, "mntr",
                  "zk_version\t" ZKV "\n"
                  "zk_server_state\tstandalone\n"
                  "zk_avg_latency\t2.1818\n"
                  "zk_max_latency\t8\n"
                  "zk_min_latency\t0\n"
                  "zk_packets_received\t15\n"
                  "zk_packets_sent\t16\n"
                  "zk_num_alive_connections\t3\n"
                  "zk_outstanding_requests\t0\n"
                  "zk_znode_count\t9\n"
                  "zk_watch_count\t5\n"
                  "zk_ephemerals_count\t3\n"
                  "zk_approximate_data_size\t44\n"
                  "zk_open_file_descriptor_count\t38\n"
                  "zk_max_file_descriptor_count\t20000\n"
                  "zk_global_sessions\t2\n"
                  "zk_local_sessions\t0\n"
                  "zk_uptime\t12796\n"
                  "zk_raft_last_index\t42\n"
                  "zk_avg_fsync_ms\t1.25\n"
                  "zk_raft_state\tleader\n");
}

static void test_watches(void **state)
{
    struct fake *f = *state;

    expect_answer(f, "wchs",
                  "2 connections watching 3 paths\n"
                  "Total watches:4\n");
    expect_answer(f, "wchc", "0x100001968c70000\n\t/a\n\t/a/e1\n"
                             "0x100001968c70001\n\t/a\n\t/zz\n\n");
    expect_answer(f, "wchp", "/a\n\t0x100001968c70001\n\t0x100001968c70000\n"
                             "/a/e1\n\t0x100001968c70000\n"
                             "/zz\n\t0x100001968c70001\n\n");
}

static void test_watches_empty(void **state)
{
    struct fake *f = *state;
    struct fourlw_source src = source_of(f);
    struct tb_wbuf b;

    /* a server without watches leaves the walks out */
    src.watch_summary = NULL;
    src.watches_by_session = NULL;
    tb_wbuf_init(&b);
    assert_int_equal(fourlw_execute(&src, FOURLW_WCHS, 0, &b), 0);
    assert_int_equal(fourlw_execute(&src, FOURLW_WCHC, 0, &b), 0);
    tb_wbuf_put(&b, "", 1);
    /* as ZooKeeper answers with no watches */
    assert_string_equal((char *)b.base, "0 connections watching 0 paths\n"
                                        "Total watches:0\n"
                                        "\n");
    tb_wbuf_free(&b);
}

static void test_dump(void **state)
{
    struct fake *f = *state;

    expect_answer(f, "dump",
                  "SessionTracker dump:\n"
                  "Session Sets (2)/(2):\n"
                  "1 expire at Sun Nov 22 04:26:58 UTC 2026:\n"
                  "\t0x100001968c70000\n"
                  "1 expire at Sun Nov 22 04:27:18 UTC 2026:\n"
                  "\t0x100001968c70001\n"
                  "ephemeral nodes dump:\n"
                  "Sessions with Ephemerals (2):\n"
                  "0x100001968c70000:\n"
                  "\t/a/e2\n"
                  "\t/a/e1\n"
                  "0x100001968c70001:\n"
                  "\t/b\n"
                  "Connections dump:\n"
                  "Connections Sets (3)/(3):\n"
                  "0 expire at Sun Nov 22 04:26:50 UTC 2026:\n"
                  "2 expire at Sun Nov 22 04:27:00 UTC 2026:\n"
                  "\tip: /127.0.0.1:48110 sessionId: 0x100001968c70000\n"
                  "\tip: /127.0.0.1:48152 sessionId: 0x0\n"
                  "1 expire at Sun Nov 22 04:27:20 UTC 2026:\n"
                  "\tip: /127.0.0.1:48114 sessionId: 0x100001968c70001\n");
}

static void test_dump_empty(void **state)
{
    struct fake *f = *state;
    struct fourlw_source src = source_of(f);
    struct tb_wbuf b;

    src.session_buckets = NULL;
    src.ephemerals = NULL;
    src.conn_buckets = NULL;
    tb_wbuf_init(&b);
    assert_int_equal(fourlw_execute(&src, FOURLW_DUMP, 0, &b), 0);
    tb_wbuf_put(&b, "", 1);
    assert_string_equal((char *)b.base, "SessionTracker dump:\n"
                                        "Session Sets (0)/(0):\n"
                                        "ephemeral nodes dump:\n"
                                        "Sessions with Ephemerals (0):\n"
                                        "Connections dump:\n"
                                        "Connections Sets (0)/(0):\n");
    tb_wbuf_free(&b);
}

static void test_emit_misuse_ignored(void **state)
{
    struct fourlw_emit e;
    struct tb_wbuf b;

    (void)state;
    tb_wbuf_init(&b);
    /* items before any group, and calls of another listing, write nothing */
    fourlw_emit_init(&e, FOURLW_LIST_WATCH_BY_SID, &b);
    fourlw_emit_path(&e, "/orphan", 7);
    fourlw_emit_bucket(&e, 0);
    fourlw_emit_conn_id(&e, "1.2.3.4", 1, 1);
    fourlw_emit_metric_int(&e, "x", 1);
    fourlw_emit_conn(&e, &fake_conns[0]);
    fourlw_emit_session(&e, 0xab);
    fourlw_emit_path(&e, "/p", 2);
    fourlw_emit_finish(&e);

    fourlw_emit_init(&e, FOURLW_LIST_SESSIONS, &b);
    fourlw_emit_session(&e, 0x1); /* before a bucket */
    fourlw_emit_path(&e, "/x", 2);
    fourlw_emit_bucket(&e, 0);
    fourlw_emit_session(&e, (int64_t)-1);
    fourlw_emit_finish(&e);

    fourlw_emit_init(&e, FOURLW_LIST_CNXN_EXPIRY, &b);
    fourlw_emit_bucket(&e, 888822309000);
    fourlw_emit_conn_id(&e, "fe80::1", 7, 0x2);
    fourlw_emit_finish(&e);
    tb_wbuf_put(&b, "", 1);
    assert_string_equal((char *)b.base,
                        "0xab\n\t/p\n"
                        "Session Sets (1)/(1):\n"
                        "1 expire at Thu Jan 01 00:00:00 UTC 1970:\n"
                        "\t0xffffffffffffffff\n"
                        "Connections Sets (1)/(1):\n"
                        "1 expire at Mon Mar 02 07:05:09 UTC 1998:\n"
                        "\tip: /[fe80::1]:7 sessionId: 0x2\n");
    tb_wbuf_free(&b);
}

/* conf: ZooKeeper's lines first, as it writes them, then each other key's
 * effective value, once. */
static void test_conf_dirs(void **state)
{
    static const char zk[] = "clientPort=52137\n"
                             "secureClientPort=-1\n"
                             "dataDir=./data\n"
                             "dataDirSize=457\n"
                             "dataLogDir=./data\n"
                             "dataLogSize=458\n"
                             "tickTime=2000\n"
                             "maxClientCnxns=60\n"
                             "minSessionTimeout=4000\n"
                             "maxSessionTimeout=40000\n"
                             "clientPortListenBacklog=-1\n"
                             "serverId=1\n";
    struct fake *f = *state;
    struct fourlw_source src = source_of(f);
    struct tb_wbuf b;
    const char *text;

    tb_wbuf_init(&b);
    assert_int_equal(fourlw_execute(&src, FOURLW_CONF, 0, &b), 0);
    tb_wbuf_put(&b, "", 1);
    text = (const char *)b.base;
    assert_memory_equal(text, zk, sizeof zk - 1);
    assert_non_null(strstr(text, "\nserverId=1\nclientPortAddress="));
    assert_non_null(strstr(text, "\nlogLevel=info\n"));
    assert_non_null(strstr(text, "\n4lw.commands.whitelist="));
    assert_null(strstr(text, "\nclientPort=")); /* the first line only */
    assert_null(strstr(strstr(text, "\ntickTime=") + 1, "\ntickTime="));
    assert_null(strstr(text, "#"));
    tb_wbuf_free(&b);
    expect_answer(f, "dirs", "datadir_size: 457\nlogdir_size: 458\n");
}

static const struct fake *first_only_of;

/* The members after a reconfig removed all but the first. */
static struct tb_config_members first_only(void *data)
{
    (void)data;
    return (struct tb_config_members){first_only_of->cfg.servers, 1,
                                      0x100000003};
}

/* An ensemble's: the membership ends "version=0" unended, as ZooKeeper's
 * does; the keys after it start a line of their own.  After a reconfig
 * the members are the live ones alone: a member the file names but the
 * reconfig removed is not listed among the other keys. */
static void test_conf_ensemble(void **state)
{
    struct fake *f = *state;
    struct fourlw_source src = source_of(f);
    struct tb_wbuf b;
    char err[128];
    const char *text;

    assert_int_equal(
        tb_config_set(&f->cfg, "serverId", "1", NULL, err, sizeof err), 0);
    assert_int_equal(tb_config_set(&f->cfg, "server.1", "127.0.0.1:2881:3881",
                                   NULL, err, sizeof err),
                     0);
    assert_int_equal(tb_config_set(&f->cfg, "server.2", "127.0.0.1:2882:3882",
                                   NULL, err, sizeof err),
                     0);
    assert_int_equal(tb_config_finish(&f->cfg, err, sizeof err), 0);
    tb_wbuf_init(&b);
    assert_int_equal(fourlw_execute(&src, FOURLW_CONF, 0, &b), 0);
    tb_wbuf_put(&b, "", 1);
    text = (const char *)b.base;
    assert_non_null(strstr(text, "\nmembership: \nserver.1="));
    assert_non_null(strstr(text, "\nversion=0\nclientPortAddress="));
    assert_non_null(strstr(text, "\nserver.2="));

    first_only_of = f;
    src.members = first_only;
    b.len = 0;
    assert_int_equal(fourlw_execute(&src, FOURLW_CONF, 0, &b), 0);
    tb_wbuf_put(&b, "", 1);
    text = (const char *)b.base;
    assert_non_null(strstr(text, "\nmembership: \nserver.1="));
    assert_non_null(strstr(text, "\nversion=100000003\n"));
    assert_null(strstr(text, "server.2="));
    tb_wbuf_free(&b);
}

static void test_envi(void **state)
{
    struct fake *f = *state;

    expect_answer(f, "envi", "Environment:\n"
                             "zookeeper.version=" ZKV "\n"
                             "host.name=localhost\n"
                             "os.name=Linux\n"
                             "os.arch=x86_64\n"
                             "os.version=6.1.0\n"
                             "user.name=root\n"
                             "user.home=/root\n"
                             "user.dir=/tmp/zkref\n"
                             "os.memory.free=369MB\n"
                             "os.memory.max=6028MB\n"
                             "os.memory.total=388MB\n");
}

static void test_env_collect(void **state)
{
    struct fourlw_env env;
    char cwd[1024];
    uint64_t open_fds, max_fds;

    (void)state;
    fourlw_env_collect(&env);
    assert_string_equal(env.os_name, "Linux");
    assert_true(env.os_arch[0] != '\0');
    assert_true(env.host_name[0] != '\0');
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_string_equal(env.user_dir, cwd);
    assert_true(env.mem_total > 0);
    assert_true(env.mem_max >= env.mem_total);
    assert_true(env.mem_free > 0);

    fourlw_fd_counts(&open_fds, &max_fds);
    assert_true(open_fds >= 3); /* stdin, stdout, stderr */
    assert_true(max_fds >= open_fds);
}

static void test_isro_resets_masks(void **state)
{
    struct fake *f = *state;
    struct fourlw_source src = source_of(f);
    struct tb_wbuf b;

    expect_answer(f, "isro", "rw");
    f->read_only = 1;
    expect_answer(f, "isro", "ro");
    expect_answer(f, "crst", "Connection stats reset.\n");
    expect_answer(f, "srst", "Server stats reset.\n");
    assert_int_equal(f->conn_resets, 1);
    assert_int_equal(f->server_resets, 1);
    expect_answer(f, "gtmk", "306");

    tb_wbuf_init(&b);
    assert_int_equal(fourlw_execute(&src, FOURLW_STMK, 0x1ff, &b), 0);
    tb_wbuf_put(&b, "", 1);
    assert_string_equal((char *)b.base, "511");
    assert_int_equal(f->mask, 0x1ff);
    tb_wbuf_free(&b);

    tb_wbuf_init(&b);
    assert_int_equal(fourlw_execute(&src, -1, 0, &b), TB_EINVAL);
    assert_int_equal(fourlw_execute(&src, FOURLW__COUNT, 0, &b), TB_EINVAL);
    assert_int_equal(b.len, 0);
    tb_wbuf_free(&b);
}

static void test_not_serving(void **state)
{
    struct fake *f = *state;
    static const char *const refused[] = {
        "srvr", "stat", "mntr", "cons", "wchs", "wchc", "wchp",
        "dump", "conf", "dirs", "crst", "srst"};
    size_t i;

    f->serving = 0;
    for (i = 0; i < sizeof refused / sizeof refused[0]; i++)
        expect_answer(f, refused[i], "This ZooKeeper instance is not "
                                     "currently serving requests\n");
    assert_int_equal(f->conn_resets, 0);
    expect_answer(f, "ruok", "imok");
    expect_answer(f, "isro", "null");
    expect_answer(f, "gtmk", "306");
    expect_answer(f, "envi", "Environment:\n"
                             "zookeeper.version=" ZKV "\n"
                             "host.name=localhost\nos.name=Linux\n"
                             "os.arch=x86_64\nos.version=6.1.0\n"
                             "user.name=root\nuser.home=/root\n"
                             "user.dir=/tmp/zkref\nos.memory.free=369MB\n"
                             "os.memory.max=6028MB\nos.memory.total=388MB\n");
}

/* ---- number and date formats -------------------------------------------- */

static const char *avg(uint64_t total, uint64_t count)
{
    static char buf[40];

    return fourlw_format_avg(buf, sizeof buf, total, count);
}

static const char *dbl(double v)
{
    static char buf[40];

    fourlw_format_double(buf, sizeof buf, v);
    return buf;
}

static void test_java_numbers(void **state)
{
    (void)state;
    assert_string_equal(avg(0, 0), "0.0");
    assert_string_equal(avg(24, 11), "2.1818");
    assert_string_equal(avg(7, 2), "3.5");
    assert_string_equal(avg(3, 1), "3.0");
    assert_string_equal(avg(1, 3), "0.3333");
    assert_string_equal(avg(2, 3), "0.6667");
    assert_string_equal(avg(33, 32), "1.0313"); /* 1.03125, half up */
    /* Java rounds the double, which for 3/800 lies just below 0.00375 */
    assert_string_equal(avg(3, 800), "0.0037");
    assert_string_equal(avg(27662, 320), "86.4437");
    assert_string_equal(avg(1, 1000), "0.001");
    assert_string_equal(avg(1, 10000), "1.0E-4"); /* Java: below 1e-3 */
    assert_string_equal(avg(1, 100000), "0.0");
    assert_string_equal(avg(10000000, 1), "1.0E7");

    assert_string_equal(dbl(0.1), "0.1");
    assert_string_equal(dbl(100.0), "100.0");
    assert_string_equal(dbl(-2.5), "-2.5");
    assert_string_equal(dbl(12345678.5), "1.23456785E7");
    assert_string_equal(dbl(9999999.0), "9999999.0");
    assert_string_equal(dbl(0.00123), "0.00123");
    assert_string_equal(dbl(1.0 / 3), "0.3333333333333333");
}

static void test_date(void **state)
{
    char buf[64];

    (void)state;
    assert_true(fourlw_format_date(buf, sizeof buf, 1795321618000) > 0);
    assert_string_equal(buf, "Sun Nov 22 04:26:58 UTC 2026");
    assert_true(fourlw_format_date(buf, sizeof buf, 888822309999) > 0);
    assert_string_equal(buf, "Mon Mar 02 07:05:09 UTC 1998");
    assert_int_equal(fourlw_format_date(buf, 10, 0), 0);
}

static void test_op_names(void **state)
{
    (void)state;
    assert_string_equal(fourlw_op_name(1), "CREA");
    assert_string_equal(fourlw_op_name(15), "CREA");
    assert_string_equal(fourlw_op_name(19), "CREA");
    assert_string_equal(fourlw_op_name(21), "CREA");
    assert_string_equal(fourlw_op_name(2), "DELE");
    assert_string_equal(fourlw_op_name(20), "DELE");
    assert_string_equal(fourlw_op_name(3), "EXIS");
    assert_string_equal(fourlw_op_name(4), "GETD");
    assert_string_equal(fourlw_op_name(8), "GETC");
    assert_string_equal(fourlw_op_name(12), "GETC");
    assert_string_equal(fourlw_op_name(11), "PING");
    assert_string_equal(fourlw_op_name(14), "MULT");
    assert_string_equal(fourlw_op_name(22), "MLTR");
    assert_string_equal(fourlw_op_name(104), "GETACN");
    assert_string_equal(fourlw_op_name(105), "STW2");
    assert_string_equal(fourlw_op_name(107), "HOMI");
    assert_string_equal(fourlw_op_name(-10), "SESS");
    assert_string_equal(fourlw_op_name(-11), "CLOS");
    assert_string_equal(fourlw_op_name(100), "NA"); /* auth: not a request */
    assert_string_equal(fourlw_op_name(0), "NA");
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lookup),
        cmocka_unit_test(test_whitelist),
        T(test_not_whitelisted),
        T(test_srvr_stat),
        cmocka_unit_test(test_srvr_leader_and_empty),
        T(test_cons),
        cmocka_unit_test(test_conn_line_details),
        T(test_mntr),
        T(test_watches),
        T(test_watches_empty),
        T(test_dump),
        T(test_dump_empty),
        cmocka_unit_test(test_emit_misuse_ignored),
        T(test_conf_dirs),
        T(test_conf_ensemble),
        T(test_envi),
        cmocka_unit_test(test_env_collect),
        T(test_isro_resets_masks),
        T(test_not_serving),
        cmocka_unit_test(test_java_numbers),
        cmocka_unit_test(test_date),
        cmocka_unit_test(test_op_names),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
