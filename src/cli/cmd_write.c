/* The write commands of the tree: create, set, delete, deleteall.
 *
 * Data comes from the command line or, with -f FILE ('-' for stdin), from
 * a file, so binary data needs no quoting.  Versions (-v) make a write
 * conditional, as in zkCli: a mismatch exits 103 (EBADVERSION). */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* A znode holds at most jute.maxbuffer (1 MiB by default); reading more
 * would only be refused by the server. */
#define MAX_DATA (1024 * 1024)

/* Reads FILE (or stdin for "-") into *out (malloc'd). */
static int read_file(struct cli *cli, const char *name, char **out, size_t *len)
{
    FILE *f = strcmp(name, "-") == 0 ? stdin : fopen(name, "rb");
    char *buf;
    size_t n;

    if (f == NULL)
        return cli_err(cli, 66, "cannot open %s: %m", name); /* EX_NOINPUT */
    if ((buf = malloc(MAX_DATA + 1)) == NULL) {
        if (f != stdin)
            fclose(f);
        return CLI_OSERR;
    }
    n = fread(buf, 1, MAX_DATA + 1, f);
    if (ferror(f) || n > MAX_DATA) {
        int big = !ferror(f);
        if (f != stdin)
            fclose(f);
        free(buf);
        return big ? cli_err(cli, CLI_USAGE, "%s is larger than %d bytes", name,
                             MAX_DATA)
                   : cli_err(cli, 66, "cannot read %s", name);
    }
    if (f != stdin)
        fclose(f);
    *out = buf;
    *len = n;
    return 0;
}

/* Prints {"path": PATH, "stat": ST} for --json, or the stat with -s. */
static void print_result(struct cli *cli, const char *path,
                         const struct tb_stat *st, int with_stat)
{
    if (cli->json) {
        struct jw w;
        jw_init(&w, stdout);
        jw_obj(&w);
        jw_key(&w, "path");
        jw_str(&w, path);
        if (st != NULL) {
            jw_key(&w, "stat");
            jw_stat(&w, st);
        }
        jw_end_obj(&w);
        jw_done(&w);
    } else if (with_stat && st != NULL) {
        cli_print_stat(stdout, st);
        fflush(stdout);
    }
}

/* ---- create ---- */

struct create_opts {
    int seq, eph, container;
    int64_t ttl;
    const char *file;
};

static int create_mode(struct cli *cli, const struct cli_cmd *cmd,
                       const struct create_opts *o, int *mode)
{
    if (o->container && (o->seq || o->eph || o->ttl))
        return cli_usage(cli, cmd, "-c cannot be combined with -s, -e or -t");
    if (o->ttl && o->eph)
        return cli_usage(cli, cmd, "-t cannot be combined with -e");
    if (o->container)
        *mode = TB_CONTAINER;
    else if (o->ttl)
        *mode =
            o->seq ? TB_PERSISTENT_SEQUENTIAL_WITH_TTL : TB_PERSISTENT_WITH_TTL;
    else
        *mode = (o->eph ? TB_EPHEMERAL : TB_PERSISTENT) |
                (o->seq ? TB_PERSISTENT_SEQUENTIAL : 0);
    return 0;
}

static int parse_create(struct cli *cli, const struct cli_cmd *cmd, int argc,
                        char **argv, struct create_opts *o)
{
    static const struct option lo[] = {{"sequential", no_argument, NULL, 's'},
                                       {"ephemeral", no_argument, NULL, 'e'},
                                       {"container", no_argument, NULL, 'c'},
                                       {"ttl", required_argument, NULL, 't'},
                                       {"file", required_argument, NULL, 'f'},
                                       CLI_COMMON_LONGOPTS,
                                       {NULL, 0, NULL, 0}};
    int ch;

    cli_opt_reset();
    while ((ch = cli_getopt(cli, argc, argv, ":sect:f:h", lo)) != -1) {
        switch (ch) {
        case 's':
            o->seq = 1;
            break;
        case 'e':
            o->eph = 1;
            break;
        case 'c':
            o->container = 1;
            break;
        case 't':
            if (cli_parse_i64(optarg, &o->ttl) != 0 || o->ttl <= 0)
                return cli_usage(cli, cmd, "bad TTL '%s' (milliseconds > 0)",
                                 optarg);
            break;
        case 'f':
            o->file = optarg;
            break;
        case 'h':
            return cli_help(cli, cmd) - 1; /* -1: stop, status 0 */
        default:
            return cli_opt_end(cli, cmd, ch, argv);
        }
    }
    return 0;
}

