/*
 * Helpers shared by the wrapper files: find our socket behind an fd in the
 * states a wrapper handles, and drop the reference again. Everything else
 * (a kernel fd, an epoll fd, a socket in another state) passes through.
 */
#ifndef ACCEL_PL_WRAP_H
#define ACCEL_PL_WRAP_H

#include "fdtable.h"
#include "pl.h"
#include "sock.h"

#define PL_ST_UNDECIDED (1u << PL_SOCK_UNDECIDED)
#define PL_ST_ACCEL (1u << PL_SOCK_ACCEL)

/** Drop a reference with the thread marked in-library (the last
 *  reference runs destroy(), which calls into the stack). errno kept. */
static inline void
pl_wrap_put(struct pl_fd *f)
{
    int saved, inlib;

    if (f == NULL)
        return;
    saved = errno;
    inlib = base_in_lib;
    base_in_lib = 1;
    pl_fd_put(f);
    base_in_lib = inlib;
    errno = saved;
}

/** Our socket at fd with a reference when its state is in mask, else
 *  NULL with nothing held. */
static inline struct pl_sock *
pl_wrap_sock(int fd, unsigned int mask)
{
    struct pl_fd *f;
    struct pl_sock *s;

    if (!pl_fdt_peek(fd))
        return NULL;
    f = pl_fdt_get(fd);
    s = pl_sock_of(f);
    if (s != NULL && ((1u << pl_sock_state(s)) & mask))
        return s;
    pl_wrap_put(f);
    return NULL;
}

#endif /* ACCEL_PL_WRAP_H */
