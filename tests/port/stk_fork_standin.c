/*
 * The fork and exit half of the stack contract (stk.h), for the port tests'
 * stand-in stacks: they hold no connections, so there is nothing to freeze or
 * report; frames dispatched to a listener go to the stand-in's stk_input.
 */
#include "stk.h"

void
stk_set_flow_ops(const struct stk_flow_ops *ops)
{
    (void)ops;
}

void
stk_each_flow(void (*fn)(void *ctx, const struct stk_flow *f, bool has_sock),
              void *ctx)
{
    (void)fn;
    (void)ctx;
}

void
stk_fork_freeze(bool child)
{
    (void)child;
}

void
stk_input_lid(const void *frame, uint16_t len, uint32_t lid)
{
    (void)lid;
    stk_input(frame, len);
}

int
stk_pending_output(void)
{
    return 0; /* no connections, nothing to linger for at exit */
}
