/* Waiting on the main thread for one asynchronous recipe call (barrier,
 * queue): its callback, on the library's I/O thread, posts the result
 * through the event queue (events.c), so signals still reach the main
 * thread while it waits. */
#ifndef TB_CLI_RCPWAIT_H
#define TB_CLI_RCPWAIT_H

#include "cli/cli.h"

/* A tb_done_cb: posts `rc` (data unused). */
void cli_rcp_done(int rc, void *data);
/* Waits for the posted result: -1 with *rc set, or 128+N after signal N
 * (the call is then still pending: give it up and wait again, or exit). */
int cli_rcp_wait(int *rc);
/* --wait SECONDS as a recipe timeout: -1 when not given; else 0 or the
 * usage error's status after printing it. */
int cli_rcp_timeout(struct cli *cli, const struct cli_cmd *cmd,
                    const char *secs, int *timeout_ms);

#endif
