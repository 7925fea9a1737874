/* Unit tests of the watch manager: ZooKeeper's trigger rules (wire protocol
 * doc §10.3, §10.5), removeWatches/checkWatches semantics (§6.16), cleanup
 * when a connection goes, the counts and walks behind wchs/wchc/wchp,
 * allocation failures, and that trigger cost does not grow with the number
 * of watches held elsewhere.
 *
 * The binary is linked with --wrap=malloc,--wrap=calloc so tests can fail
 * the Nth allocation and count the allocations a trigger makes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cmocka.h>

#include "server/watch/watch.h"

/* ---- allocation hooks ------------------------------------------------- */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);

static long n_allocs;
static long fail_in = -1; /* fail the allocation after this many; -1: never */

static int alloc_fails(void)
{
    n_allocs++;
    if (fail_in < 0)
        return 0;
    return fail_in-- == 0;
}

void *__wrap_malloc(size_t n)
{
    return alloc_fails() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
    return alloc_fails() ? NULL : __real_calloc(n, size);
}

/* ---- fixture ---------------------------------------------------------- */

#define NCONN   6
#define K_DATA  WATCH_DATA
#define K_CHILD WATCH_CHILD
#define K_PERS  WATCH_PERSISTENT
#define K_REC   WATCH_PERSISTENT_RECURSIVE

struct conn {
    int id;
    struct watch_owner w;
};

struct fx {
    struct watch_mgr m;
    struct conn c[NCONN];
    /* The trigger in progress: every delivery must carry it. */
    enum tb_event_type type;
    const char *path;
    char log[256]; /* ids of the connections delivered to, space-separated */
    void (*hook)(struct fx *f, struct conn *c);
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    watch_mgr_init(&f->m, 0x5eedULL);
    for (int i = 0; i < NCONN; i++) {
        f->c[i].id = i;
        watch_owner_init(&f->c[i].w);
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    struct watch_stats s;

    fail_in = -1;
    watch_mgr_close(&f->m);
    watch_get_stats(&f->m, &s);
    assert_int_equal(s.watches, 0);
    for (int i = 0; i < NCONN; i++)
        assert_int_equal(watch_owner_count(&f->c[i].w), 0);
    free(f);
    return 0;
}

static void deliver(void *arg, struct watch_owner *w, enum tb_event_type type,
                    struct tb_str path)
{
    struct fx *f = arg;
    struct conn *c = TB_CONTAINER_OF(w, struct conn, w);
    size_t used = strlen(f->log);

