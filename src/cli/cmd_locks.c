/* tumbler locks PATH: who holds the lock at PATH and who waits, in order.
 *
 * It reads the tree only, so it works for locks taken by any client that
 * uses Curator's or kazoo's layouts (recipes.h draws them); what each
 * child is comes from the library's one table (tb_lock_node_kind):
 *
 *   lock        PATH/_c_<uuid>-lock-<seq> (mutex), -__READ__<seq> /
 *               -__WRIT__<seq> (read-write), <hex>__lock__<seq> /
 *               __rlock__<seq> (kazoo): one queue in sequence order; a
 *               mutex, writer or kazoo lock holds if first, a reader while
 *               none of those is before it
 *   semaphore   PATH/leases/..-lease-<seq>: the first N leases hold (N is
 *               not stored: --semaphore N); PATH/locks/..-lock-<seq> queue
 *               for the right to take a lease
 *   election    PATH/_c_<uuid>-latch-<seq>           lowest seq leads
 *   non-fair    PATH itself, ephemeral; waiters only watch it, unseen
 *
 * Children of PATH that belong to none of these (or to another layout
 * than the one found) are named with what they look like: a lock on PATH
 * is refused while they are there (TB_EFOREIGNLOCK).
 *
 * For each node: its session (ephemeralOwner), its fencing token (czxid:
 * the token its owner gets, or got, on acquiring), since when it exists
 * (ctime: the time it joined the queue), and its data (by default the
 * owner's HOST:PID). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tumbler/recipes.h>

#include "cli/cli.h"

enum layout { L_NONE, L_LOCK, L_SEM, L_ELECT, L_NONFAIR, L_FOREIGN };
static const char *const layout_names[] = {
    "none",     "lock",   "semaphore", "election",
    "non-fair", "foreign"}; /* "lock" is spelled out by lock_layout_name */

/* The KIND column, by enum tb_lock_node. */
static const char *const kind_names[] = {
    "other", "lock", "write", "read", "kz-lock", "kz-read", "latch", "lease"};

#define BIT(k) (1u << (unsigned)(k))
#define LOCK_KINDS                                                             \
    (BIT(TB_NODE_MUTEX) | BIT(TB_NODE_WRITE) | BIT(TB_NODE_READ) |             \
     BIT(TB_NODE_KAZOO_LOCK) | BIT(TB_NODE_KAZOO_READ))

struct entry {
    char *rel; /* name under PATH ("leases/_c_...") */
    int kind;  /* enum tb_lock_node */
    int64_t seq;
    int holds;
    struct tb_stat st;
    char *data;
    size_t len;
};

/* At all times: v[0..n) are the queue's nodes, other[0..nother) the names
 * of PATH's children that are not the layout's (owned). */
struct listing {
    const char *path;
    int layout;
    int max_leases; /* 0: unknown */
    struct entry *v;
    int n, cap;
    char **other;
    int nother;
};

/* Reads the node `full` into the listing under the name `rel` (taken
 * over); a node gone meanwhile is skipped. */
static int add_path(struct cli *cli, struct listing *l, const char *full,
                    char *rel, int kind, int64_t seq)
{
    struct entry *e;
    int rc;

    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 16;
        struct entry *v = realloc(l->v, (size_t)cap * sizeof *v);
        if (v == NULL) {
            free(rel);
            return CLI_OSERR;
        }
        l->v = v;
        l->cap = cap;
    }
    e = &l->v[l->n];
    memset(e, 0, sizeof *e);
    rc = tb_get_data_sync(cli->c, full, NULL, NULL, &e->data, &e->len, &e->st);
    if (rc != 0) {
        free(rel);
        return rc == TB_ENONODE ? 0 : cli_fail(cli, "locks", l->path, rc);
    }
    e->rel = rel;
    e->kind = kind;
    e->seq = seq;
    l->n++;
    return 0;
}

