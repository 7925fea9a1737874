/* raw_proto: wire-level compatibility tests with a raw socket client (rawzk), for behaviour
 * the official C client cannot send or hides: the handshake with and without the trailing
 * readOnly byte, lastZxidSeen ahead of the server, the frame-size limit, unknown opcodes,
 * undecodable records, zxid accounting, exact multi result layouts, multiRead, the 3.6+ opcodes
 * (getEphemerals, getAllChildrenNumber, whoAmI), server-side path checks, and four-letter
 * words.  The 3.6+ opcodes, multi and create checks are in raw_proto_ops.c, watch-related
 * wire tests in raw_proto_watch.c.
 *
 * Every assertion here was checked against Apache ZooKeeper 3.8; cases where 3.8.0 itself is
 * documented as broken (standalone check, op 1 with container flags, createTTL with a non-TTL
 * flag and ttl -1) are not exercised.  Usage: raw_proto HOST:PORT [NAME-SUBSTRING ...] */
#include "raw_proto.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

const char *rsub(const char *base, const char *name)
{
    static char bufs[8][600];
    static int slot;
    char *b = bufs[slot++ % 8];
    snprintf(b, sizeof bufs[0], "%s/%s", base, name);
    return b;
}

int rmk(struct rz *z, const char *path)
{
    return rz_create(z, RZ_OP_CREATE, path, "", 0, 0, 0, NULL, 0, NULL);
}

/* Multi header: {int type, boolean done, int err}. */
void mh(struct rz_w *w, int32_t type, int done, int32_t err)
{
    rz_w_i32(w, type);
    rz_w_bool(w, done);
    rz_w_i32(w, err);
}

void create_rec(struct rz_w *w, const char *path, int32_t flags)
{
    rz_w_str(w, path);
    rz_w_buf(w, "", 0);
    rz_w_acl_open(w);
    rz_w_i32(w, flags);
}

/* --- zxid accounting (first: it needs a server with no other writes going on) ------------ */

static void t_zxid_accounting(void)
{
    struct rz a, b;
    struct rz_w w = {0};
    struct rz_reply rep;
    struct rz_stat st;
    const char *p = it_path("raw", "zxid");
    int64_t z0, z;
    rz_init(&a);
    rz_init(&b);
    ROPEN(a);
    IT_EQ(rz_ping_read(&a, &z0), 0);
    IT_EQ(rz_ping_read(&a, &z), 0);
    IT_EQ(z, z0); /* reads consume nothing */
    /* a failed write consumes a zxid, and its reply carries it */
    IT_EQ(rmk(&a, rsub(p, "no/parent")), -101);
    IT_EQ(a.last_zxid, z0 + 1);
    IT_EQ(rz_ping_read(&a, &z), 0);
    IT_EQ(z, z0 + 1);
    IT_EQ(rmk(&a, p), 0);
    IT_EQ(a.last_zxid, z0 + 2);
    IT_EQ(rz_exists(&a, p, 0, &st), 0);
    IT_EQ(st.czxid, z0 + 2);
    IT_EQ(rz_delete(&a, rsub(p, "missing"), -1), -101);
    IT_EQ(a.last_zxid, z0 + 3);
    IT_EQ(rz_set(&a, p, "x", 1, 9, NULL), -103);
    IT_EQ(a.last_zxid, z0 + 4);
    /* an empty multi is a transaction too */
    mh(&w, -1, 1, -1);
    IT_EQ(rz_call(&a, RZ_OP_MULTI, &w, &rep), 0);
    IT_EQ(rep.err, 0);
    IT_EQ(rep.zxid, z0 + 5);
    IT_EQ(rz_r_i32(&rep.body), -1);
    IT_EQ(rz_r_bool(&rep.body), 1);
    IT_EQ(rz_r_i32(&rep.body), -1);
    /* creating and closing a session each take one */
    ROPEN(b);
    IT_EQ(rz_ping_read(&a, &z), 0);
    IT_EQ(z, z0 + 6);
    rz_close(&b);
    IT_EQ(b.last_zxid, z0 + 7);
    IT_EQ(rz_ping_read(&a, &z), 0);
    IT_EQ(z, z0 + 7);
done:
    rz_w_free(&w);
    rz_close(&a);
    rz_close(&b);
}

