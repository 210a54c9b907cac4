// TCP demultiplexing through the hashed PCB lookup (stack/pcb_hash.c,
// patches/0004): thousands of connections each get their own segments,
// TIME-WAIT PCBs are still found, a specific listener wins over a wildcard
// one, and every way a PCB leaves lwIP's lists (close, abort, RST, timer
// expiry) takes it out of the table. The harness teardown checks that the
// table is empty and never missed a removal; stk_test_pcb_hash_check()
// verifies mid-test that table and lists agree.
#include <arpa/inet.h>
#include <sys/socket.h>

#include <algorithm>
#include <random>

#include "harness.h"

extern "C" {
#include "siphash.h"
}

using namespace stktest;

namespace
{

class Demux : public Lab
{
  protected:
    // The table holds n PCBs (when the hashed lookup is built in).
    void
    entries_are(long n, int line)
    {
        if (stk_test_pcb_hash_enabled()) {
            EXPECT_EQ(stk_test_pcb_hash_entries(), n) << "line " << line;
        }
    }

    stk_sock *
    listener(uint16_t port, uint32_t ip = 0, bool reuseport = false)
    {
        stk_sock *s = tcp_sock();
        int one = 1;
        if (reuseport) {
            EXPECT_EQ(stk_sock_setsockopt(s, SOL_SOCKET, SO_REUSEPORT, &one,
                                          sizeof(one)),
                      0);
        }
        EXPECT_EQ(bind_port(s, port, ip), 0);
        EXPECT_EQ(stk_sock_listen(s, 4096), 0);
        return s;
    }

    // Peer sends each connection its own bytes in a shuffled order, then
    // every socket must hold exactly its own bytes.
    void
    each_gets_its_own(std::vector<Conn> &cs, uint32_t seed)
    {
        std::vector<size_t> order(cs.size());
        for (size_t i = 0; i < order.size(); i++)
            order[i] = i;
        std::mt19937 rng(seed);
        for (int round = 0; round < 2; round++) {
            std::shuffle(order.begin(), order.end(), rng);
            for (size_t k : order) {
                peer_send(cs[k], pattern(40 + k % 60, (uint8_t)(k + round)));
                if (k % 64 == 0)
                    drain();
            }
            drain();
        }
        for (size_t k = 0; k < cs.size(); k++) {
            Bytes want = pattern(40 + k % 60, (uint8_t)k);
            Bytes second = pattern(40 + k % 60, (uint8_t)(k + 1));
            want.insert(want.end(), second.begin(), second.end());
            Bytes got;
            ASSERT_EQ(recv_bytes(cs[k].s, &got, 4096), (ssize_t)want.size())
                << "connection " << k;
            ASSERT_EQ(got, want) << "connection " << k;
        }
    }

    // The stack closes c first; the peer ACKs the FIN and sends its own:
    // c ends in TIME-WAIT on the stack.
    void
    close_into_time_wait(Conn &c)
    {
        stk_sock_close(c.s);
        socks_.erase(std::find(socks_.begin(), socks_.end(), c.s));
        c.s = nullptr;
        Pkt fin = one();
        ASSERT_TRUE(fin.flags & FIN);
        c.rcv = fin.seq + 1;
        peer_send(c, {}, FIN);
        Pkt ack = one();
        ASSERT_EQ(ack.flags, ACK);
        ASSERT_EQ(ack.ack, c.snd);
    }
};

} // namespace

TEST(SipHash, matches_the_reference_vectors)
{
    // Key 00..0f; messages 00..07 and 00..0f (the SipHash paper's
    // vectors.h for SipHash-2-4; the 1-3 values from the same reference
    // code with c=1, d=3).
    const uint64_t key[2] = {0x0706050403020100ull, 0x0f0e0d0c0b0a0908ull};
    const uint64_t m[2] = {0x0706050403020100ull, 0x0f0e0d0c0b0a0908ull};
    EXPECT_EQ(base_siphash(key, m, 0, 2, 4), 0x726fdb47dd0e0e31ull);
    EXPECT_EQ(base_siphash(key, m, 1, 2, 4), 0x93f5f5799a932462ull);
    EXPECT_EQ(base_siphash(key, m, 2, 2, 4), 0x3f2acc7f57c29bdbull);
    EXPECT_EQ(base_siphash(key, m, 1, 1, 3), 0x369095118d299a8eull);
    EXPECT_EQ(base_siphash(key, m, 2, 1, 3), 0xcc4fdd1a7d908b66ull);
}

