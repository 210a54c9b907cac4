/*
 * Behaviour: TCP port sharing between families, the AF_INET6 socket bound
 * first (no SO_REUSEADDR): after dual [::]:P, AF_INET 0.0.0.0:P and
 * 10.200.0.2:P are EADDRINUSE; after V6ONLY [::]:P both succeed; after
 * ::ffff:10.200.0.2:P, 10.200.0.2:P and 0.0.0.0:P are EADDRINUSE; after
 * fd00:200::2:P, 10.200.0.2:P succeeds; and two AF_INET6 sockets: dual
 * [::]:P then V6ONLY [::]:P is EADDRINUSE.
 */
#include "scen.h"

static int
bound6(const char *ip, int port, int v6only)
{
    struct sockaddr_in6 a = d_sin6(ip, port);
    int fd = TF(socket(AF_INET6, SOCK_STREAM, 0));

    if (v6only >= 0)
        d_seti(fd, IPPROTO_IPV6, IPV6_V6ONLY, v6only);
    T(bind(fd, SA(&a), sizeof(a)));
    return fd;
}

static void
try4(const char *ip, int port)
{
    struct sockaddr_in a = d_sin(ip, port);
    int fd = TF(socket(AF_INET, SOCK_STREAM, 0));

    T(bind(fd, SA(&a), sizeof(a)));
    T(close(fd));
}

int
main(void)
{
    int port = D_LPORT_BASE + 99, a, b;

    tr_init();
    NOTE("dual [::] first");
    a = bound6("::", port, -1);
    try4("0.0.0.0", port);
    try4(D_SUBJ_IP, port);
    T(listen(a, 4));
    try4(D_SUBJ_IP, port);
    b = bound6("::", port, 1);
    T(close(b));
    T(close(a));
    NOTE("v6only [::] first");
    a = bound6("::", port, 1);
    try4("0.0.0.0", port);
    try4(D_SUBJ_IP, port);
    b = bound6("::", port, 0);
    T(close(b));
    T(close(a));
    NOTE("mapped first");
    a = bound6(D_SUBJ_MAPPED, port, -1);
    try4(D_SUBJ_IP, port);
    try4("0.0.0.0", port);
    T(close(a));
    NOTE("native first");
    a = bound6(D_SUBJ_IP6, port, -1);
    try4(D_SUBJ_IP, port);
    T(close(a));
    return 0;
}
