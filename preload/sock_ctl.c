/*
 * Control operations on a pl_sock: bind, listen, accept, connect,
 * shutdown, socket options, names, ioctl and fcntl. Each one takes the
 * acceleration decision when the socket is still UNDECIDED (decide.h),
 * then works on the stack socket (ACCEL) or on the kernel socket (KERNEL,
 * or requests the stack does not implement). The kernel socket sees every
 * setsockopt first, so validation and errno are Linux's own.
 *
 * INADDR_ANY: the stack socket binds ANY:port and the kernel socket binds
 * the same port on ANY (listening too for TCP), so clients on 127.0.0.1
 * still reach the application; accept() takes from the stack queue first,
 * then from the kernel one. When the kernel bind fails (the port is taken
 * on the kernel) the socket is served by the stack alone.
 *
 * Shared address (base_cfg.ip_shared, ip6_shared: the stack has the
 * kernel's own address): every local port of the stack is the kernel's first.
 * bind() binds the kernel socket as the application asked (port 0: the kernel
 * picks) and the stack socket then binds the port the kernel gave; an
 * unbound socket that connects, sends or listens has its kernel socket
 * bound first (pl_sock_kreserve). So the kernel never hands one of the
 * stack's ports to its own sockets, the stack never takes one of the
 * kernel's, and bind() fails with the kernel's EADDRINUSE.
 */
#include "sock.h"

#include <fcntl.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>

#include "epoll.h"
#include "kfile.h"
#include "libc.h"
#include "log.h"
#include "pl.h"
#include "route.h"
#include "rt.h"
#include "stk.h"

#ifndef SO_RCVTIMEO_NEW
#define SO_RCVTIMEO_NEW 66
#define SO_SNDTIMEO_NEW 67
#endif

/* Bind the kernel socket to ANY and the port the stack socket got. */
static void
bind_kernel_side(struct pl_sock *s, int fd)
{
    int rc = pl_sock_kbind_any(s, fd);

    if (rc < 0 && rc != -EINVAL)
        BASE_INFO("fd",
                  "fd %d: its port is taken on the kernel (%s): served by "
                  "the stack only",
                  fd, strerror(-rc));
}

/* The port the kernel socket has (network order), 0 if none. */
static uint16_t
kernel_port(int fd)
{
    struct sockaddr_in6 s6; /* the port is at the same place in both */
    socklen_t len = sizeof(s6);

    if (libc_getsockname(fd, (struct sockaddr *)&s6, &len) != 0 ||
        (s6.sin6_family != AF_INET && s6.sin6_family != AF_INET6))
        return 0;
    return s6.sin6_port;
}

/* True when the kernel socket already has a local port. */
static bool
kernel_bound(int fd)
{
    return kernel_port(fd) != 0;
}

/* The port of a bind's address (sockaddr_in and sockaddr_in6 keep it at
 * the same place). */
static uint16_t
addr_port(const struct sockaddr *a)
{
    return ((const struct sockaddr_in *)a)->sin_port;
}

/* Bind the stack socket to a with the kernel socket's port (a copy of a,
 * len <= sizeof(struct sockaddr_in6)). */
static int
stack_bind_kport(struct pl_sock *s, int fd, const struct sockaddr *a,
                 socklen_t len)
{
    struct sockaddr_in6 b;
    int rc;

    if (len > sizeof(b))
        len = sizeof(b);
    memset(&b, 0, sizeof(b));
    memcpy(&b, a, len);
    b.sin6_port = kernel_port(fd); /* the same place in sockaddr_in */
    rt_lock();
    rc = stk_sock_bind(s->stk, (const struct sockaddr *)&b, len);
    rt_unlock();
    return rc;
}

int
pl_sock_kreserve(struct pl_sock *s, int fd, bool v6)
{
    struct sockaddr_in sin = {.sin_family = AF_INET};
    struct sockaddr_in6 s6 = {.sin6_family = AF_INET6};
    const struct sockaddr *a = (const struct sockaddr *)&sin;
    socklen_t len = sizeof(sin);
    int rc;

    if (!(v6 ? base_cfg.ip6_shared : base_cfg.ip_shared) || kernel_bound(fd))
        return 0;
    sin.sin_addr.s_addr = base_cfg.ip_addr;
    if (v6) {
        s6.sin6_addr = base_cfg.ip6_addr;
        a = (const struct sockaddr *)&s6;
        len = sizeof(s6);
    } else if (s->kfamily == AF_INET6) {
        s6.sin6_addr.s6_addr[10] = s6.sin6_addr.s6_addr[11] = 0xff;
        memcpy(&s6.sin6_addr.s6_addr[12], &base_cfg.ip_addr, 4);
        a = (const struct sockaddr *)&s6;
        len = sizeof(s6);
    }
    if (libc_bind(fd, a, len) < 0)
        return -errno;
    rc = stack_bind_kport(s, fd, a, len);
    if (rc == 0 && s->type == SOCK_DGRAM)
        pl_sock_kside_on(s, fd); /* fragments: the kernel reassembles */
    else if (rc == 0)
        pl_sock_kfd_own(s, fd); /* held past close (rt_sock_close_hold) */
    return rc;
}

