/* peer/peer.c: the members a reconfiguration gives, whose names must be
 * resolved for the links (a follower dials its leader's election port; a
 * leader takes links from members' addresses only).  A name that does not
 * resolve when they come (a name server down a moment) leaves the links
 * to the members before, and is looked up again each second until it
 * does: before, the new members were dropped for good, and a member added
 * by name was never linked to, nor let link, until a restart.  Looked up
 * off the loop: a name server that does not answer holds getaddrinfo for
 * seconds, and on the loop it stalled every heartbeat and session.
 * getaddrinfo is wrapped (-Wl,--wrap): the one name used here resolves to
 * 127.0.0.1 while the test lets it.  And a member whose own line resolves
 * to a loopback address while another's does not is warned of at start:
 * it listens where the others cannot reach it. */
#include <netdb.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include <cmocka.h>

#include "log_capture.h"
#include "server/peer/peer.h"
#include "server/peer/peer_int.h"
#include "server/server.h"

#define NAME "m4.tumbler.invalid"

static int name_resolves;  /* NAME resolves, or fails as a name server down */
static int name_lookups;   /* getaddrinfo calls for NAME */
static int name_on_loop;   /* ... made on the loop's thread */
static int name_held;      /* NAME's look-up posts `waiting` and waits for
                              `gate`, as on a name server not answering */
static uv_sem_t waiting, gate;
static uv_thread_t loop_thread;
static uint64_t now_value; /* the virtual monotonic clock */

int __real_getaddrinfo(const char *node, const char *service,
                       const struct addrinfo *hints, struct addrinfo **res);
int __wrap_getaddrinfo(const char *node, const char *service,
                       const struct addrinfo *hints, struct addrinfo **res);
int __wrap_getaddrinfo(const char *node, const char *service,
                       const struct addrinfo *hints, struct addrinfo **res)
{
    uv_thread_t self = uv_thread_self();

    if (node == NULL || strcmp(node, NAME) != 0)
        return __real_getaddrinfo(node, service, hints, res);
    name_lookups++;
    if (uv_thread_equal(&self, &loop_thread)) {
        name_on_loop = 1;
        return EAI_AGAIN; /* never waits there: the test would hang */
    }
    if (name_held) {
        uv_sem_post(&waiting);
        uv_sem_wait(&gate);
    }
    if (!name_resolves)
        return EAI_AGAIN;
    return __real_getaddrinfo("127.0.0.1", service, hints, res);
}

static uint64_t fake_now(void *data)
{
    (void)data;
    return now_value;
}

static int64_t fake_wall(void *data)
{
    (void)data;
    return 1700000000000;
}

/* Server 1 on `loop` (this thread's), the virtual clock at 1000. */
static void server_init(struct tbd *s, uv_loop_t *loop)
{
    assert_int_equal(uv_loop_init(loop), 0);
    loop_thread = uv_thread_self();
    s->loop = loop;
    s->server_id = 1;
    s->clock = (struct tbd_clock){fake_now, fake_wall, NULL, NULL};
    now_value = 1000;
}

/* Runs s's loop until no look-up of names runs. */
static void settle(struct tbd *s)
{
    while (s->peer->resolving != NULL)
        uv_run(s->loop, UV_RUN_ONCE);
}

static void members_resolve_again(void **state)
{
    const struct peer_member before[] = {{1, "127.0.0.1", 0},
                                         {2, "127.0.0.1", 1}};
    const struct peer_member after[] = {
        {1, "127.0.0.1", 0}, {2, "127.0.0.1", 1}, {4, NAME, 4444}};
    const struct member *m;
    struct tbd s = {0};
    uv_loop_t loop;

    (void)state;
    server_init(&s, &loop);
    assert_int_equal(peer_start(&s, before, 2), 0);
    assert_non_null(s.peer);
    uv_timer_stop(&s.peer->timer); /* no log here: the test polls */

    /* The name does not resolve: the members before stay. */
    name_resolves = 0;
    peer_set_members(&s, after, 3);
    settle(&s);
    assert_int_equal(name_lookups, 1);
    assert_false(name_on_loop);
    assert_null(peer__member(s.peer, 4));
    assert_non_null(peer__member(s.peer, 2));

    /* Looked up again each second, not at every poll. */
    now_value += RESOLVE_RETRY_MS / 2;
    peer__resolve_pending(s.peer, now_value);
    settle(&s);
    assert_int_equal(name_lookups, 1);
    now_value += RESOLVE_RETRY_MS / 2;
    peer__resolve_pending(s.peer, now_value);
    settle(&s);
    assert_int_equal(name_lookups, 2);
    assert_null(peer__member(s.peer, 4));

    /* It resolves: the members are the new ones. */
    name_resolves = 1;
    now_value += RESOLVE_RETRY_MS;
    peer__resolve_pending(s.peer, now_value);
    settle(&s);
    assert_int_equal(name_lookups, 3);
    assert_non_null(m = peer__member(s.peer, 4));
    assert_int_equal(m->addr.ss_family, AF_INET);
    assert_int_equal(ntohs(((const struct sockaddr_in *)&m->addr)->sin_port),
                     4444);
    assert_string_equal(m->host, NAME);
    now_value += 10 * RESOLVE_RETRY_MS; /* nothing more to look up */
    peer__resolve_pending(s.peer, now_value);
    settle(&s);
    assert_int_equal(name_lookups, 3);
    assert_false(name_on_loop);

    peer_stop(&s);
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(uv_loop_close(&loop), 0);
}

