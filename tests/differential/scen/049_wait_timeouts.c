/*
 * Behaviour: waits on an idle connected socket time out with 0: poll and
 * ppoll 50 ms, epoll_wait 50 ms, select/pselect 50 ms (select leaves the
 * set empty); a blocking recv with SO_RCVTIMEO 100 ms fails with EAGAIN
 * and a blocking accept with it too. Only results are printed, no times.
 */
#include "scen.h"

int
main(void)
{
    struct pollfd p;
    struct timespec ts = {0, 50000000};
    struct epoll_event ev = {.events = EPOLLIN};
    struct timeval tv = {0, 100000};
    fd_set r;
    char buf[4];
    int fd, ep, l;

    tr_init();
    fd = d_connect(D_ECHO);
    p = (struct pollfd){.fd = fd, .events = POLLIN};
    T(poll(&p, 1, 50));
    NOTE("revents %s", tr_pollev(p.revents));
    T(ppoll(&p, 1, &ts, NULL));
    ep = TF(epoll_create1(0));
    T(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
    T(epoll_wait(ep, &ev, 1, 50));
    FD_ZERO(&r);
    FD_SET(fd, &r);
    struct timeval st = {0, 50000};
    T(select(fd + 1, &r, NULL, NULL, &st));
    NOTE("set %d", FD_ISSET(fd, &r));
    FD_SET(fd, &r);
    T(pselect(fd + 1, &r, NULL, NULL, &ts, NULL));

    T(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
    T(recv(fd, buf, sizeof(buf), 0));
    T(read(fd, buf, sizeof(buf)));
    l = d_listen(D_LPORT_BASE + 49);
    T(setsockopt(l, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
    T(accept(l, NULL, NULL));
    T(close(l));
    T(close(ep));
    T(close(fd));
    return 0;
}
