/*
 * The three ways frames move (rt_int.h, struct rt__dp), chosen once:
 *
 *   own     this process alone on its port: rx bursts into its stack, tx
 *           bursts out (loop.c, port.c);
 *   shared  a fork family on one port (share*.c): whoever holds the port
 *           lock receives and dispatches to each process's ring; each
 *           process drains its ring and sleeps on its slot's eventfd too;
 *   joined  an exec'd process on its owner's port (remote.c): frames come
 *           copied into its cells, leave through the family.
 *
 * start.c starts on `own` (or `joined` when it joins), share.c moves to
 * `shared` at the first fork that shares the port and back at exit;
 * remote.c to `joined`. The rest of the runtime calls rt__dp's operations
 * and never asks which it is.
 */
#include <stdbool.h>
#include <stdint.h>

#include "rt_int.h"

/* ---- own port ----------------------------------------------------------- */

static bool
own_sleep_begin(int *fd)
{
    *fd = -1;
    return true;
}

static void
own_sleep_end(bool woken)
{
    (void)woken;
}

static bool
own_watches_queue(unsigned q)
{
    (void)q;
    return true;
}

static uint64_t
own_others_polled_ns(void)
{
    return 0;
}

static void
nothing(void)
{
}

const struct rt__dp rt__dp_own = {
    .name = "own port",
    .poll = rt__poll_own,
    .flush = rt__tx_flush_locked,
    .sleep_begin = own_sleep_begin,
    .sleep_end = own_sleep_end,
    .watches_queue = own_watches_queue,
    .others_polled_ns = own_others_polled_ns,
    .leave = nothing,
    .tx_alloc = rt__tx_alloc,
    .tx_send = rt__tx_send,
    .stack_up = nothing,
    .progress = false,
};

/* ---- shared port, joined ------------------------------------------------ */

static bool
shared_sleep_begin(int *fd)
{
    *fd = rt__share_sleep_begin();
    return *fd >= 0;
}

static uint64_t
shared_others_polled_ns(void)
{
    /* With several queues each process polls its own: nobody else's
     * polls stand for this process's. */
    return rt__port.nq < 2 ? rt__share_last_app_poll() : 0;
}

const struct rt__dp rt__dp_shared = {
    .name = "shared port",
    .poll = rt__poll_shared,
    .flush = rt__share_tx_flush,
    .sleep_begin = shared_sleep_begin,
    .sleep_end = rt__share_sleep_end,
    .watches_queue = rt__share_watches_queue,
    .others_polled_ns = shared_others_polled_ns,
    .leave = rt__share_leave_listeners,
    .tx_alloc = rt__tx_alloc,
    .tx_send = rt__tx_send,
    .stack_up = nothing,
    .progress = true,
};

const struct rt__dp rt__dp_joined = {
    .name = "joined",
    .poll = rt__poll_joined,
    .flush = rt__rm_flush,
    .sleep_begin = shared_sleep_begin,
    .sleep_end = rt__share_sleep_end,
    .watches_queue = rt__share_watches_queue,
    .others_polled_ns = shared_others_polled_ns,
    .leave = rt__share_leave_listeners,
    .tx_alloc = rt__rm_tx_alloc,
    .tx_send = rt__rm_tx_send,
    .stack_up = rt__rm_stack_up,
    .progress = true,
};

const struct rt__dp *rt__dp = &rt__dp_own;

void
rt__dp_select(void)
{
    rt__dp = rt__remote ? &rt__dp_joined
                        : (rt__shared ? &rt__dp_shared : &rt__dp_own);
}