    assert_int_equal(type, f->type);
    assert_true(tb_str_eq(path, tb_str_c(f->path)));
    (void)snprintf(f->log + used, sizeof(f->log) - used, "%s%d",
                   used ? " " : "", c->id);
    if (f->hook != NULL)
        f->hook(f, c);
}

static void add(struct fx *f, int conn, enum watch_kind kind, const char *path)
{
    assert_int_equal(watch_add(&f->m, kind, tb_str_c(path), &f->c[conn].w), 0);
}

/* Triggers one change; returns the connections told, in delivery order. */
static const char *fire(struct fx *f, enum tb_event_type type, const char *path)
{
    int n;

    f->type = type;
    f->path = path;
    f->log[0] = '\0';
    n = watch_trigger(&f->m, type, tb_str_c(path), deliver, f);
    assert_true(n >= 0);
    /* One delivery per listed id. */
    int ids = 0;
    for (const char *p = f->log; *p; p++)
        ids += (p == f->log || p[-1] == ' ');
    assert_int_equal(n, ids);
    return f->log;
}

static struct watch_stats stats(struct fx *f)
{
    struct watch_stats s;
    watch_get_stats(&f->m, &s);
    return s;
}

static int rm(struct fx *f, int conn, const char *path, int type)
{
    return watch_remove(&f->m, tb_str_c(path), &f->c[conn].w,
                        (enum tb_watcher_type)type);
}

static int chk(struct fx *f, int conn, const char *path, int type)
{
    return watch_check(&f->m, tb_str_c(path), &f->c[conn].w,
                       (enum tb_watcher_type)type);
}

/* ---- standard watches (§10.3) ----------------------------------------- */

static void test_data_watch_is_one_shot(void **state)
{
    struct fx *f = *state;

    add(f, 0, K_DATA, "/a");
    assert_true(watch_any(&f->m));
    assert_string_equal(fire(f, TB_EVENT_DATA_CHANGED, "/a"), "0");
    assert_string_equal(fire(f, TB_EVENT_DATA_CHANGED, "/a"), "");
    assert_false(watch_any(&f->m));
    assert_int_equal(stats(f).paths, 0);
    assert_int_equal(stats(f).owners, 0);

    add(f, 0, K_DATA, "/a");
    assert_string_equal(fire(f, TB_EVENT_DELETED, "/a"), "0");
    assert_string_equal(fire(f, TB_EVENT_DELETED, "/a"), "");
}

static void test_exists_watch_on_missing_node(void **state)
{
    struct fx *f = *state;

    /* exists on a missing node registers a data-table watch. */
    add(f, 1, K_DATA, "/new");
    assert_string_equal(fire(f, TB_EVENT_CREATED, "/new"), "1");
    assert_string_equal(fire(f, TB_EVENT_CREATED, "/new"), "");
}

static void test_data_watch_scope(void **state)
{
    struct fx *f = *state;

    add(f, 0, K_DATA, "/a");
    assert_string_equal(fire(f, TB_EVENT_CHILDREN_CHANGED, "/a"), "");
    assert_string_equal(fire(f, TB_EVENT_DATA_CHANGED, "/a/b"), "");
    assert_string_equal(fire(f, TB_EVENT_CREATED, "/a/b"), "");
    assert_string_equal(fire(f, TB_EVENT_DATA_CHANGED, "/ab"), "");
    assert_string_equal(fire(f, TB_EVENT_DATA_CHANGED, "/"), "");
    assert_int_equal(stats(f).watches, 1);
    assert_string_equal(fire(f, TB_EVENT_CREATED, "/a"), "0");
}

static void test_child_watch(void **state)
{
    struct fx *f = *state;

    add(f, 0, K_CHILD, "/a");
    assert_string_equal(fire(f, TB_EVENT_DATA_CHANGED, "/a"), "");
    assert_string_equal(fire(f, TB_EVENT_CREATED, "/a"), "");
    assert_string_equal(fire(f, TB_EVENT_CHILDREN_CHANGED, "/a/x"), "");
    assert_string_equal(fire(f, TB_EVENT_CHILDREN_CHANGED, "/a"), "0");
    assert_string_equal(fire(f, TB_EVENT_CHILDREN_CHANGED, "/a"), "");

    add(f, 0, K_CHILD, "/a");
    assert_string_equal(fire(f, TB_EVENT_DELETED, "/a"), "0");
    assert_int_equal(stats(f).watches, 0);
}

static void test_delete_sends_one_event_per_watcher(void **state)
{
    struct fx *f = *state;

    add(f, 0, K_DATA, "/a");
    add(f, 0, K_CHILD, "/a");
    add(f, 1, K_CHILD, "/a");
    add(f, 2, K_DATA, "/a");
    /* Data table (0, 2), then child table (0 again, 1). */
    assert_string_equal(fire(f, TB_EVENT_DELETED, "/a"), "0 2 1");
    assert_int_equal(stats(f).watches, 0);
    assert_int_equal(stats(f).paths, 0);
    assert_string_equal(fire(f, TB_EVENT_DELETED, "/a"), "");
}

static void test_same_kind_twice_is_one_entry(void **state)
{
    struct fx *f = *state;

    add(f, 0, K_DATA, "/a");
    add(f, 0, K_DATA, "/a");
    add(f, 0, K_PERS, "/p");
    add(f, 0, K_PERS, "/p");
    assert_int_equal(stats(f).watches, 2);
    assert_int_equal(watch_owner_count(&f->c[0].w), 2);
    assert_string_equal(fire(f, TB_EVENT_DATA_CHANGED, "/a"), "0");
    assert_string_equal(fire(f, TB_EVENT_DATA_CHANGED, "/a"), "");
    assert_int_equal(stats(f).watches, 1);
}

static void test_change_report_sequence(void **state)
{
    struct fx *f = *state;

    /* create /a/b as the fsm reports it: the node, then its parent. */
    add(f, 0, K_DATA, "/a/b");
    add(f, 1, K_CHILD, "/a");
    add(f, 2, K_DATA, "/a");
    assert_string_equal(fire(f, TB_EVENT_CREATED, "/a/b"), "0");
    assert_string_equal(fire(f, TB_EVENT_CHILDREN_CHANGED, "/a"), "1");
    assert_int_equal(stats(f).watches, 1); /* 2's data watch on /a stays */
}

/* ---- persistent watches (§10.5) --------------------------------------- */

static void test_persistent_fires_and_stays(void **state)
{
    struct fx *f = *state;

    add(f, 0, K_PERS, "/w");
    assert_string_equal(fire(f, TB_EVENT_CREATED, "/w"), "0");
    assert_string_equal(fire(f, TB_EVENT_CHILDREN_CHANGED, "/w"), "0");
    assert_string_equal(fire(f, TB_EVENT_DATA_CHANGED, "/w"), "0");
    assert_string_equal(fire(f, TB_EVENT_DELETED, "/w"), "0");
    assert_string_equal(fire(f, TB_EVENT_CREATED, "/w"), "0");
    /* Not for descendants. */
    assert_string_equal(fire(f, TB_EVENT_CREATED, "/w/p1"), "");
    assert_string_equal(fire(f, TB_EVENT_DATA_CHANGED, "/w/p1"), "");
    assert_string_equal(fire(f, TB_EVENT_DELETED, "/w/p1"), "");
    assert_int_equal(stats(f).watches, 1);
    assert_int_equal(stats(f).by_kind[K_PERS], 1);
}

static void test_persistent_with_standard_one_event(void **state)
{
    struct fx *f = *state;

    add(f, 0, K_PERS, "/a");
    add(f, 0, K_DATA, "/a");
    add(f, 0, K_CHILD, "/a");
    assert_string_equal(fire(f, TB_EVENT_DATA_CHANGED, "/a"), "0");
    assert_int_equal(stats(f).by_kind[K_DATA], 0);
    assert_int_equal(stats(f).by_kind[K_CHILD], 1);
    assert_int_equal(stats(f).by_kind[K_PERS], 1);
    assert_string_equal(fire(f, TB_EVENT_DELETED, "/a"), "0");
    assert_int_equal(stats(f).by_kind[K_CHILD], 0);
    assert_int_equal(stats(f).watches, 1);
    assert_string_equal(fire(f, TB_EVENT_CHILDREN_CHANGED, "/a"), "0");
}

static void test_recursive_fires_for_subtree(void **state)
{
    struct fx *f = *state;

    add(f, 0, K_REC, "/r");
    assert_string_equal(fire(f, TB_EVENT_CREATED, "/r"), "0");
    assert_string_equal(fire(f, TB_EVENT_CREATED, "/r/a"), "0");
    assert_string_equal(fire(f, TB_EVENT_CREATED, "/r/a/b"), "0");
    assert_string_equal(fire(f, TB_EVENT_DATA_CHANGED, "/r/a/b"), "0");
    assert_string_equal(fire(f, TB_EVENT_DELETED, "/r/a/b"), "0");
    assert_string_equal(fire(f, TB_EVENT_DELETED, "/r"), "0");
    /* Never NodeChildrenChanged, at the path or below. */
    assert_string_equal(fire(f, TB_EVENT_CHILDREN_CHANGED, "/r"), "");
    assert_string_equal(fire(f, TB_EVENT_CHILDREN_CHANGED, "/r/a"), "");
    /* Ancestry is by path component, not by string prefix. */
    assert_string_equal(fire(f, TB_EVENT_CREATED, "/rx"), "");
    assert_string_equal(fire(f, TB_EVENT_CREATED, "/rx/a"), "");
    assert_string_equal(fire(f, TB_EVENT_DATA_CHANGED, "/"), "");
    assert_string_equal(fire(f, TB_EVENT_CREATED, "/other"), "");
    assert_int_equal(stats(f).watches, 1);
}

static void test_recursive_on_root(void **state)
{
    struct fx *f = *state;

    add(f, 3, K_REC, "/");
    assert_string_equal(fire(f, TB_EVENT_DATA_CHANGED, "/"), "3");
    assert_string_equal(fire(f, TB_EVENT_CREATED, "/x"), "3");
    assert_string_equal(fire(f, TB_EVENT_DELETED, "/x/y/z"), "3");
    assert_string_equal(fire(f, TB_EVENT_CHILDREN_CHANGED, "/"), "");
    assert_string_equal(fire(f, TB_EVENT_CHILDREN_CHANGED, "/x"), "");
}

static void test_recursive_ancestors_dedupe(void **state)
{
    struct fx *f = *state;

    add(f, 0, K_REC, "/");
    add(f, 0, K_REC, "/a");
    add(f, 0, K_REC, "/a/b");
    add(f, 1, K_REC, "/a/b");
    add(f, 0, K_DATA, "/a/b/c");
    assert_string_equal(fire(f, TB_EVENT_DATA_CHANGED, "/a/b/c"), "0 1");
    assert_int_equal(stats(f).by_kind[K_DATA], 0); /* consumed anyway */
    assert_string_equal(fire(f, TB_EVENT_DATA_CHANGED, "/a/b/c"), "0 1");
    assert_string_equal(fire(f, TB_EVENT_DATA_CHANGED, "/a"), "0");
    assert_int_equal(stats(f).watches, 4);
}

static void test_delivery_order(void **state)
{
    struct fx *f = *state;

    add(f, 3, K_REC, "/");
    add(f, 2, K_REC, "/a");
    add(f, 1, K_PERS, "/a/b");
    add(f, 4, K_CHILD, "/a/b");
    add(f, 5, K_DATA, "/a/b");
    add(f, 0, K_DATA, "/a/b");
    add(f, 4, K_REC, "/a/b");
    /* Path tables data, child, persistent, recursive; then "/" and "/a". */
    assert_string_equal(fire(f, TB_EVENT_DELETED, "/a/b"), "5 0 4 1 3 2");
    assert_string_equal(fire(f, TB_EVENT_CREATED, "/a/b"), "1 4 3 2");
}

/* ---- removeWatches / checkWatches (§6.16) ----------------------------- */

static void test_remove_by_type(void **state)
{
    struct fx *f = *state;

    add(f, 0, K_DATA, "/a");
    add(f, 0, K_CHILD, "/a");
    add(f, 0, K_PERS, "/a");
    add(f, 0, K_REC, "/a");
    assert_int_equal(rm(f, 0, "/a", TB_WATCHER_CHILDREN), 0);
    assert_int_equal(chk(f, 0, "/a", TB_WATCHER_CHILDREN), TB_ENOWATCHER);
    assert_int_equal(rm(f, 0, "/a", TB_WATCHER_CHILDREN), TB_ENOWATCHER);
    assert_int_equal(stats(f).watches, 3);
    assert_int_equal(rm(f, 0, "/a", TB_WATCHER_DATA), 0);
    assert_int_equal(rm(f, 0, "/a", TB_WATCHER_DATA), TB_ENOWATCHER);
    /* Children/Data leave the persistent kinds alone; Any takes them. */
    assert_int_equal(stats(f).watches, 2);
    assert_int_equal(chk(f, 0, "/a", TB_WATCHER_ANY), 0);
    assert_int_equal(rm(f, 0, "/a", TB_WATCHER_ANY), 0);
    assert_int_equal(stats(f).watches, 0);
    assert_int_equal(stats(f).paths, 0);
    assert_int_equal(rm(f, 0, "/a", TB_WATCHER_ANY), TB_ENOWATCHER);
    assert_int_equal(chk(f, 0, "/a", TB_WATCHER_ANY), TB_ENOWATCHER);
    assert_string_equal(fire(f, TB_EVENT_DELETED, "/a"), "");
}

static void test_remove_any_takes_both_standard(void **state)
{
    struct fx *f = *state;

    add(f, 0, K_DATA, "/a");
    add(f, 0, K_CHILD, "/a");
    add(f, 1, K_DATA, "/a");
    assert_int_equal(rm(f, 0, "/a", TB_WATCHER_ANY), 0);
    assert_int_equal(stats(f).watches, 1);
    assert_string_equal(fire(f, TB_EVENT_DELETED, "/a"), "1");
}

static void test_remove_nowatcher_cases(void **state)
{
    struct fx *f = *state;

    assert_int_equal(rm(f, 0, "/a", TB_WATCHER_ANY), TB_ENOWATCHER);
    add(f, 0, K_CHILD, "/a");
    add(f, 1, K_PERS, "/p");
    add(f, 1, K_REC, "/r");
    /* Wrong owner, wrong path, wrong table. */
    assert_int_equal(rm(f, 1, "/a", TB_WATCHER_ANY), TB_ENOWATCHER);
    assert_int_equal(rm(f, 0, "/b", TB_WATCHER_ANY), TB_ENOWATCHER);
    assert_int_equal(rm(f, 0, "/a/x", TB_WATCHER_ANY), TB_ENOWATCHER);
    assert_int_equal(rm(f, 0, "/a", TB_WATCHER_DATA), TB_ENOWATCHER);
    assert_int_equal(chk(f, 0, "/a", TB_WATCHER_DATA), TB_ENOWATCHER);
    assert_int_equal(rm(f, 1, "/p", TB_WATCHER_CHILDREN), TB_ENOWATCHER);
    assert_int_equal(rm(f, 1, "/p", TB_WATCHER_DATA), TB_ENOWATCHER);
    assert_int_equal(rm(f, 1, "/r", TB_WATCHER_DATA), TB_ENOWATCHER);
    /* A recursive watch on /r is not a watch on /r/x. */
    assert_int_equal(chk(f, 1, "/r/x", TB_WATCHER_ANY), TB_ENOWATCHER);
    assert_int_equal(stats(f).watches, 3);
    assert_string_equal(fire(f, TB_EVENT_CHILDREN_CHANGED, "/a"), "0");
}

static void test_remove_persistent_types(void **state)
{
    struct fx *f = *state;

    add(f, 0, K_PERS, "/a");
    add(f, 0, K_REC, "/a");
    assert_int_equal(chk(f, 0, "/a", TB_WATCHER_PERSISTENT), 0);
    assert_int_equal(rm(f, 0, "/a", TB_WATCHER_PERSISTENT), 0);
    assert_int_equal(rm(f, 0, "/a", TB_WATCHER_PERSISTENT), TB_ENOWATCHER);
    assert_int_equal(chk(f, 0, "/a", TB_WATCHER_PERSISTENT_RECURSIVE), 0);
    assert_string_equal(fire(f, TB_EVENT_CREATED, "/a/b"), "0");
    assert_int_equal(rm(f, 0, "/a", TB_WATCHER_PERSISTENT_RECURSIVE), 0);
    assert_string_equal(fire(f, TB_EVENT_CREATED, "/a/b"), "");
    assert_int_equal(stats(f).paths, 0);
}

static void test_check_removes_nothing(void **state)
{
    struct fx *f = *state;

    add(f, 0, K_DATA, "/a");
    add(f, 0, K_CHILD, "/b");
    for (int i = 0; i < 3; i++) {
        assert_int_equal(chk(f, 0, "/a", TB_WATCHER_DATA), 0);
        assert_int_equal(chk(f, 0, "/a", TB_WATCHER_ANY), 0);
        assert_int_equal(chk(f, 0, "/b", TB_WATCHER_CHILDREN), 0);
    }
    assert_int_equal(stats(f).watches, 2);
    assert_string_equal(fire(f, TB_EVENT_DATA_CHANGED, "/a"), "0");
    assert_int_equal(chk(f, 0, "/a", TB_WATCHER_DATA), TB_ENOWATCHER);
}

static void test_invalid_arguments(void **state)
{
    struct fx *f = *state;
    struct watch_owner *w = &f->c[0].w;

    add(f, 0, K_DATA, "/a");
    assert_int_equal(rm(f, 0, "/a", 0), TB_EINVAL);
    assert_int_equal(rm(f, 0, "/a", 6), TB_EINVAL);
    assert_int_equal(chk(f, 0, "/a", -1), TB_EINVAL);
    assert_int_equal(rm(f, 0, "", TB_WATCHER_ANY), TB_EINVAL);
    assert_int_equal(rm(f, 0, "a", TB_WATCHER_ANY), TB_EINVAL);
    assert_int_equal(watch_add(&f->m, (enum watch_kind)4, TB_STR("/a"), w),
                     TB_EINVAL);
    assert_int_equal(watch_add(&f->m, K_DATA, TB_STR_NULL, w), TB_EINVAL);
    assert_int_equal(watch_add(&f->m, K_DATA, TB_STR("x/y"), w), TB_EINVAL);
    assert_int_equal(
        watch_trigger(&f->m, TB_EVENT_NONE, TB_STR("/a"), deliver, f),
        TB_EINVAL);
    assert_int_equal(watch_trigger(&f->m, TB_EVENT_DATA_WATCH_REMOVED,
                                   TB_STR("/a"), deliver, f),
                     TB_EINVAL);
    assert_int_equal(
        watch_trigger(&f->m, TB_EVENT_CREATED, TB_STR(""), deliver, f),
        TB_EINVAL);
    assert_int_equal(stats(f).watches, 1);
}

/* ---- connection close ------------------------------------------------- */

static void test_remove_watcher(void **state)
{
    struct fx *f = *state;

    add(f, 0, K_DATA, "/a");
    add(f, 0, K_CHILD, "/a");
    add(f, 0, K_PERS, "/only0");
    add(f, 0, K_REC, "/");
    add(f, 1, K_DATA, "/a");
    add(f, 1, K_REC, "/r");
    assert_int_equal(stats(f).paths, 4);
    assert_int_equal(stats(f).owners, 2);

    assert_int_equal(watch_remove_watcher(&f->m, &f->c[0].w), 4);
    assert_int_equal(watch_owner_count(&f->c[0].w), 0);
    assert_int_equal(stats(f).watches, 2);
    assert_int_equal(stats(f).owners, 1);
    assert_int_equal(stats(f).paths, 2);
    assert_int_equal(stats(f).by_kind[K_REC], 1);
    assert_string_equal(fire(f, TB_EVENT_DELETED, "/a"), "1");
    assert_string_equal(fire(f, TB_EVENT_CREATED, "/only0"), "");
    assert_string_equal(fire(f, TB_EVENT_CREATED, "/r/x"), "1");
    assert_int_equal(watch_remove_watcher(&f->m, &f->c[0].w), 0);

    /* The owner is reusable. */
    add(f, 0, K_DATA, "/a");
    assert_string_equal(fire(f, TB_EVENT_DELETED, "/a"), "0");
}

static void test_many_watches_grow_and_shrink(void **state)
{
    struct fx *f = *state;
    char p[32];
    enum { N = 5000 };

    for (int i = 0; i < N; i++) {
        (void)snprintf(p, sizeof(p), "/n/%d", i);
        add(f, 0, K_DATA, p);
        add(f, 0, K_CHILD, p);
        if (i % 2)
            add(f, 1, K_DATA, p);
    }
    assert_int_equal(stats(f).watches, 2 * N + N / 2);
    assert_int_equal(stats(f).paths, N);
    assert_int_equal(watch_remove_watcher(&f->m, &f->c[0].w), 2 * N);
    assert_int_equal(stats(f).paths, N / 2);
    for (int i = 0; i < N; i++) {
        (void)snprintf(p, sizeof(p), "/n/%d", i);
        assert_string_equal(fire(f, TB_EVENT_DELETED, p), i % 2 ? "1" : "");
    }
    assert_false(watch_any(&f->m));
}

/* ---- callbacks that change the manager -------------------------------- */

static void hook_drop_conn1(struct fx *f, struct conn *c)
{
    if (c->id == 0)
        assert_int_equal(watch_remove_watcher(&f->m, &f->c[1].w), 1);
}

static void test_deliver_may_drop_pending_owner(void **state)
{
    struct fx *f = *state;

    add(f, 0, K_DATA, "/a");
    add(f, 1, K_PERS, "/a");
    add(f, 2, K_DATA, "/a");
    f->hook = hook_drop_conn1;
    assert_string_equal(fire(f, TB_EVENT_DATA_CHANGED, "/a"), "0 2");
    f->hook = NULL;
    assert_false(watch_any(&f->m));
}

static void hook_rearm(struct fx *f, struct conn *c)
{
    /* A client re-reading with watch=true while its event is delivered. */
    assert_int_equal(watch_add(&f->m, K_DATA, tb_str_c(f->path), &c->w), 0);
    assert_int_equal(watch_remove_watcher(&f->m, &f->c[5].w), 0);
}

static void test_deliver_may_rearm(void **state)
{
    struct fx *f = *state;

    add(f, 0, K_DATA, "/a");
    add(f, 1, K_DATA, "/a");
    f->hook = hook_rearm;
    assert_string_equal(fire(f, TB_EVENT_DATA_CHANGED, "/a"), "0 1");
    f->hook = NULL;
    assert_int_equal(stats(f).watches, 2);
    assert_string_equal(fire(f, TB_EVENT_DATA_CHANGED, "/a"), "0 1");
}

static void hook_drop_self(struct fx *f, struct conn *c)
{
    assert_int_equal(watch_remove_watcher(&f->m, &c->w), 1);
}

static void test_deliver_may_drop_itself(void **state)
{
    struct fx *f = *state;

    add(f, 0, K_REC, "/");
    add(f, 1, K_REC, "/");
    f->hook = hook_drop_self;
    assert_string_equal(fire(f, TB_EVENT_CREATED, "/z"), "0 1");
    f->hook = NULL;
    assert_false(watch_any(&f->m));
}

#ifdef NDEBUG
static void hook_nested(struct fx *f, struct conn *c)
{
    (void)c;
    assert_int_equal(
        watch_trigger(&f->m, TB_EVENT_CREATED, TB_STR("/b"), deliver, f),
        TB_EINVAL);
}

static void test_nested_trigger_refused(void **state)
{
    struct fx *f = *state;

    add(f, 0, K_DATA, "/a");
    add(f, 1, K_DATA, "/b");
    f->hook = hook_nested;
    assert_string_equal(fire(f, TB_EVENT_CREATED, "/a"), "0");
    f->hook = NULL;
    assert_int_equal(stats(f).watches, 1);
}
#endif

/* ---- counts and walks for wchs / wchc / wchp -------------------------- */

struct walk {
    char out[256];
    int stop_after; /* callback returns 7 at this call; 0: never */
    int calls;
};

static int walk_note(struct walk *wk, const char *name, unsigned kinds)
{
    size_t used = strlen(wk->out);
    (void)snprintf(wk->out + used, sizeof(wk->out) - used, "%s%s=%u",
                   used ? " " : "", name, kinds);
    return ++wk->calls == wk->stop_after ? 7 : 0;
}

static int on_path(void *arg, struct tb_str path, unsigned kinds)
{
    char name[64];
    (void)snprintf(name, sizeof(name), "%.*s", (int)path.len, path.ptr);
    return walk_note(arg, name, kinds);
}

static int on_owner(void *arg, struct watch_owner *w, unsigned kinds)
{
    char name[16];
    (void)snprintf(name, sizeof(name), "%d",
                   TB_CONTAINER_OF(w, struct conn, w)->id);
    return walk_note(arg, name, kinds);
}

static void test_stats_and_walks(void **state)
{
    struct fx *f = *state;
    struct walk wk = {0};
    struct watch_stats s;

    add(f, 0, K_DATA, "/a");
    add(f, 0, K_PERS, "/b");
    add(f, 1, K_DATA, "/b");
    add(f, 1, K_REC, "/c");
    add(f, 0, K_CHILD, "/a"); /* grouped with 0's /a entry */
    add(f, 0, K_DATA, "/c");
    watch_get_stats(&f->m, &s);
    assert_int_equal(s.watches, 6);
    assert_int_equal(s.owners, 2);
    assert_int_equal(s.paths, 3);
    assert_int_equal(s.by_kind[K_DATA], 3);
    assert_int_equal(s.by_kind[K_CHILD], 1);
    assert_int_equal(s.by_kind[K_PERS], 1);
    assert_int_equal(s.by_kind[K_REC], 1);

    /* kinds: data 1, child 2, persistent 4, recursive 8 */
    assert_int_equal(watch_owner_foreach_path(&f->c[0].w, on_path, &wk), 0);
    assert_string_equal(wk.out, "/a=3 /b=4 /c=1");
    wk = (struct walk){0};
    assert_int_equal(watch_owner_foreach_path(&f->c[1].w, on_path, &wk), 0);
    assert_string_equal(wk.out, "/b=1 /c=8");
    wk = (struct walk){0};
    assert_int_equal(watch_owner_foreach_path(&f->c[2].w, on_path, &wk), 0);
    assert_string_equal(wk.out, "");
    wk = (struct walk){0};
    assert_int_equal(watch_foreach_path(&f->m, on_path, &wk), 0);
    assert_string_equal(wk.out, "/a=3 /b=5 /c=9");
    wk = (struct walk){0};
    assert_int_equal(watch_foreach_owner(&f->m, on_owner, &wk), 0);
    assert_string_equal(wk.out, "0=7 1=9");
    wk = (struct walk){0};
    assert_int_equal(
        watch_path_foreach_owner(&f->m, TB_STR("/b"), on_owner, &wk), 0);
    assert_string_equal(wk.out, "1=1 0=4");
    wk = (struct walk){0};
    assert_int_equal(
        watch_path_foreach_owner(&f->m, TB_STR("/a"), on_owner, &wk), 0);
    assert_string_equal(wk.out, "0=3");
    wk = (struct walk){0};
    assert_int_equal(
        watch_path_foreach_owner(&f->m, TB_STR("/zz"), on_owner, &wk), 0);
    assert_string_equal(wk.out, "");

    /* A nonzero return stops the walk and is passed back. */
    wk = (struct walk){.stop_after = 1};
    assert_int_equal(watch_foreach_path(&f->m, on_path, &wk), 7);
    assert_string_equal(wk.out, "/a=3");
    wk = (struct walk){.stop_after = 1};
    assert_int_equal(watch_foreach_owner(&f->m, on_owner, &wk), 7);
    wk = (struct walk){.stop_after = 2};
    assert_int_equal(watch_owner_foreach_path(&f->c[0].w, on_path, &wk), 7);
    assert_string_equal(wk.out, "/a=3 /b=4");
    wk = (struct walk){.stop_after = 1};
    assert_int_equal(
        watch_path_foreach_owner(&f->m, TB_STR("/b"), on_owner, &wk), 7);
    assert_string_equal(wk.out, "1=1");

    /* Grouping survives removal from the middle of a group. */
    assert_int_equal(rm(f, 0, "/a", TB_WATCHER_DATA), 0);
    add(f, 0, K_PERS, "/a");
    wk = (struct walk){0};
    watch_owner_foreach_path(&f->c[0].w, on_path, &wk);
    assert_string_equal(wk.out, "/a=6 /b=4 /c=1");
}

/* ---- allocation failures ---------------------------------------------- */

/* Fails each allocation watch_add makes in turn: every failure must leave
 * the tables as they were, and a success must be whole.  Returns how many
 * injected failures watch_add absorbed (a table that could not grow). */
static int add_under_failures(struct fx *f, enum watch_kind kind,
                              const char *path, int conn)
{
    static const int type_of[] = {
        [K_DATA] = TB_WATCHER_DATA,
        [K_CHILD] = TB_WATCHER_CHILDREN,
        [K_PERS] = TB_WATCHER_PERSISTENT,
        [K_REC] = TB_WATCHER_PERSISTENT_RECURSIVE,
    };
    int failures = 0, absorbed = 0;

    for (long k = 0;; k++) {
        struct watch_stats before = stats(f), after;
        size_t held = watch_owner_count(&f->c[conn].w);
        fail_in = k;
        int rc = watch_add(&f->m, kind, tb_str_c(path), &f->c[conn].w);
        int reached = fail_in < 0; /* the k-th allocation happened */
        fail_in = -1;
        after = stats(f);
        if (rc == TB_ENOMEM) {
            failures++;
            assert_int_equal(after.watches, before.watches);
            assert_int_equal(after.paths, before.paths);
            assert_int_equal(after.owners, before.owners);
            assert_int_equal(watch_owner_count(&f->c[conn].w), held);
            assert_int_equal(chk(f, conn, path, type_of[kind]), TB_ENOWATCHER);
            continue;
        }
        assert_int_equal(rc, 0);
        assert_int_equal(after.watches, before.watches + 1);
        assert_int_equal(chk(f, conn, path, type_of[kind]), 0);
        if (!reached)
            break;
        /* Undo, to fail a later allocation next time. */
        absorbed++;
        assert_int_equal(rm(f, conn, path, type_of[kind]), 0);
    }
    assert_true(failures > 0);
    return absorbed;
}

static void test_add_allocation_failures(void **state)
{
    struct fx *f = *state;
    char p[32];

    /* The tables are created lazily: nothing to absorb. */
    assert_int_equal(add_under_failures(f, K_DATA, "/first", 0), 0);
    assert_int_equal(add_under_failures(f, K_CHILD, "/first", 1), 0);
    for (int i = 0; i < 15; i++) {
        (void)snprintf(p, sizeof(p), "/fill/%d", i);
        add(f, 2, K_DATA, p);
    }
    /* Both tables now sit at their growth threshold. */
    assert_true(add_under_failures(f, K_REC, "/grow", 3) > 0);
    assert_string_equal(fire(f, TB_EVENT_DELETED, "/first"), "0 1");
    assert_string_equal(fire(f, TB_EVENT_CREATED, "/grow/x"), "3");
}

static void test_trigger_never_allocates(void **state)
{
    struct fx *f = *state;
    char p[32];
    long before;

    for (int i = 0; i < 100; i++) {
        (void)snprintf(p, sizeof(p), "/t/%d", i);
        add(f, i % NCONN, K_DATA, p);
        add(f, (i + 1) % NCONN, K_CHILD, p);
    }
    add(f, 0, K_REC, "/t");
    before = n_allocs;
    for (int i = 0; i < 1000; i++) {
        (void)snprintf(p, sizeof(p), "/u/%d", i); /* nobody watches */
        fire(f, TB_EVENT_DATA_CHANGED, p);
        (void)snprintf(p, sizeof(p), "/t/%d", i % 100);
        fire(f, TB_EVENT_DELETED, p); /* fires, removes entries */
    }
    assert_int_equal(n_allocs, before);
}

/* ---- cost --------------------------------------------------------------- */

static double now_sec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void noop_deliver(void *arg, struct watch_owner *w,
                         enum tb_event_type type, struct tb_str path)
{
    (void)w;
    (void)type;
    (void)path;
    (*(long *)arg)++;
}

/* Seconds for a fixed mix of triggers, best of several runs: a watched
 * path (re-armed each round), unwatched paths with and without recursive
 * watches in play, and a children change.  Returns the deliveries too. */
static double mix_cost(struct watch_mgr *m, struct watch_owner *w,
                       long *delivered)
{
    enum { ROUNDS = 20000, RUNS = 5 };
    char p[48];
    double best = 1e9;

    for (int run = 0; run < RUNS; run++) {
        double t0 = now_sec();
        for (int i = 0; i < ROUNDS; i++) {
            int len = snprintf(p, sizeof(p), "/hot/%d", i % 64);
            struct tb_str s = {p, (size_t)len};
            assert_int_equal(watch_add(m, WATCH_DATA, s, w), 0);
            watch_trigger(m, TB_EVENT_DATA_CHANGED, s, noop_deliver, delivered);
            len = snprintf(p, sizeof(p), "/cold/%d/x/y", i);
            s.len = (size_t)len;
            watch_trigger(m, TB_EVENT_CREATED, s, noop_deliver, delivered);
            watch_trigger(m, TB_EVENT_CHILDREN_CHANGED, s, noop_deliver,
                          delivered);
        }
        double t = now_sec() - t0;
        best = t < best ? t : best;
    }
    return best;
}

static void fill(struct watch_mgr *m, struct watch_owner *owners, int nowners,
                 int n)
{
    char p[48];
    for (int i = 0; i < n; i++) {
        int len = snprintf(p, sizeof(p), "/bg/%d/%d", i % 1000, i);
        struct tb_str s = {p, (size_t)len};
        enum watch_kind k = i % 10 == 0   ? WATCH_PERSISTENT_RECURSIVE
                            : i % 10 == 1 ? WATCH_CHILD
                                          : WATCH_DATA;
        assert_int_equal(watch_add(m, k, s, &owners[i % nowners]), 0);
    }
}

static void test_trigger_cost_independent_of_total(void **state)
{
    enum { NOWNERS = 1000, BIG = 100000, SMALL = 100 };
    struct watch_owner *owners = calloc(NOWNERS, sizeof(*owners));
    struct watch_owner hot;
    struct watch_mgr small, big;
    long d_small = 0, d_big = 0, allocs;
    double t_small, t_big, t0, t_drop;

    (void)state;
    assert_non_null(owners);
    for (int i = 0; i < NOWNERS; i++)
        watch_owner_init(&owners[i]);
    watch_owner_init(&hot);

    watch_mgr_init(&small, 1);
    fill(&small, owners, NOWNERS, SMALL);
    t_small = mix_cost(&small, &hot, &d_small);
    assert_int_equal(watch_remove_watcher(&small, &hot), 0);
    watch_mgr_close(&small);

    watch_mgr_init(&big, 2);
    fill(&big, owners, NOWNERS, BIG);
    t_big = mix_cost(&big, &hot, &d_big);
    assert_int_equal(d_big, d_small); /* only the hot watches fired */

    /* Nothing allocated for changes nobody watches, at full size. */
    allocs = n_allocs;
    for (int i = 0; i < 20000; i++) {
        char p[32];
        int len = snprintf(p, sizeof(p), "/nobody/%d", i);
        watch_trigger(&big, TB_EVENT_DELETED, (struct tb_str){p, (size_t)len},
                      noop_deliver, &d_big);
    }
    assert_int_equal(n_allocs, allocs);

    /* Dropping a connection costs what it holds: 100 entries out of 1e5. */
    t0 = now_sec();
    assert_int_equal(watch_remove_watcher(&big, &owners[7]), BIG / NOWNERS);
    t_drop = now_sec() - t0;

    print_message("trigger mix: %.1f ns/round with %d watches, "
                  "%.1f ns/round with %d; remove_watcher(100 of 1e5) %.1f us\n",
                  t_small / 20000 * 1e9, SMALL, t_big / 20000 * 1e9, BIG,
                  t_drop * 1e6);
    /* A scan over all watches would be ~1000x slower; caches alone may
     * cost a few times. */
    assert_true(t_big < 20 * t_small);
    assert_true(t_drop < 0.05);

    watch_mgr_close(&big);
    free(owners);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
        T(test_data_watch_is_one_shot),
        T(test_exists_watch_on_missing_node),
        T(test_data_watch_scope),
        T(test_child_watch),
        T(test_delete_sends_one_event_per_watcher),
        T(test_same_kind_twice_is_one_entry),
        T(test_change_report_sequence),
        T(test_persistent_fires_and_stays),
        T(test_persistent_with_standard_one_event),
        T(test_recursive_fires_for_subtree),
        T(test_recursive_on_root),
        T(test_recursive_ancestors_dedupe),
        T(test_delivery_order),
        T(test_remove_by_type),
        T(test_remove_any_takes_both_standard),
        T(test_remove_nowatcher_cases),
        T(test_remove_persistent_types),
        T(test_check_removes_nothing),
        T(test_invalid_arguments),
        T(test_remove_watcher),
        T(test_many_watches_grow_and_shrink),
        T(test_deliver_may_drop_pending_owner),
        T(test_deliver_may_rearm),
        T(test_deliver_may_drop_itself),
#ifdef NDEBUG
        T(test_nested_trigger_refused),
#endif
        T(test_stats_and_walks),
        T(test_add_allocation_failures),
        T(test_trigger_never_allocates),
        cmocka_unit_test(test_trigger_cost_independent_of_total),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
