/* The deterministic cluster harness (cluster.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cluster.h"
#include "proto/proto.h"
#include "server/replog/replog_attach.h"
#include "tree/tree.h"

static void node_apply(void *data, int64_t index, const void *p, size_t n)
{
    struct node *x = data;

    assert_int_equal(fsm_apply(x->fsm, index, p, n), 0);
}

static int node_snapshot(void *data, struct tb_wbuf *out)
{
    struct node *x = data;

    return fsm_snapshot(x->fsm, out);
}

static int node_restore(void *data, const void *buf, size_t len)
{
    struct node *x = data;

    return fsm_restore(x->fsm, buf, len);
}

static void node_leader(void *data, int is_leader)
{
    struct node *x = data;

    x->leader = is_leader;
    x->leader_changes++;
}

/* Errors only: a scenario that kills servers makes the rest expected. */
static void node_log(void *data, int level, const char *msg)
{
    struct node *x = data;

    if (level <= REPLOG_LOG_ERROR)
        fprintf(stderr, "server %u: %s\n", x->i, msg);
}

void cluster_init(struct cluster *c, unsigned n,
                  const struct replog_config *cfg)
{
    cluster_init_voters(c, n, n, cfg);
}

void cluster_init_voters(struct cluster *c, unsigned n, unsigned voters,
                         const struct replog_config *cfg)
{
    struct fsm_hooks hooks = {0};
    struct raft_configuration conf;
    struct node *x;
    unsigned i;

    memset(c, 0, sizeof *c);
    assert_true(n <= CLUSTER_MAX);
    c->n = n;
    if (cfg != NULL)
        c->cfg = *cfg;
    assert_int_equal(raft_fixture_initialize(&c->f), 0);
    for (i = 0; i < n; i++) {
        struct replog_config rc = c->cfg;
        struct replog_fsm rf;

        x = &c->nodes[i];
        x->c = c;
        x->i = i;
        rc.server_id = (int)i + 1;
        rc.log = node_log;
        rc.log_data = x;
        rc.on_leader = node_leader;
        rc.on_leader_data = x;
        rf = (struct replog_fsm){x, node_apply, node_snapshot, node_restore};
        assert_int_equal(fsm_init(&x->fsm, &hooks), 0);
        assert_int_equal(replog_attach_new(&x->log, &rc, &rf), 0);
        assert_int_equal(raft_fixture_grow(&c->f, replog_attached_fsm(x->log)),
                         0);
        replog_attach(x->log, raft_fixture_get(&c->f, i));
    }
    assert_int_equal(raft_fixture_configuration(&c->f, voters, &conf), 0);
    assert_int_equal(raft_fixture_bootstrap(&c->f, &conf), 0);
    raft_configuration_close(&conf);
    assert_int_equal(raft_fixture_start(&c->f), 0);
}

unsigned cluster_grow(struct cluster *c)
{
    struct fsm_hooks hooks = {0};
    struct replog_config rc = c->cfg;
    struct replog_fsm rf;
    unsigned i = c->n;
    struct node *x = &c->nodes[i];

    assert_true(i < CLUSTER_MAX);
    x->c = c;
    x->i = i;
    rc.server_id = (int)i + 1;
    rc.log = node_log;
    rc.log_data = x;
    rc.on_leader = node_leader;
    rc.on_leader_data = x;
    rc.join = 1;
    rf = (struct replog_fsm){x, node_apply, node_snapshot, node_restore};
    assert_int_equal(fsm_init(&x->fsm, &hooks), 0);
    assert_int_equal(replog_attach_new(&x->log, &rc, &rf), 0);
    assert_int_equal(raft_fixture_grow(&c->f, replog_attached_fsm(x->log)), 0);
    replog_attach(x->log, raft_fixture_get(&c->f, i));
    assert_int_equal(raft_start(raft_fixture_get(&c->f, i)), 0);
    c->n++;
    return i;
}

