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
 * load): runtime/xdpsteer.c patches their placeholder values in a copy of
 * this object before the af_xdp PMD loads it (devarg xdp_prog). The IPv6
 * map is filled by xdpsteer.c once the port is up, when the stack's MAC
 * (hence its link-local address) is known. The map must be called
 * xsks_map: the PMD inserts its XSKs there.
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

/* Network byte order. The placeholders are found and replaced by
 * runtime/xdpsteer.c (XS_IP_MARK, XS_BCAST_MARK): keep them in sync. */
volatile const __u32 accel_ip = 0x5A1ECCA1;
volatile const __u32 accel_bcast = 0x5B1ECCA1;

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

    if ((void *)(ip6 + 1) > end)
        return XDP_PASS;
    kind = bpf_map_lookup_elem(&accel_dst6, &ip6->daddr);
    if (kind == NULL)
        return XDP_PASS;
    if ((*kind & (ACCEL_DST6_OWN | ACCEL_DST6_GROUP)) != 0)
        goto take;
    /* A solicited-node group: a solicitation for another target is the
     * kernel's (its address may share the low 24 bits). */
    if (ip6->nexthdr != IPPROTO_ICMPV6 || (void *)(ns + 1) > end ||
        ns->icmp.icmp6_type != 135)
        goto take;
    tkind = bpf_map_lookup_elem(&accel_dst6, &ns->target);
    if (tkind == NULL || (*tkind & ACCEL_DST6_OWN) == 0)
        return XDP_PASS;
take:
    return bpf_redirect_map(&xsks_map, q, XDP_PASS);
}

SEC("xdp")
int
accel_steer(struct xdp_md *ctx)
{
    void *data = (void *)(long)ctx->data;
    void *end = (void *)(long)ctx->data_end;
    struct ethhdr *eth = data;

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
    } else if (eth->h_proto == bpf_htons(ETH_P_ARP)) {
        struct arp_ipv4 *a = (void *)(eth + 1);

        if ((void *)(a + 1) > end || a->tpa != accel_ip)
            return XDP_PASS;
    } else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
        return steer_ip6(ctx);
    } else {
        return XDP_PASS;
    }
    return bpf_redirect_map(&xsks_map, ctx->rx_queue_index, XDP_PASS);
}

char _license[] SEC("license") = "Dual BSD/GPL";
