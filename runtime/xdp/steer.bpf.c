/*
 * accel's XDP program for af_xdp ports: only the frames the stack needs go
 * to the XSK; everything else goes on to the kernel (XDP_PASS).
 *
 * Sent to the stack (bpf_redirect_map on the receiving queue's XSK):
 *   - IPv4 to ACCEL_IP, to the subnet's broadcast, to 255.255.255.255, and
 *     IPv4 multicast (224.0.0.0/4: the stack's groups and IGMP queries);
 *   - ARP whose target address is ACCEL_IP (requests for it, replies to
 *     the stack's own requests);
 *   - IPv6 whose destination is in the map accel_dst6 (steer.h): the
 *     stack's ACCEL_IP6 and link-local addresses, their solicited-node
 *     groups (neighbour solicitations only when they target one of the
 *     stack's addresses), the groups its sockets joined, and ff02::1 when
 *     the kernel does not use IPv6 on the interface. The map is empty until
 *     the port is up, and stays empty without ACCEL_IP6.
 * With accel_shared (ACCEL_IP is the kernel's own address on the
 * interface), IPv4 to that address goes to the stack only for its ports
 * and connections (the maps accel_lport and accel_flow4, steer.h),
 * broadcast and multicast only as UDP to a port it serves, ARP only as
 * the reply to a request of the stack's (accel_arp); ICMP echo, IGMP, ARP
 * requests and everything else stay with the kernel.
 * A SYN to a listener of the stack's whose backlog is full is answered
 * here with the stack's SYN cookie (synck.bpf.h) while the stack asks.
 * A TCP segment to the stack's own IPv4 or IPv6 address that finds no XSK
 * on its queue (the process serving it is gone) is answered with the RST
 * Linux would send (reset.bpf.h).
 * Everything else, the kernel's own addresses, other IPv6, ARP and
 * neighbour discovery for other addresses, LLDP and the rest, is passed to
 * the kernel as if no program were attached. With DPDK's default program
 * every frame of the queue would go to the XSK and the kernel would lose
 * the interface.
 *
 * IPv4 is tested first, so its cost is what it was before IPv6 (one
 * comparison of the EtherType more for IPv6 frames than for ARP).
 *
 * The two IPv4 addresses are `volatile const` globals (.rodata, frozen at
 * load): runtime/xdpprog.c sets their placeholder values before it loads
 * the object, and leaves the program attached for the next process. The IPv6
 * map is filled by xdpsteer.c once the port is up, when the stack's MAC
 * (hence its link-local address) is known. The map must be called
 * xsks_map: the XSKs go there (broker_client.c, accel-broker).
 *
 * Built with clang -target bpf; the object is embedded in libaccel.so.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/icmpv6.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/ip.h>
#include <linux/ipv6.h>

#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "steer.h"

#include "reset.bpf.h"
#include "synck.bpf.h"

struct {
    __uint(type, BPF_MAP_TYPE_XSKMAP);
    __uint(max_entries, 64);
    __type(key, __u32);
    __type(value, __u32);
} xsks_map SEC(".maps");

/* IPv6 destinations the stack takes, ACCEL_DST6_* bits (steer.h). */
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, ACCEL_DST6_MAX);
    __type(key, struct in6_addr);
    __type(value, __u32);
} accel_dst6 SEC(".maps");

/* Shared-address steering (steer.h): served ports, the stack's other
 * connections, its pending ARP requests. Empty unless accel_shared. */
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, ACCEL_LPORT_MAX);
    __type(key, struct accel_lport_key);
    __type(value, __u32);
} accel_lport SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_LRU_HASH);
    __uint(max_entries, ACCEL_FLOW4_MAX);
    __type(key, struct accel_flow4_key);
    __type(value, __u32);
} accel_flow4 SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_LRU_HASH);
    __uint(max_entries, ACCEL_ARP_MAX);
    __type(key, __u32);
    __type(value, __u64);
} accel_arp SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_LRU_HASH);
    __uint(max_entries, ACCEL_FLOW6_MAX);
    __type(key, struct accel_flow6_key);
    __type(value, __u32);
} accel_flow6 SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_LRU_HASH);
    __uint(max_entries, ACCEL_ND_MAX);
    __type(key, struct in6_addr);
    __type(value, __u64);
} accel_nd SEC(".maps");

/* Network byte order. The placeholders are found and replaced by
 * runtime/xdpprog.c (XP_*_MARK): keep them in sync. accel_shared: 1 when
 * the kernel has accel_ip too. accel_build: a hash of this object, so a
 * program left attached is adopted only by a process of the same build
 * (the program never reads it). */
