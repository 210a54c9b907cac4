// TCP connection setup: connect (EINPROGRESS, EALREADY, completion, EISCONN),
// refused and timed-out connects, listen/accept, backlog limits, ISNs, bind
// rules.
#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>

#include "harness.h"

extern "C" {
#include "stats.h"
}

using namespace stktest;

TEST_F(Lab, tcp_connect_handshake_and_connect_results)
{
    stk_sock *s = tcp_sock();
    EXPECT_EQ(connect_to(s, kPeerIp, 80), -EINPROGRESS);
    EXPECT_EQ(connect_to(s, kPeerIp, 80), -EALREADY);
    EXPECT_EQ(events(s) & EPOLLOUT, 0u);
    Pkt syn = one();
    ASSERT_EQ(syn.flags, SYN);
    EXPECT_TRUE(syn.sack_perm);
    EXPECT_TRUE(syn.ts);
    EXPECT_GE(syn.sport, 32768);
    EXPECT_LE(syn.sport, 60999);
    TcpSeg sa;
    sa.sport = 80;
    sa.dport = syn.sport;
    sa.seq = 100;
    sa.ack = syn.seq + 1;
    sa.flags = SYN | ACK;
    sa.mss = 1400;
    inject_tcp(sa);
    Pkt ack = one();
    EXPECT_EQ(ack.flags, ACK);
    EXPECT_EQ(ack.ack, 101u);
    EXPECT_NE(events(s) & EPOLLOUT, 0u);
    EXPECT_EQ(connect_to(s, kPeerIp, 80), 0);
    EXPECT_EQ(connect_to(s, kPeerIp, 80), -EISCONN);
    sockaddr_in a{};
    socklen_t al = sizeof(a);
    ASSERT_EQ(stk_sock_getname(s, (sockaddr *)&a, &al, true), 0);
    EXPECT_EQ(ntohl(a.sin_addr.s_addr), kPeerIp);
    EXPECT_EQ(ntohs(a.sin_port), 80);
    al = sizeof(a);
    ASSERT_EQ(stk_sock_getname(s, (sockaddr *)&a, &al, false), 0);
    EXPECT_EQ(ntohl(a.sin_addr.s_addr), kStackIp);
    EXPECT_EQ(ntohs(a.sin_port), syn.sport);
    int v = 0;
    socklen_t vl = sizeof(v);
    ASSERT_EQ(stk_sock_getsockopt(s, IPPROTO_TCP, TCP_MAXSEG, &v, &vl), 0);
    EXPECT_EQ(v, 1400);
    EXPECT_EQ(base_stats.tcp_connect, 1u);
}

TEST_F(Lab, tcp_connect_refused_sets_so_error)
{
    stk_sock *s = tcp_sock();
    ASSERT_EQ(connect_to(s, kPeerIp, 81), -EINPROGRESS);
    Pkt syn = one();
    TcpSeg r;
    r.sport = 81;
    r.dport = syn.sport;
    r.seq = 0;
    r.ack = syn.seq + 1;
    r.flags = RST | ACK;
    inject_tcp(r);
    uint32_t ev = events(s);
    EXPECT_NE(ev & EPOLLERR, 0u);
    EXPECT_NE(ev & EPOLLOUT, 0u);
    EXPECT_NE(ev & EPOLLHUP, 0u);
    int e = 0;
    socklen_t el = sizeof(e);
    ASSERT_EQ(stk_sock_getsockopt(s, SOL_SOCKET, SO_ERROR, &e, &el), 0);
    EXPECT_EQ(e, ECONNREFUSED);
    EXPECT_EQ(stk_sock_take_error(s), 0);
    EXPECT_EQ(events(s) & EPOLLERR, 0u);
    // tcp_done keeps the name; the SYN stays unacknowledged (SIOCOUTQ).
    sockaddr_in a{};
    socklen_t al = sizeof(a);
    ASSERT_EQ(stk_sock_getname(s, (sockaddr *)&a, &al, false), 0);
    EXPECT_EQ(ntohl(a.sin_addr.s_addr), kStackIp);
    EXPECT_EQ(ntohs(a.sin_port), syn.sport);
    EXPECT_EQ(stk_sock_outq(s), 1);
}

TEST_F(Lab, tcp_connect_refused_reported_by_next_connect)
{
    stk_sock *s = tcp_sock();
    ASSERT_EQ(connect_to(s, kPeerIp, 81), -EINPROGRESS);
    Pkt syn = one();
    TcpSeg r;
    r.sport = 81;
    r.dport = syn.sport;
    r.ack = syn.seq + 1;
    r.flags = RST | ACK;
    inject_tcp(r);
    EXPECT_EQ(connect_to(s, kPeerIp, 81), -ECONNREFUSED);
    // A new attempt starts a new handshake.
    EXPECT_EQ(connect_to(s, kPeerIp, 81), -EINPROGRESS);
    EXPECT_EQ(one().flags, SYN);
}

