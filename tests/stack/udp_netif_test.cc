// UDP sockets (send, receive, truncation, peek, connected filtering,
// errors) and the netif (ARP, ICMP echo, malformed frames).
#include <arpa/inet.h>
#include <sys/epoll.h>

#include "harness.h"

extern "C" {
#include "stats.h"
}

using namespace stktest;

namespace
{
ssize_t
udp_recv(stk_sock *s, Bytes *b, size_t cap, int flags,
         sockaddr_in *from = nullptr, int *mflags = nullptr)
{
    b->assign(cap, 0);
    iovec iov{b->data(), cap};
    sockaddr_in a{};
    msghdr m{};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_name = &a;
    m.msg_namelen = sizeof(a);
    ssize_t n = stk_sock_recvmsg(s, &m, flags);
    if (from)
        *from = a;
    if (mflags)
        *mflags = m.msg_flags;
    b->resize(n > 0 ? std::min((size_t)n, cap) : 0);
    return n;
}

ssize_t
udp_sendto(stk_sock *s, const Bytes &b, uint32_t ip, uint16_t port)
{
    iovec iov{(void *)b.data(), b.size()};
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(ip);
    a.sin_port = htons(port);
    msghdr m{};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_name = &a;
    m.msg_namelen = sizeof(a);
    return stk_sock_sendmsg(s, &m, 0);
}
} // namespace

TEST_F(Lab, udp_send_and_receive)
{
    stk_sock *s = udp_sock();
    ASSERT_EQ(bind_port(s, 5000, 0), 0);
    ASSERT_EQ(udp_sendto(s, pattern(100), kPeerIp, 6000), 100);
    Pkt p = one();
    EXPECT_EQ(p.proto, 17);
    EXPECT_EQ(p.sport, 5000);
    EXPECT_EQ(p.dport, 6000);
    EXPECT_EQ(p.payload, pattern(100));
    inject_ip(udp(kPeerIp, kStackIp, 6000, 5000, pattern(50, 3)));
    EXPECT_NE(events(s) & EPOLLIN, 0u);
    EXPECT_EQ(stk_sock_inq(s), 50);
    Bytes b;
    sockaddr_in from{};
    ASSERT_EQ(udp_recv(s, &b, 1000, 0, &from), 50);
    EXPECT_EQ(b, pattern(50, 3));
    EXPECT_EQ(ntohl(from.sin_addr.s_addr), kPeerIp);
    EXPECT_EQ(ntohs(from.sin_port), 6000);
    EXPECT_EQ(udp_recv(s, &b, 1000, 0), -EAGAIN);
}

TEST_F(Lab, udp_truncation_peek_and_zero_length)
{
    stk_sock *s = udp_sock();
    ASSERT_EQ(bind_port(s, 5000, 0), 0);
    inject_ip(udp(kPeerIp, kStackIp, 6000, 5000, pattern(100)));
    inject_ip(udp(kPeerIp, kStackIp, 6000, 5000, {}));
    Bytes b;
    int mf = 0;
    EXPECT_EQ(udp_recv(s, &b, 10, MSG_PEEK, nullptr, &mf), 10);
    EXPECT_NE(mf & MSG_TRUNC, 0);
    EXPECT_EQ(udp_recv(s, &b, 10, MSG_TRUNC, nullptr, &mf), 100); // real length
    EXPECT_NE(mf & MSG_TRUNC, 0);
    Bytes p100 = pattern(100);
    EXPECT_EQ(b, Bytes(p100.begin(), p100.begin() + 10));
    EXPECT_NE(events(s) & EPOLLIN, 0u); // the empty datagram
    EXPECT_EQ(udp_recv(s, &b, 10, 0, nullptr, &mf), 0);
    EXPECT_EQ(mf, 0);
    EXPECT_EQ(events(s) & EPOLLIN, 0u);
}

