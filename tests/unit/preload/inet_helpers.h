// IPv4 and IPv6 helpers shared by the preload unit tests (decide_test,
// rules_test).
#ifndef ACCEL_TEST_INET_HELPERS_H
#define ACCEL_TEST_INET_HELPERS_H

#include <arpa/inet.h>
#include <netinet/in.h>

#include "decide.h"

// A dotted quad in network order.
inline uint32_t
ip(const char *s)
{
    in_addr a{};
    inet_pton(AF_INET, s, &a);
    return a.s_addr;
}

inline sockaddr_in
sin(const char *addr, uint16_t port)
{
    sockaddr_in s{};
    s.sin_family = AF_INET;
    s.sin_port = htons(port);
    s.sin_addr.s_addr = ip(addr);
    return s;
}

inline sockaddr_in6
sin6(const char *addr, uint16_t port)
{
    sockaddr_in6 s{};
    s.sin6_family = AF_INET6;
    s.sin6_port = htons(port);
    inet_pton(AF_INET6, addr, &s.sin6_addr);
    return s;
}

// An IPv4-only pl_net.
inline pl_net
net4(uint32_t addr, uint32_t mask, uint32_t gw)
{
    pl_net n{};
    n.ip = addr;
    n.mask = mask;
    n.gw = gw;
    return n;
}

// The lab's stack: 10.200.0.2/24, no gateway.
inline const pl_net kNet = net4(ip("10.200.0.2"), ip("255.255.255.0"), 0);

#endif
