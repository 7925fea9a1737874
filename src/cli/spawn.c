/* Starting CMD for tumbler lock / tumbler elect.
 *
 * CMD must not outlive the lock, and CMD is often more than one process
 * (a script and what it runs).  So CMD leads a process group of its own:
 * every signal tumbler passes on, and the SIGTERM and SIGKILL of a lost
 * lock, go to the whole group (child.c).  Once tumbler is gone (even by
 * SIGKILL), nobody keeps the session alive and the lock goes to the next
 * waiter, so the group must die with it:
 *  - a watchdog process, forked from tumbler, outside the group, waits
 *    for the end of a pipe only tumbler writes to.  The kernel closes it
 *    when tumbler dies, however it dies; the watchdog then SIGKILLs the
 *    whole group.  When CMD's group has ended, tumbler writes a byte
 *    instead, and the watchdog exits quietly;
 *  - CMD itself also asks for SIGKILL when tumbler dies
 *    (PR_SET_PDEATHSIG), in case the watchdog was killed on its own;
 *  - CMD runs nothing before tumbler has seen the watchdog started, so
 *    there is no moment where tumbler's death would leave CMD's children
 *    running.
 * A process that leaves the group (setsid, setpgid: daemons do) is out of
 * reach of all of this; only once orphaned does it become tumbler's child
 * (tumbler is a child subreaper), and then child.c stops it with the
 * group.  docs/cli.md says so.
 *
 * A group of its own is a background job for the terminal: if tumbler is
 * the terminal's foreground job, CMD's group takes the terminal over (as
 * a shell gives it to a job), so CMD can read from it and gets ^C and ^Z
 * from it; tumbler takes it back when the group ends.  tumbler keeps the
 * terminal in mind also when it is a background job of a shell (started
 * with &, or stopped by ^Z and continued with bg before CMD started):
 * CMD reading the terminal then stops, tumbler stops with it, and once
 * the shell's fg continues it, CMD's group gets the terminal (child.c).
 * tumbler hands the terminal over itself, after the fork and only if its
 * group has it at that moment: a ^Z that stopped tumbler meanwhile has
 * given the terminal back to the shell, and it stays the shell's.  In a
 * pipeline (`tumbler lock ... | less`) the terminal is the pipeline's,
 * whose other commands may read it: CMD runs without it.
 *
 * posix_spawn can do none of this; hence fork and exec by hand.  tumbler
 * is multi-threaded (the library's I/O thread), so between fork and exec
 * the child only makes system calls: the PATH search and the environment
 * are prepared before the fork, and an exec failure travels back to the
 * parent as an errno on a close-on-exec socket, which also carries the
 * child's word that it left tumbler's group, and the go.  All signals
 * are blocked across the forks, so tumbler's handlers never run in the
 * children; CMD resets them to their defaults (or to ignored, for those
 * ignored when tumbler started) and unblocks before exec.
 * A CMD that cannot be run is reported as 127 (not found) or 126 (not
 * executable), as env(1) and the shells do. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/child.h"

extern char **environ;

/* environ without any earlier value of our variables, plus `extra`
 * (less its bare names: only removed). */
static char **make_env(char *const *extra)
{
    size_t n = 0, k = 0, i, j;
    char **env;

    while (environ[n] != NULL)
        n++;
    while (extra[k] != NULL)
        k++;
    if ((env = calloc(n + k + 1, sizeof *env)) == NULL)
        return NULL;
    for (i = 0, j = 0; i < n; i++) {
        size_t e;
        int dup = 0;
        for (e = 0; e < k && !dup; e++) {
            size_t name = strcspn(extra[e], "=");
            dup = strncmp(environ[i], extra[e], name) == 0 &&
                  environ[i][name] == '=';
        }
        if (!dup)
            env[j++] = environ[i];
    }
    for (i = 0; i < k; i++)
        if (strchr(extra[i], '=') != NULL)
            env[j++] = extra[i];
    env[j] = NULL;
    return env;
}

/* The files execvp would try for `name`, in order (NULL-ended, one
 * allocation). */
