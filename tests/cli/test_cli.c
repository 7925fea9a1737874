/* Unit tests of the tumbler CLI's pure parts: shell word splitting, ACL
 * parsing, the JSON writer (escaping, UTF-8 check and repair, base64), a
 * node's data made safe for a terminal, a child's path joined, number and
 * duration parsing, the exit-status map, the command table, the event pipe
 * that carries signals and other threads' messages to the main thread, and
 * what top reads of the four-letter words (the server list, srvr's
 * figures, cons's est).  No server: the scripts beside this file cover the
 * commands end to end. */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli/cli.h"
#include "cli/fourlw.h"

/* ---- words ---- */

static void check_words(const char *line, int n, ...)
{
    char **v;
    va_list ap;
    int i, got = cli_words_split(line, &v);

    assert_int_equal(got, n);
    va_start(ap, n);
    for (i = 0; i < n; i++)
        assert_string_equal(v[i], va_arg(ap, const char *));
    va_end(ap);
    assert_null(v[n]);
    cli_words_free(v, n);
}

static void test_words(void **state)
{
    char **v;

    (void)state;
    check_words("", 0);
    check_words("   \t ", 0);
    check_words("ls /a", 2, "ls", "/a");
    check_words("  create  /a   'two words' ", 3, "create", "/a", "two words");
    check_words("set /a \"say \\\"hi\\\" \\\\o/\"", 3, "set", "/a",
                "say \"hi\" \\o/");
    check_words("a\\ b c", 2, "a b", "c");
    check_words("x'y'\"z\" ''", 2, "xyz", "");
    check_words("one two three four five six seven eight nine ten", 10, "one",
                "two", "three", "four", "five", "six", "seven", "eight", "nine",
                "ten");
    assert_int_equal(cli_words_split("get 'open", &v), -1);
    assert_int_equal(cli_words_split("get \"open", &v), -1);
}

/* ---- ACLs ---- */

static void test_acl(void **state)
{
    char buf[128];
    struct tb_acl_entry *v;
    int32_t n;

    (void)state;
    strcpy(buf, "world:anyone:cdrwa");
    assert_int_equal(cli_acl_parse(buf, &v, &n), 0);
    assert_int_equal(n, 1);
    assert_string_equal(v[0].scheme, "world");
    assert_string_equal(v[0].id, "anyone");
    assert_int_equal(v[0].perms, TB_PERM_ALL);
    free(v);

    strcpy(buf, "digest:alice:abc=:r,ip:10.0.0.0/8:rw,auth::a");
    assert_int_equal(cli_acl_parse(buf, &v, &n), 0);
    assert_int_equal(n, 3);
    assert_string_equal(v[0].scheme, "digest");
    assert_string_equal(v[0].id, "alice:abc=");
    assert_int_equal(v[0].perms, TB_PERM_READ);
    assert_string_equal(v[1].id, "10.0.0.0/8");
    assert_int_equal(v[1].perms, TB_PERM_READ | TB_PERM_WRITE);
    assert_string_equal(v[2].scheme, "auth");
    assert_string_equal(v[2].id, "");
    assert_int_equal(v[2].perms, TB_PERM_ADMIN);
    free(v);

    strcpy(buf, "world:anyone");
    assert_int_equal(cli_acl_parse(buf, &v, &n), -1);
    strcpy(buf, "world:anyone:rx");
    assert_int_equal(cli_acl_parse(buf, &v, &n), -1);
    strcpy(buf, ":anyone:r");
    assert_int_equal(cli_acl_parse(buf, &v, &n), -1);
    strcpy(buf, ",");
    assert_int_equal(cli_acl_parse(buf, &v, &n), -1);
}

static void test_perms(void **state)
{
    char b[6];

    (void)state;
    assert_string_equal(cli_perms_str(TB_PERM_ALL, b), "cdrwa");
    assert_string_equal(cli_perms_str(TB_PERM_READ, b), "r");
    assert_string_equal(cli_perms_str(0, b), "");
}

