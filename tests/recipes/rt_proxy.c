/* A TCP proxy between a test's client and the server, which the test can
 * cut at an exact point of the protocol: right after a request with a
 * given opcode went to the server (so the server applies it but the reply
 * never reaches the client: "connection lost during create"), or right
 * before it (the request is never applied).  It can also hold a request
 * (and what follows it on its connection) while the test changes the tree
 * under it, then let it go on.
 *
 * One thread, poll(), blocking writes (loopback, small frames).  Client to
 * server bytes are split into frames (4-byte big-endian length); the
 * first frame of a connection is the handshake, every later one starts
 * with xid and opcode.  After a forwarding cut the server side is kept
 * open a moment (its replies discarded) so the server reads the request
 * before it sees the connection close. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rt.h"

#define MAXPAIRS 64
#define DRAIN_MS 300

struct pair {
    int cfd, sfd;
    int64_t drain_until; /* cfd closed; sfd closes then */
    int handshake_seen;
    uint8_t buf[1 << 16];
    size_t len;
};

struct rt_proxy {
    int lfd, port, target;
    int wake[2];
    pthread_t th;
    pthread_mutex_t mu;
    int stop;
    int cut_op, cut_forward, cut_refuse_ms, cut_armed;
    int cut_all, cut_all_refuse_ms;
    int hold_op, hold_skip, hold_armed, hold_release;
    struct pair *held; /* its client bytes wait, from the held frame on */
    int64_t refuse_until;
    int cuts;
    struct pair *pairs[MAXPAIRS];
    int npairs;
};