TEST_F(Lab, udp_connected_filters_and_default_peer)
{
    stk_sock *s = udp_sock();
    Bytes b;
    EXPECT_EQ(send_bytes(s, pattern(5)), -EDESTADDRREQ);
    ASSERT_EQ(connect_to(s, kPeerIp, 7000), 0);
    sockaddr_in a{};
    socklen_t al = sizeof(a);
    ASSERT_EQ(stk_sock_getname(s, (sockaddr *)&a, &al, false), 0);
    uint16_t port = ntohs(a.sin_port);
    EXPECT_GE(port, 32768);
    EXPECT_EQ(ntohl(a.sin_addr.s_addr), kStackIp);
    ASSERT_EQ(send_bytes(s, pattern(5)), 5);
    Pkt p = one();
    EXPECT_EQ(p.dport, 7000);
    inject_ip(udp(kPeerIp, kStackIp, 7001, port, pattern(5))); // other port
    EXPECT_EQ(udp_recv(s, &b, 100, 0), -EAGAIN);
    inject_ip(udp(kPeerIp, kStackIp, 7000, port, pattern(6)));
    EXPECT_EQ(udp_recv(s, &b, 100, 0), 6);
    // AF_UNSPEC dissolves the association (and the automatic bind).
    sockaddr un{};
    un.sa_family = AF_UNSPEC;
    ASSERT_EQ(stk_sock_connect(s, &un, sizeof(un)), 0);
    al = sizeof(a);
    ASSERT_EQ(stk_sock_getname(s, (sockaddr *)&a, &al, true), -ENOTCONN);
    EXPECT_EQ(send_bytes(s, pattern(5)), -EDESTADDRREQ);
}

TEST_F(Lab, udp_errors_and_rcvbuf_limit)
{
    stk_sock *s = udp_sock();
    int rb = 2048; // doubled: 4096, each datagram costs payload + 768
    ASSERT_EQ(stk_sock_setsockopt(s, SOL_SOCKET, SO_RCVBUF, &rb, 4), 0);
    ASSERT_EQ(bind_port(s, 5001, 0), 0);
    EXPECT_EQ(udp_sendto(s, Bytes(65508), kPeerIp, 1), -EMSGSIZE);
    EXPECT_EQ(udp_sendto(s, pattern(1), 0xffffffff, 1), -ENETUNREACH);
    EXPECT_EQ(udp_sendto(s, pattern(1), kPeerIp, 0), -EINVAL);
    // After an automatic bind, bind() is EINVAL (as Linux).
    stk_sock *t = udp_sock();
    ASSERT_EQ(udp_sendto(t, pattern(1), kPeerIp, 9), 1);
    drain();
    EXPECT_EQ(bind_port(t, 5002, 0), -EINVAL);
    for (int i = 0; i < 20; i++)
        inject_ip(udp(kPeerIp, kStackIp, 6000, 5001, pattern(100)));
    EXPECT_GT(base_stats.udp_rx_drop_full, 0u);
    int got = 0;
    Bytes b;
    while (udp_recv(s, &b, 200, 0) == 100)
        got++;
    EXPECT_GE(got, 4);
    EXPECT_LE(got, 6);
    EXPECT_EQ(got + (int)base_stats.udp_rx_drop_full, 20);
}

TEST_F(Lab, udp_large_datagram_fragmented_both_ways)
{
    stk_sock *s = udp_sock();
    ASSERT_EQ(bind_port(s, 5002, 0), 0);
    Bytes big = pattern(4000);
    ASSERT_EQ(udp_sendto(s, big, kPeerIp, 6000), 4000);
    std::vector<Pkt> v = drain();
    EXPECT_EQ(v.size(), 3u); // 1480 + 1480 + 1048 (+ 8 header)
    // Receive: fragments of one datagram reassembled.
    Bytes full = udp(kPeerIp, kStackIp, 6000, 5002, big); // IP packet
    Bytes l4(full.begin() + 20, full.end());
    size_t off = 0;
    while (off < l4.size()) {
        size_t n = std::min<size_t>(1480, l4.size() - off);
        bool more = off + n < l4.size();
        Bytes part(l4.begin() + off, l4.begin() + off + n);
        Bytes ip = ipv4(kPeerIp, kStackIp, 17, part,
                        (uint16_t)((more ? 0x2000 : 0) | (off / 8)), 77);
        inject_ip(ip);
        off += n;
    }
    Bytes b;
    EXPECT_EQ(udp_recv(s, &b, 5000, 0), 4000);
    EXPECT_EQ(b, big);
}

