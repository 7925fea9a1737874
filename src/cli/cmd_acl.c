/* What a client may do, and how much: getacl, setacl, addauth, whoami,
 * and the quotas, setquota, listquota, delquota.
 *
 * ACLs are written as zkCli writes them: comma-separated SCHEME:ID:PERMS
 * entries, PERMS a subset of "cdrwa".  The id may itself hold colons
 * (digest:user:hash, ip:10.0.0.0/8 has none, ip6 would), so the scheme is
 * up to the first colon and the permissions after the last one. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* ---- getacl ---- */

static void print_acl_json(const char *path, const struct tb_acl_list *acl,
                           const struct tb_stat *st)
{
    struct jw w;
    char perms[6];
    int32_t i;

    jw_begin(&w, path);
    jw_key(&w, "acl");
    jw_arr(&w);
    for (i = 0; i < acl->count; i++) {
        jw_obj(&w);
        jw_key(&w, "scheme");
        jw_str(&w, acl->v[i].scheme);
        jw_key(&w, "id");
        jw_str(&w, acl->v[i].id);
        jw_key(&w, "perms");
        jw_str(&w, cli_perms_str(acl->v[i].perms, perms));
        jw_end_obj(&w);
    }
    jw_end_arr(&w);
    if (st != NULL) {
        jw_key(&w, "stat");
        jw_stat(&w, st);
    }
    jw_finish(&w);
}

/* One entry, a line: an id is any bytes its setter chose (a digest's user
 * part), so none of them may start a line of its own or drive the
 * terminal (cli_text_str); --json gives them as they are. */
static void print_entry(const struct tb_acl_entry *e, char perms[6])
{
    size_t ns = strlen(e->scheme), ni = strlen(e->id);
    char *s = malloc(ns + 2), *id = malloc(ni + 2);

    if (s == NULL || id == NULL)
        printf("%s:%s:%s\n", "?", "?", cli_perms_str(e->perms, perms));
    else
        printf("%s:%s:%s\n", ns ? cli_text_str(e->scheme, ns, s, ns + 2) : "",
               ni ? cli_text_str(e->id, ni, id, ni + 2) : "",
               cli_perms_str(e->perms, perms));
    free(s);
    free(id);
}

static int exec_getacl(struct cli *cli, const struct cli_cmd *cmd,
                       const struct cli_args *a)
{
    const char *path = a->argv[0];
    int rc, with_stat = a->val['s'] != NULL;
    struct tb_acl_list acl;
    struct tb_stat st;
    char perms[6];
    int32_t i;

    (void)cmd;
    if ((rc = tb_get_acl_sync(cli->c, path, &acl, &st)) != 0)
        return cli_fail(cli, "getacl", path, rc);
    if (cli->json) {
        print_acl_json(path, &acl, with_stat ? &st : NULL);
    } else {
        for (i = 0; i < acl.count; i++)
            print_entry(&acl.v[i], perms);
        if (with_stat)
            cli_print_stat(stdout, &st);
        fflush(stdout);
    }
    tb_acl_list_free(&acl);
    return CLI_OK;
}

const struct cli_spec cli_cmd_getacl = {
    .cmd = {.name = "getacl",
            .usage = "getacl [-s] PATH",
            .summary =
                "Print the ACL of PATH, one SCHEME:ID:PERMS entry per line.",
            .flags = CLI_PATH | CLI_CONNECT},
    .exec = exec_getacl,
    .opts =
        (const struct cli_opt[]){
            {.letter = 's', .name = "stat", .help = "also print the stat"},
            {0}},
    CLI_ONE_PATH,
};

/* ---- setacl ---- */

static int parse_perms(const char *s, int32_t *out)
{
    int32_t p = 0;

    for (; *s; s++) {
        switch (*s) {
        case 'c':
            p |= TB_PERM_CREATE;
            break;
        case 'd':
            p |= TB_PERM_DELETE;
            break;
        case 'r':
            p |= TB_PERM_READ;
            break;
        case 'w':
            p |= TB_PERM_WRITE;
            break;
        case 'a':
            p |= TB_PERM_ADMIN;
            break;
        default:
            return -1;
        }
    }
    *out = p;
    return 0;
}