/* --- handshake ----------------------------------------------------------------------------- */

static void t_handshake_forms(void)
{
    struct rz a;
    struct rz_hello h = {0, 0, 10000, 0, NULL, 0};
    static const unsigned char zero[16];
    rz_init(&a);
    /* with the readOnly byte: 37-byte reply */
    IT_EQ(rz_dial(&a, it_hostport), 0);
    IT_EQ(rz_hello(&a, &h), 1);
    IT_EQ(a.connect_len, 37);
    IT_EQ(a.timeout, 10000);
    IT_CHECK(a.sid != 0);
    IT_CHECK(memcmp(a.pw, zero, 16) != 0);
    IT_EQ(a.frame[36], 0); /* a standalone server is read-write */
    IT_EQ(rmk(&a, it_path("raw", "hs45")), 0);
    rz_close(&a);
    /* without it (an "old client"): 36-byte reply, and the session works the same */
    h.readonly = -1;
    IT_EQ(rz_dial(&a, it_hostport), 0);
    IT_EQ(rz_hello(&a, &h), 1);
    IT_EQ(a.connect_len, 36);
    IT_EQ(a.timeout, 10000);
    IT_EQ(rmk(&a, it_path("raw", "hs44")), 0);
    rz_close(&a);
    /* readOnly=1 is accepted by a read-write server, which answers 0 */
    h.readonly = 1;
    IT_EQ(rz_dial(&a, it_hostport), 0);
    IT_EQ(rz_hello(&a, &h), 1);
    IT_EQ(a.connect_len, 37);
    IT_EQ(a.frame[36], 0);
done:
    rz_close(&a);
}

static void t_handshake_timeout_clamp(void)
{
    struct rz a;
    static const int32_t cases[][2] = {
        {1000, 4000}, {0, 4000}, {-5, 4000}, {4000, 4000},
        {10000, 10000}, {40000, 40000}, {100000, 40000},
    };
    rz_init(&a);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct rz_hello h = {0, 0, cases[i][0], 0, NULL, 0};
        IT_EQ(rz_dial(&a, it_hostport), 0);
        IT_EQ(rz_hello(&a, &h), 1);
        IT_CHECKF(a.timeout == cases[i][1], "requested %d: got %d, want %d", cases[i][0],
                  a.timeout, cases[i][1]);
        rz_close(&a);
    }
done:
    rz_close(&a);
}

static void t_handshake_lastzxid_ahead(void)
{
    struct rz a, b;
    int64_t cur;
    rz_init(&a);
    rz_init(&b);
    ROPEN(a);
    IT_EQ(rz_ping_read(&a, &cur), 0);
    /* a client that has seen the server's own zxid is fine */
    {
        struct rz_hello h = {0, cur, 10000, 0, NULL, 0};
        IT_EQ(rz_dial(&b, it_hostport), 0);
        IT_EQ(rz_hello(&b, &h), 1);
        rz_close(&b);
    }
    /* one that has seen more than this server has is refused with no reply */
    {
        struct rz_hello h = {0, cur + 1000, 10000, 0, NULL, 0};
        IT_EQ(rz_dial(&b, it_hostport), 0);
        IT_EQ(rz_hello(&b, &h), -1);
        rz_drop(&b);
        h.last_zxid = 0x7fffffff00LL;
        IT_EQ(rz_dial(&b, it_hostport), 0);
        IT_EQ(rz_hello(&b, &h), -1);
    }
    /* the server keeps serving */
    IT_EQ(rz_ping_read(&a, NULL), 0);
done:
    rz_drop(&b);
    rz_close(&a);
}

static void t_handshake_truncated(void)
{
    struct rz a, b;
    static const unsigned char four[4] = {0, 0, 0, 0};
    rz_init(&a);
    rz_init(&b);
    IT_EQ(rz_dial(&a, it_hostport), 0);
    IT_EQ(rz_send_frame(&a, four, sizeof four), 0);
    IT_EQ(rz_expect_close(&a, 5000), 1);
    ROPEN(b);
    IT_EQ(rz_ping_read(&b, NULL), 0);
done:
    rz_drop(&a);
    rz_close(&b);
}