TEST_F(Lab, udp_to_closed_port_gets_icmp_unreachable)
{
    inject_ip(udp(kPeerIp, kStackIp, 6000, 5999, pattern(10)));
    Pkt p = one();
    EXPECT_EQ(p.proto, 1);
    EXPECT_EQ(p.icmp_type, 3);
    EXPECT_EQ(p.icmp_code, 3);
}

TEST_F(Lab, netif_arp_reply)
{
    Bytes a(28);
    a[1] = 1;    // htype ethernet
    a[2] = 0x08; // ptype IPv4
    a[4] = 6;
    a[5] = 4;
    a[7] = 1; // request
    memcpy(&a[8], kPeerMac, 6);
    a[14] = 10, a[15] = 0, a[16] = 0, a[17] = 1;
    a[24] = 10, a[25] = 0, a[26] = 0, a[27] = 2;
    uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    inject_raw(eth(bcast, kPeerMac, 0x0806, a));
    std::vector<Pkt> v = drain();
    ASSERT_EQ(v.size(), 1u);
    EXPECT_EQ(v[0].ethertype, 0x0806);
    EXPECT_EQ(v[0].arp_op, 2);
    EXPECT_EQ(v[0].arp_spa, kStackIp);
    EXPECT_EQ(v[0].arp_tpa, kPeerIp);
}

TEST_F(Lab, netif_icmp_echo_reply)
{
    Bytes icmp = {8, 0, 0, 0, 0x12, 0x34, 0, 1};
    Bytes data = pattern(56);
    icmp.insert(icmp.end(), data.begin(), data.end());
    uint16_t c = csum(icmp.data(), icmp.size());
    icmp[2] = c >> 8;
    icmp[3] = c & 0xff;
    inject_ip(ipv4(kPeerIp, kStackIp, 1, icmp));
    Pkt p = one();
    EXPECT_EQ(p.proto, 1);
    EXPECT_EQ(p.icmp_type, 0);
    EXPECT_EQ(p.dst, kPeerIp);
    EXPECT_EQ(p.payload, data);
}

TEST_F(Lab, netif_routing_decisions)
{
    EXPECT_TRUE(stk_route_ok(htonl(kPeerIp)));
    EXPECT_TRUE(stk_route_ok(htonl(kStackIp)));
    EXPECT_FALSE(stk_route_ok(htonl(0x7f000001))); // loopback
    EXPECT_FALSE(stk_route_ok(htonl(0x08080808))); // no gateway
    EXPECT_FALSE(stk_route_ok(htonl(0xe0000001))); // multicast
    EXPECT_FALSE(stk_route_ok(0));
    EXPECT_EQ(stk_local_ip(), htonl(kStackIp));
}

