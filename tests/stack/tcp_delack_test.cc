// Delayed ACKs (lwIP patch 0007, LWIP_TCP_DELACK_BUSY): lwIP's fast timer
// ticks every 100 ms; a delayed ACK goes out at the first tick, except on an
// interactive connection (the last ACK lwIP delayed left on the
// application's data) whose application has not read the new data yet:
// that one waits a tick more, since the answer will carry it.
#include <netinet/in.h>

#include "harness.h"

using namespace stktest;

namespace
{

class Delack : public Lab
{
  protected:
    // The stack's pure ACKs on c (no data, SYN, FIN or RST).
    size_t
    pure_acks(Conn &c)
    {
        size_t n = 0;
        for (const Pkt &p : drain())
            if (p.proto == IPPROTO_TCP && p.dport == c.pport &&
                p.payload.empty() && (p.flags & (SYN | FIN | RST)) == 0 &&
                (p.flags & ACK) != 0)
                n++;
        return n;
    }

    // A request the application reads and answers at once: the answer
    // carries the delayed ACK, so the connection is interactive.
    void
    answered_request(Conn &c)
    {
        Bytes got;
        peer_send(c, pattern(40));
        ASSERT_EQ(recv_bytes(c.s, &got, 100), 40);
        ASSERT_EQ(send_bytes(c.s, pattern(120, 1)), 120);
        Bytes data = take_data(c);
        ASSERT_EQ(data.size(), 120u) << "the answer left at once, with the ACK";
    }

    // An interactive connection with the next request waiting, unread.
    Conn
    interactive_with_request()
    {
        Conn c = active_open();
        answered_request(c);
        peer_send(c, pattern(40, 2));
        return c;
    }

    // The application reads the 40-byte request waiting on c.
    void
    read_request(Conn &c)
    {
        Bytes got;
        ASSERT_EQ(recv_bytes(c.s, &got, 100), 40);
    }
};

} // namespace

TEST_F(Delack, unread_data_on_an_interactive_connection_waits_one_tick_more)
{
    Conn c = active_open();
    answered_request(c);
    peer_send(c, pattern(40, 2)); // the next request; not read yet
    advance(100);                 // one tick: still waiting
    EXPECT_EQ(pure_acks(c), 0u);
    advance(100); // the second tick sends it
    EXPECT_EQ(pure_acks(c), 1u);
}

TEST_F(Delack, the_answer_within_two_ticks_carries_the_ack)
{
    Conn c = interactive_with_request();
    advance(150);
    EXPECT_EQ(pure_acks(c), 0u);
    read_request(c);
    ASSERT_EQ(send_bytes(c.s, pattern(80, 3)), 80);
    std::vector<Pkt> pk;
    EXPECT_EQ(take_data(c, &pk).size(), 80u);
    ASSERT_EQ(pk.size(), 1u); // the answer, no ACK alone
    advance(300);
    EXPECT_EQ(pure_acks(c), 0u);
}

TEST_F(Delack, data_the_application_read_is_acked_at_the_first_tick)
{
    // It read the data and answers nothing yet: it may wait for more, and
    // the peer's Nagle may wait for this ACK.
    Conn c = interactive_with_request();
    read_request(c);
    advance(100);
    EXPECT_EQ(pure_acks(c), 1u);
}

TEST_F(Delack, a_connection_that_never_answered_acks_at_the_first_tick)
{
    Conn c = active_open();
    peer_send(c, pattern(40)); // not read, never answered
    advance(100);
    EXPECT_EQ(pure_acks(c), 1u);
}

TEST_F(Delack, an_ack_the_timer_sent_alone_ends_the_interactive_mode)
{
    Conn c = interactive_with_request();
    advance(200);
    ASSERT_EQ(pure_acks(c), 1u); // the application was too slow
    read_request(c);
    peer_send(c, pattern(40, 3)); // unread, but no longer interactive
    advance(100);
    EXPECT_EQ(pure_acks(c), 1u);
}
