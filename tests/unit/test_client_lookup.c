/* Host names looked up off the handle (src/client/lookup.c), against a
 * getaddrinfo of the test's (-Wl,--wrap=getaddrinfo): a name server that
 * never answers holds neither the handle nor its other hosts; one slower
 * than an attempt's timeout still serves the host's next attempt.  The
 * server is a real listener on 127.0.0.1, the clock the fixture's. */
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "client_fixture.h"

/* getaddrinfo as this program sees it (-Wl,--wrap): the first look-up of
 * "slow.test" waits, as for a slow name server, until the test closes
 * slow_pipe's write end, and then fails, or with slow_answers is
 * 127.0.0.1; any later one waits until hang_pipe's is closed, and fails.
 * One made on the test's own thread fails at once (the handle driven
 * there would wait with it).  "fast.test" is 127.0.0.1.  Addresses, and
 * everything else, as the real one. */
int __real_getaddrinfo(const char *node, const char *service,
                       const struct addrinfo *hints, struct addrinfo **res);
int __wrap_getaddrinfo(const char *node, const char *service,
                       const struct addrinfo *hints, struct addrinfo **res);
static pthread_t test_thread;
static int slow_pipe[2] = {-1, -1}, hang_pipe[2] = {-1, -1};
static int slow_on_test_thread, slow_lookups, slow_answers;

int __wrap_getaddrinfo(const char *node, const char *service,
                       const struct addrinfo *hints, struct addrinfo **res)
{
    struct pollfd p = {slow_pipe[0], POLLIN, 0};
    int hung, answers;

    if (node != NULL && !(hints != NULL && hints->ai_flags & AI_NUMERICHOST)) {
        if (strcmp(node, "slow.test") == 0) {
            if (pthread_equal(pthread_self(), test_thread)) {
                slow_on_test_thread = 1;
                return EAI_AGAIN;
            }
            /* What it reads of the test's state, read before it waits: a
             * look-up given up may still wait when the next test starts. */
            hung = __atomic_fetch_add(&slow_lookups, 1, __ATOMIC_SEQ_CST) > 0;
            answers = __atomic_load_n(&slow_answers, __ATOMIC_SEQ_CST);
            if (hung)
                p.fd = hang_pipe[0];
            (void)poll(&p, 1, 10000);
            if (hung || !answers)
                return EAI_AGAIN;
            node = "127.0.0.1";
        }
        if (strcmp(node, "fast.test") == 0)
            node = "127.0.0.1";
    }
    return __real_getaddrinfo(node, service, hints, res);
}

/* A listener on 127.0.0.1 for the look-up tests, its port in *port. */
static int listener(int *port)
{
    struct sockaddr_in a = {0};
    socklen_t len = sizeof a;
    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(lfd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(lfd, 1), 0);
    assert_int_equal(getsockname(lfd, (struct sockaddr *)&a, &len), 0);
    *port = ntohs(a.sin_port);
    return lfd;
}

/* A test's start: the look-ups' state afresh (`answers`: slow_answers),
 * and the listener it connects to, on *port. */
static int lookups_start(int answers, int *port)
{
    test_thread = pthread_self();
    slow_lookups = slow_on_test_thread = 0;
    __atomic_store_n(&slow_answers, answers, __ATOMIC_SEQ_CST);
    assert_int_equal(pipe(slow_pipe), 0);
    assert_int_equal(pipe(hang_pipe), 0);
    return listener(port);
}

/* A handle of `hosts` with a session of 6000 ms, on the test's clock. */
static struct tb_client *lookup_client(const char *hosts)
{
    struct tb_options o = {0};
    struct tb_client *c;

    o.hosts = hosts;
    o.session_timeout_ms = 6000;
    assert_int_equal(tb_client_init(&c, &o), 0);
    c->now = clock_fn;
    return c;
}

static void lookups_end(void)
{
    if (slow_pipe[1] >= 0)
        close(slow_pipe[1]);
    close(hang_pipe[1]);
    close(slow_pipe[0]);
    close(hang_pipe[0]);
}

/* The handle connected once a server accepts on lfd and answers. */
static void accepted(struct tb_client *c, int lfd)
{
    int i;

    for (i = 0; i < 500 && (server_fd = accept(lfd, NULL, NULL)) < 0; i++) {
        pump(c);
        usleep(2000);
    }
    assert_true(server_fd >= 0);
    srv_handshake(0x9, 6000);
    for (i = 0; i < 500 && tb_client_state(c) != TB_SESSION_CONNECTED; i++) {
        pump(c);
        usleep(2000);
    }
    assert_int_equal(tb_client_state(c), TB_SESSION_CONNECTED);
}

/* A host whose name a name server is slow to look up holds neither the
 * handle nor the others: the look-up runs on a thread of its own, the
 * attempt gives it up at its connect timeout, and the next host is
 * looked up, connected and answered meanwhile. */
static void test_slow_name_lookup(void **state)
{
    struct tb_client *c;
    struct host h;
    char hosts[64];
    int lfd, port, i;

    (void)state;
    lfd = lookups_start(0, &port);
    snprintf(hosts, sizeof hosts, "slow.test:1,fast.test:%d", port);
    c = lookup_client(hosts); /* connect timeout 6000 / (3 x 2) */
    if (strcmp(c->hosts[0].name, "slow.test") != 0) {
        h = c->hosts[0];
        c->hosts[0] = c->hosts[1];
        c->hosts[1] = h;
    }
    pump(c);
    assert_false(slow_on_test_thread);
    for (i = 0; i < 500 && !__atomic_load_n(&slow_lookups, __ATOMIC_SEQ_CST);
         i++)
        usleep(2000);
    assert_int_equal(slow_lookups, 1);
    assert_int_equal(tb_client_state(c), TB_SESSION_CONNECTING);
    fake_now += 999;
    pump(c);
    assert_true((server_fd = accept(lfd, NULL, NULL)) < 0);
    fake_now += 1;
    accepted(c, lfd);
    close_replied(c); /* the look-up still on its way is given up */
    lookups_end();
    close(lfd);
}

/* A name server slower than an attempt's timeout still serves: the
 * host's next attempt waits for the same look-up, not a new one, and
 * connects once it answers. */
static void test_slow_name_server_answers(void **state)
{
    struct tb_client *c;
    char hosts[64];
    int lfd, port, i;

    (void)state;
    lfd = lookups_start(1, &port);
    snprintf(hosts, sizeof hosts, "slow.test:%d", port);
    c = lookup_client(hosts); /* connect timeout 6000 / 3 */
    pump(c);
    for (i = 0; i < 500 && !__atomic_load_n(&slow_lookups, __ATOMIC_SEQ_CST);
         i++)
        usleep(2000);
    fake_now += 2000; /* the attempt times out; the round pauses */
    pump(c);
    fake_now += 600; /* past the pause: the next attempt */
    pump(c);
    close(slow_pipe[1]); /* the name server answers the first look-up */
    slow_pipe[1] = -1;
    accepted(c, lfd);
    assert_int_equal(slow_lookups, 1);
    close_replied(c);
    lookups_end();
    close(lfd);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_slow_name_lookup, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slow_name_server_answers, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
