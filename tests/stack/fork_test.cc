// The stack's half of the fork model (stack/fork.c): after fork every
// connection a socket holds is frozen (no input, no output, no timers)
// until one process claims it (thaw) or gives it up (drop, silently); a
// child drops the connections no socket holds; connections joining and
// leaving the demux are reported in order; a SYN the runtime tags with a
// listener id goes to that member of a SO_REUSEPORT group.
#include <arpa/inet.h>
#include <sys/epoll.h>

#include <vector>

#include "harness.h"

using namespace stktest;

namespace
{

struct Note {
    stk_flow f;
    bool add, tw;
};
std::vector<Note> notes;

void
record(const stk_flow *f, bool add, bool tw)
{
    notes.push_back({*f, add, tw});
}

const stk_flow_ops kRecord = {record, nullptr, nullptr, nullptr};

// A region's UDP tags, as the runtime keeps them: tag -> owner (0: none).
std::vector<int> tag_owner;
int me = 1;
uint32_t
udp_tag()
{
    tag_owner.push_back(0);
    return (uint32_t)tag_owner.size();
}
int
udp_claim(uint32_t tag, bool take)
{
    int &o = tag_owner.at(tag - 1);
    if (o == me)
        return 1;
    if (o != 0)
        return -1;
    if (!take)
        return 0;
    o = me;
    return 1;
}
const stk_flow_ops kUdpTags = {record, nullptr, udp_tag, udp_claim};

class Fork : public Lab
{
  protected:
    void
    TearDown() override
    {
        stk_set_flow_ops(nullptr);
        notes.clear();
        tag_owner.clear();
        me = 1;
        Lab::TearDown();
    }

    // A UDP socket on port 5000 with two datagrams queued (30 and 40
    // bytes) when the process forks (their tag taken, kUdpTags).
    stk_sock *
    udp_queued_at_fork()
    {
        stk_set_flow_ops(&kUdpTags);
        stk_sock *s = udp_sock();
        EXPECT_EQ(bind_port(s, 5000), 0);
        inject_ip(udp(kPeerIp, kStackIp, 6000, 5000, pattern(30, 1)));
        inject_ip(udp(kPeerIp, kStackIp, 6000, 5000, pattern(40, 2)));
        stk_fork_tag_udp();
        return s;
    }

