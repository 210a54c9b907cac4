// ACCEL_IP6 and ACCEL_GATEWAY6 parsing (base/cfg_ip6.c): binary forms,
// and every refusal naming the variable, the value and the fix.
#include <gtest/gtest.h>

#include <arpa/inet.h>

#include <string>

#include "base_test_util.h"

static in6_addr
A6(const char *s)
{
    in6_addr a{};
    EXPECT_EQ(inet_pton(AF_INET6, s, &a), 1) << s;
    return a;
}

static bool
eq6(const in6_addr &a, const in6_addr &b)
{
    return memcmp(&a, &b, sizeof(a)) == 0;
}

// The error of one environment, which must be refused.
static std::string
refused(std::initializer_list<std::string> env)
{
    Parsed p{Env(env)};
    EXPECT_EQ(p.rc, -EINVAL);
    return p.err;
}

TEST(CfgIp6, UnsetMeansNoIpv6)
{
    Parsed p(Env{"ACCEL_IP=10.200.0.2/24"});
    ASSERT_EQ(p.rc, 0) << p.err;
    EXPECT_FALSE(p.cfg.has_ip6);
    EXPECT_FALSE(p.cfg.has_gw6);
}

TEST(CfgIp6, AddressAndPrefix)
{
    Parsed p(Env{"ACCEL_IP=10.200.0.2/24", "ACCEL_IP6=fd00:200::2/64"});
    ASSERT_EQ(p.rc, 0) << p.err;
    EXPECT_TRUE(p.cfg.has_ip6);
    EXPECT_TRUE(eq6(p.cfg.ip6_addr, A6("fd00:200::2")));
    EXPECT_EQ(p.cfg.ip6_prefix, 64);
    EXPECT_FALSE(p.cfg.has_gw6);
}

TEST(CfgIp6, PrefixEdgesAndForms)
{
    struct {
        const char *v, *addr;
        int plen;
    } ok[] = {
        {"2001:db8::1/1", "2001:db8::1", 1},
        {"2001:db8::1/128", "2001:db8::1", 128},
        {"2001:db8::/127", "2001:db8::", 127}, // RFC 6164: both usable
        {"2001:db8::/128", "2001:db8::", 128},
        {"2001:DB8:0:0:0:0:0:7/48", "2001:db8::7", 48},
        {"fd00:200::2/064", "fd00:200::2", 64},
        {"::1.2.3.4/96", "::1.2.3.4", 96}, // deprecated v4-compatible
    };
    for (auto &c : ok) {
        Parsed p(Env{std::string("ACCEL_IP6=") + c.v});
        ASSERT_EQ(p.rc, 0) << c.v << ": " << p.err;
        EXPECT_TRUE(eq6(p.cfg.ip6_addr, A6(c.addr))) << c.v;
        EXPECT_EQ(p.cfg.ip6_prefix, c.plen) << c.v;
    }
}

TEST(CfgIp6, RejectsMalformed)
{
    for (const char *bad :
         {"fd00::2", "fd00::2/", "fd00::2/0", "fd00::2/129", "fd00::2/1000",
          "fd00::2/+64", "fd00::2/-1", "fd00::2/64 ", " fd00::2/64",
          "fd00::2/64/1", "/64", "fd00:::2/64", "fd00::g/64", "[fd00::2]/64",
          "fd00::2%eth0/64", "10.200.0.2/24", "1:2:3:4:5:6:7:8:9/64",
          "fd00::2/6x"}) {
        std::string err = refused({std::string("ACCEL_IP6=") + bad});
        EXPECT_EQ(err.rfind(std::string("ACCEL_IP6=") + bad +
                                ": not an IPv6 address/prefix; set "
                                "ACCEL_IP6=ADDRESS/len (len 1..128)",
                            0),
                  0u)
            << err;
    }
}

TEST(CfgIp6, RejectsUnusableAddresses)
{
    struct {
        const char *v, *why;
    } bad[] = {
        {"::/64", "unspecified"},
        {"::1/128", "loopback"},
        {"ff02::1/64", "multicast"},
        {"ff05::2/16", "multicast"},
        {"::ffff:10.200.0.2/120", "IPv4-mapped"},
        {"fe80::2/64", "link-local"},
        {"febf::1/16", "link-local"},
    };
    for (auto &c : bad) {
        std::string err = refused({std::string("ACCEL_IP6=") + c.v});
        EXPECT_EQ(err.rfind(std::string("ACCEL_IP6=") + c.v + ": ", 0), 0u)
            << err;
        EXPECT_NE(err.find(c.why), std::string::npos) << err;
        EXPECT_NE(err.find("set ACCEL_IP6 to the stack's own"),
                  std::string::npos)
            << err;
    }
}

TEST(CfgIp6, RejectsSubnetRouterAnycast)
{
    std::string err = refused({"ACCEL_IP6=fd00:200::/64"});
    EXPECT_EQ(err.rfind("ACCEL_IP6=fd00:200::/64: is the subnet-router "
                        "anycast address",
                        0),
              0u)
        << err;
    EXPECT_NE(refused({"ACCEL_IP6=2001:db8:1::/48"}).find("anycast"),
              std::string::npos);
    EXPECT_NE(refused({"ACCEL_IP6=fd00:200::1:0/112"}).find("anycast"),
              std::string::npos);
    // Zero low bits are fine when some bit after the prefix is set.
    Parsed p(Env{"ACCEL_IP6=fd00:200::1:0/96"});
    EXPECT_EQ(p.rc, 0) << p.err;
}

