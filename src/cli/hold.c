/* One lock of any kind behind one interface, for tumbler lock and tumbler
 * elect: fair or non-fair mutex, either side of a read-write lock, a
 * semaphore lease, or leadership of an election.
 *
 * Acquisition is asynchronous so that the main thread stays free to act
 * on signals while it waits: the recipe's callback (on the library's I/O
 * thread) queues a CLI_MSG_ACQUIRED message; its state callback queues
 * CLI_MSG_LOST when the hold is gone, or a line for stderr when the
 * connection drops or comes back. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/hold.h"

/* A lock refused for what its path holds (TB_EFOREIGNLOCK) says what it
 * found, just before the main thread reports the error itself.  That
 * names a node under PATH, however long PATH is; the library cuts it to
 * the buffer given, so it is read again into a larger one while it fills
 * the buffer. */
static void say_conflict(struct hold *h, int rc)
{
    size_t cap = strlen(h->path) + 256;
    char *why = NULL, *more;
    int got = TB_ENONODE;

    if (rc != TB_EFOREIGNLOCK)
        return;
    for (;; cap *= 2) {
        if ((more = realloc(why, cap)) == NULL)
            break;
        why = more;
        if (h->sem != NULL)
            got = tb_semaphore_conflict(h->sem, why, cap);
        else if (h->m != NULL)
            got = tb_mutex_conflict(h->m, why, cap);
        if (got != 0 || strlen(why) < cap - 1)
            break;
    }
    if (got == 0)
        fprintf(stderr, "tumbler: lock %s refused: %s\n", h->path, why);
    free(why);
}

static void on_acquired(int rc, int64_t token, void *data)
{
    struct hold *h = data;

    h->granted_ms = cli_now_ms();
    say_conflict(h, rc);
    cli_ev_post(CLI_MSG_ACQUIRED, rc, "%" PRId64, token);
}

static void on_lease(int rc, struct tb_lease *lease, void *data)
{
    struct hold *h = data;

    /* Published to the main thread by the queue's mutex. */
    h->lease = lease;
    h->granted_ms = cli_now_ms();
    if (rc == 0)
        h->io_held = 1;
    say_conflict(h, rc);
    cli_ev_post(CLI_MSG_ACQUIRED, rc, "%" PRId64,
                lease != NULL ? tb_lease_token(lease) : (int64_t)0);
}

/* Runs on the I/O thread, the only thread that touches `io_held`. */
static void on_state(int state, int64_t token, void *data)
{
    struct hold *h = data;
    const char *what = h->kind == HOLD_ELECT ? "leadership" : "lock";

    /* Once lost, tumbler acts on this hold no more (CMD is being
     * stopped): what follows is not news of it.  An election that lost
     * its leadership runs again by itself and may well win again (a
     * non-fair one at once, its node deleted by someone): that is not the
     * leadership CMD ran under, so never "kept". */
    if (__atomic_load_n(&h->lost, __ATOMIC_ACQUIRE))
        return;
    switch (state) {
    case TB_LOCK_HELD:
        if (h->kind == HOLD_ELECT && !h->io_held) {
            h->io_held = 1;
            on_acquired(0, token, h);
        } else if (h->io_held) {
            cli_ev_post(CLI_MSG_TEXT, 0, "connection back: %s of %s kept", what,
                        h->path);
        }
        break;
    case TB_LOCK_SUSPENDED:
        if (h->lost_on_disconnect) {
            __atomic_store_n(&h->lost, 1, __ATOMIC_RELEASE);
            cli_ev_post(CLI_MSG_LOST, 0,
                        "connection lost: %s of %s may be lost", what, h->path);
        } else {
            cli_ev_post(CLI_MSG_TEXT, 0,
                        "connection lost: %s of %s is kept only if the "
                        "session is back within its timeout",
                        what, h->path);
        }
        break;
    case TB_LOCK_LOST:
        if (h->kind == HOLD_ELECT && !h->io_held) {
            /* A candidacy that ended (0: in the race again already) */
            int rc = tb_election_error(h->el);
            if (rc != 0)
                on_acquired(rc, 0, h);
        } else {
            __atomic_store_n(&h->lost, 1, __ATOMIC_RELEASE);
            cli_ev_post(CLI_MSG_LOST, 0, "%s of %s lost", what, h->path);
        }
        break;
    default:
        break;
    }
}

/* Mutex and read-write sides report HELD only after a suspension; mark
 * the hold as held on the I/O thread's side before it can be suspended. */
static void on_acquired_mark(int rc, int64_t token, void *data)
{
    struct hold *h = data;

    if (rc == 0)
        h->io_held = 1;
    on_acquired(rc, token, data);
}

