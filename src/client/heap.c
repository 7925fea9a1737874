/* The allocator hook, the functions that free what sync calls return, the
 * well-known ACL lists, state and event names and the handle's log function.
 *
 * The hook is the library's only global: set once, before any other call
 * (C5), so reading it needs no lock. */
#include <stdio.h>
#include <stdlib.h>

#include "client/client.h"

static void *sys_malloc(void *data, size_t n)
{
    (void)data;
    return malloc(n);
}

static void sys_free(void *data, void *p)
{
    (void)data;
    free(p);
}

static struct tb_heap heap = {NULL, sys_malloc, sys_free};

void tb_heap_set(const struct tb_heap *h)
{
    if (h == NULL) {
        heap = (struct tb_heap){NULL, sys_malloc, sys_free};
        return;
    }
    heap = *h;
}

void *tb__malloc(size_t n)
{
    return heap.malloc(heap.data, n ? n : 1);
}

void *tb__calloc(size_t n, size_t size)
{
    void *p;

    if (size != 0 && n > SIZE_MAX / size)
        return NULL;
    p = tb__malloc(n * size);
    if (p != NULL)
        memset(p, 0, n * size);
    return p;
}

void tb__free(void *p)
{
    if (p != NULL)
        heap.free(heap.data, p);
}

void tb_free(void *p)
{
    tb__free(p);
}

char *tb__strndup(const char *s, size_t n)
{
    char *p = tb__malloc(n + 1);

    if (p == NULL)
        return NULL;
    if (n)
        memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

/* Sync results are one block each: the array and the strings after it. */
void tb_strings_free(struct tb_strings *s)
{
    if (s == NULL)
        return;
    tb__free(s->v);
    s->v = NULL;
    s->count = 0;
}

void tb_acl_list_free(struct tb_acl_list *a)
{
    if (a == NULL)
        return;
    tb__free((void *)a->v);
    a->v = NULL;
    a->count = 0;
}

static const struct tb_acl_entry open_entry = {TB_PERM_ALL, "world",
                                               "anyone"};
static const struct tb_acl_entry creator_entry = {TB_PERM_ALL, "auth", ""};
static const struct tb_acl_entry read_entry = {TB_PERM_READ, "world",
                                               "anyone"};
const struct tb_acl_list tb_open_acl_unsafe = {1, &open_entry};
const struct tb_acl_list tb_creator_all_acl = {1, &creator_entry};
const struct tb_acl_list tb_read_acl_unsafe = {1, &read_entry};

const char *tb_session_state_name(int state)
{
    switch (state) {
    case TB_SESSION_CONNECTING:
        return "connecting";
    case TB_SESSION_CONNECTED:
        return "connected";
    case TB_SESSION_READONLY:
        return "connected read-only";
    case TB_SESSION_SUSPENDED:
        return "suspended";
    case TB_SESSION_EXPIRED:
        return "expired";
    case TB_SESSION_AUTH_FAILED:
        return "auth failed";
    case TB_SESSION_CLOSED:
        return "closed";
    default:
        return "unknown";
    }
}

/* The names of ZooKeeper's Watcher.Event.EventType, which its clients
 * print and log, so that output reads the same whatever the client. */
const char *tb_event_name(int type)
{
    switch (type) {
    case TB_EVENT_NONE:
        return "None";
    case TB_EVENT_CREATED:
        return "NodeCreated";
    case TB_EVENT_DELETED:
        return "NodeDeleted";
    case TB_EVENT_DATA_CHANGED:
        return "NodeDataChanged";
    case TB_EVENT_CHILDREN_CHANGED:
        return "NodeChildrenChanged";
    case TB_EVENT_DATA_WATCH_REMOVED:
        return "DataWatchRemoved";
    case TB_EVENT_CHILD_WATCH_REMOVED:
        return "ChildWatchRemoved";
    case TB_EVENT_PERSISTENT_WATCH_REMOVED:
        return "PersistentWatchRemoved";
    default:
        return "unknown";
    }
}

void tb__log(struct tb_client *c, int level, const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    if (c->o.log_cb == NULL || level > c->o.log_level)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    c->o.log_cb(c->o.data, level, msg);
}
