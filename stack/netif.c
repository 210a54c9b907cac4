/*
 * The stack's single network interface: lwIP initialisation, an Ethernet
 * netif (ARP, IPv4, ICMP, IGMP; IPv6 with ND, ICMPv6 and MLD) whose output
 * goes to the link ops given by the port layer (runtime) or a test, frame
 * input, timers and the routing tests the preload layer uses to decide
 * what to accelerate.
 *
 * IPv6: the link-local address fe80::/64 from the MAC (EUI-64) is made
 * at init; a static global address (stk_netif_set_ip6) and a gateway
 * (stk_netif_set_gw6) come from the runtime. lwIP's ND answers
 * solicitations for them, resolves neighbours (queueing the first
 * packets) and joins each address's solicited-node group through MLD;
 * the groups' MACs (33:33 + the low 32 bits) go to link.mc_filter as
 * IPv4 groups' do. Destinations off-link go to the gateway (lwIP's
 * LWIP_HOOK_ND6_GET_GW), else to a router learnt from advertisements.
 *
 * Output flattens lwIP's pbuf chain into one buffer from link.tx_alloc and
 * queues it with link.tx_send; when no buffer is available the frame is
 * dropped as a full NIC ring would (TCP retransmits; the port layer counts
 * it). Input copies the frame into one PBUF_RAM pbuf, so lwIP always sees
 * contiguous headers; lwIP validates lengths and checksums (those the port
 * did not verify) and drops bad frames itself, and rx_drops.c counts what
 * it dropped. ICMP errors are looked at first (icmp_err.c): lwIP ignores
 * them, Linux reports them to connected UDP sockets.
 */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include "lwip/etharp.h"
#include "lwip/ethip6.h"
#include "lwip/igmp.h"
#include "lwip/init.h"
#include "lwip/ip4.h"
#include "lwip/ip6.h"
#include "lwip/mld6.h"
#include "lwip/nd6.h"
#include "lwip/prot/etharp.h"
#include "lwip/prot/ip6.h"
#include "lwip/netif.h"
#include "lwip/timeouts.h"
#include "netif/ethernet.h"

#include "log.h"
#include "statreg.h"
#include "stats.h"
#include "stk_hooks.h"
#include "stk_priv.h"

static struct netif stk_netif;
static struct stk_link_ops link_ops;
static bool stk_up;
static int stk_kernel_ifindex;
/* IPv6: the global address's slot (-1: none) and prefix, the gateway. */
static s8_t ip6_idx = -1;
static int ip6_plen;
static ip6_addr_t gw6;
static bool gw6_set;

/* accel-dump: a copy of a frame sent (drop: it could not be). */
static void
capture_tx(struct pbuf *p, uint8_t drop)
{
    uint32_t cl;
    struct base_sr_cap *r =
        base_sr_cap_reserve(BASE_SR_CAP_TX, p->tot_len, &cl);

    if (r == NULL)
        return;
    pbuf_copy_partial(p, base_sr_cap_data(r), (u16_t)cl, 0);
    base_sr_cap_commit(r, drop);
}

static err_t
link_output(struct netif *netif, struct pbuf *p)
{
    void *handle = NULL;
    uint8_t *buf;

    (void)netif;
    buf = link_ops.tx_alloc(link_ops.ctx, p->tot_len, &handle);
    if (__builtin_expect(
            atomic_load_explicit(&base_sr_capturing, memory_order_relaxed), 0))
        capture_tx(p, buf == NULL ? BASE_SR_CAP_DROP_TXBUF : BASE_SR_CAP_KEPT);
    if (buf == NULL)
        return ERR_OK; /* dropped like a full ring; counted by the port */
    pbuf_copy_partial(p, buf, p->tot_len, 0);
    if (__builtin_expect(
            link_ops.arp_request != NULL || link_ops.nd_request != NULL, 0))
        stk__steer_arp(buf, p->tot_len);
    link_ops.tx_send(link_ops.ctx, handle, p->tot_len);
    return ERR_OK;
}

const struct stk_link_ops *
stk__link(void)
{
    return &link_ops;
}

