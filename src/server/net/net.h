/* net/: client connections, plain and TLS.  conn.c accepts, reads and
 * splits frames, hands each to proc/ (proc.h) and writes out the replies
 * proc queues on the connection, once per loop turn (conn_flush_all);
 * tls.c sits between the socket and those buffers on the TLS port. */
#ifndef TBD_NET_H
#define TBD_NET_H

#include <uv.h>

#include "common/common.h"
#include "proto/proto.h"
#include "server/proc/proc.h"
#include "server/server.h"

struct tls_conn;

/* A client's connection: the socket, its input and output buffers, and
 * the client proc/ serves over it (proc.h), which conn.c carries through
 * the ops it implements.  proc sees `client` only; the maps of struct
 * tbd (conn_by_id, conn_by_session) hold it. */
struct conn {
    uv_tcp_t tcp;
    struct tbd *srv;            /* the same as client.srv */
    struct tb_queue link;       /* in srv->conns */
    struct tb_queue dirty_link; /* in srv->dirty while it has output */
    struct tb_queue notified_link; /* in srv->notified (conn.c) */
    struct tb_queue fresh_link; /* in srv->fresh until swept */
    uint64_t due_ms;            /* ... closed then if still new or closing */
    char peer[64];              /* "a.b.c.d" */
    int peer_port;
    uint8_t peer_addr[16]; /* IPv6; IPv4 as ::ffff:a.b.c.d */
    int counted;           /* in s->ip_count (maxClientCnxns) */

    uint8_t *in; /* unprocessed input, or NULL */
    size_t in_len, in_cap;
    int reading;
    int ended; /* the client's close_notify read: close once c->in is run */

    struct tb_wbuf out;         /* frames not yet handed to the kernel */
    size_t writing;             /* bytes in the uv_write in flight */
    uint64_t taken, taken_seen; /* bytes the kernel took, ever and as
                                   of the last tick (conn_touch_readers) */

    struct tls_conn *tls;   /* on the TLS port, else NULL (net/tls.c) */

    struct proc_client client;

    /* statistics */
    uint64_t received, sent, established_ms;
    uint64_t heard_ms; /* the last bytes read (dump's connection buckets) */
};

/* net/conn.c */
int conn_listen(struct tbd *s);
/* Closes what conn_listen opened (a start that goes no further). */
void conn_unlisten(struct tbd *s);
/* A reply, counted as a packet sent; conn_write's bytes are not (a
 * four-letter word's answer: ZooKeeper counts the word as a packet
 * received, its answer as none sent). */
void conn_send(struct conn *c, const void *frame, size_t len);
void conn_write(struct conn *c, const void *frame, size_t len);
void conn_reply(struct conn *c, int32_t xid, int64_t zxid, int32_t err,
                const void *body, size_t len);
void conn_close(struct conn *c);
/* Closes every client's connection; returns how many there were. */
unsigned conn_close_all(struct tbd *s);
void conn_close_after_flush(struct conn *c);
void conn_pause(struct conn *c);
void conn_resume(struct conn *c);
void conn_flush_all(struct tbd *s);
/* c was sent a watch's notice; conn_flush_notified writes out every such
 * connection now, not at the end of the loop's turn (conn.c). */
void conn_notified(struct conn *c);
void conn_flush_notified(struct tbd *s);
/* Closes connections that sent no ConnectRequest (nor finished a TLS
 * handshake) within CONN_SESSIONLESS_MS: each holds a descriptor.  So is
 * one being closed whose client has not read what is left for as long. */
#define CONN_SESSIONLESS_MS 10000
void conn_sweep_sessionless(struct tbd *s);
/* Once a tick: touches the session of each client whose output holds its
 * requests back, if the kernel took more of it since the last tick. */
void conn_touch_readers(struct tbd *s);
/* Once a tick: accepts again on a listener whose last connection found no
 * memory (libuv polls it no more until it accepts). */
void conn_accept_again(struct tbd *s);

/* net/tls.c: the TLS port's context (start-up; logs why it cannot be had),
 * and each of its connections: tls_conn_input decrypts what a read brought
 * into c->in (1: the client's close_notify, after which nothing more
 * comes; negative: close once the alert it may have left is sent);
 * tls_conn_output encrypts c->out and returns the bytes to write, NULL if
 * it cannot (close). */
int tls_server_init(struct tbd *s);
/* Reads the stores again (SIGHUP): new connections get what they hold now,
 * open ones keep theirs; if they cannot be used, nothing changes. */
int tls_server_reload(struct tbd *s);
/* client.certReload: tls_server_reload when a store's file changes. */
void tls_server_watch(struct tbd *s);
void tls_server_free(struct tbd *s);
int tls_conn_new(struct conn *c);
void tls_conn_free(struct conn *c);
int tls_conn_input(struct conn *c, const uint8_t *p, size_t n);
struct tb_wbuf *tls_conn_output(struct conn *c);
size_t tls_conn_unsent(const struct conn *c);

#endif
