/* The deterministic cluster harness (cluster.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cluster.h"
#include "proto/proto.h"
#include "server/replog/replog_attach.h"
#include "tree/tree.h"

static uint64_t payload_hash(const void *p, size_t n)
{
    const uint8_t *b = p;
    uint64_t h = 14695981039346656037ULL; /* FNV-1a */

    while (n-- > 0)
        h = (h ^ *b++) * 1099511628211ULL;
    return h;
}

/* The first server to apply index i records what it applied; every other
 * must apply the same there (raft's state machine safety). */
static void record_applied(struct cluster *c, unsigned server, int64_t index,
                           uint64_t h)
{
    size_t i = (size_t)index, n = c->napplied;

    assert_true(index > 0);
    if (i >= n) {
        n = n == 0 ? 1024 : n;
        while (n <= i)
            n *= 2;
        c->applied = realloc(c->applied, n * sizeof *c->applied);
        assert_non_null(c->applied);
        memset(c->applied + c->napplied, 0,
               (n - c->napplied) * sizeof *c->applied);
        c->napplied = n;
    }
    if (c->applied[i] == 0)
        c->applied[i] = h;
    else if (c->applied[i] != h)
        fail_msg("server %u applied another entry at index %lld", server,
                 (long long)index);
}

static void node_apply(void *data, int64_t index, const void *p, size_t n)
{
    struct node *x = data;

    record_applied(x->c, x->i, index, payload_hash(p, n) | 1);
    assert_int_equal(fsm_apply(x->fsm, index, p, n), 0);
}

static int node_snapshot(void *data, struct tb_wbuf *out)
{
    struct node *x = data;

    return fsm_snapshot(x->fsm, out);
}

static int node_restore(void *data, const void *buf, size_t len)
{
    struct node *x = data;

    if (x->refuse_restore)
        return TB_ENOMEM;
    return fsm_restore(x->fsm, buf, len);
}

static void node_leader(void *data, int is_leader)
{
    struct node *x = data;

    x->leader = is_leader;
    x->leader_changes++;
}

/* Errors only: a scenario that kills servers makes the rest expected. */
static void node_log(void *data, int level, const char *msg)
{
    struct node *x = data;

    if (level <= REPLOG_LOG_ERROR)
        fprintf(stderr, "server %u: %s\n", x->i, msg);
}

/* libraft 0.15's fixture io keeps what it is given to store in an array
 * that only raft_start reads back, before any entry here.  Its truncate
 * counts entries from index 1 and from what has been stored: after a
 * snapshot sent to the server (which empties the array), or with appends
 * still on their way, it reads past the array's end.  So the harness
 * truncates nothing there: raft's own log, the one the checks read, is
 * truncated as ever.  (tumblerd's log, wal.c, is not the fixture's.) */
static int io_truncate(struct raft_io *io, raft_index index)
{
    (void)io;
    (void)index;
    return 0;
}

/* The term of r's entry at index i: 0 if it holds none there, or has
 * only its snapshot's last one's. */
static raft_term term_at(const struct raft *r, raft_index i)
{
    const struct raft_log *g = &r->log;
    size_t n = (g->back + g->size - g->front) % (g->size ? g->size : 1);

    if (i == g->snapshot.last_index)
        return g->snapshot.last_term;
    if (i <= g->offset || i > g->offset + n)
        return 0;
    return g->entries[(g->front + (i - g->offset - 1)) % g->size].term;
}

/* Every server's sends, once mend.c has seen them, pass here: a success a
 * follower answers an AppendEntries with says that its log equals its
 * leader's up to the index it names, and that must be true of the two
 * logs at that index (where both hold it) when it leaves to a leader of
 * its term, the one server that acts on it. */
static struct cluster *running;
static int (*fixture_send)(struct raft_io *io, struct raft_io_send *req,
                           const struct raft_message *m, raft_io_send_cb cb);

