// Stack test harness implementation: see harness.h.
#include "harness.h"

#include <arpa/inet.h>
#include <sys/socket.h>

#include <cstring>

namespace stktest
{

uint64_t Lab::now_ns_ = 1000000000ull;
std::deque<Bytes> Lab::txq_;
std::vector<uint8_t> Lab::txbuf_;
int Lab::notify_calls_;

static void
put16(Bytes &b, size_t off, uint16_t v)
{
    b[off] = v >> 8;
    b[off + 1] = v & 0xff;
}
static void
put32(Bytes &b, size_t off, uint32_t v)
{
    put16(b, off, v >> 16);
    put16(b, off + 2, v & 0xffff);
}
static uint16_t
get16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}
static uint32_t
get32(const uint8_t *p)
{
    return (uint32_t)get16(p) << 16 | get16(p + 2);
}

uint16_t
csum(const uint8_t *p, size_t n, uint32_t sum)
{
    for (size_t i = 0; i + 1 < n; i += 2)
        sum += get16(p + i);
    if (n & 1)
        sum += (uint32_t)p[n - 1] << 8;
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
}

static uint32_t
pseudo(uint32_t src, uint32_t dst, uint8_t proto, size_t len)
{
    return (src >> 16) + (src & 0xffff) + (dst >> 16) + (dst & 0xffff) + proto +
           (uint32_t)len;
}

Bytes
eth(const uint8_t dst[6], const uint8_t src[6], uint16_t type,
    const Bytes &payload)
{
    Bytes b(14);
    memcpy(&b[0], dst, 6);
    memcpy(&b[6], src, 6);
    put16(b, 12, type);
    b.insert(b.end(), payload.begin(), payload.end());
    return b;
}

Bytes
ipv4(uint32_t src, uint32_t dst, uint8_t proto, const Bytes &l4, uint16_t frag,
     uint16_t id)
{
    Bytes b(20);
    b[0] = 0x45;
    put16(b, 2, (uint16_t)(20 + l4.size()));
    put16(b, 4, id);
    put16(b, 6, frag);
    b[8] = 64;
    b[9] = proto;
    put32(b, 12, src);
    put32(b, 16, dst);
    put16(b, 10, csum(b.data(), 20));
    b.insert(b.end(), l4.begin(), l4.end());
    return b;
}

// A UDP header and payload, its checksum still 0.
static Bytes
udp_l4(uint16_t sport, uint16_t dport, const Bytes &payload)
{
    Bytes b(8);
    put16(b, 0, sport);
    put16(b, 2, dport);
    put16(b, 4, (uint16_t)(8 + payload.size()));
    b.insert(b.end(), payload.begin(), payload.end());
    return b;
}

Bytes
udp(uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport,
    const Bytes &payload)
{
    Bytes b = udp_l4(sport, dport, payload);
    uint16_t c = csum(b.data(), b.size(), pseudo(src, dst, 17, b.size()));
    put16(b, 6, c == 0 ? 0xffff : c);
    return ipv4(src, dst, 17, b);
}

// A TCP header with t's options and payload, its checksum over the pseudo
// header sum psum (without the length).
static Bytes
tcp_l4(const TcpSeg &t, uint32_t psum)
{
    Bytes opt;
    if (t.mss >= 0)
        opt.insert(opt.end(), {2, 4, (uint8_t)(t.mss >> 8), (uint8_t)t.mss});
    if (t.wscale >= 0)
        opt.insert(opt.end(), {1, 3, 3, (uint8_t)t.wscale});
    if (t.sack_perm)
        opt.insert(opt.end(), {1, 1, 4, 2});
    if (t.ts) {
        size_t o = opt.size();
        opt.insert(opt.end(), {1, 1, 8, 10, 0, 0, 0, 0, 0, 0, 0, 0});
        put32(opt, o + 4, t.tsval);
        put32(opt, o + 8, t.tsecr);
    }
    if (!t.sacks.empty()) {
        size_t o = opt.size();
        opt.insert(opt.end(), {1, 1, 5, (uint8_t)(2 + 8 * t.sacks.size())});
        opt.resize(opt.size() + 8 * t.sacks.size());
        for (size_t i = 0; i < t.sacks.size(); i++) {
            put32(opt, o + 4 + 8 * i, t.sacks[i].first);
            put32(opt, o + 8 + 8 * i, t.sacks[i].second);
        }
    }
    while (opt.size() % 4)
        opt.push_back(0);
    Bytes b(20);
    put16(b, 0, t.sport);
    put16(b, 2, t.dport);
    put32(b, 4, t.seq);
    put32(b, 8, t.ack);
    b[12] = (uint8_t)(((20 + opt.size()) / 4) << 4);
    b[13] = t.flags;
    put16(b, 14, t.win);
    b.insert(b.end(), opt.begin(), opt.end());
    b.insert(b.end(), t.payload.begin(), t.payload.end());
    put16(b, 16, csum(b.data(), b.size(), psum + (uint32_t)b.size()));
    return b;
}

