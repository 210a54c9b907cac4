/*
 * Frames lwIP drops on its own, counted as rx_drop_stack (and those with a
 * bad IP/ICMP/UDP/TCP/IGMP checksum also as rx_drop_csum): a bad length
 * or checksum, an unknown protocol or ethertype, a datagram or segment no
 * socket wants (answered with an ICMP port unreachable or a RST), a packet
 * for another address. lwIP only keeps such facts in its per-protocol
 * counters (LWIP_STATS, restricted in lwipopts.h to the protocol groups).
 *
 * One frame may bump several counters (udp.proterr and udp.drop), so
 * after each frame stk_input compares one sum with the value it had after
 * the previous frame and counts the frame once when it moved. The sum
 * holds every layer's drop counter plus the few ICMP and IGMP error paths
 * that free a frame without counting a drop (icmp.c, igmp.c); memerr and
 * rterr stay out, as lwIP bumps them on the output path too. Between
 * frames only the loopback input in stk_timers moves these counters: it
 * resynchronises instead of counting (those frames never came from the
 * port). Cost: a dozen loads of counters lwIP has just touched, per frame.
 */
#include "lwip/stats.h"

#include "stats.h"
#include "stk_priv.h"

#if !LWIP_STATS || !IP_STATS || !TCP_STATS || !UDP_STATS || !ICMP_STATS ||     \
    !ETHARP_STATS || !IPFRAG_STATS || !IGMP_STATS || !IP6_STATS ||             \
    !IP6_FRAG_STATS || !ICMP6_STATS || !MLD6_STATS || !ND6_STATS
#error "rx drop accounting needs lwIP's protocol stats (lwipopts.h)"
#endif

static uint32_t seen_drops, seen_csum, seen_drops6;

/* The IPv6 layers' share (also in drops_total): counted apart as well,
 * in rx_drop_ip6. TCP and UDP keep one counter for both families. */
static uint32_t
drops6_total(void)
{
    const struct stats_ *st = &lwip_stats;

    return (uint32_t)(st->ip6.drop + st->ip6_frag.drop + st->icmp6.drop +
                      st->mld6.drop + st->nd6.drop + st->icmp6.lenerr +
                      st->icmp6.chkerr + st->icmp6.err + st->mld6.lenerr +
                      st->mld6.chkerr + st->mld6.proterr + st->nd6.lenerr +
                      st->nd6.chkerr + st->nd6.proterr);
}

static uint32_t
drops_total(void)
{
    const struct stats_ *st = &lwip_stats;

    return (uint32_t)(st->etharp.drop + st->ip_frag.drop + st->ip.drop +
                      st->icmp.drop + st->udp.drop + st->tcp.drop +
                      st->igmp.drop + st->icmp.lenerr + st->icmp.chkerr +
                      st->icmp.err + st->igmp.lenerr + st->igmp.chkerr +
                      st->igmp.proterr) +
           drops6_total();
}

static uint32_t
csum_total(void)
{
    const struct stats_ *st = &lwip_stats;

    return (uint32_t)(st->ip.chkerr + st->icmp.chkerr + st->udp.chkerr +
                      st->tcp.chkerr + st->igmp.chkerr + st->icmp6.chkerr +
                      st->mld6.chkerr + st->nd6.chkerr);
}

void
stk__drops_sync(void)
{
    seen_drops = drops_total();
    seen_csum = csum_total();
    seen_drops6 = drops6_total();
}

bool
stk__drops_count(void)
{
    uint32_t d = drops_total(), c;

    if (d == seen_drops)
        return false;
    seen_drops = d;
    BASE_STAT_INC(rx_drop_stack);
    if (drops6_total() != seen_drops6) {
        seen_drops6 = drops6_total();
        BASE_STAT_INC(rx_drop_ip6);
    }
    c = csum_total();
    if (c != seen_csum) {
        seen_csum = c;
        BASE_STAT_INC(rx_drop_csum);
    }
    return true;
}
