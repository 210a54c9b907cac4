/*
 * ICMPv6 errors for our sockets, as Linux (net/ipv6/icmp.c
 * icmpv6_err_convert, udp.c __udp6_lib_err, tcp_ipv6.c tcp_v6_err).
 * lwIP 2.1 answers echo, neighbour discovery and MLD itself, and keeps a
 * path MTU per destination from packet-too-big messages, but reports no
 * error to a pcb. Here, before lwIP sees the frame:
 *
 *  - destination unreachable, parameter problem and time exceeded for a
 *    TCP connection still in SYN-SENT end the connect with Linux's errno
 *    (port unreachable: ECONNREFUSED; no route: ENETUNREACH; ...);
 *  - the "fatal" ones (port unreachable, administratively prohibited,
 *    parameter problem, packet too big) go to the connected UDP socket
 *    that sent the datagram, as a pending error (IPV6_RECVERR off);
 *  - packet too big lowers the MSS of every TCP connection to that
 *    destination to the new MTU less 60 bytes (Linux's tcp_v6_mtu_reduced
 *    and tcp_sync_mss), not below the 1280-byte minimum MTU's, and then
 *    goes on to lwIP, which records the path MTU (new connections' MSS,
 *    IPv6 fragmentation of datagrams and of segments already sent at the
 *    old size: Linux re-segments those instead).
 *
 * Nothing is trusted: the outer IPv6 header (version, length, ICMPv6
 * right after it, for one of our addresses), the ICMPv6 checksum and the
 * quoted IPv6 header (one of our addresses as its source) are checked
 * first; a frame that fails goes on to lwIP. A well-formed error is ours
 * (consumed) whether a socket wanted it or not, except packet too big.
 */
#include <errno.h>
#include <string.h>

#include "lwip/ip6_addr.h"
#include "lwip/priv/tcp_priv.h"
#include "lwip/prot/ethernet.h"
#include "lwip/prot/ip6.h"
#include "lwip/tcp.h"
#include "lwip/udp.h"

#include "stats.h"
#include "stk_hooks.h"
#include "stk_priv.h"

#define ICMP6_DST_UNREACH 1
#define ICMP6_PACKET_TOO_BIG 2
#define ICMP6_TIME_EXCEEDED 3
#define ICMP6_PARAM_PROB 4
#define ICMP6_HDR_LEN 8
#define L4_PEEK 8 /* ports (and TCP's sequence number) of the quoted packet */
#define IP6_MIN_MTU 1280

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

/* The ICMPv6 checksum over the pseudo header of ip and n bytes at icmp:
 * 0 when right. */
static uint16_t
chksum6(const uint8_t *ip, const uint8_t *icmp, size_t n)
{
    uint32_t sum =
        IP6_NEXTH_ICMP6 + (uint32_t)(n >> 16) + (uint32_t)(n & 0xffff);

    for (size_t i = 8; i < 40; i += 2)
        sum += get16(ip + i);
    for (size_t i = 0; i + 1 < n; i += 2)
        sum += get16(icmp + i);
    if (n & 1)
        sum += (uint32_t)icmp[n - 1] << 8;
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
}

/* icmpv6_err_convert: the errno, and whether it is fatal (reported to a
 * UDP socket without IPV6_RECVERR); 0 for messages Linux ignores. */
static int
err_convert(uint8_t type, uint8_t code, bool *fatal)
{
    static const struct {
        int err;
        bool fatal;
    } unreach[] = {
        {ENETUNREACH, false},  /* 0 no route */
        {EACCES, true},        /* 1 administratively prohibited */
        {EHOSTUNREACH, false}, /* 2 beyond scope */
        {EHOSTUNREACH, false}, /* 3 address unreachable */
        {ECONNREFUSED, true},  /* 4 port unreachable */
        {EACCES, true},        /* 5 source address failed policy */
        {EACCES, true},        /* 6 reject route */
    };

    *fatal = false;
    switch (type) {
    case ICMP6_DST_UNREACH:
        if (code >= sizeof(unreach) / sizeof(unreach[0]))
            return EPROTO;
        *fatal = unreach[code].fatal;
        return unreach[code].err;
    case ICMP6_PACKET_TOO_BIG:
        *fatal = true;
        return EMSGSIZE;
    case ICMP6_PARAM_PROB:
        *fatal = true;
        return EPROTO;
    case ICMP6_TIME_EXCEEDED:
        return EHOSTUNREACH;
    default:
        return 0;
    }
}

static void
addr_of(ip_addr_t *a, const uint8_t *p)
{
    memset(a, 0, sizeof(*a));
    memcpy(ip_2_ip6(a)->addr, p, 16);
    IP_SET_TYPE_VAL(*a, IPADDR_TYPE_V6);
}

/* The connected UDP socket that sent from src:sport to dst:dport. */
static struct stk_sock *
udp_find(const ip_addr_t *src, uint16_t sport, const ip_addr_t *dst,
         uint16_t dport)
{
    for (struct udp_pcb *u = udp_pcbs; u != NULL; u = u->next) {
        struct stk_sock *s = u->recv_arg;

        if (s == NULL || !(u->flags & UDP_FLAGS_CONNECTED) ||
            !s->udp_connected || u->local_port != sport ||
            u->remote_port != dport || !ip_addr_cmp(&u->remote_ip, dst))
            continue;
        if (!ip_addr_isany(&u->local_ip) && !ip_addr_cmp(&u->local_ip, src))
            continue;
        return s;
    }
    return NULL;
}

