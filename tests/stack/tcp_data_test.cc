// TCP data transfer and teardown: both directions, windows and
// back-pressure, partial writes, MSG_PEEK, EOF, RST, shutdown, close with
// unread data, SO_LINGER 0, options.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>

#include "harness.h"

extern "C" {
#include "stats.h"
}

using namespace stktest;

TEST_F(Lab, tcp_data_both_directions)
{
    Conn c = active_open();
    Bytes out = pattern(5000);
    ASSERT_EQ(send_bytes(c.s, out), 5000);
    EXPECT_GT(stk_sock_outq(c.s), 0);
    Bytes got = pull(c, 5000);
    EXPECT_EQ(got, out);
    drain();
    EXPECT_EQ(stk_sock_outq(c.s), 0);

    peer_send(c, pattern(3000, 9));
    EXPECT_NE(events(c.s) & EPOLLIN, 0u);
    EXPECT_EQ(stk_sock_inq(c.s), 3000);
    Bytes in;
    ASSERT_EQ(recv_bytes(c.s, &in, 1000, MSG_PEEK), 1000);
    Bytes p9 = pattern(3000, 9);
    EXPECT_EQ(in, Bytes(p9.begin(), p9.begin() + 1000));
    ASSERT_EQ(recv_bytes(c.s, &in, 10000), 3000);
    EXPECT_EQ(in, pattern(3000, 9));
    EXPECT_EQ(recv_bytes(c.s, &in, 10), -EAGAIN);
    EXPECT_EQ(events(c.s) & EPOLLIN, 0u);
}

TEST_F(Lab, tcp_scatter_gather_send_and_recv)
{
    Conn c = active_open();
    Bytes a = pattern(100, 1), b = pattern(200, 2);
    iovec iov[2] = {{a.data(), a.size()}, {b.data(), b.size()}};
    msghdr m{};
    m.msg_iov = iov;
    m.msg_iovlen = 2;
    ASSERT_EQ(stk_sock_sendmsg(c.s, &m, 0), 300);
    Bytes got = take_data(c);
    Bytes want = a;
    want.insert(want.end(), b.begin(), b.end());
    EXPECT_EQ(got, want);
    peer_send(c, want);
    Bytes x(150), y(150);
    iovec riov[2] = {{x.data(), x.size()}, {y.data(), y.size()}};
    msghdr rm{};
    rm.msg_iov = riov;
    rm.msg_iovlen = 2;
    ASSERT_EQ(stk_sock_recvmsg(c.s, &rm, 0), 300);
    x.insert(x.end(), y.begin(), y.end());
    EXPECT_EQ(x, want);
}

TEST_F(Lab, tcp_send_backpressure_partial_write_then_ack_frees_space)
{
    Conn c = active_open();
    int sb = 8192; // Linux doubles it: 16384, half of it is payload room
    ASSERT_EQ(stk_sock_setsockopt(c.s, SOL_SOCKET, SO_SNDBUF, &sb, 4), 0);
    int v = 0;
    socklen_t vl = sizeof(v);
    ASSERT_EQ(stk_sock_getsockopt(c.s, SOL_SOCKET, SO_SNDBUF, &v, &vl), 0);
    EXPECT_EQ(v, 16384);
    Bytes big = pattern(20000);
    ssize_t n = send_bytes(c.s, big);
    EXPECT_EQ(n, 8192); // partial write
    EXPECT_EQ(send_bytes(c.s, big), -EAGAIN);
    EXPECT_EQ(events(c.s) & EPOLLOUT, 0u);
    uint32_t gen0 = 0, gen1 = 0;
    stk_sock_events(c.s, &gen0);
    Bytes got = pull(c, 8192);
    EXPECT_EQ(got.size(), 8192u);
    drain();
    EXPECT_NE(stk_sock_events(c.s, &gen1) & EPOLLOUT, 0u);
    EXPECT_NE(gen0, gen1);
    EXPECT_EQ(send_bytes(c.s, big), 8192);
}

TEST_F(Lab, tcp_send_limited_by_peer_window)
{
    Conn c = active_open();
    // Peer closes its window: data stays queued, nothing is sent.
    peer_ack(c, 0);
    ASSERT_EQ(send_bytes(c.s, pattern(4000)), 4000);
    EXPECT_TRUE(take_data(c).empty());
    // Window opens: data flows.
    peer_ack(c, 65535);
    EXPECT_EQ(pull(c, 4000), pattern(4000));
}

