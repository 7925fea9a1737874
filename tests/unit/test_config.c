/* Unit tests for the configuration (defaults, zoo.cfg files, command-line
 * overrides, error messages naming file:line), the `conf` text and the
 * server's logger. */
#include <fcntl.h>
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
#include "server/config/fourlw.h"
#include "server/config/log.h"

/* ---- helpers ------------------------------------------------------------ */

/* A temporary zoo.cfg holding `text`; returns its path (static buffer). */
static const char *write_cfg(const char *text)
{
    static char path[64];
    int fd;

    snprintf(path, sizeof path, "/tmp/tb_test_cfg_XXXXXX");
    fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

/* Captures what the logger writes while a test runs. */
struct capture {
    int fd;
    char path[64];
};

static void capture_start(struct capture *c)
{
    snprintf(c->path, sizeof c->path, "/tmp/tb_test_log_XXXXXX");
    c->fd = mkstemp(c->path);
    assert_true(c->fd >= 0);
    tb_log_set_fd(c->fd);
}

/* Returns what was logged (free() it) and restores stderr. */
static char *capture_end(struct capture *c)
{
    off_t n = lseek(c->fd, 0, SEEK_END);
    char *text = calloc(1, (size_t)n + 1);

    assert_non_null(text);
    assert_int_equal(pread(c->fd, text, (size_t)n, 0), (ssize_t)n);
    tb_log_set_fd(2);
    close(c->fd);
    unlink(c->path);
    return text;
}

static int parse(struct tb_config *cfg, char *err, size_t errlen, ...)
{
    char *argv[32];
    va_list ap;
    int argc = 0;

    argv[argc++] = "tumblerd";
    va_start(ap, errlen);
    while ((argv[argc] = va_arg(ap, char *)) != NULL)
        argc++;
    va_end(ap);
    return tb_config_parse_args(cfg, argc, argv, err, errlen);
}

/* ---- defaults ----------------------------------------------------------- */

static void test_defaults(void **state)
{
    struct tb_config cfg;
    char err[256] = "";

    (void)state;
    tb_config_init(&cfg);
    assert_int_equal(parse(&cfg, err, sizeof err, NULL), TB_CONFIG_RUN);
    assert_int_equal(cfg.tick_time, 2000);
    assert_string_equal(cfg.data_dir, "./data");
    assert_int_equal(cfg.client_port, 2181);
    assert_string_equal(cfg.client_port_address, "127.0.0.1");
    assert_int_equal(cfg.client_port_listen_backlog, -1);
    assert_int_equal(cfg.max_client_cnxns, 60);
    assert_int_equal(cfg.min_session_timeout, 4000);
    assert_int_equal(cfg.max_session_timeout, 40000);
    assert_string_equal(cfg.fourlw_whitelist, "srvr");
    assert_int_equal(cfg.fourlw_allowed, FOURLW_BIT(FOURLW_SRVR));
    assert_int_equal(cfg.jute_maxbuffer, 1048575);
    assert_int_equal(cfg.max_outstanding, 1000);
    assert_int_equal(cfg.snap_count, 0);
    assert_int_equal(cfg.extended_types_enabled, 1);
    assert_int_equal(cfg.enforce_quota, 0);
    assert_int_equal(cfg.container_check_interval_ms, 60000);
    assert_int_equal(cfg.container_max_per_minute, 10000);
    assert_null(cfg.super_digest);
    assert_null(cfg.jaas_file);
    assert_string_equal(cfg.jaas_section, "Server");
    assert_null(cfg.sasl_super_user);
    assert_int_equal(cfg.sasl_acls, 0);
    assert_int_equal(cfg.server_id, 1);
    assert_int_equal(cfg.min_free_disk_bytes, 64 * 1024 * 1024);
    assert_int_equal(cfg.log_level, TB_LOG_INFO);
    assert_int_equal(cfg.nservers, 0);
    assert_null(cfg.config_file);
    tb_config_free(&cfg);
}

static void test_timeouts_follow_tick(void **state)
{
    struct tb_config cfg;
    char err[256] = "";

    (void)state;
    tb_config_init(&cfg);
    assert_int_equal(parse(&cfg, err, sizeof err, "--tickTime=3000", NULL), 0);
    assert_int_equal(cfg.min_session_timeout, 6000);
    assert_int_equal(cfg.max_session_timeout, 60000);
    tb_config_free(&cfg);

    /* only max set: min still follows tickTime; -1 means "derive" */
    tb_config_init(&cfg);
    assert_int_equal(parse(&cfg, err, sizeof err, "--tickTime=500",
                           "--maxSessionTimeout=9000",
                           "--minSessionTimeout=-1", NULL), 0);
    assert_int_equal(cfg.min_session_timeout, 1000);
    assert_int_equal(cfg.max_session_timeout, 9000);
    tb_config_free(&cfg);
}

static void test_session_timeout_clamp(void **state)
{
    struct tb_config cfg;
    char err[256];

    (void)state;
    tb_config_init(&cfg);
    assert_int_equal(tb_config_finish(&cfg, err, sizeof err), 0);
    /* the doc's wire table for tickTime=2000 */
    assert_int_equal(tb_config_session_timeout(&cfg, 1000), 4000);
    assert_int_equal(tb_config_session_timeout(&cfg, 0), 4000);
    assert_int_equal(tb_config_session_timeout(&cfg, -5), 4000);
    assert_int_equal(tb_config_session_timeout(&cfg, 10000), 10000);
    assert_int_equal(tb_config_session_timeout(&cfg, 100000), 40000);
    tb_config_free(&cfg);
}

/* ---- files -------------------------------------------------------------- */

static void test_file(void **state)
{
    struct tb_config cfg;
    struct capture cap;
    char err[256] = "", *logged;
    const char *path = write_cfg(
        "# a ZooKeeper sample\n"
        "tickTime=2500\n"
        "   initLimit=10\n"
        "syncLimit = 5\n"
        "\n"
        "! properties comment\n"
        "dataDir = /var/lib/tumbler  \n"
        "clientPort=2999\r\n"
        "clientPortAddress=0.0.0.0\n"
        "maxClientCnxns=0\n"
        "4lw.commands.whitelist = stat, ruok ,, mntr\n"
        "zookeeper.extendedTypesEnabled=false\n"
        "zookeeper.enforceQuota=true\n"
        "znode.container.checkIntervalMs=100\n"
        "DigestAuthenticationProvider.superDigest="
        "super:D/InIHSb7yEEbrWz8b9l71RjZJU=\n"
        "jute.maxbuffer=4096\n"
        "globalOutstandingLimit=7\n"
        "serverId=3\n"
        "minFreeDiskBytes=0\n"
        "logLevel=DEBUG\n"
        "server.1=10.0.0.1:2888:3888\n"
        "server.2=10.0.0.2:2888:3888\n"
        "server.3=10.0.0.9:2888:3888;2999\n"
        "tickTime=2000\n"
        "someNewKey=1\n");

    (void)state;
    tb_config_init(&cfg);
    tb_log_set_level(TB_LOG_DEBUG);
    capture_start(&cap);
    assert_int_equal(parse(&cfg, err, sizeof err, "-c", path, NULL), 0);
    logged = capture_end(&cap);
    tb_log_set_level(TB_LOG_INFO);
    assert_string_equal(err, "");

    assert_int_equal(cfg.tick_time, 2000); /* the last line wins */
    assert_int_equal(cfg.min_session_timeout, 4000);
    assert_string_equal(cfg.data_dir, "/var/lib/tumbler");
    assert_int_equal(cfg.client_port, 2999);
    assert_string_equal(cfg.client_port_address, "0.0.0.0");
    assert_int_equal(cfg.max_client_cnxns, 0);
    assert_int_equal(cfg.fourlw_allowed,
                     FOURLW_BIT(FOURLW_SRVR) | FOURLW_BIT(FOURLW_STAT) |
                         FOURLW_BIT(FOURLW_RUOK) | FOURLW_BIT(FOURLW_MNTR));
    assert_int_equal(cfg.extended_types_enabled, 0);
    assert_int_equal(cfg.enforce_quota, 1);
    assert_int_equal(cfg.container_check_interval_ms, 100);
    assert_string_equal(cfg.super_digest, "super:D/InIHSb7yEEbrWz8b9l71RjZJU=");
    assert_int_equal(cfg.jute_maxbuffer, 4096);
    assert_int_equal(cfg.max_outstanding, 7);
    assert_int_equal(cfg.server_id, 3);
    assert_int_equal(cfg.min_free_disk_bytes, 0);
    assert_int_equal(cfg.log_level, TB_LOG_DEBUG);
    assert_int_equal(cfg.nservers, 3);
    assert_int_equal(cfg.servers[0].id, 1);
    assert_string_equal(cfg.servers[2].spec, "10.0.0.9:2888:3888;2999");
    assert_int_equal(cfg.servers[1].id, 2);
    assert_string_equal(cfg.config_file, path);

    /* the unknown key is warned about with its line; quorum keys are only
     * mentioned at debug level */
    assert_non_null(strstr(logged, ":25: someNewKey: unknown or unsupported"));
    assert_non_null(strstr(logged, " WARN  /tmp/"));
    assert_non_null(strstr(logged, ":3: initLimit: a ZooKeeper quorum "
                                   "setting; ignored"));
    assert_non_null(strstr(logged, " DEBUG /tmp/"));
    {
        /* exactly one warning: the unknown key */
        const char *w = strstr(logged, " WARN ");
        assert_null(strstr(w + 1, " WARN "));
    }
    free(logged);
    tb_config_free(&cfg);
    unlink(path);
}

static void test_overrides_after_file(void **state)
{
    struct tb_config cfg;
    char err[256] = "";
    const char *path = write_cfg("tickTime=3000\nclientPort=3000\n"
                                 "dataDir=/from/file\n");

    (void)state;
    tb_config_init(&cfg);
    /* an override before -c still applies after the file */
    assert_int_equal(parse(&cfg, err, sizeof err, "--clientPort=0",
                           "--config", path, "--dataDir=/from/args",
                           "--zookeeper.4lw.commands.whitelist=*", NULL), 0);
    assert_int_equal(cfg.tick_time, 3000);
    assert_int_equal(cfg.client_port, 0);
    assert_string_equal(cfg.data_dir, "/from/args");
    assert_int_equal(cfg.fourlw_allowed, FOURLW_ALL);
    tb_config_free(&cfg);

    /* --config=FILE and a bare FILE are the same */
    tb_config_init(&cfg);
    assert_int_equal(parse(&cfg, err, sizeof err, path, NULL), 0);
    assert_int_equal(cfg.client_port, 3000);
    tb_config_free(&cfg);
    tb_config_init(&cfg);
    {
        char arg[128];
        snprintf(arg, sizeof arg, "--config=%s", path);
        assert_int_equal(parse(&cfg, err, sizeof err, arg, NULL), 0);
    }
    assert_int_equal(cfg.client_port, 3000);
    tb_config_free(&cfg);
    unlink(path);
}

/* ---- errors ------------------------------------------------------------- */

/* Loads `text` as a file and expects failure with `msg` after "PATH:". */
static void expect_file_error(const char *text, const char *msg)
{
    struct tb_config cfg;
    char err[512] = "", want[512];
    const char *path = write_cfg(text);

    tb_config_init(&cfg);
    assert_int_equal(parse(&cfg, err, sizeof err, "-c", path, NULL),
                     TB_EINVAL);
    snprintf(want, sizeof want, "%s:%s", path, msg);
    assert_string_equal(err, want);
    tb_config_free(&cfg);
    unlink(path);
}

static void test_file_errors(void **state)
{
    (void)state;
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
    expect_file_error("a\nfoo\n", "1: expected key=value, got \"a\"");
    expect_file_error("=5\n", "1: expected key=value, got \"=5\"");
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
                      "super:D/InIHSb7yEEbrWz8b9l71RjZJU=, got \"super:pw\"");
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

static void expect_args_error(const char *msg, ...)
{
    struct tb_config cfg;
    char *argv[16], err[512] = "";
    va_list ap;
    int argc = 0;

    argv[argc++] = "tumblerd";
    va_start(ap, msg);
    while ((argv[argc] = va_arg(ap, char *)) != NULL)
        argc++;
    va_end(ap);
    tb_config_init(&cfg);
    assert_true(tb_config_parse_args(&cfg, argc, argv, err, sizeof err) < 0);
    assert_string_equal(err, msg);
    tb_config_free(&cfg);
}

static void test_args_errors(void **state)
{
    (void)state;
    expect_args_error("--tickTime: expected an integer, got \"fast\"",
                      "--tickTime=fast", NULL);
    expect_args_error("--tikTime: unknown key (see --help)", "--tikTime=1",
                      NULL);
    /* a quorum key is fine in a file but not worth typing on a command line */
    expect_args_error("--initLimit: unknown key (see --help)",
                      "--initLimit=5", NULL);
    expect_args_error("--tickTime: unknown option; expected --key=value "
                      "(see --help)", "--tickTime", "2000", NULL);
    expect_args_error("-x: unknown option; expected --key=value (see --help)",
                      "-x", NULL);
    expect_args_error("-c: expected a file name", "-c", NULL);
    expect_args_error("two configuration files: \"a.cfg\" and \"b.cfg\"",
                      "a.cfg", "-c", "b.cfg", NULL);
    expect_args_error("/nonexistent/zoo.cfg: cannot read: No such file or "
                      "directory", "-c", "/nonexistent/zoo.cfg", NULL);
    expect_args_error("/ is a directory, not a zoo.cfg file", "-c", "/", NULL);
    expect_args_error("heartbeatInterval (500 ms) must be less than "
                      "electionTimeout (500 ms)",
                      "--heartbeatInterval=500", NULL);
    expect_args_error("--maxSessionTimeout: minSessionTimeout (4000, 2 x "
                      "tickTime) must not be larger than maxSessionTimeout "
                      "(1000)", "--maxSessionTimeout=1000", NULL);
    /* a bad override after a good file: nothing half-applied matters,
     * the error names the flag */
    expect_args_error("--clientPort: -1 is out of range (0..65535)",
                      "--clientPort=-1", NULL);
    /* enforce.auth needs its schemes, and each a provider */
    expect_args_error("enforce.auth.enabled is true: enforce.auth.schemes "
                      "must be configured",
                      "--enforce.auth.enabled=true", NULL);
    expect_args_error("enforce.auth.schemes: the scheme \"x509\" is not "
                      "available (secureClientPort makes it so)",
                      "--enforce.auth.enabled=true",
                      "--enforce.auth.schemes=digest,x509", NULL);
    expect_args_error("enforce.auth.schemes: the scheme \"krb\" is not "
                      "available",
                      "--enforce.auth.enabled=true",
                      "--enforce.auth.schemes=digest,krb", NULL);
    /* a TLS port needs the server's key store; clientAuth one of three */
    expect_args_error("secureClientPort is set: ssl.keyStore.location must "
                      "name the server's key and certificate",
                      "--secureClientPort=2281", NULL);
    expect_args_error("ssl.clientAuth: expected need, want or none, got "
                      "\"maybe\"",
                      "--ssl.clientAuth=maybe", NULL);
    expect_args_error("ssl.ocsp=true is not supported", "--ssl.ocsp=yes", NULL);
    expect_args_error("client.portUnification=true is not supported",
                      "--client.portUnification=true", NULL);
    expect_args_error("enforce.auth.schemes: the scheme \"\" is not "
                      "available",
                      "--enforce.auth.enabled=true",
                      "--enforce.auth.schemes=digest,", NULL);
    expect_args_error("enforce.auth.schemes: the scheme \"sasl\" is not "
                      "available (authProvider.N=org.apache.zookeeper.server."
                      "auth.SASLAuthenticationProvider makes it so)",
                      "--sessionRequireClientSASLAuth=true", NULL);
}

static void test_enforce_auth(void **state)
{
    struct tb_config cfg;
    char err[256] = "";

    (void)state;
    tb_config_init(&cfg);
    assert_int_equal(parse(&cfg, err, sizeof err,
                           "--enforce.auth.schemes= sasl , digest", NULL),
                     0);
    assert_int_equal(cfg.enforce_auth, 0); /* schemes alone enforce nothing */
    assert_int_equal(cfg.enforce_auth_mask, 0);
    tb_config_free(&cfg);

    tb_config_init(&cfg);
    assert_int_equal(parse(&cfg, err, sizeof err,
                           "--authProvider.1=org.apache.zookeeper.server."
                           "auth.SASLAuthenticationProvider",
                           "--enforce.auth.enabled=true",
                           "--enforce.auth.schemes= sasl ,\tdigest,ip", NULL),
                     0);
    assert_int_equal(cfg.enforce_auth, 1);
    assert_string_equal(cfg.enforce_auth_schemes, "sasl,digest,ip");
    assert_int_equal(cfg.enforce_auth_mask,
                     TB_SCHEME_SASL | TB_SCHEME_DIGEST | TB_SCHEME_IP);
    tb_config_free(&cfg);

    /* the older switch: sasl only, whatever the schemes say */
    tb_config_init(&cfg);
    assert_int_equal(parse(&cfg, err, sizeof err,
                           "--authProvider.1=org.apache.zookeeper.server."
                           "auth.SASLAuthenticationProvider",
                           "--zookeeper.sessionRequireClientSASLAuth=true",
                           "--enforce.auth.schemes=digest", NULL),
                     0);
    assert_int_equal(cfg.enforce_auth, 1);
    assert_string_equal(cfg.enforce_auth_schemes, "sasl");
    assert_int_equal(cfg.enforce_auth_mask, TB_SCHEME_SASL);
    tb_config_free(&cfg);

    /* x509 with a TLS port, which listens where the plain one does unless
     * told otherwise; clientAuth in any case */
    tb_config_init(&cfg);
    assert_int_equal(
        parse(&cfg, err, sizeof err, "--clientPortAddress=::1",
              "--secureClientPort=2281", "--ssl.keyStore.location=k.p12",
              "--ssl.clientAuth=WANT", "--enforce.auth.enabled=true",
              "--enforce.auth.schemes=x509", NULL),
        0);
    assert_int_equal(cfg.enforce_auth_mask, TB_SCHEME_X509);
    assert_string_equal(cfg.tls.address, "::1");
    assert_int_equal(cfg.tls.client_auth, TB_TLS_WANT);
    tb_config_free(&cfg);
    tb_config_init(&cfg);
    assert_int_equal(parse(&cfg, err, sizeof err, "--secureClientPort=2281",
                           "--secureClientPortAddress=0.0.0.0",
                           "--ssl.keyStore.location=k.p12", NULL),
                     0);
    assert_string_equal(cfg.tls.address, "0.0.0.0");
    assert_int_equal(cfg.tls.client_auth, TB_TLS_NEED);
    tb_config_free(&cfg);
}

/* ---- help, version, tb_config_set --------------------------------------- */

/* Runs parse_args with stdout sent to a file; returns what was printed. */
static char *stdout_of(int *rv, const char *arg)
{
    struct tb_config cfg;
    char path[] = "/tmp/tb_test_out_XXXXXX", err[128];
    int fd = mkstemp(path), saved;
    char *argv[] = {"tumblerd", (char *)arg, NULL}, *text;
    off_t n;

    assert_true(fd >= 0);
    fflush(stdout);
    saved = dup(1);
    dup2(fd, 1);
    tb_config_init(&cfg);
    *rv = tb_config_parse_args(&cfg, 2, argv, err, sizeof err);
    tb_config_free(&cfg);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    n = lseek(fd, 0, SEEK_END);
    text = calloc(1, (size_t)n + 1);
    assert_int_equal(pread(fd, text, (size_t)n, 0), (ssize_t)n);
    close(fd);
    unlink(path);
    return text;
}

static void test_help_and_version(void **state)
{
    char *text;
    int rv;

    (void)state;
    text = stdout_of(&rv, "--help");
    assert_int_equal(rv, TB_CONFIG_EXIT);
    assert_true(strncmp(text, "Usage: tumblerd ", 16) == 0);
    assert_non_null(strstr(text, "\n  tickTime=2000\n"));
    assert_non_null(strstr(text, "\n  clientPort=2181\n"));
    assert_non_null(strstr(text, "\n  clientPortAddress=127.0.0.1\n"));
    assert_non_null(strstr(text, "\n  dataDir=./data\n"));
    assert_non_null(strstr(text, "\n  4lw.commands.whitelist=srvr\n"));
    assert_non_null(strstr(text, "\n  minFreeDiskBytes=67108864\n"));
    assert_non_null(strstr(text, "\n  logLevel=info\n"));
    /* the ensemble: ZooKeeper's syntax, the two ports, myid */
    assert_non_null(strstr(text, "\n  server.N=host:quorumPort:electionPort"
                                 "[:participant|:observer]"
                                 "[;[clientAddr:]clientPort]\n"));
    assert_non_null(strstr(text, "Peers speak Raft\n      on the quorum port; "
                                 "on the election port a follower forwards\n"));
    assert_non_null(strstr(text, "\n  dataDir/myid\n"));
    free(text);

    text = stdout_of(&rv, "--version");
    assert_int_equal(rv, TB_CONFIG_EXIT);
    assert_true(strncmp(text, "tumblerd ", 9) == 0);
    assert_non_null(strstr(text, tb_config_version()));
    free(text);
}

static void test_set(void **state)
{
    struct tb_config cfg;
    struct tb_config_origin at = {"x.cfg", 9};
    struct capture cap;
    char err[256] = "", *logged;

    (void)state;
    tb_config_init(&cfg);
    assert_int_equal(tb_config_set(&cfg, "zookeeper.snapCount", "5000", &at,
                                   err, sizeof err), 0);
    assert_int_equal(cfg.snap_count, 5000);
    assert_int_equal(tb_config_set(&cfg, "clientPortAddress", "localhost",
                                   NULL, err, sizeof err), 0);
    assert_string_equal(cfg.client_port_address, "127.0.0.1");
    assert_int_equal(tb_config_set(&cfg, "clientPortAddress", "::1", NULL,
                                   err, sizeof err), 0);
    assert_string_equal(cfg.client_port_address, "::1");
    assert_int_equal(tb_config_set(&cfg, "DigestAuthenticationProvider."
                                   "superDigest", "", NULL, err, sizeof err),
                     0);
    assert_null(cfg.super_digest);

    capture_start(&cap);
    assert_int_equal(tb_config_set(&cfg, "autopurge.purgeInterval", "1", &at,
                                   err, sizeof err), 1);
    assert_int_equal(tb_config_set(&cfg, "4lw.commands.whitelist",
                                   "ruok, hash", &at, err, sizeof err), 0);
    logged = capture_end(&cap);
    assert_int_equal(cfg.fourlw_allowed,
                     FOURLW_BIT(FOURLW_SRVR) | FOURLW_BIT(FOURLW_RUOK));
    assert_null(strstr(logged, "autopurge"));
    assert_non_null(strstr(logged, "x.cfg:9: 4lw.commands.whitelist: 1 "
                                   "unknown four-letter word(s) ignored, the "
                                   "first \"hash\""));
    free(logged);

    /* SASL: the JVM's property name for the JAAS file, ZooKeeper's for
     * the super user, and authProvider.N as zoo.cfg lines spell them. */
    assert_int_equal(tb_config_set(&cfg, "java.security.auth.login.config",
                                   "/etc/jaas.conf", NULL, err, sizeof err),
                     0);
    assert_string_equal(cfg.jaas_file, "/etc/jaas.conf");
    assert_int_equal(tb_config_set(&cfg, "zookeeper.sasl.serverconfig",
                                   "ZkServer", NULL, err, sizeof err),
                     0);
    assert_string_equal(cfg.jaas_section, "ZkServer");
    assert_int_equal(tb_config_set(&cfg, "zookeeper.superUser", "admin", NULL,
                                   err, sizeof err),
                     0);
    assert_string_equal(cfg.sasl_super_user, "admin");
    assert_int_equal(
        tb_config_set(&cfg, "superUser", "", NULL, err, sizeof err), 0);
    assert_null(cfg.sasl_super_user);
    capture_start(&cap);
    assert_int_equal(tb_config_set(&cfg, "authProvider.1",
                                   "org.apache."
                                   "zookeeper.server.auth.DigestAuthentication"
                                   "Provider",
                                   &at, err, sizeof err),
                     0);
    assert_int_equal(cfg.sasl_acls, 0);
    assert_int_equal(tb_config_set(&cfg, "authProvider.x509",
                                   "com.example."
                                   "CertProvider",
                                   &at, err, sizeof err),
                     0);
    assert_int_equal(tb_config_set(&cfg, "zookeeper.authProvider.2",
                                   "org.apache.zookeeper.server.auth.SASL"
                                   "AuthenticationProvider",
                                   &at, err, sizeof err),
                     0);
    logged = capture_end(&cap);
    assert_int_equal(cfg.sasl_acls, 1);
    assert_non_null(strstr(logged, "x.cfg:9: authProvider.x509: "
                                   "com.example.CertProvider is not "
                                   "supported; ignored"));
    assert_null(strstr(logged, "Digest"));
    free(logged);
    assert_true(tb_config_has_key("authProvider.1"));

    assert_true(tb_config_has_key("tickTime"));
    assert_true(tb_config_has_key("zookeeper.jute.maxbuffer"));
    assert_true(tb_config_has_key("server.3"));
    assert_false(tb_config_has_key("initLimit"));
    tb_config_free(&cfg);
}

/* ---- conf --------------------------------------------------------------- */

static void test_render_conf(void **state)
{
    struct tb_config cfg;
    struct tb_wbuf b;
    char err[256];

    (void)state;
    tb_config_init(&cfg);
    assert_int_equal(tb_config_set(&cfg, "clientPort", "52137", NULL, err,
                                   sizeof err), 0);
    assert_int_equal(tb_config_set(&cfg, "dataDir", "/tmp/zk/data", NULL,
                                   err, sizeof err), 0);
    assert_int_equal(tb_config_finish(&cfg, err, sizeof err), 0);
    tb_wbuf_init(&b);
    tb_config_render_conf(&cfg, 457, 1234, &b);
    tb_wbuf_put(&b, "", 1);
    assert_string_equal((char *)b.base,
                        "clientPort=52137\n"
                        "secureClientPort=-1\n"
                        "dataDir=/tmp/zk/data\n"
                        "dataDirSize=457\n"
                        "dataLogDir=/tmp/zk/data\n"
                        "dataLogSize=1234\n"
                        "tickTime=2000\n"
                        "maxClientCnxns=60\n"
                        "minSessionTimeout=4000\n"
                        "maxSessionTimeout=40000\n"
                        "clientPortListenBacklog=-1\n"
                        "serverId=1\n");
    tb_wbuf_free(&b);
    tb_config_free(&cfg);
}

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
    /* no client part: clientPort and clientPortAddress as they were */
    assert_int_equal(cfg.client_port, 2181);
    assert_string_equal(cfg.client_port_address, "127.0.0.1");
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
                          "--server.4: ZK1:2888 is server.1's quorum "
                          "address too",
                          "--server.1=zk1:2888:3881",
                          "--server.4=ZK1:2888:3884", NULL);

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
                          "--server.4: the quorum port 3004 is also this "
                          "server's clientPort",
                          S1, "--server.4=127.0.0.1:3004:3884;3004", NULL);
    expect_ensemble_error(two,
                          "--server.4: the quorum port 2281 is also this "
                          "server's secureClientPort",
                          S1, "--server.4=127.0.0.1:2281:3884",
                          "--secureClientPort=2281",
                          "--ssl.keyStore.location=k.p12", NULL);
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
    tb_config_render_conf(&cfg, 0, 0, &b);
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
    tb_wbuf_free(&b);
    tb_config_free(&cfg);
    remove_dir(dir);
}

