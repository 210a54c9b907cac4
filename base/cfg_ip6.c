/*
 * The binary forms of ACCEL_IP6 and ACCEL_GATEWAY6 (cfg_int.h), checked as
 * ACCEL_IP and ACCEL_GATEWAY are in cfg.c: a bad value is one line naming
 * the variable, the value, what is wrong and the fix.
 *
 * ACCEL_IP6 is the stack's global (or unique local) address with its prefix
 * length. Refused: ::, ::1, multicast, IPv4-mapped (::ffff:0:0/96: those
 * are IPv4 addresses, given by ACCEL_IP), link-local (the stack makes its
 * own fe80:: address from its MAC, as Linux does) and a prefix's
 * subnet-router anycast address (no bit set after the prefix, RFC 4291
 * 2.6.1: the IPv6 counterpart of ACCEL_IP's network address; /127 and
 * /128 have none, RFC 6164).
 *
 * ACCEL_GATEWAY6 is the router for destinations outside ACCEL_IP6's prefix:
 * a link-local address (fe80::/64, what routers advertise) or an address
 * inside ACCEL_IP6's prefix other than ACCEL_IP6. It needs ACCEL_IP6 even
 * when link-local: without a global address the stack has nothing to send
 * through a router. No %scope suffix: the interface is the stack's.
 */
#include "cfg_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Why a is not a usable unicast address of the stack, or NULL. */
static const char *
unusable6(const struct in6_addr *a)
{
    if (IN6_IS_ADDR_UNSPECIFIED(a))
        return "is the unspecified address ::";
    if (IN6_IS_ADDR_LOOPBACK(a))
        return "is the loopback address ::1";
    if (IN6_IS_ADDR_MULTICAST(a))
        return "is a multicast address";
    if (IN6_IS_ADDR_V4MAPPED(a))
        return "is an IPv4-mapped address (IPv4 goes in ACCEL_IP)";
    return NULL;
}

/* True when a and b agree on their first plen bits. */
static bool
same_prefix6(const struct in6_addr *a, const struct in6_addr *b, unsigned plen)
{
    unsigned bytes = plen / 8, bits = plen % 8;

    if (memcmp(a->s6_addr, b->s6_addr, bytes) != 0)
        return false;
    if (bits == 0)
        return true;
    return ((a->s6_addr[bytes] ^ b->s6_addr[bytes]) &
            (uint8_t)(0xff << (8 - bits))) == 0;
}

/* True when a has no bit set after its first plen bits. */
static bool
host_bits_zero6(const struct in6_addr *a, unsigned plen)
{
    for (unsigned i = plen; i < 128; i++)
        if (a->s6_addr[i / 8] & (0x80 >> (i % 8)))
            return false;
    return true;
}

int
base__cfg_derive_ip6(struct base_cfg *cfg, char *err, size_t errlen)
{
    const char *v = cfg->ip6;
    const char *slash = strchr(v, '/');
    struct in6_addr a;
    const char *why;
    char addr[64];
    unsigned long plen = 0;
    char *endp = NULL;
    bool ok = slash != NULL && (size_t)(slash - v) < sizeof(addr);

    if (ok) {
        memcpy(addr, v, (size_t)(slash - v));
        addr[slash - v] = '\0';
        ok = inet_pton(AF_INET6, addr, &a) == 1 && slash[1] >= '0' &&
             slash[1] <= '9';
    }
    if (ok) {
        plen = strtoul(slash + 1, &endp, 10);
        ok =
            *endp == '\0' && plen >= 1 && plen <= 128 && strlen(slash + 1) <= 3;
    }
    if (!ok) {
        base__cfg_seterr(
            err, errlen,
            "ACCEL_IP6=%s: not an IPv6 address/prefix; set "
            "ACCEL_IP6=ADDRESS/len (len 1..128), e.g. fd00:200::2/64",
            v);
        return -EINVAL;
    }
    why = unusable6(&a);
    if (why == NULL && IN6_IS_ADDR_LINKLOCAL(&a))
        why = "is a link-local address (the stack makes its own fe80:: "
              "address from its MAC)";
    if (why != NULL) {
        base__cfg_seterr(
            err, errlen,
            "ACCEL_IP6=%s: %s; set ACCEL_IP6 to the stack's own global "
            "or unique local address, e.g. fd00:200::2/64",
            v, why);
        return -EINVAL;
    }
    if (plen <= 126 && host_bits_zero6(&a, (unsigned)plen)) {
        base__cfg_seterr(
            err, errlen,
            "ACCEL_IP6=%s: is the subnet-router anycast address of its "
            "prefix (no bit set after the prefix); set ACCEL_IP6 to a host "
            "address inside it",
            v);
        return -EINVAL;
    }
    cfg->ip6_addr = a;
    cfg->ip6_prefix = (uint8_t)plen;
    cfg->has_ip6 = true;
    return 0;
}

int
base__cfg_derive_gateway6(struct base_cfg *cfg, char *err, size_t errlen)
{
    const char *v = cfg->gateway6;
    struct in6_addr g;
    const char *why;

    if (!cfg->has_ip6) {
        base__cfg_seterr(err, errlen,
                         "ACCEL_GATEWAY6=%s: needs ACCEL_IP6; set "
                         "ACCEL_IP6=ADDRESS/len too, or unset ACCEL_GATEWAY6",
                         v);
        return -EINVAL;
    }
    if (inet_pton(AF_INET6, v, &g) != 1) {
        base__cfg_seterr(
            err, errlen,
            "ACCEL_GATEWAY6=%s: not an IPv6 address; set "
            "ACCEL_GATEWAY6 to the router's address (no prefix, no "
            "%%interface), e.g. fe80::1, or unset it",
            v);
        return -EINVAL;
    }
    why = unusable6(&g);
    if (why != NULL) {
        base__cfg_seterr(
            err, errlen,
            "ACCEL_GATEWAY6=%s: %s; set ACCEL_GATEWAY6 to the router's "
            "unicast address, e.g. fe80::1, or unset it",
            v, why);
        return -EINVAL;
    }
    if (IN6_IS_ADDR_LINKLOCAL(&g)) {
        /* fe80::/10 is link-local, but only fe80::/64 is ever assigned
         * (RFC 4291 2.5.6). */
        static const struct in6_addr ll = {{{0xfe, 0x80}}};

        if (!same_prefix6(&g, &ll, 64) || host_bits_zero6(&g, 64)) {
            base__cfg_seterr(
                err, errlen,
                "ACCEL_GATEWAY6=%s: not a link-local host address; "
                "set ACCEL_GATEWAY6 to a fe80::/64 address with a "
                "non-zero interface id, e.g. fe80::1",
                v);
            return -EINVAL;
        }
    } else if (memcmp(&g, &cfg->ip6_addr, sizeof(g)) == 0 ||
               !same_prefix6(&g, &cfg->ip6_addr, cfg->ip6_prefix)) {
        base__cfg_seterr(
            err, errlen,
            "ACCEL_GATEWAY6=%s: not %s; set ACCEL_GATEWAY6 to a router "
            "address inside %s or to its link-local fe80:: address",
            v,
            memcmp(&g, &cfg->ip6_addr, sizeof(g)) == 0
                ? "another host (it is ACCEL_IP6 itself)"
                : "inside ACCEL_IP6's prefix",
            cfg->ip6);
        return -EINVAL;
    }
    cfg->gw6_addr = g;
    cfg->has_gw6 = true;
    return 0;
}