TEST_F(Lab, tcp_receive_window_is_back_pressure)
{
    Conn c = active_open();
    // The stack scales its window by 2^7; nothing read yet.
    Bytes chunk = pattern(1400);
    uint32_t last_win = 0;
    for (int i = 0; i < 10; i++) {
        peer_send(c, chunk);
        for (const Pkt &p : drain())
            if (p.flags & ACK)
                last_win = (uint32_t)p.win << 7;
    }
    advance(500); // delayed ACKs
    for (const Pkt &p : drain())
        if (p.flags & ACK)
            last_win = (uint32_t)p.win << 7;
    EXPECT_LE(last_win, 4096u * 1024u - 14000u + 128u); // TCP_WND 4 MB
    EXPECT_EQ(stk_sock_inq(c.s), 14000);
    Bytes in;
    ASSERT_EQ(recv_bytes(c.s, &in, 14000), 14000);
    // Reading gives the window back (a window update goes out).
    uint32_t upd = 0;
    advance(500);
    for (const Pkt &p : drain())
        if (p.flags & ACK)
            upd = (uint32_t)p.win << 7;
    EXPECT_GT(upd, last_win);
}

TEST_F(Lab, tcp_small_rcvbuf_closes_window)
{
    stk_sock *l = tcp_sock();
    int rb = 4096; // window cap 4096
    ASSERT_EQ(stk_sock_setsockopt(l, SOL_SOCKET, SO_RCVBUF, &rb, 4), 0);
    ASSERT_EQ(bind_port(l, 7000, 0), 0);
    ASSERT_EQ(stk_sock_listen(l, 4), 0);
    Conn c = passive_open(l, 7000, 45000);
    ASSERT_NE(c.s, nullptr);
    int v = 0;
    socklen_t vl = sizeof(v);
    ASSERT_EQ(stk_sock_getsockopt(c.s, SOL_SOCKET, SO_RCVBUF, &v, &vl), 0);
    EXPECT_EQ(v, 8192);
    // The SYN-ACK announced 65535 (unscaled); lwIP never shrinks an
    // announced window, so fill that first, then the window must be 0.
    uint32_t win = 1;
    for (int i = 0; i < 60 && win != 0; i++) {
        peer_send(c, pattern(1460));
        advance(300);
        for (const Pkt &p : drain())
            if (p.flags & ACK)
                win = p.win;
    }
    EXPECT_EQ(win, 0u);
    Bytes in;
    ASSERT_GT(recv_bytes(c.s, &in, 100000), 0);
    advance(300);
    win = 0;
    for (const Pkt &p : drain())
        if (p.flags & ACK)
            win = (uint32_t)p.win << 7;
    EXPECT_GT(win, 0u);
    EXPECT_LE(win, 4096u + 128u);
}

TEST_F(Lab, tcp_eof_after_data)
{
    Conn c = active_open();
    peer_send(c, pattern(10), FIN);
    drain();
    uint32_t ev = events(c.s);
    EXPECT_NE(ev & EPOLLRDHUP, 0u);
    EXPECT_NE(ev & EPOLLIN, 0u);
    EXPECT_EQ(ev & EPOLLHUP, 0u);
    Bytes in;
    EXPECT_EQ(recv_bytes(c.s, &in, 100), 10);
    EXPECT_EQ(recv_bytes(c.s, &in, 100), 0);
    // Half-closed by the peer: we can still send.
    EXPECT_EQ(send_bytes(c.s, pattern(5)), 5);
    EXPECT_EQ(take_data(c).size(), 5u);
}

TEST_F(Lab, tcp_rst_gives_econnreset_once_then_eof_and_epipe)
{
    Conn c = active_open();
    peer_send(c, pattern(10));
    drain();
    TcpSeg r;
    r.sport = c.pport;
    r.dport = c.sport;
    r.seq = c.snd;
    r.flags = RST;
    inject_tcp(r);
    uint32_t ev = events(c.s);
    EXPECT_NE(ev & EPOLLERR, 0u);
    EXPECT_NE(ev & EPOLLHUP, 0u);
    Bytes in;
    EXPECT_EQ(recv_bytes(c.s, &in, 100), 10); // queued data first
    EXPECT_EQ(recv_bytes(c.s, &in, 100), -ECONNRESET);
    EXPECT_EQ(recv_bytes(c.s, &in, 100), 0);
    EXPECT_EQ(send_bytes(c.s, pattern(3)), -EPIPE);
}

TEST_F(Lab, tcp_rst_reported_by_send)
{
    Conn c = active_open();
    TcpSeg r;
    r.sport = c.pport;
    r.dport = c.sport;
    r.seq = c.snd;
    r.flags = RST;
    inject_tcp(r);
    EXPECT_EQ(send_bytes(c.s, pattern(3)), -ECONNRESET);
    EXPECT_EQ(send_bytes(c.s, pattern(3)), -EPIPE);
}

