/*
 * Behaviour: EPOLL_CTL_MOD changes the interest set and the data of a
 * registered socket: EPOLLOUT only, then EPOLLIN only (with data queued),
 * then both with a new u64 tag (returned whole), then events 0 (nothing
 * is reported but EPOLLERR/EPOLLHUP would be); MOD with EPOLLET on a
 * level-triggered registration makes it edge-triggered; MOD on a closed
 * registration is ENOENT.
 */
#include "scen.h"

int
main(void)
{
    struct epoll_event ev = {.events = EPOLLOUT, .data.u64 = 1};
    int ep, fd;

    tr_init();
    fd = d_connect(D_ECHO);
    ep = TF(epoll_create1(0));
    T(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
    d_ep_one(ep, "out");
    T(send(fd, "x", 1, 0));
    d_wait(fd, POLLIN);
    d_ep_one(ep, "out with data");
    ev = (struct epoll_event){.events = EPOLLIN, .data.u64 = 2};
    T(epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev));
    d_ep_one(ep, "in");
    ev = (struct epoll_event){.events = EPOLLIN | EPOLLOUT,
                              .data.u64 = 0x123456789abcdef0ull};
    T(epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev));
    d_ep_one(ep, "in|out");
    ev = (struct epoll_event){.events = 0, .data.u64 = 3};
    T(epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev));
    d_ep_one(ep, "none");
    ev = (struct epoll_event){.events = EPOLLIN | EPOLLET, .data.u64 = 4};
    T(epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev));
    d_ep_one(ep, "et first");
    d_ep_one(ep, "et second");
    T(epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL));
    T(epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev));
    T(close(fd));
    T(close(ep));
    return 0;
}
