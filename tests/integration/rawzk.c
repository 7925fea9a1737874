/* rawzk: blocking raw-socket ZooKeeper client for protocol tests (see rawzk.h). */
#include "rawzk.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define RZ_WAIT_MS 10000           /* default bound for a reply */
/* Refuse absurd lengths from a broken server. */
#define RZ_MAX_FRAME (128u << 20)

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* --- writer --------------------------------------------------------------------------- */

void rz_w_free(struct rz_w *w)
{
    free(w->p);
    w->p = NULL;
    w->len = w->cap = 0;
}

void rz_w_raw(struct rz_w *w, const void *p, size_t n)
{
    if (w->len + n > w->cap) {
        size_t cap = w->cap ? w->cap : 256;
        while (cap < w->len + n)
            cap *= 2;
        unsigned char *np = realloc(w->p, cap);
        if (np == NULL)
            abort();
        w->p = np;
        w->cap = cap;
    }
    if (n > 0)
        memcpy(w->p + w->len, p, n);
    w->len += n;
}

void rz_w_i32(struct rz_w *w, int32_t v)
{
    uint32_t u = (uint32_t)v;
    unsigned char b[4] = {(unsigned char)(u >> 24), (unsigned char)(u >> 16),
                          (unsigned char)(u >> 8), (unsigned char)u};
    rz_w_raw(w, b, 4);
}

void rz_w_i64(struct rz_w *w, int64_t v)
{
    rz_w_i32(w, (int32_t)((uint64_t)v >> 32));
    rz_w_i32(w, (int32_t)((uint64_t)v & 0xffffffffu));
}

void rz_w_bool(struct rz_w *w, int v)
{
    unsigned char b = v ? 1 : 0;
    rz_w_raw(w, &b, 1);
}

void rz_w_str(struct rz_w *w, const char *s)
{
    if (s == NULL) {
        rz_w_i32(w, -1);
        return;
    }
    size_t n = strlen(s);
    rz_w_i32(w, (int32_t)n);
    rz_w_raw(w, s, n);
}

void rz_w_buf(struct rz_w *w, const void *p, int32_t n)
{
    rz_w_i32(w, n < 0 ? -1 : n);
    if (n > 0)
        rz_w_raw(w, p, (size_t)n);
}

void rz_w_acl_open(struct rz_w *w)
{
    rz_w_i32(w, 1);
    rz_w_i32(w, 31);
    rz_w_str(w, "world");
    rz_w_str(w, "anyone");
}

void rz_w_strvec(struct rz_w *w, const char *const *v, int n)
{
    rz_w_i32(w, n);
    for (int i = 0; i < n; i++)
        rz_w_str(w, v[i]);
}

/* --- reader --------------------------------------------------------------------------- */

static const unsigned char *take(struct rz_r *r, size_t n)
{
    if (r->bad || (size_t)(r->end - r->p) < n) {
        r->bad = 1;
        return NULL;
    }
    const unsigned char *q = r->p;
    r->p += n;
    return q;
}