static void t_session_resume(void)
{
    struct rz a, b, c;
    static const unsigned char zero[16];
    unsigned char wrong[16];
    const char *p = it_path("raw", "resume");
    struct rz_stat st;
    int64_t sid;
    rz_init(&a);
    rz_init(&b);
    rz_init(&c);
    ROPEN(a);
    sid = a.sid;
    IT_EQ(rz_create(&a, RZ_OP_CREATE, p, "", 0, 1, 0, NULL, 0, NULL), 0);
    /* resuming from a second connection: same id and password; the old connection is closed */
    {
        struct rz_hello h = {0, a.last_zxid, 10000, sid, a.pw, 0};
        IT_EQ(rz_dial(&b, it_hostport), 0);
        IT_EQ(rz_hello(&b, &h), 1);
        IT_EQ(b.sid, sid);
        IT_CHECK(memcmp(b.pw, a.pw, 16) == 0);
        IT_EQ(b.connect_len, 37);
        IT_EQ(rz_expect_close(&a, 5000), 1);
        IT_EQ(rz_exists(&b, p, 0, &st), 0);
        IT_EQ(st.ephemeral_owner, sid);
    }
    /* a wrong password: {timeout 0, id 0, 16 zero bytes}, then close */
    memcpy(wrong, b.pw, 16);
    wrong[3] ^= 0x55;
    {
        struct rz_hello h = {0, 0, 10000, sid, wrong, 0};
        IT_EQ(rz_dial(&c, it_hostport), 0);
        IT_EQ(rz_hello(&c, &h), 0);
        IT_EQ(c.connect_len, 37);
        IT_EQ(c.sid, 0);
        IT_CHECK(memcmp(c.pw, zero, 16) == 0);
        IT_EQ(rz_expect_close(&c, 5000), 1);
        rz_drop(&c);
    }
    /* the session survived it */
    rz_drop(&b);
    {
        struct rz_hello h = {0, 0, 10000, sid, a.pw, 0};
        IT_EQ(rz_dial(&b, it_hostport), 0);
        IT_EQ(rz_hello(&b, &h), 1);
        IT_EQ(b.sid, sid);
    }
    /* closed sessions cannot be resumed; the refusal mirrors the request form (36 bytes) */
    rz_close(&b);
    {
        struct rz_hello h = {0, 0, 10000, sid, a.pw, -1};
        IT_EQ(rz_dial(&c, it_hostport), 0);
        IT_EQ(rz_hello(&c, &h), 0);
        IT_EQ(c.connect_len, 36);
        IT_EQ(c.timeout, 0);
        IT_EQ(rz_expect_close(&c, 5000), 1);
    }
    /* an unknown session id is refused the same way */
    rz_drop(&c);
    {
        struct rz_hello h = {0, 0, 10000, 0x0123456789abLL, a.pw, 0};
        IT_EQ(rz_dial(&c, it_hostport), 0);
        IT_EQ(rz_hello(&c, &h), 0);
        IT_EQ(c.connect_len, 37);
    }
    ROPEN(a);
    IT_EQ(rz_exists(&a, p, 0, &st), -101);
done:
    rz_close(&a);
    rz_drop(&b);
    rz_drop(&c);
}

/* --- framing and undecodable input ------------------------------------------------------------ */

