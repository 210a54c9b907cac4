/*
 * Shared by every wrapper file: the library state (ready or not), the
 * errno/in-library bracket around a wrapper body, and time helpers.
 *
 * Wrapper shape (STYLE.md 2.4): pass straight to libc_<name>() when the
 * library is not ready or the thread is already inside the library
 * (base_in_lib: DPDK and the stack calling socket/poll/close...); otherwise
 * pl_enter(), do the work with -errno returns, and return pl_exit(), which
 * is the only place errno is written (-e -> errno = e, -1; success ->
 * the caller's errno restored).
 */
#ifndef ACCEL_PL_H
#define ACCEL_PL_H

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "clock.h"
#include "inlib.h"

#define pl_likely(x) __builtin_expect(!!(x), 1)
#define pl_unlikely(x) __builtin_expect(!!(x), 0)

/** Set by the constructor once the libc table is resolved. */
extern atomic_bool pl__ready;

/** Bumped at every fork, in the child, and in the parent too when the port
 *  is shared: accelerated sockets remember the value they were accelerated
 *  under and, in a new epoch, are claimed (shared port) or refuse work. */
extern atomic_uint pl_fork_epoch;

/** True when wrappers may do more than pass through. */
static inline bool
pl_active(void)
{
    return pl_likely(atomic_load_explicit(&pl__ready, memory_order_relaxed)) &&
           !base_in_lib;
}

struct pl_ctx {
    int saved_errno;
};

/** Constructor: note the signal handlers installed before us
 *  (wrap_signal.c). */
void pl_signals_init(void);

static inline void
pl_enter(struct pl_ctx *c)
{
    c->saved_errno = errno;
    base_in_lib = 1;
}

/** Leave without a result (the wrapper then passes through to libc). */
static inline void
pl_leave(struct pl_ctx *c)
{
    base_in_lib = 0;
    errno = c->saved_errno;
}

/** Leave with rc: -errno becomes errno and -1. */
static inline ssize_t
pl_exit(struct pl_ctx *c, ssize_t rc)
{
    base_in_lib = 0;
    if (rc < 0) {
        errno = (int)-rc;
        return -1;
    }
    errno = c->saved_errno;
    return rc;
}

/** A libc result as 0/count or -errno (read right after the call). */
static inline ssize_t
pl_sysret(ssize_t rc)
{
    return rc < 0 ? -errno : rc;
}

/* ---- time --------------------------------------------------------------- */

/** Deadline (base_now_ns() based) for a timeout in ns; -1 = none. */
int64_t pl_deadline(int64_t timeout_ns);

/** Milliseconds left until deadline (rounded up), -1 for no deadline,
 *  0 when passed. */
int pl_ms_left(int64_t deadline);

/** Deadline from a poll-style millisecond timeout (<0: none). */
static inline int64_t
pl_deadline_ms(int timeout_ms)
{
    return timeout_ms < 0 ? -1 : pl_deadline((int64_t)timeout_ms * 1000000);
}

#endif /* ACCEL_PL_H */
