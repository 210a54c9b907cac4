/*
 * ICMP errors for connected UDP sockets. lwIP 2.1 answers echo requests
 * but drops every ICMP error it receives. Linux (icmp_unreach ->
 * __udp4_lib_err, IP_RECVERR off) reports destination unreachable and
 * parameter problem to the UDP socket the offending datagram came from,
 * when that socket is connected: it sets the socket's pending error
 * (ECONNREFUSED for port unreachable, see icmp_err_convert[]), which
 * poll shows as POLLERR and the next recv/send or SO_ERROR returns.
 * Unconnected sockets, time exceeded, source quench and redirects are
 * ignored, as there.
 *
 * stk_input hands every frame here before lwIP. Nothing is trusted: the
 * outer IPv4 header (length, checksum, not a fragment, for our address),
 * the ICMP message (checksum over all of it) and the quoted IPv4 + UDP
 * headers (header length, first fragment, our source address) are all
 * checked before any socket is looked up. A frame that fails a check goes
 * on to lwIP, which drops it and counts it (rx_drops.c).
 */
#include <errno.h>
#include <string.h>

#include "lwip/inet_chksum.h"
#include "lwip/prot/ethernet.h"
#include "lwip/prot/ip.h"
#include "lwip/prot/ip4.h"
#include "lwip/udp.h"

#include "stk_priv.h"

#define ICMP_DEST_UNREACH 3
#define ICMP_FRAG_NEEDED 4
#define ICMP_PARAMETERPROB 12
#define ICMP_HDR_LEN 8
#define UDP_HDR_LEN 8

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

/* Linux's icmp_err_convert[] for destination unreachable: the errno, and
 * whether it is "fatal" (reported without IP_RECVERR). Code 4 (fragmentation
 * needed) gives EMSGSIZE under Linux's default IP_PMTUDISC_WANT. */
static int
unreach_errno(uint8_t code)
{
    static const int map[16] = {
        ENETUNREACH,  /* 0 net unreachable */
        EHOSTUNREACH, /* 1 host unreachable */
        ENOPROTOOPT,  /* 2 protocol unreachable */
        ECONNREFUSED, /* 3 port unreachable */
        EMSGSIZE,     /* 4 fragmentation needed */
        EOPNOTSUPP,   /* 5 source route failed */
        ENETUNREACH,  /* 6 net unknown */
        EHOSTDOWN,    /* 7 host unknown */
        ENONET,       /* 8 host isolated */
        ENETUNREACH,  /* 9 net prohibited */
        EHOSTUNREACH, /* 10 host prohibited */
        ENETUNREACH,  /* 11 net unreachable for TOS */
        EHOSTUNREACH, /* 12 host unreachable for TOS */
        EHOSTUNREACH, /* 13 administratively filtered */
        EHOSTUNREACH, /* 14 precedence violation */
        EHOSTUNREACH, /* 15 precedence cut off */
    };

    return code < 16 ? map[code] : 0; /* others: not fatal, ignored */
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
    const uint8_t *ip, *icmp, *in, *uh;
    unsigned int hl, ihl;
    size_t tot, ilen;
    struct stk_sock *s;
    int err;

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
    if (ilen < ICMP_HDR_LEN + IP_HLEN + UDP_HDR_LEN)
        return false;
    if (icmp[0] == ICMP_DEST_UNREACH)
        err = unreach_errno(icmp[1]);
    else if (icmp[0] == ICMP_PARAMETERPROB)
        err = EPROTO;
    else
        return false;
    if (inet_chksum(icmp, (u16_t)ilen) != 0)
        return false;
    /* The quoted datagram: its IPv4 header and the first 8 bytes after. */
    in = icmp + ICMP_HDR_LEN;
    ihl = ip_hlen(in, ilen - ICMP_HDR_LEN);
    if (ihl == 0 || ilen - ICMP_HDR_LEN < ihl + UDP_HDR_LEN)
        return false;
    /* Well formed: from here on the message is ours, used or not. */
    if (err == 0 || in[9] != IP_PROTO_UDP || (get16(in + 6) & 0x1fffu) != 0 ||
        get32n(in + 12) != stk_local_ip())
        return true;
    uh = in + ihl;
    s = find_connected(get32n(in + 12), get16(uh), get32n(in + 16),
                       get16(uh + 2));
    if (s != NULL) {
        s->err = err;
        stk__changed(s, true);
    }
    return true;
}
