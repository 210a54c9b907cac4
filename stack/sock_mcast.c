/*
 * IPv4 multicast on UDP sockets, with Linux's semantics (net/ipv4/igmp.c
 * and ip_sockglue.c): IP_ADD_MEMBERSHIP / IP_DROP_MEMBERSHIP (ip_mreq or
 * ip_mreqn), the source-specific IP_ADD_SOURCE_MEMBERSHIP,
 * IP_DROP_SOURCE_MEMBERSHIP, IP_BLOCK_SOURCE, IP_UNBLOCK_SOURCE
 * (ip_mreq_source), IP_MULTICAST_IF (in_addr, ip_mreq or ip_mreqn),
 * IP_MULTICAST_TTL, IP_MULTICAST_LOOP, IP_MULTICAST_ALL, and the
 * protocol-independent MCAST_JOIN_GROUP family for IPv4 groups, with
 * Linux's defaults (TTL 1, loop on, all on), limits (20 groups per socket, 10
 * sources per group) and errno.
 *
 * The stack has one interface: a membership names it by INADDR_ANY, by
 * the stack's address or by the kernel's index of the port's interface
 * (stk_set_ifindex); anything else is ENODEV as for an unknown device.
 *
 * Each socket keeps its memberships; the interface joins a group (lwIP's
 * IGMPv2: a report on join, a leave when the last member goes) through
 * igmp_joingroup, which counts the sockets per group. Source filters are
 * applied where a datagram is delivered (sock_udp.c): a socket with a
 * membership by its own filter, a socket without one (IP_MULTICAST_ALL)
 * by the interface's, which takes a source when some member's filter
 * does (RFC 3376's interface state, as Linux's ip_check_mc_rcu). lwIP's
 * IGMPv2 cannot carry sources, so the group is reported as a whole
 * (Linux sends IGMPv3 reports with the sources).
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "lwip/igmp.h"
#include "lwip/mld6.h"
#include "lwip/netif.h"
#include "lwip/udp.h"

#include "stk_priv.h"

#define MC_MAX_GROUPS 20 /* net.ipv4.igmp_max_memberships */
#define MC_MAX_SRC 10    /* net.ipv4.igmp_max_msf */
#define MC_ALLHOSTS 0xe0000001u

struct mc_group {
    ip_addr_t group; /* IPv4 or IPv6 */
    bool include;    /* filter mode: MCAST_INCLUDE, else MCAST_EXCLUDE */
    bool sflist;     /* a source list exists (Linux pmc->sflist) */
    uint8_t nsrc;
    ip_addr_t src[MC_MAX_SRC];
};

struct stk_mcast {
    uint8_t ttl;
    bool loop, all;
    uint8_t hops6;    /* IPV6_MULTICAST_HOPS (default 1) */
    bool loop6;       /* IPV6_MULTICAST_LOOP (default on) */
    int if6;          /* IPV6_MULTICAST_IF: an ifindex, 0 none */
    uint32_t if_addr; /* IP_MULTICAST_IF as given */
    int if_index;
    uint8_t n;
    struct mc_group g[MC_MAX_GROUPS];
};

static bool
is_mcast(uint32_t a)
{
    return (ntohl(a) >> 28) == 0xe;
}

static struct stk_mcast *
mc_get(struct stk_sock *s)
{
    if (s->mc == NULL) {
        s->mc = calloc(1, sizeof(*s->mc));
        if (s->mc == NULL)
            return NULL;
        s->mc->ttl = 1;
        s->mc->loop = true;
        s->mc->all = true;
        s->mc->hops6 = 1;
        s->mc->loop6 = true;
    }
    return s->mc;
}

void
stk__mc_apply_pcb(struct stk_sock *s)
{
    struct udp_pcb *pcb = s->pcb.udp;
    bool loop = s->mc ? s->mc->loop : true;

    if (pcb == NULL)
        return;
    udp_set_multicast_ttl(pcb, s->mc ? s->mc->ttl : 1);
    if (loop)
        udp_set_flags(pcb, UDP_FLAGS_MULTICAST_LOOP);
    else
        udp_clear_flags(pcb, UDP_FLAGS_MULTICAST_LOOP);
}

