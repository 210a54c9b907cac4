/*
 * Socket addresses: what the application passes to bind, connect and
 * sendto, read as Linux reads it, and the names the stack gives back.
 *
 * The stack keeps addresses as lwIP's ip_addr_t. An AF_INET socket sees
 * sockaddr_in and IPv4 only (net/ipv4/af_inet.c). An AF_INET6 socket sees
 * sockaddr_in6 (net/ipv6/af_inet6.c inet6_bind/inet6_getname, tcp_ipv6.c
 * tcp_v6_connect, datagram.c ip6_datagram_connect, udp.c udpv6_sendmsg):
 * an IPv4-mapped address ::ffff:a.b.c.d stands for IPv4 traffic and is
 * kept as the IPv4 address (so the pcb talks IPv4), `::` bound by a
 * socket that is not v6only is IPADDR_TYPE_ANY (a pcb of both families),
 * and names of IPv4 peers and locals come back mapped. Each operation
 * checks in Linux's order, so the errno is Linux's.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>

#include "stk_priv.h"

#define SIN6_LEN_RFC2133 24 /* sockaddr_in6 without sin6_scope_id */

void
stk__ip_to_in6(const ip_addr_t *ip, struct in6_addr *a)
{
    memset(a, 0, sizeof(*a));
    if (IP_IS_V6(ip)) {
        memcpy(a->s6_addr, ip_2_ip6(ip)->addr, 16);
    } else if (IP_IS_V4(ip)) {
        a->s6_addr[10] = 0xff;
        a->s6_addr[11] = 0xff;
        memcpy(&a->s6_addr[12], &ip_2_ip4(ip)->addr, 4);
    } /* IPADDR_TYPE_ANY: `::` */
}

