/*
 * Behaviour: an epoll registration belongs to the open file, not the fd
 * number: after the registered fd is closed while a dup of it stays open,
 * the registration survives and keeps reporting with its data; DEL by
 * the dup's number is ENOENT (the key is the original number), and once
 * the dup is closed too nothing is reported.
 */
#include "scen.h"

int
main(void)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = 7};
    char buf[8];
    int ep, fd, d;

    tr_init();
    fd = d_connect(D_ECHO);
    ep = TF(epoll_create1(0));
    T(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
    d = TF(dup(fd));
    T(close(fd));
    T(send(d, "x", 1, 0));
    d_wait(d, POLLIN);
    ev.data.u32 = 0;
    T(epoll_wait(ep, &ev, 1, 0));
    NOTE("tag %u %s", ev.data.u32, tr_epollev(ev.events));
    T(epoll_ctl(ep, EPOLL_CTL_DEL, d, NULL));
    T(epoll_ctl(ep, EPOLL_CTL_MOD, d, &ev));
    T(recv(d, buf, sizeof(buf), 0));
    T(send(d, "y", 1, 0));
    d_wait(d, POLLIN);
    T(close(d));
    T(epoll_wait(ep, &ev, 1, 0));
    T(close(ep));
    return 0;
}
