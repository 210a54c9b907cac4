/*
 * accel-broker's XDP side: accel's own steering program (the object
 * embedded at build time from runtime/xdp/steer.bpf.c), loaded, patched
 * with the validated address and attached by the broker; its maps stay
 * here, changed only through the calls below.
 */
#ifndef ACCEL_BROKER_XDP_H
#define ACCEL_BROKER_XDP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xdpprog.h"

struct abx_prog {
    struct rt__xdpprog x;
    uint32_t queues; /* xsks_map entries this client may fill */
};

/* Load the program for ip/mask (network order; shared: the kernel's own
 * address, accel_shared) and attach it to ifindex
 * (native mode where the driver has it). The same program left attached
 * is adopted (its maps emptied); another of ours (a broker that died, other
 * constants) is replaced. 0 or -errno, with a sentence in why. */
int abx_load(int ifindex, uint32_t ip, uint32_t mask, bool shared,
             struct abx_prog *p, char *why, size_t n);

/* The family is gone: its XSKs left the map with their sockets. keep:
 * the program stays attached for the next one (it passes every frame to
 * the kernel meanwhile); else detached, only if it is still ours. */
void abx_unload(struct abx_prog *p, bool keep);

/* Put the XSK fd in xsks_map at queue, or take queue out (fd < 0). */
int abx_xsk_set(struct abx_prog *p, uint32_t queue, int fd);

/* Add or remove one entry of the program's map called name. */
int abx_map_update(struct abx_prog *p, const char *name, const void *key,
                   const void *val, int del);

/* 1 when the program's map called name has key (values of 16 bytes at
 * most), else 0. */
int abx_map_has(struct abx_prog *p, const char *name, const void *key);

/* The interface and queue an XSK is bound to (sock_diag): 0, -ENOTCONN
 * (not bound), -EOPNOTSUPP (a kernel without CONFIG_XDP_SOCKETS_DIAG). */
int abx_xsk_binding(int fd, uint32_t *ifindex, uint32_t *queue);

#endif /* ACCEL_BROKER_XDP_H */
