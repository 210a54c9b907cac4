// UDP multicast (stack/sock_mcast.c, sock_udp.c): IGMP reports and
// leaves on the wire, delivery by group and port to every socket that
// takes it, source filters, TTL and loop, and the options' values and
// errno as Linux gives them.
#include <arpa/inet.h>
#include <netinet/in.h>

#include "harness.h"

using namespace stktest;

namespace
{
constexpr uint32_t kGroup = 0xef010101;  // 239.1.1.1
constexpr uint32_t kGroup2 = 0xef020202; // 239.2.2.2
constexpr uint32_t kOther = 0x0a000009;  // 10.0.0.9, another sender
constexpr int kIfindex = 7;              // the port's kernel interface

// One frame as sent, with what the harness's parser leaves out.
struct Raw {
    uint8_t dmac[6] = {};
    uint16_t type = 0;
    uint8_t ttl = 0, proto = 0;
    uint32_t src = 0, dst = 0;
    bool router_alert = false;
    // IGMP
    uint8_t igmp_type = 0;
    uint32_t igmp_group = 0;
    bool igmp_csum_ok = false;
    // UDP
    uint16_t dport = 0;
    Bytes payload;
};

uint32_t
get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
}

Raw
raw(const Bytes &f)
{
    Raw r;
    memcpy(r.dmac, f.data(), 6);
    r.type = (uint16_t)(f[12] << 8 | f[13]);
    if (r.type != 0x0800)
        return r;
    const uint8_t *ip = &f[14];
    size_t ihl = (ip[0] & 0xf) * 4u, tot = (size_t)(ip[2] << 8 | ip[3]);
    r.ttl = ip[8];
    r.proto = ip[9];
    r.src = get32(ip + 12);
    r.dst = get32(ip + 16);
    r.router_alert = ihl >= 24 && ip[20] == 0x94;
    const uint8_t *l4 = ip + ihl;
    if (r.proto == 2 && tot >= ihl + 8) {
        r.igmp_type = l4[0];
        r.igmp_group = get32(l4 + 4);
        r.igmp_csum_ok = csum(l4, tot - ihl) == 0;
    } else if (r.proto == 17 && tot >= ihl + 8) {
        r.dport = (uint16_t)(l4[2] << 8 | l4[3]);
        r.payload.assign(l4 + 8, ip + tot);
    }
    return r;
}

ip_mreq
mreq(uint32_t group, uint32_t ifaddr = 0)
{
    ip_mreq m{};
    m.imr_multiaddr.s_addr = htonl(group);
    m.imr_interface.s_addr = htonl(ifaddr);
    return m;
}

ip_mreq_source
mreq_src(uint32_t group, uint32_t src, uint32_t ifaddr = 0)
{
    ip_mreq_source m{};
    m.imr_multiaddr.s_addr = htonl(group);
    m.imr_interface.s_addr = htonl(ifaddr);
    m.imr_sourceaddr.s_addr = htonl(src);
    return m;
}

template <typename T>
int
setopt(stk_sock *s, int name, const T &v, socklen_t len = sizeof(T))
{
    return stk_sock_setsockopt(s, IPPROTO_IP, name, &v, len);
}

int
getint(stk_sock *s, int name, socklen_t len = sizeof(int))
{
    int v = -1;
    socklen_t want = len < sizeof(int) ? 1 : sizeof(int);
    EXPECT_EQ(stk_sock_getsockopt(s, IPPROTO_IP, name, &v, &len), 0);
    EXPECT_EQ(len, want);
    return len == 1 ? (v & 0xff) : v;
}

ssize_t
recv_from(stk_sock *s, Bytes *b, uint32_t *from = nullptr)
{
    b->assign(2048, 0);
    iovec iov{b->data(), b->size()};
    sockaddr_in a{};
    msghdr m{};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_name = &a;
    m.msg_namelen = sizeof(a);
    ssize_t n = stk_sock_recvmsg(s, &m, 0);
    b->resize(n > 0 ? (size_t)n : 0);
    if (from)
        *from = ntohl(a.sin_addr.s_addr);
    return n;
}

} // namespace

