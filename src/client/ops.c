/* The asynchronous operations: validate locally, encode the request once,
 * queue it.  Each returns 0 (the callback will fire exactly once) or an
 * error (it never will). */
#include "client/client.h"

/* One operation being built, lock held from op_start to op_finish. */
struct op {
    struct tb_client *c;
    struct req *r;
    struct tb_wbuf scratch, acl;
    struct tb_str path;
    int rv;
};

static int op_start(struct op *op, struct tb_client *c, int32_t opcode,
                    int kind, const char *path, int seq)
{
    op->c = c;
    op->r = NULL;
    tb_wbuf_init(&op->scratch);
    tb_wbuf_init(&op->acl);
    pthread_mutex_lock(&c->mu);
    if ((op->rv = tb__submit_check(c)) != 0)
        return op->rv;
    if (path != NULL &&
        (op->rv = tb__path_server(c, path, seq, &op->scratch, &op->path)) !=
            0)
        return op->rv;
    op->r = tb__req_new(c, opcode, kind);
    if (op->r == NULL)
        return op->rv = TB_ENOMEM;
    tb__req_begin(c, op->r);
    return 0;
}

static int op_watch(struct op *op, tb_watch_cb watch, void *wdata)
{
    if (op->rv != 0 || watch == NULL)
        return op->rv;
    op->r->w = tb__watcher_new(op->path, watch, wdata, WK_DATA);
    return op->rv = op->r->w ? 0 : TB_ENOMEM;
}

static int op_finish(struct op *op, void *cb, void *data)
{
    struct tb_client *c = op->c;
    int rv = op->rv;

    if (rv == 0 && op->r != NULL) {
        op->r->cb.v = (tb_void_cb)cb;
        op->r->data = data;
        rv = tb__req_submit(c, op->r); /* frees it on failure */
    } else {
        tb__req_free(op->r);
    }
    tb_wbuf_free(&op->scratch);
    tb_wbuf_free(&op->acl);
    if (rv == 0)
        tb__changed(c);
    pthread_mutex_unlock(&c->mu);
    return rv;
}

int tb__encode_acl(struct tb_wbuf *w, const struct tb_acl_list *acl,
                   struct tb_vec *out)
{
    int32_t i;

    if (acl == NULL) {
        *out = tb_acl_open_unsafe;
        return 0;
    }
    if (acl->count <= 0 || acl->v == NULL)
        return TB_EINVALIDACL;
    for (i = 0; i < acl->count; i++) {
        struct tb_acl a;
        if (acl->v[i].scheme == NULL || acl->v[i].id == NULL)
            return TB_EINVALIDACL;
        a.perms = acl->v[i].perms;
        a.id.scheme = tb_str_c(acl->v[i].scheme);
        a.id.id = tb_str_c(acl->v[i].id);
        tb_put_acl(w, &a);
    }
    if (w->oom)
        return TB_ENOMEM;
    *out = tb_vec_view(w, acl->count);
    return 0;
}

static int is_sequential(int mode)
{
    return mode == TB_PERSISTENT_SEQUENTIAL ||
           mode == TB_EPHEMERAL_SEQUENTIAL ||
           mode == TB_PERSISTENT_SEQUENTIAL_WITH_TTL;
}

static int is_ttl(int mode)
{
    return mode == TB_PERSISTENT_WITH_TTL ||
           mode == TB_PERSISTENT_SEQUENTIAL_WITH_TTL;
}

/* The opcode a create mode needs (wire doc 6.1: containers and TTL nodes
 * have their own, a plain create with their flags is silently wrong). */
int tb__create_opcode(int mode, int64_t ttl_ms)
{
    if (mode < TB_PERSISTENT || mode > TB_PERSISTENT_SEQUENTIAL_WITH_TTL)
        return TB_EBADARGUMENTS;
    if (is_ttl(mode))
        return ttl_ms >= 1 && ttl_ms <= ((int64_t)1 << 40) - 1
                   ? TB_OP_CREATETTL
                   : TB_EBADARGUMENTS;
    if (ttl_ms != 0)
        return TB_EBADARGUMENTS;
    return mode == TB_CONTAINER ? TB_OP_CREATECONTAINER : TB_OP_CREATE2;
}

