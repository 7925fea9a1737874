/* Unit tests for an ensemble's configuration: server.N values and their
 * errors, a member's quorum address, dataDir/myid, this server's id and
 * the checks of the lines together (each error message exactly), and the
 * end of the `conf` text that lists the members. */
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

/* ---- the ensemble: server.N lines and myid ------------------------------ */

/* A fresh directory under /tmp (static buffer), with a myid file holding
 * `myid` unless it is NULL. */
static const char *make_dir(const char *myid)
{
    static char dir[64];
    char path[96];
    FILE *f;

    snprintf(dir, sizeof dir, "/tmp/tb_test_dir_XXXXXX");
    assert_non_null(mkdtemp(dir));
    if (myid != NULL) {
        snprintf(path, sizeof path, "%s/myid", dir);
        f = fopen(path, "w");
        assert_non_null(f);
        assert_int_equal(fputs(myid, f) >= 0, 1);
        assert_int_equal(fclose(f), 0);
    }
    return dir;
}

static void remove_dir(const char *dir)
{
    char path[96];

    snprintf(path, sizeof path, "%s/myid", dir);
    unlink(path);
    assert_int_equal(rmdir(dir), 0);
}

/* Parses one server.N value and checks every field. */
static void expect_server(const char *spec, const char *host, int quorum,
                          int election, enum tb_config_role role,
                          const char *client_addr, int client_port)
{
    struct tb_config_server s;
    char err[256] = "";

    assert_int_equal(
        tb_config_server_parse(&s, 7, spec, "server.7", err, sizeof err), 0);
    assert_string_equal(err, "");
    assert_int_equal(s.id, 7);
    assert_string_equal(s.host, host);
    assert_int_equal(s.quorum_port, quorum);
    assert_int_equal(s.election_port, election);
    assert_int_equal(s.role, role);
    if (client_addr == NULL)
        assert_null(s.client_addr);
    else
        assert_string_equal(s.client_addr, client_addr);
    assert_int_equal(s.client_port, client_port);
    assert_string_equal(s.spec, spec);
    assert_string_equal(s.where, "server.7");
    tb_config_server_free(&s);
}

static void test_server_syntax(void **state)
{
    (void)state;
    expect_server("10.0.0.1:2888:3888", "10.0.0.1", 2888, 3888,
                  TB_ROLE_PARTICIPANT, NULL, 0);
    expect_server("zk1.example.com:2888:3888:participant", "zk1.example.com",
                  2888, 3888, TB_ROLE_PARTICIPANT, NULL, 0);
    expect_server("zk_2-b:1:65535:observer", "zk_2-b", 1, 65535,
                  TB_ROLE_OBSERVER, NULL, 0);
    /* leading zeros, as Java's parseInt reads them (were out of range) */
    expect_server("h:0002888:00000003888", "h", 2888, 3888, TB_ROLE_PARTICIPANT,
                  NULL, 0);
    /* the role in any case, blanks around it, as ZooKeeper trims it */
    expect_server("h:2888:3888: Observer ;2181", "h", 2888, 3888,
                  TB_ROLE_OBSERVER, "0.0.0.0", 2181);
    /* a bare client port listens on every address, as in ZooKeeper */
    expect_server("h:2888:3888;2181", "h", 2888, 3888, TB_ROLE_PARTICIPANT,
                  "0.0.0.0", 2181);
    expect_server("h:2888:3888:observer;127.0.0.1:2182", "h", 2888, 3888,
                  TB_ROLE_OBSERVER, "127.0.0.1", 2182);
    expect_server("h:2888:3888;zk1.example.com:2181", "h", 2888, 3888,
                  TB_ROLE_PARTICIPANT, "zk1.example.com", 2181);
    /* IPv6 in brackets, kept without them */
    expect_server("[::1]:2888:3888", "::1", 2888, 3888, TB_ROLE_PARTICIPANT,
                  NULL, 0);
    expect_server("[fe80::1:2]:2888:3888:participant;[::1]:2181", "fe80::1:2",
                  2888, 3888, TB_ROLE_PARTICIPANT, "::1", 2181);
    /* what Java's split() drops: an empty role, an empty client part */
    expect_server("h:2888:3888:", "h", 2888, 3888, TB_ROLE_PARTICIPANT, NULL,
                  0);
    expect_server("h:2888:3888;", "h", 2888, 3888, TB_ROLE_PARTICIPANT, NULL,
                  0);
}

static void expect_server_error(const char *spec, const char *msg)
{
    struct tb_config_server s;
    char err[512] = "";

    assert_int_equal(
        tb_config_server_parse(&s, 2, spec, "server.2", err, sizeof err),
        TB_EINVAL);
    assert_string_equal(err, msg);
}

