/*
 * jitter: how often, and for how long, this machine takes the CPU away
 * from a thread that never blocks (timer ticks, hypervisor exits, other
 * tasks). It spins reading the monotonic clock for SECONDS and counts the
 * gaps between consecutive reads by length. bench/latency/run.sh runs one
 * on each benchmark CPU before the points: a spinning ping-pong cannot have
 * fewer slow round trips than the platform interrupts it.
 *
 * usage: jitter SECONDS      prints one JSON object on stdout
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t
now_ns(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

int
main(int argc, char **argv)
{
    /* Gap classes, lower bounds in us; the last is open-ended. */
    static const unsigned lo_us[] = {2, 5, 10, 20, 50, 100, 1000};
    enum { NCLS = sizeof(lo_us) / sizeof(lo_us[0]) };
    uint64_t count[NCLS] = {0}, lost_ns = 0, max_ns = 0, reads = 0;
    double secs = argc > 1 ? atof(argv[1]) : 0;
    uint64_t start, end, prev;

    if (secs <= 0 || secs > 600) {
        fprintf(stderr, "usage: jitter SECONDS (0 < SECONDS <= 600)\n");
        return 2;
    }
    start = prev = now_ns();
    end = start + (uint64_t)(secs * 1e9);
    for (;;) {
        uint64_t t = now_ns(), gap = t - prev;

        reads++;
        prev = t;
        if (gap >= lo_us[0] * 1000ull) {
            int c = NCLS - 1;
            while (c > 0 && gap < lo_us[c] * 1000ull)
                c--;
            count[c]++;
            lost_ns += gap;
            if (gap > max_ns)
                max_ns = gap;
        }
        if (t >= end)
            break;
    }
    printf("{\"seconds\": %.3f, \"reads\": %llu, \"lost_us\": %.1f, "
           "\"max_us\": %.1f, \"gaps\": [",
           (double)(prev - start) / 1e9, (unsigned long long)reads,
           (double)lost_ns / 1e3, (double)max_ns / 1e3);
    for (int c = 0; c < NCLS; c++)
        printf("%s{\"from_us\": %u, \"count\": %llu}", c ? ", " : "", lo_us[c],
               (unsigned long long)count[c]);
    printf("]}\n");
    return 0;
}
