/*
 * The acceleration decision (docs/DESIGN.md "File descriptors"): bind to
 * INADDR_ANY, to the stack's own address or to a multicast group
 * accelerates, bind to anything else (loopback, another local address)
 * stays on the kernel; connect or sendto to an address routable through
 * the interface (multicast groups included) accelerates, except
 * DNS (port 53), which always stays on the kernel so resolvers keep using
 * the host's configuration. Non-AF_INET or short addresses are left to the
 * kernel to validate, without deciding.
 */
#include "decide.h"

#include <netinet/in.h>
#include <stddef.h>
#include <string.h>

bool
pl_addr_routable(uint32_t addr, const struct pl_net *net)
{
    uint32_t h = ntohl(addr);

    if (net->ip == 0)
        return false;
    if (h == 0 || (h >> 24) == 127 || h == 0xffffffffu)
        return false;
    if ((h >> 28) == 0xe)
        return true; /* a multicast group: sent on the interface */
    if ((addr & net->mask) == (net->ip & net->mask))
        return true;
    return net->gw != 0;
}

static const struct sockaddr_in *
as_inet(const struct sockaddr *addr, socklen_t len)
{
    if (addr == NULL || len < sizeof(struct sockaddr_in) ||
        addr->sa_family != AF_INET)
        return NULL;
    return (const struct sockaddr_in *)addr;
}

enum pl_route
pl_route_bind(const struct sockaddr *addr, socklen_t len,
              const struct pl_net *net)
{
    const struct sockaddr_in *sin = as_inet(addr, len);

    if (sin == NULL)
        return PL_ROUTE_PASS;
    if (sin->sin_addr.s_addr == htonl(INADDR_ANY))
        return net->ip != 0 ? PL_ROUTE_ACCEL_ANY : PL_ROUTE_KERNEL;
    if (net->ip != 0 && sin->sin_addr.s_addr == net->ip)
        return PL_ROUTE_ACCEL;
    /* A receiver bound to its group (239.1.1.1:5000) */
    if (net->ip != 0 && (ntohl(sin->sin_addr.s_addr) >> 28) == 0xe)
        return PL_ROUTE_ACCEL;
    return PL_ROUTE_KERNEL;
}

enum pl_route
pl_route_connect(const struct sockaddr *addr, socklen_t len,
                 const struct pl_net *net)
{
    const struct sockaddr_in *sin = as_inet(addr, len);

    if (sin == NULL)
        return PL_ROUTE_PASS;
    if (sin->sin_port == htons(53))
        return PL_ROUTE_KERNEL;
    if (!pl_addr_routable(sin->sin_addr.s_addr, net))
        return PL_ROUTE_KERNEL;
    return PL_ROUTE_ACCEL;
}

/* ---- AF_INET6 sockets: Linux's inet6_bind, tcp_v6_connect,
 * ip6_datagram_connect and udpv6_sendmsg take these forms. */

#define SIN6_LEN_RFC2133 24 /* sockaddr_in6 without sin6_scope_id */

enum pl_in6
pl_in6_view(const struct sockaddr *a, socklen_t len, bool v6only, bool dgram,
            struct sockaddr_in *v4)
{
    struct sockaddr_in6 s6;
    const uint8_t *b;