int tb_create(struct tb_client *c, const char *path, const void *value,
              size_t len, const struct tb_acl_list *acl, int mode,
              int64_t ttl_ms, tb_create_cb cb, void *data)
{
    struct op op;
    int opcode = tb__create_opcode(mode, ttl_ms);
    struct tb_create_ttl_req rq;

    if (opcode < 0)
        return opcode;
    if (value == NULL && len != 0)
        return TB_EBADARGUMENTS;
    if (op_start(&op, c, opcode, R_CREATE, path, is_sequential(mode)) == 0)
        op.rv = tb__encode_acl(&op.acl, acl, &rq.acl);
    if (op.rv == 0) {
        rq.path = op.path;
        rq.data = (struct tb_str){value, len};
        rq.flags = mode;
        rq.ttl = ttl_ms;
        if (opcode == TB_OP_CREATETTL) {
            tb_create_ttl_req_encode(&op.r->fw, &rq);
        } else {
            struct tb_create_req cr = {rq.path, rq.data, rq.acl, rq.flags};
            tb_create_req_encode(&op.r->fw, &cr);
        }
    }
    return op_finish(&op, (void *)cb, data);
}

int tb_delete(struct tb_client *c, const char *path, int32_t version,
              tb_void_cb cb, void *data)
{
    struct op op;

    if (op_start(&op, c, TB_OP_DELETE, R_VOID, path, 0) == 0) {
        struct tb_delete_req rq = {op.path, version};
        tb_delete_req_encode(&op.r->fw, &rq);
    }
    return op_finish(&op, (void *)cb, data);
}

static int path_watch_op(struct tb_client *c, int32_t opcode, int kind,
                         const char *path, tb_watch_cb watch, void *wdata,
                         void *cb, void *data)
{
    struct op op;

    if (op_start(&op, c, opcode, kind, path, 0) == 0 &&
        op_watch(&op, watch, wdata) == 0) {
        struct tb_path_watch_req rq = {op.path, watch != NULL};
        if (watch != NULL && (opcode == TB_OP_GETCHILDREN ||
                              opcode == TB_OP_GETCHILDREN2))
            op.r->w->set_kind = WK_CHILD;
        tb_path_watch_req_encode(&op.r->fw, &rq);
    }
    return op_finish(&op, cb, data);
}

int tb_exists(struct tb_client *c, const char *path, tb_watch_cb watch,
              void *wdata, tb_stat_cb cb, void *data)
{
    return path_watch_op(c, TB_OP_EXISTS, R_STAT, path, watch, wdata,
                         (void *)cb, data);
}

int tb_get_data(struct tb_client *c, const char *path, tb_watch_cb watch,
                void *wdata, tb_data_cb cb, void *data)
{
    return path_watch_op(c, TB_OP_GETDATA, R_DATA, path, watch, wdata,
                         (void *)cb, data);
}

int tb_get_children(struct tb_client *c, const char *path, tb_watch_cb watch,
                    void *wdata, tb_strings_cb cb, void *data)
{
    return path_watch_op(c, TB_OP_GETCHILDREN, R_CHILDREN, path, watch,
                         wdata, (void *)cb, data);
}

int tb_get_children2(struct tb_client *c, const char *path,
                     tb_watch_cb watch, void *wdata, tb_strings_cb cb,
                     void *data)
{
    return path_watch_op(c, TB_OP_GETCHILDREN2, R_CHILDREN2, path, watch,
                         wdata, (void *)cb, data);
}

int tb_set_data(struct tb_client *c, const char *path, const void *value,
                size_t len, int32_t version, tb_stat_cb cb, void *data)
{
    struct op op;

    if (value == NULL && len != 0)
        return TB_EBADARGUMENTS;
    if (op_start(&op, c, TB_OP_SETDATA, R_STAT, path, 0) == 0) {
        struct tb_set_data_req rq = {op.path, {value, len}, version};
        tb_set_data_req_encode(&op.r->fw, &rq);
    }
    return op_finish(&op, (void *)cb, data);
}

static int path_op(struct tb_client *c, int32_t opcode, int kind,
                   const char *path, int seq, void *cb, void *data)
{
    struct op op;

    if (op_start(&op, c, opcode, kind, path, seq) == 0) {
        struct tb_path_req rq = {op.path};
        tb_path_req_encode(&op.r->fw, &rq);
    }
    return op_finish(&op, cb, data);
}

