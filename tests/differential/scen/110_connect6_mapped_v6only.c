/*
 * Behaviour: an IPV6_V6ONLY socket can not reach an IPv4-mapped address:
 * TCP connect to ::ffff:10.200.0.1 is ENETUNREACH, UDP connect and sendto
 * likewise; a sockaddr_in destination for sendto too; the same sockets
 * then reach fd00:200::1.
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in6 m = d_sin6(D_PEER_MAPPED, D_ECHO);
    struct sockaddr_in6 mu = d_sin6(D_PEER_MAPPED, D_UDP_ECHO);
    struct sockaddr_in6 n = d_sin6(D_PEER_IP6, D_ECHO);
    struct sockaddr_in6 nu = d_sin6(D_PEER_IP6, D_UDP_ECHO);
    struct sockaddr_in a4 = d_sin(D_PEER_IP, D_UDP_ECHO);
    char buf[8];
    int t, u;

    tr_init();
    t = TF(socket(AF_INET6, SOCK_STREAM, 0));
    d_seti(t, IPPROTO_IPV6, IPV6_V6ONLY, 1);
    T(connect(t, SA(&m), sizeof(m)));
    T(connect(t, SA(&n), sizeof(n)));
    d_peer(t, 0, "tcp peer");
    T(close(t));
    u = TF(socket(AF_INET6, SOCK_DGRAM, 0));
    d_seti(u, IPPROTO_IPV6, IPV6_V6ONLY, 1);
    T(connect(u, SA(&mu), sizeof(mu)));
    T(sendto(u, "x", 1, 0, SA(&mu), sizeof(mu)));
    T(sendto(u, "x", 1, 0, SA(&a4), sizeof(a4)));
    T(connect(u, SA(&nu), sizeof(nu)));
    T(send(u, "v6", 2, 0));
    T(recv(u, buf, sizeof(buf), 0));
    T(close(u));
    return 0;
}