volatile const __u32 accel_ip = 0x5A1ECCA1;
volatile const __u32 accel_bcast = 0x5B1ECCA1;
volatile const __u32 accel_shared = 0x5C1ECCA1;
volatile const __u32 accel_build = 0x5D1ECCA1;

struct arp_ipv4 {
    __be16 htype, ptype;
    __u8 hlen, plen;
    __be16 op;
    __u8 sha[6];
    __be32 spa;
    __u8 tha[6];
    __be32 tpa;
} __attribute__((packed));

/* A neighbour solicitation (RFC 4861 4.3), without its options. */
struct nd_sol {
    struct icmp6hdr icmp;
    struct in6_addr target;
};

/* The stack's side of a TCP or UDP datagram from the shared address's
 * point of view: its local port lp, the peer's address ra and port rp. */
static __always_inline int
served4(__u8 proto, __u32 ra, __u16 lp, __u16 rp)
{
    struct accel_lport_key pk = {.proto = proto, .port = lp};
    struct accel_flow4_key fk = {
        .raddr = ra, .lport = lp, .rport = rp, .proto = proto};

    if (bpf_map_lookup_elem(&accel_lport, &pk) != NULL)
        return 1;
    return bpf_map_lookup_elem(&accel_flow4, &fk) != NULL;
}

/* An IPv4 frame to the address the kernel and the stack share: the
 * stack's when it belongs to a port or a connection of the stack's
 * (ICMP errors by the datagram they quote), the kernel's otherwise.
 * Fragments are the kernel's: it reassembles them for the socket that
 * holds the port (every accelerated socket has one), which the
 * application also reads. */
static __noinline int
steer_shared4(struct xdp_md *ctx)
{
    void *data = (void *)(long)ctx->data;
    void *end = (void *)(long)ctx->data_end;
    const struct iphdr *ip = data + sizeof(struct ethhdr);
    const __u16 *l4;
    __u32 hl;

    if ((void *)(ip + 1) > end)
        return XDP_PASS;
    if ((ip->frag_off & bpf_htons(0x3fff)) != 0)
        return XDP_PASS;
    hl = (ip->ihl & 0xf) * 4u;
    if (hl < sizeof(*ip))
        return XDP_PASS;
    l4 = (const void *)ip + hl;
    if (ip->protocol == IPPROTO_TCP || ip->protocol == IPPROTO_UDP) {
        if ((void *)(l4 + 2) > end)
            return XDP_PASS;
        if (!served4(ip->protocol, ip->saddr, l4[1], l4[0]))
            return XDP_PASS;
        if (ip->protocol == IPPROTO_TCP) {
            int act = synck4(ctx);

            if (act >= 0)
                return act;
        }
    } else if (ip->protocol == IPPROTO_ICMP) {
        const struct icmphdr_min {
            __u8 type, code;
            __u16 csum;
            __u32 rest;
        } *ic = (const void *)l4;
        const struct iphdr *in = (const void *)(ic + 1);
        const __u16 *il4;

        /* destination unreachable, source quench, time exceeded,
         * parameter problem: about a datagram the stack sent? */
        if ((void *)(in + 1) > end || (ic->type != 3 && ic->type != 4 &&
                                       ic->type != 11 && ic->type != 12))
            return XDP_PASS;
        if (in->saddr != accel_ip || (in->ihl & 0xf) != 5 ||
            (in->protocol != IPPROTO_TCP && in->protocol != IPPROTO_UDP))
            return XDP_PASS;
        il4 = (const void *)(in + 1);
        if ((void *)(il4 + 2) > end ||
            !served4(in->protocol, in->daddr, il4[0], il4[1]))
            return XDP_PASS;
    } else {
        return XDP_PASS;
    }
    return bpf_redirect_map(&xsks_map, ctx->rx_queue_index, XDP_PASS);
}

/* ARP for the shared address: a reply to the stack's own pending request
 * goes to the stack (once), everything else to the kernel. */
static __noinline int
steer_shared_arp(struct xdp_md *ctx)
{
    void *data = (void *)(long)ctx->data;
    void *end = (void *)(long)ctx->data_end;
    const struct arp_ipv4 *a = data + sizeof(struct ethhdr);
    __u64 *deadline;
    __u32 spa;

    if ((void *)(a + 1) > end || a->op != bpf_htons(2))
        return XDP_PASS;
    spa = a->spa;
    deadline = bpf_map_lookup_elem(&accel_arp, &spa);
    if (deadline == NULL)
        return XDP_PASS;
    if (*deadline < bpf_ktime_get_ns()) {
        bpf_map_delete_elem(&accel_arp, &spa);
        return XDP_PASS;
    }
    bpf_map_delete_elem(&accel_arp, &spa);
    return bpf_redirect_map(&xsks_map, ctx->rx_queue_index, XDP_PASS);
}