#define FORM "host:quorumPort:electionPort[:role][;[clientAddr:]clientPort]"

static void test_server_syntax_errors(void **state)
{
    (void)state;
    expect_server_error("a:2888",
                        "server.2: expected " FORM ", got \"a:2888\"");
    /* every address: none the members can tell each other */
    expect_server_error("0.0.0.0:2888:3888;2181",
                        "server.2: 0.0.0.0 is every address, none the other "
                        "members can reach: give this member's own address or "
                        "host name, as the other members' lines do");
    expect_server_error("[::]:2888:3888",
                        "server.2: :: is every address, none the other "
                        "members can reach: give this member's own address or "
                        "host name, as the other members' lines do");
    expect_server_error("zk1", "server.2: expected " FORM ", got \"zk1\"");
    expect_server_error("a:1:2:participant:x", "server.2: expected " FORM
                                               ", got \"a:1:2:participant:x\"");
    expect_server_error("a:1:2;b:3:4",
                        "server.2: expected " FORM ", got \"a:1:2;b:3:4\"");
    expect_server_error("a:1:2;3;4",
                        "server.2: expected " FORM ", got \"a:1:2;3;4\"");
    expect_server_error("a:1:2;[::1]",
                        "server.2: expected " FORM ", got \"a:1:2;[::1]\"");
    expect_server_error("[::1]2888:3888",
                        "server.2: expected " FORM ", got \"[::1]2888:3888\"");
    expect_server_error("a:70000:3888",
                        "server.2: port 70000 is out of range (1..65535)");
    expect_server_error("a:0:3888",
                        "server.2: port 0 is out of range (1..65535)");
    expect_server_error("a:2888:99999999999999999999",
                        "server.2: port 99999999999999999999 is out of range "
                        "(1..65535)");
    expect_server_error("a:1:2;h:65536",
                        "server.2: port 65536 is out of range (1..65535)");
    expect_server_error("a:-1:2",
                        "server.2: expected a port number, got \"-1\"");
    expect_server_error("a:+1:2",
                        "server.2: expected a port number, got \"+1\"");
    expect_server_error("a: 1:2",
                        "server.2: expected a port number, got \" 1\"");
    expect_server_error("a:1:2;x",
                        "server.2: expected a port number, got \"x\"");
    expect_server_error("a:1:2;h:",
                        "server.2: expected a port number, got \"\"");
    expect_server_error("a:2888:2888", "server.2: the quorum port and the "
                                       "election port are both 2888");
    expect_server_error("a:1:2:voter", "server.2: the role must be "
                                       "participant or observer, got "
                                       "\"voter\"");
    expect_server_error(":1:2", "server.2: \"\" is not a host name or an IP "
                                "address (an IPv6 address goes in "
                                "brackets)");
    expect_server_error("::1:2888:3888",
                        "server.2: \"\" is not a host name or an IP address "
                        "(an IPv6 address goes in brackets)");
    expect_server_error("a b:1:2", "server.2: \"a b\" is not a host name or "
                                   "an IP address (an IPv6 address goes in "
                                   "brackets)");
    expect_server_error("[::1:2888:3888",
                        "server.2: \"[::1:2888:3888\" has '[' but no ']'");
    expect_server_error("[zk1]:1:2", "server.2: [zk1] is not an IPv6 address");
    expect_server_error("a:1:2|b:1:2",
                        "server.2: several addresses (a|b) are not "
                        "supported");
}

static void test_quorum_address(void **state)
{
    struct tb_config_server s;
    char err[128], buf[TB_CONFIG_ADDR_MAX];

    (void)state;
    assert_int_equal(tb_config_server_parse(&s, 1, "[::1]:2888:3888;2181",
                                            "server.1", err, sizeof err),
                     0);
    assert_int_equal(tb_config_quorum_address(&s, buf, sizeof buf), 0);
    assert_string_equal(buf, "[::1]:2888");
    assert_int_equal(tb_config_quorum_address(&s, buf, 11), 0);
    assert_int_equal(tb_config_quorum_address(&s, buf, 10), TB_EINVAL);
    tb_config_server_free(&s);
    assert_int_equal(tb_config_server_parse(&s, 1, "zk1.example.com:2888:3888",
                                            "server.1", err, sizeof err),
                     0);
    assert_int_equal(tb_config_quorum_address(&s, buf, sizeof buf), 0);
    assert_string_equal(buf, "zk1.example.com:2888");
    tb_config_server_free(&s);
}

/* One quorum address however it is written: /zookeeper/config writes
 * IPv6 in full, a reconfig's -members may not. */
