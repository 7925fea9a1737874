/* Unit tests for what the HTTP endpoints render, on a fake server: the
 * Prometheus text (names, labels, families kept together, histograms) and
 * the AdminServer's JSON (fields, listings, errors, escaping).  Sockets and
 * libmicrohttpd are tested end to end by tests/integration/http.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/hist.h"
#include "common/json.h"
#include "server/admin/adminsrv.h"
#include "server/admin/fourlw.h"
#include "server/config/config.h"
#include "server/http/election.h"
#include "server/http/metrics.h"
#include "server/http/zksummary.h"

struct fake {
    int serving;
    uint64_t mask;
    int resets;
};

static int fake_serving(void *data)
{
    return ((struct fake *)data)->serving;
}

static void fake_stats(void *data, struct fourlw_stats *s)
{
    (void)data;
    s->mode = "leader";
    s->latency = (struct fourlw_latency){.min = 1, .max = 8, .total = 24,
                                         .count = 11};
    s->packets_received = 15;
    s->connections = 3;
    s->zxid = 6;
    s->node_count = 9;
}

static void fake_mntr(void *data, struct fourlw_mntr *m)
{
    (void)data;
    m->watch_count = 5;
    m->uptime_ms = 12796;
}

/* "é" 64 times: 128 bytes, where a label used to be cut in two. */
static char wide_ns[129];
/* 600 bytes: more than a label holds. */
static char long_ns[601];

/* Two namespaces' figures interleaved, as tree_quota_namespaces gives
 * them, two of long names, and a text figure that needs escaping. */
static void fake_extra(void *data, struct fourlw_emit *e)
{
    int i;

    (void)data;
    for (i = 0; i < 64; i++)
        memcpy(wide_ns + 2 * i, "\xc3\xa9", 2);
    memset(long_ns, 'n', sizeof long_ns - 1);
    fourlw_emit_ns_metric(e, TB_STR("ns1"), "quota_count_limit_per_namespace",
                          10);
    fourlw_emit_ns_metric(e, TB_STR("ns1"), "quota_bytes_limit_per_namespace",
                          100);
    fourlw_emit_ns_metric(e, TB_STR("n\"s\\2"),
                          "quota_count_limit_per_namespace", 20);
    fourlw_emit_ns_metric(e, tb_str_c(wide_ns),
                          "quota_count_limit_per_namespace", 30);
    fourlw_emit_ns_metric(e, tb_str_c(long_ns),
                          "quota_count_limit_per_namespace", 40);
    fourlw_emit_metric_str(e, "tumbler_role_note", "a \"b\"\nc");
    fourlw_emit_metric_double(e, "tumbler_snapshot_stall_last_ms", 0.5);
}

static void fake_conns(void *data, struct fourlw_emit *e)
{
    static const struct fourlw_conn c[] = {
        {.addr = "127.0.0.1",
         .port = 4000,
         .interest = 1,
         .recved = 7,
         .sent = 6,
         .sid = 0x1234,
         .lop = "GETD",
         .to = 10000,
         .lcxid = 3,
         .lzxid = 6,
         .latency = {.min = 1, .max = 4, .total = 6, .count = 3}},
        {.addr = "::1", .port = 4001, .lcxid = -1, .lzxid = -1},
    };
    (void)data;
    fourlw_emit_conn(e, &c[0]);
    fourlw_emit_conn(e, &c[1]);
}

static void fake_by_session(void *data, struct fourlw_emit *e)
{
    (void)data;
    fourlw_emit_session(e, 7);
    fourlw_emit_path(e, "/a", 2);
    fourlw_emit_path(e, "/a\"b", 4);
    fourlw_emit_session(e, 8);
    fourlw_emit_path(e, "/z", 2);
}

static void fake_buckets(void *data, struct fourlw_emit *e)
{
    (void)data;
    fourlw_emit_bucket(e, 1000);
    fourlw_emit_session(e, 7);
    fourlw_emit_session(e, 8);
    fourlw_emit_bucket(e, 2000);
    fourlw_emit_session(e, 9);
}

static void fake_ephemerals(void *data, struct fourlw_emit *e)
{
    (void)data;
    fourlw_emit_session(e, 7);
    fourlw_emit_path(e, "/e1", 3);
}

