/* The holders and waiters of one lock path, read from the tree
 * (locklist.c): what `tumbler locks` prints once and `tumbler top`
 * watches.
 *
 * Only reads, so it sees locks taken by any client that uses Curator's or
 * kazoo's layouts (recipes.h draws them); what each child is comes from
 * the library's one table (tb_lock_node_kind):
 *
 *   lock        PATH/_c_<uuid>-lock-<seq> (mutex), -__READ__<seq> /
 *               -__WRIT__<seq> (read-write), <hex>__lock__<seq> /
 *               __rlock__<seq> (kazoo): one queue in sequence order; a
 *               mutex, writer or kazoo lock holds if first, a reader while
 *               none of those is before it
 *   semaphore   PATH/leases/..-lease-<seq>: the first N leases hold (N is
 *               not stored: max_leases); PATH/locks/..-lock-<seq> queue
 *               for the right to take a lease
 *   election    PATH/_c_<uuid>-latch-<seq>           lowest seq leads
 *   non-fair    PATH itself, ephemeral, data "_c_<uuid>" then the owner's;
 *               waiters only watch it, unseen
 *
 * For each node: its session (ephemeralOwner), its fencing token (czxid:
 * the token its owner gets, or got, on acquiring), since when it exists
 * (ctime: the time it joined the queue), and its data (by default the
 * owner's HOST:PID). */
#ifndef TB_CLI_LOCKLIST_H
#define TB_CLI_LOCKLIST_H

#include <tumbler/recipes.h>

enum ll_layout { LL_NONE, LL_LOCK, LL_SEM, LL_ELECT, LL_NONFAIR, LL_FOREIGN };

struct ll_entry {
    char *rel; /* name under PATH ("leases/_c_..."; "." for PATH itself) */
    int kind;  /* enum tb_lock_node */
    int64_t seq;
    int holds;
    struct tb_stat st;
    char *data; /* tb_free */
    size_t len;
};

/* Set `path` (and `max_leases`, 0: unknown) in a zeroed listing, then
 * ll_collect.  At all times: v[0..n) are the queue's nodes in queue order
 * (leases first), other[0..nother) the names of PATH's children that are
 * not the layout's (owned). */
struct ll_listing {
    const char *path;
    int max_leases;
    int layout; /* enum ll_layout */
    struct ll_entry *v;
    int n, cap;
    char **other;
    int nother;
    int reads; /* requests sent to read it (tumbler top counts its own) */
};

/* Reads the lock at l->path: 0 or a TB_E* code.  A PATH that does not
 * exist is layout none (containers vanish once free). */
int ll_collect(struct tb_client *c, struct ll_listing *l);
/* The same once PATH's children and stat are read (a walk has them). */
int ll_collect_from(struct tb_client *c, struct ll_listing *l,
                    const struct tb_strings *ch, const struct tb_stat *st);
void ll_free(struct ll_listing *l);

/* "mutex", "read-write", "kazoo", a mix ("mutex+read-write"), "semaphore",
 * "election", "non-fair", "none" or "foreign". */
const char *ll_layout_name(const struct ll_listing *l, char *buf, size_t cap);
/* The KIND column: "lock", "write", "read", "kz-lock" ... */
const char *ll_kind_name(int kind);
/* How many of the nodes hold. */
int ll_holding(const struct ll_listing *l);
/* The owner in a node's data (by default HOST:PID): the non-fair layout's
 * "_c_<uuid>-" in front is an id, left out.  *p NULL: no data. */
void ll_owner(const struct ll_listing *l, const struct ll_entry *e,
              const char **p, size_t *n);

#endif
