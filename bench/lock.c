/* Lock scenarios: N clients contend for M locks, each holding for H.
 *
 *   fair     EPHEMERAL_SEQUENTIAL child "_c_<uuid>-lock-" under the lock's
 *            parent; the lowest sequence holds; every waiter watches only
 *            its predecessor with exists (the herd-free recipe).
 *   herd     same nodes, but every waiter watches the parent's children
 *            with getChildren, so each release wakes every waiter.
 *   nonfair  one EPHEMERAL node per lock; waiters watch it with exists and
 *            race to create it when it goes.
 *
 * The generator is the referee: it records who holds each lock and counts
 * a violation whenever a grant arrives while another client still holds
 * (a holder stops holding the moment it sends its delete).  Handoff latency
 * is release (delete sent) to the next grant, for grantees that were
 * already waiting when the release happened.  With `once`, each client
 * acquires a single time: the articles' test, where grant intervals per key
 * are what matters. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "tbbench.h"

enum variant { V_FAIR, V_HERD, V_NONFAIR };

enum cstate {
    C_IDLE,
    C_CREATING,
    C_LISTING,
    C_WATCHING, /* exists sent */
    C_WAITING,  /* watch set, waiting for its notification */
    C_HOLDING,
    C_RELEASING,
    C_DONE,
};

struct lk {
    char path[256]; /* fair/herd: parent of the children; nonfair: the node */
    struct cl *holder;
    uint64_t t_release;
    int released;
    uint64_t t_last_grant;
    uint64_t grants; /* measured */
    /* Grant-to-grant minus the nominal hold ("excess"), and minus the hold
     * as it really was ("overhead": release to next grant, the server's
     * part).  They differ by how late the holder's timer fired, which
     * belongs to the client.  Kept apart from the interval itself so a
     * 500 ms hold does not blur sub-millisecond figures. */
    struct bn_hist excess, overhead;
    uint64_t late_sum;
};

struct lrun;

struct cl {
    struct bn_conn c;
    struct lrun *r;
    struct lk *lk;
    enum cstate st;
    char prefix[320]; /* parent + "/_c_<uuid>-lock-" */
    char mine[320];
    int32_t myseq;
    char watch[320];
    uint64_t t_req;
    uint64_t t_notice; /* its watch fired */
    int queued; /* reached a waiting or holding state once */
    struct bn_timer hold;
};

struct lrun {
    struct bn_env *e;
    const struct bn_opts *o;
    enum variant v;
    struct lk *locks;
    struct cl *cls;
    int n;
    uint64_t hold_ns;
    int measuring, stopping, finished;
    uint64_t t_start, t_end;
    uint64_t queued, done_once;
    struct bn_hist acq, handoff;
    /* A handoff's two legs, fair and herd: release to the notice that
     * fires the next holder's watch, then that notice to its grant. */
    struct bn_hist notice, regrant;
    uint64_t acquisitions, violations, errors, last_err;
    uint64_t req0, ev0, req1, ev1;
    struct bn_proc_sample p0, p1;
    struct bn_machine_sample m0, m1;
    struct bn_log log0, log1; /* the server's own figures */
    int sync_ok;
    struct rusage ru0, ru1;
    struct bn_timer t_measure, t_stop;
};

static void acquire(struct cl *k);
static void fair_check(struct cl *k);
static void nf_try(struct cl *k);

static struct cl *cl_of(struct bn_conn *c)
{
    return TB_CONTAINER_OF(c, struct cl, c);
}

static void fail(struct cl *k, int32_t err)
{
    struct lrun *r = k->r;

    if (!r->stopping) {
        r->errors++;
        r->last_err = (uint64_t)(int64_t)err;
        if (r->errors <= 5)
            fprintf(stderr, "tbbench: lock client error %d (%s) in state %d\n",
                    err, tb_errname(err), k->st);
    }
    if (k->lk->holder == k)
        k->lk->holder = NULL;
    k->st = C_DONE;
}

static void mark_queued(struct cl *k)
{
    if (!k->queued) {
        k->queued = 1;
        k->r->queued++;
    }
}

/* ---- grant and release ---- */

static void release(struct cl *k);

static void hold_fire(struct bn_timer *t)
{
    release(t->data);
}

