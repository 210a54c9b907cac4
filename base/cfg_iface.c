/*
 * The interface's own addresses, for a stack that shares them with the
 * kernel (issue: one address per server). Read once at configuration
 * load, in every process:
 *
 *  - ACCEL_IP unset with ACCEL_IFACE set: the interface's first IPv4
 *    address (and its prefix) becomes the stack's;
 *  - ip_shared: the kernel holds the stack's IPv4 address on ACCEL_IFACE
 *    (so the port's XDP program must take only the stack's ports and
 *    connections, runtime/xdpsteer4.c);
 *  - with a shared address and no ACCEL_GATEWAY: the kernel's default
 *    route through ACCEL_IFACE, if it has one;
 *  - ACCEL_IP and ACCEL_IP6 both unset: the interface's first global IPv6
 *    address too (ip6_shared); an ACCEL_IP6 the kernel holds there is
 *    shared as well.
 *
 * Raw syscalls (a netlink dump of the addresses, /proc/net/route): the
 * library's interposed socket calls must not be re-entered here.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cfg.h"

/* The IPv4 addresses of ifindex: calls fn for each (network order,
 * prefix length) until it returns true. 0, or -errno. */
static int
each_addr4(int ifindex, bool (*fn)(void *ctx, uint32_t a, unsigned plen),
           void *ctx)
{
    struct {
        struct nlmsghdr nh;
        struct ifaddrmsg ifa;
    } req = {
        .nh = {.nlmsg_len = sizeof(req),
               .nlmsg_type = RTM_GETADDR,
               .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
               .nlmsg_seq = 1},
        .ifa = {.ifa_family = AF_INET},
    };
    struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
    static char buf[16384] __attribute__((aligned(4)));
    long fd, n;
    int rc = 0;
    bool done = false, stop = false;

    fd =
        syscall(SYS_socket, AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0)
        return -errno;
    if (syscall(SYS_sendto, fd, &req, sizeof(req), 0, &sa, sizeof(sa)) < 0) {
        rc = -errno;
        goto out;
    }
    while (!done && (n = syscall(SYS_recvfrom, fd, buf, sizeof(buf), 0, NULL,
                                 NULL)) > 0) {
        for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, n);
             h = NLMSG_NEXT(h, n)) {
            struct ifaddrmsg *ifa = NLMSG_DATA(h);
            struct rtattr *rta;
            int len;
            uint32_t local = 0, addr = 0;

            if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR) {
                done = true;
                break;
            }
            if (h->nlmsg_type != RTM_NEWADDR || stop ||
                ifa->ifa_family != AF_INET || (int)ifa->ifa_index != ifindex)
                continue;
            len = (int)IFA_PAYLOAD(h);
            for (rta = IFA_RTA(ifa); RTA_OK(rta, len);
                 rta = RTA_NEXT(rta, len)) {
                if (rta->rta_type == IFA_LOCAL)
                    memcpy(&local, RTA_DATA(rta), 4);
                else if (rta->rta_type == IFA_ADDRESS)
                    memcpy(&addr, RTA_DATA(rta), 4);
            }
            if (local == 0)
                local = addr;
            if (local != 0 && fn(ctx, local, ifa->ifa_prefixlen))
                stop = true;
        }
    }
out:
    syscall(SYS_close, fd);
    return rc;
}

struct find {
    uint32_t want, a;
    unsigned plen;
    bool found;
};

static bool
take_first(void *ctx, uint32_t a, unsigned plen)
{
    struct find *f = ctx;
    uint32_t h = ntohl(a);

    /* a host address the stack can use (not loopback, 0/8, multicast or
     * reserved: lo's 127.0.0.1 is no address to share) */
    if ((h >> 24) == 127 || (h >> 24) == 0 || (h >> 28) >= 0xe || plen == 0 ||
        plen > 32)
        return false;
    f->a = a;
    f->plen = plen;
    f->found = true;
    return true;
}

static bool
match(void *ctx, uint32_t a, unsigned plen)
{
    struct find *f = ctx;

    (void)plen;
    f->found = a == f->want;
    return f->found;
}

/* The default route's gateway through iface (/proc/net/route, fields in
 * hex, network order as stored), or 0. */
static uint32_t
kernel_gateway(const char *iface)
{
    char line[256], dev[IF_NAMESIZE + 1];
    unsigned dst, gw, flags, mask;
    uint32_t found = 0;
    FILE *f = fopen("/proc/net/route", "re");

    while (f != NULL && found == 0 && fgets(line, sizeof(line), f) != NULL) {
        if (sscanf(line, "%16s %x %x %x %*d %*d %*d %x", dev, &dst, &gw, &flags,
                   &mask) == 5 &&
            strcmp(dev, iface) == 0 && dst == 0 && mask == 0 &&
            (flags & 0x2u) != 0 /* RTF_GATEWAY */)
            found = gw;
    }
    if (f != NULL)
        fclose(f);
    return found;
}

static char *
fmt_ip(uint32_t a, int plen)
{
    const uint8_t *b = (const uint8_t *)&a;
    char s[32];

    if (plen >= 0)
        snprintf(s, sizeof(s), "%u.%u.%u.%u/%d", b[0], b[1], b[2], b[3], plen);
    else
        snprintf(s, sizeof(s), "%u.%u.%u.%u", b[0], b[1], b[2], b[3]);
    return strdup(s);
}