/* lwIP's IGMP asks for frames to a group's MAC (01:00:5e + the low 23
 * bits of the group) when the first socket joins it, and releases them
 * when the last one leaves. The port takes every multicast frame
 * (allmulticast, runtime/port.c) unless it gave a filter. */
static err_t
mac_filter(struct netif *netif, const ip4_addr_t *group,
           enum netif_mac_filter_action action)
{
    uint32_t g = lwip_ntohl(ip4_addr_get_u32(group));
    uint8_t mac[6] = {0x01, 0x00, 0x5e};

    mac[3] = (uint8_t)((g >> 16) & 0x7f);
    mac[4] = (uint8_t)(g >> 8);
    mac[5] = (uint8_t)g;
    (void)netif;
    if (link_ops.mc_filter != NULL)
        link_ops.mc_filter(link_ops.ctx, mac, action == NETIF_ADD_MAC_FILTER);
    return ERR_OK;
}

/* The MAC of an IPv6 group: 33:33 + its low 32 bits (RFC 2464 7). */
static void
mld_mac(const ip6_addr_t *group, uint8_t mac[6])
{
    uint32_t g = lwip_ntohl(group->addr[3]);

    mac[0] = mac[1] = 0x33;
    mac[2] = (uint8_t)(g >> 24);
    mac[3] = (uint8_t)(g >> 16);
    mac[4] = (uint8_t)(g >> 8);
    mac[5] = (uint8_t)g;
}

/* MLD's groups (solicited-node and the sockets'), as IGMP's above. */
static err_t
mld_mac_filter(struct netif *netif, const ip6_addr_t *group,
               enum netif_mac_filter_action action)
{
    uint8_t mac[6];

    (void)netif;
    mld_mac(group, mac);
    if (link_ops.mc_filter != NULL)
        link_ops.mc_filter(link_ops.ctx, mac, action == NETIF_ADD_MAC_FILTER);
    if (link_ops.mc_group6 != NULL)
        link_ops.mc_group6(link_ops.ctx, (const uint8_t *)group->addr,
                           action == NETIF_ADD_MAC_FILTER);
    return ERR_OK;
}

static err_t
netif_setup(struct netif *netif)
{
    const struct stk_netif_cfg *cfg = netif->state;
    uint16_t chk = NETIF_CHECKSUM_GEN_IP | NETIF_CHECKSUM_GEN_UDP |
                   NETIF_CHECKSUM_GEN_TCP | NETIF_CHECKSUM_GEN_ICMP |
                   NETIF_CHECKSUM_CHECK_ICMP | NETIF_CHECKSUM_GEN_ICMP6 |
                   NETIF_CHECKSUM_CHECK_ICMP6;

    netif->name[0] = 'a';
    netif->name[1] = 'c';
    netif->output = etharp_output;
    netif->output_ip6 = ethip6_output;
    netif->linkoutput = link_output;
    netif->mtu = cfg->mtu ? cfg->mtu : 1500;
    netif->hwaddr_len = ETH_HWADDR_LEN;
    memcpy(netif->hwaddr, cfg->mac, ETH_HWADDR_LEN);
    netif->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP |
                   NETIF_FLAG_ETHERNET | NETIF_FLAG_IGMP | NETIF_FLAG_MLD6;
    netif_set_igmp_mac_filter(netif, mac_filter);
    netif_set_mld_mac_filter(netif, mld_mac_filter);
    if (!(cfg->csum_flags & STK_CSUM_RX_IP))
        chk |= NETIF_CHECKSUM_CHECK_IP;
    if (!(cfg->csum_flags & STK_CSUM_RX_L4))
        chk |= NETIF_CHECKSUM_CHECK_TCP | NETIF_CHECKSUM_CHECK_UDP;
    NETIF_SET_CHECKSUM_CTRL(netif, chk);
    return ERR_OK;
}

