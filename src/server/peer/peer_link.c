/* A peer link, whichever end it is: writing and framing what goes out
 * (held until a connect completes), closing (the link to the leader is
 * reset, and its clients with a write in flight lose their connections),
 * securing it with peer TLS, and reading the frames that come in, each
 * handed to its side's handler (peer_leader.c, peer_follower.c). */
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/proto.h"
#include "server/config/config.h"
#include "server/logging/log.h"
#include "server/net/net.h"
#include "server/peer/peer_int.h"
#include "server/peer/tunnel.h"
#include "server/proc/proc.h"
#include "server/server.h"

/* ---- writing ---- */

struct write_req {
    uv_write_t req;
    struct link *k;
};

static void written(uv_write_t *req, int status)
{
    struct write_req *w = TB_CONTAINER_OF(req, struct write_req, req);

    if (status != 0 && !uv_is_closing((uv_handle_t *)&w->k->tcp)) {
        w->k->broken = 1;
        peer__link_close(w->k);
    }
    free(w);
}

void peer__write_out(struct link *k, const void *p, size_t n)
{
    struct write_req *w = malloc(sizeof *w + n);
    uv_buf_t b;

    if (w == NULL) {
        peer__link_close(k);
        return;
    }
    w->k = k;
    memcpy(w + 1, p, n);
    b = uv_buf_init((char *)(w + 1), (unsigned)n);
    if (uv_write(&w->req, k->st, &b, 1, written) != 0) {
        free(w);
        peer__link_close(k);
    }
}

void peer__link_send(struct link *k, int type, const void *a, size_t an,
                     const void *b, size_t bn)
{
    struct tb_wbuf *f = &k->p->srv->scratch2;
    uint8_t hdr[FRAME_HDR];

    tb_store_be32(hdr, (uint32_t)(1 + an + bn));
    hdr[4] = (uint8_t)type;
    if (!k->connected) { /* sent once the connect completes */
        tb_wbuf_put(&k->held, hdr, sizeof hdr);
        tb_wbuf_put(&k->held, a, an);
        tb_wbuf_put(&k->held, b, bn);
        if (k->held.oom)
            peer__link_close(k);
        return;
    }
    tb_wbuf_reset(f);
    tb_wbuf_put(f, hdr, sizeof hdr);
    tb_wbuf_put(f, a, an);
    tb_wbuf_put(f, b, bn);
    if (f->oom)
        peer__link_close(k);
    else
        peer__write_out(k, f->base, f->len);
}

/* ---- closing ---- */

static void handle_closed(uv_handle_t *h)
{
    struct link *k = h->data;

    if (--k->handles > 0)
        return;
    tb_wbuf_free(&k->in);
    tb_wbuf_free(&k->held);
    tb_map_free(&k->refused);
    free(k);
}

/* Every client with a write forwarded on it loses its connection: the
 * write's outcome is unknown; so does one whose handshake waits for the
 * leader (a new session, or one resumed here). */
static void drop_forwarded(struct tbd *s)
{
    struct tb_queue *q, *next;
    struct conn *c;

    for (q = tb_queue_head(&s->conns); q != &s->conns; q = next) {
        next = q->next;
        c = TB_CONTAINER_OF(q, struct conn, link);
        if ((c->client.forwarded > 0 || c->client.state == CONN_SESSION) &&
            c->tcp.data != NULL)
            conn_close(c);
    }
}

void peer__link_close(struct link *k)
{
    struct peer *p = k->p;

    if (uv_is_closing((uv_handle_t *)&k->tcp))
        return;
    if (k->secured != NULL)
        tunnel_cancel(k->secured);
    k->secured = NULL;
    if (k->handles == 2)
        uv_close((uv_handle_t *)&k->pipe, handle_closed);
    if (k == p->out) {
        peer__out_ended(p, k);
        p->out = NULL;
        if (k->connected) {
            p->lost = k->leader_id;
            election_lost(&p->election, k->leader_id, tbd_now_ms(p->srv));
        }
        drop_forwarded(p->srv);
        /* Reset, not closed: the kernel would otherwise deliver what is
         * still unsent once the leader is reached again, writes whose
         * clients were told the connection was lost, and which may have
         * written since through another server. */
        if (uv_tcp_close_reset(&k->tcp, handle_closed) == 0)
            return;
    } else {
        tb_queue_remove(&k->node);
    }
    uv_close((uv_handle_t *)&k->tcp, handle_closed);
}

/* ---- reading ---- */

/* Whether a frame of `type` may come on k: a follower's link to its
 * leader brings the leader's answers, a link the leader took the
 * follower's requests (a frame the other way, from a process that is no
 * member's peer code, would resume or close clients here by id). */
static int comes_this_way(const struct link *k, int type)
{
    int answer = type == PEER_OWNED || type == PEER_FAILED;

    return (k == k->p->out) == answer;
}

