/* The server's clock (struct tbd_clock in clock.h): every read of time by
 * sessions, ticks, latencies and txns goes through s->clock, so a test can
 * run them on virtual time.  tumblerd installs tbd_clock_system(). */
#include <sys/time.h>

#include "server/server.h"

static uint64_t loop_now(void *data)
{
    /* The loop's cached time: what its timers fire by, so a tick and the
     * deadlines it compares agree. */
    return uv_now(data);
}

static int64_t system_wall(void *data)
{
    (void)data;
    return tbd_wall_ms();
}

static void loop_refresh(void *data)
{
    uv_update_time(data);
}

struct tbd_clock tbd_clock_system(uv_loop_t *loop)
{
    return (struct tbd_clock){loop_now, system_wall, loop, loop_refresh};
}

uint64_t tbd_now_ms(const struct tbd *s)
{
    return s->clock.now_ms(s->clock.data);
}

void tbd_clock_refresh(struct tbd *s)
{
    if (s->clock.refresh != NULL)
        s->clock.refresh(s->clock.data);
}

int64_t tbd_txn_time(const struct tbd *s)
{
    return s->clock.wall_ms(s->clock.data);
}

uint64_t tbd_shown_ns(struct tbd *s)
{
    if (!s->shown_ns_valid) {
        s->shown_ns = uv_hrtime();
        s->shown_ns_valid = 1;
    }
    return s->shown_ns;
}

void tbd_shown_ns_expire(struct tbd *s)
{
    s->shown_ns_valid = 0;
}

int64_t tbd_wall_ms(void)
{
    struct timeval tv;

    gettimeofday(&tv, NULL);
    return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}
