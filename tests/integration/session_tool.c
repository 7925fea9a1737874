/* session_tool: one step of a session's life, for scripts that restart the
 * server in between (session_restart.sh).
 *   session_tool open HOST:PORT PATH TIMEOUT_MS
 *       new session, creates the ephemeral PATH, prints "SID HEXPASSWD
 *       ZXID", and drops the socket without closing the session
 *   session_tool resume HOST:PORT SID HEXPASSWD ZXID PATH [HOLD_MS]
 *       reconnects to the session (exit 0 if the server accepted it and
 *       PATH still exists, HOLD_MS later if given, with nothing sent
 *       meanwhile; 3 if the session was refused as expired)
 *   session_tool resume-sync HOST:PORT SID HEXPASSWD ZXID PATH
 *       as resume, with a sync of PATH before the read: for a ZXID older
 *       than PATH's creation, which a server may serve a tree without
 *       PATH (a session is created by an entry of its own, PATH by the
 *       next)
 *   session_tool exists HOST:PORT PATH
 *       exit 0 if PATH exists, 1 if not
 *   session_tool moved HOST:PORT HOST:PORT PATH
 *       opens a session on the first server, resumes it on the second
 *       while the first connection stays open, then sends a create of PATH
 *       on the first: exit 0 if it was refused and PATH does not exist
 *       (the first server no longer holds the session), 1 if it was
 *       created */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
                     const char *zxid, const char *path, int hold_ms, int sync)
{
    struct rz z;
    struct rz_stat st;
    struct rz_reply rep;
    struct rz_w w = {0};
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
    usleep((useconds_t)hold_ms * 1000);
    if (sync) {
        rz_w_str(&w, path);
        rv = rz_call(&z, RZ_OP_SYNC, &w, &rep);
        rz_w_free(&w);
        if (rv != 0 || rep.err != 0) {
            rz_drop(&z);
            return 2;
        }
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

static int do_moved(const char *from, const char *to, const char *path)
{
    struct rz z1, z2;
    struct rz_stat st;
    struct rz_hello h = {0, 0, 10000, 0, NULL, 0};
    struct rz_reply rep;
    struct rz_w w = {0};
    int created, absent, tries;

    rz_init(&z1);
    if (rz_open(&z1, from, 10000) != 0)
        return 2;
    h.sid = z1.sid;
    h.pw = z1.pw;
    h.last_zxid = z1.last_zxid;
    /* The second server refuses a client that has seen more than it has
     * applied: tried again, as a client would, until it has caught up. */
    for (tries = 0; tries < 100; tries++) {
        rz_init(&z2);
        if (rz_dial(&z2, to) == 0 && rz_hello(&z2, &h) == 1 &&
            z2.sid == z1.sid)
            break;
        rz_drop(&z2);
        usleep(20000);
    }
    if (tries == 100) {
        rz_drop(&z1);
        return 2;
    }
    created = rz_create(&z1, RZ_OP_CREATE, path, "x", 1, 0, -1, NULL, 0,
                        NULL) == 0;
    /* A sync on the second server: it has applied all the first could
     * have had logged. */
    rz_w_str(&w, path);
    if (rz_call(&z2, RZ_OP_SYNC, &w, &rep) != 0) {
        rz_w_free(&w);
        rz_drop(&z1);
        rz_drop(&z2);
        return 2;
    }
    rz_w_free(&w);
    absent = rz_exists(&z2, path, 0, &st) != 0;
    printf("session %llx moved; the create on its old connection %s; %s %s\n",
           (unsigned long long)z1.sid, created ? "acknowledged" : "refused",
           path, absent ? "missing" : "present");
    rz_drop(&z1);
    rz_close(&z2);
    return !created && absent ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "open") == 0)
        return do_open(argv[2], argv[3], atoi(argv[4]));
    if ((argc == 7 || argc == 8) && strcmp(argv[1], "resume") == 0)
        return do_resume(argv[2], argv[3], argv[4], argv[5], argv[6],
                         argc == 8 ? atoi(argv[7]) : 0, 0);
    if (argc == 7 && strcmp(argv[1], "resume-sync") == 0)
        return do_resume(argv[2], argv[3], argv[4], argv[5], argv[6], 0, 1);
    if (argc == 5 && strcmp(argv[1], "moved") == 0)
        return do_moved(argv[2], argv[3], argv[4]);
    if (argc == 4 && strcmp(argv[1], "exists") == 0)
        return do_exists(argv[2], argv[3]);
    fprintf(stderr, "usage: see the comment at the top of session_tool.c\n");
    return 2;
}
