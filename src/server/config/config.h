/* tumblerd's configuration: ZooKeeper zoo.cfg keys where they mean the same
 * thing, Tumbler's own keys beside them, and the command line on top.
 *
 * A zoo.cfg written for Apache ZooKeeper 3.8 works unchanged: keys that
 * ZooKeeper reads as Java system properties are accepted with or without
 * their "zookeeper." prefix, ZooKeeper keys tumblerd does not act on
 * (initLimit, syncLimit, forceSync, autopurge.* ...) are accepted and named,
 * each with why, in one warning at start-up, and a key neither knows
 * stops the start (a typo would otherwise leave a setting unmade without
 * a word).  Command-line overrides use the same key names
 * (`--tickTime=2000`, `--initLimit=10` too).
 * --check-config prints every key's effective value and exits.
 *
 * Defaults (ZooKeeper's where a key is ZooKeeper's; see tb_config_usage()):
 *   tickTime 2000 ms  (ZooKeeper's code says 3000, every sample zoo.cfg and
 *                      the doc's measurements use 2000; we use 2000)
 *   min/maxSessionTimeout  2 x / 20 x tickTime unless set
 *   extendedTypesEnabled   true  (ZooKeeper: false; TTL nodes allowed)
 * Nothing here does network I/O (host names in server.N lines are kept as
 * written, not resolved); parsing reads only the named file and
 * dataDir/myid (and, with datadir.autocreate=false, looks whether dataDir
 * is there). */
#ifndef TB_CONFIG_H
#define TB_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "common/common.h"

/* The text of this build's version, e.g. "0.1.0". */
const char *tb_config_version(void);

/* A member's role, as ZooKeeper names it: a participant votes (a raft
 * voter), an observer only follows the log. */
enum tb_config_role { TB_ROLE_PARTICIPANT, TB_ROLE_OBSERVER };

/* One `server.N=host:quorumPort:electionPort[:role][;[clientAddr:]clientPort]`
 * line, parsed as ZooKeeper 3.5+ reads it.  Peers speak Raft on the quorum
 * port; the election port is kept only because ZooKeeper's syntax needs it.
 * At all times host and spec are set, ports are 1..65535 and the two peer
 * ports differ; client_addr is NULL exactly when client_port is 0. */
struct tb_config_server {
    int id;                   /* N, 1..254 */
    char *host;               /* a name, IPv4 or IPv6, without brackets */
    int quorum_port;          /* Raft's port */
    int election_port;        /* followers forward writes to it (peer.h) */
    enum tb_config_role role; /* participant unless ":observer" */
    char *client_addr;        /* NULL: no client part; "0.0.0.0" for a
                                 bare ";clientPort", as ZooKeeper */
    int client_port;          /* 0: no client part */
    char *spec;               /* the value as written */
    char *where;              /* "FILE:LINE: server.N" or "--server.N",
                                 the start of a message about it */
    int line;                 /* its line in the file; 0: the command line */
};

/* An ensemble's members at one time: the server.N lines (version 0), or
 * those a reconfig applied, version being its zxid as /zookeeper/config's
 * "version=" line gives it. */
struct tb_config_members {
    const struct tb_config_server *v;
    size_t n;
    int64_t version;
};

/* The longest text tb_config_quorum_address() writes, with its NUL: a
 * 253-byte host in brackets, ':' and a port. */
#define TB_CONFIG_ADDR_MAX 262

/* Where a key got its value: "file:line", or the command line (line 0,
 * file NULL), or its default (line -1).  Used for error messages about
 * combinations of keys found only after everything is read. */
struct tb_config_origin {
    const char *file; /* borrowed when passed in; owned inside tb_config */
    int line;
};

/* All of tumblerd's settings.  After tb_config_init() every field holds its
 * default; after a successful tb_config_finish() (which
 * tb_config_parse_args() calls) the derived fields are resolved and at all
 * times 0 < min_session_timeout <= max_session_timeout.  Strings are owned
 * (tb_config_free()). */
