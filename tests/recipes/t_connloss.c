/* Connections that break at the worst moments, through a proxy the test
 * cuts (rt_proxy.c): after the create went to the server but before its
 * reply came back, before it reached the server, during the search for
 * the node after that, while waiting, while giving up and while
 * releasing.  After each case the lock's parent holds exactly the nodes
 * that should be there: no orphan, and the lock still works (no
 * deadlock).  A holder whose connection breaks briefly is told SUSPENDED
 * and then HELD again. */
#include <string.h>

#include "rt.h"
#include "rt_async.h"
#include "tests.h"

#define OP_DELETE      2
#define OP_GETCHILDREN 8
#define OP_SYNC        9
#define OP_CREATE2     15
#define PATH           "/rt/connloss/lock"

static struct rt_cut k;

/* Create applied, reply lost; then also the first search's reply. */
static void case_lost_reply(int also_find)
{
    struct tb_mutex *m;
    struct tb_recipe_stats st;
    struct rt_acq a;
    int cuts = rt_proxy_cuts(k.px);

    CHECK_RC(tb_mutex_new(&m, k.proxied, PATH, NULL), 0);
    rt_proxy_cut_on(k.px, OP_CREATE2, 1, 300);
    rt_acq_init(&a);
    CHECK_RC(tb_mutex_lock(m, -1, rt_acq_cb, &a), 0);
    rt_cut_wait(&k, cuts + 1);
    if (also_find) {
        rt_proxy_cut_on(k.px, OP_GETCHILDREN, 1, 300);
        rt_cut_wait(&k, cuts + 2);
    }
    CHECK_RC(rt_acq_wait(&a, 15000), 0);
    tb_mutex_stats(m, &st);
    CHECK(st.recoveries == 1 && st.creates == 1);
    CHECK(rt_nchildren(k.direct, PATH) == 1);
    CHECK_RC(tb_mutex_unlock_sync(m), 0);
    CHECK(rt_nchildren(k.direct, PATH) == 0);
    tb_mutex_free(m);
    printf("lost create reply%s: node found by its uuid, no orphan\n",
           also_find ? " and lost search reply" : "");
}

/* The create never reached the server: the search finds nothing and the
 * create is sent again. */
static void case_not_sent(void)
{
    struct tb_mutex *m;
    struct tb_recipe_stats st;
    struct rt_acq a;
    int cuts = rt_proxy_cuts(k.px);

    CHECK_RC(tb_mutex_new(&m, k.proxied, PATH, NULL), 0);
    rt_proxy_cut_on(k.px, OP_CREATE2, 0, 300);
    rt_acq_init(&a);
    CHECK_RC(tb_mutex_lock(m, -1, rt_acq_cb, &a), 0);
    rt_cut_wait(&k, cuts + 1);
    CHECK_RC(rt_acq_wait(&a, 15000), 0);
    tb_mutex_stats(m, &st);
    CHECK(st.recoveries == 0 && st.creates == 2);
    CHECK(rt_nchildren(k.direct, PATH) == 1);
    CHECK_RC(tb_mutex_unlock_sync(m), 0);
    CHECK(rt_nchildren(k.direct, PATH) == 0);
    tb_mutex_free(m);
    printf("create not sent: created again, one node\n");
}

/* Behind a holder: a lost create reply still queues exactly once, and the
 * hand-over works. */