static void grant(struct cl *k)
{
    struct lrun *r = k->r;
    struct lk *lk = k->lk;
    uint64_t now = bn_now_ns();

    if (lk->holder != NULL && lk->holder != k)
        r->violations++;
    lk->holder = k;
    k->st = C_HOLDING;
    mark_queued(k);
    if (r->measuring && !r->stopping) {
        r->acquisitions++;
        bn_hist_add(&r->acq, now - k->t_req);
        if (lk->released && lk->t_release >= k->t_req) {
            bn_hist_add(&r->handoff, now - lk->t_release);
            if (k->t_notice >= lk->t_release) {
                bn_hist_add(&r->notice, k->t_notice - lk->t_release);
                bn_hist_add(&r->regrant, now - k->t_notice);
            }
        }
        if (lk->t_last_grant >= r->t_start && lk->t_last_grant != 0 &&
            lk->released && lk->t_release >= lk->t_last_grant) {
            uint64_t iv = now - lk->t_last_grant;
            uint64_t held = lk->t_release - lk->t_last_grant;
            bn_hist_add(&lk->excess, iv > r->hold_ns ? iv - r->hold_ns : 0);
            bn_hist_add(&lk->overhead, now - lk->t_release);
            lk->late_sum += held > r->hold_ns ? held - r->hold_ns : 0;
        }
        lk->grants++;
    }
    lk->t_last_grant = now;
    if (r->hold_ns == 0)
        release(k);
    else
        bn_timer_start(r->e->loop, &k->hold, r->hold_ns);
}

static void deleted(struct bn_conn *c, int32_t err, struct tb_rd *body,
                    uint64_t arg, uint64_t sent_ns)
{
    struct cl *k = cl_of(c);

    (void)body;
    (void)arg;
    (void)sent_ns;
    if (err != 0) {
        fail(k, err);
        return;
    }
    if (k->r->o->once) {
        k->st = C_DONE;
        if (++k->r->done_once == (uint64_t)k->r->n)
            k->r->finished = 1;
        return;
    }
    acquire(k);
}

static void release(struct cl *k)
{
    struct lk *lk = k->lk;

    if (lk->holder == k)
        lk->holder = NULL;
    lk->t_release = bn_now_ns();
    lk->released = 1;
    k->st = C_RELEASING;
    if (k->r->v == V_NONFAIR)
        bn_delete(&k->c, tb_str_c(lk->path), -1, deleted, 0);
    else
        bn_delete(&k->c, tb_str_c(k->mine), -1, deleted, 0);
}

/* ---- fair and herd ---- */

/* The sequence number of a child "…-lock-0000000042", or 0 if malformed. */
static int parse_seq(struct tb_str name, int32_t *seq)
{
    char buf[11];
    char *end;
    long v;

    if (name.len < 10)
        return 0;
    memcpy(buf, name.ptr + name.len - 10, 10);
    buf[10] = '\0';
    v = strtol(buf, &end, 10);
    if (*end != '\0')
        return 0;
    *seq = (int32_t)v;
    return 1;
}

static void exists_done(struct bn_conn *c, int32_t err, struct tb_rd *body,
                        uint64_t arg, uint64_t sent_ns)
{
    struct cl *k = cl_of(c);

    (void)body;
    (void)arg;
    (void)sent_ns;
    if (k->st != C_WATCHING)
        return;
    if (err == TB_ENONODE) { /* gone between the listing and the watch */
        fair_check(k);
    } else if (err != 0) {
        fail(k, err);
    } else {
        k->st = C_WAITING;
        mark_queued(k);
    }
}

static void listed(struct bn_conn *c, int32_t err, struct tb_rd *body,
                   uint64_t arg, uint64_t sent_ns)
{
    struct cl *k = cl_of(c);
    struct tb_children_resp resp;
    struct tb_rd it;
    struct tb_str name, pred = TB_STR_NULL;
    int32_t seq, pred_seq = INT32_MIN;
    int found_self = 0;

    (void)arg;
    (void)sent_ns;
    if (k->st != C_LISTING)
        return;
    if (err != 0 || tb_children_resp_decode(body, &resp) != 0) {
        fail(k, err ? err : TB_EMARSHALLING);
        return;
    }
    it = tb_vec_reader(resp.children);
    while (tb_vec_next_str(&it, &name) > 0) {
        if (!parse_seq(name, &seq))
            continue;
        if (seq == k->myseq)
            found_self = 1;
        else if (seq < k->myseq && seq >= pred_seq) {
            pred_seq = seq;
            pred = name;
        }
    }
    if (!found_self) {
        fail(k, TB_ENONODE);
        return;
    }
    if (pred.ptr == NULL) {
        grant(k);
    } else if (k->r->v == V_HERD) {
        k->st = C_WAITING; /* the getChildren itself set the watch */
        mark_queued(k);
    } else {
        snprintf(k->watch, sizeof(k->watch), "%s/%.*s", k->lk->path,
                 (int)pred.len, pred.ptr);
        k->st = C_WATCHING;
        bn_exists(&k->c, tb_str_c(k->watch), 1, exists_done, 0);
    }
}

