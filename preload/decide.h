/*
 * Where a socket goes, decided from the address of bind/connect/sendto.
 * Pure functions of their arguments (no config or stack access), so the
 * rules are unit-tested directly. Addresses are network byte order.
 */
#ifndef ACCEL_PL_DECIDE_H
#define ACCEL_PL_DECIDE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#ifdef __cplusplus
extern "C" {
#endif

enum pl_route {
    PL_ROUTE_PASS,      /* not an AF_INET address: the kernel validates it,
                           the decision is not taken */
    PL_ROUTE_KERNEL,    /* stays on the kernel for good */
    PL_ROUTE_ACCEL,     /* accelerate (bind: our own address) */
    PL_ROUTE_ACCEL_ANY, /* bind only: INADDR_ANY, accelerate and also bind
                           the kernel socket so loopback clients work */
};

/** The stack's addressing, from the configuration. */
struct pl_net {
    uint32_t ip, mask, gw; /* network order; gw 0 = no gateway */
};

/** True when addr is reachable through the accelerated interface: on
 *  its subnet, anywhere via the gateway, or a multicast group; never
 *  0.0.0.0, 127/8 or the limited broadcast. */
bool pl_addr_routable(uint32_t addr, const struct pl_net *net);

/** Decision for bind(addr). A multicast group accelerates (for UDP;
 *  the caller keeps TCP on the kernel). */
enum pl_route pl_route_bind(const struct sockaddr *addr, socklen_t len,
                            const struct pl_net *net);

/** Decision for connect(addr) / sendto(addr) on an undecided socket:
 *  DNS (port 53) and unroutable destinations stay on the kernel. */
enum pl_route pl_route_connect(const struct sockaddr *addr, socklen_t len,
                               const struct pl_net *net);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_PL_DECIDE_H */
