/* tbfail writer: a client that writes without pause while the script
 * around it restarts the members one after the other.  One session writes
 * one node after another, each bounded by --timeout-ms; a failed or late
 * write drops the connection and the session is taken up again on the
 * next server after --retry-ms, as a client library would.  It stops once
 * the --until file exists.  The figure is the longest time between two
 * acknowledgements: how long the client could not write. */
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include "tbfail.h"

int tf_run_writer(const char *root, const char *acked_file, const char *until,
                  double timeout_ms, double retry_ms)
{
    struct tf_sess w;
    FILE *acked = fopen(acked_file, "a");
    char path[512], made[512];
    uint64_t t0, last = 0, gap = 0, gap_at = 0;
    long acks = 0, timeouts = 0, losses = 0, other = 0, reconnects = 0,
         expired = 0;
    int at = 0, rc;

    if (acked == NULL) {
        perror(acked_file);
        return 2;
    }
    tf_sess_init(&w, 10000);
    snprintf(path, sizeof(path), "%s/w-", root);
    if (tf_sess_open_any(&w, 0, tf_nsrv, bn_now_ns() + 20000000000ull, &at) !=
            0 ||
        tf_ensure_root(&w, root) != 0) {
        fprintf(stderr, "tbfail: cannot write through %s\n", tf_srvs[0].name);
        fclose(acked);
        return 2;
    }
    t0 = last = bn_now_ns();
    while (access(until, F_OK) != 0) {
        uint64_t d;

        if (w.fd < 0) {
            at = (at + 1) % tf_nsrv;
            reconnects++;
            rc = tf_sess_open(&w, &tf_srvs[at],
                              bn_now_ns() + (uint64_t)(timeout_ms * 1e6));
            expired += rc == TB_ESESSIONEXPIRED;
            if (rc != 0) {
                bn_sleep_ms(retry_ms);
                continue;
            }
        }
        d = bn_now_ns() + (uint64_t)(timeout_ms * 1e6);
        rc = tf_create(&w, path, TB_PERSISTENT_SEQUENTIAL, d, made,
                       sizeof(made));
        if (rc == 0) {
            uint64_t t = bn_now_ns();
            if (t - last > gap) {
                gap = t - last;
                gap_at = last;
            }
            last = t;
            acks++;
            fprintf(acked, "%s\n", made);
            continue;
        }
        timeouts += rc == TB_EOPTIMEOUT;
        losses += rc == TB_ECONNECTIONLOSS;
        other += rc != TB_EOPTIMEOUT && rc != TB_ECONNECTIONLOSS;
        tf_sess_drop(&w);
        bn_sleep_ms(retry_ms);
    }
    fclose(acked);
    tf_sess_close(&w, bn_now_ns() + 3000000000ull);
    printf("RESULT writer acks=%ld longest_gap_ms=%.1f gap_from_s=%.2f "
           "run_s=%.1f timeouts=%ld losses=%ld other_errors=%ld "
           "reconnects=%ld expired=%ld timeout_ms=%g retry_ms=%g\n",
           acks, gap / 1e6, (double)(gap_at - t0) / 1e9,
           bn_ms_since(t0, bn_now_ns()) / 1e3, timeouts, losses, other,
           reconnects, expired, timeout_ms, retry_ms);
    return acks > 0 ? 0 : 1;
}
