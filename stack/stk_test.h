/*
 * Test-only hooks of the stack (tests/stack, tests/unit/stack). Not part
 * of the contract with preload/ or runtime/: nothing outside tests calls
 * these.
 */
#ifndef ACCEL_STK_TEST_H
#define ACCEL_STK_TEST_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Replace the stack's clock (base_now_ns) by now_ns; NULL restores it. */
void stk_test_set_clock(uint64_t (*now_ns)(void));

/** lwIP heap blocks currently allocated (pcbs, pbufs, segments, timers). */
long stk_test_mem_blocks(void);

/** stk_sock objects currently allocated (open or queued on a listener). */
long stk_test_socks(void);

/** Listener groups currently allocated (one per lwIP listening pcb). */
long stk_test_lgroups(void);

/** lwIP assertions that failed so far (they log and continue). */
long stk_test_asserts(void);

/** The hashed PCB lookup (pcb_hash.c) is built in and in use. */
bool stk_test_pcb_hash_enabled(void);
/** PCBs in the lookup table (active + TIME-WAIT + listening). */
long stk_test_pcb_hash_entries(void);
/** Slots of the lookup table (0 before the first PCB). */
long stk_test_pcb_hash_slots(void);
/** Connections lwIP's periodic timers walk (tcp_tick.c), and those
 *  parked until their keepalive is due. */
uint32_t stk_test_tick_listed(void);
uint32_t stk_test_tick_parked(void);
/** Removals of PCBs the table did not hold where expected (should be 0). */
long stk_test_pcb_hash_anomalies(void);
/** TCP_RMV removals that started at the predecessor the table kept
 *  (patch 0006) instead of walking from the list's head. */
long stk_test_pcb_rmv_shortcuts(void);
struct stk_sock;
/** s's connection is the head of lwIP's active list (removed without a
 *  predecessor). */
bool stk_test_pcb_is_active_head(const struct stk_sock *s);
/** PCBs on lwIP's TIME-WAIT list, retired ones included (patch 0005's
 *  count). */
long stk_test_tw_count(void);
/** 0 when every PCB on lwIP's active, TIME-WAIT and listen lists is found
 *  by a lookup of its own key and the table holds nothing else; negative
 *  otherwise (-1 active, -2 TIME-WAIT, -3 listen, -4 extra entries). */
int stk_test_pcb_hash_check(void);

/** 0 when the TCP sender's retransmission queue holds exactly lwIP's
 *  unacked segments and its counters match its bits; negative otherwise. */
int stk_test_tcp_check(const struct stk_sock *s);
/** Out-of-order segments the process holds (stack/tcp_rx.c). */
long stk_test_ooseq_segs(void);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_STK_TEST_H */
