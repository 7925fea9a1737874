/* The AdminServer's commands (adminsrv.h).  Names, aliases and fields are
 * ZooKeeper 3.8's (org.apache.zookeeper.server.admin.Commands); a field
 * whose figure Tumbler does not have is given ZooKeeper's value for "none"
 * (-1 buffer sizes, fsync_threshold_exceed_count 0: the log always syncs
 * and keeps no threshold). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "server/admin/adminsrv.h"
#include "server/admin/fourlw.h"
#include "server/config/config.h"

struct ctx {
    const struct fourlw_source *src;
    struct json *j;
    adminsrv_arg_fn arg;
    void *argctx;
    const char *error;    /* NULL: none */
    int brief;            /* connections: stat's short form */
    int open;             /* a listing's group (array) is open */
};

/* ---- shared pieces ----------------------------------------------------- */

static void get_stats(const struct fourlw_source *src, struct fourlw_stats *s)
{
    memset(s, 0, sizeof *s);
    if (src->stats != NULL)
        src->stats(src->data, s);
}

static void walk(struct ctx *c, enum fourlw_list_kind kind,
                 void (*fn)(void *, struct fourlw_emit *),
                 const struct fourlw_sink *sink)
{
    struct fourlw_emit e;
    struct tb_wbuf unused;

    tb_wbuf_init(&unused);
    fourlw_emit_init(&e, kind, &unused);
    e.sink = sink;
    if (fn != NULL)
        fn(c->src->data, &e);
    fourlw_emit_finish(&e);
    tb_wbuf_free(&unused);
    if (c->open) {
        json_end(c->j);
        c->open = 0;
    }
}

/* A listing's group: a key and the array of its items. */
static void group(struct ctx *c, const char *key)
{
    if (c->open)
        json_end(c->j);
    json_key(c->j, key);
    json_array(c->j);
    c->open = 1;
}

static void kv_int(struct json *j, const char *key, int64_t v)
{
    json_key(j, key);
    json_int(j, v);
}

static void kv_str(struct json *j, const char *key, const char *v)
{
    json_key(j, key);
    json_str(j, v);
}

static void kv_bool(struct json *j, const char *key, int v)
{
    json_key(j, key);
    json_bool(j, v);
}

static void kv_avg(struct json *j, const char *key,
                   const struct fourlw_latency *l)
{
    char avg[40];

    fourlw_format_avg(avg, sizeof avg, l->total, l->count);
    json_key(j, key);
    json_raw(j, avg, strlen(avg)); /* Java's double: "0.0", "2.1818" */
}

static void buffer_sizes(struct json *j, const char *key, int64_t last,
                         int64_t min, int64_t max)
{
    json_key(j, key);
    json_object(j);
    kv_int(j, "last_buffer_size", last);
    kv_int(j, "min_buffer_size", min);
    kv_int(j, "max_buffer_size", max);
    json_end(j);
}

/* "key=value" lines (conf, envi) as fields; camelCase keys in snake_case
 * (clientPort -> client_port, as ZooKeeper's conf answer names them) when
 * `snake`; integers as numbers. */
static void text_fields(struct json *j, const char *text, size_t len,
                        int snake)
{
    const char *p = text, *end = text + len, *eol, *eq, *v;
    char key[128];
    size_t k, i;

    for (; p < end; p = eol + 1) {
        if ((eol = memchr(p, '\n', (size_t)(end - p))) == NULL)
            eol = end;
        if ((eq = memchr(p, '=', (size_t)(eol - p))) == NULL)
            continue;
        for (k = 0, i = 0; p + i < eq && k + 2 < sizeof key; i++) {
            char ch = p[i];
            if (snake && ch >= 'A' && ch <= 'Z') {
                if (k > 0)
                    key[k++] = '_';
                ch = (char)(ch - 'A' + 'a');
            }
            key[k++] = ch;
        }
        json_keyn(j, key, k);
        v = eq + 1;
        for (i = v < eol && *v == '-'; v + i < eol; i++)
            if (v[i] < '0' || v[i] > '9')
                break;
        /* JSON has no leading zero (007 stays text), and the membership's
         * version is hexadecimal, as its file writes it. */
        if (v + i == eol && i > (size_t)(*v == '-') && i < 19 &&
            (v[*v == '-'] != '0' || i == (size_t)(*v == '-') + 1) &&
            !(k == 7 && memcmp(key, "version", 7) == 0))
            json_raw(j, v, (size_t)(eol - v));
        else
            json_strn(j, v, (size_t)(eol - v));
    }
}

