/*
 * Behaviour: a UDP socket bound to [::]:P with IPV6_V6ONLY and an AF_INET
 * socket bound to 0.0.0.0:P coexist; the peer's IPv4 echo of a datagram
 * sent from the AF_INET socket reaches only that socket, and the IPv6
 * echo of one sent from the v6only socket reaches only the v6only one.
 */
#include "scen.h"

int
main(void)
{
    int port = D_LPORT_BASE + 121;
    struct sockaddr_in6 me6 = d_sin6("::", port);
    struct sockaddr_in me4 = d_sin("0.0.0.0", port);
    struct sockaddr_in e4 = d_sin(D_PEER_IP, D_UDP_ECHO);
    struct sockaddr_in6 e6 = d_sin6(D_PEER_IP6, D_UDP_ECHO);
    struct sockaddr_in6 from;
    socklen_t fl = sizeof(from);
    char buf[16];
    int v6, v4;

    tr_init();
    v6 = TF(socket(AF_INET6, SOCK_DGRAM, 0));
    d_seti(v6, IPPROTO_IPV6, IPV6_V6ONLY, 1);
    T(bind(v6, SA(&me6), sizeof(me6)));
    v4 = TF(socket(AF_INET, SOCK_DGRAM, 0));
    T(bind(v4, SA(&me4), sizeof(me4)));
    T(sendto(v4, "four", 4, 0, SA(&e4), sizeof(e4)));
    NOTE("v4 revents %s", tr_pollev(d_wait(v4, POLLIN)));
    T(recv(v6, buf, sizeof(buf), MSG_DONTWAIT));
    T(recv(v4, buf, sizeof(buf), 0));
    T(sendto(v6, "six", 3, 0, SA(&e6), sizeof(e6)));
    NOTE("v6 revents %s", tr_pollev(d_wait(v6, POLLIN)));
    T(recv(v4, buf, sizeof(buf), MSG_DONTWAIT));
    T(recvfrom(v6, buf, sizeof(buf), 0, SA(&from), &fl));
    NOTE("v6 from %s", tr_addr(&from, 0));
    T(close(v6));
    T(close(v4));
    return 0;
}