struct tb_config {
    /* ZooKeeper keys */
    int tick_time;                 /* tickTime, ms */
    char *data_dir;                /* dataDir: raft log and snapshots */
    int data_dir_autocreate;       /* datadir.autocreate: 0 refuses a
                                      dataDir that does not exist */
    int client_port;               /* clientPort; 0: the OS picks one;
                                    * -1: none, the TLS port alone */
    char *client_port_address;     /* clientPortAddress, an IP literal */
    int client_port_listen_backlog;/* clientPortListenBacklog; -1: default */
    int max_client_cnxns;          /* maxClientCnxns per client IP; 0: no cap */
    int min_session_timeout;       /* minSessionTimeout, ms */
    int max_session_timeout;       /* maxSessionTimeout, ms */
    char *fourlw_whitelist;        /* 4lw.commands.whitelist, as written;
                                      admin/ knows the words it names */
    int jute_maxbuffer;            /* jute.maxbuffer: largest request frame */
    int max_outstanding;           /* globalOutstandingLimit, per connection */
    int snap_count;                /* snapCount: most entries between
                                      snapshots (the log's size in bytes
                                      may call one sooner) */
    int extended_types_enabled;    /* extendedTypesEnabled: TTL nodes */
    int reconfig_enabled;          /* reconfigEnabled: reconfig allowed */
    int join_ensemble;             /* joinEnsemble: added at run time */
    int enforce_quota;             /* enforceQuota: refuse writes over a
                                      hard quota limit */
    int container_check_interval_ms; /* znode.container.checkIntervalMs */
    int container_max_per_minute;  /* znode.container.maxPerMinute */
    char *super_digest;            /* DigestAuthenticationProvider.superDigest
                                      "user:base64(sha1)", or NULL */
    char *jaas_file;               /* java.security.auth.login.config: the
                                      SASL users, or NULL for no SASL */
    char *jaas_section;            /* sasl.serverconfig: its section, or
                                      NULL (set empty) for "Server" */
    char *sasl_super_user;         /* superUser: a SASL user, or NULL */
    int sasl_acls;                 /* authProvider.N names the SASL
                                      provider: "sasl" ACLs are valid */
    int enforce_auth;              /* enforce.auth.enabled (also set by
                                      sessionRequireClientSASLAuth) */
    char *enforce_auth_schemes;    /* enforce.auth.schemes; after
                                      tb_config_finish() "a,b" of known
                                      schemes if enforce_auth, else as
                                      written */
    unsigned enforce_auth_mask;    /* ... as TB_SCHEME_* bits, resolved by
                                      tb_config_finish(); 0: not enforced */
    int session_require_sasl;      /* sessionRequireClientSASLAuth */
    struct {                       /* the TLS port; net/tls.c reads the
                                      stores, Java's ssl.* keys say how */
        int port;                  /* secureClientPort; 0: none */
        char *address;             /* secureClientPortAddress, after
                                      tb_config_finish() never NULL if
                                      port: clientPortAddress by default */
        char *key_store, *key_password, *key_password_path, *key_type;
        char *trust_store, *trust_password, *trust_password_path,
            *trust_type;
        char *client_auth_name;    /* ssl.clientAuth as written */
        int client_auth;           /* ... resolved: TB_TLS_NONE.. */
        char *protocol, *protocols, *ciphersuites;
        char *super_user;          /* X509AuthenticationProvider.superUser */
        int cert_reload;           /* client.certReload: on file changes */
        int crl, ocsp, port_unification; /* not supported: must be false */
    } tls;
    struct {                       /* sslQuorum: TLS between members; the
                                      stores as ssl.*'s (peer/tunnel.c) */
        int enabled;               /* sslQuorum: connections made are TLS */
        int port_unification;      /* portUnification: connections taken
                                      may be TLS or plain (a move to or
                                      from sslQuorum, member by member) */
        char *key_store, *key_password, *key_password_path, *key_type;
        char *trust_store, *trust_password, *trust_password_path,
            *trust_type;
        char *protocol, *protocols, *ciphersuites;
        int hostname_verification; /* ssl.quorum.hostnameVerification */
        int reload;                /* sslQuorumReloadCertFiles: on file
                                      changes */
        char *client_auth_name;    /* ssl.quorum.clientAuth: need only */
        int crl, ocsp;             /* not supported: must be false */
    } quorum_tls;
    struct {                       /* metricsProvider.*: Prometheus */
        char *class_name;          /* className as written, or NULL */
        int enabled;               /* ... names PrometheusMetricsProvider
                                      (set by tb_config_finish()) */
        char *http_host;           /* httpHost */
        int http_port;             /* httpPort */
    } metrics;
    struct {                       /* admin.*: the AdminServer */
        int enabled;               /* enableServer */
        char *address;             /* serverAddress */
        int port;                  /* serverPort */
        char *command_url;         /* commandURL: "/..." without a
                                      trailing '/' after tb_config_finish() */
        int idle_timeout;          /* idleTimeout, ms */
    } admin;
    /* Tumbler keys */
    int server_id;                 /* serverId (ZooKeeper's myid), 1..254 */
    int election_timeout;          /* electionTimeout, ms (an ensemble's) */
    int heartbeat_interval;        /* heartbeatInterval, ms */
    int64_t min_free_disk_bytes;   /* minFreeDiskBytes: refuse writes below
                                      (the log keeps a floor of its own) */
    int log_level;                 /* logLevel: enum tb_log_level */
    char *log_file;                /* logFile: the log appended here, or
                                      NULL for stderr */
    int log_format;                /* logFormat: enum tb_log_format */
    int slow_request_ms;           /* slowRequestMs: log requests answered
                                      later than this; 0: none */

