// Forged and hostile peers: RFC 5961 (challenge ACKs for in-window RSTs
// and SYNs, ACK validation, Linux's per-connection rate limit), RFC 7323
// PAWS, RFC 6528 ISNs, a zero-window peer, segments without ACK.
// stack/tcp_validate.c; the figures are Linux's (tcp_validate_incoming,
// tcp_ack, tcp_invalid_ratelimit = 500 ms).
#include <sys/epoll.h>

#include <algorithm>
#include <set>

#include "harness.h"

extern "C" {
#include "stats.h"
}

using namespace stktest;

namespace
{

class Hostile : public Lab
{
  protected:
    // An established connection the stack opened, timestamps agreed.
    Conn
    open_ts()
    {
        PeerOpts o;
        o.ts = true;
        o.sack = true;
        Conn c = active_open(80, o);
        drain();
        return c;
    }
    // A segment from the peer with any sequence number and flags.
    void
    forge(Conn &c, uint32_t seq, uint32_t ack, uint8_t flags,
          const Bytes &data = {})
    {
        TcpSeg t = peer_seg(c, ack, flags, 65535);
        t.seq = seq;
        t.payload = data;
        inject_tcp(t);
    }
    // The pure ACKs the stack sent (and nothing else).
    std::vector<Pkt>
    acks()
    {
        std::vector<Pkt> out = drain();
        for (const Pkt &p : out)
            EXPECT_EQ(p.flags, ACK) << "only ACKs expected";
        return out;
    }
    bool
    alive(Conn &c)
    {
        uint32_t ev = events(c.s);
        return !(ev & (EPOLLERR | EPOLLHUP));
    }
};

} // namespace

// RFC 5961 3.2: a RST inside the window but not at rcv_nxt gets a
// challenge ACK (the true rcv_nxt) and leaves the connection alone; the
// RST at rcv_nxt resets it.
TEST_F(Hostile, rst_in_window_gets_challenge_ack)
{
    Conn c = open_ts();
    forge(c, c.snd + 1000, 0, RST);
    std::vector<Pkt> a = acks();
    ASSERT_EQ(a.size(), 1u);
    EXPECT_EQ(a[0].ack, c.snd);
    EXPECT_EQ(a[0].seq, c.rcv);
    EXPECT_TRUE(alive(c));
    EXPECT_EQ(base_stats.tcp_challenge_ack, 1u);
    // The peer's answer to the challenge: a RST at rcv_nxt.
    forge(c, c.snd, 0, RST);
    EXPECT_TRUE(drain().empty());
    EXPECT_FALSE(alive(c));
    Bytes in;
    EXPECT_EQ(recv_bytes(c.s, &in, 100), -ECONNRESET);
}

// A RST outside the window is dropped without a word.
TEST_F(Hostile, rst_outside_window_dropped_silently)
{
    Conn c = open_ts();
    forge(c, c.snd + 10000000u, 0, RST);
    forge(c, c.snd - 10000000u, 0, RST);
    EXPECT_TRUE(drain().empty());
    EXPECT_TRUE(alive(c));
    EXPECT_EQ(base_stats.tcp_challenge_ack, 0u);
    // Still a working connection.
    peer_send(c, pattern(100));
    Bytes in;
    EXPECT_EQ(recv_bytes(c.s, &in, 1000), 100);
}

// A forged RST storm: one challenge ACK per 500 ms per connection (Linux's
// tcp_invalid_ratelimit), not one per RST.
TEST_F(Hostile, challenge_acks_rate_limited_per_connection)
{
    Conn c = open_ts();
    for (int i = 0; i < 100; i++)
        forge(c, c.snd + 100 + (uint32_t)i, 0, RST);
    EXPECT_EQ(acks().size(), 1u);
    EXPECT_EQ(base_stats.tcp_ack_skipped, 99u);
    advance(400);
    drain();
    forge(c, c.snd + 7, 0, RST);
    EXPECT_TRUE(acks().empty()); // 400 ms after the last one
    advance(200);
    drain();
    forge(c, c.snd + 7, 0, RST);
    EXPECT_EQ(acks().size(), 1u);
    EXPECT_TRUE(alive(c));
}