static void case_queued(void)
{
    struct tb_mutex *h, *m;
    struct rt_acq a;
    int64_t th;
    int cuts = rt_proxy_cuts(k.px);

    CHECK_RC(tb_mutex_new(&h, k.direct, PATH, NULL), 0);
    CHECK_RC(tb_mutex_lock_sync(h, 5000, &th), 0);
    CHECK_RC(tb_mutex_new(&m, k.proxied, PATH, NULL), 0);
    rt_proxy_cut_on(k.px, OP_CREATE2, 1, 300);
    rt_acq_init(&a);
    CHECK_RC(tb_mutex_lock(m, -1, rt_acq_cb, &a), 0);
    rt_cut_wait(&k, cuts + 1);
    CHECK(rt_wait_nchildren(k.direct, PATH, 2, 5000) == 2);
    rt_sleep_ms(800); /* reconnected and queued, still exactly two */
    CHECK(rt_nchildren(k.direct, PATH) == 2);
    CHECK(!rt_acq_done(&a));
    CHECK_RC(tb_mutex_unlock_sync(h), 0);
    CHECK_RC(rt_acq_wait(&a, 10000), 0);
    CHECK(a.token > th);
    CHECK_RC(tb_mutex_unlock_sync(m), 0);
    CHECK(rt_nchildren(k.direct, PATH) == 0);
    tb_mutex_free(m);
    printf("lost create reply behind a holder: queued once, handed over\n");

    /* Giving up while the reply is lost and the server unreachable: the
     * give-up waits for the node to be found, then deletes it. */
    CHECK_RC(tb_mutex_lock_sync(h, 5000, &th), 0);
    CHECK_RC(tb_mutex_new(&m, k.proxied, PATH, NULL), 0);
    cuts = rt_proxy_cuts(k.px);
    rt_proxy_cut_on(k.px, OP_CREATE2, 1, 1500);
    CHECK_RC(tb_mutex_lock_sync(m, 500, NULL), TB_ETIMEDOUT);
    CHECK(rt_proxy_cuts(k.px) == cuts + 1);
    CHECK(rt_nchildren(k.direct, PATH) == 1);
    printf("timeout during a lost create reply: no node left\n");

    /* Cancel while waiting and disconnected: the reaper deletes the node
     * once the connection is back. */
    rt_acq_init(&a);
    CHECK_RC(tb_mutex_lock(m, -1, rt_acq_cb, &a), 0);
    CHECK(rt_wait_nchildren(k.direct, PATH, 2, 5000) == 2);
    rt_sleep_ms(100);
    rt_proxy_cut_all(k.px, 1000);
    rt_sleep_ms(100);
    CHECK_RC(tb_mutex_cancel(m), 0);
    CHECK_RC(rt_acq_wait(&a, 10000), TB_ECANCELED);
    CHECK(rt_wait_nchildren(k.direct, PATH, 1, 10000) == 1);
    printf("cancel while disconnected: node removed after reconnect\n");
    CHECK_RC(tb_mutex_unlock_sync(h), 0);
    tb_mutex_free(h);
    tb_mutex_free(m);
}

/* Non-fair: the node is PATH itself; after a lost reply it is recognised
 * by the uuid at the start of its data. */
static void case_nonfair(int forward)
{
    struct tb_lock_options o = {.kind = TB_LOCK_NONFAIR};
    struct tb_mutex *m;
    struct tb_recipe_stats st;
    struct tb_stat ns;
    int cuts = rt_proxy_cuts(k.px);
    int64_t t;

    CHECK_RC(tb_mutex_new(&m, k.proxied, "/rt/connloss/nf", &o), 0);
    rt_proxy_cut_on(k.px, OP_CREATE2, forward, 300);
    CHECK_RC(tb_mutex_lock_sync(m, 15000, &t), 0);
    CHECK(rt_proxy_cuts(k.px) == cuts + 1);
    tb_mutex_stats(m, &st);
    CHECK(st.recoveries == (uint64_t)forward);
    CHECK_RC(tb_exists_sync(k.direct, "/rt/connloss/nf", NULL, NULL, &ns), 0);
    CHECK(ns.czxid == t);
    CHECK_RC(tb_mutex_unlock_sync(m), 0);
    CHECK_RC(tb_exists_sync(k.direct, "/rt/connloss/nf", NULL, NULL, NULL),
             TB_ENONODE);
    tb_mutex_free(m);
    printf("non-fair, create %s: %s\n", forward ? "applied" : "not sent",
           forward ? "our node recognised by its data" : "created again");
}

/* Non-fair: the release's delete applied, its reply lost; a waiter takes
 * PATH while the holder is away.  The release, done again once the
 * holder is back, must not delete the waiter's node. */