/* tcp_v6_mtu_reduced: the connection sends at most mtu - 60 from now.
 * As Linux's tcp_v6_err, only the connection the quoted segment belongs
 * to, and only for a sequence number it has sent and not seen acked
 * (snd_una..snd_nxt): a forged error cannot shrink a connection it does
 * not quote. Other connections to dst learn the path MTU from lwIP's
 * destination cache when they start, or from their own packet-too-big.
 * The room lwIP kept at the end of the last unsent segment (its
 * "oversize", sized for the old MSS) is given up: tcp_write may append
 * no more than the new MSS allows, and it checks that the room it was
 * promised fits (found by tests/fuzz, regress/fuzz_sockcalls). */
static void
tcp_pmtu(struct tcp_pcb *p, uint32_t seq, uint32_t mtu)
{
    uint16_t mss;

    if (p->state != SYN_SENT &&
        (TCP_SEQ_LT(seq, p->lastack) || TCP_SEQ_GT(seq, p->snd_nxt))) {
        BASE_STAT_INC(rx_icmp_out_of_window);
        return;
    }
    if (mtu < IP6_MIN_MTU)
        mtu = IP6_MIN_MTU;
    mss = (uint16_t)(mtu > 0xffff ? 0xffff - IP6_HLEN - TCP_HLEN
                                  : mtu - IP6_HLEN - TCP_HLEN);
    if (p->mss <= mss)
        return;
    p->mss = mss;
#if TCP_OVERSIZE
    p->unsent_oversize = 0;
#if TCP_OVERSIZE_DBGCHECK
    for (struct tcp_seg *g = p->unsent; g != NULL; g = g->next)
        g->oversize_left = 0;
#endif
#endif
}

bool
stk__icmp6_err_input(const uint8_t *f, uint16_t len)
{
    const uint8_t *ip, *icmp, *in, *l4;
    ip_addr_t me, src, dst;
    size_t plen;
    bool fatal;
    int err;

    if (len < SIZEOF_ETH_HDR + IP6_HLEN + ICMP6_HDR_LEN ||
        get16(f + 12) != ETHTYPE_IPV6)
        return false;
    ip = f + SIZEOF_ETH_HDR;
    if ((ip[0] >> 4) != 6 || ip[6] != IP6_NEXTH_ICMP6)
        return false;
    plen = get16(ip + 4);
    if (plen > (size_t)len - SIZEOF_ETH_HDR - IP6_HLEN ||
        plen < ICMP6_HDR_LEN + IP6_HLEN + L4_PEEK)
        return false;
    icmp = ip + IP6_HLEN;
    err = err_convert(icmp[0], icmp[1], &fatal);
    if (err == 0)
        return false; /* echo, ND, MLD: lwIP's */
    addr_of(&me, ip + 24);
    if (!stk__is_local(&me))
        return false;
    if (chksum6(ip, icmp, plen) != 0)
        return false;
    /* The quoted packet: its IPv6 header and 8 bytes of what follows. */
    in = icmp + ICMP6_HDR_LEN;
    if ((in[0] >> 4) != 6)
        return false;
    addr_of(&src, in + 8);
    addr_of(&dst, in + 24);
    if (!stk__is_local(&src))
        return false;
    l4 = in + IP6_HLEN;
    if (icmp[0] == ICMP6_PACKET_TOO_BIG) {
        uint32_t mtu = get32(icmp + 4);

        BASE_STAT_INC(rx_icmp6_too_big);
        if (in[6] == IP6_NEXTH_TCP) {
            struct tcp_pcb *p =
                stk__icmp_tcp_find(&src, get16(l4), &dst, get16(l4 + 2));

            if (p != NULL)
                tcp_pmtu(p, get32(l4 + 4), mtu);
        } else if (in[6] == IP6_NEXTH_UDP) {
            struct stk_sock *s = udp_find(&src, get16(l4), &dst, get16(l4 + 2));

            if (s != NULL) {
                s->err = EMSGSIZE;
                stk__changed(s, true);
            }
        }
        return false; /* lwIP records the path MTU */
    }
    stk__icmp6_err_quoted(in, plen - ICMP6_HDR_LEN, icmp[0], icmp[1]);
    return true;
}

void
stk__icmp6_err_quoted(const uint8_t *in, size_t n, uint8_t type, uint8_t code)
{
    const uint8_t *l4 = in + IP6_HLEN;
    ip_addr_t src, dst;
    bool fatal;
    int err = err_convert(type, code, &fatal);

    if (err == 0 || n < IP6_HLEN + L4_PEEK || (in[0] >> 4) != 6)
        return;
    addr_of(&src, in + 8);
    addr_of(&dst, in + 24);
    if (in[6] == IP6_NEXTH_TCP) {
        struct tcp_pcb *p =
            stk__icmp_tcp_find(&src, get16(l4), &dst, get16(l4 + 2));

        if (p != NULL)
            stk__icmp_tcp_err(p, get32(l4 + 4), err);
    } else if (in[6] == IP6_NEXTH_UDP && fatal) {
        struct stk_sock *s = udp_find(&src, get16(l4), &dst, get16(l4 + 2));

        if (s != NULL) {
            s->err = err;
            stk__changed(s, true);
        }
    }
}
