/*
 * The consumer side of the capture ring (base/statreg_layout.h,
 * "Capture"): records are read from our own tail up to the head the data
 * path published, and the tail is published back so the data path gets
 * the room again. Single consumer; no locks, no system calls.
 */
#ifndef ACCEL_TOOLS_ADP_RING_H
#define ACCEL_TOOLS_ADP_RING_H

#include <stddef.h>
#include <stdint.h>

#include "statreg_layout.h"

/* One captured frame, as read from the ring. */
struct adp_frame {
    const uint8_t *data; /* in the ring: valid until the callback returns */
    uint32_t caplen, origlen;
    uint64_t ts_ns; /* CLOCK_REALTIME */
    uint8_t dir;    /* enum base_sr_cap_dir */
    uint8_t drop;   /* enum base_sr_cap_drop */
};

struct adp_ring {
    uint8_t *base;   /* the ring's first byte */
    uint32_t size;   /* a power of two */
    uint64_t *headp; /* the region's cap_head (the producer publishes it) */
    uint64_t *tailp; /* the region's cap_tail (we publish it) */
    uint64_t tail;   /* bytes consumed: ours, published to *tailp */
};

/* adp_ring_read's return when the ring breaks the contract. */
#define ADP_RING_CORRUPT (-1)

/* Called for each record; 0 goes on, anything else stops the read and is
 * returned by adp_ring_read (the record counts as consumed). */
typedef int (*adp_frame_fn)(void *arg, const struct adp_frame *f);

/**
 * Consume the records published so far (up to the head loaded, with
 * acquire, on entry), calling fn for each; the tail is published
 * (release) every few records and on return, so the producer never
 * waits for a whole batch.
 * @return 0 when caught up, fn's non-zero return when it stopped, or
 *  ADP_RING_CORRUPT with the reason in err (the tail is left where the
 *  bad record starts; the capture must end).
 * @note A record's header is copied before it is checked, so a process
 *  that scribbles on its region can end the capture but never make the
 *  reader step outside the ring.
 */
int adp_ring_read(struct adp_ring *r, adp_frame_fn fn, void *arg,
                  uint64_t *nread, char *err, size_t errlen);

#endif /* ACCEL_TOOLS_ADP_RING_H */
