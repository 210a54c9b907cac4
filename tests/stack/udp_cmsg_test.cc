// Control messages on UDP receive (stack/sock_cmsg.c): IP_PKTINFO,
// IP_TTL, IP_TOS on AF_INET sockets; IPV6_PKTINFO, IPV6_HOPLIMIT,
// IPV6_TCLASS and the RFC 2292 forms on AF_INET6 ones, IPv4 datagrams on
// a dual socket; the layout, MSG_CTRUNC and msg_controllen as Linux's
// put_cmsg gives them; the options' values.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <cstring>
#include <ctime>

#include "harness.h"

using namespace stktest;

namespace
{
constexpr int kIfindex = 7;             // the port's kernel interface
constexpr uint32_t kGroup = 0xef010101; // 239.1.1.1

// One control message as received: level, type, cmsg_len, data bytes.
struct Cmsg {
    int level = 0, type = 0;
    size_t len = 0;
    Bytes data;
};

struct Got {
    ssize_t n = 0;
    int flags = 0;
    size_t controllen = 0;
    std::vector<Cmsg> c;
};

class Cmsgs : public Lab
{
  protected:
    void
    SetUp() override
    {
        Lab::SetUp();
        stk_set_ifindex(kIfindex);
    }
    stk_sock *
    sock(bool inet6, uint16_t port = 5000)
    {
        stk_sock *s = nullptr;
        EXPECT_EQ(stk_sock_create(SOCK_DGRAM, &s), 0);
        if (inet6) {
            EXPECT_EQ(stk_sock_set_inet6(s, false), 0);
        }
        socks_.push_back(s);
        EXPECT_EQ(bind_port(s, port, 0), 0);
        return s;
    }
    static int
    on(stk_sock *s, int level, int name, int v = 1)
    {
        return stk_sock_setsockopt(s, level, name, &v, sizeof(v));
    }
    // recvmsg with a control buffer of ctl bytes (-1: msg_control NULL
    // with 64 bytes claimed); the buffer starts filled with 0xee.
    static Got
    recv(stk_sock *s, int ctl, int flags = 0)
    {
        Got g;
        uint8_t buf[256], cbuf[512];
        sockaddr_in6 from{};
        iovec iov{buf, sizeof(buf)};
        msghdr m{};
        memset(cbuf, 0xee, sizeof(cbuf));
        m.msg_iov = &iov;
        m.msg_iovlen = 1;
        m.msg_name = &from;
        m.msg_namelen = sizeof(from);
        m.msg_control = ctl < 0 ? nullptr : cbuf;
        m.msg_controllen = ctl < 0 ? 64 : (size_t)ctl;
        g.n = stk_sock_recvmsg(s, &m, flags);
        g.flags = m.msg_flags;
        g.controllen = m.msg_controllen;
        if (g.n < 0 || ctl < 0)
            return g;
        // Walk the bytes written by hand: glibc versions differ on a
        // last message without its padding (CMSG_NXTHDR).
        for (size_t off = 0; g.controllen - off >= sizeof(cmsghdr);) {
            cmsghdr h;
            memcpy(&h, cbuf + off, sizeof(h));
            EXPECT_GE(h.cmsg_len, sizeof(h));
            EXPECT_LE(h.cmsg_len, g.controllen - off);
            if (h.cmsg_len < sizeof(h) || h.cmsg_len > g.controllen - off)
                break;
            Cmsg x;
            x.level = h.cmsg_level;
            x.type = h.cmsg_type;
            x.len = h.cmsg_len;
            x.data.assign(cbuf + off + CMSG_LEN(0), cbuf + off + h.cmsg_len);
            g.c.push_back(x);
            off += CMSG_ALIGN(h.cmsg_len);
            if (off >= g.controllen)
                break;
        }
        return g;
    }
    // An IPv4 UDP datagram from the peer with this TOS and TTL.
    static Bytes
    udp4(uint32_t dst, uint16_t dport, uint8_t tos, uint8_t ttl,
         const Bytes &payload = pattern(10))
    {
        Bytes b = udp(kPeerIp, dst, 6000, dport, payload);
        b[1] = tos;
        b[8] = ttl;
        b[10] = b[11] = 0;
        uint16_t c = csum(b.data(), 20);
        b[10] = (uint8_t)(c >> 8);
        b[11] = (uint8_t)c;
        return b;
    }
    // An IPv6 UDP datagram from the peer with this traffic class and hop
    // limit.
    static Bytes
    udp6tc(uint16_t dport, uint8_t tclass, uint8_t hlim)
    {
        Bytes b = udp6(kPeerIp6, kStackIp6, 6000, dport, pattern(10));
        b[0] = (uint8_t)(0x60 | tclass >> 4);
        b[1] = (uint8_t)((tclass & 0xf) << 4 | (b[1] & 0xf));
        b[7] = hlim;
        return b;
    }
    // A message's data as a T (its size checked).
    template <typename T>
    static T
    data_as(const Cmsg &c)
    {
        T v{};
        EXPECT_EQ(c.data.size(), sizeof(v));
        memcpy(&v, c.data.data(), std::min(c.data.size(), sizeof(v)));
        return v;
    }
    static In6
    in6_of(const in6_addr &a)
    {
        In6 r;
        memcpy(r.data(), &a, 16);
        return r;
    }
};

} // namespace

