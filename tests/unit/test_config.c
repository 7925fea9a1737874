/* Unit tests for the configuration (defaults, zoo.cfg files, command-line
 * overrides, error messages naming file:line) and the `conf` text.  How a
 * file's lines are read is in test_config_file.c; an ensemble's (server.N
 * lines, myid) in test_config_ensemble.c; the logger's in test_log.c. */
#include <errno.h>
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

#include "server/admin/fourlw.h"
#include "server/config/config.h"
#include "server/logging/log.h"
#include "log_capture.h"
#include "test_config.h"

/* ---- helpers ------------------------------------------------------------ */

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
    assert_int_equal(fourlw_whitelist_parse(cfg.fourlw_whitelist, NULL,
                                            NULL, 0),
                     FOURLW_BIT(FOURLW_SRVR));
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
        "dataLogDir=/var/lib/zookeeper/log\n");

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
    assert_int_equal(fourlw_whitelist_parse(cfg.fourlw_whitelist, NULL,
                                            NULL, 0),
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

    /* ZooKeeper's keys that are not acted on are named, each once, with
     * why, in one warning; the repeated tickTime in another; nothing else
     * is warned about */
    assert_non_null(strstr(logged, " WARN  ZooKeeper keys accepted and not "
                                   "acted on: initLimit (raft's "
                                   "electionTimeout and heartbeatInterval "
                                   "time the ensemble); syncLimit (raft's "));
    assert_non_null(strstr(logged, "; dataLogDir (the log is kept in "
                                   "dataDir)\n"));
    assert_non_null(strstr(logged, ":24: tickTime given again (first on "
                                   "line 2)"));
    {
        const char *w = strstr(logged, " WARN ");
        assert_non_null(w);
        assert_non_null(w = strstr(w + 1, " WARN "));
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
    assert_int_equal(fourlw_whitelist_parse(cfg.fourlw_whitelist, NULL,
                                            NULL, 0),
                     FOURLW_ALL);
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

/* quorum.auth.* switched off, as ZooKeeper's sample configurations often
 * write it, is taken (and not acted on); switched on it stops the start. */
static void test_quorum_sasl_off(void **state)
{
    struct tb_config cfg;
    char err[256] = "";
    const char *path = write_cfg("quorum.auth.enableSasl=false\n"
                                 "quorum.auth.learnerRequireSasl=false\n"
                                 "quorum.auth.serverRequireSasl=false\n"
                                 "quorum.auth.learner.saslLoginContext=L\n");

    (void)state;
    tb_config_init(&cfg);
    assert_int_equal(parse(&cfg, err, sizeof err, "-c", path, NULL), 0);
    tb_config_free(&cfg);
    unlink(path);
}

/* ---- errors ------------------------------------------------------------- */

/* The Prometheus endpoint's and the AdminServer's keys: the same in a
 * file and as flags; off by default; a provider nobody knows, or a command
 * URL that is no path, is an error; the AdminServer's HTTPS keys are not
 * acted on, and said so. */
static void test_http_keys(void **state)
{
    struct tb_config cfg;
    struct capture cap;
    char err[256] = "", *logged;
    const char *path = write_cfg(
        "metricsProvider.className=org.apache.zookeeper.metrics.prometheus."
        "PrometheusMetricsProvider\n"
        "metricsProvider.httpPort=7001\n"
        "metricsProvider.exportJvmInfo=false\n"
        "admin.enableServer=true\n"
        "admin.commandURL=/cmd//\n"
        "admin.forceHttps=true\n");

    (void)state;
    tb_config_init(&cfg);
    assert_int_equal(tb_config_finish(&cfg, err, sizeof err), 0);
    assert_false(cfg.metrics.enabled);
    assert_false(cfg.admin.enabled);
    assert_int_equal(cfg.metrics.http_port, 7000);
    assert_string_equal(cfg.metrics.http_host, "0.0.0.0");
    assert_int_equal(cfg.admin.port, 8080);
    assert_string_equal(cfg.admin.address, "0.0.0.0");
    assert_string_equal(cfg.admin.command_url, "/commands");
    assert_int_equal(cfg.admin.idle_timeout, 30000);
    tb_config_free(&cfg);

    tb_config_init(&cfg);
    capture_start(&cap);
    assert_int_equal(parse(&cfg, err, sizeof err, "-c", path,
                           "--metricsProvider.httpHost=127.0.0.2",
                           "--admin.serverPort=8081", NULL),
                     0);
    logged = capture_end(&cap);
    assert_true(cfg.metrics.enabled);
    assert_int_equal(cfg.metrics.http_port, 7001);
    assert_string_equal(cfg.metrics.http_host, "127.0.0.2");
    assert_true(cfg.admin.enabled);
    assert_int_equal(cfg.admin.port, 8081);
    assert_string_equal(cfg.admin.command_url, "/cmd");
    assert_non_null(strstr(logged, "; admin.forceHttps (the AdminServer is "
                                   "plain HTTP)"));
    assert_non_null(strstr(logged, "not acted on: metricsProvider."
                                   "exportJvmInfo (the Prometheus provider's "
                                   "tuning"));
    free(logged);
    tb_config_free(&cfg);
    unlink(path);

    tb_config_init(&cfg);
    assert_int_equal(parse(&cfg, err, sizeof err,
                           "--metricsProvider.className=org.apache.zookeeper."
                           "metrics.impl.NullMetricsProvider", NULL), 0);
    assert_false(cfg.metrics.enabled);
    tb_config_free(&cfg);
    expect_args_error("metricsProvider.className: unknown provider "
                      "\"com.example.Metrics\"; expected org.apache.zookeeper."
                      "metrics.prometheus.PrometheusMetricsProvider",
                      "--metricsProvider.className=com.example.Metrics", NULL);
    expect_args_error("admin.commandURL: expected a path such as /commands, "
                      "got \"commands\"", "--admin.commandURL=commands", NULL);
    expect_args_error("--admin.serverPort: 65536 is out of range (0..65535)",
                      "--admin.serverPort=65536", NULL);
    /* a misspelt provider key is not taken for the provider's tuning */
    expect_args_error("--metricsProvider.httpHst: unknown key (see --help)",
                      "--metricsProvider.httpHst=127.0.0.1", NULL);
}

/* A ZooKeeper key tumblerd does not act on is accepted in a file and as a
 * flag alike, and named once, with why, in one warning; --check-config's
 * text has every key's effective value, secrets hidden. */
static void test_ignored_and_effective(void **state)
{
    struct tb_config cfg;
    struct capture cap;
    struct tb_wbuf out;
    char err[256] = "", *logged, *text;
    const char *path = write_cfg("forceSync=no\ntickTime=2500\n"
                                 "ssl.keyStore.password=hunter2\n");

    (void)state;
    tb_config_init(&cfg);
    capture_start(&cap);
    assert_int_equal(parse(&cfg, err, sizeof err, "-c", path, "--initLimit=5",
                           "--forceSync=yes", NULL),
                     0);
    logged = capture_end(&cap);
    assert_non_null(strstr(logged, " WARN  ZooKeeper keys accepted and not "
                                   "acted on: forceSync (the log always "
                                   "syncs); initLimit (raft's "));
    assert_null(strstr(strstr(logged, "forceSync") + 1, "forceSync"));
    assert_null(strstr(strstr(logged, " WARN ") + 1, " WARN "));
    free(logged);

    tb_wbuf_init(&out);
    tb_config_render_effective(&cfg, &out);
    tb_wbuf_put(&out, "", 1);
    text = (char *)out.base;
    assert_true(strncmp(text, "tickTime=2500\n", 14) == 0);
    assert_non_null(strstr(text, "\nminSessionTimeout=5000\n")); /* resolved */
    assert_non_null(strstr(text, "\nclientPortAddress=127.0.0.1\n"));
    assert_non_null(strstr(text, "\nextendedTypesEnabled=true\n"));
    assert_non_null(strstr(text, "\nminFreeDiskBytes=67108864\n"));
    assert_non_null(strstr(text, "\nlogLevel=info\n"));
    assert_non_null(strstr(text, "\nssl.keyStore.password=********\n"));
    assert_null(strstr(text, "hunter2"));
    assert_non_null(strstr(text, "\n# accepted and not acted on: forceSync "
                                 "(the log always syncs); initLimit"));
    tb_wbuf_free(&out);
    tb_config_free(&cfg);
    unlink(path);
}

/* A key given twice in the file: the later value holds, as ZooKeeper
 * reads a zoo.cfg, and a warning names both lines (a dataDir written
 * twice took the server to another tree without a word).  A key given
 * once, then as a flag, is an override, and no warning. */
static void test_repeated_key_warned(void **state)
{
    struct tb_config cfg;
    struct capture cap;
    char err[256] = "", *logged, want[512];
    const char *path = write_cfg("dataDir=/tmp/tb-first\ntickTime=2500\n"
                                 "dataDir=/tmp/tb-second\n");

    (void)state;
    tb_config_init(&cfg);
    capture_start(&cap);
    assert_int_equal(
        parse(&cfg, err, sizeof err, "-c", path, "--tickTime=3000", NULL), 0);
    logged = capture_end(&cap);
    snprintf(want, sizeof want,
             " WARN  %s:3: dataDir given again (first on line 1): the later "
             "value holds",
             path);
    assert_non_null(strstr(logged, want));
    assert_null(strstr(logged, "tickTime given again"));
    assert_string_equal(cfg.data_dir, "/tmp/tb-second");
    assert_int_equal(cfg.tick_time, 3000);
    free(logged);
    tb_config_free(&cfg);
    unlink(path);
}

static void test_args_errors(void **state)
{
    (void)state;
    /* a server that joins an ensemble needs its lines: a leader to wait
     * for */
    expect_args_error("joinEnsemble is true but there are no server.N lines: "
                      "a joining server needs the ensemble's members and its "
                      "own line (or joinEnsemble=false to run alone)",
                      "--joinEnsemble=true", NULL);
    /* a flag's secret is not echoed either */
    expect_args_error("--DigestAuthenticationProvider.superDigest: expected "
                      "user:base64(sha1), such as "
                      "super:D/InIHSb7yEEbrWz8b9l71RjZJU= (the value, a "
                      "secret, is not shown)",
                      "--DigestAuthenticationProvider.superDigest=s3cret",
                      NULL);
    expect_args_error("--tickTime: expected an integer, got \"fast\"",
                      "--tickTime=fast", NULL);
    expect_args_error("--tikTime: unknown key (see --help)", "--tikTime=1",
                      NULL);
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
    expect_args_error("ssl.clientAuth=need: ssl.trustStore.location must name "
                      "the CAs whose clients' certificates are taken (or "
                      "ssl.clientAuth=none)",
                      "--secureClientPort=2281",
                      "--ssl.keyStore.location=k.p12", NULL);
    expect_args_error("secureClientPort is set: ssl.keyStore.location must "
                      "name the server's key and certificate",
                      "--secureClientPort=2281", NULL);
    expect_args_error("ssl.clientAuth: expected need, want or none, got "
                      "\"maybe\"",
                      "--ssl.clientAuth=maybe", NULL);
    expect_args_error("ssl.ocsp=true is not supported", "--ssl.ocsp=TRUE",
                      NULL);
    /* ZooKeeper's true or false alone: its "yes" is false */
    expect_args_error("--enforceQuota: expected true or false, got \"yes\"",
                      "--enforceQuota=yes", NULL);
    expect_args_error("--sslQuorum: expected true or false, got \"1\"",
                      "--sslQuorum=1", NULL);
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
              "--ssl.trustStore.location=ca.pem", "--ssl.clientAuth=WANT",
              "--enforce.auth.enabled=true", "--enforce.auth.schemes=x509",
              NULL),
        0);
    assert_int_equal(cfg.enforce_auth_mask, TB_SCHEME_X509);
    assert_string_equal(cfg.tls.address, "::1");
    assert_int_equal(cfg.tls.client_auth, TB_TLS_WANT);
    tb_config_free(&cfg);
    tb_config_init(&cfg);
    assert_int_equal(parse(&cfg, err, sizeof err, "--secureClientPort=2281",
                           "--secureClientPortAddress=0.0.0.0",
                           "--ssl.keyStore.location=k.p12",
                           "--ssl.trustStore.location=ca.pem", NULL),
                     0);
    assert_string_equal(cfg.tls.address, "0.0.0.0");
    assert_int_equal(cfg.tls.client_auth, TB_TLS_NEED);
    tb_config_free(&cfg);
}