Bytes
tcp(uint32_t src, uint32_t dst, const TcpSeg &t)
{
    return ipv4(src, dst, 6, tcp_l4(t, pseudo(src, dst, 6, 0)));
}

In6
mapped6(uint32_t ip)
{
    In6 a{};
    a[10] = a[11] = 0xff;
    a[12] = (uint8_t)(ip >> 24);
    a[13] = (uint8_t)(ip >> 16);
    a[14] = (uint8_t)(ip >> 8);
    a[15] = (uint8_t)ip;
    return a;
}

sockaddr_in6
sin6_of(const In6 &a, uint16_t port, uint32_t scope)
{
    sockaddr_in6 s{};
    s.sin6_family = AF_INET6;
    memcpy(&s.sin6_addr, a.data(), 16);
    s.sin6_port = htons(port);
    s.sin6_scope_id = scope;
    return s;
}

static uint32_t
pseudo6(const In6 &src, const In6 &dst, uint8_t nh, size_t len)
{
    uint32_t sum = 0;
    for (size_t i = 0; i < 16; i += 2)
        sum += get16(&src[i]) + get16(&dst[i]);
    return sum + (uint32_t)(len >> 16) + (uint32_t)(len & 0xffff) + nh;
}

Bytes
ipv6(const In6 &src, const In6 &dst, uint8_t nh, const Bytes &l4, uint8_t hlim)
{
    Bytes b(40);
    b[0] = 0x60;
    put16(b, 4, (uint16_t)l4.size());
    b[6] = nh;
    b[7] = hlim;
    memcpy(&b[8], src.data(), 16);
    memcpy(&b[24], dst.data(), 16);
    b.insert(b.end(), l4.begin(), l4.end());
    return b;
}

Bytes
tcp6(const In6 &src, const In6 &dst, const TcpSeg &t)
{
    return ipv6(src, dst, 6, tcp_l4(t, pseudo6(src, dst, 6, 0)));
}

Bytes
udp6(const In6 &src, const In6 &dst, uint16_t sport, uint16_t dport,
     const Bytes &payload)
{
    Bytes b = udp_l4(sport, dport, payload);
    uint16_t c = csum(b.data(), b.size(), pseudo6(src, dst, 17, b.size()));
    put16(b, 6, c == 0 ? 0xffff : c);
    return ipv6(src, dst, 17, b);
}

Bytes
icmp6(const In6 &src, const In6 &dst, uint8_t type, uint8_t code,
      const Bytes &body, uint8_t hlim)
{
    Bytes b(4);
    b[0] = type;
    b[1] = code;
    b.insert(b.end(), body.begin(), body.end());
    put16(b, 2, csum(b.data(), b.size(), pseudo6(src, dst, 58, b.size())));
    return ipv6(src, dst, 58, b, hlim);
}

Bytes
peer_na(const In6 &target)
{
    // Solicited and override; the target link-layer address option.
    Bytes na(20 + 8);
    na[0] = 0x60;
    memcpy(&na[4], target.data(), 16);
    na[20] = 2;
    na[21] = 1;
    memcpy(&na[22], kPeerMac, 6);
    return na;
}

