/*
 * accel-broker's decisions, with no system calls (unit tested in
 * tests/unit/tools/broker_policy_test.cc): who may use the broker, and
 * whether a request is well formed and within what the broker allows.
 * Each check returns 0 or -errno and, on refusal, writes one sentence to
 * why: the client library logs it as its one line.
 */
#ifndef ACCEL_BROKER_POLICY_H
#define ACCEL_BROKER_POLICY_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "broker_proto.h"

#define ABP_MAX_IFACES 8

struct abp_conf {
    const char *group_name;
    gid_t group;
    int nifaces;
    const char *ifaces[ABP_MAX_IFACES]; /* the interfaces it serves */
    uint64_t memlock_max;               /* bytes a client may lock */
};

/* The addresses the kernel holds in the broker's network namespace. */
struct abp_kernel_addrs {
    int n4, n6;
    const uint32_t *v4; /* network order */
    const struct in6_addr *v6;
};

/* uid 0, or the group as the peer's primary or supplementary group. */
int abp_authorise(const struct abp_conf *c, uid_t uid, gid_t gid,
                  const gid_t *groups, int ngroups, char *why, size_t n);

/* The frame itself: length, magic, version, op. */
int abp_check_frame(const struct ab_req *q, size_t len, char *why, size_t n);

/* HELLO. on_iface: the kernel holds h->ip on h->iface itself; the stack
 * then shares it (the program's accel_shared), taking only the ports the
 * client proves are its own (abp_check_steer). An address the kernel
 * holds on another interface is refused. */
int abp_check_hello(const struct abp_conf *c, const struct ab_hello *h,
                    const struct abp_kernel_addrs *k, bool on_iface, char *why,
                    size_t n);

/* What a STEER is checked against: the client's HELLO and, in the
 * shared-address mode, whether a local port is the client's own (a kernel
 * socket of its user bound to it on the shared address or the wildcard:
 * the library binds one for every port the stack takes, so the kernel's
 * own bind rules decide who has the port). */
struct abp_steer_ctx {
    bool shared;       /* the HELLO's address is the kernel's, shared */
    uint32_t ip, mask; /* the HELLO's, network order */
    /* 0 when proto/port (host order) is the client's, else -errno */
    int (*port_owned)(void *arg, int proto, uint16_t port);
    void *arg;
};

/* AB_STEER: the maps a client may change and their entries: accel_dst6
 * always; in the shared mode also accel_lport and accel_flow4/6 (a port
 * of the client's own), accel_arp (a neighbour in the shared subnet) and
 * accel_nd (a unicast target). Deletions need no proof: a family is alone
 * on its interface, so every entry is its own or a dead one's. */
int abp_check_steer(const struct ab_steer *s, const struct abp_kernel_addrs *k,
                    const struct abp_steer_ctx *x, char *why, size_t n);

#endif /* ACCEL_BROKER_POLICY_H */