static char **candidates(const char *name)
{
    const char *path = getenv("PATH"), *p;
    size_t dirs = 1, len, nlen = strlen(name), off;
    char **v, *buf;

    if (strchr(name, '/') != NULL || *name == '\0')
        path = "";
    else if (path == NULL)
        path = "/bin:/usr/bin";
    for (p = path; *p; p++)
        dirs += *p == ':';
    len = (dirs + 1) * sizeof(char *) + strlen(path) + dirs * (nlen + 2) + 1;
    if ((v = malloc(len)) == NULL)
        return NULL;
    buf = (char *)(v + dirs + 1);
    if (*path == '\0') {
        memcpy(buf, name, nlen + 1);
        v[0] = buf;
        v[1] = NULL;
        return v;
    }
    for (dirs = 0, p = path;; dirs++) {
        size_t dl = strcspn(p, ":");
        off = 0;
        if (dl == 0) /* an empty entry is the current directory */
            buf[off++] = '.';
        memcpy(buf + off, p, dl);
        off += dl;
        buf[off++] = '/';
        memcpy(buf + off, name, nlen + 1);
        v[dirs] = buf;
        buf += off + nlen + 1;
        if (p[dl] == '\0')
            break;
        p += dl + 1;
    }
    v[dirs + 1] = NULL;
    return v;
}

/* What the child and the watchdog get, prepared before the forks. */
struct start {
    char *const *argv;
    char **files;
    char **env;
    int sock;        /* the child's end of the socketpair */
    int parent_sock; /* tumbler's end: closed in the child */
    pid_t parent;
    int maxfd; /* for the watchdog, if close_range is missing */
};

/* In the child: system calls only.  It leads a new process group, says
 * so, and runs nothing before tumbler's go, which comes once the
 * watchdog exists and the group has the terminal if it is to have it. */
static void child(const struct start *st)
{
    static const int stops[] = {SIGTSTP, SIGTTIN, SIGTTOU};
    struct sigaction dfl, ign;
    sigset_t none;
    int sig, err = ENOENT, e;
    size_t i;
    char *const *f;
    char go;

    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    ign = dfl;
    ign.sa_handler = SIG_IGN;
    /* What tumbler started with: a signal ignored then (nohup) stays
     * ignored, the others get their default action. */
    for (sig = 1; sig < NSIG; sig++) /* fails harmlessly for some */
        (void)sigaction(sig, cli_ev_ignored(sig) ? &ign : &dfl, NULL);
    close(st->parent_sock);
    (void)setpgid(0, 0);
    /* Out of tumbler's group now.  A stop sent to that group before (a ^Z
     * while tumbler forked) is pending here too, blocked: it would stop
     * CMD as it starts, after the shell has continued the job it stopped.
     * It was tumbler's; ignoring a signal discards it. */
    for (i = 0; i < sizeof stops / sizeof stops[0]; i++) {
        (void)sigaction(stops[i], &ign, NULL);
        if (!cli_ev_ignored(stops[i]))
            (void)sigaction(stops[i], &dfl, NULL);
    }
    (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != st->parent) /* died before the prctl took effect */
        _exit(CLI_SOFTWARE);
    /* Only from now on may the group get the terminal: a ^Z from it is
     * then for CMD, and stops it as it starts. */
    if (write(st->sock, "r", 1) != 1 || read(st->sock, &go, 1) != 1)
        _exit(CLI_SOFTWARE); /* tumbler gave up, or died */
    sigemptyset(&none);
    (void)sigprocmask(SIG_SETMASK, &none, NULL);
    for (f = st->files; *f != NULL; f++) {
        execve(*f, st->argv, st->env);
        e = errno;
        if (e == EACCES)
            err = e; /* keep looking, but report it if nothing runs */
        else if (e != ENOENT && e != ENOTDIR) {
            err = e;
            break;
        }
    }
    while (write(st->sock, &err, sizeof err) < 0 && errno == EINTR)
        ;
    _exit(CLI_NOTFOUND);
}

static void close_all_but(int keep, int maxfd)
{
    int fd;

    if ((keep == 0 || close_range(0, (unsigned)keep - 1, 0) == 0) &&
        close_range((unsigned)keep + 1, ~0U, 0) == 0)
        return;
    for (fd = 0; fd < maxfd; fd++) /* a kernel without close_range */
        if (fd != keep)
            close(fd);
}

