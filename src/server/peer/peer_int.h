/* What the files of the peer links share (peer.h says what the links
 * carry): the frames' types, the link, member and peer structs, and the
 * functions each file offers the others.  peer_link.c holds a link's
 * writing, framing, closing and reading; peer_leader.c the leader's side;
 * peer_follower.c a follower's link to the leader and the timer; peer.c
 * the entry points of peer.h.  Internal to src/server/peer. */
#ifndef TBD_PEER_INT_H
#define TBD_PEER_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "server/http/election.h"
#include "server/server.h"

enum {
    PEER_HELLO = 1,
    PEER_FORWARD = 2,
    PEER_TOUCH = 3,
    PEER_FAILED = 4,
    PEER_OWN = 5,
    PEER_OWNED = 6
};

#define FRAME_HDR 5
/* A txn is at most a client's frame (jute.maxbuffer) and what the server
 * adds (its header, the client's identities), for which MAX_FRAME beyond
 * jute.maxbuffer is room enough: a frame larger is not a peer speaking
 * this protocol (or one whose jute.maxbuffer is larger than this one's). */
#define MAX_FRAME ((size_t)64 << 20)
/* How often the leader is looked for: a follower learns of a new one
 * within this (raft has no callback for it). */
#define POLL_MS 20
/* A follower's link to the leader is made again at the next poll once it
 * ends, if it had held: connected (and secured) for LINK_HELD_MS.  One that
 * ends before that (the connect or the handshake failed, or the leader
 * closed it: a leader closes at once a link from an address its
 * configuration does not list as a member's) is made again only after a
 * delay that doubles each time, from POLL_MS to RETRY_MAX_MS (or the
 * election timeout, if shorter), so that a server the leader refuses, for
 * as long as raft names that leader, links about once a second rather than
 * every poll.  The delay starts over when a link holds, when raft names
 * another leader or none, and while this server is outside the ensemble
 * (peer_set_outside), where it makes no link: the leader refuses it, and
 * it has no client to forward for. */
#define LINK_HELD_MS 1000
#define RETRY_MAX_MS 1000

struct link {
    uv_tcp_t tcp;
    uv_pipe_t pipe;  /* with peer TLS: the plaintext, once secured */
    uv_stream_t *st; /* what frames go on: &tcp, or &pipe */
    void *secured;   /* with peer TLS: the handshake on its way */
    int handles;     /* not yet closed */
    struct peer *p;
    struct tb_queue node; /* in p->accepted, for a follower's link */
    uint64_t id;
    int leader_id;       /* the leader it goes to; 0: a follower's link */
    int from;            /* a follower's link: its server id (HELLO) */
    int connected;       /* to the leader: the connect completed */
    int broken;          /* ended by the other end or the network: a read or
                            a write failed */
    uint64_t up_ms;      /* to the leader: when HELLO went (tbd_now_ms) */
    int steady;          /* to the leader: up for LINK_HELD_MS */
    struct tb_wbuf in;   /* what was read and not yet handled */
    struct tb_wbuf held; /* frames sent before the connect completed */
    struct tb_map refused; /* a follower's link: the origins (client
                              connections) a forward of which the leader
                              refused, whose later ones it refuses too */
};

struct member {
    int id;
    int port; /* the election port, as configured */
    struct sockaddr_storage addr;
    char host[256]; /* as configured, for peer TLS; empty: addr's */
};

/* How often members whose names did not resolve are looked up again. */
#define RESOLVE_RETRY_MS 1000

struct resolving;

struct peer {
    struct tbd *srv;
    uv_tcp_t listener;
    uv_timer_t timer;
    struct member *members;
    unsigned n;
    /* Members given (peer_set_members) whose names are not all resolved
     * yet: the links go by the ones before until they are.  A look-up
     * runs off the loop, and takes pending's list while it does. */
    struct member *pending;
    unsigned pending_n;
    struct resolving *resolving; /* the look-up running, or NULL */
    uint64_t resolve_at;         /* the next look-up of pending's, not before */
    int resolve_failed;          /* the last look-up failed, and said so */
    struct tb_queue accepted; /* struct link: followers' */
    int accept_again;         /* a link found no memory: the timer accepts it */
    struct link *out;         /* to the leader, or NULL */
    uint64_t next_id;
    struct tb_map touched;   /* session ids heard from since the last report */
    struct tb_map owner;     /* the leader: session id -> the server id it is
                                held on (PEER_OWN), as a pointer */
    uint64_t touch_at_ms;    /* when the next report goes */
    int open_handles;        /* the listener and the timer, closing */
    int unreachable;         /* the leader last found so, once said */
    int refused;             /* the leader that last closed a link before it
                                held, once said */
    unsigned retry_ms;       /* the delay after the last link that did not
                                hold; 0: the next link goes at once */
    uint64_t retry_at;       /* no link to retry_leader before then */
    int retry_leader;        /* the leader the delay is for */
    int lost;                /* the leader whose working link closed last */
    uint64_t linked_at;      /* the last poll that found a link to
                                the leader holding, or this server
                                leading, or a leader newly named */
    uint64_t leaderless_since;      /* no leader, or no link to it, since
                                       then; 0: one is */
    int dropped_clients;            /* ... for so long the clients went */
    int logged_leader;              /* the leader the log last named; 0: none */
    int removed;                    /* not a member (peer_set_outside) */
    struct election_timer election; /* election_time's (http/election.h) */
    struct tb_log_rate refused_log; /* the leader's: links from no member */
};

