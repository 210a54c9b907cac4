/*
 * C shim for errno_test.cc: pl.h (C11 atomics) is not C++, so the test
 * drives pl_enter/pl_exit/pl_leave through these functions.
 */
#include "pl.h"

/* Definitions the header expects from init.c (not linked here). */
atomic_bool pl__ready;
atomic_uint pl_fork_epoch;

ssize_t
pl_test_exit(int errno_before, ssize_t rc, int *inlib_after)
{
    struct pl_ctx ctx;
    ssize_t r;

    errno = errno_before;
    pl_enter(&ctx);
    errno = 12345; /* library code may clobber errno freely */
    r = pl_exit(&ctx, rc);
    *inlib_after = base_in_lib;
    return r;
}

int
pl_test_leave(int errno_before, int *inlib_during)
{
    struct pl_ctx ctx;

    errno = errno_before;
    pl_enter(&ctx);
    *inlib_during = base_in_lib;
    errno = 777;
    pl_leave(&ctx);
    return errno;
}
