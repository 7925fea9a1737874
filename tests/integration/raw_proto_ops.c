/* raw_proto: the 3.6+ opcodes (whoAmI, getEphemerals, getAllChildrenNumber), exact multi
 * result layouts, multiRead, and the server-side path and create-mode checks, each checked
 * against Apache ZooKeeper 3.8 (raw_proto.c has the runner). */
#include "raw_proto.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- auth, whoAmI, getEphemerals, getAllChildrenNumber ---------------------------------- */

static int whoami(struct rz *z, char *out, size_t cap)
{
    struct rz_reply rep;
    char entries[8][128];
    char *ptrs[8];
    if (rz_call(z, RZ_OP_WHOAMI, NULL, &rep) != 0)
        return RZ_ETRANSPORT;
    if (rep.err != 0)
        return rep.err;
    int32_t n = rz_r_i32(&rep.body);
    if (n < 0 || n > 8)
        return RZ_ETRANSPORT;
    for (int i = 0; i < n; i++) {
        char scheme[64], user[64];
        rz_r_str(&rep.body, scheme, sizeof scheme);
        rz_r_str(&rep.body, user, sizeof user);
        snprintf(entries[i], sizeof entries[i], "%s:%s", scheme, user);
        ptrs[i] = entries[i];
    }
    /* order is not part of the contract */
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (strcmp(ptrs[i], ptrs[j]) > 0) {
                char *t = ptrs[i];
                ptrs[i] = ptrs[j];
                ptrs[j] = t;
            }
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < n; i++)
        used += (size_t)snprintf(out + used, used < cap ? cap - used : 0, "%s%s",
                                 i ? "," : "", ptrs[i]);
    return rep.body.bad ? RZ_ETRANSPORT : 0;
}

void t_auth_and_whoami(void)
{
    struct rz a, b;
    struct rz_w w = {0};
    struct rz_reply rep;
    char who[512];
    rz_init(&a);
    rz_init(&b);
    ROPEN(a);
    IT_EQ(whoami(&a, who, sizeof who), 0);
    IT_EQ_STR(who, "ip:127.0.0.1");
    /* auth reply: the request's xid, zxid 0 */
    rz_w_i32(&w, 0);
    rz_w_str(&w, "digest");
    rz_w_buf(&w, "bob:pw", 6);
    IT_EQ(rz_send_req(&a, -4, RZ_OP_AUTH, &w), 0);
    IT_EQ(rz_read_reply(&a, &rep, 5000), 0);
    IT_EQ(rep.xid, -4);
    IT_EQ(rep.zxid, 0);
    IT_EQ(rep.err, 0);
    IT_EQ(rep.len, 16);
    IT_EQ(whoami(&a, who, sizeof who), 0);
    IT_EQ_STR(who, "digest:bob,ip:127.0.0.1");
    /* digest accepts a credential without a colon */
    IT_EQ(rz_auth(&a, "digest", "nocolon"), 0);
    /* an unknown scheme: AuthFailed, then the connection is closed */
    ROPEN(b);
    IT_EQ(rz_auth(&b, "nosuch", "x"), -115);
    IT_EQ(rz_expect_close(&b, 5000), 1);
done:
    rz_w_free(&w);
    rz_close(&a);
    rz_drop(&b);
}

/* "uNNN000...:pw": a digest credential of a user of 994 bytes. */
static const char *big_user(int i)
{
    static char cred[1010];
    snprintf(cred, sizeof cred, "u%03d%0990d:pw", i, 0);
    return cred;
}

/* Every write tumblerd logs carries its connection's identities: setAuth adds
 * none once they take 8 KiB, so that a create of a few bytes cannot make a log
 * entry of megabytes.  ZooKeeper, which logs none, takes them all. */
