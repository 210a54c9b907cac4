/*
 * Behaviour: IPV6_ADDRFORM turns an AF_INET6 socket connected to an
 * IPv4-mapped address into an AF_INET one: SO_DOMAIN becomes AF_INET, the
 * names become sockaddr_in (len 16, read into a sockaddr_storage), data
 * still flows; on an unconnected socket it is ENOTCONN, on a native IPv6
 * connection EADDRNOTAVAIL, to a family other than AF_INET EINVAL; a UDP
 * socket connected to a mapped address converts too.
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in6 mu = d_sin6(D_PEER_MAPPED, D_UDP_ECHO);
    struct sockaddr_storage a;
    socklen_t al;
    char buf[8];
    int t, n, u, f;

    tr_init();
    f = TF(socket(AF_INET6, SOCK_STREAM, 0));
    d_seti(f, IPPROTO_IPV6, IPV6_ADDRFORM, AF_INET);
    T(close(f));

    t = d_connect6(D_PEER_MAPPED, D_ECHO);
    d_seti(t, IPPROTO_IPV6, IPV6_ADDRFORM, AF_INET6);
    d_seti(t, IPPROTO_IPV6, IPV6_ADDRFORM, AF_INET);
    d_geti(t, SOL_SOCKET, SO_DOMAIN, "converted SO_DOMAIN");
    al = sizeof(a);
    T(getsockname(t, SA(&a), &al));
    NOTE("name %s len %d", tr_addr(&a, 1), (int)al);
    al = sizeof(a);
    T(getpeername(t, SA(&a), &al));
    NOTE("peer %s len %d", tr_addr(&a, 0), (int)al);
    T(send(t, "form", 4, 0));
    T(d_read_full(t, buf, 4));
    d_seti(t, IPPROTO_IPV6, IPV6_ADDRFORM, AF_INET);
    d_geti(t, IPPROTO_IP, IP_TOS, "converted IP_TOS");
    T(close(t));

    u = TF(socket(AF_INET6, SOCK_DGRAM, 0));
    T(connect(u, SA(&mu), sizeof(mu)));
    d_seti(u, IPPROTO_IPV6, IPV6_ADDRFORM, AF_INET);
    d_geti(u, SOL_SOCKET, SO_DOMAIN, "converted udp SO_DOMAIN");
    T(send(u, "dg", 2, 0));
    T(recv(u, buf, sizeof(buf), 0));
    al = sizeof(a);
    T(getpeername(u, SA(&a), &al));
    NOTE("udp peer %s len %d", tr_addr(&a, 0), (int)al);
    T(close(u));

    n = d_connect6(D_PEER_IP6, D_ECHO);
    d_seti(n, IPPROTO_IPV6, IPV6_ADDRFORM, AF_INET);
    d_geti(n, SOL_SOCKET, SO_DOMAIN, "native SO_DOMAIN");
    T(close(n));
    return 0;
}