// RFC 5961 4.2: a SYN on an established connection (whatever its
// sequence number) gets a challenge ACK, never a reset of the connection.
TEST_F(Hostile, syn_on_established_gets_challenge_ack)
{
    Conn c = open_ts();
    forge(c, c.snd + 5, 0, SYN);
    std::vector<Pkt> a = acks();
    ASSERT_EQ(a.size(), 1u);
    EXPECT_EQ(a[0].ack, c.snd);
    advance(600);
    drain();
    forge(c, c.snd - 50000, 0, SYN); // outside the window
    EXPECT_EQ(acks().size(), 1u);
    EXPECT_TRUE(alive(c));
    EXPECT_EQ(base_stats.tcp_syn_challenge, 2u);
    peer_send(c, pattern(10));
    Bytes in;
    EXPECT_EQ(recv_bytes(c.s, &in, 100), 10);
}

// RFC 5961 5.2 / RFC 793: data whose ACK acknowledges what the stack never
// sent is not taken (lwIP alone would deliver it); in ESTABLISHED Linux
// drops it silently.
TEST_F(Hostile, data_acking_unsent_data_is_dropped)
{
    Conn c = open_ts();
    forge(c, c.snd, c.rcv + 100000, ACK | PSH, pattern(50));
    EXPECT_TRUE(drain().empty());
    Bytes in;
    EXPECT_EQ(recv_bytes(c.s, &in, 100), -EAGAIN);
    EXPECT_EQ(base_stats.tcp_bad_ack, 1u);
    peer_send(c, pattern(50, 3)); // the same bytes, a valid ACK
    EXPECT_EQ(recv_bytes(c.s, &in, 100), 50);
    EXPECT_EQ(in, pattern(50, 3));
}

// RFC 5961 5.2: an ACK older than snd_una by more than the largest window
// the peer offered: the data is dropped and a challenge ACK sent.
TEST_F(Hostile, data_with_too_old_ack_gets_challenge)
{
    Conn c = open_ts();
    ASSERT_EQ(send_bytes(c.s, pattern(200000)), 200000);
    ASSERT_EQ(pull(c, 200000).size(), 200000u); // all acked
    drain();
    forge(c, c.snd, c.rcv - 150000, ACK | PSH, pattern(40));
    std::vector<Pkt> a = acks();
    ASSERT_EQ(a.size(), 1u);
    EXPECT_EQ(a[0].ack, c.snd);
    Bytes in;
    EXPECT_EQ(recv_bytes(c.s, &in, 100), -EAGAIN);
    // An old ACK within the window is only old: the data is taken.
    forge(c, c.snd, c.rcv - 1000, ACK | PSH, pattern(40));
    c.snd += 40;
    EXPECT_EQ(recv_bytes(c.s, &in, 100), 40);
}

// A segment without the ACK bit on a synchronized connection is dropped
// (RFC 9293 3.10.7.4, Linux); lwIP alone would take its data.
TEST_F(Hostile, data_without_ack_bit_is_dropped)
{
    Conn c = open_ts();
    forge(c, c.snd, 0, PSH, pattern(30));
    EXPECT_TRUE(drain().empty());
    Bytes in;
    EXPECT_EQ(recv_bytes(c.s, &in, 100), -EAGAIN);
    EXPECT_TRUE(alive(c));
}