// tcp_disconnect (connect AF_UNSPEC) of an attempt in progress leaves
// ECONNRESET pending; the next connect clears it (tcp_connect_init).
TEST_F(Lab, tcp_disconnect_of_syn_sent_leaves_econnreset)
{
    stk_sock *s = tcp_sock();
    ASSERT_EQ(connect_to(s, kPeerIp, 81), -EINPROGRESS);
    EXPECT_EQ(one().flags, SYN);
    sockaddr_in un{};
    un.sin_family = AF_UNSPEC;
    ASSERT_EQ(stk_sock_connect(s, (sockaddr *)&un, sizeof(un)), 0);
    EXPECT_NE(events(s) & EPOLLERR, 0u);
    ASSERT_EQ(connect_to(s, kPeerIp, 81), -EINPROGRESS);
    EXPECT_EQ(events(s) & EPOLLERR, 0u);
    EXPECT_EQ(stk_sock_take_error(s), 0);
    stk_sock *t = tcp_sock();
    ASSERT_EQ(connect_to(t, kPeerIp, 82), -EINPROGRESS);
    ASSERT_EQ(stk_sock_shutdown(t, SHUT_RD), 0);
    EXPECT_EQ(stk_sock_take_error(t), ECONNRESET);
    drain();
}

TEST_F(Lab, tcp_connect_times_out_with_virtual_clock)
{
    stk_sock *s = tcp_sock();
    ASSERT_EQ(connect_to(s, kPeerIp, 82), -EINPROGRESS);
    int syns = 0;
    for (int i = 0; i < 400 && stk_sock_events(s, nullptr) == 0; i++) {
        advance(1000);
        for (const Pkt &p : drain())
            if (p.flags == SYN)
                syns++;
    }
    drain();
    EXPECT_GE(syns, 5); // retransmitted SYNs
    EXPECT_EQ(stk_sock_take_error(s), ETIMEDOUT);
}

TEST_F(Lab, tcp_accept_handshake_and_queue)
{
    stk_sock *l = tcp_sock();
    ASSERT_EQ(bind_port(l, 8080, 0), 0);
    ASSERT_EQ(stk_sock_listen(l, 16), 0);
    EXPECT_TRUE(stk_sock_is_listening(l));
    stk_sock *none = nullptr;
    EXPECT_EQ(stk_sock_accept(l, &none, nullptr, nullptr), -EAGAIN);
    EXPECT_EQ(events(l), 0u);
    Conn c = passive_open(l, 8080, 40000);
    ASSERT_NE(c.s, nullptr);
    EXPECT_EQ(base_stats.tcp_accept, 1u);
    EXPECT_NE(events(c.s) & EPOLLOUT, 0u);
    int v = 0;
    socklen_t vl = sizeof(v);
    ASSERT_EQ(stk_sock_getsockopt(l, SOL_SOCKET, SO_ACCEPTCONN, &v, &vl), 0);
    EXPECT_EQ(v, 1);
    // A recv on the listener is ENOTCONN, connect is EISCONN (as Linux).
    Bytes b;
    EXPECT_EQ(recv_bytes(l, &b, 10), -ENOTCONN);
    EXPECT_EQ(connect_to(l, kPeerIp, 1), -EISCONN);
}

TEST_F(Lab, tcp_accept_data_arriving_before_accept_is_kept)
{
    stk_sock *l = tcp_sock();
    ASSERT_EQ(bind_port(l, 8080, 0), 0);
    ASSERT_EQ(stk_sock_listen(l, 4), 0);
    TcpSeg syn;
    syn.sport = 40001;
    syn.dport = 8080;
    syn.seq = 1;
    syn.flags = SYN;
    inject_tcp(syn);
    Pkt sa = one();
    ASSERT_EQ(sa.flags, SYN | ACK);
    TcpSeg d;
    d.sport = 40001;
    d.dport = 8080;
    d.seq = 2;
    d.ack = sa.seq + 1;
    d.flags = ACK | PSH;
    d.payload = pattern(100);
    inject_tcp(d);
    drain();
    EXPECT_NE(events(l) & EPOLLIN, 0u);
    stk_sock *c = nullptr;
    ASSERT_EQ(stk_sock_accept(l, &c, nullptr, nullptr), 0);
    socks_.push_back(c);
    Bytes got;
    EXPECT_EQ(recv_bytes(c, &got, 1000), 100);
    EXPECT_EQ(got, pattern(100));
}

