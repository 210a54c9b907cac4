/*
 * Behaviour: a blocking connect that is still waiting (SYN_SENT: the
 * address has no owner, neighbour resolution takes seconds) is
 * interrupted by a signal without SA_RESTART with EINTR; the attempt goes
 * on: a non-blocking connect then is EALREADY, poll shows the socket
 * neither readable nor writable and SO_ERROR is 0; a blocking connect
 * with SO_SNDTIMEO 200 ms on it waits for the attempt and gives up with
 * EALREADY. With SA_RESTART and SO_SNDTIMEO set, the interrupted connect
 * fails with EINTR all the same (a call with a timeout is not restarted).
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in a = d_sin(D_NONLOCAL_IP, D_ECHO);
    struct timeval tv = {0, 200000};
    struct pollfd p;
    int fd;

    tr_init();
    fd = TF(socket(AF_INET, SOCK_STREAM, 0));
    d_alarm_arm(0);
    T(connect(fd, SA(&a), sizeof(a)));
    NOTE("alarms %d", (int)d_alarms);
    T(fcntl(fd, F_SETFL, O_NONBLOCK));
    T(connect(fd, SA(&a), sizeof(a)));
    p = (struct pollfd){fd, POLLIN | POLLOUT, 0};
    T(poll(&p, 1, 0));
    NOTE("revents %s", tr_pollev(p.revents));
    d_geti(fd, SOL_SOCKET, SO_ERROR, "SO_ERROR");
    T(fcntl(fd, F_SETFL, 0));
    T(setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)));
    T(connect(fd, SA(&a), sizeof(a)));
    T(close(fd));
    fd = TF(socket(AF_INET, SOCK_STREAM, 0));
    tv.tv_usec = 300000;
    T(setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)));
    d_alarm_arm(1);
    T(connect(fd, SA(&a), sizeof(a)));
    NOTE("alarms %d", (int)d_alarms);
    T(close(fd));
    return 0;
}