TEST_F(Lab, netif_malformed_frames_do_not_crash_and_traffic_continues)
{
    stk_sock *l = tcp_sock();
    ASSERT_EQ(bind_port(l, 8080, 0), 0);
    ASSERT_EQ(stk_sock_listen(l, 8), 0);
    stk_sock *u = udp_sock();
    ASSERT_EQ(bind_port(u, 5000, 0), 0);
    std::vector<Bytes> bad;
    Bytes good_tcp;
    {
        TcpSeg t;
        t.sport = 1234;
        t.dport = 8080;
        t.seq = 1;
        t.flags = SYN;
        good_tcp = tcp(kPeerIp, kStackIp, t);
    }
    Bytes good_udp = udp(kPeerIp, kStackIp, 1, 5000, pattern(20));
    // Truncated at every length (Ethernet, IP, TCP headers).
    for (size_t n = 0; n < good_tcp.size(); n++)
        bad.push_back(Bytes(good_tcp.begin(), good_tcp.begin() + n));
    for (size_t n = 0; n < good_udp.size(); n++)
        bad.push_back(Bytes(good_udp.begin(), good_udp.begin() + n));
    // IP total length larger / smaller than the frame, bad IHL, bad version.
    for (int k = 0; k < 6; k++) {
        Bytes b = good_tcp;
        switch (k) {
        case 0:
            b[2] = 0xff;
            b[3] = 0xff;
            break;
        case 1:
            b[2] = 0;
            b[3] = 10;
            break;
        case 2:
            b[0] = 0x44;
            break;
        case 3:
            b[0] = 0x4f;
            break;
        case 4:
            b[0] = 0x65;
            break;
        case 5:
            b[10] ^= 0xff;
            break; // bad IP checksum
        }
        bad.push_back(b);
    }
    // TCP: bad checksum, data offset beyond the segment, odd flag sets.
    {
        Bytes b = good_tcp;
        b[20 + 16] ^= 0x55;
        bad.push_back(b);
        b = good_tcp;
        b[20 + 12] = 0xf0;
        bad.push_back(b);
        b = good_tcp;
        b[20 + 12] = 0x10; // offset 4 bytes < 20
        bad.push_back(b);
    }
    for (uint8_t f :
         {uint8_t(SYN | FIN), uint8_t(SYN | RST), uint8_t(0xff), uint8_t(0),
          uint8_t(FIN), uint8_t(URG | PSH | FIN), uint8_t(RST), uint8_t(ACK)}) {
        TcpSeg t;
        t.sport = 2222;
        t.dport = 8080;
        t.seq = 99;
        t.ack = 12345;
        t.flags = f;
        t.payload = pattern(5);
        bad.push_back(tcp(kPeerIp, kStackIp, t));
    }
    {
        TcpSeg t; // malformed options: zero-length option, huge MSS option
        t.sport = 2223;
        t.dport = 8080;
        t.flags = SYN;
        Bytes seg = tcp(kPeerIp, kStackIp, t);
        Bytes b = seg;
        b[20 + 12] = 0x60; // claim 4 option bytes
        b.insert(b.begin() + 40, {2, 0, 3, 0});
        b[2] = 0;
        b[3] = (uint8_t)(b.size());
        bad.push_back(b);
    }
    // UDP: length larger / smaller than the payload, bad checksum.
    {
        Bytes b = good_udp;
        b[20 + 4] = 0x10;
        b[20 + 5] = 0;
        bad.push_back(b);
        b = good_udp;
        b[20 + 4] = 0;
        b[20 + 5] = 4;
        bad.push_back(b);
        b = good_udp;
        b[20 + 6] ^= 0x11;
        bad.push_back(b);
    }
    // IP fragments: overlapping, beyond 64 KB, lone last fragment.
    bad.push_back(ipv4(kPeerIp, kStackIp, 17, pattern(100), 0x2000 | 8190, 9));
    bad.push_back(ipv4(kPeerIp, kStackIp, 17, pattern(100), 0x2000, 10));
    bad.push_back(ipv4(kPeerIp, kStackIp, 17, pattern(100), 0x2000 | 5, 10));
    bad.push_back(ipv4(kPeerIp, kStackIp, 17, pattern(100), 3, 11));
    // ICMP truncated / bad checksum / unknown type; unknown protocol.
    bad.push_back(ipv4(kPeerIp, kStackIp, 1, {8, 0}));
    bad.push_back(ipv4(kPeerIp, kStackIp, 1, {8, 0, 1, 2, 3, 4, 5, 6}));
    bad.push_back(ipv4(kPeerIp, kStackIp, 1, {42, 0, 0, 0, 0, 0, 0, 0}));
    bad.push_back(ipv4(kPeerIp, kStackIp, 99, pattern(30)));
    // Broadcast-source and multicast-destination TCP.
    {
        TcpSeg t;
        t.sport = 1;
        t.dport = 8080;
        t.flags = SYN;
        bad.push_back(tcp(kPeerIp, 0x0a0000ff, t));
        bad.push_back(tcp(kPeerIp, 0xe0000001, t));
    }
    for (const Bytes &ip : bad) {
        inject_ip(ip);
        advance(10);
    }
    // ARP garbage and unknown ethertypes.
    inject_raw(eth(kStackMac, kPeerMac, 0x0806, {0, 1, 8, 0, 6, 4}));
    inject_raw(eth(kStackMac, kPeerMac, 0x0806, Bytes(28, 0xff)));
    inject_raw(eth(kStackMac, kPeerMac, 0x86dd, pattern(60)));
    inject_raw(eth(kStackMac, kPeerMac, 0x8100, pattern(60)));
    inject_raw(Bytes(5, 0));
    advance(2000);
    drain();
    // Normal traffic still works.
    inject_ip(udp(kPeerIp, kStackIp, 1, 5000, pattern(20)));
    Bytes b;
    int got = 0;
    b.assign(100, 0);
    iovec iov = {b.data(), b.size()};
    msghdr m{};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    while (stk_sock_recvmsg(u, &m, 0) == 20)
        got++;
    EXPECT_GE(got, 1);
    // Clear what SYNs may have queued, then a clean connection works.
    stk_sock *x = nullptr;
    while (stk_sock_accept(l, &x, nullptr, nullptr) == 0)
        socks_.push_back(x);
    advance(100000); // let half-open handshakes time out
    drain();
    Conn c = passive_open(l, 8080, 50000);
    ASSERT_NE(c.s, nullptr);
    peer_send(c, pattern(100));
    Bytes in;
    EXPECT_EQ(recv_bytes(c.s, &in, 1000), 100);
}

