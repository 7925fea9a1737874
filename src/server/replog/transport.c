/* A raft_uv transport for a lone voter: it listens nowhere and connects to
 * no one.  A single voter never sends a message, and a listening raft port
 * that nobody needs is one more thing to secure and one more port that can
 * be taken.  An ensemble's is tcp.c's.
 *
 * raft_uv owns t->data (it points at its own state); we use only t->impl. */
#include <stdio.h>
#include <string.h>

#include "server/replog/internal.h"

static int local_init(struct raft_uv_transport *t, raft_id id,
                      const char *address)
{
    (void)t;
    (void)id;
    (void)address;
    return 0;
}

static int local_listen(struct raft_uv_transport *t, raft_uv_accept_cb cb)
{
    (void)t;
    (void)cb;
    return 0;
}

static int local_connect(struct raft_uv_transport *t,
                         struct raft_uv_connect *req, raft_id id,
                         const char *address, raft_uv_connect_cb cb)
{
    (void)req;
    (void)id;
    (void)cb;
    snprintf(t->errmsg, sizeof t->errmsg,
             "no transport to %s: this log has a single voter", address);
    return RAFT_NOCONNECTION;
}

/* Nothing to wait for: raft_uv copes with the callback firing at once (it
 * only marks the transport closed and waits for its own handles). */
static void local_close(struct raft_uv_transport *t,
                        raft_uv_transport_close_cb cb)
{
    if (cb != NULL)
        cb(t);
}

void replog__local_transport_init(struct raft_uv_transport *t)
{
    memset(t, 0, sizeof *t);
    t->init = local_init;
    t->listen = local_listen;
    t->connect = local_connect;
    t->close = local_close;
}
