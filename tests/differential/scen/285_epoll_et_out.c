/*
 * Behaviour: edge-triggered EPOLLIN|EPOLLOUT on a connected socket:
 * EPOLLOUT is reported once when registered, not on the next wait; a MOD
 * re-arms it (reported once more); the echo of a send arriving is a new
 * edge, reported with the socket's whole state (EPOLLIN|EPOLLOUT), and not
 * again after.
 */
#include "scen.h"

static void
waitone(int ep, const char *what)
{
    struct epoll_event ev = {0};
    int n = (int)T(epoll_wait(ep, &ev, 1, 0));

    if (n > 0)
        NOTE("%s: %s", what, tr_epollev(ev.events));
}

int
main(void)
{
    struct epoll_event ev = {.events = EPOLLOUT | EPOLLIN | EPOLLET};
    int ep, fd;

    tr_init();
    fd = d_connect(D_ECHO);
    ep = TF(epoll_create1(0));
    T(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
    waitone(ep, "registered");
    waitone(ep, "second");
    T(epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev));
    waitone(ep, "after MOD");
    waitone(ep, "after MOD again");
    T(send(fd, "x", 1, 0));
    d_wait(fd, POLLIN);
    usleep(20000);
    waitone(ep, "echo in");
    waitone(ep, "echo in again");
    T(close(ep));
    T(close(fd));
    return 0;
}