int tb_sync(struct tb_client *c, const char *path, tb_void_cb cb, void *data)
{
    return path_op(c, TB_OP_SYNC, R_VOID, path, 0, (void *)cb, data);
}

int tb_get_acl(struct tb_client *c, const char *path, tb_acl_cb cb,
               void *data)
{
    return path_op(c, TB_OP_GETACL, R_ACL, path, 0, (void *)cb, data);
}

int tb_get_all_children_number(struct tb_client *c, const char *path,
                               tb_count_cb cb, void *data)
{
    return path_op(c, TB_OP_GETALLCHILDRENNUMBER, R_COUNT, path, 0,
                   (void *)cb, data);
}

/* A prefix, not a path: "" and "/" mean all; "/a/" is allowed. */
int tb_get_ephemerals(struct tb_client *c, const char *prefix,
                      tb_strings_cb cb, void *data)
{
    if (prefix == NULL || prefix[0] == '\0')
        prefix = "/";
    return path_op(c, TB_OP_GETEPHEMERALS, R_EPHEMERALS, prefix, 1,
                   (void *)cb, data);
}

int tb_set_acl(struct tb_client *c, const char *path,
               const struct tb_acl_list *acl, int32_t version, tb_stat_cb cb,
               void *data)
{
    struct op op;
    struct tb_set_acl_req rq;

    if (acl == NULL)
        return TB_EINVALIDACL;
    if (op_start(&op, c, TB_OP_SETACL, R_STAT, path, 0) == 0 &&
        (op.rv = tb__encode_acl(&op.acl, acl, &rq.acl)) == 0) {
        rq.path = op.path;
        rq.version = version;
        tb_set_acl_req_encode(&op.r->fw, &rq);
    }
    return op_finish(&op, (void *)cb, data);
}

int tb_whoami(struct tb_client *c, tb_whoami_cb cb, void *data)
{
    struct op op;

    op_start(&op, c, TB_OP_WHOAMI, R_WHOAMI, NULL, 0);
    return op_finish(&op, (void *)cb, data);
}

/* ZooKeeper's own node: a chroot does not move it. */
static const char config_node[] = "/zookeeper/config";

int tb_get_config(struct tb_client *c, tb_data_cb cb, void *data)
{
    struct op op;

    if (op_start(&op, c, TB_OP_GETDATA, R_DATA, NULL, 0) == 0) {
        struct tb_path_watch_req rq = {tb_str_c(config_node), 0};
        tb_path_watch_req_encode(&op.r->fw, &rq);
    }
    return op_finish(&op, (void *)cb, data);
}

/* NULL is sent as ZooKeeper's null string: no such part. */
static struct tb_str str_or_null(const char *s)
{
    return s != NULL ? tb_str_c(s) : TB_STR_NULL;
}

int tb_reconfig(struct tb_client *c, const char *joining, const char *leaving,
                const char *members, int64_t from_config, tb_data_cb cb,
                void *data)
{
    struct op op;

    if (members != NULL && (joining != NULL || leaving != NULL))
        return TB_EBADARGUMENTS;
    if (op_start(&op, c, TB_OP_RECONFIG, R_DATA, NULL, 0) == 0) {
        struct tb_reconfig_req rq = {str_or_null(joining), str_or_null(leaving),
                                     str_or_null(members), from_config};
        tb_reconfig_req_encode(&op.r->fw, &rq);
    }
    return op_finish(&op, (void *)cb, data);
}

int tb_add_watch(struct tb_client *c, const char *path, int mode,
                 tb_watch_cb watch, void *wdata, tb_void_cb cb, void *data)
{
    struct op op;

    if (watch == NULL || (mode != TB_ADDWATCH_PERSISTENT &&
                          mode != TB_ADDWATCH_PERSISTENT_RECURSIVE))
        return TB_EBADARGUMENTS;
    if (op_start(&op, c, TB_OP_ADDWATCH, R_VOID, path, 0) == 0 &&
        op_watch(&op, watch, wdata) == 0) {
        struct tb_add_watch_req rq = {op.path, mode};
        op.r->w->set_kind = mode == TB_ADDWATCH_PERSISTENT ? WK_PERSISTENT
                                                           : WK_RECURSIVE;
        tb_add_watch_req_encode(&op.r->fw, &rq);
    }
    return op_finish(&op, (void *)cb, data);
}

