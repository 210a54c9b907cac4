/*
 * Behaviour: UDP multicast options and local delivery. Defaults
 * (IP_MULTICAST_TTL 1, IP_MULTICAST_LOOP 1, IP_MULTICAST_IF 0.0.0.0, one
 * byte back when optlen is 1); IP_ADD_MEMBERSHIP / IP_DROP_MEMBERSHIP
 * errno (short optlen EINVAL, unicast group EINVAL, unknown interface
 * ENODEV, drop of a group not joined EADDRNOTAVAIL, double join
 * EADDRINUSE); source filters (block, duplicate block EADDRNOTAVAIL,
 * switching mode with sources EINVAL, dropping the last included source
 * leaves the group); and with IP_MULTICAST_LOOP a datagram sent to a
 * joined group comes back to a socket of the same process bound to the
 * group's port, from the subject's address; with the loop off it does
 * not. The interface is named by the subject's address throughout (the
 * namespaces have no route for multicast).
 */
#include <arpa/inet.h>
#include <string.h>
#include <sys/time.h>

#include "scen.h"

#define GROUP "239.9.9.9"
#define PORT 20810

static struct ip_mreq
mreq(const char *group, const char *ifaddr)
{
    struct ip_mreq m;

    memset(&m, 0, sizeof(m));
    inet_pton(AF_INET, group, &m.imr_multiaddr);
    inet_pton(AF_INET, ifaddr, &m.imr_interface);
    return m;
}

static struct ip_mreq_source
mreq_src(const char *group, const char *src)
{
    struct ip_mreq_source m;

    memset(&m, 0, sizeof(m));
    inet_pton(AF_INET, group, &m.imr_multiaddr);
    inet_pton(AF_INET, D_SUBJ_IP, &m.imr_interface);
    inet_pton(AF_INET, src, &m.imr_sourceaddr);
    return m;
}

int
main(void)
{
    struct ip_mreq m = mreq(GROUP, D_SUBJ_IP);
    struct ip_mreq_source ms = mreq_src(GROUP, "10.1.1.1");
    struct sockaddr_in any = d_sin("0.0.0.0", PORT);
    struct sockaddr_in grp = d_sin(GROUP, PORT);
    struct sockaddr_in from;
    struct timeval tv = {5, 0};
    struct in_addr ifa, ours;
    socklen_t len, flen;
    unsigned char c = 0;
    char buf[64];
    int r, s, v;

    tr_init();
    inet_pton(AF_INET, D_SUBJ_IP, &ours);
    r = TF(socket(AF_INET, SOCK_DGRAM, 0));
    s = TF(socket(AF_INET, SOCK_DGRAM, 0));
    T(setsockopt(r, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
    T(bind(r, (struct sockaddr *)&any, sizeof(any)));

    len = sizeof(v);
    T(getsockopt(s, IPPROTO_IP, IP_MULTICAST_TTL, &v, &len));
    NOTE("ttl %d len %u", v, (unsigned)len);
    len = 1;
    T(getsockopt(s, IPPROTO_IP, IP_MULTICAST_LOOP, &c, &len));
    NOTE("loop %u len %u", c, (unsigned)len);
    len = sizeof(ifa);
    T(getsockopt(s, IPPROTO_IP, IP_MULTICAST_IF, &ifa, &len));
    NOTE("if %s len %u", inet_ntoa(ifa), (unsigned)len);

    T(setsockopt(r, IPPROTO_IP, IP_ADD_MEMBERSHIP, &m, sizeof(m) - 1));
    {
        struct ip_mreq u = mreq("10.1.2.3", D_SUBJ_IP);
        struct ip_mreq o = mreq(GROUP, D_NONLOCAL_IP);

        T(setsockopt(r, IPPROTO_IP, IP_ADD_MEMBERSHIP, &u, sizeof(u)));
        T(setsockopt(r, IPPROTO_IP, IP_ADD_MEMBERSHIP, &o, sizeof(o)));
    }
    T(setsockopt(r, IPPROTO_IP, IP_DROP_MEMBERSHIP, &m, sizeof(m)));
    T(setsockopt(r, IPPROTO_IP, IP_BLOCK_SOURCE, &ms, sizeof(ms)));
    T(setsockopt(r, IPPROTO_IP, IP_ADD_MEMBERSHIP, &m, sizeof(m)));
    T(setsockopt(r, IPPROTO_IP, IP_ADD_MEMBERSHIP, &m, sizeof(m)));
    T(setsockopt(r, IPPROTO_IP, IP_BLOCK_SOURCE, &ms, sizeof(ms)));
    T(setsockopt(r, IPPROTO_IP, IP_BLOCK_SOURCE, &ms, sizeof(ms)));
    T(setsockopt(r, IPPROTO_IP, IP_ADD_SOURCE_MEMBERSHIP, &ms, sizeof(ms)));
    T(setsockopt(r, IPPROTO_IP, IP_UNBLOCK_SOURCE, &ms, sizeof(ms)));
    {
        struct ip_mreq_source g2 = mreq_src("239.9.9.10", "10.1.1.1");
        struct ip_mreq m2 = mreq("239.9.9.10", D_SUBJ_IP);

        T(setsockopt(r, IPPROTO_IP, IP_ADD_SOURCE_MEMBERSHIP, &g2, sizeof(g2)));
        T(setsockopt(r, IPPROTO_IP, IP_DROP_SOURCE_MEMBERSHIP, &g2,
                     sizeof(g2)));
        T(setsockopt(r, IPPROTO_IP, IP_DROP_MEMBERSHIP, &m2, sizeof(m2)));
    }

    /* The sender names the interface by its address. */
    T(setsockopt(s, IPPROTO_IP, IP_MULTICAST_IF, &ours, sizeof(ours)));
    len = sizeof(ifa);
    T(getsockopt(s, IPPROTO_IP, IP_MULTICAST_IF, &ifa, &len));
    NOTE("if is the subject's %d", ifa.s_addr == ours.s_addr);
    v = 4;
    T(setsockopt(s, IPPROTO_IP, IP_MULTICAST_TTL, &v, sizeof(v)));
    T(sendto(s, "on", 2, 0, (struct sockaddr *)&grp, sizeof(grp)));
    flen = sizeof(from);
    T(recvfrom(r, buf, sizeof(buf), 0, (struct sockaddr *)&from, &flen));
    NOTE("from the subject %d", from.sin_addr.s_addr == ours.s_addr);
    c = 0;
    T(setsockopt(s, IPPROTO_IP, IP_MULTICAST_LOOP, &c, 1));
    T(sendto(s, "off", 3, 0, (struct sockaddr *)&grp, sizeof(grp)));
    c = 1;
    T(setsockopt(s, IPPROTO_IP, IP_MULTICAST_LOOP, &c, 1));
    T(sendto(s, "end", 3, 0, (struct sockaddr *)&grp, sizeof(grp)));
    memset(buf, 0, sizeof(buf));
    T(recv(r, buf, sizeof(buf), 0));
    NOTE("next datagram %s", tr_data(buf, strlen(buf)));
    T(setsockopt(r, IPPROTO_IP, IP_DROP_MEMBERSHIP, &m, sizeof(m)));
    T(close(s));
    T(close(r));
    return 0;
}
