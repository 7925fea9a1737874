/* zkdiff, raw part: the steps of the differential script that only a raw client can send
 * (handshake forms, whoAmI, getEphemerals, getAllChildrenNumber, addWatch, check/removeWatches,
 * multiRead, multi sub-op result types, setWatches catch-up, unknown opcodes, bad frames).
 * Output goes to the same normalized transcript as zkdiff.c. */
#include "zkdiff.h"

#include <stdio.h>
#include <string.h>

#define P(rel) ZD_ROOT rel

static void mh(struct rz_w *w, int32_t type, int done, int32_t err)
{
    rz_w_i32(w, type);
    rz_w_bool(w, done);
    rz_w_i32(w, err);
}

static void create_rec(struct rz_w *w, const char *path, int32_t flags)
{
    rz_w_str(w, path);
    rz_w_buf(w, "", 0);
    rz_w_acl_open(w);
    rz_w_i32(w, flags);
}

static void bset(struct zc *b, const char *path, const char *data)
{
    int rc = zoo_set(b->zh, path, data, (int)strlen(data), -1);
    zd_out("B set %s '%s' -> %s", path, data, zd_err(rc));
}

static void bcreate(struct zc *b, const char *path)
{
    int rc = zoo_create(b->zh, path, "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT, NULL, 0);
    zd_out("B create %s -> %s", path, zd_err(rc));
}

static void bdelete(struct zc *b, const char *path)
{
    zd_out("B delete %s -> %s", path, zd_err(zoo_delete(b->zh, path, -1)));
}

/* A request with a path and an int (checkWatches, removeWatches, addWatch). */
static void path_int(struct rz *z, const char *who, const char *what, int32_t op,
                     const char *path, int32_t v)
{
    struct rz_w w = {0};
    struct rz_reply rep;
    rz_w_str(&w, path);
    rz_w_i32(&w, v);
    int rc = rz_call(z, op, &w, &rep);
    rz_w_free(&w);
    zd_out("%s %s %s %d -> %s", who, what, path, v, zd_err(rc != 0 ? RZ_ETRANSPORT : rep.err));
}

static void whoami(struct rz *z, const char *who)
{
    struct rz_reply rep;
    char items[8][128];
    int n = 0;
    if (rz_call(z, RZ_OP_WHOAMI, NULL, &rep) != 0) {
        zd_out("%s whoami -> NO-REPLY", who);
        return;
    }
    if (rep.err == 0) {
        int32_t cnt = rz_r_i32(&rep.body);
        for (int i = 0; i < cnt && i < 8; i++) {
            char s[64], u[64];
            rz_r_str(&rep.body, s, sizeof s);
            rz_r_str(&rep.body, u, sizeof u);
            snprintf(items[n++], sizeof items[0], "%s:%s", s, u);
        }
    }
    /* the order of identities is not part of the protocol */
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (strcmp(items[j], items[i]) < 0) {
                char t[128];
                memcpy(t, items[i], sizeof t);
                memcpy(items[i], items[j], sizeof t);
                memcpy(items[j], t, sizeof t);
            }
    char line[1100] = "";
    size_t used = 0;
    for (int i = 0; i < n; i++)
        used += (size_t)snprintf(line + used, sizeof line - used, "%s%s", i ? "," : "",
                                 items[i]);
    zd_out("%s whoami -> %s [%s]", who, zd_err(rep.err), line);
}

static void path_vec(struct rz *z, const char *who, const char *what, int32_t op,
                     const char *path)
{
    struct rz_w w = {0};
    struct rz_reply rep;
    char out[2048] = "";
    rz_w_str(&w, path);
    int rc = rz_call(z, op, &w, &rep);
    rz_w_free(&w);
    if (rc != 0) {
        zd_out("%s %s %s -> NO-REPLY", who, what, path);
        return;
    }
    if (rep.err == 0)
        rz_r_strvec_joined(&rep.body, out, sizeof out);
    zd_out("%s %s %s -> %s [%s]", who, what, path, zd_err(rep.err), out);
}

static void all_children(struct rz *z, const char *who, const char *path)
{
    struct rz_w w = {0};
    struct rz_reply rep;
    rz_w_str(&w, path);
    int rc = rz_call(z, RZ_OP_GETALLCHILDRENNUMBER, &w, &rep);
    rz_w_free(&w);
    if (rc != 0) {
        zd_out("%s allChildrenNumber %s -> NO-REPLY", who, path);
        return;
    }
    zd_out("%s allChildrenNumber %s -> %s %d", who, path, zd_err(rep.err),
           rep.err == 0 ? rz_r_i32(&rep.body) : 0);
}

/* Print a multi/multiRead response: one item per result. */
static void print_multi(const char *who, const char *what, struct rz_reply *rep)
{
    char line[2048];
    size_t used = 0;
    struct rz_r *r = &rep->body;
    line[0] = '\0';
    if (rep->err != 0) {
        zd_out("%s %s -> %s", who, what, zd_err(rep->err));
        return;
    }
    for (int i = 0; i < 32; i++) {
        int32_t type = rz_r_i32(r);
        int done = rz_r_bool(r);
        int32_t err = rz_r_i32(r);
        char item[700] = "", s[600];
        if (r->bad || done)
            break;
        switch (type) {
        case 1:
        case 15: /* a create2 sub-op answers 1 on 3.5-3.8 and 15 on 3.9: both print "create" */
            rz_r_str(r, s, sizeof s);
            if (type == 15) {
                struct rz_stat st;
                rz_r_stat(r, &st);
            }
            snprintf(item, sizeof item, "create:%s", s);
            break;
        case 5: {
            struct rz_stat st;
            rz_r_stat(r, &st);
            snprintf(item, sizeof item, "set:%s", zd_rstat(&st));
            break;
        }
        case 4: {
            struct rz_stat st;
            int32_t n = rz_r_str(r, s, sizeof s);
            rz_r_stat(r, &st);
            snprintf(item, sizeof item, "get:'%s'(%d)%s", n < 0 ? "" : s, n, zd_rstat(&st));
            break;
        }
        case 8:
            rz_r_strvec_joined(r, s, sizeof s);
            snprintf(item, sizeof item, "children:[%s]", s);
            break;
        case 2:
        case 13:
            snprintf(item, sizeof item, "%s", type == 2 ? "delete" : "check");
            break;
        case -1:
            snprintf(item, sizeof item, "error:%d/%d", err, rz_r_i32(r));
            break;
        default:
            snprintf(item, sizeof item, "type%d", type);
            break;
        }
        used += (size_t)snprintf(line + used, used < sizeof line ? sizeof line - used : 0,
                                 "%s%s", i ? " " : "", item);
    }
    zd_out("%s %s -> ok%s [%s]", who, what, r->bad ? " (malformed)" : "", line);
}

static void raw_basics(struct rz *r)
{
    struct rz q;
    struct rz_hello h = {0, 0, 10000, 0, NULL, -1};
    zd_out("## raw: handshake, whoAmI, getEphemerals, getAllChildrenNumber");
    zd_out("R connect -> reply %d bytes, timeout %d", r->connect_len, r->timeout);
    rz_init(&q);
    if (rz_dial(&q, zd_hostport) == 0) {
        int got = rz_hello(&q, &h);
        zd_out("Q connect without readOnly byte -> %d, reply %d bytes", got, q.connect_len);
        rz_close(&q);
    }
    whoami(r, "R");
    zd_out("R auth digest bob:pw -> %s", zd_err(rz_auth(r, "digest", "bob:pw")));
    whoami(r, "R");
    zd_out("R create %s -> %s", P("/r"),
           zd_err(rz_create(r, RZ_OP_CREATE, P("/r"), "", 0, 0, 0, NULL, 0, NULL)));
    zd_out("R create %s eph -> %s", P("/r/e1"),
           zd_err(rz_create(r, RZ_OP_CREATE, P("/r/e1"), "", 0, 1, 0, NULL, 0, NULL)));
    zd_out("R create %s eph -> %s", P("/r/e2"),
           zd_err(rz_create(r, RZ_OP_CREATE, P("/r/e2"), "", 0, 1, 0, NULL, 0, NULL)));
    zd_out("R create %s eph -> %s", P("/r/x"),
           zd_err(rz_create(r, RZ_OP_CREATE, P("/r/x"), "", 0, 1, 0, NULL, 0, NULL)));
    zd_out("R create %s -> %s", P("/r/p"),
           zd_err(rz_create(r, RZ_OP_CREATE, P("/r/p"), "", 0, 0, 0, NULL, 0, NULL)));
    path_vec(r, "R", "getEphemerals", RZ_OP_GETEPHEMERALS, P("/r/e"));
    path_vec(r, "R", "getEphemerals", RZ_OP_GETEPHEMERALS, "/");
    path_vec(r, "R", "getEphemerals", RZ_OP_GETEPHEMERALS, " / "); /* trimmed */
    path_vec(r, "R", "getEphemerals", RZ_OP_GETEPHEMERALS, " \t");
    all_children(r, "R", P("/r"));
    all_children(r, "R", P("/none"));
}

static void raw_watches(struct rz *r, struct zc *b)
{
    zd_out("## raw: persistent and recursive watches, check/removeWatches");
    path_int(r, "R", "addWatch", RZ_OP_ADDWATCH, P("/pw"), 0);
    bcreate(b, P("/pw"));
    zd_drain_raw(r, "R");
    bcreate(b, P("/pw/c"));
    zd_drain_raw(r, "R");
    bset(b, P("/pw"), "1");
    bset(b, P("/pw"), "2");
    bset(b, P("/pw/c"), "x");
    zd_drain_raw(r, "R");
    bdelete(b, P("/pw/c"));
    bdelete(b, P("/pw"));
    bcreate(b, P("/pw"));
    zd_drain_raw(r, "R");
    path_int(r, "R", "addWatch", RZ_OP_ADDWATCH, P("/rw"), 1);
    bcreate(b, P("/rw"));
    bcreate(b, P("/rw/a"));
    bcreate(b, P("/rw/a/b"));
    bset(b, P("/rw/a/b"), "x");
    bdelete(b, P("/rw/a/b"));
    bcreate(b, P("/rwx"));
    zd_drain_raw(r, "R");
    zd_out("R get %s watch -> %s", P("/r/p"), zd_err(rz_get(r, P("/r/p"), 1, NULL)));
    path_int(r, "R", "checkWatches", RZ_OP_CHECKWATCHES, P("/r/p"), 2);
    path_int(r, "R", "checkWatches", RZ_OP_CHECKWATCHES, P("/r/p"), 1);
    path_int(r, "R", "removeWatches", RZ_OP_REMOVEWATCHES, P("/r/p"), 2);
    path_int(r, "R", "removeWatches", RZ_OP_REMOVEWATCHES, P("/r/p"), 2);
    path_int(r, "R", "removeWatches", RZ_OP_REMOVEWATCHES, P("/pw"), 3);
    path_int(r, "R", "removeWatches", RZ_OP_REMOVEWATCHES, P("/none"), 3);
    bset(b, P("/r/p"), "x");
    bset(b, P("/pw"), "3");
    bcreate(b, P("/rw/z"));
    zd_drain_raw(r, "R");
}

static void raw_multi(struct rz *r)
{
    struct rz_w w = {0};
    struct rz_reply rep;
    zd_out("## raw: multi result layouts, multiRead");
    mh(&w, RZ_OP_CREATE2, 0, -1);
    create_rec(&w, P("/rm"), 0);
    mh(&w, RZ_OP_CREATECONTAINER, 0, -1);
    create_rec(&w, P("/rm/c"), 4);
    mh(&w, RZ_OP_CREATETTL, 0, -1);
    create_rec(&w, P("/rm/t"), 6);
    rz_w_i64(&w, 3600000);
    mh(&w, RZ_OP_SETDATA, 0, -1);
    rz_w_str(&w, P("/rm"));
    rz_w_buf(&w, "v", 1);
    rz_w_i32(&w, 0);
    mh(&w, RZ_OP_CHECK, 0, -1);
    rz_w_str(&w, P("/rm"));
    rz_w_i32(&w, 1);
    mh(&w, RZ_OP_DELETE, 0, -1);
    rz_w_str(&w, P("/rm/c"));
    rz_w_i32(&w, -1);
    mh(&w, -1, 1, -1);
    if (rz_call(r, RZ_OP_MULTI, &w, &rep) == 0)
        print_multi("R", "multi[create2,container,ttl-seq,set,check,delete]", &rep);
    rz_w_free(&w);
    /* What is created follows the mode, not the opcode (the C client sends
     * a container's create as a plain create). */
    mh(&w, RZ_OP_CREATE, 0, -1);
    create_rec(&w, P("/rm/c1"), 4);
    mh(&w, RZ_OP_CREATE, 0, -1);
    create_rec(&w, P("/rm/c1/k"), 0);
    mh(&w, RZ_OP_CREATECONTAINER, 0, -1);
    create_rec(&w, P("/rm/p1"), 0);
    mh(&w, RZ_OP_CREATETTL, 0, -1);
    create_rec(&w, P("/rm/p2"), 0);
    rz_w_i64(&w, 100);
    mh(&w, -1, 1, -1);
    if (rz_call(r, RZ_OP_MULTI, &w, &rep) == 0)
        print_multi("R",
                    "multi[create flags=container,create,container flags=0,ttl "
                    "flags=0]",
                    &rep);
    rz_w_free(&w);
    {
        static const char *const made[] = {P("/rm/c1"), P("/rm/p1"),
                                           P("/rm/p2")};
        struct rz_stat st;
        for (size_t i = 0; i < sizeof made / sizeof made[0]; i++) {
            int rc = rz_exists(r, made[i], 0, &st);
            zd_out("R exists %s -> %s %s", made[i], zd_err(rc),
                   rc == 0 ? zd_rstat(&st) : "");
        }
    }
    mh(&w, RZ_OP_CREATE, 0, -1);
    create_rec(&w, P("/rm/x"), 0);
    mh(&w, RZ_OP_SETDATA, 0, -1);
    rz_w_str(&w, P("/rm"));
    rz_w_buf(&w, "v", 1);
    rz_w_i32(&w, 0);
    mh(&w, RZ_OP_DELETE, 0, -1);
    rz_w_str(&w, P("/rm/x"));
    rz_w_i32(&w, -1);
    mh(&w, -1, 1, -1);
    if (rz_call(r, RZ_OP_MULTI, &w, &rep) == 0)
        print_multi("R", "multi[create,set-badversion,delete]", &rep);
    rz_w_free(&w);
    mh(&w, RZ_OP_GETDATA, 0, -1);
    rz_w_str(&w, P("/rm"));
    rz_w_bool(&w, 0);
    mh(&w, -1, 1, -1);
    if (rz_call(r, RZ_OP_MULTI, &w, &rep) == 0)
        print_multi("R", "multi[getData]", &rep);
    rz_w_free(&w);
    mh(&w, RZ_OP_GETDATA, 0, -1);
    rz_w_str(&w, P("/rm"));
    rz_w_bool(&w, 0);
    mh(&w, RZ_OP_GETCHILDREN, 0, -1);
    rz_w_str(&w, P("/rm"));
    rz_w_bool(&w, 0);
    mh(&w, RZ_OP_GETDATA, 0, -1);
    rz_w_str(&w, P("/rm/none"));
    rz_w_bool(&w, 0);
    mh(&w, -1, 1, -1);
    if (rz_call(r, RZ_OP_MULTIREAD, &w, &rep) == 0)
        print_multi("R", "multiRead[get,children,get-missing]", &rep);
    rz_w_free(&w);
}

/* A create whose ACL is the one entry {31, scheme, id}; NULL sends a null
 * string, as kazoo does for "". */
static void create_acl(struct rz *r, const char *path, const char *scheme,
                       const char *id)
{
    struct rz_w w = {0};
    struct rz_reply rep;
    rz_w_str(&w, path);
    rz_w_buf(&w, "", 0);
    rz_w_i32(&w, 1);
    rz_w_i32(&w, 31);
    rz_w_str(&w, scheme);
    rz_w_str(&w, id);
    rz_w_i32(&w, 0);
    int rc = rz_call(r, RZ_OP_CREATE, &w, &rep);
    rz_w_free(&w);
    zd_out("R create %s acl {31, %s, %s} -> %s", path, scheme ? scheme : "null",
           id ? id : "null", zd_err(rc != 0 ? RZ_ETRANSPORT : rep.err));
}

static void raw_create_checks(struct rz *r)
{
    static const char *paths[] = {"t", "", P("//x"), P("/./x"), P("/."), P("/.."), P("/")};
    char out[600];
    zd_out("## raw: server-side create validation");
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
        zd_out("R create '%s' -> %s", paths[i],
               zd_err(rz_create(r, RZ_OP_CREATE, paths[i], "", 0, 0, 0, NULL, 0, NULL)));
    out[0] = '\0';
    zd_out("R create '%s' seq -> %s %s", P("/r/"),
           zd_err(rz_create(r, RZ_OP_CREATE, P("/r/"), "", 0, 2, 0, out, sizeof out, NULL)),
           out);
    zd_out("R createTTL ttl=0 -> %s",
           zd_err(rz_create(r, RZ_OP_CREATETTL, P("/t0"), "", 0, 5, 0, NULL, 0, NULL)));
    zd_out("R createTTL ttl=2^40 -> %s",
           zd_err(rz_create(r, RZ_OP_CREATETTL, P("/t1"), "", 0, 5, 1099511627776LL, NULL, 0,
                            NULL)));
    zd_out("R createTTL flags=0 ttl=100 -> %s",
           zd_err(rz_create(r, RZ_OP_CREATETTL, P("/t2"), "", 0, 0, 100, NULL, 0, NULL)));
    zd_out("R createContainer -> %s",
           zd_err(rz_create(r, RZ_OP_CREATECONTAINER, P("/rc"), "", 0, 4, 0, NULL, 0, NULL)));
    zd_out("R setData 't' -> %s", zd_err(rz_set(r, "t", "x", 1, -1, NULL)));
    create_acl(r, P("/a1"), "auth", NULL);
    create_acl(r, P("/a2"), "auth", "");
    create_acl(r, P("/a3"), "world", NULL);
    create_acl(r, P("/a4"), "digest", NULL);
    create_acl(r, P("/a5"), "ip", NULL);
    create_acl(r, P("/a6"), NULL, "anyone");
    create_acl(r, P("/a7"), "bogus", NULL);
}

static void raw_setwatches(struct rz *r, struct zc *b)
{
    struct rz s;
    struct rz_w w = {0};
    struct rz_reply rep;
    int64_t rel;
    const char *data[3] = {P("/sw"), P("/sw/c1"), P("/sw2")};
    const char *exist[2] = {P("/sw/new"), P("/sw/never")};
    const char *child[1] = {P("/sw")};
    zd_out("## raw: setWatches catch-up");
    bcreate(b, P("/sw"));
    bcreate(b, P("/sw/c1"));
    bcreate(b, P("/sw2"));
    rz_ping_read(r, &rel);
    bset(b, P("/sw"), "1");
    bcreate(b, P("/sw/new"));
    bdelete(b, P("/sw/c1"));
    rz_init(&s);
    if (rz_open(&s, zd_hostport, 10000) != 0) {
        zd_out("S open failed");
        return;
    }
    zd_name_session(s.sid, "S");
    rz_w_i64(&w, rel);
    rz_w_strvec(&w, data, 3);
    rz_w_strvec(&w, exist, 2);
    rz_w_strvec(&w, child, 1);
    if (rz_send_req(&s, -8, RZ_OP_SETWATCHES, &w) == 0 && rz_read_reply(&s, &rep, 10000) == 0)
        zd_out("S setWatches -> xid %d %s, %d events before the reply", rep.xid,
               zd_err(rep.err), rz_pending_events(&s));
    rz_w_free(&w);
    zd_drain_raw(&s, "S");
    bcreate(b, P("/sw/never"));
    bset(b, P("/sw2"), "1");
    bset(b, P("/sw"), "2");
    zd_drain_raw(&s, "S");
    rz_close(&s);
}

static void raw_bad_input(void)
{
    struct rz z;
    struct rz_reply rep;
    struct rz_w w = {0};
    zd_out("## raw: bad input");
    rz_init(&z);
    if (rz_open(&z, zd_hostport, 10000) == 0) {
        int ok = rz_send_req(&z, 42, 50, NULL) == 0 && rz_read_reply(&z, &rep, 5000) == 0;
        /* Whether the connection then closes differs on purpose (ZooKeeper
         * closes it, tumblerd keeps it); raw_proto checks each. */
        zd_out("unknown opcode 50 -> xid %d zxid %lld %s", ok ? rep.xid : 0,
               ok ? (long long)rep.zxid : 0LL, ok ? zd_err(rep.err) : "NO-REPLY");
    }
    rz_drop(&z);
    if (rz_open(&z, zd_hostport, 10000) == 0) {
        rz_w_i32(&w, 100);
        rz_w_raw(&w, "abc", 3);
        int rejected = 0;
        if (rz_send_req(&z, 9, RZ_OP_GETDATA, &w) == 0) {
            if (rz_read_reply(&z, &rep, 5000) == 0)
                rejected = rep.err == -5;
            else
                rejected = 1; /* closed: also allowed */
        }
        zd_out("truncated getData -> rejected %d", rejected);
        rz_w_free(&w);
    }
    rz_drop(&z);
    if (rz_open(&z, zd_hostport, 10000) == 0) {
        static const unsigned char big[8] = {0x00, 0x10, 0x00, 0x00, 0, 0, 0, 1};
        rz_send(&z, big, sizeof big);
        zd_out("frame of 1048576 -> closed %d", rz_expect_close(&z, 5000));
    }
    rz_drop(&z);
    {
        struct rz_hello h = {0, 0x7fffffff00LL, 10000, 0, NULL, 0};
        if (rz_dial(&z, zd_hostport) == 0)
            zd_out("lastZxidSeen ahead -> handshake %d", rz_hello(&z, &h));
    }
    rz_drop(&z);
}

void zd_raw_script(struct zc *b)
{
    struct rz r;
    struct rz_reply rep;
    rz_init(&r);
    if (rz_open(&r, zd_hostport, 10000) != 0) {
        zd_out("R open failed");
        return;
    }
    zd_name_session(r.sid, "R");
    raw_basics(&r);
    raw_watches(&r, b);
    raw_multi(&r);
    raw_create_checks(&r);
    raw_setwatches(&r, b);
    raw_bad_input();
    zd_out("## raw: closeSession");
    if (rz_send_req(&r, 77, RZ_OP_CLOSE, NULL) == 0 && rz_read_reply(&r, &rep, 5000) == 0)
        zd_out("R close -> xid %d %s len %zu; closed %d", rep.xid, zd_err(rep.err), rep.len,
               rz_expect_close(&r, 5000));
    rz_drop(&r);
    {
        struct Stat st;
        int rc = zoo_exists(b->zh, P("/r/e1"), 0, &st);
        zd_out("B exists %s -> %s", P("/r/e1"), zd_err(rc));
    }
}
