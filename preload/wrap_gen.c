/*
 * The interposed calls of the common shape, one per PL_SYM_SOCK row of
 * intercept.def (bind, listen, accept, accept4, connect, shutdown,
 * getsockopt, setsockopt, getsockname, getpeername, recvmsg, recvmmsg):
 * each passes through to libc when the library is not active or the fd is
 * not a socket of ours in one of the row's states, and otherwise enters,
 * runs the row's pl_sock operation (sock_ctl.c, sock_io.c) and leaves
 * through pl_exit(), which sets errno (STYLE.md 2.4). The calls that
 * differ (socket, read, write, send and the other receive forms, sendfile,
 * close, dup, fcntl, ioctl, the waits) are written by hand in wrap_*.c.
 */
#include <errno.h>
#include <sys/socket.h>

#include "libc.h"
#include "wrap.h"

/* The interposed definitions below are the library's exports. */
#pragma GCC visibility push(default)

#define PL_SYM(ret, name, params, args)
#define PL_SYM_BASIC(ret, name, params, args, alias)
#define PL_SYM_OPT(ret, name, params, args)
#define PL_SYM_VA(ret, name, fixed, fparams, fargs)
#define PL_SYM_SOCK(ret, name, params, args, states, op)                       \
    ret name params                                                            \
    {                                                                          \
        struct pl_ctx ctx;                                                     \
        struct pl_sock *s;                                                     \
        ssize_t rc;                                                            \
                                                                               \
        if (!pl_active())                                                      \
            return libc_##name args;                                           \
        s = pl_wrap_sock(fd, states);                                          \
        if (s == NULL)                                                         \
            return libc_##name args;                                           \
        pl_enter(&ctx);                                                        \
        rc = op;                                                               \
        pl_wrap_put(&s->hdr);                                                  \
        return (ret)pl_exit(&ctx, rc);                                         \
    }
#include "intercept.def"
#undef PL_SYM
#undef PL_SYM_BASIC
#undef PL_SYM_OPT
#undef PL_SYM_VA
#undef PL_SYM_SOCK
