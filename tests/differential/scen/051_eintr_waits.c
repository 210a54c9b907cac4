/*
 * Behaviour: poll, ppoll, select, epoll_wait and epoll_pwait blocking on an
 * idle accelerated socket fail with EINTR when a signal handler runs, even
 * with SA_RESTART (these calls are never restarted); a mixed wait (socket
 * plus pipe) too; epoll_pwait with the signal blocked in its mask times
 * out instead and the signal is delivered afterwards.
 */
#include "scen.h"

static volatile sig_atomic_t nalrm;

static void
on_alrm(int sig)
{
    (void)sig;
    nalrm++;
}

static void
arm(int restart)
{
    struct sigaction sa;
    struct itimerval it = {{0, 0}, {0, 100000}};

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_alrm;
    sa.sa_flags = restart ? SA_RESTART : 0;
    sigaction(SIGALRM, &sa, NULL);
    setitimer(ITIMER_REAL, &it, NULL);
}

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
    arm(0);
    T(poll(p, 1, -1));
    arm(1);
    T(poll(p, 1, 5000));
    arm(1);
    T(poll(p, 2, -1));
    arm(0);
    T(ppoll(p, 1, NULL, NULL));
    arm(1);
    FD_ZERO(&r);
    FD_SET(fd, &r);
    T(select(fd + 1, &r, NULL, NULL, NULL));
    NOTE("alarms %d", (int)nalrm);
    ep = TF(epoll_create1(0));
    T(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
    arm(0);
    T(epoll_wait(ep, &ev, 1, -1));
    arm(1);
    T(epoll_wait(ep, &ev, 1, 5000));
    T(epoll_ctl(ep, EPOLL_CTL_ADD, pp[0], &ev));
    arm(1);
    T(epoll_pwait(ep, &ev, 1, -1, NULL));
    NOTE("alarms %d", (int)nalrm);
    sigemptyset(&block);
    sigaddset(&block, SIGALRM);
    sigprocmask(SIG_BLOCK, &block, &old);
    arm(0);
    /* SIGALRM stays blocked during the wait: it times out. */
    T(epoll_pwait(ep, &ev, 1, 300, &block));
    NOTE("alarms before unblock %d", (int)nalrm);
    sigprocmask(SIG_SETMASK, &old, NULL);
    NOTE("alarms after unblock %d", (int)nalrm);
    T(close(ep));
    T(close(pp[0]));
    T(close(pp[1]));
    T(close(fd));
    return 0;
}
