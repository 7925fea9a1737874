/* session_tool: one step of a session's life, for scripts that restart the
 * server in between (session_restart.sh).
 *   session_tool open HOST:PORT PATH TIMEOUT_MS
 *       new session, creates the ephemeral PATH, prints "SID HEXPASSWD
 *       ZXID", and drops the socket without closing the session
 *   session_tool resume HOST:PORT SID HEXPASSWD ZXID PATH
 *       reconnects to the session (exit 0 if the server accepted it and
 *       PATH still exists, 3 if the session was refused as expired)
 *   session_tool exists HOST:PORT PATH
 *       exit 0 if PATH exists, 1 if not */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rawzk.h"

static int do_open(const char *hp, const char *path, int timeout)
{
    struct rz z;
    struct rz_stat st;
    int i;

    rz_init(&z);
    if (rz_open(&z, hp, timeout) != 0 ||
        rz_create(&z, RZ_OP_CREATE, path, "e", 1, 1, -1, NULL, 0, NULL) != 0 ||
        rz_exists(&z, path, 0, &st) != 0) {
        rz_drop(&z);
        return 2;
    }
    printf("%llx ", (unsigned long long)z.sid);
    for (i = 0; i < 16; i++)
        printf("%02x", z.pw[i]);
    printf(" %lld\n", (long long)z.last_zxid);
    rz_drop(&z);
    return 0;
}

static int do_resume(const char *hp, const char *sid, const char *hex,
                     const char *zxid, const char *path)
{
    struct rz z;
    struct rz_stat st;
    unsigned char pw[16];
    struct rz_hello h = {0, 0, 10000, 0, pw, 0};
    unsigned v;
    int i, rv;

    for (i = 0; i < 16; i++) {
        if (sscanf(hex + 2 * i, "%2x", &v) != 1)
            return 2;
        pw[i] = (unsigned char)v;
    }
    h.sid = (int64_t)strtoull(sid, NULL, 16);
    h.last_zxid = strtoll(zxid, NULL, 10);
    rz_init(&z);
    if (rz_dial(&z, hp) != 0)
        return 2;
    rv = rz_hello(&z, &h);
    if (rv <= 0 || z.sid != h.sid) {
        rz_drop(&z);
        return rv == 0 ? 3 : 2;
    }
    rv = rz_exists(&z, path, 0, &st);
    printf("resumed session %llx; %s %s\n", (unsigned long long)z.sid, path,
           rv == 0 ? "present" : "missing");
    rz_close(&z);
    return rv == 0 ? 0 : 1;
}

static int do_exists(const char *hp, const char *path)
{
    struct rz z;
    struct rz_stat st;
    int rv;

    rz_init(&z);
    if (rz_open(&z, hp, 10000) != 0) {
        rz_drop(&z);
        return 2;
    }
    rv = rz_exists(&z, path, 0, &st);
    rz_close(&z);
    return rv == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "open") == 0)
        return do_open(argv[2], argv[3], atoi(argv[4]));
    if (argc == 7 && strcmp(argv[1], "resume") == 0)
        return do_resume(argv[2], argv[3], argv[4], argv[5], argv[6]);
    if (argc == 4 && strcmp(argv[1], "exists") == 0)
        return do_exists(argv[2], argv[3]);
    fprintf(stderr, "usage: see the comment at the top of session_tool.c\n");
    return 2;
}
