/* Access control: getacl, setacl, addauth, whoami.
 *
 * ACLs are written as zkCli writes them: comma-separated SCHEME:ID:PERMS
 * entries, PERMS a subset of "cdrwa".  The id may itself hold colons
 * (digest:user:hash, ip:10.0.0.0/8 has none, ip6 would), so the scheme is
 * up to the first colon and the permissions after the last one. */
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
            printf("%s:%s:%s\n", acl.v[i].scheme, acl.v[i].id,
                   cli_perms_str(acl.v[i].perms, perms));
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

static int setacl_tree(struct cli *cli, const char *path,
                       const struct tb_acl_list *acl, int32_t version,
                       int recursive, struct tb_stat *st)
{
    struct tb_strings ch;
    int32_t i;
    int rc;

    rc = tb_set_acl_sync(cli->c, path, acl, version, st);
    if (rc != 0)
        return cli_fail(cli, "setacl", path, rc);
    if (!recursive)
        return 0;
    if ((rc = tb_get_children_sync(cli->c, path, NULL, NULL, &ch)) != 0)
        return rc == TB_ENONODE ? 0 : cli_fail(cli, "setacl", path, rc);
    for (i = 0; i < ch.count && rc == 0; i++) {
        size_t a = strlen(path), b = strlen(ch.v[i]);
        char *p = malloc(a + b + 2);
        struct tb_stat cst;
        if (p == NULL) {
            rc = CLI_OSERR;
            break;
        }
        snprintf(p, a + b + 2, "%s/%s", a > 1 ? path : "", ch.v[i]);
        rc = setacl_tree(cli, p, acl, -1, 1, &cst);
        free(p);
    }
    tb_strings_free(&ch);
    return rc;
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
    if ((rc = cli_connect(cli)) == 0)
        rc = setacl_tree(cli, path, &acl.list, (int32_t)a->num['v'],
                         a->val['R'] != NULL, &st);
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
    if (cli->json) {
        struct jw w;
        jw_begin(&w, NULL);
        jw_key(&w, "added");
        jw_bool(&w, 1);
        jw_finish(&w);
    }
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
