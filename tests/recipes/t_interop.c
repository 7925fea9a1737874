/* The libtumbler side of the Curator interoperability test: takes the
 * fair mutex ITERS times, holding it HOLD_MS (negative: until the file
 * LOG.go exists), and logs every hold in the format CuratorLock.java logs
 * Curator's, to one shared file. */
#include <unistd.h>

#include "rt.h"
#include "tests.h"

int t_interop_hold(int argc, char **argv)
{
    struct tb_client *c;
    struct tb_mutex *m;
    char go[4096];
    int i, iters, hold_ms;

    CHECK(argc >= 5);
    hold_ms = atoi(argv[1]);
    iters = atoi(argv[4]);
    c = rt_connect(rt_hosts, RT_SESSION_MS);
    CHECK_RC(tb_mutex_new(&m, c, argv[0], NULL), 0);
    for (i = 0; i < iters; i++) {
        struct rt_hold h = {.who = atol(argv[3])};
        CHECK_RC(tb_mutex_lock_sync(m, 60000, &h.token), 0);
        h.t0 = rt_now_ns();
        printf("HELD %lld\n", (long long)h.token);
        if (hold_ms > 0)
            rt_sleep_ms(hold_ms);
        snprintf(go, sizeof go, "%s.go", argv[2]);
        while (hold_ms < 0 && access(go, F_OK) != 0)
            rt_sleep_ms(10);
        h.t1 = rt_now_ns();
        CHECK_RC(tb_mutex_state(m), TB_LOCK_HELD);
        CHECK_RC(tb_mutex_unlock_sync(m), 0);
        rt_hold_log(argv[2], &h);
    }
    tb_mutex_free(m);
    tb_client_close(c);
    printf("DONE\n");
    return 0;
}
