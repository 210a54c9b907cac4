/*
 * Behaviour: epoll_ctl errors: ADD twice EEXIST, MOD/DEL of an fd not in
 * the set ENOENT, a bad fd EBADF, epfd == fd EINVAL, an epfd that is not
 * an epoll fd (a socket) EINVAL, a regular file EPERM, a bad op EINVAL;
 * epoll_create(0) and epoll_create1(bad flag) EINVAL; epoll_wait with
 * maxevents 0 EINVAL; EPOLLEXCLUSIVE is accepted on ADD but EINVAL on MOD.
 */
#include "scen.h"

int
main(void)
{
    char path[] = "/tmp/accel-diff-XXXXXX";
    struct epoll_event ev = {.events = EPOLLIN};
    int ep, s, f, c, closed;

    tr_init();
    T(epoll_create(0));
    T(epoll_create(-1));
    T(epoll_create1(12345));
    ep = TF(epoll_create1(0));
    s = TF(socket(AF_INET, SOCK_STREAM, 0));
    T(epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev));
    T(epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev));
    c = d_connect(D_ECHO);
    T(epoll_ctl(ep, EPOLL_CTL_MOD, c, &ev));
    T(epoll_ctl(ep, EPOLL_CTL_DEL, c, &ev));
    closed = TF(dup(c));
    T(close(closed));
    T(epoll_ctl(ep, EPOLL_CTL_ADD, closed, &ev));
    T(epoll_ctl(ep, EPOLL_CTL_ADD, ep, &ev));
    T(epoll_ctl(s, EPOLL_CTL_ADD, c, &ev));
    T(epoll_ctl(ep, 99, c, &ev));
    f = TF(mkstemp(path));
    T(unlink(path));
    T(epoll_ctl(ep, EPOLL_CTL_ADD, f, &ev));
    T(epoll_wait(ep, &ev, 0, 0));
    volatile int neg = -1;
    T(epoll_wait(ep, &ev, neg, 0));
    T(epoll_wait(s, &ev, 1, 0));
    ev.events = EPOLLIN | EPOLLEXCLUSIVE;
    T(epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev));
    T(epoll_ctl(ep, EPOLL_CTL_MOD, c, &ev));
    T(epoll_ctl(ep, EPOLL_CTL_DEL, c, NULL));
    T(epoll_ctl(ep, EPOLL_CTL_DEL, s, NULL));
    T(close(f));
    T(close(c));
    T(close(s));
    T(close(ep));
    return 0;
}
