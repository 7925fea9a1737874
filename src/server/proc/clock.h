/* The server's clock (proc/clock.c). */
#ifndef TBD_CLOCK_H
#define TBD_CLOCK_H

#include <stdint.h>
#include <uv.h>

struct tbd;

/* Time as the server reads it, in one place (proc/clock.c): `now_ms`,
 * monotonic milliseconds (session deadlines, ticks, latencies, rates of
 * log lines); `wall_ms`, milliseconds since the epoch (the time a txn
 * carries, which TTLs count from).  tumblerd runs on tbd_clock_system():
 * the loop's uv_now and gettimeofday; a test gives its own to drive
 * sessions on virtual time. */
struct tbd_clock {
    uint64_t (*now_ms)(void *data);
    int64_t (*wall_ms)(void *data);
    void *data;
    /* now_ms reads again from here on (the loop's cached time brought up
     * to date); NULL: it always does. */
    void (*refresh)(void *data);
};

/* proc/clock.c: the default clock; reads of s->clock (monotonic, and the
 * time a txn carries); and the system's wall clock itself, which what is
 * only shown (four-letter words) reads directly. */
struct tbd_clock tbd_clock_system(uv_loop_t *loop);
uint64_t tbd_now_ms(const struct tbd *s);
/* After work that may have held the loop for long (a log replayed, a
 * snapshot installed): tbd_now_ms reads the time now, not the loop's. */
void tbd_clock_refresh(struct tbd *s);
int64_t tbd_txn_time(const struct tbd *s);
int64_t tbd_wall_ms(void);
/* Monotonic nanoseconds for what is only shown (the latency histograms),
 * read at most once per read callback and loop turn rather than per
 * request: a clock read costs about 45 ns here, a pipelined get 1 us.  The
 * requests one read brings share a start; the answers of one turn share an
 * end.  tbd_shown_ns_expire() makes the next call read the clock. */
uint64_t tbd_shown_ns(struct tbd *s);
void tbd_shown_ns_expire(struct tbd *s);

#endif
