/*
 * Behaviour: a socket registered with events 0 still reports EPOLLERR and
 * EPOLLHUP (never maskable): EPOLLERR|EPOLLHUP after the peer's RST, on
 * every level-triggered wait; with EPOLLET the error is one
 * edge.
 */
#include "scen.h"

int
main(void)
{
    struct epoll_event ev = {.events = 0};
    int ep, ep2, fd;

    tr_init();
    fd = d_connect_rst();
    ep = TF(epoll_create1(0));
    ep2 = TF(epoll_create1(0));
    T(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
    ev.events = EPOLLET;
    T(epoll_ctl(ep2, EPOLL_CTL_ADD, fd, &ev));
    d_wait(fd, 0);
    ev.events = 0;
    T(epoll_wait(ep, &ev, 1, 0));
    NOTE("level: %s", tr_epollev(ev.events));
    ev.events = 0;
    T(epoll_wait(ep, &ev, 1, 0));
    NOTE("level again: %s", tr_epollev(ev.events));
    ev.events = 0;
    T(epoll_wait(ep2, &ev, 1, 0));
    NOTE("edge: %s", tr_epollev(ev.events));
    T(epoll_wait(ep2, &ev, 1, 0));
    T(close(ep2));
    T(close(ep));
    T(close(fd));
    return 0;
}
