/*
 * Behaviour: poll, ppoll, select, epoll_wait and epoll_pwait blocking on an
 * idle accelerated socket fail with EINTR when a signal handler runs, even
 * with SA_RESTART (these calls are never restarted); a mixed wait (socket
 * plus pipe) too; epoll_pwait with the signal blocked in its mask times
 * out instead and the signal is delivered afterwards.
 */
#include "scen.h"

int
main(void)
{
    struct epoll_event ev = {.events = EPOLLIN};
    struct pollfd p[2];
    fd_set r;
    sigset_t block, old;
    int fd, ep, pp[2];

    tr_init();
    fd = d_connect(D_ECHO);
    T(pipe(pp));
    p[0] = (struct pollfd){.fd = fd, .events = POLLIN};
    p[1] = (struct pollfd){.fd = pp[0], .events = POLLIN};
    d_alarm_arm(0);
    T(poll(p, 1, -1));
    d_alarm_arm(1);
    T(poll(p, 1, 5000));
    d_alarm_arm(1);
    T(poll(p, 2, -1));
    d_alarm_arm(0);
    T(ppoll(p, 1, NULL, NULL));
    d_alarm_arm(1);
    FD_ZERO(&r);
    FD_SET(fd, &r);
    T(select(fd + 1, &r, NULL, NULL, NULL));
    NOTE("alarms %d", (int)d_alarms);
    ep = TF(epoll_create1(0));
    T(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
    d_alarm_arm(0);
    T(epoll_wait(ep, &ev, 1, -1));
    d_alarm_arm(1);
    T(epoll_wait(ep, &ev, 1, 5000));
    T(epoll_ctl(ep, EPOLL_CTL_ADD, pp[0], &ev));
    d_alarm_arm(1);
    T(epoll_pwait(ep, &ev, 1, -1, NULL));
    NOTE("alarms %d", (int)d_alarms);
    sigemptyset(&block);
    sigaddset(&block, SIGALRM);
    sigprocmask(SIG_BLOCK, &block, &old);
    d_alarm_arm(0);
    /* SIGALRM stays blocked during the wait: it times out. */
    T(epoll_pwait(ep, &ev, 1, 300, &block));
    NOTE("alarms before unblock %d", (int)d_alarms);
    sigprocmask(SIG_SETMASK, &old, NULL);
    NOTE("alarms after unblock %d", (int)d_alarms);
    T(close(ep));
    T(close(pp[0]));
    T(close(pp[1]));
    T(close(fd));
    return 0;
}
