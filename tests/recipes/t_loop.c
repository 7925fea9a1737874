/* The recipes on a client driven by the application's loop (no I/O
 * thread): the synchronous forms drive the handle themselves, a
 * synchronous timeout gives up cleanly, the asynchronous forms complete
 * from tb_client_process, and an asynchronous positive timeout (which
 * would need the timer thread) is refused.  Also: a synchronous call
 * from a callback of an I/O-thread client is refused instead of hanging. */
#include <poll.h>
#include <string.h>

#include "rt.h"
#include "rt_async.h"
#include "tests.h"

#define PATH "/rt/loop/lock"

struct flag {
    int done, rc;
    int64_t token;
};

static void on_acq(int rc, int64_t token, void *data)
{
    struct flag *f = data;

    f->done++;
    f->rc = rc;
    f->token = token;
}

static void on_done(int rc, void *data)
{
    on_acq(rc, 0, data);
}

/* Runs the loop until *done or ms pass. */
static void drive(struct tb_client *c, const int *done, int ms)
{
    int64_t end = rt_now_ms() + ms;

    while ((done == NULL || !*done) && rt_now_ms() < end) {
        struct tb_interest in;
        struct pollfd p;
        int ev = 0;
        CHECK_RC(tb_client_interest(c, &in), 0);
        p.fd = in.fd;
        p.events = (short)((in.events & TB_EV_READ ? POLLIN : 0) |
                           (in.events & TB_EV_WRITE ? POLLOUT : 0));
        p.revents = 0;
        if (poll(&p, in.fd >= 0,
                 in.timeout_ms < 0 || in.timeout_ms > 20 ? 20 : in.timeout_ms) >
            0)
            ev = (p.revents & (POLLIN | POLLHUP | POLLERR) ? TB_EV_READ : 0) |
                 (p.revents & (POLLOUT | POLLERR) ? TB_EV_WRITE : 0);
        tb_client_process(c, ev);
    }
}

struct nested {
    struct tb_mutex *other;
    struct rt_acq a;
    int sync_rc;
};

static void on_acq_nested(int rc, int64_t token, void *data)
{
    struct nested *n = data;

    /* On the I/O thread: a synchronous call here would wait for itself. */
    n->sync_rc = tb_mutex_lock_sync(n->other, 1000, NULL);
    rt_acq_set(&n->a, rc, token, NULL);
}

static int nothing(void *arg, int64_t token)
{
    (void)arg;
    (void)token;
    return 0;
}

/* An application's own callback (tb_exists'), on a handle no recipe has
 * had a callback on yet: a synchronous recipe call there is refused too,
 * where it waited for ever for the thread it blocked. */
static void on_exists_nested(struct tb_client *c, int rc,
                             const struct tb_stat *st, void *data)
{
    struct nested *n = data;

    (void)st;
    n->sync_rc = tb_lock_run(c, "/rt/loop/own", nothing, NULL);
    rt_acq_set(&n->a, rc, 0, NULL);
}

int t_loop(int argc, char **argv)
{
    struct tb_options o;
    struct tb_client *c, *h = rt_connect(rt_hosts, RT_SESSION_MS);
    struct tb_mutex *m, *hm, *m2;
    struct tb_election *e;
    struct flag f;
    struct nested n;
    int64_t t, th, start;

    (void)argc;
    (void)argv;
    rt_rmr(h, "/rt/loop");
    memset(&o, 0, sizeof o);
    o.hosts = rt_hosts;
    o.session_timeout_ms = RT_SESSION_MS;
    o.state_cb = tb_recipes_state_cb;
    CHECK_RC(tb_client_init(&c, &o), 0);
    CHECK_RC(tb_mutex_new(&m, c, PATH, NULL), 0);

    /* Synchronous, the handle driven by the wait itself. */
    CHECK_RC(tb_mutex_lock_sync(m, 10000, &t), 0);
    CHECK(t > 0 && tb_mutex_state(m) == TB_LOCK_HELD);
    CHECK_RC(tb_mutex_unlock_sync(m), 0);

    CHECK_RC(tb_mutex_new(&hm, h, PATH, NULL), 0);
    CHECK_RC(tb_mutex_lock_sync(hm, 5000, &th), 0);
    start = rt_now_ms();
    CHECK_RC(tb_mutex_lock_sync(m, 300, &t), TB_ETIMEDOUT);
    CHECK(rt_now_ms() - start >= 290);
    CHECK(rt_nchildren(h, PATH) == 1);

    /* Asynchronous: a positive timeout needs the I/O thread. */
    memset(&f, 0, sizeof f);
    CHECK_RC(tb_mutex_lock(m, 300, on_acq, &f), TB_EINVAL);
    CHECK_RC(tb_mutex_lock(m, -1, on_acq, &f), 0);
    drive(c, NULL, 300);
    CHECK(!f.done && rt_nchildren(h, PATH) == 2);
    CHECK_RC(tb_mutex_cancel(m), 0);
    drive(c, &f.done, 5000);
    CHECK(f.done == 1 && f.rc == TB_ECANCELED);
    CHECK(rt_nchildren(h, PATH) == 1);
    memset(&f, 0, sizeof f);
    CHECK_RC(tb_mutex_lock(m, -1, on_acq, &f), 0);
    drive(c, NULL, 200);
    CHECK_RC(tb_mutex_unlock_sync(hm), 0);
    drive(c, &f.done, 5000);
    CHECK(f.done == 1 && f.rc == 0 && f.token > th);
    memset(&f, 0, sizeof f);
    CHECK_RC(tb_mutex_unlock(m, on_done, &f), 0);
    drive(c, &f.done, 5000);
    CHECK(f.done == 1 && f.rc == 0);
    CHECK(rt_nchildren(h, PATH) == 0);
    printf("loop mode: sync and async forms, timeout and cancel: ok\n");

    /* An election awaited in loop mode. */
    CHECK_RC(tb_election_new(&e, c, "/rt/loop/el", NULL), 0);
    CHECK_RC(tb_election_join(e), 0);
    CHECK_RC(tb_election_await_sync(e, 5000, &t), 0);
    CHECK(t > 0);
    CHECK_RC(tb_election_leave_sync(e), 0);
    tb_election_free(e);
    tb_mutex_free(m);
    tb_client_close(c);

    /* A synchronous call from a callback of an I/O-thread client. */
    CHECK_RC(tb_mutex_new(&m2, h, "/rt/loop/other", NULL), 0);
    n.other = m2;
    n.sync_rc = 0;
    rt_acq_init(&n.a);
    CHECK_RC(tb_mutex_lock(hm, -1, on_acq_nested, &n), 0);
    CHECK_RC(rt_acq_wait(&n.a, 5000), 0);
    CHECK_RC(n.sync_rc, TB_EINVAL);
    CHECK_RC(tb_mutex_unlock_sync(hm), 0);
    printf("sync call on the callback thread: refused (TB_EINVAL)\n");
    c = rt_connect(rt_hosts, RT_SESSION_MS);
    n.sync_rc = 0;
    rt_acq_init(&n.a);
    CHECK_RC(tb_exists(c, "/", NULL, NULL, on_exists_nested, &n), 0);
    CHECK_RC(rt_acq_wait(&n.a, 5000), 0);
    CHECK_RC(n.sync_rc, TB_EINVAL);
    CHECK(rt_nchildren(h, "/rt/loop/own") <= 0);
    tb_client_close(c);
    printf("sync recipe call from the application's own callback: refused\n");
    tb_mutex_free(m2);
    tb_mutex_free(hm);
    tb_client_close(h);
    printf("loop: ok\n");
    return 0;
}
