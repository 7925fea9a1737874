/* Lock-delay (Chubby's, Consul's): a fair mutex whose previous holder
 * died holding it is granted only after a delay, so that writes the dead
 * holder had in flight land before the next holder's, for resources that
 * cannot check tokens.  A clean release hands over at once.
 *
 * How a new holder tells the two apart: holders with lock-delay keep a
 * record in PATH's data.  On a grant they write "held:<node>"; on a
 * release "released:<node>", sent before the delete of the node on the
 * same connection, so it is applied first.  A holder that finds
 * "held:<another node>" knows that holder's node went without a release
 * (its session expired, or it was deleted) and waits lock_delay_ms before
 * it reports the grant.  Other clients (Curator, kazoo, libtumbler without
 * lock-delay) neither write nor read the record: they ignore the delay,
 * and after one of them held, a stale "held:" can delay the next holder
 * with lock-delay for nothing (never less than it should).
 *
 * The delay runs between the engine's grant and the caller's callback:
 * the node is held all along, and a give-up (timeout, cancel, free)
 * releases it without a record, so the next holder delays in turn.  Until
 * the callback the grant is not the caller's: tb_mutex_state says
 * ACQUIRING, no token and no state callback is given (lk_state.c), and a
 * loss ends the delay at once with TB_ELOCKLOST. */
#include <stdio.h>
#include <string.h>

#include "recipes/rcp.h"

#define HELD     "held:"
#define RELEASED "released:"

enum { LD_LOCKING, LD_READING, LD_DELAYING, LD_MARKING };

struct rcp_ld {
    struct tb_mutex *m;
    int phase;
    int abort_rc;     /* a give-up seen between two steps */
    int64_t deadline; /* the caller's, < 0: none */
    int64_t token;
    tb_acquire_cb cb;
    void *data;
    struct rcp_timer timer;
};

static const char *node_name(const struct tb_mutex *m)
{
    return m->node != NULL ? strrchr(m->node, '/') + 1 : "";
}

/* The release's record, sent just before the delete (lock held), and
 * written only while the holder's node is there: a holder whose node went
 * already (deleted, its session gone) did not release cleanly, and the
 * next holder must wait. */
void rcp_ld_record_release(struct tb_mutex *m)
{
    struct tb_multi *ops;
    char v[256];
    int n;

    if (m->lock_delay_ms <= 0 || m->ld != NULL || m->node == NULL)
        return; /* never granted to the caller: no release to record */
    n = snprintf(v, sizeof v, RELEASED "%s", node_name(m));
    if ((ops = tb_multi_new()) == NULL)
        return; /* a record not written only costs the next holder a delay */
    if (tb_multi_check(ops, m->node, -1) == 0 &&
        tb_multi_set_data(ops, m->path, v, (size_t)n, -1) == 0)
        (void)tb_multi_exec(m->c, ops, NULL, NULL);
    tb_multi_free(ops);
}

/* 1 if the grant `ld` reports is still the handle's hold (lock held). */
static int still_held(const struct rcp_ld *ld)
{
    return rcp_lk_holding(ld->m) && ld->m->token == ld->token;
}

/* A grant is the caller's once m->ld is cleared, and is told here.  The
 * handle freed in between (from another thread) gave the hold up: told
 * TB_ECANCELED, as lk_ctx.c's grants are.  Granted while the hold waits
 * to look at its node again (the connection came back during the delay,
 * when no state was told), and not given back by the callback, the
 * caller is told so after it: HELD or LOST follows, as for a hold
 * suspended after its grant. */
static void ld_end(struct rcp_ld *ld, int rc)
{
    struct tb_mutex *m = ld->m;
    struct rcp_out o = {0};

    if (rc == 0) {
        pthread_mutex_lock(m->mu);
        rc = still_held(ld) ? 0 : TB_ECANCELED;
        pthread_mutex_unlock(m->mu);
    }
    ld->cb(rc, rc == 0 ? ld->token : 0, ld->data);
    if (rc == 0) {
        pthread_mutex_lock(m->mu);
        if (still_held(ld) && m->lstate == TB_LOCK_SUSPENDED)
            rcp_lk_tell_state(m, &o);
        pthread_mutex_unlock(m->mu);
        rcp_out_fire(&o);
    }
    rcp_lk_unref(m);
    free(ld);
}