void
stk__mc_for_dest(struct stk_sock *s, const ip_addr_t *dst)
{
    struct udp_pcb *pcb = s->pcb.udp;
    bool v6 = IP_IS_V6(dst);
    bool loop = s->mc ? (v6 ? s->mc->loop6 : s->mc->loop) : true;

    if (pcb == NULL || !s->inet6)
        return; /* an AF_INET socket's pcb has its options already */
    udp_set_multicast_ttl(pcb, s->mc ? (v6 ? s->mc->hops6 : s->mc->ttl) : 1);
    if (loop)
        udp_set_flags(pcb, UDP_FLAGS_MULTICAST_LOOP);
    else
        udp_clear_flags(pcb, UDP_FLAGS_MULTICAST_LOOP);
    pcb->ttl = v6 ? stk__hops6(s) : UDP_TTL;
    pcb->tos = v6 ? s->tclass : 0;
}

/* Linux's ip_mc_find_dev for our single interface: by index, else by
 * address, else the route to the group (always this interface). */
static bool
our_if(uint32_t addr, int ifindex)
{
    if (ifindex != 0)
        return ifindex == stk_ifindex() && stk_ifindex() != 0;
    return addr == 0 || stk__is_local_ip(addr);
}

static struct mc_group *
find(struct stk_mcast *m, const ip_addr_t *group)
{
    if (m == NULL)
        return NULL;
    for (int i = 0; i < m->n; i++)
        if (ip_addr_cmp(&m->g[i].group, group))
            return &m->g[i];
    return NULL;
}

/* The interface joins or leaves group: IGMP for IPv4, MLD for IPv6; each
 * counts its sockets, reporting the first join and the last leave. */
static int
iface_join(const ip_addr_t *group, bool join)
{
    err_t e;

    if (IP_IS_V6(group)) {
        struct netif *nif = netif_default;

        if (ip6_addr_isallnodes_linklocal(ip_2_ip6(group)))
            return 0; /* always a member */
        e = join ? mld6_joingroup_netif(nif, ip_2_ip6(group))
                 : mld6_leavegroup_netif(nif, ip_2_ip6(group));
    } else {
        if (ntohl(ip4_addr_get_u32(ip_2_ip4(group))) == MC_ALLHOSTS)
            return 0; /* the interface is always a member (lwIP refuses) */
        e = join ? igmp_joingroup(IP4_ADDR_ANY4, ip_2_ip4(group))
                 : igmp_leavegroup(IP4_ADDR_ANY4, ip_2_ip4(group));
    }
    if (e == ERR_MEM)
        return -ENOBUFS;
    return e == ERR_OK ? 0 : -EINVAL;
}

static bool
group_ok(const ip_addr_t *group)
{
    if (IP_IS_V6(group))
        return ip6_addr_ismulticast(ip_2_ip6(group));
    return is_mcast(ip4_addr_get_u32(ip_2_ip4(group)));
}

/* __ip_mc_join_group / ipv6_sock_mc_join (if_ok: the interface named is
 * ours) */
static int
join_group(struct stk_sock *s, const ip_addr_t *group, bool if_ok, bool include)
{
    struct stk_mcast *m;
    struct mc_group *g;
    int rc;

    if (!group_ok(group))
        return -EINVAL;
    if (!if_ok)
        return -ENODEV;
    if (find(s->mc, group) != NULL)
        return -EADDRINUSE;
    if ((m = mc_get(s)) == NULL)
        return -ENOBUFS;
    if (m->n >= MC_MAX_GROUPS)
        return -ENOBUFS;
    if ((rc = iface_join(group, true)) < 0)
        return rc;
    g = &m->g[m->n++];
    memset(g, 0, sizeof(*g));
    ip_addr_copy(g->group, *group);
    g->include = include;
    return 0;
}

