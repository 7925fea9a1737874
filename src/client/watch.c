/* The watcher registry: which local callbacks a server notification wakes.
 *
 * A hash table keyed by server path (chroot included), each bucket an
 * intrusive queue of watchers in registration order.  The server keeps one
 * entry per (path, kind, connection) and sends one event; this side fans
 * it out to every watcher, one per (path, kind, cb, data), each of which
 * gets its own call (a one-shot watcher exactly one).  Which kinds an event
 * wakes follows ZooKeeper's client (wire doc 10.3, 10.5): created and
 * data-changed wake data and exist watchers, deleted also child watchers,
 * children-changed only child watchers; persistent watchers see every event of
 * their path, recursive ones every event but children-changed of their path and
 * all descendants. */
#include "client/client.h"

static uint32_t hash_path(const char *p, size_t n)
{
    uint32_t h = 2166136261u;

    while (n--) {
        h ^= (uint8_t)*p++;
        h *= 16777619u;
    }
    return h;
}

struct watcher *tb__watcher_new(struct tb_str path, tb_watch_cb cb,
                                void *data, int set_kind)
{
    struct watcher *w = tb__malloc(sizeof *w + path.len + 1);

    if (w == NULL)
        return NULL;
    memset(w, 0, sizeof *w);
    w->it.kind = ITEM_WATCH;
    tb_queue_init(&w->it.q);
    w->hash = hash_path(path.ptr, path.len);
    w->set_kind = set_kind;
    w->cb = cb;
    w->data = data;
    w->path_len = path.len;
    memcpy(w->path, path.ptr, path.len);
    w->path[path.len] = '\0';
    return w;
}

/* Doubles the table when it is loaded two per bucket; on allocation
 * failure the old table stays (longer chains, still correct). */
static void maybe_grow(struct tb_client *c)
{
    size_t n = c->nbuckets * 2, i;
    struct tb_queue *nb, *q;

    if (c->nwatchers < c->nbuckets * 2)
        return;
    nb = tb__calloc(n, sizeof *nb);
    if (nb == NULL)
        return;
    for (i = 0; i < n; i++)
        tb_queue_init(&nb[i]);
    for (i = 0; i < c->nbuckets; i++) {
        while (!tb_queue_empty(&c->buckets[i])) {
            struct watcher *w;
            q = tb_queue_head(&c->buckets[i]);
            w = TB_CONTAINER_OF(q, struct watcher, it.q);
            tb_queue_remove(q);
            tb_queue_insert_tail(&nb[w->hash & (n - 1)], q);
        }
    }
    tb__free(c->buckets);
    c->buckets = nb;
    c->nbuckets = n;
}

static int same_path(const struct watcher *w, uint32_t h, struct tb_str p)
{
    return w->hash == h && w->path_len == p.len &&
           memcmp(w->path, p.ptr, p.len) == 0;
}

/* A watcher is (path, kind, cb, data), as ZooKeeper's clients keep a set
 * of them per path and kind: one set again while it is still set is
 * freed, and the one registered stays.  Else a watch set on every read
 * of a node that does not change would pile up, each called at once. */
void tb__watch_register(struct tb_client *c, struct watcher *w)
{
    struct tb_str p = {w->path, w->path_len};
    struct tb_queue *q;

    TB_QUEUE_FOREACH (q, &c->buckets[w->hash & (c->nbuckets - 1)]) {
        const struct watcher *o = TB_CONTAINER_OF(q, struct watcher, it.q);
        if (o->kind == w->set_kind && o->cb == w->cb && o->data == w->data &&
            same_path(o, w->hash, p)) {
            tb__free(w);
            return;
        }
    }
    maybe_grow(c);
    w->kind = w->set_kind;
    tb_queue_insert_tail(&c->buckets[w->hash & (c->nbuckets - 1)], &w->it.q);
    c->nwatchers++;
}

static void end_watcher(struct tb_client *c, struct watcher *w, int type,
                        int rc)
{
    tb_queue_remove(&w->it.q);
    c->nwatchers--;
    w->ev_type = type;
    w->ev_rc = rc;
    tb__push_done(c, &w->it);
}

static int push_pevent(struct tb_client *c, const struct watcher *w, int type,
                       struct tb_str path)
{
    struct pevent *e = tb__malloc(sizeof *e + path.len + 1);

    if (e == NULL)
        return TB_ENOMEM;
    e->it.kind = ITEM_PEVENT;
    e->cb = w->cb;
    e->data = w->data;
    e->type = type;
    memcpy(e->path, path.ptr, path.len);
    e->path[path.len] = '\0';
    tb__push_done(c, &e->it);
    return 0;
}

