/* The read commands of the tree: ls, get, stat, sync, getEphemerals,
 * getAllChildrenNumber.
 *
 * Text output is for eyes and for line-oriented tools: ls prints one name
 * per line, sorted (the server's order is arbitrary), get prints the data
 * as it is, stat prints zkCli's layout.  --json prints one object per
 * command.  With -w the command sets a watch; outside the shell it then
 * waits for that watch to fire and prints the event. */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void sort_strings(struct tb_strings *s)
{
    if (s->count > 1)
        qsort(s->v, (size_t)s->count, sizeof s->v[0], cmp_str);
}

/* After a command that set a watch: in the shell the event prints when it
 * comes; a one-shot command waits for it. */
static int after_watch(struct cli *cli, int status)
{
    if (status != CLI_OK || cli->shell)
        return status;
    return cli_wait_event(cli);
}

static struct cli_watch *watcher(struct cli *cli)
{
    return cli->json ? &cli_watch_json : &cli_watch_text;
}

static char *child_path(const char *parent, const char *name)
{
    size_t a = strlen(parent), b = strlen(name);
    char *p = malloc(a + b + 2);

    if (p == NULL)
        return NULL;
    memcpy(p, parent, a);
    if (a > 1)
        p[a++] = '/';
    memcpy(p + a, name, b + 1);
    return p;
}

/* ---- ls ---- */

/* Prints PATH and the subtree below it, pre-order, children sorted; `ch`
 * are PATH's children (freed here).  A node deleted under the walk is
 * skipped: the listing is of a tree that keeps changing.  Returns 0, an
 * exit status once said why the walk stopped (a signal, stdout gone), or
 * the TB_E* of the node that could not be listed, *failed (malloc'd). */
static int walk(struct cli *cli, const char *path, struct tb_strings *ch,
                struct jw *w, char **failed)
{
    struct tb_strings sub;
    int32_t i;
    int rc;

    if (w != NULL)
        jw_str(w, path);
    else
        printf("%s\n", path);
    rc = cli_walk_stop(cli, "ls");
    sort_strings(ch);
    for (i = 0; i < ch->count && rc == 0; i++) {
        char *p = child_path(path, ch->v[i]);
        if (p == NULL) {
            rc = cli_err(cli, CLI_OSERR, "out of memory");
            break;
        }
        rc = tb_get_children_sync(cli->c, p, NULL, NULL, &sub);
        if (rc == TB_ENONODE) {
            rc = 0;
        } else if (rc != 0) {
            *failed = p;
            p = NULL;
        } else {
            rc = walk(cli, p, &sub, w, failed);
        }
        free(p);
    }
    tb_strings_free(ch);
    return rc;
}

/* PATH is listed before anything is printed, so that its own error is
 * the command's, as for ls without -R; an error further down ends the
 * listing, with --json as the "error" after the nodes listed so far: the
 * output is one JSON document either way. */
static int ls_recursive(struct cli *cli, const char *path)
{
    struct tb_strings ch;
    struct jw w;
    char *failed = NULL;
    int rc;

    if ((rc = tb_get_children_sync(cli->c, path, NULL, NULL, &ch)) != 0)
        return cli_fail(cli, "ls", path, rc);
    if (!cli->json) {
        rc = walk(cli, path, &ch, NULL, &failed);
        if (rc < 0)
            rc = cli_fail(cli, "ls", failed, rc);
        free(failed);
        return rc;
    }
    jw_begin(&w, path);
    jw_key(&w, "nodes");
    jw_arr(&w);
    rc = walk(cli, path, &ch, &w, &failed);
    jw_end_arr(&w);
    if (rc < 0)
        rc = cli_fail_in(cli, &w, "ls", failed, rc);
    jw_finish(&w);
    free(failed);
    return rc;
}

/* Names, sorted, one per line and then the stat if any; with --json
 * {"path": PATH, KEY: [names...], "stat"}. */
static void print_names(struct cli *cli, const char *path, const char *key,
                        struct tb_strings *v, const struct tb_stat *st)
{
    int32_t i;

