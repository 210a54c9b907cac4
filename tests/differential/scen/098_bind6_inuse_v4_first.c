/*
 * Behaviour: TCP port sharing between families, the AF_INET socket bound
 * first (no SO_REUSEADDR): 0.0.0.0:P then [::]:P is EADDRINUSE on a dual
 * socket and succeeds with IPV6_V6ONLY; 0.0.0.0:P then ::ffff:10.200.0.2:P
 * is EADDRINUSE; 10.200.0.2:P then [::]:P EADDRINUSE, then fd00:200::2:P
 * succeeds; the same with the AF_INET socket listening.
 */
#include "scen.h"

static int
sock6(int v6only)
{
    int fd = TF(socket(AF_INET6, SOCK_STREAM, 0));

    if (v6only >= 0)
        d_seti(fd, IPPROTO_IPV6, IPV6_V6ONLY, v6only);
    return fd;
}

int
main(void)
{
    int port = D_LPORT_BASE + 98;
    struct sockaddr_in any4 = d_sin("0.0.0.0", port);
    struct sockaddr_in s4 = d_sin(D_SUBJ_IP, port + 1000);
    struct sockaddr_in6 any6 = d_sin6("::", port);
    struct sockaddr_in6 m6 = d_sin6(D_SUBJ_MAPPED, port);
    struct sockaddr_in6 any6b = d_sin6("::", port + 1000);
    struct sockaddr_in6 n6b = d_sin6(D_SUBJ_IP6, port + 1000);
    int a, b, c;

    tr_init();
    NOTE("0.0.0.0 first, bound");
    a = TF(socket(AF_INET, SOCK_STREAM, 0));
    T(bind(a, SA(&any4), sizeof(any4)));
    b = sock6(-1);
    T(bind(b, SA(&any6), sizeof(any6)));
    T(bind(b, SA(&m6), sizeof(m6)));
    T(close(b));
    b = sock6(1);
    T(bind(b, SA(&any6), sizeof(any6)));
    T(close(b));
    NOTE("0.0.0.0 first, listening");
    T(listen(a, 4));
    b = sock6(0);
    T(bind(b, SA(&any6), sizeof(any6)));
    T(close(b));
    b = sock6(1);
    T(bind(b, SA(&any6), sizeof(any6)));
    T(listen(b, 4));
    T(close(b));
    T(close(a));

    NOTE("10.200.0.2 first");
    a = TF(socket(AF_INET, SOCK_STREAM, 0));
    T(bind(a, SA(&s4), sizeof(s4)));
    b = sock6(-1);
    T(bind(b, SA(&any6b), sizeof(any6b)));
    T(close(b));
    c = sock6(-1);
    T(bind(c, SA(&n6b), sizeof(n6b)));
    T(close(c));
    b = sock6(1);
    T(bind(b, SA(&any6b), sizeof(any6b)));
    T(close(b));
    T(close(a));
    return 0;
}
