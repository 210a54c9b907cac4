/*
 * Behaviour: EPOLLONESHOT reports one event then disarms the fd (nothing
 * more even with unread data, EPOLL_CTL_ADD again fails with EEXIST);
 * EPOLL_CTL_MOD re-arms it and the pending data is reported again.
 */
#include "scen.h"

static void
waitall(int ep, int timeout)
{
    struct epoll_event ev[4];
    int n = (int)T(epoll_wait(ep, ev, 4, timeout));

    for (int i = 0; i < n; i++)
        NOTE("tag %u %s", ev[i].data.u32, tr_epollev(ev[i].events));
}

int
main(void)
{
    struct epoll_event ev = {.events = EPOLLIN | EPOLLONESHOT, .data.u32 = 3};
    int ep, fd;

    tr_init();
    ep = TF(epoll_create1(0));
    fd = d_connect(D_ECHO);
    T(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
    T(send(fd, "o", 1, 0));
    waitall(ep, -1);
    waitall(ep, 0);
    T(send(fd, "p", 1, 0));
    d_wait(fd, POLLIN);
    waitall(ep, 0);
    T(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
    T(epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev));
    waitall(ep, 0);
    waitall(ep, 0);
    T(epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL));
    T(epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL));
    T(close(fd));
    T(close(ep));
    return 0;
}
