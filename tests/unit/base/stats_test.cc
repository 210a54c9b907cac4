// Counters: the "name value" writer and the exit dump.
#include <gtest/gtest.h>

#include "base_test_util.h"

extern "C" {
#include "log.h"
#include "stats.h"
}

TEST(Stats, WriteEveryCounter)
{
    memset(&base_stats, 0, sizeof(base_stats));
    BASE_STAT_ADD(rx_frames, 5);
    BASE_STAT_INC(tx_drop_full);
    BASE_STAT_ADD(rx_bytes, 12345678901ull);
    TempPath t;
    int fd = open(t.path().c_str(), O_WRONLY | O_TRUNC);
    ASSERT_GE(fd, 0);
    errno = EBADF;
    base_stats_write(fd);
    EXPECT_EQ(errno, EBADF);
    close(fd);
    std::string s = slurp(t.path());
    EXPECT_NE(s.find("rx_frames 5\n"), std::string::npos) << s;
    EXPECT_NE(s.find("tx_drop_full 1\n"), std::string::npos);
    EXPECT_NE(s.find("rx_bytes 12345678901\n"), std::string::npos);
    EXPECT_NE(s.find("tx_frames 0\n"), std::string::npos);
    size_t lines = (size_t)std::count(s.begin(), s.end(), '\n');
    size_t n = 0;
#define BASE_STAT(field, doc)                                                  \
    n++;                                                                       \
    EXPECT_NE(s.find(#field " "), std::string::npos) << #field;
#include "stats.def"
#undef BASE_STAT
    EXPECT_EQ(lines, n);
    memset(&base_stats, 0, sizeof(base_stats));
}

// ACCEL_STATS=1: a few lines, drops only when there were any, and where
// the rest is.
TEST(Stats, SummaryIsShort)
{
    TempPath t;
    ASSERT_EQ(base_log_set_file(t.path().c_str()), 0);
    uint32_t saved = base_cfg.stats;
    std::string pre = "accel[" + std::to_string(getpid()) + "] stats: ";

    base_cfg.stats = 1;
    memset(&base_stats, 0, sizeof(base_stats));
    base_stats_set_datapath("af_xdp on veth-a");
    BASE_STAT_ADD(rx_frames, 1200);
    BASE_STAT_ADD(rx_bytes, 123456);
    BASE_STAT_ADD(tcp_accept, 7);
    base_stats_dump();
    std::string s = slurp(t.path());
    EXPECT_NE(s.find(pre + "frames in 1200 (123.5 kB), out 0 (0 bytes)"),
              std::string::npos)
        << s;
    EXPECT_NE(s.find("7 accepted"), std::string::npos) << s;
    EXPECT_EQ(s.find("drops:"), std::string::npos) << s;
    EXPECT_EQ(s.find("tcp_accept"), std::string::npos) << s;
    EXPECT_LE(std::count(s.begin(), s.end(), '\n'), 5) << s;

    BASE_STAT_ADD(rx_drop_csum, 2);
    base_stats_dump();
    s = slurp(t.path());
    EXPECT_NE(s.find(pre + "drops: rx_drop_csum 2\n"), std::string::npos) << s;
    EXPECT_NE(s.find("ACCEL_STATS=2"), std::string::npos) << s;

    base_cfg.stats = saved;
    base_stats_set_datapath(nullptr);
    memset(&base_stats, 0, sizeof(base_stats));
    base_log_set_file(nullptr);
}

TEST(Stats, DumpSaysWhetherTheDataPathRan)
{
    TempPath t;
    ASSERT_EQ(base_log_set_file(t.path().c_str()), 0);
    uint32_t saved = base_cfg.stats;

    base_cfg.stats = 0;
    base_stats_dump();
    EXPECT_EQ(slurp(t.path()), "");

    base_cfg.stats = 2;
    memset(&base_stats, 0, sizeof(base_stats));
    base_stats_set_datapath(nullptr);
    base_stats_dump();
    std::string s = slurp(t.path());
    std::string pre = "accel[" + std::to_string(getpid()) + "] stats: ";
    EXPECT_NE(s.find(pre + "data path was not started"), std::string::npos)
        << s;
    EXPECT_NE(s.find(pre + "rx_frames"), std::string::npos);

    base_stats_set_datapath("af_xdp on veth-a");
    BASE_STAT_ADD(tcp_accept, 3);
    base_stats_dump();
    s = slurp(t.path());
    EXPECT_NE(s.find(pre + "data path: af_xdp on veth-a\n"), std::string::npos)
        << s;
    EXPECT_NE(s.find("tcp_accept"), std::string::npos);
    EXPECT_TRUE(s.find(" 3\n") != std::string::npos);

    base_cfg.stats = saved;
    base_stats_set_datapath(nullptr);
    memset(&base_stats, 0, sizeof(base_stats));
    base_log_set_file(nullptr);
}
