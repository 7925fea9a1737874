/* net/: client connections, plain and TLS.  conn.c accepts, reads and
 * splits frames, hands each to proc/ (proc.h) and writes out the replies
 * proc queues on the connection, once per loop turn (conn_flush_all);
 * tls.c sits between the socket and those buffers on the TLS port. */
#ifndef TBD_NET_H
#define TBD_NET_H

#include <uv.h>

#include "common/common.h"
#include "proto/proto.h"
#include "server/server.h"
#include "server/watch/watch.h"

struct sasl_conn;

enum conn_state {
    CONN_NEW,       /* waiting for ConnectRequest or a four-letter word */
    CONN_SESSION,   /* createSession in the log */
    CONN_OPEN,      /* session attached */
    CONN_CLOSING,   /* output drains, then the socket closes */
};

struct conn {
    uv_tcp_t tcp;
    struct tbd *srv;
    struct tb_queue link;       /* in srv->conns */
    struct tb_queue dirty_link; /* in srv->dirty while it has output */
    struct tb_queue notified_link; /* in srv->notified (conn.c) */
    struct tb_queue fresh_link; /* in srv->fresh until swept */
    uint64_t id;
    enum conn_state state;
    char peer[64];              /* "a.b.c.d" */
    int peer_port;
    uint32_t peer_ip4;          /* host order; 0 if not IPv4 */

    uint8_t *in; /* unprocessed input, or NULL */
    size_t in_len, in_cap;
    int reading;

    struct tb_wbuf out;         /* frames not yet handed to the kernel */
    size_t writing;             /* bytes in the uv_write in flight */

    int64_t session_id;
    int32_t timeout_ms;
    uint8_t has_readonly;
    struct tb_wbuf ids;         /* encoded vector<Id> elements */
    int32_t nids;
    int super;
    unsigned schemes;           /* TB_SCHEME_* bits of its ids */
    struct sasl_conn *sasl; /* a SASL exchange begun, or NULL */
    struct tls_conn *tls;   /* on the TLS port, else NULL (net/tls.c) */

    struct tb_queue reqs;       /* struct req, oldest first */
    unsigned nreqs;
    unsigned writes_in_flight;

    struct watch_owner watch;

    /* statistics */
    uint64_t received, sent, established_ms, last_resp_ms;
    int32_t last_op, last_cxid;
    int64_t last_zxid;
    struct latency lat;
};

/* net/conn.c */
int conn_listen(struct tbd *s);
/* Closes what conn_listen opened (a start that goes no further). */
void conn_unlisten(struct tbd *s);
void conn_send(struct conn *c, const void *frame, size_t len);
void conn_reply(struct conn *c, int32_t xid, int64_t zxid, int32_t err,
                const void *body, size_t len);
/* A reply's frame header (length, xid, zxid, err) into `hdr`; the body of
 * `len` bytes follows it only if err is 0.  Returns the frame's length. */
#define CONN_REPLY_HDR 20
size_t conn_reply_header(uint8_t *hdr, int32_t xid, int64_t zxid, int32_t err,
                         size_t len);
void conn_close(struct conn *c);
void conn_close_after_flush(struct conn *c);
void conn_pause(struct conn *c);
void conn_resume(struct conn *c);
void conn_flush_all(struct tbd *s);
/* c was sent a watch's notice; conn_flush_notified writes out every such
 * connection now, not at the end of the loop's turn (conn.c). */
void conn_notified(struct conn *c);
void conn_flush_notified(struct tbd *s);
/* Closes connections that sent no ConnectRequest (nor finished a TLS
 * handshake) within CONN_SESSIONLESS_MS: each holds a descriptor. */
#define CONN_SESSIONLESS_MS 10000
void conn_sweep_sessionless(struct tbd *s);

/* net/tls.c: the TLS port's context (start-up; logs why it cannot be had),
 * and each of its connections: tls_conn_input decrypts what a read brought
 * into c->in (non-zero: close once the alert it may have left is sent);
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