static int run_create(struct cli *cli, const struct cli_cmd *cmd, int argc,
                      char **argv)
{
    struct create_opts o;
    char created[1024], *fdata = NULL;
    const char *data = NULL;
    size_t len = 0;
    struct tb_stat st;
    int mode = TB_PERSISTENT, rc, nargs;

    memset(&o, 0, sizeof o);
    if ((rc = parse_create(cli, cmd, argc, argv, &o)) != 0)
        return rc < 0 ? CLI_OK : rc;
    nargs = argc - optind;
    if (nargs < 1 || nargs > 2 || (nargs == 2 && o.file != NULL))
        return cli_usage(cli, cmd,
                         "expected PATH and at most one DATA "
                         "(or -f FILE)");
    if ((rc = cli_check_path(cli, cmd, argv[optind])) != 0 ||
        (rc = create_mode(cli, cmd, &o, &mode)) != 0)
        return rc;
    if (nargs == 2) {
        data = argv[optind + 1];
        len = strlen(data);
    } else if (o.file != NULL) {
        if ((rc = read_file(cli, o.file, &fdata, &len)) != 0)
            return rc;
        data = fdata;
    }
    if ((rc = cli_connect(cli)) == 0) {
        rc = tb_create_sync(cli->c, argv[optind], data, len, NULL, mode, o.ttl,
                            created, sizeof created, &st);
        if (rc != 0) {
            rc = cli_fail(cli, "create", argv[optind], rc);
        } else {
            if (!cli->json)
                printf("Created %s\n", created);
            print_result(cli, created, &st, 0);
        }
    }
    free(fdata);
    return rc;
}

const struct cli_cmd cli_cmd_create = {
    "create",
    run_create,
    "create [-s] [-e] [-c] [-t TTL] [-f FILE] PATH [DATA]",
    "Create PATH with DATA (none: null data); print the name created.",
    "  -s, --sequential    append a 10-digit sequence number to the name\n"
    "  -e, --ephemeral     delete the node when this session ends (outside\n"
    "                      the shell: when tumbler exits)\n"
    "  -c, --container     a container: the server deletes it once its last\n"
    "                      child is gone\n"
    "  -t, --ttl TTL       persistent with a time-to-live in milliseconds\n"
    "                      (deleted once unchanged and childless that long)\n"
    "  -f, --file FILE     take the data from FILE ('-': standard input)\n",
    0,
    NULL};

/* ---- set ---- */

static int run_set(struct cli *cli, const struct cli_cmd *cmd, int argc,
                   char **argv)
{
    static const struct option lo[] = {
        {"version", required_argument, NULL, 'v'},
        {"stat", no_argument, NULL, 's'},
        {"file", required_argument, NULL, 'f'},
        CLI_COMMON_LONGOPTS,
        {NULL, 0, NULL, 0}};
    int64_t version = -1;
    int ch, rc, with_stat = 0, nargs;
    const char *file = NULL, *data;
    char *fdata = NULL;
    size_t len;
    struct tb_stat st;

    cli_opt_reset();
    while ((ch = cli_getopt(cli, argc, argv, ":v:sf:h", lo)) != -1) {
        switch (ch) {
        case 'v':
            if ((rc = cli_version_arg(cli, cmd, optarg, &version)) != 0)
                return rc;
            break;
        case 's':
            with_stat = 1;
            break;
        case 'f':
            file = optarg;
            break;
        default:
            return cli_opt_end(cli, cmd, ch, argv);
        }
    }
    nargs = argc - optind;
    if (nargs != (file != NULL ? 1 : 2))
        return cli_usage(cli, cmd, "expected PATH and DATA (or -f FILE)");
    if ((rc = cli_check_path(cli, cmd, argv[optind])) != 0)
        return rc;
    if (file != NULL) {
        if ((rc = read_file(cli, file, &fdata, &len)) != 0)
            return rc;
        data = fdata;
    } else {
        data = argv[optind + 1];
        len = strlen(data);
    }
    if ((rc = cli_connect(cli)) == 0) {
        rc = tb_set_data_sync(cli->c, argv[optind], data, len, (int32_t)version,
                              &st);
        if (rc != 0)
            rc = cli_fail(cli, "set", argv[optind], rc);
        else
            print_result(cli, argv[optind], &st, with_stat);
    }
    free(fdata);
    return rc;
}