static int checked_send(struct raft_io *io, struct raft_io_send *req,
                        const struct raft_message *m, raft_io_send_cb cb)
{
    const struct raft_append_entries_result *a = &m->append_entries_result;
    const struct raft *from = io->data, *to;
    raft_term mine, theirs;

    if (m->type == RAFT_IO_APPEND_ENTRIES_RESULT && a->rejected == 0 &&
        m->server_id >= 1 && m->server_id <= running->n) {
        to = raft_fixture_get(&running->f, (unsigned)m->server_id - 1);
        mine = term_at(from, a->last_log_index);
        theirs = term_at(to, a->last_log_index);
        if (to->state == RAFT_LEADER && to->current_term == a->term &&
            mine != 0 && theirs != 0 && mine != theirs)
            fail_msg("server %llu told server %llu its log is the same up to"
                     " %llu, but holds an entry of term %llu there, not %llu",
                     (unsigned long long)from->id, (unsigned long long)to->id,
                     (unsigned long long)a->last_log_index,
                     (unsigned long long)mine, (unsigned long long)theirs);
    }
    return fixture_send(io, req, m, cb);
}

/* libraft 0.15's fixture io stores a snapshot without its configuration's
 * index, and gives it back with that field unwritten: raft would send a
 * follower, and install, whatever the heap held there, so that a schedule
 * depended on the ones run before it in the process.  So the harness keeps
 * the index of each snapshot raft stores and puts it back into the
 * snapshot the io gives raft.  (tumblerd's snapshots, snapstore.c, keep
 * it.) */
static int (*fixture_snapshot_put)(struct raft_io *io, unsigned trailing,
                                   struct raft_io_snapshot_put *req,
                                   const struct raft_snapshot *snapshot,
                                   raft_io_snapshot_put_cb cb);
static int (*fixture_snapshot_get)(struct raft_io *io,
                                   struct raft_io_snapshot_get *req,
                                   raft_io_snapshot_get_cb cb);

struct snapshot_get {
    struct raft_io_snapshot_get req; /* given to the fixture's io */
    struct raft_io_snapshot_get *raft_req;
    raft_io_snapshot_get_cb cb;
    struct node *x;
};

static struct node *node_of(struct raft_io *io)
{
    const struct raft *r = io->data;

    return &running->nodes[r->id - 1];
}

static int kept_snapshot_put(struct raft_io *io, unsigned trailing,
                             struct raft_io_snapshot_put *req,
                             const struct raft_snapshot *snapshot,
                             raft_io_snapshot_put_cb cb)
{
    struct node *x = node_of(io);

    x->put_index[1] = x->put_index[0];
    x->put_conf_index[1] = x->put_conf_index[0];
    x->put_index[0] = snapshot->index;
    x->put_conf_index[0] = snapshot->configuration_index;
    return fixture_snapshot_put(io, trailing, req, snapshot, cb);
}

static void kept_snapshot_got(struct raft_io_snapshot_get *req,
                              struct raft_snapshot *snapshot, int status)
{
    struct snapshot_get *g = req->data;
    struct node *x = g->x;
    int k;

    if (status == 0) {
        for (k = 0; k < 2 && x->put_index[k] != snapshot->index; k++)
            ;
        if (k == 2)
            fail_msg("server %u read a snapshot at %llu it did not store", x->i,
                     (unsigned long long)snapshot->index);
        snapshot->configuration_index = x->put_conf_index[k];
    }
    g->raft_req->cb = g->cb;
    g->cb(g->raft_req, snapshot, status);
    free(g);
}

static int kept_snapshot_get(struct raft_io *io,
                             struct raft_io_snapshot_get *req,
                             raft_io_snapshot_get_cb cb)
{
    struct snapshot_get *g = malloc(sizeof *g);
    int rv;

    assert_non_null(g);
    g->raft_req = req;
    g->cb = cb;
    g->x = node_of(io);
    g->req.data = g;
    rv = fixture_snapshot_get(io, &g->req, kept_snapshot_got);
    if (rv != 0)
        free(g);
    return rv;
}

