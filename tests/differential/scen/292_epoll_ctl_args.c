/*
 * Behaviour: epoll_ctl argument checks with an accelerated socket: ADD
 * and MOD with a NULL event are EFAULT, DEL with a NULL event is fine
 * (since Linux 2.6.9); unknown event bits are accepted on ADD; an fd
 * that is a plain epoll fd can be added (nesting), epoll_wait with a
 * negative maxevents is EINVAL and on a non-epoll fd (the socket) EINVAL;
 * epoll_create1(EPOLL_CLOEXEC) sets FD_CLOEXEC.
 */
#include "scen.h"

int
main(void)
{
    struct epoll_event ev = {.events = EPOLLIN | (1u << 20)};
    volatile int neg = -1; /* not a constant: the compiler would refuse it */
    int ep, fd;

    tr_init();
    fd = d_connect(D_ECHO);
    ep = TF(epoll_create1(EPOLL_CLOEXEC));
    T(fcntl(ep, F_GETFD));
    T(epoll_ctl(ep, EPOLL_CTL_ADD, fd, NULL));
    T(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
    T(epoll_ctl(ep, EPOLL_CTL_MOD, fd, NULL));
    T(epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL));
    T(epoll_wait(ep, &ev, neg, 0));
    T(epoll_wait(fd, &ev, 1, 0));
    T(epoll_pwait(fd, &ev, 1, 0, NULL));
    T(epoll_ctl(fd, EPOLL_CTL_ADD, ep, &ev));
    T(epoll_ctl(ep, 99, fd, &ev));
    T(close(ep));
    T(close(fd));
    return 0;
}