/* Broadcast and multicast with a shared address: UDP to a port the stack
 * serves; IGMP and the rest stay the kernel's. */
static __noinline int
steer_shared_bcast(struct xdp_md *ctx)
{
    void *data = (void *)(long)ctx->data;
    void *end = (void *)(long)ctx->data_end;
    const struct iphdr *ip = data + sizeof(struct ethhdr);
    const __u16 *l4;
    struct accel_lport_key pk = {.proto = IPPROTO_UDP};

    if ((void *)(ip + 1) > end || ip->protocol != IPPROTO_UDP ||
        (ip->frag_off & bpf_htons(0x3fff)) != 0 || (ip->ihl & 0xf) != 5)
        return XDP_PASS;
    l4 = (const void *)(ip + 1);
    if ((void *)(l4 + 2) > end)
        return XDP_PASS;
    pk.port = l4[1];
    if (bpf_map_lookup_elem(&accel_lport, &pk) == NULL)
        return XDP_PASS;
    return bpf_redirect_map(&xsks_map, ctx->rx_queue_index, XDP_PASS);
}

/* The stack's side of an IPv6 TCP or UDP datagram on a shared address. */
static __always_inline int
served6(__u8 proto, const struct in6_addr *ra, __u16 lp, __u16 rp)
{
    struct accel_lport_key pk = {.proto = proto, .port = lp};
    struct accel_flow6_key fk = {.lport = lp, .rport = rp, .proto = proto};

    if (bpf_map_lookup_elem(&accel_lport, &pk) != NULL)
        return 1;
    __builtin_memcpy(fk.raddr, ra, 16);
    return bpf_map_lookup_elem(&accel_flow6, &fk) != NULL;
}

/* A frame to a shared IPv6 address (ACCEL_DST6_SHARED): the stack's when
 * it is TCP or UDP of its ports or connections, or an ICMPv6 error (packet
 * too big included) quoting one; the kernel's otherwise. Extension headers
 * send it to the kernel. */
static __noinline int
steer_shared6(struct xdp_md *ctx)
{
    void *data = (void *)(long)ctx->data;
    void *end = (void *)(long)ctx->data_end;
    const struct ipv6hdr *ip6 = data + sizeof(struct ethhdr);
    const __u16 *l4 = (const void *)(ip6 + 1);

    if ((void *)(l4 + 2) > end)
        return XDP_PASS;
    if (ip6->nexthdr == IPPROTO_TCP || ip6->nexthdr == IPPROTO_UDP) {
        if (!served6(ip6->nexthdr, &ip6->saddr, l4[1], l4[0]))
            return XDP_PASS;
        if (ip6->nexthdr == IPPROTO_TCP) {
            int act = synck6(ctx);

            if (act >= 0)
                return act;
        }
    } else if (ip6->nexthdr == IPPROTO_ICMPV6) {
        const struct icmp6hdr *ic = (const void *)l4;
        const struct ipv6hdr *in = (const void *)(ic + 1);
        const __u16 *il4 = (const void *)(in + 1);

        /* destination unreachable, packet too big, time exceeded,
         * parameter problem, about a datagram the stack sent */
        if (ic->icmp6_type < 1 || ic->icmp6_type > 4 ||
            (void *)(il4 + 2) > end ||
            (in->nexthdr != IPPROTO_TCP && in->nexthdr != IPPROTO_UDP) ||
            !served6(in->nexthdr, &in->daddr, il4[0], il4[1]))
            return XDP_PASS;
    } else {
        return XDP_PASS;
    }
    return bpf_redirect_map(&xsks_map, ctx->rx_queue_index, XDP_PASS);
}

/* A neighbour advertisement answering one of the stack's solicitations
 * (its target in accel_nd, before the deadline): once, to the stack. */
static __always_inline int
nd_answer(const struct nd_sol *na)
{
    struct in6_addr t = na->target;
    __u64 *deadline = bpf_map_lookup_elem(&accel_nd, &t);
    int mine;

    if (deadline == NULL)
        return 0;
    mine = *deadline >= bpf_ktime_get_ns();
    bpf_map_delete_elem(&accel_nd, &t);
    return mine;
}

