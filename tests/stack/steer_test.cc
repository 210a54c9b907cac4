// stack/steer.c: what the stack reports to the shared-address steering
// (the link ops steer_port, steer_flow, arp_request) when the stack shares
// the interface's IPv4 address with the kernel: served ports from listen
// and UDP bind to close, active opens from the SYN until the pcb is gone
// (TIME-WAIT included), connections adopted when their listener's port
// stops being served, and the ARP requests the stack sends.
#include <arpa/inet.h>

#include <algorithm>
#include <string>
#include <vector>

#include "harness.h"

using namespace stktest;

namespace
{

struct Ev {
    std::string kind; // "port", "flow", "arp"
    bool on = false;
    int proto = 0;
    uint16_t port = 0;  // port: the port; flow: the local port
    uint16_t rport = 0; // flow
    uint32_t ip = 0;    // flow: the peer; arp: the target (host)
};
std::vector<Ev> evs;
std::vector<In6> nd_targets;
bool flow_v6;

void
ev_port(void *, int proto, uint16_t port, bool on)
{
    evs.push_back({"port", on, proto, port, 0, 0});
}

void
ev_flow(void *, const stk_flow *f, bool on)
{
    evs.push_back({"flow", on, IPPROTO_TCP, f->lport, f->rport, ntohl(f->rip)});
    flow_v6 = f->v6;
}

void
ev_nd(void *, const uint8_t target[16])
{
    In6 t;
    memcpy(t.data(), target, 16);
    nd_targets.push_back(t);
    evs.push_back({"nd", true, 0, 0, 0, 0});
}

void
ev_arp(void *, uint32_t ip)
{
    evs.push_back({"arp", true, 0, 0, 0, ntohl(ip)});
}

class Steer : public Lab
{
  protected:
    void
    link_setup(stk_netif_cfg &cfg) override
    {
        cfg.link.steer_port = ev_port;
        cfg.link.steer_flow = ev_flow;
        cfg.link.arp_request = ev_arp;
        cfg.link.nd_request = ev_nd;
    }
    void
    SetUp() override
    {
        Lab::SetUp();
        evs.clear();
    }
    static int
    count(const std::string &kind, bool on)
    {
        return (int)std::count_if(evs.begin(), evs.end(), [&](const Ev &e) {
            return e.kind == kind && e.on == on;
        });
    }
};

TEST_F(Steer, listener_port_reported_from_listen_to_close)
{
    stk_sock *l = tcp_sock();
    ASSERT_EQ(bind_port(l, 8080), 0);
    EXPECT_EQ(count("port", true), 0) << "bind alone serves nothing";
    ASSERT_EQ(stk_sock_listen(l, 16), 0);
    ASSERT_EQ(evs.size(), 1u);
    EXPECT_EQ(evs[0].kind, "port");
    EXPECT_TRUE(evs[0].on);
    EXPECT_EQ(evs[0].proto, IPPROTO_TCP);
    EXPECT_EQ(evs[0].port, 8080);
    // A passive connection on the served port needs no entry of its own.
    Conn c = passive_open(l, 8080, 40000);
    ASSERT_NE(c.s, nullptr);
    EXPECT_EQ(count("flow", true), 0);
    socks_.erase(std::find(socks_.begin(), socks_.end(), l));
    stk_sock_close(l);
    ASSERT_EQ(count("port", false), 1);
    EXPECT_EQ(evs.back().port, 8080);
}

TEST_F(Steer, adopted_connections_keep_an_entry_until_their_pcb_goes)
{
    stk_sock *l = tcp_sock();
    ASSERT_EQ(bind_port(l, 8080), 0);
    ASSERT_EQ(stk_sock_listen(l, 16), 0);
    Conn c = passive_open(l, 8080, 40001);
    ASSERT_NE(c.s, nullptr);
    evs.clear();
    stk_steer_adopt_port(8080);
    ASSERT_EQ(count("flow", true), 1);
    EXPECT_EQ(evs[0].port, 8080);
    EXPECT_EQ(evs[0].rport, 40001);
    EXPECT_EQ(evs[0].ip, kPeerIp);
    stk_steer_adopt_port(8080); // once per connection
    EXPECT_EQ(count("flow", true), 1);
    // The peer closes, then the stack: no TIME-WAIT here (passive close);
    // the entry goes with the pcb.
    peer_send(c, {}, FIN);
    drain();
    socks_.erase(std::find(socks_.begin(), socks_.end(), c.s));
    stk_sock_close(c.s);
    EXPECT_EQ(count("flow", false), 0) << "LAST-ACK still needs the entry";
    std::vector<Pkt> v = drain();
    ASSERT_FALSE(v.empty());
    c.rcv = v.back().seq + 1;
    peer_ack(c);
    drain();
    EXPECT_EQ(count("flow", false), 1);
}

TEST_F(Steer, active_open_has_an_entry_through_time_wait)
{
    Conn c = active_open(80);
    ASSERT_NE(c.s, nullptr);
    ASSERT_EQ(count("flow", true), 1);
    const Ev on = *std::find_if(evs.begin(), evs.end(),
                                [](const Ev &e) { return e.kind == "flow"; });
    EXPECT_EQ(on.port, c.sport);
    EXPECT_EQ(on.rport, 80);
    EXPECT_EQ(on.ip, kPeerIp);
    // The stack closes first: FIN-WAIT, then TIME-WAIT, which still takes
    // the peer's segments; the entry goes when TIME-WAIT ends.
    socks_.erase(std::find(socks_.begin(), socks_.end(), c.s));
    stk_sock_close(c.s);
    std::vector<Pkt> v = drain();
    ASSERT_FALSE(v.empty());
    c.rcv = v.back().seq + 1;
    peer_ack(c);
    peer_send(c, {}, FIN);
    drain();
    EXPECT_GE(stk_test_tw_count(), 1);
    EXPECT_EQ(count("flow", false), 0);
    advance(61000);
    EXPECT_EQ(count("flow", false), 1);
    EXPECT_EQ(count("port", true), 0) << "an active open serves no port";
}

TEST_F(Steer, udp_port_reported_from_bind_or_first_send_to_close)
{
    stk_sock *u = udp_sock();
    ASSERT_EQ(bind_port(u, 5353), 0);
    ASSERT_EQ(count("port", true), 1);
    EXPECT_EQ(evs[0].proto, IPPROTO_UDP);
    EXPECT_EQ(evs[0].port, 5353);
    stk_sock *v = udp_sock();
    ASSERT_EQ(send_to(v, pattern(10), kPeerIp, 9), 10);
    ASSERT_EQ(count("port", true), 2);
    uint16_t auto_port = 0;
    for (const Ev &e : evs)
        if (e.kind == "port")
            auto_port = e.port;
    EXPECT_GE(auto_port, 32768);
    ASSERT_EQ(send_to(v, pattern(10), kPeerIp, 9), 10);
    EXPECT_EQ(count("port", true), 2) << "once per socket";
    socks_.clear();
    stk_sock_close(u);
    stk_sock_close(v);
    EXPECT_EQ(count("port", false), 2);
}

TEST_F(Steer, arp_requests_reported)
{
    stk_sock *s = tcp_sock();
    EXPECT_EQ(connect_to(s, kPeerIp + 5, 80), -EINPROGRESS); // not cached
    bool req = false;
    for (const Bytes &f : txq_) {
        Pkt p;
        if (parse(f, &p) && p.ethertype == 0x0806 && p.arp_op == 1)
            req = p.arp_tpa == kPeerIp + 5;
    }
    EXPECT_TRUE(req);
    ASSERT_EQ(count("arp", true), 1);
    for (const Ev &e : evs) {
        if (e.kind == "arp") {
            EXPECT_EQ(e.ip, kPeerIp + 5);
        }
    }
    // ARP replies and the stack's other frames are not requests.
    advance(10);
    drain();
    EXPECT_EQ(count("arp", true), 1);
}

TEST_F(Steer, ipv6_active_open_and_neighbour_solicitation_reported)
{
    v6_ = true;
    Conn c = active_open(80);
    ASSERT_NE(c.s, nullptr);
    ASSERT_EQ(count("flow", true), 1);
    EXPECT_TRUE(flow_v6);
    // The stack solicited the peer's address before its SYN went out.
    ASSERT_GE(count("nd", true), 1);
    EXPECT_NE(std::find(nd_targets.begin(), nd_targets.end(), kPeerIp6),
              nd_targets.end());
    EXPECT_EQ(count("arp", true), 0);
}

// Without the ops (a separate address, memif): nothing is called, and
// nothing breaks.
TEST_F(Lab, steer_ops_absent_change_nothing)
{
    stk_sock *l = tcp_sock();
    ASSERT_EQ(bind_port(l, 8080), 0);
    ASSERT_EQ(stk_sock_listen(l, 16), 0);
    Conn c = passive_open(l, 8080, 40002);
    EXPECT_NE(c.s, nullptr);
    Conn a = active_open(80);
    EXPECT_NE(a.s, nullptr);
}

} // namespace
