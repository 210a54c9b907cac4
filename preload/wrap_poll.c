/*
 * poll, ppoll, select and pselect over sets mixing kernel fds and
 * accelerated sockets. A set without any live socket of ours goes straight
 * to libc (no overhead, Linux's own validation). Otherwise the set is
 * split: our sockets report the stack's readiness (plus their kernel side),
 * the kernel fds are polled by libc with a zero timeout; when nothing is
 * ready the thread blocks in rt_block() on the kernel fds (and the kernel
 * sides of our sockets) until the stack or the kernel has news, a signal
 * arrives (EINTR, as Linux for these calls regardless of SA_RESTART) or
 * the timeout expires. select() writes back the remaining time, as Linux.
 * Sockets accelerated in the parent of a fork report POLLNVAL (EBADF for
 * select).
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>

#include "clock.h"
#include "epoll.h"
#include "fdtable.h"
#include "libc.h"
#include "pl.h"
#include "rt.h"
#include "sock.h"

/* The interposed definitions below are the library's exports. */
#pragma GCC visibility push(default)

enum { SLOT_KERNEL = 0, SLOT_ACCEL, SLOT_STALE };

struct split {
    struct pl_sock **socks; /* per fds[i]: our live socket or NULL */
    struct pl_epoll **eps;  /* per fds[i]: an epoll instance holding some */
    unsigned char *kind;    /* SLOT_* per fds[i] */
    struct pollfd *k;       /* kernel fds, then kernel sides of sockets */
    nfds_t *kidx;           /* fds index of each k[] entry (kernel part) */
    nfds_t nk, nside;
};

static bool
any_ours(const struct pollfd *fds, nfds_t n)
{
    for (nfds_t i = 0; i < n; i++)
        if (pl_fdt_peek(fds[i].fd))
            return true;
    return false;
}

static void
split_free(struct split *sp, nfds_t n)
{
    if (sp->socks != NULL)
        for (nfds_t i = 0; i < n; i++)
            if (sp->socks[i] != NULL)
                pl_fd_put(&sp->socks[i]->hdr);
    if (sp->eps != NULL)
        for (nfds_t i = 0; i < n; i++)
            if (sp->eps[i] != NULL)
                pl_fd_put((struct pl_fd *)sp->eps[i]);
    free(sp->socks);
    free(sp->eps);
    free(sp->kind);
    free(sp->k);
    free(sp->kidx);
}

static int
split_init(struct split *sp, struct pollfd *fds, nfds_t n)
{
    memset(sp, 0, sizeof(*sp));
    sp->socks = calloc(n, sizeof(*sp->socks));
    sp->eps = calloc(n, sizeof(*sp->eps));
    sp->kind = calloc(n, 1);
    sp->k = calloc(2 * n, sizeof(*sp->k));
    sp->kidx = calloc(n, sizeof(*sp->kidx));
    if (sp->socks == NULL || sp->eps == NULL || sp->kind == NULL ||
        sp->k == NULL || sp->kidx == NULL)
        return -ENOMEM;
    for (nfds_t i = 0; i < n; i++) {
        struct pl_fd *f = fds[i].fd >= 0 ? pl_fdt_get(fds[i].fd) : NULL;
        struct pl_sock *s = pl_sock_of(f);

        if (s != NULL && pl_sock_live(s)) {
            sp->socks[i] = s;
            sp->kind[i] = SLOT_ACCEL;
            pl_sock_serve(s, RT_SERVE_ON);
            continue;
        }
        if (s != NULL && pl_sock_state(s) == PL_SOCK_ACCEL)
            sp->kind[i] = SLOT_STALE;
        /* An epoll fd holding sockets of ours: its kernel fds through the
         * kernel poll, its stack sockets through pl_ep_poll_ready. */
        if (pl_epoll_of(f) != NULL && !pl_ep_is_plain(pl_epoll_of(f)))
            sp->eps[i] = pl_epoll_of(f);
        else
            pl_fd_put(f);
        if (sp->kind[i] == SLOT_KERNEL) {
            sp->kidx[sp->nk] = i;
            sp->k[sp->nk++] = fds[i];
        }
    }
    /* Kernel sides of INADDR_ANY sockets join the blocking wait. */
    for (nfds_t i = 0; i < n; i++)
        if (sp->socks[i] != NULL && atomic_load(&sp->socks[i]->kside))
            sp->k[sp->nk + sp->nside++] =
                (struct pollfd){.fd = fds[i].fd, .events = POLLIN};
    return 0;
}

