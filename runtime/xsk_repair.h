/*
 * af_xdp rings after a process died in the middle of a burst
 * (xsk_repair.c). Internal to runtime/ (and the port test, which makes
 * such a death on purpose).
 */
#ifndef ACCEL_XSK_REPAIR_H
#define ACCEL_XSK_REPAIR_H

#include <stdbool.h>
#include <stdint.h>

/** An AF_XDP ring as the PMD keeps it (libxdp's xsk_ring_prod and
 *  xsk_ring_cons have this layout): its own cursors (cached_prod of a
 *  ring it fills, cached_cons of a ring it drains) and pointers to the
 *  indexes it shares with the kernel. */
struct rt__xsk_ring {
    uint32_t cached_prod;
    uint32_t cached_cons;
    uint32_t mask;
    uint32_t size;
    uint32_t *producer;
    uint32_t *consumer;
    void *ring;
    uint32_t *flags;
};

/** The four rings of one af_xdp queue pair. */
struct rt__xsk_rings {
    struct rt__xsk_ring *rx, *fill, *comp, *tx;
};

/** The rings of queue q of the port, or false: not an af_xdp port, or a
 *  PMD whose queue layout is not the one this file knows (DPDK 22.11's),
 *  checked against what the kernel's rings must look like. */
bool rt__xsk_rings(uint16_t q, struct rt__xsk_rings *r);

/** Entries each ring was out of step by (rt__xsk_rings_fix). */
struct rt__xsk_fixed {
    uint32_t rx, fill, comp, tx;
};

/** Puts the PMD's cursors of r back in step with the kernel's indexes
 *  (xsk_repair.c says how, ring by ring) and says by how much each was
 *  out. No check of the rings (rt__xsk_rings does that). */
void rt__xsk_rings_fix(const struct rt__xsk_rings *r, struct rt__xsk_fixed *n);

/** Called by whoever recovers the lock under which queue q's bursts run
 *  (EOWNERDEAD): puts the PMD's cursors back in step with the kernel's
 *  indexes. Returns the number of ring entries it had to correct. */
uint32_t rt__xsk_repair(uint16_t q);

#endif