void cluster_close(struct cluster *c)
{
    unsigned i;

    raft_fixture_close(&c->f);
    for (i = 0; i < c->n; i++) {
        replog_attached_free(c->nodes[i].log);
        fsm_close(c->nodes[i].fsm);
    }
    /* Every proposal got exactly one answer, at the latest here. */
    for (i = 0; i < c->nprops; i++)
        if (c->props[i].fired != 1)
            fail_msg("proposal %u (%s) answered %d times", i, c->props[i].path,
                     c->props[i].fired);
}

static void tick_all(struct cluster *c)
{
    unsigned i;

    for (i = 0; i < c->n; i++)
        if (raft_fixture_alive(&c->f, i)) {
            replog_attached_tick(c->nodes[i].log);
            if (c->on_tick != NULL)
                c->on_tick(c, i, c->on_tick_arg);
        }
}

int cluster_step_until(struct cluster *c, int (*stop)(struct cluster *, void *),
                       void *arg, unsigned ms)
{
    raft_time end = raft_fixture_time(&c->f) + ms;

    tick_all(c);
    while (!stop(c, arg)) {
        if (raft_fixture_time(&c->f) >= end)
            return 0;
        raft_fixture_step(&c->f);
        tick_all(c);
    }
    return 1;
}

static int never(struct cluster *c, void *arg)
{
    (void)c;
    (void)arg;
    return 0;
}

void cluster_step_for(struct cluster *c, unsigned ms)
{
    (void)cluster_step_until(c, never, NULL, ms);
}

/* The live server leading in the highest term, but `not`; c->n if none.
 * Ours, not the fixture's: that one keeps naming a dead or cut-off
 * leader until the others have settled on another. */
static unsigned leader_but(struct cluster *c, unsigned not )
{
    unsigned i, l = c->n;
    struct raft *r;

    for (i = 0; i < c->n; i++) {
        r = raft_fixture_get(&c->f, i);
        if (i != not &&raft_fixture_alive(&c->f, i) &&
            raft_state(r) == RAFT_LEADER &&
            (l == c->n ||
             r->current_term > raft_fixture_get(&c->f, l)->current_term))
            l = i;
    }
    return l;
}

static int has_leader_but(struct cluster *c, void *arg)
{
    return leader_but(c, *(unsigned *)arg) < c->n;
}

unsigned cluster_new_leader(struct cluster *c, unsigned old, unsigned ms)
{
    if (!cluster_step_until(c, has_leader_but, &old, ms))
        fail_msg("no leader but %u within %u ms", old, ms);
    return leader_but(c, old);
}

unsigned cluster_leader(struct cluster *c, unsigned ms)
{
    return cluster_new_leader(c, c->n, ms);
}

static void prop_done(void *arg, int status, int64_t index)
{
    struct prop *p = arg;

    if (p->fired++ != 0)
        fail_msg("proposal %s answered twice", p->path);
    p->status = status;
    p->index = index;
}

static unsigned propose(struct cluster *c, unsigned i, int32_t type,
                        int64_t session, const struct tb_wbuf *body,
                        const char *path)
{
    struct prop *p;
    struct tb_wbuf e;
    struct tb_txn t = {0};
    unsigned k = c->nprops++;
    int rv;

    assert_true(k < CLUSTER_MAX_PROPS);
    p = &c->props[k];
    p->node = i;
    p->type = type;
    snprintf(p->path, sizeof p->path, "%s", path);
    t.type = type;
    t.session = session;
    t.xid = (int32_t)k;
    t.time = (int64_t)raft_fixture_time(&c->f);
    t.super = 1;
    t.body = (struct tb_str){(const char *)body->base, body->len};
    tb_wbuf_init(&e);
    tb_txn_encode(&e, &t);
    rv = replog_propose(c->nodes[i].log, e.base, e.len, prop_done, p);
    tb_wbuf_free(&e);
    if (rv != 0) { /* refused at once: its answer */
        p->fired = 1;
        p->status = rv;
    }
    return k;
}

unsigned cluster_open_session(struct cluster *c, unsigned i)
{
    struct tb_wbuf b;
    struct tb_create_session_txn s = {30000, TB_STR("0123456789abcdef")};
    unsigned k;

    tb_wbuf_init(&b);
    tb_create_session_txn_encode(&b, &s);
    k = propose(c, i, TB_OP_CREATESESSION, 0, &b, "(session)");
    tb_wbuf_free(&b);
    return k;
}

