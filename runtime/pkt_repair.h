/*
 * af_packet rings after a process died in the middle of a burst
 * (pkt_repair.c). Internal to runtime/.
 */
#ifndef ACCEL_PKT_REPAIR_H
#define ACCEL_PKT_REPAIR_H

#include <stdbool.h>
#include <stdint.h>

struct iovec;

/** The TPACKET_V2 rings of one af_packet queue pair as the PMD keeps
 *  them: frame i's header at rd[i].iov_base, and the PMD's position. */
struct rt__pkt_rings {
    struct iovec *rx_rd, *tx_rd;
    unsigned rx_count, tx_count;
    unsigned *rx_num, *tx_num;
};

/** The rings of queue q of the port, or false: not an af_packet port, or
 *  a PMD whose queue layout is not the one pkt_repair.c knows. */
bool rt__pkt_rings(uint16_t q, struct rt__pkt_rings *r);

/** Called by whoever recovers the lock under which queue q's bursts run
 *  (EOWNERDEAD): moves the tx position over the frames the dead process
 *  wrote, and marks the rx position unsure if it may be behind. */
void rt__pkt_repair(uint16_t q);

/** The rx position of queue q is unsure (bit q of the shared region's
 *  pkt_unsure, set by rt__pkt_repair): find it again from the first frame
 *  waiting. Queue q's lock held. */
void rt__pkt_rx_resync(uint16_t q);

#endif
