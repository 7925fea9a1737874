/* Signals and the library's I/O thread reach the main thread here.
 *
 * The library runs callbacks (watch events, session states, lock lost) on
 * its own thread, and signals arrive at any moment; neither may print or
 * act directly, because the main thread may be inside readline or waiting
 * for a child.  Both only append to a queue and write one byte to a pipe
 * (a signal handler writes the signal number, async-signal-safe); the main
 * thread polls the pipe and acts.  This is process-wide state by nature:
 * a signal handler cannot be handed a context pointer. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

static int ev_pipe[2] = {-1, -1};
static pthread_mutex_t ev_mu = PTHREAD_MUTEX_INITIALIZER;
static struct cli_msg *ev_head, **ev_tail = &ev_head;
/* Signals read off the pipe while draining it for messages, kept for the
 * next cli_ev_wait.  One bit per signal number below 64. */
static uint64_t ev_pending_sigs;

/* SIGQUIT as SIGINT: ^\ where tumbler has the terminal (a pipeline's)
 * must not kill it with its session open, nor leave CMD to the watchdog. */
static const int handled[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGCHLD};
/* The signals ignored when tumbler started (nohup's SIGHUP, a
 * non-interactive shell's SIGINT for a background job): a command
 * tumbler runs inherits them ignored, as exec would give them. */
static sigset_t entry_ignored;

/* A pipe byte: the signal number. */
static void on_signal(int sig)
{
    int saved = errno;
    unsigned char b = (unsigned char)sig;
    ssize_t r;

    r = write(ev_pipe[1], &b, 1);

    (void)r; /* a full pipe already holds a wake-up */
    errno = saved;
}

int cli_ev_catch(int sig)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    return sigaction(sig, &sa, NULL);
}

int cli_ev_ignored(int sig)
{
    return sigismember(&entry_ignored, sig) == 1;
}

int cli_ev_pass_on(int sig)
{
    return cli_ev_ignored(sig) ? 0 : cli_ev_catch(sig);
}

int64_t cli_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int cli_ev_init(void)
{
    struct sigaction old;
    size_t i;
    int sig;

    if (ev_pipe[0] >= 0)
        return 0;
    sigemptyset(&entry_ignored);
    for (sig = 1; sig < NSIG; sig++)
        if (sigaction(sig, NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            sigaddset(&entry_ignored, sig);
    if (pipe2(ev_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
        return -1;
    /* SIGCHLD is needed whatever it was; the others stay ignored if they
     * were (so they are passed on to no command either). */
    for (i = 0; i < sizeof handled / sizeof handled[0]; i++)
        if ((handled[i] == SIGCHLD ? cli_ev_catch(handled[i])
                                   : cli_ev_pass_on(handled[i])) != 0)
            return -1;
    /* A reader that went away (a pipe to head(1)) ends output with EPIPE,
     * not with a silent death. */
    signal(SIGPIPE, SIG_IGN);
    return 0;
}

void cli_ev_mask(int how)
{
    sigset_t s;
    size_t i;

    sigemptyset(&s);
    for (i = 0; i < sizeof handled / sizeof handled[0]; i++)
        sigaddset(&s, handled[i]);
    pthread_sigmask(how, &s, NULL);
}

void cli_ev_post(int kind, int code, const char *fmt, ...)
{
    va_list ap;
    int n;
    struct cli_msg *m;
    unsigned char zero = 0;
    ssize_t r;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || (m = malloc(sizeof *m + (size_t)n + 1)) == NULL)
        return;
    m->next = NULL;
    m->kind = kind;
    m->code = code;
    va_start(ap, fmt);
    vsnprintf(m->text, (size_t)n + 1, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&ev_mu);
    *ev_tail = m;
    ev_tail = &m->next;
    pthread_mutex_unlock(&ev_mu);
    r = write(ev_pipe[1], &zero, 1);
    (void)r;
}

struct cli_msg *cli_ev_take(void)
{
    struct cli_msg *m;

    pthread_mutex_lock(&ev_mu);
    m = ev_head;
    if (m != NULL) {
        ev_head = m->next;
        if (ev_head == NULL)
            ev_tail = &ev_head;
    }
    pthread_mutex_unlock(&ev_mu);
    return m;
}

static int queue_empty(void)
{
    int e;

    pthread_mutex_lock(&ev_mu);
    e = ev_head == NULL;
    pthread_mutex_unlock(&ev_mu);
    return e;
}

/* Reads what the pipe holds; signal numbers go to ev_pending_sigs. */
static void drain(void)
{
    unsigned char buf[64];
    ssize_t n, i;

    while ((n = read(ev_pipe[0], buf, sizeof buf)) > 0)
        for (i = 0; i < n; i++) {
            int sig = buf[i];
            if (sig > 0 && sig < 64)
                ev_pending_sigs |= (uint64_t)1 << sig;
        }
}

/* The last SIGINT, SIGQUIT, SIGTERM or SIGHUP taken, whoever took it: a
 * command that ends on one (watch, a walk) leaves the shell to end too. */
static int ev_stop_sig;

static int take_signal(void)
{
    uint64_t bit;
    int s;

    for (s = 1; s < 64; s++) {
        bit = (uint64_t)1 << s;
        if (ev_pending_sigs & bit) {
            ev_pending_sigs &= ~bit;
            if (s == SIGINT || s == SIGQUIT || s == SIGTERM || s == SIGHUP)
                ev_stop_sig = s;
            return s;
        }
    }
    return 0;
}

int cli_ev_stop_taken(void)
{
    int s = ev_stop_sig;

    ev_stop_sig = 0;
    return s;
}

int cli_ev_pending_signal(void)
{
    drain();
    return take_signal();
}

int cli_ev_wait(int fd, int timeout_ms, int *sig)
{
    struct pollfd p[2];
    nfds_t n = 1;
    int rv;

    for (;;) {
        drain();
        if ((*sig = take_signal()) != 0)
            return CLI_EV_SIGNAL;
        if (!queue_empty())
            return CLI_EV_MSG;
        p[0] = (struct pollfd){ev_pipe[0], POLLIN, 0};
        if (fd >= 0) {
            p[1] = (struct pollfd){fd, POLLIN, 0};
            n = 2;
        }
        rv = poll(p, n, timeout_ms);
        if (rv < 0 && errno == EINTR)
            continue;
        if (rv <= 0)
            return CLI_EV_TIMEOUT;
        if (n == 2 && (p[1].revents & (POLLIN | POLLHUP | POLLERR)) &&
            !(p[0].revents & POLLIN))
            return CLI_EV_FD;
        /* The pipe is readable: loop to classify what it holds.  A
         * timeout is not restarted: callers that wait with a deadline
         * recompute it. */
        timeout_ms = 0;
    }
}
