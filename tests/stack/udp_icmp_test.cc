// ICMP errors for UDP sockets (Linux __udp4_lib_err with IP_RECVERR off):
// a connected socket gets POLLERR, then the error from the next recv, send
// or SO_ERROR; unconnected sockets and malformed messages are ignored.
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

class Icmp : public Lab
{
  protected:
    // A connected UDP socket to the peer's port 7009; returns its port.
    stk_sock *
    connected(uint16_t *port)
    {
        stk_sock *s = udp_sock();
        EXPECT_EQ(connect_to(s, kPeerIp, 7009), 0);
        sockaddr_in a{};
        socklen_t al = sizeof(a);
        EXPECT_EQ(stk_sock_getname(s, (sockaddr *)&a, &al, false), 0);
        *port = ntohs(a.sin_port);
        return s;
    }

    // The ICMP message (type, code) about a datagram the stack sent from
    // sport to the peer's dport, quoting `quote` bytes of it (0: all).
    static Bytes
    icmp_about(uint8_t type, uint8_t code, uint16_t sport, uint16_t dport,
               size_t quote = 0)
    {
        Bytes dgram = udp(kStackIp, kPeerIp, sport, dport, pattern(4));
        if (quote != 0 && quote < dgram.size())
            dgram.resize(quote);
        Bytes m(8 + dgram.size(), 0);
        m[0] = type;
        m[1] = code;
        std::copy(dgram.begin(), dgram.end(), m.begin() + 8);
        return m;
    }
    static Bytes
    with_csum(Bytes m)
    {
        m[2] = m[3] = 0;
        uint16_t c = csum(m.data(), m.size());
        m[2] = c >> 8;
        m[3] = c & 0xff;
        return m;
    }
    void
    inject_icmp(const Bytes &m)
    {
        inject_ip(ipv4(kPeerIp, kStackIp, 1, with_csum(m)));
    }

    static ssize_t
    recv1(stk_sock *s)
    {
        uint8_t b[64];
        iovec iov{b, sizeof(b)};
        msghdr m{};
        m.msg_iov = &iov;
        m.msg_iovlen = 1;
        return stk_sock_recvmsg(s, &m, 0);
    }
    static int
    so_error(stk_sock *s)
    {
        int e = -1;
        socklen_t l = sizeof(e);
        EXPECT_EQ(stk_sock_getsockopt(s, SOL_SOCKET, SO_ERROR, &e, &l), 0);
        return e;
    }
};

} // namespace

TEST_F(Icmp, port_unreachable_reaches_connected_socket_as_linux)
{
    uint16_t port;
    stk_sock *s = connected(&port);
    ASSERT_EQ(send_bytes(s, pattern(4)), 4);
    Pkt out = one();
    EXPECT_EQ(out.sport, port);
    uint32_t g0 = 0, g1 = 0;
    stk_sock_events(s, &g0);
    int calls = notify_calls_;
    stk_sock_set_ctx(s, this);
    inject_icmp(icmp_about(3, 3, port, 7009));
    EXPECT_TRUE(drain().empty()); // nothing answers an ICMP error
    uint32_t ev = stk_sock_events(s, &g1);
    EXPECT_NE(ev & EPOLLERR, 0u);
    EXPECT_EQ(ev & EPOLLIN, 0u);
    EXPECT_NE(g1, g0);
    EXPECT_GT(notify_calls_, calls);
    // recv: the error once, then the socket is normal again.
    EXPECT_EQ(recv1(s), -ECONNREFUSED);
    EXPECT_EQ(recv1(s), -EAGAIN);
    EXPECT_EQ(events(s) & EPOLLERR, 0u);
    // send: the next error is returned by send, which sends nothing.
    ASSERT_EQ(send_bytes(s, pattern(4)), 4);
    drain();
    inject_icmp(icmp_about(3, 3, port, 7009));
    EXPECT_EQ(send_bytes(s, pattern(4)), -ECONNREFUSED);
    EXPECT_TRUE(drain().empty());
    EXPECT_EQ(send_bytes(s, pattern(4)), 4);
    drain();
    // SO_ERROR reads it and clears it.
    inject_icmp(icmp_about(3, 3, port, 7009));
    EXPECT_NE(events(s) & EPOLLERR, 0u);
    EXPECT_EQ(so_error(s), ECONNREFUSED);
    EXPECT_EQ(so_error(s), 0);
    EXPECT_EQ(events(s) & EPOLLERR, 0u);
    EXPECT_EQ(recv1(s), -EAGAIN);
    EXPECT_EQ(base_stats.rx_drop_stack, 0u); // consumed, not dropped
}

TEST_F(Icmp, error_comes_before_queued_data)
{
    uint16_t port;
    stk_sock *s = connected(&port);
    inject_ip(udp(kPeerIp, kStackIp, 7009, port, pattern(7)));
    inject_icmp(icmp_about(3, 3, port, 7009));
    EXPECT_EQ(events(s) & (EPOLLIN | EPOLLERR), (uint32_t)(EPOLLIN | EPOLLERR));
    EXPECT_EQ(recv1(s), -ECONNREFUSED);
    EXPECT_EQ(recv1(s), 7);
}

