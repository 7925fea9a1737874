/* The replicated session table: createSession and closeSession txns, and
 * lookups for the server.  Expiry is decided by the leader elsewhere and
 * arrives here as an ordinary closeSession.
 *
 * Session ids are derived from the zxid of the createSession txn, so every
 * replica picks the same id without coordination: (1 << 56) | zxid.  The
 * top byte 0x01 keeps ids clear of 0, of the container marker 0x80… and of
 * the TTL encoding 0xFF… (wire doc §7.4). */
#include <stdlib.h>

#include "server/fsm/fsm_int.h"

int64_t fsm_session_id_for(int64_t zxid)
{
    return (int64_t)((1ULL << 56) | ((uint64_t)zxid & ((1ULL << 56) - 1)));
}

struct fsm_session *fsm__session(const struct fsm *f, int64_t id)
{
    if (id == 0)
        return NULL;
    return tb_map_get(&f->sessions, (uint64_t)id);
}

int fsm__create_session(struct fsm *f, struct tb_str body)
{
    struct tb_rd r = tb_rd_make(body.ptr, body.len);
    struct tb_create_session_txn req;
    struct tb_session_resp resp;
    struct fsm_session *s;
    int64_t id = fsm_session_id_for(f->zxid);

    if (tb_create_session_txn_decode(&r, &req) != 0 || req.passwd.ptr == NULL ||
        req.passwd.len != sizeof s->passwd)
        return TB_EMARSHALLING;
    if (fsm__session(f, id) != NULL)
        return TB_ESYSTEM; /* only if zxids wrapped past 2^56 */
    s = malloc(sizeof *s);
    if (s == NULL)
        return TB_ENOMEM;
    s->id = id;
    s->timeout = req.timeout;
    memcpy(s->passwd, req.passwd.ptr, sizeof s->passwd);
    tb_queue_init(&s->link);
    if (tb_map_put(&f->sessions, (uint64_t)id, s) != 0) {
        free(s);
        return TB_ENOMEM;
    }
    f->opened = s;
    resp.session = id;
    resp.timeout = s->timeout;
    resp.passwd = req.passwd;
    tb_session_resp_encode(&f->body, &resp);
    return 0;
}

int fsm__close_session(struct fsm *f)
{
    struct fsm_session *s = fsm__session(f, f->txn->session);
    int rv;

    if (s == NULL)
        return TB_ESESSIONEXPIRED;
    if ((rv = fsm__remove_ephemerals(f, s->id)) != 0)
        return rv;
    f->closed = s;
    return 0;
}

void fsm__sessions_commit(struct fsm *f, struct fsm_session_change *c)
{
    struct fsm_session *s;

    c->due = 0;
    if ((s = f->opened) != NULL) {
        f->opened = NULL;
        tb_queue_insert_tail(&f->sessions_list, &s->link);
        *c = (struct fsm_session_change){1, s->id, s->timeout, 1};
    }
    if ((s = f->closed) != NULL) {
        f->closed = NULL;
        tb_map_del(&f->sessions, (uint64_t)s->id);
        tb_queue_remove(&s->link);
        *c = (struct fsm_session_change){1, s->id, s->timeout, 0};
        free(s);
    }
}

void fsm__sessions_abort(struct fsm *f)
{
    if (f->opened != NULL) {
        tb_map_del(&f->sessions, (uint64_t)f->opened->id);
        free(f->opened);
        f->opened = NULL;
    }
    f->closed = NULL;
}

void fsm__sessions_free(struct tb_map *m, struct tb_queue *list)
{
    struct fsm_session *s;

    while (!tb_queue_empty(list)) {
        s = TB_CONTAINER_OF(tb_queue_head(list), struct fsm_session, link);
        tb_queue_remove(&s->link);
        free(s);
    }
    tb_map_free(m);
}

int fsm_session_get(const struct fsm *f, int64_t id,
                    struct fsm_session_info *out)
{
    struct fsm_session *s = fsm__session(f, id);

    if (s == NULL)
        return 0;
    if (out) {
        out->id = s->id;
        out->timeout_ms = s->timeout;
        memcpy(out->passwd, s->passwd, sizeof out->passwd);
    }
    return 1;
}

uint64_t fsm_session_count(const struct fsm *f)
{
    return f->sessions.count;
}

int fsm_session_foreach(const struct fsm *f,
                        int (*cb)(void *data, const struct fsm_session_info *s),
                        void *data)
{
    const struct tb_queue *q;
    const struct fsm_session *s;
    struct fsm_session_info info;
    int rv;

    TB_QUEUE_FOREACH (q, &f->sessions_list) {
        s = TB_CONTAINER_OF(q, struct fsm_session, link);
        info.id = s->id;
        info.timeout_ms = s->timeout;
        memcpy(info.passwd, s->passwd, sizeof info.passwd);
        if ((rv = cb(data, &info)) != 0)
            return rv;
    }
    return 0;
}

int fsm_session_ephemerals(const struct fsm *f, int64_t id, tree_node_cb cb,
                           void *data)
{
    return tree_ephemerals_foreach(f->tree, id, cb, data);
}

uint64_t fsm_ephemeral_count(const struct fsm *f)
{
    return tree_ephemeral_count(f->tree);
}
