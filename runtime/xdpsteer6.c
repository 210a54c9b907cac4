/*
 * The IPv6 half of accel's XDP program (xdp/steer.bpf.c): the hash map
 * accel_dst6 of the IPv6 destinations the stack takes (xdp/steer.h). The
 * af_xdp PMD creates it when it loads the program; once the port is up
 * (the stack's MAC, hence its link-local address, is known) the runtime
 * finds it through the program attached to ACCEL_IFACE and fills it:
 *
 *   ACCEL_IP6 and fe80::/64 + EUI-64 of the MAC        OWN
 *   their solicited-node groups ff02::1:ffXX:XXXX      SNM (solicitations
 *                                                      for other targets
 *                                                      stay the kernel's)
 *   ff02::1, when the kernel does not use IPv6 on      GROUP
 *   the interface (net.ipv6.conf.IF.disable_ipv6=1)
 *
 * and later the groups the stack's sockets join (rt__xdp_steer_group6).
 * An XDP program cannot hand a frame to both the kernel and the XSK, so
 * all-nodes frames (router advertisements, MLD general queries,
 * unsolicited neighbour advertisements) go to one of them: to the kernel
 * while it runs IPv6 on the interface (its default route and addresses
 * depend on them; the stack has ACCEL_GATEWAY6 and a static ACCEL_IP6),
 * else to the stack.
 *
 * A link-local address the kernel also has (the stack uses the
 * interface's MAC, and the kernel derives its fe80:: address from it the
 * same way) is left to the kernel, with a warning: two owners of one
 * address cannot both be served.
 *
 * Without ACCEL_IP6 the map stays empty and IPv6 is the kernel's, as
 * before. Called before the stack starts (setup) or with the stack lock
 * held (groups); nothing here is on the data path.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "log.h"
#include "rt_int.h"
#include "xdpsteer6.h"
#include "xdp/steer.h"

/* The map of the program on ACCEL_IFACE: an fd, -1 not looked for yet,
 * -2 not there (no steering program, or no IPv6), DST6_BROKER: held by
 * accel-broker, changed through it (broker_client.c). */
#define DST6_BROKER (-3)
static int dst6_fd = -1;

static const struct in6_addr all_nodes = {
    {{0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}}};

/* A libbpf call's result as 0 or -errno (libbpf returns -1 and errno in
 * its legacy mode, -errno in 1.0 mode). */
static int
bpf_rc(int rc)
{
    if (rc >= 0)
        return 0;
    return rc == -1 ? -errno : rc;
}

void
rt__xdp_ip6_linklocal(const uint8_t mac[6], struct in6_addr *out)
{
    memset(out, 0, sizeof(*out));
    out->s6_addr[0] = 0xfe;
    out->s6_addr[1] = 0x80;
    out->s6_addr[8] = mac[0] ^ 0x02; /* the universal/local bit */
    out->s6_addr[9] = mac[1];
    out->s6_addr[10] = mac[2];
    out->s6_addr[11] = 0xff;
    out->s6_addr[12] = 0xfe;
    memcpy(&out->s6_addr[13], &mac[3], 3);
}

void
rt__xdp_ip6_solicited(const struct in6_addr *a, struct in6_addr *out)
{
    static const uint8_t pfx[13] = {0xff, 0x02, 0, 0, 0, 0,   0,
                                    0,    0,    0, 0, 1, 0xff};

    memcpy(out->s6_addr, pfx, sizeof(pfx));
    memcpy(&out->s6_addr[13], &a->s6_addr[13], 3);
}

/* Add kind to a's entry of v[0..*n), or a new entry. */
static void
add_dst(struct rt__xdp_dst6 *v, size_t *n, const struct in6_addr *a,
        uint32_t kind)
{
    for (size_t i = 0; i < *n; i++) {
        if (memcmp(&v[i].addr, a, sizeof(*a)) == 0) {
            v[i].kind |= kind;
            return;
        }
    }
    v[*n].addr = *a;
    v[*n].kind = kind;
    (*n)++;
}

