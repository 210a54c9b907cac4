/*
 * Behaviour: closing a socket frees its descriptor completely: the number
 * is reused by the next pipe/socket, which behave as fresh objects
 * (no stale connection state, no stale epoll registration: a closed socket
 * disappears from an epoll set, and the reused number can be added
 * again).
 */
#include "scen.h"

int
main(void)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = 9};
    char buf[8];
    int ep, s, p[2], s2, same;

    tr_init();
    ep = TF(epoll_create1(0));
    s = d_connect(D_ECHO);
    T(epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev));
    T(send(s, "x", 1, 0));
    d_wait(s, POLLIN);
    T(epoll_wait(ep, &ev, 1, 0));
    T(close(s));
    T(epoll_wait(ep, &ev, 1, 0));
    T(pipe(p));
    same = p[0] == s || p[1] == s;
    NOTE("pipe reuses the socket's number: %d", same);
    T(fcntl(s, F_GETFL) & O_ACCMODE);
    T(getsockopt(s, SOL_SOCKET, SO_TYPE, buf, &(socklen_t){4}));
    T(epoll_ctl(ep, EPOLL_CTL_DEL, s, NULL));
    T(epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev));
    T(close(p[0]));
    T(close(p[1]));
    s2 = TF(socket(AF_INET, SOCK_STREAM, 0));
    NOTE("new socket reuses the number: %d", s2 == s);
    T(recv(s2, buf, sizeof(buf), MSG_DONTWAIT));
    struct sockaddr_in a;
    socklen_t al = sizeof(a);
    T(getpeername(s2, SA(&a), &al));
    T(epoll_ctl(ep, EPOLL_CTL_ADD, s2, &ev));
    T(epoll_wait(ep, &ev, 1, 0));
    NOTE("events %s", tr_epollev(ev.events));
    T(close(s2));
    T(close(ep));
    return 0;
}