/* ---- JSON ---- */

/* Runs `fill` on a writer over a memory stream; returns the text. */
static char *json_of(void (*fill)(struct jw *))
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    struct jw w;

    assert_non_null(f);
    jw_init(&w, f);
    fill(&w);
    fclose(f);
    return buf;
}

static void fill_nested(struct jw *w)
{
    jw_obj(w);
    jw_key(w, "s");
    jw_str(w, "q\"\\\n\t\x01");
    jw_key(w, "a");
    jw_arr(w);
    jw_int(w, 1);
    jw_int(w, -2);
    jw_obj(w);
    jw_end_obj(w);
    jw_null(w);
    jw_end_arr(w);
    jw_key(w, "b");
    jw_bool(w, 1);
    jw_key(w, "h");
    jw_hex(w, (int64_t)0x0100000000000002LL);
    jw_end_obj(w);
}

static void fill_text(struct jw *w)
{
    jw_obj(w);
    jw_data(w, "h\xc3\xa9llo", 6);
    jw_end_obj(w);
}

static void fill_binary(struct jw *w)
{
    jw_obj(w);
    jw_data(w, "a\0b\xff", 4);
    jw_end_obj(w);
}

static void fill_overlong(struct jw *w)
{
    jw_obj(w);
    jw_data(w, "\xc0\x80", 2); /* overlong NUL: not text */
    jw_end_obj(w);
}

static void fill_surrogate(struct jw *w)
{
    jw_obj(w);
    jw_data(w, "\xed\xa0\x80", 3); /* U+D800 */
    jw_end_obj(w);
}

static void fill_null(struct jw *w)
{
    jw_obj(w);
    jw_data(w, NULL, 0);
    jw_key(w, "x");
    jw_int(w, 0);
    jw_end_obj(w);
}

static void fill_session(struct jw *w)
{
    jw_session(w, (int64_t)0x0100000000000002LL);
}

static void fill_b64(struct jw *w)
{
    jw_arr(w);
    jw_obj(w);
    jw_data(w, "\x80", 1);
    jw_end_obj(w);
    jw_obj(w);
    jw_data(w, "\x80\x81", 2);
    jw_end_obj(w);
    jw_obj(w);
    jw_data(w, "\x80\x81\x82", 3);
    jw_end_obj(w);
    jw_end_arr(w);
}

static void test_json(void **state)
{
    char *s, sid[CLI_SESSION_LEN];

    (void)state;
    s = json_of(fill_nested);
    assert_string_equal(s, "{\"s\":\"q\\\"\\\\\\n\\t\\u0001\",\"a\":[1,-2,{},"
                           "null],\"b\":true,\"h\":\"0x100000000000002\"}");
    free(s);
    s = json_of(fill_text);
    assert_string_equal(s, "{\"data\":\"h\xc3\xa9llo\"}");
    free(s);
    s = json_of(fill_binary);
    assert_string_equal(s, "{\"data_base64\":\"YQBi/w==\"}");
    free(s);
    s = json_of(fill_overlong);
    assert_string_equal(s, "{\"data_base64\":\"wIA=\"}");
    free(s);
    s = json_of(fill_surrogate);
    assert_string_equal(s, "{\"data_base64\":\"7aCA\"}");
    free(s);
    s = json_of(fill_null);
    assert_string_equal(s, "{\"data\":null,\"x\":0}");
    free(s);
    /* A session id is the same string in text and JSON. */
    s = json_of(fill_session);
    assert_string_equal(s, "\"0x100000000000002\"");
    free(s);
    assert_string_equal(cli_session_str((int64_t)0x0100000000000002LL, sid),
                        "0x100000000000002");
    s = json_of(fill_b64);
    assert_string_equal(s, "[{\"data_base64\":\"gA==\"},"
                           "{\"data_base64\":\"gIE=\"},"
                           "{\"data_base64\":\"gIGC\"}]");
    free(s);
}