/* The watchdog: system calls only.  In a process group of its own and
 * with every signal blocked, so that nothing sent to tumbler's group or
 * to CMD's (a ^C, a kill of the job) ends it; it holds nothing but the
 * read end of a pipe that only tumbler writes to.  A byte there means
 * "stand down"; end of file means tumbler is gone, and then nobody keeps
 * the lock: the whole group gets SIGKILL. */
static void watchdog(int fd, pid_t pgid, int maxfd)
{
    ssize_t n;
    char b;

    (void)setpgid(0, 0);
    close_all_but(fd, maxfd);
    (void)chdir("/");
    while ((n = read(fd, &b, 1)) < 0 && errno == EINTR)
        ;
    if (n != 1)
        (void)kill(-pgid, SIGKILL);
    _exit(0);
}

/* Forks the watchdog of `ch`'s group (signals blocked); 0 or an errno. */
static int start_watchdog(struct cli_child *ch, int maxfd)
{
    int p[2], err;

    if (pipe2(p, O_CLOEXEC) != 0)
        return errno;
    ch->watchdog = fork();
    if (ch->watchdog == 0)
        watchdog(p[0], ch->pid, maxfd);
    err = errno;
    /* Also here: out of tumbler's group before CMD runs, whichever of the
     * two runs first, so a kill of that group cannot reach it. */
    if (ch->watchdog > 0)
        (void)setpgid(ch->watchdog, ch->watchdog);
    close(p[0]);
    if (ch->watchdog < 0) {
        close(p[1]);
        ch->watchdog = 0;
        return err;
    }
    ch->watch_fd = p[1];
    return 0;
}

static int is_pipe(int fd)
{
    struct stat st;

    return fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode);
}

/* Whether tumbler is one command of a pipeline: its input or output a
 * pipe, and another process in its group, neither its parent (a shell
 * waiting for it) nor its child (a `crond & exec tumbler ...`'s). */
static int in_pipeline(void)
{
    pid_t self = getpid(), group = getpgrp();
    char path[64], buf[512], *end;
    long pid, ppid, pgrp;
    struct dirent *e;
    int found = 0;
    FILE *f;
    DIR *d;

    if ((!is_pipe(STDIN_FILENO) && !is_pipe(STDOUT_FILENO)) ||
        (d = opendir("/proc")) == NULL)
        return 0;
    while (!found && (e = readdir(d)) != NULL) {
        pid = strtol(e->d_name, NULL, 10);
        if (pid <= 0 || pid == (long)self || pid == (long)getppid())
            continue;
        snprintf(path, sizeof path, "/proc/%.20s/stat", e->d_name);
        if ((f = fopen(path, "re")) == NULL)
            continue;
        /* "PID (COMM) STATE PPID PGRP ...": COMM may hold anything. */
        if (fgets(buf, sizeof buf, f) != NULL &&
            (end = strrchr(buf, ')')) != NULL &&
            sscanf(end + 1, " %*c %ld %ld", &ppid, &pgrp) == 2)
            found = pgrp == (long)group && ppid != (long)self;
        fclose(f);
    }
    closedir(d);
    return found;
}

/* The controlling terminal, if tumbler runs as a job on it: its group is
 * the terminal's foreground group (CMD's group then takes the terminal
 * over, to read from it and to get its ^C and ^Z), or a background group
 * a job-control shell made (the parent is of the same session, in another
 * group): the shell's fg may give it the terminal later.  Else -1: no
 * terminal, one whose stops nobody would see, or a pipeline's. */
static int job_tty(void)
{
    pid_t parent = getppid();
    int fd;

    /* A command a shell without job control runs in the background (`&`
     * in a script) starts with SIGINT ignored and its input from
     * /dev/null, in the script's own group: the terminal is the script's,
     * not CMD's to take.  (SIGINT alone is ignored in the foreground too,
     * after a script's `trap '' INT`.) */
    if ((cli_ev_ignored(SIGINT) && !isatty(STDIN_FILENO)) || in_pipeline())
        return -1;
    fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (fd < 0 || tcgetpgrp(fd) == getpgrp())
        return fd;
    if (getsid(parent) == getsid(0) && getpgid(parent) != getpgrp())
        return fd;
    close(fd);
    return -1;
}

