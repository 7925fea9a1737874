/* zkc_ops, second part: ACLs (getACL/setACL, aversion, validation), authentication (digest,
 * ip, unknown schemes) and the session lifecycle (timeout negotiation, keep-alive, close,
 * expiry, reconnect with id and password).
 *
 * Expiry needs a session whose client stops talking.  The C client pings on its own thread, so
 * the session is held by a helper process (this program re-executed with --hold) that the test
 * kills with SIGKILL: the kernel closes its socket, no closeSession is sent, and the server
 * must expire the session by itself.
 *
 * session_keepalive and session_expiry wait for as long as the session timeouts
 * they are granted: the ctest runs zkc_ops_sessions_* give them a server
 * ticking every 250 ms, so a second or two (the main runs, with a 2 s tick,
 * skip them).  When exactly a session expires is tested on virtual time by
 * unit_expiry and unit_session. */
#include "zkc_ops.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* alice:secret hashed as the digest provider does: base64(sha1("alice:secret")) */
#define ALICE_ID "alice:aYXlLOpEooaV1cRAvUL1fp9Qt7E="

static struct ACL acl_one(int perms, const char *scheme, const char *id)
{
    struct ACL a;
    a.perms = perms;
    a.id.scheme = (char *)scheme;
    a.id.id = (char *)id;
    return a;
}

/* --- ACLs ---------------------------------------------------------------------------------- */

void t_acl_get_set(void)
{
    struct zc a = {0};
    const char *p = it_path("zkc", "acl");
    struct ACL_vector got = {0, NULL};
    struct ACL ro_entries[1];
    struct ACL_vector ro = {1, ro_entries};
    struct Stat st;
    OPEN(a);
    IT_EQ(mk(a.zh, p), ZOK);
    IT_EQ(zoo_get_acl(a.zh, p, &got, &st), ZOK);
    IT_EQ(got.count, 1);
    IT_EQ(got.data[0].perms, ZOO_PERM_ALL);
    IT_EQ_STR(got.data[0].id.scheme, "world");
    IT_EQ_STR(got.data[0].id.id, "anyone");
    IT_EQ(st.aversion, 0);
    deallocate_ACL_vector(&got);
    /* setACL checks the ACL version, not the data version */
    IT_EQ(zoo_set(a.zh, p, "x", 1, -1), ZOK);
    ro_entries[0] = acl_one(ZOO_PERM_READ | ZOO_PERM_ADMIN, "world", "anyone");
    IT_EQ(zoo_set_acl(a.zh, p, 1, &ro), ZBADVERSION);
    IT_EQ(zoo_set_acl(a.zh, p, 0, &ro), ZOK);
    IT_EQ(zoo_set_acl(a.zh, p, 0, &ro), ZBADVERSION);
    IT_EQ(zoo_get_acl(a.zh, p, &got, &st), ZOK);
    IT_EQ(st.aversion, 1);
    IT_EQ(st.version, 1);
    IT_EQ(got.count, 1);
    IT_EQ(got.data[0].perms, ZOO_PERM_READ | ZOO_PERM_ADMIN);
    deallocate_ACL_vector(&got);
    IT_EQ(zoo_set_acl(a.zh, p, -1, &ro), ZOK);
    IT_EQ(zoo_exists(a.zh, p, 0, &st), ZOK);
    IT_EQ(st.aversion, 2);
    /* READ|ADMIN only: writes, creates and deletes below are refused */
    IT_EQ(zoo_set(a.zh, p, "y", 1, -1), ZNOAUTH);
    IT_EQ(mk(a.zh, sub(p, "kid")), ZNOAUTH);
    /* ADMIN still allows setACL; READ alone does not */
    ro_entries[0] = acl_one(ZOO_PERM_READ, "world", "anyone");
    IT_EQ(zoo_set_acl(a.zh, p, -1, &ro), ZOK);
    IT_EQ(zoo_set_acl(a.zh, p, -1, &ZOO_OPEN_ACL_UNSAFE), ZNOAUTH);
    IT_EQ(zoo_get_acl(a.zh, p, &got, &st), ZOK); /* READ is enough for getACL */
    deallocate_ACL_vector(&got);
    IT_EQ(zoo_set_acl(a.zh, sub(p, "missing"), -1, &ZOO_OPEN_ACL_UNSAFE), ZNONODE);
    IT_EQ(zoo_get_acl(a.zh, sub(p, "missing"), &got, &st), ZNONODE);
    /* DELETE is checked on the parent, not on the node */
    {
        const char *q = it_path("zkc", "acl-del");
        struct ACL e[1] = {acl_one(ZOO_PERM_ALL & ~ZOO_PERM_DELETE, "world", "anyone")};
        struct ACL_vector nodel = {1, e};
        IT_EQ(zoo_create(a.zh, q, "", 0, &nodel, ZOO_PERSISTENT, NULL, 0), ZOK);
        IT_EQ(mk(a.zh, sub(q, "kid")), ZOK);
        IT_EQ(zoo_delete(a.zh, sub(q, "kid"), -1), ZNOAUTH);
        IT_EQ(zoo_delete(a.zh, q, -1), ZNOTEMPTY);
    }
done:
    zc_close(&a);
}

