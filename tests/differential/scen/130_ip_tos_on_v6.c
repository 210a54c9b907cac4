/*
 * Behaviour: IPv4-level options on AF_INET6 sockets: IP_TOS and IP_TTL are
 * accepted and read back on TCP and UDP (they govern IPv4 traffic of a
 * mapped connection), independent of IPV6_TCLASS; on a socket connected
 * to ::ffff:10.200.0.1 they stay readable.
 */
#include "scen.h"

static void
v4opts(int fd, const char *what)
{
    NOTE("%s", what);
    d_geti(fd, IPPROTO_IP, IP_TOS, "IP_TOS");
    d_seti(fd, IPPROTO_IP, IP_TOS, 0x20);
    d_geti(fd, IPPROTO_IP, IP_TOS, "IP_TOS after 0x20");
    d_geti(fd, IPPROTO_IPV6, IPV6_TCLASS, "IPV6_TCLASS");
    d_geti(fd, IPPROTO_IP, IP_TTL, "IP_TTL");
    d_seti(fd, IPPROTO_IP, IP_TTL, 33);
    d_geti(fd, IPPROTO_IP, IP_TTL, "IP_TTL after 33");
}

int
main(void)
{
    struct sockaddr_in6 m = d_sin6(D_PEER_MAPPED, D_ECHO);
    struct sockaddr_in6 me = d_sin6(D_SUBJ_MAPPED, 0);
    char buf[4];
    int t, u;

    tr_init();
    t = TF(socket(AF_INET6, SOCK_STREAM, 0));
    v4opts(t, "tcp");
    T(connect(t, SA(&m), sizeof(m)));
    d_geti(t, IPPROTO_IP, IP_TOS, "connected IP_TOS");
    d_geti(t, IPPROTO_IP, IP_TTL, "connected IP_TTL");
    T(send(t, "tos", 3, 0));
    T(d_read_full(t, buf, 3));
    T(close(t));
    u = TF(socket(AF_INET6, SOCK_DGRAM, 0));
    T(bind(u, SA(&me), sizeof(me)));
    v4opts(u, "udp bound mapped");
    T(close(u));
    return 0;
}