// An MSS option counts only in a SYN (RFC 9293 3.7.1, Linux's
// tcp_parse_options): one on a segment of an established connection does
// not shrink the segments the stack sends. lwIP took it from any segment
// (a one-byte MSS from anyone in the window; tests/fuzz found the tcp_write
// assertion it led to).
TEST_F(Hostile, mss_option_after_handshake_is_ignored)
{
    Conn c = open_ts();
    ASSERT_EQ(send_bytes(c.s, pattern(3000)), 3000);
    TcpSeg t = peer_seg(c, c.rcv, ACK, 0); // zero window: the data stays queued
    t.mss = 100;
    inject_tcp(t);
    drain();
    TcpSeg w = peer_seg(c, c.rcv, ACK, 65535);
    w.mss = 88;
    inject_tcp(w);
    ASSERT_EQ(send_bytes(c.s, pattern(3000, 1)), 3000);
    size_t largest = 0, total = 0;
    for (const Pkt &p : drain()) {
        largest = std::max(largest, p.payload.size());
        total += p.payload.size();
    }
    EXPECT_GT(largest, 1000u) << "segments shrank to the forged MSS";
    EXPECT_GT(total, 0u);
}

// RFC 7323 5: data with a timestamp older than the last one recorded is a
// wrapped-around old duplicate: dropped, with a duplicate ACK; a RST is
// still taken whatever its timestamp.
TEST_F(Hostile, paws_drops_old_timestamps)
{
    Conn c = open_ts();
    peer_send(c, pattern(20)); // ts_recent = the peer's clock now
    Bytes in;
    ASSERT_EQ(recv_bytes(c.s, &in, 100), 20);
    drain();
    TcpSeg t = peer_seg(c, c.rcv, ACK | PSH, 65535);
    t.tsval = c.ts_clock - 1000; // far behind
    t.payload = pattern(30);
    inject_tcp(t);
    std::vector<Pkt> a = acks();
    ASSERT_EQ(a.size(), 1u);
    EXPECT_EQ(a[0].ack, c.snd);
    EXPECT_EQ(recv_bytes(c.s, &in, 100), -EAGAIN);
    EXPECT_EQ(base_stats.tcp_paws_reject, 1u);
    // The same data, a fresh timestamp: taken.
    peer_send(c, pattern(30));
    EXPECT_EQ(recv_bytes(c.s, &in, 100), 30);
    // One tick behind is within Linux's PAWS window.
    t = peer_seg(c, c.rcv, ACK | PSH, 65535);
    t.tsval = c.ts_clock - 2;
    t.payload = pattern(5);
    inject_tcp(t);
    c.snd += 5;
    EXPECT_EQ(recv_bytes(c.s, &in, 100), 5);
    EXPECT_EQ(base_stats.tcp_paws_reject, 1u);
    // RST with an old timestamp at rcv_nxt: the connection resets.
    t = peer_seg(c, 0, RST, 0);
    t.tsval = c.ts_clock - 5000;
    inject_tcp(t);
    EXPECT_FALSE(alive(c));
}

// A reordered pure duplicate ACK (Linux's tcp_disordered_ack) passes PAWS:
// it carries nothing PAWS protects.
TEST_F(Hostile, paws_lets_disordered_dup_ack_through)
{
    Conn c = open_ts();
    peer_send(c, pattern(10));
    advance(50);
    drain();
    // Two duplicate ACKs the peer sent in turn, the second arriving first.
    TcpSeg first = peer_seg(c, c.rcv, ACK, 65535);
    TcpSeg second = peer_seg(c, c.rcv, ACK, 65535);
    inject_tcp(second);
    inject_tcp(first);
    EXPECT_EQ(base_stats.tcp_paws_reject, 0u);
    EXPECT_TRUE(drain().empty());
}