    stk_sock *
    listener(uint16_t port, bool reuseport = false)
    {
        stk_sock *s = tcp_sock();
        int one = 1;
        if (reuseport) {
            EXPECT_EQ(stk_sock_setsockopt(s, SOL_SOCKET, SO_REUSEPORT, &one,
                                          sizeof(one)),
                      0);
        }
        EXPECT_EQ(bind_port(s, port), 0);
        EXPECT_EQ(stk_sock_listen(s, 16), 0);
        return s;
    }
};

TEST_F(Fork, FrozenConnectionIsSilentUntilThawed)
{
    Conn c = active_open();
    // Unacknowledged data: a live pcb would retransmit it.
    ASSERT_EQ(send_bytes(c.s, pattern(100)), 100);
    std::vector<Pkt> sent;
    Bytes first = take_data(c, &sent);
    ASSERT_EQ(first.size(), 100u);
    ASSERT_EQ(sent.size(), 1u);

    stk_fork_freeze(true);
    stk_flow f;
    ASSERT_TRUE(stk_sock_frozen(c.s, &f));
    EXPECT_EQ(ntohl(f.lip), kStackIp);
    EXPECT_EQ(ntohl(f.rip), kPeerIp);
    EXPECT_EQ(f.lport, c.sport);
    EXPECT_EQ(f.rport, c.pport);
    advance(5000);
    EXPECT_TRUE(drain().empty()) << "a frozen copy sent frames";
    // Nor does it see the peer's segments (the demux no longer has it):
    // lwIP answers with a RST as for an unknown connection.
    TcpSeg probe;
    probe.sport = c.pport;
    probe.dport = c.sport;
    probe.seq = c.snd;
    probe.ack = c.rcv;
    probe.flags = ACK | PSH;
    probe.payload = pattern(10);
    inject_tcp(probe);
    std::vector<Pkt> v = drain();
    ASSERT_EQ(v.size(), 1u);
    EXPECT_TRUE(v[0].flags & RST);
    Bytes got;
    EXPECT_EQ(recv_bytes(c.s, &got, 100, MSG_DONTWAIT), -EAGAIN);

    stk_sock_thaw(c.s);
    EXPECT_FALSE(stk_sock_frozen(c.s, nullptr));
    // Back in the lists: the retransmission timer fires again (the RTO
    // is Linux's 200 ms floor on this RTT; the next, doubled, after 400)...
    advance(300);
    std::vector<Pkt> again = drain();
    ASSERT_EQ(again.size(), 1u);
    EXPECT_EQ(again[0].seq, sent[0].seq);
    EXPECT_EQ(again[0].payload, first);
    peer_ack(c);
    // ...and the peer's data is received.
    peer_send(c, pattern(20, 7));
    advance(10);
    EXPECT_EQ(recv_bytes(c.s, &got, 100), 20);
    EXPECT_EQ(got, pattern(20, 7));
}

TEST_F(Fork, DroppedCopyGoesSilently)
{
    Conn c = active_open();
    stk_fork_freeze(false);
    ASSERT_TRUE(stk_sock_frozen(c.s, nullptr));
    stk_sock_drop_frozen(c.s);
    EXPECT_TRUE(drain().empty()) << "dropping a copy must send nothing";
    EXPECT_FALSE(stk_sock_frozen(c.s, nullptr));
    // The socket reads as ended here; the connection is another
    // process's.
    Bytes got;
    EXPECT_EQ(recv_bytes(c.s, &got, 10, MSG_DONTWAIT), 0);
    advance(5000);
    EXPECT_TRUE(drain().empty());
}

TEST_F(Fork, ChildDropsConnectionsNoSocketHolds)
{
    Conn c = active_open();
    // Close from our side and let the peer finish: we end in TIME-WAIT
    // with no socket.
    stk_sock_close(c.s);
    socks_.clear();
    Pkt fin = one();
    ASSERT_TRUE(fin.flags & FIN);
    c.rcv = fin.seq + 1;
    peer_send(c, {}, FIN);
    advance(10);
    drain();
    int seen = 0;
    auto count = [](void *ctx, const stk_flow *, bool has_sock) {
        EXPECT_FALSE(has_sock);
        ++*static_cast<int *>(ctx);
    };
    stk_each_flow(count, &seen);
    ASSERT_EQ(seen, 1) << "the TIME-WAIT connection";
    stk_fork_freeze(false); // the parent keeps it
    seen = 0;
    stk_each_flow(count, &seen);
    EXPECT_EQ(seen, 1);
    stk_fork_freeze(true); // the child does not
    seen = 0;
    stk_each_flow(count, &seen);
    EXPECT_EQ(seen, 0);
    EXPECT_TRUE(drain().empty());
}

TEST_F(Fork, DemuxChangesAreReportedButFreezingIsNot)
{
    stk_set_flow_ops(&kRecord);
    stk_sock *l = listener(8080);
    Conn c = passive_open(l, 8080, 40000);
    ASSERT_FALSE(notes.empty());
    EXPECT_TRUE(notes.back().add);
    EXPECT_EQ(notes.back().f.lport, 8080);
    EXPECT_EQ(notes.back().f.rport, 40000);
    stk_sock *a = c.s;
    ASSERT_NE(a, nullptr);

    notes.clear();
    stk_fork_freeze(false);
    EXPECT_TRUE(notes.empty()) << "freezing is not the copy's to report";
    stk_sock_thaw(a);
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_TRUE(notes[0].add);

    notes.clear();
    // The peer resets: the connection leaves the demux, reported.
    TcpSeg rst;
    rst.sport = c.pport;
    rst.dport = c.sport;
    rst.seq = c.snd;
    rst.flags = RST;
    inject_tcp(rst);
    ASSERT_FALSE(notes.empty());
    EXPECT_FALSE(notes.back().add);
    EXPECT_EQ(notes.back().f.rport, 40000);
}

TEST_F(Fork, TaggedSynGoesToThatListener)
{
    stk_sock *l1 = listener(9090, true);
    stk_sock *l2 = listener(9090, true);
    int p1, p2;
    uint16_t port1, port2;
    uint32_t lid1, lid2;
    ASSERT_TRUE(stk_sock_service(l1, &p1, &port1, &lid1));
    ASSERT_TRUE(stk_sock_service(l2, &p2, &port2, &lid2));
    EXPECT_EQ(p1, IPPROTO_TCP);
    EXPECT_EQ(port1, 9090);
    EXPECT_NE(lid1, lid2);
    // Every SYN tagged with l2's id lands on l2, whatever the hash.
    for (uint16_t pp = 41000; pp < 41008; pp++) {
        TcpSeg syn;
        syn.sport = pp;
        syn.dport = 9090;
        syn.seq = 100;
        syn.flags = SYN;
        syn.mss = 1460;
        Bytes fr =
            eth(kStackMac, kPeerMac, 0x0800, tcp(kPeerIp, kStackIp, syn));
        stk_input_lid(fr.data(), (uint16_t)fr.size(), lid2);
        std::vector<Pkt> v = drain();
        ASSERT_EQ(v.size(), 1u);
        ASSERT_EQ(v[0].flags, SYN | ACK);
        TcpSeg ack;
        ack.sport = pp;
        ack.dport = 9090;
        ack.seq = 101;
        ack.ack = v[0].seq + 1;
        ack.flags = ACK;
        inject_tcp(ack);
    }
    stk_sock *c = nullptr;
    EXPECT_EQ(stk_sock_accept(l1, &c, nullptr, nullptr), -EAGAIN);
    int n = 0;
    while (stk_sock_accept(l2, &c, nullptr, nullptr) == 0) {
        socks_.push_back(c);
        n++;
    }
    EXPECT_EQ(n, 8);
}

TEST_F(Fork, UdpServiceIsItsBoundPort)
{
    stk_sock *u = udp_sock();
    int proto;
    uint16_t port;
    uint32_t lid;
    EXPECT_FALSE(stk_sock_service(u, &proto, &port, &lid));
    ASSERT_EQ(bind_port(u, 5353), 0);
    ASSERT_TRUE(stk_sock_service(u, &proto, &port, &lid));
    EXPECT_EQ(proto, IPPROTO_UDP);
    EXPECT_EQ(port, 5353);
    stk_sock *t = tcp_sock();
    EXPECT_FALSE(stk_sock_service(t, &proto, &port, &lid));
}

} // namespace

