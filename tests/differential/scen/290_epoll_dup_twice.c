/*
 * Behaviour: a socket and its dup are two registrations in one epoll set
 * (different fd numbers, same file): both are reported, each with its own
 * data and its own events (EPOLLIN on one, EPOLLOUT on the other); a DEL
 * of one leaves the other.
 */
#include "scen.h"

int
main(void)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = 1};
    struct epoll_event out[4];
    int ep, fd, d, n, i;

    tr_init();
    fd = d_connect(D_ECHO);
    d = TF(dup(fd));
    ep = TF(epoll_create1(0));
    T(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
    ev = (struct epoll_event){.events = EPOLLOUT, .data.u32 = 2};
    T(epoll_ctl(ep, EPOLL_CTL_ADD, d, &ev));
    T(send(fd, "x", 1, 0));
    d_wait(fd, POLLIN);
    n = (int)T(epoll_wait(ep, out, 4, 0));
    /* in tag order: the order of one wait's events is not the point */
    for (unsigned t = 1; t <= 2; t++)
        for (i = 0; i < n; i++)
            if (out[i].data.u32 == t)
                NOTE("tag %u %s", t, tr_epollev(out[i].events));
    T(epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL));
    n = (int)T(epoll_wait(ep, out, 4, 0));
    for (i = 0; i < n; i++)
        NOTE("tag %u %s", out[i].data.u32, tr_epollev(out[i].events));
    T(close(d));
    T(close(fd));
    T(close(ep));
    return 0;
}