    sort_strings(v);
    if (cli->json) {
        struct jw w;
        jw_begin(&w, path);
        jw_key(&w, key);
        jw_arr(&w);
        for (i = 0; i < v->count; i++)
            jw_str(&w, v->v[i]);
        jw_end_arr(&w);
        if (st != NULL) {
            jw_key(&w, "stat");
            jw_stat(&w, st);
        }
        jw_finish(&w);
    } else {
        for (i = 0; i < v->count; i++)
            printf("%s\n", v->v[i]);
        if (st != NULL)
            cli_print_stat(stdout, st);
        fflush(stdout);
    }
}

static int ls_one(struct cli *cli, const char *path, int with_stat, int watch)
{
    struct tb_strings ch;
    struct tb_stat st;
    int rc;

    rc = tb_get_children2_sync(cli->c, path, watch ? cli_watch_cb : NULL,
                               watcher(cli), &ch, &st);
    if (rc != 0)
        return cli_fail(cli, "ls", path, rc);
    print_names(cli, path, "children", &ch, with_stat ? &st : NULL);
    tb_strings_free(&ch);
    return CLI_OK;
}

static int exec_ls(struct cli *cli, const struct cli_cmd *cmd,
                   const struct cli_args *a)
{
    const char *path = a->argc > 0 ? a->argv[0] : "/";
    int with_stat = a->val['s'] != NULL, watch = a->val['w'] != NULL, rc;

    if (a->val['R'] != NULL && (watch || with_stat))
        return cli_usage(cli, cmd, "-R cannot be combined with -s or -w");
    if ((rc = cli_connect(cli)) != 0)
        return rc;
    if (a->val['R'] != NULL)
        return ls_recursive(cli, path);
    rc = ls_one(cli, path, with_stat, watch);
    return watch ? after_watch(cli, rc) : rc;
}

/* Shared by the commands whose -w sets a watch and waits for it. */
#define WATCH_HELP(what)                                                       \
    "set " what "; outside the shell, wait for it\n"                           \
    "to fire and print the event"

const struct cli_spec cli_cmd_ls = {
    .cmd = {.name = "ls",
            .usage = "ls [-R] [-s] [-w] [PATH]",
            .summary =
                "List the children of PATH (default /), one per line, sorted.",
            .flags = CLI_PATH},
    .exec = exec_ls,
    .opts =
        (const struct cli_opt[]){
            {.letter = 'R',
             .name = "recursive",
             .help = "list the whole subtree, one full path per line"},
            {.letter = 's', .name = "stat", .help = "also print PATH's stat"},
            {.letter = 'w',
             .name = "watch",
             .help = WATCH_HELP("a child watch")},
            {0}},
    .max_args = 1,
    .arity = "too many arguments",
};

/* ---- get ---- */

static int exec_get(struct cli *cli, const struct cli_cmd *cmd,
                    const struct cli_args *a)
{
    const char *path = a->argv[0];
    int rc, watch = a->val['w'] != NULL;
    struct tb_stat st;
    char *value;
    size_t len;

    (void)cmd;
    rc = tb_get_data_sync(cli->c, path, watch ? cli_watch_cb : NULL,
                          watcher(cli), &value, &len, &st);
    if (rc != 0)
        return cli_fail(cli, "get", path, rc);
    cli_print_data(cli, path, value, len, &st, a->val['s'] != NULL);
    tb_free(value);
    return watch ? after_watch(cli, CLI_OK) : CLI_OK;
}

const struct cli_spec cli_cmd_get = {
    .cmd = {.name = "get",
            .usage = "get [-s] [-w] PATH",
            .summary =
                "Print the data of PATH (nothing for empty or null data).",
            .flags = CLI_PATH | CLI_CONNECT},
    .exec = exec_get,
    .opts =
        (const struct cli_opt[]){
            {.letter = 's', .name = "stat", .help = "also print the stat"},
            {.letter = 'w',
             .name = "watch",
             .help = WATCH_HELP("a data watch")},
            {0}},
    CLI_ONE_PATH,
};

/* ---- stat ---- */