class Mcast : public Lab
{
  protected:
    void
    SetUp() override
    {
        Lab::SetUp();
        stk_set_ifindex(kIfindex);
    }

    // Frames the stack sent, raw, ARP requests answered, IPv6 (MLD's
    // reports of the netif's solicited-node groups) left out.
    std::vector<Raw>
    frames()
    {
        std::vector<Raw> v;
        while (!txq_.empty()) {
            Bytes f = txq_.front();
            txq_.pop_front();
            Raw r = raw(f);
            if (r.type == 0x0806) {
                answer_arp();
                continue;
            }
            if (r.type == 0x86dd)
                continue;
            v.push_back(r);
        }
        return v;
    }

    // The peer's ARP reply (the stack only asks for the peer).
    void
    answer_arp()
    {
        Bytes a = {0, 1, 8, 0, 6, 4, 0, 2};
        a.insert(a.end(), kPeerMac, kPeerMac + 6);
        for (int i = 24; i >= 0; i -= 8)
            a.push_back((uint8_t)(kPeerIp >> i));
        a.insert(a.end(), kStackMac, kStackMac + 6);
        for (int i = 24; i >= 0; i -= 8)
            a.push_back((uint8_t)(kStackIp >> i));
        inject_raw(eth(kStackMac, kPeerMac, 0x0806, a));
    }

    // A datagram from src to group:port, as the wire brings it.
    void
    inject_mcast(uint32_t src, uint32_t group, uint16_t port, const Bytes &b)
    {
        uint8_t mac[6] = {0x01,
                          0x00,
                          0x5e,
                          (uint8_t)((group >> 16) & 0x7f),
                          (uint8_t)(group >> 8),
                          (uint8_t)group};
        inject_raw(eth(mac, kPeerMac, 0x0800, udp(src, group, 4000, port, b)));
    }

    stk_sock *
    receiver(uint16_t port, uint32_t ip = 0)
    {
        stk_sock *s = udp_sock();
        int one = 1;
        EXPECT_EQ(
            stk_sock_setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)),
            0);
        EXPECT_EQ(bind_port(s, port, ip), 0);
        return s;
    }
};

TEST_F(Mcast, join_sends_igmp_report_and_drop_sends_leave)
{
    stk_sock *s = receiver(5000);
    ASSERT_EQ(setopt(s, IP_ADD_MEMBERSHIP, mreq(kGroup)), 0);
    std::vector<Raw> v = frames();
    ASSERT_EQ(v.size(), 1u);
    const uint8_t mac[6] = {0x01, 0x00, 0x5e, 0x01, 0x01, 0x01};
    EXPECT_EQ(memcmp(v[0].dmac, mac, 6), 0);
    EXPECT_EQ(v[0].proto, 2);
    EXPECT_EQ(v[0].dst, kGroup);
    EXPECT_EQ(v[0].src, kStackIp);
    EXPECT_EQ(v[0].ttl, 1);
    EXPECT_TRUE(v[0].router_alert);
    EXPECT_EQ(v[0].igmp_type, 0x16); // IGMPv2 membership report
    EXPECT_EQ(v[0].igmp_group, kGroup);
    EXPECT_TRUE(v[0].igmp_csum_ok);

    // IGMPv2 repeats the unsolicited report once, within 10 s.
    advance(11000);
    v = frames();
    ASSERT_EQ(v.size(), 1u);
    EXPECT_EQ(v[0].igmp_type, 0x16);
    EXPECT_EQ(v[0].igmp_group, kGroup);

    // A second socket joining the same group adds no report.
    stk_sock *t = receiver(5000);
    ASSERT_EQ(setopt(t, IP_ADD_MEMBERSHIP, mreq(kGroup)), 0);
    EXPECT_TRUE(frames().empty());
    // Leaving: the group stays while t is a member, then a leave.
    ASSERT_EQ(setopt(s, IP_DROP_MEMBERSHIP, mreq(kGroup)), 0);
    EXPECT_TRUE(frames().empty());
    ASSERT_EQ(setopt(t, IP_DROP_MEMBERSHIP, mreq(kGroup)), 0);
    v = frames();
    ASSERT_EQ(v.size(), 1u);
    EXPECT_EQ(v[0].igmp_type, 0x17);  // leave group
    EXPECT_EQ(v[0].dst, 0xe0000002u); // all routers
    EXPECT_EQ(v[0].igmp_group, kGroup);
    EXPECT_TRUE(v[0].igmp_csum_ok);
}

