/* Unit tests of how a zoo.cfg is read, as Java's Properties reads it:
 * separators, escapes, continuation lines, errors naming file:line and
 * never quoting a secret, ZooKeeper's keys tumblerd does not act on, and
 * datadir.autocreate.  The keys themselves and the command line are
 * test_config.c's. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "server/config/config.h"
#include "test_config.h"

/* A file as Java's Properties reads it: lines ended by \r alone or \r\n
 * too, a trailing backslash going on at the next line (its leading blanks
 * dropped) unless the line is a comment, escapes undone; a NUL byte
 * refused. */
static void test_properties_syntax(void **state)
{
    struct tb_config cfg;
    char err[256] = "";
    const char *path = write_cfg("# saved with CR line ends\rtickTime=2500\r"
                                 "clientPort=2999\r\n"
                                 "4lw.commands.whitelist=stat, \\\n"
                                 "    ruok\n"
                                 "# the data was in C:\\zk\\\n"
                                 "maxClientCnxns=7\n"
                                 "  ! and C:\\\n"
                                 "minSessionTimeout=5000\n"
                                 "X509AuthenticationProvider.superUser="
                                 "CN=Doe\\\\, John,O=Caf\\u00e9\n");

    (void)state;
    tb_config_init(&cfg);
    assert_int_equal(parse(&cfg, err, sizeof err, "-c", path, NULL), 0);
    assert_int_equal(cfg.tick_time, 2500);
    assert_int_equal(cfg.client_port, 2999);
    assert_string_equal(cfg.fourlw_whitelist, "stat, ruok");
    assert_int_equal(cfg.max_client_cnxns, 7); /* a comment goes on nowhere */
    assert_int_equal(cfg.min_session_timeout, 5000);
    assert_string_equal(cfg.tls.super_user, "CN=Doe\\, John,O=Caf\xc3\xa9");
    tb_config_free(&cfg);
    unlink(path);
    tb_config_init(&cfg);
    {
        static const char nul[] = "tickTime=2000\nclientPort=2\0001\n";
        char p2[64] = "/tmp/tb_test_cfg_XXXXXX";
        int fd = mkstemp(p2);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, nul, sizeof nul - 1),
                         (ssize_t)sizeof nul - 1);
        close(fd);
        assert_int_equal(parse(&cfg, err, sizeof err, "-c", p2, NULL),
                         TB_EINVAL);
        assert_non_null(strstr(err, "a NUL byte"));
        unlink(p2);
    }
    tb_config_free(&cfg);
}

/* Loads `text` as a file, expects failure, and that the message does not
 * quote `secret`. */
static void expect_secret_hidden(const char *text, const char *secret)
{
    struct tb_config cfg;
    char err[512] = "";
    const char *path = write_cfg(text);

    tb_config_init(&cfg);
    assert_int_equal(parse(&cfg, err, sizeof err, "-c", path, NULL), TB_EINVAL);
    assert_string_not_equal(err, "");
    assert_null(strstr(err, secret));
    tb_config_free(&cfg);
    unlink(path);
}

/* A value that may be a password is never quoted in a message: not a bad
 * superDigest (the password may stand there instead), not what follows a
 * missing key, nor a password whose escape is malformed. */
static void test_secrets_not_echoed(void **state)
{
    (void)state;
    expect_file_error("DigestAuthenticationProvider.superDigest="
                      "super:s3cret\n",
                      "1: DigestAuthenticationProvider.superDigest: expected "
                      "user:base64(sha1), such as "
                      "super:D/InIHSb7yEEbrWz8b9l71RjZJU= (the value, a "
                      "secret, is not shown)");
    expect_secret_hidden("DigestAuthenticationProvider.superDigest="
                         "super:s3cret\n",
                         "s3cret");
    expect_secret_hidden("zookeeper.DigestAuthenticationProvider."
                         "superDigest: s3cret\n",
                         "s3cret");
    expect_file_error("tickTime=2000\n: s3cret\n",
                      "2: expected key=value, found no key");
    expect_secret_hidden("tickTime=2000\n: s3cret\n", "s3cret");
    expect_secret_hidden("ssl.keyStore.password=s3cret\\u12\n", "s3cret");
}

