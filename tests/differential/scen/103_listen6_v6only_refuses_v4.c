/*
 * Behaviour: a listener on [::]:P with IPV6_V6ONLY accepts the peer's IPv6
 * connection but not its IPv4 one to 10.200.0.2:P (ECONNREFUSED for the
 * peer: nothing listens on that port for IPv4); the accepted socket
 * inherits IPV6_V6ONLY 1; an AF_INET listener can then take the IPv4 port.
 */
#include "scen.h"

int
main(void)
{
    int port = D_LPORT_BASE + 103;
    struct sockaddr_in6 from;
    socklen_t fl = sizeof(from);
    char buf[8];
    int l, l4, s;

    tr_init();
    l = d_listen6("::", port, 1);
    d_connect_back_try(D_SUBJ_IP, port, "send:v4");
    d_connect_back_try(D_SUBJ_IP6, port, "send:v6");
    s = TF(accept(l, SA(&from), &fl));
    NOTE("accepted from %s len %d", tr_addr(&from, 1), (int)fl);
    d_geti(s, IPPROTO_IPV6, IPV6_V6ONLY, "accepted IPV6_V6ONLY");
    T(read(s, buf, sizeof(buf)));
    NOTE("data %s", tr_data(buf, 2));
    T(close(s));
    T(fcntl(l, F_SETFL, O_NONBLOCK));
    T(accept(l, NULL, NULL));
    l4 = d_listen(port);
    d_connect_back_try(D_SUBJ_IP, port, "send:v4");
    s = TF(accept(l4, NULL, NULL));
    T(close(s));
    T(close(l4));
    T(close(l));
    return 0;
}
