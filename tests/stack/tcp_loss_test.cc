// TCP loss recovery, segment by segment: the stack sends to a scripted
// receiver that drops, delays or reorders the segments a test names and
// answers as Linux does (an ACK per segment, SACK blocks most recent
// first, D-SACK for data it had). The tests assert what the stack sent:
// which segments went again, how often, and when (RFC 2018/6675 SACK,
// RFC 6582 NewReno, RFC 8985 RACK-TLP, RFC 6937 PRR, RFC 6298 RTO,
// RFC 3522 undo).
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <algorithm>
#include <functional>
#include <map>

#include "harness.h"

extern "C" {
#include "stats.h"
}

using namespace stktest;

namespace
{

constexpr uint32_t kMss = 1448; // 1460 minus the timestamp option

using Block = std::pair<uint32_t, uint32_t>;

// What a segment's fate is: drop it, or deliver it (possibly later).
struct Fate {
    bool drop = false;
    int delay = 0; // deliver after this many later segments (reordering)
};

class Loss : public Lab
{
  protected:
    // The receiver's view of one connection.
    struct Rx {
        Conn *c = nullptr;
        uint32_t isn = 0;               // first data sequence number
        std::map<uint32_t, Bytes> held; // out of order: seq -> payload
        std::vector<uint32_t> arrivals; // held seqs, most recent first
        Bytes data;                     // in order
        bool sack = true;
    };

    Rx rx_;
    // Every data segment the stack sent: offset in the stream -> times.
    std::map<uint32_t, int> sends_;
    uint32_t max_end_ = 0; // highest offset sent + 1
    int retransmissions_ = 0;
    std::vector<uint64_t> retrans_at_; // virtual time of each retransmission
    // Segments waiting to be delivered late (reordering): countdown, pkt.
    std::vector<std::pair<int, Pkt>> late_;
    // Decides each transmission's fate: offset, how many times sent so far.
    std::function<Fate(uint32_t off, int nth)> fate_ = [](uint32_t, int) {
        return Fate();
    };

    static bool
    lt(uint32_t a, uint32_t b)
    {
        return (int32_t)(a - b) < 0;
    }
    static bool
    leq(uint32_t a, uint32_t b)
    {
        return (int32_t)(a - b) <= 0;
    }

    Conn
    open(bool sack = true, bool ts = true)
    {
        PeerOpts o;
        o.sack = sack;
        o.ts = ts;
        return active_open(80, o);
    }

    void
    start(Conn &c, bool sack = true)
    {
        rx_ = Rx();
        rx_.c = &c;
        rx_.isn = c.rcv;
        rx_.sack = sack;
    }

    uint32_t
    off(uint32_t seq) const
    {
        return seq - rx_.isn;
    }

    // The held data as merged blocks, sorted.
    std::vector<Block>
    ranges() const
    {
        std::vector<Block> m;
        for (const auto &h : rx_.held) {
            uint32_t s = h.first, e = s + (uint32_t)h.second.size();
            if (!m.empty() && leq(s, m.back().second)) {
                if (lt(m.back().second, e))
                    m.back().second = e;
            } else {
                m.push_back({s, e});
            }
        }
        return m;
    }

    // The receiver gets p (in order, above a hole, or again) and answers
    // with an ACK: D-SACK first when it had the data, then the blocks in
    // the order their latest segments arrived (RFC 2018), 3 at most.
    void
    receive(const Pkt &p)
    {
        Conn &c = *rx_.c;
        uint32_t s = p.seq, e = p.seq + (uint32_t)p.payload.size();
        std::vector<Block> ack;

        if (leq(e, c.rcv)) {
            ack.push_back({s, e});
        } else if (leq(s, c.rcv)) {
            if (lt(s, c.rcv))
                ack.push_back({s, c.rcv});
            rx_.data.insert(rx_.data.end(), p.payload.begin() + (c.rcv - s),
                            p.payload.end());
            c.rcv = e;
            for (auto it = rx_.held.begin(); it != rx_.held.end();) {
                uint32_t hs = it->first, he = hs + (uint32_t)it->second.size();
                if (leq(he, c.rcv)) {
                    it = rx_.held.erase(it);
                } else if (leq(hs, c.rcv)) {
                    rx_.data.insert(rx_.data.end(),
                                    it->second.begin() + (c.rcv - hs),
                                    it->second.end());
                    c.rcv = he;
                    it = rx_.held.erase(it);
                } else {
                    ++it;
                }
            }
        } else {
            if (rx_.held.count(s))
                ack.push_back({s, e});
            rx_.held[s] = p.payload;
            rx_.arrivals.erase(
                std::remove(rx_.arrivals.begin(), rx_.arrivals.end(), s),
                rx_.arrivals.end());
            rx_.arrivals.insert(rx_.arrivals.begin(), s);
        }
        rx_.arrivals.erase(
            std::remove_if(rx_.arrivals.begin(), rx_.arrivals.end(),
                           [&](uint32_t a) { return rx_.held.count(a) == 0; }),
            rx_.arrivals.end());
        if (!rx_.sack)
            ack.clear();
        std::vector<Block> r = ranges();
        for (uint32_t a : rx_.arrivals) {
            if (!rx_.sack || ack.size() >= 3)
                break;
            for (const Block &b : r)
                if (leq(b.first, a) && lt(a, b.second) &&
                    std::find(ack.begin(), ack.end(), b) == ack.end())
                    ack.push_back(b);
        }
        peer_sack(c, c.rcv, ack);
    }

