// Stack test harness: the stack on a fake netif whose frames are captured
// in a queue, a virtual clock, and a small scripted peer that builds and
// parses Ethernet/ARP/IPv4/TCP/UDP/ICMP frames. lwIP has global state, so
// each test runs in its own process (gtest_discover_tests).
#ifndef ACCEL_TESTS_STACK_HARNESS_H
#define ACCEL_TESTS_STACK_HARNESS_H

#include <array>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include <netinet/in.h>

#include <gtest/gtest.h>

extern "C" {
#include "stk.h"
#include "stk_test.h"
}

namespace stktest
{

using Bytes = std::vector<uint8_t>;

constexpr uint32_t kStackIp = 0x0a000002; // 10.0.0.2 (host order)
constexpr uint32_t kPeerIp = 0x0a000001;  // 10.0.0.1
constexpr uint8_t kStackMac[6] = {0x02, 0, 0, 0, 0, 0x02};
constexpr uint8_t kPeerMac[6] = {0x02, 0, 0, 0, 0, 0x01};

// IPv6: the stack's global address fd00:200::2/64 and link-local
// fe80::ff:fe00:2 (EUI-64 of kStackMac); the peer's ::1 and fe80::ff:fe00:1.
using In6 = std::array<uint8_t, 16>;
constexpr In6 kStackIp6 = {0xfd, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
constexpr In6 kPeerIp6 = {0xfd, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
constexpr In6 kStackLl6 = {0xfe, 0x80, 0, 0,    0,    0, 0, 0,
                           0,    0,    0, 0xff, 0xfe, 0, 0, 2};
constexpr In6 kPeerLl6 = {0xfe, 0x80, 0, 0,    0,    0, 0, 0,
                          0,    0,    0, 0xff, 0xfe, 0, 0, 1};
// ::ffff:a.b.c.d for ip (host order).
In6 mapped6(uint32_t ip);

enum TcpFlag : uint8_t {
    FIN = 0x01,
    SYN = 0x02,
    RST = 0x04,
    PSH = 0x08,
    ACK = 0x10,
    URG = 0x20,
};

// One parsed frame sent by the stack.
struct Pkt {
    uint16_t ethertype = 0;
    // ARP
    uint16_t arp_op = 0;
    uint32_t arp_tpa = 0, arp_spa = 0;
    // IPv4 (host order)
    uint32_t src = 0, dst = 0;
    uint8_t proto = 0;
    bool ip_csum_ok = false, l4_csum_ok = false;
    uint16_t frag = 0; // IP flags+offset field
    // TCP / UDP
    uint16_t sport = 0, dport = 0;
    uint32_t seq = 0, ack = 0;
    uint8_t flags = 0;
    uint16_t win = 0;
    int mss = -1, wscale = -1;
    bool sack_perm = false, ts = false;
    uint32_t tsval = 0, tsecr = 0;
    std::vector<std::pair<uint32_t, uint32_t>> sacks; // SACK blocks
    // ICMP / ICMPv6 (payload: what follows the 8-byte header)
    uint8_t icmp_type = 0, icmp_code = 0;
    Bytes payload;
    // IPv6 (ethertype 0x86dd; proto is the upper layer's next header)
    In6 src6{}, dst6{};
    uint8_t hlim = 0, tclass = 0;
};

// Frame builders (addresses and ports in host order).
Bytes eth(const uint8_t dst[6], const uint8_t src[6], uint16_t type,
          const Bytes &payload);
Bytes ipv4(uint32_t src, uint32_t dst, uint8_t proto, const Bytes &l4,
           uint16_t frag = 0, uint16_t id = 1);
struct TcpSeg {
    uint16_t sport = 0, dport = 0;
    uint32_t seq = 0, ack = 0;
    uint8_t flags = 0;
    uint16_t win = 65535;
    int mss = -1, wscale = -1;
    bool sack_perm = false;
    bool ts = false;
    uint32_t tsval = 0, tsecr = 0;
    std::vector<std::pair<uint32_t, uint32_t>> sacks; // SACK blocks
    Bytes payload;
};
Bytes tcp(uint32_t src, uint32_t dst, const TcpSeg &t);
Bytes udp(uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport,
          const Bytes &payload);
Bytes ipv6(const In6 &src, const In6 &dst, uint8_t nh, const Bytes &l4,
           uint8_t hlim = 64);
Bytes tcp6(const In6 &src, const In6 &dst, const TcpSeg &t);
Bytes udp6(const In6 &src, const In6 &dst, uint16_t sport, uint16_t dport,
           const Bytes &payload);
// An ICMPv6 message (body: what follows type, code and checksum).
Bytes icmp6(const In6 &src, const In6 &dst, uint8_t type, uint8_t code,
            const Bytes &body, uint8_t hlim = 255);
// The body of the peer's neighbour advertisement for target (its MAC).
Bytes peer_na(const In6 &target);
sockaddr_in6 sin6_of(const In6 &a, uint16_t port, uint32_t scope = 0);
uint16_t csum(const uint8_t *p, size_t n, uint32_t sum = 0);
bool parse(const Bytes &frame, Pkt *out);

// The stack under test plus the peer.
class Lab : public ::testing::Test
{
  protected:
    void SetUp() override;
    void TearDown() override;
    // Called with the netif's configuration before stk_init: a fixture
    // adds optional link ops here.
    virtual void
    link_setup(stk_netif_cfg &cfg)
    {
        (void)cfg;
    }

    // Virtual clock.
    static uint64_t now_ns_;
    static uint64_t
    clock()
    {
        return now_ns_;
    }
    // Advance by ms, running stack timers every 10 ms, answering ARP.
    void advance(uint32_t ms);
    // Advance by us and run the timers once (finer steps than advance).
    void advance_us(uint32_t us);

    // Frames from the stack: ARP requests for the peer are answered and
    // dropped; everything else is parsed and returned, in order.
    std::vector<Pkt> drain();
    // Exactly one pending TCP/UDP/ICMP frame; fails the test otherwise.
    Pkt one();

    // Inject a frame from the peer (Ethernet wrapped automatically).
    void inject_ip(const Bytes &ip);
    void inject_ip6(const Bytes &ip, const uint8_t *dst_mac = kStackMac);
    void
    inject_raw(const Bytes &frame)
    {
        stk_input(frame.data(), frame.size());
    }
    void
    inject_tcp(const TcpSeg &t)
    {
        if (v6_)
            inject_ip6(tcp6(kPeerIp6, kStackIp6, t));
        else
            inject_ip(tcp(kPeerIp, kStackIp, t));
    }
    // The peer of the TCP helpers (active_open, passive_open, peer_send,
    // ...) talks IPv6 from kPeerIp6 to kStackIp6, and tcp_sock/udp_sock
    // make AF_INET6 sockets (dual: not v6only).
    bool v6_ = false;
    // drain() answers neighbour solicitations for the peer's addresses
    // (counted in ns_answered_) unless this is false.
    bool nd_auto_ = true;
    int ns_answered_ = 0;
    // MLD reports and dones the stack sent (drain() keeps them here).
    std::vector<Pkt> mld_;

    // Sockets.
    stk_sock *tcp_sock();
    stk_sock *udp_sock();
    int bind_port(stk_sock *s, uint16_t port, uint32_t ip = kStackIp);
    int connect_to(stk_sock *s, uint32_t ip, uint16_t port);
    ssize_t send_bytes(stk_sock *s, const Bytes &b, int flags = 0);
    // sendmsg with a destination (family AF_INET unless given).
    ssize_t send_to(stk_sock *s, const Bytes &b, uint32_t ip, uint16_t port,
                    int family = AF_INET);
    ssize_t recv_bytes(stk_sock *s, Bytes *out, size_t max, int flags = 0);
    uint32_t
    events(stk_sock *s)
    {
        return stk_sock_events(s, nullptr);
    }

    // A connected pair made by the stack connecting to the peer
    // (peer port 80) or the peer connecting to a stack listener.
    struct Conn {
        stk_sock *s = nullptr;
        uint16_t sport = 0, pport = 0; // stack port, peer port
        uint32_t snd = 0;              // peer's next sequence number
        uint32_t rcv = 0;              // next sequence expected from stack
        bool ts = false;               // timestamps agreed: peer_send echoes
        uint32_t ts_recent = 0;        // the stack's latest TSval
        uint32_t ts_clock = 0;         // the peer's TSval
    };
    // Options the peer offers in its SYN-ACK (SACK-permitted, timestamps).
    struct PeerOpts {
        bool sack = false;
        bool ts = false;
        int wscale = 0;        // the peer's window scale (its windows << it)
        uint32_t rtt_us = 100; // the SYN-ACK comes back after this
    };
    Conn active_open(uint16_t peer_port = 80);
    Conn active_open(uint16_t peer_port, PeerOpts o);
    Conn passive_open(stk_sock *listener, uint16_t stack_port,
                      uint16_t peer_port);
    // Peer sends data / FIN / ACK on c.
    void peer_send(Conn &c, const Bytes &data, uint8_t extra = 0,
                   uint16_t win = 65535);
    void peer_ack(Conn &c, uint16_t win = 65535);
    // A segment from the peer on c (timestamps when agreed), not sent yet.
    static TcpSeg peer_seg(Conn &c, uint32_t ack, uint8_t flags, uint16_t win);
    // A pure ACK of `ack` with SACK blocks (most recent first).
    void peer_sack(Conn &c, uint32_t ack,
                   const std::vector<std::pair<uint32_t, uint32_t>> &blocks,
                   uint16_t win = 65535);
    // Collect the stack's data on c (advancing rcv), ACKing nothing.
    Bytes take_data(Conn &c, std::vector<Pkt> *pkts = nullptr);
    // Collect and ACK the stack's data until n bytes came or it stalls.
    Bytes pull(Conn &c, size_t n, uint16_t win = 65535,
               std::vector<Pkt> *pkts = nullptr);

    std::vector<stk_sock *> socks_;
    long base_blocks_ = 0;
    static std::deque<Bytes> txq_;
    static std::vector<uint8_t> txbuf_;
    static int notify_calls_;
    static uint8_t *tx_alloc(void *ctx, uint16_t len, void **handle);
    static void tx_send(void *ctx, void *handle, uint16_t len);
    static void notify(void *ctx, uint32_t ev);
    void close_all();
};

Bytes pattern(size_t n, uint8_t seed = 0);

} // namespace stktest

#endif