static int exec_stat(struct cli *cli, const struct cli_cmd *cmd,
                     const struct cli_args *a)
{
    const char *path = a->argv[0];
    int rc, watch = a->val['w'] != NULL;
    struct tb_stat st;

    (void)cmd;
    rc = tb_exists_sync(cli->c, path, watch ? cli_watch_cb : NULL, watcher(cli),
                        &st);
    /* exists leaves its watch on a missing node: wait for its creation. */
    if (rc == TB_ENONODE && watch && !cli->shell)
        return cli_wait_event(cli);
    if (rc != 0)
        return cli_fail(cli, "stat", path, rc);
    if (cli->json) {
        struct jw w;
        jw_begin(&w, path);
        jw_key(&w, "stat");
        jw_stat(&w, &st);
        jw_finish(&w);
    } else {
        cli_print_stat(stdout, &st);
        fflush(stdout);
    }
    return watch ? after_watch(cli, CLI_OK) : CLI_OK;
}

const struct cli_spec cli_cmd_stat = {
    .cmd = {.name = "stat",
            .usage = "stat [-w] PATH",
            .summary =
                "Print the stat of PATH; exit status 101 if it does not exist.",
            .flags = CLI_PATH | CLI_CONNECT},
    .exec = exec_stat,
    .opts =
        (const struct cli_opt[]){
            {.letter = 'w',
             .name = "watch",
             .help = "set an exists watch (fires on create, change or\n"
                     "delete); outside the shell, wait for it"},
            {0}},
    CLI_ONE_PATH,
};

/* ---- sync ---- */

static int exec_sync(struct cli *cli, const struct cli_cmd *cmd,
                     const struct cli_args *a)
{
    int rc;

    (void)cmd;
    if ((rc = tb_sync_sync(cli->c, a->argv[0])) != 0)
        return cli_fail(cli, "sync", a->argv[0], rc);
    cli_print_done(cli, a->argv[0], "synced");
    return CLI_OK;
}

const struct cli_spec cli_cmd_sync = {
    .cmd = {.name = "sync",
            .usage = "sync PATH",
            .summary =
                "Make the server this session is on catch up with the leader.",
            .flags = CLI_PATH | CLI_CONNECT},
    .exec = exec_sync,
    CLI_ONE_PATH,
};

/* ---- getEphemerals, getAllChildrenNumber ---- */

static int exec_get_ephemerals(struct cli *cli, const struct cli_cmd *cmd,
                               const struct cli_args *a)
{
    const char *prefix = a->argc > 0 ? a->argv[0] : "/";
    struct tb_strings eph;
    int rc;

    (void)cmd;
    if ((rc = tb_get_ephemerals_sync(cli->c, prefix, &eph)) != 0)
        return cli_fail(cli, "getEphemerals", prefix, rc);
    print_names(cli, prefix, "ephemerals", &eph, NULL);
    tb_strings_free(&eph);
    return CLI_OK;
}

const struct cli_spec cli_cmd_get_ephemerals = {
    .cmd = {.name = "getEphemerals",
            .usage = "getEphemerals [PATH]",
            .summary = "List this session's ephemeral nodes (those whose path "
                       "starts with PATH).",
            .flags = CLI_PATH | CLI_CONNECT,
            .notes = "Outside the shell the session is new and has none.\n"},
    .exec = exec_get_ephemerals,
    .max_args = 1,
    .arity = "too many arguments",
};

static int exec_count(struct cli *cli, const struct cli_cmd *cmd,
                      const struct cli_args *a)
{
    const char *path = a->argv[0];
    int32_t n;
    int rc;

    (void)cmd;
    if ((rc = tb_get_all_children_number_sync(cli->c, path, &n)) != 0)
        return cli_fail(cli, "getAllChildrenNumber", path, rc);
    if (cli->json) {
        struct jw w;
        jw_begin(&w, path);
        jw_key(&w, "count");
        jw_int(&w, n);
        jw_finish(&w);
    } else {
        printf("%d\n", n);
        fflush(stdout);
    }
    return CLI_OK;
}

const struct cli_spec cli_cmd_get_all_children_number = {
    .cmd = {.name = "getAllChildrenNumber",
            .usage = "getAllChildrenNumber PATH",
            .summary = "Print how many nodes there are below PATH, at any "
                       "depth.",
            .flags = CLI_PATH | CLI_CONNECT},
    .exec = exec_count,
    CLI_ONE_PATH,
};
