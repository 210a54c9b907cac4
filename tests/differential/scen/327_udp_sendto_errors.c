/*
 * Behaviour: sendto argument errors on a bound UDP socket: a short
 * address length EINVAL, port 0 EINVAL, the subnet broadcast without
 * SO_BROADCAST EACCES (and with it sent), a 65508-byte datagram EMSGSIZE,
 * a 65507-byte one sent (fragmented), AF_INET6 address on an AF_INET
 * socket EAFNOSUPPORT; MSG_CONFIRM and MSG_DONTROUTE are accepted.
 */
#include "scen.h"

int
main(void)
{
    static char big[65508];
    struct sockaddr_in b = d_sin(D_SUBJ_IP, 0);
    struct sockaddr_in e = d_sin(D_PEER_IP, D_UDP_ECHO);
    struct sockaddr_in z = d_sin(D_PEER_IP, 0);
    struct sockaddr_in bc = d_sin("10.200.0.255", D_UDP_ECHO);
    struct sockaddr_in6 s6 = d_sin6(D_PEER_IP6, D_UDP_ECHO);
    int fd;

    tr_init();
    fd = TF(socket(AF_INET, SOCK_DGRAM, 0));
    T(bind(fd, SA(&b), sizeof(b)));
    T(sendto(fd, "x", 1, 0, SA(&e), sizeof(e) - 1));
    T(sendto(fd, "x", 1, 0, SA(&z), sizeof(z)));
    T(sendto(fd, "x", 1, 0, SA(&bc), sizeof(bc)));
    d_seti(fd, SOL_SOCKET, SO_BROADCAST, 1);
    T(sendto(fd, "x", 1, 0, SA(&bc), sizeof(bc)));
    T(sendto(fd, big, sizeof(big), 0, SA(&e), sizeof(e)));
    T(sendto(fd, big, sizeof(big) - 1, 0, SA(&e), sizeof(e)));
    T(sendto(fd, "x", 1, 0, SA(&s6), sizeof(s6)));
    T(sendto(fd, "x", 1, MSG_CONFIRM, SA(&e), sizeof(e)));
    T(sendto(fd, "x", 1, MSG_DONTROUTE, SA(&e), sizeof(e)));
    T(close(fd));
    return 0;
}
