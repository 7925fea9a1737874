/* Raw operations: N clients, each keeping K requests in flight, run one
 * operation at a time for a warm-up and a measured period:
 *
 *   create  persistent nodes <root>/raw/c<i>/n<seq> with B bytes of data
 *   set     setData on those nodes, round robin
 *   get     getData on them
 *   exists  exists on them
 *   delete  deletes them in creation order (ends early if they run out)
 *
 * Phases run in the order given, so "create,set,get,exists,delete" leaves
 * the tree as it found it.  A read phase with nothing created first makes
 * a few nodes per client before its clock starts. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "tbbench.h"

enum rop { R_CREATE, R_SET, R_GET, R_EXISTS, R_DELETE };

static const char *const op_names[] = {"create", "set", "get", "exists",
                                       "delete"};

struct rrun;

struct rcl {
    struct bn_conn c;
    struct rrun *r;
    char base[256];
    uint64_t created; /* names n0 .. n(created-1) were issued */
    uint64_t deleted; /* names below this were issued for deletion */
    uint64_t cursor;
    int exhausted;
};

struct rrun {
    struct bn_env *e;
    const struct bn_opts *o;
    struct rcl *cls;
    int n;
    enum rop op;
    int active, measuring, finished;
    int exhausted;
    uint64_t t_start, t_end, ops, errors;
    int32_t last_err;
    struct bn_hist lat;
    struct bn_proc_sample p0, p1;
    struct rusage ru0, ru1;
    struct tb_str data;
    struct bn_timer t_measure, t_stop;
};

static void issue(struct rcl *k);
static void measure_timer(struct bn_timer *t);

static struct rcl *rcl_of(struct bn_conn *c)
{
    return TB_CONTAINER_OF(c, struct rcl, c);
}

static void replied(struct bn_conn *c, int32_t err, struct tb_rd *body,
                    uint64_t arg, uint64_t sent_ns)
{
    struct rcl *k = rcl_of(c);
    struct rrun *r = k->r;

    (void)body;
    (void)arg;
    if (r->measuring && r->active) {
        if (err != 0) {
            r->errors++;
            if (r->errors <= 5)
                fprintf(stderr, "tbbench: %s failed: %s\n", op_names[r->op],
                        tb_errname(err));
        } else {
            r->ops++;
            bn_hist_add(&r->lat, bn_now_ns() - sent_ns);
        }
    }
    if (r->active)
        issue(k);
}

static void node_path(struct rcl *k, uint64_t i, char *out, size_t cap)
{
    snprintf(out, cap, "%s/n%010" PRIu64, k->base, i);
}

static void issue(struct rcl *k)
{
    struct rrun *r = k->r;
    char path[300];
    struct tb_str p;

    switch (r->op) {
    case R_CREATE:
        node_path(k, k->created++, path, sizeof(path));
        bn_create(&k->c, tb_str_c(path), r->data, TB_PERSISTENT, replied, 0);
        return;
    case R_DELETE:
        if (k->deleted >= k->created) {
            if (!k->exhausted && bn_conn_inflight(&k->c) == 0) {
                k->exhausted = 1;
                if (++r->exhausted == r->n) {
                    bn_timer_stop(r->e->loop, &r->t_measure);
                    if (!r->measuring) /* ran out during the warm-up */
                        measure_timer(&r->t_measure);
                    r->t_end = bn_now_ns();
                    r->active = 0;
                    r->finished = 1;
                }
            }
            return;
        }
        node_path(k, k->deleted++, path, sizeof(path));
        bn_delete(&k->c, tb_str_c(path), -1, replied, 0);
        return;
    default:
        break;
    }
    node_path(k, k->deleted + k->cursor++ % (k->created - k->deleted), path,
              sizeof(path));
    p = tb_str_c(path);
    if (r->op == R_SET)
        bn_set_data(&k->c, p, r->data, -1, replied, 0);
    else if (r->op == R_GET)
        bn_get_data(&k->c, p, 0, replied, 0);
    else
        bn_exists(&k->c, p, 0, replied, 0);
}

static void measure_timer(struct bn_timer *t)
{
    struct rrun *r = t->data;

    r->measuring = 1;
    r->t_start = bn_now_ns();
    (void)bn_proc_sample(r->e->pid, &r->p0);
    getrusage(RUSAGE_SELF, &r->ru0);
}

