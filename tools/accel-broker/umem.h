/*
 * accel-broker: a client's af_xdp umem registered with the broker's
 * CAP_IPC_LOCK (umem.c).
 */
#ifndef ACCEL_BROKER_UMEM_H
#define ACCEL_BROKER_UMEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "broker_proto.h"

/* Register u (addresses in pid's memory) on the XSK xsk; u->len at most
 * max. 0 or -errno with a sentence in why. */
int abu_register(pid_t pid, uid_t uid, int xsk, const struct ab_umem *u,
                 uint64_t max, char *why, size_t n);

#endif /* ACCEL_BROKER_UMEM_H */
