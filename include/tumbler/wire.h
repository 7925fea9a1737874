/* ZooKeeper's wire constants and its Stat record: shared by the public
 * client API and the codec inside the server and the library, so every
 * value is written once. */
#ifndef TUMBLER_WIRE_H
#define TUMBLER_WIRE_H

#include <stdint.h>

enum tb_perm {
    TB_PERM_READ = 1,
    TB_PERM_WRITE = 2,
    TB_PERM_CREATE = 4,
    TB_PERM_DELETE = 8,
    TB_PERM_ADMIN = 16,
    TB_PERM_ALL = 31,
};

enum tb_create_mode {
    TB_PERSISTENT = 0,
    TB_EPHEMERAL = 1,
    TB_PERSISTENT_SEQUENTIAL = 2,
    TB_EPHEMERAL_SEQUENTIAL = 3,
    TB_CONTAINER = 4,
    TB_PERSISTENT_WITH_TTL = 5,
    TB_PERSISTENT_SEQUENTIAL_WITH_TTL = 6,
};

enum tb_event_type {
    TB_EVENT_NONE = -1,
    TB_EVENT_CREATED = 1,
    TB_EVENT_DELETED = 2,
    TB_EVENT_DATA_CHANGED = 3,
    TB_EVENT_CHILDREN_CHANGED = 4,
    TB_EVENT_DATA_WATCH_REMOVED = 5,
    TB_EVENT_CHILD_WATCH_REMOVED = 6,
    TB_EVENT_PERSISTENT_WATCH_REMOVED = 7,
};

enum tb_watcher_type {
    TB_WATCHER_CHILDREN = 1,
    TB_WATCHER_DATA = 2,
    TB_WATCHER_ANY = 3,
    TB_WATCHER_PERSISTENT = 4,
    TB_WATCHER_PERSISTENT_RECURSIVE = 5,
};

enum tb_add_watch_mode {
    TB_ADDWATCH_PERSISTENT = 0,
    TB_ADDWATCH_PERSISTENT_RECURSIVE = 1,
};

/* A node's metadata, as ZooKeeper's Stat. */
struct tb_stat {
    int64_t czxid;   /* zxid of the create */
    int64_t mzxid;   /* zxid of the last setData */
    int64_t ctime;   /* ms since the epoch */
    int64_t mtime;
    int32_t version; /* data version */
    int32_t cversion;
    int32_t aversion;
    int64_t ephemeral_owner; /* session id, or 0 */
    int32_t data_length;
    int32_t num_children;
    int64_t pzxid;
};

#endif
