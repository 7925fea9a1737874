/* Several requests answered as one: `done` fires once, after the last
 * answer, with the first error.
 *
 * Why a mutex held while sending: with the I/O thread, an answer can run
 * before the next request is even sent, so a count kept by the sender
 * alone would reach zero early (and finish, or free, the whole while the
 * sender still uses it).  The sender holds `mu` from rcp_fan_begin to
 * rcp_fan_end; an answer waits for it, and then finds `pending` complete.
 * This cannot deadlock: the client never calls back from inside a call,
 * and it runs callbacks without its own lock held. */
#include "recipes/rcp.h"

struct rcp_fan {
    pthread_mutex_t mu;
    int pending; /* sent, not yet answered */
    int rc;      /* the first error */
    tb_done_cb done;
    void *data;
};

static void fan_free(struct rcp_fan *f)
{
    pthread_mutex_destroy(&f->mu);
    free(f);
}

struct rcp_fan *rcp_fan_begin(tb_done_cb done, void *data)
{
    struct rcp_fan *f = calloc(1, sizeof *f);

    if (f == NULL)
        return NULL;
    pthread_mutex_init(&f->mu, NULL);
    f->done = done;
    f->data = data;
    pthread_mutex_lock(&f->mu);
    return f;
}

int rcp_fan_sent(struct rcp_fan *f, int rv)
{
    if (rv == 0)
        f->pending++;
    else if (f->rc == 0)
        f->rc = rv;
    return rv;
}

int rcp_fan_end(struct rcp_fan *f)
{
    int rc = f->rc, none = f->pending == 0;

    pthread_mutex_unlock(&f->mu);
    if (!none)
        return 0; /* the last answer finishes it */
    fan_free(f);
    return rc != 0 ? rc : TB_EINVAL;
}

void rcp_fan_answer(struct rcp_fan *f, int rc)
{
    int last;

    pthread_mutex_lock(&f->mu);
    if (rc != 0 && f->rc == 0)
        f->rc = rc;
    last = --f->pending == 0;
    pthread_mutex_unlock(&f->mu);
    if (last) {
        f->done(f->rc, f->data);
        fan_free(f);
    }
}
