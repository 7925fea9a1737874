/* peer: what the servers of an ensemble say to each other besides Raft.
 *
 * A follower forwards every write its clients send (the txn proc_propose
 * encodes: its origin is one of this server's connections) to the leader,
 * over one TCP link to the leader's election port, in the order its
 * clients sent them; the leader proposes each as it comes, so each
 * session's writes stay in order.  The reply is the follower's own: its
 * fsm applies the entry as every replica's does, and the txn's origin
 * tells it that its client asked (proc_result).  The leader answers a
 * forwarded txn only when it could not propose it or its outcome became
 * unknown; the follower then closes that client's connection, and so it
 * does for every client with a write in flight when the link breaks: the
 * client sees the connection lost, as ZooKeeper's do, and looks again.
 *
 * The same link carries, every half tick, the sessions the follower's
 * clients were heard on: only the leader expires sessions.
 *
 * Frames, both ways, big-endian: u32 length of what follows, u8 type,
 * then the payload.
 *   follower -> leader
 *     PEER_HELLO    u32 the follower's server id
 *     PEER_FORWARD  a txn (tb_txn's encoding); the leader stamps its time
 *                   and policies on it again
 *     PEER_TOUCH    n x u64 session id
 *   leader -> follower
 *     PEER_FAILED   u64 origin, i32 status (a TB_E* code) */
#ifndef TBD_PEER_H
#define TBD_PEER_H

#include <stddef.h>
#include <stdint.h>

struct tbd;

/* A member of the ensemble, as the peer links reach it. */
struct peer_member {
    int id;
    const char *host; /* an IP address or a name */
    int port;         /* its election port */
};

/* Listens on this server's election port and follows the leader from
 * then on; `m` (copied) lists every member, this one included.  0, or a
 * negative TB_E* code after logging why. */
int peer_start(struct tbd *s, const struct peer_member *m, unsigned n);
/* Closes every link; pending forwards get their connections closed. */
void peer_stop(struct tbd *s);

/* Forwards an encoded txn to the leader: 0, or TB_ECONNECTIONLOSS when no
 * leader is known or reachable now (the caller closes the client's
 * connection). */
int peer_forward(struct tbd *s, const void *txn, size_t len);
/* Session `id` was heard from on this server (a follower reports it). */
void peer_touched(struct tbd *s, int64_t id);
/* 0 while this server, cut off from any leader for longer than an
 * election, takes no clients (it closed those it had). */
int peer_serving(struct tbd *s);

#endif
