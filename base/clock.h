/*
 * The clock every layer reads (clock.c): CLOCK_MONOTONIC in nanoseconds
 * without a syscall.
 */
#ifndef ACCEL_BASE_CLOCK_H
#define ACCEL_BASE_CLOCK_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Monotonic clock in nanoseconds, no syscall (vDSO/TSC); it keeps to
 *  CLOCK_MONOTONIC, so processes may compare their readings. */
uint64_t base_now_ns(void);
/** Nanoseconds from then to now, 0 if then is later: for a time another
 *  process or thread wrote, which may be later than a now read before. */
static inline uint64_t
base_ns_since(uint64_t now, uint64_t then)
{
    return now > then ? now - then : 0;
}
/** Milliseconds from *t to now, and *t = now: one lap of a stopwatch. */
static inline double
base_ms_lap(uint64_t *t)
{
    uint64_t now = base_now_ns();
    double ms = (double)base_ns_since(now, *t) / 1e6;

    *t = now;
    return ms;
}
/** In a fork child. */
void base_clock_atfork_child(void);
/** Tests: calibrate again, the rate found made wrong by ppm (the clock's
 *  resync must then bring it back to CLOCK_MONOTONIC). */
void base_clock_test_recalibrate(int64_t ppm);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_BASE_CLOCK_H */
