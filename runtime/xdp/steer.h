/*
 * What accel's XDP program (steer.bpf.c) and its loader (xdpsteer.c) agree
 * on: the IPv6 destination map's name, size and value bits. Included by
 * both (the BPF side builds with clang -target bpf: plain C, no libc).
 */
#ifndef ACCEL_RT_XDP_STEER_H
#define ACCEL_RT_XDP_STEER_H

#include <linux/types.h>

/* Hash map: key a struct in6_addr (an IPv6 destination), value a __u32 of
 * the bits below. An address not in it stays with the kernel. */
#define ACCEL_DST6_MAP "accel_dst6"
#define ACCEL_DST6_MAX 256

/* One of the stack's unicast addresses (ACCEL_IP6, its link-local): every
 * frame to it, and neighbour solicitations whose target it is. */
#define ACCEL_DST6_OWN 0x1u
/* The solicited-node group of an OWN address (ff02::1:ffXX:XXXX): a
 * neighbour solicitation to it goes to the stack only when its target is
 * OWN (the kernel's addresses may share the group); other frames to it go
 * to the stack. */
#define ACCEL_DST6_SNM 0x2u
/* A group the stack takes whole: one its sockets joined (MLD), or ff02::1
 * when the kernel does not use IPv6 on the interface. */
#define ACCEL_DST6_GROUP 0x4u
/* An address the kernel has too (the interface's own, shared): frames to
 * it go to the stack only for its ports and connections (accel_lport,
 * accel_flow6) and ICMPv6 errors about them; neighbour discovery and the
 * rest stay the kernel's. */
#define ACCEL_DST6_SHARED 0x8u

/* Sharing the interface's own IPv4 address with the kernel (accel_shared
 * set at load): only what the stack serves goes to it. */

/* Hash map: a local port the stack serves (a listener, a bound UDP
 * socket): every TCP or UDP frame to the shared address and that port. */
#define ACCEL_LPORT_MAP "accel_lport"
#define ACCEL_LPORT_MAX 4096
struct accel_lport_key {
    __u8 proto; /* IPPROTO_TCP or IPPROTO_UDP */
    __u8 pad;
    __u16 port; /* network order */
};

/* LRU hash map: a connection of the stack's whose local port is not
 * served (an active open; connections left when their listener closed).
 * An LRU map: entries of a process killed before it removed them age out
 * instead of filling the map. */
#define ACCEL_FLOW4_MAP "accel_flow4"
#define ACCEL_FLOW4_MAX 65536
struct accel_flow4_key {
    __u32 raddr;        /* the peer's address, network order */
    __u16 lport, rport; /* network order */
    __u8 proto;
    __u8 pad[3];
};

/* LRU hash map: an IPv4 neighbour the stack asked for (ARP request); the
 * value is the deadline (CLOCK_MONOTONIC ns) of the request. The first
 * reply from it before the deadline goes to the stack and removes the
 * entry; every other ARP frame is the kernel's. */
#define ACCEL_ARP_MAP "accel_arp"
#define ACCEL_ARP_MAX 1024

/* LRU hash map: accel_flow4 for IPv6 connections to or from a shared
 * IPv6 address. */
#define ACCEL_FLOW6_MAP "accel_flow6"
#define ACCEL_FLOW6_MAX 16384
struct accel_flow6_key {
    __u8 raddr[16];     /* the peer's address */
    __u16 lport, rport; /* network order */
    __u8 proto;
    __u8 pad[3];
};

/* LRU hash map: accel_arp for IPv6: a target of the stack's neighbour
 * solicitations (key: the 16-byte address); the first neighbour
 * advertisement for it before the deadline goes to the stack. */
#define ACCEL_ND_MAP "accel_nd"
#define ACCEL_ND_MAX 1024

/* Hash map: a listener whose SYNs the program answers with SYN cookies
 * (synck.bpf.h) until the deadline, as the stack would with its backlog
 * full; key the local port (network order), value below. The stack asks
 * for it while SYNs find the backlog full (runtime/xdpsynck.c). */
#define ACCEL_SYNCK_MAP "accel_synck"
#define ACCEL_SYNCK_MAX 256
struct accel_synck {
    __u64 until_ns;   /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
    __u64 key[2];     /* the ISN's secret (stack/isn.c) */
    __u16 mss4, mss6; /* the SYN-ACK's MSS option per family */
    __u16 wnd;        /* its window, host order */
    __u8 wscale;      /* its window scale option */
    __u8 pad;
};

/* Per-CPU array of one __u64: the SYN cookies the program sent. */
#define ACCEL_SYNCK_SENT_MAP "accel_synck_n"

#endif /* ACCEL_RT_XDP_STEER_H */
