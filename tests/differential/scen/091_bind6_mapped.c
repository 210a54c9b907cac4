/*
 * Behaviour: an AF_INET6 socket binds the subject's IPv4 address in
 * mapped form ::ffff:10.200.0.2 (TCP listener and UDP) and is named so;
 * an AF_INET socket can not then bind 10.200.0.2 on the same port
 * (EADDRINUSE), nor 0.0.0.0.
 */
#include "scen.h"

int
main(void)
{
    int port = D_LPORT_BASE + 91;
    struct sockaddr_in6 m = d_sin6(D_SUBJ_MAPPED, port);
    struct sockaddr_in s4 = d_sin(D_SUBJ_IP, port);
    struct sockaddr_in any4 = d_sin("0.0.0.0", port);
    int t, u, x;

    tr_init();
    t = TF(socket(AF_INET6, SOCK_STREAM, 0));
    T(bind(t, SA(&m), sizeof(m)));
    d_name(t, 0, "tcp bound");
    T(listen(t, 4));
    d_name(t, 0, "tcp listening");
    u = TF(socket(AF_INET6, SOCK_DGRAM, 0));
    T(bind(u, SA(&m), sizeof(m)));
    d_name(u, 0, "udp bound");
    x = TF(socket(AF_INET, SOCK_STREAM, 0));
    T(bind(x, SA(&s4), sizeof(s4)));
    T(bind(x, SA(&any4), sizeof(any4)));
    T(close(x));
    x = TF(socket(AF_INET, SOCK_DGRAM, 0));
    T(bind(x, SA(&s4), sizeof(s4)));
    T(close(x));
    T(close(t));
    T(close(u));
    return 0;
}