static void fair_check(struct cl *k)
{
    k->st = C_LISTING;
    bn_get_children(&k->c, tb_str_c(k->lk->path), k->r->v == V_HERD, listed, 0);
}

static void created(struct bn_conn *c, int32_t err, struct tb_rd *body,
                    uint64_t arg, uint64_t sent_ns)
{
    struct cl *k = cl_of(c);
    struct tb_path_resp resp;

    (void)arg;
    (void)sent_ns;
    if (k->st != C_CREATING)
        return;
    if (err != 0 || tb_path_resp_decode(body, &resp) != 0 ||
        resp.path.len >= sizeof(k->mine) || !parse_seq(resp.path, &k->myseq)) {
        fail(k, err ? err : TB_EMARSHALLING);
        return;
    }
    memcpy(k->mine, resp.path.ptr, resp.path.len);
    k->mine[resp.path.len] = '\0';
    fair_check(k);
}

/* ---- nonfair ---- */

static void nf_exists_done(struct bn_conn *c, int32_t err, struct tb_rd *body,
                           uint64_t arg, uint64_t sent_ns)
{
    struct cl *k = cl_of(c);

    (void)body;
    (void)arg;
    (void)sent_ns;
    if (k->st != C_WATCHING)
        return;
    if (err == TB_ENONODE) {
        nf_try(k);
    } else if (err != 0) {
        fail(k, err);
    } else {
        k->st = C_WAITING;
        mark_queued(k);
    }
}

static void nf_created(struct bn_conn *c, int32_t err, struct tb_rd *body,
                       uint64_t arg, uint64_t sent_ns)
{
    struct cl *k = cl_of(c);

    (void)body;
    (void)arg;
    (void)sent_ns;
    if (k->st != C_CREATING)
        return;
    if (err == 0) {
        grant(k);
    } else if (err == TB_ENODEEXISTS) {
        k->st = C_WATCHING;
        bn_exists(&k->c, tb_str_c(k->lk->path), 1, nf_exists_done, 0);
    } else {
        fail(k, err);
    }
}

static void nf_try(struct cl *k)
{
    k->st = C_CREATING;
    bn_create(&k->c, tb_str_c(k->lk->path), TB_STR(""), TB_EPHEMERAL,
              nf_created, 0);
}

/* ---- driving ---- */

static void acquire(struct cl *k)
{
    if (k->r->stopping) {
        k->st = C_DONE;
        return;
    }
    k->t_req = bn_now_ns();
    if (k->r->v == V_NONFAIR) {
        nf_try(k);
        return;
    }
    k->st = C_CREATING;
    bn_create(&k->c, tb_str_c(k->prefix), TB_STR(""), TB_EPHEMERAL_SEQUENTIAL,
              created, 0);
}

static void on_event(struct bn_conn *c, int32_t type, struct tb_str path)
{
    struct cl *k = cl_of(c);

    if (k->st != C_WAITING || k->r->stopping)
        return;
    switch (k->r->v) {
    case V_FAIR:
        if (tb_str_eq(path, tb_str_c(k->watch))) {
            k->t_notice = bn_now_ns();
            fair_check(k);
        }
        break;
    case V_HERD:
        if (type == TB_EVENT_CHILDREN_CHANGED &&
            tb_str_eq(path, tb_str_c(k->lk->path))) {
            k->t_notice = bn_now_ns();
            fair_check(k);
        }
        break;
    case V_NONFAIR:
        if (tb_str_eq(path, tb_str_c(k->lk->path)))
            nf_try(k);
        break;
    }
}

static void on_closed(struct bn_conn *c)
{
    struct cl *k = cl_of(c);

    if (k->st != C_DONE && !k->r->stopping)
        fail(k, c->err ? c->err : TB_ECONNECTIONLOSS);
}

