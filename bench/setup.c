/* Scenario plumbing shared by every scenario: resolving the server,
 * opening many sessions with a bounded number of handshakes in flight,
 * closing them all, and the few blocking tree operations a scenario needs
 * to prepare or clean up (create a path, delete a subtree).
 *
 * Handshakes are windowed because a burst of thousands of SYNs overflows
 * the listen backlog and the kernel then retries after a whole second,
 * which would measure the client, not the server. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "tbbench.h"

int bn_env_init(struct bn_env *e, const struct bn_opts *o)
{
    const char *colon;
    struct rlimit rl;
    char list[1024], *save = NULL, *tok;

    memset(e, 0, sizeof(*e));
    e->o = o;
    snprintf(list, sizeof(list), "%s", o->server);
    for (tok = strtok_r(list, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        if (e->n_servers == BN_MAX_SERVERS ||
            bn_resolve(tok, &e->more[e->n_servers],
                       &e->more_len[e->n_servers]) != 0) {
            fprintf(stderr, "tbbench: cannot resolve %s\n", tok);
            return -1;
        }
        e->n_servers++;
    }
    if (e->n_servers == 0) {
        fprintf(stderr, "tbbench: no server in %s\n", o->server);
        return -1;
    }
    if (e->n_servers > 1 && o->tls_port > 0) {
        fprintf(stderr, "tbbench: --tls-port takes one --server\n");
        return -1;
    }
    e->addr = e->more[0];
    e->addrlen = e->more_len[0];
    e->sess_addr = e->addr;
    if (o->tls_port > 0) {
        if (bn_tls_init(o->tls_ca, o->tls_cert, o->tls_key) != 0)
            return -1;
        if (e->addr.ss_family == AF_INET6)
            ((struct sockaddr_in6 *)&e->sess_addr)->sin6_port =
                htons((uint16_t)o->tls_port);
        else
            ((struct sockaddr_in *)&e->sess_addr)->sin_port =
                htons((uint16_t)o->tls_port);
    }
    e->pid = o->pid;
    colon = strrchr(list, ':'); /* list: the first server, cut by strtok */
    if (e->pid <= 0 && colon != NULL)
        e->pid = bn_find_listener_pid(atoi(colon + 1));
    /* ten thousand sessions need as many descriptors */
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &rl);
    }
    e->loop = bn_loop_new();
    return e->loop ? 0 : -1;
}

const struct sockaddr *bn_sess_addr(const struct bn_env *e, int i,
                                    unsigned *len)
{
    if (e->n_servers <= 1) {
        *len = e->addrlen;
        return (const struct sockaddr *)&e->sess_addr;
    }
    i %= e->n_servers;
    *len = e->more_len[i];
    return (const struct sockaddr *)&e->more[i];
}

void bn_env_fini(struct bn_env *e)
{
    bn_loop_free(e->loop);
    e->loop = NULL;
}

/* ---- connecting many sessions ---- */

struct gate {
    struct bn_env *e;
    struct bn_conn **conns;
    int n, next, inflight, ready, failed, done, window;
};

static void gate_fill(struct gate *g);

static void gate_settle(struct bn_conn *c, int ok)
{
    struct gate *g = c->settle_data;

    c->settle = NULL;
    g->inflight--;
    if (ok)
        g->ready++;
    else
        g->failed++;
    gate_fill(g);
}

static void gate_fill(struct gate *g)
{
    while (g->inflight < g->window && g->next < g->n) {
        unsigned len;
        const struct sockaddr *a = bn_sess_addr(g->e, g->next, &len);
        struct bn_conn *c = g->conns[g->next++];
        c->settle = gate_settle;
        c->settle_data = g;
        if (bn_conn_start(c, a, len, g->e->o->session_timeout) != 0) {
            c->settle = NULL;
            g->failed++;
            continue;
        }
        g->inflight++;
    }
    if (g->ready + g->failed == g->n)
        g->done = 1;
}

int bn_connect_all(struct bn_env *e, struct bn_conn **conns, int n, int window,
                   double timeout_s)
{
    struct gate g = {e, conns, n, 0, 0, 0, 0, 0, window > 0 ? window : 1};
    int i;

    gate_fill(&g);
    bn_loop_run(e->loop, &g.done, bn_now_ns() + (uint64_t)(timeout_s * 1e9));
    for (i = 0; i < n; i++)
        conns[i]->settle = NULL;
    return g.ready;
}

void bn_close_all(struct bn_env *e, struct bn_conn **conns, int n,
                  double timeout_s)
{
    uint64_t deadline = bn_now_ns() + (uint64_t)(timeout_s * 1e9);
    int i, open = 0, never = 0;

    for (i = 0; i < n; i++)
        if (conns[i]->state != BN_CLOSED)
            bn_conn_close(conns[i]);
    do {
        (void)bn_loop_run(e->loop, &never, bn_now_ns() + 5000000);
        for (open = 0, i = 0; i < n; i++)
            open += conns[i]->state != BN_CLOSED;
    } while (open > 0 && bn_now_ns() < deadline);
    for (i = 0; i < n; i++)
        bn_conn_abort(conns[i], 0);
}

