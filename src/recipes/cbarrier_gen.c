/* A cyclic barrier's generations (cbarrier.c has the layout and the
 * await): their names, what one look at a generation says, the removal
 * of one that is over, the reset, and the count of parties waiting. */
#include <stdio.h>
#include <string.h>

#include "recipes/rcp.h"

#define GEN    "gen-"
#define PARTY  "party-"
#define END    RCP_CB_END
#define BROKEN RCP_CB_BROKEN

/* ---- the I/O-free parts ---- */

int64_t rcp_cb_gen(const char *name)
{
    char *end;
    int64_t k;

    if (strncmp(name, GEN, strlen(GEN)) != 0)
        return -1;
    k = strtoll(name + strlen(GEN), &end, 10);
    return *end == '\0' && end != name + strlen(GEN) && k >= 0 ? k : -1;
}

int64_t rcp_cb_highest_gen(const struct tb_strings *v)
{
    int64_t k, hi = -1;
    int i;

    for (i = 0; i < v->count; i++)
        if ((k = rcp_cb_gen(v->v[i])) > hi)
            hi = k;
    return hi;
}

int64_t rcp_cb_party_seq(const char *name)
{
    const char *dash = strrchr(name, '-');
    char *end;
    int64_t seq;

    if (strncmp(name, PARTY, strlen(PARTY)) != 0 || dash == NULL)
        return -1;
    seq = strtoll(dash + 1, &end, 10);
    return *end == '\0' && end != dash + 1 ? seq : -1;
}

/* Two party names of one party: the same "party-<uuid>-".  A party has
 * two nodes when the server applied a create of it whose reply was lost
 * after the party had looked and created again (a twin). */
static int same_party(const char *a, const char *b)
{
    size_t n = (size_t)(strrchr(a, '-') - a);

    return strncmp(a, b, n + 1) == 0 && strrchr(b, '-') == b + n;
}

/* 1 if v[i] is a party's first node: a party counts once, where it
 * arrived, whatever twins it has. */
static int first_of_party(const struct tb_strings *v, int i)
{
    int64_t seq = rcp_cb_party_seq(v->v[i]), s;
    int j;

    if (seq < 0)
        return 0;
    for (j = 0; j < v->count; j++)
        if (j != i && same_party(v->v[i], v->v[j]) &&
            (s = rcp_cb_party_seq(v->v[j])) >= 0 && s < seq)
            return 0;
    return 1;
}

int rcp_cb_decide(const struct tb_strings *v, int64_t cversion,
                  const char *mine, int parties)
{
    int i, n = 0, me = 0;

    for (i = 0; i < v->count; i++) {
        if (strcmp(v->v[i], END) == 0)
            return RCP_CB_DECIDED;
        n += first_of_party(v, i);
        if (mine != NULL && strcmp(v->v[i], mine) == 0)
            me = 1;
    }
    if (mine != NULL && !me)
        return RCP_CB_GONE;
    if (cversion > v->count)
        return RCP_CB_BREAK;
    return n >= parties ? RCP_CB_PASS : RCP_CB_WAIT;
}

void rcp_cb_place(const struct tb_strings *v, const char *mine, int64_t *below,
                  const char **pred)
{
    int64_t first = rcp_cb_party_seq(mine), s, top = -1;
    int i;

    for (i = 0; i < v->count; i++) /* our first node: a twin may be lower */
        if ((s = rcp_cb_party_seq(v->v[i])) >= 0 && s < first &&
            same_party(v->v[i], mine))
            first = s;
    *below = 0;
    *pred = NULL;
    for (i = 0; i < v->count; i++) {
        s = rcp_cb_party_seq(v->v[i]);
        if (s < 0 || s >= first || same_party(v->v[i], mine))
            continue;
        *below += first_of_party(v, i);
        if (s > top) {
            top = s;
            *pred = v->v[i];
        }
    }
}

char *rcp_cb_gen_path(const char *path, int64_t k)
{
    char name[32];

    snprintf(name, sizeof name, GEN "%010lld", (long long)k);
    return rcp_join(path, name);
}

int rcp_cb_clean_gen(struct tb_client *c, const char *path, int64_t k,
                     int64_t later, tb_multi_cb done, void *data)
{
    char *g = rcp_cb_gen_path(path, k);
    char *next = later >= 0 ? rcp_cb_gen_path(path, later) : NULL;
    char *end = g != NULL ? rcp_join(g, END) : NULL;
    struct tb_multi *ops = tb_multi_new();
    int rv = TB_ENOMEM;

    if (g != NULL && (later < 0 || next != NULL) && end != NULL &&
        ops != NULL && (later < 0 || tb_multi_check(ops, next, -1) == 0) &&
        tb_multi_delete(ops, end, -1) == 0 && tb_multi_delete(ops, g, -1) == 0)
        rv = tb_multi_exec(c, ops, done, data);
    tb_multi_free(ops);
    free(end);
    free(next);
    free(g);
    return rv;
}

