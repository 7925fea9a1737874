/* rawzk: a deliberately small ZooKeeper wire client for tests, built on plain sockets.
 *
 * The official C client validates and shapes what it sends (always the readOnly byte, never an
 * unknown opcode, no persistent watches in 3.8's C API), so it cannot probe how a server reacts
 * to the rest of the protocol.  rawzk writes exactly the bytes a test asks for and returns the
 * frames exactly as received: handshakes with or without the trailing byte, oversized or
 * truncated frames, any opcode and xid, and notifications in their arrival order relative to
 * replies.  It blocks, with a bound on every wait, and keeps no hidden state besides the
 * session id, password and next xid.
 *
 * Encoding: big-endian jute (int, long, boolean, buffer and ustring as length + bytes, -1 for
 * null, vectors as count + elements), see the protocol reference §1. */
#ifndef TB_RAWZK_H
#define TB_RAWZK_H

#include <stddef.h>
#include <stdint.h>

/* Returned by the convenience calls when no reply arrived (closed socket, timeout, garbage). */
#define RZ_ETRANSPORT (-1000)

/* Opcodes used by the tests (protocol reference §5). */
enum {
    RZ_OP_CREATE = 1,
    RZ_OP_DELETE = 2,
    RZ_OP_EXISTS = 3,
    RZ_OP_GETDATA = 4,
    RZ_OP_SETDATA = 5,
    RZ_OP_GETACL = 6,
    RZ_OP_SETACL = 7,
    RZ_OP_GETCHILDREN = 8,
    RZ_OP_SYNC = 9,
    RZ_OP_PING = 11,
    RZ_OP_GETCHILDREN2 = 12,
    RZ_OP_CHECK = 13,
    RZ_OP_MULTI = 14,
    RZ_OP_CREATE2 = 15,
    RZ_OP_CHECKWATCHES = 17,
    RZ_OP_REMOVEWATCHES = 18,
    RZ_OP_CREATECONTAINER = 19,
    RZ_OP_CREATETTL = 21,
    RZ_OP_MULTIREAD = 22,
    RZ_OP_AUTH = 100,
    RZ_OP_SETWATCHES = 101,
    RZ_OP_GETEPHEMERALS = 103,
    RZ_OP_GETALLCHILDRENNUMBER = 104,
    RZ_OP_SETWATCHES2 = 105,
    RZ_OP_ADDWATCH = 106,
    RZ_OP_WHOAMI = 107,
    RZ_OP_CLOSE = -11,
};

/* Growable output buffer with jute writers. */
struct rz_w {
    unsigned char *p;
    size_t len, cap;
};

void rz_w_free(struct rz_w *w);
void rz_w_raw(struct rz_w *w, const void *p, size_t n);
void rz_w_i32(struct rz_w *w, int32_t v);
void rz_w_i64(struct rz_w *w, int64_t v);
void rz_w_bool(struct rz_w *w, int v);
void rz_w_str(struct rz_w *w, const char *s); /* NULL: length -1 */
void rz_w_buf(struct rz_w *w, const void *p, int32_t n); /* n < 0: null */
void rz_w_acl_open(struct rz_w *w);                      /* [ {31, world, anyone} ] */
void rz_w_strvec(struct rz_w *w, const char *const *v, int n);

/* Bounds-checked reader over one received payload; `bad` becomes 1 on any overrun. */
struct rz_r {
    const unsigned char *p, *end;
    int bad;
};

int32_t rz_r_i32(struct rz_r *r);
int64_t rz_r_i64(struct rz_r *r);
int rz_r_bool(struct rz_r *r);
/* String or buffer: copies (NUL-terminated, truncated to cap) and returns its length, -1 for
 * null. */
int32_t rz_r_str(struct rz_r *r, char *out, size_t cap);
size_t rz_r_left(const struct rz_r *r);

struct rz_stat {
    int64_t czxid, mzxid, ctime, mtime;
    int32_t version, cversion, aversion;
    int64_t ephemeral_owner;
    int32_t data_length, num_children;
    int64_t pzxid;
};
void rz_r_stat(struct rz_r *r, struct rz_stat *s);

struct rz_event {
    int32_t type, state;
    int64_t zxid;
    char path[512];
};

#define RZ_MAXEV 128

