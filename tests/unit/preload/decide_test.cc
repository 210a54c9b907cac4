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

const pl_net kNetGw =
    net4(ip("10.200.0.2"), ip("255.255.255.0"), ip("10.200.0.1"));
const pl_net kNoNet = net4(0, 0, 0);

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

// ---- AF_INET6 sockets: the IPv4 view the stack gets (Linux's forms) ----

namespace
{

pl_in6
view(const sockaddr_in6 &s, bool v6only, bool dgram, sockaddr_in *v4,
     socklen_t len = sizeof(sockaddr_in6))
{
    return pl_in6_view((const sockaddr *)&s, len, v6only, dgram, v4);
}

} // namespace

TEST(DecideIn6, MappedAddressIsItsIpv4Address)
{
    sockaddr_in v4{};
    EXPECT_EQ(view(sin6("::ffff:10.200.0.2", 80), false, false, &v4),
              PL_IN6_V4);
    EXPECT_EQ(v4.sin_family, AF_INET);
    EXPECT_EQ(v4.sin_addr.s_addr, ip("10.200.0.2"));
    EXPECT_EQ(ntohs(v4.sin_port), 80);
}

TEST(DecideIn6, MappedOnV6onlyIsLinuxsError)
{
    sockaddr_in v4{};
    EXPECT_EQ(view(sin6("::ffff:10.200.0.2", 80), true, false, &v4),
              PL_IN6_BAD);
}

TEST(DecideIn6, AnyIsBothFamiliesUnlessV6only)
{
    sockaddr_in v4{};
    EXPECT_EQ(view(sin6("::", 8080), false, false, &v4), PL_IN6_V4);
    EXPECT_EQ(v4.sin_addr.s_addr, htonl(INADDR_ANY));
    EXPECT_EQ(ntohs(v4.sin_port), 8080);
    EXPECT_EQ(view(sin6("::", 8080), true, false, &v4), PL_IN6_NATIVE);
}

TEST(DecideIn6, NativeAddressesAreNative)
{
    sockaddr_in v4{};
    for (const char *a :
         {"::1", "fe80::1", "fd00:200::2", "2001:db8::1", "::10.200.0.2"})
        EXPECT_EQ(view(sin6(a, 80), false, false, &v4), PL_IN6_NATIVE) << a;
}

TEST(DecideIn6, ShortOrForeignAddressesAreLeftToTheKernel)
{
    sockaddr_in v4{};
    sockaddr_in6 s = sin6("::ffff:10.200.0.2", 80);
    EXPECT_EQ(view(s, false, false, &v4, 23), PL_IN6_BAD);
    EXPECT_EQ(view(s, false, false, &v4, 24), PL_IN6_V4); // RFC 2133 length
    EXPECT_EQ(view(s, false, false, &v4, 1), PL_IN6_BAD);
    sockaddr_un u{};
    u.sun_family = AF_UNIX;
    EXPECT_EQ(pl_in6_view((const sockaddr *)&u, sizeof(u), false, false, &v4),
              PL_IN6_BAD);
    EXPECT_EQ(pl_in6_view(nullptr, 0, false, false, &v4), PL_IN6_ASIS);
    sockaddr_in6 un{};
    un.sin6_family = AF_UNSPEC;
    EXPECT_EQ(pl_in6_view((const sockaddr *)&un, sizeof(un), false, true, &v4),
              PL_IN6_ASIS);
}

TEST(DecideIn6, SockaddrInOnlyForDualStackDatagrams)
{
    sockaddr_in in = sin("10.200.0.1", 7007), v4{};
    const sockaddr *a = (const sockaddr *)&in;
    EXPECT_EQ(pl_in6_view(a, sizeof(in), false, true, &v4), PL_IN6_V4);
    EXPECT_EQ(v4.sin_addr.s_addr, ip("10.200.0.1"));
    EXPECT_EQ(pl_in6_view(a, sizeof(in), true, true, &v4), PL_IN6_BAD);
    EXPECT_EQ(pl_in6_view(a, sizeof(in), false, false, &v4), PL_IN6_BAD);
    EXPECT_EQ(pl_in6_view(a, sizeof(in) - 1, false, true, &v4), PL_IN6_BAD);
}

// ---- native IPv6: the stack's own addresses, its prefix, its gateway ----

