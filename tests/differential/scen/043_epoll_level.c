/*
 * Behaviour: level-triggered epoll reports EPOLLIN again on every wait
 * while data is unread, EPOLLOUT continuously, stops reporting EPOLLIN once
 * the data is read; epoll_event.data comes back unchanged.
 */
#include "scen.h"

static void
waitall(int ep)
{
    struct epoll_event ev[4];
    int n = (int)T(epoll_wait(ep, ev, 4, 0));

    for (int i = 0; i < n; i++)
        NOTE("tag %llu %s", (unsigned long long)ev[i].data.u64,
             tr_epollev(ev[i].events));
}

int
main(void)
{
    struct epoll_event ev = {.events = EPOLLIN};
    struct epoll_event out;
    char buf[8];
    int ep, fd;

    tr_init();
    ep = TF(epoll_create1(EPOLL_CLOEXEC));
    fd = d_connect(D_ECHO);
    ev.data.u64 = 0x1122334455667788ull;
    T(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
    waitall(ep);
    T(send(fd, "lvl", 3, 0));
    T(epoll_wait(ep, &out, 1, -1));
    waitall(ep);
    waitall(ep);
    T(recv(fd, buf, 3, MSG_WAITALL));
    waitall(ep);
    ev.events = EPOLLIN | EPOLLOUT;
    ev.data.u64 = 42;
    T(epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev));
    waitall(ep);
    waitall(ep);
    T(close(fd));
    waitall(ep);
    T(close(ep));
    return 0;
}