static int write_all(int fd, const void *p, size_t n)
{
    const uint8_t *b = p;

    while (n > 0) {
        ssize_t w = write(fd, b, n);
        if (w <= 0)
            return -1;
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

static void pair_close(struct rt_proxy *p, int i)
{
    struct pair *x = p->pairs[i];

    if (p->held == x)
        p->held = NULL;
    if (x->cfd >= 0)
        close(x->cfd);
    if (x->sfd >= 0)
        close(x->sfd);
    free(x);
    p->pairs[i] = p->pairs[--p->npairs];
}

static void cut(struct rt_proxy *p, struct pair *x, int drain, int refuse_ms)
{
    shutdown(x->cfd, SHUT_RDWR);
    close(x->cfd);
    x->cfd = -1;
    x->drain_until = rt_now_ms() + (drain ? DRAIN_MS : 0);
    p->cuts++;
    p->refuse_until = rt_now_ms() + refuse_ms;
}

static int connect_target(int port)
{
    struct sockaddr_in a;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

static void on_accept(struct rt_proxy *p)
{
    int fd = accept4(p->lfd, NULL, NULL, SOCK_CLOEXEC);
    struct pair *x;

    if (fd < 0)
        return;
    if (rt_now_ms() < p->refuse_until || p->npairs == MAXPAIRS) {
        close(fd);
        return;
    }
    x = calloc(1, sizeof *x);
    CHECK(x != NULL);
    x->cfd = fd;
    x->sfd = connect_target(p->target);
    if (x->sfd < 0) {
        close(fd);
        free(x);
        return;
    }
    p->pairs[p->npairs++] = x;
}

static uint32_t be32(const uint8_t *b)
{
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 |
           b[3];
}

/* Forwards the whole frames in the pair's buffer, cutting or holding
 * where armed.  Returns -1 if the pair is done. */
static int forward_frames(struct rt_proxy *p, struct pair *x)
{
    size_t off = 0;

    while (x->len - off >= 4) {
        size_t flen = 4 + be32(x->buf + off);
        int op;
        if (flen > sizeof x->buf)
            return -1;
        if (x->len - off < flen)
            break;
        op = x->handshake_seen && flen >= 12 ? (int)be32(x->buf + off + 8) : -1;
        x->handshake_seen = 1;
        pthread_mutex_lock(&p->mu);
        if (p->hold_armed && op == p->hold_op && p->hold_skip-- == 0) {
            p->hold_armed = 0;
            p->held = x;
            pthread_mutex_unlock(&p->mu);
            break;
        }
        if (p->cut_armed && op == p->cut_op) {
            int fwd = p->cut_forward;
            p->cut_armed = 0;
            if (fwd)
                write_all(x->sfd, x->buf + off, flen);
            cut(p, x, fwd, p->cut_refuse_ms);
            pthread_mutex_unlock(&p->mu);
            return 0;
        }
        pthread_mutex_unlock(&p->mu);
        if (write_all(x->sfd, x->buf + off, flen) != 0)
            return -1;
        off += flen;
    }
    memmove(x->buf, x->buf + off, x->len - off);
    x->len -= off;
    return 0;
}

/* The held frame goes on as it is (a hold armed meanwhile is for later
 * ones), then whatever came after it. */
static int forward_held(struct rt_proxy *p, struct pair *x)
{
    size_t flen = 4 + be32(x->buf);

    if (write_all(x->sfd, x->buf, flen) != 0)
        return -1;
    memmove(x->buf, x->buf + flen, x->len - flen);
    x->len -= flen;
    return forward_frames(p, x);
}

/* Client bytes.  Returns -1 if the pair is done. */
static int from_client(struct rt_proxy *p, struct pair *x)
{
    ssize_t n = read(x->cfd, x->buf + x->len, sizeof x->buf - x->len);

    if (n <= 0)
        return -1;
    x->len += (size_t)n;
    return forward_frames(p, x);
}

static int from_server(struct pair *x)
{
    uint8_t b[65536];
    ssize_t n = read(x->sfd, b, sizeof b);

    if (n <= 0)
        return -1;
    if (x->cfd < 0)
        return 0; /* draining: the client must not see it */
    return write_all(x->cfd, b, (size_t)n);
}

static void *proxy_main(void *arg)
{
    struct rt_proxy *p = arg;

    for (;;) {
        struct pollfd f[2 + 2 * MAXPAIRS];
        int owner[2 + 2 * MAXPAIRS], nf = 0, i;
        int64_t now = rt_now_ms();
        struct pair *held, *released = NULL;

        pthread_mutex_lock(&p->mu);
        if (p->stop) {
            pthread_mutex_unlock(&p->mu);
            break;
        }
        if (p->cut_all) {
            p->cut_all = 0;
            for (i = 0; i < p->npairs; i++)
                if (p->pairs[i]->cfd >= 0)
                    cut(p, p->pairs[i], 0, p->cut_all_refuse_ms);
        }
        if (p->hold_release) {
            p->hold_release = 0;
            released = p->held;
            p->held = NULL;
        }
        pthread_mutex_unlock(&p->mu);
        for (i = 0; released != NULL && i < p->npairs; i++)
            if (p->pairs[i] == released && forward_held(p, released) != 0)
                pair_close(p, i);
        pthread_mutex_lock(&p->mu);
        held = p->held;
        pthread_mutex_unlock(&p->mu);
        for (i = p->npairs - 1; i >= 0; i--)
            if (p->pairs[i]->cfd < 0 && now >= p->pairs[i]->drain_until)
                pair_close(p, i);
        f[nf] = (struct pollfd){p->lfd, POLLIN, 0};
        owner[nf++] = -1;
        f[nf] = (struct pollfd){p->wake[0], POLLIN, 0};
        owner[nf++] = -2;
        for (i = 0; i < p->npairs; i++) {
            if (p->pairs[i]->cfd >= 0 && p->pairs[i] != held) {
                f[nf] = (struct pollfd){p->pairs[i]->cfd, POLLIN, 0};
                owner[nf++] = 2 * i;
            }
            f[nf] = (struct pollfd){p->pairs[i]->sfd, POLLIN, 0};
            owner[nf++] = 2 * i + 1;
        }
        if (poll(f, (nfds_t)nf, 50) <= 0)
            continue;
        if (f[1].revents) {
            char b[64];
            ssize_t r = read(p->wake[0], b, sizeof b);
            (void)r;
        }
        /* Pairs first (indexes stay valid), closing the dead ones after. */
        {
            int dead[MAXPAIRS] = {0};
            for (i = 2; i < nf; i++) {
                struct pair *x = p->pairs[owner[i] / 2];
                if (!f[i].revents || dead[owner[i] / 2])
                    continue;
                if (owner[i] % 2 == 0 ? (x->cfd >= 0 && from_client(p, x))
                                      : from_server(x))
                    dead[owner[i] / 2] = 1;
            }
            for (i = p->npairs - 1; i >= 0; i--)
                if (dead[i])
                    pair_close(p, i);
        }
        if (f[0].revents)
            on_accept(p);
    }
    while (p->npairs > 0)
        pair_close(p, 0);
    return NULL;
}

struct rt_proxy *rt_proxy_start(int port)
{
    struct rt_proxy *p = calloc(1, sizeof *p);
    struct sockaddr_in a;
    socklen_t al = sizeof a;
    int one = 1;

    CHECK(p != NULL);
    p->target = port;
    pthread_mutex_init(&p->mu, NULL);
    CHECK(pipe(p->wake) == 0);
    p->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK(p->lfd >= 0);
    setsockopt(p->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(bind(p->lfd, (struct sockaddr *)&a, sizeof a) == 0);
    CHECK(listen(p->lfd, 64) == 0);
    CHECK(getsockname(p->lfd, (struct sockaddr *)&a, &al) == 0);
    p->port = ntohs(a.sin_port);
    CHECK(pthread_create(&p->th, NULL, proxy_main, p) == 0);
    return p;
}

int rt_proxy_port(struct rt_proxy *p)
{
    return p->port;
}

static void wake(struct rt_proxy *p)
{
    ssize_t r = write(p->wake[1], "x", 1);
    (void)r;
}

void rt_proxy_cut_on(struct rt_proxy *p, int op, int forward, int refuse_ms)
{
    pthread_mutex_lock(&p->mu);
    p->cut_op = op;
    p->cut_forward = forward;
    p->cut_refuse_ms = refuse_ms;
    p->cut_armed = 1;
    pthread_mutex_unlock(&p->mu);
}

void rt_proxy_cut_all(struct rt_proxy *p, int refuse_ms)
{
    pthread_mutex_lock(&p->mu);
    p->cut_all = 1;
    p->cut_all_refuse_ms = refuse_ms;
    pthread_mutex_unlock(&p->mu);
    wake(p);
}

void rt_proxy_hold_on(struct rt_proxy *p, int op, int skip)
{
    pthread_mutex_lock(&p->mu);
    p->hold_op = op;
    p->hold_skip = skip;
    p->hold_armed = 1;
    pthread_mutex_unlock(&p->mu);
}

void rt_proxy_hold_off(struct rt_proxy *p)
{
    pthread_mutex_lock(&p->mu);
    p->hold_armed = 0;
    pthread_mutex_unlock(&p->mu);
}

int rt_proxy_wait_held(struct rt_proxy *p, int ms)
{
    int64_t end = rt_now_ms() + ms;
    int held;

    for (;;) {
        pthread_mutex_lock(&p->mu);
        held = p->held != NULL && !p->hold_release;
        pthread_mutex_unlock(&p->mu);
        if (held || rt_now_ms() >= end)
            return held;
        rt_sleep_ms(2);
    }
}

void rt_proxy_release(struct rt_proxy *p)
{
    pthread_mutex_lock(&p->mu);
    p->hold_release = 1;
    pthread_mutex_unlock(&p->mu);
    wake(p);
}

int rt_proxy_cuts(struct rt_proxy *p)
{
    int n;

    pthread_mutex_lock(&p->mu);
    n = p->cuts;
    pthread_mutex_unlock(&p->mu);
    return n;
}

void rt_proxy_stop(struct rt_proxy *p)
{
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_mutex_unlock(&p->mu);
    wake(p);
    pthread_join(p->th, NULL);
    close(p->lfd);
    close(p->wake[0]);
    close(p->wake[1]);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

void rt_cut_open(struct rt_cut *k, const char *port)
{
    char hosts[64];

    k->px = rt_proxy_start(atoi(port));
    snprintf(hosts, sizeof hosts, "127.0.0.1:%d", rt_proxy_port(k->px));
    k->direct = rt_connect(rt_hosts, RT_SESSION_MS);
    k->proxied = rt_connect(hosts, RT_SESSION_MS);
}

void rt_cut_close(struct rt_cut *k)
{
    tb_client_close(k->proxied);
    tb_client_close(k->direct);
    rt_proxy_stop(k->px);
}

void rt_cut_wait(struct rt_cut *k, int n)
{
    int64_t end = rt_now_ms() + 10000;

    while (rt_proxy_cuts(k->px) < n && rt_now_ms() < end)
        rt_sleep_ms(2);
    CHECK(rt_proxy_cuts(k->px) >= n);
}
