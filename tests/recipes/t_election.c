/* Leader election: one leader at a time; leadership moves, in
 * joining order, when the leader leaves, when its client closes, and when
 * its node is deleted (the old leader is told LOST and queues again); the
 * leader's token rises with each new leader; the non-fair variant elects
 * one too.  `candidate` is one process of the script's kill -9 case. */
#include <pthread.h>
#include <string.h>
#include <sys/time.h>

#include "rt.h"
#include "tests.h"

#define N 3

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int leaders, max_leaders, gains[N], losses[N];
static int64_t last_token;
static int tokens_rise = 1;

static void on_state(int state, int64_t token, void *data)
{
    int i = (int)(long)data;

    pthread_mutex_lock(&mu);
    if (state == TB_LOCK_HELD) {
        gains[i]++;
        if (++leaders > max_leaders)
            max_leaders = leaders;
        if (token <= last_token)
            tokens_rise = 0;
        last_token = token;
    } else if (state == TB_LOCK_LOST) {
        losses[i]++;
        leaders--;
    }
    pthread_mutex_unlock(&mu);
}

static int leader_of(struct tb_election **e, int n)
{
    int i, who = -1, count = 0;

    for (i = 0; i < n; i++)
        if (e[i] != NULL && tb_election_is_leader(e[i])) {
            who = i;
            count++;
        }
    CHECK(count <= 1);
    return who;
}

static int wait_leader(struct tb_election **e, int n, int ms)
{
    int64_t end = rt_now_ms() + ms;
    int who;

    while ((who = leader_of(e, n)) < 0 && rt_now_ms() < end)
        rt_sleep_ms(10);
    return who;
}

/* Deletes the last node of the queue at `dir` (of two) once there are
 * two again. */
static void delete_last(struct tb_client *admin, const char *dir)
{
    struct tb_strings v;
    char node[256];
    int j;

    CHECK(rt_wait_nchildren(admin, dir, 2, 5000) == 2);
    CHECK_RC(tb_get_children_sync(admin, dir, NULL, NULL, &v), 0);
    CHECK(v.count == 2);
    j = strcmp(v.v[0] + strlen(v.v[0]) - 10, v.v[1] + strlen(v.v[1]) - 10) > 0
            ? 0
            : 1;
    snprintf(node, sizeof node, "%s/%s", dir, v.v[j]);
    tb_strings_free(&v);
    CHECK_RC(tb_delete_sync(admin, node, -1), 0);
}

