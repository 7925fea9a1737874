/* The write commands of the tree: create, set, delete, deleteall.
 *
 * Data comes from the command line or, with -f FILE ('-' for stdin), from
 * a file, so binary data needs no quoting.  Versions (-v) make a write
 * conditional, as in zkCli: a mismatch exits 103 (EBADVERSION). */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* The largest request the library sends (tb_options.max_request_bytes's
 * default, ZooKeeper's jute.maxbuffer), the path, the ACL and the
 * request's own few dozen bytes included: reading more data than that
 * would only be refused. */
#define MAX_REQUEST 1048575
#define MAX_DATA    MAX_REQUEST
/* The longest TTL a node can have (ZooKeeper's EphemeralType.MAX_TTL). */
#define MAX_TTL  (((int64_t)1 << 40) - 1)
#define TTL_HINT " (milliseconds, 1 to 1099511627775)"

static const char cmd_create_arity[] =
    "expected PATH, at most one DATA (or -f FILE) and an ACL";
static const char cmd_set_arity[] = "expected PATH and DATA (or -f FILE)";

/* The data of create and set: -f FILE's contents (*owned, to free), else
 * the DATA operand `arg`, else null data.  0 or the exit status. */
static int data_arg(struct cli *cli, const char *file, const char *arg,
                    const char **data, size_t *len, char **owned)
{
    int rc;

    *data = arg;
    *len = arg != NULL ? strlen(arg) : 0;
    if (file == NULL)
        return 0;
    if ((rc = cli_read_file(cli, file, MAX_DATA, owned, len)) == 0)
        *data = *owned;
    return rc;
}

/* A write refused: TB_ETOOBIG is data the request cannot carry, a usage
 * error (64) that says so; the others as cli_fail. */
static int write_fail(struct cli *cli, const char *what, const char *path,
                      size_t len, int rc)
{
    if (rc != TB_ETOOBIG)
        return cli_fail(cli, what, path, rc);
    return cli_fail_msg(cli, what, path, rc,
                        "%s %s: %zu bytes of data do not fit in a request "
                        "(at most %d bytes, the path and the ACL included)",
                        what, path, len, MAX_REQUEST);
}

/* Prints {"path": PATH, "stat": ST} for --json, or the stat with -s. */
static void print_result(struct cli *cli, const char *path,
                         const struct tb_stat *st, int with_stat)
{
    if (cli->json) {
        struct jw w;
        jw_begin(&w, path);
        if (st != NULL) {
            jw_key(&w, "stat");
            jw_stat(&w, st);
        }
        jw_finish(&w);
    } else if (with_stat && st != NULL) {
        cli_print_stat(stdout, st);
        fflush(stdout);
    }
}

/* -f FILE, shared by create and set. */
#define FILE_OPT                                                               \
    {                                                                          \
        .letter = 'f', .name = "file", .kind = CLI_STR, .arg = "FILE",         \
        .help = "take the data from FILE ('-': standard input)"                \
    }
/* -v VERSION, shared by set and delete. */
#define VERSION_OPT                                                            \
    {                                                                          \
        .letter = 'v', .name = "version", .kind = CLI_VERSION, .arg = "N",     \
        .help = "only if the data version is N (else exit 103)",               \
        .what = "version"                                                      \
    }

/* ---- create ---- */

static int create_mode(struct cli *cli, const struct cli_cmd *cmd,
                       const struct cli_args *a, int *mode)
{
    int seq = a->val['s'] != NULL, eph = a->val['e'] != NULL;
    int container = a->val['c'] != NULL, ttl = a->val['t'] != NULL;

    if (container && (seq || eph || ttl))
        return cli_usage(cli, cmd, "-c cannot be combined with -s, -e or -t");
    if (ttl && eph)
        return cli_usage(cli, cmd, "-t cannot be combined with -e");
    if (container)
        *mode = TB_CONTAINER;
    else if (ttl)
        *mode =
            seq ? TB_PERSISTENT_SEQUENTIAL_WITH_TTL : TB_PERSISTENT_WITH_TTL;
    else
        *mode = (eph ? TB_EPHEMERAL : TB_PERSISTENT) |
                (seq ? TB_PERSISTENT_SEQUENTIAL : 0);
    return 0;
}

/* Creates the missing ancestors of the node at `p` (a copy the function
 * cuts up), persistent with null data and the open ACL, as mkdir -p makes
 * directories; one made meanwhile by another client is fine.  Up from the
 * parent until a create does not fail for want of its own parent, then
 * down again.  0, or TB_E* with `p` cut to the node that failed. */
static int make_parents(struct tb_client *c, char *p)
{
    size_t len = strlen(p), n;
    int rc = TB_ENONODE;
    char *s;

    while (rc == TB_ENONODE && (s = strrchr(p, '/')) != p) {
        *s = '\0';
        rc = tb_create_sync(c, p, NULL, 0, NULL, TB_PERSISTENT, 0, NULL, 0,
                            NULL);
    }
    if (rc != 0 && rc != TB_ENODEEXISTS)
        return rc;
    while ((n = strlen(p)) < len) {
        p[n] = '/'; /* the next level down, up to the next cut */
        if (strlen(p) == len)
            break;
        rc = tb_create_sync(c, p, NULL, 0, NULL, TB_PERSISTENT, 0, NULL, 0,
                            NULL);
        if (rc != 0 && rc != TB_ENODEEXISTS)
            return rc;
    }
    return 0;
}

/* What create sends: the data, the ACL (NULL: the open ACL). */
struct create_req {
    const char *path, *data;
    size_t len;
    const struct tb_acl_list *acl;
    int mode;
    int64_t ttl;
    int parents;
};

static int do_create(struct cli *cli, const struct create_req *r)
{
    /* The name created is PATH, with a sequential node's suffix after
     * it: %010d of the parent's 32-bit counter, at most 11 characters
     * (room for 20, a 64-bit one's). */
    size_t cap = strlen(r->path) + 32;
    char *created = malloc(cap), *p;
    struct tb_stat st;
    int rc;

    if (created == NULL)
        return cli_err(cli, CLI_OSERR, "out of memory");
    rc = tb_create_sync(cli->c, r->path, r->data, r->len, r->acl, r->mode,
                        r->ttl, created, cap, &st);
    if (rc == TB_ENONODE && r->parents) {
        if ((p = strdup(r->path)) == NULL) {
            free(created);
            return CLI_OSERR;
        }
        rc = make_parents(cli->c, p);
        if (rc != 0)
            rc = cli_fail(cli, "create", p, rc);
        free(p);
        if (rc != 0) {
            free(created);
            return rc;
        }
        rc = tb_create_sync(cli->c, r->path, r->data, r->len, r->acl, r->mode,
                            r->ttl, created, cap, &st);
    }
    if (rc != 0) {
        free(created);
        return write_fail(cli, "create", r->path, r->len, rc);
    }
    if (!cli->json)
        printf("Created %s\n", created);
    print_result(cli, created, &st, 0);
    free(created);
    return CLI_OK;
}

/* Operands: PATH [DATA [ACL]], or with -f FILE: PATH [ACL]. */
static int exec_create(struct cli *cli, const struct cli_cmd *cmd,
                       const struct cli_args *a)
{
    const char *file = a->val['f'];
    int acl_at = file != NULL ? 1 : 2, rc;
    struct create_req r = {.path = a->argv[0], .parents = a->val['p'] != NULL};
    struct cli_acl acl = {0};
    char *fdata = NULL;

    r.ttl = a->val['t'] != NULL ? a->num['t'] : 0;
    /* ZooKeeper keeps a TTL in 40 bits: the library refuses more with
     * EBADARGUMENTS (8), where it is the command line that is wrong. */
    if (r.ttl > MAX_TTL)
        return cli_usage(cli, cmd, "bad TTL '%s'%s", a->val['t'], TTL_HINT);
    /* Not CLI_PATH: a sequential create's PATH may end with '/'. */
    rc = a->val['s'] != NULL ? cli_check_seq_path(cli, cmd, r.path)
                             : cli_check_path(cli, cmd, r.path);
    if (rc != 0)
        return rc;
    if (a->argc > acl_at + 1)
        return cli_usage(cli, cmd, "%s", cmd_create_arity);
    if ((rc = create_mode(cli, cmd, a, &r.mode)) != 0)
        return rc;
    if (a->argc > acl_at) {
        if ((rc = cli_acl_arg(cli, cmd, a->argv[acl_at], &acl)) != 0)
            return rc;
        r.acl = &acl.list;
    }
    rc = data_arg(cli, file, file == NULL && a->argc > 1 ? a->argv[1] : NULL,
                  &r.data, &r.len, &fdata);
    if (rc == 0 && (rc = cli_connect(cli)) == 0)
        rc = do_create(cli, &r);
    free(fdata);
    cli_acl_free(&acl);
    return rc;
}

const struct cli_spec cli_cmd_create = {
    .cmd = {.name = "create",
            .usage = "create [-s] [-e] [-c] [-t TTL] [-p] [-f FILE] PATH "
                     "[DATA [ACL]]",
            .summary = "Create PATH with DATA (none: null data); print the "
                       "name created.",
            .notes = "ACL is written as setacl takes it, SCHEME:ID:PERMS[,...] "
                     "(default\nworld:anyone:cdrwa); with -f FILE it follows "
                     "PATH.\n"},
    .exec = exec_create,
    .opts =
        (const struct cli_opt[]){
            {.letter = 's',
             .name = "sequential",
             .help = "append a 10-digit sequence number to the name"},
            {.letter = 'e',
             .name = "ephemeral",
             .help = "delete the node when this session ends (outside\n"
                     "the shell: when tumbler exits)"},
            {.letter = 'c',
             .name = "container",
             .help = "a container: the server deletes it once its last\n"
                     "child is gone"},
            {.letter = 't',
             .name = "ttl",
             .kind = CLI_POSITIVE,
             .arg = "TTL",
             .help = "persistent with a time-to-live in milliseconds\n"
                     "(deleted once unchanged and childless that long)",
             .what = "TTL",
             .hint = TTL_HINT},
            {.letter = 'p',
             .name = "parents",
             .help = "also create the missing parents (persistent, no\n"
                     "data, world:anyone:cdrwa), as mkdir -p does"},
            FILE_OPT,
            {0}},
    .min_args = 1,
    .max_args = 3,
    .arity = cmd_create_arity,
};

/* ---- set ---- */

static int exec_set(struct cli *cli, const struct cli_cmd *cmd,
                    const struct cli_args *a)
{
    const char *path = a->argv[0], *file = a->val['f'], *data;
    char *fdata = NULL;
    size_t len;
    struct tb_stat st;
    int rc;

    if (a->argc != (file != NULL ? 1 : 2))
        return cli_usage(cli, cmd, "%s", cmd_set_arity);
    rc = data_arg(cli, file, a->argc > 1 ? a->argv[1] : NULL, &data, &len,
                  &fdata);
    if (rc == 0 && (rc = cli_connect(cli)) == 0) {
        rc = tb_set_data_sync(cli->c, path, data, len, (int32_t)a->num['v'],
                              &st);
        if (rc != 0)
            rc = write_fail(cli, "set", path, len, rc);
        else
            print_result(cli, path, &st, a->val['s'] != NULL);
    }
    free(fdata);
    return rc;
}

const struct cli_spec cli_cmd_set = {
    .cmd = {.name = "set",
            .usage = "set [-v VERSION] [-s] [-f FILE] PATH [DATA]",
            .summary = "Replace the data of PATH.",
            .flags = CLI_PATH},
    .exec = exec_set,
    .opts =
        (const struct cli_opt[]){
            VERSION_OPT,
            {.letter = 's', .name = "stat", .help = "print the new stat"},
            FILE_OPT,
            {0}},
    .min_args = 1,
    .max_args = 2,
    .arity = cmd_set_arity,
};

/* ---- delete ---- */

static int exec_delete(struct cli *cli, const struct cli_cmd *cmd,
                       const struct cli_args *a)
{
    int rc;

    (void)cmd;
    rc = tb_delete_sync(cli->c, a->argv[0], (int32_t)a->num['v']);
    if (rc != 0)
        return cli_fail(cli, "delete", a->argv[0], rc);
    print_result(cli, a->argv[0], NULL, 0);
    return CLI_OK;
}

const struct cli_spec cli_cmd_delete = {
    .cmd = {.name = "delete",
            .usage = "delete [-v VERSION] PATH",
            .summary = "Delete PATH, which must have no children (else exit "
                       "111).",
            .flags = CLI_PATH | CLI_CONNECT},
    .exec = exec_delete,
    .opts = (const struct cli_opt[]){VERSION_OPT, {0}},
    CLI_ONE_PATH,
};

/* ---- deleteall ---- */

/* Children first.  Nodes that vanish meanwhile are fine; a child created
 * meanwhile makes the parent's delete fail with ENOTEMPTY, and the parent
 * is then emptied again, a bounded number of times. */
static int delete_tree(struct cli *cli, const char *path, int *count)
{
    struct tb_strings ch;
    int32_t i;
    int rc, round;

    if ((rc = cli_walk_stop(cli, "deleteall")) != 0)
        return rc;
    for (round = 0; round < 5; round++) {
        rc = tb_get_children_sync(cli->c, path, NULL, NULL, &ch);
        if (rc == TB_ENONODE)
            return 0;
        if (rc != 0)
            return cli_fail(cli, "deleteall", path, rc);
        for (i = 0, rc = 0; i < ch.count && rc == 0; i++) {
            size_t a = strlen(path), b = strlen(ch.v[i]);
            char *p = malloc(a + b + 2);
            if (p == NULL) {
                rc = CLI_OSERR;
                break;
            }
            snprintf(p, a + b + 2, "%s/%s", a > 1 ? path : "", ch.v[i]);
            rc = delete_tree(cli, p, count);
            free(p);
        }
        tb_strings_free(&ch);
        if (rc != 0)
            return rc;
        rc = tb_delete_sync(cli->c, path, -1);
        if (rc == 0) {
            ++*count;
            return 0;
        }
        if (rc == TB_ENONODE)
            return 0;
        if (rc != TB_ENOTEMPTY)
            return cli_fail(cli, "deleteall", path, rc);
    }
    return cli_fail(cli, "deleteall", path, TB_ENOTEMPTY);
}

static int exec_deleteall(struct cli *cli, const struct cli_cmd *cmd,
                          const struct cli_args *a)
{
    const char *path = a->argv[0];
    int rc, count = 0;
    struct tb_stat st;

    if (strcmp(path, "/") == 0)
        return cli_usage(cli, cmd, "refusing to delete the root");
    if ((rc = cli_connect(cli)) != 0)
        return rc;
    /* A missing PATH is an error, as for delete; what vanishes under the
     * walk is not. */
    if ((rc = tb_exists_sync(cli->c, path, NULL, NULL, &st)) != 0)
        return cli_fail(cli, "deleteall", path, rc);
    if ((rc = delete_tree(cli, path, &count)) != 0)
        return rc;
    if (cli->json) {
        struct jw w;
        jw_begin(&w, path);
        jw_key(&w, "deleted");
        jw_int(&w, count);
        jw_finish(&w);
    }
    return CLI_OK;
}

const struct cli_spec cli_cmd_deleteall = {
    .cmd = {.name = "deleteall",
            .usage = "deleteall PATH",
            .summary = "Delete PATH and everything under it.",
            .flags = CLI_PATH},
    .exec = exec_deleteall,
    CLI_ONE_PATH,
};