static bool
parse6(const uint8_t *p, size_t n, Pkt *o)
{
    if (n < 40 || (p[0] >> 4) != 6)
        return false;
    size_t plen = get16(p + 4);
    if (40 + plen > n)
        return false;
    o->tclass = (uint8_t)((p[0] << 4) | (p[1] >> 4));
    o->hlim = p[7];
    memcpy(o->src6.data(), p + 8, 16);
    memcpy(o->dst6.data(), p + 24, 16);
    uint8_t nh = p[6];
    const uint8_t *l4 = p + 40;
    size_t l4n = plen;
    // Hop-by-hop options (MLD's router alert) and fragment headers.
    while ((nh == 0 || nh == 44) && l4n >= 8) {
        size_t hl = nh == 44 ? 8 : (size_t)(l4[1] + 1) * 8;
        if (nh == 44) {
            o->frag = (uint16_t)(get16(l4 + 2) | 0x8000); // marks a fragment
            if ((get16(l4 + 2) & 0xfff8) != 0) {
                o->proto = l4[0];
                return true; // not the first: no upper header
            }
        }
        if (hl > l4n)
            return false;
        nh = l4[0];
        l4 += hl;
        l4n -= hl;
    }
    o->proto = nh;
    if (o->frag != 0)
        return true;
    if (nh == 6 && l4n >= 20) {
        o->l4_csum_ok = csum(l4, l4n, pseudo6(o->src6, o->dst6, 6, l4n)) == 0;
    } else if (nh == 17 && l4n >= 8) {
        o->l4_csum_ok = csum(l4, l4n, pseudo6(o->src6, o->dst6, 17, l4n)) == 0;
        o->sport = get16(l4);
        o->dport = get16(l4 + 2);
        o->payload.assign(l4 + 8, l4 + l4n);
        return true;
    } else if (nh == 58 && l4n >= 4) {
        o->l4_csum_ok = csum(l4, l4n, pseudo6(o->src6, o->dst6, 58, l4n)) == 0;
        o->icmp_type = l4[0];
        o->icmp_code = l4[1];
        if (l4n >= 8)
            o->payload.assign(l4 + 8, l4 + l4n);
        return true;
    } else {
        return true;
    }
    return false; // TCP: parsed by the caller
}

static void parse_tcp(const uint8_t *l4, size_t l4n, Pkt *o);

bool
parse(const Bytes &f, Pkt *o)
{
    *o = Pkt();
    if (f.size() < 14)
        return false;
    o->ethertype = get16(&f[12]);
    const uint8_t *p = &f[14];
    size_t n = f.size() - 14;
    if (o->ethertype == 0x86dd) {
        o->ip_csum_ok = true; // IPv6 has no header checksum
        if (parse6(p, n, o))
            return true;
        if (o->proto != 6)
            return false;
        size_t l4n = get16(p + 4); // TCP right after the fixed header
        parse_tcp(p + 40, l4n, o);
        return true;
    }
    if (o->ethertype == 0x0806) {
        if (n < 28)
            return false;
        o->arp_op = get16(p + 6);
        o->arp_spa = get32(p + 14);
        o->arp_tpa = get32(p + 24);
        return true;
    }
    if (o->ethertype != 0x0800 || n < 20)
        return false;
    size_t ihl = (p[0] & 0xf) * 4, tot = get16(p + 2);
    if (tot > n || ihl < 20)
        return false;
    o->ip_csum_ok = csum(p, ihl) == 0;
    o->proto = p[9];
    o->frag = get16(p + 6);
    o->src = get32(p + 12);
    o->dst = get32(p + 16);
    if (o->frag & 0x3fff)
        return true; // a fragment: no L4 header to parse
    const uint8_t *l4 = p + ihl;
    size_t l4n = tot - ihl;
    if (o->proto == 6 && l4n >= 20) {
        o->l4_csum_ok = csum(l4, l4n, pseudo(o->src, o->dst, 6, l4n)) == 0;
        parse_tcp(l4, l4n, o);
    } else if (o->proto == 17 && l4n >= 8) {
        o->l4_csum_ok = get16(l4 + 6) == 0 ||
                        csum(l4, l4n, pseudo(o->src, o->dst, 17, l4n)) == 0;
        o->sport = get16(l4);
        o->dport = get16(l4 + 2);
        o->payload.assign(l4 + 8, l4 + l4n);
    } else if (o->proto == 1 && l4n >= 8) {
        o->l4_csum_ok = csum(l4, l4n) == 0;
        o->icmp_type = l4[0];
        o->icmp_code = l4[1];
        o->payload.assign(l4 + 8, l4 + l4n);
    }
    return true;
}