namespace
{

// A connection queued on a listener and never accepted moves to another
// listener (in the test, of the same stack: the pcb is rebuilt from its
// image just as another process's stack would): the request it already
// received comes along, sequence numbers carry on, nothing is sent by the
// move itself.
TEST_F(Fork, QueuedConnectionMovesWithItsData)
{
    stk_sock *l1 = listener(7070, true);
    Conn c = passive_open(l1, 7070, 42000);
    // passive_open accepted it: queue a second one instead, by hand.
    ASSERT_NE(c.s, nullptr);
    Conn q;
    q.sport = 7070;
    q.pport = 42001;
    q.snd = 9000;
    TcpSeg syn;
    syn.sport = 42001;
    syn.dport = 7070;
    syn.seq = q.snd++;
    syn.flags = SYN;
    syn.mss = 1460;
    inject_tcp(syn);
    std::vector<Pkt> v = drain();
    ASSERT_EQ(v.size(), 1u);
    q.rcv = v[0].seq + 1;
    TcpSeg ack;
    ack.sport = 42001;
    ack.dport = 7070;
    ack.seq = q.snd;
    ack.ack = q.rcv;
    ack.flags = ACK;
    inject_tcp(ack);
    peer_send(q, pattern(300, 3));
    advance(10);
    drain();

    static stk_conn_image img;
    static uint8_t data[16384];
    ASSERT_EQ(stk_listener_export(l1, &img, data, sizeof(data)), 1);
    EXPECT_FALSE(img.half);
    EXPECT_EQ(img.len, 300u);
    EXPECT_EQ(img.f.rport, 42001);
    EXPECT_TRUE(drain().empty()) << "the move must not send anything";
    stk_sock *none = nullptr;
    EXPECT_EQ(stk_sock_accept(l1, &none, nullptr, nullptr), -EAGAIN);

    stk_sock *l2 = listener(7071, true);
    ASSERT_EQ(stk_listener_import(l2, &img, data), 0);
    stk_sock *m = nullptr;
    ASSERT_EQ(stk_sock_accept(l2, &m, nullptr, nullptr), 0);
    socks_.push_back(m);
    Bytes got;
    EXPECT_EQ(recv_bytes(m, &got, 1000), 300);
    EXPECT_EQ(got, pattern(300, 3));
    // The connection carries on: more data in, an answer out.
    peer_send(q, pattern(50, 4));
    advance(10);
    EXPECT_EQ(recv_bytes(m, &got, 1000), 50);
    ASSERT_EQ(send_bytes(m, pattern(20, 5)), 20);
    advance(10);
    std::vector<Pkt> out;
    Bytes answer = take_data(q, &out);
    EXPECT_EQ(answer, pattern(20, 5));
    ASSERT_FALSE(out.empty());
    EXPECT_EQ(out[0].sport, 7070);
    EXPECT_EQ(out[0].ack, q.snd);
}

} // namespace

