/*
 * Behaviour: AF_INET6 sockets report SO_DOMAIN AF_INET6 (10), SO_TYPE and
 * SO_PROTOCOL for TCP and UDP, with the protocol given as 0 or explicitly;
 * a protocol that does not fit the type is EPROTONOSUPPORT.
 */
#include "scen.h"

int
main(void)
{
    int t, u, t2, u2;

    tr_init();
    t = TF(socket(AF_INET6, SOCK_STREAM, 0));
    u = TF(socket(AF_INET6, SOCK_DGRAM, 0));
    t2 = TF(socket(AF_INET6, SOCK_STREAM, IPPROTO_TCP));
    u2 = TF(socket(AF_INET6, SOCK_DGRAM, IPPROTO_UDP));
    d_geti(t, SOL_SOCKET, SO_DOMAIN, "tcp SO_DOMAIN");
    d_geti(t, SOL_SOCKET, SO_TYPE, "tcp SO_TYPE");
    d_geti(t, SOL_SOCKET, SO_PROTOCOL, "tcp SO_PROTOCOL");
    d_geti(u, SOL_SOCKET, SO_DOMAIN, "udp SO_DOMAIN");
    d_geti(u, SOL_SOCKET, SO_TYPE, "udp SO_TYPE");
    d_geti(u, SOL_SOCKET, SO_PROTOCOL, "udp SO_PROTOCOL");
    d_geti(t2, SOL_SOCKET, SO_PROTOCOL, "tcp explicit SO_PROTOCOL");
    d_geti(u2, SOL_SOCKET, SO_PROTOCOL, "udp explicit SO_PROTOCOL");
    T(socket(AF_INET6, SOCK_STREAM, IPPROTO_UDP));
    T(socket(AF_INET6, SOCK_DGRAM, IPPROTO_TCP));
    T(close(t));
    T(close(u));
    T(close(t2));
    T(close(u2));
    return 0;
}
