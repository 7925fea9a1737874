/* Fencing for a semaphore's leases and an election's leader: the token
 * check answers 0 for each lease held and for the leader, TB_ELOCKLOST for
 * a returned lease, a lease or a leader whose node was deleted, and a
 * token nobody holds; fenced writes apply while the lease is held or the
 * candidate leads, and are refused (nothing applied) once its node is
 * gone; a candidate not leading gets TB_ENOTHELD, a non-fair election
 * TB_EINVAL. */
#include <string.h>

#include "rt.h"
#include "rt_async.h"
#include "tests.h"

#define SEM "/rt/fsem"
#define EL  "/rt/fel"
#define RES "/rt/fres"

/* The child of `parent` whose czxid is `token` (a holder's node). */
static void node_of(struct tb_client *c, const char *parent, int64_t token,
                    char *out, size_t cap)
{
    struct tb_strings v;
    struct tb_stat st;
    int i;

    CHECK_RC(tb_get_children_sync(c, parent, NULL, NULL, &v), 0);
    out[0] = '\0';
    for (i = 0; i < v.count; i++) {
        snprintf(out, cap, "%s/%s", parent, v.v[i]);
        if (tb_exists_sync(c, out, NULL, NULL, &st) == 0 && st.czxid == token)
            break;
        out[0] = '\0';
    }
    tb_strings_free(&v);
    CHECK(out[0] != '\0');
}

static struct tb_multi *write_res(const char *what)
{
    struct tb_multi *ops = tb_multi_new();

    CHECK(ops != NULL);
    CHECK_RC(tb_multi_set_data(ops, RES, what, strlen(what), -1), 0);
    return ops;
}

static void res_is(struct tb_client *c, const char *want)
{
    char *v;
    size_t n;

    CHECK_RC(tb_get_data_sync(c, RES, NULL, NULL, &v, &n, NULL), 0);
    if (n != strlen(want) || memcmp(v, want, n) != 0) {
        fprintf(stderr, "resource holds '%.*s', want '%s'\n", (int)n, v, want);
        exit(1);
    }
    tb_free(v);
}

static void on_multi(struct tb_client *c, int rc, const struct tb_op_result *r,
                     int count, void *data)
{
    (void)c;
    (void)r;
    (void)count;
    rt_done_cb(rc, data);
}

static void leases(struct tb_client *admin, struct tb_client *c1,
                   struct tb_client *c2)
{
    struct tb_semaphore *s1, *s2;
    struct tb_lease *l1, *l2, *l3;
    struct tb_multi *ops;
    struct rt_done d;
    char node[256];
    int64_t t1, t2, t3;

    CHECK_RC(tb_semaphore_new(&s1, c1, SEM, 2, NULL), 0);
    CHECK_RC(tb_semaphore_new(&s2, c2, SEM, 2, NULL), 0);
    CHECK_RC(tb_semaphore_acquire_sync(s1, 5000, &l1), 0);
    CHECK_RC(tb_semaphore_acquire_sync(s2, 5000, &l2), 0);
    t1 = tb_lease_token(l1);
    t2 = tb_lease_token(l2);
    CHECK_RC(tb_token_check_sync(admin, SEM, t1), 0);
    CHECK_RC(tb_token_check_sync(admin, SEM, t2), 0);
    CHECK_RC(tb_token_check_sync(admin, SEM, t2 + 1000), TB_ELOCKLOST);

    /* Fenced writes while held, both forms. */
    ops = write_res("l1");
    CHECK_RC(tb_lease_fenced_exec_sync(l1, ops, NULL), 0);
    tb_multi_free(ops);
    res_is(admin, "l1");
    ops = write_res("l2");
    rt_done_init(&d);
    CHECK_RC(tb_lease_fenced_exec(l2, ops, on_multi, &d), 0);
    tb_multi_free(ops);
    CHECK_RC(rt_done_wait(&d, 5000), 0);
    res_is(admin, "l2");

    /* Returned: stale. */
    CHECK_RC(tb_lease_release_sync(l2), 0);
    CHECK_RC(tb_token_check_sync(admin, SEM, t2), TB_ELOCKLOST);
    CHECK_RC(tb_token_check_sync(admin, SEM, t1), 0);

    /* The lease's node deleted under it: the server refuses its write. */
    ops = write_res("l1 again");
    CHECK_RC(tb_lease_fence(l1, ops), 0); /* the check, made while held */
    node_of(admin, SEM "/leases", t1, node, sizeof node);
    CHECK_RC(tb_delete_sync(admin, node, -1), 0);
    CHECK_RC(tb_token_check_sync(admin, SEM, t1), TB_ELOCKLOST);
    CHECK_RC(tb_multi_exec_sync(c1, ops, NULL), TB_ENONODE);
    tb_multi_free(ops);
    ops = write_res("l1 again");
    CHECK(tb_lease_fenced_exec_sync(l1, ops, NULL) == TB_ELOCKLOST);
    tb_multi_free(ops);
    res_is(admin, "l2");
    tb_lease_release_sync(l1);

