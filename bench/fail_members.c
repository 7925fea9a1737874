/* tbfail ensemble and tbfail rejoin: the ensemble's membership from each
 * server's srvr; waiting for one leader with in-step followers, and timing
 * a restarted member's way back (answering, following, caught up, taking a
 * session's write). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "tbfail.h"

/* Followers hold the same entries.  A ZooKeeper follower of a fresh
 * ensemble shows 0x0 or the leader's first zxid of its epoch
 * (0x100000000) until a txn comes, whichever way it synced: no txn in
 * either, so in step (seen: one left at 0x0, the other at 0x100000000). */
static int in_step(uint64_t a, uint64_t b)
{
    return a == b || ((uint32_t)a == 0 && (uint32_t)b == 0);
}

int tf_run_ensemble(double timeout_s)
{
    uint64_t t0 = bn_now_ns(), end = t0 + (uint64_t)(timeout_s * 1e9);
    struct tf_srvr r[TF_MAX_SRV];
    int i;

    do {
        int leader = -1, leaders = 0, followers = 0, same = 1, f0 = -1;
        for (i = 0; i < tf_nsrv; i++) {
            tf_srvr(&tf_srvs[i], &r[i]);
            if (r[i].ok && r[i].serving && strcmp(r[i].mode, "leader") == 0) {
                leader = i;
                leaders++;
            } else if (r[i].ok && r[i].serving &&
                       strcmp(r[i].mode, "follower") == 0) {
                followers++;
                if (f0 < 0)
                    f0 = i;
                else if (!in_step(r[i].zxid, r[f0].zxid))
                    same = 0;
            }
        }
        if (leaders == 1 && leaders + followers == tf_nsrv && same) {
            printf("%d\n", leader + 1);
            fprintf(stderr,
                    "tbfail: ensemble settled in %.0f ms, server %d "
                    "leads, zxid 0x%" PRIx64 "\n",
                    bn_ms_since(t0, bn_now_ns()), leader + 1, r[leader].zxid);
            return 0;
        }
        bn_sleep_ms(20);
    } while (bn_now_ns() < end);
    for (i = 0; i < tf_nsrv; i++)
        fprintf(
            stderr, "tbfail: %s: %s %s zxid 0x%" PRIx64 "\n", tf_srvs[i].name,
            r[i].ok ? (r[i].serving ? "serving" : "not serving") : "no answer",
            r[i].mode, r[i].zxid);
    return 1;
}

int tf_run_rejoin(int node, uint64_t since_us, double timeout_s)
{
    uint64_t t0_ns = bn_now_ns(), t0_us = bn_wall_us();
    uint64_t end = t0_ns + (uint64_t)(timeout_s * 1e9);
    double answer = -1, follower = -1, caught = -1, wrote = -1;
    struct tf_srvr me, other;
    uint64_t lz = 0, target;
    int i, leaders;

    if (node < 1 || node > tf_nsrv)
        return 2;
        /* bn_now_ns() - t0_ns + (t0_us - since_us): ms since the restart */
#define SINCE_MS()                                                             \
    (bn_ms_since(t0_ns, bn_now_ns()) + ((double)t0_us - (double)since_us) / 1e3)
    while (bn_now_ns() < end) {
        tf_srvr(&tf_srvs[node - 1], &me);
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
            for (i = 0; i < tf_nsrv; i++) {
                if (i == node - 1)
                    continue;
                tf_srvr(&tf_srvs[i], &other);
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
        bn_sleep_ms(5);
    }
    /* Then a new session on it, and a write through that session. */
    while (caught >= 0 && bn_now_ns() < end) {
        struct tf_sess w;
        uint64_t d = bn_now_ns() + 250000000ull;
        int rc;

        tf_sess_init(&w, 10000);
        rc = tf_sess_open(&w, &tf_srvs[node - 1], d);
        if (rc == 0)
            rc = tf_create(&w, "/tbfail-rejoin-", TB_EPHEMERAL_SEQUENTIAL, d,
                           NULL, 0);
        if (rc == 0) {
            wrote = SINCE_MS();
            tf_sess_close(&w, bn_now_ns() + 1000000000ull);
            break;
        }
        tf_sess_close(&w, bn_now_ns() + 100000000ull);
        bn_sleep_ms(5);
    }
    printf("RESULT rejoin node=%d answer_ms=%.1f follower_ms=%.1f "
           "caught_up_ms=%.1f zxid=0x%" PRIx64 " session_write_ms=%.1f\n",
           node, answer, follower, caught, lz, wrote);
    return caught >= 0 && wrote >= 0 ? 0 : 1;
}
