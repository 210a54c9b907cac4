/*
 * Behaviour: UDP port sharing between families (no SO_REUSEADDR): AF_INET
 * 0.0.0.0:P then dual [::]:P is EADDRINUSE and V6ONLY [::]:P binds; dual
 * [::]:P then AF_INET 0.0.0.0:P is EADDRINUSE; V6ONLY [::]:P then AF_INET
 * 0.0.0.0:P binds; mapped ::ffff:10.200.0.2:P then 10.200.0.2:P is
 * EADDRINUSE.
 */
#include "scen.h"

static int
udp6(const char *ip, int port, int v6only)
{
    struct sockaddr_in6 a = d_sin6(ip, port);
    int fd = TF(socket(AF_INET6, SOCK_DGRAM, 0));

    if (v6only >= 0)
        d_seti(fd, IPPROTO_IPV6, IPV6_V6ONLY, v6only);
    T(bind(fd, SA(&a), sizeof(a)));
    return fd;
}

static int
udp4(const char *ip, int port)
{
    struct sockaddr_in a = d_sin(ip, port);
    int fd = TF(socket(AF_INET, SOCK_DGRAM, 0));

    T(bind(fd, SA(&a), sizeof(a)));
    return fd;
}

int
main(void)
{
    int port = D_LPORT_BASE + 100, a, b;

    tr_init();
    NOTE("AF_INET first");
    a = udp4("0.0.0.0", port);
    b = udp6("::", port, -1);
    T(close(b));
    b = udp6("::", port, 1);
    T(close(b));
    T(close(a));
    NOTE("dual first");
    a = udp6("::", port, -1);
    b = udp4("0.0.0.0", port);
    T(close(b));
    T(close(a));
    NOTE("v6only first");
    a = udp6("::", port, 1);
    b = udp4("0.0.0.0", port);
    T(close(b));
    T(close(a));
    NOTE("mapped first");
    a = udp6(D_SUBJ_MAPPED, port, -1);
    b = udp4(D_SUBJ_IP, port);
    T(close(b));
    T(close(a));
    return 0;
}
