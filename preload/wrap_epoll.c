/*
 * Interposed epoll calls. Every epoll instance the application creates is
 * tracked (epoll.c); epoll_ctl on it routes our sockets to the interest
 * list and kernel fds to the kernel, and waits on an instance holding any
 * socket of ours go through the mixed wait. Instances holding only kernel
 * fds (and instances created inside the library, e.g. by DPDK) are plain
 * kernel calls. EAL's interrupt thread is one special case: with a memif
 * port shared across fork, its callbacks run under the port lock.
 */
#include <sys/epoll.h>

#include "epoll.h"
#include "libc.h"
#include "rt.h"
#include "wrap.h"

/* The interposed definitions below are the library's exports. */
#pragma GCC visibility push(default)

static int
track(struct pl_ctx *ctx, int fd)
{
    if (fd < 0)
        return (int)pl_exit(ctx, -errno);
    pl_ep_track(fd); /* without memory the instance stays plain */
    return (int)pl_exit(ctx, fd);
}

int
epoll_create(int size)
{
    struct pl_ctx ctx;

    if (!pl_active())
        return libc_epoll_create(size);
    pl_enter(&ctx);
    return track(&ctx, libc_epoll_create(size));
}

int
epoll_create1(int flags)
{
    struct pl_ctx ctx;

    if (!pl_active())
        return libc_epoll_create1(flags);
    pl_enter(&ctx);
    return track(&ctx, libc_epoll_create1(flags));
}

/* The tracked instance behind epfd with a reference, or NULL. */
static struct pl_epoll *
epoll_get(int epfd)
{
    struct pl_fd *f;
    struct pl_epoll *ep;

    if (!pl_fdt_peek(epfd))
        return NULL;
    f = pl_fdt_get(epfd);
    ep = pl_epoll_of(f);
    if (ep == NULL)
        pl_wrap_put(f);
    return ep;
}

int
epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
    struct pl_epoll *ep;
    struct pl_ctx ctx;
    int rc;

    if (!pl_active())
        return libc_epoll_ctl(epfd, op, fd, ev);
    ep = epoll_get(epfd);
    if (ep == NULL)
        return libc_epoll_ctl(epfd, op, fd, ev);
    pl_enter(&ctx);
    rc = pl_ep_ctl(ep, epfd, op, fd, ev);
    pl_wrap_put((struct pl_fd *)ep);
    return (int)pl_exit(&ctx, rc);
}

int
epoll_pwait(int epfd, struct epoll_event *evs, int max, int timeout,
            const sigset_t *mask)
{
    struct pl_epoll *ep;
    struct pl_ctx ctx;
    int rc;

    if (!pl_active())
        return libc_epoll_pwait(epfd, evs, max, timeout, mask);
    ep = epoll_get(epfd);
    if (ep != NULL && pl_ep_is_plain(ep)) {
        pl_wrap_put((struct pl_fd *)ep);
        ep = NULL;
    }
    if (ep == NULL)
        return libc_epoll_pwait(epfd, evs, max, timeout, mask);
    pl_enter(&ctx);
    rc = pl_ep_wait(ep, epfd, evs, max,
                    timeout < 0 ? -1 : (int64_t)timeout * 1000000, mask);
    pl_wrap_put((struct pl_fd *)ep);
    return (int)pl_exit(&ctx, rc);
}

/* EAL's interrupt thread, in the first process of a shared memif port:
 * its callbacks run holding the port lock (runtime/share_memif.c). */
static int
intr_thread_wait(int epfd, struct epoll_event *evs, int max, int timeout)
{
    int n, e;

    rt_mf_wait_begin();
    n = libc_epoll_wait(epfd, evs, max, timeout);
    e = errno;
    rt_mf_wait_end(n);
    errno = e;
    return n;
}

int
epoll_wait(int epfd, struct epoll_event *evs, int max, int timeout)
{
    struct pl_epoll *ep;
    struct pl_ctx ctx;
    int rc;

    if (pl_unlikely(atomic_load_explicit(&rt_mf_armed, memory_order_relaxed)) &&
        rt_mf_intr_thread())
        return intr_thread_wait(epfd, evs, max, timeout);
    if (!pl_active())
        return libc_epoll_wait(epfd, evs, max, timeout);
    ep = epoll_get(epfd);
    if (ep != NULL && pl_ep_is_plain(ep)) {
        pl_wrap_put((struct pl_fd *)ep);
        ep = NULL;
    }
    if (ep == NULL)
        return libc_epoll_wait(epfd, evs, max, timeout);
    pl_enter(&ctx);
    rc = pl_ep_wait(ep, epfd, evs, max,
                    timeout < 0 ? -1 : (int64_t)timeout * 1000000, NULL);
    pl_wrap_put((struct pl_fd *)ep);
    return (int)pl_exit(&ctx, rc);
}

int
epoll_pwait2(int epfd, struct epoll_event *evs, int max,
             const struct timespec *ts, const sigset_t *mask)
{
    struct pl_epoll *ep;
    struct pl_ctx ctx;
    int64_t ns = -1;
    int rc;

    if (!pl_active())
        return libc_epoll_pwait2(epfd, evs, max, ts, mask);
    ep = epoll_get(epfd);
    if (ep != NULL && pl_ep_is_plain(ep)) {
        pl_wrap_put((struct pl_fd *)ep);
        ep = NULL;
    }
    if (ep == NULL)
        return libc_epoll_pwait2(epfd, evs, max, ts, mask);
    pl_enter(&ctx);
    if (ts != NULL &&
        (ts->tv_sec < 0 || ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000))
        rc = -EINVAL;
    else {
        if (ts != NULL)
            ns = (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
        rc = pl_ep_wait(ep, epfd, evs, max, ns, mask);
    }
    pl_wrap_put((struct pl_fd *)ep);
    return (int)pl_exit(&ctx, rc);
}
