/* The clocks the benchmark tools share: monotonic nanoseconds for every
 * interval measured, the wall clock where a time must be compared with
 * another process's (bash's EPOCHREALTIME), and a sleep that survives
 * signals. */
#include "clock.h"

#include <errno.h>
#include <time.h>

uint64_t bn_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t bn_wall_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000ull + (uint64_t)ts.tv_nsec / 1000;
}

double bn_ms_since(uint64_t t0_ns, uint64_t t1_ns)
{
    return ((double)t1_ns - (double)t0_ns) / 1e6;
}

void bn_sleep_ms(double ms)
{
    struct timespec ts = {
        (time_t)(ms / 1000),
        (long)((ms - (double)(time_t)(ms / 1000) * 1000) * 1e6)};

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}
