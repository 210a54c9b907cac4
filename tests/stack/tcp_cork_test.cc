// TCP_CORK and MSG_MORE (stack/tcp_recovery.c cork_holds): small writes
// wait in the last, partial segment and go out together: when the cork is
// removed, when a write comes without MSG_MORE, when the segment is full,
// or after Linux's 200 ms ceiling.
#include <netinet/tcp.h>

#include "harness.h"

using namespace stktest;

namespace
{

int
set_cork(stk_sock *s, int v)
{
    return stk_sock_setsockopt(s, IPPROTO_TCP, TCP_CORK, &v, sizeof(v));
}

// The data segments among frames: their payload sizes.
std::vector<size_t>
sizes(const std::vector<Pkt> &v)
{
    std::vector<size_t> out;
    for (const Pkt &p : v)
        if (!p.payload.empty())
            out.push_back(p.payload.size());
    return out;
}

} // namespace

TEST_F(Lab, tcp_cork_coalesces_until_uncorked)
{
    Conn c = active_open();
    drain();
    ASSERT_EQ(set_cork(c.s, 1), 0);
    int v = 0;
    socklen_t vl = sizeof(v);
    ASSERT_EQ(stk_sock_getsockopt(c.s, IPPROTO_TCP, TCP_CORK, &v, &vl), 0);
    EXPECT_EQ(v, 1);
    for (int i = 0; i < 3; i++)
        ASSERT_EQ(send_bytes(c.s, pattern(100, (uint8_t)i)), 100);
    EXPECT_TRUE(sizes(drain()).empty()) << "held while corked";
    ASSERT_EQ(set_cork(c.s, 0), 0);
    std::vector<Pkt> out = drain();
    ASSERT_EQ(sizes(out), std::vector<size_t>{300}) << "one segment";
    EXPECT_NE(out.back().flags & PSH, 0);
}

TEST_F(Lab, tcp_cork_sends_full_segments_and_holds_the_tail)
{
    Conn c = active_open();
    drain();
    ASSERT_EQ(set_cork(c.s, 1), 0);
    ASSERT_EQ(send_bytes(c.s, pattern(1460 * 2 + 500)), 1460 * 2 + 500);
    EXPECT_EQ(take_data(c).size(), 1460u * 2) << "full segments go";
    peer_ack(c);
    advance(100);
    EXPECT_TRUE(sizes(drain()).empty()) << "100 ms: still held";
    advance(150);
    EXPECT_EQ(sizes(drain()), std::vector<size_t>{500}) << "200 ms ceiling";
}

TEST_F(Lab, tcp_msg_more_holds_until_a_write_without_it)
{
    Conn c = active_open();
    drain();
    ASSERT_EQ(send_bytes(c.s, pattern(200), MSG_MORE), 200);
    ASSERT_EQ(send_bytes(c.s, pattern(300), MSG_MORE), 300);
    EXPECT_TRUE(sizes(drain()).empty());
    ASSERT_EQ(send_bytes(c.s, pattern(50)), 50);
    std::vector<Pkt> out = drain();
    ASSERT_EQ(sizes(out), std::vector<size_t>{550});
    EXPECT_NE(out.back().flags & PSH, 0);
}
