/* The ZooKeeper client wire protocol: constants and every record, encoded
 * and decoded by one codec that the server and the client library share.
 *
 * Decoders follow a {pos, end} cursor, check every length against the bytes
 * that remain, never allocate, and return views (struct tb_str, struct
 * tb_vec) into the input.  Encoders append to a struct tb_wbuf.
 *
 * Frame:   OFFSET SIZE  DESCRIPTION
 *               0    4  payload length N, big endian (0 <= N <= maxbuffer)
 *               4    N  payload: a record, or RequestHeader/ReplyHeader + record
 * Integers are big endian; buffers and strings are int32 length + bytes with
 * -1 for null; vectors are int32 count + elements with -1 for null. */
#ifndef TB_PROTO_H
#define TB_PROTO_H

#include "common/common.h"
#include "tumbler/wire.h"

#define TB_DEFAULT_MAXBUFFER 1048575

enum tb_op {
    TB_OP_NOTIFICATION = 0,
    TB_OP_CREATE = 1,
    TB_OP_DELETE = 2,
    TB_OP_EXISTS = 3,
    TB_OP_GETDATA = 4,
    TB_OP_SETDATA = 5,
    TB_OP_GETACL = 6,
    TB_OP_SETACL = 7,
    TB_OP_GETCHILDREN = 8,
    TB_OP_SYNC = 9,
    TB_OP_PING = 11,
    TB_OP_GETCHILDREN2 = 12,
    TB_OP_CHECK = 13,
    TB_OP_MULTI = 14,
    TB_OP_CREATE2 = 15,
    TB_OP_RECONFIG = 16,
    TB_OP_CHECKWATCHES = 17,
    TB_OP_REMOVEWATCHES = 18,
    TB_OP_CREATECONTAINER = 19,
    TB_OP_DELETECONTAINER = 20,
    TB_OP_CREATETTL = 21,
    TB_OP_MULTIREAD = 22,
    TB_OP_AUTH = 100,
    TB_OP_SETWATCHES = 101,
    TB_OP_SASL = 102,
    TB_OP_GETEPHEMERALS = 103,
    TB_OP_GETALLCHILDRENNUMBER = 104,
    TB_OP_SETWATCHES2 = 105,
    TB_OP_ADDWATCH = 106,
    TB_OP_WHOAMI = 107,
    TB_OP_CREATESESSION = -10,
    TB_OP_CLOSESESSION = -11,
    TB_OP_ERROR = -1,
    /* A txn of our own, never on the wire: zxids jump to a new epoch
     * (body: new_epoch_txn; a zxid of -i: the epoch after log index
     * i's, fsm.c). */
    TB_OP_NEWEPOCH = -100,
    /* The leader's answer to a reconfig, once the members have changed in
     * raft or could not (body reconfig_txn; proc/reconfig.c). */
    TB_OP_RECONFIG_TXN = -101,
};

/* Special xids. */
enum {
    TB_XID_NOTIFICATION = -1,
    TB_XID_PING = -2,
    TB_XID_AUTH = -4,
    TB_XID_SETWATCHES = -8,
};

enum tb_keeper_state {
    TB_STATE_DISCONNECTED = 0,
    TB_STATE_SYNC_CONNECTED = 3,
    TB_STATE_AUTH_FAILED = 4,
    TB_STATE_CONNECTED_READONLY = 5,
    TB_STATE_EXPIRED = -112,
    TB_STATE_CLOSED = 7,
};

/* Decoding cursor.  At all times pos <= end. */
struct tb_rd {
    const uint8_t *pos;
    const uint8_t *end;
};

static inline struct tb_rd tb_rd_make(const void *p, size_t n)
{
    /* A null vector has no bytes: NULL + 0 is undefined in C. */
    if (p == NULL)
        return (struct tb_rd){NULL, NULL};
    return (struct tb_rd){(const uint8_t *)p, (const uint8_t *)p + n};
}

