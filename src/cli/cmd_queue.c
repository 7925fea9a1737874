/* tumbler queue: put, take, peek and list the items of a queue of
 * libtumbler's recipes (kazoo's layouts, docs/recipes.md). */
#include <stdlib.h>
#include <string.h>

#include <tumbler/recipes.h>

#include "cli/rcpwait.h"

/* The item's bytes, as get prints them (JSON: "data" or "data_base64"). */
static void print_item(struct cli *cli, const char *path, const void *v,
                       size_t len)
{
    if (cli->json) {
        struct jw w;
        jw_begin(&w, path);
        jw_data(&w, v, len);
        jw_finish(&w);
        return;
    }
    fwrite(v, 1, len, stdout);
    if (len == 0 || ((const char *)v)[len - 1] != '\n')
        putchar('\n');
    fflush(stdout);
}

/* Nothing to take or peek at: status 1. */
static int empty(const char *path)
{
    fprintf(stderr, "tumbler: queue %s: empty\n", path);
    return CLI_CONFLICT;
}

/* The taken item, kept by the callback for the main thread (which reads
 * it after the posted message, so after it is written). */
static struct {
    void *v;
    size_t len;
} got;

static void on_item(int rc, const void *value, size_t len, void *data)
{
    (void)data;
    if (rc == 0 && (got.v = malloc(len + 1)) != NULL) {
        memcpy(got.v, value, len);
        got.len = len;
    } else if (rc == 0) {
        rc = TB_ENOMEM;
    }
    cli_rcp_done(rc, NULL);
}

/* Take (waiting); a locking take consumes the item before it is
 * printed, so a tumbler killed meanwhile gives it back. */
static int take(struct cli *cli, struct tb_dqueue *q, const char *path,
                int locking, int timeout_ms)
{
    int rc, st;

    rc = tb_dqueue_take(q, timeout_ms, on_item, NULL);
    if (rc == 0 && (st = cli_rcp_wait(&rc)) >= 0) {
        tb_dqueue_cancel(q); /* an item taken meanwhile is printed */
        /* A delete in flight may have taken the item on the server
         * already, and only the take's end says so: leaving before it
         * (on another signal) would lose the item, gone from the queue
         * and printed nowhere.  So further signals wait for it too; it
         * comes once the requests in flight are answered or fail. */
        while (cli_rcp_wait(&rc) >= 0)
            ;
        if (rc != 0)
            return st;
    }
    if (rc == 0 && locking)
        rc = tb_dqueue_consume_sync(q);
    if (rc == TB_ETIMEDOUT) {
        free(got.v);
        return empty(path);
    }
    if (rc != 0) {
        free(got.v);
        return cli_fail(cli, "queue", path, rc);
    }
    print_item(cli, path, got.v, got.len);
    free(got.v);
    return CLI_OK;
}

