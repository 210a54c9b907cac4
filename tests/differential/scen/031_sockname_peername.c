/*
 * Behaviour: getsockname on a fresh socket gives 0.0.0.0:0, getpeername
 * fails with ENOTCONN until connected; after connect the local address is
 * the subject's with an ephemeral port and the peer address is the peer's;
 * a short addrlen truncates and reports the full length; a NULL-ish len
 * fails; an accepted socket names both ends; UDP likewise.
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in a;
    socklen_t al;
    unsigned char small[4];
    int fd, l, s, u;
    struct sockaddr_in dst = d_sin(D_PEER_IP, D_ECHO);

    tr_init();
    fd = TF(socket(AF_INET, SOCK_STREAM, 0));
    al = sizeof(a);
    T(getsockname(fd, SA(&a), &al));
    NOTE("name %s len %d", tr_addr(&a, 0), (int)al);
    al = sizeof(a);
    T(getpeername(fd, SA(&a), &al));
    T(connect(fd, SA(&dst), sizeof(dst)));
    al = sizeof(a);
    T(getsockname(fd, SA(&a), &al));
    NOTE("name %s", tr_addr(&a, 1));
    al = sizeof(a);
    T(getpeername(fd, SA(&a), &al));
    NOTE("peer %s len %d", tr_addr(&a, 0), (int)al);
    al = sizeof(small);
    T(getpeername(fd, SA(small), &al));
    NOTE("short buffer len %d family %02x%02x port %02x%02x", (int)al, small[0],
         small[1], small[2], small[3]);
    al = (socklen_t)-1;
    T(getsockname(fd, SA(&a), &al));
    T(close(fd));

    l = d_listen(D_LPORT_BASE + 31);
    al = sizeof(a);
    T(getpeername(l, SA(&a), &al));
    d_connect_back(D_LPORT_BASE + 31, "hold");
    s = TF(accept(l, NULL, NULL));
    al = sizeof(a);
    T(getsockname(s, SA(&a), &al));
    NOTE("accepted name %s", tr_addr(&a, 0));
    al = sizeof(a);
    T(getpeername(s, SA(&a), &al));
    NOTE("accepted peer %s", tr_addr(&a, 1));
    T(close(s));
    T(close(l));

    u = TF(socket(AF_INET, SOCK_DGRAM, 0));
    al = sizeof(a);
    T(getpeername(u, SA(&a), &al));
    dst = d_sin(D_PEER_IP, D_UDP_ECHO);
    T(connect(u, SA(&dst), sizeof(dst)));
    al = sizeof(a);
    T(getsockname(u, SA(&a), &al));
    NOTE("udp name %s", tr_addr(&a, 1));
    al = sizeof(a);
    T(getpeername(u, SA(&a), &al));
    NOTE("udp peer %s", tr_addr(&a, 0));
    T(close(u));
    return 0;
}
