/* Queues through a proxy the test cuts (rt_proxy.c): a locking take whose
 * claim was applied but whose reply was lost still takes the item, by
 * the claim's owner, with one claim; a simple take whose delete was
 * applied but whose reply was lost reports the loss and the item is
 * gone, never handed out twice; one whose delete never arrived reports
 * the loss and the item is taken next. */
#include <string.h>

#include "rt.h"
#include "tests.h"

#define OP_DELETE  2
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

static void claim_reply_lost(void)
{
    const char *path = "/rt/qcut/locking";
    struct tb_dqueue *qp, *qd;
    char buf[32];
    void *v;
    size_t n;
    int cuts = rt_proxy_cuts(k.px);

    CHECK_RC(tb_dqueue_new(&qp, k.proxied, path, TB_QUEUE_LOCKING), 0);
    CHECK_RC(tb_dqueue_new(&qd, k.direct, path, TB_QUEUE_LOCKING), 0);
    CHECK_RC(tb_dqueue_peek_sync(qp, &v, &n), TB_ENONODE); /* its nodes */
    CHECK_RC(tb_dqueue_put_sync(qd, "c1", 2, -1), 0);
    rt_proxy_cut_on(k.px, OP_CREATE2, 1, 300);
    CHECK_RC(take(qp, 15000, buf, sizeof buf), 0);
    rt_cut_wait(&k, cuts + 1);
    CHECK(strcmp(buf, "c1") == 0);
    CHECK(rt_nchildren(k.direct, "/rt/qcut/locking/taken") == 1);
    CHECK_RC(take(qd, 0, buf, sizeof buf), TB_ETIMEDOUT); /* claimed */
    CHECK_RC(tb_dqueue_consume_sync(qp), 0);
    CHECK(rt_nchildren(k.direct, "/rt/qcut/locking/entries") == 0);
    CHECK(rt_nchildren(k.direct, "/rt/qcut/locking/taken") == 0);
    tb_dqueue_free(qp);
    tb_dqueue_free(qd);
    printf("locking: claim applied, reply lost: the item taken by its "
           "owner, one claim, consumed\n");
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
    claim_reply_lost();
    delete_cut(1);
    delete_cut(0);
    rt_rmr(k.direct, "/rt/qcut");
    rt_cut_close(&k);
    printf("queue_connloss: ok\n");
    return 0;
}
