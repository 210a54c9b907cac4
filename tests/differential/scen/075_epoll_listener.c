/*
 * Behaviour: a listener in epoll reports EPOLLIN when a connection is
 * pending (level-triggered: again until accepted), nothing after accept;
 * the accepted socket added to the same set reports its data, and after
 * our SHUT_WR and the peer's close EPOLLIN|EPOLLHUP|EPOLLRDHUP.
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
    int port = D_LPORT_BASE + 75;
    struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP};
    char buf[8];
    int ep, l, c;

    tr_init();
    ep = TF(epoll_create1(0));
    l = d_listen(port);
    ev.data.u32 = 1;
    T(epoll_ctl(ep, EPOLL_CTL_ADD, l, &ev));
    waitall(ep, 0);
    d_connect_back(port, "send:ep");
    waitall(ep, -1);
    waitall(ep, 0);
    c = TF(accept(l, NULL, NULL));
    waitall(ep, 0);
    ev.data.u32 = 2;
    T(epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev));
    d_wait(c, POLLIN);
    waitall(ep, 0);
    T(recv(c, buf, 2, MSG_WAITALL));
    T(shutdown(c, SHUT_WR));
    waitall(ep, -1);
    T(close(c));
    T(close(l));
    T(close(ep));
    return 0;
}
