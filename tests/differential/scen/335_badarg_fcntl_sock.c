/*
 * Behaviour: fcntl on an accelerated socket: F_GETFL is O_RDWR, F_SETFL
 * with O_APPEND|O_NONBLOCK keeps only what sockets keep (O_NONBLOCK and
 * O_APPEND show in F_GETFL as on Linux), F_SETOWN/F_GETOWN round trip the
 * owner pid, F_GETFD/F_SETFD, an unknown command EINVAL, F_DUPFD with a
 * negative minimum EINVAL.
 */
#include "scen.h"

int
main(void)
{
    int fd;

    tr_init();
    fd = d_connect(D_ECHO);
    T(fcntl(fd, F_GETFL) & (O_ACCMODE | O_NONBLOCK | O_APPEND));
    T(fcntl(fd, F_SETFL, O_APPEND | O_NONBLOCK));
    T(fcntl(fd, F_GETFL) & (O_ACCMODE | O_NONBLOCK | O_APPEND));
    T(fcntl(fd, F_SETFL, 0));
    T(fcntl(fd, F_GETFL) & (O_ACCMODE | O_NONBLOCK | O_APPEND));
    T(fcntl(fd, F_SETOWN, getpid()));
    T(fcntl(fd, F_GETOWN) == getpid());
    T(fcntl(fd, F_SETFD, FD_CLOEXEC));
    T(fcntl(fd, F_GETFD));
    T(fcntl(fd, 9999));
    T(fcntl(fd, F_DUPFD, -1));
    T(send(fd, "ok", 2, 0));
    T(close(fd));
    return 0;
}