static void stop_timer(struct bn_timer *t)
{
    struct rrun *r = t->data;

    r->t_end = bn_now_ns();
    r->active = 0;
    r->finished = 1;
}

/* Lets every in-flight request come back so the next phase starts clean. */
static void drain(struct rrun *r)
{
    int i, busy, never = 0;
    uint64_t deadline = bn_now_ns() + 30000000000ull;

    do {
        for (busy = 0, i = 0; i < r->n; i++)
            busy += bn_conn_inflight(&r->cls[i].c) > 0;
        if (busy)
            (void)bn_loop_run(r->e->loop, &never, bn_now_ns() + 1000000);
    } while (busy && bn_now_ns() < deadline);
}

static void report(struct rrun *r)
{
    const struct bn_opts *o = r->o;
    struct bn_result res;
    uint64_t ns = r->t_end - r->t_start;
    double rate = ns ? (double)r->ops * 1e9 / (double)ns : 0;

    bn_say("raw %s: %d clients x %d outstanding: %" PRIu64 " ops in %.1f s "
           "= %.0f/s; latency p50 %.0f us p99 %.0f us p999 %.0f us; %" PRIu64
           " errors",
           op_names[r->op], r->n, o->outstanding, r->ops, (double)ns / 1e9,
           rate, bn_hist_q(&r->lat, 0.5) / 1e3, bn_hist_q(&r->lat, 0.99) / 1e3,
           bn_hist_q(&r->lat, 0.999) / 1e3, r->errors);
    bn_result_begin(&res, "raw");
    bn_result_add(&res, "op", "%s", op_names[r->op]);
    bn_result_add(&res, "clients", "%d", r->n);
    bn_result_add(&res, "outstanding", "%d", o->outstanding);
    bn_result_add(&res, "data_bytes", "%d", o->data_bytes);
    bn_result_add(&res, "errors", "%" PRIu64, r->errors);
    bn_result_add(&res, "measured_s", "%.2f", (double)ns / 1e9);
    bn_result_add(&res, "ops", "%" PRIu64, r->ops);
    bn_result_add(&res, "ops_per_s", "%.1f", rate);
    bn_result_hist(&res, "lat", &r->lat);
    if (r->p0.ok && r->p1.ok) {
        double s = bn_ticks_to_s(r->p1.cpu_ticks - r->p0.cpu_ticks);
        bn_result_add(&res, "server_cpu_s", "%.2f", s);
        bn_result_add(&res, "server_cpu_ms_per_1k_ops", "%.1f",
                      1e6 * s / (double)(r->ops ? r->ops : 1));
        bn_result_add(&res, "server_rss_kb", "%llu",
                      (unsigned long long)r->p1.rss_kb);
    }
    bn_result_add(
        &res, "client_cpu_s", "%.2f",
        (double)(r->ru1.ru_utime.tv_sec - r->ru0.ru_utime.tv_sec) +
            (double)(r->ru1.ru_stime.tv_sec - r->ru0.ru_stime.tv_sec) +
            (double)(r->ru1.ru_utime.tv_usec - r->ru0.ru_utime.tv_usec) / 1e6 +
            (double)(r->ru1.ru_stime.tv_usec - r->ru0.ru_stime.tv_usec) / 1e6);
    bn_result_end(&res);
}

/* Reads need nodes to read: make a few per client, unmeasured. */
static void preload(struct rrun *r)
{
    enum rop saved = r->op;
    int i, j;

    r->op = R_CREATE;
    r->active = 0;
    for (i = 0; i < r->n; i++)
        if (r->cls[i].created == r->cls[i].deleted)
            for (j = 0; j < 100; j++)
                issue(&r->cls[i]);
    drain(r);
    r->op = saved;
}

