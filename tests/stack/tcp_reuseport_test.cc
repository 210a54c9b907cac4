// SO_REUSEPORT listener groups: several TCP sockets listening on one
// address and port share the connections (each has its own queue, backlog,
// readiness and accept); closing one leaves the others listening.
#include <arpa/inet.h>
#include <sys/epoll.h>

#include <map>

#include "harness.h"

extern "C" {
#include "stats.h"
}

using namespace stktest;

namespace
{

class Reuse : public Lab
{
  protected:
    stk_sock *
    listener(uint16_t port, int backlog, bool reuseport = true, uint32_t ip = 0)
    {
        stk_sock *s = tcp_sock();
        int one = 1;
        if (reuseport) {
            EXPECT_EQ(stk_sock_setsockopt(s, SOL_SOCKET, SO_REUSEPORT, &one,
                                          sizeof(one)),
                      0);
        }
        EXPECT_EQ(bind_port(s, port, ip), 0);
        EXPECT_EQ(stk_sock_listen(s, backlog), 0);
        return s;
    }

    // The peer opens a connection to port without anyone accepting it;
    // false when the stack did not answer the SYN with a SYN-ACK.
    bool
    handshake(uint16_t port, uint16_t peer_port, Conn *out)
    {
        Conn c;
        c.sport = port;
        c.pport = peer_port;
        c.snd = 9000;
        TcpSeg syn;
        syn.sport = peer_port;
        syn.dport = port;
        syn.seq = c.snd++;
        syn.flags = SYN;
        syn.mss = 1460;
        inject_tcp(syn);
        std::vector<Pkt> v = drain();
        if (v.size() != 1 || v[0].flags != (SYN | ACK))
            return false;
        c.rcv = v[0].seq + 1;
        TcpSeg ack;
        ack.sport = peer_port;
        ack.dport = port;
        ack.seq = c.snd;
        ack.ack = c.rcv;
        ack.flags = ACK;
        inject_tcp(ack);
        if (out)
            *out = c;
        return true;
    }

    // Accept everything queued on l: peer port -> accepted socket.
    std::map<uint16_t, stk_sock *>
    accept_all(stk_sock *l)
    {
        std::map<uint16_t, stk_sock *> got;
        stk_sock *c = nullptr;
        sockaddr_in a{};
        socklen_t al = sizeof(a);
        while (stk_sock_accept(l, &c, (sockaddr *)&a, &al) == 0) {
            socks_.push_back(c);
            got[ntohs(a.sin_port)] = c;
            al = sizeof(a);
        }
        return got;
    }
};

} // namespace

TEST_F(Reuse, two_listeners_share_the_port_and_spread_connections)
{
    stk_sock *l1 = listener(8080, 32);
    stk_sock *l2 = listener(8080, 32);
    int v = 0;
    socklen_t vl = sizeof(v);
    ASSERT_EQ(stk_sock_getsockopt(l2, SOL_SOCKET, SO_REUSEPORT, &v, &vl), 0);
    EXPECT_EQ(v, 1);
    EXPECT_EQ(stk_test_lgroups(), 1); // one lwIP listening pcb
    // A third socket without SO_REUSEPORT cannot bind the port.
    stk_sock *x = tcp_sock();
    EXPECT_EQ(bind_port(x, 8080, 0), -EADDRINUSE);

    std::map<uint16_t, Conn> conns;
    for (uint16_t p = 40000; p < 40020; p++) {
        Conn c;
        ASSERT_TRUE(handshake(8080, p, &c)) << p;
        conns[p] = c;
    }
    EXPECT_NE(events(l1) & EPOLLIN, 0u);
    EXPECT_NE(events(l2) & EPOLLIN, 0u);
    auto a1 = accept_all(l1);
    auto a2 = accept_all(l2);
    EXPECT_GT(a1.size(), 0u);
    EXPECT_GT(a2.size(), 0u);
    EXPECT_EQ(a1.size() + a2.size(), 20u);
    for (auto &kv : a1)
        EXPECT_EQ(a2.count(kv.first), 0u); // exactly one
    EXPECT_EQ(events(l1) & EPOLLIN, 0u);
    EXPECT_EQ(events(l2) & EPOLLIN, 0u);
    // Each accepted connection carries its own data.
    for (auto *m : {&a1, &a2}) {
        for (auto &kv : *m) {
            Conn &c = conns[kv.first];
            c.s = kv.second;
            peer_send(c, pattern(10, (uint8_t)kv.first));
            Bytes b;
            EXPECT_EQ(recv_bytes(c.s, &b, 100), 10);
            EXPECT_EQ(b, pattern(10, (uint8_t)kv.first));
            drain();
        }
    }
    EXPECT_EQ(base_stats.tcp_accept, 20u);
}

