/*
 * Behaviour: IPV6_TCLASS and IPV6_UNICAST_HOPS on AF_INET6 TCP and UDP
 * sockets: TCLASS starts 0, takes 0x28, -1 restores the default, 256 is
 * EINVAL; UNICAST_HOPS reads the route's or system default (64) when
 * unset, takes 10, -1 restores, 256 and -2 are EINVAL; MULTICAST_HOPS
 * starts 1; a connected socket (mapped and native) keeps what was set.
 */
#include "scen.h"

static void
opts(int fd, const char *what)
{
    NOTE("%s", what);
    d_geti(fd, IPPROTO_IPV6, IPV6_TCLASS, "IPV6_TCLASS");
    d_seti(fd, IPPROTO_IPV6, IPV6_TCLASS, 0x28);
    d_geti(fd, IPPROTO_IPV6, IPV6_TCLASS, "IPV6_TCLASS after 0x28");
    d_seti(fd, IPPROTO_IPV6, IPV6_TCLASS, -1);
    d_geti(fd, IPPROTO_IPV6, IPV6_TCLASS, "IPV6_TCLASS after -1");
    d_seti(fd, IPPROTO_IPV6, IPV6_TCLASS, 256);
    d_geti(fd, IPPROTO_IPV6, IPV6_UNICAST_HOPS, "IPV6_UNICAST_HOPS");
    d_seti(fd, IPPROTO_IPV6, IPV6_UNICAST_HOPS, 10);
    d_geti(fd, IPPROTO_IPV6, IPV6_UNICAST_HOPS, "IPV6_UNICAST_HOPS after 10");
    d_seti(fd, IPPROTO_IPV6, IPV6_UNICAST_HOPS, -1);
    d_geti(fd, IPPROTO_IPV6, IPV6_UNICAST_HOPS, "IPV6_UNICAST_HOPS after -1");
    d_seti(fd, IPPROTO_IPV6, IPV6_UNICAST_HOPS, 256);
    d_seti(fd, IPPROTO_IPV6, IPV6_UNICAST_HOPS, -2);
    d_geti(fd, IPPROTO_IPV6, IPV6_MULTICAST_HOPS, "IPV6_MULTICAST_HOPS");
}

static void
connected(const char *ip)
{
    struct sockaddr_in6 a = d_sin6(ip, D_ECHO);
    int fd = TF(socket(AF_INET6, SOCK_STREAM, 0));

    NOTE("connected to %s", ip);
    d_seti(fd, IPPROTO_IPV6, IPV6_TCLASS, 0x10);
    d_seti(fd, IPPROTO_IPV6, IPV6_UNICAST_HOPS, 7);
    T(connect(fd, SA(&a), sizeof(a)));
    d_geti(fd, IPPROTO_IPV6, IPV6_TCLASS, "IPV6_TCLASS");
    d_geti(fd, IPPROTO_IPV6, IPV6_UNICAST_HOPS, "IPV6_UNICAST_HOPS");
    T(send(fd, "hop", 3, MSG_NOSIGNAL));
    T(close(fd));
}

int
main(void)
{
    struct sockaddr_in6 me = d_sin6(D_SUBJ_IP6, 0);
    int t, u;

    tr_init();
    t = TF(socket(AF_INET6, SOCK_STREAM, 0));
    opts(t, "tcp");
    u = TF(socket(AF_INET6, SOCK_DGRAM, 0));
    T(bind(u, SA(&me), sizeof(me)));
    opts(u, "udp bound");
    T(close(t));
    T(close(u));
    connected(D_PEER_MAPPED);
    connected(D_PEER_IP6);
    return 0;
}
