/*
 * Behaviour: edge-triggered EPOLLIN re-arms on new data, not on reads: a
 * partial read reports nothing new, another arrival reports EPOLLIN once
 * more (with the old bytes still unread), draining to EAGAIN reports
 * nothing, and the next arrival after the drain reports again.
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
    struct epoll_event ev = {.events = EPOLLIN | EPOLLET};
    char buf[64];
    long r;
    int ep, fd;

    tr_init();
    fd = d_connect(D_ECHO);
    ep = TF(epoll_create1(0));
    T(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
    waitone(ep, "idle");
    T(send(fd, "abcdef", 6, 0));
    d_wait(fd, POLLIN);
    usleep(20000);
    waitone(ep, "arrival");
    T(recv(fd, buf, 2, 0));
    waitone(ep, "after partial read");
    T(send(fd, "gh", 2, 0));
    usleep(50000);
    waitone(ep, "second arrival");
    waitone(ep, "again");
    r = T(recv(fd, buf, sizeof(buf), MSG_DONTWAIT));
    NOTE("got %s", tr_data(buf, r > 0 ? (size_t)r : 0));
    T(recv(fd, buf, sizeof(buf), MSG_DONTWAIT));
    waitone(ep, "drained");
    T(send(fd, "i", 1, 0));
    usleep(50000);
    waitone(ep, "after drain");
    T(close(ep));
    T(close(fd));
    return 0;
}