size_t
rt__xdp_steer_dst6(const struct in6_addr *ip6, const struct in6_addr *ll,
                   bool allnodes, struct rt__xdp_dst6 out[RT_XDP_DST6_BASE])
{
    struct in6_addr snm;
    size_t n = 0;

    add_dst(out, &n, ip6, ACCEL_DST6_OWN);
    rt__xdp_ip6_solicited(ip6, &snm);
    add_dst(out, &n, &snm, ACCEL_DST6_SNM);
    if (ll != NULL) {
        add_dst(out, &n, ll, ACCEL_DST6_OWN);
        rt__xdp_ip6_solicited(ll, &snm);
        add_dst(out, &n, &snm, ACCEL_DST6_SNM);
    }
    if (allnodes)
        add_dst(out, &n, &all_nodes, ACCEL_DST6_GROUP);
    return n;
}

/* True when the kernel runs IPv6 on iface (disable_ipv6 reads 0). */
static bool
kernel_ip6_on(const char *iface)
{
    char path[128], v[8] = "";
    FILE *f;

    snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/disable_ipv6",
             iface);
    f = fopen(path, "re");
    if (f == NULL)
        return false; /* no IPv6 in the kernel */
    if (fgets(v, sizeof(v), f) == NULL)
        v[0] = '\0';
    fclose(f);
    return v[0] == '0';
}

/* True when the kernel has address a on iface (/proc/net/if_inet6:
 * "fe80...0001 02 40 20 80 veth-a" per address). */
static bool
kernel_has_ip6(const char *iface, const struct in6_addr *a)
{
    char line[256], hex[33], dev[64];
    bool found = false;
    FILE *f = fopen("/proc/net/if_inet6", "re");

    for (size_t i = 0; i < 16; i++)
        snprintf(hex + 2 * i, 3, "%02x", a->s6_addr[i]);
    while (f != NULL && !found && fgets(line, sizeof(line), f) != NULL) {
        char h[33];

        if (sscanf(line, "%32s %*x %*x %*x %*x %63s", h, dev) == 2)
            found = strcmp(h, hex) == 0 && strcmp(dev, iface) == 0;
    }
    if (f != NULL)
        fclose(f);
    return found;
}

/* a's entry of the map (fd, or DST6_BROKER) becomes kind (0: removed). */
static int
dst6_set(int fd, const struct in6_addr *a, uint32_t kind)
{
    int rc;

    if (fd == DST6_BROKER)
        return rt__broker_steer(ACCEL_DST6_MAP, kind != 0, a, sizeof(*a), &kind,
                                sizeof(kind));
    if (kind != 0)
        return bpf_rc(bpf_map_update_elem(fd, a, &kind, 0));
    rc = bpf_rc(bpf_map_delete_elem(fd, a));
    return rc == -ENOENT ? 0 : rc;
}

/* The accel_dst6 map of the program on iface: an fd or -errno. */
static int
find_map(const char *iface)
{
    return rt__xdp_steer_map_fd(iface, ACCEL_DST6_MAP);
}

/* A shared ip6 (the kernel has it on iface): one entry, SHARED; its
 * solicited-node group, the link-local address and all-nodes stay the
 * kernel's, which answers neighbour discovery for both. */
static int
setup_shared6(int fd, const char *iface, const struct in6_addr *ip6)
{
    uint32_t kind = ACCEL_DST6_SHARED;
    char a[INET6_ADDRSTRLEN];
    int rc = dst6_set(fd, ip6, kind);

    if (rc != 0) {
        if (fd >= 0)
            close(fd);
        dst6_fd = -2;
        return rc;
    }
    dst6_fd = fd;
    inet_ntop(AF_INET6, ip6, a, sizeof(a));
    BASE_INFO("port",
              "IPv6 to the stack on %s: the ports and connections of the "
              "shared %s; neighbour discovery stays the kernel's",
              iface, a);
    return 0;
}

