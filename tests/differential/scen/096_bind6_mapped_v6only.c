/*
 * Behaviour: an IPV6_V6ONLY socket can not bind an IPv4-mapped address
 * (::ffff:10.200.0.2: EINVAL), TCP and UDP, while native fd00:200::2 and
 * [::] bind on the same sockets afterwards.
 */
#include "scen.h"

int
main(void)
{
    int port = D_LPORT_BASE + 96;
    struct sockaddr_in6 m = d_sin6(D_SUBJ_MAPPED, port);
    struct sockaddr_in6 n = d_sin6(D_SUBJ_IP6, port);
    struct sockaddr_in6 any = d_sin6("::", port);
    struct sockaddr_in6 m0 = d_sin6("::ffff:0.0.0.0", port);
    int t, u;

    tr_init();
    t = TF(socket(AF_INET6, SOCK_STREAM, 0));
    d_seti(t, IPPROTO_IPV6, IPV6_V6ONLY, 1);
    T(bind(t, SA(&m), sizeof(m)));
    T(bind(t, SA(&m0), sizeof(m0)));
    T(bind(t, SA(&n), sizeof(n)));
    d_name(t, 0, "tcp v6only bound");
    u = TF(socket(AF_INET6, SOCK_DGRAM, 0));
    d_seti(u, IPPROTO_IPV6, IPV6_V6ONLY, 1);
    T(bind(u, SA(&m), sizeof(m)));
    T(bind(u, SA(&any), sizeof(any)));
    d_name(u, 0, "udp v6only bound");
    T(close(t));
    T(close(u));
    return 0;
}