/* A decoded vector: its element count (-1 for null) and the raw encoded
 * elements, which tb_vec_* iterators walk.  An encoder copies `raw`. */
struct tb_vec {
    int32_t n;
    const uint8_t *raw;
    size_t len;
};

struct tb_id {
    struct tb_str scheme;
    struct tb_str id;
};

struct tb_acl {
    int32_t perms;
    struct tb_id id;
};

/* Field types used by the record tables below. */
typedef int32_t tb__I32;
typedef int64_t tb__I64;
typedef uint8_t tb__BOOL;
typedef struct tb_str tb__STR;  /* ustring */
typedef struct tb_str tb__BUF;  /* buffer */
typedef struct tb_stat tb__STAT;
typedef struct tb_vec tb__ACLS; /* vector<ACL> */
typedef struct tb_vec tb__STRS; /* vector<ustring> */
typedef struct tb_vec tb__IDS;  /* vector<Id> (whoAmI's ClientInfo) */
typedef uint8_t tb__FLAGS;      /* a last byte older records lack: 0 */

/* Every record with a fixed shape: name, fields as F(TYPE, field). */
#define TB_RECORDS(R)                                                       \
    R(request_header, F(I32, xid) F(I32, type))                             \
    R(reply_header, F(I32, xid) F(I64, zxid) F(I32, err))                   \
    R(create_req, F(STR, path) F(BUF, data) F(ACLS, acl) F(I32, flags))     \
    R(create_ttl_req,                                                       \
      F(STR, path) F(BUF, data) F(ACLS, acl) F(I32, flags) F(I64, ttl))     \
    R(delete_req, F(STR, path) F(I32, version))                             \
    R(path_watch_req, F(STR, path) F(BOOL, watch))                          \
    R(path_req, F(STR, path))                                               \
    R(set_data_req, F(STR, path) F(BUF, data) F(I32, version))              \
    R(set_acl_req, F(STR, path) F(ACLS, acl) F(I32, version))               \
    R(check_req, F(STR, path) F(I32, version))                              \
    R(auth_req, F(I32, type) F(STR, scheme) F(BUF, auth))                   \
    R(sasl_token, F(BUF, token))                                            \
    R(set_watches_req, F(I64, relative_zxid) F(STRS, data) F(STRS, exist)   \
                           F(STRS, child))                                  \
    R(set_watches2_req, F(I64, relative_zxid) F(STRS, data) F(STRS, exist)  \
                            F(STRS, child) F(STRS, persistent)              \
                                F(STRS, recursive))                         \
    R(add_watch_req, F(STR, path) F(I32, mode))                             \
    R(watches_req, F(STR, path) F(I32, type))                               \
    R(reconfig_req, F(STR, joining) F(STR, leaving) F(STR, new_members)     \
                        F(I64, config_id))                                  \
    R(multi_header, F(I32, type) F(BOOL, done) F(I32, err))                 \
    R(path_resp, F(STR, path))                                              \
    R(create2_resp, F(STR, path) F(STAT, stat))                             \
    R(stat_resp, F(STAT, stat))                                             \
    R(get_data_resp, F(BUF, data) F(STAT, stat))                            \
    R(get_acl_resp, F(ACLS, acl) F(STAT, stat))                             \
    R(children_resp, F(STRS, children))                                     \
    R(children2_resp, F(STRS, children) F(STAT, stat))                      \
    R(count_resp, F(I32, count))                                            \
    R(whoami_resp, F(IDS, clients))                                         \
    R(error_resp, F(I32, err))                                              \
    R(watcher_event, F(I32, type) F(I32, state) F(STR, path))              \
    R(txn, F(I32, type) F(I64, session) F(I32, xid) F(I64, time)            \
               F(I64, origin) F(BOOL, super) F(IDS, ids) F(BUF, body)       \
               F(FLAGS, flags))                                             \
    R(create_session_txn, F(I32, timeout) F(BUF, passwd))                   \
    R(new_epoch_txn, F(I64, zxid))                                          \
    R(reconfig_txn, F(I32, rc) F(STR, members))                             \
    R(session_resp, F(I64, session) F(I32, timeout) F(BUF, passwd))

