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
 * does for every client with a forwarded write out when the link breaks: the
 * client sees the connection lost, as ZooKeeper's do, and looks again.
 *
 * The same link carries, every half tick, the sessions the follower's
 * clients were heard on: only the leader expires sessions.
 *
 * A session has one home: the server its client is connected to.  A
 * client that resumes its session on a follower is answered only once the
 * leader has recorded the session there (PEER_OWN, then PEER_OWNED); from
 * then on the leader refuses what another server forwards for it
 * (TB_ESESSIONMOVED: that server closes the connection), and closes the
 * session's connection of its own if it has one.  So a write its client
 * sent to its old server, held up on the way, can never be applied after
 * the writes it made since, as with ZooKeeper's SESSIONMOVED.  A new
 * leader knows only the sessions resumed since it took over; any other's
 * home, to it, is the first server that writes for it (forwarded, or its
 * own client's), as ZooKeeper's leader takes a session's first writer for
 * its owner: the other is refused from then on.
 *
 * Frames, both ways, big-endian: u32 length of what follows, u8 type,
 * then the payload.
 *   follower -> leader
 *     PEER_HELLO    u32 the follower's server id
 *     PEER_FORWARD  a txn (tb_txn's encoding); the leader stamps its time
 *                   and policies on it again
 *     PEER_TOUCH    n x u64 session id
 *     PEER_OWN      n x (u64 session id, u64 connection id)
 *   leader -> follower
 *     PEER_FAILED   u64 origin, i32 status (a TB_E* code)[, i32 xid]: with
 *                   the xid, a forwarded write refused before it was
 *                   logged; without, a request whose outcome is unknown
 *     PEER_OWNED    u64 connection id */
#ifndef TBD_PEER_H
#define TBD_PEER_H

#include <stddef.h>
#include <stdint.h>

struct hist;
struct tb_txn;
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
/* The members changed (reconfig): links are made to and accepted from
 * these from now on. */
void peer_set_members(struct tbd *s, const struct peer_member *m, unsigned n);
/* Whether this server is outside the ensemble (removed by a reconfig, or
 * joining and not yet added): while it is, it closes its clients'
 * connections and takes no more (peer_serving). */
void peer_set_outside(struct tbd *s, int outside);
/* Closes every link; pending forwards get their connections closed. */
void peer_stop(struct tbd *s);

/* Forwards an encoded txn to the leader: 0, or TB_ECONNECTIONLOSS when no
 * leader is known or reachable now (the caller closes the client's
 * connection). */
int peer_forward(struct tbd *s, const void *txn, size_t len);
/* The client `origin` (a struct proc_client's id) resumes session `id`
 * here: 1 if it may go on at once (no ensemble, or this is the leader,
 * which records it), 0 if the leader was asked (session_claimed follows,
 * or the client is closed), or TB_ECONNECTIONLOSS when no leader is
 * reachable now. */
int peer_claim(struct tbd *s, uint64_t origin, int64_t id);
/* Whether this server, leading, may propose its own client's `t` (the
 * homes above): 0, recording its session as held here if no server was
 * known to hold it; TB_ESESSIONMOVED (the caller closes the client's
 * connection) or TB_ENOMEM. */
int peer_write_here(struct tbd *s, const struct tb_txn *t);
/* Session `id` is closed: the leader forgets where it was. */
void peer_session_closed(struct tbd *s, int64_t id);
/* Session `id` was heard from on this server (a follower reports it). */
void peer_touched(struct tbd *s, int64_t id);
/* 0 while this server, cut off from any leader for longer than an
 * election, takes no clients (it closed those it had). */
int peer_serving(struct tbd *s);
/* Each election's time on this member (http/election.h); NULL: none. */
const struct hist *peer_election_time(const struct tbd *s);

#endif