    /* server.N lines; after tb_config_finish() sorted by id, and, when
     * there are any, server_id is one of them (tb_config_self()) */
    struct tb_config_server *servers;
    size_t nservers;

    char *config_file;             /* the file loaded, or NULL */
    char *ignored;                 /* "key (why); ..." of the ZooKeeper keys
                                      set and not acted on, or NULL */
    int ignored_told;              /* ... logged (tb_config_finish) */
    int check_config;              /* --check-config: print, and exit */
    /* Called with 4lw.commands.whitelist's value and where it was set, as
     * the key is read, to warn of words nobody knows: admin/ knows them
     * (fourlw_whitelist_check), config only keeps the text.  NULL (after
     * tb_config_init()): not checked. */
    void (*check_4lw)(const char *value, const char *at);
    int repair_log;                /* --repair-log: cut a damaged log at its
                                      last good record, then exit */
    int recover_ensemble;          /* --recover-ensemble: make the server.N
                                      lines the log's members, then exit */
    char **survivors;              /* --survivor=DIR, each: another
                                      survivor's dataDir to compare with */
    size_t nsurvivors;
    int min_session_timeout_set;   /* explicitly set (not -1) */
    int max_session_timeout_set;
    struct tb_config_origin origin_min_to, origin_max_to;
    /* where these were set (line -1: their default), for the checks of an
     * ensemble: an id or client address given twice must agree */
    struct tb_config_origin origin_server_id, origin_client_port,
        origin_client_addr;
};

/* ssl.clientAuth: whether a TLS client must present a certificate. */
enum { TB_TLS_NONE, TB_TLS_WANT, TB_TLS_NEED };

/* The authentication schemes enforce.auth can name, as bits. */
enum {
    TB_SCHEME_DIGEST = 1,
    TB_SCHEME_IP = 2,
    TB_SCHEME_SASL = 4,
    TB_SCHEME_X509 = 8,
};
/* The next item of a comma-separated setting, without the blanks around
 * it, as Java's trim() leaves it: 1 and *item, or 0 at the end.  *list
 * walks the list and is NULL after its last item. */
int tb_config_list_next(const char **list, struct tb_str *item);

/* The bit of the scheme `name` (`len` bytes), 0 for any other. */
unsigned tb_config_scheme_bit(const char *name, size_t len);

