/*
 * Behaviour: an AF_INET6 UDP socket connected to a closed port of the peer
 * (::ffff:10.200.0.1:7009): the first send succeeds, the peer's ICMP port
 * unreachable makes the next recv fail with ECONNREFUSED (after POLLERR),
 * once; SO_ERROR is then 0 and recv with MSG_DONTWAIT is EAGAIN.
 */
#include "scen.h"

/* The peer address (124_udp6_refused_native.c includes this file with another).
 */
#ifndef PEER
#define PEER D_PEER_MAPPED
#endif

int
main(void)
{
    struct sockaddr_in6 d = d_sin6(PEER, D_REFUSED);
    char buf[8];
    int u;

    tr_init();
    u = TF(socket(AF_INET6, SOCK_DGRAM, 0));
    T(connect(u, SA(&d), sizeof(d)));
    T(send(u, "x", 1, 0));
    NOTE("revents %s", tr_pollev(d_wait(u, POLLERR)));
    T(recv(u, buf, sizeof(buf), 0));
    d_geti(u, SOL_SOCKET, SO_ERROR, "SO_ERROR");
    T(recv(u, buf, sizeof(buf), MSG_DONTWAIT));
    T(close(u));
    return 0;
}