void cli_child_tty(struct cli_child *ch, int to_group)
{
    pid_t from = to_group ? getpgrp() : ch->pid;
    sigset_t ttou, old;

    /* Only from the one who has it: once the shell has taken it (a job
     * stopped, or continued with bg), it stays the shell's. */
    if (ch->tty < 0 || tcgetpgrp(ch->tty) != from)
        return;
    /* From the background, tcsetpgrp would stop tumbler with SIGTTOU,
     * unless it is blocked. */
    sigemptyset(&ttou);
    sigaddset(&ttou, SIGTTOU);
    pthread_sigmask(SIG_BLOCK, &ttou, &old);
    (void)tcsetpgrp(ch->tty, to_group ? ch->pid : getpgrp());
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* The job-control stops, caught (`on`) from just before CMD's go to its
 * end, for the supervision (stop_together): one between would stop
 * tumbler alone, CMD running on with no session kept alive.  Those
 * ignored when tumbler started stay so. */
static void catch_stops(int on)
{
    static const int stops[] = {SIGTSTP, SIGTTIN, SIGTTOU};
    struct sigaction dfl;
    size_t i;

    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    for (i = 0; i < sizeof stops / sizeof stops[0]; i++)
        if (on)
            (void)cli_ev_pass_on(stops[i]);
        else if (!cli_ev_ignored(stops[i]))
            sigaction(stops[i], &dfl, NULL);
}

void cli_child_finish(struct cli_child *ch)
{
    static const char stand_down = 1;

    if (ch->watch_fd >= 0) {
        while (write(ch->watch_fd, &stand_down, 1) < 0 && errno == EINTR)
            ;
        close(ch->watch_fd);
        ch->watch_fd = -1;
    }
    if (ch->watchdog > 0)
        while (waitpid(ch->watchdog, NULL, 0) < 0 && errno == EINTR)
            ;
    ch->watchdog = 0;
    cli_child_tty(ch, 0);
    if (ch->tty >= 0)
        close(ch->tty);
    ch->tty = -1;
    free(ch->others);
    ch->others = NULL;
    ch->nothers = 0;
    catch_stops(0);
}

/* Waits for the child's exec (end of file on `sock`, which closes with
 * it) or for its failure (an errno, returned; else 0).  A ^Z that comes
 * once the group has the terminal stops the child before its exec, with
 * the socket still open: that stop is followed as CMD's are, else
 * tumbler would wait here for ever, with the terminal in a stopped group
 * and the shell out of reach.  A SIGCHLD ends the poll; its timeout is
 * for one that came just before it. */
static int await_exec(struct cli_child *ch, int sock)
{
    struct pollfd p = {sock, POLLIN, 0};
    siginfo_t si;
    int err = 0;
    ssize_t n;

    for (;;) {
        memset(&si, 0, sizeof si);
        if (waitid(P_PID, (id_t)ch->pid, &si, WSTOPPED | WNOHANG) == 0 &&
            si.si_pid == ch->pid)
            cli_child_follow_stop(ch, si.si_status);
        /* Lost meanwhile: the child stays stopped before its exec, and
         * the supervision's SIGTERM ends it. */
        if (ch->stopped_lost)
            return 0;
        if (poll(&p, 1, 100) > 0)
            break;
    }
    while ((n = read(sock, &err, sizeof err)) < 0 && errno == EINTR)
        ;
    return n == (ssize_t)sizeof err ? err : 0;
}

static int spawn_error(const char *name, int err)
{
    int status =
        err == ENOENT ? CLI_NOTFOUND
        : err == EACCES || err == ENOEXEC || err == EPERM || err == EISDIR
            ? CLI_NOEXEC
            : CLI_OSERR;

    return cli_notice_err(status, "cannot run %s: %s", name, strerror(err));
}

/* Forks CMD and its watchdog, with every signal blocked so that
 * tumbler's handlers never run in them.  0, or an errno. */
static int fork_both(struct start *st, struct cli_child *ch)
{
    sigset_t all, old;
    int err = 0;

    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    ch->pid = fork();
    if (ch->pid == 0)
        child(st);
    if (ch->pid < 0) {
        err = errno;
        ch->pid = 0;
    } else {
        /* Also here, as the shells do: the group exists from now on,
         * whichever of the two runs first. */
        (void)setpgid(ch->pid, ch->pid);
        err = start_watchdog(ch, st->maxfd);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return err;
}

int cli_child_spawn(char *const *argv, char *const *extra_env,
                    const struct cli_hold_check *check, struct cli_child *ch)
{
    struct start st = {.argv = argv,
                       .files = candidates(argv[0]),
                       .env = make_env(extra_env),
                       .sock = -1,
                       .parent_sock = -1,
                       .parent = getpid(),
                       .maxfd = 65536};
    int sv[2] = {-1, -1}, err = 0, rv = CLI_OK;
    char ready;
    long maxfd = sysconf(_SC_OPEN_MAX);

    memset(ch, 0, sizeof *ch);
    ch->watch_fd = ch->tty = -1;
    if (check != NULL)
        ch->check = *check;
    if (maxfd > 0 && maxfd < st.maxfd)
        st.maxfd = (int)maxfd;
    if (st.env == NULL || st.files == NULL) {
        rv = cli_notice_err(CLI_OSERR, "out of memory");
        goto out;
    }
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        rv = cli_notice_err(CLI_OSERR, "socketpair: %s", strerror(errno));
        goto out;
    }
    st.parent_sock = sv[0];
    st.sock = sv[1];
    ch->tty = job_tty();
    /* Orphans of CMD's group become tumbler's children: it can wait for
     * them, and their pids stay taken until it has. */
    (void)prctl(PR_SET_CHILD_SUBREAPER, 1);
    /* What tumbler's process had as children before (a shell's `crond &
     * exec tumbler ...`), and orphans given to it since it became a
     * subreaper, are none of CMD's (child.c). */
    if (cli_child_note_others(ch) != 0) {
        close(sv[1]);
        cli_child_finish(ch);
        rv = cli_notice_err(CLI_OSERR, "out of memory");
        goto out;
    }
    err = fork_both(&st, ch);
    close(sv[1]);
    if (err != 0) {
        if (ch->pid > 0) { /* it waits for the go: never ran CMD */
            kill(ch->pid, SIGKILL);
            while (waitpid(ch->pid, NULL, 0) < 0 && errno == EINTR)
                ;
        }
        cli_child_finish(ch);
        rv = cli_notice_err(CLI_OSERR, "fork: %s", strerror(err));
        goto out;
    }
    /* Once the child is out of tumbler's group, and before the go, so
     * that CMD has the terminal from its start; here rather than in the
     * child, which would take it even from the shell if a ^Z stopped
     * tumbler since it looked.  (Nothing read: the child died; the go
     * then fails, and its status is reaped as CMD's.) */
    while (read(sv[0], &ready, 1) < 0 && errno == EINTR)
        ;
    /* A loss that came with or since the grant: CMD never runs. */
    if (ch->check.held != NULL && ch->check.held(ch->check.arg, -1) != 0) {
        kill(ch->pid, SIGKILL); /* it waits for the go */
        while (waitpid(ch->pid, NULL, 0) < 0 && errno == EINTR)
            ;
        cli_child_finish(ch);
        rv = cli_notice_err(CLI_LOST, "the hold was lost before %s started",
                            argv[0]);
        goto out;
    }
    cli_child_tty(ch, 1);
    catch_stops(1);
    while (write(sv[0], "g", 1) < 0 && errno == EINTR)
        ;
    if ((err = await_exec(ch, sv[0])) != 0) {
        while (waitpid(ch->pid, NULL, 0) < 0 && errno == EINTR)
            ;
        cli_child_finish(ch);
        rv = spawn_error(argv[0], err);
    }
out:
    if (sv[0] >= 0)
        close(sv[0]);
    free(st.files);
    free(st.env);
    return rv;
}
