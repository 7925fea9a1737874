/* A host's name looked up on a thread of its own.  getaddrinfo may wait
 * for a name server for seconds (5 s a try, by default): done where the
 * handle is driven, it would hold the handle's lock, and every call of the
 * application with it, or the application's own loop, for that long; and
 * the attempt's connect timeout could not end it, so one host whose name
 * does not resolve could keep the handle from the others until its
 * session expired.  The handle polls the lookup's descriptor as it polls
 * a socket (conn.c, PH_RESOLVING); an attempt that times out leaves it on
 * its way for the host's next attempt (a name server that takes longer
 * than an attempt still answers one), and the handle gives it up only
 * when it is freed.
 *
 * Ownership: the handle holds the read end until it takes the result or
 * gives the lookup up; the thread holds the rest until it is done.  The
 * one of the two that comes last frees the lookup: the mutex decides which.
 * The thread writes its byte only while the handle still waits, so never
 * to a pipe whose read end is closed. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/client.h"

struct tb_lookup {
    pthread_mutex_t mu;
    int rfd, wfd;
    int done, abandoned; /* under mu */
    int err;             /* getaddrinfo's, once done */
    struct addrinfo *ai; /* once done */
    char *name, *port;
};

static void lookup_free(struct tb_lookup *l)
{
    if (l->ai != NULL)
        freeaddrinfo(l->ai);
    if (l->wfd >= 0)
        close(l->wfd);
    pthread_mutex_destroy(&l->mu);
    free(l->name);
    free(l->port);
    free(l);
}

static void *lookup_main(void *arg)
{
    struct tb_lookup *l = arg;
    struct addrinfo hints, *ai = NULL;
    int err, abandoned;

    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    err = getaddrinfo(l->name, l->port, &hints, &ai);
    pthread_mutex_lock(&l->mu);
    l->err = err;
    l->ai = err == 0 ? ai : NULL;
    l->done = 1;
    abandoned = l->abandoned;
    if (!abandoned)
        while (write(l->wfd, "", 1) < 0 && errno == EINTR)
            ;
    pthread_mutex_unlock(&l->mu);
    if (abandoned)
        lookup_free(l);
    return NULL;
}

int tb__lookup_start(const struct host *h, struct tb_lookup **out)
{
    struct tb_lookup *l = calloc(1, sizeof *l);
    sigset_t all, old;
    pthread_attr_t attr;
    pthread_t t;
    int p[2], rv;

    if (l == NULL)
        return TB_ENOMEM;
    l->rfd = l->wfd = -1;
    pthread_mutex_init(&l->mu, NULL);
    if ((l->name = strdup(h->name)) == NULL ||
        (l->port = strdup(h->port)) == NULL) {
        lookup_free(l);
        return TB_ENOMEM;
    }
    if (pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0) {
        lookup_free(l);
        return TB_ESYSTEM;
    }
    l->rfd = p[0];
    l->wfd = p[1];
    /* The application's signals are not this thread's to take. */
    sigfillset(&all);
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rv = pthread_create(&t, &attr, lookup_main, l);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    if (rv != 0) {
        close(l->rfd);
        lookup_free(l);
        return TB_ESYSTEM;
    }
    *out = l;
    return 0;
}

int tb__lookup_fd(const struct tb_lookup *l)
{
    return l->rfd;
}

int tb__lookup_done(struct tb_lookup *l)
{
    int done;

    pthread_mutex_lock(&l->mu);
    done = l->done;
    pthread_mutex_unlock(&l->mu);
    return done;
}

void tb__lookup_take(struct tb_lookup *l, struct addrinfo **ai, int *err)
{
    *err = l->err;
    *ai = l->ai;
    l->ai = NULL;
    close(l->rfd);
    lookup_free(l);
}

void tb__lookup_abandon(struct tb_lookup *l)
{
    int done, rfd;

    pthread_mutex_lock(&l->mu);
    done = l->done;
    rfd = l->rfd; /* once unlocked, the thread may free l */
    l->abandoned = 1;
    pthread_mutex_unlock(&l->mu);
    close(rfd);
    if (done)
        lookup_free(l);
}
