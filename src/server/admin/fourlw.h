/* ZooKeeper's four-letter words: recognising them, the whitelist, and their
 * text, byte for byte as Apache ZooKeeper 3.8 writes it, because monitoring
 * tools (zkServer.sh status, Prometheus exporters, Nagios checks, Curator's
 * ensemble tracker, the Java client's `isro` probe) parse that text.
 *
 * No sockets here.  net/ reads the first four bytes of a connection, asks
 * fourlw_lookup(), and if it is a word calls fourlw_execute() with a
 * struct fourlw_source of callbacks into the server; the answer lands in a
 * struct tb_wbuf, which net/ writes before closing the connection.
 *
 * The pieces are public too, so each format can be tested (and reused) on
 * plain data: fourlw_render_*() take filled structs; listings that ZooKeeper
 * prints with counts in their headers (dump) are produced through a
 * struct fourlw_emit, which the server's walk callback feeds item by item
 * and which writes the headers once the counts are known.  The server never
 * builds an array of its sessions or watches to answer a 4lw.
 *
 * Formats (3.8.0, checked against a running server; "\n" is LF):
 *   ruok  "imok"                               (no newline)
 *   isro  "rw" | "ro" | "null" when not serving (no newline)
 *   srvr  "Zookeeper version: V\nLatency min/avg/max: 0/2.1818/8\n
 *          Received: N\nSent: N\nConnections: N\nOutstanding: N\n
 *          Zxid: 0x6\nMode: standalone\nNode count: N\n"
 *   stat  srvr with "Clients:\n" + one connection per line + "\n" after
 *         the version line
 *   cons  one connection per line, then "\n"
 *   wchs  "C connections watching P paths\nTotal watches:W\n"
 *   wchc  "0x<sid>\n\t<path>\n..." then "\n"
 *   wchp  "<path>\n\t0x<sid>\n..." then "\n"
 *   dump  "SessionTracker dump:\nSession Sets (B)/(S):\n
 *          <n> expire at <date>:\n\t0x<sid>\n...
 *          ephemeral nodes dump:\nSessions with Ephemerals (N):\n
 *          0x<sid>:\n\t<path>\n...Connections dump:\n
 *          Connections Sets (B)/(C):\n<n> expire at <date>:\n
 *          \tip: /<addr>:<port> sessionId: 0x<sid>\n..."
 *   envi  "Environment:\nzookeeper.version=V\nhost.name=...\n..."
 *   conf  tb_config_render_conf(), then every other key's effective value
 *         as tb_config_render_effective() prints it
 *   dirs  "datadir_size: N\nlogdir_size: N\n"
 *   crst  "Connection stats reset.\n"     srst "Server stats reset.\n"
 *   gtmk  the trace mask in decimal     stmk the new mask in decimal
 * A word that is not whitelisted answers
 *   "<word> is not executed because it is not in the whitelist.\n"
 * and while the server is not serving (no leader), every word but ruok,
 * envi, gtmk, stmk and isro answers
 *   "This ZooKeeper instance is not currently serving requests\n". */
#ifndef TB_FOURLW_H
#define TB_FOURLW_H

#include <stddef.h>
#include <stdint.h>

#include "common/common.h"

struct tb_config;
struct fourlw_source;

/* X(ID, word): every word ZooKeeper 3.8 knows. */
#define FOURLW_COMMANDS(X)                                                  \
    X(RUOK, "ruok")                                                         \
    X(SRVR, "srvr")                                                         \
    X(STAT, "stat")                                                         \
    X(MNTR, "mntr")                                                         \
    X(CONS, "cons")                                                         \
    X(WCHS, "wchs")                                                         \
    X(WCHC, "wchc")                                                         \
    X(WCHP, "wchp")                                                         \
    X(DUMP, "dump")                                                         \
    X(CONF, "conf")                                                         \
    X(ENVI, "envi")                                                         \
    X(ISRO, "isro")                                                         \
    X(DIRS, "dirs")                                                         \
    X(CRST, "crst")                                                         \
    X(SRST, "srst")                                                         \
    X(GTMK, "gtmk")                                                         \
    X(STMK, "stmk")