TEST_F(Cmsgs, none_asked_none_given)
{
    stk_sock *s = sock(false);
    inject_ip(udp4(kStackIp, 5000, 0x28, 33));
    Got g = recv(s, 256);
    ASSERT_EQ(g.n, 10);
    EXPECT_EQ(g.controllen, 0u);
    EXPECT_EQ(g.flags, 0);
    stk_sock *s6 = sock(true, 5001);
    inject_ip6(udp6tc(5001, 0x28, 17));
    g = recv(s6, 256);
    ASSERT_EQ(g.n, 10);
    EXPECT_EQ(g.controllen, 0u);
    EXPECT_EQ(g.flags, 0);
}

TEST_F(Cmsgs, ipv4_pktinfo_ttl_tos_in_linux_order)
{
    stk_sock *s = sock(false);
    ASSERT_EQ(on(s, IPPROTO_IP, IP_RECVTOS), 0);
    ASSERT_EQ(on(s, IPPROTO_IP, IP_RECVTTL), 0);
    ASSERT_EQ(on(s, IPPROTO_IP, IP_PKTINFO), 0);
    inject_ip(udp4(kStackIp, 5000, 0x28, 33));
    // MSG_PEEK gives them too.
    Got g = recv(s, 512, MSG_PEEK);
    ASSERT_EQ(g.n, 10);
    EXPECT_EQ(g.c.size(), 3u);
    g = recv(s, 512);
    ASSERT_EQ(g.n, 10);
    EXPECT_EQ(g.flags, 0);
    // CMSG_SPACE(12) + CMSG_SPACE(4) + CMSG_SPACE(1).
    EXPECT_EQ(g.controllen, 32u + 24u + 24u);
    ASSERT_EQ(g.c.size(), 3u);
    EXPECT_EQ(g.c[0].level, IPPROTO_IP);
    EXPECT_EQ(g.c[0].type, IP_PKTINFO);
    EXPECT_EQ(g.c[0].len, CMSG_LEN(sizeof(in_pktinfo)));
    in_pktinfo pi = data_as<in_pktinfo>(g.c[0]);
    EXPECT_EQ(pi.ipi_ifindex, kIfindex);
    EXPECT_EQ(ntohl(pi.ipi_addr.s_addr), kStackIp);
    EXPECT_EQ(ntohl(pi.ipi_spec_dst.s_addr), kStackIp);
    EXPECT_EQ(g.c[1].type, IP_TTL);
    EXPECT_EQ(data_as<int>(g.c[1]), 33);
    EXPECT_EQ(g.c[2].type, IP_TOS);
    EXPECT_EQ(g.c[2].len, CMSG_LEN(1)); // one byte, as Linux
    ASSERT_EQ(g.c[2].data.size(), 1u);
    EXPECT_EQ(g.c[2].data[0], 0x28);
}

