/*
 * Interposed socket control calls: socket, bind, listen, accept, accept4,
 * connect, shutdown, getsockopt, setsockopt, getsockname, getpeername.
 * Each body has the same visible shape (STYLE.md 2.4): pass through when
 * the library is not active or the fd is not a socket of ours in a state
 * the call cares about, otherwise enter, run the pl_sock operation
 * (sock_ctl.c) and leave through pl_exit(), which sets errno.
 */
#include <linux/if_xdp.h>
#include <sys/socket.h>

#include "libc.h"
#include "rt.h"
#include "wrap.h"

/* The interposed definitions below are the library's exports. */
#pragma GCC visibility push(default)

#ifndef AF_XDP
#define AF_XDP 44
#endif

int
socket(int domain, int type, int protocol)
{
    struct pl_ctx ctx;
    struct pl_sock *s;
    int fd;

    if (rt_in_lib) {
        /* DPDK creating its port sockets: the runtime may wait on them. */
        fd = libc_socket(domain, type, protocol);
        if (fd >= 0 && (domain == AF_XDP || domain == AF_PACKET))
            rt_note_port_socket(fd, domain);
        return fd;
    }
    if (!pl_active())
        return libc_socket(domain, type, protocol);
    pl_enter(&ctx);
    fd = libc_socket(domain, type, protocol);
    if (fd < 0)
        return (int)pl_exit(&ctx, -errno);
    if (pl_sock_candidate(domain, type, protocol)) {
        s = pl_sock_new(type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC),
                        (type & SOCK_NONBLOCK) != 0);
        /* Without memory the socket simply stays a kernel one. */
        if (s != NULL) {
            pl_fdt_install(fd, &s->hdr);
            pl_fd_put(&s->hdr);
        }
    }
    return (int)pl_exit(&ctx, fd);
}

int
bind(int fd, const struct sockaddr *addr, socklen_t len)
{
    struct pl_ctx ctx;
    struct pl_sock *s;
    int rc;

    if (!pl_active())
        return libc_bind(fd, addr, len);
    s = pl_wrap_sock(fd, PL_ST_UNDECIDED | PL_ST_ACCEL);
    if (s == NULL)
        return libc_bind(fd, addr, len);
    pl_enter(&ctx);
    rc = pl_sock_bind(s, fd, addr, len);
    pl_wrap_put(&s->hdr);
    return (int)pl_exit(&ctx, rc);
}

int
listen(int fd, int backlog)
{
    struct pl_ctx ctx;
    struct pl_sock *s;
    int rc;

    if (!pl_active())
        return libc_listen(fd, backlog);
    s = pl_wrap_sock(fd, PL_ST_UNDECIDED | PL_ST_ACCEL);
    if (s == NULL)
        return libc_listen(fd, backlog);
    pl_enter(&ctx);
    rc = pl_sock_listen(s, fd, backlog);
    pl_wrap_put(&s->hdr);
    return (int)pl_exit(&ctx, rc);
}

int
accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
    struct pl_ctx ctx;
    struct pl_sock *s;
    int rc;

    if (!pl_active())
        return libc_accept4(fd, addr, len, flags);
    s = pl_wrap_sock(fd, PL_ST_ACCEL);
    if (s == NULL)
        return libc_accept4(fd, addr, len, flags);
    pl_enter(&ctx);
    rc = pl_sock_accept(s, fd, addr, len, flags);
    pl_wrap_put(&s->hdr);
    return (int)pl_exit(&ctx, rc);
}

int
accept(int fd, struct sockaddr *addr, socklen_t *len)
{
    struct pl_ctx ctx;
    struct pl_sock *s;
    int rc;

    if (!pl_active())
        return libc_accept(fd, addr, len);
    s = pl_wrap_sock(fd, PL_ST_ACCEL);
    if (s == NULL)
        return libc_accept(fd, addr, len);
    pl_enter(&ctx);
    rc = pl_sock_accept(s, fd, addr, len, 0);
    pl_wrap_put(&s->hdr);
    return (int)pl_exit(&ctx, rc);
}

int
connect(int fd, const struct sockaddr *addr, socklen_t len)
{
    struct pl_ctx ctx;
    struct pl_sock *s;
    int rc;

    if (!pl_active())
        return libc_connect(fd, addr, len);
    s = pl_wrap_sock(fd, PL_ST_UNDECIDED | PL_ST_ACCEL);
    if (s == NULL)
        return libc_connect(fd, addr, len);
    pl_enter(&ctx);
    rc = pl_sock_connect(s, fd, addr, len);
    pl_wrap_put(&s->hdr);
    return (int)pl_exit(&ctx, rc);
}

int
shutdown(int fd, int how)
{
    struct pl_ctx ctx;
    struct pl_sock *s;
    int rc;

    if (!pl_active())
        return libc_shutdown(fd, how);
    s = pl_wrap_sock(fd, PL_ST_ACCEL);
    if (s == NULL)
        return libc_shutdown(fd, how);
    pl_enter(&ctx);
    rc = pl_sock_shutdown(s, fd, how);
    pl_wrap_put(&s->hdr);
    return (int)pl_exit(&ctx, rc);
}

int
setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
    struct pl_ctx ctx;
    struct pl_sock *s;
    int rc;

    if (!pl_active())
        return libc_setsockopt(fd, level, name, val, len);
    s = pl_wrap_sock(fd, PL_ST_UNDECIDED | PL_ST_ACCEL);
    if (s == NULL)
        return libc_setsockopt(fd, level, name, val, len);
    pl_enter(&ctx);
    rc = pl_sock_setsockopt(s, fd, level, name, val, len);
    pl_wrap_put(&s->hdr);
    return (int)pl_exit(&ctx, rc);
}

int
getsockopt(int fd, int level, int name, void *val, socklen_t *len)
{
    struct pl_ctx ctx;
    struct pl_sock *s;
    int rc;

    if (!pl_active())
        return libc_getsockopt(fd, level, name, val, len);
    s = pl_wrap_sock(fd, PL_ST_ACCEL);
    if (s == NULL)
        return libc_getsockopt(fd, level, name, val, len);
    pl_enter(&ctx);
    rc = pl_sock_getsockopt(s, fd, level, name, val, len);
    pl_wrap_put(&s->hdr);
    return (int)pl_exit(&ctx, rc);
}

int
getsockname(int fd, struct sockaddr *addr, socklen_t *len)
{
    struct pl_ctx ctx;
    struct pl_sock *s;
    int rc;

    if (!pl_active())
        return libc_getsockname(fd, addr, len);
    s = pl_wrap_sock(fd, PL_ST_ACCEL);
    if (s == NULL)
        return libc_getsockname(fd, addr, len);
    pl_enter(&ctx);
    rc = pl_sock_getname(s, fd, addr, len, false);
    pl_wrap_put(&s->hdr);
    return (int)pl_exit(&ctx, rc);
}

int
getpeername(int fd, struct sockaddr *addr, socklen_t *len)
{
    struct pl_ctx ctx;
    struct pl_sock *s;
    int rc;

    if (!pl_active())
        return libc_getpeername(fd, addr, len);
    s = pl_wrap_sock(fd, PL_ST_ACCEL);
    if (s == NULL)
        return libc_getpeername(fd, addr, len);
    pl_enter(&ctx);
    rc = pl_sock_getname(s, fd, addr, len, true);
    pl_wrap_put(&s->hdr);
    return (int)pl_exit(&ctx, rc);
}