int32_t rz_r_i32(struct rz_r *r)
{
    const unsigned char *b = take(r, 4);
    if (b == NULL)
        return 0;
    return (int32_t)((uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 |
                     (uint32_t)b[3]);
}

int64_t rz_r_i64(struct rz_r *r)
{
    uint64_t hi = (uint32_t)rz_r_i32(r);
    uint64_t lo = (uint32_t)rz_r_i32(r);
    return (int64_t)(hi << 32 | lo);
}

int rz_r_bool(struct rz_r *r)
{
    const unsigned char *b = take(r, 1);
    return b != NULL && *b != 0;
}

int32_t rz_r_str(struct rz_r *r, char *out, size_t cap)
{
    int32_t n = rz_r_i32(r);
    if (out != NULL && cap > 0)
        out[0] = '\0';
    if (r->bad || n < 0) {
        if (n < -1)
            r->bad = 1;
        return -1;
    }
    const unsigned char *b = take(r, (size_t)n);
    if (b == NULL)
        return -1;
    if (out != NULL && cap > 0) {
        size_t c = (size_t)n < cap - 1 ? (size_t)n : cap - 1;
        memcpy(out, b, c);
        out[c] = '\0';
    }
    return n;
}

size_t rz_r_left(const struct rz_r *r)
{
    return (size_t)(r->end - r->p);
}

void rz_r_stat(struct rz_r *r, struct rz_stat *s)
{
    struct rz_stat t;
    t.czxid = rz_r_i64(r);
    t.mzxid = rz_r_i64(r);
    t.ctime = rz_r_i64(r);
    t.mtime = rz_r_i64(r);
    t.version = rz_r_i32(r);
    t.cversion = rz_r_i32(r);
    t.aversion = rz_r_i32(r);
    t.ephemeral_owner = rz_r_i64(r);
    t.data_length = rz_r_i32(r);
    t.num_children = rz_r_i32(r);
    t.pzxid = rz_r_i64(r);
    if (s != NULL)
        *s = t;
}

static int cmpstr(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int rz_r_strvec_joined(struct rz_r *r, char *out, size_t cap)
{
    int32_t n = rz_r_i32(r);
    out[0] = '\0';
    if (r->bad || n < 0 || n > 10000)
        return -1;
    char (*v)[1024] = calloc((size_t)n + 1, sizeof *v);
    char **ptrs = calloc((size_t)n + 1, sizeof *ptrs);
    if (v == NULL || ptrs == NULL) {
        free(v);
        free(ptrs);
        return -1;
    }
    for (int32_t i = 0; i < n && !r->bad; i++) {
        rz_r_str(r, v[i], sizeof v[i]);
        ptrs[i] = v[i];
    }
    if (!r->bad) {
        qsort(ptrs, (size_t)n, sizeof *ptrs, cmpstr);
        size_t used = 0;
        for (int32_t i = 0; i < n; i++)
            used += (size_t)snprintf(out + used, used < cap ? cap - used : 0, "%s%s",
                                     i ? "," : "", ptrs[i]);
    }
    free(v);
    free(ptrs);
    return r->bad ? -1 : 0;
}

/* --- transport ------------------------------------------------------------------------ */

void rz_init(struct rz *z)
{
    memset(z, 0, sizeof *z);
    z->fd = -1;
    z->next_xid = 1;
}

int rz_dial(struct rz *z, const char *hostport)
{
    char host[256];
    rz_drop(z); /* a handle is reusable: forget any previous connection */
    const char *colon = strrchr(hostport, ':');
    if (colon == NULL || (size_t)(colon - hostport) >= sizeof host)
        return -1;
    memcpy(host, hostport, (size_t)(colon - hostport));
    host[colon - hostport] = '\0';
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, colon + 1, &hints, &res) != 0 || res == NULL)
        return -1;
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, res->ai_addr, res->ai_addrlen) != 0) {
        if (fd >= 0)
            close(fd);
        freeaddrinfo(res);
        return -1;
    }
    freeaddrinfo(res);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    z->fd = fd;
    z->in_len = 0;
    z->ev_count = 0;
    return 0;
}