int
pl_sock_bind(struct pl_sock *s, int fd, const struct sockaddr *a, socklen_t len)
{
    const struct sockaddr *ra;
    socklen_t rlen = len;
    struct sockaddr_in v4;
    enum pl_why why = PL_WHY_local_addr;
    enum pl_in6 k;
    enum pl_route r;
    bool kbound, kfirst;
    int rc;

    /* move_addr_to_kernel: the copy faults before any protocol check */
    if (a == NULL && len > 0 && len <= sizeof(struct sockaddr_storage))
        return -EFAULT;
    pthread_mutex_lock(&s->mu);
    k = pl_sock_view(s, fd, true, a, len, &v4);
    switch (pl_sock_state(s)) {
    case PL_SOCK_ACCEL:
        pthread_mutex_unlock(&s->mu);
        if (!pl_sock_live(s))
            return -EBADF;
        if (k == PL_IN6_BAD)
            return (int)pl_sysret(libc_bind(fd, a, len)); /* Linux's errno */
        rt_lock();
        rc = stk_sock_bind(s->stk, a, len);
        rt_unlock();
        if (rc == 0 && s->type == SOCK_DGRAM)
            pl_sock_serve(s, RT_SERVE_ON);
        return rc;
    case PL_SOCK_KERNEL:
        pthread_mutex_unlock(&s->mu);
        return (int)pl_sysret(libc_bind(fd, a, len));
    default:
        break;
    }
    ra = pl_sock_route_addr(k, a, &rlen, &v4);
    if (k == PL_IN6_NATIVE)
        r = pl_sock_route_bind6(s->type, fd, a, len, false, &why);
    else if (k == PL_IN6_BAD)
        r = PL_ROUTE_PASS;
    else
        r = pl_sock_route_bind(s->type, fd, ra, rlen, &why);
    /* TCP on a multicast address: Linux's call (EINVAL) */
    if (r == PL_ROUTE_ACCEL && s->type == SOCK_STREAM &&
        (k == PL_IN6_NATIVE
             ? IN6_IS_ADDR_MULTICAST(
                   &((const struct sockaddr_in6 *)a)->sin6_addr)
             : (ntohl(((const struct sockaddr_in *)ra)->sin_addr.s_addr) >>
                28) == 0xe)) {
        r = PL_ROUTE_KERNEL;
        why = PL_WHY_tcp_mcast;
    }
    /* Not ours to take: the kernel decides, and the socket stays there
     * only once a bind succeeded. An UNDECIDED socket the kernel already
     * bound (autobind by an earlier send) cannot be bound again. */
    if ((r == PL_ROUTE_ACCEL || r == PL_ROUTE_ACCEL_ANY) && kernel_bound(fd)) {
        /* Our address is local for the application, so Linux's answer is
         * "already bound", whatever the kernel thinks of the address. */
        pthread_mutex_unlock(&s->mu);
        return -EINVAL;
    }
    if (r == PL_ROUTE_PASS || r == PL_ROUTE_KERNEL) {
        rc = (int)pl_sysret(libc_bind(fd, a, len));
        if (rc == 0)
            pl_sock_to_kernel(s, fd, why, "bind", a, len);
        pthread_mutex_unlock(&s->mu);
        return rc;
    }
    /* The wildcard on a given port: the kernel socket binds it first (its
     * kernel side), so a port the kernel holds, by another program or by
     * one of this one's kernel sockets, is EADDRINUSE as on Linux. With
     * port 0 the stack picks the port, and the kernel side follows it. */
    /* Shared address: the kernel socket takes the port first, whatever
     * it is (a group's port stays the stack's: the kernel's own groups
     * are not steered). */
    kfirst = (r == PL_ROUTE_ACCEL_ANY && pl_shared_addr()) ||
             (r == PL_ROUTE_ACCEL &&
              (k == PL_IN6_NATIVE
                   ? base_cfg.ip6_shared &&
                         IN6_ARE_ADDR_EQUAL(
                             &((const struct sockaddr_in6 *)a)->sin6_addr,
                             &base_cfg.ip6_addr)
                   : base_cfg.ip_shared &&
                         ((const struct sockaddr_in *)ra)->sin_addr.s_addr ==
                             base_cfg.ip_addr));
    kbound = (r == PL_ROUTE_ACCEL_ANY && addr_port(a) != 0) || kfirst;
    if (kbound && libc_bind(fd, a, len) < 0) {
        rc = -errno;
        pthread_mutex_unlock(&s->mu);
        return rc;
    }
    rc = pl_sock_accelerate(s, fd);
    if (rc < 0) {
        pl_sock_to_kernel(s, fd, pl_sock_accel_why(rc), "bind", a, len);
        pthread_mutex_unlock(&s->mu);
        return kbound ? 0 : (int)pl_sysret(libc_bind(fd, a, len));
    }
    if (kfirst) {
        rc = stack_bind_kport(s, fd, a, len);
    } else {
        rt_lock();
        rc = stk_sock_bind(s->stk, a, len);
        rt_unlock();
    }
    /* A stack bind that fails after the kernel's (the port taken on the
     * stack by a socket bound to the stack's own address, which has no
     * kernel side) leaves the kernel socket bound: the application
     * closes it, as it does after EADDRINUSE. */
    if (rc == 0 && kbound)
        pl_sock_kside_on(s, fd);
    else if (rc == 0 && r == PL_ROUTE_ACCEL_ANY)
        bind_kernel_side(s, fd);
    pthread_mutex_unlock(&s->mu);
    if (rc == 0 && s->type == SOCK_DGRAM)
        pl_sock_serve(s, RT_SERVE_ON);
    return rc;
}