int
stk_init(const struct stk_netif_cfg *cfg)
{
    ip4_addr_t ip, mask, gw;

    if (stk_up)
        return -EALREADY;
    if (cfg == NULL || cfg->link.tx_alloc == NULL ||
        cfg->link.tx_send == NULL || cfg->ip == 0)
        return -EINVAL;
    if (cfg->mtu != 0 && (cfg->mtu < 576 || cfg->mtu > 9000))
        return -EINVAL;
    link_ops = cfg->link;
    lwip_init();
    stk__tcp_init();
    ip4_addr_set_u32(&ip, cfg->ip);
    ip4_addr_set_u32(&mask, cfg->netmask);
    ip4_addr_set_u32(&gw, cfg->gateway);
    /* netif_setup reads cfg through netif->state during netif_add only. */
    if (netif_add(&stk_netif, &ip, &mask, &gw, (void *)cfg, netif_setup,
                  netif_input) == NULL)
        return -ENOMEM;
    stk_netif.state = NULL;
    netif_set_default(&stk_netif);
    /* fe80::/64 with the MAC's EUI-64; valid at once (no DAD,
     * lwipopts.h), which joins its solicited-node group. */
    netif_create_ip6_linklocal_address(&stk_netif, 1);
    netif_ip6_addr_set_state(&stk_netif, 0, IP6_ADDR_PREFERRED);
    netif_set_link_up(&stk_netif);
    netif_set_up(&stk_netif);
    stk_up = true;
    BASE_INFO("stack", "netif up: ip %u.%u.%u.%u mtu %u", ip4_addr1(&ip),
              ip4_addr2(&ip), ip4_addr3(&ip), ip4_addr4(&ip), stk_netif.mtu);
    return 0;
}

/* lwIP reads the fixed ARP and IPv4 headers before checking that they fit
 * (ip4_input takes the version and total length, etharp_input the whole
 * ARP header): runts from an unpadded link (veth) must stop here. */
static bool
frame_len_ok(const uint8_t *f, uint16_t len)
{
    uint16_t type;

    if (len < SIZEOF_ETH_HDR)
        return false;
    type = (uint16_t)(f[12] << 8 | f[13]);
    if (type == ETHTYPE_IP)
        return len >= SIZEOF_ETH_HDR + IP_HLEN;
    if (type == ETHTYPE_ARP)
        return len >= SIZEOF_ETH_HDR + SIZEOF_ETHARP_HDR;
    if (type == ETHTYPE_IPV6)
        return len >= SIZEOF_ETH_HDR + IP6_HLEN;
    return true;
}

static void input(const void *frame, uint16_t len);

/* accel-dump: a copy of every frame received, marked when the stack
 * dropped it (the drop counters moved while it was handled). */
static void
input_captured(const void *frame, uint16_t len)
{
    uint64_t stack = base_stats.rx_drop_stack, nobuf = base_stats.rx_drop_nobuf;
    uint32_t cl;
    struct base_sr_cap *r = base_sr_cap_reserve(BASE_SR_CAP_RX, len, &cl);

    if (r != NULL)
        memcpy(base_sr_cap_data(r), frame, cl);
    input(frame, len);
    if (r != NULL)
        base_sr_cap_commit(
            r, base_stats.rx_drop_nobuf != nobuf   ? BASE_SR_CAP_DROP_NOBUF
               : base_stats.rx_drop_stack != stack ? BASE_SR_CAP_DROP_STACK
                                                   : BASE_SR_CAP_KEPT);
}

void
stk_input(const void *frame, uint16_t len)
{
    if (__builtin_expect(
            atomic_load_explicit(&base_sr_capturing, memory_order_relaxed), 0))
        input_captured(frame, len);
    else
        input(frame, len);
}

static void
input(const void *frame, uint16_t len)
{
    struct pbuf *p;

    if (!stk_up || !frame_len_ok(frame, len)) {
        BASE_STAT_INC(rx_drop_stack);
        return;
    }
    /* ICMP errors for our UDP sockets, which lwIP would drop. */
    if (stk__icmp_err_input(frame, len) || stk__icmp6_err_input(frame, len))
        return;
    p = pbuf_alloc(PBUF_RAW, len, PBUF_RAM);
    if (p == NULL) {
        BASE_STAT_INC(rx_drop_nobuf);
        return;
    }
    memcpy(p->payload, frame, len);
    if (stk_netif.input(p, &stk_netif) != ERR_OK) {
        pbuf_free(p);
        BASE_STAT_INC(rx_drop_stack);
        stk__drops_sync();
        return;
    }
    stk__drops_count();
}

