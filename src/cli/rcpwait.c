/* See rcpwait.h. */
#include <signal.h>
#include <stdlib.h>

#include "cli/rcpwait.h"

void cli_rcp_done(int rc, void *data)
{
    (void)data;
    cli_ev_post(CLI_MSG_ACQUIRED, rc, "%s", "");
}

int cli_rcp_wait(int *rc)
{
    struct cli_msg *m;
    int sig;

    for (;;) {
        if (cli_ev_wait(-1, -1, &sig) == CLI_EV_SIGNAL && sig != SIGCHLD)
            return 128 + sig;
        while ((m = cli_ev_take()) != NULL) {
            int kind = m->kind;
            *rc = m->code;
            free(m);
            if (kind == CLI_MSG_ACQUIRED)
                return -1;
        }
    }
}

int cli_rcp_timeout(struct cli *cli, const struct cli_cmd *cmd,
                    const char *secs, int *timeout_ms)
{
    int64_t ms;

    *timeout_ms = -1;
    if (secs == NULL)
        return 0;
    if (cli_parse_seconds(secs, &ms) != 0 || ms < 0 || ms > INT32_MAX)
        return cli_usage(cli, cmd, "bad wait '%s' (seconds >= 0)", secs);
    *timeout_ms = (int)ms;
    return 0;
}
