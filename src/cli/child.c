/* Supervising CMD while a lock is held (tumbler lock, tumbler elect); it
 * is started by spawn.c, in a process group of its own.
 *
 * The lock covers CMD's whole group, not only the process tumbler
 * started: every signal tumbler sends goes to the group, and when CMD
 * exits, what it left running in the group is stopped like CMD on a lost
 * lock (SIGTERM, SIGKILL after the grace period); the lock is released
 * only once no process is left in the group.  tumbler is a child
 * subreaper, so the group's orphans become its children: it reaps them
 * and sees the group empty even where init does not reap.  So do the
 * orphans of CMD's processes that left the group (GNU timeout, a job of
 * a set -m script): tumbler's children outside the group are stopped
 * with it, and the lock is released only once it has none.  Not the
 * children tumbler had before CMD (the shell's jobs started before it
 * exec'd tumbler): they are no part of CMD, only reaped once they end.
 * Every SIGTERM (and forwarded SIGINT, SIGQUIT, SIGHUP) is followed by
 * SIGCONT, as timeout(1) does, so that a stopped CMD acts on it.
 * Meanwhile it waits on the event pipe for:
 *  - a child's exit or stop (SIGCHLD, plus a periodic check in case a
 *    SIGCHLD was coalesced or the last process is not tumbler's child);
 *  - SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGUSR1/2 sent to tumbler: passed
 *    on to the group.  A terminal's ^C reaches the group by itself: the
 *    group has the terminal, tumbler is in the background then;
 *  - the hold's notices (connection lost, connection back): printed;
 *  - "lock lost": the group gets SIGTERM, then SIGKILL after the grace
 *    period, and the supervision ends with CLI_LOST.
 * ^Z stops CMD's group; tumbler then gives the terminal back and stops
 * itself the same way, so the shell sees its job stopped, and on SIGCONT
 * it gives the terminal to the group again and continues it.  A job
 * started in the background and brought to the foreground has the
 * terminal given to tumbler's group: CMD gets it at its first use of it
 * (cli_child_follow_stop). */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/child.h"

/* After the SIGKILL, how long to wait for the group to go: longer only if
 * some of it cannot be killed (another user's process). */
enum { KILLED_WAIT_MS = 2000 };

/* CMD's group, `sig`, unless it is gone (struct cli_child's group_gone). */
static void to_group(const struct cli_child *ch, int sig)
{
    if (!ch->group_gone)
        kill(-ch->pid, sig);
}

/* Stops tumbler with `sig`'s default action; returns once tumbler is
 * continued.  The supervision catches the stop signals meanwhile
 * (stop_together): a kill of its own would only be caught.  With `job`,
 * the rest of tumbler's group too (ignored here meanwhile: tumbler stops
 * once, by its raise), as the terminal would have stopped the whole job:
 * a script that runs tumbler, else left waiting, and its shell with it,
 * for a job that never says it stopped. */
static void stop_self(int sig, int job)
{
    struct sigaction act, old;

    memset(&act, 0, sizeof act);
    act.sa_handler = SIG_IGN;
    sigaction(sig, &act, &old);
    if (job)
        killpg(getpgrp(), sig);
    act.sa_handler = SIG_DFL;
    sigaction(sig, &act, NULL);
    raise(sig);
    sigaction(sig, &old, NULL);
}

/* A job-control stop, of CMD (cli_child_follow_stop) or of tumbler's own
 * group (the shell's `kill -TSTP %1`, a ^Z while tumbler's group has the
 * terminal): CMD's group stops, and its processes that left the group
 * (stop_strays's), the terminal back to tumbler's, then tumbler with
 * `sig` (`job`: its whole group), so that the shell sees its job stopped;
 * stopped, tumbler keeps no session alive, and nothing of CMD may run.
 * Continued, the group goes on, with the terminal if the shell gave it to
 * tumbler, once the hold is known to be still had: its session may have
 * expired meanwhile, the lock passed on.  Lost, the group stays stopped
 * until the loss's SIGTERM, which comes with its SIGCONT: CMD runs
 * nothing but its handler. */