/* Server x's raft, taken over from the fixture. */
static void attach(struct cluster *c, struct node *x)
{
    struct raft *r = raft_fixture_get(&c->f, x->i);

    running = c;
    fixture_send = r->io->send;
    r->io->send = checked_send;
    fixture_snapshot_put = r->io->snapshot_put;
    r->io->snapshot_put = kept_snapshot_put;
    fixture_snapshot_get = r->io->snapshot_get;
    r->io->snapshot_get = kept_snapshot_get;
    replog_attach(x->log, r);
    r->io->truncate = io_truncate;
}

void cluster_init(struct cluster *c, unsigned n,
                  const struct replog_config *cfg)
{
    cluster_init_voters(c, n, n, cfg);
}

void cluster_init_voters(struct cluster *c, unsigned n, unsigned voters,
                         const struct replog_config *cfg)
{
    struct fsm_hooks hooks = {0};
    struct raft_configuration conf;
    struct node *x;
    unsigned i;

    memset(c, 0, sizeof *c);
    assert_true(n <= CLUSTER_MAX);
    c->n = n;
    if (cfg != NULL)
        c->cfg = *cfg;
    assert_int_equal(raft_fixture_initialize(&c->f), 0);
    for (i = 0; i < n; i++) {
        struct replog_config rc = c->cfg;
        struct replog_fsm rf;

        x = &c->nodes[i];
        x->c = c;
        x->i = i;
        rc.server_id = (int)i + 1;
        rc.log = node_log;
        rc.log_data = x;
        rc.on_leader = node_leader;
        rc.on_leader_data = x;
        rf = (struct replog_fsm){x, node_apply, node_snapshot, node_restore};
        assert_int_equal(fsm_init(&x->fsm, &hooks), 0);
        assert_int_equal(replog_attach_new(&x->log, &rc, &rf), 0);
        assert_int_equal(raft_fixture_grow(&c->f, replog_attached_fsm(x->log)),
                         0);
        attach(c, x);
    }
    assert_int_equal(raft_fixture_configuration(&c->f, voters, &conf), 0);
    assert_int_equal(raft_fixture_bootstrap(&c->f, &conf), 0);
    raft_configuration_close(&conf);
    assert_int_equal(raft_fixture_start(&c->f), 0);
}

unsigned cluster_grow(struct cluster *c)
{
    struct fsm_hooks hooks = {0};
    struct replog_config rc = c->cfg;
    struct replog_fsm rf;
    unsigned i = c->n;
    struct node *x = &c->nodes[i];

    assert_true(i < CLUSTER_MAX);
    x->c = c;
    x->i = i;
    rc.server_id = (int)i + 1;
    rc.log = node_log;
    rc.log_data = x;
    rc.on_leader = node_leader;
    rc.on_leader_data = x;
    rc.join = 1;
    rf = (struct replog_fsm){x, node_apply, node_snapshot, node_restore};
    assert_int_equal(fsm_init(&x->fsm, &hooks), 0);
    assert_int_equal(replog_attach_new(&x->log, &rc, &rf), 0);
    assert_int_equal(raft_fixture_grow(&c->f, replog_attached_fsm(x->log)), 0);
    attach(c, x);
    assert_int_equal(raft_start(raft_fixture_get(&c->f, i)), 0);
    c->n++;
    return i;
}

