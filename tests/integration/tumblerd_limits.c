/* tumblerd_limits: tumblerd's own limits and settings, each run against a
 * server started with the setting under test (see CMakeLists.txt):
 *   max_cnxns     --maxClientCnxns=5: the 6th connection from one address is
 *                 closed at once, the others keep being served
 *   dual_stack_cnxns the same on a dual-stack port (clientPortAddress=::):
 *                 5 from 127.0.0.1 (ip:127.0.0.1, as Java writes an
 *                 IPv4-mapped address) and 5 from ::1, each address's 6th
 *                 closed
 *   outstanding   --globalOutstandingLimit=8: 2000 pipelined requests are all
 *                 answered, in order (reading pauses; nothing is dropped)
 *   slow_reader   a client that stops reading 200 MB of replies: the server
 *                 stops reading it, others are served, memory stays bounded,
 *                 and every reply still arrives once it reads again
 *   reading_alive --tickTime=200: a client reading a reply of 30 MB
 *                 slowly for 4 times its 1 s session timeout, its pings
 *                 unread while its output holds it back, keeps its session
 *   whitelist     --4lw.commands.whitelist=ruok: other words are refused
 *   low_disk      --minFreeDiskBytes above the free space: writes answer
 *                 NotReadOnly, reads work, the server stays up
 *   large_node    --jute.maxbuffer=100000000: a node of 67,200,000 bytes
 *                 (more than the 64 MiB of replies a client may leave
 *                 unread) is created and read back whole
 *   super_digest  the superuser digest bypasses every ACL
 *   wide_children getChildren of 10,000 children
 *   closing_unread --maxClientCnxns=2, tickTime 200: a session that expires
 *                 while its client reads none of 30 MB of replies is
 *                 closed 10 s later, and its place taken by another
 *   multi_read    one multiRead asking 200 times for a node of 1 MB: the
 *                 connection is closed before the reply passes 64 MiB,
 *                 the server's memory stays bounded, others are served
 *   watch_burst   100,000 notifications at once: 100 sessions watching a
 *                 subtree recursively while 1,000 nodes are created
 *   many_sessions 10,000 concurrent sessions, each with a watch, all
 *                 notified by one create; memory per session bounded
 * Usage: tumblerd_limits HOST:PORT NAME (IT_SERVER_PID names the server). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "itest.h"
#include "rawzk.h"

#define OP_EXISTS 3
#define OP_GETDATA 4

static int open_session(struct rz *z)
{
    rz_init(z);
    return rz_open(z, it_hostport, 10000);
}


static void t_max_cnxns(void)
{
    struct rz z[6];
    int i;

    for (i = 0; i < 5; i++)
        IT_EQ(open_session(&z[i]), 0);
    rz_init(&z[5]);
    /* Accepted by the kernel, then closed before any handshake. */
    IT_EQ(rz_dial(&z[5], it_hostport), 0);
    IT_EQ(rz_hello(&z[5], &(struct rz_hello){0, 0, 10000, 0, NULL, 0}), -1);
    rz_drop(&z[5]);
    for (i = 0; i < 5; i++)
        IT_EQ(rz_ping_read(&z[i], NULL), 0);
    rz_close(&z[0]);
    usleep(200000);
    IT_EQ(open_session(&z[0]), 0); /* a slot came back */
    rz_close(&z[4]);
    usleep(200000);
    {
        char buf[8192]; /* mntr's connection takes the freed slot */
        IT_CHECK(rz_four_letter(it_hostport, "mntr", buf, sizeof buf) >= 0);
        IT_CHECKF(strstr(buf, "\nzk_connection_rejected\t1\n") != NULL,
                  "mntr does not count the one refused: %s", buf);
    }
done:
    for (i = 0; i < 5; i++)
        rz_close(&z[i]); /* z[4] again: a no-op */
}

/* Five sessions from HP's address are served, a sixth is closed. */
static int fill(const char *hp, struct rz z[6])
{
    int i;

    for (i = 0; i < 6; i++)
        rz_init(&z[i]);
    for (i = 0; i < 5; i++)
        IT_EQ(rz_open(&z[i], hp, 10000), 0);
    IT_EQ(rz_dial(&z[5], hp), 0);
    IT_EQ(rz_hello(&z[5], &(struct rz_hello){0, 0, 10000, 0, NULL, 0}), -1);
    for (i = 0; i < 5; i++)
        IT_EQ(rz_ping_read(&z[i], NULL), 0);
    return 0;
done:
    return -1;
}