/* The first global, usable IPv6 address of iface (want NULL), or whether
 * iface has want (/proc/net/if_inet6: "addr ifindex plen scope flags
 * name"; scope 0 is global, flags 0x40 tentative, 0x20 deprecated, 0x08
 * DAD failed). */
static bool
kernel_ip6(const char *iface, const struct in6_addr *want, struct in6_addr *out,
           unsigned *plen)
{
    char line[256], hex[33], dev[IF_NAMESIZE + 1];
    unsigned idx, pl, scope, flags;
    bool found = false;
    FILE *f = fopen("/proc/net/if_inet6", "re");

    while (f != NULL && !found && fgets(line, sizeof(line), f) != NULL) {
        struct in6_addr a;

        if (sscanf(line, "%32s %x %x %x %x %16s", hex, &idx, &pl, &scope,
                   &flags, dev) != 6 ||
            strcmp(dev, iface) != 0)
            continue;
        for (int i = 0; i < 16; i++) {
            unsigned b;

            if (sscanf(hex + 2 * i, "%2x", &b) != 1)
                b = 0;
            a.s6_addr[i] = (uint8_t)b;
        }
        if (want != NULL) {
            found = memcmp(&a, want, sizeof(a)) == 0;
        } else if (scope == 0 && (flags & 0x68u) == 0) {
            *out = a;
            *plen = pl;
            found = true;
        }
    }
    if (f != NULL)
        fclose(f);
    return found;
}

/* ACCEL_IP6: the interface's (deflt: ACCEL_IP was unset too), or shared
 * when the kernel has it. */
static int
iface_ip6(struct base_cfg *cfg, bool deflt, char *note, size_t notelen)
{
    char s[INET6_ADDRSTRLEN + 8];
    struct in6_addr a;
    unsigned plen;
    size_t n = strlen(note);

    cfg->ip6_shared = false;
    if (cfg->has_ip6) {
        cfg->ip6_shared = kernel_ip6(cfg->iface, &cfg->ip6_addr, NULL, NULL);
        if (cfg->ip6_shared && n + 1 < notelen)
            snprintf(note + n, notelen - n, "%sACCEL_IP6=%s is shared too",
                     n ? "; " : "", cfg->ip6);
        return 0;
    }
    if (!deflt || cfg->ip6[0] != '\0' ||
        !kernel_ip6(cfg->iface, NULL, &a, &plen) || plen == 0 || plen > 128)
        return 0;
    inet_ntop(AF_INET6, &a, s, INET6_ADDRSTRLEN);
    snprintf(s + strlen(s), sizeof(s) - strlen(s), "/%u", plen);
    free(cfg->ip6);
    cfg->ip6 = strdup(s);
    if (cfg->ip6 == NULL)
        return -ENOMEM;
    cfg->ip6_addr = a;
    cfg->ip6_prefix = (uint8_t)plen;
    cfg->has_ip6 = true;
    cfg->ip6_shared = true;
    if (n + 1 < notelen)
        snprintf(note + n, notelen - n, "%sand its IPv6 address %s",
                 n ? "; " : "", cfg->ip6);
    return 0;
}

int
base_cfg_iface_addrs(struct base_cfg *cfg, char *note, size_t notelen)
{
    int ifindex;
    struct find f = {0};
    int rc;

    note[0] = '\0';
    cfg->ip_shared = false;
    cfg->ip6_shared = false;
    if (cfg->iface[0] == '\0' || cfg->vdev[0] != '\0')
        return 0;
    ifindex = (int)if_nametoindex(cfg->iface);
    if (ifindex == 0)
        return 0; /* the port's start says so */
    if (cfg->ip[0] == '\0') {
        rc = each_addr4(ifindex, take_first, &f);
        if (rc != 0 || !f.found)
            return rc;
        free(cfg->ip);
        cfg->ip = fmt_ip(f.a, (int)f.plen);
        if (cfg->ip == NULL)
            return -ENOMEM;
        cfg->ip_addr = f.a;
        cfg->ip_mask =
            f.plen == 0 ? 0 : htonl(~(0xffffffffu >> (f.plen & 31u)));
        if (f.plen == 32)
            cfg->ip_mask = 0xffffffffu;
        cfg->ip_shared = true;
        snprintf(note, notelen,
                 "ACCEL_IP not set: the stack shares %s's address %s with "
                 "the kernel (only the ports and connections of accelerated "
                 "sockets are taken from it)",
                 cfg->iface, cfg->ip);
        rc = iface_ip6(cfg, true, note, notelen);
        if (rc != 0)
            return rc;
    } else {
        f.want = cfg->ip_addr;
        rc = each_addr4(ifindex, match, &f);
        if (rc != 0)
            return rc;
        cfg->ip_shared = f.found;
        if (f.found)
            snprintf(note, notelen,
                     "ACCEL_IP=%s is also the kernel's address on %s: the "
                     "stack shares it (only the ports and connections of "
                     "accelerated sockets are taken from it)",
                     cfg->ip, cfg->iface);
        rc = iface_ip6(cfg, false, note, notelen);
        if (rc != 0)
            return rc;
    }
    if (cfg->ip_shared && cfg->gateway[0] == '\0') {
        uint32_t gw = kernel_gateway(cfg->iface);

        if (gw != 0 && (gw & cfg->ip_mask) == (cfg->ip_addr & cfg->ip_mask)) {
            free(cfg->gateway);
            cfg->gateway = fmt_ip(gw, -1);
            if (cfg->gateway == NULL)
                return -ENOMEM;
            cfg->gw_addr = gw;
        }
    }
    return 0;
}
