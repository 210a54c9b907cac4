/*
 * xdpsteer6.c: the IPv6 destinations accel's XDP program hands to the
 * stack (its map accel_dst6, runtime/xdp/steer.h). Runtime-internal; the
 * stack reaches rt__xdp_steer_group6 only through what the runtime gives
 * stk_init. Return convention: 0 or -errno.
 */
#ifndef ACCEL_RT_XDPSTEER6_H
#define ACCEL_RT_XDPSTEER6_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The link-local address fe80::/64 + modified EUI-64 of mac (RFC 4291
 *  appendix A; lwIP's netif_create_ip6_linklocal_address(netif, 1)). */
void rt__xdp_ip6_linklocal(const uint8_t mac[6], struct in6_addr *out);
/** The solicited-node group ff02::1:ffXX:XXXX of a (RFC 4291 2.7.1). */
void rt__xdp_ip6_solicited(const struct in6_addr *a, struct in6_addr *out);

/** One entry of the map: an address and its ACCEL_DST6_* bits. */
struct rt__xdp_dst6 {
    struct in6_addr addr;
    uint32_t kind;
};
#define RT_XDP_DST6_BASE 5

/** The entries the map starts with: ip6 (OWN), ll (OWN, unless NULL),
 *  their solicited-node groups (SNM; one entry when they share it), and
 *  ff02::1 (GROUP) when allnodes. Returns how many (<= RT_XDP_DST6_BASE). */
size_t rt__xdp_steer_dst6(const struct in6_addr *ip6, const struct in6_addr *ll,
                          bool allnodes,
                          struct rt__xdp_dst6 out[RT_XDP_DST6_BASE]);

/** Once the af_xdp port with accel's program is up on iface: fill the map
 *  for ACCEL_IP6 ip6 and the link-local address of mac (the stack's MAC),
 *  ff02::1 to the stack when the kernel has IPv6 off on iface; or, shared
 *  (the kernel has ip6 too), ip6 alone as ACCEL_DST6_SHARED. 0 or
 *  -errno (-ENOENT: no program of ours there); IPv6 then stays with the
 *  kernel. */
int rt__xdp_steer_setup6(const char *iface, const uint8_t mac[6],
                         const struct in6_addr *ip6, bool shared);

/** Take (join true) or release the frames to IPv6 multicast group (16
 *  bytes, network order) for the stack: call it at a group's first join
 *  and last leave on the port (lwIP's netif mld_mac_filter does exactly
 *  that), with the stack lock held. ff02::1 and the solicited-node groups
 *  of the stack's addresses are fixed at setup and ignored here. 0 (also
 *  when the port has no steering program, which takes every frame
 *  anyway), -EINVAL (not multicast) or -errno of the map update. */
int rt__xdp_steer_group6(const uint8_t group[16], bool join);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_RT_XDPSTEER6_H */
