// The resets the stack sends, flag by flag as Linux: a reply to a segment
// is a bare RST at its ACK when it carried one and RST|ACK at sequence 0
// otherwise, with no options (tcp_v4_send_reset); an active reset (close
// with unread data) is RST|ACK at snd_nxt with the timestamp option of a
// connection that uses timestamps (tcp_send_active_reset).
#include <sys/socket.h>

#include <algorithm>

#include "harness.h"

using namespace stktest;

TEST_F(Lab, tcp_rst_reply_to_ack_is_bare_at_its_ack)
{
    TcpSeg t;
    t.sport = 5555;
    t.dport = 4444; // nothing there
    t.seq = 1000;
    t.ack = 777777;
    t.flags = ACK;
    t.ts = true;
    t.tsval = 5;
    t.payload = Bytes(10, 'x');
    inject_tcp(t);
    Pkt r = one();
    EXPECT_EQ(r.flags, RST);
    EXPECT_EQ(r.seq, 777777u);
    EXPECT_EQ(r.ack, 0u);
    EXPECT_FALSE(r.ts);
}

TEST_F(Lab, tcp_rst_reply_to_syn_acks_it_at_sequence_zero)
{
    TcpSeg t;
    t.sport = 5555;
    t.dport = 4444;
    t.seq = 1000;
    t.ack = 424242; // ignored: no ACK flag
    t.flags = SYN;
    t.ts = true;
    inject_tcp(t);
    Pkt r = one();
    EXPECT_EQ(r.flags, RST | ACK);
    EXPECT_EQ(r.seq, 0u);
    EXPECT_EQ(r.ack, 1001u);
    EXPECT_FALSE(r.ts);
}

TEST_F(Lab, tcp_rst_active_on_close_with_unread_data_has_timestamps)
{
    PeerOpts o;
    o.ts = true;
    Conn c = active_open(80, o);
    drain();
    peer_send(c, Bytes(5, 'u'));
    drain();
    stk_sock_close(c.s);
    socks_.erase(std::remove(socks_.begin(), socks_.end(), c.s), socks_.end());
    Pkt r;
    for (const Pkt &p : drain()) // (a delayed ACK of the data may lead)
        if (p.flags & RST)
            r = p;
    EXPECT_EQ(r.flags, RST | ACK);
    EXPECT_EQ(r.seq, c.rcv);
    EXPECT_EQ(r.ack, c.snd);
    EXPECT_TRUE(r.ts);
}

TEST_F(Lab, tcp_rst_data_after_shut_rd_and_fin_is_bare)
{
    Conn c = active_open();
    drain();
    ASSERT_EQ(stk_sock_shutdown(c.s, SHUT_RDWR), 0);
    Pkt fin = one();
    ASSERT_TRUE(fin.flags & FIN);
    c.rcv = fin.seq + 1;
    peer_send(c, Bytes(3, 'd'));
    Pkt r = one();
    EXPECT_EQ(r.flags, RST);
    EXPECT_EQ(r.seq, c.rcv);
}
