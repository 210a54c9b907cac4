/*
 * Behaviour: IPV6_RECVPKTINFO on a dual-stack UDP socket bound to [::]:P:
 * each datagram's IPV6_PKTINFO control message gives the local address it
 * was sent to, ::ffff:10.200.0.2 for the IPv4 echo and fd00:200::2 for the
 * IPv6 one (interface index printed only as non-zero); without the option
 * no control message comes (msg_controllen 0).
 */
#include "scen.h"

static void
one(int u, const char *peer)
{
    struct sockaddr_in6 d = d_sin6(peer, D_UDP_ECHO), from;
    char buf[16], ctl[256], ip[INET6_ADDRSTRLEN];
    struct iovec iov = {buf, sizeof(buf)};
    struct msghdr m = {.msg_name = &from,
                       .msg_namelen = sizeof(from),
                       .msg_iov = &iov,
                       .msg_iovlen = 1,
                       .msg_control = ctl,
                       .msg_controllen = sizeof(ctl)};
    struct cmsghdr *c;

    memset(ctl, 0, sizeof(ctl));
    T(sendto(u, "pi", 2, 0, SA(&d), sizeof(d)));
    T(recvmsg(u, &m, 0));
    NOTE("from %s flags %s controllen %d", tr_addr(&from, 0),
         tr_msgflags(m.msg_flags), (int)m.msg_controllen);
    for (c = CMSG_FIRSTHDR(&m); c != NULL; c = CMSG_NXTHDR(&m, c)) {
        if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO) {
            struct in6_pktinfo pi;
            memcpy(&pi, CMSG_DATA(c), sizeof(pi));
            inet_ntop(AF_INET6, &pi.ipi6_addr, ip, sizeof(ip));
            NOTE("IPV6_PKTINFO addr %s ifindex>0 %d", ip, pi.ipi6_ifindex > 0);
        } else {
            NOTE("cmsg level %d type %d", c->cmsg_level, c->cmsg_type);
        }
    }
}

int
main(void)
{
    struct sockaddr_in6 me = d_sin6("::", D_LPORT_BASE + 136);
    int u;

    tr_init();
    u = TF(socket(AF_INET6, SOCK_DGRAM, 0));
    T(bind(u, SA(&me), sizeof(me)));
    one(u, D_PEER_MAPPED);
    d_seti(u, IPPROTO_IPV6, IPV6_RECVPKTINFO, 1);
    d_geti(u, IPPROTO_IPV6, IPV6_RECVPKTINFO, "IPV6_RECVPKTINFO");
    one(u, D_PEER_MAPPED);
    one(u, D_PEER_IP6);
    T(close(u));
    return 0;
}