TEST_F(Demux, two_thousand_accepted_connections_each_get_their_own_data)
{
    stk_sock *l = listener(80);
    std::vector<Conn> cs;
    for (int i = 0; i < 2000; i++) {
        cs.push_back(passive_open(l, 80, (uint16_t)(10000 + i)));
        ASSERT_NE(cs.back().s, nullptr) << "connection " << i;
    }
    if (stk_test_pcb_hash_enabled()) {
        EXPECT_EQ(stk_test_pcb_hash_entries(), 2001);
        EXPECT_GE(stk_test_pcb_hash_slots(), 2 * 2001); // at most half full
    }
    EXPECT_EQ(stk_test_pcb_hash_check(), 0);
    each_gets_its_own(cs, 1);
    EXPECT_EQ(stk_test_pcb_hash_check(), 0);

    // Closing everything (peer answers each FIN) and letting TIME-WAIT
    // expire empties the table and shrinks it back.
    for (Conn &c : cs)
        close_into_time_wait(c);
    EXPECT_EQ(stk_test_pcb_hash_check(), 0);
    advance(61000);
    drain();
    if (stk_test_pcb_hash_enabled()) {
        EXPECT_EQ(stk_test_pcb_hash_entries(), 1); // the listener
        EXPECT_EQ(stk_test_pcb_hash_slots(), 1024);
    }
    EXPECT_EQ(stk_test_pcb_hash_check(), 0);
}

TEST_F(Demux, a_thousand_connected_sockets_each_get_their_own_data)
{
    std::vector<Conn> cs;
    for (int i = 0; i < 1000; i++) {
        cs.push_back(active_open((uint16_t)(80 + i % 3)));
        ASSERT_NE(cs.back().sport, 0) << "connection " << i;
    }
    entries_are(1000, __LINE__);
    EXPECT_EQ(stk_test_pcb_hash_check(), 0);
    each_gets_its_own(cs, 2);
}

TEST_F(Demux, time_wait_pcbs_are_found_among_many)
{
    stk_sock *l = listener(80);
    std::vector<Conn> cs;
    for (int i = 0; i < 300; i++)
        cs.push_back(passive_open(l, 80, (uint16_t)(20000 + i)));
    for (Conn &c : cs)
        close_into_time_wait(c);
    entries_are(301, __LINE__);
    EXPECT_EQ(stk_test_pcb_hash_check(), 0);

    // A retransmitted FIN reaches its TIME-WAIT PCB, which ACKs it again.
    // Were it missed, the listener on port 80 would answer with a RST.
    std::mt19937 rng(3);
    for (int n = 0; n < 100; n++) {
        Conn &c = cs[rng() % cs.size()];
        TcpSeg fin;
        fin.sport = c.pport;
        fin.dport = 80;
        fin.seq = c.snd - 1;
        fin.ack = c.rcv;
        fin.flags = FIN | ACK;
        inject_tcp(fin);
        Pkt ack = one();
        ASSERT_EQ(ack.flags, ACK) << "peer port " << c.pport;
        ASSERT_EQ(ack.dport, c.pport);
        ASSERT_EQ(ack.ack, c.snd);
    }

    // A new SYN past the old sequence space ends one TIME-WAIT (patch 0003)
    // and the listener takes it.
    Conn &c = cs[7];
    TcpSeg syn;
    syn.sport = c.pport;
    syn.dport = 80;
    syn.seq = c.snd + 100000;
    syn.flags = SYN;
    syn.mss = 1460;
    inject_tcp(syn);
    Pkt sa = one();
    EXPECT_EQ(sa.flags, SYN | ACK);
    EXPECT_EQ(stk_test_pcb_hash_check(), 0);
    entries_are(301, __LINE__);

    // tcp_slowtmr expires TIME-WAIT; the table follows.
    advance(61000);
    drain();
    EXPECT_EQ(stk_test_pcb_hash_check(), 0);
}

