/*
 * C side of share_slot_test.cc: share_int.h is C (stdatomic), so the test
 * reaches the shared region through these helpers. The region is a plain
 * allocation here: no fork, no port, no DPDK initialisation; only the
 * slot bookkeeping of share_slot.c runs.
 */
#include <stdlib.h>

#include "clock.h"
#include "rt.h"
#include "share_int.h"
#include "share_probe.h"

int
sp_setup(void)
{
    rt__sh = calloc(1, sizeof(*rt__sh));
    if (rt__sh == NULL)
        return -1;
    rt__sh_me = 0;
    atomic_store(&rt__sh->slot[0].state, SLOT_LIVE);
    return 0;
}

void
sp_teardown(void)
{
    free(rt__sh);
    rt__sh = NULL;
}

uint64_t
sp_now(void)
{
    return base_now_ns();
}

void
sp_reserve(int slot, uint64_t at_ns)
{
    rt__sh->slot[slot].reserved_ns = at_ns;
    atomic_store(&rt__sh->slot[slot].state, SLOT_RESERVED);
}

int
sp_state(int slot)
{
    return atomic_load(&rt__sh->slot[slot].state) == SLOT_FREE ? SP_FREE
           : atomic_load(&rt__sh->slot[slot].state) == SLOT_RESERVED
               ? SP_RESERVED
               : SP_LIVE;
}

void
sp_sweep(uint64_t now)
{
    rt__sh->last_sweep_ns = 0; /* due */
    rt__sh_sweep(now);
}
