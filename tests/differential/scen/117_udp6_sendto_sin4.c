/*
 * Behaviour: sendto on an AF_INET6 UDP socket with a sockaddr_in (AF_INET)
 * destination: on a dual socket it is sent as IPv4 (the reply comes from
 * [::ffff:10.200.0.1]:7007); with IPV6_V6ONLY it is ENETUNREACH. A
 * sockaddr_in shorter than the family field is EINVAL, an AF_UNSPEC
 * destination counts as none (EDESTADDRREQ unconnected), another family
 * (AF_UNIX) is EINVAL.
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in a4 = d_sin(D_PEER_IP, D_UDP_ECHO);
    struct sockaddr_in6 un = d_sin6(D_PEER_IP6, D_UDP_ECHO);
    struct sockaddr_in6 ux = un;
    struct sockaddr_in6 from;
    socklen_t fl = sizeof(from);
    char buf[16];
    int u, v;

    tr_init();
    un.sin6_family = AF_UNSPEC;
    ux.sin6_family = AF_UNIX;
    u = TF(socket(AF_INET6, SOCK_DGRAM, 0));
    T(sendto(u, "four", 4, 0, SA(&a4), sizeof(a4)));
    d_name(u, 1, "name");
    T(recvfrom(u, buf, sizeof(buf), 0, SA(&from), &fl));
    NOTE("from %s len %d", tr_addr(&from, 0), (int)fl);
    T(sendto(u, "x", 1, 0, SA(&a4), 1));
    T(sendto(u, "x", 1, 0, SA(&un), sizeof(un)));
    T(sendto(u, "x", 1, 0, SA(&ux), sizeof(ux)));
    T(close(u));
    v = TF(socket(AF_INET6, SOCK_DGRAM, 0));
    d_seti(v, IPPROTO_IPV6, IPV6_V6ONLY, 1);
    T(sendto(v, "four", 4, 0, SA(&a4), sizeof(a4)));
    T(close(v));
    return 0;
}