TEST_F(Mcast, close_leaves_the_groups)
{
    stk_sock *s = receiver(5000);
    ASSERT_EQ(setopt(s, IP_ADD_MEMBERSHIP, mreq(kGroup)), 0);
    ASSERT_EQ(setopt(s, IP_ADD_MEMBERSHIP, mreq(kGroup2)), 0);
    EXPECT_EQ(frames().size(), 2u);
    close_all();
    std::vector<Raw> v = frames();
    ASSERT_EQ(v.size(), 2u);
    EXPECT_EQ(v[0].igmp_type, 0x17);
    EXPECT_EQ(v[1].igmp_type, 0x17);
    EXPECT_EQ(v[0].igmp_group ^ v[1].igmp_group, kGroup ^ kGroup2);
}

TEST_F(Mcast, delivered_for_joined_groups_only)
{
    stk_sock *s = receiver(5000);
    Bytes b;
    ASSERT_EQ(setopt(s, IP_ADD_MEMBERSHIP, mreq(kGroup)), 0);
    frames();
    inject_mcast(kPeerIp, kGroup, 5000, pattern(100));
    inject_mcast(kPeerIp, kGroup2, 5000, pattern(50)); // not joined
    inject_mcast(kPeerIp, kGroup, 5001, pattern(60));  // another port
    uint32_t from = 0;
    ASSERT_EQ(recv_from(s, &b, &from), 100);
    EXPECT_EQ(b, pattern(100));
    EXPECT_EQ(from, kPeerIp);
    EXPECT_EQ(recv_from(s, &b), -EAGAIN);

    ASSERT_EQ(setopt(s, IP_DROP_MEMBERSHIP, mreq(kGroup)), 0);
    frames();
    inject_mcast(kPeerIp, kGroup, 5000, pattern(100));
    EXPECT_EQ(recv_from(s, &b), -EAGAIN);
}

TEST_F(Mcast, every_socket_on_the_port_gets_a_copy)
{
    stk_sock *a = receiver(5000);
    stk_sock *b = receiver(5000);
    stk_sock *g = receiver(5000, kGroup);   // bound to the group
    stk_sock *g2 = receiver(5000, kGroup2); // bound to another group
    stk_sock *u = receiver(5000, kStackIp); // unicast address: not
    stk_sock *other = receiver(5001);
    Bytes d;
    ASSERT_EQ(setopt(a, IP_ADD_MEMBERSHIP, mreq(kGroup)), 0);
    frames();
    inject_mcast(kPeerIp, kGroup, 5000, pattern(80, 3));
    for (stk_sock *s : {a, b, g}) {
        ASSERT_EQ(recv_from(s, &d), 80);
        EXPECT_EQ(d, pattern(80, 3));
    }
    for (stk_sock *s : {g2, u, other})
        EXPECT_EQ(recv_from(s, &d), -EAGAIN);

    // IP_MULTICAST_ALL 0: only the groups this socket joined.
    int zero = 0;
    ASSERT_EQ(setopt(b, IP_MULTICAST_ALL, zero), 0);
    EXPECT_EQ(getint(b, IP_MULTICAST_ALL), 0);
    inject_mcast(kPeerIp, kGroup, 5000, pattern(10));
    EXPECT_EQ(recv_from(a, &d), 10);
    EXPECT_EQ(recv_from(b, &d), -EAGAIN);
}