void t_auth_ids_bounded(void)
{
    struct rz a;
    int i, held, err = 0;
    rz_init(&a);
    ROPEN(a);
    for (i = 0; i < 16 && err == 0; i++)
        err = rz_auth(&a, "digest", big_user(i));
    if (!it_server_is_tumblerd()) {
        IT_EQ(err, 0);
        IT_EQ(rz_ping_read(&a, NULL), 0);
        goto done;
    }
    IT_EQ(err, -115);
    held = i - 1;
    IT_CHECKF(held >= 4, "refused after %d identities of about 1 KiB", held);
    IT_EQ(rz_expect_close(&a, 5000), 1);
    /* A new connection takes the same again; one it holds is taken again at the
     * bound. */
    rz_drop(&a);
    ROPEN(a);
    for (i = 0; i < held; i++)
        IT_EQ(rz_auth(&a, "digest", big_user(i)), 0);
    IT_EQ(rz_auth(&a, "digest", big_user(0)), 0);
    IT_EQ(rz_auth(&a, "digest", big_user(held)), -115);
done:
    rz_close(&a);
}

static int get_ephemerals(struct rz *z, const char *prefix, char *out, size_t cap)
{
    struct rz_w w = {0};
    struct rz_reply rep;
    rz_w_str(&w, prefix);
    int rc = rz_call(z, RZ_OP_GETEPHEMERALS, &w, &rep);
    rz_w_free(&w);
    if (rc != 0)
        return RZ_ETRANSPORT;
    if (rep.err == 0 && rz_r_strvec_joined(&rep.body, out, cap) != 0)
        return RZ_ETRANSPORT;
    return rep.err;
}

void t_get_ephemerals(void)
{
    struct rz a, b;
    const char *p = it_path("raw", "eph");
    char got[1024], want[1024];
    rz_init(&a);
    rz_init(&b);
    ROPEN(a);
    ROPEN(b);
    IT_EQ(rmk(&a, p), 0);
    IT_EQ(rz_create(&a, RZ_OP_CREATE, rsub(p, "e1"), "", 0, 1, 0, NULL, 0, NULL), 0);
    IT_EQ(rz_create(&a, RZ_OP_CREATE, rsub(p, "e2"), "", 0, 1, 0, NULL, 0, NULL), 0);
    IT_EQ(rz_create(&a, RZ_OP_CREATE, rsub(p, "x1"), "", 0, 1, 0, NULL, 0, NULL), 0);
    IT_EQ(rz_create(&b, RZ_OP_CREATE, rsub(p, "e3"), "", 0, 1, 0, NULL, 0, NULL), 0);
    IT_EQ(rmk(&a, rsub(p, "e4")), 0); /* persistent: never listed */
    /* plain string prefix, own session only, full paths */
    IT_EQ(get_ephemerals(&a, rsub(p, "e"), got, sizeof got), 0);
    snprintf(want, sizeof want, "%s/e1,%s/e2", p, p);
    IT_EQ_STR(got, want);
    IT_EQ(get_ephemerals(&a, p, got, sizeof got), 0);
    snprintf(want, sizeof want, "%s/e1,%s/e2,%s/x1", p, p, p);
    IT_EQ_STR(got, want);
    IT_EQ(get_ephemerals(&a, "/", got, sizeof got), 0);
    IT_EQ_STR(got, want);
    IT_EQ(get_ephemerals(&b, "/", got, sizeof got), 0);
    snprintf(want, sizeof want, "%s/e3", p);
    IT_EQ_STR(got, want);
    IT_EQ(get_ephemerals(&b, "/nothing-here", got, sizeof got), 0);
    IT_EQ_STR(got, "");
done:
    rz_close(&a);
    rz_close(&b);
}

static int all_children(struct rz *z, const char *path, int32_t *n)
{
    struct rz_w w = {0};
    struct rz_reply rep;
    rz_w_str(&w, path);
    int rc = rz_call(z, RZ_OP_GETALLCHILDRENNUMBER, &w, &rep);
    rz_w_free(&w);
    if (rc != 0)
        return RZ_ETRANSPORT;
    if (rep.err == 0)
        *n = rz_r_i32(&rep.body);
    return rep.err;
}