static const struct bn_conn_ops lock_ops = {NULL, on_event, on_closed};
static const struct bn_conn_ops admin_ops = {NULL, NULL, NULL};

static void totals(struct lrun *r, uint64_t *req, uint64_t *ev)
{
    int i;

    *req = *ev = 0;
    for (i = 0; i < r->n; i++) {
        *req += r->cls[i].c.n_requests;
        *ev += r->cls[i].c.n_events;
    }
}

static void measure_start(struct lrun *r)
{
    int i;

    /* First: the query holds up this loop, so not in the measured time. */
    r->sync_ok = bn_log_figures(r->e, &r->log0) == 0;
    r->measuring = 1;
    r->t_start = bn_now_ns();
    totals(r, &r->req0, &r->ev0);
    (void)bn_proc_sample(r->e->pid, &r->p0);
    (void)bn_machine_sample(&r->m0);
    getrusage(RUSAGE_SELF, &r->ru0);
    for (i = 0; i < r->o->locks; i++)
        r->locks[i].t_last_grant = 0;
}

static void measure_timer(struct bn_timer *t)
{
    measure_start(t->data);
}

static void measure_stop(struct lrun *r)
{
    if (r->stopping)
        return;
    r->t_end = bn_now_ns();
    totals(r, &r->req1, &r->ev1);
    (void)bn_proc_sample(r->e->pid, &r->p1);
    (void)bn_machine_sample(&r->m1);
    r->sync_ok = r->sync_ok && bn_log_figures(r->e, &r->log1) == 0;
    getrusage(RUSAGE_SELF, &r->ru1);
    r->stopping = 1;
    r->finished = 1;
}

static void stop_timer(struct bn_timer *t)
{
    measure_stop(t->data);
}

/* ---- setup, run, report ---- */

static void make_uuid(char *out, size_t cap, uint64_t *state)
{
    uint64_t a, b;

    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    a = *state;
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    b = *state;
    snprintf(out, cap, "%08x-%04x-4%03x-%04x-%012llx", (unsigned)(a >> 32),
             (unsigned)(a >> 16) & 0xffff, (unsigned)a & 0xfff,
             (unsigned)((b >> 48) & 0x3fff) | 0x8000,
             (unsigned long long)(b & 0xffffffffffffull));
}

static int setup(struct lrun *r, struct bn_conn *admin)
{
    const struct bn_opts *o = r->o;
    uint64_t seed = bn_now_ns() ^ ((uint64_t)getpid() << 32) ^ 0x9e3779b9u;
    char uuid[40], base[200];
    int i, rc;

    snprintf(base, sizeof(base), "%.180s/locks", o->root);
    if ((rc = bn_ensure_path(r->e, admin, base)) != 0)
        return rc;
    for (i = 0; i < o->locks; i++) {
        struct lk *lk = &r->locks[i];
        snprintf(lk->path, sizeof(lk->path), "%s/lock%d", base, i);
        if (r->v != V_NONFAIR &&
            (rc = bn_ensure_path(r->e, admin, lk->path)) != 0)
            return rc;
        bn_hist_reset(&lk->excess);
        bn_hist_reset(&lk->overhead);
    }
    for (i = 0; i < r->n; i++) {
        struct cl *k = &r->cls[i];
        k->r = r;
        k->lk = &r->locks[i % o->locks];
        make_uuid(uuid, sizeof(uuid), &seed);
        snprintf(k->prefix, sizeof(k->prefix), "%s/_c_%s-lock-", k->lk->path,
                 uuid);
        bn_conn_init(&k->c, r->e->loop, &lock_ops, k);
        bn_timer_init(&k->hold, hold_fire, k);
    }
    return 0;
}

static double per_s(uint64_t n, uint64_t ns)
{
    return ns ? (double)n * 1e9 / (double)ns : 0.0;
}

static double cpu_s(const struct rusage *a, const struct rusage *b)
{
    return (double)(b->ru_utime.tv_sec - a->ru_utime.tv_sec) +
           (double)(b->ru_stime.tv_sec - a->ru_stime.tv_sec) +
           (double)(b->ru_utime.tv_usec - a->ru_utime.tv_usec) / 1e6 +
           (double)(b->ru_stime.tv_usec - a->ru_stime.tv_usec) / 1e6;
}

/* Both readings of a figure the server gives. */
static int both_told(uint64_t a, uint64_t b)
{
    return a != UINT64_MAX && b != UINT64_MAX;
}