TEST_F(Mcast, connected_socket_takes_its_peer_only)
{
    stk_sock *s = receiver(5000);
    Bytes d;
    ASSERT_EQ(setopt(s, IP_ADD_MEMBERSHIP, mreq(kGroup)), 0);
    ASSERT_EQ(connect_to(s, kPeerIp, 4000), 0);
    frames();
    inject_mcast(kOther, kGroup, 5000, pattern(10));
    EXPECT_EQ(recv_from(s, &d), -EAGAIN);
    inject_mcast(kPeerIp, kGroup, 5000, pattern(10));
    EXPECT_EQ(recv_from(s, &d), 10);
}

TEST_F(Mcast, source_include_and_exclude_filters)
{
    stk_sock *inc = receiver(5000);
    stk_sock *exc = receiver(5000);
    Bytes d;
    uint32_t from;
    int zero = 0;
    ASSERT_EQ(setopt(inc, IP_MULTICAST_ALL, zero), 0);
    ASSERT_EQ(setopt(exc, IP_MULTICAST_ALL, zero), 0);
    ASSERT_EQ(setopt(inc, IP_ADD_SOURCE_MEMBERSHIP, mreq_src(kGroup, kPeerIp)),
              0);
    std::vector<Raw> v = frames();
    ASSERT_EQ(v.size(), 1u); // reported as a group (IGMPv2)
    EXPECT_EQ(v[0].igmp_group, kGroup);
    ASSERT_EQ(setopt(exc, IP_ADD_MEMBERSHIP, mreq(kGroup)), 0);
    ASSERT_EQ(setopt(exc, IP_BLOCK_SOURCE, mreq_src(kGroup, kPeerIp)), 0);
    frames();

    inject_mcast(kPeerIp, kGroup, 5000, pattern(11));
    inject_mcast(kOther, kGroup, 5000, pattern(22));
    ASSERT_EQ(recv_from(inc, &d, &from), 11);
    EXPECT_EQ(from, kPeerIp);
    EXPECT_EQ(recv_from(inc, &d), -EAGAIN);
    ASSERT_EQ(recv_from(exc, &d, &from), 22);
    EXPECT_EQ(from, kOther);
    EXPECT_EQ(recv_from(exc, &d), -EAGAIN);

    // Unblocking lets the source in; dropping the last included source
    // leaves the group (Linux: INCLUDE with no source is a leave).
    ASSERT_EQ(setopt(exc, IP_UNBLOCK_SOURCE, mreq_src(kGroup, kPeerIp)), 0);
    ASSERT_EQ(setopt(inc, IP_DROP_SOURCE_MEMBERSHIP, mreq_src(kGroup, kPeerIp)),
              0);
    EXPECT_EQ(setopt(inc, IP_DROP_MEMBERSHIP, mreq(kGroup)), -EADDRNOTAVAIL);
    inject_mcast(kPeerIp, kGroup, 5000, pattern(33));
    EXPECT_EQ(recv_from(exc, &d), 33);
    EXPECT_EQ(recv_from(inc, &d), -EAGAIN);
}

// A socket without a membership (IP_MULTICAST_ALL) takes what the
// interface takes: a source some member's filter accepts.
TEST_F(Mcast, socket_without_membership_follows_the_interface_filter)
{
    stk_sock *inc = receiver(5000);
    stk_sock *all = receiver(5000);
    Bytes d;
    uint32_t from;
    ASSERT_EQ(setopt(inc, IP_ADD_SOURCE_MEMBERSHIP, mreq_src(kGroup, kPeerIp)),
              0);
    frames();
    inject_mcast(kOther, kGroup, 5000, pattern(22));
    inject_mcast(kPeerIp, kGroup, 5000, pattern(11));
    ASSERT_EQ(recv_from(all, &d, &from), 11);
    EXPECT_EQ(from, kPeerIp);
    EXPECT_EQ(recv_from(all, &d), -EAGAIN);
    // Another member taking every source opens the interface to kOther.
    stk_sock *exc = receiver(5001);
    ASSERT_EQ(setopt(exc, IP_ADD_MEMBERSHIP, mreq(kGroup)), 0);
    inject_mcast(kOther, kGroup, 5000, pattern(22));
    ASSERT_EQ(recv_from(all, &d, &from), 22);
    EXPECT_EQ(from, kOther);
    EXPECT_EQ(recv_from(inc, &d), 11);
    EXPECT_EQ(recv_from(inc, &d), -EAGAIN);
    // The all-hosts group needs no membership.
    inject_mcast(kPeerIp, 0xe0000001, 5000, pattern(5));
    EXPECT_EQ(recv_from(all, &d), 5);
    frames();
}

