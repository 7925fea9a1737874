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

/* Take (waiting) or peek; a locking take consumes the item before it is
 * printed, so a tumbler killed meanwhile gives it back. */
static int take(struct cli *cli, struct tb_dqueue *q, const char *path,
                int peek, int locking, int timeout_ms)
{
    int rc, st;

    rc = peek ? tb_dqueue_peek(q, on_item, NULL)
              : tb_dqueue_take(q, timeout_ms, on_item, NULL);
    if (rc == 0 && (st = cli_rcp_wait(&rc)) >= 0) {
        tb_dqueue_cancel(q); /* an item taken meanwhile is printed */
        if (cli_rcp_wait(&rc) >= 0 || rc != 0)
            return st;
    }
    if (rc == 0 && locking && !peek)
        rc = tb_dqueue_consume_sync(q);
    if (rc == TB_ETIMEDOUT || (peek && rc == TB_ENONODE)) {
        free(got.v);
        fprintf(stderr, "tumbler: queue %s: empty\n", path);
        return CLI_CONFLICT;
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

/* The items in the order they would be taken: NAME [taken] DATA. */
static int list(struct cli *cli, const char *path, int locking)
{
    char dir[1024], node[1100];
    struct tb_strings e = {0, NULL}, t = {0, NULL};
    struct jw w;
    int i, j, rc, taken;

    snprintf(dir, sizeof dir, "%s%s", path, locking ? "/entries" : "");
    if ((rc = tb_get_children_sync(cli->c, dir, NULL, NULL, &e)) != 0)
        return cli_fail(cli, "queue", dir, rc);
    snprintf(node, sizeof node, "%s/taken", path);
    if (locking)
        tb_get_children_sync(cli->c, node, NULL, NULL, &t);
    qsort(e.v, (size_t)e.count, sizeof *e.v, by_name);
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
        for (j = 0, taken = 0; j < t.count; j++)
            taken |= strcmp(t.v[j], e.v[i]) == 0;
        snprintf(node, sizeof node, "%s/%s", dir, e.v[i]);
        if (tb_get_data_sync(cli->c, node, NULL, NULL, &v, &len, NULL) != 0)
            continue; /* taken since */
        if (cli->json) {
            jw_obj(&w);
            jw_key(&w, "name");
            jw_str(&w, e.v[i]);
            jw_key(&w, "taken");
            jw_bool(&w, taken);
            jw_data(&w, v, len);
            jw_end_obj(&w);
        } else {
            printf("%s%s %.*s\n", e.v[i], taken ? " (taken)" : "", (int)len,
                   v != NULL ? v : "");
        }
        tb_free(v);
    }
    if (cli->json) {
        jw_end_arr(&w);
        jw_finish(&w);
    }
    fflush(stdout);
    tb_strings_free(&e);
    if (t.v != NULL)
        tb_strings_free(&t);
    return CLI_OK;
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
        (rc = cli_check_path(cli, cmd, path)) != 0 ||
        (rc = cli_connect(cli)) != 0)
        return rc;
    if (strcmp(verb, "ls") == 0)
        return list(cli, path, locking);
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
        st = take(cli, q, path, verb[0] == 'p', locking, timeout_ms);
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
                     "(peek: the queue is empty).\n"},
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