static void test_file_errors(void **state)
{
    (void)state;
    /* a key nobody documents is an error, not a warning */
    expect_file_error("tickTime=2000\nsomeNewKey=1\n",
                      "2: someNewKey: unknown key, neither tumblerd's nor one "
                      "of ZooKeeper's (see --help)");
    expect_file_error("zookeeper.tikTime=2000\n",
                      "1: tikTime: unknown key, neither tumblerd's nor one "
                      "of ZooKeeper's (see --help)");
    /* ZooKeeper's keys whose absence would change what was asked for */
    expect_file_error("group.1=1:2:3\n",
                      "1: group.1: hierarchical quorums are not supported: "
                      "the quorum would be another than the one configured");
    expect_file_error("dynamicConfigFile=/etc/zookeeper/zoo.cfg.dynamic\n",
                      "1: dynamicConfigFile: not supported: write the "
                      "server.N lines in this file");
    expect_file_error("quorum.auth.enableSasl=true\n",
                      "1: quorum.auth.enableSasl: SASL between members is not "
                      "supported");
    expect_file_error("quorum.auth.learnerRequireSasl=True\n",
                      "1: quorum.auth.learnerRequireSasl: SASL between members "
                      "is not supported");
    expect_file_error("# x\n\ntickTime=2s\n",
                      "3: tickTime: expected an integer, got \"2s\"");
    expect_file_error("tickTime=2000 # comment\n",
                      "1: tickTime: expected an integer, got \"2000 # "
                      "comment\"");
    expect_file_error("clientPort=70000\n",
                      "1: clientPort: 70000 is out of range (0..65535)");
    expect_file_error("tickTime=0\n",
                      "1: tickTime: 0 is out of range (1..100000000)");
    expect_file_error("maxClientCnxns=99999999999999999999\n",
                      "1: maxClientCnxns: 99999999999999999999 is out of "
                      "range (0..2147483647)");
    expect_file_error("tickTime=\n",
                      "1: tickTime: expected an integer, got \"\"");
    /* a key alone has the empty value, as in Java: then the key's checks */
    expect_file_error("a\nfoo\n", "1: a: unknown key, neither tumblerd's nor "
                                  "one of ZooKeeper's (see --help)");
    expect_file_error("tickTime\n",
                      "1: tickTime: expected an integer, got \"\"");
    expect_file_error("=5\n", "1: expected key=value, found no key");
    expect_file_error("extendedTypesEnabled=maybe\n",
                      "1: extendedTypesEnabled: expected true or false, got "
                      "\"maybe\"");
    expect_file_error("logLevel=loud\n",
                      "1: logLevel: expected error, warn, info or debug, got "
                      "\"loud\"");
    expect_file_error("clientPortAddress=example.com\n",
                      "1: clientPortAddress: expected an IP address such as "
                      "127.0.0.1, 0.0.0.0 or ::1, got \"example.com\"");
    expect_file_error("dataDir=\n", "1: dataDir: must not be empty");
    expect_file_error("DigestAuthenticationProvider.superDigest=super:pw\n",
                      "1: DigestAuthenticationProvider.superDigest: expected "
                      "user:base64(sha1), such as "
                      "super:D/InIHSb7yEEbrWz8b9l71RjZJU= (the value, a "
                      "secret, is not shown)");
    expect_file_error("server.0=a:1:2\n",
                      "1: server.0: the server id must be 1..254");
    expect_file_error("server.x=a:1:2\n",
                      "1: server.x: the server id must be 1..254");
    expect_file_error("serverId=255\n",
                      "1: serverId: 255 is out of range (1..254)");
    /* a combination: blamed on the line that set minSessionTimeout */
    expect_file_error("tickTime=2000\nminSessionTimeout=50000\n"
                      "maxSessionTimeout=40000\n",
                      "2: minSessionTimeout: minSessionTimeout (50000) must "
                      "not be larger than maxSessionTimeout (40000)");
    /* min derived from tickTime, max written down: blame max's line */
    expect_file_error("tickTime=2000\n\nmaxSessionTimeout=3000\n",
                      "3: maxSessionTimeout: minSessionTimeout (4000, 2 x "
                      "tickTime) must not be larger than maxSessionTimeout "
                      "(3000)");
}

/* Java's Properties ends a key at '=', ':' or a blank: a zoo.cfg that
 * ZooKeeper reads with "key: value" or "key value" lines is read alike
 * (a password among them too, which a refusal would have quoted). */
