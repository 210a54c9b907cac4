/*
 * The runtime's clock: CLOCK_MONOTONIC through clock_gettime, which the
 * vDSO serves without a system call on x86-64 (TSC clocksource).
 */
#include <time.h>

#include "rt.h"

uint64_t
rt_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
