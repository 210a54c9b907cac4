// Config table and parser: defaults, every option type, ranges, messages
// that name the variable and the fix, unknown-name warnings, listing.
#include <gtest/gtest.h>

#include <arpa/inet.h>

#include "base_test_util.h"

TEST(Cfg, DefaultsFromTable)
{
    Parsed p(Env{});
    ASSERT_EQ(p.rc, 0);
    EXPECT_EQ(p.err, "");
    EXPECT_EQ(p.cfg.mtu, 1500u);
    EXPECT_EQ(p.cfg.mem_mb, 256u);
    EXPECT_EQ(p.cfg.mbufs, 16383u);
    EXPECT_EQ(p.cfg.burst, 32u);
    EXPECT_EQ(p.cfg.poll_usec, 0u);
    EXPECT_EQ(p.cfg.progress_usec, 10000u);
    EXPECT_TRUE(p.cfg.tcp);
    EXPECT_TRUE(p.cfg.udp);
    EXPECT_FALSE(p.cfg.stats);
    EXPECT_EQ(p.cfg.log_level, 1); // warn
    EXPECT_EQ(p.cfg.hugepages, BASE_HUGE_AUTO);
    EXPECT_EQ(p.cfg.driver, BASE_DRIVER_AUTO);
    ASSERT_NE(p.cfg.iface, nullptr);
    EXPECT_STREQ(p.cfg.iface, "");
    EXPECT_STREQ(p.cfg.ip, "");
    EXPECT_EQ(p.cfg.ip_addr, 0u);
    EXPECT_FALSE(p.cfg.mac_set);
    EXPECT_TRUE(p.warnings.empty());
}

TEST(Cfg, NullEnvGivesDefaults)
{
    struct base_cfg c;
    char err[128];
    ASSERT_EQ(base_cfg_parse(nullptr, &c, err, sizeof(err), nullptr), 0);
    EXPECT_EQ(c.mtu, 1500u);
    base_cfg_free(&c);
}

TEST(Cfg, U32InRange)
{
    Parsed p(Env{"ACCEL_MTU=9000", "ACCEL_POLL_USEC=0", "ACCEL_BURST=1"});
    ASSERT_EQ(p.rc, 0) << p.err;
    EXPECT_EQ(p.cfg.mtu, 9000u);
    EXPECT_EQ(p.cfg.poll_usec, 0u);
    EXPECT_EQ(p.cfg.burst, 1u);
}

TEST(Cfg, U32OutOfRangeNamesVariableAndRange)
{
    Parsed p(Env{"ACCEL_MTU=9001"});
    EXPECT_EQ(p.rc, -EINVAL);
    EXPECT_EQ(p.err, "ACCEL_MTU=9001: out of range; set ACCEL_MTU to a number "
                     "from 576 to 9000");
    Parsed q(Env{"ACCEL_MTU=575"});
    EXPECT_EQ(q.rc, -EINVAL);
    EXPECT_NE(q.err.find("ACCEL_MTU=575"), std::string::npos);
}

TEST(Cfg, U32RejectsNonNumbers)
{
    for (const char *bad : {"", "abc", "-1", "+5", "12x", " 12", "0x10",
                            "4294967296", "99999999999999999999"}) {
        Parsed p(Env{std::string("ACCEL_BURST=") + bad});
        EXPECT_EQ(p.rc, -EINVAL) << bad;
        EXPECT_EQ(p.err.rfind(std::string("ACCEL_BURST=") + bad + ":", 0), 0u)
            << p.err;
        EXPECT_NE(p.err.find("set ACCEL_BURST to"), std::string::npos);
    }
}

TEST(Cfg, BoolSpellings)
{
    for (const char *t : {"1", "yes", "on", "true", "TRUE", "Yes"}) {
        Parsed p(Env{std::string("ACCEL_PROGRESS_SPIN=") + t});
        ASSERT_EQ(p.rc, 0) << t;
        EXPECT_TRUE(p.cfg.progress_spin) << t;
    }
    for (const char *f : {"0", "no", "off", "false", "OFF"}) {
        Parsed p(Env{std::string("ACCEL_TCP=") + f});
        ASSERT_EQ(p.rc, 0) << f;
        EXPECT_FALSE(p.cfg.tcp) << f;
    }
}