int
pl_sock_listen(struct pl_sock *s, int fd, int backlog)
{
    struct sockaddr_in any = {.sin_family = AF_INET};
    struct sockaddr_in6 any6 = {.sin6_family = AF_INET6};
    const struct sockaddr *a = (const struct sockaddr *)&any;
    socklen_t alen = sizeof(any);
    enum pl_why why = PL_WHY_COUNT;
    int rc = 0;

    if (s->kfamily == AF_INET6) {
        a = (const struct sockaddr *)&any6;
        alen = sizeof(any6);
    }
    pthread_mutex_lock(&s->mu);
    if (pl_sock_state(s) == PL_SOCK_UNDECIDED) {
        /* listen() on an unbound socket binds ANY:ephemeral (Linux); on
         * an IPV6_V6ONLY socket that is IPv6 only. */
        if (s->type != SOCK_STREAM) {
            rc = -EOPNOTSUPP; /* the kernel's own answer follows */
        } else if (pl_sock_v6only(s, fd)
                       ? pl_sock_route_bind6(s->type, fd, a, alen, false,
                                             &why) == PL_ROUTE_KERNEL
                       : pl_sock_route_listen(fd, &why) == PL_ROUTE_KERNEL) {
            rc = -EPERM;
        } else {
            rc = pl_sock_accelerate(s, fd);
            why = pl_sock_accel_why(rc);
        }
        if (rc < 0) {
            if (s->type == SOCK_STREAM)
                pl_sock_to_kernel(s, fd, why, "listen", NULL, 0);
            pthread_mutex_unlock(&s->mu);
            return (int)pl_sysret(libc_listen(fd, backlog));
        }
        if (pl_shared_addr()) {
            /* the kernel picks the port (EADDRINUSE is its own) */
            rc = libc_bind(fd, a, alen) < 0 ? -errno
                                            : stack_bind_kport(s, fd, a, alen);
            if (rc == 0)
                pl_sock_kside_on(s, fd);
        } else {
            rt_lock();
            rc = stk_sock_bind(s->stk, a, alen);
            rt_unlock();
            if (rc == 0)
                bind_kernel_side(s, fd);
        }
        if (rc < 0) {
            pthread_mutex_unlock(&s->mu);
            return rc;
        }
    }
    if (pl_sock_state(s) == PL_SOCK_KERNEL) {
        pthread_mutex_unlock(&s->mu);
        return (int)pl_sysret(libc_listen(fd, backlog));
    }
    if (!pl_sock_live(s)) {
        pthread_mutex_unlock(&s->mu);
        return -EBADF;
    }
    rt_lock();
    rc = stk_sock_listen(s->stk, backlog);
    rt_poll();
    rt_unlock();
    if (rc == 0)
        pl_sock_serve(s, RT_SERVE_DECLARE);
    if (rc == 0 && atomic_load(&s->kside)) {
        if (libc_listen(fd, backlog) == 0)
            atomic_store(&s->klisten, true);
    }
    pthread_mutex_unlock(&s->mu);
    if (rc == 0)
        pl_ep_sock_listening(s);
    return rc;
}

struct accept_arg {
    struct stk_sock *ns;
    struct sockaddr *a;
    socklen_t *len;
};

/* The listener may be shared by processes (a fork, an exec'd child that
 * joined): the runtime's accept takes what they left for this one. */
static ssize_t
accept_op(struct stk_sock *stk, void *arg)
{
    struct accept_arg *x = arg;

    return rt_sock_accept(stk, &x->ns, x->a, x->len);
}

/* Options only the kernel socket keeps (the stack does not) that Linux
 * copies from a listener to its children. */
static const struct {
    int level, name;
} kinherit[] = {
    {SOL_SOCKET, SO_PRIORITY},        {SOL_SOCKET, SO_MARK},
    {SOL_SOCKET, SO_RCVLOWAT},        {SOL_SOCKET, SO_OOBINLINE},
    {SOL_SOCKET, SO_DONTROUTE},       {IPPROTO_TCP, TCP_USER_TIMEOUT},
    {IPPROTO_TCP, TCP_SYNCNT},        {IPPROTO_TCP, TCP_LINGER2},
    {IPPROTO_TCP, TCP_NOTSENT_LOWAT}, {IPPROTO_IP, IP_TTL},
    {IPPROTO_IP, IP_MTU_DISCOVER},    {IPPROTO_IP, IP_RECVERR},
};

