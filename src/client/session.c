/* The session: what a handshake, a frame, a lost connection, expiry and
 * close do to the handle's state (wire doc 2, 3.3, 10.6, 11).
 *
 * States the application sees and what moves between them:
 *
 *   CONNECTING --handshake--> CONNECTED <--handshake-- SUSPENDED
 *                                 |                        ^
 *                                 +--connection lost-------+
 *   any --timeOut=0 / T without a server--> EXPIRED --new_session--> CONNECTING
 *   any --auth refused--> AUTH_FAILED;   any --close--> CLOSED
 *
 * On a reconnect the replies to everything outstanding are lost, so those
 * requests complete with connection loss; then the SASL login is made
 * again if there is one (sasl.c), credentials are replayed,
 * watches re-registered (setWatches, catch-up events arrive before its
 * reply) and the requests queued meanwhile go out. */
#include <netdb.h>

#include "client/client.h"

#define SETWATCHES_BATCH (128 * 1024)

void tb__set_state(struct tb_client *c, int state)
{
    if (c->state == state)
        return;
    tb__log(c, TB_LOG_INFO, "state %s -> %s", tb_session_state_name(c->state),
            tb_session_state_name(state));
    c->state = state;
    tb__push_state(c, state);
    pthread_cond_broadcast(&c->done_cv);
}

void tb__send_auth(struct tb_client *c, struct auth *a)
{
    struct tb_request_header h = {TB_XID_AUTH, TB_OP_AUTH};
    struct tb_auth_req r = {0, tb_str_c(a->scheme),
                            (struct tb_str){a->cred, a->len}};
    size_t start = tb_frame_begin(&c->out);

    tb_request_header_encode(&c->out, &h);
    tb_auth_req_encode(&c->out, &r);
    tb_frame_end(&c->out, start);
    if (c->auth_unanswered++ == 0)
        c->auth_next = a;
}

void tb__on_handshake(struct tb_client *c, const struct tb_connect_resp *r)
{
    int rv;

    if (r->timeout <= 0) {
        if (c->session_id != 0 && c->seen_rw) {
            tb__log(c, TB_LOG_WARN, "session 0x%llx expired",
                    (unsigned long long)c->session_id);
            tb__terminate(c, TB_SESSION_EXPIRED, TB_ESESSIONEXPIRED);
        } else {
            tb__conn_failed(c, "server refused a new session");
        }
        return;
    }
    if (c->session_id != 0 && c->seen_rw && r->session_id != c->session_id) {
        /* Asked to resume ours and given another: ours is gone, and with
         * it the ephemerals and locks it held.  Taking the new one
         * silently would leave the caller believing it holds them. */
        tb__log(c, TB_LOG_WARN, "session 0x%llx expired: server gave 0x%llx",
                (unsigned long long)c->session_id,
                (unsigned long long)r->session_id);
        tb__terminate(c, TB_SESSION_EXPIRED, TB_ESESSIONEXPIRED);
        return;
    }
    c->session_id = r->session_id;
    memset(c->passwd, 0, sizeof c->passwd);
    if (r->passwd.ptr != NULL) /* null: none, as an empty one */
        memcpy(c->passwd, r->passwd.ptr,
               r->passwd.len < sizeof c->passwd ? r->passwd.len
                                                : sizeof c->passwd);
    c->timeout = r->timeout;
    c->opened_at = c->now();
    c->last_heard = c->opened_at;
    c->open_readonly = r->readonly;
    c->seen_rw |= !r->readonly;
    tb__log(c, TB_LOG_INFO, "session 0x%llx, timeout %d ms%s",
            (unsigned long long)c->session_id, c->timeout,
            r->readonly ? ", read-only" : "");
    if (c->o.sasl_user != NULL) {
        /* Out of memory may pass; a login Cyrus cannot make will not. */
        if ((rv = tb__sasl_start(c)) == TB_ENOMEM)
            tb__conn_failed(c, "out of memory");
        else if (rv != 0)
            tb__terminate(c, TB_SESSION_AUTH_FAILED, rv);
        return;
    }
    tb__session_open(c);
}

void tb__session_open(struct tb_client *c)
{
    struct tb_queue *q;
    int n = 0;

    c->phase = PH_OPEN;
    TB_QUEUE_FOREACH(q, &c->auths)
        tb__send_auth(c, TB_CONTAINER_OF(q, struct auth, q));
    if (tb__watch_encode_set(c, &c->out, SETWATCHES_BATCH, &n) != 0) {
        tb__conn_lost(c, TB_ECONNECTIONLOSS, "out of memory");
        return;
    }
    c->setwatches_inflight = n;
    tb__set_state(c, c->open_readonly ? TB_SESSION_READONLY
                                      : TB_SESSION_CONNECTED);
    tb__flush(c);
}