static int same_quorum(const char *a, const char *b)
{
    struct tb_config_server x, y;
    char err[128];
    int same;

    assert_int_equal(
        tb_config_server_parse(&x, 1, a, "server.1", err, sizeof err), 0);
    assert_int_equal(
        tb_config_server_parse(&y, 1, b, "server.1", err, sizeof err), 0);
    same = tb_config_same_quorum(&x, &y);
    tb_config_server_free(&x);
    tb_config_server_free(&y);
    return same;
}

static void test_same_quorum(void **state)
{
    (void)state;
    assert_true(same_quorum("[::1]:2888:3888", "[0:0:0:0:0:0:0:1]:2888:3888"));
    assert_true(same_quorum("[2001:db8::1]:2888:3888;2181",
                            "[2001:db8:0:0:0:0:0:1]:2888:3999"));
    assert_true(
        same_quorum("ZK1.example.com:2888:3888", "zk1.example.com:2888:3888"));
    assert_false(same_quorum("[::1]:2888:3888", "[::1]:2889:3888"));
    assert_false(same_quorum("[::1]:2888:3888", "[::2]:2888:3888"));
    assert_false(same_quorum("127.0.0.1:2888:3888", "127.0.0.2:2888:3888"));
}

static void expect_myid(const char *text, int rv, int id, const char *msg)
{
    const char *dir = make_dir(text);
    char err[256] = "", want[256];
    int got = -1;

    assert_int_equal(tb_config_read_myid(dir, &got, err, sizeof err), rv);
    if (rv == 0)
        assert_int_equal(got, id);
    if (msg != NULL) {
        snprintf(want, sizeof want, "%s/myid: %s", dir, msg);
        assert_string_equal(err, want);
    }
    remove_dir(dir);
}

static void test_myid(void **state)
{
    char err[256] = "", path[160];
    const char *dir;
    int id = -1;

    (void)state;
    expect_myid("2\n", 0, 2, NULL);
    expect_myid("254", 0, 254, NULL);
    expect_myid(" \t 17 \r\n", 0, 17, NULL);
    expect_myid("3\nanything after the first line\n", 0, 3, NULL);
    expect_myid("", TB_EINVAL, 0,
                "expected a server id (1..254) alone on its "
                "first line, got \"\"");
    expect_myid("two\n", TB_EINVAL, 0,
                "expected a server id (1..254) alone "
                "on its first line, got \"two\"");
    expect_myid("2 3\n", TB_EINVAL, 0,
                "expected a server id (1..254) alone "
                "on its first line, got \"2 3\"");
    expect_myid("\n2\n", TB_EINVAL, 0,
                "expected a server id (1..254) alone "
                "on its first line, got \"\"");
    expect_myid("0\n", TB_EINVAL, 0, "server id 0 is out of range (1..254)");
    expect_myid("000000000\n", TB_EINVAL, 0,
                "server id 000000000 is out of range (1..254)");
    expect_myid("00000003\n", 0, 3, NULL); /* as Java's parseLong */
    expect_myid("255\n", TB_EINVAL, 0,
                "server id 255 is out of range (1..254)");
    expect_myid("99999999999999999999\n", TB_EINVAL, 0,
                "server id 99999999999999999999 is out of range (1..254)");

    /* no file, or no directory yet: nothing to read, no error */
    dir = make_dir(NULL);
    assert_int_equal(tb_config_read_myid(dir, &id, err, sizeof err), 1);
    snprintf(path, sizeof path, "%s/not/made/yet", dir);
    assert_int_equal(tb_config_read_myid(path, &id, err, sizeof err), 1);
    assert_int_equal(id, -1);
    /* a trailing '/' on dataDir is no "//" in the message */
    snprintf(path, sizeof path, "%s/myid", dir);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/", dir);
    assert_int_equal(tb_config_read_myid(path, &id, err, sizeof err), TB_EIO);
    snprintf(path, sizeof path, "%s/myid: cannot read: Is a directory", dir);
    assert_string_equal(err, path);
    snprintf(path, sizeof path, "%s/myid", dir);
    assert_int_equal(rmdir(path), 0);
    remove_dir(dir);
}

/* Parses the arguments (NULL-terminated) with --dataDir=DIR first. */
static int parse_in(struct tb_config *cfg, const char *dir, char *err,
                    size_t errlen, ...)
{
    char *argv[32], data_dir[96];
    va_list ap;
    int argc = 0;

    snprintf(data_dir, sizeof data_dir, "--dataDir=%s", dir);
    argv[argc++] = "tumblerd";
    argv[argc++] = data_dir;
    va_start(ap, errlen);
    while ((argv[argc] = va_arg(ap, char *)) != NULL)
        argc++;
    va_end(ap);
    return tb_config_parse_args(cfg, argc, argv, err, errlen);
}

