/* tbfail failover: the failover trial.  A session on a survivor writes
 * one node after another, each bounded by --timeout-ms, and is taken up
 * again on the next survivor when one fails; the leader gets SIGKILL or
 * SIGSTOP once warm, and the figure is the time from that signal to the
 * first acknowledgement of a write sent after it.  With SIGSTOP, a second
 * session on the stopped leader sends one write, and what it hears after
 * SIGCONT is reported. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "tbfail.h"

/* How long the session on the resumed leader is waited for. */
#define STALE_WAIT_S 15

static long stopped_pid; /* SIGCONT owed at exit */

static void cont_owed(void)
{
    if (stopped_pid > 0)
        kill((pid_t)stopped_pid, SIGCONT);
    stopped_pid = 0;
}

void tf_on_term(int sig)
{
    cont_owed();
    signal(sig, SIG_DFL);
    raise(sig);
}

static int proc_state(long pid)
{
    char path[64], buf[512];
    FILE *f;
    const char *p;

    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    if ((f = fopen(path, "r")) == NULL)
        return 0;
    buf[0] = '\0';
    if (fgets(buf, sizeof(buf), f) == NULL)
        buf[0] = '\0';
    fclose(f);
    p = strrchr(buf, ')');
    return p != NULL && p[1] == ' ' ? p[2] : 0;
}

int tf_ensure_root(struct tf_sess *s, const char *root)
{
    char buf[512];
    size_t i, n = strlen(root);

    for (i = 1; i <= n && n < sizeof(buf); i++) {
        int rc;
        if (i < n && root[i] != '/')
            continue;
        memcpy(buf, root, i);
        buf[i] = '\0';
        rc = tf_create(s, buf, TB_PERSISTENT, bn_now_ns() + 5000000000ull, NULL,
                       0);
        if (rc != 0 && rc != TB_ENODEEXISTS)
            return rc;
    }
    return 0;
}