static uint64_t fake_get_mask(void *data)
{
    return ((struct fake *)data)->mask;
}

static void fake_set_mask(void *data, uint64_t mask)
{
    ((struct fake *)data)->mask = mask;
}

static void fake_reset(void *data)
{
    ((struct fake *)data)->resets++;
}

static int fake_leader(void *data, int *is_self)
{
    (void)data;
    *is_self = 1;
    return 2;
}

static struct fake fk;

static struct fourlw_source source(void)
{
    struct fourlw_source s;

    memset(&s, 0, sizeof s);
    s.data = &fk;
    s.serving = fake_serving;
    s.stats = fake_stats;
    s.mntr = fake_mntr;
    s.mntr_extra = fake_extra;
    s.conns = fake_conns;
    s.watches_by_session = fake_by_session;
    s.session_buckets = fake_buckets;
    s.ephemerals = fake_ephemerals;
    s.get_trace_mask = fake_get_mask;
    s.set_trace_mask = fake_set_mask;
    s.reset_server_stats = fake_reset;
    s.leader = fake_leader;
    return s;
}

static int setup(void **state)
{
    (void)state;
    memset(&fk, 0, sizeof fk);
    fk.serving = 1;
    return 0;
}

static char *render_metrics(void)
{
    struct fourlw_source src = source();
    struct tb_wbuf out;

    tb_wbuf_init(&out);
    metrics_render(&src, NULL, NULL, &out);
    tb_wbuf_put(&out, "", 1);
    assert_false(out.oom);
    return (char *)out.base;
}

static int count(const char *hay, const char *needle)
{
    int n = 0;

    for (; (hay = strstr(hay, needle)) != NULL; hay++)
        n++;
    return n;
}

/* mntr's figures under ZooKeeper's Prometheus names. */
static void test_metrics_names(void **state)
{
    char *t = render_metrics();

    (void)state;
    assert_non_null(strstr(t, "# TYPE znode_count gauge\nznode_count 9\n"));
    assert_non_null(strstr(t, "\nwatch_count 5\n"));
    assert_non_null(strstr(t, "\navg_latency 2.1818\n"));
    assert_non_null(strstr(t, "\nnum_alive_connections 3\n"));
    assert_non_null(strstr(t, "\nuptime 12796\n"));
    assert_non_null(
        strstr(t, "\ntumbler_server_state{server_state=\"leader\"} 1\n"));
    /* milliseconds in seconds, under a name that says so */
    assert_non_null(
        strstr(t, "\ntumbler_snapshot_stall_last_seconds 0.0005\n"));
    assert_non_null(strstr(t, "# HELP tumbler_snapshot_stall_last_seconds "
                              "mntr's zk_tumbler_snapshot_stall_last_ms\n"));
    assert_null(strstr(t, "\nzk_")); /* no sample keeps mntr's prefix */
    free(t);
}