#define S1 "--server.1=127.0.0.1:2881:3881"
#define S2 "--server.2=127.0.0.1:2882:3882"
#define S3 "--server.3=127.0.0.1:2883:3883"

static void test_standalone_unchanged(void **state)
{
    struct tb_config cfg;
    char err[256] = "";
    const char *dir;

    (void)state;
    /* no lines, no myid, a data directory not made yet: server 1, alone */
    tb_config_init(&cfg);
    assert_int_equal(
        parse_in(&cfg, "/tmp/tb_test_no_such_dir/data", err, sizeof err, NULL),
        0);
    assert_int_equal(cfg.server_id, 1);
    assert_int_equal(tb_config_ensemble(&cfg), 0);
    assert_null(tb_config_self(&cfg));
    assert_int_equal(cfg.client_port, 2181);
    assert_string_equal(cfg.client_port_address, "127.0.0.1");
    tb_config_free(&cfg);

    /* serverId alone */
    tb_config_init(&cfg);
    assert_int_equal(parse_in(&cfg, "/tmp/tb_test_no_such_dir", err, sizeof err,
                              "--serverId=9", NULL),
                     0);
    assert_int_equal(cfg.server_id, 9);
    tb_config_free(&cfg);

    /* a myid present gives the id, alone or with a serverId that agrees */
    dir = make_dir("5\n");
    tb_config_init(&cfg);
    assert_int_equal(parse_in(&cfg, dir, err, sizeof err, NULL), 0);
    assert_int_equal(cfg.server_id, 5);
    assert_int_equal(tb_config_ensemble(&cfg), 0);
    tb_config_free(&cfg);
    tb_config_init(&cfg);
    assert_int_equal(parse_in(&cfg, dir, err, sizeof err, "--serverId=5", NULL),
                     0);
    assert_int_equal(cfg.server_id, 5);
    tb_config_free(&cfg);
    remove_dir(dir);
}

static void test_ensemble(void **state)
{
    const struct tb_config_server *self;
    struct tb_config cfg;
    char err[512] = "", addr[TB_CONFIG_ADDR_MAX];
    const char *dir = make_dir(" 2\n"), *path;

    (void)state;
    /* out of order in the file: sorted by id; the id from myid */
    path = write_cfg("server.3=127.0.0.1:2883:3883:observer\n"
                     "server.1=127.0.0.1:2881:3881\n"
                     "server.2=localhost:2882:3882\n");
    tb_config_init(&cfg);
    assert_int_equal(parse_in(&cfg, dir, err, sizeof err, "-c", path, NULL), 0);
    assert_string_equal(err, "");
    assert_int_equal(tb_config_ensemble(&cfg), 1);
    assert_int_equal(cfg.server_id, 2);
    assert_int_equal(cfg.nservers, 3);
    assert_int_equal(cfg.servers[0].id, 1);
    assert_int_equal(cfg.servers[0].line, 2);
    assert_int_equal(cfg.servers[1].id, 2);
    assert_int_equal(cfg.servers[2].id, 3);
    assert_int_equal(cfg.servers[2].role, TB_ROLE_OBSERVER);
    self = tb_config_self(&cfg);
    assert_ptr_equal(self, &cfg.servers[1]);
    assert_int_equal(tb_config_quorum_address(self, addr, sizeof addr), 0);
    assert_string_equal(addr, "localhost:2882");
    /* no client part, no clientPortAddress: clientPort on every address,
     * as ZooKeeper's members listen */
    assert_int_equal(cfg.client_port, 2181);
    assert_string_equal(cfg.client_port_address, "0.0.0.0");
    tb_config_free(&cfg);

    /* a command-line line overrides the file's; the command line's
     * serverId agrees with myid */
    tb_config_init(&cfg);
    assert_int_equal(parse_in(&cfg, dir, err, sizeof err, "-c", path,
                              "--serverId=2", "--server.3=127.0.0.1:2883:3883",
                              NULL),
                     0);
    assert_int_equal(cfg.servers[2].role, TB_ROLE_PARTICIPANT);
    assert_int_equal(cfg.servers[2].line, 0);
    assert_string_equal(cfg.servers[2].where, "--server.3");
    tb_config_free(&cfg);
    unlink(path);

    /* this server's client part is where it listens: a bare port on every
     * address, and a wildcard clientPortAddress allows a narrower one */
    tb_config_init(&cfg);
    assert_int_equal(parse_in(&cfg, dir, err, sizeof err, S1,
                              "--server.2=127.0.0.1:2882:3882;3002", NULL),
                     0);
    assert_int_equal(cfg.client_port, 3002);
    assert_string_equal(cfg.client_port_address, "0.0.0.0");
    tb_config_free(&cfg);
    tb_config_init(&cfg);
    assert_int_equal(
        parse_in(&cfg, dir, err, sizeof err, S1, "--clientPort=3002",
                 "--clientPortAddress=0.0.0.0",
                 "--server.2=127.0.0.1:2882:3882;localhost:3002", NULL),
        0);
    assert_int_equal(cfg.client_port, 3002);
    assert_string_equal(cfg.client_port_address, "127.0.0.1");
    tb_config_free(&cfg);

    /* an observer may be this server when a participant votes */
    tb_config_init(&cfg);
    assert_int_equal(parse_in(&cfg, dir, err, sizeof err, S1,
                              "--server.2=127.0.0.1:2882:3882:observer", NULL),
                     0);
    assert_int_equal(tb_config_self(&cfg)->role, TB_ROLE_OBSERVER);
    tb_config_free(&cfg);

    /* one line is an ensemble of one, still named by myid */
    tb_config_init(&cfg);
    assert_int_equal(parse_in(&cfg, dir, err, sizeof err,
                              "--server.2=127.0.0.1:2882:3882", NULL),
                     0);
    assert_int_equal(tb_config_ensemble(&cfg), 1);
    tb_config_free(&cfg);
    remove_dir(dir);
}