// A peer that offers a zero window forever: the send buffer bounds what
// the application can queue, the persist timer probes with a growing
// interval, the memory held does not grow, and the data flows once the
// window opens.
TEST_F(Hostile, zero_window_peer_holds_bounded_memory)
{
    Conn c = open_ts();
    peer_ack(c, 0);
    drain();
    size_t queued = 0;
    for (int i = 0; i < 10000; i++) {
        ssize_t n = send_bytes(c.s, pattern(16384), MSG_DONTWAIT);
        if (n < 0) {
            EXPECT_EQ(n, -EAGAIN);
            break;
        }
        queued += (size_t)n;
    }
    ASSERT_GT(queued, 0u);
    EXPECT_LT(queued, 8u * 1024 * 1024) << "the send buffer bounds it";
    long blocks = stk_test_mem_blocks();
    std::vector<uint64_t> probes;
    for (int s = 0; s < 120; s++) {
        advance(1000);
        for (const Pkt &p : drain()) {
            probes.push_back(now_ns_);
            // answered with the window still closed
            peer_ack(c, 0);
            (void)p;
        }
        EXPECT_LE(stk_test_mem_blocks(), blocks + 4);
    }
    ASSERT_GE(probes.size(), 4u) << "the persist timer probes";
    // Exponential backoff: later gaps longer than the first.
    EXPECT_GT(probes.back() - probes[probes.size() - 2], probes[1] - probes[0]);
    EXPECT_TRUE(alive(c));
    peer_ack(c, 65535); // the window opens
    Bytes got = pull(c, queued);
    EXPECT_EQ(got.size(), queued);
}

// RFC 6528: ISNs of different 4-tuples are unrelated (every bit is set in
// about half of them, no two equal), while one 4-tuple's ISN moves
// forward with the clock (64 ns ticks, Linux's).
TEST_F(Hostile, isns_are_unpredictable)
{
    std::vector<uint32_t> isn;
    std::set<uint32_t> seen;
    for (int i = 0; i < 1000; i++) {
        stk_sock *s = tcp_sock();
        ASSERT_EQ(connect_to(s, kPeerIp, (uint16_t)(1000 + i)), -EINPROGRESS);
        Pkt syn = one();
        isn.push_back(syn.seq);
        seen.insert(syn.seq);
        stk_sock_close(s);
        socks_.erase(std::find(socks_.begin(), socks_.end(), s));
        drain();
    }
    EXPECT_EQ(seen.size(), isn.size());
    for (int b = 0; b < 32; b++) {
        int ones = 0;
        for (uint32_t v : isn)
            ones += (v >> b) & 1;
        EXPECT_GT(ones, 400) << "bit " << b;
        EXPECT_LT(ones, 600) << "bit " << b;
    }
    // Successive differences are spread too (not a counter).
    int dbits[32] = {};
    for (size_t i = 1; i < isn.size(); i++)
        for (int b = 0; b < 32; b++)
            dbits[b] += ((isn[i] - isn[i - 1]) >> b) & 1;
    for (int b = 0; b < 32; b++) {
        EXPECT_GT(dbits[b], 380) << "difference bit " << b;
        EXPECT_LT(dbits[b], 620) << "difference bit " << b;
    }
    // One 4-tuple, a second apart: 10^9 / 64 ticks further.
    uint32_t same[2];
    for (int k = 0; k < 2; k++) {
        stk_sock *s = tcp_sock();
        ASSERT_EQ(bind_port(s, 5000), 0);
        ASSERT_EQ(connect_to(s, kPeerIp, 80), -EINPROGRESS);
        same[k] = one().seq;
        stk_sock_close(s);
        socks_.erase(std::find(socks_.begin(), socks_.end(), s));
        drain();
        advance(1000);
        drain();
    }
    uint32_t moved = same[1] - same[0];
    EXPECT_GT(moved, 1000000000u / 64 - 1000000u);
    EXPECT_LT(moved, 1000000000u / 64 + 1000000u);
}