void cluster_close(struct cluster *c)
{
    unsigned i;

    raft_fixture_close(&c->f);
    for (i = 0; i < c->n; i++) {
        replog_attached_free(c->nodes[i].log);
        fsm_close(c->nodes[i].fsm);
    }
    /* Every proposal got exactly one answer, at the latest here; one
     * acknowledged names the index its own entry was applied at. */
    for (i = 0; i < c->nprops; i++) {
        struct prop *p = &c->props[i];

        if (p->fired != 1)
            fail_msg("proposal %u (%s) answered %d times", i, p->path,
                     p->fired);
        if (p->status == 0 && ((size_t)p->index >= c->napplied ||
                               c->applied[p->index] != p->hash))
            fail_msg("proposal %u (%s) acknowledged at index %lld, which"
                     " holds another entry",
                     i, p->path, (long long)p->index);
    }
    free(c->applied);
    c->applied = NULL;
    c->napplied = 0;
}

int cluster_installing(struct cluster *c, unsigned i)
{
    const struct raft *r = raft_fixture_get(&c->f, i);

    return r->last_stored == 0 && r->snapshot.put.data != NULL;
}

/* A server installing a snapshot it was sent is a follower: the install's
 * end puts the snapshot's configuration under it, and raft's candidate and
 * leader arrays are sized for the one before (mend.c's ninth mend). */
static void check_installing(struct cluster *c, unsigned i)
{
    const struct raft *r = raft_fixture_get(&c->f, i);

    if (cluster_installing(c, i) && r->state != RAFT_FOLLOWER)
        fail_msg("server %u stands for election while it installs a"
                 " snapshot (state %d)",
                 i, r->state);
}

static void tick_all(struct cluster *c)
{
    unsigned i;

    for (i = 0; i < c->n; i++)
        if (raft_fixture_alive(&c->f, i)) {
            check_installing(c, i);
            replog_attached_tick(c->nodes[i].log);
            if (c->on_tick != NULL)
                c->on_tick(c, i, c->on_tick_arg);
        }
}

int cluster_step_until(struct cluster *c, int (*stop)(struct cluster *, void *),
                       void *arg, unsigned ms)
{
    raft_time end = raft_fixture_time(&c->f) + ms;

    tick_all(c);
    while (!stop(c, arg)) {
        if (raft_fixture_time(&c->f) >= end)
            return 0;
        c->in_raft = 1;
        raft_fixture_step(&c->f);
        c->in_raft = 0;
        tick_all(c);
    }
    return 1;
}

static int never(struct cluster *c, void *arg)
{
    (void)c;
    (void)arg;
    return 0;
}

void cluster_step_for(struct cluster *c, unsigned ms)
{
    (void)cluster_step_until(c, never, NULL, ms);
}

/* Each server's raft, for a scenario that fails. */
static void print_servers(struct cluster *c)
{
    static const char *const states[] = {"unavailable", "follower", "candidate",
                                         "leader"};
    unsigned i, k;
    struct raft *r;

    for (i = 0; i < c->n; i++) {
        r = raft_fixture_get(&c->f, i);
        fprintf(stderr,
                "server %u: %s, %s, term %llu, last index %llu, commit %llu,"
                " applied %llu, stored %llu, snapshot %llu (term %llu), in"
                " memory from %llu\n",
                i, raft_fixture_alive(&c->f, i) ? "alive" : "dead",
                states[raft_state(r) & 3], (unsigned long long)r->current_term,
                (unsigned long long)raft_last_index(r),
                (unsigned long long)r->commit_index,
                (unsigned long long)raft_last_applied(r),
                (unsigned long long)r->last_stored,
                (unsigned long long)r->log.snapshot.last_index,
                (unsigned long long)r->log.snapshot.last_term,
                (unsigned long long)r->log.offset + 1);
        if (raft_state(r) == RAFT_LEADER)
            for (k = 0; k < r->configuration.n; k++)
                fprintf(
                    stderr,
                    "  progress of %llu: state %u, next %llu, match"
                    " %llu, snapshot %llu\n",
                    (unsigned long long)r->configuration.servers[k].id,
                    r->leader_state.progress[k].state,
                    (unsigned long long)r->leader_state.progress[k].next_index,
                    (unsigned long long)r->leader_state.progress[k].match_index,
                    (unsigned long long)r->leader_state.progress[k]
                        .snapshot_index);
    }
}