static int oneshot_wakes(int kind, int type)
{
    switch (type) {
    case TB_EVENT_CREATED:
    case TB_EVENT_DATA_CHANGED:
        return kind == WK_DATA || kind == WK_EXIST;
    case TB_EVENT_DELETED:
        return kind == WK_DATA || kind == WK_EXIST || kind == WK_CHILD;
    case TB_EVENT_CHILDREN_CHANGED:
        return kind == WK_CHILD;
    default:
        return 0;
    }
}

/* Recursive watchers on `anc`, a strict ancestor of the event's path. */
static int dispatch_ancestor(struct tb_client *c, struct tb_str anc, int type,
                             struct tb_str path)
{
    uint32_t h = hash_path(anc.ptr, anc.len);
    struct tb_queue *b = &c->buckets[h & (c->nbuckets - 1)], *q;

    TB_QUEUE_FOREACH(q, b) {
        struct watcher *w = TB_CONTAINER_OF(q, struct watcher, it.q);
        if (w->kind == WK_RECURSIVE && same_path(w, h, anc) &&
            push_pevent(c, w, type, path) != 0)
            return TB_ENOMEM;
    }
    return 0;
}

int tb__watch_dispatch(struct tb_client *c, int type, struct tb_str path)
{
    uint32_t h = hash_path(path.ptr, path.len);
    struct tb_queue *b = &c->buckets[h & (c->nbuckets - 1)], *q, *next;
    size_t i;

    for (q = b->next; q != b; q = next) {
        struct watcher *w = TB_CONTAINER_OF(q, struct watcher, it.q);
        next = q->next;
        if (!same_path(w, h, path))
            continue;
        if (w->kind == WK_PERSISTENT ||
            (w->kind == WK_RECURSIVE && type != TB_EVENT_CHILDREN_CHANGED)) {
            if (push_pevent(c, w, type, path) != 0)
                return TB_ENOMEM;
        } else if (oneshot_wakes(w->kind, type)) {
            end_watcher(c, w, type, 0);
        }
    }
    if (type == TB_EVENT_CHILDREN_CHANGED)
        return 0;
    for (i = path.len - 1; i > 0; i--) {
        if (path.ptr[i] == '/' &&
            dispatch_ancestor(c, (struct tb_str){path.ptr, i}, type, path) !=
                0)
            return TB_ENOMEM;
    }
    if (path.len > 1)
        return dispatch_ancestor(c, TB_STR("/"), type, path);
    return 0;
}

/* Which server-side table a kind lives in: exists and data watches share
 * the data table (wire doc 10.3). */
static int wire_class(int kind)
{
    return kind == WK_EXIST ? WK_DATA : kind;
}

/* Does `rm` remove a watcher of `kind` registered with (cb, data)? */
static int rm_takes(const struct rm_spec *rm, int kind, tb_watch_cb cb,
                    const void *data)
{
    int kind_ok;

    switch (rm->type) {
    case TB_WATCHER_CHILDREN:
        kind_ok = kind == WK_CHILD;
        break;
    case TB_WATCHER_DATA:
        kind_ok = kind == WK_DATA || kind == WK_EXIST;
        break;
    case TB_WATCHER_ANY:
        kind_ok = 1;
        break;
    case TB_WATCHER_PERSISTENT:
        kind_ok = kind == WK_PERSISTENT;
        break;
    case TB_WATCHER_PERSISTENT_RECURSIVE:
        kind_ok = kind == WK_RECURSIVE;
        break;
    default:
        kind_ok = 0;
    }
    return kind_ok && (rm->cb == NULL || (rm->cb == cb && rm->data == data));
}

static int rm_matches(const struct rm_spec *rm, const struct watcher *w)
{
    return rm_takes(rm, w->kind, w->cb, w->data);
}

/* Is `x` a removal on `path` that takes the watcher (kind, cb, data)? */
static int removes_on(const struct req *x, struct tb_str path)
{
    const struct rm_spec *rm = x->rm;

    return rm != NULL && rm->path_len == path.len &&
           memcmp(rm->path, path.ptr, path.len) == 0;
}

static int req_takes(const struct req *x, struct tb_str path, int kind,
                     tb_watch_cb cb, const void *data)
{
    return removes_on(x, path) && rm_takes(x->rm, kind, cb, data);
}

/* Whether a removal outstanding is on `path`: only then is removed_later
 * asked, watcher by watcher (almost never). */