namespace
{

// A listener on port 8080 with backlog 4 (5 connections: Linux's
// backlog + 1) and a flood of SYNs that never complete.
class Cookies : public Lab
{
  protected:
    stk_sock *l_ = nullptr;
    void
    listen_on()
    {
        l_ = tcp_sock();
        ASSERT_EQ(bind_port(l_, 8080), 0);
        ASSERT_EQ(stk_sock_listen(l_, 4), 0);
    }
    // SYNs from ports 20000.. that nobody completes; returns the SYN-ACKs.
    std::vector<Pkt>
    flood(int n, uint16_t first = 20000)
    {
        std::vector<Pkt> out;
        for (int i = 0; i < n; i++) {
            TcpSeg syn;
            syn.sport = (uint16_t)(first + i);
            syn.dport = 8080;
            syn.seq = 1000u * (uint32_t)i;
            syn.flags = SYN;
            syn.mss = 1460;
            inject_tcp(syn);
            for (const Pkt &p : drain())
                out.push_back(p);
        }
        return out;
    }
    // A handshake from port that nobody accepts (queued on the listener).
    void
    passive_open_noaccept(uint16_t port)
    {
        TcpSeg syn;
        syn.sport = port;
        syn.dport = 8080;
        syn.seq = 100;
        syn.flags = SYN;
        inject_tcp(syn);
        Pkt sa = one();
        ASSERT_EQ(sa.flags, SYN | ACK);
        TcpSeg ack;
        ack.sport = port;
        ack.dport = 8080;
        ack.seq = 101;
        ack.ack = sa.seq + 1;
        ack.flags = ACK;
        inject_tcp(ack);
    }
    // A client's SYN with Linux's options; its SYN-ACK.
    Pkt
    syn_from(uint16_t port, uint32_t seq, bool ts)
    {
        TcpSeg syn;
        syn.sport = port;
        syn.dport = 8080;
        syn.seq = seq;
        syn.flags = SYN;
        syn.mss = 1460;
        syn.sack_perm = true;
        syn.wscale = 7;
        syn.ts = ts;
        syn.tsval = 777;
        inject_tcp(syn);
        return one();
    }
};

} // namespace

// Past the backlog, SYNs are answered with cookies (Linux's
// tcp_syncookies=1) instead of being refused, and the handshakes in
// progress stay at the backlog's count: memory is bounded.
TEST_F(Cookies, flood_gets_cookies_and_memory_stays_bounded)
{
    listen_on();
    std::vector<Pkt> sa = flood(1000);
    EXPECT_EQ(sa.size(), 1000u) << "every SYN answered";
    for (const Pkt &p : sa)
        EXPECT_EQ(p.flags, SYN | ACK);
    EXPECT_GE(base_stats.tcp_syncookies_sent, 990u);
    EXPECT_LE(stk_test_mem_blocks(), 200L) << "no state per flooded SYN";
    EXPECT_EQ(base_stats.tcp_listen_overflow, 0u);
}

// A legitimate client behind the flood completes its handshake with the
// cookie; window scale and SACK-permitted survive in the timestamp, the
// MSS in the cookie; the connection carries data both ways.
TEST_F(Cookies, client_completes_handshake_with_cookie)
{
    listen_on();
    flood(50);
    Pkt sa = syn_from(40000, 5555, true);
    ASSERT_EQ(sa.flags, SYN | ACK);
    EXPECT_EQ(sa.mss, 1460);
    EXPECT_TRUE(sa.ts);
    EXPECT_TRUE(sa.sack_perm);
    EXPECT_EQ(sa.wscale, 7);
    EXPECT_EQ(sa.tsecr, 777u);
    uint64_t sent = base_stats.tcp_syncookies_sent;
    EXPECT_GE(sent, 1u);
    TcpSeg ack;
    ack.sport = 40000;
    ack.dport = 8080;
    ack.seq = 5556;
    ack.ack = sa.seq + 1;
    ack.flags = ACK | PSH;
    ack.win = 512; // scaled by 7: 64 KB
    ack.ts = true;
    ack.tsval = 778;
    ack.tsecr = sa.tsval;
    ack.payload = pattern(100); // data riding on the third ACK
    inject_tcp(ack);
    EXPECT_EQ(base_stats.tcp_syncookies_recv, 1u);
    stk_sock *c = nullptr;
    ASSERT_EQ(stk_sock_accept(l_, &c, nullptr, nullptr), 0);
    socks_.push_back(c);
    Bytes in;
    ASSERT_EQ(recv_bytes(c, &in, 1000), 100);
    EXPECT_EQ(in, pattern(100));
    ASSERT_EQ(send_bytes(c, pattern(2 * 1448, 9)), 2 * 1448);
    std::vector<Pkt> out = drain();
    size_t got = 0;
    for (const Pkt &p : out) {
        EXPECT_LE(p.payload.size(), 1448u); // 1460 minus timestamps
        EXPECT_TRUE(p.ts);
        got += p.payload.size();
        if (!p.payload.empty()) {
            EXPECT_EQ(p.ack, 5656u);
        }
    }
    EXPECT_EQ(got, 2u * 1448) << "two full segments at once";
}

