/* Every operation and every watch type against a live server, through the
 * synchronous API (which is the asynchronous API plus a wait). */
#include <stdlib.h>

#include "it_client.h"

static char P[8][300];

/* Formats a path under the test's root into one of 8 rotating buffers. */
static const char *at(const char *root, const char *sub)
{
    static int slot;
    char *b = P[slot++ & 7];

    snprintf(b, sizeof P[0], "%s%s", root, sub);
    return b;
}

static void test_crud(void)
{
    const char *r = it_root("crud");
    struct tb_client *c = it_connect(it_hostport, 10000, NULL);
    struct tb_stat st, st2;
    char name[300], *v = NULL;
    size_t len;
    struct tb_strings kids = {0, NULL};
    int32_t n;

    CHECK(c != NULL);
    CHECK_RC(tb_create_sync(c, r, "root", 4, NULL, TB_PERSISTENT, 0, name,
                            sizeof name, &st),
             0);
    CHECK(strcmp(name, r) == 0 && st.czxid > 0 && st.version == 0);
    CHECK_RC(tb_create_sync(c, r, NULL, 0, NULL, TB_PERSISTENT, 0, NULL, 0,
                            NULL),
             TB_ENODEEXISTS);
    CHECK_RC(tb_exists_sync(c, r, NULL, NULL, &st2), 0);
    CHECK(st2.czxid == st.czxid && st2.data_length == 4);
    CHECK_RC(tb_exists_sync(c, at(r, "/none"), NULL, NULL, NULL),
             TB_ENONODE);
    CHECK_RC(tb_get_data_sync(c, r, NULL, NULL, &v, &len, &st2), 0);
    CHECK(len == 4 && memcmp(v, "root", 4) == 0 && v[4] == '\0');
    tb_free(v);
    v = NULL;
    CHECK_RC(tb_set_data_sync(c, r, "x", 1, 5, NULL), TB_EBADVERSION);
    CHECK_RC(tb_set_data_sync(c, r, "new", 3, 0, &st2), 0);
    CHECK(st2.version == 1 && st2.mzxid > st.mzxid);
    /* null data reads back as NULL */
    CHECK_RC(tb_create_sync(c, at(r, "/null"), NULL, 0, NULL, TB_PERSISTENT,
                            0, NULL, 0, NULL),
             0);
    CHECK_RC(tb_get_data_sync(c, at(r, "/null"), NULL, NULL, &v, &len, NULL),
             0);
    CHECK(v == NULL);
    CHECK_RC(tb_create_sync(c, at(r, "/s-"), "", 0, NULL,
                            TB_PERSISTENT_SEQUENTIAL, 0, name, sizeof name,
                            NULL),
             0);
    CHECK(strcmp(name, at(r, "/s-0000000001")) == 0);
    CHECK_RC(tb_create_sync(c, at(r, "/e"), "", 0, NULL, TB_EPHEMERAL, 0,
                            NULL, 0, &st),
             0);
    CHECK(st.ephemeral_owner == tb_client_session(c, NULL));
    CHECK_RC(tb_create_sync(c, at(r, "/e/child"), "", 0, NULL, TB_PERSISTENT,
                            0, NULL, 0, NULL),
             TB_ENOCHILDRENFOREPHEMERALS);
    CHECK_RC(tb_create_sync(c, at(r, "/es-"), "", 0, NULL,
                            TB_EPHEMERAL_SEQUENTIAL, 0, name, sizeof name,
                            NULL),
             0);
    CHECK_RC(tb_get_children_sync(c, r, NULL, NULL, &kids), 0);
    CHECK(kids.count == 4);
    tb_strings_free(&kids);
    CHECK_RC(tb_get_children2_sync(c, r, NULL, NULL, &kids, &st), 0);
    CHECK(kids.count == 4 && st.num_children == 4);
    tb_strings_free(&kids);
    CHECK_RC(tb_get_ephemerals_sync(c, r, &kids), 0);
    CHECK(kids.count == 2);
    tb_strings_free(&kids);
    CHECK_RC(tb_get_all_children_number_sync(c, r, &n), 0);
    CHECK(n == 4);
    CHECK_RC(tb_sync_sync(c, r), 0);
    CHECK_RC(tb_delete_sync(c, r, -1), TB_ENOTEMPTY);
    CHECK_RC(tb_delete_sync(c, at(r, "/null"), 3), TB_EBADVERSION);
    CHECK_RC(tb_delete_sync(c, at(r, "/null"), 0), 0);
    CHECK_RC(tb_delete_sync(c, at(r, "/null"), -1), TB_ENONODE);
    /* refused locally, never sent */
    CHECK_RC(tb_exists_sync(c, "no-slash", NULL, NULL, NULL),
             TB_EBADARGUMENTS);
    CHECK_RC(tb_create_sync(c, at(r, "/a/../b"), "", 0, NULL, TB_PERSISTENT,
                            0, NULL, 0, NULL),
             TB_EBADARGUMENTS);
    CHECK_RC(tb_create_sync(c, at(r, "/t"), "", 0, NULL, TB_PERSISTENT, 5,
                            NULL, 0, NULL),
             TB_EBADARGUMENTS);
done:
    tb_free(v);
    tb_strings_free(&kids);
    if (c) {
        it_rmr(c, r);
        tb_client_close(c);
    }
}