    if (a == NULL)
        return PL_IN6_ASIS;
    if (len < (socklen_t)offsetof(struct sockaddr, sa_data))
        return PL_IN6_BAD;
    if (a->sa_family == AF_UNSPEC)
        return PL_IN6_ASIS;
    if (a->sa_family == AF_INET) {
        if (!dgram || v6only || len < (socklen_t)sizeof(*v4))
            return PL_IN6_BAD;
        memcpy(v4, a, sizeof(*v4));
        return PL_IN6_V4;
    }
    if (a->sa_family != AF_INET6 || len < SIN6_LEN_RFC2133)
        return PL_IN6_BAD;
    memset(&s6, 0, sizeof(s6));
    memcpy(&s6, a, SIN6_LEN_RFC2133);
    b = s6.sin6_addr.s6_addr;
    memset(v4, 0, sizeof(*v4));
    v4->sin_family = AF_INET;
    v4->sin_port = s6.sin6_port;
    if (IN6_IS_ADDR_V4MAPPED(&s6.sin6_addr)) {
        if (v6only)
            return PL_IN6_BAD;
        memcpy(&v4->sin_addr, b + 12, 4);
        return PL_IN6_V4;
    }
    if (IN6_IS_ADDR_UNSPECIFIED(&s6.sin6_addr))
        return v6only ? PL_IN6_NATIVE : PL_IN6_V4;
    return PL_IN6_NATIVE;
}

/* a and b agree on their first len bits */
static bool
prefix_eq(const struct in6_addr *a, const struct in6_addr *b, unsigned len)
{
    unsigned full = len / 8, rest = len % 8;

    if (memcmp(a->s6_addr, b->s6_addr, full) != 0)
        return false;
    return rest == 0 || ((a->s6_addr[full] ^ b->s6_addr[full]) &
                         (uint8_t)(0xff << (8 - rest))) == 0;
}

/* fe80::/10 on the stack's interface: Linux needs the scope id */
static bool
link_local_ours(const struct sockaddr_in6 *a, const struct pl_net *net)
{
    return a->sin6_scope_id != 0 && a->sin6_scope_id == net->ifindex;
}

enum pl_route
pl_route_bind6(const struct sockaddr_in6 *a, const struct pl_net *net)
{
    const struct in6_addr *ad = &a->sin6_addr;

    if (!net->has6)
        return PL_ROUTE_KERNEL;
    if (IN6_IS_ADDR_UNSPECIFIED(ad))
        return PL_ROUTE_ACCEL_ANY;
    if (IN6_ARE_ADDR_EQUAL(ad, &net->ip6))
        return PL_ROUTE_ACCEL;
    if (IN6_IS_ADDR_LINKLOCAL(ad))
        return IN6_ARE_ADDR_EQUAL(ad, &net->ll6) && link_local_ours(a, net)
                   ? PL_ROUTE_ACCEL
                   : PL_ROUTE_KERNEL;
    if (IN6_IS_ADDR_MULTICAST(ad))
        return PL_ROUTE_ACCEL;
    return PL_ROUTE_KERNEL;
}

enum pl_route
pl_route_connect6(const struct sockaddr_in6 *a, const struct pl_net *net)
{
    const struct in6_addr *ad = &a->sin6_addr;

    if (!net->has6 || a->sin6_port == htons(53))
        return PL_ROUTE_KERNEL;
    if (IN6_IS_ADDR_UNSPECIFIED(ad) || IN6_IS_ADDR_LOOPBACK(ad) ||
        IN6_IS_ADDR_V4MAPPED(ad))
        return PL_ROUTE_KERNEL;
    if (IN6_IS_ADDR_LINKLOCAL(ad) || IN6_IS_ADDR_MC_LINKLOCAL(ad))
        return link_local_ours(a, net) ? PL_ROUTE_ACCEL : PL_ROUTE_KERNEL;
    if (IN6_IS_ADDR_MULTICAST(ad))
        return IN6_IS_ADDR_MC_NODELOCAL(ad) ? PL_ROUTE_KERNEL : PL_ROUTE_ACCEL;
    if (IN6_IS_ADDR_SITELOCAL(ad) || IN6_ARE_ADDR_EQUAL(ad, &net->ip6))
        return PL_ROUTE_KERNEL; /* deprecated fec0::/10; ourselves */
    if (prefix_eq(ad, &net->ip6, net->prefix6))
        return PL_ROUTE_ACCEL;
    return net->has_gw6 ? PL_ROUTE_ACCEL : PL_ROUTE_KERNEL;
}