/* The live server leading in the highest term, but `not`; c->n if none.
 * Ours, not the fixture's: that one keeps naming a dead or cut-off
 * leader until the others have settled on another. */
static unsigned leader_but(struct cluster *c, unsigned not )
{
    unsigned i, l = c->n;
    struct raft *r;

    for (i = 0; i < c->n; i++) {
        r = raft_fixture_get(&c->f, i);
        if (i != not &&raft_fixture_alive(&c->f, i) &&
            raft_state(r) == RAFT_LEADER &&
            (l == c->n ||
             r->current_term > raft_fixture_get(&c->f, l)->current_term))
            l = i;
    }
    return l;
}

static int has_leader_but(struct cluster *c, void *arg)
{
    return leader_but(c, *(unsigned *)arg) < c->n;
}

unsigned cluster_new_leader(struct cluster *c, unsigned old, unsigned ms)
{
    if (!cluster_step_until(c, has_leader_but, &old, ms)) {
        print_servers(c);
        fail_msg("no leader but %u within %u ms", old, ms);
    }
    return leader_but(c, old);
}

unsigned cluster_leader(struct cluster *c, unsigned ms)
{
    return cluster_new_leader(c, c->n, ms);
}

static void prop_done(void *arg, int status, int64_t index)
{
    struct prop *p = arg;

    if (p->fired++ != 0)
        fail_msg("proposal %s answered twice", p->path);
    p->status = status;
    p->index = index;
}

static unsigned propose(struct cluster *c, unsigned i, int32_t type,
                        int64_t session, const struct tb_wbuf *body,
                        const char *path)
{
    struct prop *p;
    struct tb_wbuf e;
    struct tb_txn t = {0};
    unsigned k = c->nprops++;
    int rv;

    assert_true(k < CLUSTER_MAX_PROPS);
    p = &c->props[k];
    p->node = i;
    p->type = type;
    snprintf(p->path, sizeof p->path, "%s", path);
    t.type = type;
    t.session = session;
    t.xid = (int32_t)k;
    t.time = (int64_t)raft_fixture_time(&c->f);
    t.super = 1;
    t.body = (struct tb_str){(const char *)body->base, body->len};
    tb_wbuf_init(&e);
    tb_txn_encode(&e, &t);
    p->hash = payload_hash(e.base, e.len) | 1;
    rv = replog_propose(c->nodes[i].log, e.base, e.len, prop_done, p);
    tb_wbuf_free(&e);
    if (rv != 0) { /* refused at once: its answer */
        p->fired = 1;
        p->status = rv;
    }
    return k;
}

unsigned cluster_open_session(struct cluster *c, unsigned i)
{
    struct tb_wbuf b;
    struct tb_create_session_txn s = {30000, TB_STR("0123456789abcdef")};
    unsigned k;

    tb_wbuf_init(&b);
    tb_create_session_txn_encode(&b, &s);
    k = propose(c, i, TB_OP_CREATESESSION, 0, &b, "(session)");
    tb_wbuf_free(&b);
    return k;
}

unsigned cluster_create(struct cluster *c, unsigned i, const char *path,
                        int32_t flags)
{
    struct tb_wbuf b;
    struct tb_create_req r = {tb_str_c(path), TB_STR("v"), tb_acl_open_unsafe,
                              flags};
    unsigned k;

    tb_wbuf_init(&b);
    tb_create_req_encode(&b, &r);
    k = propose(c, i, TB_OP_CREATE, c->session, &b, path);
    tb_wbuf_free(&b);
    return k;
}

unsigned cluster_close_session(struct cluster *c, unsigned i)
{
    struct tb_wbuf b;
    unsigned k;

    tb_wbuf_init(&b);
    k = propose(c, i, TB_OP_CLOSESESSION, c->session, &b, "(close)");
    tb_wbuf_free(&b);
    return k;
}