static void test_container_ttl(void)
{
    const char *r = it_root("ctr");
    struct tb_client *c = it_connect(it_hostport, 10000, NULL);
    struct tb_stat st;
    char name[300];

    CHECK(c != NULL);
    CHECK_RC(tb_create_sync(c, r, "", 0, NULL, TB_CONTAINER, 0, NULL, 0, &st),
             0);
    CHECK(st.ephemeral_owner == 0);
    CHECK_RC(tb_create_sync(c, at(r, "/kid"), "", 0, NULL, TB_PERSISTENT, 0,
                            NULL, 0, NULL),
             0);
    CHECK_RC(tb_delete_sync(c, at(r, "/kid"), -1), 0);
    /* an emptied container goes away (the check runs every second) */
    for (int i = 0; i < 100; i++) {
        if (tb_exists_sync(c, r, NULL, NULL, NULL) == TB_ENONODE)
            break;
        it_sleep(100);
    }
    CHECK_RC(tb_exists_sync(c, r, NULL, NULL, NULL), TB_ENONODE);
    CHECK_RC(tb_create_sync(c, r, "", 0, NULL, TB_PERSISTENT, 0, NULL, 0,
                            NULL),
             0);
    CHECK_RC(tb_create_sync(c, at(r, "/ttl"), "v", 1, NULL,
                            TB_PERSISTENT_WITH_TTL, 500, NULL, 0, &st),
             0);
    CHECK_RC(tb_create_sync(c, at(r, "/ttls-"), "v", 1, NULL,
                            TB_PERSISTENT_SEQUENTIAL_WITH_TTL, 60000, name,
                            sizeof name, NULL),
             0);
    CHECK(strncmp(name, at(r, "/ttls-"), strlen(at(r, "/ttls-"))) == 0);
    CHECK_RC(tb_create_sync(c, at(r, "/bad"), "v", 1, NULL,
                            TB_PERSISTENT_WITH_TTL, 0, NULL, 0, NULL),
             TB_EBADARGUMENTS);
    for (int i = 0; i < 100; i++) {
        if (tb_exists_sync(c, at(r, "/ttl"), NULL, NULL, NULL) == TB_ENONODE)
            break;
        it_sleep(100);
    }
    CHECK_RC(tb_exists_sync(c, at(r, "/ttl"), NULL, NULL, NULL), TB_ENONODE);
done:
    if (c) {
        it_rmr(c, r);
        tb_client_close(c);
    }
}

