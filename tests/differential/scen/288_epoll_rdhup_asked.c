/*
 * Behaviour: after the peer's FIN, epoll reports EPOLLRDHUP only to a
 * registration that asked for it: EPOLLIN alone gives EPOLLIN, EPOLLIN|
 * EPOLLRDHUP gives both, EPOLLRDHUP alone gives EPOLLRDHUP, events 0
 * gives nothing (no EPOLLHUP: only one direction is closed); after our
 * SHUT_WR too, every registration gets EPOLLHUP.
 */
#include "scen.h"

int
main(void)
{
    static const uint32_t asks[] = {EPOLLIN, EPOLLIN | EPOLLRDHUP, EPOLLRDHUP,
                                    0, EPOLLOUT};
    struct epoll_event ev;
    int eps[5], fd, i;

    tr_init();
    fd = d_connect(D_CLOSE);
    d_wait(fd, POLLRDHUP);
    for (i = 0; i < 5; i++) {
        eps[i] = TF(epoll_create1(0));
        ev = (struct epoll_event){.events = asks[i]};
        T(epoll_ctl(eps[i], EPOLL_CTL_ADD, fd, &ev));
        ev.events = 0;
        T(epoll_wait(eps[i], &ev, 1, 0));
        NOTE("asked %s got %s", tr_epollev(asks[i]), tr_epollev(ev.events));
    }
    T(shutdown(fd, SHUT_WR));
    usleep(50000);
    for (i = 0; i < 5; i++) {
        ev.events = 0;
        T(epoll_wait(eps[i], &ev, 1, 0));
        NOTE("asked %s got %s", tr_epollev(asks[i]), tr_epollev(ev.events));
        T(close(eps[i]));
    }
    T(close(fd));
    return 0;
}