const struct cli_cmd cli_cmd_set = {
    "set",
    run_set,
    "set [-v VERSION] [-s] [-f FILE] PATH [DATA]",
    "Replace the data of PATH.",
    "  -v, --version N     only if the data version is N (else exit 103)\n"
    "  -s, --stat          print the new stat\n"
    "  -f, --file FILE     take the data from FILE ('-': standard input)\n",
    0,
    NULL};

/* ---- delete ---- */

static int run_delete(struct cli *cli, const struct cli_cmd *cmd, int argc,
                      char **argv)
{
    static const struct option lo[] = {
        {"version", required_argument, NULL, 'v'},
        CLI_COMMON_LONGOPTS,
        {NULL, 0, NULL, 0}};
    int64_t version = -1;
    int ch, rc;

    cli_opt_reset();
    while ((ch = cli_getopt(cli, argc, argv, ":v:h", lo)) != -1) {
        switch (ch) {
        case 'v':
            if ((rc = cli_version_arg(cli, cmd, optarg, &version)) != 0)
                return rc;
            break;
        default:
            return cli_opt_end(cli, cmd, ch, argv);
        }
    }
    if ((rc = cli_path_arg(cli, cmd, argc, argv)) != 0)
        return rc;
    rc = tb_delete_sync(cli->c, argv[optind], (int32_t)version);
    if (rc != 0)
        return cli_fail(cli, "delete", argv[optind], rc);
    print_result(cli, argv[optind], NULL, 0);
    return CLI_OK;
}

const struct cli_cmd cli_cmd_delete = {
    "delete",
    run_delete,
    "delete [-v VERSION] PATH",
    "Delete PATH, which must have no children (else exit 111).",
    "  -v, --version N     only if the data version is N (else exit 103)\n",
    0,
    NULL};

/* ---- deleteall ---- */

/* Children first.  Nodes that vanish meanwhile are fine; a child created
 * meanwhile makes the parent's delete fail with ENOTEMPTY, and the parent
 * is then emptied again, a bounded number of times. */
static int delete_tree(struct cli *cli, const char *path, int *count)
{
    struct tb_strings ch;
    int32_t i;
    int rc, round;

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

static int run_deleteall(struct cli *cli, const struct cli_cmd *cmd, int argc,
                         char **argv)
{
    int ch, rc, count = 0;
    struct tb_stat st;

    cli_opt_reset();
    if ((ch = cli_getopt(cli, argc, argv, ":h", cli_common_opts)) != -1)
        return cli_opt_end(cli, cmd, ch, argv);
    if (argc - optind != 1)
        return cli_usage(cli, cmd, "expected one PATH");
    if ((rc = cli_check_path(cli, cmd, argv[optind])) != 0)
        return rc;
    if (strcmp(argv[optind], "/") == 0)
        return cli_usage(cli, cmd, "refusing to delete the root");
    if ((rc = cli_connect(cli)) != 0)
        return rc;
    /* A missing PATH is an error, as for delete; what vanishes under the
     * walk is not. */
    if ((rc = tb_exists_sync(cli->c, argv[optind], NULL, NULL, &st)) != 0)
        return cli_fail(cli, "deleteall", argv[optind], rc);
    if ((rc = delete_tree(cli, argv[optind], &count)) != 0)
        return rc;
    if (cli->json) {
        struct jw w;
        jw_init(&w, stdout);
        jw_obj(&w);
        jw_key(&w, "path");
        jw_str(&w, argv[optind]);
        jw_key(&w, "deleted");
        jw_int(&w, count);
        jw_end_obj(&w);
        jw_done(&w);
    }
    return CLI_OK;
}

const struct cli_cmd cli_cmd_deleteall = {
    "deleteall",
    run_deleteall,
    "deleteall PATH",
    "Delete PATH and everything under it.",
    "",
    0,
    NULL};