    // Take what the stack sent, decide each data segment's fate, and
    // deliver after `rtt_us / 2` of virtual time; the ACKs come back
    // at once (they reach the stack rtt/2 after the data left).
    // Returns how many data segments the stack had sent.
    int
    round(uint32_t rtt_us = 100)
    {
        std::vector<Pkt> out;
        for (const Pkt &p : drain())
            if (p.proto == 6 && p.dport == rx_.c->pport && !p.payload.empty())
                out.push_back(p);
        advance_us(rtt_us / 2);
        for (const Pkt &p : out) {
            uint32_t o = off(p.seq);
            int nth = sends_[o]++;
            if (o < max_end_) {
                retransmissions_++;
                retrans_at_.push_back(now_ns_);
            }
            max_end_ = std::max(max_end_, o + (uint32_t)p.payload.size());
            Fate f = fate_(o, nth);
            if (f.drop)
                continue;
            if (f.delay > 0) {
                late_.push_back({f.delay, p});
                continue;
            }
            receive(p);
            deliver_late();
        }
        advance_us(rtt_us / 2);
        return (int)out.size();
    }

    void
    deliver_late()
    {
        for (size_t i = 0; i < late_.size();) {
            if (--late_[i].first <= 0) {
                Pkt p = late_[i].second;
                late_.erase(late_.begin() + (long)i);
                receive(p);
            } else {
                i++;
            }
        }
    }

    // Run until n bytes arrived in order or max_ms of virtual time passed.
    bool
    transfer(size_t n, uint32_t max_ms = 5000, uint32_t rtt_us = 100)
    {
        uint64_t until = now_ns_ + (uint64_t)max_ms * 1000000u;
        while (rx_.data.size() < n && now_ns_ < until) {
            if (round(rtt_us) == 0 && late_.empty())
                advance_us(1000); // nothing in flight: let timers run
            while (!late_.empty() && round(rtt_us) == 0) {
                // flush reordered segments whose successors never came
                Pkt p = late_.front().second;
                late_.erase(late_.begin());
                receive(p);
            }
        }
        return rx_.data.size() >= n;
    }

    tcp_info
    info(stk_sock *s)
    {
        tcp_info ti{};
        socklen_t len = sizeof(ti);
        EXPECT_EQ(stk_sock_getsockopt(s, IPPROTO_TCP, TCP_INFO, &ti, &len), 0);
        return ti;
    }

    void
    check(const Conn &c)
    {
        EXPECT_EQ(stk_test_tcp_check(c.s), 0)
            << "retransmission queue out of step with lwIP's";
    }
};

} // namespace

// One segment lost in a window: it is retransmitted once, as soon as
// three later segments are SACKed (or RACK's reordering window ends),
// never what the peer holds, and no timeout happens.
TEST_F(Loss, OneHoleRetransmittedOnceWithoutTimeout)
{
    Conn c = open();
    start(c);
    Bytes data = pattern(60 * kMss);
    uint64_t rto0 = rt_stats.tcp_rto, rec0 = rt_stats.tcp_recovery_sack;
    fate_ = [](uint32_t o, int nth) {
        Fate f;
        f.drop = o == 5 * kMss && nth == 0;
        return f;
    };
    ASSERT_EQ(send_bytes(c.s, data), (ssize_t)data.size());
    uint64_t t0 = now_ns_;
    ASSERT_TRUE(transfer(data.size()));
    EXPECT_EQ(rx_.data, data);
    EXPECT_EQ(retransmissions_, 1);
    EXPECT_EQ(sends_[5 * kMss], 2);
    EXPECT_EQ(rt_stats.tcp_rto, rto0) << "a timeout where SACK sufficed";
    EXPECT_EQ(rt_stats.tcp_recovery_sack, rec0 + 1);
    ASSERT_EQ(retrans_at_.size(), 1u);
    EXPECT_LT(retrans_at_[0] - t0, 5000000ull) << "retransmitted late";
    check(c);
    tcp_info ti = info(c.s);
    EXPECT_EQ(ti.tcpi_total_retrans, 1u);
    EXPECT_NE(ti.tcpi_options & TCPI_OPT_SACK, 0);
}