/* Exit status hints from tb_config_parse_args(). */
enum {
    TB_CONFIG_RUN = 0,  /* start the server */
    TB_CONFIG_EXIT = 1, /* --help or --version was printed; exit 0 */
};

/* Fills every field with its default. */
void tb_config_init(struct tb_config *cfg);
void tb_config_free(struct tb_config *cfg);

/* Reads a zoo.cfg: `key=value` lines (or `key: value`, `key value`, as
 * Java's Properties reads them), whitespace around both trimmed, lines
 * starting with '#' or '!' and blank lines skipped, the last of repeated
 * keys winning.  On error returns TB_EINVAL (TB_EIO if the file cannot be
 * read) and writes "FILE:LINE: key: problem" into err. */
int tb_config_load_file(struct tb_config *cfg, const char *path, char *err,
                        size_t errlen);

/* Sets one key as if read at `origin` (file:line, or the command line when
 * origin is NULL or its file is NULL).  Returns 0; 1 if the key was ignored
 * (a ZooKeeper key tumblerd does not act on); TB_EINVAL with a message in
 * err for a bad value or an unknown key. */
int tb_config_set(struct tb_config *cfg, const char *key, const char *value,
                  const struct tb_config_origin *origin, char *err,
                  size_t errlen);

/* Whether tumblerd uses `key` (with or without "zookeeper."; server.N
 * included), as opposed to ignoring it. */
int tb_config_has_key(const char *key);

/* Resolves derived defaults (session timeouts from tickTime), reads
 * dataDir/myid if there is one (tb_config_read_myid(): a data directory
 * not made yet is no error unless datadir.autocreate is false), and
 * checks combinations (joinEnsemble needs server.N lines).  With server.N
 * lines it also refuses what no ensemble could run: no id for this server
 * (from myid or serverId), an id that is not among the lines, a myid and a
 * serverId that disagree, two lines with one host:quorumPort, no
 * participant, this server's quorum port equal to its client port or
 * secure client port, and a client part in this server's line that
 * disagrees with clientPort or clientPortAddress; a line's client part,
 * as in ZooKeeper, is then where this server listens for clients
 * (without one, and without clientPortAddress, a member listens on
 * 0.0.0.0, as ZooKeeper's does).
 * Returns 0 or TB_EINVAL (TB_EIO for a myid that cannot be read) with the
 * message in err, naming the key and where it was set. */
int tb_config_finish(struct tb_config *cfg, char *err, size_t errlen);

/* Parses the value of a `server.N` line into *s (its strings owned, freed
 * by tb_config_server_free()), as ZooKeeper's QuorumServer reads it:
 * IPv6 hosts in brackets, the role participant (the default) or observer
 * in any case, and the client part a port (on 0.0.0.0) or addr:port.
 * Stricter than ZooKeeper where it would accept what cannot work: a port
 * must be 1..65535 in plain digits, a host non-empty and a name or an IP
 * address, and "a|b" addresses are refused (ZooKeeper's default too).
 * `at` starts every message ("zoo.cfg:9: server.2").  Returns 0, TB_EINVAL
 * with the message in err, or TB_ENOMEM. */
int tb_config_server_parse(struct tb_config_server *s, int id, const char *spec,
                           const char *at, char *err, size_t errlen);
void tb_config_server_free(struct tb_config_server *s);

/* Reads DIR/myid, ZooKeeper's file naming this server: a decimal id
 * (1..254) alone on its first line, blanks around it allowed.  Returns 0
 * with *id set, 1 if there is no such file (nor directory), or TB_EINVAL
 * or TB_EIO with the message in err. */
int tb_config_read_myid(const char *dir, int *id, char *err, size_t errlen);

/* 1 if server.N lines make this server a member of an ensemble, 0 for a
 * standalone server.  Valid after tb_config_finish(). */
int tb_config_ensemble(const struct tb_config *cfg);
/* The members as ZooKeeper's /zookeeper/config holds them: a server.N
 * line each, then "version=0" (no newline after it). */
void tb_config_render_membership(const struct tb_config *cfg,
                                 struct tb_wbuf *out);