/* ---- log ---------------------------------------------------------------- */

static void test_log_time(void **state)
{
    char buf[32];

    (void)state;
    assert_int_equal(tb_log_format_time(buf, sizeof buf, 0), 24);
    assert_string_equal(buf, "1970-01-01T00:00:00.000Z");
    assert_int_equal(tb_log_format_time(buf, sizeof buf, 1795321607305), 24);
    assert_string_equal(buf, "2026-11-22T04:26:47.305Z");
    assert_int_equal(tb_log_format_time(buf, sizeof buf, -1), 24);
    assert_string_equal(buf, "1969-12-31T23:59:59.999Z");
    assert_int_equal(tb_log_format_time(buf, 24, 0), 0); /* no room for NUL */
}

static void test_log_levels(void **state)
{
    int level = -1;

    (void)state;
    assert_int_equal(tb_log_level_parse("error", &level), 0);
    assert_int_equal(level, TB_LOG_ERROR);
    assert_int_equal(tb_log_level_parse("WARN", &level), 0);
    assert_int_equal(level, TB_LOG_WARN);
    assert_int_equal(tb_log_level_parse("warning", &level), 0);
    assert_int_equal(level, TB_LOG_WARN);
    assert_int_equal(tb_log_level_parse("Info", &level), 0);
    assert_int_equal(level, TB_LOG_INFO);
    assert_int_equal(tb_log_level_parse("debug", &level), 0);
    assert_int_equal(level, TB_LOG_DEBUG);
    assert_int_equal(tb_log_level_parse("trace", &level), TB_EINVAL);
    assert_string_equal(tb_log_level_name(TB_LOG_WARN), "WARN");
    assert_string_equal(tb_log_level_name(9), "?");
}