static void case_nonfair_release_lost(void)
{
    const char *path = "/rt/connloss/nf2";
    struct tb_lock_options o = {.kind = TB_LOCK_NONFAIR};
    struct tb_mutex *mp, *md;
    struct rt_acq a;
    struct rt_done d;
    struct tb_stat ns;
    int cuts = rt_proxy_cuts(k.px);
    int64_t t;

    CHECK_RC(tb_mutex_new(&mp, k.proxied, path, &o), 0);
    CHECK_RC(tb_mutex_new(&md, k.direct, path, &o), 0);
    CHECK_RC(tb_mutex_lock_sync(mp, 5000, &t), 0);
    rt_acq_init(&a);
    CHECK_RC(tb_mutex_lock(md, -1, rt_acq_cb, &a), 0);
    rt_proxy_cut_on(k.px, OP_DELETE, 1, 300);
    rt_done_init(&d);
    CHECK_RC(tb_mutex_unlock(mp, rt_done_cb, &d), 0);
    CHECK_RC(rt_acq_wait(&a, 5000), 0); /* while the holder is away */
    rt_cut_wait(&k, cuts + 1);
    CHECK_RC(rt_done_wait(&d, 10000), 0);
    CHECK_RC(tb_exists_sync(k.direct, path, NULL, NULL, &ns), 0);
    CHECK(ns.ephemeral_owner == tb_client_session(k.direct, NULL));
    CHECK(tb_mutex_state(md) == TB_LOCK_HELD);
    CHECK_RC(tb_mutex_unlock_sync(md), 0);
    tb_mutex_free(mp);
    tb_mutex_free(md);
    printf("non-fair, release applied, reply lost, PATH taken meanwhile: "
           "the release done again leaves the new holder's node\n");
}

struct states {
    pthread_mutex_t mu;
    int v[16];
    int n;
};

static void on_state(int state, int64_t token, void *data)
{
    struct states *s = data;

    (void)token;
    pthread_mutex_lock(&s->mu);
    if (s->n < 16)
        s->v[s->n++] = state;
    pthread_mutex_unlock(&s->mu);
}

/* A holder's connection breaks and comes back within the session. */
static void case_suspended(void)
{
    struct states s = {PTHREAD_MUTEX_INITIALIZER, {0}, 0};
    struct tb_lock_options o = {.state_cb = on_state, .data = &s};
    struct tb_mutex *m;
    struct rt_done d;
    int64_t t, end;

    CHECK_RC(tb_mutex_new(&m, k.proxied, PATH, &o), 0);
    CHECK_RC(tb_mutex_lock_sync(m, 5000, &t), 0);
    rt_proxy_cut_all(k.px, 1000);
    end = rt_now_ms() + 10000;
    while (rt_now_ms() < end) {
        pthread_mutex_lock(&s.mu);
        if (s.n >= 2) {
            pthread_mutex_unlock(&s.mu);
            break;
        }
        pthread_mutex_unlock(&s.mu);
        rt_sleep_ms(10);
    }
    CHECK(s.n == 2 && s.v[0] == TB_LOCK_SUSPENDED && s.v[1] == TB_LOCK_HELD);
    CHECK_RC(tb_mutex_state(m), TB_LOCK_HELD);
    CHECK(tb_mutex_token(m) == t);
    printf("holder disconnected briefly: SUSPENDED, then HELD\n");

    /* Release while disconnected: done once the connection is back. */
    rt_proxy_cut_all(k.px, 800);
    rt_sleep_ms(100);
    rt_done_init(&d);
    CHECK_RC(tb_mutex_unlock(m, rt_done_cb, &d), 0);
    CHECK_RC(rt_done_wait(&d, 10000), 0);
    CHECK(rt_nchildren(k.direct, PATH) == 0);
    tb_mutex_free(m);
    printf("release while disconnected: node deleted after reconnect\n");
}

/* The states a holder was told, once there are `n` (10 s at most). */
static int states_wait(struct states *s, int n)
{
    int64_t end = rt_now_ms() + 10000;
    int got;

    for (;;) {
        pthread_mutex_lock(&s->mu);
        got = s->n;
        pthread_mutex_unlock(&s->mu);
        if (got >= n || rt_now_ms() >= end)
            return got;
        rt_sleep_ms(10);
    }
}

/* A lock-delay grant and the states its holder had been told then. */
struct ld_grant {
    struct rt_acq a;
    struct states *s;
    int told_before;
};

static void ld_granted(int rc, int64_t token, void *data)
{
    struct ld_grant *g = data;

    pthread_mutex_lock(&g->s->mu);
    g->told_before = g->s->n;
    pthread_mutex_unlock(&g->s->mu);
    rt_acq_set(&g->a, rc, token, NULL);
}