#define TB__REC_FIELD(T, name) tb__##T name;
#define TB__REC_DECL(rec, fields)                                           \
    struct tb_##rec {                                                       \
        fields                                                              \
    };                                                                      \
    int tb_##rec##_decode(struct tb_rd *r, struct tb_##rec *out);           \
    void tb_##rec##_encode(struct tb_wbuf *w, const struct tb_##rec *in);
#define F TB__REC_FIELD
TB_RECORDS(TB__REC_DECL)
#undef F

/* A txn is one raft log entry: the client's request record (`body`, exactly
 * the bytes the client sent after its RequestHeader) plus what the leader
 * decides once for every replica: `time` (leader wall clock, ms), the
 * caller's identities `ids` (vector<Id>, for ACL checks and `auth` ACL
 * expansion) and `super`.  `type` is the request opcode, or createSession
 * (body create_session_txn), closeSession (empty body; also used for
 * expiry) or deleteContainer (body path_req; container and TTL cleanup).
 * `origin` routes the reply back to the connection that asked and has no
 * effect on the state.  The result of createSession is a session_resp.
 * `flags` carries the leader's policies that change what a txn does, so
 * that every replica applies it alike whatever its own configuration;
 * entries logged before the field existed read as 0. */
#define TB_TXN_ENFORCE_QUOTA 0x01 /* refuse writes over a hard quota limit */
#define TB_TXN_SASL_ACLS 0x02     /* "sasl" is a valid ACL scheme */
#define TB_TXN_X509_ACLS 0x04     /* "x509" is (the leader has a TLS port) */

/* ConnectRequest/Response: the trailing readOnly byte is optional and its
 * presence is mirrored, so these two are written by hand. */
struct tb_connect_req {
    int32_t protocol_version;
    int64_t last_zxid;
    int32_t timeout;
    int64_t session_id;
    struct tb_str passwd;
    uint8_t has_readonly;
    uint8_t readonly;
};
struct tb_connect_resp {
    int32_t protocol_version;
    int32_t timeout;
    int64_t session_id;
    struct tb_str passwd;
    uint8_t has_readonly;
    uint8_t readonly;
};
int tb_connect_req_decode(struct tb_rd *r, struct tb_connect_req *out);
void tb_connect_req_encode(struct tb_wbuf *w, const struct tb_connect_req *in);
int tb_connect_resp_decode(struct tb_rd *r, struct tb_connect_resp *out);
void tb_connect_resp_encode(struct tb_wbuf *w,
                            const struct tb_connect_resp *in);

/* Primitives (return 0 or TB_EMARSHALLING; never read past r->end). */
int tb_get_I32(struct tb_rd *r, int32_t *v);
int tb_get_I64(struct tb_rd *r, int64_t *v);
int tb_get_BOOL(struct tb_rd *r, uint8_t *v);
int tb_get_STR(struct tb_rd *r, struct tb_str *v);
int tb_get_BUF(struct tb_rd *r, struct tb_str *v);
int tb_get_STAT(struct tb_rd *r, struct tb_stat *v);
int tb_get_ACLS(struct tb_rd *r, struct tb_vec *v);
int tb_get_STRS(struct tb_rd *r, struct tb_vec *v);
int tb_get_IDS(struct tb_rd *r, struct tb_vec *v);
int tb_get_FLAGS(struct tb_rd *r, uint8_t *v); /* 0 at the end of input */
void tb_put_I32(struct tb_wbuf *w, int32_t v);
void tb_put_I64(struct tb_wbuf *w, int64_t v);
void tb_put_BOOL(struct tb_wbuf *w, uint8_t v);
void tb_put_FLAGS(struct tb_wbuf *w, uint8_t v);
void tb_put_STR(struct tb_wbuf *w, struct tb_str v);
void tb_put_BUF(struct tb_wbuf *w, struct tb_str v);
void tb_put_STAT(struct tb_wbuf *w, const struct tb_stat *v);
void tb_put_VEC(struct tb_wbuf *w, struct tb_vec v);
#define tb_put_ACLS tb_put_VEC
#define tb_put_STRS tb_put_VEC
#define tb_put_IDS tb_put_VEC

