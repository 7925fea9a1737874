/* The configuration keys, their defaults and checks, and the `conf` text.
 *
 * One table drives everything: tb_config_init() applies each key's default
 * text through the same setter a zoo.cfg line goes through, and --help
 * prints the same defaults, so the three cannot disagree.  Reading files
 * and the command line is in config_args.c; the checks once all is read
 * in config_finish.c; an ensemble's server.N lines, myid and the checks of
 * the members together in config_ensemble.c. */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "server/config/config.h"
#include "server/config/config_int.h"
#include "server/logging/log.h"

#ifndef TB_VERSION
#define TB_VERSION "0.0.0"
#endif

enum key_type {
    K_INT,    /* int field, range checked */
    K_I64,    /* int64_t field, range checked */
    K_BOOL,   /* int field: true/false */
    K_DIR,    /* owned string, not empty */
    K_ADDR,   /* owned string, an IP literal ("localhost" = 127.0.0.1) */
    K_LEVEL,  /* int field: a log level name */
    K_FORMAT, /* int field: a log format name */
    K_4LW,    /* owned string, its words checked by cfg->check_4lw */
    K_DIGEST, /* owned string or NULL: "user:base64(sha1)" */
    K_STR,    /* owned string, or NULL when empty */
};

/* X(key, type, field, min, max, default, help).  Keys are ZooKeeper's
 * spelling, without the "zookeeper." prefix of system properties. */