static void report_common(struct lrun *r, struct bn_result *res)
{
    uint64_t ns = r->t_end - r->t_start;
    uint64_t req = r->req1 - r->req0, ev = r->ev1 - r->ev0;
    double acq = (double)(r->acquisitions ? r->acquisitions : 1);

    bn_result_add(res, "violations", "%llu", (unsigned long long)r->violations);
    bn_result_add(res, "errors", "%llu", (unsigned long long)r->errors);
    bn_result_add(res, "measured_s", "%.2f", (double)ns / 1e9);
    bn_result_add(res, "acquisitions", "%llu",
                  (unsigned long long)r->acquisitions);
    bn_result_add(res, "acq_per_s", "%.1f", per_s(r->acquisitions, ns));
    bn_result_hist(res, "acq", &r->acq);
    bn_result_hist(res, "handoff", &r->handoff);
    if (r->notice.n > 0) {
        bn_result_hist(res, "notice", &r->notice);
        bn_result_hist(res, "regrant", &r->regrant);
    }
    bn_result_add(res, "notif_per_acq", "%.2f", (double)ev / acq);
    bn_result_add(res, "req_per_acq", "%.2f", (double)req / acq);
    if (r->p0.ok && r->p1.ok) {
        double s = bn_ticks_to_s(r->p1.cpu_ticks - r->p0.cpu_ticks);
        bn_result_add(res, "server_cpu_s", "%.2f", s);
        bn_result_add(res, "server_cpu_ms_per_1k_acq", "%.1f", 1e6 * s / acq);
        bn_result_add(res, "server_cpu_ms_per_1k_req", "%.1f",
                      1e6 * s / (double)(req ? req : 1));
        bn_result_add(res, "server_rss_kb", "%llu",
                      (unsigned long long)r->p1.rss_kb);
    }
    bn_result_add(res, "client_cpu_s", "%.2f", cpu_s(&r->ru0, &r->ru1));
    if (r->m0.ok && r->m1.ok) {
        double busy = bn_machine_cpus(&r->m0, &r->m1, r->m1.busy - r->m0.busy);
        bn_result_add(res, "machine_busy_cores", "%.2f", busy);
        bn_result_add(
            res, "machine_steal_cores", "%.2f",
            bn_machine_cpus(&r->m0, &r->m1, r->m1.steal - r->m0.steal));
        bn_result_add(res, "machine_cpu_us_per_acq", "%.1f",
                      busy * ((double)ns / 1e3) / acq);
    }
    if (r->sync_ok) {
        const struct bn_log *a = &r->log0, *b = &r->log1;
        uint64_t n = b->writes - a->writes, k = b->appends - a->appends;
        bn_result_add(res, "synced_writes_per_acq", "%.2f", (double)n / acq);
        if (n > 0 && both_told(a->write_us, b->write_us))
            bn_result_add(res, "synced_write_mean_us", "%.0f",
                          (double)(b->write_us - a->write_us) / (double)n);
        if (both_told(a->appends, b->appends) && k > 0 &&
            both_told(a->wait_us, b->wait_us))
            bn_result_add(res, "append_wait_mean_us", "%.0f",
                          (double)(b->wait_us - a->wait_us) / (double)k);
    }
}

static void report_loop(struct lrun *r)
{
    struct bn_result res;
    uint64_t ns = r->t_end - r->t_start;

    bn_say("lock %s: %d clients x %d locks, hold %.1f ms: %llu acquisitions "
           "in %.1f s = %.0f/s; acquire p50 %.0f us p99 %.0f us; handoff p50 "
           "%.0f us p99 %.0f us; %llu violations, %llu errors",
           r->o->variant, r->n, r->o->locks, r->o->hold_ms,
           (unsigned long long)r->acquisitions, (double)ns / 1e9,
           per_s(r->acquisitions, ns), bn_hist_q(&r->acq, 0.5) / 1e3,
           bn_hist_q(&r->acq, 0.99) / 1e3, bn_hist_q(&r->handoff, 0.5) / 1e3,
           bn_hist_q(&r->handoff, 0.99) / 1e3,
           (unsigned long long)r->violations, (unsigned long long)r->errors);
    if (r->notice.n > 0)
        bn_say("  handoff legs, p50: release to the watch's notice %.0f us, "
               "notice to grant %.0f us",
               bn_hist_q(&r->notice, 0.5) / 1e3,
               bn_hist_q(&r->regrant, 0.5) / 1e3);
    bn_result_begin(&res, "lock");
    bn_result_add(&res, "variant", "%s", r->o->variant);
    bn_result_add(&res, "clients", "%d", r->n);
    bn_result_add(&res, "locks", "%d", r->o->locks);
    bn_result_add(&res, "hold_ms", "%g", r->o->hold_ms);
    report_common(r, &res);
    bn_result_end(&res);
}