TEST(Cfg, BoolBadValue)
{
    Parsed p(Env{"ACCEL_PROGRESS_SPIN=maybe"});
    EXPECT_EQ(p.rc, -EINVAL);
    EXPECT_EQ(p.err.rfind("ACCEL_PROGRESS_SPIN=maybe: not a boolean; set "
                          "ACCEL_PROGRESS_SPIN=1",
                          0),
              0u)
        << p.err;
    Parsed q(Env{"ACCEL_PROGRESS_SPIN="});
    EXPECT_EQ(q.rc, -EINVAL);
}

TEST(Cfg, EnumWords)
{
    Parsed p(Env{"ACCEL_HUGEPAGES=off", "ACCEL_DRIVER=af_packet",
                 "ACCEL_LOG_LEVEL=Debug"});
    ASSERT_EQ(p.rc, 0) << p.err;
    EXPECT_EQ(p.cfg.hugepages, BASE_HUGE_OFF);
    EXPECT_EQ(p.cfg.driver, BASE_DRIVER_AF_PACKET);
    EXPECT_EQ(p.cfg.log_level, 4);
    EXPECT_STREQ(base_cfg_enum_word("ACCEL_DRIVER", p.cfg.driver), "af_packet");
    EXPECT_STREQ(base_cfg_enum_word("ACCEL_HUGEPAGES", 0), "auto");
    EXPECT_STREQ(base_cfg_enum_word("ACCEL_HUGEPAGES", 7), "?");
    EXPECT_STREQ(base_cfg_enum_word("ACCEL_MTU", 0), "?");
}

TEST(Cfg, EnumBadValueListsChoices)
{
    Parsed p(Env{"ACCEL_HUGEPAGES=sometimes"});
    EXPECT_EQ(p.rc, -EINVAL);
    EXPECT_EQ(p.err, "ACCEL_HUGEPAGES=sometimes: not a valid choice; set "
                     "ACCEL_HUGEPAGES to one of auto|on|off");
    Parsed q(Env{"ACCEL_DRIVER=af_"}); // a prefix of a word is not a word
    EXPECT_EQ(q.rc, -EINVAL);
}

TEST(Cfg, StrIsCopied)
{
    std::string v = "ACCEL_IFACE=veth-a";
    struct base_cfg c;
    char *envp[] = {&v[0], nullptr};
    ASSERT_EQ(base_cfg_parse(envp, &c, nullptr, 0, nullptr), 0);
    v[12] = 'X';
    EXPECT_STREQ(c.iface, "veth-a");
    base_cfg_free(&c);
    EXPECT_EQ(c.iface, nullptr);
    base_cfg_free(&c); // safe twice
}

TEST(Cfg, StrTooLong)
{
    Parsed p(Env{"ACCEL_EAL_ARGS=" + std::string(BASE_CFG_STR_MAX, 'x')});
    EXPECT_EQ(p.rc, -EINVAL);
    EXPECT_EQ(p.err.rfind("ACCEL_EAL_ARGS: value too long", 0), 0u) << p.err;
    Parsed q(Env{"ACCEL_EAL_ARGS=" + std::string(BASE_CFG_STR_MAX - 1, 'x')});
    EXPECT_EQ(q.rc, 0);
}

TEST(Cfg, FirstDefinitionWins)
{
    Parsed p(Env{"ACCEL_MTU=1400", "ACCEL_MTU=bogus"});
    ASSERT_EQ(p.rc, 0) << p.err;
    EXPECT_EQ(p.cfg.mtu, 1400u);
}

TEST(Cfg, OtherVariablesIgnored)
{
    Parsed p(Env{"PATH=/bin", "ACCEL", "ACCELX=1", "accel_mtu=1", "HOME=/"});
    ASSERT_EQ(p.rc, 0);
    EXPECT_TRUE(p.warnings.empty());
}

TEST(Cfg, UnknownNameWarnsWithSuggestion)
{
    Parsed p(Env{"ACCEL_POLL_USECS=5", "ACCEL_IFCAE=x"});
    ASSERT_EQ(p.rc, 0);
    ASSERT_EQ(p.warnings.size(), 2u);
    EXPECT_EQ(p.warnings[0],
              "unknown variable ACCEL_POLL_USECS ignored; did you mean "
              "ACCEL_POLL_USEC?");
    EXPECT_NE(p.warnings[1].find("did you mean ACCEL_IFACE?"),
              std::string::npos);
    EXPECT_EQ(p.cfg.poll_usec, 0u);
}