int rz_send(struct rz *z, const void *p, size_t n)
{
    const unsigned char *b = p;
    while (n > 0) {
        ssize_t k = send(z->fd, b, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        b += k;
        n -= (size_t)k;
    }
    return 0;
}

int rz_send_frame(struct rz *z, const void *p, size_t n)
{
    struct rz_w w = {0};
    rz_w_i32(&w, (int32_t)n);
    rz_w_raw(&w, p, n);
    int rc = rz_send(z, w.p, w.len);
    rz_w_free(&w);
    return rc;
}

/* Read more bytes into the input buffer.  1: got some; 0: timeout; -1: closed. */
static int fill(struct rz *z, int wait_ms)
{
    if (z->fd < 0)
        return -1;
    struct pollfd pfd = {z->fd, POLLIN, 0};
    int pr;
    do {
        pr = poll(&pfd, 1, wait_ms < 0 ? 0 : wait_ms);
    } while (pr < 0 && errno == EINTR);
    if (pr == 0)
        return 0;
    if (pr < 0)
        return -1;
    if (z->in_cap - z->in_len < 65536) {
        size_t cap = z->in_cap ? z->in_cap * 2 : 131072;
        unsigned char *np = realloc(z->in, cap);
        if (np == NULL)
            return -1;
        z->in = np;
        z->in_cap = cap;
    }
    ssize_t k;
    do {
        k = recv(z->fd, z->in + z->in_len, z->in_cap - z->in_len, 0);
    } while (k < 0 && errno == EINTR);
    if (k <= 0)
        return -1;
    z->in_len += (size_t)k;
    return 1;
}

int rz_recv_frame(struct rz *z, int wait_ms)
{
    int64_t deadline = now_ms() + wait_ms;
    for (;;) {
        if (z->in_len >= 4) {
            uint32_t n = (uint32_t)z->in[0] << 24 | (uint32_t)z->in[1] << 16 |
                         (uint32_t)z->in[2] << 8 | z->in[3];
            if (n > RZ_MAX_FRAME)
                return -1;
            if (z->in_len >= 4 + (size_t)n) {
                free(z->frame);
                z->frame = malloc(n ? n : 1);
                if (z->frame == NULL)
                    return -1;
                memcpy(z->frame, z->in + 4, n);
                z->frame_len = n;
                memmove(z->in, z->in + 4 + n, z->in_len - 4 - n);
                z->in_len -= 4 + (size_t)n;
                return 1;
            }
        }
        int left = (int)(deadline - now_ms());
        if (left <= 0)
            return 0;
        int f = fill(z, left);
        if (f <= 0)
            return f;
    }
}

int rz_four_letter(const char *hostport, const char *word, char *out, size_t cap)
{
    return rz_four_letter_n(hostport, word, 4, out, cap);
}

int rz_four_letter_n(const char *hostport, const void *bytes, size_t n,
                     char *out, size_t cap)
{
    struct rz z;
    size_t used = 0;
    int64_t deadline = now_ms() + 5000;

    rz_init(&z);
    if (rz_dial(&z, hostport) != 0)
        return -1;
    if (rz_send(&z, bytes, n) != 0) {
        rz_drop(&z);
        return -1;
    }
    while (used + 1 < cap) {
        struct pollfd pfd = {z.fd, POLLIN, 0};
        int left = (int)(deadline - now_ms());
        ssize_t k;
        if (left <= 0 || poll(&pfd, 1, left) <= 0)
            break;
        if ((k = recv(z.fd, out + used, cap - 1 - used, 0)) <= 0)
            break;
        used += (size_t)k;
    }
    out[used] = '\0';
    rz_drop(&z);
    return (int)used;
}

int rz_expect_close(struct rz *z, int wait_ms)
{
    int64_t deadline = now_ms() + wait_ms;
    for (;;) {
        if (z->in_len > 0)
            return -1;
        int left = (int)(deadline - now_ms());
        if (left <= 0)
            return 0;
        int f = fill(z, left);
        if (f < 0)
            return 1;
        if (f == 0)
            return 0;
    }
}

static void frame_reader(const struct rz *z, struct rz_r *r)
{
    r->p = z->frame;
    r->end = z->frame + z->frame_len;
    r->bad = 0;
}

int rz_hello(struct rz *z, const struct rz_hello *h)
{
    static const unsigned char zeros[16];
    struct rz_w w = {0};
    rz_w_i32(&w, h->protocol);
    rz_w_i64(&w, h->last_zxid);
    rz_w_i32(&w, h->timeout);
    rz_w_i64(&w, h->sid);
    rz_w_buf(&w, h->pw ? h->pw : zeros, 16);
    if (h->readonly >= 0)
        rz_w_bool(&w, h->readonly);
    int rc = rz_send_frame(z, w.p, w.len);
    rz_w_free(&w);
    if (rc != 0 || rz_recv_frame(z, RZ_WAIT_MS) != 1)
        return -1;
    struct rz_r r;
    frame_reader(z, &r);
    z->connect_len = (int32_t)z->frame_len;
    (void)rz_r_i32(&r); /* protocolVersion */
    z->timeout = rz_r_i32(&r);
    z->sid = rz_r_i64(&r);
    char pw[64];
    int32_t pwlen = rz_r_str(&r, pw, sizeof pw);
    if (r.bad)
        return -1;
    if (pwlen == 16)
        memcpy(z->pw, pw, 16);
    if (h->last_zxid > z->last_zxid)
        z->last_zxid = h->last_zxid;
    return z->timeout > 0 ? 1 : 0;
}

int rz_open(struct rz *z, const char *hostport, int32_t timeout_ms)
{
    struct rz_hello h = {0, z->last_zxid, timeout_ms, 0, NULL, 0};
    if (rz_dial(z, hostport) != 0)
        return -1;
    if (rz_hello(z, &h) != 1) {
        rz_drop(z);
        return -1;
    }
    return 0;
}

void rz_drop(struct rz *z)
{
    if (z->fd >= 0)
        close(z->fd);
    z->fd = -1;
    z->in_len = 0;
    free(z->in);
    z->in = NULL;
    z->in_cap = 0;
    free(z->frame);
    z->frame = NULL;
    z->frame_len = 0;
}

void rz_close(struct rz *z)
{
    if (z->fd >= 0) {
        struct rz_reply rep;
        if (rz_send_req(z, z->next_xid++, RZ_OP_CLOSE, NULL) == 0)
            (void)rz_read_reply(z, &rep, 3000);
    }
    rz_drop(z);
}

int rz_send_req(struct rz *z, int32_t xid, int32_t type, const struct rz_w *body)
{
    struct rz_w w = {0};
    rz_w_i32(&w, xid);
    rz_w_i32(&w, type);
    if (body != NULL)
        rz_w_raw(&w, body->p, body->len);
    int rc = rz_send_frame(z, w.p, w.len);
    rz_w_free(&w);
    return rc;
}

static void queue_event(struct rz *z, int64_t zxid, struct rz_r *r)
{
    struct rz_event e;
    e.zxid = zxid;
    e.type = rz_r_i32(r);
    e.state = rz_r_i32(r);
    rz_r_str(r, e.path, sizeof e.path);
    if (z->ev_count < RZ_MAXEV) {
        z->ev[(z->ev_head + z->ev_count) % RZ_MAXEV] = e;
        z->ev_count++;
    }
}

int rz_read_reply(struct rz *z, struct rz_reply *rep, int wait_ms)
{
    int64_t deadline = now_ms() + wait_ms;
    for (;;) {
        int left = (int)(deadline - now_ms());
        if (left < 0 || rz_recv_frame(z, left) != 1)
            return -1;
        struct rz_r r;
        frame_reader(z, &r);
        rep->xid = rz_r_i32(&r);
        rep->zxid = rz_r_i64(&r);
        rep->err = rz_r_i32(&r);
        rep->len = z->frame_len;
        rep->body = r;
        if (r.bad)
            return -1;
        if (rep->xid == -1) {
            queue_event(z, rep->zxid, &r);
            continue;
        }
        if (rep->zxid > z->last_zxid)
            z->last_zxid = rep->zxid;
        return 0;
    }
}

int rz_call(struct rz *z, int32_t type, const struct rz_w *body, struct rz_reply *rep)
{
    int32_t xid = z->next_xid++;
    if (rz_send_req(z, xid, type, body) != 0)
        return -1;
    if (rz_read_reply(z, rep, RZ_WAIT_MS) != 0)
        return -1;
    return rep->xid == xid ? 0 : -1;
}

int rz_next_event(struct rz *z, int wait_ms, struct rz_event *ev)
{
    int64_t deadline = now_ms() + wait_ms;
    while (z->ev_count == 0) {
        int left = (int)(deadline - now_ms());
        if (left <= 0)
            return 0;
        int f = rz_recv_frame(z, left);
        if (f == 0)
            return 0;
        if (f < 0)
            return -1;
        struct rz_r r;
        frame_reader(z, &r);
        int32_t xid = rz_r_i32(&r);
        int64_t zxid = rz_r_i64(&r);
        (void)rz_r_i32(&r);
        if (xid != -1 || r.bad)
            return -1;
        queue_event(z, zxid, &r);
    }
    *ev = z->ev[z->ev_head];
    z->ev_head = (z->ev_head + 1) % RZ_MAXEV;
    z->ev_count--;
    return 1;
}

int rz_pending_events(const struct rz *z)
{
    return z->ev_count;
}

/* --- convenience calls ----------------------------------------------------------------- */

int rz_create(struct rz *z, int32_t op, const char *path, const char *data, int32_t dlen,
              int32_t flags, int64_t ttl, char *out, size_t cap, struct rz_stat *st)
{
    struct rz_w w = {0};
    struct rz_reply rep;
    rz_w_str(&w, path);
    rz_w_buf(&w, data, dlen);
    rz_w_acl_open(&w);
    rz_w_i32(&w, flags);
    if (op == RZ_OP_CREATETTL)
        rz_w_i64(&w, ttl);
    int rc = rz_call(z, op, &w, &rep);
    rz_w_free(&w);
    if (rc != 0)
        return RZ_ETRANSPORT;
    if (rep.err == 0) {
        rz_r_str(&rep.body, out, cap);
        if (op != RZ_OP_CREATE)
            rz_r_stat(&rep.body, st);
    }
    return rep.err;
}

int rz_delete(struct rz *z, const char *path, int32_t version)
{
    struct rz_w w = {0};
    struct rz_reply rep;
    rz_w_str(&w, path);
    rz_w_i32(&w, version);
    int rc = rz_call(z, RZ_OP_DELETE, &w, &rep);
    rz_w_free(&w);
    return rc != 0 ? RZ_ETRANSPORT : rep.err;
}

static int path_watch_call(struct rz *z, int32_t op, const char *path, int watch,
                           struct rz_reply *rep)
{
    struct rz_w w = {0};
    rz_w_str(&w, path);
    rz_w_bool(&w, watch);
    int rc = rz_call(z, op, &w, rep);
    rz_w_free(&w);
    return rc != 0 ? RZ_ETRANSPORT : rep->err;
}

int rz_exists(struct rz *z, const char *path, int watch, struct rz_stat *st)
{
    struct rz_reply rep;
    int err = path_watch_call(z, RZ_OP_EXISTS, path, watch, &rep);
    if (err == 0)
        rz_r_stat(&rep.body, st);
    return err;
}

int rz_get(struct rz *z, const char *path, int watch, struct rz_stat *st)
{
    struct rz_reply rep;
    int err = path_watch_call(z, RZ_OP_GETDATA, path, watch, &rep);
    if (err == 0) {
        rz_r_str(&rep.body, NULL, 0);
        rz_r_stat(&rep.body, st);
    }
    return err;
}

int rz_set(struct rz *z, const char *path, const char *data, int32_t dlen, int32_t version,
           struct rz_stat *st)
{
    struct rz_w w = {0};
    struct rz_reply rep;
    rz_w_str(&w, path);
    rz_w_buf(&w, data, dlen);
    rz_w_i32(&w, version);
    int rc = rz_call(z, RZ_OP_SETDATA, &w, &rep);
    rz_w_free(&w);
    if (rc != 0)
        return RZ_ETRANSPORT;
    if (rep.err == 0)
        rz_r_stat(&rep.body, st);
    return rep.err;
}

int rz_children(struct rz *z, const char *path, int watch, char *out, size_t cap)
{
    struct rz_reply rep;
    int err = path_watch_call(z, RZ_OP_GETCHILDREN, path, watch, &rep);
    if (out != NULL && cap > 0)
        out[0] = '\0';
    if (err == 0 && out != NULL && rz_r_strvec_joined(&rep.body, out, cap) != 0)
        return RZ_ETRANSPORT;
    return err;
}

int rz_add_watch(struct rz *z, const char *path, int32_t mode)
{
    struct rz_w w = {0};
    struct rz_reply rep;
    rz_w_str(&w, path);
    rz_w_i32(&w, mode);
    int rc = rz_call(z, RZ_OP_ADDWATCH, &w, &rep);
    rz_w_free(&w);
    return rc != 0 ? RZ_ETRANSPORT : rep.err;
}

int rz_auth(struct rz *z, const char *scheme, const char *cred)
{
    struct rz_w w = {0};
    struct rz_reply rep;
    rz_w_i32(&w, 0);
    rz_w_str(&w, scheme);
    rz_w_buf(&w, cred, (int32_t)strlen(cred));
    int rc = rz_send_req(z, -4, RZ_OP_AUTH, &w);
    rz_w_free(&w);
    if (rc != 0 || rz_read_reply(z, &rep, RZ_WAIT_MS) != 0 || rep.xid != -4)
        return RZ_ETRANSPORT;
    return rep.err;
}

int rz_ping_read(struct rz *z, int64_t *zxid)
{
    struct rz_reply rep;
    int err = path_watch_call(z, RZ_OP_EXISTS, "/", 0, &rep);
    if (zxid != NULL)
        *zxid = err == RZ_ETRANSPORT ? -1 : rep.zxid;
    return err;
}

const char *rz_event_name(int32_t type)
{
    switch (type) {
    case 1:
        return "NodeCreated";
    case 2:
        return "NodeDeleted";
    case 3:
        return "NodeDataChanged";
    case 4:
        return "NodeChildrenChanged";
    default:
        return "Unknown";
    }
}