int
rt__xdp_steer_setup6(const char *iface, const uint8_t mac[6],
                     const struct in6_addr *ip6, bool shared)
{
    struct rt__xdp_dst6 v[RT_XDP_DST6_BASE];
    char a[INET6_ADDRSTRLEN], l[INET6_ADDRSTRLEN];
    struct in6_addr ll;
    bool allnodes = !kernel_ip6_on(iface), ll_ok;
    int fd = rt__broker_active ? DST6_BROKER : find_map(iface);
    size_t n;

    if (fd < 0 && fd != DST6_BROKER) {
        dst6_fd = -2;
        return fd;
    }
    if (shared)
        return setup_shared6(fd, iface, ip6);
    rt__xdp_ip6_linklocal(mac, &ll);
    inet_ntop(AF_INET6, ip6, a, sizeof(a));
    inet_ntop(AF_INET6, &ll, l, sizeof(l));
    ll_ok = !kernel_has_ip6(iface, &ll);
    if (!ll_ok)
        BASE_WARN("port",
                  "the stack's link-local address %s (from its MAC) is also "
                  "the kernel's on %s: frames to it stay with the kernel; set "
                  "ACCEL_MAC to a MAC of the stack's own, or turn the "
                  "kernel's IPv6 off there (sysctl "
                  "net.ipv6.conf.%s.disable_ipv6=1)",
                  l, iface, iface);
    if (kernel_has_ip6(iface, ip6))
        BASE_WARN("port",
                  "ACCEL_IP6=%s is also the kernel's address on %s: frames "
                  "to it go to the stack; remove it from the kernel (ip -6 "
                  "addr del) or give the stack another address",
                  a, iface);
    n = rt__xdp_steer_dst6(ip6, ll_ok ? &ll : NULL, allnodes, v);
    for (size_t i = 0; i < n; i++) {
        int rc = dst6_set(fd, &v[i].addr, v[i].kind);

        if (rc != 0) {
            if (fd >= 0)
                close(fd);
            dst6_fd = -2;
            return rc;
        }
    }
    dst6_fd = fd;
    BASE_INFO("port",
              "IPv6 to the stack on %s: %s, %s and their solicited-node "
              "groups; all-nodes ff02::1 to the %s",
              iface, a, ll_ok ? l : "(no link-local)",
              allnodes ? "stack (the kernel has IPv6 off there)" : "kernel");
    return 0;
}

int
rt__xdp_steer_group6(const uint8_t group[16], bool join)
{
    struct in6_addr g;
    uint32_t kind = 0;

    if (group[0] != 0xff)
        return -EINVAL;
    if (dst6_fd == -1) {
        /* A process that joined another's port (share_join.c) looks for
         * the map at its first group. */
        dst6_fd = -2;
        if (base_cfg.has_ip6 && base_cfg.xdp_steer &&
            base_cfg.iface[0] != '\0') {
            int fd = find_map(base_cfg.iface);

            if (fd >= 0)
                dst6_fd = fd;
        }
    }
    if (dst6_fd < 0 && dst6_fd != DST6_BROKER)
        return 0; /* no steering: the port has every frame already */
    memcpy(&g, group, sizeof(g));
    if (dst6_fd == DST6_BROKER) {
        /* The broker's map cannot be read here: a solicited-node group
         * is taken to be one of the setup's. */
        struct in6_addr snm;

        rt__xdp_ip6_solicited(&g, &snm);
        if (memcmp(&snm, &g, sizeof(g)) == 0)
            kind = ACCEL_DST6_SNM;
    } else if (bpf_map_lookup_elem(dst6_fd, &g, &kind) != 0) {
        kind = 0;
    }
    if ((kind & ACCEL_DST6_SNM) != 0 || memcmp(&g, &all_nodes, sizeof(g)) == 0)
        return 0; /* fixed at setup: a solicited-node group, ff02::1 */
    kind = join ? kind | ACCEL_DST6_GROUP : kind & ~ACCEL_DST6_GROUP;
    return dst6_set(dst6_fd, &g, kind);
}