static void to_strays(const struct cli_child *ch, int sig);

static void stop_together(struct cli_child *ch, int sig, int job)
{
    int64_t at;

    cli_child_tty(ch, 0);
    to_group(ch, SIGSTOP);
    to_strays(ch, SIGSTOP);
    at = cli_now_ms();
    stop_self(sig, job);
    if (ch->check.held != NULL &&
        ch->check.held(ch->check.arg, cli_now_ms() - at + 1) != 0) {
        ch->stopped_lost = 1;
        return;
    }
    cli_child_tty(ch, 1);
    to_group(ch, SIGCONT);
    to_strays(ch, SIGCONT);
}

/* CMD stopped (^Z, or SIGTTIN on reading the terminal from the
 * background): stop tumbler with the same signal, the terminal back to
 * the shell; once continued, continue the group, with the terminal if
 * the shell gave it to tumbler (fg, not bg).  This holds whether CMD
 * started in the foreground or in the background (tumbler stopped by a
 * ^Z before CMD started, then bg): else a CMD stopped by SIGTTIN would
 * wait for ever, with tumbler running and the shell's fg unable to reach
 * it.  Without a terminal there is no shell to tell, and a stopped CMD is
 * left to whoever stopped it. */
void cli_child_follow_stop(struct cli_child *ch, int sig)
{
    /* A SIGSTOP comes from no terminal (kill -STOP, a debugger): no shell
     * would continue tumbler, which would keep no session alive while CMD,
     * continued, ran on.  CMD is left to whoever stopped it. */
    if (ch->tty < 0 || sig == SIGSTOP)
        return;
    /* CMD touched the terminal while tumbler's group has it: the shell's
     * fg of a job started in the background (`tumbler lock ... &`), which
     * gave it to tumbler, and sent no SIGCONT to a job already running.
     * CMD gets it, and goes on: its read or write is made again. */
    if ((sig == SIGTTIN || sig == SIGTTOU) &&
        tcgetpgrp(ch->tty) == getpgrp()) {
        cli_child_tty(ch, 1);
        to_group(ch, SIGCONT);
        return;
    }
    /* All of CMD stops with tumbler, also a process of it that ignores
     * SIGTSTP: tumbler stopped keeps no session alive, and the lock may
     * pass to another meanwhile.  And the job tumbler is part of: the
     * terminal's stop went to CMD's group alone, as it has the terminal. */
    stop_together(ch, sig, 1);
}

/* One more wait status of CMD. */
static void cmd_status(struct cli_child *ch, int st, int *status, int *exited)
{
    if (WIFSTOPPED(st)) {
        cli_child_follow_stop(ch, WSTOPSIG(st));
        return;
    }
    if (WIFEXITED(st)) {
        *status = WEXITSTATUS(st);
    } else if (WIFSIGNALED(st)) {
        *status = 128 + WTERMSIG(st); /* as flock(1) and the shells */
        if ((WTERMSIG(st) == SIGINT || WTERMSIG(st) == SIGQUIT) &&
            WTERMSIG(st) != ch->forwarded && ch->tty >= 0 &&
            tcgetpgrp(ch->tty) == ch->pid)
            ch->tty_signal = WTERMSIG(st);
    } else
        *status = CLI_SOFTWARE;
    *exited = 1;
}

/* Whether `pid` is one of tumbler's children from before CMD. */
static int is_other(const struct cli_child *ch, pid_t pid)
{
    size_t i;

    for (i = 0; i < ch->nothers; i++)
        if (ch->others[i] == pid)
            return 1;
    return 0;
}

/* The children of tumbler's process but the watchdog and those it had
 * before CMD, at most `cap`: CMD and the orphans of CMD's processes
 * (tumbler is their subreaper), zombies included.  From
 * /proc/self/task/TID/children if `fast`, else (or without those files)
 * by the parent pid of every process in /proc: proc(5) says the task
 * files may miss a child while others exit or are reparented. */