/* An old-style ensemble (clientPort beside server.N lines without a client
 * part) serves clients on every address, as ZooKeeper's does, unless
 * clientPortAddress says where; a standalone server keeps 127.0.0.1. */
static void test_client_address_old_style(void **state)
{
    struct tb_config cfg;
    char err[512] = "";
    const char *dir = make_dir("1\n"), *path;

    (void)state;
    path = write_cfg("tickTime=2000\n"
                     "clientPort=2181\n"
                     "initLimit=10\n"
                     "syncLimit=5\n"
                     "server.1=10.0.0.1:2888:3888\n"
                     "server.2=10.0.0.2:2888:3888\n"
                     "server.3=10.0.0.3:2888:3888\n");
    tb_config_init(&cfg);
    assert_int_equal(parse_in(&cfg, dir, err, sizeof err, "-c", path, NULL), 0);
    assert_string_equal(err, "");
    assert_int_equal(cfg.server_id, 1);
    assert_int_equal(cfg.client_port, 2181);
    assert_string_equal(cfg.client_port_address, "0.0.0.0");
    tb_config_free(&cfg);

    /* written down, it is where the member listens */
    tb_config_init(&cfg);
    assert_int_equal(parse_in(&cfg, dir, err, sizeof err, "-c", path,
                              "--clientPortAddress=10.0.0.1", NULL),
                     0);
    assert_string_equal(cfg.client_port_address, "10.0.0.1");
    tb_config_free(&cfg);
    tb_config_init(&cfg);
    assert_int_equal(parse_in(&cfg, dir, err, sizeof err, "-c", path,
                              "--clientPortAddress=127.0.0.1", NULL),
                     0);
    assert_string_equal(cfg.client_port_address, "127.0.0.1");
    tb_config_free(&cfg);
    unlink(path);

    /* and the TLS port, unset, follows the client port's address */
    tb_config_init(&cfg);
    assert_int_equal(
        parse_in(&cfg, dir, err, sizeof err, "--server.1=10.0.0.1:2888:3888",
                 "--server.2=10.0.0.2:2888:3888", "--secureClientPort=2281",
                 "--ssl.keyStore.location=k.p12",
                 "--ssl.trustStore.location=ca.pem", NULL),
        0);
    assert_string_equal(cfg.tls.address, "0.0.0.0");
    tb_config_free(&cfg);

    /* standalone: the safe default */
    path = write_cfg("tickTime=2000\nclientPort=2181\n");
    tb_config_init(&cfg);
    assert_int_equal(parse_in(&cfg, dir, err, sizeof err, "-c", path, NULL), 0);
    assert_int_equal(tb_config_ensemble(&cfg), 0);
    assert_string_equal(cfg.client_port_address, "127.0.0.1");
    tb_config_free(&cfg);
    unlink(path);
    remove_dir(dir);
}

/* `msg` with each "<DIR>" replaced by `dir` (mkdtemp's names hold no
 * '<'). */
static void subst_dir(char *out, size_t cap, const char *msg, const char *dir)
{
    const char *p;
    size_t n = 0;

    while ((p = strstr(msg, "<DIR>")) != NULL) {
        n += (size_t)snprintf(out + n, cap - n, "%.*s%s", (int)(p - msg), msg,
                              dir);
        msg = p + 5;
        assert_true(n < cap);
    }
    snprintf(out + n, cap - n, "%s", msg);
}

