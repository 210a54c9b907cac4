// Logging: level filtering, line format, errno preservation, log file.
#include <gtest/gtest.h>

#include "base_test_util.h"

extern "C" {
#include "log.h"
}

class LogTest : public ::testing::Test
{
  protected:
    void
    SetUp() override
    {
        saved_level_ = base_log_level;
        ASSERT_EQ(base_log_set_file(tmp_.path().c_str()), 0);
    }
    void
    TearDown() override
    {
        base_log_set_file(nullptr);
        base_log_level = saved_level_;
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
    base_log_level = BASE_LOG_WARN;
    BASE_WARN("cfg", "hello %d", 42);
    std::string s = out();
    // "accel[pid:tid] warn cfg: hello 42\n"; the test runs on the main
    // thread, so tid == pid.
    std::string pid = std::to_string(getpid());
    EXPECT_EQ(s, "accel[" + pid + ":" + pid + "] warn cfg: hello 42\n");
}

TEST_F(LogTest, LevelFiltering)
{
    base_log_level = BASE_LOG_WARN;
    BASE_ERR("a", "e");
    BASE_WARN("a", "w");
    BASE_INFO("a", "i");
    BASE_DBG("a", "d");
    std::string s = out();
    EXPECT_NE(s.find(" error a: e\n"), std::string::npos);
    EXPECT_NE(s.find(" warn a: w\n"), std::string::npos);
    EXPECT_EQ(s.find(" a: i"), std::string::npos);
    EXPECT_EQ(s.find(" a: d"), std::string::npos);

    base_log_level = BASE_LOG_DEBUG;
    BASE_DBG("a", "d2");
    BASE_LOG(BASE_LOG_NOTICE, "a", "n");
    s = out();
    EXPECT_NE(s.find(" debug a: d2\n"), std::string::npos);
    EXPECT_NE(s.find(" notice a: n\n"), std::string::npos);

    base_log_level = BASE_LOG_ERROR;
    BASE_WARN("a", "hidden");
    EXPECT_EQ(out().find("hidden"), std::string::npos);
}

TEST_F(LogTest, ErrnoPreserved)
{
    base_log_level = BASE_LOG_DEBUG;
    errno = EAGAIN;
    BASE_ERR("x", "some %s", "text");
    EXPECT_EQ(errno, EAGAIN);
    errno = 0;
    BASE_DBG("x", "more");
    EXPECT_EQ(errno, 0);
    // Even when the write itself fails (bad fd), errno is kept.
    base_log_set_file(nullptr);
    int saved = dup(2);
    close(2);
    errno = ENOENT;
    BASE_ERR("x", "to a closed fd");
    EXPECT_EQ(errno, ENOENT);
    dup2(saved, 2);
    close(saved);
}

TEST_F(LogTest, LongLinesTruncatedWithNewline)
{
    base_log_level = BASE_LOG_WARN;
    std::string big(5000, 'z');
    BASE_WARN("x", "%s", big.c_str());
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
    int saved_level = base_log_level;
    base_log_level = BASE_LOG_WARN;
    ASSERT_EQ(base_log_set_file(pattern.c_str()), 0);
    BASE_WARN("f", "to file");
    base_log_set_file(nullptr);
    EXPECT_NE(slurp(real).find("warn f: to file"), std::string::npos);
    unlink(real.c_str());

    errno = 0;
    EXPECT_EQ(base_log_set_file("/nonexistent-dir/x.log"), -ENOENT);
    EXPECT_EQ(errno, 0);
    base_log_level = saved_level;
}