// The protocol-independent API (RFC 3678) for IPv4 groups.
TEST_F(Mcast, mcast_join_group_family)
{
    stk_sock *s = receiver(5000);
    Bytes d;
    group_req g{};
    sockaddr_in *gs = (sockaddr_in *)&g.gr_group;
    gs->sin_family = AF_INET;
    gs->sin_addr.s_addr = htonl(kGroup);
    EXPECT_EQ(setopt(s, MCAST_JOIN_GROUP, g, sizeof(g) - 1), -EINVAL);
    g.gr_interface = kIfindex + 1;
    EXPECT_EQ(setopt(s, MCAST_JOIN_GROUP, g), -ENODEV);
    g.gr_interface = 0;
    ASSERT_EQ(setopt(s, MCAST_JOIN_GROUP, g), 0);
    std::vector<Raw> v = frames();
    ASSERT_EQ(v.size(), 1u);
    EXPECT_EQ(v[0].igmp_group, kGroup);
    g.gr_interface = kIfindex;
    EXPECT_EQ(setopt(s, MCAST_JOIN_GROUP, g), -EADDRINUSE);

    group_source_req gsr{};
    gsr.gsr_interface = kIfindex;
    memcpy(&gsr.gsr_group, gs, sizeof(*gs));
    sockaddr_in *src = (sockaddr_in *)&gsr.gsr_source;
    src->sin_family = AF_INET;
    src->sin_addr.s_addr = htonl(kPeerIp);
    ASSERT_EQ(setopt(s, MCAST_BLOCK_SOURCE, gsr), 0);
    inject_mcast(kPeerIp, kGroup, 5000, pattern(10));
    inject_mcast(kOther, kGroup, 5000, pattern(20));
    EXPECT_EQ(recv_from(s, &d), 20);
    EXPECT_EQ(recv_from(s, &d), -EAGAIN);
    ASSERT_EQ(setopt(s, MCAST_UNBLOCK_SOURCE, gsr), 0);
    ASSERT_EQ(setopt(s, MCAST_LEAVE_GROUP, g), 0);
    v = frames();
    ASSERT_EQ(v.size(), 1u);
    EXPECT_EQ(v[0].igmp_type, 0x17);
    // Source-specific join, then its last source dropped: a leave.
    ASSERT_EQ(setopt(s, MCAST_JOIN_SOURCE_GROUP, gsr), 0);
    inject_mcast(kOther, kGroup, 5000, pattern(20));
    inject_mcast(kPeerIp, kGroup, 5000, pattern(10));
    EXPECT_EQ(recv_from(s, &d), 10);
    ASSERT_EQ(setopt(s, MCAST_LEAVE_SOURCE_GROUP, gsr), 0);
    EXPECT_EQ(setopt(s, MCAST_LEAVE_GROUP, g), -EADDRNOTAVAIL);
    src->sin_family = AF_INET6;
    EXPECT_EQ(setopt(s, MCAST_JOIN_SOURCE_GROUP, gsr), -EADDRNOTAVAIL);
    frames();
}