#define FOURLW__ENUM(id, word) FOURLW_##id,
enum fourlw_cmd { FOURLW_COMMANDS(FOURLW__ENUM) FOURLW__COUNT };
#undef FOURLW__ENUM

/* Which command the first four bytes of a connection name, or -1.  Anything
 * else is a frame length to the caller (ZooKeeper closes an unknown word as
 * an oversized frame).  Case-sensitive, as ZooKeeper is. */
int fourlw_lookup(const uint8_t first4[4]);
/* "ruok" ... ; NULL for an id out of range. */
const char *fourlw_name(int cmd);

/* Bit for `cmd` in a whitelist mask. */
#define FOURLW_BIT(cmd) ((uint32_t)1 << (cmd))
#define FOURLW_ALL (FOURLW_BIT(FOURLW__COUNT) - 1)

/* Parses a 4lw.commands.whitelist value: words separated by commas, each
 * trimmed, "*" meaning every word.  srvr is always allowed (zkServer.sh
 * status depends on it), as in ZooKeeper.  A NULL spec is the default,
 * srvr alone.  Words this server does not know are skipped and counted in
 * *unknown (if not NULL); first_unknown (if not NULL, size cap) receives
 * the first of them for a warning. */
uint32_t fourlw_whitelist_parse(const char *spec, int *unknown,
                                char *first_unknown, size_t cap);
int fourlw_allowed(uint32_t mask, int cmd);
/* Logs a warning naming the first unknown word of `spec`, if it has any;
 * `at` says where it was set ("zoo.cfg:3: 4lw.commands.whitelist").  The
 * configuration calls it as the key is read (tb_config's check_4lw). */
void fourlw_whitelist_check(const char *spec, const char *at);

/* The version shown by srvr, stat, mntr and envi: ZooKeeper's "3.8.0-"
 * first, since tools parse the leading number, then Tumbler's own:
 * "3.8.0-tumbler-0.1.0, built on 2026-11-22 04:30 UTC". */
const char *fourlw_version(void);

/* The `lop` text ZooKeeper shows in `cons` for an opcode: "CREA", "GETD",
 * ... "NA" for an opcode that does not set one. */
const char *fourlw_op_name(int32_t opcode);

/* ---- data the server fills ------------------------------------------- */

/* Request latencies in ms.  min is shown as 0 while count is 0. */
struct fourlw_latency {
    uint64_t min, max, total, count;
};

/* srvr, stat, mntr, isro. */
struct fourlw_stats {
    const char *version;     /* NULL: fourlw_version() */
    const char *mode;        /* standalone|leader|follower|observer|read-only;
                                NULL: "standalone" */
    struct fourlw_latency latency;
    uint64_t packets_received, packets_sent;
    uint64_t connections;    /* open client connections, this one included */
    uint64_t outstanding;    /* requests received, not yet answered */
    uint64_t zxid;           /* last applied */
    uint64_t node_count;
    int read_only;           /* answers `isro` with "ro" and adds the
                                READ-ONLY line to srvr/stat */
    int has_proposal_sizes;  /* leaders: "Proposal sizes last/min/max" */
    int64_t proposal_last, proposal_min, proposal_max;
};

/* One client connection, for stat (brief) and cons (full).  The full form
 * is printed only once a session is attached (sid != 0), as ZooKeeper
 * does.  Times are milliseconds: `est` on the wall clock, `lresp` on the
 * clock the server keeps for responses (ZooKeeper: a monotonic one). */