void
stk_timers(void)
{
    if (!stk_up)
        return;
    sys_check_timeouts();
    stk__tcp_timers(stk__now_ns());
    /* Frames the stack sent to its own address (LWIP_NETIF_LOOPBACK). */
    netif_poll(&stk_netif);
    stk__drops_sync();
}

uint32_t
stk_next_timer_ms(void)
{
    u32_t ms;
    uint64_t tcp = stk__tcp_timers_next(), now;

    if (!stk_up)
        return 1000;
    if (stk_netif.loop_first != NULL)
        return 0;
    ms = sys_timeouts_sleeptime();
    if (tcp != 0) {
        now = stk__now_ns();
        if (tcp <= now)
            return 0;
        if ((tcp - now + 999999u) / 1000000u < ms)
            ms = (u32_t)((tcp - now + 999999u) / 1000000u);
    }
    return ms > 1000 ? 1000 : ms;
}

bool
stk_route_ok(uint32_t addr)
{
    uint32_t ip = ip4_addr_get_u32(netif_ip4_addr(&stk_netif));
    uint32_t mask = ip4_addr_get_u32(netif_ip4_netmask(&stk_netif));
    uint32_t gw = ip4_addr_get_u32(netif_ip4_gw(&stk_netif));
    uint32_t h = lwip_ntohl(addr);

    if (!stk_up || addr == 0 || addr == 0xffffffffu)
        return false;
    if ((h >> 24) == 127 || (h >> 28) == 0xe)
        return false;
    if ((addr & mask) == (ip & mask))
        return true;
    return gw != 0;
}

uint32_t
stk_local_ip(void)
{
    return stk_up ? ip4_addr_get_u32(netif_ip4_addr(&stk_netif)) : 0;
}

void
stk_set_ifindex(int ifindex)
{
    stk_kernel_ifindex = ifindex;
}

int
stk_ifindex(void)
{
    return stk_kernel_ifindex;
}

bool
stk__is_local_ip(uint32_t ip)
{
    return stk_up && ip == ip4_addr_get_u32(netif_ip4_addr(&stk_netif));
}

/* ---- IPv6 ------------------------------------------------------------- */

static void
in6_to_ip6(const struct in6_addr *a, ip6_addr_t *out)
{
    memset(out, 0, sizeof(*out));
    memcpy(out->addr, a->s6_addr, 16);
}

int
stk_netif_set_ip6(const struct in6_addr *a, int prefix_len)
{
    ip6_addr_t ip;
    err_t e;

    if (!stk_up)
        return -ENETDOWN;
    if (a == NULL || prefix_len < 1 || prefix_len > 128)
        return -EINVAL;
    in6_to_ip6(a, &ip);
    if (ip6_addr_isany(&ip) || ip6_addr_ismulticast(&ip) ||
        ip6_addr_isloopback(&ip) || ip6_addr_isipv4mappedipv6(&ip) ||
        ip6_addr_islinklocal(&ip))
        return -EINVAL;
    if (ip6_idx >= 0) {
        netif_ip6_addr_set_state(&stk_netif, ip6_idx, IP6_ADDR_INVALID);
        ip6_idx = -1;
    }
    e = netif_add_ip6_address(&stk_netif, &ip, &ip6_idx);
    if (e != ERR_OK) {
        ip6_idx = -1;
        return -ENOBUFS;
    }
    /* Static: preferred at once (no DAD, see lwipopts.h). */
    netif_ip6_addr_set_state(&stk_netif, ip6_idx, IP6_ADDR_PREFERRED);
    ip6_plen = prefix_len;
    return 0;
}