static void t_frame_limit(void)
{
    struct rz a, b;
    const char *p = it_path("raw", "maxframe");
    struct rz_w w = {0};
    struct rz_reply rep;
    char *data = NULL;
    static const unsigned char big[8] = {0x00, 0x10, 0x00, 0x00, 0, 0, 0, 1}; /* 1,048,576 */
    static const unsigned char neg[8] = {0xff, 0xff, 0xff, 0xfb, 0, 0, 0, 1}; /* -5 */
    rz_init(&a);
    rz_init(&b);
    /* the largest allowed frame, 1,048,575 bytes, is served */
    ROPEN(a);
    {
        /* header 8 + path (4 + n) + data (4 + n) + OPEN_ACL 27 + flags 4 */
        size_t plen = strlen(p);
        int32_t dlen = (int32_t)(1048575 - 47 - plen);
        data = malloc((size_t)dlen);
        IT_CHECK(data != NULL);
        memset(data, 'z', (size_t)dlen);
        rz_w_i32(&w, 7);
        rz_w_i32(&w, RZ_OP_CREATE);
        rz_w_str(&w, p);
        rz_w_buf(&w, data, dlen);
        rz_w_acl_open(&w);
        rz_w_i32(&w, 0);
        IT_EQ(w.len, 1048575);
        IT_EQ(rz_send_frame(&a, w.p, w.len), 0);
        IT_EQ(rz_read_reply(&a, &rep, 10000), 0);
        IT_EQ(rep.xid, 7);
        IT_EQ(rep.err, 0);
    }
    /* one byte more: the connection is closed without a reply */
    IT_EQ(rz_send(&a, big, sizeof big), 0);
    IT_EQ(rz_expect_close(&a, 5000), 1);
    rz_drop(&a);
    /* a negative length likewise */
    ROPEN(a);
    IT_EQ(rz_send(&a, neg, sizeof neg), 0);
    IT_EQ(rz_expect_close(&a, 5000), 1);
    /* other clients are served */
    ROPEN(b);
    IT_EQ(rz_exists(&b, p, 0, NULL), 0);
    IT_EQ(rmk(&b, rsub(p, "after")), 0);
done:
    free(data);
    rz_w_free(&w);
    rz_drop(&a);
    rz_close(&b);
}

static void t_unknown_opcode(void)
{
    struct rz a, b;
    struct rz_reply rep;
    rz_init(&a);
    rz_init(&b);
    ROPEN(a);
    IT_EQ(rz_send_req(&a, 42, 50, NULL), 0);
    IT_EQ(rz_read_reply(&a, &rep, 5000), 0);
    IT_EQ(rep.xid, 42);
    IT_EQ(rep.zxid, -1);
    IT_EQ(rep.err, -6);
    IT_EQ(rep.len, 16);
    if (it_server_is_tumblerd()) {
        /* Deliberate difference: tumblerd keeps the connection. */
        IT_EQ(rz_ping_read(&a, NULL), 0);
    } else {
        IT_EQ(rz_expect_close(&a, 5000), 1);
    }
    ROPEN(b);
    IT_EQ(rz_ping_read(&b, NULL), 0);
done:
    rz_drop(&a);
    rz_close(&b);
}

static void t_truncated_record(void)
{
    struct rz a, b;
    struct rz_w w = {0};
    struct rz_reply rep;
    rz_init(&a);
    rz_init(&b);
    ROPEN(a);
    /* getData whose path claims 100 bytes but carries 3, and no watch flag */
    rz_w_i32(&w, 100);
    rz_w_raw(&w, "abc", 3);
    IT_EQ(rz_send_req(&a, 9, RZ_OP_GETDATA, &w), 0);
    {
        int r = rz_read_reply(&a, &rep, 5000);
        if (r == 0) {
            /* answered: MarshallingError, header only */
            printf("  note: the server answered the truncated record\n");
            IT_EQ(rep.xid, 9);
            IT_EQ(rep.err, -5);
            IT_EQ(rep.len, 16);
        } else {
            /* or the connection was closed */
            printf("  note: the server closed on the truncated record\n");
            IT_EQ(rz_expect_close(&a, 1000), 1);
        }
    }
    ROPEN(b);
    IT_EQ(rz_ping_read(&b, NULL), 0);
done:
    rz_w_free(&w);
    rz_drop(&a);
    rz_close(&b);
}

