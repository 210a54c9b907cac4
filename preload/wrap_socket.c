/*
 * The interposed socket(): it passes through while the runtime itself
 * makes sockets (DPDK's port sockets), and otherwise creates the kernel
 * socket and, for a candidate, our socket behind its fd. The other socket
 * control calls (bind, listen, accept, connect, shutdown, the options and
 * names) have the common shape and are generated (wrap_gen.c).
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
setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
    struct pl_ctx ctx;
    struct pl_sock *s;
    ssize_t rc;

    if (base_in_lib && level == SOL_XDP && name == XDP_UMEM_REG) {
        /* libxdp registering the af_xdp port's umem: without
         * CAP_IPC_LOCK accel-broker registers it (runtime/broker_client.c). */
        rc = rt_broker_umem_reg(fd, val, len);
        if (rc != -ENOSYS) {
            if (rc == 0)
                return 0;
            errno = (int)-rc;
            return -1;
        }
    }
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
socket(int domain, int type, int protocol)
{
    struct pl_ctx ctx;
    struct pl_sock *s;
    enum pl_why why;
    int fd;

    if (base_in_lib) {
        /* DPDK creating its port sockets: the runtime may wait on them.
         * Without CAP_NET_RAW the XSK comes from accel-broker. */
        fd = domain == AF_XDP ? rt_broker_socket(type) : -ENOSYS;
        if (fd == -ENOSYS) {
            fd = libc_socket(domain, type, protocol);
        } else if (fd < 0) {
            errno = -fd;
            fd = -1;
        }
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
    if (pl_sock_candidate(domain, type, protocol, &why)) {
        s = pl_sock_new(domain, type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC),
                        (type & SOCK_NONBLOCK) != 0);
        /* Without memory the socket simply stays a kernel one. */
        if (s != NULL) {
            pl_fdt_install(fd, &s->hdr);
            pl_fd_put(&s->hdr);
        } else {
            pl_why_note(fd, PL_WHY_nostack, "socket", NULL, 0);
        }
    } else if (why != PL_WHY_COUNT) {
        pl_why_note(fd, why, "socket", NULL, 0);
    }
    return (int)pl_exit(&ctx, fd);
}
