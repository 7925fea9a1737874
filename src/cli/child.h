/* Running and supervising the command of tumbler lock / tumbler elect
 * (child.c). */
#ifndef TB_CLI_CHILD_H
#define TB_CLI_CHILD_H

#include <sys/types.h>

#include "cli/cli.h"

/* Starts argv[0] (searched in PATH) with the environment plus
 * `extra_env` ("NAME=value", NULL-ended; they replace any inherited value).
 * Returns 0 and *pid, or the exit status after printing why: CLI_NOTFOUND,
 * CLI_NOEXEC or CLI_OSERR. */
int cli_child_spawn(char *const *argv, char *const *extra_env, pid_t *pid);

/* How one child is supervised.  `grace_ms`: from SIGTERM to SIGKILL once
 * the lock is lost (0: SIGKILL at once). */
struct cli_supervise {
    const char *what; /* "the command" in messages */
    int grace_ms;
    int lost;   /* out: a CLI_MSG_LOST came while it ran */
    int killed; /* out: it needed SIGKILL */
    int64_t kill_at;
};

/* Waits for the child, forwarding signals and acting on CLI_MSG_LOST.
 * Returns its exit status (128+N if killed by signal N). */
int cli_child_supervise(struct cli_supervise *s, pid_t pid);

#endif
