/* zkdiff: the differential-test driver.  It runs one fixed script of operations (successful and
 * failing: every error code a client can reach, all node modes, sequential names, multi,
 * ACLs and auth, every kind of watch and their events, session close and expiry) against one
 * server and prints a normalized transcript on stdout.  diff_test.sh runs it against Apache
 * ZooKeeper and against the server under test and diffs the transcripts.
 *
 * The transcript must depend only on behaviour a client can observe, never on timing or on
 * values a server may choose freely: no zxids or times (only relations such as "mzxid >
 * czxid"), session ids replaced by names, child lists sorted, events collected after a round
 * trip on each session so each session's events appear in order after the step that caused
 * them.  Two runs against two fresh Apache servers give identical transcripts (diff_zk).
 *
 * Usage: zkdiff HOST:PORT > transcript.  Exit status 0 unless the script could not run
 * (connection failure); behaviour differences show in the transcript only. */
#include "zkdiff.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *zd_hostport;

static struct zc A, B;
static struct zc *const both[2] = {&A, &B};
static const char *const both_names[2] = {"A", "B"};

#define DRAIN() zd_drain(both, both_names, 2)
#define P(rel) ZD_ROOT rel

/* --- transcript helpers --------------------------------------------------------------- */

void zd_out(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
}

static struct {
    int64_t sid;
    char name[16];
} names[16];
static int nnames;

void zd_name_session(int64_t sid, const char *name)
{
    if (nnames < 16) {
        names[nnames].sid = sid;
        snprintf(names[nnames].name, sizeof names[0].name, "%s", name);
        nnames++;
    }
}

const char *zd_session_name(int64_t sid)
{
    if (sid == 0)
        return "-";
    for (int i = 0; i < nnames; i++)
        if (names[i].sid == sid)
            return names[i].name;
    return "?";
}

static const char *stat_fmt(int32_t v, int32_t cv, int32_t av, int64_t eph, int32_t dl,
                            int32_t nc, int64_t cz, int64_t mz, int64_t pz)
{
    static char bufs[4][160];
    static int slot;
    char *b = bufs[slot++ % 4];
    snprintf(b, sizeof bufs[0], "{v=%d cv=%d av=%d owner=%s len=%d kids=%d m%sc p%sc}", v, cv,
             av, zd_session_name(eph), dl, nc,
             mz == cz ? "=" : (mz > cz ? ">" : "<"),
             pz == cz ? "=" : (pz > cz ? ">" : "<"));
    return b;
}

const char *zd_stat(const struct Stat *s)
{
    return stat_fmt(s->version, s->cversion, s->aversion, s->ephemeralOwner, s->dataLength,
                    s->numChildren, s->czxid, s->mzxid, s->pzxid);
}

const char *zd_rstat(const struct rz_stat *s)
{
    return stat_fmt(s->version, s->cversion, s->aversion, s->ephemeral_owner, s->data_length,
                    s->num_children, s->czxid, s->mzxid, s->pzxid);
}

/* ZooKeeper's names for the codes a server can send (KeeperException.Code). */
static const char *code_name(int rc)
{
    switch (rc) {
    case -1: return "SystemError";
    case -2: return "RuntimeInconsistency";
    case -3: return "DataInconsistency";
    case -4: return "ConnectionLoss";
    case -5: return "MarshallingError";
    case -6: return "Unimplemented";
    case -7: return "OperationTimeout";
    case -8: return "BadArguments";
    case -101: return "NoNode";
    case -102: return "NoAuth";
    case -103: return "BadVersion";
    case -108: return "NoChildrenForEphemerals";
    case -110: return "NodeExists";
    case -111: return "NotEmpty";
    case -112: return "SessionExpired";
    case -114: return "InvalidACL";
    case -115: return "AuthFailed";
    case -118: return "SessionMoved";
    case -119: return "NotReadOnly";
    case -121: return "NoWatcher";
    case -123: return "ReconfigDisabled";
    case -125:
        return "QuotaExceeded";
    default: return "Error";
    }
}

const char *zd_err(int rc)
{
    static char bufs[4][64];
    static int slot;
    char *b = bufs[slot++ % 4];
    if (rc == ZOK)
        return "ok";
    if (rc == RZ_ETRANSPORT)
        return "NO-REPLY";
    snprintf(b, sizeof bufs[0], "%s(%d)", code_name(rc), rc);
    return b;
}

/* Path with control and non-ASCII bytes escaped, for printing. */
static const char *esc(const char *p)
{
    static char bufs[4][1024];
    static int slot;
    char *b = bufs[slot++ % 4];
    size_t o = 0;
    for (; *p && o + 5 < sizeof bufs[0]; p++) {
        unsigned char c = (unsigned char)*p;
        if (c < 0x20 || c >= 0x7f)
            o += (size_t)snprintf(b + o, sizeof bufs[0] - o, "\\x%02x", c);
        else
            b[o++] = (char)c;
    }
    b[o] = '\0';
    return b;
}

