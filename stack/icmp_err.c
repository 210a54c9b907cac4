/*
 * ICMP errors for our sockets, as Linux (net/ipv4/icmp.c
 * icmp_err_convert, udp.c __udp4_lib_err, tcp_ipv4.c tcp_v4_err). lwIP
 * 2.1 answers echo requests but drops every ICMP error it receives.
 * Here, before lwIP sees the frame:
 *
 *  - destination unreachable, parameter problem and time exceeded for a
 *    TCP connection still in SYN-SENT end the connect with Linux's errno
 *    (host unreachable: EHOSTUNREACH; port unreachable: ECONNREFUSED...),
 *    when they quote its SYN's sequence number (icmp_tcp.c);
 *  - the "fatal" ones (port, protocol unreachable, prohibited, parameter
 *    problem; fragmentation needed: EMSGSIZE) go to the connected UDP
 *    socket the datagram came from, as its pending error (IP_RECVERR
 *    off): poll shows POLLERR, the next recv/send or SO_ERROR returns it.
 *    Net and host unreachable are transient (RFC 1122 3.2.2.1) and, as
 *    time exceeded and source quench, not reported to UDP.
 *
 * neigh_unres.c reports a packet ARP could not deliver here too, as a
 * host unreachable (Linux's arp_error_report).
 *
 * stk_input hands every frame here before lwIP. Nothing is trusted: the
 * outer IPv4 header (length, checksum, not a fragment, for our address),
 * the ICMP message (checksum over all of it) and the quoted IPv4 header
 * and 8 bytes after it (header length, first fragment, our source
 * address) are all checked before any socket is looked up. A frame that
 * fails a check goes on to lwIP, which drops it and counts it
 * (rx_drops.c).
 */
#include <errno.h>
#include <string.h>

#include "lwip/inet_chksum.h"
#include "lwip/prot/ethernet.h"
#include "lwip/prot/ip.h"
#include "lwip/prot/ip4.h"
#include "lwip/tcp.h"
#include "lwip/udp.h"

#include "stk_priv.h"

#define ICMP_DEST_UNREACH 3
#define ICMP_FRAG_NEEDED 4
#define ICMP_TIME_EXCEEDED 11
#define ICMP_PARAMETERPROB 12
#define ICMP_HDR_LEN 8
#define L4_PEEK 8 /* ports (and TCP's sequence number) of the quoted packet */

static uint16_t
get16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t
get32n(const uint8_t *p) /* as stored: network order */
{
    uint32_t v;

    memcpy(&v, p, sizeof(v));
    return v;
}

/* Linux's icmp_err_convert[]: the errno of an ICMP error, and whether
 * it is "fatal" (reported to UDP without IP_RECVERR); 0 for the others.
 * Fragmentation needed gives EMSGSIZE under Linux's default
 * IP_PMTUDISC_WANT, as a hard error. */
static int
err_convert(uint8_t type, uint8_t code, bool *fatal)
{
    static const struct {
        int err;
        bool fatal;
    } unreach[16] = {
        {ENETUNREACH, false},  /* 0 net unreachable */
        {EHOSTUNREACH, false}, /* 1 host unreachable */
        {ENOPROTOOPT, true},   /* 2 protocol unreachable */
        {ECONNREFUSED, true},  /* 3 port unreachable */
        {EMSGSIZE, true},      /* 4 fragmentation needed */
        {EOPNOTSUPP, false},   /* 5 source route failed */
        {ENETUNREACH, true},   /* 6 net unknown */
        {EHOSTDOWN, true},     /* 7 host unknown */
        {ENONET, true},        /* 8 host isolated */
        {ENETUNREACH, true},   /* 9 net prohibited */
        {EHOSTUNREACH, true},  /* 10 host prohibited */
        {ENETUNREACH, false},  /* 11 net unreachable for TOS */
        {EHOSTUNREACH, false}, /* 12 host unreachable for TOS */
        {EHOSTUNREACH, true},  /* 13 administratively filtered */
        {EHOSTUNREACH, true},  /* 14 precedence violation */
        {EHOSTUNREACH, true},  /* 15 precedence cut off */
    };

    *fatal = false;
    switch (type) {
    case ICMP_DEST_UNREACH:
        if (code >= 16)
            return 0; /* Linux: code > NR_ICMP_UNREACH, ignored */
        *fatal = unreach[code].fatal;
        return unreach[code].err;
    case ICMP_PARAMETERPROB:
        *fatal = true;
        return EPROTO;
    case ICMP_TIME_EXCEEDED:
        return EHOSTUNREACH;
    default:
        return 0; /* source quench, redirects, ...: ignored */
    }
}

