/*
 * Behaviour: TCP_NODELAY is 0 by default, reads back what was set (any
 * non-zero value reads as 1) on fresh, listening, connected and accepted
 * sockets; it is inherited by accepted sockets from the listener; TCP
 * options on a UDP socket fail (Linux: EOPNOTSUPP).
 */
#include "scen.h"

static void
get(const char *what, int fd)
{
    int v = -1;
    socklen_t l = sizeof(v);

    T(getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, &l));
    NOTE("%s TCP_NODELAY %d", what, v);
}

int
main(void)
{
    int one = 1, zero = 0, seven = 7, fd, l, a, c, u;

    tr_init();
    fd = TF(socket(AF_INET, SOCK_STREAM, 0));
    get("fresh", fd);
    T(setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &seven, sizeof(seven)));
    get("fresh", fd);
    T(setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &zero, sizeof(zero)));
    get("fresh", fd);
    T(close(fd));

    l = d_listen(D_LPORT_BASE + 27);
    T(setsockopt(l, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)));
    get("listener", l);
    d_connect_back(D_LPORT_BASE + 27, "echo");
    a = TF(accept(l, NULL, NULL));
    get("accepted", a);
    c = d_connect(D_ECHO);
    get("connected", c);
    T(setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)));
    get("connected", c);
    T(send(c, "n", 1, 0));
    T(recv(c, (char[1]){0}, 1, 0));

    u = TF(socket(AF_INET, SOCK_DGRAM, 0));
    T(setsockopt(u, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)));
    get("udp", u);
    T(close(u));
    T(close(c));
    T(close(a));
    T(close(l));
    return 0;
}