#define MiB64 "67108864"
#define CONFIG_KEYS(X)                                                         \
    X("tickTime", K_INT, tick_time, 1, 100000000, "2000",                      \
      "ms; the session expiry granularity")                                    \
    X("dataDir", K_DIR, data_dir, 0, 0, "./data",                              \
      "raft log and snapshots (relative to the working directory)")            \
    X("clientPort", K_INT, client_port, 0, 65535, "2181",                      \
      "client port; unset or 0 beside secureClientPort: none, and 0 "          \
      "beside a server line's: that one (ZooKeeper's 0 is unset); else 0 "     \
      "lets the system pick one")                                              \
    X("clientPortAddress", K_ADDR, client_port_address, 0, 0, "127.0.0.1",     \
      "address to listen on (0.0.0.0 or :: for all)")                          \
    X("clientPortListenBacklog", K_INT, client_port_listen_backlog, -1, 65535, \
      "-1", "listen(2) backlog; -1: the system's")                             \
    X("maxClientCnxns", K_INT, max_client_cnxns, 0, 2147483647, "60",          \
      "connections per client IP; 0: unlimited")                               \
    X("minSessionTimeout", K_INT, min_session_timeout, -1, 2147483647, "-1",   \
      "ms; -1: 2 x tickTime")                                                  \
    X("maxSessionTimeout", K_INT, max_session_timeout, -1, 2147483647, "-1",   \
      "ms; -1: 20 x tickTime")                                                 \
    X("4lw.commands.whitelist", K_4LW, fourlw_whitelist, 0, 0, "srvr",         \
      "four-letter words allowed, comma separated; * for all")                 \
    X("jute.maxbuffer", K_INT, jute_maxbuffer, 1024, 2147483647, "1048575",    \
      "bytes; largest request frame accepted")                                 \
    X("globalOutstandingLimit", K_INT, max_outstanding, 1, 2147483647, "1000", \
      "requests in flight per connection before reading pauses")               \
    X("snapCount", K_INT, snap_count, 0, 2147483647, "0",                      \
      "log entries between snapshots, at most; 0: as many as the log's "       \
      "bytes allow (a snapshot is due once they reach the state's size)")      \
    X("datadir.autocreate", K_BOOL, data_dir_autocreate, 0, 1, "true",         \
      "false: a dataDir that does not exist stops the start instead of "       \
      "being created (a mistyped one would serve an empty tree)")              \
    X("extendedTypesEnabled", K_BOOL, extended_types_enabled, 0, 1, "true",    \
      "allow TTL nodes")                                                       \
    X("reconfigEnabled", K_BOOL, reconfig_enabled, 0, 1, "false",              \
      "the super user may change an ensemble's members with reconfig")         \
    X("joinEnsemble", K_BOOL, join_ensemble, 0, 1, "false",                    \
      "a new server, its dataDir empty, that a running ensemble adds with "    \
      "reconfig: its log starts from the leader's")                            \
    X("enforceQuota", K_BOOL, enforce_quota, 0, 1, "false",                    \
      "refuse a create or setData over a quota's countHardLimit or "           \
      "byteHardLimit (QuotaExceeded)")                                         \
    X("znode.container.checkIntervalMs", K_INT, container_check_interval_ms,   \
      1, 2147483647, "60000",                                                  \
      "ms between sweeps for empty containers and expired TTL nodes")          \
    X("znode.container.maxPerMinute", K_INT, container_max_per_minute, 1,      \
      2147483647, "10000", "container/TTL deletions per minute, at most")      \
    X("DigestAuthenticationProvider.superDigest", K_DIGEST, super_digest, 0,   \
      0, "", "super user as user:base64(sha1(user:password)); empty: none")    \
    X("java.security.auth.login.config", K_STR, jaas_file, 0, 0, "",           \
      "JAAS file whose Server section lists the SASL (DIGEST-MD5) users "      \
      "as user_NAME=\"PASSWORD\"; empty: no SASL")                             \
    X("sasl.serverconfig", K_STR, jaas_section, 0, 0, "Server",                \
      "the section of that file that lists them")                              \
    X("superUser", K_STR, sasl_super_user, 0, 0, "",                           \
      "the SASL user that is the super user; empty: none")                     \
    X("enforce.auth.enabled", K_BOOL, enforce_auth, 0, 1, "false",             \
      "refuse every request of a connection that has not authenticated "       \
      "with one of enforce.auth.schemes, and close it")                        \
    X("enforce.auth.schemes", K_STR, enforce_auth_schemes, 0, 0, "",           \
      "comma-separated: digest, ip, sasl, x509")                               \
    X("sessionRequireClientSASLAuth", K_BOOL, session_require_sasl, 0, 1,      \
      "false", "true: enforce.auth.enabled with the scheme sasl")              \
    X("secureClientPort", K_INT, tls.port, 0, 65535, "0",                      \
      "TLS client port; 0: none")                                              \
    X("secureClientPortAddress", K_ADDR, tls.address, 0, 0, "",                \
      "address of the TLS port; empty: clientPortAddress")                     \
    X("ssl.keyStore.location", K_STR, tls.key_store, 0, 0, "",                 \
      "the server's key and certificate chain: PKCS12 or PEM")                 \
    X("ssl.keyStore.password", K_STR, tls.key_password, 0, 0, "",              \
      "its password")                                                          \
    X("ssl.keyStore.passwordPath", K_STR, tls.key_password_path, 0, 0, "",     \
      "a file holding its password")                                           \
    X("ssl.keyStore.type", K_STR, tls.key_type, 0, 0, "",                      \
      "PKCS12 or PEM; empty: from the file's extension")                       \
    X("ssl.trustStore.location", K_STR, tls.trust_store, 0, 0, "",             \
      "the CAs that sign clients' certificates: PKCS12 or PEM; empty: the "    \
      "system's")                                                              \
    X("ssl.trustStore.password", K_STR, tls.trust_password, 0, 0, "",          \
      "its password")                                                          \
    X("ssl.trustStore.passwordPath", K_STR, tls.trust_password_path, 0, 0, "", \
      "a file holding its password")                                           \
    X("ssl.trustStore.type", K_STR, tls.trust_type, 0, 0, "",                  \
      "PKCS12 or PEM; empty: from the file's extension")                       \
    X("ssl.clientAuth", K_STR, tls.client_auth_name, 0, 0, "need",             \
      "need, want or none: whether a client must present a certificate")       \
    X("ssl.protocol", K_STR, tls.protocol, 0, 0, "",                           \
      "TLSv1.2 or TLSv1.3: the only version offered; empty: both")             \
    X("ssl.enabledProtocols", K_STR, tls.protocols, 0, 0, "",                  \
      "comma-separated versions offered; overrides ssl.protocol")              \
    X("ssl.ciphersuites", K_STR, tls.ciphersuites, 0, 0, "",                   \
      "comma-separated cipher suites by their standard (IANA) names; "         \
      "empty: OpenSSL's defaults")                                             \
    X("X509AuthenticationProvider.superUser", K_STR, tls.super_user, 0, 0, "", \
      "the certificate subject (RFC 2253) that is the super user")             \
    X("client.certReload", K_BOOL, tls.cert_reload, 0, 1, "false",             \
      "true: the stores are read again when their files change")               \
    X("ssl.crl", K_BOOL, tls.crl, 0, 1, "false",                               \
      "revocation lists: not supported, true stops the server")                \
    X("ssl.ocsp", K_BOOL, tls.ocsp, 0, 1, "false",                             \
      "OCSP: not supported, true stops the server")                            \
    X("client.portUnification", K_BOOL, tls.port_unification, 0, 1, "false",   \
      "TLS on clientPort too: not supported, true stops the server")           \
    X("sslQuorum", K_BOOL, quorum_tls.enabled, 0, 1, "false",                  \
      "TLS, both sides authenticated, on every connection between members")    \
    X("portUnification", K_BOOL, quorum_tls.port_unification, 0, 1, "false",   \
      "the quorum and election ports take TLS and plain "                      \
      "connections alike (the stores are read): for moving a running "         \
      "ensemble to sslQuorum or off it one member at a time")                  \
    X("ssl.quorum.keyStore.location", K_STR, quorum_tls.key_store, 0, 0, "",   \
      "this member's key and certificate chain: PKCS12 or PEM")                \
    X("ssl.quorum.keyStore.password", K_STR, quorum_tls.key_password, 0, 0,    \
      "", "its password")                                                      \
    X("ssl.quorum.keyStore.passwordPath", K_STR, quorum_tls.key_password_path, \
      0, 0, "", "a file holding its password")                                 \
    X("ssl.quorum.keyStore.type", K_STR, quorum_tls.key_type, 0, 0, "",        \
      "PKCS12 or PEM; empty: from the file's extension")                       \
    X("ssl.quorum.trustStore.location", K_STR, quorum_tls.trust_store, 0, 0,   \
      "",                                                                      \
      "the CAs that sign members' certificates: PKCS12 or PEM; empty: "        \
      "the system's")                                                          \
    X("ssl.quorum.trustStore.password", K_STR, quorum_tls.trust_password, 0,   \
      0, "", "its password")                                                   \
    X("ssl.quorum.trustStore.passwordPath", K_STR,                             \
      quorum_tls.trust_password_path, 0, 0, "", "a file holding its password") \
    X("ssl.quorum.trustStore.type", K_STR, quorum_tls.trust_type, 0, 0, "",    \
      "PKCS12 or PEM; empty: from the file's extension")                       \
    X("ssl.quorum.protocol", K_STR, quorum_tls.protocol, 0, 0, "",             \
      "TLSv1.2 or TLSv1.3: the only version offered; empty: both")             \
    X("ssl.quorum.enabledProtocols", K_STR, quorum_tls.protocols, 0, 0, "",    \
      "comma-separated versions offered; overrides ssl.quorum.protocol")       \
    X("ssl.quorum.ciphersuites", K_STR, quorum_tls.ciphersuites, 0, 0, "",     \
      "comma-separated cipher suites by their standard (IANA) names; "         \
      "empty: OpenSSL's defaults")                                             \
    X("ssl.quorum.hostnameVerification", K_BOOL,                               \
      quorum_tls.hostname_verification, 0, 1, "true",                          \
      "a member's certificate must name its host (server.N's, or the "         \
      "address it connects from)")                                             \
    X("sslQuorumReloadCertFiles", K_BOOL, quorum_tls.reload, 0, 1, "false",    \
      "the quorum's stores read again when their files change (a stat a "      \
      "second), as on SIGHUP")                                                 \
    X("ssl.quorum.clientAuth", K_STR, quorum_tls.client_auth_name, 0, 0,       \
      "need", "need only: every member presents its certificate")              \
    X("ssl.quorum.crl", K_BOOL, quorum_tls.crl, 0, 1, "false",                 \
      "revocation lists: not supported, true stops the server")                \
    X("ssl.quorum.ocsp", K_BOOL, quorum_tls.ocsp, 0, 1, "false",               \
      "OCSP: not supported, true stops the server")                            \
    X("metricsProvider.className", K_STR, metrics.class_name, 0, 0, "",        \
      "org.apache.zookeeper.metrics.prometheus.PrometheusMetricsProvider "     \
      "serves Prometheus's metrics; empty (or ZooKeeper's Default or "         \
      "NullMetricsProvider): none")                                            \
    X("metricsProvider.httpHost", K_ADDR, metrics.http_host, 0, 0, "0.0.0.0",  \
      "address of the metrics port")                                           \
    X("metricsProvider.httpPort", K_INT, metrics.http_port, 0, 65535, "7000",  \
      "metrics port: GET /metrics")                                            \
    X("admin.enableServer", K_BOOL, admin.enabled, 0, 1, "false",              \
      "serve ZooKeeper's AdminServer commands over HTTP")                      \
    X("admin.serverAddress", K_ADDR, admin.address, 0, 0, "0.0.0.0",           \
      "address of the AdminServer")                                            \
    X("admin.serverPort", K_INT, admin.port, 0, 65535, "8080",                 \
      "AdminServer port")                                                      \
    X("admin.commandURL", K_STR, admin.command_url, 0, 0, "/commands",         \
      "where the commands are: GET /commands/NAME")                            \
    X("admin.idleTimeout", K_INT, admin.idle_timeout, 1, 2147483647, "30000",  \
      "ms an AdminServer connection may stay idle")                            \
    X("electionTimeout", K_INT, election_timeout, 20, 60000, "500",            \
      "ms; an ensemble's follower that hears no leader for this long (and "    \
      "up to twice it) starts an election")                                    \
    X("heartbeatInterval", K_INT, heartbeat_interval, 5, 30000, "50",          \
      "ms between the leader's heartbeats; less than electionTimeout")         \
    X("serverId", K_INT, server_id, 1, 254, "1",                               \
      "this server's id; dataDir/myid gives it too (see server.N)")            \
    X("minFreeDiskBytes", K_I64, min_free_disk_bytes, 0, INT64_MAX, MiB64,     \
      "writes are refused when dataDir has less free than this (at least "     \
      "24 MiB) plus room for two snapshots")                                   \
    X("logLevel", K_LEVEL, log_level, 0, 0, "info",                            \
      "error, warn, info or debug")                                            \
    X("logFile", K_STR, log_file, 0, 0, "",                                    \
      "append the log to this file, reopened on SIGHUP (for logrotate); "      \
      "empty: stderr (the journal, under systemd)")                            \
    X("logFormat", K_FORMAT, log_format, 0, 0, "text",                         \
      "text, or json: one JSON object a line, with the line's fields, for "    \
      "log shippers (--log-format=json says the same)")                        \
    X("slowRequestMs", K_INT, slow_request_ms, 0, 2147483647, "1000",          \
      "ms; a request answered later than this after it arrived is logged "     \
      "(a line a second at most); 0: none")