/* ---- commands ---------------------------------------------------------- */

static void on_conn(void *arg, const struct fourlw_conn *f)
{
    struct ctx *c = arg;
    struct json *j = c->j;
    const struct fourlw_latency *l = &f->latency;
    char addr[96];

    /* As Jackson writes an InetSocketAddress: IPv6 in brackets. */
    snprintf(addr, sizeof addr,
             f->addr != NULL && strchr(f->addr, ':') ? "[%s]:%d" : "%s:%d",
             f->addr != NULL ? f->addr : "", f->port);
    json_object(j);
    kv_str(j, "remote_socket_address", addr);
    kv_int(j, "interest_ops", f->interest);
    kv_int(j, "outstanding_requests", (int64_t)f->queued);
    kv_int(j, "packets_received", (int64_t)f->recved);
    kv_int(j, "packets_sent", (int64_t)f->sent);
    if (!c->brief) { /* with no session yet too, unlike the text's */
        kv_int(j, "session_id", f->sid);
        kv_str(j, "last_operation", f->lop ? f->lop : "NA");
        kv_int(j, "established", f->est);
        kv_int(j, "session_timeout", f->to);
        kv_int(j, "last_cxid", f->lcxid);
        kv_int(j, "last_zxid", f->lzxid);
        kv_int(j, "last_response_time", f->lresp);
        kv_int(j, "last_latency", f->llat);
        kv_int(j, "min_latency", l->count ? (int64_t)l->min : 0);
        kv_int(j, "avg_latency",
               l->count ? (int64_t)(l->total / l->count) : 0);
        kv_int(j, "max_latency", (int64_t)l->max);
    }
    json_end(j);
}

static void connections(struct ctx *c, int brief)
{
    struct fourlw_sink sink = {.arg = c, .conn = on_conn};

    c->brief = brief;
    json_key(c->j, "connections");
    json_array(c->j);
    walk(c, brief ? FOURLW_LIST_CONNS_BRIEF : FOURLW_LIST_CONNS_FULL,
         c->src->conns, &sink);
    json_end(c->j);
}

static void server_stats(struct ctx *c)
{
    const struct fourlw_source *src = c->src;
    struct json *j = c->j;
    struct fourlw_stats s;
    struct fourlw_mntr m;
    uint64_t data_dir = 0, log_dir = 0;

    get_stats(src, &s);
    memset(&m, 0, sizeof m);
    if (src->mntr != NULL)
        src->mntr(src->data, &m);
    if (src->dir_sizes != NULL)
        src->dir_sizes(src->data, &data_dir, &log_dir);
    kv_str(j, "version", s.version ? s.version : fourlw_version());
    kv_bool(j, "read_only", s.read_only);
    json_key(j, "server_stats");
    json_object(j);
    kv_int(j, "packets_sent", (int64_t)s.packets_sent);
    kv_int(j, "packets_received", (int64_t)s.packets_received);
    kv_int(j, "fsync_threshold_exceed_count", 0);
    buffer_sizes(j, "client_response_stats", -1, -1, -1);
    kv_int(j, "data_dir_size", (int64_t)data_dir);
    kv_int(j, "log_dir_size", (int64_t)log_dir);
    kv_int(j, "last_processed_zxid", (int64_t)s.zxid);
    kv_int(j, "outstanding_requests", (int64_t)s.outstanding);
    kv_str(j, "server_state", s.mode ? s.mode : "standalone");
    kv_avg(j, "avg_latency", &s.latency);
    kv_int(j, "max_latency", (int64_t)s.latency.max);
    kv_int(j, "min_latency",
           s.latency.count ? (int64_t)s.latency.min : 0);
    kv_int(j, "num_alive_client_connections", (int64_t)s.connections);
    kv_bool(j, "provider_null", 0);
    kv_int(j, "uptime", (int64_t)m.uptime_ms);
    /* ZooKeeper 3.8's counts of failed logins and of TLS connections
     * without a client certificate: not kept here */
    kv_int(j, "auth_failed_count", 0);
    kv_int(j, "non_mtlsremote_conn_count", 0);
    kv_int(j, "non_mtlslocal_conn_count", 0);
    json_end(j);
    buffer_sizes(j, "client_response", -1, -1, -1);
    if (s.has_proposal_sizes)
        buffer_sizes(j, "proposal_stats", s.proposal_last, s.proposal_min,
                     s.proposal_max);
    kv_int(j, "node_count", (int64_t)s.node_count);
}

static void cmd_srvr(struct ctx *c)
{
    server_stats(c);
}