TEST_F(Reuse, closing_one_member_resets_its_queue_and_the_other_keeps_working)
{
    stk_sock *l1 = listener(8080, 32);
    stk_sock *l2 = listener(8080, 32);
    std::vector<uint16_t> on1;
    for (uint16_t p = 41000; p < 41016; p++)
        ASSERT_TRUE(handshake(8080, p, nullptr));
    // Find who got what without accepting: accept from l2 only later.
    // Close l1 (it created the lwIP pcb) with its connections unaccepted.
    std::vector<stk_sock *> keep;
    for (stk_sock *s : socks_)
        if (s != l1)
            keep.push_back(s);
    stk_sock_close(l1);
    socks_ = keep;
    std::vector<Pkt> v = drain();
    size_t rsts = 0;
    for (const Pkt &p : v) {
        EXPECT_EQ(p.proto, 6);
        if (p.flags & RST)
            rsts++;
    }
    auto a2 = accept_all(l2);
    EXPECT_GT(rsts, 0u); // l1's queue was reset
    EXPECT_GT(a2.size(), 0u);
    EXPECT_EQ(rsts + a2.size(), 16u);
    EXPECT_EQ(stk_test_lgroups(), 1);
    // New connections all go to the remaining member.
    for (uint16_t p = 42000; p < 42010; p++)
        ASSERT_TRUE(handshake(8080, p, nullptr));
    EXPECT_EQ(accept_all(l2).size(), 10u);
    // The last member closes: the port is closed (RST to a SYN).
    keep.clear();
    for (stk_sock *s : socks_)
        if (s != l2)
            keep.push_back(s);
    stk_sock_close(l2);
    socks_ = keep;
    EXPECT_EQ(stk_test_lgroups(), 0);
    drain();
    TcpSeg syn;
    syn.sport = 43000;
    syn.dport = 8080;
    syn.seq = 1;
    syn.flags = SYN;
    inject_tcp(syn);
    Pkt r = one();
    EXPECT_EQ(r.flags & RST, RST);
}

TEST_F(Reuse, handshake_in_progress_survives_its_listener_closing)
{
    stk_sock *l1 = listener(8080, 8);
    stk_sock *l2 = listener(8080, 8);
    TcpSeg syn;
    syn.sport = 44000;
    syn.dport = 8080;
    syn.seq = 100;
    syn.flags = SYN;
    inject_tcp(syn);
    Pkt sa = one();
    ASSERT_EQ(sa.flags, SYN | ACK);
    std::vector<stk_sock *> keep;
    for (stk_sock *s : socks_)
        if (s != l1)
            keep.push_back(s);
    stk_sock_close(l1);
    socks_ = keep;
    TcpSeg ack;
    ack.sport = 44000;
    ack.dport = 8080;
    ack.seq = 101;
    ack.ack = sa.seq + 1;
    ack.flags = ACK;
    inject_tcp(ack);
    EXPECT_TRUE(drain().empty());
    EXPECT_EQ(accept_all(l2).size(), 1u);
}

TEST_F(Reuse, each_member_has_its_own_backlog)
{
    stk_sock *l1 = listener(8080, 0); // room for one connection each
    stk_sock *l2 = listener(8080, 0);
    ASSERT_TRUE(handshake(8080, 45000, nullptr));
    ASSERT_TRUE(handshake(8080, 45001, nullptr));
    // Both queues full: the next SYN is refused (no answer), as Linux.
    uint64_t ov = base_stats.tcp_listen_overflow;
    EXPECT_FALSE(handshake(8080, 45002, nullptr));
    EXPECT_GT(base_stats.tcp_listen_overflow, ov);
    EXPECT_EQ(accept_all(l1).size(), 1u); // one each: full ones skipped
    EXPECT_EQ(accept_all(l2).size(), 1u);
    // Room again on both.
    ASSERT_TRUE(handshake(8080, 45003, nullptr));
    EXPECT_EQ(accept_all(l1).size() + accept_all(l2).size(), 1u);
}

TEST_F(Reuse, listen_rules_follow_linux)
{
    // SO_REUSEADDR lets two sockets bind, but only one may listen.
    int one = 1;
    stk_sock *a = tcp_sock();
    stk_sock *b = tcp_sock();
    ASSERT_EQ(stk_sock_setsockopt(a, SOL_SOCKET, SO_REUSEADDR, &one, 4), 0);
    ASSERT_EQ(stk_sock_setsockopt(b, SOL_SOCKET, SO_REUSEADDR, &one, 4), 0);
    ASSERT_EQ(bind_port(a, 8081, 0), 0);
    ASSERT_EQ(bind_port(b, 8081, 0), 0);
    ASSERT_EQ(stk_sock_listen(a, 8), 0);
    EXPECT_EQ(stk_sock_listen(b, 8), -EADDRINUSE);
    // SO_REUSEPORT on one side only: the bind is refused.
    stk_sock *l = listener(8082, 8);
    stk_sock *c = tcp_sock();
    EXPECT_EQ(bind_port(c, 8082, 0), -EADDRINUSE);
    (void)l;
    // Wildcard and specific address, both SO_REUSEPORT: two groups, and
    // the specific one takes the connections (Linux's lookup score).
    stk_sock *any = listener(8083, 8, true, 0);
    stk_sock *spec = listener(8083, 8, true, kStackIp);
    EXPECT_EQ(stk_test_lgroups(), 4);
    ASSERT_TRUE(handshake(8083, 46000, nullptr));
    EXPECT_EQ(accept_all(any).size(), 0u);
    EXPECT_EQ(accept_all(spec).size(), 1u);
}

TEST_F(Reuse, member_can_stop_and_listen_again)
{
    stk_sock *l1 = listener(8080, 32);
    stk_sock *l2 = listener(8080, 32);
    // shutdown(SHUT_RD) stops listening (Linux: back to CLOSE, still bound).
    ASSERT_EQ(stk_sock_shutdown(l1, SHUT_RD), 0);
    EXPECT_FALSE(stk_sock_is_listening(l1));
    for (uint16_t p = 47000; p < 47006; p++)
        ASSERT_TRUE(handshake(8080, p, nullptr));
    EXPECT_EQ(accept_all(l2).size(), 6u);
    ASSERT_EQ(stk_sock_listen(l1, 32), 0);
    EXPECT_EQ(stk_test_lgroups(), 1);
    for (uint16_t p = 47100; p < 47120; p++)
        ASSERT_TRUE(handshake(8080, p, nullptr));
    size_t n1 = accept_all(l1).size(), n2 = accept_all(l2).size();
    EXPECT_GT(n1, 0u);
    EXPECT_GT(n2, 0u);
    EXPECT_EQ(n1 + n2, 20u);
}