/* ---- blocking calls for setup and cleanup ---- */

struct call {
    int done;
    int32_t err;
    char **children; /* getChildren result, NULL-terminated */
};

static void call_cb(struct bn_conn *c, int32_t err, struct tb_rd *body,
                    uint64_t arg, uint64_t sent_ns)
{
    struct call *k = (struct call *)(uintptr_t)arg;

    (void)c;
    (void)body;
    (void)sent_ns;
    k->err = err;
    k->done = 1;
}

static void children_cb(struct bn_conn *c, int32_t err, struct tb_rd *body,
                        uint64_t arg, uint64_t sent_ns)
{
    struct call *k = (struct call *)(uintptr_t)arg;
    struct tb_children_resp r;

    (void)c;
    (void)sent_ns;
    k->err = err;
    k->done = 1;
    if (err == 0 && body != NULL && tb_children_resp_decode(body, &r) == 0 &&
        r.children.n >= 0) {
        struct tb_rd it = tb_vec_reader(r.children);
        struct tb_str s;
        int i = 0;
        k->children = calloc((size_t)r.children.n + 1, sizeof(char *));
        while (k->children && tb_vec_next_str(&it, &s) > 0)
            k->children[i++] = strndup(s.ptr, s.len);
    }
}

static int call_wait(struct bn_env *e, struct call *k)
{
    if (bn_loop_run(e->loop, &k->done, bn_now_ns() + 30000000000ull) != 0)
        return TB_EOPTIMEOUT;
    return k->err;
}

int bn_ensure_path(struct bn_env *e, struct bn_conn *c, const char *path)
{
    char buf[512];
    size_t i, n = strlen(path);

    if (n >= sizeof(buf))
        return TB_EBADARGUMENTS;
    for (i = 1; i <= n; i++) {
        struct call k = {0};
        if (i < n && path[i] != '/')
            continue;
        memcpy(buf, path, i);
        buf[i] = '\0';
        bn_create(c, tb_str_c(buf), TB_STR(""), TB_PERSISTENT, call_cb,
                  (uintptr_t)&k);
        if (call_wait(e, &k) != 0 && k.err != TB_ENODEEXISTS)
            return k.err ? k.err : TB_EOPTIMEOUT;
    }
    return 0;
}

static void free_list(char **v)
{
    size_t i;

    for (i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

struct del_state {
    long inflight, deleted, failed;
};

static void del_cb(struct bn_conn *c, int32_t err, struct tb_rd *body,
                   uint64_t arg, uint64_t sent_ns)
{
    struct del_state *d = (struct del_state *)(uintptr_t)arg;

    (void)c;
    (void)body;
    (void)sent_ns;
    d->inflight--;
    if (err == 0)
        d->deleted++;
    else
        d->failed++;
}

/* Collects `path` and everything below it, parents before children. */
static int collect(struct bn_env *e, struct bn_conn *c, const char *path,
                   char ***all, size_t *n, size_t *cap)
{
    struct call k = {0};
    size_t i;
    int rc;

    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 1024;
        char **v = realloc(*all, nc * sizeof(char *));
        if (v == NULL)
            return TB_ENOMEM;
        *all = v;
        *cap = nc;
    }
    (*all)[(*n)++] = strdup(path);
    bn_get_children(c, tb_str_c(path), 0, children_cb, (uintptr_t)&k);
    rc = call_wait(e, &k);
    for (i = 0; rc == 0 && k.children && k.children[i]; i++) {
        char child[1024];
        snprintf(child, sizeof(child), "%s/%s", path, k.children[i]);
        rc = collect(e, c, child, all, n, cap);
    }
    free_list(k.children);
    return rc == TB_ENONODE ? 0 : rc;
}

long bn_delete_tree(struct bn_env *e, struct bn_conn *c, const char *path)
{
    char **all = NULL;
    size_t n = 0, cap = 0, i;
    struct del_state d = {0};
    int never = 0;

    (void)collect(e, c, path, &all, &n, &cap);
    /* one connection keeps the order: children go before their parent */
    for (i = n; i-- > 0;) {
        bn_delete(c, tb_str_c(all[i]), -1, del_cb, (uintptr_t)&d);
        d.inflight++;
        while (d.inflight >= 512 && c->state == BN_READY)
            (void)bn_loop_run(e->loop, &never, bn_now_ns() + 1000000);
    }
    while (d.inflight > 0 && c->state == BN_READY)
        (void)bn_loop_run(e->loop, &never, bn_now_ns() + 1000000);
    for (i = 0; i < n; i++)
        free(all[i]);
    free(all);
    return d.deleted;
}
