/* Starting CMD for tumbler lock / tumbler elect.
 *
 * CMD must not outlive tumbler: once tumbler is gone (even by SIGKILL),
 * nobody keeps the session alive and the lock goes to the next waiter, so
 * a CMD still running would no longer run alone.  The child therefore asks
 * the kernel for SIGKILL when its parent dies (PR_SET_PDEATHSIG), which
 * posix_spawn cannot do; hence fork and exec by hand.
 *
 * tumbler is multi-threaded (the library's I/O thread), so between fork
 * and exec the child only makes system calls: the PATH search and the
 * environment are prepared before the fork, and an exec failure travels
 * back to the parent as an errno on a close-on-exec pipe.  All signals are
 * blocked across the fork, so tumbler's handlers never run in the child;
 * the child resets them to their defaults and unblocks before exec.  A
 * CMD that cannot be run is reported as 127 (not found) or 126 (not
 * executable), as env(1) and the shells do. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/child.h"

extern char **environ;

/* environ without any earlier value of our variables, plus `extra`. */
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
            size_t name = strcspn(extra[e], "=") + 1;
            dup = strncmp(environ[i], extra[e], name) == 0;
        }
        if (!dup)
            env[j++] = environ[i];
    }
    for (i = 0; i < k; i++)
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

/* In the child: system calls only. */
static void child(char *const *argv, char **files, char **env, int errfd,
                  pid_t parent)
{
    struct sigaction dfl;
    sigset_t none;
    int sig, err = ENOENT, e;

    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    for (sig = 1; sig < NSIG; sig++)
        (void)sigaction(sig, &dfl, NULL); /* fails harmlessly for some */
    (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) /* died before the prctl took effect */
        _exit(CLI_SOFTWARE);
    sigemptyset(&none);
    (void)sigprocmask(SIG_SETMASK, &none, NULL);
    for (; *files != NULL; files++) {
        execve(*files, argv, env);
        e = errno;
        if (e == EACCES)
            err = e; /* keep looking, but report it if nothing runs */
        else if (e != ENOENT && e != ENOTDIR) {
            err = e;
            break;
        }
    }
    while (write(errfd, &err, sizeof err) < 0 && errno == EINTR)
        ;
    _exit(CLI_NOTFOUND);
}

static int spawn_error(const char *name, int err)
{
    int status =
        err == ENOENT ? CLI_NOTFOUND
        : err == EACCES || err == ENOEXEC || err == EPERM || err == EISDIR
            ? CLI_NOEXEC
            : CLI_OSERR;

    return cli_err(NULL, status, "cannot run %s: %s", name, strerror(err));
}

int cli_child_spawn(char *const *argv, char *const *extra_env, pid_t *pid)
{
    char **env = make_env(extra_env), **files = candidates(argv[0]);
    int fds[2] = {-1, -1}, err = 0, rv = CLI_OK;
    sigset_t all, old;
    pid_t parent = getpid();
    ssize_t n;

    if (env == NULL || files == NULL) {
        rv = cli_err(NULL, CLI_OSERR, "out of memory");
        goto out;
    }
    if (pipe2(fds, O_CLOEXEC) != 0) {
        rv = cli_err(NULL, CLI_OSERR, "pipe: %s", strerror(errno));
        goto out;
    }
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    *pid = fork();
    if (*pid == 0)
        child(argv, files, env, fds[1], parent);
    err = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    close(fds[1]);
    if (*pid < 0) {
        rv = cli_err(NULL, CLI_OSERR, "fork: %s", strerror(err));
        goto out;
    }
    /* EOF: the exec happened (the pipe closed with it). */
    while ((n = read(fds[0], &err, sizeof err)) < 0 && errno == EINTR)
        ;
    if (n == (ssize_t)sizeof err) {
        while (waitpid(*pid, NULL, 0) < 0 && errno == EINTR)
            ;
        rv = spawn_error(argv[0], err);
    }
out:
    if (fds[0] >= 0)
        close(fds[0]);
    free(files);
    free(env);
    return rv;
}
