/*
 * accel-broker's decisions (policy.h). No system calls here.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "policy.h"
#include "xdp/steer.h"

#define ABP_MAX_QUEUES 64 /* the program's xsks_map */

static int
refuse(int err, char *why, size_t n, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
    return -err;
}

int
abp_authorise(const struct abp_conf *c, uid_t uid, gid_t gid,
              const gid_t *groups, int ngroups, char *why, size_t n)
{
    if (uid == 0 || gid == c->group)
        return 0;
    for (int i = 0; i < ngroups; i++)
        if (groups[i] == c->group)
            return 0;
    return refuse(EPERM, why, n,
                  "user %u is not in group %s; add it (usermod -aG %s USER, "
                  "then restart the service) or run the program without "
                  "accel",
                  (unsigned)uid, c->group_name, c->group_name);
}

int
abp_check_frame(const struct ab_req *q, size_t len, char *why, size_t n)
{
    if (len != sizeof(*q) || q->magic != AB_MAGIC)
        return refuse(EPROTO, why, n, "malformed request");
    if (q->version != AB_VERSION || q->size != sizeof(*q))
        return refuse(EPROTONOSUPPORT, why, n,
                      "the library and accel-broker are different builds; "
                      "restart accel-broker from the installed package");
    if (q->op < AB_HELLO || q->op > AB_UMEM_REG)
        return refuse(EPROTO, why, n, "unknown request %u", q->op);
    return 0;
}

static bool
kernel_has4(const struct abp_kernel_addrs *k, uint32_t ip)
{
    for (int i = 0; i < k->n4; i++)
        if (k->v4[i] == ip)
            return true;
    return false;
}

static bool
kernel_has6(const struct abp_kernel_addrs *k, const struct in6_addr *a)
{
    for (int i = 0; i < k->n6; i++)
        if (memcmp(&k->v6[i], a, sizeof(*a)) == 0)
            return true;
    return false;
}

static bool
mask_ok(uint32_t mask_host)
{
    /* Contiguous, /8 to /32. */
    return (mask_host & 0xff000000u) == 0xff000000u &&
           ((~mask_host + 1) & ~mask_host) == 0;
}

int
abp_check_hello(const struct abp_conf *c, const struct ab_hello *h,
                const struct abp_kernel_addrs *k, bool on_iface, char *why,
                size_t n)
{
    uint32_t ip = ntohl(h->ip), mask = ntohl(h->mask);
    char a[INET_ADDRSTRLEN];
    bool served = false;

    if (memchr(h->iface, '\0', sizeof(h->iface)) == NULL || h->iface[0] == 0)
        return refuse(EINVAL, why, n, "malformed interface name");
    for (int i = 0; i < c->nifaces; i++)
        if (strcmp(c->ifaces[i], h->iface) == 0)
            served = true;
    if (!served)
        return refuse(EPERM, why, n,
                      "accel-broker does not serve interface %s (its "
                      "--iface list); start it with --iface %s",
                      h->iface, h->iface);
    inet_ntop(AF_INET, &h->ip, a, sizeof(a));
    if (!mask_ok(mask))
        return refuse(EINVAL, why, n, "netmask of %s is not /8../32", a);
    if (ip == 0 || (ip >> 24) == 127 || (ip >> 28) >= 0xe ||
        (mask != 0xffffffffu && ((ip & ~mask) == ~mask || (ip & ~mask) == 0)))
        return refuse(EINVAL, why, n,
                      "%s is not a unicast host address of its subnet", a);
    /* The kernel's address on this interface is shared (ports checked
     * one by one); on another one it would be taken from it. */
    if (kernel_has4(k, h->ip) && !on_iface)
        return refuse(EADDRINUSE, why, n,
                      "%s is an address of the kernel on another interface "
                      "of this network namespace; give the stack an "
                      "address of its own (ACCEL_IP)",
                      a);
    if (h->queues < 1 || h->queues > ABP_MAX_QUEUES)
        return refuse(EINVAL, why, n, "queue count %u not in 1..%d", h->queues,
                      ABP_MAX_QUEUES);
    if (h->umem_bytes > c->memlock_max)
        return refuse(ENOMEM, why, n,
                      "the port's memory (%llu MB) is above accel-broker's "
                      "--memlock-max-mb %llu; lower ACCEL_MEM_MB",
                      (unsigned long long)(h->umem_bytes >> 20),
                      (unsigned long long)(c->memlock_max >> 20));
    return 0;
}

