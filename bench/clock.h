/* The clocks the benchmark tools share (clock.c): tbbench and tbfail read
 * the same monotonic clock, and tbfail also the wall clock and sleeps. */
#ifndef BN_CLOCK_H
#define BN_CLOCK_H

#include <stdint.h>

uint64_t bn_now_ns(void);  /* CLOCK_MONOTONIC */
uint64_t bn_wall_us(void); /* CLOCK_REALTIME, in microseconds */
double bn_ms_since(uint64_t t0_ns, uint64_t t1_ns); /* t1 - t0, in ms */
void bn_sleep_ms(double ms); /* all of it, across EINTR */

#endif