/* Just the server.N lines of `n` servers, each ending in a newline. */
void tb_config_render_servers(const struct tb_config_server *servers,
                              size_t n, struct tb_wbuf *out);

/* This server's own line (the one whose id is cfg->server_id), or NULL
 * for a standalone server.  Valid after tb_config_finish(). */
const struct tb_config_server *tb_config_self(const struct tb_config *cfg);

/* Writes "host:quorumPort", an IPv6 host in brackets, as the member's
 * raft address.  Returns 0, or TB_EINVAL if it does not fit in `n` bytes
 * (TB_CONFIG_ADDR_MAX always do). */
int tb_config_quorum_address(const struct tb_config_server *s, char *buf,
                             size_t n);
/* 1 if a and b name one quorum address: the same port, and the same IP
 * address however written ("::1", "0:0:0:0:0:0:0:1") or the same name. */
int tb_config_same_quorum(const struct tb_config_server *a,
                          const struct tb_config_server *b);
/* A member's addresses, by kind; tb_config_address_kind names them. */
enum { TB_ADDR_QUORUM, TB_ADDR_ELECTION, TB_ADDR_CLIENT };
extern const char *const tb_config_address_kind[3];
/* 1 if one of a's quorum, election and client addresses is one of b's
 * (a == b: another of its own), as ZooKeeper's checkAddressDuplicate
 * finds them, a loopback quorum or election address compared too (raft
 * takes no address twice, and servers on loopback share one machine), a
 * loopback or wildcard client address not (each machine has its own):
 * *ak and *bk get the kinds, `at` the address.  0 if none is. */
int tb_config_shared_address(const struct tb_config_server *a,
                             const struct tb_config_server *b, int *ak, int *bk,
                             char *at, size_t atlen);

/* The command line:  tumblerd [-c FILE | --config FILE | --config=FILE |
 * FILE] [--key=value ...] [--help] [--version].  The file is read first,
 * then every override in order, then tb_config_finish().  --help and
 * --version print to stdout and return TB_CONFIG_EXIT.  On error returns
 * TB_EINVAL (or TB_EIO) with a one-line message in err.  argv[0] is the
 * program name and is skipped. */
int tb_config_parse_args(struct tb_config *cfg, int argc, char **argv,
                         char *err, size_t errlen);

/* The --help text: usage, then every key with its default. */
void tb_config_usage(struct tb_wbuf *out);

/* The `conf` four-letter word, in ZooKeeper 3.8's layout: clientPort,
 * secureClientPort, dataDir, dataDirSize, dataLogDir, dataLogSize,
 * tickTime, maxClientCnxns, minSessionTimeout, maxSessionTimeout,
 * clientPortListenBacklog, serverId, one `key=value` line each.  The raft
 * log lives in dataDir, so dataLogDir repeats it.  Sizes are in bytes, as
 * measured by the caller.  In an ensemble then electionPort, quorumPort,
 * peerType (0 participant, 1 observer), "membership: " and the members in
 * ZooKeeper's dynamic-config form, ending with "version=" and no newline,
 * as ZooKeeper prints them: `m`, those applied now (NULL: the server.N
 * lines, version 0), this server's ports as they give them.  ZooKeeper's
 * initLimit, syncLimit and electionAlg lines are left out: they mean
 * nothing here. */
/* --check-config's text: every key's effective value, key=value, in the
 * key table's order (defaults applied, minSessionTimeout and the like
 * resolved; passwords and digests as ******** when set), then the
 * server.N lines and a comment naming the keys accepted and not acted
 * on. */
void tb_config_render_effective(const struct tb_config *cfg,
                                struct tb_wbuf *out);
void tb_config_render_conf(const struct tb_config *cfg,
                           const struct tb_config_members *m,
                           uint64_t data_dir_size, uint64_t data_log_size,
                           struct tb_wbuf *out);

/* clamp(requested, min, max), as ZooKeeper negotiates a session timeout. */
int tb_config_session_timeout(const struct tb_config *cfg, int requested);

#endif