// Datagrams queued on a UDP socket at a fork are in both processes' copies
// (the stack is copied): the first process to read one takes them all, the
// other's copies are dropped, as Linux's single queue gives each datagram
// to one reader (socat UDP-RECVFROM,fork: the parent peeks, forks, the
// child reads). A peek takes nothing; datagrams after the fork are not
// tagged.
TEST_F(Fork, UdpDatagramsQueuedAtForkAreReadOnce)
{
    stk_sock *s = udp_queued_at_fork();
    ASSERT_EQ(tag_owner.size(), 1u) << "one tag for the socket's queue";
    stk_fork_tag_udp(); // a second fork keeps the tag
    ASSERT_EQ(tag_owner.size(), 1u);

    // This process peeks: nobody's yet, still readable.
    Bytes in;
    EXPECT_EQ(recv_bytes(s, &in, 100, MSG_PEEK), 30);
    EXPECT_EQ(tag_owner[0], 0);
    // The other process reads first: our copies go.
    tag_owner[0] = 2;
    EXPECT_EQ(events(s) & EPOLLIN, 0u);
    EXPECT_EQ(recv_bytes(s, &in, 100), -EAGAIN);
    // A datagram after the fork is this process's alone.
    inject_ip(udp(kPeerIp, kStackIp, 6000, 5000, pattern(50, 3)));
    EXPECT_EQ(recv_bytes(s, &in, 100), 50);
    EXPECT_EQ(in, pattern(50, 3));
}

// ... and when this process reads first, it keeps every one of them.
TEST_F(Fork, UdpDatagramsQueuedAtForkGoToTheFirstReader)
{
    stk_sock *s = udp_queued_at_fork();
    Bytes in;
    EXPECT_EQ(recv_bytes(s, &in, 100), 30);
    EXPECT_EQ(tag_owner[0], me);
    EXPECT_EQ(recv_bytes(s, &in, 100), 40);
    EXPECT_EQ(in, pattern(40, 2));
}