void zd_drain(struct zc *const *s, const char *const *n, int count)
{
    for (int i = 0; i < count; i++) {
        struct zc_event ev;
        if (s[i]->zh == NULL)
            continue;
        int rc = zc_barrier(s[i]);
        if (rc != ZOK) {
            zd_out("  %s: barrier %s", n[i], zd_err(rc));
            continue;
        }
        while (zc_next_event(s[i], 0, &ev))
            zd_out("  %s: event %s %s tag=%d", n[i], zc_event_name(ev.type), ev.path, ev.tag);
    }
}

void zd_drain_raw(struct rz *z, const char *name)
{
    struct rz_event ev;
    if (z->fd < 0)
        return;
    if (rz_ping_read(z, NULL) != 0) {
        zd_out("  %s: round trip failed", name);
        return;
    }
    while (rz_next_event(z, 0, &ev) == 1)
        zd_out("  %s: event %s %s state=%d", name, rz_event_name(ev.type), ev.path, ev.state);
}

static int cmpstr(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static const char *joined(struct String_vector *v)
{
    static char buf[4096];
    size_t used = 0;
    buf[0] = '\0';
    qsort(v->data, (size_t)v->count, sizeof v->data[0], cmpstr);
    for (int i = 0; i < v->count; i++)
        used += (size_t)snprintf(buf + used, used < sizeof buf ? sizeof buf - used : 0,
                                 "%s%s", i ? "," : "", v->data[i]);
    return buf;
}

/* --- step helpers: run one call, print one line --------------------------------------- */

static void create(struct zc *c, const char *who, const char *path, const char *data,
                   int mode)
{
    char out[1024] = "";
    struct Stat st;
    int rc = zoo_create2(c->zh, path, data, data ? (int)strlen(data) : -1,
                         &ZOO_OPEN_ACL_UNSAFE, mode, out, sizeof out, &st);
    if (rc == ZOK)
        zd_out("%s create %s mode=%d -> ok %s %s", who, esc(path), mode, out, zd_stat(&st));
    else
        zd_out("%s create %s mode=%d -> %s", who, esc(path), mode, zd_err(rc));
}

static void create1(struct zc *c, const char *who, const char *path, int mode)
{
    char out[1024] = "";
    int rc = zoo_create(c->zh, path, "", 0, &ZOO_OPEN_ACL_UNSAFE, mode, out, sizeof out);
    zd_out("%s create1 %s mode=%d -> %s %s", who, esc(path), mode, zd_err(rc),
           rc == ZOK ? out : "");
}

static void exists(struct zc *c, const char *who, const char *path, int watch)
{
    struct Stat st;
    int rc = zoo_exists(c->zh, path, watch, &st);
    zd_out("%s exists %s watch=%d -> %s %s", who, path, watch, zd_err(rc),
           rc == ZOK ? zd_stat(&st) : "");
}

static void get(struct zc *c, const char *who, const char *path, int watch)
{
    char buf[256];
    int len = sizeof buf - 1;
    struct Stat st;
    int rc = zoo_get(c->zh, path, watch, buf, &len, &st);
    if (rc == ZOK) {
        if (len >= 0)
            buf[len] = '\0';
        zd_out("%s get %s watch=%d -> ok '%s' %s", who, path, watch,
               len < 0 ? "(null)" : buf, zd_stat(&st));
    } else {
        zd_out("%s get %s watch=%d -> %s", who, path, watch, zd_err(rc));
    }
}

static void set(struct zc *c, const char *who, const char *path, const char *data, int ver)
{
    struct Stat st;
    int rc = zoo_set2(c->zh, path, data, (int)strlen(data), ver, &st);
    zd_out("%s set %s '%s' v=%d -> %s %s", who, esc(path), data, ver, zd_err(rc),
           rc == ZOK ? zd_stat(&st) : "");
}

static void del(struct zc *c, const char *who, const char *path, int ver)
{
    int rc = zoo_delete(c->zh, path, ver);
    zd_out("%s delete %s v=%d -> %s", who, path, ver, zd_err(rc));
}

static void kids(struct zc *c, const char *who, const char *path, int watch)
{
    struct String_vector v = {0, NULL};
    struct Stat st;
    int rc = zoo_get_children2(c->zh, path, watch, &v, &st);
    if (rc == ZOK)
        zd_out("%s children %s watch=%d -> ok [%s] %s", who, path, watch, joined(&v),
               zd_stat(&st));
    else
        zd_out("%s children %s watch=%d -> %s", who, path, watch, zd_err(rc));
    deallocate_String_vector(&v);
}

static void getacl(struct zc *c, const char *who, const char *path)
{
    struct ACL_vector acl = {0, NULL};
    struct Stat st;
    char buf[1024];
    size_t used = 0;
    int rc = zoo_get_acl(c->zh, path, &acl, &st);
    buf[0] = '\0';
    for (int i = 0; rc == ZOK && i < acl.count; i++)
        used += (size_t)snprintf(buf + used, used < sizeof buf ? sizeof buf - used : 0,
                                 "%s%d:%s:%s", i ? "," : "", acl.data[i].perms,
                                 acl.data[i].id.scheme, acl.data[i].id.id);
    zd_out("%s getacl %s -> %s [%s] %s", who, path, zd_err(rc), buf,
           rc == ZOK ? zd_stat(&st) : "");
    if (rc == ZOK)
        deallocate_ACL_vector(&acl);
}

static void setacl(struct zc *c, const char *who, const char *path, int ver, int perms,
                   const char *scheme, const char *id)
{
    struct ACL e = {perms, {(char *)scheme, (char *)id}};
    struct ACL_vector acl = {1, &e};
    int rc = zoo_set_acl(c->zh, path, ver, &acl);
    zd_out("%s setacl %s %d:%s:%s v=%d -> %s", who, path, perms, scheme, id, ver, zd_err(rc));
}

static void create_acl(struct zc *c, const char *who, const char *path, int perms,
                       const char *scheme, const char *id)
{
    struct ACL e = {perms, {(char *)scheme, (char *)id}};
    struct ACL_vector acl = {1, &e};
    int rc = zoo_create(c->zh, path, "x", 1, scheme ? &acl : &ZOO_CREATOR_ALL_ACL,
                        ZOO_PERSISTENT, NULL, 0);
    zd_out("%s create %s acl=%d:%s:%s -> %s", who, path, perms, scheme ? scheme : "auth",
           id ? id : "", zd_err(rc));
}

/* Print the whole subtree below `path` (sorted), one node per line. */
static void dump_tree(const char *path, int depth)
{
    struct String_vector v = {0, NULL};
    struct Stat st;
    char buf[64];
    int len = sizeof buf - 1;
    int rc = zoo_get(A.zh, path, 0, buf, &len, &st);
    if (rc != ZOK) {
        zd_out("tree %*s%s -> %s", depth * 2, "", path, zd_err(rc));
        return;
    }
    if (len >= 0)
        buf[len] = '\0';
    zd_out("tree %*s%s '%s' %s", depth * 2, "", path, len < 0 ? "(null)" : buf, zd_stat(&st));
    if (zoo_get_children(A.zh, path, 0, &v) != ZOK)
        return;
    qsort(v.data, (size_t)v.count, sizeof v.data[0], cmpstr);
    for (int i = 0; i < v.count; i++) {
        char child[1024];
        snprintf(child, sizeof child, "%s/%s", path, v.data[i]);
        dump_tree(child, depth + 1);
    }
    deallocate_String_vector(&v);
}

/* Wait (bounded) for one event on c and print it, or print that none came. */
static void await_event(struct zc *c, const char *who, int wait_ms)
{
    struct zc_event ev;
    if (zc_next_event(c, wait_ms, &ev))
        zd_out("  %s: event %s %s tag=%d", who, zc_event_name(ev.type), ev.path, ev.tag);
    else
        zd_out("  %s: no event within %d ms", who, wait_ms);
}

/* --- the script ------------------------------------------------------------------------ */

static void script_nodes(void)
{
    zd_out("## nodes and modes");
    create(&A, "A", ZD_ROOT, "root", ZOO_PERSISTENT);
    create(&A, "A", ZD_ROOT, "again", ZOO_PERSISTENT);
    create(&A, "A", "/", "", ZOO_PERSISTENT);
    create(&A, "A", P("/missing/x"), "", ZOO_PERSISTENT);
    create(&A, "A", P("/bad\x7f"), "", ZOO_PERSISTENT);
    create(&A, "A", P("/bad\xef\xbf\xbf"), "", ZOO_PERSISTENT);
    create(&A, "A", P("/missing/bad\x7f"), "", ZOO_PERSISTENT);
    create(&A, "A", P("/\xc3\xa9t\xc3\xa9"), "utf8", ZOO_PERSISTENT);
    create(&A, "A", P("/mode7"), "", 7);
    create(&A, "A", P("/e"), "eph", ZOO_EPHEMERAL);
    create(&A, "A", P("/e/kid"), "", ZOO_PERSISTENT);
    create(&B, "B", P("/e/kid"), "", ZOO_EPHEMERAL_SEQUENTIAL);
    create(&A, "A", P("/null"), NULL, ZOO_PERSISTENT);
    get(&A, "A", P("/null"), 0);
    create1(&A, "A", P("/plain1"), ZOO_PERSISTENT);
    exists(&B, "B", P("/e"), 0);
    exists(&B, "B", ZD_ROOT, 0);
    DRAIN();

    zd_out("## sequential");
    create(&A, "A", P("/s"), "", ZOO_PERSISTENT);
    for (int i = 0; i < 3; i++)
        create(&A, "A", P("/s/n-"), "", ZOO_PERSISTENT_SEQUENTIAL);
    del(&A, "A", P("/s/n-0000000001"), -1);
    create(&A, "A", P("/s/n-"), "", ZOO_PERSISTENT_SEQUENTIAL);
    create(&A, "A", P("/s/plain"), "", ZOO_PERSISTENT);
    create(&B, "B", P("/s/e-"), "", ZOO_EPHEMERAL_SEQUENTIAL);
    create(&A, "A", P("/s/"), "", ZOO_PERSISTENT_SEQUENTIAL);
    create1(&A, "A", P("/s/x"), ZOO_PERSISTENT_SEQUENTIAL);
    kids(&A, "A", P("/s"), 0);
    DRAIN();

    zd_out("## data and versions");
    create(&A, "A", P("/d"), "v0", ZOO_PERSISTENT);
    set(&A, "A", P("/d"), "v1", 0);
    set(&A, "A", P("/d"), "stale", 0);
    set(&B, "B", P("/d"), "v2", -1);
    set(&A, "A", P("/d/missing"), "x", -1);
    set(&A, "A", P("/d\x1f"), "x", -1);
    get(&B, "B", P("/d"), 0);
    get(&B, "B", P("/d/missing"), 0);
    create(&A, "A", P("/d/c"), "", ZOO_PERSISTENT);
    del(&A, "A", P("/d"), -1);
    del(&A, "A", P("/d/c"), 3);
    del(&A, "A", P("/d/c"), 0);
    del(&A, "A", P("/d/c"), 0);
    exists(&A, "A", P("/d"), 0);
    del(&A, "A", "/", -1);
    del(&A, "A", "/zookeeper", -1);
    del(&A, "A", "/zookeeper/quota", -1);
    kids(&A, "A", "/zookeeper", 0);
    DRAIN();
}

static void script_watches(void)
{
    struct zc_wctx w1 = {&A, 1}, w2 = {&A, 2};
    struct Stat st;
    struct String_vector v = {0, NULL};
    zd_out("## watches");
    exists(&A, "A", P("/w"), 1);
    create(&B, "B", P("/w"), "0", ZOO_PERSISTENT);
    DRAIN();
    get(&A, "A", P("/w"), 1);
    set(&B, "B", P("/w"), "1", -1);
    set(&B, "B", P("/w"), "2", -1);
    DRAIN();
    kids(&A, "A", P("/w"), 1);
    set(&B, "B", P("/w"), "3", -1);
    create(&B, "B", P("/w/c"), "", ZOO_PERSISTENT);
    create(&B, "B", P("/w/d"), "", ZOO_PERSISTENT);
    DRAIN();
    get(&A, "A", P("/w/c"), 1);
    kids(&A, "A", P("/w/c"), 1);
    kids(&A, "A", P("/w"), 1);
    zd_out("A wexists %s -> %s", P("/w/c"), zd_err(zoo_wexists(A.zh, P("/w/c"), zc_watcher,
                                                                &w1, &st)));
    zd_out("A wget_children %s -> %s", P("/w/c"),
           zd_err(zoo_wget_children(A.zh, P("/w/c"), zc_watcher, &w2, &v)));
    deallocate_String_vector(&v);
    del(&B, "B", P("/w/c"), -1);
    DRAIN();
    get(&A, "A", P("/w"), 1);
    setacl(&B, "B", P("/w"), -1, ZOO_PERM_ALL, "world", "anyone");
    DRAIN();
    set(&A, "A", P("/w"), "self", -1); /* the writer's own watch */
    DRAIN();
    get(&A, "A", P("/w/none"), 1);
    kids(&A, "A", P("/w/none"), 1);
    create(&B, "B", P("/w/none"), "", ZOO_PERSISTENT);
    DRAIN();
    zd_out("A wexists %s -> %s", P("/w/d"), zd_err(zoo_wexists(A.zh, P("/w/d"), zc_watcher,
                                                                &w1, &st)));
    zd_out("A remove_watches data %s -> %s", P("/w/d"),
           zd_err(zoo_remove_watches(A.zh, P("/w/d"), ZWATCHTYPE_DATA, zc_watcher, &w1, 0)));
    set(&B, "B", P("/w/d"), "x", -1);
    DRAIN();
}

static void script_multi(void)
{
    zoo_op_t ops[6];
    zoo_op_result_t res[6];
    char b0[512] = "", b1[512] = "";
    struct Stat st;
    int rc;
    zd_out("## multi");
    exists(&B, "B", P("/m/a"), 1);
    create(&A, "A", P("/m"), "", ZOO_PERSISTENT);
    zoo_create_op_init(&ops[0], P("/m/a"), "a", 1, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT, b0,
                       sizeof b0);
    zoo_create_op_init(&ops[1], P("/m/a/s-"), "", 0, &ZOO_OPEN_ACL_UNSAFE,
                       ZOO_PERSISTENT_SEQUENTIAL, b1, sizeof b1);
    zoo_set_op_init(&ops[2], P("/m/a"), "bb", 2, 0, &st);
    zoo_check_op_init(&ops[3], P("/m/a"), 1);
    zoo_create_op_init(&ops[4], P("/m/tmp"), "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT,
                       NULL, 0);
    zoo_delete_op_init(&ops[5], P("/m/tmp"), 0);
    rc = zoo_multi(A.zh, 6, ops, res);
    zd_out("A multi[create,create-seq,set,check,create,delete] -> %s [%d %d %d %d %d %d] %s %s "
           "%s", zd_err(rc), res[0].err, res[1].err, res[2].err, res[3].err, res[4].err,
           res[5].err, b0, b1, rc == ZOK ? zd_stat(&st) : "");
    DRAIN();
    zoo_create_op_init(&ops[0], P("/m/f1"), "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT, NULL,
                       0);
    zoo_delete_op_init(&ops[1], P("/m/none"), -1);
    zoo_create_op_init(&ops[2], P("/m/f3"), "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT, NULL,
                       0);
    rc = zoo_multi(A.zh, 3, ops, res);
    zd_out("A multi[create,delete-missing,create] -> %s [%d %d %d]", zd_err(rc), res[0].err,
           res[1].err, res[2].err);
    zoo_set_op_init(&ops[0], P("/m/a"), "new", 3, -1, NULL);
    zoo_check_op_init(&ops[1], P("/m/a"), 1);
    rc = zoo_multi(A.zh, 2, ops, res);
    zd_out("A multi[set,check-old] -> %s [%d %d]", zd_err(rc), res[0].err, res[1].err);
    zoo_delete_op_init(&ops[0], P("/m/a"), -1);
    rc = zoo_multi(A.zh, 1, ops, res);
    zd_out("A multi[delete-nonempty] -> %s [%d]", zd_err(rc), res[0].err);
    zoo_create_op_init(&ops[0], P("/m/a"), "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT, NULL,
                       0);
    rc = zoo_multi(A.zh, 1, ops, res);
    zd_out("A multi[create-existing] -> %s [%d]", zd_err(rc), res[0].err);
    rc = zoo_multi(A.zh, 0, ops, res);
    zd_out("A multi[] -> %s", zd_err(rc));
    get(&A, "A", P("/m/a"), 0);
    kids(&A, "A", P("/m"), 0);
    DRAIN();
}

static void script_acl(void)
{
    struct zc c = {0}, d = {0};
    zd_out("## acl and auth");
    create(&A, "A", P("/acl"), "", ZOO_PERSISTENT);
    getacl(&A, "A", P("/acl"));
    setacl(&A, "A", P("/acl"), 1, ZOO_PERM_ALL, "world", "anyone");
    setacl(&A, "A", P("/acl"), 0, ZOO_PERM_READ | ZOO_PERM_ADMIN, "world", "anyone");
    getacl(&A, "A", P("/acl"));
    set(&A, "A", P("/acl"), "x", -1);
    create(&A, "A", P("/acl/kid"), "", ZOO_PERSISTENT);
    setacl(&A, "A", P("/acl"), -1, ZOO_PERM_READ, "world", "anyone");
    setacl(&A, "A", P("/acl"), -1, ZOO_PERM_ALL, "world", "anyone");
    setacl(&A, "A", P("/acl/missing"), -1, ZOO_PERM_ALL, "world", "anyone");
    setacl(&A, "A", P("/acl"), -1, ZOO_PERM_ALL, "world", "foo");
    setacl(&A, "A", P("/acl"), -1, ZOO_PERM_ALL, "ip", "999.1.1.1");
    setacl(&A, "A", P("/acl"), -1, ZOO_PERM_ALL, "digest", "nocolon");
    setacl(&A, "A", P("/acl"), -1, ZOO_PERM_ALL, "nosuch", "x");
    create_acl(&A, "A", P("/creator"), ZOO_PERM_ALL, NULL, NULL);
    create_acl(&A, "A", P("/ip-local"), ZOO_PERM_ALL, "ip", "127.0.0.1");
    create_acl(&A, "A", P("/ip-remote"), ZOO_PERM_ALL, "ip", "10.1.2.3");
    create_acl(&A, "A", P("/ip-net"), ZOO_PERM_READ, "ip", "127.0.0.0/8");
    get(&A, "A", P("/ip-local"), 0);
    get(&A, "A", P("/ip-remote"), 0);
    get(&A, "A", P("/ip-net"), 0);
    set(&A, "A", P("/ip-net"), "y", -1);
    zd_out("B auth digest alice:secret -> %s", zd_err(zc_add_auth(&B, "digest", "alice:secret")));
    create_acl(&B, "B", P("/secret"), ZOO_PERM_ALL, NULL, NULL);
    getacl(&B, "B", P("/secret"));
    get(&A, "A", P("/secret"), 0);
    set(&A, "A", P("/secret"), "x", -1);
    getacl(&A, "A", P("/secret"));
    create(&A, "A", P("/secret/kid"), "", ZOO_PERSISTENT);
    {
        struct ACL e[2] = {{ZOO_PERM_READ, {"world", "anyone"}},
                           {ZOO_PERM_ALL, {"digest", "alice:aYXlLOpEooaV1cRAvUL1fp9Qt7E="}}};
        struct ACL_vector acl = {2, e};
        zd_out("B create %s acl=[r:world,all:digest:alice] -> %s", P("/masked"),
               zd_err(zoo_create(B.zh, P("/masked"), "", 0, &acl, ZOO_PERSISTENT, NULL, 0)));
    }
    getacl(&A, "A", P("/masked"));
    getacl(&B, "B", P("/masked"));
    if (zc_open(&c, zd_hostport, 10000, NULL, 10000) == ZOO_CONNECTED_STATE) {
        zd_out("C auth digest alice:wrong -> %s",
               zd_err(zc_add_auth(&c, "digest", "alice:wrong")));
        get(&c, "C", P("/secret"), 0);
    }
    zc_close(&c);
    /* DELETE is checked on the parent, which is open */
    del(&A, "A", P("/secret"), -1);
    if (zc_open(&d, zd_hostport, 10000, NULL, 10000) == ZOO_CONNECTED_STATE) {
        zd_out("D auth nosuch -> %s", zd_err(zc_add_auth(&d, "nosuch", "x")));
        zd_out("D auth-failed state -> %d", zc_wait_state(&d, ZOO_AUTH_FAILED_STATE, 5000));
    }
    zc_close(&d);
    DRAIN();
}

static void script_misc(void)
{
    char out[512] = "";
    char buf[256];
    int len = sizeof buf;
    struct Stat st;
    int rc;
    zd_out("## sync, config, reconfig");
    rc = zc_sync(&A, P("/d"), out, sizeof out);
    zd_out("A sync %s -> %s %s", P("/d"), zd_err(rc), out);
    rc = zoo_getconfig(A.zh, 0, buf, &len, &st);
    zd_out("A getconfig -> %s len=%d %s", zd_err(rc), len, rc == ZOK ? zd_stat(&st) : "");
    len = sizeof buf;
    rc = zoo_reconfig(A.zh, NULL, "1", NULL, -1, buf, &len, &st);
    zd_out("A reconfig leaving=1 -> %s", zd_err(rc));
    exists(&A, "A", "/", 0);
    exists(&A, "A", "/zookeeper", 0);
}

static int cmp_line(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* mntr's figures by quota namespace, sorted: ZooKeeper's order is a hash
 * map's. */
static void quota_metrics(void)
{
    static const char suffix[] = "_per_namespace\t";
    static char out[1 << 16];
    char *lines[64], *l, *save = NULL;
    size_t n = 0, i;

    if (rz_four_letter(zd_hostport, "mntr", out, sizeof out) <= 0) {
        zd_out("mntr -> no answer");
        return;
    }
    for (l = strtok_r(out, "\n", &save); l != NULL && n < 64;
         l = strtok_r(NULL, "\n", &save))
        if (strstr(l, "_quota_") != NULL && strstr(l, suffix) != NULL)
            lines[n++] = l;
    qsort(lines, n, sizeof *lines, cmp_line);
    for (i = 0; i < n; i++)
        zd_out("mntr %s", lines[i]);
}

/* Quota bookkeeping: the stats node follows the subtree's count and bytes
 * without a Stat change of its own; limits are not enforced. */
static void script_quota(void)
{
#define QP(rel) "/zookeeper/quota" ZD_ROOT rel
    zd_out("## quota stats");
    create(&A, "A", P("/q"), "abc", 0);
    create(&A, "A", P("/q/a"), "12345", 0);
    create(&A, "A", QP(""), "", 0);
    create(&A, "A", QP("/q"), "", 0);
    create(&A, "A", QP("/q/zookeeper_limits"), "count=3,bytes=-1", 0);
    create(&A, "A", QP("/q/zookeeper_stats"), "count=0,bytes=0", 0);
    get(&A, "A", QP("/q/zookeeper_stats"), 0);
    create(&A, "A", P("/q/b"), "xy", 0);
    create(&A, "A", P("/q/b/c"), "", 0);
    get(&A, "A", QP("/q/zookeeper_stats"), 0);
    set(&A, "A", P("/q/a"), "1", -1);
    del(&A, "A", P("/q/b/c"), -1);
    set(&A, "A", P("/d"), "outside the quota", -1);
    get(&A, "A", QP("/q/zookeeper_stats"), 0);
    del(&A, "A", QP("/q/zookeeper_limits"), -1);
    create(&A, "A", P("/q/d"), "", 0);
    get(&A, "A", QP("/q/zookeeper_stats"), 0);

    /* Hard limits, refused as both servers run with enforceQuota=true; the
     * limits in the form 3.8's zkCli writes them.  Soft limits stay logged. */
    zd_out("## quota hard limits");
    create(&A, "A", P("/h"), "", 0);
    create(&A, "A", QP("/h"), "", 0);
    create(&A, "A", QP("/h/zookeeper_limits"),
           "count=-1,bytes=-1=;byteHardLimit=10;countHardLimit=3", 0);
    create(&A, "A", QP("/h/zookeeper_stats"), "", 0);
    get(&A, "A", QP("/h/zookeeper_stats"), 0);
    create(&A, "A", P("/h/a"), "12345", 0);
    create(&A, "A", P("/h/b"), "", ZOO_EPHEMERAL);
    create(&A, "A", P("/h/c"), "", 0);
    create(&A, "A", P("/h/s-"), "", ZOO_PERSISTENT_SEQUENTIAL);
    create(&A, "A", P("/h/a"), "", 0);
    create(&A, "A", P("/h/none/x"), "", 0);
    create(&A, "A", P("/h/b/x"), "", 0);
    get(&A, "A", QP("/h/zookeeper_stats"), 0);
    set(&A, "A", P("/h/a"), "123456", -1);
    set(&A, "A", P("/h/a"), "1234567", 7);
    set(&A, "A", P("/h/b"), "xxxxxx", 7);
    set(&A, "A", P("/h/b"), "xxxxxx", -1);
    set(&A, "A", P("/h/a"), "1", -1);
    set(&A, "A", P("/h/b"), "xxxxxx", -1);
    get(&A, "A", QP("/h/zookeeper_stats"), 0);
    {
        zoo_op_t ops[2];
        zoo_op_result_t res[2];
        zoo_create_op_init(&ops[0], P("/h/m"), "", 0, &ZOO_OPEN_ACL_UNSAFE,
                           ZOO_PERSISTENT, NULL, 0);
        zoo_set_op_init(&ops[1], P("/h/a"), "1234567", 7, -1, NULL);
        int rc = zoo_multi(A.zh, 2, ops, res);
        zd_out("A multi[create-over,set] -> %s [%d %d]", zd_err(rc), res[0].err,
               res[1].err);
    }
    del(&A, "A", P("/h/b"), -1);
    create(&A, "A", P("/h/d"), "", ZOO_CONTAINER);
    create(&A, "A", P("/h/e"), "", 0);
    /* A deeper quota takes its subtree; a soft limit is never refused. */
    create(&A, "A", QP("/h/d"), "", 0);
    create(&A, "A", QP("/h/d/zookeeper_limits"),
           "count=1,bytes=0=;countHardLimit=2", 0);
    create(&A, "A", QP("/h/d/zookeeper_stats"), "", 0);
    create(&A, "A", P("/h/d/x"), "over the soft limits", 0);
    create(&A, "A", P("/h/d/y"), "", 0);
    get(&A, "A", QP("/h/d/zookeeper_stats"), 0);
    get(&A, "A", QP("/h/zookeeper_stats"), 0);
    /* Limits without stats are not checked. */
    create(&A, "A", P("/n"), "", 0);
    create(&A, "A", QP("/n"), "", 0);
    create(&A, "A", QP("/n/zookeeper_limits"),
           "countHardLimit=0;byteHardLimit=0", 0);
    create(&A, "A", P("/n/a"), "abc", 0);
    quota_metrics();
    {
        char out[256];
        zd_out("srst -> %d", rz_four_letter(zd_hostport, "srst", out, sizeof out) > 0);
    }
    quota_metrics(); /* the refusals' count at 0, still listed */
#undef QP
}

static void script_timed(void)
{
    struct zc_wctx w1 = {&A, 1};
    struct Stat st;
    char out[512];
    zd_out("## containers and TTL (server-side deletion)");
    create(&A, "A", P("/cont"), "", ZOO_CONTAINER);
    create(&A, "A", P("/cont-unused"), "", ZOO_CONTAINER);
    create(&A, "A", P("/cont/kid"), "", ZOO_PERSISTENT);
    zd_out("A wexists %s -> %s", P("/cont"),
           zd_err(zoo_wexists(A.zh, P("/cont"), zc_watcher, &w1, &st)));
    del(&A, "A", P("/cont/kid"), -1);
    await_event(&A, "A", 15000);
    exists(&A, "A", P("/cont"), 0);
    exists(&A, "A", P("/cont-unused"), 0);
    {
        int rc = zoo_create2_ttl(A.zh, P("/ttl"), "t", 1, &ZOO_OPEN_ACL_UNSAFE,
                                 ZOO_PERSISTENT_WITH_TTL, 500, out, sizeof out, &st);
        zd_out("A create %s ttl=500 -> %s %s", P("/ttl"), zd_err(rc),
               rc == ZOK ? zd_stat(&st) : "");
        rc = zoo_create2_ttl(A.zh, P("/ttl-long-"), "", 0, &ZOO_OPEN_ACL_UNSAFE,
                             ZOO_PERSISTENT_SEQUENTIAL_WITH_TTL, 3600000, out, sizeof out, &st);
        zd_out("A create %s seq ttl=3600000 -> %s %s %s", P("/ttl-long-"), zd_err(rc), out,
               rc == ZOK ? zd_stat(&st) : "");
    }
    zd_out("A wexists %s -> %s", P("/ttl"),
           zd_err(zoo_wexists(A.zh, P("/ttl"), zc_watcher, &w1, &st)));
    await_event(&A, "A", 15000);
    exists(&A, "A", P("/ttl"), 0);
    DRAIN();
}

static void script_sessions(void)
{
    struct zc e = {0}, r = {0};
    struct rz x;
    clientid_t cid;
    zd_out("## sessions");
    for (int t = 0; t < 3; t++) {
        static const int req[3] = {1000, 10000, 100000};
        if (zc_open(&e, zd_hostport, req[t], NULL, 10000) == ZOO_CONNECTED_STATE)
            zd_out("E timeout %d -> negotiated %d", req[t], zoo_recv_timeout(e.zh));
        zc_close(&e);
    }
    if (zc_open(&e, zd_hostport, 10000, NULL, 10000) != ZOO_CONNECTED_STATE) {
        zd_out("E open failed");
        return;
    }
    zd_name_session(zoo_client_id(e.zh)->client_id, "E");
    cid = *zoo_client_id(e.zh);
    /* One watched ephemeral per parent: the order in which a server deletes several
     * ephemerals of a session is not defined, and it would show in the events. */
    create(&e, "E", P("/sess"), "", ZOO_PERSISTENT);
    create(&e, "E", P("/sess2"), "", ZOO_PERSISTENT);
    create(&e, "E", P("/sess/e1"), "", ZOO_EPHEMERAL);
    create(&e, "E", P("/sess2/e2-"), "", ZOO_EPHEMERAL_SEQUENTIAL);
    create(&e, "E", P("/sess2/e3-"), "", ZOO_EPHEMERAL_SEQUENTIAL);
    exists(&B, "B", P("/sess/e1"), 1);
    kids(&B, "B", P("/sess"), 1);
    zc_close(&e);
    zd_out("E closed");
    DRAIN();
    kids(&B, "B", P("/sess"), 0);
    kids(&B, "B", P("/sess2"), 0);
    zd_out("E resume after close -> state %d",
           zc_open(&r, zd_hostport, 10000, &cid, 10000));
    zc_close(&r);

    /* expiry: a raw session that falls silent */
    rz_init(&x);
    if (rz_open(&x, zd_hostport, 4000) != 0) {
        zd_out("X open failed");
        return;
    }
    zd_name_session(x.sid, "X");
    zd_out("X timeout -> %d", x.timeout);
    zd_out("X create %s ephemeral -> %s", P("/sess/x"),
           zd_err(rz_create(&x, RZ_OP_CREATE, P("/sess/x"), "", 0, 1, 0, NULL, 0, NULL)));
    exists(&B, "B", P("/sess/x"), 1);
    zd_out("X silent: closed by server -> %d", rz_expect_close(&x, 15000));
    await_event(&B, "B", 10000);
    exists(&B, "B", P("/sess/x"), 0);
    {
        struct rz_hello h = {0, 0, 4000, x.sid, x.pw, 0};
        if (rz_dial(&x, zd_hostport) == 0) {
            int got = rz_hello(&x, &h);
            zd_out("X resume after expiry -> %d timeout=%d", got, x.timeout);
        }
    }
    rz_drop(&x);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s HOST:PORT\n", argv[0]);
        return 2;
    }
    zd_hostport = argv[1];
    zc_quiet();
    if (zc_open(&A, zd_hostport, 30000, NULL, 15000) != ZOO_CONNECTED_STATE ||
        zc_open(&B, zd_hostport, 30000, NULL, 15000) != ZOO_CONNECTED_STATE) {
        fprintf(stderr, "zkdiff: cannot connect to %s\n", zd_hostport);
        return 1;
    }
    zd_name_session(zoo_client_id(A.zh)->client_id, "A");
    zd_name_session(zoo_client_id(B.zh)->client_id, "B");
    if (zoo_exists(A.zh, ZD_ROOT, 0, NULL) != ZNONODE) {
        fprintf(stderr, "zkdiff: %s already exists; needs a fresh server\n", ZD_ROOT);
        return 1;
    }
    script_nodes();
    script_watches();
    script_multi();
    script_acl();
    script_misc();
    script_quota();
    zd_raw_script(&B);
    script_timed();
    script_sessions();
    zd_out("## final tree");
    dump_tree(ZD_ROOT, 0);
    DRAIN();
    zc_close(&A);
    zc_close(&B);
    zd_out("## end");
    return 0;
}