struct fourlw_conn {
    const char *addr;        /* numeric IP; IPv6 is shown in brackets */
    int port;
    unsigned interest;       /* 1 reading, 4 writing (NIO's bits); hex */
    uint64_t queued, recved, sent;
    int64_t sid;
    const char *lop;         /* fourlw_op_name(last opcode); NULL: "NA" */
    int64_t est;
    int32_t to;              /* negotiated session timeout */
    int64_t lcxid;           /* last xid; omitted while < 0 */
    int64_t lzxid;           /* last zxid; -1 prints ffffffffffffffff */
    int64_t lresp;
    int64_t llat;            /* latency of the last request */
    struct fourlw_latency latency; /* avglat = total / count, integral */
};

/* mntr, beyond what fourlw_stats carries. */
struct fourlw_mntr {
    uint64_t watch_count;          /* data + child watches */
    uint64_t ephemerals_count;
    uint64_t approximate_data_size;/* bytes of paths and data */
    uint64_t open_fds, max_fds;    /* fourlw_fd_counts() */
    uint64_t global_sessions, local_sessions;
    uint64_t uptime_ms;
};

/* wchs.  ZooKeeper counts data watches only here (its WatchManager for
 * data); child watches appear in mntr's zk_watch_count. */
struct fourlw_watch_summary {
    uint64_t connections; /* connections with at least one watch */
    uint64_t paths;       /* distinct watched paths */
    uint64_t watches;     /* (connection, path) pairs */
};

/* envi.  ZooKeeper prints JVM properties; this prints the process's
 * equivalents and leaves out java.*.  Memory in bytes, printed in MB:
 * free = memory available on the host, max = the most this process may
 * use (its address-space limit, or the host's RAM), total = resident. */
struct fourlw_env {
    char host_name[256];
    char os_name[65], os_arch[65], os_version[65];
    char user_name[256], user_home[1024], user_dir[1024];
    uint64_t mem_free, mem_max, mem_total;
};

/* Reads the above from the system (uname, getpwuid, getcwd, sysinfo,
 * getrlimit, /proc/self/statm).  Fields that cannot be read become "" or 0. */
void fourlw_env_collect(struct fourlw_env *env);
/* Open descriptors (/proc/self/fd) and RLIMIT_NOFILE, for mntr. */
void fourlw_fd_counts(uint64_t *open_fds, uint64_t *max_fds);

/* ---- listings fed by the server's walk callbacks ---------------------- */

enum fourlw_list_kind {
    FOURLW_LIST_CONNS_BRIEF,   /* stat:  conn()* */
    FOURLW_LIST_CONNS_FULL,    /* cons:  conn()* */
    FOURLW_LIST_WATCH_BY_SID,  /* wchc:  (session() path()*)* */
    FOURLW_LIST_WATCH_BY_PATH, /* wchp:  (path() session()*)* */
    FOURLW_LIST_SESSIONS,      /* dump:  (bucket() session()*)*  */
    FOURLW_LIST_EPHEMERALS,    /* dump:  (session() path()*)* */
    FOURLW_LIST_CNXN_EXPIRY,   /* dump:  (bucket() conn_id()*)* */
    FOURLW_LIST_METRICS,       /* mntr:  metric_*()* */
};

/* One mntr figure: "zk_" + (ns + "_" if ns) + key, and its value. */
enum fourlw_metric_type { FOURLW_METRIC_INT, FOURLW_METRIC_DOUBLE,
                          FOURLW_METRIC_STR };
struct fourlw_metric {
    const char *key;
    struct tb_str ns;   /* a quota namespace or "server.N"; empty: none */
    enum fourlw_metric_type type;
    int64_t i;
    double d;           /* FOURLW_METRIC_DOUBLE; avg_latency's is total/count */
    const char *s;
};

/* What a listing's items are given to instead of the text, when another
 * rendering (the AdminServer's JSON, Prometheus) wants the same walk: each
 * fourlw_emit_*() call is handed on as it comes, and nothing is written.
 * Every member may be NULL (that item is skipped). */