TEST_F(Lab, tcp_listen_backlog_full_refuses_syn)
{
    stk_sock *l = tcp_sock();
    ASSERT_EQ(bind_port(l, 8080, 0), 0);
    ASSERT_EQ(stk_sock_listen(l, 1), 0); // Linux queues backlog+1 = 2
    for (uint16_t p = 41000; p < 41002; p++) {
        TcpSeg syn;
        syn.sport = p;
        syn.dport = 8080;
        syn.seq = 1;
        syn.flags = SYN;
        inject_tcp(syn);
        Pkt sa = one();
        ASSERT_EQ(sa.flags, SYN | ACK);
        TcpSeg ack;
        ack.sport = p;
        ack.dport = 8080;
        ack.seq = 2;
        ack.ack = sa.seq + 1;
        ack.flags = ACK;
        inject_tcp(ack);
    }
    TcpSeg syn;
    syn.sport = 41002;
    syn.dport = 8080;
    syn.seq = 1;
    syn.flags = SYN;
    inject_tcp(syn);
    EXPECT_TRUE(drain().empty()) << "SYN answered while the queue is full";
    EXPECT_EQ(base_stats.tcp_listen_overflow, 1u);
    // After one accept, the retried SYN is answered.
    stk_sock *c = nullptr;
    ASSERT_EQ(stk_sock_accept(l, &c, nullptr, nullptr), 0);
    socks_.push_back(c);
    inject_tcp(syn);
    Pkt sa = one();
    EXPECT_EQ(sa.flags, SYN | ACK);
}

TEST_F(Lab, tcp_isns_differ_and_are_not_sequential)
{
    std::vector<uint32_t> isn;
    for (int i = 0; i < 4; i++) {
        stk_sock *s = tcp_sock();
        ASSERT_EQ(connect_to(s, kPeerIp, 80), -EINPROGRESS);
        Pkt syn = one();
        isn.push_back(syn.seq);
    }
    for (size_t i = 1; i < isn.size(); i++) {
        uint32_t d = isn[i] - isn[i - 1];
        EXPECT_NE(isn[i], isn[i - 1]);
        EXPECT_GT(d, 1000000u) << "ISNs look sequential";
        EXPECT_LT(d, 0xffffffffu - 1000000u) << "ISNs look sequential";
    }
}

TEST_F(Lab, tcp_bind_rules)
{
    stk_sock *a = tcp_sock(), *b = tcp_sock(), *c = tcp_sock();
    EXPECT_EQ(bind_port(a, 9000), 0);
    EXPECT_EQ(bind_port(a, 9001), -EINVAL); // already bound
    EXPECT_EQ(bind_port(b, 9000), -EADDRINUSE);
    EXPECT_EQ(bind_port(b, 9000, 0x0a000063), -EADDRNOTAVAIL); // not ours
    int one_ = 1;
    ASSERT_EQ(stk_sock_setsockopt(b, SOL_SOCKET, SO_REUSEADDR, &one_, 4), 0);
    EXPECT_EQ(bind_port(b, 9000), -EADDRINUSE); // a lacks SO_REUSEADDR
    // Port 0: an ephemeral port in Linux's range.
    EXPECT_EQ(bind_port(c, 0), 0);
    sockaddr_in sa{};
    socklen_t l = sizeof(sa);
    ASSERT_EQ(stk_sock_getname(c, (sockaddr *)&sa, &l, false), 0);
    EXPECT_GE(ntohs(sa.sin_port), 32768);
    EXPECT_LE(ntohs(sa.sin_port), 60999);
    // Both SO_REUSEADDR, not listening: allowed; SO_REUSEPORT on both too.
    stk_sock *d = tcp_sock(), *e = tcp_sock();
    ASSERT_EQ(stk_sock_setsockopt(d, SOL_SOCKET, SO_REUSEADDR, &one_, 4), 0);
    ASSERT_EQ(stk_sock_setsockopt(e, SOL_SOCKET, SO_REUSEADDR, &one_, 4), 0);
    EXPECT_EQ(bind_port(d, 9100), 0);
    EXPECT_EQ(bind_port(e, 9100), 0);
    EXPECT_EQ(stk_sock_listen(d, 5), 0);
    EXPECT_EQ(stk_sock_listen(e, 5), -EADDRINUSE);
    stk_sock *f = tcp_sock();
    ASSERT_EQ(stk_sock_setsockopt(f, SOL_SOCKET, SO_REUSEADDR, &one_, 4), 0);
    EXPECT_EQ(bind_port(f, 9100), -EADDRINUSE); // d is listening
    stk_sock *g = tcp_sock(), *h = tcp_sock();
    ASSERT_EQ(stk_sock_setsockopt(g, SOL_SOCKET, SO_REUSEPORT, &one_, 4), 0);
    ASSERT_EQ(stk_sock_setsockopt(h, SOL_SOCKET, SO_REUSEPORT, &one_, 4), 0);
    EXPECT_EQ(bind_port(g, 9200), 0);
    EXPECT_EQ(bind_port(h, 9200), 0);
}