struct rz {
    int fd;
    int64_t sid;
    unsigned char pw[16];
    int32_t timeout;      /* negotiated */
    int32_t connect_len;  /* payload length of the ConnectResponse */
    int32_t next_xid;
    int64_t last_zxid;    /* highest reply zxid seen */
    unsigned char *in;    /* receive buffer */
    size_t in_len, in_cap;
    unsigned char *frame; /* last frame's payload (owned) */
    size_t frame_len;
    struct rz_event ev[RZ_MAXEV];
    int ev_head, ev_count;
};

struct rz_reply {
    int32_t xid;
    int64_t zxid;
    int32_t err;
    size_t len;       /* whole payload length, header included */
    struct rz_r body; /* the bytes after the 16-byte header */
};

/* ConnectRequest fields; readonly < 0 leaves the optional trailing byte out. */
struct rz_hello {
    int32_t protocol;
    int64_t last_zxid;
    int32_t timeout;
    int64_t sid;
    const unsigned char *pw; /* NULL: 16 zero bytes */
    int readonly;
};

void rz_init(struct rz *z);
/* TCP connect to host:port; 0 or -1. */
int rz_dial(struct rz *z, const char *hostport);
/* Send a ConnectRequest and read the ConnectResponse.  1: session granted; 0: refused
 * (timeOut 0); -1: no response (closed or timed out). */
int rz_hello(struct rz *z, const struct rz_hello *h);
/* dial + hello with a new session; 0 on success. */
int rz_open(struct rz *z, const char *hostport, int32_t timeout_ms);
/* closeSession (bounded wait for its reply), then close the socket. */
void rz_close(struct rz *z);
/* Close the socket only: the session stays until it expires. */
void rz_drop(struct rz *z);

int rz_send(struct rz *z, const void *p, size_t n);
/* Send one frame: 4-byte length + payload. */
int rz_send_frame(struct rz *z, const void *p, size_t n);
/* Read one frame.  1: got it (z->frame / z->frame_len); 0: nothing within wait_ms; -1: closed
 * (EOF or reset). */
int rz_recv_frame(struct rz *z, int wait_ms);
/* 1 if the server closes the connection within wait_ms without sending anything more;
 * 0 if it stays open; -1 if a frame arrived instead. */
int rz_expect_close(struct rz *z, int wait_ms);

/* Send a request (header + body) with the given xid, without waiting. */
int rz_send_req(struct rz *z, int32_t xid, int32_t type, const struct rz_w *body);
/* Read frames until a non-notification frame arrives (notifications are queued).  0 or -1. */
int rz_read_reply(struct rz *z, struct rz_reply *rep, int wait_ms);
/* Send with the next xid and wait for the reply with that xid.  0 or -1. */
int rz_call(struct rz *z, int32_t type, const struct rz_w *body, struct rz_reply *rep);

/* Next queued or arriving notification.  1: got one; 0: none within wait_ms; -1: a reply or
 * a close arrived instead. */
int rz_next_event(struct rz *z, int wait_ms, struct rz_event *ev);
int rz_pending_events(const struct rz *z);

/* Sends a four-letter word on a fresh connection to hostport and reads the answer until the
 * server closes (5 s bound), NUL-terminated in out.  Returns the bytes read, or -1. */
int rz_four_letter(const char *hostport, const char *word, char *out, size_t cap);
/* The same with n bytes sent: a word and its argument (stmk's mask). */
int rz_four_letter_n(const char *hostport, const void *bytes, size_t n,
                     char *out, size_t cap);

/* Convenience calls: return the reply's err, or RZ_ETRANSPORT. */
int rz_create(struct rz *z, int32_t op, const char *path, const char *data, int32_t dlen,
              int32_t flags, int64_t ttl, char *out, size_t cap, struct rz_stat *st);
int rz_delete(struct rz *z, const char *path, int32_t version);
int rz_exists(struct rz *z, const char *path, int watch, struct rz_stat *st);
int rz_get(struct rz *z, const char *path, int watch, struct rz_stat *st);
int rz_set(struct rz *z, const char *path, const char *data, int32_t dlen, int32_t version,
           struct rz_stat *st);
/* getChildren (sorted, joined with ','). */
int rz_children(struct rz *z, const char *path, int watch, char *out, size_t cap);
int rz_add_watch(struct rz *z, const char *path, int32_t mode);
int rz_auth(struct rz *z, const char *scheme, const char *cred);
/* A read round trip ("exists /"), to order things after earlier replies; returns its zxid in
 * *zxid if not NULL. */
int rz_ping_read(struct rz *z, int64_t *zxid);
/* Sorted, ','-joined string vector from a reply body. */
int rz_r_strvec_joined(struct rz_r *r, char *out, size_t cap);

const char *rz_event_name(int32_t type);

#endif
