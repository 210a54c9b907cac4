/*
 * Behaviour: AF_INET6 sockets on the loopback (::1 and ::ffff:127.0.0.1,
 * kernel fallback under accel) listen, connect, accept and carry data,
 * with the expected names; a UDP pair on ::1 exchanges a datagram. Then a
 * socket bound to the subject's mapped address (on the stack under accel)
 * beside them.
 */
#include "scen.h"

static void
pair(const char *ip, int port)
{
    struct sockaddr_in6 a = d_sin6(ip, port);
    char buf[8];
    int one = 1, l, c, s;

    NOTE("loopback %s", ip);
    l = TF(socket(AF_INET6, SOCK_STREAM, 0));
    T(setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)));
    T(bind(l, SA(&a), sizeof(a)));
    T(listen(l, 4));
    c = TF(socket(AF_INET6, SOCK_STREAM, 0));
    T(connect(c, SA(&a), sizeof(a)));
    s = TF(accept(l, NULL, NULL));
    d_name(c, 1, "client name");
    d_peer(c, 0, "client peer");
    d_name(s, 0, "accepted name");
    T(send(c, "ping", 4, 0));
    T(recv(s, buf, sizeof(buf), 0));
    T(close(c));
    T(close(s));
    T(close(l));
}

int
main(void)
{
    int port = D_LPORT_BASE + 93;
    struct sockaddr_in6 u1a = d_sin6("::1", port + 1000);
    struct sockaddr_in6 from, m = d_sin6(D_SUBJ_MAPPED, port);
    socklen_t fl = sizeof(from);
    char buf[8];
    int u1, u2, x;

    tr_init();
    pair("::1", port);
    pair("::ffff:127.0.0.1", port);
    u1 = TF(socket(AF_INET6, SOCK_DGRAM, 0));
    u2 = TF(socket(AF_INET6, SOCK_DGRAM, 0));
    T(bind(u1, SA(&u1a), sizeof(u1a)));
    T(sendto(u2, "dg", 2, 0, SA(&u1a), sizeof(u1a)));
    T(recvfrom(u1, buf, sizeof(buf), 0, SA(&from), &fl));
    NOTE("from %s len %d", tr_addr(&from, 1), (int)fl);
    T(close(u1));
    T(close(u2));
    x = TF(socket(AF_INET6, SOCK_DGRAM, 0));
    T(bind(x, SA(&m), sizeof(m)));
    d_name(x, 0, "mapped bound");
    T(close(x));
    return 0;
}