/* m->ld is cleared only now: until then the release writes no record. */
static void on_given_up(int rc, void *data)
{
    struct rcp_ld *ld = data;
    struct tb_mutex *m = ld->m;

    (void)rc;
    pthread_mutex_lock(m->mu);
    if (m->ld == ld)
        m->ld = NULL;
    pthread_mutex_unlock(m->mu);
    ld_end(ld, ld->abort_rc);
}

static void on_carried(struct tb_client *c, int rc, const struct tb_stat *st,
                       void *data)
{
    (void)c;
    (void)st;
    on_given_up(rc, data);
}

/* Gives the hold back without a record (lock held, released here). */
static void give_back(struct rcp_ld *ld, int rc)
{
    struct tb_mutex *m = ld->m;
    int closed = m->c_closed;

    ld->abort_rc = rc;
    pthread_mutex_unlock(m->mu);
    if (rcp_lk_unlock(m, on_given_up, ld) == 0)
        return;
    /* Nothing held any more (freed, lost): the callback rides one small
     * request to the I/O thread, as every recipe callback does, never
     * inside the call that gave up nor on the timer's thread. */
    if (closed || tb_exists(m->c, m->path, NULL, NULL, on_carried, ld) != 0)
        on_given_up(0, ld); /* the client is closing */
}

static void mark(struct rcp_ld *ld);

static void on_marked(struct tb_client *c, int rc, const struct tb_stat *st,
                      void *data)
{
    struct rcp_ld *ld = data;
    struct tb_mutex *m = ld->m;

    (void)st;
    (void)c;
    pthread_mutex_lock(m->mu);
    if (ld->abort_rc != 0) {
        give_back(ld, ld->abort_rc);
        return;
    }
    if (!rcp_lk_holding(m)) {
        give_back(ld, TB_ELOCKLOST); /* lost during the delay */
        return;
    }
    if (rc == TB_ECONNECTIONLOSS) { /* written or not: again */
        mark(ld);
        return;
    }
    if (rc != 0) { /* unrecorded, our death would not make the next wait */
        give_back(ld, rc);
        return;
    }
    m->ld = NULL;
    pthread_mutex_unlock(m->mu);
    ld_end(ld, 0);
}

/* Writes our record, then reports the grant (lock held, if still held:
 * else there is no record of ours to write, and the next holder's must
 * stay). */
static void mark(struct rcp_ld *ld)
{
    struct tb_mutex *m = ld->m;
    char v[256];
    int n;

    if (!rcp_lk_holding(m)) {
        give_back(ld, TB_ELOCKLOST); /* lost during the delay */
        return;
    }
    n = snprintf(v, sizeof v, HELD "%s", node_name(m));
    ld->phase = LD_MARKING;
    if (tb_set_data(m->c, m->path, v, (size_t)n, -1, on_marked, ld) != 0) {
        give_back(ld, TB_ECLOSING);
        return;
    }
    pthread_mutex_unlock(m->mu);
}

static void on_timer(struct rcp_timer *t, unsigned tag)
{
    struct rcp_ld *ld = TB_CONTAINER_OF(t, struct rcp_ld, timer);

    pthread_mutex_lock(ld->m->mu);
    if (tag == 0)
        give_back(ld, TB_ETIMEDOUT); /* the caller's deadline came first */
    else
        mark(ld); /* the delay is over */
}

