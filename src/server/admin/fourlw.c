/* Four-letter words: the word table, the whitelist, and the renderers of
 * single records (server stats, one connection, mntr, wchs, envi, dirs).
 * Listings are in fourlw_emit.c, the dispatcher in fourlw_exec.c.
 *
 * Numbers are printed the way Java prints them, since that is what tools
 * have been written against: longs plainly, hex ids with Long.toHexString
 * (two's complement, no padding, lowercase), and doubles with
 * Double.toString (fourlw_format_double()). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/admin/fourlw.h"
#include "server/logging/log.h"

#ifndef TB_VERSION
#define TB_VERSION "0.0.0"
#endif
#ifndef TB_BUILD_TIME
#define TB_BUILD_TIME "unknown"
#endif

static const char *const words[FOURLW__COUNT] = {
#define FOURLW__WORD(id, word) word,
    FOURLW_COMMANDS(FOURLW__WORD)
#undef FOURLW__WORD
};

int fourlw_lookup(const uint8_t first4[4])
{
    int i;

    for (i = 0; i < FOURLW__COUNT; i++)
        if (memcmp(first4, words[i], 4) == 0)
            return i;
    return -1;
}

const char *fourlw_name(int cmd)
{
    return cmd >= 0 && cmd < FOURLW__COUNT ? words[cmd] : NULL;
}

static int word_index(const char *w, size_t n)
{
    int i;

    if (n != 4)
        return -1;
    for (i = 0; i < FOURLW__COUNT; i++)
        if (memcmp(w, words[i], 4) == 0)
            return i;
    return -1;
}

uint32_t fourlw_whitelist_parse(const char *spec, int *unknown,
                                char *first_unknown, size_t cap)
{
    uint32_t mask = FOURLW_BIT(FOURLW_SRVR);
    const char *p, *comma, *w;
    struct tb_str t;
    size_t n;
    int cmd, bad = 0;

    if (first_unknown != NULL && cap > 0)
        first_unknown[0] = '\0';
    for (p = spec; p != NULL; p = comma ? comma + 1 : NULL) {
        comma = strchr(p, ',');
        t = tb_str_java_trim(
            (struct tb_str){p, comma ? (size_t)(comma - p) : strlen(p)});
        w = t.ptr;
        n = t.len;
        if (n == 1 && *w == '*') {
            mask = FOURLW_ALL;
            break;
        }
        if (n == 0)
            continue;
        if ((cmd = word_index(w, n)) >= 0) {
            mask |= FOURLW_BIT(cmd);
            continue;
        }
        if (bad++ == 0 && first_unknown != NULL && cap > 0)
            snprintf(first_unknown, cap, "%.*s", (int)n, w);
    }
    if (unknown != NULL)
        *unknown = bad;
    return mask;
}

void fourlw_whitelist_check(const char *spec, const char *at)
{
    char first[32];
    int unknown = 0;

    (void)fourlw_whitelist_parse(spec, &unknown, first, sizeof first);
    if (unknown > 0)
        tb_log(TB_LOG_WARN, "%s: %d unknown four-letter word(s) ignored, "
               "the first \"%s\"", at, unknown, first);
}

int fourlw_allowed(uint32_t mask, int cmd)
{
    if (cmd < 0 || cmd >= FOURLW__COUNT)
        return 0;
    return cmd == FOURLW_SRVR || (mask & FOURLW_BIT(cmd)) != 0;
}

const char *fourlw_version(void)
{
    return "3.8.0-tumbler-" TB_VERSION ", built on " TB_BUILD_TIME;
}

const char *fourlw_op_name(int32_t opcode)
{
    /* ZooKeeper 3.8 FinalRequestProcessor's names, by wire opcode. */
    switch (opcode) {
    case 1: case 15: case 19: case 21: return "CREA";
    case 2: case 20: return "DELE";
    case 3: return "EXIS";
    case 4: return "GETD";
    case 5: return "SETD";
    case 6: return "GETA";
    case 7: return "SETA";
    case 8: case 12: return "GETC";
    case 9: return "SYNC";
    case 11: return "PING";
    case 13: return "CHEC";
    case 14: return "MULT";
    case 16: return "RECO";
    case 17: return "CHKW";
    case 18: return "REMW";
    case 22: return "MLTR";
    case 101: return "SETW";
    case 103: return "GETE";
    case 104: return "GETACN";
    case 105: return "STW2";
    case 106: return "ADDW";
    case 107: return "HOMI";
    case -10: return "SESS";
    case -11: return "CLOS";
    default: return "NA";
    }
}

/* ---- Java number formatting ------------------------------------------- */

