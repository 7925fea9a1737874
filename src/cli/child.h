/* Running and supervising the command of tumbler lock / tumbler elect
 * (spawn.c starts it, child.c supervises it). */
#ifndef TB_CLI_CHILD_H
#define TB_CLI_CHILD_H

#include <stdint.h>
#include <sys/types.h>

#include "cli/cli.h"

/* What CMD runs under (a lock, a leadership), asked before CMD may run:
 * whether the hold is still had (0) or was lost (nonzero: its
 * CLI_MSG_LOST is queued, and the supervision acts on it).  `stopped_ms`:
 * 0, at once; else tumbler was stopped that long, and may have let the
 * session expire: then, if the stop was long enough for that, it blocks
 * until a round trip to the server tells.  < 0: CMD is about to start,
 * and the time since the grant counts as a stop, since tumbler catches
 * no stop signal before it supervises CMD (a ^Z then stops it). */
struct cli_hold_check {
    int (*held)(void *arg, int64_t stopped_ms);
    void *arg;
};

/* A started CMD.  At all times CMD leads its own process group (its pgid
 * is `pid`), and while `watchdog` runs, tumbler's death (even by
 * SIGKILL) makes it SIGKILL that whole group.  `others`: tumbler's
 * children from before CMD's fork (a shell's `crond & exec tumbler lock
 * ...`), none of CMD's: neither waited for nor stopped with CMD's group,
 * only reaped once they end (and then forgotten: their pid may come back
 * as an orphan of CMD's). */
struct cli_child {
    pid_t pid;      /* CMD, the leader of its process group */
    pid_t watchdog; /* a forked helper outside the group; 0: none */
    int watch_fd;   /* the write end of the watchdog's pipe; -1: none */
    int tty;        /* the terminal tumbler is a job of; -1: none */
    int tty_signal; /* SIGINT or SIGQUIT killed CMD while its group had
                       the terminal: the terminal's ^C or ^\; 0: not */
    int forwarded;  /* SIGINT or SIGQUIT tumbler got and passed on to
                       CMD's group (then not the terminal's); 0: none */
    pid_t *others;  /* malloc'd; NULL: none */
    size_t nothers;
    struct cli_hold_check check; /* held NULL: CMD runs under no hold */
    int stopped_lost; /* the group stays stopped: lost while tumbler was */
    int group_gone;   /* CMD reaped and its group empty: the number may be
                         another group's by now, never signalled again */
};

/* Starts argv[0] (searched in PATH) in a new process group, with the
 * environment plus `extra_env` ("NAME=value", NULL-ended; they replace
 * any inherited value; a bare "NAME" only removes it).  If tumbler is the
 * foreground job of its terminal, the group gets the terminal at once; if
 * tumbler is a background job, once the group has stopped (CMD read the
 * terminal) and the shell's fg has continued the job (child.c).  `check`
 * (NULL: none) is asked just before CMD may start, and again before CMD's
 * group goes on after tumbler was stopped (a stopped tumbler keeps no
 * session alive): a lost hold never lets it run.  Returns 0 and *ch, or
 * the exit status after printing why: CLI_NOTFOUND, CLI_NOEXEC, CLI_OSERR,
 * or CLI_LOST (the hold lost before CMD started). */
int cli_child_spawn(char *const *argv, char *const *extra_env,
                    const struct cli_hold_check *check, struct cli_child *ch);
/* Gives the terminal to CMD's group (`to_group`: if tumbler's group has
 * it) or back to tumbler's (if CMD's group has it). */
void cli_child_tty(struct cli_child *ch, int to_group);
/* CMD's group stopped with `sig`: stops tumbler the same way, so that
 * its shell sees the job stopped, then continues the group (child.c). */
void cli_child_follow_stop(struct cli_child *ch, int sig);
/* Records tumbler's children as `others` (child.c), before CMD's fork;
 * -1 if out of memory. */
int cli_child_note_others(struct cli_child *ch);
/* Once the group is gone: stops the watchdog without its SIGKILL, reaps
 * it, takes the terminal back and forgets `others`. */
void cli_child_finish(struct cli_child *ch);

/* How one child is supervised.  `grace_ms`: from SIGTERM to SIGKILL of
 * the group once the lock is lost or CMD has exited (0: SIGKILL at
 * once). */
struct cli_supervise {
    const char *what; /* "the command" in messages */
    int grace_ms;
    int lost;     /* out: a CLI_MSG_LOST came while it ran */
    int stopping; /* the group got SIGTERM: lost, or CMD has exited */
    int killed;   /* out: it needed SIGKILL */
    int64_t kill_at;
    pid_t *termed; /* strays sent SIGTERM already (child.c) */
    size_t nterm, capterm;
};

/* What the terminal's ^C (or ^\) that killed CMD would have done had
 * tumbler kept the terminal: `sig` (ch->tty_signal) to tumbler's own
 * group -- the shell job it is part of: a script's loop, the rest of a
 * pipeline -- tumbler included.  A shell goes on after a command killed
 * by SIGINT unless it got the SIGINT too, so a loop of `tumbler lock`
 * could not be stopped by ^C.  Returns only if tumbler survives it. */
void cli_child_pass_signal(int sig);
/* Waits until CMD has exited and no process is left in its group nor
 * among tumbler's other children (a process of CMD's that left the group
 * becomes one once orphaned: tumbler is a child subreaper), forwarding
 * signals to the group, printing the hold's notices, acting on
 * CLI_MSG_LOST and stopping what CMD left running when it exits; then
 * cli_child_finish.  Returns CMD's exit status
 * (128+N if killed by signal N). */
int cli_child_supervise(struct cli_supervise *s, struct cli_child *ch);

#endif
