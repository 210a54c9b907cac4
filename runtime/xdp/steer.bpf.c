/*
 * accel's XDP program for af_xdp ports: only the frames the stack needs go
 * to the XSK; everything else goes on to the kernel (XDP_PASS).
 *
 * Sent to the stack (bpf_redirect_map on the receiving queue's XSK):
 *   - IPv4 to ACCEL_IP, to the subnet's broadcast, to 255.255.255.255, and
 *     IPv4 multicast (224.0.0.0/4: the stack's groups and IGMP queries);
 *   - ARP whose target address is ACCEL_IP (requests for it, replies to
 *     the stack's own requests).
 * Everything else, the kernel's own addresses, IPv6, ARP for other
 * addresses, LLDP and the rest, is passed to the kernel as if no program
 * were attached. With DPDK's default program every frame of the queue
 * would go to the XSK and the kernel would lose the interface.
 *
 * The two addresses are `volatile const` globals (.rodata, frozen at load):
 * runtime/xdpsteer.c patches their placeholder values in a copy of this
 * object before the af_xdp PMD loads it (devarg xdp_prog). The map must be
 * called xsks_map: the PMD inserts its XSKs there.
 *
 * Built with clang -target bpf; the object is embedded in libaccel.so.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>

#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

struct {
    __uint(type, BPF_MAP_TYPE_XSKMAP);
    __uint(max_entries, 64);
    __type(key, __u32);
    __type(value, __u32);
} xsks_map SEC(".maps");

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

SEC("xdp")
int
accel_steer(struct xdp_md *ctx)
{
    void *data = (void *)(long)ctx->data;
    void *end = (void *)(long)ctx->data_end;
    struct ethhdr *eth = data;

    if ((void *)(eth + 1) > end)
        return XDP_PASS;
    if (eth->h_proto == bpf_htons(ETH_P_IP)) {
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
    } else {
        return XDP_PASS;
    }
    return bpf_redirect_map(&xsks_map, ctx->rx_queue_index, XDP_PASS);
}

char _license[] SEC("license") = "Dual BSD/GPL";
