// Errors that end a connect: an ICMP error quoting the SYN (Linux's
// tcp_v4_err in SYN-SENT), and a next hop that never answers ARP or
// neighbour discovery (Linux's arp_error_report / ndisc_error_report:
// EHOSTUNREACH after 3 probes, 1 s apart). Connected UDP sockets hear
// only the fatal ICMP errors (net and host unreachable are transient).
#include <arpa/inet.h>
#include <sys/epoll.h>

#include <algorithm>

#include "harness.h"

extern "C" {
#include "stats.h"
}

using namespace stktest;

namespace
{

constexpr uint32_t kNobody = 0x0a000063; // 10.0.0.99: on the subnet, silent
constexpr In6 kNobody6 = {0xfd, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x99};

class Unreach : public Lab
{
  protected:
    int
    so_error(stk_sock *s)
    {
        int e = -1;
        socklen_t l = sizeof(e);
        EXPECT_EQ(stk_sock_getsockopt(s, SOL_SOCKET, SO_ERROR, &e, &l), 0);
        return e;
    }
    // ICMP type/code from the peer quoting the stack's segment `seg`.
    void
    icmp_about(uint8_t type, uint8_t code, const TcpSeg &seg)
    {
        Bytes q = tcp(kStackIp, kPeerIp, seg);
        q.resize(20 + 8); // the IP header and 8 bytes, as routers quote
        Bytes m(8, 0);
        m[0] = type;
        m[1] = code;
        m.insert(m.end(), q.begin(), q.end());
        uint16_t c = csum(m.data(), m.size());
        m[2] = c >> 8;
        m[3] = c & 0xff;
        inject_ip(ipv4(kPeerIp, kStackIp, 1, m));
    }
    // A non-blocking connect to the peer's port 80: its SYN.
    Pkt
    syn_to_peer(stk_sock *s)
    {
        EXPECT_EQ(connect_to(s, kPeerIp, 80), -EINPROGRESS);
        for (const Pkt &p : drain())
            if (p.ethertype == 0x0800 && (p.flags & SYN))
                return p;
        ADD_FAILURE() << "no SYN";
        return Pkt{};
    }
    static TcpSeg
    seg_of(const Pkt &p)
    {
        TcpSeg t;
        t.sport = p.sport;
        t.dport = p.dport;
        t.seq = p.seq;
        t.flags = SYN;
        return t;
    }
    // ARP requests the stack sent for ip among v.
    static int
    arp_requests(const std::vector<Pkt> &v, uint32_t ip)
    {
        return (int)std::count_if(v.begin(), v.end(), [&](const Pkt &p) {
            return p.arp_op == 1 && p.arp_tpa == ip;
        });
    }
};

} // namespace

TEST_F(Unreach, icmp_host_unreachable_quoting_the_syn_fails_the_connect)
{
    stk_sock *s = tcp_sock();
    Pkt syn = syn_to_peer(s);
    icmp_about(3, 1, seg_of(syn));
    EXPECT_EQ(events(s) & (EPOLLERR | EPOLLHUP),
              (uint32_t)(EPOLLERR | EPOLLHUP));
    EXPECT_EQ(so_error(s), EHOSTUNREACH);
    EXPECT_EQ(so_error(s), 0);
    // No RST for a connection that never synchronized, no SYN again.
    advance(3000);
    for (const Pkt &p : drain())
        EXPECT_FALSE(p.ethertype == 0x0800 && p.proto == 6) << int(p.flags);
}

TEST_F(Unreach, icmp_port_unreachable_and_time_exceeded_map_as_linux)
{
    struct {
        uint8_t type, code;
        int err;
    } cases[] = {
        {3, 3, ECONNREFUSED},  {3, 0, ENETUNREACH}, {3, 13, EHOSTUNREACH},
        {11, 0, EHOSTUNREACH}, {12, 0, EPROTO},
    };
    for (auto &c : cases) {
        stk_sock *s = tcp_sock();
        icmp_about(c.type, c.code, seg_of(syn_to_peer(s)));
        EXPECT_EQ(so_error(s), c.err) << int(c.type) << "/" << int(c.code);
    }
}

