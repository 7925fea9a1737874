/* Scenarios about capacity rather than speed:
 *
 *   sessions  N sessions connect (a bounded window of handshakes in
 *             flight), are held for a while with pings, then close.
 *             Reports the time to connect them all and the server's RSS.
 *   memory    K znodes of B bytes under <root>/mem/d<j> (1,000 per
 *             directory), then the server's RSS and bytes per znode.
 *   idle      the server's RSS and CPU time as they are now.
 *   serving   polls until the server answers a request (handshake plus
 *             exists "/"), for start-up time: with --since (the wall
 *             clock in microseconds when the server was exec'd, or a
 *             file that holds it) it reports the time from exec to the
 *             first served request. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

#include "tbbench.h"

static const struct bn_conn_ops plain_ops = {NULL, NULL, NULL};

static double since_s(uint64_t t0)
{
    return (double)(bn_now_ns() - t0) / 1e9;
}

static void run_for(struct bn_env *e, double s)
{
    int never = 0;

    (void)bn_loop_run(e->loop, &never, bn_now_ns() + (uint64_t)(s * 1e9));
}

static void add_rss(struct bn_result *res, const char *key,
                    const struct bn_proc_sample *s)
{
    if (s->ok)
        bn_result_add(res, key, "%llu", (unsigned long long)s->rss_kb);
}

int bn_run_sessions(struct bn_env *e)
{
    const struct bn_opts *o = e->o;
    int n = o->clients, i, ready, alive = 0, rc = 1;
    struct bn_conn *cs = calloc((size_t)n, sizeof(*cs));
    struct bn_conn **pc = calloc((size_t)n, sizeof(*pc));
    struct bn_proc_sample p0, p1, p2;
    struct bn_result res;
    double t_conn, t_close;
    uint64_t t0;

    if (cs == NULL || pc == NULL) {
        free(cs);
        free(pc);
        return -1;
    }
    for (i = 0; i < n; i++) {
        bn_conn_init(&cs[i], e->loop, &plain_ops, NULL);
        pc[i] = &cs[i];
    }
    (void)bn_proc_sample(e->pid, &p0);
    t0 = bn_now_ns();
    ready = bn_connect_all(e, pc, n, o->connect_window, 300);
    t_conn = since_s(t0);
    run_for(e, 0.5); /* let the server settle before reading its RSS */
    (void)bn_proc_sample(e->pid, &p1);
    bn_say("sessions: %d of %d connected in %.2f s (%.0f/s)", ready, n, t_conn,
           t_conn > 0 ? ready / t_conn : 0);
    run_for(e, o->hold_s);
    for (i = 0; i < n; i++)
        alive += cs[i].state == BN_READY;
    (void)bn_proc_sample(e->pid, &p2);
    t0 = bn_now_ns();
    bn_close_all(e, pc, n, 120);
    t_close = since_s(t0);
    bn_say("sessions: %d alive after %.1f s held; server RSS %llu kB "
           "(was %llu kB); closed in %.2f s",
           alive, o->hold_s, (unsigned long long)p2.rss_kb,
           (unsigned long long)p0.rss_kb, t_close);
    bn_result_begin(&res, "sessions");
    bn_result_add(&res, "sessions", "%d", n);
    bn_result_add(&res, "connected", "%d", ready);
    bn_result_add(&res, "alive", "%d", alive);
    bn_result_add(&res, "connect_s", "%.3f", t_conn);
    bn_result_add(&res, "sessions_per_s", "%.1f",
                  t_conn > 0 ? ready / t_conn : 0);
    bn_result_add(&res, "hold_s", "%g", o->hold_s);
    bn_result_add(&res, "close_s", "%.3f", t_close);
    add_rss(&res, "rss_before_kb", &p0);
    add_rss(&res, "server_rss_kb", &p2);
    if (p0.ok && p2.ok && n > 0) {
        bn_result_add(&res, "kb_per_session", "%.2f",
                      ((double)p2.rss_kb - (double)p0.rss_kb) / n);
        bn_result_add(&res, "server_cpu_s_connect", "%.2f",
                      bn_ticks_to_s(p1.cpu_ticks - p0.cpu_ticks));
    }
    bn_result_end(&res);
    rc = ready == n && alive == n ? 0 : 1;
    for (i = 0; i < n; i++)
        bn_conn_free(&cs[i]);
    free(cs);
    free(pc);
    return rc;
}

/* ---- memory ---- */

struct mem {
    long issued, done, errors, target;
    int window;
    char dir[256];
    struct tb_str data;
};

static void mem_issue(struct bn_conn *c, struct mem *m);

static void mem_done(struct bn_conn *c, int32_t err, struct tb_rd *body,
                     uint64_t arg, uint64_t sent_ns)
{
    struct mem *m = (struct mem *)(uintptr_t)arg;

    (void)body;
    (void)sent_ns;
    m->done++;
    if (err != 0 && ++m->errors <= 5)
        fprintf(stderr, "tbbench: memory create failed: %s\n", tb_errname(err));
    if (c->state == BN_READY)
        mem_issue(c, m);
}

