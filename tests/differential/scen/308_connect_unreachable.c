/*
 * Behaviour: a non-blocking connect to an address on the subnet that
 * nobody answers for fails once neighbour resolution gives up (about 3 s
 * on Linux): poll then reports POLLOUT|POLLERR|POLLHUP and SO_ERROR is
 * EHOSTUNREACH (read once, then 0); the socket is unconnected
 * (getpeername ENOTCONN).
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in a = d_sin(D_NONLOCAL_IP, D_ECHO);
    struct pollfd p;
    int fd;

    tr_init();
    fd = TF(socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0));
    T(connect(fd, SA(&a), sizeof(a)));
    p = (struct pollfd){fd, POLLOUT, 0};
    T(poll(&p, 1, 5000));
    NOTE("revents %s", tr_pollev(p.revents));
    d_geti(fd, SOL_SOCKET, SO_ERROR, "SO_ERROR");
    d_geti(fd, SOL_SOCKET, SO_ERROR, "SO_ERROR");
    d_peer(fd, 0, "peer");
    T(close(fd));
    return 0;
}