static void t_dual_stack_cnxns(void)
{
    struct rz v4[6], v6[6];
    struct rz_reply rep;
    char hp[64], buf[8192], scheme[16], id[64];
    int i, n, ip = 0;

    snprintf(hp, sizeof hp, "::1%s", strrchr(it_hostport, ':'));
    IT_EQ(fill(it_hostport, v4), 0);
    IT_EQ(fill(hp, v6), 0);
    /* An IPv4 client's ip id is IPv4, as Java writes it, not ::ffff:...:
     * what "ip:127.0.0.0/8" ACLs match. */
    IT_EQ(rz_call(&v4[0], RZ_OP_WHOAMI, NULL, &rep), 0);
    for (n = rz_r_i32(&rep.body), i = 0; i < n; i++) {
        rz_r_str(&rep.body, scheme, sizeof scheme);
        rz_r_str(&rep.body, id, sizeof id);
        ip += strcmp(scheme, "ip") == 0 && strcmp(id, "127.0.0.1") == 0;
    }
    IT_CHECKF(ip == 1, "whoAmI over IPv4 on ::, last id %s:%s", scheme, id);
    for (i = 0; i < 5; i++)
        rz_close(&v4[i]);
    usleep(200000);
    IT_CHECK(rz_four_letter(it_hostport, "mntr", buf, sizeof buf) >= 0);
    IT_CHECKF(strstr(buf, "\nzk_connection_rejected\t2\n") != NULL,
              "mntr does not count the two refused: %s", buf);
done:
    for (i = 0; i < 6; i++) {
        rz_close(&v4[i]);
        rz_close(&v6[i]);
    }
}

static void exists_body(struct rz_w *w, const char *path)
{
    rz_w_str(w, path);
    rz_w_bool(w, 0);
}

static void t_outstanding(void)
{
    struct rz z;
    struct rz_w w = {0};
    struct rz_reply rep;
    int i, n = 2000;

    IT_EQ(open_session(&z), 0);
    exists_body(&w, "/");
    for (i = 0; i < n; i++)
        IT_EQ(rz_send_req(&z, 1000 + i, OP_EXISTS, &w), 0);
    for (i = 0; i < n; i++) {
        IT_EQ(rz_read_reply(&z, &rep, 10000), 0);
        IT_EQ(rep.xid, 1000 + i);
        IT_EQ(rep.err, 0);
    }
done:
    rz_w_free(&w);
    rz_close(&z);
}