TEST_F(Lab, tcp_listen_unbound_picks_port_and_relisten_updates_backlog)
{
    stk_sock *l = tcp_sock();
    ASSERT_EQ(stk_sock_listen(l, 0), 0);
    sockaddr_in sa{};
    socklen_t len = sizeof(sa);
    ASSERT_EQ(stk_sock_getname(l, (sockaddr *)&sa, &len, false), 0);
    EXPECT_GE(ntohs(sa.sin_port), 32768);
    EXPECT_EQ(stk_sock_listen(l, 10), 0);
    EXPECT_EQ(bind_port(l, 1234), -EINVAL);
    stk_sock *u = tcp_sock();
    stk_sock *out = nullptr;
    EXPECT_EQ(stk_sock_accept(u, &out, nullptr, nullptr), -EINVAL);
    Bytes b;
    EXPECT_EQ(recv_bytes(u, &b, 4), -ENOTCONN);
    EXPECT_EQ(send_bytes(u, pattern(4)), -EPIPE);
    EXPECT_EQ(stk_sock_shutdown(u, SHUT_WR), -ENOTCONN);
    len = sizeof(sa);
    EXPECT_EQ(stk_sock_getname(u, (sockaddr *)&sa, &len, true), -ENOTCONN);
    // Fresh socket: EPOLLOUT|EPOLLHUP as Linux's tcp_poll.
    EXPECT_EQ(events(u) & (EPOLLOUT | EPOLLHUP),
              (uint32_t)(EPOLLOUT | EPOLLHUP));
}

// stk_sock_opt_owned() says which options an accepted socket may validate
// on the shared template fd (preload/kfile.c): exactly those the stack both
// sets and reads back. An option added to one side of sock_opt.c only must
// fail here.
TEST_F(Lab, tcp_owned_options_are_exactly_those_the_stack_sets_and_gets)
{
    stk_sock *s = tcp_sock();
    const int levels[] = {SOL_SOCKET, IPPROTO_TCP};

    for (int level : levels) {
        for (int name = 1; name < 80; name++) {
            unsigned char val[64] = {1};
            socklen_t len = sizeof(val);
            int set = stk_sock_setsockopt(s, level, name, val, sizeof(int));
            int get = stk_sock_getsockopt(s, level, name, val, &len);
            bool both = set != -ENOPROTOOPT && set != -EOPNOTSUPP &&
                        get != -ENOPROTOOPT && get != -EOPNOTSUPP;
            EXPECT_EQ(stk_sock_opt_owned(level, name), both)
                << "level " << level << " option " << name << ": set " << set
                << ", get " << get;
        }
    }
    EXPECT_TRUE(stk_sock_opt_owned(IPPROTO_TCP, TCP_NODELAY));
    EXPECT_FALSE(stk_sock_opt_owned(SOL_SOCKET, SO_RCVTIMEO));
    EXPECT_TRUE(stk_sock_opt_owned(IPPROTO_TCP, TCP_CORK));
    EXPECT_FALSE(stk_sock_opt_owned(IPPROTO_TCP, TCP_DEFER_ACCEPT));
    EXPECT_FALSE(stk_sock_opt_owned(IPPROTO_IP, IP_TOS));
}

// TCP_MAXSEG before a connection: read back on a closed or listening
// socket, values outside 88..65535 EINVAL, and the connections accepted
// from the listener keep their segments within it (tcp_sync_mss).
TEST_F(Lab, tcp_maxseg_user_mss_read_back_and_inherited)
{
    int v = 1200, got = 0;
    socklen_t gl = sizeof(got);
    stk_sock *l = tcp_sock();
    ASSERT_EQ(bind_port(l, 8081, 0), 0);
    ASSERT_EQ(stk_sock_setsockopt(l, IPPROTO_TCP, TCP_MAXSEG, &v, sizeof(v)),
              0);
    int bad = 10;
    EXPECT_EQ(
        stk_sock_setsockopt(l, IPPROTO_TCP, TCP_MAXSEG, &bad, sizeof(bad)),
        -EINVAL);
    ASSERT_EQ(stk_sock_listen(l, 16), 0);
    ASSERT_EQ(stk_sock_getsockopt(l, IPPROTO_TCP, TCP_MAXSEG, &got, &gl), 0);
    EXPECT_EQ(got, 1200);
    Conn c = passive_open(l, 8081, 40001);
    ASSERT_NE(c.s, nullptr);
    gl = sizeof(got);
    ASSERT_EQ(stk_sock_getsockopt(c.s, IPPROTO_TCP, TCP_MAXSEG, &got, &gl), 0);
    EXPECT_LE(got, 1200);
    EXPECT_GE(got, 1188); // less the timestamp option when it is on
}
