// Logging's rate limit: BASE_LOG_BURST lines per call site (format,
// subsystem, level) per window, the count of the rest reported by the
// site's next line or at exit, sites independent, debug and BASE_LOG_ALL
// unlimited, errno kept. The limit's clock is a fake one
// (base_log_test_ratelimit): no sleeping.
#include <gtest/gtest.h>

#include <sstream>
#include <thread>

#include "base_test_util.h"

extern "C" {
#include "log.h"
}

namespace
{

uint64_t fake_ns;

uint64_t
fake_now()
{
    return fake_ns;
}

const uint64_t kSec = 1000000000ull;

class LogRateLimit : public ::testing::Test
{
  protected:
    void
    SetUp() override
    {
        saved_level_ = base_log_level;
        base_log_level = BASE_LOG_WARN;
        fake_ns = 1000 * kSec;
        base_log_test_ratelimit(fake_now);
        ASSERT_EQ(base_log_set_file(tmp_.path().c_str()), 0);
    }
    void
    TearDown() override
    {
        base_log_test_ratelimit(nullptr);
        base_log_set_file(nullptr);
        base_log_level = saved_level_;
    }
    std::vector<std::string>
    lines()
    {
        std::vector<std::string> v;
        std::istringstream in(slurp(tmp_.path()));
        std::string l;

        while (std::getline(in, l))
            v.push_back(l);
        return v;
    }
    std::string
    prefix(const char *level, const char *subsys)
    {
        std::string pid = std::to_string(getpid());
        return "accel[" + pid + ":" + pid + "] " + level + " " + subsys + ": ";
    }

    TempPath tmp_;
    int saved_level_;
};

TEST_F(LogRateLimit, TenLinesThenTheCountAfterTheWindow)
{
    ASSERT_EQ(BASE_LOG_BURST, 10);
    ASSERT_EQ(BASE_LOG_WINDOW_S, 5);
    for (int i = 0; i < 120; i++) { // one call site
        if (i == 100)
            fake_ns += 5 * kSec - 1000000; // 1 ms short: the same window
        if (i == 101)
            fake_ns += 1000000; // the window is over
        BASE_WARN("rl", "flood %d", i);
    }
    std::vector<std::string> v = lines();
    ASSERT_EQ(v.size(), 21u);
    for (int i = 0; i < 10; i++)
        EXPECT_EQ(v[i], prefix("warn", "rl") + "flood " + std::to_string(i));
    EXPECT_EQ(v[10], prefix("warn", "rl") +
                         "(91 similar lines suppressed: more than 10 in 5 s "
                         "from this call site; ACCEL_LOG_LEVEL=debug logs "
                         "every line)");
    // The new window: 10 lines again (101..110), 9 suppressed.
    for (int i = 0; i < 10; i++)
        EXPECT_EQ(v[11 + i],
                  prefix("warn", "rl") + "flood " + std::to_string(101 + i));
    base_log_flush_suppressed();
    v = lines();
    ASSERT_EQ(v.size(), 22u);
    EXPECT_NE(v[21].find("(9 similar lines suppressed, like \"flood %d\""),
              std::string::npos)
        << v[21];
}

TEST_F(LogRateLimit, CallSitesAreLimitedIndependently)
{
    for (int i = 0; i < 30; i++) {
        BASE_WARN("a", "site a %d", i);
        BASE_ERR("b", "site b %d", i);
        BASE_WARN("c", "same format %d", i); // another subsystem: apart
        BASE_WARN("d", "same format %d", i);
    }
    int a = 0, b = 0, c = 0, d = 0;
    for (const std::string &l : lines()) {
        a += l.find(" warn a: site a ") != std::string::npos;
        b += l.find(" error b: site b ") != std::string::npos;
        c += l.find(" warn c: same format ") != std::string::npos;
        d += l.find(" warn d: same format ") != std::string::npos;
    }
    EXPECT_EQ(a, 10);
    EXPECT_EQ(b, 10);
    EXPECT_EQ(c, 10);
    EXPECT_EQ(d, 10);
    EXPECT_EQ(lines().size(), 40u);
}

TEST_F(LogRateLimit, ErrnoPreserved)
{
    // Printed (0..9), suppressed (10, 11), the report and its line (12),
    // printed (13..21), suppressed (22..24).
    for (int i = 0; i < 25; i++) {
        if (i == 12)
            fake_ns += 5 * kSec;
        errno = EAGAIN + i;
        BASE_WARN("e", "line %d", i);
        EXPECT_EQ(errno, EAGAIN + i) << i;
    }
    errno = EINTR;
    base_log_flush_suppressed();
    EXPECT_EQ(errno, EINTR);
    EXPECT_EQ(lines().size(), 10u + 2u + 9u + 1u);
}

TEST_F(LogRateLimit, CountsLeftAreReportedAtExitOnce)
{
    for (int i = 0; i < 15; i++)
        BASE_WARN("x", "exit flood %d", i);
    base_log_flush_suppressed(); // what the destructor does at exit
    base_log_flush_suppressed(); // reported once
    std::vector<std::string> v = lines();
    ASSERT_EQ(v.size(), 11u);
    EXPECT_EQ(v[10], prefix("warn", "x") +
                         "(5 similar lines suppressed, like \"exit flood "
                         "%d\": more than 10 in 5 s from one call site; "
                         "ACCEL_LOG_LEVEL=debug logs every line)");
}

TEST_F(LogRateLimit, ForkChildLeavesTheReportToItsParent)
{
    for (int i = 0; i < 25; i++) {
        if (i == 15) // 5 suppressed: the parent's to report
            base_log_atfork_child();
        BASE_WARN("x", "around fork %d", i); // the child: a new window
    }
    base_log_flush_suppressed();
    std::vector<std::string> v = lines();
    ASSERT_EQ(v.size(), 20u);
    EXPECT_EQ(v[10], prefix("warn", "x") + "around fork 15");
}

TEST_F(LogRateLimit, DebugIsNotLimited)
{
    base_log_level = BASE_LOG_DEBUG;
    for (int i = 0; i < 30; i++) {
        BASE_DBG("d", "debug %d", i);
        BASE_WARN("d", "warn at debug level %d", i);
    }
    EXPECT_EQ(lines().size(), 60u);

    // Below debug, info lines are limited like warnings.
    base_log_level = BASE_LOG_INFO;
    for (int i = 0; i < 30; i++)
        BASE_INFO("d", "info %d", i);
    EXPECT_EQ(lines().size(), 70u);
    base_log_test_ratelimit(fake_now); // nothing to report at exit
}

TEST_F(LogRateLimit, LogAllIsNotLimited)
{
    for (int i = 0; i < 30; i++)
        BASE_LOG_ALL(BASE_LOG_WARN, "cfg", "setting %d", i);
    EXPECT_EQ(lines().size(), 30u);
}

TEST_F(LogRateLimit, ThreadsShareOneSiteExactly)
{
    const int kThreads = 4, kEach = 2000;
    std::vector<std::thread> t;

    for (int i = 0; i < kThreads; i++)
        t.emplace_back([] {
            for (int j = 0; j < kEach; j++)
                BASE_WARN("t", "thread line %d", j);
        });
    for (auto &th : t)
        th.join();
    base_log_flush_suppressed();
    std::vector<std::string> v = lines();
    ASSERT_EQ(v.size(), 11u);
    EXPECT_NE(v[10].find("(" + std::to_string(kThreads * kEach - 10) +
                         " similar lines suppressed, like \"thread line"),
              std::string::npos)
        << v[10];
}

} // namespace