/* Parses "s:id:perms,..." into `acl`, whose strings point into `buf` (a
 * copy of the text the parser cuts up).  0 or -1. */
int cli_acl_parse(char *buf, struct tb_acl_entry **out, int32_t *count)
{
    struct tb_acl_entry *v;
    int32_t n = 1, i = 0;
    char *p, *save = NULL, *tok;

    for (p = buf; *p; p++)
        n += *p == ',';
    if ((v = calloc((size_t)n, sizeof *v)) == NULL)
        return -1;
    for (tok = strtok_r(buf, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        char *first = strchr(tok, ':'), *last = strrchr(tok, ':');
        if (first == NULL || first == last || first == tok ||
            parse_perms(last + 1, &v[i].perms) != 0) {
            free(v);
            return -1;
        }
        *first = '\0';
        *last = '\0';
        v[i].scheme = tok;
        v[i].id = first + 1;
        i++;
    }
    if (i == 0) {
        free(v);
        return -1;
    }
    *out = v;
    *count = i;
    return 0;
}

int cli_acl_arg(struct cli *cli, const struct cli_cmd *cmd, const char *text,
                struct cli_acl *out)
{
    struct tb_acl_entry *v;

    memset(out, 0, sizeof *out);
    if ((out->buf = strdup(text)) == NULL)
        return CLI_OSERR;
    if (cli_acl_parse(out->buf, &v, &out->list.count) != 0) {
        cli_acl_free(out);
        return cli_usage(cli, cmd,
                         "bad ACL '%s' (expected SCHEME:ID:PERMS"
                         "[,...], PERMS from cdrwa)",
                         text);
    }
    out->list.v = v;
    return 0;
}

void cli_acl_free(struct cli_acl *a)
{
    free((void *)a->list.v);
    free(a->buf);
    memset(a, 0, sizeof *a);
}

/* Children first, then the node (post-order): an ACL that takes READ
 * away from this session would, set on a node first, leave its children
 * unlistable and the rest of the subtree as it was.  A node this session
 * may not list yet gets its ACL first, so that one giving READ back
 * reaches the subtree too.  A node deleted under the walk is skipped, but
 * not PATH (`top`).  `version` is PATH's. */
static int setacl_tree(struct cli *cli, const char *path,
                       const struct tb_acl_list *acl, int32_t version,
                       int recursive, int top, struct tb_stat *st)
{
    struct tb_strings ch;
    int32_t i;
    int rc, done = 0;

    if (recursive) {
        if ((rc = cli_walk_stop(cli, "setacl")) != 0)
            return rc;
        rc = tb_get_children_sync(cli->c, path, NULL, NULL, &ch);
        if (rc == TB_ENOAUTH) {
            done = 1;
            rc = tb_set_acl_sync(cli->c, path, acl, version, st);
            if (rc == 0)
                rc = tb_get_children_sync(cli->c, path, NULL, NULL, &ch);
        }
        if (rc == TB_ENONODE && !top)
            return 0;
        if (rc != 0)
            return cli_fail(cli, "setacl", path, rc);
        for (i = 0; i < ch.count && rc == 0; i++) {
            char *p = cli_path_join(path, ch.v[i]);
            struct tb_stat cst;
            if (p == NULL) {
                rc = cli_err(cli, CLI_OSERR, "out of memory");
                break;
            }
            rc = setacl_tree(cli, p, acl, -1, 1, 0, &cst);
            free(p);
        }
        tb_strings_free(&ch);
        if (rc != 0 || done)
            return rc;
    }
    rc = tb_set_acl_sync(cli->c, path, acl, version, st);
    if (rc == TB_ENONODE && !top)
        return 0;
    if (rc != 0)
        return cli_fail(cli, "setacl", path, rc);
    return 0;
}

/* -v with -R: PATH's ACL version is checked before any node below it
 * changes, as without -R nothing changes on a mismatch (PATH's own
 * setacl, last, is still conditional). */
static int check_aversion(struct cli *cli, const char *path, int32_t version)
{
    struct tb_acl_list acl;
    struct tb_stat st;
    int rc;

    /* getACL, not exists: the ADMIN that setacl needs is enough for it,
     * where exists needs READ, which the ACL being set may have taken
     * away already. */
    if ((rc = tb_get_acl_sync(cli->c, path, &acl, &st)) != 0)
        return cli_fail(cli, "setacl", path, rc);
    tb_acl_list_free(&acl);
    if (st.aversion != version)
        return cli_fail(cli, "setacl", path, TB_EBADVERSION);
    return 0;
}

static int exec_setacl(struct cli *cli, const struct cli_cmd *cmd,
                       const struct cli_args *a)
{
    const char *path = a->argv[0];
    struct cli_acl acl;
    struct tb_stat st;
    int rc;

    if ((rc = cli_acl_arg(cli, cmd, a->argv[1], &acl)) != 0)
        return rc;
    if ((rc = cli_connect(cli)) == 0 && a->val['R'] != NULL &&
        a->num['v'] != -1)
        rc = check_aversion(cli, path, (int32_t)a->num['v']);
    if (rc == 0)
        rc = setacl_tree(cli, path, &acl.list, (int32_t)a->num['v'],
                         a->val['R'] != NULL, 1, &st);
    if (rc == 0 && cli->json)
        print_acl_json(path, &acl.list, &st);
    else if (rc == 0 && a->val['s'] != NULL)
        cli_print_stat(stdout, &st);
    cli_acl_free(&acl);
    return rc;
}

const struct cli_spec cli_cmd_setacl = {
    .cmd = {.name = "setacl",
            .usage = "setacl [-v VERSION] [-R] [-s] PATH ACL",
            .summary = "Replace the ACL of PATH; ACL is SCHEME:ID:PERMS[,...] "
                       "(world:anyone:cdrwa).",
            .flags = CLI_PATH},
    .exec = exec_setacl,
    .opts =
        (const struct cli_opt[]){
            {.letter = 'v',
             .name = "version",
             .kind = CLI_VERSION,
             .arg = "N",
             .help = "only if the ACL version is N (else exit 103)",
             .what = "version"},
            {.letter = 'R',
             .name = "recursive",
             .help = "also every node under PATH"},
            {.letter = 's', .name = "stat", .help = "print the new stat"},
            {0}},
    .min_args = 2,
    .max_args = 2,
    .arity = "expected PATH and ACL",
};

/* ---- addauth ---- */

static int exec_addauth(struct cli *cli, const struct cli_cmd *cmd,
                        const struct cli_args *a)
{
    const char *scheme = a->argv[0], *cred = a->argv[1];
    int rc;

    /* Sent as setAuth, a SASL credential would end the session (ZooKeeper
     * and tumblerd refuse it and close the connection). */
    if (strcmp(scheme, "sasl") == 0)
        return cli_usage(cli, cmd,
                         "a SASL login is made with every "
                         "connection: start tumbler with "
                         "-a sasl:USER:PASSWORD");
    /* Connect first: a new session replays the list, so the credential is
     * added to it only once the server has accepted it. */
    if ((rc = cli_connect(cli)) != 0)
        return rc;
    rc = tb_add_auth_sync(cli->c, scheme, cred, strlen(cred));
    if (rc != 0)
        return cli_fail(cli, "addauth", scheme, rc);
    if (cli_auth_add(cli, scheme, cred) != 0)
        return CLI_OSERR;
    cli_print_done(cli, NULL, "added");
    return CLI_OK;
}

const struct cli_spec cli_cmd_addauth = {
    .cmd = {.name = "addauth",
            .usage = "addauth SCHEME CREDENTIAL",
            .summary =
                "Add a credential (digest user:password) to the session.",
            .notes =
                "Outside the shell this only checks that the server accepts "
                "it; use\nthe global -a SCHEME:CREDENTIAL to act with it.\n"},
    .exec = exec_addauth,
    .min_args = 2,
    .max_args = 2,
    .arity = "expected SCHEME and CREDENTIAL",
};

/* ---- whoami ---- */

static int exec_whoami(struct cli *cli, const struct cli_cmd *cmd,
                       const struct cli_args *a)
{
    struct tb_strings ids;
    int32_t i;
    int rc;

    (void)cmd;
    (void)a;
    if ((rc = tb_whoami_sync(cli->c, &ids)) != 0)
        return cli_fail(cli, "whoami", NULL, rc);
    if (cli->json) {
        struct jw w;
        jw_begin(&w, NULL);
        jw_key(&w, "session");
        jw_session(&w, tb_client_session(cli->c, NULL));
        jw_key(&w, "ids");
        jw_arr(&w);
        for (i = 0; i < ids.count; i++)
            jw_str(&w, ids.v[i]);
        jw_end_arr(&w);
        jw_finish(&w);
    } else {
        for (i = 0; i < ids.count; i++)
            printf("%s\n", ids.v[i]);
        fflush(stdout);
    }
    tb_strings_free(&ids);
    return CLI_OK;
}

const struct cli_spec cli_cmd_whoami = {
    .cmd = {.name = "whoami",
            .usage = "whoami",
            .summary = "Print the identities (SCHEME:USER) the server knows "
                       "this session by.",
            .flags = CLI_CONNECT},
    .exec = exec_whoami,
    .arity = "no arguments expected",
};

/* ---- setquota, listquota, delquota ----
 *
 * ZooKeeper's quotas are nodes that its clients write, as zkCli does:
 * /zookeeper/quota<PATH>/zookeeper_limits holds the limits of the subtree
 * at PATH and /zookeeper/quota<PATH>/zookeeper_stats what it uses, which
 * the server counts.  Both are written as ZooKeeper's StatsTrack writes
 * them (3.8):
 *
 *   count=N,bytes=N[=;KEY=N;KEY=N...]     the other keys sorted
 *   count=4,bytes=-1=;byteHardLimit=-1;countHardLimit=10
 *
 * where -1 is "no limit"; the extra '=' keeps 3.4's parser off the keys
 * after it.  Quotas do not nest: setquota refuses a PATH above or below
 * another quota's. */

#define QROOT  "/zookeeper/quota"
#define LIMITS "/zookeeper_limits"
#define STATS  "/zookeeper_stats"

/* The keys in the order they are written: count and bytes first, then the
 * others sorted by name. */
enum { Q_COUNT, Q_BYTES, Q_BYTE_HARD, Q_COUNT_HARD, Q_KEYS };
static const char *const q_keys[Q_KEYS] = {"count", "bytes", "byteHardLimit",
                                           "countHardLimit"};

/* Limits or use; a key not `has` was never written (keys this tool does
 * not know are dropped when it rewrites the node). */
struct quota {
    int64_t v[Q_KEYS];
    unsigned char has[Q_KEYS];
};

static void q_parse(const char *s, size_t len, struct quota *q)
{
    const char *end = s + len, *e, *eq;
    char num[24];
    size_t n;
    int k;

    memset(q, 0, sizeof *q);
    for (k = 0; k < Q_KEYS; k++)
        q->v[k] = -1;
    for (; s < end; s = e + 1) {
        for (e = s; e < end && *e != ',' && *e != ';'; e++)
            ;
        if ((eq = memchr(s, '=', (size_t)(e - s))) == NULL)
            continue;
        for (k = 0; k < Q_KEYS; k++)
            if (strlen(q_keys[k]) == (size_t)(eq - s) &&
                memcmp(s, q_keys[k], (size_t)(eq - s)) == 0)
                break;
        /* The value ends at the next '=' (3.8's "bytes=-1="). */
        for (n = 0; eq + 1 + n < e && eq[1 + n] != '=' && n < sizeof num - 1;
             n++)
            num[n] = eq[1 + n];
        num[n] = '\0';
        if (k == Q_KEYS || (n > 0 && cli_parse_i64(num, &q->v[k]) != 0))
            continue;
        q->has[k] = 1;
    }
}

static void q_format(const struct quota *q, char *buf, size_t cap)
{
    int k, n, more = 0;

    n = snprintf(buf, cap, "count=%lld,bytes=%lld", (long long)q->v[Q_COUNT],
                 (long long)q->v[Q_BYTES]);
    for (k = Q_BYTE_HARD; k < Q_KEYS && n > 0 && (size_t)n < cap; k++) {
        if (!q->has[k])
            continue;
        n += snprintf(buf + n, cap - (size_t)n, "%s;%s=%lld", more ? "" : "=",
                      q_keys[k], (long long)q->v[k]);
        more = 1;
    }
}

static void q_json(struct jw *w, const char *key, const struct quota *q,
                   int keys)
{
    int k;

    jw_key(w, key);
    jw_obj(w);
    for (k = 0; k < keys; k++) {
        jw_key(w, q_keys[k]);
        jw_int(w, q->v[k]);
    }
    jw_end_obj(w);
}

/* QROOT + path + suffix, malloc'd. */
static char *qpath(const char *path, const char *suffix)
{
    size_t n = sizeof QROOT + strlen(path) + strlen(suffix);
    char *p = malloc(n);

    if (p != NULL)
        snprintf(p, n, "%s%s%s", QROOT, strcmp(path, "/") ? path : "", suffix);
    return p;
}

/* Reads the limits or the stats node of the quota on `path`: 0 or TB_E*. */
static int q_read(struct cli *cli, const char *path, const char *node,
                  struct quota *q)
{
    char *p = qpath(path, node), *v;
    size_t len;
    int rc;

    if (p == NULL)
        return TB_ENOMEM;
    rc = tb_get_data_sync(cli->c, p, NULL, NULL, &v, &len, NULL);
    free(p);
    if (rc == 0) {
        q_parse(v != NULL ? v : "", v != NULL ? len : 0, q);
        tb_free(v);
    }
    return rc;
}

static int q_write(struct cli *cli, const char *path, const char *node,
                   const struct quota *q, int create)
{
    char *p = qpath(path, node), buf[160];
    int rc;

    if (p == NULL)
        return TB_ENOMEM;
    q_format(q, buf, sizeof buf);
    rc = create ? tb_create_sync(cli->c, p, buf, strlen(buf), NULL,
                                 TB_PERSISTENT, 0, NULL, 0, NULL)
                : tb_set_data_sync(cli->c, p, buf, strlen(buf), -1, NULL);
    free(p);
    return rc;
}

static int q_missing(struct cli *cli, const char *what, const char *path,
                     int rc)
{
    if (rc != TB_ENONODE)
        return cli_fail(cli, what, path, rc);
    return cli_fail_msg(cli, what, path, rc, "quota for %s does not exist",
                        path);
}

/* The quota path of a quota strictly below `qp` (a node under QROOT) in
 * *found (malloc'd), or NULL.  0 or TB_E*. */
static int quota_below(struct cli *cli, const char *qp, int top, char **found)
{
    struct tb_strings ch;
    int32_t i;
    int rc;

    rc = tb_get_children_sync(cli->c, qp, NULL, NULL, &ch);
    if (rc != 0)
        return rc == TB_ENONODE ? 0 : rc;
    for (i = 0; i < ch.count && rc == 0 && *found == NULL; i++) {
        size_t n = strlen(qp) + strlen(ch.v[i]) + 2;
        char *p;
        if (strcmp(ch.v[i], &LIMITS[1]) == 0) { /* the name, no slash */
            if (!top)
                *found = strdup(qp + sizeof QROOT - 1);
            continue;
        }
        if ((p = malloc(n)) == NULL) {
            rc = TB_ENOMEM;
            break;
        }
        snprintf(p, n, "%s/%s", qp, ch.v[i]);
        rc = quota_below(cli, p, 0, found);
        free(p);
    }
    tb_strings_free(&ch);
    return rc;
}

/* No quota may be set below `path`: 0 or the exit status after saying
 * which one is. */
static int quota_under(struct cli *cli, const char *path)
{
    char *qp = qpath(path, ""), *found = NULL;
    int rc = qp != NULL ? quota_below(cli, qp, 1, &found) : TB_ENOMEM;

    free(qp);
    if (rc != 0)
        return cli_fail(cli, "setquota", path, rc);
    if (found == NULL)
        return 0;
    rc = cli_fail_msg(cli, "setquota", path, TB_EBADARGUMENTS,
                      "%s has a child %s which has a quota", path, found);
    free(found);
    return rc;
}

/* Nor above it: up from the parent, cut at the last slash, look for limits
 * there. */
static int quota_over(struct cli *cli, const char *path)
{
    char *a = strdup(path), *qp, *s;
    int rc = a != NULL ? 0 : CLI_OSERR;

    while (rc == 0 && (s = strrchr(a, '/')) != a) {
        *s = '\0';
        if ((qp = qpath(a, LIMITS)) == NULL) {
            rc = CLI_OSERR;
            break;
        }
        rc = tb_exists_sync(cli->c, qp, NULL, NULL, NULL);
        free(qp);
        if (rc == 0)
            rc = cli_fail_msg(cli, "setquota", path, TB_EBADARGUMENTS,
                              "%s has a parent %s which has a quota", path, a);
        else
            rc = rc == TB_ENONODE ? 0 : cli_fail(cli, "setquota", path, rc);
    }
    free(a);
    return rc;
}

/* The nodes the quota of `path` hangs under, each level made if missing. */
static int quota_dirs(struct cli *cli, const char *path)
{
    char *p = qpath(path, ""), *s;
    int rc = 0;

    if (p == NULL)
        return TB_ENOMEM;
    for (s = strchr(p + sizeof QROOT, '/'); rc == 0 && s != NULL;
         s = strchr(s + 1, '/')) {
        char c = *s;
        *s = '\0';
        rc = tb_create_sync(cli->c, p, NULL, 0, NULL, TB_PERSISTENT, 0, NULL, 0,
                            NULL);
        *s = c;
        rc = rc == TB_ENODEEXISTS ? 0 : rc;
    }
    if (rc == 0)
        rc = tb_create_sync(cli->c, p, NULL, 0, NULL, TB_PERSISTENT, 0, NULL, 0,
                            NULL);
    free(p);
    return rc == TB_ENODEEXISTS ? 0 : rc;
}

/* As zkCli, a limit set below what the subtree already uses is only
 * worth a warning: the server counts from now on. */
static void quota_warn(struct cli *cli, const char *path, const struct quota *q)
{
    struct quota use;
    int k;

    if (q_read(cli, path, STATS, &use) != 0)
        return;
    for (k = 0; k < Q_BYTE_HARD; k++) {
        int64_t soft = q->v[k],
                hard = q->v[k == Q_COUNT ? Q_COUNT_HARD : Q_BYTE_HARD];
        if ((soft > -1 && soft < use.v[k]) || (hard > -1 && hard < use.v[k]))
            fprintf(stderr,
                    "tumbler: warning: the %s quota of %s is below what it "
                    "uses now, %lld\n",
                    q_keys[k], path, (long long)use.v[k]);
    }
}

/* The options of setquota and delquota, in q_keys' order. */
static const char q_letters[Q_KEYS] = {'n', 'b', 'B', 'N'};

static int exec_setquota(struct cli *cli, const struct cli_cmd *cmd,
                         const struct cli_args *a)
{
    const char *path = a->argv[0];
    struct quota q;
    int k, rc, given = 0, fresh;

    for (k = 0; k < Q_KEYS; k++)
        given |= a->val[(unsigned char)q_letters[k]] != NULL;
    if (!given)
        return cli_usage(cli, cmd, "expected -n, -b, -N or -B");
    if (strcmp(path, "/") == 0 || strncmp(path, QROOT, sizeof QROOT - 1) == 0)
        return cli_usage(cli, cmd, "cannot set a quota on %s", path);
    if ((rc = cli_connect(cli)) != 0)
        return rc;
    if ((rc = tb_exists_sync(cli->c, path, NULL, NULL, NULL)) != 0)
        return cli_fail(cli, "setquota", path, rc);
    /* Quotas do not nest. */
    if ((rc = quota_under(cli, path)) != 0 || (rc = quota_over(cli, path)) != 0)
        return rc;
    rc = q_read(cli, path, LIMITS, &q);
    if ((fresh = rc == TB_ENONODE) != 0) {
        q_parse("", 0, &q);
        memset(q.has, 1, sizeof q.has); /* a new quota writes every key */
    } else if (rc != 0) {
        return cli_fail(cli, "setquota", path, rc);
    }
    for (k = 0; k < Q_KEYS; k++)
        if (a->val[(unsigned char)q_letters[k]] != NULL) {
            q.v[k] = a->num[(unsigned char)q_letters[k]];
            q.has[k] = 1;
        }
    if (fresh && (rc = quota_dirs(cli, path)) == 0) {
        struct quota none = {{0, 0, -1, -1}, {1, 1, 0, 0}};
        if ((rc = q_write(cli, path, LIMITS, &q, 1)) == 0)
            rc = q_write(cli, path, STATS, &none, 1);
    } else if (!fresh) {
        rc = q_write(cli, path, LIMITS, &q, 0);
    }
    if (rc != 0)
        return cli_fail(cli, "setquota", path, rc);
    quota_warn(cli, path, &q);
    if (cli->json) {
        struct jw w;
        jw_begin(&w, path);
        q_json(&w, "quota", &q, Q_KEYS);
        jw_finish(&w);
    }
    return CLI_OK;
}

#define QUOTA_OPT(l, long_, kind_, what_)                                      \
    {                                                                          \
        .letter = l, .name = long_, .kind = kind_, .arg = "N", .help = what_,  \
        .what = long_                                                          \
    }

const struct cli_spec cli_cmd_setquota = {
    .cmd = {.name = "setquota",
            .usage = "setquota -n|-b|-N|-B N PATH",
            .summary = "Set a quota on the subtree at PATH: nodes (-n, -N) or "
                       "bytes (-b, -B).",
            .flags = CLI_PATH,
            .notes = "A soft limit (-n, -b) is only logged by the server when "
                     "passed; a hard one (-N,\n-B) refuses the write if the "
                     "server enforces quotas (enforceQuota=true).\nGiven "
                     "again, setquota changes the limits named and keeps the "
                     "others.\n"},
    .exec = exec_setquota,
    .opts = (const struct cli_opt[]){QUOTA_OPT('n', "count", CLI_POSITIVE,
                                               "at most N nodes (soft)"),
                                     QUOTA_OPT('b', "bytes", CLI_NATURAL,
                                               "at most N bytes of data "
                                               "(soft)"),
                                     QUOTA_OPT('N', "count-hard", CLI_POSITIVE,
                                               "at most N nodes "
                                               "(hard)"),
                                     QUOTA_OPT('B', "bytes-hard", CLI_NATURAL,
                                               "at most N bytes of "
                                               "data (hard)"),
                                     {0}},
    CLI_ONE_PATH,
};

static int exec_listquota(struct cli *cli, const struct cli_cmd *cmd,
                          const struct cli_args *a)
{
    const char *path = a->argv[0];
    struct quota q, use;
    char buf[160];
    int rc;

    (void)cmd;
    if ((rc = q_read(cli, path, LIMITS, &q)) != 0 ||
        (rc = q_read(cli, path, STATS, &use)) != 0)
        return q_missing(cli, "listquota", path, rc);
    if (cli->json) {
        struct jw w;
        jw_begin(&w, path);
        q_json(&w, "quota", &q, Q_KEYS);
        q_json(&w, "stats", &use, Q_BYTE_HARD);
        jw_finish(&w);
        return CLI_OK;
    }
    /* zkCli's lines, for the scripts that read them. */
    q_format(&q, buf, sizeof buf);
    printf("Output quota for %s %s\n", path, buf);
    q_format(&use, buf, sizeof buf);
    printf("Output stat for %s %s\n", path, buf);
    fflush(stdout);
    return CLI_OK;
}

const struct cli_spec cli_cmd_listquota = {
    .cmd = {.name = "listquota",
            .usage = "listquota PATH",
            .summary = "Print the quota on PATH and what the subtree uses.",
            .flags = CLI_PATH | CLI_CONNECT},
    .exec = exec_listquota,
    CLI_ONE_PATH,
};

/* Deletes the quota's nodes, then the levels above them left empty. */
static int quota_remove(struct cli *cli, const char *path)
{
    char *p = qpath(path, LIMITS), *s;
    int rc;

    if (p == NULL)
        return TB_ENOMEM;
    rc = tb_delete_sync(cli->c, p, -1);
    strcpy(strrchr(p, '/'), STATS);
    if (rc == 0 && (rc = tb_delete_sync(cli->c, p, -1)) == TB_ENONODE)
        rc = 0;
    while (rc == 0 && (s = strrchr(p, '/')) - p > (ptrdiff_t)sizeof QROOT - 1) {
        *s = '\0';
        rc = tb_delete_sync(cli->c, p, -1);
    }
    free(p);
    /* A level still in use by another quota is where trimming stops. */
    return rc == TB_ENOTEMPTY || rc == TB_ENONODE ? 0 : rc;
}

static int exec_delquota(struct cli *cli, const struct cli_cmd *cmd,
                         const struct cli_args *a)
{
    const char *path = a->argv[0];
    struct quota q;
    int k, rc, some = 0;

    (void)cmd;
    if ((rc = q_read(cli, path, LIMITS, &q)) != 0)
        return q_missing(cli, "delquota", path, rc);
    for (k = 0; k < Q_KEYS; k++)
        if (a->val[(unsigned char)q_letters[k]] != NULL) {
            q.v[k] = -1;
            q.has[k] = 1;
            some = 1;
        }
    rc = some ? q_write(cli, path, LIMITS, &q, 0) : quota_remove(cli, path);
    if (rc != 0)
        return cli_fail(cli, "delquota", path, rc);
    if (cli->json) {
        struct jw w;
        jw_begin(&w, path);
        if (some) {
            q_json(&w, "quota", &q, Q_KEYS);
        } else {
            jw_key(&w, "quota");
            jw_null(&w);
        }
        jw_finish(&w);
    }
    return CLI_OK;
}

const struct cli_spec cli_cmd_delquota = {
    .cmd = {.name = "delquota",
            .usage = "delquota [-n|-b|-N|-B] PATH",
            .summary = "Remove the quota on PATH, or only the limits named.",
            .flags = CLI_PATH | CLI_CONNECT},
    .exec = exec_delquota,
    .opts =
        (const struct cli_opt[]){
            {.letter = 'n', .name = "count", .help = "the node limit (soft)"},
            {.letter = 'b', .name = "bytes", .help = "the byte limit (soft)"},
            {.letter = 'N',
             .name = "count-hard",
             .help = "the node limit (hard)"},
            {.letter = 'B',
             .name = "bytes-hard",
             .help = "the byte limit (hard)"},
            {0}},
    CLI_ONE_PATH,
};