/* TLS connections are listed with the others in `connections`. */
static void no_secure_connections(struct ctx *c)
{
    json_key(c->j, "secure_connections");
    json_array(c->j);
    json_end(c->j);
}

static void cmd_stat(struct ctx *c)
{
    server_stats(c);
    connections(c, 1);
    no_secure_connections(c);
}

static void cmd_cons(struct ctx *c)
{
    connections(c, 0);
    no_secure_connections(c);
}

static void on_metric(void *arg, const struct fourlw_metric *m)
{
    struct ctx *c = arg;
    struct tb_wbuf key; /* a namespace's name may be of any length */

    tb_wbuf_init(&key);
    if (m->ns.len > 0)
        tb_wbuf_printf(&key, "%.*s_", (int)m->ns.len, m->ns.ptr);
    tb_wbuf_printf(&key, "%s", m->key);
    json_keyn(c->j, (const char *)key.base, key.len);
    c->j->out->oom |= key.oom;
    tb_wbuf_free(&key);
    switch (m->type) {
    case FOURLW_METRIC_INT: json_int(c->j, m->i); break;
    case FOURLW_METRIC_DOUBLE: json_double(c->j, m->d); break;
    case FOURLW_METRIC_STR: json_str(c->j, m->s); break;
    }
}

static void cmd_mntr(struct ctx *c)
{
    struct fourlw_sink sink = {.arg = c, .metric = on_metric};
    struct fourlw_emit e;
    struct tb_wbuf unused;

    tb_wbuf_init(&unused);
    fourlw_emit_init(&e, FOURLW_LIST_METRICS, &unused);
    e.sink = &sink;
    fourlw_emit_mntr(c->src, &e);
    fourlw_emit_finish(&e);
    tb_wbuf_free(&unused);
}

static void cmd_conf(struct ctx *c)
{
    uint64_t data_dir = 0, log_dir = 0;
    struct tb_config_members m;
    struct tb_wbuf text;

    if (c->src->cfg == NULL) {
        c->error = "no configuration";
        return;
    }
    if (c->src->dir_sizes != NULL)
        c->src->dir_sizes(c->src->data, &data_dir, &log_dir);
    m = fourlw_members(c->src);
    tb_wbuf_init(&text);
    tb_config_render_conf(c->src->cfg, &m, data_dir, log_dir, &text);
    text_fields(c->j, (const char *)text.base, text.len, 1);
    /* Beside ZooKeeper's fields, every key's effective value, as
     * --check-config prints them (secrets hidden). */
    text.len = 0;
    tb_config_render_effective(c->src->cfg, &text);
    json_key(c->j, "tumbler_config");
    json_object(c->j);
    text_fields(c->j, (const char *)text.base, text.len, 0);
    json_end(c->j);
    c->j->out->oom |= text.oom;
    tb_wbuf_free(&text);
}

static void cmd_envi(struct ctx *c)
{
    struct fourlw_env env;
    struct tb_wbuf text;

    memset(&env, 0, sizeof env);
    if (c->src->env != NULL)
        c->src->env(c->src->data, &env);
    else
        fourlw_env_collect(&env);
    tb_wbuf_init(&text);
    fourlw_render_envi(&text, NULL, &env);
    text_fields(c->j, (const char *)text.base, text.len, 0);
    c->j->out->oom |= text.oom;
    tb_wbuf_free(&text);
}

static void on_bucket(void *arg, int64_t at)
{
    char key[32];

    snprintf(key, sizeof key, "%" PRId64, at);
    group(arg, key);
}

static void on_session_item(void *arg, int64_t sid)
{
    struct ctx *c = arg;

    if (c->open)
        json_int(c->j, sid);
}

static void on_session_group(void *arg, int64_t sid)
{
    char key[32];

    snprintf(key, sizeof key, "%" PRId64, sid);
    group(arg, key);
}

static void on_path_item(void *arg, const char *path, size_t len)
{
    struct ctx *c = arg;

    if (c->open)
        json_strn(c->j, path, len);
}

static void on_path_group(void *arg, const char *path, size_t len)
{
    struct ctx *c = arg;

    if (c->open)
        json_end(c->j);
    json_keyn(c->j, path, len);
    json_array(c->j);
    c->open = 1;
}

/* "key": { walk's groups }. */
static void listing(struct ctx *c, const char *key, enum fourlw_list_kind kind,
                    void (*fn)(void *, struct fourlw_emit *),
                    const struct fourlw_sink *sink)
{
    json_key(c->j, key);
    json_object(c->j);
    walk(c, kind, fn, sink);
    json_end(c->j);
}