static void t_trailing_bytes_and_headers(void)
{
    struct rz a;
    struct rz_w w = {0};
    struct rz_reply rep;
    const char *p = it_path("raw", "hdr");
    rz_init(&a);
    ROPEN(a);
    /* bytes after a complete record are ignored */
    rz_w_str(&w, "/");
    rz_w_bool(&w, 0);
    rz_w_raw(&w, "junk!!!", 7);
    IT_EQ(rz_call(&a, RZ_OP_EXISTS, &w, &rep), 0);
    IT_EQ(rep.err, 0);
    IT_EQ(rep.len, 16 + 68);
    /* error replies are the 16-byte header alone */
    rz_w_free(&w);
    rz_w_str(&w, rsub(p, "missing"));
    rz_w_bool(&w, 0);
    IT_EQ(rz_call(&a, RZ_OP_GETDATA, &w, &rep), 0);
    IT_EQ(rep.err, -101);
    IT_EQ(rep.len, 16);
    /* delete's success reply has no body either */
    IT_EQ(rmk(&a, p), 0);
    rz_w_free(&w);
    rz_w_str(&w, p);
    rz_w_i32(&w, -1);
    IT_EQ(rz_call(&a, RZ_OP_DELETE, &w, &rep), 0);
    IT_EQ(rep.err, 0);
    IT_EQ(rep.len, 16);
    /* ping: xid -2, header-only reply carrying the last zxid */
    IT_EQ(rz_send_req(&a, -2, RZ_OP_PING, NULL), 0);
    IT_EQ(rz_read_reply(&a, &rep, 5000), 0);
    IT_EQ(rep.xid, -2);
    IT_EQ(rep.err, 0);
    IT_EQ(rep.len, 16);
    IT_EQ(rep.zxid, a.last_zxid);
    /* sync echoes the path */
    rz_w_free(&w);
    rz_w_str(&w, p);
    IT_EQ(rz_call(&a, RZ_OP_SYNC, &w, &rep), 0);
    IT_EQ(rep.err, 0);
    {
        char echo[600];
        rz_r_str(&rep.body, echo, sizeof echo);
        IT_EQ_STR(echo, p);
    }
done:
    rz_w_free(&w);
    rz_close(&a);
}

/* Reads n replies; 0 if they carry xids xid0, xid0 + 1, ... in that order,
 * each without error. */
static int replies_in_order(struct rz *z, int n, int32_t xid0)
{
    struct rz_reply rep;

    for (int i = 0; i < n; i++)
        if (rz_read_reply(z, &rep, 10000) != 0 || rep.xid != xid0 + i ||
            rep.err != 0)
            return -1;
    return 0;
}

static void t_pipelining(void)
{
    struct rz a;
    struct rz_w w = {0};
    const char *p = it_path("raw", "pipe");
    rz_init(&a);
    ROPEN(a);
    IT_EQ(rmk(&a, p), 0);
    /* 40 requests sent back to back; replies come in request order */
    for (int i = 0; i < 40; i++) {
        char name[16];
        rz_w_free(&w);
        snprintf(name, sizeof name, "n%02d", i / 2);
        if (i % 2 == 0) {
            create_rec(&w, rsub(p, name), 0);
            IT_EQ(rz_send_req(&a, 1000 + i, RZ_OP_CREATE, &w), 0);
        } else {
            rz_w_str(&w, rsub(p, name));
            rz_w_bool(&w, 0);
            IT_EQ(rz_send_req(&a, 1000 + i, RZ_OP_EXISTS, &w), 0);
        }
    }
    IT_EQ(replies_in_order(&a, 40, 1000), 0);
done:
    rz_w_free(&w);
    rz_close(&a);
}

/* Requests as one byte stream sent in pieces of 1 to 61 bytes, a few ms apart,
 * so that the server's reads end inside length prefixes and bodies, and some
 * carry a frame's end, whole frames and the next one's start: every reply
 * arrives, in order. */
static void t_split_frames(void)
{
    struct rz a;
    struct rz_w w = {0}, body = {0};
    const char *p = it_path("raw", "split");
    size_t off = 0, piece = 1;
    rz_init(&a);
    ROPEN(a);
    IT_EQ(rmk(&a, p), 0);
    for (int i = 0; i < 30; i++) {
        char name[16];
        rz_w_free(&body);
        snprintf(name, sizeof name, "n%02d", i);
        create_rec(&body, rsub(p, name), 0);
        rz_w_i32(&w, (int32_t)(8 + body.len));
        rz_w_i32(&w, 2000 + i);
        rz_w_i32(&w, RZ_OP_CREATE);
        rz_w_raw(&w, body.p, body.len);
    }
    while (off < w.len) {
        size_t n = piece < w.len - off ? piece : w.len - off;
        IT_EQ(rz_send(&a, w.p + off, n), 0);
        off += n;
        piece = piece * 7 % 61 + 1;
        usleep(2000);
    }
    IT_EQ(replies_in_order(&a, 30, 2000), 0);
done:
    rz_w_free(&body);
    rz_w_free(&w);
    rz_close(&a);
}

