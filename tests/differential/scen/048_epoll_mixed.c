/*
 * Behaviour: one epoll set holding a pipe (kernel fd) and an accelerated
 * socket reports each one's readiness independently and both together;
 * the same holds for poll and select over the same pair.
 */
#include "scen.h"

static void
waitall(int ep, int timeout)
{
    struct epoll_event ev[4];
    unsigned seen[2] = {0, 0};
    int n = (int)T(epoll_wait(ep, ev, 4, timeout));

    /* Report per tag, so the order epoll returns them in does not show. */
    for (int i = 0; i < n; i++)
        seen[ev[i].data.u32] = ev[i].events;
    NOTE("pipe %s socket %s", tr_epollev(seen[0]), tr_epollev(seen[1]));
}

static void
polls(int pr, int s)
{
    struct pollfd p[2] = {{.fd = pr, .events = POLLIN},
                          {.fd = s, .events = POLLIN}};
    fd_set r;

    T(poll(p, 2, 0));
    NOTE("poll pipe %s socket %s", tr_pollev(p[0].revents),
         tr_pollev(p[1].revents));
    FD_ZERO(&r);
    FD_SET(pr, &r);
    FD_SET(s, &r);
    struct timeval tv = {0, 0};
    T(select((pr > s ? pr : s) + 1, &r, NULL, NULL, &tv));
    NOTE("select pipe %d socket %d", FD_ISSET(pr, &r), FD_ISSET(s, &r));
}

int
main(void)
{
    struct epoll_event ev = {.events = EPOLLIN};
    char buf[8];
    int ep, p[2], s;

    tr_init();
    T(pipe(p));
    s = d_connect(D_ECHO);
    ep = TF(epoll_create1(0));
    ev.data.u32 = 0;
    T(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev));
    ev.data.u32 = 1;
    T(epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev));
    waitall(ep, 0);
    polls(p[0], s);
    T(write(p[1], "p", 1));
    waitall(ep, -1);
    polls(p[0], s);
    T(send(s, "s", 1, 0));
    d_wait(s, POLLIN);
    waitall(ep, 0);
    polls(p[0], s);
    T(read(p[0], buf, 1));
    waitall(ep, 0);
    T(recv(s, buf, 1, 0));
    waitall(ep, 0);
    T(send(s, "t", 1, 0));
    waitall(ep, -1);
    T(close(s));
    T(close(p[0]));
    T(close(p[1]));
    T(close(ep));
    return 0;
}
