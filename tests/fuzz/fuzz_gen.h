/* Building txns for the state-machine fuzz targets (txn_apply,
 * snapshot_load, tree_model) and the seed generator: paths drawn from the
 * live tree or a small alphabet, data, ACL lists, caller identities and
 * versions chosen by fuzzer bytes, txn encoding, and hooks that record
 * everything an fsm reports so two replicas can be compared. */
#ifndef TB_FUZZ_GEN_H
#define TB_FUZZ_GEN_H

#include "fuzz.h"
#include "server/fsm/fsm.h"

/* txn time starts here (ms), a plausible wall clock. */
#define FZ_TIME0 1700000000000LL

/* Everything an fsm reported through its hooks since the last reset:
 * `all` is a byte log of every call (for replica comparison), the rest
 * describes the last result. */
struct fz_log {
    struct tb_wbuf all;
    int results;
    int events;
    int rc;
    int32_t type;
    int64_t zxid;
    struct tb_wbuf body;
};

void fz_log_init(struct fz_log *l);
void fz_log_reset(struct fz_log *l);
void fz_log_free(struct fz_log *l);
struct fsm_hooks fz_log_hooks(struct fz_log *l);

/* tree_check, aborting with its reason. */
void fz_tree_check(const struct fsm *f, const char *who);

/* A txn under construction: the header fields and the body bytes. */
struct fz_txn {
    int32_t type;
    int64_t session;
    int64_t time;
    uint8_t super;
    struct tb_vec ids;
    struct tb_wbuf body;
    uint8_t flags; /* TB_TXN_* */
};

/* Encodes `t` as a log entry into `out` (reset first). */
void fz_txn_entry(const struct fz_txn *t, struct tb_wbuf *out);

/* Calls cb on every node in pre-order until it returns non-zero. */
int fz_tree_walk(const struct tree *t, tree_node_cb cb, void *data);
/* The node with pre-order index i % count (count = tree_count). */
struct tree_node *fz_node_at(const struct tree *t, uint32_t i);

/* A path: an existing node, a child of one (alphabet name, or "" so that
 * a sequential create gets "/parent/<seq>"), an alphabet path, one of a
 * table of awkward paths, or raw bytes.  The view lives in `w` until the
 * next call with the same buffer. */
struct tb_str fz_gen_path(struct fz_in *in, const struct tree *t,
                          struct tb_wbuf *w);
/* Node data: null, empty, or bytes of the input. */
struct tb_str fz_gen_data(struct fz_in *in);
/* An ACL list (valid ones mostly, some that fixupACL refuses); elements
 * are written to `w` (reset first). */
struct tb_vec fz_gen_acl(struct fz_in *in, struct tb_wbuf *w);
/* Caller identities, selector 0..7; elements written to `w`. */
struct tb_vec fz_gen_ids(unsigned sel, struct tb_wbuf *w);
/* An expected version: -1, the current one, near it, or extremes. */
int32_t fz_gen_version(struct fz_in *in, int32_t current);

/* The txn_apply script: each step is an op byte (modulo FZ_OP_COUNT), a
 * header byte, then the op's own bytes.  Header byte: bits 0-2 pick the
 * session (0-5: a live one by creation order, 6: none, 7: 8 raw bytes),
 * bits 3-5 the caller's ids (fz_gen_ids), bit 6 `super` (else quota
 * limits are enforced: TB_TXN_ENFORCE_QUOTA), bit 7 a time
 * step of 100 ms x the next 2 bytes instead of 1 ms. */
enum fz_txn_op {
    FZ_OP_CREATE,      /* byte: opcode (bits 0-1) flags (2-4) ttl (5-7);
                          path, data, acl */
    FZ_OP_DELETE,      /* path, version */
    FZ_OP_SETDATA,     /* path, data, version */
    FZ_OP_SETACL,      /* path, acl, version */
    FZ_OP_MULTI,       /* count byte, then per sub-op a kind byte + args */
    FZ_OP_SESSION,     /* createSession: timeout (2), password kind (1) */
    FZ_OP_CLOSE,       /* closeSession of the header's session */
    FZ_OP_CONTAINER,   /* deleteContainer: byte (odd: a due node), path */
    FZ_OP_SYNC,        /* path */
    FZ_OP_RAW_ENTRY,   /* length byte, then that many raw entry bytes */
    FZ_OP_RAW_BODY,    /* opcode byte, length byte, raw body */
    FZ_OP_RESTORE,     /* a replica restored from a snapshot joins here */
    FZ_OP_BULK_CREATE, /* count byte (8-71), flags byte, path: a multi of
                          that many creates of one path, sequential mostly */
    FZ_OP_BULK_DELETE, /* node byte, first-child byte, count byte: a multi
                          deleting that many of the node's children */
    FZ_OP_COUNT
};

/* The tree_model script: each step is an op byte (modulo FZ_M_OP_COUNT),
 * a session byte (0-5: a live one, 6: none, 7: an unknown id; bits 3-4
 * zero: hard quota limits not enforced), then the op's bytes.  A path is
 * a mode byte and a node index (into the model's node array: "/",
 * "/zookeeper", its two children, then the nodes created since, a deleted
 * node's slot taken by the last one). */
enum fz_model_op {
    FZ_M_CREATE,    /* mode byte, path, data, acl byte */
    FZ_M_DELETE,    /* path, version */
    FZ_M_SETDATA,   /* path, data, version */
    FZ_M_MULTI,     /* count byte, then kind byte + args per sub-op */
    FZ_M_SESSION,   /* createSession */
    FZ_M_CLOSE,     /* closeSession of the step's session */
    FZ_M_CONTAINER, /* deleteContainer: path */
    FZ_M_TICK,      /* 2 bytes x 10 ms */
    FZ_M_COUNTER,   /* node, value index: set a sequence counter */
    FZ_M_QUOTA,     /* node, order, count and bytes hard limits */
    FZ_M_OP_COUNT
};

/* The encoded elements of a well-known id/ACL for seeds and models. */
extern const char fz_alice_digest[]; /* "alice:<hash of alice:secret>" */

#endif