static void mem_issue(struct bn_conn *c, struct mem *m)
{
    char path[320];

    if (m->issued >= m->target)
        return;
    snprintf(path, sizeof(path), "%s/d%ld/n%ld", m->dir, m->issued / 1000,
             m->issued % 1000);
    m->issued++;
    bn_create(c, tb_str_c(path), m->data, TB_PERSISTENT, mem_done,
              (uintptr_t)m);
}

/* One session makes the directories, then `clients` sessions keep
 * `outstanding` creates each in flight. */
static int mem_fill(struct bn_env *e, struct bn_conn **pc, int n, struct mem *m)
{
    long d, dirs = (m->target + 999) / 1000;
    int i, j, rc, never = 0;
    char path[320];

    if ((rc = bn_ensure_path(e, pc[0], m->dir)) != 0)
        return rc;
    for (d = 0; d < dirs; d++) {
        snprintf(path, sizeof(path), "%s/d%ld", m->dir, d);
        if ((rc = bn_ensure_path(e, pc[0], path)) != 0)
            return rc;
    }
    for (i = 0; i < n; i++)
        for (j = 0; j < m->window; j++)
            mem_issue(pc[i], m);
    while (m->done < m->issued)
        (void)bn_loop_run(e->loop, &never, bn_now_ns() + 2000000);
    return 0;
}

int bn_run_memory(struct bn_env *e)
{
    const struct bn_opts *o = e->o;
    int n = o->clients, i, rc = 1;
    struct bn_conn *cs = calloc((size_t)n, sizeof(*cs));
    struct bn_conn **pc = calloc((size_t)n, sizeof(*pc));
    struct mem m = {0};
    struct bn_proc_sample p0, p1;
    struct bn_result res;
    char *data = malloc((size_t)o->data_bytes + 1);
    double t_fill;
    uint64_t t0;

    if (cs == NULL || pc == NULL || data == NULL)
        goto out;
    memset(data, 'x', (size_t)o->data_bytes);
    m.data = (struct tb_str){data, (size_t)o->data_bytes};
    m.target = o->znodes;
    m.window = o->outstanding;
    snprintf(m.dir, sizeof(m.dir), "%s/mem", o->root);
    for (i = 0; i < n; i++) {
        bn_conn_init(&cs[i], e->loop, &plain_ops, NULL);
        pc[i] = &cs[i];
    }
    (void)bn_proc_sample(e->pid, &p0);
    if (bn_connect_all(e, pc, n, o->connect_window, 60) != n)
        goto out;
    t0 = bn_now_ns();
    if (mem_fill(e, pc, n, &m) != 0)
        goto out;
    t_fill = since_s(t0);
    run_for(e, 1.0); /* let the server settle before reading its RSS */
    (void)bn_proc_sample(e->pid, &p1);
    bn_say("memory: %ld znodes of %d bytes in %.2f s; server RSS %llu kB "
           "(was %llu kB), %ld errors",
           m.done, o->data_bytes, t_fill, (unsigned long long)p1.rss_kb,
           (unsigned long long)p0.rss_kb, m.errors);
    bn_result_begin(&res, "memory");
    bn_result_add(&res, "znodes", "%ld", m.target);
    bn_result_add(&res, "data_bytes", "%d", o->data_bytes);
    bn_result_add(&res, "errors", "%ld", m.errors);
    bn_result_add(&res, "fill_s", "%.3f", t_fill);
    bn_result_add(&res, "creates_per_s", "%.1f",
                  t_fill > 0 ? (double)m.done / t_fill : 0);
    add_rss(&res, "rss_before_kb", &p0);
    add_rss(&res, "server_rss_kb", &p1);
    if (p0.ok && p1.ok && m.target > 0)
        bn_result_add(&res, "bytes_per_znode", "%.1f",
                      ((double)p1.rss_kb - (double)p0.rss_kb) * 1024.0 /
                          (double)m.target);
    bn_result_end(&res);
    rc = m.errors == 0 ? 0 : 1;
    if (o->cleanup)
        (void)bn_delete_tree(e, pc[0], o->root);
out:
    if (pc != NULL && cs != NULL)
        bn_close_all(e, pc, n, 30);
    for (i = 0; cs && i < n; i++)
        bn_conn_free(&cs[i]);
    free(cs);
    free(pc);
    free(data);
    return rc;
}

