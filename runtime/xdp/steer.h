/*
 * What accel's XDP program (steer.bpf.c) and its loader (xdpsteer.c) agree
 * on: the IPv6 destination map's name, size and value bits. Included by
 * both (the BPF side builds with clang -target bpf: plain C, no libc).
 */
#ifndef ACCEL_RT_XDP_STEER_H
#define ACCEL_RT_XDP_STEER_H

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

#endif /* ACCEL_RT_XDP_STEER_H */
