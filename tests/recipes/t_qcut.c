/* Queues through a proxy the test cuts (rt_proxy.c): a locking take whose
 * claim was applied but whose reply was lost (and then the reply to its
 * look at the claim's owner) still takes the item, by the claim's owner
 * and data, with one claim; a consume cut off before the server
 * gives its claim back (the item is taken again: ECONNECTIONLOSS), one
 * cut off after it leaves nothing and reports 0 (its claim found gone
 * once the connection is back); a simple take whose delete was
 * applied but whose reply was lost reports the loss and the item is
 * gone, never handed out twice; one whose delete never arrived reports
 * the loss and the item is taken next. */
#include <string.h>

#include "rt.h"
#include "rt_async.h"
#include "tests.h"

#define OP_DELETE  2
#define OP_GETDATA 4
#define OP_MULTI   14
#define OP_CREATE2 15

static struct rt_cut k;

/* Takes from `q` (waiting up to ms); the item's text in buf. */
static int take(struct tb_dqueue *q, int ms, char *buf, size_t cap)
{
    void *v;
    size_t n;
    int rc = tb_dqueue_take_sync(q, ms, &v, &n);

    if (rc == 0) {
        CHECK(n < cap);
        memcpy(buf, v, n + 1);
        free(v);
    }
    return rc;
}

struct got {
    struct rt_done d;
    char buf[32];
};

static void on_item(int rc, const void *v, size_t len, void *data)
{
    struct got *g = data;

    if (rc == 0 && len < sizeof g->buf) {
        memcpy(g->buf, v, len);
        g->buf[len] = '\0';
    }
    rt_done_cb(rc, &g->d);
}

/* The claim's create applied, its reply lost; with owner_cut, the look at
 * the claim's owner and data (a getData) that follows loses its reply too
 * and is made again. */
static void claim_reply_lost(int owner_cut)
{
    const char *path = "/rt/qcut/locking";
    struct tb_dqueue *qp, *qd;
    struct got g;
    char buf[32];
    int cuts = rt_proxy_cuts(k.px);

    CHECK_RC(tb_dqueue_new(&qp, k.proxied, path, TB_QUEUE_LOCKING), 0);
    CHECK_RC(tb_dqueue_new(&qd, k.direct, path, TB_QUEUE_LOCKING), 0);
    CHECK_RC(tb_dqueue_put_sync(qp, "c1", 2, -1), 0); /* and its nodes */
    rt_proxy_cut_on(k.px, OP_CREATE2, 1, 300);
    rt_done_init(&g.d);
    CHECK_RC(tb_dqueue_take(qp, 15000, on_item, &g), 0);
    rt_cut_wait(&k, ++cuts);
    if (owner_cut) { /* armed while the proxy refuses the reconnection */
        rt_proxy_cut_on(k.px, OP_GETDATA, 1, 300);
        rt_cut_wait(&k, ++cuts);
    }
    CHECK_RC(rt_done_wait(&g.d, 15000), 0);
    CHECK(strcmp(g.buf, "c1") == 0);
    CHECK(rt_nchildren(k.direct, "/rt/qcut/locking/taken") == 1);
    CHECK_RC(take(qd, 0, buf, sizeof buf), TB_ETIMEDOUT); /* claimed */
    CHECK_RC(tb_dqueue_consume_sync(qp), 0);
    CHECK(rt_nchildren(k.direct, "/rt/qcut/locking/entries") == 0);
    CHECK(rt_nchildren(k.direct, "/rt/qcut/locking/taken") == 0);
    tb_dqueue_free(qp);
    tb_dqueue_free(qd);
    printf("locking: claim applied, reply lost%s: the item taken by its "
           "owner, one claim, consumed\n",
           owner_cut ? ", and the look at its owner's too" : "");
}