static void test_acl_auth(void)
{
    const char *r = it_root("acl");
    struct tb_client *a = it_connect(it_hostport, 10000, NULL), *b = NULL;
    struct tb_acl_list acl = {0, NULL};
    struct tb_strings who = {0, NULL};
    struct tb_acl_entry e[2];
    char id[128];
    struct tb_stat st;
    int i, found = 0;

    CHECK(a != NULL);
    b = it_connect(it_hostport, 10000, NULL);
    CHECK(b != NULL);
    CHECK_RC(tb_add_auth_sync(a, "digest", "alice:secret", 12), 0);
    CHECK(tb_digest_acl_id("alice:secret", id, sizeof id) > 0);
    CHECK(strcmp(id, "alice:aYXlLOpEooaV1cRAvUL1fp9Qt7E=") == 0);
    e[0] = (struct tb_acl_entry){TB_PERM_ALL, "digest", id};
    e[1] = (struct tb_acl_entry){TB_PERM_READ, "world", "anyone"};
    CHECK_RC(tb_create_sync(a, r, "x", 1, &(struct tb_acl_list){2, e},
                            TB_PERSISTENT, 0, NULL, 0, NULL),
             0);
    CHECK_RC(tb_set_data_sync(b, r, "y", 1, -1, NULL), TB_ENOAUTH);
    CHECK_RC(tb_set_data_sync(a, r, "y", 1, -1, NULL), 0);
    CHECK_RC(tb_get_acl_sync(b, r, &acl, &st), 0);
    CHECK(acl.count == 2 && st.aversion == 0);
    tb_acl_list_free(&acl);
    CHECK_RC(tb_set_acl_sync(a, r, &tb_open_acl_unsafe, 0, &st), 0);
    CHECK(st.aversion == 1);
    CHECK_RC(tb_set_data_sync(b, r, "z", 1, -1, NULL), 0);
    CHECK_RC(tb_set_acl_sync(a, r, &(struct tb_acl_list){0, NULL}, -1, NULL),
             TB_EINVALIDACL);
    CHECK_RC(tb_whoami_sync(a, &who), 0);
    for (i = 0; i < who.count; i++)
        found |= strcmp(who.v[i], "digest:alice") == 0;
    CHECK(found);
done:
    tb_strings_free(&who);
    tb_acl_list_free(&acl);
    if (a) {
        it_rmr(a, r);
        tb_client_close(a);
    }
    if (b)
        tb_client_close(b);
}

static void test_auth_failed(void)
{
    struct it_rec rec;
    struct tb_options o = {0};
    struct tb_client *c;

    it_rec_init(&rec);
    o.state_cb = it_rec_state;
    o.data = &rec;
    c = it_connect(it_hostport, 10000, &o);
    CHECK(c != NULL);
    CHECK_RC(tb_add_auth_sync(c, "nosuchscheme", "x", 1), TB_EAUTHFAILED);
    CHECK(it_rec_wait_state(&rec, TB_SESSION_AUTH_FAILED, 5000) == 0);
    CHECK(tb_client_state(c) == TB_SESSION_AUTH_FAILED);
    CHECK_RC(tb_exists_sync(c, "/", NULL, NULL, NULL), TB_EAUTHFAILED);
done:
    if (c)
        tb_client_close(c);
}