int hold_new(struct hold *h, struct tb_client *c)
{
    struct tb_lock_options o;
    int rv;

    h->c = c;
    memset(&o, 0, sizeof o);
    o.kind = h->nonfair ? TB_LOCK_NONFAIR : TB_LOCK_FAIR;
    o.state_cb = on_state;
    o.data = h;
    o.value = h->value;
    o.len = h->value ? strlen(h->value) : 0;
    switch (h->kind) {
    case HOLD_MUTEX:
        o.lock_delay_ms = h->lock_delay_ms;
        return tb_mutex_new(&h->m, c, h->path, &o);
    case HOLD_READ:
    case HOLD_WRITE:
        if ((rv = tb_rwlock_new(&h->rw, c, h->path, &o)) != 0)
            return rv;
        h->m = h->kind == HOLD_READ ? tb_rwlock_read(h->rw)
                                    : tb_rwlock_write(h->rw);
        return 0;
    case HOLD_SEM:
        return tb_semaphore_new(&h->sem, c, h->path, h->max_leases, &o);
    case HOLD_ELECT:
        return tb_election_new(&h->el, c, h->path, &o);
    default:
        return TB_EINVAL;
    }
}

int hold_start(struct hold *h, int timeout_ms)
{
    switch (h->kind) {
    case HOLD_SEM:
        return tb_semaphore_acquire(h->sem, timeout_ms, on_lease, h);
    case HOLD_ELECT:
        return tb_election_join(h->el);
    default:
        return tb_mutex_lock(h->m, timeout_ms, on_acquired_mark, h);
    }
}

int hold_tried(struct hold *h)
{
    struct tb_recipe_stats st;

    if (h->kind != HOLD_ELECT)
        return 1;
    /* Leading, or out of the race: the state moves before the callback
     * posts what decides (CLI_MSG_ACQUIRED), which is on its way: not a
     * reason to give up, which would resign a leader just made. */
    if (tb_election_state(h->el) != TB_LOCK_ACQUIRING)
        return 0;
    /* Queued: a candidate that does not lead watches the one ahead of
     * it (or, non-fair, PATH). */
    tb_election_stats(h->el, &st);
    return st.watches_set > 0;
}

/* A stop shorter than a third of the session timeout lets no session
 * expire: the client's pings come a third of it apart, so the server
 * heard from it less than two thirds of it before.  A longer one may have:
 * a sync is answered only on a live session (the server closes an
 * expired one's connection), in an ensemble once its server has applied
 * all the leader had committed: the session's close too.  What took the
 * hold away (the session expired, by the server's word or by the I/O
 * thread's own clock; the node deleted) is posted on the I/O thread
 * before the sync's answer can come.  Not answered (the connection lost),
 * it is made again: the session is back within its timeout, or it is lost
 * then. */
int hold_check(void *arg, int64_t stopped_ms)
{
    static const struct timespec retry = {0, 100 * 1000 * 1000};
    struct hold *h = arg;
    int round_trip;

    if (stopped_ms < 0)
        stopped_ms = cli_now_ms() - h->granted_ms;
    round_trip =
        stopped_ms > 0 && stopped_ms * 3 >= tb_client_session_timeout(h->c);

    for (;;) {
        if (__atomic_load_n(&h->lost, __ATOMIC_ACQUIRE))
            return 1;
        if (!round_trip)
            return 0;
        if (tb_sync_sync(h->c, h->path) == 0)
            round_trip = 0; /* the loss is looked for once more */
        else
            nanosleep(&retry, NULL);
    }
}

int hold_release(struct hold *h)
{
    struct tb_lease *l = h->lease;
    int rc;

    switch (h->kind) {
    case HOLD_SEM:
        h->lease = NULL;
        rc = l != NULL ? tb_lease_release_sync(l) : TB_ENOTHELD;
        break;
    case HOLD_ELECT:
        /* 0 also for a leader that had lost its leadership already (it
         * is then merely out of the race): the state callback told. */
        rc = tb_election_leave_sync(h->el);
        break;
    default:
        rc = tb_mutex_unlock_sync(h->m);
        break;
    }
    /* A loss posted after the last look at the queue still counts; the
     * release waited for the I/O thread, so the flag is up to date. */
    if (rc == 0 && __atomic_load_n(&h->lost, __ATOMIC_ACQUIRE))
        rc = TB_ELOCKLOST;
    return rc;
}

void hold_free(struct hold *h)
{
    if (h->sem != NULL)
        tb_semaphore_free(h->sem); /* returns a lease still held */
    if (h->el != NULL)
        tb_election_free(h->el);
    if (h->rw != NULL)
        tb_rwlock_free(h->rw);
    else if (h->m != NULL)
        tb_mutex_free(h->m);
    h->sem = NULL;
    h->el = NULL;
    h->rw = NULL;
    h->m = NULL;
    h->lease = NULL;
}

int hold_node(struct hold *h, char **node)
{
    size_t cap = strlen(h->path) + 128; /* PATH/_c_<uuid>-lock-<seq> */
    char *buf = NULL, *more;
    int rc;

    *node = NULL;
    if (h->m == NULL)
        return TB_ENONODE;
    /* tb_mutex_node cuts the path to fit, silently: a path that fills
     * the buffer may have been cut, so it is read again into twice the
     * room. */
    for (;; cap *= 2) {
        if ((more = realloc(buf, cap)) == NULL) {
            free(buf);
            return TB_ENOMEM;
        }
        buf = more;
        if ((rc = tb_mutex_node(h->m, buf, cap)) != 0) {
            free(buf);
            return rc;
        }
        if (strlen(buf) < cap - 1) {
            *node = buf;
            return 0;
        }
    }
}