void t_acl_invalid(void)
{
    struct zc a = {0};
    const char *p = it_path("zkc", "aclbad");
    struct ACL e[1];
    struct ACL_vector one = {1, e}, empty = {0, NULL};
    static const char *cases[][2] = {
        {"world", "foo"},       {"ip", "999.1.1.1"}, {"ip", "127.0.0.1/33"},
        {"ip", "not-an-ip"},    {"digest", "nocolon"}, {"nosuch", "x"},
        {"auth", ""}, /* no authenticated identity to expand into */
    };
    OPEN(a);
    IT_EQ(mk(a.zh, p), ZOK);
    IT_EQ(zoo_create(a.zh, sub(p, "e"), "", 0, &empty, ZOO_PERSISTENT, NULL, 0), ZINVALIDACL);
    IT_EQ(zoo_set_acl(a.zh, p, -1, &empty), ZINVALIDACL);
    IT_EQ(zoo_create(a.zh, sub(p, "c"), "", 0, &ZOO_CREATOR_ALL_ACL, ZOO_PERSISTENT, NULL, 0),
          ZINVALIDACL);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        e[0] = acl_one(ZOO_PERM_ALL, cases[i][0], cases[i][1]);
        int rc = zoo_create(a.zh, sub(p, "x"), "", 0, &one, ZOO_PERSISTENT, NULL, 0);
        IT_CHECKF(rc == ZINVALIDACL, "create with ACL %s:%s: rc %d, want %d", cases[i][0],
                  cases[i][1], rc, ZINVALIDACL);
        rc = zoo_set_acl(a.zh, p, -1, &one);
        IT_CHECKF(rc == ZINVALIDACL, "setACL %s:%s: rc %d, want %d", cases[i][0],
                  cases[i][1], rc, ZINVALIDACL);
    }
    /* InvalidACL is checked before NoNode on setACL */
    IT_EQ(zoo_set_acl(a.zh, sub(p, "missing"), -1, &empty), ZINVALIDACL);
    /* valid ids of each scheme are accepted */
    e[0] = acl_one(ZOO_PERM_ALL, "ip", "10.0.0.0/8");
    IT_EQ(zoo_create(a.zh, sub(p, "ipnet"), "", 0, &one, ZOO_PERSISTENT, NULL, 0), ZOK);
    e[0] = acl_one(ZOO_PERM_ALL, "digest", "bob:anything");
    IT_EQ(zoo_create(a.zh, sub(p, "dig"), "", 0, &one, ZOO_PERSISTENT, NULL, 0), ZOK);
done:
    zc_close(&a);
}

/* --- authentication ------------------------------------------------------------------------- */

