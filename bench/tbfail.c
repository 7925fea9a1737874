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
 *   tbfail writer --servers A,B,C --root R --acked FILE --until STOP
 *          [--timeout-ms 250] [--retry-ms 5]
 *       A session writes R/w- nodes one after the other, as failover's
 *       does, moving to the next server when a write fails, until the file
 *       STOP exists; prints the longest time between two acknowledgements.
 *       Every acknowledged path goes to FILE.
 *
 * Results are "RESULT key=value ..." lines on stdout.  This file is the
 * command line; the pieces are listed in tbfail.h. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tbfail.h"

int main(int argc, char **argv)
{
    struct tf_fo_opts fo = {0, 0,   "/tbfail", NULL, NULL, 250,
                            5, 300, 200,       300,  60};
    const char *mode, *servers = NULL, *acked = NULL, *until = NULL;
    double timeout_s = 60;
    uint64_t since_us = 0;
    int node = 0, i;

    if (argc < 2) {
        fprintf(stderr, "usage: tbfail failover|verify|ensemble|rejoin|writer "
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
        else if (strcmp(k, "--until") == 0)
            until = v;
        else {
            fprintf(stderr, "tbfail: unknown option %s\n", k);
            return 2;
        }
    }
    if (i != argc || servers == NULL || tf_parse_servers(servers) != 0) {
        fprintf(stderr, "tbfail: options come in pairs; --servers is needed\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    signal(SIGTERM, tf_on_term);
    signal(SIGINT, tf_on_term);
    if (strcmp(mode, "failover") == 0) {
        if (fo.pid <= 0)
            return 2;
        return tf_run_failover(&fo);
    }
    if (strcmp(mode, "verify") == 0 && acked != NULL)
        return tf_run_verify(fo.root, acked);
    if (strcmp(mode, "ensemble") == 0)
        return tf_run_ensemble(timeout_s);
    if (strcmp(mode, "rejoin") == 0)
        return tf_run_rejoin(node, since_us ? since_us : bn_wall_us(),
                             timeout_s);
    if (strcmp(mode, "writer") == 0 && acked != NULL && until != NULL)
        return tf_run_writer(fo.root, acked, until, fo.timeout_ms,
                             fo.retry_ms);
    fprintf(stderr, "tbfail: unknown mode %s\n", mode);
    return 2;
}
