/*
 * Behaviour: an inner epoll fd registered edge-triggered in an outer one:
 * the outer set reports EPOLLIN once when the inner set's socket becomes
 * readable, not again on the next wait (no new event), and again after
 * more data arrives on the socket.
 */
#include "scen.h"

int
main(void)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = 1};
    char buf[16];
    int in, out, fd;

    tr_init();
    fd = d_connect(D_ECHO);
    in = TF(epoll_create1(0));
    out = TF(epoll_create1(0));
    T(epoll_ctl(in, EPOLL_CTL_ADD, fd, &ev));
    ev = (struct epoll_event){.events = EPOLLIN | EPOLLET, .data.u32 = 2};
    T(epoll_ctl(out, EPOLL_CTL_ADD, in, &ev));
    d_ep_one(out, "idle");
    T(send(fd, "a", 1, 0));
    d_wait(fd, POLLIN);
    d_ep_one(out, "first");
    d_ep_one(out, "second");
    T(send(fd, "b", 1, 0));
    usleep(50000);
    d_ep_one(out, "more data");
    T(recv(fd, buf, sizeof(buf), 0));
    d_ep_one(out, "drained");
    T(close(out));
    T(close(in));
    T(close(fd));
    return 0;
}