struct key_def {
    const char *name;
    enum key_type type;
    size_t off;
    int64_t min, max;
    const char *def;
    const char *help;
};

#define KEY_DEF(name, type, field, min, max, def, help)                     \
    {name, type, offsetof(struct tb_config, field), min, max, def, help},
static const struct key_def keys[] = {CONFIG_KEYS(KEY_DEF)};
#undef KEY_DEF
#define NKEYS (sizeof keys / sizeof keys[0])


const char *tb_config_version(void)
{
    return TB_VERSION;
}

static const struct key_def *find_key(const char *name)
{
    size_t i;

    for (i = 0; i < NKEYS; i++)
        if (strcmp(keys[i].name, name) == 0)
            return &keys[i];
    return NULL;
}


/* Adds "key (why)" to cfg->ignored, once per key. */
static void note_ignored(struct tb_config *cfg, const char *key,
                         const char *why)
{
    char item[512];
    size_t n = cfg->ignored ? strlen(cfg->ignored) : 0, k = strlen(key);
    const char *p;
    char *grown;

    for (p = cfg->ignored; p != NULL && (p = strstr(p, key)) != NULL; p++)
        if ((p == cfg->ignored || p[-1] == ' ') && p[k] == ' ')
            return;
    snprintf(item, sizeof item, "%s%s (%s)", n ? "; " : "", key, why);
    if ((grown = realloc(cfg->ignored, n + strlen(item) + 1)) == NULL)
        return; /* the warning is shorter; nothing else depends on it */
    memcpy(grown + n, item, strlen(item) + 1);
    cfg->ignored = grown;
}