static void test_multi(void)
{
    const char *r = it_root("multi");
    struct tb_client *c = it_connect(it_hostport, 10000, NULL);
    struct tb_multi *m = tb_multi_new();
    struct tb_multi_results res = {0, NULL};

    CHECK(c != NULL && m != NULL);
    CHECK_RC(tb_multi_create(m, r, "p", 1, NULL, TB_PERSISTENT, 0), 0);
    CHECK_RC(tb_multi_create(m, at(r, "/a"), "a", 1, NULL, TB_PERSISTENT, 0),
             0);
    CHECK_RC(tb_multi_set_data(m, at(r, "/a"), "b", 1, 0), 0);
    CHECK_RC(tb_multi_check(m, at(r, "/a"), 1), 0);
    CHECK_RC(tb_multi_create(m, at(r, "/c"), "", 0, NULL, TB_CONTAINER, 0),
             0);
    CHECK_RC(tb_multi_get_data(m, r), TB_EBADARGUMENTS); /* no mixing */
    CHECK_RC(tb_multi_exec_sync(c, m, &res), 0);
    CHECK(res.count == 5);
    CHECK(res.v[1].path && strcmp(res.v[1].path, at(r, "/a")) == 0);
    CHECK(res.v[2].op == 5 && res.v[2].stat && res.v[2].stat->version == 1);
    CHECK(res.v[4].path && strcmp(res.v[4].path, at(r, "/c")) == 0);
    tb_multi_results_free(&res);
    tb_multi_free(m);
    /* a failing multi: nothing applied, the cause reported */
    m = tb_multi_new();
    CHECK_RC(tb_multi_create(m, at(r, "/x"), "", 0, NULL, TB_PERSISTENT, 0),
             0);
    CHECK_RC(tb_multi_delete(m, at(r, "/missing"), -1), 0);
    CHECK_RC(tb_multi_create(m, at(r, "/y"), "", 0, NULL, TB_PERSISTENT, 0),
             0);
    CHECK_RC(tb_multi_exec_sync(c, m, &res), TB_ENONODE);
    CHECK(res.count == 3 && res.v[0].rc == 0 && res.v[1].rc == TB_ENONODE &&
          res.v[2].rc == TB_ERUNTIMEINCONSISTENCY);
    tb_multi_results_free(&res);
    CHECK_RC(tb_exists_sync(c, at(r, "/x"), NULL, NULL, NULL), TB_ENONODE);
    tb_multi_free(m);
    /* multiRead: independent results */
    m = tb_multi_new();
    CHECK_RC(tb_multi_get_data(m, at(r, "/a")), 0);
    CHECK_RC(tb_multi_get_children(m, r), 0);
    CHECK_RC(tb_multi_get_data(m, at(r, "/missing")), 0);
    CHECK_RC(tb_multi_exec_sync(c, m, &res), 0);
    CHECK(res.count == 3);
    CHECK(res.v[0].rc == 0 && res.v[0].len == 1 &&
          memcmp(res.v[0].value, "b", 1) == 0);
    CHECK(res.v[1].rc == 0 && res.v[1].children &&
          res.v[1].children->count == 2);
    CHECK(res.v[2].rc == TB_ENONODE);
done:
    tb_multi_results_free(&res);
    tb_multi_free(m);
    if (c) {
        it_rmr(c, r);
        tb_client_close(c);
    }
}

static int find_ev(struct it_rec *rec, int type, const char *path)
{
    int i, n = 0;

    pthread_mutex_lock(&rec->mu);
    for (i = 0; i < rec->n && i < 256; i++)
        n += rec->ev[i].type == type && strcmp(rec->ev[i].path, path) == 0;
    pthread_mutex_unlock(&rec->mu);
    return n;
}

static void test_oneshot_watches(void)
{
    const char *r = it_root("w1");
    struct tb_client *c = it_connect(it_hostport, 10000, NULL), *d = NULL;
    struct it_rec data, exist, child, gone;

    it_rec_init(&data);
    it_rec_init(&exist);
    it_rec_init(&child);
    it_rec_init(&gone);
    CHECK(c != NULL);
    d = it_connect(it_hostport, 10000, NULL);
    CHECK(d != NULL);
    CHECK_RC(tb_create_sync(c, r, "", 0, NULL, TB_PERSISTENT, 0, NULL, 0,
                            NULL),
             0);
    CHECK_RC(tb_get_data_sync(c, r, it_rec_watch, &data, NULL, NULL, NULL),
             0);
    CHECK_RC(tb_exists_sync(c, at(r, "/n"), it_rec_watch, &exist, NULL),
             TB_ENONODE);
    CHECK_RC(tb_get_children_sync(c, r, it_rec_watch, &child, NULL), 0);
    /* a watch is not set when the call fails */
    CHECK_RC(tb_get_data_sync(c, at(r, "/none"), it_rec_watch, &gone, NULL,
                              NULL, NULL),
             TB_ENONODE);
    CHECK_RC(tb_set_data_sync(d, r, "1", 1, -1, NULL), 0);
    CHECK(it_rec_wait(&data, 1, 5000) == 0);
    CHECK(data.ev[0].type == TB_EVENT_DATA_CHANGED && data.ev[0].final &&
          strcmp(data.ev[0].path, r) == 0);
    CHECK_RC(tb_create_sync(d, at(r, "/n"), "", 0, NULL, TB_PERSISTENT, 0,
                            NULL, 0, NULL),
             0);
    CHECK(it_rec_wait(&exist, 1, 5000) == 0 && it_rec_wait(&child, 1, 5000) == 0);
    CHECK(exist.ev[0].type == TB_EVENT_CREATED);
    CHECK(child.ev[0].type == TB_EVENT_CHILDREN_CHANGED);
    /* one-shot: more changes fire nothing */
    CHECK_RC(tb_set_data_sync(d, r, "2", 1, -1, NULL), 0);
    CHECK_RC(tb_delete_sync(d, at(r, "/n"), -1), 0);
    /* a watch on a node that is deleted: data and child watchers */
    CHECK_RC(tb_create_sync(d, at(r, "/m"), "", 0, NULL, TB_PERSISTENT, 0,
                            NULL, 0, NULL),
             0);
    CHECK_RC(tb_exists_sync(c, at(r, "/m"), it_rec_watch, &gone, NULL), 0);
    CHECK_RC(tb_get_children_sync(c, at(r, "/m"), it_rec_watch, &gone, NULL),
             0);
    CHECK_RC(tb_delete_sync(d, at(r, "/m"), -1), 0);
    CHECK(it_rec_wait(&gone, 2, 5000) == 0);
    CHECK(find_ev(&gone, TB_EVENT_DELETED, at(r, "/m")) == 2);
    it_sleep(300);
    CHECK(it_rec_count(&data) == 1 && it_rec_count(&exist) == 1 &&
          it_rec_count(&child) == 1 && it_rec_count(&gone) == 2);
done:
    if (d) {
        it_rmr(d, r);
        tb_client_close(d);
    }
    if (c)
        tb_client_close(c);
}