static int removal_on(struct tb_client *c, struct tb_str path)
{
    struct tb_queue *qs[2] = {&c->pendq, &c->outq}, *q, *f;
    int i;

    for (i = 0; i < 2; i++)
        TB_QUEUE_FOREACH (q, qs[i]) {
            const struct req *r = TB_CONTAINER_OF(q, struct req, it.q);
            if (removes_on(r, path))
                return 1;
            TB_QUEUE_FOREACH (f, &r->after)
                if (removes_on(TB_CONTAINER_OF(f, struct req, it.q), path))
                    return 1;
        }
    return 0;
}

/* Does a removal outstanding after request `from` (NULL: any outstanding
 * one) take the watcher (kind, cb, data) on `path` out?  Requests
 * complete in this order: pendq, then outq, each followed by the quiet
 * removals on its `after` queue. */
static int removed_later(struct tb_client *c, const struct req *from,
                         struct tb_str path, int kind, tb_watch_cb cb,
                         const void *data)
{
    struct tb_queue *qs[2] = {&c->pendq, &c->outq}, *q, *f;
    int i, started = from == NULL;

    for (i = 0; i < 2; i++) {
        TB_QUEUE_FOREACH (q, qs[i]) {
            const struct req *r = TB_CONTAINER_OF(q, struct req, it.q);
            if (!started && r != from)
                continue;
            if (started && req_takes(r, path, kind, cb, data))
                return 1;
            started = 1;
            TB_QUEUE_FOREACH (f, &r->after) {
                if (req_takes(TB_CONTAINER_OF(f, struct req, it.q), path, kind,
                              cb, data))
                    return 1;
            }
        }
    }
    return 0;
}

/* Counts the watchers `rm` matches; *others gets a bit per wire class of
 * the watchers that would remain on the path.  Both as things will be at
 * the removal's turn: watchers that removals still outstanding take out
 * do not count, and watchers that requests still outstanding register (if
 * they succeed) count as registered ones do, among those `rm` removes if
 * it matches them, else among the others.  Left out of the count, such a
 * watcher would make the call fail with TB_ENOWATCHER and then be
 * registered all the same, called after the caller gave it up. */
int tb__watch_count(struct tb_client *c, struct tb_str path,
                    const struct rm_spec *rm, int *others)
{
    uint32_t h = hash_path(path.ptr, path.len);
    struct tb_queue *b = &c->buckets[h & (c->nbuckets - 1)], *q;
    struct tb_queue *qs[2] = {&c->pendq, &c->outq};
    int i, n = 0, pending = removal_on(c, path);

    *others = 0;
    TB_QUEUE_FOREACH(q, b) {
        struct watcher *w = TB_CONTAINER_OF(q, struct watcher, it.q);
        if (!same_path(w, h, path) ||
            (pending && removed_later(c, NULL, path, w->kind, w->cb, w->data)))
            continue;
        if (rm_matches(rm, w))
            n++;
        else
            *others |= 1 << wire_class(w->kind);
    }
    for (i = 0; i < 2; i++) {
        TB_QUEUE_FOREACH (q, qs[i]) {
            const struct req *r = TB_CONTAINER_OF(q, struct req, it.q);
            const struct watcher *w = r->w;
            if (w == NULL || !same_path(w, h, path) ||
                (pending &&
                 removed_later(c, r, path, w->set_kind, w->cb, w->data)))
                continue;
            if (rm_takes(rm, w->set_kind, w->cb, w->data))
                n++;
            else
                *others |= 1 << wire_class(w->set_kind);
        }
    }
    return n;
}

static int removed_type(int kind)
{
    switch (kind) {
    case WK_CHILD:
        return TB_EVENT_CHILD_WATCH_REMOVED;
    case WK_PERSISTENT:
    case WK_RECURSIVE:
        return TB_EVENT_PERSISTENT_WATCH_REMOVED;
    default:
        return TB_EVENT_DATA_WATCH_REMOVED;
    }
}

int tb__watch_remove(struct tb_client *c, struct tb_str path,
                     const struct rm_spec *rm)
{
    uint32_t h = hash_path(path.ptr, path.len);
    struct tb_queue *b = &c->buckets[h & (c->nbuckets - 1)], *q, *next;
    int n = 0;

    for (q = b->next; q != b; q = next) {
        struct watcher *w = TB_CONTAINER_OF(q, struct watcher, it.q);
        next = q->next;
        if (same_path(w, h, path) && rm_matches(rm, w)) {
            end_watcher(c, w, removed_type(w->kind), 0);
            n++;
        }
    }
    return n;
}