/* true or false, in any case, as ZooKeeper's own: it reads anything else
 * as false (Boolean.parseBoolean) or refuses it, so "yes" here would mean
 * the opposite of what the same zoo.cfg means to ZooKeeper. */
static int parse_bool(const char *s, int *v)
{
    if (strcasecmp(s, "true") == 0 || strcasecmp(s, "false") == 0) {
        *v = strcasecmp(s, "true") == 0;
        return 0;
    }
    return TB_EINVAL;
}

static int is_ip_literal(const char *s)
{
    unsigned char buf[sizeof(struct in6_addr)];

    return inet_pton(AF_INET, s, buf) == 1 || inet_pton(AF_INET6, s, buf) == 1;
}

/* An IPv6 address in brackets, as ZooKeeper takes it ("[::1]"), without
 * them (in buf); anything else as it is. */
static const char *unbracket(const char *s, char *buf, size_t cap)
{
    size_t n = strlen(s);

    if (n < 3 || s[0] != '[' || s[n - 1] != ']' || n - 2 >= cap)
        return s;
    memcpy(buf, s + 1, n - 2);
    buf[n - 2] = '\0';
    return strchr(buf, ':') != NULL ? buf : s;
}

static int is_base64_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
           (c >= '0' && c <= '9') || c == '+' || c == '/';
}

/* "user:" + base64 of a 20-byte SHA-1: 27 base64 characters and one '='. */
static int is_digest(const char *s)
{
    const char *colon = strchr(s, ':');
    int i;

    if (colon == NULL || colon == s || strlen(colon + 1) != 28)
        return 0;
    for (i = 0; i < 27; i++)
        if (!is_base64_char(colon[1 + i]))
            return 0;
    return colon[28] == '=';
}

