/*
 * Behaviour: epoll reports EPOLLIN|EPOLLRDHUP when the peer closes (FIN),
 * EPOLLIN|EPOLLERR|EPOLLHUP|EPOLLRDHUP after a peer RST (EPOLLERR/HUP are
 * reported even if not requested), and EPOLLHUP after both directions
 * are closed.
 */
#include "scen.h"

static void
waitall(int ep, int timeout)
{
    struct epoll_event ev[4];
    int n = (int)T(epoll_wait(ep, ev, 4, timeout));

    for (int i = 0; i < n; i++)
        NOTE("tag %u %s", ev[i].data.u32, tr_epollev(ev[i].events));
}

int
main(void)
{
    struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.u32 = 1};
    int ep, f, r, h;

    tr_init();
    ep = TF(epoll_create1(0));
    f = d_connect(D_CLOSE);
    T(epoll_ctl(ep, EPOLL_CTL_ADD, f, &ev));
    waitall(ep, -1);
    T(epoll_ctl(ep, EPOLL_CTL_DEL, f, NULL));

    r = d_connect_rst();
    d_wait(r, 0);
    ev.data.u32 = 2;
    T(epoll_ctl(ep, EPOLL_CTL_ADD, r, &ev));
    waitall(ep, 0);
    ev.events = 0;
    T(epoll_ctl(ep, EPOLL_CTL_MOD, r, &ev));
    waitall(ep, 0);
    T(epoll_ctl(ep, EPOLL_CTL_DEL, r, NULL));

    h = d_connect(D_ECHO);
    T(shutdown(h, SHUT_WR));
    d_wait(h, POLLRDHUP);
    ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP;
    ev.data.u32 = 3;
    T(epoll_ctl(ep, EPOLL_CTL_ADD, h, &ev));
    waitall(ep, 0);
    T(close(f));
    T(close(r));
    T(close(h));
    T(close(ep));
    return 0;
}