TEST_F(Mcast, option_errors_as_linux)
{
    stk_sock *s = receiver(5000);
    ip_mreq m = mreq(kGroup);
    ip_mreq_source ms = mreq_src(kGroup, kPeerIp);

    EXPECT_EQ(setopt(s, IP_ADD_MEMBERSHIP, m, sizeof(m) - 1), -EINVAL);
    EXPECT_EQ(setopt(s, IP_ADD_MEMBERSHIP, mreq(kPeerIp)), -EINVAL);
    EXPECT_EQ(setopt(s, IP_DROP_MEMBERSHIP, m), -EADDRNOTAVAIL);
    EXPECT_EQ(setopt(s, IP_ADD_MEMBERSHIP, mreq(kGroup, kOther)), -ENODEV);
    EXPECT_EQ(setopt(s, IP_BLOCK_SOURCE, ms), -EINVAL); // no prior join
    EXPECT_EQ(setopt(s, IP_ADD_SOURCE_MEMBERSHIP, ms, sizeof(ms) + 4), -EINVAL);
    ASSERT_EQ(setopt(s, IP_ADD_MEMBERSHIP, m), 0);
    EXPECT_EQ(setopt(s, IP_ADD_MEMBERSHIP, m), -EADDRINUSE);
    // By our address or the interface's index: the same membership.
    EXPECT_EQ(setopt(s, IP_ADD_MEMBERSHIP, mreq(kGroup, kStackIp)),
              -EADDRINUSE);
    ip_mreqn n{};
    n.imr_multiaddr.s_addr = htonl(kGroup);
    n.imr_ifindex = kIfindex;
    EXPECT_EQ(setopt(s, IP_ADD_MEMBERSHIP, n), -EADDRINUSE);
    n.imr_ifindex = kIfindex + 1;
    EXPECT_EQ(setopt(s, IP_ADD_MEMBERSHIP, n), -ENODEV);
    EXPECT_EQ(setopt(s, IP_DROP_MEMBERSHIP, n), -EADDRNOTAVAIL);
    // EXCLUDE mode: block twice, unblock an unknown source.
    ASSERT_EQ(setopt(s, IP_BLOCK_SOURCE, ms), 0);
    EXPECT_EQ(setopt(s, IP_BLOCK_SOURCE, ms), -EADDRNOTAVAIL);
    EXPECT_EQ(setopt(s, IP_UNBLOCK_SOURCE, mreq_src(kGroup, kOther)),
              -EADDRNOTAVAIL);
    // Switching to INCLUDE with a source list present.
    EXPECT_EQ(setopt(s, IP_ADD_SOURCE_MEMBERSHIP, ms), -EINVAL);
    n.imr_ifindex = kIfindex;
    EXPECT_EQ(setopt(s, IP_DROP_MEMBERSHIP, n), 0);
    // 20 groups per socket (net.ipv4.igmp_max_memberships).
    for (uint32_t i = 0; i < 20; i++)
        ASSERT_EQ(setopt(s, IP_ADD_MEMBERSHIP, mreq(kGroup + i)), 0) << i;
    EXPECT_EQ(setopt(s, IP_ADD_MEMBERSHIP, mreq(kGroup + 20)), -ENOBUFS);
    frames();
}