static bool
in6_mapped(const struct in6_addr *a)
{
    static const uint8_t pfx[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

    return memcmp(a->s6_addr, pfx, sizeof(pfx)) == 0;
}

void
stk__ip_from_in6(ip_addr_t *ip, const struct in6_addr *a)
{
    if (in6_mapped(a)) {
        uint32_t v4;

        memcpy(&v4, &a->s6_addr[12], 4);
        ip_addr_set_ip4_u32_val(*ip, v4);
        return;
    }
    memset(ip, 0, sizeof(*ip));
    memcpy(ip_2_ip6(ip)->addr, a->s6_addr, 16);
    IP_SET_TYPE_VAL(*ip, IPADDR_TYPE_V6);
}

bool
stk__addr_overlap(const ip_addr_t *a, const ip_addr_t *b)
{
    if (IP_IS_ANY_TYPE_VAL(*a) || IP_IS_ANY_TYPE_VAL(*b))
        return true; /* a dual `::` covers both families */
    if (IP_GET_TYPE(a) != IP_GET_TYPE(b))
        return false;
    return ip_addr_isany(a) || ip_addr_isany(b) || ip_addr_cmp(a, b);
}

/* An AF_INET socket, or the IPv4 side of an AF_INET6 one: a sockaddr_in
 * (udp_sendmsg takes AF_UNSPEC as AF_INET). */
static int
in4(const struct sockaddr *addr, socklen_t len, enum stk_addr_op op,
    ip_addr_t *ip, uint16_t *port)
{
    const struct sockaddr_in *sin = (const struct sockaddr_in *)addr;

    if (addr == NULL || len < (socklen_t)sizeof(struct sockaddr_in))
        return -EINVAL;
    if (sin->sin_family != AF_INET &&
        !(op == STK_ADDR_SENDTO && sin->sin_family == AF_UNSPEC))
        return -EAFNOSUPPORT;
    ip_addr_set_ip4_u32_val(*ip, sin->sin_addr.s_addr);
    *port = ntohs(sin->sin_port);
    return 0;
}

/* A link-local (or link-scoped multicast) address names its interface:
 * the one the scope id gives, or the one the socket is bound to. Linux:
 * EINVAL without any, or for a scope other than the bound one. */
static int
scope_check(const struct stk_sock *s, const struct in6_addr *a, uint32_t sc)
{
    bool ll = IN6_IS_ADDR_LINKLOCAL(a) || IN6_IS_ADDR_MC_LINKLOCAL(a);

    if (!ll)
        return 0;
    if (sc != 0 && s->scope != 0 && sc != s->scope)
        return -EINVAL;
    if (sc == 0 && s->scope == 0)
        return -EINVAL;
    return 0;
}

int
stk__addr_in(const struct stk_sock *s, const struct sockaddr *addr,
             socklen_t len, enum stk_addr_op op, ip_addr_t *ip, uint16_t *port,
             uint32_t *scope)
{
    const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)addr;
    struct in6_addr a;
    bool mapped, any;
    int rc;

    *scope = 0;
    if (!s->inet6)
        return in4(addr, len, op, ip, port);
    if (addr == NULL)
        return -EINVAL;
    if (op == STK_ADDR_SENDTO) {
        if (len < (socklen_t)offsetof(struct sockaddr, sa_data))
            return -EINVAL;
        if (addr->sa_family == AF_UNSPEC)
            return 1;                   /* no name: the connected peer */
        if (addr->sa_family == AF_INET) /* udpv6_sendmsg: do_udp_sendmsg */
            return s->v6only ? -ENETUNREACH : in4(addr, len, op, ip, port);
        if (addr->sa_family != AF_INET6)
            return -EINVAL;
        if (len < SIN6_LEN_RFC2133)
            return -EINVAL;
    } else if (op == STK_ADDR_CONNECT_UDP &&
               len >= (socklen_t)sizeof(sa_family_t) &&
               addr->sa_family == AF_INET) {
        /* ip6_datagram_connect hands a sockaddr_in to the IPv4 code. */
        if (s->v6only)
            return -EAFNOSUPPORT;
        return in4(addr, len, op, ip, port);
    } else {
        if (len < SIN6_LEN_RFC2133)
            return -EINVAL;
        if (sin6->sin6_family != AF_INET6)
            return -EAFNOSUPPORT;
    }
    memcpy(&a, &sin6->sin6_addr, sizeof(a));
    *port = ntohs(sin6->sin6_port);
    if (len >= (socklen_t)sizeof(struct sockaddr_in6))
        *scope = sin6->sin6_scope_id;
    mapped = IN6_IS_ADDR_V4MAPPED(&a);
    any = IN6_IS_ADDR_UNSPECIFIED(&a);
    if (op == STK_ADDR_BIND) {
        if (IN6_IS_ADDR_MULTICAST(&a) && s->type == SOCK_STREAM)
            return -EINVAL;
        if (mapped) {
            if (s->v6only)
                return -EINVAL;
        } else if (any) {
            if (s->v6only)
                ip_addr_set_any_val(1, *ip);
            else
                ip_addr_copy(*ip, *IP_ANY_TYPE);
            return 0;
        } else if (IN6_IS_ADDR_LINKLOCAL(&a) || IN6_IS_ADDR_MC_LINKLOCAL(&a)) {
            /* inet6_bind: the scope id binds the interface; none: EINVAL;
             * another interface than ours has not this address. */
            if (*scope == 0)
                return -EINVAL;
            if (stk_ifindex() != 0 && *scope != (uint32_t)stk_ifindex())
                return -EADDRNOTAVAIL;
        }
        stk__ip_from_in6(ip, &a);
        return 0;
    }
    /* connect, sendto: `::` is loopback (tcp_v6_connect and the others),
     * never this netif's; the preload keeps loopback on the kernel. */
    if (any)
        return -ENETUNREACH;
    if (mapped) {
        if (s->v6only)
            return -ENETUNREACH;
        stk__ip_from_in6(ip, &a);
        return 0;
    }
    if (IN6_IS_ADDR_MULTICAST(&a) && op == STK_ADDR_CONNECT_TCP)
        return -ENETUNREACH;
    if (op != STK_ADDR_SENDTO && (rc = scope_check(s, &a, *scope)) < 0)
        return rc;
    stk__ip_from_in6(ip, &a);
    return 0;
}

void
stk__addr_out(const struct stk_sock *s, const ip_addr_t *ip, uint16_t port,
              struct sockaddr *addr, socklen_t *len)
{
    struct sockaddr_storage ss;
    size_t n;

    if (addr == NULL || len == NULL)
        return;
    memset(&ss, 0, sizeof(ss));
    if (!s->inet6) {
        struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

        sin->sin_family = AF_INET;
        sin->sin_addr.s_addr = IP_IS_V4(ip) ? ip_2_ip4(ip)->addr : 0;
        sin->sin_port = htons(port);
        n = sizeof(*sin);
    } else {
        struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

        sin6->sin6_family = AF_INET6;
        sin6->sin6_port = htons(port);
        stk__ip_to_in6(ip, &sin6->sin6_addr);
        if (IP_IS_V6(ip) && (IN6_IS_ADDR_LINKLOCAL(&sin6->sin6_addr) ||
                             IN6_IS_ADDR_MC_LINKLOCAL(&sin6->sin6_addr)))
            sin6->sin6_scope_id = (uint32_t)stk_ifindex();
        n = sizeof(*sin6);
    }
    memcpy(addr, &ss, *len < (socklen_t)n ? (size_t)*len : n);
    *len = (socklen_t)n;
}