    CHECK_RC(tb_semaphore_acquire_sync(s2, 5000, &l3), 0);
    t3 = tb_lease_token(l3);
    CHECK(t3 > t1);
    CHECK_RC(tb_token_check_sync(admin, SEM, t3), 0);
    CHECK_RC(tb_token_check_sync(admin, SEM, t1), TB_ELOCKLOST);
    CHECK_RC(tb_lease_release_sync(l3), 0);
    tb_semaphore_free(s1);
    tb_semaphore_free(s2);
    printf("semaphore: the token check answers 0 for both leases held, "
           "ELOCKLOST once returned or deleted; fenced writes apply while "
           "held, refused by the server once the lease's node is gone\n");
}

static void leader(struct tb_client *admin, struct tb_client *c1,
                   struct tb_client *c2)
{
    struct tb_lock_options nf = {.kind = TB_LOCK_NONFAIR};
    struct tb_election *e1, *e2, *e3;
    struct tb_multi *ops;
    char node[256];
    int64_t t1, t2, t3;
    int rc;

    CHECK_RC(tb_election_new(&e1, c1, EL, NULL), 0);
    CHECK_RC(tb_election_new(&e2, c2, EL, NULL), 0);
    CHECK_RC(tb_election_join(e1), 0);
    CHECK_RC(tb_election_await_sync(e1, 5000, &t1), 0);
    CHECK_RC(tb_election_join(e2), 0);
    CHECK(rt_wait_nchildren(admin, EL, 2, 5000) == 2);

    ops = write_res("e2 not leading");
    CHECK_RC(tb_election_fenced_exec_sync(e2, ops, NULL), TB_ENOTHELD);
    tb_multi_free(ops);
    ops = write_res("e1");
    CHECK_RC(tb_election_fenced_exec_sync(e1, ops, NULL), 0);
    tb_multi_free(ops);
    res_is(admin, "e1");
    CHECK_RC(tb_token_check_sync(admin, EL, t1), 0);

    /* The leader's node deleted: e2 leads; e1's writes are refused. */
    ops = write_res("e1 late");
    CHECK_RC(tb_election_fence(e1, ops), 0);
    node_of(admin, EL, t1, node, sizeof node);
    CHECK_RC(tb_delete_sync(admin, node, -1), 0);
    CHECK_RC(tb_multi_exec_sync(c1, ops, NULL), TB_ENONODE);
    tb_multi_free(ops);
    CHECK_RC(tb_election_await_sync(e2, 5000, &t2), 0);
    CHECK(t2 > t1);
    ops = write_res("e1 late");
    rc = tb_election_fenced_exec_sync(e1, ops, NULL);
    CHECK(rc == TB_ELOCKLOST || rc == TB_ENOTHELD);
    tb_multi_free(ops);
    res_is(admin, "e1");
    ops = write_res("e2");
    CHECK_RC(tb_election_fenced_exec_sync(e2, ops, NULL), 0);
    tb_multi_free(ops);
    res_is(admin, "e2");
    CHECK_RC(tb_token_check_sync(admin, EL, t1), TB_ELOCKLOST);
    CHECK_RC(tb_token_check_sync(admin, EL, t2), 0);
    tb_election_free(e1);
    tb_election_free(e2);

    /* Non-fair: its node PATH comes back under the same name. */
    CHECK_RC(tb_election_new(&e3, c1, EL "nf", &nf), 0);
    CHECK_RC(tb_election_join(e3), 0);
    CHECK_RC(tb_election_await_sync(e3, 5000, &t3), 0);
    ops = write_res("nf");
    CHECK_RC(tb_election_fence(e3, ops), TB_EINVAL);
    tb_multi_free(ops);
    CHECK_RC(tb_token_check_sync(admin, EL "nf", t3), 0);
    tb_election_free(e3);
    printf("election: the leader's fenced writes apply, a candidate's are "
           "refused (ENOTHELD); once the leader's node is deleted the "
           "server refuses its write and the next leader's applies; the "
           "token check follows the leadership; non-fair refused\n");
}

int t_fence_recipes(int argc, char **argv)
{
    struct tb_client *admin = rt_connect(rt_hosts, RT_SESSION_MS);
    struct tb_client *c1 = rt_connect(rt_hosts, RT_SESSION_MS);
    struct tb_client *c2 = rt_connect(rt_hosts, RT_SESSION_MS);

    (void)argc;
    (void)argv;
    rt_rmr(admin, SEM);
    rt_rmr(admin, EL);
    rt_rmr(admin, EL "nf");
    tb_create_sync(admin, "/rt", NULL, 0, NULL, TB_PERSISTENT, 0, NULL, 0,
                   NULL);
    tb_create_sync(admin, RES, NULL, 0, NULL, TB_PERSISTENT, 0, NULL, 0, NULL);
    leases(admin, c1, c2);
    leader(admin, c1, c2);
    rt_rmr(admin, SEM);
    rt_rmr(admin, EL);
    rt_rmr(admin, RES);
    tb_client_close(c1);
    tb_client_close(c2);
    tb_client_close(admin);
    printf("fence_recipes: ok\n");
    return 0;
}