/* Vector iteration: start with tb_vec_reader(v), then call _next until it
 * returns 0 (end) or < 0 (malformed; cannot happen for a vector that a
 * tb_get_* accepted). */
static inline struct tb_rd tb_vec_reader(struct tb_vec v)
{
    return tb_rd_make(v.raw, v.len);
}
int tb_vec_next_acl(struct tb_rd *it, struct tb_acl *out);
int tb_vec_next_str(struct tb_rd *it, struct tb_str *out);
int tb_vec_next_id(struct tb_rd *it, struct tb_id *out);

/* Building vectors: write elements into a scratch wbuf, then view it. */
void tb_put_acl(struct tb_wbuf *w, const struct tb_acl *a);
void tb_put_id(struct tb_wbuf *w, const struct tb_id *id);
static inline struct tb_vec tb_vec_view(const struct tb_wbuf *w, int32_t n)
{
    return (struct tb_vec){n, w->base, w->len};
}

/* Frames.  tb_frame_split looks at buffered input: TB_EAGAIN until a whole
 * frame is there; TB_ETOOBIG when the announced length is negative or above
 * `max` (decided from the 4-byte prefix alone, nothing more is buffered);
 * otherwise 0 with the payload view and the total bytes consumed. */
int tb_frame_split(const uint8_t *p, size_t n, size_t max,
                   struct tb_str *payload, size_t *consumed);
/* Reserve a 4-byte length prefix; tb_frame_end fills it in. */
size_t tb_frame_begin(struct tb_wbuf *w);
void tb_frame_end(struct tb_wbuf *w, size_t start);

/* Multi: the sub-operation records a multi or multiRead may hold. */
struct tb_multi_op {
    int32_t type;
    union {
        struct tb_create_ttl_req create; /* create, create2, container, TTL
                                            (ttl = -1 unless createTTL) */
        struct tb_delete_req del;
        struct tb_set_data_req set_data;
        struct tb_check_req check;
        struct tb_path_watch_req read; /* getData / getChildren (multiRead) */
    } u;
};
/* Reads the next (MultiHeader, record): 1 and *op filled, 0 at the
 * terminator, TB_EMARSHALLING on bad input or an op type outside
 * the allowed sets for `multi_type` (TB_OP_MULTI or TB_OP_MULTIREAD). */
int tb_multi_next(struct tb_rd *r, int32_t multi_type, struct tb_multi_op *op);
void tb_multi_op_encode(struct tb_wbuf *w, const struct tb_multi_op *op);
void tb_multi_end_encode(struct tb_wbuf *w); /* the terminator header */
/* A failed multi's results and terminator: of `count` ops, 0 for those
 * before `failed`, `code` for it, RuntimeInconsistency for those after. */
void tb_multi_failure_encode(struct tb_wbuf *w, size_t count, size_t failed,
                             int32_t code);

/* Well-known ACL lists, already encoded. */
extern const struct tb_vec tb_acl_open_unsafe;  /* world:anyone ALL  */
extern const struct tb_vec tb_acl_creator_all;  /* auth: ALL         */
extern const struct tb_vec tb_acl_read_unsafe;  /* world:anyone READ */

/* %010d as Java's String.format renders it, negative numbers included. */
int tb_seq_format(char *out, size_t cap, int32_t seq);

#endif