static void cmd_dump(struct ctx *c)
{
    struct fourlw_sink by_time = {.arg = c, .bucket = on_bucket,
                                  .session = on_session_item};
    struct fourlw_sink ephs = {.arg = c, .session = on_session_group,
                               .path = on_path_item};

    listing(c, "expiry_time_to_session_ids", FOURLW_LIST_SESSIONS,
            c->src->session_buckets, &by_time);
    listing(c, "session_id_to_ephemeral_paths", FOURLW_LIST_EPHEMERALS,
            c->src->ephemerals, &ephs);
}

static void cmd_wchc(struct ctx *c)
{
    struct fourlw_sink sink = {.arg = c, .session = on_session_group,
                               .path = on_path_item};

    listing(c, "session_id_to_watched_paths", FOURLW_LIST_WATCH_BY_SID,
            c->src->watches_by_session, &sink);
}

static void cmd_wchp(struct ctx *c)
{
    struct fourlw_sink sink = {.arg = c, .path = on_path_group,
                               .session = on_session_item};

    listing(c, "path_to_session_ids", FOURLW_LIST_WATCH_BY_PATH,
            c->src->watches_by_path, &sink);
}

static void cmd_wchs(struct ctx *c)
{
    struct fourlw_watch_summary w;

    memset(&w, 0, sizeof w);
    if (c->src->watch_summary != NULL)
        c->src->watch_summary(c->src->data, &w);
    kv_int(c->j, "num_connections", (int64_t)w.connections);
    kv_int(c->j, "num_paths", (int64_t)w.paths);
    kv_int(c->j, "num_total_watches", (int64_t)w.watches);
}

static const struct tb_config_server *member(const struct fourlw_source *src,
                                             int id)
{
    struct tb_config_members m = fourlw_members(src);
    size_t i;

    for (i = 0; i < m.n; i++)
        if (m.v[i].id == id)
            return &m.v[i];
    return NULL;
}

static void cmd_leader(struct ctx *c)
{
    const struct tb_config_server *m;
    int self = 0,
        id = c->src->leader ? c->src->leader(c->src->data, &self) : -1;

    if (id < 0) {
        c->error = "server is not initialized";
        return;
    }
    kv_bool(c->j, "is_leader", self);
    kv_int(c->j, "leader_id", id);
    m = member(c->src, id);
    kv_str(c->j, "leader_ip", m != NULL ? m->host : "");
}

/* host:quorumPort:electionPort:participant[;clientAddress:clientPort] */
static void cmd_voting_view(struct ctx *c)
{
    struct tb_config_members all = fourlw_members(c->src);
    const struct tb_config_server *m;
    struct tb_wbuf v;
    char id[16];
    size_t i;

    json_key(c->j, "current_config");
    json_object(c->j);
    tb_wbuf_init(&v);
    for (i = 0; i < all.n; i++) {
        m = &all.v[i];
        if (m->role == TB_ROLE_OBSERVER)
            continue;
        v.len = 0;
        tb_wbuf_printf(&v, strchr(m->host, ':') ? "[%s]" : "%s", m->host);
        tb_wbuf_printf(&v, ":%d:%d:participant", m->quorum_port,
                       m->election_port);
        if (m->client_addr != NULL)
            tb_wbuf_printf(&v, strchr(m->client_addr, ':') ? ";[%s]:%d"
                                                           : ";%s:%d",
                           m->client_addr, m->client_port);
        snprintf(id, sizeof id, "%d", m->id);
        json_key(c->j, id);
        json_strn(c->j, (const char *)v.base, v.len);
    }
    c->j->out->oom |= v.oom;
    tb_wbuf_free(&v);
    json_end(c->j);
}

static void cmd_dirs(struct ctx *c)
{
    uint64_t data_dir = 0, log_dir = 0;

    if (c->src->dir_sizes != NULL)
        c->src->dir_sizes(c->src->data, &data_dir, &log_dir);
    kv_int(c->j, "datadir_size", (int64_t)data_dir);
    kv_int(c->j, "logdir_size", (int64_t)log_dir);
}

static void cmd_isro(struct ctx *c)
{
    struct fourlw_stats s;

    get_stats(c->src, &s);
    kv_bool(c->j, "read_only", s.read_only);
}

static void cmd_gtmk(struct ctx *c)
{
    kv_int(c->j, "tracemask",
           c->src->get_trace_mask
               ? (int64_t)c->src->get_trace_mask(c->src->data)
               : 0);
}