/* Java's Double.toString: the shortest digits that read back as `v`;
 * plain notation for 1e-3 <= |v| < 1e7 with at least one fractional
 * digit, computerized scientific notation ("1.0E-4") otherwise. */
static void format_double(char *buf, size_t cap, double v)
{
    char sci[40], digits[24];
    const char *sign = signbit(v) ? "-" : "";
    double a = fabs(v);
    int prec, exp, nd, i;
    char *e;

    if (isnan(v)) {
        snprintf(buf, cap, "NaN");
        return;
    }
    if (isinf(v)) {
        snprintf(buf, cap, "%sInfinity", sign);
        return;
    }
    if (a == 0) {
        snprintf(buf, cap, "%s0.0", sign);
        return;
    }
    for (prec = 1; prec <= 17; prec++) {
        snprintf(sci, sizeof sci, "%.*e", prec - 1, a);
        if (strtod(sci, NULL) == a)
            break;
    }
    e = strchr(sci, 'e');
    exp = atoi(e + 1);
    for (nd = 0, i = 0; sci + i < e; i++)
        if (sci[i] != '.')
            digits[nd++] = sci[i];
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    digits[nd] = '\0';
    if (a >= 1e-3 && a < 1e7) {
        size_t n = (size_t)snprintf(buf, cap, "%s", sign);
        if (exp < 0) {
            n += (size_t)snprintf(buf + n, cap - n, "0.%.*s%s", -exp - 1,
                                  "000", digits);
        } else {
            /* integer part: digits[0..exp], padded with zeros */
            for (i = 0; i <= exp && n + 1 < cap; i++)
                buf[n++] = i < nd ? digits[i] : '0';
            buf[n] = '\0';
            snprintf(buf + n, cap - n, ".%s", exp + 1 < nd ? digits + exp + 1
                                                           : "0");
        }
        return;
    }
    snprintf(buf, cap, "%s%c.%sE%d", sign, digits[0],
             nd > 1 ? digits + 1 : "0", exp);
}

/* BigDecimal(x).setScale(4, HALF_UP) for 0 <= x < 1e14, as q / 10000.
 * Java rounds the double's exact binary value, not total/count: 3/800 is
 * stored just below 0.00375 and so becomes 0.0037.  printf with enough
 * digits shows that exact value (every double has at most 1074 fractional
 * digits), and the fifth decimal then decides. */
static uint64_t round4_half_up(double x)
{
    char digits[1500], *p;
    uint64_t q = 0;
    int i;

    snprintf(digits, sizeof digits, "%.1100f", x);
    for (p = digits; *p >= '0' && *p <= '9'; p++)
        q = q * 10 + (uint64_t)(*p - '0');
    if (*p == '.')
        p++;
    for (i = 0; i < 4; i++) {
        q = q * 10 + (uint64_t)(*p >= '0' && *p <= '9' ? *p - '0' : 0);
        if (*p != '\0')
            p++;
    }
    return q + (*p >= '5' && *p <= '9');
}

char *fourlw_format_avg(char *buf, size_t cap, uint64_t total, uint64_t count)
{
    format_double(buf, cap, fourlw_avg(total, count));
    return buf;
}

double fourlw_avg(uint64_t total, uint64_t count)
{
    double avg = count > 0 ? (double)total / (double)count : 0.0;

    return avg < 1e14 ? (double)round4_half_up(avg) / 10000.0 : avg;
}