// While a listener is flooded, accel's XDP program answers SYNs with the
// stack's cookies itself (runtime/xdp/synck.bpf.h), so a SYN reusing the
// port pair of a connection in TIME-WAIT never reaches the stack to end it
// (patch 0003): the client's ACK of the cookie must (patch 0041), and the
// listener makes the connection from it. The cookie of a second SYN on the
// same 4-tuple in the same minute with the same MSS is the first's moved
// by the difference of the SYNs' sequence numbers (stack/stk_synck.h), so
// the test knows the one the XDP program would have sent.
TEST_F(Cookies, cookie_ack_ends_time_wait)
{
    listen_on();
    flood(50);
    Pkt sa = syn_from(40001, 5000, false);
    ASSERT_EQ(sa.flags, SYN | ACK);
    TcpSeg ack;
    ack.sport = 40001;
    ack.dport = 8080;
    ack.seq = 5001;
    ack.ack = sa.seq + 1;
    ack.flags = ACK;
    inject_tcp(ack);
    ASSERT_EQ(base_stats.tcp_syncookies_recv, 1u);
    stk_sock *c = nullptr;
    ASSERT_EQ(stk_sock_accept(l_, &c, nullptr, nullptr), 0);

    // The stack closes first; the peer ACKs its FIN and sends its own.
    stk_sock_close(c);
    Pkt fin = one();
    ASSERT_TRUE(fin.flags & FIN);
    TcpSeg f;
    f.sport = 40001;
    f.dport = 8080;
    f.seq = 5001;
    f.ack = fin.seq + 1;
    f.flags = FIN | ACK;
    inject_tcp(f);
    Pkt last = one();
    ASSERT_EQ(last.flags, ACK);
    ASSERT_EQ(last.ack, 5002u);

    // The new connection's SYN (seq 9000) went to the XDP program; its
    // ACK comes to the stack, where the old pair is in TIME-WAIT.
    uint32_t cookie = sa.seq + (9000u - 5000u);
    TcpSeg ack2;
    ack2.sport = 40001;
    ack2.dport = 8080;
    ack2.seq = 9001;
    ack2.ack = cookie + 1;
    ack2.flags = ACK | PSH;
    ack2.payload = pattern(20);
    inject_tcp(ack2);
    EXPECT_EQ(base_stats.tcp_syncookies_recv, 2u) << "made from the cookie";
    stk_sock *c2 = nullptr;
    ASSERT_EQ(stk_sock_accept(l_, &c2, nullptr, nullptr), 0);
    socks_.push_back(c2);
    Bytes in;
    ASSERT_EQ(recv_bytes(c2, &in, 100), 20);
    EXPECT_EQ(in, pattern(20));

    // A wrong cookie on a TIME-WAIT pair stays the old connection's: no
    // connection, nothing accepted.
    TcpSeg bad = ack2;
    bad.sport = 40002;
    bad.ack = cookie + 77;
    bad.payload.clear();
    inject_tcp(bad);
    EXPECT_EQ(base_stats.tcp_syncookies_recv, 2u);
}