static void on_record(struct tb_client *c, int rc, const void *value,
                      size_t len, const struct tb_stat *st, void *data)
{
    struct rcp_ld *ld = data;
    struct tb_mutex *m = ld->m;
    size_t hl = strlen(HELD);
    int64_t at;
    int died;

    (void)st;
    (void)c;
    pthread_mutex_lock(m->mu);
    if (ld->abort_rc != 0) {
        give_back(ld, ld->abort_rc);
        return;
    }
    if (rc == TB_ECONNECTIONLOSS) { /* read again */
        if ((rc = tb_get_data(m->c, m->path, NULL, NULL, on_record, ld)) != 0)
            give_back(ld, rc);
        else
            pthread_mutex_unlock(m->mu);
        return;
    }
    /* A record that cannot be read is taken for a dead holder's. */
    died = rc != 0 ||
           (value != NULL && len > hl && memcmp(value, HELD, hl) == 0 &&
            (len - hl != strlen(node_name(m)) ||
             memcmp((const char *)value + hl, node_name(m), len - hl) != 0));
    if (!died) {
        mark(ld);
        return;
    }
    at = rcp_now_ms() + m->lock_delay_ms;
    ld->phase = LD_DELAYING;
    if (ld->deadline >= 0 && ld->deadline < at)
        rc = rcp_timer_arm(&ld->timer, ld->deadline, 0);
    else
        rc = rcp_timer_arm(&ld->timer, at, 1);
    if (rc != 0)
        give_back(ld, rc);
    else
        pthread_mutex_unlock(m->mu);
}

static void on_locked(int rc, int64_t token, void *data)
{
    struct rcp_ld *ld = data;
    struct tb_mutex *m = ld->m;

    pthread_mutex_lock(m->mu);
    if (rc != 0) {
        m->ld = NULL;
        pthread_mutex_unlock(m->mu);
        ld_end(ld, rc);
        return;
    }
    ld->token = token;
    ld->phase = LD_READING;
    if (ld->abort_rc != 0)
        give_back(ld, ld->abort_rc);
    else if ((rc = tb_get_data(m->c, m->path, NULL, NULL, on_record, ld)) != 0)
        give_back(ld, rc);
    else
        pthread_mutex_unlock(m->mu);
}

int rcp_ld_lock(struct tb_mutex *m, int timeout_ms, int64_t deadline,
                tb_acquire_cb cb, void *data)
{
    struct rcp_ld *ld;
    int rv;

    /* The delay's timer calls the client from its own thread. */
    if ((rv = rcp_async_timeout_check(m->c, 1)) != 0)
        return rv;
    if ((ld = calloc(1, sizeof *ld)) == NULL)
        return TB_ENOMEM;
    ld->m = m;
    ld->cb = cb;
    ld->data = data;
    ld->deadline = deadline;
    ld->timer.fn = on_timer;
    pthread_mutex_lock(m->mu);
    if (m->ld != NULL) {
        pthread_mutex_unlock(m->mu);
        free(ld);
        return TB_EINVAL;
    }
    if (m->holds > 0 && m->acb == NULL && !m->c_closed) {
        /* Held already: one more hold, no delay, and nothing of the
         * hold hidden meanwhile (as m->ld would hide it). */
        rv = rcp_lk_reenter_locked(m, cb, data);
        pthread_mutex_unlock(m->mu);
        free(ld);
        return rv;
    }
    m->ld = ld;
    rcp_lk_ref(m);
    pthread_mutex_unlock(m->mu);
    rv = rcp_lk_lock(m, timeout_ms, on_locked, ld);
    if (rv != 0) {
        pthread_mutex_lock(m->mu);
        m->ld = NULL;
        pthread_mutex_unlock(m->mu);
        rcp_lk_unref(m);
        free(ld);
    }
    return rv;
}

int rcp_ld_abort(struct tb_mutex *m, int rc)
{
    struct rcp_ld *ld;
    int phase;

    pthread_mutex_lock(m->mu);
    if ((ld = m->ld) == NULL) {
        pthread_mutex_unlock(m->mu);
        return TB_EINVAL;
    }
    if (ld->phase == LD_DELAYING && rcp_timer_disarm(&ld->timer)) {
        give_back(ld, rc);
        return 0;
    }
    /* The step in flight gives up.  While locking, the engine is asked
     * too; if it has granted already, on_locked gives the hold back. */
    if (ld->abort_rc == 0)
        ld->abort_rc = rc;
    phase = ld->phase;
    pthread_mutex_unlock(m->mu);
    if (phase == LD_LOCKING)
        (void)rcp_lk_abort(m, rc);
    return 0;
}
