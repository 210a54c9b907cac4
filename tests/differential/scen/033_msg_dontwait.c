/*
 * Behaviour: MSG_DONTWAIT makes one recv/send non-blocking without changing
 * the socket's O_NONBLOCK flag: recv on an empty blocking socket fails with
 * EAGAIN, returns data once it is there; send with it succeeds.
 */
#include "scen.h"

int
main(void)
{
    char buf[8];
    int fd;

    tr_init();
    fd = d_connect(D_ECHO);
    T(recv(fd, buf, sizeof(buf), MSG_DONTWAIT));
    T(fcntl(fd, F_GETFL) & O_NONBLOCK);
    T(send(fd, "dw", 2, MSG_DONTWAIT));
    NOTE("revents %s", tr_pollev(d_wait(fd, POLLIN)));
    T(recv(fd, buf, sizeof(buf), MSG_DONTWAIT));
    NOTE("got %s", tr_data(buf, 2));
    T(recv(fd, buf, sizeof(buf), MSG_DONTWAIT));
    T(fcntl(fd, F_GETFL) & O_NONBLOCK);
    T(close(fd));
    return 0;
}
