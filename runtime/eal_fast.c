/*
 * Two steps of DPDK's EAL init replaced for a fast start (linked with
 * --wrap, only when DPDK is linked statically: cmake/dpdk.cmake).
 *
 *   get_tsc_freq: the EAL asks the CPU for the TSC frequency (CPUID leaf
 *   0x15, or MSR_PLATFORM_INFO through /dev/cpu/N/msr, Intel only) and
 *   otherwise measures it by sleeping 100 ms against CLOCK_MONOTONIC_RAW:
 *   on AMD and in most VMs that sleep is half of a process's start-up.
 *   Here the same measurement takes 2 ms, spinning on both clocks. The
 *   error (a clock read, some 50 ns, over 2 ms: 3e-5) is far below what the
 *   EAL needs (its own estimate is rounded to 10 MHz); the stack's timers
 *   run on clock_gettime, not on the TSC.
 *
 *   eal_cpu_socket_id, eal_cpu_detected: for each of RTE_MAX_LCORE (128)
 *   lcores the EAL looks for /sys/devices/system/cpu/cpuL/topology/core_id
 *   and for /sys/devices/system/node/nodeN/cpuL in each of
 *   RTE_MAX_NUMA_NODES (32) nodes: some 5000 failing sysfs lookups on a
 *   2-CPU machine. CPUs that are not present
 *   (/sys/devices/system/cpu/present) are answered at once, as the EAL's
 *   own scan would answer them (not detected, node 0).
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <rte_cycles.h>

#include "rt_int.h"

#ifndef ACCEL_DPDK_STATIC
const bool rt__eal_fast = false;
#else
/* The link asks for it (-Wl,--undefined, cmake/dpdk.cmake), so the linker
 * takes this file, with the wrappers the static EAL refers to, from the
 * runtime's archive. */
const bool rt__eal_fast = true;

#define CAL_NS 2000000ull

uint64_t __real_get_tsc_freq(void);
uint64_t __wrap_get_tsc_freq(void);
unsigned __real_eal_cpu_socket_id(unsigned lcore_id);
unsigned __wrap_eal_cpu_socket_id(unsigned lcore_id);
int __real_eal_cpu_detected(unsigned lcore_id);
int __wrap_eal_cpu_detected(unsigned lcore_id);

static uint64_t
raw_ns(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC_RAW, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

uint64_t
__wrap_get_tsc_freq(void)
{
    uint64_t ns0, ns1, c0, c1;

    ns0 = raw_ns();
    c0 = rte_rdtsc_precise();
    do
        ns1 = raw_ns();
    while (ns1 - ns0 < CAL_NS);
    c1 = rte_rdtsc_precise();
    ns1 = raw_ns();
    if (c1 <= c0 || ns1 <= ns0)
        return __real_get_tsc_freq();
    /* cycles per second, to the nearest kHz */
    return (uint64_t)((double)(c1 - c0) * 1e6 / (double)(ns1 - ns0) + 0.5) *
           1000ull;
}

/* The highest present CPU (from "0-1", "0,2-5"...), -1 if unknown. */
static int
last_present_cpu(void)
{
    char buf[256];
    FILE *f = fopen("/sys/devices/system/cpu/present", "re");
    int last = -1;

    if (f == NULL)
        return -1;
    if (fgets(buf, sizeof(buf), f) != NULL) {
        for (char *p = buf; *p != '\0' && *p != '\n';) {
            char *end;
            long v = strtol(p, &end, 10);

            if (end == p)
                break;
            if (v > last)
                last = (int)v;
            p = *end == '-' || *end == ',' ? end + 1 : end;
        }
    }
    fclose(f);
    return last;
}

static bool
absent(unsigned lcore_id)
{
    static int last = -2;

    if (last == -2)
        last = last_present_cpu();
    return last >= 0 && lcore_id > (unsigned)last;
}

unsigned
__wrap_eal_cpu_socket_id(unsigned lcore_id)
{
    return absent(lcore_id) ? 0 : __real_eal_cpu_socket_id(lcore_id);
}

int
__wrap_eal_cpu_detected(unsigned lcore_id)
{
    return absent(lcore_id) ? 0 : __real_eal_cpu_detected(lcore_id);
}

#endif