TEST_F(Icmp, codes_map_to_linux_errnos)
{
    uint16_t port;
    stk_sock *s = connected(&port);
    struct {
        uint8_t type, code;
        int err;
    } cases[] = {
        {3, 0, 0}, // net and host unreachable: transient (RFC 1122
        {3, 1, 0}, // 3.2.2.1), Linux's icmp_err_convert[].fatal 0
        {3, 2, ENOPROTOOPT}, {3, 3, ECONNREFUSED},  {3, 4, EMSGSIZE},
        {3, 7, EHOSTDOWN},   {3, 13, EHOSTUNREACH}, {12, 0, EPROTO},
        {11, 0, 0}, // time exceeded: not reported without IP_RECVERR
        {4, 0, 0},  // source quench
        {3, 16, 0}, // unknown code
    };
    for (auto &c : cases) {
        inject_icmp(icmp_about(c.type, c.code, port, 7009));
        EXPECT_EQ(so_error(s), c.err) << int(c.type) << "/" << int(c.code);
    }
    // The whole original datagram may be quoted, or just 28 bytes.
    inject_icmp(icmp_about(3, 3, port, 7009, 28));
    EXPECT_EQ(so_error(s), ECONNREFUSED);
}

TEST_F(Icmp, unconnected_or_other_sockets_ignore_it)
{
    uint16_t port;
    stk_sock *c = connected(&port);
    stk_sock *u = udp_sock();
    ASSERT_EQ(bind_port(u, 5000, 0), 0);
    ASSERT_EQ(send_to(u, pattern(4), kPeerIp, 7009), 4);
    drain();
    inject_icmp(icmp_about(3, 3, 5000, 7009));     // unconnected: ignored
    inject_icmp(icmp_about(3, 3, port, 7010));     // other peer port
    inject_icmp(icmp_about(3, 3, port + 1, 7009)); // other local port
    {
        Bytes q = icmp_about(3, 3, port, 7009); // other peer address
        q[8 + 19] ^= 1;
        q[8 + 10] = q[8 + 11] = 0;
        uint16_t ck = csum(&q[8], 20);
        q[8 + 10] = ck >> 8;
        q[8 + 11] = ck & 0xff;
        inject_icmp(q);
    }
    EXPECT_EQ(events(u) & EPOLLERR, 0u);
    EXPECT_EQ(events(c) & EPOLLERR, 0u);
    EXPECT_EQ(recv1(u), -EAGAIN);
    EXPECT_EQ(so_error(c), 0);
    // Once disconnected (AF_UNSPEC) the socket no longer gets them either.
    sockaddr un{};
    un.sa_family = AF_UNSPEC;
    ASSERT_EQ(stk_sock_connect(c, &un, sizeof(un)), 0);
    inject_icmp(icmp_about(3, 3, port, 7009));
    EXPECT_EQ(so_error(c), 0);
}

TEST_F(Icmp, malformed_messages_are_ignored_and_counted)
{
    uint16_t port;
    stk_sock *s = connected(&port);
    Bytes good = with_csum(icmp_about(3, 3, port, 7009));
    std::vector<Bytes> bad;
    // Truncated ICMP (every length short of header + IP + 8 bytes).
    for (size_t n = 0; n < 8 + 28; n++) {
        Bytes m(good.begin(), good.begin() + n);
        if (n >= 4)
            m = with_csum(m);
        bad.push_back(ipv4(kPeerIp, kStackIp, 1, m));
    }
    auto mangle = [&](size_t off, uint8_t v, bool fix = true) {
        Bytes m = good;
        m[off] = v;
        return ipv4(kPeerIp, kStackIp, 1, fix ? with_csum(m) : m);
    };
    bad.push_back(mangle(2, good[2] ^ 0x40, false)); // bad ICMP checksum
    bad.push_back(mangle(8, 0x44));                  // quoted IHL < 5
    bad.push_back(mangle(8, 0x4f));                  // quoted IHL past end
    bad.push_back(mangle(8, 0x65));                  // quoted version 6
    bad.push_back(mangle(8 + 9, 6));                 // quoted TCP
    bad.push_back(mangle(8 + 7, 1));                 // quoted later fragment
    bad.push_back(mangle(8 + 15, 3));                // quoted source not us
    {
        Bytes ip = ipv4(kPeerIp, kStackIp, 1, good);
        ip[10] ^= 0x11; // bad outer IP checksum
        bad.push_back(ip);
        ip = ipv4(kPeerIp, kStackIp, 1, good);
        ip[2] = 0xff; // outer total length past the frame
        bad.push_back(ip);
        bad.push_back(ipv4(kPeerIp, kStackIp, 1, good, 0x2000, 5)); // fragment
        bad.push_back(ipv4(kPeerIp, 0x0a000009, 1, good));          // not us
    }
    for (const Bytes &ip : bad)
        inject_ip(ip);
    drain();
    EXPECT_EQ(events(s) & EPOLLERR, 0u);
    EXPECT_EQ(so_error(s), 0);
    // The ones lwIP then saw (bad checksums, truncated) count as drops.
    EXPECT_GT(base_stats.rx_drop_stack, 0u);
    EXPECT_GT(base_stats.rx_drop_csum, 0u);
    // A well-formed one still works.
    inject_ip(ipv4(kPeerIp, kStackIp, 1, good));
    EXPECT_EQ(so_error(s), ECONNREFUSED);
}
