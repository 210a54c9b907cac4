/*
 * Where a socket goes, decided from the address of bind/connect/sendto.
 * Pure functions of their arguments (no config or stack access), so the
 * rules are unit-tested directly. Addresses are network byte order.
 */
#ifndef ACCEL_PL_DECIDE_H
#define ACCEL_PL_DECIDE_H

#include <stdbool.h>
#include <stdint.h>
#include <netinet/in.h>
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
    /* IPv6 (ACCEL_IP6, ACCEL_GATEWAY6); has6 false: the stack has none */
    bool has6, has_gw6;
    uint8_t prefix6;
    struct in6_addr ip6, gw6;
    struct in6_addr ll6; /* the netif's link-local address (fe80::EUI-64) */
    uint32_t ifindex;    /* the interface's index: link-local scope ids */
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

/* ---- AF_INET6 sockets --------------------------------------------------- */

/** What an address given to an AF_INET6 socket is, for the stack. */
enum pl_in6 {
    PL_IN6_V4,     /* an IPv4 address, in *v4: ::ffff:a.b.c.d, :: on a
                      dual-stack socket (0.0.0.0), or a sockaddr_in that
                      Linux takes on a dual-stack datagram socket */
    PL_IN6_NATIVE, /* a native IPv6 address (::1 and link-local included),
                      or :: on an IPV6_V6ONLY socket */
    PL_IN6_BAD,    /* Linux refuses it (family, length, a mapped address on
                      an IPV6_V6ONLY socket): the kernel socket answers */
    PL_IN6_ASIS,   /* no address or AF_UNSPEC: used as given */
};

/** Decision for bind(a) of a native IPv6 address (PL_IN6_NATIVE, or `::`
 *  of any socket): `::` accelerates with its kernel side, the stack's own
 *  addresses (the link-local one with the interface's scope id) and
 *  multicast groups accelerate; loopback and other addresses stay on the
 *  kernel, and so does everything when the stack has no IPv6 address. */
enum pl_route pl_route_bind6(const struct sockaddr_in6 *a,
                             const struct pl_net *net);

/** Decision for connect(a)/sendto(a) to a native IPv6 address: on the
 *  stack's prefix, link-local on its interface (scope id), multicast, or
 *  anywhere via ACCEL_GATEWAY6 accelerates; DNS (port 53), `::`,
 *  loopback and anything without an IPv6 address on the stack stay on the
 *  kernel. */
enum pl_route pl_route_connect6(const struct sockaddr_in6 *a,
                                const struct pl_net *net);

/** The IPv4 view of the address a (length len) given to an AF_INET6
 *  socket: v6only is its IPV6_V6ONLY, dgram true for UDP (whose connect
 *  and sendto take a sockaddr_in too). */
enum pl_in6 pl_in6_view(const struct sockaddr *a, socklen_t len, bool v6only,
                        bool dgram, struct sockaddr_in *v4);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_PL_DECIDE_H */
