// stack/addr.c: sockaddr reading and naming as Linux's inet and inet6
// code, and the bind conflict address rule; pure (no lwIP state).
#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>

#include <gtest/gtest.h>

extern "C" {
#include "stk_priv.h"
}

namespace
{

ip_addr_t
v4(const char *s)
{
    ip_addr_t a;
    ip_addr_set_ip4_u32_val(a, inet_addr(s));
    return a;
}

ip_addr_t
v6(const char *s)
{
    in6_addr b;
    ip_addr_t a;
    EXPECT_EQ(inet_pton(AF_INET6, s, &b), 1);
    stk__ip_from_in6(&a, &b);
    return a;
}

stk_sock
sock(bool inet6, bool v6only, int type = SOCK_DGRAM)
{
    stk_sock s;
    memset(&s, 0, sizeof(s));
    s.type = type;
    s.inet6 = inet6;
    s.v6only = v6only;
    return s;
}

sockaddr_in6
sin6(const char *a, uint16_t port, uint32_t scope = 0)
{
    sockaddr_in6 s{};
    s.sin6_family = AF_INET6;
    inet_pton(AF_INET6, a, &s.sin6_addr);
    s.sin6_port = htons(port);
    s.sin6_scope_id = scope;
    return s;
}

int
in(const stk_sock &s, const void *a, socklen_t l, stk_addr_op op,
   ip_addr_t *ip = nullptr)
{
    ip_addr_t x;
    uint16_t port;
    uint32_t scope;
    return stk__addr_in(&s, (const sockaddr *)a, l, op, ip ? ip : &x, &port,
                        &scope);
}

} // namespace

TEST(StackAddr, mapped_addresses_are_ipv4)
{
    ip_addr_t a = v6("::ffff:10.0.0.7");
    EXPECT_TRUE(IP_IS_V4(&a));
    EXPECT_EQ(ip4_addr_get_u32(ip_2_ip4(&a)), inet_addr("10.0.0.7"));
    in6_addr back;
    stk__ip_to_in6(&a, &back);
    char buf[64];
    inet_ntop(AF_INET6, &back, buf, sizeof(buf));
    EXPECT_STREQ(buf, "::ffff:10.0.0.7");
    ip_addr_t n = v6("fd00::1");
    EXPECT_TRUE(IP_IS_V6(&n));
    stk__ip_to_in6(IP_ANY_TYPE, &back);
    EXPECT_TRUE(IN6_IS_ADDR_UNSPECIFIED(&back));
}

TEST(StackAddr, overlap_as_linux_bind_conflicts)
{
    ip_addr_t any4 = v4("0.0.0.0"), a4 = v4("10.0.0.2"), b4 = v4("10.0.0.3");
    ip_addr_t any6, a6 = v6("fd00::2"), dual;
    ip_addr_set_any_val(1, any6);
    ip_addr_copy(dual, *IP_ANY_TYPE);
    EXPECT_TRUE(stk__addr_overlap(&any4, &a4));
    EXPECT_FALSE(stk__addr_overlap(&a4, &b4));
    EXPECT_TRUE(stk__addr_overlap(&dual, &a4)); // `::` dual covers IPv4
    EXPECT_TRUE(stk__addr_overlap(&dual, &a6));
    EXPECT_FALSE(stk__addr_overlap(&any6, &a4)); // v6only `::` does not
    EXPECT_TRUE(stk__addr_overlap(&any6, &a6));
    EXPECT_FALSE(stk__addr_overlap(&any4, &a6));
}

TEST(StackAddr, inet6_bind_rules)
{
    stk_sock d = sock(true, false), o = sock(true, true);
    stk_sock t = sock(true, false, SOCK_STREAM);
    sockaddr_in6 any = sin6("::", 80), m = sin6("::ffff:10.0.0.2", 80);
    ip_addr_t ip;
    ASSERT_EQ(in(d, &any, sizeof(any), STK_ADDR_BIND, &ip), 0);
    EXPECT_TRUE(IP_IS_ANY_TYPE_VAL(ip));
    ASSERT_EQ(in(o, &any, sizeof(any), STK_ADDR_BIND, &ip), 0);
    EXPECT_TRUE(IP_IS_V6(&ip));
    EXPECT_EQ(in(d, &any, 23, STK_ADDR_BIND), -EINVAL);
    EXPECT_EQ(in(d, &any, 24, STK_ADDR_BIND), 0); // RFC 2133's length
    EXPECT_EQ(in(o, &m, sizeof(m), STK_ADDR_BIND), -EINVAL);
    sockaddr_in6 mc = sin6("ff0e::1", 80);
    EXPECT_EQ(in(t, &mc, sizeof(mc), STK_ADDR_BIND), -EINVAL);
    EXPECT_EQ(in(d, &mc, sizeof(mc), STK_ADDR_BIND), 0);
    sockaddr_in6 ll = sin6("fe80::1", 80);
    EXPECT_EQ(in(d, &ll, sizeof(ll), STK_ADDR_BIND), -EINVAL);
    sockaddr_in s4{};
    s4.sin_family = AF_INET;
    EXPECT_EQ(in(d, &s4, sizeof(s4), STK_ADDR_BIND), -EINVAL);
    sockaddr_storage ss{};
    memcpy(&ss, &s4, sizeof(s4));
    EXPECT_EQ(in(d, &ss, sizeof(sockaddr_in6), STK_ADDR_BIND), -EAFNOSUPPORT);
}

