/*
 * The runtime's clock: CLOCK_MONOTONIC in nanoseconds, read from the TSC.
 *
 * The data path reads the clock several times per request (timers, spin
 * budgets, the progress thread's bookkeeping); through the vDSO that is
 * ~20 ns each and showed as 4 % of an nginx worker's time. When the
 * kernel itself keeps time with the TSC (clocksource "tsc": invariant and
 * synchronized across CPUs, which the kernel checked), the TSC is scaled
 * directly: the first calls use clock_gettime and, once 20 ms have
 * passed, derive the TSC's rate from the two readings (an error of a few
 * parts per million: nothing for TCP timers). Otherwise clock_gettime
 * stays. The scale is process-wide and read-only once set, so threads and
 * fork children share it.
 */
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "rt.h"

#define CALIBRATE_NS 20000000ull

enum { CK_UNKNOWN = 0, CK_STARTING, CK_CALIBRATING, CK_TSC, CK_SYSCALL };

static struct {
    uint64_t tsc0, ns0;
    uint64_t mult; /* ns per TSC tick, 32.32 fixed point */
} ck;
/* The calibration's start, written once before CK_CALIBRATING is
 * published (release) and read only after it is seen (acquire); ck is
 * written once, before CK_TSC. */
static uint64_t cal_tsc0, cal_ns0;
static _Atomic int ck_state;

static uint64_t
mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__)
static bool
kernel_uses_tsc(void)
{
    char buf[32];
    long fd, n;

    fd = syscall(SYS_openat, AT_FDCWD,
                 "/sys/devices/system/clocksource/clocksource0/"
                 "current_clocksource",
                 O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    n = syscall(SYS_read, (int)fd, buf, sizeof(buf) - 1);
    syscall(SYS_close, (int)fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    return strncmp(buf, "tsc", 3) == 0 && (buf[3] == '\n' || buf[3] == '\0');
}

/* Not yet scaled: clock_gettime, and calibrate once enough time passed. */
static uint64_t
slow_now(void)
{
    int st = atomic_load_explicit(&ck_state, memory_order_acquire);
    uint64_t ns = mono_ns(), tsc = __rdtsc();

    if (st == CK_UNKNOWN) {
        int want = CK_UNKNOWN;
        if (!kernel_uses_tsc()) {
            atomic_store(&ck_state, CK_SYSCALL);
            return ns;
        }
        if (atomic_compare_exchange_strong(&ck_state, &want, CK_STARTING)) {
            cal_tsc0 = tsc;
            cal_ns0 = ns;
            atomic_store_explicit(&ck_state, CK_CALIBRATING,
                                  memory_order_release);
        }
        return ns;
    }
    if (st == CK_CALIBRATING && ns - cal_ns0 >= CALIBRATE_NS &&
        tsc > cal_tsc0) {
        static atomic_flag busy = ATOMIC_FLAG_INIT;
        if (!atomic_flag_test_and_set(&busy)) {
            ck.mult = (uint64_t)((((unsigned __int128)(ns - cal_ns0)) << 32) /
                                 (tsc - cal_tsc0));
            ck.tsc0 = tsc;
            ck.ns0 = ns;
            atomic_store_explicit(&ck_state, CK_TSC, memory_order_release);
        }
    }
    return ns;
}

uint64_t
rt_now_ns(void)
{
    if (atomic_load_explicit(&ck_state, memory_order_acquire) == CK_TSC) {
        uint64_t d = __rdtsc() - ck.tsc0;
        return ck.ns0 + (uint64_t)(((unsigned __int128)d * ck.mult) >> 32);
    }
    if (atomic_load_explicit(&ck_state, memory_order_relaxed) == CK_SYSCALL)
        return mono_ns();
    return slow_now();
}
#else
uint64_t
rt_now_ns(void)
{
    return mono_ns();
}
#endif
