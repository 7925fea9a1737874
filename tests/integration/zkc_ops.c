/* zkc_ops: drives a server with the official ZooKeeper C client (libzookeeper_mt, sync API and
 * watchers) and checks the results ZooKeeper 3.8 gives: node modes and sequential naming, Stat
 * fields, versions, watches and their one-shot semantics, multi, error codes for bad input.
 * ACL, auth and session tests live in zkc_ops_sess.c.
 *
 * Each test works under its own run-unique path (it_path), opens its own sessions and closes
 * them, and bounds every wait, so tests are independent and a broken server fails them rather
 * than hanging them.  Usage: zkc_ops HOST:PORT [NAME-SUBSTRING ...] */
#include "zkc_ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

int64_t wall_ms(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

int stat_same(const struct Stat *a, const struct Stat *b)
{
#define SAME(f)                                                                \
    if (a->f != b->f) {                                                        \
        printf("  stat field %s differs: %lld vs %lld\n", #f, (long long)a->f, \
               (long long)b->f);                                               \
        return 0;                                                              \
    }
    SAME(czxid) SAME(mzxid) SAME(ctime) SAME(mtime) SAME(version) SAME(cversion)
    SAME(aversion) SAME(ephemeralOwner) SAME(dataLength) SAME(numChildren) SAME(pzxid)
#undef SAME
    return 1;
}

int mk(zhandle_t *zh, const char *path)
{
    return zoo_create(zh, path, "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT, NULL, 0);
}

const char *sub(const char *base, const char *name)
{
    static char bufs[8][600];
    static int slot;
    char tmp[600];
    char *b = bufs[slot++ % 8];
    /* base may be an earlier result of sub() itself: copy before writing */
    snprintf(tmp, sizeof tmp, "%s/%s", base, name);
    memcpy(b, tmp, sizeof tmp);
    return b;
}

static int cmpstr(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Children of `path` sorted and joined with ',' into out (the server's order is unspecified). */
static int children_joined(zhandle_t *zh, const char *path, char *out, size_t outlen)
{
    struct String_vector v = {0, NULL};
    int rc = zoo_get_children(zh, path, 0, &v);
    out[0] = '\0';
    if (rc != ZOK)
        return rc;
    qsort(v.data, (size_t)v.count, sizeof v.data[0], cmpstr);
    size_t used = 0;
    for (int i = 0; i < v.count; i++)
        used += (size_t)snprintf(out + used, used < outlen ? outlen - used : 0, "%s%s",
                                 i ? "," : "", v.data[i]);
    deallocate_String_vector(&v);
    return ZOK;
}

/* --- creation modes ----------------------------------------------------------------------- */

static void t_create_persistent_stat(void)
{
    struct zc a = {0};
    const char *p = it_path("zkc", "persist");
    char buf[64];
    int len;
    struct Stat st, st2;
    OPEN(a);
    IT_EQ(zoo_create(a.zh, p, "hello", 5, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT, buf,
                     sizeof buf), ZOK);
    IT_EQ_STR(buf, p);
    len = sizeof buf;
    IT_EQ(zoo_get(a.zh, p, 0, buf, &len, &st), ZOK);
    IT_EQ(len, 5);
    IT_CHECK(memcmp(buf, "hello", 5) == 0);
    IT_CHECK(st.czxid > 0);
    IT_EQ(st.mzxid, st.czxid);
    IT_EQ(st.pzxid, st.czxid);
    IT_EQ(st.mtime, st.ctime);
    IT_CHECKF(llabs(st.ctime - wall_ms()) < 60000, "ctime %lld is not close to now",
              (long long)st.ctime);
    IT_EQ(st.version, 0);
    IT_EQ(st.cversion, 0);
    IT_EQ(st.aversion, 0);
    IT_EQ(st.ephemeralOwner, 0);
    IT_EQ(st.dataLength, 5);
    IT_EQ(st.numChildren, 0);
    IT_EQ(zoo_exists(a.zh, p, 0, &st2), ZOK);
    IT_CHECK(stat_same(&st, &st2));
    /* null data is stored as null and reported as length -1, dataLength 0 */
    IT_EQ(zoo_create(a.zh, sub(p, "null"), NULL, -1, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT,
                     NULL, 0), ZOK);
    len = sizeof buf;
    IT_EQ(zoo_get(a.zh, sub(p, "null"), 0, buf, &len, &st), ZOK);
    IT_EQ(len, -1);
    IT_EQ(st.dataLength, 0);
    /* empty (non-null) data stays empty */
    IT_EQ(zoo_create(a.zh, sub(p, "empty"), "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT,
                     NULL, 0), ZOK);
    len = sizeof buf;
    IT_EQ(zoo_get(a.zh, sub(p, "empty"), 0, buf, &len, &st), ZOK);
    IT_EQ(len, 0);
done:
    zc_close(&a);
}

static void t_create2_stat(void)
{
    struct zc a = {0};
    const char *p = it_path("zkc", "create2");
    char buf[600];
    struct Stat st, st2;
    OPEN(a);
    IT_EQ(zoo_create2(a.zh, p, "abc", 3, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT, buf,
                      sizeof buf, &st), ZOK);
    IT_EQ_STR(buf, p);
    IT_EQ(zoo_exists(a.zh, p, 0, &st2), ZOK);
    IT_CHECK(stat_same(&st, &st2));
    IT_EQ(st.dataLength, 3);
    IT_EQ(zoo_create2(a.zh, sub(p, "s-"), "", 0, &ZOO_OPEN_ACL_UNSAFE,
                      ZOO_PERSISTENT_SEQUENTIAL, buf, sizeof buf, &st), ZOK);
    IT_EQ_STR(buf, sub(p, "s-0000000000"));
    IT_EQ(zoo_exists(a.zh, buf, 0, &st2), ZOK);
    IT_CHECK(stat_same(&st, &st2));
    /* create2 of an existing node fails like create */
    IT_EQ(zoo_create2(a.zh, p, "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT, buf, sizeof buf,
                      &st), ZNODEEXISTS);
done:
    zc_close(&a);
}

static void t_create_ephemeral(void)
{
    struct zc a = {0}, b = {0};
    const char *p = it_path("zkc", "ephem");
    const char *e = sub(p, "e");
    char buf[600];
    struct Stat st;
    OPEN(a);
    OPEN(b);
    IT_EQ(mk(a.zh, p), ZOK);
    IT_EQ(zoo_create(a.zh, e, "x", 1, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL, buf, sizeof buf),
          ZOK);
    IT_EQ(zoo_exists(b.zh, e, 0, &st), ZOK);
    IT_EQ(st.ephemeralOwner, zoo_client_id(a.zh)->client_id);
    IT_CHECK(st.ephemeralOwner != zoo_client_id(b.zh)->client_id);
    /* plain ephemerals cannot have children, in any mode */
    IT_EQ(mk(a.zh, sub(e, "kid")), ZNOCHILDRENFOREPHEMERALS);
    IT_EQ(zoo_create(b.zh, sub(e, "kid"), "", 0, &ZOO_OPEN_ACL_UNSAFE,
                     ZOO_EPHEMERAL_SEQUENTIAL, NULL, 0), ZNOCHILDRENFOREPHEMERALS);
    IT_EQ(zoo_create(a.zh, sub(p, "es-"), "", 0, &ZOO_OPEN_ACL_UNSAFE,
                     ZOO_EPHEMERAL_SEQUENTIAL, buf, sizeof buf), ZOK);
    IT_EQ_STR(buf, sub(p, "es-0000000001"));
    IT_EQ(zoo_exists(b.zh, buf, 0, &st), ZOK);
    IT_EQ(st.ephemeralOwner, zoo_client_id(a.zh)->client_id);
    /* a persistent node reports owner 0 */
    IT_EQ(zoo_exists(b.zh, p, 0, &st), ZOK);
    IT_EQ(st.ephemeralOwner, 0);
done:
    zc_close(&a);
    zc_close(&b);
}

static void t_create_sequential(void)
{
    struct zc a = {0};
    const char *p = it_path("zkc", "seq");
    char buf[600], want[600];
    struct Stat st;
    OPEN(a);
    IT_EQ(mk(a.zh, p), ZOK);
    for (int i = 0; i < 3; i++) {
        IT_EQ(zoo_create(a.zh, sub(p, "n-"), "", 0, &ZOO_OPEN_ACL_UNSAFE,
                         ZOO_PERSISTENT_SEQUENTIAL, buf, sizeof buf), ZOK);
        snprintf(want, sizeof want, "%s/n-%010d", p, i);
        IT_EQ_STR(buf, want);
    }
    /* deletes never lower the counter */
    IT_EQ(zoo_delete(a.zh, sub(p, "n-0000000001"), -1), ZOK);
    IT_EQ(zoo_create(a.zh, sub(p, "n-"), "", 0, &ZOO_OPEN_ACL_UNSAFE,
                     ZOO_PERSISTENT_SEQUENTIAL, buf, sizeof buf), ZOK);
    IT_EQ_STR(buf, sub(p, "n-0000000003"));
    /* every child creation counts, sequential or not */
    IT_EQ(mk(a.zh, sub(p, "plain")), ZOK);
    IT_EQ(zoo_create(a.zh, sub(p, "n-"), "", 0, &ZOO_OPEN_ACL_UNSAFE,
                     ZOO_PERSISTENT_SEQUENTIAL, buf, sizeof buf), ZOK);
    IT_EQ_STR(buf, sub(p, "n-0000000005"));
    /* the counter is shared by the ephemeral sequential mode and any prefix */
    IT_EQ(zoo_create(a.zh, sub(p, "other-"), "", 0, &ZOO_OPEN_ACL_UNSAFE,
                     ZOO_EPHEMERAL_SEQUENTIAL, buf, sizeof buf), ZOK);
    IT_EQ_STR(buf, sub(p, "other-0000000006"));
    /* the suffix is appended to "parent/" too, and the prefix need not end in '-' */
    IT_EQ(zoo_create(a.zh, sub(p, ""), "", 0, &ZOO_OPEN_ACL_UNSAFE,
                     ZOO_PERSISTENT_SEQUENTIAL, buf, sizeof buf), ZOK);
    IT_EQ_STR(buf, sub(p, "0000000007"));
    IT_EQ(zoo_create(a.zh, sub(p, "x"), "", 0, &ZOO_OPEN_ACL_UNSAFE,
                     ZOO_PERSISTENT_SEQUENTIAL, buf, sizeof buf), ZOK);
    IT_EQ_STR(buf, sub(p, "x0000000008"));
    /* 9 creates and 1 delete: cversion counts both, numChildren what is left */
    IT_EQ(zoo_exists(a.zh, p, 0, &st), ZOK);
    IT_EQ(st.numChildren, 8);
    IT_EQ(st.cversion, 10);
    /* counters are per parent */
    IT_EQ(zoo_create(a.zh, sub(sub(p, "plain"), "n-"), "", 0, &ZOO_OPEN_ACL_UNSAFE,
                     ZOO_PERSISTENT_SEQUENTIAL, buf, sizeof buf), ZOK);
    IT_EQ_STR(buf, sub(sub(p, "plain"), "n-0000000000"));
done:
    zc_close(&a);
}

static void t_create_container(void)
{
    struct zc a = {0};
    const char *c = it_path("zkc", "cont");
    const char *c2 = it_path("zkc", "cont-unused");
    char buf[600];
    struct Stat st;
    struct zc_wctx w1 = {&a, 1};
    OPEN(a);
    IT_EQ(zoo_create2(a.zh, c, "d", 1, &ZOO_OPEN_ACL_UNSAFE, ZOO_CONTAINER, buf, sizeof buf,
                      &st), ZOK);
    IT_EQ_STR(buf, c);
    IT_EQ(st.ephemeralOwner, 0); /* the container marker is hidden from clients */
    IT_EQ(st.dataLength, 1);
    IT_EQ(zoo_create2(a.zh, c2, "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_CONTAINER, buf, sizeof buf,
                      &st), ZOK);
    /* containers may have children, even sequential and ephemeral ones */
    IT_EQ(mk(a.zh, sub(c, "kid")), ZOK);
    IT_EQ(zoo_create(a.zh, sub(c, "e-"), "", 0, &ZOO_OPEN_ACL_UNSAFE,
                     ZOO_EPHEMERAL_SEQUENTIAL, buf, sizeof buf), ZOK);
    IT_EQ_STR(buf, sub(c, "e-0000000001"));
    IT_EQ(zoo_wexists(a.zh, c, zc_watcher, &w1, &st), ZOK);
    IT_EQ(zoo_delete(a.zh, sub(c, "kid"), -1), ZOK);
    /* not removed while a child remains */
    it_sleep_ms(2500);
    IT_EQ(zoo_exists(a.zh, c, 0, &st), ZOK);
    IT_EQ(zoo_delete(a.zh, sub(c, "e-0000000001"), -1), ZOK);
    /* empty after having had children: the server deletes it (check interval 1 s) */
    EXPECT_EVENT(a, 10000, ZOO_DELETED_EVENT, c, 1);
    IT_EQ(zoo_exists(a.zh, c, 0, &st), ZNONODE);
    /* a container that never had a child stays */
    IT_EQ(zoo_exists(a.zh, c2, 0, &st), ZOK);
done:
    zc_close(&a);
}

static void t_create_ttl(void)
{
    struct zc a = {0};
    const char *t = it_path("zkc", "ttl");
    const char *t2 = it_path("zkc", "ttl-parent");
    const char *p = it_path("zkc", "ttl-seq");
    char buf[600];
    struct Stat st;
    struct zc_wctx w1 = {&a, 1}, w2 = {&a, 2};
    OPEN(a);
    IT_EQ(zoo_create2_ttl(a.zh, t, "x", 1, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT_WITH_TTL, 500,
                          buf, sizeof buf, &st), ZOK);
    IT_EQ_STR(buf, t);
    IT_EQ(st.ephemeralOwner, 0); /* the TTL encoding is hidden from clients */
    IT_EQ(zoo_create2_ttl(a.zh, t2, "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT_WITH_TTL, 500,
                          buf, sizeof buf, &st), ZOK);
    IT_EQ(mk(a.zh, sub(t2, "kid")), ZOK); /* TTL nodes may have children */
    IT_EQ(mk(a.zh, p), ZOK);
    IT_EQ(zoo_create2_ttl(a.zh, sub(p, "s-"), "", 0, &ZOO_OPEN_ACL_UNSAFE,
                          ZOO_PERSISTENT_SEQUENTIAL_WITH_TTL, 600000, buf, sizeof buf, &st),
          ZOK);
    IT_EQ_STR(buf, sub(p, "s-0000000000"));
    IT_EQ(zoo_create_ttl(a.zh, sub(p, "max"), "", 0, &ZOO_OPEN_ACL_UNSAFE,
                         ZOO_PERSISTENT_WITH_TTL, 1099511627775LL, buf, sizeof buf), ZOK);
    IT_EQ(zoo_wexists(a.zh, t, zc_watcher, &w1, &st), ZOK);
    EXPECT_EVENT(a, 10000, ZOO_DELETED_EVENT, t, 1);
    IT_EQ(zoo_exists(a.zh, t, 0, &st), ZNONODE);
    /* the one with a child outlived its TTL; it goes once the child is gone */
    IT_EQ(zoo_wexists(a.zh, t2, zc_watcher, &w2, &st), ZOK);
    IT_EQ(zoo_delete(a.zh, sub(t2, "kid"), -1), ZOK);
    EXPECT_EVENT(a, 10000, ZOO_DELETED_EVENT, t2, 2);
    /* a long TTL is not expired */
    IT_EQ(zoo_exists(a.zh, sub(p, "s-0000000000"), 0, &st), ZOK);
done:
    zc_close(&a);
}

/* --- errors for bad input --------------------------------------------------------------- */

static void t_create_errors(void)
{
    struct zc a = {0};
    const char *p = it_path("zkc", "cerr");
    /* Invalid paths the C client does not catch (it only rejects bytes 0x01-0x1e and NUL):
     * the server's full validation must. */
    static const char *bad[] = {
        "a\x1f",         /* last C0 control */
        "a\x7f",         /* DEL */
        "a\xc2\x80",     /* U+0080, C1 control */
        "a\xc2\x9f",     /* U+009F */
        "a\xee\x80\x80", /* U+E000, private use */
        "a\xef\xbf\xbf", /* U+FFFF */
        "a\xef\xbf\xb0", /* U+FFF0 */
        "a\xf0\x9f\x98\x80", /* outside the BMP (surrogate pair) */
    };
    static const char *good[] = {
        "\xc3\xa9",     /* é */
        "with space",
        ".a", "a.", "...",
        "a\xc2\xa0",   /* U+00A0 */
        "a\xef\xbf\xaf", /* U+FFEF */
    };
    OPEN(a);
    IT_EQ(mk(a.zh, p), ZOK);
    IT_EQ(mk(a.zh, p), ZNODEEXISTS);
    IT_EQ(mk(a.zh, "/"), ZNODEEXISTS);
    IT_EQ(mk(a.zh, sub(p, "missing/child")), ZNONODE);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = mk(a.zh, sub(p, bad[i]));
        IT_CHECKF(rc == ZBADARGUMENTS, "create of bad path #%zu: rc %d, want %d", i, rc,
                  ZBADARGUMENTS);
        rc = zoo_set(a.zh, sub(p, bad[i]), "x", 1, -1);
        IT_CHECKF(rc == ZBADARGUMENTS, "set of bad path #%zu: rc %d, want %d", i, rc,
                  ZBADARGUMENTS);
    }
    /* the parent is looked up before the name is validated */
    IT_EQ(mk(a.zh, sub(p, "missing/a\x7f")), ZNONODE);
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        int rc = mk(a.zh, sub(p, good[i]));
        IT_CHECKF(rc == ZOK, "create of valid path #%zu: rc %d", i, rc);
        IT_EQ(zoo_exists(a.zh, sub(p, good[i]), 0, NULL), ZOK);
    }
    /* unknown create modes */
    IT_EQ(zoo_create(a.zh, sub(p, "m7"), "", 0, &ZOO_OPEN_ACL_UNSAFE, 7, NULL, 0),
          ZBADARGUMENTS);
    IT_EQ(zoo_create(a.zh, sub(p, "m-1"), "", 0, &ZOO_OPEN_ACL_UNSAFE, -1, NULL, 0),
          ZBADARGUMENTS);
    /* TTL out of range (this C client already refuses these itself; raw_proto checks the
     * server's answer) */
    IT_EQ(zoo_create_ttl(a.zh, sub(p, "ttl0"), "", 0, &ZOO_OPEN_ACL_UNSAFE,
                         ZOO_PERSISTENT_WITH_TTL, 0, NULL, 0), ZBADARGUMENTS);
    IT_EQ(zoo_create_ttl(a.zh, sub(p, "ttlbig"), "", 0, &ZOO_OPEN_ACL_UNSAFE,
                         ZOO_PERSISTENT_WITH_TTL, 1099511627776LL, NULL, 0), ZBADARGUMENTS);
    IT_EQ(zoo_exists(a.zh, sub(p, "ttl0"), 0, NULL), ZNONODE);
done:
    zc_close(&a);
}

static void t_delete_versions(void)
{
    struct zc a = {0};
    const char *p = it_path("zkc", "del");
    struct Stat st;
    static const char *special[] = {"/", "/zookeeper", "/zookeeper/config",
                                    "/zookeeper/quota"};
    OPEN(a);
    IT_EQ(mk(a.zh, p), ZOK);
    IT_EQ(mk(a.zh, sub(p, "v")), ZOK);
    IT_EQ(zoo_set(a.zh, sub(p, "v"), "1", 1, -1), ZOK);
    IT_EQ(zoo_set(a.zh, sub(p, "v"), "2", 1, -1), ZOK);
    IT_EQ(zoo_delete(a.zh, sub(p, "v"), 0), ZBADVERSION);
    IT_EQ(zoo_delete(a.zh, sub(p, "v"), 3), ZBADVERSION);
    IT_EQ(zoo_delete(a.zh, sub(p, "v"), 2), ZOK);
    IT_EQ(zoo_delete(a.zh, sub(p, "v"), 2), ZNONODE);
    IT_EQ(zoo_delete(a.zh, sub(p, "missing/x"), -1), ZNONODE);
    IT_EQ(mk(a.zh, sub(p, "any")), ZOK);
    IT_EQ(zoo_delete(a.zh, sub(p, "any"), -1), ZOK);
    /* NotEmpty, and the version check comes first */
    IT_EQ(mk(a.zh, sub(p, "full")), ZOK);
    IT_EQ(mk(a.zh, sub(sub(p, "full"), "kid")), ZOK);
    IT_EQ(zoo_delete(a.zh, sub(p, "full"), 0), ZNOTEMPTY);
    IT_EQ(zoo_delete(a.zh, sub(p, "full"), 7), ZBADVERSION);
    IT_EQ(zoo_exists(a.zh, sub(p, "full"), 0, &st), ZOK);
    /* system nodes cannot be deleted */
    for (size_t i = 0; i < sizeof special / sizeof special[0]; i++) {
        int rc = zoo_delete(a.zh, special[i], -1);
        IT_CHECKF(rc == ZBADARGUMENTS, "delete %s: rc %d, want %d", special[i], rc,
                  ZBADARGUMENTS);
    }
    IT_EQ(zoo_exists(a.zh, "/zookeeper", 0, &st), ZOK);
done:
    zc_close(&a);
}

/* --- data and stat ------------------------------------------------------------------------ */

static void t_get_set_versions(void)
{
    struct zc a = {0};
    const char *p = it_path("zkc", "data");
    char buf[64];
    int len;
    struct Stat st0, st1, st2;
    OPEN(a);
    IT_EQ(zoo_create(a.zh, p, "v0", 2, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT, NULL, 0), ZOK);
    IT_EQ(zoo_exists(a.zh, p, 0, &st0), ZOK);
    it_sleep_ms(20); /* so mtime can move past ctime */
    IT_EQ(zoo_set2(a.zh, p, "value1", 6, 0, &st1), ZOK);
    IT_EQ(st1.version, 1);
    IT_EQ(st1.czxid, st0.czxid);
    IT_CHECK(st1.mzxid > st0.mzxid);
    IT_EQ(st1.ctime, st0.ctime);
    IT_CHECK(st1.mtime > st0.mtime);
    IT_EQ(st1.dataLength, 6);
    IT_EQ(st1.pzxid, st0.pzxid); /* data changes do not touch pzxid */
    IT_EQ(st1.cversion, 0);
    IT_EQ(st1.aversion, 0);
    IT_EQ(zoo_set(a.zh, p, "stale", 5, 0), ZBADVERSION);
    IT_EQ(zoo_set(a.zh, p, "stale", 5, 5), ZBADVERSION);
    len = sizeof buf;
    IT_EQ(zoo_get(a.zh, p, 0, buf, &len, &st2), ZOK);
    IT_EQ(len, 6);
    IT_CHECK(memcmp(buf, "value1", 6) == 0);
    IT_CHECK(stat_same(&st1, &st2));
    /* version -1 skips the check but still counts */
    IT_EQ(zoo_set2(a.zh, p, "", 0, -1, &st2), ZOK);
    IT_EQ(st2.version, 2);
    IT_EQ(st2.dataLength, 0);
    IT_EQ(zoo_set2(a.zh, p, NULL, -1, 2, &st2), ZOK);
    IT_EQ(st2.version, 3);
    len = sizeof buf;
    IT_EQ(zoo_get(a.zh, p, 0, buf, &len, &st2), ZOK);
    IT_EQ(len, -1);
    IT_EQ(zoo_set(a.zh, sub(p, "missing"), "x", 1, -1), ZNONODE);
    len = sizeof buf;
    IT_EQ(zoo_get(a.zh, sub(p, "missing"), 0, buf, &len, &st2), ZNONODE);
    IT_EQ(zoo_exists(a.zh, sub(p, "missing"), 0, &st2), ZNONODE);
done:
    zc_close(&a);
}

static void t_large_data(void)
{
    struct zc a = {0};
    const char *p = it_path("zkc", "big");
    enum { N = 1000000 };
    char *data = malloc(N), *back = malloc(N + 16);
    int len;
    struct Stat st;
    IT_CHECK(data != NULL && back != NULL);
    for (int i = 0; i < N; i++)
        data[i] = (char)('a' + i % 26);
    OPEN(a);
    IT_EQ(zoo_create(a.zh, p, data, N, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT, NULL, 0), ZOK);
    len = N + 16;
    IT_EQ(zoo_get(a.zh, p, 0, back, &len, &st), ZOK);
    IT_EQ(len, N);
    IT_EQ(st.dataLength, N);
    IT_CHECK(memcmp(data, back, N) == 0);
done:
    zc_close(&a);
    free(data);
    free(back);
}

static void t_parent_cversion_pzxid(void)
{
    struct zc a = {0};
    const char *p = it_path("zkc", "cver");
    struct Stat p0, p1, p2, p3, c1;
    OPEN(a);
    IT_EQ(mk(a.zh, p), ZOK);
    IT_EQ(zoo_exists(a.zh, p, 0, &p0), ZOK);
    IT_EQ(p0.cversion, 0);
    IT_EQ(mk(a.zh, sub(p, "c1")), ZOK);
    IT_EQ(zoo_exists(a.zh, sub(p, "c1"), 0, &c1), ZOK);
    IT_EQ(zoo_exists(a.zh, p, 0, &p1), ZOK);
    IT_EQ(p1.cversion, 1);
    IT_EQ(p1.numChildren, 1);
    IT_EQ(p1.pzxid, c1.czxid);
    IT_EQ(p1.mzxid, p0.mzxid); /* child changes are not data changes */
    IT_EQ(p1.version, 0);
    /* a child's data change leaves the parent alone */
    IT_EQ(zoo_set(a.zh, sub(p, "c1"), "x", 1, -1), ZOK);
    IT_EQ(zoo_exists(a.zh, p, 0, &p2), ZOK);
    IT_CHECK(stat_same(&p1, &p2));
    IT_EQ(zoo_delete(a.zh, sub(p, "c1"), -1), ZOK);
    IT_EQ(zoo_exists(a.zh, p, 0, &p3), ZOK);
    IT_EQ(p3.cversion, 2); /* deletes raise cversion too */
    IT_EQ(p3.numChildren, 0);
    IT_CHECK(p3.pzxid > p1.pzxid);
    IT_EQ(p3.mzxid, p0.mzxid);
    /* a failed child create changes nothing */
    IT_EQ(mk(a.zh, sub(p, "c2")), ZOK);
    IT_EQ(mk(a.zh, sub(p, "c2")), ZNODEEXISTS);
    IT_EQ(zoo_exists(a.zh, p, 0, &p2), ZOK);
    IT_EQ(p2.cversion, 3);
    IT_EQ(p2.numChildren, 1);
done:
    zc_close(&a);
}

static void t_children(void)
{
    struct zc a = {0};
    const char *p = it_path("zkc", "kids");
    char joined[256];
    struct String_vector v = {0, NULL};
    struct Stat st, st2;
    OPEN(a);
    IT_EQ(mk(a.zh, p), ZOK);
    IT_EQ(children_joined(a.zh, p, joined, sizeof joined), ZOK);
    IT_EQ_STR(joined, "");
    IT_EQ(mk(a.zh, sub(p, "c")), ZOK);
    IT_EQ(mk(a.zh, sub(p, "a")), ZOK);
    IT_EQ(mk(a.zh, sub(p, "b")), ZOK);
    IT_EQ(mk(a.zh, sub(sub(p, "a"), "deep")), ZOK);
    IT_EQ(children_joined(a.zh, p, joined, sizeof joined), ZOK);
    IT_EQ_STR(joined, "a,b,c"); /* names only, direct children only */
    IT_EQ(zoo_get_children2(a.zh, p, 0, &v, &st), ZOK);
    IT_EQ(v.count, 3);
    IT_EQ(st.numChildren, 3);
    IT_EQ(st.cversion, 3);
    IT_EQ(zoo_exists(a.zh, p, 0, &st2), ZOK);
    IT_CHECK(stat_same(&st, &st2));
    IT_EQ(zoo_get_children(a.zh, sub(p, "missing"), 0, &v), ZNONODE);
    IT_EQ(zoo_get_children2(a.zh, sub(p, "missing"), 0, &v, &st), ZNONODE);
    /* the root lists /zookeeper */
    IT_EQ(zoo_get_children(a.zh, "/", 0, &v), ZOK);
    {
        int found = 0;
        for (int i = 0; i < v.count; i++)
            found |= strcmp(v.data[i], "zookeeper") == 0;
        IT_CHECK(found);
    }
done:
    deallocate_String_vector(&v);
    zc_close(&a);
}

/* --- watches ------------------------------------------------------------------------------ */

static void t_watch_exists_created(void)
{
    struct zc a = {0}, b = {0};
    const char *p = it_path("zkc", "wcreated");
    struct Stat st;
    OPEN(a);
    OPEN(b);
    /* NoNode, but the watch stays */
    IT_EQ(zoo_exists(a.zh, p, 1, &st), ZNONODE);
    IT_EQ(mk(b.zh, p), ZOK);
    EXPECT_EVENT(a, 5000, ZOO_CREATED_EVENT, p, 0);
    /* one-shot: later changes are not reported */
    IT_EQ(zoo_set(b.zh, p, "x", 1, -1), ZOK);
    IT_EQ(zoo_delete(b.zh, p, -1), ZOK);
    IT_EQ(zc_barrier(&a), ZOK);
    EXPECT_NO_EVENT(a, 300);
    /* an exists watch on an existing node reports data change and deletion */
    IT_EQ(mk(b.zh, p), ZOK);
    IT_EQ(zoo_exists(a.zh, p, 1, &st), ZOK);
    IT_EQ(zoo_set(b.zh, p, "y", 1, -1), ZOK);
    EXPECT_EVENT(a, 5000, ZOO_CHANGED_EVENT, p, 0);
    IT_EQ(zoo_exists(a.zh, p, 1, &st), ZOK);
    IT_EQ(zoo_delete(b.zh, p, -1), ZOK);
    EXPECT_EVENT(a, 5000, ZOO_DELETED_EVENT, p, 0);
done:
    zc_close(&a);
    zc_close(&b);
}

static void t_watch_data_oneshot(void)
{
    struct zc a = {0}, b = {0};
    const char *p = it_path("zkc", "wdata");
    char buf[16];
    int len = sizeof buf;
    struct Stat st;
    struct zc_wctx w1 = {&a, 1};
    OPEN(a);
    OPEN(b);
    IT_EQ(mk(a.zh, p), ZOK);
    IT_EQ(zoo_wget(a.zh, p, zc_watcher, &w1, buf, &len, &st), ZOK);
    IT_EQ(zoo_set(b.zh, p, "1", 1, -1), ZOK);
    IT_EQ(zoo_set(b.zh, p, "2", 1, -1), ZOK);
    EXPECT_EVENT(a, 5000, ZOO_CHANGED_EVENT, p, 1);
    IT_EQ(zc_barrier(&a), ZOK);
    EXPECT_NO_EVENT(a, 300);
    /* re-registered, it fires again; the writer's own session gets it too */
    len = sizeof buf;
    IT_EQ(zoo_wget(a.zh, p, zc_watcher, &w1, buf, &len, &st), ZOK);
    IT_EQ(zoo_set(a.zh, p, "3", 1, -1), ZOK);
    EXPECT_EVENT(a, 5000, ZOO_CHANGED_EVENT, p, 1);
    /* getData on a missing node leaves no watch behind */
    len = sizeof buf;
    IT_EQ(zoo_wget(a.zh, sub(p, "nope"), zc_watcher, &w1, buf, &len, &st), ZNONODE);
    IT_EQ(mk(b.zh, sub(p, "nope")), ZOK);
    IT_EQ(zc_barrier(&a), ZOK);
    EXPECT_NO_EVENT(a, 300);
    /* setACL fires no watch */
    len = sizeof buf;
    IT_EQ(zoo_wget(a.zh, p, zc_watcher, &w1, buf, &len, &st), ZOK);
    IT_EQ(zoo_set_acl(b.zh, p, -1, &ZOO_OPEN_ACL_UNSAFE), ZOK);
    IT_EQ(zc_barrier(&a), ZOK);
    EXPECT_NO_EVENT(a, 300);
done:
    zc_close(&a);
    zc_close(&b);
}

static void t_watch_children(void)
{
    struct zc a = {0}, b = {0};
    const char *p = it_path("zkc", "wkids");
    struct String_vector v = {0, NULL};
    struct Stat st;
    struct zc_wctx w1 = {&a, 1};
    OPEN(a);
    OPEN(b);
    IT_EQ(mk(a.zh, p), ZOK);
    IT_EQ(zoo_wget_children(a.zh, p, zc_watcher, &w1, &v), ZOK);
    deallocate_String_vector(&v);
    /* data changes of the parent do not fire child watches */
    IT_EQ(zoo_set(b.zh, p, "x", 1, -1), ZOK);
    IT_EQ(zc_barrier(&a), ZOK);
    EXPECT_NO_EVENT(a, 300);
    IT_EQ(mk(b.zh, sub(p, "k1")), ZOK);
    EXPECT_EVENT(a, 5000, ZOO_CHILD_EVENT, p, 1);
    IT_EQ(mk(b.zh, sub(p, "k2")), ZOK);
    IT_EQ(zc_barrier(&a), ZOK);
    EXPECT_NO_EVENT(a, 300); /* one-shot */
    /* child deletion fires it; grandchildren changes do not */
    IT_EQ(zoo_wget_children2(a.zh, p, zc_watcher, &w1, &v, &st), ZOK);
    deallocate_String_vector(&v);
    IT_EQ(mk(b.zh, sub(sub(p, "k1"), "g")), ZOK);
    IT_EQ(zc_barrier(&a), ZOK);
    EXPECT_NO_EVENT(a, 300);
    IT_EQ(zoo_delete(b.zh, sub(p, "k2"), -1), ZOK);
    EXPECT_EVENT(a, 5000, ZOO_CHILD_EVENT, p, 1);
    /* getChildren on a missing node leaves no watch */
    IT_EQ(zoo_wget_children(a.zh, sub(p, "nope"), zc_watcher, &w1, &v), ZNONODE);
    IT_EQ(mk(b.zh, sub(p, "nope")), ZOK);
    IT_EQ(mk(b.zh, sub(sub(p, "nope"), "x")), ZOK);
    IT_EQ(zc_barrier(&a), ZOK);
    /* k... creation under p fired nothing either: the parent watch was consumed */
    EXPECT_NO_EVENT(a, 300);
done:
    zc_close(&a);
    zc_close(&b);
}

static void t_watch_delete(void)
{
    struct zc a = {0}, b = {0};
    const char *p = it_path("zkc", "wdel");
    const char *n = sub(p, "n");
    char buf[16];
    int len = sizeof buf, seen = 0;
    struct Stat st;
    struct String_vector v = {0, NULL};
    struct zc_wctx w1 = {&a, 1}, w2 = {&a, 2}, w3 = {&a, 3}, w4 = {&a, 4};
    struct zc_event ev;
    OPEN(a);
    OPEN(b);
    IT_EQ(mk(a.zh, p), ZOK);
    IT_EQ(mk(a.zh, n), ZOK);
    IT_EQ(zoo_wget(a.zh, n, zc_watcher, &w1, buf, &len, &st), ZOK);
    IT_EQ(zoo_wget_children(a.zh, n, zc_watcher, &w2, &v), ZOK);
    deallocate_String_vector(&v);
    IT_EQ(zoo_wexists(a.zh, n, zc_watcher, &w3, &st), ZOK);
    IT_EQ(zoo_wget_children(a.zh, p, zc_watcher, &w4, &v), ZOK);
    deallocate_String_vector(&v);
    IT_EQ(zoo_delete(b.zh, n, -1), ZOK);
    /* NodeDeleted reaches the data, child and exists watchers of the node; the parent's child
     * watcher gets NodeChildrenChanged.  The client's fan-out order is not specified. */
    for (int i = 0; i < 4; i++) {
        IT_CHECKF(zc_next_event(&a, 5000, &ev), "only %d of 4 events", i);
        if (ev.tag == 4) {
            IT_EQ(ev.type, ZOO_CHILD_EVENT);
            IT_EQ_STR(ev.path, p);
        } else {
            IT_EQ(ev.type, ZOO_DELETED_EVENT);
            IT_EQ_STR(ev.path, n);
        }
        IT_CHECKF(!(seen & (1 << ev.tag)), "tag %d fired twice", ev.tag);
        seen |= 1 << ev.tag;
    }
    IT_EQ(seen, 0x1e);
    IT_EQ(mk(b.zh, n), ZOK);
    IT_EQ(zc_barrier(&a), ZOK);
    EXPECT_NO_EVENT(a, 300);
done:
    zc_close(&a);
    zc_close(&b);
}

static void t_remove_watches(void)
{
    struct zc a = {0}, b = {0};
    const char *p = it_path("zkc", "rmw");
    struct Stat st;
    struct String_vector v = {0, NULL};
    struct zc_wctx w1 = {&a, 1}, w2 = {&a, 2};
    struct zc_event ev;
    OPEN(a);
    OPEN(b);
    IT_EQ(mk(a.zh, p), ZOK);
    IT_EQ(zoo_wexists(a.zh, p, zc_watcher, &w1, &st), ZOK);
    IT_EQ(zoo_remove_watches(a.zh, p, ZWATCHTYPE_DATA, zc_watcher, &w1, 0), ZOK);
    IT_EQ(zoo_wget_children(a.zh, p, zc_watcher, &w2, &v), ZOK);
    deallocate_String_vector(&v);
    IT_EQ(zoo_remove_watches(a.zh, p, ZWATCHTYPE_CHILD, zc_watcher, &w2, 0), ZOK);
    IT_EQ(zoo_set(b.zh, p, "x", 1, -1), ZOK);
    IT_EQ(mk(b.zh, sub(p, "k")), ZOK);
    IT_EQ(zc_barrier(&a), ZOK);
    /* the client may report the removal locally; no change event may follow */
    while (zc_next_event(&a, 300, &ev))
        IT_CHECKF(ev.type != ZOO_CHANGED_EVENT && ev.type != ZOO_CHILD_EVENT,
                  "removed watch fired: %s %s", zc_event_name(ev.type), ev.path);
    /* ANY removes both kinds */
    IT_EQ(zoo_wexists(a.zh, p, zc_watcher, &w1, &st), ZOK);
    IT_EQ(zoo_wget_children(a.zh, p, zc_watcher, &w2, &v), ZOK);
    deallocate_String_vector(&v);
    IT_EQ(zoo_remove_watches(a.zh, p, ZWATCHTYPE_ANY, NULL, NULL, 0), ZOK);
    IT_EQ(zoo_delete(b.zh, sub(p, "k"), -1), ZOK);
    IT_EQ(zoo_delete(b.zh, p, -1), ZOK);
    IT_EQ(zc_barrier(&a), ZOK);
    while (zc_next_event(&a, 300, &ev))
        IT_CHECKF(ev.type != ZOO_DELETED_EVENT && ev.type != ZOO_CHILD_EVENT,
                  "removed watch fired: %s %s", zc_event_name(ev.type), ev.path);
    /* nothing left to remove */
    IT_EQ(zoo_remove_watches(a.zh, p, ZWATCHTYPE_ANY, NULL, NULL, 0), ZNOWATCHER);
done:
    zc_close(&a);
    zc_close(&b);
}

/* --- multi ---------------------------------------------------------------------------------- */

static void t_multi_success(void)
{
    struct zc a = {0}, b = {0};
    const char *p = it_path("zkc", "multi");
    const char *m1 = sub(p, "m1");
    char b0[600], b1[600], buf[16];
    int len = sizeof buf;
    struct Stat setst, st, kst;
    zoo_op_t ops[6];
    zoo_op_result_t res[6];
    struct zc_wctx w1 = {&b, 1};
    OPEN(a);
    OPEN(b);
    IT_EQ(mk(a.zh, p), ZOK);
    IT_EQ(zoo_wexists(b.zh, m1, zc_watcher, &w1, &st), ZNONODE);
    zoo_create_op_init(&ops[0], m1, "a", 1, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT, b0,
                       sizeof b0);
    zoo_create_op_init(&ops[1], sub(m1, "s-"), "", 0, &ZOO_OPEN_ACL_UNSAFE,
                       ZOO_PERSISTENT_SEQUENTIAL, b1, sizeof b1);
    zoo_set_op_init(&ops[2], m1, "bb", 2, 0, &setst);
    zoo_check_op_init(&ops[3], m1, 1);
    zoo_create_op_init(&ops[4], sub(p, "m2"), "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT,
                       NULL, 0);
    zoo_delete_op_init(&ops[5], sub(p, "m2"), 0);
    IT_EQ(zoo_multi(a.zh, 6, ops, res), ZOK);
    for (int i = 0; i < 6; i++)
        IT_EQ(res[i].err, ZOK);
    IT_EQ_STR(b0, m1);
    IT_EQ_STR(b1, sub(m1, "s-0000000000"));
    IT_EQ(setst.version, 1);
    IT_EQ(setst.dataLength, 2);
    IT_EQ(zoo_get(a.zh, m1, 0, buf, &len, &st), ZOK);
    IT_EQ(len, 2);
    IT_CHECK(memcmp(buf, "bb", 2) == 0);
    IT_CHECK(stat_same(&st, &setst));
    IT_EQ(zoo_exists(a.zh, sub(p, "m2"), 0, NULL), ZNONODE);
    /* the whole multi is one transaction: one zxid for all its changes */
    IT_EQ(zoo_exists(a.zh, sub(m1, "s-0000000000"), 0, &kst), ZOK);
    IT_EQ(st.czxid, kst.czxid);
    IT_EQ(st.mzxid, st.czxid);
    IT_EQ(st.pzxid, st.czxid);
    /* watches fire for applied sub-ops */
    EXPECT_EVENT(b, 5000, ZOO_CREATED_EVENT, m1, 1);
    /* an empty multi is valid */
    IT_EQ(zoo_multi(a.zh, 0, ops, res), ZOK);
done:
    zc_close(&a);
    zc_close(&b);
}

static void t_multi_failure(void)
{
    struct zc a = {0}, b = {0};
    const char *p = it_path("zkc", "multifail");
    const char *x = sub(p, "x");
    char buf[16];
    int len = sizeof buf;
    struct Stat st, st0;
    zoo_op_t ops[3];
    zoo_op_result_t res[3];
    struct zc_wctx w1 = {&b, 1};
    OPEN(a);
    OPEN(b);
    IT_EQ(mk(a.zh, p), ZOK);
    IT_EQ(zoo_create(a.zh, x, "orig", 4, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT, NULL, 0), ZOK);
    IT_EQ(zoo_exists(a.zh, x, 0, &st0), ZOK);
    len = sizeof buf;
    IT_EQ(zoo_wget(b.zh, x, zc_watcher, &w1, buf, &len, &st), ZOK);

    /* ops before the failing one report 0, after it -2, nothing is applied */
    zoo_create_op_init(&ops[0], sub(p, "f1"), "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT,
                       NULL, 0);
    zoo_delete_op_init(&ops[1], sub(p, "missing"), -1);
    zoo_create_op_init(&ops[2], sub(p, "f3"), "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT,
                       NULL, 0);
    IT_EQ(zoo_multi(a.zh, 3, ops, res), ZNONODE);
    IT_EQ(res[0].err, ZOK);
    IT_EQ(res[1].err, ZNONODE);
    IT_EQ(res[2].err, ZRUNTIMEINCONSISTENCY);
    IT_EQ(zoo_exists(a.zh, sub(p, "f1"), 0, NULL), ZNONODE);
    IT_EQ(zoo_exists(a.zh, sub(p, "f3"), 0, NULL), ZNONODE);

    /* sub-ops see earlier ones: check after set sees the new version */
    zoo_set_op_init(&ops[0], x, "new", 3, -1, NULL);
    zoo_check_op_init(&ops[1], x, 0);
    IT_EQ(zoo_multi(a.zh, 2, ops, res), ZBADVERSION);
    IT_EQ(res[0].err, ZOK);
    IT_EQ(res[1].err, ZBADVERSION);
    len = sizeof buf;
    IT_EQ(zoo_get(a.zh, x, 0, buf, &len, &st), ZOK);
    IT_EQ(len, 4);
    IT_CHECK(stat_same(&st, &st0));

    /* failing first op */
    zoo_create_op_init(&ops[0], x, "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT, NULL, 0);
    zoo_set_op_init(&ops[1], x, "z", 1, -1, NULL);
    IT_EQ(zoo_multi(a.zh, 2, ops, res), ZNODEEXISTS);
    IT_EQ(res[0].err, ZNODEEXISTS);
    IT_EQ(res[1].err, ZRUNTIMEINCONSISTENCY);

    /* a failed multi fires no watches */
    IT_EQ(zc_barrier(&b), ZOK);
    EXPECT_NO_EVENT(b, 300);

    /* creating a parent and its child in one multi works */
    zoo_create_op_init(&ops[0], sub(p, "np"), "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT,
                       NULL, 0);
    zoo_create_op_init(&ops[1], sub(sub(p, "np"), "c"), "", 0, &ZOO_OPEN_ACL_UNSAFE,
                       ZOO_PERSISTENT, NULL, 0);
    IT_EQ(zoo_multi(a.zh, 2, ops, res), ZOK);
    IT_EQ(zoo_exists(a.zh, sub(sub(p, "np"), "c"), 0, NULL), ZOK);
    /* other error codes come through per op: NotEmpty, BadVersion on delete */
    zoo_delete_op_init(&ops[0], sub(p, "np"), -1);
    IT_EQ(zoo_multi(a.zh, 1, ops, res), ZNOTEMPTY);
    IT_EQ(res[0].err, ZNOTEMPTY);
    zoo_delete_op_init(&ops[0], sub(sub(p, "np"), "c"), 3);
    IT_EQ(zoo_multi(a.zh, 1, ops, res), ZBADVERSION);
    IT_EQ(res[0].err, ZBADVERSION);
done:
    zc_close(&a);
    zc_close(&b);
}

/* --- misc ---------------------------------------------------------------------------------- */

static void t_sync(void)
{
    struct zc a = {0};
    const char *p = it_path("zkc", "sync");
    char out[600];
    OPEN(a);
    IT_EQ(mk(a.zh, p), ZOK);
    IT_EQ(zc_sync(&a, p, out, sizeof out), ZOK);
    IT_EQ_STR(out, p);
    /* the path is not checked */
    IT_EQ(zc_sync(&a, sub(p, "missing"), out, sizeof out), ZOK);
    IT_EQ_STR(out, sub(p, "missing"));
done:
    zc_close(&a);
}

static void t_system_nodes(void)
{
    struct zc a = {0};
    char joined[256];
    char buf[64];
    int len = sizeof buf;
    struct Stat st;
    OPEN(a);
    IT_EQ(zoo_exists(a.zh, "/", 0, &st), ZOK);
    IT_EQ(st.czxid, 0);
    IT_EQ(st.ephemeralOwner, 0);
    IT_EQ(zoo_exists(a.zh, "/zookeeper", 0, &st), ZOK);
    IT_EQ(st.czxid, 0);
    IT_EQ(children_joined(a.zh, "/zookeeper", joined, sizeof joined), ZOK);
    IT_EQ_STR(joined, "config,quota");
    /* getConfig reads /zookeeper/config: empty in standalone, aversion -1 */
    IT_EQ(zoo_getconfig(a.zh, 0, buf, &len, &st), ZOK);
    IT_CHECK(len <= 0);
    IT_EQ(st.aversion, -1);
done:
    zc_close(&a);
}

static const struct it_test tests[] = {
    {"create_persistent_stat", t_create_persistent_stat, 0},
    {"create2_stat", t_create2_stat, 0},
    {"create_ephemeral", t_create_ephemeral, 0},
    {"create_sequential", t_create_sequential, 0},
    {"create_container", t_create_container, 0},
    {"create_ttl", t_create_ttl, 0},
    {"create_errors", t_create_errors, 0},
    {"delete_versions", t_delete_versions, 0},
    {"get_set_versions", t_get_set_versions, 0},
    {"large_data", t_large_data, 0},
    {"parent_cversion_pzxid", t_parent_cversion_pzxid, 0},
    {"children", t_children, 0},
    {"watch_exists_created", t_watch_exists_created, 0},
    {"watch_data_oneshot", t_watch_data_oneshot, 0},
    {"watch_children", t_watch_children, 0},
    {"watch_delete", t_watch_delete, 0},
    {"remove_watches", t_remove_watches, 0},
    {"multi_success", t_multi_success, 0},
    {"multi_failure", t_multi_failure, 0},
    {"sync", t_sync, 0},
    {"system_nodes", t_system_nodes, 0},
    {"acl_get_set", t_acl_get_set, 0},
    {"acl_invalid", t_acl_invalid, 0},
    {"auth_digest", t_auth_digest, 0},
    {"auth_digest_masking", t_auth_digest_masking, 0},
    {"auth_unknown_scheme", t_auth_unknown_scheme, 0},
    {"acl_ip", t_acl_ip, 0},
    {"session_timeout_negotiation", t_session_timeout_negotiation, 0},
    {"session_keepalive", t_session_keepalive, 0},
    {"session_close_removes_ephemerals", t_session_close_removes_ephemerals, 0},
    {"session_expiry", t_session_expiry, 0},
    {"session_reconnect", t_session_reconnect, 0},
};

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--hold") == 0)
        return zkc_hold_main(argc, argv);
    zc_quiet();
    return it_main(argc, argv, tests, sizeof tests / sizeof tests[0]);
}
