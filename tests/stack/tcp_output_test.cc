// Deferred output (stack/output.c): an event-loop thread's sends leave
// lwIP at stk_output_flush(), so a close or shutdown in the same turn puts
// its FIN on the last data segment; without deferral they are two.
#include <netinet/in.h>
#include <sys/socket.h>

#include "harness.h"

using namespace stktest;

namespace
{

class Output : public Lab
{
  protected:
    void
    TearDown() override
    {
        stk_output_defer(false);
        Lab::TearDown();
    }
};

// The stack's TCP frames on c, in order (ARP answered by drain()).
std::vector<Pkt>
tcp_frames(std::vector<Pkt> all)
{
    std::vector<Pkt> out;

    for (const Pkt &p : all)
        if (p.proto == IPPROTO_TCP)
            out.push_back(p);
    return out;
}

} // namespace

TEST_F(Output, deferred_send_leaves_nothing_until_the_flush)
{
    Conn c = active_open();
    stk_output_defer(true);
    ASSERT_EQ(send_bytes(c.s, pattern(300)), 300);
    EXPECT_EQ(stk_output_pending(), 1u);
    EXPECT_TRUE(tcp_frames(drain()).empty());
    ASSERT_EQ(send_bytes(c.s, pattern(200, 3)), 200);
    EXPECT_EQ(stk_output_pending(), 1u); // once per socket
    stk_output_flush();
    EXPECT_EQ(stk_output_pending(), 0u);
    std::vector<Pkt> pk = tcp_frames(drain());
    ASSERT_EQ(pk.size(), 1u); // both writes in one segment
    EXPECT_EQ(pk[0].payload.size(), 500u);
}

TEST_F(Output, close_after_deferred_send_puts_fin_on_the_data)
{
    Conn c = active_open();
    stk_output_defer(true);
    ASSERT_EQ(send_bytes(c.s, pattern(400)), 400);
    stk_sock_close(c.s);
    socks_.clear();
    EXPECT_EQ(stk_output_pending(), 0u); // the closed socket left the list
    stk_output_flush();
    std::vector<Pkt> pk = tcp_frames(drain());
    ASSERT_EQ(pk.size(), 1u);
    EXPECT_EQ(pk[0].payload, pattern(400));
    EXPECT_NE(pk[0].flags & FIN, 0u);
    EXPECT_EQ(pk[0].flags & RST, 0u);
}

TEST_F(Output, shutdown_after_deferred_send_puts_fin_on_the_data)
{
    Conn c = active_open();
    stk_output_defer(true);
    ASSERT_EQ(send_bytes(c.s, pattern(100)), 100);
    ASSERT_EQ(stk_sock_shutdown(c.s, SHUT_WR), 0);
    stk_output_flush();
    std::vector<Pkt> pk = tcp_frames(drain());
    ASSERT_EQ(pk.size(), 1u);
    EXPECT_EQ(pk[0].payload.size(), 100u);
    EXPECT_NE(pk[0].flags & FIN, 0u);
}

TEST_F(Output, without_deferral_data_and_fin_are_two_segments)
{
    Conn c = active_open();
    ASSERT_EQ(send_bytes(c.s, pattern(400)), 400);
    EXPECT_EQ(stk_output_pending(), 0u);
    stk_sock_close(c.s);
    socks_.clear();
    std::vector<Pkt> pk = tcp_frames(drain());
    ASSERT_EQ(pk.size(), 2u);
    EXPECT_EQ(pk[0].payload.size(), 400u);
    EXPECT_EQ(pk[0].flags & FIN, 0u);
    EXPECT_TRUE(pk[1].payload.empty());
    EXPECT_NE(pk[1].flags & FIN, 0u);
}

TEST_F(Output, reset_connection_on_the_list_is_skipped)
{
    Conn c = active_open();
    stk_output_defer(true);
    ASSERT_EQ(send_bytes(c.s, pattern(50)), 50);
    peer_send(c, {}, RST);
    stk_output_flush(); // the pcb is gone: nothing sent, no crash
    EXPECT_TRUE(tcp_frames(drain()).empty());
    EXPECT_EQ(stk_output_pending(), 0u);
}
