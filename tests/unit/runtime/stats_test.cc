// Counters: the "name value" writer and the exit dump.
#include <gtest/gtest.h>

#include "rt_test_util.h"

extern "C" {
#include "log.h"
#include "rt.h"
#include "stats.h"
}

TEST(Stats, WriteEveryCounter)
{
    memset(&rt_stats, 0, sizeof(rt_stats));
    RT_STAT_ADD(rx_frames, 5);
    RT_STAT_INC(tx_drop_full);
    RT_STAT_ADD(rx_bytes, 12345678901ull);
    TempPath t;
    int fd = open(t.path().c_str(), O_WRONLY | O_TRUNC);
    ASSERT_GE(fd, 0);
    errno = EBADF;
    rt_stats_write(fd);
    EXPECT_EQ(errno, EBADF);
    close(fd);
    std::string s = slurp(t.path());
    EXPECT_NE(s.find("rx_frames 5\n"), std::string::npos) << s;
    EXPECT_NE(s.find("tx_drop_full 1\n"), std::string::npos);
    EXPECT_NE(s.find("rx_bytes 12345678901\n"), std::string::npos);
    EXPECT_NE(s.find("tx_frames 0\n"), std::string::npos);
    size_t lines = (size_t)std::count(s.begin(), s.end(), '\n');
    size_t n = 0;
#define RT_STAT(field, doc)                                                    \
    n++;                                                                       \
    EXPECT_NE(s.find(#field " "), std::string::npos) << #field;
#include "stats.def"
#undef RT_STAT
    EXPECT_EQ(lines, n);
    memset(&rt_stats, 0, sizeof(rt_stats));
}

TEST(Stats, DumpSaysWhetherTheDataPathRan)
{
    TempPath t;
    ASSERT_EQ(rt_log_set_file(t.path().c_str()), 0);
    bool saved = rt_cfg.stats;

    rt_cfg.stats = false;
    rt_stats_dump();
    EXPECT_EQ(slurp(t.path()), "");

    rt_cfg.stats = true;
    memset(&rt_stats, 0, sizeof(rt_stats));
    rt_stats_set_datapath(nullptr);
    rt_stats_dump();
    std::string s = slurp(t.path());
    std::string pre = "accel[" + std::to_string(getpid()) + "] stats: ";
    EXPECT_NE(s.find(pre + "data path was not started"), std::string::npos)
        << s;
    EXPECT_NE(s.find(pre + "rx_frames"), std::string::npos);

    rt_stats_set_datapath("af_xdp on veth-a");
    RT_STAT_ADD(tcp_accept, 3);
    rt_stats_dump();
    s = slurp(t.path());
    EXPECT_NE(s.find(pre + "data path: af_xdp on veth-a\n"), std::string::npos)
        << s;
    EXPECT_NE(s.find("tcp_accept"), std::string::npos);
    EXPECT_TRUE(s.find(" 3\n") != std::string::npos);

    rt_cfg.stats = saved;
    rt_stats_set_datapath(nullptr);
    memset(&rt_stats, 0, sizeof(rt_stats));
    rt_log_set_file(nullptr);
}
