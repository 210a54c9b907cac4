/*
 * Epoll instances we track (kind PL_FD_EPOLL): the application's epoll fd
 * is a real kernel epoll instance holding the kernel fds with the
 * application's own event data, untouched. Accelerated (and not yet
 * decided) sockets are kept in our own interest list instead, and each is
 * also registered in a private "shadow" kernel epoll instance: that gives
 * Linux's exact errors for EEXIST/ENOENT/EBADF, and wakes a waiter when the
 * socket's kernel side (INADDR_ANY listener or UDP receiver) gets traffic.
 *
 * All interest lists and socket membership lists are protected by one
 * process-wide mutex (the epoll lock: after s->mu, before rt_lock); the
 * ready lists by a leaf lock taken under rt_lock (epoll.c).
 */
#ifndef ACCEL_PL_EPOLL_H
#define ACCEL_PL_EPOLL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>

#include "fdtable.h"
#include "sock.h"

struct pl_epoll;

/** Track a new kernel epoll fd. 0 or -ENOMEM (the fd then stays plain). */
int pl_ep_track(int epfd);

int pl_ep_ctl(struct pl_epoll *ep, int epfd, int op, int fd,
              struct epoll_event *ev);

/** epoll_wait/epoll_pwait/epoll_pwait2 on a tracked instance; timeout_ns
 *  < 0 waits forever. */
int pl_ep_wait(struct pl_epoll *ep, int epfd, struct epoll_event *evs, int max,
               int64_t timeout_ns, const sigset_t *mask);

static inline struct pl_epoll *
pl_epoll_of(struct pl_fd *f)
{
    return (f != NULL && f->kind == PL_FD_EPOLL) ? (struct pl_epoll *)f : NULL;
}

/** True when the instance has never held a socket of ours (its waits are
 *  plain kernel waits). */
int pl_ep_is_plain(const struct pl_epoll *ep);

/** poll() or select() on the instance's fd: whether one of its stack
 *  sockets is ready (its kernel fds: a kernel poll of the fd). */
bool pl_ep_poll_ready(struct pl_epoll *ep);

/** The socket's state changed (the stack's notify callback, rt_lock
 *  held): queue its items on their instances' ready lists. */
void pl_ep_sock_changed(struct pl_sock *s);

/** The socket's last reference is gone: forget its memberships. */
void pl_ep_sock_gone(struct pl_sock *s);

/** s has just started to listen: its items join their instances' lists
 *  of listeners (the ones a blocking wait marks). s->mu not held. */
void pl_ep_sock_listening(struct pl_sock *s);

/** The socket gained a kernel side (kside, s->mu held): its items join
 *  their instances' shadows, so kernel-side traffic wakes waiters. */
void pl_ep_sock_kside(struct pl_sock *s);

/** The socket became a kernel socket: move its memberships into the
 *  application's kernel epoll instances with the application's data. */
void pl_ep_sock_to_kernel(struct pl_sock *s);

/** In a child after fork: reinitialise the epoll lock. */
void pl_ep_atfork_child(void);

#endif /* ACCEL_PL_EPOLL_H */
