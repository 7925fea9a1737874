/* tbfail: the failover probes of bench/ensemble.sh, for any ZooKeeper-
 * compatible ensemble (one blocking session at a time, the project's wire
 * codec, no client library in between, so no library's reconnect delay is
 * measured as the servers').
 *
 *   tbfail failover --servers A[,B] --pid PID --signal kill|stop --root R
 *          [--stale LEADER] [--acked FILE] [--timeout-ms 250] [--retry-ms 5]
 *          [--warm-ms 300] [--after-ms 200] [--cont-ms 300] [--max-s 60]
 *       A session on A (a survivor) writes PERSISTENT_SEQUENTIAL nodes R/w-
 *       one after the other, each given --timeout-ms; a failed or late one
 *       drops the connection, and the session is taken up again (its id and
 *       password) on the next of A, B after --retry-ms.  After --warm-ms of
 *       writes, PID (the leader) gets SIGKILL or SIGSTOP; the figure is the
 *       time from that kill(2) to the first acknowledgement of a write sent
 *       after it.  With --signal stop and --stale, a second session,
 *       opened on LEADER before the stop, sends one create R/stale- while
 *       the leader is stopped; PID gets SIGCONT --cont-ms after the first
 *       acknowledged write, and what that session then hears is reported
 *       (ok and the path, an error, the connection closed, or nothing).
 *       Every acknowledged path goes to FILE.
 *   tbfail verify --servers A,B,C --root R --acked FILE
 *       On each server (a new session, sync first): every path in FILE is
 *       among R's children, and how many R/stale-* there are.
 *   tbfail ensemble --servers A,B,C [--timeout-s 60]
 *       Waits until one server's srvr says leader, the others follower,
 *       the followers with the same zxid; prints the leader's number
 *       (1-based).
 *   tbfail rejoin --servers A,B,C --node I --since-us T [--timeout-s 60]
 *       Polls server I's srvr every 5 ms from wall-clock time T (us, e.g.
 *       bash's EPOCHREALTIME before the restart) until it says follower,
 *       another server leads, and its zxid has reached the lowest of the
 *       others' (a ZooKeeper leader's srvr shows its new epoch's zxid,
 *       above the last txn, until it commits one), then until a new
 *       session on it has a write acknowledged (an ephemeral node, gone
 *       with the session); prints the times since T.
 *
 * Results are "RESULT key=value ..." lines on stdout. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/common.h"
#include "proto/proto.h"

#define MAX_SRV   8
#define MAX_FRAME (4 * 1024 * 1024)

struct srv {
    char name[128];
    struct sockaddr_storage ss;
    unsigned len;
};

static struct srv srvs[MAX_SRV];
static int nsrv;

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t wall_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000ull + (uint64_t)ts.tv_nsec / 1000;
}

static double ms_since(uint64_t t0, uint64_t t1)
{
    return ((double)t1 - (double)t0) / 1e6;
}

static void sleep_ms(double ms)
{
    struct timespec ts = {
        (time_t)(ms / 1000),
        (long)((ms - (double)(time_t)(ms / 1000) * 1000) * 1e6)};

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* "host:port" (numeric or by name, [v6]:port) to a socket address. */
static int resolve(const char *hostport, struct sockaddr_storage *ss,
                   unsigned *len)
{
    char host[256];
    const char *colon = strrchr(hostport, ':');
    struct addrinfo hints = {0}, *ai = NULL;
    size_t hl;

    if (colon == NULL || colon == hostport)
        return -1;
    hl = (size_t)(colon - hostport);
    if (hostport[0] == '[' && hl >= 2 && hostport[hl - 1] == ']') {
        hostport++;
        hl -= 2;
    }
    if (hl >= sizeof(host))
        return -1;
    memcpy(host, hostport, hl);
    host[hl] = '\0';
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, colon + 1, &hints, &ai) != 0 || ai == NULL)
        return -1;
    memcpy(ss, ai->ai_addr, ai->ai_addrlen);
    *len = (unsigned)ai->ai_addrlen;
    freeaddrinfo(ai);
    return 0;
}