/* A server keeps one persistent mode per (connection, path), so the two
 * kinds watch the same path from two handles. */
static void test_persistent_watches(void)
{
    const char *r = it_root("wp");
    struct tb_client *c = it_connect(it_hostport, 10000, NULL), *d = NULL,
                     *e = NULL;
    struct it_rec pers, rec;

    it_rec_init(&pers);
    it_rec_init(&rec);
    CHECK(c != NULL);
    d = it_connect(it_hostport, 10000, NULL);
    e = it_connect(it_hostport, 10000, NULL);
    CHECK(d != NULL && e != NULL);
    CHECK_RC(tb_add_watch_sync(e, r, TB_ADDWATCH_PERSISTENT, it_rec_watch,
                               &pers),
             0);
    CHECK_RC(tb_add_watch_sync(c, r, TB_ADDWATCH_PERSISTENT_RECURSIVE,
                               it_rec_watch, &rec),
             0);
    CHECK_RC(tb_create_sync(d, r, "", 0, NULL, TB_PERSISTENT, 0, NULL, 0,
                            NULL),
             0);
    CHECK_RC(tb_create_sync(d, at(r, "/a"), "", 0, NULL, TB_PERSISTENT, 0,
                            NULL, 0, NULL),
             0);
    CHECK_RC(tb_create_sync(d, at(r, "/a/b"), "", 0, NULL, TB_PERSISTENT, 0,
                            NULL, 0, NULL),
             0);
    CHECK_RC(tb_set_data_sync(d, r, "1", 1, -1, NULL), 0);
    CHECK_RC(tb_set_data_sync(d, r, "2", 1, -1, NULL), 0);
    CHECK_RC(tb_delete_sync(d, at(r, "/a/b"), -1), 0);
    /* persistent: created, children changed, 2 data changed */
    CHECK(it_rec_wait(&pers, 4, 5000) == 0);
    CHECK(find_ev(&pers, TB_EVENT_CREATED, r) == 1);
    CHECK(find_ev(&pers, TB_EVENT_CHILDREN_CHANGED, r) == 1);
    CHECK(find_ev(&pers, TB_EVENT_DATA_CHANGED, r) == 2);
    /* recursive: created x3, data x2, deleted of /a/b; no children events */
    CHECK(it_rec_wait(&rec, 6, 5000) == 0);
    CHECK(find_ev(&rec, TB_EVENT_CREATED, at(r, "/a/b")) == 1);
    CHECK(find_ev(&rec, TB_EVENT_DELETED, at(r, "/a/b")) == 1);
    CHECK(find_ev(&rec, TB_EVENT_CHILDREN_CHANGED, r) == 0);
    CHECK(rec.ev[0].final == 0);
    /* removal ends a persistent watch with a final call */
    CHECK_RC(tb_remove_watches_sync(e, r, TB_WATCHER_PERSISTENT, NULL, NULL,
                                    0),
             0);
    CHECK(it_rec_wait(&pers, 5, 5000) == 0);
    CHECK(pers.ev[4].type == TB_EVENT_PERSISTENT_WATCH_REMOVED &&
          pers.ev[4].final);
    CHECK_RC(tb_remove_watches_sync(e, r, TB_WATCHER_PERSISTENT, NULL, NULL,
                                    0),
             TB_ENOWATCHER);
    CHECK_RC(tb_set_data_sync(d, at(r, "/a"), "x", 1, -1, NULL), 0);
    CHECK_RC(tb_set_data_sync(d, r, "x", 1, -1, NULL), 0);
    CHECK(it_rec_wait(&rec, 8, 5000) == 0);
    CHECK(find_ev(&rec, TB_EVENT_DATA_CHANGED, at(r, "/a")) == 1);
    it_sleep(200);
    CHECK(it_rec_count(&pers) == 5);
done:
    if (d) {
        it_rmr(d, r);
        tb_client_close(d);
    }
    if (e)
        tb_client_close(e);
    if (c) {
        tb_client_close(c);
        /* the recursive watcher's final call came with the close */
        if (!(rec.n >= 9 && rec.ev[rec.n - 1].type == TB_EVENT_NONE &&
              rec.ev[rec.n - 1].rc == TB_ECLOSING && rec.ev[rec.n - 1].final))
            it_fail_at(__FILE__, __LINE__, "recursive watch not ended");
    }
}

