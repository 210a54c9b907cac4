/*
 * Behaviour: an inner epoll fd registered edge-triggered in an outer one:
 * the outer set reports EPOLLIN once when the inner set's socket becomes
 * readable, not again on the next wait (no new event), and again after
 * more data arrives on the socket.
 */
#include "scen.h"

static void
outer_wait(int out, const char *what)
{
    struct epoll_event ev = {0};
    int n = (int)T(epoll_wait(out, &ev, 1, 0));

    if (n > 0)
        NOTE("%s: tag %u %s", what, ev.data.u32, tr_epollev(ev.events));
}

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
    outer_wait(out, "idle");
    T(send(fd, "a", 1, 0));
    d_wait(fd, POLLIN);
    outer_wait(out, "first");
    outer_wait(out, "second");
    T(send(fd, "b", 1, 0));
    usleep(50000);
    outer_wait(out, "more data");
    T(recv(fd, buf, sizeof(buf), 0));
    outer_wait(out, "drained");
    T(close(out));
    T(close(in));
    T(close(fd));
    return 0;
}