// A TIME-WAIT PCB ended by a new SYN (patch 0003) leaves the table at once
// and lwIP's list at the next tcp_slowtmr tick, without walking that list:
// lookups never see it again and its late unlinking is no anomaly.
TEST_F(Demux, time_wait_ended_by_syn_is_retired_until_the_slow_timer)
{
    stk_sock *l = listener(80);
    std::vector<Conn> cs;
    for (int i = 0; i < 3; i++)
        cs.push_back(passive_open(l, 80, (uint16_t)(21000 + i)));
    for (Conn &c : cs)
        close_into_time_wait(c);
    entries_are(4, __LINE__);
    long anomalies = stk_test_pcb_hash_anomalies();

    TcpSeg syn;
    syn.sport = cs[0].pport;
    syn.dport = 80;
    syn.seq = cs[0].snd + 100000;
    syn.flags = SYN;
    syn.mss = 1460;
    inject_tcp(syn);
    EXPECT_EQ(one().flags, SYN | ACK);
    entries_are(4, __LINE__); // listener, 2 TIME-WAIT, the new connection
    EXPECT_EQ(stk_test_pcb_hash_check(), 0);

    // The SYN again reaches the new connection, not the retired PCB.
    inject_tcp(syn);
    Pkt again = one();
    EXPECT_EQ(again.flags, SYN | ACK);
    EXPECT_EQ(again.ack, syn.seq + 1);
    // The other TIME-WAIT PCBs still answer.
    TcpSeg fin;
    fin.sport = cs[1].pport;
    fin.dport = 80;
    fin.seq = cs[1].snd - 1;
    fin.ack = cs[1].rcv;
    fin.flags = FIN | ACK;
    inject_tcp(fin);
    EXPECT_EQ(one().flags, ACK);

    advance(600); // one tcp_slowtmr tick frees the retired PCB
    drain();
    EXPECT_EQ(stk_test_pcb_hash_check(), 0);
    entries_are(4, __LINE__);
    advance(61000);
    drain();
    EXPECT_EQ(stk_test_pcb_hash_check(), 0);
    EXPECT_EQ(stk_test_pcb_hash_anomalies(), anomalies);
}

TEST_F(Demux, every_way_out_of_the_lists_leaves_the_table)
{
    stk_sock *l = listener(80);
    std::vector<Conn> cs;
    for (int i = 0; i < 4; i++)
        cs.push_back(passive_open(l, 80, (uint16_t)(30000 + i)));
    entries_are(5, __LINE__);

    // Peer's RST.
    TcpSeg rst;
    rst.sport = cs[0].pport;
    rst.dport = 80;
    rst.seq = cs[0].snd;
    rst.flags = RST;
    inject_tcp(rst);
    drain();
    entries_are(4, __LINE__);
    EXPECT_EQ(stk_test_pcb_hash_check(), 0);

    // Abortive close (SO_LINGER 0) sends a RST.
    linger lg{1, 0};
    ASSERT_EQ(
        stk_sock_setsockopt(cs[1].s, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)),
        0);
    stk_sock_close(cs[1].s);
    socks_.erase(std::find(socks_.begin(), socks_.end(), cs[1].s));
    EXPECT_EQ(one().flags & RST, RST);
    entries_are(3, __LINE__);
    EXPECT_EQ(stk_test_pcb_hash_check(), 0);

    // Orderly close from the peer: the stack's last ACK ends it.
    peer_send(cs[2], {}, FIN);
    drain();
    stk_sock_close(cs[2].s);
    socks_.erase(std::find(socks_.begin(), socks_.end(), cs[2].s));
    Pkt fin = one();
    ASSERT_TRUE(fin.flags & FIN);
    cs[2].rcv = fin.seq + 1;
    peer_ack(cs[2]);
    drain();
    entries_are(2, __LINE__);
    EXPECT_EQ(stk_test_pcb_hash_check(), 0);

    // A connection that never completes: the peer does not answer the
    // SYN, tcp_slowtmr gives up and unlinks the PCB itself.
    stk_sock *s = tcp_sock();
    EXPECT_EQ(connect_to(s, kPeerIp, 9), -EINPROGRESS);
    drain();
    entries_are(3, __LINE__);
    advance(200000);
    drain();
    EXPECT_EQ(stk_sock_take_error(s), ETIMEDOUT);
    entries_are(2, __LINE__);
    EXPECT_EQ(stk_test_pcb_hash_check(), 0);

    // A handshake the peer never finishes: SYN_RCVD gives up.
    TcpSeg syn;
    syn.sport = 31000;
    syn.dport = 80;
    syn.seq = 1;
    syn.flags = SYN;
    inject_tcp(syn);
    drain();
    entries_are(3, __LINE__);
    advance(200000);
    drain();
    entries_are(2, __LINE__);
    EXPECT_EQ(stk_test_pcb_hash_check(), 0);

    // Closing the listener takes it out; the last connection lives on.
    stk_sock_close(l);
    socks_.erase(std::find(socks_.begin(), socks_.end(), l));
    entries_are(1, __LINE__);
    peer_send(cs[3], pattern(10));
    Bytes got;
    EXPECT_EQ(recv_bytes(cs[3].s, &got, 100), 10);
    EXPECT_EQ(stk_test_pcb_hash_check(), 0);
    EXPECT_EQ(stk_test_pcb_hash_anomalies(), 0);
}

