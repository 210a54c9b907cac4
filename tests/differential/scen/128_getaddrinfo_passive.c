/*
 * Behaviour: the usual getaddrinfo-driven server and client code paths.
 * AI_PASSIVE with AF_UNSPEC and no host lists the wildcard of each family,
 * 0.0.0.0 before [::] (glibc's order); binding and listening on every
 * result in order with IPV6_V6ONLY set on the AF_INET6 ones (as most
 * servers do) succeeds for all; without it the [::] bind after 0.0.0.0 is
 * EADDRINUSE (the classic dual-stack server bug). Numeric hosts
 * (AI_NUMERICHOST): "::ffff:10.200.0.1" gives an AF_INET6 result that
 * connects to the echo port, "10.200.0.1" with AF_INET6 and AI_V4MAPPED
 * the mapped form, "fd00:200::1" a native one.
 */
#include "scen.h"
#include <netdb.h>

static void
connect_to(const char *host, int family, int flags)
{
    struct addrinfo h = {.ai_family = family,
                         .ai_socktype = SOCK_STREAM,
                         .ai_flags = AI_NUMERICHOST | flags};
    struct addrinfo *r = NULL;
    char buf[4];
    int fd;

    T(getaddrinfo(host, "7001", &h, &r));
    if (r == NULL)
        return;
    NOTE("%s -> family %d %s addrlen %d", host, r->ai_family,
         tr_addr(r->ai_addr, 0), (int)r->ai_addrlen);
    fd = TF(socket(r->ai_family, r->ai_socktype, r->ai_protocol));
    T(connect(fd, r->ai_addr, r->ai_addrlen));
    T(send(fd, "gai", 3, MSG_NOSIGNAL));
    T(d_read_full(fd, buf, 3));
    T(close(fd));
    freeaddrinfo(r);
}

int
main(void)
{
    struct addrinfo h = {.ai_family = AF_UNSPEC,
                         .ai_socktype = SOCK_STREAM,
                         .ai_flags = AI_PASSIVE};
    struct addrinfo *r = NULL, *p;
    int fds[4], n, one = 1, i, pass;

    tr_init();
    T(getaddrinfo(NULL, "20128", &h, &r));
    for (pass = 0; pass < 2; pass++) {
        NOTE("pass %d: IPV6_V6ONLY %s", pass, pass ? "not set" : "set");
        for (n = 0, p = r; p != NULL && n < 4; p = p->ai_next, n++) {
            NOTE("passive family %d %s addrlen %d", p->ai_family,
                 tr_addr(p->ai_addr, 0), (int)p->ai_addrlen);
            fds[n] = TF(socket(p->ai_family, p->ai_socktype, p->ai_protocol));
            if (p->ai_family == AF_INET6 && pass == 0)
                T(setsockopt(fds[n], IPPROTO_IPV6, IPV6_V6ONLY, &one,
                             sizeof(one)));
            if (T(bind(fds[n], p->ai_addr, p->ai_addrlen)) == 0)
                T(listen(fds[n], 4));
        }
        for (i = 0; i < n; i++)
            T(close(fds[i]));
    }
    freeaddrinfo(r);
    connect_to(D_PEER_MAPPED, AF_UNSPEC, 0);
    connect_to(D_PEER_IP, AF_INET6, AI_V4MAPPED);
    connect_to(D_PEER_IP6, AF_UNSPEC, 0);
    return 0;
}
