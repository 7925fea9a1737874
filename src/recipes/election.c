/* Leader election.  Fair: Curator's LeaderLatch layout,
 *
 *   PATH/_c_<uuid>-latch-<seq>   one per candidate; the lowest leads
 *
 * each candidate watching only the one before it.  Non-fair: candidates
 * race to create PATH (ephemeral) and all watch it (the herd variant).
 * Either way it is the lock engine acquiring and never releasing, so the
 * leader has a fencing token and learns of suspension and loss exactly as
 * a lock holder does.
 *
 * After a loss the candidate joins again by itself: at once if its
 * session lives (its node was deleted by someone), else when the client
 * has a new session (the engine reports it).  Leaving cancels a pending
 * candidacy or resigns. */

#include <string.h>

#include "recipes/rcp.h"

struct tb_election {
    pthread_mutex_t mu;
    struct tb_client *c;
    struct tb_mutex *m;
    int joined;
    int acquiring;
    int leading;
    int wait_session; /* rejoin once a new session connects */
    int error;        /* what put the candidate out of the race, or 0 */
    int freed;        /* tb_election_free ran: no user callbacks */
    int64_t token;
    tb_lock_state_cb cb;
    void *data;
    tb_done_cb leave_cb;
    void *leave_data;
    struct rcp_wait *waiter; /* tb_election_await_sync */
};

static void rejoin(struct tb_election *e, struct rcp_out *o);

static void notify_waiter(struct tb_election *e, int rc)
{
    struct rcp_wait *w = e->waiter;

    e->waiter = NULL;
    if (w != NULL)
        rcp_wait_done(w, rc, e->token, NULL);
}

/* A candidacy ended without leading (expired, closing or refused): out
 * of the race until the client has a new session (never, if it is
 * closing).  Said to the state callback (LOST, token 0), unless the
 * leader's own LOST, in the same report, says it already; and why to
 * tb_election_error. */
static void out_of_race(struct tb_election *e, int rc, struct rcp_out *o)
{
    e->wait_session = 1;
    e->error = rc;
    notify_waiter(e, rc);
    if (o->nstates > 0)
        return;
    o->scb = e->cb;
    o->sdata = e->data;
    o->stoken = 0;
    o->states[o->nstates++] = TB_LOCK_LOST;
}

static void on_elected(int rc, int64_t token, void *data)
{
    struct tb_election *e = data;
    struct rcp_out o = {0};

    pthread_mutex_lock(&e->mu);
    e->acquiring = 0;
    if (rc == 0 && e->joined) {
        e->leading = 1;
        e->token = token;
        o.scb = e->cb;
        o.sdata = e->data;
        o.stoken = token;
        o.states[o.nstates++] = TB_LOCK_HELD;
        notify_waiter(e, 0);
    } else if (rc == 0) { /* left meanwhile: resign */
        rcp_lk_unlock(e->m, NULL, NULL);
    } else if (rc == TB_ECANCELED) { /* tb_election_leave */
        o.dcb = e->leave_cb;
        o.ddata = e->leave_data;
        e->leave_cb = NULL;
    } else if (e->joined) {
        out_of_race(e, rc, &o);
    }
    if (e->freed)
        o.scb = NULL;
    pthread_mutex_unlock(&e->mu);
    rcp_out_fire(&o);
}

static void start_locked(struct tb_election *e, struct rcp_out *o)
{
    int rv = rcp_lk_lock(e->m, -1, on_elected, e);

    if (rv == 0) {
        e->acquiring = 1;
        e->error = 0;
    } else {
        out_of_race(e, rv, o);
    }
}

/* The leader's hold changed. */
static void on_hold_state(int state, int64_t token, void *data)
{
    struct tb_election *e = data;
    struct rcp_out o = {0};

    pthread_mutex_lock(&e->mu);
    if (!e->leading || e->freed) {
        pthread_mutex_unlock(&e->mu);
        return;
    }
    o.scb = e->cb;
    o.sdata = e->data;
    o.stoken = token;
    o.states[o.nstates++] = state;
    if (state == TB_LOCK_LOST) {
        e->leading = 0;
        rcp_lk_unlock(e->m, NULL, NULL); /* ELOCKLOST: resets the hold */
        if (e->joined)
            rejoin(e, &o);
    }
    pthread_mutex_unlock(&e->mu);
    rcp_out_fire(&o);
}

