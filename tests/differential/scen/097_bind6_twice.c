/*
 * Behaviour: a bound AF_INET6 socket can not bind again (EINVAL), whatever
 * the second address (same, other port, mapped, native), TCP and UDP; a
 * UDP socket bound implicitly by sendto can not bind either; the first
 * name stays.
 */
#include "scen.h"

int
main(void)
{
    int port = D_LPORT_BASE + 97;
    struct sockaddr_in6 any = d_sin6("::", port);
    struct sockaddr_in6 other = d_sin6("::", port + 1000);
    struct sockaddr_in6 m = d_sin6(D_SUBJ_MAPPED, port + 2000);
    struct sockaddr_in6 n = d_sin6(D_SUBJ_IP6, port + 3000);
    struct sockaddr_in6 echo = d_sin6(D_PEER_MAPPED, D_UDP_ECHO);
    int t, u, w;

    tr_init();
    t = TF(socket(AF_INET6, SOCK_STREAM, 0));
    T(bind(t, SA(&any), sizeof(any)));
    T(bind(t, SA(&any), sizeof(any)));
    T(bind(t, SA(&other), sizeof(other)));
    T(bind(t, SA(&m), sizeof(m)));
    d_name(t, 0, "tcp name");
    u = TF(socket(AF_INET6, SOCK_DGRAM, 0));
    T(bind(u, SA(&n), sizeof(n)));
    T(bind(u, SA(&other), sizeof(other)));
    d_name(u, 0, "udp name");
    w = TF(socket(AF_INET6, SOCK_DGRAM, 0));
    T(sendto(w, "x", 1, 0, SA(&echo), sizeof(echo)));
    T(bind(w, SA(&other), sizeof(other)));
    d_name(w, 1, "autobound udp name");
    T(close(t));
    T(close(u));
    T(close(w));
    return 0;
}
