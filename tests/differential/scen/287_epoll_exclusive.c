/*
 * Behaviour: EPOLLEXCLUSIVE's validity rules on an accelerated listener:
 * ADD with EPOLLIN|EPOLLEXCLUSIVE, with EPOLLET and with EPOLLOUT is
 * accepted; with EPOLLONESHOT or EPOLLRDHUP it is EINVAL; MOD of an
 * exclusive registration is EINVAL (whatever the events), MOD adding
 * EPOLLEXCLUSIVE to a plain one is EINVAL; an epoll fd cannot be added
 * with EPOLLEXCLUSIVE to another epoll set (EINVAL). An exclusive
 * registration reports a pending connection like a plain one, in each of
 * two sets.
 */
#include "scen.h"

int
main(void)
{
    struct epoll_event ev = {.events = EPOLLIN | EPOLLEXCLUSIVE};
    int ep1, ep2, ep3, l, c, fd;

    tr_init();
    l = d_listen(D_LPORT_BASE + 287);
    fd = d_connect(D_ECHO);
    ep1 = TF(epoll_create1(0));
    ep2 = TF(epoll_create1(0));
    ep3 = TF(epoll_create1(0));
    T(epoll_ctl(ep1, EPOLL_CTL_ADD, l, &ev));
    T(epoll_ctl(ep2, EPOLL_CTL_ADD, l, &ev));
    ev.events = EPOLLIN | EPOLLEXCLUSIVE | EPOLLONESHOT;
    T(epoll_ctl(ep3, EPOLL_CTL_ADD, fd, &ev));
    ev.events = EPOLLIN | EPOLLEXCLUSIVE | EPOLLRDHUP;
    T(epoll_ctl(ep3, EPOLL_CTL_ADD, fd, &ev));
    ev.events = EPOLLIN | EPOLLOUT | EPOLLEXCLUSIVE | EPOLLET;
    T(epoll_ctl(ep3, EPOLL_CTL_ADD, fd, &ev));
    ev.events = EPOLLIN | EPOLLEXCLUSIVE;
    T(epoll_ctl(ep3, EPOLL_CTL_MOD, fd, &ev));
    ev.events = EPOLLIN;
    T(epoll_ctl(ep3, EPOLL_CTL_MOD, fd, &ev));
    T(epoll_ctl(ep3, EPOLL_CTL_DEL, fd, NULL));
    ev.events = EPOLLIN;
    T(epoll_ctl(ep3, EPOLL_CTL_ADD, fd, &ev));
    ev.events = EPOLLIN | EPOLLEXCLUSIVE;
    T(epoll_ctl(ep3, EPOLL_CTL_MOD, fd, &ev));
    T(epoll_ctl(ep3, EPOLL_CTL_ADD, ep1, &ev));
    T(epoll_wait(ep1, &ev, 1, 0));
    d_connect_back(D_LPORT_BASE + 287, "hold");
    d_wait(l, POLLIN);
    ev.events = 0;
    T(epoll_wait(ep1, &ev, 1, 0));
    NOTE("ep1 %s", tr_epollev(ev.events));
    ev.events = 0;
    T(epoll_wait(ep2, &ev, 1, 0));
    NOTE("ep2 %s", tr_epollev(ev.events));
    c = TF(accept(l, NULL, NULL));
    T(epoll_wait(ep1, &ev, 1, 0));
    T(close(c));
    T(close(ep3));
    T(close(ep2));
    T(close(ep1));
    T(close(fd));
    T(close(l));
    return 0;
}