static int
block(enum rt_wait_kind kind, struct pollfd *k, nfds_t nk, int ms,
      const sigset_t *mask, unsigned sig0)
{
    struct timespec ts;

    if (rt_started())
        return rt_block(kind, k, (int)nk, ms, mask, sig0);
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (long)(ms % 1000) * 1000000;
    return (int)pl_sysret(libc_ppoll(k, nk, ms < 0 ? NULL : &ts, mask));
}

/* The mixed poll: count of ready entries or -errno. kind: RT_WAIT_POLL
 * or RT_WAIT_SELECT (the spin budget). */
static int
mixed_poll(struct pollfd *fds, nfds_t n, int64_t deadline, const sigset_t *mask,
           enum rt_wait_kind kind)
{
    unsigned sig0 = rt_sig_count; /* handlers that run from here on count */
    struct split sp;
    int count, k, ms, rc;

    rc = split_init(&sp, fds, n);
    if (rc < 0)
        goto out;
    pl_loop_turn();
    for (;;) {
        count = 0;
        if (rt_started()) {
            rt_lock();
            rt_poll();
            rt_unlock();
        }
        for (nfds_t i = 0; i < n; i++) {
            uint32_t ev;

            if (sp.kind[i] == SLOT_STALE) {
                fds[i].revents = POLLNVAL;
                count++;
                continue;
            }
            if (sp.kind[i] != SLOT_ACCEL)
                continue;
            ev = pl_sock_events(sp.socks[i], fds[i].fd, NULL);
            if (ev & EPOLLIN)
                ev |= POLLRDNORM;
            if (ev & EPOLLOUT)
                ev |= POLLWRNORM;
            fds[i].revents =
                (short)(ev & ((uint16_t)fds[i].events | POLLERR | POLLHUP));
            if (fds[i].revents)
                count++;
        }
        if (sp.nk > 0) {
            k = libc_poll(sp.k, sp.nk, 0);
            if (k < 0) {
                rc = -errno;
                goto out;
            }
            for (nfds_t j = 0; j < sp.nk; j++)
                fds[sp.kidx[j]].revents = sp.k[j].revents;
            count += k;
        }
        for (nfds_t i = 0; i < n; i++) {
            short in = (short)(fds[i].events & (POLLIN | POLLRDNORM));

            if (sp.eps[i] == NULL || in == 0 || (fds[i].revents & in) ||
                !pl_ep_poll_ready(sp.eps[i]))
                continue;
            if (fds[i].revents == 0)
                count++;
            fds[i].revents |= in;
        }
        if (count > 0) {
            rc = count;
            goto out;
        }
        ms = pl_ms_left(deadline);
        if (ms == 0) {
            rc = 0;
            goto out;
        }
        /* Listeners polled for input: this thread waits for connections. */
        for (nfds_t i = 0; i < n; i++)
            if (sp.kind[i] == SLOT_ACCEL && (fds[i].events & POLLIN))
                pl_sock_accept_wait(sp.socks[i], true, false);
        rc = block(kind, sp.k, sp.nk + sp.nside, ms, mask, sig0);
        for (nfds_t i = 0; i < n; i++)
            if (sp.kind[i] == SLOT_ACCEL && (fds[i].events & POLLIN))
                pl_sock_accept_wait(sp.socks[i], false, false);
        if (rc == -EINTR)
            goto out;
    }
out:
    split_free(&sp, n);
    return rc;
}

static int64_t
ts_deadline(const struct timespec *ts, int *err)
{
    *err = 0;
    if (ts == NULL)
        return -1;
    if (ts->tv_sec < 0 || ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000) {
        *err = -EINVAL;
        return -1;
    }
    return pl_deadline((int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec);
}

int
poll(struct pollfd *fds, nfds_t n, int timeout)
{
    struct pl_ctx ctx;
    int rc;

    if (!pl_active() || !any_ours(fds, n))
        return libc_poll(fds, n, timeout);
    pl_enter(&ctx);
    rc = mixed_poll(fds, n, pl_deadline_ms(timeout), NULL, RT_WAIT_POLL);
    return (int)pl_exit(&ctx, rc);
}

int
__poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen)
{
    if (fdslen / sizeof(*fds) < n)
        return libc___poll_chk(fds, n, timeout, fdslen); /* aborts */
    return poll(fds, n, timeout);
}