static int
join(struct stk_sock *s, uint32_t group, uint32_t ifaddr, int ifindex,
     bool include)
{
    ip_addr_t g;

    ip_addr_set_ip4_u32_val(g, group);
    if (!is_mcast(group))
        return -EINVAL;
    return join_group(s, &g, our_if(ifaddr, ifindex), include);
}

static void
remove_group(struct stk_mcast *m, struct mc_group *g)
{
    iface_join(&g->group, false);
    *g = m->g[--m->n];
}

static int
leave_group(struct stk_sock *s, const ip_addr_t *group, bool if_ok)
{
    struct mc_group *g;

    /* An unknown interface matches no membership (the ENODEV case of
     * Linux needs no interface at all for the group's route). */
    if (!if_ok)
        return -EADDRNOTAVAIL;
    g = find(s->mc, group);
    if (g == NULL)
        return -EADDRNOTAVAIL;
    remove_group(s->mc, g);
    return 0;
}

/* ip_mc_leave_group */
static int
leave(struct stk_sock *s, uint32_t group, uint32_t ifaddr, int ifindex)
{
    ip_addr_t g;

    ip_addr_set_ip4_u32_val(g, group);
    return leave_group(s, &g, our_if(ifaddr, ifindex));
}

/* ip_mc_source (ifindex: the MCAST_* options name the interface so) */
static int
source(struct stk_sock *s, bool add, bool include,
       const struct ip_mreq_source *r, int ifindex)
{
    ip_addr_t src, grp;
    struct mc_group *g;
    int i;

    ip_addr_set_ip4_u32_val(src, r->imr_sourceaddr.s_addr);
    ip_addr_set_ip4_u32_val(grp, r->imr_multiaddr.s_addr);
    if (!is_mcast(r->imr_multiaddr.s_addr))
        return -EINVAL;
    if (!our_if(r->imr_interface.s_addr, ifindex))
        return -ENODEV;
    g = find(s->mc, &grp);
    if (g == NULL)
        return -EINVAL; /* must have a prior join */
    if (g->sflist) {
        if (g->include != include)
            return -EINVAL;
    } else {
        g->include = include; /* mode switches for empty filters */
    }
    for (i = 0; i < g->nsrc && !ip_addr_cmp(&g->src[i], &src); i++)
        ;
    if (!add) {
        if (i == g->nsrc)
            return -EADDRNOTAVAIL;
        /* (INCLUDE, empty) is leaving the group */
        if (g->nsrc == 1 && include)
            return leave(s, r->imr_multiaddr.s_addr, r->imr_interface.s_addr,
                         ifindex);
        g->src[i] = g->src[--g->nsrc];
        return 0;
    }
    if (g->sflist && g->nsrc >= MC_MAX_SRC)
        return -ENOBUFS;
    if (i < g->nsrc)
        return -EADDRNOTAVAIL; /* already there */
    g->sflist = true;
    g->src[g->nsrc++] = src;
    return 0;
}

int
stk__mc_filter(const struct stk_sock *s, const ip_addr_t *group,
               const ip_addr_t *src)
{
    const struct mc_group *g = find(s->mc, group);
    bool listed = false;

    if (g == NULL)
        return -1;
    for (int i = 0; i < g->nsrc; i++)
        listed |= ip_addr_cmp(&g->src[i], src);
    return g->include ? listed : !listed;
}

bool
stk__mc_all(const struct stk_sock *s)
{
    return s->mc == NULL || s->mc->all; /* IP_MULTICAST_ALL defaults to 1 */
}

void
stk__mc_close(struct stk_sock *s)
{
    if (s->mc == NULL)
        return;
    while (s->mc->n > 0)
        remove_group(s->mc, &s->mc->g[s->mc->n - 1]);
    free(s->mc);
    s->mc = NULL;
}