/* A lock-delay grant whose connection broke during the delay: the delay's
 * end is told, its record written, on the new connection before the hold
 * has looked at its node again (the look's sync held by the proxy).  The
 * caller is told the grant, then SUSPENDED, then HELD once the look is
 * done, never a hold it takes for HELD while it is not yet known to be. */
static void case_delay_suspended(void)
{
    struct states s = {PTHREAD_MUTEX_INITIALIZER, {0}, 0};
    struct tb_lock_options d = {.lock_delay_ms = 1500};
    struct tb_lock_options o = {
        .lock_delay_ms = 1500, .state_cb = on_state, .data = &s};
    struct ld_grant g = {.s = &s};
    struct tb_recipe_stats st;
    struct tb_mutex *dead, *m;
    char node[512];
    int64_t t, end;

    CHECK_RC(tb_mutex_new(&dead, k.direct, PATH "-ld", &d), 0);
    CHECK_RC(tb_mutex_new(&m, k.proxied, PATH "-ld", &o), 0);
    CHECK_RC(tb_mutex_lock_sync(dead, 5000, &t), 0);
    rt_acq_init(&g.a);
    CHECK_RC(tb_mutex_lock(m, -1, ld_granted, &g), 0);
    CHECK(rt_wait_nchildren(k.direct, PATH "-ld", 2, 5000) == 2);
    CHECK_RC(tb_mutex_node(dead, node, sizeof node), 0);
    CHECK_RC(tb_delete_sync(k.direct, node, -1), 0); /* died, unreleased */
    /* Granted by the queue; then one read of the record, and the delay. */
    end = rt_now_ms() + 5000;
    do {
        rt_sleep_ms(10);
        tb_mutex_stats(m, &st);
    } while (st.acquisitions == 0 && rt_now_ms() < end);
    CHECK(st.acquisitions == 1);
    rt_sleep_ms(200);
    CHECK(!rt_acq_done(&g.a));
    rt_proxy_hold_on(k.px, OP_SYNC, 0);
    rt_proxy_cut_all(k.px, 1600); /* back after the delay's end */
    CHECK(rt_proxy_wait_held(k.px, 10000));
    CHECK_RC(rt_acq_wait(&g.a, 5000), 0);
    CHECK(g.told_before == 0);
    CHECK(states_wait(&s, 1) == 1 && s.v[0] == TB_LOCK_SUSPENDED);
    CHECK_RC(tb_mutex_state(m), TB_LOCK_SUSPENDED);
    rt_proxy_release(k.px);
    CHECK(states_wait(&s, 2) == 2 && s.v[1] == TB_LOCK_HELD);
    CHECK(tb_mutex_token(m) == g.a.token);
    CHECK_RC(tb_mutex_unlock_sync(m), 0);
    CHECK_RC(tb_mutex_unlock_sync(dead), TB_ELOCKLOST);
    tb_mutex_free(m);
    tb_mutex_free(dead);
    printf("lock-delay grant told on a connection not yet looked at: "
           "the grant, SUSPENDED, then HELD\n");
}

int t_connloss(int argc, char **argv)
{
    CHECK(argc >= 1);
    rt_cut_open(&k, argv[0]);
    rt_rmr(k.direct, "/rt/connloss");
    /* A persistent parent: the counts of creates below are then exact,
     * and no container removal races with the cases. */
    tb_create_sync(k.direct, "/rt", NULL, 0, NULL, TB_PERSISTENT, 0, NULL, 0,
                   NULL);
    CHECK_RC(tb_create_sync(k.direct, "/rt/connloss", NULL, 0, NULL,
                            TB_PERSISTENT, 0, NULL, 0, NULL),
             0);
    CHECK_RC(tb_create_sync(k.direct, PATH, NULL, 0, NULL, TB_PERSISTENT, 0,
                            NULL, 0, NULL),
             0);
    case_lost_reply(0);
    case_lost_reply(1);
    case_not_sent();
    case_queued();
    case_nonfair(1);
    case_nonfair(0);
    case_nonfair_release_lost();
    case_suspended();
    case_delay_suspended();
    rt_cut_close(&k);
    printf("connloss: ok\n");
    return 0;
}