/* Expects parse_in(dir, args...) to fail with `msg`, <DIR> in it standing
 * for `dir`. */
static void expect_ensemble_error(const char *dir, const char *msg, ...)
{
    struct tb_config cfg;
    char *argv[16], err[512] = "", want[512], data_dir[96];
    va_list ap;
    int argc = 0;

    snprintf(data_dir, sizeof data_dir, "--dataDir=%s", dir);
    argv[argc++] = "tumblerd";
    argv[argc++] = data_dir;
    va_start(ap, msg);
    while ((argv[argc] = va_arg(ap, char *)) != NULL)
        argc++;
    va_end(ap);
    tb_config_init(&cfg);
    assert_int_equal(tb_config_parse_args(&cfg, argc, argv, err, sizeof err),
                     TB_EINVAL);
    subst_dir(want, sizeof want, msg, dir);
    assert_string_equal(err, want);
    tb_config_free(&cfg);
}

static void test_ensemble_errors(void **state)
{
    const char *none = make_dir(NULL), *path;
    char empty[64], two[64], want[512];

    (void)state;
    snprintf(empty, sizeof empty, "%s", none);
    snprintf(two, sizeof two, "%s", make_dir("2\n"));

    /* which server is this one? */
    expect_ensemble_error(empty,
                          "no myid in <DIR> and no serverId: which "
                          "server.N is this one?",
                          S1, S2, S3, NULL);
    expect_ensemble_error(empty,
                          "serverId 4 is not among server.1, "
                          "server.2, server.3 (from --serverId)",
                          S3, S1, S2, "--serverId=4", NULL);
    remove_dir(two);
    snprintf(two, sizeof two, "%s", make_dir("4\n"));
    expect_ensemble_error(two,
                          "serverId 4 is not among server.1, server.2, "
                          "server.3 (from myid in <DIR>)",
                          S1, S2, S3, NULL);
    expect_ensemble_error(two,
                          "--serverId: 3 disagrees with myid in <DIR>, "
                          "which says 4",
                          S1, S2, S3, "--serverId=3", NULL);
    /* a standalone server too: two ids that disagree */
    expect_ensemble_error(two,
                          "--serverId: 1 disagrees with myid in <DIR>, "
                          "which says 4",
                          "--serverId=1", NULL);
    path = write_cfg("serverId=4\nserver.1=10.0.0.1:2888:3888\n");
    snprintf(want, sizeof want,
             "serverId 4 is not among server.1 (from "
             "%s:1: serverId)",
             path);
    expect_ensemble_error(empty, want, "-c", path, NULL);
    unlink(path);

    /* the same id twice: in the file, on the command line */
    path = write_cfg("server.1=10.0.0.1:2888:3888\n"
                     "server.2=10.0.0.2:2888:3888\n"
                     "server.1=10.0.0.3:2888:3888\n");
    snprintf(want, sizeof want,
             "%s:3: server.1: given twice, first on line "
             "1",
             path);
    expect_ensemble_error(two, want, "-c", path, NULL);
    unlink(path);
    expect_ensemble_error(two, "--server.1: given twice", S1, S1, NULL);

    /* the same quorum address twice, however written */
    expect_ensemble_error(two,
                          "--server.2: 127.0.0.1:2881 is server.1's "
                          "quorum address too",
                          S1, "--server.2=127.0.0.1:2881:3882", NULL);
    expect_ensemble_error(two,
                          "--server.4: localhost:2881 is server.1's "
                          "quorum address too",
                          S1, "--server.4=localhost:2881:3884", NULL);
    expect_ensemble_error(two,
                          "--server.4: [0:0::1]:2888 is server.3's "
                          "quorum address too",
                          "--server.3=[::1]:2888:3883",
                          "--server.4=[0:0::1]:2888:3884", NULL);
    expect_ensemble_error(two,
                          "--server.4: [::ffff:127.0.0.1]:2881 is server.1's "
                          "quorum address too",
                          S1, "--server.4=[::ffff:127.0.0.1]:2881:3884", NULL);
    expect_ensemble_error(two,
                          "--server.4: ZK1:2888 is server.1's quorum "
                          "address too",
                          "--server.1=zk1:2888:3881",
                          "--server.4=ZK1:2888:3884", NULL);

    /* any address of a member another's, or another of its own, as a
     * reconfig checks them: before, quorum against quorum only, and
     * servers 1 and 2 started and took writes that server 3, refused at
     * its start, could never join */
    expect_ensemble_error(two,
                          "--server.4: 127.0.0.1:3881 is server.1's "
                          "election address too",
                          S1, "--server.4=127.0.0.1:3881:3884", NULL);

    /* raft needs a voter */
    expect_ensemble_error(two,
                          "every server.N line is an observer: raft "
                          "needs at least one participant to vote",
                          "--server.1=127.0.0.1:2881:3881:observer",
                          "--server.4=127.0.0.1:2884:3884:observer", NULL);

    /* this server's ports */
    expect_ensemble_error(two,
                          "--server.4: the quorum port 2181 is also this "
                          "server's clientPort",
                          S1, "--server.4=127.0.0.1:2181:3884", NULL);
    expect_ensemble_error(two,
                          "--server.4: the election port 2181 is also this "
                          "server's clientPort",
                          S1, "--server.4=127.0.0.1:2884:2181", NULL);
    expect_ensemble_error(two,
                          "--server.4: the election port 8080 is also this "
                          "server's admin.serverPort",
                          S1, "--server.4=127.0.0.1:2884:8080",
                          "--admin.enableServer=true", NULL);
    expect_ensemble_error(two,
                          "--server.4: the quorum port 3004 is also this "
                          "server's clientPort",
                          S1, "--server.4=127.0.0.1:3004:3884;3004", NULL);
    expect_ensemble_error(two,
                          "--server.4: the quorum port 2281 is also this "
                          "server's secureClientPort",
                          S1, "--server.4=127.0.0.1:2281:3884",
                          "--secureClientPort=2281",
                          "--ssl.keyStore.location=k.p12",
                          "--ssl.trustStore.location=ca.pem", NULL);
    expect_ensemble_error(two,
                          "--server.4: client port 3004 differs from "
                          "clientPort 3005 (the command line)",
                          S1, "--clientPort=3005",
                          "--server.4=127.0.0.1:2884:3884;3004", NULL);
    expect_ensemble_error(two,
                          "--server.4: client address 127.0.0.2 differs "
                          "from clientPortAddress 127.0.0.1 (the "
                          "command line)",
                          S1, "--clientPortAddress=127.0.0.1",
                          "--server.4=127.0.0.1:2884:3884;127.0.0.2:2181",
                          NULL);
    expect_ensemble_error(
        two,
        "--server.4: the client address "
        "\"zk4.example.com\" must be an IP address: "
        "this server listens on it",
        S1, "--server.4=127.0.0.1:2884:3884;zk4.example.com:2181", NULL);
    /* a bad line is blamed on its line, at once */
    path = write_cfg("tickTime=2000\nserver.1=10.0.0.1:70000:3888\n");
    snprintf(want, sizeof want,
             "%s:2: server.1: port 70000 is out of range "
             "(1..65535)",
             path);
    expect_ensemble_error(two, want, "-c", path, NULL);
    unlink(path);
    remove_dir(two);
    remove_dir(empty);
}

