/*
 * Behaviour: binding an AF_INET6 socket to an address the subject does not
 * have fails with EADDRNOTAVAIL, native (fd00:200::99) and mapped
 * (::ffff:10.200.0.99), TCP and UDP; the socket stays usable and binds
 * [::]:P afterwards.
 */
#include "scen.h"

int
main(void)
{
    int port = D_LPORT_BASE + 94;
    struct sockaddr_in6 n = d_sin6(D_NONLOCAL_IP6, port);
    struct sockaddr_in6 m = d_sin6(D_NONLOCAL_MAPPED, port);
    struct sockaddr_in6 any = d_sin6("::", port);
    int t, u;

    tr_init();
    t = TF(socket(AF_INET6, SOCK_STREAM, 0));
    T(bind(t, SA(&n), sizeof(n)));
    T(bind(t, SA(&m), sizeof(m)));
    u = TF(socket(AF_INET6, SOCK_DGRAM, 0));
    T(bind(u, SA(&n), sizeof(n)));
    T(bind(u, SA(&m), sizeof(m)));
    T(bind(t, SA(&any), sizeof(any)));
    d_name(t, 0, "tcp bound after failures");
    T(bind(u, SA(&any), sizeof(any)));
    d_name(u, 0, "udp bound after failures");
    T(close(t));
    T(close(u));
    return 0;
}