static int add_node(struct cli *cli, struct listing *l, const char *sub,
                    const char *name)
{
    size_t n = strlen(l->path) + strlen(sub) + strlen(name) + 3;
    char *full = malloc(n), *rel = malloc(n);
    int64_t seq;
    int rc, kind = tb_lock_node_kind(name, &seq);

    if (full == NULL || rel == NULL) {
        free(full);
        free(rel);
        return CLI_OSERR;
    }
    snprintf(rel, n, "%s%s%s", sub, *sub ? "/" : "", name);
    snprintf(full, n, "%s/%s", strcmp(l->path, "/") ? l->path : "", rel);
    rc = add_path(cli, l, full, rel, kind, seq);
    free(full);
    return rc;
}

/* Adds the children of PATH/sub whose kind is in the set `kinds`. */
static int add_children(struct cli *cli, struct listing *l, const char *sub,
                        unsigned kinds)
{
    size_t n = strlen(l->path) + strlen(sub) + 2;
    char *dir = malloc(n);
    struct tb_strings ch;
    int32_t i;
    int rc;

    if (dir == NULL)
        return CLI_OSERR;
    snprintf(dir, n, "%s%s%s", l->path, *sub && strcmp(l->path, "/") ? "/" : "",
             sub);
    rc = tb_get_children_sync(cli->c, dir, NULL, NULL, &ch);
    free(dir);
    if (rc == TB_ENONODE)
        return 0;
    if (rc != 0)
        return cli_fail(cli, "locks", l->path, rc);
    for (i = 0; i < ch.count && rc == 0; i++)
        if (kinds & BIT(tb_lock_node_kind(ch.v[i], NULL)))
            rc = add_node(cli, l, sub, ch.v[i]);
    tb_strings_free(&ch);
    return rc;
}

static int sem_parent(const char *name)
{
    return strcmp(name, "leases") == 0 || strcmp(name, "locks") == 0;
}

static int detect(const struct tb_strings *ch, const struct tb_stat *st)
{
    int32_t i;
    int lock = 0, latch = 0, sem = 0;

    for (i = 0; i < ch->count; i++) {
        int k = tb_lock_node_kind(ch->v[i], NULL);
        sem |= sem_parent(ch->v[i]);
        lock |= (LOCK_KINDS & BIT(k)) != 0;
        latch |= k == TB_NODE_LATCH;
    }
    if (sem)
        return L_SEM;
    if (lock)
        return L_LOCK;
    if (latch)
        return L_ELECT;
    if (st->ephemeral_owner != 0)
        return L_NONFAIR;
    return ch->count > 0 ? L_FOREIGN : L_NONE;
}

/* 1 if the child `name` of PATH is part of the layout found. */
static int belongs(int layout, const char *name)
{
    int k = tb_lock_node_kind(name, NULL);

    switch (layout) {
    case L_SEM:
        return sem_parent(name);
    case L_LOCK:
        return (LOCK_KINDS & BIT(k)) != 0;
    case L_ELECT:
        return k == TB_NODE_LATCH;
    default:
        return 0;
    }
}

/* Keeps the names of PATH's children that are not the layout's. */
static int note_others(struct listing *l, const struct tb_strings *ch)
{
    int32_t i;

    l->other = calloc((size_t)ch->count + 1, sizeof *l->other);
    if (l->other == NULL)
        return CLI_OSERR;
    for (i = 0; i < ch->count; i++)
        if (!belongs(l->layout, ch->v[i]) &&
            (l->other[l->nother] = strdup(ch->v[i])) != NULL)
            l->nother++;
    return 0;
}