static void phase(struct rrun *r, enum rop op)
{
    const struct bn_opts *o = r->o;
    int i, j;

    r->op = op;
    if (op != R_CREATE && op != R_DELETE)
        preload(r);
    r->active = 1;
    r->measuring = 0;
    r->finished = 0;
    r->exhausted = 0;
    r->ops = r->errors = 0;
    bn_hist_reset(&r->lat);
    for (i = 0; i < r->n; i++)
        r->cls[i].exhausted = 0;
    bn_timer_init(&r->t_measure, measure_timer, r);
    bn_timer_init(&r->t_stop, stop_timer, r);
    bn_timer_start(r->e->loop, &r->t_measure, (uint64_t)(o->warmup_s * 1e9));
    bn_timer_start(r->e->loop, &r->t_stop,
                   (uint64_t)((o->warmup_s + o->duration_s) * 1e9));
    for (i = 0; i < r->n; i++)
        for (j = 0; j < o->outstanding && r->active; j++)
            issue(&r->cls[i]);
    (void)bn_loop_run(r->e->loop, &r->finished, 0);
    if (!r->measuring) /* ran out during warm-up: nothing measured */
        measure_timer(&r->t_measure);
    bn_timer_stop(r->e->loop, &r->t_measure);
    bn_timer_stop(r->e->loop, &r->t_stop);
    (void)bn_proc_sample(r->e->pid, &r->p1);
    getrusage(RUSAGE_SELF, &r->ru1);
    drain(r);
    report(r);
}

static int parse_ops(const char *list, enum rop *ops, int max)
{
    char buf[256], *save = NULL, *tok;
    int n = 0;
    unsigned i;

    snprintf(buf, sizeof(buf), "%s", list);
    for (tok = strtok_r(buf, ",", &save); tok && n < max;
         tok = strtok_r(NULL, ",", &save)) {
        for (i = 0; i < sizeof(op_names) / sizeof(op_names[0]); i++)
            if (strcmp(tok, op_names[i]) == 0)
                break;
        if (i == sizeof(op_names) / sizeof(op_names[0]))
            return -1;
        ops[n++] = (enum rop)i;
    }
    return n;
}

static const struct bn_conn_ops raw_ops = {NULL, NULL, NULL};

int bn_run_raw(struct bn_env *e)
{
    const struct bn_opts *o = e->o;
    struct rrun r = {0};
    enum rop ops[16];
    struct bn_conn **pc;
    char *data;
    int nops, i, rc = 1;

    nops = parse_ops(o->ops, ops, 16);
    if (nops <= 0 || o->clients < 1 || o->outstanding < 1) {
        fprintf(stderr, "tbbench: bad --ops/--clients/--outstanding\n");
        return -1;
    }
    r.e = e;
    r.o = o;
    r.n = o->clients;
    r.cls = calloc((size_t)r.n, sizeof(*r.cls));
    pc = calloc((size_t)r.n, sizeof(*pc));
    data = malloc((size_t)o->data_bytes + 1);
    if (r.cls == NULL || pc == NULL || data == NULL)
        goto out;
    memset(data, 'x', (size_t)o->data_bytes);
    r.data = (struct tb_str){data, (size_t)o->data_bytes};
    for (i = 0; i < r.n; i++) {
        r.cls[i].r = &r;
        snprintf(r.cls[i].base, sizeof(r.cls[i].base), "%s/raw/c%d", o->root,
                 i);
        bn_conn_init(&r.cls[i].c, e->loop, &raw_ops, &r.cls[i]);
        pc[i] = &r.cls[i].c;
    }
    if (bn_connect_all(e, pc, r.n, o->connect_window, 60) != r.n) {
        fprintf(stderr, "tbbench: raw: not every session connected\n");
        goto out;
    }
    for (i = 0; i < r.n; i++)
        if (bn_ensure_path(e, pc[i], r.cls[i].base) != 0) {
            fprintf(stderr, "tbbench: raw: cannot create %s\n", r.cls[i].base);
            goto out;
        }
    rc = 0;
    for (i = 0; i < nops; i++) {
        phase(&r, ops[i]);
        if (r.errors != 0)
            rc = 1;
    }
    if (o->cleanup)
        (void)bn_delete_tree(e, pc[0], o->root);
out:
    if (pc != NULL && r.cls != NULL)
        bn_close_all(e, pc, r.n, 30);
    for (i = 0; r.cls && i < r.n; i++)
        bn_conn_free(&r.cls[i].c);
    free(pc);
    free(r.cls);
    free(data);
    return rc;
}