/* The accepted socket n (at nfd, on the template) takes each of those the
 * listener's kernel socket lkfd holds with another value than the
 * template's, on a kernel socket of its own. Only after the listener was
 * given such an option (kopts): the common accept costs no system call. */
static void
inherit_kopts(int lkfd, struct pl_sock *n, int nfd)
{
    for (size_t i = 0; i < sizeof(kinherit) / sizeof(kinherit[0]); i++) {
        int lv, nv;
        socklen_t ll = sizeof(lv), nl = sizeof(nv);

        if (libc_getsockopt(lkfd, kinherit[i].level, kinherit[i].name, &lv,
                            &ll) < 0 ||
            libc_getsockopt(nfd, kinherit[i].level, kinherit[i].name, &nv,
                            &nl) < 0 ||
            lv == nv)
            continue;
        pl_kfile_own(n, nfd);
        libc_setsockopt(nfd, kinherit[i].level, kinherit[i].name, &lv,
                        sizeof(lv));
    }
}

/* A new fd for an accepted stack connection: a duplicate of the template
 * socket holds the number (kfile.h); lkfd is the listener's kernel socket. */
static int
install_accepted(const struct pl_sock *l, int lkfd, struct stk_sock *ns,
                 int flags)
{
    struct pl_sock *n;
    int nfd, rc;

    nfd = pl_kfile_shared(l->kfamily, flags);
    if (nfd < 0) {
        rc = nfd;
        goto fail;
    }
    n = pl_sock_new_accepted(l, ns, (flags & SOCK_NONBLOCK) != 0);
    if (n == NULL) {
        libc_close(nfd);
        rc = -ENOMEM;
        goto fail;
    }
    atomic_store(&n->kshared, true);
    rc = pl_fdt_install(nfd, &n->hdr);
    if (rc >= 0 && atomic_load(&l->kopts))
        inherit_kopts(lkfd, n, nfd);
    pl_fd_put(&n->hdr);
    if (rc < 0) {
        libc_close(nfd);
        return rc; /* n was destroyed with ns */
    }
    return nfd;
fail:
    rt_lock();
    stk_sock_close(ns);
    rt_unlock();
    return rc;
}

