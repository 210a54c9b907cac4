/*
 * Behaviour: SO_TYPE, SO_DOMAIN, SO_PROTOCOL and SO_ACCEPTCONN report the
 * socket's type, family, protocol and listening state for TCP (fresh,
 * listening, connected, accepted) and UDP sockets.
 */
#include "scen.h"

static void
show(const char *what, int fd)
{
    int t = -1, d = -1, p = -1, a = -1;
    socklen_t l = sizeof(int);

    getsockopt(fd, SOL_SOCKET, SO_TYPE, &t, &l);
    l = sizeof(int);
    getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &d, &l);
    l = sizeof(int);
    getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &p, &l);
    l = sizeof(int);
    getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &a, &l);
    NOTE("%s: type %d domain %d protocol %d acceptconn %d", what, t, d, p, a);
}

int
main(void)
{
    int s, l, c, a, u;

    tr_init();
    s = TF(socket(AF_INET, SOCK_STREAM, 0));
    show("tcp fresh", s);
    T(close(s));
    s = TF(socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, IPPROTO_TCP));
    show("tcp nonblock", s);
    T(close(s));
    l = d_listen(D_LPORT_BASE + 24);
    show("tcp listener", l);
    c = d_connect(D_ECHO);
    show("tcp connected", c);
    d_connect_back(D_LPORT_BASE + 24, "hold");
    a = TF(accept(l, NULL, NULL));
    show("tcp accepted", a);
    u = TF(socket(AF_INET, SOCK_DGRAM, 0));
    show("udp", u);
    T(close(u));
    T(close(a));
    T(close(c));
    T(close(l));
    return 0;
}