TEST_F(Cmsgs, ipv4_pktinfo_of_a_group_names_our_address_as_spec_dst)
{
    stk_sock *s = sock(false);
    ip_mreq mr{};
    mr.imr_multiaddr.s_addr = htonl(kGroup);
    ASSERT_EQ(
        stk_sock_setsockopt(s, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mr, sizeof(mr)),
        0);
    ASSERT_EQ(on(s, IPPROTO_IP, IP_PKTINFO), 0);
    drain();
    const uint8_t mac[6] = {0x01, 0x00, 0x5e, 0x01, 0x01, 0x01};
    inject_raw(eth(mac, kPeerMac, 0x0800, udp4(kGroup, 5000, 0, 1)));
    Got g = recv(s, 64);
    ASSERT_EQ(g.n, 10);
    ASSERT_EQ(g.c.size(), 1u);
    in_pktinfo pi = data_as<in_pktinfo>(g.c[0]);
    EXPECT_EQ(pi.ipi_ifindex, kIfindex);
    EXPECT_EQ(ntohl(pi.ipi_addr.s_addr), kGroup);
    EXPECT_EQ(ntohl(pi.ipi_spec_dst.s_addr), kStackIp);
}

TEST_F(Cmsgs, ipv4_queued_before_ip_pktinfo_has_no_interface)
{
    // Linux's ipv4_pktinfo_prepare runs as the datagram is queued.
    stk_sock *s = sock(false);
    inject_ip(udp4(kStackIp, 5000, 0, 64));
    ASSERT_EQ(on(s, IPPROTO_IP, IP_PKTINFO), 0);
    Got g = recv(s, 64);
    ASSERT_EQ(g.c.size(), 1u);
    in_pktinfo pi = data_as<in_pktinfo>(g.c[0]);
    EXPECT_EQ(pi.ipi_ifindex, 0);
    EXPECT_EQ(pi.ipi_spec_dst.s_addr, 0u);
    EXPECT_EQ(ntohl(pi.ipi_addr.s_addr), kStackIp);
    // Turned off again: nothing.
    ASSERT_EQ(on(s, IPPROTO_IP, IP_PKTINFO, 0), 0);
    inject_ip(udp4(kStackIp, 5000, 0, 64));
    EXPECT_EQ(recv(s, 64).controllen, 0u);
}

TEST_F(Cmsgs, ipv6_all_five_in_linux_order)
{
    stk_sock *s = sock(true);
    for (int name : {IPV6_2292HOPLIMIT, IPV6_2292PKTINFO, IPV6_RECVTCLASS,
                     IPV6_RECVHOPLIMIT, IPV6_RECVPKTINFO})
        ASSERT_EQ(on(s, IPPROTO_IPV6, name), 0);
    // IPv4 options give nothing for an IPv6 datagram.
    ASSERT_EQ(on(s, IPPROTO_IP, IP_PKTINFO), 0);
    ASSERT_EQ(on(s, IPPROTO_IP, IP_RECVTTL), 0);
    inject_ip6(udp6tc(5000, 0x28, 17));
    Got g = recv(s, 512);
    ASSERT_EQ(g.n, 10);
    EXPECT_EQ(g.flags, 0);
    // 2 x CMSG_SPACE(20) + 3 x CMSG_SPACE(4).
    EXPECT_EQ(g.controllen, 2 * 40u + 3 * 24u);
    ASSERT_EQ(g.c.size(), 5u);
    EXPECT_EQ(g.c[0].level, IPPROTO_IPV6);
    EXPECT_EQ(g.c[0].type, IPV6_PKTINFO);
    in6_pktinfo pi = data_as<in6_pktinfo>(g.c[0]);
    EXPECT_EQ(in6_of(pi.ipi6_addr), kStackIp6);
    EXPECT_EQ(pi.ipi6_ifindex, (unsigned)kIfindex);
    EXPECT_EQ(g.c[1].type, IPV6_HOPLIMIT);
    EXPECT_EQ(data_as<int>(g.c[1]), 17);
    EXPECT_EQ(g.c[2].type, IPV6_TCLASS);
    EXPECT_EQ(data_as<int>(g.c[2]), 0x28);
    EXPECT_EQ(g.c[3].type, IPV6_2292PKTINFO);
    EXPECT_EQ(in6_of(data_as<in6_pktinfo>(g.c[3]).ipi6_addr), kStackIp6);
    EXPECT_EQ(g.c[4].type, IPV6_2292HOPLIMIT);
    EXPECT_EQ(data_as<int>(g.c[4]), 17);
}

