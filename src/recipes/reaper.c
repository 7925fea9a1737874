/* The reaper: deletes a recipe's node until it is really gone; and
 * creates a lock's parents as containers, or a node with its parents.
 *
 * Why it exists: a waiter that gives up, or a holder that releases, must
 * not leave its node behind, or every later waiter queues behind a node
 * nobody will delete until the session ends.  A delete whose reply is
 * lost with the connection may or may not have happened, so the reaper
 * sends it again (the client holds it until the next connection) until
 * the answer is conclusive: deleted, no such node, or the session is over
 * (its ephemeral nodes are gone with it).  It is Curator's "guaranteed
 * delete".  A node reaped is always an ephemeral node of the session, and
 * some have names others use too (a non-fair lock's PATH, a queue's
 * claim): the node at the path may be someone else's, made after ours
 * went (deleted by an operator, a broken lock, while we were away), or
 * our own next one.  So for such a name (a czxid given) even the first
 * delete looks first, and every retry does: only our node is deleted (its
 * owner our session, its czxid the one given, at the version seen).  A
 * unique name (a fair lock's sequential node) is deleted at once.
 *
 * A reaper holds no reference to the recipe that started it: the recipe
 * may be freed, and may even start a new attempt, while the old node is
 * still being deleted. */
#include <string.h>

#include "recipes/rcp.h"

struct reap {
    struct tb_client *c;
    char *path;
    int64_t czxid; /* of our node; 0: any of our session's */
    int wait_final;
    tb_done_cb done; /* NULL once fired */
    void *data;
    int retried; /* a delete was sent again after a connection loss */
};

static void reap_free(struct reap *r)
{
    free(r->path);
    free(r);
}

static void notify(struct reap *r, int rc)
{
    tb_done_cb cb = r->done;

    r->done = NULL;
    if (cb != NULL)
        cb(rc, r->data);
}

static void finish(struct reap *r, int rc)
{
    notify(r, rc);
    reap_free(r);
}

static void on_delete(struct tb_client *c, int rc, void *data);
static void on_look(struct tb_client *c, int rc, const struct tb_stat *st,
                    void *data);

/* Is our node still there?  Asked through a server that may lag the
 * leader (another one after a reconnect): a sync first, which the look
 * waits behind.  (Between the look and the delete, our node may still be
 * deleted and PATH made again at the same version: no request deletes by
 * czxid.) */
static int send_look(struct reap *r)
{
    (void)tb_sync(r->c, r->path, NULL, NULL);
    return tb_exists(r->c, r->path, NULL, NULL, on_look, r);
}

static void look_again(struct reap *r)
{
    int rv = send_look(r);

    if (rv != 0)
        finish(r, rv);
}

static void on_look(struct tb_client *c, int rc, const struct tb_stat *st,
                    void *data)
{
    struct reap *r = data;

    if (rc == TB_ECONNECTIONLOSS) {
        if (!r->wait_final) /* as for a delete: told now, tried on */
            notify(r, rc);
        look_again(r);
    } else if (rc == TB_ENONODE ||
               (rc == 0 && (st->ephemeral_owner != tb_client_session(c, NULL) ||
                            (r->czxid != 0 && st->czxid != r->czxid)))) {
        /* Ours is gone: by our own lost delete, most likely, if there was
         * one; else someone else deleted it. */
        finish(r, r->retried ? 0 : TB_ENONODE);
    } else if (rc == 0) {
        if ((rc = tb_delete(c, r->path, st->version, on_delete, r)) != 0)
            finish(r, rc);
    } else {
        finish(r, rc);
    }
}

static void on_delete(struct tb_client *c, int rc, void *data)
{
    struct reap *r = data;

    (void)c;
    switch (rc) {
    case TB_OK:
        finish(r, 0);
        break;
    case TB_ENONODE: /* after a lost reply: most likely our own delete */
        finish(r, r->retried ? 0 : rc);
        break;
    case TB_EBADVERSION: /* changed since the look: ours still? */
        look_again(r);
        break;
    case TB_ECONNECTIONLOSS:
        r->retried = 1;
        if (!r->wait_final)
            notify(r, rc);
        look_again(r);
        break;
    default: /* session over, or a refusal no retry can change */
        finish(r, rc);
    }
}