/* IP_MULTICAST_IF: in_addr, ip_mreq (its second address) or ip_mreqn. */
static int
set_if(struct stk_sock *s, const void *val, socklen_t len)
{
    struct ip_mreqn r;
    struct stk_mcast *m;

    if (val == NULL || len < (socklen_t)sizeof(struct in_addr))
        return -EINVAL;
    memset(&r, 0, sizeof(r));
    if (len >= (socklen_t)sizeof(struct ip_mreqn))
        memcpy(&r, val, sizeof(r));
    else if (len >= (socklen_t)sizeof(struct ip_mreq))
        memcpy(&r, val, sizeof(struct ip_mreq));
    else
        memcpy(&r.imr_address, val, sizeof(struct in_addr));
    if (r.imr_ifindex == 0 && r.imr_address.s_addr == 0) {
        if (s->mc != NULL) {
            s->mc->if_addr = 0;
            s->mc->if_index = 0;
        }
        return 0;
    }
    if (!our_if(r.imr_address.s_addr, r.imr_ifindex))
        return -EADDRNOTAVAIL;
    if ((m = mc_get(s)) == NULL)
        return -ENOMEM;
    m->if_addr = r.imr_address.s_addr;
    m->if_index = r.imr_ifindex != 0 ? r.imr_ifindex : stk_ifindex();
    return 0;
}

/* The protocol-independent API (RFC 3678), IPv4 groups only:
 * ip_mcast_join_leave and do_mcast_group_source. */
static int
set_group(struct stk_sock *s, int name, const void *val, socklen_t len)
{
    struct group_req g;
    struct sockaddr_in sin;

    if (val == NULL || len < (socklen_t)sizeof(g))
        return -EINVAL;
    memcpy(&g, val, sizeof(g));
    memcpy(&sin, &g.gr_group, sizeof(sin));
    if (sin.sin_family != AF_INET)
        return -EINVAL;
    if (name == MCAST_JOIN_GROUP)
        return join(s, sin.sin_addr.s_addr, 0, (int)g.gr_interface, false);
    return leave(s, sin.sin_addr.s_addr, 0, (int)g.gr_interface);
}

static int
set_group_source(struct stk_sock *s, int name, const void *val, socklen_t len)
{
    struct group_source_req g;
    struct sockaddr_in grp, src;
    struct ip_mreq_source r;
    int ifindex, rc;

    if (val == NULL || len != (socklen_t)sizeof(g))
        return -EINVAL;
    memcpy(&g, val, sizeof(g));
    memcpy(&grp, &g.gsr_group, sizeof(grp));
    memcpy(&src, &g.gsr_source, sizeof(src));
    if (grp.sin_family != AF_INET || src.sin_family != AF_INET)
        return -EADDRNOTAVAIL;
    memset(&r, 0, sizeof(r));
    r.imr_multiaddr = grp.sin_addr;
    r.imr_sourceaddr = src.sin_addr;
    ifindex = (int)g.gsr_interface;
    if (name == MCAST_JOIN_SOURCE_GROUP) {
        rc = join(s, grp.sin_addr.s_addr, 0, ifindex, true);
        if (rc < 0 && rc != -EADDRINUSE)
            return rc;
    }
    return source(
        s, name == MCAST_JOIN_SOURCE_GROUP || name == MCAST_BLOCK_SOURCE,
        name == MCAST_JOIN_SOURCE_GROUP || name == MCAST_LEAVE_SOURCE_GROUP, &r,
        ifindex);
}

