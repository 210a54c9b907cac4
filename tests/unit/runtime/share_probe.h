/* The test's window on runtime/share_slot.c (share_probe.c). */
#ifndef ACCEL_TEST_SHARE_PROBE_H
#define ACCEL_TEST_SHARE_PROBE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { SP_FREE, SP_RESERVED, SP_LIVE };

int sp_setup(void); /* a zeroed region, this process in slot 0 */
void sp_teardown(void);
uint64_t sp_now(void);
void sp_reserve(int slot, uint64_t at_ns); /* reserved for a child at at_ns */
int sp_state(int slot);
void sp_sweep(uint64_t now); /* a sweep by a caller that read now */

#ifdef __cplusplus
}
#endif

#endif