static void
parse_tcp(const uint8_t *l4, size_t l4n, Pkt *o)
{
    o->sport = get16(l4);
    o->dport = get16(l4 + 2);
    o->seq = get32(l4 + 4);
    o->ack = get32(l4 + 8);
    size_t hl = (l4[12] >> 4) * 4;
    o->flags = l4[13];
    o->win = get16(l4 + 14);
    for (size_t i = 20; i < hl;) {
        uint8_t k = l4[i];
        if (k == 0)
            break;
        if (k == 1) {
            i++;
            continue;
        }
        uint8_t len = l4[i + 1];
        if (k == 2)
            o->mss = get16(l4 + i + 2);
        if (k == 3)
            o->wscale = l4[i + 2];
        if (k == 4)
            o->sack_perm = true;
        if (k == 8 && len == 10) {
            o->ts = true;
            o->tsval = get32(l4 + i + 2);
            o->tsecr = get32(l4 + i + 6);
        }
        if (k == 5)
            for (size_t b = 0; b + 8 <= (size_t)len - 2; b += 8)
                o->sacks.emplace_back(get32(l4 + i + 2 + b),
                                      get32(l4 + i + 6 + b));
        if (len < 2)
            break;
        i += len;
    }
    o->payload.assign(l4 + hl, l4 + l4n);
}

Bytes
pattern(size_t n, uint8_t seed)
{
    Bytes b(n);
    for (size_t i = 0; i < n; i++)
        b[i] = (uint8_t)(i * 7 + seed + (i >> 8));
    return b;
}

// ---- Lab ----------------------------------------------------------------

uint8_t *
Lab::tx_alloc(void *, uint16_t len, void **handle)
{
    txbuf_.assign(len, 0);
    *handle = nullptr;
    return txbuf_.data();
}

void
Lab::tx_send(void *, void *, uint16_t len)
{
    txq_.emplace_back(txbuf_.begin(), txbuf_.begin() + len);
}

void
Lab::notify(void *, uint32_t)
{
    notify_calls_++;
}

void
Lab::SetUp()
{
    stk_test_set_clock(&Lab::clock);
    stk_netif_cfg cfg{};
    cfg.ip = htonl(kStackIp);
    cfg.netmask = htonl(0xffffff00);
    cfg.gateway = 0;
    memcpy(cfg.mac, kStackMac, 6);
    cfg.mtu = 1500;
    cfg.link.tx_alloc = &Lab::tx_alloc;
    cfg.link.tx_send = &Lab::tx_send;
    link_setup(cfg);
    ASSERT_EQ(stk_init(&cfg), 0);
    in6_addr a6;
    memcpy(&a6, kStackIp6.data(), 16);
    ASSERT_EQ(stk_netif_set_ip6(&a6, 64), 0);
    stk_set_notify(&Lab::notify);
    advance(100);
    drain();
    base_blocks_ = stk_test_mem_blocks();
}

void
Lab::close_all()
{
    for (stk_sock *s : socks_)
        stk_sock_close(s);
    socks_.clear();
}

void
Lab::TearDown()
{
    // Everything closed and every connection finished (FIN retransmits
    // give up after ~50 min of virtual time, TIME_WAIT expires): the lwIP
    // heap is back to what the
    // stack held right after init (its cyclic timers).
    EXPECT_EQ(stk_test_pcb_hash_check(), 0) << "PCB lookup table out of step";
    close_all();
    for (int i = 0; i < 7200 && stk_test_mem_blocks() != base_blocks_; i++) {
        advance(1000);
        txq_.clear();
    }
    txq_.clear();
    EXPECT_EQ(stk_test_socks(), 0);
    EXPECT_EQ(stk_test_lgroups(), 0) << "listener groups left";
    EXPECT_EQ(stk_test_mem_blocks(), base_blocks_) << "lwIP heap blocks left";
    EXPECT_EQ(stk_test_asserts(), 0) << "lwIP assertions failed";
    EXPECT_EQ(stk_test_pcb_hash_entries(), 0) << "PCB lookup entries left";
    EXPECT_EQ(stk_test_pcb_hash_anomalies(), 0) << "PCB lookup removals missed";
    EXPECT_EQ(stk_test_pcb_hash_check(), 0) << "PCB lookup table out of step";
}

