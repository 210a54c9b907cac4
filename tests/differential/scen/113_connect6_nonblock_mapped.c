/*
 * Behaviour: a non-blocking AF_INET6 connect to ::ffff:10.200.0.1 returns
 * EINPROGRESS; poll reports POLLOUT and SO_ERROR is 0 (then the names);
 * to the refused port, EINPROGRESS, then POLLOUT|POLLERR|POLLHUP and
 * SO_ERROR ECONNREFUSED (read once, then 0).
 */
#include "scen.h"

/* The peer address (114_connect6_nonblock_native.c includes this file with
 * another). */
#ifndef PEER
#define PEER D_PEER_MAPPED
#endif

static void
nb_connect(const char *ip, int port)
{
    struct sockaddr_in6 a = d_sin6(ip, port);
    int fd = TF(socket(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK, 0));

    T(connect(fd, SA(&a), sizeof(a)));
    NOTE("revents %s", tr_pollev(d_wait(fd, POLLOUT)));
    d_geti(fd, SOL_SOCKET, SO_ERROR, "SO_ERROR");
    d_geti(fd, SOL_SOCKET, SO_ERROR, "SO_ERROR again");
    d_peer(fd, 0, "peer");
    T(close(fd));
}

int
main(void)
{
    tr_init();
    nb_connect(PEER, D_ECHO);
    nb_connect(PEER, D_REFUSED);
    return 0;
}