static int set_int(const struct key_def *k, void *field, const char *value,
                   const char *at, char *err, size_t errlen)
{
    int64_t v;
    int rv = parse_i64(value, &v);

    if (rv == TB_EINVAL) {
        set_err(err, errlen, "%s: expected an integer, got \"%s\"", at, value);
        return TB_EINVAL;
    }
    if (rv != 0 || v < k->min || v > k->max) {
        set_err(err, errlen, "%s: %s is out of range (%" PRId64 "..%" PRId64
                ")", at, value, k->min, k->max);
        return TB_EINVAL;
    }
    if (k->type == K_I64)
        *(int64_t *)field = v;
    else
        *(int *)field = (int)v;
    return 0;
}

static int set_whitelist(struct tb_config *cfg, const char *value,
                         const char *at)
{
    if (cfg->check_4lw != NULL)
        cfg->check_4lw(value, at);
    return replace_str(&cfg->fourlw_whitelist, value);
}

static int set_key(struct tb_config *cfg, const struct key_def *k,
                   const char *value, const char *at, char *err, size_t errlen)
{
    void *field = (char *)cfg + k->off;
    char v6[INET6_ADDRSTRLEN];
    int v;

    switch (k->type) {
    case K_INT:
    case K_I64:
        return set_int(k, field, value, at, err, errlen);
    case K_BOOL:
        if (parse_bool(value, &v) != 0) {
            set_err(err, errlen, "%s: expected true or false, got \"%s\"", at,
                    value);
            return TB_EINVAL;
        }
        *(int *)field = v;
        return 0;
    case K_LEVEL:
        if (tb_log_level_parse(value, &v) != 0) {
            set_err(err, errlen, "%s: expected error, warn, info or debug, "
                    "got \"%s\"", at, value);
            return TB_EINVAL;
        }
        *(int *)field = v;
        return 0;
    case K_FORMAT:
        if (tb_log_format_parse(value, &v) != 0) {
            set_err(err, errlen, "%s: expected text or json, got \"%s\"", at,
                    value);
            return TB_EINVAL;
        }
        *(int *)field = v;
        return 0;
    case K_DIR:
        if (*value == '\0') {
            set_err(err, errlen, "%s: must not be empty", at);
            return TB_EINVAL;
        }
        return replace_str(field, value);
    case K_ADDR:
        if (*value == '\0' && *k->def == '\0')
            return replace_str(field, NULL); /* "the other address" */
        if (strcmp(value, "localhost") == 0)
            value = "127.0.0.1";
        value = unbracket(value, v6, sizeof v6);
        if (!is_ip_literal(value)) {
            set_err(err, errlen, "%s: expected an IP address such as "
                    "127.0.0.1, 0.0.0.0 or ::1, got \"%s\"", at, value);
            return TB_EINVAL;
        }
        return replace_str(field, value);
    case K_4LW:
        return set_whitelist(cfg, value, at);
    case K_DIGEST:
        if (*value == '\0')
            return replace_str(field, NULL);
        if (!is_digest(value)) {
            /* Not quoted: what is there instead may be the password. */
            set_err(err, errlen,
                    "%s: expected user:base64(sha1), such as "
                    "super:D/InIHSb7yEEbrWz8b9l71RjZJU= (the value, a secret, "
                    "is not shown)",
                    at);
            return TB_EINVAL;
        }
        return replace_str(field, value);
    case K_STR:
        return replace_str(field, *value != '\0' ? value : NULL);
    }
    (void)TB_NEVER(1);
    return TB_EINVAL;
}

/* "authProvider.N": the schemes Digest and IP are always there, and x509
 * with a TLS port (ZooKeeper's TLS set-up names X509AuthenticationProvider
 * for it); naming SASLAuthenticationProvider makes "sasl" a scheme ACLs may
 * use, as in ZooKeeper, where a server without it refuses such ACLs. */
static int set_auth_provider(struct tb_config *cfg, const char *value,
                             const char *at)
{
    const char *cls = strrchr(value, '.');

    cls = cls != NULL ? cls + 1 : value;
    if (strcmp(cls, "SASLAuthenticationProvider") == 0)
        cfg->sasl_acls = 1;
    else if (strcmp(cls, "DigestAuthenticationProvider") != 0 &&
             strcmp(cls, "IPAuthenticationProvider") != 0 &&
             strcmp(cls, "X509AuthenticationProvider") != 0)
        tb_log(TB_LOG_WARN, "%s: %s is not supported; ignored", at, value);
    return 0;
}

/* Remembers where a session timeout was set, for tb_config_finish()'s
 * message; the file name is copied, the caller's may not outlive us. */
static int keep_origin(struct tb_config_origin *slot,
                       const struct tb_config_origin *o)
{
    char *file = NULL;

    if (o != NULL && o->file != NULL && (file = strdup(o->file)) == NULL)
        return TB_ENOMEM;
    free((char *)slot->file);
    slot->file = file;
    slot->line = o != NULL ? o->line : 0;
    return 0;
}

