/*
 * Behaviour: edge-triggered EPOLLIN|EPOLLOUT on a connected socket:
 * EPOLLOUT is reported once when registered, not on the next wait; a MOD
 * re-arms it (reported once more); the echo of a send arriving is a new
 * edge, reported with the socket's whole state (EPOLLIN|EPOLLOUT), and not
 * again after.
 */
#include "scen.h"

int
main(void)
{
    struct epoll_event ev = {.events = EPOLLOUT | EPOLLIN | EPOLLET};
    int ep, fd;

    tr_init();
    fd = d_connect(D_ECHO);
    ep = TF(epoll_create1(0));
    T(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
    d_ep_one(ep, "registered");
    d_ep_one(ep, "second");
    T(epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev));
    d_ep_one(ep, "after MOD");
    d_ep_one(ep, "after MOD again");
    d_echoed(fd, "x", 1);
    d_ep_one(ep, "echo in");
    d_ep_one(ep, "echo in again");
    T(close(ep));
    T(close(fd));
    return 0;
}