TEST(StackAddr, inet6_connect_and_sendto_rules)
{
    stk_sock d = sock(true, false), o = sock(true, true);
    sockaddr_in s4{};
    s4.sin_family = AF_INET;
    s4.sin_addr.s_addr = inet_addr("10.0.0.1");
    s4.sin_port = htons(9);
    EXPECT_EQ(in(d, &s4, sizeof(s4), STK_ADDR_CONNECT_UDP), 0);
    EXPECT_EQ(in(o, &s4, sizeof(s4), STK_ADDR_CONNECT_UDP), -EAFNOSUPPORT);
    EXPECT_EQ(in(d, &s4, sizeof(s4), STK_ADDR_SENDTO), 0);
    EXPECT_EQ(in(o, &s4, sizeof(s4), STK_ADDR_SENDTO), -ENETUNREACH);
    EXPECT_EQ(in(d, &s4, sizeof(s4), STK_ADDR_CONNECT_TCP), -EINVAL);
    sockaddr un{};
    un.sa_family = AF_UNSPEC;
    EXPECT_EQ(in(d, &un, sizeof(un), STK_ADDR_SENDTO), 1);
    sockaddr_in6 m = sin6("::ffff:10.0.0.1", 9);
    EXPECT_EQ(in(o, &m, sizeof(m), STK_ADDR_CONNECT_TCP), -ENETUNREACH);
    EXPECT_EQ(in(o, &m, sizeof(m), STK_ADDR_SENDTO), -ENETUNREACH);
    ip_addr_t ip;
    ASSERT_EQ(in(d, &m, sizeof(m), STK_ADDR_CONNECT_TCP, &ip), 0);
    EXPECT_TRUE(IP_IS_V4(&ip));
    sockaddr_in6 ll = sin6("fe80::1", 9), lls = sin6("fe80::1", 9, 3);
    EXPECT_EQ(in(d, &ll, sizeof(ll), STK_ADDR_CONNECT_TCP), -EINVAL);
    EXPECT_EQ(in(d, &lls, sizeof(lls), STK_ADDR_CONNECT_TCP), 0);
    sockaddr_in6 any = sin6("::", 9);
    EXPECT_EQ(in(d, &any, sizeof(any), STK_ADDR_CONNECT_UDP), -ENETUNREACH);
}

TEST(StackAddr, names_are_sockaddr_in6_with_mapped_ipv4)
{
    stk_sock d = sock(true, false), f = sock(false, false);
    ip_addr_t a = v4("10.0.0.1");
    sockaddr_in6 out{};
    socklen_t l = sizeof(out);
    stk__addr_out(&d, &a, 80, (sockaddr *)&out, &l);
    EXPECT_EQ(l, sizeof(sockaddr_in6));
    EXPECT_EQ(out.sin6_family, AF_INET6);
    EXPECT_TRUE(IN6_IS_ADDR_V4MAPPED(&out.sin6_addr));
    EXPECT_EQ(ntohs(out.sin6_port), 80);
    sockaddr_in o4{};
    l = sizeof(o4);
    stk__addr_out(&f, &a, 80, (sockaddr *)&o4, &l);
    EXPECT_EQ(l, sizeof(sockaddr_in));
    EXPECT_EQ(o4.sin_addr.s_addr, inet_addr("10.0.0.1"));
    // A short buffer gets the start, the length says the whole.
    l = 8;
    memset(&out, 0, sizeof(out));
    stk__addr_out(&d, &a, 80, (sockaddr *)&out, &l);
    EXPECT_EQ(l, sizeof(sockaddr_in6));
    EXPECT_EQ(out.sin6_family, AF_INET6);
}
