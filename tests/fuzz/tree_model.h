/* A naive model of the znode tree, written from the protocol document
 * alone, for the tree_model fuzz target, which runs the same ops on it and
 * on the fsm and compares the two.  It is an array of nodes (path, data,
 * version, child-creation counter, children, owner, zxids, times) and a
 * list of sessions, searched linearly.  Given an op and its txn it predicts
 * the result code (ZooKeeper's check order, wire doc §6 and §9.2; hard
 * quota limits when the txn enforces them), the sequential name and the
 * nodes left behind, quota stats included.
 *
 * It is naive on purpose: it shares no code and no data structure with
 * src/tree (no hash table, no child arrays, no undo log), so a mistake made
 * there is unlikely to be made again here, and it is short and plain enough
 * to be checked against the document by reading. */
#ifndef TB_FUZZ_TREE_MODEL_H
#define TB_FUZZ_TREE_MODEL_H

#include "fuzz.h"
#include "proto/proto.h"

#define MAX_NODES 400
#define MPATH     160

/* /zookeeper/quota<P>/zookeeper_limits puts the subtree at P under a quota,
 * .../zookeeper_stats counts it ("count=N,bytes=M"). */
#define QROOT "/zookeeper/quota"

enum m_kind { K_PERSISTENT, K_EPHEMERAL, K_CONTAINER, K_TTL };

struct mnode {
    char path[MPATH];
    size_t plen;
    uint8_t data[64];
    size_t dlen;
    int dnull;
    int32_t version, aversion, ccount, nkids;
    int readonly;  /* ACL world:anyone READ (only /zookeeper/config) */
    int64_t owner; /* session id (ephemeral), ttl (TTL), else 0 */
    enum m_kind kind;
    int64_t czxid, mzxid, pzxid, ctime, mtime;
};

/* At all times v[0..3] are "/", "/zookeeper", "/zookeeper/quota" and
 * "/zookeeper/config" (none can be deleted), and a deleted node's slot is
 * taken by the last node: the script's node indices rely on that order. */
struct model {
    struct mnode v[MAX_NODES];
    size_t n;
    int64_t sess[64];
    size_t nsess;
};

/* One request as the script describes it. */
struct mreq {
    int32_t type; /* opcode */
    char path[MPATH + 16];
    size_t plen;
    int has_path; /* 0: null path */
    struct tb_str data;
    int32_t flags, version;
    int64_t ttl;
    int bad_acl;
};

/* What an op takes from the header of the txn that carries it. */
struct m_txn {
    int64_t zxid, time, session;
    int enforce; /* the txn carries TB_TXN_ENFORCE_QUOTA */
};

/* The path a create made (a sequential one's suffix included) or a
 * setData wrote, for checking the result record against. */
struct m_name {
    char path[MPATH + 16];
    size_t len;
};

/* A fresh tree: "/", "/zookeeper" and its two children, no sessions. */
void m_init(struct model *m);
struct mnode *m_find(struct model *m, const char *p, size_t n);
int m_has_session(const struct model *m, int64_t id);
/* The last "key=value" pair naming key, pairs split at ',' or ';' and a
 * value ending at '='; -1 when there is none or it is not a number. */
int64_t m_kv(const struct mnode *x, const char *key);

/* Applies a create (any mode), delete, setData, check or deleteContainer
 * and returns its result code; a failed op leaves m as it was.  A create
 * or setData fills name (meaningful when it succeeds). */
int m_apply(struct model *m, const struct m_txn *t, const struct mreq *q,
            struct m_name *name);
/* closeSession of t->session: its ephemerals go, then the session. */
int m_close(struct model *m, const struct m_txn *t);

#endif