void tb__watch_end_all(struct tb_client *c, int rc)
{
    size_t i;

    for (i = 0; i < c->nbuckets; i++)
        while (!tb_queue_empty(&c->buckets[i]))
            end_watcher(c,
                        TB_CONTAINER_OF(tb_queue_head(&c->buckets[i]),
                                        struct watcher, it.q),
                        TB_EVENT_NONE, rc);
}

void tb__watch_free_all(struct tb_client *c)
{
    size_t i;

    for (i = 0; i < c->nbuckets; i++) {
        while (!tb_queue_empty(&c->buckets[i])) {
            struct tb_queue *q = tb_queue_head(&c->buckets[i]);
            tb_queue_remove(q);
            tb__free(TB_CONTAINER_OF(q, struct watcher, it.q));
        }
    }
    tb__free(c->buckets);
    c->buckets = NULL;
    c->nbuckets = 0;
    c->nwatchers = 0;
}

/* ---- re-registration after a reconnect (wire doc 10.6) ---- */

/* The five lists of a SetWatches2, in wire order, by watch kind. */
static const int list_of_kind[] = {
    [WK_DATA] = 0, [WK_EXIST] = 1, [WK_CHILD] = 2,
    [WK_PERSISTENT] = 3, [WK_RECURSIVE] = 4,
};

struct set_batch {
    struct tb_wbuf list[5];
    int32_t n[5];
    size_t bytes;
};

static void emit_batch(struct tb_client *c, struct set_batch *sb,
                       struct tb_wbuf *out, int *nreq)
{
    struct tb_request_header h = {TB_XID_SETWATCHES, TB_OP_SETWATCHES};
    struct tb_set_watches2_req r;
    size_t start;
    int i;

    if (sb->bytes == 0)
        return;
    if (sb->n[3] || sb->n[4])
        h.type = TB_OP_SETWATCHES2;
    r.relative_zxid = c->last_zxid;
    r.data = tb_vec_view(&sb->list[0], sb->n[0]);
    r.exist = tb_vec_view(&sb->list[1], sb->n[1]);
    r.child = tb_vec_view(&sb->list[2], sb->n[2]);
    r.persistent = tb_vec_view(&sb->list[3], sb->n[3]);
    r.recursive = tb_vec_view(&sb->list[4], sb->n[4]);
    start = tb_frame_begin(out);
    tb_request_header_encode(out, &h);
    if (h.type == TB_OP_SETWATCHES2) {
        tb_set_watches2_req_encode(out, &r);
    } else {
        struct tb_set_watches_req r1 = {r.relative_zxid, r.data, r.exist,
                                        r.child};
        tb_set_watches_req_encode(out, &r1);
    }
    tb_frame_end(out, start);
    for (i = 0; i < 5; i++) {
        sb->list[i].len = 0;
        sb->n[i] = 0;
    }
    sb->bytes = 0;
    (*nreq)++;
}

/* Is there an earlier watcher of the same path and kind in the bucket? */
static int seen_before(struct tb_queue *b, const struct watcher *w)
{
    struct tb_queue *q;

    TB_QUEUE_FOREACH(q, b) {
        const struct watcher *o = TB_CONTAINER_OF(q, struct watcher, it.q);
        if (o == w)
            return 0;
        if (o->kind == w->kind &&
            same_path(o, w->hash, (struct tb_str){w->path, w->path_len}))
            return 1;
    }
    return 0;
}

int tb__watch_encode_set(struct tb_client *c, struct tb_wbuf *out,
                         size_t batch_bytes, int *nreq)
{
    struct set_batch sb;
    struct tb_queue *q;
    size_t i;
    int k, rv = 0;

    memset(&sb, 0, sizeof sb);
    *nreq = 0;
    for (i = 0; i < c->nbuckets; i++) {
        TB_QUEUE_FOREACH(q, &c->buckets[i]) {
            struct watcher *w = TB_CONTAINER_OF(q, struct watcher, it.q);
            if (seen_before(&c->buckets[i], w))
                continue;
            k = list_of_kind[w->kind];
            tb_put_STR(&sb.list[k], (struct tb_str){w->path, w->path_len});
            sb.n[k]++;
            sb.bytes += w->path_len;
            if (sb.bytes >= batch_bytes)
                emit_batch(c, &sb, out, nreq);
        }
    }
    emit_batch(c, &sb, out, nreq);
    for (k = 0; k < 5; k++) {
        if (sb.list[k].oom)
            rv = TB_ENOMEM;
        tb_wbuf_free(&sb.list[k]);
    }
    return out->oom ? TB_ENOMEM : rv;
}