static void on_frame(struct link *k, int type, const uint8_t *p, size_t n)
{
    if (type >= PEER_HELLO && type <= PEER_OWNED && !comes_this_way(k, type)) {
        tb_log(TB_LOG_WARN,
               "peer: frame %d on a link it never comes on: closing the link",
               type);
        peer__link_close(k);
        return;
    }
    switch (type) {
    case PEER_HELLO:
        if (n >= 4)
            peer__on_hello(k, (int)tb_load_be32(p));
        break;
    case PEER_FORWARD:
        peer__on_forward(k, p, n);
        break;
    case PEER_TOUCH:
        peer__on_touch(k, p, n);
        break;
    case PEER_OWN:
        peer__on_own(k, p, n);
        break;
    case PEER_OWNED:
        peer__on_owned(k->p, p, n);
        break;
    case PEER_FAILED:
        peer__on_failed(k->p, p, n);
        break;
    default:
        tb_log(TB_LOG_WARN, "peer: unknown frame %d: closing the link", type);
        peer__link_close(k);
    }
}

static void alloc_cb(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
    struct link *k = h->data;

    (void)hint;
    if (tb_wbuf_reserve(&k->in, 65536) != 0) {
        *buf = uv_buf_init(NULL, 0);
        return;
    }
    *buf = uv_buf_init((char *)k->in.base + k->in.len, 65536);
}

static void read_cb(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
    struct link *k = st->data;
    size_t off = 0, len;

    (void)buf;
    if (nread < 0) {
        k->broken = 1;
        peer__link_close(k);
        return;
    }
    k->in.len += (size_t)nread;
    while (k->in.len - off >= FRAME_HDR && !uv_is_closing((uv_handle_t *)st)) {
        len = tb_load_be32(k->in.base + off);
        if (len < 1 ||
            len > MAX_FRAME + (size_t)k->p->srv->cfg->jute_maxbuffer) {
            tb_log(TB_LOG_WARN, "peer: a frame of %zu bytes: closing", len);
            peer__link_close(k);
            return;
        }
        if (k->in.len - off < 4 + len)
            break;
        on_frame(k, k->in.base[off + 4], k->in.base + off + FRAME_HDR, len - 1);
        off += 4 + len;
    }
    if (uv_is_closing((uv_handle_t *)st))
        return;
    memmove(k->in.base, k->in.base + off, k->in.len - off);
    k->in.len -= off;
}

void peer__link_read(struct link *k)
{
    uv_read_start(k->st, alloc_cb, read_cb);
}

/* ---- making one ---- */

/* A link on no list yet, closed. */
void peer__link_discard(struct link *k)
{
    if (k->handles == 2)
        uv_close((uv_handle_t *)&k->pipe, handle_closed);
    uv_close((uv_handle_t *)&k->tcp, handle_closed);
}

void peer__link_bound(struct link *k, int keepalive)
{
    unsigned timeout = 2 * (unsigned)k->p->srv->cfg->election_timeout;
    int fd, every = 1, probes = 3;

    if (uv_fileno((uv_handle_t *)&k->tcp, &fd) != 0)
        return;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &timeout,
                     sizeof timeout);
    if (!keepalive || uv_tcp_keepalive(&k->tcp, 1, (timeout + 999) / 1000) != 0)
        return;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &every, sizeof every);
    (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof probes);
}

struct link *peer__link_new(struct peer *p)
{
    struct link *k = calloc(1, sizeof *k);

    if (k == NULL)
        return NULL;
    k->p = p;
    k->id = ++p->next_id;
    tb_wbuf_init(&k->in);
    tb_wbuf_init(&k->held);
    tb_map_init(&k->refused);
    uv_tcp_init(p->srv->loop, &k->tcp);
    k->tcp.data = k;
    k->st = (uv_stream_t *)&k->tcp;
    k->handles = 1;
    uv_tcp_nodelay(&k->tcp, 1);
    if (p->srv->quorum_tls != NULL) {
        uv_pipe_init(p->srv->loop, &k->pipe, 0);
        k->pipe.data = k;
        k->handles = 2;
    }
    return k;
}

/* With peer TLS, the link's socket is handed to a tunnel (a copy: k->tcp
 * keeps its own until the link closes), which calls `cb` with the
 * plaintext; `peer` as in tunnel_start.  0, or the link is closed. */
int peer__secure(struct link *k, const char *peer, void (*cb)(void *, int))
{
    uv_os_fd_t fd;
    int copy;

    if (uv_fileno((uv_handle_t *)&k->tcp, &fd) != 0 ||
        (copy = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0 ||
        (k->secured = tunnel_start(k->p->srv->quorum_tls, copy, peer != NULL,
                                   peer, cb, k)) == NULL) {
        peer__link_close(k);
        return TB_EIO;
    }
    return 0;
}

/* The plaintext `fd` from the tunnel, for frames from now on; 0, or the
 * link is closed. */
int peer__secured(struct link *k, int fd)
{
    k->secured = NULL;
    if (fd < 0 || uv_pipe_open(&k->pipe, fd) != 0) {
        if (fd >= 0)
            close(fd);
        peer__link_close(k);
        return TB_EIO;
    }
    k->st = (uv_stream_t *)&k->pipe;
    return 0;
}
