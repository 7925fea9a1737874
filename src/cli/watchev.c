/* Watch events, printed by the main thread.
 *
 * A watcher fires on the library's I/O thread, where nothing may be
 * printed (the main thread may be inside readline); it formats its line
 * and queues it.  Outside the shell a one-shot -w (ls -w, get -w, stat -w)
 * then waits for that line: the command ends once its watch has fired,
 * which makes "tumbler get -w /x" a way to block until /x changes. */
#include <signal.h>
#include <stdlib.h>

#include "cli/cli.h"

struct cli_watch cli_watch_text = {0, 0}, cli_watch_json = {1, 0};

void cli_watch_cb(struct tb_client *c, const struct tb_event *ev, void *data)
{
    const struct cli_watch *w = data;
    const char *type = tb_event_name(ev->type);
    int text = w->own ? CLI_MSG_WATCH : CLI_MSG_TEXT;

    (void)c;
    if (ev->type >= TB_EVENT_DATA_WATCH_REMOVED)
        return; /* our own tb_remove_watches: nothing to tell */
    if (ev->type == TB_EVENT_NONE) {
        /* The watch ended without firing: close (nobody waits any more),
         * expiry or auth failure (the waiter must learn). */
        if (ev->rc != TB_ECLOSING)
            cli_ev_post(w->own ? CLI_MSG_WATCH_END : CLI_MSG_END, ev->rc,
                        "watch on %s ended: %s", ev->path, tb_strerror(ev->rc));
        return;
    }
    if (w->json) {
        char *buf = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&buf, &n);
        struct jw j;

        if (f == NULL)
            return;
        jw_init(&j, f);
        jw_obj(&j);
        jw_key(&j, "type");
        jw_str(&j, type);
        jw_key(&j, "path");
        jw_str(&j, ev->path);
        jw_end_obj(&j);
        fclose(f);
        cli_ev_post(text, ev->type, "%s", buf ? buf : "");
        free(buf);
    } else
        cli_ev_post(text, ev->type, "%s %s", type, ev->path);
}

int cli_wait_event(struct cli *cli)
{
    struct cli_msg *m;
    int sig, rv;

    for (;;) {
        rv = cli_ev_wait(-1, -1, &sig);
        if (rv == CLI_EV_SIGNAL) {
            if (sig == SIGCHLD)
                continue;
            return 128 + sig;
        }
        while ((m = cli_ev_take()) != NULL) {
            int kind = m->kind, code = m->code;
            if (kind == CLI_MSG_TEXT) {
                puts(m->text);
                fflush(stdout);
            } else if (kind == CLI_MSG_END) {
                fprintf(stderr, "tumbler: %s\n", m->text);
            }
            free(m);
            if (kind == CLI_MSG_TEXT)
                return CLI_OK;
            if (kind == CLI_MSG_END)
                return cli_status(code);
        }
        (void)cli;
    }
}