static void cmd_stmk(struct ctx *c)
{
    const char *v = c->arg ? c->arg(c->argctx, "traceMask") : NULL;
    char *end;
    long long mask;

    if (v == NULL) {
        c->error = "setTraceMask requires long traceMask argument";
        return;
    }
    errno = 0;
    mask = strtoll(v, &end, 10);
    if (*v == '\0' || *end != '\0' || errno != 0) {
        c->error = "setTraceMask requires long traceMask argument";
        return;
    }
    if (c->src->set_trace_mask != NULL)
        c->src->set_trace_mask(c->src->data, (uint64_t)mask);
    kv_int(c->j, "tracemask", mask);
}

static void cmd_crst(struct ctx *c)
{
    if (c->src->reset_conn_stats != NULL)
        c->src->reset_conn_stats(c->src->data);
}

static void cmd_srst(struct ctx *c)
{
    if (c->src->reset_server_stats != NULL)
        c->src->reset_server_stats(c->src->data);
}

static void cmd_ruok(struct ctx *c)
{
    (void)c;
}

/* Names (the primary first), whether it needs a serving server (as
 * ZooKeeper's isServerRequired), and what it writes. */
static const struct command {
    const char *names[4];
    int needs_server;
    void (*run)(struct ctx *c);
} commands[] = {
    {{"configuration", "conf", "config"}, 1, cmd_conf},
    {{"connection_stat_reset", "crst"}, 1, cmd_crst},
    {{"connections", "cons"}, 1, cmd_cons},
    {{"dirs"}, 1, cmd_dirs},
    {{"dump"}, 1, cmd_dump},
    {{"environment", "env", "envi"}, 0, cmd_envi},
    {{"get_trace_mask", "gtmk"}, 0, cmd_gtmk},
    {{"is_read_only", "isro"}, 1, cmd_isro},
    {{"leader", "lead"}, 1, cmd_leader},
    {{"monitor", "mntr"}, 0, cmd_mntr},
    {{"ruok"}, 1, cmd_ruok},
    {{"server_stats", "srvr"}, 1, cmd_srvr},
    {{"set_trace_mask", "stmk"}, 0, cmd_stmk},
    {{"stat_reset", "srst"}, 1, cmd_srst},
    {{"stats", "stat"}, 1, cmd_stat},
    {{"voting_view"}, 1, cmd_voting_view},
    {{"watch_summary", "wchs"}, 1, cmd_wchs},
    {{"watches", "wchc"}, 1, cmd_wchc},
    {{"watches_by_path", "wchp"}, 1, cmd_wchp},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static const struct command *find(const char *name)
{
    size_t i, k;

    for (i = 0; i < NCOMMANDS; i++)
        for (k = 0; k < 4 && commands[i].names[k] != NULL; k++)
            if (strcmp(commands[i].names[k], name) == 0)
                return &commands[i];
    return NULL;
}

int adminsrv_run(const struct fourlw_source *src, const char *name,
                 adminsrv_arg_fn arg, void *ctx, struct tb_wbuf *out)
{
    const struct command *cmd = find(name);
    struct json j;
    struct ctx c = {src, &j, arg, ctx, NULL, 0, 0};
    char shown[101], unknown[160];
    size_t i;

    json_init(&j, out);
    json_object(&j);
    if (cmd == NULL) {
        /* Echoed as ZooKeeper does, but as printable ASCII: the name came
         * off the URL, any bytes at all, and JSON must stay UTF-8. */
        for (i = 0; name[i] != '\0' && i + 1 < sizeof shown; i++)
            shown[i] = name[i] >= 0x20 && name[i] < 0x7f ? name[i] : '?';
        shown[i] = '\0';
        snprintf(unknown, sizeof unknown, "Unknown command: %s", shown);
        kv_str(&j, "command", shown);
        kv_str(&j, "error", unknown);
        json_end(&j);
        return 200;
    }
    if (cmd->needs_server && src->serving != NULL &&
        !src->serving(src->data))
        c.error = "This ZooKeeper instance is not currently serving requests";
    else
        cmd->run(&c);
    kv_str(&j, "command", cmd->names[0]);
    json_key(&j, "error");
    json_str(&j, c.error); /* NULL: null */
    json_end(&j);
    return 200;
}

void adminsrv_index(const char *base, struct tb_wbuf *out)
{
    size_t i;

    tb_wbuf_printf(out, "<h1>ZooKeeper AdminServer</h1>\n");
    for (i = 0; i < NCOMMANDS; i++)
        tb_wbuf_printf(out, "<a href=\"%s/%s\">%s</a><br/>\n", base,
                       commands[i].names[0], commands[i].names[0]);
}
