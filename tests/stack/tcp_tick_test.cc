// lwIP's periodic TCP timers walk only the connections touched lately or
// with something timed (stack/tcp_tick.c, patch 0036): idle connections
// cost nothing per tick, and every timed duty still runs (delayed ACKs,
// keepalive, a FIN that waits, the end of a connection whose
// retransmissions ran out).
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <algorithm>

#include "harness.h"

using namespace stktest;

namespace
{

class Tick : public Lab
{
  protected:
    stk_sock *
    listener(uint16_t port)
    {
        stk_sock *s = tcp_sock();
        EXPECT_EQ(bind_port(s, port), 0);
        EXPECT_EQ(stk_sock_listen(s, 4096), 0);
        return s;
    }
    // The pure ACKs (no data, no SYN/FIN/RST) among pkts.
    static size_t
    pure_acks(const std::vector<Pkt> &pkts)
    {
        size_t n = 0;
        for (const Pkt &p : pkts)
            n += p.proto == 6 && p.flags == ACK && p.payload.empty();
        return n;
    }
};

} // namespace

// A thousand connections that exchanged a request and went quiet leave the
// walk; a segment on three of them brings just those three back, their
// delayed ACKs still go out, and they leave again.
TEST_F(Tick, idle_connections_leave_the_timer_walk)
{
    stk_sock *l = listener(8080);
    std::vector<Conn> cs;
    for (uint16_t i = 0; i < 1000; i++)
        cs.push_back(passive_open(l, 8080, (uint16_t)(20000 + i)));
    for (Conn &c : cs)
        peer_send(c, pattern(20, 1));
    advance(1000);
    drain();
    EXPECT_EQ(stk_test_tick_listed(), 0u);
    EXPECT_EQ(stk_test_tick_parked(), 0u);

    for (int i = 0; i < 3; i++)
        peer_send(cs[(size_t)i * 400], pattern(30, 2));
    EXPECT_EQ(stk_test_tick_listed(), 3u);
    std::vector<Pkt> early = drain();
    EXPECT_EQ(pure_acks(early), 0u) << "a single segment's ACK is delayed";
    advance(300);
    EXPECT_EQ(pure_acks(drain()), 3u) << "the delayed ACKs";
    advance(500);
    EXPECT_EQ(stk_test_tick_listed(), 0u);
    Bytes in;
    EXPECT_EQ(recv_bytes(cs[400].s, &in, 100), 50);
}

// SO_KEEPALIVE: an idle connection is parked until its probe is due, the
// probe goes at TCP_KEEPIDLE, an answer parks it again for another
// TCP_KEEPIDLE, and unanswered probes end it after TCP_KEEPCNT as before.
TEST_F(Tick, keepalive_parks_until_due)
{
    Conn c = active_open();
    int one = 1, idle = 30, intvl = 5, cnt = 3;
    ASSERT_EQ(stk_sock_setsockopt(c.s, SOL_SOCKET, SO_KEEPALIVE, &one, 4), 0);
    ASSERT_EQ(stk_sock_setsockopt(c.s, IPPROTO_TCP, TCP_KEEPIDLE, &idle, 4), 0);
    ASSERT_EQ(stk_sock_setsockopt(c.s, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, 4),
              0);
    ASSERT_EQ(stk_sock_setsockopt(c.s, IPPROTO_TCP, TCP_KEEPCNT, &cnt, 4), 0);
    drain();
    advance(1000);
    EXPECT_EQ(stk_test_tick_listed(), 0u);
    EXPECT_EQ(stk_test_tick_parked(), 1u);

    // The probe (seq snd_nxt - 1) comes at 30 s, not before.
    size_t probes = 0;
    int at = 1;
    while (probes == 0 && at < 40) {
        advance(1000);
        at++;
        for (const Pkt &p : drain())
            probes += p.proto == 6 && p.seq == c.rcv - 1;
    }
    EXPECT_EQ(probes, 1u);
    EXPECT_GE(at, 30);
    EXPECT_LE(at, 32);
    EXPECT_EQ(stk_test_tick_parked(), 0u) << "probing: on the walk";

    // Answered: parked again, the next probe 30 s later.
    peer_ack(c);
    advance(1000);
    EXPECT_EQ(stk_test_tick_listed(), 0u);
    EXPECT_EQ(stk_test_tick_parked(), 1u);
    advance(25000);
    EXPECT_TRUE(drain().empty());

    // Unanswered: three probes 5 s apart, then the connection ends.
    probes = 0;
    for (int i = 0; i < 40 && !(events(c.s) & EPOLLHUP); i++) {
        advance(1000);
        for (const Pkt &p : drain())
            probes += p.proto == 6 && p.seq == c.rcv - 1 && !(p.flags & RST);
    }
    EXPECT_EQ(probes, 3u);
    EXPECT_NE(events(c.s) & EPOLLHUP, 0u);
    EXPECT_EQ(stk_sock_take_error(c.s), ETIMEDOUT);
    EXPECT_EQ(stk_test_tick_parked(), 0u);
}

// Turning keepalive off takes the connection off the keepalive wheel.
TEST_F(Tick, keepalive_off_unparks)
{
    Conn c = active_open();
    int one = 1, zero = 0, idle = 30;
    ASSERT_EQ(stk_sock_setsockopt(c.s, SOL_SOCKET, SO_KEEPALIVE, &one, 4), 0);
    ASSERT_EQ(stk_sock_setsockopt(c.s, IPPROTO_TCP, TCP_KEEPIDLE, &idle, 4), 0);
    advance(1000);
    EXPECT_EQ(stk_test_tick_parked(), 1u);
    ASSERT_EQ(stk_sock_setsockopt(c.s, SOL_SOCKET, SO_KEEPALIVE, &zero, 4), 0);
    advance(1000);
    EXPECT_EQ(stk_test_tick_parked(), 0u);
    advance(40000);
    for (const Pkt &p : drain())
        EXPECT_NE(p.seq, c.rcv - 1) << "a keepalive probe after SO_KEEPALIVE 0";
    EXPECT_EQ(stk_test_tick_parked(), 0u);
    EXPECT_EQ(stk_test_tick_listed(), 0u);
}

// Closing states stay on the walk until they end: an orphaned FIN-WAIT-2
// times out, and the connection leaves every list.
TEST_F(Tick, closed_connection_times_out_in_fin_wait_2)
{
    stk_sock *l = listener(8081);
    Conn c = passive_open(l, 8081, 30000);
    drain();
    advance(1000);
    EXPECT_EQ(stk_test_tick_listed(), 0u);
    stk_sock_close(c.s);
    socks_.erase(std::find(socks_.begin(), socks_.end(), c.s));
    std::vector<Pkt> fin = drain();
    ASSERT_FALSE(fin.empty());
    EXPECT_NE(fin.back().flags & FIN, 0);
    c.rcv++;
    peer_ack(c); // FIN-WAIT-2, the peer never closes
    EXPECT_EQ(stk_test_tick_listed(), 1u);
    advance(70000);
    EXPECT_EQ(stk_test_tick_listed(), 0u);
    EXPECT_EQ(stk_test_pcb_hash_entries(), 1) << "only the listener is left";
}
