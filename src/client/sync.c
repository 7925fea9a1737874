/* The synchronous forms: the asynchronous call, then a wait (driver.c)
 * until its callback, which copies the borrowed results into memory the
 * caller owns (one allocation per result, freed with tb_free and
 * friends). */
#include <stdio.h>

#include "client/client.h"

struct sync {
    int done, rc;
    char *path_out;
    size_t cap;
    struct tb_stat *stat;
    char **value;
    size_t *len;
    struct tb_strings *strings;
    struct tb_acl_list *acl;
    int32_t *count;
    struct tb_multi_results *multi;
};

static void finish(struct tb_client *c, struct sync *s, int rc)
{
    pthread_mutex_lock(&c->mu);
    s->rc = rc;
    s->done = 1;
    pthread_cond_broadcast(&c->done_cv);
    pthread_mutex_unlock(&c->mu);
}

static int is_done(struct tb_client *c, void *arg)
{
    (void)c;
    return ((struct sync *)arg)->done;
}

static void sync_enter(struct tb_client *c)
{
    pthread_mutex_lock(&c->mu);
    c->sync_waiters++;
    pthread_mutex_unlock(&c->mu);
}

/* The wait for `call`'s callback (rv: what the call returned). */
static int sync_wait(struct tb_client *c, struct sync *s, int rv)
{
    pthread_mutex_lock(&c->mu);
    if (rv == 0)
        tb__wait(c, is_done, s, -1);
    tb__sync_leave(c);
    return rv != 0 ? rv : s->rc;
}

/* A synchronous form: the caller counts as a sync waiter from before
 * `call` submits, since a close on another thread frees the handle once
 * no sync waiter is left, and must not between the submit and the wait. */
#define SYNC(c, s, call) (sync_enter(c), sync_wait((c), (s), (call)))

static void set_stat(struct sync *s, const struct tb_stat *st)
{
    if (s->stat != NULL && st != NULL)
        *s->stat = *st;
}

/* One block: the pointer array, then the strings. */
static int copy_strings(const char *const *v, int32_t n, const char *const *v2,
                        const char *sep, struct tb_strings *out)
{
    size_t size = (size_t)(n > 0 ? n : 1) * sizeof(char *), off;
    char *p;
    int32_t i;

    for (i = 0; i < n; i++)
        size += strlen(v[i]) + 1 + (v2 ? strlen(sep) + strlen(v2[i]) : 0);
    out->v = tb__malloc(size);
    if (out->v == NULL)
        return TB_ENOMEM;
    p = (char *)out->v;
    off = (size_t)(n > 0 ? n : 1) * sizeof(char *);
    for (i = 0; i < n; i++) {
        out->v[i] = p + off;
        off += (size_t)sprintf(p + off, "%s%s%s", v[i], v2 ? sep : "",
                               v2 ? v2[i] : "") +
               1;
    }
    out->count = n;
    return 0;
}

static void void_cb(struct tb_client *c, int rc, void *data)
{
    finish(c, data, rc);
}

static void stat_cb(struct tb_client *c, int rc, const struct tb_stat *st,
                    void *data)
{
    set_stat(data, st);
    finish(c, data, rc);
}

static void create_cb(struct tb_client *c, int rc, const char *path,
                      const struct tb_stat *st, void *data)
{
    struct sync *s = data;

    set_stat(s, st);
    if (rc == 0 && s->path_out != NULL && s->cap > 0) {
        size_t n = strlen(path);
        if (n >= s->cap)
            n = s->cap - 1;
        memcpy(s->path_out, path, n);
        s->path_out[n] = '\0';
    }
    finish(c, s, rc);
}

static void data_cb(struct tb_client *c, int rc, const void *value,
                    size_t len, const struct tb_stat *st, void *data)
{
    struct sync *s = data;

    set_stat(s, st);
    if (rc == 0 && s->value != NULL) {
        *s->value = NULL;
        if (value != NULL && (*s->value = tb__strndup(value, len)) == NULL)
            rc = TB_ENOMEM;
    }
    if (rc == 0 && s->len != NULL)
        *s->len = len;
    finish(c, s, rc);
}

static void strings_cb(struct tb_client *c, int rc, const struct tb_strings *v,
                       const struct tb_stat *st, void *data)
{
    struct sync *s = data;

    set_stat(s, st);
    if (rc == 0 && s->strings != NULL)
        rc = copy_strings((const char *const *)v->v, v->count, NULL, NULL,
                          s->strings);
    finish(c, s, rc);
}

static void acl_cb(struct tb_client *c, int rc, const struct tb_acl_list *a,
                   const struct tb_stat *st, void *data)
{
    struct sync *s = data;
    size_t size, off;
    struct tb_acl_entry *e;
    char *p;
    int32_t i;

    set_stat(s, st);
    if (rc == 0 && s->acl != NULL) {
        size = (size_t)(a->count > 0 ? a->count : 1) * sizeof *e;
        for (i = 0; i < a->count; i++)
            size += strlen(a->v[i].scheme) + strlen(a->v[i].id) + 2;
        e = tb__malloc(size);
        if (e == NULL) {
            rc = TB_ENOMEM;
        } else {
            p = (char *)e;
            off = (size_t)(a->count > 0 ? a->count : 1) * sizeof *e;
            for (i = 0; i < a->count; i++) {
                e[i].perms = a->v[i].perms;
                e[i].scheme = strcpy(p + off, a->v[i].scheme);
                off += strlen(a->v[i].scheme) + 1;
                e[i].id = strcpy(p + off, a->v[i].id);
                off += strlen(a->v[i].id) + 1;
            }
            s->acl->v = e;
            s->acl->count = a->count;
        }
    }
    finish(c, s, rc);
}