// Linux autobinds in send() before it fails with EDESTADDRREQ (inet
// autobind comes first), so a later bind() is EINVAL; AF_UNSPEC
// destinations are taken as AF_INET ones by udp_sendmsg.
TEST_F(Lab, udp_failed_send_still_autobinds_and_af_unspec_destination)
{
    stk_sock *s = udp_sock();
    EXPECT_EQ(send_bytes(s, pattern(1)), -EDESTADDRREQ);
    sockaddr_in a{};
    socklen_t al = sizeof(a);
    ASSERT_EQ(stk_sock_getname(s, (sockaddr *)&a, &al, false), 0);
    EXPECT_GE(ntohs(a.sin_port), 32768);
    EXPECT_EQ(bind_port(s, 5003, 0), -EINVAL);
    EXPECT_TRUE(drain().empty());
    // AF_UNSPEC with an address: sent there (no connection needed).
    sockaddr_in to{};
    to.sin_family = AF_UNSPEC;
    to.sin_addr.s_addr = htonl(kPeerIp);
    to.sin_port = htons(6001);
    Bytes d = pattern(3);
    iovec iov{d.data(), d.size()};
    msghdr m{};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_name = &to;
    m.msg_namelen = sizeof(to);
    ASSERT_EQ(stk_sock_sendmsg(s, &m, 0), 3);
    Pkt p = one();
    EXPECT_EQ(p.dport, 6001);
    EXPECT_EQ(p.sport, ntohs(a.sin_port));
    to.sin_port = 0; // ... but it needs a port, as AF_INET does
    EXPECT_EQ(stk_sock_sendmsg(s, &m, 0), -EINVAL);
    m.msg_namelen = 4; // and a whole sockaddr_in
    EXPECT_EQ(stk_sock_sendmsg(s, &m, 0), -EINVAL);
    to.sin_family = AF_INET6;
    m.msg_namelen = sizeof(to);
    EXPECT_EQ(stk_sock_sendmsg(s, &m, 0), -EAFNOSUPPORT);
}