int64_t cluster_session_of(struct cluster *c, unsigned p)
{
    assert_int_equal(c->props[p].fired, 1);
    assert_int_equal(c->props[p].status, 0);
    return fsm_session_id_for(
        fsm_zxid_of(c->nodes[c->props[p].node].fsm, c->props[p].index));
}

void cluster_session_on(struct cluster *c, unsigned leader)
{
    unsigned s = cluster_open_session(c, leader);

    cluster_converge(c, 5000);
    c->session = cluster_session_of(c, s);
}

int cluster_has(struct cluster *c, unsigned i, const char *path)
{
    return tree_find(fsm_tree(c->nodes[i].fsm), tb_str_c(path)) != NULL;
}

int cluster_role(struct cluster *c, unsigned i, int id)
{
    struct replog_member m[CLUSTER_MAX];
    unsigned n = replog_members(c->nodes[i].log, m, CLUSTER_MAX), k;

    for (k = 0; k < n; k++)
        if (m[k].id == id)
            return m[k].role;
    return -1;
}

/* Every live server has applied all its leader has. */
static int caught_up(struct cluster *c, void *arg)
{
    unsigned l = leader_but(c, c->n), i;
    raft_index last;

    (void)arg;
    if (l >= c->n)
        return 0;
    last = raft_last_index(raft_fixture_get(&c->f, l));
    for (i = 0; i < c->n; i++)
        if (raft_fixture_alive(&c->f, i) &&
            raft_last_applied(raft_fixture_get(&c->f, i)) != last)
            return 0;
    return 1;
}

void cluster_converge(struct cluster *c, unsigned ms)
{
    struct tb_wbuf first, other;
    int have = 0;
    unsigned i, k;

    if (!cluster_step_until(c, caught_up, NULL, ms)) {
        print_servers(c);
        fail_msg("servers not caught up within %u ms", ms);
    }
    tb_wbuf_init(&first);
    tb_wbuf_init(&other);
    for (i = 0; i < c->n; i++) {
        if (!raft_fixture_alive(&c->f, i))
            continue;
        if (!have) {
            assert_int_equal(fsm_snapshot(c->nodes[i].fsm, &first), 0);
            have = 1;
            k = i;
            continue;
        }
        other.len = 0;
        assert_int_equal(fsm_snapshot(c->nodes[i].fsm, &other), 0);
        assert_int_equal(fsm_last_zxid(c->nodes[i].fsm),
                         fsm_last_zxid(c->nodes[k].fsm));
        if (other.len != first.len ||
            memcmp(other.base, first.base, first.len) != 0)
            fail_msg("server %u's state differs from server %u's", i, k);
    }
    for (k = 0; k < c->nprops; k++) {
        struct prop *p = &c->props[k];
        assert_true(p->fired <= 1);
        if (p->fired == 1 && p->status == 0 && p->type == TB_OP_CREATE &&
            !p->gone)
            for (i = 0; i < c->n; i++)
                if (raft_fixture_alive(&c->f, i) && !cluster_has(c, i, p->path))
                    fail_msg("acknowledged %s missing on server %u", p->path,
                             i);
    }
    tb_wbuf_free(&first);
    tb_wbuf_free(&other);
}

void cluster_isolate(struct cluster *c, unsigned i)
{
    unsigned j;

    for (j = 0; j < c->n; j++)
        if (j != i) {
            raft_fixture_disconnect(&c->f, i, j);
            raft_fixture_disconnect(&c->f, j, i);
        }
}

void cluster_rejoin(struct cluster *c, unsigned i)
{
    unsigned j;

    for (j = 0; j < c->n; j++)
        if (j != i) {
            raft_fixture_reconnect(&c->f, i, j);
            raft_fixture_reconnect(&c->f, j, i);
        }
}