TEST_F(Mcast, interface_ttl_loop_values)
{
    stk_sock *s = udp_sock();
    in_addr a{};
    socklen_t len = sizeof(a);

    EXPECT_EQ(getint(s, IP_MULTICAST_TTL), 1);
    EXPECT_EQ(getint(s, IP_MULTICAST_LOOP), 1);
    EXPECT_EQ(getint(s, IP_MULTICAST_ALL), 1);
    EXPECT_EQ(getint(s, IP_MULTICAST_TTL, 1), 1);
    ASSERT_EQ(stk_sock_getsockopt(s, IPPROTO_IP, IP_MULTICAST_IF, &a, &len), 0);
    EXPECT_EQ(a.s_addr, 0u);
    EXPECT_EQ(len, sizeof(a));

    int v = 256;
    EXPECT_EQ(setopt(s, IP_MULTICAST_TTL, v), -EINVAL);
    v = -1; // Linux: the default
    EXPECT_EQ(setopt(s, IP_MULTICAST_TTL, v), 0);
    EXPECT_EQ(getint(s, IP_MULTICAST_TTL), 1);
    unsigned char c = 9; // one byte is accepted
    EXPECT_EQ(setopt(s, IP_MULTICAST_TTL, c), 0);
    EXPECT_EQ(getint(s, IP_MULTICAST_TTL), 9);
    EXPECT_EQ(stk_sock_setsockopt(s, IPPROTO_IP, IP_MULTICAST_LOOP, &c, 0),
              -EINVAL);
    v = 2;
    EXPECT_EQ(setopt(s, IP_MULTICAST_ALL, v), -EINVAL);

    in_addr ours{htonl(kStackIp)}, other{htonl(kOther)}, any{};
    EXPECT_EQ(setopt(s, IP_MULTICAST_IF, other), -EADDRNOTAVAIL);
    EXPECT_EQ(setopt(s, IP_MULTICAST_IF, ours, 3), -EINVAL);
    ASSERT_EQ(setopt(s, IP_MULTICAST_IF, ours), 0);
    len = sizeof(a);
    ASSERT_EQ(stk_sock_getsockopt(s, IPPROTO_IP, IP_MULTICAST_IF, &a, &len), 0);
    EXPECT_EQ(a.s_addr, htonl(kStackIp));
    ip_mreqn n{};
    n.imr_ifindex = kIfindex; // by index: the address reads 0.0.0.0
    ASSERT_EQ(setopt(s, IP_MULTICAST_IF, n), 0);
    ASSERT_EQ(stk_sock_getsockopt(s, IPPROTO_IP, IP_MULTICAST_IF, &a, &len), 0);
    EXPECT_EQ(a.s_addr, 0u);
    n.imr_ifindex = kIfindex + 1;
    EXPECT_EQ(setopt(s, IP_MULTICAST_IF, n), -EADDRNOTAVAIL);
    EXPECT_EQ(setopt(s, IP_MULTICAST_IF, any), 0);

    // TCP sockets are not ours to answer (the kernel says EPROTO/EINVAL).
    stk_sock *t = tcp_sock();
    EXPECT_EQ(setopt(t, IP_ADD_MEMBERSHIP, mreq(kGroup)), -ENOPROTOOPT);
}

TEST_F(Mcast, ttl_in_the_ip_header)
{
    stk_sock *s = udp_sock();
    ASSERT_EQ(send_to(s, pattern(20), kGroup, 6000), 20);
    std::vector<Raw> v = frames();
    ASSERT_EQ(v.size(), 1u);
    const uint8_t mac[6] = {0x01, 0x00, 0x5e, 0x01, 0x01, 0x01};
    EXPECT_EQ(memcmp(v[0].dmac, mac, 6), 0); // no ARP for a group
    EXPECT_EQ(v[0].proto, 17);
    EXPECT_EQ(v[0].dst, kGroup);
    EXPECT_EQ(v[0].src, kStackIp);
    EXPECT_EQ(v[0].ttl, 1);
    EXPECT_EQ(v[0].dport, 6000);
    EXPECT_EQ(v[0].payload, pattern(20));
    int ttl = 32;
    ASSERT_EQ(setopt(s, IP_MULTICAST_TTL, ttl), 0);
    ASSERT_EQ(send_to(s, pattern(20), kGroup, 6000), 20);
    ASSERT_EQ(send_to(s, pattern(20), kPeerIp, 6000), 20); // unicast: 255
    v = frames();
    ASSERT_EQ(v.size(), 2u);
    EXPECT_EQ(v[0].ttl, 32);
    EXPECT_NE(v[1].ttl, 32);
    // A socket bound to a group sends from the interface's address.
    stk_sock *g = receiver(6001, kGroup);
    ASSERT_EQ(send_to(g, pattern(5), kGroup, 6000), 5);
    v = frames();
    ASSERT_EQ(v.size(), 1u);
    EXPECT_EQ(v[0].src, kStackIp);
}