// Frames lwIP drops on its own are counted once each in rx_drop_stack,
// bad checksums also in rx_drop_csum; frames it uses are not.
TEST_F(Lab, netif_lwip_drops_are_counted)
{
    stk_sock *u = udp_sock();
    ASSERT_EQ(bind_port(u, 5000, 0), 0);
    stk_sock *l = tcp_sock();
    ASSERT_EQ(bind_port(l, 8080, 0), 0);
    ASSERT_EQ(stk_sock_listen(l, 8), 0);
    auto counts = [] {
        return std::make_pair(base_stats.rx_drop_stack,
                              base_stats.rx_drop_csum);
    };
    using P = std::pair<uint64_t, uint64_t>;
    // Wanted frames: no drop.
    inject_ip(udp(kPeerIp, kStackIp, 6000, 5000, pattern(20)));
    Conn c = passive_open(l, 8080, 50000);
    ASSERT_NE(c.s, nullptr);
    peer_send(c, pattern(10));
    drain();
    EXPECT_EQ(counts(), P(0, 0));
    // Bad TCP checksum.
    {
        TcpSeg t;
        t.sport = 50000;
        t.dport = 8080;
        t.seq = c.snd;
        t.ack = c.rcv;
        t.flags = ACK;
        t.payload = pattern(5);
        Bytes b = tcp(kPeerIp, kStackIp, t);
        b[20 + 16] ^= 0x55;
        inject_ip(b);
    }
    EXPECT_EQ(counts(), P(1, 1));
    // Bad UDP checksum, bad IP header checksum.
    {
        Bytes b = udp(kPeerIp, kStackIp, 6000, 5000, pattern(20));
        b[20 + 6] ^= 0x11;
        inject_ip(b);
        b = udp(kPeerIp, kStackIp, 6000, 5000, pattern(20));
        b[10] ^= 0xff;
        inject_ip(b);
    }
    EXPECT_EQ(counts(), P(3, 3));
    // Unwanted: UDP to a closed port (answered by an ICMP port
    // unreachable), a SYN to a closed port (RST), another address, an
    // unknown protocol and ethertype, a truncated UDP header: counted
    // once each, whatever layers lwIP counted them in.
    inject_ip(udp(kPeerIp, kStackIp, 6000, 5999, pattern(20)));
    {
        TcpSeg t;
        t.sport = 1234;
        t.dport = 8081;
        t.seq = 1;
        t.flags = SYN;
        inject_tcp(t);
    }
    inject_ip(udp(kPeerIp, 0x0a000009, 6000, 5000, pattern(20)));
    inject_ip(ipv4(kPeerIp, kStackIp, 99, pattern(30)));
    inject_raw(eth(kStackMac, kPeerMac, 0x86dd, pattern(60)));
    inject_ip(ipv4(kPeerIp, kStackIp, 17, pattern(4)));
    EXPECT_EQ(counts(), P(9, 3));
    std::vector<Pkt> v = drain();
    ASSERT_EQ(v.size(), 3u); // port unreachable, RST, protocol unreachable
    // Still fine afterwards.
    Bytes in;
    EXPECT_EQ(recv_bytes(c.s, &in, 100), 10);
    EXPECT_EQ(counts(), P(9, 3));
}

// Shut down for reading with nothing queued: a call that may not wait
// gets EAGAIN, a blocking one 0 (__skb_wait_for_more_packets). A
// disconnect keeps an address given to bind() and releases the port.
TEST_F(Lab, udp_shut_rd_and_disconnect_keep_linux_semantics)
{
    stk_sock *s = udp_sock();
    ASSERT_EQ(bind_port(s, 0), 0);
    EXPECT_EQ(stk_sock_shutdown(s, SHUT_RD), -ENOTCONN);
    Bytes b;
    EXPECT_EQ(udp_recv(s, &b, 16, MSG_DONTWAIT), -EAGAIN);
    EXPECT_EQ(udp_recv(s, &b, 16, 0), 0);

    stk_sock *u = udp_sock();
    ASSERT_EQ(bind_port(u, 0), 0);
    ASSERT_EQ(connect_to(u, kPeerIp, 6000), 0);
    sockaddr_in un{};
    un.sin_family = AF_UNSPEC;
    ASSERT_EQ(stk_sock_connect(u, (sockaddr *)&un, sizeof(un)), 0);
    sockaddr_in a{};
    socklen_t al = sizeof(a);
    ASSERT_EQ(stk_sock_getname(u, (sockaddr *)&a, &al, false), 0);
    EXPECT_EQ(ntohl(a.sin_addr.s_addr), kStackIp);
    EXPECT_EQ(a.sin_port, 0);
    EXPECT_EQ(udp_sendto(u, pattern(2), kPeerIp, 6000), 2);
    Pkt p = one();
    EXPECT_EQ(p.dport, 6000);
    al = sizeof(a);
    ASSERT_EQ(stk_sock_getname(u, (sockaddr *)&a, &al, false), 0);
    EXPECT_EQ(ntohl(a.sin_addr.s_addr), kStackIp);
    EXPECT_EQ(ntohs(a.sin_port), p.sport);
}