void t_all_children_number(void)
{
    struct rz a;
    const char *p = it_path("raw", "allkids");
    int32_t n = -1;
    rz_init(&a);
    ROPEN(a);
    IT_EQ(rmk(&a, p), 0);
    IT_EQ(all_children(&a, p, &n), 0);
    IT_EQ(n, 0);
    IT_EQ(rmk(&a, rsub(p, "a")), 0);
    IT_EQ(rmk(&a, rsub(p, "b")), 0);
    IT_EQ(rmk(&a, rsub(p, "a/c")), 0);
    IT_EQ(rmk(&a, rsub(p, "a/c/d")), 0);
    IT_EQ(all_children(&a, p, &n), 0);
    IT_EQ(n, 4); /* all descendants, not the node itself */
    IT_EQ(all_children(&a, rsub(p, "a"), &n), 0);
    IT_EQ(n, 2);
    IT_EQ(all_children(&a, rsub(p, "missing"), &n), -101);
done:
    rz_close(&a);
}

/* --- multi and multiRead result layouts ------------------------------------------------- */

void t_multi_wire_failure(void)
{
    struct rz a;
    struct rz_w w = {0};
    struct rz_reply rep;
    const char *p = it_path("raw", "mfail");
    static const int32_t want[3] = {0, -101, -2};
    rz_init(&a);
    ROPEN(a);
    IT_EQ(rmk(&a, p), 0);
    mh(&w, RZ_OP_CREATE, 0, -1);
    create_rec(&w, rsub(p, "m2"), 0);
    mh(&w, RZ_OP_DELETE, 0, -1);
    rz_w_str(&w, rsub(p, "nonexistent"));
    rz_w_i32(&w, -1);
    mh(&w, RZ_OP_CREATE, 0, -1);
    create_rec(&w, rsub(p, "m3"), 0);
    mh(&w, -1, 1, -1);
    IT_EQ(rz_call(&a, RZ_OP_MULTI, &w, &rep), 0);
    IT_EQ(rep.err, 0); /* a failed multi is reported in its results only */
    for (int i = 0; i < 3; i++) {
        IT_EQ(rz_r_i32(&rep.body), -1);
        IT_EQ(rz_r_bool(&rep.body), 0);
        IT_EQ(rz_r_i32(&rep.body), want[i]);
        IT_EQ(rz_r_i32(&rep.body), want[i]);
    }
    IT_EQ(rz_r_i32(&rep.body), -1);
    IT_EQ(rz_r_bool(&rep.body), 1);
    IT_EQ(rz_r_i32(&rep.body), -1);
    IT_CHECK(!rep.body.bad);
    IT_EQ(rz_exists(&a, rsub(p, "m2"), 0, NULL), -101);
    /* a read op inside multi fails the whole request */
    rz_w_free(&w);
    mh(&w, RZ_OP_GETDATA, 0, -1);
    rz_w_str(&w, p);
    rz_w_bool(&w, 0);
    mh(&w, -1, 1, -1);
    IT_EQ(rz_call(&a, RZ_OP_MULTI, &w, &rep), 0);
    IT_EQ(rep.err, -5);
    IT_EQ(rz_ping_read(&a, NULL), 0);
done:
    rz_w_free(&w);
    rz_close(&a);
}

