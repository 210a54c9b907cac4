/*
 * accel's clock: CLOCK_MONOTONIC in nanoseconds, read from the TSC.
 *
 * The data path reads the clock several times per request (timers, spin
 * budgets, the progress thread's bookkeeping); through the vDSO that is
 * ~20 ns each and showed as 4 % of an nginx worker's time. When the
 * kernel itself keeps time with the TSC (clocksource "tsc": invariant and
 * synchronized across CPUs, which the kernel checked), the TSC is scaled
 * directly: the first calls use clock_gettime and, once 20 ms have
 * passed, derive the TSC's rate from the two readings. Otherwise
 * clock_gettime stays.
 *
 * A rate measured over 20 ms is off by a few parts per million. That is
 * nothing for TCP timers, but processes compare times they keep in the
 * shared region (runtime/share*.c: when an application last polled the
 * port, when a pending connection was handed out), and processes that
 * calibrated on their own (a child forked during the calibration, an
 * exec'd program that joined) drift apart by that error times their
 * uptime: 0.1 s a day. So the clock keeps to CLOCK_MONOTONIC: every
 * RESYNC_NS it reads it again and starts a new *segment* that continues
 * from the current value (it never goes back) at the rate measured since
 * the calibration began, adjusted to make up the difference from
 * CLOCK_MONOTONIC over the next interval (by at most SLEW_MAX_PPM; a
 * clock behind by more than STEP_NS jumps forward). Every process's clock
 * stays within about a microsecond of CLOCK_MONOTONIC, and so of the
 * others'; each thread's readings never go back.
 *
 * Readers take no lock: two segments, each with a generation (odd while
 * its writer fills it), and the index of the current one; a reader that
 * saw either change retries. One thread at a time resyncs (a flag; the
 * fork child, where the thread holding it does not exist, clears it).
 */
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "clock.h"

#define CALIBRATE_NS 20000000ull
#define RESYNC_NS 500000000ull
#define SLEW_MAX_PPM 1000
#define STEP_NS 10000000ll
#define PAIR_MAX_NS 5000ull /* a wider TSC/clock_gettime pair is retried */

enum { CK_UNKNOWN = 0, CK_STARTING, CK_CALIBRATING, CK_TSC, CK_SYSCALL };

static _Atomic int ck_state;

static uint64_t
mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__)
struct ck_seg {
    _Atomic uint32_t gen; /* odd while written */
    _Atomic uint64_t tsc0, ns0;
    _Atomic uint64_t mult; /* ns per TSC tick, 32.32 fixed point */
};

static struct ck_seg seg[2];
static _Atomic int cur;
static _Atomic uint64_t resync_tsc; /* resync once the TSC passes this */
static atomic_flag resyncing = ATOMIC_FLAG_INIT;
static uint64_t cal_tsc0, cal_ns0;
static _Atomic int64_t test_skew_ppm;

static uint64_t
seg_at(uint64_t tsc0, uint64_t ns0, uint64_t mult, uint64_t tsc)
{
    uint64_t d = tsc > tsc0 ? tsc - tsc0 : 0;

    return ns0 + (uint64_t)(((unsigned __int128)d * mult) >> 32);
}

static uint64_t
ticks_of(uint64_t ns, uint64_t mult)
{
    return (uint64_t)(((unsigned __int128)ns << 32) / mult);
}

/* The new current segment; the next resync RESYNC_NS after tsc0. Only
 * the thread holding `resyncing` writes. */
static void
publish(uint64_t tsc0, uint64_t ns0, uint64_t mult)
{
    int j = 1 - atomic_load_explicit(&cur, memory_order_relaxed);
    struct ck_seg *s = &seg[j];
    uint32_t g = (atomic_load_explicit(&s->gen, memory_order_relaxed) | 1u) +
                 1u; /* the next even generation, whatever was left */

    atomic_store_explicit(&s->gen, g - 1u, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&s->tsc0, tsc0, memory_order_relaxed);
    atomic_store_explicit(&s->ns0, ns0, memory_order_relaxed);
    atomic_store_explicit(&s->mult, mult, memory_order_relaxed);
    atomic_store_explicit(&s->gen, g, memory_order_release);
    atomic_store_explicit(&cur, j, memory_order_release);
    atomic_store_explicit(&resync_tsc, tsc0 + ticks_of(RESYNC_NS, mult),
                          memory_order_relaxed);
}

/* The test hook's error, added to the calibration's rate only. */
static uint64_t
skewed(uint64_t mult)
{
    int64_t ppm = atomic_load_explicit(&test_skew_ppm, memory_order_relaxed);

    if (ppm == 0)
        return mult;
    return (uint64_t)((__int128)mult * (1000000 + ppm) / 1000000);
}

