/*
 * Behaviour: TCP and UDP over 127.0.0.1 inside the subject keep working
 * (kernel fallback): listen, connect, accept, data both ways, peer names,
 * and an epoll set holding the loopback sockets and an accelerated one.
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in lo = d_sin("127.0.0.1", D_LPORT_BASE + 68);
    struct sockaddr_in a;
    socklen_t al = sizeof(a);
    struct epoll_event ev = {.events = EPOLLIN}, out[4];
    char buf[16];
    int one = 1, l, c, s, u1, u2, x, ep, n, i;

    tr_init();
    l = TF(socket(AF_INET, SOCK_STREAM, 0));
    T(setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)));
    T(bind(l, SA(&lo), sizeof(lo)));
    T(listen(l, 4));
    c = TF(socket(AF_INET, SOCK_STREAM, 0));
    T(connect(c, SA(&lo), sizeof(lo)));
    s = TF(accept(l, SA(&a), &al));
    NOTE("peer %s", tr_addr(&a, 1));
    T(send(c, "loop", 4, 0));
    T(recv(s, buf, 4, MSG_WAITALL));
    NOTE("got %s", tr_data(buf, 4));

    u1 = TF(socket(AF_INET, SOCK_DGRAM, 0));
    u2 = TF(socket(AF_INET, SOCK_DGRAM, 0));
    T(bind(u1, SA(&lo), sizeof(lo)));
    T(sendto(u2, "dgram", 5, 0, SA(&lo), sizeof(lo)));
    T(recv(u1, buf, sizeof(buf), 0));

    x = d_connect(D_ECHO);
    ep = TF(epoll_create1(0));
    ev.data.u32 = 1;
    T(epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev));
    ev.data.u32 = 2;
    T(epoll_ctl(ep, EPOLL_CTL_ADD, x, &ev));
    T(send(c, "k", 1, 0));
    T(send(x, "a", 1, 0));
    d_wait(x, POLLIN);
    d_wait(s, POLLIN);
    n = (int)T(epoll_wait(ep, out, 4, 0));
    unsigned seen = 0;
    for (i = 0; i < n; i++)
        seen |= 1u << out[i].data.u32;
    NOTE("ready tags mask %u", seen);
    T(close(ep));
    T(close(x));
    T(close(u1));
    T(close(u2));
    T(close(s));
    T(close(c));
    T(close(l));
    return 0;
}