static void rejoin(struct tb_election *e, struct rcp_out *o)
{
    int s = tb_client_state(e->c);

    if (s == TB_SESSION_EXPIRED || s == TB_SESSION_AUTH_FAILED ||
        s == TB_SESSION_CLOSED)
        e->wait_session = 1;
    else
        start_locked(e, o);
}

static void on_new_session(void *data)
{
    struct tb_election *e = data;
    struct rcp_out o = {0};

    pthread_mutex_lock(&e->mu);
    if (e->joined && e->wait_session && !e->acquiring && !e->leading &&
        !e->freed) {
        e->wait_session = 0;
        start_locked(e, &o);
    }
    pthread_mutex_unlock(&e->mu);
    rcp_out_fire(&o);
}

/* The engine is gone, and with it every callback that could use e. */
static void destroyed(void *data)
{
    struct tb_election *e = data;

    pthread_mutex_destroy(&e->mu);
    free(e);
}

int tb_election_new(struct tb_election **out, struct tb_client *c,
                    const char *path, const struct tb_lock_options *o)
{
    struct tb_lock_options eo = {0};
    struct tb_election *e;
    int rv;

    if (out == NULL)
        return TB_EINVAL;
    e = calloc(1, sizeof *e);
    if (e == NULL)
        return TB_ENOMEM;
    if (o != NULL) {
        eo = *o;
        e->cb = o->state_cb;
        e->data = o->data;
    }
    eo.state_cb = on_hold_state;
    eo.data = e;
    rv = rcp_lk_new(
        &e->m, c, path,
        eo.kind == TB_LOCK_NONFAIR ? &rcp_cfg_nonfair : &rcp_cfg_latch, &eo);
    if (rv != 0) {
        free(e);
        return rv;
    }
    pthread_mutex_init(&e->mu, NULL);
    e->c = c;
    e->m->embedded = 1;
    e->m->on_destroy = destroyed;
    e->m->destroy_data = e;
    e->m->session_cb = on_new_session;
    e->m->session_data = e;
    *out = e;
    return 0;
}

int tb_election_join(struct tb_election *e)
{
    struct rcp_out o = {0};
    int rv = 0;

    pthread_mutex_lock(&e->mu);
    if (e->joined || e->acquiring || e->leading) {
        rv = TB_EINVAL;
    } else {
        e->joined = 1;
        e->wait_session = 0;
        start_locked(e, &o);
        if (e->wait_session) { /* refused at once: said by the return */
            memset(&o, 0, sizeof o);
            e->joined = 0;
            e->wait_session = 0;
            rv = e->error;
        }
    }
    pthread_mutex_unlock(&e->mu);
    rcp_out_fire(&o);
    return rv;
}

int tb_election_leave(struct tb_election *e, tb_done_cb cb, void *data)
{
    int rv, leading, acquiring;

    pthread_mutex_lock(&e->mu);
    if (!e->joined) {
        pthread_mutex_unlock(&e->mu);
        return TB_EINVAL;
    }
    e->joined = 0;
    notify_waiter(e, TB_ECANCELED);
    leading = e->leading;
    acquiring = e->acquiring;
    e->leading = 0;
    if (acquiring) {
        e->leave_cb = cb;
        e->leave_data = data;
    }
    pthread_mutex_unlock(&e->mu);
    /* Unlocked: an abort may complete at once and call on_elected. */
    if (leading)
        return rcp_lk_unlock(e->m, cb, data);
    if (!acquiring)
        return TB_ESESSIONEXPIRED; /* waiting for a session: nothing held */
    rv = rcp_lk_abort(e->m, TB_ECANCELED);
    if (rv != 0) { /* just elected: on_elected resigns */
        pthread_mutex_lock(&e->mu);
        e->leave_cb = NULL;
        pthread_mutex_unlock(&e->mu);
        rv = TB_ECANCELED;
    }
    return rv;
}

