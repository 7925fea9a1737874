/* A small TCP proxy on its own thread, between a client and the server, so
 * a test can cut every connection at a chosen moment (the server never
 * notices the session go), stall the network without closing it, or make
 * the connections it accepts deaf: open, and never answered. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "it_client.h"

#define MAX_PAIRS 32

struct it_proxy {
    int lfd, port, upstream;
    int ctl[2]; /* 'c' cut, 's' stall, 'r' resume, 'd' deaf, 'h' hear, 'q' */
    int a[MAX_PAIRS], b[MAX_PAIRS], n;
    int deaf[MAX_PAIRS]; /* accepted while deaf: never relayed */
    int stalled, deafening;
    pthread_t th;
};

static void drop_pair(struct it_proxy *p, int i)
{
    close(p->a[i]);
    close(p->b[i]);
    p->a[i] = p->a[p->n - 1];
    p->b[i] = p->b[p->n - 1];
    p->deaf[i] = p->deaf[p->n - 1];
    p->n--;
}

static void accept_one(struct it_proxy *p)
{
    struct sockaddr_in sa = {0};
    int cfd = accept(p->lfd, NULL, NULL), ufd;

    if (cfd < 0)
        return;
    ufd = socket(AF_INET, SOCK_STREAM, 0);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)p->upstream);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (p->n == MAX_PAIRS ||
        connect(ufd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        close(cfd);
        close(ufd);
        return;
    }
    p->a[p->n] = cfd;
    p->b[p->n] = ufd;
    p->deaf[p->n] = p->deafening;
    p->n++;
}

/* Copies what is readable on `from` to `to`; -1 when either side ends. */
static int relay(int from, int to)
{
    char buf[65536];
    ssize_t n = read(from, buf, sizeof buf), off = 0;

    if (n <= 0)
        return -1;
    while (off < n) {
        ssize_t w = write(to, buf + off, (size_t)(n - off));
        if (w <= 0)
            return -1;
        off += w;
    }
    return 0;
}

static void *proxy_main(void *arg)
{
    struct it_proxy *p = arg;
    struct pollfd f[2 + 2 * MAX_PAIRS];
    int i, nf;
    char cmd;

    for (;;) {
        f[0] = (struct pollfd){p->ctl[0], POLLIN, 0};
        f[1] = (struct pollfd){p->lfd, POLLIN, 0};
        nf = 2;
        /* A deaf pair keeps its slots, unpolled: poll skips fd -1. */
        for (i = 0; i < p->n && !p->stalled; i++) {
            f[nf++] = (struct pollfd){p->deaf[i] ? -1 : p->a[i], POLLIN, 0};
            f[nf++] = (struct pollfd){p->deaf[i] ? -1 : p->b[i], POLLIN, 0};
        }
        if (poll(f, (nfds_t)nf, -1) < 0)
            continue;
        if (f[0].revents) {
            if (read(p->ctl[0], &cmd, 1) != 1 || cmd == 'q')
                break;
            if (cmd == 'c')
                while (p->n > 0)
                    drop_pair(p, 0);
            p->stalled = cmd == 's' ? 1 : cmd == 'r' ? 0 : p->stalled;
            p->deafening = cmd == 'd' ? 1 : cmd == 'h' ? 0 : p->deafening;
            continue;
        }
        if (f[1].revents)
            accept_one(p);
        for (i = (nf - 2) / 2 - 1; i >= 0; i--) {
            int bad = 0;
            if (f[2 + 2 * i].revents)
                bad |= relay(p->a[i], p->b[i]);
            if (f[3 + 2 * i].revents)
                bad |= relay(p->b[i], p->a[i]);
            if (bad)
                drop_pair(p, i);
        }
    }
    while (p->n > 0)
        drop_pair(p, 0);
    return NULL;
}

struct it_proxy *it_proxy_start(int upstream_port)
{
    return it_proxy_start_at("127.0.0.1", upstream_port);
}

struct it_proxy *it_proxy_start_at(const char *ip, int upstream_port)
{
    struct it_proxy *p = calloc(1, sizeof *p);
    struct sockaddr_in sa = {0};
    socklen_t len = sizeof sa;
    int one = 1;

    p->upstream = upstream_port;
    p->lfd = socket(AF_INET, SOCK_STREAM, 0);
    setsockopt(p->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sa.sin_family = AF_INET;
    if (inet_pton(AF_INET, ip, &sa.sin_addr) != 1 ||
        bind(p->lfd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
        listen(p->lfd, 16) != 0 || pipe(p->ctl) != 0) {
        close(p->lfd);
        free(p);
        return NULL;
    }
    getsockname(p->lfd, (struct sockaddr *)&sa, &len);
    p->port = ntohs(sa.sin_port);
    pthread_create(&p->th, NULL, proxy_main, p);
    return p;
}

int it_proxy_port(struct it_proxy *p)
{
    return p->port;
}

static void send_cmd(struct it_proxy *p, char c)
{
    if (write(p->ctl[1], &c, 1) != 1)
        perror("proxy command");
    it_sleep(50); /* let the proxy thread act before the test goes on */
}

void it_proxy_cut(struct it_proxy *p)
{
    send_cmd(p, 'c');
}

void it_proxy_stall(struct it_proxy *p, int stalled)
{
    send_cmd(p, stalled ? 's' : 'r');
}

void it_proxy_deaf(struct it_proxy *p, int deaf)
{
    send_cmd(p, deaf ? 'd' : 'h');
}

void it_proxy_stop(struct it_proxy *p)
{
    if (p == NULL)
        return;
    send_cmd(p, 'q');
    pthread_join(p->th, NULL);
    close(p->lfd);
    close(p->ctl[0]);
    close(p->ctl[1]);
    free(p);
}