struct fourlw_sink {
    void *arg;
    void (*conn)(void *arg, const struct fourlw_conn *c);
    void (*session)(void *arg, int64_t sid);
    void (*path)(void *arg, const char *path, size_t len);
    void (*bucket)(void *arg, int64_t expire_wall_ms);
    void (*conn_id)(void *arg, const char *addr, int port, int64_t sid);
    void (*metric)(void *arg, const struct fourlw_metric *m);
};

/* Collects one listing.  Items after their group are buffered until the
 * group ends, so headers can carry counts.  Calls that do not belong to the
 * listing's kind (or an item before any group) are ignored.  Fields are
 * private to fourlw, but for `sink`, which a caller may set after
 * fourlw_emit_init(): the items then go there and out is left alone. */
struct fourlw_emit {
    const struct fourlw_sink *sink;
    enum fourlw_list_kind kind;
    struct tb_wbuf *out;
    struct tb_wbuf body;   /* the listing so far, groups complete */
    struct tb_wbuf group;  /* items of the open group */
    int in_group;
    int64_t group_key;     /* sid or expiry time of the open group */
    uint64_t group_items;
    uint64_t groups, items;
};

void fourlw_emit_init(struct fourlw_emit *e, enum fourlw_list_kind kind,
                      struct tb_wbuf *out);
/* Writes the listing (headers and all) to out and frees the buffers. */
void fourlw_emit_finish(struct fourlw_emit *e);

/* A connection's statistics (stat, cons). */
void fourlw_emit_conn(struct fourlw_emit *e, const struct fourlw_conn *c);
/* A session id: a group in wchc and the ephemerals, an item in wchp and
 * the session buckets. */
void fourlw_emit_session(struct fourlw_emit *e, int64_t sid);
/* A path: an item in wchc and the ephemerals, a group in wchp. */
void fourlw_emit_path(struct fourlw_emit *e, const char *path, size_t len);
/* An expiry bucket (wall-clock ms), printed as Java's Date in UTC. */
void fourlw_emit_bucket(struct fourlw_emit *e, int64_t expire_wall_ms);
/* A connection in its expiry bucket. */
void fourlw_emit_conn_id(struct fourlw_emit *e, const char *addr, int port,
                         int64_t sid);
/* Extra mntr lines, "zk_" + key, TAB, value. */
void fourlw_emit_metric_int(struct fourlw_emit *e, const char *key,
                            int64_t value);
void fourlw_emit_metric_double(struct fourlw_emit *e, const char *key,
                               double value);
void fourlw_emit_metric_str(struct fourlw_emit *e, const char *key,
                            const char *value);
/* "zk_" + ns + "_" + key, TAB, value: a metric of one quota namespace. */
void fourlw_emit_ns_metric(struct fourlw_emit *e, struct tb_str ns,
                           const char *key, int64_t value);
/* ZooKeeper's average latency (fourlw_format_avg in text). */
void fourlw_emit_metric_avg(struct fourlw_emit *e, const char *key,
                            uint64_t total, uint64_t count);
/* Every mntr line, base and extra, into e (a FOURLW_LIST_METRICS listing):
 * mntr's text, and every other view of the same figures, come from here. */
void fourlw_emit_mntr(const struct fourlw_source *src, struct fourlw_emit *e);

/* ---- renderers on plain data ------------------------------------------ */

void fourlw_render_srvr(struct tb_wbuf *out, const struct fourlw_stats *s);
/* stat: `conns` is a finished FOURLW_LIST_CONNS_BRIEF listing's text. */
void fourlw_render_stat(struct tb_wbuf *out, const struct fourlw_stats *s,
                        const uint8_t *conns, size_t conns_len);
void fourlw_render_conn(struct tb_wbuf *out, const struct fourlw_conn *c,
                        int brief);
void fourlw_render_mntr(struct tb_wbuf *out, const struct fourlw_stats *s,
                        const struct fourlw_mntr *m);
/* The lines of fourlw_render_mntr, as emit calls. */
void fourlw_emit_mntr_base(struct fourlw_emit *e, const struct fourlw_stats *s,
                           const struct fourlw_mntr *m);