/* ff02::1:ffXX:XXXX */
static bool
is_solicited_node(const struct in6_addr *a)
{
    static const uint8_t pfx[13] = {0xff, 0x02, 0, 0, 0, 0,   0,
                                    0,    0,    0, 0, 1, 0xff};

    return memcmp(a->s6_addr, pfx, sizeof(pfx)) == 0;
}

static bool
is_all_nodes(const struct in6_addr *a)
{
    static const uint8_t all[16] = {0xff, 0x02, 0, 0, 0, 0, 0, 0,
                                    0,    0,    0, 0, 0, 0, 0, 1};

    return memcmp(a->s6_addr, all, sizeof(all)) == 0;
}

/* The kernel has a link-local address: IPv6 on at least one link. */
static bool
kernel_has_ll6(const struct abp_kernel_addrs *k)
{
    for (int i = 0; i < k->n6; i++)
        if (IN6_IS_ADDR_LINKLOCAL(&k->v6[i]))
            return true;
    return false;
}

/* The port maps of the shared address: where their keys say the protocol
 * and the local port. */
static const struct {
    const char *map;
    uint32_t klen;
    size_t proto_at, port_at;
} port_maps[] = {
    {ACCEL_LPORT_MAP, sizeof(struct accel_lport_key),
     offsetof(struct accel_lport_key, proto),
     offsetof(struct accel_lport_key, port)},
    {ACCEL_FLOW4_MAP, sizeof(struct accel_flow4_key),
     offsetof(struct accel_flow4_key, proto),
     offsetof(struct accel_flow4_key, lport)},
    {ACCEL_FLOW6_MAP, sizeof(struct accel_flow6_key),
     offsetof(struct accel_flow6_key, proto),
     offsetof(struct accel_flow6_key, lport)},
};

/* accel_arp (an IPv4 target) or accel_nd (an IPv6 one); the value is the
 * deadline, which the broker writes itself. */
static int
check_neighbour(const struct ab_steer *s, const struct abp_steer_ctx *x,
                char *why, size_t n)
{
    bool arp = strcmp(s->map, ACCEL_ARP_MAP) == 0;
    uint32_t ip;

    if (s->klen != (arp ? 4u : 16u) || s->vlen != sizeof(uint64_t))
        return refuse(EINVAL, why, n, "bad key or value size for %s", s->map);
    if (s->op == AB_STEER_DEL)
        return 0;
    if (arp) {
        memcpy(&ip, s->key, 4);
        if ((ip & x->mask) != (x->ip & x->mask) || ip == x->ip)
            return refuse(EPERM, why, n,
                          "an ARP request of the stack is for a neighbour in "
                          "its subnet");
    } else if (s->key[0] == 0xff) {
        return refuse(EINVAL, why, n,
                      "a neighbour solicitation's target is unicast");
    }
    return 0;
}

/* The shared-address maps: key and value sizes, and for an addition what
 * the entry must prove. */
static int
check_shared_map(const struct ab_steer *s, const struct abp_steer_ctx *x,
                 char *why, size_t n)
{
    size_t i = 0;
    uint16_t port;
    int proto, rc;

    if (!x->shared)
        return refuse(EPERM, why, n,
                      "map %.31s is for a stack sharing the kernel's address",
                      s->map);
    while (i < sizeof(port_maps) / sizeof(port_maps[0]) &&
           strcmp(s->map, port_maps[i].map) != 0)
        i++;
    if (i == sizeof(port_maps) / sizeof(port_maps[0]))
        return check_neighbour(s, x, why, n);
    if (s->klen != port_maps[i].klen || s->vlen != sizeof(uint32_t))
        return refuse(EINVAL, why, n, "bad key or value size for %s", s->map);
    if (s->op == AB_STEER_DEL)
        return 0;
    proto = s->key[port_maps[i].proto_at];
    memcpy(&port, s->key + port_maps[i].port_at, sizeof(port));
    port = ntohs(port);
    if (proto != IPPROTO_TCP && proto != IPPROTO_UDP)
        return refuse(EINVAL, why, n, "protocol %d is neither TCP nor UDP",
                      proto);
    if (port == 0)
        return refuse(EINVAL, why, n, "port 0");
    rc = x->port_owned(x->arg, proto, port);
    if (rc != 0)
        return refuse(-rc, why, n,
                      "%s port %u of the shared address is not bound by a "
                      "kernel socket of this user",
                      proto == IPPROTO_TCP ? "TCP" : "UDP", port);
    return 0;
}