void t_auth_digest(void)
{
    struct zc a = {0}, b = {0}, c = {0}, d = {0};
    const char *p = it_path("zkc", "digest");
    struct ACL_vector got = {0, NULL};
    struct Stat st;
    char buf[16];
    int len = sizeof buf;
    OPEN(a);
    OPEN(b);
    OPEN(c);
    OPEN(d);
    IT_EQ(zc_add_auth(&a, "digest", "alice:secret"), ZOK);
    /* the "auth" scheme expands to the caller's authenticated identities */
    IT_EQ(zoo_create(a.zh, p, "s", 1, &ZOO_CREATOR_ALL_ACL, ZOO_PERSISTENT, NULL, 0), ZOK);
    IT_EQ(zoo_get_acl(a.zh, p, &got, &st), ZOK);
    IT_EQ(got.count, 1);
    IT_EQ(got.data[0].perms, ZOO_PERM_ALL);
    IT_EQ_STR(got.data[0].id.scheme, "digest");
    IT_EQ_STR(got.data[0].id.id, ALICE_ID);
    deallocate_ACL_vector(&got);
    IT_EQ(zoo_get(a.zh, p, 0, buf, &len, &st), ZOK);
    /* an unauthenticated session can do nothing but see that it exists */
    len = sizeof buf;
    IT_EQ(zoo_get(b.zh, p, 0, buf, &len, &st), ZNOAUTH);
    IT_EQ(zoo_set(b.zh, p, "x", 1, -1), ZNOAUTH);
    IT_EQ(zoo_get_acl(b.zh, p, &got, &st), ZNOAUTH);
    IT_EQ(zoo_set_acl(b.zh, p, -1, &ZOO_OPEN_ACL_UNSAFE), ZNOAUTH);
    IT_EQ(mk(b.zh, sub(p, "kid")), ZNOAUTH);
    {
        struct String_vector v = {0, NULL};
        IT_EQ(zoo_get_children(b.zh, p, 0, &v), ZNOAUTH);
    }
    /* NoNode wins over NoAuth for a missing node */
    IT_EQ(zoo_set(b.zh, sub(p, "missing"), "x", 1, -1), ZNONODE);
    /* wrong password: digest accepts the credential, but the id does not match */
    IT_EQ(zc_add_auth(&c, "digest", "alice:wrong"), ZOK);
    len = sizeof buf;
    IT_EQ(zoo_get(c.zh, p, 0, buf, &len, &st), ZNOAUTH);
    /* the right one from another session works; identities accumulate */
    IT_EQ(zc_add_auth(&d, "digest", "bob:pw"), ZOK);
    IT_EQ(zc_add_auth(&d, "digest", "alice:secret"), ZOK);
    len = sizeof buf;
    IT_EQ(zoo_get(d.zh, p, 0, buf, &len, &st), ZOK);
    IT_EQ(zoo_set(d.zh, p, "d", 1, -1), ZOK);
    IT_EQ(mk(d.zh, sub(p, "kid")), ZOK);
    /* the creator ACL of a two-identity session lists both */
    IT_EQ(zoo_create(d.zh, sub(p, "both"), "", 0, &ZOO_CREATOR_ALL_ACL, ZOO_PERSISTENT, NULL,
                     0), ZOK);
    IT_EQ(zoo_get_acl(d.zh, sub(p, "both"), &got, &st), ZOK);
    IT_EQ(got.count, 2);
    deallocate_ACL_vector(&got);
done:
    zc_close(&a);
    zc_close(&b);
    zc_close(&c);
    zc_close(&d);
}

void t_auth_digest_masking(void)
{
    struct zc a = {0}, b = {0};
    const char *p = it_path("zkc", "mask");
    struct ACL e[2];
    struct ACL_vector acl = {2, e};
    struct ACL_vector got = {0, NULL};
    struct Stat st;
    int masked = -1;
    OPEN(a);
    OPEN(b);
    e[0] = acl_one(ZOO_PERM_READ, "world", "anyone");
    e[1] = acl_one(ZOO_PERM_ALL, "digest", ALICE_ID);
    IT_EQ(zoo_create(a.zh, p, "", 0, &acl, ZOO_PERSISTENT, NULL, 0), ZOK);
    /* READ without ADMIN: digest ids are masked */
    IT_EQ(zoo_get_acl(b.zh, p, &got, &st), ZOK);
    IT_EQ(got.count, 2);
    for (int i = 0; i < got.count; i++)
        if (strcmp(got.data[i].id.scheme, "digest") == 0)
            masked = strcmp(got.data[i].id.id, "alice:x") == 0;
    deallocate_ACL_vector(&got);
    IT_EQ(masked, 1);
    /* with ADMIN the real id is shown */
    IT_EQ(zc_add_auth(&a, "digest", "alice:secret"), ZOK);
    IT_EQ(zoo_get_acl(a.zh, p, &got, &st), ZOK);
    for (int i = 0; i < got.count; i++)
        if (strcmp(got.data[i].id.scheme, "digest") == 0)
            masked = strcmp(got.data[i].id.id, "alice:x") == 0;
    deallocate_ACL_vector(&got);
    IT_EQ(masked, 0);
done:
    zc_close(&a);
    zc_close(&b);
}

void t_auth_unknown_scheme(void)
{
    struct zc a = {0}, b = {0};
    OPEN(a);
    OPEN(b);
    IT_EQ(zc_add_auth(&a, "nosuch", "whatever"), ZAUTHFAILED);
    /* the server closes the connection; the client turns that into the AUTH_FAILED state */
    IT_CHECK(zc_wait_state(&a, ZOO_AUTH_FAILED_STATE, 5000));
    IT_CHECK(zoo_exists(a.zh, "/", 0, NULL) != ZOK);
    /* other sessions are unaffected */
    IT_EQ(zoo_exists(b.zh, "/", 0, NULL), ZOK);
done:
    zc_close(&a);
    zc_close(&b);
}