TEST_F(Cmsgs, ipv4_on_a_dual_socket_mapped_pktinfo_then_ip_ones)
{
    stk_sock *s = sock(true);
    ASSERT_EQ(on(s, IPPROTO_IPV6, IPV6_RECVPKTINFO), 0);
    ASSERT_EQ(on(s, IPPROTO_IPV6, IPV6_RECVHOPLIMIT), 0); // IPv6's only
    inject_ip(udp4(kStackIp, 5000, 0x10, 40));
    Got g = recv(s, 512);
    ASSERT_EQ(g.n, 10);
    ASSERT_EQ(g.c.size(), 1u);
    EXPECT_EQ(g.controllen, 40u);
    in6_pktinfo p6 = data_as<in6_pktinfo>(g.c[0]);
    EXPECT_EQ(in6_of(p6.ipi6_addr), mapped6(kStackIp));
    EXPECT_EQ(p6.ipi6_ifindex, (unsigned)kIfindex);
    // IP_PKTINFO too: after IPv6's, as udpv6_recvmsg.
    ASSERT_EQ(on(s, IPPROTO_IP, IP_PKTINFO), 0);
    ASSERT_EQ(on(s, IPPROTO_IP, IP_RECVTOS), 0);
    inject_ip(udp4(kStackIp, 5000, 0x10, 40));
    g = recv(s, 512);
    ASSERT_EQ(g.c.size(), 3u);
    EXPECT_EQ(g.c[0].type, IPV6_PKTINFO);
    EXPECT_EQ(g.c[1].level, IPPROTO_IP);
    EXPECT_EQ(g.c[1].type, IP_PKTINFO);
    in_pktinfo pi = data_as<in_pktinfo>(g.c[1]);
    EXPECT_EQ(ntohl(pi.ipi_addr.s_addr), kStackIp);
    EXPECT_EQ(pi.ipi_ifindex, kIfindex);
    EXPECT_EQ(g.c[2].type, IP_TOS);
    EXPECT_EQ(g.c[2].data[0], 0x10);
    // IP_PKTINFO alone on the dual socket (the brief's case).
    ASSERT_EQ(on(s, IPPROTO_IPV6, IPV6_RECVPKTINFO, 0), 0);
    ASSERT_EQ(on(s, IPPROTO_IP, IP_RECVTOS, 0), 0);
    inject_ip(udp4(kStackIp, 5000, 0, 64));
    g = recv(s, 512);
    ASSERT_EQ(g.c.size(), 1u);
    EXPECT_EQ(g.c[0].type, IP_PKTINFO);
    EXPECT_EQ(data_as<in_pktinfo>(g.c[0]).ipi_ifindex, kIfindex);
}

