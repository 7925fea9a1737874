/* The engine's object and its callbacks' contexts.
 *
 * A struct tb_mutex lives while anyone holds a reference: the user, each
 * callback context of an operation in flight, the armed timer; the last
 * one frees it, then lets a composite free what its callbacks use.  A
 * context carries the attempt it belongs to, so that rcp_ctx_enter()
 * tells a stale reply from a current one.  User callbacks decided under
 * the engine's mutex are collected in a struct rcp_out and fired after
 * it is released (rcp_out_fire).  Nothing here calls the rest of the
 * engine. */
#include "recipes/rcp.h"

void rcp_lk_ref(struct tb_mutex *m)
{
    __atomic_add_fetch(&m->refs, 1, __ATOMIC_ACQ_REL);
}

static void destroy(struct tb_mutex *m)
{
    struct tb_mutex *peer_ref = m->is_read ? m->peer : NULL;
    void (*hook)(void *) = m->on_destroy;
    void *hook_data = m->destroy_data;

    free(m->path);
    free(m->parent);
    free(m->uvalue);
    if (m->value != m->uvalue)
        free(m->value);
    free(m->prefix);
    free(m->node);
    free(m->pred_path);
    free(m->conflict);
    pthread_mutex_destroy(&m->own_mu);
    free(m);
    if (peer_ref != NULL) /* the read side kept the shared mutex alive */
        rcp_lk_unref(peer_ref);
    if (hook != NULL)
        hook(hook_data);
}

void rcp_lk_unref(struct tb_mutex *m)
{
    if (__atomic_sub_fetch(&m->refs, 1, __ATOMIC_ACQ_REL) == 0)
        destroy(m);
}

/* Under the lock, never the last reference (the caller holds one). */
void rcp_lk_unref_locked(struct tb_mutex *m)
{
    __atomic_sub_fetch(&m->refs, 1, __ATOMIC_ACQ_REL);
}

struct rcp_ctx *rcp_ctx_new(struct tb_mutex *m)
{
    struct rcp_ctx *x = malloc(sizeof *x);

    if (x == NULL)
        return NULL;
    x->m = m;
    x->attempt = m->attempt;
    x->gen = m->gen;
    x->w = NULL;
    rcp_lk_ref(m);
    return x;
}

void rcp_ctx_free_locked(struct rcp_ctx *x)
{
    rcp_lk_unref_locked(x->m);
    free(x);
}

int rcp_ctx_enter(struct rcp_ctx *x)
{
    struct tb_mutex *m = x->m;

    pthread_mutex_lock(m->mu);
    return x->attempt == m->attempt;
}

void rcp_ctx_leave(struct rcp_ctx *x, struct rcp_out *o)
{
    struct tb_mutex *m = x->m;

    pthread_mutex_unlock(m->mu);
    free(x);
    rcp_out_fire(o);
    rcp_lk_unref(m);
}

/* A grant is told once the engine's mutex is released, and the handle
 * may be freed in between (from another thread): the hold then went with
 * it, and the callback is told TB_ECANCELED, as when the free comes
 * first, never 0 with the token of a lock it no longer holds. */
static void confirm_grant(struct rcp_out *o)
{
    struct tb_mutex *m = o->granted;

    pthread_mutex_lock(m->mu);
    if (m->holds == 0 || m->token != o->atoken) {
        o->arc = TB_ECANCELED;
        o->atoken = 0;
    }
    pthread_mutex_unlock(m->mu);
}

void rcp_out_fire(struct rcp_out *o)
{
    int i;

    for (i = 0; i < o->nstates; i++)
        if (o->scb != NULL)
            o->scb(o->states[i], o->stoken, o->sdata);
    if (o->granted != NULL)
        confirm_grant(o);
    if (o->acb != NULL)
        o->acb(o->arc, o->atoken, o->adata);
    if (o->granted != NULL)
        rcp_lk_unref(o->granted);
    if (o->dcb != NULL)
        o->dcb(o->drc, o->ddata);
    if (o->session_cb != NULL)
        o->session_cb(o->session_data);
    if (o->ld_lost != NULL) {
        (void)rcp_ld_abort(o->ld_lost, TB_ELOCKLOST);
        rcp_lk_unref(o->ld_lost);
    }
}
