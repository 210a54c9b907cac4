/*
 * Behaviour: a UDP socket bound to [::]:P (dual) talks to the peer's echo
 * over both families, to ::ffff:10.200.0.1 and to fd00:200::1 (the IPv4
 * reply is queued before the IPv6 datagram is sent); recvfrom names each
 * sender in its own form, len 28 both; the socket keeps the name [::]:P.
 */
#include "scen.h"

int
main(void)
{
    int port = D_LPORT_BASE + 120;
    struct sockaddr_in6 me = d_sin6("::", port);
    struct sockaddr_in6 m = d_sin6(D_PEER_MAPPED, D_UDP_ECHO);
    struct sockaddr_in6 n = d_sin6(D_PEER_IP6, D_UDP_ECHO);
    struct sockaddr_in6 from;
    socklen_t fl;
    char buf[16];
    int u, i;

    tr_init();
    u = TF(socket(AF_INET6, SOCK_DGRAM, 0));
    T(bind(u, SA(&me), sizeof(me)));
    T(sendto(u, "four", 4, 0, SA(&m), sizeof(m)));
    NOTE("revents %s", tr_pollev(d_wait(u, POLLIN)));
    T(sendto(u, "six", 3, 0, SA(&n), sizeof(n)));
    for (i = 0; i < 2; i++) {
        fl = sizeof(from);
        memset(&from, 0, sizeof(from));
        T(recvfrom(u, buf, sizeof(buf), 0, SA(&from), &fl));
        NOTE("from %s len %d", tr_addr(&from, 0), (int)fl);
        if (i == 0)
            d_wait(u, POLLIN);
    }
    T(recv(u, buf, sizeof(buf), MSG_DONTWAIT));
    d_name(u, 0, "name");
    T(close(u));
    return 0;
}