void fourlw_render_wchs(struct tb_wbuf *out,
                        const struct fourlw_watch_summary *w);
void fourlw_render_envi(struct tb_wbuf *out, const char *version,
                        const struct fourlw_env *env);
void fourlw_render_dirs(struct tb_wbuf *out, uint64_t data_dir_size,
                        uint64_t log_dir_size);
void fourlw_render_not_allowed(struct tb_wbuf *out, int cmd);
void fourlw_render_not_serving(struct tb_wbuf *out);
/* ZooKeeper's average latency: the double total/count rounded half up to
 * 4 decimals (BigDecimal), printed by Double.toString ("2.1818", "0.0",
 * "3.5", "1.0E-4").  Writes into buf (cap >= 32); returns buf. */
char *fourlw_format_avg(char *buf, size_t cap, uint64_t total, uint64_t count);
/* That figure, as a double (2.1818): every view of an average shows it. */
double fourlw_avg(uint64_t total, uint64_t count);
/* Java's Double.toString: shortest digits that read back, plain between
 * 1e-3 and 1e7 ("0.5", "12.0"), scientific outside ("1.0E-4").  (Java 17
 * sometimes prints one digit more than needed above 1e16; we do not.) */
void fourlw_format_double(char *buf, size_t cap, double v);
/* Java's Date.toString in UTC: "Sun Nov 22 04:26:58 UTC 2026". */
size_t fourlw_format_date(char *buf, size_t cap, int64_t wall_ms);

/* ---- the dispatcher ---------------------------------------------------- */

/* The server's side.  Every callback but stats may be NULL: its listing is
 * then empty (or its counters 0).  Walk callbacks call fourlw_emit_*() in
 * the order their listing's kind states. */
struct fourlw_source {
    void *data;
    const struct tb_config *cfg;  /* conf; whitelist (cfg->fourlw_whitelist) */
    int (*serving)(void *data);   /* NULL: always serving */
    void (*stats)(void *data, struct fourlw_stats *out);
    void (*mntr)(void *data, struct fourlw_mntr *out);
    void (*mntr_extra)(void *data, struct fourlw_emit *e);
    void (*conns)(void *data, struct fourlw_emit *e);
    void (*watch_summary)(void *data, struct fourlw_watch_summary *out);
    void (*watches_by_session)(void *data, struct fourlw_emit *e);
    void (*watches_by_path)(void *data, struct fourlw_emit *e);
    void (*session_buckets)(void *data, struct fourlw_emit *e);
    void (*ephemerals)(void *data, struct fourlw_emit *e);
    void (*conn_buckets)(void *data, struct fourlw_emit *e);
    void (*dir_sizes)(void *data, uint64_t *data_dir, uint64_t *log_dir);
    /* The members now (after a reconfig, its); NULL: cfg's server.N. */
    struct tb_config_members (*members)(void *data);
    void (*env)(void *data, struct fourlw_env *out); /* NULL: collect */
    void (*reset_conn_stats)(void *data);
    void (*reset_server_stats)(void *data);
    uint64_t (*get_trace_mask)(void *data);          /* NULL: 0 */
    void (*set_trace_mask)(void *data, uint64_t mask);
    /* An ensemble's leader as this server knows it: its id (0: none
     * known) and whether it is this one; -1 standalone (NULL: -1).  Read by
     * the AdminServer's `leader`. */
    int (*leader)(void *data, int *is_self);
};

/* The members now: src->members's, else cfg's server.N lines (version
 * 0), else none. */
struct tb_config_members fourlw_members(const struct fourlw_source *src);

/* Answers `cmd` into out, checking the whitelist first.  `arg` is stmk's
 * 8-byte big-endian mask (the caller reads it after the word); ignored
 * otherwise.  Returns 0, or TB_EINVAL for an unknown cmd (out untouched).
 * The caller closes the connection once out is written. */
int fourlw_execute(const struct fourlw_source *src, int cmd, uint64_t arg,
                   struct tb_wbuf *out);

#endif