void t_acl_ip(void)
{
    struct zc a = {0};
    const char *p = it_path("zkc", "ipacl");
    struct ACL e[1];
    struct ACL_vector acl = {1, e};
    char buf[16];
    int len;
    struct Stat st;
    OPEN(a);
    IT_EQ(mk(a.zh, p), ZOK);
    e[0] = acl_one(ZOO_PERM_ALL, "ip", "127.0.0.1");
    IT_EQ(zoo_create(a.zh, sub(p, "local"), "x", 1, &acl, ZOO_PERSISTENT, NULL, 0), ZOK);
    len = sizeof buf;
    IT_EQ(zoo_get(a.zh, sub(p, "local"), 0, buf, &len, &st), ZOK);
    e[0] = acl_one(ZOO_PERM_ALL, "ip", "10.1.2.3");
    IT_EQ(zoo_create(a.zh, sub(p, "remote"), "x", 1, &acl, ZOO_PERSISTENT, NULL, 0), ZOK);
    len = sizeof buf;
    IT_EQ(zoo_get(a.zh, sub(p, "remote"), 0, buf, &len, &st), ZNOAUTH);
    e[0] = acl_one(ZOO_PERM_READ, "ip", "127.0.0.0/8");
    IT_EQ(zoo_create(a.zh, sub(p, "net"), "x", 1, &acl, ZOO_PERSISTENT, NULL, 0), ZOK);
    len = sizeof buf;
    IT_EQ(zoo_get(a.zh, sub(p, "net"), 0, buf, &len, &st), ZOK);
    IT_EQ(zoo_set(a.zh, sub(p, "net"), "y", 1, -1), ZNOAUTH);
    e[0] = acl_one(ZOO_PERM_READ, "ip", "128.0.0.0/1");
    IT_EQ(zoo_create(a.zh, sub(p, "othernet"), "x", 1, &acl, ZOO_PERSISTENT, NULL, 0), ZOK);
    len = sizeof buf;
    IT_EQ(zoo_get(a.zh, sub(p, "othernet"), 0, buf, &len, &st), ZNOAUTH);
    /* "auth ip" adds nothing new for a local connection and is accepted */
    IT_EQ(zc_add_auth(&a, "ip", ""), ZOK);
    len = sizeof buf;
    IT_EQ(zoo_get(a.zh, sub(p, "local"), 0, buf, &len, &st), ZOK);
done:
    zc_close(&a);
}

/* --- session lifecycle ---------------------------------------------------------------------- */

void t_session_timeout_negotiation(void)
{
    struct zc a = {0};
    static const int cases[][2] = {{1000, 4000}, {10000, 10000}, {100000, 40000}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        IT_EQ(zc_open(&a, it_hostport, cases[i][0], NULL, 10000), ZOO_CONNECTED_STATE);
        int got = zoo_recv_timeout(a.zh);
        IT_CHECKF(got == cases[i][1], "requested %d ms: negotiated %d, want %d", cases[i][0],
                  got, cases[i][1]);
        zc_close(&a);
    }
done:
    zc_close(&a);
}

