/*
 * Behaviour: recv/read/recvmsg on an empty non-blocking connected socket
 * fail with EAGAIN; after data arrives (poll POLLIN) they return it, then
 * EAGAIN again.
 */
#include "scen.h"

int
main(void)
{
    char buf[16];
    struct iovec iov = {buf, sizeof(buf)};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
    int fd;

    tr_init();
    fd = d_connect(D_ECHO);
    T(fcntl(fd, F_SETFL, O_NONBLOCK));
    T(recv(fd, buf, sizeof(buf), 0));
    T(read(fd, buf, sizeof(buf)));
    T(recvmsg(fd, &m, 0));
    T(send(fd, "data", 4, 0));
    NOTE("revents %s", tr_pollev(d_wait(fd, POLLIN)));
    T(recv(fd, buf, sizeof(buf), 0));
    NOTE("got %s", tr_data(buf, 4));
    T(recv(fd, buf, sizeof(buf), 0));
    T(close(fd));
    return 0;
}
