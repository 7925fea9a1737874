/* The peer links' entry points (peer.h says what the links carry):
 * starting them (the members resolved, the election port listened on, the
 * timer started), the members changing, stopping, and what the rest of the
 * server asks of them: a write forwarded, a session claimed, closed or
 * heard from, whether this server takes clients.  The links themselves
 * are peer_link.c's, the leader's side peer_leader.c's, a follower's
 * peer_follower.c's. */
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "server/http/election.h"
#include "server/logging/log.h"
#include "server/net/net.h"
#include "server/peer/peer.h"
#include "server/peer/peer_int.h"
#include "server/proc/proc.h"
#include "server/replog/replog.h"
#include "server/server.h"

const struct member *peer__member(const struct peer *p, int id)
{
    unsigned i;

    for (i = 0; i < p->n; i++)
        if (p->members[i].id == id)
            return &p->members[i];
    return NULL;
}

/* ---- the interface ---- */

int peer_serving(struct tbd *s)
{
    struct peer *p = peer_of(s);

    if (p != NULL && p->removed)
        return 0;
    return p == NULL || p->leaderless_since == 0 || !p->dropped_clients;
}

const struct hist *peer_election_time(const struct tbd *s)
{
    return s->peer != NULL ? &s->peer->election.hist : NULL;
}

int peer_forward(struct tbd *s, const void *txn, size_t len)
{
    struct peer *p = peer_of(s);

    if (p == NULL || p->out == NULL)
        return TB_ECONNECTIONLOSS;
    peer__link_send(p->out, PEER_FORWARD, txn, len, NULL, 0);
    return p->out != NULL ? 0 : TB_ECONNECTIONLOSS;
}

int peer_claim(struct tbd *s, uint64_t origin, int64_t id)
{
    struct peer *p = peer_of(s);
    uint8_t b[16];

    if (p == NULL)
        return 1;
    if (replog_is_leader(s->log))
        return tb_map_put(&p->owner, (uint64_t)id,
                          (void *)(intptr_t)s->server_id) == 0
                   ? 1
                   : TB_ENOMEM;
    if (p->out == NULL)
        return TB_ECONNECTIONLOSS;
    tb_store_be64(b, (uint64_t)id);
    tb_store_be64(b + 8, origin);
    peer__link_send(p->out, PEER_OWN, b, sizeof b, NULL, 0);
    return p->out != NULL ? 0 : TB_ECONNECTIONLOSS;
}

void peer_session_closed(struct tbd *s, int64_t id)
{
    struct peer *p = peer_of(s);

    if (p != NULL)
        (void)tb_map_del(&p->owner, (uint64_t)id);
}

void peer_touched(struct tbd *s, int64_t id)
{
    struct peer *p = peer_of(s);

    if (p != NULL)
        (void)tb_map_put(&p->touched, (uint64_t)id, p);
}

static int resolve(const char *host, int port, struct sockaddr_storage *out)
{
    struct addrinfo hints = {0}, *ai;
    char service[8];
    int rv;

    hints.ai_socktype = SOCK_STREAM;
    snprintf(service, sizeof service, "%d", port);
    if ((rv = getaddrinfo(host, service, &hints, &ai)) != 0) {
        tb_log(TB_LOG_ERROR, "peer: cannot resolve %s: %s", host,
               gai_strerror(rv));
        return TB_EINVAL;
    }
    memcpy(out, ai->ai_addr, ai->ai_addrlen);
    freeaddrinfo(ai);
    return 0;
}

static void peer_closed(uv_handle_t *h)
{
    struct peer *p = h->data;

    if (--p->open_handles > 0)
        return;
    tb_map_free(&p->touched);
    tb_map_free(&p->owner);
    free(p->members);
    free(p);
}

/* *out becomes the members m[0..n) as the links use them: each address
 * resolved, its name kept for peer TLS's check of the certificate. */
static int members_of(const struct peer_member *m, unsigned n,
                      struct member **out)
{
    struct member *v = calloc(n ? n : 1, sizeof *v);
    unsigned i;
    int rv;

    if (v == NULL)
        return TB_ENOMEM;
    for (i = 0; i < n; i++) {
        v[i].id = m[i].id;
        snprintf(v[i].host, sizeof v[i].host, "%s", m[i].host);
        if ((rv = resolve(m[i].host, m[i].port, &v[i].addr)) != 0) {
            free(v);
            return rv;
        }
    }
    *out = v;
    return 0;
}

int peer_start(struct tbd *s, const struct peer_member *m, unsigned n)
{
    struct peer *p = calloc(1, sizeof *p);
    const struct member *self;
    int rv;

    if (p == NULL)
        return TB_ENOMEM;
    if ((rv = members_of(m, n, &p->members)) != 0) {
        free(p);
        return rv;
    }
    p->srv = s;
    p->n = n;
    tb_queue_init(&p->accepted);
    tb_map_init(&p->touched);
    tb_map_init(&p->owner);
    self = peer__member(p, (int)s->server_id);
    uv_tcp_init(s->loop, &p->listener);
    p->listener.data = p;
    rv = self == NULL ? UV_EINVAL
                      : uv_tcp_bind(&p->listener,
                                    (const struct sockaddr *)&self->addr, 0);
    if (rv == 0)
        rv = uv_listen((uv_stream_t *)&p->listener, 64, peer__on_connection);
    if (rv != 0) {
        tb_log(TB_LOG_ERROR, "peer: cannot listen on the election port: %s",
               uv_strerror(rv));
        p->open_handles = 1;
        uv_close((uv_handle_t *)&p->listener, peer_closed);
        return TB_EIO;
    }
    uv_timer_init(s->loop, &p->timer);
    p->timer.data = p;
    uv_timer_start(&p->timer, peer__on_timer, POLL_MS, POLL_MS);
    election_start(&p->election, tbd_now_ms(s));
    s->peer = p;
    return 0;
}

void peer_set_members(struct tbd *s, const struct peer_member *m, unsigned n)
{
    struct peer *p = peer_of(s);
    struct member *v;

    if (p == NULL || members_of(m, n, &v) != 0)
        return;
    free(p->members);
    p->members = v;
    p->n = n;
}

void peer_set_outside(struct tbd *s, int outside)
{
    struct peer *p = peer_of(s);

    if (p == NULL || p->removed == outside)
        return;
    p->removed = outside;
    if (outside)
        conn_close_all(s);
}

void peer_stop(struct tbd *s)
{
    struct peer *p = peer_of(s);

    if (p == NULL)
        return;
    if (p->out != NULL)
        peer__link_close(p->out);
    while (!tb_queue_empty(&p->accepted))
        peer__link_close(
            TB_CONTAINER_OF(tb_queue_head(&p->accepted), struct link, node));
    p->open_handles = 2;
    uv_close((uv_handle_t *)&p->listener, peer_closed);
    uv_close((uv_handle_t *)&p->timer, peer_closed);
    s->peer = NULL;
}
