/*
 * Behaviour: a signal whose handler is installed without SA_RESTART
 * interrupts a blocking recv, read, accept and connect-less recvmsg with
 * EINTR; with SA_RESTART a recv with SO_RCVTIMEO still fails with EINTR
 * (timeouts are never restarted); the handler ran once per interruption.
 */
#include "scen.h"

int
main(void)
{
    struct timeval tv = {5, 0};
    char buf[8];
    struct iovec iov = {buf, sizeof(buf)};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
    int fd, l;

    tr_init();
    fd = d_connect(D_ECHO);
    d_alarm_arm(0);
    T(recv(fd, buf, sizeof(buf), 0));
    NOTE("alarms %d", (int)d_alarms);
    d_alarm_arm(0);
    T(read(fd, buf, sizeof(buf)));
    d_alarm_arm(0);
    T(recvmsg(fd, &m, 0));
    NOTE("alarms %d", (int)d_alarms);
    l = d_listen(D_LPORT_BASE + 50);
    d_alarm_arm(0);
    T(accept(l, NULL, NULL));
    NOTE("alarms %d", (int)d_alarms);
    T(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
    d_alarm_arm(1);
    T(recv(fd, buf, sizeof(buf), 0));
    NOTE("alarms %d", (int)d_alarms);
    T(send(fd, "after", 5, 0));
    T(recv(fd, buf, 5, MSG_WAITALL));
    T(close(l));
    T(close(fd));
    return 0;
}
