/*
 * Behaviour: connect() argument errors: address length too short EINVAL,
 * wrong family EAFNOSUPPORT, AF_UNSPEC on an unconnected TCP socket
 * succeeds, port 0 is refused by the peer; connect on a
 * listening socket fails (Linux: EISCONN); a NULL address EFAULT; AF_UNSPEC
 * on a connected socket disconnects.
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in a = d_sin(D_PEER_IP, D_ECHO);
    struct sockaddr_in z = d_sin(D_PEER_IP, 0);
    struct sockaddr_in6 v6;
    struct sockaddr un = {.sa_family = AF_UNSPEC};
    int fd, l;

    tr_init();
    fd = TF(socket(AF_INET, SOCK_STREAM, 0));
    T(connect(fd, SA(&a), 8));
    memset(&v6, 0, sizeof(v6));
    v6.sin6_family = AF_INET6;
    T(connect(fd, SA(&v6), sizeof(v6)));
    T(connect(fd, &un, sizeof(un)));
    T(connect(fd, NULL, sizeof(a)));
    T(connect(fd, SA(&z), sizeof(z)));
    T(close(fd));
    fd = TF(socket(AF_INET, SOCK_STREAM, 0));
    T(connect(fd, SA(&a), sizeof(a)));
    T(connect(fd, &un, sizeof(un)));
    T(close(fd));
    l = d_listen(D_LPORT_BASE + 71);
    T(connect(l, SA(&a), sizeof(a)));
    T(close(l));
    return 0;
}
