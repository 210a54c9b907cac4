/*
 * Behaviour: receiving on a TCP socket that is not connected fails with
 * ENOTCONN (recv, read, recvmsg, recvfrom, on a fresh socket and on a
 * listener), even with MSG_DONTWAIT or O_NONBLOCK.
 */
#include "scen.h"

int
main(void)
{
    char buf[8];
    struct iovec iov = {buf, sizeof(buf)};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
    int fd, l;

    tr_init();
    fd = TF(socket(AF_INET, SOCK_STREAM, 0));
    T(recv(fd, buf, sizeof(buf), 0));
    T(read(fd, buf, sizeof(buf)));
    T(recvmsg(fd, &m, 0));
    T(recvfrom(fd, buf, sizeof(buf), 0, NULL, NULL));
    T(recv(fd, buf, sizeof(buf), MSG_DONTWAIT));
    T(fcntl(fd, F_SETFL, O_NONBLOCK));
    T(recv(fd, buf, sizeof(buf), 0));
    T(close(fd));

    l = d_listen(D_LPORT_BASE + 6);
    T(recv(l, buf, sizeof(buf), 0));
    T(read(l, buf, sizeof(buf)));
    T(close(l));
    return 0;
}
