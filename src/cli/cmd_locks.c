/* tumbler locks PATH: who holds the lock at PATH and who waits, in order.
 *
 * The listing is read by locklist.c, which draws the layouts it knows.
 * Children of PATH that belong to none of them (or to another layout
 * than the one found) are named with what they look like: a lock on PATH
 * is refused while they are there (TB_EFOREIGNLOCK). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/locklist.h"

/* The children that are not the layout's, and what a lock does then. */
static void print_others(const struct ll_listing *l)
{
    int i;

    for (i = 0; i < l->nother; i++)
        printf("other node: %s (%s)\n", l->other[i],
               tb_lock_node_what(l->other[i]));
    if (l->nother > 0)
        printf("(tumbler lock refuses %s while other nodes are there)\n",
               l->path);
}

static void print_text(const struct ll_listing *l)
{
    char since[64], name[64], session[CLI_SESSION_LEN], owner[41];
    int i, nh = ll_holding(l);

    printf("%s: %s, %d holding, %d waiting\n", l->path,
           ll_layout_name(l, name, sizeof name), nh, l->n - nh);
    print_others(l);
    if (l->layout == LL_SEM && l->max_leases == 0)
        printf("(limit unknown: every lease is shown as holding; give "
               "--semaphore N)\n");
    if (l->layout == LL_NONFAIR)
        printf("(waiters of a non-fair lock only watch it: they are not "
               "listed)\n");
    if (l->n == 0)
        return;
    printf("%-4s %-8s %-7s %-18s %-12s %-20s %-20s %s\n", "POS", "ROLE", "KIND",
           "SESSION", "TOKEN", "SINCE", "OWNER", "NODE");
    for (i = 0; i < l->n; i++) {
        const struct ll_entry *e = &l->v[i];
        const char *o;
        size_t on;
        time_t t = (time_t)(e->st.ctime / 1000);
        struct tm tm;

        ll_owner(l, e, &o, &on);
        if (localtime_r(&t, &tm) == NULL ||
            strftime(since, sizeof since, "%Y-%m-%d %H:%M:%S", &tm) == 0)
            snprintf(since, sizeof since, "%lld", (long long)e->st.ctime);
        printf("%-4d %-8s %-7s %-18s %-12lld %-20s %-20s %s\n", i + 1,
               e->holds ? (l->layout == LL_ELECT ? "leader" : "holder")
                        : "waiting",
               ll_kind_name(e->kind),
               cli_session_str(e->st.ephemeral_owner, session),
               (long long)e->st.czxid, since,
               cli_text_str(o, on, owner, sizeof owner), e->rel);
    }
}

static void print_entry_json(struct jw *w, const struct ll_listing *l,
                             const struct ll_entry *e)
{
    const char *o;
    size_t on;
    size_t n = strlen(l->path) + strlen(e->rel) + 2;
    char *full = malloc(n);

    jw_obj(w);
    jw_key(w, "node");
    jw_str(w, e->rel);
    if (full != NULL) {
        if (strcmp(e->rel, ".") == 0) /* non-fair: PATH itself */
            snprintf(full, n, "%s", l->path);
        else
            snprintf(full, n, "%s/%s", strcmp(l->path, "/") ? l->path : "",
                     e->rel);
        jw_key(w, "path");
        jw_str(w, full);
        free(full);
    }
    jw_key(w, "kind");
    jw_str(w, ll_kind_name(e->kind));
    jw_key(w, "session");
    jw_session(w, e->st.ephemeral_owner);
    jw_key(w, "token");
    jw_int(w, e->st.czxid);
    jw_key(w, "since");
    jw_int(w, e->st.ctime);
    ll_owner(l, e, &o, &on);
    jw_key(w, "owner");
    if (o != NULL)
        jw_strn(w, o, on);
    else
        jw_null(w);
    jw_end_obj(w);
}

static void print_others_json(struct jw *w, const struct ll_listing *l)
{
    int i;

    jw_key(w, "foreign");
    jw_arr(w);
    for (i = 0; i < l->nother; i++) {
        jw_obj(w);
        jw_key(w, "node");
        jw_str(w, l->other[i]);
        jw_key(w, "what");
        jw_str(w, tb_lock_node_what(l->other[i]));
        jw_end_obj(w);
    }
    jw_end_arr(w);
}

static void print_json(const struct ll_listing *l)
{
    char name[64];
    struct jw w;
    int i, pass;

    jw_init(&w, stdout);
    jw_obj(&w);
    jw_key(&w, "path");
    jw_str(&w, l->path);
    jw_key(&w, "layout");
    jw_str(&w, ll_layout_name(l, name, sizeof name));
    if (l->layout == LL_SEM) {
        jw_key(&w, "max_leases");
        if (l->max_leases)
            jw_int(&w, l->max_leases);
        else
            jw_null(&w);
    }
    for (pass = 1; pass >= 0; pass--) {
        jw_key(&w, pass ? "holders" : "waiting");
        jw_arr(&w);
        for (i = 0; i < l->n; i++)
            if (l->v[i].holds == pass)
                print_entry_json(&w, l, &l->v[i]);
        jw_end_arr(&w);
    }
    print_others_json(&w, l);
    jw_end_obj(&w);
    jw_done(&w);
}

static int run_locks(struct cli *cli, const struct cli_cmd *cmd, int argc,
                     char **argv)
{
    static const struct option lo[] = {
        {"semaphore", required_argument, NULL, 'S'},
        CLI_COMMON_LONGOPTS,
        {NULL, 0, NULL, 0}};
    struct ll_listing l;
    int ch, rc;
    int64_t v;

    memset(&l, 0, sizeof l);
    cli_opt_reset();
    while ((ch = cli_getopt(cli, argc, argv, ":h", lo)) != -1) {
        if (ch != 'S')
            return cli_opt_end(cli, cmd, ch, argv);
        if (cli_parse_i64(optarg, &v) != 0 || v < 1 || v > 1000000)
            return cli_usage(cli, cmd, "bad --semaphore '%s'", optarg);
        l.max_leases = (int)v;
    }
    if ((rc = cli_path_arg(cli, cmd, argc, argv)) != 0)
        return rc;
    l.path = argv[optind];
    if ((rc = ll_collect(cli->c, &l)) != 0) {
        rc = cli_fail(cli, "locks", l.path, rc);
    } else {
        if (cli->json)
            print_json(&l);
        else
            print_text(&l);
        fflush(stdout);
    }
    ll_free(&l);
    return rc;
}

const struct cli_cmd cli_cmd_locks = {
    "locks",
    run_locks,
    "locks [--semaphore N] PATH",
    "Show who holds the lock at PATH and who waits, in queue order.",
    "      --semaphore N   the semaphore's lease limit (not stored in the\n"
    "                      tree): the first N leases hold, later ones wait\n",
    0,
    "Layouts: mutex, read-write and kazoo (one queue, possibly mixed),\n"
    "semaphore, election, non-fair, found from the node names; children of\n"
    "no lock layout are named, and make tumbler lock refuse PATH.\n"
    "Columns: queue position, role, node kind, owning\n"
    "session, fencing token (the node's czxid), since (when the node was\n"
    "created), owner (the node's data, by default HOST:PID), node name.\n"};