TEST_F(Cmsgs, truncation_as_put_cmsg)
{
    // PKTINFO (CMSG_LEN 28, space 32) then TTL (CMSG_LEN 20, space 24).
    stk_sock *s = sock(false);
    ASSERT_EQ(on(s, IPPROTO_IP, IP_PKTINFO), 0);
    ASSERT_EQ(on(s, IPPROTO_IP, IP_RECVTTL), 0);
    struct Case {
        int ctl;
        size_t controllen;
        bool ctrunc;
        std::vector<size_t> lens; // cmsg_len of each message
    } cases[] = {
        {-1, 0, true, {}},          // no buffer
        {0, 0, true, {}},           // none
        {8, 0, true, {}},           // less than a header
        {16, 16, true, {16}},       // a header, no data
        {20, 20, true, {20}},       // part of the data
        {32, 32, true, {28}},       // PKTINFO whole, TTL not at all
        {40, 32, true, {28}},       // room for less than TTL's header
        {48, 48, true, {28, 16}},   // TTL's header only
        {52, 52, false, {28, 20}},  // TTL whole, not its padding: complete
        {56, 56, false, {28, 20}},  // both whole
        {200, 56, false, {28, 20}}, // more room than needed
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(c.ctl);
        inject_ip(udp4(kStackIp, 5000, 0, 9));
        Got g = recv(s, c.ctl);
        ASSERT_EQ(g.n, 10);
        EXPECT_EQ(g.controllen, c.controllen);
        EXPECT_EQ((g.flags & MSG_CTRUNC) != 0, c.ctrunc);
        ASSERT_EQ(g.c.size(), c.lens.size());
        for (size_t i = 0; i < g.c.size(); i++)
            EXPECT_EQ(g.c[i].len, c.lens[i]);
        if (c.ctl == 20) { // the data that fit: the interface index
            int idx = 0;
            memcpy(&idx, g.c[0].data.data(), sizeof(idx));
            EXPECT_EQ(idx, kIfindex);
        }
    }
}

TEST_F(Cmsgs, truncated_ipv6_pktinfo)
{
    stk_sock *s = sock(true);
    ASSERT_EQ(on(s, IPPROTO_IPV6, IPV6_RECVPKTINFO), 0);
    inject_ip(udp4(kStackIp, 5000, 0, 64));
    Got g = recv(s, 30); // header and 14 bytes of the address
    ASSERT_EQ(g.n, 10);
    EXPECT_EQ(g.controllen, 30u);
    EXPECT_NE(g.flags & MSG_CTRUNC, 0);
    ASSERT_EQ(g.c.size(), 1u);
    EXPECT_EQ(g.c[0].len, 30u);
    In6 m = mapped6(kStackIp);
    EXPECT_EQ(g.c[0].data, Bytes(m.begin(), m.begin() + 14));
}

TEST_F(Cmsgs, options_read_back_as_set)
{
    stk_sock *s = sock(false);
    int v = -1;
    socklen_t l = sizeof(v);
    ASSERT_EQ(stk_sock_getsockopt(s, IPPROTO_IP, IP_PKTINFO, &v, &l), 0);
    EXPECT_EQ(v, 0);
    EXPECT_EQ(l, sizeof(int));
    // do_ip_setsockopt: one byte will do, and optlen 0 means 0.
    unsigned char one = 1;
    ASSERT_EQ(stk_sock_setsockopt(s, IPPROTO_IP, IP_PKTINFO, &one, 1), 0);
    l = sizeof(v);
    ASSERT_EQ(stk_sock_getsockopt(s, IPPROTO_IP, IP_PKTINFO, &v, &l), 0);
    EXPECT_EQ(v, 1);
    unsigned char b = 9;
    l = 1; // do_ip_getsockopt: one byte back
    ASSERT_EQ(stk_sock_getsockopt(s, IPPROTO_IP, IP_PKTINFO, &b, &l), 0);
    EXPECT_EQ(b, 1);
    EXPECT_EQ(l, 1u);
    ASSERT_EQ(stk_sock_setsockopt(s, IPPROTO_IP, IP_PKTINFO, &one, 0), 0);
    l = sizeof(v);
    ASSERT_EQ(stk_sock_getsockopt(s, IPPROTO_IP, IP_PKTINFO, &v, &l), 0);
    EXPECT_EQ(v, 0);
    // IPv6 options: AF_INET6 only, an int.
    EXPECT_EQ(on(s, IPPROTO_IPV6, IPV6_RECVPKTINFO), -ENOPROTOOPT);
    l = sizeof(v);
    EXPECT_EQ(stk_sock_getsockopt(s, IPPROTO_IPV6, IPV6_RECVPKTINFO, &v, &l),
              -ENOPROTOOPT);
    stk_sock *s6 = sock(true, 5001);
    EXPECT_EQ(stk_sock_setsockopt(s6, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, 1),
              -EINVAL);
    for (int name : {IPV6_RECVPKTINFO, IPV6_2292PKTINFO, IPV6_RECVHOPLIMIT,
                     IPV6_2292HOPLIMIT, IPV6_RECVTCLASS}) {
        SCOPED_TRACE(name);
        ASSERT_EQ(on(s6, IPPROTO_IPV6, name, 5), 0);
        v = -1;
        l = sizeof(v);
        ASSERT_EQ(stk_sock_getsockopt(s6, IPPROTO_IPV6, name, &v, &l), 0);
        EXPECT_EQ(v, 1);
        ASSERT_EQ(on(s6, IPPROTO_IPV6, name, 0), 0);
        l = sizeof(v);
        ASSERT_EQ(stk_sock_getsockopt(s6, IPPROTO_IPV6, name, &v, &l), 0);
        EXPECT_EQ(v, 0);
    }
    // IP_ options on the AF_INET6 socket, as ip_setsockopt.
    ASSERT_EQ(on(s6, IPPROTO_IP, IP_RECVTTL), 0);
    l = sizeof(v);
    ASSERT_EQ(stk_sock_getsockopt(s6, IPPROTO_IP, IP_RECVTTL, &v, &l), 0);
    EXPECT_EQ(v, 1);
}