static int by_name(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

/* The queue's item names in take order, and with -l its claims, read
 * only: a queue that does not exist is not made (TB_ENONODE, as get
 * reports a missing node), where the recipe's peek would make it.
 * *dir gets the directory of the items (malloc'd, however long PATH is;
 * NULL on failure). */
static int read_names(struct cli *cli, const char *path, int locking,
                      char **dir, struct tb_strings *e, struct tb_strings *t)
{
    char *taken;
    int rc;

    *dir = locking ? cli_path_join(path, "entries") : strdup(path);
    if (*dir == NULL)
        return cli_err(cli, CLI_OSERR, "out of memory");
    if ((rc = tb_get_children_sync(cli->c, *dir, NULL, NULL, e)) != 0) {
        rc = cli_fail(cli, "queue", *dir, rc);
        free(*dir);
        *dir = NULL;
        return rc;
    }
    if (locking) {
        if ((taken = cli_path_join(path, "taken")) == NULL) {
            tb_strings_free(e);
            free(*dir);
            *dir = NULL;
            return cli_err(cli, CLI_OSERR, "out of memory");
        }
        /* No taken/ is no claim; any other failure would show claimed
         * items as free (and peek one): the command's error. */
        rc = tb_get_children_sync(cli->c, taken, NULL, NULL, t);
        if (rc != 0 && rc != TB_ENONODE) {
            rc = cli_fail(cli, "queue", taken, rc);
            free(taken);
            tb_strings_free(e);
            free(*dir);
            *dir = NULL;
            return rc;
        }
        free(taken);
    }
    qsort(e->v, (size_t)e->count, sizeof *e->v, by_name);
    return CLI_OK;
}

static int is_taken(const struct tb_strings *t, const char *name)
{
    int j;

    for (j = 0; j < t->count; j++)
        if (strcmp(t->v[j], name) == 0)
            return 1;
    return 0;
}

static void free_names(struct tb_strings *e, struct tb_strings *t)
{
    if (e->v != NULL)
        tb_strings_free(e);
    if (t->v != NULL)
        tb_strings_free(t);
}

/* Peek: the first item not claimed, left in place; status 1 if none. */
static int peek(struct cli *cli, const char *path, int locking)
{
    char *dir, *node = NULL, *v = NULL;
    struct tb_strings e = {0, NULL}, t = {0, NULL};
    size_t len = 0;
    int i, rc;

    if ((rc = read_names(cli, path, locking, &dir, &e, &t)) != 0)
        return rc;
    for (i = 0, rc = TB_ENONODE; i < e.count && rc == TB_ENONODE; i++) {
        if (strncmp(e.v[i], "entry-", 6) != 0 || is_taken(&t, e.v[i]))
            continue;
        free(node);
        if ((node = cli_path_join(dir, e.v[i])) == NULL)
            rc = TB_ENOMEM;
        else
            rc = tb_get_data_sync(cli->c, node, NULL, NULL, &v, &len, NULL);
    } /* TB_ENONODE: taken since, the next one is first */
    free_names(&e, &t);
    free(dir);
    if (rc == TB_ENONODE)
        rc = empty(path);
    else if (rc != 0)
        rc = cli_fail(cli, "queue", node != NULL ? node : path, rc);
    else
        print_item(cli, path, v, len);
    tb_free(v);
    free(node);
    return rc;
}

/* The items in the order they would be taken: NAME [taken] DATA. */
static int list(struct cli *cli, const char *path, int locking)
{
    char *dir, *node, *failed = NULL;
    struct tb_strings e = {0, NULL}, t = {0, NULL};
    struct jw w;
    int i, rc, taken;

    if ((rc = read_names(cli, path, locking, &dir, &e, &t)) != 0)
        return rc;
    if (cli->json) {
        jw_begin(&w, path);
        jw_key(&w, "items");
        jw_arr(&w);
    }
    for (i = 0; i < e.count; i++) {
        char *v = NULL;
        size_t len = 0;
        if (strncmp(e.v[i], "entry-", 6) != 0)
            continue;
        taken = is_taken(&t, e.v[i]);
        if ((node = cli_path_join(dir, e.v[i])) == NULL) {
            rc = cli_err(cli, CLI_OSERR, "out of memory");
            break;
        }
        rc = tb_get_data_sync(cli->c, node, NULL, NULL, &v, &len, NULL);
        if (rc == TB_ENONODE) {
            free(node);
            rc = CLI_OK;
            continue; /* taken since */
        }
        /* Any other failure (an item this session may not read, the
         * connection lost) ends the listing with its status, as ls -R's:
         * the items so far stay, and --json has them, then "error". */
        if (rc != 0) {
            failed = node;
            break;
        }
        free(node);
        if (cli->json) {
            jw_obj(&w);
            jw_key(&w, "name");
            jw_str(&w, e.v[i]);
            jw_key(&w, "taken");
            jw_bool(&w, taken);
            jw_data(&w, v, len);
            jw_end_obj(&w);
        } else {
            /* Anyone may have put it: one line, no byte that drives the
             * terminal (as locks shows an owner), whole however long. */
            char small[2], *text = len > 0 ? malloc(len + 1) : NULL;
            printf("%s%s %s\n", e.v[i], taken ? " (taken)" : "",
                   text != NULL ? cli_text_str(v, len, text, len + 1)
                                : cli_text_str(v, len, small, sizeof small));
            free(text);
        }
        tb_free(v);
    }
    if (cli->json) {
        jw_end_arr(&w);
        if (failed != NULL)
            rc = cli_fail_in(cli, &w, "queue", failed, rc);
        jw_finish(&w);
    } else if (failed != NULL) {
        rc = cli_fail(cli, "queue", failed, rc);
    }
    fflush(stdout);
    free(failed);
    free_names(&e, &t);
    free(dir);
    return rc;
}

static int exec_queue(struct cli *cli, const struct cli_cmd *cmd,
                      const struct cli_args *a)
{
    const char *verb = a->argv[0], *path = a->argv[1];
    int locking = a->val['l'] != NULL, timeout_ms, rc, st = CLI_OK;
    int put = strcmp(verb, "put") == 0;
    struct tb_dqueue *q;

    if (!put && strcmp(verb, "take") != 0 && strcmp(verb, "peek") != 0 &&
        strcmp(verb, "ls") != 0)
        return cli_usage(cli, cmd, "unknown action '%s'", verb);
    if (a->argc != (put ? 3 : 2))
        return cli_usage(cli, cmd,
                         put ? "put needs PATH DATA" : "expected one PATH");
    if (a->num['p'] > 999)
        return cli_usage(cli, cmd, "bad priority (0..999)");
    if ((rc = cli_rcp_timeout(cli, cmd, a->val['w'], &timeout_ms)) != 0 ||
        (rc = cli_check_recipe_path(cli, cmd, path)) != 0 ||
        (rc = cli_connect(cli)) != 0)
        return rc;
    if (strcmp(verb, "ls") == 0)
        return list(cli, path, locking);
    if (strcmp(verb, "peek") == 0)
        return peek(cli, path, locking);
    rc = tb_dqueue_new(&q, cli->c, path,
                       locking ? TB_QUEUE_LOCKING : TB_QUEUE_SIMPLE);
    if (rc != 0)
        return cli_fail(cli, "queue", path, rc);
    if (put) {
        rc = tb_dqueue_put_sync(q, a->argv[2], strlen(a->argv[2]),
                                (int)a->num['p']);
        st = rc != 0 ? cli_fail(cli, "queue", path, rc) : CLI_OK;
        if (rc == 0)
            cli_print_done(cli, path, "put");
    } else {
        st = take(cli, q, path, locking, timeout_ms);
    }
    tb_dqueue_free(q);
    return st;
}

const struct cli_spec cli_cmd_queue = {
    .cmd = {.name = "queue",
            .usage = "queue [-l] put [-p PRIO] PATH DATA | queue [-l] take "
                     "[-w S] PATH | queue [-l] peek|ls PATH",
            .summary =
                "Put, take (print and remove), peek at or list the items "
                "of a queue.",
            .flags = CLI_NO_SHELL,
            .notes = "kazoo's Queue layout, or with -l its LockingQueue "
                     "(docs/recipes.md).\n"
                     "take waits for an item; exit status 1 if none came "
                     "within -w\n"
                     "(peek: the queue is empty).  put and take make the "
                     "queue; peek and ls\n"
                     "only read it: a queue that does not exist is status "
                     "101, as for get.\n"
                     "A take interrupted after it removed its item still "
                     "prints it (status 0).\n"},
    .exec = exec_queue,
    .opts =
        (const struct cli_opt[]){
            {.letter = 'l',
             .name = "locking",
             .help = "the locking layout (entries/, taken/): an item is\n"
                     "claimed, then removed only once taken"},
            {.letter = 'p',
             .name = "priority",
             .kind = CLI_NATURAL,
             .arg = "PRIO",
             .help = "put: 0..999, lower first (default 100)",
             .what = "priority",
             .hint = " (0..999)"},
            {.letter = 'w',
             .name = "wait",
             .kind = CLI_STR,
             .arg = "SECONDS",
             .help = "take: give up after SECONDS (0: look once)"},
            {0}},
    .min_args = 2,
    .max_args = 3,
    .arity = "expected put|take|peek|ls PATH [DATA]",
};
