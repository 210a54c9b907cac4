/*
 * Behaviour: ppoll and pselect with SIGALRM blocked in their mask, on an
 * idle accelerated socket, are not interrupted by the alarm and time out
 * (0) after their 300 ms; the signal, left pending, runs its handler as
 * soon as the call returns (the original mask is back); without the mask
 * the same alarm interrupts them with EINTR.
 */
#include "scen.h"

int
main(void)
{
    struct pollfd p;
    struct timespec ts = {0, 300000000};
    sigset_t block;
    fd_set r;
    int fd;

    tr_init();
    fd = d_connect(D_ECHO);
    sigemptyset(&block);
    sigaddset(&block, SIGALRM);
    p = (struct pollfd){fd, POLLIN, 0};
    d_alarm_arm(0);
    T(ppoll(&p, 1, &ts, &block));
    NOTE("alarms after ppoll %d", (int)d_alarms);
    FD_ZERO(&r);
    FD_SET(fd, &r);
    d_alarm_arm(0);
    T(pselect(fd + 1, &r, NULL, NULL, &ts, &block));
    NOTE("alarms after pselect %d", (int)d_alarms);
    d_alarm_arm(0);
    T(ppoll(&p, 1, &ts, NULL));
    NOTE("alarms %d", (int)d_alarms);
    FD_SET(fd, &r);
    d_alarm_arm(0);
    T(pselect(fd + 1, &r, NULL, NULL, &ts, NULL));
    NOTE("alarms %d", (int)d_alarms);
    T(close(fd));
    return 0;
}