TEST_F(Cmsgs, tcp_receive_gives_no_control)
{
    Conn c = active_open();
    peer_send(c, pattern(20));
    uint8_t buf[64], cbuf[64];
    iovec iov{buf, sizeof(buf)};
    msghdr m{};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = cbuf;
    m.msg_controllen = sizeof(cbuf);
    ASSERT_EQ(stk_sock_recvmsg(c.s, &m, 0), 20);
    EXPECT_EQ(m.msg_controllen, 0u);
}

// SO_TIMESTAMP: SCM_TIMESTAMP (a struct timeval, the wall clock when the
// datagram was queued) before the IP messages, as sock_recv_timestamp;
// the option reads back; off again, none.
TEST_F(Cmsgs, so_timestamp_first_with_the_arrival_time)
{
    stk_sock *s = sock(false);
    int v = 0;
    socklen_t vl = sizeof(v);
    ASSERT_EQ(on(s, SOL_SOCKET, SO_TIMESTAMP), 0);
    ASSERT_EQ(stk_sock_getsockopt(s, SOL_SOCKET, SO_TIMESTAMP, &v, &vl), 0);
    EXPECT_EQ(v, 1);
    ASSERT_EQ(on(s, IPPROTO_IP, IP_RECVTTL), 0);
    time_t before = time(nullptr);
    inject_ip(udp4(kStackIp, 5000, 0x28, 33));
    time_t after = time(nullptr);
    Got g = recv(s, 512);
    ASSERT_EQ(g.n, 10);
    ASSERT_EQ(g.c.size(), 2u);
    EXPECT_EQ(g.c[0].level, SOL_SOCKET);
    EXPECT_EQ(g.c[0].type, SO_TIMESTAMP);
    EXPECT_EQ(g.c[0].len, CMSG_LEN(sizeof(timeval)));
    timeval tv = data_as<timeval>(g.c[0]);
    EXPECT_GE(tv.tv_sec, before);
    EXPECT_LE(tv.tv_sec, after);
    EXPECT_LT(tv.tv_usec, 1000000);
    EXPECT_EQ(g.c[1].type, IP_TTL);
    ASSERT_EQ(on(s, SOL_SOCKET, SO_TIMESTAMP, 0), 0);
    ASSERT_EQ(on(s, IPPROTO_IP, IP_RECVTTL, 0), 0);
    inject_ip(udp4(kStackIp, 5000, 0x28, 33));
    g = recv(s, 512);
    ASSERT_EQ(g.n, 10);
    EXPECT_EQ(g.controllen, 0u);
}