static void count_cb(struct tb_client *c, int rc, int32_t n, void *data)
{
    struct sync *s = data;

    if (rc == 0 && s->count != NULL)
        *s->count = n;
    finish(c, s, rc);
}

static void whoami_cb(struct tb_client *c, int rc,
                      const struct tb_client_info *v, int32_t n, void *data)
{
    struct sync *s = data;
    const char **a = NULL, **b = NULL;
    int32_t i;

    if (rc == 0 && s->strings != NULL) {
        a = tb__calloc((size_t)(n > 0 ? n : 1), sizeof *a);
        b = tb__calloc((size_t)(n > 0 ? n : 1), sizeof *b);
        if (a == NULL || b == NULL) {
            rc = TB_ENOMEM;
        } else {
            for (i = 0; i < n; i++) {
                a[i] = v[i].scheme;
                b[i] = v[i].user;
            }
            rc = copy_strings(a, n, b, ":", s->strings);
        }
    }
    tb__free(a);
    tb__free(b);
    finish(c, s, rc);
}

int tb_create_sync(struct tb_client *c, const char *path, const void *value,
                   size_t len, const struct tb_acl_list *acl, int mode,
                   int64_t ttl_ms, char *path_out, size_t cap,
                   struct tb_stat *stat)
{
    struct sync s = {0};

    s.path_out = path_out;
    s.cap = cap;
    s.stat = stat;
    return SYNC(
        c, &s,
        tb_create(c, path, value, len, acl, mode, ttl_ms, create_cb, &s));
}

int tb_delete_sync(struct tb_client *c, const char *path, int32_t version)
{
    struct sync s = {0};

    return SYNC(c, &s, tb_delete(c, path, version, void_cb, &s));
}

int tb_exists_sync(struct tb_client *c, const char *path, tb_watch_cb watch,
                   void *wdata, struct tb_stat *stat)
{
    struct sync s = {0};

    s.stat = stat;
    return SYNC(c, &s, tb_exists(c, path, watch, wdata, stat_cb, &s));
}

int tb_get_data_sync(struct tb_client *c, const char *path, tb_watch_cb watch,
                     void *wdata, char **value, size_t *len,
                     struct tb_stat *stat)
{
    struct sync s = {0};

    s.value = value;
    s.len = len;
    s.stat = stat;
    return SYNC(c, &s, tb_get_data(c, path, watch, wdata, data_cb, &s));
}

int tb_set_data_sync(struct tb_client *c, const char *path, const void *value,
                     size_t len, int32_t version, struct tb_stat *stat)
{
    struct sync s = {0};

    s.stat = stat;
    return SYNC(c, &s, tb_set_data(c, path, value, len, version, stat_cb, &s));
}

int tb_get_children_sync(struct tb_client *c, const char *path,
                         tb_watch_cb watch, void *wdata,
                         struct tb_strings *out)
{
    struct sync s = {0};

    s.strings = out;
    return SYNC(c, &s, tb_get_children(c, path, watch, wdata, strings_cb, &s));
}

int tb_get_children2_sync(struct tb_client *c, const char *path,
                          tb_watch_cb watch, void *wdata,
                          struct tb_strings *out, struct tb_stat *stat)
{
    struct sync s = {0};

    s.strings = out;
    s.stat = stat;
    return SYNC(c, &s, tb_get_children2(c, path, watch, wdata, strings_cb, &s));
}

int tb_sync_sync(struct tb_client *c, const char *path)
{
    struct sync s = {0};

    return SYNC(c, &s, tb_sync(c, path, void_cb, &s));
}

int tb_get_acl_sync(struct tb_client *c, const char *path,
                    struct tb_acl_list *out, struct tb_stat *stat)
{
    struct sync s = {0};

    s.acl = out;
    s.stat = stat;
    return SYNC(c, &s, tb_get_acl(c, path, acl_cb, &s));
}

int tb_set_acl_sync(struct tb_client *c, const char *path,
                    const struct tb_acl_list *acl, int32_t version,
                    struct tb_stat *stat)
{
    struct sync s = {0};

    s.stat = stat;
    return SYNC(c, &s, tb_set_acl(c, path, acl, version, stat_cb, &s));
}

int tb_add_auth_sync(struct tb_client *c, const char *scheme,
                     const void *cred, size_t len)
{
    struct sync s = {0};

    return SYNC(c, &s, tb_add_auth(c, scheme, cred, len, void_cb, &s));
}

int tb_add_watch_sync(struct tb_client *c, const char *path, int mode,
                      tb_watch_cb watch, void *wdata)
{
    struct sync s = {0};

    return SYNC(c, &s, tb_add_watch(c, path, mode, watch, wdata, void_cb, &s));
}