static size_t scan(const struct cli_child *ch, pid_t *out, size_t cap, int fast)
{
    char path[320], buf[512];
    const char *tasks = "/proc/self/task";
    struct dirent *e;
    size_t n = 0;
    long v, ppid;
    FILE *f;
    DIR *d;
    int by_task;

    snprintf(path, sizeof path, "%s/%ld/children", tasks, (long)getpid());
    by_task = fast && access(path, R_OK) == 0; /* CONFIG_PROC_CHILDREN */
    if ((d = opendir(by_task ? tasks : "/proc")) == NULL)
        return 0;
    while (n < cap && (e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        if (by_task) {
            snprintf(path, sizeof path, "%s/%s/children", tasks, e->d_name);
            if ((f = fopen(path, "re")) == NULL)
                continue;
            while (n < cap && fscanf(f, "%ld", &v) == 1)
                if ((pid_t)v != ch->watchdog && !is_other(ch, (pid_t)v))
                    out[n++] = (pid_t)v;
            fclose(f);
            continue;
        }
        /* "PID (COMM) STATE PPID ...": COMM may hold anything. */
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        if ((f = fopen(path, "re")) == NULL)
            continue;
        v = 0;
        if (fgets(buf, sizeof buf, f) != NULL && strrchr(buf, ')') != NULL &&
            sscanf(strrchr(buf, ')') + 1, " %*c %ld", &ppid) == 1 &&
            ppid == (long)getpid())
            v = strtol(e->d_name, NULL, 10);
        fclose(f);
        if (v > 0 && (pid_t)v != ch->watchdog && !is_other(ch, (pid_t)v))
            out[n++] = (pid_t)v;
    }
    closedir(d);
    return n;
}

static size_t children(const struct cli_child *ch, pid_t *out, size_t cap)
{
    return scan(ch, out, cap, 1);
}

enum { MAX_STRAYS = 1024 };

/* Whether the group's signals reach `kid`, a child of tumbler's.  Not
 * once the group is gone: its number may be another group's by then (one
 * a process of CMD's given that pid made with setsid). */
static int in_group(const struct cli_child *ch, pid_t kid)
{
    return !ch->group_gone && getpgid(kid) == ch->pid;
}

/* `sig` to the processes of CMD's that left its group, once orphaned
 * (tumbler's children outside it, less those from before CMD). */
static void to_strays(const struct cli_child *ch, int sig)
{
    pid_t kids[MAX_STRAYS];
    size_t n = children(ch, kids, MAX_STRAYS), i;

    for (i = 0; i < n; i++)
        if (!in_group(ch, kids[i]))
            kill(kids[i], sig);
}

int cli_child_note_others(struct cli_child *ch)
{
    pid_t kids[MAX_STRAYS];
    size_t n;

    free(ch->others);
    ch->others = NULL;
    ch->nothers = 0;
    if ((n = children(ch, kids, MAX_STRAYS)) == 0)
        return 0;
    if ((ch->others = malloc(n * sizeof *ch->others)) == NULL)
        return -1;
    memcpy(ch->others, kids, n * sizeof *kids);
    ch->nothers = n;
    return 0;
}

/* Reaps those of tumbler's children from before CMD that ended, and
 * forgets them: their pid may be given to one of CMD's next. */
static void reap_others(struct cli_child *ch)
{
    size_t i = 0;
    pid_t r;

    while (i < ch->nothers) {
        r = waitpid(ch->others[i], NULL, WNOHANG);
        if (r == 0 || (r < 0 && errno == EINTR))
            i++;
        else /* reaped, or not tumbler's child at all */
            ch->others[i] = ch->others[--ch->nothers];
    }
}

void cli_child_pass_signal(int sig)
{
    struct rlimit none = {0, 0};
    sigset_t set;

    (void)setrlimit(RLIMIT_CORE, &none); /* ^\ dumps no core of tumbler */
    signal(sig, SIG_DFL);
    sigemptyset(&set);
    sigaddset(&set, sig);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    killpg(getpgrp(), sig);
}

/* A terminating signal, then SIGCONT, as timeout(1) sends them: a
 * stopped process acts on it (its handler, or death) only once
 * continued, and would otherwise wait for the SIGKILL after -k. */
static void terminate(pid_t who, int sig)
{
    kill(who, sig);
    if (sig != SIGKILL)
        kill(who, SIGCONT);
}

static void terminate_group(const struct cli_child *ch, int sig)
{
    if (!ch->group_gone)
        terminate(-ch->pid, sig);
}

/* Reaps what ended in the group, CMD included (also if it moved to
 * another group), and tumbler's other children (orphans of CMD's
 * processes that left the group, and those from before CMD); 1 once CMD
 * has exited and no process is left in its group (EPERM: some are, of
 * another user) nor among the orphans (those from before CMD are not
 * waited for). */
static int reap(struct cli_child *ch, int *status, int *exited)
{
    pid_t kids[MAX_STRAYS], r;
    size_t n, i, alive = 0;
    int st;

    for (;;) {
        r = waitpid(-ch->pid, &st, WNOHANG | WUNTRACED);
        if (r <= 0 && !*exited)
            r = waitpid(ch->pid, &st, WNOHANG | WUNTRACED);
        if (r <= 0)
            break;
        if (r == ch->pid)
            cmd_status(ch, st, status, exited);
    }
    reap_others(ch);
    n = children(ch, kids, MAX_STRAYS);
    for (i = 0; i < n; i++) {
        r = waitpid(kids[i], &st,
                    WNOHANG | (kids[i] == ch->pid ? WUNTRACED : 0));
        if (r == ch->pid)
            cmd_status(ch, st, status, exited);
        else if (r == 0)
            alive++;
    }
    if (!*exited)
        return 0;
    if (!ch->group_gone && kill(-ch->pid, 0) < 0 && errno == ESRCH)
        ch->group_gone = 1;
    if (alive > 0 || !ch->group_gone) /* EPERM: some of another user */
        return 0;
    /* The last word, before tumbler ends and its orphans go to init: the
     * parent pid of every process, which no exit elsewhere hides. */
    n = scan(ch, kids, MAX_STRAYS, 0);
    for (i = 0; i < n; i++)
        if (waitpid(kids[i], &st, WNOHANG) == 0)
            return 0;
    return 1;
}

/* Sends the processes of CMD's that left its group, once orphaned
 * (tumbler's children outside the group, less those from before CMD),
 * what the group got: SIGTERM (and SIGCONT) once each, SIGKILL once the
 * group had it. */
static void stop_strays(struct cli_supervise *s, struct cli_child *ch)
{
    pid_t kids[MAX_STRAYS], *more;
    size_t n, i, j;

    n = children(ch, kids, MAX_STRAYS);
    for (i = 0; i < n; i++) {
        if (in_group(ch, kids[i]))
            continue; /* the group's signal reaches it */
        if (s->killed) {
            kill(kids[i], SIGKILL);
            continue;
        }
        for (j = 0; j < s->nterm && s->termed[j] != kids[i]; j++)
            ;
        if (j < s->nterm)
            continue;
        if (s->nterm == s->capterm) {
            size_t cap = s->capterm ? 2 * s->capterm : 16;
            if ((more = realloc(s->termed, cap * sizeof *more)) == NULL)
                continue; /* it gets the SIGKILL */
            s->termed = more;
            s->capterm = cap;
        }
        s->termed[s->nterm++] = kids[i];
        terminate(kids[i], SIGTERM);
    }
}

/* Ends the group and the strays: SIGTERM (and SIGCONT, for a stopped
 * CMD), then SIGKILL once the grace period is over (next_timeout);
 * SIGKILL at once without one. */
static void stop_group(struct cli_supervise *s, struct cli_child *ch)
{
    if (s->stopping)
        return;
    s->stopping = 1;
    /* The hold is nothing to CMD's group from now on: stopped and
     * continued with tumbler, it goes on acting on its SIGTERM. */
    ch->check.held = NULL;
    terminate_group(ch, s->grace_ms > 0 ? SIGTERM : SIGKILL);
    s->killed = s->grace_ms == 0;
    s->kill_at = cli_now_ms() + s->grace_ms;
    stop_strays(s, ch);
}

/* `gone`: the group has ended already (never signal it then: its number
 * may belong to another group by now). */
static void lose(struct cli_supervise *s, struct cli_child *ch, int gone,
                 const char *why)
{
    if (s->lost)
        return;
    s->lost = 1;
    if (gone || s->stopping) {
        cli_notice("%s as %s ended", why, s->what);
        return;
    }
    stop_group(s, ch); /* before anything is said */
    cli_notice("%s; sending SIGTERM to %s and its process group (%ld)%s", why,
               s->what, (long)ch->pid, s->grace_ms > 0 ? "" : " and SIGKILL");
}

/* Handles the queued messages: a loss, or a notice of the hold. */
static void messages(struct cli_supervise *s, struct cli_child *ch, int gone)
{
    struct cli_msg *m;

    while ((m = cli_ev_take()) != NULL) {
        if (m->kind == CLI_MSG_LOST)
            lose(s, ch, gone, m->text);
        else if (m->kind == CLI_MSG_TEXT)
            cli_notice("%s", m->text);
        free(m);
    }
}

/* How long to wait for the next event; < 0 once waiting is pointless
 * (the group survived its SIGKILL). */
static int next_timeout(struct cli_supervise *s, struct cli_child *ch)
{
    int64_t left;

    if (!s->stopping)
        return 1000; /* the periodic check */
    left = s->kill_at - cli_now_ms();
    if (!s->killed && left <= 0) {
        to_group(ch, SIGKILL);
        s->killed = 1;
        /* The wait after it counts from now: tumbler itself may have been
         * stopped well past the grace period. */
        s->kill_at = cli_now_ms();
        left = 0;
        stop_strays(s, ch);
        cli_notice("%s %s still runs after %.1f s; sending SIGKILL",
                   ch->group_gone ? "what was left by" : "the process group of",
                   s->what, s->grace_ms / 1000.0);
    }
    if (s->killed)
        left += KILLED_WAIT_MS;
    if (left <= 0)
        return -1;
    return left < 100 ? (int)left : 100;
}

int cli_child_supervise(struct cli_supervise *s, struct cli_child *ch)
{
    int status = CLI_SOFTWARE, exited = 0, sig, ev, timeout;

    s->lost = 0;
    s->stopping = 0;
    s->killed = 0;
    s->termed = NULL;
    s->nterm = s->capterm = 0;
    while (!reap(ch, &status, &exited)) {
        if (exited) /* what CMD left running must not outlive the lock */
            stop_group(s, ch);
        if (s->stopping) /* those orphaned since */
            stop_strays(s, ch);
        if ((timeout = next_timeout(s, ch)) < 0) {
            cli_notice("processes of the group of %s survived SIGKILL",
                       s->what);
            break;
        }
        ev = cli_ev_wait(-1, timeout, &sig);
        if (ev == CLI_EV_SIGNAL &&
            (sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU))
            stop_together(ch, sig, 0); /* sent to tumbler itself */
        else if (ev == CLI_EV_SIGNAL && sig != SIGCHLD) {
            /* The terminating ones with SIGCONT: a stopped CMD must act
             * on them.  SIGUSR1 and SIGUSR2 leave it as it is. */
            if (sig == SIGINT || sig == SIGQUIT || sig == SIGTERM ||
                sig == SIGHUP)
                terminate_group(ch, sig);
            else
                to_group(ch, sig);
            if (sig == SIGINT || sig == SIGQUIT)
                ch->forwarded = sig; /* not the terminal's, then */
        }
        /* At every turn: signals come first from cli_ev_wait, and a
         * stream of them (SIGCHLD of short-lived orphans) must not hold
         * a loss back. */
        messages(s, ch, 0);
    }
    messages(s, ch, 1); /* a loss reported just as the group ended */
    free(s->termed);
    s->termed = NULL;
    cli_child_finish(ch); /* the stops no longer caught */
    return status;
}
