/* fourlw_execute(): one four-letter word, from the whitelist check to the
 * full answer, gathering what it needs through struct fourlw_source.
 * Which words answer while the server is not serving follows ZooKeeper
 * 3.8's command classes: ruok, envi, gtmk and stmk always do; isro says
 * "null"; the rest print the not-serving line. */
#include <string.h>

#include "server/admin/fourlw.h"
#include "server/config/config.h"

static void get_stats(const struct fourlw_source *src, struct fourlw_stats *s)
{
    memset(s, 0, sizeof *s);
    if (src->stats != NULL)
        src->stats(src->data, s);
}

/* Runs a walk callback into a listing of `kind` appended to out. */
static void list(const struct fourlw_source *src,
                 void (*walk)(void *, struct fourlw_emit *),
                 enum fourlw_list_kind kind, struct tb_wbuf *out)
{
    struct fourlw_emit e;

    fourlw_emit_init(&e, kind, out);
    if (walk != NULL)
        walk(src->data, &e);
    fourlw_emit_finish(&e);
}

static void do_stat(const struct fourlw_source *src, struct tb_wbuf *out)
{
    struct fourlw_stats s;
    struct tb_wbuf conns;

    get_stats(src, &s);
    tb_wbuf_init(&conns);
    list(src, src->conns, FOURLW_LIST_CONNS_BRIEF, &conns);
    fourlw_render_stat(out, &s, conns.base, conns.len);
    out->oom |= conns.oom;
    tb_wbuf_free(&conns);
}

void fourlw_emit_mntr(const struct fourlw_source *src, struct fourlw_emit *e)
{
    struct fourlw_stats s;
    struct fourlw_mntr m;

    get_stats(src, &s);
    memset(&m, 0, sizeof m);
    if (src->mntr != NULL)
        src->mntr(src->data, &m);
    fourlw_emit_mntr_base(e, &s, &m);
    if (src->mntr_extra != NULL)
        src->mntr_extra(src->data, e);
}

static void do_mntr(const struct fourlw_source *src, struct tb_wbuf *out)
{
    struct fourlw_emit e;

    fourlw_emit_init(&e, FOURLW_LIST_METRICS, out);
    fourlw_emit_mntr(src, &e);
    fourlw_emit_finish(&e);
}

static void do_wchs(const struct fourlw_source *src, struct tb_wbuf *out)
{
    struct fourlw_watch_summary w;

    memset(&w, 0, sizeof w);
    if (src->watch_summary != NULL)
        src->watch_summary(src->data, &w);
    fourlw_render_wchs(out, &w);
}

static void do_dump(const struct fourlw_source *src, struct tb_wbuf *out)
{
    tb_wbuf_printf(out, "SessionTracker dump:\n");
    list(src, src->session_buckets, FOURLW_LIST_SESSIONS, out);
    tb_wbuf_printf(out, "ephemeral nodes dump:\n");
    list(src, src->ephemerals, FOURLW_LIST_EPHEMERALS, out);
    tb_wbuf_printf(out, "Connections dump:\n");
    list(src, src->conn_buckets, FOURLW_LIST_CNXN_EXPIRY, out);
}

static void dir_sizes(const struct fourlw_source *src, uint64_t *d,
                      uint64_t *l)
{
    *d = *l = 0;
    if (src->dir_sizes != NULL)
        src->dir_sizes(src->data, d, l);
}

/* Whether `text` has a line "key=..." (klen bytes of key). */
static int has_key(const struct tb_wbuf *text, const char *key, size_t klen)
{
    const char *p = (const char *)text->base, *end = p + text->len, *eol;

    for (; p < end; p = eol + 1) {
        if ((eol = memchr(p, '\n', (size_t)(end - p))) == NULL)
            eol = end;
        if ((size_t)(eol - p) > klen && memcmp(p, key, klen) == 0 &&
            p[klen] == '=')
            return 1;
    }
    return 0;
}

/* ZooKeeper's conf lines, then every other key's effective value as
 * --check-config prints it (secrets hidden), so that conf shows what each
 * key is; tools read conf as key=value lines, and ZooKeeper's come first.
 * The members are the live ones alone: the file's server.N lines, once a
 * reconfig changed them, would list a member removed. */
struct tb_config_members fourlw_members(const struct fourlw_source *src)
{
    if (src->members != NULL)
        return src->members(src->data);
    if (src->cfg == NULL)
        return (struct tb_config_members){NULL, 0, 0};
    return (struct tb_config_members){src->cfg->servers, src->cfg->nservers, 0};
}

