/*
 * Behaviour: a listener registered edge-triggered: the first pending
 * connection reports EPOLLIN once; a second one arriving while the first
 * is still queued is a new edge (reported again); accepting one reports
 * nothing; after both are accepted a third connection reports EPOLLIN.
 */
#include "scen.h"

int
main(void)
{
    struct epoll_event ev = {.events = EPOLLIN | EPOLLET};
    int ep, l, c1, c2, c3;

    tr_init();
    l = d_listen(D_LPORT_BASE + 293);
    ep = TF(epoll_create1(0));
    T(epoll_ctl(ep, EPOLL_CTL_ADD, l, &ev));
    d_ep_one(ep, "empty");
    d_connect_back(D_LPORT_BASE + 293, "hold");
    d_wait(l, POLLIN);
    d_ep_one(ep, "first");
    d_ep_one(ep, "first again");
    d_connect_back(D_LPORT_BASE + 293, "hold");
    usleep(50000);
    d_ep_one(ep, "second");
    c1 = TF(accept(l, NULL, NULL));
    d_ep_one(ep, "after accept");
    c2 = TF(accept(l, NULL, NULL));
    d_connect_back(D_LPORT_BASE + 293, "hold");
    usleep(50000);
    d_ep_one(ep, "third");
    c3 = TF(accept(l, NULL, NULL));
    T(close(c3));
    T(close(c2));
    T(close(c1));
    T(close(ep));
    T(close(l));
    return 0;
}
