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
