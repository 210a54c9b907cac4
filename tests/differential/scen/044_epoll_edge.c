/*
 * Behaviour: edge-triggered epoll reports EPOLLIN once per arrival: a
 * second wait without reading reports nothing, new data reports again;
 * EPOLLOUT is reported once; EPOLL_CTL_MOD re-arms the edge.
 */
#include "scen.h"

static int
waitall(int ep, int timeout)
{
    struct epoll_event ev[4];
    int n = (int)T(epoll_wait(ep, ev, 4, timeout));

    for (int i = 0; i < n; i++)
        NOTE("tag %u %s", ev[i].data.u32, tr_epollev(ev[i].events));
    return n;
}

int
main(void)
{
    struct epoll_event ev = {.events = EPOLLIN | EPOLLET, .data.u32 = 7};
    char buf[16];
    int ep, fd;

    tr_init();
    ep = TF(epoll_create(10));
    fd = d_connect(D_ECHO);
    T(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
    waitall(ep, 0);
    T(send(fd, "e1", 2, 0));
    waitall(ep, -1);
    waitall(ep, 0);
    T(send(fd, "e2", 2, 0));
    waitall(ep, -1);
    waitall(ep, 0);
    T(recv(fd, buf, 4, MSG_WAITALL));
    NOTE("got %s", tr_data(buf, 4));
    waitall(ep, 0);
    ev.events = EPOLLIN | EPOLLOUT | EPOLLET;
    T(epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev));
    waitall(ep, 0);
    waitall(ep, 0);
    T(epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev));
    waitall(ep, 0);
    T(close(fd));
    T(close(ep));
    return 0;
}