static long server_rss_kb(void)
{
    const char *pid = getenv("IT_SERVER_PID");
    char path[64], line[256];
    long kb = -1;
    FILE *f;

    if (pid == NULL)
        return -1;
    snprintf(path, sizeof path, "/proc/%s/status", pid);
    f = fopen(path, "r");
    if (f == NULL)
        return -1;
    while (fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
            break;
    fclose(f);
    return kb;
}

static void t_slow_reader(void)
{
    struct rz a, b;
    struct rz_w w = {0};
    struct rz_reply rep;
    char *big = malloc(1000000);
    int64_t t0, worst = 0, dt;
    long rss;
    int i, n = 200, rcv = 1 << 16;

    rz_init(&a);
    rz_init(&b);
    IT_EQ(big != NULL, 1);
    memset(big, 'x', 1000000);
    IT_EQ(open_session(&a), 0);
    IT_EQ(open_session(&b), 0);
    IT_EQ(rz_create(&b, 1, "/big", big, 1000000, 0, -1, NULL, 0, NULL), 0);
    setsockopt(a.fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof rcv);
    rz_w_str(&w, "/big");
    rz_w_bool(&w, 0);
    for (i = 0; i < n; i++)
        IT_EQ(rz_send_req(&a, 1 + i, OP_GETDATA, &w), 0);
    /* a reads nothing for a while; b must still be served promptly. */
    for (i = 0; i < 50; i++) {
        t0 = it_now_ms();
        IT_EQ(rz_ping_read(&b, NULL), 0);
        dt = it_now_ms() - t0;
        if (dt > worst)
            worst = dt;
        usleep(20000);
    }
    rss = server_rss_kb();
    printf("  other client's worst round trip %lld ms; server RSS %ld kB with "
           "%d MB of replies requested and unread\n",
           (long long)worst, rss, n);
    IT_EQ(worst < 1000, 1);
    IT_EQ(rss > 0 && rss < 150 * 1024, 1);
    for (i = 0; i < n; i++) {
        IT_EQ(rz_read_reply(&a, &rep, 10000), 0);
        IT_EQ(rep.xid, 1 + i);
        IT_EQ(rep.err, 0);
        IT_EQ(rep.len, 16 + 4 + 1000000 + 68);
    }
done:
    free(big);
    rz_w_free(&w);
    rz_close(&a);
    rz_close(&b);
}

/* A client reading one reply of 30 MB (a multiRead) slowly, for 4 times
 * its 1 s session timeout: its output holds its requests back, so the
 * pings it sends meanwhile wait unread, yet its session lives, as it
 * reads; then every ping is answered and it is served. */
static void t_reading_alive(void)
{
    enum { ASKS = 30, NODE = 1000000 };
    char *big = calloc(1, NODE);
    struct rz a, b;
    struct rz_w w = {0};
    struct rz_reply rep;
    uint8_t hdr[4];
    size_t want, got = 0, next = NODE;
    ssize_t n;
    int i, pings = 0, rcv = 1 << 16;
    int64_t t0;

    rz_init(&a);
    rz_init(&b);
    IT_CHECK(big != NULL);
    IT_EQ(open_session(&b), 0);
    IT_EQ(rz_create(&b, 1, "/slow", big, NODE, 0, -1, NULL, 0, NULL), 0);
    IT_EQ(rz_open(&a, it_hostport, 1000), 0);
    setsockopt(a.fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof rcv);
    for (i = 0; i < ASKS; i++) { /* MultiHeader, then getData(/slow) */
        rz_w_i32(&w, OP_GETDATA);
        rz_w_bool(&w, 0);
        rz_w_i32(&w, -1);
        rz_w_str(&w, "/slow");
        rz_w_bool(&w, 0);
    }
    rz_w_i32(&w, -1);
    rz_w_bool(&w, 1);
    rz_w_i32(&w, -1);
    t0 = it_now_ms();
    IT_EQ(rz_send_req(&a, 1, 22, &w), 0); /* multiRead */
    /* The reply's frame off the socket by hand, 1 MB every 130 ms, a ping
     * sent at each. */
    IT_EQ(recv(a.fd, hdr, 4, MSG_WAITALL), 4);
    want = (size_t)hdr[0] << 24 | (size_t)hdr[1] << 16 | (size_t)hdr[2] << 8 |
           hdr[3];
    IT_EQ(want > (size_t)ASKS * NODE, 1);
    while (got < want) {
        n = recv(a.fd, big, want - got < NODE ? want - got : NODE, 0);
        IT_CHECK(n > 0);
        got += (size_t)n;
        if (got >= next && got < want) {
            next += NODE;
            usleep(130000);
            IT_EQ(rz_send_req(&a, -2, RZ_OP_PING, NULL), 0);
            pings++;
        }
    }
    for (i = 0; i < pings; i++) {
        IT_EQ(rz_read_reply(&a, &rep, 10000), 0);
        IT_EQ(rep.xid, -2);
    }
    printf("  %zu bytes read in %lld ms with a 1000 ms session, %d pings\n",
           want, (long long)(it_now_ms() - t0), pings);
    IT_EQ(it_now_ms() - t0 > 3000, 1); /* well past the session timeout */
    IT_EQ(rz_ping_read(&a, NULL), 0);  /* still served */
done:
    rz_w_free(&w);
    rz_close(&a);
    rz_close(&b);
    free(big);
}

static void t_whitelist(void)
{
    char buf[4096];

    IT_CHECK(rz_four_letter(it_hostport, "ruok", buf, sizeof buf) >= 0);
    IT_EQ_STR(buf, "imok");
    IT_CHECK(rz_four_letter(it_hostport, "mntr", buf, sizeof buf) >= 0);
    IT_EQ_STR(buf, "mntr is not executed because it is not in the whitelist.\n");
    /* told at once, not after waiting for the mask it did not send */
    IT_CHECK(rz_four_letter(it_hostport, "stmk", buf, sizeof buf) >= 0);
    IT_EQ_STR(buf,
              "stmk is not executed because it is not in the whitelist.\n");
    IT_CHECK(rz_four_letter(it_hostport, "srvr", buf, sizeof buf) >= 0); /* always allowed */
    IT_EQ(strncmp(buf, "Zookeeper version: ", 19), 0);
done:
    return;
}

static void t_low_disk(void)
{
    struct rz z;
    struct rz_stat st;

    IT_EQ(open_session(&z), 0);
    IT_EQ(rz_create(&z, 1, "/refused", "x", 1, 0, -1, NULL, 0, NULL), -119);
    IT_EQ(rz_set(&z, "/", "x", 1, -1, &st), -119);
    IT_EQ(rz_exists(&z, "/zookeeper", 0, &st), 0);
    IT_EQ(rz_exists(&z, "/refused", 0, &st), -101);
done:
    rz_close(&z);
}

/* A request and its reply, waited for up to 90 s: writing a node of tens
 * of megabytes through an ensemble under the sanitizers takes seconds. */
static int slow_call(struct rz *z, int32_t type, const struct rz_w *w,
                     struct rz_reply *rep)
{
    int32_t xid = z->next_xid++;

    if (rz_send_req(z, xid, type, w) != 0 || rz_read_reply(z, rep, 90000) != 0)
        return -1;
    return rep->xid == xid ? rep->err : -1;
}

static void t_large_node(void)
{
    const int32_t n = 67200000;
    char *data = malloc((size_t)n), *back = malloc((size_t)n + 1);
    struct rz z;
    struct rz_w c = {0}, w = {0};
    struct rz_reply rep;
    int32_t i;

    rz_init(&z);
    IT_CHECK(data != NULL && back != NULL);
    for (i = 0; i < n; i++)
        data[i] = (char)(i % 251);
    IT_EQ(rz_open(&z, it_hostport, 40000), 0); /* silent while it writes */
    rz_w_str(&c, "/large");
    rz_w_buf(&c, data, n);
    rz_w_acl_open(&c);
    rz_w_i32(&c, 0);
    IT_EQ(slow_call(&z, 1, &c, &rep), 0);
    rz_w_str(&w, "/large");
    rz_w_bool(&w, 0);
    IT_EQ(slow_call(&z, OP_GETDATA, &w, &rep), 0);
    IT_EQ(rz_r_str(&rep.body, back, (size_t)n + 1), n);
    IT_EQ(memcmp(back, data, (size_t)n), 0);
done:
    rz_w_free(&c);
    rz_w_free(&w);
    rz_close(&z);
    free(data);
    free(back);
}

static void t_super_digest(void)
{
    struct rz owner, other, super;
    struct rz_stat st;
    struct rz_w w = {0};
    struct rz_reply rep;

    rz_init(&owner);
    rz_init(&other);
    rz_init(&super);
    IT_EQ(open_session(&owner), 0);
    IT_EQ(open_session(&other), 0);
    IT_EQ(open_session(&super), 0);
    IT_EQ(rz_auth(&owner, "digest", "alice:secret"), 0);
    /* create /private with ACL digest:alice:...:ALL */
    rz_w_str(&w, "/private");
    rz_w_buf(&w, "p", 1);
    rz_w_i32(&w, 1);
    rz_w_i32(&w, 31);
    rz_w_str(&w, "digest");
    rz_w_str(&w, "alice:aYXlLOpEooaV1cRAvUL1fp9Qt7E=");
    rz_w_i32(&w, 0);
    IT_EQ(rz_call(&owner, 1, &w, &rep), 0);
    IT_EQ(rep.err, 0);
    IT_EQ(rz_get(&other, "/private", 0, &st), -102);
    IT_EQ(rz_auth(&super, "digest", "super:secret"), 0);
    IT_EQ(rz_get(&super, "/private", 0, &st), 0);
    IT_EQ(rz_delete(&super, "/private", -1), 0);
done:
    rz_w_free(&w);
    rz_close(&owner);
    rz_close(&other);
    rz_close(&super);
}

static void create_body(struct rz_w *w, const char *path)
{
    rz_w_str(w, path);
    rz_w_buf(w, "", 0);
    rz_w_acl_open(w);
    rz_w_i32(w, 0);
}

/* Pipelines `n` creates of PARENT/c-<i> and reads every reply. */
/* Creates parent/<name>-0 .. parent/<name>-(n-1), pipelined. */
static int create_many(struct rz *z, const char *parent, const char *name,
                       int n)
{
    struct rz_w w = {0};
    struct rz_reply rep;
    char path[512];
    int i, bad = 0;

    for (i = 0; i < n; i++) {
        w.len = 0;
        snprintf(path, sizeof path, "%s/%s-%d", parent, name, i);
        create_body(&w, path);
        if (rz_send_req(z, 100000 + i, 1, &w) != 0)
            bad++;
    }
    for (i = 0; i < n; i++)
        if (rz_read_reply(z, &rep, 20000) != 0 || rep.err != 0)
            bad++;
    rz_w_free(&w);
    return bad;
}

static void t_wide_children(void)
{
    enum { READERS = 50 }; /* maxClientCnxns is 60 here */
    static struct rz r[READERS];
    struct rz z;
    char *names = malloc(1 << 20), long_name[200];
    int64_t t0;
    long rss0, rss1;
    size_t i, n = 0;

    rz_init(&z);
    for (i = 0; i < READERS; i++)
        rz_init(&r[i]);
    IT_EQ(names != NULL, 1);
    IT_EQ(open_session(&z), 0);
    IT_EQ(rz_create(&z, 1, "/wide", "", 0, 0, -1, NULL, 0, NULL), 0);
    IT_EQ(create_many(&z, "/wide", "c", 10000), 0);
    t0 = it_now_ms();
    IT_EQ(rz_children(&z, "/wide", 0, names, 1 << 20), 0);
    for (i = 0; names[i] != '\0'; i++)
        n += names[i] == ',';
    printf("  getChildren of %zu children in %lld ms\n", n + 1,
           (long long)(it_now_ms() - t0));
    IT_EQ(n + 1, 10000);

    /* A large reply (here 400 kB) must not stay allocated for each
     * connection it was sent on. */
    memset(long_name, 'n', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    IT_EQ(rz_create(&z, 1, "/long", "", 0, 0, -1, NULL, 0, NULL), 0);
    IT_EQ(create_many(&z, "/long", long_name, 2000), 0);
    rss0 = server_rss_kb();
    for (i = 0; i < READERS; i++) {
        IT_EQ(open_session(&r[i]), 0);
        IT_EQ(rz_children(&r[i], "/long", 0, names, 1 << 20), 0);
    }
    rss1 = server_rss_kb();
    printf("  %d sessions read them: server RSS %ld kB -> %ld kB\n", READERS,
           rss0, rss1);
    IT_EQ(rss0 > 0 && rss1 > 0, 1);
#ifndef __SANITIZE_ADDRESS__ /* ASan's quarantine keeps freed memory */
    IT_EQ(rss1 - rss0 < 10 * 1024, 1);
#endif
done:
    for (i = 0; i < READERS; i++)
        rz_close(&r[i]);
    free(names);
    rz_close(&z);
}

static void t_closing_unread(void)
{
    enum { ASKS = 30, NODE = 1000000 };
    char *data = calloc(1, NODE);
    struct rz a, b, c;
    struct rz_w w = {0}, g = {0};
    struct rz_reply rep;
    int i, taken = 0;

    rz_init(&a);
    rz_init(&b);
    rz_init(&c);
    IT_CHECK(data != NULL);
    IT_EQ(open_session(&a), 0);
    rz_w_str(&w, "/unread");
    rz_w_buf(&w, data, NODE);
    rz_w_acl_open(&w);
    rz_w_i32(&w, 0);
    IT_EQ(rz_call(&a, 1, &w, &rep), 0);
    IT_EQ(rep.err, 0);
    IT_EQ(rz_open(&b, it_hostport, 600), 0);
    rz_w_str(&g, "/unread");
    rz_w_bool(&g, 0);
    for (i = 0; i < ASKS; i++) /* read by the server, never by b */
        IT_EQ(rz_send_req(&b, 10 + i, OP_GETDATA, &g), 0);
    /* b's session expires (it cannot ping: the server reads it no more),
     * and its connection is left closing: a third is refused while it
     * stays, taken once it is closed. */
    for (i = 0; i < 100 && !taken; i++) {
        IT_EQ(rz_ping_read(&a, NULL), 0); /* a stays */
        usleep(200000);
        taken = rz_open(&c, it_hostport, 10000) == 0;
        if (!taken)
            rz_drop(&c);
    }
    printf("  a third connection taken after %d ms\n", i * 200);
    IT_EQ(taken, 1);
    IT_EQ(i * 200 >= 2000, 1); /* not before b's session expired */
done:
    rz_w_free(&w);
    rz_w_free(&g);
    rz_close(&a);
    rz_drop(&b);
    rz_close(&c);
    free(data);
}

static void t_multi_read(void)
{
    enum { ASKS = 200, NODE = 1000000 };
    char *data = calloc(1, NODE);
    struct rz z, other;
    struct rz_w c = {0}, m = {0};
    struct rz_reply rep;
    long rss0, rss1;
    int i;

    rz_init(&z);
    rz_init(&other);
    IT_CHECK(data != NULL);
    IT_EQ(open_session(&z), 0);
    rz_w_str(&c, "/big");
    rz_w_buf(&c, data, NODE);
    rz_w_acl_open(&c);
    rz_w_i32(&c, 0);
    IT_EQ(rz_call(&z, 1, &c, &rep), 0);
    IT_EQ(rep.err, 0);
    rss0 = server_rss_kb();
    for (i = 0; i < ASKS; i++) { /* MultiHeader, then getData(/big) */
        rz_w_i32(&m, OP_GETDATA);
        rz_w_bool(&m, 0);
        rz_w_i32(&m, -1);
        rz_w_str(&m, "/big");
        rz_w_bool(&m, 0);
    }
    rz_w_i32(&m, -1);
    rz_w_bool(&m, 1);
    rz_w_i32(&m, -1);
    IT_EQ(rz_send_req(&z, 7, 22, &m), 0); /* multiRead */
    IT_EQ(rz_expect_close(&z, 30000), 1);
    /* The socket closes first: what the reply took goes a moment later. */
    for (i = 0; i < 100; i++) {
        rss1 = server_rss_kb();
        if (rss1 - rss0 < 32 * 1024)
            break;
        usleep(50000);
    }
    printf("  a multiRead of %d x %d bytes: closed; server RSS %ld kB -> "
           "%ld kB\n",
           ASKS, NODE, rss0, rss1);
    IT_EQ(rss0 > 0 && rss1 > 0, 1);
#ifndef __SANITIZE_ADDRESS__ /* ASan's quarantine keeps freed memory */
    IT_EQ(rss1 - rss0 < 32 * 1024, 1);
#endif
    IT_EQ(open_session(&other), 0);
    IT_EQ(rz_ping_read(&other, NULL), 0);
done:
    rz_w_free(&c);
    rz_w_free(&m);
    rz_drop(&z);
    rz_close(&other);
    free(data);
}

static void t_watch_burst(void)
{
    enum { WATCHERS = 100, NODES = 1000 };
    static struct rz w[WATCHERS];
    struct rz writer;
    struct rz_event ev;
    int64_t t0;
    long rss;
    int i, k, got = 0;

    rz_init(&writer);
    for (i = 0; i < WATCHERS; i++)
        rz_init(&w[i]);
    IT_EQ(open_session(&writer), 0);
    IT_EQ(rz_create(&writer, 1, "/burst", "", 0, 0, -1, NULL, 0, NULL), 0);
    for (i = 0; i < WATCHERS; i++) {
        IT_EQ(open_session(&w[i]), 0);
        IT_EQ(rz_add_watch(&w[i], "/burst", 1), 0);
    }
    t0 = it_now_ms();
    IT_EQ(create_many(&writer, "/burst", "c", NODES), 0);
    for (i = 0; i < WATCHERS; i++) {
        for (k = 0; k < NODES; k++) {
            if (rz_next_event(&w[i], 20000, &ev) != 1 || ev.type != 1)
                break;
            got++;
        }
    }
    rss = server_rss_kb();
    printf("  %d notifications delivered in %lld ms; server RSS %ld kB\n",
           got, (long long)(it_now_ms() - t0), rss);
    IT_EQ(got, WATCHERS * NODES);
    IT_EQ(rz_ping_read(&writer, NULL), 0);
done:
    for (i = 0; i < WATCHERS; i++)
        rz_close(&w[i]);
    rz_close(&writer);
}

static void t_many_sessions(void)
{
    enum { N = 10000 };
    struct rz *z = calloc(N, sizeof *z);
    struct rz writer;
    struct rz_stat st;
    struct rz_event ev;
    struct rlimit rl;
    int64_t t0, pinged;
    long rss_idle, rss_held, rss_after;
    int i, j, opened = 0, got = 0;

    rz_init(&writer);
    IT_EQ(z != NULL, 1);
    /* One descriptor per session here too. */
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    IT_EQ(open_session(&writer), 0);
    IT_EQ(rz_create(&writer, 1, "/many", "", 0, 0, -1, NULL, 0, NULL), 0);
    rss_idle = server_rss_kb();
    t0 = pinged = it_now_ms();
    for (i = 0; i < N; i++) {
        rz_init(&z[i]);
        if (rz_open(&z[i], it_hostport, 30000) != 0)
            break;
        opened++;
        if (rz_exists(&z[i], "/many/x", 1, &st) != -101)
            break;
        /* On a slow machine opening them all can outlast a timeout: keep
         * the ones already open alive. */
        if (it_now_ms() - pinged > 3000) {
            IT_EQ(rz_ping_read(&writer, NULL), 0);
            for (j = 0; j <= i; j++)
                IT_EQ(rz_ping_read(&z[j], NULL), 0);
            pinged = it_now_ms();
        }
    }
    IT_EQ(opened, N);
    rss_held = server_rss_kb();
    printf("  %d sessions opened, each with a watch, in %lld ms\n", opened,
           (long long)(it_now_ms() - t0));
    t0 = it_now_ms();
    IT_EQ(rz_create(&writer, 1, "/many/x", "", 0, 0, -1, NULL, 0, NULL), 0);
    for (i = 0; i < N; i++)
        if (rz_next_event(&z[i], 20000, &ev) == 1 && ev.type == 1)
            got++;
    rss_after = server_rss_kb();
    printf("  %d notifications in %lld ms; server RSS %ld kB idle, %ld kB "
           "with the sessions, %ld kB after the notifications\n",
           got, (long long)(it_now_ms() - t0), rss_idle, rss_held, rss_after);
    IT_EQ(got, N);
    IT_EQ(rss_after > 0 && rss_after < 512 * 1024, 1);
    /* An idle session holds no input buffer of its own (conn.c): with
     * one, each session and its watch took 5.7 kB here; without, 1.5 kB
     * (3.7 kB under AddressSanitizer). */
    IT_EQ(rss_held - rss_idle < (long)N * 9 / 2, 1);
    IT_EQ(rz_ping_read(&z[0], NULL), 0);
    IT_EQ(rz_ping_read(&z[N - 1], NULL), 0);
done:
    for (i = 0; i < opened; i++)
        rz_drop(&z[i]);
    free(z);
    rz_close(&writer);
}

static const struct it_test tests[] = {
    {"max_cnxns", t_max_cnxns, 0},
    {"dual_stack_cnxns", t_dual_stack_cnxns, 0},
    {"outstanding", t_outstanding, 0},
    {"slow_reader", t_slow_reader, 0},
    {"reading_alive", t_reading_alive, 0},
    {"whitelist", t_whitelist, 0},
    {"low_disk", t_low_disk, 0},
    {"large_node", t_large_node, 0},
    {"super_digest", t_super_digest, 0},
    {"wide_children", t_wide_children, 0},
    {"multi_read", t_multi_read, 0},
    {"closing_unread", t_closing_unread, 0},
    {"watch_burst", t_watch_burst, 0},
    {"many_sessions", t_many_sessions, 120},
};

int main(int argc, char **argv)
{
    return it_main(argc, argv, tests, sizeof tests / sizeof tests[0]);
}
