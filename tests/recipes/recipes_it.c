/* The recipe tests' driver: `recipes_it HOST:PORT TEST [ARGS...]`.
 *
 * Each TEST is a function that talks to the server at HOST:PORT (tumblerd
 * or Apache ZooKeeper, started by the calling script) and exits non-zero
 * with a message on the first failed check.  Some tests are building
 * blocks the scripts combine across processes (worker, holder, waiter). */
#include <string.h>

#include "rt.h"
#include "tests.h"

static const struct {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *usage;
} tests[] = {
    {"basic", t_basic, ""},
    {"nonfair", t_nonfair, ""},
    {"threads", t_threads, "KIND NTHREADS ITERS"},
    {"worker", t_worker, "PATH KIND ITERS HOLD_MS LOGFILE WHO NTHREADS"},
    {"checklog", t_checklog, "LOGFILE MIN_HOLDS [ordered]"},
    {"herd", t_herd, "KIND NWAITERS"},
    {"holder", t_holder, "PATH"},
    {"waiter", t_waiter, "PATH"},
    {"connloss", t_connloss, "PORT"},
    {"token_before", t_token_before, "PATH FILE"},
    {"token_after", t_token_after, "PATH FILE"},
    {"rwlock", t_rwlock, ""},
    {"semaphore", t_semaphore, "NTHREADS MAX"},
    {"multilock", t_multilock, ""},
    {"election", t_election, ""},
    {"candidate", t_candidate, "PATH KIND"},
    {"interop_hold", t_interop_hold, "PATH HOLD_MS LOGFILE WHO ITERS"},
    {"children", t_children, "PATH"},
    {"loop", t_loop, ""},
    {"mixed", t_mixed, ""},
    {"try", t_try, "PATH mutex|read|write|nonfair|sem [TIMEOUT_MS]"},
    {"hold", t_hold, "PATH mutex|read|write|nonfair|sem FILE"},
    {"fence", t_fence, ""},
    {"fence_holder", t_fence_holder, "LOCK RES"},
    {"fence_taker", t_fence_taker, "LOCK RES OLD_TOKEN"},
    {"check_token", t_check_token, "PATH TOKEN"},
    {"get", t_get, "PATH"},
    {"counter", t_counter, ""},
    {"counter_op", t_counter_op, "PATH get|set VALUE|add N|addlog N"},
    {"barrier", t_barrier, ""},
    {"dmember", t_dmember, "PATH N [GO_FILE]"},
    {"barrier_op", t_barrier_op, "PATH set|remove|wait [TIMEOUT_MS]"},
    {"queue", t_queue, ""},
    {"qop", t_qop, "PATH simple|locking put VALUE|take [MS]|claim"},
    {"articles", t_articles, "CLIENTS_PER_KEY KEYS HOLD_MS"},
    {"latch", t_latch, ""},
    {"delay", t_delay, ""},
    {"ldhold", t_ldhold, "PATH DELAY_MS"},
    {"ldwait", t_ldwait, "PATH DELAY_MS"},
    {"queue_connloss", t_queue_connloss, "PORT"},
    {"cbarrier", t_cbarrier, ""},
    {"cparty", t_cparty, "PATH N await [TIMEOUT_MS]|reset|waiting"},
    {"toolbox_connloss", t_toolbox_connloss, "PORT"},
    {"fence_recipes", t_fence_recipes, ""},
    {"latch_op", t_latch_op, "PATH N count [hold]|await [TIMEOUT_MS]"},
    {"reaped", t_reaped, "PORT"},
};

int main(int argc, char **argv)
{
    size_t i;

    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc >= 3) {
        rt_hosts = argv[1];
        for (i = 0; i < sizeof tests / sizeof tests[0]; i++)
            if (strcmp(argv[2], tests[i].name) == 0)
                return tests[i].fn(argc - 3, argv + 3);
    }
    fprintf(stderr, "usage: %s HOST:PORT TEST [ARGS]\n", argv[0]);
    for (i = 0; i < sizeof tests / sizeof tests[0]; i++)
        fprintf(stderr, "  %s %s\n", tests[i].name, tests[i].usage);
    return 2;
}
