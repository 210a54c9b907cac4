/*
 * Behaviour: bind() argument errors on AF_INET6 sockets: a sockaddr_in
 * (AF_INET, 16 bytes) is EINVAL (too short for IPv6) and AF_INET with the
 * IPv6 length EAFNOSUPPORT; AF_UNSPEC likewise; lengths below 24 are
 * EINVAL (24, without scope_id, binds); a NULL address EFAULT; TCP and
 * UDP alike. A multicast address (ff0e::1:2) is EINVAL for TCP but binds
 * for UDP.
 */
#include "scen.h"

static void
cases(int type, int port)
{
    struct sockaddr_in6 a6 = d_sin6(D_SUBJ_IP6, port);
    struct sockaddr_in6 wide4, unspec;
    struct sockaddr_in6 mc = d_sin6("ff0e::1:2", port);
    struct sockaddr_in a4 = d_sin(D_SUBJ_IP, port);
    int fd = TF(socket(AF_INET6, type, 0));

    memset(&wide4, 0, sizeof(wide4));
    memcpy(&wide4, &a4, sizeof(a4));
    unspec = a6;
    unspec.sin6_family = AF_UNSPEC;
    T(bind(fd, SA(&a4), sizeof(a4)));
    T(bind(fd, SA(&wide4), sizeof(wide4)));
    T(bind(fd, SA(&unspec), sizeof(unspec)));
    T(bind(fd, SA(&a6), 0));
    T(bind(fd, SA(&a6), 2));
    T(bind(fd, SA(&a6), 23));
    T(bind(fd, NULL, sizeof(a6)));
    T(bind(fd, SA(&a6), 24));
    d_name(fd, 0, "bound");
    T(close(fd));
    fd = TF(socket(AF_INET6, type, 0));
    T(bind(fd, SA(&mc), sizeof(mc)));
    d_name(fd, 0, "multicast");
    T(close(fd));
}

int
main(void)
{
    tr_init();
    cases(SOCK_STREAM, D_LPORT_BASE + 95);
    cases(SOCK_DGRAM, D_LPORT_BASE + 95);
    return 0;
}