static int parse_servers(const char *list)
{
    char buf[1024], *save = NULL, *tok;

    snprintf(buf, sizeof(buf), "%s", list);
    nsrv = 0;
    for (tok = strtok_r(buf, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        if (nsrv == MAX_SRV ||
            resolve(tok, &srvs[nsrv].ss, &srvs[nsrv].len) != 0) {
            fprintf(stderr, "tbfail: cannot resolve %s\n", tok);
            return -1;
        }
        snprintf(srvs[nsrv].name, sizeof(srvs[nsrv].name), "%s", tok);
        nsrv++;
    }
    return nsrv > 0 ? 0 : -1;
}

/* ---- one session over one blocking socket ---- */

struct sess {
    int fd;
    int64_t id;
    uint8_t passwd[64];
    size_t passwd_len;
    int32_t timeout_ms;
    int64_t last_zxid;
    int32_t xid;
    uint8_t *in;
    size_t in_len, in_cap, consumed;
};

static void sess_init(struct sess *s, int32_t timeout_ms)
{
    memset(s, 0, sizeof(*s));
    s->fd = -1;
    s->timeout_ms = timeout_ms;
    s->xid = 1;
}

static void sess_drop(struct sess *s)
{
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
    s->in_len = s->consumed = 0;
}

static int remaining_ms(uint64_t deadline)
{
    uint64_t now = now_ns();

    if (now >= deadline)
        return 0;
    return (int)((deadline - now + 999999) / 1000000);
}

static int send_all(int fd, const uint8_t *p, size_t n, uint64_t deadline)
{
    while (n > 0) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k > 0) {
            p += k;
            n -= (size_t)k;
            continue;
        }
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            struct pollfd pf = {fd, POLLOUT, 0};
            if (poll(&pf, 1, remaining_ms(deadline)) <= 0)
                return TB_EOPTIMEOUT;
            continue;
        }
        return TB_ECONNECTIONLOSS;
    }
    return 0;
}

/* The next frame's payload (valid until the next call), or TB_EOPTIMEOUT
 * when none came by `deadline` (0 ms left: only what is already there), or
 * TB_ECONNECTIONLOSS. */
static int read_frame(struct sess *s, uint64_t deadline, struct tb_str *payload)
{
    if (s->consumed > 0) {
        memmove(s->in, s->in + s->consumed, s->in_len - s->consumed);
        s->in_len -= s->consumed;
        s->consumed = 0;
    }
    for (;;) {
        size_t used;
        int rc = tb_frame_split(s->in, s->in_len, MAX_FRAME, payload, &used);
        struct pollfd pf = {s->fd, POLLIN, 0};
        ssize_t k;

        if (rc == 0) {
            s->consumed = used;
            return 0;
        }
        if (rc != TB_EAGAIN)
            return TB_ECONNECTIONLOSS;
        if (s->fd < 0)
            return TB_ECONNECTIONLOSS;
        rc = poll(&pf, 1, remaining_ms(deadline));
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc == 0)
            return TB_EOPTIMEOUT;
        if (s->in_cap - s->in_len < 65536) {
            size_t cap = s->in_cap ? s->in_cap * 2 : 131072;
            uint8_t *b = realloc(s->in, cap);
            if (b == NULL)
                return TB_ENOMEM;
            s->in = b;
            s->in_cap = cap;
        }
        k = recv(s->fd, s->in + s->in_len, s->in_cap - s->in_len, 0);
        if (k < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (k <= 0)
            return TB_ECONNECTIONLOSS;
        s->in_len += (size_t)k;
    }
}

/* Opens a connection to `v` and makes (or takes up again) the session.
 * 0, TB_ESESSIONEXPIRED (the server says the session is gone; the session
 * is forgotten, so the next open makes a new one), or another error. */