static double ms(double ns)
{
    return ns / 1e6;
}

/* The articles' view: per key, the interval between successive grants and
 * the overhead per handoff (interval minus the hold). */
static void report_once(struct lrun *r)
{
    struct bn_result res;
    struct bn_hist *ex = calloc(2, sizeof(*ex)), *ov = ex + 1;
    double hold = (double)r->hold_ns;
    uint64_t late = 0;
    int i;

    if (ex == NULL)
        return;
    bn_result_begin(&res, "articles");
    bn_result_add(&res, "variant", "%s", r->o->variant);
    bn_result_add(&res, "clients", "%d", r->n);
    bn_result_add(&res, "keys", "%d", r->o->locks);
    bn_result_add(&res, "hold_ms", "%g", r->o->hold_ms);
    for (i = 0; i < r->o->locks; i++) {
        struct lk *lk = &r->locks[i];
        char key[48];
        bn_say("articles key %d: %llu grants, interval mean %.3f ms (p50 "
               "%.3f, p99 %.3f, max %.3f); overhead per handoff (release to "
               "next grant) mean %.3f ms, p99 %.3f ms",
               i, (unsigned long long)lk->grants,
               ms(hold + bn_hist_mean(&lk->excess)),
               ms(hold + (double)bn_hist_q(&lk->excess, 0.5)),
               ms(hold + (double)bn_hist_q(&lk->excess, 0.99)),
               ms(hold + (double)lk->excess.max),
               ms(bn_hist_mean(&lk->overhead)),
               ms((double)bn_hist_q(&lk->overhead, 0.99)));
        snprintf(key, sizeof(key), "key%d_grants", i);
        bn_result_add(&res, key, "%llu", (unsigned long long)lk->grants);
        snprintf(key, sizeof(key), "key%d_interval_mean_ms", i);
        bn_result_add(&res, key, "%.3f", ms(hold + bn_hist_mean(&lk->excess)));
        snprintf(key, sizeof(key), "key%d_overhead_mean_ms", i);
        bn_result_add(&res, key, "%.3f", ms(bn_hist_mean(&lk->overhead)));
        bn_hist_merge(ex, &lk->excess);
        bn_hist_merge(ov, &lk->overhead);
        late += lk->late_sum;
    }
    bn_result_add(&res, "intervals", "%llu", (unsigned long long)ex->n);
    bn_result_add(&res, "interval_mean_ms", "%.3f",
                  ms(hold + bn_hist_mean(ex)));
    bn_result_add(&res, "interval_p50_ms", "%.3f",
                  ms(hold + (double)bn_hist_q(ex, 0.5)));
    bn_result_add(&res, "interval_p99_ms", "%.3f",
                  ms(hold + (double)bn_hist_q(ex, 0.99)));
    bn_result_add(&res, "interval_max_ms", "%.3f", ms(hold + (double)ex->max));
    bn_result_add(&res, "excess_mean_ms", "%.3f", ms(bn_hist_mean(ex)));
    bn_result_add(&res, "excess_p99_ms", "%.3f",
                  ms((double)bn_hist_q(ex, 0.99)));
    bn_result_add(&res, "overhead_mean_ms", "%.3f", ms(bn_hist_mean(ov)));
    bn_result_add(&res, "overhead_p50_ms", "%.3f",
                  ms((double)bn_hist_q(ov, 0.5)));
    bn_result_add(&res, "overhead_p99_ms", "%.3f",
                  ms((double)bn_hist_q(ov, 0.99)));
    bn_result_add(&res, "overhead_max_ms", "%.3f", ms((double)ov->max));
    /* how late the holders' timers fired: the client's share of the excess */
    bn_result_add(&res, "timer_late_mean_ms", "%.3f",
                  ex->n ? ms((double)late / (double)ex->n) : 0.0);
    report_common(r, &res);
    bn_result_end(&res);
    free(ex);
}