int bn_run_idle(struct bn_env *e)
{
    struct bn_proc_sample p;
    struct bn_result res;

    if (bn_proc_sample(e->pid, &p) != 0) {
        fprintf(stderr, "tbbench: no server process to read (pid %ld)\n",
                e->pid);
        return 1;
    }
    bn_say("idle: server pid %ld RSS %llu kB, CPU so far %.2f s", e->pid,
           (unsigned long long)p.rss_kb, bn_ticks_to_s(p.cpu_ticks));
    bn_result_begin(&res, "idle");
    bn_result_add(&res, "server_rss_kb", "%llu", (unsigned long long)p.rss_kb);
    bn_result_add(&res, "server_hwm_kb", "%llu", (unsigned long long)p.hwm_kb);
    bn_result_add(&res, "server_cpu_s", "%.2f", bn_ticks_to_s(p.cpu_ticks));
    bn_result_end(&res);
    return 0;
}

/* ---- serving ----
 *
 * A server may accept connections before it serves them (ZooKeeper's
 * listener opens first and leaves early connections waiting), so a single
 * probe with a timeout would measure the timeout.  Instead a new probe
 * starts every 2 ms while earlier ones are still waiting, and the first
 * request answered ends the measurement. */

#define PROBES 64

struct prober {
    struct bn_env *e;
    struct bn_conn c[PROBES];
    uint64_t started[PROBES];
    struct bn_timer tick;
    int done, attempts;
};

static void probe_reply(struct bn_conn *c, int32_t err, struct tb_rd *body,
                        uint64_t arg, uint64_t sent_ns)
{
    struct prober *p = c->data;

    (void)body;
    (void)arg;
    (void)sent_ns;
    if (err == 0)
        p->done = 1;
}

static void probe_ready(struct bn_conn *c)
{
    bn_exists(c, TB_STR("/"), 0, probe_reply, 0);
}

static const struct bn_conn_ops probe_ops = {probe_ready, NULL, NULL};

static void probe_tick(struct bn_timer *t)
{
    struct prober *p = t->data;
    uint64_t now = bn_now_ns();
    int i, started = 0;

    for (i = 0; i < PROBES; i++) {
        struct bn_conn *c = &p->c[i];
        if (c->state != BN_CLOSED && now - p->started[i] > 5000000000ull)
            bn_conn_abort(c, TB_EOPTIMEOUT);
        if (c->state == BN_CLOSED && !started) {
            started = 1;
            p->attempts++;
            p->started[i] = now;
            (void)bn_conn_start(c, (struct sockaddr *)&p->e->sess_addr,
                                p->e->addrlen, p->e->o->session_timeout);
        }
    }
    bn_timer_start(p->e->loop, &p->tick, 2000000);
}

/* The exec time from --since @FILE, written by whoever started the server
 * once it had: wait a little for it. */
static uint64_t since_from_file(const char *path)
{
    unsigned long long us = 0;
    int i;

    for (i = 0; i < 200 && us == 0; i++) {
        FILE *f = fopen(path, "r");
        if (f != NULL) {
            if (fscanf(f, "%llu", &us) != 1)
                us = 0;
            fclose(f);
        }
        if (us == 0)
            nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    if (us == 0)
        fprintf(stderr, "tbbench: no exec time in %s\n", path);
    return us;
}

static uint64_t realtime_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

int bn_run_serving(struct bn_env *e)
{
    const struct bn_opts *o = e->o;
    struct prober *p = calloc(1, sizeof(*p));
    struct bn_conn *pc[PROBES];
    struct bn_result res;
    uint64_t served, since;
    int i;

    if (p == NULL)
        return -1;
    p->e = e;
    for (i = 0; i < PROBES; i++) {
        bn_conn_init(&p->c[i], e->loop, &probe_ops, p);
        pc[i] = &p->c[i];
    }
    bn_timer_init(&p->tick, probe_tick, p);
    probe_tick(&p->tick);
    (void)bn_loop_run(e->loop, &p->done,
                      bn_now_ns() + (uint64_t)(o->duration_s * 1e9));
    served = realtime_us();
    bn_timer_stop(e->loop, &p->tick);
    /* close the sessions that did open so they do not linger to expiry */
    bn_close_all(e, pc, PROBES, 2.0);
    for (i = 0; i < PROBES; i++)
        bn_conn_free(&p->c[i]);
    if (!p->done) {
        fprintf(stderr, "tbbench: %s not serving after %.0f s\n", o->server,
                o->duration_s);
        free(p);
        return 1;
    }
    since =
        o->since_file != NULL ? since_from_file(o->since_file) : o->since_us;
    if (o->since_file != NULL && since == 0) {
        free(p);
        return 1;
    }
    bn_result_begin(&res, "startup");
    bn_result_add(&res, "attempts", "%d", p->attempts);
    bn_result_add(&res, "served_realtime_us", "%" PRIu64, served);
    if (since > 0) {
        double ms = ((double)served - (double)since) / 1e3;
        bn_say("startup: first request served %.1f ms after exec", ms);
        bn_result_add(&res, "startup_ms", "%.1f", ms);
    }
    bn_result_end(&res);
    free(p);
    return 0;
}