static void fair(void)
{
    struct tb_client *c[N], *admin = rt_connect(rt_hosts, RT_SESSION_MS);
    struct tb_election *e[N];
    struct tb_strings v;
    int64_t t0, t;
    int i;

    rt_rmr(admin, "/rt/el");
    for (i = 0; i < N; i++) {
        struct tb_lock_options o = {.state_cb = on_state,
                                    .data = (void *)(long)i};
        c[i] = rt_connect(rt_hosts, RT_SESSION_MS);
        CHECK_RC(tb_election_new(&e[i], c[i], "/rt/el", &o), 0);
        CHECK_RC(tb_election_join(e[i]), 0);
        CHECK(rt_wait_nchildren(admin, "/rt/el", i + 1, 5000) == i + 1);
    }
    CHECK_RC(tb_election_join(e[0]), TB_EINVAL);
    CHECK_RC(tb_election_await_sync(e[0], 5000, &t0), 0);
    CHECK(leader_of(e, N) == 0 && t0 > 0);
    CHECK_RC(tb_election_await_sync(e[1], 200, &t), TB_ETIMEDOUT);
    CHECK_RC(tb_get_children_sync(admin, "/rt/el", NULL, NULL, &v), 0);
    for (i = 0; i < v.count; i++)
        CHECK(strncmp(v.v[i], "_c_", 3) == 0 && strstr(v.v[i], "-latch-"));
    tb_strings_free(&v);
    printf("election: candidate 0 leads (token %lld), nodes "
           "_c_<uuid>-latch-<seq>\n",
           (long long)t0);

    /* The leader resigns: it stops acting as leader first (a resignation
     * is not a loss: no callback), then leaves. */
    pthread_mutex_lock(&mu);
    leaders--;
    pthread_mutex_unlock(&mu);
    CHECK_RC(tb_election_leave_sync(e[0]), 0);
    CHECK_RC(tb_election_await_sync(e[1], 5000, &t), 0);
    CHECK(t > t0 && leader_of(e, N) == 1);
    CHECK_RC(tb_election_state(e[0]), TB_LOCK_UNLOCKED);
    printf("election: leader left, candidate 1 leads\n");

    /* Up to here hand-overs were resignations, seen in order. */
    pthread_mutex_lock(&mu);
    CHECK(max_leaders == 1);
    pthread_mutex_unlock(&mu);

    /* Someone deletes the leader's node: it is told LOST, queues again
     * at the end, and candidate 2 leads.  The two hear of it through two
     * sessions, in no fixed order: for a moment both may believe they
     * lead, which is what the fencing token is for (the new one is
     * larger).  Once settled, exactly one leads. */
    {
        char node[256] = "";
        int j;
        CHECK_RC(tb_get_children_sync(admin, "/rt/el", NULL, NULL, &v), 0);
        CHECK(v.count == 2);
        /* The lower sequence is candidate 1's. */
        j = strcmp(v.v[0] + strlen(v.v[0]) - 10, v.v[1] + strlen(v.v[1]) - 10) <
                    0
                ? 0
                : 1;
        snprintf(node, sizeof node, "/rt/el/%s", v.v[j]);
        tb_strings_free(&v);
        CHECK_RC(tb_delete_sync(admin, node, -1), 0);
    }
    CHECK_RC(tb_election_await_sync(e[2], 5000, &t), 0);
    CHECK(rt_wait_nchildren(admin, "/rt/el", 2, 5000) == 2);
    pthread_mutex_lock(&mu);
    CHECK(losses[1] == 1);
    pthread_mutex_unlock(&mu);
    CHECK_RC(tb_election_state(e[1]), TB_LOCK_ACQUIRING);
    printf("election: leader's node deleted, it was told LOST and queued "
           "again; candidate 2 leads\n");

    /* Someone (a clean-up script) deletes the waiting candidate's node,
     * again and again over its wait: each time it queues again, without a
     * word, and stays in the race however often. */
    for (i = 0; i < 25; i++)
        delete_last(admin, "/rt/el");
    CHECK(rt_wait_nchildren(admin, "/rt/el", 2, 5000) == 2);
    CHECK_RC(tb_election_state(e[1]), TB_LOCK_ACQUIRING);
    pthread_mutex_lock(&mu);
    CHECK(losses[1] == 1);
    pthread_mutex_unlock(&mu);
    printf("election: a waiting candidate's node deleted 25 times: it "
           "queued again each time\n");

    /* The leader's client closes: candidate 1 (queued again) leads. */
    tb_client_close(c[2]);
    c[2] = NULL;
    CHECK_RC(tb_election_await_sync(e[1], 5000, &t), 0);
    CHECK_RC(tb_election_state(e[2]), TB_LOCK_LOST);
    tb_election_free(e[2]);
    e[2] = NULL;
    printf("election: leader's client closed, candidate 1 leads again\n");

    CHECK(leader_of(e, 2) == 1);
    pthread_mutex_lock(&mu);
    CHECK(tokens_rise);
    pthread_mutex_unlock(&mu);
    for (i = 0; i < 2; i++) {
        tb_election_free(e[i]);
        tb_client_close(c[i]);
    }
    CHECK(rt_wait_nchildren(admin, "/rt/el", 0, 5000) == 0);
    tb_client_close(admin);
}

static void nonfair(void)
{
    struct tb_lock_options o = {.kind = TB_LOCK_NONFAIR};
    struct tb_client *c[2];
    struct tb_election *e[2];
    int i, who;
    int64_t t0, t1;

    for (i = 0; i < 2; i++) {
        c[i] = rt_connect(rt_hosts, RT_SESSION_MS);
        CHECK_RC(tb_election_new(&e[i], c[i], "/rt/elnf/leader", &o), 0);
        CHECK_RC(tb_election_join(e[i]), 0);
    }
    who = wait_leader(e, 2, 5000);
    CHECK(who >= 0);
    t0 = tb_election_token(e[who]);
    CHECK_RC(tb_election_leave_sync(e[who]), 0);
    CHECK_RC(tb_election_await_sync(e[1 - who], 5000, &t1), 0);
    CHECK(t1 > t0);
    printf("election (non-fair): leadership moved, tokens %lld -> %lld\n",
           (long long)t0, (long long)t1);
    for (i = 0; i < 2; i++) {
        tb_election_free(e[i]);
        tb_client_close(c[i]);
    }
}