/* One handle's persistent watch removed while a data watch is set on the
 * same path: the persistent watcher ends, the data watcher still hears. */
static void test_remove_persistent_beside_data(void)
{
    const char *r = it_root("rmp");
    struct tb_client *c = it_connect(it_hostport, 10000, NULL);
    struct it_rec pers, data;

    it_rec_init(&pers);
    it_rec_init(&data);
    CHECK(c != NULL);
    CHECK_RC(tb_create_sync(c, r, "", 0, NULL, TB_PERSISTENT, 0, NULL, 0, NULL),
             0);
    CHECK_RC(
        tb_add_watch_sync(c, r, TB_ADDWATCH_PERSISTENT, it_rec_watch, &pers),
        0);
    CHECK_RC(tb_get_data_sync(c, r, it_rec_watch, &data, NULL, NULL, NULL), 0);
    CHECK_RC(tb_remove_watches_sync(c, r, TB_WATCHER_PERSISTENT, NULL, NULL, 0),
             0);
    CHECK(it_rec_wait(&pers, 1, 5000) == 0);
    CHECK(pers.ev[0].type == TB_EVENT_PERSISTENT_WATCH_REMOVED &&
          pers.ev[0].final);
    CHECK_RC(tb_set_data_sync(c, r, "1", 1, -1, NULL), 0);
    CHECK_RC(tb_set_data_sync(c, r, "2", 1, -1, NULL), 0);
    CHECK(it_rec_wait(&data, 1, 5000) == 0);
    CHECK(data.ev[0].type == TB_EVENT_DATA_CHANGED && data.ev[0].final);
    it_sleep(200);
    CHECK(it_rec_count(&pers) == 1 && it_rec_count(&data) == 1);
done:
    if (c) {
        it_rmr(c, r);
        tb_client_close(c);
    }
}