TEST(Cfg, UnknownNameWithoutCloseMatch)
{
    Parsed p(Env{"ACCEL_COMPLETELY_DIFFERENT=1"});
    ASSERT_EQ(p.rc, 0);
    ASSERT_EQ(p.warnings.size(), 1u);
    EXPECT_EQ(p.warnings[0].find("did you mean"), std::string::npos);
    EXPECT_NE(p.warnings[0].find("ACCEL_COMPLETELY_DIFFERENT"),
              std::string::npos);
}

TEST(Cfg, UnknownNamesWarnEvenAfterAnError)
{
    Parsed p(Env{"ACCEL_MTU=1", "ACCEL_MTUU=2"});
    EXPECT_EQ(p.rc, -EINVAL);
    EXPECT_NE(p.err.find("ACCEL_MTU=1"), std::string::npos);
    EXPECT_EQ(p.warnings.size(), 1u);
}

TEST(Cfg, ListOptionsHasEveryOption)
{
    TempPath t;
    int fd = open(t.path().c_str(), O_WRONLY | O_TRUNC);
    ASSERT_GE(fd, 0);
    base_cfg_list_options(fd);
    close(fd);
    std::string out = slurp(t.path());
#define BASE_OPT(NAME, f, ty, d, lo, hi, doc)                                  \
    EXPECT_NE(out.find(#NAME " ("), std::string::npos) << #NAME;               \
    EXPECT_NE(out.find(doc), std::string::npos) << #NAME;
#include "cfg_options.def"
#undef BASE_OPT
    EXPECT_NE(out.find("ACCEL_MTU (number 576..9000, default 1500)"),
              std::string::npos);
    EXPECT_NE(out.find("ACCEL_HUGEPAGES (choice auto|on|off, default auto)"),
              std::string::npos);
}

TEST(Cfg, EffectiveConfigRoundTrips)
{
    Parsed p(Env{"ACCEL_IFACE=veth-a", "ACCEL_IP=10.200.0.2/24",
                 "ACCEL_MTU=1400", "ACCEL_STATS=2", "ACCEL_DRIVER=af_xdp",
                 "ACCEL_MAC=02:00:00:00:00:02"});
    ASSERT_EQ(p.rc, 0) << p.err;
    TempPath t;
    int fd = open(t.path().c_str(), O_WRONLY | O_TRUNC);
    ASSERT_GE(fd, 0);
    base_cfg_write_effective(fd, &p.cfg);
    close(fd);
    std::string out = slurp(t.path());
    EXPECT_NE(out.find("ACCEL_MTU=1400\n"), std::string::npos);
    EXPECT_NE(out.find("ACCEL_STATS=2\n"), std::string::npos);
    EXPECT_NE(out.find("ACCEL_DRIVER=af_xdp\n"), std::string::npos);
    EXPECT_NE(out.find("ACCEL_GATEWAY=\n"), std::string::npos);

    // Feeding the lines back gives the same configuration.
    std::vector<std::string> lines;
    size_t pos = 0, nl;
    while ((nl = out.find('\n', pos)) != std::string::npos) {
        lines.push_back(out.substr(pos, nl - pos));
        pos = nl + 1;
    }
    std::vector<char *> envp;
    for (auto &l : lines)
        envp.push_back(&l[0]);
    envp.push_back(nullptr);
    struct base_cfg c2;
    ASSERT_EQ(base_cfg_parse(envp.data(), &c2, nullptr, 0, nullptr), 0);
    EXPECT_EQ(c2.mtu, 1400u);
    EXPECT_TRUE(c2.stats);
    EXPECT_EQ(c2.driver, BASE_DRIVER_AF_XDP);
    EXPECT_STREQ(c2.iface, "veth-a");
    EXPECT_EQ(c2.ip_addr, p.cfg.ip_addr);
    EXPECT_EQ(0, memcmp(c2.mac_addr, p.cfg.mac_addr, 6));
    base_cfg_free(&c2);
}