/* The sessions heard from are reported on a link to the leader that is
 * up, and kept until one is: on a link that is not (its connect on its
 * way, and maybe failing), they waited in it and went with it. */
static void touches_wait_for_a_link(void **state)
{
    const struct peer_member members[] = {{1, "127.0.0.1", 0},
                                          {2, "127.0.0.1", 1}};
    struct tbd s = {0};
    uv_loop_t loop;
    struct link *k;

    (void)state;
    server_init(&s, &loop);
    tb_wbuf_init(&s.scratch);
    assert_int_equal(peer_start(&s, members, 2), 0);
    uv_timer_stop(&s.peer->timer); /* no log here: the test polls */
    peer_touched(&s, 42);
    assert_non_null(k = peer__link_new(s.peer));
    s.peer->out = k; /* its connect not made: not up */
    peer__report_touched(s.peer);
    assert_int_equal(s.peer->touched.count, 1);
    assert_int_equal(k->held.len, 0);
    s.peer->out = NULL;
    peer__link_discard(k);
    peer_stop(&s);
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(uv_loop_close(&loop), 0);
    tb_wbuf_free(&s.scratch);
}

/* The sessions heard from but not yet reported go with the clients this
 * server closes (outside the ensemble here; cut off from the leader, the
 * same call): reported to a leader later, they counted as activity of
 * then, and kept the sessions of clients dead meanwhile past their
 * timeout. */
static void touches_go_with_the_clients(void **state)
{
    const struct peer_member members[] = {{1, "127.0.0.1", 0},
                                          {2, "127.0.0.1", 1}};
    struct tbd s = {0};
    uv_loop_t loop;

    (void)state;
    server_init(&s, &loop);
    tb_queue_init(&s.conns);
    assert_int_equal(peer_start(&s, members, 2), 0);
    uv_timer_stop(&s.peer->timer); /* no log here: the test polls */
    peer_touched(&s, 42);
    assert_int_equal(s.peer->touched.count, 1);
    peer_set_outside(&s, 1);
    assert_int_equal(s.peer->touched.count, 0);
    peer_stop(&s);
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(uv_loop_close(&loop), 0);
}

/* Members given while a look-up of the ones before still waits on a name
 * server: what that look-up finds is dropped, and the newer are looked
 * up once it ends (a name server that does not answer holds one thread,
 * not one per reconfig); so is what a look-up the stop left finds. */
static void newer_members_win(void **state)
{
    const struct peer_member before[] = {{1, "127.0.0.1", 0},
                                         {2, "127.0.0.1", 1}};
    const struct peer_member slow[] = {
        {1, "127.0.0.1", 0}, {2, "127.0.0.1", 1}, {4, NAME, 4444}};
    const struct peer_member newer[] = {
        {1, "127.0.0.1", 0}, {2, "127.0.0.1", 1}, {5, "127.0.0.1", 5555}};
    struct tbd s = {0};
    uv_loop_t loop;
    int i, lookups;

    (void)state;
    server_init(&s, &loop);
    assert_int_equal(uv_sem_init(&waiting, 0), 0);
    assert_int_equal(uv_sem_init(&gate, 0), 0);
    name_resolves = 1;
    name_held = 1;
    assert_int_equal(peer_start(&s, before, 2), 0);
    uv_timer_stop(&s.peer->timer); /* no log here: the test polls */

    lookups = name_lookups;
    peer_set_members(&s, slow, 3);
    assert_false(name_on_loop);
    uv_sem_wait(&waiting); /* its look-up waits in another thread */
    peer_set_members(&s, newer, 3);
    for (i = 0; i < 10; i++) { /* not before the older one ends */
        uv_run(&loop, UV_RUN_NOWAIT);
        assert_null(peer__member(s.peer, 5));
        uv_sleep(5);
    }
    uv_sem_post(&gate); /* the older look-up ends, found */
    settle(&s);
    assert_null(peer__member(s.peer, 4));
    assert_non_null(peer__member(s.peer, 5));
    assert_int_equal(name_lookups, lookups + 1);

    peer_set_members(&s, slow, 3); /* waiting when the peer stops */
    peer_stop(&s);
    uv_sem_post(&gate);
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(uv_loop_close(&loop), 0);
    assert_false(name_on_loop);
    name_held = 0;
    uv_sem_destroy(&waiting);
    uv_sem_destroy(&gate);
}

/* Starts server 1 with members m[0..n) and stops it: what it logged. */
static char *start_logs(const struct peer_member *m, unsigned n)
{
    struct capture cap;
    struct tbd s = {0};
    uv_loop_t loop;

    server_init(&s, &loop);
    capture_start(&cap);
    assert_int_equal(peer_start(&s, m, n), 0);
    peer_stop(&s);
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(uv_loop_close(&loop), 0);
    return capture_end(&cap);
}

static void own_loopback_warned(void **state)
{
    const struct peer_member apart[] = {{1, "127.0.0.1", 0},
                                        {2, "192.0.2.2", 2888}};
    const struct peer_member together[] = {{1, "127.0.0.1", 0},
                                           {2, "127.0.0.2", 2888}};
    char *text;

    (void)state;
    text = start_logs(apart, 2);
    assert_non_null(strstr(text, "server.1's host 127.0.0.1 is a loopback "
                                 "address here, and server.2's is not"));
    free(text);
    text = start_logs(together, 2);
    assert_null(strstr(text, "loopback"));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(members_resolve_again),
        cmocka_unit_test(newer_members_win),
        cmocka_unit_test(touches_wait_for_a_link),
        cmocka_unit_test(touches_go_with_the_clients),
        cmocka_unit_test(own_loopback_warned),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