static int note_origin(struct tb_config *cfg, const struct key_def *k,
                       const struct tb_config_origin *o)
{
    if (k->off == offsetof(struct tb_config, min_session_timeout)) {
        cfg->min_session_timeout_set = cfg->min_session_timeout != -1;
        return keep_origin(&cfg->origin_min_to, o);
    }
    if (k->off == offsetof(struct tb_config, max_session_timeout)) {
        cfg->max_session_timeout_set = cfg->max_session_timeout != -1;
        return keep_origin(&cfg->origin_max_to, o);
    }
    if (k->off == offsetof(struct tb_config, server_id))
        return keep_origin(&cfg->origin_server_id, o);
    if (k->off == offsetof(struct tb_config, client_port))
        return keep_origin(&cfg->origin_client_port, o);
    if (k->off == offsetof(struct tb_config, client_port_address))
        return keep_origin(&cfg->origin_client_addr, o);
    return 0;
}

int tb_config_has_key(const char *key)
{
    int refused;

    if (strncmp(key, "zookeeper.", 10) == 0)
        key += 10;
    return strncmp(key, "server.", 7) == 0 ||
           strncmp(key, "authProvider.", 13) == 0 || find_key(key) != NULL ||
           config__zk_key(key, NULL, &refused) != NULL;
}

int tb_config_set(struct tb_config *cfg, const char *key, const char *value,
                  const struct tb_config_origin *origin, char *err,
                  size_t errlen)
{
    const struct key_def *k;
    char at[512];
    int rv;

    if (strncmp(key, "zookeeper.", 10) == 0)
        key += 10;
    where(at, sizeof at, origin, key);
    if (strncmp(key, "server.", 7) == 0)
        return config__set_server(cfg, key, value, origin, at, err, errlen);
    if (strncmp(key, "authProvider.", 13) == 0)
        return set_auth_provider(cfg, value, at);
    k = find_key(key);
    if (k == NULL) {
        int refused = 0;
        const char *why = config__zk_key(key, value, &refused);
        if (why == NULL) {
            set_err(err, errlen, "%s: unknown key, neither tumblerd's nor one "
                    "of ZooKeeper's (see --help)", at);
            return TB_EINVAL;
        }
        if (refused) {
            set_err(err, errlen, "%s: %s", at, why);
            return TB_EINVAL;
        }
        note_ignored(cfg, key, why);
        return 1;
    }
    rv = set_key(cfg, k, value, at, err, errlen);
    if (rv == 0)
        rv = note_origin(cfg, k, origin);
    if (rv == TB_ENOMEM)
        set_err(err, errlen, "%s: out of memory", at);
    return rv;
}

void tb_config_init(struct tb_config *cfg)
{
    struct tb_config_origin def = {NULL, -1};
    size_t i;
    int rv;

    memset(cfg, 0, sizeof *cfg);
    /* The defaults are valid, so only memory can fail here; a string left
     * NULL is reported by tb_config_finish(). */
    for (i = 0; i < NKEYS; i++) {
        rv = set_key(cfg, &keys[i], keys[i].def, keys[i].name, NULL, 0);
        assert(rv == 0 || rv == TB_ENOMEM);
        if (rv == 0)
            rv = note_origin(cfg, &keys[i], &def);
        (void)rv;
    }
}

/* The keys whose field is an owned string. */
static int owns_string(enum key_type t)
{
    return t == K_DIR || t == K_ADDR || t == K_4LW || t == K_DIGEST ||
           t == K_STR;
}

void tb_config_free(struct tb_config *cfg)
{
    size_t i;

    for (i = 0; i < NKEYS; i++)
        if (owns_string(keys[i].type))
            free(*(char **)((char *)cfg + keys[i].off));
    free(cfg->config_file);
    free(cfg->ignored);
    free((char *)cfg->origin_min_to.file);
    free((char *)cfg->origin_max_to.file);
    free((char *)cfg->origin_server_id.file);
    free((char *)cfg->origin_client_port.file);
    free((char *)cfg->origin_client_addr.file);
    for (i = 0; i < cfg->nservers; i++)
        tb_config_server_free(&cfg->servers[i]);
    free(cfg->servers);
    for (i = 0; i < cfg->nsurvivors; i++)
        free(cfg->survivors[i]);
    free(cfg->survivors);
    memset(cfg, 0, sizeof *cfg);
}

unsigned tb_config_scheme_bit(const char *name, size_t len)
{
    if (len == 6 && memcmp(name, "digest", 6) == 0)
        return TB_SCHEME_DIGEST;
    if (len == 2 && memcmp(name, "ip", 2) == 0)
        return TB_SCHEME_IP;
    if (len == 4 && memcmp(name, "sasl", 4) == 0)
        return TB_SCHEME_SASL;
    if (len == 4 && memcmp(name, "x509", 4) == 0)
        return TB_SCHEME_X509;
    return 0;
}

