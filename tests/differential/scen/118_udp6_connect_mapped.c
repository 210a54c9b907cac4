/*
 * Behaviour: an AF_INET6 UDP socket connected to ::ffff:10.200.0.1:7007 is
 * named [::ffff:10.200.0.2]:eph with peer [::ffff:10.200.0.1]:7007; send
 * and recv work; connect with AF_UNSPEC disconnects: getpeername
 * ENOTCONN, send EDESTADDRREQ, and the name goes back to [::]:0 (address
 * and port released: they were not bound explicitly).
 */
#include "scen.h"

/* The peer address (119_udp6_connect_native.c includes this file with another).
 */
#ifndef PEER
#define PEER D_PEER_MAPPED
#endif

int
main(void)
{
    struct sockaddr_in6 d = d_sin6(PEER, D_UDP_ECHO);
    struct sockaddr_in6 un;
    char buf[16];
    int u;

    tr_init();
    memset(&un, 0, sizeof(un));
    un.sin6_family = AF_UNSPEC;
    u = TF(socket(AF_INET6, SOCK_DGRAM, 0));
    T(connect(u, SA(&d), sizeof(d)));
    d_name(u, 1, "name");
    d_peer(u, 0, "peer");
    T(send(u, "conn", 4, 0));
    T(recv(u, buf, sizeof(buf), 0));
    NOTE("data %s", tr_data(buf, 4));
    T(connect(u, SA(&un), sizeof(un)));
    d_peer(u, 0, "peer after AF_UNSPEC");
    d_name(u, 1, "name after AF_UNSPEC");
    T(send(u, "x", 1, 0));
    T(close(u));
    return 0;
}