static inline struct peer *peer_of(struct tbd *s)
{
    return s->peer;
}

/* Starts a look-up of pending's names if one is due and none runs (the
 * timer's); once all resolve, they are the members. */
void peer__resolve_pending(struct peer *p, uint64_t now);
/* Drops the sessions heard from not yet reported: sent to a leader later,
 * they would count as activity of then, and keep the sessions of clients
 * that died meanwhile past their timeout (ZooKeeper's learner drops its
 * table with its leader). */
void peer__forget_touched(struct peer *p);
/* Closes every client of this server (cut off from the leader, or outside
 * the ensemble), their touches forgotten with them; how many. */
unsigned peer__close_clients(struct peer *p);

/* ---- peer_follower.c ---- */

/* The sessions heard from here since the last report, to the leader, on a
 * link that is up (the timer's, each half tick). */
void peer__report_touched(struct peer *p);

/* ---- peer_link.c ---- */

/* A new link of p's, on no list, not connected; NULL when out of memory. */
struct link *peer__link_new(struct peer *p);
/* Writes on k (or its connect) unanswered for two elections end it,
 * instead of waiting in the kernel for as long as the other end is out of
 * reach; with `keepalive`, so does the other end's silence (probes after
 * two elections, three a second apart): a leader writes on a follower's
 * link only to answer it. */
void peer__link_bound(struct link *k, int keepalive);
/* Closes a link on no list yet (one peer__link_new made). */
void peer__link_discard(struct link *k);
/* Closes k, once (again: nothing); the link to the leader is reset and its
 * clients with a write or a handshake in flight lose their connections. */
void peer__link_close(struct link *k);
/* Writes n raw bytes on k's stream; on failure k is closed. */
void peer__write_out(struct link *k, const void *p, size_t n);
/* Sends the frame `type` of a then b; held until k is connected; on
 * failure k is closed. */
void peer__link_send(struct link *k, int type, const void *a, size_t an,
                     const void *b, size_t bn);
/* Starts reading k's frames (on k->st), each handed to its handler. */
void peer__link_read(struct link *k);
/* With peer TLS, hands k's socket to a tunnel, which calls `cb` with the
 * plaintext; `peer` as in tunnel_start.  0, or k is closed. */
int peer__secure(struct link *k, const char *peer, void (*cb)(void *, int));
/* The plaintext `fd` from the tunnel, for frames from now on; 0, or k is
 * closed. */
int peer__secured(struct link *k, int fd);

/* ---- peer_leader.c: frames a follower sends, and followers connecting ---- */

/* PEER_HELLO: k is the follower's link from now on (its older ones end). */
void peer__on_hello(struct link *k, int from);
/* Whether server `from` may propose `t` now (peer.h's homes): 0, recording
 * `from` as its session's home if none was known; TB_ESESSIONMOVED, or
 * TB_ENOMEM. */
int peer__writer(struct peer *p, const struct tb_txn *t, int from);
/* PEER_FORWARD: the txn is proposed, or refused with PEER_FAILED. */
void peer__on_forward(struct link *k, const uint8_t *p, size_t n);
/* PEER_OWN: the sessions are recorded as held on k's follower. */
void peer__on_own(struct link *k, const uint8_t *p, size_t n);
/* PEER_TOUCH: the sessions were heard from on k's follower. */
void peer__on_touch(struct link *k, const uint8_t *p, size_t n);
/* The listener's connection callback (server->data is the peer). */
void peer__on_connection(uv_stream_t *server, int status);
/* Accepts the link that found no memory: libuv polls the listener no more
 * until it accepts.  Called by the timer. */
void peer__accept_again(struct peer *p);

/* ---- peer_follower.c: frames the leader sends, and the timer ---- */

/* PEER_OWNED: the client waiting for its session to be recorded goes on. */
void peer__on_owned(struct peer *p, const uint8_t *b, size_t n);
/* PEER_FAILED: a write refused for low disk is answered so; otherwise the
 * client whose request failed is closed. */
void peer__on_failed(struct peer *p, const uint8_t *b, size_t n);
/* Every POLL_MS: follows the leader raft names, closes the clients of a
 * server long without one, reports the sessions heard from. */
void peer__on_timer(uv_timer_t *t);
/* k, p->out, ends (peer__link_close): the next link waits or not
 * (LINK_HELD_MS), and a link the leader closed before it held is said,
 * once. */
void peer__out_ended(struct peer *p, struct link *k);

/* ---- peer.c ---- */

/* The member `id` as p knows it, or NULL. */
const struct member *peer__member(const struct peer *p, int id);

#endif