int rcp_reap(struct tb_client *c, const char *path, int64_t czxid,
             int wait_final, tb_done_cb done, void *data)
{
    struct reap *r = calloc(1, sizeof *r);
    int rv;

    if (r == NULL)
        return TB_ENOMEM;
    r->c = c;
    r->czxid = czxid;
    r->wait_final = wait_final;
    r->done = done;
    r->data = data;
    r->path = rcp_strdup(path);
    if (r->path == NULL) {
        free(r);
        return TB_ENOMEM;
    }
    rv = czxid != 0 ? send_look(r) : tb_delete(c, r->path, -1, on_delete, r);
    if (rv != 0)
        reap_free(r);
    return rv;
}

/* ---- parents as containers ---- */

static void on_mkp(struct tb_client *c, int rc, const char *path,
                   const struct tb_stat *st, void *data)
{
    (void)path;
    (void)st;
    (void)c;
    rcp_fan_answer(data, rc == TB_ENODEEXISTS ? 0 : rc);
}

/* Creates "/a", "/a/b", ... "/a/b/c" in one pipeline: the server handles
 * one connection's requests in order, so each finds its parent made. */
int rcp_mkparents(struct tb_client *c, const char *path, int mode,
                  tb_done_cb done, void *data)
{
    struct rcp_fan *f;
    char *p;
    size_t i, n = strlen(path);
    int rv = 0;

    if (n <= 1) /* the root always exists */
        return TB_EINVAL;
    if ((p = rcp_strdup(path)) == NULL)
        return TB_ENOMEM;
    if ((f = rcp_fan_begin(done, data)) == NULL) {
        free(p);
        return TB_ENOMEM;
    }
    for (i = 1; i <= n && rv == 0; i++) {
        if (i < n && p[i] != '/')
            continue;
        p[i] = '\0';
        rv = rcp_fan_sent(f, tb_create(c, p, NULL, 0, NULL,
                                       i < n ? TB_CONTAINER : mode, 0, on_mkp,
                                       f));
        if (i < n)
            p[i] = '/';
    }
    free(p);
    return rcp_fan_end(f);
}

/* ---- a node whose parents may be missing ---- */

struct cin {
    struct tb_client *c;
    char *path;
    void *value;
    size_t len;
    int mode;
    int parent_tries;
    tb_done_cb cb;
    void *data;
};

static void cin_end(struct cin *k, int rc)
{
    k->cb(rc, k->data);
    free(k->value);
    free(k->path);
    free(k);
}

static int cin_send(struct cin *k);

static void on_cin_parents(int rc, void *data)
{
    struct cin *k = data;

    /* NoNode: a level reaped while the levels under it were made; the
     * create finds out, and the parents are made again. */
    if (rc == 0 || rc == TB_ENONODE)
        rc = cin_send(k);
    if (rc != 0)
        cin_end(k, rc);
}

static void on_cin(struct tb_client *c, int rc, const char *path,
                   const struct tb_stat *st, void *data)
{
    struct cin *k = data;
    char *parent;

    (void)path;
    (void)st;
    if (rc == TB_ENONODE && ++k->parent_tries <= RCP_PARENT_TRIES) {
        parent = rcp_dirname(k->path);
        rc = parent == NULL ? TB_ENOMEM
                            : rcp_mkparents(c, parent, TB_CONTAINER, on_cin_parents, k);
        free(parent);
        if (rc == 0)
            return;
    }
    cin_end(k, rc);
}

static int cin_send(struct cin *k)
{
    return tb_create(k->c, k->path, k->value, k->len, NULL, k->mode, 0, on_cin,
                     k);
}

/* Parents are made only when the create says they are missing: the
 * common case, a parent already there, costs one round trip.  Made again
 * if the create still finds one missing: the server reaps an emptied
 * container whenever it looks, even one this create was about to use. */
int rcp_create_in(struct tb_client *c, const char *path, const void *value,
                  size_t len, int mode, tb_done_cb done, void *data)
{
    struct cin *k = calloc(1, sizeof *k);
    int rv;

    if (k == NULL || (k->path = rcp_strdup(path)) == NULL ||
        (len > 0 && (k->value = malloc(len)) == NULL)) {
        if (k != NULL)
            free(k->path);
        free(k);
        return TB_ENOMEM;
    }
    if (len > 0)
        memcpy(k->value, value, len);
    k->c = c;
    k->len = len;
    k->mode = mode;
    k->cb = done;
    k->data = data;
    if ((rv = cin_send(k)) != 0) {
        free(k->value);
        free(k->path);
        free(k);
    }
    return rv;
}