void t_multi_wire_success(void)
{
    struct rz a;
    struct rz_w w = {0};
    struct rz_reply rep;
    struct rz_stat st;
    char path[600];
    const char *p = it_path("raw", "mok");
    int32_t type;
    rz_init(&a);
    ROPEN(a);
    IT_EQ(rmk(&a, p), 0);
    mh(&w, RZ_OP_CREATE2, 0, -1);
    create_rec(&w, rsub(p, "a"), 0);
    mh(&w, RZ_OP_CREATECONTAINER, 0, -1);
    create_rec(&w, rsub(p, "c"), 4);
    mh(&w, RZ_OP_CREATETTL, 0, -1);
    create_rec(&w, rsub(p, "t"), 5);
    rz_w_i64(&w, 600000);
    mh(&w, RZ_OP_SETDATA, 0, -1);
    rz_w_str(&w, rsub(p, "a"));
    rz_w_buf(&w, "xyz", 3);
    rz_w_i32(&w, 0);
    mh(&w, RZ_OP_CHECK, 0, -1);
    rz_w_str(&w, rsub(p, "a"));
    rz_w_i32(&w, 1);
    mh(&w, RZ_OP_CREATE, 0, -1);
    create_rec(&w, rsub(p, "d"), 2);
    mh(&w, RZ_OP_DELETE, 0, -1);
    rz_w_str(&w, rsub(p, "d0000000003"));
    rz_w_i32(&w, 0);
    mh(&w, -1, 1, -1);
    IT_EQ(rz_call(&a, RZ_OP_MULTI, &w, &rep), 0);
    IT_EQ(rep.err, 0);
    /* create2: a create result (3.5-3.8) or a create2 result (3.9+) */
    type = rz_r_i32(&rep.body);
    IT_CHECKF(type == 1 || type == 15, "create2 result type %d", type);
    IT_EQ(rz_r_bool(&rep.body), 0);
    IT_EQ(rz_r_i32(&rep.body), 0);
    rz_r_str(&rep.body, path, sizeof path);
    IT_EQ_STR(path, rsub(p, "a"));
    if (type == 15)
        rz_r_stat(&rep.body, &st);
    /* createContainer and createTTL: create2 results with a Stat */
    for (int i = 0; i < 2; i++) {
        IT_EQ(rz_r_i32(&rep.body), 15);
        IT_EQ(rz_r_bool(&rep.body), 0);
        IT_EQ(rz_r_i32(&rep.body), 0);
        rz_r_str(&rep.body, path, sizeof path);
        IT_EQ_STR(path, rsub(p, i == 0 ? "c" : "t"));
        rz_r_stat(&rep.body, &st);
        IT_EQ(st.ephemeral_owner, 0);
        IT_EQ(st.version, 0);
    }
    /* setData: the new Stat */
    IT_EQ(rz_r_i32(&rep.body), 5);
    IT_EQ(rz_r_bool(&rep.body), 0);
    IT_EQ(rz_r_i32(&rep.body), 0);
    rz_r_stat(&rep.body, &st);
    IT_EQ(st.version, 1);
    IT_EQ(st.data_length, 3);
    /* check: no body */
    IT_EQ(rz_r_i32(&rep.body), 13);
    IT_EQ(rz_r_bool(&rep.body), 0);
    IT_EQ(rz_r_i32(&rep.body), 0);
    /* sequential create inside multi: the 4th child gets suffix 3 */
    IT_EQ(rz_r_i32(&rep.body), 1);
    IT_EQ(rz_r_bool(&rep.body), 0);
    IT_EQ(rz_r_i32(&rep.body), 0);
    rz_r_str(&rep.body, path, sizeof path);
    IT_EQ_STR(path, rsub(p, "d0000000003"));
    /* delete: no body */
    IT_EQ(rz_r_i32(&rep.body), 2);
    IT_EQ(rz_r_bool(&rep.body), 0);
    IT_EQ(rz_r_i32(&rep.body), 0);
    IT_EQ(rz_r_i32(&rep.body), -1);
    IT_EQ(rz_r_bool(&rep.body), 1);
    IT_EQ(rz_r_i32(&rep.body), -1);
    IT_CHECK(!rep.body.bad);
    IT_EQ(rz_r_left(&rep.body), 0);
done:
    rz_w_free(&w);
    rz_close(&a);
}

