/* Prometheus text from mntr's walk (metrics.h).
 *
 * The exposition format wants each family's samples together under one
 * TYPE line, while the walk gives them in mntr's order (a quota's four
 * figures per namespace, interleaved): samples are gathered, sorted by
 * name (stable, so a family keeps the walk's order), then written. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/admin/fourlw.h"
#include "server/http/metrics.h"

struct sample {
    char name[96];
    char help[128];   /* the mntr line it comes from */
    char labels[512]; /* formatted, without braces; "" for none */
    char value[40];
    size_t seq;       /* walk order, for a stable sort */
};

struct gather {
    struct sample *v;
    size_t n, cap;
    int oom;
};

/* Prometheus names: [a-zA-Z_:][a-zA-Z0-9_:]*; anything else becomes '_'. */
static void put_name(char *dst, size_t cap, const char *prefix,
                     const char *key)
{
    size_t i;

    snprintf(dst, cap, "%s%s", prefix, key);
    for (i = 0; dst[i] != '\0'; i++) {
        char c = dst[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                 c == '_' || c == ':' || (i > 0 && c >= '0' && c <= '9');
        if (!ok)
            dst[i] = '_';
    }
}

/* Prometheus wants base units: a figure mntr gives in microseconds or
 * milliseconds (a name with a "us" or "ms" word) is shown in seconds, that
 * word dropped and "_seconds" put last (tumbler_log_write_us_max becomes
 * tumbler_log_write_max_seconds).  ZooKeeper's own names (avg_latency, in
 * ms) stay as ZooKeeper's provider has them.  Returns the divisor. */
static double base_unit(char *name, size_t cap)
{
    static const struct {
        const char *word;
        double div;
    } units[] = {{"_us", 1e6}, {"_ms", 1e3}};
    size_t i, n, w;
    char *at;

    for (i = 0; i < sizeof units / sizeof units[0]; i++) {
        w = strlen(units[i].word);
        for (at = strstr(name, units[i].word); at != NULL;
             at = strstr(at + 1, units[i].word))
            if (at[w] == '\0' || at[w] == '_')
                break;
        if (at == NULL)
            continue;
        memmove(at, at + w, strlen(at + w) + 1);
        n = strlen(name);
        if (n + sizeof "_seconds" <= cap)
            memcpy(name + n, "_seconds", sizeof "_seconds");
        return units[i].div;
    }
    return 1;
}

/* name="value" with the format's escapes (\\, \", \n); -1 (and "") if
 * it does not fit whole: a value cut short could end inside a UTF-8
 * character, which makes Prometheus refuse the whole scrape. */
static int put_label(char *dst, size_t cap, const char *name, const char *v,
                     size_t len)
{
    size_t o, i;

    o = (size_t)snprintf(dst, cap, "%s=\"", name);
    for (i = 0; i < len && o + 4 < cap; i++) {
        char c = v[i];
        if (c == '\\' || c == '"' || c == '\n') {
            dst[o++] = '\\';
            c = c == '\n' ? 'n' : c;
        }
        dst[o++] = c;
    }
    if (i == len && o + 2 <= cap) {
        dst[o++] = '"';
        dst[o] = '\0';
        return 0;
    }
    dst[0] = '\0';
    return -1;
}

static struct sample *add(struct gather *g)
{
    struct sample *s;

    if (g->n == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 64;
        s = realloc(g->v, cap * sizeof *s);
        if (s == NULL) {
            g->oom = 1;
            return NULL;
        }
        g->v = s;
        g->cap = cap;
    }
    s = &g->v[g->n];
    memset(s, 0, sizeof *s);
    s->seq = g->n++;
    return s;
}

static void on_metric(void *arg, const struct fourlw_metric *m)
{
    struct gather *g = arg;
    struct sample *s = add(g);
    double div;

    if (s == NULL)
        return;
    snprintf(s->help, sizeof s->help, "mntr's zk_%s%s", m->ns.len ? "KEY_" : "",
             m->key);
    switch (m->type) {
    case FOURLW_METRIC_INT:
        put_name(s->name, sizeof s->name, "", m->key);
        if ((div = base_unit(s->name, sizeof s->name)) != 1)
            snprintf(s->value, sizeof s->value, "%.9g", (double)m->i / div);
        else
            snprintf(s->value, sizeof s->value, "%" PRId64, m->i);
        break;
    case FOURLW_METRIC_DOUBLE:
        put_name(s->name, sizeof s->name, "", m->key);
        div = base_unit(s->name, sizeof s->name);
        snprintf(s->value, sizeof s->value, "%.9g", m->d / div);
        break;
    case FOURLW_METRIC_STR:
        put_name(s->name, sizeof s->name, "tumbler_", m->key);
        put_label(s->labels, sizeof s->labels, m->key,
                  m->s ? m->s : "", m->s ? strlen(m->s) : 0);
        snprintf(s->value, sizeof s->value, "1");
        break;
    }
    /* A namespace too long to name whole is left out: without its label
     * the sample would pass for another's. */
    if (m->ns.len > 0 &&
        put_label(s->labels, sizeof s->labels, "key", m->ns.ptr, m->ns.len))
        g->n--;
}

static int by_name(const void *a, const void *b)
{
    const struct sample *x = a, *y = b;
    int c = strcmp(x->name, y->name);

    if (c != 0)
        return c;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void metrics_render(const struct fourlw_source *src,
                    void (*more)(void *arg, struct tb_wbuf *out), void *arg,
                    struct tb_wbuf *out)
{
    struct fourlw_sink sink = {0};
    struct fourlw_emit e;
    struct gather g = {0};
    size_t i;

    sink.arg = &g;
    sink.metric = on_metric;
    fourlw_emit_init(&e, FOURLW_LIST_METRICS, out);
    e.sink = &sink;
    fourlw_emit_mntr(src, &e);
    fourlw_emit_finish(&e);
    if (g.n > 0)
        qsort(g.v, g.n, sizeof *g.v, by_name);
    for (i = 0; i < g.n; i++) {
        const struct sample *s = &g.v[i];
        /* HELP names the mntr line: docs/operations.md says what each
         * means, as ZooKeeper's provider, whose HELP is the name again. */
        if (i == 0 || strcmp(s->name, g.v[i - 1].name) != 0)
            tb_wbuf_printf(out, "# HELP %s %s\n# TYPE %s gauge\n", s->name,
                           s->help, s->name);
        tb_wbuf_printf(out, "%s%s%s%s %s\n", s->name, *s->labels ? "{" : "",
                       s->labels, *s->labels ? "}" : "", s->value);
    }
    out->oom |= g.oom;
    free(g.v);
    if (more != NULL)
        more(arg, out);
}

/* ZooKeeper's OpCode names, by wire opcode. */
static const struct {
    int32_t code;
    const char *name;
} ops[METRICS_NOPS] = {
    {1, "create"},           {2, "delete"},
    {3, "exists"},           {4, "getData"},
    {5, "setData"},          {6, "getACL"},
    {7, "setACL"},           {8, "getChildren"},
    {9, "sync"},             {11, "ping"},
    {12, "getChildren2"},    {13, "check"},
    {14, "multi"},           {15, "create2"},
    {16, "reconfig"},        {17, "checkWatches"},
    {18, "removeWatches"},   {19, "createContainer"},
    {20, "deleteContainer"}, {21, "createTTL"},
    {22, "multiRead"},       {100, "auth"},
    {101, "setWatches"},     {102, "sasl"},
    {103, "getEphemerals"},  {104, "getAllChildrenNumber"},
    {105, "setWatches2"},    {106, "addWatch"},
    {107, "whoAmI"},         {-10, "createSession"},
    {-11, "closeSession"},
};

int metrics_op_index(int32_t opcode)
{
    int i;

    for (i = 0; i < METRICS_NOPS; i++)
        if (ops[i].code == opcode)
            return i;
    return -1;
}

const char *metrics_op_name(int index)
{
    return index >= 0 && index < METRICS_NOPS ? ops[index].name : NULL;
}

int metrics_op_is_update(int index)
{
    switch (index >= 0 && index < METRICS_NOPS ? ops[index].code : 100) {
    case 100: /* auth */
    case 102: /* sasl */
        return -1;
    case 1:   /* create */
    case 2:   /* delete */
    case 5:   /* setData */
    case 7:   /* setACL */
    case 13:  /* check */
    case 14:  /* multi */
    case 15:  /* create2 */
    case 16:  /* reconfig */
    case 19:  /* createContainer */
    case 20:  /* deleteContainer */
    case 21:  /* createTTL */
    case -10: /* createSession */
    case -11: /* closeSession */
        return 1;
    default:
        return 0;
    }
}