int tb_config_list_next(const char **list, struct tb_str *item)
{
    const char *p = *list, *end;

    if (p == NULL)
        return 0;
    end = strchr(p, ',');
    *list = end != NULL ? end + 1 : NULL;
    end = end != NULL ? end : p + strlen(p);
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
        end--;
    *item = (struct tb_str){p, (size_t)(end - p)};
    return 1;
}

int tb_config_session_timeout(const struct tb_config *cfg, int requested)
{
    if (requested < cfg->min_session_timeout)
        return cfg->min_session_timeout;
    if (requested > cfg->max_session_timeout)
        return cfg->max_session_timeout;
    return requested;
}

void tb_config_usage(struct tb_wbuf *out)
{
    size_t i;

    tb_wbuf_printf(
        out,
        "Usage: tumblerd [-c FILE | --config=FILE | FILE] [--KEY=VALUE ...]\n"
        "       tumblerd --repair-log [-c FILE] [--KEY=VALUE ...]\n"
        "       tumblerd --recover-ensemble [--survivor=DIR ...] [-c FILE]\n"
        "                [--KEY=VALUE ...]\n"
        "       tumblerd --check-config [-c FILE] [--KEY=VALUE ...]\n"
        "       tumblerd --help | --version\n"
        "\n"
        "A ZooKeeper-compatible coordination server.  FILE is a zoo.cfg\n"
        "(key=value lines, # comments); each --KEY=VALUE then overrides the\n"
        "key of the same name.\n"
        "\n"
        "A log damaged beyond what a crash leaves stops the start.  Then\n"
        "--repair-log, with the same configuration, cuts the log at its last\n"
        "good record, after copying every file it changes or removes into\n"
        "dataDir/repair-TIME/, says what it dropped, moves zxids to a new\n"
        "epoch (so that no zxid, and no fencing token, is given twice) and\n"
        "exits without serving.  A whole log is left as it is.  A member\n"
        "of an ensemble is refused: it is started with an empty dataDir\n"
        "instead, and catches up from the leader.\n"
        "\n"
        "An ensemble that lost a majority of its members for good is\n"
        "rebuilt offline with --recover-ensemble, run on the stopped\n"
        "survivor whose log goes furthest, with the new members' server.N\n"
        "lines: the log takes them as its members, in a new term, keeping\n"
        "every entry, and zxids a new epoch; enough other voters for a\n"
        "majority then start from copies of that dataDir, the rest empty\n"
        "with joinEnsemble=true.  Each --survivor=DIR is another\n"
        "survivor's dataDir (a copy will do): the recovery is refused,\n"
        "changing nothing, if one goes further, as it is for a log damaged\n"
        "or in use.  With --repair-log, a damaged log is cut first, as a\n"
        "repair cuts it, and then recovered.\n"
        "\n"
        "Options:\n\n"
        "  -c FILE, --config FILE, --config=FILE\n"
        "      the zoo.cfg to read; FILE alone says the same\n"
        "  --KEY=VALUE\n"
        "      sets KEY (one of those below), after the file\n"
        "  --repair-log\n"
        "      repairs a damaged log as above, and exits\n"
        "  --recover-ensemble\n"
        "      recovers the ensemble as above, and exits\n"
        "  --survivor=DIR\n"
        "      another survivor's dataDir, compared with this one's by\n"
        "      --recover-ensemble; may be given several times\n"
        "  --check-config\n"
        "      checks the configuration and prints every key's effective\n"
        "      value, touching nothing; exits 0, or 2 naming what is wrong\n"
        "      (the files it names, logFile and the TLS stores, are opened\n"
        "      only at a start)\n"
        "  -h, --help\n"
        "      this help; tumblerd(8) also has the signals, the files and\n"
        "      the exit statuses\n"
        "  -V, --version\n"
        "      prints the version\n"
        "\n"
        "Keys and their defaults:\n\n");
    for (i = 0; i < NKEYS; i++)
        tb_wbuf_printf(out, "  %s=%s\n      %s\n", keys[i].name, keys[i].def,
                       keys[i].help);
    tb_wbuf_printf(
        out,
        "  server.N=host:quorumPort:electionPort[:participant|:observer]"
        "[;[clientAddr:]clientPort]\n"
        "      a member of the ensemble, N its id (1..254), as ZooKeeper\n"
        "      writes it.  Peers speak Raft on the quorum port, over IPv4\n"
        "      only; on the election port a follower forwards writes to\n"
        "      the leader.  The client part of this server's own\n"
        "      line is where it listens (clientPort and clientPortAddress, if\n"
        "      set, must agree); a bare clientPort listens on 0.0.0.0, and\n"
        "      so does a member whose line has no client part, unless\n"
        "      clientPortAddress is set.\n"
        "      Without these lines the server runs alone.\n"
        "  dataDir/myid\n"
        "      not a key: ZooKeeper's file naming this server, its id alone\n"
        "      on the first line.  Read if present; with server.N lines\n"
        "      this server's id must come from it or from serverId (both:\n"
        "      they must agree) and be one of the lines' N.\n"
        "  authProvider.N=org.apache.zookeeper.server.auth."
        "SASLAuthenticationProvider\n"
        "      lets ACLs use the sasl scheme\n"
        "\nZooKeeper keys tumblerd does not act on (initLimit, syncLimit,\n"
        "forceSync, autopurge.*, ...) are accepted, and named with the\n"
        "reason in one warning at start-up; a few whose absence would\n"
        "matter (group.N, weight.N, dynamicConfigFile, and the\n"
        "quorum.auth.enableSasl, learnerRequireSasl and serverRequireSasl\n"
        "set to true) stop the start with the reason, and so does any\n"
        "other key.\n");
}