void
Lab::advance_us(uint32_t us)
{
    now_ns_ += (uint64_t)us * 1000u;
    stk_timers();
}

void
Lab::advance(uint32_t ms)
{
    for (uint32_t t = 0; t < ms; t += 10) {
        now_ns_ += 10ull * 1000000ull;
        stk_timers();
    }
}

std::vector<Pkt>
Lab::drain()
{
    std::vector<Pkt> out;
    while (!txq_.empty()) {
        Bytes f = txq_.front();
        txq_.pop_front();
        Pkt p;
        if (!parse(f, &p)) {
            ADD_FAILURE() << "stack sent an unparsable frame";
            continue;
        }
        if (p.ethertype == 0x86dd && p.proto == 58 &&
            (p.icmp_type == 131 || p.icmp_type == 132 || p.icmp_type == 143)) {
            mld_.push_back(p); // MLD: kept apart, as ARP is answered
            continue;
        }
        if (p.ethertype == 0x86dd && p.proto == 58 && p.icmp_type == 135 &&
            nd_auto_ && p.payload.size() >= 16) {
            In6 t;
            memcpy(t.data(), p.payload.data(), 16);
            if (t == kPeerIp6 || t == kPeerLl6) {
                inject_ip6(icmp6(t, p.src6, 136, 0, peer_na(t)));
                ns_answered_++;
                continue;
            }
        }
        if (p.ethertype == 0x0806) {
            if (p.arp_op == 1 && p.arp_tpa == kPeerIp) {
                Bytes a(28);
                put16(a, 0, 1);
                put16(a, 2, 0x0800);
                a[4] = 6;
                a[5] = 4;
                put16(a, 6, 2);
                memcpy(&a[8], kPeerMac, 6);
                put32(a, 14, kPeerIp);
                memcpy(&a[18], kStackMac, 6);
                put32(a, 24, kStackIp);
                Bytes fr = eth(kStackMac, kPeerMac, 0x0806, a);
                stk_input(fr.data(), fr.size());
                continue;
            }
            out.push_back(p);
            continue;
        }
        EXPECT_TRUE(p.ip_csum_ok);
        if ((p.frag & 0x3fff) == 0 &&
            (p.proto == 6 || p.proto == 17 || p.proto == 1)) {
            EXPECT_TRUE(p.l4_csum_ok);
        }
        out.push_back(p);
    }
    return out;
}

Pkt
Lab::one()
{
    std::vector<Pkt> v = drain();
    EXPECT_EQ(v.size(), 1u);
    return v.empty() ? Pkt() : v[0];
}

void
Lab::inject_ip6(const Bytes &ip, const uint8_t *dst_mac)
{
    Bytes f = eth(dst_mac, kPeerMac, 0x86dd, ip);
    stk_input(f.data(), f.size());
}

void
Lab::inject_ip(const Bytes &ip)
{
    Bytes f = eth(kStackMac, kPeerMac, 0x0800, ip);
    stk_input(f.data(), f.size());
}

stk_sock *
Lab::tcp_sock()
{
    stk_sock *s = nullptr;
    EXPECT_EQ(stk_sock_create(SOCK_STREAM, &s), 0);
    if (v6_) {
        EXPECT_EQ(stk_sock_set_inet6(s, false), 0);
    }
    stk_sock_set_ctx(s, this);
    socks_.push_back(s);
    return s;
}

stk_sock *
Lab::udp_sock()
{
    stk_sock *s = nullptr;
    EXPECT_EQ(stk_sock_create(SOCK_DGRAM, &s), 0);
    if (v6_) {
        EXPECT_EQ(stk_sock_set_inet6(s, false), 0);
    }
    socks_.push_back(s);
    return s;
}

