/* watch PATH: print the events of a persistent watch until interrupted.
 *
 * One line per event, "TYPE PATH" (NodeCreated /a), or one JSON object
 * per line with --json, flushed at once so a pipe sees each event as it
 * happens.  A persistent watch, unlike get -w, misses nothing between two
 * events.  SIGINT, SIGTERM and SIGHUP end it with status 0: that is how it
 * is meant to stop.  "watching PATH" on stderr says the watch is set, so a
 * script knows from when on changes are seen. */
#include <signal.h>
#include <stdlib.h>

#include "cli/cli.h"

static int print_events(struct cli *cli, int64_t max)
{
    struct cli_msg *m;
    int64_t seen = 0;
    int sig, rv;

    while (max <= 0 || seen < max) {
        rv = cli_ev_wait(-1, -1, &sig);
        if (rv == CLI_EV_SIGNAL) {
            if (sig == SIGCHLD)
                continue;
            return CLI_OK;
        }
        while ((m = cli_ev_take()) != NULL) {
            int kind = m->kind, code = m->code;
            if (kind == CLI_MSG_TEXT && (max <= 0 || seen < max)) {
                puts(m->text);
                fflush(stdout);
                seen++;
            } else if (kind == CLI_MSG_END) {
                fprintf(stderr, "tumbler: %s\n", m->text);
            } else if (kind == CLI_MSG_STATE && cli->verbose) {
                fprintf(stderr, "tumbler: session %s\n", m->text);
            }
            free(m);
            if (kind == CLI_MSG_END)
                return cli_status(code);
        }
    }
    return CLI_OK;
}

static int exec_watch(struct cli *cli, const struct cli_cmd *cmd,
                      const struct cli_args *a)
{
    const char *path = a->argv[0];
    int rc, recursive = a->val['r'] != NULL;
    int mode =
        recursive ? TB_ADDWATCH_PERSISTENT_RECURSIVE : TB_ADDWATCH_PERSISTENT;
    struct cli_watch *w = cli->json ? &cli_watch_json : &cli_watch_text;

    (void)cmd;
    rc = tb_add_watch_sync(cli->c, path, mode, cli_watch_cb, w);
    if (rc != 0)
        return cli_fail(cli, "watch", path, rc);
    fprintf(stderr, "tumbler: watching %s%s\n", path,
            recursive ? " and below" : "");
    rc = print_events(cli, a->num['c']);
    /* The shell goes on with the session: take the watch off it. */
    if (cli->shell)
        (void)tb_remove_watches_sync(cli->c, path,
                                     recursive ? TB_WATCHER_PERSISTENT_RECURSIVE
                                               : TB_WATCHER_PERSISTENT,
                                     cli_watch_cb, w, 1);
    return rc;
}

const struct cli_spec cli_cmd_watch = {
    .cmd = {.name = "watch",
            .usage = "watch [-r] [-c COUNT] PATH",
            .summary = "Print the events on PATH (which need not exist) until "
                       "interrupted.",
            .flags = CLI_PATH | CLI_CONNECT},
    .exec = exec_watch,
    .opts =
        (const struct cli_opt[]){
            {.letter = 'r',
             .name = "recursive",
             .help = "also the events of every node below PATH"},
            {.letter = 'c',
             .name = "count",
             .kind = CLI_POSITIVE,
             .arg = "N",
             .help = "exit after N events",
             .what = "count"},
            {0}},
    CLI_ONE_PATH,
};