void t_multi_read(void)
{
    struct rz a;
    struct rz_w w = {0};
    struct rz_reply rep;
    struct rz_stat st;
    char buf[600];
    const char *p = it_path("raw", "mread");
    int64_t z0, z1;
    rz_init(&a);
    ROPEN(a);
    IT_EQ(rz_create(&a, RZ_OP_CREATE, p, "data", 4, 0, 0, NULL, 0, NULL), 0);
    IT_EQ(rmk(&a, rsub(p, "k2")), 0);
    IT_EQ(rmk(&a, rsub(p, "k1")), 0);
    IT_EQ(rz_ping_read(&a, &z0), 0);
    mh(&w, RZ_OP_GETDATA, 0, -1);
    rz_w_str(&w, p);
    rz_w_bool(&w, 0);
    mh(&w, RZ_OP_GETCHILDREN, 0, -1);
    rz_w_str(&w, p);
    rz_w_bool(&w, 0);
    mh(&w, RZ_OP_GETDATA, 0, -1);
    rz_w_str(&w, rsub(p, "missing"));
    rz_w_bool(&w, 0);
    mh(&w, -1, 1, -1);
    IT_EQ(rz_call(&a, RZ_OP_MULTIREAD, &w, &rep), 0);
    IT_EQ(rep.err, 0);
    IT_EQ(rep.zxid, z0); /* not a transaction */
    IT_EQ(rz_r_i32(&rep.body), 4);
    IT_EQ(rz_r_bool(&rep.body), 0);
    IT_EQ(rz_r_i32(&rep.body), 0);
    IT_EQ(rz_r_str(&rep.body, buf, sizeof buf), 4);
    IT_EQ_STR(buf, "data");
    rz_r_stat(&rep.body, &st);
    IT_EQ(st.num_children, 2);
    IT_EQ(rz_r_i32(&rep.body), 8);
    IT_EQ(rz_r_bool(&rep.body), 0);
    IT_EQ(rz_r_i32(&rep.body), 0);
    IT_EQ(rz_r_strvec_joined(&rep.body, buf, sizeof buf), 0);
    IT_EQ_STR(buf, "k1,k2");
    /* each read fails on its own */
    IT_EQ(rz_r_i32(&rep.body), -1);
    IT_EQ(rz_r_bool(&rep.body), 0);
    IT_EQ(rz_r_i32(&rep.body), -101);
    IT_EQ(rz_r_i32(&rep.body), -101);
    IT_EQ(rz_r_i32(&rep.body), -1);
    IT_EQ(rz_r_bool(&rep.body), 1);
    IT_EQ(rz_r_i32(&rep.body), -1);
    IT_CHECK(!rep.body.bad);
    IT_EQ(rz_ping_read(&a, &z1), 0);
    IT_EQ(z1, z0);
done:
    rz_w_free(&w);
    rz_close(&a);
}

/* --- server-side validation of create ----------------------------------------------------- */

static int create_raw_path(struct rz *z, const char *path, size_t plen, int32_t flags,
                           char *out, size_t cap)
{
    struct rz_w w = {0};
    struct rz_reply rep;
    rz_w_i32(&w, (int32_t)plen);
    rz_w_raw(&w, path, plen);
    rz_w_buf(&w, "", 0);
    rz_w_acl_open(&w);
    rz_w_i32(&w, flags);
    int rc = rz_call(z, RZ_OP_CREATE, &w, &rep);
    rz_w_free(&w);
    if (rc != 0)
        return RZ_ETRANSPORT;
    if (rep.err == 0 && out != NULL)
        rz_r_str(&rep.body, out, cap);
    return rep.err;
}

void t_create_path_checks(void)
{
    struct rz a;
    const char *p = it_path("raw", "paths");
    char out[600], tmp[600];
    struct {
        const char *suffix; /* appended to p; NULL: the path is `abs` */
        const char *abs;
        int32_t flags;
        int want;
    } cases[] = {
        {NULL, "t", 0, -8},          {NULL, "", 0, -8},          {NULL, "/", 0, -110},
        {"/", NULL, 0, -8},          {"//x", NULL, 0, -101},     {"/./x", NULL, 0, -101},
        {"/.", NULL, 0, -8},         {"/..", NULL, 0, -8},       {"/a\x01", NULL, 0, -8},
        {"/missing/", NULL, 0, -101}, {"/a\x7f", NULL, 2, -8},
    };
    rz_init(&a);
    ROPEN(a);
    IT_EQ(rmk(&a, p), 0);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *path = cases[i].abs;
        if (path == NULL) {
            snprintf(tmp, sizeof tmp, "%s%s", p, cases[i].suffix);
            path = tmp;
        }
        int rc = create_raw_path(&a, path, strlen(path), cases[i].flags, NULL, 0);
        IT_CHECKF(rc == cases[i].want, "create case %zu: rc %d, want %d", i, rc,
                  cases[i].want);
    }
    /* a NUL inside the path */
    snprintf(tmp, sizeof tmp, "%s/a", p);
    {
        size_t n = strlen(tmp);
        tmp[n] = '\0';
        tmp[n + 1] = 'b';
        IT_EQ(create_raw_path(&a, tmp, n + 2, 0, NULL, 0), -8);
    }
    /* "parent/" with a sequential flag gets the suffix and is then valid */
    snprintf(tmp, sizeof tmp, "%s/", p);
    IT_EQ(create_raw_path(&a, tmp, strlen(tmp), 2, out, sizeof out), 0);
    snprintf(tmp, sizeof tmp, "%s/0000000000", p);
    IT_EQ_STR(out, tmp);
    /* setData validates the whole path */
    IT_EQ(rz_set(&a, "t", "x", 1, -1, NULL), -8);
    snprintf(tmp, sizeof tmp, "%s/", p);
    IT_EQ(rz_set(&a, tmp, "x", 1, -1, NULL), -8);
    snprintf(tmp, sizeof tmp, "%s//x", p);
    IT_EQ(rz_set(&a, tmp, "x", 1, -1, NULL), -8);
    /* delete refuses the system nodes */
    IT_EQ(rz_delete(&a, "/", -1), -8);
    IT_EQ(rz_delete(&a, "/zookeeper", -1), -8);
    IT_EQ(rz_delete(&a, "t", -1), -8);