/* A secret's value is not printed, only whether one is set. */
static int is_secret(const struct key_def *k)
{
    return k->type == K_DIGEST || strstr(k->name, "assword") != NULL;
}

void tb_config_render_effective(const struct tb_config *cfg,
                                struct tb_wbuf *out)
{
    const struct key_def *k;
    const void *f;
    const char *str;
    size_t i;

    for (i = 0; i < NKEYS; i++) {
        k = &keys[i];
        f = (const char *)cfg + k->off;
        if (f == &cfg->client_port && cfg->client_port < 0)
            continue; /* none, as its absence beside secureClientPort says */
        tb_wbuf_printf(out, "%s=", k->name);
        switch (k->type) {
        case K_INT:
            tb_wbuf_printf(out, "%d\n", *(const int *)f);
            break;
        case K_I64:
            tb_wbuf_printf(out, "%" PRId64 "\n", *(const int64_t *)f);
            break;
        case K_BOOL:
            tb_wbuf_printf(out, "%s\n", *(const int *)f ? "true" : "false");
            break;
        case K_LEVEL:
            str = tb_log_level_name(*(const int *)f);
            for (; *str; str++)
                tb_wbuf_printf(out, "%c", *str - 'A' + 'a');
            tb_wbuf_printf(out, "\n");
            break;
        case K_FORMAT:
            tb_wbuf_printf(out, "%s\n", tb_log_format_name(*(const int *)f));
            break;
        default: /* the owned strings */
            str = *(char *const *)f;
            tb_wbuf_printf(out, "%s\n",
                           str == NULL ? ""
                           : is_secret(k) && *str ? "********"
                                                  : str);
            break;
        }
    }
    if (cfg->sasl_acls)
        tb_wbuf_printf(out, "authProvider.1=org.apache.zookeeper.server.auth."
                       "SASLAuthenticationProvider\n");
    for (i = 0; i < cfg->nservers; i++)
        tb_wbuf_printf(out, "server.%d=%s\n", cfg->servers[i].id,
                       cfg->servers[i].spec);
    if (cfg->ignored != NULL)
        tb_wbuf_printf(out, "# accepted and not acted on: %s\n", cfg->ignored);
}

void tb_config_render_conf(const struct tb_config *cfg,
                           const struct tb_config_members *m,
                           uint64_t data_dir_size, uint64_t data_log_size,
                           struct tb_wbuf *out)
{
    tb_wbuf_printf(out, "clientPort=%d\n", cfg->client_port);
    tb_wbuf_printf(out, "secureClientPort=%d\n",
                   cfg->tls.port ? cfg->tls.port : -1);
    tb_wbuf_printf(out, "dataDir=%s\n", cfg->data_dir);
    tb_wbuf_printf(out, "dataDirSize=%" PRIu64 "\n", data_dir_size);
    tb_wbuf_printf(out, "dataLogDir=%s\n", cfg->data_dir);
    tb_wbuf_printf(out, "dataLogSize=%" PRIu64 "\n", data_log_size);
    tb_wbuf_printf(out, "tickTime=%d\n", cfg->tick_time);
    tb_wbuf_printf(out, "maxClientCnxns=%d\n", cfg->max_client_cnxns);
    tb_wbuf_printf(out, "minSessionTimeout=%d\n", cfg->min_session_timeout);
    tb_wbuf_printf(out, "maxSessionTimeout=%d\n", cfg->max_session_timeout);
    tb_wbuf_printf(out, "clientPortListenBacklog=%d\n",
                   cfg->client_port_listen_backlog);
    tb_wbuf_printf(out, "serverId=%d\n", cfg->server_id);
    config__render_ensemble(cfg, m, out);
}