TEST_F(Demux, a_specific_listener_wins_over_the_wildcard_on_its_port)
{
    stk_sock *any = listener(8080, 0, true);
    stk_sock *one_ip = listener(8080, kStackIp, true);
    EXPECT_EQ(stk_test_pcb_hash_check(), 0);

    Conn c = passive_open(one_ip, 8080, 40000);
    ASSERT_NE(c.s, nullptr);
    stk_sock *x = nullptr;
    EXPECT_EQ(stk_sock_accept(any, &x, nullptr, nullptr), -EAGAIN);

    stk_sock_close(one_ip);
    socks_.erase(std::find(socks_.begin(), socks_.end(), one_ip));
    Conn d = passive_open(any, 8080, 40001);
    EXPECT_NE(d.s, nullptr);
    EXPECT_EQ(stk_test_pcb_hash_check(), 0);
}

// tcp_slowtmr looks at a part of the TIME-WAIT list per tick (patch 0005):
// 3000 expired PCBs are not freed in one tick (it looks at 1024 of them,
// an eighth of the list being less), and all are gone a few ticks later;
// the count the walk is sized by follows the list.
TEST_F(Demux, time_wait_is_expired_a_part_per_tick)
{
    const long n = 3000;
    stk_sock *l = listener(80);
    std::vector<Conn> cs;
    for (long i = 0; i < n; i++) {
        cs.push_back(passive_open(l, 80, (uint16_t)(22000 + i)));
        close_into_time_wait(cs.back());
    }
    EXPECT_EQ(stk_test_tw_count(), n);
    advance(59000);
    drain();
    EXPECT_EQ(stk_test_tw_count(), n) << "expired before 2 * MSL";
    long left = n;
    int ticks = 0;
    while (left > 0 && ticks < 20) {
        advance(200); // one tcp_slowtmr tick (TCP_TMR_INTERVAL 100 ms)
        drain();
        long now = stk_test_tw_count();
        EXPECT_LE(left - now, 1024) << "one tick freed more than its share";
        left = now;
        ticks++;
        EXPECT_EQ(stk_test_pcb_hash_check(), 0);
    }
    EXPECT_EQ(left, 0);
    EXPECT_LE(ticks, 8);
    entries_are(1, __LINE__);
}

TEST_F(Demux, connections_leave_the_active_list_in_any_order_without_a_walk)
{
    // lwIP's TCP_RMV starts at the predecessor the table keeps (patch
    // 0006): every removal but the head's, whatever the order, and the
    // kept predecessors stay those of lwIP's list (checked after each).
    stk_sock *l = listener(80);
    std::vector<Conn> cs;
    for (int i = 0; i < 300; i++)
        cs.push_back(passive_open(l, 80, (uint16_t)(30000 + i)));
    EXPECT_EQ(stk_test_pcb_hash_check(), 0);
    std::vector<size_t> order(cs.size());
    for (size_t i = 0; i < order.size(); i++)
        order[i] = i;
    std::shuffle(order.begin(), order.end(), std::mt19937(4));
    long before = stk_test_pcb_rmv_shortcuts(), n = 0, heads = 0;
    for (size_t k : order) {
        // The peer resets it: lwIP unlinks the pcb from the active list.
        heads += stk_test_pcb_is_active_head(cs[k].s) ? 1 : 0;
        peer_send(cs[k], {}, RST);
        drain();
        n++;
        if (n % 25 == 0) {
            ASSERT_EQ(stk_test_pcb_hash_check(), 0) << "after " << n;
        }
    }
    EXPECT_EQ(stk_test_pcb_hash_check(), 0);
    if (stk_test_pcb_hash_enabled()) {
        EXPECT_EQ(stk_test_pcb_rmv_shortcuts() - before, n - heads);
    }
    entries_are(1, __LINE__); // the listener
}
