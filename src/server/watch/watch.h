/* The server's watch manager: which connection watches which path, and who
 * is told what when the tree changes.
 *
 * Watches are local to the server a client is connected to and are never
 * replicated, so this module only keeps tables; it does no I/O and reads no
 * clock.  The fsm reports each tree change as (event type, path) and
 * watch_trigger() hands every watcher that must hear of it to a callback,
 * which queues the notification frame on the connection.
 *
 * Tables follow ZooKeeper (wire protocol doc §10.3, §10.5):
 *
 *   kind            set by                  fires on (C/D/DC/CC = NodeCreated,
 *                                           NodeDeleted, NodeDataChanged,
 *                                           NodeChildrenChanged)
 *   DATA            getData; exists, also   C, D, DC of the path
 *                   on a missing node
 *   CHILD           getChildren(2)          D, CC of the path
 *   PERSISTENT      addWatch mode 0         C, D, DC, CC of the path
 *   PERSISTENT_     addWatch mode 1         C, D, DC of the path and of every
 *   RECURSIVE                               descendant; never CC
 *
 * DATA and CHILD entries are one-shot: they are removed as they fire.  The
 * persistent kinds stay until removed.  One watcher holds at most one entry
 * per (path, kind), and gets at most one event per trigger whatever number
 * of its entries match.
 *
 * A watcher is a struct watch_owner that the server embeds in its
 * connection; the callbacks hand it back and the server recovers its
 * connection with TB_CONTAINER_OF.  The owner links every entry it holds,
 * so dropping a closed connection's watches costs what it holds.
 *
 * Costs: a trigger does one hash lookup for the path, plus one per ancestor
 * when any recursive watch exists, plus the entries that fire; it never
 * allocates, and returns at once when nothing is watched.  Add, remove and
 * check are O(1) expected.  Not thread-safe: one loop thread owns it. */
#ifndef TB_WATCH_H
#define TB_WATCH_H

#include <stddef.h>
#include <stdint.h>

#include "common/common.h"
#include "proto/proto.h"

enum watch_kind {
    WATCH_DATA = 0,
    WATCH_CHILD = 1,
    WATCH_PERSISTENT = 2,
    WATCH_PERSISTENT_RECURSIVE = 3,
};
#define WATCH_NKINDS 4
/* Kind sets, as passed to the iteration callbacks. */
#define WATCH_BIT(kind) (1u << (kind))

/* A watcher, embedded in the server's connection.  Fields are private.
 * At all times: `entries` links the `count` entries the owner holds, and
 * the entries of one path are adjacent in it; `mgr_link` is in the
 * manager's owner list iff count > 0; `fire_link` is linked only while a
 * trigger is delivering to this owner. */
struct watch_owner {
    struct tb_queue entries;
    struct tb_queue mgr_link;
    struct tb_queue fire_link;
    uint64_t stamp; /* the last trigger or walk that counted this owner */
    size_t count;
};

/* Intrusive chained hash table, private to watch.c. */
struct watch__hlink {
    struct watch__hlink *next;
    uint64_t hash;
};
struct watch__htab {
    struct watch__hlink **buckets; /* NULL while empty */
    size_t mask;                   /* bucket count - 1 */
    size_t n;
};

/* The manager.  Fields are private; read them through the functions.
 * At all times: nwatches = sum of nkind = entries.n; every path in `paths`
 * has at least one entry; nowners = length of owner_list. */
struct watch_mgr {
    struct watch__htab paths;   /* path nodes by name */
    struct watch__htab entries; /* entries by (path node, owner, kind) */
    struct tb_queue path_list;  /* path nodes, in creation order */
    struct tb_queue owner_list; /* owners holding entries, first one first */
    uint64_t seed;
    uint64_t stamp;
    size_t nwatches;
    size_t nowners;
    size_t nkind[WATCH_NKINDS];
    int delivering;
};

/* `seed` perturbs the path hash so that paths colliding on one server do
 * not collide on every server; pass a random value.  Allocates nothing. */
void watch_mgr_init(struct watch_mgr *m, uint64_t seed);
/* Drops every watch and leaves every owner empty (still initialized). */
void watch_mgr_close(struct watch_mgr *m);

/* Before first use.  An owner belongs to one manager. */
void watch_owner_init(struct watch_owner *w);

/* Registers a watch on an absolute path ("/" or "/a/b"); the node need not
 * exist.  Registering an existing (path, kind) again is a no-op.
 * Returns 0, TB_ENOMEM or TB_EINVAL (bad kind or path). */
int watch_add(struct watch_mgr *m, enum watch_kind kind, struct tb_str path,
              struct watch_owner *w);