static void on_auth_reply(struct tb_client *c, int err)
{
    struct auth *a = c->auth_next;

    if (c->auth_unanswered == 0 || a == NULL) {
        tb__log(c, TB_LOG_WARN, "unexpected auth reply");
        return;
    }
    c->auth_unanswered--;
    c->auth_next = a->q.next == &c->auths
                       ? NULL
                       : TB_CONTAINER_OF(a->q.next, struct auth, q);
    if (a->waiter != NULL) {
        struct req *w = a->waiter;
        a->waiter = NULL;
        tb__req_complete(c, w, err, NULL, 0);
    }
    if (err == TB_EAUTHFAILED) {
        tb__log(c, TB_LOG_ERROR, "credential for scheme %s refused",
                a->scheme);
        tb__terminate(c, TB_SESSION_AUTH_FAILED, TB_EAUTHFAILED);
    }
}

static void on_event(struct tb_client *c, struct tb_rd *rd)
{
    struct tb_watcher_event ev;

    if (tb_watcher_event_decode(rd, &ev) != 0 || ev.path.len == 0) {
        tb__conn_lost(c, TB_ECONNECTIONLOSS, "malformed notification");
        return;
    }
    if (tb__watch_dispatch(c, ev.type, ev.path) != 0)
        tb__conn_lost(c, TB_ECONNECTIONLOSS, "out of memory for an event");
}

static void on_reply(struct tb_client *c, const struct tb_reply_header *h,
                     struct tb_rd *rd)
{
    struct req *r;

    if (tb_queue_empty(&c->pendq)) {
        tb__conn_lost(c, TB_ECONNECTIONLOSS, "reply to nothing");
        return;
    }
    r = TB_CONTAINER_OF(tb_queue_head(&c->pendq), struct req, it.q);
    if (r->xid != h->xid) {
        tb__log(c, TB_LOG_ERROR, "reply xid %d, expected %d", h->xid,
                r->xid);
        tb__conn_lost(c, TB_ECONNECTIONLOSS, "reply out of order");
        return;
    }
    if (h->zxid > c->last_zxid)
        c->last_zxid = h->zxid;
    if (r == c->close_req) {
        tb_queue_remove(&r->it.q);
        c->close_req = NULL;
        tb__req_free(r);
        tb__finish_close(c);
        return;
    }
    if (h->err == 0 &&
        tb__reply_check(r->kind, rd->pos, (size_t)(rd->end - rd->pos)) != 0) {
        /* A server that sends what it cannot mean is not to be trusted
         * with the rest of the stream (nor with the watch it may set). */
        tb__conn_lost(c, TB_ECONNECTIONLOSS, "malformed reply");
        return;
    }
    tb__req_complete(c, r, h->err, h->err == 0 ? rd->pos : NULL,
                     (size_t)(rd->end - rd->pos));
}

void tb__on_frame(struct tb_client *c, const uint8_t *p, size_t n)
{
    struct tb_rd rd = tb_rd_make(p, n);
    struct tb_reply_header h;

    if (c->phase == PH_HANDSHAKE && c->sasl != NULL) {
        tb__sasl_on_frame(c, p, n);
        return;
    }
    if (c->phase == PH_HANDSHAKE) {
        struct tb_connect_resp r;
        if (tb_connect_resp_decode(&rd, &r) != 0) {
            tb__conn_failed(c, "malformed handshake reply");
            return;
        }
        tb__on_handshake(c, &r);
        return;
    }
    if (c->phase != PH_OPEN)
        return;
    c->last_heard = c->now();
    if (tb_reply_header_decode(&rd, &h) != 0) {
        tb__conn_lost(c, TB_ECONNECTIONLOSS, "malformed reply");
        return;
    }
    switch (h.xid) {
    case TB_XID_NOTIFICATION:
        on_event(c, &rd);
        break;
    case TB_XID_PING:
        c->ping_inflight = 0;
        break;
    case TB_XID_AUTH:
        on_auth_reply(c, h.err);
        break;
    case TB_XID_SETWATCHES:
        if (c->setwatches_inflight > 0)
            c->setwatches_inflight--;
        /* Only the last batch's: each batch's catch-up events come just
         * before its own reply, so an earlier one's zxid, kept across a
         * connection lost meanwhile, would skip the later batches'. */
        if (c->setwatches_inflight == 0 && h.zxid > c->last_zxid)
            c->last_zxid = h.zxid;
        if (h.err != 0)
            tb__log(c, TB_LOG_WARN, "setWatches failed: %s",
                    tb_strerror(h.err));
        break;
    default:
        if (h.err == TB_ESESSIONMOVED) { /* wire doc 11.5 */
            tb__conn_lost(c, TB_ECONNECTIONLOSS, "session moved");
            return;
        }
        on_reply(c, &h, &rd);
    }
}

/* The credentials' waiters get `rc`: each waited for an answer on the
 * connection that just ended or the attempt that just failed, as a
 * request sent or queued then did.  The credentials stay, replayed on the
 * next connection; a refusal there still ends the session. */
static void fail_auth_waiters(struct tb_client *c, int rc)
{
    struct tb_queue *q;

    TB_QUEUE_FOREACH (q, &c->auths) {
        struct auth *a = TB_CONTAINER_OF(q, struct auth, q);
        if (a->waiter != NULL) {
            struct req *w = a->waiter;
            a->waiter = NULL;
            tb__req_complete(c, w, rc, NULL, 0);
        }
    }
}

