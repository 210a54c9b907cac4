/*
 * Test-only hooks of the stack (tests/stack, tests/unit/stack). Not part
 * of the contract with preload/ or runtime/: nothing outside tests calls
 * these.
 */
#ifndef ACCEL_STK_TEST_H
#define ACCEL_STK_TEST_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Replace the stack's clock (rt_now_ns) by now_ns; NULL restores it. */
void stk_test_set_clock(uint64_t (*now_ns)(void));

/** lwIP heap blocks currently allocated (pcbs, pbufs, segments, timers). */
long stk_test_mem_blocks(void);

/** stk_sock objects currently allocated (open or queued on a listener). */
long stk_test_socks(void);

/** Listener groups currently allocated (one per lwIP listening pcb). */
long stk_test_lgroups(void);

/** lwIP assertions that failed so far (they log and continue). */
long stk_test_asserts(void);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_STK_TEST_H */
