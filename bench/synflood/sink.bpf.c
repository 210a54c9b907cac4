/*
 * The lab's sink for the answers to the flood's spoofed sources
 * (bench/synflood/run.sh), attached to accel-k's veth: IPv4 TCP to an
 * address in SINK_FIRST..SINK_LAST (host order, given with -D) is dropped
 * there, as the spoofed hosts' absence would; everything else passes.
 * An XDP program on the kernel peer's end, rather than an nftables rule
 * at its ingress, because a veth delivers another program's XDP_TX frames
 * (accel's SYN cookies answered in its XDP program) only to a peer that
 * has an XDP program of its own: a NIC would put them on the wire.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>

#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int
sink(struct xdp_md *ctx)
{
    void *data = (void *)(long)ctx->data;
    void *end = (void *)(long)ctx->data_end;
    struct ethhdr *eth = data;
    struct iphdr *ip = (void *)(eth + 1);
    __u32 d;

    if ((void *)(ip + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP) ||
        ip->protocol != IPPROTO_TCP)
        return XDP_PASS;
    d = bpf_ntohl(ip->daddr);
    return d >= SINK_FIRST && d <= SINK_LAST ? XDP_DROP : XDP_PASS;
}

char _license[] SEC("license") = "GPL";
