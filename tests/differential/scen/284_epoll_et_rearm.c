/*
 * Behaviour: edge-triggered EPOLLIN re-arms on new data, not on reads: a
 * partial read reports nothing new, another arrival reports EPOLLIN once
 * more (with the old bytes still unread), draining to EAGAIN reports
 * nothing, and the next arrival after the drain reports again.
 */
#include "scen.h"

int
main(void)
{
    struct epoll_event ev = {.events = EPOLLIN | EPOLLET};
    char buf[64];
    long r;
    int ep, fd;

    tr_init();
    fd = d_connect(D_ECHO);
    ep = TF(epoll_create1(0));
    T(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
    d_ep_one(ep, "idle");
    d_echoed(fd, "abcdef", 6);
    d_ep_one(ep, "arrival");
    T(recv(fd, buf, 2, 0));
    d_ep_one(ep, "after partial read");
    T(send(fd, "gh", 2, 0));
    usleep(50000);
    d_ep_one(ep, "second arrival");
    d_ep_one(ep, "again");
    r = T(recv(fd, buf, sizeof(buf), MSG_DONTWAIT));
    NOTE("got %s", tr_data(buf, r > 0 ? (size_t)r : 0));
    T(recv(fd, buf, sizeof(buf), MSG_DONTWAIT));
    d_ep_one(ep, "drained");
    T(send(fd, "i", 1, 0));
    usleep(50000);
    d_ep_one(ep, "after drain");
    T(close(ep));
    T(close(fd));
    return 0;
}
