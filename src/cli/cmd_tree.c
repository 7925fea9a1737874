/* The read commands of the tree: ls, get, stat, sync.
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

struct ls_opts {
    int recursive, stat, watch;
};

/* Pre-order walk, children sorted.  A node deleted under the walk is
 * skipped: the listing is of a tree that keeps changing. */
static int walk(struct cli *cli, const char *path, struct jw *w, int top)
{
    struct tb_strings ch;
    int32_t i;
    int rc;

    rc = tb_get_children_sync(cli->c, path, NULL, NULL, &ch);
    if (rc == TB_ENONODE && !top)
        return 0;
    if (rc != 0)
        return cli_fail(cli, "ls", path, rc);
    if (w != NULL)
        jw_str(w, path);
    else
        printf("%s\n", path);
    sort_strings(&ch);
    for (i = 0; i < ch.count && rc == 0; i++) {
        char *p = child_path(path, ch.v[i]);
        rc = p ? walk(cli, p, w, 0) : CLI_OSERR;
        free(p);
    }
    tb_strings_free(&ch);
    return rc;
}

static int ls_recursive(struct cli *cli, const char *path)
{
    struct jw w;
    int rc;

    if (!cli->json)
        return walk(cli, path, NULL, 1);
    jw_init(&w, stdout);
    jw_obj(&w);
    jw_key(&w, "path");
    jw_str(&w, path);
    jw_key(&w, "nodes");
    jw_arr(&w);
    rc = walk(cli, path, &w, 1);
    jw_end_arr(&w);
    jw_end_obj(&w);
    jw_done(&w);
    return rc;
}

static int ls_one(struct cli *cli, const char *path, const struct ls_opts *o)
{
    struct tb_strings ch;
    struct tb_stat st;
    int32_t i;
    int rc;

    rc = tb_get_children2_sync(cli->c, path, o->watch ? cli_watch_cb : NULL,
                               watcher(cli), &ch, &st);
    if (rc != 0)
        return cli_fail(cli, "ls", path, rc);
    sort_strings(&ch);
    if (cli->json) {
        struct jw w;
        jw_init(&w, stdout);
        jw_obj(&w);
        jw_key(&w, "path");
        jw_str(&w, path);
        jw_key(&w, "children");
        jw_arr(&w);
        for (i = 0; i < ch.count; i++)
            jw_str(&w, ch.v[i]);
        jw_end_arr(&w);
        if (o->stat) {
            jw_key(&w, "stat");
            jw_stat(&w, &st);
        }
        jw_end_obj(&w);
        jw_done(&w);
    } else {
        for (i = 0; i < ch.count; i++)
            printf("%s\n", ch.v[i]);
        if (o->stat)
            cli_print_stat(stdout, &st);
        fflush(stdout);
    }
    tb_strings_free(&ch);
    return CLI_OK;
}

static int run_ls(struct cli *cli, const struct cli_cmd *cmd, int argc,
                  char **argv)
{
    static const struct option lo[] = {{"recursive", no_argument, NULL, 'R'},
                                       {"stat", no_argument, NULL, 's'},
                                       {"watch", no_argument, NULL, 'w'},
                                       CLI_COMMON_LONGOPTS,
                                       {NULL, 0, NULL, 0}};
    struct ls_opts o = {0, 0, 0};
    const char *path;
    int ch, rc;

    cli_opt_reset();
    while ((ch = cli_getopt(cli, argc, argv, ":Rswh", lo)) != -1) {
        switch (ch) {
        case 'R':
            o.recursive = 1;
            break;
        case 's':
            o.stat = 1;
            break;
        case 'w':
            o.watch = 1;
            break;
        default:
            return cli_opt_end(cli, cmd, ch, argv);
        }
    }
    if (argc - optind > 1)
        return cli_usage(cli, cmd, "too many arguments");
    path = optind < argc ? argv[optind] : "/";
    if ((rc = cli_check_path(cli, cmd, path)) != 0)
        return rc;
    if (o.recursive && (o.watch || o.stat))
        return cli_usage(cli, cmd, "-R cannot be combined with -s or -w");
    if ((rc = cli_connect(cli)) != 0)
        return rc;
    if (o.recursive)
        return ls_recursive(cli, path);
    rc = ls_one(cli, path, &o);
    return o.watch ? after_watch(cli, rc) : rc;
}

const struct cli_cmd cli_cmd_ls = {
    "ls",
    run_ls,
    "ls [-R] [-s] [-w] [PATH]",
    "List the children of PATH (default /), one per line, sorted.",
    "  -R, --recursive     list the whole subtree, one full path per line\n"
    "  -s, --stat          also print PATH's stat\n"
    "  -w, --watch         set a child watch; outside the shell, wait for it\n"
    "                      to fire and print the event\n",
    0,
    NULL};

/* ---- get ---- */