int
ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts,
      const sigset_t *mask)
{
    struct pl_ctx ctx;
    int64_t deadline;
    int rc;

    if (!pl_active() || !any_ours(fds, n))
        return libc_ppoll(fds, n, ts, mask);
    pl_enter(&ctx);
    deadline = ts_deadline(ts, &rc);
    if (rc == 0)
        rc = mixed_poll(fds, n, deadline, mask, RT_WAIT_POLL);
    return (int)pl_exit(&ctx, rc);
}

int
__ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *ts,
            const sigset_t *mask, size_t fdslen)
{
    if (fdslen / sizeof(*fds) < n)
        return libc___ppoll_chk(fds, n, ts, mask, fdslen); /* aborts */
    return ppoll(fds, n, ts, mask);
}

static bool
sets_have_ours(int nfds, fd_set *r, fd_set *w, fd_set *e)
{
    for (int fd = 0; fd < nfds; fd++)
        if (((r && FD_ISSET(fd, r)) || (w && FD_ISSET(fd, w)) ||
             (e && FD_ISSET(fd, e))) &&
            pl_fdt_peek(fd))
            return true;
    return false;
}

/* select/pselect over a mixed set, through mixed_poll(). */
static int
mixed_select(int nfds, fd_set *r, fd_set *w, fd_set *e, int64_t deadline,
             const sigset_t *mask)
{
    struct pollfd *p = calloc((size_t)nfds, sizeof(*p));
    int n = 0, rc, count = 0;

    if (p == NULL)
        return -ENOMEM;
    for (int fd = 0; fd < nfds; fd++) {
        short ev = 0;

        if (r && FD_ISSET(fd, r))
            ev |= POLLIN;
        if (w && FD_ISSET(fd, w))
            ev |= POLLOUT;
        if (e && FD_ISSET(fd, e))
            ev |= POLLPRI;
        if (ev)
            p[n++] = (struct pollfd){.fd = fd, .events = ev};
    }
    rc = mixed_poll(p, (nfds_t)n, deadline, mask, RT_WAIT_SELECT);
    for (int i = 0; rc > 0 && i < n; i++)
        if (p[i].revents & POLLNVAL)
            rc = -EBADF;
    if (rc >= 0) {
        for (int i = 0; i < n; i++) {
            int fd = p[i].fd;
            short rv = p[i].revents;

            if (r && FD_ISSET(fd, r)) {
                if (rv & (POLLIN | POLLRDNORM | POLLRDBAND | POLLHUP | POLLERR))
                    count++;
                else
                    FD_CLR(fd, r);
            }
            if (w && FD_ISSET(fd, w)) {
                if (rv & (POLLOUT | POLLWRNORM | POLLWRBAND | POLLERR))
                    count++;
                else
                    FD_CLR(fd, w);
            }
            if (e && FD_ISSET(fd, e)) {
                if (rv & POLLPRI)
                    count++;
                else
                    FD_CLR(fd, e);
            }
        }
        rc = count;
    }
    free(p);
    return rc;
}

int
select(int nfds, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv)
{
    struct pl_ctx ctx;
    int64_t deadline = -1, left;
    int rc;

    if (!pl_active() || nfds < 0 || nfds > FD_SETSIZE * 64 ||
        !sets_have_ours(nfds, r, w, e))
        return libc_select(nfds, r, w, e, tv);
    pl_enter(&ctx);
    if (tv != NULL) {
        if (tv->tv_sec < 0 || tv->tv_usec < 0)
            return (int)pl_exit(&ctx, -EINVAL);
        deadline = pl_deadline((int64_t)tv->tv_sec * 1000000000 +
                               (int64_t)tv->tv_usec * 1000);
    }
    rc = mixed_select(nfds, r, w, e, deadline, NULL);
    if (tv != NULL) {
        /* Linux writes back the time not slept. */
        left = deadline - (int64_t)base_now_ns();
        if (left < 0)
            left = 0;
        tv->tv_sec = left / 1000000000;
        tv->tv_usec = (left % 1000000000) / 1000;
    }
    return (int)pl_exit(&ctx, rc);
}

int
pselect(int nfds, fd_set *r, fd_set *w, fd_set *e, const struct timespec *ts,
        const sigset_t *mask)
{
    struct pl_ctx ctx;
    int64_t deadline;
    int rc;

    if (!pl_active() || nfds < 0 || nfds > FD_SETSIZE * 64 ||
        !sets_have_ours(nfds, r, w, e))
        return libc_pselect(nfds, r, w, e, ts, mask);
    pl_enter(&ctx);
    deadline = ts_deadline(ts, &rc);
    if (rc == 0)
        rc = mixed_select(nfds, r, w, e, deadline, mask);
    return (int)pl_exit(&ctx, rc);
}
