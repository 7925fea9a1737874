/* A server's role and zxid from its `srvr` four-letter word: what the
 * ensemble and rejoin waits poll. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "tbfail.h"

static void fourlw(const struct tf_srv *v, const char *cmd, char *out,
                   size_t cap, int timeout_ms)
{
    uint64_t deadline = bn_now_ns() + (uint64_t)timeout_ms * 1000000ull;
    struct tf_sess s;
    size_t n = 0;

    out[0] = '\0';
    tf_sess_init(&s, 0);
    if (tf_connect(&s, v, deadline) != 0)
        return;
    if (tf_send_all(s.fd, (const uint8_t *)cmd, strlen(cmd), deadline) == 0) {
        for (;;) {
            struct pollfd pf = {s.fd, POLLIN, 0};
            ssize_t k;
            if (n + 1 >= cap || poll(&pf, 1, tf_remaining_ms(deadline)) <= 0)
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
    tf_sess_drop(&s);
}

void tf_srvr(const struct tf_srv *v, struct tf_srvr *r)
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