static void do_conf(const struct fourlw_source *src, struct tb_wbuf *out)
{
    struct tb_config_members m;
    const char *p, *end, *eol, *eq;
    struct tb_wbuf all;
    uint64_t d, l;

    if (src->cfg == NULL)
        return;
    dir_sizes(src, &d, &l);
    m = fourlw_members(src);
    tb_config_render_conf(src->cfg, &m, d, l, out);
    tb_wbuf_init(&all);
    tb_config_render_effective(src->cfg, &all);
    p = (const char *)all.base;
    end = p + all.len;
    for (; p < end; p = eol + 1) {
        if ((eol = memchr(p, '\n', (size_t)(end - p))) == NULL)
            break;
        eq = memchr(p, '=', (size_t)(eol - p));
        if (*p == '#' || eq == NULL || has_key(out, p, (size_t)(eq - p)) ||
            strncmp(p, "server.", 7) == 0)
            continue;
        /* An ensemble's text ends as ZooKeeper's, "version=..." unended. */
        if (out->len > 0 && out->base[out->len - 1] != '\n')
            tb_wbuf_put(out, "\n", 1);
        tb_wbuf_put(out, p, (size_t)(eol + 1 - p));
    }
    tb_wbuf_free(&all);
}

static void do_envi(const struct fourlw_source *src, struct tb_wbuf *out)
{
    struct fourlw_stats s;
    struct fourlw_env env;

    get_stats(src, &s);
    memset(&env, 0, sizeof env);
    if (src->env != NULL)
        src->env(src->data, &env);
    else
        fourlw_env_collect(&env);
    fourlw_render_envi(out, s.version, &env);
}

static void do_trace_mask(const struct fourlw_source *src, int cmd,
                          uint64_t arg, struct tb_wbuf *out)
{
    uint64_t mask = 0;

    if (cmd == FOURLW_STMK) {
        if (src->set_trace_mask != NULL)
            src->set_trace_mask(src->data, arg);
        mask = arg;
    } else if (src->get_trace_mask != NULL) {
        mask = src->get_trace_mask(src->data);
    }
    /* Java prints the long: signed */
    tb_wbuf_printf(out, "%lld", (long long)mask);
}

/* The words that need a serving server. */
static void serving_word(const struct fourlw_source *src, int cmd,
                         struct tb_wbuf *out)
{
    struct fourlw_stats s;
    uint64_t d, l;

    switch (cmd) {
    case FOURLW_SRVR:
        get_stats(src, &s);
        fourlw_render_srvr(out, &s);
        break;
    case FOURLW_STAT: do_stat(src, out); break;
    case FOURLW_MNTR: do_mntr(src, out); break;
    case FOURLW_CONS:
        list(src, src->conns, FOURLW_LIST_CONNS_FULL, out);
        tb_wbuf_printf(out, "\n");
        break;
    case FOURLW_WCHS: do_wchs(src, out); break;
    case FOURLW_WCHC:
        list(src, src->watches_by_session, FOURLW_LIST_WATCH_BY_SID, out);
        tb_wbuf_printf(out, "\n");
        break;
    case FOURLW_WCHP:
        list(src, src->watches_by_path, FOURLW_LIST_WATCH_BY_PATH, out);
        tb_wbuf_printf(out, "\n");
        break;
    case FOURLW_DUMP: do_dump(src, out); break;
    case FOURLW_CONF: do_conf(src, out); break;
    case FOURLW_DIRS:
        dir_sizes(src, &d, &l);
        fourlw_render_dirs(out, d, l);
        break;
    case FOURLW_CRST:
        if (src->reset_conn_stats != NULL)
            src->reset_conn_stats(src->data);
        tb_wbuf_printf(out, "Connection stats reset.\n");
        break;
    case FOURLW_SRST:
        if (src->reset_server_stats != NULL)
            src->reset_server_stats(src->data);
        tb_wbuf_printf(out, "Server stats reset.\n");
        break;
    default:
        (void)TB_NEVER(1);
        break;
    }
}

int fourlw_execute(const struct fourlw_source *src, int cmd, uint64_t arg,
                   struct tb_wbuf *out)
{
    uint32_t allowed;
    struct fourlw_stats s;
    int serving;

    if (cmd < 0 || cmd >= FOURLW__COUNT)
        return TB_EINVAL;
    /* Parsed on each word: seventeen names, and words are rare. */
    allowed = fourlw_whitelist_parse(src->cfg ? src->cfg->fourlw_whitelist
                                              : NULL, NULL, NULL, 0);
    if (!fourlw_allowed(allowed, cmd)) {
        fourlw_render_not_allowed(out, cmd);
        return 0;
    }
    serving = src->serving == NULL || src->serving(src->data);
    switch (cmd) {
    case FOURLW_RUOK:
        tb_wbuf_printf(out, "imok");
        return 0;
    case FOURLW_ENVI:
        do_envi(src, out);
        return 0;
    case FOURLW_GTMK:
    case FOURLW_STMK:
        do_trace_mask(src, cmd, arg, out);
        return 0;
    case FOURLW_ISRO:
        if (serving)
            get_stats(src, &s);
        tb_wbuf_printf(out, "%s", !serving ? "null" : s.read_only ? "ro"
                                                                 : "rw");
        return 0;
    default:
        break;
    }
    if (!serving)
        fourlw_render_not_serving(out);
    else
        serving_word(src, cmd, out);
    return 0;
}
