/*
 * Behaviour: an AF_INET6 TCP connect to a closed IPv4 port in mapped form
 * (::ffff:10.200.0.1:7009) fails with ECONNREFUSED, blocking; SO_ERROR is
 * 0 afterwards, the socket is unconnected (ENOTCONN) and a second connect
 * to the echo port succeeds.
 */
#include "scen.h"

/* The peer address (112_connect6_refused_native.c includes this file with
 * another). */
#ifndef PEER
#define PEER D_PEER_MAPPED
#endif

int
main(void)
{
    struct sockaddr_in6 r = d_sin6(PEER, D_REFUSED);
    struct sockaddr_in6 e = d_sin6(PEER, D_ECHO);
    int fd;

    tr_init();
    fd = TF(socket(AF_INET6, SOCK_STREAM, 0));
    T(connect(fd, SA(&r), sizeof(r)));
    d_geti(fd, SOL_SOCKET, SO_ERROR, "SO_ERROR");
    d_peer(fd, 0, "peer");
    T(connect(fd, SA(&e), sizeof(e)));
    d_peer(fd, 0, "peer");
    T(close(fd));
    return 0;
}