unsigned cluster_create(struct cluster *c, unsigned i, const char *path,
                        int32_t flags)
{
    struct tb_wbuf b;
    struct tb_create_req r = {tb_str_c(path), TB_STR("v"), tb_acl_open_unsafe,
                              flags};
    unsigned k;

    tb_wbuf_init(&b);
    tb_create_req_encode(&b, &r);
    k = propose(c, i, TB_OP_CREATE, c->session, &b, path);
    tb_wbuf_free(&b);
    return k;
}

unsigned cluster_close_session(struct cluster *c, unsigned i)
{
    struct tb_wbuf b;
    unsigned k;

    tb_wbuf_init(&b);
    k = propose(c, i, TB_OP_CLOSESESSION, c->session, &b, "(close)");
    tb_wbuf_free(&b);
    return k;
}

int64_t cluster_session_of(struct cluster *c, unsigned p)
{
    assert_int_equal(c->props[p].fired, 1);
    assert_int_equal(c->props[p].status, 0);
    return fsm_session_id_for(
        fsm_zxid_of(c->nodes[c->props[p].node].fsm, c->props[p].index));
}

int cluster_has(struct cluster *c, unsigned i, const char *path)
{
    return tree_find(fsm_tree(c->nodes[i].fsm), tb_str_c(path)) != NULL;
}

/* Every live server has applied all its leader has. */
static int caught_up(struct cluster *c, void *arg)
{
    unsigned l = leader_but(c, c->n), i;
    raft_index last;

    (void)arg;
    if (l >= c->n)
        return 0;
    last = raft_last_index(raft_fixture_get(&c->f, l));
    for (i = 0; i < c->n; i++)
        if (raft_fixture_alive(&c->f, i) &&
            raft_last_applied(raft_fixture_get(&c->f, i)) != last)
            return 0;
    return 1;
}

void cluster_converge(struct cluster *c, unsigned ms)
{
    struct tb_wbuf first, other;
    int have = 0;
    unsigned i, k;

    if (!cluster_step_until(c, caught_up, NULL, ms))
        fail_msg("servers not caught up within %u ms", ms);
    tb_wbuf_init(&first);
    tb_wbuf_init(&other);
    for (i = 0; i < c->n; i++) {
        if (!raft_fixture_alive(&c->f, i))
            continue;
        if (!have) {
            assert_int_equal(fsm_snapshot(c->nodes[i].fsm, &first), 0);
            have = 1;
            k = i;
            continue;
        }
        other.len = 0;
        assert_int_equal(fsm_snapshot(c->nodes[i].fsm, &other), 0);
        assert_int_equal(fsm_last_zxid(c->nodes[i].fsm),
                         fsm_last_zxid(c->nodes[k].fsm));
        if (other.len != first.len ||
            memcmp(other.base, first.base, first.len) != 0)
            fail_msg("server %u's state differs from server %u's", i, k);
    }
    for (k = 0; k < c->nprops; k++) {
        struct prop *p = &c->props[k];
        assert_true(p->fired <= 1);
        if (p->fired == 1 && p->status == 0 && p->type == TB_OP_CREATE &&
            !p->gone)
            for (i = 0; i < c->n; i++)
                if (raft_fixture_alive(&c->f, i) && !cluster_has(c, i, p->path))
                    fail_msg("acknowledged %s missing on server %u", p->path,
                             i);
    }
    tb_wbuf_free(&first);
    tb_wbuf_free(&other);
}

void cluster_isolate(struct cluster *c, unsigned i)
{
    unsigned j;

    for (j = 0; j < c->n; j++)
        if (j != i) {
            raft_fixture_disconnect(&c->f, i, j);
            raft_fixture_disconnect(&c->f, j, i);
        }
}

void cluster_rejoin(struct cluster *c, unsigned i)
{
    unsigned j;

    for (j = 0; j < c->n; j++)
        if (j != i) {
            raft_fixture_reconnect(&c->f, i, j);
            raft_fixture_reconnect(&c->f, j, i);
        }
}
