/* Supervising CMD while a lock is held (tumbler lock, tumbler elect); it
 * is started by spawn.c.
 *
 * While it runs, tumbler waits on the event pipe for three things:
 *  - the child's exit (SIGCHLD, plus a periodic waitpid in case a SIGCHLD
 *    was coalesced);
 *  - SIGINT, SIGTERM, SIGHUP (and SIGUSR1/2) sent to tumbler: forwarded to
 *    the child.  The same signal sent by the terminal to the foreground
 *    process group (^C, hang-up) reached the child already and is not
 *    sent a second time;
 *  - "lock lost": the child gets SIGTERM, then SIGKILL after the grace
 *    period, and the supervision ends with CLI_LOST. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "cli/child.h"

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* 1 and the status once the child is gone. */
static int reap(pid_t pid, int *status)
{
    int st;
    pid_t r = waitpid(pid, &st, WNOHANG);

    if (r != pid)
        return 0;
    if (WIFEXITED(st))
        *status = WEXITSTATUS(st);
    else if (WIFSIGNALED(st))
        *status = 128 + WTERMSIG(st); /* as flock(1) and the shells */
    else
        *status = CLI_SOFTWARE;
    return 1;
}

/* `pid` 0: the child is gone already (never signal a reaped pid: the
 * number may belong to another process by now). */
static void lose(struct cli_supervise *s, pid_t pid, const char *why)
{
    if (s->lost)
        return;
    s->lost = 1;
    if (pid == 0) {
        fprintf(stderr, "tumbler: %s as %s ended\n", why, s->what);
        return;
    }
    fprintf(stderr, "tumbler: %s; sending SIGTERM to %s (pid %ld)%s\n", why,
            s->what, (long)pid, s->grace_ms > 0 ? "" : " and SIGKILL");
    kill(pid, s->grace_ms > 0 ? SIGTERM : SIGKILL);
    s->kill_at = now_ms() + s->grace_ms;
}

/* Handles the queued messages; only "lost" matters while CMD runs. */
static void messages(struct cli_supervise *s, pid_t pid)
{
    struct cli_msg *m;

    while ((m = cli_ev_take()) != NULL) {
        if (m->kind == CLI_MSG_LOST)
            lose(s, pid, m->text);
        free(m);
    }
}

int cli_child_supervise(struct cli_supervise *s, pid_t pid)
{
    int status, sig, ev, timeout;

    s->lost = 0;
    s->killed = 0;
    for (;;) {
        if (reap(pid, &status))
            break;
        timeout = 1000; /* the periodic waitpid */
        if (s->lost && !s->killed) {
            int64_t left = s->kill_at - now_ms();
            if (left <= 0) {
                fprintf(stderr,
                        "tumbler: %s still running after %.1f s; "
                        "sending SIGKILL\n",
                        s->what, s->grace_ms / 1000.0);
                kill(pid, SIGKILL);
                s->killed = 1;
                continue;
            }
            if (left < timeout)
                timeout = (int)left;
        }
        ev = cli_ev_wait(-1, timeout, &sig);
        if (ev == CLI_EV_MSG)
            messages(s, pid);
        else if (ev == CLI_EV_SIGNAL && sig != SIGCHLD && !cli_ev_from_kernel())
            kill(pid, sig);
    }
    messages(s, 0); /* a loss reported just as the child ended */
    return status;
}