static void test_remove_watches(void)
{
    const char *r = it_root("rmw");
    struct tb_client *c = it_connect(it_hostport, 10000, NULL);
    struct it_rec a, b;

    it_rec_init(&a);
    it_rec_init(&b);
    CHECK(c != NULL);
    CHECK_RC(tb_create_sync(c, r, "", 0, NULL, TB_PERSISTENT, 0, NULL, 0,
                            NULL),
             0);
    CHECK_RC(tb_get_data_sync(c, r, it_rec_watch, &a, NULL, NULL, NULL), 0);
    CHECK_RC(tb_exists_sync(c, r, it_rec_watch, &b, NULL), 0);
    CHECK_RC(tb_get_children_sync(c, r, it_rec_watch, &b, NULL), 0);
    /* removing one of two data watchers is local */
    CHECK_RC(tb_remove_watches_sync(c, r, TB_WATCHER_DATA, it_rec_watch, &a,
                                    0),
             0);
    CHECK(it_rec_count(&a) == 1 &&
          a.ev[0].type == TB_EVENT_DATA_WATCH_REMOVED);
    CHECK_RC(tb_remove_watches_sync(c, r, TB_WATCHER_ANY, NULL, NULL, 0), 0);
    CHECK(it_rec_count(&b) == 2);
    CHECK(find_ev(&b, TB_EVENT_DATA_WATCH_REMOVED, r) == 1);
    CHECK(find_ev(&b, TB_EVENT_CHILD_WATCH_REMOVED, r) == 1);
    CHECK_RC(tb_set_data_sync(c, r, "x", 1, -1, NULL), 0);
    it_sleep(200);
    CHECK(it_rec_count(&a) == 1 && it_rec_count(&b) == 2);
done:
    if (c) {
        it_rmr(c, r);
        tb_client_close(c);
    }
}

static void test_chroot(void)
{
    const char *r = it_root("chroot");
    char hosts[400], name[300];
    struct tb_client *top = it_connect(it_hostport, 10000, NULL), *c = NULL;
    struct tb_strings eph = {0, NULL};
    struct it_rec rec;

    it_rec_init(&rec);
    CHECK(top != NULL);
    CHECK_RC(tb_create_sync(top, r, "", 0, NULL, TB_PERSISTENT, 0, NULL, 0,
                            NULL),
             0);
    snprintf(hosts, sizeof hosts, "%s%s", it_hostport, r);
    c = it_connect(hosts, 10000, NULL);
    CHECK(c != NULL);
    CHECK_RC(tb_exists_sync(c, "/", NULL, NULL, NULL), 0);
    CHECK_RC(tb_create_sync(c, "/e-", "", 0, NULL, TB_EPHEMERAL_SEQUENTIAL,
                            0, name, sizeof name, NULL),
             0);
    CHECK(strcmp(name, "/e-0000000000") == 0);
    CHECK_RC(tb_exists_sync(top, at(r, "/e-0000000000"), NULL, NULL, NULL),
             0);
    CHECK_RC(tb_get_ephemerals_sync(c, "/", &eph), 0);
    CHECK(eph.count == 1 && strcmp(eph.v[0], "/e-0000000000") == 0);
    CHECK_RC(tb_get_children_sync(c, "/", it_rec_watch, &rec, NULL), 0);
    CHECK_RC(tb_create_sync(top, at(r, "/k"), "", 0, NULL, TB_PERSISTENT, 0,
                            NULL, 0, NULL),
             0);
    CHECK(it_rec_wait(&rec, 1, 5000) == 0);
    CHECK(rec.ev[0].type == TB_EVENT_CHILDREN_CHANGED &&
          strcmp(rec.ev[0].path, "/") == 0);
    CHECK_RC(tb_exists_sync(c, "/k", it_rec_watch, &rec, NULL), 0);
    CHECK_RC(tb_delete_sync(top, at(r, "/k"), -1), 0);
    CHECK(it_rec_wait(&rec, 2, 5000) == 0);
    CHECK(rec.ev[1].type == TB_EVENT_DELETED &&
          strcmp(rec.ev[1].path, "/k") == 0);
done:
    tb_strings_free(&eph);
    if (c)
        tb_client_close(c);
    if (top) {
        it_rmr(top, r);
        tb_client_close(top);
    }
}

const struct it_test it_ops_tests[] = {
    {"ops_crud", test_crud},
    {"ops_container_ttl", test_container_ttl},
    {"ops_acl_auth", test_acl_auth},
    {"ops_auth_failed", test_auth_failed},
    {"ops_multi", test_multi},
    {"watch_oneshot", test_oneshot_watches},
    {"watch_persistent", test_persistent_watches},
    {"watch_remove", test_remove_watches},
    {"watch_remove_persistent_beside_data", test_remove_persistent_beside_data},
    {"chroot", test_chroot},
    {NULL, NULL},
};
