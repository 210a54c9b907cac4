/*
 * Behaviour: IPV6_V6ONLY can no longer change once the socket has a local
 * port: after bind (TCP and UDP, `::`), after listen, after a UDP sendto
 * (implicit bind) and after a TCP connect, setting it is EINVAL (either
 * value) and it reads back unchanged.
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in6 any = d_sin6("::", D_LPORT_BASE + 88);
    struct sockaddr_in6 echo = d_sin6(D_PEER_MAPPED, D_UDP_ECHO);
    int t, u, w, c, one = 1;

    tr_init();
    t = TF(socket(AF_INET6, SOCK_STREAM, 0));
    T(setsockopt(t, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)));
    T(bind(t, SA(&any), sizeof(any)));
    d_seti(t, IPPROTO_IPV6, IPV6_V6ONLY, 1);
    d_seti(t, IPPROTO_IPV6, IPV6_V6ONLY, 0);
    d_geti(t, IPPROTO_IPV6, IPV6_V6ONLY, "bound tcp IPV6_V6ONLY");
    T(listen(t, 4));
    d_seti(t, IPPROTO_IPV6, IPV6_V6ONLY, 1);
    T(close(t));

    u = TF(socket(AF_INET6, SOCK_DGRAM, 0));
    d_seti(u, IPPROTO_IPV6, IPV6_V6ONLY, 1);
    T(bind(u, SA(&any), sizeof(any)));
    d_seti(u, IPPROTO_IPV6, IPV6_V6ONLY, 0);
    d_geti(u, IPPROTO_IPV6, IPV6_V6ONLY, "bound udp IPV6_V6ONLY");
    T(close(u));

    w = TF(socket(AF_INET6, SOCK_DGRAM, 0));
    T(sendto(w, "x", 1, 0, SA(&echo), sizeof(echo)));
    d_seti(w, IPPROTO_IPV6, IPV6_V6ONLY, 1);
    d_geti(w, IPPROTO_IPV6, IPV6_V6ONLY, "autobound udp IPV6_V6ONLY");
    T(close(w));

    c = d_connect6(D_PEER_MAPPED, D_ECHO);
    d_seti(c, IPPROTO_IPV6, IPV6_V6ONLY, 1);
    d_geti(c, IPPROTO_IPV6, IPV6_V6ONLY, "connected tcp IPV6_V6ONLY");
    T(close(c));
    return 0;
}
