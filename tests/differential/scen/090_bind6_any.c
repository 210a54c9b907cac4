/*
 * Behaviour: binding an AF_INET6 socket to [::]:P names it [::]:P (TCP and
 * UDP, len 28); [::]:0 picks an ephemeral port; a listener on [::]:P keeps
 * that name; the 24-byte RFC 2133 sockaddr_in6 (no scope_id) is accepted.
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in6 p = d_sin6("::", D_LPORT_BASE + 90);
    struct sockaddr_in6 z = d_sin6("::", 0);
    struct sockaddr_in6 q = d_sin6("::", D_LPORT_BASE + 90 + 1000);
    int t, u, e, r;

    tr_init();
    t = TF(socket(AF_INET6, SOCK_STREAM, 0));
    T(bind(t, SA(&p), sizeof(p)));
    d_name(t, 0, "tcp bound");
    T(listen(t, 4));
    d_name(t, 0, "tcp listening");
    u = TF(socket(AF_INET6, SOCK_DGRAM, 0));
    T(bind(u, SA(&p), sizeof(p)));
    d_name(u, 0, "udp bound");
    e = TF(socket(AF_INET6, SOCK_STREAM, 0));
    T(bind(e, SA(&z), sizeof(z)));
    d_name(e, 1, "tcp port 0");
    r = TF(socket(AF_INET6, SOCK_DGRAM, 0));
    T(bind(r, SA(&q), 24));
    d_name(r, 0, "udp bound with len 24");
    T(close(t));
    T(close(u));
    T(close(e));
    T(close(r));
    return 0;
}
