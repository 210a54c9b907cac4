/*
 * accel-broker: whether a local port of the shared address belongs to a
 * client (ports.c), for the shared-address mode's steering entries.
 */
#ifndef ACCEL_BROKER_PORTS_H
#define ACCEL_BROKER_PORTS_H

#include <stdint.h>
#include <sys/types.h>

/* 0 when a TCP or UDP (proto) socket of uid in this network namespace is
 * bound to port (host order) on ip (network order), its IPv4-mapped form,
 * the wildcard or a global IPv6 address; -EPERM when none is, -errno when
 * the kernel could not be asked. */
int abs_port_owned(int proto, uint16_t port, uid_t uid, uint32_t ip);

#endif /* ACCEL_BROKER_PORTS_H */