static int parse_variant(const char *s, enum variant *v)
{
    if (strcmp(s, "fair") == 0)
        *v = V_FAIR;
    else if (strcmp(s, "herd") == 0 || strcmp(s, "fair-herd") == 0)
        *v = V_HERD;
    else if (strcmp(s, "nonfair") == 0)
        *v = V_NONFAIR;
    else
        return -1;
    return 0;
}

/* Waits in once mode until every client has queued, then measures. */
static void wait_queued(struct lrun *r, uint64_t deadline)
{
    int never = 0;

    while (r->queued < (uint64_t)r->n && !r->finished && bn_now_ns() < deadline)
        (void)bn_loop_run(r->e->loop, &never, bn_now_ns() + 2000000);
}

static int run(struct lrun *r)
{
    const struct bn_opts *o = r->o;
    uint64_t limit;
    int i;

    bn_timer_init(&r->t_measure, measure_timer, r);
    bn_timer_init(&r->t_stop, stop_timer, r);
    for (i = 0; i < r->n; i++)
        acquire(&r->cls[i]);
    if (o->once) {
        wait_queued(r, bn_now_ns() + 120000000000ull);
        measure_start(r);
    } else {
        bn_timer_start(r->e->loop, &r->t_measure,
                       (uint64_t)(o->warmup_s * 1e9));
    }
    if (o->duration_s > 0)
        bn_timer_start(
            r->e->loop, &r->t_stop,
            (uint64_t)(((o->once ? 0 : o->warmup_s) + o->duration_s) * 1e9));
    limit =
        bn_now_ns() + (uint64_t)((o->warmup_s + o->duration_s + 3600) * 1e9);
    (void)bn_loop_run(r->e->loop, &r->finished, limit);
    bn_timer_stop(r->e->loop, &r->t_measure);
    bn_timer_stop(r->e->loop, &r->t_stop);
    if (!r->measuring)
        measure_start(r);
    measure_stop(r); /* no-op when the stop timer already ran */
    for (i = 0; i < r->n; i++)
        bn_timer_stop(r->e->loop, &r->cls[i].hold);
    return 0;
}

int bn_run_lock(struct bn_env *e)
{
    const struct bn_opts *o = e->o;
    struct lrun *r = calloc(1, sizeof(*r));
    struct bn_conn admin;
    struct bn_conn *pa = &admin;
    struct bn_conn **pc = NULL;
    int i, ready, rc = -1;

    if (r == NULL)
        return -1;
    r->e = e;
    r->o = o;
    r->n = o->clients;
    r->hold_ns = (uint64_t)(o->hold_ms * 1e6);
    if (parse_variant(o->variant, &r->v) != 0 || o->locks < 1 || r->n < 1) {
        fprintf(stderr, "tbbench: bad lock variant/clients/locks\n");
        free(r);
        return -1;
    }
    r->locks = calloc((size_t)o->locks, sizeof(*r->locks));
    r->cls = calloc((size_t)r->n, sizeof(*r->cls));
    pc = calloc((size_t)r->n, sizeof(*pc));
    bn_conn_init(&admin, e->loop, &admin_ops, NULL);
    if (r->locks == NULL || r->cls == NULL || pc == NULL ||
        bn_connect_all(e, &pa, 1, 1, 10) != 1 || setup(r, &admin) != 0) {
        fprintf(stderr, "tbbench: lock setup failed\n");
        goto out;
    }
    for (i = 0; i < r->n; i++)
        pc[i] = &r->cls[i].c;
    ready = bn_connect_all(e, pc, r->n, o->connect_window, 120);
    if (ready != r->n) {
        fprintf(stderr, "tbbench: only %d of %d sessions connected\n", ready,
                r->n);
        goto out;
    }
    rc = run(r);
    if (o->once)
        report_once(r);
    else
        report_loop(r);
    rc = r->violations == 0 && r->errors == 0 ? 0 : 1;
out:
    if (pc != NULL)
        bn_close_all(e, pc, r->n, 30);
    if (o->cleanup && admin.state == BN_READY)
        (void)bn_delete_tree(e, &admin, o->root);
    bn_close_all(e, &pa, 1, 5);
    for (i = 0; r->cls && i < r->n; i++)
        bn_conn_free(&r->cls[i].c);
    bn_conn_free(&admin);
    free(pc);
    free(r->cls);
    free(r->locks);
    free(r);
    return rc;
}