TEST_F(Lab, tcp_shutdown_wr_sends_fin_and_send_fails_epipe)
{
    Conn c = active_open();
    ASSERT_EQ(stk_sock_shutdown(c.s, SHUT_WR), 0);
    std::vector<Pkt> pk;
    take_data(c, &pk);
    ASSERT_FALSE(pk.empty());
    EXPECT_NE(pk.back().flags & FIN, 0u);
    EXPECT_EQ(send_bytes(c.s, pattern(3)), -EPIPE);
    // Reading still works until the peer closes.
    peer_send(c, pattern(7));
    Bytes in;
    EXPECT_EQ(recv_bytes(c.s, &in, 100), 7);
    peer_send(c, {}, FIN);
    drain();
    EXPECT_EQ(recv_bytes(c.s, &in, 100), 0);
    EXPECT_NE(events(c.s) & EPOLLHUP, 0u);
}

// The peer's last data, its FIN and the ACK of our last data and FIN in one
// segment
// (we half-closed first; the segment takes us from FIN_WAIT_1 straight to
// TIME_WAIT): every byte is read before EOF, as on Linux. lwIP reports the
// ACK (sent callback) before the data; the socket used to leave the pcb at
// that point and the data went to nobody (an exec'd socat relaying an echo
// lost its last segment, tests/integration/fork_exec_join.sh).
TEST_F(Lab, tcp_data_with_fin_acking_ours_is_read_before_eof)
{
    Conn c = active_open();
    ASSERT_EQ(send_bytes(c.s, pattern(300, 1)), 300);
    ASSERT_EQ(stk_sock_shutdown(c.s, SHUT_WR), 0);
    std::vector<Pkt> pk;
    // Our last data and FIN, not acknowledged yet.
    EXPECT_EQ(take_data(c, &pk), pattern(300, 1));
    ASSERT_FALSE(pk.empty());
    ASSERT_NE(pk.back().flags & FIN, 0u);
    peer_send(c, pattern(700), FIN); // data + FIN + ACK of all of ours
    drain();
    Bytes in;
    EXPECT_EQ(recv_bytes(c.s, &in, 1000), 700);
    EXPECT_EQ(in, pattern(700));
    EXPECT_EQ(recv_bytes(c.s, &in, 1000), 0);
    EXPECT_NE(events(c.s) & EPOLLHUP, 0u);
}

// Data arriving after shutdown(SHUT_RDWR) (our FIN sent): Linux resets
// the connection (RST out, ECONNRESET, POLLERR); differential 018.
TEST_F(Lab, tcp_data_after_shutdown_rdwr_resets)
{
    Conn c = active_open();
    ASSERT_EQ(stk_sock_shutdown(c.s, SHUT_RDWR), 0);
    take_data(c); // our FIN
    peer_send(c, pattern(20));
    std::vector<Pkt> pk = drain();
    bool rst = false;
    for (const Pkt &p : pk)
        rst |= (p.flags & RST) != 0;
    EXPECT_TRUE(rst);
    uint32_t ev = events(c.s);
    EXPECT_NE(ev & EPOLLERR, 0u);
    EXPECT_NE(ev & EPOLLHUP, 0u);
    Bytes in;
    EXPECT_EQ(recv_bytes(c.s, &in, 100), -ECONNRESET);
}

TEST_F(Lab, tcp_close_orderly_sends_fin_and_queued_data)
{
    Conn c = active_open();
    peer_ack(c, 0); // zero window: the data is still queued at close
    ASSERT_EQ(send_bytes(c.s, pattern(3000)), 3000);
    drain();
    stk_sock_close(c.s);
    socks_.clear();
    EXPECT_TRUE(take_data(c).empty());
    peer_ack(c, 65535);
    std::vector<Pkt> pk;
    Bytes got = pull(c, 3000, 65535, &pk);
    EXPECT_EQ(got, pattern(3000));
    advance(500);
    take_data(c, &pk);
    bool fin = false;
    for (const Pkt &p : pk) {
        EXPECT_EQ(p.flags & RST, 0u);
        fin |= (p.flags & FIN) != 0;
    }
    EXPECT_TRUE(fin);
    peer_send(c, {}, FIN);
    drain();
    EXPECT_EQ(base_stats.tcp_rst_sent, 0u);
}