int
abp_check_steer(const struct ab_steer *s, const struct abp_kernel_addrs *k,
                const struct abp_steer_ctx *x, char *why, size_t n)
{
    struct in6_addr a;
    uint32_t kind;

    if (memchr(s->map, '\0', sizeof(s->map)) == NULL)
        return refuse(EINVAL, why, n, "malformed map name");
    if (s->op != AB_STEER_ADD && s->op != AB_STEER_DEL)
        return refuse(EINVAL, why, n, "unknown steering operation %u", s->op);
    if (strcmp(s->map, ACCEL_LPORT_MAP) == 0 ||
        strcmp(s->map, ACCEL_FLOW4_MAP) == 0 ||
        strcmp(s->map, ACCEL_FLOW6_MAP) == 0 ||
        strcmp(s->map, ACCEL_ARP_MAP) == 0 || strcmp(s->map, ACCEL_ND_MAP) == 0)
        return check_shared_map(s, x, why, n);
    if (strcmp(s->map, ACCEL_DST6_MAP) != 0)
        return refuse(EPERM, why, n, "map %.31s cannot be changed by clients",
                      s->map);
    if (s->klen != sizeof(a) || s->vlen != sizeof(kind))
        return refuse(EINVAL, why, n, "bad key or value size for %s", s->map);
    memcpy(&a, s->key, sizeof(a));
    memcpy(&kind, s->val, sizeof(kind));
    if (s->op == AB_STEER_DEL)
        return 0;
    /* The kernel's own IPv6 address, shared: only the client's ports and
     * connections (accel_lport, accel_flow6) go to the stack. */
    if (kind == ACCEL_DST6_SHARED) {
        if (!x->shared || !kernel_has6(k, &a) || a.s6_addr[0] == 0xff ||
            IN6_IS_ADDR_LINKLOCAL(&a) || IN6_IS_ADDR_LOOPBACK(&a))
            return refuse(EPERM, why, n,
                          "a shared IPv6 address is a global address of the "
                          "kernel's, with the shared IPv4 one");
        return 0;
    }
    if (kind == 0 ||
        (kind & ~(ACCEL_DST6_OWN | ACCEL_DST6_SNM | ACCEL_DST6_GROUP)) != 0)
        return refuse(EINVAL, why, n, "bad steering kind 0x%x", kind);
    if ((kind & ACCEL_DST6_OWN) &&
        (a.s6_addr[0] == 0xff || kernel_has6(k, &a) ||
         IN6_IS_ADDR_UNSPECIFIED(&a) || IN6_IS_ADDR_LOOPBACK(&a)))
        return refuse(EADDRINUSE, why, n,
                      "an IPv6 address of the stack must be a unicast "
                      "address the kernel does not hold");
    if ((kind & ACCEL_DST6_SNM) && !is_solicited_node(&a))
        return refuse(EINVAL, why, n, "not a solicited-node group");
    if ((kind & ACCEL_DST6_GROUP) && a.s6_addr[0] != 0xff)
        return refuse(EINVAL, why, n, "not a multicast group");
    /* A solicited-node group whole would take the kernel's neighbour
     * solicitations; all-nodes its router advertisements, unless the
     * kernel runs no IPv6 on a link here. */
    if ((kind & ACCEL_DST6_GROUP) && is_solicited_node(&a))
        return refuse(EPERM, why, n,
                      "a solicited-node group is steered by its target only");
    if ((kind & ACCEL_DST6_GROUP) && is_all_nodes(&a) && kernel_has_ll6(k))
        return refuse(EPERM, why, n,
                      "ff02::1 stays with the kernel while it has IPv6 on a "
                      "link of this network namespace");
    return 0;
}
