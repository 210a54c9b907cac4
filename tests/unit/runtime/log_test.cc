// Logging: level filtering, line format, errno preservation, log file.
#include <gtest/gtest.h>

#include "rt_test_util.h"

extern "C" {
#include "log.h"
}

class LogTest : public ::testing::Test
{
  protected:
    void
    SetUp() override
    {
        saved_level_ = rt_log_level;
        ASSERT_EQ(rt_log_set_file(tmp_.path().c_str()), 0);
    }
    void
    TearDown() override
    {
        rt_log_set_file(nullptr);
        rt_log_level = saved_level_;
    }
    std::string
    out()
    {
        return slurp(tmp_.path());
    }

    TempPath tmp_;
    int saved_level_;
};

TEST_F(LogTest, LineFormat)
{
    rt_log_level = RT_LOG_WARN;
    RT_WARN("cfg", "hello %d", 42);
    std::string s = out();
    // "accel[pid:tid] warn cfg: hello 42\n"; the test runs on the main
    // thread, so tid == pid.
    std::string pid = std::to_string(getpid());
    EXPECT_EQ(s, "accel[" + pid + ":" + pid + "] warn cfg: hello 42\n");
}

TEST_F(LogTest, LevelFiltering)
{
    rt_log_level = RT_LOG_WARN;
    RT_ERR("a", "e");
    RT_WARN("a", "w");
    RT_INFO("a", "i");
    RT_DBG("a", "d");
    std::string s = out();
    EXPECT_NE(s.find(" error a: e\n"), std::string::npos);
    EXPECT_NE(s.find(" warn a: w\n"), std::string::npos);
    EXPECT_EQ(s.find(" a: i"), std::string::npos);
    EXPECT_EQ(s.find(" a: d"), std::string::npos);

    rt_log_level = RT_LOG_DEBUG;
    RT_DBG("a", "d2");
    RT_LOG(RT_LOG_NOTICE, "a", "n");
    s = out();
    EXPECT_NE(s.find(" debug a: d2\n"), std::string::npos);
    EXPECT_NE(s.find(" notice a: n\n"), std::string::npos);

    rt_log_level = RT_LOG_ERROR;
    RT_WARN("a", "hidden");
    EXPECT_EQ(out().find("hidden"), std::string::npos);
}

TEST_F(LogTest, ErrnoPreserved)
{
    rt_log_level = RT_LOG_DEBUG;
    errno = EAGAIN;
    RT_ERR("x", "some %s", "text");
    EXPECT_EQ(errno, EAGAIN);
    errno = 0;
    RT_DBG("x", "more");
    EXPECT_EQ(errno, 0);
    // Even when the write itself fails (bad fd), errno is kept.
    rt_log_set_file(nullptr);
    int saved = dup(2);
    close(2);
    errno = ENOENT;
    RT_ERR("x", "to a closed fd");
    EXPECT_EQ(errno, ENOENT);
    dup2(saved, 2);
    close(saved);
}

TEST_F(LogTest, LongLinesTruncatedWithNewline)
{
    rt_log_level = RT_LOG_WARN;
    std::string big(5000, 'z');
    RT_WARN("x", "%s", big.c_str());
    std::string s = out();
    ASSERT_FALSE(s.empty());
    EXPECT_LT(s.size(), 1100u);
    EXPECT_EQ(s.back(), '\n');
    EXPECT_EQ(std::count(s.begin(), s.end(), '\n'), 1);
}

TEST(Log, FileWithPidExpansionAndBadPath)
{
    std::string pattern = "/tmp/rt_unit_log_%p.txt";
    std::string real = "/tmp/rt_unit_log_" + std::to_string(getpid()) + ".txt";
    unlink(real.c_str());
    int saved_level = rt_log_level;
    rt_log_level = RT_LOG_WARN;
    ASSERT_EQ(rt_log_set_file(pattern.c_str()), 0);
    RT_WARN("f", "to file");
    rt_log_set_file(nullptr);
    EXPECT_NE(slurp(real).find("warn f: to file"), std::string::npos);
    unlink(real.c_str());

    errno = 0;
    EXPECT_EQ(rt_log_set_file("/nonexistent-dir/x.log"), -ENOENT);
    EXPECT_EQ(errno, 0);
    rt_log_level = saved_level;
}