TEST_F(Lab, tcp_close_with_unread_data_sends_rst)
{
    Conn c = active_open();
    peer_send(c, pattern(10));
    drain();
    stk_sock_close(c.s);
    socks_.clear();
    bool rst = false;
    for (const Pkt &p : drain()) {
        rst |= (p.flags & RST) != 0;
        EXPECT_EQ(p.flags & FIN, 0u);
    }
    EXPECT_TRUE(rst);
    EXPECT_EQ(base_stats.tcp_rst_sent, 1u);
}

TEST_F(Lab, tcp_so_linger_zero_sends_rst)
{
    Conn c = active_open();
    linger lg{1, 0};
    ASSERT_EQ(stk_sock_setsockopt(c.s, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)),
              0);
    stk_sock_close(c.s);
    socks_.clear();
    Pkt p = one();
    EXPECT_NE(p.flags & RST, 0u);
}

TEST_F(Lab, tcp_exit_closes_open_connections_like_close)
{
    // All data read: FIN, as Linux closes the sockets of an exiting process.
    active_open();
    EXPECT_EQ(stk_close_all_at_exit(), 1);
    Pkt p = one();
    EXPECT_NE(p.flags & FIN, 0u);
    EXPECT_EQ(p.flags & RST, 0u);
    EXPECT_EQ(stk_close_all_at_exit(), 0); // nothing left attached
}

TEST_F(Lab, tcp_exit_with_unread_data_sends_rst)
{
    Conn c = active_open();
    peer_send(c, pattern(10));
    drain();
    EXPECT_EQ(stk_close_all_at_exit(), 1);
    bool rst = false;
    for (const Pkt &p : drain()) {
        rst |= (p.flags & RST) != 0;
        EXPECT_EQ(p.flags & FIN, 0u);
    }
    EXPECT_TRUE(rst);
}

TEST_F(Lab, tcp_data_after_close_is_answered_with_rst)
{
    Conn c = active_open();
    stk_sock_close(c.s);
    socks_.clear();
    std::vector<Pkt> pk;
    take_data(c, &pk);
    ASSERT_FALSE(pk.empty());
    EXPECT_NE(pk.back().flags & FIN, 0u);
    peer_send(c, pattern(10));
    bool rst = false;
    for (const Pkt &p : drain())
        rst |= (p.flags & RST) != 0;
    EXPECT_TRUE(rst);
}

TEST_F(Lab, tcp_options_nodelay_keepalive)
{
    Conn c = active_open();
    int one_ = 1, v = 0;
    socklen_t vl = sizeof(v);
    ASSERT_EQ(stk_sock_setsockopt(c.s, IPPROTO_TCP, TCP_NODELAY, &one_, 4), 0);
    ASSERT_EQ(stk_sock_getsockopt(c.s, IPPROTO_TCP, TCP_NODELAY, &v, &vl), 0);
    EXPECT_EQ(v, 1);
    // Nagle off: two small writes go out without waiting for an ACK.
    ASSERT_EQ(send_bytes(c.s, pattern(10)), 10);
    ASSERT_EQ(send_bytes(c.s, pattern(10)), 10);
    EXPECT_EQ(take_data(c).size(), 20u);
    peer_ack(c);
    drain();
    int idle = 10, intvl = 2, cnt = 3;
    ASSERT_EQ(stk_sock_setsockopt(c.s, SOL_SOCKET, SO_KEEPALIVE, &one_, 4), 0);
    ASSERT_EQ(stk_sock_setsockopt(c.s, IPPROTO_TCP, TCP_KEEPIDLE, &idle, 4), 0);
    ASSERT_EQ(stk_sock_setsockopt(c.s, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, 4),
              0);
    ASSERT_EQ(stk_sock_setsockopt(c.s, IPPROTO_TCP, TCP_KEEPCNT, &cnt, 4), 0);
    int probes = 0;
    for (int i = 0; i < 40 && stk_sock_take_error(c.s) == 0; i++) {
        advance(1000);
        for (const Pkt &p : drain())
            if (p.proto == 6 && p.payload.size() <= 1 && !(p.flags & RST))
                probes++;
        if (events(c.s) & EPOLLERR)
            break;
    }
    EXPECT_GE(probes, 3);
    EXPECT_NE(events(c.s) & EPOLLHUP, 0u);
    EXPECT_EQ(stk_sock_setsockopt(c.s, IPPROTO_TCP, TCP_KEEPCNT, nullptr, 0),
              -EINVAL);
    EXPECT_EQ(stk_sock_setsockopt(c.s, SOL_SOCKET, 9999, &one_, 4),
              -ENOPROTOOPT);
    vl = sizeof(v);
    ASSERT_EQ(stk_sock_getsockopt(c.s, SOL_SOCKET, SO_TYPE, &v, &vl), 0);
    EXPECT_EQ(v, SOCK_STREAM);
}