struct refused {
    pthread_mutex_t mu;
    int state;
    int64_t token;
    int calls;
};

static void on_refused_state(int state, int64_t token, void *data)
{
    struct refused *r = data;

    pthread_mutex_lock(&r->mu);
    r->state = state;
    r->token = token;
    r->calls++;
    pthread_mutex_unlock(&r->mu);
}

/* A candidacy the path refuses (a non-fair election on a path with
 * children) tells the state callback (LOST, token 0), and
 * tb_election_error why; the candidate is out of the race. */
static void refused(void)
{
    struct refused r = {PTHREAD_MUTEX_INITIALIZER, -1, -1, 0};
    struct tb_lock_options o = {.kind = TB_LOCK_NONFAIR,
                                .state_cb = on_refused_state,
                                .data = &r};
    struct tb_client *c = rt_connect(rt_hosts, RT_SESSION_MS);
    struct tb_election *e;
    int64_t end = rt_now_ms() + 5000;
    int calls;

    rt_rmr(c, "/rt/elref");
    CHECK_RC(tb_create_sync(c, "/rt/elref", NULL, 0, NULL, TB_PERSISTENT, 0,
                            NULL, 0, NULL),
             0);
    CHECK_RC(tb_create_sync(c, "/rt/elref/x", NULL, 0, NULL, TB_PERSISTENT, 0,
                            NULL, 0, NULL),
             0);
    CHECK_RC(tb_election_new(&e, c, "/rt/elref", &o), 0);
    CHECK_RC(tb_election_join(e), 0);
    do {
        CHECK(rt_now_ms() < end);
        rt_sleep_ms(5);
        pthread_mutex_lock(&r.mu);
        calls = r.calls;
        pthread_mutex_unlock(&r.mu);
    } while (calls == 0);
    CHECK(r.calls == 1 && r.state == TB_LOCK_LOST && r.token == 0);
    CHECK_RC(tb_election_error(e), TB_EFOREIGNLOCK);
    CHECK_RC(tb_election_state(e), TB_LOCK_LOST);
    CHECK_RC(tb_election_leave_sync(e), 0);
    CHECK_RC(tb_election_state(e), TB_LOCK_UNLOCKED);
    tb_election_free(e);
    /* Refused at once, by the client: the join returns why. */
    CHECK_RC(tb_election_new(&e, c, "/rt/elref/./x", NULL), 0);
    CHECK_RC(tb_election_join(e), TB_EBADARGUMENTS);
    CHECK_RC(tb_election_state(e), TB_LOCK_UNLOCKED);
    tb_election_free(e);
    rt_rmr(c, "/rt/elref");
    tb_client_close(c);
    printf("election: a refused candidacy: LOST (token 0), "
           "tb_election_error EFOREIGNLOCK\n");
}

int t_election(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fair();
    nonfair();
    refused();
    printf("election: ok\n");
    return 0;
}

static long long wall_ms(void)
{
    struct timeval tv;

    gettimeofday(&tv, NULL);
    return (long long)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

static void on_cand_state(int state, int64_t token, void *data)
{
    (void)data;
    printf("%s %lld %lld\n", state == TB_LOCK_HELD ? "LEADER" : "STATE",
           (long long)token, wall_ms());
    if (state != TB_LOCK_HELD)
        printf("STATE %s\n", tb_lock_state_name(state));
}

/* One candidate process: joins and stays for 60 s. */
int t_candidate(int argc, char **argv)
{
    struct tb_lock_options o = {.state_cb = on_cand_state};
    struct tb_client *c;
    struct tb_election *e;

    CHECK(argc >= 2);
    o.kind = strcmp(argv[1], "nonfair") == 0 ? TB_LOCK_NONFAIR : TB_LOCK_FAIR;
    c = rt_connect(rt_hosts, RT_SESSION_MS);
    CHECK_RC(tb_election_new(&e, c, argv[0], &o), 0);
    CHECK_RC(tb_election_join(e), 0);
    printf("JOINED %lld\n", wall_ms());
    rt_sleep_ms(60000);
    tb_election_free(e);
    tb_client_close(c);
    return 0;
}
