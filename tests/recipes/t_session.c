/* Building blocks for the process-level tests the scripts run: a holder
 * that reports what happens to its lock (kill -9, SIGSTOP), a waiter that
 * reports when it got the lock, and the two halves of the token test
 * around a server restart.  Lines are printed as "WORD value ..." for the
 * scripts; times are CLOCK_REALTIME milliseconds, comparable with
 * `date +%s%3N` in the script. */
#include <string.h>
#include <sys/time.h>

#include "rt.h"
#include "tests.h"

static long long wall_ms(void)
{
    struct timeval tv;

    gettimeofday(&tv, NULL);
    return (long long)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

static int told_lost;

static void on_state(int state, int64_t token, void *data)
{
    (void)data;
    printf("STATE %s %lld %lld\n", tb_lock_state_name(state), (long long)token,
           wall_ms());
    if (state == TB_LOCK_LOST)
        __atomic_store_n(&told_lost, 1, __ATOMIC_SEQ_CST);
}

/* Holds PATH until the lock is lost (or 120 s), then releases. */
int t_holder(int argc, char **argv)
{
    struct tb_lock_options o = {.state_cb = on_state};
    struct tb_client *c;
    struct tb_mutex *m;
    int64_t token, end;
    int last = TB_LOCK_HELD, s;

    CHECK(argc >= 1);
    c = rt_connect(rt_hosts, RT_SESSION_MS);
    CHECK_RC(tb_mutex_new(&m, c, argv[0], &o), 0);
    CHECK_RC(tb_mutex_lock_sync(m, 30000, &token), 0);
    printf("HELD %lld %lld\n", (long long)token, wall_ms());
    end = rt_now_ms() + 120000;
    while (rt_now_ms() < end) {
        s = tb_mutex_state(m);
        if (s != last)
            printf("POLL %s %lld\n", tb_lock_state_name(s), wall_ms());
        last = s;
        if (s == TB_LOCK_LOST)
            break;
        rt_sleep_ms(20);
    }
    /* The state read from the client can be ahead of the callback, which
     * is queued on the I/O thread: give it a moment (a release first
     * would end the hold, and a handle that holds nothing is told
     * nothing). */
    end = rt_now_ms() + 2000;
    while (!__atomic_load_n(&told_lost, __ATOMIC_SEQ_CST) && rt_now_ms() < end)
        rt_sleep_ms(5);
    printf("RELEASE %s\n", tb_errname(tb_mutex_unlock_sync(m)));
    tb_mutex_free(m);
    tb_client_close(c);
    return 0;
}

int t_waiter(int argc, char **argv)
{
    struct tb_client *c;
    struct tb_mutex *m;
    int64_t token;

    CHECK(argc >= 1);
    c = rt_connect(rt_hosts, RT_SESSION_MS);
    CHECK_RC(tb_mutex_new(&m, c, argv[0], NULL), 0);
    printf("WAITING %lld\n", wall_ms());
    CHECK_RC(tb_mutex_lock_sync(m, 60000, &token), 0);
    printf("ACQUIRED %lld %lld\n", (long long)token, wall_ms());
    CHECK_RC(tb_mutex_unlock_sync(m), 0);
    tb_mutex_free(m);
    tb_client_close(c);
    return 0;
}

int t_token_before(int argc, char **argv)
{
    struct tb_client *c;
    struct tb_mutex *m;
    int64_t t1, t2;
    FILE *f;

    CHECK(argc >= 2);
    c = rt_connect(rt_hosts, RT_SESSION_MS);
    CHECK_RC(tb_mutex_new(&m, c, argv[0], NULL), 0);
    CHECK_RC(tb_mutex_lock_sync(m, 10000, &t1), 0);
    CHECK_RC(tb_mutex_unlock_sync(m), 0);
    CHECK_RC(tb_mutex_lock_sync(m, 10000, &t2), 0);
    CHECK(t2 > t1);
    CHECK_RC(tb_mutex_unlock_sync(m), 0);
    f = fopen(argv[1], "w");
    CHECK(f != NULL);
    fprintf(f, "%lld\n", (long long)t2);
    fclose(f);
    printf("token before restart: %lld\n", (long long)t2);
    tb_mutex_free(m);
    tb_client_close(c);
    return 0;
}

int t_token_after(int argc, char **argv)
{
    struct tb_client *c;
    struct tb_mutex *m;
    long long before;
    int64_t t;
    FILE *f;

    CHECK(argc >= 2);
    f = fopen(argv[1], "r");
    CHECK(f != NULL && fscanf(f, "%lld", &before) == 1);
    fclose(f);
    c = rt_connect(rt_hosts, RT_SESSION_MS);
    CHECK_RC(tb_mutex_new(&m, c, argv[0], NULL), 0);
    CHECK_RC(tb_mutex_lock_sync(m, 10000, &t), 0);
    printf("token after restart: %lld (before: %lld)\n", (long long)t, before);
    CHECK(t > before);
    CHECK_RC(tb_mutex_unlock_sync(m), 0);
    tb_mutex_free(m);
    tb_client_close(c);
    return 0;
}