static sockaddr_in
sin_of(uint32_t ip, uint16_t port)
{
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(ip);
    a.sin_port = htons(port);
    return a;
}

int
Lab::bind_port(stk_sock *s, uint16_t port, uint32_t ip)
{
    if (stk_sock_family(s) == AF_INET6) {
        // The stack's IPv4 address binds the IPv6 one under v6_, mapped
        // otherwise; 0 is `::`.
        In6 a6 = ip == 0                 ? In6{}
                 : v6_ && ip == kStackIp ? kStackIp6
                                         : mapped6(ip);
        sockaddr_in6 a = sin6_of(a6, port);
        return stk_sock_bind(s, (sockaddr *)&a, sizeof(a));
    }
    sockaddr_in a = sin_of(ip, port);
    return stk_sock_bind(s, (sockaddr *)&a, sizeof(a));
}

int
Lab::connect_to(stk_sock *s, uint32_t ip, uint16_t port)
{
    if (stk_sock_family(s) == AF_INET6) {
        sockaddr_in6 a =
            sin6_of(v6_ && ip == kPeerIp ? kPeerIp6 : mapped6(ip), port);
        return stk_sock_connect(s, (sockaddr *)&a, sizeof(a));
    }
    sockaddr_in a = sin_of(ip, port);
    return stk_sock_connect(s, (sockaddr *)&a, sizeof(a));
}

ssize_t
Lab::send_bytes(stk_sock *s, const Bytes &b, int flags)
{
    iovec iov{(void *)b.data(), b.size()};
    msghdr m{};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    return stk_sock_sendmsg(s, &m, flags);
}

ssize_t
Lab::send_to(stk_sock *s, const Bytes &b, uint32_t ip, uint16_t port,
             int family)
{
    sockaddr_in to{};
    to.sin_family = (sa_family_t)family;
    to.sin_addr.s_addr = htonl(ip);
    to.sin_port = htons(port);
    iovec iov{(void *)b.data(), b.size()};
    msghdr m{};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_name = &to;
    m.msg_namelen = sizeof(to);
    return stk_sock_sendmsg(s, &m, 0);
}

ssize_t
Lab::recv_bytes(stk_sock *s, Bytes *out, size_t max, int flags)
{
    out->assign(max, 0);
    iovec iov{out->data(), max};
    msghdr m{};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    ssize_t n = stk_sock_recvmsg(s, &m, flags);
    out->resize(n > 0 ? (size_t)n : 0);
    return n;
}

Lab::Conn
Lab::active_open(uint16_t peer_port)
{
    return active_open(peer_port, PeerOpts());
}

Lab::Conn
Lab::active_open(uint16_t peer_port, PeerOpts o)
{
    Conn c;
    c.s = tcp_sock();
    c.pport = peer_port;
    EXPECT_EQ(connect_to(c.s, kPeerIp, peer_port), -EINPROGRESS);
    Pkt syn = one();
    EXPECT_EQ(syn.flags, SYN);
    EXPECT_EQ(syn.mss, v6_ ? 1440 : 1460);
    EXPECT_EQ(syn.wscale, 7);
    c.sport = syn.sport;
    c.rcv = syn.seq + 1;
    c.snd = 5000;
    // The SYN-ACK comes back 100 us later (unless told): a plausible first
    // RTT sample (the sender's loss detection scales with it).
    advance_us(o.rtt_us);
    TcpSeg sa;
    sa.sport = peer_port;
    sa.dport = c.sport;
    sa.seq = c.snd++;
    sa.ack = c.rcv;
    sa.flags = SYN | ACK;
    sa.mss = v6_ ? 1440 : 1460;
    sa.wscale = o.wscale;
    sa.sack_perm = o.sack && syn.sack_perm;
    if (o.ts && syn.ts) {
        c.ts = true;
        c.ts_clock = 1000;
        c.ts_recent = syn.tsval;
        sa.ts = true;
        sa.tsval = c.ts_clock;
        sa.tsecr = syn.tsval;
    }
    inject_tcp(sa);
    Pkt ack = one();
    if (c.ts)
        c.ts_recent = ack.tsval;
    EXPECT_EQ(ack.flags, ACK);
    EXPECT_EQ(ack.ack, c.snd);
    return c;
}