/* --- closeSession ----------------------------------------------------------------------- */

static void t_close_session_wire(void)
{
    struct rz a, b;
    struct rz_reply rep;
    const char *p = it_path("raw", "close");
    rz_init(&a);
    rz_init(&b);
    ROPEN(a);
    ROPEN(b);
    IT_EQ(rz_create(&a, RZ_OP_CREATE, p, "", 0, 1, 0, NULL, 0, NULL), 0);
    IT_EQ(rz_send_req(&a, 77, RZ_OP_CLOSE, NULL), 0);
    IT_EQ(rz_read_reply(&a, &rep, 5000), 0);
    IT_EQ(rep.xid, 77);
    IT_EQ(rep.err, 0);
    IT_EQ(rep.len, 16);
    IT_CHECK(rep.zxid > 0);
    IT_EQ(rz_expect_close(&a, 5000), 1);
    IT_EQ(rz_exists(&b, p, 0, NULL), -101);
done:
    rz_drop(&a);
    rz_close(&b);
}

/* --- four-letter words ------------------------------------------------------------------- */

/* The value of `key` in mntr's output, or -1. */
static long long mntr_value(const char *out, const char *key)
{
    char k[96];
    const char *at;

    snprintf(k, sizeof k, "\n%s\t", key);
    at = strstr(out, k);
    return at != NULL ? strtoll(at + strlen(k), NULL, 10) : -1;
}

/* tumblerd's own figures for its log: a write moves them. */
static void check_log_figures(void)
{
    static char before[65536], after[65536];
    struct rz z;

    IT_CHECK(rz_four_letter(it_hostport, "mntr", before, sizeof before) > 0);
    rz_init(&z);
    ROPEN(z);
    IT_EQ(rmk(&z, it_path("raw", "mntr-log")), 0);
    rz_close(&z);
    IT_CHECK(rz_four_letter(it_hostport, "mntr", after, sizeof after) > 0);
    IT_CHECK(mntr_value(before, "zk_tumbler_log_writes") >= 0);
    IT_CHECK(mntr_value(after, "zk_tumbler_log_writes") >
             mntr_value(before, "zk_tumbler_log_writes"));
    IT_CHECK(mntr_value(after, "zk_tumbler_log_entries") >
             mntr_value(before, "zk_tumbler_log_entries"));
    IT_CHECK(mntr_value(after, "zk_tumbler_log_write_us") >
             mntr_value(before, "zk_tumbler_log_write_us"));
    IT_CHECK(mntr_value(after, "zk_tumbler_log_write_us_max") > 0);
    IT_CHECK(mntr_value(after, "zk_tumbler_log_appends") >
             mntr_value(before, "zk_tumbler_log_appends"));
    IT_CHECK(mntr_value(after, "zk_tumbler_log_appends_queued") >= 0);
    IT_CHECK(mntr_value(after, "zk_tumbler_log_append_wait_us") >= 0);
    IT_CHECK(mntr_value(after, "zk_tumbler_log_writes_overlapped") >= 0);
    IT_CHECK(mntr_value(after, "zk_tumbler_log_writes_threaded") >= 0);
    /* The first segment of a new log has no spare to come from. */
    IT_CHECK(mntr_value(after, "zk_tumbler_log_segments_zeroed") >= 1);
    IT_CHECK(mntr_value(after, "zk_tumbler_log_segments_reserved") >= 0);
    IT_CHECK(mntr_value(after, "zk_tumbler_log_segments_reused") >= 0);
    IT_CHECK(mntr_value(after, "zk_tumbler_log_spare_segments") >= 0);
    /* Present (-1 when missing), and none on a healthy disk. */
    IT_EQ(mntr_value(after, "zk_tumbler_snapshots_failed"), 0);
done:
    return;
}

