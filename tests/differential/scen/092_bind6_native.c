/*
 * Behaviour: an AF_INET6 socket binds the subject's IPv6 address
 * fd00:200::2 (TCP listener and UDP, then port 0: ephemeral) and is named
 * so; an AF_INET socket can still bind 0.0.0.0 and 10.200.0.2 on the same
 * port (a native IPv6 address does not take the IPv4 port).
 */
#include "scen.h"

int
main(void)
{
    int port = D_LPORT_BASE + 92;
    struct sockaddr_in6 n = d_sin6(D_SUBJ_IP6, port);
    struct sockaddr_in6 n0 = d_sin6(D_SUBJ_IP6, 0);
    struct sockaddr_in any4 = d_sin("0.0.0.0", port);
    struct sockaddr_in s4 = d_sin(D_SUBJ_IP, port);
    int t, u, e, x, y;

    tr_init();
    t = TF(socket(AF_INET6, SOCK_STREAM, 0));
    T(bind(t, SA(&n), sizeof(n)));
    d_name(t, 0, "tcp bound");
    T(listen(t, 4));
    u = TF(socket(AF_INET6, SOCK_DGRAM, 0));
    T(bind(u, SA(&n), sizeof(n)));
    d_name(u, 0, "udp bound");
    e = TF(socket(AF_INET6, SOCK_DGRAM, 0));
    T(bind(e, SA(&n0), sizeof(n0)));
    d_name(e, 1, "udp port 0");
    x = TF(socket(AF_INET, SOCK_STREAM, 0));
    T(bind(x, SA(&any4), sizeof(any4)));
    T(close(x));
    y = TF(socket(AF_INET, SOCK_STREAM, 0));
    T(bind(y, SA(&s4), sizeof(s4)));
    T(close(y));
    T(close(t));
    T(close(u));
    T(close(e));
    return 0;
}