TEST(CfgGateway6, InsidePrefix)
{
    Parsed p(Env{"ACCEL_IP6=fd00:200::2/64", "ACCEL_GATEWAY6=fd00:200::1"});
    ASSERT_EQ(p.rc, 0) << p.err;
    EXPECT_TRUE(p.cfg.has_gw6);
    EXPECT_TRUE(eq6(p.cfg.gw6_addr, A6("fd00:200::1")));
}

TEST(CfgGateway6, LinkLocal)
{
    for (const char *gw : {"fe80::1", "fe80::200:ff:fe00:1"}) {
        Parsed p(Env{"ACCEL_IP6=fd00:200::2/64",
                     std::string("ACCEL_GATEWAY6=") + gw});
        ASSERT_EQ(p.rc, 0) << gw << ": " << p.err;
        EXPECT_TRUE(eq6(p.cfg.gw6_addr, A6(gw)));
    }
    // A /128 leaves no room in the prefix: only link-local works.
    Parsed p(Env{"ACCEL_IP6=2001:db8::2/128", "ACCEL_GATEWAY6=fe80::1"});
    EXPECT_EQ(p.rc, 0) << p.err;
}

TEST(CfgGateway6, BadLinkLocal)
{
    for (const char *gw : {"fe80::", "fe80:0:0:1::1", "febf::1"}) {
        std::string err = refused(
            {"ACCEL_IP6=fd00:200::2/64", std::string("ACCEL_GATEWAY6=") + gw});
        EXPECT_EQ(err.rfind(std::string("ACCEL_GATEWAY6=") + gw +
                                ": not a link-local host address; set "
                                "ACCEL_GATEWAY6 to a fe80::/64 address",
                            0),
                  0u)
            << err;
    }
}

TEST(CfgGateway6, OutsidePrefix)
{
    std::string err =
        refused({"ACCEL_IP6=fd00:200::2/64", "ACCEL_GATEWAY6=fd00:201::1"});
    EXPECT_EQ(err.rfind("ACCEL_GATEWAY6=fd00:201::1: not inside ACCEL_IP6's "
                        "prefix; set ACCEL_GATEWAY6 to a router address "
                        "inside fd00:200::2/64 or to its link-local",
                        0),
              0u)
        << err;
}

TEST(CfgGateway6, EqualToOwnAddress)
{
    std::string err =
        refused({"ACCEL_IP6=fd00:200::2/64", "ACCEL_GATEWAY6=fd00:200::2"});
    EXPECT_EQ(err.rfind("ACCEL_GATEWAY6=fd00:200::2: ", 0), 0u) << err;
    EXPECT_NE(err.find("ACCEL_IP6 itself"), std::string::npos) << err;
}

TEST(CfgGateway6, NeedsIp6)
{
    for (const char *gw : {"fe80::1", "fd00:200::1"}) {
        std::string err = refused(
            {"ACCEL_IP=10.200.0.2/24", std::string("ACCEL_GATEWAY6=") + gw});
        EXPECT_EQ(err.rfind(std::string("ACCEL_GATEWAY6=") + gw +
                                ": needs ACCEL_IP6; set ACCEL_IP6",
                            0),
                  0u)
            << err;
    }
}

TEST(CfgGateway6, Malformed)
{
    for (const char *bad : {"fd00:200::1/64", "fe80::1%veth-a", "[fe80::1]",
                            "10.200.0.1", "router", "fd00:200:::1"}) {
        std::string err = refused(
            {"ACCEL_IP6=fd00:200::2/64", std::string("ACCEL_GATEWAY6=") + bad});
        EXPECT_EQ(err.rfind(std::string("ACCEL_GATEWAY6=") + bad +
                                ": not an IPv6 address; set ACCEL_GATEWAY6",
                            0),
                  0u)
            << err;
    }
}

TEST(CfgGateway6, Unusable)
{
    struct {
        const char *v, *why;
    } bad[] = {{"::", "unspecified"},
               {"::1", "loopback"},
               {"ff02::2", "multicast"},
               {"::ffff:10.200.0.1", "IPv4-mapped"}};
    for (auto &c : bad) {
        std::string err = refused(
            {"ACCEL_IP6=fd00:200::2/64", std::string("ACCEL_GATEWAY6=") + c.v});
        EXPECT_EQ(err.rfind(std::string("ACCEL_GATEWAY6=") + c.v + ": ", 0), 0u)
            << err;
        EXPECT_NE(err.find(c.why), std::string::npos) << err;
    }
}

TEST(CfgIp6, Ip4StillRequiredSeparately)
{
    // ACCEL_IP6 does not stand in for ACCEL_IP: the IPv4 fields stay empty
    // (rt_configured() asks for ACCEL_IP).
    Parsed p(Env{"ACCEL_IP6=fd00:200::2/64"});
    ASSERT_EQ(p.rc, 0) << p.err;
    EXPECT_EQ(p.cfg.ip_addr, 0u);
    EXPECT_TRUE(p.cfg.has_ip6);
}