static int sess_open(struct sess *s, const struct srv *v, uint64_t deadline)
{
    static const uint8_t zeros[16];
    struct tb_connect_req req = {
        .protocol_version = 0,
        .last_zxid = s->last_zxid,
        .timeout = s->timeout_ms,
        .session_id = s->id,
        .has_readonly = 1,
        .readonly = 0,
    };
    struct tb_connect_resp resp;
    struct tb_wbuf w;
    struct tb_str payload;
    struct tb_rd r;
    size_t start;
    int one = 1, err = 0, rc;
    socklen_t el = sizeof(err);

    sess_drop(s);
    req.passwd = s->id ? (struct tb_str){(const char *)s->passwd, s->passwd_len}
                       : (struct tb_str){(const char *)zeros, sizeof(zeros)};
    s->fd =
        socket(v->ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s->fd < 0)
        return TB_ESYSTEM;
    (void)setsockopt(s->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (connect(s->fd, (const struct sockaddr *)&v->ss, v->len) != 0) {
        struct pollfd pf = {s->fd, POLLOUT, 0};
        if (errno != EINPROGRESS || poll(&pf, 1, remaining_ms(deadline)) <= 0 ||
            getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0 ||
            err != 0) {
            sess_drop(s);
            return err == ECONNREFUSED ? TB_ECONNECTIONLOSS : TB_EOPTIMEOUT;
        }
    }
    tb_wbuf_init(&w);
    start = tb_frame_begin(&w);
    tb_connect_req_encode(&w, &req);
    tb_frame_end(&w, start);
    rc = send_all(s->fd, w.base, w.len, deadline);
    tb_wbuf_free(&w);
    if (rc == 0)
        rc = read_frame(s, deadline, &payload);
    if (rc != 0) {
        sess_drop(s);
        return rc;
    }
    r = tb_rd_make(payload.ptr, payload.len);
    if (tb_connect_resp_decode(&r, &resp) != 0) {
        sess_drop(s);
        return TB_EMARSHALLING;
    }
    if (resp.timeout <= 0) {
        sess_drop(s);
        s->id = 0;
        s->passwd_len = 0;
        return TB_ESESSIONEXPIRED;
    }
    s->id = resp.session_id;
    s->passwd_len = resp.passwd.len < sizeof(s->passwd) ? resp.passwd.len
                                                        : sizeof(s->passwd);
    memcpy(s->passwd, resp.passwd.ptr, s->passwd_len);
    return 0;
}

/* Sends request `op` with the body in `body` (no frame, no header); with
 * `wait`, reads up to its reply (skipping notifications and pings): the
 * reply's err, `*rd` on its body.  Without, 0 once it is sent and the xid
 * in *xid_out. */
static int sess_send(struct sess *s, int32_t op, const struct tb_wbuf *body,
                     uint64_t deadline, int32_t *xid_out)
{
    struct tb_request_header h = {s->xid++, op};
    struct tb_wbuf w;
    size_t start;
    int rc;

    if (s->fd < 0)
        return TB_ECONNECTIONLOSS;
    tb_wbuf_init(&w);
    start = tb_frame_begin(&w);
    tb_request_header_encode(&w, &h);
    if (body->len > 0)
        tb_wbuf_put(&w, body->base, body->len);
    tb_frame_end(&w, start);
    rc = send_all(s->fd, w.base, w.len, deadline);
    tb_wbuf_free(&w);
    *xid_out = h.xid;
    return rc;
}

/* Reads frames until the reply to `xid`: its err, and *rd on its body. */
static int sess_reply(struct sess *s, int32_t xid, uint64_t deadline,
                      struct tb_rd *rd)
{
    for (;;) {
        struct tb_str payload;
        struct tb_reply_header h;
        int rc = read_frame(s, deadline, &payload);

        if (rc != 0)
            return rc;
        *rd = tb_rd_make(payload.ptr, payload.len);
        if (tb_reply_header_decode(rd, &h) != 0)
            return TB_EMARSHALLING;
        if (h.zxid > s->last_zxid)
            s->last_zxid = h.zxid;
        if (h.xid == xid)
            return h.err;
    }
}

static int sess_call(struct sess *s, int32_t op, const struct tb_wbuf *body,
                     uint64_t deadline, struct tb_rd *rd)
{
    int32_t xid;
    int rc = sess_send(s, op, body, deadline, &xid);

    return rc != 0 ? rc : sess_reply(s, xid, deadline, rd);
}

static int send_create(struct sess *s, const char *path, int32_t flags,
                       uint64_t deadline, int32_t *xid)
{
    struct tb_create_req r = {tb_str_c(path), TB_STR("tbfail"),
                              tb_acl_open_unsafe, flags};
    struct tb_wbuf b;
    int rc;

    tb_wbuf_init(&b);
    tb_create_req_encode(&b, &r);
    rc = sess_send(s, TB_OP_CREATE, &b, deadline, xid);
    tb_wbuf_free(&b);
    return rc;
}

/* A create's reply: err, and the path made into `out`. */
static int create_reply(struct tb_rd *rd, int err, char *out, size_t cap)
{
    struct tb_path_resp pr;

    if (err == 0 && out != NULL) {
        if (tb_path_resp_decode(rd, &pr) != 0)
            return TB_EMARSHALLING;
        snprintf(out, cap, "%.*s", (int)pr.path.len, pr.path.ptr);
    }
    return err;
}

static int do_create(struct sess *s, const char *path, int32_t flags,
                     uint64_t deadline, char *out, size_t cap)
{
    int32_t xid;
    struct tb_rd rd;
    int rc = send_create(s, path, flags, deadline, &xid);

    if (rc != 0)
        return rc;
    rc = sess_reply(s, xid, deadline, &rd);
    return create_reply(&rd, rc, out, cap);
}

static int do_path_op(struct sess *s, int32_t op, const char *path,
                      uint64_t deadline, struct tb_rd *rd)
{
    struct tb_wbuf b;
    int rc;

    tb_wbuf_init(&b);
    if (op == TB_OP_SYNC) {
        struct tb_path_req r = {tb_str_c(path)};
        tb_path_req_encode(&b, &r);
    } else {
        struct tb_path_watch_req r = {tb_str_c(path), 0};
        tb_path_watch_req_encode(&b, &r);
    }
    rc = sess_call(s, op, &b, deadline, rd);
    tb_wbuf_free(&b);
    return rc;
}

static void sess_close(struct sess *s, uint64_t deadline)
{
    struct tb_wbuf b;
    struct tb_rd rd;

    if (s->fd >= 0) {
        tb_wbuf_init(&b);
        (void)sess_call(s, TB_OP_CLOSESESSION, &b, deadline, &rd);
        tb_wbuf_free(&b);
    }
    sess_drop(s);
    free(s->in);
    s->in = NULL;
    s->in_cap = 0;
}

/* Opens on server `first`, trying the others in turn, until `deadline`. */
static int sess_open_any(struct sess *s, int first, int n, uint64_t deadline,
                         int *at)
{
    int i = first, rc = TB_EOPTIMEOUT;

    while (now_ns() < deadline) {
        uint64_t d = now_ns() + 2000000000ull;
        rc = sess_open(s, &srvs[i % n], d < deadline ? d : deadline);
        if (rc == 0) {
            if (at != NULL)
                *at = i % n;
            return 0;
        }
        i++;
        sleep_ms(20);
    }
    return rc;
}

/* Opens on server `v` alone, again every 20 ms until `deadline` (a member
 * just started may close new connections until it has a leader link). */
static int sess_open_retry(struct sess *s, const struct srv *v,
                           uint64_t deadline)
{
    int rc;

    for (;;) {
        uint64_t d = now_ns() + 2000000000ull;
        rc = sess_open(s, v, d < deadline ? d : deadline);
        if (rc == 0 || now_ns() >= deadline)
            return rc;
        sleep_ms(20);
    }
}

/* ---- four-letter words ---- */

struct srvr {
    int ok;        /* answered */
    int serving;   /* not "not currently serving requests" */
    char mode[32]; /* leader, follower, standalone, ... or "" */
    uint64_t zxid;
};

static void fourlw(const struct srv *v, const char *cmd, char *out, size_t cap,
                   int timeout_ms)
{
    uint64_t deadline = now_ns() + (uint64_t)timeout_ms * 1000000ull;
    struct sess s;
    size_t n = 0;
    int err = 0;
    socklen_t el = sizeof(err);

    out[0] = '\0';
    sess_init(&s, 0);
    s.fd =
        socket(v->ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s.fd < 0)
        return;
    if (connect(s.fd, (const struct sockaddr *)&v->ss, v->len) != 0) {
        struct pollfd pf = {s.fd, POLLOUT, 0};
        if (errno != EINPROGRESS || poll(&pf, 1, remaining_ms(deadline)) <= 0 ||
            getsockopt(s.fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0 ||
            err != 0) {
            sess_drop(&s);
            return;
        }
    }
    if (send_all(s.fd, (const uint8_t *)cmd, strlen(cmd), deadline) == 0) {
        for (;;) {
            struct pollfd pf = {s.fd, POLLIN, 0};
            ssize_t k;
            if (n + 1 >= cap || poll(&pf, 1, remaining_ms(deadline)) <= 0)
                break;
            k = recv(s.fd, out + n, cap - 1 - n, 0);
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0)
                break;
            n += (size_t)k;
        }
    }
    out[n] = '\0';
    sess_drop(&s);
}

static void srvr(const struct srv *v, struct srvr *r)
{
    char buf[4096];
    const char *p;

    memset(r, 0, sizeof(*r));
    fourlw(v, "srvr", buf, sizeof(buf), 1000);
    if (buf[0] == '\0')
        return;
    r->ok = 1;
    r->serving = strstr(buf, "not currently serving") == NULL;
    if ((p = strstr(buf, "Mode: ")) != NULL)
        sscanf(p + 6, "%31s", r->mode);
    if ((p = strstr(buf, "Zxid: ")) != NULL)
        r->zxid = strtoull(p + 6, NULL, 16);
}

/* ---- failover ---- */

struct fo_opts {
    long pid;
    int stop; /* SIGSTOP rather than SIGKILL */
    const char *root, *stale, *acked;
    double timeout_ms, retry_ms, warm_ms, after_ms, cont_ms, max_s;
};

/* How long the session on the resumed leader is waited for. */
#define STALE_WAIT_S 15

static long stopped_pid; /* SIGCONT owed at exit */

static void cont_owed(void)
{
    if (stopped_pid > 0)
        kill((pid_t)stopped_pid, SIGCONT);
    stopped_pid = 0;
}

static void on_term(int sig)
{
    cont_owed();
    signal(sig, SIG_DFL);
    raise(sig);
}

static int proc_state(long pid)
{
    char path[64], buf[512];
    FILE *f;
    const char *p;

    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    if ((f = fopen(path, "r")) == NULL)
        return 0;
    buf[0] = '\0';
    if (fgets(buf, sizeof(buf), f) == NULL)
        buf[0] = '\0';
    fclose(f);
    p = strrchr(buf, ')');
    return p != NULL && p[1] == ' ' ? p[2] : 0;
}

static int ensure_root(struct sess *s, const char *root)
{
    char buf[512];
    size_t i, n = strlen(root);

    for (i = 1; i <= n && n < sizeof(buf); i++) {
        int rc;
        if (i < n && root[i] != '/')
            continue;
        memcpy(buf, root, i);
        buf[i] = '\0';
        rc =
            do_create(s, buf, TB_PERSISTENT, now_ns() + 5000000000ull, NULL, 0);
        if (rc != 0 && rc != TB_ENODEEXISTS)
            return rc;
    }
    return 0;
}

static int run_failover(const struct fo_opts *o)
{
    struct sess w, st;
    FILE *acked = NULL;
    char wpath[512], spath[512], made[512];
    uint64_t t0, t_sig = 0, t_first = 0, t_cont = 0, t_stale = 0, t_last = 0;
    uint64_t end_max, cont_wall = 0;
    long acks = 0, acks_after = 0, timeouts = 0, losses = 0, other = 0,
         reconnects = 0, expired = 0, errs_after_cont = 0, open_fail = 0;
    int at = 0, rc, stale_sent = 0, stale_done = 0, stale_err = 0;
    int32_t stale_xid = 0;
    char stale_out[600] = "none";

    sess_init(&w, 10000);
    sess_init(&st, 30000);
    snprintf(wpath, sizeof(wpath), "%s/w-", o->root);
    snprintf(spath, sizeof(spath), "%s/stale-", o->root);
    if (o->acked != NULL && (acked = fopen(o->acked, "a")) == NULL) {
        perror(o->acked);
        return 2;
    }
    if (sess_open_any(&w, 0, 1, now_ns() + 20000000000ull, NULL) != 0 ||
        ensure_root(&w, o->root) != 0) {
        fprintf(stderr, "tbfail: cannot write through %s\n", srvs[0].name);
        return 2;
    }
    if (o->stale != NULL) {
        struct srv v;
        snprintf(v.name, sizeof(v.name), "%s", o->stale);
        if (resolve(o->stale, &v.ss, &v.len) != 0 ||
            sess_open(&st, &v, now_ns() + 10000000000ull) != 0) {
            fprintf(stderr, "tbfail: cannot open a session on %s\n", o->stale);
            return 2;
        }
    }
    t0 = now_ns();
    end_max = t0 + (uint64_t)((o->warm_ms / 1e3 + o->max_s) * 1e9);
    for (;;) {
        uint64_t now = now_ns(), sent;
        int32_t xid;
        struct tb_rd rd;

        /* The signal, once warm. */
        if (t_sig == 0 && now >= t0 + (uint64_t)(o->warm_ms * 1e6)) {
            t_sig = now_ns();
            if (kill((pid_t)o->pid, o->stop ? SIGSTOP : SIGKILL) != 0) {
                perror("tbfail: kill");
                return 2;
            }
            if (o->stop) {
                int i;
                stopped_pid = o->pid;
                for (i = 0; i < 200 && proc_state(o->pid) != 'T' &&
                            proc_state(o->pid) != 't';
                     i++)
                    sleep_ms(1);
                if (o->stale != NULL &&
                    send_create(&st, spath, TB_PERSISTENT_SEQUENTIAL,
                                now_ns() + 1000000000ull, &stale_xid) == 0)
                    stale_sent = 1;
                else if (o->stale != NULL)
                    snprintf(stale_out, sizeof(stale_out), "not-sent");
            }
        }
        /* SIGCONT, cont_ms after the first acknowledgement. */
        if (o->stop && t_first != 0 && t_cont == 0 &&
            now >= t_first + (uint64_t)(o->cont_ms * 1e6)) {
            t_cont = now_ns();
            cont_wall = wall_us();
            cont_owed();
        }
        /* What the session on the stopped leader hears. */
        if (stale_sent && !stale_done) {
            rc = sess_reply(&st, stale_xid, t_cont ? now_ns() : 0, &rd);
            if (rc != TB_EOPTIMEOUT) {
                stale_done = 1;
                t_stale = now_ns();
                stale_err = rc;
                if (rc == 0 && create_reply(&rd, 0, made, sizeof(made)) == 0)
                    snprintf(stale_out, sizeof(stale_out), "ok:%s", made);
                else if (rc == TB_ECONNECTIONLOSS)
                    snprintf(stale_out, sizeof(stale_out), "closed");
                else
                    snprintf(stale_out, sizeof(stale_out), "error:%s",
                             tb_errname(rc));
            }
        }
        /* Done? */
        if (now >= end_max)
            break;
        if (t_first != 0 && !o->stop &&
            now >= t_first + (uint64_t)(o->after_ms * 1e6))
            break;
        if (t_first != 0 && o->stop && t_cont != 0 &&
            (stale_done || !stale_sent ||
             now >= t_cont + (uint64_t)(STALE_WAIT_S * 1e9)) &&
            now >= t_cont + (uint64_t)(o->after_ms * 1e6) &&
            now >= (t_stale ? t_stale : t_cont) + 200000000ull)
            break;
        /* One write. */
        if (w.fd < 0) {
            uint64_t d = now_ns() + (uint64_t)(o->timeout_ms * 1e6);
            at = (at + 1) % nsrv;
            reconnects++;
            rc = sess_open(&w, &srvs[at], d);
            if (rc == TB_ESESSIONEXPIRED)
                expired++;
            if (rc != 0) {
                open_fail++;
                if (t_cont)
                    errs_after_cont++;
                sleep_ms(o->retry_ms);
                continue;
            }
        }
        sent = now_ns();
        rc = send_create(&w, wpath, TB_PERSISTENT_SEQUENTIAL,
                         sent + (uint64_t)(o->timeout_ms * 1e6), &xid);
        if (rc == 0)
            rc = sess_reply(&w, xid, sent + (uint64_t)(o->timeout_ms * 1e6),
                            &rd);
        if (rc == 0 && create_reply(&rd, 0, made, sizeof(made)) == 0) {
            uint64_t t = now_ns();
            acks++;
            if (acked != NULL)
                fprintf(acked, "%s\n", made);
            if (t_sig == 0 || sent < t_sig)
                t_last = t;
            if (t_sig != 0 && sent >= t_sig) {
                acks_after++;
                if (t_first == 0)
                    t_first = t;
            }
            continue;
        }
        if (rc == TB_EOPTIMEOUT)
            timeouts++;
        else if (rc == TB_ECONNECTIONLOSS)
            losses++;
        else
            other++;
        if (t_cont)
            errs_after_cont++;
        sess_drop(&w);
        sleep_ms(o->retry_ms);
    }
    cont_owed();
    if (acked != NULL)
        fclose(acked);
    /* Sessions closed, so no expiry moves the zxids during the rejoin. */
    if (w.fd < 0)
        (void)sess_open_any(&w, at, nsrv, now_ns() + 5000000000ull, NULL);
    sess_close(&w, now_ns() + 3000000000ull);
    if (st.id != 0) {
        if (st.fd < 0 || stale_done)
            (void)sess_open_any(&st, 0, nsrv, now_ns() + 5000000000ull, NULL);
        sess_close(&st, now_ns() + 3000000000ull);
    }
    printf("RESULT failover signal=%s first_ack_ms=%.1f last_ack_before_ms=%.1f"
           " acks=%ld acks_after=%ld timeouts=%ld losses=%ld other_errors=%ld"
           " reconnects=%ld open_failures=%ld expired=%ld timeout_ms=%g"
           " retry_ms=%g",
           o->stop ? "stop" : "kill", t_first ? ms_since(t_sig, t_first) : -1.0,
           t_last ? ms_since(t_last, t_sig) : -1.0, acks, acks_after, timeouts,
           losses, other, reconnects, open_fail, expired, o->timeout_ms,
           o->retry_ms);
    if (o->stop)
        printf(" cont_after_ms=%.1f cont_wall_us=%" PRIu64 " stale=%s"
               " stale_err=%d stale_answer_after_cont_ms=%.1f"
               " errors_after_cont=%ld",
               t_cont ? ms_since(t_sig, t_cont) : -1.0, cont_wall, stale_out,
               stale_err, t_stale && t_cont ? ms_since(t_cont, t_stale) : -1.0,
               errs_after_cont);
    printf("\n");
    return t_first ? 0 : 1;
}

/* ---- verify ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_verify(const char *root, const char *acked_file)
{
    int i, bad = 0;

    for (i = 0; i < nsrv; i++) {
        struct sess s;
        struct tb_rd rd;
        struct tb_children_resp cr;
        char **kids = NULL, line[600];
        size_t nk = 0, cap = 0;
        long checked = 0, missing = 0, stale = 0;
        FILE *f;
        int rc;

        sess_init(&s, 10000);
        if ((rc = sess_open_retry(&s, &srvs[i], now_ns() + 10000000000ull)) !=
            0) {
            printf("RESULT verify server=%d error=%s\n", i + 1, tb_errname(rc));
            bad = 1;
            continue;
        }
        (void)do_path_op(&s, TB_OP_SYNC, root, now_ns() + 10000000000ull, &rd);
        rc = do_path_op(&s, TB_OP_GETCHILDREN, root, now_ns() + 10000000000ull,
                        &rd);
        if (rc == 0 && tb_children_resp_decode(&rd, &cr) == 0 &&
            cr.children.n > 0) {
            struct tb_rd it = tb_vec_reader(cr.children);
            struct tb_str c;
            cap = (size_t)cr.children.n;
            kids = calloc(cap, sizeof(*kids));
            while (kids != NULL && nk < cap && tb_vec_next_str(&it, &c) > 0) {
                kids[nk] = strndup(c.ptr, c.len);
                if (strncmp(kids[nk], "stale-", 6) == 0)
                    stale++;
                nk++;
            }
            qsort(kids, nk, sizeof(*kids), cmp_str);
        } else if (rc != 0 && rc != TB_ENONODE) {
            printf("RESULT verify server=%d error=%s\n", i + 1, tb_errname(rc));
            bad = 1;
            sess_close(&s, now_ns() + 3000000000ull);
            continue;
        }
        if ((f = fopen(acked_file, "r")) != NULL) {
            while (fgets(line, sizeof(line), f) != NULL) {
                char *base = strrchr(line, '/'), *key;
                line[strcspn(line, "\n")] = '\0';
                if (base == NULL)
                    continue;
                key = base + 1;
                checked++;
                if (kids == NULL ||
                    bsearch(&key, kids, nk, sizeof(*kids), cmp_str) == NULL) {
                    missing++;
                    if (missing <= 5)
                        fprintf(stderr, "tbfail: server %d: %s missing\n",
                                i + 1, line);
                }
            }
            fclose(f);
        }
        printf("RESULT verify server=%d checked=%ld missing=%ld children=%zu"
               " stale_copies=%ld\n",
               i + 1, checked, missing, nk, stale);
        if (missing)
            bad = 1;
        while (nk > 0)
            free(kids[--nk]);
        free(kids);
        sess_close(&s, now_ns() + 3000000000ull);
    }
    return bad;
}

/* ---- ensemble and rejoin ---- */

static int run_ensemble(double timeout_s)
{
    uint64_t t0 = now_ns(), end = t0 + (uint64_t)(timeout_s * 1e9);
    struct srvr r[MAX_SRV];
    int i;

    do {
        int leader = -1, leaders = 0, followers = 0, same = 1, f0 = -1;
        for (i = 0; i < nsrv; i++) {
            srvr(&srvs[i], &r[i]);
            if (r[i].ok && r[i].serving && strcmp(r[i].mode, "leader") == 0) {
                leader = i;
                leaders++;
            } else if (r[i].ok && r[i].serving &&
                       strcmp(r[i].mode, "follower") == 0) {
                followers++;
                if (f0 < 0)
                    f0 = i;
                else if (r[i].zxid != r[f0].zxid)
                    same = 0;
            }
        }
        if (leaders == 1 && leaders + followers == nsrv && same) {
            printf("%d\n", leader + 1);
            fprintf(stderr,
                    "tbfail: ensemble settled in %.0f ms, server %d "
                    "leads, zxid 0x%" PRIx64 "\n",
                    ms_since(t0, now_ns()), leader + 1, r[leader].zxid);
            return 0;
        }
        sleep_ms(20);
    } while (now_ns() < end);
    for (i = 0; i < nsrv; i++)
        fprintf(stderr, "tbfail: %s: %s %s zxid 0x%" PRIx64 "\n", srvs[i].name,
                r[i].ok ? (r[i].serving ? "serving" : "not serving")
                        : "no answer",
                r[i].mode, r[i].zxid);
    return 1;
}

static int run_rejoin(int node, uint64_t since_us, double timeout_s)
{
    uint64_t t0_ns = now_ns(), t0_us = wall_us();
    uint64_t end = t0_ns + (uint64_t)(timeout_s * 1e9);
    double answer = -1, follower = -1, caught = -1, wrote = -1;
    struct srvr me, other;
    uint64_t lz = 0, target;
    int i, leaders;

    if (node < 1 || node > nsrv)
        return 2;
        /* now_ns() - t0_ns + (t0_us - since_us): ms since the restart */
#define SINCE_MS()                                                             \
    (ms_since(t0_ns, now_ns()) + ((double)t0_us - (double)since_us) / 1e3)
    while (now_ns() < end) {
        srvr(&srvs[node - 1], &me);
        if (me.ok && me.serving && answer < 0)
            answer = SINCE_MS();
        if (me.ok && me.serving && strcmp(me.mode, "follower") == 0) {
            if (follower < 0)
                follower = SINCE_MS();
            /* The others' lowest zxid: a ZooKeeper leader's srvr gives
             * its new epoch's first zxid, above the last txn, until it
             * commits one; its followers give the last txn applied. */
            target = UINT64_MAX;
            leaders = 0;
            for (i = 0; i < nsrv; i++) {
                if (i == node - 1)
                    continue;
                srvr(&srvs[i], &other);
                if (!other.ok)
                    continue;
                if (strcmp(other.mode, "leader") == 0)
                    leaders++;
                if (other.zxid < target)
                    target = other.zxid;
            }
            if (leaders == 1 && me.zxid >= target) {
                caught = SINCE_MS();
                lz = me.zxid;
                break;
            }
        }
        sleep_ms(5);
    }
    /* Then a new session on it, and a write through that session. */
    while (caught >= 0 && now_ns() < end) {
        struct sess w;
        uint64_t d = now_ns() + 250000000ull;
        int rc;

        sess_init(&w, 10000);
        rc = sess_open(&w, &srvs[node - 1], d);
        if (rc == 0)
            rc = do_create(&w, "/tbfail-rejoin-", TB_EPHEMERAL_SEQUENTIAL, d,
                           NULL, 0);
        if (rc == 0) {
            wrote = SINCE_MS();
            sess_close(&w, now_ns() + 1000000000ull);
            break;
        }
        sess_close(&w, now_ns() + 100000000ull);
        sleep_ms(5);
    }
    printf("RESULT rejoin node=%d answer_ms=%.1f follower_ms=%.1f "
           "caught_up_ms=%.1f zxid=0x%" PRIx64 " session_write_ms=%.1f\n",
           node, answer, follower, caught, lz, wrote);
    return caught >= 0 && wrote >= 0 ? 0 : 1;
}

/* ---- command line ---- */

int main(int argc, char **argv)
{
    struct fo_opts fo = {0, 0,   "/tbfail", NULL, NULL, 250,
                         5, 300, 200,       300,  60};
    const char *mode, *servers = NULL, *acked = NULL;
    double timeout_s = 60;
    uint64_t since_us = 0;
    int node = 0, i;

    if (argc < 2) {
        fprintf(stderr, "usage: tbfail failover|verify|ensemble|rejoin "
                        "[options] (see bench/tbfail.c)\n");
        return 2;
    }
    mode = argv[1];
    for (i = 2; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        if (strcmp(k, "--servers") == 0)
            servers = v;
        else if (strcmp(k, "--pid") == 0)
            fo.pid = atol(v);
        else if (strcmp(k, "--signal") == 0)
            fo.stop = strcmp(v, "stop") == 0;
        else if (strcmp(k, "--root") == 0)
            fo.root = v;
        else if (strcmp(k, "--stale") == 0)
            fo.stale = v;
        else if (strcmp(k, "--acked") == 0)
            acked = fo.acked = v;
        else if (strcmp(k, "--timeout-ms") == 0)
            fo.timeout_ms = atof(v);
        else if (strcmp(k, "--retry-ms") == 0)
            fo.retry_ms = atof(v);
        else if (strcmp(k, "--warm-ms") == 0)
            fo.warm_ms = atof(v);
        else if (strcmp(k, "--after-ms") == 0)
            fo.after_ms = atof(v);
        else if (strcmp(k, "--cont-ms") == 0)
            fo.cont_ms = atof(v);
        else if (strcmp(k, "--max-s") == 0)
            fo.max_s = atof(v);
        else if (strcmp(k, "--timeout-s") == 0)
            timeout_s = atof(v);
        else if (strcmp(k, "--node") == 0)
            node = atoi(v);
        else if (strcmp(k, "--since-us") == 0)
            since_us = strtoull(v, NULL, 10);
        else {
            fprintf(stderr, "tbfail: unknown option %s\n", k);
            return 2;
        }
    }
    if (i != argc || servers == NULL || parse_servers(servers) != 0) {
        fprintf(stderr, "tbfail: options come in pairs; --servers is needed\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    signal(SIGTERM, on_term);
    signal(SIGINT, on_term);
    if (strcmp(mode, "failover") == 0) {
        if (fo.pid <= 0)
            return 2;
        return run_failover(&fo);
    }
    if (strcmp(mode, "verify") == 0 && acked != NULL)
        return run_verify(fo.root, acked);
    if (strcmp(mode, "ensemble") == 0)
        return run_ensemble(timeout_s);
    if (strcmp(mode, "rejoin") == 0)
        return run_rejoin(node, since_us ? since_us : wall_us(), timeout_s);
    fprintf(stderr, "tbfail: unknown mode %s\n", mode);
    return 2;
}
