// The wait options: ACCEL_POLL_USEC_* (a number or "inherit", which means
// ACCEL_POLL_USEC), their mapping to the kinds of blocking call
// (waitkind.h), and the progress thread's ACCEL_PROGRESS_SPIN/_CPU.
#include <gtest/gtest.h>

#include "base_test_util.h"

extern "C" {
#include "waitkind.h"
}

namespace
{

const char *const kKindOpt[RT_WAIT_NKINDS] = {
    "ACCEL_POLL_USEC_RECV",   "ACCEL_POLL_USEC_SEND",
    "ACCEL_POLL_USEC_ACCEPT", "ACCEL_POLL_USEC_CONNECT",
    "ACCEL_POLL_USEC_EPOLL",  "ACCEL_POLL_USEC_POLL",
    "ACCEL_POLL_USEC_SELECT"};

} // namespace

TEST(CfgWait, DefaultsInheritPollUsec)
{
    Parsed p(Env{"ACCEL_POLL_USEC=70"});
    ASSERT_EQ(p.rc, 0) << p.err;
    EXPECT_EQ(p.cfg.poll_usec_recv, BASE_CFG_WORD);
    EXPECT_EQ(p.cfg.poll_usec_select, BASE_CFG_WORD);
    for (int k = 0; k < RT_WAIT_NKINDS; k++)
        EXPECT_EQ(rt_wait_spin_usec(&p.cfg, (enum rt_wait_kind)k), 70u)
            << kKindOpt[k];
    EXPECT_FALSE(p.cfg.progress_spin);
    EXPECT_EQ(p.cfg.progress_cpu, BASE_CFG_WORD);
}

// Each option drives its own kind and no other.
TEST(CfgWait, EachKindHasItsOwnOption)
{
    for (int k = 0; k < RT_WAIT_NKINDS; k++) {
        Parsed p(Env{"ACCEL_POLL_USEC=100000",
                     std::string(kKindOpt[k]) + "=" + std::to_string(k + 1)});
        ASSERT_EQ(p.rc, 0) << p.err;
        for (int j = 0; j < RT_WAIT_NKINDS; j++)
            EXPECT_EQ(rt_wait_spin_usec(&p.cfg, (enum rt_wait_kind)j),
                      j == k ? (uint32_t)(k + 1) : 100000u)
                << kKindOpt[k] << " set, kind " << kKindOpt[j];
    }
}

TEST(CfgWait, ZeroOverridesAndInheritWordParses)
{
    Parsed p(Env{"ACCEL_POLL_USEC=100000", "ACCEL_POLL_USEC_RECV=0",
                 "ACCEL_POLL_USEC_SEND=INHERIT",
                 "ACCEL_POLL_USEC_EPOLL=inherit",
                 "ACCEL_POLL_USEC_POLL=10000000"});
    ASSERT_EQ(p.rc, 0) << p.err;
    EXPECT_EQ(rt_wait_spin_usec(&p.cfg, RT_WAIT_RECV), 0u);
    EXPECT_EQ(rt_wait_spin_usec(&p.cfg, RT_WAIT_SEND), 100000u);
    EXPECT_EQ(rt_wait_spin_usec(&p.cfg, RT_WAIT_EPOLL), 100000u);
    EXPECT_EQ(rt_wait_spin_usec(&p.cfg, RT_WAIT_POLL), 10000000u);
    EXPECT_TRUE(p.warnings.empty());
}

TEST(CfgWait, BadValuesNameTheWord)
{
    Parsed p(Env{"ACCEL_POLL_USEC_RECV=10000001"});
    EXPECT_EQ(p.rc, -EINVAL);
    EXPECT_EQ(p.err, "ACCEL_POLL_USEC_RECV=10000001: out of range; set "
                     "ACCEL_POLL_USEC_RECV to a number from 0 to 10000000, "
                     "or to inherit");
    Parsed q(Env{"ACCEL_POLL_USEC_ACCEPT=inherits"});
    EXPECT_EQ(q.rc, -EINVAL);
    EXPECT_EQ(q.err, "ACCEL_POLL_USEC_ACCEPT=inherits: not a number; set "
                     "ACCEL_POLL_USEC_ACCEPT to a whole number from 0 to "
                     "10000000, or to inherit");
    Parsed r(Env{"ACCEL_POLL_USEC_SELECT="});
    EXPECT_EQ(r.rc, -EINVAL);
    // The word of one option is not a word of another.
    Parsed s(Env{"ACCEL_PROGRESS_CPU=inherit"});
    EXPECT_EQ(s.rc, -EINVAL);
    Parsed t(Env{"ACCEL_POLL_USEC_RECV=none"});
    EXPECT_EQ(t.rc, -EINVAL);
}

TEST(CfgWait, ProgressSpinAndCpu)
{
    Parsed p(Env{"ACCEL_PROGRESS_SPIN=on", "ACCEL_PROGRESS_CPU=1"});
    ASSERT_EQ(p.rc, 0) << p.err;
    EXPECT_TRUE(p.cfg.progress_spin);
    EXPECT_EQ(p.cfg.progress_cpu, 1u);
    Parsed q(Env{"ACCEL_PROGRESS_CPU=none"});
    ASSERT_EQ(q.rc, 0) << q.err;
    EXPECT_EQ(q.cfg.progress_cpu, BASE_CFG_WORD);
    Parsed r(Env{"ACCEL_PROGRESS_CPU=1024"});
    EXPECT_EQ(r.rc, -EINVAL);
    EXPECT_EQ(r.err, "ACCEL_PROGRESS_CPU=1024: out of range; set "
                     "ACCEL_PROGRESS_CPU to a number from 0 to 1023, or to "
                     "none");
}

TEST(CfgWait, ListedAndWrittenWithTheWord)
{
    TempPath t;
    int fd = open(t.path().c_str(), O_WRONLY | O_TRUNC);
    ASSERT_GE(fd, 0);
    base_cfg_list_options(fd);
    close(fd);
    std::string out = slurp(t.path());
    EXPECT_NE(out.find("ACCEL_POLL_USEC_RECV (number 0..10000000 or inherit, "
                       "default inherit)"),
              std::string::npos)
        << out;
    EXPECT_NE(out.find("ACCEL_PROGRESS_CPU (number 0..1023 or none, default "
                       "none)"),
              std::string::npos);

    Parsed p(Env{"ACCEL_POLL_USEC_RECV=0", "ACCEL_POLL_USEC_SEND=5"});
    ASSERT_EQ(p.rc, 0) << p.err;
    TempPath e;
    fd = open(e.path().c_str(), O_WRONLY | O_TRUNC);
    ASSERT_GE(fd, 0);
    base_cfg_write_effective(fd, &p.cfg);
    close(fd);
    out = slurp(e.path());
    EXPECT_NE(out.find("\nACCEL_POLL_USEC_RECV=0\n"), std::string::npos);
    EXPECT_NE(out.find("\nACCEL_POLL_USEC_SEND=5\n"), std::string::npos);
    EXPECT_NE(out.find("\nACCEL_POLL_USEC_ACCEPT=inherit\n"),
              std::string::npos);
    EXPECT_NE(out.find("\nACCEL_PROGRESS_CPU=none\n"), std::string::npos);
}