int tb_remove_watches_sync(struct tb_client *c, const char *path, int type,
                           tb_watch_cb watch, void *wdata, int local)
{
    struct sync s = {0};

    return SYNC(
        c, &s,
        tb_remove_watches(c, path, type, watch, wdata, local, void_cb, &s));
}

int tb_get_ephemerals_sync(struct tb_client *c, const char *prefix,
                           struct tb_strings *out)
{
    struct sync s = {0};

    s.strings = out;
    return SYNC(c, &s, tb_get_ephemerals(c, prefix, strings_cb, &s));
}

int tb_get_all_children_number_sync(struct tb_client *c, const char *path,
                                    int32_t *count)
{
    struct sync s = {0};

    s.count = count;
    return SYNC(c, &s, tb_get_all_children_number(c, path, count_cb, &s));
}

int tb_whoami_sync(struct tb_client *c, struct tb_strings *out)
{
    struct sync s = {0};

    s.strings = out;
    return SYNC(c, &s, tb_whoami(c, whoami_cb, &s));
}

int tb_get_config_sync(struct tb_client *c, char **value, size_t *len,
                       struct tb_stat *stat)
{
    struct sync s = {0};

    s.value = value;
    s.len = len;
    s.stat = stat;
    return SYNC(c, &s, tb_get_config(c, data_cb, &s));
}

int tb_reconfig_sync(struct tb_client *c, const char *joining,
                     const char *leaving, const char *members,
                     int64_t from_config, char **value, size_t *len,
                     struct tb_stat *stat)
{
    struct sync s = {0};

    s.value = value;
    s.len = len;
    s.stat = stat;
    return SYNC(
        c, &s,
        tb_reconfig(c, joining, leaving, members, from_config, data_cb, &s));
}

/* ---- multi: one block holding results, stats, lists and bytes ---- */

static size_t multi_size(const struct tb_op_result *v, int n)
{
    size_t size = (size_t)(n > 0 ? n : 1) * sizeof *v;
    int i, k;

    for (i = 0; i < n; i++) {
        size += sizeof(struct tb_stat) + sizeof(struct tb_strings);
        if (v[i].path)
            size += strlen(v[i].path) + 1;
        size += v[i].len + 1;
        if (v[i].children) {
            size += (size_t)v[i].children->count * sizeof(char *);
            for (k = 0; k < v[i].children->count; k++)
                size += strlen(v[i].children->v[k]) + 1;
        }
    }
    return size + 16;
}

static void multi_copy(const struct tb_op_result *v, int n, char *blk)
{
    struct tb_op_result *out = (struct tb_op_result *)(void *)blk;
    struct tb_stat *stats = (struct tb_stat *)(void *)(out + (n > 0 ? n : 1));
    struct tb_strings *lists = (struct tb_strings *)(void *)(stats + n);
    char **ptrs = (char **)(void *)(lists + n);
    char *bytes;
    int i, k, np = 0;

    for (i = 0; i < n; i++)
        np += v[i].children ? v[i].children->count : 0;
    bytes = (char *)(ptrs + np);
    for (i = 0; i < n; i++) {
        out[i] = v[i];
        if (v[i].stat) {
            stats[i] = *v[i].stat;
            out[i].stat = &stats[i];
        }
        if (v[i].path) {
            out[i].path = strcpy(bytes, v[i].path);
            bytes += strlen(v[i].path) + 1;
        }
        if (v[i].value) {
            memcpy(bytes, v[i].value, v[i].len);
            bytes[v[i].len] = '\0';
            out[i].value = bytes;
            bytes += v[i].len + 1;
        }
        if (v[i].children) {
            lists[i].count = v[i].children->count;
            lists[i].v = ptrs;
            for (k = 0; k < lists[i].count; k++) {
                *ptrs++ = strcpy(bytes, v[i].children->v[k]);
                bytes += strlen(v[i].children->v[k]) + 1;
            }
            out[i].children = &lists[i];
        }
    }
}

static void multi_cb(struct tb_client *c, int rc,
                     const struct tb_op_result *v, int n, void *data)
{
    struct sync *s = data;
    char *blk;

    if (v != NULL && s->multi != NULL) {
        blk = tb__malloc(multi_size(v, n));
        if (blk == NULL) {
            rc = TB_ENOMEM;
        } else {
            multi_copy(v, n, blk);
            s->multi->v = (struct tb_op_result *)(void *)blk;
            s->multi->count = n;
        }
    }
    finish(c, s, rc);
}

int tb_multi_exec_sync(struct tb_client *c, const struct tb_multi *m,
                       struct tb_multi_results *out)
{
    struct sync s = {0};

    if (out != NULL) {
        out->v = NULL;
        out->count = 0;
    }
    s.multi = out;
    return SYNC(c, &s, tb_multi_exec(c, m, multi_cb, &s));
}

void tb_multi_results_free(struct tb_multi_results *r)
{
    if (r == NULL)
        return;
    tb__free(r->v);
    r->v = NULL;
    r->count = 0;
}