Lab::Conn
Lab::passive_open(stk_sock *listener, uint16_t stack_port, uint16_t peer_port)
{
    Conn c;
    c.sport = stack_port;
    c.pport = peer_port;
    c.snd = 7000;
    TcpSeg syn;
    syn.sport = peer_port;
    syn.dport = stack_port;
    syn.seq = c.snd++;
    syn.flags = SYN;
    syn.mss = v6_ ? 1440 : 1460;
    syn.wscale = 0;
    inject_tcp(syn);
    std::vector<Pkt> v = drain();
    if (v.size() != 1 || v[0].flags != (SYN | ACK)) {
        ADD_FAILURE() << "no SYN-ACK (" << v.size() << " frames)";
        return c;
    }
    c.rcv = v[0].seq + 1;
    TcpSeg ack;
    ack.sport = peer_port;
    ack.dport = stack_port;
    ack.seq = c.snd;
    ack.ack = c.rcv;
    ack.flags = ACK;
    inject_tcp(ack);
    sockaddr_in6 a{};
    socklen_t al = sizeof(a);
    if (stk_sock_accept(listener, &c.s, (sockaddr *)&a, &al) == 0) {
        socks_.push_back(c.s);
        // sin_port and sin6_port share their offset
        EXPECT_EQ(ntohs(a.sin6_port), peer_port);
    }
    return c;
}

// A segment from the peer on c, with its timestamp option when agreed.
TcpSeg
Lab::peer_seg(Conn &c, uint32_t ack, uint8_t flags, uint16_t win)
{
    TcpSeg t;
    t.sport = c.pport;
    t.dport = c.sport;
    t.seq = c.snd;
    t.ack = ack;
    t.flags = flags;
    t.win = win;
    if (c.ts) {
        t.ts = true;
        t.tsval = ++c.ts_clock;
        t.tsecr = c.ts_recent;
    }
    return t;
}

void
Lab::peer_send(Conn &c, const Bytes &data, uint8_t extra, uint16_t win)
{
    TcpSeg t = peer_seg(c, c.rcv,
                        (uint8_t)(ACK | extra | (data.empty() ? 0 : PSH)), win);
    t.payload = data;
    inject_tcp(t);
    c.snd += (uint32_t)data.size() + ((extra & (FIN | SYN)) ? 1 : 0);
}

void
Lab::peer_ack(Conn &c, uint16_t win)
{
    peer_send(c, {}, 0, win);
}

void
Lab::peer_sack(Conn &c, uint32_t ack,
               const std::vector<std::pair<uint32_t, uint32_t>> &blocks,
               uint16_t win)
{
    TcpSeg t = peer_seg(c, ack, ACK, win);
    t.sacks = blocks;
    inject_tcp(t);
}

Bytes
Lab::take_data(Conn &c, std::vector<Pkt> *pkts)
{
    Bytes out;
    for (const Pkt &p : drain()) {
        if (pkts)
            pkts->push_back(p);
        if (p.proto != 6 || p.dport != c.pport)
            continue;
        if (c.ts && p.ts)
            c.ts_recent = p.tsval;
        if (p.seq == c.rcv && !p.payload.empty()) {
            out.insert(out.end(), p.payload.begin(), p.payload.end());
            c.rcv += (uint32_t)p.payload.size();
        }
        if (p.flags & FIN)
            c.rcv += 1;
    }
    return out;
}

} // namespace stktest

namespace stktest
{
Bytes
Lab::pull(Conn &c, size_t n, uint16_t win, std::vector<Pkt> *pkts)
{
    Bytes out;
    for (int i = 0; i < 1000 && out.size() < n; i++) {
        Bytes b = take_data(c, pkts);
        if (b.empty()) {
            advance(200);
            b = take_data(c, pkts);
            if (b.empty())
                break;
        }
        out.insert(out.end(), b.begin(), b.end());
        peer_ack(c, win);
    }
    return out;
}
} // namespace stktest