static void test_log_lines(void **state)
{
    struct capture cap;
    char *text, stamp[32], level[8], msg[64];
    char big[3000];

    (void)state;
    tb_log_set_level(TB_LOG_INFO);
    capture_start(&cap);
    tb_log(TB_LOG_INFO, "listening on %s:%d", "127.0.0.1", 2181);
    tb_log(TB_LOG_DEBUG, "dropped");
    tb_log(TB_LOG_ERROR, "ends in a newline\n");
    tb_log_set_level(TB_LOG_ERROR);
    tb_log(TB_LOG_WARN, "dropped too");
    assert_false(tb_log_enabled(TB_LOG_WARN));
    assert_true(tb_log_enabled(TB_LOG_ERROR));
    text = capture_end(&cap);
    tb_log_set_level(TB_LOG_INFO);

    /* "YYYY-MM-DDTHH:MM:SS.mmmZ LEVEL message\n", two lines */
    assert_int_equal(sscanf(text, "%31s %7s %63[^\n]", stamp, level, msg), 3);
    assert_int_equal(strlen(stamp), 24);
    assert_int_equal(stamp[10], 'T');
    assert_int_equal(stamp[19], '.');
    assert_int_equal(stamp[23], 'Z');
    assert_string_equal(level, "INFO");
    assert_string_equal(msg, "listening on 127.0.0.1:2181");
    assert_int_equal(text[24], ' ');
    assert_memory_equal(text + 25, "INFO  listening", 15);
    assert_non_null(strstr(text, " ERROR ends in a newline\n"));
    assert_null(strstr(text, "newline\n\n"));
    assert_null(strstr(text, "dropped"));
    assert_int_equal(strchr(strchr(text, '\n') + 1, '\n')[1], '\0');
    free(text);

    /* a long message is cut to one line of 2048 bytes ending "...\n" */
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    capture_start(&cap);
    tb_log(TB_LOG_WARN, "%s", big);
    text = capture_end(&cap);
    assert_int_equal(strlen(text), 2048);
    assert_string_equal(text + 2044, "...\n");
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_timeouts_follow_tick),
        cmocka_unit_test(test_session_timeout_clamp),
        cmocka_unit_test(test_file),
        cmocka_unit_test(test_overrides_after_file),
        cmocka_unit_test(test_file_errors),
        cmocka_unit_test(test_args_errors),
        cmocka_unit_test(test_enforce_auth),
        cmocka_unit_test(test_help_and_version),
        cmocka_unit_test(test_set),
        cmocka_unit_test(test_render_conf),
        cmocka_unit_test(test_server_syntax),
        cmocka_unit_test(test_server_syntax_errors),
        cmocka_unit_test(test_quorum_address),
        cmocka_unit_test(test_myid),
        cmocka_unit_test(test_standalone_unchanged),
        cmocka_unit_test(test_ensemble),
        cmocka_unit_test(test_ensemble_errors),
        cmocka_unit_test(test_render_conf_ensemble),
        cmocka_unit_test(test_log_time),
        cmocka_unit_test(test_log_levels),
        cmocka_unit_test(test_log_lines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