size_t fourlw_format_date(char *buf, size_t cap, int64_t wall_ms)
{
    static const char *const days[] = {"Sun", "Mon", "Tue", "Wed",
                                       "Thu", "Fri", "Sat"};
    static const char *const months[] = {"Jan", "Feb", "Mar", "Apr",
                                         "May", "Jun", "Jul", "Aug",
                                         "Sep", "Oct", "Nov", "Dec"};
    time_t secs = (time_t)(wall_ms / 1000 - (wall_ms % 1000 < 0));
    struct tm tm;
    int n;

    if (gmtime_r(&secs, &tm) == NULL || cap == 0)
        return 0;
    n = snprintf(buf, cap, "%s %s %02d %02d:%02d:%02d UTC %d",
                 days[tm.tm_wday], months[tm.tm_mon], tm.tm_mday, tm.tm_hour,
                 tm.tm_min, tm.tm_sec, tm.tm_year + 1900);
    return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

/* ---- renderers ---------------------------------------------------------- */

static const char *version_of(const struct fourlw_stats *s)
{
    return s->version != NULL ? s->version : fourlw_version();
}

static const char *mode_of(const struct fourlw_stats *s)
{
    return s->mode != NULL ? s->mode : "standalone";
}

static uint64_t min_of(const struct fourlw_latency *l)
{
    return l->count > 0 ? l->min : 0;
}

/* The version line (and read-only notice): what stat prints before its
 * client list. */
static void render_head(struct tb_wbuf *out, const struct fourlw_stats *s)
{
    tb_wbuf_printf(out, "Zookeeper version: %s\n", version_of(s));
    if (s->read_only)
        tb_wbuf_printf(out, "READ-ONLY mode; serving only read-only "
                       "clients\n");
}

/* ServerStats.toString() plus the node count (and leaders' proposals). */
static void render_tail(struct tb_wbuf *out, const struct fourlw_stats *s)
{
    char avg[40];

    fourlw_format_avg(avg, sizeof avg, s->latency.total, s->latency.count);
    tb_wbuf_printf(out, "Latency min/avg/max: %" PRIu64 "/%s/%" PRIu64 "\n",
                   min_of(&s->latency), avg, s->latency.max);
    tb_wbuf_printf(out, "Received: %" PRIu64 "\n", s->packets_received);
    tb_wbuf_printf(out, "Sent: %" PRIu64 "\n", s->packets_sent);
    tb_wbuf_printf(out, "Connections: %" PRIu64 "\n", s->connections);
    tb_wbuf_printf(out, "Outstanding: %" PRIu64 "\n", s->outstanding);
    tb_wbuf_printf(out, "Zxid: 0x%" PRIx64 "\n", s->zxid);
    tb_wbuf_printf(out, "Mode: %s\n", mode_of(s));
    tb_wbuf_printf(out, "Node count: %" PRIu64 "\n", s->node_count);
    if (s->has_proposal_sizes && strcmp(mode_of(s), "leader") == 0)
        tb_wbuf_printf(out, "Proposal sizes last/min/max: %" PRId64 "/%" PRId64
                       "/%" PRId64 "\n", s->proposal_last, s->proposal_min,
                       s->proposal_max);
}

void fourlw_render_srvr(struct tb_wbuf *out, const struct fourlw_stats *s)
{
    render_head(out, s);
    render_tail(out, s);
}

void fourlw_render_stat(struct tb_wbuf *out, const struct fourlw_stats *s,
                        const uint8_t *conns, size_t conns_len)
{
    render_head(out, s);
    tb_wbuf_printf(out, "Clients:\n");
    tb_wbuf_put(out, conns, conns_len);
    tb_wbuf_printf(out, "\n");
    render_tail(out, s);
}

/* InetSocketAddress.toString() of a numeric address: "/1.2.3.4:5", and
 * IPv6 in brackets. */
static void render_addr(struct tb_wbuf *out, const char *addr, int port)
{
    if (addr == NULL)
        addr = "";
    if (strchr(addr, ':') != NULL)
        tb_wbuf_printf(out, "/[%s]:%d", addr, port);
    else
        tb_wbuf_printf(out, "/%s:%d", addr, port);
}

void fourlw_render_conn(struct tb_wbuf *out, const struct fourlw_conn *c,
                        int brief)
{
    const struct fourlw_latency *l = &c->latency;

    tb_wbuf_printf(out, " ");
    render_addr(out, c->addr, c->port);
    if (c->interest == 0)
        tb_wbuf_printf(out, "[0]");
    else
        tb_wbuf_printf(out, "[%x]", c->interest);
    tb_wbuf_printf(out, "(queued=%" PRIu64 ",recved=%" PRIu64 ",sent=%" PRIu64,
                   c->queued, c->recved, c->sent);
    if (!brief && c->sid != 0) {
        tb_wbuf_printf(out, ",sid=0x%" PRIx64 ",lop=%s,est=%" PRId64
                       ",to=%" PRId32, (uint64_t)c->sid,
                       c->lop != NULL ? c->lop : "NA", c->est, c->to);
        if (c->lcxid >= 0)
            tb_wbuf_printf(out, ",lcxid=0x%" PRIx64, (uint64_t)c->lcxid);
        tb_wbuf_printf(out, ",lzxid=0x%" PRIx64 ",lresp=%" PRId64
                       ",llat=%" PRId64 ",minlat=%" PRIu64 ",avglat=%" PRIu64
                       ",maxlat=%" PRIu64, (uint64_t)c->lzxid, c->lresp,
                       c->llat, min_of(l),
                       l->count > 0 ? l->total / l->count : 0, l->max);
    }
    tb_wbuf_printf(out, ")\n");
}

void fourlw_emit_mntr_base(struct fourlw_emit *e, const struct fourlw_stats *s,
                           const struct fourlw_mntr *m)
{
    fourlw_emit_metric_str(e, "version", version_of(s));
    fourlw_emit_metric_str(e, "server_state", mode_of(s));
    fourlw_emit_metric_avg(e, "avg_latency", s->latency.total,
                           s->latency.count);
    fourlw_emit_metric_int(e, "max_latency", (int64_t)s->latency.max);
    fourlw_emit_metric_int(e, "min_latency", (int64_t)min_of(&s->latency));
    fourlw_emit_metric_int(e, "packets_received", (int64_t)s->packets_received);
    fourlw_emit_metric_int(e, "packets_sent", (int64_t)s->packets_sent);
    fourlw_emit_metric_int(e, "num_alive_connections",
                           (int64_t)s->connections);
    fourlw_emit_metric_int(e, "outstanding_requests", (int64_t)s->outstanding);
    fourlw_emit_metric_int(e, "znode_count", (int64_t)s->node_count);
    fourlw_emit_metric_int(e, "watch_count", (int64_t)m->watch_count);
    fourlw_emit_metric_int(e, "ephemerals_count", (int64_t)m->ephemerals_count);
    fourlw_emit_metric_int(e, "approximate_data_size",
                           (int64_t)m->approximate_data_size);
    fourlw_emit_metric_int(e, "open_file_descriptor_count",
                           (int64_t)m->open_fds);
    fourlw_emit_metric_int(e, "max_file_descriptor_count",
                           (int64_t)m->max_fds);
    fourlw_emit_metric_int(e, "global_sessions", (int64_t)m->global_sessions);
    fourlw_emit_metric_int(e, "local_sessions", (int64_t)m->local_sessions);
    fourlw_emit_metric_int(e, "uptime", (int64_t)m->uptime_ms);
}

void fourlw_render_mntr(struct tb_wbuf *out, const struct fourlw_stats *s,
                        const struct fourlw_mntr *m)
{
    struct fourlw_emit e;

    fourlw_emit_init(&e, FOURLW_LIST_METRICS, out);
    fourlw_emit_mntr_base(&e, s, m);
    fourlw_emit_finish(&e);
}

void fourlw_render_wchs(struct tb_wbuf *out,
                        const struct fourlw_watch_summary *w)
{
    tb_wbuf_printf(out,
                   "%" PRIu64 " connections watching %" PRIu64
                   " paths\nTotal watches:%" PRIu64 "\n",
                   w->connections, w->paths, w->watches);
}

void fourlw_render_envi(struct tb_wbuf *out, const char *version,
                        const struct fourlw_env *env)
{
    const uint64_t mb = 1024 * 1024;

    tb_wbuf_printf(out, "Environment:\n");
    tb_wbuf_printf(out, "zookeeper.version=%s\n",
                   version != NULL ? version : fourlw_version());
    tb_wbuf_printf(out, "host.name=%s\n", env->host_name);
    tb_wbuf_printf(out, "os.name=%s\n", env->os_name);
    tb_wbuf_printf(out, "os.arch=%s\n", env->os_arch);
    tb_wbuf_printf(out, "os.version=%s\n", env->os_version);
    tb_wbuf_printf(out, "user.name=%s\n", env->user_name);
    tb_wbuf_printf(out, "user.home=%s\n", env->user_home);
    tb_wbuf_printf(out, "user.dir=%s\n", env->user_dir);
    tb_wbuf_printf(out, "os.memory.free=%" PRIu64 "MB\n", env->mem_free / mb);
    tb_wbuf_printf(out, "os.memory.max=%" PRIu64 "MB\n", env->mem_max / mb);
    tb_wbuf_printf(out, "os.memory.total=%" PRIu64 "MB\n",
                   env->mem_total / mb);
}

void fourlw_render_dirs(struct tb_wbuf *out, uint64_t data_dir_size,
                        uint64_t log_dir_size)
{
    tb_wbuf_printf(out, "datadir_size: %" PRIu64 "\nlogdir_size: %" PRIu64
                   "\n", data_dir_size, log_dir_size);
}

void fourlw_render_not_allowed(struct tb_wbuf *out, int cmd)
{
    const char *w = fourlw_name(cmd);

    tb_wbuf_printf(out, "%s is not executed because it is not in the "
                   "whitelist.\n", w != NULL ? w : "????");
}

void fourlw_render_not_serving(struct tb_wbuf *out)
{
    tb_wbuf_printf(out, "This ZooKeeper instance is not currently serving "
                   "requests\n");
}

void fourlw_format_double(char *buf, size_t cap, double v)
{
    format_double(buf, cap, v);
}
