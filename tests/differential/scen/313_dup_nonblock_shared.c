/*
 * Behaviour: a dup shares the open file's status flags but not the fd
 * flags: O_NONBLOCK set through one descriptor shows on the other (recv
 * EAGAIN on both), FD_CLOEXEC set on one does not; F_DUPFD_CLOEXEC gives
 * a descriptor at or above the asked number with FD_CLOEXEC; closing the
 * original leaves both duplicates working (echo round trip through each).
 */
#include "scen.h"

int
main(void)
{
    char buf[8];
    int fd, d, dc;

    tr_init();
    fd = d_connect(D_ECHO);
    d = TF(dup(fd));
    dc = TF(fcntl(fd, F_DUPFD_CLOEXEC, 100));
    NOTE("dc >= 100: %d", dc >= 100);
    T(fcntl(d, F_SETFL, O_NONBLOCK));
    T(fcntl(fd, F_GETFL) & O_NONBLOCK);
    T(fcntl(dc, F_GETFL) & O_NONBLOCK);
    T(recv(fd, buf, sizeof(buf), 0));
    T(recv(dc, buf, sizeof(buf), 0));
    T(fcntl(fd, F_SETFD, FD_CLOEXEC));
    T(fcntl(fd, F_GETFD));
    T(fcntl(d, F_GETFD));
    T(fcntl(dc, F_GETFD));
    T(fcntl(dc, F_SETFL, 0));
    T(fcntl(d, F_GETFL) & O_NONBLOCK);
    T(close(fd));
    T(send(d, "ab", 2, 0));
    T(d_read_full(dc, buf, 2));
    T(send(dc, "cd", 2, 0));
    T(d_read_full(d, buf, 2));
    NOTE("got %s", tr_data(buf, 2));
    T(close(d));
    T(close(dc));
    return 0;
}
