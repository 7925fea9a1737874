/* TLS between the members of an ensemble (sslQuorum, ssl.quorum.*): every
 * connection of raft's (replog/tcp.c) and of the peer links (peer_link.c) is
 * made as before, then handed here with its socket; the user gets in
 * return one end of a socketpair carrying the plaintext, and reads and
 * writes it as it did the socket:
 *
 *   raft_uv, peer_link.c  <- plaintext ->  socketpair  <- tunnel.c ->  TLS, TCP
 *
 * Both ends present a certificate and verify the other's against the
 * trust store (ZooKeeper's ssl.quorum.clientAuth=need), and, with
 * ssl.quorum.hostnameVerification, that it names the member: dialing, its
 * host as the configuration names it; accepting, the address it connects
 * from or else the host name that address reverse-resolves to (as
 * ZooKeeper's quorum), looked up on libuv's thread pool.  A handshake
 * that fails is logged on both sides with OpenSSL's reason (or, for the
 * accepting side's name check, the names tried), at most once a second.
 * With portUnification, an accepted connection whose first byte begins
 * no TLS record is taken as it is, unauthenticated, and relayed through
 * the socketpair all the same: a member not yet on sslQuorum (or no
 * longer) speaks with those that are, while an ensemble is moved to it
 * (or off it) one member at a time.
 * Loop thread only. */
#ifndef TBD_TUNNEL_H
#define TBD_TUNNEL_H

#include <uv.h>

struct tb_config;
struct tls_keys;
struct tunnel_ctx;

/* The quorum's context from ssl.quorum.* (`k`), verifying the members'
 * hosts if `verify_host`, taking plain connections too if `unify`: NULL
 * after logging why (the key and the file named). */
struct tunnel_ctx *tunnel_ctx_new(uv_loop_t *loop, const struct tls_keys *k,
                                  int verify_host, int unify);
/* ... from the configuration's ssl.quorum.* keys and portUnification. */
struct tunnel_ctx *tunnel_ctx_from(uv_loop_t *loop,
                                   const struct tb_config *cfg);
/* Reads the stores again (SIGHUP): new connections present and check
 * what they hold now, open ones go on; if they cannot be used (logged),
 * nothing changes.  0 or TB_EINVAL. */
int tunnel_ctx_reload(struct tunnel_ctx *x, const struct tb_config *cfg);
/* sslQuorumReloadCertFiles: tunnel_ctx_reload with `cfg` (kept) whenever
 * a store's file changes (tls_stores_watch); the handles close with the
 * loop's others at exit. */
void tunnel_ctx_watch(struct tunnel_ctx *x, const struct tb_config *cfg);
/* A start that goes no further: closes those handles (x may be NULL). */
void tunnel_ctx_unwatch(struct tunnel_ctx *x);
/* Once the loop has ended: frees the tunnels whose handles it closed. */
void tunnel_ctx_free(struct tunnel_ctx *x);

/* Takes `fd`, a connected TCP socket (closed here in every case), and
 * makes TLS on it: as the client if `dialing` to `peer` ("host:port", the
 * member's address as configured), else as the server.  Then cb(arg, fd2)
 * once: fd2 is the plaintext end, the caller's to close (its closing ends
 * the connection, with a reset); or -1 when the handshake failed (logged)
 * or the connection ended first.  Returns a handle for tunnel_cancel, or
 * NULL (fd closed, cb never called).  The signature is replog_secure's. */
void *tunnel_start(void *ctx, int fd, int dialing, const char *peer,
                   void (*cb)(void *arg, int fd), void *arg);
/* Before its cb: the connection is dropped, and cb is never called. */
void tunnel_cancel(void *handle);

#endif
