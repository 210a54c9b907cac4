/*
 * Turning a received frame around in place into the answer to it (sent
 * back with XDP_TX): the addresses swapped, a fresh IPv4 or IPv6 header,
 * the TCP checksum. Shared by the program's two answers, the RST for a
 * segment nobody serves (reset.bpf.h) and the SYN cookie for a flooded
 * listener (synck.bpf.h). Included by those only.
 */
#ifndef ACCEL_XDP_TURN_BPF_H
#define ACCEL_XDP_TURN_BPF_H

#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>

#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define TURN_TTL 64 /* Linux's and the stack's (IP_DEFAULT_TTL) */

static __always_inline __u16
csum_fold(__u32 s)
{
    s = (s & 0xffff) + (s >> 16);
    s = (s & 0xffff) + (s >> 16);
    return (__u16)~s;
}

static __always_inline void
swap_mac(struct ethhdr *eth)
{
    __u8 t[ETH_ALEN];

    __builtin_memcpy(t, eth->h_dest, ETH_ALEN);
    __builtin_memcpy(eth->h_dest, eth->h_source, ETH_ALEN);
    __builtin_memcpy(eth->h_source, t, ETH_ALEN);
}

/* eth and ip (no options) turned around for an answer carrying l4len
 * bytes of TCP: DF, IP id 0, TTL 64, header checksum. */
static __always_inline void
turn4(struct ethhdr *eth, struct iphdr *ip, __u32 l4len)
{
    __u32 addr = ip->saddr;

    swap_mac(eth);
    ip->saddr = ip->daddr;
    ip->daddr = addr;
    ip->tos = 0;
    ip->tot_len = bpf_htons(sizeof(*ip) + l4len);
    ip->id = 0;
    ip->frag_off = bpf_htons(0x4000); /* DF */
    ip->ttl = TURN_TTL;
    ip->check = 0;
    ip->check = csum_fold(bpf_csum_diff(NULL, 0, (__be32 *)ip, sizeof(*ip), 0));
}

/* The same for IPv6: traffic class and flow label 0, hop limit 64. */
static __always_inline void
turn6(struct ethhdr *eth, struct ipv6hdr *ip6, __u32 l4len)
{
    struct in6_addr addr = ip6->saddr;

    swap_mac(eth);
    ip6->saddr = ip6->daddr;
    ip6->daddr = addr;
    *(__be32 *)ip6 = bpf_htonl(0x60000000); /* version 6 */
    ip6->payload_len = bpf_htons(l4len);
    ip6->nexthdr = IPPROTO_TCP;
    ip6->hop_limit = TURN_TTL;
}

/* tcp's checksum (len bytes: header and options, a multiple of 4, all
 * within the frame) under ip's pseudo-header. */
static __always_inline void
tcp_csum4(const struct iphdr *ip, struct tcphdr *tcp, __u32 len)
{
    struct {
        __be32 saddr, daddr;
        __u8 zero, proto;
        __be16 len;
    } ph = {.saddr = ip->saddr,
            .daddr = ip->daddr,
            .proto = IPPROTO_TCP,
            .len = bpf_htons(len)};
    __u32 s = bpf_csum_diff(NULL, 0, (__be32 *)&ph, sizeof(ph), 0);

    tcp->check = 0;
    s = bpf_csum_diff(NULL, 0, (__be32 *)tcp, len, s);
    tcp->check = csum_fold(s);
}

static __always_inline void
tcp_csum6(const struct ipv6hdr *ip6, struct tcphdr *tcp, __u32 len)
{
    struct {
        struct in6_addr saddr, daddr;
        __be32 len;
        __u8 zero[3], nh;
    } ph = {.saddr = ip6->saddr,
            .daddr = ip6->daddr,
            .len = bpf_htonl(len),
            .nh = IPPROTO_TCP};
    __u32 s = bpf_csum_diff(NULL, 0, (__be32 *)&ph, sizeof(ph), 0);

    tcp->check = 0;
    s = bpf_csum_diff(NULL, 0, (__be32 *)tcp, len, s);
    tcp->check = csum_fold(s);
}

#endif /* ACCEL_XDP_TURN_BPF_H */