/* The TLS port's address, unset, is the client port's as the server line
 * gives it, not the default clientPortAddress before the line was read. */
static void test_tls_address_from_server_line(void **state)
{
    struct tb_config cfg;
    char err[256] = "";
    const char *dir = make_dir(NULL);

    (void)state;
    tb_config_init(&cfg);
    assert_int_equal(parse_in(&cfg, dir, err, sizeof err, "--serverId=1",
                              "--server.1=127.0.0.1:2881:3881;0.0.0.0:2181",
                              "--server.2=127.0.0.1:2882:3882;2182",
                              "--secureClientPort=2281",
                              "--ssl.keyStore.location=k.p12",
                              "--ssl.trustStore.location=ca.pem", NULL),
                     0);
    assert_string_equal(cfg.client_port_address, "0.0.0.0");
    assert_int_equal(cfg.client_port, 2181);
    assert_string_equal(cfg.tls.address, "0.0.0.0");
    tb_config_free(&cfg);
    /* no client port on the line nor clientPort: the TLS port alone */
    tb_config_init(&cfg);
    assert_int_equal(parse_in(&cfg, dir, err, sizeof err, "--serverId=1",
                              "--server.1=127.0.0.1:2881:3881",
                              "--server.2=127.0.0.1:2882:3882;2182",
                              "--secureClientPort=2281",
                              "--ssl.keyStore.location=k.p12",
                              "--ssl.trustStore.location=ca.pem", NULL),
                     0);
    assert_int_equal(cfg.client_port, -1);
    tb_config_free(&cfg);
    /* clientPort=0 is ZooKeeper's "not set": the line's port, with TLS or
     * without */
    tb_config_init(&cfg);
    assert_int_equal(parse_in(&cfg, dir, err, sizeof err, "--serverId=1",
                              "--server.1=127.0.0.1:2881:3881;2181",
                              "--server.2=127.0.0.1:2882:3882;2182",
                              "--clientPort=0", "--secureClientPort=2281",
                              "--ssl.keyStore.location=k.p12",
                              "--ssl.trustStore.location=ca.pem", NULL),
                     0);
    assert_int_equal(cfg.client_port, 2181);
    tb_config_free(&cfg);
    tb_config_init(&cfg);
    assert_int_equal(parse_in(&cfg, dir, err, sizeof err, "--serverId=1",
                              "--server.1=127.0.0.1:2881:3881;2181",
                              "--server.2=127.0.0.1:2882:3882;2182",
                              "--clientPort=0", NULL),
                     0);
    assert_int_equal(cfg.client_port, 2181);
    tb_config_free(&cfg);
    remove_dir(dir);
}

