/* tbbench: command line, defaults per scenario, and output.
 *
 *   tbbench SCENARIO [--server HOST:PORT] [options]
 *
 * Every scenario prints human-readable lines and one machine-readable line
 * per result, "RESULT scenario=NAME server=LABEL key=value ...", which
 * bench/compare.sh collects.  The exit status is 0 only when the scenario
 * completed without errors and without mutual-exclusion violations. */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "tbbench.h"

static const char *g_label = "server";
static const char *g_tag;

void bn_say(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
}

void bn_result_begin(struct bn_result *r, const char *scenario)
{
    r->len = 0;
    r->buf[0] = '\0';
    bn_result_add(r, "scenario", "%s", scenario);
    bn_result_add(r, "server", "%s", g_label);
    if (g_tag != NULL)
        bn_result_add(r, "tag", "%s", g_tag);
}

void bn_result_add(struct bn_result *r, const char *key, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (r->len >= sizeof(r->buf) - 1)
        return;
    n = snprintf(r->buf + r->len, sizeof(r->buf) - r->len, " %s=", key);
    if (n < 0)
        return;
    r->len += (size_t)n;
    if (r->len >= sizeof(r->buf) - 1) {
        r->len = sizeof(r->buf) - 1;
        return;
    }
    va_start(ap, fmt);
    n = vsnprintf(r->buf + r->len, sizeof(r->buf) - r->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        r->len += (size_t)n;
    if (r->len >= sizeof(r->buf) - 1)
        r->len = sizeof(r->buf) - 1;
}

void bn_result_hist(struct bn_result *r, const char *prefix,
                    const struct bn_hist *h)
{
    char key[64];

    snprintf(key, sizeof(key), "%s_n", prefix);
    bn_result_add(r, key, "%llu", (unsigned long long)h->n);
    snprintf(key, sizeof(key), "%s_p50_us", prefix);
    bn_result_add(r, key, "%.1f", (double)bn_hist_q(h, 0.5) / 1e3);
    snprintf(key, sizeof(key), "%s_p99_us", prefix);
    bn_result_add(r, key, "%.1f", (double)bn_hist_q(h, 0.99) / 1e3);
    snprintf(key, sizeof(key), "%s_p999_us", prefix);
    bn_result_add(r, key, "%.1f", (double)bn_hist_q(h, 0.999) / 1e3);
    snprintf(key, sizeof(key), "%s_max_us", prefix);
    bn_result_add(r, key, "%.1f", (double)h->max / 1e3);
}

void bn_result_end(struct bn_result *r)
{
    printf("RESULT%s\n", r->buf);
    fflush(stdout);
}

static void usage(FILE *f)
{
    fputs("usage: tbbench SCENARIO [options]\n"
          "scenarios:\n"
          "  lock      N clients x M locks, hold H (--variant "
          "fair|herd|nonfair)\n"
          "  articles  the articles' test: 1,000 clients on each of two keys,\n"
          "            each acquiring once and holding 500 ms\n"
          "  raw       pipelined --ops create,set,get,exists,delete\n"
          "  sessions  N sessions connect and are held (--hold-s)\n"
          "  memory    K znodes of B bytes, then the server's RSS\n"
          "  idle      the server's RSS and CPU time now\n"
          "  serving   wait until the server serves a request (--since)\n"
          "  disk      synced 4 KiB writes in --dir (no server): the disk's "
          "floor\n"
          "options:\n"
          "  --server HOST:PORT[,...]   (127.0.0.1:2181)   --label NAME\n"
          "            (several: an ensemble; sessions round-robin over them,\n"
          "            four-letter words and --pid are the first's)\n"
          "  --pid PID            server pid (default: found by port)\n"
          "  --clients N --locks M --hold-ms H --variant V --once\n"
          "  --duration S --warmup S --outstanding K --data-bytes B\n"
          "  --ops LIST --znodes K --window W (handshakes in flight)\n"
          "  --session-timeout MS --hold-s S --root PATH --no-cleanup\n"
          "  --since US|@FILE (serving: wall clock of the exec, microseconds;\n"
          "            @FILE: read from FILE once served, so that the probe\n"
          "            can start before the server)\n"
          "  --dir DIR (disk)  --tag NAME (added to RESULT lines)\n"
          "  --tls-port PORT --tls-ca FILE --tls-cert FILE --tls-key FILE\n"
          "            (sessions over TLS to PORT on --server's host, PEM\n"
          "            files; four-letter words stay on --server)\n",
          f);
}

enum {
    O_SERVER = 256,
    O_LABEL,
    O_PID,
    O_CLIENTS,
    O_LOCKS,
    O_HOLD_MS,
    O_VARIANT,
    O_ONCE,
    O_DURATION,
    O_WARMUP,
    O_OUTSTANDING,
    O_DATA,
    O_OPS,
    O_ZNODES,
    O_WINDOW,
    O_STIMEOUT,
    O_HOLD_S,
    O_ROOT,
    O_NOCLEAN,
    O_SINCE,
    O_DIR,
    O_TAG,
    O_TLS_PORT,
    O_TLS_CA,
    O_TLS_CERT,
    O_TLS_KEY,
    O_HELP,
};

static const struct option longopts[] = {
    {"server", required_argument, NULL, O_SERVER},
    {"label", required_argument, NULL, O_LABEL},
    {"pid", required_argument, NULL, O_PID},
    {"clients", required_argument, NULL, O_CLIENTS},
    {"locks", required_argument, NULL, O_LOCKS},
    {"hold-ms", required_argument, NULL, O_HOLD_MS},
    {"variant", required_argument, NULL, O_VARIANT},
    {"once", no_argument, NULL, O_ONCE},
    {"duration", required_argument, NULL, O_DURATION},
    {"warmup", required_argument, NULL, O_WARMUP},
    {"outstanding", required_argument, NULL, O_OUTSTANDING},
    {"data-bytes", required_argument, NULL, O_DATA},
    {"ops", required_argument, NULL, O_OPS},
    {"znodes", required_argument, NULL, O_ZNODES},
    {"window", required_argument, NULL, O_WINDOW},
    {"session-timeout", required_argument, NULL, O_STIMEOUT},
    {"hold-s", required_argument, NULL, O_HOLD_S},
    {"root", required_argument, NULL, O_ROOT},
    {"no-cleanup", no_argument, NULL, O_NOCLEAN},
    {"since", required_argument, NULL, O_SINCE},
    {"dir", required_argument, NULL, O_DIR},
    {"tag", required_argument, NULL, O_TAG},
    {"tls-port", required_argument, NULL, O_TLS_PORT},
    {"tls-ca", required_argument, NULL, O_TLS_CA},
    {"tls-cert", required_argument, NULL, O_TLS_CERT},
    {"tls-key", required_argument, NULL, O_TLS_KEY},
    {"help", no_argument, NULL, O_HELP},
    {NULL, 0, NULL, 0},
};

/* -1 / NULL mean "not given": each scenario fills its own defaults. */
static void opts_unset(struct bn_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->server = "127.0.0.1:2181";
    o->clients = o->locks = o->outstanding = o->data_bytes = -1;
    o->connect_window = o->session_timeout = -1;
    o->hold_ms = o->duration_s = o->warmup_s = o->hold_s = -1;
    o->znodes = -1;
}

#define DEF(field, v)                                                          \
    do {                                                                       \
        if (o->field < 0)                                                      \
            o->field = (v);                                                    \
    } while (0)

static void opts_defaults(struct bn_opts *o, const char *scenario)
{
    if (strcmp(scenario, "articles") == 0) {
        DEF(clients, 2000);
        DEF(locks, 2);
        DEF(hold_ms, 500);
        DEF(duration_s, 10);
        o->once = 1;
    } else if (strcmp(scenario, "sessions") == 0) {
        DEF(clients, 10000);
        DEF(hold_s, 5);
    } else if (strcmp(scenario, "memory") == 0) {
        DEF(clients, 16);
        DEF(outstanding, 64);
        DEF(data_bytes, 100);
        DEF(znodes, 100000);
    } else if (strcmp(scenario, "raw") == 0) {
        DEF(clients, 16);
        DEF(outstanding, 64);
        DEF(data_bytes, 100);
        DEF(duration_s, 5);
        DEF(warmup_s, 1);
    } else if (strcmp(scenario, "serving") == 0) {
        DEF(duration_s, 60);
    }
    DEF(clients, 100);
    DEF(locks, 1);
    DEF(hold_ms, 0);
    DEF(duration_s, 10);
    DEF(warmup_s, o->once ? 0 : 2);
    DEF(outstanding, 64);
    DEF(data_bytes, 100);
    DEF(znodes, 100000);
    DEF(connect_window, 256);
    DEF(session_timeout, 30000);
    DEF(hold_s, 5);
    if (o->variant == NULL)
        o->variant = "fair";
    if (o->ops == NULL)
        o->ops = "create,set,get,exists,delete";
}

static int parse_args(int argc, char **argv, struct bn_opts *o, int *noclean)
{
    int c;

    while ((c = getopt_long(argc, argv, "hv", longopts, NULL)) != -1) {
        switch (c) {
        case O_SERVER:
            o->server = optarg;
            break;
        case O_LABEL:
            g_label = optarg;
            o->label = optarg;
            break;
        case O_PID:
            o->pid = atol(optarg);
            break;
        case O_CLIENTS:
            o->clients = atoi(optarg);
            break;
        case O_LOCKS:
            o->locks = atoi(optarg);
            break;
        case O_HOLD_MS:
            o->hold_ms = atof(optarg);
            break;
        case O_VARIANT:
            o->variant = optarg;
            break;
        case O_ONCE:
            o->once = 1;
            break;
        case O_DURATION:
            o->duration_s = atof(optarg);
            break;
        case O_WARMUP:
            o->warmup_s = atof(optarg);
            break;
        case O_OUTSTANDING:
            o->outstanding = atoi(optarg);
            break;
        case O_DATA:
            o->data_bytes = atoi(optarg);
            break;
        case O_OPS:
            o->ops = optarg;
            break;
        case O_ZNODES:
            o->znodes = atol(optarg);
            break;
        case O_WINDOW:
            o->connect_window = atoi(optarg);
            break;
        case O_STIMEOUT:
            o->session_timeout = atoi(optarg);
            break;
        case O_HOLD_S:
            o->hold_s = atof(optarg);
            break;
        case O_ROOT:
            o->root = optarg;
            break;
        case O_NOCLEAN:
            *noclean = 1;
            break;
        case O_SINCE:
            if (optarg[0] == '@')
                o->since_file = optarg + 1;
            else
                o->since_us = strtoull(optarg, NULL, 10);
            break;
        case O_DIR:
            o->dir = optarg;
            break;
        case O_TAG:
            g_tag = optarg;
            break;
        case O_TLS_PORT:
            o->tls_port = atoi(optarg);
            break;
        case O_TLS_CA:
            o->tls_ca = optarg;
            break;
        case O_TLS_CERT:
            o->tls_cert = optarg;
            break;
        case O_TLS_KEY:
            o->tls_key = optarg;
            break;
        case 'v':
            o->verbose = 1;
            break;
        case 'h':
        case O_HELP:
            usage(stdout);
            exit(0);
        default:
            usage(stderr);
            return -1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    static char root[128];
    struct bn_opts o;
    struct bn_env e;
    const char *scenario;
    int noclean = 0, rc;

    if (argc < 2 || argv[1][0] == '-') {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    scenario = argv[1];
    opts_unset(&o);
    optind = 2;
    if (parse_args(argc, argv, &o, &noclean) != 0)
        return 2;
    opts_defaults(&o, scenario);
    o.cleanup = !noclean;
    if (o.root == NULL) {
        snprintf(root, sizeof(root), "/tbbench-%ld-%ld", (long)getpid(),
                 (long)time(NULL));
        o.root = root;
    }
    if (strcmp(scenario, "disk") == 0)
        return bn_run_disk(&o);
    if (bn_env_init(&e, &o) != 0)
        return 2;
    if (strcmp(scenario, "lock") == 0 || strcmp(scenario, "articles") == 0)
        rc = bn_run_lock(&e);
    else if (strcmp(scenario, "raw") == 0)
        rc = bn_run_raw(&e);
    else if (strcmp(scenario, "sessions") == 0)
        rc = bn_run_sessions(&e);
    else if (strcmp(scenario, "memory") == 0)
        rc = bn_run_memory(&e);
    else if (strcmp(scenario, "idle") == 0)
        rc = bn_run_idle(&e);
    else if (strcmp(scenario, "serving") == 0)
        rc = bn_run_serving(&e);
    else {
        fprintf(stderr, "tbbench: unknown scenario %s\n", scenario);
        usage(stderr);
        rc = 2;
    }
    bn_env_fini(&e);
    return rc;
}
