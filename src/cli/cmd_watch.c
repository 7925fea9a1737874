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

static int run_watch(struct cli *cli, const struct cli_cmd *cmd, int argc,
                     char **argv)
{
    static const struct option lo[] = {{"recursive", no_argument, NULL, 'r'},
                                       {"count", required_argument, NULL, 'c'},
                                       CLI_COMMON_LONGOPTS,
                                       {NULL, 0, NULL, 0}};
    int ch, rc, mode = TB_ADDWATCH_PERSISTENT;
    int64_t count = 0;
    struct cli_watch *w;

    cli_opt_reset();
    while ((ch = cli_getopt(cli, argc, argv, ":rc:h", lo)) != -1) {
        switch (ch) {
        case 'r':
            mode = TB_ADDWATCH_PERSISTENT_RECURSIVE;
            break;
        case 'c':
            if (cli_parse_i64(optarg, &count) != 0 || count <= 0)
                return cli_usage(cli, cmd, "bad count '%s'", optarg);
            break;
        default:
            return cli_opt_end(cli, cmd, ch, argv);
        }
    }
    if ((rc = cli_path_arg(cli, cmd, argc, argv)) != 0)
        return rc;
    w = cli->json ? &cli_watch_json : &cli_watch_text;
    rc = tb_add_watch_sync(cli->c, argv[optind], mode, cli_watch_cb, w);
    if (rc != 0)
        return cli_fail(cli, "watch", argv[optind], rc);
    fprintf(stderr, "tumbler: watching %s%s\n", argv[optind],
            mode == TB_ADDWATCH_PERSISTENT_RECURSIVE ? " and below" : "");
    rc = print_events(cli, count);
    /* The shell goes on with the session: take the watch off it. */
    if (cli->shell)
        (void)tb_remove_watches_sync(cli->c, argv[optind],
                                     mode == TB_ADDWATCH_PERSISTENT
                                         ? TB_WATCHER_PERSISTENT
                                         : TB_WATCHER_PERSISTENT_RECURSIVE,
                                     cli_watch_cb, w, 1);
    return rc;
}

const struct cli_cmd cli_cmd_watch = {
    "watch",
    run_watch,
    "watch [-r] [-c COUNT] PATH",
    "Print the events on PATH (which need not exist) until interrupted.",
    "  -r, --recursive     also the events of every node below PATH\n"
    "  -c, --count N       exit after N events\n",
    0,
    NULL};
