/* Which recipe objects live on which client, so that one session-state
 * change reaches all of them, and which thread runs a client's callbacks.
 *
 * Why a process-wide table: the client API has one state callback per
 * handle, set in its options and owned by the application, and no way to
 * hang a second listener or private data on a handle.  The application
 * forwards states to tb_recipes_state_cb, which finds the handle's recipe
 * objects here.  An entry lives while objects are attached and ends at
 * TB_SESSION_CLOSED, after which the handle's memory may be reused. */
#include <string.h>

#include "recipes/rcp.h"

struct rcp_client {
    struct tb_queue q; /* in `clients` */
    struct tb_client *c;
    struct tb_queue objs; /* struct rcp_reg */
};

static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static struct tb_queue clients = {&clients, &clients};

static struct rcp_client *find(struct tb_client *c)
{
    struct tb_queue *q;

    for (q = clients.next; q != &clients; q = q->next) {
        struct rcp_client *e = TB_CONTAINER_OF(q, struct rcp_client, q);
        if (e->c == c)
            return e;
    }
    return NULL;
}

int rcp_reg_attach(struct rcp_reg *r, struct tb_client *c)
{
    struct rcp_client *e;

    pthread_mutex_lock(&reg_mu);
    e = find(c);
    if (e == NULL) {
        e = calloc(1, sizeof *e);
        if (e == NULL) {
            pthread_mutex_unlock(&reg_mu);
            return TB_ENOMEM;
        }
        e->c = c;
        tb_queue_init(&e->objs);
        tb_queue_insert_tail(&clients, &e->q);
    }
    r->client = e;
    tb_queue_insert_tail(&e->objs, &r->q);
    pthread_mutex_unlock(&reg_mu);
    return 0;
}

static void drop_if_empty(struct rcp_client *e)
{
    if (!tb_queue_empty(&e->objs))
        return;
    tb_queue_remove(&e->q);
    free(e);
}

void rcp_reg_detach(struct rcp_reg *r)
{
    pthread_mutex_lock(&reg_mu);
    if (r->client != NULL) {
        struct rcp_client *e = r->client;
        tb_queue_remove(&r->q);
        r->client = NULL;
        drop_if_empty(e);
    }
    pthread_mutex_unlock(&reg_mu);
}

/* Takes a reference on every object of `c` under the table's lock, so
 * none is freed while its handler runs unlocked. */
static int collect(struct tb_client *c, struct rcp_reg ***out, int closing)
{
    struct rcp_client *e;
    struct tb_queue *q;
    struct rcp_reg **v = NULL;
    int n = 0, cap = 0;

    pthread_mutex_lock(&reg_mu);
    e = find(c);
    if (e == NULL)
        goto out;
    for (q = e->objs.next; q != &e->objs; q = q->next)
        cap++;
    v = cap > 0 ? malloc((size_t)cap * sizeof *v) : NULL;
    for (q = e->objs.next; v != NULL && q != &e->objs; q = q->next) {
        struct rcp_reg *r = TB_CONTAINER_OF(q, struct rcp_reg, q);
        r->ref(r);
        v[n++] = r;
    }
    if (closing) { /* the handle goes away: forget it */
        while (!tb_queue_empty(&e->objs)) {
            struct rcp_reg *r =
                TB_CONTAINER_OF(tb_queue_head(&e->objs), struct rcp_reg, q);
            tb_queue_remove(&r->q);
            r->client = NULL;
        }
        drop_if_empty(e);
    }
out:
    pthread_mutex_unlock(&reg_mu);
    *out = v;
    return n;
}

void tb_recipes_state_cb(struct tb_client *c, int state, void *data)
{
    struct rcp_reg **v;
    int i, n;

    (void)data;
    n = collect(c, &v, state == TB_SESSION_CLOSED);
    for (i = 0; i < n; i++) {
        v[i]->on_state(v[i], state);
        v[i]->unref(v[i]);
    }
    free(v);
}

const char *tb_lock_state_name(int state)
{
    switch (state) {
    case TB_LOCK_UNLOCKED:
        return "UNLOCKED";
    case TB_LOCK_ACQUIRING:
        return "ACQUIRING";
    case TB_LOCK_HELD:
        return "HELD";
    case TB_LOCK_SUSPENDED:
        return "SUSPENDED";
    case TB_LOCK_LOST:
        return "LOST";
    default:
        return "UNKNOWN";
    }
}