TEST_F(Unreach, icmp_quoting_another_sequence_number_is_ignored)
{
    stk_sock *s = tcp_sock();
    TcpSeg t = seg_of(syn_to_peer(s));
    uint64_t before = base_stats.rx_icmp_out_of_window;
    t.seq += 1000; // not the SYN's: forged, or stale
    icmp_about(3, 1, t);
    EXPECT_EQ(so_error(s), 0);
    EXPECT_EQ(events(s) & EPOLLERR, 0u);
    EXPECT_EQ(base_stats.rx_icmp_out_of_window, before + 1);
}

TEST_F(Unreach, icmp_on_an_established_connection_is_soft)
{
    Conn c = active_open();
    TcpSeg t;
    t.sport = c.sport;
    t.dport = c.pport;
    t.seq = c.rcv;
    icmp_about(3, 1, t);
    EXPECT_EQ(so_error(c.s), 0);
    EXPECT_EQ(events(c.s) & EPOLLERR, 0u);
    ASSERT_EQ(send_bytes(c.s, pattern(100)), 100);
    EXPECT_EQ(pull(c, 100), pattern(100));
}

// Linux: three ARP requests 1 s apart, then the connect fails with
// EHOSTUNREACH (differential 308).
TEST_F(Unreach, connect_to_a_silent_neighbour_fails_after_three_arp_probes)
{
    uint64_t before = base_stats.tx_neigh_unresolved;
    stk_sock *s = tcp_sock();
    ASSERT_EQ(connect_to(s, kNobody, 80), -EINPROGRESS);
    std::vector<Pkt> sent = drain();
    for (int ms = 0; ms < 2000; ms += 100) {
        advance(100);
        std::vector<Pkt> v = drain();
        sent.insert(sent.end(), v.begin(), v.end());
    }
    EXPECT_EQ(so_error(s), 0) << "still resolving at 2 s";
    for (int ms = 0; ms < 1500; ms += 100) {
        advance(100);
        std::vector<Pkt> v = drain();
        sent.insert(sent.end(), v.begin(), v.end());
    }
    EXPECT_EQ(arp_requests(sent, kNobody), 3);
    EXPECT_NE(events(s) & EPOLLERR, 0u);
    EXPECT_EQ(so_error(s), EHOSTUNREACH);
    EXPECT_GE(base_stats.tx_neigh_unresolved, before + 1);
    sockaddr_in a{};
    socklen_t al = sizeof(a);
    EXPECT_EQ(stk_sock_getname(s, (sockaddr *)&a, &al, true), -ENOTCONN);
}

// A connected UDP socket is not told: host unreachable is transient.
TEST_F(Unreach, udp_to_a_silent_neighbour_gets_no_error)
{
    stk_sock *u = udp_sock();
    ASSERT_EQ(connect_to(u, kNobody, 7009), 0);
    ASSERT_EQ(send_bytes(u, pattern(10)), 10);
    advance(4000);
    drain();
    EXPECT_EQ(so_error(u), 0);
    EXPECT_EQ(events(u) & EPOLLERR, 0u);
    EXPECT_EQ(send_bytes(u, pattern(10)), 10);
}

TEST_F(Unreach, ipv6_connect_to_a_silent_neighbour_fails_after_three_probes)
{
    v6_ = true;
    stk_sock *s = tcp_sock();
    sockaddr_in6 a = sin6_of(kNobody6, 80);
    ASSERT_EQ(stk_sock_connect(s, (sockaddr *)&a, sizeof(a)), -EINPROGRESS);
    drain();
    advance(2000);
    drain();
    EXPECT_EQ(so_error(s), 0) << "still resolving at 2 s";
    advance(1500);
    drain();
    EXPECT_NE(events(s) & EPOLLERR, 0u);
    EXPECT_EQ(so_error(s), EHOSTUNREACH);
}