/* An IPv6 frame: to the stack's XSK or to the kernel. A function of its
 * own (a BPF-to-BPF call), so its map lookups cost IPv4 frames nothing. */
static __noinline int
steer_ip6(struct xdp_md *ctx)
{
    void *data = (void *)(long)ctx->data;
    void *end = (void *)(long)ctx->data_end;
    const struct ipv6hdr *ip6 = data + sizeof(struct ethhdr);
    const struct nd_sol *ns = (const void *)(ip6 + 1);
    __u32 q = ctx->rx_queue_index;
    __u32 *kind, *tkind;
    int act, own = 0;

    if ((void *)(ip6 + 1) > end)
        return XDP_PASS;
    /* With a shared address the stack solicits from the link-local
     * address the kernel has too: the answers are told apart by target. */
    if (ip6->nexthdr == IPPROTO_ICMPV6 && (void *)(ns + 1) <= end &&
        ns->icmp.icmp6_type == 136 && nd_answer(ns))
        goto take;
    kind = bpf_map_lookup_elem(&accel_dst6, &ip6->daddr);
    if (kind == NULL)
        return XDP_PASS;
    if ((*kind & (ACCEL_DST6_OWN | ACCEL_DST6_GROUP)) != 0) {
        own = (*kind & ACCEL_DST6_OWN) != 0;
        goto take;
    }
    if ((*kind & ACCEL_DST6_SHARED) != 0)
        return steer_shared6(ctx);
    /* A solicited-node group: a solicitation for another target is the
     * kernel's (its address may share the low 24 bits). */
    if (ip6->nexthdr != IPPROTO_ICMPV6 || (void *)(ns + 1) > end ||
        ns->icmp.icmp6_type != 135)
        goto take;
    tkind = bpf_map_lookup_elem(&accel_dst6, &ns->target);
    if (tkind == NULL || (*tkind & ACCEL_DST6_OWN) == 0)
        return XDP_PASS;
take:
    if (own && ip6->nexthdr == IPPROTO_TCP) {
        act = synck6(ctx);
        if (act >= 0)
            return act;
        /* synck6 may have reloaded the frame's pointers */
        data = (void *)(long)ctx->data;
        end = (void *)(long)ctx->data_end;
        ip6 = data + sizeof(struct ethhdr);
        if ((void *)(ip6 + 1) > end)
            return XDP_PASS;
    }
    act = bpf_redirect_map(&xsks_map, q, XDP_PASS);
    /* No XSK on the queue: no process serves the address any more. */
    if (act != XDP_REDIRECT && own && ip6->nexthdr == IPPROTO_TCP)
        return reset6(ctx);
    return act;
}

SEC("xdp")
int
accel_steer(struct xdp_md *ctx)
{
    void *data = (void *)(long)ctx->data;
    void *end = (void *)(long)ctx->data_end;
    struct ethhdr *eth = data;
    int act, own_tcp4 = 0;

    if ((void *)(eth + 1) > end)
        return XDP_PASS;
    /* IPv4 first, and said to be likely, or clang tests the EtherTypes
     * in its own order. */
    if (__builtin_expect(eth->h_proto == bpf_htons(ETH_P_IP), 1)) {
        struct iphdr *ip = (void *)(eth + 1);
        __u32 d;

        if ((void *)(ip + 1) > end)
            return XDP_PASS;
        d = ip->daddr;
        if (d != accel_ip && d != accel_bcast && d != 0xffffffffu &&
            (bpf_ntohl(d) >> 28) != 0xe)
            return XDP_PASS;
        if (accel_shared)
            return d == accel_ip ? steer_shared4(ctx) : steer_shared_bcast(ctx);
        own_tcp4 = d == accel_ip && ip->protocol == IPPROTO_TCP;
        if (own_tcp4) {
            act = synck4(ctx);
            if (act >= 0)
                return act;
        }
    } else if (eth->h_proto == bpf_htons(ETH_P_ARP)) {
        struct arp_ipv4 *a = (void *)(eth + 1);

        if ((void *)(a + 1) > end || a->tpa != accel_ip)
            return XDP_PASS;
        if (accel_shared)
            return steer_shared_arp(ctx);
    } else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
        return steer_ip6(ctx);
    } else {
        return XDP_PASS;
    }
    act = bpf_redirect_map(&xsks_map, ctx->rx_queue_index, XDP_PASS);
    /* No XSK on the queue: no process serves the address any more. */
    if (act != XDP_REDIRECT && own_tcp4)
        return reset4(ctx);
    return act;
}

char _license[] SEC("license") = "Dual BSD/GPL";