/* A TSC reading and CLOCK_MONOTONIC at (about) the same instant. */
static bool
read_pair(uint64_t *tsc, uint64_t *ns, uint64_t mult)
{
    uint64_t t1 = __rdtsc(), m = mono_ns(), t2 = __rdtsc();

    if (t2 < t1 || t2 - t1 > ticks_of(PAIR_MAX_NS, mult))
        return false; /* interrupted between the readings */
    *tsc = t1 + (t2 - t1) / 2;
    *ns = m;
    return true;
}

/* A new segment after the current one (tsc0, ns0, mult). */
static void
resync(uint64_t tsc0, uint64_t ns0, uint64_t mult)
{
    uint64_t tw, mw, here, base;
    int64_t off, lim = (int64_t)(RESYNC_NS / 1000000u * SLEW_MAX_PPM);

    if (!read_pair(&tw, &mw, mult) || tw <= cal_tsc0 || mw <= cal_ns0) {
        /* try again in a millisecond */
        atomic_store_explicit(&resync_tsc, __rdtsc() + ticks_of(1000000, mult),
                              memory_order_relaxed);
        return;
    }
    here = seg_at(tsc0, ns0, mult, tw);
    off = (int64_t)(mw - here);
    base =
        (uint64_t)(((unsigned __int128)(mw - cal_ns0) << 32) / (tw - cal_tsc0));
    if (off > STEP_NS) {
        publish(tw, mw, base);
        return;
    }
    if (off > lim)
        off = lim;
    if (off < -lim)
        off = -lim;
    /* make up `off` over the next RESYNC_NS */
    publish(tw, here,
            (uint64_t)((__int128)base +
                       (__int128)base * off / (__int128)RESYNC_NS));
}

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
        tsc > cal_tsc0 && !atomic_flag_test_and_set(&resyncing)) {
        uint64_t mult = (uint64_t)((((unsigned __int128)(ns - cal_ns0)) << 32) /
                                   (tsc - cal_tsc0));

        publish(tsc, ns, skewed(mult));
        atomic_store_explicit(&ck_state, CK_TSC, memory_order_release);
        atomic_flag_clear(&resyncing);
    }
    return ns;
}

static uint64_t
now_ns(void)
{
    if (atomic_load_explicit(&ck_state, memory_order_acquire) == CK_TSC) {
        for (;;) {
            int i = atomic_load_explicit(&cur, memory_order_acquire);
            struct ck_seg *s = &seg[i];
            uint32_t g = atomic_load_explicit(&s->gen, memory_order_acquire);
            uint64_t tsc0 =
                atomic_load_explicit(&s->tsc0, memory_order_relaxed);
            uint64_t ns0 = atomic_load_explicit(&s->ns0, memory_order_relaxed);
            uint64_t mult =
                atomic_load_explicit(&s->mult, memory_order_relaxed);
            uint64_t tsc = __rdtsc();

            atomic_thread_fence(memory_order_acquire);
            if ((g & 1u) != 0 ||
                atomic_load_explicit(&s->gen, memory_order_relaxed) != g ||
                atomic_load_explicit(&cur, memory_order_relaxed) != i)
                continue; /* a resync in between */
            if (tsc >=
                    atomic_load_explicit(&resync_tsc, memory_order_relaxed) &&
                !atomic_flag_test_and_set(&resyncing)) {
                resync(tsc0, ns0, mult);
                atomic_flag_clear(&resyncing);
            }
            return seg_at(tsc0, ns0, mult, tsc);
        }
    }
    if (atomic_load_explicit(&ck_state, memory_order_relaxed) == CK_SYSCALL)
        return mono_ns();
    return slow_now();
}

/* A reader that took the segment just before a resync replaced it may
 * return a time a few ns past what the new segment gives a moment later
 * (the new one starts at the resync's reading, at a slightly different
 * rate); the switch from clock_gettime to the TSC is the same. Each thread
 * keeps the last time it returned, so its clock never goes back. */
static __thread uint64_t last_ns;

uint64_t
base_now_ns(void)
{
    uint64_t v = now_ns();

    if (v < last_ns)
        return last_ns;
    last_ns = v;
    return v;
}

void
base_clock_atfork_child(void)
{
    atomic_flag_clear(&resyncing);
}

void
base_clock_test_recalibrate(int64_t ppm)
{
    atomic_store(&test_skew_ppm, ppm);
    atomic_store(&ck_state, CK_UNKNOWN);
}
#else
uint64_t
base_now_ns(void)
{
    return mono_ns();
}

void
base_clock_atfork_child(void)
{
}

void
base_clock_test_recalibrate(int64_t ppm)
{
    (void)ppm;
}
#endif