/* As ZooKeeper: a TLS port with no clientPort written down opens no plain
 * port, which the TLS-only configuration would not expect; one written
 * down, 0 included, is kept. */
static void test_tls_only(void **state)
{
    struct tb_config cfg;
    struct tb_wbuf b;
    char err[256] = "";

    (void)state;
    tb_config_init(&cfg);
    assert_int_equal(cfg.client_port, 2181);
    assert_int_equal(parse(&cfg, err, sizeof err, "--secureClientPort=2281",
                           "--ssl.keyStore.location=k.p12",
                           "--ssl.trustStore.location=ca.pem", NULL),
                     0);
    assert_int_equal(cfg.client_port, -1);
    tb_wbuf_init(&b);
    tb_config_render_conf(&cfg, NULL, 0, 0, &b);
    tb_wbuf_put(&b, "", 1);
    assert_non_null(
        strstr((char *)b.base, "clientPort=-1\nsecureClientPort=2281\n"));
    b.len = 0;
    tb_config_render_effective(&cfg, &b); /* read again, the same */
    tb_wbuf_put(&b, "", 1);
    assert_null(strstr((char *)b.base, "\nclientPort="));
    assert_non_null(strstr((char *)b.base, "\nsecureClientPort=2281\n"));
    tb_wbuf_free(&b);
    tb_config_free(&cfg);
    tb_config_init(&cfg);
    assert_int_equal(parse(&cfg, err, sizeof err, "--secureClientPort=2281",
                           "--ssl.keyStore.location=k.p12",
                           "--ssl.trustStore.location=ca.pem", "--clientPort=0",
                           NULL),
                     0);
    /* ZooKeeper's 0 is "not set": no plain port beside the TLS one. */
    assert_int_equal(cfg.client_port, -1);
    tb_config_free(&cfg);
    tb_config_init(&cfg);
    assert_int_equal(parse(&cfg, err, sizeof err, "--tickTime=1000", NULL), 0);
    assert_int_equal(cfg.client_port, 2181); /* no TLS: the default port */
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
    /* every option scan_args takes (the man page is made from this) */
    assert_non_null(
        strstr(text, "\n  -c FILE, --config FILE, --config=FILE\n"));
    assert_non_null(strstr(text, "\n  --KEY=VALUE\n"));
    assert_non_null(strstr(text, "\n  --repair-log\n"));
    assert_non_null(strstr(text, "\n  -h, --help\n"));
    assert_non_null(strstr(text, "\n  -V, --version\n"));
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
    assert_non_null(strstr(text, "Peers speak Raft on the quorum port, over "
                                 "IPv4\n      only; on the election port a "
                                 "follower forwards writes to\n"));
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
    /* in brackets, as ZooKeeper takes it too */
    assert_int_equal(tb_config_set(&cfg, "clientPortAddress", "[::2]", NULL,
                                   err, sizeof err),
                     0);
    assert_string_equal(cfg.client_port_address, "::2");
    assert_int_equal(tb_config_set(&cfg, "DigestAuthenticationProvider."
                                   "superDigest", "", NULL, err, sizeof err),
                     0);
    assert_null(cfg.super_digest);

    capture_start(&cap);
    cfg.check_4lw = fourlw_whitelist_check; /* as tumblerd's main does */
    assert_int_equal(tb_config_set(&cfg, "autopurge.purgeInterval", "1", &at,
                                   err, sizeof err), 1);
    assert_int_equal(tb_config_set(&cfg, "4lw.commands.whitelist",
                                   "ruok, hash", &at, err, sizeof err), 0);
    logged = capture_end(&cap);
    assert_int_equal(fourlw_whitelist_parse(cfg.fourlw_whitelist, NULL,
                                            NULL, 0),
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
                                   "org.apache.zookeeper.server.auth.X509"
                                   "AuthenticationProvider",
                                   &at, err, sizeof err),
                     0);
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
    assert_null(strstr(logged, "X509"));
    free(logged);
    assert_true(tb_config_has_key("authProvider.1"));

    assert_true(tb_config_has_key("tickTime"));
    assert_true(tb_config_has_key("zookeeper.jute.maxbuffer"));
    assert_true(tb_config_has_key("server.3"));
    assert_true(tb_config_has_key("initLimit")); /* accepted, not acted on */
    assert_false(tb_config_has_key("initLimits"));
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
    tb_config_render_conf(&cfg, NULL, 457, 1234, &b);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_timeouts_follow_tick),
        cmocka_unit_test(test_session_timeout_clamp),
        cmocka_unit_test(test_file),
        cmocka_unit_test(test_overrides_after_file),
        cmocka_unit_test(test_http_keys),
        cmocka_unit_test(test_ignored_and_effective),
        cmocka_unit_test(test_repeated_key_warned),
        cmocka_unit_test(test_args_errors),
        cmocka_unit_test(test_enforce_auth),
        cmocka_unit_test(test_tls_only),
        cmocka_unit_test(test_help_and_version),
        cmocka_unit_test(test_set),
        cmocka_unit_test(test_render_conf),
        cmocka_unit_test(test_quorum_sasl_off),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