static void test_render_conf_ensemble(void **state)
{
    struct tb_config cfg;
    struct tb_wbuf b;
    char err[256] = "", want[1024];
    const char *dir = make_dir(NULL);

    (void)state;
    tb_config_init(&cfg);
    assert_int_equal(
        parse_in(&cfg, dir, err, sizeof err, "--serverId=3",
                 "--server.3=[::1]:2883:3883:observer;[::1]:2183",
                 "--server.1=127.0.0.1:2881:3881",
                 "--server.2=zk2.example.com:2882:3882:participant;2182",
                 "--server.4=[fe80::a:b]:2884:3884", NULL),
        0);
    tb_wbuf_init(&b);
    tb_config_render_conf(&cfg, NULL, 0, 0, &b);
    tb_wbuf_put(&b, "", 1);
    snprintf(want, sizeof want,
             "clientPort=2183\n"
             "secureClientPort=-1\n"
             "dataDir=%s\n"
             "dataDirSize=0\n"
             "dataLogDir=%s\n"
             "dataLogSize=0\n"
             "tickTime=2000\n"
             "maxClientCnxns=60\n"
             "minSessionTimeout=4000\n"
             "maxSessionTimeout=40000\n"
             "clientPortListenBacklog=-1\n"
             "serverId=3\n"
             "electionPort=3883\n"
             "quorumPort=2883\n"
             "peerType=1\n"
             "membership: \n"
             "server.1=127.0.0.1:2881:3881:participant\n"
             "server.2=zk2.example.com:2882:3882:participant;0.0.0.0:2182\n"
             "server.3=[0:0:0:0:0:0:0:1]:2883:3883:observer;"
             "[0:0:0:0:0:0:0:1]:2183\n"
             "server.4=[fe80:0:0:0:0:0:a:b]:2884:3884:participant\n"
             "version=0",
             dir, dir);
    assert_string_equal((char *)b.base, want);
    /* After reconfigs: the members applied, this one a participant now,
     * with the version they carry; then removed, its own line's ports. */
    {
        struct tb_config_server now[2] = {cfg.servers[1], cfg.servers[2]};
        struct tb_config_members m = {now, 2, 0x100000004};

        now[1].role = TB_ROLE_PARTICIPANT;
        now[1].quorum_port = 2993;
        b.len = 0;
        tb_config_render_conf(&cfg, &m, 0, 0, &b);
        tb_wbuf_put(&b, "", 1);
        assert_non_null(strstr((char *)b.base,
                               "serverId=3\n"
                               "electionPort=3883\n"
                               "quorumPort=2993\n"
                               "peerType=0\n"
                               "membership: \n"
                               "server.2=zk2.example.com:2882:3882:"
                               "participant;0.0.0.0:2182\n"
                               "server.3=[0:0:0:0:0:0:0:1]:2993:3883:"
                               "participant;[0:0:0:0:0:0:0:1]:2183\n"
                               "version=100000004"));
        m.v = cfg.servers;
        m.n = 2;
        b.len = 0;
        tb_config_render_conf(&cfg, &m, 0, 0, &b);
        tb_wbuf_put(&b, "", 1);
        assert_non_null(strstr((char *)b.base, "quorumPort=2883\n"
                                               "peerType=1\n"
                                               "membership: \n"
                                               "server.1="));
    }
    tb_wbuf_free(&b);
    tb_config_free(&cfg);
    remove_dir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_syntax),
        cmocka_unit_test(test_server_syntax_errors),
        cmocka_unit_test(test_quorum_address),
        cmocka_unit_test(test_same_quorum),
        cmocka_unit_test(test_myid),
        cmocka_unit_test(test_standalone_unchanged),
        cmocka_unit_test(test_ensemble),
        cmocka_unit_test(test_ensemble_errors),
        cmocka_unit_test(test_render_conf_ensemble),
        cmocka_unit_test(test_tls_address_from_server_line),
        cmocka_unit_test(test_client_address_old_style),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