static void t_four_letter_words(void)
{
    static char out[65536];
    IT_CHECK(rz_four_letter(it_hostport, "ruok", out, sizeof out) == 4);
    IT_EQ_STR(out, "imok");
    IT_CHECK(rz_four_letter(it_hostport, "srvr", out, sizeof out) > 0);
    IT_CHECKF(strstr(out, "Zxid: 0x") != NULL && strstr(out, "Mode: ") != NULL &&
                  strstr(out, "Node count: ") != NULL,
              "srvr output lacks Zxid/Mode/Node count: %s", out);
    IT_CHECK(rz_four_letter(it_hostport, "mntr", out, sizeof out) > 0);
    IT_CHECKF(strncmp(out, "zk_version\t", 11) == 0, "mntr starts with: %.40s", out);
    {
        const char *second = strchr(out, '\n');
        IT_CHECK(second != NULL);
        IT_CHECKF(strncmp(second + 1, "zk_server_state\t", 16) == 0, "mntr line 2: %.40s",
                  second + 1);
        IT_CHECK(strstr(out, "\nzk_znode_count\t") != NULL);
    }
    if (it_server_is_tumblerd())
        check_log_figures();
    /* stmk sets the mask gtmk reads (ZooKeeper's default 306), as a long */
    IT_CHECK(rz_four_letter(it_hostport, "gtmk", out, sizeof out) > 0);
    IT_EQ_STR(out, "306");
    IT_CHECK(rz_four_letter_n(it_hostport, "stmk\0\0\0\0\0\0\0\5", 12, out,
                              sizeof out) > 0);
    IT_EQ_STR(out, "5");
    IT_CHECK(rz_four_letter(it_hostport, "gtmk", out, sizeof out) > 0);
    IT_EQ_STR(out, "5");
    IT_CHECK(rz_four_letter_n(it_hostport, "stmk\0\0\0\0\0\0\1\x32", 12, out,
                              sizeof out) > 0);
    IT_EQ_STR(out, "306");
    /* an unknown word is taken as an oversized frame length: closed, no output */
    IT_EQ(rz_four_letter(it_hostport, "xyzw", out, sizeof out), 0);
done:
    return;
}

static const struct it_test tests[] = {
    {"zxid_accounting", t_zxid_accounting, 0},
    {"handshake_forms", t_handshake_forms, 0},
    {"handshake_timeout_clamp", t_handshake_timeout_clamp, 0},
    {"handshake_lastzxid_ahead", t_handshake_lastzxid_ahead, 0},
    {"handshake_truncated", t_handshake_truncated, 0},
    {"session_resume", t_session_resume, 0},
    {"frame_limit", t_frame_limit, 0},
    {"unknown_opcode", t_unknown_opcode, 0},
    {"truncated_record", t_truncated_record, 0},
    {"trailing_bytes_and_headers", t_trailing_bytes_and_headers, 0},
    {"pipelining", t_pipelining, 0},
    {"split_frames", t_split_frames, 0},
    {"auth_and_whoami", t_auth_and_whoami, 0},
    {"auth_ids_bounded", t_auth_ids_bounded, 0},
    {"get_ephemerals", t_get_ephemerals, 0},
    {"all_children_number", t_all_children_number, 0},
    {"multi_wire_failure", t_multi_wire_failure, 0},
    {"multi_wire_success", t_multi_wire_success, 0},
    {"multi_read", t_multi_read, 0},
    {"create_path_checks", t_create_path_checks, 0},
    {"create_mode_checks", t_create_mode_checks, 0},
    {"close_session_wire", t_close_session_wire, 0},
    {"four_letter_words", t_four_letter_words, 0},
    {"notify_before_reply", t_notify_before_reply, 0},
    {"exists_watch_missing", t_exists_watch_missing, 0},
    {"watch_dedup", t_watch_dedup, 0},
    {"delete_events", t_delete_events, 0},
    {"persistent_watch", t_persistent_watch, 0},
    {"recursive_watch", t_recursive_watch, 0},
    {"persistent_plus_standard", t_persistent_plus_standard, 0},
    {"wchp_data_watches", t_wchp_data_watches, 0},
    {"remove_check_watches", t_remove_check_watches, 0},
    {"setwatches_catchup", t_setwatches_catchup, 0},
    {"setwatches2_persistent", t_setwatches2_persistent, 0},
    {"close_session_events", t_close_session_events, 0},
    {"session_expiry_raw", t_session_expiry_raw, 0},
    {"sasl", t_sasl, 0},
};

int main(int argc, char **argv)
{
    return it_main(argc, argv, tests, sizeof tests / sizeof tests[0]);
}