static void test_properties_separators(void **state)
{
    struct tb_config cfg;
    char err[256] = "";
    const char *path = write_cfg("tickTime: 2500\n"
                                 "clientPort 2999\n"
                                 "maxClientCnxns \t= 7\n"
                                 "\fminSessionTimeout\f:\f5000\n"
                                 "ssl.keyStore.password: s3cret\n"
                                 "ssl.trustStore.password s3cr=t:2\n"
                                 "4lw.commands.whitelist:=stat\n"
                                 "superUser\n");

    (void)state;
    tb_config_init(&cfg);
    assert_int_equal(parse(&cfg, err, sizeof err, "-c", path, NULL), 0);
    assert_string_equal(err, "");
    assert_int_equal(cfg.tick_time, 2500);
    assert_int_equal(cfg.client_port, 2999);
    assert_int_equal(cfg.max_client_cnxns, 7);
    assert_int_equal(cfg.min_session_timeout, 5000);
    assert_string_equal(cfg.tls.key_password, "s3cret");
    assert_string_equal(cfg.tls.trust_password, "s3cr=t:2");
    /* one separator: what follows it is the value's */
    assert_string_equal(cfg.fourlw_whitelist, "=stat");
    assert_null(cfg.sasl_super_user); /* a key alone: the empty value */
    tb_config_free(&cfg);
    unlink(path);
    /* an escaped separator is the key's */
    expect_file_error("tick\\:Time\\ x=1\n",
                      "1: tick:Time x: unknown key, "
                      "neither tumblerd's nor one of ZooKeeper's (see --help)");
}

/* A \u escape is four hex digits, as Java's Properties wants ("Malformed
 * \\uxxxx encoding" otherwise): no blank, sign or 0x taken for them, and
 * a line ending in a short one is refused without reading past it. */
static void test_unicode_escapes(void **state)
{
    char line[128];

    (void)state;
    expect_file_error("a=\\u0x1F\n", "1: a: malformed \\uxxxx escape: \\u "
                                     "needs four hex digits after it");
    expect_file_error("a=\\u 123\n", "1: a: malformed \\uxxxx escape: \\u "
                                     "needs four hex digits after it");
    expect_file_error("a=\\u+123\n", "1: a: malformed \\uxxxx escape: \\u "
                                     "needs four hex digits after it");
    expect_file_error("a=\\u-001\n", "1: a: malformed \\uxxxx escape: \\u "
                                     "needs four hex digits after it");
    expect_file_error("tickTime=2000\nb\\u12=1\n",
                      "2: b\\u12: malformed \\uxxxx escape: \\u needs "
                      "four hex digits after it");
    /* 62 bytes ending in "\u1": the line's buffer is then 64 bytes, and
     * four read after the 'u' would pass its end (an ASan build sees it) */
    snprintf(line, sizeof line, "a=%057d\\u1", 0);
    assert_int_equal(strlen(line), 62);
    expect_file_error(line, "1: a: malformed \\uxxxx escape: \\u needs four "
                            "hex digits after it");
    expect_file_error("a=x\\u1\n", "1: a: malformed \\uxxxx escape: \\u "
                                   "needs four hex digits after it");
    /* a NUL would end the C string: what follows it lost, unsaid */
    expect_file_error("dataDir=/data\\u0000/zk\n",
                      "1: dataDir: \\u0000 (a NUL) cannot be in a key or a "
                      "value");
    expect_file_error("tickTime\\u0000x=5\n",
                      "1: tickTime: \\u0000 (a NUL) cannot be in a key or a "
                      "value");
}

/* The value's blanks go after its escapes are undone, as ZooKeeper trims
 * the value Java's Properties gives: an escaped blank at its end goes too,
 * and does not leave its backslash behind; "\\\\u0000" is a backslash and
 * "u0000". */
static void test_escaped_blank_at_the_end(void **state)
{
    struct tb_config cfg;
    char err[256] = "";
    const char *path = write_cfg("dataDir=/var/zk\\ \n"
                                 "superUser=a\\\\u0000\t \n");

    (void)state;
    tb_config_init(&cfg);
    assert_int_equal(parse(&cfg, err, sizeof err, "-c", path, NULL), 0);
    assert_string_equal(cfg.data_dir, "/var/zk");
    assert_string_equal(cfg.sasl_super_user, "a\\u0000");
    tb_config_free(&cfg);
    unlink(path);
}

/* datadir.autocreate=false, as in ZooKeeper: a dataDir that is not there
 * stops the start (a mistyped one would serve an empty tree); by default,
 * or with it there, nothing changes. */
