/*
 * Packets for a neighbour nobody answered (lwIP patch 0039). When ARP or
 * neighbour discovery gives up on an address (3 probes, 1 s apart:
 * ARP_MAXPENDING, LWIP_ND6_MAX_MULTICAST_SOLICIT), each packet that was
 * waiting for it is reported to its socket as Linux does
 * (arp_error_report, ndisc_error_report: a local ICMP host unreachable,
 * ICMPv6 address unreachable): a connect in SYN-SENT fails with
 * EHOSTUNREACH about 3 s after it began, instead of retrying its SYN
 * until the connect times out. Connected UDP sockets are not told (a
 * transient error, as there).
 */
#include "lwip/pbuf.h"
#include "lwip/prot/ip4.h"
#include "lwip/prot/ip6.h"

#include "stats.h"
#include "stk_hooks.h"
#include "stk_priv.h"

#define ICMP_DEST_UNREACH 3
#define ICMP_HOST_UNREACH 1
#define ICMP6_DST_UNREACH 1
#define ICMP6_ADDR_UNREACH 3
#define PEEK 8 /* of what follows the IP header: ports, sequence number */

void
stk_etharp_unresolved(struct pbuf *p)
{
    uint8_t in[60 + PEEK]; /* the longest IPv4 header */
    uint16_t n = pbuf_copy_partial(p, in, sizeof(in), 0);

    BASE_STAT_INC(tx_neigh_unresolved);
    if (n >= IP_HLEN + PEEK)
        stk__icmp_err_quoted(in, n, ICMP_DEST_UNREACH, ICMP_HOST_UNREACH);
}

void
stk_nd6_unresolved(struct pbuf *p)
{
    uint8_t in[IP6_HLEN + PEEK];
    uint16_t n = pbuf_copy_partial(p, in, sizeof(in), 0);

    BASE_STAT_INC(tx_neigh_unresolved);
    if (n == sizeof(in))
        stk__icmp6_err_quoted(in, n, ICMP6_DST_UNREACH, ICMP6_ADDR_UNREACH);
}