/* Labels escaped; each family once, its samples together. */
static void test_metrics_families(void **state)
{
    char *t = render_metrics(), *line, *save = NULL;
    char seen[64][96], last[96] = "", want[256];
    int nseen = 0, i;

    (void)state;
    assert_non_null(strstr(t, "quota_count_limit_per_namespace{key=\"ns1\"}"
                              " 10\nquota_count_limit_per_namespace{key="
                              "\"n\\\"s\\\\2\"} 20\n"));
    assert_non_null(strstr(t, "tumbler_role_note{tumbler_role_note="
                              "\"a \\\"b\\\"\\nc\"} 1\n"));
    assert_int_equal(count(t, "# TYPE quota_count_limit_per_namespace "), 1);
    /* A long name whole; one too long for a label left out, not unnamed. */
    snprintf(want, sizeof want,
             "quota_count_limit_per_namespace{key=\"%s\"} 30\n", wide_ns);
    assert_non_null(strstr(t, want));
    assert_null(strstr(t, " 40\n"));
    for (line = strtok_r(t, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        char name[96];
        if (line[0] == '#')
            continue;
        sscanf(line, "%95[^{ ]", name);
        if (strcmp(name, last) == 0)
            continue;
        for (i = 0; i < nseen; i++)
            assert_string_not_equal(seen[i], name); /* not split */
        assert_true(nseen < 64);
        strcpy(seen[nseen++], name);
        strcpy(last, name);
    }
    free(t);
}

static void test_hist(void **state)
{
    struct hist h;
    struct tb_wbuf out;
    char *t;

    (void)state;
    memset(&h, 0, sizeof h);
    hist_note(&h, 50);       /* <= 100 us */
    hist_note(&h, 100);      /* <= 100 us: bounds are inclusive */
    hist_note(&h, 101);      /* <= 250 us */
    hist_note(&h, 20000000); /* past 10 s: +Inf only */
    tb_wbuf_init(&out);
    hist_render(&out, "x_seconds", "op=\"get\"", &h);
    tb_wbuf_put(&out, "", 1);
    t = (char *)out.base;
    assert_non_null(strstr(t, "x_seconds_bucket{op=\"get\",le=\"0.000100\"} 2\n"
                              "x_seconds_bucket{op=\"get\",le=\"0.000250\"} 3\n"));
    assert_non_null(strstr(t, "x_seconds_bucket{op=\"get\",le=\"10.000000\"} 3\n"
                              "x_seconds_bucket{op=\"get\",le=\"+Inf\"} 4\n"));
    assert_non_null(strstr(t, "x_seconds_sum{op=\"get\"} 20.000251\n"
                              "x_seconds_count{op=\"get\"} 4\n"));
    tb_wbuf_free(&out);
    assert_string_equal(metrics_op_name(metrics_op_index(4)), "getData");
    assert_string_equal(metrics_op_name(metrics_op_index(-11)),
                        "closeSession");
    assert_int_equal(metrics_op_index(0), -1);
}

/* ZooKeeper's summaries: quantiles placed linearly within their bucket,
 * in ms, with the exact count and sum; none seen gives NaN; a rank past
 * the last bound gives that bound. */
/* Elections timed on one member's observations, on a clock of our own. */
static void test_election(void **state)
{
    struct election_timer e;

    (void)state;
    /* starting: no leader until the poll at 1300 names server 2 */
    election_start(&e, 1000);
    election_note(&e, 0, 1, 1100);
    assert_int_equal(e.hist.count, 0);
    election_note(&e, 2, 1, 1300);
    assert_int_equal(e.hist.count, 1);
    assert_int_equal(e.hist.sum_us, 300000);
    /* the same leader in the same term: nothing */
    election_note(&e, 2, 1, 1400);
    assert_int_equal(e.hist.count, 1);

    /* the link to server 2 lost at 2000; raft names none at 2500, then
     * server 3 at 2600: the election began with the loss */
    election_lost(&e, 2, 2000);
    election_lost(&e, 2, 2050); /* lost again: the first one stands */
    election_note(&e, 2, 1, 2100);
    election_note(&e, 0, 2, 2500);
    election_note(&e, 3, 2, 2600);
    assert_int_equal(e.hist.count, 2);
    assert_int_equal(e.hist.sum_us, 300000 + 600000);

    /* a new leader and term in one poll, after a loss: from the loss */
    election_lost(&e, 3, 5000);
    election_note(&e, 1, 3, 5040);
    assert_int_equal(e.hist.count, 3);
    assert_int_equal(e.hist.sum_us, 900000 + 40000);

    /* the term alone rises (the member voted) with no loss seen: it
     * counts from that poll, and ends when a leader is named */
    election_note(&e, 1, 4, 6000);
    assert_int_equal(e.hist.count, 4);
    assert_int_equal(e.hist.sum_us, 940000);

    /* a link lost and made again to the same leader: the hint expires,
     * and a later election does not count from it */
    election_lost(&e, 1, 7000);
    election_note(&e, 1, 4, 7000 + ELECTION_HINT_MS + 1);
    election_note(&e, 0, 5, 20000);
    election_note(&e, 2, 5, 20100);
    assert_int_equal(e.hist.count, 5);
    assert_int_equal(e.hist.sum_us, 940000 + 100000);

    /* a link closed to a leader no longer named is no loss */
    election_lost(&e, 1, 30000);
    election_note(&e, 0, 6, 30500);
    election_note(&e, 2, 6, 30600);
    assert_int_equal(e.hist.count, 6);
    assert_int_equal(e.hist.sum_us, 1040000 + 100000);
}

static void test_zksummary(void **state)
{
    struct hist h, both;
    struct tb_wbuf out;
    int i;
    char *t;

    (void)state;
    memset(&h, 0, sizeof h);
    for (i = 0; i < 4; i++) {
        hist_note(&h, 50);  /* (0, 100] */
        hist_note(&h, 200); /* (100, 250] */
    }
    hist_note(&h, 400); /* (250, 500] */
    hist_note(&h, 400);
    /* rank 5 is the first of (100, 250]'s four: 100 + 150 / 4 */
    assert_true(hist_quantile_us(&h, 0.5) == 137.5);
    assert_true(hist_quantile_us(&h, 0.9) == 375);
    tb_wbuf_init(&out);
    zksummary_render(&out, "updatelatency", "x", ZKSUMMARY_ADVANCED, &h);
    tb_wbuf_put(&out, "", 1);
    t = (char *)out.base;
    assert_string_equal(t, "# HELP updatelatency x\n"
                           "# TYPE updatelatency summary\n"
                           "updatelatency{quantile=\"0.5\"} 0.1375\n"
                           "updatelatency{quantile=\"0.9\"} 0.375\n"
                           "updatelatency{quantile=\"0.99\"} 0.4875\n"
                           "updatelatency_count 10\n"
                           "updatelatency_sum 1.800\n");
    tb_wbuf_free(&out);

    memset(&both, 0, sizeof both);
    tb_wbuf_init(&out);
    zksummary_render(&out, "fsynctime", "y", ZKSUMMARY_BASIC, &both);
    tb_wbuf_put(&out, "", 1);
    assert_string_equal((char *)out.base, "# HELP fsynctime y\n"
                                          "# TYPE fsynctime summary\n"
                                          "fsynctime{quantile=\"0.5\"} NaN\n"
                                          "fsynctime_count 0\n"
                                          "fsynctime_sum 0.000\n");
    tb_wbuf_free(&out);
    hist_add(&both, &h);
    hist_add(&both, &h);
    assert_int_equal(both.count, 20);
    assert_int_equal(both.sum_us, 3600);
    assert_true(hist_quantile_us(&both, 0.5) == 137.5);
    hist_note(&both, 20000000); /* +Inf only */
    assert_true(hist_quantile_us(&both, 0.99) == 10000000);

    assert_int_equal(metrics_op_is_update(metrics_op_index(1)), 1);   /* create */
    assert_int_equal(metrics_op_is_update(metrics_op_index(-10)), 1); /* createSession */
    assert_int_equal(metrics_op_is_update(metrics_op_index(4)), 0);   /* getData */
    assert_int_equal(metrics_op_is_update(metrics_op_index(11)), 0);  /* ping */
    assert_int_equal(metrics_op_is_update(metrics_op_index(100)), -1); /* auth */
}

/* The request's query arguments: the environment stands in for them. */
static const char *env_arg(void *ctx, const char *name)
{
    (void)ctx;
    return getenv(name);
}

static char *admin(const char *cmd, int status, const char *arg)
{
    struct fourlw_source src = source();
    struct tb_wbuf out;

    tb_wbuf_init(&out);
    assert_int_equal(adminsrv_run(&src, cmd, arg ? env_arg : NULL, NULL, &out),
                     status);
    tb_wbuf_put(&out, "", 1);
    assert_false(out.oom);
    return (char *)out.base;
}

static void expect(const char *cmd, const char *json)
{
    char *t = admin(cmd, 200, NULL);

    assert_string_equal(t, json);
    free(t);
}

static void test_admin_simple(void **state)
{
    (void)state;
    expect("ruok", "{\"command\":\"ruok\",\"error\":null}");
    expect("lead", "{\"is_leader\":true,\"leader_id\":2,\"leader_ip\":\"\","
                   "\"command\":\"leader\",\"error\":null}");
    expect("wchc", "{\"session_id_to_watched_paths\":{\"7\":[\"/a\","
                   "\"/a\\\"b\"],\"8\":[\"/z\"]},\"command\":\"watches\","
                   "\"error\":null}");
    expect("dump", "{\"expiry_time_to_session_ids\":{\"1000\":[7,8],"
                   "\"2000\":[9]},\"session_id_to_ephemeral_paths\":"
                   "{\"7\":[\"/e1\"]},\"command\":\"dump\",\"error\":null}");
    expect("voting_view", "{\"current_config\":{},\"command\":\"voting_view\","
                          "\"error\":null}");
}

static void test_admin_stats(void **state)
{
    char key[sizeof long_ns + 64];
    char *t;

    (void)state;
    t = admin("stat", 200, NULL);
    assert_non_null(strstr(t, "\"server_stats\":{\"packets_sent\":0,"
                              "\"packets_received\":15,"));
    assert_non_null(strstr(t, "\"server_state\":\"leader\","
                              "\"avg_latency\":2.1818,\"max_latency\":8,"
                              "\"min_latency\":1,"));
    assert_non_null(strstr(t, "\"node_count\":9,\"connections\":[{"
                              "\"remote_socket_address\":\"127.0.0.1:4000\","
                              "\"interest_ops\":1,\"outstanding_requests\":0,"
                              "\"packets_received\":7,\"packets_sent\":6},{"));
    assert_null(strstr(t, "session_id")); /* stat's connections are brief */
    assert_non_null(strstr(t, "\"command\":\"stats\",\"error\":null}"));
    free(t);
    t = admin("cons", 200, NULL);
    assert_non_null(strstr(t, "\"session_id\":4660,\"last_operation\":"
                              "\"GETD\","));
    assert_non_null(strstr(t, "\"avg_latency\":2,\"max_latency\":4}"));
    /* One with no session yet has the same keys, as ZooKeeper's; an IPv6
     * address in brackets, as Jackson writes an InetSocketAddress. */
    assert_non_null(strstr(t, "{\"remote_socket_address\":\"[::1]:4001\","
                              "\"interest_ops\":0,\"outstanding_requests\":0,"
                              "\"packets_received\":0,\"packets_sent\":0,"
                              "\"session_id\":0,\"last_operation\":\"NA\","));
    assert_non_null(strstr(t, "\"last_cxid\":-1,\"last_zxid\":-1,"));
    free(t);
    t = admin("mntr", 200, NULL);
    assert_non_null(strstr(t, "{\"version\":\"3.8.0-"));
    assert_non_null(strstr(t, "\"znode_count\":9,"));
    assert_non_null(strstr(t, "\"avg_latency\":2.1818,"));
    /* A namespace's name of any length keys its figures whole. */
    snprintf(key, sizeof key, "\"%s_quota_count_limit_per_namespace\":40",
             long_ns);
    assert_non_null(strstr(t, key));
    assert_non_null(strstr(t, "\"ns1_quota_bytes_limit_per_namespace\":100,"));
    assert_non_null(strstr(t, "\"tumbler_role_note\":\"a \\\"b\\\"\\u000ac\","));
    assert_non_null(strstr(t, "\"command\":\"monitor\",\"error\":null}"));
    free(t);
}

static void test_admin_errors(void **state)
{
    char *t;

    (void)state;
    t = admin("nope\"x", 200, NULL); /* as ZooKeeper 3.8 */
    assert_string_equal(t, "{\"command\":\"nope\\\"x\",\"error\":"
                           "\"Unknown command: nope\\\"x\"}");
    free(t);
    expect("stmk", "{\"command\":\"set_trace_mask\",\"error\":"
                   "\"setTraceMask requires long traceMask argument\"}");
    setenv("traceMask", "12x", 1);
    free(admin("stmk", 200, "x"));
    assert_int_equal(fk.mask, 0);
    setenv("traceMask", "12", 1);
    free(admin("stmk", 200, "x"));
    assert_int_equal(fk.mask, 12);
    expect("gtmk", "{\"tracemask\":12,\"command\":\"get_trace_mask\","
                   "\"error\":null}");
    expect("srst", "{\"command\":\"stat_reset\",\"error\":null}");
    assert_int_equal(fk.resets, 1);
    fk.serving = 0;
    expect("srst", "{\"command\":\"stat_reset\",\"error\":\"This ZooKeeper "
                   "instance is not currently serving requests\"}");
    assert_int_equal(fk.resets, 1);
    t = admin("mntr", 200, NULL); /* as ZooKeeper's: answers anyway */
    assert_non_null(strstr(t, "\"error\":null}"));
    free(t);
}

static void test_admin_conf(void **state)
{
    struct fourlw_source src = source();
    struct tb_config cfg;
    struct tb_wbuf out;
    char err[256];

    (void)state;
    tb_config_init(&cfg);
    assert_int_equal(tb_config_set(&cfg, "X509AuthenticationProvider.superUser",
                                   "007", NULL, err, sizeof err),
                     0);
    assert_int_equal(tb_config_finish(&cfg, err, sizeof err), 0);
    src.cfg = &cfg;
    tb_wbuf_init(&out);
    assert_int_equal(adminsrv_run(&src, "conf", NULL, NULL, &out), 200);
    tb_wbuf_put(&out, "", 1);
    assert_non_null(strstr((char *)out.base, "{\"client_port\":2181,"
                                             "\"secure_client_port\":-1,"
                                             "\"data_dir\":\"./data\","));
    assert_non_null(strstr((char *)out.base, "\"tick_time\":2000,"
                                             "\"max_client_cnxns\":60,"));
    /* and every key's effective value, under its own name */
    assert_non_null(strstr((char *)out.base, ",\"tumbler_config\":{"
                                             "\"tickTime\":2000,"
                                             "\"dataDir\":\"./data\","));
    assert_non_null(strstr((char *)out.base, "\"minSessionTimeout\":4000,"));
    assert_non_null(strstr((char *)out.base, "\"admin.commandURL\":"
                                             "\"/commands\","));
    /* JSON has no 007: digits with a leading zero stay text */
    assert_non_null(strstr((char *)out.base, "\"X509AuthenticationProvider."
                                             "superUser\":\"007\""));
    tb_wbuf_free(&out);
    tb_config_free(&cfg);
}

static void test_json(void **state)
{
    struct tb_wbuf out;
    struct json j;

    (void)state;
    tb_wbuf_init(&out);
    json_init(&j, &out);
    json_array(&j);
    json_strn(&j, "a\x01\"\\\n", 5);
    json_double(&j, 0.1);
    json_double(&j, 2.0); /* still a double to the reader */
    json_double(&j, 1.0 / 0.0);
    json_object(&j);
    json_end(&j);
    json_int(&j, -3);
    json_end(&j);
    tb_wbuf_put(&out, "", 1);
    assert_string_equal((char *)out.base,
                        "[\"a\\u0001\\\"\\\\\\u000a\",0.1,2.0,null,{},-3]");
    tb_wbuf_free(&out);
}

/* UTF-8 passes; a byte that begins no well-formed sequence (a stray
 * continuation, an overlong form, a surrogate, a sequence cut short) is
 * written as U+FFFD, so that the text stays valid JSON. */
static void test_json_utf8(void **state)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\x92", /* été € U+1F512 */
         "\"\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\x92\""},
        {"a\x80" "b", "\"a\\ufffdb\""},
        {"\xc0\xaf", "\"\\ufffd\\ufffd\""},               /* overlong '/' */
        {"\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\""},     /* a surrogate */
        {"\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\""}, /* too big */
        {"x\xe2\x82", "\"x\\ufffd\\ufffd\""},              /* cut short */
    };
    struct tb_wbuf out;
    struct json j;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tb_wbuf_init(&out);
        json_init(&j, &out);
        json_str(&j, cases[i].in);
        tb_wbuf_put(&out, "", 1);
        assert_string_equal((char *)out.base, cases[i].out);
        tb_wbuf_free(&out);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_metrics_names, setup),
        cmocka_unit_test_setup(test_metrics_families, setup),
        cmocka_unit_test_setup(test_hist, setup),
        cmocka_unit_test_setup(test_zksummary, setup),
        cmocka_unit_test_setup(test_election, setup),
        cmocka_unit_test_setup(test_admin_simple, setup),
        cmocka_unit_test_setup(test_admin_stats, setup),
        cmocka_unit_test_setup(test_admin_errors, setup),
        cmocka_unit_test_setup(test_admin_conf, setup),
        cmocka_unit_test_setup(test_json, setup),
        cmocka_unit_test_setup(test_json_utf8, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