/* removeWatches: drops the owner's watches on `path` selected by a
 * ZooKeeper WatcherType: 1 Children -> the child watch; 2 Data -> the
 * data/exists watch; 3 Any -> all of them including the persistent ones
 * (as 3.8); 4 Persistent and 5 PersistentRecursive -> that kind only (3.9;
 * a server copying 3.8 answers MarshallingError before calling).
 * Returns 0 if anything was dropped, TB_ENOWATCHER if nothing matched,
 * TB_EINVAL for another type or a bad path. */
int watch_remove(struct watch_mgr *m, struct tb_str path, struct watch_owner *w,
                 enum tb_watcher_type type);
/* checkWatches: as watch_remove, but removes nothing. */
int watch_check(const struct watch_mgr *m, struct tb_str path,
                const struct watch_owner *w, enum tb_watcher_type type);
/* Drops everything `w` holds (its connection closed); costs O(what it
 * holds).  Call it before freeing the owner.  Safe from a deliver
 * callback: a pending delivery to `w` is then cancelled.  Returns the number
 * of entries dropped. */
size_t watch_remove_watcher(struct watch_mgr *m, struct watch_owner *w);

/* Called once per watcher notified.  `path` is the trigger's path,
 * borrowed.  The callback may add and remove watches and call
 * watch_remove_watcher (on any owner); it must not call watch_trigger or
 * watch_mgr_close. */
typedef void (*watch_deliver_fn)(void *arg, struct watch_owner *w,
                                 enum tb_event_type type, struct tb_str path);

/* Reports one tree change: type is NodeCreated, NodeDeleted,
 * NodeDataChanged or NodeChildrenChanged, path the node concerned.  The
 * caller reports each change separately as ZooKeeper does: creating /a/b is
 * (NodeCreated, /a/b) then (NodeChildrenChanged, /a); deleting it is
 * (NodeDeleted, /a/b) then (NodeChildrenChanged, /a).
 *
 * Matches: at `path`, its data table (Created, DataChanged, Deleted), its
 * child table (ChildrenChanged, Deleted), its persistent watches (all) and
 * its recursive watches (all but ChildrenChanged); at each strict ancestor,
 * its recursive watches (all but ChildrenChanged).  Matched one-shot entries
 * are removed before any delivery.  Each owner is delivered to once.
 *
 * Order: owners in the order they were first matched, scanning the path's
 * data, child, persistent and recursive tables (each in registration
 * order), then the ancestors' recursive tables from "/" down to the parent.
 * Returns the number of deliveries, or TB_EINVAL (bad type or path, or
 * called from a deliver callback). */
int watch_trigger(struct watch_mgr *m, enum tb_event_type type,
                  struct tb_str path, watch_deliver_fn deliver, void *arg);

/* Nonzero when at least one watch exists anywhere: lets callers skip
 * building trigger lists for a change nobody can see. */
static inline int watch_any(const struct watch_mgr *m)
{
    return m->nwatches != 0;
}

/* For wchs / mntr.  `watches` counts entries: one per (path, owner, kind);
 * `owners` the owners holding any; `paths` the distinct paths watched. */
struct watch_stats {
    size_t watches;
    size_t owners;
    size_t paths;
    size_t by_kind[WATCH_NKINDS];
};
void watch_get_stats(const struct watch_mgr *m, struct watch_stats *s);
/* Entries held by one owner. */
size_t watch_owner_count(const struct watch_owner *w);

/* Iteration for wchc / wchp.  A callback returning nonzero stops the walk,
 * and the walk returns that value; otherwise it returns 0.  Callbacks must
 * not change the manager.  `kinds` is a set of WATCH_BIT(). */
typedef int (*watch_owner_cb)(void *arg, struct watch_owner *w, unsigned kinds);
typedef int (*watch_path_cb)(void *arg, struct tb_str path, unsigned kinds);

/* Owners holding watches, in the order they first registered one; `kinds`
 * is the union of the kinds the owner holds anywhere. */
int watch_foreach_owner(const struct watch_mgr *m, watch_owner_cb cb,
                        void *arg);
/* Watched paths, in the order they were first watched; `kinds` is the union
 * over all owners. */
int watch_foreach_path(const struct watch_mgr *m, watch_path_cb cb, void *arg);
/* The distinct paths one owner watches, each once, with the kinds it
 * holds there; in the order the owner first watched them. */
int watch_owner_foreach_path(const struct watch_owner *w, watch_path_cb cb,
                             void *arg);
/* The distinct owners watching `path`, each once, with the kinds each
 * holds there.  Order: as watch_trigger would meet them for a delete. */
int watch_path_foreach_owner(struct watch_mgr *m, struct tb_str path,
                             watch_owner_cb cb, void *arg);

#endif