TEST_F(Lab, tcp_nagle_holds_small_segment_until_ack)
{
    Conn c = active_open();
    ASSERT_EQ(send_bytes(c.s, pattern(10)), 10);
    EXPECT_EQ(take_data(c).size(), 10u);
    ASSERT_EQ(send_bytes(c.s, pattern(10)), 10);
    EXPECT_TRUE(take_data(c).empty()); // unacked small segment in flight
    peer_ack(c);
    EXPECT_EQ(take_data(c).size(), 10u);
}

// Linux's initial congestion window is 10 segments (RFC 6928); lwIP's own
// default is 3 (RFC 3390). The first flight after the handshake carries
// 10 full segments, then waits for an ACK.
TEST_F(Lab, tcp_initial_cwnd_is_ten_segments_both_ways)
{
    Conn a = active_open();
    stk_sock *l = tcp_sock();
    ASSERT_EQ(bind_port(l, 8080, 0), 0);
    ASSERT_EQ(stk_sock_listen(l, 8), 0);
    Conn p = passive_open(l, 8080, 50000);
    ASSERT_NE(p.s, nullptr);
    for (Conn *c : {&a, &p}) {
        ASSERT_EQ(send_bytes(c->s, pattern(40000)), 40000);
        std::vector<Pkt> pkts;
        Bytes first = take_data(*c, &pkts);
        EXPECT_EQ(first.size(), 10u * 1460u);
        size_t segs = 0;
        for (const Pkt &k : pkts)
            segs += k.payload.empty() ? 0 : 1;
        EXPECT_EQ(segs, 10u);
        advance(10); // no timer sends more before an ACK
        EXPECT_TRUE(take_data(*c).empty());
        peer_ack(*c); // slow start: the window grows
        EXPECT_GT(take_data(*c).size(), 1460u);
    }
}

// TCP_INFO's tcpi_bytes_acked and tcpi_bytes_received (Linux's longer
// struct): the SYN counts as one acked byte, data each way as sent, and
// the peer's FIN as one received.
TEST_F(Lab, tcp_info_counts_bytes_acked_and_received)
{
    Conn c = active_open();
    auto info = [&](uint64_t *acked, uint64_t *received) {
        struct stk_tcp_info ti;
        socklen_t len = sizeof(ti);
        ASSERT_EQ(stk_sock_getsockopt(c.s, IPPROTO_TCP, TCP_INFO, &ti, &len),
                  0);
        ASSERT_EQ(len, sizeof(ti));
        *acked = ti.tcpi_bytes_acked;
        *received = ti.tcpi_bytes_received;
    };
    uint64_t acked, received;
    info(&acked, &received);
    EXPECT_EQ(acked, 1u);
    EXPECT_EQ(received, 0u);
    ASSERT_EQ(send_bytes(c.s, pattern(5000)), 5000);
    pull(c, 5000);
    drain();
    peer_send(c, pattern(3000, 9));
    info(&acked, &received);
    EXPECT_EQ(acked, 5001u);
    EXPECT_EQ(received, 3000u);
    ASSERT_EQ(stk_sock_shutdown(c.s, SHUT_WR), 0);
    take_data(c);                // our FIN: the peer's FIN acks it
    peer_send(c, Bytes(), 0x01); // FIN: TIME-WAIT
    info(&acked, &received);
    EXPECT_EQ(acked, 5002u);
    EXPECT_EQ(received, 3001u);
}

// The retransmission timer fires when the clock jumps past it in one step
// (a process descheduled for a while): the wheel's due slots are found a
// bitmap word at a time, across words and past a whole lap (1024 ms).
TEST_F(Lab, tcp_rto_fires_after_one_long_clock_step)
{
    for (uint32_t step_ms : {300u, 1700u}) {
        Conn c = active_open();
        ASSERT_EQ(send_bytes(c.s, pattern(1000)), 1000);
        std::vector<Pkt> v = drain();
        ASSERT_EQ(v.size(), 1u);
        uint32_t seq = v[0].seq;
        advance_us(100000); // 100 ms: the RTO (>= 200 ms) is not due
        EXPECT_TRUE(drain().empty());
        advance_us(step_ms * 1000u);
        bool resent = false;
        for (const Pkt &p : drain())
            resent |= p.seq == seq && p.payload.size() == 1000;
        EXPECT_TRUE(resent)
            << "no retransmission after a " << step_ms << " ms step";
        pull(c, 1000);
    }
}