static int cmp_entry(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    /* Semaphore: leases before the locks/ queue.  Every other layout is
     * one queue in sequence order, mutex nodes among the others. */
    int gx = x->kind != TB_NODE_LEASE, gy = y->kind != TB_NODE_LEASE;

    if (gx != gy)
        return gx - gy;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Marks the holders, per layout. */
static void assign_roles(struct listing *l)
{
    int i, exclusive_seen = 0, leases = 0;

    for (i = 0; i < l->n; i++) {
        struct entry *e = &l->v[i];
        switch (l->layout) {
        case L_LOCK:
            if (tb_lock_node_shared(e->kind)) {
                e->holds = !exclusive_seen;
            } else {
                e->holds = i == 0;
                exclusive_seen = 1;
            }
            break;
        case L_SEM:
            if (e->kind == TB_NODE_LEASE) {
                e->holds = l->max_leases == 0 || leases < l->max_leases;
                leases++;
            }
            break;
        default:
            e->holds = i == 0;
        }
    }
}

/* Node data for display: the non-fair layout prefixes it with the
 * holder's "_c_<uuid>" (and a '-'); that is an id, not the owner. */
static void owner_of(const struct entry *e, int layout, const char **p,
                     size_t *n)
{
    *p = e->data;
    *n = e->data ? e->len : 0;
    if (layout == L_NONFAIR && *n >= 39 && memcmp(*p, "_c_", 3) == 0) {
        *p += 39;
        *n -= 39;
        if (*n > 0 && **p == '-') {
            (*p)++;
            (*n)--;
        }
    }
}

/* "mutex", "read-write", "kazoo" or a mix of them ("mutex+read-write"):
 * the kinds of lock queued on one path. */
static void lock_layout_name(const struct listing *l, char *buf, size_t cap)
{
    static const struct {
        unsigned kinds;
        const char *name;
    } parts[] = {
        {BIT(TB_NODE_MUTEX), "mutex"},
        {BIT(TB_NODE_READ) | BIT(TB_NODE_WRITE), "read-write"},
        {BIT(TB_NODE_KAZOO_LOCK) | BIT(TB_NODE_KAZOO_READ), "kazoo"},
    };
    unsigned seen = 0;
    size_t i, len = 0;
    int j;

    for (j = 0; j < l->n; j++)
        seen |= BIT(l->v[j].kind);
    buf[0] = '\0';
    for (i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if ((seen & parts[i].kinds) != 0 && len < cap)
            len += (size_t)snprintf(buf + len, cap - len, "%s%s",
                                    len ? "+" : "", parts[i].name);
    if (len == 0) /* every node went meanwhile */
        snprintf(buf, cap, "%s", "mutex");
}

static const char *layout_name(const struct listing *l, char *buf, size_t cap)
{
    if (l->layout != L_LOCK)
        return layout_names[l->layout];
    lock_layout_name(l, buf, cap);
    return buf;
}

/* The children that are not the layout's, and what a lock does then. */
static void print_others(const struct listing *l)
{
    int i;

    for (i = 0; i < l->nother; i++)
        printf("other node: %s (%s)\n", l->other[i],
               tb_lock_node_what(l->other[i]));
    if (l->nother > 0)
        printf("(tumbler lock refuses %s while other nodes are there)\n",
               l->path);
}

static void print_text(const struct listing *l)
{
    char since[64], name[64], session[CLI_SESSION_LEN];
    int i, nh = 0;

    for (i = 0; i < l->n; i++)
        nh += l->v[i].holds;
    printf("%s: %s, %d holding, %d waiting\n", l->path,
           layout_name(l, name, sizeof name), nh, l->n - nh);
    print_others(l);
    if (l->layout == L_SEM && l->max_leases == 0)
        printf("(limit unknown: every lease is shown as holding; give "
               "--semaphore N)\n");
    if (l->layout == L_NONFAIR)
        printf("(waiters of a non-fair lock only watch it: they are not "
               "listed)\n");
    if (l->n == 0)
        return;
    printf("%-4s %-8s %-7s %-18s %-12s %-20s %-20s %s\n", "POS", "ROLE", "KIND",
           "SESSION", "TOKEN", "SINCE", "OWNER", "NODE");
    for (i = 0; i < l->n; i++) {
        const struct entry *e = &l->v[i];
        const char *o;
        size_t on;
        time_t t = (time_t)(e->st.ctime / 1000);
        struct tm tm;

        owner_of(e, l->layout, &o, &on);
        if (localtime_r(&t, &tm) == NULL ||
            strftime(since, sizeof since, "%Y-%m-%d %H:%M:%S", &tm) == 0)
            snprintf(since, sizeof since, "%lld", (long long)e->st.ctime);
        printf("%-4d %-8s %-7s %-18s %-12lld %-20s %-20.*s %s\n", i + 1,
               e->holds ? (l->layout == L_ELECT ? "leader" : "holder")
                        : "waiting",
               kind_names[e->kind],
               cli_session_str(e->st.ephemeral_owner, session),
               (long long)e->st.czxid, since, (int)(on > 40 ? 40 : on),
               on ? o : "-", e->rel);
    }
}

static void print_entry_json(struct jw *w, const struct listing *l,
                             const struct entry *e)
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
    jw_str(w, kind_names[e->kind]);
    jw_key(w, "session");
    jw_session(w, e->st.ephemeral_owner);
    jw_key(w, "token");
    jw_int(w, e->st.czxid);
    jw_key(w, "since");
    jw_int(w, e->st.ctime);
    owner_of(e, l->layout, &o, &on);
    jw_key(w, "owner");
    if (o != NULL)
        jw_strn(w, o, on);
    else
        jw_null(w);
    jw_end_obj(w);
}

static void print_others_json(struct jw *w, const struct listing *l)
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

static void print_json(const struct listing *l)
{
    char name[64];
    struct jw w;
    int i, pass;

    jw_init(&w, stdout);
    jw_obj(&w);
    jw_key(&w, "path");
    jw_str(&w, l->path);
    jw_key(&w, "layout");
    jw_str(&w, layout_name(l, name, sizeof name));
    if (l->layout == L_SEM) {
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

static int collect(struct cli *cli, struct listing *l)
{
    struct tb_strings ch;
    struct tb_stat st;
    int rc;

    rc = tb_get_children2_sync(cli->c, l->path, NULL, NULL, &ch, &st);
    if (rc == TB_ENONODE) {
        l->layout = L_NONE; /* containers vanish once free */
        return 0;
    }
    if (rc != 0)
        return cli_fail(cli, "locks", l->path, rc);
    l->layout = detect(&ch, &st);
    rc = note_others(l, &ch);
    tb_strings_free(&ch);
    if (rc != 0)
        return rc;
    switch (l->layout) {
    case L_SEM:
        if ((rc = add_children(cli, l, "leases", BIT(TB_NODE_LEASE))) == 0)
            rc = add_children(cli, l, "locks", BIT(TB_NODE_MUTEX));
        break;
    case L_LOCK:
        rc = add_children(cli, l, "", LOCK_KINDS);
        break;
    case L_ELECT:
        rc = add_children(cli, l, "", BIT(TB_NODE_LATCH));
        break;
    case L_NONFAIR: {
        char *rel = strdup(".");
        rc = rel ? add_path(cli, l, l->path, rel, TB_NODE_MUTEX, 0) : CLI_OSERR;
    } break;
    default:
        break;
    }
    if (rc == 0 && l->n > 1)
        qsort(l->v, (size_t)l->n, sizeof l->v[0], cmp_entry);
    assign_roles(l);
    return rc;
}

static int run_locks(struct cli *cli, const struct cli_cmd *cmd, int argc,
                     char **argv)
{
    static const struct option lo[] = {
        {"semaphore", required_argument, NULL, 'S'},
        CLI_COMMON_LONGOPTS,
        {NULL, 0, NULL, 0}};
    struct listing l;
    int ch, rc, i;
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
    if ((rc = collect(cli, &l)) == 0) {
        if (cli->json)
            print_json(&l);
        else
            print_text(&l);
        fflush(stdout);
    }
    for (i = 0; i < l.n; i++) {
        free(l.v[i].rel);
        tb_free(l.v[i].data);
    }
    free(l.v);
    for (i = 0; i < l.nother; i++)
        free(l.other[i]);
    free(l.other);
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