int
stk__mc_setsockopt(struct stk_sock *s, int name, const void *val, socklen_t len)
{
    struct ip_mreq_source rs;
    struct ip_mreqn r;
    struct stk_mcast *m;
    int v, rc;

    if (s->type != SOCK_DGRAM)
        return -ENOPROTOOPT;
    switch (name) {
    case IP_MULTICAST_TTL:
    case IP_MULTICAST_LOOP:
    case IP_MULTICAST_ALL:
        if (len < 1) /* these have no meaning without a value */
            return -EINVAL;
        if ((rc = stk__opt_get_small(val, len, &v)) < 0)
            return rc;
        if (name == IP_MULTICAST_TTL && v == -1)
            v = 1;
        if (name == IP_MULTICAST_TTL && (v < 0 || v > 255))
            return -EINVAL;
        if (name == IP_MULTICAST_ALL && v != 0 && v != 1)
            return -EINVAL;
        if ((m = mc_get(s)) == NULL)
            return -ENOMEM;
        if (name == IP_MULTICAST_TTL)
            m->ttl = (uint8_t)v;
        else if (name == IP_MULTICAST_LOOP)
            m->loop = v != 0;
        else
            m->all = v != 0;
        stk__mc_apply_pcb(s);
        return 0;
    case IP_MULTICAST_IF:
        return set_if(s, val, len);
    case IP_ADD_MEMBERSHIP:
    case IP_DROP_MEMBERSHIP:
        if (val == NULL || len < (socklen_t)sizeof(struct ip_mreq))
            return -EINVAL;
        memset(&r, 0, sizeof(r));
        memcpy(&r, val,
               len >= (socklen_t)sizeof(r) ? sizeof(r)
                                           : sizeof(struct ip_mreq));
        if (name == IP_ADD_MEMBERSHIP)
            return join(s, r.imr_multiaddr.s_addr, r.imr_address.s_addr,
                        r.imr_ifindex, false);
        return leave(s, r.imr_multiaddr.s_addr, r.imr_address.s_addr,
                     r.imr_ifindex);
    case IP_ADD_SOURCE_MEMBERSHIP:
    case IP_DROP_SOURCE_MEMBERSHIP:
    case IP_BLOCK_SOURCE:
    case IP_UNBLOCK_SOURCE:
        if (val == NULL || len != (socklen_t)sizeof(rs))
            return -EINVAL;
        memcpy(&rs, val, sizeof(rs));
        if (name == IP_ADD_SOURCE_MEMBERSHIP) {
            rc = join(s, rs.imr_multiaddr.s_addr, rs.imr_interface.s_addr, 0,
                      true);
            if (rc < 0 && rc != -EADDRINUSE)
                return rc;
        }
        return source(
            s, name == IP_ADD_SOURCE_MEMBERSHIP || name == IP_BLOCK_SOURCE,
            name == IP_ADD_SOURCE_MEMBERSHIP ||
                name == IP_DROP_SOURCE_MEMBERSHIP,
            &rs, 0);
    case MCAST_JOIN_GROUP:
    case MCAST_LEAVE_GROUP:
        return set_group(s, name, val, len);
    case MCAST_JOIN_SOURCE_GROUP:
    case MCAST_LEAVE_SOURCE_GROUP:
    case MCAST_BLOCK_SOURCE:
    case MCAST_UNBLOCK_SOURCE:
        return set_group_source(s, name, val, len);
    default:
        return -ENOPROTOOPT;
    }
}

/* ---- IPv6 (net/ipv6/ipv6_sockglue.c, mcast.c) -------------------------- */

/* The interface an IPv6 membership names: 0 (the route: ours) or our
 * kernel ifindex. */
static bool
our_if6(int ifindex)
{
    return ifindex == 0 || (ifindex == stk_ifindex() && stk_ifindex() != 0);
}

static int
join6(struct stk_sock *s, const struct in6_addr *a, int ifindex, bool join)
{
    ip_addr_t g;

    stk__ip_from_in6(&g, a);
    if (!IP_IS_V6(&g) || !ip6_addr_ismulticast(ip_2_ip6(&g)))
        return -EINVAL;
    if (join)
        return join_group(s, &g, our_if6(ifindex), false);
    return leave_group(s, &g, our_if6(ifindex));
}