static int run_get(struct cli *cli, const struct cli_cmd *cmd, int argc,
                   char **argv)
{
    static const struct option lo[] = {{"stat", no_argument, NULL, 's'},
                                       {"watch", no_argument, NULL, 'w'},
                                       CLI_COMMON_LONGOPTS,
                                       {NULL, 0, NULL, 0}};
    int ch, rc, with_stat = 0, watch = 0;
    struct tb_stat st;
    char *value;
    size_t len;

    cli_opt_reset();
    while ((ch = cli_getopt(cli, argc, argv, ":swh", lo)) != -1) {
        switch (ch) {
        case 's':
            with_stat = 1;
            break;
        case 'w':
            watch = 1;
            break;
        default:
            return cli_opt_end(cli, cmd, ch, argv);
        }
    }
    if ((rc = cli_path_arg(cli, cmd, argc, argv)) != 0)
        return rc;
    rc = tb_get_data_sync(cli->c, argv[optind], watch ? cli_watch_cb : NULL,
                          watcher(cli), &value, &len, &st);
    if (rc != 0)
        return cli_fail(cli, "get", argv[optind], rc);
    if (cli->json) {
        struct jw w;
        jw_init(&w, stdout);
        jw_obj(&w);
        jw_key(&w, "path");
        jw_str(&w, argv[optind]);
        jw_data(&w, value, len);
        jw_key(&w, "stat");
        jw_stat(&w, &st);
        jw_end_obj(&w);
        jw_done(&w);
    } else {
        /* The bytes as stored; a newline after them (as zkCli prints)
         * unless the data ends with one. */
        if (value != NULL && len > 0) {
            fwrite(value, 1, len, stdout);
            if (value[len - 1] != '\n')
                putchar('\n');
        }
        if (with_stat)
            cli_print_stat(stdout, &st);
        fflush(stdout);
    }
    tb_free(value);
    return watch ? after_watch(cli, CLI_OK) : CLI_OK;
}

const struct cli_cmd cli_cmd_get = {
    "get",
    run_get,
    "get [-s] [-w] PATH",
    "Print the data of PATH (nothing for empty or null data).",
    "  -s, --stat          also print the stat\n"
    "  -w, --watch         set a data watch; outside the shell, wait for it\n"
    "                      to fire and print the event\n",
    0,
    NULL};

/* ---- stat ---- */

static int run_stat(struct cli *cli, const struct cli_cmd *cmd, int argc,
                    char **argv)
{
    static const struct option lo[] = {{"watch", no_argument, NULL, 'w'},
                                       CLI_COMMON_LONGOPTS,
                                       {NULL, 0, NULL, 0}};
    int ch, rc, watch = 0;
    struct tb_stat st;

    cli_opt_reset();
    while ((ch = cli_getopt(cli, argc, argv, ":wh", lo)) != -1) {
        switch (ch) {
        case 'w':
            watch = 1;
            break;
        default:
            return cli_opt_end(cli, cmd, ch, argv);
        }
    }
    if ((rc = cli_path_arg(cli, cmd, argc, argv)) != 0)
        return rc;
    rc = tb_exists_sync(cli->c, argv[optind], watch ? cli_watch_cb : NULL,
                        watcher(cli), &st);
    /* exists leaves its watch on a missing node: wait for its creation. */
    if (rc == TB_ENONODE && watch && !cli->shell)
        return cli_wait_event(cli);
    if (rc != 0)
        return cli_fail(cli, "stat", argv[optind], rc);
    if (cli->json) {
        struct jw w;
        jw_init(&w, stdout);
        jw_obj(&w);
        jw_key(&w, "path");
        jw_str(&w, argv[optind]);
        jw_key(&w, "stat");
        jw_stat(&w, &st);
        jw_end_obj(&w);
        jw_done(&w);
    } else {
        cli_print_stat(stdout, &st);
        fflush(stdout);
    }
    return watch ? after_watch(cli, CLI_OK) : CLI_OK;
}

const struct cli_cmd cli_cmd_stat = {
    "stat",
    run_stat,
    "stat [-w] PATH",
    "Print the stat of PATH; exit status 101 if it does not exist.",
    "  -w, --watch         set an exists watch (fires on create, change or\n"
    "                      delete); outside the shell, wait for it\n",
    0,
    NULL};

/* ---- sync ---- */

static int run_sync(struct cli *cli, const struct cli_cmd *cmd, int argc,
                    char **argv)
{
    int ch, rc;

    cli_opt_reset();
    if ((ch = cli_getopt(cli, argc, argv, ":h", cli_common_opts)) != -1)
        return cli_opt_end(cli, cmd, ch, argv);
    if ((rc = cli_path_arg(cli, cmd, argc, argv)) != 0)
        return rc;
    if ((rc = tb_sync_sync(cli->c, argv[optind])) != 0)
        return cli_fail(cli, "sync", argv[optind], rc);
    if (cli->json) {
        struct jw w;
        jw_init(&w, stdout);
        jw_obj(&w);
        jw_key(&w, "path");
        jw_str(&w, argv[optind]);
        jw_key(&w, "synced");
        jw_bool(&w, 1);
        jw_end_obj(&w);
        jw_done(&w);
    }
    return CLI_OK;
}

const struct cli_cmd cli_cmd_sync = {
    "sync",      run_sync,
    "sync PATH", "Make the server this session is on catch up with the leader.",
    "",          0,
    NULL};
