// The acceleration decision: which addresses go to the stack and which
// stay on the kernel (docs/DESIGN.md "File descriptors").
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/un.h>

#include "decide.h"
#include "inet_helpers.h"

namespace
{

const pl_net kNetGw = {ip("10.200.0.2"), ip("255.255.255.0"), ip("10.200.0.1")};
const pl_net kNoNet = {0, 0, 0};

pl_route
bind_to(const char *a, const pl_net &n = kNet)
{
    sockaddr_in s = sin(a, 80);
    return pl_route_bind((sockaddr *)&s, sizeof(s), &n);
}

pl_route
connect_to(const char *a, uint16_t port, const pl_net &n = kNet)
{
    sockaddr_in s = sin(a, port);
    return pl_route_connect((sockaddr *)&s, sizeof(s), &n);
}

} // namespace

TEST(Decide, BindAnyAcceleratesWithKernelSide)
{
    EXPECT_EQ(bind_to("0.0.0.0"), PL_ROUTE_ACCEL_ANY);
}

TEST(Decide, BindOwnAddressAccelerates)
{
    EXPECT_EQ(bind_to("10.200.0.2"), PL_ROUTE_ACCEL);
}

TEST(Decide, BindLoopbackAndOtherAddressesStayOnKernel)
{
    EXPECT_EQ(bind_to("127.0.0.1"), PL_ROUTE_KERNEL);
    EXPECT_EQ(bind_to("127.1.2.3"), PL_ROUTE_KERNEL);
    EXPECT_EQ(bind_to("10.200.0.3"), PL_ROUTE_KERNEL);
    EXPECT_EQ(bind_to("192.168.1.1"), PL_ROUTE_KERNEL);
}

TEST(Decide, BindWithoutConfiguredAddressStaysOnKernel)
{
    EXPECT_EQ(bind_to("0.0.0.0", kNoNet), PL_ROUTE_KERNEL);
}

TEST(Decide, BindNonInetOrShortAddressIsLeftToKernel)
{
    sockaddr_in s = sin("0.0.0.0", 80);
    sockaddr_un u{};
    u.sun_family = AF_UNIX;

    EXPECT_EQ(pl_route_bind((sockaddr *)&s, sizeof(s) - 1, &kNet),
              PL_ROUTE_PASS);
    EXPECT_EQ(pl_route_bind((sockaddr *)&u, sizeof(u), &kNet), PL_ROUTE_PASS);
    EXPECT_EQ(pl_route_bind(nullptr, 0, &kNet), PL_ROUTE_PASS);
    s.sin_family = AF_UNSPEC;
    EXPECT_EQ(pl_route_bind((sockaddr *)&s, sizeof(s), &kNet), PL_ROUTE_PASS);
}

TEST(Decide, ConnectOnSubnetAccelerates)
{
    EXPECT_EQ(connect_to("10.200.0.1", 80), PL_ROUTE_ACCEL);
    EXPECT_EQ(connect_to("10.200.0.254", 5000), PL_ROUTE_ACCEL);
}

TEST(Decide, ConnectOffSubnetNeedsGateway)
{
    EXPECT_EQ(connect_to("8.8.8.8", 443), PL_ROUTE_KERNEL);
    EXPECT_EQ(connect_to("8.8.8.8", 443, kNetGw), PL_ROUTE_ACCEL);
    EXPECT_EQ(connect_to("10.201.0.1", 80, kNetGw), PL_ROUTE_ACCEL);
}

TEST(Decide, ConnectLoopbackStaysOnKernel)
{
    EXPECT_EQ(connect_to("127.0.0.1", 80), PL_ROUTE_KERNEL);
    EXPECT_EQ(connect_to("127.0.0.1", 80, kNetGw), PL_ROUTE_KERNEL);
    EXPECT_EQ(connect_to("0.0.0.0", 80, kNetGw), PL_ROUTE_KERNEL);
}

TEST(Decide, DnsStaysOnKernel)
{
    EXPECT_EQ(connect_to("10.200.0.1", 53), PL_ROUTE_KERNEL);
    EXPECT_EQ(connect_to("8.8.8.8", 53, kNetGw), PL_ROUTE_KERNEL);
}

TEST(Decide, BroadcastStaysOnKernel)
{
    EXPECT_EQ(connect_to("255.255.255.255", 67, kNetGw), PL_ROUTE_KERNEL);
}

TEST(Decide, MulticastGroupsAccelerate)
{
    // Senders to a group and receivers bound to it use the interface.
    EXPECT_EQ(connect_to("239.1.1.1", 5000), PL_ROUTE_ACCEL);
    EXPECT_EQ(connect_to("224.0.0.251", 5353, kNetGw), PL_ROUTE_ACCEL);
    EXPECT_EQ(bind_to("239.1.1.1"), PL_ROUTE_ACCEL);
    EXPECT_TRUE(pl_addr_routable(ip("239.1.1.1"), &kNet));
    // ... when the stack has an address.
    EXPECT_EQ(connect_to("239.1.1.1", 5000, kNoNet), PL_ROUTE_KERNEL);
    EXPECT_EQ(bind_to("239.1.1.1", kNoNet), PL_ROUTE_KERNEL);
}

TEST(Decide, ConnectUnspecIsLeftToKernel)
{
    sockaddr s{};
    s.sa_family = AF_UNSPEC;
    EXPECT_EQ(pl_route_connect(&s, sizeof(s), &kNet), PL_ROUTE_PASS);
}

TEST(Decide, RoutableRules)
{
    EXPECT_TRUE(pl_addr_routable(ip("10.200.0.9"), &kNet));
    EXPECT_FALSE(pl_addr_routable(ip("10.200.1.9"), &kNet));
    EXPECT_TRUE(pl_addr_routable(ip("10.200.1.9"), &kNetGw));
    EXPECT_FALSE(pl_addr_routable(ip("10.200.0.9"), &kNoNet));
    EXPECT_FALSE(pl_addr_routable(ip("127.0.0.1"), &kNetGw));
}
