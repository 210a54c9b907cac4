/*
 * Behaviour: an epoll fd inside another epoll fd: the outer set reports
 * the inner one EPOLLIN (only EPOLLIN: an epoll fd is never writable)
 * while the inner set has a ready socket, for level-triggered waits every
 * time, and nothing once the socket's data is read; poll() on the inner
 * epoll fd reports POLLIN likewise; an epoll fd cannot be added to itself
 * (EINVAL), and two sets containing each other are refused (ELOOP).
 */
#include "scen.h"

int
main(void)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = 1};
    struct pollfd p;
    char buf[16];
    int in, out, fd, third;

    tr_init();
    fd = d_connect(D_ECHO);
    in = TF(epoll_create1(0));
    out = TF(epoll_create1(0));
    T(epoll_ctl(in, EPOLL_CTL_ADD, fd, &ev));
    ev = (struct epoll_event){.events = EPOLLIN | EPOLLOUT, .data.u32 = 2};
    T(epoll_ctl(out, EPOLL_CTL_ADD, in, &ev));
    d_ep_one(out, "idle");
    T(send(fd, "hi", 2, 0));
    d_wait(fd, POLLIN);
    d_ep_one(out, "data");
    d_ep_one(out, "data again");
    p = (struct pollfd){.fd = in, .events = POLLIN | POLLOUT};
    T(poll(&p, 1, 0));
    NOTE("poll inner: %s", tr_pollev(p.revents));
    T(recv(fd, buf, sizeof(buf), 0));
    d_ep_one(out, "read");
    T(poll(&p, 1, 0));
    NOTE("poll inner: %s", tr_pollev(p.revents));
    T(epoll_ctl(in, EPOLL_CTL_ADD, in, &ev));
    T(epoll_ctl(in, EPOLL_CTL_ADD, out, &ev));
    third = TF(epoll_create1(0));
    T(epoll_ctl(third, EPOLL_CTL_ADD, out, &ev));
    T(epoll_ctl(in, EPOLL_CTL_ADD, third, &ev));
    T(close(third));
    T(close(out));
    T(close(in));
    T(close(fd));
    return 0;
}