/* Keeps why the connection failed, for tb_client_last_error. */
static void note_failure(struct tb_client *c, int err, const char *why)
{
    c->last_err = err;
    snprintf(c->last_why, sizeof c->last_why, "%s:%s: %s",
             c->hosts[c->host_idx].name, c->hosts[c->host_idx].port, why);
}

void tb__conn_lost(struct tb_client *c, int rc, const char *why)
{
    tb__log(c, TB_LOG_WARN, "connection to %s:%s lost: %s",
            c->hosts[c->host_idx].name, c->hosts[c->host_idx].port, why);
    note_failure(c, TB_ECONNECTIONLOSS, why);
    tb__conn_close_fd(c);
    if (c->closing) {
        tb__finish_close(c);
        return;
    }
    /* The application hears "suspended" before the losses it explains. */
    if (c->state == TB_SESSION_CONNECTED || c->state == TB_SESSION_READONLY)
        tb__set_state(c, TB_SESSION_SUSPENDED);
    tb__req_fail_queue(c, &c->pendq, rc);
    fail_auth_waiters(c, rc);
    c->phase = PH_BACKOFF; /* placeholder until the next attempt starts */
    /* A connection that held a ping interval was a good one: the next
     * round starts afresh, at once.  One closed sooner (a server that
     * takes the session and drops it, two handles of one session taking
     * it from each other) counts as a failed attempt: a round of them
     * pauses like a round of refusals. */
    if (c->now() - c->opened_at >= c->timeout / 3)
        c->failed_in_round = 0;
    /* Of several hosts, the next: another address of this one is most
     * likely the same server.  One name for all the members (as ZooKeeper's
     * clients take each of its addresses for a server) goes on with its
     * next address: a new lookup would begin again with the one that just
     * failed, and a server that stopped answering takes a connect timeout
     * more, past what is left of the session. */
    if (c->ai != NULL && c->nhosts > 1)
        c->ai_next = NULL;
    tb__next_attempt(c);
}

void tb__conn_failed(struct tb_client *c, const char *why)
{
    tb__conn_fail(c, TB_ECONNECTIONLOSS, why);
}

void tb__conn_fail(struct tb_client *c, int err, const char *why)
{
    tb__log(c, TB_LOG_INFO, "connecting to %s:%s failed: %s",
            c->hosts[c->host_idx].name, c->hosts[c->host_idx].port, why);
    note_failure(c, err, why);
    tb__conn_close_fd(c);
    if (c->closing) {
        tb__finish_close(c);
        return;
    }
    tb__req_fail_queue(c, &c->pendq, TB_ECONNECTIONLOSS);
    tb__req_fail_queue(c, &c->outq, TB_ECONNECTIONLOSS);
    fail_auth_waiters(c, TB_ECONNECTIONLOSS);
    c->phase = PH_BACKOFF;
    tb__next_attempt(c);
}

/* Ends the session.  EXPIRED and AUTH_FAILED are reported first (a lock
 * holder must stop before anything else); CLOSED last, as the handle's
 * final callback. */
void tb__terminate(struct tb_client *c, int state, int rc)
{
    tb__conn_close_fd(c);
    if (state != TB_SESSION_CLOSED)
        tb__set_state(c, state);
    c->phase = PH_DEAD;
    if (c->ai != NULL) {
        freeaddrinfo(c->ai);
        c->ai = c->ai_next = NULL;
    }
    tb__req_fail_queue(c, &c->pendq, rc);
    tb__req_fail_queue(c, &c->outq, rc);
    fail_auth_waiters(c, rc);
    tb__watch_end_all(c, rc);
    if (state == TB_SESSION_CLOSED)
        tb__set_state(c, state);
}

void tb__begin_close(struct tb_client *c)
{
    struct req *r;

    if (c->closing)
        return;
    c->closing = 1;
    c->close_deadline = c->now() + c->o.close_timeout_ms;
    if (c->phase != PH_OPEN) {
        tb__finish_close(c);
        return;
    }
    r = tb__req_new(c, TB_OP_CLOSESESSION, R_INTERNAL);
    if (r == NULL) {
        tb__finish_close(c);
        return;
    }
    tb__req_begin(c, r);
    c->close_req = r;
    /* Not tb__req_submit: that refuses requests once closing. */
    tb_frame_end(&r->fw, 0);
    tb_queue_insert_tail(&c->outq, &r->it.q);
    tb__flush(c);
}

void tb__finish_close(struct tb_client *c)
{
    if (c->closed)
        return;
    c->closed = 1;
    c->closing = 1;
    if (c->close_req != NULL) {
        tb_queue_remove(&c->close_req->it.q);
        tb__req_free(c->close_req);
        c->close_req = NULL;
    }
    tb__terminate(c, TB_SESSION_CLOSED, TB_ECLOSING);
    pthread_cond_broadcast(&c->done_cv);
}