int
stk_netif_set_gw6(const struct in6_addr *gw)
{
    ip6_addr_t g;

    if (gw == NULL) {
        gw6_set = false;
        return 0;
    }
    in6_to_ip6(gw, &g);
    if (ip6_addr_isany(&g) || ip6_addr_ismulticast(&g))
        return -EINVAL;
    gw6 = g;
    gw6_set = true;
    return 0;
}

const struct ip6_addr *
stk_nd6_gateway(struct netif *netif, const struct ip6_addr *dest)
{
    (void)netif;
    (void)dest;
    return gw6_set ? &gw6 : NULL;
}

/* a and b agree on their first plen bits. */
static bool
prefix_eq(const ip6_addr_t *a, const ip6_addr_t *b, int plen)
{
    for (int i = 0; i < 4 && plen > 0; i++, plen -= 32) {
        uint32_t m = plen >= 32 ? 0xffffffffu : ~(0xffffffffu >> plen);

        if ((lwip_ntohl(a->addr[i]) & m) != (lwip_ntohl(b->addr[i]) & m))
            return false;
    }
    return true;
}

static bool
route6_ok(const ip6_addr_t *d)
{
    if (!stk_up || ip6_addr_isany(d) || ip6_addr_isloopback(d) ||
        ip6_addr_ismulticast(d) || ip6_addr_isipv4mappedipv6(d))
        return false;
    if (ip6_addr_islinklocal(d))
        return true;
    if (ip6_idx < 0)
        return false; /* no global address to send from */
    if (prefix_eq(d, netif_ip6_addr(&stk_netif, ip6_idx), ip6_plen))
        return true;
    return gw6_set;
}

bool
stk_route6_ok(const struct in6_addr *a)
{
    ip6_addr_t d;

    in6_to_ip6(a, &d);
    return route6_ok(&d);
}

static bool
is_local6(const ip6_addr_t *a)
{
    if (!stk_up)
        return false;
    for (s8_t i = 0; i < LWIP_IPV6_NUM_ADDRESSES; i++)
        if (ip6_addr_isvalid(netif_ip6_addr_state(&stk_netif, i)) &&
            ip6_addr_cmp_zoneless(a, netif_ip6_addr(&stk_netif, i)))
            return true;
    return false;
}

bool
stk_is_local_ip6(const struct in6_addr *a)
{
    ip6_addr_t d;

    in6_to_ip6(a, &d);
    return is_local6(&d);
}

bool
stk_local_ll6(struct in6_addr *out)
{
    if (!stk_up)
        return false;
    memcpy(out->s6_addr, netif_ip6_addr(&stk_netif, 0)->addr, 16);
    return true;
}

bool
stk_local_ip6(struct in6_addr *out)
{
    if (!stk_up || ip6_idx < 0)
        return false;
    memcpy(out->s6_addr, netif_ip6_addr(&stk_netif, ip6_idx)->addr, 16);
    return true;
}

int
stk_netif_mcast_macs(uint8_t (*macs)[6], int max)
{
    struct mld_group *g;
    int n = 0;

    if (!stk_up)
        return 0;
    for (g = netif_mld6_data(&stk_netif); g != NULL; g = g->next, n++)
        if (n < max)
            mld_mac(&g->group_address, macs[n]);
    return n;
}

bool
stk__is_local(const ip_addr_t *ip)
{
    if (IP_IS_V6(ip))
        return is_local6(ip_2_ip6(ip));
    return IP_IS_V4(ip) && stk__is_local_ip(ip4_addr_get_u32(ip_2_ip4(ip)));
}

bool
stk__route_ok(const ip_addr_t *ip)
{
    if (IP_IS_V6(ip))
        return route6_ok(ip_2_ip6(ip));
    return IP_IS_V4(ip) && stk_route_ok(ip4_addr_get_u32(ip_2_ip4(ip)));
}

const ip_addr_t *
stk__local_for(const ip_addr_t *dest)
{
    if (!stk_up)
        return NULL;
    if (IP_IS_V6(dest))
        return ip6_select_source_address(&stk_netif, ip_2_ip6(dest));
    return &stk_netif.ip_addr;
}

uint32_t
stk__netif_mtu(void)
{
    return stk_netif.mtu;
}