int tb_election_leave_sync(struct tb_election *e)
{
    struct rcp_wait w;
    int rv;

    if ((rv = rcp_sync_check(e->c)) != 0)
        return rv;
    rcp_wait_init(&w);
    rv = tb_election_leave(e, rcp_wait_done_cb, &w);
    if (rv == 0) {
        rcp_wait(e->c, &w, -1, NULL, NULL);
        rv = w.rc;
    } else if (rv == TB_ECANCELED || rv == TB_ESESSIONEXPIRED) {
        rv = 0; /* out of the election, nothing to wait for */
    }
    rcp_wait_destroy(&w);
    return rv;
}

static void await_give_up(void *arg)
{
    struct tb_election *e = arg;

    pthread_mutex_lock(&e->mu);
    if (e->waiter != NULL) {
        struct rcp_wait *w = e->waiter;
        e->waiter = NULL;
        rcp_wait_done(w, TB_ETIMEDOUT, 0, NULL);
    }
    pthread_mutex_unlock(&e->mu);
}

int tb_election_await_sync(struct tb_election *e, int timeout_ms,
                           int64_t *token)
{
    struct rcp_wait w;
    int rv;

    if (token != NULL)
        *token = 0;
    if ((rv = rcp_sync_check(e->c)) != 0)
        return rv;
    rcp_wait_init(&w);
    pthread_mutex_lock(&e->mu);
    if (e->leading) {
        rcp_wait_done(&w, 0, e->token, NULL);
    } else if (!e->joined || e->waiter != NULL) {
        rcp_wait_done(&w, TB_EINVAL, 0, NULL);
    } else {
        e->waiter = &w;
    }
    pthread_mutex_unlock(&e->mu);
    rcp_wait(e->c, &w, timeout_ms >= 0 ? rcp_now_ms() + timeout_ms : -1,
             await_give_up, e);
    rv = w.rc;
    if (token != NULL && rv == 0)
        *token = w.token;
    rcp_wait_destroy(&w);
    return rv;
}

int tb_election_error(struct tb_election *e)
{
    int rc;

    pthread_mutex_lock(&e->mu);
    rc = e->error;
    pthread_mutex_unlock(&e->mu);
    return rc;
}

int tb_election_state(struct tb_election *e)
{
    int s;

    pthread_mutex_lock(&e->mu);
    if (e->leading)
        s = -1;
    else if (e->acquiring)
        s = TB_LOCK_ACQUIRING;
    else if (e->joined) /* out of the race until a new session */
        s = TB_LOCK_LOST;
    else
        s = TB_LOCK_UNLOCKED;
    pthread_mutex_unlock(&e->mu);
    return s < 0 ? rcp_lk_state(e->m) : s;
}

/* The fenced write of a leader: its engine's, whose node is the
 * candidate's; a non-fair election's node cannot be fenced (TB_EINVAL). */
int tb_election_fence(struct tb_election *e, struct tb_multi *ops)
{
    return e == NULL ? TB_EINVAL : tb_mutex_fence(e->m, ops);
}

int tb_election_fenced_exec(struct tb_election *e, struct tb_multi *ops,
                            tb_multi_cb cb, void *data)
{
    return e == NULL ? TB_EINVAL : tb_fenced_exec(e->m, ops, cb, data);
}

int tb_election_fenced_exec_sync(struct tb_election *e, struct tb_multi *ops,
                                 struct tb_multi_results *out)
{
    return e == NULL ? TB_EINVAL : tb_fenced_exec_sync(e->m, ops, out);
}

int64_t tb_election_token(struct tb_election *e)
{
    int64_t t;

    pthread_mutex_lock(&e->mu);
    t = e->leading ? e->token : 0;
    pthread_mutex_unlock(&e->mu);
    return t;
}

int tb_election_is_leader(struct tb_election *e)
{
    return tb_election_state(e) == TB_LOCK_HELD;
}

void tb_election_stats(struct tb_election *e, struct tb_recipe_stats *out)
{
    tb_mutex_stats(e->m, out);
}

void tb_election_free(struct tb_election *e)
{
    if (e == NULL)
        return;
    pthread_mutex_lock(&e->mu);
    e->freed = 1;
    e->joined = 0;
    e->leading = 0;
    notify_waiter(e, TB_ECANCELED);
    pthread_mutex_unlock(&e->mu);
    rcp_lk_free(e->m); /* cancels or resigns; e goes with the engine */
}
