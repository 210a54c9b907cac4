/*
 * The answer for a TCP segment to the stack's own address when no process
 * serves the interface's queue any more (its XSK left xsks_map: the
 * process, or the last one of its fork family, exited or was killed):
 * the RST Linux sends for a segment nobody listens for (RFC 9293 3.10.7.1,
 * tcp_v4_send_reset / tcp_v6_send_reset): to a segment with ACK, a bare
 * RST at that acknowledgement number; to one without, RST|ACK at sequence
 * 0 acknowledging all it occupied. No options, window 0, TTL / hop limit
 * 64; a RST is never answered. The frame is turned around in place and
 * sent back on the interface (XDP_TX), so the peers of a killed process
 * learn at their next segment, as they would from a kernel socket's
 * death, instead of retransmitting for minutes to an address nobody
 * answers. With an address the kernel shares, the kernel answers itself
 * (the frame is passed to it).
 *
 * Included by steer.bpf.c only.
 */
#ifndef ACCEL_XDP_RESET_BPF_H
#define ACCEL_XDP_RESET_BPF_H

#include "turn.bpf.h"

/* Turn tcp, the header of a segment that occupied len sequence numbers
 * (data, SYN, FIN), into the RST answering it; the checksum is left 0. */
static __always_inline void
rst_header(struct tcphdr *tcp, __u32 len)
{
    __u16 port = tcp->source;
    __u32 seq = tcp->seq;
    int had_ack = tcp->ack;

    tcp->source = tcp->dest;
    tcp->dest = port;
    *((__u8 *)tcp + 12) = 5 << 4; /* data offset 5, no options */
    *((__u8 *)tcp + 13) = 0;      /* flags, set below */
    tcp->rst = 1;
    if (had_ack) {
        tcp->seq = tcp->ack_seq;
        tcp->ack_seq = 0;
    } else {
        tcp->seq = 0;
        tcp->ack_seq = bpf_htonl(bpf_ntohl(seq) + len);
        tcp->ack = 1;
    }
    tcp->window = 0;
    tcp->check = 0;
    tcp->urg_ptr = 0;
}

/* Sequence numbers a segment occupies: its data, SYN and FIN. */
static __always_inline __u32
seg_len(const struct tcphdr *tcp, __u32 l4len)
{
    __u32 hl = (__u32)tcp->doff * 4;

    return (l4len > hl ? l4len - hl : 0) + tcp->syn + tcp->fin;
}

static __noinline int
reset4(struct xdp_md *ctx)
{
    void *data = (void *)(long)ctx->data;
    void *end = (void *)(long)ctx->data_end;
    struct ethhdr *eth = data;
    struct iphdr *ip = (void *)(eth + 1);
    struct tcphdr *tcp = (void *)(ip + 1);
    __u32 l4len;
    int delta;

    if ((void *)(tcp + 1) > end || ip->ihl != 5 ||
        ip->protocol != IPPROTO_TCP ||
        (ip->frag_off & bpf_htons(0x3fff)) != 0 || tcp->rst)
        return XDP_PASS;
    l4len = bpf_ntohs(ip->tot_len);
    if (l4len < sizeof(*ip) + sizeof(*tcp))
        return XDP_PASS;
    l4len -= sizeof(*ip);
    turn4(eth, ip, sizeof(*tcp));
    rst_header(tcp, seg_len(tcp, l4len));
    tcp_csum4(ip, tcp, sizeof(*tcp));
    delta =
        (int)(sizeof(*eth) + sizeof(*ip) + sizeof(*tcp)) - (int)(end - data);
    if (delta < 0 && bpf_xdp_adjust_tail(ctx, delta) != 0)
        return XDP_DROP;
    return XDP_TX;
}

static __noinline int
reset6(struct xdp_md *ctx)
{
    void *data = (void *)(long)ctx->data;
    void *end = (void *)(long)ctx->data_end;
    struct ethhdr *eth = data;
    struct ipv6hdr *ip6 = (void *)(eth + 1);
    struct tcphdr *tcp = (void *)(ip6 + 1);
    __u32 l4len;
    int delta;

    if ((void *)(tcp + 1) > end || ip6->nexthdr != IPPROTO_TCP || tcp->rst)
        return XDP_PASS;
    /* Never to a multicast source (it cannot be one: RFC 4291 2.7). */
    if (ip6->saddr.in6_u.u6_addr8[0] == 0xff)
        return XDP_PASS;
    l4len = bpf_ntohs(ip6->payload_len);
    if (l4len < sizeof(*tcp))
        return XDP_PASS;
    turn6(eth, ip6, sizeof(*tcp));
    rst_header(tcp, seg_len(tcp, l4len));
    tcp_csum6(ip6, tcp, sizeof(*tcp));
    delta =
        (int)(sizeof(*eth) + sizeof(*ip6) + sizeof(*tcp)) - (int)(end - data);
    if (delta < 0 && bpf_xdp_adjust_tail(ctx, delta) != 0)
        return XDP_DROP;
    return XDP_TX;
}

#endif /* ACCEL_XDP_RESET_BPF_H */