void t_session_keepalive(void)
{
    struct zc a = {0}, b = {0};
    const char *p = it_path("zkc", "alive");
    struct Stat st;
    int64_t sid;
    int t;
    IT_EQ(zc_open(&a, it_hostport, 1000, NULL, 10000), ZOO_CONNECTED_STATE);
    OPEN(b);
    t = zoo_recv_timeout(a.zh);
    sid = zoo_client_id(a.zh)->client_id;
    IT_EQ(zoo_create(a.zh, p, "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL, NULL, 0), ZOK);
    /* idle for more than twice the timeout: the client's pings must keep it alive */
    it_sleep_ms(2 * t + t / 2);
    IT_EQ(zoo_state(a.zh), ZOO_CONNECTED_STATE);
    IT_EQ(zoo_client_id(a.zh)->client_id, sid);
    IT_EQ(zoo_exists(b.zh, p, 0, &st), ZOK);
    IT_EQ(st.ephemeralOwner, sid);
done:
    zc_close(&a);
    zc_close(&b);
}

void t_session_close_removes_ephemerals(void)
{
    struct zc a = {0}, b = {0};
    const char *p = it_path("zkc", "closes");
    struct Stat st0, st;
    struct String_vector v = {0, NULL};
    struct zc_wctx w1 = {&b, 1}, w2 = {&b, 2};
    struct zc_event ev;
    int seen = 0;
    OPEN(a);
    OPEN(b);
    IT_EQ(mk(a.zh, p), ZOK);
    IT_EQ(zoo_create(a.zh, sub(p, "e1"), "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL, NULL, 0),
          ZOK);
    IT_EQ(zoo_create(a.zh, sub(p, "e2"), "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL, NULL, 0),
          ZOK);
    IT_EQ(mk(a.zh, sub(p, "keep")), ZOK);
    IT_EQ(zoo_exists(b.zh, p, 0, &st0), ZOK);
    IT_EQ(zoo_wexists(b.zh, sub(p, "e1"), zc_watcher, &w1, &st), ZOK);
    IT_EQ(zoo_wget_children(b.zh, p, zc_watcher, &w2, &v), ZOK);
    deallocate_String_vector(&v);
    zc_close(&a); /* sends closeSession and waits for its reply */
    for (int i = 0; i < 2; i++) {
        IT_CHECKF(zc_next_event(&b, 5000, &ev), "only %d of 2 events", i);
        if (ev.tag == 1) {
            IT_EQ(ev.type, ZOO_DELETED_EVENT);
            IT_EQ_STR(ev.path, sub(p, "e1"));
        } else {
            IT_EQ(ev.type, ZOO_CHILD_EVENT);
            IT_EQ_STR(ev.path, p);
        }
        seen |= 1 << ev.tag;
    }
    IT_EQ(seen, 6);
    IT_EQ(zoo_exists(b.zh, sub(p, "e1"), 0, NULL), ZNONODE);
    IT_EQ(zoo_exists(b.zh, sub(p, "e2"), 0, NULL), ZNONODE);
    IT_EQ(zoo_exists(b.zh, sub(p, "keep"), 0, NULL), ZOK);
    /* both deletions in one transaction: cversion +2, one pzxid */
    IT_EQ(zoo_exists(b.zh, p, 0, &st), ZOK);
    IT_EQ(st.numChildren, 1);
    IT_EQ(st.cversion, st0.cversion + 2);
    IT_CHECK(st.pzxid > st0.pzxid);
done:
    zc_close(&a);
    zc_close(&b);
}

/* --- helper process holding a session ------------------------------------------------------ */

struct holder {
    pid_t pid;
    clientid_t cid;
    int timeout; /* as negotiated */
};

/* zkc_ops --hold HOST:PORT TIMEOUT_MS PATH: open a session, create PATH as an
 * ephemeral node, print "SESSION <id> <password hex> <timeout granted>" and
 * wait to be killed (at most 120 s). */
int zkc_hold_main(int argc, char **argv)
{
    struct zc a;
    if (argc != 5)
        return 2;
    zc_quiet();
    if (zc_open(&a, argv[2], atoi(argv[3]), NULL, 10000) != ZOO_CONNECTED_STATE)
        return 3;
    if (zoo_create(a.zh, argv[4], "held", 4, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL, NULL, 0) !=
        ZOK)
        return 4;
    const clientid_t *id = zoo_client_id(a.zh);
    printf("SESSION %" PRIx64 " ", (uint64_t)id->client_id);
    for (int i = 0; i < 16; i++)
        printf("%02x", (unsigned char)id->passwd[i]);
    printf(" %d\n", zoo_recv_timeout(a.zh));
    fflush(stdout);
    sleep(120);
    return 0;
}

static int hold_start(struct holder *h, int timeout_ms, const char *path)
{
    int fds[2];
    char tbuf[16], line[128] = "";
    size_t used = 0;
    snprintf(tbuf, sizeof tbuf, "%d", timeout_ms);
    h->pid = -1;
    if (pipe(fds) != 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]);
        close(fds[1]);
        execl("/proc/self/exe", "zkc_ops", "--hold", it_hostport, tbuf, path, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    h->pid = pid;
    int64_t deadline = it_now_ms() + 15000;
    while (used + 1 < sizeof line && strchr(line, '\n') == NULL) {
        struct pollfd pfd = {fds[0], POLLIN, 0};
        int left = (int)(deadline - it_now_ms());
        if (left <= 0 || poll(&pfd, 1, left) <= 0)
            break;
        ssize_t n = read(fds[0], line + used, sizeof line - 1 - used);
        if (n <= 0)
            break;
        used += (size_t)n;
        line[used] = '\0';
    }
    close(fds[0]);
    uint64_t id;
    char pw[40];
    int n = sscanf(line, "SESSION %" SCNx64 " %39s %d", &id, pw, &h->timeout);
    if (n != 3 || strlen(pw) != 32)
        return -1;
    h->cid.client_id = (int64_t)id;
    for (int i = 0; i < 16; i++) {
        unsigned v;
        sscanf(pw + 2 * i, "%2x", &v);
        h->cid.passwd[i] = (char)v;
    }
    return 0;
}

static void hold_kill(struct holder *h)
{
    if (h->pid > 0) {
        kill(h->pid, SIGKILL);
        waitpid(h->pid, NULL, 0);
        h->pid = -1;
    }
}

void t_session_expiry(void)
{
    struct zc a = {0}, r = {0};
    struct holder h = {-1, {0, {0}}, 0};
    const char *p = it_path("zkc", "expire");
    struct Stat st;
    struct zc_wctx w1 = {&a, 1};
    struct zc_event ev;
    int64_t t_kill, waited;
    OPEN(a);
    IT_CHECKF(hold_start(&h, 2000, p) == 0,
              "helper process did not report its session");
    IT_EQ(zoo_wexists(a.zh, p, zc_watcher, &w1, &st), ZOK);
    IT_EQ(st.ephemeralOwner, h.cid.client_id);
    hold_kill(&h);
    t_kill = it_now_ms();
    /* the connection is gone but the session lives on: a server that ended it
     * with its connection would have deleted the node by now */
    it_sleep_ms(h.timeout / 4);
    IT_EQ(zoo_exists(a.zh, p, 0, &st), ZOK);
    IT_CHECKF(zc_next_event(&a, 15000, &ev), "ephemeral of the dead session not removed");
    waited = it_now_ms() - t_kill;
    IT_EQ(ev.type, ZOO_DELETED_EVENT);
    IT_EQ_STR(ev.path, p);
    IT_EQ(ev.tag, 1);
    /* not before its timeout, less the third of it the client may have been
     * silent before the kill (with margin): the server cannot beat this bound
     * however slow the machine is */
    IT_CHECKF(waited >= h.timeout / 2,
              "a %d ms session expired %lld ms after the kill", h.timeout,
              (long long)waited);
    IT_EQ(zoo_exists(a.zh, p, 0, &st), ZNONODE);
    /* resuming the expired session is refused */
    IT_EQ(zc_open(&r, it_hostport, 2000, &h.cid, 10000),
          ZOO_EXPIRED_SESSION_STATE);
done:
    hold_kill(&h);
    zc_close(&r);
    zc_close(&a);
}

void t_session_reconnect(void)
{
    struct zc a = {0}, r = {0}, bad = {0};
    struct holder h = {-1, {0, {0}}, 0};
    const char *p = it_path("zkc", "resume");
    struct Stat st;
    clientid_t wrong;
    OPEN(a);
    IT_CHECKF(hold_start(&h, 10000, p) == 0, "helper process did not report its session");
    hold_kill(&h);
    /* a wrong password is refused as an expired session ... */
    wrong = h.cid;
    wrong.passwd[0] ^= 0x5a;
    IT_EQ(zc_open(&bad, it_hostport, 10000, &wrong, 10000), ZOO_EXPIRED_SESSION_STATE);
    zc_close(&bad);
    /* ... but does not end the session: the right password resumes it */
    IT_EQ(zc_open(&r, it_hostport, 10000, &h.cid, 10000), ZOO_CONNECTED_STATE);
    IT_EQ(zoo_client_id(r.zh)->client_id, h.cid.client_id);
    IT_CHECK(memcmp(zoo_client_id(r.zh)->passwd, h.cid.passwd, 16) == 0);
    IT_EQ(zoo_exists(a.zh, p, 0, &st), ZOK);
    IT_EQ(st.ephemeralOwner, h.cid.client_id);
    /* the resumed session owns the node: closing it removes the node */
    IT_EQ(zoo_exists(r.zh, p, 0, &st), ZOK);
    zc_close(&r);
    IT_EQ(zoo_exists(a.zh, p, 0, &st), ZNONODE);
    /* and a closed session cannot be resumed */
    IT_EQ(zc_open(&r, it_hostport, 10000, &h.cid, 10000), ZOO_EXPIRED_SESSION_STATE);
done:
    hold_kill(&h);
    zc_close(&bad);
    zc_close(&r);
    zc_close(&a);
}