namespace
{

// The lab's stack with ACCEL_IP6=fd00:200::2/64 on interface 7.
pl_net
net6(bool gw)
{
    pl_net n = kNet;
    n.has6 = true;
    n.prefix6 = 64;
    inet_pton(AF_INET6, "fd00:200::2", &n.ip6);
    inet_pton(AF_INET6, "fe80::1:2ff:fe03:405", &n.ll6);
    if (gw) {
        n.has_gw6 = true;
        inet_pton(AF_INET6, "fe80::1", &n.gw6);
    }
    n.ifindex = 7;
    return n;
}

pl_route
bind6(const char *a, uint32_t scope = 0, const pl_net &n = net6(false))
{
    sockaddr_in6 s = sin6(a, 80);
    s.sin6_scope_id = scope;
    return pl_route_bind6(&s, &n);
}

pl_route
connect6(const char *a, uint16_t port = 80, uint32_t scope = 0,
         const pl_net &n = net6(false))
{
    sockaddr_in6 s = sin6(a, port);
    s.sin6_scope_id = scope;
    return pl_route_connect6(&s, &n);
}

} // namespace

TEST(Decide6, BindOwnAddressesAndAny)
{
    EXPECT_EQ(bind6("::"), PL_ROUTE_ACCEL_ANY);
    EXPECT_EQ(bind6("fd00:200::2"), PL_ROUTE_ACCEL);
    EXPECT_EQ(bind6("fe80::1:2ff:fe03:405", 7), PL_ROUTE_ACCEL);
    EXPECT_EQ(bind6("ff02::fb"), PL_ROUTE_ACCEL);
}

TEST(Decide6, BindOtherAddressesStayOnKernel)
{
    EXPECT_EQ(bind6("::1"), PL_ROUTE_KERNEL);
    EXPECT_EQ(bind6("fd00:200::3"), PL_ROUTE_KERNEL);
    EXPECT_EQ(bind6("fe80::1:2ff:fe03:405", 0), PL_ROUTE_KERNEL); // no scope
    EXPECT_EQ(bind6("fe80::1:2ff:fe03:405", 3), PL_ROUTE_KERNEL); // other if
    EXPECT_EQ(bind6("fe80::99", 7), PL_ROUTE_KERNEL);
}

TEST(Decide6, NothingWithoutAnIpv6Address)
{
    pl_net n = kNet;
    EXPECT_EQ(bind6("::", 0, n), PL_ROUTE_KERNEL);
    EXPECT_EQ(connect6("fd00:200::1", 80, 0, n), PL_ROUTE_KERNEL);
}

TEST(Decide6, ConnectOnPrefixOrLinkAccelerates)
{
    EXPECT_EQ(connect6("fd00:200::1"), PL_ROUTE_ACCEL);
    EXPECT_EQ(connect6("fd00:200::ffff:1"), PL_ROUTE_ACCEL);
    EXPECT_EQ(connect6("fe80::5", 80, 7), PL_ROUTE_ACCEL);
    EXPECT_EQ(connect6("fe80::5", 80, 2), PL_ROUTE_KERNEL);
    EXPECT_EQ(connect6("ff02::1:3", 5353, 7), PL_ROUTE_ACCEL);
    EXPECT_EQ(connect6("ff15::1234", 5000), PL_ROUTE_ACCEL);
}

TEST(Decide6, ConnectOffPrefixNeedsGateway)
{
    EXPECT_EQ(connect6("fd00:201::1"), PL_ROUTE_KERNEL);
    EXPECT_EQ(connect6("2001:db8::1"), PL_ROUTE_KERNEL);
    EXPECT_EQ(connect6("2001:db8::1", 80, 0, net6(true)), PL_ROUTE_ACCEL);
}

TEST(Decide6, LoopbackDnsAndSelfStayOnKernel)
{
    EXPECT_EQ(connect6("::1"), PL_ROUTE_KERNEL);
    EXPECT_EQ(connect6("::"), PL_ROUTE_KERNEL);
    EXPECT_EQ(connect6("fd00:200::1", 53), PL_ROUTE_KERNEL);
    EXPECT_EQ(connect6("fd00:200::2"), PL_ROUTE_KERNEL);
}

TEST(Decide6, PrefixLengthsThatAreNotWholeBytes)
{
    pl_net n = net6(false);
    n.prefix6 = 60;
    EXPECT_EQ(connect6("fd00:200:0:f::1", 80, 0, n), PL_ROUTE_ACCEL);
    EXPECT_EQ(connect6("fd00:200:0:10::1", 80, 0, n), PL_ROUTE_KERNEL);
}