done:
    rz_close(&a);
}

void t_create_mode_checks(void)
{
    struct rz a;
    const char *p = it_path("raw", "modes");
    char out[600];
    struct rz_stat st;
    rz_init(&a);
    ROPEN(a);
    IT_EQ(rmk(&a, p), 0);
    IT_EQ(rz_create(&a, RZ_OP_CREATE, rsub(p, "f7"), "", 0, 7, 0, NULL, 0, NULL), -8);
    IT_EQ(rz_create(&a, RZ_OP_CREATE, rsub(p, "f-1"), "", 0, -1, 0, NULL, 0, NULL), -8);
    IT_EQ(rz_create(&a, RZ_OP_CREATE2, rsub(p, "f9"), "", 0, 9, 0, NULL, 0, NULL), -8);
    /* TTL range is 1 .. 2^40-1 */
    IT_EQ(rz_create(&a, RZ_OP_CREATETTL, rsub(p, "t0"), "", 0, 5, 0, NULL, 0, NULL), -8);
    IT_EQ(rz_create(&a, RZ_OP_CREATETTL, rsub(p, "tbig"), "", 0, 5, 1099511627776LL, NULL, 0,
                    NULL), -8);
    IT_EQ(rz_create(&a, RZ_OP_CREATETTL, rsub(p, "tneg"), "", 0, 6, -1, NULL, 0, NULL), -8);
    IT_EQ(rz_create(&a, RZ_OP_CREATETTL, rsub(p, "tmax"), "", 0, 5, 1099511627775LL, out,
                    sizeof out, &st), 0);
    IT_EQ_STR(out, rsub(p, "tmax"));
    IT_EQ(st.ephemeral_owner, 0);
    /* createTTL with a non-TTL mode and a valid ttl */
    IT_EQ(rz_create(&a, RZ_OP_CREATETTL, rsub(p, "n0"), "", 0, 0, 100, NULL, 0, NULL), -8);
    IT_EQ(rz_create(&a, RZ_OP_CREATETTL, rsub(p, "n1"), "", 0, 1, 100, NULL, 0, NULL), -8);
    IT_EQ(rz_create(&a, RZ_OP_CREATETTL, rsub(p, "n2"), "", 0, 2, 100, NULL, 0, NULL), -8);
    /* sequential TTL */
    IT_EQ(rz_create(&a, RZ_OP_CREATETTL, rsub(p, "ts-"), "", 0, 6, 600000, out, sizeof out,
                    &st), 0);
    IT_EQ_STR(out, rsub(p, "ts-0000000001"));
    /* createContainer */
    IT_EQ(rz_create(&a, RZ_OP_CREATECONTAINER, rsub(p, "c"), "", 0, 4, 0, out, sizeof out,
                    &st), 0);
    IT_EQ_STR(out, rsub(p, "c"));
    IT_EQ(st.ephemeral_owner, 0);
    IT_EQ(st.czxid, st.pzxid);
    /* nothing of the failures was created */
    IT_EQ(rz_children(&a, p, 0, out, sizeof out), 0);
    IT_EQ_STR(out, "c,tmax,ts-0000000001");
done:
    rz_close(&a);
}