static void consume_cut(int forward)
{
    const char *path = "/rt/qcut/consume";
    struct tb_dqueue *qp, *qd;
    char buf[32];
    int cuts = rt_proxy_cuts(k.px);

    CHECK_RC(tb_dqueue_new(&qp, k.proxied, path, TB_QUEUE_LOCKING), 0);
    CHECK_RC(tb_dqueue_new(&qd, k.direct, path, TB_QUEUE_LOCKING), 0);
    CHECK_RC(tb_dqueue_put_sync(qd, "c2", 2, -1), 0);
    CHECK_RC(take(qp, 5000, buf, sizeof buf), 0);
    rt_proxy_cut_on(k.px, OP_MULTI, forward, 300);
    /* what the claim says once the connection is back: applied or not */
    CHECK_RC(tb_dqueue_consume_sync(qp), forward ? 0 : TB_ECONNECTIONLOSS);
    rt_cut_wait(&k, cuts + 1);
    CHECK_RC(tb_client_wait_connected(k.proxied, 10000), 0); /* same session */
    if (forward) { /* consumed: nothing left to take */
        CHECK_RC(take(qd, 300, buf, sizeof buf), TB_ETIMEDOUT);
    } else { /* the claim given back: taken again, and consumed */
        CHECK_RC(take(qd, 5000, buf, sizeof buf), 0);
        CHECK(strcmp(buf, "c2") == 0);
        CHECK_RC(tb_dqueue_consume_sync(qd), 0);
    }
    CHECK(rt_nchildren(k.direct, "/rt/qcut/consume/entries") == 0);
    CHECK(rt_wait_nchildren(k.direct, "/rt/qcut/consume/taken", 0, 5000) == 0);
    tb_dqueue_free(qp);
    tb_dqueue_free(qd);
    printf("locking: consume %s, reply lost: %s, %s\n",
           forward ? "applied" : "not sent", forward ? "0" : "ECONNECTIONLOSS",
           forward ? "the item gone" : "the claim given back, taken again");
}

static void delete_cut(int forward)
{
    const char *path = "/rt/qcut/simple";
    struct tb_dqueue *qp, *qd;
    char buf[32];
    void *v;
    size_t n;
    int cuts = rt_proxy_cuts(k.px);

    CHECK_RC(tb_dqueue_new(&qp, k.proxied, path, TB_QUEUE_SIMPLE), 0);
    CHECK_RC(tb_dqueue_new(&qd, k.direct, path, TB_QUEUE_SIMPLE), 0);
    CHECK_RC(tb_dqueue_peek_sync(qp, &v, &n), TB_ENONODE);
    CHECK_RC(tb_dqueue_put_sync(qd, "s1", 2, -1), 0);
    rt_proxy_cut_on(k.px, OP_DELETE, forward, 300);
    CHECK_RC(take(qp, 15000, buf, sizeof buf), TB_ECONNECTIONLOSS);
    rt_cut_wait(&k, cuts + 1);
    CHECK_RC(tb_client_wait_connected(k.proxied, 10000), 0); /* same session */
    if (forward) { /* gone, and nobody gets it again */
        CHECK_RC(take(qd, 0, buf, sizeof buf), TB_ETIMEDOUT);
        CHECK_RC(take(qp, 0, buf, sizeof buf), TB_ETIMEDOUT);
    } else { /* still there: the next take has it */
        CHECK_RC(take(qd, 5000, buf, sizeof buf), 0);
        CHECK(strcmp(buf, "s1") == 0);
    }
    CHECK(rt_nchildren(k.direct, path) == 0);
    tb_dqueue_free(qp);
    tb_dqueue_free(qd);
    printf("simple: delete %s, reply lost: ECONNECTIONLOSS, the item %s\n",
           forward ? "applied" : "not sent",
           forward ? "gone and taken by nobody" : "taken next");
}

int t_queue_connloss(int argc, char **argv)
{
    CHECK(argc >= 1);
    rt_cut_open(&k, argv[0]);
    rt_rmr(k.direct, "/rt/qcut");
    claim_reply_lost(0);
    claim_reply_lost(1);
    consume_cut(0);
    consume_cut(1);
    delete_cut(1);
    delete_cut(0);
    rt_rmr(k.direct, "/rt/qcut");
    rt_cut_close(&k);
    printf("queue_connloss: ok\n");
    return 0;
}