// A forged ACK with a wrong cookie is answered with a RST and makes no
// connection; so is any ACK when no cookie went out recently.
TEST_F(Cookies, bad_cookie_is_reset)
{
    listen_on();
    flood(50);
    Pkt sa = syn_from(40001, 9000, false);
    EXPECT_FALSE(sa.ts);
    EXPECT_EQ(sa.wscale, -1) << "no timestamps: no room for the scale";
    TcpSeg ack;
    ack.sport = 40001;
    ack.dport = 8080;
    ack.seq = 9001;
    ack.ack = sa.seq + 2; // off by one
    ack.flags = ACK;
    inject_tcp(ack);
    Pkt r = one();
    EXPECT_NE(r.flags & RST, 0);
    EXPECT_EQ(base_stats.tcp_syncookies_failed, 1u);
    stk_sock *c = nullptr;
    EXPECT_EQ(stk_sock_accept(l_, &c, nullptr, nullptr), -EAGAIN);
    // Three minutes later the same (right) cookie is too old.
    advance(180000);
    drain();
    ack.ack = sa.seq + 1;
    inject_tcp(ack);
    r = one();
    EXPECT_NE(r.flags & RST, 0);
    EXPECT_EQ(stk_sock_accept(l_, &c, nullptr, nullptr), -EAGAIN);
}

// Accept queues full of established connections: SYNs are refused (no
// SYN-ACK, the client retries), as Linux's sk_acceptq_is_full.
TEST_F(Cookies, full_accept_queue_refuses_syns)
{
    listen_on();
    for (int i = 0; i < 5; i++)
        passive_open_noaccept((uint16_t)(30000 + i));
    drain();
    TcpSeg syn;
    syn.sport = 31000;
    syn.dport = 8080;
    syn.seq = 1;
    syn.flags = SYN;
    inject_tcp(syn);
    EXPECT_TRUE(drain().empty());
    EXPECT_GE(base_stats.tcp_listen_overflow, 1u);
    EXPECT_EQ(base_stats.tcp_syncookies_sent, 0u);
}

// A listener with room for 1000: 600 handshakes in flight at once (SYNs
// first, then their ACKs) are 600 pending handshakes, without a cookie and
// without the count wrapping (lwIP's was 8-bit: past 255 the SYNs got
// cookies, the cookie ACKs pushed it past 255 to 0 and tcp_backlog_accepted
// asserted; patch 0037; bench/conn1m saw it with 2000 in flight).
TEST_F(Cookies, more_than_255_handshakes_in_flight)
{
    l_ = tcp_sock();
    ASSERT_EQ(bind_port(l_, 8080), 0);
    ASSERT_EQ(stk_sock_listen(l_, 1000), 0);
    uint64_t sent0 = base_stats.tcp_syncookies_sent;
    std::vector<uint32_t> isn;
    for (int i = 0; i < 600; i++) {
        TcpSeg syn;
        syn.sport = (uint16_t)(30000 + i);
        syn.dport = 8080;
        syn.seq = 100;
        syn.flags = SYN;
        syn.mss = 1460;
        inject_tcp(syn);
        Pkt sa = one();
        ASSERT_EQ(sa.flags, SYN | ACK);
        isn.push_back(sa.seq);
    }
    EXPECT_EQ(base_stats.tcp_syncookies_sent, sent0);
    for (int i = 0; i < 600; i++) {
        TcpSeg ack;
        ack.sport = (uint16_t)(30000 + i);
        ack.dport = 8080;
        ack.seq = 101;
        ack.ack = isn[(size_t)i] + 1;
        ack.flags = ACK;
        inject_tcp(ack);
    }
    EXPECT_EQ(stk_test_asserts(), 0);
    int n = 0;
    stk_sock *a = nullptr;
    while (stk_sock_accept(l_, &a, nullptr, nullptr) == 0) {
        socks_.push_back(a);
        n++;
    }
    EXPECT_EQ(n, 600);
    EXPECT_EQ(stk_test_asserts(), 0);
}