/* jw_strn of n bytes at s, as the writer prints it. */
static char *strn_json(const char *s, size_t n)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct jw w;

    assert_non_null(f);
    jw_init(&w, f);
    jw_strn(&w, s, n);
    fclose(f);
    return buf;
}

static void check_strn(const char *s, size_t n, const char *want)
{
    char *got = strn_json(s, n);

    assert_string_equal(got, want);
    free(got);
}

/* Every string the writer emits is UTF-8 (a lock's owner, a server's
 * answer): characters as they are, each other byte as \ufffd. */
static void test_json_utf8(void **state)
{
    (void)state;
    check_strn("\xc3\xa9", 2, "\"\xc3\xa9\"");                 /* e-acute */
    check_strn("\xe2\x82\xac", 3, "\"\xe2\x82\xac\"");         /* euro */
    check_strn("\xf0\x9f\x98\x80", 4, "\"\xf0\x9f\x98\x80\""); /* emoji */
    check_strn("a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80z", 11,
               "\"a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80z\"");
    check_strn("\xff", 1, "\"\\ufffd\"");
    check_strn("\x80", 1, "\"\\ufffd\""); /* a lone continuation byte */
    /* A sequence cut short: by the end, and by an ASCII byte. */
    check_strn("\xe2\x82", 2, "\"\\ufffd\\ufffd\"");
    check_strn("a\xe2\x82z", 4, "\"a\\ufffd\\ufffdz\"");
    check_strn("\xf0\x9f\x98", 3, "\"\\ufffd\\ufffd\\ufffd\"");
    check_strn("\xc0\x80", 2, "\"\\ufffd\\ufffd\"");            /* overlong */
    check_strn("\xed\xa0\x80", 3, "\"\\ufffd\\ufffd\\ufffd\""); /* U+D800 */
    check_strn("\xf4\x90\x80\x80", 4,                           /* > U+10FFFF */
               "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
    /* The end of the string is n, not a NUL: no read past it. */
    check_strn("\xe2\x82\xac", 2, "\"\\ufffd\\ufffd\"");
    check_strn("a\0b", 3, "\"a\\u0000b\"");
}

/* An owner for a line of text: nothing that drives a terminal. */
static void test_text_str(void **state)
{
    char b[41], small[4];

    (void)state;
    assert_string_equal(cli_text_str("db1:4121", 8, b, sizeof b), "db1:4121");
    assert_string_equal(cli_text_str(NULL, 0, b, sizeof b), "-");
    assert_string_equal(cli_text_str("", 0, b, sizeof b), "-");
    assert_string_equal(cli_text_str("a\x1b[31mb", 7, b, sizeof b), "a?[31mb");
    assert_string_equal(cli_text_str("\r\n\t\x7f", 4, b, sizeof b), "????");
    assert_string_equal(cli_text_str("a\0b", 3, b, sizeof b), "a?b");
    /* C1 controls (CSI, U+009B) raw and as UTF-8; bytes of no character. */
    assert_string_equal(cli_text_str("\x9bx\xc2\x9by", 5, b, sizeof b), "?x?y");
    assert_string_equal(cli_text_str("\xff\xe2\x82", 3, b, sizeof b), "???");
    /* UTF-8 text as it is, U+00A0 on. */
    assert_string_equal(
        cli_text_str("\xc2\xa0\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 11, b,
                     sizeof b),
        "\xc2\xa0\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
    /* Cut to cap - 1 bytes, between characters. */
    assert_string_equal(cli_text_str("abcdef", 6, small, sizeof small), "abc");
    assert_string_equal(cli_text_str("ab\xe2\x82\xac", 5, small, sizeof small),
                        "ab");
    assert_string_equal(cli_text_str("a\x1b\x1b\x1b", 4, small, sizeof small),
                        "a??");
}

/* ---- a child's path ---- */

static void check_join(const char *dir, const char *name, const char *want)
{
    char *p = cli_path_join(dir, name);

    assert_non_null(p);
    assert_string_equal(p, want);
    free(p);
}

/* DIR/NAME whole, however long DIR is (ZooKeeper paths have no short
 * limit); the root gives "/NAME". */
static void test_path_join(void **state)
{
    char dir[3001], want[3010];

    (void)state;
    check_join("/", "a", "/a");
    check_join("/q", "entry-0000000001", "/q/entry-0000000001");
    memset(dir, 'x', sizeof dir - 1);
    dir[0] = '/';
    dir[sizeof dir - 1] = '\0';
    memcpy(want, dir, sizeof dir - 1);
    memcpy(want + sizeof dir - 1, "/taken", 7);
    check_join(dir, "taken", want);
}

/* ---- numbers, statuses, the command table ---- */

static void test_numbers(void **state)
{
    int64_t v;

    (void)state;
    assert_int_equal(cli_parse_seconds("2.5", &v), 0);
    assert_int_equal(v, 2500);
    assert_int_equal(cli_parse_seconds("0", &v), 0);
    assert_int_equal(v, 0);
    assert_int_equal(cli_parse_seconds("0.0004", &v), 0);
    assert_int_equal(v, 0);
    assert_int_equal(cli_parse_seconds("-1", &v), -1);
    assert_int_equal(cli_parse_seconds("1s", &v), -1);
    assert_int_equal(cli_parse_seconds("", &v), -1);
    assert_int_equal(cli_parse_seconds("nan", &v), -1);
    assert_int_equal(cli_parse_i64("-1", &v), 0);
    assert_int_equal(v, -1);
    assert_int_equal(cli_parse_i64("12x", &v), -1);
    assert_int_equal(cli_parse_i64("99999999999999999999", &v), -1);
}

static void test_status(void **state)
{
    (void)state;
    assert_int_equal(cli_status(0), CLI_OK);
    assert_int_equal(cli_status(TB_ENONODE), 101);
    assert_int_equal(cli_status(TB_ENODEEXISTS), 110);
    assert_int_equal(cli_status(TB_EBADVERSION), 103);
    assert_int_equal(cli_status(TB_ECONNECTIONLOSS), CLI_UNREACHABLE);
    assert_int_equal(cli_status(TB_ETIMEDOUT), CLI_UNREACHABLE);
    assert_int_equal(cli_status(TB_ELOCKLOST), CLI_LOST);
    assert_int_equal(cli_status(TB_ESYSTEM), CLI_SOFTWARE);
    assert_int_equal(cli_status(TB_ENOMEM), CLI_OSERR);
    assert_int_equal(cli_status(TB_EINVAL), CLI_SOFTWARE);
}

static void test_table(void **state)
{
    struct cli cli;
    int n, i;
    const struct cli_cmd *const *v = cli_commands(&n);

    (void)state;
    assert_true(n >= 17);
    for (i = 0; i < n; i++) {
        size_t len = strlen(v[i]->name);
        const struct cli_spec *spec = cli_spec_of(v[i]);
        /* Table-driven (exec, options from the table), or reading its
         * argv itself (run, its own help text). */
        if (spec != NULL) {
            const struct cli_opt *o = spec->opts;
            assert_non_null(spec->exec);
            assert_non_null(spec->arity);
            assert_true(spec->min_args <= spec->max_args);
            for (; o != NULL && o->letter != 0; o++) {
                assert_true(o->letter != 'h' && o->letter != 'J');
                assert_non_null(o->name);
                assert_non_null(o->help);
                assert_true(o->kind == CLI_FLAG || o->kind == CLI_STR ||
                            o->what != NULL);
            }
            assert_true(o == NULL || o - spec->opts <= CLI_MAX_OPTS);
        } else {
            assert_non_null(v[i]->help);
        }
        assert_non_null(v[i]->summary);
        /* The usage line starts with the command's own name. */
        assert_int_equal(strncmp(v[i]->usage, v[i]->name, len), 0);
        assert_true(cli_find(v[i]->name) == v[i]);
    }
    assert_null(cli_find("nope"));
    assert_true(cli_find("lock")->flags & CLI_NO_SHELL);
    assert_false(cli_find("ls")->flags & CLI_NO_SHELL);
    /* The shell runs connect and quit, not lock; a one-shot tumbler the
     * other way round. */
    memset(&cli, 0, sizeof cli);
    cli.shell = 1;
    assert_true(cli_offered(&cli, cli_find("connect")));
    assert_true(cli_offered(&cli, cli_find("quit")));
    assert_true(cli_offered(&cli, cli_find("ls")));
    assert_false(cli_offered(&cli, cli_find("lock")));
    cli.shell = 0;
    assert_false(cli_offered(&cli, cli_find("connect")));
    assert_true(cli_offered(&cli, cli_find("lock")));
}

/* ---- the event pipe ---- */

static void *poster(void *arg)
{
    (void)arg;
    cli_ev_post(CLI_MSG_TEXT, 7, "from %s", "a thread");
    return NULL;
}

static void test_events(void **state)
{
    pthread_t t;
    struct cli_msg *m;
    int sig = 0;

    (void)state;
    assert_int_equal(cli_ev_init(), 0);
    assert_int_equal(cli_ev_catch(SIGUSR1), 0);
    assert_int_equal(cli_ev_wait(-1, 0, &sig), CLI_EV_TIMEOUT);

    assert_int_equal(pthread_create(&t, NULL, poster, NULL), 0);
    pthread_join(t, NULL);
    assert_int_equal(cli_ev_wait(-1, 1000, &sig), CLI_EV_MSG);
    m = cli_ev_take();
    assert_non_null(m);
    assert_int_equal(m->kind, CLI_MSG_TEXT);
    assert_int_equal(m->code, 7);
    assert_string_equal(m->text, "from a thread");
    free(m);
    assert_null(cli_ev_take());

    /* A signal comes before queued messages. */
    cli_ev_post(CLI_MSG_LOST, 0, "lost");
    raise(SIGUSR1);
    assert_int_equal(cli_ev_wait(-1, 1000, &sig), CLI_EV_SIGNAL);
    assert_int_equal(sig, SIGUSR1);
    assert_int_equal(cli_ev_wait(-1, 1000, &sig), CLI_EV_MSG);
    m = cli_ev_take();
    assert_int_equal(m->kind, CLI_MSG_LOST);
    free(m);
    assert_int_equal(cli_ev_wait(-1, 0, &sig), CLI_EV_TIMEOUT);
}

/* The n-th server of a connection string, with the default port. */
static void test_4lw_server(void **state)
{
    char hp[CLI_HOSTPORT_LEN];

    (void)state;
    assert_int_equal(cli_4lw_server("a:1,b,[::1]:3,[::2]/chroot", 0, hp), 0);
    assert_string_equal(hp, "a:1");
    assert_int_equal(cli_4lw_server("a:1,b,[::1]:3,[::2]/chroot", 1, hp), 0);
    assert_string_equal(hp, "b:2181");
    assert_int_equal(cli_4lw_server("a:1,b,[::1]:3,[::2]/chroot", 2, hp), 0);
    assert_string_equal(hp, "[::1]:3");
    assert_int_equal(cli_4lw_server("a:1,b,[::1]:3,[::2]/chroot", 3, hp), 0);
    assert_string_equal(hp, "[::2]:2181");
    assert_int_equal(cli_4lw_server("a:1,b,[::1]:3,[::2]/chroot", 4, hp), -1);
    assert_int_equal(cli_4lw_server("h", 0, hp), 0);
    assert_string_equal(hp, "h:2181");
    assert_int_equal(cli_4lw_server("a,,b", 1, hp), -1); /* empty entry */
    assert_int_equal(cli_4lw_server("/chroot", 0, hp), -1);
}

/* srvr as ZooKeeper 3.8 writes it; what is not srvr's answer. */
static void test_srvr(void **state)
{
    struct cli_srvr s;

    (void)state;
    assert_int_equal(
        cli_srvr_parse("Zookeeper version: 3.8.0-debian, built on 2023\n"
                       "Latency min/avg/max: 0/2.1818/8\nReceived: 120\n"
                       "Sent: 119\nConnections: 3\nOutstanding: 1\n"
                       "Zxid: 0x6\nMode: standalone\nNode count: 7\n",
                       &s),
        0);
    assert_int_equal(s.received, 120);
    assert_int_equal(s.sent, 119);
    assert_int_equal(s.connections, 3);
    assert_int_equal(s.outstanding, 1);
    assert_int_equal(s.nodes, 7);
    assert_int_equal(s.zxid, 6);
    assert_true(s.lat_min == 0 && s.lat_max == 8);
    assert_true(s.lat_avg > 2.1817 && s.lat_avg < 2.1819);
    assert_string_equal(s.mode, "standalone");
    /* a zxid of an epoch past 2^31 keeps its 64 bits */
    assert_int_equal(cli_srvr_parse("Received: 1\nZxid: 0xfffffffe00000001\n"
                                    "Mode: leader\n",
                                    &s),
                     0);
    assert_true((uint64_t)s.zxid == 0xfffffffe00000001ULL);
    assert_string_equal(s.mode, "leader");
    assert_int_equal(
        cli_srvr_parse("srvr is not executed because it is not in the "
                       "whitelist.\n",
                       &s),
        -1);
    assert_int_equal(cli_srvr_parse("This ZooKeeper instance is not "
                                    "currently serving requests\n",
                                    &s),
                     -1);
    /* a line that only ends in the key is not the key */
    assert_int_equal(cli_srvr_parse("Not Received: 5\n", &s), -1);
    /* what a server says goes to a terminal and into JSON: no figure
     * that is not finite, no control character */
    assert_int_equal(
        cli_srvr_parse("Received: 1\nLatency min/avg/max: "
                       "nan/0/1e999\nMode: \x1b]0;x\x07lead\xc2\x9b\n",
                       &s),
        0);
    assert_true(s.lat_min == -1 && s.lat_avg == -1 && s.lat_max == -1);
    assert_string_equal(s.mode, "?]0;x?lead?");
}

/* cons: the est of one session's connection, not of another's. */
static void test_cons_est(void **state)
{
    const char *cons =
        " /127.0.0.1:5[1](queued=0,recved=4,sent=4,sid=0x1000a,lop=GETD,"
        "est=1700000000001,to=30000,lcxid=0x3,lzxid=0x5,lresp=99,llat=0,"
        "minlat=0,avglat=0,maxlat=1)\n"
        " /127.0.0.1:6[1](queued=0,recved=4,sent=4,sid=0x1000,lop=GETD,"
        "est=1700000000002,to=30000)\n"
        " /127.0.0.1:7[0](queued=0,recved=1,sent=0)\n\n";
    int64_t est = 0;

    (void)state;
    assert_int_equal(cli_cons_est(cons, 0x1000a, &est), 0);
    assert_int_equal(est, 1700000000001);
    assert_int_equal(cli_cons_est(cons, 0x1000, &est), 0);
    assert_int_equal(est, 1700000000002);
    assert_int_equal(cli_cons_est(cons, 0x100, &est), -1);
    assert_int_equal(cli_cons_est("cons is not executed because it is not "
                                  "in the whitelist.\n",
                                  0x1000, &est),
                     -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_words),      cmocka_unit_test(test_acl),
        cmocka_unit_test(test_perms),      cmocka_unit_test(test_json),
        cmocka_unit_test(test_json_utf8),  cmocka_unit_test(test_text_str),
        cmocka_unit_test(test_numbers),    cmocka_unit_test(test_status),
        cmocka_unit_test(test_table),      cmocka_unit_test(test_events),
        cmocka_unit_test(test_4lw_server), cmocka_unit_test(test_srvr),
        cmocka_unit_test(test_cons_est),   cmocka_unit_test(test_path_join),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