int
pl_sock_accept(struct pl_sock *s, int fd, struct sockaddr *a, socklen_t *len,
               int flags)
{
    struct accept_arg x = {.a = a, .len = len};
    int64_t deadline = pl_sock_deadline(s, false);
    unsigned sig0 = rt_sig_count; /* handlers that run from here on count */
    int rc;

    if (flags & ~(SOCK_NONBLOCK | SOCK_CLOEXEC))
        return -EINVAL;
    if (!pl_sock_live(s))
        return -EBADF;

    pl_sock_serve(s, RT_SERVE_ON);
    for (;;) {
        rc = (int)pl_sock_run(s, accept_op, &x);
        if (rc == 0) {
            pl_sock_accepted(s);
            return install_accepted(s, pl_sock_kfd(s, fd), x.ns, flags);
        }
        if (rc != -EAGAIN)
            return rc;
        if (atomic_load(&s->klisten)) {
            rc = libc_accept4(pl_sock_kfd(s, fd), a, len, flags);
            if (rc >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
                return (int)pl_sysret(rc);
        }
        if (atomic_load(&s->nonblock))
            return -EAGAIN;
        pl_sock_accept_wait(s, true, true);
        rc = pl_sock_wait(s, fd, EPOLLIN, deadline, RT_WAIT_ACCEPT, &sig0);
        pl_sock_accept_wait(s, false, true);
        if (rc == -EINTR && pl_sock_restart(s, false))
            continue;
        if (rc < 0)
            return rc;
    }
}

struct connect_arg {
    const struct sockaddr *a;
    socklen_t len;
};

static ssize_t
connect_op(struct stk_sock *stk, void *arg)
{
    struct connect_arg *x = arg;

    return stk_sock_connect(stk, x->a, x->len);
}

/* bind(ANY) then connect() to a destination the stack cannot reach (for
 * example 127.0.0.1): the socket moves to the kernel, which already holds
 * the same local port. */
static bool
demote_for_connect(struct pl_sock *s, int fd, const struct sockaddr *a,
                   socklen_t len, enum pl_in6 k, const struct sockaddr_in *v4)
{
    enum pl_why why = PL_WHY_dest;
    socklen_t rlen = len;
    const struct sockaddr *ra = pl_sock_route_addr(k, a, &rlen, v4);
    bool done = false;

    if ((k == PL_IN6_NATIVE ? pl_sock_route_connect6(s->type, fd, a, len, &why)
                            : pl_sock_route_connect(s->type, fd, ra, rlen,
                                                    &why)) != PL_ROUTE_KERNEL)
        return false;
    pthread_mutex_lock(&s->mu);
    if (pl_sock_live(s) && atomic_load(&s->kside) &&
        !atomic_load(&s->klisten)) {
        pl_sock_to_kernel(s, fd, why, "connect", a, len);
        done = true;
    }
    pthread_mutex_unlock(&s->mu);
    return done;
}

int
pl_sock_connect(struct pl_sock *s, int fd, const struct sockaddr *a,
                socklen_t len)
{
    struct connect_arg x = {.a = a, .len = len};
    unsigned sig0 = rt_sig_count; /* handlers that run from here on count */
    struct sockaddr_in v4;
    enum pl_in6 k;
    int64_t deadline;
    int rc, first;

    pthread_mutex_lock(&s->mu);
    k = pl_sock_view(s, fd, false, a, len, &v4);
    if (pl_sock_state(s) == PL_SOCK_UNDECIDED &&
        pl_sock_decide_remote(s, fd, k, a, len, &v4, "connect") ==
            PL_ROUTE_PASS) {
        pthread_mutex_unlock(&s->mu);
        return (int)pl_sysret(libc_connect(fd, a, len));
    }
    pthread_mutex_unlock(&s->mu);
    if (pl_sock_state(s) == PL_SOCK_KERNEL)
        return (int)pl_sysret(libc_connect(fd, a, len));
    if (!pl_sock_live(s))
        return -EBADF;
    if (k == PL_IN6_BAD) /* Linux's errno, from the unconnected kernel socket */
        return (int)pl_sysret(libc_connect(fd, a, len));
    if (demote_for_connect(s, fd, a, len, k, &v4))
        return (int)pl_sysret(libc_connect(fd, a, len));
    if (pl_shared_addr()) {
        pthread_mutex_lock(&s->mu);
        rc = pl_sock_kreserve(s, fd, k == PL_IN6_NATIVE);
        pthread_mutex_unlock(&s->mu);
        if (rc < 0)
            return rc;
    }

    deadline = pl_sock_deadline(s, true);
    rc = (int)pl_sock_run(s, connect_op, &x);
    /* A blocking connect waits for the outcome of the attempt it started,
     * or of one already in progress (EALREADY only without waiting). */
    if ((rc != -EINPROGRESS && rc != -EALREADY) || atomic_load(&s->nonblock))
        return rc;
    first = rc;
    for (;;) {
        rc = pl_sock_wait(s, fd, EPOLLOUT, deadline, RT_WAIT_CONNECT, &sig0);
        if (rc == -EAGAIN)
            return first; /* SO_SNDTIMEO expired: its first answer (Linux) */
        if (rc == -EINTR && !pl_sock_restart(s, true))
            return -EINTR;
        rc = (int)pl_sock_run(s, connect_op, &x);
        if (rc == -EISCONN)
            return 0;
        if (rc != -EALREADY && rc != -EINPROGRESS)
            return rc;
    }
}

int
pl_sock_shutdown(struct pl_sock *s, int fd, int how)
{
    int rc;

    if (pl_sock_state(s) != PL_SOCK_ACCEL)
        return (int)pl_sysret(libc_shutdown(fd, how));
    if (!pl_sock_live(s))
        return -EBADF;
    rt_lock();
    rc = stk_sock_shutdown(s->stk, how);
    rt_poll();
    rt_unlock();
    return rc;
}

static int64_t
timeval_ns(const void *val, socklen_t len)
{
    struct timeval tv;

    if (len < sizeof(tv))
        return 0;
    memcpy(&tv, val, sizeof(tv));
    if (tv.tv_sec < 0)
        return 0;
    return (int64_t)tv.tv_sec * 1000000000 + (int64_t)tv.tv_usec * 1000;
}

/* Multicast memberships (IP_* and the MCAST_* family) and
 * IP_MULTICAST_IF of a UDP socket name an interface: the stack answers
 * them itself once the socket is accelerated (the kernel socket has no
 * address on the interface, so it would refuse them, or join on a kernel
 * interface that never sees the frames). TTL, loop and IP_MULTICAST_ALL
 * take the generic path: the kernel validates, the stack stores. */
static bool
mc_if_opt(const struct pl_sock *s, int level, int name)
{
    if (s->type != SOCK_DGRAM || level != IPPROTO_IP)
        return false;
    switch (name) {
    case IP_ADD_MEMBERSHIP:
    case IP_DROP_MEMBERSHIP:
    case IP_ADD_SOURCE_MEMBERSHIP:
    case IP_DROP_SOURCE_MEMBERSHIP:
    case IP_BLOCK_SOURCE:
    case IP_UNBLOCK_SOURCE:
    case IP_MULTICAST_IF:
    case MCAST_JOIN_GROUP:
    case MCAST_LEAVE_GROUP:
    case MCAST_JOIN_SOURCE_GROUP:
    case MCAST_LEAVE_SOURCE_GROUP:
    case MCAST_BLOCK_SOURCE:
    case MCAST_UNBLOCK_SOURCE:
        return true;
    default:
        return false;
    }
}

/* The kernel's index of ACCEL_IFACE (0 with ACCEL_VDEV: no kernel
 * interface), by which ip_mreqn names the stack's interface. */
static int
our_ifindex(void)
{
    static atomic_int idx = -1;
    int v = atomic_load(&idx);

    if (v < 0) {
        v = base_cfg.vdev[0] == '\0' && base_cfg.iface[0] != '\0'
                ? (int)if_nametoindex(base_cfg.iface)
                : 0;
        atomic_store(&idx, v);
    }
    return v;
}

/* For an undecided socket: 1 when the option names the stack's interface
 * (its address, its index, or INADDR_ANY: the group's route), 0 when it
 * names another one, -1 when it is malformed (the kernel answers). */
static int
mc_names_ours(int name, const void *val, socklen_t len)
{
    struct ip_mreqn r;

    memset(&r, 0, sizeof(r));
    if (val == NULL)
        return -1;
    switch (name) {
    case IP_MULTICAST_IF:
        if (len < (socklen_t)sizeof(struct in_addr))
            return -1;
        if (len >= (socklen_t)sizeof(struct ip_mreqn))
            memcpy(&r, val, sizeof(r));
        else if (len >= (socklen_t)sizeof(struct ip_mreq))
            memcpy(&r, val, sizeof(struct ip_mreq));
        else
            memcpy(&r.imr_address, val, sizeof(r.imr_address));
        break;
    case IP_ADD_MEMBERSHIP:
    case IP_DROP_MEMBERSHIP:
        if (len < (socklen_t)sizeof(struct ip_mreq))
            return -1;
        memcpy(&r, val,
               len >= (socklen_t)sizeof(r) ? sizeof(r)
                                           : sizeof(struct ip_mreq));
        break;
    case MCAST_JOIN_GROUP:
    case MCAST_LEAVE_GROUP: /* by interface index only */
        if (len < (socklen_t)sizeof(struct group_req))
            return -1;
        memcpy(&r.imr_ifindex, val, sizeof(r.imr_ifindex));
        break;
    case MCAST_JOIN_SOURCE_GROUP:
    case MCAST_LEAVE_SOURCE_GROUP:
    case MCAST_BLOCK_SOURCE:
    case MCAST_UNBLOCK_SOURCE:
        if (len != (socklen_t)sizeof(struct group_source_req))
            return -1;
        memcpy(&r.imr_ifindex, val, sizeof(r.imr_ifindex));
        break;
    default: /* struct ip_mreq_source: group, interface, source */
        if (len != (socklen_t)sizeof(struct ip_mreq_source))
            return -1;
        memcpy(&r, val, sizeof(struct ip_mreq));
        break;
    }
    if (r.imr_ifindex != 0)
        return r.imr_ifindex == our_ifindex();
    return r.imr_address.s_addr == 0 ||
           r.imr_address.s_addr == base_cfg.ip_addr;
}

/* A multicast option naming an interface: the stack's answer for an
 * accelerated socket; an undecided one naming the stack's interface is
 * accelerated now (a receiver joins before or after its bind), one naming
 * another interface goes to the kernel once the kernel accepted it.
 * Returns 1 when the caller must take the generic path. */
static int
mc_setsockopt(struct pl_sock *s, int fd, int name, const void *val,
              socklen_t len, int *rc)
{
    struct pl_net net;
    int ours;

    pthread_mutex_lock(&s->mu);
    if (pl_sock_state(s) == PL_SOCK_UNDECIDED) {
        pl_sock_net(&net);
        ours = mc_names_ours(name, val, len);
        if (net.ip == 0 || ours < 0) {
            pthread_mutex_unlock(&s->mu);
            return 1;
        }
        if (ours == 0) {
            *rc =
                (int)pl_sysret(libc_setsockopt(fd, IPPROTO_IP, name, val, len));
            if (*rc == 0)
                pl_sock_to_kernel(s, fd, PL_WHY_mcast_if, "setsockopt", NULL,
                                  0);
            pthread_mutex_unlock(&s->mu);
            return 0;
        }
        ours = pl_sock_accelerate(s, fd);
        if (ours < 0) {
            pl_sock_to_kernel(s, fd, pl_sock_accel_why(ours), "setsockopt",
                              NULL, 0);
            pthread_mutex_unlock(&s->mu);
            return 1;
        }
    }
    if (pl_sock_state(s) != PL_SOCK_ACCEL || !pl_sock_live(s)) {
        pthread_mutex_unlock(&s->mu);
        return 1;
    }
    rt_lock();
    stk_set_ifindex(our_ifindex());
    *rc = stk_sock_setsockopt(s->stk, IPPROTO_IP, name, val, len);
    rt_poll(); /* the IGMP report goes out now */
    rt_unlock();
    pthread_mutex_unlock(&s->mu);
    return 0;
}

/* IPV6_ADDRFORM on an accelerated AF_INET6 socket (Linux's
 * do_ipv6_setsockopt): a connected one whose peer is IPv4 becomes an
 * AF_INET socket for the application (its names, SO_DOMAIN, the options
 * of its level). The stack socket is an IPv4 one already. */
static int
addrform(struct pl_sock *s, const void *val, socklen_t len)
{
    static const int rx6[] = {IPV6_RECVPKTINFO, IPV6_RECVHOPLIMIT,
                              IPV6_RECVTCLASS, IPV6_2292PKTINFO,
                              IPV6_2292HOPLIMIT};
    struct sockaddr_in6 peer;
    socklen_t plen = sizeof(peer);
    int v, rc, off = 0;

    if (val == NULL || len < (socklen_t)sizeof(int))
        return -EINVAL;
    memcpy(&v, val, sizeof(v));
    if (v != AF_INET)
        return -EINVAL;
    if (!pl_sock_live(s))
        return -EBADF;
    rt_lock();
    rc = stk_sock_getname(s->stk, (struct sockaddr *)&peer, &plen, true);
    rt_unlock();
    if (rc < 0)
        return -ENOTCONN;
    if (atomic_load(&s->v6only) || !IN6_IS_ADDR_V4MAPPED(&peer.sin6_addr))
        return -EADDRNOTAVAIL;
    atomic_store(&s->family, AF_INET);
    /* udp_prot's recvmsg gives the IP_ control messages only: the stack
     * socket forgets the IPv6 ones it was asked for. */
    rt_lock();
    for (size_t i = 0; i < sizeof(rx6) / sizeof(rx6[0]); i++)
        (void)stk_sock_setsockopt(s->stk, IPPROTO_IPV6, rx6[i], &off,
                                  sizeof(off));
    rt_unlock();
    return 0;
}

int
pl_sock_setsockopt(struct pl_sock *s, int fd, int level, int name,
                   const void *val, socklen_t len)
{
    int rc;

    if (mc_if_opt(s, level, name) &&
        mc_setsockopt(s, fd, name, val, len, &rc) == 0)
        return rc;
    if (level == IPPROTO_IPV6 && s->kfamily == AF_INET6 &&
        pl_sock_state(s) == PL_SOCK_ACCEL) {
        if (pl_sock_af(s) == AF_INET) /* after IPV6_ADDRFORM: tcp_prot's */
            return -ENOPROTOOPT;
        /* The stack socket has its port: Linux's inet_num test refuses. */
        if (name == IPV6_V6ONLY)
            return -EINVAL;
        if (name == IPV6_ADDRFORM)
            return addrform(s, val, len);
    }
    /* The template validates only options whose value the stack keeps. */
    if (atomic_load(&s->kshared) && !stk_sock_opt_owned(level, name))
        pl_kfile_own(s, fd);
    rc = (int)pl_sysret(libc_setsockopt(fd, level, name, val, len));
    if (rc < 0)
        return rc;
    if (s->type == SOCK_STREAM && !stk_sock_opt_owned(level, name))
        atomic_store(&s->kopts, true);
    pthread_mutex_lock(&s->mu);
    if (level == SOL_SOCKET && (name == SO_RCVTIMEO || name == SO_RCVTIMEO_NEW))
        atomic_store(&s->rcvtimeo, timeval_ns(val, len));
    if (level == SOL_SOCKET && (name == SO_SNDTIMEO || name == SO_SNDTIMEO_NEW))
        atomic_store(&s->sndtimeo, timeval_ns(val, len));
    if (pl_sock_state(s) == PL_SOCK_UNDECIDED) {
        pl_sock_record_opt(s, level, name, val, len);
    } else if (pl_sock_live(s)) {
        /* The kernel accepted it: options the stack does not implement
         * keep their kernel value, which getsockopt reports. */
        rt_lock();
        rc = stk_sock_setsockopt(s->stk, level, name, val, len);
        rt_unlock();
        if (rc < 0 && rc != -ENOPROTOOPT && rc != -EOPNOTSUPP)
            BASE_DBG("fd", "fd %d: stack refused option %d/%d: %s", fd, level,
                     name, strerror(-rc));
    }
    pthread_mutex_unlock(&s->mu);
    return 0;
}

/* An int option's value, as sock_getsockopt copies it: at most *len
 * bytes, *len set to what was copied. */
static int
put_int(void *val, socklen_t *len, int v)
{
    if (val == NULL || len == NULL)
        return -EFAULT;
    if ((int)*len < 0)
        return -EINVAL;
    if (*len > sizeof(v))
        *len = sizeof(v);
    memcpy(val, &v, *len);
    return 0;
}

int
pl_sock_getsockopt(struct pl_sock *s, int fd, int level, int name, void *val,
                   socklen_t *len)
{
    int rc;

    if (pl_sock_af(s) != s->kfamily) { /* converted by IPV6_ADDRFORM */
        if (level == IPPROTO_IPV6)
            return -EOPNOTSUPP; /* ip_getsockopt's answer */
        if (level == SOL_SOCKET && name == SO_DOMAIN)
            return put_int(val, len, pl_sock_af(s));
    }
    if (!pl_sock_meta(s) ||
        (level == SOL_SOCKET && (name == SO_RCVTIMEO || name == SO_SNDTIMEO ||
                                 name == SO_RCVTIMEO_NEW ||
                                 name == SO_SNDTIMEO_NEW || name == SO_DOMAIN)))
        return (int)pl_sysret(libc_getsockopt(fd, level, name, val, len));
    /* The kernel socket renders SO_LINGER's time in its own ticks (a
     * negative time reads back as the kernel clamps it); an accepted
     * socket still on the shared template has only the stack's copy. */
    if (level == SOL_SOCKET && name == SO_LINGER && !atomic_load(&s->kshared))
        return (int)pl_sysret(libc_getsockopt(fd, level, name, val, len));
    if (len != NULL && (int)*len < 0)
        return -EINVAL;
    rt_lock();
    rc = stk_sock_getsockopt(s->stk, level, name, val, len);
    rt_unlock();
    if (rc == -ENOPROTOOPT || rc == -EOPNOTSUPP)
        rc = (int)pl_sysret(libc_getsockopt(fd, level, name, val, len));
    return rc;
}

int
pl_sock_getname(struct pl_sock *s, int fd, struct sockaddr *a, socklen_t *len,
                bool peer)
{
    struct sockaddr_in6 n6;
    socklen_t n6len = sizeof(n6), n;
    int rc;

    if (!pl_sock_meta(s))
        return (int)pl_sysret(peer ? libc_getpeername(fd, a, len)
                                   : libc_getsockname(fd, a, len));
    /* As __sys_getpeername: the protocol answers first (ENOTCONN), then
     * move_addr_to_user reads the length (EFAULT, EINVAL) and copies. */
    rt_lock();
    rc = stk_sock_getname(s->stk, (struct sockaddr *)&n6, &n6len, peer);
    rt_unlock();
    if (rc < 0)
        return rc;
    if (len == NULL)
        return -EFAULT;
    if ((int)*len < 0)
        return -EINVAL;
    if (pl_sock_af(s) != s->kfamily) { /* after IPV6_ADDRFORM */
        if (a == NULL && *len > 0)
            return -EFAULT;
        pl_sock_name_v4(&n6, n6len, a, len);
        return 0;
    }
    n = *len < n6len ? *len : n6len;
    if (a == NULL && n > 0)
        return -EFAULT;
    memcpy(a, &n6, n);
    *len = n6len;
    return 0;
}

int
pl_sock_ioctl(struct pl_sock *s, int fd, unsigned long req, unsigned long arg)
{
    int *p = (int *)arg;
    int n;

    if (req == FIONBIO) {
        if (p == NULL)
            return -EFAULT;
        return pl_sock_set_nonblock(s, fd, *p != 0);
    }
    if (!pl_sock_live(s) ||
        (req != FIONREAD && req != SIOCOUTQ && req != SIOCOUTQNSD))
        return (int)pl_sysret(libc_ioctl(fd, req, arg));
    rt_lock();
    n = req == FIONREAD   ? stk_sock_inq(s->stk)
        : req == SIOCOUTQ ? stk_sock_outq(s->stk)
                          : stk_sock_outq_notsent(s->stk);
    rt_unlock();
    if (n == 0 && req == FIONREAD && s->type == SOCK_DGRAM &&
        atomic_load(&s->kside))
        return (int)pl_sysret(libc_ioctl(fd, req, arg));
    /* The protocol's answer (EINVAL on a listener) before put_user's. */
    if (n < 0)
        return n;
    if (p == NULL)
        return -EFAULT;
    *p = n;
    return 0;
}

int
pl_sock_fcntl(struct pl_sock *s, int fd, int cmd, unsigned long arg)
{
    int fl, rc;

    switch (cmd) {
    case F_GETFL:
        fl = libc_fcntl(fd, F_GETFL, 0);
        if (fl < 0)
            return -errno;
        if (pl_sock_state(s) == PL_SOCK_ACCEL)
            fl = (fl & ~O_NONBLOCK) |
                 (atomic_load(&s->nonblock) ? O_NONBLOCK : 0);
        return fl;
    case F_SETFL:
        if (arg & ~(unsigned long)(O_NONBLOCK | O_ACCMODE))
            pl_kfile_own(s, fd); /* O_ASYNC, O_APPEND...: its own file */
        pthread_mutex_lock(&s->mu);
        if (pl_sock_state(s) == PL_SOCK_ACCEL)
            rc = libc_fcntl(fd, F_SETFL, arg | O_NONBLOCK);
        else
            rc = libc_fcntl(fd, F_SETFL, arg);
        if (rc == 0)
            atomic_store(&s->nonblock, (arg & O_NONBLOCK) != 0);
        else
            rc = -errno;
        pthread_mutex_unlock(&s->mu);
        return rc;
    default:
        return (int)pl_sysret(libc_fcntl(fd, cmd, arg));
    }
}
