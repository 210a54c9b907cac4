/*
 * Interposed _exit and _Exit. exit() runs the runtime's atexit handler,
 * which closes the connections the process left open and waits (boundedly)
 * until their queued data and FINs are acknowledged: the kernel does that
 * for a process that exits, and our stack leaves with the process. _exit()
 * skips atexit handlers, and it is what fork children (inetd-style
 * servers, socat) call when they are done, right after writing their last
 * bytes; without this their peers would lose the tail of the data. The
 * runtime does nothing in a vfork child (the pid is not the stack's).
 */
#include "libc.h"
#include "pl.h"
#include "rt.h"

/* The interposed definitions below are the library's exports. */
#pragma GCC visibility push(default)

void
_exit(int status)
{
    if (pl_active())
        rt_exit_drain();
    libc__exit(status);
    __builtin_unreachable();
}

void
_Exit(int status)
{
    if (pl_active())
        rt_exit_drain();
    libc__Exit(status);
    __builtin_unreachable();
}
