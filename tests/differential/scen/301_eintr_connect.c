/*
 * Behaviour: a blocking connect that is still waiting (SYN_SENT: the
 * address has no owner, neighbour resolution takes seconds) is
 * interrupted by a signal without SA_RESTART with EINTR; the attempt goes
 * on, so the next connect is EALREADY, poll shows the socket neither
 * readable nor writable and SO_ERROR is 0; with SA_RESTART the connect is
 * interrupted with EINTR all the same (connect is never restarted).
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in a = d_sin(D_NONLOCAL_IP, D_ECHO);
    struct pollfd p;
    int fd;

    tr_init();
    fd = TF(socket(AF_INET, SOCK_STREAM, 0));
    d_alarm_arm(0);
    T(connect(fd, SA(&a), sizeof(a)));
    NOTE("alarms %d", (int)d_alarms);
    T(connect(fd, SA(&a), sizeof(a)));
    p = (struct pollfd){fd, POLLIN | POLLOUT, 0};
    T(poll(&p, 1, 0));
    NOTE("revents %s", tr_pollev(p.revents));
    d_geti(fd, SOL_SOCKET, SO_ERROR, "SO_ERROR");
    T(close(fd));
    fd = TF(socket(AF_INET, SOCK_STREAM, 0));
    d_alarm_arm(1);
    T(connect(fd, SA(&a), sizeof(a)));
    NOTE("alarms %d", (int)d_alarms);
    T(connect(fd, SA(&a), sizeof(a)));
    T(close(fd));
    return 0;
}
