/*
 * Behaviour: EPOLLONESHOT with EPOLL_CTL_MOD: after the one report the
 * registration is disabled but still present (ADD is EEXIST, MOD and DEL
 * work); a MOD with EPOLLOUT|EPOLLONESHOT reports EPOLLOUT once, a MOD
 * with EPOLLIN (no ONESHOT) makes it level-triggered again (reported on
 * every wait while data is unread); a DEL of the disabled fd succeeds.
 */
#include "scen.h"

int
main(void)
{
    struct epoll_event ev = {.events = EPOLLIN | EPOLLONESHOT, .data.u32 = 1};
    int ep, fd;

    tr_init();
    fd = d_connect(D_ECHO);
    ep = TF(epoll_create1(0));
    T(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
    T(send(fd, "x", 1, 0));
    d_wait(fd, POLLIN);
    d_ep_one(ep, "first");
    d_ep_one(ep, "disabled");
    T(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
    ev = (struct epoll_event){.events = EPOLLOUT | EPOLLONESHOT, .data.u32 = 2};
    T(epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev));
    d_ep_one(ep, "out oneshot");
    d_ep_one(ep, "disabled again");
    ev = (struct epoll_event){.events = EPOLLIN, .data.u32 = 3};
    T(epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev));
    d_ep_one(ep, "level 1");
    d_ep_one(ep, "level 2");
    ev = (struct epoll_event){.events = EPOLLIN | EPOLLONESHOT, .data.u32 = 4};
    T(epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev));
    d_ep_one(ep, "oneshot again");
    T(epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL));
    d_ep_one(ep, "deleted");
    T(close(ep));
    T(close(fd));
    return 0;
}
