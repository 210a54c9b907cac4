// ACCEL_IP, ACCEL_GATEWAY and ACCEL_MAC parsing: edge cases and messages.
#include <gtest/gtest.h>

#include <arpa/inet.h>

#include "base_test_util.h"

static uint32_t
A(const char *s)
{
    return inet_addr(s);
}

TEST(CfgIp, AddressAndPrefix)
{
    Parsed p(Env{"ACCEL_IP=10.200.0.2/24"});
    ASSERT_EQ(p.rc, 0) << p.err;
    EXPECT_EQ(p.cfg.ip_addr, A("10.200.0.2"));
    EXPECT_EQ(p.cfg.ip_mask, A("255.255.255.0"));
    EXPECT_EQ(p.cfg.gw_addr, 0u);
}

TEST(CfgIp, PrefixEdges)
{
    Parsed p32(Env{"ACCEL_IP=10.0.0.7/32"});
    ASSERT_EQ(p32.rc, 0) << p32.err;
    EXPECT_EQ(p32.cfg.ip_mask, 0xffffffffu);
    Parsed p31a(Env{"ACCEL_IP=10.0.0.0/31"}), p31b(Env{"ACCEL_IP=10.0.0.1/31"});
    EXPECT_EQ(p31a.rc, 0) << p31a.err; // RFC 3021: both usable
    EXPECT_EQ(p31b.rc, 0) << p31b.err;
    Parsed p1(Env{"ACCEL_IP=10.0.0.7/1"});
    ASSERT_EQ(p1.rc, 0) << p1.err;
    EXPECT_EQ(p1.cfg.ip_mask, A("128.0.0.0"));
    Parsed p17(Env{"ACCEL_IP=172.16.130.1/17"});
    ASSERT_EQ(p17.rc, 0);
    EXPECT_EQ(p17.cfg.ip_mask, A("255.255.128.0"));
}

TEST(CfgIp, BadAddressMessage)
{
    Parsed p(Env{"ACCEL_IP=10.0.0.300/24"});
    EXPECT_EQ(p.rc, -EINVAL);
    EXPECT_EQ(p.err.rfind("ACCEL_IP=10.0.0.300/24: not an IPv4 address/prefix; "
                          "set ACCEL_IP=a.b.c.d/len",
                          0),
              0u)
        << p.err;
}

TEST(CfgIp, RejectsMalformed)
{
    for (const char *bad :
         {"10.0.0.1", "10.0.0.1/", "10.0.0.1/0", "10.0.0.1/33", "10.0.0/24",
          "10.0.0.1.5/24", "10.0.0.1/24 ", " 10.0.0.1/24", "10.0.0.1/+24",
          "10.0.0.1/24/1", "/24", "a.b.c.d/24", "10.0.0.01x/24",
          "10.0.0.1/2x"}) {
        Parsed p(Env{std::string("ACCEL_IP=") + bad});
        EXPECT_EQ(p.rc, -EINVAL) << bad;
        EXPECT_EQ(p.err.rfind(std::string("ACCEL_IP=") + bad + ":", 0), 0u)
            << p.err;
    }
}

TEST(CfgIp, RejectsUnusableAddresses)
{
    for (const char *bad : {"0.0.0.0/8", "127.0.0.1/8", "224.0.0.1/4",
                            "239.1.1.1/24", "255.255.255.255/32"}) {
        Parsed p(Env{std::string("ACCEL_IP=") + bad});
        EXPECT_EQ(p.rc, -EINVAL) << bad;
        EXPECT_NE(p.err.find("not a usable unicast address"), std::string::npos)
            << p.err;
    }
}

TEST(CfgIp, RejectsNetworkAndBroadcast)
{
    Parsed n(Env{"ACCEL_IP=10.200.0.0/24"});
    EXPECT_EQ(n.rc, -EINVAL);
    EXPECT_NE(n.err.find("network address"), std::string::npos) << n.err;
    Parsed b(Env{"ACCEL_IP=10.200.0.255/24"});
    EXPECT_EQ(b.rc, -EINVAL);
    EXPECT_NE(b.err.find("broadcast address"), std::string::npos) << b.err;
}