TEST_F(Mcast, loop_gives_local_receivers_a_copy)
{
    stk_sock *r = receiver(6000);
    stk_sock *snd = udp_sock();
    Bytes d;
    uint32_t from = 0;
    ASSERT_EQ(setopt(r, IP_ADD_MEMBERSHIP, mreq(kGroup)), 0);
    frames();
    ASSERT_EQ(send_to(snd, pattern(30), kGroup, 6000), 30);
    EXPECT_EQ(frames().size(), 1u); // on the wire too
    advance(10);                    // the loopback queue
    ASSERT_EQ(recv_from(r, &d, &from), 30);
    EXPECT_EQ(d, pattern(30));
    EXPECT_EQ(from, kStackIp);

    unsigned char off = 0;
    ASSERT_EQ(setopt(snd, IP_MULTICAST_LOOP, off), 0);
    EXPECT_EQ(getint(snd, IP_MULTICAST_LOOP), 0);
    ASSERT_EQ(send_to(snd, pattern(30), kGroup, 6000), 30);
    EXPECT_EQ(frames().size(), 1u);
    advance(10);
    EXPECT_EQ(recv_from(r, &d), -EAGAIN);
}

// The netif asks the port for each group's MAC (link.mc_filter) when the
// first socket joins and gives it back when the last one leaves. Its own
// stk_init (each test runs in its own process).
namespace
{
std::vector<std::pair<Bytes, bool>> filter_calls;
std::vector<std::pair<Bytes, bool>> filter6_calls;
uint64_t
fixed_clock()
{
    return 1000000000ull;
}
uint8_t *
no_tx(void *, uint16_t, void **)
{
    return nullptr; // frames dropped: only the filter calls matter here
}
void
no_send(void *, void *, uint16_t)
{
}
void
record_filter(void *, const uint8_t mac[6], bool add)
{
    // IPv6 groups (33:33:...) are McastFilter6's.
    if (mac[0] == 0x33)
        filter6_calls.emplace_back(Bytes(mac, mac + 6), add);
    else
        filter_calls.emplace_back(Bytes(mac, mac + 6), add);
}
} // namespace

TEST(McastFilter, mac_filter_follows_the_groups)
{
    stk_test_set_clock(&fixed_clock);
    stk_netif_cfg cfg{};
    cfg.ip = htonl(kStackIp);
    cfg.netmask = htonl(0xffffff00);
    memcpy(cfg.mac, kStackMac, 6);
    cfg.link.tx_alloc = &no_tx;
    cfg.link.tx_send = &no_send;
    cfg.link.mc_filter = &record_filter;
    ASSERT_EQ(stk_init(&cfg), 0);
    // The all-hosts group, at start.
    ASSERT_EQ(filter_calls.size(), 1u);
    EXPECT_EQ(filter_calls[0].first, (Bytes{0x01, 0x00, 0x5e, 0, 0, 1}));
    EXPECT_TRUE(filter_calls[0].second);

    stk_sock *a = nullptr, *b = nullptr;
    ASSERT_EQ(stk_sock_create(SOCK_DGRAM, &a), 0);
    ASSERT_EQ(stk_sock_create(SOCK_DGRAM, &b), 0);
    ip_mreq m = mreq(0xef818283); // 239.129.130.131: the top bit goes
    ASSERT_EQ(setopt(a, IP_ADD_MEMBERSHIP, m), 0);
    ASSERT_EQ(setopt(b, IP_ADD_MEMBERSHIP, m), 0);
    ASSERT_EQ(filter_calls.size(), 2u);
    EXPECT_EQ(filter_calls[1].first,
              (Bytes{0x01, 0x00, 0x5e, 0x01, 0x82, 0x83}));
    EXPECT_TRUE(filter_calls[1].second);
    stk_sock_close(a);
    EXPECT_EQ(filter_calls.size(), 2u); // b is still a member
    stk_sock_close(b);
    ASSERT_EQ(filter_calls.size(), 3u);
    EXPECT_EQ(filter_calls[2].first, filter_calls[1].first);
    EXPECT_FALSE(filter_calls[2].second);
}