int
stk__mc6_setsockopt(struct stk_sock *s, int name, const void *val,
                    socklen_t len)
{
    struct ipv6_mreq r;
    struct stk_mcast *m;
    int v;

    if (s->type != SOCK_DGRAM)
        return -ENOPROTOOPT;
    switch (name) {
    case IPV6_JOIN_GROUP:
    case IPV6_LEAVE_GROUP:
        if (val == NULL || len < (socklen_t)sizeof(r))
            return -EINVAL;
        memcpy(&r, val, sizeof(r));
        return join6(s, &r.ipv6mr_multiaddr, (int)r.ipv6mr_interface,
                     name == IPV6_JOIN_GROUP);
    case MCAST_JOIN_GROUP:
    case MCAST_LEAVE_GROUP: {
        struct group_req g;
        struct sockaddr_in6 sin6;

        if (val == NULL || len < (socklen_t)sizeof(g))
            return -EINVAL;
        memcpy(&g, val, sizeof(g));
        memcpy(&sin6, &g.gr_group, sizeof(sin6));
        if (sin6.sin6_family != AF_INET6)
            return -EINVAL;
        return join6(s, &sin6.sin6_addr, (int)g.gr_interface,
                     name == MCAST_JOIN_GROUP);
    }
    case IPV6_MULTICAST_HOPS:
    case IPV6_MULTICAST_LOOP:
    case IPV6_MULTICAST_IF:
        if (val == NULL || len < (socklen_t)sizeof(int))
            return -EINVAL;
        memcpy(&v, val, sizeof(v));
        if (name == IPV6_MULTICAST_HOPS && (v < -1 || v > 255))
            return -EINVAL;
        if (name == IPV6_MULTICAST_LOOP && v != 0 && v != 1)
            return -EINVAL;
        if (name == IPV6_MULTICAST_IF && !our_if6(v))
            return -ENODEV;
        if ((m = mc_get(s)) == NULL)
            return -ENOMEM;
        if (name == IPV6_MULTICAST_HOPS)
            m->hops6 = (uint8_t)(v == -1 ? 1 : v);
        else if (name == IPV6_MULTICAST_LOOP)
            m->loop6 = v != 0;
        else
            m->if6 = v;
        return 0;
    default:
        return -ENOPROTOOPT;
    }
}

int
stk__mc6_getsockopt(struct stk_sock *s, int name, void *val, socklen_t *len)
{
    const struct stk_mcast *m = s->mc;
    int v;

    if (s->type != SOCK_DGRAM)
        return -ENOPROTOOPT;
    switch (name) {
    case IPV6_MULTICAST_HOPS:
        v = m ? m->hops6 : 1;
        break;
    case IPV6_MULTICAST_LOOP:
        v = m ? m->loop6 : 1;
        break;
    case IPV6_MULTICAST_IF:
        v = m ? m->if6 : 0;
        break;
    default:
        return -ENOPROTOOPT;
    }
    if (val == NULL || len == NULL || *len < (socklen_t)sizeof(int))
        return -EINVAL;
    memcpy(val, &v, sizeof(v));
    *len = sizeof(v);
    return 0;
}

int
stk__mc_getsockopt(struct stk_sock *s, int name, void *val, socklen_t *len)
{
    const struct stk_mcast *m = s->mc;
    uint32_t a;

    if (s->type != SOCK_DGRAM)
        return -ENOPROTOOPT;
    switch (name) {
    case IP_MULTICAST_TTL:
        return stk__opt_put_small(val, len, m ? m->ttl : 1);
    case IP_MULTICAST_LOOP:
        return stk__opt_put_small(val, len, m ? m->loop : 1);
    case IP_MULTICAST_ALL:
        return stk__opt_put_small(val, len, m ? m->all : 1);
    case IP_MULTICAST_IF:
        if (val == NULL || len == NULL || (int)*len < 0)
            return -EINVAL;
        a = m ? m->if_addr : 0;
        if (*len > (socklen_t)sizeof(a))
            *len = sizeof(a);
        memcpy(val, &a, (size_t)*len);
        return 0;
    default:
        return -ENOPROTOOPT;
    }
}