int tb_add_auth(struct tb_client *c, const char *scheme, const void *cred,
                size_t len, tb_void_cb cb, void *data)
{
    struct auth *a;
    int rv;

    if (scheme == NULL || scheme[0] == '\0' || (cred == NULL && len != 0))
        return TB_EBADARGUMENTS;
    pthread_mutex_lock(&c->mu);
    if ((rv = tb__submit_check(c)) != 0)
        goto out;
    a = tb__calloc(1, sizeof *a);
    if (a == NULL) {
        rv = TB_ENOMEM;
        goto out;
    }
    a->scheme = tb__strndup(scheme, strlen(scheme));
    a->cred = tb__strndup(cred ? cred : "", len);
    a->len = len;
    if (cb != NULL && (a->waiter = tb__req_new(c, TB_OP_AUTH, R_VOID)))
        a->waiter->cb.v = cb, a->waiter->data = data;
    if (a->scheme == NULL || a->cred == NULL ||
        (cb != NULL && a->waiter == NULL)) {
        tb__free(a->scheme);
        tb__free(a->cred);
        tb__req_free(a->waiter);
        tb__free(a);
        rv = TB_ENOMEM;
        goto out;
    }
    tb_queue_insert_tail(&c->auths, &a->q);
    if (c->phase == PH_OPEN) {
        tb__send_auth(c, a);
        tb__flush(c);
    }
    tb__changed(c);
out:
    pthread_mutex_unlock(&c->mu);
    return rv;
}

/* Watchers of each wire class that `type` removes (bits of watch_kind). */
static int class_bits(int type)
{
    switch (type) {
    case TB_WATCHER_CHILDREN:
        return 1 << WK_CHILD;
    case TB_WATCHER_DATA:
        return 1 << WK_DATA;
    case TB_WATCHER_PERSISTENT:
        return 1 << WK_PERSISTENT;
    case TB_WATCHER_PERSISTENT_RECURSIVE:
        return 1 << WK_RECURSIVE;
    default:
        return -1;
    }
}

int tb_remove_watches(struct tb_client *c, const char *path, int type,
                      tb_watch_cb watch, void *wdata, int local,
                      tb_void_cb cb, void *data)
{
    struct op op;
    struct rm_spec probe = {type, watch, wdata, local, 0, 0};
    int n, others, persistent, wire = type;

    if (type < TB_WATCHER_CHILDREN || type > TB_WATCHER_PERSISTENT_RECURSIVE)
        return TB_EBADARGUMENTS;
    if (op_start(&op, c, TB_OP_REMOVEWATCHES, R_VOID, path, 0) != 0)
        return op_finish(&op, NULL, NULL);
    n = tb__watch_count(c, op.path, &probe, &others);
    if (n == 0) {
        op.rv = TB_ENOWATCHER;
        return op_finish(&op, NULL, NULL);
    }
    op.r->rm = tb__malloc(sizeof *op.r->rm + op.path.len + 1);
    if (op.r->rm == NULL) {
        op.rv = TB_ENOMEM;
        return op_finish(&op, NULL, NULL);
    }
    *op.r->rm = probe;
    op.r->rm->path_len = op.path.len;
    memcpy(op.r->rm->path, op.path.ptr, op.path.len);
    op.r->rm->path[op.path.len] = '\0';
    persistent = type == TB_WATCHER_PERSISTENT ||
                 type == TB_WATCHER_PERSISTENT_RECURSIVE;
    if ((others & class_bits(type)) || (persistent && others != 0)) {
        /* A local removal, in its turn (after the requests before it):
         * the server's watch still serves other local watchers, counting
         * those that requests before this one set; or 3.8 servers refuse
         * the persistent types (wire doc 6.16) and ANY would end the
         * other watches there too, so the server's events for this one
         * find no watcher here, and a reconnect does not set it again. */
        op.r->cb.v = cb;
        op.r->data = data;
        op.r->rm->quiet = 1;
        tb__req_after(c, op.r);
        op.r = NULL;
        return op_finish(&op, NULL, NULL);
    }
    if (persistent) /* nothing else is watched there: ANY does the same */
        wire = TB_WATCHER_ANY;
    {
        struct tb_watches_req rq = {op.path, wire};
        tb_watches_req_encode(&op.r->fw, &rq);
    }
    return op_finish(&op, (void *)cb, data);
}
