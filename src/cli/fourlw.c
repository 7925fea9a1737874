/* A four-letter word is a connection of its own: the client writes the
 * four bytes, the server writes its answer and closes.  One blocking
 * socket with poll() deadlines; nothing here touches the session. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/fourlw.h"

int cli_4lw_server(const char *hosts, int n, char out[CLI_HOSTPORT_LEN])
{
    const char *p = hosts, *end = hosts + strcspn(hosts, "/"), *comma, *v6;
    size_t len;

    for (; n > 0 && p < end; n--) {
        if ((comma = memchr(p, ',', (size_t)(end - p))) == NULL)
            return -1;
        p = comma + 1;
    }
    comma = memchr(p, ',', (size_t)(end - p));
    len = (size_t)((comma != NULL ? comma : end) - p);
    if (len == 0 || len >= CLI_HOSTPORT_LEN - 6)
        return -1;
    memcpy(out, p, len);
    out[len] = '\0';
    /* "host", "[v6]": no port; "host:port", "[v6]:port": one */
    v6 = out[0] == '[' ? strchr(out, ']') : out; /* NULL: "[v6", as it is */
    if (v6 != NULL && strchr(v6, ':') == NULL)
        memcpy(out + len, ":2181", 6);
    return 0;
}

static int64_t mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits for `events` on fd until `deadline`: 1 ready, 0 timed out. */
static int wait_fd(int fd, short events, int64_t deadline)
{
    struct pollfd p = {.fd = fd, .events = events};
    int64_t left;
    int r;

    for (;;) {
        if ((left = deadline - mono_ms()) < 0)
            left = 0;
        r = poll(&p, 1, (int)left);
        if (r >= 0 || errno != EINTR)
            return r > 0;
    }
}

/* A connected socket to host:port (nonblocking connect, bounded), or -1. */
static int dial(const char *hostport, int64_t deadline, char *why,
                size_t why_cap)
{
    char host[CLI_HOSTPORT_LEN];
    const char *colon = strrchr(hostport, ':');
    struct addrinfo hints, *ai = NULL, *a;
    int fd = -1, rc, err = 0;
    socklen_t el = sizeof err;

    if (colon == NULL) { /* "[v6" without its "]" */
        snprintf(why, why_cap, "%s: not host:port", hostport);
        return -1;
    }
    snprintf(host, sizeof host, "%.*s", (int)(colon - hostport), hostport);
    if (host[0] == '[') { /* [v6] */
        memmove(host, host + 1, strlen(host));
        host[strcspn(host, "]")] = '\0';
    }
    memset(&hints, 0, sizeof hints);
    hints.ai_socktype = SOCK_STREAM;
    if ((rc = getaddrinfo(host, colon + 1, &hints, &ai)) != 0) {
        snprintf(why, why_cap, "%s: %s", hostport, gai_strerror(rc));
        return -1;
    }
    for (a = ai; a != NULL && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                    a->ai_protocol);
        if (fd < 0)
            continue;
        if (connect(fd, a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS)
            err = errno;
        else if (!wait_fd(fd, POLLOUT, deadline))
            err = ETIMEDOUT;
        else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0)
            err = errno;
        if (err != 0) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(ai);
    if (fd < 0)
        snprintf(why, why_cap, "%s: %s", hostport,
                 strerror(err ? err : EADDRNOTAVAIL));
    return fd;
}

int cli_4lw(const char *hostport, const char *word, int timeout_ms, char *buf,
            size_t cap, char *why, size_t why_cap)
{
    int64_t deadline = mono_ms() + timeout_ms;
    size_t len = 0;
    ssize_t r = 0;
    int fd;

    if ((fd = dial(hostport, deadline, why, why_cap)) < 0)
        return -1;
    if (send(fd, word, 4, MSG_NOSIGNAL) != 4) {
        snprintf(why, why_cap, "%s: %s", hostport, strerror(errno));
        close(fd);
        return -1;
    }
    for (;;) {
        if (!wait_fd(fd, POLLIN, deadline)) {
            snprintf(why, why_cap, "%s: no answer to %s", hostport, word);
            close(fd);
            return -1;
        }
        r = recv(fd, buf + len, cap - 1 - len, 0);
        if (r < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (r <= 0 || (len += (size_t)r) == cap - 1)
            break; /* closed (the whole answer), an error, or full */
    }
    close(fd);
    buf[len] = '\0';
    if (r < 0 && len == 0) {
        snprintf(why, why_cap, "%s: %s", hostport, strerror(errno));
        return -1;
    }
    return (int)len;
}

/* The value after "KEY: " at the start of a line, or NULL. */
static const char *field(const char *text, const char *key)
{
    size_t n = strlen(key);
    const char *p;

    for (p = text; p != NULL && *p != '\0'; p = strchr(p, '\n')) {
        if (*p == '\n')
            p++;
        if (strncmp(p, key, n) == 0 && strncmp(p + n, ": ", 2) == 0)
            return p + n + 2;
    }
    return NULL;
}

static int64_t num(const char *text, const char *key)
{
    const char *v = field(text, key);

    return v != NULL ? strtoll(v, NULL, 10) : -1;
}

int cli_srvr_parse(const char *text, struct cli_srvr *out)
{
    const char *v;

    memset(out, 0, sizeof *out);
    out->lat_min = out->lat_avg = out->lat_max = -1;
    if ((out->received = num(text, "Received")) < 0)
        return -1;
    out->sent = num(text, "Sent");
    out->connections = num(text, "Connections");
    out->outstanding = num(text, "Outstanding");
    out->nodes = num(text, "Node count");
    out->zxid =
        (v = field(text, "Zxid")) != NULL ? (int64_t)strtoull(v, NULL, 16) : -1;
    /* A server's words, to a terminal and in JSON: figures finite (no nan,
     * no inf), text free of control characters. */
    if ((v = field(text, "Latency min/avg/max")) != NULL &&
        (sscanf(v, "%lf/%lf/%lf", &out->lat_min, &out->lat_avg,
                &out->lat_max) != 3 ||
         !isfinite(out->lat_min) || !isfinite(out->lat_avg) ||
         !isfinite(out->lat_max)))
        out->lat_min = out->lat_avg = out->lat_max = -1;
    if ((v = field(text, "Mode")) != NULL && strcspn(v, "\n") > 0)
        cli_text_str(v, strcspn(v, "\n"), out->mode, sizeof out->mode);
    return 0;
}

int cli_cons_est(const char *text, int64_t sid, int64_t *est_ms)
{
    char key[40];
    const char *p, *e;
    size_t eol;

    snprintf(key, sizeof key, "sid=0x%" PRIx64 ",", (uint64_t)sid);
    if ((p = strstr(text, key)) == NULL)
        return -1;
    eol = strcspn(p, "\n");
    if ((e = strstr(p, ",est=")) == NULL || e >= p + eol)
        return -1;
    *est_ms = strtoll(e + 5, NULL, 10);
    return 0;
}
