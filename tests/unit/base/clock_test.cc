// accel's clock (base/clock.c): TSC-scaled, kept to CLOCK_MONOTONIC.
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <time.h>

extern "C" {
#include "clock.h"
}

namespace
{

int64_t
mono_ns()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

// CLOCK_MONOTONIC minus base_now_ns(), read between two clock_gettime calls.
int64_t
offset_ns()
{
    int64_t a = mono_ns();
    int64_t r = (int64_t)base_now_ns();
    int64_t b = mono_ns();
    return a + (b - a) / 2 - r;
}

bool
kernel_clock_is_tsc()
{
    std::ifstream f(
        "/sys/devices/system/clocksource/clocksource0/current_clocksource");
    std::string s;
    f >> s;
    return s == "tsc";
}

void
sleep_ms(int ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, nullptr);
}

} // namespace

TEST(Clock, SinceIsZeroForALaterTime)
{
    EXPECT_EQ(base_ns_since(100, 40), 60u);
    EXPECT_EQ(base_ns_since(100, 100), 0u);
    EXPECT_EQ(base_ns_since(100, 101),
              0u); // written by another process after now was read
}

// A calibration 300 ppm off (10x a real 20 ms one's error) leaves the clock
// 0.3 ms off per second; the resync (every 0.5 s) must bring it back to
// CLOCK_MONOTONIC, which processes comparing times in the shared region
// rely on, without the clock ever going back.
TEST(Clock, KeepsToClockMonotonicAfterAWrongCalibration)
{
    if (!kernel_clock_is_tsc())
        GTEST_SKIP()
            << "the kernel's clocksource is not the TSC: base_now_ns is "
               "clock_gettime";
    base_clock_test_recalibrate(300);
    uint64_t prev = base_now_ns();
    int64_t start = mono_ns(), worst_early = 0;
    while (mono_ns() - start < 1400000000) {
        uint64_t v = base_now_ns();
        ASSERT_GE(v, prev) << "the clock went back";
        prev = v;
        int64_t t = mono_ns() - start;
        if (t > 300000000 &&
            t < 450000000) { // calibrated, before the first resync
            int64_t o = offset_ns();
            if (-o > worst_early)
                worst_early = -o;
        }
        sleep_ms(1);
    }
    // The wrong rate was used: ahead by ~0.1 ms before the first resync.
    EXPECT_GT(worst_early, 50000) << "the test's skew did not apply";
    // Two resyncs later the clock is back on CLOCK_MONOTONIC.
    int64_t o = offset_ns();
    EXPECT_LT(o < 0 ? -o : o, 20000)
        << "base_now_ns is " << -o << " ns ahead of CLOCK_MONOTONIC";
    base_clock_test_recalibrate(0);
}

// Readers in several threads during resyncs each see a clock that never
// goes back (a segment is swapped under them without a lock).
TEST(Clock, NeverGoesBackInAnyThreadAcrossResyncs)
{
    if (!kernel_clock_is_tsc())
        GTEST_SKIP()
            << "the kernel's clocksource is not the TSC: base_now_ns is "
               "clock_gettime";
    base_clock_test_recalibrate(-500);
    std::atomic<int> back{0};
    std::vector<std::thread> th;
    for (int k = 0; k < 4; k++)
        th.emplace_back([&back] {
            uint64_t prev = base_now_ns();
            int64_t start = mono_ns();
            while (mono_ns() - start < 1200000000) {
                uint64_t v = base_now_ns();
                if (v < prev)
                    back++;
                prev = v;
            }
        });
    for (auto &t : th)
        t.join();
    EXPECT_EQ(back.load(), 0);
    int64_t o = offset_ns();
    EXPECT_LT(o < 0 ? -o : o, 20000);
    base_clock_test_recalibrate(0);
}