int tf_run_failover(const struct tf_fo_opts *o)
{
    struct tf_sess w, st;
    FILE *acked = NULL;
    char wpath[512], spath[512], made[512];
    uint64_t t0, t_sig = 0, t_first = 0, t_cont = 0, t_stale = 0, t_last = 0;
    uint64_t end_max, cont_wall = 0;
    long acks = 0, acks_after = 0, timeouts = 0, losses = 0, other = 0,
         reconnects = 0, expired = 0, errs_after_cont = 0, open_fail = 0;
    int at = 0, rc, stale_sent = 0, stale_done = 0, stale_err = 0;
    int32_t stale_xid = 0;
    char stale_out[600] = "none";

    tf_sess_init(&w, 10000);
    tf_sess_init(&st, 30000);
    snprintf(wpath, sizeof(wpath), "%s/w-", o->root);
    snprintf(spath, sizeof(spath), "%s/stale-", o->root);
    if (o->acked != NULL && (acked = fopen(o->acked, "a")) == NULL) {
        perror(o->acked);
        return 2;
    }
    if (tf_sess_open_any(&w, 0, 1, bn_now_ns() + 20000000000ull, NULL) != 0 ||
        tf_ensure_root(&w, o->root) != 0) {
        fprintf(stderr, "tbfail: cannot write through %s\n", tf_srvs[0].name);
        return 2;
    }
    if (o->stale != NULL) {
        struct tf_srv v;
        snprintf(v.name, sizeof(v.name), "%s", o->stale);
        if (bn_resolve(o->stale, &v.ss, &v.len) != 0 ||
            tf_sess_open(&st, &v, bn_now_ns() + 10000000000ull) != 0) {
            fprintf(stderr, "tbfail: cannot open a session on %s\n", o->stale);
            return 2;
        }
    }
    t0 = bn_now_ns();
    end_max = t0 + (uint64_t)((o->warm_ms / 1e3 + o->max_s) * 1e9);
    for (;;) {
        uint64_t now = bn_now_ns(), sent;
        int32_t xid;
        struct tb_rd rd;

        /* The signal, once warm. */
        if (t_sig == 0 && now >= t0 + (uint64_t)(o->warm_ms * 1e6)) {
            t_sig = bn_now_ns();
            if (kill((pid_t)o->pid, o->stop ? SIGSTOP : SIGKILL) != 0) {
                perror("tbfail: kill");
                return 2;
            }
            if (o->stop) {
                int i;
                stopped_pid = o->pid;
                for (i = 0; i < 200 && proc_state(o->pid) != 'T' &&
                            proc_state(o->pid) != 't';
                     i++)
                    bn_sleep_ms(1);
                if (o->stale != NULL &&
                    tf_send_create(&st, spath, TB_PERSISTENT_SEQUENTIAL,
                                   bn_now_ns() + 1000000000ull,
                                   &stale_xid) == 0)
                    stale_sent = 1;
                else if (o->stale != NULL)
                    snprintf(stale_out, sizeof(stale_out), "not-sent");
            }
        }
        /* SIGCONT, cont_ms after the first acknowledgement. */
        if (o->stop && t_first != 0 && t_cont == 0 &&
            now >= t_first + (uint64_t)(o->cont_ms * 1e6)) {
            t_cont = bn_now_ns();
            cont_wall = bn_wall_us();
            cont_owed();
        }
        /* What the session on the stopped leader hears. */
        if (stale_sent && !stale_done) {
            rc = tf_sess_reply(&st, stale_xid, t_cont ? bn_now_ns() : 0, &rd);
            if (rc != TB_EOPTIMEOUT) {
                stale_done = 1;
                t_stale = bn_now_ns();
                stale_err = rc;
                if (rc == 0 && tf_create_reply(&rd, 0, made, sizeof(made)) == 0)
                    snprintf(stale_out, sizeof(stale_out), "ok:%s", made);
                else if (rc == TB_ECONNECTIONLOSS)
                    snprintf(stale_out, sizeof(stale_out), "closed");
                else
                    snprintf(stale_out, sizeof(stale_out), "error:%s",
                             tb_errname(rc));
            }
        }
        /* Done? */
        if (now >= end_max)
            break;
        if (t_first != 0 && !o->stop &&
            now >= t_first + (uint64_t)(o->after_ms * 1e6))
            break;
        if (t_first != 0 && o->stop && t_cont != 0 &&
            (stale_done || !stale_sent ||
             now >= t_cont + (uint64_t)(STALE_WAIT_S * 1e9)) &&
            now >= t_cont + (uint64_t)(o->after_ms * 1e6) &&
            now >= (t_stale ? t_stale : t_cont) + 200000000ull)
            break;
        /* One write. */
        if (w.fd < 0) {
            uint64_t d = bn_now_ns() + (uint64_t)(o->timeout_ms * 1e6);
            at = (at + 1) % tf_nsrv;
            reconnects++;
            rc = tf_sess_open(&w, &tf_srvs[at], d);
            if (rc == TB_ESESSIONEXPIRED)
                expired++;
            if (rc != 0) {
                open_fail++;
                if (t_cont)
                    errs_after_cont++;
                bn_sleep_ms(o->retry_ms);
                continue;
            }
        }
        sent = bn_now_ns();
        rc = tf_send_create(&w, wpath, TB_PERSISTENT_SEQUENTIAL,
                            sent + (uint64_t)(o->timeout_ms * 1e6), &xid);
        if (rc == 0)
            rc = tf_sess_reply(&w, xid, sent + (uint64_t)(o->timeout_ms * 1e6),
                               &rd);
        if (rc == 0 && tf_create_reply(&rd, 0, made, sizeof(made)) == 0) {
            uint64_t t = bn_now_ns();
            acks++;
            if (acked != NULL)
                fprintf(acked, "%s\n", made);
            if (t_sig == 0 || sent < t_sig)
                t_last = t;
            if (t_sig != 0 && sent >= t_sig) {
                acks_after++;
                if (t_first == 0)
                    t_first = t;
            }
            continue;
        }
        if (rc == TB_EOPTIMEOUT)
            timeouts++;
        else if (rc == TB_ECONNECTIONLOSS)
            losses++;
        else
            other++;
        if (t_cont)
            errs_after_cont++;
        tf_sess_drop(&w);
        bn_sleep_ms(o->retry_ms);
    }
    cont_owed();
    if (acked != NULL)
        fclose(acked);
    /* Sessions closed, so no expiry moves the zxids during the rejoin. */
    if (w.fd < 0)
        (void)tf_sess_open_any(&w, at, tf_nsrv, bn_now_ns() + 5000000000ull,
                               NULL);
    tf_sess_close(&w, bn_now_ns() + 3000000000ull);
    if (st.id != 0) {
        if (st.fd < 0 || stale_done)
            (void)tf_sess_open_any(&st, 0, tf_nsrv, bn_now_ns() + 5000000000ull,
                                   NULL);
        tf_sess_close(&st, bn_now_ns() + 3000000000ull);
    }
    printf("RESULT failover signal=%s first_ack_ms=%.1f last_ack_before_ms=%.1f"
           " acks=%ld acks_after=%ld timeouts=%ld losses=%ld other_errors=%ld"
           " reconnects=%ld open_failures=%ld expired=%ld timeout_ms=%g"
           " retry_ms=%g",
           o->stop ? "stop" : "kill",
           t_first ? bn_ms_since(t_sig, t_first) : -1.0,
           t_last ? bn_ms_since(t_last, t_sig) : -1.0, acks, acks_after,
           timeouts, losses, other, reconnects, open_fail, expired,
           o->timeout_ms, o->retry_ms);
    if (o->stop)
        printf(" cont_after_ms=%.1f cont_wall_us=%" PRIu64 " stale=%s"
               " stale_err=%d stale_answer_after_cont_ms=%.1f"
               " errors_after_cont=%ld",
               t_cont ? bn_ms_since(t_sig, t_cont) : -1.0, cont_wall, stale_out,
               stale_err,
               t_stale && t_cont ? bn_ms_since(t_cont, t_stale) : -1.0,
               errs_after_cont);
    printf("\n");
    return t_first ? 0 : 1;
}
