/* Requests: allocation, framing, queueing and completion.
 *
 * Completion is where a reply's side effects on the client happen, under
 * the lock and before any later frame is looked at: a watch is registered
 * (or dropped) and removeWatches takes its watchers out.  The removals
 * the server is not told of (quiet) chained after a request take theirs
 * out right after it completes.  The user's callback runs later, from the
 * done queue (fire.c). */
#include "client/client.h"

struct req *tb__req_new(struct tb_client *c, int32_t op, int kind)
{
    struct req *r = tb__calloc(1, sizeof *r);

    (void)c;
    if (r == NULL)
        return NULL;
    r->it.kind = ITEM_REQ;
    tb_queue_init(&r->it.q);
    tb_queue_init(&r->after);
    r->op = op;
    r->kind = kind;
    tb_wbuf_init(&r->fw);
    return r;
}

void tb__req_free(struct req *r)
{
    if (r == NULL)
        return;
    tb_wbuf_free(&r->fw);
    tb__free(r->body);
    tb__free(r->w);
    tb__free(r->rm);
    tb__free(r);
}

/* Positive and increasing in send order; wraps to 1 like Java (the
 * negative ones are the protocol's own: ping, auth, setWatches, events). */
int32_t tb__next_xid(struct tb_client *c)
{
    int32_t xid = c->next_xid;

    c->next_xid = xid == INT32_MAX ? 1 : xid + 1;
    return xid;
}

void tb__req_begin(struct tb_client *c, struct req *r)
{
    struct tb_request_header h;

    r->xid = tb__next_xid(c);
    h.xid = r->xid;
    h.type = r->op;
    r->fw.len = 0;
    tb_frame_begin(&r->fw);
    tb_request_header_encode(&r->fw, &h);
}

int tb__submit_check(struct tb_client *c)
{
    if (c->closing || c->closed || c->close_requested)
        return TB_ECLOSING;
    if (c->state == TB_SESSION_EXPIRED)
        return TB_ESESSIONEXPIRED;
    if (c->state == TB_SESSION_AUTH_FAILED)
        return TB_EAUTHFAILED;
    return 0;
}

int tb__req_submit(struct tb_client *c, struct req *r)
{
    tb_frame_end(&r->fw, 0);
    if (r->fw.oom) {
        tb__req_free(r);
        return TB_ENOMEM;
    }
    if (r->fw.len - 4 > c->o.max_request_bytes) {
        tb__req_free(r);
        return TB_ETOOBIG;
    }
    tb_queue_insert_tail(&c->outq, &r->it.q);
    tb__flush(c);
    return 0;
}

static void register_watch(struct tb_client *c, struct req *r, int rc)
{
    int set = rc == 0;

    if (r->op == TB_OP_EXISTS) {
        /* exists on a missing node leaves an exists watch (wire 10.3) */
        set = rc == 0 || rc == TB_ENONODE;
        r->w->set_kind = rc == 0 ? WK_DATA : WK_EXIST;
    }
    if (set) {
        tb__watch_register(c, r->w);
        r->w = NULL;
    }
}

static int remove_watches(struct tb_client *c, struct req *r, int rc)
{
    struct tb_str p = {r->rm->path, r->rm->path_len};
    int n;

    if (r->rm->quiet) {
        /* rc != 0: the session ended first, and ends the watchers too.
         * None left (the watch fired meanwhile): as the server says it. */
        if (rc == 0 && tb__watch_remove(c, p, r->rm) == 0)
            return TB_ENOWATCHER;
        return rc;
    }
    if (rc != 0 && rc != TB_ENOWATCHER && !r->rm->local)
        return rc;
    n = tb__watch_remove(c, p, r->rm);
    return n > 0 ? 0 : rc;
}

/* The quiet removals chained after `r`, which completed with `rc`, take
 * their turn: in effect unless the session ended (then, as every request
 * outstanding, with its code). */
static void complete_after(struct tb_client *c, struct req *r, int rc)
{
    if (c->phase != PH_DEAD)
        rc = 0;
    while (!tb_queue_empty(&r->after))
        tb__req_complete(
            c, TB_CONTAINER_OF(tb_queue_head(&r->after), struct req, it.q), rc,
            NULL, 0);
}

void tb__req_complete(struct tb_client *c, struct req *r, int rc,
                      const uint8_t *body, size_t len)
{
    int rc0 = rc;

    tb_queue_remove(&r->it.q);
    tb_wbuf_free(&r->fw);
    if (r->kind == R_INTERNAL) {
        if (r == c->close_req)   /* failed with its queue: the close ends by */
            c->close_req = NULL; /* its deadline, with nothing left to free */
        complete_after(c, r, rc);
        tb__req_free(r);
        return;
    }
    if (r->w != NULL)
        register_watch(c, r, rc);
    if (r->rm != NULL)
        rc = remove_watches(c, r, rc);
    if (rc == 0 && body != NULL) {
        /* One spare byte: fire.c NUL-terminates strings in place. */
        r->body = tb__malloc(len + 1);
        if (r->body == NULL) {
            rc = TB_ENOMEM;
        } else {
            memcpy(r->body, body, len);
            r->body[len] = 0;
            r->body_len = len;
        }
    }
    r->rc = rc;
    tb__push_done(c, &r->it);
    complete_after(c, r, rc0);
}

void tb__req_after(struct tb_client *c, struct req *r)
{
    struct tb_queue *last = NULL;

    if (!tb_queue_empty(&c->outq))
        last = c->outq.prev;
    else if (!tb_queue_empty(&c->pendq))
        last = c->pendq.prev;
    tb_wbuf_free(&r->fw); /* never sent */
    if (last == NULL)
        tb__req_complete(c, r, 0, NULL, 0);
    else
        tb_queue_insert_tail(&TB_CONTAINER_OF(last, struct req, it.q)->after,
                             &r->it.q);
}

void tb__req_fail_queue(struct tb_client *c, struct tb_queue *q, int rc)
{
    while (!tb_queue_empty(q))
        tb__req_complete(c,
                         TB_CONTAINER_OF(tb_queue_head(q), struct req, it.q),
                         rc, NULL, 0);
}