static void test_datadir_autocreate(void **state)
{
    struct tb_config cfg;
    char err[512] = "", dir[64] = "/tmp/tb_test_dir_XXXXXX", missing[96],
         file[160], flag[sizeof file + 16], want[512];
    const char *path;
    FILE *f;

    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(missing, sizeof missing, "%s/typo", dir);

    tb_config_init(&cfg);
    snprintf(flag, sizeof flag, "--dataDir=%s", missing);
    assert_int_equal(parse(&cfg, err, sizeof err, flag, NULL), 0);
    assert_int_equal(cfg.data_dir_autocreate, 1);
    tb_config_free(&cfg);

    snprintf(want, sizeof want,
             "dataDir %s does not exist and "
             "datadir.autocreate is false: create it first (or set "
             "datadir.autocreate=true)",
             missing);
    expect_args_error(want, flag, "--datadir.autocreate=false", NULL);
    expect_args_error(want, flag, "--zookeeper.datadir.autocreate=false", NULL);
    snprintf(file, sizeof file, "dataDir=%s\ndatadir.autocreate=false\n",
             missing);
    path = write_cfg(file);
    expect_args_error(want, "-c", path, NULL);
    unlink(path);

    /* there: it starts */
    tb_config_init(&cfg);
    snprintf(flag, sizeof flag, "--dataDir=%s", dir);
    assert_int_equal(
        parse(&cfg, err, sizeof err, flag, "--datadir.autocreate=false", NULL),
        0);
    assert_int_equal(cfg.data_dir_autocreate, 0);
    tb_config_free(&cfg);

    /* a file where the directory should be */
    snprintf(file, sizeof file, "%s/file", dir);
    f = fopen(file, "w");
    assert_non_null(f);
    fclose(f);
    snprintf(flag, sizeof flag, "--dataDir=%s", file);
    snprintf(want, sizeof want, "dataDir %s is not a directory", file);
    expect_args_error(want, flag, "--datadir.autocreate=false", NULL);
    unlink(file);
    assert_int_equal(rmdir(dir), 0);
}

/* ZooKeeper 3.8's documented keys that tumblerd does not act on, each
 * accepted (in a file as on the command line) and named with why. */
static void test_zk_keys_not_acted_on(void **state)
{
    static const char *const keys[][2] = {
        {"maxTimeToWaitForEpoch", "2000"},
        {"quorumCnxnTimeoutMs", "-1"},
        {"znode.container.maxNeverUsedIntervalMs", "60000"},
        {"zookeeper.ensembleAuthName", "prod,prod-east"},
        {"zookeeper.db.autocreate", "false"},
        {"db.autocreate", "true"},
        {"quorum.cnxn.threads.size", "20"},
        {"snapshotSizeFactor", "0.33"},
        {"request_throttle_max_requests", "1000"},
        {"zookeeper.request_stale_latency_check", "true"},
        {"throttled_op_wait_time", "5"},
        {"outstandingHandshake.limit", "100"},
        {"oraclePath", "/etc/zk/oracle"},
    };
    struct tb_config cfg;
    char err[256] = "", want[128];
    const char *name;
    size_t i;

    (void)state;
    tb_config_init(&cfg);
    for (i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        assert_true(tb_config_has_key(keys[i][0]));
        assert_int_equal(
            tb_config_set(&cfg, keys[i][0], keys[i][1], NULL, err, sizeof err),
            1);
        name = strncmp(keys[i][0], "zookeeper.", 10) == 0 ? keys[i][0] + 10
                                                          : keys[i][0];
        snprintf(want, sizeof want, "%s (", name);
        assert_non_null(strstr(cfg.ignored, want));
    }
    assert_non_null(strstr(cfg.ignored, "maxTimeToWaitForEpoch (raft's "
                                        "electionTimeout and heartbeatInterval "
                                        "time the ensemble)"));
    assert_non_null(strstr(cfg.ignored, "db.autocreate (a member whose "
                                        "dataDir was emptied votes only once "
                                        "a leader has caught it up)"));
    assert_int_equal(tb_config_finish(&cfg, err, sizeof err), 0);
    tb_config_free(&cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_properties_syntax),
        cmocka_unit_test(test_secrets_not_echoed),
        cmocka_unit_test(test_file_errors),
        cmocka_unit_test(test_properties_separators),
        cmocka_unit_test(test_unicode_escapes),
        cmocka_unit_test(test_escaped_blank_at_the_end),
        cmocka_unit_test(test_datadir_autocreate),
        cmocka_unit_test(test_zk_keys_not_acted_on),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