void rcp_cb_clean_below(struct tb_client *c, const char *path, int64_t k,
                        int64_t later)
{
    char *g = rcp_cb_gen_path(path, k);

    (void)rcp_cb_clean_gen(c, path, k, later, NULL, NULL);
    if (g != NULL) /* not empty (decided, its multi failed): refused */
        (void)tb_delete(c, g, -1, NULL, NULL);
    free(g);
}

/* ---- reset ---- */

struct reset {
    struct tb_client *c;
    char *path;
    int64_t k;
    tb_done_cb cb;
    void *data;
};

static void reset_end(struct reset *r, int rc)
{
    if (r->cb != NULL)
        r->cb(rc, r->data);
    free(r->path);
    free(r);
}

static void on_next_made(struct tb_client *c, int rc, const char *path,
                         const struct tb_stat *st, void *data)
{
    struct reset *r = data;

    (void)path;
    (void)st;
    if (rc == 0 || rc == TB_ENODEEXISTS)
        rcp_cb_clean_gen(c, r->path, r->k, r->k + 1, NULL, NULL);
    reset_end(r, rc == TB_ENODEEXISTS ? 0 : rc);
}

static void on_reset(struct tb_client *c, int rc, const struct tb_op_result *v,
                     int count, void *data)
{
    struct reset *r = data;
    char *next;

    if (rc == 0) { /* K's parties are told; K goes once they are out */
        rcp_cb_clean_gen(c, r->path, r->k, r->k + 1, NULL, NULL);
    } else if (count > 0 && v[0].rc == TB_ENODEEXISTS) {
        /* K was decided already: broken, it needs its successor;
         * passed, it has one. */
        next = rcp_cb_gen_path(r->path, r->k + 1);
        rc = next == NULL ? TB_ENOMEM
                          : tb_create(c, next, NULL, 0, NULL, TB_PERSISTENT, 0,
                                      on_next_made, r);
        free(next);
        if (rc == 0)
            return;
    }
    reset_end(r, rc);
}

static void on_reset_gens(struct tb_client *c, int rc,
                          const struct tb_strings *v, const struct tb_stat *st,
                          void *data)
{
    struct reset *r = data;
    struct tb_multi *ops;
    char *g = NULL, *end = NULL, *next = NULL;

    (void)st;
    if (rc == TB_ENONODE || (rc == 0 && rcp_cb_highest_gen(v) < 0)) {
        reset_end(r, 0); /* never used: nothing to reset */
        return;
    }
    if (rc == 0) {
        r->k = rcp_cb_highest_gen(v);
        ops = tb_multi_new();
        g = rcp_cb_gen_path(r->path, r->k);
        end = g != NULL ? rcp_join(g, END) : NULL;
        next = rcp_cb_gen_path(r->path, r->k + 1);
        rc = TB_ENOMEM;
        if (ops != NULL && end != NULL && next != NULL &&
            tb_multi_create(ops, end, BROKEN, strlen(BROKEN), NULL,
                            TB_PERSISTENT, 0) == 0 &&
            tb_multi_create(ops, next, NULL, 0, NULL, TB_PERSISTENT, 0) == 0)
            rc = tb_multi_exec(c, ops, on_reset, r);
        tb_multi_free(ops);
        free(next);
        free(end);
        free(g);
    }
    if (rc != 0)
        reset_end(r, rc);
}

int rcp_cb_reset(struct tb_client *c, const char *path, tb_done_cb cb,
                 void *data)
{
    struct reset *r;
    int rv;

    if ((r = calloc(1, sizeof *r)) == NULL ||
        (r->path = rcp_strdup(path)) == NULL) {
        free(r);
        return TB_ENOMEM;
    }
    r->c = c;
    r->cb = cb;
    r->data = data;
    rv = tb_get_children(c, path, NULL, NULL, on_reset_gens, r);
    if (rv != 0) {
        free(r->path);
        free(r);
    }
    return rv;
}

/* ---- how many wait ---- */

int rcp_cb_waiting(struct tb_client *c, const char *path, int *waiting)
{
    struct tb_strings v;
    char *g;
    int rc, i, n = 0;

    rc = tb_get_children_sync(c, path, NULL, NULL, &v);
    if (rc == TB_ENONODE || (rc == 0 && rcp_cb_highest_gen(&v) < 0)) {
        if (rc == 0)
            tb_strings_free(&v);
        *waiting = 0;
        return 0;
    }
    if (rc != 0)
        return rc;
    g = rcp_cb_gen_path(path, rcp_cb_highest_gen(&v));
    tb_strings_free(&v);
    if (g == NULL)
        return TB_ENOMEM;
    rc = tb_get_children_sync(c, g, NULL, NULL, &v);
    free(g);
    if (rc == TB_ENONODE) { /* passed and cleaned since the listing */
        *waiting = 0;
        return 0;
    }
    if (rc != 0)
        return rc;
    for (i = 0; i < v.count; i++) {
        if (strcmp(v.v[i], END) == 0)
            rc = TB_EBROKEN; /* the current one is decided only if broken */
        n += first_of_party(&v, i);
    }
    tb_strings_free(&v);
    *waiting = n;
    return rc;
}