/* A valid IPv4 header at ip (n bytes available): its header length, or 0. */
static unsigned int
ip_hlen(const uint8_t *ip, size_t n)
{
    unsigned int hl;

    if (n < IP_HLEN || (ip[0] >> 4) != 4)
        return 0;
    hl = (ip[0] & 0x0fu) * 4u;
    return hl >= IP_HLEN && hl <= n ? hl : 0;
}

/* The connected UDP socket that sent from lport to rip:rport. */
static struct stk_sock *
find_connected(uint32_t lip, uint16_t lport, uint32_t rip, uint16_t rport)
{
    struct udp_pcb *u;

    for (u = udp_pcbs; u != NULL; u = u->next) {
        struct stk_sock *s = u->recv_arg;
        /* A dual AF_INET6 socket's pcb (IPADDR_TYPE_ANY) is a wildcard. */
        uint32_t pl = IP_IS_V4_VAL(u->local_ip)
                          ? ip4_addr_get_u32(ip_2_ip4(&u->local_ip))
                          : 0;

        if (s == NULL || !(u->flags & UDP_FLAGS_CONNECTED) ||
            u->local_port != lport || u->remote_port != rport ||
            !IP_IS_V4_VAL(u->remote_ip) ||
            ip4_addr_get_u32(ip_2_ip4(&u->remote_ip)) != rip ||
            (pl != 0 && pl != lip) || !s->udp_connected)
            continue;
        return s;
    }
    return NULL;
}

bool
stk__icmp_err_input(const uint8_t *f, uint16_t len)
{
    const uint8_t *ip, *icmp, *in;
    unsigned int hl, ihl;
    size_t tot, ilen;

    if (len < SIZEOF_ETH_HDR + IP_HLEN || get16(f + 12) != ETHTYPE_IP)
        return false;
    ip = f + SIZEOF_ETH_HDR;
    hl = ip_hlen(ip, len - SIZEOF_ETH_HDR);
    if (hl == 0 || ip[9] != IP_PROTO_ICMP)
        return false;
    tot = get16(ip + 2);
    if (tot < hl || tot > (size_t)len - SIZEOF_ETH_HDR ||
        (get16(ip + 6) & 0x3fffu) != 0 || /* fragments: lwIP reassembles */
        get32n(ip + 16) != stk_local_ip() || inet_chksum(ip, (u16_t)hl) != 0)
        return false;
    icmp = ip + hl;
    ilen = tot - hl;
    if (ilen < ICMP_HDR_LEN + IP_HLEN + L4_PEEK)
        return false;
    if (icmp[0] != ICMP_DEST_UNREACH && icmp[0] != ICMP_PARAMETERPROB &&
        icmp[0] != ICMP_TIME_EXCEEDED)
        return false; /* echo and the rest: lwIP's */
    if (inet_chksum(icmp, (u16_t)ilen) != 0)
        return false;
    /* The quoted datagram: its IPv4 header and the first 8 bytes after. */
    in = icmp + ICMP_HDR_LEN;
    ihl = ip_hlen(in, ilen - ICMP_HDR_LEN);
    if (ihl == 0 || ilen - ICMP_HDR_LEN < ihl + L4_PEEK)
        return false;
    /* Well formed: from here on the message is ours, used or not. */
    stk__icmp_err_quoted(in, ilen - ICMP_HDR_LEN, icmp[0], icmp[1]);
    return true;
}

void
stk__icmp_err_quoted(const uint8_t *in, size_t n, uint8_t type, uint8_t code)
{
    unsigned int ihl = ip_hlen(in, n);
    const uint8_t *l4 = in + ihl;
    bool fatal;
    int err = err_convert(type, code, &fatal);

    if (err == 0 || ihl == 0 || n < ihl + L4_PEEK ||
        (get16(in + 6) & 0x1fffu) != 0 || get32n(in + 12) != stk_local_ip())
        return;
    if (in[9] == IP_PROTO_UDP && fatal) {
        struct stk_sock *s = find_connected(get32n(in + 12), get16(l4),
                                            get32n(in + 16), get16(l4 + 2));

        if (s != NULL) {
            s->err = err;
            stk__changed(s, true);
        }
    } else if (in[9] == IP_PROTO_TCP) {
        ip_addr_t src = IPADDR4_INIT(get32n(in + 12));
        ip_addr_t dst = IPADDR4_INIT(get32n(in + 16));
        struct tcp_pcb *p =
            stk__icmp_tcp_find(&src, get16(l4), &dst, get16(l4 + 2));

        if (p != NULL)
            stk__icmp_tcp_err(p, (uint32_t)get16(l4 + 4) << 16 | get16(l4 + 6),
                              err);
    }
}