TEST(CfgGateway, InsideSubnet)
{
    Parsed p(Env{"ACCEL_IP=10.200.0.2/24", "ACCEL_GATEWAY=10.200.0.1"});
    ASSERT_EQ(p.rc, 0) << p.err;
    EXPECT_EQ(p.cfg.gw_addr, A("10.200.0.1"));
}

TEST(CfgGateway, OutsideSubnet)
{
    Parsed p(Env{"ACCEL_IP=10.200.0.2/24", "ACCEL_GATEWAY=10.200.1.1"});
    EXPECT_EQ(p.rc, -EINVAL);
    EXPECT_EQ(p.err.rfind("ACCEL_GATEWAY=10.200.1.1: not inside ACCEL_IP's "
                          "subnet",
                          0),
              0u)
        << p.err;
}

TEST(CfgGateway, EqualToOwnAddress)
{
    Parsed p(Env{"ACCEL_IP=10.200.0.2/24", "ACCEL_GATEWAY=10.200.0.2"});
    EXPECT_EQ(p.rc, -EINVAL);
    EXPECT_NE(p.err.find("ACCEL_IP itself"), std::string::npos) << p.err;
}

TEST(CfgGateway, NeedsIp)
{
    Parsed p(Env{"ACCEL_GATEWAY=10.200.0.1"});
    EXPECT_EQ(p.rc, -EINVAL);
    EXPECT_NE(p.err.find("needs ACCEL_IP"), std::string::npos) << p.err;
}

TEST(CfgGateway, Malformed)
{
    for (const char *bad : {"10.200.0.1/24", "10.200.0", "gw", "0.0.0.0"}) {
        Parsed p(
            Env{"ACCEL_IP=10.200.0.2/24", std::string("ACCEL_GATEWAY=") + bad});
        EXPECT_EQ(p.rc, -EINVAL) << bad;
        EXPECT_EQ(p.err.rfind(std::string("ACCEL_GATEWAY=") + bad + ":", 0), 0u)
            << p.err;
    }
}

TEST(CfgMac, Valid)
{
    Parsed p(Env{"ACCEL_MAC=02:aB:cd:EF:00:10"});
    ASSERT_EQ(p.rc, 0) << p.err;
    EXPECT_TRUE(p.cfg.mac_set);
    const uint8_t want[6] = {0x02, 0xab, 0xcd, 0xef, 0x00, 0x10};
    EXPECT_EQ(0, memcmp(p.cfg.mac_addr, want, 6));
}

TEST(CfgMac, Malformed)
{
    for (const char *bad :
         {"02:00:00:00:00", "02-00-00-00-00-01", "02:00:00:00:00:0g",
          "02:00:00:00:00:001", "2:0:0:0:0:1", "02:00:00:00:00:01:"}) {
        Parsed p(Env{std::string("ACCEL_MAC=") + bad});
        EXPECT_EQ(p.rc, -EINVAL) << bad;
        EXPECT_EQ(p.err.rfind(std::string("ACCEL_MAC=") + bad +
                                  ": not a MAC address; set "
                                  "ACCEL_MAC=aa:bb:cc:dd:ee:ff",
                              0),
                  0u)
            << p.err;
        EXPECT_FALSE(p.cfg.mac_set);
    }
}

TEST(CfgMac, MulticastAndZeroRefused)
{
    Parsed m(Env{"ACCEL_MAC=01:00:5e:00:00:01"});
    EXPECT_EQ(m.rc, -EINVAL);
    EXPECT_NE(m.err.find("multicast"), std::string::npos);
    Parsed z(Env{"ACCEL_MAC=00:00:00:00:00:00"});
    EXPECT_EQ(z.rc, -EINVAL);
    EXPECT_NE(z.err.find("all zeros"), std::string::npos);
}
